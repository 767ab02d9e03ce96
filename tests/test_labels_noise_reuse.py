"""noise_trend reusing the trend's query bootstrap (``trend_result``, issue 18) gives, bit
for bit, what it gave drawing the queries again; the trend's bands are unchanged. The trend's
bootstrap as it was is kept here, the noise kernel as it was in ``_reference_kernels``."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pandas as pd
import pytest
from _reference_kernels import two_stage_4d57c18
from test_labels_noise import small_judgments

from ireval_core.labels import Judgments, noise_trend, trend
from ireval_core.labels import noise as N

T = importlib.import_module("ireval_core.labels.trend")  # the module; labels.trend is the function


# trend._bootstrap before the reuse (commit 4d57c18), verbatim but for its name and the
# module prefix of the helpers it calls (left as they were); noise._two_stage of then is
# _reference_kernels.two_stage_4d57c18
def old_bootstrap(x: np.ndarray, w: np.ndarray | None, level: float, n_resamples: int,
               seed: int, cache: dict[tuple[int, int, int], list[np.ndarray]] | None = None
               ) -> tuple[float, float]:
    """Percentile interval of the (weighted) mean of ``x``: queries resampled with
    replacement (:func:`bootstrap_means`); the weighted mean of a resample is
    Σ w·x / Σ w over its draws. NaN for fewer than two values."""
    if len(x) < 2:
        return math.nan, math.nan
    if w is None:
        theta = T.bootstrap_means(x[:, None], n_resamples, seed, cache)[:, 0]
    else:
        both = T.bootstrap_means(np.column_stack((w * x, w)), n_resamples, seed, cache)
        theta = both[:, 0] / both[:, 1]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(theta, [alpha, 1.0 - alpha])
    return float(low), float(high)


def old_noise(j: Judgments, monkeypatch: pytest.MonkeyPatch, **kw: object) -> N.NoiseTrend:
    def two_stage(*args: object) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        # no trend given: nothing to reuse; the old kernel sums its own query stage
        # (args[10]: the query-stage sums the new one takes, left aside)
        assert len(args) == 11 and args[9] is None
        return two_stage_4d57c18(*args[:9])  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(N, "_two_stage", two_stage)
        return noise_trend(j, **kw)  # type: ignore[arg-type]


def assert_same_noise(a: N.NoiseTrend, b: N.NoiseTrend) -> None:
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    pd.testing.assert_frame_equal(a.changes, b.changes, check_exact=True)
    assert a._resamples.keys() == b._resamples.keys()
    for key in a._resamples:
        np.testing.assert_array_equal(a._stages(key), b._stages(key), err_msg=str(key))


@pytest.mark.parametrize("weights", [True, False])
@pytest.mark.parametrize(("combine", "gain", "k"), [("mean", "linear", 10),
                                                    ("majority", "exp", 4),
                                                    ("median", "linear", 3)])
def test_reusing_the_trend_is_the_old_noise_trend(weights: bool, combine: str, gain: str,
                                                  k: int, monkeypatch: pytest.MonkeyPatch
                                                  ) -> None:
    j = small_judgments(seed=7, weights=weights)
    kw = {"k": k, "gain": gain, "combine": combine, "n_resamples": 400, "seed": 3}
    before = old_noise(j, monkeypatch, **kw)
    assert (before.table["raters"] >= 2).all() and before.table["var_raters"].gt(0).any()
    tr = trend(j, **kw)  # type: ignore[arg-type]
    assert len(tr.query_sums) == len(before.table)
    assert_same_noise(noise_trend(j, trend_result=tr, **kw), before)  # type: ignore[arg-type]
    assert_same_noise(noise_trend(j, **kw), before)  # type: ignore[arg-type]


@pytest.mark.parametrize("weights", [True, False])
def test_one_rater_reusing_the_trend_is_the_old_noise_trend(
        weights: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    one = small_judgments(weights=weights).select(raters=["r1"])
    before = old_noise(one, monkeypatch, n_resamples=300)
    assert (before.table["raters"] == 1).all()
    tr = trend(one, n_resamples=300)
    assert_same_noise(noise_trend(one, n_resamples=300, trend_result=tr), before)
    # the old one-rater branch: the query bootstrap means, computed as it did
    pq = tr.per_query
    for (r, s), value in ((key, before._stages(key)) for key in before._resamples):
        part = pq[(pq["round"] == r) & (pq["system"] == s)]
        x, w = part["dcg"].to_numpy(float), part["weight"].to_numpy(float)
        if weights:
            both = T.bootstrap_means(np.column_stack((w * x, w)), 300, 0)
            expected = both[:, 0] / both[:, 1]
        else:
            expected = T.bootstrap_means(x[:, None], 300, 0)[:, 0]
        np.testing.assert_array_equal(value[0], expected)
        np.testing.assert_array_equal(value[1], expected)


@pytest.mark.parametrize("weights", [True, False])
def test_trend_bands_and_sums_are_the_old_bootstrap(weights: bool) -> None:
    j = small_judgments(weights=weights)
    tr = trend(j, n_resamples=250, seed=9)
    pq = tr.per_query
    for row in tr.table.itertuples(index=False):
        part = pq[(pq["round"] == row.round) & (pq["system"] == row.system)]
        x = part["dcg"].to_numpy(float)
        w = part["weight"].to_numpy(float) if weights else None
        low, high = old_bootstrap(x, w, 0.95, 250, 9)
        assert (row.dcg_ci_low, row.dcg_ci_high) == (low, high)
        sums = tr.query_sums[(row.round, row.system)]
        assert sums.shape == (250, 2 if weights else 1) and not sums.flags.writeable
        columns = np.column_stack((w * x, w)) if weights else x[:, None]
        np.testing.assert_array_equal(sums / len(x), T.bootstrap_means(columns, 250, 9))
    assert trend(j, n_resamples=250, by="segment").query_sums == {}


def test_a_trend_of_other_settings_is_refused() -> None:
    j = small_judgments()
    for other in (trend(j, k=5), trend(j, gain="exp"), trend(j, combine="median"),
                  trend(j, seed=1), trend(j, n_resamples=100), trend(j, by="segment")):
        with pytest.raises(ValueError, match="trend_result"):
            noise_trend(j, trend_result=other)
    with pytest.raises(TypeError, match="trend_result"):
        noise_trend(j, trend_result="a trend")  # type: ignore[arg-type]


def test_with_exclude_the_trend_of_every_rater_is_not_used() -> None:
    j = small_judgments()
    alone = noise_trend(j, exclude=("r2",), n_resamples=300)
    given = noise_trend(j, exclude=("r2",), n_resamples=300,
                        trend_result=trend(j, n_resamples=300))
    assert_same_noise(given, alone)
    assert not math.isnan(given.table["ci_low"].iloc[0])
