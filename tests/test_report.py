"""Significance tables: markers agree with the pairwise tests; Markdown, LaTeX and HTML output."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ireval_core import evaluate
from ireval_core.compare import aligned_scores, compare_evaluation
from ireval_core.io import read_qrels, read_runs
from ireval_core.report import _label, significance_table, table_from_records

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
MEASURES = ["nDCG@10", "AP", "P@10", "RR"]

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


@pytest.fixture(scope="module")
def res():
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return evaluate(qrels, runs, MEASURES)


@pytest.mark.parametrize(("test", "correction", "alpha"),
                         [("t", "holm", 0.05), ("wilcoxon", "none", 0.01),
                          ("randomization", "bonferroni", 0.05), ("sign", "bh", 0.1)])
def test_markers_follow_the_pairwise_tests(res, test: str, correction: str,
                                           alpha: float) -> None:
    table = significance_table(res, test=test, correction=correction, alpha=alpha,
                               n_resamples=2000, seed=3)
    records = compare_evaluation(res, MEASURES, tests=(test,), correction=correction,
                                 n_resamples=2000, seed=3)
    assert len(records) == 3 * len(MEASURES)
    for r in records:
        a_beats_b = r.system_b in table.beats[(r.system_a, r.measure)]
        b_beats_a = r.system_a in table.beats[(r.system_b, r.measure)]
        significant = r.pvalue_corrected < alpha
        assert a_beats_b == (significant and r.mean_a > r.mean_b)
        assert b_beats_a == (significant and r.mean_b > r.mean_a)
    for m in MEASURES:
        queries, values = aligned_scores(res, m)
        assert table.n_queries[m] == len(queries)
        for s in res.systems:
            assert table.means.loc[s, m] == pytest.approx(values[s].mean(), abs=1e-15)


def test_sample_story_and_renderings(res) -> None:
    table = significance_table(res)
    labels = table.labels
    assert labels == {"bm25": "a", "narrow_recall": "b", "neural_rerank": "c"}
    # the stronger reranker beats both others on nDCG@10; the narrow run beats nobody there
    assert table.markers("neural_rerank", "nDCG@10") == "ab"
    assert table.markers("narrow_recall", "nDCG@10") == ""
    assert table.cell("neural_rerank", "nDCG@10").endswith(" ᵃᵇ")
    best = {m: table.means[m].idxmax() for m in MEASURES}
    assert best["nDCG@10"] == "neural_rerank"

    md = table.to_markdown()
    row = next(line for line in md.splitlines() if line.startswith("| (c) neural_rerank"))
    assert f"**{table.means.loc['neural_rerank', 'nDCG@10']:.4f}**<sup>ab</sup>" in row
    assert "two-sided paired t-test, Holm correction" in md and "p < 0.05" in md
    assert all(f"- **{m}**: {res.definition(m)}" in md for m in MEASURES)

    tex = table.to_latex()
    assert r"(b) narrow\_recall &" in tex and r"\textbf{" in tex and "$^{ab}$" in tex
    assert tex.startswith(r"\begin{tabular}{lrrrr}")

    page = table.to_html()
    assert page.startswith("<!DOCTYPE html>") and "<sup>ab</sup>" in page
    assert page.count("<tr>") == 1 + len(res.systems)

    frame = table.to_frame()
    assert list(frame.index) == ["(a) bm25", "(b) narrow_recall", "(c) neural_rerank"]
    assert list(frame.columns) == MEASURES


def test_subsets_and_errors(res) -> None:
    table = significance_table(res, ["P@10"], systems=["neural_rerank", "bm25"])
    assert table.systems == ("neural_rerank", "bm25")
    assert table.labels == {"neural_rerank": "a", "bm25": "b"}
    assert list(table.means.columns) == ["P@10"]
    with pytest.raises(ValueError, match="test must be one of"):
        significance_table(res, test="anova")
    with pytest.raises(ValueError, match="alpha"):
        significance_table(res, alpha=1.5)
    with pytest.raises(ValueError, match="at least two"):
        significance_table(res, systems=["bm25"])


def test_labels_skip_q_and_grow() -> None:
    labels = [_label(i) for i in range(27)]
    assert "q" not in labels and labels[:3] == ["a", "b", "c"]
    assert labels[24] == "z" and labels[25] == "aa" and labels[26] == "ab"
    assert len(set(_label(i) for i in range(700))) == 700
    assert np.all([_label(i).isalpha() for i in range(700)])


def test_table_from_records_reads_what_was_run(res) -> None:
    records = compare_evaluation(res, MEASURES, tests=("t", "randomization"),
                                 correction="bh", n_resamples=2000, seed=1)
    from_records = table_from_records(
        res, [r for r in records if r.test == "randomization"], res.systems, alpha=0.05)
    direct = significance_table(res, test="randomization", correction="bh",
                                n_resamples=2000, seed=1)
    assert from_records.to_markdown() == direct.to_markdown()
    assert from_records.beats == direct.beats
    with pytest.raises(ValueError, match="exactly one test"):
        table_from_records(res, records, res.systems)
    against_baseline = compare_evaluation(res, MEASURES, baseline="bm25", tests=("t",))
    with pytest.raises(ValueError, match="every pair"):
        table_from_records(res, against_baseline, res.systems)


def test_a_baseline_table_reads_the_baseline_comparisons(res) -> None:
    """With ``baseline`` the markers come from each system against the baseline only,
    corrected over those comparisons: compare_evaluation(baseline=)'s records."""
    records = compare_evaluation(res, MEASURES, baseline="bm25", tests=("t",), seed=0)
    table = significance_table(res, baseline="bm25")
    from_records = table_from_records(res, records, res.systems, baseline="bm25")
    assert from_records.to_markdown() == table.to_markdown()
    assert from_records.beats == table.beats
    assert table.baseline == "bm25" and "with the baseline (a) bm25" in table.caption()
    for r in records:
        if r.pvalue_corrected < 0.05 and r.mean_diff != 0:
            won, lost = (r.system_b, r.system_a) if r.mean_diff > 0 else (r.system_a,
                                                                          r.system_b)
            assert lost in table.beats[(won, str(r.measure))]
    others = [s for s in res.systems if s != "bm25"]
    for m in MEASURES:  # two runs besides the baseline are never compared
        assert others[0] not in table.beats[(others[1], m)]
        assert others[1] not in table.beats[(others[0], m)]
    with pytest.raises(ValueError, match=f"with the baseline '{others[0]}'"):
        table_from_records(res, records, res.systems, baseline=others[0])
    with pytest.raises(ValueError, match=r"parameter of significance_table must be one of "
                                         r"the runs \(bm25, "):
        significance_table(res, baseline="nope")
