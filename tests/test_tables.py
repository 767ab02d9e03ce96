"""The Metrics table: cells, best marks (ties alike), query counts and the query-set note."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ireval_core import EvalOptions, Qrels, Run, evaluate
from ireval_core.tables import best_marks, metrics_table

QRELS = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(6)})


def _run(name: str, first: str, queries: range = range(6)) -> Run:
    other = "b" if first == "a" else "a"
    return Run.from_dict({f"q{i}": {first: 2.0, other: 1.0} for i in queries}, name=name)


def test_cells_hold_mean_and_clipped_interval() -> None:
    res = evaluate(QRELS, [_run("good", "a"), _run("bad", "b")], ["P@1", "NumRet"])
    t = metrics_table(res)
    assert t.cells.loc["good", "P@1"] == "1.0000 [1.00, 1.00]"  # clipped, not [1.00, 1.00+]
    assert t.cells.loc["bad", "P@1"] == "0.0000 [0.00, 0.00]"
    assert t.cells.loc["good", "NumRet"] == "12.0000"  # a sum: no interval
    assert t.best.loc["good", "P@1"] and not t.best.loc["bad", "P@1"]
    assert t.n_queries.loc["good", "P@1"] == 6
    assert t.query_note is None
    assert t.queries_caption() == "Queries averaged: good 6, bad 6."
    long = t.to_long(res)
    assert list(long.columns) == ["system", "measure", "mean", "ci_low", "ci_high", "queries",
                                  "definition", "options"]
    assert long["options"].eq(res.options.describe()).all()


def test_equal_means_get_equal_marks() -> None:
    res = evaluate(QRELS, [_run("x", "a"), _run("y", "a"), _run("z", "b")], ["P@1", "AP"])
    t = metrics_table(res)
    assert t.best["P@1"].tolist() == [True, True, False]
    # means that differ only by summation order are equal
    mean = pd.DataFrame({"m": [0.1 + 0.2, 0.3, 0.29]}, index=["p", "q", "r"])
    assert best_marks(mean)["m"].tolist() == [True, True, False]
    assert best_marks(pd.DataFrame({"m": [np.nan, np.nan]}))["m"].tolist() == [False, False]


def test_different_query_sets_are_said() -> None:
    res = evaluate(QRELS, [_run("all", "b"), _run("some", "a", range(3))], ["P@1"])
    t = metrics_table(res)
    assert t.query_note is not None
    assert "all 6, some 3" in t.query_note
    # with -c every run averages every qrels query: the same set, no note
    full = metrics_table(evaluate(QRELS, [_run("all", "b"), _run("some", "a", range(3))],
                                  ["P@1"], options=EvalOptions(complete=True)))
    assert full.query_note is None


def test_frames_are_fresh_objects() -> None:
    res = evaluate(QRELS, [_run("x", "a")], ["P@1"])
    t1, t2 = metrics_table(res), metrics_table(res)
    t1.mean.loc["x", "P@1"] = -1.0
    assert t2.mean.loc["x", "P@1"] == 1.0 and res.mean("x", "P@1") == 1.0


def test_confidence_level_is_validated() -> None:
    res = evaluate(QRELS, [_run("x", "a")], ["P@1"])
    with pytest.raises(ValueError, match="'confidence_level' parameter of metrics_table"):
        metrics_table(res, confidence_level=95)


def test_report_marks_equal_means_alike() -> None:
    from ireval_core.report import significance_table
    res = evaluate(QRELS, [_run("x", "a"), _run("y", "a"), _run("z", "b")], ["P@1"])
    table = significance_table(res, test="t")
    assert [table.is_best(s, "P@1") for s in ("x", "y", "z")] == [True, True, False]
    assert [table.is_best(s, "P@1") for s in ("x", "y", "z")] == metrics_table(
        res).best["P@1"].tolist()


def test_few_queries_are_said_beside_the_intervals() -> None:
    qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(3)})
    t = metrics_table(evaluate(qrels, [_run("x", "a", range(3))], ["P@1"]))
    assert t.small_note is not None and t.small_note.startswith("Only 3 queries")
    assert metrics_table(evaluate(QRELS, [_run("x", "a")], ["P@1"])).small_note is None


def test_per_query_workbook_sheets_values_and_formula_cells() -> None:
    import io

    from ireval_core.tables import per_query_workbook

    qrels = Qrels.from_dict({"=cmd|' /C calc'!A0": {"a": 1}, "q2": {"b": 1}})
    runs = [Run.from_dict({"=cmd|' /C calc'!A0": {"a": 1.0}, "q2": {"c": 1.0}}, name="x"),
            Run.from_dict({"q2": {"b": 1.0}}, name="y")]
    res = evaluate(qrels, runs, ["P@1", "nDCG(gain=exp)@10"])
    sheets = pd.read_excel(io.BytesIO(per_query_workbook(res)), sheet_name=None)
    assert list(sheets) == ["P@1", "nDCG(gain=exp)@10", "definitions"]
    p1 = sheets["P@1"].set_index("query")
    assert p1.loc["'=cmd|' /C calc'!A0", "x"] == 1  # the id is text, not a formula
    assert np.isnan(p1.loc["'=cmd|' /C calc'!A0", "y"])  # y has no value for that query
    assert p1.loc["q2", "y"] == 1
    defs = sheets["definitions"].set_index("measure")["definition"]
    assert defs["P@1"] == res.definition("P@1")
    assert defs["options"] == res.options.describe()
