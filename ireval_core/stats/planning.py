"""Planning labeling rounds (power, detectable difference, queries needed); one mean's CI."""

from __future__ import annotations

import math
from numbers import Integral, Real
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, stats

from ..errors import invalid_parameter
from ..intervals import bootstrap_interval, t_interval, t_kernel
from ..params import Interval, Options, check
from .base import (
    ALTERNATIVE,
    CONFIDENCE_LEVEL,
    EPS,
    N_RESAMPLES,
    PROBABILITY,
    Alternative,
    MeanCI,
    RngLike,
    as_values,
    check_rng,
)
from .resampling import bootstrap_means

POSITIVE = Interval(Real, 0, None, closed="neither")  # sd_diff, delta: a finite number > 0
N_QUERIES = Interval(Integral, 2, None, closed="left")
MEAN_CI_METHOD = Options(("t", "bootstrap"))

# -------------------------------------------------------------------- planning


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
    fn = "paired_t_power"
    check(alternative, "alternative", fn, ALTERNATIVE)
    sd_diff = check(sd_diff, "sd_diff", fn, POSITIVE)
    delta = check(delta, "delta", fn, POSITIVE)
    alpha = check(alpha, "alpha", fn, PROBABILITY)
    n = check(n_queries, "n_queries", fn, N_QUERIES)
    return _power(delta, sd_diff, n, alpha, alternative)


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
    fn = "min_detectable_difference"
    check(alternative, "alternative", fn, ALTERNATIVE)
    sd_diff = check(sd_diff, "sd_diff", fn, POSITIVE)
    alpha = check(alpha, "alpha", fn, PROBABILITY)
    target = check(power, "power", fn, PROBABILITY)
    n = check(n_queries, "n_queries", fn, N_QUERIES)
    if target <= alpha:
        raise invalid_parameter("power", fn, f"greater than alpha={alpha} (the power at no "
                                "effect)", power)

    def gap(delta: float) -> float:
        return _power(delta, sd_diff, n, alpha, alternative) - target

    high = sd_diff
    while gap(high) < 0.0:
        high *= 2.0
    delta = float(optimize.brentq(gap, 0.0, high, xtol=1e-15 * sd_diff, rtol=4 * EPS))
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
    fn = "queries_needed"
    check(alternative, "alternative", fn, ALTERNATIVE)
    sd_diff = check(sd_diff, "sd_diff", fn, POSITIVE)
    delta = check(delta, "delta", fn, POSITIVE)
    alpha = check(alpha, "alpha", fn, PROBABILITY)
    target = check(power, "power", fn, PROBABILITY)

    def enough(n: int) -> bool:
        return _power(delta, sd_diff, n, alpha, alternative) >= target

    if enough(2):
        return 2
    low, high = 2, 4
    while not enough(high):
        low, high = high, high * 2
        if high > 2**40:
            raise invalid_parameter("delta", fn, f"large enough to detect with sd_diff={sd_diff} "
                                    "in at most 2**40 queries", delta)
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
    level = check(confidence_level, "confidence_level", "mean_ci", CONFIDENCE_LEVEL)
    check(method, "method", "mean_ci", MEAN_CI_METHOD)
    x = as_values(values, "values", min_size=1)
    mean = float(x.mean())
    if x.size == 1:
        return MeanCI(mean, math.nan, math.nan)
    D = x[:, None]
    if method == "t":
        m, se, _, df = t_kernel(D)
        low, high = t_interval(m, se, df, level, "two-sided")
    else:
        n_resamples = check(n_resamples, "n_resamples", "mean_ci", N_RESAMPLES)
        theta_b = bootstrap_means(D, n_resamples, check_rng(rng, "mean_ci"))
        low, high = bootstrap_interval(theta_b, level, "two-sided", None)
    return MeanCI(mean, float(low[0]), float(high[0]))
