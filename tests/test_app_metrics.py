"""AppTest of the Metrics page: the table holds ireval_core's numbers, bad specs show errors."""

from __future__ import annotations

import re

import pytest
from _apps import NEEDS_SAMPLE, SAMPLE, after_data, displayed
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import metrics as metrics_keys
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs

pytestmark = NEEDS_SAMPLE


def _sample_eval(measures: list[str]):
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return evaluate(qrels, runs, measures)


def _metrics_page() -> AppTest:
    return after_data("metrics", "Metrics")


def _leading_number(cell: str) -> float:
    match = re.match(r"\s*(-?\d+\.\d+)", cell)
    assert match, cell
    return float(match[1])


def test_table_holds_sample_means_with_intervals() -> None:
    at = _metrics_page()
    table = at.table[0].value
    expected = _sample_eval(["nDCG@10", "AP", "P@10", "R@100", "RR", "bpref", "Judged@10"])
    assert list(table.columns) == ["nDCG@10", "AP", "P@10", "R@100", "RR", "bpref", "Judged@10"]
    assert sorted(table.index) == ["bm25", "narrow_recall", "neural_rerank"]
    for system in table.index:
        for measure in table.columns:
            cell = table.loc[system, measure]
            assert _leading_number(cell) == pytest.approx(expected.mean(system, measure),
                                                          abs=5e-5)
            assert re.search(r"\[\d\.\d\d, \d\.\d\d\]$", cell), cell  # the 95% interval
    assert table.loc["bm25", "nDCG@10"].startswith("0.5354")
    # definitions and options next to the numbers
    text = " ".join(m.value for m in at.markdown)
    assert "nDCG@10" in text and "IDCG" in text
    captions = " ".join(displayed(c.value) for c in at.caption)
    assert "in both run and qrels" in captions
    assert "Queries averaged: bm25 59" in captions
    assert [b.label for b in at.get("download_button")] == [
        "Per-query values (CSV)", "Per-query values (Excel, a sheet per measure)",
        "Aggregate table (CSV)"]


def test_typed_measure_is_added() -> None:
    at = _metrics_page()
    at.text_input(key=metrics_keys.EXTRA).set_value("nDCG(gain=exp)@20; P(rel=2)@5").run()
    assert not at.exception and not at.error
    table = at.table[0].value
    expected = _sample_eval(["nDCG(gain=exp)@20", "P(rel=2)@5"])
    for measure in ("nDCG(gain=exp)@20", "P(rel=2)@5"):
        assert _leading_number(table.loc["neural_rerank", measure]) == pytest.approx(
            expected.mean("neural_rerank", measure), abs=5e-5)


def test_unknown_measure_shows_suggestion() -> None:
    at = _metrics_page()
    at.text_input(key=metrics_keys.EXTRA).set_value("nDGC@10").run()
    assert not at.exception
    [error] = at.error
    assert "Did you mean" in error.value and "nDCG" in error.value
    assert at.table  # the valid measures are still shown


def test_options_are_applied() -> None:
    at = _metrics_page()
    at.checkbox(key=state.OPTION_KEYS["complete"]).check().run()
    assert not at.exception
    table = at.table[0].value
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    expected = evaluate(qrels, runs, ["nDCG@10"], options=EvalOptions(complete=True))
    assert _leading_number(table.loc["narrow_recall", "nDCG@10"]) == pytest.approx(
        expected.mean("narrow_recall", "nDCG@10"), abs=5e-5)
    assert "every qrels query" in " ".join(displayed(c.value) for c in at.caption)
