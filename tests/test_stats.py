"""Tests of ireval_core.stats: seed 001 golden values, scipy as oracle, properties."""

from __future__ import annotations

import dataclasses
import doctest
import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from ireval_core import stats
from ireval_core.stats import base, effects, paired, planning, resampling, systems

# Seed 001, table 8-6 (two systems A and B over 10 queries).
SEED_A = np.array([25, 43, 39, 75, 43, 15, 20, 52, 49, 50], dtype=float)
SEED_B = np.array([35, 84, 15, 75, 68, 85, 80, 50, 58, 75], dtype=float)
ALTERNATIVES = ("two-sided", "greater", "less")
SEEDS = range(8)


def _mean_stat(x, axis=-1):
    return np.mean(x, axis=axis)


def _random_pair(seed: int, n: int, *, shift: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = np.clip(a + shift + rng.normal(0.0, 0.2, n), 0.0, 1.0)
    return a, b


# ----------------------------------------------------------------- seed 001


class TestSeed001:
    def test_t_test(self):
        d = SEED_B - SEED_A
        res = stats.paired_t_test(SEED_A, SEED_B, alternative="greater")
        ref = sps.ttest_rel(SEED_B, SEED_A, alternative="greater")
        assert res.test == "t" and res.n == 10 and res.df == 9
        assert res.mean_diff == pytest.approx(21.4, abs=1e-12)
        assert round(float(np.std(d, ddof=1)), 1) == 29.1
        assert round(res.statistic, 2) == 2.33
        assert round(res.pvalue, 2) == 0.02
        assert abs(res.statistic - ref.statistic) < 1e-12
        assert abs(res.pvalue - ref.pvalue) < 1e-12

    def test_wilcoxon(self):
        res = stats.wilcoxon_test(SEED_A, SEED_B, alternative="greater")
        ref = sps.wilcoxon(SEED_B - SEED_A, zero_method="wilcox", alternative="greater")
        assert res.n == 9
        assert res.w_signed_rank_sum == 35.0  # -1 +2 +3 -4 +5.5 +5.5 +7 +8 +9
        assert res.statistic == 40.0  # R+
        assert abs(res.pvalue - ref.pvalue) < 1e-12
        # The seed's "p = 0.025" is the table's significance level for W = 35 at n = 9;
        # scipy's exact permutation p (ties and a zero present) is 18/1024.
        assert res.pvalue <= 0.025
        assert res.pvalue == pytest.approx(18 / 1024, abs=1e-15)
        two = stats.wilcoxon_test(SEED_A, SEED_B)
        assert two.statistic == 5.0  # min(R+, R-)

    def test_sign(self):
        res = stats.sign_test(SEED_A, SEED_B, alternative="greater")
        assert (res.statistic, res.n) == (7.0, 9)
        assert abs(res.pvalue - 46 / 512) < 1e-15
        assert round(res.pvalue, 3) == 0.090

    def test_randomization_exact(self):
        res = stats.randomization_test(SEED_A, SEED_B, alternative="greater")
        ref = sps.permutation_test(
            (SEED_B - SEED_A,), _mean_stat, permutation_type="samples",
            alternative="greater", n_resamples=10_000,
        )
        assert res.exact and res.n_resamples == 1024
        assert res.pvalue == pytest.approx(24 / 1024, abs=1e-15)
        assert abs(res.pvalue - ref.pvalue) < 1e-12
        assert res.statistic == pytest.approx(21.4, abs=1e-12)

    def test_effect_size_and_counts(self):
        d = SEED_B - SEED_A
        assert stats.effect_size(SEED_A, SEED_B) == pytest.approx(21.4 / np.std(d, ddof=1))
        j = 1 - 3 / (4 * 9 - 1)
        assert stats.effect_size(SEED_A, SEED_B, hedges=True) == pytest.approx(
            j * 21.4 / np.std(d, ddof=1)
        )
        assert stats.win_tie_loss(SEED_A, SEED_B) == (7, 1, 2)
        assert stats.win_tie_loss(SEED_A, SEED_B, tol=2.0) == (7, 2, 1)


# ------------------------------------------------------------ scipy oracles


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed", SEEDS)
def test_t_test_matches_scipy(seed, alternative):
    a, b = _random_pair(seed, 5 + 7 * seed)
    res = stats.paired_t_test(a, b, alternative=alternative)
    ref = sps.ttest_rel(b, a, alternative=alternative)
    assert res.statistic == pytest.approx(ref.statistic, rel=1e-12, abs=1e-12)
    assert abs(res.pvalue - ref.pvalue) < 1e-12
    for level in (0.9, 0.95):
        ci, ref_ci = res.confidence_interval(level), ref.confidence_interval(level)
        np.testing.assert_allclose(ci, tuple(ref_ci), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("n", [6, 9, 30, 80])
@pytest.mark.parametrize("kind", ["continuous", "integer"])
def test_wilcoxon_matches_scipy(n, kind, alternative):
    rng = np.random.default_rng(n)
    if kind == "continuous":
        a, b = _random_pair(n, n)
    else:  # ties and zeros: scipy switches to a permutation or normal approximation
        a, b = rng.integers(0, 5, n).astype(float), rng.integers(0, 6, n).astype(float)
    d = b - a
    res = stats.wilcoxon_test(a, b, alternative=alternative)
    ref = sps.wilcoxon(d, zero_method="wilcox", alternative=alternative)
    assert res.statistic == ref.statistic
    assert abs(res.pvalue - ref.pvalue) < 1e-12
    nz = d[d != 0]
    assert res.n == nz.size
    ranks = sps.rankdata(np.abs(nz))
    assert res.w_signed_rank_sum == pytest.approx(ranks[nz > 0].sum() - ranks[nz < 0].sum())


def test_wilcoxon_permutation_branch_at_13_queries():
    # ties and a zero with n = 13: scipy runs an exact sign-flip test of R+ (slowly);
    # oracle: enumerate the 2**12 patterns of the non-zero differences in Python
    d = np.array([1, -2, 2, 3, 0, -3, 4, 4, 5, -1, 6, 2, 7], dtype=float)
    res = stats.wilcoxon_test(np.zeros(13), d, alternative="greater")
    nz = d[d != 0]
    ranks = sps.rankdata(np.abs(nz))
    observed = ranks[nz > 0].sum()
    null = [np.dot(bits, ranks) for bits in itertools.product((0, 1), repeat=nz.size)]
    assert res.statistic == observed
    assert res.pvalue == sum(x >= observed for x in null) / len(null)


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed", SEEDS)
def test_sign_matches_binomtest(seed, alternative):
    rng = np.random.default_rng(seed)
    n = 10 + 9 * seed
    a, b = rng.integers(0, 4, n).astype(float), rng.integers(0, 4, n).astype(float)
    d = b - a
    k, m = int((d > 0).sum()), int((d != 0).sum())
    res = stats.sign_test(a, b, alternative=alternative)
    assert res.n == m and res.statistic == k
    assert res.pvalue == sps.binomtest(k, m, 0.5, alternative=alternative).pvalue


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize("seed", SEEDS)
def test_randomization_exact_matches_permutation_test(seed, alternative):
    rng = np.random.default_rng(seed)
    n = 4 + seed  # 2**n <= 2048 patterns: exact in both
    if seed % 2:
        a, b = _random_pair(seed, n)
    else:  # integer values: exact ties between sign patterns
        a, b = rng.integers(0, 5, n).astype(float), rng.integers(0, 5, n).astype(float)
    res = stats.randomization_test(a, b, alternative=alternative, n_resamples=2048)
    ref = sps.permutation_test(
        (b - a,), _mean_stat, permutation_type="samples", alternative=alternative,
        n_resamples=2048,
    )
    assert res.exact and res.n_resamples == 2**n
    assert abs(res.pvalue - ref.pvalue) < 1e-12


def test_randomization_counts_float_ties_near_zero():
    # d on a 0.1 grid whose mean is 0 in exact arithmetic but ~1e-17 in floats:
    # every pattern ties or mirrors, so the two-sided p is 1 (scipy's relative
    # tolerance, 100 eps |observed|, misses these ties).
    a = np.array([0.3, 0.0, 0.2, 0.7, 0.2, 0.5, 0.9, 0.5, 0.9])
    b = np.array([0.3, 0.1, 0.1, 0.3, 0.6, 0.7, 0.6, 0.7, 0.8])
    assert np.mean(b - a) != 0.0  # -2.5e-17
    res = stats.randomization_test(a, b)
    assert res.exact and res.pvalue == 1.0
    d_int = np.rint((b - a) * 10).astype(int)  # exact integer oracle
    for alternative in ALTERNATIVES:
        expected = _exact_sign_flip_pvalue(d_int, alternative)
        got = stats.randomization_test(a, b, alternative=alternative).pvalue
        assert got == pytest.approx(expected, abs=1e-15)


def _exact_sign_flip_pvalue(d_int: np.ndarray, alternative: str) -> float:
    """Slow oracle: enumerate all sign patterns of integer differences."""
    observed = int(d_int.sum())
    sums = [
        int(np.dot(signs, d_int))
        for signs in itertools.product((1, -1), repeat=d_int.size)
    ]
    less = sum(x <= observed for x in sums) / len(sums)
    greater = sum(x >= observed for x in sums) / len(sums)
    return {"less": less, "greater": greater, "two-sided": min(1.0, 2 * min(less, greater))}[
        alternative
    ]


@pytest.mark.parametrize("method", ["percentile", "bca"])
@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_bootstrap_matches_scipy(method, alternative):
    a, b = _random_pair(3, 50)
    d = b - a
    res = stats.bootstrap_test(a, b, alternative=alternative, method=method, rng=7)
    ref = sps.bootstrap(
        (d,), np.mean, method=method, alternative=alternative, n_resamples=10_000, rng=7
    )
    width = float(np.ptp(res.bootstrap_distribution))
    # same resampling indices as scipy: equal up to round-off (not just "within a few %")
    np.testing.assert_allclose(
        res.confidence_interval(), tuple(ref.confidence_interval), rtol=0, atol=1e-9 * width
    )
    np.testing.assert_allclose(
        np.sort(res.bootstrap_distribution), np.sort(ref.bootstrap_distribution), atol=1e-12
    )
    ci = stats.bootstrap_ci(a, b, method=method, confidence_level=0.9, rng=7)
    ref90 = sps.bootstrap(
        (d,), np.mean, method=method, confidence_level=0.9, n_resamples=10_000, rng=7
    )
    np.testing.assert_allclose(ci, tuple(ref90.confidence_interval), atol=1e-9 * width)


def test_bootstrap_pvalue_shift_method():
    a, b = _random_pair(11, 40)
    d = b - a
    res = stats.bootstrap_test(a, b, alternative="greater", n_resamples=2000, rng=3)
    null = res.bootstrap_distribution - d.mean()
    expected = (np.count_nonzero(null >= d.mean()) + 1) / 2001
    assert res.pvalue == pytest.approx(expected, abs=1e-15)
    two = stats.bootstrap_test(a, b, n_resamples=2000, rng=3)
    less = stats.bootstrap_test(a, b, alternative="less", n_resamples=2000, rng=3)
    assert two.pvalue == pytest.approx(min(1.0, 2 * min(res.pvalue, less.pvalue)))


# ---------------------------------------------------------------- properties


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_identical_runs_give_p_one(alternative):
    a = np.random.default_rng(0).random(30)
    small = a[:8]
    results = [
        stats.paired_t_test(a, a, alternative=alternative),
        stats.wilcoxon_test(a, a, alternative=alternative),
        stats.sign_test(a, a, alternative=alternative),
        stats.randomization_test(a, a, alternative=alternative, n_resamples=500, rng=1),
        stats.randomization_test(small, small, alternative=alternative),  # exact
        stats.bootstrap_test(a, a, alternative=alternative, n_resamples=500, rng=1),
    ]
    for res in results:
        assert res.pvalue == 1.0, res.test
        assert res.statistic == 0.0, res.test
    assert stats.paired_t_test(a, a).confidence_interval() == (0.0, 0.0)
    assert stats.effect_size(a, a) == 0.0
    assert tuple(stats.bootstrap_ci(a, a, n_resamples=200, rng=0)) == (0.0, 0.0)


def test_large_shift_gives_tiny_p():
    a = np.random.default_rng(1).random(60)
    b = a + 0.5 + np.random.default_rng(2).normal(0, 0.01, 60)
    assert stats.paired_t_test(a, b, alternative="greater").pvalue < 1e-30
    assert stats.wilcoxon_test(a, b, alternative="greater").pvalue < 1e-10
    assert stats.sign_test(a, b, alternative="greater").pvalue == 0.5**60
    res = stats.randomization_test(a, b, alternative="greater", n_resamples=999, rng=0)
    assert res.pvalue == 1 / 1000  # Monte Carlo: never 0
    assert stats.randomization_test(a, b, n_resamples=999, rng=0).pvalue == 2 / 1000
    assert stats.bootstrap_test(a, b, alternative="greater", n_resamples=999, rng=0).pvalue == (
        1 / 1000
    )


def test_constant_nonzero_difference_is_documented():
    a = np.arange(5.0)
    res = stats.paired_t_test(a, a + 1.0)
    assert res.statistic == math.inf and res.pvalue == 0.0
    assert stats.effect_size(a, a + 1.0) == math.inf


def test_monte_carlo_reproducible_and_never_zero():
    a, b = _random_pair(5, 200, shift=0.0)
    first = stats.randomization_test(a, b, n_resamples=2000, rng=42)
    again = stats.randomization_test(a, b, n_resamples=2000, rng=42)
    via_generator = stats.randomization_test(
        a, b, n_resamples=2000, rng=np.random.default_rng(42)
    )
    assert not first.exact and first.n_resamples == 2000
    assert first.pvalue == again.pvalue == via_generator.pvalue
    assert first.pvalue >= 1 / 2001
    assert stats.bootstrap_test(a, b, n_resamples=500, rng=9) == stats.bootstrap_test(
        a, b, n_resamples=500, rng=9
    )


def test_sign_matrix_does_not_depend_on_chunk_size(monkeypatch):
    a, b = _random_pair(6, 300, shift=0.01)
    D = np.column_stack([b - a, a - b, (b - a) ** 3])
    before = [r.pvalue for r in stats.randomization_test_many(D, n_resamples=3000, rng=5)]
    monkeypatch.setattr(resampling, "_CHUNK_ELEMENTS", 1000)  # 3 rows per chunk
    after = [r.pvalue for r in stats.randomization_test_many(D, n_resamples=3000, rng=5)]
    assert before == after


def test_randomization_many_equals_single():
    a, b = _random_pair(8, 120, shift=0.02)
    c = np.random.default_rng(9).random(120)
    D = np.column_stack([b - a, c - a, c - b])
    many = stats.randomization_test_many(D, alternative="greater", n_resamples=4000, rng=3)
    singles = [
        stats.randomization_test(x, y, alternative="greater", n_resamples=4000, rng=3)
        for x, y in [(a, b), (a, c), (b, c)]
    ]
    assert [r.pvalue for r in many] == [r.pvalue for r in singles]
    np.testing.assert_allclose([r.statistic for r in many], [r.statistic for r in singles])


def test_results_are_frozen_and_intervals_documented():
    res = stats.wilcoxon_test(SEED_A, SEED_B)
    with pytest.raises(dataclasses.FrozenInstanceError):
        res.pvalue = 0.0  # type: ignore[misc]
    for fn in (stats.wilcoxon_test, stats.sign_test, stats.randomization_test):
        with pytest.raises(NotImplementedError):
            fn(SEED_A, SEED_B).confidence_interval()


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("a", "b", "message"),
    [
        ([1.0, 2.0, 3.0], [1.0, 2.0], "same length"),
        ([1.0], [2.0], "at least 2 queries"),
        ([1.0, np.nan, 3.0], [1.0, 2.0, 3.0], "NaN at index 1"),
        ([1.0, 2.0], [1.0, np.inf], "infinite"),
        ([[1.0, 2.0]], [[1.0, 2.0]], "1-D"),
    ],
)
def test_invalid_inputs_raise(a, b, message):
    for fn in (stats.paired_t_test, stats.wilcoxon_test, stats.sign_test,
               stats.randomization_test, stats.bootstrap_test):
        with pytest.raises(ValueError, match=message):
            fn(a, b)


def test_invalid_options_raise():
    with pytest.raises(ValueError, match="'alternative' parameter of paired_t_test must be one of"):
        stats.paired_t_test(SEED_A, SEED_B, alternative="bigger")
    with pytest.raises(ValueError, match="n_resamples"):
        stats.randomization_test(SEED_A, SEED_B, n_resamples=0)
    with pytest.raises(TypeError, match="rng"):
        stats.randomization_test(SEED_A, SEED_B, rng="seed")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="confidence_level"):
        stats.bootstrap_ci(SEED_A, SEED_B, confidence_level=95)
    with pytest.raises(ValueError, match="method"):
        stats.bootstrap_ci(SEED_A, SEED_B, method="basic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'tests' parameter of compare_pairs"):
        stats.compare_pairs({"x": SEED_A, "y": SEED_B}, tests=("z",))
    with pytest.raises(ValueError, match="correction"):
        stats.compare_pairs({"x": SEED_A, "y": SEED_B}, correction="fdr")
    with pytest.raises(ValueError, match="baseline"):
        stats.compare_pairs({"x": SEED_A, "y": SEED_B}, baseline="z")
    with pytest.raises(ValueError, match="same queries"):
        stats.compare_pairs({"x": SEED_A, "y": SEED_B[:5]})


# --------------------------------------------------------------- corrections


def test_corrections_hand_computed():
    p = [0.01, 0.04, 0.03, 0.005]
    # Bonferroni: 4 p
    np.testing.assert_allclose(stats.correct_pvalues(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    # Holm: sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1 = 0.02, 0.03, 0.06, 0.04,
    # running max -> 0.02, 0.03, 0.06, 0.06
    np.testing.assert_allclose(stats.correct_pvalues(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    # BH: sorted times 4/1, 4/2, 4/3, 4/4 = 0.02, 0.02, 0.04, 0.04, running min from the top
    np.testing.assert_allclose(stats.correct_pvalues(p, "bh"), [0.02, 0.04, 0.04, 0.02])
    np.testing.assert_array_equal(stats.correct_pvalues(p, "none"), p)
    # clipping and ties
    np.testing.assert_allclose(stats.correct_pvalues([0.5, 0.5], "bonferroni"), [1.0, 1.0])
    np.testing.assert_allclose(stats.correct_pvalues([0.02, 0.02, 0.9], "holm"), [0.06, 0.06, 0.9])
    np.testing.assert_allclose(stats.correct_pvalues([0.02, 0.02, 0.9], "bh"), [0.03, 0.03, 0.9])
    assert stats.correct_pvalues([], "holm").size == 0
    with pytest.raises(ValueError, match="NaN"):
        stats.correct_pvalues([0.1, np.nan], "holm")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=12))
def test_corrections_properties(pvalues):
    p = np.array(pvalues)
    order = np.argsort(p, kind="stable")
    for method in ("bonferroni", "holm", "bh"):
        adj = stats.correct_pvalues(p, method)
        assert np.all(adj >= p - 1e-15) and np.all(adj <= 1.0)
        assert np.all(np.diff(adj[order]) >= -1e-15)  # monotone in the raw p-values
    assert np.all(stats.correct_pvalues(p, "bh") <= stats.correct_pvalues(p, "holm") + 1e-15)
    assert np.all(
        stats.correct_pvalues(p, "holm") <= stats.correct_pvalues(p, "bonferroni") + 1e-15
    )


# ---------------------------------------------------------- many systems


def _systems(n_systems: int = 4, n: int = 150, seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    return {
        f"s{i}": np.clip(base + 0.02 * i + rng.normal(0, 0.1, n), 0, 1) for i in range(n_systems)
    }


def test_compare_pairs_structure_and_conventions():
    scores = _systems()
    rows = stats.compare_pairs(scores, tests=("t", "sign"), correction="holm", measure="AP")
    assert len(rows) == 6 * 2
    pairs = [(r.system_a, r.system_b) for r in rows if r.test == "t"]
    assert pairs == [("s0", "s1"), ("s0", "s2"), ("s0", "s3"), ("s1", "s2"), ("s1", "s3"),
                     ("s2", "s3")]
    for r in rows:
        a, b = scores[r.system_a], scores[r.system_b]
        assert r.measure == "AP" and r.n == 150
        assert r.mean_diff == pytest.approx(b.mean() - a.mean())
        assert r.mean_diff == pytest.approx(r.mean_b - r.mean_a)
        assert r.pvalue_corrected >= r.pvalue
        assert (r.wins, r.ties, r.losses) == stats.win_tie_loss(a, b)
        assert r.effect_size == pytest.approx(stats.effect_size(a, b))
        single = {"t": stats.paired_t_test, "sign": stats.sign_test}[r.test](a, b)
        assert r.pvalue == pytest.approx(single.pvalue, rel=1e-12, abs=1e-300)
        assert r.statistic == pytest.approx(single.statistic, rel=1e-12)
        low, high = stats.paired_t_test(a, b).confidence_interval()
        assert (r.ci_low, r.ci_high) == pytest.approx((low, high), rel=1e-12)
    holm = stats.correct_pvalues([r.pvalue for r in rows if r.test == "sign"], "holm")
    np.testing.assert_allclose([r.pvalue_corrected for r in rows if r.test == "sign"], holm)

    base_rows = stats.compare_pairs(scores, baseline="s2")
    assert [(r.system_a, r.system_b) for r in base_rows] == [("s2", "s0"), ("s2", "s1"),
                                                            ("s2", "s3")]
    assert base_rows[0].mean_diff < 0 < base_rows[2].mean_diff
    assert stats.compare_pairs(scores)[0].measure is None


def test_compare_pairs_resampling_equals_single_pair_functions():
    scores = _systems(3, n=200, seed=4)
    rows = stats.compare_pairs(
        scores, tests=("randomization", "bootstrap", "wilcoxon"), alternative="greater",
        n_resamples=3000, rng=17,
    )
    for r in rows:
        a, b = scores[r.system_a], scores[r.system_b]
        if r.test == "randomization":
            ref = stats.randomization_test(a, b, alternative="greater", n_resamples=3000, rng=17)
            assert r.pvalue == ref.pvalue and not ref.exact
        elif r.test == "bootstrap":
            ref = stats.bootstrap_test(a, b, alternative="greater", n_resamples=3000, rng=17)
            assert r.pvalue == ref.pvalue
            assert (r.ci_low, r.ci_high) == pytest.approx(
                tuple(stats.bootstrap_ci(a, b, n_resamples=3000, rng=17)), rel=1e-12
            )
        else:
            ref = stats.wilcoxon_test(a, b, alternative="greater")
            assert r.pvalue == ref.pvalue
        assert r.pvalue >= 1 / 3001


def test_compare_measures_families():
    by_measure = {"AP": _systems(3, seed=1), "P@10": _systems(3, seed=2)}
    per_measure = stats.compare_measures(by_measure, correction="bonferroni")
    together = stats.compare_measures(by_measure, correction="bonferroni", family="all")
    assert [r.measure for r in per_measure] == ["AP"] * 3 + ["P@10"] * 3
    for r, s in zip(per_measure, together, strict=True):
        assert r.pvalue == s.pvalue
        assert r.pvalue_corrected == pytest.approx(min(1.0, 3 * r.pvalue))
        assert s.pvalue_corrected == pytest.approx(min(1.0, 6 * s.pvalue))
    # randomization over several measures shares one sign matrix and equals the single test
    rows = stats.compare_measures(by_measure, tests=("randomization",), n_resamples=999, rng=2)
    for r in rows:
        a, b = by_measure[r.measure][r.system_a], by_measure[r.measure][r.system_b]
        assert r.pvalue == stats.randomization_test(a, b, n_resamples=999, rng=2).pvalue


def test_tukey_hsd():
    scores = _systems(4, n=60, seed=3)
    rows = stats.tukey_hsd(scores)
    assert len(rows) == 6
    for r in rows:
        assert r.ci_low < r.mean_diff < r.ci_high
        assert 0.0 <= r.pvalue <= 1.0
    # two systems: the repeated-measures Tukey HSD is the two-sided paired t-test
    two = {k: scores[k] for k in ("s0", "s3")}
    (r,) = stats.tukey_hsd(two)
    t = stats.paired_t_test(two["s0"], two["s3"])
    assert r.pvalue == pytest.approx(t.pvalue, rel=1e-5)
    np.testing.assert_allclose((r.ci_low, r.ci_high), t.confidence_interval(), rtol=1e-5)
    # unpaired: scipy.stats.tukey_hsd on the per-system samples
    ref = sps.tukey_hsd(*scores.values())
    unpaired = stats.tukey_hsd(scores, paired=False)
    names = list(scores)
    for r in unpaired:
        i, j = names.index(r.system_a), names.index(r.system_b)
        assert r.mean_diff == pytest.approx(ref.statistic[j, i])
        assert r.pvalue == pytest.approx(ref.pvalue[j, i])


# ------------------------------------------------------------------ planning


@pytest.mark.parametrize("alternative", ALTERNATIVES)
@pytest.mark.parametrize(("sd", "n"), [(0.1, 10), (0.25, 50), (0.3, 237)])
def test_planning_round_trip(sd, n, alternative):
    delta = stats.min_detectable_difference(sd, n, alternative=alternative)
    assert stats.queries_needed(sd, delta, alternative=alternative) == n
    assert stats.paired_t_power(sd, delta, n, alternative=alternative) >= 0.8
    assert stats.paired_t_power(sd, delta, n, alternative=alternative) == pytest.approx(0.8)
    assert stats.paired_t_power(sd, delta, n - 1, alternative=alternative) < 0.8
    # normal approximation n ~ ((z_a + z_b) sd / delta)^2 slightly underestimates
    z_a = sps.norm.ppf(1 - (0.025 if alternative == "two-sided" else 0.05))
    approx = ((z_a + sps.norm.ppf(0.8)) * sd / delta) ** 2
    assert approx <= n <= approx + 3


def test_power_monte_carlo_sanity():
    sd, n = 1.0, 20
    delta = stats.min_detectable_difference(sd, n)
    rng = np.random.default_rng(0)
    d = rng.normal(delta, sd, size=(4000, n))
    t = d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))
    rejected = np.mean(2 * sps.t.sf(np.abs(t), n - 1) < 0.05)
    assert abs(rejected - 0.8) < 0.03


def test_planning_validation():
    with pytest.raises(ValueError, match="sd_diff"):
        stats.queries_needed(0.0, 0.1)
    with pytest.raises(ValueError, match="n_queries"):
        stats.min_detectable_difference(0.2, 1)
    with pytest.raises(ValueError, match="power"):
        stats.min_detectable_difference(0.2, 10, power=1.5)
    assert stats.queries_needed(0.2, 10.0) == 2


# ------------------------------------------------------------------- mean_ci


def test_mean_ci():
    x = np.random.default_rng(3).random(40)
    mean, low, high = stats.mean_ci(x, confidence_level=0.9)
    ref = sps.t.interval(0.9, len(x) - 1, loc=x.mean(), scale=sps.sem(x))
    assert mean == pytest.approx(x.mean())
    np.testing.assert_allclose((low, high), ref, rtol=1e-12)
    m, lo, hi = stats.mean_ci(x, method="bootstrap", n_resamples=5000, rng=11)
    boot = sps.bootstrap((x,), np.mean, method="percentile", n_resamples=5000, rng=11)
    np.testing.assert_allclose((lo, hi), tuple(boot.confidence_interval), atol=1e-12)
    single = stats.mean_ci([0.5])
    assert single.mean == 0.5 and math.isnan(single.low) and math.isnan(single.high)
    with pytest.raises(ValueError, match="at least 1"):
        stats.mean_ci([])


def test_docstring_examples():
    modules = (stats, base, effects, paired, planning, resampling, systems)
    results = [doctest.testmod(m, optionflags=doctest.ELLIPSIS) for m in modules]
    assert sum(r.attempted for r in results) > 20
    assert [r.failed for r in results] == [0] * len(modules)
