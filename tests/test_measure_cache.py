"""Kept per-query values (MeasureCache): reused only when every option a measure reads
agrees, and otherwise computed again; never a stale number.

Every value taken from the cache is compared with a fresh ``evaluate`` without any
cache, under the same options, to the bit (NaN where NaN).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ireval_core import EvalOptions, Qrels, Run, evaluate
from ireval_core.data import join
from ireval_core.dataset import Dataset
from ireval_core.evaluate import MeasureCache, _recording
from ireval_core.measures import parse_measures
from ireval_core.measures.binary import ELEVEN_POINTS, average_precision, bpref, iprec_levels
from ireval_core.measures.gain import _dcg, discounts, gains
from ireval_core.measures.registry import Measure
from ireval_core.measures.segments import safe_div, seg_cumcount, seg_reverse_cummax, seg_sum

MEASURES = ["nDCG@10", "nDCG", "DCG@10", "nDCG(ideal=run)@10", "AP", "P@10", "P@5", "R@100",
            "RR", "bpref", "Judged@10", "RPrec", "ERR@10", "Success@1", "AP@100", "11pt",
            "P(rel=2)@5"]
LEVELS = (1.0, 2.0, 3.0, 0.0, 1.0)  # back to 1: the values kept for level 1 again


def _data(seed: int = 7, n_queries: int = 40) -> tuple[Qrels, list[Run]]:
    """Graded qrels (with pooled, unjudged -1 grades), runs with tied scores, queries
    missing on either side, and queries without any relevant document."""
    rng = np.random.default_rng(seed)
    qrels: dict[str, dict[str, int]] = {}
    for q in range(n_queries):
        if q % 9 == 4:
            continue  # a run query without qrels
        n = int(rng.integers(1, 30))
        top = 0 if q % 7 == 3 else 3  # some queries without a relevant document
        qrels[f"q{q}"] = {f"d{d}": int(rng.integers(-1, top + 1))
                          for d in rng.choice(200, n, replace=False)}
    runs = []
    for name in ("a", "b", "c"):
        ranking = {}
        for q in range(n_queries):
            if q % 11 == 5 and name != "a":
                continue  # judged queries missing from a run
            n = int(rng.integers(1, 120))
            ranking[f"q{q}"] = {f"d{d}": float(np.round(rng.random(), 1))
                                for d in rng.choice(200, n, replace=False)}
        runs.append(Run.from_dict(ranking, name=name))
    return Qrels.from_dict(qrels), runs


def _same(a, b) -> None:  # noqa: ANN001
    assert a.systems == b.systems
    assert [str(m) for m in a.measures] == [str(m) for m in b.measures]
    for key, v in b.values.items():
        np.testing.assert_array_equal(a.values[key], v, err_msg=str(key))
        assert (a.aggregates[key] == b.aggregates[key]
                or (np.isnan(a.aggregates[key]) and np.isnan(b.aggregates[key]))), key
        assert a.n_averaged[key] == b.n_averaged[key], key
    for system in b.systems:
        np.testing.assert_array_equal(a.query_ids[system], b.query_ids[system])


@pytest.mark.parametrize("base", [
    EvalOptions(),
    EvalOptions(complete=True),
    EvalOptions(depth=20, idcg_zero="drop"),
    EvalOptions(judged_only=True),
])
def test_a_level_change_gives_the_new_exact_values(base: EvalOptions) -> None:
    qrels, runs = _data()
    cache = MeasureCache()
    for level in LEVELS:
        options = EvalOptions(complete=base.complete, rel_level=level, depth=base.depth,
                              judged_only=base.judged_only, idcg_zero=base.idcg_zero)
        _same(evaluate(qrels, runs, MEASURES, options=options, values=cache),
              evaluate(qrels, runs, MEASURES, options=options))


def test_every_option_change_gives_the_new_exact_values() -> None:
    """One cache through every option, in an order that returns to earlier options."""
    qrels, runs = _data(seed=3)
    cache = MeasureCache()
    sequence = [EvalOptions(), EvalOptions(rel_level=2), EvalOptions(rel_level=2, depth=10),
                EvalOptions(rel_level=2, depth=10, idcg_zero="drop"),
                EvalOptions(idcg_zero="drop"), EvalOptions(complete=True, idcg_zero="drop"),
                EvalOptions(complete=True, judged_only=True), EvalOptions(judged_only=True),
                EvalOptions(), EvalOptions(rel_level=2)]
    for options in sequence:
        _same(evaluate(qrels, runs, MEASURES, options=options, values=cache),
              evaluate(qrels, runs, MEASURES, options=options))


def test_measures_that_do_not_read_the_level_are_not_computed_again() -> None:
    qrels, runs = _data()
    graded = ["nDCG@10", "nDCG", "DCG@10", "ERR@10", "Judged@10", "P(rel=2)@5"]
    binary = ["AP", "P@10", "RR", "bpref"]
    cache = MeasureCache()
    first = evaluate(qrels, runs, graded + binary, options=EvalOptions(), values=cache)
    assert (cache.hits, cache.misses) == (0, 3 * 10)
    second = evaluate(qrels, runs, graded + binary, options=EvalOptions(rel_level=2),
                      values=cache)
    assert (cache.hits, cache.misses) == (3 * 6, 3 * 10 + 3 * 4)
    for run in runs:
        for m in graded:  # the same arrays: taken from the cache, not recomputed
            assert second.values[(run.name, m)] is first.values[(run.name, m)]
        for m in binary:
            assert second.values[(run.name, m)] is not first.values[(run.name, m)]
    # the IDCG = 0 policy is read by nDCG only
    third = evaluate(qrels, runs, graded, options=EvalOptions(rel_level=2, idcg_zero="drop"),
                     values=cache)
    for run in runs:
        assert third.values[(run.name, "DCG@10")] is first.values[(run.name, "DCG@10")]
        assert third.values[(run.name, "nDCG@10")] is not first.values[(run.name, "nDCG@10")]
    assert np.isnan(third.values[("a", "nDCG@10")]).any()  # queries without relevant: dropped
    assert not np.isnan(first.values[("a", "nDCG@10")]).any()


def test_the_options_note_what_is_read() -> None:
    rec = _recording(EvalOptions(rel_level=2))
    assert rec.rel_level == 2.0 and rec._reads == {"rel_level"}
    rec = _recording(EvalOptions())
    assert rec == EvalOptions() and EvalOptions() == rec  # a comparison reads every field
    assert hash(rec) == hash(EvalOptions())
    assert rec._reads == {"complete", "rel_level", "depth", "judged_only", "idcg_zero",
                          "trec_eval"}
    rec = _recording(EvalOptions())
    m = parse_measures("P(rel=2)@5")[0]
    assert m.threshold(rec) == 2.0 and rec._reads == set()  # its own level, not the options'


def test_a_small_bound_drops_old_values_and_stays_exact() -> None:
    qrels, runs = _data()
    cache = MeasureCache(max_bytes=2_000)  # a few arrays of 40 queries
    for level in LEVELS:
        options = EvalOptions(rel_level=level)
        _same(evaluate(qrels, runs, MEASURES, options=options, values=cache),
              evaluate(qrels, runs, MEASURES, options=options))
    assert cache.nbytes <= 2_000 or len(cache) == 1


def test_another_run_object_with_the_same_name_is_not_confused() -> None:
    qrels, runs = _data()
    other_qrels, other_runs = _data(seed=11)
    cache = MeasureCache()
    evaluate(qrels, runs, ["AP", "nDCG"], values=cache)
    _same(evaluate(other_qrels, other_runs, ["AP", "nDCG"], values=cache),
          evaluate(other_qrels, other_runs, ["AP", "nDCG"]))
    _same(evaluate(qrels, other_runs, ["AP", "nDCG"], values=cache),
          evaluate(qrels, other_runs, ["AP", "nDCG"]))


def test_threads_evaluating_at_once_compute_each_value_once() -> None:
    qrels, runs = _data(n_queries=300)
    ds = Dataset(qrels, tuple(runs))
    options = EvalOptions(rel_level=2)
    results = []
    threads = [threading.Thread(target=lambda: results.append(ds.evaluate(MEASURES, options)))
               for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = evaluate(qrels, runs, MEASURES, options=options)
    for res in results:
        _same(res, expected)
    assert ds.values.misses == len(runs) * len(MEASURES)


def test_prefetch_evaluates_in_the_background_once() -> None:
    qrels, runs = _data()
    ds = Dataset(qrels, tuple(runs))
    options = EvalOptions(rel_level=2, depth=50)
    thread = ds.prefetch(options, ["AP", "nDCG@10"])
    assert thread is not None
    thread.join()
    assert ds.values.misses == 2 * len(runs)
    assert ds.prefetch(options, ["AP", "nDCG@10"]) is None  # asked before: no new thread
    _same(ds.evaluate(["AP", "nDCG@10"], options),
          evaluate(qrels, runs, ["AP", "nDCG@10"], options=options))
    assert ds.values.misses == 2 * len(runs)  # everything came from the prefetch
    ds.prefetch(options, ["no-such-measure"]).join()  # errors are left to the page


def _iprec_every_row(r, m, o, levels):  # noqa: ANN001, ANN202
    """The running maximum over every row (the implementation before the speed work)."""
    rel = r.grade >= m.threshold(o)
    n_rel = r.n_relevant(m.threshold(o))
    hits = seg_cumcount(rel, r.offsets, r.qidx)
    prec = hits / np.maximum(r.pos, 1)
    best_below = seg_reverse_cummax(prec, r.qidx, r.n_queries)
    rel_rows = np.flatnonzero(rel)
    rel_start = np.concatenate(([0], np.cumsum(np.bincount(r.qidx[rel_rows],
                                                           minlength=r.n_queries))))
    n_rel_ret = np.diff(rel_start)
    need = np.maximum((levels[None, :] * n_rel[:, None] + 0.9).astype(np.int64), 1)
    ok = (need <= n_rel_ret[:, None]) & (n_rel_ret[:, None] > 0)
    out = np.zeros(need.shape)
    idx = rel_start[:-1, None] + need - 1
    out[ok] = best_below[rel_rows[idx[ok]]]
    # the undefined levels (trec_eval's 0 / 0): those needing no relevant document of a
    # ranking that is empty (-J left no judged document), as the kernel states them
    empty = (r.n_retrieved == 0) & (r.in_run | ((o.trec_eval == "10.0") & o.judged_only))
    cut = (levels[None, :] * n_rel[:, None] + 0.9).astype(np.int64)
    out[empty[:, None] & (cut == 0)] = np.nan
    return out


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(rel_level=2),
                                     EvalOptions(judged_only=True), EvalOptions(depth=7)])
def test_interpolated_precision_over_relevant_rows_equals_every_row(
        seed: int, options: EvalOptions) -> None:
    qrels, runs = _data(seed=seed)
    levels = np.concatenate((ELEVEN_POINTS, [0.05, 0.33, 0.999]))
    for run in runs:
        r = join(qrels, run, options=options)
        m = Measure("11pt")
        np.testing.assert_array_equal(iprec_levels(r, m, options, levels),
                                      _iprec_every_row(r, m, options, levels))


# ----------------------------------------------------------------------------- kernels over
# fewer rows: the implementations before the speed work, kept here, must give the same bits


def _ap_every_row(r, m, o):  # noqa: ANN001, ANN202
    rel = r.grade >= m.threshold(o)
    top = None if m.cutoff is None else r.pos <= m.k
    hits = rel if top is None else rel & top
    prec = seg_cumcount(rel, r.offsets, r.qidx) / r.pos
    return safe_div(seg_sum(np.where(hits, prec, 0.0), r.qidx, r.n_queries),
                    r.n_relevant(m.threshold(o)))


def _bpref_every_row(r, m, o):  # noqa: ANN001, ANN202
    t = m.threshold(o)
    rel = r.grade >= t
    nonrel = (r.grade >= 0) & (r.grade < t)
    above = seg_cumcount(nonrel, r.offsets, r.qidx)
    n_rel = r.n_relevant(t)
    denom = n_rel if m.get("form") == "original" else np.minimum(r.n_nonrelevant(t), n_rel)
    q = r.qidx
    term = 1.0 - safe_div(np.minimum(above, n_rel[q]), denom[q])
    term = np.where(above > 0, term, 1.0)
    return safe_div(seg_sum(np.where(rel, term, 0.0), q, r.n_queries), n_rel)


def _dcg_every_row(r, m):  # noqa: ANN001, ANN202
    w = gains(r.grade, str(m.get("gain"))) * discounts(r.pos, str(m.get("discount")))
    if m.cutoff is not None:
        w = np.where(r.pos <= m.k, w, 0.0)
    return seg_sum(w, r.qidx, r.n_queries)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(rel_level=2),
                                     EvalOptions(rel_level=0), EvalOptions(judged_only=True),
                                     EvalOptions(depth=7, complete=True)])
def test_kernels_over_fewer_rows_give_the_same_bits(seed: int, options: EvalOptions) -> None:
    qrels, runs = _data(seed=seed)
    for run in runs:
        r = join(qrels, run, options=options)
        for spec in ("AP", "AP@5", "AP@100", "MAP(rel=2)@10"):
            m = parse_measures(spec)[0]
            np.testing.assert_array_equal(average_precision(r, m, options),
                                          _ap_every_row(r, m, options), err_msg=spec)
        for spec in ("bpref", "bpref(form=original)", "bpref(rel=2)"):
            m = parse_measures(spec)[0]
            np.testing.assert_array_equal(bpref(r, m, options),
                                          _bpref_every_row(r, m, options), err_msg=spec)
        for spec in ("DCG@10", "DCG@1", "DCG(gain=exp)@5", "DCG(discount=jk)@6", "DCG",
                     "DCG(gain={1:0.5,2:3,3:-1})@10"):
            m = parse_measures(spec)[0]
            np.testing.assert_array_equal(_dcg(r, m), _dcg_every_row(r, m), err_msg=spec)


def _idcg_run_every_row(r, m):  # noqa: ANN001, ANN202
    """The run-ideal IDCG as it was: every row of the run sorted by gain (lexsort)."""
    g = gains(r.grade, str(m.get("gain")))
    g = g[np.lexsort((-g, r.qidx))]
    pos = np.arange(len(g), dtype=np.int64) - r.offsets[r.qidx] + 1
    w = g * discounts(pos, str(m.get("discount")))
    if m.cutoff is not None:
        w = np.where(pos <= m.k, w, 0.0)
    return seg_sum(w, r.qidx, r.n_queries)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(judged_only=True),
                                     EvalOptions(depth=7, complete=True)])
def test_run_ideal_sorts_only_positive_gains_and_gives_the_same_bits(
        seed: int, options: EvalOptions) -> None:
    from ireval_core.measures.gain import ideal_dcg

    qrels, runs = _data(seed=seed)
    for run in runs:
        r = join(qrels, run, options=options)
        for spec in ("nDCG(ideal=run)@10", "nDCG(ideal=run)", "nDCG(gain=exp,ideal=run)@5",
                     "nDCG(ideal=run,discount=jk)@3",
                     "nDCG(gain={0:0,1:1.5,2:0.25,3:10},ideal=run)@10"):
            m = parse_measures(spec)[0]
            np.testing.assert_array_equal(ideal_dcg(r, m), _idcg_run_every_row(r, m),
                                          err_msg=spec)
