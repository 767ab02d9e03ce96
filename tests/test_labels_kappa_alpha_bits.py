"""Kappa and alpha of many confusion matrices: the whole-count fast paths give the bits
of the general formulas they skip (kept in ``tests/_reference_kernels.py`` as of
3f3c733), compared with ``tobytes`` (NaN where undefined included), on whole counts
(where the fast paths run) and on fractional or very large counts (where they do not);
and the bootstrap intervals computed together are each one's own.
"""

from __future__ import annotations

import numpy as np
import pytest
from _reference_kernels import alpha_many_3f3c733, kappa_many_3f3c733

from ireval_core.labels.kernels import (
    _alpha_exact,
    alpha_many,
    kappa_many,
    percentile_interval,
    percentile_intervals,
)


def matrices(k: int, high: int, seed: int) -> np.ndarray:
    """400 random (k, k) count matrices, with empty, diagonal and one-count ones."""
    rng = np.random.default_rng(seed)
    c = rng.integers(0, high, (400, k, k)).astype(np.float64)
    c[:3] = 0.0
    c[3:6] = np.eye(k) * 3.0
    c[6] = 0.0
    c[6, 0, 0] = 1.0
    return c


SHAPES = [(k, high) for k in (1, 2, 3, 4, 6) for high in (2, 5, 60, 5000, 10**6)]


@pytest.mark.parametrize(("k", "high"), SHAPES)
@pytest.mark.parametrize("weights", [None, "linear", "quadratic"])
def test_kappa_is_the_einsum_formula_to_the_bit(k: int, high: int, weights: str | None) -> None:
    c = matrices(k, high, seed=k * 7 + high)
    assert kappa_many(c, weights).tobytes() == kappa_many_3f3c733(c, weights).tobytes()
    frac = c + np.random.default_rng(1).random(c.shape)  # not whole: the general path
    assert kappa_many(frac, weights).tobytes() == kappa_many_3f3c733(frac, weights).tobytes()
    assert kappa_many(c[6:7], weights).tobytes() == kappa_many_3f3c733(c[6:7], weights).tobytes()
    # the caller's word that the counts are whole (the judge report's): totals by a product
    assert (kappa_many(c, weights, whole=True).tobytes()
            == kappa_many_3f3c733(c, weights).tobytes())


@pytest.mark.parametrize(("k", "high"), SHAPES)
@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("step", [1.0, 0.5, 2.0])
def test_alpha_is_the_general_formula_to_the_bit(k: int, high: int, level: str,
                                                 step: float) -> None:
    c = matrices(k, high, seed=k * 11 + high)
    scale = np.arange(k) * step + (1.0 if step == 2.0 else 0.0)
    want = alpha_many_3f3c733(c, scale, level)
    assert alpha_many(c, scale, level).tobytes() == want.tobytes()
    assert alpha_many(c, scale, level, whole=True).tobytes() == want.tobytes()
    frac = c + np.random.default_rng(2).random(c.shape)
    assert (alpha_many(frac, scale, level).tobytes()
            == alpha_many_3f3c733(frac, scale, level).tobytes())
    # the fast path runs on whole, small counts and a whole squared scale, and not where
    # its sums could be inexact (ordinal: about the fourth power of the counts)
    if k >= 2 and high <= 60 and (level != "interval" or step != 0.5):
        assert _alpha_exact(c, scale, level) is not None
    if level == "ordinal" and high >= 5000:
        assert _alpha_exact(c, scale, level) is None


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_intervals_at_once_are_each_ones_interval(level: float) -> None:
    """percentile_intervals (rows of one length through np.quantile together, in blocks)
    gives percentile_interval of each array, to the bit."""
    rng = np.random.default_rng(int(level * 100))
    thetas: list[np.ndarray] = []
    for length in (0, 1, 2, 3, 17, 2000, 70_000):
        for _ in range(12 if length < 70_000 else 9):
            x = rng.normal(size=length)
            if length and rng.random() < 0.3:
                x = np.round(x, 1)  # ties
            if length > 2 and rng.random() < 0.2:
                x[rng.integers(0, length, 2)] = np.nan
            thetas.append(x)
    thetas += [np.broadcast_to(np.float64(np.nan), (50,)),
               np.broadcast_to(np.float64(0.25), (2000,))]
    got = percentile_intervals(thetas, level)
    want = [percentile_interval(t, level) for t in thetas]
    assert np.array(got).tobytes() == np.array(want).tobytes()


@pytest.mark.parametrize("level", [0.0, 0.5, 0.68, 0.9, 0.95, 0.99, 1.0])
def test_intervals_are_numpys_quantiles_to_the_bit(level: float) -> None:
    """The intervals sort and interpolate (numpy's linear method, its own arithmetic):
    the bits of ``np.quantile`` of the values without NaN (what they were computed with
    before; NaN when fewer than two are left), one array at a time and in blocks, with
    ties, infinities, NaN, and -0.0 next to 0.0 (numpy's vectorised sort may return one
    for the other: such rows take ``np.quantile``)."""
    rng = np.random.default_rng(int(level * 1000) + 7)
    thetas: list[np.ndarray] = []
    for length in (2, 3, 4, 5, 10, 11, 100, 101, 1000, 10_000):
        for kind in range(6):
            x = rng.normal(size=length)
            if kind == 1:
                x = np.round(x * 3.0)  # ties, and -0.0 beside 0.0
            elif kind == 2:
                x = rng.integers(0, 3, length) / 3.0
            elif kind == 3:
                x[: max(1, length // 10)] = np.inf
                x[-1] = -np.inf
            elif kind == 4 and length > 2:
                x[rng.integers(0, length, 2)] = np.nan
            elif kind == 5:
                x = np.where(rng.random(length) < 0.5, -0.0, 0.0)
            thetas.append(x)
    a = (1.0 - level) / 2.0
    with np.errstate(invalid="ignore"):  # inf - inf in numpy's interpolation, as before
        want = [tuple(float(v) for v in np.quantile(t[~np.isnan(t)], [a, 1.0 - a]))
                if (~np.isnan(t)).sum() >= 2 else (np.nan, np.nan) for t in thetas]
        one = [percentile_interval(t, level) for t in thetas]
        together = percentile_intervals(thetas, level)
    assert np.array(one).tobytes() == np.array(want).tobytes()
    assert np.array(together).tobytes() == np.array(want).tobytes()
