"""Resampling tests and intervals: Fisher randomization and the bootstrap."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from ..params import Options, check
from .base import (
    ALTERNATIVE,
    BOOTSTRAP_METHODS,
    CONFIDENCE_LEVEL,
    EPS,
    N_RESAMPLES,
    Alternative,
    ConfidenceInterval,
    FloatArray,
    RngLike,
    TestResult,
    as_diff_matrix,
    as_generator,
    check_rng,
    exact_sums,
    paired_diff,
)

METHOD = Options(BOOTSTRAP_METHODS)

# Resampling matrices are processed in chunks of about this many elements (16 MB of
# float64): small enough to stay in cache while converting bits to floats, large
# enough for an efficient matrix product. Results never depend on the chunk size.
_CHUNK_ELEMENTS = 2**21
# Largest number of queries for which 2**n sign patterns can be enumerated exactly.
_MAX_EXACT_QUERIES = 40


# ------------------------------------------------------------------ randomization


def _sign_bit_chunks(
    n: int, n_resamples: int, rng: np.random.Generator | None
) -> Iterator[NDArray[np.uint8]]:
    """0/1 matrices (rows = resamples, 1 = keep the sign of d_i), in row chunks.

    Exact (``rng is None``): the ``n_resamples == 2**n`` patterns, in binary order.
    Monte Carlo: row ``r`` is taken from raw 64-bit outputs ``r*w .. (r+1)*w - 1`` of
    the bit generator (``w = ceil(n / 64)``, low bit first), so the matrix depends only
    on (seed, n_resamples, n) and not on the chunk size.
    """
    rows = max(1, _CHUNK_ELEMENTS // n)
    if rng is None:
        shifts = np.arange(n, dtype=np.int64)
        for start in range(0, n_resamples, rows):
            codes = np.arange(start, min(start + rows, n_resamples), dtype=np.int64)
            yield ((codes[:, None] >> shifts) & 1).astype(np.uint8)
        return
    words = (n + 63) // 64
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        raw = rng.bit_generator.random_raw(r * words).astype("<u8", copy=False)
        yield np.unpackbits(
            raw.view(np.uint8).reshape(r, words * 8), axis=1, count=n, bitorder="little"
        )


def _tie_tolerance(sums: FloatArray, D: FloatArray) -> FloatArray:
    """Tolerance for "null statistic == observed" on sums of ``±d``.

    scipy uses ``100 * eps * |observed|``; we also scale with ``sqrt(n) * sum|d|``, the
    size of the summation round-off, so that theoretically equal sums (frequent with
    discrete measures such as P@10) are counted as ties even when the observed mean is
    near 0. Distinct values are orders of magnitude further apart.
    """
    n = D.shape[0]
    return 100.0 * EPS * np.maximum(np.abs(sums), math.sqrt(n) * np.abs(D).sum(axis=0))


def randomization_core(
    D: FloatArray, alternative: str, n_resamples: int, rng: RngLike
) -> tuple[FloatArray, FloatArray, int, bool]:
    """Observed mean, p-value per column, resamples used and exactness."""
    n = D.shape[0]
    exact = n <= _MAX_EXACT_QUERIES and 2**n <= n_resamples
    total = 2**n if exact else n_resamples
    gen = as_generator(rng)  # even when the enumeration does not use it
    sums = exact_sums(D)
    tol = _tie_tolerance(sums, D)
    count_le = np.zeros(D.shape[1], dtype=np.int64)
    count_ge = np.zeros(D.shape[1], dtype=np.int64)
    buf = np.empty((max(1, min(total, _CHUNK_ELEMENTS // n)), n), dtype=np.float64)
    for bits in _sign_bit_chunks(n, total, None if exact else gen):
        r = bits.shape[0]
        np.copyto(buf[:r], bits)
        # sum of s_i d_i with s = 2 * bit - 1
        null = 2.0 * (buf[:r] @ D) - sums
        count_le += np.count_nonzero(null <= sums + tol, axis=0)
        count_ge += np.count_nonzero(null >= sums - tol, axis=0)
    adjust = 0 if exact else 1
    p_less = (count_le + adjust) / (total + adjust)
    p_greater = (count_ge + adjust) / (total + adjust)
    if alternative == "less":
        p = p_less
    elif alternative == "greater":
        p = p_greater
    else:
        p = np.minimum(2.0 * np.minimum(p_less, p_greater), 1.0)
    return sums / n, p, total, exact


def randomization_test_many(
    diffs: ArrayLike,
    *,
    alternative: Alternative = "two-sided",
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> list[TestResult]:
    """Fisher's paired randomization test on every column of a difference matrix.

    All columns share one sign matrix (``n_resamples x n_queries``), processed in chunks
    with one matrix product per chunk, so testing many pairs (and measures on the same
    queries) costs little more than testing one. Column ``j`` gets exactly the result
    of ``randomization_test(a_j, b_j, ...)`` with the same ``rng`` seed.

    Parameters
    ----------
    diffs : array_like, shape (n_queries, n_pairs)
        Columns of differences ``b - a``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
    n_resamples : int, default 10_000
        When ``2**n_queries <= n_resamples`` the ``2**n_queries`` sign patterns are
        enumerated and the p-value is exact (count / 2**n, the observed pattern
        included, as ``scipy.stats.permutation_test``); ``rng`` is then not used.
        Otherwise ``n_resamples`` random patterns and ``p = (b + 1) / (B + 1)``.
    rng : None, int or numpy.random.Generator
        Seed or generator. The sign matrix depends only on (seed, n_resamples,
        n_queries). A Generator is advanced.

    Returns
    -------
    list of TestResult
        One per column, ``test="randomization"``, ``statistic`` = mean difference.
    """
    fn = "randomization_test_many"
    check(alternative, "alternative", fn, ALTERNATIVE)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    D = as_diff_matrix(diffs)
    means, p, used, exact = randomization_core(D, alternative, n_resamples, check_rng(rng, fn))
    return [
        TestResult(
            test="randomization", statistic=float(means[j]), pvalue=float(p[j]),
            alternative=alternative, n=int(D.shape[0]), mean_diff=float(means[j]),
            n_resamples=used, exact=exact,
        )
        for j in range(D.shape[1])
    ]


def randomization_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    alternative: Alternative = "two-sided",
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> TestResult:
    """Fisher's paired randomization (sign-flip) test of the mean of ``d = b - a``.

    Under the null hypothesis the labels "a" and "b" are exchangeable within a query,
    so each ``d_i`` is equally likely to be ``+d_i`` or ``-d_i``. The statistic is the
    mean difference; permuted statistics within a small tolerance of the observed one
    count as ties (see :func:`randomization_test_many` for the details).

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values (at least 2 queries, finite).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
    n_resamples : int, default 10_000
        Exact enumeration when ``2**n <= n_resamples`` (then equal to
        ``scipy.stats.permutation_test(..., permutation_type="samples")``),
        Monte Carlo with ``p = (b + 1) / (B + 1)`` otherwise.
    rng : None, int or numpy.random.Generator
        Same seed, same p-value.

    Returns
    -------
    TestResult
        ``test="randomization"``, with ``n_resamples`` and ``exact``. No
        confidence interval. All differences 0: p-value 1.

    Examples
    --------
    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> res = randomization_test(A, B, alternative="greater")
    >>> res.exact, res.n_resamples, res.pvalue == 24 / 1024
    (True, 1024, True)
    """
    fn = "randomization_test"
    check(alternative, "alternative", fn, ALTERNATIVE)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    d = paired_diff(a, b)
    return randomization_test_many(
        d[:, None], alternative=alternative, n_resamples=n_resamples, rng=check_rng(rng, fn)
    )[0]


# ---------------------------------------------------------------------- bootstrap


def bootstrap_means(D: FloatArray, n_resamples: int, rng: RngLike) -> FloatArray:
    """Resampled column means, ``(n_resamples, n_columns)``.

    The resampling indices are ``rng.integers(0, n, (rows, n))`` drawn chunk by chunk
    with ``rows`` a function of ``n`` only, so they depend only on (seed, n_resamples,
    n); for ``n_resamples * n <= 2**21`` they are exactly the indices of
    ``scipy.stats.bootstrap`` with the same seed. Means are computed as
    ``counts @ D / n`` (one matrix product for all columns).
    """
    gen = as_generator(rng)
    n = D.shape[0]
    rows = max(1, _CHUNK_ELEMENTS // n)
    out = np.empty((n_resamples, D.shape[1]), dtype=np.float64)
    for start in range(0, n_resamples, rows):
        r = min(rows, n_resamples - start)
        idx = gen.integers(0, n, size=(r, n))
        idx += (np.arange(r, dtype=idx.dtype) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=r * n).reshape(r, n).astype(np.float64)
        out[start : start + r] = (counts @ D) / n
    return out


def _bca_parameters(D: FloatArray, theta_b: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Bias correction ``z0`` and acceleration ``a`` of BCa for the mean (as scipy)."""
    n = D.shape[0]
    theta_hat = np.ascontiguousarray(D.T).mean(axis=1)
    below = np.count_nonzero(theta_b < theta_hat, axis=0)
    at_or_below = np.count_nonzero(theta_b <= theta_hat, axis=0)
    z0 = special.ndtri((below + at_or_below) / (2.0 * theta_b.shape[0]))
    jack = (exact_sums(D) - D) / (n - 1.0)  # leave-one-out means
    u = (n - 1.0) * (jack.mean(axis=0) - jack)
    num = np.sum(u**3, axis=0) / n**3
    den = np.sum(u**2, axis=0) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        accel = np.where(den > 0, num / den**1.5 / 6.0, 0.0)
    z0 = np.where(den > 0, z0, 0.0)  # constant differences: degenerate, interval = mean
    return z0, accel


def bootstrap_pvalues(theta_b: FloatArray, D: FloatArray, alternative: str) -> FloatArray:
    """Shift-method p-value: resample ``d - mean(d)``, i.e. compare ``theta_b - mean``
    with the observed mean; ``(b + 1) / (B + 1)``."""
    n = D.shape[0]
    sums = exact_sums(D)
    mean = sums / n
    null = theta_b - mean
    tol = _tie_tolerance(sums, D) / n
    B = theta_b.shape[0]
    p_less = (np.count_nonzero(null <= mean + tol, axis=0) + 1.0) / (B + 1.0)
    p_greater = (np.count_nonzero(null >= mean - tol, axis=0) + 1.0) / (B + 1.0)
    if alternative == "less":
        return p_less
    if alternative == "greater":
        return p_greater
    return np.minimum(2.0 * np.minimum(p_less, p_greater), 1.0)


def bootstrap_test_many(
    diffs: ArrayLike,
    *,
    alternative: Alternative = "two-sided",
    method: Literal["percentile", "bca"] = "percentile",
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> list[TestResult]:
    """Paired bootstrap test and CI on every column of a difference matrix.

    All columns share one resampling of the queries (so the intervals of different
    pairs are computed on the same bootstrap samples). Column ``j`` gets exactly the
    result of ``bootstrap_test(a_j, b_j, ...)`` with the same ``rng`` seed.

    Parameters
    ----------
    diffs : array_like, shape (n_queries, n_pairs)
        Columns of differences ``b - a``.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
    method : {"percentile", "bca"}, default "percentile"
        Interval returned by ``confidence_interval()``.
    n_resamples : int, default 10_000
    rng : None, int or numpy.random.Generator

    Returns
    -------
    list of TestResult
        ``test="bootstrap"``, ``statistic`` = mean difference, ``pvalue`` by the shift
        method (resample ``d - mean(d)``; ``p = (b + 1) / (B + 1)``).
    """
    fn = "bootstrap_test_many"
    check(alternative, "alternative", fn, ALTERNATIVE)
    check(method, "method", fn, METHOD)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    D = as_diff_matrix(diffs)
    theta_b = bootstrap_means(D, n_resamples, check_rng(rng, fn))
    p = bootstrap_pvalues(theta_b, D, alternative)
    means = exact_sums(D) / D.shape[0]
    z0, accel = _bca_parameters(D, theta_b) if method == "bca" else (None, None)
    results = []
    for j in range(D.shape[1]):
        bca = None if z0 is None or accel is None else (float(z0[j]), float(accel[j]))
        results.append(
            TestResult(
                test="bootstrap", statistic=float(means[j]), pvalue=float(p[j]),
                alternative=alternative, n=int(D.shape[0]), mean_diff=float(means[j]),
                n_resamples=n_resamples, ci_method=method,
                bootstrap_distribution=theta_b[:, j].copy(), _bca=bca,
            )
        )
    return results


def bootstrap_test(
    a: ArrayLike,
    b: ArrayLike,
    *,
    alternative: Alternative = "two-sided",
    method: Literal["percentile", "bca"] = "percentile",
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> TestResult:
    """Paired bootstrap test of the mean of ``d = b - a`` (shift method).

    The queries are resampled with replacement; the null distribution is that of the
    resampled mean of ``d - mean(d)`` and ``p = (b + 1) / (B + 1)``. The result's
    ``confidence_interval(level)`` is the percentile or BCa interval from the same
    resamples (identical to ``scipy.stats.bootstrap((d,), np.mean, ...)`` with the same
    integer seed when ``n_resamples * n <= 2**21``; up to float round-off).

    Examples
    --------
    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> res = bootstrap_test(A, B, alternative="greater", rng=0)
    >>> res.statistic, res.pvalue < 0.05
    (21.4, True)
    """
    fn = "bootstrap_test"
    check(alternative, "alternative", fn, ALTERNATIVE)
    check(method, "method", fn, METHOD)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    d = paired_diff(a, b)
    return bootstrap_test_many(
        d[:, None], alternative=alternative, method=method, n_resamples=n_resamples,
        rng=check_rng(rng, fn),
    )[0]


def bootstrap_ci(
    a: ArrayLike,
    b: ArrayLike,
    *,
    confidence_level: float = 0.95,
    method: Literal["percentile", "bca"] = "percentile",
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> ConfidenceInterval:
    """Two-sided paired bootstrap confidence interval of ``mean(b - a)``.

    Same resampling as :func:`bootstrap_test` (and as ``scipy.stats.bootstrap((d,),
    np.mean, method=method)`` for the same integer seed, see there). If all
    differences are equal the interval is that value twice.

    Examples
    --------
    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> low, high = bootstrap_ci(A, B, rng=0)
    >>> bool(low < 21.4 < high)
    True
    """
    fn = "bootstrap_ci"
    level = check(confidence_level, "confidence_level", fn, CONFIDENCE_LEVEL)
    check(method, "method", fn, METHOD)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    res = bootstrap_test(a, b, method=method, n_resamples=n_resamples, rng=check_rng(rng, fn))
    return res.confidence_interval(level)
