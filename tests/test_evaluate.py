"""evaluate() and the Evaluation it returns: layout, options, intervals."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sps

from ireval_core import EvalOptions, Qrels, Run, evaluate

QRELS = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"a": 1, "d": 3},
                         "q3": {"x": 0}})
RUN_A = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}, "q2": {"d": 1.0, "a": 0.5},
                       "q3": {"x": 1.0}, "q9": {"a": 1.0}}, name="A")
RUN_B = Run.from_dict({"q1": {"b": 3.0, "c": 2.0}, "q2": {"a": 1.0}}, name="B")


def test_queries_averaged_and_complete():
    res = evaluate(QRELS, [RUN_A, RUN_B], ["AP"])
    assert list(res.query_ids["A"]) == ["q1", "q2", "q3"]  # q9 has no qrels: ignored
    assert list(res.query_ids["B"]) == ["q1", "q2"]
    full = evaluate(QRELS, [RUN_B], ["AP"], options=EvalOptions(complete=True))
    assert list(full.query_ids["B"]) == ["q1", "q2", "q3"]
    assert full.per_query("B", "AP")["q3"] == 0.0
    assert full.mean("B", "AP") == pytest.approx(res.per_query("B", "AP").sum() / 3)


def test_tidy_table_and_definitions():
    res = evaluate(QRELS, [RUN_A, RUN_B], ["P@2", "nDCG"])
    tidy = res.tidy()
    assert list(tidy.columns) == ["system", "query", "measure", "value"]
    assert len(tidy) == 2 * 3 + 2 * 2
    table = res.table()
    assert list(table.columns) == ["P@2", "nDCG"] and list(table.index) == ["A", "B"]
    assert table.loc["A", "P@2"] == pytest.approx(np.mean([0.5, 1.0, 0.0]))
    assert "ideal from qrels" in res.definition("nDCG")
    assert "arithmetic mean over queries" in res.definition("P@2")


def test_paired_uses_common_queries():
    res = evaluate(QRELS, [RUN_A, RUN_B], ["RR"])
    q, a, b = res.paired("RR", "A", "B")
    assert list(q) == ["q1", "q2"]
    assert a.tolist() == [1.0, 1.0] and b.tolist() == [0.5, 1.0]


def test_idcg_zero_policies():
    keep = evaluate(QRELS, [RUN_A], ["nDCG"])
    drop = evaluate(QRELS, [RUN_A], ["nDCG"], options=EvalOptions(idcg_zero="drop"))
    assert keep.per_query("A", "nDCG")["q3"] == 0.0
    assert np.isnan(drop.per_query("A", "nDCG")["q3"])
    assert drop.n_averaged[("A", "nDCG")] == 2
    assert drop.mean("A", "nDCG") == pytest.approx(keep.per_query("A", "nDCG")[:2].mean())
    with pytest.raises(ValueError, match="'idcg_zero' parameter"):
        evaluate(QRELS, [RUN_A], ["nDCG"], options=EvalOptions(idcg_zero="one"))


def test_intervals_are_t_intervals_clipped_to_range():
    res = evaluate(QRELS, [RUN_A], ["RR", "NumRet", "DCG"])
    low, high = res.intervals()
    v = res.per_query("A", "DCG").to_numpy()
    lo, hi = sps.t.interval(0.95, len(v) - 1, loc=v.mean(), scale=sps.sem(v))
    assert low.loc["A", "DCG"] == pytest.approx(max(lo, 0.0))
    assert high.loc["A", "DCG"] == pytest.approx(hi)
    assert high.loc["A", "RR"] <= 1.0 and low.loc["A", "RR"] >= 0.0
    assert np.isnan(low.loc["A", "NumRet"])  # a sum, not a mean


def test_run_names_must_differ():
    with pytest.raises(ValueError, match="distinct"):
        evaluate(QRELS, [RUN_A, RUN_A], ["AP"])


def test_an_empty_run_scores_zero_on_every_judged_query_with_complete() -> None:
    from ireval_core import EvalOptions, Qrels, Run, evaluate

    qrels = Qrels.from_dict({"q1": {"d": 1}, "q2": {"e": 0}})
    empty = Run.from_dict({}, name="x")
    res = evaluate(qrels, empty, ["P@5", "AP", "nDCG", "bpref", "RR"],
                   options=EvalOptions(complete=True))
    assert res.table().loc["x"].tolist() == [0.0] * 5
    assert set(res.n_averaged.values()) == {2}
    assert evaluate(qrels, empty, ["P@5"]).n_averaged[("x", "P@5")] == 0  # without -c: none
