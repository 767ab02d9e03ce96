"""The workspace database, on SQLite and on a real PostgreSQL server.

Every test that touches a database runs on both back ends (``url`` is parametrised):
a SQLite file in a temporary directory, and an empty database on the throwaway
PostgreSQL server of :mod:`pg` (skipped with the reason when it cannot start, failed
under ``CI=true``). Numbers are checked against what the test computes itself:
SHA-256 of the bytes, counts of distinct contents and datasets.
"""

from __future__ import annotations

import ast
import dataclasses
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import tracemalloc
import zlib
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from ireval_core.errors import IrevalError
from ireval_core.workspace import (
    CHUNK_SIZE,
    ENV_VAR,
    MIGRATIONS,
    SCHEMA_VERSION,
    DatasetInfo,
    DatasetNotFoundError,
    Target,
    Workspace,
    WorkspaceError,
    WorkspaceUsage,
    dataset_id_of,
    default_url,
    resolve_url,
)
from ireval_core.workspace._schema import META as LIVE_SCHEMA
from ireval_core.workspace._schema import migrate

ROOT = Path(__file__).resolve().parents[1]
MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"

QRELS = b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d1 1\n"
BM25 = b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\nq2 Q0 d1 1 0.3 bm25\n"
NEURAL = b"q1 Q0 d2 1 9.0 neural\nq1 Q0 d1 2 8.0 neural\nq2 Q0 d1 1 0.9 neural\n"


def content(i: int, lines: int = 2000) -> bytes:
    """Deterministic TREC-like bytes, different for every ``i``."""
    return "".join(f"q{i} Q0 d{j} {j + 1} {1 / (j + 1):.6f} sys{i}\n"
                   for j in range(lines)).encode()


def count(url: str, table: str) -> int:
    """Rows of ``table``, read with a separate engine (what is really stored)."""
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            return int(conn.exec_driver_sql(f"SELECT count(*) FROM {table}").scalar_one())
    finally:
        engine.dispose()


def check_consistent(url: str) -> None:
    """Every file has its content, every content is used, every chunk belongs."""
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            def rows(sql: str) -> list[tuple[object, ...]]:
                return [tuple(r) for r in conn.exec_driver_sql(sql).all()]

            assert rows("SELECT blob_sha256 FROM dataset_files WHERE blob_sha256 NOT IN "
                        "(SELECT sha256 FROM blobs)") == []
            assert rows("SELECT sha256 FROM blobs WHERE sha256 NOT IN "
                        "(SELECT blob_sha256 FROM dataset_files)") == []
            assert rows("SELECT sha256 FROM blob_chunks WHERE sha256 NOT IN "
                        "(SELECT sha256 FROM blobs)") == []
            assert rows("SELECT b.sha256 FROM blobs b WHERE b.n_chunks <> "
                        "(SELECT count(*) FROM blob_chunks c WHERE c.sha256 = b.sha256)") == []
    finally:
        engine.dispose()


# ------------------------------------------------------------------------------ save
def test_save_and_read_back(ws: Workspace, url: str) -> None:
    before = datetime.now(UTC)
    info = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25),
                            ("run", "neural.txt", NEURAL), ("metadata", "queries.tsv", b"")],
                           name="round 1", note="first judged pool", saved_by="ana")
    after = datetime.now(UTC)
    assert isinstance(info, DatasetInfo)
    assert (info.name, info.note, info.saved_by) == ("round 1", "first judged pool", "ana")
    assert before - timedelta(seconds=1) <= info.saved_at <= after + timedelta(seconds=1)
    assert info.saved_at.tzinfo is not None and info.saved_at.utcoffset() == timedelta(0)
    assert [(f.position, f.kind, f.name, f.size) for f in info.files] == [
        (0, "qrels", "qrels.txt", len(QRELS)), (1, "run", "bm25.txt", len(BM25)),
        (2, "run", "neural.txt", len(NEURAL)), (3, "metadata", "queries.tsv", 0)]
    assert [f.sha256 for f in info.files] == [
        hashlib.sha256(b).hexdigest() for b in (QRELS, BM25, NEURAL, b"")]
    assert info.size == len(QRELS) + len(BM25) + len(NEURAL)
    assert info.id == dataset_id_of([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25),
                                     ("run", "neural.txt", NEURAL),
                                     ("metadata", "queries.tsv", b"")])
    assert [f.name for f in info.files_of_kind("run")] == ["bm25.txt", "neural.txt"]
    for position, data in enumerate((QRELS, BM25, NEURAL, b"")):
        assert ws.read_file(info.id, position) == data
        assert ws.read_file(info.short_id, position) == data
    assert ws.get_dataset(info.short_id) == info
    assert ws.get_dataset(info.id[:8].upper()) == info
    assert ws.files(info.id) == info.files
    assert ws.list_datasets() == [info]
    assert ws.schema_version == SCHEMA_VERSION
    usage = ws.usage()
    assert (usage.datasets, usage.files, usage.blobs, usage.notes) == (1, 4, 4, 0)
    assert usage.raw_bytes == info.size


def test_list_is_newest_first(ws: Workspace) -> None:
    first = ws.save_dataset([("qrels", "q.txt", QRELS)], name="old", saved_by="ana")
    second = ws.save_dataset([("run", "r.txt", BM25)], name="new", saved_by="bo")
    assert [d.id for d in ws.list_datasets()] == [second.id, first.id]


def test_large_file_is_chunked_compressed_and_byte_exact(ws: Workspace, url: str) -> None:
    text = content(7, lines=200_000)  # ~8 MB of compressible text
    noise = os.urandom(2 * CHUNK_SIZE + 12345)  # incompressible: stored as is
    data = text + noise
    info = ws.save_dataset([("run", "big.txt", data)], name="big", saved_by="ana")
    chunks = -(-len(data) // CHUNK_SIZE)
    assert count(url, "blob_chunks") == chunks
    usage = ws.usage()
    expected_stored = sum(
        min(len(zlib.compress(data[i:i + CHUNK_SIZE], 1)), len(data[i:i + CHUNK_SIZE]))
        for i in range(0, len(data), CHUNK_SIZE))
    assert (usage.raw_bytes, usage.stored_bytes) == (len(data), expected_stored)
    assert usage.stored_bytes < len(data) - len(text) // 2
    assert ws.read_file(info.id, 0) == data


def test_memory_stays_within_two_copies(ws: Workspace) -> None:
    """Saving holds at most one extra copy of a file, reading at most two in all."""
    data = os.urandom(3 * CHUNK_SIZE) + content(3, lines=150_000)  # ~18 MB
    tracemalloc.start()
    try:
        info = ws.save_dataset([("run", "big.txt", data)], name="big", saved_by="ana")
        _, save_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        back = ws.read_file(info.id, 0)
        _, read_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert back == data
    assert save_peak < len(data) + 2 * CHUNK_SIZE  # the caller's copy is not counted
    assert read_peak < 2 * len(data) + 2 * CHUNK_SIZE


# ---------------------------------------------------------------------------- dedupe
def test_same_bytes_are_stored_once(ws: Workspace, url: str) -> None:
    a = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25)],
                        name="a", saved_by="ana")
    b = ws.save_dataset([("qrels", "qrels-copy.txt", QRELS), ("run", "neural.txt", NEURAL),
                         ("run", "bm25-again.txt", BM25)], name="b", saved_by="bo")
    assert a.id != b.id
    assert count(url, "blobs") == 3  # QRELS, BM25, NEURAL
    assert count(url, "dataset_files") == 5
    same_twice = ws.save_dataset([("run", "x.txt", NEURAL), ("run", "y.txt", NEURAL)],
                                 name="c", saved_by="cy")
    assert same_twice.files[0].sha256 == same_twice.files[1].sha256
    assert count(url, "blobs") == 3
    assert ws.read_file(same_twice.id, 1) == NEURAL
    check_consistent(url)


def test_same_files_are_one_dataset_and_nothing_is_overwritten(ws: Workspace,
                                                                url: str) -> None:
    files = [("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25),
             ("run", "neural.txt", NEURAL)]
    first = ws.save_dataset(files, name="round 1", note="from ana", saved_by="ana")
    again = ws.save_dataset(list(reversed(files)), name="renamed", note="other",
                            saved_by="bo")
    assert again == first  # first name, note, author, time and file order stay
    assert [f.name for f in again.files] == ["qrels.txt", "bm25.txt", "neural.txt"]
    assert ws.find_dataset(dataset_id_of(files)) == first
    assert (count(url, "datasets"), count(url, "blobs"), count(url, "dataset_files")) == (
        1, 3, 3)
    renamed_file = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25),
                                    ("run", "neural-v2.txt", NEURAL)],
                                   name="round 1", saved_by="ana")
    assert renamed_file.id != first.id  # a file name is part of the dataset
    assert (count(url, "datasets"), count(url, "blobs")) == (2, 3)


# ------------------------------------------------------------------- reopen, restart
def test_reopen_after_restart(url: str) -> None:
    with Workspace.open(url) as ws:
        info = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25)],
                               name="kept", saved_by="ana")
        ws.add_note(info.id, Target.dataset(), "keep this one", author="ana",
                    kind="decision")
    with Workspace.open(url) as ws:  # a new object: a restarted app in the same process
        assert ws.list_datasets() == [info]
        assert ws.read_file(info.short_id, 1) == BM25
        assert [n.text for n in ws.notes(info.id)] == ["keep this one"]
    program = ("import hashlib, sys\n"
               "from ireval_core.workspace import Workspace\n"
               "ws = Workspace.open(sys.argv[1])\n"
               "info = ws.get_dataset(sys.argv[2])\n"
               "print(info.name, hashlib.sha256(ws.read_file(info.id, 1)).hexdigest(),\n"
               "      ws.notes(info.id)[0].kind)\n")
    out = subprocess.run([sys.executable, "-c", program, url, info.short_id], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, check=True).stdout
    assert out.split() == ["kept", hashlib.sha256(BM25).hexdigest(), "decision"]


# ------------------------------------------------------------------ concurrent writers
WORKER = r"""
import json, os, sys, time
from ireval_core.workspace import Target, Workspace

def content(i, lines=2000):
    return "".join(f"q{i} Q0 d{j} {j + 1} {1 / (j + 1):.6f} sys{i}\n"
                   for j in range(lines)).encode()

def shared(k):  # 4 datasets that every worker saves some of: contents 0..4
    return [("qrels", "qrels.txt", content(0)), ("run", f"r{k}.txt", content(1 + k)),
            ("run", f"r{(k + 1) % 4}.txt", content(1 + (k + 1) % 4))]

url, go, worker = sys.argv[1], sys.argv[2], int(sys.argv[3])
open(f"{go}.ready{worker}", "w").close()
while not os.path.exists(go):
    time.sleep(0.002)
ws = Workspace.open(url)  # the first open of a new workspace creates it: all at once
ids = {}
for k in (worker % 4, (worker + 1) % 4, (worker + 2) % 4):
    ids[k] = ws.save_dataset(shared(k), name=f"shared {k}", saved_by=f"w{worker}").id
own = ws.save_dataset([("qrels", "qrels.txt", content(0)),
                       ("run", f"own{worker}.txt", content(10 + worker))],
                      name=f"own {worker}", saved_by=f"w{worker}")
ws.add_note(ids[worker % 4], Target.query("q1"), f"from {worker}", author=f"w{worker}")
assert ws.read_file(own.id, 1) == content(10 + worker)
print(json.dumps(ids))
"""


N_PROCESSES = 4
"""Processes saving at once in :func:`test_concurrent_processes` (each starts Python
and imports the workspace: about a second of CPU each)."""


def test_concurrent_processes(url: str, tmp_path: Path) -> None:
    """Processes open a new workspace and save overlapping datasets at once: each of the 4
    shared datasets is saved by 3 of the 4 processes (more processes than the 2 cores a CI
    machine has), each process saving 3 of them and one of its own."""
    go = tmp_path / "go"
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, url, str(go), str(w)],
                                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True) for w in range(N_PROCESSES)]
    deadline = time.monotonic() + 120
    while (sum((tmp_path / f"go.ready{w}").exists() for w in range(N_PROCESSES)) < N_PROCESSES
           and time.monotonic() < deadline):  # all imported: start them together
        time.sleep(0.01)
    go.touch()
    outputs = [w.communicate(timeout=180) for w in workers]
    for w, (_, err) in zip(workers, outputs, strict=True):
        assert w.returncode == 0, err
    seen: dict[str, set[str]] = {}
    for out, _ in outputs:
        for k, dataset in json.loads(out).items():
            seen.setdefault(k, set()).add(dataset)
    assert all(len(ids) == 1 for ids in seen.values()) and len(seen) == 4
    # 4 shared + N own datasets; contents 0..4 shared, N own runs
    assert (count(url, "datasets"), count(url, "blobs"), count(url, "dataset_files")) == (
        4 + N_PROCESSES, 5 + N_PROCESSES, 4 * 3 + N_PROCESSES * 2)
    assert count(url, "notes") == N_PROCESSES
    assert count(url, "schema_version") == len(MIGRATIONS)
    check_consistent(url)


def test_concurrent_threads_save_and_delete(ws: Workspace, url: str) -> None:
    """Browser sessions in one app: threads share one Workspace, saving and deleting
    datasets whose contents overlap; every save reads back, nothing is left behind."""
    errors: list[BaseException] = []
    keeper = ws.save_dataset([("qrels", "qrels.txt", content(0))], name="keeper",
                             saved_by="ana")

    def session(t: int) -> None:
        try:
            for round_ in range(6):
                files = [("qrels", "qrels.txt", content(0)),  # shared with keeper
                         ("run", "a.txt", content(1 + t % 2)),  # shared by half the threads
                         ("run", f"t{t}.txt", content(20 + round_))]  # shared by all rounds
                info = ws.save_dataset(files, name=f"t{t}", saved_by=f"t{t}")
                for position, (_, _, data) in enumerate(files):
                    assert ws.read_file(info.id, position) == data
                try:
                    ws.delete_dataset(info.id, confirm=info.short_id)
                except DatasetNotFoundError:
                    pass  # another thread saved the same files and deleted them first
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(t,)) for t in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert errors == []
    assert [d.id for d in ws.list_datasets()] == [keeper.id]
    assert (count(url, "blobs"), count(url, "blob_chunks")) == (1, 1)
    assert ws.read_file(keeper.id, 0) == content(0)
    check_consistent(url)


def test_a_content_deleted_while_saving_is_stored_again(ws: Workspace, url: str) -> None:
    """Another session deletes the only dataset using a content after this save looked
    it up and before it writes: the save stores the content itself."""
    old = ws.save_dataset([("qrels", "qrels.txt", QRELS)], name="old", saved_by="ana")
    store = ws._store  # the connection the facade writes through
    write = store.write

    def delete_first(doing: str, work: object) -> object:
        with Workspace.open(url) as other:  # another session, its own connections
            assert other.delete_dataset(old.id, confirm=old.id).blobs_removed == 1
        return write(doing, work)  # type: ignore[arg-type]

    store.write = delete_first  # type: ignore[method-assign]
    new = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25)],
                          name="new", saved_by="bo")
    del store.write
    assert ws.list_datasets() == [new]
    assert ws.read_file(new.id, 0) == QRELS
    assert count(url, "blobs") == 2
    check_consistent(url)


# ---------------------------------------------------------------------------- delete
def test_delete_asks_to_confirm(ws: Workspace, url: str) -> None:
    keep = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", BM25)],
                           name="keep", saved_by="ana")
    drop = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "neural.txt", NEURAL)],
                           name="drop", saved_by="ana")
    ws.add_note(drop.id, Target.query("q1"), "odd query", author="bo")
    ws.add_note(drop.id, Target.dataset(), "drop it", author="bo", kind="decision")
    ws.add_note(keep.id, Target.dataset(), "keep it", author="bo")
    for wrong in ("", "drop", keep.short_id, drop.id[:11], drop.short_id + "0", None):
        with pytest.raises((ValueError, TypeError), match=MESSAGE.format(
                param="confirm", function=r"Workspace\.delete_dataset")):
            ws.delete_dataset(drop.id, confirm=wrong)  # type: ignore[arg-type]
    assert len(ws.list_datasets()) == 2 and count(url, "blobs") == 3  # nothing deleted

    deleted = ws.delete_dataset(drop.short_id, confirm=drop.short_id.upper())
    assert (deleted.id, deleted.name, deleted.files, deleted.notes) == (drop.id, "drop", 2, 2)
    assert (deleted.blobs_removed, deleted.bytes_freed) == (1, len(NEURAL))  # QRELS stays
    assert ws.list_datasets() == [keep]
    assert ws.read_file(keep.id, 0) == QRELS
    assert [n.text for n in ws.notes()] == ["keep it"]
    assert (count(url, "blobs"), count(url, "notes")) == (2, 1)
    with pytest.raises(DatasetNotFoundError, match=rf"^no dataset {drop.short_id} in "
                       rf"workspace {re.escape(ws.url)}$"):
        ws.get_dataset(drop.short_id)
    with pytest.raises(DatasetNotFoundError):
        ws.delete_dataset(drop.id, confirm=drop.id)
    with pytest.raises(DatasetNotFoundError):
        ws.read_file(drop.id, 0)
    assert ws.find_dataset(drop.id) is None

    again = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "neural.txt", NEURAL)],
                            name="drop, saved again", saved_by="cy")
    assert again.id == drop.id and again.name == "drop, saved again"
    assert ws.read_file(again.id, 1) == NEURAL
    assert ws.delete_dataset(keep.id, confirm=keep.id).blobs_removed == 1  # BM25 only
    check_consistent(url)


# ----------------------------------------------------------------------------- notes
def test_notes_are_append_only_and_ordered(ws: Workspace) -> None:
    a = ws.save_dataset([("qrels", "qrels.txt", QRELS)], name="a", saved_by="ana")
    b = ws.save_dataset([("run", "bm25.txt", BM25)], name="b", saved_by="ana")
    cmp_ = Target.comparison("bm25", "neural", "ndcg_cut_10")
    n1 = ws.add_note(a.id, cmp_, "neural wins on head queries", author="ana")
    n2 = ws.add_note(a.short_id, Target.query("q2"), "q2 is ambiguous", author="bo")
    n3 = ws.add_note(b.id, Target.dataset(), "pool too shallow", author="cy")
    n4 = ws.add_note(a.id, Target.comparison("neural", "bm25", "nDCG@10"),
                     "ship neural", author="dee", kind="decision")
    assert [n.id for n in (n1, n2, n3, n4)] == sorted(n.id for n in (n1, n2, n3, n4))
    assert all(x.created_at <= y.created_at for x, y in itertools_pairwise((n1, n2, n3, n4)))
    assert n1.target == cmp_ and str(cmp_) == "bm25 vs neural on nDCG@10"
    assert (n4.kind, n4.author, n4.dataset_id) == ("decision", "dee", a.id)

    assert ws.notes(a.id) == [n1, n2, n4]
    assert ws.notes() == [n1, n2, n3, n4]  # a meeting's list: every dataset
    assert ws.notes(a.id, cmp_) == [n1, n4]  # a comparison, whichever run is A
    assert ws.notes(a.id, Target.comparison("bm25", "neural", "P@10")) == []
    assert ws.notes(a.id, Target.query("q2")) == [n2]
    assert ws.notes(kind="decision") == [n4]

    edit = ws.add_note(a.id, Target.query("q2"), "q2 is ambiguous: two intents",
                       author="bo", supersedes=n2.id)
    edit2 = ws.add_note(a.id, Target.query("q2"), "q2: two intents, label both",
                        author="ana", supersedes=edit.id)
    assert ws.notes(a.id, Target.query("q2")) == [edit2]
    history = ws.notes(a.id, Target.query("q2"), include_superseded=True)
    assert [(n.text, n.supersedes, n.superseded_by) for n in history] == [
        ("q2 is ambiguous", None, edit.id), ("q2 is ambiguous: two intents", n2.id, edit2.id),
        ("q2: two intents, label both", edit.id, None)]
    assert history[0] == dataclasses.replace(n2, superseded_by=edit.id)

    with pytest.raises(ValueError, match=MESSAGE.format(
            param="supersedes", function=r"Workspace\.add_note")):
        ws.add_note(a.id, Target.query("q1"), "moved", author="bo", supersedes=n2.id)
    with pytest.raises(ValueError, match=MESSAGE.format(
            param="supersedes", function=r"Workspace\.add_note")):
        ws.add_note(b.id, Target.query("q2"), "other dataset", author="bo", supersedes=n2.id)
    with pytest.raises(DatasetNotFoundError, match="^no dataset 0123456789ab in workspace"):
        ws.add_note("0123456789ab", Target.dataset(), "lost", author="bo")
    assert ws.usage().notes == 6


def itertools_pairwise(items: tuple[object, ...]) -> list[tuple[object, object]]:
    return list(zip(items, items[1:], strict=False))


# ------------------------------------------------------------------------- migration
V1_DATASET = "d" * 64


def make_v1_database(url: str) -> None:
    """A workspace as version 1 of ireval left it: no notes table, one dataset."""
    if url.startswith("sqlite"):
        Path(resolve_url(url).database or "").parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.begin() as conn:
            migrate(conn, engine.dialect.name, url, target=1)
            sha = hashlib.sha256(QRELS).hexdigest()
            conn.execute(sa.text(
                "INSERT INTO blobs (sha256, size, stored_size, n_chunks, created_at) "
                "VALUES (:s, :n, :n, 1, :t)"), {"s": sha, "n": len(QRELS),
                                                "t": datetime(2025, 1, 2, tzinfo=UTC)})
            conn.execute(sa.text("INSERT INTO blob_chunks (sha256, seq, codec, data) "
                                 "VALUES (:s, 0, 'raw', :d)"), {"s": sha, "d": QRELS})
            conn.execute(sa.text(
                "INSERT INTO datasets (id, name, note, saved_by, saved_at) "
                "VALUES (:i, 'january', '', 'ana', :t)"),
                {"i": V1_DATASET, "t": datetime(2025, 1, 2, 9, 30, tzinfo=UTC)})
            conn.execute(sa.text("INSERT INTO dataset_files VALUES (:i, 0, 'qrels', "
                                 "'qrels.txt', :s)"), {"i": V1_DATASET, "s": sha})
    finally:
        engine.dispose()


def test_an_old_database_is_migrated(url: str) -> None:
    make_v1_database(url)
    assert count(url, "schema_version") == 1
    with Workspace.open(url) as ws:
        assert ws.schema_version == SCHEMA_VERSION
        info = ws.get_dataset(V1_DATASET[:12])
        assert (info.name, info.saved_at) == ("january", datetime(2025, 1, 2, 9, 30,
                                                                  tzinfo=UTC))
        assert ws.read_file(info.id, 0) == QRELS
        assert (info.version, info.latest_version, info.files[0].rounds) == (1, 1, None)
        [v1] = ws.versions(info.id)
        assert (v1.version, v1.saved_by, v1.saved_at, [f.name for f in v1.added]) == (
            1, "ana", info.saved_at, ["qrels.txt"])
        note = ws.add_note(info.id, Target.dataset(), "migrated", author="ana")
        assert ws.notes(info.id) == [note]
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.connect() as conn:
            versions = conn.exec_driver_sql(
                "SELECT version, description FROM schema_version ORDER BY version").all()
    finally:
        engine.dispose()
    assert [tuple(v) for v in versions] == [(v, d) for v, d, _ in MIGRATIONS]


def test_migrated_schema_is_the_schema_the_code_uses(ws: Workspace, url: str) -> None:
    engine = sa.create_engine(resolve_url(url))
    try:
        inspector = sa.inspect(engine)
        assert set(inspector.get_table_names()) == set(LIVE_SCHEMA.tables)
        for name, table in LIVE_SCHEMA.tables.items():
            columns = {c["name"]: c["nullable"] for c in inspector.get_columns(name)}
            assert columns == {c.name: c.nullable for c in table.columns}, name
            assert (set(inspector.get_pk_constraint(name)["constrained_columns"])
                    == {c.name for c in table.primary_key}), name
            assert ({(tuple(fk["constrained_columns"]), fk["referred_table"])
                     for fk in inspector.get_foreign_keys(name)}
                    == {((fk.parent.name,), fk.column.table.name)
                        for fk in table.foreign_keys}), name
    finally:
        engine.dispose()


def test_a_newer_database_is_refused(url: str) -> None:
    Workspace.open(url).close()
    newer = SCHEMA_VERSION + 3
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql(
                "INSERT INTO schema_version (version, description, applied_at) "
                f"VALUES ({newer}, 'from the future', '2030-01-01 00:00:00')")
    finally:
        engine.dispose()
    with pytest.raises(WorkspaceError, match=(
            rf"^the database at {re.escape(resolve_url(url).render_as_string(True))} is "
            rf"schema version {newer}, newer than this ireval \({SCHEMA_VERSION}\): upgrade "
            r"ireval to use it$")):
        Workspace.open(url)


# ------------------------------------------------------------- unicode, hostile names
HOSTILE = [
    "run ü ñ 日本語 🚀.txt",
    "../../etc/passwd",
    "a|b|c.run",
    "'; DROP TABLE datasets; --",
    "\u202eexe.txt",  # right-to-left override
    "tab\there\nand newline",
    "e\u0301.txt",  # NFD ...
    "\u00e9.txt",  # ... and NFC: two different names, both kept as given
    "  spaced  ",
    "%_[like]*?",
    "x" * 3000,
]


def test_unicode_and_hostile_strings_are_stored_byte_exact(ws: Workspace) -> None:
    files = [("run", name, f"{i}\n".encode()) for i, name in enumerate(HOSTILE)]
    name, note, who = "評価 round\n'\"<b>%s", "line 1\nline 2 — ✓\r\n\ttabbed", "Zoë 🚀"
    info = ws.save_dataset(files, name=name, note=note, saved_by=who)
    back = ws.get_dataset(info.id)
    assert [f.name for f in back.files] == HOSTILE
    assert [f.name.encode() for f in back.files] == [n.encode() for n in HOSTILE]
    assert (back.name, back.note, back.saved_by) == (name, note, who)
    for i in range(len(HOSTILE)):
        assert ws.read_file(info.id, i) == f"{i}\n".encode()
    runs = ["bm25|v2", 'say "hi"', '["a","b"]']
    target = Target.comparison(runs[0], runs[1], "AP")
    query = Target.query("what is  \u00e9 | q'1")
    ws.add_note(info.id, target, note, author=who)
    ws.add_note(info.id, query, "∑ ok", author=who)
    ws.add_note(info.id, Target.comparison(runs[1], runs[2], "AP"), "other pair", author=who)
    assert [n.text for n in ws.notes(info.id, Target.comparison(runs[1], runs[0], "AP"))] == [
        note]
    assert ws.notes(info.id, target)[0].target.parts == (runs[0], runs[1], "AP")
    assert [n.text for n in ws.notes(info.id, query)] == ["∑ ok"]
    assert ws.notes(info.id, Target.query("what is  e\u0301 | q'1")) == []  # NFD != NFC


@pytest.mark.parametrize("bad, constraint", [
    ("a\x00b", "without NUL"), ("\udc80oops", "unpaired surrogate"), ("   ", "non-blank")])
def test_strings_postgresql_cannot_hold_are_refused(ws: Workspace, bad: str,
                                                    constraint: str) -> None:
    for call, param, function in [
        (lambda: ws.save_dataset([("run", "r.txt", BM25)], name=bad, saved_by="a"),
         "name", "Workspace.save_dataset"),
        (lambda: ws.save_dataset([("run", "r.txt", BM25)], name="n", saved_by=bad),
         "saved_by", "Workspace.save_dataset"),
        (lambda: ws.save_dataset([("run", bad, BM25)], name="n", saved_by="a"),
         "files", "Workspace.save_dataset"),
        (lambda: Target.query(bad), "query_id", "Target.query"),
    ]:
        with pytest.raises(ValueError, match=MESSAGE.format(
                param=param, function=re.escape(function))) as caught:
            call()
        assert constraint in str(caught.value) or param == "files"
    assert ws.list_datasets() == []


# ------------------------------------------------------------------------ parameters
BAD_CALLS = [  # (method, kwargs, param, error) on an open workspace
    ("save_dataset", {"files": [], "name": "n", "saved_by": "a"}, "files", ValueError),
    ("save_dataset", {"files": "qrels.txt", "name": "n", "saved_by": "a"}, "files",
     TypeError),
    ("save_dataset", {"files": [("qrel", "q.txt", QRELS)], "name": "n", "saved_by": "a"},
     "files", ValueError),
    ("save_dataset", {"files": [("run", "r.txt", "text")], "name": "n", "saved_by": "a"},
     "files", TypeError),
    ("save_dataset", {"files": [("run", "r.txt", BM25), ("run", "r.txt", NEURAL)],
                      "name": "n", "saved_by": "a"}, "files", ValueError),
    ("save_dataset", {"files": [("qrels", "a", QRELS), ("qrels", "b", QRELS)],
                      "name": "n", "saved_by": "a"}, "files", ValueError),
    ("save_dataset", {"files": [("run", "r.txt", BM25)], "name": 3, "saved_by": "a"},
     "name", TypeError),
    ("save_dataset", {"files": [("run", "r.txt", BM25)], "name": "n", "saved_by": ""},
     "saved_by", ValueError),
    ("save_dataset", {"files": [("run", "r.txt", BM25)], "name": "n", "saved_by": "a",
                      "note": None}, "note", TypeError),
    ("get_dataset", {"dataset_id": "abc"}, "dataset_id", ValueError),
    ("get_dataset", {"dataset_id": "xyz0123456789"}, "dataset_id", ValueError),
    ("get_dataset", {"dataset_id": 12345678}, "dataset_id", TypeError),
    ("read_file", {"dataset_id": "zz", "position": 0}, "dataset_id", ValueError),
    ("delete_dataset", {"dataset_id": "", "confirm": ""}, "dataset_id", ValueError),
    ("add_note", {"dataset_id": "0" * 12, "target": "query q1", "text": "t",
                  "author": "a"}, "target", TypeError),
    ("add_note", {"dataset_id": "0" * 12, "target": Target.dataset(), "text": "",
                  "author": "a"}, "text", ValueError),
    ("add_note", {"dataset_id": "0" * 12, "target": Target.dataset(), "text": "t",
                  "author": "a", "kind": "todo"}, "kind", ValueError),
    ("add_note", {"dataset_id": "0" * 12, "target": Target.dataset(), "text": "t",
                  "author": "a", "supersedes": "3"}, "supersedes", TypeError),
    ("notes", {"kind": "decisions"}, "kind", ValueError),
    ("notes", {"target": ("query", "q1")}, "target", TypeError),
    ("notes", {"dataset_id": "not hex!"}, "dataset_id", ValueError),
]


def test_invalid_parameters(ws: Workspace) -> None:
    for i, (method, kwargs, param, error) in enumerate(BAD_CALLS):
        with pytest.raises(error, match=MESSAGE.format(
                param=param, function=rf"Workspace\.{method}")):
            getattr(ws, method)(**kwargs)
            pytest.fail(f"BAD_CALLS[{i}] ({method}, {param}) raised nothing")
    assert ws.usage() == WorkspaceUsage(0, 0, 0, 0, 0, 0)


def test_invalid_read_position(ws: Workspace) -> None:
    info = ws.save_dataset([("run", "r.txt", BM25)], name="n", saved_by="a")
    for bad, error in ((1, ValueError), (-1, ValueError), (True, TypeError), ("0", TypeError)):
        with pytest.raises(error, match=MESSAGE.format(
                param="position", function=r"Workspace\.read_file")):
            ws.read_file(info.id, bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind, key", [("topic", ""), ("dataset", "x"),
                                       ("comparison", "a|b|AP"), ("comparison", '["a","b"]'),
                                       ("query", "")])
def test_invalid_targets(kind: str, key: str) -> None:
    with pytest.raises(ValueError, match=r"^The '(kind|key)' parameter of Target must be"):
        Target(kind, key)


COLLIDING = (66_192, 114_133)
"""The pair :func:`colliding_prefix` finds first, searching r0, r1, ... in order."""


@cache
def colliding_prefix() -> tuple[list[tuple[str, str, bytes]], list[tuple[str, str, bytes]]]:
    """Two real datasets whose ids share their first 8 hex digits: one run ``b"x"`` named
    ``r{i}`` and one named ``r{j}``. The pair :data:`COLLIDING` was found by this search
    (114,134 ids); it is searched for again only if those ids no longer collide."""
    i, j = COLLIDING
    pair = [("run", f"r{i}", b"x")], [("run", f"r{j}", b"x")]
    if dataset_id_of(pair[0])[:8] == dataset_id_of(pair[1])[:8]:
        return pair
    seen: dict[str, int] = {}
    for i in range(2_000_000):
        prefix = dataset_id_of([("run", f"r{i}", b"x")])[:8]
        if prefix in seen:
            return [("run", f"r{seen[prefix]}", b"x")], [("run", f"r{i}", b"x")]
        seen[prefix] = i
    raise AssertionError("no collision found")  # pragma: no cover


def test_ambiguous_short_id(ws: Workspace) -> None:
    files_a, files_b = colliding_prefix()
    a = ws.save_dataset(files_a, name="a", saved_by="ana")
    b = ws.save_dataset(files_b, name="b", saved_by="ana")
    assert a.id[:8] == b.id[:8] and a.id != b.id
    with pytest.raises(WorkspaceError, match=rf"^dataset id {a.id[:8]} is ambiguous in "
                       r"workspace .+: it starts .+; give more characters$"):
        ws.get_dataset(a.id[:8])
    common = os.path.commonprefix([a.id, b.id])
    assert ws.get_dataset(a.id[:len(common) + 1]) == a
    assert ws.get_dataset(b.short_id if b.short_id != a.short_id else b.id) == b


# ------------------------------------------------------------------ where it lives
def test_default_location(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert default_url() == str(tmp_path / "xdg" / "ireval" / "workspace.db")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_url() == str(tmp_path / "home" / ".local/share/ireval/workspace.db")
    with Workspace.open() as ws:  # created on first use, folders included
        assert ws.url == f"sqlite:///{tmp_path}/home/.local/share/ireval/workspace.db"
    assert (tmp_path / "home/.local/share/ireval/workspace.db").is_file()
    monkeypatch.setenv(ENV_VAR, str(tmp_path / "team.db"))
    with Workspace.open() as ws:
        assert ws.url == f"sqlite:///{tmp_path}/team.db"
    monkeypatch.setenv(ENV_VAR, "postgres://ana:secret@db.example:5433/ireval")
    assert resolve_url(None).render_as_string(hide_password=False) == (
        "postgresql+psycopg://ana:secret@db.example:5433/ireval")


def test_urls() -> None:
    assert resolve_url("~/ws.db").database == str(Path.home() / "ws.db")
    assert resolve_url("rel/ws.db").database == str(Path.cwd() / "rel/ws.db")
    assert resolve_url("sqlite+pysqlite:////tmp/x.db").drivername == "sqlite"
    assert resolve_url("postgresql://u@h/d").drivername == "postgresql+psycopg"
    with pytest.raises(WorkspaceError, match=r"^unsupported workspace database 'mysql' in "
                       r"mysql://u:\*\*\*@h/d: use a SQLite file or PostgreSQL$"):
        resolve_url("mysql://u:pw@h/d")
    with pytest.raises(ValueError, match=MESSAGE.format(param="url",
                                                        function=r"Workspace\.open")):
        resolve_url("  ")


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_bytes(QRELS)  # a user pointing the workspace at the wrong file
    with pytest.raises(WorkspaceError, match=rf"^cannot read the schema version in workspace "
                       rf"sqlite:///{re.escape(str(path))}: .*file is not a database"):
        Workspace.open(str(path))
    assert path.read_bytes() == QRELS  # left untouched
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(WorkspaceError, match=r"^cannot open workspace sqlite:///.+/file/ws\.db: "):
        Workspace.open(str(blocker / "ws.db"))  # its folder cannot be created


def test_a_sqlite_writer_waits_then_says_the_workspace_is_busy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    import ireval_core.workspace._db as database

    monkeypatch.setattr(database, "BUSY_TIMEOUT", 0.3)
    path = tmp_path / "ws.db"
    with Workspace.open(str(path)) as ws:
        info = ws.save_dataset([("run", "r.txt", BM25)], name="n", saved_by="a")
        other = sqlite3.connect(path, isolation_level=None)  # another process's writer
        other.execute("BEGIN IMMEDIATE")
        try:
            assert ws.read_file(info.id, 0) == BM25  # readers do not wait (WAL)
            started = time.monotonic()
            with pytest.raises(WorkspaceError, match=r"^cannot save dataset 'm' in workspace "
                               r"sqlite:///.+: database is locked \(another writer held it "
                               r"for more than 0\.3 s\)$"):
                ws.save_dataset([("run", "r2.txt", NEURAL)], name="m", saved_by="a")
            assert time.monotonic() - started >= 0.25
        finally:
            other.execute("ROLLBACK")
            other.close()
        assert ws.save_dataset([("run", "r2.txt", NEURAL)], name="m", saved_by="a").name == "m"


def test_unreachable_server_is_a_clear_error() -> None:
    import socket

    with socket.socket() as s:  # a port held, never listened on: refused, and nobody
        s.bind(("127.0.0.1", 0))  # else (another test's server) can take it meanwhile
        port = s.getsockname()[1]
        with pytest.raises(WorkspaceError) as caught:
            Workspace.open(f"postgresql://ana:secret@127.0.0.1:{port}/ireval")
    message = str(caught.value)
    assert message.startswith(f"cannot read the schema version in workspace "
                              f"postgresql+psycopg://ana:***@127.0.0.1:{port}/ireval: ")
    assert "secret" not in message
    assert isinstance(caught.value, IrevalError)


def test_a_damaged_file_is_detected(ws: Workspace, url: str) -> None:
    info = ws.save_dataset([("run", "r.txt", BM25)], name="n", saved_by="a")
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.begin() as conn:
            conn.execute(sa.text("UPDATE blob_chunks SET codec = 'zlib', data = :d"),
                         {"d": zlib.compress(BM25.replace(b"bm25", b"BM25"), 1)})
    finally:
        engine.dispose()
    with pytest.raises(WorkspaceError, match=rf"^file 0 of dataset {info.short_id} is "
                       r"damaged in workspace .+: its bytes no longer match their SHA-256"):
        ws.read_file(info.id, 0)


def _open_new_file(path: str, go: Any, out: Any) -> None:  # in a forked process
    import sqlite3

    from ireval_core.workspace._db import wal

    go.wait()
    conn = sqlite3.connect(path, timeout=60, isolation_level=None)
    try:
        wal(conn.cursor())
        out.put("ok")
    except sqlite3.OperationalError as exc:
        out.put(str(exc))


def test_many_processes_switching_a_new_file_to_wal_all_succeed(tmp_path: Path) -> None:
    """SQLite may answer "database is locked" at once to processes switching a new file
    to WAL together, busy timeout or not (a full-suite CI run failed so); they retry."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    results: list[str] = []
    for trial in range(8):
        go, out = ctx.Event(), ctx.Queue()
        path = str(tmp_path / f"w{trial}.db")
        procs = [ctx.Process(target=_open_new_file, args=(path, go, out)) for _ in range(12)]
        for p in procs:
            p.start()
        go.set()
        results += [out.get(timeout=120) for _ in procs]
        for p in procs:
            p.join(timeout=120)
    assert results == ["ok"] * len(results)


def test_the_backend_fixtures_are_defined_once() -> None:
    """``url`` and ``ws`` (SQLite and the PostgreSQL test server) live in conftest.py, and
    neither workspace test module defines its own copy."""
    def fixtures(path: Path) -> set[str]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)
                and any("fixture" in ast.unparse(d) for d in node.decorator_list)}

    here = Path(__file__).resolve().parent
    assert {"url", "ws"} <= fixtures(here / "conftest.py")
    for module in ("test_workspace.py", "test_workspace_versions.py"):
        assert not {"url", "ws"} & fixtures(here / module), module
