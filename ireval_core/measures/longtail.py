"""trec_eval's long tail: the measures of its ``all_trec`` beyond the core families.

Each kernel takes a :class:`~ireval_core.data.Ranked` (all queries at once) and returns one
float64 per query, vectorised like the rest: a few passes over the ranked rows (or over the
relevant rows only), never a loop over queries. Definitions follow trec_eval's ``m_*.c``
(10.0's source, identical here to 9.0.8's); ``docs/semantics.md`` has a section on each.

Grades as trec_eval reads them: relevant when grade >= the threshold; judged non-relevant
when 0 <= grade < threshold; a negative grade is in the pool but unjudged (trec_eval's
``RELVALUE_UNJUDGED``), a document absent from the qrels was never pooled
(``RELVALUE_NONPOOL``). Most measures treat both kinds of unjudged as non-relevant; infAP
and gm_bpref tell them apart, Unjudged and RBPResid count them.

* ``GMAP`` (gm_map), ``GMbpref`` (gm_bpref): AP and bpref per query, averaged by a
  geometric mean with every value floored at 1e-5 (trec_eval's ``MIN_GEO_MEAN``);
* ``BinG`` (binG), ``SetAP`` (set_map), ``RelativeP`` (relative_P_k, set_relative_P),
  ``Utility`` (utility), ``Unjudged`` (unj_k), ``RBPResid`` (rbp_resid), ``infAP``;
* ``G``, ``nDCGRel`` (ndcg_rel), ``RnDCG`` (Rndcg): trec_eval's experimental gain measures,
  with its default gains (the grades) or a gain map (trec_eval's ``-m G.1=3,2=9``).
"""

from __future__ import annotations

import numpy as np

from ..data import Ranked
from ..options import EvalOptions
from .binary import average_precision, bpref, group_starts, relevant_mask
from .gain import gain_table, gains, powers
from .registry import (
    PROBABILITY,
    REL,
    Family,
    Measure,
    Param,
    PartAggregate,
    finite_float,
    parse_gain,
    register,
)
from .segments import safe_div, seg_count, seg_sum

__all__ = ["MIN_GEO_MEAN", "bin_g", "g_measure", "geometric_mean", "inf_ap", "ndcg_rel",
           "rbp_residual", "relative_p", "rndcg", "set_ap", "unjudged", "utility"]

MIN_GEO_MEAN = 1e-5
"""The floor of every value in a geometric mean (trec_eval's ``MIN_GEO_MEAN``)."""
INFAP_EPSILON = 1e-5
"""The smoothing constant of infAP (trec_eval's ``INFAP_EPSILON``)."""


def _unjudged(r: Ranked) -> np.ndarray:
    """Retrieved documents without a judgment: absent from the qrels, or graded negative."""
    return ~(r.grade >= 0)  # NaN compares False


# ----------------------------------------------------------------------------- kernels


def geometric_mean(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray) -> float:
    """exp(mean(log(max(v, 1e-5)))) over the counted queries, as trec_eval's gm_map.

    With ``complete``, a query without a ranking scores 0 and so adds log(1e-5), as
    trec_eval ``-c`` does.
    """
    return floored_geometric_mean(values)


def floored_geometric_mean(values: np.ndarray) -> float:
    """The rule of :func:`geometric_mean` on per-query values alone (NaN left out).

    >>> round(floored_geometric_mean(np.array([0.5, 0.0, 0.2, np.nan])), 6)
    0.01
    """
    v = values[~np.isnan(values)]
    if not v.size:
        return float("nan")
    return float(np.exp(np.sum(np.log(np.maximum(v, MIN_GEO_MEAN))) / v.size))


def bin_g(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """binG = (1/R) Σ over relevant retrieved of 1 / log2(2 + documents not relevant above)."""
    rows = np.flatnonzero(relevant_mask(r, m, o))
    q = r.qidx[rows]
    rel_so_far = np.arange(1, len(rows) + 1, dtype=np.int64) - group_starts(q, r.n_queries)[q]
    # trec_eval's log2(3 + i - rel_so_far), i the 0-based rank: 2 + non-relevant above
    term = 1.0 / np.log2((3 + (r.pos[rows] - 1) - rel_so_far).astype(np.float64))
    return safe_div(seg_sum(term, q, r.n_queries), r.n_relevant(m.threshold(o)))


def set_ap(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """set_map = relevant retrieved² / (retrieved · R): set recall times set precision."""
    hits = seg_count(relevant_mask(r, m, o), r.qidx, r.n_queries).astype(np.float64)
    return safe_div(hits * hits, r.n_retrieved * r.n_relevant(m.threshold(o)))


def relative_p(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Relevant in the top k / min(k, R) (trec_eval relative_P_k); without a cutoff, relevant
    retrieved / min(retrieved, R) (set_relative_P). 0 when R = 0."""
    rel = relevant_mask(r, m, o)
    n_rel = r.n_relevant(m.threshold(o))
    if m.cutoff is None:
        hits = seg_count(rel, r.qidx, r.n_queries)
        return safe_div(hits, np.minimum(r.n_retrieved, n_rel))
    hits = seg_count(rel & (r.pos <= m.k), r.qidx, r.n_queries)
    return safe_div(hits, np.minimum(float(m.cutoff), n_rel))


def utility(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """a·(rel retrieved) + b·(other retrieved) + c·(rel missed) + d·(other not retrieved).

    "Other not retrieved" is ``docs`` + rel retrieved − retrieved − R (``docs``: the
    collection size, trec_eval ``-N``, 0 by default). A query without a ranking scores 0
    (trec_eval ``-c``), whatever the coefficients.
    """
    rel_ret = seg_count(relevant_mask(r, m, o), r.qidx, r.n_queries).astype(np.float64)
    ret = r.n_retrieved.astype(np.float64)
    n_rel = r.n_relevant(m.threshold(o))
    value = (m.number("a") * rel_ret + m.number("b") * (ret - rel_ret)
             + m.number("c") * (n_rel - rel_ret)
             + m.number("d") * (m.number("docs") + rel_ret - ret - n_rel))
    return np.where(r.in_run, value, 0.0)


def unjudged(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Unjudged documents in the top k / k; short rankings count as judged below their end."""
    hits = seg_count(_unjudged(r) & (r.pos <= m.k), r.qidx, r.n_queries)
    return hits / float(m.cutoff or 1)


def rbp_residual(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """The most RBP(p) could rise if every unjudged retrieved document were relevant:
    p^n + (1 − p) Σ over unjudged ranks i of p^(i−1), n = retrieved; 0 when none is unjudged
    (trec_eval's rbp_resid, which then leaves out the p^n of the unseen tail too).

    As p^n + (1 − p) Σ over all n ranks of p^(i−1) = 1, that is 1 − (1 − p) Σ over the
    judged ranks of p^(i−1): summed over the judged rows, usually the few.
    """
    p = m.number("p")
    rows = np.flatnonzero(r.grade >= 0)
    q = r.qidx[rows]
    judged = seg_sum(powers(p, r.pos)[r.pos[rows] - 1], q, r.n_queries)
    some_unjudged = np.bincount(q, minlength=r.n_queries) < r.n_retrieved
    return np.where(some_unjudged, 1.0 - (1.0 - p) * judged, 0.0)


def inf_ap(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """Inferred AP (Yilmaz & Aslam): AP estimated from a judged sample of the pool.

    At the relevant document of 0-based rank j > 0: 1/(j+1) + (j/(j+1)) · (pooled above / j)
    · (relevant above + ε) / (relevant above + non-relevant above + 2ε), ε = 1e-5, where
    "pooled" counts every judged or negative-graded document (a document absent from the
    qrels was never pooled); at rank 0: 1. Summed and divided by R, as trec_eval's infAP.
    """
    t = m.threshold(o)
    # Over the pooled rows only (every relevant row is one): the counts "above" a relevant
    # row are counts of pooled rows of its query before it, exact integers.
    pooled = np.flatnonzero(~np.isnan(r.grade))
    g = r.grade[pooled]
    pq = r.qidx[pooled]
    rel = g >= t
    at = np.flatnonzero(rel)  # relevant rows, as indices into ``pooled``
    if not at.size:
        return np.zeros(r.n_queries)
    q = pq[at]
    first = group_starts(pq, r.n_queries)[q]  # the query's first pooled row
    nonrel = np.zeros(len(g) + 1, dtype=np.int64)  # judged non-relevant rows before each
    np.cumsum((g >= 0) & ~rel, out=nonrel[1:])
    rel_above = (np.arange(len(at), dtype=np.int64) - group_starts(q, r.n_queries)[q]
                 ).astype(np.float64)
    pooled_above = (at - first).astype(np.float64)
    nonrel_above = (nonrel[at] - nonrel[first]).astype(np.float64)
    j = (r.pos[pooled[at]] - 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):  # j = 0 is taken from the 1.0 below
        later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * (pooled_above / j)
                 * ((rel_above + INFAP_EPSILON)
                    / (rel_above + nonrel_above + 2 * INFAP_EPSILON)))
    term = np.where(j == 0, 1.0, later)
    return safe_div(seg_sum(term, q, r.n_queries), r.n_relevant(t))


# ----------------------------------------------------------------------------- trec_eval's gains
# G, ndcg_rel and Rndcg take trec_eval's default gains: the grade of a judged document
# (unjudged documents and grades <= 0 gain 0), and the ideal ranking of the query's judged
# grades, descending (ireval's ideal from the qrels). The relevance level is not used.
# With a gain map (``gain={1:3,2:9}``, trec_eval's ``-m G.1=3,2=9``) a grade gains its
# value in the map; the ideal is then the judged documents by gain, descending.


def _seg_cumsum(values: np.ndarray, q: np.ndarray, n: int) -> np.ndarray:
    """Inclusive running sum of ``values`` within each query (``q`` grouped, ascending).

    By doubling (log2 of the longest query passes), so every query's sums are computed
    from its own values alone: the same bits whatever other queries are evaluated with it
    (a running sum over all queries minus the sum before the query would round
    differently in another partition of the Dask engine).

    Whole numbers whose magnitudes sum below 2^52 (the run's linear or exponential gains)
    add exactly in any order: then one running sum over all queries, minus the sum before
    each query, gives those same bits. Otherwise the queries are laid out as the columns
    of a zero-padded grid when it is small (at most four times the values), so each pass
    is one addition of two contiguous blocks; or each pass takes the entries at least
    ``step`` into their query. Both add the same pairs.
    """
    out = np.asarray(values, dtype=np.float64).copy()
    if out.size < 2:
        return out
    start = group_starts(q, n)
    if np.array_equal(out, np.trunc(out)) and float(np.abs(out).sum()) < 2.0 ** 52:
        running = np.cumsum(out)
        before = np.concatenate(([0.0], running))[start]
        return running - before[q]
    local = np.arange(len(out), dtype=np.int64) - start[q]  # 0-based within its query
    width = int(local.max()) + 1
    new_query = np.ones(len(out), dtype=bool)
    new_query[1:] = q[1:] != q[:-1]
    column = np.cumsum(new_query) - 1  # the queries with values, numbered 0, 1, ...
    n_columns = int(column[-1]) + 1
    if n_columns * width <= 4 * len(out):
        grid = np.zeros((width, n_columns))  # row l: the l-th entry of every query
        cell = local * n_columns + column
        grid.ravel()[cell] = out
        step = 1
        while step < width:  # entry l adds entry l - step (the padding is only read)
            grid[step:] = grid[step:] + grid[:-step]
            step *= 2
        return grid.ravel()[cell]
    take = np.flatnonzero(local >= 1)
    step = 1
    while take.size:
        out[take] = out[take] + out[take - step]
        step *= 2
        take = take[local[take] >= step]
    return out


def _positive_ideal(r: Ranked, spec: str = "linear"
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The ideal ranking's gains > 0: (gains, query of each, 1-based position, P per query).

    Sorted descending within each query, so these are each query's first P positions.
    ``spec``: the measure's gain (:func:`~.gain.gains`); a map need not grow with the
    grade, so its gains are sorted again.
    """
    keep = np.flatnonzero(r.ideal_grade > 0)  # only a positive grade gains (gains())
    g, q = r.ideal_grade[keep], r.ideal_qidx[keep]
    if spec != "linear":  # the map of the positive grades only: a fraction of the qrels
        g = gains(g, spec)
        keep = np.flatnonzero(g > 0)
        g, q = g[keep], q[keep]
    if spec not in ("linear", "exp"):  # by query, then gain descending (one integer key)
        levels = np.unique(gain_table(spec)[1])  # g holds the map's values > 0 only
        order = np.argsort(q * len(levels) + (len(levels) - 1 - np.searchsorted(levels, g)),
                           kind="stable")
        g, q = g[order], q[order]
    n_pos = np.bincount(q, minlength=r.n_queries)
    pos = np.arange(len(g), dtype=np.int64) - group_starts(q, r.n_queries)[q] + 1
    return g, q, pos, n_pos


def _gaining(r: Ranked, spec: str = "linear") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Retrieved rows that gain (gain > 0): (rows, their query, their gain)."""
    rows = np.flatnonzero(r.grade > 0)  # only a positive grade gains (gains())
    if spec == "linear":
        return rows, r.qidx[rows], r.grade[rows]
    g = gains(r.grade[rows], spec)  # the map of these rows only: a fraction of the run
    rows, g = rows[g > 0], g[g > 0]
    return rows, r.qidx[rows], g


def g_measure(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """trec_eval's G: Σ over gaining retrieved documents of gain / log2(2 + cost − gained),
    cost = Σ over ranks so far of max(ideal gain, 1), gained = Σ of the run's gains so far;
    divided by the sum of the ideal gains."""
    spec = str(m.get("gain"))
    rows, q, g = _gaining(r, spec)
    ig, iq, _, n_pos = _positive_ideal(r, spec)
    first = group_starts(iq, r.n_queries)
    cost_cum = np.concatenate(([0.0], np.cumsum(np.maximum(ig, 1.0))))
    pos = r.pos[rows].astype(np.int64)
    k = np.minimum(pos, n_pos[q])  # ideal positive positions at or above the row
    # Σ over the first k ideal positions of max(gain, 1), then 1 per rank below them
    cost = (cost_cum[first[q] + k] - cost_cum[first[q]]) + (pos - k)
    gained = _seg_cumsum(g, q, r.n_queries)
    term = g / np.log2(2.0 + cost - gained)
    return safe_div(seg_sum(term, q, r.n_queries), seg_sum(ig, iq, r.n_queries))


def _dcg_parts(r: Ranked, spec: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                              np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(rows, q, DCG up to each gaining row, IDCG prefix per ideal position (flat), ideal
    query, P per query, full IDCG per query, ideal gains (flat)), with the gains of
    ``spec`` and log2(rank + 1)."""
    rows, q, g = _gaining(r, spec)
    dcg_at = _seg_cumsum(g / np.log2(r.pos[rows] + 1.0), q, r.n_queries)
    ig, iq, ipos, n_pos = _positive_ideal(r, spec)
    iw = ig / np.log2(ipos + 1.0)
    return (rows, q, dcg_at, _seg_cumsum(iw, iq, r.n_queries), iq, n_pos,
            seg_sum(iw, iq, r.n_queries), ig)


def ndcg_rel(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """trec_eval's ndcg_rel: nDCG averaged over the P documents with gain > 0 in the ideal
    ranking; a retrieved one contributes nDCG at its rank (IDCG over min(rank, P)
    positions), a missed one DCG / IDCG of the whole ranking."""
    rows, q, dcg_at, idcg_cum, iq, n_pos, idcg, _ = _dcg_parts(r, str(m.get("gain")))
    first = group_starts(iq, r.n_queries)
    k = np.minimum(r.pos[rows].astype(np.int64), n_pos[q])
    term = dcg_at / idcg_cum[first[q] + k - 1]
    found = np.bincount(q, minlength=r.n_queries)
    dcg = np.zeros(r.n_queries)
    last = np.flatnonzero(np.append(q[1:] != q[:-1], True)) if q.size else q
    dcg[q[last]] = dcg_at[last]
    total = seg_sum(term, q, r.n_queries) + (n_pos - found) * safe_div(dcg, idcg)
    return np.where(total > 0, safe_div(total, n_pos), 0.0)


def rndcg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """trec_eval's Rndcg: nDCG averaged at the R levels, the ranks where the ideal gain
    changes (after the documents of each positive grade), plus the end of the ranking when
    it runs more than one rank past the last positive ideal position; 0 when R = 0."""
    rows, q, dcg_at, idcg_cum, iq, n_pos, idcg, ig = _dcg_parts(r, str(m.get("gain")))
    n = r.n_queries
    # change points: the last ideal position of each positive gain of a query
    change = np.ones(len(ig), dtype=bool)
    change[:-1] = (iq[1:] != iq[:-1]) | (ig[1:] != ig[:-1])
    cq = iq[change]
    c = (np.arange(len(ig), dtype=np.int64) - group_starts(iq, n)[iq] + 1)[change]
    upto = np.minimum(c, r.n_retrieved[cq])  # DCG over the run's first min(c, n) ranks
    # (query, rank) as one sortable key: any width above every rank compared will do
    width = max(int(r.pos[rows].max()) if rows.size else 0, int(upto.max()) if upto.size else 0) + 2
    keys = q.astype(np.int64) * width + r.pos[rows]
    at = np.searchsorted(keys, cq.astype(np.int64) * width + upto, side="right") - 1
    hit = at >= 0
    hit[hit] = q[at[hit]] == cq[hit]
    dcg_c = np.zeros(len(at))
    dcg_c[hit] = dcg_at[at[hit]]
    points = seg_sum(dcg_c / idcg_cum[change], cq, n)
    count = np.bincount(cq, minlength=n).astype(np.float64)
    # the end of the ranking, when it goes beyond P + 1 ranks
    dcg = np.zeros(n)
    last = np.flatnonzero(np.append(q[1:] != q[:-1], True)) if q.size else q
    dcg[q[last]] = dcg_at[last]
    extra = (r.n_retrieved > n_pos + 1) & (idcg > 0)
    points = points + np.where(extra, safe_div(dcg, idcg), 0.0)
    count = count + extra
    with np.errstate(invalid="ignore", divide="ignore"):  # no level at all: NaN, as 0/0
        value = points / count
    return np.where(r.n_relevant(m.threshold(o)) > 0, value, 0.0)


# ----------------------------------------------------------------------------- registry

_FORM = Param("form", "trec", "trec_eval's form or the original (1/R)Σ(1 − N_above/R)",
              choices=("trec", "original"))
_GEOMETRIC = ("geometric mean over queries, each value floored at 1e-5 (trec_eval; a query "
              "without a ranking under -c counts as 1e-5)")
_NUMBER = "a finite number"

def _gm_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    return floored_geometric_mean(values)  # the rule of geometric_mean


GEOMETRIC_PARTS = PartAggregate(_gm_combine)
""":func:`geometric_mean` over partitions: the floored geometric mean of every query's value."""


register(Family("GMAP", average_precision, "AP per query (Σ over relevant ({rel}) ranks r "
                "of P@r, / R); the mean is geometric, rewarding runs that fail no query",
                cutoff="none", params=(REL,), aggregate=geometric_mean, parts=GEOMETRIC_PARTS,
                aggregate_rule=_GEOMETRIC, trec="gm_map", aliases=("gm_map", "GM_AP"),
                perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("GMbpref", bpref, "bpref per query (as bpref, relevant: {rel}, form {form}); "
                "the mean is geometric", cutoff="none", params=(REL, _FORM),
                aggregate=geometric_mean, parts=GEOMETRIC_PARTS, aggregate_rule=_GEOMETRIC,
                trec="gm_bpref",
                aliases=("gm_bpref",), perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("BinG", bin_g, "(1/R) Σ over relevant ({rel}) retrieved documents of "
                "1 / log2(2 + documents not relevant above it) (trec_eval's binary G)",
                cutoff="none", params=(REL,), trec="binG", aliases=("binG",),
                perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("SetAP", set_ap, "relevant ({rel}) retrieved² / (retrieved · R): set precision "
                "times set recall, 0 when nothing is retrieved or R = 0", cutoff="none",
                params=(REL,), trec="set_map", aliases=("set_map",),
                prefix=False, monotone=False, explained=False))
register(Family("RelativeP", relative_p, "relevant ({rel}) in the top {k} / min({k}, R): "
                "precision up to rank R, recall after it; 0 when R = 0",
                params=(REL,), trec="relative_P_k / set_relative_P",
                aliases=("RelP", "SetRelP"), perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("Utility", utility, "a·(relevant retrieved) + b·(other retrieved) + "
                "c·(relevant not retrieved) + d·(others not retrieved, of a collection of "
                "{docs} documents), a = {a}, b = {b}, c = {c}, d = {d}, relevant: {rel}; "
                "0 for a query without a ranking",
                cutoff="none", params=(REL,
                                       Param("a", 1.0, "worth of a relevant retrieved "
                                             "document", kind=finite_float, rule=_NUMBER),
                                       Param("b", -1.0, "worth of another retrieved document",
                                             kind=finite_float, rule=_NUMBER),
                                       Param("c", 0.0, "worth of a relevant document not "
                                             "retrieved", kind=finite_float, rule=_NUMBER),
                                       Param("d", 0.0, "worth of another document not "
                                             "retrieved", kind=finite_float, rule=_NUMBER),
                                       Param("docs", 0.0, "documents in the collection "
                                             "(trec_eval -N), used by d",
                                             kind=finite_float, check=lambda v: v >= 0,
                                             rule="a finite number >= 0")),
                bounds=(None, None), trec="utility", aliases=("utility",),
                prefix=False, monotone=False, explained=False))
register(Family("Unjudged", unjudged, "unjudged documents (not in the qrels, or graded "
                "negative) in the top {k} / {k}: the share of the ranking the labels miss",
                cutoff="required", binary=False, trec="unj_k", aliases=("unj",),
                prefix=False, monotone=False, explained=False))
register(Family("RBPResid", rbp_residual, "how much RBP(p = {p}) could rise if every unjudged "
                "retrieved document were relevant: p^n + (1 − p)·Σ over unjudged ranks i of "
                "p^(i−1), n = retrieved; 0 when none is unjudged", cutoff="none",
                params=(Param("p", 0.9, "persistence", **PROBABILITY),), binary=False,
                trec="rbp_resid", aliases=("rbp_resid",),
                prefix=False, monotone=False, explained=False))
_TREC_GAIN = Param("gain", "linear", "gain of a grade: linear = the grade (trec_eval's "
                   "default), exp = 2^g - 1, or a map {grade:gain,...} (trec_eval's "
                   "-m G.1=3,2=9)", choices=("linear", "exp"), kind=parse_gain,
                   rule="linear, exp or a non-empty map {grade:gain,...}")
_TREC_GAINS = ("gains: {gain} (grades <= 0, unjudged documents, grades absent from a map and "
               "gains <= 0 give nothing), the ideal is every judged document of the query "
               "by gain, descending")
register(Family("G", g_measure, "Σ over gaining retrieved documents of gain / log2(2 + cost − "
                "gained), cost = Σ over the ranks so far of max(ideal gain, 1), gained = Σ of "
                "the run's gains so far; / Σ ideal gains (trec_eval's experimental G); "
                + _TREC_GAINS, cutoff="none", params=(_TREC_GAIN,), binary=False, trec="G",
                prefix=False, monotone=False, explained=False))
register(Family("nDCGRel", ndcg_rel, "nDCG averaged over the documents with a gain in the "
                "ideal ranking: a retrieved one at its rank (IDCG over min(rank, P) positions), "
                "a missed one at the end of the ranking (trec_eval's ndcg_rel); "
                + _TREC_GAINS, cutoff="none", params=(_TREC_GAIN,), binary=False,
                trec="ndcg_rel", aliases=("ndcg_rel",), perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("RnDCG", rndcg, "nDCG averaged at the R levels: the ranks where the ideal gain "
                "drops (after the documents of each gain), and the end of the ranking when "
                "it is longer; 0 when no document is relevant ({rel}) (trec_eval's Rndcg); "
                + _TREC_GAINS, cutoff="none", params=(REL, _TREC_GAIN), trec="Rndcg",
                aliases=("Rndcg",), perfect_is_one=True,
                prefix=False, monotone=False, explained=False))
register(Family("infAP", inf_ap, "inferred AP (Yilmaz & Aslam): AP estimated from a judged "
                "sample of the pool; negative grades are pooled but unjudged, documents "
                "absent from the qrels unpooled; relevant: {rel}", cutoff="none",
                params=(REL,), trec="infAP", aliases=("InfAP",),
                prefix=False, monotone=False, explained=False))
