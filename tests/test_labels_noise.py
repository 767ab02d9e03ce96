"""The rater-noise interval of the monthly trend (ireval_core.labels.noise): the two-stage
bootstrap against a slow reference with the same draws, its coverage on simulated data,
the minimum detectable change and the month-over-month drop flag."""

from __future__ import annotations

import math
import statistics
import zlib
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ireval_core.labels import Judgments, judgments_from_frame, trend
from ireval_core.labels.noise import (
    CHANGE_COLUMNS,
    TABLE_COLUMNS,
    minimum_detectable_change,
    noise_trend,
)
from ireval_core.labels.trend import resample_indices
from ireval_core.measures.gain import discounts, gains


def small_judgments(seed: int = 5, weights: bool = True) -> Judgments:
    """3 raters labeling sparsely (1-3 per unit, some units unlabeled), 2 systems that
    share some documents, 2 rounds, 9-12 queries, 6 shown positions, query weights."""
    rng = np.random.default_rng(seed)
    rows = []
    for r, round_name in enumerate(("2026-01", "2026-02")):
        for q in range(9 + 3 * r):
            weight = (1.0, 2.0, 3.0)[q % 3]
            docs = {s: rng.choice(10, size=6, replace=False) for s in ("a", "b")}
            for d in sorted(set(docs["a"]) | set(docs["b"])):
                n_raters = rng.choice(4, p=(0.1, 0.4, 0.3, 0.2))
                who = sorted(rng.choice(3, size=n_raters, replace=False))
                true = int(rng.integers(0, 4))
                labels = [(f"r{t}", int(np.clip(true + (t == 2) - (rng.random() < 0.2), 0, 3)))
                          for t in who] or [("", None)]
                for s in ("a", "b"):
                    hit = np.flatnonzero(docs[s] == d)
                    if not len(hit):
                        continue
                    for rater, label in labels:
                        rows.append({"round": round_name, "system": s, "query": f"q{q:02d}",
                                     "doc": f"d{d}", "position": int(hit[0]) + 1,
                                     "rater": rater, "label": label, "weight": weight})
    frame = pd.DataFrame(rows)
    if not weights:
        frame = frame.drop(columns="weight")
    return judgments_from_frame(frame)


def reference_resamples(j: Judgments, round_name: str, system: str, *, k: int, gain: str,
                        combine: str, n_resamples: int, seed: int) -> np.ndarray:
    """The two-stage bootstrap means written out with Python loops (the module docstring's
    scheme): queries drawn by resample_indices, the round's raters drawn with
    default_rng([seed, crc32(round)]), every label repeated its rater's count."""
    table = j.shown_table()
    labels = j.label_table(round_name)
    shown = table[(table["round"] == round_name) & (table["system"] == system)]
    queries = sorted(shown["query"].unique())
    raters = sorted(labels["rater"].unique())
    by_unit: dict[tuple[str, str], list[tuple[str, float]]] = {}
    for rec in labels.itertuples():
        by_unit.setdefault((rec.query, rec.doc), []).append((rec.rater, rec.label))
    lists = {q: sorted(((int(p), d) for p, d in zip(
        shown.loc[shown["query"] == q, "position"], shown.loc[shown["query"] == q, "doc"],
        strict=True)), key=lambda x: x[0]) for q in queries}
    weight = {q: float(shown.loc[shown["query"] == q, "weight"].iloc[0]) for q in queries}
    weighted = j.has_weight

    def combined(values: list[float]) -> float:
        if combine == "mean":
            return sum(values) / len(values)
        if combine == "median":
            return float(statistics.median(values))
        counts = Counter(values)
        top = max(counts.values())
        return min(v for v, c in counts.items() if c == top)

    def one_query(q: str, count: Counter) -> tuple[float, float]:
        dcg = mass = 0.0
        for p, d in lists[q]:
            if p > k:
                continue
            disc = float(discounts(np.array([p]), "log2")[0])
            values = [y for t, y in sorted(by_unit.get((q, d), [])) for _ in range(count[t])]
            if values:
                dcg += float(gains(np.array([combined(values)]), gain)[0]) * disc
                mass += disc
            else:
                dcg += 0.0
        return dcg, mass

    rng = np.random.default_rng([seed, zlib.crc32(round_name.encode("utf-8"))])
    picks = rng.integers(0, len(raters), size=(n_resamples, len(raters)))
    idx = np.vstack(resample_indices(len(queries), n_resamples, seed))
    everyone = Counter({t: 1 for t in raters})
    as_labeled = {q: one_query(q, everyone) for q in queries}
    out = np.empty(n_resamples)
    for b in range(n_resamples):
        count = Counter(raters[t] for t in picks[b])
        sn = sl = sa = sw = 0.0
        for i in range(len(queries)):
            q = queries[idx[i, b]]
            w = weight[q] if weighted else 1.0
            dcg, mass = one_query(q, count)
            sn += w * dcg
            sl += w * mass
            sa += w * as_labeled[q][1]
            sw += w
        out[b] = 0.0 if sa == 0 else sn / sl * (sa / sw)
    return out


@pytest.mark.parametrize("combine", ["mean", "median", "majority"])
@pytest.mark.parametrize("gain,weights", [("linear", True), ("exp", False)])
def test_two_stage_bootstrap_equals_the_slow_reference(combine, gain, weights):
    j = small_judgments(weights=weights)
    nt = noise_trend(j, k=4, gain=gain, combine=combine, n_resamples=60, seed=3)
    for (round_name, system) in nt.table[["round", "system"]].itertuples(index=False):
        fast = nt.resamples(round_name, system)
        slow = reference_resamples(j, round_name, system, k=4, gain=gain, combine=combine,
                                   n_resamples=60, seed=3)
        assert np.array_equal(fast, slow), (round_name, system)
        row = nt.table.set_index(["round", "system"]).loc[(round_name, system)]
        a = (1.0 - 0.95) / 2.0  # the percentile levels as the trend computes them
        low, high = np.quantile(slow, [a, 1.0 - a])
        assert (row["ci_low"], row["ci_high"]) == (low, high)


def test_query_stage_is_the_trend_band_and_one_rater_gives_it_exactly():
    j = small_judgments()
    nt, tr = noise_trend(j, n_resamples=300), trend(j, n_resamples=300)
    assert list(nt.table.columns) == list(TABLE_COLUMNS)
    assert list(nt.changes.columns) == list(CHANGE_COLUMNS)
    assert nt.table["dcg"].tolist() == tr.table["dcg"].tolist()
    assert nt.table["ci_low_queries"].tolist() == tr.table["dcg_ci_low"].tolist()
    assert nt.table["ci_high_queries"].tolist() == tr.table["dcg_ci_high"].tolist()
    assert (nt.table["raters"] == 3).all()
    assert nt.table["covers"].str.startswith("query sampling and rater noise").all()
    one = j.select(raters=["r1"])
    nt1, tr1 = noise_trend(one, n_resamples=300), trend(one, n_resamples=300)
    assert nt1.table["ci_low"].tolist() == tr1.table["dcg_ci_low"].tolist()
    assert nt1.table["ci_high"].tolist() == tr1.table["dcg_ci_high"].tolist()
    assert (nt1.table["var_raters"] == 0).all()
    assert nt1.table["covers"].str.startswith("query sampling only").all()


def test_exclude_leaves_a_rater_out_of_every_number():
    j = small_judgments()
    left_out = noise_trend(j, exclude=["r2"], n_resamples=100)
    selected = noise_trend(j.select(raters=["r0", "r1"]), n_resamples=100)
    pd.testing.assert_frame_equal(left_out.table, selected.table)
    assert left_out.excluded == ("r2",) and left_out.raters == ("r0", "r1")
    with pytest.raises(ValueError, match="The 'exclude' parameter of noise_trend"):
        noise_trend(j, exclude=["nobody"])


def simulated_months(n_months: int, rater_sd: float, seed: int) -> tuple[Judgments, float]:
    """Crossed design: every month 60 fresh queries and 4 fresh raters (severity sd
    ``rater_sd`` grade), each shown result labeled by 2 of them. Labels are continuous
    (truth + query effect + rater severity + noise), so the expected mean DCG@5 is known."""
    rng = np.random.default_rng(seed)
    n_q, k, n_raters = 60, 5, 4
    mu = 10.0 - 0.3 * np.arange(1, k + 1)
    parts = []
    for m in range(n_months):
        severity = rng.normal(0.0, rater_sd, n_raters)
        a = np.repeat(rng.normal(0.0, 1.0, n_q), k)
        pos = np.tile(np.arange(1, k + 1), n_q)
        who = np.argsort(rng.random((n_q * k, n_raters)), axis=1)[:, :2].ravel()
        value = (np.repeat(mu[pos - 1] + a, 2) + severity[who]
                 + rng.normal(0.0, 0.5, 2 * n_q * k))
        parts.append(pd.DataFrame({
            "round": f"{m:04d}", "query": np.repeat(np.arange(n_q), k * 2).astype(str),
            "doc": np.repeat(pos, 2).astype(str), "position": np.repeat(pos, 2),
            "rater": who.astype(str), "label": value}))
    truth = float(np.sum(mu * discounts(np.arange(1, k + 1), "log2")))
    return judgments_from_frame(pd.concat(parts, ignore_index=True)), truth


def test_coverage_on_simulated_months():
    """With rater severities (sd 0.3 grade, 4 raters a month) the query-only band misses
    the truth far more often than 5%; the two-stage interval is close to 95% (a little
    under: four raters carry little information on their spread). Without rater
    effects both are close to 95%."""
    j, truth = simulated_months(150, 0.3, seed=1)
    t = noise_trend(j, k=5, n_resamples=400).table
    both = ((t["ci_low"] <= truth) & (truth <= t["ci_high"])).mean()
    queries = ((t["ci_low_queries"] <= truth) & (truth <= t["ci_high_queries"])).mean()
    assert both >= 0.85 and queries <= 0.82 and both - queries >= 0.06
    assert t["rater_share"].mean() > 0.25
    j, truth = simulated_months(150, 0.0, seed=1)
    t = noise_trend(j, k=5, n_resamples=400).table
    both = ((t["ci_low"] <= truth) & (truth <= t["ci_high"])).mean()
    assert both >= 0.9
    assert t["rater_share"].mean() < 0.1


def test_minimum_detectable_change_formula():
    j = small_judgments()
    nt = noise_trend(j, alpha=0.1, power=0.9, n_resamples=200)
    t = nt.table
    z = stats.norm.ppf(0.95) + stats.norm.ppf(0.9)
    assert np.allclose(t["mdc"], z * np.sqrt(2 * (t["var_queries"] + t["var_raters"])))
    # var_queries = weighted sd^2 / n_eff, from the per-query DCG of the trend
    pq = trend(j, n_resamples=10).per_query
    part = pq[(pq["round"] == "2026-01") & (pq["system"] == "a")]
    x, w = part["dcg"].to_numpy(), part["weight"].to_numpy()
    m = np.average(x, weights=w)
    var = np.sum(w * (x - m) ** 2) / (w.sum() - np.sum(w ** 2) / w.sum())
    n_eff = w.sum() ** 2 / np.sum(w ** 2)
    row = t.iloc[0]
    assert row["sd_between"] == pytest.approx(math.sqrt(var))
    assert row["var_queries"] == pytest.approx(var / n_eff)
    # the rater part: variance over the rater draws with the queries fixed
    rater_only = nt.resamples("2026-01", "a", stage="raters")
    assert row["var_raters"] == pytest.approx(np.var(rater_only, ddof=1))
    assert minimum_detectable_change(0.01, 0.0) == pytest.approx(
        (stats.norm.ppf(0.975) + stats.norm.ppf(0.8)) * math.sqrt(0.02))
    with pytest.raises(ValueError, match="The 'power' parameter"):
        minimum_detectable_change(0.01, 0.0, power=1.5)


def test_changes_use_the_two_stage_standard_errors():
    j = small_judgments()
    nt = noise_trend(j, n_resamples=300, alpha=0.05)
    t = nt.table.set_index(["round", "system"])
    for c in nt.changes.itertuples():
        se = math.hypot(t.loc[(c.round_from, c.system), "se"],
                        t.loc[(c.round_to, c.system), "se"])
        assert c.se == pytest.approx(se)
        assert c.delta == pytest.approx(t.loc[(c.round_to, c.system), "dcg"]
                                        - t.loc[(c.round_from, c.system), "dcg"])
        assert c.p == pytest.approx(2 * stats.norm.sf(abs(c.delta) / se))
        assert c.drop == (c.delta < 0 and c.p < 0.05)
        assert (c.ci_low, c.ci_high) == pytest.approx((c.delta - 1.959964 * se,
                                                       c.delta + 1.959964 * se), rel=1e-5)


def test_draws_depend_on_the_round_name_not_on_other_months():
    j = small_judgments()
    whole = noise_trend(j, n_resamples=100)
    first = noise_trend(j.select(rounds=["2026-01"]), n_resamples=100)
    assert np.array_equal(whole.resamples("2026-01", "a"), first.resamples("2026-01", "a"))
    d = whole.draws("2026-01")
    assert d.raters == ("r0", "r1", "r2") and d.counts.sum(axis=1).tolist() == [3] * 100
    assert np.array_equal(d.outcomes[d.outcome], d.counts)


def test_parameters_are_checked():
    j = small_judgments()
    for kwargs, match in [({"k": 0}, "'k' parameter"), ({"alpha": 1.0}, "'alpha'"),
                          ({"combine": "max"}, "'combine'"), ({"anchors": "x"}, "'anchors'")]:
        with pytest.raises((ValueError, TypeError), match=match):
            noise_trend(j, **kwargs)
