"""The same number on every page: values asserted across page visits, in several orders.

Issue 8's failure was a number that changed silently between pages while every page
still rendered. These tests read the numbers each page shows and compare them with
``ireval_core`` under the options the session holds, visit after visit; they change
an option on one page and check that every other page uses it; they reload (a new
session with the URL's query parameters) and check that the options come back.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.widgets import md_escape
from ireval_core import EvalOptions, evaluate
from ireval_core.compare import aligned_scores
from ireval_core.curves import run_curves
from ireval_core.io import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")

ORDERS = [
    ("data", "metrics", "compare", "metrics", "curves"),  # the order of issue 8
    ("compare", "queries", "ndcg_vs_dcg", "curves", "metrics", "rounds", "data", "metrics"),
    ("curves", "rounds", "metrics", "queries", "compare", "ndcg_vs_dcg"),
]


def _sample():
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return qrels, runs


def _leading(cell: str) -> float:
    match = re.match(r"\s*(-?\d+\.\d+)", cell)
    assert match, cell
    return float(match[1])


def _expected(options: EvalOptions) -> dict[str, object]:
    """What every page must show under ``options``, from the core alone."""
    qrels, runs = _sample()
    res = evaluate(qrels, runs, ["P@10", "nDCG@10", "AP", "R@100", "DCG@10"], options=options)
    common, aligned = aligned_scores(res, "nDCG@10", [r.name for r in runs])
    _, pair = aligned_scores(res, "nDCG@10", ["bm25", "narrow_recall"])
    return {
        "res": res,
        "compare_bm25": float(np.mean(aligned["bm25"])),
        "n_common": len(common),
        "queries_bm25": pair["bm25"],
        "auc": {r.name: run_curves(qrels, r, options=options).auc for r in runs},
    }


def _check_page(at: AppTest, page: str, options: EvalOptions, exp: dict[str, object]) -> None:
    """Assert the numbers ``page`` shows are the core's under ``options``."""
    assert not at.exception, at.exception
    # the option widgets show the session's options on every page
    shown = {w.key: w.value for w in at.sidebar if getattr(w, "key", None)
             in state.OPTION_KEYS.values()}
    assert shown[state.OPTION_KEYS["rel_level"]] == options.rel_level
    assert shown[state.OPTION_KEYS["depth"]] == (options.depth or 0)
    assert shown[state.OPTION_KEYS["complete"]] == options.complete
    assert at.session_state[state.OPTION_KEYS["rel_level"]] == options.rel_level
    res = exp["res"]
    captions = " ".join(c.value for c in at.caption)
    if page != "data":
        # the options line (escaped for Markdown, as the page writes it)
        assert md_escape(options.summary()) in captions
        assert any("Sample data" in i.value for i in at.info)  # labelled as the sample
    if page == "metrics":
        table = at.table[0].value
        for system in res.systems:  # type: ignore[attr-defined]
            for m in ("P@10", "nDCG@10", "AP", "R@100"):
                assert _leading(table.loc[system, m]) == pytest.approx(
                    res.mean(system, m), abs=5e-5), (system, m)  # type: ignore[attr-defined]
    elif page == "compare":
        frame = at.dataframe[0].value
        row = frame[(frame["system_a"] == "bm25") & (frame["test"] == "t")].iloc[0]
        assert row["mean_a"] == pytest.approx(exp["compare_bm25"], rel=1e-12)
        assert row["n"] == exp["n_common"]
    elif page == "curves":
        frame = at.dataframe[0].value.set_index("run")
        for name, auc in exp["auc"].items():  # type: ignore[attr-defined]
            if np.isnan(auc):
                assert np.isnan(frame.loc[name, "pooled AUC"])
            else:
                assert frame.loc[name, "pooled AUC"] == pytest.approx(auc, rel=1e-12)
    elif page == "queries":
        frame = at.dataframe[0].value
        assert sorted(frame["a"]) == pytest.approx(sorted(exp["queries_bm25"]), rel=1e-12)
    elif page == "ndcg_vs_dcg":
        frame = at.dataframe[0].value
        assert frame.loc["bm25", "nDCG@10"] == pytest.approx(res.mean("bm25", "nDCG@10"))
        assert frame.loc["bm25", "DCG@10"] == pytest.approx(res.mean("bm25", "DCG@10"))
    elif page == "data":
        label = f"Relevant (grade ≥ {options.rel_level:g})"
        assert any(m.label == label for m in at.metric), [m.label for m in at.metric]


def _visit(at: AppTest, page: str) -> AppTest:
    at.switch_page(f"pages/{page}.py").run()
    return at


@pytest.mark.parametrize("order", ORDERS, ids=["-".join(o) for o in ORDERS])
def test_default_numbers_are_the_same_on_every_visit(order: tuple[str, ...]) -> None:
    options = EvalOptions()
    exp = _expected(options)
    at = AppTest.from_file(APP, default_timeout=60).run()
    for page in order:
        _check_page(_visit(at, page), page, options, exp)
    # the number issue 8 watched: bm25 P@10 at grade >= 1
    _visit(at, "metrics")
    assert at.table[0].value.loc["bm25", "P@10"].startswith("0.4746")
    assert dict(at.query_params) == {}  # default options: a clean URL


def test_an_option_changed_on_one_page_holds_on_every_page() -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    _visit(at, "compare")
    at.number_input(key=state.OPTION_KEYS["rel_level"]).set_value(2.0).run()
    at.number_input(key=state.OPTION_KEYS["depth"]).set_value(100).run()
    options = EvalOptions(rel_level=2, depth=100)
    assert at.session_state["ireval.options"] == options
    exp = _expected(options)
    for page in ("compare", "metrics", "curves", "queries", "ndcg_vs_dcg", "data", "rounds",
                 "metrics"):
        _check_page(_visit(at, page), page, options, exp)
    assert dict(at.query_params) == {"rel": "2", "depth": "100"}


def test_a_reload_restores_the_options_from_the_url() -> None:
    options = EvalOptions(complete=True, rel_level=2, judged_only=True)
    exp = _expected(options)
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in options.to_query_params().items():
        at.query_params[key] = value
    at.run()
    for page in ("metrics", "curves", "compare", "metrics"):
        _check_page(_visit(at, page), page, options, exp)
    assert dict(at.query_params) == options.to_query_params()


def test_a_broken_link_keeps_the_default_and_says_so() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["rel"] = "high"
    at.run()
    _visit(at, "metrics")
    _check_page(at, "metrics", EvalOptions(), _expected(EvalOptions()))
    assert any("rel='high'" in w.value for w in at.sidebar.warning)


def test_zero_relevance_level_explains_the_empty_roc() -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    _visit(at, "curves")
    at.number_input(key=state.OPTION_KEYS["rel_level"]).set_value(0.0).run()
    assert not at.exception
    text = " ".join(i.value for i in at.info).replace("\\", "")  # Markdown escapes
    assert "No ROC curve can be drawn" in text and "no judged non-relevant" in text
