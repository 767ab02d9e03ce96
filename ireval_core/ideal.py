"""Why nDCG with an ideal taken from the candidates hides recall failures (seed 003).

nDCG divides DCG by the DCG of an ideal ranking. Built from every judged document
of the query (trec_eval), a run that misses the relevant documents scores low;
built from the retrieved candidates only (``ideal=run``, what many libraries and
dashboards do), a run that retrieves only junk but ranks it well scores near 1.
This module gives the numbers of the nDCG vs DCG page: the measures to compare
(:func:`ideal_measures`), their per-query pairs (:func:`ideal_pairs`) and a worked
example computed by the library itself (:func:`toy_example`).

>>> ranking, summary = toy_example(4)
>>> summary["value"].round(4).tolist()
[1.6309, 6.3235, 1.6309, 0.2579, 1.0]
"""

from __future__ import annotations

from numbers import Real

import pandas as pd

from .data import Qrels, Run
from .evaluate import Evaluation, evaluate
from .measures import parse_measure
from .params import Interval, validate_params

__all__ = ["RECALL_GAP", "TOY_QRELS", "TOY_RUN", "ideal_measures", "ideal_pairs",
           "recall_flags", "toy_example"]


def ideal_measures(k: int, recall_k: int) -> tuple[str, ...]:
    """The measures of the nDCG-vs-DCG page: DCG@k, nDCG@k, nDCG(ideal=run)@k, R@recall_k."""
    return (f"DCG@{k}", f"nDCG@{k}", f"nDCG(ideal=run)@{k}", f"R@{recall_k}")


def ideal_pairs(res: Evaluation, k: int) -> pd.DataFrame:
    """Per-query ``system, query, x, y``: x = nDCG(ideal=run)@k, y = nDCG@k (qrels ideal)."""
    x_name, y_name = str(parse_measure(f"nDCG(ideal=run)@{k}")), str(parse_measure(f"nDCG@{k}"))
    tidy = res.tidy()
    wide = tidy[tidy["measure"].isin([x_name, y_name])].pivot_table(
        index=["system", "query"], columns="measure", values="value", sort=False)
    wide = wide.rename(columns={x_name: "x", y_name: "y"}).reset_index()
    return wide[["system", "query", "x", "y"]].dropna()


RECALL_GAP = 0.3
"""A query is flagged when nDCG(ideal=run)@k exceeds nDCG@k by at least this much."""


@validate_params({"gap": Interval(Real, 0, 1, closed="right")})
def recall_flags(res: Evaluation, k: int, *, gap: float = RECALL_GAP) -> pd.DataFrame:
    """Queries whose candidates miss relevant documents: the recall check of seed 003.

    A query of a system is flagged when nDCG(ideal=run)@k − nDCG@k >= ``gap``: the
    system orders its own candidates well (the run-only ideal is nearly met) while the
    qrels know better documents it never retrieved. ``res`` must hold both measures
    (see :func:`ideal_measures`). Columns ``system, query, ndcg_run_ideal, ndcg, gap``,
    largest gap first.
    """
    pairs = ideal_pairs(res, k)
    out = pd.DataFrame({"system": pairs["system"], "query": pairs["query"],
                        "ndcg_run_ideal": pairs["x"], "ndcg": pairs["y"],
                        "gap": pairs["x"] - pairs["y"]})
    out = out[out["gap"] >= gap - 1e-12]
    return out.sort_values(["gap", "system", "query"], ascending=[False, True, True],
                           kind="stable", ignore_index=True)


TOY_QRELS: dict[str, dict[str, float]] = {
    "q1": {"best1": 3, "best2": 3, "good": 2, "meh1": 1, "meh2": 1, "junk1": 0, "junk2": 0}}
"""Toy judgments: three strong documents the toy run never retrieves."""
TOY_RUN = {"q1": {"meh1": 4.0, "meh2": 3.0, "junk1": 2.0, "junk2": 1.0}}
"""Toy run: only weak candidates, ranked as well as they can be."""


def toy_example(k: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The worked example: the toy ranking with its grades, and the measures of it.

    Returns ``(ranking, summary)``: ``ranking`` has rank, document, grade, gain /
    log2(rank + 1) (a contribution to DCG, from ireval_core's DCG at each depth); ``summary``
    has one row per quantity (DCG, IDCG from the qrels, IDCG from the run, both nDCGs),
    all from :func:`ireval_core.evaluate` on in-memory data.
    """
    qrels = Qrels.from_dict(TOY_QRELS, source="toy qrels")
    run = Run.from_dict(TOY_RUN, name="toy run")
    docs = sorted(TOY_RUN["q1"], key=lambda d: -TOY_RUN["q1"][d])
    grades = TOY_QRELS["q1"]
    n = min(k, len(docs))
    cum = evaluate(qrels, run, [f"DCG@{i}" for i in range(1, n + 1)])
    dcg_at = [cum.mean("toy run", f"DCG@{i}") for i in range(1, n + 1)]
    ranking = pd.DataFrame({
        "rank": range(1, n + 1),
        "document": docs[:n],
        "grade": [grades.get(d, 0) for d in docs[:n]],
        "DCG contribution": [b - a for a, b in zip([0.0, *dcg_at[:-1]], dcg_at, strict=True)],
        "DCG@rank": dcg_at,
    })
    # the ideal rankings, scored by the same DCG: all judged documents vs the candidates only
    ideal_q = Run.from_dict({"q1": {d: float(g) for d, g in grades.items()}}, name="ideal")
    ideal_r = Run.from_dict({"q1": {d: float(grades.get(d, 0)) for d in docs}}, name="ideal")
    res = evaluate(qrels, run, [f"DCG@{k}", f"nDCG@{k}", f"nDCG(ideal=run)@{k}"])
    idcg_q = evaluate(qrels, ideal_q, [f"DCG@{k}"]).mean("ideal", f"DCG@{k}")
    idcg_r = evaluate(qrels, ideal_r, [f"DCG@{k}"]).mean("ideal", f"DCG@{k}")
    order_q = ", ".join(str(g) for g in sorted(grades.values(), reverse=True)[:k])
    order_r = ", ".join(str(g) for g in sorted((grades.get(d, 0) for d in docs),
                                                reverse=True)[:k])
    summary = pd.DataFrame({
        "quantity": [f"DCG@{k} of the run", f"IDCG@{k}, ideal from the qrels",
                     f"IDCG@{k}, ideal from the run", f"nDCG@{k} (qrels ideal)",
                     f"nDCG(ideal=run)@{k}"],
        "grades used": [", ".join(str(g) for g in ranking["grade"]), order_q, order_r,
                        "DCG / IDCG (qrels)", "DCG / IDCG (run)"],
        "value": [res.mean("toy run", f"DCG@{k}"), idcg_q, idcg_r,
                  res.mean("toy run", f"nDCG@{k}"),
                  res.mean("toy run", f"nDCG(ideal=run)@{k}")],
    })
    return ranking, summary
