"""Paired significance tests, confidence intervals and planning for IR evaluation.

Every test here compares two systems evaluated on the *same* queries: ``a`` and ``b``
are aligned 1-D arrays of per-query values of one measure, and the difference is
always ``d = b - a``. ``alternative="greater"`` means "b is better than a".

The results follow :mod:`scipy.stats`: each test returns a frozen :class:`TestResult`
with ``statistic``, ``pvalue``, ``alternative`` and a ``confidence_interval()``
method where one is defined. Monte Carlo p-values are ``(b + 1) / (B + 1)``, never 0,
and are reproducible: ``rng`` accepts ``None``, an ``int`` seed or a
:class:`numpy.random.Generator`.

Layers
------
* kernels over a matrix of difference columns ``D`` (``n_queries x n_pairs``), so that
  many pairs and measures share one sign matrix (randomization) or one resampling
  matrix (bootstrap) and one BLAS matrix product;
* single-pair functions (:func:`paired_t_test`, :func:`wilcoxon_test`,
  :func:`sign_test`, :func:`randomization_test`, :func:`bootstrap_test`, ...), which
  call the same kernels with one column;
* many systems: :func:`compare_pairs`, :func:`compare_measures`,
  :func:`correct_pvalues`, :func:`tukey_hsd`;
* planning: :func:`paired_t_power`, :func:`min_detectable_difference`,
  :func:`queries_needed`, and :func:`mean_ci` for one system's mean.

Seed 001 (table 8-6) is the worked example used throughout the docstrings.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

__all__ = [
    "ConfidenceInterval",
    "MeanCI",
    "PairComparison",
    "TestResult",
    "TukeyComparison",
    "bootstrap_ci",
    "bootstrap_test",
    "bootstrap_test_many",
    "compare_measures",
    "compare_pairs",
    "correct_pvalues",
    "effect_size",
    "mean_ci",
    "min_detectable_difference",
    "paired_t_power",
    "paired_t_test",
    "queries_needed",
    "randomization_test",
    "randomization_test_many",
    "sign_test",
    "tukey_hsd",
    "where_significant",
    "wilcoxon_test",
    "win_tie_loss",
]

Alternative = Literal["two-sided", "greater", "less"]
RngLike = None | int | np.random.Generator | np.random.SeedSequence
FloatArray = NDArray[np.float64]

ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
TESTS: tuple[str, ...] = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
CORRECTIONS: tuple[str, ...] = ("none", "bonferroni", "holm", "bh")
FAMILIES: tuple[str, ...] = ("measure", "all")
BOOTSTRAP_METHODS: tuple[str, ...] = ("percentile", "bca")

_EPS = float(np.finfo(np.float64).eps)
# Resampling matrices are processed in chunks of about this many elements (16 MB of
# float64): small enough to stay in cache while converting bits to floats, large
# enough for an efficient matrix product. Results never depend on the chunk size.
_CHUNK_ELEMENTS = 2**21
# Largest number of queries for which 2**n sign patterns can be enumerated exactly.
_MAX_EXACT_QUERIES = 40


# --------------------------------------------------------------------------- results


class ConfidenceInterval(NamedTuple):
    """Lower and upper bound of a confidence interval (``scipy`` naming)."""

    low: float
    high: float


class MeanCI(NamedTuple):
    """A mean with its confidence interval, as returned by :func:`mean_ci`."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class TestResult:
    """Result of a paired test of two systems (``d = b - a``).

    Attributes
    ----------
    test : str
        ``"t"``, ``"wilcoxon"``, ``"sign"``, ``"randomization"`` or ``"bootstrap"``.
    statistic : float
        t: Student's t. wilcoxon: scipy's statistic (``min(R+, R-)`` for two-sided,
        ``R+`` otherwise). sign: the number of positive differences.
        randomization and bootstrap: the mean difference.
    pvalue : float
        The p-value for ``alternative``.
    alternative : str
        ``"two-sided"``, ``"greater"`` (b better) or ``"less"`` (a better).
    n : int
        Number of pairs used: all queries for t, randomization and bootstrap; the
        non-zero differences for wilcoxon and sign (zeros are dropped).
    mean_diff : float
        Mean of ``b - a`` over all queries.
    df, std_err : float or None
        t only: degrees of freedom and standard error of the mean difference.
    w_signed_rank_sum : float or None
        wilcoxon only: the textbook W, the sum of signed ranks ``R+ - R-``.
    n_resamples : int or None
        randomization and bootstrap: resamples used (``2**n`` when exact).
    exact : bool or None
        randomization: ``True`` when all ``2**n`` sign patterns were enumerated.
    ci_method : str or None
        bootstrap: ``"percentile"`` or ``"bca"``.
    bootstrap_distribution : ndarray or None
        bootstrap: the resampled mean differences (not shown in ``repr``).
    """

    __test__ = False  # not a pytest test class despite the name

    test: str
    statistic: float
    pvalue: float
    alternative: str
    n: int
    mean_diff: float
    df: float | None = None
    std_err: float | None = None
    w_signed_rank_sum: float | None = None
    n_resamples: int | None = None
    exact: bool | None = None
    ci_method: str | None = None
    bootstrap_distribution: FloatArray | None = field(default=None, repr=False, compare=False)
    _bca: tuple[float, float] | None = field(default=None, repr=False, compare=False)

    def confidence_interval(self, confidence_level: float = 0.95) -> ConfidenceInterval:
        """Confidence interval of the mean difference ``mean(b - a)``.

        Like scipy, the interval is one-sided when ``alternative`` is (``-inf`` or
        ``inf`` on the open side).

        Parameters
        ----------
        confidence_level : float, default 0.95
            Strictly between 0 and 1.

        Returns
        -------
        ConfidenceInterval
            t: Student t-interval (as ``scipy.stats.ttest_rel(b, a)``).
            bootstrap: the percentile or BCa interval from the stored resamples.

        Raises
        ------
        NotImplementedError
            For the wilcoxon, sign and randomization tests, which define no interval
            of the mean difference.
        """
        _check_confidence_level(confidence_level)
        if self.test == "t":
            if self.df is None or self.std_err is None:
                raise ValueError("a t-test result needs df and std_err for its interval")
            low, high = _t_interval(
                np.array([self.mean_diff]), np.array([self.std_err]), float(self.df),
                confidence_level, self.alternative,
            )
            return ConfidenceInterval(float(low[0]), float(high[0]))
        if self.test == "bootstrap" and self.bootstrap_distribution is not None:
            low, high = _bootstrap_interval(
                self.bootstrap_distribution[:, None],
                confidence_level,
                self.alternative,
                None if self._bca is None else (np.array([self._bca[0]]), np.array([self._bca[1]])),
            )
            return ConfidenceInterval(float(low[0]), float(high[0]))
        raise NotImplementedError(
            f"the {self.test!r} test defines no confidence interval of the mean difference; "
            "use paired_t_test or bootstrap_test"
        )


@dataclass(frozen=True)
class PairComparison:
    """One row of :func:`compare_pairs`: system ``b`` against system ``a`` for one test.

    ``mean_diff = mean_b - mean_a``; ``wins`` counts queries where b > a.
    ``ci_low``/``ci_high`` bound the mean difference (two-sided, ``confidence_level``):
    a Student t-interval for every test except ``"bootstrap"``, whose rows carry the
    bootstrap percentile/BCa interval. ``effect_size`` is Cohen's d_z
    (``mean(d) / sd(d)``). ``n`` is the number of queries (for wilcoxon and sign the
    test itself uses ``n - ties`` of them). ``pvalue_corrected`` is adjusted with
    ``correction`` over the comparison family (see :func:`compare_measures`).
    """

    measure: str | None
    system_a: str
    system_b: str
    test: str
    statistic: float
    pvalue: float
    pvalue_corrected: float
    correction: str
    alternative: str
    mean_a: float
    mean_b: float
    mean_diff: float
    ci_low: float
    ci_high: float
    effect_size: float
    wins: int
    ties: int
    losses: int
    n: int

    def as_dict(self) -> dict[str, Any]:
        """The record as a plain ``dict`` (e.g. for ``pandas.DataFrame``)."""
        return asdict(self)


@dataclass(frozen=True)
class TukeyComparison:
    """One pair of :func:`tukey_hsd`: ``mean_diff = mean_b - mean_a`` with its adjusted
    p-value and simultaneous confidence interval."""

    system_a: str
    system_b: str
    mean_diff: float
    pvalue: float
    ci_low: float
    ci_high: float

    def as_dict(self) -> dict[str, Any]:
        """The record as a plain ``dict``."""
        return asdict(self)


# ------------------------------------------------------------------------ validation


def _check_alternative(alternative: str) -> str:
    if alternative not in ALTERNATIVES:
        raise ValueError(
            f"alternative must be one of {', '.join(map(repr, ALTERNATIVES))}; "
            f"got {alternative!r}"
        )
    return alternative


def _check_choice(value: str, name: str, choices: Sequence[str]) -> str:
    if value not in choices:
        raise ValueError(
            f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}"
        )
    return value


def _check_confidence_level(confidence_level: float) -> float:
    level = float(confidence_level)
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence_level must be strictly between 0 and 1; got {level}")
    return level


def _check_n_resamples(n_resamples: int) -> int:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, numbers.Integral):
        raise ValueError(f"n_resamples must be an int >= 1; got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be an int >= 1; got {n_resamples}")
    return int(n_resamples)


def _check_finite(values: FloatArray, name: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        where = np.unravel_index(int(np.argmax(bad)), values.shape)
        index = where[0] if len(where) == 1 else where
        kind = "NaN" if np.isnan(values[where]) else "an infinite value"
        raise ValueError(f"{name} contains {kind} at index {index}")


def _as_values(values: ArrayLike, name: str, *, min_size: int = 2) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric per-query values: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per query); got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} needs at least {min_size} queries; got {arr.size}")
    _check_finite(arr, name)
    return arr


def _paired_diff(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """Validated ``b - a`` of two aligned per-query arrays."""
    a_arr = _as_values(a, "a", min_size=0)
    b_arr = _as_values(b, "b", min_size=0)
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must have the same length (paired queries); got {a_arr.size} and "
            f"{b_arr.size}"
        )
    if a_arr.size < 2:
        raise ValueError(f"a paired test needs at least 2 queries; got {a_arr.size}")
    return b_arr - a_arr


def _as_diff_matrix(diffs: ArrayLike) -> FloatArray:
    """Validated difference matrix ``D`` (``n_queries x n_columns``), C-contiguous."""
    try:
        D = np.asarray(diffs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"diffs must be numeric: {exc}") from None
    if D.ndim != 2:
        raise ValueError(f"diffs must be 2-D (n_queries x n_pairs); got shape {D.shape}")
    if D.shape[0] < 2:
        raise ValueError(f"a paired test needs at least 2 queries; got {D.shape[0]}")
    _check_finite(D, "diffs")
    return np.ascontiguousarray(D)


def _as_generator(rng: RngLike) -> np.random.Generator:
    """``None`` / int seed / SeedSequence -> a new Generator; a Generator is used as is."""
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise ValueError(f"rng seed must be a non-negative int; got {rng}")
        return np.random.default_rng(int(rng))
    raise TypeError(
        f"rng must be None, an int seed or a numpy.random.Generator; got {type(rng).__name__}"
    )


def _exact_sums(D: FloatArray) -> FloatArray:
    """Column sums rounded once (``math.fsum``): independent of layout and batching."""
    return np.array([math.fsum(D[:, j]) for j in range(D.shape[1])], dtype=np.float64)


# ------------------------------------------------------------------------ t kernel


def _t_kernel(D: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Mean, standard error and t of each column of ``D`` (same arithmetic as scipy)."""
    n = D.shape[0]
    Dt = np.ascontiguousarray(D.T)  # rows -> numpy's pairwise summation, like 1-D input
    mean = Dt.mean(axis=1)
    var = ((Dt - mean[:, None]) ** 2).mean(axis=1) * (n / (n - 1.0))
    se = np.sqrt(var / n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / se
    zero = (Dt == 0).all(axis=1)
    t[zero] = 0.0
    return mean, se, t, n - 1


def _t_pvalue(t: FloatArray, df: float, alternative: str) -> FloatArray:
    if alternative == "less":
        return special.stdtr(df, t)
    if alternative == "greater":
        return special.stdtr(df, -t)
    return 2.0 * special.stdtr(df, -np.abs(t))


def _t_interval(
    mean: FloatArray, se: FloatArray, df: float, confidence_level: float, alternative: str
) -> tuple[FloatArray, FloatArray]:
    """scipy's t confidence interval of a mean (one-sided for one-sided alternatives)."""
    if alternative == "less":
        low = np.full_like(mean, -np.inf)
        high = mean + special.stdtrit(df, confidence_level) * se
    elif alternative == "greater":
        low = mean + special.stdtrit(df, 1.0 - confidence_level) * se
        high = np.full_like(mean, np.inf)
    else:
        tail = (1.0 - confidence_level) / 2.0
        low = mean + special.stdtrit(df, tail) * se
        high = mean + special.stdtrit(df, 1.0 - tail) * se
    return low, high


def _t_many(D: FloatArray, alternative: str) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    mean, se, t, df = _t_kernel(D)
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
    _check_alternative(alternative)
    d = _paired_diff(a, b)
    t, p, se, df = _t_many(d[:, None], alternative)
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
    _check_alternative(alternative)
    d = _paired_diff(a, b)
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
    _check_alternative(alternative)
    d = _paired_diff(a, b)
    k = int(np.count_nonzero(d > 0))
    m = int(np.count_nonzero(d))
    p = 1.0 if m == 0 else float(stats.binomtest(k, m, 0.5, alternative=alternative).pvalue)
    return TestResult(
        test="sign", statistic=float(k), pvalue=p, alternative=alternative, n=m,
        mean_diff=float(d.mean()),
    )


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
    return 100.0 * _EPS * np.maximum(np.abs(sums), math.sqrt(n) * np.abs(D).sum(axis=0))


def _randomization_core(
    D: FloatArray, alternative: str, n_resamples: int, rng: RngLike
) -> tuple[FloatArray, FloatArray, int, bool]:
    """Observed mean, p-value per column, resamples used and exactness."""
    n = D.shape[0]
    exact = n <= _MAX_EXACT_QUERIES and 2**n <= n_resamples
    total = 2**n if exact else n_resamples
    gen = _as_generator(rng)  # validates rng even when the enumeration does not use it
    sums = _exact_sums(D)
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
    _check_alternative(alternative)
    n_resamples = _check_n_resamples(n_resamples)
    D = _as_diff_matrix(diffs)
    means, p, used, exact = _randomization_core(D, alternative, n_resamples, rng)
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
    d = _paired_diff(a, b)
    return randomization_test_many(
        d[:, None], alternative=alternative, n_resamples=n_resamples, rng=rng
    )[0]


# ---------------------------------------------------------------------- bootstrap


def _bootstrap_means(D: FloatArray, n_resamples: int, rng: RngLike) -> FloatArray:
    """Resampled column means, ``(n_resamples, n_columns)``.

    The resampling indices are ``rng.integers(0, n, (rows, n))`` drawn chunk by chunk
    with ``rows`` a function of ``n`` only, so they depend only on (seed, n_resamples,
    n); for ``n_resamples * n <= 2**21`` they are exactly the indices of
    ``scipy.stats.bootstrap`` with the same seed. Means are computed as
    ``counts @ D / n`` (one matrix product for all columns).
    """
    gen = _as_generator(rng)
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
    jack = (_exact_sums(D) - D) / (n - 1.0)  # leave-one-out means
    u = (n - 1.0) * (jack.mean(axis=0) - jack)
    num = np.sum(u**3, axis=0) / n**3
    den = np.sum(u**2, axis=0) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        accel = np.where(den > 0, num / den**1.5 / 6.0, 0.0)
    z0 = np.where(den > 0, z0, 0.0)  # constant differences: degenerate, interval = mean
    return z0, accel


def _bootstrap_interval(
    theta_b: FloatArray,
    confidence_level: float,
    alternative: str,
    bca: tuple[FloatArray, FloatArray] | None,
) -> tuple[FloatArray, FloatArray]:
    """Percentile (``bca is None``) or BCa interval of each column (scipy's rules)."""
    k = theta_b.shape[1]
    alpha = (1.0 - confidence_level) / 2.0 if alternative == "two-sided" else 1.0 - confidence_level
    if bca is None:
        probs_low = np.full(k, alpha)
        probs_high = np.full(k, 1.0 - alpha)
    else:
        z0, accel = bca
        z_alpha = float(special.ndtri(alpha))
        num1 = z0 + z_alpha
        num2 = z0 - z_alpha
        probs_low = special.ndtr(z0 + num1 / (1.0 - accel * num1))
        probs_high = special.ndtr(z0 + num2 / (1.0 - accel * num2))
    low = np.empty(k)
    high = np.empty(k)
    for j in range(k):
        low[j], high[j] = np.quantile(theta_b[:, j], [probs_low[j], probs_high[j]])
    if alternative == "less":
        low[:] = -np.inf
    elif alternative == "greater":
        high[:] = np.inf
    return low, high


def _bootstrap_pvalues(theta_b: FloatArray, D: FloatArray, alternative: str) -> FloatArray:
    """Shift-method p-value: resample ``d - mean(d)``, i.e. compare ``theta_b - mean``
    with the observed mean; ``(b + 1) / (B + 1)``."""
    n = D.shape[0]
    sums = _exact_sums(D)
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
    _check_alternative(alternative)
    _check_choice(method, "method", BOOTSTRAP_METHODS)
    n_resamples = _check_n_resamples(n_resamples)
    D = _as_diff_matrix(diffs)
    theta_b = _bootstrap_means(D, n_resamples, rng)
    p = _bootstrap_pvalues(theta_b, D, alternative)
    means = _exact_sums(D) / D.shape[0]
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
    d = _paired_diff(a, b)
    return bootstrap_test_many(
        d[:, None], alternative=alternative, method=method, n_resamples=n_resamples, rng=rng
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
    level = _check_confidence_level(confidence_level)
    res = bootstrap_test(a, b, method=method, n_resamples=n_resamples, rng=rng)
    return res.confidence_interval(level)


# -------------------------------------------------------------- effect and counts


def _effect_sizes(D: FloatArray) -> FloatArray:
    mean, se, _, _ = _t_kernel(D)
    sd = se * math.sqrt(D.shape[0])
    with np.errstate(divide="ignore", invalid="ignore"):
        es = mean / sd
    es[(D == 0).all(axis=0)] = 0.0
    return es


def effect_size(a: ArrayLike, b: ArrayLike, *, hedges: bool = False) -> float:
    """Standardised mean difference of paired values: Cohen's d_z = mean(d) / sd(d).

    ``sd`` uses ``ddof=1``. With ``hedges=True`` the result is multiplied by Hedges'
    small-sample correction ``J = 1 - 3 / (4 (n - 1) - 1)`` (0 for ``n = 2``).
    All differences 0 gives 0; a non-zero constant difference gives ``±inf``.

    Examples
    --------
    >>> A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]
    >>> B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
    >>> round(effect_size(A, B), 3), round(effect_size(A, B, hedges=True), 3)
    (0.736, 0.673)
    """
    d = _paired_diff(a, b)
    es = float(_effect_sizes(d[:, None])[0])
    if hedges:
        es *= 1.0 - 3.0 / (4.0 * (d.size - 1) - 1.0)
    return es


def _win_tie_loss(D: FloatArray, tol: float) -> tuple[NDArray[np.int64], ...]:
    wins = np.count_nonzero(D > tol, axis=0)
    losses = np.count_nonzero(D < -tol, axis=0)
    return wins, D.shape[0] - wins - losses, losses


def win_tie_loss(a: ArrayLike, b: ArrayLike, *, tol: float = 0.0) -> tuple[int, int, int]:
    """Queries where b beats a (``b - a > tol``), ties (``|b - a| <= tol``) and losses.

    Examples
    --------
    >>> win_tie_loss([25, 43, 39, 75], [35, 84, 15, 75])
    (2, 1, 1)
    """
    tol = float(tol)
    if not tol >= 0.0:
        raise ValueError(f"tol must be >= 0; got {tol}")
    d = _paired_diff(a, b)
    wins, ties, losses = _win_tie_loss(d[:, None], tol)
    return int(wins[0]), int(ties[0]), int(losses[0])


# ----------------------------------------------------------------- corrections


def _bonferroni(p: FloatArray) -> FloatArray:
    return np.minimum(p * p.size, 1.0)


def _holm(p: FloatArray) -> FloatArray:
    m = p.size
    order = np.argsort(p, kind="stable")
    adjusted = np.maximum.accumulate(p[order] * (m - np.arange(m)))
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


def _benjamini_hochberg(p: FloatArray) -> FloatArray:
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = p[order] * m / np.arange(1, m + 1)
    adjusted = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(adjusted, 1.0)
    return out


_CORRECTIONS: dict[str, Callable[[FloatArray], FloatArray]] = {
    "none": lambda p: p.copy(),
    "bonferroni": _bonferroni,
    "holm": _holm,
    "bh": _benjamini_hochberg,
}


def correct_pvalues(pvalues: ArrayLike, method: str = "holm") -> FloatArray:
    """Adjust a family of p-values for multiple comparisons.

    Parameters
    ----------
    pvalues : array_like, 1-D
        The raw p-values of one family (in [0, 1]).
    method : {"none", "bonferroni", "holm", "bh"}, default "holm"
        ``"bonferroni"``: ``min(m p, 1)``. ``"holm"``: Holm's step-down (FWER),
        ``max_{j <= i} (m - j + 1) p_(j)``. ``"bh"``: Benjamini–Hochberg step-up (FDR),
        ``min_{j >= i} m p_(j) / j``. All monotone in the raw p-values, clipped to 1.

    Returns
    -------
    ndarray
        Adjusted p-values in the input order; never smaller than the raw ones.

    Examples
    --------
    >>> correct_pvalues([0.01, 0.04, 0.03, 0.005], "holm").tolist()
    [0.03, 0.06, 0.06, 0.02]
    """
    _check_choice(method, "method", CORRECTIONS)
    try:
        p = np.asarray(pvalues, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"pvalues must be numeric: {exc}") from None
    if p.ndim != 1:
        raise ValueError(f"pvalues must be 1-D; got shape {p.shape}")
    if np.isnan(p).any():
        raise ValueError(f"pvalues contains NaN at index {int(np.argmax(np.isnan(p)))}")
    if ((p < 0) | (p > 1)).any():
        raise ValueError(f"pvalues must lie in [0, 1]; got {p[(p < 0) | (p > 1)][0]}")
    if p.size == 0:
        return p.copy()
    return _CORRECTIONS[method](p)


# ------------------------------------------------------------- many systems


@dataclass(frozen=True)
class _Column:
    measure: str
    system_a: str
    system_b: str
    a: FloatArray
    b: FloatArray


# Each entry: (D, alternative, confidence_level, n_resamples, rng) ->
#   (statistic, pvalue, ci_low or None, ci_high or None); None = the t-interval.
_ColumnResult = tuple[FloatArray, FloatArray, FloatArray | None, FloatArray | None]
_ColumnTest = Callable[[FloatArray, str, float, int, RngLike], _ColumnResult]


def _compare_t(
    D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
) -> _ColumnResult:
    t, p, _, _ = _t_many(D, alternative)
    return t, p, None, None


def _compare_per_column(
    fn: Callable[..., TestResult],
) -> _ColumnTest:
    def run(
        D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
    ) -> _ColumnResult:
        zeros = np.zeros(D.shape[0])
        results = [fn(zeros, D[:, j], alternative=alternative) for j in range(D.shape[1])]
        return (
            np.array([r.statistic for r in results]),
            np.array([r.pvalue for r in results]),
            None,
            None,
        )

    return run


def _compare_randomization(
    D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
) -> _ColumnResult:
    means, p, _, _ = _randomization_core(D, alternative, n_resamples, rng)
    return means, p, None, None


def _compare_bootstrap(
    D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
) -> _ColumnResult:
    theta_b = _bootstrap_means(D, n_resamples, rng)
    p = _bootstrap_pvalues(theta_b, D, alternative)
    low, high = _bootstrap_interval(theta_b, level, "two-sided", None)
    return _exact_sums(D) / D.shape[0], p, low, high


_COMPARE_TESTS: dict[str, _ColumnTest] = {
    "t": _compare_t,
    "wilcoxon": _compare_per_column(wilcoxon_test),
    "sign": _compare_per_column(sign_test),
    "randomization": _compare_randomization,
    "bootstrap": _compare_bootstrap,
}


def _check_tests(tests: Sequence[str]) -> tuple[str, ...]:
    if isinstance(tests, str):
        tests = (tests,)
    tests = tuple(tests)
    if not tests:
        raise ValueError("tests must name at least one test")
    for name in tests:
        _check_choice(name, "each test", TESTS)
    if len(set(tests)) != len(tests):
        raise ValueError(f"tests must not repeat a test; got {tests}")
    return tests


def _system_columns(
    measure: str, scores: Mapping[str, ArrayLike], baseline: str | None
) -> list[_Column]:
    if len(scores) < 2:
        raise ValueError(f"measure {measure!r}: need at least 2 systems; got {len(scores)}")
    values = {name: _as_values(v, f"scores[{name!r}]") for name, v in scores.items()}
    sizes = {v.size for v in values.values()}
    if len(sizes) != 1:
        shown = ", ".join(f"{name}={v.size}" for name, v in values.items())
        raise ValueError(f"measure {measure!r}: systems must share the same queries; {shown}")
    names = list(values)
    if baseline is None:
        pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    elif baseline not in values:
        raise ValueError(f"measure {measure!r}: baseline {baseline!r} is not among {names}")
    else:
        pairs = [(baseline, name) for name in names if name != baseline]
    return [_Column(measure, x, y, values[x], values[y]) for x, y in pairs]


def compare_measures(
    scores_by_measure: Mapping[str, Mapping[str, ArrayLike]],
    *,
    baseline: str | None = None,
    tests: Sequence[str] = ("t",),
    alternative: Alternative = "two-sided",
    correction: str = "none",
    family: Literal["measure", "all"] = "measure",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> list[PairComparison]:
    """Paired comparisons of many systems on several measures.

    Parameters
    ----------
    scores_by_measure : mapping measure -> (mapping system -> per-query values)
        Within a measure all systems must be aligned on the same queries. Different
        measures may use different query sets.
    baseline : str, optional
        ``None``: every unordered pair once, ``a`` = the system earlier in mapping
        order, ``b`` = the later. A name: each other system ``b`` against ``a = baseline``.
    tests : sequence of {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    alternative : {"two-sided", "greater", "less"}
        ``"greater"`` = b better than a.
    correction : {"none", "bonferroni", "holm", "bh"}
        Applied by :func:`correct_pvalues` within each family.
    family : {"measure", "all"}, default "measure"
        The family of a correction is always one test; ``"measure"``: the pairs of one
        measure and one test (what :func:`compare_pairs` does); ``"all"``: the pairs of
        all measures for one test.
    confidence_level : float, default 0.95
        Of the (two-sided) ``ci_low``/``ci_high`` columns.
    n_resamples : int, default 10_000
        For the randomization and bootstrap tests.
    rng : None, int or numpy.random.Generator
        With an int seed each resampling test of each query-set size starts a new
        generator from that seed, so every row equals the single-pair function
        (:func:`randomization_test`, :func:`bootstrap_test`) with the same seed. A
        Generator is consumed in order: per query-set size, tests in ``tests`` order.

    Returns
    -------
    list of PairComparison
        Ordered by measure, then pair, then test (in the order of ``tests``).

    Notes
    -----
    All randomization columns with the same number of queries (all pairs of all such
    measures) share one sign matrix and one matrix product per chunk; the same for the
    bootstrap resampling. The t-test is vectorised over columns; Wilcoxon and sign
    tests are computed pair by pair (about 1 ms each).
    """
    tests = _check_tests(tests)
    _check_alternative(alternative)
    _check_choice(correction, "correction", CORRECTIONS)
    _check_choice(family, "family", FAMILIES)
    level = _check_confidence_level(confidence_level)
    n_resamples = _check_n_resamples(n_resamples)
    if not scores_by_measure:
        raise ValueError("scores_by_measure must hold at least one measure")
    if isinstance(rng, np.random.SeedSequence):
        rng = np.random.default_rng(rng)  # consumed in order, like a Generator

    columns: list[_Column] = []
    for measure, scores in scores_by_measure.items():
        columns.extend(_system_columns(measure, scores, baseline))

    # group the columns by query count: one D matrix (and one resampling) per group
    groups: dict[int, list[int]] = {}
    for i, col in enumerate(columns):
        groups.setdefault(col.a.size, []).append(i)

    k = len(columns)
    stat = {name: np.empty(k) for name in tests}
    pval = {name: np.empty(k) for name in tests}
    ci_low = {name: np.empty(k) for name in tests}
    ci_high = {name: np.empty(k) for name in tests}
    effect = np.empty(k)
    wtl = np.empty((3, k), dtype=np.int64)
    for idx in groups.values():
        D = np.ascontiguousarray(np.column_stack([columns[i].b - columns[i].a for i in idx]))
        mean, se, _, df = _t_kernel(D)
        t_low, t_high = _t_interval(mean, se, df, level, "two-sided")
        effect[idx] = _effect_sizes(D)
        wtl[:, idx] = np.vstack(_win_tie_loss(D, 0.0))
        for name in tests:
            s, p, low, high = _COMPARE_TESTS[name](D, alternative, level, n_resamples, rng)
            stat[name][idx] = s
            pval[name][idx] = p
            ci_low[name][idx] = t_low if low is None else low
            ci_high[name][idx] = t_high if high is None else high

    corrected = {name: np.empty(k) for name in tests}
    for name in tests:
        fam_of = [None if family == "all" else col.measure for col in columns]
        for key in dict.fromkeys(fam_of):
            members = [i for i in range(k) if fam_of[i] == key]
            corrected[name][members] = correct_pvalues(pval[name][members], correction)

    records = []
    for i, col in enumerate(columns):
        mean_a = float(col.a.mean())
        mean_b = float(col.b.mean())
        for name in tests:
            records.append(
                PairComparison(
                    measure=col.measure, system_a=col.system_a, system_b=col.system_b,
                    test=name, statistic=float(stat[name][i]), pvalue=float(pval[name][i]),
                    pvalue_corrected=float(corrected[name][i]), correction=correction,
                    alternative=alternative, mean_a=mean_a, mean_b=mean_b,
                    mean_diff=float(np.mean(col.b - col.a)),
                    ci_low=float(ci_low[name][i]), ci_high=float(ci_high[name][i]),
                    effect_size=float(effect[i]), wins=int(wtl[0, i]), ties=int(wtl[1, i]),
                    losses=int(wtl[2, i]), n=int(col.a.size),
                )
            )
    return records


def compare_pairs(
    scores: Mapping[str, ArrayLike],
    *,
    baseline: str | None = None,
    tests: Sequence[str] = ("t",),
    alternative: Alternative = "two-sided",
    correction: str = "none",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: RngLike = None,
    measure: str | None = None,
) -> list[PairComparison]:
    """Paired comparisons of many systems on one measure.

    ``scores`` maps system name -> per-query values, all aligned on the same queries.
    Pairs: all unordered pairs (``a`` earlier in mapping order, ``b`` later), or each
    system against ``baseline`` (``a = baseline``). The correction family is one test
    over all pairs of this call. ``measure`` only labels the records. See
    :func:`compare_measures` for the parameters and for several measures at once (which
    shares one resampling across measures).

    Examples
    --------
    >>> rows = compare_pairs(
    ...     {"A": [25, 43, 39, 75, 43, 15, 20, 52, 49, 50],
    ...      "B": [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]},
    ...     tests=("t", "sign"), alternative="greater")
    >>> [(r.test, r.mean_diff, r.wins, r.ties, r.losses) for r in rows]
    [('t', 21.4, 7, 1, 2), ('sign', 21.4, 7, 1, 2)]
    """
    rows = compare_measures(
        {"" if measure is None else measure: scores}, baseline=baseline, tests=tests,
        alternative=alternative, correction=correction, family="measure",
        confidence_level=confidence_level, n_resamples=n_resamples, rng=rng,
    )
    if measure is not None:
        return rows
    return [PairComparison(**{**r.as_dict(), "measure": None}) for r in rows]


def where_significant(
    comparisons: Sequence[PairComparison], *, alpha: float = 0.05, corrected: bool = True
) -> list[PairComparison]:
    """The comparisons whose (corrected) p-value is below ``alpha``."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be strictly between 0 and 1; got {alpha}")
    key = "pvalue_corrected" if corrected else "pvalue"
    return [c for c in comparisons if getattr(c, key) < alpha]


def tukey_hsd(
    scores: Mapping[str, ArrayLike],
    *,
    paired: bool = True,
    confidence_level: float = 0.95,
) -> list[TukeyComparison]:
    """Tukey's honestly significant difference test over all pairs of systems.

    Parameters
    ----------
    scores : mapping system -> per-query values (aligned)
    paired : bool, default True
        ``True``: repeated-measures Tukey HSD. The error term is the residual mean
        square of the two-way ANOVA (systems x queries, no interaction),
        ``df = (n - 1)(k - 1)``, so per-query difficulty is removed as in the paired
        tests; the studentized range statistic is ``|mean_b - mean_a| / sqrt(MSE / n)``.
        With two systems its p-value equals the two-sided paired t-test's. With zero
        residual variance (every system a constant shift of another) the p-value is 0
        for a non-zero difference and 1 otherwise.
        ``False``: ``scipy.stats.tukey_hsd`` on the per-system samples, which treats
        them as independent groups (one-way ANOVA; ignores the pairing).
    confidence_level : float, default 0.95
        Of the simultaneous intervals.

    Returns
    -------
    list of TukeyComparison
        All unordered pairs, ``a`` earlier in mapping order, ``mean_diff = b - a``.
    """
    level = _check_confidence_level(confidence_level)
    columns = _system_columns("tukey_hsd", scores, None)
    names = list(scores)
    X = np.column_stack([_as_values(scores[name], f"scores[{name!r}]") for name in names])
    n, k = X.shape
    pos = {name: j for j, name in enumerate(names)}
    if not paired:
        res = stats.tukey_hsd(*(X[:, j] for j in range(k)))
        ci = res.confidence_interval(level)
        out = []
        for col in columns:
            i, j = pos[col.system_a], pos[col.system_b]
            out.append(
                TukeyComparison(
                    col.system_a, col.system_b, float(res.statistic[j, i]),
                    float(res.pvalue[j, i]), float(ci.low[j, i]), float(ci.high[j, i]),
                )
            )
        return out
    resid = X - X.mean(axis=1, keepdims=True) - X.mean(axis=0, keepdims=True) + X.mean()
    df = (n - 1) * (k - 1)
    se = math.sqrt(float(np.sum(resid**2)) / df / n)
    crit = float(stats.studentized_range.ppf(level, k, df))
    out = []
    for col in columns:
        diff = float(np.mean(col.b) - np.mean(col.a))
        if se == 0.0:
            p = 1.0 if diff == 0.0 else 0.0
        else:
            p = float(stats.studentized_range.sf(abs(diff) / se, k, df))
        out.append(
            TukeyComparison(col.system_a, col.system_b, diff, min(p, 1.0),
                            diff - crit * se, diff + crit * se)
        )
    return out


# -------------------------------------------------------------------- planning


def _check_positive(value: float, name: str) -> float:
    value = float(value)
    if not (math.isfinite(value) and value > 0.0):
        raise ValueError(f"{name} must be a positive finite number; got {value}")
    return value


def _check_probability(value: float, name: str) -> float:
    value = float(value)
    if not 0.0 < value < 1.0:
        raise ValueError(f"{name} must be strictly between 0 and 1; got {value}")
    return value


def _power(delta: float, sd_diff: float, n: int, alpha: float, alternative: str) -> float:
    df = n - 1
    nc = delta / sd_diff * math.sqrt(n)
    if alternative == "two-sided":
        crit = float(stats.t.ppf(1.0 - alpha / 2.0, df))
        # lower tail by symmetry: nct.cdf(-c, df, nc) is nan for some large nc
        return float(stats.nct.sf(crit, df, nc) + stats.nct.sf(crit, df, -nc))
    crit = float(stats.t.ppf(1.0 - alpha, df))
    return float(stats.nct.sf(crit, df, nc))


def paired_t_power(
    sd_diff: float,
    delta: float,
    n_queries: int,
    *,
    alpha: float = 0.05,
    alternative: Alternative = "two-sided",
) -> float:
    """Exact power of the paired t-test (noncentral t) for a true mean difference.

    Parameters
    ----------
    sd_diff : float
        Standard deviation of the per-query differences (e.g. from a pilot run).
    delta : float
        True mean difference, > 0; for one-sided alternatives its size in the
        direction of the alternative.
    n_queries : int
        Number of queries, >= 2.

    Examples
    --------
    >>> round(paired_t_power(0.2, 0.05, 100, alpha=0.05), 3)
    0.697
    """
    _check_alternative(alternative)
    sd_diff = _check_positive(sd_diff, "sd_diff")
    delta = _check_positive(delta, "delta")
    alpha = _check_probability(alpha, "alpha")
    n = _check_queries(n_queries)
    return _power(delta, sd_diff, n, alpha, alternative)


def _check_queries(n_queries: int) -> int:
    if isinstance(n_queries, bool) or not isinstance(n_queries, numbers.Integral):
        raise ValueError(f"n_queries must be an int >= 2; got {n_queries!r}")
    if n_queries < 2:
        raise ValueError(f"n_queries must be an int >= 2; got {n_queries}")
    return int(n_queries)


def min_detectable_difference(
    sd_diff: float,
    n_queries: int,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
) -> float:
    """Smallest true mean difference the paired t-test detects with the given power.

    Solves ``paired_t_power(sd_diff, delta, n_queries) = power`` for ``delta`` (Brent's
    method on the exact noncentral-t power) and returns the smallest float found with
    power >= ``power``, so that ``queries_needed(sd_diff, result) == n_queries``.

    Examples
    --------
    >>> round(min_detectable_difference(0.2, 100), 4)
    0.0566
    """
    _check_alternative(alternative)
    sd_diff = _check_positive(sd_diff, "sd_diff")
    alpha = _check_probability(alpha, "alpha")
    target = _check_probability(power, "power")
    n = _check_queries(n_queries)
    if target <= alpha:
        raise ValueError(f"power must exceed alpha={alpha} (the power at no effect); got {target}")

    def gap(delta: float) -> float:
        return _power(delta, sd_diff, n, alpha, alternative) - target

    high = sd_diff
    while gap(high) < 0.0:
        high *= 2.0
    delta = float(optimize.brentq(gap, 0.0, high, xtol=1e-15 * sd_diff, rtol=4 * _EPS))
    while gap(delta) < 0.0:
        delta = float(np.nextafter(delta, np.inf)) * (1.0 + 1e-12)
    return delta


def queries_needed(
    sd_diff: float,
    delta: float,
    *,
    alpha: float = 0.05,
    power: float = 0.8,
    alternative: Alternative = "two-sided",
) -> int:
    """Smallest number of queries for which the paired t-test has the given power.

    Exact noncentral-t power, searched by doubling then bisection over integers
    (power increases with ``n``). At least 2.

    Examples
    --------
    >>> queries_needed(0.2, 0.05)
    128
    """
    _check_alternative(alternative)
    sd_diff = _check_positive(sd_diff, "sd_diff")
    delta = _check_positive(delta, "delta")
    alpha = _check_probability(alpha, "alpha")
    target = _check_probability(power, "power")

    def enough(n: int) -> bool:
        return _power(delta, sd_diff, n, alpha, alternative) >= target

    if enough(2):
        return 2
    low, high = 2, 4
    while not enough(high):
        low, high = high, high * 2
        if high > 2**40:
            raise ValueError(f"delta={delta} is too small to detect with sd_diff={sd_diff}")
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high


def mean_ci(
    values: ArrayLike,
    *,
    confidence_level: float = 0.95,
    method: Literal["t", "bootstrap"] = "t",
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> MeanCI:
    """Mean of one system's per-query values with a two-sided confidence interval.

    Parameters
    ----------
    values : array_like, 1-D
        At least one finite value.
    method : {"t", "bootstrap"}, default "t"
        Student t-interval, or bootstrap percentile interval (same resampling as
        ``scipy.stats.bootstrap((values,), np.mean)`` with the same integer seed).
    n_resamples, rng
        Bootstrap only.

    Returns
    -------
    MeanCI
        ``(mean, low, high)``. With a single value the bounds are nan (undefined).

    Examples
    --------
    >>> m, low, high = mean_ci([0.2, 0.4, 0.6, 0.8])
    >>> round(m, 2), round(low, 4), round(high, 4)
    (0.5, 0.0891, 0.9109)
    """
    level = _check_confidence_level(confidence_level)
    _check_choice(method, "method", ("t", "bootstrap"))
    x = _as_values(values, "values", min_size=1)
    mean = float(x.mean())
    if x.size == 1:
        return MeanCI(mean, math.nan, math.nan)
    D = x[:, None]
    if method == "t":
        m, se, _, df = _t_kernel(D)
        low, high = _t_interval(m, se, df, level, "two-sided")
    else:
        theta_b = _bootstrap_means(D, _check_n_resamples(n_resamples), rng)
        low, high = _bootstrap_interval(theta_b, level, "two-sided", None)
    return MeanCI(mean, float(low[0]), float(high[0]))
