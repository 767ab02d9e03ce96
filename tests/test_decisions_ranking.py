"""How sure the ranking is (issue 22, item 3): statsmodels and slow reference code as
oracles for the rank probabilities, the two-way ANOVA and the REML mixed model."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf
from scipy import stats as sps
from statsmodels.regression.mixed_linear_model import MixedLMParams
from statsmodels.stats.anova import anova_lm

from ireval_core.decisions.ranking import mixed_model, rank_confidence, two_way_anova
from ireval_core.stats import bootstrap_test


def _scores(seed: int, n: int, effects: list[float], query_sd: float = 0.15,
            noise: float = 0.08) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    q = rng.normal(0.0, query_sd, n)
    return {f"s{i}": 0.4 + e + q + rng.normal(0.0, noise, n) for i, e in enumerate(effects)}


def _long(scores: dict[str, np.ndarray]) -> pd.DataFrame:
    n = len(next(iter(scores.values())))
    return pd.DataFrame({"y": np.concatenate(list(scores.values())),
                         "system": np.repeat(list(scores), n),
                         "query": np.tile([f"q{j:04d}" for j in range(n)], len(scores))})


# ------------------------------------------------------------------ rank confidence


def test_rank_probabilities_equal_a_slow_reference():
    scores = _scores(1, 40, [0.0, 0.01, 0.012, 0.05])
    scores["copy"] = scores["s1"].copy()  # exact ties on every resample
    rc = rank_confidence(scores, n_resamples=600, rng=7)
    theta = rc.resampled_means
    S = len(scores)
    ref = np.zeros((S, S))
    above = np.zeros((S, S))
    for t in theta:
        for i in range(S):
            g = int(np.sum(t > t[i]))
            e = int(np.sum(t == t[i]))
            ref[i, g:g + e] += 1.0 / e
            for j in range(S):
                if j != i:
                    above[i, j] += 1.0 if t[i] > t[j] else 0.5 if t[i] == t[j] else 0.0
    np.testing.assert_allclose(rc.probabilities, ref / len(theta), atol=1e-12)
    np.testing.assert_allclose(rc.above, above / len(theta), atol=1e-12)
    np.testing.assert_allclose(rc.probabilities.sum(axis=1), 1.0, atol=1e-12)
    np.testing.assert_allclose(rc.probabilities.sum(axis=0), 1.0, atol=1e-12)
    i, j = rc.systems.index("s1"), rc.systems.index("copy")
    np.testing.assert_allclose(rc.probabilities[i], rc.probabilities[j])
    assert rc.above[i, j] == 0.5


def test_resamples_are_the_paired_bootstrap_of_the_stats_package():
    """The same seed resamples the same queries as stats.bootstrap_test, so P(b above a)
    is the share of its resampled mean differences above 0."""
    scores = _scores(2, 80, [0.0, 0.02, 0.03])
    rc = rank_confidence(scores, n_resamples=2000, rng=11)
    for a, b in (("s0", "s1"), ("s1", "s2"), ("s0", "s2")):
        boot = bootstrap_test(scores[a], scores[b], n_resamples=2000, rng=11)
        dist = boot.bootstrap_distribution
        theta = rc.resampled_means
        diff = theta[:, rc.systems.index(b)] - theta[:, rc.systems.index(a)]
        np.testing.assert_allclose(diff, dist, atol=1e-12)
        share = np.mean(dist > 1e-12) + 0.5 * np.mean(np.abs(dist) <= 1e-12)
        assert rc.above[rc.systems.index(b), rc.systems.index(a)] == pytest.approx(share)
    ref = sps.bootstrap((scores["s0"],), np.mean, n_resamples=2000, rng=11, vectorized=True)
    np.testing.assert_allclose(rc.resampled_means[:, 0], ref.bootstrap_distribution,
                               atol=1e-15)


def test_rank_intervals_and_words():
    scores = _scores(3, 500, [0.0, 0.002, 0.1])
    rc = rank_confidence(scores, rng=0)
    assert rc.order == ("s2", "s1", "s0")
    assert rc.p_rank("s2", 1) == 1.0
    assert tuple(rc.rank_low) == (2, 2, 1) and tuple(rc.rank_high) == (3, 3, 1)
    words = rc.sentences()
    assert words[0] == ("s2 is first in 100% of 10,000 resamples of the 500 queries "
                        "(95% rank interval: 1)")
    assert "rank interval: 2–3" in words[1]
    table = rc.table()
    assert list(table["system"]) == ["s2", "s1", "s0"]
    d = rc.as_dict()
    assert d["systems"]["s2"]["rank_probabilities"] == [1.0, 0.0, 0.0]
    again = rank_confidence(scores, rng=0)
    np.testing.assert_array_equal(again.probabilities, rc.probabilities)


# ------------------------------------------------------------------ ANOVA, mixed model


@pytest.mark.parametrize(("seed", "n", "effects"), [
    (0, 30, [0.0, 0.02, 0.05]), (1, 200, [0.0, 0.0, 0.01, 0.03, 0.03]),
    (2, 7, [0.0, 0.1]), (3, 150, [0.0, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007,
                                   0.008, 0.009])])
def test_anova_equals_statsmodels_anova_lm(seed, n, effects):
    scores = _scores(seed, n, effects)
    ours = two_way_anova(scores).table()
    fit = smf.ols("y ~ C(system) + C(query)", data=_long(scores)).fit()
    for typ in (1, 2):
        ref = anova_lm(fit, typ=typ)
        ref.index = ["system", "query", "residual"]
        cols = ["df", "sum_sq", "F", "PR(>F)"] + (["mean_sq"] if typ == 1 else [])
        np.testing.assert_allclose(ours.loc[ref.index, cols].to_numpy(dtype=float),
                                   ref[cols].to_numpy(dtype=float), rtol=1e-9, atol=1e-12)


def _mixedlm(scores: dict[str, np.ndarray]):
    data = _long(scores)
    model = smf.mixedlm("y ~ C(system)", data, groups=data["query"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # convergence chatter on the boundary
        return model, model.fit(reml=True)


def _reml_loglike(model, ref, ours) -> float:
    """statsmodels' REML log-likelihood at our variance components (fixed effects and
    the scale profiled out, as its optimiser does)."""
    ratio = ours.var_query / ours.var_residual
    params = MixedLMParams.from_components(fe_params=ref.fe_params.values,
                                           cov_re=np.array([[ratio]]))
    return float(model.loglike(params, profile_fe=True))


@pytest.mark.parametrize(("seed", "n", "effects", "query_sd"), [
    (0, 30, [0.0, 0.02, 0.05], 0.15), (1, 200, [0.0, 0.0, 0.01, 0.03], 0.1),
    (2, 12, [0.0, 0.1], 0.3), (4, 500, [0.0, 0.01, 0.02, 0.03, 0.04], 0.05)])
def test_mixed_model_equals_statsmodels_mixedlm(seed, n, effects, query_sd):
    scores = _scores(seed, n, effects, query_sd=query_sd)
    ours = mixed_model(scores)
    model, ref = _mixedlm(scores)
    assert not ours.boundary
    # the closed form is the REML maximum: statsmodels' optimiser gets within 1e-4 of it
    # and never above its likelihood
    assert _reml_loglike(model, ref, ours) >= ref.llf - 1e-9
    assert ours.var_query == pytest.approx(float(ref.cov_re.iloc[0, 0]), rel=1e-4)
    assert ours.var_residual == pytest.approx(float(ref.scale), rel=1e-4)
    # statsmodels: intercept = first system (sorted), then differences from it
    fe, bse = ref.fe_params, ref.bse_fe
    first = sorted(scores)[0]
    i0 = ours.systems.index(first)
    assert fe.iloc[0] == pytest.approx(ours.means[i0], rel=1e-7)
    assert bse.iloc[0] == pytest.approx(ours.std_err_mean, rel=1e-4)
    for name, value in fe.iloc[1:].items():
        s = re.search(r"\[T\.(.+)\]", name)[1]
        assert value == pytest.approx(ours.difference(first, s)[0], rel=1e-7, abs=1e-12)
        assert bse[name] == pytest.approx(ours.std_err_diff, rel=1e-4)


def test_mixed_model_on_the_boundary():
    """No query effect at all (MS_query < MS_residual): the variance is 0 and the
    residual variance pools the query and residual sums, as REML does."""
    rng = np.random.default_rng(5)
    scores = {f"s{i}": 0.3 + 0.01 * i + rng.normal(0.0, 0.1, 40) for i in range(3)}
    ours = mixed_model(scores)
    assert ours.boundary and ours.var_query == 0.0
    model, ref = _mixedlm(scores)
    assert _reml_loglike(model, ref, ours) >= ref.llf - 1e-9
    assert float(ref.cov_re.iloc[0, 0]) == pytest.approx(0.0, abs=1e-6)
    assert ours.var_residual == pytest.approx(float(ref.scale), rel=1e-4)
    assert ours.query_share == 0.0 and "on the boundary" in ours.sentence()


def test_words_and_pairwise_difference():
    scores = _scores(6, 100, [0.0, 0.05])
    anova = two_way_anova(scores)
    assert anova.sentence().startswith("Systems explain ")
    mm = mixed_model(scores)
    d, t, p = mm.difference("s0", "s1")
    # in a balanced design the model's test of a difference is the ANOVA-pooled t-test
    assert t == pytest.approx(d / np.sqrt(2 * anova.row("residual").mean_sq / 100))
    assert p == pytest.approx(2 * sps.t.sf(abs(t), anova.row("residual").df))
    assert 0 < mm.query_share < 1


MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


@pytest.mark.parametrize(("call", "param", "function", "error"), [
    (lambda: rank_confidence({"a": [1, 2]}), "scores", "rank_confidence", ValueError),
    (lambda: rank_confidence([[1, 2]]), "scores", "rank_confidence", TypeError),
    (lambda: rank_confidence({"a": [1, 2], "b": [2, 1]}, n_resamples=0), "n_resamples",
     "rank_confidence", ValueError),
    (lambda: rank_confidence({"a": [1, 2], "b": [2, 1]}, confidence_level=2),
     "confidence_level", "rank_confidence", ValueError),
    (lambda: rank_confidence({"a": [1, 2], "b": [2, 1]}, rng="x"), "rng",
     "rank_confidence", TypeError),
    (lambda: two_way_anova({"a": [1, 2]}), "scores", "two_way_anova", ValueError),
    (lambda: mixed_model({"a": [1, 2]}), "scores", "mixed_model", ValueError),
])
def test_invalid_parameters(call, param, function, error):
    with pytest.raises(error) as info:
        call()
    assert re.fullmatch(MESSAGE.format(param=param, function=function), str(info.value))


def test_unbalanced_or_bad_data_is_refused():
    with pytest.raises(ValueError, match="balanced"):
        two_way_anova({"a": [1, 2, 3], "b": [1, 2]})
    with pytest.raises(ValueError, match="NaN"):
        mixed_model({"a": [1, np.nan], "b": [1, 2]})
    with pytest.raises(ValueError, match="at least 2 queries"):
        rank_confidence({"a": [1], "b": [2]})
