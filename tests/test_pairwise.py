"""AUC, GAUC, PNR and Kendall's tau against sklearn, scipy and slow reference code."""

from __future__ import annotations

import math

import numpy as np
import pytest
from _random_runs import Nested, random_queries, random_scores, ranking
from scipy.stats import kendalltau
from sklearn.metrics import roc_auc_score

from ireval_core import Qrels, Run, evaluate
from ireval_core.measures.pairwise import kendall_tau, kendall_tau_runs, system_ranking_tau


def random_data(seed: int, n_queries: int = 40) -> tuple[Nested, Nested]:
    """Qrels and a run with score ties, unjudged and pooled-unjudged documents.

    Grades are in {-1, 0, 1, 2, 3}; some queries have a single class, some no
    judged retrieved document at all.
    """
    rng = np.random.default_rng(seed)
    qrels: Nested = {}
    run: Nested = {}
    for i, qid, docs, grades in random_queries(rng, n_queries):
        n_docs = len(docs)
        if i % 7 == 0:
            grades = np.zeros(n_docs, dtype=int)  # one class only
        judged = rng.random(n_docs) < 0.75
        qrels[qid] = {d: float(g) for d, g, j in zip(docs, grades, judged, strict=True) if j}
        qrels[qid][f"u{i}"] = 1.0  # a relevant document nobody retrieves
        retrieved = rng.random(n_docs) < 0.9
        run[qid] = random_scores(rng, docs, retrieved)
    run["extra"] = {"d001": 1.0}  # a run query without qrels (ignored)
    return qrels, run


def judged_pairs(qrels: Nested, run: Nested, qid: str, k: int | None = None
                 ) -> tuple[list[float], list[float]]:
    """(grades, scores) of the judged retrieved documents of one query (top k)."""
    docs = ranking(run[qid])[:k]
    g = qrels[qid]
    keep = [d for d in docs if d in g and g[d] >= 0]
    return [g[d] for d in keep], [run[qid][d] for d in keep]


def ref_auc(grades: list[float], scores: list[float], t: float = 1.0) -> float:
    y = np.asarray(grades) >= t
    if y.all() or not y.any():
        return math.nan
    return float(roc_auc_score(y, scores))


def ref_pnr_counts(grades: list[float], scores: list[float]) -> tuple[int, int]:
    conc = disc = 0
    for i in range(len(grades)):
        for j in range(len(grades)):
            if grades[i] > grades[j] and scores[i] != scores[j]:
                if scores[i] > scores[j]:
                    conc += 1
                else:
                    disc += 1
    return conc, disc


def ratio(c: float, d: float) -> float:
    if d:
        return c / d
    return math.inf if c else math.nan


@pytest.fixture(scope="module", params=[0, 1, 2])
def data(request: pytest.FixtureRequest) -> tuple[Nested, Nested]:
    return random_data(request.param)


def common_queries(qrels: Nested, run: Nested) -> list[str]:
    return sorted(set(qrels) & set(run))


@pytest.mark.parametrize("spec, t, k", [("AUC", 1.0, None), ("AUC(rel=2)", 2.0, None),
                                        ("AUC@5", 1.0, 5)])
def test_auc_matches_sklearn_per_query(data: tuple[Nested, Nested], spec: str, t: float,
                                       k: int | None) -> None:
    qrels, run = data
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"), [spec])
    got = res.per_query("s", spec)
    want = {q: ref_auc(*judged_pairs(qrels, run, q, k), t=t) for q in common_queries(qrels, run)}
    assert list(got.index) == sorted(want)
    np.testing.assert_allclose(got.to_numpy(), [want[q] for q in got.index], rtol=0,
                               atol=1e-12)
    assert np.isnan(got.to_numpy()).any() and not np.isnan(got.to_numpy()).all()
    assert res.mean("s", spec) == pytest.approx(np.nanmean(list(want.values())), abs=1e-12)


def test_gauc_both_weightings(data: tuple[Nested, Nested]) -> None:
    qrels, run = data
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"),
                   ["GAUC", "GAUC(weight=impressions)", "GAUC(weight=clicks)", "AUC"])
    num = den = clicks_num = clicks_den = 0.0
    plain = []
    for q in common_queries(qrels, run):
        grades, scores = judged_pairs(qrels, run, q)
        a = ref_auc(grades, scores)
        if not math.isnan(a):
            plain.append(a)
            num += len(grades) * a
            den += len(grades)
            clicks = sum(g >= 1 for g in grades)  # relevant judged retrieved documents
            clicks_num += clicks * a
            clicks_den += clicks
    assert res.mean("s", "GAUC") == pytest.approx(sum(plain) / len(plain), abs=1e-12)
    assert res.mean("s", "GAUC(weight=impressions)") == pytest.approx(num / den, abs=1e-12)
    assert res.mean("s", "GAUC(weight=clicks)") == pytest.approx(clicks_num / clicks_den,
                                                                 abs=1e-12)
    assert res.mean("s", "AUC") == pytest.approx(res.mean("s", "GAUC"), abs=1e-15)
    np.testing.assert_array_equal(res.per_query("s", "GAUC").to_numpy(),
                                  res.per_query("s", "AUC").to_numpy())
    assert "weighted by impressions" in res.definition("GAUC(weight=impressions)")


@pytest.mark.parametrize("k", [None, 7])
def test_pnr_matches_quadratic_reference(data: tuple[Nested, Nested], k: int | None) -> None:
    qrels, run = data
    spec = "PNR" if k is None else f"PNR@{k}"
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"), [spec])
    got = res.per_query("s", spec)
    total_c = total_d = 0
    want = []
    for q in got.index:
        c, d = ref_pnr_counts(*judged_pairs(qrels, run, q, k))
        total_c += c
        total_d += d
        want.append(ratio(c, d))
    np.testing.assert_allclose(got.to_numpy(), want, rtol=1e-13)
    assert res.mean("s", spec) == pytest.approx(total_c / total_d, rel=1e-13)


def test_hand_example_with_unjudged_and_ties() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2, "d4": -1},
                             "q2": {"a": 0, "b": 1}, "q3": {"x": 2, "y": 1}})
    run = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1, "d4": 0.5, "d5": 0.3},
                         "q2": {"a": 1.0, "b": 1.0}, "q3": {"x": 2.0, "y": 1.0}}, name="s")
    res = evaluate(qrels, run, ["AUC", "GAUC(weight=impressions)", "PNR"])
    # q1 judged: d1 (1, .9), d2 (0, .8), d3 (2, .1); d4 pooled-unjudged, d5 unjudged
    np.testing.assert_array_equal(res.per_query("s", "AUC").to_numpy(), [0.5, 0.5, np.nan])
    # q1: (d1 > d2) concordant, d3 below d1 and d2 discordant; q2 tied; q3 concordant only
    np.testing.assert_array_equal(res.per_query("s", "PNR").to_numpy(), [0.5, np.nan, np.inf])
    assert res.mean("s", "PNR") == 1.0  # (1 + 0 + 1) / (2 + 0 + 0)
    assert res.mean("s", "GAUC(weight=impressions)") == pytest.approx(0.5)


def test_invariant_to_monotone_score_transform(data: tuple[Nested, Nested]) -> None:
    qrels, run = data
    warped = {q: {d: math.exp(3 * s) - 7 for d, s in docs.items()} for q, docs in run.items()}
    specs = ["AUC", "GAUC(weight=impressions)", "PNR"]
    a = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"), specs)
    b = evaluate(Qrels.from_dict(qrels), Run.from_dict(warped, name="s"), specs)
    for m in specs:
        np.testing.assert_allclose(a.per_query("s", m), b.per_query("s", m), rtol=1e-14)


# ---------------------------------------------------------------- Kendall's tau

def test_kendall_tau_hand_examples() -> None:
    # seed 001: tau = (P - Q) / (P + Q); one swapped adjacent pair of 4 items: P = 5, Q = 1
    assert kendall_tau(["a", "b", "c", "d"], ["b", "a", "c", "d"]) == pytest.approx(4 / 6)
    assert kendall_tau(["a", "b", "c"], ["a", "b", "c"]) == 1.0
    assert kendall_tau(["a", "b", "c"], ["c", "b", "a"]) == -1.0
    # items in only one list are ignored
    assert kendall_tau(["a", "x", "b", "c"], ["c", "a", "y", "b"]) == pytest.approx(-1 / 3)
    assert math.isnan(kendall_tau(["a", "b"], ["b", "z"]))
    assert kendall_tau(np.array([3, 1, 2]), np.array([1, 2, 3])) == pytest.approx(-1 / 3)
    with pytest.raises(ValueError, match="repeat"):
        kendall_tau(["a", "b", "a"], ["a", "b"])


def test_kendall_tau_matches_scipy_on_permutations() -> None:
    rng = np.random.default_rng(7)
    for n in (2, 3, 10, 57, 300):
        items = [f"i{j}" for j in range(n)]
        b = list(rng.permutation(items))
        pos_b = {d: i for i, d in enumerate(b)}
        want = kendalltau(range(n), [pos_b[d] for d in items]).statistic
        assert kendall_tau(items, b) == pytest.approx(want, abs=1e-12)


def test_kendall_tau_runs_per_query(data: tuple[Nested, Nested]) -> None:
    qrels, run = data
    rng = np.random.default_rng(11)
    other = {q: {d: float(rng.integers(0, 5)) for d in docs if rng.random() < 0.8}
             for q, docs in run.items()}
    other["only_b"] = {"d1": 1.0, "d2": 0.5}
    other = {q: docs for q, docs in other.items() if docs}
    ra, rb = Run.from_dict(run, name="a"), Run.from_dict(other, name="b")
    for depth in (None, 6):
        got = kendall_tau_runs(ra, rb, depth=depth)
        assert list(got.index) == sorted(set(run) & set(other))
        want = [kendall_tau(ranking(run[q])[:depth], ranking(other[q])[:depth])
                for q in got.index]
        np.testing.assert_allclose(got.to_numpy(), want, rtol=0, atol=1e-12)
    assert kendall_tau_runs(ra, ra).dropna().eq(1.0).all()


def test_system_ranking_tau() -> None:
    a = {"bm25": 0.31, "dense": 0.42, "hybrid": 0.45, "rm3": 0.33, "old": math.nan}
    b = {"bm25": 0.30, "dense": 0.47, "hybrid": 0.44, "rm3": 0.35, "new": 0.9}
    names = ["bm25", "dense", "hybrid", "rm3"]
    want = kendalltau([a[s] for s in names], [b[s] for s in names]).statistic
    assert system_ranking_tau(a, b) == pytest.approx(want)  # 4 / 6
    # a pair tied in one mapping counts in neither P nor Q: P = 2, Q = 0
    assert system_ranking_tau({"x": 1, "y": 1, "z": 0}, {"x": 2, "y": 1, "z": 0}) == 1.0
    assert math.isnan(system_ranking_tau({"x": 1.0}, {"x": 2.0}))
