"""Single-pair classical tests: paired t, Wilcoxon signed-rank and sign test."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike
from scipy import special, stats

from ..intervals import t_kernel
from ..params import check
from .base import ALTERNATIVE, Alternative, FloatArray, TestResult, paired_diff

# ------------------------------------------------------------------------ t kernel


def _t_pvalue(t: FloatArray, df: float, alternative: str) -> FloatArray:
    if alternative == "less":
        return special.stdtr(df, t)
    if alternative == "greater":
        return special.stdtr(df, -t)
    return 2.0 * special.stdtr(df, -np.abs(t))


def t_many(D: FloatArray, alternative: str) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """The paired t-test of every column of ``D``: t, p-value, standard error and df."""
    mean, se, t, df = t_kernel(D)
    p = _t_pvalue(t, df, alternative)
    p[(D == 0).all(axis=0)] = 1.0
    return t, p, se, df


# -------------------------------------------------------------------- single tests


def paired_t_test(
    a: ArrayLike, b: ArrayLike, *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Student's paired t-test of ``d = b - a``, equal to ``scipy.stats.ttest_rel(b, a)``.

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values of the two systems (at least 2 queries, finite).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: the mean of ``b - a`` is positive (b is better).

    Returns
    -------
    TestResult
        ``test="t"``; ``confidence_interval()`` is the t-interval of the mean difference.
        When every difference is 0 the statistic is 0 and the p-value 1 (scipy gives
        nan). When the differences are a non-zero constant, ``sd = 0`` and the statistic
        is ``±inf`` with p-value 0, as in scipy.

    Examples
    --------
    Seed 001, table 8-6:

    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> res = paired_t_test(A, B, alternative="greater")
    >>> round(res.mean_diff, 1), round(res.statistic, 2), round(res.pvalue, 3)
    (21.4, 2.33, 0.022)
    """
    check(alternative, "alternative", "paired_t_test", ALTERNATIVE)
    d = paired_diff(a, b)
    t, p, se, df = t_many(d[:, None], alternative)
    return TestResult(
        test="t", statistic=float(t[0]), pvalue=float(p[0]), alternative=alternative,
        n=int(d.size), mean_diff=float(d.mean()), df=float(df), std_err=float(se[0]),
    )


def wilcoxon_test(
    a: ArrayLike, b: ArrayLike, *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Wilcoxon signed-rank test of ``d = b - a`` (zeros dropped, tied ranks averaged).

    The statistic and p-value are those of
    ``scipy.stats.wilcoxon(d, zero_method="wilcox", alternative=alternative)``, with the
    same choice of method: the exact distribution (no ties, no zeros, ``n <= 50``), an
    exact sign-flip permutation test (ties or zeros, ``n <= 13``; re-implemented here,
    vectorised, because scipy's takes seconds), else the normal approximation with
    continuity correction (scipy is called for those). Ties are exact float ties:
    differences equal only up to rounding (``0.3 - 0.1`` vs ``0.2``) are not tied, as
    in scipy.

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values (at least 2 queries, finite).
    alternative : {"two-sided", "greater", "less"}, default "two-sided"

    Returns
    -------
    TestResult
        ``test="wilcoxon"``; ``n`` is the number of non-zero differences and
        ``w_signed_rank_sum`` the textbook W (sum of signed ranks, ``R+ - R-``).
        All differences 0: statistic 0, p-value 1.

    Examples
    --------
    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> res = wilcoxon_test(A, B, alternative="greater")
    >>> res.n, res.w_signed_rank_sum, res.statistic, round(res.pvalue, 4)
    (9, 35.0, 40.0, 0.0176)
    """
    check(alternative, "alternative", "wilcoxon_test", ALTERNATIVE)
    d = paired_diff(a, b)
    nonzero = d[d != 0]
    mean = float(d.mean())
    if nonzero.size == 0:
        return TestResult(
            test="wilcoxon", statistic=0.0, pvalue=1.0, alternative=alternative, n=0,
            mean_diff=0.0, w_signed_rank_sum=0.0,
        )
    ranks = stats.rankdata(np.abs(nonzero), method="average")
    w = float(np.sum(np.sign(nonzero) * ranks))
    has_ties = np.unique(ranks).size < ranks.size
    if d.size <= _WILCOXON_PERMUTATION_MAX and (has_ties or nonzero.size < d.size):
        statistic, p = _wilcoxon_sign_flip(nonzero, ranks, alternative)
    else:
        res = stats.wilcoxon(d, zero_method="wilcox", alternative=alternative)
        statistic, p = float(res.statistic), float(res.pvalue)
    return TestResult(
        test="wilcoxon", statistic=statistic, pvalue=p, alternative=alternative,
        n=int(nonzero.size), mean_diff=mean, w_signed_rank_sum=w,
    )


# scipy.stats.wilcoxon(method="auto") runs an exact sign-flip permutation test of R+
# when there are ties or zeros and at most 13 differences (2**13 < 9999 resamples).
_WILCOXON_PERMUTATION_MAX = 13


def _wilcoxon_sign_flip(
    nonzero: FloatArray, ranks: FloatArray, alternative: str
) -> tuple[float, float]:
    """scipy's exact permutation branch of ``wilcoxon``, vectorised.

    Enumerates the ``2**m`` sign patterns of the ``m`` non-zero differences (flipping a
    zero changes nothing, so the ratio equals scipy's count over ``2**n``). R+ sums
    half-integer ranks, so comparisons are exact. scipy's own loop takes seconds at
    ``n = 13``.
    """
    m = nonzero.size
    r_plus = float(ranks[nonzero > 0].sum())
    r_minus = float(ranks[nonzero < 0].sum())
    patterns = np.arange(2**m, dtype=np.int64)[:, None]
    positive = ((patterns >> np.arange(m, dtype=np.int64)) & 1).astype(np.float64)
    null = positive @ ranks
    p_less = int(np.count_nonzero(null <= r_plus)) / 2**m
    p_greater = int(np.count_nonzero(null >= r_plus)) / 2**m
    if alternative == "less":
        return r_plus, p_less
    if alternative == "greater":
        return r_plus, p_greater
    return min(r_plus, r_minus), min(1.0, 2.0 * min(p_less, p_greater))


def sign_test(
    a: ArrayLike, b: ArrayLike, *, alternative: Alternative = "two-sided"
) -> TestResult:
    """Sign test: binomial test on the number of queries where b beats a (ties dropped).

    Equal to ``scipy.stats.binomtest(k, n, 0.5, alternative)`` with ``k`` the number of
    positive differences and ``n`` the number of non-zero ones.

    Returns
    -------
    TestResult
        ``test="sign"``; ``statistic`` is ``k`` (a count, where scipy reports ``k / n``);
        ``n`` the non-zero differences. All differences 0: statistic 0, p-value 1.

    Examples
    --------
    Seed 001: 7 of the 9 non-zero differences are positive, one-sided p = 46/512.

    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> res = sign_test(A, B, alternative="greater")
    >>> res.statistic, res.n, res.pvalue == 46 / 512
    (7.0, 9, True)
    """
    check(alternative, "alternative", "sign_test", ALTERNATIVE)
    d = paired_diff(a, b)
    k = int(np.count_nonzero(d > 0))
    m = int(np.count_nonzero(d))
    p = 1.0 if m == 0 else float(stats.binomtest(k, m, 0.5, alternative=alternative).pvalue)
    return TestResult(
        test="sign", statistic=float(k), pvalue=p, alternative=alternative, n=m,
        mean_diff=float(d.mean()),
    )
