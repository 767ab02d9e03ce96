"""Pairwise kernels: AUC, GAUC and PNR per query, and Kendall's tau between orderings.

The kernels take a :class:`~ireval_core.data.Ranked` (all queries at once, entries
in ranking order: score descending, docid descending) and look only at the
**judged** retrieved documents (grade >= 0): unjudged documents (NaN) and pooled
but unjudged ones (negative grade) are ignored, unlike the precision family where
they count as non-relevant. An optional cutoff ``@k`` keeps the top k first.

* ``AUC``: the probability that a relevant document (grade >= threshold) scores
  higher than a judged non-relevant one, score ties counting ½ (Mann–Whitney U /
  (n_pos · n_neg), equal to ``sklearn.metrics.roc_auc_score`` on the query's
  judged documents). Undefined (NaN) for a query lacking either class.
* ``GAUC``: the same per-query values, averaged plainly or weighted by
  impressions (judged retrieved documents) over the queries where AUC is defined.
* ``PNR``: over pairs of judged documents with different grades, concordant
  (higher grade scored higher) / discordant (higher grade scored lower); pairs
  with equal scores are excluded. Seed 003's wording also counts equal-grade pairs
  as positive; we count only unequal-grade pairs. The aggregate is
  Σ concordant / Σ discordant over queries, not a mean of ratios.

Every count is exact integer arithmetic (held in float64 below 2**53). Counting
is vectorised over all queries: equal (query, score) runs form tie groups, and
cumulative counts over the groups of a query give, for every document, how many
documents of the other class score strictly lower or higher. PNR loops over the
distinct grade levels (a handful: 0–4 typically), never over queries.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..data import Ranked, Run, pick_segments
from ..errors import invalid_parameter
from ..idcodes import doc_code_map, id_positions
from ..options import EvalOptions
from ..params import POSITIVE_INT, check
from .registry import Family, Measure, Param, finite_float, register
from .segments import safe_div

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["auc", "auc_counts", "gauc_aggregate", "kendall_tau", "kendall_tau_runs",
           "pnr", "pnr_aggregate", "pnr_counts", "system_ranking_tau", "tie_groups"]


# ---------------------------------------------------------------- building blocks

def tie_groups(qidx: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tie groups of entries sorted by (query, score descending).

    Returns ``(gid, start)``: the 0-based group of every entry (a run of equal
    query and score) and the mask of entries that start a group.
    """
    start = np.ones(len(qidx), dtype=bool)
    start[1:] = (qidx[1:] != qidx[:-1]) | (score[1:] != score[:-1])
    return np.cumsum(start) - 1, start


def _within_query_cumsum(values: np.ndarray, gq: np.ndarray, n: int) -> np.ndarray:
    """Inclusive running sum of per-group ``values`` within each query (groups in order)."""
    c = np.cumsum(values, dtype=np.int64)
    first = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(gq, minlength=n), out=first[1:])
    before = np.concatenate(([0], c))[first[:-1]]
    return c - before[gq]


def auc_counts(qidx: np.ndarray, score: np.ndarray, positive: np.ndarray,
               n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mann–Whitney counts per query for entries sorted by (query, score descending).

    Returns ``(twice_u, n_pos, n_neg)`` (float64, exact integers): ``twice_u`` is
    2 · Σ over (positive, negative) pairs of [s_pos > s_neg] + ½ [s_pos = s_neg], so
    AUC = twice_u / (2 · n_pos · n_neg).
    """
    positive = np.asarray(positive, dtype=bool)
    if len(qidx) == 0:
        z = np.zeros(n)
        return z, z.copy(), z.copy()
    start = np.ones(len(qidx), dtype=bool)  # where a tie group starts (see tie_groups)
    start[1:] = (qidx[1:] != qidx[:-1]) | (score[1:] != score[:-1])
    first = np.flatnonzero(start)  # tie groups are contiguous: counted by their bounds
    gq = qidx[first]
    pos_g = np.add.reduceat(positive.view(np.int8), first, dtype=np.int64)
    neg_g = np.diff(np.append(first, len(qidx))) - pos_g
    n_pos = np.bincount(gq, weights=pos_g, minlength=n)  # whole numbers: exact
    n_neg = np.bincount(gq, weights=neg_g, minlength=n).astype(np.int64)
    neg_below = n_neg[gq] - _within_query_cumsum(neg_g, gq, n)
    twice_u = np.bincount(gq, weights=pos_g * (2 * neg_below + neg_g), minlength=n)
    return twice_u, n_pos, n_neg.astype(np.float64)


def _judged_rows(r: Ranked, m: Measure) -> np.ndarray:
    """Rows of judged (grade >= 0) retrieved documents within the cutoff, in ranking order."""
    keep = r.grade >= 0
    if m.cutoff is not None:
        keep &= r.pos <= m.k
    return np.flatnonzero(keep)


def pnr_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den; inf where den = 0 < num; NaN where both are 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    out[(den == 0) & (num > 0)] = np.inf
    return out


# ---------------------------------------------------------------- AUC / GAUC

def _auc_parts(r: Ranked, m: Measure,
               o: EvalOptions) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rows = _judged_rows(r, m)
    return auc_counts(r.qidx[rows], r.score[rows], r.grade[rows] >= m.threshold(o),
                      r.n_queries)


def auc(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """P(relevant scores > judged non-relevant), ties ½; NaN when a class is missing."""
    twice_u, n_pos, n_neg = _auc_parts(r, m, o)
    return safe_div(twice_u, 2.0 * n_pos * n_neg, fill=np.nan)


def gauc_weights(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray | None:
    """Per-query weights of ``GAUC(weight=...)``; ``None`` for the plain mean.

    ``impressions``: the query's judged retrieved documents (within the cutoff);
    ``clicks``: its relevant ones among them (in a click log, the clicked results).
    """
    weight = m.get("weight")
    if weight not in ("impressions", "clicks"):
        return None
    rows = _judged_rows(r, m)
    if weight == "clicks":
        rows = rows[r.grade[rows] >= m.threshold(o)]
    return np.bincount(r.qidx[rows], minlength=r.n_queries)


def gauc_aggregate(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray) -> float:
    """Mean of per-query AUC over queries having both classes, plain or weighted.

    Weighted by :func:`gauc_weights` (impressions or clicks); NaN when no query has
    both classes.
    """
    ok = ~np.isnan(values)
    if not ok.any():
        return float("nan")
    w = gauc_weights(r, m, o)
    if w is not None:
        return float(np.dot(w[ok], values[ok]) / w[ok].sum())
    return float(values[ok].mean())


# ---------------------------------------------------------------- PNR

def pnr_counts(r: Ranked, m: Measure, o: EvalOptions) -> tuple[np.ndarray, np.ndarray]:
    """Concordant and discordant pairs per query (float64, exact integers).

    Over pairs of judged retrieved documents with different grades: concordant when
    the higher grade has the higher score, discordant when it has the lower score;
    equal scores count as neither. O(L · n) for L distinct grade levels.
    """
    n = r.n_queries
    conc = np.zeros(n)
    disc = np.zeros(n)
    rows = _judged_rows(r, m)
    if rows.size < 2:
        return conc, disc
    q, g = r.qidx[rows], r.grade[rows]
    gid, start = tie_groups(q, r.score[rows])
    ng = int(gid[-1]) + 1
    gq = q[start]
    for level in np.unique(g)[1:]:  # the lowest level has no lower grade below it
        lower = g < level
        lower_g = np.bincount(gid[lower], minlength=ng)
        at_g = np.bincount(gid[g == level], minlength=ng)
        at_or_above = _within_query_cumsum(lower_g, gq, n)  # lower grades scoring >= group
        below = np.bincount(q[lower], minlength=n)[gq] - at_or_above
        above = at_or_above - lower_g
        conc += np.bincount(gq, weights=at_g * below, minlength=n)
        disc += np.bincount(gq, weights=at_g * above, minlength=n)
    return conc, disc


def pnr(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Concordant / discordant pairs; inf when only concordant, NaN when no pair counts."""
    return pnr_ratio(*pnr_counts(r, m, o))


def pnr_aggregate(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray) -> float:
    """Σ concordant / Σ discordant over queries (inf when no discordant pair at all)."""
    conc, disc = pnr_counts(r, m, o)
    return float(pnr_ratio(np.array([conc.sum()]), np.array([disc.sum()]))[0])


# ---------------------------------------------------------------- Kendall's tau

def _inversions(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Pairs i < j of the same group with values[i] > values[j], per group.

    Entries must be grouped by ``group`` (contiguous). Bottom-up merge counting
    inside each group, every pass vectorised over all groups: ceil(log2 of the
    longest group) passes, each a stable sort of nearly sorted keys.
    """
    out = np.zeros(n_groups)
    m = len(values)
    if m < 2:
        return out
    group = np.asarray(group, dtype=np.int64)
    first = np.flatnonzero(np.concatenate(([True], group[1:] != group[:-1])))
    lengths = np.diff(np.append(first, m))
    pos = np.arange(m, dtype=np.int64) - np.repeat(first, lengths)  # position in group
    # dense rank of the values (< m), so that block * m + rank < m² never overflows
    cur = np.unique(np.asarray(values), return_inverse=True)[1].reshape(-1).astype(np.int64)
    w = 1
    while w < lengths.max():
        in_block = pos % (2 * w)
        block_first = np.flatnonzero(in_block == 0)  # blocks never cross a group
        block = np.cumsum(in_block == 0) - 1
        # merge the two sorted halves of every block; a stable sort keeps the left
        # half first on equal values, so equal values are never counted
        order = np.argsort(block * m + cur, kind="stable")
        merged_at = np.empty(m, dtype=np.int64)
        merged_at[order] = np.arange(m, dtype=np.int64)
        right = np.flatnonzero(in_block >= w)  # a right half exists only after a full left
        left_not_above = (merged_at[right] - block_first[block[right]]) - (in_block[right] - w)
        out += np.bincount(group[right], weights=w - left_not_above, minlength=n_groups)
        cur = cur[order]
        w *= 2
    return out


def _unique_index(items: Sequence[str] | np.ndarray, name: str) -> pd.Index:
    import pandas as pd

    index = pd.Index(np.asarray(items, dtype=object))
    if not index.is_unique:
        dup = index[index.duplicated()][0]
        raise invalid_parameter(name, "kendall_tau", f"an ordering that does not repeat "
                                f"items ({dup!r} is repeated)", items)
    return index


def kendall_tau(a: Sequence[str] | np.ndarray, b: Sequence[str] | np.ndarray) -> float:
    """Kendall's τ = (P − Q) / (P + Q) between two orderings of the same items (seed 001).

    ``a`` and ``b`` list items best first; items in only one of them are ignored.
    P counts the pairs both orderings put in the same order, Q the others. NaN
    when fewer than two items are shared. Raises ``ValueError`` when an ordering
    repeats an item.

    Examples
    --------
    >>> kendall_tau(["d1", "d2", "d3"], ["d1", "d3", "d2"])
    0.3333333333333333
    >>> kendall_tau(["d1", "d2", "d3", "x"], ["d3", "d2", "d1"])
    -1.0
    """
    ia, ib = _unique_index(a, "a"), _unique_index(b, "b")
    where_b = ib.get_indexer(ia)
    seq = where_b[where_b >= 0]
    n = len(seq)
    if n < 2:
        return float("nan")
    pairs = n * (n - 1) / 2
    q = _inversions(np.zeros(n, dtype=np.int64), seq, 1)[0]
    return float((pairs - 2 * q) / pairs)


def kendall_tau_runs(run_a: Run, run_b: Run, *, depth: int | None = None) -> pd.Series:
    """Per-query Kendall's τ between two runs' orderings of the documents both retrieved.

    Each ranking (score descending, docid descending) is cut to its top ``depth``
    first when given; documents retrieved by only one run are ignored. Indexed by
    the queries of both runs (sorted); NaN where fewer than two documents are shared.
    """
    import pandas as pd

    depth = check(depth, "depth", "kendall_tau_runs", (POSITIVE_INT, None))
    queries = np.intersect1d(run_a.query_ids.astype(str),
                             run_b.query_ids.astype(str)).astype(object)
    nq = len(queries)
    rows_a, off_a = pick_segments(run_a.offsets, id_positions(run_a.query_ids, queries), depth)
    rows_b, off_b = pick_segments(run_b.offsets, id_positions(run_b.query_ids, queries), depth)
    qa = np.repeat(np.arange(nq, dtype=np.int64), np.diff(off_a))
    qb = np.repeat(np.arange(nq, dtype=np.int64), np.diff(off_b))
    rank_a = np.arange(len(qa), dtype=np.int64) - off_a[qa]
    rank_b = np.arange(len(qb), dtype=np.int64) - off_b[qb]
    n_docs = max(len(run_a.doc_ids), 1)
    doc_b = doc_code_map(run_b.doc_ids, run_a.doc_ids)[run_b.dcode[rows_b]]
    key_a = qa * n_docs + run_a.dcode[rows_a]
    known = doc_b >= 0
    key_b = qb[known] * n_docs + doc_b[known]
    _, ia, ib = np.intersect1d(key_a, key_b, assume_unique=True, return_indices=True)
    q = qa[ia]
    order = np.lexsort((rank_a[ia], q))  # shared documents in run_a's order per query
    q, seq = q[order], rank_b[known][ib][order]
    n = np.bincount(q, minlength=nq).astype(np.float64)
    pairs = n * (n - 1) / 2
    disc = _inversions(q, seq, nq)
    tau = safe_div(pairs - 2 * disc, pairs, fill=np.nan)
    return pd.Series(tau, index=pd.Index(queries, name="query"), name="kendall_tau")


def system_ranking_tau(means_a: Mapping[str, float], means_b: Mapping[str, float]) -> float:
    """Kendall's τ = (P − Q)/(P + Q) between two orderings of systems by their means.

    E.g. the same runs scored under two qrels (two labeling rounds). Systems present
    in both mappings with non-NaN means are compared; a pair tied in either mapping
    counts in neither P nor Q (with no ties this equals scipy's τ-b). NaN when no
    pair is ordered by both.

    Examples
    --------
    >>> system_ranking_tau({"a": 0.3, "b": 0.2, "c": 0.1}, {"a": 0.5, "b": 0.1, "c": 0.2})
    0.3333333333333333
    """
    names = [s for s in means_a if s in means_b
             and not (np.isnan(means_a[s]) or np.isnan(means_b[s]))]
    x = np.array([means_a[s] for s in names], dtype=np.float64)
    y = np.array([means_b[s] for s in names], dtype=np.float64)
    sign = np.sign(x[:, None] - x[None, :]) * np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones_like(sign, dtype=bool), k=1)
    p = int(np.count_nonzero((sign > 0) & upper))
    q = int(np.count_nonzero((sign < 0) & upper))
    return float((p - q) / (p + q)) if p + q else float("nan")


# ---------------------------------------------------------------- registration

REL = Param("rel", None, "relevance threshold: relevant when grade >= rel "
            "(default: the evaluation's level, 1)", kind=finite_float, rule="a finite number")
WEIGHT = Param("weight", "none", "query weight in the mean: none = every query with both "
               "classes counts once, impressions = by its judged retrieved documents, "
               "clicks = by its relevant (clicked) ones",
               choices=("none", "impressions", "clicks"))
_AUC_TEXT = ("P(score of a relevant ({rel}) document > score of a judged non-relevant one) "
             "among the judged documents retrieved within {k}, score ties count ½; "
             "undefined for a query lacking either class; unjudged documents ignored")

register(Family("AUC", auc, _AUC_TEXT, params=(REL,),
                perfect_is_one=True,
                aggregate_rule="arithmetic mean over queries having both classes",
                aliases=("ROC_AUC",)))
register(Family("GAUC", auc, _AUC_TEXT + "; query weight: {weight}", params=(REL, WEIGHT),
                aggregate=gauc_aggregate, perfect_is_one=True,
                aggregate_rule="mean of per-query AUC over queries having both classes: "
                "plain (weight=none), weighted by impressions = judged retrieved documents "
                "(weight=impressions) or by clicks = relevant judged retrieved documents "
                "(weight=clicks)"))
register(Family("PNR", pnr, "concordant / discordant pairs of judged documents retrieved "
                "within {k} with different grades (higher grade scored higher / lower; equal "
                "scores excluded); inf when none is discordant", binary=False,
                bounds=(0.0, None), aggregate=pnr_aggregate,
                aggregate_rule="Σ concordant / Σ discordant over queries (not a mean of "
                "ratios)"))
