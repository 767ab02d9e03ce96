"""Confidence-interval kernels, below everything else in :mod:`ireval_core.stats`.

They are used by the tests that compute intervals (:mod:`.paired`, :mod:`.resampling`,
:mod:`.systems`, :mod:`.planning`) and by :meth:`TestResult.confidence_interval
<ireval_core.stats.TestResult.confidence_interval>` (in :mod:`._base`), so they import
nothing from this package: the import graph stays acyclic.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import special

FloatArray = NDArray[np.float64]


def t_interval(
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


def bootstrap_interval(
    theta_b: FloatArray,
    confidence_level: float,
    alternative: str,
    bca: tuple[FloatArray, FloatArray] | None,
) -> tuple[FloatArray, FloatArray]:
    """Percentile (``bca is None``) or BCa interval of each column of the resampled
    statistics ``theta_b`` (scipy's rules); ``bca`` is ``(z0, acceleration)``."""
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
