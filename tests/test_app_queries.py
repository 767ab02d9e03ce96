"""AppTest of the Queries page: the tables shown equal ``ireval_core.queries`` on the sample."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import queries as queries_keys
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs
from ireval_core.queries import grade_text, missed_relevant, query_differences, ranking

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def _sample():
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = {r.name: r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)}
    return qrels, runs


def _queries_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.switch_page("pages/queries.py").run()
    assert not at.exception
    return at


def _shown_ranking(at: AppTest, i: int):
    """The i-th ranking table shown (tables with a rank column; missed documents have none)."""
    return [d.value for d in at.dataframe if "rank" in d.value.columns][i]


def test_differences_and_worst_query_by_default() -> None:
    at = _queries_page()
    assert at.title[0].value == "Queries"
    qrels, runs = _sample()
    res = evaluate(qrels, list(runs.values()), ["nDCG@10"])
    expected = query_differences(res, "nDCG@10", "bm25", "narrow_recall")
    shown = at.dataframe[0].value
    assert shown["query"].tolist() == expected["query"].tolist()
    assert shown["diff"].tolist() == pytest.approx(expected["diff"].tolist(), abs=1e-12)
    worst = expected["query"].iloc[0]
    assert at.selectbox(key=queries_keys.QUERY).value == worst
    wins = int((expected["diff"] > 0).sum())
    losses = int((expected["diff"] < 0).sum())
    metric = next(m for m in at.metric if m.label.startswith("Queries where"))
    assert metric.value == f"{wins} / {len(expected) - wins - losses} / {losses}"

    # both rankings of the worst query, top 20, with grades and the rank in the other run
    for i, (name, other) in enumerate((("bm25", "narrow_recall"), ("narrow_recall", "bm25"))):
        table = _shown_ranking(at, i)
        core = ranking(qrels, runs[name], worst, top=20)
        assert table["docid"].tolist() == core["docid"].tolist()
        assert table["grade"].tolist() == [grade_text(g) for g in core["grade"]]
        theirs = dict(zip(ranking(qrels, runs[other], worst)["docid"],
                          ranking(qrels, runs[other], worst)["rank"], strict=True))
        assert table["other rank"].tolist() == [str(theirs[d]) if d in theirs else "–"
                                                for d in core["docid"]]
        n_missed = len(missed_relevant(qrels, runs[name], worst))
        assert any(f"{n_missed:,} relevant document(s) {name} does not rank" in e.label
                   for e in at.expander)


def test_other_query_measure_and_depth() -> None:
    at = _queries_page()
    qrels, runs = _sample()
    at.text_input(key=queries_keys.TYPED).set_value("P(rel=2)@5")  # not among the offered ones
    at.selectbox(key=queries_keys.RUN_B).set_value("neural_rerank")
    at.selectbox(key=queries_keys.SHOWN).set_value(10).run()
    assert not at.exception
    res = evaluate(qrels, list(runs.values()), ["P(rel=2)@5"])
    expected = query_differences(res, "P(rel=2)@5", "bm25", "neural_rerank")
    assert at.dataframe[0].value["query"].tolist() == expected["query"].tolist()
    last = expected["query"].iloc[-1]
    at.selectbox(key=queries_keys.QUERY).set_value(last).run()
    assert not at.exception
    assert at.subheader[-1].value == f"Query {last}"
    assert _shown_ranking(at, 1)["docid"].tolist() == ranking(
        qrels, runs["neural_rerank"], last, top=10)["docid"].tolist()


def test_one_run_against_itself_and_a_bad_measure() -> None:
    at = _queries_page()
    at.selectbox(key=queries_keys.RUN_B).set_value("bm25").run()
    assert not at.exception
    assert sum("rank" in d.value.columns for d in at.dataframe) == 1  # one ranking
    values = at.dataframe[0].value["a"].tolist()
    assert values == sorted(values)  # one run: its queries from the lowest value up
    first = at.dataframe[0].value["query"].iloc[0]
    assert at.selectbox(key=queries_keys.QUERY).options[0] == f"{first}   ({values[0]:.4f})"
    assert "other rank" not in _shown_ranking(at, 0).columns
    at.text_input(key=queries_keys.TYPED).set_value("nDCG@ten").run()
    assert not at.exception
    assert at.error and "nDCG@ten" in at.error[0].value


def test_depth_cut_of_the_evaluation_options() -> None:
    at = _queries_page()
    qrels, runs = _sample()
    cut = at.sidebar.number_input(key=state.OPTION_KEYS["depth"])
    assert cut.label.startswith("Depth cut")
    cut.set_value(5).run()
    assert not at.exception
    query = at.selectbox(key=queries_keys.QUERY).value
    cut5 = EvalOptions(depth=5)
    shown = _shown_ranking(at, 0)  # bm25 cut to its top 5, ranks in narrow_recall's top 5
    assert shown["docid"].tolist() == ranking(qrels, runs["bm25"], query,
                                              options=cut5)["docid"].tolist()
    theirs = ranking(qrels, runs["narrow_recall"], query, options=cut5)
    where = dict(zip(theirs["docid"], theirs["rank"], strict=True))
    assert shown["other rank"].tolist() == [str(where[d]) if d in where else "–"
                                            for d in shown["docid"]]
    n_missed = len(missed_relevant(qrels, runs["bm25"], query, options=cut5))
    assert any(f"{n_missed:,} relevant document(s) bm25 does not rank" in e.label
               for e in at.expander)
