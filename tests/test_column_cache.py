"""The parsed-column cache (:mod:`ireval_core.io.column_cache`) never changes a number.

Every reader (TREC text, gzip, CSV, TSV, Parquet, JSON, Excel) on every id shape gives
the same columns, bit for bit, from a cached entry as from a parse; an entry that is
truncated, corrupted, of another reader version or not an entry at all is dropped and the
file parsed again, with a log line; two processes filling the same cache at once leave
valid entries; the bound evicts the least recently used; the CLI prints the same output.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from test_id_shapes import SHAPES, make_data

from ireval_core import Qrels, Run, evaluate, read_qrels, read_runs
from ireval_core.io import column_cache
from ireval_core.io.column_cache import CacheSettings, ColumnCache

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ["AP", "nDCG", "nDCG@10", "P@10", "RR", "bpref", "Rprec"]
FORMATS = ["trec", "trec.gz", "csv", "tsv", "parquet", "json", "xlsx"]


def _cache(tmp_path: Path, max_bytes: int = 1 << 30, mode: str = "stat") -> ColumnCache:
    return ColumnCache(CacheSettings(tmp_path / "cache", max_bytes), mode)  # type: ignore[arg-type]


def _files(shape: str, fmt: str, seed: int = 0) -> tuple[str, bytes, str, bytes]:
    """(qrels name, bytes, run name, bytes) of a tie-heavy two-system run in ``fmt``."""
    qrels, run = make_data(shape, seed, 60)
    q_rows = [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()]
    r_rows = [(q, d, s, tag) for tag in ("bm25", "dense") for q, docs in run.items()
              for d, s in docs.items()]
    if fmt in ("trec", "trec.gz"):
        qb = "".join(f"{q} 0 {d} {int(g)}\n" for q, d, g in q_rows).encode()
        rb = "".join(f"{q} Q0 {d} 1 {s!r} {t}\n" for q, d, s, t in r_rows).encode()
        if fmt == "trec.gz":
            return "qrels.txt.gz", gzip.compress(qb), "run.txt.gz", gzip.compress(rb)
        return "qrels.txt", qb, "run.txt", rb
    if fmt in ("csv", "tsv"):
        sep = "," if fmt == "csv" else "\t"
        qb = ("qid,docid,rel\n".replace(",", sep)
              + "".join(f"{q}{sep}{d}{sep}{int(g)}\n" for q, d, g in q_rows)).encode()
        rb = ("qid,docid,score,tag\n".replace(",", sep)
              + "".join(f"{q}{sep}{d}{sep}{s!r}{sep}{t}\n" for q, d, s, t in r_rows)).encode()
        return f"qrels.{fmt}", qb, f"run.{fmt}", rb
    if fmt == "parquet":
        def table(rows: list[tuple[object, ...]], names: list[str]) -> bytes:
            cols = list(zip(*rows, strict=True))
            buf = io.BytesIO()
            pq.write_table(pa.table({n: list(c) for n, c in zip(names, cols, strict=True)}),
                           buf)
            return buf.getvalue()
        return ("qrels.parquet", table(q_rows, ["qid", "docid", "rel"]), "run.parquet",
                table(r_rows, ["qid", "docid", "score", "tag"]))
    if fmt == "json":  # one system per JSON file
        return ("qrels.json", json.dumps(qrels).encode(), "run.json",
                json.dumps(run).encode())
    assert fmt == "xlsx"
    openpyxl = pytest.importorskip("openpyxl")

    def book(header: list[str], rows: list[tuple[object, ...]]) -> bytes:
        wb = openpyxl.Workbook()
        ws = wb.active
        ws.append(header)
        for r in rows:
            ws.append(list(r))
        buf = io.BytesIO()
        wb.save(buf)
        return buf.getvalue()
    return ("qrels.xlsx", book(["qid", "docid", "rel"], q_rows), "run.xlsx",
            book(["qid", "docid", "score", "tag"], r_rows))


def _same_qrels(a: Qrels, b: Qrels) -> None:
    assert list(a.query_ids) == list(b.query_ids) and a.doc_ids.equals(b.doc_ids)
    for f in ("qcode", "dcode", "grade", "offsets"):
        x, y = getattr(a, f), getattr(b, f)
        assert x.dtype == y.dtype and x.tobytes() == y.tobytes(), f
    assert (a.groups is None) == (b.groups is None)
    assert a.groups is None or b.groups is None or a.groups.equals(b.groups)
    assert a.source == b.source and a.warnings == b.warnings


def _same_runs(a: list[Run], b: list[Run]) -> None:
    assert [r.name for r in a] == [r.name for r in b]
    for x, y in zip(a, b, strict=True):
        assert list(x.query_ids) == list(y.query_ids) and x.doc_ids.equals(y.doc_ids)
        for f in ("qcode", "dcode", "score", "offsets"):
            u, v = getattr(x, f), getattr(y, f)
            assert u.dtype == v.dtype and u.tobytes() == v.tobytes(), f
        assert x.source == y.source and x.warnings == y.warnings


def _same_measures(qa: Qrels, ra: list[Run], qb: Qrels, rb: list[Run]) -> None:
    ea, eb = evaluate(qa, ra, MEASURES), evaluate(qb, rb, MEASURES)
    for r in ra:
        for m in MEASURES:
            x, y = ea.per_query(r.name, m).to_numpy(), eb.per_query(r.name, m).to_numpy()
            assert x.tobytes() == y.tobytes(), (r.name, m)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("shape", SHAPES)
def test_cached_reads_give_the_parsed_bits(tmp_path: Path, shape: str, fmt: str) -> None:
    qname, qbytes, rname, rbytes = _files(shape, fmt)
    (tmp_path / qname).write_bytes(qbytes)
    (tmp_path / rname).write_bytes(rbytes)
    qp, rp = str(tmp_path / qname), str(tmp_path / rname)
    parsed_q, parsed_r = read_qrels(qp), read_runs(rp)
    cache = _cache(tmp_path)
    first_q, first_r = read_qrels(qp, cache=cache), read_runs(rp, cache=cache)
    assert (cache.hits, cache.misses) == (0, 2)
    for source_q, source_r in ((qp, rp), (qbytes, rbytes)):  # by path, then by bytes
        name_q, name_r = (None, None) if isinstance(source_q, str) else (qname, rname)
        cached_q = read_qrels(source_q, name=name_q, cache=cache)
        cached_r = read_runs(source_r, name=name_r, cache=cache)
        for q in (first_q, cached_q):
            _same_qrels(parsed_q, q)
        for r in (first_r, cached_r):
            _same_runs(parsed_r, r)
        before = (cache.hits, cache.misses)
        _same_measures(parsed_q, parsed_r, cached_q, cached_r)
        n = len(parsed_r)  # a document map per run: computed and kept, then mapped
        assert (cache.hits, cache.misses) == ((before[0], before[1] + n) if source_q is qp
                                              else (before[0] + n, before[1]))
    assert (cache.dropped, len(_entries(cache))) == (0, 2 + len(parsed_r))


def test_a_hit_is_named_as_the_file_read_now(tmp_path: Path) -> None:
    """Names are not cached: the same bytes under another name carry that name, and runs
    are renamed against the names already taken, as a parse does."""
    _, _, _, rbytes = _files("msmarco", "trec")
    rbytes += b"q_extra Q0 dx 1 1.0 NA\n"  # lines without a tag: a system named by the file
    cache = _cache(tmp_path)
    read_runs(rbytes, name="first.txt", cache=cache)
    taken = {"bm25": "other.txt"}
    got = read_runs(rbytes, name="second.txt", taken_names=taken, cache=cache)
    want = read_runs(rbytes, name="second.txt", taken_names=taken)
    assert cache.hits == 1
    _same_runs(want, got)
    assert [r.name for r in got] == ["second:bm25", "dense", "second"]
    assert {w.code for r in got for w in r.warnings} >= {"run-renamed", "tag-missing"}


def _entries(cache: ColumnCache) -> list[Path]:
    return sorted(cache.directory.glob("*.arrow"))


@pytest.mark.parametrize("damage", ["truncated", "flipped", "foreign", "garbage", "empty",
                                    "other-key"])
def test_a_bad_entry_is_dropped_and_the_file_parsed_again(
        tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    qname, qbytes, rname, rbytes = _files("mixed", "trec")
    cache = _cache(tmp_path)
    parsed = read_runs(rbytes, name=rname)
    foreign = b""
    if damage == "foreign":  # an entry another reader version wrote
        monkeypatch.setattr(column_cache, "READER_VERSION", "0-older")
        read_runs(rbytes, name=rname, cache=cache)
        monkeypatch.undo()
        (older,) = _entries(cache)
        foreign = older.read_bytes()
        older.unlink()
    read_runs(rbytes, name=rname, cache=cache)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    if damage == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif damage == "flipped":  # one bit in the middle of the columns
        mid = len(data) // 2
        entry.write_bytes(data[:mid] + bytes([data[mid] ^ 0x10]) + data[mid + 1:])
    elif damage == "garbage":
        entry.write_bytes(os.urandom(len(data)))
    elif damage == "foreign":  # under this version's name
        entry.write_bytes(foreign)
    elif damage == "empty":
        entry.write_bytes(b"")
    elif damage == "other-key":  # a whole entry, but of other bytes, under this name
        other = _cache(tmp_path / "other")
        read_qrels(qbytes, name=qname, cache=other)
        entry.write_bytes(_entries(other)[0].read_bytes())
    with caplog.at_level(logging.WARNING, logger="ireval.cache"):
        got = read_runs(rbytes, name=rname, cache=cache)
    _same_runs(parsed, got)
    assert cache.dropped == 1 and cache.hits == 0
    assert any("dropped" in r.getMessage() and entry.name in r.getMessage()
               for r in caplog.records)
    again = read_runs(rbytes, name=rname, cache=cache)  # the parse stored a good entry
    _same_runs(parsed, again)
    assert cache.hits == 1


def test_the_bound_evicts_the_least_recently_used(tmp_path: Path) -> None:
    sizes = []
    probe = _cache(tmp_path / "probe")
    blobs = [_files(shape, "trec")[3] for shape in ("msmarco", "uuid", "prefixed")]
    for b in blobs:
        read_runs(b, name="r.txt", cache=probe)
    sizes = [p.stat().st_size for p in _entries(probe)]
    bound = sum(sorted(sizes)[-2:]) + 10  # room for two entries, not three
    cache = _cache(tmp_path, max_bytes=bound)
    read_runs(blobs[0], name="r.txt", cache=cache)
    time.sleep(0.02)
    read_runs(blobs[1], name="r.txt", cache=cache)
    time.sleep(0.02)
    read_runs(blobs[0], name="r.txt", cache=cache)  # a hit: blobs[0] is now the most recent
    assert cache.hits == 1
    time.sleep(0.02)
    read_runs(blobs[2], name="r.txt", cache=cache)  # over the bound: blobs[1] goes
    assert len(_entries(cache)) == 2
    assert sum(p.stat().st_size for p in _entries(cache)) <= bound
    hits = cache.hits
    read_runs(blobs[0], name="r.txt", cache=cache)
    read_runs(blobs[2], name="r.txt", cache=cache)
    assert cache.hits == hits + 2
    read_runs(blobs[1], name="r.txt", cache=cache)
    assert cache.hits == hits + 2  # evicted: parsed again


def test_a_changed_file_is_read_again_in_stat_and_hash_modes(tmp_path: Path) -> None:
    _, _, rname, rbytes = _files("msmarco", "trec")
    path = tmp_path / rname
    path.write_bytes(rbytes)
    for mode in ("stat", "hash"):
        cache = _cache(tmp_path / mode, mode=mode)
        read_runs(str(path), cache=cache)
        assert read_runs(str(path), cache=cache) and cache.hits == 1
    changed = rbytes.replace(b" 1 3.0 ", b" 1 7.0 ", 1)
    assert changed != rbytes
    path.write_bytes(changed)
    os.utime(path, ns=(time.time_ns(), time.time_ns() + 1_000_000))
    want = read_runs(str(path))
    for mode in ("stat", "hash"):
        cache = _cache(tmp_path / mode, mode=mode)
        _same_runs(want, read_runs(str(path), cache=cache))
        assert cache.hits == 0


_FILL = """
import sys
from pathlib import Path
from ireval_core import read_qrels, read_runs
from ireval_core.io.column_cache import CacheSettings, ColumnCache
cache = ColumnCache(CacheSettings(Path(sys.argv[1]), 1 << 30))
start = float(sys.argv[4])
import time
while time.time() < start:
    time.sleep(0.001)
for _ in range(int(sys.argv[5])):
    q = read_qrels(sys.argv[2], cache=cache)
    r = read_runs(sys.argv[3], cache=cache)
print(cache.hits, cache.misses, cache.dropped)
"""


def test_two_processes_fill_the_same_cache_at_once(tmp_path: Path) -> None:
    """Two real processes read the same files into one cache folder at the same moment
    (each writes its entry through a temporary file and a rename): neither ever reads a
    partial entry, and the entries left are whole and give the parsed bits."""
    qname, qbytes, rname, rbytes = _files("uuid", "trec")
    (tmp_path / qname).write_bytes(qbytes)
    (tmp_path / rname).write_bytes(rbytes)
    folder = tmp_path / "shared"
    start = time.time() + 1.5  # both past their imports
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    procs = [subprocess.Popen(
        [sys.executable, "-c", _FILL, str(folder), str(tmp_path / qname),
         str(tmp_path / rname), str(start), "10"], stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
        hits, misses, dropped = map(int, out.split())
        assert dropped == 0 and hits + misses == 20 and hits >= 16
    assert not list(folder.glob(".tmp-*"))
    cache = _cache(tmp_path)
    cache.settings = CacheSettings(folder, 1 << 30)
    _same_qrels(read_qrels(str(tmp_path / qname)), read_qrels(str(tmp_path / qname),
                                                              cache=cache))
    _same_runs(read_runs(str(tmp_path / rname)), read_runs(str(tmp_path / rname), cache=cache))
    assert (cache.hits, cache.dropped) == (2, 0)


def test_cli_prints_the_same_with_and_without_the_cache(tmp_path: Path) -> None:
    qname, qbytes, rname, rbytes = _files("prefixed", "trec")
    (tmp_path / qname).write_bytes(qbytes)
    (tmp_path / rname).write_bytes(rbytes)
    env = dict(os.environ, PYTHONPATH=str(ROOT), IREVAL_CACHE_DIR=str(tmp_path / "c"))
    env.pop("IREVAL_CACHE", None)

    def cli(*extra: str) -> str:
        p = subprocess.run([sys.executable, "-m", "ireval_core", "eval",
                            str(tmp_path / qname), str(tmp_path / rname), "-q",
                            "--format", "json", *extra], capture_output=True, text=True,
                           env=env, check=True)
        return p.stdout + p.stderr

    plain = cli()  # default: off
    assert not (tmp_path / "c").exists()
    assert cli("--cache", "yes") == plain  # fills
    # qrels, runs, and the document map of each of the file's two systems
    assert len(list((tmp_path / "c").glob("*.arrow"))) == 4
    assert cli("--cache", "hash") == plain  # maps (after hashing the files)


def test_settings_from_the_environment(monkeypatch: pytest.MonkeyPatch,
                                       tmp_path: Path) -> None:
    monkeypatch.setenv("IREVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("IREVAL_CACHE_MAX", "1.5M")
    monkeypatch.delenv("IREVAL_CACHE", raising=False)
    s = CacheSettings.from_env()
    assert (s.directory, s.max_bytes, s.enabled) == (tmp_path, 1_572_864, True)
    monkeypatch.setenv("IREVAL_CACHE", "off")
    assert ColumnCache.from_env() is None
    monkeypatch.setenv("IREVAL_CACHE_MAX", "lots")
    with pytest.raises(ValueError, match="IREVAL_CACHE_MAX"):
        CacheSettings.from_env()


def test_the_app_maps_a_file_read_before_after_its_memory_is_cleared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The app's reads (an upload, a saved dataset's bytes, a folder's file) go through the
    column cache: once the process has forgotten them (a restart: its shared cache
    cleared), the same bytes are mapped, not parsed, and give the parsed bits."""
    from ireval_app import cache as app_cache
    from ireval_app.shared_cache import SHARED

    monkeypatch.setenv("IREVAL_CACHE_DIR", str(tmp_path / "columns"))
    qname, qbytes, rname, rbytes = _files("msmarco", "trec")
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / qname).write_bytes(qbytes)
    (folder / rname).write_bytes(rbytes)

    def forget() -> None:  # what a restart forgets
        SHARED.clear()
        with app_cache._RESIDENT_LOCK:
            app_cache._RESIDENT.clear()

    forget()
    first_q = app_cache.load_qrels(qname, qbytes)  # an upload (or a saved dataset's bytes)
    first_r = app_cache.load_runs(rname, rbytes)
    first_folder = app_cache.load_folder(folder)  # a data folder: entries of the same bytes
    assert first_folder is not None
    # the qrels, the run file, and the document map of each of its systems (the folder's
    # dataset checks are made while its files are read)
    assert len(list((tmp_path / "columns").glob("*.arrow"))) == 2 + len(
        first_folder.runs[0].runs)
    forget()
    with caplog.at_level(logging.DEBUG, logger="ireval.cache"):
        again_q = app_cache.load_qrels(qname, qbytes)
        again_r = app_cache.load_runs(rname, rbytes)
        assert sum("mapped" in r.getMessage() for r in caplog.records) == 2
        forget()  # else the folder's files are the uploads just read (same names, bytes)
        again_folder = app_cache.load_folder(folder)
    assert again_folder is not None
    # the folder's qrels and run, and the document maps its dataset checks read
    assert sum("mapped" in r.getMessage() for r in caplog.records) == 4 + len(
        again_folder.runs[0].runs)
    for q in (again_q.qrels, first_folder.qrels.qrels, again_folder.qrels.qrels):
        assert first_q.qrels is not None and q is not None
        _same_qrels(first_q.qrels, q)
    for runs in (again_r.runs, first_folder.runs[0].runs, again_folder.runs[0].runs):
        _same_runs(list(first_r.runs), list(runs))
    monkeypatch.setenv("IREVAL_CACHE", "off")  # one setting turns it off
    forget()
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="ireval.cache"):
        off = app_cache.load_runs(rname, rbytes)
    assert not [r for r in caplog.records if r.name == "ireval.cache"]
    _same_runs(list(first_r.runs), list(off.runs))
    forget()


def _doc_map_entries(cache: ColumnCache, files: set[Path]) -> list[Path]:
    return [p for p in _entries(cache) if p not in files]


def test_a_reopened_pair_maps_its_document_map(tmp_path: Path,
                                               caplog: pytest.LogCaptureFixture) -> None:
    """The join's document map (the one step that compares ids) of a qrels and a run read
    through the cache is kept beside them: after a restart (a new cache object, new
    objects) the join maps it, and every number is the parsed one."""
    from ireval_core.data import join

    qname, qbytes, rname, rbytes = _files("prefixed", "trec")
    parsed_q, parsed_r = read_qrels(qbytes, name=qname), read_runs(rbytes, name=rname)
    first = _cache(tmp_path)
    q1, r1 = read_qrels(qbytes, name=qname, cache=first), read_runs(rbytes, name=rname,
                                                                     cache=first)
    files = set(_entries(first))
    _same_measures(parsed_q, parsed_r, q1, r1)
    maps = _doc_map_entries(first, files)
    assert len(maps) == len(r1) == 2 and (first.hits, first.misses) == (0, 4)
    again = _cache(tmp_path)  # a new process
    q2, r2 = read_qrels(qbytes, name=qname, cache=again), read_runs(rbytes, name=rname,
                                                                     cache=again)
    with caplog.at_level(logging.DEBUG, logger="ireval.cache"):
        _same_measures(parsed_q, parsed_r, q2, r2)
    assert (again.hits, again.misses) == (4, 0)
    assert sum("mapped" in r.getMessage() and any(m.name in r.getMessage() for m in maps)
               for r in caplog.records) == 2
    for run_p, run_c in zip(parsed_r, r2, strict=True):
        a, b = join(parsed_q, run_p), join(q2, run_c)
        for f in ("qidx", "grade", "score", "offsets"):
            assert getattr(a, f).tobytes() == getattr(b, f).tobytes(), f


@pytest.mark.parametrize("damage", ["truncated", "out-of-range"])
def test_a_bad_document_map_is_dropped_and_computed_again(
        tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture) -> None:
    from ireval_core.data import run_doc_map

    qname, qbytes, rname, rbytes = _files("uuid", "trec")
    first = _cache(tmp_path)
    q, (r, *_) = read_qrels(qbytes, name=qname, cache=first), read_runs(rbytes, name=rname,
                                                                         cache=first)
    files = set(_entries(first))
    good = run_doc_map(q, r).copy()
    (entry,) = _doc_map_entries(first, files)
    if damage == "truncated":
        entry.write_bytes(entry.read_bytes()[:-7])
    else:  # a whole entry (right trailer, checksum and key) with a code past the qrels'
        first.store_doc_map(*_keys_of(first, q, r), np.full(len(good), len(q.doc_ids)))
    again = _cache(tmp_path)
    q2, (r2, *_) = read_qrels(qbytes, name=qname, cache=again), read_runs(
        rbytes, name=rname, cache=again)
    with caplog.at_level(logging.WARNING, logger="ireval.cache"):
        got = run_doc_map(q2, r2)
    assert got.tobytes() == good.tobytes()
    assert again.dropped == 1 and any("dropped" in m.getMessage() for m in caplog.records)
    third = _cache(tmp_path)  # computed again and kept
    q3, (r3, *_) = read_qrels(qbytes, name=qname, cache=third), read_runs(
        rbytes, name=rname, cache=third)
    assert run_doc_map(q3, r3).tobytes() == good.tobytes() and third.hits == 3


def _keys_of(cache: ColumnCache, q: Qrels, r: Run) -> tuple[str, str]:
    from ireval_core.data import _doc_ids_origin

    of_q, of_r = _doc_ids_origin(q.doc_ids), _doc_ids_origin(r.doc_ids)
    assert of_q is not None and of_r is not None
    return of_q[1], of_r[1]


def test_a_changed_reading_rule_misses_the_document_map(tmp_path: Path) -> None:
    """A qrels read under another rule (trec_eval 10.0's comment lines) is another
    entry, so its document map is another too; a run not read through the cache has
    none kept."""
    from ireval_core.data import run_doc_map

    qname, qbytes, rname, rbytes = _files("msmarco", "trec")
    cache = _cache(tmp_path)
    q, (r, *_) = read_qrels(qbytes, name=qname, cache=cache), read_runs(rbytes, name=rname,
                                                                         cache=cache)
    run_doc_map(q, r)
    n = len(_entries(cache))
    other = _cache(tmp_path)
    q10 = read_qrels(qbytes, name=qname, comments=True, cache=other)
    (r2, *_) = read_runs(rbytes, name=rname, cache=other)
    assert other.misses == 1  # the qrels under the 10.0 rule
    run_doc_map(q10, r2)
    assert other.misses == 2 and len(_entries(other)) == n + 2  # its qrels, its map
    plain = read_runs(rbytes, name=rname)[0]
    before = (other.hits, other.misses)
    run_doc_map(q10, plain)
    assert (other.hits, other.misses) == before and len(_entries(other)) == n + 2


def test_a_saved_dataset_reopened_after_a_restart_is_not_read_from_the_workspace(
        app_ws: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A link to a saved dataset opened on a restarted server maps the files' columns by
    the SHA-256 the workspace keeps: the files' bytes are not read out of the workspace
    (counted), the Metrics page's evaluation is mapped too (none computed and stored
    again: counted), and the page shows the same numbers."""
    from _apps import APP, sample_files
    from streamlit.testing.v1 import AppTest

    from ireval_app import cache as app_cache
    from ireval_app import evaluation as app_evaluation
    from ireval_app.shared_cache import SHARED
    from ireval_core.workspace import Workspace

    monkeypatch.setenv("IREVAL_CACHE_DIR", str(tmp_path / "columns"))
    assert isinstance(app_ws, Workspace)
    info = app_ws.save_dataset(sample_files("run_bm25.txt"), name="n", saved_by="ana")
    reads: list[int] = []
    real_read = Workspace.read_file

    def counted(self: Workspace, *args: object, **kwargs: object) -> bytes:
        reads.append(1)
        return real_read(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Workspace, "read_file", counted)
    stored: list[str] = []
    real_store = app_evaluation.store_evaluation

    def store(cache: ColumnCache, key: str, res: object) -> None:
        stored.append(key)
        real_store(cache, key, res)  # type: ignore[arg-type]

    monkeypatch.setattr(app_evaluation, "store_evaluation", store)

    def restart_and_open() -> object:
        SHARED.clear()
        with app_cache._RESIDENT_LOCK:
            app_cache._RESIDENT.clear()
        at = AppTest.from_file(APP, default_timeout=60)
        at.query_params["ds"] = info.short_id
        at.switch_page("pages/metrics.py").run()
        assert not at.exception
        return at.table[0].value

    first = restart_and_open()  # parsed from the workspace's bytes, columns kept
    assert len(reads) == 2 and len(stored) == 1
    assert list((tmp_path / "columns").glob("eval-*.arrow"))
    again = restart_and_open()
    assert len(reads) == 2  # mapped: nothing read out of the workspace
    assert len(stored) == 1  # the evaluation mapped, not computed again
    assert again.equals(first)  # type: ignore[attr-defined]
    SHARED.clear()


def test_a_large_entry_is_checked_in_parts_with_the_same_crc(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries of at least ``_CRC_PART`` bytes are checked in parts on threads, the parts'
    CRCs combined: the value zlib gives for the whole, and a flipped bit in any part is
    found (the part size made small here, so that a small file's entry has four)."""
    import random
    import zlib

    rng = random.Random(35)
    for _ in range(300):
        a, b = rng.randbytes(rng.randint(0, 300)), rng.randbytes(rng.randint(0, 300))
        assert column_cache.crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == \
            zlib.crc32(a + b)
    monkeypatch.setattr(column_cache, "_CRC_PART", 1024)
    monkeypatch.setattr(column_cache.os, "cpu_count", lambda: 4)
    for n in (4096, 4099, 10_000, 65_537):
        data = rng.randbytes(n)
        assert column_cache.crc32(memoryview(data)) == zlib.crc32(data)
    _, _, rname, rbytes = _files("mixed", "trec")
    parsed = read_runs(rbytes, name=rname)
    cache = _cache(tmp_path)
    read_runs(rbytes, name=rname, cache=cache)
    (entry,) = _entries(cache)
    data = entry.read_bytes()
    assert len(data) >= 4 * 1024
    _same_runs(parsed, read_runs(rbytes, name=rname, cache=cache))
    assert (cache.hits, cache.dropped) == (1, 0)
    for quarter in range(4):  # one bit in each quarter of the columns, one at a time
        at = (len(data) - 64) * quarter // 4 + 100
        entry.write_bytes(data[:at] + bytes([data[at] ^ 0x04]) + data[at + 1:])
        got = read_runs(rbytes, name=rname, cache=cache)  # dropped, parsed, stored again
        _same_runs(parsed, got)
        assert cache.dropped == quarter + 1
        assert entry.read_bytes() == data
