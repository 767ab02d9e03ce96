"""ireval_core.labels.agreement against oracles (scikit-learn, krippendorff), textbook values,
brute-force reference code, and planted rater drift."""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import krippendorff
import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from ireval_core import rounds
from ireval_core.labels.agreement import (
    DISPUTED_COLUMNS,
    DRIFT_KAPPA_GAP,
    DRIFT_MEAN_SHIFT,
    PER_RATER_COLUMNS,
    PER_ROUND_COLUMNS,
    RaterReport,
    cohen_kappa,
    fleiss_kappa,
    krippendorff_alpha,
    rater_report,
)
from ireval_core.labels.label_table import ordered_rounds

MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


def long_table(matrix: np.ndarray, rounds: list[str] | None = None,
               raters: list[str] | None = None) -> pd.DataFrame:
    """Reliability matrix (raters x units, NaN = missing) -> the long label table."""
    m, n = matrix.shape
    raters = raters or [f"r{i}" for i in range(m)]
    rounds = rounds or ["2024-01"] * n
    rr, uu = np.meshgrid(np.arange(m), np.arange(n), indexing="ij")
    return pd.DataFrame({
        "round": np.asarray(rounds, dtype=object)[uu.ravel()],
        "query": [f"q{u // 5}" for u in uu.ravel()],
        "doc": [f"d{u}" for u in uu.ravel()],
        "rater": np.asarray(raters, dtype=object)[rr.ravel()],
        "label": matrix.ravel().astype(np.float64),
    })


def random_matrix(seed: int, raters: int = 4, units: int = 120, grades: int = 4,
                  missing: float = 0.3) -> np.ndarray:
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, grades, units)
    noise = rng.integers(-1, 2, (raters, units)) * (rng.random((raters, units)) < 0.35)
    out = np.clip(truth + noise, 0, grades - 1).astype(np.float64)
    out[rng.random((raters, units)) < missing] = np.nan
    return out


# ----------------------------------------------------------------------------- Cohen


@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cohen_matches_sklearn(weights: str | None, seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.choice([0, 1, 3, 4], size=400)  # a scale with a gap: positions, not values
    b = np.where(rng.random(400) < 0.6, a, rng.choice([0, 1, 3, 4], size=400))
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(
        cohen_kappa_score(a, b, weights=weights), abs=1e-12)
    scale = [0, 1, 2, 3, 4, 5]
    assert cohen_kappa(a, b, weights=weights, labels=scale) == pytest.approx(
        cohen_kappa_score(a, b, weights=weights, labels=scale), abs=1e-12)


def test_cohen_hand_computed() -> None:
    # a = 0 1 1 2, b = 0 1 2 2: p_o = 3/4; marginals a (1/4, 1/2, 1/4), b (1/4, 1/4, 1/2)
    # p_e = 1/16 + 1/8 + 1/8 = 5/16 -> kappa = (3/4 - 5/16) / (11/16) = 7/11
    assert cohen_kappa([0, 1, 1, 2], [0, 1, 2, 2]) == pytest.approx(7 / 11)
    # quadratic: sum w o = 1/4 (one (1, 2) item, weight 1);
    # sum w e = sum_ij (i-j)^2 r_i c_j = 1/4*(1/4*1 + 1/2*4) + 1/2*(1/4*1 + 1/2*1)
    #         + 1/4*(1/4*4 + 1/4*1) = 9/16 + 3/8 + 5/16 = 5/4
    assert cohen_kappa([0, 1, 1, 2], [0, 1, 2, 2], weights="quadratic") == pytest.approx(
        1 - 0.25 / 1.25)


def test_cohen_leaves_out_unlabeled_items() -> None:
    a = np.array([0, 1, np.nan, 2, 1])
    b = np.array([0, 1, 2, np.nan, 1])
    assert cohen_kappa(a, b) == pytest.approx(1.0)
    assert cohen_kappa(a, b) == cohen_kappa([0, 1, 1], [0, 1, 1])


def test_cohen_undefined_is_nan() -> None:
    assert np.isnan(cohen_kappa([], []))
    assert np.isnan(cohen_kappa([2, 2, 2], [2, 2, 2], weights="quadratic"))  # p_e = 1
    assert np.isnan(cohen_kappa([np.nan], [1.0]))


def test_rounds_still_exports_the_same_function() -> None:
    assert rounds.cohen_kappa is cohen_kappa


# ----------------------------------------------------------------------------- Fleiss


# Fleiss (1971) as worked on Wikipedia: 10 subjects, 14 raters, 5 categories.
FLEISS_COUNTS = np.array([
    [0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7],
])


def counts_to_table(counts: np.ndarray) -> pd.DataFrame:
    rows = []
    for unit, row in enumerate(counts):
        labels = np.repeat(np.arange(len(row)), row)
        rows += [("r1", "q", f"s{unit}", f"rater{i}", float(v)) for i, v in enumerate(labels)]
    return pd.DataFrame(rows, columns=["round", "query", "doc", "rater", "label"])


def test_fleiss_textbook_example() -> None:
    table = counts_to_table(FLEISS_COUNTS)
    # P_i = (sum n_ij^2 - 14) / (14 * 13); P-bar = 0.378, p_j = (.143 .200 .279 .150 .229),
    # P-bar_e = 0.213, kappa = (0.378 - 0.213) / (1 - 0.213) = 0.210
    n = 14
    p_i = ((FLEISS_COUNTS ** 2).sum(axis=1) - n) / (n * (n - 1))
    p_j = FLEISS_COUNTS.sum(axis=0) / FLEISS_COUNTS.sum()
    expected = (p_i.mean() - (p_j ** 2).sum()) / (1 - (p_j ** 2).sum())
    assert p_i.mean() == pytest.approx(0.378, abs=5e-4)
    assert fleiss_kappa(table) == pytest.approx(expected, abs=1e-12)
    assert fleiss_kappa(table) == pytest.approx(0.210, abs=5e-4)


def test_fleiss_against_statsmodels() -> None:
    from statsmodels.stats import inter_rater as irr
    assert fleiss_kappa(counts_to_table(FLEISS_COUNTS)) == pytest.approx(
        irr.fleiss_kappa(FLEISS_COUNTS, method="fleiss"))


def test_fleiss_varying_raters_hand_computed() -> None:
    # unit a: 1 1 1 (P = 1); unit b: 0 1 (P = 0); unit c: 0 (not pairable, left out)
    table = pd.DataFrame({"query": "q", "doc": list("aaabbc"), "rater": list("xyzxyx"),
                          "label": [1.0, 1, 1, 0, 1, 0]})
    p_bar = (1 + 0) / 2
    p_e = (1 / 5) ** 2 + (4 / 5) ** 2
    assert fleiss_kappa(table) == pytest.approx((p_bar - p_e) / (1 - p_e))


def test_fleiss_undefined_is_nan() -> None:
    one_label = pd.DataFrame({"query": "q", "doc": list("aabb"), "label": [2.0] * 4})
    assert np.isnan(fleiss_kappa(one_label))
    unpaired = pd.DataFrame({"query": "q", "doc": list("ab"), "label": [0.0, 1.0]})
    assert np.isnan(fleiss_kappa(unpaired))


# ----------------------------------------------------------------------------- Krippendorff


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(6))
def test_alpha_matches_krippendorff_package(level: str, seed: int) -> None:
    matrix = random_matrix(seed, raters=3 + seed % 3, grades=3 + seed % 3)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level)
    assert krippendorff_alpha(long_table(matrix), level=level) == pytest.approx(
        expected, abs=1e-10)


def test_alpha_non_contiguous_scale_matches_package() -> None:
    matrix = random_matrix(11, raters=3, grades=4)
    matrix = np.where(matrix == 3, 7.5, matrix)  # grades 0, 1, 2, 7.5
    for level in ("ordinal", "interval"):
        assert krippendorff_alpha(long_table(matrix), level=level) == pytest.approx(
            krippendorff.alpha(reliability_data=matrix, level_of_measurement=level))


def test_alpha_published_example() -> None:
    # Krippendorff's own example (as in the package's and Wikipedia's docs): 3 coders,
    # 15 units with missing values
    nan = np.nan
    data = np.array([
        [nan, nan, nan, nan, nan, 3, 4, 1, 2, 1, 1, 3, 3, nan, 3],
        [1, nan, 2, 1, 3, 3, 4, 3, nan, nan, nan, nan, nan, nan, nan],
        [nan, nan, 2, 1, 3, 4, 4, nan, 2, 1, 1, 3, 3, nan, 4],
    ])
    table = long_table(data)
    assert krippendorff_alpha(table, level="nominal") == pytest.approx(0.691358, abs=1e-6)
    assert krippendorff_alpha(table, level="interval") == pytest.approx(0.810845, abs=1e-6)


def test_alpha_units_are_round_query_doc() -> None:
    # the same (query, doc) in two rounds is two units: pooling them would pair labels
    # of different months
    table = pd.DataFrame({"round": ["a", "a", "b", "b"], "query": "q", "doc": "d",
                          "rater": ["x", "y", "x", "y"], "label": [0.0, 0.0, 3.0, 3.0]})
    assert krippendorff_alpha(table) == pytest.approx(1.0)
    assert fleiss_kappa(table) == pytest.approx(1.0)


def test_alpha_ignores_unlabeled_and_undefined_cases() -> None:
    table = pd.DataFrame({"query": "q", "doc": list("aabb"), "rater": list("xyxy"),
                          "label": [1.0, 1.0, 2.0, 2.0]})
    with_blank = pd.concat([table, pd.DataFrame({"query": ["q"], "doc": ["a"],
                                                 "rater": ["z"], "label": [np.nan]})])
    assert krippendorff_alpha(with_blank) == krippendorff_alpha(table) == pytest.approx(1.0)
    assert np.isnan(krippendorff_alpha(table.assign(label=1.0)))  # one value: D_e = 0
    assert np.isnan(krippendorff_alpha(table.iloc[[0, 2]]))      # nothing pairable


def test_categorical_and_object_columns_give_the_same_numbers() -> None:
    table = long_table(random_matrix(3))
    cat = table.astype({c: "category" for c in ("round", "query", "doc", "rater")})
    assert krippendorff_alpha(cat) == pytest.approx(krippendorff_alpha(table))
    pd.testing.assert_frame_equal(rater_report(cat).per_rater, rater_report(table).per_rater)


# ----------------------------------------------------------------------------- report


def reference_consensus(others: list[float], combine: str, scale: np.ndarray) -> float:
    """Slow reference: combine the other labels, then snap to the nearest grade (up)."""
    if combine == "mean":
        v = float(np.mean(others))
    elif combine == "median":
        v = float(np.median(others))
    else:
        values, counts = np.unique(others, return_counts=True)
        v = float(values[counts == counts.max()].min())
    dist = np.abs(scale - v)
    return float(scale[np.flatnonzero(dist <= dist.min() + 1e-9)].max())


def reference_per_rater(table: pd.DataFrame, combine: str) -> pd.DataFrame:
    scale = np.unique(table["label"].dropna())
    rows = []
    labeled = table.dropna(subset=["label"])
    for (rnd, rater), part in labeled.groupby(["round", "rater"]):
        mine, cons = [], []
        for _, row in part.iterrows():
            unit = labeled[(labeled["round"] == rnd) & (labeled["query"] == row["query"])
                           & (labeled["doc"] == row["doc"]) & (labeled["rater"] != rater)]
            if len(unit):
                mine.append(row["label"])
                cons.append(reference_consensus(unit["label"].tolist(), combine, scale))
        kappa = (cohen_kappa_score(mine, cons, weights="quadratic", labels=scale)
                 if len(mine) and len(set(mine) | set(cons)) > 1 else np.nan)
        rows.append({"round": rnd, "rater": rater, "labels": len(part),
                     "mean_label": part["label"].mean(), "kappa_vs_consensus": kappa,
                     "agreement_vs_consensus": np.mean(np.equal(mine, cons)) if mine
                     else np.nan, "units_vs_consensus": len(mine)})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("combine", ["mean", "median", "majority"])
def test_per_rater_matches_brute_force(combine: str) -> None:
    rng = np.random.default_rng(5)
    matrix = random_matrix(5, raters=4, units=60, missing=0.25)
    rounds_ = list(rng.choice(["2024-01", "2024-02"], size=60))
    table = long_table(matrix, rounds=rounds_, raters=["ann", "bob", "cid", "dee"])
    got = rater_report(table, combine=combine).per_rater
    want = reference_per_rater(table, combine)
    assert tuple(got.columns) == PER_RATER_COLUMNS
    assert got[["round", "rater"]].values.tolist() == want[["round", "rater"]].values.tolist()
    for col in ("labels", "mean_label", "kappa_vs_consensus", "agreement_vs_consensus",
                "units_vs_consensus"):
        np.testing.assert_allclose(got[col].to_numpy(dtype=float),
                                   want[col].to_numpy(dtype=float), atol=1e-12, err_msg=col)


def test_majority_consensus_ties_go_to_the_lowest_label() -> None:
    # unit: x=0, y=2, z=2, w=3. Leaving out y: others 0, 2, 3 all once -> lowest = 0.
    # leaving out w: others 0, 2, 2 -> 2. leaving out x: 2, 2, 3 -> 2.
    t = pd.DataFrame({"round": "r", "query": "q", "doc": "d", "rater": list("xyzw"),
                      "label": [0.0, 2.0, 2.0, 3.0]})
    rep = rater_report(t, combine="majority")
    assert rep.confusion("r", "y").loc["2", "0"] == 1
    assert rep.confusion("r", "w").loc["3", "2"] == 1
    assert rep.confusion("r", "x").loc["0", "2"] == 1
    # the scale is the grades seen (0, 2, 3): the mean of the others of w is 4/3, nearer
    # to 2 than to 0; of y: 5/3 -> 2; of x: 7/3 -> 2
    mean = rater_report(t, combine="mean")
    assert list(mean.confusion("r", "w").index) == ["0", "2", "3"]
    assert mean.confusion("r", "w").loc["3", "2"] == 1
    assert mean.confusion("r", "y").loc["2", "2"] == 1
    assert mean.confusion("r", "x").loc["0", "2"] == 1
    # median of the others of y: 0, 2, 3 -> 2; of x: 2, 2, 3 -> 2; of w: 0 2 2 -> 2
    median = rater_report(t, combine="median")
    assert median.confusion("r", "y").loc["2", "2"] == 1


def test_consensus_halfway_rounds_up() -> None:
    # two others 1 and 2: mean and median 1.5 -> 2 (halfway goes up)
    t = pd.DataFrame({"round": "r", "query": "q", "doc": "d", "rater": list("xyz"),
                      "label": [1.0, 2.0, 0.0]})
    for combine in ("mean", "median"):
        assert rater_report(t, combine=combine).confusion("r", "z").loc["0", "2"] == 1


def test_per_round_matches_the_functions_and_pairwise_sklearn() -> None:
    matrix = random_matrix(8, raters=3, units=90)
    rounds_ = ["2024-02"] * 45 + ["2024-01"] * 45
    table = long_table(matrix, rounds=rounds_, raters=["ann", "bob", "cid"])
    rep = rater_report(table)
    assert tuple(rep.per_round.columns) == PER_ROUND_COLUMNS
    assert rep.per_round["round"].tolist() == ["2024-01", "2024-02"]  # time order
    scale = np.unique(table["label"].dropna())
    for row in rep.per_round.itertuples():
        part = table[table["round"] == row.round]
        assert row.fleiss == pytest.approx(fleiss_kappa(part))
        assert row.alpha == pytest.approx(krippendorff_alpha(part, level="ordinal"))
        wide = part.pivot_table(index=["query", "doc"], columns="rater", values="label")
        assert row.units == len(wide)
        assert row.pairable_units == int((wide.notna().sum(axis=1) >= 2).sum())
        assert row.raters == 3
        for col, weights in (("cohen", None), ("cohen_linear", "linear"),
                             ("cohen_quadratic", "quadratic")):
            kappas = []
            for a, b in combinations(wide.columns, 2):
                both = wide[[a, b]].dropna()
                kappas.append(cohen_kappa_score(both[a], both[b], weights=weights,
                                                labels=scale))
            assert getattr(row, col) == pytest.approx(np.mean(kappas)), col


def test_confusion_and_disputed_hand_made() -> None:
    t = pd.DataFrame({
        "round": "r1", "query": ["q1"] * 6 + ["q2"] * 3,
        "doc": ["a", "a", "a", "b", "b", "b", "c", "c", "c"],
        "rater": ["x", "y", "z"] * 3,
        "label": [3.0, 3.0, 0.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0]})
    rep = rater_report(t, combine="median")
    # z vs consensus: a -> others 3, 3 -> 3 (z said 0); b -> others 1, 2 -> 1.5 -> 2 (z 2);
    # c -> 1 (z 1)
    conf = rep.confusion("r1", "z")
    assert list(conf.index) == list(conf.columns) == ["0", "1", "2", "3"]
    assert conf.loc["0", "3"] == 1 and conf.loc["2", "2"] == 1 and conf.loc["1", "1"] == 1
    assert int(conf.to_numpy().sum()) == 3
    assert tuple(rep.disputed.columns) == DISPUTED_COLUMNS
    assert rep.disputed[["query", "doc", "labels", "spread", "n_labels"]].values.tolist() == [
        ["q1", "a", "z: 0, x: 3, y: 3", 3.0, 3],
        ["q1", "b", "x: 1, y: 2, z: 2", 1.0, 3],
    ]
    assert rep.disputed["mean_label"].tolist() == pytest.approx([2.0, 5 / 3])


def test_confusion_of_a_rater_absent_from_a_round_is_zero() -> None:
    t = pd.DataFrame({"round": ["r1", "r1", "r2", "r2"], "query": "q", "doc": "d",
                      "rater": ["x", "y", "x", "z"], "label": [1.0, 1.0, 0.0, 0.0]})
    rep = rater_report(t)
    assert int(rep.confusion("r2", "y").to_numpy().sum()) == 0
    assert rep.per_rater[["round", "rater"]].values.tolist() == [
        ["r1", "x"], ["r1", "y"], ["r2", "x"], ["r2", "z"]]


def planted(drift: str) -> pd.DataFrame:
    """Four monthly rounds, three raters labeling the same 150 units each month; in
    2024-03 one rater drifts."""
    rng = np.random.default_rng(42)
    frames = []
    for month in ("2024-01", "2024-02", "2024-03", "2024-04"):
        truth = rng.integers(0, 4, 150).astype(float)
        for rater in ("ann", "bob", "cid"):
            noise = rng.integers(-1, 2, 150) * (rng.random(150) < 0.15)
            label = np.clip(truth + noise, 0, 3)
            if month == "2024-03" and rater == "cid" and drift != "none":
                if drift == "random":
                    label = rng.integers(0, 4, 150).astype(float)
                else:  # lenient: one grade higher on everything below 3
                    label = np.clip(label + 1, 0, 3)
            frames.append(pd.DataFrame({"round": month, "query": [f"q{i // 10}" for i in
                                                                  range(150)],
                                        "doc": [f"d{i}" for i in range(150)],
                                        "rater": rater, "label": label}))
    return pd.concat(frames, ignore_index=True)


def test_drift_random_rater_is_flagged_by_agreement() -> None:
    rep = rater_report(planted("random"))
    flagged = rep.per_rater[rep.per_rater["drift_flag"]]
    assert flagged[["round", "rater"]].values.tolist() == [["2024-03", "cid"]]
    row = flagged.iloc[0]
    assert row["kappa_vs_consensus"] < row["kappa_others_median"] - DRIFT_KAPPA_GAP
    assert row["drift_reason"].startswith("agreement with the consensus dropped: kappa ")
    assert "below the other raters' kappa" in row["drift_reason"]
    # the round's agreement drops with it
    alpha = rep.per_round.set_index("round")["alpha"]
    assert alpha["2024-03"] < alpha.drop("2024-03").min() - 0.2
    # and the rater's confusion matrix is far from diagonal that month
    conf = rep.confusion("2024-03", "cid").to_numpy()
    assert np.trace(conf) / conf.sum() < 0.5
    assert not rep.per_rater["drift_reason"][~rep.per_rater["drift_flag"]].astype(bool).any()


def test_drift_lenient_rater_is_flagged_by_mean_shift() -> None:
    rep = rater_report(planted("lenient"))
    row = rep.per_rater.set_index(["round", "rater"]).loc[("2024-03", "cid")]
    assert row["drift_flag"]
    shift = row["mean_label"] - row["mean_label_other_rounds"]
    assert shift > DRIFT_MEAN_SHIFT
    assert f"moved {shift:+.2f} from their mean" in row["drift_reason"]
    others = rep.per_rater[(rep.per_rater["rater"] != "cid")]
    assert not others["drift_flag"].any()


def test_partial_drift_of_one_of_three_raters_is_flagged() -> None:
    """cid labels a quarter of 2024-03 at random. That drags ann's and bob's agreement with
    their consensus (which includes cid) down as well, so a plain median of the others'
    kappas would hide the drift; the baseline leaves cid out."""
    table = planted("none")
    rng = np.random.default_rng(3)
    hit = ((table["round"] == "2024-03") & (table["rater"] == "cid")).to_numpy()
    noise = hit & (rng.random(len(table)) < 0.25)
    table.loc[noise, "label"] = rng.integers(0, 4, int(noise.sum())).astype(float)
    rep = rater_report(table)
    per = rep.per_rater.set_index(["round", "rater"])
    cid = per.loc[("2024-03", "cid")]
    plain = per.loc[[("2024-03", "ann"), ("2024-03", "bob")], "kappa_vs_consensus"].median()
    assert plain - cid["kappa_vs_consensus"] < DRIFT_KAPPA_GAP  # the naive rule misses it
    assert cid["kappa_others_median"] > plain + 0.05
    assert cid["drift_flag"] and cid["drift_reason"].startswith("agreement with")
    assert rep.per_rater["drift_flag"].sum() == 1


def test_a_month_worse_for_everybody_flags_nobody() -> None:
    # recall breaks in 2024-02: every rater sees worse results, all means fall ~1 grade
    table = planted("none")
    month = (table["round"] == "2024-02").to_numpy()
    table.loc[month, "label"] = np.maximum(table.loc[month, "label"] - 1, 0)
    rep = rater_report(table)
    feb = rep.per_rater[rep.per_rater["round"] == "2024-02"]
    assert ((feb["mean_label"] - feb["mean_label_other_rounds"]) < -DRIFT_MEAN_SHIFT).all()
    assert not rep.per_rater["drift_flag"].any()


def test_two_raters_mean_shift_names_the_one_who_moved() -> None:
    table = planted("none")
    table = table[table["rater"] != "cid"].copy()
    lenient = ((table["round"] == "2024-03") & (table["rater"] == "bob")).to_numpy()
    table.loc[lenient, "label"] = np.minimum(table.loc[lenient, "label"] + 1, 3)
    rep = rater_report(table)
    flagged = rep.per_rater[rep.per_rater["drift_flag"]]
    assert flagged[["round", "rater"]].values.tolist() == [["2024-03", "bob"]]
    assert "while the other raters' moved" in flagged["drift_reason"].iloc[0]
    # with two raters nobody can tell whose agreement dropped: no kappa baseline
    assert rep.per_rater["kappa_others_median"].isna().all()


def test_kappa_baseline_matches_brute_force() -> None:
    matrix = random_matrix(9, raters=4, units=50, missing=0.2)
    table = long_table(matrix, raters=["ann", "bob", "cid", "dee"])
    scale = np.unique(table["label"].dropna())
    rep = rater_report(table, combine="median")
    labeled = table.dropna(subset=["label"])
    for row in rep.per_rater.itertuples():
        others = labeled[labeled["rater"] != row.rater]  # leave the rater out, then ...
        want = []
        for rater in others["rater"].unique():  # ... each other rater vs the rest of them
            mine, cons = [], []
            for _, lab in others[others["rater"] == rater].iterrows():
                rest = others[(others["doc"] == lab["doc"]) & (others["rater"] != rater)]
                if len(rest):
                    mine.append(lab["label"])
                    cons.append(reference_consensus(rest["label"].tolist(), "median", scale))
            want.append(cohen_kappa_score(mine, cons, weights="quadratic", labels=scale))
        assert len(want) == 3
        assert row.kappa_others_median == pytest.approx(np.median(want), abs=1e-12)


def test_drift_thresholds_are_parameters() -> None:
    table = planted("lenient")
    rep = rater_report(table, kappa_gap=5.0, mean_shift=5.0)
    assert not rep.per_rater["drift_flag"].any()
    assert (rep.kappa_gap, rep.mean_shift) == (5.0, 5.0)
    loose = rater_report(table, mean_shift=0.0, kappa_gap=5.0)
    assert loose.per_rater["drift_flag"].all()  # any move at all is more than 0


def test_definitions_name_the_rule() -> None:
    rep = rater_report(planted("random"), combine="median")
    assert isinstance(rep, RaterReport)
    assert "median of the other raters' labels" in rep.definitions["kappa_vs_consensus"]
    assert "quadratic-weighted" in rep.definitions["kappa_vs_consensus"]
    assert f"{DRIFT_KAPPA_GAP:g}" in rep.definitions["drift_flag"]
    assert set(PER_ROUND_COLUMNS[1:]) <= set(rep.definitions)
    with pytest.raises(TypeError):
        rep.definitions["alpha"] = "changed"  # type: ignore[index]


def test_one_rater_gives_nan_agreement() -> None:
    t = pd.DataFrame({"round": "r", "query": "q", "doc": list("abc"), "rater": "",
                      "label": [0.0, 1.0, 2.0]})
    rep = rater_report(t)
    assert rep.per_round[["raters", "units", "pairable_units"]].values.tolist() == [[1, 3, 0]]
    assert rep.per_round[["fleiss", "alpha", "cohen"]].isna().all(axis=None)
    assert np.isnan(rep.per_rater["kappa_vs_consensus"].iloc[0])
    assert not rep.per_rater["drift_flag"].any()
    assert rep.disputed.empty and tuple(rep.disputed.columns) == DISPUTED_COLUMNS
    empty = rater_report(t.assign(label=np.nan))
    assert empty.per_round.empty and empty.per_rater.empty


def test_with_the_labeling_reader() -> None:
    labels = pytest.importorskip("ireval_core.labels")
    csv = (b"round,query,doc,position,label,rater\n"
           b"2026-05,q1,d1,1,high,ann\n2026-05,q1,d1,1,high,bob\n"
           b"2026-05,q1,d2,2,none,ann\n2026-05,q1,d2,2,low,bob\n"
           b"2026-05,q1,d3,3,mid,ann\n2026-05,q1,d3,3,mid,bob\n")
    table = labels.read_judgments(("may.csv", csv)).label_table()
    # ann 3 0 2, bob 3 1 2
    assert krippendorff_alpha(table, level="interval") == pytest.approx(
        krippendorff.alpha(reliability_data=[[3, 0, 2], [3, 1, 2]],
                           level_of_measurement="interval"))
    assert rater_report(table).per_round["pairable_units"].tolist() == [3]


def test_the_sample_rater_drift_is_flagged() -> None:
    """The bundled labeling sample plants one drifting rater in one month: exactly that
    (round, rater) is flagged, by the agreement rule, in the round of lowest alpha."""
    labels = pytest.importorskip("ireval_core.labels")
    files = sorted(Path(__file__).parents[1].glob("sample_data/labels/labels_*.csv"))
    if not files:
        pytest.skip("no labeling sample yet")
    rep = rater_report(labels.read_judgments(files).label_table())
    flagged = rep.per_rater[rep.per_rater["drift_flag"]]
    assert len(flagged) == 1, flagged
    row = flagged.iloc[0]
    assert row["drift_reason"].startswith("agreement with the consensus dropped")
    alpha = rep.per_round.set_index("round")["alpha"]
    assert alpha.idxmin() == row["round"] and alpha.drop(row["round"]).min() > alpha.min() + 0.1


# ----------------------------------------------------------------------------- rounds order


def test_ordered_rounds() -> None:
    assert ordered_rounds(["2024-10", "2024-9", "2024-11"]) == ["2024-9", "2024-10", "2024-11"]
    assert ordered_rounds(["Feb 2024", "Jan 2024", "Dec 2023"]) == [
        "Dec 2023", "Jan 2024", "Feb 2024"]
    assert ordered_rounds(["12", "3", "3"]) == ["3", "12"]
    assert ordered_rounds(["beta", "alpha"]) == ["alpha", "beta"]


# ----------------------------------------------------------------------------- bad input


GOOD = pd.DataFrame({"round": "r", "query": "q", "doc": list("ab"), "rater": "x",
                     "label": [1.0, 2.0]})


@pytest.mark.parametrize("call, param, function, error", [
    (lambda: cohen_kappa([1], [1], weights="cubic"), "weights", "cohen_kappa", ValueError),
    (lambda: cohen_kappa([1, 2], [1]), "b", "cohen_kappa", ValueError),
    (lambda: cohen_kappa([1, 3], [1, 2], labels=[1, 2]), "labels", "cohen_kappa", ValueError),
    (lambda: krippendorff_alpha(GOOD, level="ratio"), "level", "krippendorff_alpha",
     ValueError),
    (lambda: krippendorff_alpha(GOOD.drop(columns="doc")), "table", "krippendorff_alpha",
     ValueError),
    (lambda: fleiss_kappa(GOOD.assign(label=["high", "low"])), "table", "fleiss_kappa",
     ValueError),
    (lambda: fleiss_kappa(GOOD.assign(label=[1.0, np.inf])), "table", "fleiss_kappa",
     ValueError),
    (lambda: fleiss_kappa(GOOD.to_dict()), "table", "fleiss_kappa", TypeError),
    (lambda: rater_report(GOOD, combine="mode"), "combine", "rater_report", ValueError),
    (lambda: rater_report(GOOD, kappa_gap=-0.1), "kappa_gap", "rater_report", ValueError),
    (lambda: rater_report(GOOD, mean_shift="half"), "mean_shift", "rater_report", ValueError),
    (lambda: rater_report(GOOD.drop(columns="rater")), "table", "rater_report", ValueError),
    (lambda: rater_report(pd.concat([GOOD, GOOD])), "table", "rater_report", ValueError),
    (lambda: rater_report(GOOD).confusion("r9", "x"), "round", "RaterReport.confusion",
     ValueError),
    (lambda: rater_report(GOOD).confusion("r", "nobody"), "rater", "RaterReport.confusion",
     ValueError),
])
def test_invalid_parameters_use_the_common_message(call, param, function, error) -> None:
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert re.fullmatch(MESSAGE.format(param=param, function=re.escape(function)),
                        str(info.value)), str(info.value)


def test_duplicate_rater_row_names_the_unit() -> None:
    dup = pd.concat([GOOD, GOOD.iloc[[1]].assign(label=0.0)], ignore_index=True)
    with pytest.raises(ValueError, match=r"1 repeated row\(s\), e.g. round 'r', query 'q', "
                                         r"doc 'b', rater 'x'"):
        rater_report(dup)
    # with many raters (no bit mask) too
    many = pd.DataFrame({"round": "r", "query": "q", "doc": "a",
                         "rater": [f"r{i}" for i in range(70)] + ["r5"], "label": 1.0})
    with pytest.raises(ValueError, match="rater 'r5'"):
        rater_report(many)
    # fleiss and alpha do not need rater identities: repeated rows are just labels
    # (unit b holds 2 and 0: P = 0, P_e = 1/2, kappa = -1)
    assert fleiss_kappa(dup) == pytest.approx(-1.0)
