"""PR and ROC curve data against pytrec_eval, sklearn and hand-computed values."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import pytrec_eval
from _random_runs import Nested, random_queries, random_scores, ranking
from sklearn.metrics import roc_auc_score, roc_curve

from ireval_core import Qrels, Run, evaluate, join
from ireval_core.curves import (
    interpolated_pr,
    pooled_auc,
    pooled_roc,
    pr_points,
    prevalence,
    roc_points,
)


def random_data(seed: int, n_queries: int = 40) -> tuple[Nested, Nested]:
    """Qrels (grades in {-1, 0, 1, 2, 3}) and a run with score ties and unjudged documents.

    Every qrels query keeps a grade >= -1 (pytrec_eval segfaults on queries whose only
    grades are <= -2); some queries have no relevant document at all.
    """
    rng = np.random.default_rng(seed)
    qrels: Nested = {}
    run: Nested = {}
    for i, qid, docs, grades in random_queries(rng, n_queries):
        n_docs = len(docs)
        if i % 9 == 0:
            grades = np.where(grades > 0, 0, grades)  # no relevant document
        judged = rng.random(n_docs) < 0.75
        judged[0] = True
        qrels[qid] = {d: float(g) for d, g, j in zip(docs, grades, judged, strict=True) if j}
        if i % 3 == 1:
            qrels[qid][f"u{i}"] = 2.0  # relevant, never retrieved
        retrieved = rng.random(n_docs) < 0.9
        retrieved[0] = True
        run[qid] = random_scores(rng, docs, retrieved)
    qrels["q_unrun"] = {"z": 1.0}  # a qrels query missing from the run
    return qrels, run


def judged_labels(qrels: Nested, run: Nested, qid: str, t: float
                  ) -> tuple[np.ndarray, np.ndarray]:
    g = qrels[qid]
    docs = [d for d in ranking(run[qid]) if d in g and g[d] >= 0]
    return (np.array([g[d] >= t for d in docs], dtype=bool),
            np.array([run[qid][d] for d in docs]))


@pytest.fixture(scope="module", params=[0, 1])
def data(request: pytest.FixtureRequest) -> tuple[Nested, Nested]:
    return random_data(request.param)


def ranked(data: tuple[Nested, Nested]):
    qrels, run = data
    return join(Qrels.from_dict(qrels), Run.from_dict(run, name="s"))


@pytest.mark.parametrize("t", [1.0, 2.0])
def test_interpolated_pr_matches_pytrec_eval(data: tuple[Nested, Nested], t: float) -> None:
    qrels, run = data
    per_query = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()},
        {"iprec_at_recall"}, relevance_level=int(t)).evaluate(run)
    assert len(per_query) == len(set(qrels) & set(run))
    got = interpolated_pr(ranked(data), rel_level=t)
    np.testing.assert_allclose(got["recall"], np.arange(11) / 10, atol=1e-15)
    want = [np.mean([v[f"iprec_at_recall_{r:.2f}"] for v in per_query.values()])
            for r in np.arange(11) / 10]
    np.testing.assert_allclose(got["precision"], want, rtol=1e-12)


def test_pr_points(data: tuple[Nested, Nested]) -> None:
    qrels, run = data
    r = ranked(data)
    pts = pr_points(r)
    assert list(pts.columns) == ["query", "rank", "recall", "precision"]
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"),
                   ["R", "NumRel", "P@3"])
    n_rel = res.per_query("s", "NumRel")
    with_rel = sorted(q for q in n_rel.index if n_rel[q] > 0)
    assert sorted(pts["query"].unique()) == with_rel and len(with_rel) < len(n_rel)
    last = pts.groupby("query").last()
    np.testing.assert_allclose(last["recall"], res.per_query("s", "R")[last.index], rtol=1e-15)
    np.testing.assert_array_equal(last["rank"], [len(run[q]) for q in last.index])
    at3 = pts[pts["rank"] == 3].set_index("query")["precision"]
    np.testing.assert_allclose(at3, res.per_query("s", "P@3")[at3.index], rtol=1e-15)
    one = pts[pts["query"] == with_rel[0]]
    np.testing.assert_array_equal(one["rank"], np.arange(1, len(one) + 1))
    assert (one["recall"].diff().dropna() >= 0).all()


def test_roc_points_match_sklearn_per_query(data: tuple[Nested, Nested]) -> None:
    qrels, run = data
    pts = roc_points(ranked(data))
    assert list(pts.columns) == ["query", "fpr", "tpr", "threshold"]
    seen = []
    for q in sorted(set(qrels) & set(run)):
        y, s = judged_labels(qrels, run, q, 1.0)
        mine = pts[pts["query"] == q]
        if y.all() or not y.any():
            assert mine.empty
            continue
        seen.append(q)
        fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
        np.testing.assert_allclose(mine["fpr"], fpr, rtol=1e-15)
        np.testing.assert_allclose(mine["tpr"], tpr, rtol=1e-15)
        np.testing.assert_array_equal(mine["threshold"], thr)
        area = np.trapezoid(mine["tpr"], mine["fpr"])
        assert area == pytest.approx(roc_auc_score(y, s), abs=1e-12)
    assert seen and sorted(pts["query"].unique()) == seen


@pytest.mark.parametrize("t", [1.0, 2.0, 3.0])
def test_pooled_roc_and_auc_match_sklearn(data: tuple[Nested, Nested], t: float) -> None:
    qrels, run = data
    pieces = [judged_labels(qrels, run, q, t) for q in sorted(set(qrels) & set(run))]
    y = np.concatenate([p[0] for p in pieces])
    s = np.concatenate([p[1] for p in pieces])
    r = ranked(data)
    assert pooled_auc(r, rel_level=t) == pytest.approx(roc_auc_score(y, s), abs=1e-14)
    roc = pooled_roc(r, rel_level=t)
    fpr, tpr, thr = roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(roc["fpr"], fpr, rtol=1e-15)
    np.testing.assert_allclose(roc["tpr"], tpr, rtol=1e-15)
    np.testing.assert_array_equal(roc["threshold"], thr)
    assert prevalence(r, t) == pytest.approx(y.mean(), abs=1e-15)


def test_hand_example_and_undefined_cases() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2, "d4": -1}})
    run = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1, "d4": 0.5, "d5": 0.3}},
                        name="s")
    r = join(qrels, run)
    # judged: d1 rel (.9), d2 non-rel (.8), d3 rel (.1)
    roc = roc_points(r)
    pd.testing.assert_frame_equal(roc, pd.DataFrame({
        "query": np.array(["q1"] * 4, dtype=object), "fpr": [0.0, 0.0, 1.0, 1.0],
        "tpr": [0.0, 0.5, 0.5, 1.0], "threshold": [np.inf, 0.9, 0.8, 0.1]}))
    assert pooled_auc(r) == 0.5
    assert prevalence(r) == pytest.approx(2 / 3)
    # ranks: d1 (rel), d2, d4, d5, d3 (rel): recall 1/2 then 2/2 at rank 5
    pts = pr_points(r)
    np.testing.assert_allclose(pts["recall"], [0.5, 0.5, 0.5, 0.5, 1.0])
    np.testing.assert_allclose(pts["precision"], [1.0, 0.5, 1 / 3, 0.25, 0.4])
    none = join(qrels, run)
    assert math.isnan(pooled_auc(none, rel_level=3.0))
    assert pooled_roc(none, rel_level=3.0).empty
    assert pr_points(none, rel_level=3.0).empty
    assert interpolated_pr(none, rel_level=3.0)["precision"].eq(0.0).all()


@pytest.mark.parametrize("rel_level", [1.0, 2.0])
def test_one_query_points_equal_those_of_every_query(rel_level: float) -> None:
    """RunCurves computes one query's PR points on demand (no table of every point kept):
    the same values as pr_points over all queries."""
    from ireval_core.curves import pr_points, run_curves
    from ireval_core.data import Qrels, Run, join
    from ireval_core.options import EvalOptions

    rng = np.random.default_rng(11)
    qrels = Qrels.from_arrays([f"q{i % 9}" for i in range(120)], [f"d{i}" for i in range(120)],
                              rng.integers(0, 4, 120))
    run = Run.from_arrays([f"q{i % 10}" for i in range(300)],
                          [f"d{rng.integers(0, 150)}-{i}" if i % 2 else f"d{i}"
                           for i in range(300)], np.round(rng.random(300), 1), name="r")
    options = EvalOptions(rel_level=rel_level)
    curves = run_curves(qrels, run, options=options)
    every = pr_points(join(qrels, run, options=options), rel_level=rel_level)
    assert curves.queries_with_relevant == tuple(dict.fromkeys(every["query"].astype(str)))
    for q in [*curves.queries_with_relevant, "q9", "absent"]:
        expected = every[every["query"] == q].drop(columns="query").reset_index(drop=True)
        pd.testing.assert_frame_equal(curves.query_points(q), expected, check_dtype=False)
