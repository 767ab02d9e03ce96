"""Measures averaged over judgment groups: trec_eval's ``*_avgjg`` (``-R qrels_jg``).

A judgment group is one complete set of judgments of a query (one assessor, one round).
trec_eval's ``map_avgjg``, ``P_avgjg_k`` and ``Rprec_mult_avgjg_x`` (``m_map_avgjg.c``,
``m_P_avgjg.c``, ``m_Rprec_mult_avgjg.c``, ``form_res_rels_jg.c``) compute AP, P@k and
Rprec(mult=x) of the run against each group's judgments alone (R, the relevance level,
``-J`` and ``-M`` applied per group) and average the values of a query over the groups
that judged it; the mean over queries is then the usual one. A query judged by one group
only has that group's value, so with one group ``map_avgjg`` equals ``map``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np

from .data import Qrels, Run
from .evaluate import Evaluation, evaluate
from .measures import Measure, parse_measures
from .options import EvalOptions

__all__ = ["AVGJG_FAMILIES", "evaluate_judgment_groups", "per_group"]

AVGJG_FAMILIES = ("map", "P", "Rprec_mult")
"""trec_eval's measures with an ``_avgjg`` form, by their trec_eval names."""


def per_group(m: Measure) -> Measure:
    """The measure evaluated within each judgment group: the family's ``base`` with the
    same cutoff and parameters (``PAvgJG@5``: ``P@5``); a measure of another family as is.

    >>> from ireval_core.measures import parse_measure
    >>> str(per_group(parse_measure("Rprec_mult_avgjg_0.20")))
    'Rprec(mult=0.2)'
    """
    base = m.family.base
    return m if base is None else Measure(base, m.cutoff, m.params)


def evaluate_judgment_groups(groups: Mapping[str, Qrels], runs: Run | Iterable[Run],
                             measures: Sequence[Measure | str], *,
                             options: EvalOptions | None = None) -> Evaluation:
    """``measures`` of each run, per query the mean over the judgment groups judging it.

    Parameters
    ----------
    groups:
        One :class:`Qrels` per judgment group (:func:`~ireval_core.io.read_qrels_jg`).
    runs:
        One run or several.
    measures:
        The measures: ``APAvgJG``, ``PAvgJG@k``, ``RprecAvgJG(mult=x)`` (trec_eval's
        ``map_avgjg``, ``P_avgjg_k``, ``Rprec_mult_avgjg_x``), or the measure to average
        itself (``AP``, ``P@k``, ...); results are keyed by the spec given.
    options:
        As for :func:`~ireval_core.evaluate.evaluate`, applied within each group.

    Returns
    -------
    Evaluation
        Per query, the mean over its groups (a value a group leaves undefined counts 0,
        as trec_eval adds nothing for it); the means over the queries any group judged
        that the run answers (all of them with ``complete``).

    Examples
    --------
    >>> from ireval_core.measures import parse_measures
    >>> a = Qrels.from_dict({"1": {"d1": 1, "d2": 0}})
    >>> b = Qrels.from_dict({"1": {"d1": 0, "d2": 1}})
    >>> run = Run.from_dict({"1": {"d1": 2.0, "d2": 1.0}}, name="r")
    >>> res = evaluate_judgment_groups({"A": a, "B": b}, run, parse_measures("P@1"))
    >>> float(res.mean("r", "P@1"))
    0.5
    """
    options = options or EvalOptions()
    run_list = [runs] if isinstance(runs, Run) else list(runs)
    if not groups:
        raise ValueError("no judgment group to evaluate against")
    measures = parse_measures(measures)
    within = [per_group(m) for m in measures]
    parts = [evaluate(qrels, run_list, within, options=options) for qrels in groups.values()]
    first = parts[0]
    query_ids: dict[str, np.ndarray] = {}
    values: dict[tuple[str, str], np.ndarray] = {}
    aggregates: dict[tuple[str, str], float] = {}
    n_averaged: dict[tuple[str, str], int] = {}
    answered: dict[str, np.ndarray] = {}
    for s in first.systems:
        qids = np.concatenate([np.asarray(p.query_ids[s]).astype(str) for p in parts])
        unique, where = np.unique(qids, return_inverse=True)
        n_groups = np.bincount(where, minlength=len(unique))
        query_ids[s] = unique.astype(object)
        for m, w in zip(measures, within, strict=True):
            got = np.concatenate([np.nan_to_num(np.asarray(p.values[(s, str(w))],
                                                           dtype=np.float64)) for p in parts])
            per_query = np.bincount(where, weights=got, minlength=len(unique)) / n_groups
            values[(s, str(m))] = per_query
            aggregates[(s, str(m))] = float(per_query.mean()) if len(unique) else float("nan")
            n_averaged[(s, str(m))] = len(unique)
        if any(s in p.answered for p in parts):
            answered[s] = np.unique(np.concatenate(
                [np.asarray(p.answered[s]).astype(str) for p in parts if s in p.answered]
            )).astype(object)
    return Evaluation(first.systems, tuple(measures), options, query_ids, values, aggregates,
                      n_averaged, answered)
