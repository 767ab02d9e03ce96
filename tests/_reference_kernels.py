"""Verbatim copies of replaced kernels, kept as references for bit-for-bit tests.

When a kernel is rewritten for speed, its tests compare the new one with the code it
replaced, to the last bit. The replaced code lives here, once, under a name that says
the commit it is copied from: verbatim but for its name, the ``T.`` prefix of the
``ireval_core.labels.trend`` helpers it calls and its docstring, which says why it is
kept. ``noise._two_stage`` is kept as it was at two points of its history (before and
after it learnt to take the trend's query sums); the two differ, and each test compares
with the one it was written against. ``judge._order`` and ``kernels.tau_b_many`` are kept
as of commit 97762a0, when the tau-b interval still listed every pair of points; their
helpers (``J.``, ``K.``: ``judge._permutation``, ``kernels.percentile_interval``,
``judge.ORDER_COLUMNS``) are the modules' own, unchanged. ``kernels.kappa_many`` and
``alpha_many`` are kept as of 3f3c733, before their whole-count fast paths.

Not a test module: ``tests/test_labels_noise_reuse.py``,
``tests/test_labels_trend_gathers.py`` and ``tests/test_labels_judge_order.py`` import it.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pandas as pd

T = importlib.import_module("ireval_core.labels.trend")  # the module; labels.trend is the function
J = importlib.import_module("ireval_core.labels.judge")
K = importlib.import_module("ireval_core.labels.kernels")


def two_stage_4d57c18(dcg: np.ndarray, w: np.ndarray | None, big_n: np.ndarray, big_l: np.ndarray,
                      mass: np.ndarray, outcome: np.ndarray, n_resamples: int, seed: int,
                      cache: dict[tuple[int, int, int], list[np.ndarray]]
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(two-stage θ*, query-only θ*, rater-only θ) of one (round, system) group.

    ``noise._two_stage`` as of commit 4d57c18 (unchanged until 85885aa let
    ``noise_trend`` reuse the trend's query bootstrap, ``trend_result``): it sums its
    own query stage with the current ``trend.bootstrap_sums``. Kept so that
    ``tests/test_labels_noise_reuse.py`` can check, bit for bit, that the reuse gives
    what this kernel gave.
    """
    n = len(dcg)
    key = (n, n_resamples, seed)
    if key not in cache:
        chunks = T.resample_indices(n, n_resamples, seed)
        if n * n_resamples <= 1 << 24:
            cache[key] = chunks
    else:
        chunks = cache[key]
    ww = np.ones(n) if w is None else w
    n_out = big_n.shape[1]
    wn = (ww[:, None] * big_n).ravel()
    # every unit keeps a rater under every outcome (each unit labeled by all the round's
    # raters, say): the labeled mass does not move, and its sums are those of ``mass``
    fixed = bool((big_l == mass[:, None]).all())
    wl = None if fixed else (ww[:, None] * big_l).ravel()
    sn = np.zeros(n_resamples)
    sl = np.zeros(n_resamples)
    for idx in chunks:  # a chunk holds draws i..i+r of every resample (1-D gathers)
        flat = idx.astype(np.int64) * n_out + outcome[None, :]
        sn += wn[flat].sum(axis=0)
        if wl is not None:
            sl += wl[flat].sum(axis=0)
    # the query stage and the labeled mass from the same draws; the resampled weight
    # sums (sw) are the query stage's own second column
    if w is None:
        raw = T.bootstrap_sums(np.column_stack((dcg, mass)), n_resamples, seed, cache)
        queries = raw[:, 0] / n
        sa = raw[:, 1]
        sw: float | np.ndarray = float(n)
    else:
        raw = T.bootstrap_sums(np.column_stack((w * dcg, w, w * mass)), n_resamples, seed,
                             cache)
        both = raw[:, :2] / n
        queries = both[:, 0] / both[:, 1]
        sa = raw[:, 2]
        sw = raw[:, 1]
    if wl is None:
        sl = sa
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = sn / sl * (sa / sw)
    theta = np.where(sa == 0, 0.0, theta)  # nothing labeled in the drawn queries: DCG 0
    # queries fixed: the rater stage alone
    tot_a, tot_w = float(ww @ mass), float(ww.sum())
    per_out_n, per_out_l = ww @ big_n, ww @ big_l
    with np.errstate(divide="ignore", invalid="ignore"):
        by_outcome = per_out_n / per_out_l * (tot_a / tot_w)
    by_outcome = np.where(tot_a == 0, 0.0, by_outcome)
    return theta, queries, by_outcome[outcome]


def bootstrap_sums_513ae8c(values: np.ndarray, n_resamples: int, seed: int,
                           cache: dict[tuple[int, int, int], list[np.ndarray]] | None = None
                           ) -> np.ndarray:
    """``trend.bootstrap_sums`` as of commit 513ae8c (unchanged until 9def79b gathered a
    block of draws at a time): one 1-D gather per column and chunk. Kept so that
    ``tests/test_labels_trend_gathers.py`` can check the block gathers against it bit
    for bit."""
    n, c = values.shape
    key = (n, n_resamples, seed)
    if cache is not None and key in cache:
        chunks = cache[key]
    else:
        chunks = T.resample_indices(n, n_resamples, seed)
        if cache is not None and n * n_resamples <= 1 << 24:
            cache[key] = chunks
    sums = np.zeros((n_resamples, c))
    columns = [np.ascontiguousarray(values[:, col]) for col in range(c)]
    for idx in chunks:  # a chunk holds draws i..i+r of every resample
        for col, v in enumerate(columns):
            sums[:, col] += v[idx].sum(axis=0)
    return sums


def two_stage_513ae8c(dcg: np.ndarray, w: np.ndarray | None, big_n: np.ndarray, big_l: np.ndarray,
                      mass: np.ndarray, outcome: np.ndarray, n_resamples: int, seed: int,
                      cache: dict[tuple[int, int, int], list[np.ndarray]],
                      query_sums: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(two-stage θ*, query-only θ*, rater-only θ) of one (round, system) group.

    ``query_sums``: the trend's resampled sums of the same group (``Trend.query_sums``:
    Σ dcg, or Σ w·dcg and Σ w), the same draws: only the labeled mass is resampled here.

    ``noise._two_stage`` as of commit 513ae8c (as 85885aa wrote it, unchanged until
    9def79b gathered the draws a block at a time); it calls the
    :func:`bootstrap_sums_513ae8c` of the same commit. Kept so that
    ``tests/test_labels_trend_gathers.py`` can check the current kernel against it bit
    for bit.
    """
    n = len(dcg)
    key = (n, n_resamples, seed)
    if key not in cache:
        chunks = T.resample_indices(n, n_resamples, seed)
        if n * n_resamples <= 1 << 24:
            cache[key] = chunks
    else:
        chunks = cache[key]
    ww = np.ones(n) if w is None else w
    n_out = big_n.shape[1]
    wn = (ww[:, None] * big_n).ravel()
    # every unit keeps a rater under every outcome (each unit labeled by all the round's
    # raters, say): the labeled mass does not move, and its sums are those of ``mass``
    fixed = bool((big_l == mass[:, None]).all())
    wl = None if fixed else (ww[:, None] * big_l).ravel()
    sn = np.zeros(n_resamples)
    sl = np.zeros(n_resamples)
    for idx in chunks:  # a chunk holds draws i..i+r of every resample (1-D gathers)
        flat = idx.astype(np.int64) * n_out + outcome[None, :]
        sn += wn[flat].sum(axis=0)
        if wl is not None:
            sl += wl[flat].sum(axis=0)
    # the query stage and the labeled mass from the same draws; the resampled weight
    # sums (sw) are the query stage's own second column
    # (bootstrap_sums sums each column on its own: a column taken from the trend's sums
    # is the same to the bit as the same column summed here)
    if w is None:
        raw = (bootstrap_sums_513ae8c(np.column_stack((dcg, mass)), n_resamples, seed, cache)
               if query_sums is None else np.column_stack((query_sums[:, 0], bootstrap_sums_513ae8c(
                   mass[:, None], n_resamples, seed, cache)[:, 0])))
        queries = raw[:, 0] / n
        sa = raw[:, 1]
        sw: float | np.ndarray = float(n)
    else:
        raw = (bootstrap_sums_513ae8c(np.column_stack((w * dcg, w, w * mass)), n_resamples, seed,
                                      cache)
               if query_sums is None else np.column_stack((query_sums[:, :2],
                                                           bootstrap_sums_513ae8c(
                   (w * mass)[:, None], n_resamples, seed, cache)[:, 0])))
        both = raw[:, :2] / n
        queries = both[:, 0] / both[:, 1]
        sa = raw[:, 2]
        sw = raw[:, 1]
    if wl is None:
        sl = sa
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = sn / sl * (sa / sw)
    theta = np.where(sa == 0, 0.0, theta)  # nothing labeled in the drawn queries: DCG 0
    # queries fixed: the rater stage alone
    tot_a, tot_w = float(ww @ mass), float(ww.sum())
    per_out_n, per_out_l = ww @ big_n, ww @ big_l
    with np.errstate(divide="ignore", invalid="ignore"):
        by_outcome = per_out_n / per_out_l * (tot_a / tot_w)
    by_outcome = np.where(tot_a == 0, 0.0, by_outcome)
    return theta, queries, by_outcome[outcome]


def tau_b_many_97762a0(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between the rows of ``x`` and ``y`` (both ``(B, m)``).

    ``kernels.tau_b_many`` as of commit 97762a0: every pair of points listed at once
    (memory B x m^2). Kept so that ``tests/test_labels_judge_order.py`` can check, bit
    for bit, that the sort-based counts give what these pairwise sums gave.

    τ_b = Σ sign(x_i − x_j) sign(y_i − y_j) / √(n_x n_y) over pairs i < j, n_x (n_y) the
    pairs not tied in x (y): :func:`scipy.stats.kendalltau`'s default. NaN when either
    row is constant or m < 2.
    """
    x, y = np.atleast_2d(x), np.atleast_2d(y)
    i, j = np.triu_indices(x.shape[1], k=1)
    sx, sy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    num = (sx * sy).sum(axis=1)
    den = np.sqrt(np.abs(sx).sum(axis=1) * np.abs(sy).sum(axis=1))
    out = np.full(x.shape[0], np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


def order_97762a0(pt: Any, jt: Any, seed: int, conf: float) -> pd.DataFrame:
    """Kendall's tau-b of the (round, system) means, over all rounds and per round.

    ``judge._order`` as of commit 97762a0, with :func:`tau_b_many_97762a0`: its bootstrap
    listed every pair of the (round, system) points of every resample at once. Kept so that
    ``tests/test_labels_judge_order.py`` can check the table, bit for bit.
    """
    keys = list(zip(pt.table["round"], pt.table["system"], strict=True))
    x = pt.table["dcg"].to_numpy(dtype=np.float64)
    y = jt.table.set_index(["round", "system"]).loc[keys, "dcg"].to_numpy(dtype=np.float64)
    perms = {r: J._permutation(r, pt.n_resamples, seed) for r in pt.table["round"].unique()}
    bx = np.column_stack([pt.resamples(r, s)[perms[r]] for r, s in keys]) if keys else None
    by = np.column_stack([jt.resamples(r, s)[perms[r]] for r, s in keys]) if keys else None
    rows = []
    scopes = [("all rounds", np.arange(len(keys)))] + [
        (str(r), np.flatnonzero(pt.table["round"].to_numpy() == r))
        for r in pt.table["round"].unique()]
    for scope, cols in scopes:  # all rounds, then a loop over rounds
        tau = (float(tau_b_many_97762a0(x[None, cols], y[None, cols])[0])
               if len(cols) >= 2 else math.nan)
        low = high = math.nan
        if len(cols) >= 2 and bx is not None and by is not None:
            low, high = K.percentile_interval(tau_b_many_97762a0(bx[:, cols], by[:, cols]),
                                              conf)
        rows.append({"scope": scope, "points": len(cols), "tau": tau, "ci_low": low,
                     "ci_high": high, "same_order": bool(tau == 1.0)})
    return pd.DataFrame(rows, columns=list(J.ORDER_COLUMNS)).astype({"same_order": bool})


def kappa_many_3f3c733(counts: np.ndarray, weights: Any) -> np.ndarray:
    """``kernels.kappa_many`` as of 3f3c733 (one three-operand einsum for the
    expected disagreement): the reference of its whole-count fast path."""
    c = np.asarray(counts, dtype=np.float64)
    w = K._weight_matrix(c.shape[-1], weights)
    n = c.sum(axis=(1, 2))
    observed = np.einsum("bij,ij->b", c, w)
    expected = np.einsum("bi,bj,ij->b", c.sum(axis=2), c.sum(axis=1), w)
    out = np.full(len(n), np.nan)
    ok = (n > 0) & (expected > 0)
    out[ok] = 1.0 - n[ok] * observed[ok] / expected[ok]
    return out


def alpha_many_3f3c733(counts: np.ndarray, scale: np.ndarray, level: str = "ordinal"
                       ) -> np.ndarray:
    """``kernels.alpha_many`` as of 3f3c733 (the general formula on (k, k)
    arrays): the reference of its whole-count fast path."""
    c = np.asarray(counts, dtype=np.float64)
    o = c + c.transpose(0, 2, 1)
    n_v = o.sum(axis=2)
    n = n_v.sum(axis=1)
    k = c.shape[-1]
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
