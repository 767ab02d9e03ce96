"""Trend, offline vs online, changes between rounds and the next round, checked against
hand-computed values and oracles (ireval_core.evaluate, scipy, scikit-learn)."""

from __future__ import annotations

import io
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from ireval_core import EvalOptions, evaluate
from ireval_core.labels import (
    Judgments,
    dcg_decomposition,
    export_batch,
    judgments_from_frame,
    label_changes,
    next_batch,
    offline_online,
    plan_next_round,
    read_judgments,
    score_metrics,
    trend,
)
from ireval_core.labels.trend import bootstrap_means, bootstrap_sums, resample_indices
from ireval_core.stats import queries_needed

SAMPLE = sorted((Path(__file__).resolve().parents[1] / "sample_data" / "labels").glob(
    "labels_*.csv"))
L2, L3, L4 = 1 / np.log2(3), 1 / np.log2(4), 1 / np.log2(5)


@pytest.fixture(scope="module")
def sample() -> Judgments:
    return read_judgments(SAMPLE)


@pytest.fixture(scope="module")
def sample_trend(sample):
    return trend(sample, n_resamples=500)


def tiny(weights: bool = False) -> Judgments:
    df = pd.DataFrame({
        "round": "m1", "system": "s",
        "query": ["q1", "q1", "q1", "q2", "q2"], "doc": ["d1", "d2", "d3", "d4", "d5"],
        "position": [1, 2, 3, 1, 2], "label": [3, None, 1, 0, 2]})
    if weights:
        df["weight"] = [3.0, 3.0, 3.0, 1.0, 1.0]
    return judgments_from_frame(df)


# ----------------------------------------------------------------------------- trend


def test_dcg_is_the_seed_formula_by_hand():
    t = trend(tiny(), k=3)
    row = t.table.iloc[0]
    dcg_q1 = 3 / np.log2(2) + 0 + 1 * L3  # d2 unlabeled: gain 0
    dcg_q2 = 0 + 2 * L2
    assert row["queries"] == 2
    assert row["dcg"] == pytest.approx((dcg_q1 + dcg_q2) / 2)
    idcg_q1, idcg_q2 = 3 + 1 * L2, 2.0
    assert row["ndcg"] == pytest.approx((dcg_q1 / idcg_q1 + dcg_q2 / idcg_q2) / 2)
    assert row["coverage"] == pytest.approx(4 / 5)
    assert (row["shown"], row["labeled"]) == (5, 4)
    assert row["averaging"] == "mean over queries"
    pq = t.per_query.set_index("query")
    assert pq.loc["q1", "dcg"] == pytest.approx(3.5)
    # exp gain and a cutoff
    e = trend(tiny(), k=1, gain="exp").table.iloc[0]
    assert e["dcg"] == pytest.approx(((2**3 - 1) + 0) / 2)


def test_weighted_mean_and_its_column():
    t = trend(tiny(weights=True), k=3).table.iloc[0]
    assert t["dcg"] == pytest.approx((3 * 3.5 + 1 * 2 * L2) / 4)
    assert t["dcg_unweighted"] == pytest.approx((3.5 + 2 * L2) / 2)
    assert t["averaging"] == "weighted by the query weight"


def test_idcg_zero_policy():
    df = pd.DataFrame({"round": "m", "query": ["a", "b"], "doc": ["x", "y"],
                       "position": 1, "label": [0, 2]})
    j = judgments_from_frame(df)
    assert trend(j).table["ndcg"].iloc[0] == pytest.approx(0.5)
    assert trend(j, options=EvalOptions(idcg_zero="drop")).table["ndcg"].iloc[0] == 1.0


def test_dcg_and_ndcg_equal_evaluate_on_every_round(sample, sample_trend):
    pq = sample_trend.per_query.set_index(["round", "system", "query"])
    for r in sample.rounds:
        jr = sample.round(r)
        res = evaluate(jr.to_qrels(), jr.to_runs(), ["DCG@10", "nDCG@10"])
        for run in jr.systems:
            for m, col in (("DCG@10", "dcg"), ("nDCG@10", "ndcg")):
                theirs = res.per_query(run, m)
                ours = pq.loc[(r, run)].loc[theirs.index, col]
                np.testing.assert_allclose(ours.to_numpy(), theirs.to_numpy(), atol=1e-12)


@pytest.mark.parametrize("n", [7, 5000])
def test_bootstrap_sums_of_several_columns_are_each_columns_own_sums(n):
    """noise_trend sums its query stage, weights and labeled mass in one call: each column
    is bit for bit the sum of that column alone, draw by draw and chunk by chunk (the
    former per-column loop), and the means are those sums over n."""
    rng = np.random.default_rng(n)
    values = np.column_stack((rng.gamma(2.0, 2.0, n), rng.random(n) * 3, rng.random(n)))
    chunks = resample_indices(n, 2000, 11)
    both = bootstrap_sums(values, 2000, 11)
    for col in range(values.shape[1]):
        alone = np.zeros(2000)
        for idx in chunks:
            alone += values[:, col][idx].sum(axis=0)
        assert np.array_equal(both[:, col], alone)
    assert np.array_equal(bootstrap_means(values, 2000, 11), both / n)


def test_bootstrap_interval_is_seeded_and_agrees_with_scipy():
    x = np.random.default_rng(3).gamma(2.0, 2.0, size=400)
    a = bootstrap_means(x[:, None], 4000, 7)
    assert np.array_equal(a, bootstrap_means(x[:, None], 4000, 7))
    low, high = np.quantile(a[:, 0], [0.025, 0.975])
    ref = sps.bootstrap((x,), np.mean, n_resamples=20000, method="percentile",
                        random_state=0).confidence_interval
    width = ref.high - ref.low
    assert abs(low - ref.low) < 0.05 * width and abs(high - ref.high) < 0.05 * width


def test_trend_interval_brackets_the_mean(sample_trend):
    t = sample_trend.table
    assert ((t["dcg_ci_low"] < t["dcg"]) & (t["dcg"] < t["dcg_ci_high"])).all()
    again = trend(read_judgments(SAMPLE), n_resamples=500).table
    pd.testing.assert_frame_equal(t, again)


def test_grades_table_shares(sample_trend):
    g = sample_trend.grades
    assert set(g["name"]) == {"none", "low", "mid", "high", "unlabeled"}
    total = g.groupby(["round", "system"])["share"].sum()
    np.testing.assert_allclose(total.to_numpy(), 1.0)
    counts = g.groupby(["round", "system"])["count"].sum()
    assert (counts == 1500).all()  # 150 queries x top 10


def test_month_over_month_paired_and_welch_match_scipy():
    rng = np.random.default_rng(0)
    rows = []
    for r, shift in (("2026-01", 0.0), ("2026-02", -0.6), ("2026-03", -0.6)):
        queries = [f"q{i}" for i in range(30)] if r != "2026-03" else [f"n{i}" for i in range(30)]
        for i, q in enumerate(queries):
            grade = float(np.clip(round(1.5 + shift + rng.normal(0, 0.8) + (i % 3) * 0.3),
                                  0, 3))
            rows.append({"round": r, "query": q, "doc": "d", "position": 1, "label": grade})
    j = judgments_from_frame(pd.DataFrame(rows))
    t = trend(j, k=1, n_resamples=50)
    pq = t.per_query
    ch = t.changes.set_index("round_to")
    x1 = pq[pq["round"] == "2026-01"].set_index("query")["dcg"]
    x2 = pq[pq["round"] == "2026-02"].set_index("query")["dcg"]
    x3 = pq[pq["round"] == "2026-03"]["dcg"]
    paired = sps.ttest_rel(x2.loc[x1.index], x1)
    assert ch.loc["2026-02", "test"] == "paired t over 30 shared queries"
    assert ch.loc["2026-02", "p"] == pytest.approx(paired.pvalue)
    assert ch.loc["2026-02", "drop"] == bool(paired.pvalue < 0.05 and paired.statistic < 0)
    welch = sps.ttest_ind(x3, x2, equal_var=False)
    assert ch.loc["2026-03", "test"] == "Welch t"
    assert ch.loc["2026-03", "p"] == pytest.approx(welch.pvalue)
    ci = welch.confidence_interval()
    assert (ch.loc["2026-03", "ci_low"], ch.loc["2026-03", "ci_high"]) == pytest.approx(
        (ci.low, ci.high))
    forced = trend(j, k=1, n_resamples=50, pairing="unpaired").changes
    assert (forced["test"] == "Welch t").all()


def test_segment_breakdown(sample):
    t = trend(sample, by="segment", n_resamples=100)
    assert list(t.table.columns[:3]) == ["round", "system", "segment"]
    assert len(t.table) == 6 * 2 * 3
    assert set(t.table["queries"]) == {40, 60, 50}
    assert "segment" in t.changes.columns
    # the segment means, weighted by queries, give back the round mean (constant weights)
    whole = trend(sample, n_resamples=100).table.set_index(["round", "system"])
    seg = t.table.assign(total=t.table["dcg"] * t.table["queries"] * t.table["queries"].map(
        {40: 3.0, 60: 1.5, 50: 1.0})).groupby(["round", "system"])["total"].sum()
    weights = 40 * 3.0 + 60 * 1.5 + 50 * 1.0
    np.testing.assert_allclose((seg / weights).to_numpy(), whole["dcg"].to_numpy())


def test_planted_recall_break_is_flagged(sample_trend):
    ch = sample_trend.changes
    drops = ch[ch["drop"]]
    assert drops[["system", "round_from", "round_to"]].values.tolist() == [
        ["treatment", "2026-07", "2026-08"]]
    assert "a significant drop" in sample_trend.notes()[0]


# ----------------------------------------------------------------------------- offline vs online


def test_score_metrics_match_sklearn_and_evaluate(sample):
    from sklearn.metrics import roc_auc_score

    table, per_query = score_metrics(sample)
    table = table.set_index(["round", "system"])
    shown = sample.shown_table(combine="mean")
    for r in ("2026-05", "2026-08"):
        jr = sample.round(r)
        res = evaluate(jr.to_qrels(), jr.to_runs(scores="model"),
                       ["GAUC(weight=impressions)", "PNR", "AUC"])
        for s in jr.systems:
            rows = shown[(shown["round"] == r) & (shown["system"] == s)
                         & shown["label"].notna()]
            pooled = roc_auc_score(rows["label"] >= 1, rows["score"])
            assert table.loc[(r, s), "auc"] == pytest.approx(pooled)
            assert table.loc[(r, s), "gauc"] == pytest.approx(
                res.mean(s, "GAUC(weight=impressions)"))
            assert table.loc[(r, s), "pnr"] == pytest.approx(res.mean(s, "PNR"))
            mine = per_query[(per_query["round"] == r) & (per_query["system"] == s)]
            theirs = res.per_query(s, "AUC")
            np.testing.assert_allclose(
                mine.set_index("query").loc[theirs.index, "auc"].to_numpy(),
                theirs.to_numpy(), equal_nan=True)


def test_relevance_level_moves_the_auc(sample):
    one, _ = score_metrics(sample.round("2026-05"))
    two, _ = score_metrics(sample.round("2026-05"), options=EvalOptions(rel_level=2))
    assert not np.allclose(one["auc"], two["auc"])


def test_offline_online_explains_the_recall_break(sample, sample_trend):
    o = offline_online(sample, trend_result=sample_trend)
    t = o.table.set_index(["round", "system"])
    before, broken = t.loc[("2026-07", "treatment")], t.loc[("2026-08", "treatment")]
    assert broken["dcg"] < 0.5 * before["dcg"]
    assert broken["auc"] > 0.8 and broken["gauc"] > 0.8 and broken["pnr"] > 2
    assert len(o.notes) == 1
    assert o.notes[0].startswith("treatment, 2026-07 → 2026-08: DCG@10 fell significantly")
    assert "suspect recall" in o.notes[0]
    row = o.changes.set_index(["system", "round_to"]).loc[("treatment", "2026-08")]
    assert bool(row["dcg_drop"]) and not bool(row["gauc_drop"])


def test_without_scores_the_score_columns_are_empty():
    o = offline_online(tiny(), k=3, n_resamples=20)
    assert o.table[["auc", "gauc", "pnr"]].isna().all().all()
    assert o.table["scored"].tolist() == [0]


# ----------------------------------------------------------------------------- changes


def test_label_changes_against_a_pandas_oracle(sample):
    ch = label_changes(sample, "2026-08", "2026-09")
    lt = sample.label_table()
    mean = lt.groupby(["round", "query", "doc"])["label"].mean().reset_index()
    old = mean[mean["round"] == "2026-08"]
    new = mean[mean["round"] == "2026-09"]
    both = old.merge(new, on=["query", "doc"], suffixes=("_old", "_new"))
    assert ch.n_both == len(both) > 0
    assert ch.n_changed == int((both["label_old"] != both["label_new"]).sum())
    assert ch.n_old == len(old) and ch.n_new == len(new)
    assert int(ch.transitions.to_numpy().sum()) == ch.n_both
    got = ch.pairs.set_index(["query", "doc"]).sort_index()
    want = both.set_index(["query", "doc"]).sort_index()
    np.testing.assert_allclose(got["old"], want["label_old"])
    np.testing.assert_allclose(got["new"], want["label_new"])


def test_dcg_decomposition_by_hand_and_it_adds_up(sample, sample_trend):
    df = pd.DataFrame({"round": ["a", "a", "a", "b", "b", "b"], "query": "q",
                       "doc": ["d1", "d2", "d3", "d2", "d4", "d1"],
                       "position": [1, 2, 3, 1, 2, 3], "label": [3, 1, 0, 2, 1, 3]})
    d = dcg_decomposition(judgments_from_frame(df), "a", "b", k=3).iloc[0]
    old = 3 + 1 * L2 + 0
    mixed = 1 + 1 * L2 + 3 * L3  # d2 and d1 keep their old labels, d4 is new
    new = 2 + 1 * L2 + 3 * L3
    assert (d["dcg_old"], d["dcg_mixed"], d["dcg_new"]) == pytest.approx((old, mixed, new))
    assert d["from_lists"] == pytest.approx(mixed - old)
    assert d["from_labels"] == pytest.approx(new - mixed)
    assert (d["old_labels_used"], d["relabeled"]) == (2, 1)

    dec = dcg_decomposition(sample, "2026-07", "2026-08").set_index("system")
    np.testing.assert_allclose(dec["from_lists"] + dec["from_labels"], dec["total"])
    t = sample_trend.table.set_index(["round", "system"])
    for s in ("control", "treatment"):
        assert dec.loc[s, "dcg_old"] == pytest.approx(t.loc[("2026-07", s), "dcg"])
        assert dec.loc[s, "dcg_new"] == pytest.approx(t.loc[("2026-08", s), "dcg"])
    # the recall break is in the lists, not in the labels
    assert dec.loc["treatment", "from_lists"] < -5
    assert abs(dec.loc["treatment", "from_labels"]) < 0.5


# ----------------------------------------------------------------------------- next round


def test_plan_next_round_uses_queries_needed(sample, sample_trend):
    plan = plan_next_round(sample, "2026-10", delta=0.5)
    pq = sample_trend.per_query
    for s in ("control", "treatment"):
        x = pq[(pq["round"] == "2026-10") & (pq["system"] == s)]["dcg"].to_numpy()
        row = plan[(plan["system"] == s) & (plan["design"] == "new sample")].iloc[0]
        sd = np.std(x, ddof=1)
        assert row["sd"] == pytest.approx(sd)
        assert row["queries_needed"] == queries_needed(sd * math.sqrt(2), 0.5)
        # the exact two-sample t needs at most two queries fewer
        n = int(row["queries_needed"])
        assert _two_sample_power(sd, 0.5, n) >= 0.8
        assert _two_sample_power(sd, 0.5, n - 3) < 0.8
        paired = plan[(plan["system"] == s) & (plan["design"] == "same queries")].iloc[0]
        old = pq[(pq["round"] == "2026-09") & (pq["system"] == s)].set_index("query")["dcg"]
        new = pq[(pq["round"] == "2026-10") & (pq["system"] == s)].set_index("query")["dcg"]
        shared = old.index.intersection(new.index)
        sd_d = np.std(new[shared] - old[shared], ddof=1)
        assert paired["sd_used"] == pytest.approx(sd_d)
        assert paired["queries_needed"] == queries_needed(sd_d, 0.5)


def _two_sample_power(sd: float, delta: float, n: int) -> float:
    df = 2 * n - 2
    nc = delta / (sd * math.sqrt(2 / n))
    crit = sps.t.ppf(0.975, df)
    return float(sps.nct.sf(crit, df, nc) + sps.nct.cdf(-crit, df, nc))


def test_plan_without_spread_says_so():
    df = pd.DataFrame({"round": "m", "query": ["a", "b"], "doc": "d", "position": 1,
                       "label": [2, 2]})
    plan = plan_next_round(judgments_from_frame(df), delta=0.1)
    assert plan["queries_needed"].isna().all()
    assert "no spread" in plan["note"].iloc[0]


def test_next_batch_round_trips_through_csv_and_excel(sample):
    batch = next_batch(sample, "2026-10", k=5)
    assert list(batch.columns) == ["round", "system", "query", "doc", "position", "score",
                                   "segment", "weight", "rater", "label"]
    assert len(batch) == 2 * 150 * 5 and (batch["label"] == "").all()
    for fmt in ("csv", "xlsx"):
        back = read_judgments((f"batch.{fmt}", export_batch(batch, fmt)))
        assert back.rounds == ("2026-10",) and back.raters == ()
        shown = back.shown_table()
        assert len(shown) == len(batch)
        assert shown["label"].isna().all() if "label" in shown else True
        original = sample.round("2026-10").shown_table()
        original = original[original["position"] <= 5].reset_index(drop=True)
        pd.testing.assert_frame_equal(shown[["system", "query", "doc", "position"]],
                                      original[["system", "query", "doc", "position"]])


def test_next_batch_unlabeled_only():
    df = pd.DataFrame({"round": "m", "query": "q", "doc": ["a", "b", "c"],
                       "position": [1, 2, 3], "label": [2, None, None]})
    b = next_batch(judgments_from_frame(df), "m", unlabeled_only=True)
    assert b["doc"].tolist() == ["b", "c"]


def test_export_neutralises_formulas():
    import openpyxl

    frame = pd.DataFrame({"query": ["=HYPERLINK(\"http://x\")", "ok"], "position": [1, -2]})
    text = export_batch(frame, "csv").decode()
    assert "'=HYPERLINK" in text and ",-2" in text
    book = openpyxl.load_workbook(io.BytesIO(export_batch(frame, "xlsx")))
    rows = [[c.value for c in row] for row in book.active.iter_rows()]
    assert all(c.data_type != "f" for row in book.active.iter_rows() for c in row)
    assert rows == [["query", "position", "ireval_escaped"],
                    ["'=HYPERLINK(\"http://x\")", 1, "query"], ["ok", -2, None]]


def test_a_change_without_spread_is_not_tested_and_says_why() -> None:
    """Every query one round later by the same amount (up to floating-point noise), and
    rounds whose queries all have one value: no t-test (scipy's "Precision loss" warning
    and a p-value of noise), the test column says why, p is NaN; no RuntimeWarning."""
    import warnings

    import pandas as pd

    from ireval_core.labels.trend import compare_rounds

    queries = [f"q{i}" for i in range(6)]
    base = [0.1, 0.2, 0.3, 0.7, 1.1, 2.3]
    paired = pd.DataFrame({"round": ["a"] * 6 + ["b"] * 6, "system": "s",
                           "query": queries * 2, "weight": 1.0,
                           "dcg": base + [v + 0.1 for v in base]})
    welch = pd.DataFrame({"round": ["a"] * 5 + ["b"] * 5, "system": "s",
                          "query": [f"a{i}" for i in range(5)] + [f"b{i}" for i in range(5)],
                          "weight": 1.0, "dcg": [0.3] * 5 + [0.1 + 0.2] * 4 + [0.3]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        [p_row] = compare_rounds(paired).to_dict("records")
        [w_row] = compare_rounds(welch).to_dict("records")
    assert p_row["test"] == ("paired t over 6 shared queries: not run, every shared query "
                             "changed by the same +0.1, so there is no spread to test the "
                             "change against")
    assert np.isnan(p_row["p"]) and not p_row["significant"]
    assert w_row["test"].startswith("Welch t: not run, every query has the same value")
    assert np.isnan(w_row["p"])


def test_the_offline_online_note_withholds_a_gauc_over_too_few_queries() -> None:
    """DCG@3 falls significantly while the later round has one query with both classes:
    the note does not claim the scores order results "as well as before" on a GAUC of
    one query, nor print "p undefined"; it says it cannot be told, and why."""
    import pandas as pd

    from ireval_core.labels.online import MIN_GAUC_QUERIES, offline_online

    rows = []
    for q in range(12):
        later = [2, 1, 0] if q == 0 else [0, 0, 0]
        for rnd, labels in (("2026-01", [2, 1, 0]), ("2026-02", later)):
            for pos, label in enumerate(labels, start=1):
                rows.append({"round": rnd, "query": f"q{q}", "doc": f"d{q}-{pos}-{rnd}",
                             "position": pos, "label": label, "score": 1.0 - pos / 10})
    oo = offline_online(judgments_from_frame(pd.DataFrame(rows)), k=3, n_resamples=200)
    gauc = oo.table.set_index("round")["gauc_queries"].to_dict()
    assert gauc == {"2026-01": 12, "2026-02": 1} and MIN_GAUC_QUERIES == 5
    [note] = oo.notes
    assert "DCG@3 fell significantly" in note
    assert ("Whether the model scores order the shown results as well as before cannot be "
            "told: GAUC rests on 12 and 1 query with both relevant and non-relevant scored "
            "results") in note
    assert "at least 5 in each round" in note
    assert "p undefined" not in note and "as well as before (" not in note


def _rounds_frame(values: dict[str, tuple[list[str], np.ndarray, np.ndarray]]) -> pd.DataFrame:
    """A per-query table for compare_rounds: round -> (queries, values, weights)."""
    return pd.concat([pd.DataFrame({"round": r, "system": "s", "query": q, "weight": w,
                                    "dcg": x}) for r, (q, x, w) in values.items()])


@pytest.mark.parametrize("scale", [1.0, 3.5])
def test_weighted_month_over_month_with_equal_weights_is_student_and_welch(scale):
    """Equal weights (any size): the weighted tests are scipy's paired t and Welch's t."""
    from ireval_core.labels.trend import compare_rounds

    rng = np.random.default_rng(3)
    q = [f"q{i}" for i in range(25)]
    a, b, c = rng.normal(2, 1, 25), rng.normal(2.4, 1, 25), rng.normal(1.7, 1.2, 31)
    w25, w31 = np.full(25, scale), np.full(31, scale)
    ch = compare_rounds(_rounds_frame({"2026-01": (q, a, w25), "2026-02": (q, b, w25),
                                       "2026-03": ([f"n{i}" for i in range(31)], c, w31)}),
                        weighted=True).set_index("round_to")
    paired, welch = sps.ttest_rel(b, a), sps.ttest_ind(c, b, equal_var=False)
    assert ch.loc["2026-02", "test"] == "paired t over 25 shared queries, weighted"
    assert ch.loc["2026-03", "test"] == "Welch t, weighted"
    for row, res in (("2026-02", paired), ("2026-03", welch)):
        ci = res.confidence_interval(0.95)
        assert ch.loc[row, "p"] == pytest.approx(res.pvalue, rel=1e-9)
        assert (ch.loc[row, "ci_low"], ch.loc[row, "ci_high"]) == pytest.approx(
            (ci.low, ci.high), rel=1e-9)
    assert "Welch t, weighted (25 and 31 queries)" in ch.loc["2026-03", "sentence"]


def test_weighted_month_over_month_tests_the_means_shown():
    """The test is on the weighted means the trend shows: when the heavy queries rose and
    the many light ones fell, the means rose, and the test says so (it tested the
    unweighted values, a significant drop beside a rising mean)."""
    from ireval_core.labels.trend import compare_rounds

    rng = np.random.default_rng(5)
    n = 40
    q0, q1 = [f"a{i}" for i in range(n)], [f"b{i}" for i in range(n)]
    heavy = np.arange(n) < 8  # 8 head queries carry most of the weight
    w = np.where(heavy, 50.0, 1.0)
    x0 = np.where(heavy, 1.0, 2.0) + rng.normal(0, 0.2, n)
    x1 = np.where(heavy, 2.0, 1.0) + rng.normal(0, 0.2, n)
    ch = compare_rounds(_rounds_frame({"2026-01": (q0, x0, w), "2026-02": (q1, x1, w)}),
                        weighted=True).iloc[0]
    assert ch["delta"] > 0.5 and sps.ttest_ind(x1, x0).statistic < 0  # unweighted: a fall
    assert ch["test_delta"] == pytest.approx(ch["delta"], rel=1e-12)
    assert ch["ci_low"] < ch["test_delta"] < ch["ci_high"]
    assert not ch["drop"] and "rose" in ch["sentence"]


def test_weighted_month_over_month_interval_covers_the_population_change():
    """Coverage on a finite population sampled with unequal probabilities (π ∝ traffic,
    weight 1/π): the weighted Welch interval covers the true change of the population
    mean in about 95% of draws; the plain-mean interval, blind to the design, almost
    never does (the sample over-represents head queries, whose values differ)."""
    from ireval_core.labels.trend import _test

    rng = np.random.default_rng(11)
    size = 4000
    traffic = rng.pareto(1.2, size) + 1
    head = traffic > np.quantile(traffic, 0.8)
    before = np.where(head, 2.5, 1.0) + rng.normal(0, 0.5, size)
    after = before + np.where(head, -0.3, 0.4) + rng.normal(0, 0.3, size)
    truth = after.mean() - before.mean()
    pi = np.minimum(1.0, 80 * traffic / traffic.sum())
    covered = plain = 0
    draws, plain_draws = 200, 50  # measured: 94.3% and 28.3% of 300 draws
    for draw in range(draws):
        s0 = np.flatnonzero(rng.random(size) < pi)
        s1 = np.flatnonzero(rng.random(size) < pi)
        q0, q1 = s0.astype(str), (s1 + size).astype(str)  # independent samples: Welch
        res = _test(before[s0], after[s1], q0, q1, "unpaired", 0.95, 1 / pi[s0], 1 / pi[s1])
        covered += res["ci_low"] <= truth <= res["ci_high"]
        if draw < plain_draws:
            un = _test(before[s0], after[s1], q0, q1, "unpaired", 0.95)
            plain += un["ci_low"] <= truth <= un["ci_high"]
    assert 0.90 <= covered / draws <= 0.99, covered / draws
    assert plain / plain_draws < 0.5, plain / plain_draws
