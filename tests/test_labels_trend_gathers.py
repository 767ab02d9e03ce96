"""The Trend page's kernels made faster (issue 18: Trend first visit) give the same
numbers to the bit: the query bootstrap's sums gathered a block of draws at a time for
every column and every group of one size at once, the rater-noise trend's label matrix
built once for every round, its query stage summed for every (round, system) at once, its
two-stage gather a block at a time, per-query DCG kept with the judgments. The functions
as they were (commit 513ae8c) are kept here, verbatim but for their names and the module
prefix of the helpers they call (``bootstrap_sums`` and ``_two_stage`` in
``_reference_kernels``); the new ones are checked against them on the bundled sample and
on random data."""

from __future__ import annotations

import importlib
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from _reference_kernels import bootstrap_sums_513ae8c as old_bootstrap_sums
from _reference_kernels import two_stage_513ae8c as old_two_stage
from test_labels_noise import small_judgments

from ireval_core.labels import Judgments, judgments_from_frame, noise_trend, read_judgments
from ireval_core.labels import kernels as K
from ireval_core.labels import noise as N
from ireval_core.labels import online as O
from ireval_core.labels import planning as P
from ireval_core.measures import gain as G

T = importlib.import_module("ireval_core.labels.trend")  # the module; labels.trend is the function
SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "labels"


def old_bootstrap_means(values: np.ndarray, n_resamples: int, seed: int,
                        cache: dict[tuple[int, int, int], list[np.ndarray]] | None = None
                        ) -> np.ndarray:
    return old_bootstrap_sums(values, n_resamples, seed, cache) / values.shape[0]


def old_bootstrap(x: np.ndarray, w: np.ndarray | None, level: float, n_resamples: int,
                  seed: int) -> tuple[float, float, np.ndarray | None]:
    """trend._bootstrap before (one call per group)."""
    if len(x) < 2:
        return math.nan, math.nan, None
    if w is None:
        sums = old_bootstrap_sums(x[:, None], n_resamples, seed)
        theta = (sums / len(x))[:, 0]
    else:
        sums = old_bootstrap_sums(np.column_stack((w * x, w)), n_resamples, seed)
        both = sums / len(x)
        theta = both[:, 0] / both[:, 1]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(theta, [alpha, 1.0 - alpha])
    return float(low), float(high), sums


# noise._round_matrix and _outcome_sums before (_two_stage: _reference_kernels)
def old_round_matrix(j: Judgments, r: int, rater_codes: np.ndarray) -> tuple[int, np.ndarray]:
    """(first unit of round r, its units x raters label matrix, NaN = not labeled)."""
    units = np.flatnonzero(j.unit_round == r)
    u0 = int(units[0]) if len(units) else 0
    y = np.full((len(units), len(rater_codes)), np.nan)
    pos = np.full(len(j.rater_names), -1, dtype=np.int64)
    pos[rater_codes] = np.arange(len(rater_codes))
    sel = (j.label_unit >= u0) & (j.label_unit < u0 + len(units)) & np.isfinite(j.label_value)
    sel &= pos[j.label_rater] >= 0
    y[j.label_unit[sel] - u0, pos[j.label_rater[sel]]] = j.label_value[sel]
    return u0, y


def old_outcome_sums(j: Judgments, r: int, draws: N.RaterDraws, rater_codes: np.ndarray, k: int,
                  gain: str, combine: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per group of round r (its rows of ``group_*``) and rater outcome: the DCG@k
    (``N``) and the labeled discount mass (``L``) under the outcome's weights; and the
    round's group ids. Sums run in position order within a group."""
    groups = np.flatnonzero(j.group_round == r)
    u0, y = old_round_matrix(j, r, rater_codes)
    shown = np.flatnonzero((j.shown_round == r) & (j.shown_position <= k))
    g_local = j.shown_group[shown] - (int(groups[0]) if len(groups) else 0)
    disc = G.discounts(j.shown_position[shown], "log2")
    unit_local = j.shown_unit[shown] - int(u0)
    n_out = len(draws.outcomes)
    big_n = np.zeros((len(groups), n_out))
    big_l = np.zeros((len(groups), n_out))
    step = max(1, (1 << 22) // max(len(y), 1))
    for lo in range(0, n_out, step):  # chunks of outcomes bound memory
        label = K.weighted_combine(y, draws.outcomes[lo:lo + step], combine)[unit_local]
        for c in range(label.shape[1]):  # one bincount per outcome (few: C(2R-1, R))
            big_n[:, lo + c] = np.bincount(g_local, weights=G.gains(label[:, c], gain) * disc,
                                           minlength=len(groups))
            big_l[:, lo + c] = np.bincount(g_local, weights=np.isfinite(label[:, c]) * disc,
                                           minlength=len(groups))
    return big_n, big_l, groups


def old_noise(j: Judgments, *, k: int = 10, gain: str = "linear", combine: str = "mean",
              exclude: tuple[str, ...] = (), level: float = 0.95, n_resamples: int = 2000,
              seed: int = 0, alpha: float = 0.05, power: float = 0.8,
              trend_result: Any = None) -> tuple[pd.DataFrame, pd.DataFrame,
                                                 dict[tuple[str, str], np.ndarray]]:
    """noise_trend's table, changes and resamples as computed before (its loop verbatim)."""
    from scipy import stats as _sps

    people = [r for r in j.raters if r not in exclude]
    jp = j.select(raters=people) if exclude else j
    reuse = {} if exclude or trend_result is None else trend_result.query_sums
    pq = T.per_query_dcg(jp, k=k, gain=gain, combine=combine)
    weighted = jp.has_weight
    w_all = np.asarray(jp.group_weight, dtype=np.float64)
    label, _ = jp.combined(combine)
    in_k = jp.shown_position <= k
    mass_all = np.bincount(jp.shown_group, weights=np.where(
        in_k & np.isfinite(label[jp.shown_unit]), G.discounts(jp.shown_position, "log2"), 0.0),
        minlength=jp.n_groups)

    rows: list[dict[str, Any]] = []
    resamples: dict[tuple[str, str], np.ndarray] = {}
    draws_of: dict[str, N.RaterDraws] = {}
    cache: dict[tuple[int, int, int], list[np.ndarray]] = {}
    z_mdc = _sps.norm.ppf(1.0 - alpha / 2.0) + _sps.norm.ppf(power)
    for r in np.unique(jp.group_round):  # a loop over rounds
        rname = str(jp.round_names[r])
        units = jp.unit_round == r
        given = np.isfinite(jp.label_value) & units[jp.label_unit]
        codes = np.unique(jp.label_rater[given])
        draws = N.rater_draws(rname, [str(x) for x in jp.rater_names[codes]], n_resamples, seed)
        draws_of[rname] = draws
        codes = codes[np.argsort(jp.rater_names[codes].astype(str), kind="stable")]
        big_n, big_l, groups = old_outcome_sums(jp, int(r), draws, codes, k, gain, combine)
        for s in np.unique(jp.group_system[groups]):  # a loop over the round's systems
            local = np.flatnonzero(jp.group_system[groups] == s)
            g = groups[local]
            x, wq = pq.dcg[g], w_all[g]
            n = len(g)
            sname = str(jp.system_names[s])
            sums = reuse.get((rname, sname))
            if sums is not None and sums.shape != (n_resamples, 2 if weighted else 1):
                sums = None  # not this group's: resample here
            if n >= 2 and len(codes) >= 2:
                theta, queries, by_rater = old_two_stage(
                    x, wq if weighted else None, big_n[local], big_l[local], mass_all[g],
                    draws.outcome, n_resamples, seed, cache, sums)
            elif n >= 2:  # one rater: the query bootstrap, exactly the trend's band
                if weighted:
                    both = (old_bootstrap_means(np.column_stack((wq * x, wq)), n_resamples,
                                            seed, cache) if sums is None else sums / n)
                    queries = both[:, 0] / both[:, 1]
                else:
                    queries = (old_bootstrap_means(x[:, None], n_resamples, seed, cache)
                               if sums is None else sums / n)[:, 0]
                theta, by_rater = queries, np.full(n_resamples, N._wmean(x, wq))
            else:
                theta = queries = by_rater = np.full(n_resamples, np.nan)
            resamples[(rname, sname)] = np.vstack((theta, queries, by_rater))
            mean = N._trend_mean(x, wq, weighted)
            sd, n_eff = N._weighted_sd(x, wq if weighted else np.ones(n))
            var_q = sd ** 2 / n_eff if n_eff > 0 else math.nan
            var_r = float(np.var(by_rater, ddof=1)) if len(codes) >= 2 and n >= 2 else 0.0
            low, high = K.percentile_interval(theta, level)
            qlow, qhigh = K.percentile_interval(queries, level)
            total = var_q + var_r
            rows.append({
                "round": rname, "system": sname, "queries": n, "raters": len(codes),
                "dcg": mean, "ci_low": low, "ci_high": high, "ci_low_queries": qlow,
                "ci_high_queries": qhigh,
                "se": float(np.nanstd(theta, ddof=1)) if n >= 2 else math.nan,
                "sd_between": sd, "n_eff": n_eff, "var_queries": var_q, "var_raters": var_r,
                "rater_share": var_r / total if total > 0 else math.nan,
                "mdc": float(z_mdc * math.sqrt(2.0 * total)) if n >= 2 else math.nan,
                "covers": N._covers(len(codes), n),
                "_mass": float(np.dot(wq, mass_all[g]) / wq.sum()) if weighted
                else float(mass_all[g].mean()) if n else math.nan,
            })
    table = pd.DataFrame(rows, columns=[*N.TABLE_COLUMNS, "_mass"])
    changes = N._changes(table, level, alpha, z_mdc, None, gain, k)
    return table.drop(columns="_mass"), changes, resamples


def order_sensitive(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Values whose float sums change with the order of the additions."""
    return rng.standard_normal(shape) * 10.0 ** rng.integers(-3, 7, size=shape)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64, 1001])
@pytest.mark.parametrize("n_resamples", [1, 2, 3, 17, 2000])
def test_bootstrap_sums_are_the_old_ones_to_the_bit(n: int, n_resamples: int) -> None:
    rng = np.random.default_rng(n * 7919 + n_resamples)
    for c in (1, 2, 3, 24):
        values = order_sensitive(rng, (n, c))
        cache: dict[tuple[int, int, int], list[np.ndarray]] = {}
        new = T.bootstrap_sums(values, n_resamples, 5, cache)
        np.testing.assert_array_equal(new, old_bootstrap_sums(values, n_resamples, 5))
        np.testing.assert_array_equal(new, T.bootstrap_sums(values, n_resamples, 5, cache))


def test_bootstrap_sums_of_a_large_group_are_the_old_ones_and_order_matters() -> None:
    """5,000 queries x 2,000 resamples (the benchmark's round): several chunks of draws,
    many blocks per chunk; and a pairwise sum of the same draws differs, so that the test
    would see a change of the order of the additions."""
    rng = np.random.default_rng(18)
    values = order_sensitive(rng, (5000, 3))
    new = T.bootstrap_sums(values, 2000, 0)
    np.testing.assert_array_equal(new, old_bootstrap_sums(values, 2000, 0))
    idx = np.vstack(T.resample_indices(5000, 2000, 0))
    pairwise = np.ascontiguousarray(values[:, 0][idx].T).sum(axis=1)
    assert not np.array_equal(pairwise, new[:, 0])


def sample_judgments() -> Judgments:
    return read_judgments([(p.name, p.read_bytes()) for p in
                           [*sorted(SAMPLE.glob("labels_*.csv")), SAMPLE / "judge_llm.csv"]])


@pytest.mark.parametrize("weights", [True, False])
@pytest.mark.parametrize("by", [None, "segment"])
def test_trend_bands_and_sums_are_the_old_per_group_bootstrap(weights: bool, by: str | None
                                                              ) -> None:
    j = small_judgments(seed=11, weights=weights) if by is None else sample_judgments()
    for n_resamples in (1, 250):
        tr = T.trend(j, n_resamples=n_resamples, seed=4, by=by)  # type: ignore[arg-type]
        pq = tr.per_query
        keys = ["round", "system"] + (["segment"] if by else [])
        for row in tr.table.itertuples(index=False):
            part = pq[np.logical_and.reduce([pq[c] == getattr(row, c) for c in keys])]
            x = part["dcg"].to_numpy(float)
            w = part["weight"].to_numpy(float) if j.has_weight else None
            low, high, sums = old_bootstrap(x, w, 0.95, n_resamples, 4)
            np.testing.assert_array_equal([row.dcg_ci_low, row.dcg_ci_high], [low, high])
            if by is None and sums is not None:
                np.testing.assert_array_equal(tr.query_sums[(row.round, row.system)], sums)


def assert_same(new: N.NoiseTrend, old: tuple[pd.DataFrame, pd.DataFrame,
                                                dict[tuple[str, str], np.ndarray]]) -> None:
    table, changes, resamples = old
    pd.testing.assert_frame_equal(new.table, table, check_exact=True)
    pd.testing.assert_frame_equal(new.changes, changes, check_exact=True)
    assert new._resamples.keys() == resamples.keys()
    for key, value in resamples.items():
        np.testing.assert_array_equal(new._stages(key), value, err_msg=str(key))


@pytest.mark.parametrize("weights", [True, False])
@pytest.mark.parametrize(("combine", "gain", "k"), [("mean", "linear", 10),
                                                    ("majority", "exp", 4),
                                                    ("median", "linear", 3)])
def test_noise_trend_is_the_old_one(weights: bool, combine: str, gain: str, k: int) -> None:
    j = small_judgments(seed=13, weights=weights)
    kw: dict[str, Any] = {"k": k, "gain": gain, "combine": combine, "n_resamples": 300,
                          "seed": 2}
    old = old_noise(j, **kw)
    assert (old[0]["raters"] >= 2).all() and old[0]["var_raters"].gt(0).any()
    assert_same(noise_trend(j, **kw), old)
    tr = T.trend(j, **kw)
    assert_same(noise_trend(j, trend_result=tr, **kw), old_noise(j, trend_result=tr, **kw))
    assert_same(noise_trend(j, exclude=("r2",), **kw), old_noise(j, exclude=("r2",), **kw))


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # one resample: no variance
@pytest.mark.parametrize("n_resamples", [1, 2, 200])
def test_noise_trend_of_the_sample_is_the_old_one(n_resamples: int) -> None:
    """The bundled sample: six months, two systems, three people and the model judge."""
    j = sample_judgments()
    kw: dict[str, Any] = {"n_resamples": n_resamples, "seed": 0}
    tr = T.trend(j, **kw)
    assert_same(noise_trend(j, trend_result=tr, **kw), old_noise(j, trend_result=tr, **kw))
    assert_same(noise_trend(j, exclude=("llm",), **kw), old_noise(j, exclude=("llm",), **kw))


@pytest.mark.parametrize("weights", [True, False])
def test_noise_trend_with_one_rater_is_the_old_one(weights: bool) -> None:
    one = small_judgments(weights=weights).select(raters=["r1"])
    assert_same(noise_trend(one, n_resamples=300), old_noise(one, n_resamples=300))
    tr = T.trend(one, n_resamples=300)
    assert_same(noise_trend(one, n_resamples=300, trend_result=tr),
                old_noise(one, n_resamples=300, trend_result=tr))


def shuffled_labels(j: Judgments) -> Judgments:
    """The same judgments with the label rows out of unit order."""
    order = np.random.default_rng(0).permutation(len(j.label_unit))
    return replace(j, label_unit=j.label_unit[order], label_rater=j.label_rater[order],
                   label_value=j.label_value[order], _cache={})


def test_noise_trend_of_labels_out_of_order_is_the_old_one() -> None:
    j = shuffled_labels(small_judgments(seed=6))
    assert not (np.diff(j.label_unit) >= 0).all()
    assert_same(noise_trend(j, n_resamples=200), old_noise(j, n_resamples=200))


def test_round_matrix_is_the_old_round_matrix() -> None:
    """Each round's labels found once (a range of the labels as read, else a sort) and
    written into one buffer: the old matrix, value for value."""
    for j in (small_judgments(seed=3), sample_judgments(), shuffled_labels(small_judgments()),
              small_judgments(seed=3).select(raters=["r0", "r2"])):
        rows = N._label_rows(j)
        raters = N._round_raters(j, rows)
        buffer = np.empty(j.n_units * len(j.rater_names))
        for r in range(len(j.round_names)):
            given = np.isfinite(j.label_value) & (j.unit_round[j.label_unit] == r)
            codes = np.unique(j.label_rater[given])
            codes = codes[np.argsort(j.rater_names[codes].astype(str), kind="stable")]
            np.testing.assert_array_equal(raters[r], codes)
            np.testing.assert_array_equal(
                rows(r), np.flatnonzero(j.unit_round[j.label_unit] == r))
            u0, old = old_round_matrix(j, r, codes)
            new = N._round_matrix(j, rows(r), codes, u0, len(old), buffer)
            np.testing.assert_array_equal(new, old)
        for codes, n in ((j.shown_round, len(j.round_names)), (j.group_system, 3),
                         (np.random.default_rng(1).integers(0, 5, 300).astype(np.int32), 6)):
            by_code = N._by_code(codes, n)
            for c in range(n):
                np.testing.assert_array_equal(by_code(c), np.flatnonzero(codes == c))


def test_per_query_dcg_is_kept_with_the_judgments_and_read_only() -> None:
    j = small_judgments(seed=9)
    first = T.per_query_dcg(j, k=5, gain="exp", combine="median")
    assert T.per_query_dcg(j, k=5, gain="exp", combine="median") is first
    fresh = T.per_query_dcg(replace(j, _cache={}), k=5, gain="exp", combine="median")
    for name in ("dcg", "idcg", "ndcg", "shown", "labeled"):
        np.testing.assert_array_equal(getattr(first, name), getattr(fresh, name))
        assert not getattr(first, name).flags.writeable
    other = T.per_query_dcg(j, k=5, gain="exp", combine="median", idcg_zero="skip")
    assert other is not first and np.isnan(other.ndcg).sum() >= np.isnan(first.ndcg).sum()
    relabeled = T.per_query_dcg(j, k=5, gain="exp", combine="median",
                                shown_label=np.zeros(j.n_shown))
    assert relabeled is not first and not relabeled.dcg.any()


# online._ranked before: two argsorts per call (the score rank, then group * n + rank)
def old_ranked(j: Judgments, rows: np.ndarray, group: np.ndarray, n: int, label: np.ndarray
               ) -> Any:
    score = j.shown_score[rows]
    rank = np.empty(len(score), dtype=np.int64)
    rank[np.argsort(-score)] = np.arange(len(score))
    order = np.argsort(group.astype(np.int64) * max(len(score), 1) + rank)
    g = group[order].astype(np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=n), out=offsets[1:])
    pos = (np.arange(len(g)) - offsets[g] + 1).astype(np.int32)
    grade = label[rows][order]
    top = float(np.nanmax(grade)) if len(grade) else 0.0
    return O.Ranked(np.arange(n).astype(object), offsets, g.astype(np.int32), pos, grade,
                    score[order], np.zeros(n + 1, dtype=np.int64), np.zeros(0),
                    np.ones(n, bool), max(top, 0.0))


def scored_judgments(n_queries: int, seed: int) -> Judgments:
    """Two rounds of ``n_queries`` lists of 1-6 shown results, scores with many ties
    (two decimals), some unscored or unlabeled."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 7, size=2 * n_queries)
    rows = np.repeat(np.arange(2 * n_queries), sizes)
    position = np.arange(len(rows)) - np.repeat(np.cumsum(sizes) - sizes, sizes) + 1
    score = np.round(rng.random(len(rows)), 2)
    score[rng.random(len(rows)) < 0.05] = np.nan
    label = rng.integers(0, 4, len(rows)).astype(float)
    label[rng.random(len(rows)) < 0.05] = np.nan
    return judgments_from_frame(pd.DataFrame({
        "round": np.where(rows < n_queries, "2026-01", "2026-02"),
        "query": [f"q{q % n_queries}" for q in rows], "doc": [f"d{i}" for i in position],
        "position": position, "label": label, "score": score}))


@pytest.mark.parametrize("which", ["sample", "small", "many groups"])
def test_ranked_lists_are_the_old_ones(which: str) -> None:
    """The score order sorted once and the groups by radix: the same entries in the same
    order (also past 65,536 groups, where the radix takes two 16-bit passes)."""
    j = {"sample": sample_judgments, "small": lambda: scored_judgments(50, 1),
         "many groups": lambda: scored_judgments(40_000, 2)}[which]()
    label, _ = j.combined("mean")
    lab = label[j.shown_unit]
    rows = np.flatnonzero(np.isfinite(j.shown_score) & np.isfinite(lab))
    by_score = O._by_score(j, rows)
    rs = j.group_round.astype(np.int64) * len(j.system_names) + j.group_system
    for group, n in ((j.shown_group[rows], j.n_groups),
                     (rs[j.shown_group[rows]], int(rs.max()) + 1)):
        new = O._ranked(j, rows, group, n, lab, by_score)
        old = old_ranked(j, rows, group, n, lab)
        for name in ("offsets", "qidx", "pos", "grade", "score"):
            np.testing.assert_array_equal(getattr(new, name), getattr(old, name), err_msg=name)
        assert new.max_grade == old.max_grade
    assert which != "many groups" or j.n_groups > 65536


def old_plan(j: Judgments, round: str, *, delta: float, k: int = 10, gain: str = "linear",
             combine: str = "mean", alpha: float = 0.05, power: float = 0.8) -> pd.DataFrame:
    """plan_next_round before: per-query DCG of a view on the round and on the one before
    (its body verbatim after the checks)."""
    from ireval_core.options import EvalOptions

    opts = EvalOptions()
    rounds = j.rounds
    prev = rounds[rounds.index(round) - 1] if rounds.index(round) > 0 else None
    jr = j.round(round)
    pq = T.per_query_dcg(jr, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero)
    if prev is not None:
        jp = j.round(prev)
        pq_prev = T.per_query_dcg(jp, k=k, gain=gain, combine=combine,
                                idcg_zero=opts.idcg_zero)
    rows = []
    for system in jr.systems:
        code = int(np.flatnonzero(j.system_names == system)[0])
        sel = jr.group_system == code
        x = pq.dcg[sel]
        sd = float(np.std(x, ddof=1)) if len(x) >= 2 else math.nan
        base = {"round": round, "system": system, "queries": int(sel.sum()),
                "mean": float(np.mean(x)), "sd": sd, "delta": float(delta), "alpha": alpha,
                "power": power}
        rows.append(base | P._needed("new sample", sd * math.sqrt(2.0), delta, alpha, power,
                                   "independent samples: sd of a difference = sd·√2; queries "
                                   "per round"))
        if prev is not None:
            selp = jp.group_system == code
            shared, ia, ib = np.intersect1d(jp.group_query[selp], jr.group_query[sel],
                                            return_indices=True)
            if len(shared) >= 2:
                d = x[ib] - pq_prev.dcg[selp][ia]
                rows.append(base | P._needed(
                    "same queries", float(np.std(d, ddof=1)), delta, alpha, power,
                    f"paired over the {len(shared)} queries {prev} and {round} share: sd of "
                    "their per-query differences"))
    return pd.DataFrame(rows, columns=list(P.PLAN_COLUMNS))


@pytest.mark.parametrize("which", ["sample", "small", "scored"])
def test_plan_from_the_kept_per_query_dcg_is_the_old_plan(which: str) -> None:
    j = {"sample": sample_judgments, "small": lambda: small_judgments(seed=4),
         "scored": lambda: scored_judgments(30, 5)}[which]()
    for round_name in j.rounds:
        for kw in ({"k": 10}, {"k": 3, "gain": "exp", "combine": "median"}):
            new = P.plan_next_round(j, round_name, delta=0.4, **kw)  # type: ignore[arg-type]
            pd.testing.assert_frame_equal(new, old_plan(j, round_name, delta=0.4, **kw),
                                          check_exact=True)
            assert (new["design"] == "same queries").any() or round_name == j.rounds[0]


def old_weighted_mean(y: np.ndarray, v: np.ndarray) -> np.ndarray:
    """kernels.weighted_combine(..., "mean") before: sums in rater order, one rater at a
    time (the chunks of weight vectors do not change a sum)."""
    given = ~np.isnan(y)
    y0 = np.where(given, y, 0.0)
    vv = v.astype(np.float64)
    num = np.zeros((len(y), len(vv)))
    den = np.zeros((len(y), len(vv)))
    for r in range(y.shape[1]):
        num += y0[:, r, None] * vv[None, :, r]
        den += given[:, r, None] * vv[None, :, r]
    out = np.full((len(y), len(vv)), np.nan)
    np.divide(num, den, out=out, where=den > 0)
    return out


@pytest.mark.parametrize("labels", ["grades", "negative grades", "halves", "wide", "real",
                                    "few units", "signed zeros"])
@pytest.mark.parametrize("combine", ["mean", "median", "majority"])
def test_combining_each_distinct_row_once_is_combining_every_unit(labels: str, combine: str
                                                                  ) -> None:
    """Whole-number labels of a small range repeat as rows: each distinct row is combined
    once and copied to its units; other labels (halves, a wide range, real values, few
    units) every unit on its own, as before. The same labels to the bit, zeros' sign
    included: against the old loop for the mean, the per-unit kernel (unchanged) for all."""
    rng = np.random.default_rng(len(labels) + len(combine))
    n_units, n_raters = (40 if labels == "few units" else 20_000), 4
    y = {"grades": lambda: rng.integers(0, 4, (n_units, n_raters)).astype(float),
         "negative grades": lambda: rng.integers(-2, 3, (n_units, n_raters)).astype(float),
         "halves": lambda: rng.integers(0, 7, (n_units, n_raters)) / 2.0,
         "wide": lambda: rng.integers(-50, 50, (n_units, n_raters)).astype(float),
         "real": lambda: order_sensitive(rng, (n_units, n_raters)),
         "few units": lambda: rng.integers(0, 4, (n_units, n_raters)).astype(float),
         "signed zeros": lambda: rng.integers(0, 4, (n_units, n_raters)) * -1.0}[labels]()
    y[rng.random(y.shape) < 0.3] = np.nan
    y[:3] = np.nan  # units nobody labeled
    outcomes = np.vstack([rng.multinomial(n_raters, [1 / n_raters] * n_raters, size=34),
                          np.zeros((1, n_raters), dtype=np.int64)])
    compressed = K._label_patterns(y)
    assert (compressed is not None) == (labels in ("grades", "negative grades"))
    new = K.weighted_combine(y, outcomes, combine)
    old = old_weighted_mean(y, outcomes) if combine == "mean" else K._weighted_combine(
        y, outcomes, combine)
    np.testing.assert_array_equal(new, old)
    np.testing.assert_array_equal(new, K._weighted_combine(y, outcomes, combine))
    assert np.array_equal(np.signbit(new), np.signbit(old))
    assert np.isnan(new[:, -1]).all() and np.isnan(new[:3]).all()


def ranked_lists(rng: np.random.Generator, n: int, longest: int) -> Any:
    """``n`` lists of 0..longest results by score descending, labels with ties and some
    negative (not judged), scores with ties."""
    sizes = rng.integers(0, longest + 1, size=n)
    sizes[0] = longest
    qidx = np.repeat(np.arange(n), sizes).astype(np.int32)
    score = np.round(rng.random(len(qidx)), 1)
    order = np.lexsort((-score, qidx))
    score = score[order]
    grade = rng.choice([-1.0, 0.0, 1.0 / 3, 2.0 / 3, 1.0, 2.0, 3.0], size=len(qidx))
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    pos = (np.arange(len(qidx)) - offsets[qidx] + 1).astype(np.int32)
    return O.Ranked(np.arange(n).astype(object), offsets, qidx, pos, grade, score,
                    np.zeros(n + 1, dtype=np.int64), np.zeros(0), np.ones(n, bool), 3.0)


@pytest.mark.parametrize("longest", [1, 2, 7, 20, 32, 33, 60])
def test_pnr_counts_of_short_lists_pair_by_pair_are_the_measures_counts(longest: int) -> None:
    """The shown lists' PNR pairs compared all at once (up to 32 results; longer lists go
    to the measure's kernel) are the PNR measure's counts, list by list."""
    from ireval_core.measures import parse_measure
    from ireval_core.measures.pairwise import pnr_counts
    from ireval_core.options import EvalOptions

    rng = np.random.default_rng(longest)
    r = ranked_lists(rng, 3000, longest)
    opts = EvalOptions()
    new = O._pnr_counts(r, opts)
    old = pnr_counts(r, parse_measure("PNR"), opts)
    np.testing.assert_array_equal(new[0], old[0])
    np.testing.assert_array_equal(new[1], old[1])
    assert longest < 7 or (old[0] > 0).any() and (old[1] > 0).any()


# trend._grades before (pandas groups of the (round, system) pairs, numpy.unique levels)
def old_grades(j: Judgments, k: int, combine: str) -> pd.DataFrame:
    """Shown positions <= k per (round, system) and rounded combined label; every grade
    seen anywhere is listed for every (round, system), with 0 where absent."""
    label, _ = j.combined(combine)
    lab = label[j.shown_unit]
    in_k = j.shown_position <= k
    grade = np.where(np.isfinite(lab), np.floor(lab + 0.5), np.nan)[in_k]
    levels = np.unique(grade[np.isfinite(grade)])
    slot = np.where(np.isfinite(grade), np.searchsorted(levels, grade), len(levels))
    n_slots = len(levels) + 1
    pairs = pd.DataFrame({"r": j.shown_round[in_k], "s": j.shown_system[in_k]})
    rs = pairs.groupby(["r", "s"], sort=True).ngroup().to_numpy()
    n_rs = int(rs.max()) + 1 if len(rs) else 0
    counts = np.bincount(rs * n_slots + slot, minlength=n_rs * n_slots).reshape(n_rs, n_slots)
    first = np.zeros(n_rs, dtype=np.int64)
    order = np.argsort(rs, kind="stable")
    first[:] = order[np.searchsorted(rs[order], np.arange(n_rs))]
    names = j.label_map.grade_names()
    grade_text = [f"{g:g}" for g in levels] + ["unlabeled"]
    grade_name = [names.get(float(g), f"{g:g}") for g in levels] + ["unlabeled"]
    total = counts.sum(axis=1, keepdims=True)
    return pd.DataFrame({
        "round": np.repeat(j.round_names[j.shown_round[in_k][first]].astype(str), n_slots),
        "system": np.repeat(j.system_names[j.shown_system[in_k][first]].astype(str), n_slots),
        "grade": np.tile(np.asarray(grade_text, dtype=object), n_rs),
        "name": np.tile(np.asarray(grade_name, dtype=object), n_rs),
        "count": counts.ravel().astype(np.int64),
        "share": (counts / np.maximum(total, 1)).ravel()})


@pytest.mark.parametrize("combine", ["mean", "median", "majority"])
def test_grade_distribution_is_the_old_one(combine: str) -> None:
    wide = scored_judgments(40, 8)
    wide = replace(wide, label_value=(wide.label_value - 1.0) * 40_000.0, _cache={})
    for j in (sample_judgments(), small_judgments(seed=2), scored_judgments(60, 3), wide):
        for k in (1, 3, 10):
            pd.testing.assert_frame_equal(T._grades(j, k, combine), old_grades(j, k, combine),
                                          check_exact=True)


def test_round_code_and_cached_are_the_judgments_public_views() -> None:
    j = small_judgments(seed=9)
    for name in j.rounds:
        assert j.round_names[j.round_code(name, "plan_next_round")] == name
    with pytest.raises(ValueError, match=r"'round' parameter of plan_next_round.*2026-01"):
        j.round_code("1999-12", "plan_next_round")
    calls: list[int] = []
    kept = j.cached(("answer",), lambda: calls.append(1) or 41)
    assert kept == 41 and j.cached(("answer",), lambda: calls.append(2) or 0) == 41
    assert calls == [1]  # computed once
    view = j.select(rounds=[j.rounds[0]])  # a view keeps nothing of its parent
    assert view.cached(("answer",), lambda: 7) == 7 and j.cached(("answer",), lambda: 0) == 41
