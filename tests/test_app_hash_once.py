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
