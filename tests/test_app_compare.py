"""AppTest of the Compare page: p-values and planning numbers equal the core functions."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _apps import APP, NEEDS_SAMPLE, displayed, read_sample
from streamlit.testing.v1 import AppTest

from ireval_app import compare_glue
from ireval_app.keys import compare as compare_keys
from ireval_core.compare import aligned_scores, compare_runs
from ireval_core.evaluate import evaluate
from ireval_core.report import significance_table
from ireval_core.stats import min_detectable_difference, queries_needed

pytestmark = NEEDS_SAMPLE


def _compare_page(resamples: int = 1000) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.switch_page("pages/compare.py").run()
    assert not at.exception
    at.number_input(key=compare_keys.RESAMPLES).set_value(resamples).run()
    assert not at.exception
    return at


def _row(table, a: str, b: str, measure: str, test: str):
    sel = table[(table["system_a"] == a) & (table["system_b"] == b)
                & (table["measure"] == measure) & (table["test"] == test)]
    assert len(sel) == 1
    return sel.iloc[0]


def test_pvalues_equal_compare_runs() -> None:
    at = _compare_page()
    assert at.title[0].value == "Compare"
    table = at.dataframe[0].value
    qrels, runs = read_sample()
    expected = compare_runs(qrels, runs, ["nDCG@10"], tests=("t", "randomization"),
                            correction="holm", n_resamples=1000, seed=0)
    assert len(table) == len(expected) == 6  # 3 pairs x 2 tests
    for c in expected:
        row = _row(table, c.system_a, c.system_b, c.measure, c.test)
        assert row["p"] == pytest.approx(c.pvalue, rel=1e-12, abs=0)
        assert row["corrected p"] == pytest.approx(c.pvalue_corrected, rel=1e-12, abs=0)
        assert row["mean_diff"] == pytest.approx(c.mean_diff, abs=1e-12)
        assert row["W/T/L"] == f"{c.wins}/{c.ties}/{c.losses}"
        assert row["n"] == c.n
    t = next(c for c in expected if (c.system_a, c.system_b, c.test)
             == ("bm25", "neural_rerank", "t"))
    assert _row(table, "bm25", "neural_rerank", "nDCG@10", "t")["p"] == t.pvalue
    verdict = next(displayed(m.value) for m in at.markdown
                   if "neural_rerank beats bm25" in displayed(m.value))
    assert verdict.startswith(":material/check_circle: ")  # the icon of a significant verdict
    assert f"by {t.mean_diff:+.2f}" in verdict and "Holm-corrected" in verdict
    # one measure, one query set: both move from the table to the caption
    assert any(f"compared on nDCG@10 over the same {t.n} queries" in c.value
               for c in at.caption)


def test_baseline_and_wilcoxon() -> None:
    at = _compare_page()
    at.radio(key=compare_keys.MODE).set_value("against a baseline").run()
    at.selectbox(key=compare_keys.BASELINE).set_value("bm25")
    at.multiselect(key=compare_keys.TESTS).set_value(["wilcoxon"])
    at.selectbox(key=compare_keys.CORRECTION).set_value("none").run()
    assert not at.exception
    table = at.dataframe[0].value
    qrels, runs = read_sample()
    expected = compare_runs(qrels, runs, ["nDCG@10"], baseline="bm25", tests=("wilcoxon",),
                            correction="none")
    assert sorted(table["system_b"]) == ["narrow_recall", "neural_rerank"]
    for c in expected:
        assert _row(table, "bm25", c.system_b, "nDCG@10", "wilcoxon")["p"] == pytest.approx(
            c.pvalue, rel=1e-12)
    # the report table compares each run with the baseline too, as `report --baseline`
    res = evaluate(qrels, runs, ["nDCG@10"])
    report = significance_table(res, ["nDCG@10"], test="wilcoxon", correction="none",
                                n_resamples=1000, baseline="bm25")
    assert at.table[-1].value.equals(report.to_frame())
    every_pair = significance_table(res, ["nDCG@10"], test="wilcoxon", correction="none",
                                    n_resamples=1000)
    assert "baseline" in report.caption() and "baseline" not in every_pair.caption()


def test_planning_numbers_equal_stats_functions() -> None:
    at = _compare_page()
    at.selectbox(key=compare_keys.PAIR).set_value("neural_rerank − bm25 on nDCG@10")
    at.number_input(key=compare_keys.DELTA).set_value(0.05).run()
    assert not at.exception
    qrels, runs = read_sample()
    res = evaluate(qrels, runs, ["nDCG@10"])
    _, scores = aligned_scores(res, "nDCG@10", [r.name for r in runs])
    d = scores["neural_rerank"] - scores["bm25"]
    sd = float(np.std(d, ddof=1))
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["sd of differences"] == f"{sd:.4f}"
    assert metrics["Queries now"] == f"{len(d):,}"
    assert metrics["Minimum detectable difference"] == (
        f"{min_detectable_difference(sd, len(d), alpha=0.05, power=0.8):.4f}")
    assert metrics["Queries needed for Δ = 0.05"] == (
        f"{queries_needed(sd, 0.05, alpha=0.05, power=0.8):,}")


def test_downloads_hold_the_records() -> None:
    at = _compare_page()
    table = at.dataframe[0].value
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[:5] == ["Download CSV", "Download JSON", "Markdown", "LaTeX", "HTML"]
    assert labels[5].startswith("Download the next labeling batch (CSV") and labels[6] == "Excel"
    qrels, runs = read_sample()
    records = compare_runs(qrels, runs, ["nDCG@10"], tests=("t", "randomization"),
                           correction="holm", n_resamples=1000, seed=0)
    rows = json.loads(compare_glue.download(records, "json"))
    assert [r["pvalue"] for r in rows] == pytest.approx(table["p"].tolist(), rel=1e-12)
    csv_lines = compare_glue.download(records, "csv").splitlines()
    assert csv_lines[0].startswith("system_a,system_b,measure,test")
    assert len(csv_lines) == 1 + len(table)


def test_report_table_equals_significance_table() -> None:
    at = _compare_page()
    at.selectbox(key=compare_keys.REPORT_TEST).set_value("randomization").run()
    assert not at.exception
    qrels, runs = read_sample()
    res = evaluate(qrels, runs, ["nDCG@10"])
    expected = significance_table(res, ["nDCG@10"], test="randomization", correction="holm",
                                  alpha=0.05, n_resamples=1000, seed=0)
    shown = at.table[-1].value
    assert shown.equals(expected.to_frame())
    assert "randomization (permutation) test, Holm correction" in "".join(
        displayed(c.value) for c in at.caption)
    labels = [b.proto.label for b in at.get("download_button")]
    assert {"Markdown", "LaTeX", "HTML"} <= set(labels)
