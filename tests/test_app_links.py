"""Deep links: a page's selections and the options live in the URL; opening the URL in a
new session restores the view; leaving a page and coming back keeps its selections."""

from __future__ import annotations

import pytest
from _apps import APP, NEEDS_SAMPLE, open_page
from streamlit.testing.v1 import AppTest

from ireval_app import views
from ireval_app.keys import compare as compare_keys
from ireval_app.keys import efficiency as efficiency_keys
from ireval_app.keys import metrics as metrics_keys
from ireval_app.keys import ndcg_vs_dcg as ndcg_vs_dcg_keys
from ireval_app.keys import queries as queries_keys

pytestmark = NEEDS_SAMPLE


def test_queries_link_restores_measure_runs_query_and_options() -> None:
    at = open_page("queries", timeout=60, measure="AP", a="neural_rerank", b="bm25",
                   query="q017", rel="2")
    assert at.selectbox(key=queries_keys.MEASURE).value == "AP"
    assert at.selectbox(key=queries_keys.RUN_A).value == "neural_rerank"
    assert at.selectbox(key=queries_keys.RUN_B).value == "bm25"
    assert at.selectbox(key=queries_keys.QUERY).value == "q017"
    assert at.session_state["ireval.options"].rel_level == 2.0
    assert dict(at.query_params) == {"measure": "AP", "a": "neural_rerank", "b": "bm25",
                                     "query": "q017", "rel": "2"}


def test_compare_link_restores_runs_and_baseline() -> None:
    at = open_page("compare", timeout=60, runs=["bm25", "neural_rerank"],
                   pairs="against a baseline", baseline="neural_rerank", measures=["AP", "P@10"])
    assert at.multiselect(key=compare_keys.SYSTEMS).value == ["bm25", "neural_rerank"]
    assert at.selectbox(key=compare_keys.BASELINE).value == "neural_rerank"
    assert at.multiselect(key=compare_keys.MEASURES).value == ["AP", "P@10"]
    table = at.dataframe[0].value
    assert set(table["system_a"]) == {"neural_rerank"} and set(table["measure"]) == {"AP", "P@10"}


def test_unknown_values_in_a_link_fall_back_to_defaults() -> None:
    at = open_page("queries", timeout=60, a="no_such_run", query="q999", measure="nope")
    assert at.selectbox(key=queries_keys.RUN_A).value == "bm25"
    assert at.selectbox(key=queries_keys.MEASURE).value == "nDCG@10"
    assert "a" not in at.query_params and "measure" not in at.query_params


def test_selections_survive_page_switches_and_follow_in_the_url() -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.switch_page("pages/queries.py").run()
    at.selectbox(key=queries_keys.RUN_A).set_value("narrow_recall").run()
    at.selectbox(key=queries_keys.MEASURE).set_value("RR").run()
    assert at.query_params["a"] == "narrow_recall" and at.query_params["measure"] == "RR"
    at.switch_page("pages/metrics.py").run()
    assert "a" not in at.query_params  # another page: its own parameters only
    at.switch_page("pages/queries.py").run()
    assert at.selectbox(key=queries_keys.RUN_A).value == "narrow_recall"
    assert at.selectbox(key=queries_keys.MEASURE).value == "RR"
    assert at.query_params["a"] == "narrow_recall"


def test_metrics_and_ndcg_links() -> None:
    at = open_page("metrics", timeout=60, measures=["AP", "RR"])
    assert list(at.table[0].value.columns) == ["AP", "RR"]
    at = open_page("ndcg_vs_dcg", timeout=60, k="20", recall_k="1000")
    assert at.selectbox(key=ndcg_vs_dcg_keys.K).value == 20
    assert "DCG@20" in at.dataframe[0].value.columns and "R@1000" in at.dataframe[0].value.columns


@pytest.mark.parametrize(("url", "base", "page", "pairs", "expected"), [
    # the address Streamlit reported after the menu's move from /labels_data to Trend
    ("http://h:8501/labels_/labels_trend", "", "labels_trend", [("k", "10")],
     "http://h:8501/labels_trend?k=10"),
    ("http://h:8501/metrics", "", "data", [], "http://h:8501/"),
    ("https://x.org/ireval/metrics", "/ireval/", "data", [], "https://x.org/ireval/"),
    ("https://x.org/ireval/", "ireval", "compare", [("a", "bm25")],
     "https://x.org/ireval/compare?a=bm25"),
    ("http://h/", "", "metrics", [("run", "a b"), ("run", "c&d")],
     "http://h/metrics?run=a+b&run=c%26d"),
    ("http://h/some/path", "", None, [], "http://h/some/path"),
    (None, "", "metrics", [], None),
])
def test_the_link_is_built_from_the_page_being_run(url, base, page, pairs, expected):
    assert views.link_for(url, base, page, pairs) == expected


def test_compare_link_restores_pair_tests_and_measure_and_refuses_a_bad_pair() -> None:
    label = "neural_rerank − narrow_recall on AP"
    at = open_page("compare", measures=["nDCG@10", "AP"], tests=["t", "sign"],
                   alternative="greater", correction="bh", alpha="0.1", resamples="500",
                   seed="7", report_test="sign", pair=label, delta="0.05")
    assert at.selectbox(key=compare_keys.PAIR).value == label
    assert at.multiselect(key=compare_keys.TESTS).value == ["t", "sign"]
    assert at.selectbox(key=compare_keys.ALTERNATIVE).value == "greater"
    assert at.selectbox(key=compare_keys.CORRECTION).value == "bh"
    assert at.selectbox(key=compare_keys.ALPHA).value == 0.1
    assert at.number_input(key=compare_keys.RESAMPLES).value == 500
    assert at.number_input(key=compare_keys.SEED).value == 7
    assert at.selectbox(key=compare_keys.REPORT_TEST).value == "sign"
    assert at.number_input(key=compare_keys.DELTA).value == 0.05
    assert "Deciding: neural_rerank against narrow_recall on AP" in [
        h.value.replace("\\", "") for h in at.subheader]
    assert at.query_params["pair"] == label and at.query_params["tests"] == ["t", "sign"]
    # values that cannot be applied: the defaults, and a note says so
    at = open_page("compare", pair="bm25 − nobody on AP", tests=["t", "anova"], seed="-1")
    notes = [w.value for w in at.warning]
    assert "Not applied: pair=bm25 − nobody on AP (no such pair here)" in notes
    assert any(n.startswith("Not applied: tests=anova") for n in notes), notes
    assert any(n.startswith("Not applied: seed=-1") for n in notes), notes
    assert at.selectbox(key=compare_keys.PAIR).value == at.selectbox(
        key=compare_keys.PAIR).options[0]
    assert at.multiselect(key=compare_keys.TESTS).value == ["t"]
    assert at.number_input(key=compare_keys.SEED).value == 0


def test_metrics_link_restores_typed_measures() -> None:
    at = open_page("metrics", measures=["AP"], more="IPrec@0.6; 11pt", distribution="AP")
    assert at.text_input(key=metrics_keys.EXTRA).value == "IPrec@0.6; 11pt"
    columns = list(at.table[0].value.columns)
    assert columns[0] == "AP" and len(columns) == 3, columns
    assert at.selectbox(key=metrics_keys.DISTRIBUTION).value == "AP"
    assert at.query_params["more"] == "IPrec@0.6; 11pt"


def test_choices_kept_beside_the_keys_equal_the_cores() -> None:
    """The keys modules spell some choices out (importing their package loads scipy)."""
    from ireval_core.metadata import LATENCY_STATISTICS
    from ireval_core.stats import ALTERNATIVES, CORRECTIONS, TESTS

    assert compare_keys.TEST_CHOICES == tuple(TESTS)
    assert compare_keys.ALTERNATIVE_CHOICES == tuple(ALTERNATIVES)
    assert compare_keys.CORRECTION_CHOICES == tuple(CORRECTIONS)
    assert efficiency_keys.LATENCIES == tuple(LATENCY_STATISTICS)
