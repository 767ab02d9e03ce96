"""Vectorised kernels shared by the rater-noise trend, the anchor check and the judge report.

* :func:`weighted_combine` -- the labels of every unit combined with a weight per
  rater (a bootstrap count), for many weight vectors at once, by the rules of
  :data:`~ireval_core.labels.judgments.COMBINE_RULES`;
* :func:`resample_counts` -- the query-stage bootstrap as a (resamples x clusters)
  count matrix, so that any sum over clusters becomes one matrix product;
* :func:`kappa_many`, :func:`alpha_many` -- Cohen's weighted kappa and Krippendorff's
  alpha of two coders from many confusion matrices at once;
* :func:`tau_b_many` -- Kendall's tau-b between two score vectors, per resample;
* :func:`snap`, :func:`percentile_interval`, :func:`percentile_intervals`;
* :func:`one_blas_thread` -- a function's matrix products on one BLAS thread.

Every function takes arrays and returns arrays: no Python loop over units, queries or
resamples (only over raters, who are few, and over chunks that bound memory).

>>> import numpy as np
>>> y = np.array([[0.0, 2.0, np.nan], [1.0, 1.0, 3.0]])       # 2 units x 3 raters
>>> weighted_combine(y, np.array([[1, 1, 1], [2, 0, 1]]), "mean").tolist()
[[1.0, 0.0], [1.6666666666666667, 1.6666666666666667]]
>>> counts = np.array([[[3, 1], [0, 4]]])                     # one 2 x 2 confusion matrix
>>> round(float(kappa_many(counts, None)[0]), 4)
0.75
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeVar, cast

import numpy as np
import pandas as pd
from numpy.typing import NDArray
from threadpoolctl import ThreadpoolController

from .trend import resample_indices

__all__ = ["alpha_many", "kappa_many", "one_blas_thread", "percentile_interval",
           "percentile_intervals", "records", "resample_counts", "snap", "tau_b_many",
           "weighted_combine", "whole_counts"]

FloatArray = NDArray[np.float64]
Weights = Literal[None, "linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval"]

_F = TypeVar("_F", bound=Callable[..., Any])
_BLAS: list[ThreadpoolController] = []  # found on first use: numpy's BLAS is loaded by then


def one_blas_thread(fn: _F) -> _F:
    """Run ``fn`` with numpy's matrix products (BLAS) on one thread.

    The bootstraps' products are tall and thin (resamples x a few clusters times a few
    columns): on several threads BLAS spends more CPU waiting for its threads than it
    saves (a judge report at 1,000 points x 10,000 resamples took 24 s of CPU, 16 s on
    one thread). The numbers do not change: BLAS splits a product between threads by
    rows and columns, never along the summed dimension, so every element is computed
    the same way. The previous setting is restored afterwards; when another thread
    already holds the setting, ``threadpoolctl`` leaves it alone (speed only).
    """
    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        if not _BLAS:
            _BLAS.append(ThreadpoolController())
        with _BLAS[0].limit(limits=1, user_api="blas"):
            return fn(*args, **kwargs)
    return cast(_F, run)


_CELLS = 1 << 22  # cells per chunk of the (units x weight vectors x raters) arrays


def weighted_combine(y: FloatArray, v: NDArray[np.int64], combine: str) -> FloatArray:
    """Combined label of each unit under each rater-weight vector.

    Parameters
    ----------
    y:
        ``(units, raters)`` labels, NaN where the rater did not label the unit.
    v:
        ``(vectors, raters)`` integer weights: rater ``r`` counts ``v[o, r]`` times (a
        bootstrap count; all ones gives the plain rule).
    combine:
        ``"mean"`` (weighted mean), ``"median"`` (the middle of the multiset in which
        every label is repeated its rater's weight times, the mean of the two middle
        ones for an even total) or ``"majority"`` (the label with the largest total
        weight, a tie to the lower label).

    Returns
    -------
    ``(units, vectors)``: NaN where every rater of the unit has weight 0 (or nobody
    labeled it). With all weights 1 this is exactly
    :meth:`Judgments.combined <ireval_core.labels.Judgments.combined>` (sums in rater
    order).
    """
    patterns = _label_patterns(y)
    if patterns is not None:  # few distinct rows: combine each once, then copy
        rows, of_unit = patterns
        return _weighted_combine(y[rows], v, combine)[of_unit]
    return _weighted_combine(y, v, combine)


_PATTERNS = 1 << 16  # at most this many possible rows of whole-number labels


def _label_patterns(y: FloatArray) -> tuple[NDArray[np.int64], NDArray[np.int64]] | None:
    """(a unit of each distinct row of ``y``, the distinct row of each unit) when the
    labels are whole numbers (grades) of a small range and rows repeat (4 grades and
    3 raters make at most 125 rows, whatever the number of units); else None. Equal
    rows are combined alike, number for number: combining each once is the same."""
    n_units, n_raters = y.shape
    given = ~np.isnan(y)
    if n_units < 64 or not given.any():
        return None
    values = y[given]
    lo, hi = float(values.min()), float(values.max())
    base = hi - lo + 2.0  # codes 1..hi-lo+1 for the labels, 0 for none
    if (not np.isfinite(base) or base ** n_raters > _PATTERNS
            or not np.array_equal(values, np.trunc(values))
            or (np.signbit(values) & (values == 0)).any()):  # whole numbers; no -0.0
        return None
    code = np.zeros(n_units, dtype=np.int64)
    for r in range(n_raters):  # a loop over raters
        code = code * int(base) + np.where(given[:, r], y[:, r] - lo + 1.0, 0.0).astype(np.int64)
    present = np.flatnonzero(np.bincount(code, minlength=int(base) ** n_raters))
    if 4 * len(present) > n_units:
        return None
    lookup = np.zeros(int(base) ** n_raters, dtype=np.int64)
    lookup[present] = np.arange(len(present))
    of_unit = lookup[code]
    rows = np.zeros(len(present), dtype=np.int64)
    rows[of_unit] = np.arange(n_units)  # any unit of the row: they are all equal
    return rows, of_unit


def _weighted_combine(y: FloatArray, v: NDArray[np.int64], combine: str) -> FloatArray:
    """:func:`weighted_combine`, every unit on its own."""
    n_units, n_raters = y.shape
    n_vec = v.shape[0]
    out = np.full((n_units, n_vec), np.nan)
    given = ~np.isnan(y)
    if combine == "mean":
        y0 = np.where(given, y, 0.0)
        step = max(1, _CELLS // max(n_units, 1))
        for lo in range(0, n_vec, step):  # chunks of weight vectors bound memory
            vv = v[lo:lo + step].astype(np.float64)
            num = np.zeros((n_units, len(vv)))
            den = np.zeros((n_units, len(vv)))
            for r in range(n_raters):  # a loop over raters, in rater order
                num += y0[:, r, None] * vv[None, :, r]
                den += given[:, r, None] * vv[None, :, r]
            np.divide(num, den, out=out[:, lo:lo + step], where=den > 0)
        return out
    rows = max(1, _CELLS // max(n_vec * n_raters * max(n_raters, 1), 1))
    for lo in range(0, n_units, rows):  # chunks of units
        yc, gc = y[lo:lo + rows], given[lo:lo + rows]
        if combine == "median":
            order = np.argsort(np.where(gc, yc, np.inf), axis=1, kind="stable")
            ys = np.take_along_axis(yc, order, axis=1)
            gs = np.take_along_axis(gc, order, axis=1)
            w = v.T[order].transpose(0, 2, 1) * gs[:, None, :]  # (units, vectors, raters)
            cum = np.cumsum(w, axis=2)
            total = cum[:, :, -1]
            lo_rank, hi_rank = (total - 1) // 2, total // 2
            i_lo = np.minimum((cum <= lo_rank[:, :, None]).sum(axis=2), n_raters - 1)
            i_hi = np.minimum((cum <= hi_rank[:, :, None]).sum(axis=2), n_raters - 1)
            y_lo = np.take_along_axis(ys, i_lo, axis=1)
            y_hi = np.take_along_axis(ys, i_hi, axis=1)
            value = (y_lo + y_hi) / 2.0
        else:  # majority
            same = (yc[:, :, None] == yc[:, None, :]).astype(np.int64)  # NaN never equal
            weight = np.einsum("uij,oj->uoi", same, v)  # weight of each rater's label value
            total = weight.max(axis=2)
            top = (weight == total[:, :, None]) & gc[:, None, :]
            value = np.where(top, yc[:, None, :], np.inf).min(axis=2)
        out[lo:lo + rows] = np.where(total > 0, value, np.nan)
    return out


def resample_counts(n: int, n_resamples: int, seed: int) -> FloatArray:
    """How often each of ``n`` clusters is drawn in each resample: ``(n_resamples, n)``.

    The draws are those of :func:`~ireval_core.labels.trend.resample_indices` (the
    trend's query bootstrap), so a statistic computed from these counts and the trend's
    band resample the same queries.
    """
    offsets = (np.arange(n_resamples, dtype=np.int64) * n)[None, :]
    flat = np.concatenate([(idx + offsets).ravel() for idx in resample_indices(
        n, n_resamples, seed)]) if n else np.zeros(0, dtype=np.int64)
    return np.bincount(flat, minlength=n_resamples * n).astype(np.float64).reshape(
        n_resamples, n)


def _weight_matrix(k: int, weights: Weights) -> FloatArray:
    idx = np.arange(k, dtype=np.float64)
    diff = idx[:, None] - idx[None, :]
    if weights is None:
        return (diff != 0).astype(np.float64)
    return np.abs(diff) if weights == "linear" else diff ** 2


def whole_counts(c: FloatArray) -> bool:
    """Whether the confusion matrices ``c`` hold whole counts (finite, >= 0): with
    :func:`kappa_many` and :func:`alpha_many` of the same matrices, computed once."""
    return bool(c.size and np.all(c >= 0) and np.array_equal(c, np.rint(c)))


def _exact(c: FloatArray, n: FloatArray, factor: float, whole: bool | None) -> bool:
    """Whether the confusion matrices ``c`` hold whole counts (finite, >= 0; ``whole``
    when known) whose totals ``n`` bound every product and partial sum, times
    ``factor``, below 2^53: then sums of them are exact whatever their order."""
    return bool(c.size and float(n.max()) ** 2 * factor < 2.0 ** 53
                and (whole_counts(c) if whole is None else whole))


def _margin_matrix(k: int) -> FloatArray:
    """(k², 2k) 0/1 matrix: a flattened (k, k) matrix times it gives its row sums, then
    its column sums."""
    m = np.zeros((k * k, 2 * k))
    cells = np.arange(k * k)
    m[cells, cells // k] = 1.0
    m[cells, k + cells % k] = 1.0
    return m


@functools.lru_cache(maxsize=16)
def _alpha_matrix(k: int) -> FloatArray:
    """(k², 1 + 4p) matrix, p = k(k − 1)/2 pairs c < k of grades: a flattened (k, k)
    confusion matrix times it gives n (twice its total), then n_c and n_k of every pair
    (each grade's coincidences: its row plus its column sum), the pair's coincidences
    (the two cells), and Σ_{g=c..k} n_g − (n_c + n_k)/2 (ordinal δ before squaring)."""
    margins = _margin_matrix(k)
    n_v = margins[:, :k] + margins[:, k:]  # (k², k): the coincidences of each grade
    lo, hi = np.triu_indices(k, 1)
    between = np.zeros((k, len(lo)))
    for i, (a, b) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):  # pairs
        between[a + 1:b, i] = 1.0
        between[[a, b], i] = 0.5
    pair_cells = np.zeros((k * k, len(lo)))
    pair_cells[lo * k + hi, np.arange(len(lo))] = 1.0
    pair_cells[hi * k + lo, np.arange(len(lo))] = 1.0
    out = np.hstack((n_v.sum(axis=1, keepdims=True), n_v[:, lo], n_v[:, hi], pair_cells,
                     n_v @ between))
    out.flags.writeable = False
    return out


def kappa_many(counts: NDArray[np.float64] | NDArray[np.int64], weights: Weights,
               *, whole: bool | None = None) -> FloatArray:
    """Cohen's kappa of each ``(k, k)`` confusion matrix of ``counts`` (shape ``(B, k, k)``).

    κ = 1 − n Σ w·o / Σ w·r·c (o the counts, r and c their row and column sums, w the
    disagreement weights over the positions of the scale: ``None`` [i ≠ j],
    ``"linear"`` |i − j|, ``"quadratic"`` (i − j)²), as
    :func:`sklearn.metrics.cohen_kappa_score` with ``labels`` = the scale. NaN for an
    empty matrix or when chance agreement is total. ``whole``: :func:`whole_counts` of
    ``counts`` when the caller has it (else checked here).
    """
    c = np.asarray(counts, dtype=np.float64)
    w = _weight_matrix(c.shape[-1], weights)
    k = c.shape[-1]
    # whole counts: the totals from a product (the same sums, exact in any order)
    n = c.reshape(len(c), k * k) @ np.ones(k * k) if whole and c.size else c.sum(axis=(1, 2))
    observed = np.einsum("bij,ij->b", c, w)
    if _exact(c, n, float(np.abs(w).max()) * k * k, whole):
        # whole counts: every product and partial sum below is an integer under 2^53,
        # exact in any order -- the einsum's bits, without its slow three-operand loop
        margins = c.reshape(len(c), k * k) @ _margin_matrix(k)
        expected = ((margins[:, :k] @ w) * margins[:, k:]) @ np.ones(k)
    else:
        n = c.sum(axis=(1, 2))  # numpy's sums (a product's may differ past 2^53)
        expected = np.einsum("bi,bj,ij->b", c.sum(axis=2), c.sum(axis=1), w)
    out = np.full(len(n), np.nan)
    ok = (n > 0) & (expected > 0)
    out[ok] = 1.0 - n[ok] * observed[ok] / expected[ok]
    return out


def alpha_many(counts: NDArray[np.float64] | NDArray[np.int64], scale: FloatArray,
               level: Level = "ordinal", *, whole: bool | None = None) -> FloatArray:
    """Krippendorff's alpha of two coders from each ``(k, k)`` confusion matrix.

    Every unit has both coders' values, so the coincidences are o = C + Cᵀ, n_c their
    row sums, n = Σ n_c, and α = 1 − (n − 1) Σ o δ² / Σ n_c n_k δ² with δ² nominal
    [c ≠ k], interval (c − k)² or ordinal (Σ_{g=c..k} n_g − (n_c + n_k)/2)²
    (Krippendorff 2011), equal to ``krippendorff.alpha`` on the two rows of values.
    NaN when there is no pair or every value is the same. ``whole``: as in
    :func:`kappa_many`.
    """
    c = np.asarray(counts, dtype=np.float64)
    k = c.shape[-1]
    fast = _alpha_exact(c, scale, level, whole)
    if fast is not None:
        return fast
    o = c + c.transpose(0, 2, 1)
    n_v = o.sum(axis=2)
    n = n_v.sum(axis=1)
    idx = np.arange(k)
    if level == "nominal":
        d2 = np.broadcast_to((idx[:, None] != idx[None, :]).astype(np.float64), o.shape)
    elif level == "interval":
        s = np.asarray(scale, dtype=np.float64)
        d2 = np.broadcast_to((s[:, None] - s[None, :]) ** 2, o.shape)
    else:
        lo, hi = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
        cum = np.concatenate((np.zeros((len(n), 1)), np.cumsum(n_v, axis=1)), axis=1)
        between = cum[:, hi + 1] - cum[:, lo]
        d2 = (between - (n_v[:, lo] + n_v[:, hi]) / 2.0) ** 2
    observed = np.einsum("bij,bij->b", o, d2)
    expected = np.einsum("bi,bj,bij->b", n_v, n_v, d2)
    out = np.full(len(n), np.nan)
    ok = (n > 1) & (expected > 1e-12 * np.maximum(n, 1.0))
    out[ok] = 1.0 - (n[ok] - 1.0) * observed[ok] / expected[ok]
    return out


def _alpha_exact(c: FloatArray, scale: FloatArray, level: Level, whole: bool | None = None
                 ) -> FloatArray | None:
    """:func:`alpha_many` of whole counts, pair by pair of grades, or None when the sums
    might not be exact.

    With whole counts every quantity of the formula is an integer or, for the ordinal
    δ², a multiple of 1/4, and every sum stays below 2^53 (checked from the largest
    total): each is exact whatever the order of its terms, so this gives the bits of the
    general formula. δ² is 0 on the diagonal and symmetric, so Σ o δ² and
    Σ n_c n_k δ² are twice their sums over the pairs c < k.
    """
    k = c.shape[-1]
    if level == "interval":
        s = np.asarray(scale, dtype=np.float64)
        fixed = (s[:, None] - s[None, :]) ** 2
        if not np.array_equal(fixed, np.rint(fixed)):
            return None
        top = float(fixed.max()) if fixed.size else 0.0
    if not c.size:
        n_c = np.zeros(len(c))
    elif whole:  # whole counts: the same sums, exact in any order, from a product
        n_c = c.reshape(len(c), k * k) @ np.ones(k * k)
    else:
        n_c = c.sum(axis=(1, 2))
    # coincidences sum to 2 n_c; ordinal δ² is at most (2 n_c)², in quarters
    bound = 4.0 * (2.0 * float(n_c.max()) if len(n_c) else 0.0) ** 2
    if level == "ordinal":
        bound *= (2.0 * float(n_c.max()) if len(n_c) else 0.0) ** 2
    elif level == "interval":
        bound *= max(top, 1.0)
    if not (len(c) and k >= 2 and bound * k * k < 2.0 ** 53
            and (whole_counts(c) if whole is None else whole)):
        return None
    # every linear quantity of the formula from one product of the flattened counts:
    # n = Σ n_c, each pair's n_lo and n_hi, its coincidences o and (ordinal) its
    # Σ_{g=lo..hi} n_g − (n_lo + n_hi)/2 (all integers or halves, exact in any order)
    lo, hi = np.triu_indices(k, 1)
    p = len(lo)
    linear = c.reshape(len(c), k * k) @ _alpha_matrix(k)
    n = linear[:, 0]
    n_lo, n_hi = linear[:, 1:1 + p], linear[:, 1 + p:1 + 2 * p]
    o = linear[:, 1 + 2 * p:1 + 3 * p]
    if level == "nominal":
        d2 = np.ones(p)
    elif level == "interval":
        d2 = fixed[lo, hi]
    else:
        d2 = linear[:, 1 + 3 * p:] ** 2
    observed = 2.0 * ((o * d2) @ np.ones(p))
    expected = 2.0 * ((n_lo * n_hi * d2) @ np.ones(p))
    out = np.full(len(n), np.nan)
    ok = (n > 1) & (expected > 1e-12 * np.maximum(n, 1.0))
    out[ok] = 1.0 - (n[ok] - 1.0) * observed[ok] / expected[ok]
    return out


_TAU_CELLS = 1 << 20  # (resamples x points) cells per chunk of :func:`tau_b_many`
_TAU_PAIRWISE = 8  # up to this many points, tau_b_many lists the pairs (at most 28)


def tau_b_many(x: FloatArray, y: FloatArray) -> FloatArray:
    """Kendall's tau-b between the rows of ``x`` and ``y`` (both ``(B, m)``).

    τ_b = Σ sign(x_i − x_j) sign(y_i − y_j) / √(n_x n_y) over pairs i < j, n_x (n_y) the
    pairs not tied in x (y): :func:`scipy.stats.kendalltau`'s default. NaN when either
    row is constant or m < 2, and when a row holds NaN or the same infinity twice (the
    sign of a difference is then undefined).

    The pair counts are integers found without listing the pairs (Knight 1966): with
    n₀ = m(m − 1)/2, t_x, t_y, t_xy the pairs tied in x, in y, in both, and d the
    discordant pairs, Σ sign·sign = n₀ − t_x − t_y + t_xy − 2d, n_x = n₀ − t_x and
    n_y = n₀ − t_y; ties come from sorting each row, d from counting the inversions of
    y once the row is sorted by (x, y) (:func:`_discordant`: a row sort per bit of the
    positions). The counts are exact, so the quotient is the one the pairwise sums give,
    to the bit. Time O(B m log² m), in row sorts of small integers (about 0.13 s per
    10^6 values at 1,000 points), memory O(m) per resample, in chunks of about 2^20
    cells. Up to 8 points the pairs are listed (Σ of signs, exact too): faster for a
    round's few systems.
    """
    x = np.atleast_2d(np.asarray(x, dtype=np.float64))
    y = np.atleast_2d(np.asarray(y, dtype=np.float64))
    n_rows, m = x.shape
    out = np.full(n_rows, np.nan)
    if m < 2:
        return out
    if m <= _TAU_PAIRWISE:  # a few points (a round's systems): list the pairs
        i, j = np.triu_indices(m, k=1)
        with np.errstate(invalid="ignore"):  # inf - inf: NaN, the row's tau NaN
            sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
        num = (sx * sy).sum(axis=1)
        den = np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))
        np.divide(num, den, out=out, where=den > 0)
        return out
    rows = max(1, _TAU_CELLS // m)
    for lo in range(0, n_rows, rows):  # chunks of resamples bound memory
        out[lo:lo + rows] = _tau_b_chunk(x[lo:lo + rows], y[lo:lo + rows])
    return out


def _tau_b_chunk(x: FloatArray, y: FloatArray) -> FloatArray:
    """:func:`tau_b_many` of a few rows (m >= 2).

    Each row sorted by x (an argsort) and by y: the tied pairs of each from its runs of
    equal values, y's dense ranks put back in place, then the dense ranks of (x, y) in
    x's order as one integer key, sorted: its runs are the pairs tied in both, and the
    y rank in that order (``key mod m``) has the discordant pairs as its inversions
    (:func:`_discordant`). Integers of 32 bits up to 2^15 points (sorts of 32-bit keys
    are about half those of 64-bit ones), else 64.
    """
    n_rows, m = x.shape
    it: type[np.signedinteger[Any]] = np.int32 if m <= 1 << 15 else np.int64
    order_x = np.argsort(x, axis=1)
    new_x = _run_starts(np.take_along_axis(x, order_x, axis=1))
    order_y = np.argsort(y, axis=1)
    new_y = _run_starts(np.take_along_axis(y, order_y, axis=1))
    tie_x, tie_y = _run_pairs(new_x, it), _run_pairs(new_y, it)
    rank_y = np.empty((n_rows, m), dtype=it)
    np.put_along_axis(rank_y, order_y, np.cumsum(new_y, axis=1, dtype=it) - it(1), axis=1)
    del order_y, new_y
    key = (np.cumsum(new_x, axis=1, dtype=it) - it(1)) * it(m)  # x's dense rank, x's order
    key += np.take_along_axis(rank_y, order_x, axis=1)  # and y's: each row by (x, y)
    del order_x, new_x, rank_y
    key.sort(axis=1)
    tie_xy = _run_pairs(_run_starts(key), it)
    key %= it(m)
    n0 = m * (m - 1) // 2
    num = (n0 - tie_x - tie_y + tie_xy - 2 * _discordant(key)).astype(np.float64)
    den = np.sqrt((n0 - tie_x).astype(np.float64) * (n0 - tie_y).astype(np.float64))
    out = np.full(n_rows, np.nan)
    np.divide(num, den, out=out, where=den > 0)
    undefined = np.zeros(n_rows, dtype=bool)
    for v in (x, y):
        undefined |= np.isnan(v).any(axis=1)
        undefined |= ((v == np.inf).sum(axis=1) > 1) | ((v == -np.inf).sum(axis=1) > 1)
    out[undefined] = np.nan
    return out


def _run_starts(a: NDArray[Any]) -> NDArray[np.bool_]:
    """Per row of a row-sorted ``a``: where each run of equal values starts (-0.0 equals
    0.0)."""
    new = np.empty(a.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(a[:, 1:], a[:, :-1], out=new[:, 1:])
    return new


def _run_pairs(new: NDArray[np.bool_], it: type[np.signedinteger[Any]]
               ) -> NDArray[np.int64]:
    """Pairs of equal values per row, from where the runs start (:func:`_run_starts`):
    Σ t(t − 1)/2 over runs of length t, as the sum over elements of their distance to
    their run's start."""
    idx = np.arange(new.shape[1], dtype=it)
    start = np.where(new, idx, it(0))
    np.maximum.accumulate(start, axis=1, out=start)
    np.subtract(idx, start, out=start)
    return start.sum(axis=1, dtype=np.int64)


def _discordant(q: NDArray[np.signedinteger[Any]]) -> NDArray[np.int64]:
    """Per row of ``q`` (integers in ``[0, m)``): the pairs of positions i < j with
    q_i > q_j (its inversions).

    Every pair is split at one bit b of the positions: the highest where i and j differ
    (i's clear, j's set); at bit b the row is a sequence of blocks of 2^(b+1) positions,
    each a left half (bit b clear) and a right half. Sorting each block by (q, half) (one
    row sort of the integer key ``block, q, half``, each block keeping its place) puts a
    right element r after exactly the left elements with q <= q_r and after the right
    elements sorted before it, so the sum over the right elements of their rank in the
    block is Σ_r #{left: q <= q_r} + Σ_blocks t(t − 1)/2 (t the block's right half). The
    pairs split at b with q_i > q_j are Σ_r (#left − #{left: q <= q_r}): that sum for the
    identity row (q = position, no such pair) minus the row's own. One sort a bit
    (log₂ m sorts of m integers per row), integers only: exact. The keys take 2 log₂ m
    bits: 32-bit integers up to 2^15 points.
    """
    n_rows, m = q.shape
    it = q.dtype.type
    bits = max(int(m - 1).bit_length(), 1)
    pos = np.arange(m, dtype=it)
    q2 = q << it(1)
    key = np.empty_like(q2)
    out = np.zeros(n_rows, dtype=np.int64)
    for b in range(bits):  # a loop over the bits of the positions: log2(m) sorts
        right = (pos >> it(b)) & it(1)
        rank = pos & it((2 << b) - 1)  # place in the block once sorted
        np.add(q2, ((pos >> it(b + 1)) << it(bits + 1)) | right, out=key)
        key.sort(axis=1)
        key &= it(1)  # the half of each element, in sorted order
        out += int(right.astype(np.int64) @ rank.astype(np.int64))
        out -= key @ rank
    return out


def snap(values: FloatArray, scale: FloatArray) -> NDArray[np.int64]:
    """Position in ``scale`` (sorted) of the nearest grade to each value, halfway up."""
    mid = (scale[1:] + scale[:-1]) / 2.0 - 1e-9
    return np.searchsorted(mid, values, side="right").astype(np.int64)


def percentile_interval(theta: FloatArray, level: float) -> tuple[float, float]:
    """The percentile interval of bootstrap values (NaN values left out; NaN when fewer
    than two are left)."""
    ok = theta[~np.isnan(theta)]
    if len(ok) < 2:
        return float("nan"), float("nan")
    a = (1.0 - level) / 2.0
    low, high = _quantiles(ok[None, :], [a, 1.0 - a])[:, 0]
    return float(low), float(high)


def _quantiles(rows: FloatArray, q: Sequence[float]) -> FloatArray:
    """``np.quantile(rows, q, axis=1)`` of rows without NaN, to the bit: each row sorted
    and interpolated (:func:`_linear_quantiles`); a row holding -0.0 goes through
    ``np.quantile`` itself (its partition and a sort may put -0.0 and 0.0, equal, in
    either order, and numpy's vectorised sort may even return one for the other; the
    sign of a zero is a bit)."""
    out = _linear_quantiles(np.sort(rows, axis=1), q)
    negative_zero = ((rows == 0.0) & np.signbit(rows)).any(axis=1)
    for i in np.flatnonzero(negative_zero).tolist():  # a loop over rows with -0.0
        out[:, i] = np.quantile(rows[i], q)
    return out


def _linear_quantiles(rows: FloatArray, q: Sequence[float]) -> FloatArray:
    """``np.quantile(rows, q, axis=-1)`` (method ``"linear"``) of rows already sorted
    (no NaN): numpy's own arithmetic (its indexes, weight and two-sided interpolation),
    on the sorted values instead of a partition, which finds the same order statistics
    (a sort of 10^4 doubles costs about a third of the partition: vectorised sorts).
    Shape ``(len(q),) + rows.shape[:-1]``."""
    n = rows.shape[-1]
    virtual = (n - 1) * np.asarray(q, dtype=np.float64)
    prev = np.floor(virtual)
    nxt = prev + 1
    above, below = virtual >= n - 1, virtual < 0
    prev[above], nxt[above] = -1, -1
    prev[below], nxt[below] = 0, 0
    prev_i, next_i = prev.astype(np.intp), nxt.astype(np.intp)
    gamma = (virtual - prev_i).reshape((-1,) + (1,) * (rows.ndim - 1))
    a = np.moveaxis(rows[..., prev_i], -1, 0)
    b = np.moveaxis(rows[..., next_i], -1, 0)
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=np.broadcast_to(gamma >= 0.5, out.shape))
    return out


_INTERVAL_BLOCK = 1 << 19  # values per block of percentile_intervals (4 MB)


def percentile_intervals(thetas: Sequence[FloatArray], level: float
                         ) -> list[tuple[float, float]]:
    """:func:`percentile_interval` of each array, the same numbers: the arrays without
    NaN of one length (two or more) are sorted and interpolated a block of rows at a
    time (:func:`_quantiles`, each row as alone); the others one by one."""
    out: list[tuple[float, float]] = [(math.nan, math.nan)] * len(thetas)
    by_length: dict[int, list[int]] = {}
    for i, theta in enumerate(thetas):
        if len(theta) >= 2 and not np.isnan(theta).any():
            by_length.setdefault(len(theta), []).append(i)
        else:
            out[i] = percentile_interval(theta, level)
    a = (1.0 - level) / 2.0
    for length, which in by_length.items():
        step = max(1, _INTERVAL_BLOCK // length)
        for lo in range(0, len(which), step):  # blocks of rows bound memory
            rows = which[lo:lo + step]
            q = _quantiles(np.stack([thetas[i] for i in rows]), [a, 1.0 - a])
            for i, low, high in zip(rows, q[0].tolist(), q[1].tolist(), strict=True):
                out[i] = (low, high)
    return out


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a table as JSON-ready dicts: NaN/NA -> None, numpy scalars -> Python."""
    out = []
    for rec in frame.to_dict("records"):
        row: dict[str, Any] = {}
        for key, value in rec.items():
            if value is None or value is pd.NA:
                row[str(key)] = None
            elif isinstance(value, np.generic):
                value = value.item()
                row[str(key)] = None if isinstance(value, float) and not math.isfinite(
                    value) else value
            elif isinstance(value, float) and not math.isfinite(value):
                row[str(key)] = None
            else:
                row[str(key)] = value
        out.append(row)
    return out
