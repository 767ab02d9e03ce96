"""Readers take a buffer in pyarrow's memory (the app reads data-folder files so): the same
qrels and runs as from bytes, gzip included, and no copy of the bytes."""

from __future__ import annotations

import gzip

import pyarrow as pa
import pytest

from ireval_core.errors import FormatError
from ireval_core.io import read_qrels, read_runs
from ireval_core.io.source import Source, arrow_copy

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = b"q1 Q0 d2 1 2.0 bm25\nq1 Q0 d1 2 2.0 bm25\nq2 Q0 d3 1 5.0 bm25\n"


@pytest.mark.parametrize("compress", [False, True])
def test_buffer_reads_as_bytes(compress: bool) -> None:
    def wrap(data: bytes) -> pa.Buffer:
        return arrow_copy(gzip.compress(data) if compress else data)

    assert (read_qrels(wrap(QRELS), name="q").to_dict()
            == read_qrels(QRELS, name="q").to_dict())
    got = read_runs(wrap(RUN), name="r.txt")
    assert [(r.name, r.to_dict()) for r in got] == [
        (r.name, r.to_dict()) for r in read_runs(RUN, name="r.txt")]


def test_buffer_is_parsed_in_place() -> None:
    buf = arrow_copy(RUN)
    src = Source.of(buf, "r.txt")
    stream = src.stream()
    assert stream.read_buffer().address == buf.address  # no copy into new memory


def test_errors_name_the_file_and_line() -> None:
    with pytest.raises(FormatError) as caught:
        read_runs(arrow_copy(RUN + b"q3 Q0 d4 1 high bm25\n"), name="r.txt")
    assert caught.value.source == "r.txt" and caught.value.line == 4
