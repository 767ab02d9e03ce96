"""A saved dataset's qrels with the Judging page's labels merged in, reopened through the
column cache: after a restart a reopen maps the merged qrels without reading a byte out
of the workspace (reads counted on a real SQLite workspace), with the numbers, SHA-256,
size and dataset key of the merged-and-parsed path, bit for bit; a new version of a
judging file misses; a damaged entry (the merged columns, or the record of their
SHA-256) is dropped and the qrels merged and parsed again to the same result."""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from ireval_app import cache, workspace_glue
from ireval_app.shared_cache import SHARED
from ireval_core.data import Qrels
from ireval_core.decisions import judging
from ireval_core.workspace import FileRounds, Workspace

QRELS = b"".join(f"q{q} 0 d{d} {(q + d) % 3}\n".encode() for q in range(1, 6)
                 for d in range(1, 9))
RUN = b"".join(f"q{q} Q0 d{d} {d} {10 - d}.5 bm25\n".encode() for q in range(1, 6)
               for d in range(3, 13))
ROUND = "2026-11"
NAME = judging.round_file_name(ROUND)


class CountingWorkspace(Workspace):
    """A real workspace that counts the files read out of it."""

    reads: list[int]

    def read_file(self, dataset_id: str, position: int, **kw: object) -> bytes:  # type: ignore[override]
        self.reads.append(position)
        return super().read_file(dataset_id, position, **kw)  # type: ignore[arg-type]


def _rows(extra: int = 0) -> list[judging.Judgment]:
    rows = [judging.Judgment(f"q{q}", f"d{d}", float((q * d) % 4), "ann",
                             f"2026-11-0{1 + d % 9}T10:00:00Z")
            for q in range(1, 6) for d in range(9, 13)]
    rows.append(judging.Judgment("q1", "d10", 3.0, "bob", "2026-11-02T10:00:00Z"))
    return rows + [judging.Judgment("q2", f"n{i}", 1.0, "ann", "2026-11-09T10:00:00Z")
                   for i in range(extra)]


def _judging_file(extra: int = 0) -> bytes:
    return judging.judgments_file(judging.FILE_PREFIX + ROUND, _rows(extra))


def _add(ws: Workspace, dataset_id: str, extra: int) -> int:
    info = ws.get_dataset(dataset_id)
    rounds = {f.name: FileRounds((), 0) for f in info.files if f.rounds is None}
    rounds[NAME] = FileRounds((judging.FILE_PREFIX + ROUND,), len(_rows(extra)))
    return ws.add_to_dataset(dataset_id, [("labels", NAME, _judging_file(extra))],
                             rounds=rounds, replace=True, saved_by="me").version


@pytest.fixture
def judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
           ) -> tuple[CountingWorkspace, str, int]:
    monkeypatch.setenv("IREVAL_CACHE_DIR", str(tmp_path / "columns"))
    monkeypatch.delenv("IREVAL_CACHE", raising=False)
    ws = CountingWorkspace(str(tmp_path / "ws.db"))
    ws.reads = []
    saved = ws.save_dataset([("qrels", "qrels.txt", QRELS), ("run", "bm25.txt", RUN)],
                            name="judged", saved_by="me")
    version = _add(ws, saved.id, 0)
    SHARED.clear()
    yield ws, saved.id, version
    SHARED.clear()
    ws.close()


def _merged_and_parsed(extra: int) -> cache.LoadedFile:
    """What the merge gives, read without any cache: the reference."""
    plain = cache.load_qrels("qrels.txt", QRELS)
    assert plain.qrels is not None
    text = judging.trec_qrels(judging.with_judgments(plain.qrels, _rows(extra)))
    return cache.load_qrels("qrels.txt", text)


def _same_qrels(a: Qrels, b: Qrels) -> None:
    for name in ("qcode", "dcode", "grade", "query_ids"):
        x, y = np.asarray(getattr(a, name)), np.asarray(getattr(b, name))
        assert x.dtype == y.dtype and x.shape == y.shape, name
        assert x.tobytes() == y.tobytes() if x.dtype != object else x.tolist() == y.tolist()
    assert pa.array(a.doc_ids).equals(pa.array(b.doc_ids))
    assert a.to_dict() == b.to_dict()


def _same_file(got: cache.LoadedFile, want: cache.LoadedFile) -> None:
    assert got.ok and want.ok and got.qrels is not None and want.qrels is not None
    assert (got.name, got.digest, got.sha256, got.size, got.comments) == (
        want.name, want.digest, want.sha256, want.size, want.comments)
    _same_qrels(got.qrels, want.qrels)


def _open(ws: CountingWorkspace, dataset_id: str, version: int | None = None
          ) -> cache.LoadedFiles:
    SHARED.clear()  # a restart: only the column cache remembers
    return workspace_glue.open_dataset(ws, dataset_id, version=version)[1]


def test_a_reopen_maps_the_judged_qrels_without_reading_the_workspace(
        judged: tuple[CountingWorkspace, str, int], monkeypatch: pytest.MonkeyPatch) -> None:
    ws, dataset_id, _ = judged
    first = _open(ws, dataset_id)
    assert sorted(ws.reads) == [0, 1, 2]  # qrels, run, judging file: read once
    reference = _merged_and_parsed(0)
    _same_file(first.qrels, reference)  # type: ignore[arg-type]
    assert reference.sha256 == hashlib.sha256(
        judging.trec_qrels(reference.qrels)).hexdigest()  # type: ignore[arg-type]
    ws.reads.clear()
    again = _open(ws, dataset_id)
    assert ws.reads == []  # nothing read out of the workspace
    _same_file(again.qrels, reference)  # type: ignore[arg-type]
    assert again.key == first.key
    monkeypatch.setenv("IREVAL_CACHE", "off")  # the cache off: merged and parsed again
    off = _open(ws, dataset_id)
    assert sorted(ws.reads) == [0, 1, 2]
    _same_file(off.qrels, reference)  # type: ignore[arg-type]
    assert off.key == first.key


def test_a_new_version_of_the_judging_file_misses(
        judged: tuple[CountingWorkspace, str, int]) -> None:
    ws, dataset_id, version = judged
    _open(ws, dataset_id)
    newer = _add(ws, dataset_id, 3)
    ws.reads.clear()
    got = _open(ws, dataset_id, newer)
    new_file = [f.position for f in ws.get_dataset(dataset_id, newer).files
                if f.kind == "labels"]
    assert ws.reads == new_file  # the new judging file alone (qrels and run mapped)
    _same_file(got.qrels, _merged_and_parsed(3))  # type: ignore[arg-type]
    assert ("q2", "n2") in {(q, d) for q, docs in got.qrels.qrels.to_dict().items()  # type: ignore[union-attr]
                            for d in docs}
    ws.reads.clear()
    old = _open(ws, dataset_id, version)  # the earlier version: still mapped
    assert ws.reads == []
    _same_file(old.qrels, _merged_and_parsed(0))  # type: ignore[arg-type]


@pytest.mark.parametrize("damaged", ["columns", "record"])
def test_a_damaged_entry_is_merged_and_parsed_again(
        damaged: str, judged: tuple[CountingWorkspace, str, int], tmp_path: Path) -> None:
    ws, dataset_id, _ = judged
    _open(ws, dataset_id)
    reference = _merged_and_parsed(0)
    folder = tmp_path / "columns"
    before = {p.name for p in folder.glob("*.arrow")}
    merged = list(folder.glob(f"{reference.sha256}-*.arrow"))
    assert len(merged) == 1
    plain = hashlib.sha256(QRELS).hexdigest()
    run = hashlib.sha256(RUN).hexdigest()
    record = [p for p in folder.glob("*.arrow")
              if not p.name.startswith((reference.sha256, plain, run))]
    assert len(record) == 1  # the record of the merged qrels' SHA-256 and size
    target = merged[0] if damaged == "columns" else record[0]
    data = bytearray(target.read_bytes())
    data[len(data) // 3] ^= 0xFF
    target.write_bytes(bytes(data))
    ws.reads.clear()
    got = _open(ws, dataset_id)
    assert ws.reads.count(2) == 1  # the judging file read again
    _same_file(got.qrels, reference)  # type: ignore[arg-type]
    assert {p.name for p in folder.glob("*.arrow")} == before  # written again
    ws.reads.clear()
    _same_file(_open(ws, dataset_id).qrels, reference)  # type: ignore[arg-type]
    assert ws.reads == []
