"""Shared pieces of :mod:`ireval_core.stats`: result types, constants, parameter constraints
and input checks, and the array helpers every test uses."""

from __future__ import annotations

import math
import numbers
from dataclasses import asdict, dataclass, field
from numbers import Integral, Real
from typing import Any, Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..intervals import bootstrap_interval, t_interval
from ..params import InstanceOf, Interval, Options, any_of, check

Alternative = Literal["two-sided", "greater", "less"]
RngLike = None | int | np.random.Generator | np.random.SeedSequence
FloatArray = NDArray[np.float64]

ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
TESTS: tuple[str, ...] = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
CORRECTIONS: tuple[str, ...] = ("none", "bonferroni", "holm", "bh")
FAMILIES: tuple[str, ...] = ("measure", "all")
BOOTSTRAP_METHODS: tuple[str, ...] = ("percentile", "bca")

EPS = float(np.finfo(np.float64).eps)


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
        confidence_level = check(confidence_level, "confidence_level",
                                 "TestResult.confidence_interval", CONFIDENCE_LEVEL)
        if self.test == "t":
            if self.df is None or self.std_err is None:
                raise ValueError("a t-test result needs df and std_err for its interval")
            low, high = t_interval(
                np.array([self.mean_diff]), np.array([self.std_err]), float(self.df),
                confidence_level, self.alternative,
            )
            return ConfidenceInterval(float(low[0]), float(high[0]))
        if self.test == "bootstrap" and self.bootstrap_distribution is not None:
            low, high = bootstrap_interval(
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


# The constraints of the parameters the statistics share, checked with
# :func:`ireval_core.params.check` (which names the parameter and the public function).
ALTERNATIVE = Options(ALTERNATIVES)
CONFIDENCE_LEVEL = Interval(Real, 0, 1, closed="neither")
PROBABILITY = CONFIDENCE_LEVEL  # alpha, power: strictly between 0 and 1
N_RESAMPLES = Interval(Integral, 1, None, closed="left")
RNG = any_of(None, Interval(Integral, 0, None, closed="left"),
             InstanceOf(np.random.SeedSequence, "a numpy.random.SeedSequence"),
             InstanceOf(np.random.Generator, "a numpy.random.Generator"))


def check_rng(rng: RngLike, function: str) -> RngLike:
    """``rng`` checked against :data:`RNG`: ``ValueError`` for a negative int seed,
    ``TypeError`` for anything else that is not a seed or a generator (a float too)."""
    integer = isinstance(rng, numbers.Integral) and not isinstance(rng, bool)
    return check(rng, "rng", function, RNG, error=None if integer else TypeError)


def check_finite(values: FloatArray, name: str) -> None:
    bad = ~np.isfinite(values)
    if bad.any():
        where = np.unravel_index(int(np.argmax(bad)), values.shape)
        index = where[0] if len(where) == 1 else where
        kind = "NaN" if np.isnan(values[where]) else "an infinite value"
        raise ValueError(f"{name} contains {kind} at index {index}")


def as_values(values: ArrayLike, name: str, *, min_size: int = 2) -> FloatArray:
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric per-query values: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per query); got shape {arr.shape}")
    if arr.size < min_size:
        raise ValueError(f"{name} needs at least {min_size} queries; got {arr.size}")
    check_finite(arr, name)
    return arr


def paired_diff(a: ArrayLike, b: ArrayLike) -> FloatArray:
    """Validated ``b - a`` of two aligned per-query arrays."""
    a_arr = as_values(a, "a", min_size=0)
    b_arr = as_values(b, "b", min_size=0)
    if a_arr.shape != b_arr.shape:
        raise ValueError(
            f"a and b must have the same length (paired queries); got {a_arr.size} and "
            f"{b_arr.size}"
        )
    if a_arr.size < 2:
        raise ValueError(f"a paired test needs at least 2 queries; got {a_arr.size}")
    return b_arr - a_arr


def as_diff_matrix(diffs: ArrayLike) -> FloatArray:
    """Validated difference matrix ``D`` (``n_queries x n_columns``), C-contiguous."""
    try:
        D = np.asarray(diffs, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"diffs must be numeric: {exc}") from None
    if D.ndim != 2:
        raise ValueError(f"diffs must be 2-D (n_queries x n_pairs); got shape {D.shape}")
    if D.shape[0] < 2:
        raise ValueError(f"a paired test needs at least 2 queries; got {D.shape[0]}")
    check_finite(D, "diffs")
    return np.ascontiguousarray(D)


def as_generator(rng: RngLike) -> np.random.Generator:
    """``None`` / int seed / SeedSequence -> a new Generator; a Generator is used as is.

    The public functions check ``rng`` with :func:`check_rng` first, which names them.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    return np.random.default_rng(int(rng))


def exact_sums(D: FloatArray) -> FloatArray:
    """Column sums rounded once (``math.fsum``): independent of layout and batching."""
    return np.array([math.fsum(D[:, j]) for j in range(D.shape[1])], dtype=np.float64)
