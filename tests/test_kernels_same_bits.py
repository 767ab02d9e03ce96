"""The faster kernels of issue 19 give the same bits as the kernels they replaced.

infAP, bpref (so gm_bpref), Rprec / Rprec_mult, ``Ranked.n_relevant`` /
``n_nonrelevant`` and the per-query running sum under G, ndcg_rel and Rndcg were rewritten
for speed (``benchmarks/bench_kernels.py``). The replaced code is kept below, as it was,
and compared with ``np.array_equal`` (not within a tolerance) on the random data sets of
the trec_eval 10.0 oracle (ties, grades -2..4, short rankings, queries without relevant
documents) under several options and thresholds, and on a larger generated join; G,
ndcg_rel and Rndcg are computed with the old running sum swapped in and compared whole.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_oracle_trec_eval_10 import dataset

from ireval_core import EvalOptions, Qrels, Run, parse_measure
from ireval_core.data import Ranked, join
from ireval_core.measures import longtail
from ireval_core.measures._segments import safe_div, seg_count, seg_sum
from ireval_core.measures.binary import group_starts, nonrelevant_mask, relevant_mask
from ireval_core.measures.registry import Measure

# ----------------------------------------------------------------------------- the old code


def old_n_relevant(r: Ranked, threshold: float) -> np.ndarray:
    return np.bincount(r.ideal_qidx, weights=r.ideal_grade >= threshold,
                       minlength=r.n_queries)


def old_n_nonrelevant(r: Ranked, threshold: float) -> np.ndarray:
    g = r.ideal_grade
    return np.bincount(r.ideal_qidx, weights=(g >= 0) & (g < threshold), minlength=r.n_queries)


def old_r_precision(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    n_rel = old_n_relevant(r, m.threshold(o))
    cut = (m.number("mult") * n_rel + 0.9).astype(np.int64)
    within = r.pos <= cut[r.qidx]
    return safe_div(seg_count(relevant_mask(r, m, o) & within, r.qidx, r.n_queries), cut)


def old_bpref(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    t = m.threshold(o)
    rows = np.flatnonzero(relevant_mask(r, m, o))
    nonrel_rows = np.flatnonzero(nonrelevant_mask(r, m, o))
    q = r.qidx[rows]
    above = (np.searchsorted(nonrel_rows, rows)
             - np.searchsorted(nonrel_rows, r.offsets[:-1])[q]).astype(np.int64)
    n_rel = old_n_relevant(r, t)
    if m.get("form") == "original":
        denom = n_rel
    else:
        denom = np.minimum(old_n_nonrelevant(r, t), n_rel)
    term = 1.0 - safe_div(np.minimum(above, n_rel[q]), denom[q])
    term = np.where(above > 0, term, 1.0)
    return safe_div(seg_sum(term, q, r.n_queries), n_rel)


def old_inf_ap(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    rows = np.flatnonzero(relevant_mask(r, m, o))
    if not rows.size:
        return np.zeros(r.n_queries)
    q = r.qidx[rows]
    start = r.offsets[:-1][q]

    def above(kind: np.ndarray) -> np.ndarray:
        running = np.zeros(len(kind) + 1, dtype=np.int64)
        np.cumsum(kind, out=running[1:])
        return (running[rows] - running[start]).astype(np.float64)

    rel_above = (np.arange(len(rows), dtype=np.int64) - group_starts(q, r.n_queries)[q]
                 ).astype(np.float64)
    pooled_above = above(~np.isnan(r.grade))
    nonrel_above = above(nonrelevant_mask(r, m, o))
    j = (r.pos[rows] - 1).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        later = (1.0 / (j + 1.0) + (j / (j + 1.0)) * (pooled_above / j)
                 * ((rel_above + longtail.INFAP_EPSILON)
                    / (rel_above + nonrel_above + 2 * longtail.INFAP_EPSILON)))
    term = np.where(j == 0, 1.0, later)
    return safe_div(seg_sum(term, q, r.n_queries), old_n_relevant(r, m.threshold(o)))


def old_seg_cumsum(values: np.ndarray, q: np.ndarray, n: int) -> np.ndarray:
    out = np.asarray(values, dtype=np.float64).copy()
    idx = np.arange(len(out), dtype=np.int64)
    start = group_starts(q, n)[q]
    step = 1
    while True:
        take = np.flatnonzero(idx - step >= start)
        if not take.size:
            return out
        added = out[take] + out[take - step]
        out[take] = added
        step *= 2


OLD = {"infAP": old_inf_ap, "bpref": old_bpref, "Rprec": old_r_precision}

# ----------------------------------------------------------------------------- the data

OPTIONS = [EvalOptions(), EvalOptions(rel_level=2), EvalOptions(complete=True),
           EvalOptions(judged_only=True), EvalOptions(depth=5, trec_eval="10.0")]
SPECS = ["infAP", "infAP(rel=0)", "infAP(rel=3)", "bpref", "bpref(form=original)",
         "bpref(rel=0)", "bpref(rel=-1)", "GMbpref", "Rprec", "Rprec(mult=0.2)",
         "Rprec(mult=3)", "Rprec(rel=2)"]
GAINS = ["G", "nDCGRel", "RnDCG", "G(gain=exp)", "nDCGRel(gain={1:0.5,2:2.25,4:3.1})",
         "RnDCG(gain={1:3,2:9})", "G(gain={1:0.3,3:7.7})", "RnDCG(rel=2,gain=exp)"]


def joins() -> list[tuple[str, Ranked, EvalOptions]]:
    out = []
    for seed in range(12):
        qrels, run_ = dataset(seed)
        q, r = Qrels.from_dict(qrels), Run.from_dict(run_, name="sys")
        out += [(f"seed {seed} {o}", join(q, r, options=o), o) for o in OPTIONS]
    out.append(("generated", *big_join()))
    return out


def big_join() -> tuple[Ranked, EvalOptions]:
    """300 queries of skewed lengths (one of 3,000 ranks), fractional grades among them."""
    rng = np.random.default_rng(19)
    qrels: dict[str, dict[str, float]] = {}
    run_: dict[str, dict[str, float]] = {}
    for i in range(300):
        n = 3_000 if i == 7 else int(rng.integers(1, 200))
        docs = [f"d{j}" for j in rng.choice(20_000, n + 50, replace=False)]
        grades = rng.choice([-2.0, -1.0, 0.0, 0.0, 1.0, 1.5, 2.0, 3.0], size=n + 50)
        judged = rng.random(n + 50) < 0.6
        qrels[f"q{i}"] = {d: float(g) for d, g, j in zip(docs, grades, judged, strict=True) if j}
        run_[f"q{i}"] = {d: float(s) for d, s in zip(docs[:n], np.round(rng.random(n), 2),
                                                     strict=True)}
    o = EvalOptions()
    return join(Qrels.from_dict(qrels), Run.from_dict(run_, name="big"), options=o), o


JOINS = joins()


def same(a: np.ndarray, b: np.ndarray) -> bool:
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)


# ----------------------------------------------------------------------------- the tests


@pytest.mark.parametrize("spec", SPECS)
def test_rewritten_kernels_give_the_old_bits(spec: str) -> None:
    m = parse_measure(spec)
    old = OLD["bpref" if m.name == "GMbpref" else m.name]
    for label, r, o in JOINS:
        assert same(m.family.kernel(r, m, o), old(r, m, o)), (spec, label)


def test_counts_of_relevant_and_non_relevant_give_the_old_bits() -> None:
    for label, r, _ in JOINS:
        for t in (-1.0, 0.0, 1.0, 1.5, 2.0, 5.0):
            assert r.n_relevant(t).dtype == np.float64
            assert same(r.n_relevant(t), old_n_relevant(r, t)), (label, t)
            assert same(r.n_nonrelevant(t), old_n_nonrelevant(r, t)), (label, t)


@pytest.mark.parametrize("spec", GAINS)
def test_gain_kernels_give_the_bits_of_the_old_running_sum(spec: str,
                                                           monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    m = parse_measure(spec)
    new = [m.family.kernel(r, m, o) for _, r, o in JOINS]
    monkeypatch.setattr(longtail, "_seg_cumsum", old_seg_cumsum)
    for (label, r, o), value in zip(JOINS, new, strict=True):
        assert same(value, m.family.kernel(r, m, o)), (spec, label)


@pytest.mark.parametrize("shape", ["even", "one long query", "singletons", "whole numbers"])
def test_running_sum_paths_give_the_old_bits(shape: str) -> None:
    """Each path of ``_seg_cumsum`` (whole numbers, the grid, the shrinking passes)."""
    rng = np.random.default_rng(len(shape))
    lengths = {"even": rng.integers(1, 90, 400), "one long query": np.r_[5_000, np.ones(50, int)],
               "singletons": np.ones(30, int), "whole numbers": rng.integers(1, 300, 200)}[shape]
    n = len(lengths) + 3  # some queries without values
    q = np.repeat(np.sort(rng.choice(n, len(lengths), replace=False)), lengths)
    values = rng.random(len(q)) * 10 / np.log2(rng.integers(2, 1_000, len(q)))
    if shape == "whole numbers":
        values = np.floor(values * 100)
    assert same(longtail._seg_cumsum(values, q, n), old_seg_cumsum(values, q, n))
