"""The t and bootstrap kernels of confidence intervals, below the statistics and the
evaluation.

:mod:`ireval_core.stats` builds its tests and intervals on them (the paired t-test,
:meth:`TestResult.confidence_interval <ireval_core.stats.TestResult.confidence_interval>`,
:func:`~ireval_core.stats.mean_ci`, ...) and :meth:`Evaluation.intervals
<ireval_core.evaluate.Evaluation.intervals>` computes the interval of each mean with the
same arithmetic, without importing the statistics layer (which sits above it, see
``[tool.importlinter]`` in ``pyproject.toml``). They import nothing from the project.

>>> import numpy as np
>>> mean, se, t, df = t_kernel(np.array([[0.2], [0.4], [0.6], [0.8]]))
>>> low, high = t_interval(mean, se, df, 0.95, "two-sided")
>>> round(float(low[0]), 4), round(float(high[0]), 4)
(0.0891, 0.9109)
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from scipy import special

FloatArray = NDArray[np.float64]


def t_kernel(D: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, int]:
    """Mean, standard error and t of each column of ``D`` (same arithmetic as scipy), and
    the degrees of freedom."""
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
