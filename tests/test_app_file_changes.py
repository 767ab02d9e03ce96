"""A data folder's file that changes between its hash and its parse is never cached under
the digest of other bytes: it is hashed and parsed again, or the app says it changed.

The files are real files and the readers the real ones; the parse step is wrapped so that
it rewrites the file first, as an editor or a job writing the folder would between the app's
two steps.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path

import pytest

from ireval_app import cache

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d1 2\n"
RUN_A = b"q1 Q0 d1 1 2.0 changes_a\nq1 Q0 d2 2 1.0 changes_a\n"
RUN_B = b"q1 Q0 d2 1 2.0 changes_b\nq2 Q0 d1 1 1.0 changes_b\nq2 Q0 d3 2 0.5 changes_b\n"


def _rewriting(monkeypatch: pytest.MonkeyPatch, reader: str, path: Path,
               contents: list[bytes]) -> list[int]:
    """Wrap ``cache.<reader>`` so that each of its first ``len(contents)`` calls on ``path``
    first writes the next of ``contents`` there; returns the list counting the calls."""
    real: Callable[..., object] = getattr(cache, reader)
    calls: list[int] = []

    def rewrite_then_parse(data: object, **kw: object) -> object:
        if data == path:
            calls.append(1)
            if len(calls) <= len(contents):
                path.write_bytes(contents[len(calls) - 1])
        return real(data, **kw)

    monkeypatch.setattr(cache, reader, rewrite_then_parse)
    return calls


def _folder(tmp_path: Path, run: bytes = RUN_A) -> Path:
    """qrels.txt (its own bytes: the process-wide cache has not read them) and a.txt."""
    (tmp_path / "qrels.txt").write_bytes(QRELS + b"q4 0 %s 0\n" % tmp_path.name.encode())
    (tmp_path / "a.txt").write_bytes(run)
    return tmp_path


def test_a_run_changed_after_its_hash_is_hashed_and_parsed_again(tmp_path, monkeypatch
                                                                  ) -> None:
    folder = _folder(tmp_path)
    calls = _rewriting(monkeypatch, "parse_runs", folder / "a.txt", [RUN_B])
    loaded = cache.load_folder(folder)
    assert loaded is not None and len(calls) == 2  # the parse of RUN_B bytes, then again
    [run_file] = loaded.runs
    assert run_file.ok and [r.name for r in run_file.runs] == ["changes_b"]
    assert run_file.sha256 == hashlib.sha256(RUN_B).hexdigest()
    assert run_file.digest == run_file.sha256[:32]
    assert run_file.size == len(RUN_B)
    # nothing of RUN_B was cached under RUN_A's digest: the same name and bytes read as A
    upload = cache.load_runs("a.txt", RUN_A)
    assert [r.name for r in upload.runs] == ["changes_a"]


def test_qrels_changed_after_their_hash_are_read_again(tmp_path, monkeypatch) -> None:
    folder = _folder(tmp_path)
    other = (folder / "qrels.txt").read_bytes() + b"q3 0 d9 1\n"
    calls = _rewriting(monkeypatch, "read_qrels", folder / "qrels.txt", [other])
    loaded = cache.load_folder(folder)
    assert loaded is not None and len(calls) == 2
    assert loaded.qrels is not None and loaded.qrels.qrels is not None
    assert loaded.qrels.qrels.n_queries == 4
    assert loaded.qrels.sha256 == hashlib.sha256(other).hexdigest()


def test_a_file_that_keeps_changing_is_refused_with_what_to_do(tmp_path, monkeypatch
                                                                ) -> None:
    run = RUN_A.replace(b"changes_a", b"changes_c")
    folder = _folder(tmp_path, run)
    growing = [run + b"".join(b"q9 Q0 d%d 1 1.0 changes_c\n" % j for j in range(i + 1))
               for i in range(cache.READ_ATTEMPTS)]  # each longer than the one before
    calls = _rewriting(monkeypatch, "parse_runs", folder / "a.txt", growing)
    loaded = cache.load_folder(folder)
    assert loaded is not None and len(calls) == cache.READ_ATTEMPTS == 3
    [run_file] = loaded.runs
    assert not run_file.runs and run_file.error is not None
    assert str(run_file.error) == ("a.txt: the file changed while it was being read (3 "
                                   "times); reload the page once it is written")
    assert loaded.qrels is not None and loaded.qrels.ok  # the other files are read
    # none of the three parses was cached under the digest it was hashed with: uploads of
    # the bytes hashed (the same name, so the same cache key) read those bytes
    for data in (run, *growing[:-1]):
        [again] = cache.load_runs("a.txt", data).runs
        assert len(again) == data.count(b"\n"), data
    assert len(calls) == cache.READ_ATTEMPTS  # uploads are bytes, not the path
    # the folder as it now is reads on the next visit
    monkeypatch.undo()
    later = cache.load_folder(folder)
    assert later is not None and later.runs[0].ok
    assert later.runs[0].sha256 == hashlib.sha256(growing[-1]).hexdigest()
