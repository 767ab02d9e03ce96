"""Uploaded bytes are hashed once: the Data page's "already saved?" check takes each
file's SHA-256 from when it was read, and gives the id the workspace gives on saving."""

from __future__ import annotations

import hashlib

import pytest

from ireval_app import cache, workspace_glue
from ireval_core.workspace import Workspace, dataset_id_from_sha256, dataset_id_of

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
RUN_A = b"q1 Q0 d1 1 2.0 a\nq1 Q0 d2 2 1.0 a\nq2 Q0 d1 1 3.0 a\n"
RUN_B = b"q1 Q0 d2 1 2.0 b\nq2 Q0 d3 1 1.0 b\n"


def _files(meta: bool = False) -> list[tuple[str, str, bytes]]:
    files = [("qrels", "qrels.txt", QRELS), ("run", "a.txt", RUN_A), ("run", "b.txt", RUN_B)]
    return files + ([("metadata", "meta.csv", b"query,segment\nq1,x\nq2,y\n")] if meta else [])


@pytest.mark.parametrize("meta", [False, True])
def test_the_id_from_the_read_files_is_the_saved_id(meta: bool, tmp_path) -> None:  # noqa: ANN001
    files = _files(meta)
    read = cache.LoadedFiles(cache.load_qrels("qrels.txt", QRELS),
                             cache.load_run_files([("a.txt", RUN_A), ("b.txt", RUN_B)]))
    assert [f.sha256 for f in read.files] == [hashlib.sha256(d).hexdigest()
                                              for _, _, d in files[:3]]
    ws = Workspace.open(str(tmp_path / "ws.db"))
    saved = ws.save_dataset(files, name="x", saved_by="me")
    assert workspace_glue.dataset_id(files, read) == dataset_id_of(files) == saved.id


def test_files_that_do_not_match_what_was_read_are_hashed() -> None:
    files = _files()
    other = cache.LoadedFiles(cache.load_qrels("qrels.txt", QRELS + b"q3 0 d9 1\n"),
                              cache.load_run_files([("a.txt", RUN_B)]))  # other sizes
    assert workspace_glue.dataset_id(files, other) == dataset_id_of(files)
    assert workspace_glue.dataset_id(files, cache.LoadedFiles()) == dataset_id_of(files)


def test_a_digest_that_is_not_sha256_is_refused() -> None:
    with pytest.raises(ValueError, match="SHA-256"):
        dataset_id_from_sha256([("qrels", "q.txt", "abc")])


def test_reading_a_folder_or_an_upload_hashes_its_bytes_once(tmp_path, monkeypatch) -> None:  # noqa: ANN001
    """One SHA-256 per file: the cache key is its first 128 bits, no second hash function."""
    (tmp_path / "qrels.txt").write_bytes(QRELS)
    (tmp_path / "a.txt").write_bytes(RUN_A)
    real = hashlib.sha256
    made: list[Counting] = []

    class Counting:  # a SHA-256 object counting the bytes it hashes (folders: in a stream)
        def __init__(self, data: bytes = b"", **kw: object) -> None:
            self.inner, self.n, self.data = real(data, **kw), len(data), bytes(data)
            made.append(self)

        def update(self, data: bytes) -> None:
            self.n += len(memoryview(data))
            self.data += bytes(data)
            self.inner.update(data)

        def hexdigest(self) -> str:
            return self.inner.hexdigest()

    def hashed() -> list[int]:
        return [h.n for h in made]

    def counting(data: bytes = b"", **kw: object) -> Counting:
        return Counting(data, **kw)

    def refused(*a: object, **kw: object) -> object:
        raise AssertionError("a second hash function ran over the bytes")

    monkeypatch.setattr(hashlib, "sha256", counting)
    monkeypatch.setattr(hashlib, "blake2b", refused)
    loaded = cache.load_folder(tmp_path)
    assert loaded is not None
    files = [h.data for h in made if h.data in (QRELS, RUN_A)]
    assert sorted(files) == sorted([QRELS, RUN_A])  # each file once
    # the others are cache keys (the document map the dataset checks made while reading)
    assert all(QRELS not in h.data and RUN_A not in h.data for h in made
               if h.data not in (QRELS, RUN_A))
    assert [f.sha256 for f in loaded.files] == [real(QRELS).hexdigest(), real(RUN_A).hexdigest()]
    assert [f.digest for f in loaded.files] == [f.sha256[:32] for f in loaded.files]
    made.clear()
    upload = cache.load_runs("b.txt", RUN_B)
    assert hashed() == [len(RUN_B)] and upload.sha256 == real(RUN_B).hexdigest()
