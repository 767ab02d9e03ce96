"""Model judges checked against people (ireval_core.labels.judge): agreement against
scikit-learn and krippendorff, Kendall's tau against scipy, bias, decisions, GSB verdict,
disagreements as the next batch, and the report's JSON."""

from __future__ import annotations

import json

import krippendorff
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from sklearn.metrics import cohen_kappa_score

from ireval_core.labels import Judgments, judgments_from_frame, read_judgments
from ireval_core.labels.gsb import GsbJudgments
from ireval_core.labels.judge import (
    AGREEMENT_COLUMNS,
    BIAS_COLUMNS,
    DECISION_COLUMNS,
    DISAGREEMENT_COLUMNS,
    FAVOURS_COLUMNS,
    GSB_COLUMNS,
    ORDER_COLUMNS,
    TREND_COLUMNS,
    judge_report,
)
from ireval_core.labels.noise import noise_trend
from ireval_core.labels.planning import export_batch
from ireval_core.labels.trend import per_query_dcg


def judged(seed: int = 3, bias: float = 0.6) -> Judgments:
    """Two people and a model judge ``llm`` label 3 rounds of 30 queries x 2 systems x 5
    positions; the judge adds a grade, with probability ``bias``, to the documents only
    system ``b`` shows."""
    rng = np.random.default_rng(seed)
    rows = []
    for r, round_name in enumerate(("2026-01", "2026-02", "2026-03")):
        for q in range(30):
            true = rng.integers(0, 4, 12)
            quality = {"a": 0.4, "b": 0.3 - 0.25 * (r == 2)}  # b breaks in March
            lists = {s: np.argsort(-(true + rng.normal(0, 1 / quality[s] * 0.3, 12)),
                                   kind="stable")[:5] for s in ("a", "b")}
            only_b = set(lists["b"]) - set(lists["a"])
            for d in sorted(set(lists["a"]) | set(lists["b"])):
                labels = [(p, int(np.clip(true[d] + (rng.random() < 0.15) * rng.choice((-1, 1)),
                                          0, 3))) for p in ("ann", "bo") if rng.random() < 0.8]
                y = true[d] + (rng.random() < 0.1)
                if d in only_b and rng.random() < bias:
                    y += 1
                labels.append(("llm", int(min(y, 3))))
                for s in ("a", "b"):
                    pos = np.flatnonzero(lists[s] == d)
                    if len(pos):
                        rows += [{"round": round_name, "system": s, "query": f"q{q:02d}",
                                  "doc": f"d{q:02d}_{d}", "position": int(pos[0]) + 1,
                                  "rater": t, "label": y_} for t, y_ in labels]
    return judgments_from_frame(pd.DataFrame(rows))


@pytest.fixture(scope="module")
def j() -> Judgments:
    return judged()


@pytest.fixture(scope="module")
def report(j):
    gsb = GsbJudgments.from_frame(pd.DataFrame({
        "round": np.repeat(["2026-01", "2026-02", "2026-03"], 30),
        "query": np.tile([f"q{q:02d}" for q in range(30)], 3),
        "judgment": ["G"] * 12 + ["S"] * 10 + ["B"] * 8 + ["G"] * 10 + ["S"] * 10
        + ["B"] * 10 + ["B"] * 25 + ["S"] * 5}))
    return judge_report(j, "llm", n_resamples=400, gsb=gsb, gsb_systems=("a", "b"))


def consensus(j: Judgments) -> tuple[pd.DataFrame, pd.DataFrame]:
    t = j.label_table()
    people = t[t["rater"] != "llm"].groupby(["round", "query", "doc"])["label"].mean()
    judge = t[t["rater"] == "llm"].set_index(["round", "query", "doc"])["label"]
    both = pd.concat([judge.rename("judge"), people.rename("people")], axis=1).dropna()
    return both, t


def test_columns_and_json(report):
    assert list(report.agreement.columns) == list(AGREEMENT_COLUMNS)
    assert list(report.trend.columns) == list(TREND_COLUMNS)
    assert list(report.decisions.columns) == list(DECISION_COLUMNS)
    assert list(report.order.columns) == list(ORDER_COLUMNS)
    assert list(report.gsb.columns) == list(GSB_COLUMNS)
    assert list(report.bias.columns) == list(BIAS_COLUMNS)
    assert list(report.favours.columns) == list(FAVOURS_COLUMNS)
    assert list(report.disagreements.columns) == list(DISAGREEMENT_COLUMNS)
    doc = json.loads(json.dumps(report.to_dict(max_disagreements=5), allow_nan=False))
    assert doc["judge"] == "llm" and doc["people"] == ["ann", "bo"]
    assert len(doc["disagreements"]) == 5
    assert doc["disagreements_total"] == len(report.disagreements)
    assert doc["confusion"]["2026-01"]["rows"] == "judge (llm) label"
    assert doc["summary"] == list(report.summary)


def test_agreement_against_sklearn_and_krippendorff(j, report):
    both, _ = consensus(j)
    for row in report.agreement.itertuples():
        part = both.loc[row.round]
        judge = part["judge"].to_numpy()
        people = np.floor(part["people"].to_numpy() + 0.5)  # nearest grade, halves up
        assert row.units == len(part)
        assert row.kappa == pytest.approx(cohen_kappa_score(
            judge, people, weights="quadratic", labels=[0.0, 1.0, 2.0, 3.0]))
        assert row.alpha == pytest.approx(krippendorff.alpha(
            reliability_data=np.vstack((judge, people)), level_of_measurement="ordinal"))
        assert row.kappa_ci_low < row.kappa < row.kappa_ci_high
        assert row.alpha_ci_low < row.alpha < row.alpha_ci_high
        assert row.exact_agreement == pytest.approx(np.mean(judge == people))
        assert row.difference == pytest.approx(np.mean(judge - part["people"]))
        confusion = report.confusion(row.round)
        assert confusion.index.name == "judge (llm) label"
        assert confusion.columns.name == "people's consensus label"
        expected = pd.crosstab(judge, people).reindex(index=[0.0, 1, 2, 3],
                                                       columns=[0.0, 1, 2, 3], fill_value=0)
        assert confusion.to_numpy().tolist() == expected.to_numpy().tolist()


def test_linear_and_nominal_options(j):
    rep = judge_report(j, "llm", weights="linear", level="nominal", n_resamples=50)
    both, _ = consensus(j)
    part = both.loc["2026-02"]
    judge, people = part["judge"].to_numpy(), np.floor(part["people"].to_numpy() + 0.5)
    row = rep.agreement.set_index("round").loc["2026-02"]
    assert row["kappa"] == pytest.approx(cohen_kappa_score(judge, people, weights="linear",
                                                           labels=[0.0, 1.0, 2.0, 3.0]))
    assert row["alpha"] == pytest.approx(krippendorff.alpha(
        reliability_data=np.vstack((judge, people)), level_of_measurement="nominal"))


def test_order_against_scipy_kendalltau(report):
    t = report.trend
    tau = stats.kendalltau(t["people_dcg"], t["judge_dcg"]).statistic
    first = report.order.iloc[0]
    assert first["scope"] == "all rounds" and first["points"] == len(t)
    assert first["tau"] == pytest.approx(tau)
    assert first["ci_low"] <= first["tau"] <= first["ci_high"]
    for row in report.order.iloc[1:].itertuples():
        part = t[t["round"] == row.scope]
        assert row.tau == pytest.approx(stats.kendalltau(part["people_dcg"],
                                                         part["judge_dcg"]).statistic)


def test_the_planted_bias_is_found(j, report):
    both, t = consensus(j)
    shown = j.shown_table()
    shown = shown[shown["position"] <= 10].join(both, on=["round", "query", "doc"],
                                                 how="inner")
    diff = (shown["judge"] - shown["people"]).groupby(shown["system"]).mean()
    pooled = report.bias[report.bias["round"] == "all"].set_index("system")
    assert pooled["bias"].to_dict() == pytest.approx(diff.to_dict())
    assert pooled.loc["b", "ci_low"] > pooled.loc["a", "ci_high"]
    fav = report.favours[report.favours["round"] == "all"].set_index("system")
    assert fav.loc["b", "favours"] and not fav.loc["a", "favours"]
    assert fav.loc["b", "difference"] == pytest.approx(diff["b"] - diff["a"])
    assert any("it favours b" in s for s in report.summary)
    # without the planted bias, no system is favoured over all rounds
    fair = judge_report(judged(bias=0.0), "llm", n_resamples=400)
    assert not fair.favours[fair.favours["round"] == "all"]["favours"].any()


def test_decisions_follow_the_two_trends(j, report):
    people = noise_trend(j, exclude=["llm"], n_resamples=400)
    alone = noise_trend(j, exclude=["ann", "bo"], n_resamples=400)
    assert report.trend["people_dcg"].tolist() == people.table["dcg"].tolist()
    assert report.trend["judge_dcg"].tolist() == alone.table["dcg"].tolist()
    d = report.decisions.set_index(["system", "round_to"])
    for c in people.changes.itertuples():
        assert d.loc[(c.system, c.round_to), "people_drop"] == c.drop
        assert d.loc[(c.system, c.round_to), "people_delta"] == pytest.approx(c.delta)
    # b breaks in March: both see the drop
    assert d.loc[("b", "2026-03"), "people_drop"] and d.loc[("b", "2026-03"), "judge_drop"]
    assert (report.trend["judge_coverage"] == 1.0).all()


def test_gsb_verdicts(j, report):
    g = report.gsb.set_index("round")
    assert g.loc["2026-03", "people_verdict"] == "new worse"
    assert g.loc["2026-02", "people_verdict"] == "no clear preference"
    # the judge's GSB: per query, b's DCG@10 against a's under the judge's labels alone
    jj = j.select(raters=["llm"])
    dcg = pd.DataFrame({"round": jj.round_names[jj.group_round],
                        "system": jj.system_names[jj.group_system],
                        "query": jj.query_ids[jj.group_query],
                        "dcg": per_query_dcg(jj, k=10).dcg})
    wide = dcg.pivot_table(index=["round", "query"], columns="system", values="dcg")
    d = (wide["b"] - wide["a"]).loc["2026-03"]
    assert g.loc["2026-03", "queries"] == len(d)
    assert g.loc["2026-03", "judge_gsb"] == pytest.approx(((d > 0).sum() - (d < 0).sum())
                                                          / len(d))
    assert g.loc["2026-03", "judge_verdict"] == "new worse"


def test_disagreements_are_the_next_batch(j, report, tmp_path):
    both, _ = consensus(j)
    gap = (both["judge"] - both["people"]).abs()
    assert len(report.disagreements) == int((gap >= 1.0).sum())
    assert report.disagreements["difference"].abs().is_monotonic_decreasing
    shown = j.shown_table().groupby(["round", "query", "doc"]).agg(
        systems=("system", lambda s: ", ".join(sorted(set(s)))), position=("position", "min"))
    expected = shown.loc[list(map(tuple, report.disagreements[["round", "query", "doc"]]
                                  .values))]
    assert report.disagreements["systems"].tolist() == expected["systems"].tolist()
    assert report.disagreements["position"].tolist() == expected["position"].tolist()
    batch = report.batch()
    assert (batch["rater"] == "").all() and (batch["label"] == "").all()
    keys = set(map(tuple, report.disagreements[["round", "query", "doc"]].values))
    assert set(map(tuple, batch[["round", "query", "doc"]].values)) == keys
    path = tmp_path / "batch.csv"
    path.write_bytes(export_batch(batch.assign(rater="ann", label="2")))
    back = read_judgments(path)
    assert back.n_units == len(keys)
    assert export_batch(batch, "xlsx")[:2] == b"PK"


def test_parameters_are_checked(j):
    with pytest.raises(ValueError, match="'judge' parameter of judge_report"):
        judge_report(j, "gpt")
    with pytest.raises(ValueError, match="'people' parameter"):
        judge_report(j, "llm", people=["llm"])
    with pytest.raises(ValueError, match="'gsb_systems' parameter"):
        judge_report(j, "llm", gsb=GsbJudgments.from_frame(pd.DataFrame(
            {"round": ["2026-01"], "query": ["q00"], "judgment": ["G"]})), gsb_systems=None)
    with pytest.raises(ValueError, match="'min_gap' parameter"):
        judge_report(j, "llm", min_gap=0)
