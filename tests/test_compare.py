"""Core comparison logic behind the Compare page: verdicts, clipped intervals, query sets,
planning; small or degenerate samples get 'cannot tell' instead of a verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ireval_core import EvalOptions, Qrels, Run, evaluate
from ireval_core.compare import (
    MIN_QUERIES,
    compare_evaluation,
    comparison_table,
    difference_bounds,
    plan_next_round,
    query_set_note,
    verdicts,
)


def _data(n: int, *, same: bool = False, b_better: bool = True):
    qrels = Qrels.from_dict({f"q{i}": {"r": 1, "x": 0, "y": 0} for i in range(n)})
    a = Run.from_dict({f"q{i}": {"x": 3.0, "y": 2.0, "r": 1.0} for i in range(n)}, name="a")
    order = {"r": 3.0, "x": 2.0, "y": 1.0} if (b_better and not same) else {
        "x": 3.0, "y": 2.0, "r": 1.0}
    b = Run.from_dict({f"q{i}": dict(order) for i in range(n)}, name="b")
    return qrels, [a, b]


def _records(qrels, runs, measure="RR", tests=("t",), options=None):
    res = evaluate(qrels, runs, [measure], options=options)
    return res, compare_evaluation(res, [measure], tests=tests, n_resamples=200, seed=1)


def test_clear_difference_is_significant_and_told_from_the_winner() -> None:
    qrels, runs = _data(12)
    # vary one query so the t-test has a spread
    runs[1] = Run.from_dict({**runs[1].to_dict(), "q0": {"x": 3.0, "r": 2.0, "y": 1.0}},
                            name="b")
    _, records = _records(qrels, runs)
    [v] = verdicts(records, alpha=0.05)
    assert v.outcome == "significant" and v.significant
    assert v.text.startswith("b beats a on RR by +")
    assert "12 queries" in v.text


@pytest.mark.parametrize("n", [1, 2, MIN_QUERIES - 1])
def test_too_few_queries_cannot_tell(n: int) -> None:
    qrels, runs = _data(n)
    _, records = _records(qrels, runs, tests=("t", "randomization"))
    [v] = verdicts(records, alpha=0.05)
    assert v.outcome == "cannot tell" and not v.significant
    assert f"from {n} quer" in v.text and f"at least {MIN_QUERIES}" in v.text


def test_identical_runs_cannot_tell() -> None:
    qrels, runs = _data(20, same=True)
    _, records = _records(qrels, runs, tests=("t", "wilcoxon", "sign"))
    [v] = verdicts(records, alpha=0.05)
    assert v.outcome == "cannot tell"
    assert "same on every one of the 20 queries" in v.text


def test_intervals_are_clipped_to_the_measure_range() -> None:
    assert difference_bounds("nDCG@10") == (-1.0, 1.0)
    assert difference_bounds("DCG@10") == (-math.inf, math.inf)
    qrels, runs = _data(3)  # 3 queries, all differences 2/3: a t-interval of width 0
    runs[1] = Run.from_dict({"q0": {"r": 3.0, "x": 1.0, "y": 0.5},
                             "q1": {"x": 3.0, "r": 2.0, "y": 1.0},
                             "q2": {"x": 3.0, "y": 2.0, "r": 1.0}}, name="b")
    _, records = _records(qrels, runs)
    raw = records[0]
    assert raw.ci_low < -1.0 or raw.ci_high > 1.0  # what the t-interval gives on 3 queries
    ci = comparison_table(records)["95% CI"].iloc[0]
    low, high = (float(x) for x in ci.strip("[]").split(","))
    assert -1.0 <= low <= high <= 1.0


def test_query_set_note_when_runs_cover_different_queries() -> None:
    qrels, runs = _data(10)
    runs[0] = Run.from_dict({f"q{i}": {"x": 3.0, "r": 1.0} for i in range(6)}, name="a")
    res = evaluate(qrels, runs, ["RR"])
    note = query_set_note(res, "RR", ["a", "b"])
    assert note is not None and "over the 6 queries" in note and "a 6, b 10" in note
    assert query_set_note(evaluate(qrels, runs, ["RR"], options=EvalOptions(complete=True)),
                          "RR", ["a", "b"]) is None
    records = compare_evaluation(res, ["RR"])
    assert records[0].n == 6
    # the compared mean of b is over the 6 shared queries, not its own 10
    b_shared = float(np.mean(res.per_query("b", "RR").iloc[:6]))
    assert records[0].mean_b == pytest.approx(b_shared)


def test_planning_flags_a_detectable_difference_beyond_the_range() -> None:
    plan = plan_next_round(np.array([0.9, -0.8, 0.7]), 0.05, measure="nDCG@10")
    assert plan.n_queries == 3 and plan.min_detectable is not None
    assert plan.exceeds_range and plan.min_detectable > 2.0
    assert plan.note is not None and "nothing can be detected yet" in plan.note
    ok = plan_next_round(np.random.default_rng(0).normal(0.02, 0.1, 200), 0.01,
                         measure="nDCG@10")
    assert not ok.exceeds_range and ok.note is None and ok.queries_needed > 200
    flat = plan_next_round(np.zeros(10), 0.05, measure="AP")
    assert flat.min_detectable is None and flat.queries_needed is None
    assert "no spread" in (flat.note or "")
    with pytest.raises(ValueError, match="'delta' parameter of plan_next_round"):
        plan_next_round(np.zeros(3), 0.0, measure="AP")
