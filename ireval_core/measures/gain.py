"""Graded kernels: CG, DCG, nDCG (several gains, discounts and ideals), ERR, RBP.

Gains come from grades: unjudged documents (NaN) and grades <= 0 give no gain.

* gain ``linear``: g (trec_eval's ndcg); ``exp``: 2^g − 1 (Burges et al.); or a
  map ``{grade: gain}`` (grades absent from the map gain 0).
* discount ``log2``: 1 / log2(i + 1); ``jk``: Järvelin–Kekäläinen, 1 at rank 1 and
  1 / log2(i) after (seeds 001, 004).
* ideal ``qrels``: every judged grade of the query sorted descending (trec_eval);
  ``run``: the retrieved documents re-sorted by grade (what sklearn and most
  dashboards do; it hides recall failures, see seed 003).
"""

from __future__ import annotations

import functools

import numpy as np

from ..data import Ranked, descending_within
from ..options import EvalOptions
from .binary import group_starts
from .registry import Measure
from .segments import safe_div, seg_sum


def gains(grade: np.ndarray, spec: str) -> np.ndarray:
    """Gain of each grade under ``spec`` (linear, exp or a ``{g:v,...}`` map).

    Unjudged (NaN) and grades <= 0 gain 0; grades absent from a map gain 0.

    >>> gains(np.array([3.0, 0.0, np.nan, -1.0, 2.0]), "exp").tolist()
    [7.0, 0.0, 0.0, 0.0, 3.0]
    >>> gains(np.array([1.0, 2.0, 3.0]), "{1:1,2:5}").tolist()
    [1.0, 5.0, 0.0]
    """
    if spec not in ("linear", "exp"):
        # a lookup: a grade that is NaN, <= 0 or not a key of the map gains 0.0
        keys, vals = gain_table(spec)
        idx = np.searchsorted(keys, grade)
        np.minimum(idx, len(keys) - 1, out=idx)
        return np.where((keys[idx] == grade) & (grade > 0), vals[idx], 0.0)
    g = np.where(np.isnan(grade), 0.0, grade)
    g = np.maximum(g, 0.0)
    if spec == "linear":
        return g
    return np.exp2(g) - 1.0


@functools.lru_cache(maxsize=64)
def gain_table(spec: str) -> tuple[np.ndarray, np.ndarray]:
    """A gain map ``{g:v,...}`` as (grades ascending, their gains), read-only.

    >>> gain_table("{1:3,2:9}")
    (array([1., 2.]), array([3., 9.]))
    """
    table = dict(
        (float(a), float(b)) for a, b in (item.split(":") for item in spec[1:-1].split(","))
    )
    keys = np.array(sorted(table), dtype=np.float64)
    vals = np.array([table[k] for k in keys], dtype=np.float64)
    keys.flags.writeable = vals.flags.writeable = False
    return keys, vals


def discounts(pos: np.ndarray, spec: str) -> np.ndarray:
    """Discount of each 1-based rank under ``spec`` (log2 or jk).

    >>> discounts(np.array([1, 2, 3]), "jk").round(4).tolist()
    [1.0, 1.0, 0.6309]
    """
    pos = pos.astype(np.float64)
    if spec == "jk":
        return np.where(pos <= 1, 1.0, 1.0 / np.log2(np.maximum(pos, 2.0)))
    return 1.0 / np.log2(pos + 1.0)


def _gaining_rows(r: Ranked, m: Measure) -> np.ndarray:
    """The ranked rows that can gain: a positive grade, within the cutoff.

    Every other row gains 0.0 (:func:`gains`), and adding 0.0 leaves a per-query sum
    (which starts at 0.0) as it was: sums over these rows only have the same bits.
    """
    keep = r.grade > 0
    if m.cutoff is not None:
        keep &= r.pos <= m.k
    return np.flatnonzero(keep)


def _dcg(r: Ranked, m: Measure) -> np.ndarray:
    rows = _gaining_rows(r, m)
    w = gains(r.grade[rows], str(m.get("gain"))) * discounts(r.pos[rows], str(m.get("discount")))
    return seg_sum(w, r.qidx[rows], r.n_queries)


def cg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """CG@k = Σ gain over the top k."""
    rows = _gaining_rows(r, m)
    return seg_sum(gains(r.grade[rows], str(m.get("gain"))), r.qidx[rows], r.n_queries)


def dcg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """DCG@k = Σ gain_i · discount(i) over the top k."""
    return _dcg(r, m)


def ideal_dcg(r: Ranked, m: Measure) -> np.ndarray:
    """IDCG@k from the ideal ranking named by the measure's ``ideal`` parameter."""
    gain, disc = str(m.get("gain")), str(m.get("discount"))
    if m.get("ideal") == "run":
        # the run's own documents by gain, descending: only the positive gains count (a
        # zero comes after them in its query and adds 0.0), so only they are sorted
        g = gains(r.grade, gain)
        rows = np.flatnonzero(g > 0)
        qidx = r.qidx[rows]
        g = descending_within(g[rows], qidx)
        pos = np.arange(len(g), dtype=np.int64) - group_starts(qidx, r.n_queries)[qidx] + 1
    elif gain in ("linear", "exp"):
        # gains grow with the grade: the positive grades lead each query (sorted by grade,
        # descending), keeping their positions in the whole ideal, and the others gain 0.0
        # (adding nothing to the sums): only they are weighed
        rows = np.flatnonzero(r.ideal_grade > 0)
        qidx = r.ideal_qidx[rows]
        g = gains(r.ideal_grade[rows], gain)
        pos = rows - r.ideal_offsets[qidx] + 1
    else:
        g = gains(r.ideal_grade, gain)  # a gain map need not grow with the grade
        g = g[np.lexsort((-g, r.ideal_qidx))]
        qidx = r.ideal_qidx
        pos = np.arange(len(g), dtype=np.int64) - r.ideal_offsets[qidx] + 1
    w = g * discounts(pos, disc)
    if m.cutoff is not None:
        w = np.where(pos <= m.k, w, 0.0)
    return seg_sum(w, qidx, r.n_queries)


def ndcg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """nDCG@k = DCG@k / IDCG@k; IDCG = 0 scores 0 (``idcg_zero="zero"``) or NaN ("drop")."""
    idcg = ideal_dcg(r, m)
    return safe_div(_dcg(r, m), idcg, fill=0.0 if o.idcg_zero == "zero" else np.nan)


def max_grade(r: Ranked, m: Measure) -> float:
    """ERR's top grade: the ``max_grade`` parameter, else the highest grade in the qrels."""
    given = m.get("max_grade")
    return float(r.max_grade if given is None else given)


def err_stop(grade: np.ndarray, gmax: float) -> np.ndarray:
    """ERR's stop probability of each grade, R = (2^g − 1) / 2^g_max (g clipped to
    [0, g_max]; unjudged: 0).

    >>> err_stop(np.array([3.0, 0.0, 2.0, np.nan]), 3.0).tolist()
    [0.875, 0.0, 0.375, 0.0]
    """
    g = np.clip(np.where(np.isnan(grade), 0.0, grade), 0.0, gmax)
    return (np.exp2(g) - 1.0) / np.exp2(gmax)


def err_reach(stop: np.ndarray, qidx: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Probability of reaching each rank unsatisfied: Π_{i<r} (1 − R_i) within its query.

    ``stop`` is flat over the queries' rankings (CSR ``offsets``, query ``qidx`` of each
    row). The exclusive cumulative product is computed in log space (stop < 1 always,
    so the logarithm is finite).

    >>> err_reach(np.array([0.875, 0.0, 0.375]), np.zeros(3, np.int64), np.array([0, 3]))
    array([1.   , 0.125, 0.125])
    """
    log_keep = np.log1p(-stop)
    c = np.cumsum(log_keep)
    before = np.concatenate(([0.0], c))[offsets[:-1]]
    return np.exp(c - log_keep - before[qidx])


def err(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """ERR@k = Σ_r (1/r) R_r Π_{i<r} (1 − R_i), R_i = (2^g_i − 1) / 2^g_max (cascade model)."""
    # Over the rows that can stop the reader only (a positive grade, within the cutoff).
    # The others have stop 0: log(1 − 0) adds ±0.0 to the running log sum and reach × 0
    # adds 0.0 to the sum, so leaving them out gives the same bits.
    rows = _gaining_rows(r, m)
    q = r.qidx[rows]
    stop = err_stop(r.grade[rows], max_grade(r, m))
    reach = err_reach(stop, q, np.append(group_starts(q, r.n_queries), len(q)))
    return seg_sum(reach * stop / r.pos[rows], q, r.n_queries)


def rbp_weights(pos: np.ndarray, p: float) -> np.ndarray:
    """RBP's weight of each 1-based rank: the probability p^(i−1) that it is read.

    >>> rbp_weights(np.array([1, 2, 3]), 0.5).tolist()
    [1.0, 0.5, 0.25]
    """
    return np.power(p, pos - 1.0)


def rbp(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """RBP(p) = (1 − p) Σ rel_i p^(i−1) (Moffat & Zobel).

    ``gain=binary``: rel_i is 1 when the grade reaches the threshold, else 0.
    ``gain=graded`` (trec_eval's ``rbp``): rel_i = grade / G, G the highest judged grade
    of the query when it exceeds 1 (so gains lie in [0, 1]), else the grade itself;
    grades <= 0 and unjudged documents gain 0, and the threshold is not used.
    """
    p = m.number("p")
    # over the rows that gain only (the others add 0.0 to the sums: the same bits), within
    # the cutoff; p^(i-1) looked up in a table of np.power(p, 0..max rank - 1)
    if m.get("gain") == "graded":
        gaining = r.grade > 0
    else:
        gaining = r.grade >= m.threshold(o)
    if m.cutoff is not None:
        gaining &= r.pos <= m.k
    rows = np.flatnonzero(gaining)
    q = r.qidx[rows]
    w = powers(p, r.pos)[r.pos[rows] - 1]
    if m.get("gain") == "graded":
        top = np.zeros(r.n_queries)  # the highest judged grade of each query (sorted first)
        has = np.diff(r.ideal_offsets) > 0
        top[has] = r.ideal_grade[r.ideal_offsets[:-1][has]]
        scale = np.where(top > 1.0, top, 1.0)
        w = r.grade[rows] / scale[q] * w
    return (1.0 - p) * seg_sum(w, q, r.n_queries)


def powers(p: float, pos: np.ndarray) -> np.ndarray:
    """``np.power(p, [0, 1, ..., max(pos) - 1])``: p^(i−1) of every rank i, by lookup."""
    top = int(pos.max()) if pos.size else 0
    return np.power(p, np.arange(top, dtype=np.float64))
