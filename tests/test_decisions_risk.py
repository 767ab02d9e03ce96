"""Who gets hurt (issue 22, item 4): URisk and TRisk by hand from the papers' formulas.

URisk (Wang, Bennett and Collins-Thompson 2012):
    (1/n) [ sum over gains of d - (1 + alpha) sum over losses of |d| ]
TRisk (Dinçer, Macdonald and Ounis 2014): URisk / SE, SE = s / sqrt(n) with s the
sample standard deviation of the weighted differences; a t statistic with n - 1 df.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from scipy import stats as sps

from ireval_core.decisions.risk import risk_profile, trisk_test, urisk


def test_urisk_and_trisk_by_hand_alpha_5():
    a = [0.2, 0.5, 0.9, 0.4]
    b = [0.6, 0.3, 0.6, 0.4]
    # d = (0.4, -0.2, -0.3, 0): reward 0.4, risk 0.2 + 0.3 = 0.5
    # URisk = (0.4 - 6 * 0.5) / 4 = -0.65
    assert urisk(a, b, alpha=5) == pytest.approx(-0.65, abs=1e-15)
    # weighted differences (0.4, -1.2, -1.8, 0), mean -0.65; deviations
    # (1.05, -0.55, -1.15, 0.65), squares sum 1.1025 + 0.3025 + 1.3225 + 0.4225 = 3.15
    se = math.sqrt(3.15 / 3) / math.sqrt(4)
    res = trisk_test(a, b, alpha=5)
    assert res.urisk == pytest.approx(-0.65, abs=1e-15)
    assert res.std_err == pytest.approx(se, rel=1e-14)
    assert res.statistic == pytest.approx(-0.65 / se, rel=1e-14)  # -1.2687
    assert res.df == 3.0
    assert res.pvalue == pytest.approx(2 * sps.t.sf(0.65 / se, 3), rel=1e-12)


def test_urisk_and_trisk_by_hand_alpha_1():
    a = [0.5, 0.4, 0.3, 0.6]
    b = [0.6, 0.3, 0.5, 0.6]
    # d = (0.1, -0.1, 0.2, 0): URisk = (0.1 + 0.2 - 2 * 0.1) / 4 = 0.025
    assert urisk(a, b, alpha=1) == pytest.approx(0.025, abs=1e-15)
    # weighted (0.1, -0.2, 0.2, 0), deviations (0.075, -0.225, 0.175, -0.025),
    # squares 0.005625 + 0.050625 + 0.030625 + 0.000625 = 0.0875
    se = math.sqrt(0.0875 / 3) / 2
    res = trisk_test(a, b, alpha=1, alternative="greater")
    assert res.statistic == pytest.approx(0.025 / se, rel=1e-13)
    assert res.pvalue == pytest.approx(sps.t.sf(0.025 / se, 3), rel=1e-12)
    assert trisk_test(a, b, alpha=1, alternative="less").pvalue == pytest.approx(
        1 - res.pvalue, rel=1e-12)


def test_alpha_zero_is_the_mean_difference_and_the_paired_t():
    rng = np.random.default_rng(3)
    a = rng.random(200)
    b = np.clip(a + rng.normal(0.01, 0.1, 200), 0, 1)
    assert urisk(a, b, alpha=0) == pytest.approx(float(np.mean(b - a)), abs=1e-15)
    ref = sps.ttest_rel(b, a)
    res = trisk_test(a, b, alpha=0)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert res.pvalue == pytest.approx(ref.pvalue, rel=1e-10)
    # a larger alpha only lowers URisk when there are losses
    assert urisk(a, b, alpha=5) < urisk(a, b, alpha=1) < urisk(a, b, alpha=0)


def test_risk_profile_counts_and_worst_losses():
    a = [0.9, 0.5, 0.8, 0.3, 0.6, 0.7]
    b = [0.3, 0.55, 0.75, 0.5, 0.2, 0.7]
    ids = ["q1", "q2", "q3", "q4", "q5", "q6"]
    res = risk_profile(a, b, query_ids=ids, delta=0.1, n_worst=5)
    # d = (-0.6, 0.05, -0.05, 0.2, -0.4, 0): beyond 0.1, two losses and one gain
    assert (res.n_queries, res.n_losses, res.n_gains) == (6, 2, 1)
    assert [(q, round(d, 10)) for q, _, _, d in res.worst] == [("q1", -0.6), ("q5", -0.4)]
    assert res.worst[0][1:3] == (0.9, 0.3)
    assert res.urisk == pytest.approx(urisk(a, b))
    everything = risk_profile(a, b, query_ids=ids)
    assert everything.n_losses == 3 and len(risk_profile(a, b, n_worst=1).worst) == 1
    assert risk_profile(a, b).worst[0][0] == 0  # positions without ids
    words = res.sentence("bm25", "neural", "nDCG@10")
    assert words.startswith("neural loses more than 0.1 nDCG@10 on 2 of 6 queries against "
                            "bm25 (33%; worst: q1 -0.600, q5 -0.400)")
    d = res.as_dict()
    assert d["losses"] == 2 and d["worst"][0] == ["q1", pytest.approx(-0.6)]
    assert set(d) >= {"urisk", "trisk", "p", "alpha"}


def test_significant_risk_in_words():
    rng = np.random.default_rng(0)
    a = rng.random(300)
    b = a - np.abs(rng.normal(0.0, 0.05, 300))  # never better
    res = risk_profile(a, b, alpha=1)
    assert res.trisk < -2 and res.pvalue < 0.05
    assert res.sentence().endswith("B is significantly riskier than A")
    good = risk_profile(b, a, alpha=1)
    assert good.sentence().endswith("B is significantly less risky than A")


def test_degenerate():
    same = trisk_test([0.1, 0.2, 0.3], [0.1, 0.2, 0.3])
    assert same.statistic == 0.0 and same.pvalue == 1.0
    up = trisk_test([0.25, 0.5, 0.75], [0.5, 0.75, 1.0])  # exact: d = 0.25 everywhere
    assert up.statistic == math.inf and up.pvalue == 0.0


MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


@pytest.mark.parametrize(("call", "param", "function", "error"), [
    (lambda: urisk([1, 2], [2, 1], alpha=-1), "alpha", "urisk", ValueError),
    (lambda: urisk([1, 2], [2, 1], alpha=math.inf), "alpha", "urisk", ValueError),
    (lambda: trisk_test([1, 2], [2, 1], alpha="1"), "alpha", "trisk_test", ValueError),
    (lambda: trisk_test([1, 2], [2, 1], alternative="up"), "alternative", "trisk_test",
     ValueError),
    (lambda: risk_profile([1, 2], [2, 1], delta=-0.1), "delta", "risk_profile", ValueError),
    (lambda: risk_profile([1, 2], [2, 1], n_worst=1.5), "n_worst", "risk_profile",
     ValueError),
    (lambda: risk_profile([1, 2], [2, 1], alpha=None), "alpha", "risk_profile", ValueError),
])
def test_invalid_parameters(call, param, function, error):
    with pytest.raises(error) as info:
        call()
    assert re.fullmatch(MESSAGE.format(param=param, function=function), str(info.value))
