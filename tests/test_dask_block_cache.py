"""Dask text blocks kept in the column cache (:func:`ireval_core.io.dask_blocks.block_cache`) give
the frames and numbers of a parse.

With ``IREVAL_CACHE=yes`` in the worker's environment, a block read before is mapped: the
same frame column for column (dtypes included) on TREC and CSV files cut into several
blocks, and the same evaluation bit for bit; a damaged entry is dropped with a log line and
the block parsed again; a changed file misses; without the variable nothing is kept.
Dask's local scheduler runs the tasks in this process (the module's functions are what a
worker runs); the cluster itself is tested in ``test_distributed.py``.
"""

from __future__ import annotations

import logging
from pathlib import Path

import dask
import pandas as pd
import pytest
from test_id_shapes import make_data

from ireval_core import evaluate, read_qrels, read_runs
from ireval_core.distributed import evaluate_dask
from ireval_core.io.dask import read_qrels_dask, read_runs_dask

MEASURES = ["AP", "nDCG@10", "P@10", "RR", "bpref"]


def _write(tmp_path: Path, shape: str = "uuid") -> dict[str, Path]:
    qrels, run = make_data(shape, 3, 60)
    q = tmp_path / "qrels.txt"
    q.write_text("".join(f"{qid} 0 {d} {int(g)}\n" for qid, docs in qrels.items()
                         for d, g in docs.items()))
    trec = tmp_path / "run.txt"
    trec.write_text("".join(f"{qid} Q0 {d} 1 {s!r} {tag}\n" for tag in ("bm25", "dense")
                            for qid, docs in run.items() for d, s in docs.items()))
    csv = tmp_path / "run.csv"
    csv.write_text("qid,docid,score\n" + "".join(
        f"{qid},{d},{s!r}\n" for qid, docs in run.items() for d, s in docs.items()))
    return {"qrels": q, "trec": trec, "csv": csv}


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "columns"
    monkeypatch.setenv("IREVAL_CACHE", "yes")
    monkeypatch.setenv("IREVAL_CACHE_DIR", str(folder))
    return folder


def _frames(files: dict[str, Path]) -> list[pd.DataFrame]:
    with dask.config.set(scheduler="sync"):
        return [read_qrels_dask(str(files["qrels"]), blocksize=700).compute(),
                read_runs_dask(str(files["trec"]), blocksize=900).compute(),
                read_runs_dask(str(files["csv"]), blocksize=800).compute()]


def test_a_mapped_block_is_the_parsed_frame(tmp_path: Path, cache_on: Path) -> None:
    files = _write(tmp_path)
    parsed = _frames(files)  # parsed, and kept
    entries = sorted(cache_on.glob("*.arrow"))
    assert len(entries) > 6  # several blocks per file
    stamps = [p.stat().st_mtime_ns for p in entries]
    mapped = _frames(files)
    assert sorted(cache_on.glob("*.arrow")) == entries  # nothing new written
    assert [p.stat().st_mtime_ns for p in entries] != stamps  # each used (recently)
    for a, b in zip(parsed, mapped, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
        assert list(a.dtypes) == list(b.dtypes)


def test_the_evaluation_of_mapped_blocks_has_the_parsed_bits(
        tmp_path: Path, cache_on: Path) -> None:
    files = _write(tmp_path, "prefixed")
    want = evaluate(read_qrels(files["qrels"]), read_runs(files["trec"]), MEASURES)
    with dask.config.set(scheduler="sync"):  # the blocks evaluate_dask reads, kept
        read_qrels_dask(str(files["qrels"])).compute()
        read_runs_dask(str(files["trec"])).compute()
        entries = sorted(cache_on.glob("*.arrow"))
        got = evaluate_dask(str(files["qrels"]), str(files["trec"]), MEASURES)
    assert len(entries) == 2 and sorted(cache_on.glob("*.arrow")) == entries  # mapped
    assert got.systems == want.systems
    for key, v in want.values.items():
        assert got.values[key].tobytes() == v.tobytes(), key
        assert repr(got.aggregates[key]) == repr(want.aggregates[key])


def test_a_damaged_block_entry_is_dropped_and_parsed_again(
        tmp_path: Path, cache_on: Path, caplog: pytest.LogCaptureFixture) -> None:
    files = _write(tmp_path, "mixed")
    files = {"qrels": files["qrels"], "trec": files["trec"], "csv": files["csv"]}
    parsed = _frames(files)
    victim = sorted(cache_on.glob("*.arrow"))[0]
    raw = victim.read_bytes()
    victim.write_bytes(raw[:len(raw) // 2] + bytes([raw[len(raw) // 2] ^ 0x20])
                       + raw[len(raw) // 2 + 1:])
    with caplog.at_level(logging.WARNING, logger="ireval.cache"):
        again = _frames(files)
    assert any("dropped" in r.getMessage() and victim.name in r.getMessage()
               for r in caplog.records)
    for a, b in zip(parsed, again, strict=True):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    assert victim.exists()  # parsed again and kept again


def test_a_changed_file_misses_and_off_keeps_nothing(
        tmp_path: Path, cache_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    files = _write(tmp_path, "msmarco")
    _frames(files)
    n = len(list(cache_on.glob("*.arrow")))
    text = files["trec"].read_text()
    files["trec"].write_text(text.replace(" Q0 ", " Q0 x", 1))
    with dask.config.set(scheduler="sync"):
        changed = read_runs_dask(str(files["trec"]), blocksize=900).compute()
    assert changed["docid"].iloc[0].startswith("x")
    assert len(list(cache_on.glob("*.arrow"))) == n + 1  # the changed block only
    monkeypatch.delenv("IREVAL_CACHE")
    other = tmp_path / "other"
    monkeypatch.setenv("IREVAL_CACHE_DIR", str(other))
    _frames(files)
    assert not other.exists()
