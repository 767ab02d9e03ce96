"""Fuzzing the readers: mutated bytes of valid files either read or fail with a FormatError.

Seeds are small valid files of every format (TREC qrels and run, CSV, TSV, Parquet,
JSON, and gzip of each). Mutations flip, insert and delete bytes, truncate,
duplicate and swap lines, change line endings to CR or CRLF, and inject NULs, huge
numbers, quotes, tabs and bytes that are not UTF-8. Every mutated input goes to
both :func:`read_qrels` and :func:`read_runs`; the only outcomes allowed are

* a data set whose ids are non-empty one-line strings and whose values are finite, or
* a :class:`FormatError` naming the file, holding no chained exception, and not the
  reader's "this is a bug" fallback.

The labeling readers (:func:`ireval_core.labels.read_judgments` and
:func:`ireval_core.labels.gsb.read_gsb`) get the same treatment: mutated bytes of labeling and
GSB files (CSV, TSV, gzip), and Parquet files and Excel workbooks built with random
column types (numbers, booleans, dates, lists, structs, binary that is not UTF-8, nulls,
duplicate column names) and random cells (empty, control characters, huge numbers).
The only outcomes allowed are judgments whose ids are non-empty one-line strings and
whose positions are whole numbers >= 1, or a :class:`FormatError` naming the file.

The suite runs a bounded Hypothesis search (about 15 s; ``IREVAL_FULL_GRID=1``: three
times as many examples). A larger one-off run, outside the suite, prints the counts::

    PYTHONPATH=. .venv/bin/python tests/test_fuzz_readers.py 5000
"""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ireval_core import FormatError, read_qrels, read_runs
from ireval_core.data import Qrels, Run
from ireval_core.io import ReadLimits
from ireval_core.labels import Judgments, read_judgments
from ireval_core.labels.gsb import GsbJudgments, read_gsb

LIMITS = ReadLimits(max_inflated_bytes=8 * 1024**2, max_gzip_ratio=200)
FULL = bool(os.environ.get("IREVAL_FULL_GRID"))
"""``IREVAL_FULL_GRID=1``: the full search (about 40 s on the shared 2-core machine);
``make test`` runs a third of it, different examples each run (Hypothesis draws anew)."""
EXAMPLES = 5000 if FULL else 1700  # text and Parquet files of qrels and runs
LABEL_EXAMPLES = 1500 if FULL else 500  # labeling files are slower to build (Parquet, Excel)
WORKBOOK_EXAMPLES = 500 if FULL else 170  # Excel workbooks of qrels and runs


def _seeds() -> dict[str, bytes]:
    qrels = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "007", 2), ("q2", "d1", 3),
             ("q2", "d9", -1), ("0042", "d3", 1)]
    run = [("q1", "d2", 1, 0.5, "bm25"), ("q1", "d1", 2, 0.5, "bm25"),
           ("q1", "d7", 3, 0.25, "bm25"), ("q2", "d9", 1, 3.0, "bm25"),
           ("q1", "d1", 1, 1.5, "neural"), ("0042", "d3", 1, 2.0, "neural")]
    out = {
        "qrels.txt": "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels).encode(),
        "run.txt": "".join(f"{q} Q0 {d} {r} {s} {t}\n" for q, d, r, s, t in run).encode(),
        "qrels.csv": ("qid,docid,rel\n" + "".join(f"{q},{d},{g}\n" for q, d, g in qrels)).encode(),
        "run.csv": ("qid,docid,score,tag\n"
                    + "".join(f"{q},{d},{s},{t}\n" for q, d, _, s, t in run)).encode(),
        "qrels.tsv": ("query_id\tdoc_id\tlabel\n"
                      + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels)).encode(),
        "run.tsv": ("qid\tdocno\trank\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r, _, t in run
                                                   if t == "bm25")).encode(),
        "qrels.json": json.dumps({q: {d: g for qq, d, g in qrels if qq == q}
                                  for q, _, _ in qrels}).encode(),
        "run.json": json.dumps({q: {d: s for qq, d, _, s, t in run if qq == q and t == "bm25"}
                                for q, _, _, _, t in run if t == "bm25"}).encode(),
    }
    for name, rows, cols in (("qrels.parquet", qrels, ("qid", "docid", "rel")),
                             ("run.parquet", [(q, d, s, t) for q, d, _, s, t in run],
                              ("query", "doc_id", "score", "run"))):
        buf = io.BytesIO()
        pq.write_table(pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)}), buf)
        out[name] = buf.getvalue()
    return out


SEEDS = _seeds()

TOKENS = [b"\0", b"\r", b"\r\n", b"\n", b"\t", b" ", b"  ", b'"', b",", b"\xff", b"\xc3",
          b"\xe2\x80\xa8", b"\xc2\x85", b"\x0b", b"9" * 400, b"1e400", b"-inf", b"nan", b"1_0",
          b"true", b"NA", b"\x1f\x8b", b"PAR1", b"{", b"}", b"[" * 50, b"\xef\xbb\xbf", b"007",
          b"qid", b"Q0", b'"a\nb"', b"\\u0000", b"1" * 30]


def _flip(data: bytes, rnd: random.Random) -> bytes:
    if not data:
        return data
    i = rnd.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rnd.randrange(8))]) + data[i + 1:]


def _insert_token(data: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + rnd.choice(TOKENS) + data[i:]


def _insert_bytes(data: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + rnd.randbytes(rnd.randint(1, 8)) + data[i:]


def _delete(data: bytes, rnd: random.Random) -> bytes:
    if not data:
        return data
    i = rnd.randrange(len(data))
    return data[:i] + data[i + rnd.randint(1, 16):]


def _truncate(data: bytes, rnd: random.Random) -> bytes:
    return data[: rnd.randrange(len(data) + 1)]


def _duplicate_line(data: bytes, rnd: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    i = rnd.randrange(len(lines))
    return b"".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])


def _swap_lines(data: bytes, rnd: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if len(lines) < 2:
        return data
    i, j = rnd.sample(range(len(lines)), 2)
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def _line_endings(data: bytes, rnd: random.Random) -> bytes:
    return data.replace(b"\n", rnd.choice([b"\r", b"\r\n", b"\n\n", b"\r\r\n"]))


def _replace_field(data: bytes, rnd: random.Random) -> bytes:
    fields = list(re.finditer(rb"[^\s,\"{}:]+", data))
    if not fields:
        return data
    m = rnd.choice(fields)
    return data[: m.start()] + rnd.choice(TOKENS) + data[m.end():]


def _inject_nul(data: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + b"\0" * rnd.randint(1, 3) + data[i:]


MUTATIONS: list[Callable[[bytes, random.Random], bytes]] = [
    _flip, _insert_token, _insert_bytes, _delete, _truncate, _duplicate_line, _swap_lines,
    _line_endings, _replace_field, _inject_nul]

_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def mutated_input(seed: str, rnd: random.Random) -> tuple[bytes, str]:
    """One fuzz case: mutated bytes and the name they are read under."""
    data = SEEDS[seed]
    mode = rnd.choice(["plain", "plain", "gzip-after", "gzip-before"])
    if mode == "gzip-before":  # a valid gzip of a mutated file
        for _ in range(rnd.randint(1, 4)):
            data = rnd.choice(MUTATIONS)(data, rnd)
        data = gzip.compress(data, mtime=0)
    else:
        if mode == "gzip-after":  # a mutated gzip stream
            data = gzip.compress(data, mtime=0)
        for _ in range(rnd.randint(1, 4)):
            data = rnd.choice(MUTATIONS)(data, rnd)
    name = seed + (".gz" if mode != "plain" else "") if rnd.random() < 0.8 else "upload"
    return data, name


def outcome(reader: Callable[..., object], data: bytes, name: str) -> str:
    """``"accepted"`` or ``"format-error"``; any other outcome raises AssertionError."""
    try:
        result = reader(data, name=name, limits=LIMITS)
    except FormatError as err:
        assert type(err) is FormatError, repr(err)
        assert err.source == name, str(err)
        assert err.__context__ is None and err.__cause__ is None
        assert "bug in ireval" not in err.message, str(err)
        assert "\n" not in str(err), str(err)
        return "format-error"
    datasets = result if isinstance(result, list) else [result]
    assert datasets and all(isinstance(d, Qrels | Run) for d in datasets)
    for d in datasets:
        ids = list(d.query_ids) + d.doc_ids.to_pylist()
        assert all(isinstance(i, str) and i and not _BAD_CHAR.search(i) for i in ids), ids
        values = d.grade if isinstance(d, Qrels) else d.score
        assert np.isfinite(values).all()
        assert len(values) > 0
        if isinstance(d, Run):
            assert d.name and not _BAD_CHAR.search(d.name)
    return "accepted"


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(sorted(SEEDS)), rnd=st.randoms(use_true_random=False))
def test_mutated_inputs_read_or_fail_cleanly(seed, rnd):
    data, name = mutated_input(seed, rnd)
    outcome(read_qrels, data, name)
    outcome(read_runs, data, name)


def test_seeds_are_valid():
    """Every seed reads as what it is (so the fuzz starts from valid files)."""
    for name, data in SEEDS.items():
        reader = read_qrels if name.startswith("qrels") else read_runs
        packed = gzip.compress(data, mtime=0)
        for blob, shown in ((data, name), (packed, name + ".gz"), (data, "upload")):
            assert outcome(reader, blob, shown) == "accepted", shown


# ----------------------------------------------------------------------------- labeling files

LABEL_ROWS = [("2026-05", "control", "q1", "d1", 1, "ann", "high", 0.9),
              ("2026-05", "control", "q1", "007", 2, "bo", "low", 0.4),
              ("2026-05", "control", "q2", "d1", 1, "ann", "mid", 0.7),
              ("2026-06", "treatment", "q1", "d9", 1, "bo", "none", 0.2),
              ("2026-06", "treatment", "0042", "d3", 1, "ann", "high", 0.8)]
LABEL_COLUMNS = ("month", "system", "qid", "docid", "pos", "rater", "grade", "score")
GSB_ROWS = [("2026-05", "q1", "G", "ann"), ("2026-05", "q2", "S", "bo"),
            ("2026-06", "q1", "B", "ann"), ("2026-06", "0042", "Better", "bo")]
GSB_COLUMNS = ("round", "query", "judgment", "rater")


def _delimited(columns: tuple[str, ...], rows: list[tuple[object, ...]], sep: str) -> bytes:
    return (sep.join(columns) + "\n"
            + "".join(sep.join(str(v) for v in r) + "\n" for r in rows)).encode()


LABEL_SEEDS = {
    "labels.csv": _delimited(LABEL_COLUMNS, LABEL_ROWS, ","),
    "labels.tsv": _delimited(LABEL_COLUMNS, LABEL_ROWS, "\t"),
    "gsb.csv": _delimited(GSB_COLUMNS, GSB_ROWS, ","),
    "gsb.tsv": _delimited(GSB_COLUMNS, GSB_ROWS, "\t"),
}

# a column of a random table: (arrow type or None for "let pyarrow choose", value maker)
_CELLS: list[Callable[[random.Random, object], object]] = [
    lambda rnd, v: v,
    lambda rnd, v: v,
    lambda rnd, v: v,
    lambda rnd, v: None,
    lambda rnd, v: "",
    lambda rnd, v: " " + str(v),
    lambda rnd, v: str(v) + rnd.choice(["\n", "\t", "\0", "\r", "\x1f", "\u2028", "\x85"]),
    lambda rnd, v: rnd.choice([10**30, -1, 0, 1e300, float("nan"), float("inf"), 2.5, 7]),
    lambda rnd, v: rnd.choice(["NA", "nan", "true", "1e5", "٣", "x" * 300]),
]


def _column(rnd: random.Random, values: list[object]) -> pa.Array:
    """``values`` (mutated cell by cell) as an Arrow column of a random type."""
    cells = [rnd.choice(_CELLS)(rnd, v) if rnd.random() < 0.3 else v for v in values]
    kind = rnd.choice(["as-is", "as-is", "as-is", "string", "large_string", "int", "float",
                       "bool", "binary", "bad-binary", "null", "list", "struct", "dict",
                       "timestamp", "date", "decimal", "dict-int", "map"])
    n = len(cells)
    if kind == "string":
        return pa.array([None if c is None else str(c) for c in cells], pa.string())
    if kind == "large_string":
        return pa.array([None if c is None else str(c) for c in cells], pa.large_string())
    if kind == "int":
        return pa.array([rnd.randint(-3, 10**rnd.randint(1, 18)) for _ in range(n)])
    if kind == "float":
        return pa.array([rnd.choice([0.5, 1.0, 2.0, -1.0, float("nan"), 1e308, 3.0])
                         for _ in range(n)])
    if kind == "bool":
        return pa.array([rnd.random() < 0.5 for _ in range(n)])
    if kind == "binary":
        return pa.array([str(c).encode() for c in cells], pa.binary())
    if kind == "bad-binary":
        return pa.array([b"\xff\xfe" + str(c).encode() for c in cells], pa.binary())
    if kind == "null":
        return pa.nulls(n)
    if kind == "list":
        return pa.array([[rnd.randint(0, 3)] for _ in range(n)])
    if kind == "struct":
        return pa.array([{"a": rnd.randint(0, 3)} for _ in range(n)])
    if kind == "map":
        return pa.array([[("k", 1)] for _ in range(n)], pa.map_(pa.string(), pa.int64()))
    if kind == "dict":
        return pa.array([None if c is None else str(c) for c in cells]).dictionary_encode()
    if kind == "dict-int":
        return pa.array([rnd.randint(0, 3) for _ in range(n)]).dictionary_encode()
    if kind == "timestamp":
        return pa.array([rnd.randint(0, 2**40) for _ in range(n)], pa.timestamp("ms"))
    if kind == "date":
        return pa.array([rnd.randint(0, 30000) for _ in range(n)], pa.date32())
    if kind == "decimal":
        return pa.array([rnd.randint(0, 99) for _ in range(n)], pa.decimal128(10, 2))
    try:
        return pa.array(cells)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return pa.array([None if c is None else str(c) for c in cells], pa.string())


def _random_table(rnd: random.Random, columns: tuple[str, ...],
                  rows: list[tuple[object, ...]]) -> tuple[list[str], list[pa.Array]]:
    names = list(columns)
    arrays = [_column(rnd, [r[i] for r in rows]) for i in range(len(columns))]
    if rnd.random() < 0.15:  # a column written twice
        i = rnd.randrange(len(names))
        names.append(names[i])
        arrays.append(_column(rnd, [r[i] for r in rows]))
    if rnd.random() < 0.15:  # a column missing
        i = rnd.randrange(len(names))
        del names[i], arrays[i]
    if rnd.random() < 0.1:  # no rows
        arrays = [a[:0] for a in arrays]
    return names, arrays


def _parquet(rnd: random.Random, columns: tuple[str, ...], rows: list[tuple[object, ...]]
             ) -> bytes:
    names, arrays = _random_table(rnd, columns, rows)
    buf = io.BytesIO()
    pq.write_table(pa.Table.from_arrays(arrays, names=names), buf)
    data = buf.getvalue()
    if rnd.random() < 0.2:
        data = rnd.choice(MUTATIONS)(data, rnd)
    return data


def _xlsx(rnd: random.Random, columns: tuple[str, ...], rows: list[tuple[object, ...]]
          ) -> bytes:
    import datetime

    import openpyxl

    book = openpyxl.Workbook()
    sheet = book.active
    header = list(columns)
    if rnd.random() < 0.15:
        del header[rnd.randrange(len(header))]
    sheet.append(header)
    for r in rows:
        cells: list[object] = []
        for v in r[:len(header)]:
            if rnd.random() < 0.3:
                v = rnd.choice([None, "", 10**20, -1, 0.5, True, 1e300,
                                datetime.datetime(2026, 5, 1, 12, 30), datetime.date(2026, 6, 1),
                                "q\tx", "x" * 300, str(v) + "\n"])  # (openpyxl refuses
            cells.append(v)                                         # other control chars)
        sheet.append(cells)
    if rnd.random() < 0.2:  # a second sheet, with other columns or none
        other = book.create_sheet("notes")
        other.append(["note"] if rnd.random() < 0.5 else header)
        other.append(["x"] * (1 if rnd.random() < 0.5 else len(header)))
    buf = io.BytesIO()
    book.save(buf)
    data = _timeless(buf.getvalue())
    if rnd.random() < 0.2:
        data = rnd.choice(MUTATIONS)(data, rnd)
    return data


def _timeless(data: bytes) -> bytes:
    """A workbook's bytes without the time it was saved at (openpyxl writes the clock
    into docProps/core.xml and the zip entries): the same draws give the same bytes, as
    hypothesis requires of a strategy (else FlakyStrategyDefinition when a second ticks
    between two runs of one case)."""
    import re
    import zipfile

    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == "docProps/core.xml":
                body = re.sub(rb"(<dcterms:(?:created|modified)[^>]*>)[^<]*",
                              rb"\g<1>2026-01-01T00:00:00Z", body)
            z.writestr(zipfile.ZipInfo(info.filename, (2026, 1, 1, 0, 0, 0)), body,
                       zipfile.ZIP_DEFLATED)
    return out.getvalue()


def labeling_input(rnd: random.Random) -> tuple[bytes, str, str]:
    """One labeling fuzz case: bytes, the name they are read under, and the reader
    (``"labels"`` or ``"gsb"``)."""
    reader = rnd.choice(["labels", "gsb"])
    columns, rows = (LABEL_COLUMNS, LABEL_ROWS) if reader == "labels" else (GSB_COLUMNS,
                                                                            GSB_ROWS)
    fmt = rnd.choice(["text", "text", "parquet", "parquet", "xlsx"])
    if fmt == "parquet":
        data, name = _parquet(rnd, columns, rows), f"{reader}.parquet"
    elif fmt == "xlsx":
        data, name = _xlsx(rnd, columns, rows), f"{reader}.xlsx"
    else:
        seed = rnd.choice([k for k in LABEL_SEEDS if k.startswith(reader[:3])])
        data, name = LABEL_SEEDS[seed], seed
        for _ in range(rnd.randint(1, 4)):
            data = rnd.choice(MUTATIONS)(data, rnd)
        if rnd.random() < 0.2:
            data, name = gzip.compress(data, mtime=0), name + ".gz"
    if rnd.random() < 0.2:
        name = "upload"  # no extension: the format is recognised from the content
    return data, name, reader


def labeling_outcome(reader: str, data: bytes, name: str) -> str:
    """``"accepted"`` or ``"format-error"``; any other outcome raises AssertionError."""
    try:
        result = (read_judgments((name, data)) if reader == "labels"
                  else read_gsb((name, data)))
    except FormatError as err:
        assert type(err) is FormatError, repr(err)
        assert err.source == name or (err.source == "label map" and reader == "labels"), \
            str(err)
        assert err.__context__ is None and err.__cause__ is None, repr(err.__context__)
        assert "bug in ireval" not in err.message, str(err)
        assert "\n" not in str(err), str(err)
        return "format-error"
    if isinstance(result, Judgments):
        ids = [*result.query_ids.tolist(), *result.round_names.tolist(),
               *result.system_names.tolist(), *result.doc_ids.to_pylist()]
        position = result.shown_position
        assert len(position) and np.all(position >= 1)
        assert np.all(position == np.floor(position))
    else:
        assert isinstance(result, GsbJudgments)
        ids = [*result.round.tolist(), *result.query.tolist()]
    assert all(isinstance(i, str) and i and not _BAD_CHAR.search(i) for i in ids), ids
    return "accepted"


@settings(max_examples=LABEL_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rnd=st.randoms(use_true_random=False))
def test_mutated_labeling_files_read_or_fail_cleanly(rnd):
    data, name, reader = labeling_input(rnd)
    labeling_outcome(reader, data, name)


WORKBOOK_TABLES = {
    "qrels": (("qid", "docid", "rel"),
              [("q1", "d1", 1), ("q1", "007", 0), (1048585, 7187158, 2), (1048585, 7.5, 3)]),
    "run": (("qid", "docid", "score", "tag"),
            [("q1", "d1", 2.5, "bm25"), ("q1", "007", 1, "bm25"), (1048585, 7187158, -3, "x"),
             (1048585, 7187158, 0.5, None)]),
}
"""Qrels and runs as Excel holds them (numbers and text), for the workbook fuzz."""


@settings(max_examples=WORKBOOK_EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rnd=st.randoms(use_true_random=False))
def test_mutated_workbooks_of_qrels_and_runs_read_or_fail_cleanly(rnd):
    kind = rnd.choice(["qrels", "run"])
    data = _xlsx(rnd, *WORKBOOK_TABLES[kind])
    name = rnd.choice([f"{kind}.xlsx", "upload"])
    outcome(read_qrels if kind == "qrels" else read_runs, data, name)
    if rnd.random() < 0.2:
        outcome(read_runs if kind == "qrels" else read_qrels, data, name)


def test_workbook_seeds_are_valid():
    """The workbook fuzz starts from workbooks that read."""
    for kind, (columns, rows) in WORKBOOK_TABLES.items():
        data = _plain_xlsx(columns, rows)
        reader = read_qrels if kind == "qrels" else read_runs
        for blob, shown in ((data, f"{kind}.xlsx"), (data, "upload"),
                            (gzip.compress(data, mtime=0), f"{kind}.xlsx.gz")):
            assert outcome(reader, blob, shown) == "accepted", shown


def _plain_xlsx(columns: tuple[str, ...], rows: list[tuple[object, ...]]) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    for r in [columns, *rows]:
        book.active.append(list(r))
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def test_labeling_seeds_are_valid():
    """Every labeling seed reads, plain and gzip (so the fuzz starts from valid files)."""
    for name, data in LABEL_SEEDS.items():
        reader = "labels" if name.startswith("labels") else "gsb"
        for blob, shown in ((data, name), (gzip.compress(data, mtime=0), name + ".gz")):
            assert labeling_outcome(reader, blob, shown) == "accepted", shown


def main(n: int, seed: int = 13) -> dict[str, Counter]:
    """The one-off run: ``n`` inputs, both readers each, and ``n // 3`` labeling files;
    prints and returns the counts."""
    rnd = random.Random(seed)
    counts = {"read_qrels": Counter(), "read_runs": Counter()}
    failures: list[tuple[str, str, bytes, str]] = []
    start = time.perf_counter()
    for _ in range(n):
        data, name = mutated_input(rnd.choice(sorted(SEEDS)), rnd)
        for reader in (read_qrels, read_runs):
            try:
                counts[reader.__name__][outcome(reader, data, name)] += 1
            except BaseException as exc:  # noqa: BLE001 - counted and shown, not hidden
                counts[reader.__name__]["other"] += 1
                failures.append((reader.__name__, name, data, f"{type(exc).__name__}: {exc}"))
    for _ in range(n // 3):
        data, name, kind = labeling_input(rnd)
        reader_name = "read_judgments" if kind == "labels" else "read_gsb"
        c = counts.setdefault(reader_name, Counter())
        try:
            c[labeling_outcome(kind, data, name)] += 1
        except BaseException as exc:  # noqa: BLE001 - counted and shown, not hidden
            c["other"] += 1
            failures.append((reader_name, name, data, f"{type(exc).__name__}: {exc}"))
    elapsed = time.perf_counter() - start
    for reader, c in counts.items():
        print(f"{reader}: tried {sum(c.values())}, format errors {c['format-error']}, "
              f"accepted {c['accepted']}, anything else {c['other']}")
    print(f"{n} + {n // 3} inputs in {elapsed:.1f} s")
    for reader, name, data, what in failures[:20]:
        print(f"  {reader} {name} {data[:80]!r}: {what[:200]}")
    return counts


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000,
         int(sys.argv[2]) if len(sys.argv) > 2 else 13)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rnd=st.randoms(use_true_random=False))
def test_mutated_judgment_groups_read_or_fail_cleanly(rnd):
    """``read_qrels_jg`` (``-R qrels_jg``): Qrels per group, or one clean FormatError."""
    from ireval_core.io.qrels_jg import read_qrels_jg

    data = b"301 0 d1 1\n301 1 d1 0\n# c\n302 1 d#2 2\n302 2 d3 -1\n"
    for _ in range(rnd.randint(1, 4)):
        data = rnd.choice(MUTATIONS)(data, rnd)
    for comments in (False, True):
        try:
            groups = read_qrels_jg(data, name="jg", limits=LIMITS, comments=comments)
        except FormatError as err:
            assert type(err) is FormatError and err.source == "jg", repr(err)
            assert err.__context__ is None and err.__cause__ is None
            assert "\n" not in str(err), str(err)
            continue
        for qrels in groups.values():
            assert np.isfinite(qrels.grade).all() and len(qrels.grade) > 0
            ids = list(qrels.query_ids) + qrels.doc_ids.to_pylist()
            assert all(isinstance(i, str) and i and not _BAD_CHAR.search(i) for i in ids)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(rnd=st.randoms(use_true_random=False))
def test_mutated_preferences_read_or_fail_cleanly(rnd):
    """``read_prefs`` (``-R prefs`` and ``-R qrels_prefs``): Preferences, or one clean
    FormatError."""
    from ireval_core.io.prefs import read_prefs

    seeds = {"prefs": b"1 u1 s1 d1 3\n1 u1 s1 d2 0\n# c\n1 u1 s2 d#3 2.5\n2 u2 s1 d1 1\n",
             "qrels_prefs": b"301 0 d1 1\n301 1 d1 0\n# c\n302 1 d#2 2\n302 2 d3 -1\n"}
    for kind, data in seeds.items():
        for _ in range(rnd.randint(1, 4)):
            data = rnd.choice(MUTATIONS)(data, rnd)
        for comments in (False, True):
            try:
                prefs = read_prefs(data, kind=kind, name="p", limits=LIMITS,
                                   comments=comments)
            except FormatError as err:
                assert type(err) is FormatError and err.source == "p", repr(err)
                assert err.__context__ is None and err.__cause__ is None
                assert "\n" not in str(err), str(err)
                continue
            assert len(prefs) > 0 and np.isfinite(prefs.rel).all()
            ids = [*prefs.qid, *prefs.jg, *prefs.jsg, *prefs.docid]
            assert all(isinstance(i, str) and i and not _BAD_CHAR.search(i) for i in ids)
            keys = set(zip(prefs.qid, prefs.jg, prefs.jsg, prefs.docid, strict=True))
            assert len(keys) == len(prefs)
