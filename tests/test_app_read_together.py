"""Files read together on two threads (a new upload, a data folder) give what reading them
one by one gives: the same names, digests, numbers and errors, runs named in file order,
and one run's ids coded at a time.

The overlaps of a read together are bounded by memory (``IREVAL_READ_MEMORY``): with no
room, each next parse waits for the run before to code its ids, each coding for the run
before to finish, and the numbers are the same.

Real readers on real bytes and files; the only wrappers (the timing tests) record when
each run is parsed and codes its ids, and hold the coding a little, so that two codings
running at once, or a parse beside a coding, would be seen.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import ireval_core.data as data_module
from ireval_app import cache
from ireval_app.shared_cache import SHARED
from ireval_core.io.qrels_runs import parse_runs, read_runs

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\nq2 0 d4 1\n"
RUNS = [
    ("bm25.txt", b"q1 Q0 d1 1 2.0 rank\nq1 Q0 d2 2 1.0 rank\nq2 Q0 d1 1 3.0 rank\n"),
    ("splade.txt", b"q1 Q0 d2 1 2.0 rank\nq2 Q0 d4 1 1.0 rank\nq2 Q0 d3 2 1.0 rank\n"),
    ("dense.txt", b"q1 Q0 d3 1 0.5 dense\nq2 Q0 d1 1 0.5 dense\nq2 Q0 d2 2 0.5 NA\n"),
    ("bad.txt", b"q1 Q0 d1 1 high bad\n"),
    ("mixed.txt", b"q1 Q0 d1 1 2.0 dense\nq1 Q0 d2 2 1.0 other\n"),
]


def _same_file(a: cache.LoadedFile, b: cache.LoadedFile) -> None:
    assert (a.name, a.digest, a.size, a.sha256, a.comments) == (
        b.name, b.digest, b.size, b.sha256, b.comments)
    assert (a.error is None) == (b.error is None)
    if a.error is not None:
        assert str(a.error) == str(b.error)
    assert [r.name for r in a.runs] == [r.name for r in b.runs]
    for x, y in zip(a.runs, b.runs, strict=True):
        assert (x.tag, x.source, x.warnings) == (y.tag, y.source, y.warnings)
        assert x.to_dict() == y.to_dict()
        for field in ("qcode", "dcode", "score", "offsets", "query_ids"):
            assert np.array_equal(getattr(x, field), getattr(y, field))
        assert x.doc_ids.equals(y.doc_ids)


@pytest.fixture
def parsed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every read parses: no column cache, and the shared cache forgotten before and after
    (a second read of the same bytes would otherwise be the first one's object)."""
    monkeypatch.setenv("IREVAL_CACHE", "off")
    SHARED.clear()
    yield
    SHARED.clear()


@pytest.mark.parametrize(("comments", "memory"), [(False, None), (True, None), (False, "0")])
def test_an_upload_read_together_is_the_files_read_one_by_one(
        comments: bool, memory: str | None, parsed: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if memory is not None:  # no room: every step waits for the one before
        monkeypatch.setenv(cache.READ_MEMORY_VAR, memory)
    runs = [(n, d + b"#x\n" if comments and n == "dense.txt" else d) for n, d in RUNS]
    qrels, together = cache.load_uploads(("qrels.txt", QRELS), runs, comments=comments)
    SHARED.clear()
    alone = cache.load_run_files(runs, comments=comments)
    assert all(a is not b for a, b in zip(together or (), alone, strict=True))
    assert qrels is not None and qrels.ok and qrels.qrels is not None
    assert qrels.qrels.to_dict() == cache.load_qrels("qrels.txt", QRELS).qrels.to_dict()
    assert together is not None and len(together) == len(alone) == len(RUNS)
    for a, b in zip(together, alone, strict=True):
        _same_file(a, b)
    names = [r.name for f in together for r in f.runs]
    # a tag of several files is named after each file; a taken tag renamed after its file
    assert names == ["bm25:rank", "splade:rank", "dense:dense", "dense-2", "mixed:dense",
                     "other"]
    assert not together[3].ok and "bad.txt:1" in str(together[3].error)


def test_a_part_of_an_upload_is_read_alone() -> None:
    qrels, runs = cache.load_uploads(None, RUNS[:2])
    assert qrels is None and runs is not None and [f.name for f in runs] == [
        "bm25.txt", "splade.txt"]
    qrels, runs = cache.load_uploads(("qrels.txt", QRELS), None)
    assert runs is None and qrels is not None and qrels.ok
    assert cache.load_uploads(None, []) == (None, ())


def test_a_folder_reads_as_its_upload(tmp_path: Path, parsed: None) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "qrels.txt").write_bytes(QRELS + b"q9 0 %s 1\n" % tmp_path.name.encode())
    for name, data in RUNS:
        (folder / name).write_bytes(data)
    loaded = cache.load_folder(folder)
    assert loaded is not None
    files = sorted(RUNS)  # a folder's runs in name order
    SHARED.clear()
    _, uploaded = cache.load_uploads(None, files)
    assert uploaded is not None
    for a, b in zip(loaded.runs, uploaded, strict=True):
        _same_file(a, b)
    assert loaded.qrels is not None and loaded.qrels.ok


def test_parse_then_name_is_read_runs() -> None:
    for name, data in RUNS[:3] + RUNS[4:]:
        for taken in ({}, {"rank": "x.txt", "dense": "y.txt"}):
            named = parse_runs(data, name=name).named(taken)
            direct = read_runs(data, name=name, taken_names=taken)
            assert [(r.name, r.warnings) for r in named] == [
                (r.name, r.warnings) for r in direct]
            assert [r.to_dict() for r in named] == [r.to_dict() for r in direct]


def test_one_run_codes_its_ids_at_a_time(monkeypatch: pytest.MonkeyPatch, parsed: None
                                         ) -> None:
    real = data_module.doc_codes_of
    spans: list[tuple[float, float]] = []
    lock = threading.Lock()

    def held(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        time.sleep(0.05)  # two codings at once would overlap here
        out = real(*args, **kwargs)
        with lock:
            spans.append((start, time.perf_counter()))
        return out

    monkeypatch.setattr(data_module, "doc_codes_of", held)
    runs = [(f"r{i}.txt", b"q1 Q0 d%d 1 2.0 t%d\nq2 Q0 d1 1 1.0 t%d\n" % (i, i, i))
            for i in range(4)]
    _, read = cache.load_uploads(("qrels.txt", QRELS + b"q7 0 d7 1\n"), runs)
    assert read is not None and all(f.ok for f in read)
    assert len(spans) == 4
    spans.sort()
    assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:], strict=False)), spans


def _timed_reads(monkeypatch: pytest.MonkeyPatch, n: int
                 ) -> tuple[list[tuple[str, float]], list[tuple[str, float, float]]]:
    """Read an upload of ``n`` runs (run ``i`` with tag ``t<i>``), recording when each
    parse starts and each coding starts and ends (the coding held 0.1 s)."""
    real_parse, real_codes = cache.parse_runs, data_module.doc_codes_of
    parses: list[tuple[str, float]] = []
    codings: list[tuple[str, float, float]] = []
    lock = threading.Lock()

    def parse(data: bytes, **kwargs: object) -> object:
        with lock:
            parses.append((str(kwargs["name"]), time.perf_counter()))
        return real_parse(data, **kwargs)  # type: ignore[arg-type]

    def codes(*args: object, **kwargs: object) -> object:
        start = time.perf_counter()
        time.sleep(0.1)
        out = real_codes(*args, **kwargs)
        with lock:
            codings.append((threading.current_thread().name, start, time.perf_counter()))
        return out

    monkeypatch.setattr(cache, "parse_runs", parse)
    monkeypatch.setattr(data_module, "doc_codes_of", codes)
    runs = [(f"r{i}.txt", b"q1 Q0 d%d 1 2.0 t%d\nq2 Q0 d1 1 1.0 t%d\n" % (i, i, i))
            for i in range(n)]
    _, read = cache.load_uploads(("qrels.txt", QRELS + b"q8 0 d8 1\n"), runs)
    assert read is not None and all(f.ok for f in read)
    assert [r.name for f in read for r in f.runs] == [f"t{i}" for i in range(n)]
    parses.sort(key=lambda p: p[0])
    codings.sort(key=lambda c: c[1])  # one coding at a time: in file order
    return parses, codings


def test_with_no_memory_to_spare_each_step_waits_for_the_run_before(
        monkeypatch: pytest.MonkeyPatch, parsed: None) -> None:
    monkeypatch.setenv(cache.READ_MEMORY_VAR, "0")
    parses, codings = _timed_reads(monkeypatch, 3)
    assert len(parses) == len(codings) == 3
    for i in (1, 2):  # each next parse once the run before has coded its ids
        assert parses[i][1] >= codings[i - 1][2], (parses, codings)
    assert all(a[2] <= b[1] for a, b in zip(codings, codings[1:], strict=False))


def test_with_memory_a_parse_runs_beside_the_coding_before(
        monkeypatch: pytest.MonkeyPatch, parsed: None) -> None:
    monkeypatch.setenv(cache.READ_MEMORY_VAR, "1e15")
    parses, codings = _timed_reads(monkeypatch, 3)
    # at most one parsed run waits: a parse starts once the run before may code, that is
    # once the run before that one has coded its ids
    assert parses[2][1] >= codings[0][2], (parses, codings)
    # and, with room, while that coding runs (held 0.1 s)
    assert any(parses[i][1] < codings[i - 1][2] for i in (1, 2)), (parses, codings)
    assert all(a[2] <= b[1] for a, b in zip(codings, codings[1:], strict=False))


def test_the_read_memory_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.READ_MEMORY_VAR, "2.5e9")
    assert cache.read_memory() == 2_500_000_000
    monkeypatch.setenv(cache.READ_MEMORY_VAR, "4000000000")
    assert cache.read_memory() == 4_000_000_000
    for wrong in ("lots", "-1"):
        monkeypatch.setenv(cache.READ_MEMORY_VAR, wrong)
        assert 0 < cache.read_memory() <= cache.DEFAULT_READ_MEMORY
    monkeypatch.delenv(cache.READ_MEMORY_VAR)
    assert 0 < cache.read_memory() <= cache.DEFAULT_READ_MEMORY
    resident = cache.resident_bytes()
    assert resident is None or resident > 10 * 2**20  # this interpreter and its imports


def test_the_checks_made_while_reading_are_the_summarys(parsed: None) -> None:
    import ireval_core.dataset as dataset_module
    from ireval_core.dataset import Dataset
    from ireval_core.io import read_qrels

    good = [RUNS[0], RUNS[2]]
    qrels, read = cache.load_uploads(("qrels.txt", QRELS), good)
    assert qrels is not None and qrels.qrels is not None and read is not None
    runs = tuple(r for f in read for r in f.runs)
    assert all(r in dataset_module._CHECKED for r in runs)  # made while reading
    fresh = Dataset(read_qrels(QRELS, name="qrels.txt"),
                    tuple(r for n, d in good for r in read_runs(d, name=n)))
    ahead = Dataset(qrels.qrels, runs)
    assert ahead.run_names == fresh.run_names == ("rank", "dense", "dense-2")
    assert ahead.summary().runs.equals(fresh.summary().runs)
    assert ahead.warnings(complete=False) == fresh.warnings(complete=False)
