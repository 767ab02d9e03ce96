"""Labeling files in the parsed-column cache (:mod:`ireval_core.labels.cache`).

Read again (a new cache object on the same folder, as after a restart) the files are
mapped, not read, and give the same :class:`Judgments`, array for array; an entry that is
damaged is dropped with a log line and the files read again to the same result; a change
of what is read (label map, conflict rule, round, reader version, a file's bytes or name)
misses; the app's labeling pages read through the cache.
"""

from __future__ import annotations

import dataclasses
import gzip
import logging
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ireval_core.io.column_cache import CacheSettings, ColumnCache
from ireval_core.labels import Judgments, read_judgments
from ireval_core.labels import cache as labels_cache

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data" / "labels"
CONFLICTING = (b"round,system,query,doc,position,rater,label\n"
               b"2026-05,a,q1,d1,1,ann,high\n2026-05,b,q1,d1,2,ann,low\n"
               b"2026-05,a,q1,d2,2,bob,mid\n2026-05,b,q2,d3,1,,none\n")


def _files() -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted(SAMPLE.glob("labels_2026-05.csv"))]


def _cache(tmp_path: Path) -> ColumnCache:
    """A new cache object on the folder (what a new process opens)."""
    return ColumnCache(CacheSettings(tmp_path / "columns", 1 << 30))


def _same(a: Judgments, b: Judgments) -> None:
    for f in dataclasses.fields(Judgments):
        if f.name == "_cache":
            continue
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype and x.shape == y.shape, f.name
            assert x.tobytes() == y.tobytes() if x.dtype != object else x.tolist() == y.tolist()
        elif isinstance(x, pa.Array):
            assert x.equals(y), f.name
        else:
            assert x == y, f.name
    r = a.rounds[-1]
    assert a.round(r).to_qrels().to_dict() == b.round(r).to_qrels().to_dict()


def test_a_reopen_maps_the_files_read_before(tmp_path: Path,
                                             caplog: pytest.LogCaptureFixture) -> None:
    files = _files()
    parsed = read_judgments(files)
    first = _cache(tmp_path)
    stored = read_judgments(files, cache=first)
    assert (first.hits, first.misses) == (0, 1)
    assert len(list((tmp_path / "columns").glob("*.arrow"))) == 1
    again = _cache(tmp_path)
    with caplog.at_level(logging.DEBUG, logger="ireval.cache"):
        hit = read_judgments(files, cache=again)
    assert (again.hits, again.misses) == (1, 0)
    assert any("mapped" in r.getMessage() for r in caplog.records)
    _same(parsed, stored)
    _same(parsed, hit)
    assert not hit.shown_doc.flags.writeable  # read-only, as a read's


def test_paths_gzip_and_warnings_come_back_as_read(tmp_path: Path) -> None:
    """By path (the stat record), gzip, a label-conflicts warning naming its file."""
    path = tmp_path / "c.csv.gz"
    path.write_bytes(gzip.compress(CONFLICTING))
    parsed = read_judgments(path, conflicts="mean")
    assert parsed.warnings and parsed.n_conflicts == 1
    read_judgments(path, conflicts="mean", cache=_cache(tmp_path))
    again = _cache(tmp_path)
    _same(parsed, read_judgments(path, conflicts="mean", cache=again))
    assert again.hits == 1


@pytest.mark.parametrize("damage", ["truncated", "flipped", "codes"])
def test_a_damaged_entry_is_dropped_and_the_files_read_again(
        tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    files = [("c.csv", CONFLICTING)]
    parsed = read_judgments(files, conflicts="latest")
    if damage == "codes":  # a whole, well-formed entry whose codes point past the names
        bad = dataclasses.replace(parsed, shown_doc=parsed.shown_doc + 100)
        key = labels_cache.judgments_key(_cache(tmp_path), files, label_map=None, sheet=None,
                                         conflicts="latest", round=None)
        assert key is not None
        labels_cache.store_judgments(_cache(tmp_path), key, bad)
    else:
        read_judgments(files, conflicts="latest", cache=_cache(tmp_path))
    (entry,) = (tmp_path / "columns").glob("*.arrow")
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[: len(data) - 100])
    elif damage == "flipped":
        mid = len(data) // 2
        entry.write_bytes(data[:mid] + bytes([data[mid] ^ 0x01]) + data[mid + 1:])
    cache = _cache(tmp_path)
    with caplog.at_level(logging.WARNING, logger="ireval.cache"):
        got = read_judgments(files, conflicts="latest", cache=cache)
    _same(parsed, got)
    assert (cache.hits, cache.dropped) == (0, 1)
    assert any("dropped" in r.getMessage() and entry.name in r.getMessage()
               for r in caplog.records)
    again = _cache(tmp_path)  # the read stored a good entry in its place
    _same(parsed, read_judgments(files, conflicts="latest", cache=again))
    assert again.hits == 1


def test_a_changed_reading_rule_misses(tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    files = [("c.csv", CONFLICTING)]
    read_judgments(files, conflicts="mean", cache=_cache(tmp_path))
    changes = [
        dict(conflicts="latest"),
        dict(conflicts="mean", label_map="none=0,low=1,mid=5,high=9"),
        dict(conflicts="mean", round="2026-06"),
    ]
    for change in changes:
        cache = _cache(tmp_path)
        got = read_judgments(files, cache=cache, **change)  # type: ignore[arg-type]
        assert (cache.hits, cache.misses) == (0, 1), change
        _same(read_judgments(files, **change), got)  # type: ignore[arg-type]
    longer = CONFLICTING + b"2026-05,a,q3,d4,1,,high\n"
    for other in ([("d.csv", CONFLICTING)], [("c.csv", longer)]):
        cache = _cache(tmp_path)
        read_judgments(other, conflicts="mean", cache=cache)  # another name, other bytes
        assert (cache.hits, cache.misses) == (0, 1)
    monkeypatch.setattr(labels_cache, "JUDGMENTS_VERSION", "0-older")
    cache = _cache(tmp_path)
    read_judgments(files, conflicts="mean", cache=cache)  # another reader version
    assert (cache.hits, cache.misses) == (0, 1)
    monkeypatch.undo()
    cache = _cache(tmp_path)
    read_judgments(files, conflicts="mean", cache=cache)  # the first rule: still there
    assert (cache.hits, cache.misses) == (1, 0)


def test_the_app_maps_a_labeling_set_after_a_restart(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The labeling pages' read (an upload, a saved set's files) goes through the cache:
    once the process has forgotten it, the same files are mapped; ``IREVAL_CACHE=off``
    reads without it."""
    from ireval_app import labels_glue
    from ireval_app.shared_cache import SHARED

    monkeypatch.setenv("IREVAL_CACHE_DIR", str(tmp_path / "columns"))
    files = labels_glue.Files.of([("c.csv", CONFLICTING)])
    SHARED.clear()
    first = labels_glue.load_judgments(files, "", "mean", "")
    SHARED.clear()  # a restart
    with caplog.at_level(logging.DEBUG, logger="ireval.cache"):
        again = labels_glue.load_judgments(files, "", "mean", "")
    assert sum("mapped" in r.getMessage() for r in caplog.records) == 1
    assert first.judgments is not None and again.judgments is not None
    _same(first.judgments, again.judgments)
    monkeypatch.setenv("IREVAL_CACHE", "off")
    SHARED.clear()
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="ireval.cache"):
        off = labels_glue.load_judgments(files, "", "mean", "")
    assert not [r for r in caplog.records if r.name == "ireval.cache"]
    assert off.judgments is not None
    _same(first.judgments, off.judgments)
    SHARED.clear()


def test_a_saved_set_whose_judgments_are_cached_is_not_read(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A saved set's files are known by the SHA-256 the workspace keeps
    (``Files.stored``): its fingerprint is that of the same bytes uploaded, and once its
    judgments are in the cache a reopen after a restart maps them without fetching a byte
    (counted); a set not in the cache is fetched once and read."""
    import hashlib

    from ireval_app import labels_glue
    from ireval_app.cache import StoredFile
    from ireval_app.shared_cache import SHARED

    monkeypatch.setenv("IREVAL_CACHE_DIR", str(tmp_path / "columns"))
    fetched: list[str] = []

    def stored(name: str, data: bytes) -> tuple[str, StoredFile]:
        def fetch() -> bytes:
            fetched.append(name)
            return data
        return name, StoredFile(hashlib.sha256(data).hexdigest(), len(data), fetch)

    files = labels_glue.Files.stored([stored("c.csv", CONFLICTING)])
    assert files.key == labels_glue.Files.of([("c.csv", CONFLICTING)]).key
    SHARED.clear()
    first = labels_glue.load_judgments(files, "", "mean", "")
    assert fetched == ["c.csv"]  # not cached yet: read once
    SHARED.clear()  # a restart, the set opened again
    again = labels_glue.load_judgments(labels_glue.Files.stored([stored("c.csv", CONFLICTING)]),
                                       "", "mean", "")
    assert fetched == ["c.csv"]  # mapped by the stored SHA-256: nothing fetched
    assert first.judgments is not None and again.judgments is not None
    _same(first.judgments, again.judgments)
    uploaded = labels_glue.Files.of([("c.csv", CONFLICTING)])
    SHARED.clear()
    _same(first.judgments, labels_glue.load_judgments(uploaded, "", "mean", "").judgments)
    SHARED.clear()
