"""One-query tables: rankings with grades, missed relevant documents, per-query differences."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ireval_core import EvalOptions, Qrels, Run, evaluate
from ireval_core.io import read_qrels, read_runs
from ireval_core.queries import (
    judgments,
    means_note,
    missed_relevant,
    query_differences,
    ranking,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"

QRELS = Qrels.from_dict({
    "q1": {"a": 2, "b": 0, "c": 1, "d": -1, "e": 3},
    "q2": {"z": 1},
})
RUN = Run.from_dict({
    "q1": {"a": 0.5, "b": 0.5, "x": 0.9, "d": 0.2, "B": 0.5},  # a, b, B tie
    "q3": {"a": 1.0},
}, name="r")


def test_ranking_is_in_trec_eval_order_with_grades() -> None:
    table = ranking(QRELS, RUN, "q1")
    assert list(table.columns) == ["rank", "docid", "score", "grade"]
    # score descending, ties by document id descending, byte-wise ("b" > "a" > "B")
    assert table["docid"].tolist() == ["x", "b", "a", "B", "d"]
    assert table["rank"].tolist() == [1, 2, 3, 4, 5]
    assert table["score"].tolist() == [0.9, 0.5, 0.5, 0.5, 0.2]
    np.testing.assert_array_equal(table["grade"], [np.nan, 0.0, 2.0, np.nan, -1.0])


def test_ranking_depth_and_absent_queries() -> None:
    assert ranking(QRELS, RUN, "q1", top=2)["docid"].tolist() == ["x", "b"]
    assert ranking(QRELS, RUN, "q1", top=50)["docid"].tolist() == ["x", "b", "a", "B", "d"]
    assert ranking(QRELS, RUN, "q2").empty  # judged, not in the run
    assert ranking(QRELS, RUN, "nope").empty
    assert ranking(QRELS, RUN, "q3")["grade"].isna().all()  # in the run, no qrels
    with pytest.raises(ValueError, match="'top' parameter"):
        ranking(QRELS, RUN, "q1", top=0)


def test_judgments_of_one_query() -> None:
    assert judgments(QRELS, "q1") == {"a": 2.0, "b": 0.0, "c": 1.0, "d": -1.0, "e": 3.0}
    assert judgments(QRELS, "q3") == {}


def test_missed_relevant() -> None:
    # relevant (grade >= 1): a, c, e; the run ranks a
    assert missed_relevant(QRELS, RUN, "q1").to_dict("list") == {
        "docid": ["e", "c"], "grade": [3.0, 1.0]}
    assert missed_relevant(QRELS, RUN, "q1", options=EvalOptions(rel_level=2))[
        "docid"].tolist() == ["e"]
    # a is ranked third: cut at depth 2 it is missed too
    assert missed_relevant(QRELS, RUN, "q1", options=EvalOptions(depth=2))["docid"].tolist() == [
        "e", "a", "c"]
    assert missed_relevant(QRELS, RUN, "q2")["docid"].tolist() == ["z"]
    assert missed_relevant(QRELS, RUN, "q3").empty


@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
def test_tables_agree_with_the_measures_on_the_sample() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    res = evaluate(qrels, runs, ["P@10", "R", "num_rel", "nDCG@10"])
    for run in runs:
        for query in res.query_ids[run.name][::7]:
            table = ranking(qrels, run, query)
            relevant = (table["grade"] >= 1).to_numpy()
            p10 = relevant[:10].sum() / 10
            assert p10 == pytest.approx(res.per_query(run.name, "P@10")[query], abs=1e-12)
            n_rel = res.per_query(run.name, "num_rel")[query]
            missed = missed_relevant(qrels, run, query)
            assert relevant.sum() + len(missed) == n_rel
            if n_rel:
                assert relevant.sum() / n_rel == pytest.approx(
                    res.per_query(run.name, "R")[query], abs=1e-12)
            gains = np.nan_to_num(table["grade"].to_numpy()[:10]).clip(min=0)
            dcg = (gains / np.log2(np.arange(2, len(gains) + 2))).sum()
            ideal = np.sort(np.array([g for g in judgments(qrels, query).values() if g > 0]))
            ideal = ideal[::-1][:10]
            idcg = (ideal / np.log2(np.arange(2, len(ideal) + 2))).sum()
            expected = dcg / idcg if idcg else 0.0
            assert expected == pytest.approx(res.per_query(run.name, "nDCG@10")[query],
                                             abs=1e-12)


def test_query_differences_sorted_and_paired() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1}, "q3": {"a": 1}})
    one = Run.from_dict({"q1": {"a": 1.0}, "q2": {"x": 1.0, "a": 0.5}, "q3": {"x": 1.0}},
                        name="one")
    two = Run.from_dict({"q1": {"x": 1.0, "a": 0.5}, "q2": {"a": 1.0}}, name="two")
    res = evaluate(qrels, [one, two], ["RR"])
    diffs = query_differences(res, "RR", "one", "two")
    # q3 is missing from "two": not compared
    expected = pd.DataFrame({"query": ["q1", "q2"], "a": [1.0, 0.5], "b": [0.5, 1.0],
                             "diff": [-0.5, 0.5]})
    pd.testing.assert_frame_equal(diffs, expected)


def test_means_note_says_which_queries_each_mean_averages():
    qrels = Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}})
    a = Run.from_dict({"q1": {"d1": 2.0}, "q2": {"x": 2.0, "d2": 1.0}, "q3": {"x": 1.0}}, name="a")
    b = Run.from_dict({"q1": {"x": 2.0, "d1": 1.0}, "q2": {"d2": 1.0}}, name="b")
    res = evaluate(qrels, [a, b], ["RR", "GMAP", "NumRelRet"])
    d = query_differences(res, "RR", "a", "b")  # q1, q2: a 1, 1/2; b 1/2, 1
    assert means_note(res, d, "RR", "a", "b") == (
        "Means over these 2 queries: a 0.7500, b 0.7500, B − A +0.0000. Each run's own RR "
        "(Metrics page; arithmetic mean over queries): a 0.5000 over 3 queries, b 0.7500 "
        "over 2 queries.")
    # not a mean: a mean of the listed values would not be the measure's number
    for m in ("GMAP", "NumRelRet"):
        note = means_note(res, query_differences(res, m, "a", "b"), m, "a", "b")
        assert note.startswith(f"Each run's own {m} (Metrics page; ")
        assert f"a {res.mean('a', m):.4f} over 3 queries" in note
