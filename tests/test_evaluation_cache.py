"""Evaluations kept in the parsed-column cache (:func:`ireval_core.evaluate.store_evaluation`)
never change a number.

An evaluation mapped from its entry holds the computed per-query values, aggregates and
counts bit for bit, on every measure family the Metrics page offers, every id shape and the
options that change numbers; an entry that is truncated, corrupted, of another code version
or of another evaluation is dropped with a log line and computed again; writers of the
same entry at once leave a whole one; the bound evicts evaluation entries like the others.
"""

from __future__ import annotations

import importlib
import logging
import os
import struct
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from test_id_shapes import make_data

from ireval_core import Qrels, Run, evaluate, read_runs
from ireval_core.evaluate import (
    Evaluation,
    cached_evaluation,
    evaluation_key,
    store_evaluation,
)
from ireval_core.io.column_cache import CacheSettings, ColumnCache
from ireval_core.measures import families
from ireval_core.options import EvalOptions

# The Metrics page's measures (its defaults and its longer list), then one spec of every
# family evaluated from qrels (the page's "more measures" field takes any of them).
PAGE = ["nDCG@10", "AP", "P@10", "R@100", "RR", "bpref", "Judged@10", "nDCG@20", "nDCG",
        "DCG@10", "nDCG(ideal=run)@10", "P@5", "P@20", "R@10", "R@1000", "RPrec", "ERR@10",
        "Success@1", "Success@10", "AP@100", "11pt"]
NEEDS_CUTOFF = {"IPrec": "IPrec@0.5", "Unjudged": "Unjudged@10"}
MEASURES = PAGE + [NEEDS_CUTOFF.get(f, f) for f in families("qrels") if f not in PAGE]
evaluate_module = importlib.import_module("ireval_core.evaluate")
OPTIONS = [EvalOptions(),
           EvalOptions(complete=True, rel_level=2.0, depth=10, judged_only=True,
                       idcg_zero="drop", trec_eval="10.0")]


def _cache(tmp_path: Path, max_bytes: int = 1 << 30) -> ColumnCache:
    return ColumnCache(CacheSettings(tmp_path / "cache", max_bytes))


def _data(shape: str, seed: int = 0) -> tuple[Qrels, list[Run]]:
    qrels, run = make_data(shape, seed, 60)
    other = {q: {d: s * 0.5 + (hash(d) % 3) for d, s in docs.items()}
             for q, docs in run.items()}
    return Qrels.from_dict(qrels), [Run.from_dict(run, name="bm25"),
                                    Run.from_dict(other, name="dense")]


def _bits(x: float) -> bytes:
    return struct.pack("<d", x)


def _same(a: Evaluation, b: Evaluation) -> None:
    """``b`` holds ``a``'s numbers bit for bit (NaN where NaN), ids and counts."""
    assert b.systems == a.systems and b.measures == a.measures and b.options == a.options
    assert set(b.values) == set(a.values)
    for s in a.systems:
        assert b.query_ids[s].dtype == a.query_ids[s].dtype
        assert list(b.query_ids[s]) == list(a.query_ids[s])
        assert list(b.answered[s]) == list(a.answered[s])
    for k, v in a.values.items():
        got = b.values[k]
        assert got.dtype == np.float64 and not got.flags.writeable
        assert got.tobytes() == np.ascontiguousarray(v, dtype=np.float64).tobytes(), k
        assert _bits(b.aggregates[k]) == _bits(a.aggregates[k]), k
        assert b.n_averaged[k] == a.n_averaged[k], k
    assert b.table().equals(a.table())


@pytest.mark.parametrize("shape", ["msmarco", "prefixed", "uuid", "mixed"])
def test_a_kept_evaluation_gives_the_computed_bits(tmp_path: Path, shape: str) -> None:
    qrels, runs = _data(shape)
    cache = _cache(tmp_path)
    for options in OPTIONS:
        computed = evaluate(qrels, runs, MEASURES, options=options)
        key = evaluation_key("content", MEASURES, options)
        assert cached_evaluation(cache, key, runs, MEASURES, options) is None
        store_evaluation(cache, key, computed)
        got = cached_evaluation(cache, key, runs, MEASURES, options)
        assert got is not None
        _same(computed, got)
    assert cache.hits == len(OPTIONS) and cache.dropped == 0


def test_the_key_holds_everything_that_changes_a_number() -> None:
    base = evaluation_key("c", ["AP"], EvalOptions())
    others = [evaluation_key("d", ["AP"], EvalOptions()),
              evaluation_key("c", ["AP", "P@10"], EvalOptions()),
              evaluation_key("c", ["P@10", "AP"], EvalOptions())]
    for field, value in (("complete", True), ("rel_level", 2.0), ("depth", 5),
                         ("judged_only", True), ("idcg_zero", "drop"),
                         ("trec_eval", "10.0")):
        others.append(evaluation_key("c", ["AP"], EvalOptions(**{field: value})))
    assert len({base, *others}) == len(others) + 1
    assert base == evaluation_key("c", ["AP"], EvalOptions())
    assert base.startswith("eval-")


def _entries(cache: ColumnCache, prefix: str = "eval-") -> list[Path]:
    return sorted(cache.directory.glob(f"{prefix}*.arrow"))


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign-code", "other-entry",
                                    "other-runs"])
def test_a_bad_entry_is_dropped_and_computed_again(
        tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    qrels, runs = _data("uuid")
    cache = _cache(tmp_path)
    measures = ["AP", "nDCG@10", "GMAP"]
    computed = evaluate(qrels, runs, measures)
    key = evaluation_key("content", measures, EvalOptions())
    if damage == "foreign-code":  # what another code version wrote, under this name
        monkeypatch.setattr(evaluate_module, "_CODE_VERSION", "0" * 64)
        foreign_key = evaluation_key("content", measures, EvalOptions())
        monkeypatch.undo()
        store_evaluation(cache, foreign_key, computed)
        (older,) = _entries(cache)
        data = older.read_bytes()
        older.unlink()
    store_evaluation(cache, key, computed)
    (entry,) = _entries(cache)
    if damage == "foreign-code":
        entry.write_bytes(data)
    elif damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:-100])
    elif damage == "flipped":
        raw = entry.read_bytes()
        mid = len(raw) // 2
        entry.write_bytes(raw[:mid] + bytes([raw[mid] ^ 0x04]) + raw[mid + 1:])
    elif damage == "other-entry":  # a whole entry of a run file, under this name
        other = _cache(tmp_path / "other")
        read_runs(b"q1 Q0 d1 1 1.0 r\n", name="r.txt", cache=other)
        entry.write_bytes(_entries(other, "")[0].read_bytes())
    with caplog.at_level(logging.WARNING, logger="ireval.cache"):
        if damage == "other-runs":  # the key's content names other runs than those given
            assert cached_evaluation(cache, key, runs[::-1], measures, EvalOptions()) is None
        else:
            assert cached_evaluation(cache, key, runs, measures, EvalOptions()) is None
    assert cache.dropped == 1 and not entry.exists()
    assert any("dropped" in r.getMessage() and entry.name in r.getMessage()
               for r in caplog.records)
    store_evaluation(cache, key, evaluate(qrels, runs, measures))  # computed again
    got = cached_evaluation(cache, key, runs, measures, EvalOptions())
    assert got is not None
    _same(computed, got)


def test_writers_of_the_same_entry_at_once_leave_a_whole_one(tmp_path: Path) -> None:
    """Four threads write and read one evaluation's entry at the same moment (each write
    is a temporary file renamed into place): every read is either nothing or the whole
    entry, never a part, and nothing is dropped."""
    qrels, runs = _data("mixed")
    computed = evaluate(qrels, runs, PAGE)
    key = evaluation_key("content", PAGE, EvalOptions())
    caches = [_cache(tmp_path) for _ in range(4)]
    start = threading.Barrier(len(caches))
    seen: list[Evaluation | None] = []

    def work(cache: ColumnCache) -> None:
        start.wait()
        for _ in range(5):
            store_evaluation(cache, key, computed)
            seen.append(cached_evaluation(cache, key, runs, PAGE, EvalOptions()))

    threads = [threading.Thread(target=work, args=(c,)) for c in caches]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(seen) == 20 and all(s is not None for s in seen)
    for s in seen[:3]:
        assert s is not None
        _same(computed, s)
    assert sum(c.dropped for c in caches) == 0
    assert len(_entries(caches[0])) == 1 and not list(caches[0].directory.glob(".tmp-*"))


def test_the_bound_evicts_evaluation_entries_too(tmp_path: Path) -> None:
    qrels, runs = _data("prefixed")
    probe = _cache(tmp_path / "probe")
    results = [(evaluation_key("c", [m], EvalOptions()), evaluate(qrels, runs, [m]), m)
               for m in ("AP", "P@10", "nDCG@10")]
    for key, res, _ in results:
        store_evaluation(probe, key, res)
    size = max(p.stat().st_size for p in _entries(probe))
    cache = _cache(tmp_path, max_bytes=2 * size + 10)  # room for two, not three
    for key, res, _ in results:
        store_evaluation(cache, key, res)
        time.sleep(0.02)
    assert len(_entries(cache)) == 2
    assert sum(p.stat().st_size for p in cache.directory.glob("*.arrow")) <= 2 * size + 10
    (first_key, _, m), *rest = results
    assert cached_evaluation(cache, first_key, runs, [m], EvalOptions()) is None  # out
    for key, res, m in rest:
        got = cached_evaluation(cache, key, runs, [m], EvalOptions())
        assert got is not None
        _same(res, got)


def test_the_code_version_is_the_source_of_the_package() -> None:
    version = evaluate_module.code_version()
    assert len(version) == 64 and version == evaluate_module.code_version()
    assert os.path.isfile(Path(evaluate_module.__file__))


@pytest.mark.parametrize("options", OPTIONS, ids=["defaults", "changed"])
def test_a_mapped_evaluation_kept_as_values_is_not_computed_again(
        tmp_path: Path, options: EvalOptions) -> None:
    """After a reopen the mapped evaluation is kept in the dataset's measure cache
    (``MeasureCache.keep``): evaluating the same measures under the same options again
    (the app's background work after the page) joins and computes nothing, with the same
    bits; any other option computes afresh (no stale value is served)."""
    from dataclasses import replace

    from ireval_core.dataset import Dataset

    qrels, runs = _data("msmarco")
    measures = ["nDCG@10", "AP", "P@10", "R@100", "RR", "bpref", "Judged@10"]
    cache = _cache(tmp_path)
    first = Dataset(qrels, tuple(runs)).evaluate(measures, options)
    key = evaluation_key("content", measures, options)
    store_evaluation(cache, key, first)
    reopened = Dataset(qrels, tuple(runs))  # a new process: nothing kept in memory
    hit = cached_evaluation(cache, key, reopened.runs, measures, options)
    assert hit is not None
    reopened.values.keep(reopened.qrels, reopened.runs, hit)
    reopened.values.keep(reopened.qrels, reopened.runs, hit)  # twice: kept once
    assert len(reopened.values) == len(runs) * len(measures)
    again = reopened.evaluate(measures, options)
    assert (reopened.values.misses, reopened.joins.misses) == (0, 0)
    _same(first, again)
    for other in (replace(options, rel_level=options.rel_level + 1),
                  replace(options, judged_only=not options.judged_only)):
        misses = reopened.values.misses
        _same(evaluate(qrels, runs, measures, options=other),
              reopened.evaluate(measures, other))
        assert reopened.values.misses == misses + len(runs) * len(measures)
