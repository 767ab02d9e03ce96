"""The faster kernels of issue 19 give the same bits as the kernels they replaced.

infAP, bpref (so gm_bpref), Rprec / Rprec_mult, ``Ranked.n_relevant`` /
``n_nonrelevant``, the per-query running sum under G, ndcg_rel and Rndcg, CG, DCG,
nDCG (its IDCG), ERR and Accuracy, a gain map's lookup, the running maximum under IPrec
and 11pt, and AUC's counts were rewritten for speed (``benchmarks/bench_kernels.py``). The replaced
code is kept below, as it was, and compared with ``np.array_equal`` (not within a
tolerance) on the random data sets of the trec_eval 10.0 oracle (ties, grades -2..4,
short rankings, queries without relevant documents) under several options and
thresholds, and on a larger generated join; G and ndcg_rel (IPrec, 11pt) are computed
with the old helpers (running sum and ideal; running maximum) swapped in and compared
whole.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_oracle_trec_eval_10 import dataset

from ireval_core import EvalOptions, Qrels, Run, parse_measure
from ireval_core.data import Ranked, descending_within, join
from ireval_core.measures import binary, longtail, pairwise
from ireval_core.measures.binary import group_starts, nonrelevant_mask, relevant_mask
from ireval_core.measures.gain import discounts, err_reach, err_stop, gains, max_grade
from ireval_core.measures.registry import Measure
from ireval_core.measures.segments import (
    safe_div,
    seg_count,
    seg_reverse_cummax,
    seg_sum,
)

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


def old_dcg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    if m.cutoff is not None:
        rows = np.flatnonzero(r.pos <= m.k)
        w = gains(r.grade[rows], str(m.get("gain"))) * discounts(r.pos[rows],
                                                                 str(m.get("discount")))
        return seg_sum(w, r.qidx[rows], r.n_queries)
    w = gains(r.grade, str(m.get("gain"))) * discounts(r.pos, str(m.get("discount")))
    return seg_sum(w, r.qidx, r.n_queries)


def old_cg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    g = gains(r.grade, str(m.get("gain")))
    if m.cutoff is not None:
        g = np.where(r.pos <= m.k, g, 0.0)
    return seg_sum(g, r.qidx, r.n_queries)


def old_ideal_dcg(r: Ranked, m: Measure) -> np.ndarray:
    gain, disc = str(m.get("gain")), str(m.get("discount"))
    if m.get("ideal") == "run":
        g = gains(r.grade, gain)
        rows = np.flatnonzero(g > 0)
        qidx = r.qidx[rows]
        g = descending_within(g[rows], qidx)
        offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
        np.cumsum(np.bincount(qidx, minlength=r.n_queries), out=offsets[1:])
    else:
        g = gains(r.ideal_grade, gain)
        if gain not in ("linear", "exp"):
            g = g[np.lexsort((-g, r.ideal_qidx))]
        qidx, offsets = r.ideal_qidx, r.ideal_offsets
    pos = np.arange(len(g), dtype=np.int64) - offsets[qidx] + 1
    w = g * discounts(pos, disc)
    if m.cutoff is not None:
        w = np.where(pos <= m.k, w, 0.0)
    return seg_sum(w, qidx, r.n_queries)


def old_ndcg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    return safe_div(old_dcg(r, m, o), old_ideal_dcg(r, m),
                    fill=0.0 if o.idcg_zero == "zero" else np.nan)


def old_err(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    stop = err_stop(r.grade, max_grade(r, m))
    if m.cutoff is not None:
        stop = np.where(r.pos <= m.k, stop, 0.0)
    reach = err_reach(stop, r.qidx, r.offsets)
    return seg_sum(reach * stop / r.pos, r.qidx, r.n_queries)


def old_gains(grade: np.ndarray, spec: str) -> np.ndarray:
    g = np.where(np.isnan(grade), 0.0, grade)
    g = np.maximum(g, 0.0)
    if spec == "linear":
        return g
    if spec == "exp":
        return np.exp2(g) - 1.0
    table = dict(
        (float(a), float(b)) for a, b in (item.split(":") for item in spec[1:-1].split(","))
    )
    keys = np.array(sorted(table), dtype=np.float64)
    vals = np.array([table[k] for k in keys], dtype=np.float64)
    idx = np.clip(np.searchsorted(keys, g), 0, len(keys) - 1)
    out = np.where(keys[idx] == g, vals[idx], 0.0)
    return np.where(g > 0, out, 0.0)


def old_positive_ideal(r: Ranked, spec: str = "linear"
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    keep = np.flatnonzero(r.ideal_grade > 0)
    g, q = r.ideal_grade[keep], r.ideal_qidx[keep]
    if spec != "linear":
        g = gains(g, spec)
        keep = np.flatnonzero(g > 0)
        g, q = g[keep], q[keep]
    if spec not in ("linear", "exp"):
        order = np.lexsort((-g, q))
        g, q = g[order], q[order]
    n_pos = np.bincount(q, minlength=r.n_queries)
    pos = np.arange(len(g), dtype=np.int64) - group_starts(q, r.n_queries)[q] + 1
    return g, q, pos, n_pos


def old_rndcg(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    rows, q, dcg_at, idcg_cum, iq, n_pos, idcg, ig = longtail._dcg_parts(r, str(m.get("gain")))
    n = r.n_queries
    change = np.ones(len(ig), dtype=bool)
    change[:-1] = (iq[1:] != iq[:-1]) | (ig[1:] != ig[:-1])
    cq = iq[change]
    c = (np.arange(len(ig), dtype=np.int64) - group_starts(iq, n)[iq] + 1)[change]
    upto = np.minimum(c, r.n_retrieved[cq])
    width = int(r.pos.max()) + 2 if r.pos.size else 2
    keys = q.astype(np.int64) * width + r.pos[rows]
    at = np.searchsorted(keys, cq.astype(np.int64) * width + upto, side="right") - 1
    hit = at >= 0
    hit[hit] = q[at[hit]] == cq[hit]
    dcg_c = np.zeros(len(at))
    dcg_c[hit] = dcg_at[at[hit]]
    points = seg_sum(dcg_c / idcg_cum[change], cq, n)
    count = np.bincount(cq, minlength=n).astype(np.float64)
    dcg = np.zeros(n)
    last = np.flatnonzero(np.append(q[1:] != q[:-1], True)) if q.size else q
    dcg[q[last]] = dcg_at[last]
    extra = (r.n_retrieved > n_pos + 1) & (idcg > 0)
    points = points + np.where(extra, safe_div(dcg, idcg), 0.0)
    count = count + extra
    with np.errstate(invalid="ignore", divide="ignore"):
        value = points / count
    return np.where(old_n_relevant(r, m.threshold(o)) > 0, value, 0.0)


def old_auc_counts(qidx: np.ndarray, score: np.ndarray, positive: np.ndarray,
                   n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    positive = np.asarray(positive, dtype=bool)
    if len(qidx) == 0:
        z = np.zeros(n)
        return z, z.copy(), z.copy()
    gid, start = pairwise.tie_groups(qidx, score)
    ng = int(gid[-1]) + 1
    gq = qidx[start]
    pos_g = np.bincount(gid[positive], minlength=ng)
    neg_g = np.bincount(gid[~positive], minlength=ng)
    n_pos = np.bincount(qidx[positive], minlength=n).astype(np.float64)
    n_neg = np.bincount(qidx[~positive], minlength=n)
    neg_below = n_neg[gq] - pairwise._within_query_cumsum(neg_g, gq, n)
    twice_u = np.bincount(gq, weights=pos_g * (2 * neg_below + neg_g), minlength=n)
    return twice_u, n_pos, n_neg.astype(np.float64)


def old_seg_reverse_cummax(values: np.ndarray, qidx: np.ndarray, n: int) -> np.ndarray:
    if values.size == 0:
        return values.copy()
    distinct, rank = np.unique(values, return_inverse=True)
    rev_q = np.asarray(qidx[::-1], dtype=np.int64)
    lift = (rev_q.max() - rev_q) * len(distinct)
    running = np.maximum.accumulate(rank.reshape(-1)[::-1].astype(np.int64) + lift) - lift
    return distinct[running][::-1]


def old_accuracy(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    t = m.threshold(o)
    top = None if m.cutoff is None else r.pos <= m.k
    rel, non = relevant_mask(r, m, o), nonrelevant_mask(r, m, o)
    tp = seg_count(rel if top is None else rel & top, r.qidx, r.n_queries)
    fp = seg_count(non if top is None else non & top, r.qidx, r.n_queries)
    n_rel, n_non = old_n_relevant(r, t), old_n_nonrelevant(r, t)
    return safe_div(tp + (n_non - fp), n_rel + n_non)


OLD = {"Accuracy": old_accuracy, "infAP": old_inf_ap, "bpref": old_bpref,
       "Rprec": old_r_precision, "CG": old_cg, "DCG": old_dcg, "nDCG": old_ndcg, "ERR": old_err}

# ----------------------------------------------------------------------------- the data

OPTIONS = [EvalOptions(), EvalOptions(rel_level=2), EvalOptions(complete=True, idcg_zero="drop"),
           EvalOptions(judged_only=True), EvalOptions(depth=5, trec_eval="10.0")]
SPECS = ["infAP", "infAP(rel=0)", "infAP(rel=3)", "bpref", "bpref(form=original)",
         "bpref(rel=0)", "bpref(rel=-1)", "GMbpref", "Rprec", "Rprec(mult=0.2)",
         "Rprec(mult=3)", "Rprec(rel=2)", "CG", "CG@5", "CG(gain={1:-1,3:2.5})@3",
         "DCG", "DCG(gain=exp,discount=jk)@3", "DCG(gain={2:0.7,4:9})", "nDCG", "nDCG@5",
         "nDCG(gain=exp)@10", "nDCG(gain={1:-1,2:0,3:4.5})", "nDCG(ideal=run,discount=jk)@4",
         "ERR", "ERR@3", "ERR(max_grade=2)@10", "Accuracy", "Accuracy@5",
         "Accuracy(rel=0)@3", "Accuracy(rel=-1)"]
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
def test_gain_kernels_give_the_old_bits(spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """G and ndcg_rel with the old running sum and ideal swapped in; Rndcg the old whole."""
    m = parse_measure(spec)
    new = [m.family.kernel(r, m, o) for _, r, o in JOINS]
    monkeypatch.setattr(longtail, "_seg_cumsum", old_seg_cumsum)
    monkeypatch.setattr(longtail, "_positive_ideal", old_positive_ideal)
    old = old_rndcg if m.name == "RnDCG" else m.family.kernel
    for (label, r, o), value in zip(JOINS, new, strict=True):
        assert same(value, old(r, m, o)), (spec, label)


@pytest.mark.parametrize("spec", ["IPrec@0", "IPrec@0.5", "IPrec(rel=2)@1", "11pt",
                                  "11pt(levels={0.25,0.5,0.75})"])
def test_interpolated_precision_gives_the_bits_of_the_old_running_maximum(
        spec: str, monkeypatch: pytest.MonkeyPatch) -> None:
    m = parse_measure(spec)
    new = [m.family.kernel(r, m, o) for _, r, o in JOINS]
    monkeypatch.setattr(binary, "seg_reverse_cummax", old_seg_reverse_cummax)
    for (label, r, o), value in zip(JOINS, new, strict=True):
        assert same(value, m.family.kernel(r, m, o)), (spec, label)


@pytest.mark.parametrize("spec", ["linear", "exp", "{1:3,2:9}", "{-1:5,0:2,1.5:-0.5,4:7}",
                                  "{0.5:1,3:2.25}"])
def test_gains_give_the_old_bits(spec: str) -> None:
    grade = np.array([np.nan, -2.0, -1.0, 0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, np.inf])
    assert same(gains(grade, spec), old_gains(grade, spec))
    for _, r, _ in JOINS[-3:]:
        assert same(gains(r.grade, spec), old_gains(r.grade, spec))


def test_auc_counts_give_the_old_bits() -> None:
    for label, r, _ in JOINS:
        for t in (0.0, 1.0, 2.0):
            rows = np.flatnonzero(r.grade >= 0)
            args = (r.qidx[rows], r.score[rows], r.grade[rows] >= t, r.n_queries)
            for new, old in zip(pairwise.auc_counts(*args), old_auc_counts(*args), strict=True):
                assert new.dtype == old.dtype and same(new, old), (label, t)


@pytest.mark.parametrize("shape", ["even", "one long query", "singletons", "whole numbers"])
def test_running_sum_paths_give_the_old_bits(shape: str) -> None:
    """Each path of ``_seg_cumsum`` (whole numbers, the grid, the shrinking passes) and of
    ``seg_reverse_cummax`` (the grid, the ranks of the values)."""
    rng = np.random.default_rng(len(shape))
    lengths = {"even": rng.integers(1, 90, 400), "one long query": np.r_[5_000, np.ones(50, int)],
               "singletons": np.ones(30, int), "whole numbers": rng.integers(1, 300, 200)}[shape]
    n = len(lengths) + 3  # some queries without values
    q = np.repeat(np.sort(rng.choice(n, len(lengths), replace=False)), lengths)
    values = rng.random(len(q)) * 10 / np.log2(rng.integers(2, 1_000, len(q)))
    if shape == "whole numbers":
        values = np.floor(values * 100)
    assert same(longtail._seg_cumsum(values, q, n), old_seg_cumsum(values, q, n))
    assert same(seg_reverse_cummax(values, q, n), old_seg_reverse_cummax(values, q, n))
