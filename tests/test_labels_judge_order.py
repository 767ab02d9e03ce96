"""The judge report's order table (Kendall's tau-b of the (round, system) means and its
bootstrap interval) from sort-based pair counts, checked bit for bit against the pairwise
kernel it replaced (``_reference_kernels``: ``judge._order`` and ``kernels.tau_b_many`` as
of commit 97762a0), on the kernel alone (ties, NaN, infinities, -0.0, one and two points)
and on whole reports of several shapes (one round, one system, tied means, a point of one
query whose resamples are NaN, weighted queries).

``IREVAL_FULL_GRID=1`` runs the kernel on every shape of the grid; the suite runs a
seeded sample of it.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from _reference_kernels import order_97762a0, tau_b_many_97762a0
from scipy import stats

from ireval_core.labels import Judgments, judgments_from_frame
from ireval_core.labels.judge import _order, judge_report
from ireval_core.labels.kernels import tau_b_many
from ireval_core.labels.noise import noise_trend

# (resamples, points, distinct values: 0 = continuous) of the kernel's grid
GRID = [(b, m, v) for b in (1, 3, 17) for m in (0, 1, 2, 3, 5, 8, 9, 16, 17, 33, 64, 100)
        for v in (0, 1, 2, 4, 30)]
SAMPLE = GRID if os.environ.get("IREVAL_FULL_GRID") else [
    GRID[i] for i in np.random.default_rng(36).choice(len(GRID), 40, replace=False)]


def values(rng: np.random.Generator, b: int, m: int, distinct: int) -> np.ndarray:
    if distinct == 0:
        return rng.normal(size=(b, m))
    return rng.integers(0, distinct, size=(b, m)).astype(np.float64) / 4.0


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize(("b", "m", "distinct"), SAMPLE)
def test_kernel_is_the_pairwise_kernel_bit_for_bit(b, m, distinct):
    """Both paths: pairs listed (m <= 8), sort-based counts (m > 8)."""
    rng = np.random.default_rng([b, m, distinct])
    x = values(rng, b, m, distinct)
    for y in (values(rng, b, m, distinct), x.copy(), -x, x + values(rng, b, m, 2)):
        with np.errstate(invalid="ignore"):
            assert same_bits(tau_b_many(x, y), tau_b_many_97762a0(x, y))
            assert same_bits(tau_b_many(y, x), tau_b_many_97762a0(y, x))


@pytest.mark.parametrize(("m", "distinct"), [(100, 3), (257, 0), (513, 30), (1000, 4),
                                             (600, 0)])
def test_kernel_on_many_points_with_ties_bit_for_bit(m, distinct):
    """Rows of hundreds of points (every bit of the positions a sort of the discordant
    count, a row length that is and is not a power of two, plus one), heavy ties and none,
    against the pairwise kernel."""
    rng = np.random.default_rng([m, distinct, 36])
    x = values(rng, 2, m, distinct)
    for y in (values(rng, 2, m, distinct), x + values(rng, 2, m, 2), -x):
        assert same_bits(tau_b_many(x, y), tau_b_many_97762a0(x, y))


@pytest.mark.parametrize("m", [6, 9])  # pairs listed, sort-based counts
def test_kernel_special_values_bit_for_bit(m):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, size=(12, m)).astype(np.float64)
    y = rng.normal(size=(12, m))
    x[0, 0] = np.nan                         # NaN: the row's tau is NaN
    y[1, 4] = np.nan
    x[2, :2] = np.inf                        # the same infinity twice: NaN
    y[3, :2] = -np.inf
    x[4, 0], x[4, 1] = np.inf, -np.inf       # two different infinities: ordered
    y[5, 3] = np.inf                         # one infinity: ordered
    x[6, :3] = [0.0, -0.0, 0.0]              # -0.0 ties 0.0
    x[7] = 1.0                               # constant row: NaN
    y[8] = y[9]
    x[8] = 2.0 * y[8]                        # same order: 1
    x[9] = -y[9]                             # reversed: -1
    x[10] = y[10]
    y[10, :4] = y[10, 0]                     # ties in y only
    with np.errstate(invalid="ignore"):
        old = tau_b_many_97762a0(x, y)
    new = tau_b_many(x, y)
    assert same_bits(new, old)
    assert np.isnan(new[[0, 1, 2, 3, 7]]).all() and not np.isnan(new[[4, 5, 6, 10, 11]]).any()
    assert new[8] == 1.0 and new[9] == -1.0
    for row in (4, 5, 6, 10, 11):
        assert new[row] == pytest.approx(stats.kendalltau(x[row], y[row]).statistic)


def test_kernel_chunks_and_large_rows(monkeypatch):
    """Several chunks of resamples, and rows longer than 2^15 (int32 positions)."""
    import ireval_core.labels.kernels as kernels

    rng = np.random.default_rng(11)
    x, y = values(rng, 40, 50, 6), values(rng, 40, 50, 0)
    whole = tau_b_many(x, y)
    monkeypatch.setattr(kernels, "_TAU_CELLS", 120)  # 2 rows a chunk
    assert same_bits(tau_b_many(x, y), whole)
    assert same_bits(whole, tau_b_many_97762a0(x, y))
    long_x = rng.integers(0, 50, size=(1, 40_000)).astype(np.float64)
    long_y = long_x + rng.normal(size=(1, 40_000))
    got = tau_b_many(long_x, long_y)[0]
    assert got == stats.kendalltau(long_x[0], long_y[0]).statistic or got == pytest.approx(
        stats.kendalltau(long_x[0], long_y[0]).statistic, abs=1e-15)


def labeled(rounds: int, systems: int, queries: int = 4, shown: int = 3, seed: int = 0,
            levels: int = 4, one_query_point: bool = False, weights: bool = False
            ) -> Judgments:
    """Two people and a judge ``llm`` label ``rounds`` x ``systems`` lists."""
    rng = np.random.default_rng(seed)
    rows = []
    for r in range(rounds):
        for s in range(systems):
            n_q = 1 if one_query_point and (r, s) == (0, 0) else queries
            for q in range(n_q):
                for p in range(1, shown + 1):
                    true = int(rng.integers(0, levels))
                    for rater in ("ann", "bo", "llm"):
                        y = min(levels - 1, true + int(rng.random() < 0.2))
                        rows.append({"round": f"2026-{r + 1:02d}", "system": f"s{s}",
                                     "query": f"q{q}", "doc": f"d{q}_{s}_{p}", "position": p,
                                     "rater": rater, "label": y,
                                     **({"weight": 1.0 + q % 3} if weights else {})})
    return judgments_from_frame(pd.DataFrame(rows))


SHAPES = {
    "rounds x systems": dict(rounds=6, systems=3),
    "one round": dict(rounds=1, systems=4),
    "one system": dict(rounds=7, systems=1),
    "one point": dict(rounds=1, systems=1),
    "tied means": dict(rounds=5, systems=2, levels=1),
    "two grades, many ties": dict(rounds=6, systems=3, levels=2, queries=2, shown=1),
    "a point of one query (NaN resamples)": dict(rounds=4, systems=2, one_query_point=True),
    "weighted queries": dict(rounds=4, systems=3, weights=True),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_order_table_is_the_old_one_bit_for_bit(shape, monkeypatch):
    j = labeled(**SHAPES[shape])
    people = j.select(raters=["ann", "bo"])
    pt = noise_trend(people, n_resamples=150, seed=5)
    jt = noise_trend(j.select(raters=["llm"]), n_resamples=150, seed=5)
    with np.errstate(invalid="ignore"):
        old = order_97762a0(pt, jt, 5, 0.9)
    new = _order(pt, jt, 5, 0.9)
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    for col in ("tau", "ci_low", "ci_high"):
        assert same_bits(new[col].to_numpy(), old[col].to_numpy())
    import ireval_core.labels.judge as judge

    monkeypatch.setattr(judge, "_ORDER_CELLS", 7)  # resamples in many chunks
    pd.testing.assert_frame_equal(_order(pt, jt, 5, 0.9), old, check_exact=True)


def test_nan_resamples_shape_reaches_the_report():
    """The one-query point's resamples are NaN: the all-rounds interval is NaN, the rounds
    without it keep theirs (both versions alike, above)."""
    rep = judge_report(labeled(**SHAPES["a point of one query (NaN resamples)"]), "llm",
                       n_resamples=100)
    order = rep.order.set_index("scope")
    assert np.isnan(order.loc["all rounds", "ci_low"])
    assert np.isfinite(order.loc["2026-02", "tau"])


@pytest.mark.parametrize("shape", ["rounds x systems", "weighted queries"])
def test_noise_query_sums_in_passes_are_the_same(shape, monkeypatch):
    """The rater-noise trend sums its query stage about 2^21 values a pass (memory bounded
    with many points): in passes of a few columns it is the same, to the bit."""
    import ireval_core.labels.noise as noise

    people = labeled(**SHAPES[shape]).select(raters=["ann", "bo"])
    whole = noise_trend(people, n_resamples=120, seed=2)
    monkeypatch.setattr(noise, "_SUM_CELLS", 250)  # two or three columns a pass
    parts = noise_trend(people, n_resamples=120, seed=2)
    pd.testing.assert_frame_equal(parts.table, whole.table, check_exact=True)
    pd.testing.assert_frame_equal(parts.changes, whole.changes, check_exact=True)
    for r, s in zip(whole.table["round"], whole.table["system"], strict=True):
        for stage in ("both", "queries", "raters"):
            assert same_bits(parts.resamples(r, s, stage), whole.resamples(r, s, stage))


@pytest.mark.parametrize("raters", [1, 2, 3, 5, 8])
def test_rater_draws_outcomes_are_numpys_unique_rows(raters):
    """The distinct rows of the draws' counts (found as integer codes) and each resample's
    row are np.unique(axis=0)'s, in its order."""
    from ireval_core.labels.noise import rater_draws

    d = rater_draws("2026-03", [f"p{i}" for i in range(raters)], 3000, 9)
    outcomes, outcome = np.unique(d.counts, axis=0, return_inverse=True)
    assert same_bits(d.outcomes, outcomes.astype(np.int64))
    assert np.array_equal(d.outcome, np.asarray(outcome).ravel())
    assert np.array_equal(d.outcomes[d.outcome], d.counts)


def test_two_stage_only_keeps_the_two_stage_resamples_and_refuses_the_others():
    """What the judge report keeps of the people's trend: the two-stage resamples, the
    same bits, read without a copy; the query-only ones are gone and asked for, refused."""
    people = labeled(**SHAPES["rounds x systems"]).select(raters=["ann", "bo"])
    whole = noise_trend(people, n_resamples=90, seed=4)
    slim = whole.two_stage_only()
    pd.testing.assert_frame_equal(slim.table, whole.table, check_exact=True)
    for r, s in zip(whole.table["round"], whole.table["system"], strict=True):
        view = slim.resamples_view(r, s)
        assert same_bits(view, whole.resamples(r, s)) and not view.flags.writeable
        assert same_bits(slim.resamples(r, s, "raters"), whole.resamples(r, s, "raters"))
        with pytest.raises(ValueError, match="two-stage"):
            slim.resamples(r, s, "queries")
