"""Curve data for the curves page: precision–recall and ROC points, pure and vectorised.

Everything here returns plain :class:`pandas.DataFrame` objects (or floats) built
from a :class:`~ireval_core.data.Ranked`; the chart builders plot them. A
document is relevant when its grade >= ``rel_level``.

* PR curves run over the **whole ranking**: unjudged documents count as
  non-relevant, and recall divides by R, the relevant documents in the qrels
  (trec_eval). The interpolated curve is trec_eval's ``iprec_at_recall``.
* ROC curves use only **judged** retrieved documents (grade >= 0): relevant
  versus judged non-relevant, as :mod:`~ireval_core.measures.pairwise` AUC does.
  Points are put at every distinct score (sklearn's ``roc_curve`` with
  ``drop_intermediate=False``), after a first point (0, 0) at threshold +inf.

>>> from ireval_core import Qrels, Run, join
>>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2}})
>>> run = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}, name="bm25")
>>> r = join(qrels, run)
>>> pooled_auc(r)
0.5
>>> prevalence(r)
0.6666666666666666
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .data import JoinCache, Qrels, Ranked, Run, freeze_arrays, join
from .measures.binary import ELEVEN_POINTS, iprec_levels
from .measures.pairwise import auc_counts, tie_groups
from .measures.registry import Measure
from .measures.segments import safe_div, seg_cumcount
from .options import EvalOptions
from .progress import stage

__all__ = ["PR_DEFINITION", "ROC_DEFINITION", "RunCurves", "interpolated_pr",
           "pooled_auc", "pooled_prevalence", "pooled_roc", "pr_points", "prevalence",
           "queries_averaged", "roc_points", "run_curves"]

PR_DEFINITION = (
    "Precision and recall over the ranking (cut at the depth of the options); unjudged "
    "documents count as non-relevant (or are removed with judged-only rankings) and recall "
    "divides by R, the relevant documents (grade >= {rel:g}) in the qrels. Interpolated "
    "precision at recall r = the best precision at any recall >= r, averaged over the "
    "evaluated queries (trec_eval iprec_at_recall; a query with R = 0 scores 0).")
"""Definition shown beside the PR charts; format with ``rel``."""

ROC_DEFINITION = (
    "Only judged retrieved documents enter the ROC: relevant (grade >= {rel:g}) against "
    "judged non-relevant; unjudged documents are left out. The documents of all queries are "
    "pooled and ranked by score, so the curve and its AUC compare scores across queries. "
    "AUC = P(a relevant document outscores a judged non-relevant one), ties count 1/2.")
"""Definition shown beside the ROC chart; format with ``rel``."""


def pr_points(r: Ranked, *, rel_level: float = 1.0) -> pd.DataFrame:
    """Precision and recall after every ranked document, per query.

    Columns ``query``, ``rank`` (1-based), ``recall`` (relevant so far / R, R from
    the qrels) and ``precision`` (relevant so far / rank). Queries with R = 0 are
    omitted (their recall is undefined); a query's last recall is its R@depth.
    """
    rel = r.grade >= rel_level
    n_rel = r.n_relevant(rel_level)
    hits = seg_cumcount(rel, r.offsets, r.qidx)
    keep = n_rel[r.qidx] > 0
    q = r.qidx[keep]
    return pd.DataFrame({
        "query": r.query_ids[q],
        "rank": r.pos[keep].astype(np.int64),
        "recall": hits[keep] / n_rel[q],
        "precision": hits[keep] / r.pos[keep],
    })


def interpolated_pr(r: Ranked, *, rel_level: float = 1.0) -> pd.DataFrame:
    """Mean interpolated precision at recall 0.0, 0.1, ..., 1.0 (trec_eval ``iprec_at_recall``).

    The mean is over every query of ``r`` where the value is defined (a query with R = 0
    scores 0, as in trec_eval 9.0.8, whose rounding is used; a ranking left empty by
    ``judged_only`` is undefined at the levels needing no relevant document and left out
    there, as in the IPrec means; see :func:`~.measures.binary.iprec`).
    """
    levels = iprec_levels(r, Measure("11pt"), EvalOptions(rel_level=float(rel_level)),
                           ELEVEN_POINTS)
    defined = ~np.isnan(levels)
    counts = defined.sum(axis=0)
    sums = np.where(defined, levels, 0.0).sum(axis=0)
    precision = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return pd.DataFrame({"recall": ELEVEN_POINTS.copy(), "precision": precision})


def _judged(r: Ranked, rel_level: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Query index, score and relevance of judged retrieved documents, in ranking order."""
    rows = np.flatnonzero(r.grade >= 0)
    return r.qidx[rows].astype(np.int64), r.score[rows], r.grade[rows] >= rel_level


def _roc_steps(q: np.ndarray, score: np.ndarray, positive: np.ndarray,
               n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                np.ndarray]:
    """ROC points at each tie group of entries sorted by (query, score descending).

    Returns per group (query, fpr, tpr, threshold) and per query (n_pos, n_neg).
    """
    gid, start = tie_groups(q, score)
    ng = int(gid[-1]) + 1 if len(gid) else 0
    gq = q[start]
    n_pos = np.bincount(q[positive], minlength=n)
    n_neg = np.bincount(q[~positive], minlength=n)
    goff = _group_offsets(gq, n)
    tp = seg_cumcount(np.bincount(gid[positive], minlength=ng), goff, gq)  # cumsum of counts
    fp = seg_cumcount(np.bincount(gid[~positive], minlength=ng), goff, gq)
    return (gq, safe_div(fp, n_neg[gq]), safe_div(tp, n_pos[gq]), score[start],
            n_pos, n_neg)


def _group_offsets(gq: np.ndarray, n: int) -> np.ndarray:
    out = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(gq, minlength=n), out=out[1:])
    return out


def roc_points(r: Ranked, *, rel_level: float = 1.0) -> pd.DataFrame:
    """ROC points per query over its judged retrieved documents.

    Columns ``query``, ``fpr``, ``tpr``, ``threshold``: a first point (0, 0) at
    threshold +inf, then one point per distinct score s, counting documents with
    score >= s as predicted relevant. Queries lacking relevant or judged
    non-relevant retrieved documents are omitted (their ROC is undefined).
    """
    n = r.n_queries
    q, score, positive = _judged(r, rel_level)
    gq, fpr, tpr, thr, n_pos, n_neg = _roc_steps(q, score, positive, n)
    ok = (n_pos > 0) & (n_neg > 0)
    keep = ok[gq]
    first = np.flatnonzero(ok)
    qs = np.concatenate((first, gq[keep]))
    step = np.concatenate((np.full(len(first), -1), np.flatnonzero(keep)))
    order = np.lexsort((step, qs))
    return pd.DataFrame({
        "query": r.query_ids[qs[order]],
        "fpr": np.concatenate((np.zeros(len(first)), fpr[keep]))[order],
        "tpr": np.concatenate((np.zeros(len(first)), tpr[keep]))[order],
        "threshold": np.concatenate((np.full(len(first), np.inf), thr[keep]))[order],
    })


def _pooled(r: Ranked, rel_level: float, *, kept: bool = False
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Scores and relevance of every query's judged retrieved documents, by score desc.

    ``kept``: ``r`` is read-only (a shared join), so its sorted rows, which do not depend
    on the relevance level, are kept with it for the next level.
    """
    rows = _pooled_rows(r) if kept else _sorted_judged_rows(r)
    return (np.zeros(len(rows), dtype=np.int64), r.score[rows],
            r.grade[rows] >= rel_level)


def _sorted_judged_rows(r: Ranked) -> np.ndarray:
    """Rows of the judged retrieved documents (grade >= 0) by score descending."""
    rows = np.flatnonzero(r.grade >= 0)
    # one group: the order inside a run of equal scores does not change any output,
    # and the stable sort keeps it deterministic (ranking order)
    return rows[np.argsort(-r.score[rows], kind="stable")]


# The sorted judged rows of a read-only join, kept while the join lives: a relevance-level
# change then redraws the ROC without sorting again.
_POOLED_ROWS: weakref.WeakKeyDictionary[Ranked, np.ndarray] = weakref.WeakKeyDictionary()
_POOLED_LOCK = threading.Lock()


def _pooled_rows(r: Ranked) -> np.ndarray:
    with _POOLED_LOCK:
        rows = _POOLED_ROWS.get(r)
    if rows is None:
        rows = _sorted_judged_rows(r)
        rows.setflags(write=False)
        with _POOLED_LOCK:
            _POOLED_ROWS[r] = rows
    return rows


def pooled_roc(r: Ranked, *, rel_level: float = 1.0) -> pd.DataFrame:
    """One ROC curve over all queries' judged retrieved documents pooled by score.

    Columns ``fpr``, ``tpr``, ``threshold`` as :func:`roc_points`; empty when the
    pool lacks relevant or judged non-relevant documents.
    """
    return _pooled_roc(*_pooled(r, rel_level))


def _pooled_roc(q: np.ndarray, score: np.ndarray, positive: np.ndarray) -> pd.DataFrame:
    _, fpr, tpr, thr, n_pos, n_neg = _roc_steps(q, score, positive, 1)
    if not (n_pos[0] > 0 and n_neg[0] > 0):
        return pd.DataFrame({"fpr": [], "tpr": [], "threshold": []})
    return pd.DataFrame({"fpr": np.concatenate(([0.0], fpr)),
                         "tpr": np.concatenate(([0.0], tpr)),
                         "threshold": np.concatenate(([np.inf], thr))})


def pooled_auc(r: Ranked, *, rel_level: float = 1.0) -> float:
    """Area under :func:`pooled_roc`: P(relevant scores > judged non-relevant), ties ½.

    Equals ``sklearn.metrics.roc_auc_score`` on the pooled labels and scores; NaN
    (where sklearn raises) when the pool lacks either class.
    """
    return _pooled_auc(*_pooled(r, rel_level))


def _pooled_auc(q: np.ndarray, score: np.ndarray, positive: np.ndarray) -> float:
    twice_u, n_pos, n_neg = auc_counts(q, score, positive, 1)
    return float(safe_div(twice_u, 2.0 * n_pos * n_neg, fill=np.nan)[0])


def prevalence(r: Ranked, rel_level: float = 1.0) -> float:
    """Relevant / judged among all retrieved documents (pooled): the PR chance line.

    NaN when no retrieved document is judged.
    """
    judged = r.grade >= 0
    n_judged = int(np.count_nonzero(judged))
    if not n_judged:
        return float("nan")
    return int(np.count_nonzero(judged & (r.grade >= rel_level))) / n_judged


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class RunCurves:
    """Every curve of one run under one :class:`~ireval_core.options.EvalOptions`.

    Holds read-only arrays (safe to share between sessions); the ``*_frame``
    methods build fresh tables for charts.

    Attributes
    ----------
    run:
        The run name.
    options:
        The options the curves were computed under.
    interpolated_precision:
        Mean interpolated precision at recall 0.0, 0.1, ..., 1.0.
    n_queries:
        Queries evaluated (the mean of :attr:`interpolated_precision` is over them).
    n_judged, n_relevant:
        Judged (grade >= 0) and relevant retrieved documents, over all queries.
    auc:
        Area under the pooled ROC (NaN when undefined; :meth:`roc_problem` says why).
    """

    run: str
    options: EvalOptions
    interpolated_precision: np.ndarray
    n_queries: int
    n_judged: int
    n_relevant: int
    n_with_relevant: int
    auc: float
    _ranked: Ranked  # the join (shared with the other pages): one query's points on demand
    _n_relevant: np.ndarray  # R of every evaluated query at this relevance level
    _fpr: np.ndarray
    _tpr: np.ndarray
    _threshold: np.ndarray

    @property
    def prevalence(self) -> float:
        """Relevant / judged among the retrieved documents (NaN when none is judged)."""
        return self.n_relevant / self.n_judged if self.n_judged else float("nan")

    @property
    def queries_with_relevant(self) -> tuple[str, ...]:
        """Queries with at least one relevant document in the qrels (those with a PR curve)."""
        r = self._ranked
        has_curve = (self._n_relevant > 0) & (np.diff(r.offsets) > 0)
        return tuple(str(q) for q in r.query_ids[has_curve])

    def interpolated_frame(self) -> pd.DataFrame:
        """``recall``, ``precision``: the 11-point interpolated curve."""
        return pd.DataFrame({"recall": ELEVEN_POINTS.copy(),
                             "precision": self.interpolated_precision.copy()})

    def query_points(self, query: str) -> pd.DataFrame:
        """PR points of one query in rank order (``rank``, ``recall``, ``precision``).

        Empty when the query has no relevant document (or retrieved nothing).
        """
        r = self._ranked
        found = np.flatnonzero(r.query_ids.astype(str) == str(query))
        if not found.size or self._n_relevant[found[0]] == 0:
            return pd.DataFrame({"rank": np.zeros(0, dtype=np.int64),
                                 "recall": np.zeros(0), "precision": np.zeros(0)})
        i = int(found[0])
        rows = slice(int(r.offsets[i]), int(r.offsets[i + 1]))
        pos = r.pos[rows].astype(np.int64)
        hits = np.cumsum(r.grade[rows] >= self.options.rel_level)
        return pd.DataFrame({"rank": pos, "recall": hits / float(self._n_relevant[i]),
                             "precision": hits / pos})

    def roc_frame(self) -> pd.DataFrame:
        """Pooled ROC points ``fpr``, ``tpr``, ``threshold`` (empty when undefined)."""
        return pd.DataFrame({"fpr": self._fpr.copy(), "tpr": self._tpr.copy(),
                             "threshold": self._threshold.copy()})

    def roc_problem(self) -> str | None:
        """Why the pooled ROC is undefined, in words; ``None`` when it is drawn."""
        rel = self.options.rel_level
        if self.n_judged == 0:
            return "no retrieved document is judged"
        if self.n_relevant == 0:
            return f"no judged retrieved document has a grade >= {rel:g} (no relevant class)"
        if self.n_relevant == self.n_judged:
            return (f"every judged retrieved document has a grade >= {rel:g}, so there is no "
                    "judged non-relevant document to rank below them")
        return None

    def pr_problem(self) -> str | None:
        """Why the PR curves are undefined, in words; ``None`` when they are drawn."""
        if self.n_queries == 0:
            return "no query is evaluated (no query in both the run and the qrels)"
        if self.n_with_relevant == 0:
            return (f"no evaluated query has a document with grade >= "
                    f"{self.options.rel_level:g} in the qrels, so recall is undefined")
        return None


def run_curves(qrels: Qrels, run: Run, *, options: EvalOptions | None = None,
               joins: JoinCache | None = None) -> RunCurves:
    """Every curve of ``run``: the run is joined with the qrels once under ``options``
    (or the join is taken from ``joins``, see :class:`~ireval_core.data.JoinCache`).

    >>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2}})
    >>> run = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}, name="bm25")
    >>> c = run_curves(qrels, run)
    >>> c.auc, c.roc_problem()
    (0.5, None)
    >>> print(run_curves(qrels, run, options=EvalOptions(rel_level=0)).roc_problem())
    every judged retrieved document has a grade >= 0, so there is no judged non-relevant \
document to rank below them
    """
    options = EvalOptions() if options is None else options
    rel = options.rel_level
    stage(f"joining {run.name} with the qrels")
    if joins is not None:
        r = joins.ranked(qrels, run, options)
    else:
        r = join(qrels, run, options=options)
        freeze_arrays(r)  # kept by the result: shared, so read-only
    stage(f"curves of {run.name}")
    pooled = _pooled(r, rel, kept=True)  # one sort by score for the ROC and its AUC
    roc = _pooled_roc(*pooled)
    n_rel = r.n_relevant(rel)
    return RunCurves(
        run=run.name, options=options,
        interpolated_precision=_readonly(interpolated_pr(r, rel_level=rel)["precision"]),
        n_queries=r.n_queries,
        n_judged=int(np.count_nonzero(r.grade >= 0)),
        n_relevant=int(np.count_nonzero(r.grade >= rel)),
        n_with_relevant=int(np.count_nonzero(n_rel > 0)),
        auc=_pooled_auc(*pooled),
        _ranked=r, _n_relevant=_readonly(n_rel),
        _fpr=_readonly(roc["fpr"].to_numpy()), _tpr=_readonly(roc["tpr"].to_numpy()),
        _threshold=_readonly(roc["threshold"].to_numpy()),
    )


def queries_averaged(curves: Mapping[str, RunCurves]) -> str:
    """The queries each run's interpolated precision averages, in words (as the Metrics
    page says it of its means): ``"Queries averaged: bm25 59, narrow_recall 58."``."""
    return "Queries averaged: " + ", ".join(f"{name} {c.n_queries:,}"
                                            for name, c in curves.items()) + "."


def pooled_prevalence(curves: Mapping[str, RunCurves]) -> float:
    """Relevant / judged over the retrieved documents of all runs together (NaN if none).

    The PR chance line: a random ordering of the judged documents has this precision.
    """
    judged = sum(c.n_judged for c in curves.values())
    return sum(c.n_relevant for c in curves.values()) / judged if judged else float("nan")
