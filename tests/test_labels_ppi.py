"""Model + people estimates (PPI++): oracles on hand-checked cases, τ_AP against its
definition, a simulation with a known truth (coverage, the biased judge, widths), the
report on labeling data and the ``labels --judge --ppi`` command line."""

from __future__ import annotations

import io
import json
import math
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from ireval_core.labels import Judgments, judgments_from_frame
from ireval_core.labels.ppi import DORNER_BOUND, inclusion_of, people_sample, ppi_report
from ireval_core.measures.gain import discounts
from ireval_core.stats.ppi import ppi_bootstrap, ppi_clusters, ppi_mean, tau_ap, tau_ap_many

ROOT = Path(__file__).resolve().parents[1]
LABELS = ROOT / "sample_data" / "labels"
K = 10
DISC = discounts(np.arange(1, K + 1), "log2")


# ---------------------------------------------------------------- oracles


def test_ppi_mean_follows_the_papers_formula_by_hand() -> None:
    y, f, fu = [1.0, 2.0, 3.0], [1.5, 2.0, 2.5], [2.0, 3.0, 4.0, 3.0]
    n, big_n = 3, 4
    my, mf = sum(y) / n, sum(f) / n
    cov = sum((a - my) * (b - mf) for a, b in zip(y, f, strict=True)) / n  # 1/3
    every = f + fu
    mall = sum(every) / len(every)
    var_all = sum((v - mall) ** 2 for v in every) / (len(every) - 1)
    lam = cov / ((1 + n / big_n) * var_all)
    est = sum(a - lam * b for a, b in zip(y, f, strict=True)) / n + lam * sum(fu) / big_n
    mu = sum(fu) / big_n
    r = [a - lam * b for a, b in zip(y, f, strict=True)]
    mr = sum(r) / n
    var = lam ** 2 * sum((v - mu) ** 2 for v in fu) / big_n / big_n + \
        sum((v - mr) ** 2 for v in r) / n / n
    got = ppi_mean(np.array(y), np.array(f), np.array(fu))
    assert got.lam == pytest.approx(lam, rel=1e-12)
    assert got.estimate == pytest.approx(est, rel=1e-12)
    assert got.se == pytest.approx(math.sqrt(var), rel=1e-12)
    assert got.high - got.estimate == pytest.approx(1.959963984540054 * math.sqrt(var))
    # λ = 0: the people's mean; λ = 1: plain PPI
    assert ppi_mean(np.array(y), np.array(f), np.array(fu), lam=0).estimate == 2.0
    assert ppi_mean(np.array(y), np.array(f), np.array(fu), lam=1).estimate == \
        pytest.approx(2.0 - 2.0 + 3.0)


def test_ppi_mean_against_the_reference_implementation() -> None:
    ppi_py = pytest.importorskip("ppi_py")
    rng = np.random.default_rng(3)
    for n, big_n in ((5, 40), (30, 300), (200, 1000)):
        t = rng.normal(size=n + big_n)
        y, fall = t[:n] + rng.normal(0, 0.5, n), 0.8 * t + 0.3 + rng.normal(0, 0.4, n + big_n)
        got = ppi_mean(y, fall[:n], fall[n:])
        low, high = ppi_py.ppi_mean_ci(y, fall[:n], fall[n:], alpha=0.05)
        assert (got.low, got.high) == pytest.approx((float(low[0]), float(high[0])), rel=1e-10)


def test_clusters_of_one_item_are_the_textbook_estimate() -> None:
    """One result per query, π = n/N: the design-based estimate is the textbook PPI
    estimate with f̃ = the model's labels of every item (for the same λ)."""
    rng = np.random.default_rng(5)
    big_n = 60
    y, f = rng.normal(2, 1, big_n), rng.normal(2, 1, big_n)
    xi = np.zeros(big_n, dtype=bool)
    xi[rng.choice(big_n, 12, replace=False)] = True
    pi = 12 / big_n
    p, a, h = np.where(xi, y / pi, 0), f, np.where(xi, f / pi, 0)
    for lam in (0.0, 0.4, 1.0):
        got = ppi_clusters(p, a, h, np.ones(big_n), lam=lam)
        want = ppi_mean(y[xi], f[xi], f, lam=lam)
        assert float(got.estimate) == pytest.approx(want.estimate, rel=1e-12)


def test_clusters_by_hand() -> None:
    """Three queries, weights 1, 1, 2: λ̂ = −cov(P, D)/var(D) and the weighted variance."""
    p, a, h = np.array([3.0, 1.0, 2.0]), np.array([2.0, 2.5, 1.0]), np.array([1.0, 2.0, 2.0])
    w = np.array([1.0, 1.0, 2.0])
    d = a - h  # 1, 0.5, -1
    mp, md = (3 + 1 + 4) / 4, (1 + 0.5 - 2) / 4
    cpd = sum(wi ** 2 * (pi - mp) * (di - md)
              for wi, pi, di in zip(w, p, d, strict=True)) / 16 * 1.5
    vd = sum(wi ** 2 * (di - md) ** 2 for wi, di in zip(w, d, strict=True)) / 16 * 1.5
    vp = sum(wi ** 2 * (pi - mp) ** 2 for wi, pi in zip(w, p, strict=True)) / 16 * 1.5
    lam = -cpd / vd
    got = ppi_clusters(p, a, h, w)
    assert float(got.lam) == pytest.approx(lam)
    assert float(got.estimate) == pytest.approx(mp + lam * md)
    assert float(got.se) == pytest.approx(math.sqrt(vp + 2 * lam * cpd + lam ** 2 * vd))
    assert float(got.people) == pytest.approx(mp)
    assert float(got.people_se) == pytest.approx(math.sqrt(vp))
    assert float(got.model) == pytest.approx((2 + 2.5 + 2) / 4)
    assert got.se <= got.people_se  # the tuned λ never widens the interval


@pytest.mark.parametrize("with_count", [False, True])
def test_bootstrap_of_all_queries_once_is_the_estimate(with_count: bool) -> None:
    rng = np.random.default_rng(2)
    p, a, h, n, m = rng.normal(size=(5, 2, 40))
    extra = {"count": n, "count_sampled": m} if with_count else {}
    w = rng.uniform(0.5, 2, size=(2, 40))
    counts = np.vstack([np.ones(40), rng.multinomial(40, np.full(40, 1 / 40))])
    boot, bp, ba = ppi_bootstrap(p, a, h, w, counts, **extra)
    est = ppi_clusters(p, a, h, w, **extra)
    assert boot[0] == pytest.approx(est.estimate)
    assert bp[0] == pytest.approx(est.people) and ba[0] == pytest.approx(est.model)
    rep = np.repeat(np.arange(40), counts[1].astype(int))  # the resample, written out
    again = ppi_clusters(p[:, rep], a[:, rep], h[:, rep], w[:, rep],
                         **{k: v[:, rep] for k, v in extra.items()})
    assert boot[1] == pytest.approx(again.estimate)
    assert bp[1] == pytest.approx(again.people)


def test_two_control_variates_by_hand() -> None:
    """(λ, λ₀) solve the 2 × 2 normal equations; the variance is the quadratic form."""
    rng = np.random.default_rng(6)
    p, d, d0 = rng.normal(size=(3, 25))
    d0 = d0 + 0.5 * d
    q = 25

    def cov(x: np.ndarray, y: np.ndarray) -> float:
        return float(np.sum((x - x.mean()) * (y - y.mean())) / q ** 2 * q / (q - 1))

    s = np.array([cov(p, d), cov(p, d0)])
    big_s = np.array([[cov(d, d), cov(d, d0)], [cov(d, d0), cov(d0, d0)]])
    lam = -np.linalg.solve(big_s, s)
    got = ppi_clusters(p, d, np.zeros(q), np.ones(q), count=d0, count_sampled=np.zeros(q))
    assert (float(got.lam), float(got.lam0)) == pytest.approx(tuple(lam))
    assert float(got.estimate) == pytest.approx(p.mean() + lam @ [d.mean(), d0.mean()])
    var = cov(p, p) + 2 * lam @ s + lam @ big_s @ lam
    assert float(got.se) == pytest.approx(math.sqrt(var))
    beta = -cov(p, d0) / cov(d0, d0)  # people only: the count alone
    assert float(got.people) == pytest.approx(p.mean() + beta * d0.mean())
    assert got.se <= got.people_se


def _tau_ap_by_definition(estimated: list[float], truth: list[float]) -> float:
    order = sorted(range(len(estimated)), key=lambda i: -estimated[i])
    n = len(order)
    total = 0.0
    for rank in range(1, n):
        item = order[rank]
        c = sum(truth[order[j]] > truth[item] for j in range(rank))
        total += c / rank
    return 2.0 / (n - 1) * total - 1.0


def test_tau_ap_by_hand_and_by_definition() -> None:
    assert tau_ap(np.array([3.0, 2, 1]), np.array([3.0, 2, 1])) == 1.0
    assert tau_ap(np.array([3.0, 2, 1]), np.array([1.0, 2, 3])) == -1.0
    # a swap at the top costs more than one at the bottom (Kendall's τ: 1/3 for both)
    assert tau_ap(np.array([3.0, 2, 1]), np.array([2.0, 3, 1])) == pytest.approx(0.0)
    assert tau_ap(np.array([3.0, 2, 1]), np.array([3.0, 1, 2])) == pytest.approx(0.5)
    rng = np.random.default_rng(8)
    e, t = rng.normal(size=(50, 7)), rng.normal(size=(50, 7))
    many = tau_ap_many(e, t)
    for row in range(50):
        assert many[row] == pytest.approx(_tau_ap_by_definition(list(e[row]), list(t[row])))


# ---------------------------------------------------------------- simulation


def _simulate(runs: int, queries: int, share: float, seed: int
              ) -> tuple[dict[str, tuple[np.ndarray, ...]], dict[str, float]]:
    """Per-query P, A, H of ``runs`` rounds of two systems: a true grade per shown
    result (a known distribution per system), people = truth + noise, the judge =
    truth + noise with a bias of +0.6 grade on system b only; people label each result
    with probability ``share``."""
    rng = np.random.default_rng(seed)
    probs = {"a": np.array([0.35, 0.30, 0.22, 0.13]), "b": np.array([0.30, 0.30, 0.25, 0.15])}
    parts = {}
    for name, bias in (("a", 0.0), ("b", 0.6)):
        cdf = np.cumsum(probs[name])
        t = np.searchsorted(cdf, rng.random((runs, queries, K))).astype(np.float64)
        y = t + rng.normal(0, 0.7, t.shape)
        f = t + bias + rng.normal(0, 0.6, t.shape)
        xi = rng.random(t.shape) < share
        parts[name] = ((np.where(xi, y / share, 0) * DISC).sum(-1), (f * DISC).sum(-1),
                       (np.where(xi, f / share, 0) * DISC).sum(-1),
                       np.broadcast_to(DISC.sum(), t.shape[:2]),
                       (np.where(xi, 1 / share, 0) * DISC).sum(-1))
    parts["b-a"] = tuple(pb - pa for pa, pb in zip(parts["a"], parts["b"], strict=True))
    truth = {s: float(probs[s] @ np.arange(4) * DISC.sum()) for s in "ab"}
    truth["b-a"] = truth["b"] - truth["a"]
    return parts, truth


def _coverage(runs: int, queries: int) -> dict[tuple[float, str], dict[str, float]]:
    out = {}
    for i, share in enumerate((0.05, 0.1, 0.2)):
        parts, truth = _simulate(runs, queries, share, seed=100 + i)
        for target, (p, a, h, n, m) in parts.items():
            e = ppi_clusters(p, a, h, np.ones(queries), count=n, count_sampled=m)
            tr = truth[target]
            out[share, target] = {
                "ppi": float(np.mean((e.low <= tr) & (tr <= e.high))),
                "people": float(np.mean((e.people_low <= tr) & (tr <= e.people_high))),
                "model": float(np.mean((e.model_low <= tr) & (tr <= e.model_high))),
                "ratio": float(np.mean((e.high - e.low) / (e.people_high - e.people_low)))}
    return out


def test_simulation_coverage_bias_and_width() -> None:
    """Rounds of 300 queries of two systems, people's share 5%, 10%, 20%: 300 runs per
    share here, coverage within 90.5-98.5% (about 3 binomial standard errors around
    95%); IREVAL_PPI_FULL=1 runs 2,000 per share and asks for 93-97%."""
    full = os.environ.get("IREVAL_PPI_FULL") == "1"
    cov = _coverage(2000 if full else 300, 300)
    low, high = (0.93, 0.97) if full else (0.905, 0.985)
    for (share, target), c in cov.items():
        assert low <= c["ppi"] <= high, (share, target, c)
        assert c["ratio"] < 0.9, (share, target, c)  # the judge is informative: narrower
        if target == "a":  # the judge is unbiased on a
            assert c["model"] > 0.85, (share, target, c)
        else:  # biased on b (and so on b − a): the model-only interval misses the truth
            assert c["model"] < 0.05, (share, target, c)


# ---------------------------------------------------------------- labeling data


def _frame(seed: int = 4, queries: int = 40, share: float = 0.3) -> pd.DataFrame:
    """Two systems sharing some documents, a judge on every result, people on a share."""
    rng = np.random.default_rng(seed)
    rows = []
    for q in range(queries):
        grades = {f"d{q}_{i}": int(rng.integers(0, 4)) for i in range(8)}
        docs = list(grades)
        for system, shown in (("old", docs[:5]), ("new", docs[2:7])):
            for pos, doc in enumerate(shown, 1):
                rows.append(("m1", system, f"q{q}", doc, pos, None, None))
        for doc in docs[:7]:
            g = grades[doc]
            rows.append(("m1", "old", f"q{q}", doc, None, "llm",
                         min(3, g + int(rng.random() < 0.4))))
            if rng.random() < share:
                rows.append(("m1", "old", f"q{q}", doc, None, "ann", g))
    frame = pd.DataFrame(rows, columns=["round", "system", "query", "doc", "position",
                                        "rater", "label"])
    return frame


def _judgments(frame: pd.DataFrame) -> Judgments:
    shown = frame[frame["position"].notna()][["round", "system", "query", "doc", "position"]]
    labels = frame[frame["rater"].notna()][["round", "query", "doc", "rater", "label"]]
    long = shown.merge(labels, on=["round", "query", "doc"], how="left")
    return judgments_from_frame(long)


def test_report_equals_the_estimator_on_the_shown_results() -> None:
    frame = _frame()
    j = _judgments(frame)
    rep = ppi_report(j, "llm", k=5, n_resamples=200)
    labels = frame[frame["rater"].notna()]
    llm = labels[labels["rater"] == "llm"].set_index("doc")["label"]
    ann = labels[labels["rater"] == "ann"].set_index("doc")["label"]
    shown = frame[frame["position"].notna()]
    units = sorted(set(shown["doc"]))
    pi = float(np.mean([u in ann.index for u in units]))
    parts = {}
    for system in ("new", "old"):
        p, a, h, n, m = (np.zeros(40) for _ in range(5))
        for rec in shown[shown["system"] == system].itertuples():
            q, c = int(rec.query[1:]), 1 / math.log2(rec.position + 1)
            a[q] += c * llm[rec.doc]
            n[q] += c
            if rec.doc in ann.index:
                p[q] += c * ann[rec.doc] / pi
                h[q] += c * llm[rec.doc] / pi
                m[q] += c / pi
        parts[system] = (p, a, h, n, m)

    def clusters(p, a, h, n, m):
        return ppi_clusters(p, a, h, np.ones(40), count=n, count_sampled=m)

    for system, row in rep.systems.set_index("system").iterrows():
        e = clusters(*parts[system])
        assert row["estimate"] == pytest.approx(float(e.estimate))
        assert (row["low"], row["high"]) == pytest.approx((float(e.low), float(e.high)))
        assert row["people_only"] == pytest.approx(float(e.people))
        assert row["model_only"] == pytest.approx(float(e.model))
        assert row["n_model"] == len(shown[shown["system"] == system])
    pair = rep.pairs.iloc[0]
    a_sys, b_sys = pair["system_a"], pair["system_b"]
    diff = [pb - pa for pa, pb in zip(parts[a_sys], parts[b_sys], strict=True)]
    e = clusters(*diff)
    assert pair["estimate"] == pytest.approx(float(e.estimate))
    assert pair["model_only"] == pytest.approx(float(e.model))
    assert pair["judge_agrees"] == (pair["judge_verdict"] == pair["people_verdict"])
    assert rep.ranking["points"] == 2
    assert "PPI verdict is used" in rep.memo


def test_stated_inclusion_and_nonrandom_design() -> None:
    j = _judgments(_frame())
    stated = ppi_report(j, "llm", k=5, n_resamples=50, inclusion=0.3)
    default = ppi_report(j, "llm", k=5, n_resamples=50)
    nonrandom = ppi_report(j, "llm", k=5, n_resamples=50, design="nonrandom")
    assert stated.design == "stated" and "stated" in stated.definitions["design"]
    assert "NOT drawn at random" in nonrandom.definitions["design"]
    assert nonrandom.systems["estimate"].tolist() == default.systems["estimate"].tolist()
    assert stated.systems["people_only"].tolist() != default.systems["people_only"].tolist()
    # the default's probability stated per result: the same numbers
    share = float(default.systems["people_share"].iloc[0])
    same = ppi_report(j, "llm", k=5, n_resamples=50, inclusion=np.full(j.n_units, share))
    assert same.systems["estimate"].tolist() == pytest.approx(
        default.systems["estimate"].tolist())
    assert same.pairs["high"].tolist() == pytest.approx(default.pairs["high"].tolist())
    with pytest.raises(ValueError, match="inclusion"):
        ppi_report(j, "llm", inclusion=0.0)
    with pytest.raises(ValueError, match="target_width"):
        ppi_report(j, "llm", target_width=-0.1)
    with pytest.raises(ValueError, match="not a rater"):
        ppi_report(j, "gpt", n_resamples=50)


def test_people_sample_is_the_design_ppi_reads() -> None:
    frame = _frame(share=1.0)  # people labeled everything; the design keeps 25%
    j = _judgments(frame)
    design = people_sample(j, "m1", 0.25, k=5, seed=3)
    assert set(design.columns) >= {"round", "query", "doc", "position", "for_people",
                                   "inclusion"}
    per_doc = design.groupby("doc")["for_people"].nunique()
    assert (per_doc == 1).all()  # a result shown by both systems is drawn once
    share = design.drop_duplicates("doc")["for_people"].mean()
    assert 0.15 < share < 0.35
    assert design.equals(people_sample(j, "m1", 0.25, k=5, seed=3))  # seeded
    kept = set(design.loc[design["for_people"], "doc"])
    thin = frame[(frame["rater"] != "ann") | frame["doc"].isin(kept)]
    jt = _judgments(thin)
    pi = inclusion_of(jt, design)
    shown = np.isfinite(pi)
    assert shown.any() and np.all(pi[shown] == 0.25)
    rep = ppi_report(jt, "llm", k=5, n_resamples=50, inclusion=pi)
    assert rep.design == "stated"
    assert rep.systems["n_people"].sum() == design.loc[design["for_people"]].shape[0]
    assert rep.systems["estimate"].notna().all()


def test_a_round_the_judge_did_not_label() -> None:
    one, two = _frame(seed=4), _frame(seed=5)
    two["round"] = "m2"
    two = two[two["rater"] != "llm"]  # m2: people only
    rep = ppi_report(_judgments(pd.concat([one, two])), "llm", k=5, n_resamples=50)
    m2 = rep.systems[rep.systems["round"] == "m2"]
    assert m2["model_only"].isna().all() and (m2["n_model"] == 0).all()
    assert m2["estimate"].tolist() == pytest.approx(m2["people_only"].tolist())
    pair = rep.pairs[rep.pairs["round"] == "m2"].iloc[0]
    assert pair["judge_verdict"] == "no verdict"
    assert rep.ranking["points"] == 2  # m1's two systems only


def test_planner_says_when_the_judge_is_too_weak() -> None:
    frame = _frame(share=0.3)
    rng = np.random.default_rng(0)
    noise = frame["rater"].eq("llm")
    frame.loc[noise, "label"] = rng.integers(0, 4, int(noise.sum()))  # the judge guesses
    rep = ppi_report(_judgments(frame), "llm", k=5, n_resamples=50)
    plan = rep.plan.iloc[0]
    assert bool(plan["too_weak"]) and DORNER_BOUND in plan["advice"]
    good = ppi_report(_judgments(_frame(share=0.3)), "llm", k=5, n_resamples=50).plan.iloc[0]
    assert not bool(good["too_weak"])
    # at the PPI width of now, the people alone need more labels (NaN: not even all)
    assert math.isnan(good["labels_people_only"]) or \
        good["labels_ppi"] < good["labels_people_only"]
    wide = ppi_report(_judgments(_frame(share=0.3)), "llm", k=5, n_resamples=50,
                      target_width=2 * float(rep.pairs["high"].iloc[0] - rep.pairs["low"].iloc[0]))
    assert wide.plan["labels_ppi"].iloc[0] <= wide.plan["labels_people_only"].iloc[0]


def test_cli_labels_ppi_json() -> None:
    from ireval_core.cli import main

    out = io.StringIO()
    files = [str(LABELS / "labels_2026-05.csv"), str(LABELS / "judge_llm.csv")]
    code = main(["labels", *files, "--judge", "llm", "--ppi", "--resamples", "100",
                 "--format", "json"], out=out)
    assert code == 0
    doc = json.loads(out.getvalue())["ppi"]
    first = doc["systems"][0]
    for key in ("estimate", "low", "high", "model_only", "n_people", "n_model"):
        assert key in first
    assert set(first["people_only"]) == {"estimate", "low", "high"}
    assert first["low"] < first["estimate"] < first["high"]
    # rounds the people did not label: the model's mean only
    later = [s for s in doc["systems"] if s["round"] != "2026-05"]
    assert later and all(s["estimate"] is None and s["model_only"] is not None for s in later)
    pair = next(p for p in doc["pairs"] if p["round"] == "2026-05")
    assert pair["verdict"] and set(pair["people_only"]) == {"estimate", "low", "high"}
    assert set(doc["ranking"]["kendall_tau"]) == {"value", "low", "high"}
    assert set(doc["ranking"]["tau_ap"]) == {"value", "low", "high"}


def test_cli_ppi_text_section() -> None:
    from ireval_core.cli_labels import _ppi_section

    rep = ppi_report(_judgments(_frame()), "llm", k=5, n_resamples=50)
    text = "\n".join(_ppi_section(rep))
    assert "## Model + people (PPI++)" in text and rep.memo in text
    assert "Kendall's tau-b" in text and "tau_AP" in text
    assert rep.plan["advice"].iloc[0] in text
    assert f"{rep.systems['estimate'].iloc[0]:.3f}" in text


def test_cli_ppi_needs_a_judge() -> None:
    from ireval_core.cli_labels import labels_rows

    with pytest.raises(ValueError, match="--ppi needs --judge"):
        labels_rows([str(LABELS / "labels_2026-05.csv")], ppi=True)


def _design_files(tmp_path: Path) -> tuple[Judgments, pd.DataFrame, str, str]:
    """A labeling file whose people labeled the results a seeded design drew (25%), and
    the design saved as people_sample's table (CSV): (judgments, design, paths)."""
    from ireval_core.labels import export_batch

    frame = _frame(share=1.0)
    design = people_sample(_judgments(frame), "m1", 0.25, k=5, seed=3)
    kept = set(design.loc[design["for_people"], "doc"])
    thin = frame[(frame["rater"] != "ann") | frame["doc"].isin(kept)]
    shown = thin[thin["position"].notna()][["round", "system", "query", "doc", "position"]]
    labels = thin[thin["rater"].notna()][["round", "query", "doc", "rater", "label"]]
    long = shown.merge(labels, on=["round", "query", "doc"], how="left")
    long["label"] = long["label"].astype(int)
    labels_path, design_path = tmp_path / "labels.csv", tmp_path / "design.csv"
    long.to_csv(labels_path, index=False)
    design_path.write_bytes(export_batch(design, "csv"))
    return judgments_from_frame(long), design, str(labels_path), str(design_path)


def test_cli_ppi_inclusion_is_the_stated_design(tmp_path: Path) -> None:
    from ireval_core.cli import main

    j, design, labels, path = _design_files(tmp_path)
    out = io.StringIO()
    assert main(["labels", labels, "--judge", "llm", "--ppi", "--ppi-inclusion", path,
                 "--k", "5", "--resamples", "50", "--format", "json"], out=out) == 0
    doc = json.loads(out.getvalue())["ppi"]
    want = ppi_report(j, "llm", k=5, n_resamples=50, inclusion=inclusion_of(j, design))
    assert doc["design"] == "stated" and want.design == "stated"
    got = {s["system"]: s for s in doc["systems"]}
    for rec in want.systems.itertuples():
        for col in ("estimate", "low", "high", "n_people"):
            assert got[rec.system][col] == pytest.approx(getattr(rec, col), rel=1e-12)
    parquet = tmp_path / "design.parquet"  # the same table as Parquet: the same numbers
    design.to_parquet(parquet, index=False)
    again = io.StringIO()
    assert main(["labels", labels, "--judge", "llm", "--ppi", "--ppi-inclusion", str(parquet),
                 "--k", "5", "--resamples", "50", "--format", "json"], out=again) == 0
    assert json.loads(again.getvalue())["ppi"]["systems"] == doc["systems"]
    default = ppi_report(j, "llm", k=5, n_resamples=50)  # the share labeled instead
    assert default.design == "random"
    assert list(default.systems["estimate"]) != pytest.approx(
        [got[s]["estimate"] for s in default.systems["system"]], rel=1e-9)


@pytest.mark.parametrize(("text", "line", "expected"), [
    (b"round,query,doc,pi\nm1,q1,d1_0,0.25\nm1,q1,d1_1,1.5\n", 3,
     "expected an inclusion probability in (0, 1] in column 'pi', got 1.5"),
    (b"round,query,doc,inclusion\nm1,q1,d1_0,0.25\nm1,q1,d1_0,0.5\n", 3,
     "expected one inclusion probability per result"),
    (b"round,query,doc,inclusion\nm1,q1,d1_0,\n", 2,
     "expected an inclusion probability in (0, 1] in column 'inclusion', got an empty cell"),
    (b"round,query,doc,inclusion\nm1,,d1_0,0.2\n", 2, "expected a query in column 'query'"),
    (b"round,query,doc,inclusion\nm1,q1,d1_0,lots\n", 2, "expected a number"),
    (b"round,query,doc\nm1,q1,d1_0\n", 1, "expected inclusion: one of inclusion"),
])
def test_cli_ppi_inclusion_errors_name_file_and_line(tmp_path: Path, capsys, text: bytes,
                                                     line: int, expected: str) -> None:
    from ireval_core.cli import main

    _, _, labels, _ = _design_files(tmp_path)
    bad = tmp_path / "bad design.csv"
    bad.write_bytes(text)
    code = main(["labels", labels, "--judge", "llm", "--ppi", "--ppi-inclusion", str(bad),
                 "--k", "5", "--resamples", "20"], out=io.StringIO())
    err = capsys.readouterr().err
    assert code == 2
    assert f"bad design.csv:{line}" in err and expected in err, err
    assert "Traceback" not in err


def test_cli_ppi_inclusion_refusals(tmp_path: Path, capsys) -> None:
    from ireval_core.cli import main

    j, design, labels, path = _design_files(tmp_path)
    other = tmp_path / "other.csv"
    other.write_text("round,query,doc,inclusion\nm9,q1,d1_0,0.25\n", encoding="utf-8")
    half = tmp_path / "half.csv"
    design.iloc[: len(design) // 2].to_csv(half, index=False)
    cases = [([path], "--ppi-inclusion needs --ppi"),
             ([path, "--ppi", "--ppi-design", "nonrandom"], "cannot be combined"),
             ([str(other), "--ppi"], f"--ppi-inclusion {other}: the design names none"),
             ([str(half), "--ppi"], f"--ppi-inclusion {half}: ppi_report: the design gives")]
    for extra, expected in cases:
        code = main(["labels", labels, "--judge", "llm", "--k", "5", "--resamples", "20",
                     "--ppi-inclusion", *extra], out=io.StringIO())
        err = capsys.readouterr().err
        assert code == 2 and expected in err, err
