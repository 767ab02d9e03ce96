"""The app's cache keeps at most its byte budget, shares what sessions hold, and holds
nothing of a file it could not read (issue 13).

* :class:`ireval_app.shared_cache.SharedCache`: the bytes it keeps never exceed the budget
  (an array two entries share counted once), the least recently used go first, an
  object over a quarter of the budget lives only as long as someone holds it, and one
  key is computed once however many threads ask;
* the app's readers (:func:`ireval_app.cache.load_runs`,
  :func:`ireval_app.labels_glue.load_judgments`): an upload bigger than the whole budget
  is read and used, shared while held, then freed; a large malformed upload leaves no
  reference to its bytes (reference count, ``gc`` referrers and ``tracemalloc``);
* real sessions (AppTest): two sessions get the same evaluation object, and once both
  are gone nothing they computed is reachable.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import cache, labels_glue, shared_cache
from ireval_app.shared_cache import SharedCache
from ireval_core.sizes import memory_blocks, nbytes

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
MB = 2**20


@pytest.fixture
def small_cache(monkeypatch) -> Iterator[SharedCache]:
    """The app's cache replaced by one with a 4 MiB budget (1 MiB per kept entry)."""
    c = SharedCache(budget=4 * MB)
    monkeypatch.setattr(shared_cache, "SHARED", c)
    yield c


def _run_text(n_queries: int, per_query: int, *, seed: int = 0, tag: str = "sys") -> bytes:
    """A TREC run of ``n_queries`` x ``per_query`` lines with distinct documents."""
    rng = np.random.default_rng(seed)
    docs = rng.permutation(n_queries * per_query)
    lines = [f"q{q} Q0 d{docs[q * per_query + r]} {r + 1} {per_query - r}.5 {tag}\n"
             for q in range(n_queries) for r in range(per_query)]
    return "".join(lines).encode()


# ----------------------------------------------------------------------------- SharedCache


def test_kept_bytes_stay_within_the_budget_least_recently_used_first() -> None:
    c = SharedCache(budget=100_000)  # entries up to 25,000 bytes are kept
    arrays = {i: np.full(2_000, i, dtype=np.float64) for i in range(20)}  # 16,000 B each
    for i in range(20):
        c.get(i, lambda i=i: arrays[i])
        stats = c.stats()
        assert stats.kept_bytes <= 100_000
        assert stats.kept_bytes == 16_000 * stats.kept
    assert c.stats().kept == 6  # 6 x 16,000 <= 100,000 < 7 x 16,000
    c.get(15, lambda: pytest.fail("15 is kept: not recomputed"))  # now the most recent
    c.get(20, lambda: np.zeros(2_000))  # evicts 14, the least recently used
    kept = set(c._kept)
    assert kept == {15, 16, 17, 18, 19, 20}
    arrays.clear()
    gc.collect()
    assert sorted(c.live_keys(), key=str) == sorted(kept, key=str)


def test_an_array_shared_by_two_entries_is_counted_once() -> None:
    c = SharedCache(budget=1_000_000)
    a = np.zeros(10_000)  # 80,000 bytes
    c.get("array", lambda: a)
    c.get("holder", lambda: {"same": a, "view": a[5:]})
    assert 80_000 <= c.stats().kept_bytes < 80_000 + 2_000  # the dict, not a second copy
    assert nbytes({"same": a, "view": a[5:]}) < 82_000


class _Growing:
    """Stands for a dataset: memoised checks and kept joins are added after it is stored."""

    def __init__(self) -> None:
        self.first = np.zeros(1_000)


def test_an_entry_that_grows_is_measured_again_when_another_is_stored() -> None:
    c = SharedCache(budget=1_000_000)
    grows = _Growing()
    c.get("grows", lambda: grows)
    c.get("other", lambda: np.zeros(1_000))
    grows.joins = np.zeros(20_000)  # type: ignore[attr-defined]  # +160,000 bytes
    c.get("third", lambda: np.zeros(1_000))
    assert c.stats().kept_bytes >= 3 * 8_000 + 160_000
    assert list(c._kept) == ["grows", "other", "third"]  # its place in the order kept
    grows.more = np.zeros(40_000)  # type: ignore[attr-defined]  # now over a quarter
    c.get("fourth", lambda: np.zeros(1_000))
    assert "grows" not in c._kept and c.stats().kept_bytes < 40_000  # let go
    assert c.get("grows", lambda: None) is grows  # still shared: this test holds it


def test_an_object_over_a_quarter_of_the_budget_is_shared_while_held_only() -> None:
    c = SharedCache(budget=1_000_000)
    calls = []

    def make() -> np.ndarray:
        calls.append(1)
        return np.ones(40_000)  # 320,000 bytes > 250,000

    big = c.get("big", make)
    assert c.get("big", make) is big and len(calls) == 1  # shared while held
    assert c.stats().kept == 0 and c.stats().kept_bytes == 0
    del big
    gc.collect()
    assert c.live_keys() == []
    c.get("big", make)
    assert len(calls) == 2  # computed again: nothing kept it


def test_a_key_is_computed_once_however_many_threads_ask() -> None:
    c = SharedCache(budget=0)  # nothing kept: sharing alone must serve the waiters
    started = threading.Event()
    calls: list[int] = []
    results: list[object] = []

    def slow() -> np.ndarray:
        calls.append(1)
        started.set()
        # finish only once all four askers wait for this key (however slowly the other
        # threads start on a loaded machine): else a late one would compute it again
        deadline = time.monotonic() + 60
        while c._computing["k"][1] < len(threads) and time.monotonic() < deadline:
            time.sleep(0.005)
        return np.arange(10)

    def ask() -> None:
        results.append(c.get("k", slow))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(calls) == 1
    assert all(r is results[0] for r in results)
    assert c._computing == {}


def test_a_failing_computation_is_not_stored_and_can_be_retried() -> None:
    c = SharedCache(budget=1_000_000)
    with pytest.raises(ZeroDivisionError):
        c.get("k", lambda: 1 / 0)
    assert c.live_keys() == [] and c._computing == {}
    assert c.get("k", lambda: "ok") == "ok"


def test_memory_blocks_count_arrow_buffers_and_numpy_bases() -> None:
    strings = pa.array([f"doc{i}" for i in range(1000)])
    coded = strings.dictionary_encode()
    blocks = memory_blocks({"a": strings, "b": pa.chunked_array([strings]), "c": coded})
    arrow = sum(b.size for b in strings.buffers() if b is not None)
    coded_bytes = sum(b.size for b in coded.buffers() if b is not None) + sum(
        b.size for b in coded.dictionary.buffers() if b is not None)
    mem = sum(v for k, v in blocks.items() if k[0] == "mem")  # type: ignore[index]
    assert mem == arrow + coded_bytes  # the chunked array adds nothing: same buffers


# ----------------------------------------------------------------------------- the app's readers


def test_an_upload_bigger_than_the_budget_is_read_shared_and_then_freed(small_cache) -> None:
    data = _run_text(400, 500)  # 200,000 lines, about 6 MiB of text
    first = cache.load_runs("big.txt", data)
    assert first.ok and len(first.runs[0]) == 200_000
    assert nbytes(first) > small_cache.budget  # over the whole budget
    again = cache.load_runs("big.txt", data)
    assert again is first  # another session uploading it gets the same parse
    assert small_cache.stats().kept_bytes <= small_cache.budget
    files = cache.LoadedFiles(cache.load_qrels("q.txt", b"q1 0 d1 1\n"), (first,))
    dataset = cache.dataset_for(files)
    assert dataset is not None and dataset.runs == first.runs
    assert cache.dataset_for(files) is dataset
    del first, again, files, dataset
    gc.collect()
    names = {k[0].rsplit(".", 1)[-1] for k in small_cache.live_keys()}
    assert "_read_runs" not in names and "_build_dataset" not in names
    misses = small_cache.stats().misses
    cache.load_runs("big.txt", data)
    assert small_cache.stats().misses == misses + 1  # read again: nothing had kept it


def _malformed_run(n_lines: int, *, bad_at_end: bool = True) -> bytes:
    """Valid run lines and one whose score is not a number: the last or the second."""
    bad = b"q9 Q0 dx 1 not-a-number bad\n"
    valid = _run_text(n_lines // 100, 100)
    if bad_at_end:
        return valid + bad
    first_end = valid.index(b"\n") + 1
    return valid[:first_end] + bad + valid[first_end:]


def _assert_holds_nothing(error: BaseException) -> None:
    assert error.__traceback__ is None
    assert error.__context__ is None and error.__cause__ is None


def test_a_failed_parse_keeps_no_reference_to_the_input(small_cache) -> None:
    """The bad line is the last: the fast reader and the line-by-line pass both ran."""
    data = _malformed_run(40_000)  # about 1.2 MiB: more than the cache keeps of one entry
    before = sys.getrefcount(data)
    arrow_before = pa.total_allocated_bytes()
    loaded = cache.load_runs("broken.txt", data)
    assert not loaded.ok and loaded.error is not None
    assert loaded.error.source == "broken.txt"
    assert loaded.error.line == 40_001
    _assert_holds_nothing(loaded.error)
    gc.collect()
    assert sys.getrefcount(data) == before
    assert [r for r in gc.get_referrers(data) if r is not sys._getframe()] == []
    assert pa.total_allocated_bytes() - arrow_before < len(data) / 10  # no Arrow copy left
    assert cache.load_runs("broken.txt", data) is loaded  # the error itself is cached


def test_a_failed_parse_frees_the_input_memory(small_cache) -> None:
    """tracemalloc: with the cached error alive, the 2 MiB input (more than the cache keeps
    of one entry) is freed. tracemalloc slows every allocation of the read: the input is
    no bigger than the property needs."""
    text = _malformed_run(80_000, bad_at_end=False)
    tracemalloc.start()
    try:
        data = bytes(memoryview(text))  # a copy allocated while traced
        del text
        size = len(data)
        loaded = cache.load_runs("broken.txt", data)
        after_read, _ = tracemalloc.get_traced_memory()
        del data
        gc.collect()
        current, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert loaded.error is not None and loaded.error.line == 2  # the cached error is alive
    assert after_read > size  # the input was there while this test held it ...
    assert current < size / 10, (current, size)  # ... and nothing else holds it


def test_a_failed_labeling_read_keeps_no_reference_to_the_input(small_cache) -> None:
    rows = "".join(f"2026-05,q{i % 500},d{i},{i % 20 + 1},high\n" for i in range(100_000))
    data = ("month,qid,docid,pos,grade\n" + rows + "2026-05,q1,d1,zero,high\n").encode()
    before = sys.getrefcount(data)
    files = labels_glue.Files.of([("june.csv", data)])
    loaded = labels_glue.load_judgments(files)
    assert loaded.error is not None and "june.csv:100002" in str(loaded.error)
    _assert_holds_nothing(loaded.error)
    del files
    gc.collect()
    assert sys.getrefcount(data) == before


def test_copied_results_are_private_to_each_caller(small_cache) -> None:
    import pandas as pd

    calls = []

    @shared_cache.shared(copy=True)
    def table(key: str) -> pd.DataFrame:
        calls.append(key)
        return pd.DataFrame({"x": [1, 2, 3]})

    a = table("k")
    a.loc[0, "x"] = 99
    b = table("k")
    assert b["x"].tolist() == [1, 2, 3] and calls == ["k"]


def test_the_sample_is_read_once_and_kept_outside_the_budget(small_cache) -> None:
    first = cache.load_sample()
    assert first is not None and first.qrels is not None
    assert cache.load_sample() is first  # not read, hashed or parsed again


# ----------------------------------------------------------------------------- sessions


def _evaluations(c: SharedCache) -> list[object]:
    return [k for k in c.live_keys() if isinstance(k, tuple) and str(k[0]).endswith(
        "evaluate_cached")]


def test_sessions_share_results_and_leave_nothing_when_they_end(monkeypatch) -> None:
    c = SharedCache(budget=0)  # nothing kept for later sessions: only sessions hold
    monkeypatch.setattr(shared_cache, "SHARED", c)
    sessions = []
    for _ in range(2):
        at = AppTest.from_file(APP, default_timeout=60).run()
        at.switch_page("pages/metrics.py").run()
        assert not at.exception
        sessions.append(at)
    pins = [at.session_state[shared_cache.PINS_KEY] for at in sessions]
    held = [next(iter(p["ireval_app.evaluation._evaluate_cached"].values())) for p in pins]
    assert held[0] is held[1]  # one evaluation, two sessions
    assert c.stats().misses >= 1 and _evaluations(c)
    del sessions, pins, held, at
    gc.collect()
    assert _evaluations(c) == []  # nothing a session computed outlives the sessions
