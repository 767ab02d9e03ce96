"""Core views the pages lay out: curves per run under the options (and why one is empty),
one query's ranking as the measures see it, run names kept distinct with a warning."""

from __future__ import annotations

import numpy as np

from ireval_core import EvalOptions, Qrels, Run, evaluate
from ireval_core.curves import (
    interpolated_pr,
    pooled_auc,
    pooled_prevalence,
    pr_points,
    run_curves,
)
from ireval_core.data import join
from ireval_core.io import read_runs
from ireval_core.queries import (
    grade_text,
    judged_counts,
    missed_relevant,
    query_differences,
    ranking,
    side_by_side,
    wins_ties_losses,
)
from ireval_core.rounds import to_label

QRELS = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": 1, "d": -1}, "q2": {"z": 1, "y": 0}})
RUN = Run.from_dict({"q1": {"x": 0.9, "a": 0.8, "b": 0.7, "c": 0.1},
                     "q2": {"y": 0.5, "z": 0.4}}, name="r")
OTHER = Run.from_dict({"q1": {"c": 0.9, "x": 0.8}}, name="o")


def test_run_curves_equal_the_low_level_functions() -> None:
    for options in (EvalOptions(), EvalOptions(rel_level=2, depth=3)):
        c = run_curves(QRELS, RUN, options=options)
        r = join(QRELS, RUN, options=options)
        np.testing.assert_array_equal(c.interpolated_precision,
                                      interpolated_pr(r, rel_level=options.rel_level)["precision"])
        assert c.auc == pooled_auc(r, rel_level=options.rel_level)
        pts = pr_points(r, rel_level=options.rel_level)
        q1 = c.query_points("q1")
        np.testing.assert_array_equal(q1["recall"], pts[pts["query"] == "q1"]["recall"])
        assert c.query_points("nope").empty
        assert not c.interpolated_precision.flags.writeable
    assert pooled_prevalence({"r": run_curves(QRELS, RUN)}) == run_curves(QRELS, RUN).prevalence


def test_empty_curves_say_why() -> None:
    assert run_curves(QRELS, RUN).roc_problem() is None
    everything = run_curves(QRELS, RUN, options=EvalOptions(rel_level=0))
    assert "no judged non-relevant" in str(everything.roc_problem())
    nothing = run_curves(QRELS, RUN, options=EvalOptions(rel_level=5))
    assert "no relevant class" in str(nothing.roc_problem())
    assert "recall is undefined" in str(nothing.pr_problem())
    unjudged = run_curves(QRELS, Run.from_dict({"q1": {"u": 1.0}}, name="u"))
    assert unjudged.roc_problem() == "no retrieved document is judged"


def test_judged_only_applies_to_curves_as_to_measures() -> None:
    opts = EvalOptions(judged_only=True)
    c = run_curves(QRELS, RUN, options=opts)
    # x is unjudged: removed, a moves to rank 1 of q1
    assert c.query_points("q1")["rank"].tolist() == [1, 2, 3]
    res = evaluate(QRELS, RUN, ["P@1"], options=opts)
    assert res.per_query("r", "P@1")["q1"] == 1.0


def test_ranking_is_what_the_measures_see() -> None:
    assert ranking(QRELS, RUN, "q1")["docid"].tolist() == ["x", "a", "b", "c"]
    assert ranking(QRELS, RUN, "q1", options=EvalOptions(depth=2))["docid"].tolist() == [
        "x", "a"]
    condensed = ranking(QRELS, RUN, "q1", options=EvalOptions(judged_only=True))
    assert condensed["docid"].tolist() == ["a", "b", "c"]
    assert condensed["rank"].tolist() == [1, 2, 3]
    assert ranking(QRELS, RUN, "q1", top=1)["docid"].tolist() == ["x"]


def test_side_by_side_and_missed_under_the_same_options() -> None:
    table = side_by_side(QRELS, RUN, OTHER, "q1")
    assert table["other rank"].tolist()[:1] == [2] and table["other rank"].isna().sum() == 2
    cut = side_by_side(QRELS, RUN, OTHER, "q1", options=EvalOptions(depth=1))
    assert cut["docid"].tolist() == ["x"] and cut["other rank"].isna().all()  # o: c only
    assert missed_relevant(QRELS, RUN, "q1").empty
    assert missed_relevant(QRELS, RUN, "q1", options=EvalOptions(depth=2))["docid"].tolist() == [
        "c"]
    assert missed_relevant(QRELS, RUN, "q1", options=EvalOptions(rel_level=2, depth=1))[
        "docid"].tolist() == ["a"]
    assert judged_counts(QRELS, "q1") == (2, 3)
    assert judged_counts(QRELS, "q1", options=EvalOptions(rel_level=2)) == (1, 3)


def test_grade_text_never_says_none() -> None:
    assert [grade_text(g) for g in (3.0, 0.0, float("nan"), -1.0)] == [
        "3", "0", "unjudged", "pooled, unjudged"]


def test_differences_and_win_tie_loss() -> None:
    res = evaluate(QRELS, [RUN, OTHER.renamed("o")], ["P@1"])
    diffs = query_differences(res, "P@1", "r", "o")
    assert diffs["query"].tolist() == ["q1"]
    assert wins_ties_losses(diffs) == (1, 0, 0)
    single = query_differences(res, "P@1", "r", "r")
    assert single["a"].tolist() == sorted(single["a"].tolist())


def test_to_label_status_is_words() -> None:
    todo = to_label(QRELS, [RUN], k=4)
    assert dict(zip(todo["docid"], todo["status"], strict=True)) == {
        "x": "unjudged", "d": "pooled, unjudged"} or set(todo["status"]) <= {
        "unjudged", "pooled, unjudged"}
    assert "None" not in todo["status"].astype(str).tolist()


def test_same_tag_in_two_files_is_renamed_with_a_warning() -> None:
    text = b"q1 Q0 a 1 2.0 bm25\nq1 Q0 b 2 1.0 bm25\n"
    first = read_runs(text, name="mine.run")
    second = read_runs(text, name="theirs.run",
                       taken_names={r.name: r.source for r in first})
    assert [r.name for r in second] == ["theirs:bm25"]
    [w] = [w for w in second[0].warnings if w.code == "run-renamed"]
    assert w.source == "theirs.run" and "mine.run" in w.message and "theirs:bm25" in w.message
    assert not [w for w in first[0].warnings if w.code == "run-renamed"]
