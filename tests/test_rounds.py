"""ireval_core.rounds on hand-made qrels: counts, transitions, kappas, stability, to-label."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from ireval_core import EvalOptions, Qrels, Run, evaluate
from ireval_core.measures.pairwise import system_ranking_tau
from ireval_core.rounds import (
    PER_QUERY_COLUMNS,
    TO_LABEL_COLUMNS,
    UNJUDGED_LABEL,
    cohen_kappa,
    compare_qrels,
    coverage,
    ranking_stability,
    to_label,
)

OLD = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2, "d": 1, "e": -1},
                       "q2": {"x": 1, "y": 0}, "q3": {"z": 2}}, source="march")
NEW = Qrels.from_dict({"q1": {"a": 0, "b": 2, "c": 2, "d": 0, "e": 1, "f": 1},
                       "q2": {"x": 1}, "q4": {"w": 0}}, source="april")


def test_counts_and_queries() -> None:
    d = compare_qrels(OLD, NEW)
    assert (d.n_both, d.n_only_old, d.n_only_new, d.n_changed) == (6, 2, 2, 3)
    assert list(d.queries_only_old) == ["q3"]
    assert list(d.queries_only_new) == ["q4"]
    assert list(d.queries_both) == ["q1", "q2"]
    assert (d.old_source, d.new_source) == ("march", "april")
    assert d.changes.to_dict("list") == {"query": ["q1", "q1", "q1"], "docid": ["b", "d", "e"],
                                         "old": [1.0, 1.0, -1.0], "new": [2.0, 0.0, 1.0]}


def test_transition_table() -> None:
    t = compare_qrels(OLD, NEW).transitions
    labels = [UNJUDGED_LABEL, "0", "1", "2"]
    assert list(t.index) == labels and list(t.columns) == labels
    expected = pd.DataFrame([[0, 0, 1, 0],   # e: unjudged -> 1
                             [0, 1, 0, 0],   # a: 0 -> 0
                             [0, 1, 1, 1],   # d: 1 -> 0, x: 1 -> 1, b: 1 -> 2
                             [0, 0, 0, 1]],  # c: 2 -> 2
                            index=labels, columns=labels)
    np.testing.assert_array_equal(t.to_numpy(), expected.to_numpy())
    assert t.to_numpy().sum() == 6


def test_kappa_by_hand_and_sklearn() -> None:
    d = compare_qrels(OLD, NEW)
    # judged in both: a (0,0) b (1,2) c (2,2) d (1,0) x (1,1); e is unjudged in the old round
    assert d.n_kappa == 5
    # p_o = 3/5; marginals old (.2, .6, .2), new (.4, .2, .4): p_e = .28
    assert d.kappa == pytest.approx((0.6 - 0.28) / (1 - 0.28))
    assert d.kappa == pytest.approx(4 / 9)
    # linear: Σ w o = 2/5, Σ w e = .88
    assert d.weighted_kappa == pytest.approx(1 - 0.4 / 0.88)
    old, new = [0, 1, 2, 1, 1], [0, 2, 2, 0, 1]
    assert d.kappa == pytest.approx(cohen_kappa_score(old, new))
    assert d.weighted_kappa == pytest.approx(cohen_kappa_score(old, new, weights="linear"))


@pytest.mark.parametrize("weights", [None, "linear"])
def test_kappa_matches_sklearn_random(weights: str | None) -> None:
    rng = np.random.default_rng(7)
    a = rng.choice([0, 1, 3, 4], size=500)  # non-contiguous scale: positions, not values
    b = np.where(rng.random(500) < 0.6, a, rng.choice([0, 1, 3, 4], size=500))
    assert cohen_kappa(a, b, weights=weights) == pytest.approx(
        cohen_kappa_score(a, b, weights=weights))


def test_kappa_undefined_cases() -> None:
    assert np.isnan(cohen_kappa(np.array([]), np.array([])))
    assert np.isnan(cohen_kappa(np.array([1, 1]), np.array([1, 1])))  # p_e = 1
    with pytest.raises(ValueError, match="'weights' parameter"):
        cohen_kappa(np.array([1]), np.array([1]), weights="cubic")


def test_per_query_summary() -> None:
    pq = compare_qrels(OLD, NEW).per_query
    assert tuple(pq.columns) == PER_QUERY_COLUMNS
    rows = pq.set_index("query").to_dict("index")
    assert rows["q1"] == dict(judged_old=4, judged_new=6, added=1, removed=0, changed=3,
                              relevant_old=3, relevant_new=4)
    assert rows["q2"] == dict(judged_old=2, judged_new=1, added=0, removed=1, changed=0,
                              relevant_old=1, relevant_new=1)
    assert rows["q3"] == dict(judged_old=1, judged_new=0, added=0, removed=1, changed=0,
                              relevant_old=1, relevant_new=0)
    assert rows["q4"] == dict(judged_old=0, judged_new=1, added=1, removed=0, changed=0,
                              relevant_old=0, relevant_new=0)
    pq2 = compare_qrels(OLD, NEW, options=EvalOptions(rel_level=2)).per_query.set_index("query")
    assert pq2.loc["q1", ["relevant_old", "relevant_new"]].tolist() == [1, 2]


def test_identical_rounds() -> None:
    d = compare_qrels(OLD, OLD)
    assert (d.n_both, d.n_only_old, d.n_only_new, d.n_changed) == (len(OLD), 0, 0, 0)
    assert d.kappa == pytest.approx(1.0) and d.weighted_kappa == pytest.approx(1.0)
    assert np.trace(d.transitions.to_numpy()) == len(OLD)


RUNS = [Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, name="x"),
        Run.from_dict({"q1": {"b": 3.0, "c": 2.0, "a": 1.0}}, name="y"),
        Run.from_dict({"q1": {"c": 3.0, "a": 2.0, "b": 1.0}}, name="z")]


def test_ranking_stability_by_hand() -> None:
    old = Qrels.from_dict({"q1": {"a": 1, "b": 0, "c": 0}})
    new = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 0}})
    s = ranking_stability(old, new, RUNS, "RR")
    t = s.table.set_index("system")
    # RR old: x 1, y 1/3, z 1/2; new: x 1/2, y 1, z 1/3
    assert t["mean_old"].tolist() == pytest.approx([1, 1 / 3, 1 / 2])
    assert t["mean_new"].tolist() == pytest.approx([1 / 2, 1, 1 / 3])
    assert t["delta"].tolist() == pytest.approx([-1 / 2, 2 / 3, -1 / 6])
    assert t["rank_old"].tolist() == [1, 3, 2]
    assert t["rank_new"].tolist() == [2, 1, 3]
    assert t["rank_change"].tolist() == [-1, 2, -1]
    # pairs: (x, y) reversed, (x, z) kept, (y, z) reversed -> (1 - 2) / 3
    assert s.tau == pytest.approx(-1 / 3)
    assert s.tau == system_ranking_tau(t["mean_old"].to_dict(), t["mean_new"].to_dict())
    assert s.measure == "RR" and "rank" in s.definition


def test_ranking_stability_passes_options() -> None:
    options = EvalOptions(rel_level=2)
    s = ranking_stability(OLD, NEW, RUNS, "P@2", options=options)
    res = evaluate(NEW, RUNS, ["P@2"], options=options)
    assert s.table.set_index("system")["mean_new"].to_dict() == pytest.approx(
        {r.name: res.mean(r.name, "P@2") for r in RUNS})


def test_coverage_and_to_label() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 1, "b": -1}, "q2": {"m": 0}})
    runs = [Run.from_dict({"q1": {"a": 4.0, "b": 3.0, "c": 2.0, "d": 1.0},
                           "q2": {"m": 2.0, "n": 1.0}, "q9": {"zz": 1.0}}, name="x"),
            Run.from_dict({"q1": {"c": 4.0, "e": 3.0, "a": 2.0}}, name="y")]
    cov = coverage(qrels, runs, k=2).set_index("run")
    # x: q1 top 2 = a (judged), b (pooled) -> 1/2; q2 = m, n -> 1/2; q9 has no qrels
    assert cov.loc["x", "Judged@2"] == pytest.approx(0.5)
    assert cov.loc["x", "top-2 documents"] == 4
    assert cov.loc["x", "unjudged in top 2"] == 2
    # y: q1 top 2 = c, e -> 0
    assert cov.loc["y", "Judged@2"] == pytest.approx(0.0)
    assert cov.loc["y", "unjudged in top 2"] == 2
    todo = to_label(qrels, runs, k=2)
    assert tuple(todo.columns) == TO_LABEL_COLUMNS
    assert todo[["query", "docid", "runs", "best_rank"]].to_dict("records") == [
        {"query": "q1", "docid": "c", "runs": 1, "best_rank": 1},
        {"query": "q1", "docid": "b", "runs": 1, "best_rank": 2},
        {"query": "q1", "docid": "e", "runs": 1, "best_rank": 2},
        {"query": "q2", "docid": "n", "runs": 1, "best_rank": 2},
    ]
    assert todo.set_index("docid").loc["b", "grade"] == -1
    assert np.isnan(todo.set_index("docid").loc["c", "grade"])
    assert todo.set_index("docid")["status"].to_dict() == {
        "c": "unjudged", "b": UNJUDGED_LABEL, "e": "unjudged", "n": "unjudged"}
    # k = 3: c is in both runs' top 3 (x rank 3, y rank 1)
    c = to_label(qrels, runs, k=3).set_index("docid").loc["c"]
    assert (c["runs"], c["best_rank"]) == (2, 1)
    with pytest.raises(ValueError, match="'k' parameter of to_label"):
        to_label(qrels, runs, k=0)


def test_to_label_without_runs() -> None:
    assert to_label(OLD, [], k=5).empty
    assert coverage(OLD, [], k=5).empty
