"""Non-inferiority and equivalence (issue 22, item 2): statsmodels and scipy as oracles."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.weightstats import ttost_paired

from ireval_core.decisions.margin import (
    equivalence_test,
    margin_value,
    noninferiority_test,
)


def _pair(seed: int, n: int, shift: float) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.beta(2.0, 3.0, n)
    return a, np.clip(a + shift + rng.normal(0.0, 0.05, n), 0.0, 1.0)


CASES = [(seed, n, shift, margin) for seed, (n, shift, margin) in enumerate(
    [(10, 0.0, 0.02), (30, -0.01, 0.02), (50, 0.005, 0.01), (200, -0.02, 0.015),
     (1000, 0.0, 0.003), (12, 0.03, 0.05), (75, -0.001, 0.001), (2, 0.0, 0.1)])]


@pytest.mark.parametrize(("seed", "n", "shift", "margin"), CASES)
def test_tost_equals_statsmodels_ttost_paired(seed, n, shift, margin):
    a, b = _pair(seed, n, shift)
    res = equivalence_test(a, b, margin=margin)
    p, (t1, p1, df1), (t2, p2, df2) = ttost_paired(b, a, -margin, margin)
    assert res.pvalue == pytest.approx(p, rel=1e-9, abs=1e-15)
    assert res.pvalue_lower == pytest.approx(p1, rel=1e-9, abs=1e-15)
    assert res.pvalue_upper == pytest.approx(p2, rel=1e-9, abs=1e-15)
    assert res.df == df1 == df2
    assert res.statistic == pytest.approx(t1 if p1 >= p2 else t2, rel=1e-12)
    # the verdict is the interval inside (-margin, margin)
    inside = -margin < res.ci_low and res.ci_high < margin
    assert res.conclusive == inside


@pytest.mark.parametrize(("seed", "n", "shift", "margin"), CASES)
def test_noninferiority_equals_one_sided_ttest_rel(seed, n, shift, margin):
    a, b = _pair(seed, n, shift)
    for alpha in (0.05, 0.025, 0.1):
        res = noninferiority_test(a, b, margin=margin, alpha=alpha)
        ref = sps.ttest_rel(b + margin, a, alternative="greater")
        assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-9, abs=1e-15)
        assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
        # the 1 - 2 alpha two-sided interval of the mean difference is scipy's
        ci = sps.ttest_rel(b, a).confidence_interval(1 - 2 * alpha)
        assert (res.ci_low, res.ci_high) == pytest.approx((ci.low, ci.high), rel=1e-12)
        assert res.conclusive == (res.ci_low > -margin)


def test_percent_margin_is_of_the_baseline_mean():
    a, b = _pair(3, 40, 0.0)
    res = noninferiority_test(a, b, margin="2%")
    assert res.margin == pytest.approx(0.02 * a.mean(), rel=1e-12) and res.percent == 2.0
    same = noninferiority_test(a, b, margin=0.02 * a.mean())
    assert res.pvalue == pytest.approx(same.pvalue, rel=1e-12)
    assert "2% of A's mean" in res.sentence()
    assert margin_value(" 0.5% ", 0.4) == (0.002, 0.5)


@pytest.mark.parametrize("test", [noninferiority_test, equivalence_test])
def test_bootstrap_versions_read_scipy_resamples(test):
    """Same seed, same resamples as scipy.stats.bootstrap (n * B <= 2**21): p counts the
    resampled means beyond the margin, (b + 1) / (B + 1); the interval is the
    percentile interval at 1 - 2 alpha."""
    a, b = _pair(5, 60, -0.004)
    d = b - a
    margin, alpha, B = 0.01, 0.05, 4000
    res = test(a, b, margin=margin, alpha=alpha, method="bootstrap", n_resamples=B, rng=42)
    ref = sps.bootstrap((d,), np.mean, n_resamples=B, rng=42, method="percentile",
                        confidence_level=1 - 2 * alpha, vectorized=True)
    theta = ref.bootstrap_distribution
    np.testing.assert_allclose(res.bootstrap_distribution, theta, rtol=0, atol=1e-15)
    assert (res.ci_low, res.ci_high) == pytest.approx(
        (ref.confidence_interval.low, ref.confidence_interval.high), abs=1e-15)
    p_low = (np.sum(theta <= -margin) + 1) / (B + 1)
    p_high = (np.sum(theta >= margin) + 1) / (B + 1)
    expected = p_low if test is noninferiority_test else max(p_low, p_high)
    assert res.pvalue == pytest.approx(expected, abs=1e-15) and res.pvalue > 0
    again = test(a, b, margin=margin, alpha=alpha, method="bootstrap", n_resamples=B, rng=42)
    assert again.pvalue == res.pvalue


def test_bootstrap_and_t_agree_on_a_clear_case():
    a, b = _pair(8, 2000, 0.0)
    t = noninferiority_test(a, b, margin=0.01)
    boot = noninferiority_test(a, b, margin=0.01, method="bootstrap", rng=0)
    assert t.conclusive and boot.conclusive
    assert boot.ci_low == pytest.approx(t.ci_low, abs=5e-4)
    assert boot.pvalue == 1 / 10_001  # never 0


def test_sentences():
    a = np.array([0.50, 0.42, 0.61, 0.30, 0.55, 0.47, 0.38, 0.66, 0.52, 0.44])
    good = noninferiority_test(a, a + 0.001, margin=0.005)
    assert good.sentence("bm25", "cheap", "nDCG@10").startswith(
        "cheap is not worse than bm25 by more than 0.005 nDCG@10 (cheap − bm25 = +0.0010")
    worse = noninferiority_test(a, a - 0.02 + np.linspace(-0.01, 0.01, 10), margin=0.005)
    assert worse.sentence("A", "B").startswith("B may be worse than A by more than 0.005 (")
    eq = equivalence_test(a, a + np.linspace(-0.001, 0.001, 10), margin=0.005)
    assert eq.conclusive and eq.sentence().startswith("B and A are equivalent within ±0.005")
    assert eq.as_dict()["verdict"] == "equivalent"
    assert worse.as_dict()["verdict"] == "may be worse"


def test_degenerate_differences():
    a = np.array([0.2, 0.4, 0.6])
    same = noninferiority_test(a, a, margin=0.01)  # sd 0: mean + margin > 0 for sure
    assert same.pvalue == 0.0 and same.conclusive and same.statistic == math.inf
    lost = noninferiority_test(a, a - 0.05, margin=0.01)
    assert lost.pvalue == 1.0 and not lost.conclusive


MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


@pytest.mark.parametrize("func", [noninferiority_test, equivalence_test])
@pytest.mark.parametrize(("kwargs", "param", "error"), [
    ({"margin": 0}, "margin", ValueError), ({"margin": -0.1}, "margin", ValueError),
    ({"margin": "1"}, "margin", ValueError), ({"margin": "x%"}, "margin", ValueError),
    ({"margin": float("nan")}, "margin", ValueError), ({"margin": True}, "margin", ValueError),
    ({"margin": 0.1, "alpha": 0.5}, "alpha", ValueError),
    ({"margin": 0.1, "alpha": 0}, "alpha", ValueError),
    ({"margin": 0.1, "method": "z"}, "method", ValueError),
    ({"margin": 0.1, "n_resamples": 0}, "n_resamples", ValueError),
    ({"margin": 0.1, "rng": "s"}, "rng", TypeError),
])
def test_invalid_parameters(func, kwargs, param, error):
    with pytest.raises(error) as info:
        func([0.1, 0.2, 0.3], [0.1, 0.3, 0.2], **kwargs)
    assert re.fullmatch(MESSAGE.format(param=param, function=func.__name__), str(info.value))
