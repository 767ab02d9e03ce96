"""Splitting Metrics, Compare and Queries by a column of the query metadata (the sample's
metadata goes with the sample): the numbers are the core's per segment."""

from __future__ import annotations

import pytest
from _apps import SAMPLE, open_page

from ireval_app.keys import metrics as metrics_keys
from ireval_core import evaluate, read_qrels, read_runs
from ireval_core.metadata import by_segment, read_metadata

pytestmark = pytest.mark.skipif(not (SAMPLE / "query_metadata.csv").exists(),
                                reason="sample metadata not generated")


def test_metrics_split_by_segment_equals_the_core() -> None:
    at = open_page("metrics", timeout=60, split="segment", measures=["AP"])
    assert at.selectbox(key=metrics_keys.SPLIT).value == "segment"
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    expected = by_segment(evaluate(qrels, runs, ["AP"]),
                          read_metadata(SAMPLE / "query_metadata.csv"), "segment")
    shown = at.dataframe[0].value
    for row in expected.itertuples():
        assert shown.loc[row.segment, row.system] == pytest.approx(row.mean, rel=1e-12)


def test_weighted_split_says_so() -> None:
    at = open_page("metrics", timeout=60, split="segment", measures=["AP"], weighted="1")
    assert "weight" in " ".join(c.value for c in at.caption).lower()


def test_compare_repeats_the_test_per_segment() -> None:
    at = open_page("compare", timeout=60, split="segment", runs=["bm25", "neural_rerank"])
    text = " ".join(m.value for m in at.markdown).replace("\\", "")
    assert "segment = head: neural_rerank beats bm25 on nDCG@10" in text
    assert "segment = (no metadata)" in text and "cannot tell" in text


def test_queries_filter_by_segment() -> None:
    at = open_page("queries", timeout=60, segment_by="segment", segment="head")
    meta = read_metadata(SAMPLE / "query_metadata.csv")
    head = set(meta.queries[meta.segment("segment") == "head"])
    shown = set(at.dataframe[0].value["query"])
    assert shown and shown <= head
