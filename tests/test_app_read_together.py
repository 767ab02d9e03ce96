"""Files read together on two threads (a new upload, a data folder) give what reading them
one by one gives: the same names, digests, numbers and errors, runs named in file order,
and one run's ids coded at a time.

Real readers on real bytes and files; the only wrapper (the last test) records when each
run codes its ids and holds that step a little, so that two codings running at once would
be seen.
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


@pytest.mark.parametrize("comments", [False, True])
def test_an_upload_read_together_is_the_files_read_one_by_one(comments: bool, parsed: None
                                                              ) -> None:
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
