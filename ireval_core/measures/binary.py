"""Binary-relevance kernels: cutoff and set measures, AP family, bpref, IPrec.

Each kernel takes a :class:`~ireval_core.data.Ranked` (all queries at once), the
:class:`~.registry.Measure` and the evaluation's options (any
:class:`~ireval_core.options.EvalOptions`), and returns
one float64 per query. A document is relevant when its grade >= the threshold;
unjudged documents (grade NaN) and pooled-but-unjudged ones (negative grade) are
never relevant; judged non-relevant means 0 <= grade < threshold. Undefined cases
follow trec_eval 9.0.8 (e.g. no relevant document gives 0) unless noted.
"""

from __future__ import annotations

import numpy as np

from ..data import Ranked
from ..options import EvalOptions
from .registry import Measure, PartAggregate
from .segments import (
    safe_div,
    seg_count,
    seg_first,
    seg_reverse_cummax,
    seg_sum,
)


def relevant_mask(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    return r.grade >= m.threshold(o)


def nonrelevant_mask(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    g = r.grade
    return (g >= 0) & (g < m.threshold(o))


def _top(r: Ranked, m: Measure) -> np.ndarray | None:
    """Mask of entries within the cutoff (None = whole ranking)."""
    return None if m.cutoff is None else r.pos <= m.k


def _count_top(mask: np.ndarray, r: Ranked, m: Measure) -> np.ndarray:
    top = _top(r, m)
    return seg_count(mask if top is None else mask & top, r.qidx, r.n_queries)


def _retrieved_top(r: Ranked, m: Measure) -> np.ndarray:
    k = m.k  # None exactly when there is no cutoff
    return r.n_retrieved if k is None else np.minimum(r.n_retrieved, k)


def precision(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """P@k = relevant in top k / k (short lists padded with non-relevant); set_P without k."""
    hits = _count_top(relevant_mask(r, m, o), r, m)
    return safe_div(hits, r.n_retrieved if m.cutoff is None else np.full(r.n_queries, m.k))


def recall(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """R@k = relevant in top k / relevant in qrels (0 when the query has none)."""
    return safe_div(_count_top(relevant_mask(r, m, o), r, m), r.n_relevant(m.threshold(o)))


def f_measure(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """F(beta)@k = (1 + b²) P R / (b² P + R), 0 when P + R = 0; b² is ``beta2`` when given
    (trec_eval's ``set_F.x``: ``(x + 1) P R / (x P + R)``)."""
    p, rec = precision(r, m, o), recall(r, m, o)
    b2 = m.number("beta") ** 2 if m.get("beta2") is None else m.number("beta2")
    return safe_div((1 + b2) * p * rec, b2 * p + rec)


def fallout(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Judged non-relevant in top k / judged non-relevant in qrels."""
    return safe_div(_count_top(nonrelevant_mask(r, m, o), r, m), r.n_nonrelevant(m.threshold(o)))


def accuracy(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """(TP + TN) / judged docs, predicting the top k positive and the rest negative."""
    t = m.threshold(o)
    keep = r.grade >= min(t, 0.0)  # the relevant and the judged non-relevant rows
    top = _top(r, m)
    rows = np.flatnonzero(keep if top is None else keep & top)
    g, q = r.grade[rows], r.qidx[rows]
    rel = g >= t
    tp = np.bincount(q[rel], minlength=r.n_queries)
    fp = np.bincount(q[(g >= 0) & ~rel], minlength=r.n_queries)
    n_rel, n_non = r.n_relevant(t), r.n_nonrelevant(t)
    return safe_div(tp + (n_non - fp), n_rel + n_non)


def success(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """1 if a relevant document is in the top k, else 0."""
    return (_count_top(relevant_mask(r, m, o), r, m) > 0).astype(np.float64)


def judged(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Judged documents (grade >= 0) in the top k / min(k, retrieved); 0 for an empty ranking."""
    return safe_div(_count_top(r.grade >= 0, r, m), _retrieved_top(r, m))


def num_ret(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    return _retrieved_top(r, m).astype(np.float64)


def num_rel(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    return r.n_relevant(m.threshold(o))


def num_rel_ret(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    return _count_top(relevant_mask(r, m, o), r, m).astype(np.float64)


def num_nonrel_ret(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    return _count_top(nonrelevant_mask(r, m, o), r, m).astype(np.float64)


def r_precision(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """P@c, c = (long)(mult·R + 0.9) with R = relevant in qrels (0 when c = 0).

    ``mult=1`` (the default) is R-precision (c = R); other multiples are trec_eval's
    ``Rprec_mult_x``, which rounds as its 9.0.8 IPrec does, in 10.0 too.
    """
    n_rel = r.n_relevant(m.threshold(o))
    cut = (m.number("mult") * n_rel + 0.9).astype(np.int64)
    rows = np.flatnonzero(relevant_mask(r, m, o))  # the relevant rows only: the same count
    q = r.qidx[rows]
    return safe_div(seg_count(r.pos[rows] <= cut[q], q, r.n_queries), cut)


def average_precision(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """AP@k = Σ over relevant ranks r <= k of P@r, divided by R (not by min(k, R))."""
    rel = relevant_mask(r, m, o)
    top = _top(r, m)
    # Over the relevant rows within the cutoff only (the others add 0.0 to the sums, so
    # the sums are the same to the bit): the cutoff keeps a prefix of each ranking, so the
    # j-th of these rows of a query has j relevant documents at or above it.
    rows = np.flatnonzero(rel if top is None else rel & top)
    q = r.qidx[rows]
    hits = np.arange(1, len(rows) + 1, dtype=np.int64) - group_starts(q, r.n_queries)[q]
    return safe_div(seg_sum(hits / r.pos[rows], q, r.n_queries),
                    r.n_relevant(m.threshold(o)))


def reciprocal_rank(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """1 / rank of the first relevant document within the cutoff, 0 if none."""
    rel = relevant_mask(r, m, o)
    top = _top(r, m)
    first = seg_first(rel if top is None else rel & top, r.pos, r.qidx, r.n_queries)
    return safe_div(np.ones(r.n_queries), first)


def bpref(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """bpref as trec_eval: (1/R) Σ_rel retrieved (1 − min(n above, R) / min(N, R)).

    ``n above`` counts judged non-relevant documents ranked above; N is the number
    of judged non-relevant documents of the query. With ``form=original`` the
    seed's (1/R) Σ (1 − min(n above, R) / R) is used instead.
    """
    t = m.threshold(o)
    # Over the relevant and judged non-relevant rows only (the others add 0.0 to the sums:
    # the same bits); "above" counts the non-relevant ones of the query before each.
    judged = np.flatnonzero(r.grade >= min(t, 0.0))
    g = r.grade[judged]
    jq = r.qidx[judged]
    rel = g >= t
    nonrel = np.zeros(len(g) + 1, dtype=np.int64)
    np.cumsum((g >= 0) & ~rel, out=nonrel[1:])
    at = np.flatnonzero(rel)
    q = jq[at]
    above = nonrel[at] - nonrel[group_starts(jq, r.n_queries)[q]]
    n_rel = r.n_relevant(t)
    if m.get("form") == "original":
        denom = n_rel
    else:
        denom = np.minimum(r.n_nonrelevant(t), n_rel)
    term = 1.0 - safe_div(np.minimum(above, n_rel[q]), denom[q])
    term = np.where(above > 0, term, 1.0)
    return safe_div(seg_sum(term, q, r.n_queries), n_rel)


def group_starts(q: np.ndarray, n: int) -> np.ndarray:
    """For entries grouped by query (``q`` non-decreasing), the index of each query's first
    entry (int64; the entry count before it)."""
    out = np.zeros(n, dtype=np.int64)
    np.cumsum(np.bincount(q, minlength=n)[:-1], out=out[1:])
    return out


def recall_cutoff(fraction_of_r: np.ndarray, o: EvalOptions) -> np.ndarray:
    """A number of documents from a fraction of R (r · R >= 0), as trec_eval rounds it.

    trec_eval 9.0.8: ``(long)(x + 0.9)``; 10.0: ``lround(x)`` (halves away from zero),
    for IPrec and 11pt (10.0's Rprec_mult still adds 0.9: see its kernel).

    >>> x = np.array([0.0, 0.05, 0.4, 0.5, 2.5, 2.6])
    >>> recall_cutoff(x, EvalOptions()).tolist()
    [0, 0, 1, 1, 3, 3]
    >>> recall_cutoff(x, EvalOptions(trec_eval="10.0")).tolist()
    [0, 0, 0, 1, 3, 3]
    """
    if o.trec_eval == "10.0":
        whole = np.trunc(fraction_of_r)  # x - trunc(x) is exact: halves are found exactly
        return (whole + (fraction_of_r - whole >= 0.5)).astype(np.int64)
    return (fraction_of_r + 0.9).astype(np.int64)


def iprec_levels(r: Ranked, m: Measure, o: EvalOptions, levels: np.ndarray) -> np.ndarray:
    """Interpolated precision at recall levels (queries x levels), as trec_eval.

    The level r needs c relevant documents: c = (long)(r * R + 0.9) under trec_eval
    9.0.8, c = lround(r * R) under 10.0 (``options.trec_eval``). Value: the highest
    precision at or below the rank of the max(c, 1)-th relevant document; 0 when
    fewer are retrieved; NaN (undefined, trec_eval's 0 / 0) when c = 0 and the ranking
    is empty (``-J`` removed every document).
    """
    rel = relevant_mask(r, m, o)
    n_rel = r.n_relevant(m.threshold(o))
    rel_rows = np.flatnonzero(rel)  # rows of relevant docs, grouped by query in rank order
    rel_q = r.qidx[rel_rows]
    rel_start = np.concatenate(([0], np.cumsum(np.bincount(rel_q, minlength=r.n_queries))))
    n_rel_ret = np.diff(rel_start)
    # Precision at the j-th relevant row of a query is j / rank. Below a relevant row the
    # best precision is reached at a relevant row (after one, precision only falls until
    # the next), so the running maximum is taken over the relevant rows alone: the same
    # values as over every row, on a far shorter array.
    hits = np.arange(1, len(rel_rows) + 1, dtype=np.int64) - np.repeat(rel_start[:-1],
                                                                         n_rel_ret)
    prec = hits / np.maximum(r.pos[rel_rows], 1)
    best_below = seg_reverse_cummax(prec, rel_q, r.n_queries)
    cut = recall_cutoff(levels[None, :] * n_rel[:, None], o)
    need = np.maximum(cut, 1)
    ok = (need <= n_rel_ret[:, None]) & (n_rel_ret[:, None] > 0)
    out = np.zeros(need.shape)
    idx = rel_start[:-1, None] + need - 1
    out[ok] = best_below[idx[ok]]
    # trec_eval starts from the precision of the whole ranking, 0 / 0 for an empty one
    # (-J leaving no judged document; 10.0's -c evaluates a missing query as a ranking of
    # one unjudged document, empty under -J): the levels needing 0 relevant are undefined
    empty = (r.n_retrieved == 0) & (r.in_run | ((o.trec_eval == "10.0") & o.judged_only))
    out[empty[:, None] & (cut == 0)] = np.nan
    return out


def iprec(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Interpolated precision at recall level r: max precision at any recall >= r."""
    return iprec_levels(r, m, o, np.array([m.cutoff]))[:, 0]


ELEVEN_POINTS = np.round(np.arange(11) / 10, 2)


def eleven_point(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Mean of IPrec at recall 0.0, 0.1, ..., 1.0 (trec_eval 11pt_avg), or at the recall
    ``levels`` given (``11pt(levels={.25,.5,.75})``, trec_eval's ``-m 11pt_avg..25,.5,.75``;
    a level given twice counts twice, as in trec_eval). The levels are added in trec_eval's
    order (the last first), so the value has its bits; NaN when one level is NaN."""
    values = iprec_levels(r, m, o, recall_levels(str(m.get("levels"))))
    total = np.zeros(r.n_queries)
    for j in range(values.shape[1] - 1, -1, -1):  # trec_eval's order: last level first
        total += values[:, j]
    return total / values.shape[1]


def recall_levels(text: str) -> np.ndarray:
    """The recall levels of a ``levels`` parameter written ``{0.25,0.5,0.75}``.

    >>> recall_levels("{0.25,0.5,0.75}").tolist()
    [0.25, 0.5, 0.75]
    """
    return np.array([float(x) for x in text.strip("{}").split(",")], dtype=np.float64)


def parse_levels(text: str) -> str:
    """The ``kind`` of 11pt's ``levels``: ``{r1,r2,...}``, each a recall level in [0, 1];
    written back sorted (trec_eval's 11pt_avg walks its levels in increasing order)."""
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected recall levels like {{0.25,0.5,0.75}}, got {text!r}")
    levels = sorted(float(x) for x in text[1:-1].split(",") if x.strip())
    if not levels or not all(0.0 <= x <= 1.0 for x in levels):
        raise ValueError(f"expected recall levels in [0, 1], got {text!r}")
    return "{" + ",".join(repr(x) for x in levels) + "}"


def num_rel_aggregate(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray) -> float:
    """NumRel summed over queries; with ``complete`` (``-c``), as trec_eval prints it: every
    judgment graded > 0 of every qrels query, whatever the relevance level (its ``-c`` total
    recounts the qrels with ``rel > 0``). A measure's own ``rel=`` keeps the plain sum."""
    return float(np.nansum(num_rel_terms(r, m, o, values)))


def num_rel_terms(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray) -> np.ndarray:
    """What each query adds to :func:`num_rel_aggregate` (its distributed partials)."""
    if o.complete and dict(m.params).get("rel") is None:
        return np.bincount(r.ideal_qidx, weights=r.ideal_grade > 0, minlength=r.n_queries)
    return values


def sum_aggregate(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray) -> float:
    """Counts are summed over queries, as trec_eval prints them."""
    return float(np.nansum(values))


def _sum_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    return float(np.nansum(values))  # the rule of sum_aggregate


def _num_rel_partials(r: Ranked, m: Measure, o: EvalOptions) -> tuple[np.ndarray, ...]:
    return (num_rel_terms(r, m, o, num_rel(r, m, o)),)


def _num_rel_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    return float(np.nansum(partials[0]))  # the rule of num_rel_aggregate


SUM_PARTS = PartAggregate(_sum_combine)
""":func:`sum_aggregate` over partitions: the sum of every query's value."""
NUM_REL_PARTS = PartAggregate(_num_rel_combine, _num_rel_partials)
""":func:`num_rel_aggregate` over partitions: each query's :func:`num_rel_terms`, summed."""
