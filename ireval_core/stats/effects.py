"""Effect sizes, win/tie/loss counts and multiple-comparison corrections."""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..intervals import t_kernel
from ..params import Interval, Options, check, validate_params
from .base import CORRECTIONS, FloatArray, paired_diff

CORRECTION = Options(CORRECTIONS)
TOLERANCE = Interval(Real, 0, None, closed="both")

# -------------------------------------------------------------- effect and counts


def effect_sizes(D: FloatArray) -> FloatArray:
    """Cohen's d_z of every column of ``D`` (0 for an all-zero column)."""
    mean, se, _, _ = t_kernel(D)
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
    d = paired_diff(a, b)
    es = float(effect_sizes(d[:, None])[0])
    if hedges:
        es *= 1.0 - 3.0 / (4.0 * (d.size - 1) - 1.0)
    return es


def win_tie_loss_counts(D: FloatArray, tol: float) -> tuple[NDArray[np.int64], ...]:
    """Wins (``> tol``), ties and losses (``< -tol``) of every column of ``D``."""
    wins = np.count_nonzero(D > tol, axis=0)
    losses = np.count_nonzero(D < -tol, axis=0)
    return wins, D.shape[0] - wins - losses, losses


@validate_params({"tol": TOLERANCE})
def win_tie_loss(a: ArrayLike, b: ArrayLike, *, tol: float = 0.0) -> tuple[int, int, int]:
    """Queries where b beats a (``b - a > tol``), ties (``|b - a| <= tol``) and losses.

    Examples
    --------
    >>> win_tie_loss([25, 43, 39, 75], [35, 84, 15, 75])
    (2, 1, 1)
    """
    d = paired_diff(a, b)
    wins, ties, losses = win_tie_loss_counts(d[:, None], tol)
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
    check(method, "method", "correct_pvalues", CORRECTION)
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
