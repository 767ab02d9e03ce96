"""CSV and TSV with a header row: qrels and runs, labeling tables, query metadata.

Parsed by pyarrow's multi-threaded CSV reader, ids and other text columns as text
(``007`` stays ``007``, ``2026-05`` stays a month). When pyarrow rejects a file, a slow
pass with Python's :mod:`csv` module names the first bad line.

* :func:`read_delimited`: qrels or a run (columns by :func:`~.columns.choose_columns`);
* :func:`read_delimited_table`: a labeling or GSB table (a
  :class:`~ireval_core.io.table.RawTable`, rows located by line on demand);
* :func:`read_header` and :func:`read_text_columns`: query metadata, every column as
  text.
"""

from __future__ import annotations

import csv as _pycsv
import io as _io
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import DataWarning, FormatError, shorten
from .checks import (
    Problems,
    dup_message,
    find_problem,
    iter_lines,
    problem_message,
    tag_key,
    text_problem,
    value_problem,
)
from .columns import (
    QUERY_ALIASES,
    TEXT_KEYS,
    VALUE_KEY,
    VALUE_WORD,
    Kind,
    choose_columns,
    from_rank,
    resolve,
)
from .encoding import not_utf8
from .source import Source, one_line, parse_threads
from .table import RawTable, missing_error, pick

if TYPE_CHECKING:
    from _csv import Reader as _CsvReader  # what csv.reader returns

__all__ = ["RowCheck", "check_delimited_rows", "diagnose_delimited", "read_delimited",
           "read_delimited_table", "read_header", "read_text_columns"]


# ----------------------------------------------------------------------------- qrels and runs


def _header(src: Source, delimiter: str) -> tuple[list[str], int]:
    """The header's column names and its line number (the first non-empty line)."""
    head = src.head()
    size = len(head)
    head = head.removeprefix(b"\xef\xbb\xbf")  # pyarrow skips a UTF-8 byte order mark too
    line = b""
    lineno = 0
    for lineno, raw in iter_lines(head):
        line = raw.rstrip(b"\r\n")
        if line:
            if raw == line and size >= (1 << 16):
                raise FormatError("the header row is longer than 64 KiB", source=src.name,
                                  line=lineno)
            break
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(src, lineno, line, exc.start, "the header row") from None
    try:
        names = next(_pycsv.reader([text], delimiter=delimiter), [])
    except _pycsv.Error as exc:
        raise FormatError(f"the header row is not valid CSV ({one_line(str(exc))})",
                          source=src.name,
                          line=lineno, text=text) from None
    return names, lineno


def read_delimited(src: Source, kind: Kind, delimiter: str) -> tuple[pa.Table, list[DataWarning]]:
    """Qrels or a run from CSV/TSV: columns qid, docid, rel|score (+ tag), and warnings."""
    names, header_line = _header(src, delimiter)
    chosen, warnings = choose_columns(names, src, kind, header_line)
    types = {col: (pa.string() if k in TEXT_KEYS else pa.float64()) for k, col in chosen.items()}
    include = list(types)
    table = None
    arrow_error = ""
    for newlines_in_values in (False, True):  # a quoted line break needs the slow mode
        try:
            table = pacsv.read_csv(
                src.stream(),
                read_options=pacsv.ReadOptions(block_size=1 << 24, use_threads=parse_threads()),
                parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True,
                                                 newlines_in_values=newlines_in_values),
                convert_options=pacsv.ConvertOptions(
                    column_types=types, include_columns=include, null_values=[],
                    strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
        except pa.ArrowException as exc:
            arrow_error = str(exc)
            continue
        break
    if table is not None and (table.column_names != include or any(
            table.column(c).type != t for c, t in types.items())):
        table, arrow_error = None, "the header row was read differently"
    if table is None:
        raise diagnose_delimited(src, kind, delimiter) or FormatError(
            f"could not read as delimited text with a header row ({one_line(arrow_error)})",
            source=src.name)
    if table.num_rows == 0:
        raise FormatError(f"no {kind} rows after the header", source=src.name,
                          line=header_line)
    out = {k: table.column(col) for k, col in chosen.items()}
    del table
    if from_rank(warnings):
        out["score"] = pc.negate(out["score"])
    result = pa.table(out)
    found = find_problem(result, kind, edges=True)
    if found is not None:
        raise diagnose_delimited(src, kind, delimiter) or FormatError(
            problem_message(result, *found, edges=True), source=src.name)
    return result, warnings


def _text_lines(src: Source) -> Iterator[str]:
    """The lines of ``src`` decoded (endings kept); a line that is not UTF-8 raises
    :class:`~.encoding.NotUtf8` (the file is then decoded as a whole)."""
    data = src.data
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for lineno, raw in iter_lines(data):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise not_utf8(src, lineno, raw, exc.start) from None


def _data_rows(reader: _CsvReader) -> Iterator[tuple[int, list[str]]]:
    """``(line, row)`` for each data row of a :func:`csv.reader` over a whole file: the line
    the row starts on (a quoted field may span lines), blank lines skipped as pyarrow skips
    them, the header (the first row) too. Python's ``csv.Error`` passes through."""
    prev = 0
    header_seen = False
    for row in reader:
        start, prev = prev + 1, reader.line_num
        if not row:  # an empty line: pyarrow skips it too
            continue
        if not header_seen:
            header_seen = True
            continue
        yield start, row


class RowCheck(NamedTuple):
    """What the row-by-row pass finds on one data row of a CSV/TSV file: ``problem`` (what
    is wrong, or None), and for a good row the fields that may not repeat (``key``:
    query, document [, tag key]). A row the csv module cannot read ends the pass with a
    last check without ``text``."""

    line: int
    text: str | None
    problem: str | None
    key: tuple[str, ...]


def check_delimited_rows(src: Source, kind: Kind, delimiter: str, *,
                         first_line: int = 1) -> Iterator[RowCheck]:
    """The data rows of CSV/TSV text with a header, each checked as
    :func:`diagnose_delimited` checks it (field count, number, ids), lines numbered from
    ``first_line``. A bad header raises its :class:`FormatError` before any row."""
    names, header_line = _header(src, delimiter)
    chosen, warnings = choose_columns(names, src, kind, header_line)
    index = {k: names.index(col) for k, col in chosen.items()}
    value_key = VALUE_KEY[kind]
    word = "rank" if from_rank(warnings) else VALUE_WORD[value_key]
    reader = _pycsv.reader(_text_lines(src), delimiter=delimiter)
    rows = _data_rows(reader)
    shift = first_line - 1
    while True:
        try:
            got = next(rows, None)
        except _pycsv.Error as exc:
            yield RowCheck(reader.line_num + shift, None, f"malformed "
                           f"{'CSV' if delimiter == ',' else 'TSV'} ({one_line(str(exc))})", ())
            return
        if got is None:
            return
        start, row = got
        text = delimiter.join(row)
        if len(row) != len(names):
            yield RowCheck(start + shift, text, f"expected {len(names)} fields "
                           f"({shorten(delimiter.join(names))}), got {len(row)}", ())
            continue
        problem = None
        for key in TEXT_KEYS:
            if key in index and problem is None:
                problem = text_problem(row[index[key]], key, edges=True)
        if problem is None:
            problem = value_problem(row[index[value_key]], word, repr(chosen[value_key]))
        key_fields = () if problem is not None else (row[index["qid"]], row[index["docid"]]) + (
            (tag_key(row[index["tag"]]),) if "tag" in index else ())
        yield RowCheck(start + shift, text, problem, key_fields)


def diagnose_delimited(src: Source, kind: Kind, delimiter: str) -> FormatError | None:
    """Slow pass with Python's csv module naming the bad lines (only on failure).

    Rows are checked by :func:`check_delimited_rows`. Every bad line up to
    :data:`~.checks.MAX_PROBLEMS` is kept (wrong field count, bad number, bad id, a
    (query, document) given again), the rest counted; a line the csv module cannot read
    (a quote left open) ends the pass.
    """
    seen: dict[tuple[str, ...], int] = {}
    problems = Problems(src)
    for check in check_delimited_rows(src, kind, delimiter):
        if check.problem is not None:
            problems.add(check.line, check.problem, check.text)
            continue
        if check.key in seen:
            problems.add_error(dup_message(src, kind, seen[check.key], check.line,
                                           check.key[0], check.key[1], None))
            continue
        seen[check.key] = check.line
    return problems.error()


# ----------------------------------------------------------------------------- labeling tables


def read_delimited_table(src: Source, delimiter: str, aliases: Mapping[str, Sequence[str]],
                         required: Sequence[str], kind: str, *,
                         numeric: Sequence[str] = (), high_cardinality: Sequence[str] = ("doc",)
                    ) -> RawTable:
    """A labeling or GSB table from CSV/TSV: its columns found by ``aliases``."""
    head = src.head(1 << 16)
    raw = re.split(rb"\r\n|\r|\n", head, maxsplit=1)[0]
    try:
        first = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError as exc:
        raise not_utf8(src, 1, raw, exc.start, "the header row") from None
    try:
        header = tuple(next(_pycsv.reader([first], delimiter=delimiter), []))
    except _pycsv.Error as exc:  # a quote left open in the header
        problem = one_line(str(exc))
    else:
        problem = ""
    if problem:
        raise FormatError(f"could not read the header row ({problem})", source=src.name,
                          line=1)
    lines = _LineIndex(src, delimiter)
    stub = RawTable(src.name, "tsv" if delimiter == "\t" else "csv", {}, 0, header,
                    line_index=lines.upto)
    found = resolve(header, aliases)
    missing = [k for k in required if k not in found]
    if missing:
        raise missing_error(stub, missing, aliases, kind)
    if len(set(header)) != len(header):
        dup = next(h for h in header if header.count(h) > 1)
        raise stub.header_error(f"column {dup!r} appears twice in the header")
    # text columns stay text (ids keep leading zeros, months stay months), those with few
    # distinct values dictionary-coded by the reader itself, block by block; number
    # columns are parsed as numbers, empty cells null
    coded = pa.dictionary(pa.int32(), pa.string())
    text_types = {name: (pa.string() if key in high_cardinality else coded)
                  for key, name in found.items()}
    typed = dict(text_types)
    for key in numeric:
        if key in found:
            typed[found[key]] = pa.float64()

    def parse(types: dict[str, pa.DataType], newlines_in_values: bool) -> pa.Table:
        return pacsv.read_csv(
            src.stream(),
            read_options=pacsv.ReadOptions(block_size=1 << 24, use_threads=parse_threads()),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True,
                                              newlines_in_values=newlines_in_values),
            convert_options=pacsv.ConvertOptions(
                column_types=types, include_columns=list(found.values()),
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                null_values=[""]),
        )

    # parallel parsing with numbers typed first; a text cell in a number column (found
    # and named later, with its line) or a quoted line break needs the slower modes
    table, detail = None, ""
    attempts = [(typed, False), (text_types, False), (text_types, True)]
    for types, newlines in attempts[0 if typed != text_types else 1:]:
        try:
            table = parse(types, newlines)
            break
        except (pa.ArrowInvalid, pa.ArrowException) as exc:
            detail = str(exc)
    if table is None:
        raise _diagnose_table(src, delimiter, header, detail)
    stub = RawTable(stub.name, stub.fmt, {}, table.num_rows, header, line_index=lines.upto)
    return pick(stub, table, aliases, required, kind)


class _LineIndex:
    """Line number of each data row of a CSV/TSV file, computed only when a message
    needs one (a slow pass with Python's csv module up to that row)."""

    def __init__(self, src: Source, delimiter: str) -> None:
        self.src = src
        self.delimiter = delimiter
        self._known = np.zeros(0, dtype=np.int64)

    def upto(self, n: int) -> np.ndarray:
        if len(self._known) >= n:
            return self._known
        text = self.src.data.decode("utf-8", "replace").lstrip("\ufeff")
        reader = _pycsv.reader(_io.StringIO(text, newline=""), delimiter=self.delimiter)
        out: list[int] = []
        try:
            for start, _ in _data_rows(reader):
                out.append(start)
                if len(out) >= n:
                    break
        except _pycsv.Error:  # a line Python's reader refuses (a lone CR in a field):
            pass  # the rows after it are numbered as if one per line
        if len(out) < n:
            last = out[-1] if out else 1
            out += range(last + 1, last + 1 + n - len(out))
        self._known = np.asarray(out, dtype=np.int64)
        return self._known


def _diagnose_table(src: Source, delimiter: str, header: Sequence[str], detail: str) -> FormatError:
    """Name the first bad line of a delimited file pyarrow could not parse."""
    try:
        text = src.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _not_utf8_at(src, exc.start) from None
    reader = _pycsv.reader(_io.StringIO(text.lstrip("\ufeff"), newline=""),
                           delimiter=delimiter)
    first = True
    try:
        for row in reader:
            if not row:
                continue
            if first:
                first = False
                continue
            if len(row) != len(header):
                return FormatError(f"expected {len(header)} fields "
                                   f"({shorten(delimiter.join(header))}),"
                                   f" got {len(row)}", source=src.name, line=reader.line_num,
                                   text=delimiter.join(row))
    except _pycsv.Error as exc:
        return FormatError(f"could not read as delimited text ({one_line(str(exc))})",
                           source=src.name, line=reader.line_num + 1)
    return FormatError("could not read as delimited text with a header row "
                       f"({one_line(detail)})", source=src.name)


def _not_utf8_at(src: Source, offset: int) -> FormatError:
    """The error for the line of ``src`` holding byte ``offset``, which is not UTF-8."""
    data = src.data
    start = max(data.rfind(b"\n", 0, offset), data.rfind(b"\r", 0, offset)) + 1
    line = len(list(iter_lines(data[:start]))) + 1
    end = min([i for i in (data.find(b"\n", offset), data.find(b"\r", offset)) if i >= 0],
              default=len(data))
    return not_utf8(src, line, data[start:end], offset - start)


# ----------------------------------------------------------------------------- query metadata


def read_header(src: Source, delimiter: str) -> list[str]:
    """The header row of a query metadata file: one name per column, each once."""
    raw = src.head().split(b"\n", 1)[0]
    try:
        first = raw.decode("utf-8-sig").rstrip("\r")
    except UnicodeDecodeError as exc:
        raise not_utf8(src, 1, raw, exc.start, "the header row") from None
    if not first.strip():
        raise FormatError(f"expected a header row with a query column ({', '.join(QUERY_ALIASES)})"
                          ", got an empty line", source=src.name, line=1, text=first)
    header = [c.strip() for c in next(_pycsv.reader([first], delimiter=delimiter))]
    lower = [c.lower() for c in header]
    if len(set(lower)) != len(lower) or "" in lower:
        dup = next((c for c in header if lower.count(c.lower()) > 1), "")
        what = f"column {dup!r} appears twice" if dup else "a column has no name"
        raise FormatError(f"{what} in the header; each column needs its own name",
                          source=src.name, line=1, text=first)
    return header


def read_text_columns(src: Source, header: list[str], delimiter: str) -> dict[str, pa.Array]:
    """Every column as text (``""`` for an empty cell)."""
    try:
        table = pacsv.read_csv(
            src.stream(),
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in header}, null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowException):
        raise _diagnose_metadata(src, delimiter, len(header)) from None
    return {c: table.column(c).combine_chunks() for c in header}


def _diagnose_metadata(src: Source, delimiter: str, width: int) -> FormatError:
    """The first line that is not UTF-8 or has another number of fields than the header."""
    data = src.data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8_at(src, exc.start) from None
    reader = _pycsv.reader(_io.StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    for row in reader:
        line, start = start, reader.line_num + 1
        if row and line > 1 and len(row) != width:
            return FormatError(f"expected {width} fields as in the header, got {len(row)}",
                               source=src.name, line=line, text=delimiter.join(row))
    return FormatError("could not read as delimited text with a header row", source=src.name)
