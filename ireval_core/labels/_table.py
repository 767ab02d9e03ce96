"""Low-level reading of labeling tables: CSV, TSV, Excel (.xlsx) and Parquet.

:func:`read_table` turns one input (a path, bytes, a binary file object, or a
``(name, bytes)`` pair; gzip is detected) into a :class:`RawTable`: the columns
found under their accepted names (aliases, case-insensitive), and where each row
came from, so that any later check can raise a
:class:`~ireval_core.errors.FormatError` naming the file and the line (CSV/TSV),
the sheet and row (Excel) or the row (Parquet, a DataFrame).

The format is recognised from the content (Parquet's ``PAR1``, the ZIP header of
an ``.xlsx`` workbook), then from the extension, then by counting tabs and commas
in the header line. CSV and TSV are parsed by pyarrow's multi-threaded reader: text
columns as text (ids keep their leading zeros, ``2026-05`` stays a month), the number
columns a reader names as numbers (with a fallback to text that finds the bad cell).

Other input kinds reuse it with their own aliases (the GSB reader of
:mod:`ireval_core.gsb` for one).

Errors
------
Every malformed input is a :class:`~ireval_core.errors.FormatError` naming the file and,
where there is one, the line (CSV/TSV), the sheet and row (Excel) or the row and column
(Parquet): a file that is not Parquet or Excel after all, a column of a type that is not
text or numbers (a Parquet list, struct or map), binary cells that are not UTF-8, a
column name written twice, a cell holding a line break, a tab or another control
character (ids, labels and rounds are one line of text). Ids are read as the text
written, never inferred (``007`` stays ``007``; a Parquet integer id column reads as
its decimal text). Readers wrapped in :func:`clean_errors` raise a ``FormatError``
without ``__context__`` or ``__cause__``, so that nothing of the input stays reachable
from a kept error.

>>> t = read_table(("l.csv", b"month,qid,docid,pos,grade\\n2026-05,q1,d1,1,high\\n"), LABEL_ALIASES)
>>> sorted(t.columns), t.n_rows, t.location(0)
(['doc', 'label', 'position', 'query', 'round'], 1, 'l.csv:2')
"""

from __future__ import annotations

import csv as _pycsv
import datetime as _dt
import functools
import io as _io
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, ParamSpec, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ..errors import FormatError
from ..io import (
    Source,
    _release,  # frees the frames of a failed read (shared with io)
)

__all__ = ["LABEL_ALIASES", "REQUIRED_LABEL_COLUMNS", "RawTable", "SourceLike", "clean_errors",
           "read_table", "table_from_arrow"]

_P = ParamSpec("_P")
_T = TypeVar("_T")

SourceLike = str | Path | bytes | bytearray | memoryview | BinaryIO | tuple[str, bytes]
"""One input: a path, raw bytes, a binary file object, or ``(name, bytes)`` (an upload)."""

LABEL_ALIASES: dict[str, tuple[str, ...]] = {
    "round": ("round", "month", "date", "period", "batch"),
    "query": ("qid", "query_id", "query", "topic", "topic_id", "queryid", "q_id"),
    "doc": ("docid", "doc_id", "docno", "document_id", "doc", "pid", "passage_id",
            "corpus_id"),
    "position": ("position", "pos", "rank"),
    "label": ("label", "grade", "rel", "relevance", "rating", "judgment", "judgement"),
    "rater": ("rater", "annotator", "judge", "labeler", "labeller", "worker"),
    "system": ("system", "bucket", "arm", "tag", "run"),
    "score": ("score", "model_score", "prob"),
    "segment": ("segment", "bucket_type", "traffic", "tier"),
    "weight": ("weight", "sampling_weight", "w"),
}
"""Accepted column names of a labeling file, per column (first match wins)."""

REQUIRED_LABEL_COLUMNS = ("round", "query", "doc", "position", "label")
"""Columns every labeling file must have."""


@dataclass(frozen=True, eq=False)
class RawTable:
    """The columns of one input under their canonical names, and each row's origin.

    Attributes
    ----------
    name:
        The file name used in messages.
    fmt:
        ``"csv"``, ``"tsv"``, ``"xlsx"``, ``"parquet"`` or ``"frame"``.
    columns:
        Canonical column name -> pyarrow column, as read (text for CSV/TSV and
        Excel; the file's own types for Parquet and DataFrames).
    n_rows:
        Number of data rows.
    header:
        The header as written in the file.
    """

    name: str
    fmt: str
    columns: dict[str, pa.ChunkedArray]
    n_rows: int
    header: tuple[str, ...] = ()
    names: dict[str, str] = field(default_factory=dict)
    _lines: Callable[[int], np.ndarray] | None = field(default=None, repr=False)
    _sheet_rows: tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None = field(
        default=None, repr=False)
    _text: dict[str, pa.ChunkedArray] = field(default_factory=dict, repr=False)

    def where(self, row: int) -> tuple[int | None, str]:
        """``(line, prefix)`` of a 0-based data row: the 1-based line of a CSV/TSV file
        (``prefix`` empty), or no line and ``"sheet 'S', row N"`` / ``"row N"``."""
        if self.fmt in ("csv", "tsv"):
            return int(self._line_numbers(row + 1)[row]), ""
        if self._sheet_rows is not None:
            sheet_of, row_of, sheets = self._sheet_rows
            return None, f"sheet {sheets[int(sheet_of[row])]!r}, row {int(row_of[row])}"
        return None, f"row {row + 1}"

    def location(self, row: int) -> str:
        """Where a row is, in one piece: ``file:line`` or ``file, sheet 'S', row N``."""
        line, prefix = self.where(row)
        return f"{self.name}:{line}" if line is not None else f"{self.name}, {prefix}"

    def short(self, row: int) -> str:
        """Where a row is within its file: ``line 5``, ``sheet 'S', row 5`` or ``row 5``."""
        line, prefix = self.where(row)
        return f"line {line}" if line is not None else prefix

    def error(self, row: int | None, message: str, text: str | None = None) -> FormatError:
        """A :class:`FormatError` located at a 0-based data row (``None``: the file)."""
        if row is None:
            return FormatError(message, source=self.name)
        line, prefix = self.where(row)
        if line is not None:
            return FormatError(message, source=self.name, line=line, text=text)
        return FormatError(f"{prefix}: {message}", source=self.name, text=text)

    def header_error(self, message: str) -> FormatError:
        """A :class:`FormatError` about the header (line 1 of a CSV/TSV file)."""
        line = 1 if self.fmt in ("csv", "tsv") else None
        if self._sheet_rows is not None:
            return FormatError(f"sheet {self._sheet_rows[2][0]!r}: {message}", source=self.name)
        return FormatError(message, source=self.name, line=line)

    def _line_numbers(self, upto: int) -> np.ndarray:
        if self._lines is None:  # pragma: no cover - set for every CSV/TSV table
            return np.arange(2, upto + 2)
        return self._lines(upto)

    # ------------------------------------------------------------------ typed columns

    def text(self, key: str) -> pa.ChunkedArray:
        """Column ``key`` as text (numbers written without a trailing ``.0``; empty = "").

        A dictionary-coded text column is returned coded. A column that is not text or
        numbers (a Parquet list, struct, map), binary cells that are not UTF-8 and cells
        holding a control character are a :class:`FormatError` naming the column (and
        the row)."""
        done = self._text.get(key)
        if done is not None:
            return done
        col = self._as_text(key, self.columns[key])
        row = _first_control_character(col)
        if row is not None:
            value = col[row].as_py()
            bad = _CONTROL.search(value)
            char = bad.group() if bad is not None else "?"
            named = _CHAR_NAMES.get(char, f"the control character U+{ord(char):04X}")
            raise self.error(row, f"{value[:40]!r} in column {self.header_name(key)!r} "
                             f"contains {named}; ids, labels and rounds must be one line "
                             "without tabs or control characters")
        self._text[key] = col
        return col

    def _as_text(self, key: str, col: pa.ChunkedArray) -> pa.ChunkedArray:
        kind = col.type.value_type if pa.types.is_dictionary(col.type) else col.type
        if pa.types.is_nested(kind) or pa.types.is_union(kind) or isinstance(
                kind, pa.ExtensionType):
            raise self.error(None, f"column {self.header_name(key)!r} holds {kind} values; "
                             "expected text or numbers")
        try:
            if pa.types.is_dictionary(col.type):
                if pa.types.is_string(col.type.value_type) and not col.null_count:
                    return col  # already coded text (the CSV reader's), kept as it is
                col = col.cast(pa.string())
            if pa.types.is_floating(col.type):
                arr = col.to_numpy()
                whole = np.isfinite(arr) & (arr == np.round(arr)) & (np.abs(arr) < 2**53)
                if whole.all():
                    col = pa.chunked_array([pa.array(arr.astype(np.int64))]).cast(pa.string())
                else:
                    col = col.cast(pa.string())
            elif not pa.types.is_string(col.type) and not pa.types.is_large_string(col.type):
                col = col.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
            problem = f"column {self.header_name(key)!r} holds {kind} values that are not text"
        else:
            return col.fill_null("") if col.null_count else col
        if pa.types.is_binary(kind) or pa.types.is_large_binary(kind):
            row = _first_invalid_utf8(col)
            raise self.error(row, f"column {self.header_name(key)!r} holds bytes that are "
                             "not UTF-8 text; save the file with text columns in UTF-8")
        raise self.error(None, problem + "; expected text or numbers")

    def numbers(self, key: str, what: str) -> np.ndarray:
        """Column ``key`` as float64; empty cells are NaN; text that is not a number is a
        :class:`FormatError` naming the row (``what`` names the column in messages)."""
        col = self.columns[key]
        if pa.types.is_integer(col.type) or pa.types.is_floating(col.type) or \
                pa.types.is_boolean(col.type) or pa.types.is_decimal(col.type):
            try:
                return np.asarray(col.cast(pa.float64()).to_numpy(), dtype=np.float64)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # e.g. decimal256 overflow
                pass
        text = self.text(key)
        if pa.types.is_dictionary(text.type):
            text = text.cast(pa.string())
        text = pc.utf8_trim_whitespace(text)
        empty = pc.equal(text, "")
        text = pc.if_else(empty, pa.scalar(None, pa.string()), text)
        try:
            values = text.cast(pa.float64())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values = None
        if values is None:
            raw = self.text(key).to_numpy(zero_copy_only=False)
            bad = _first_non_number(raw)
            raise self.error(bad, f"expected a number in the {what} column "
                             f"{self.header_name(key)!r}, got {raw[bad]!r}")
        return np.asarray(values.to_numpy(), dtype=np.float64)

    def header_name(self, key: str) -> str:
        """The column's name as written in the file."""
        return self.names.get(key, key)


_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CONTROL_RE2 = "[\\x00-\\x1f\\x7f-\\x{9f}\\x{2028}\\x{2029}]"
_CHAR_NAMES = {"\n": "a line break (\\n)", "\r": "a carriage return (\\r)", "\t": "a tab",
               "\x00": "a NUL byte", "\u2028": "a line separator (U+2028)",
               "\u2029": "a paragraph separator (U+2029)"}


def _first_control_character(col: pa.ChunkedArray) -> int | None:
    """Row of the first value holding a control character (C0, DEL, C1, U+2028/9), or None.

    Printable ASCII (every byte 0x20-0x7e) is ruled out from the bytes alone; other text
    goes through a regular expression (on the dictionary of a coded column)."""
    base = 0
    for chunk in col.chunks:
        values = chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk
        if len(values) and not _printable_ascii(values):
            hit = pc.match_substring_regex(values, _CONTROL_RE2).fill_null(False)
            if isinstance(chunk, pa.DictionaryArray):
                hit = pc.take(hit, chunk.indices).fill_null(False)
            rows = np.flatnonzero(hit.to_numpy(zero_copy_only=False))
            if rows.size:
                return base + int(rows[0])
        base += len(chunk)
    return None


def _printable_ascii(values: pa.Array) -> bool:
    data = values.buffers()[-1]
    if data is None:
        return True
    raw = np.frombuffer(data, dtype=np.uint8)
    return bool(raw.size == 0 or (raw.min() >= 0x20 and raw.max() <= 0x7E))


def _first_invalid_utf8(col: pa.ChunkedArray) -> int | None:
    """Row of the first binary value that is not UTF-8 (None when the column is text)."""
    base = 0
    for chunk in col.chunks:
        values = chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk
        for i, value in enumerate(values.to_pylist()):
            try:
                (value or b"").decode("utf-8")
            except UnicodeDecodeError:
                if isinstance(chunk, pa.DictionaryArray):
                    rows = np.flatnonzero(chunk.indices.to_numpy(zero_copy_only=False) == i)
                    if not rows.size:
                        continue
                    return base + int(rows[0])
                return base + i
        base += len(chunk)
    return None


def _one_line(text: str, limit: int = 160) -> str:
    """An exception's message on one line, cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def clean_errors(read: Callable[_P, _T]) -> Callable[_P, _T]:
    """Make ``read`` raise every :class:`FormatError` afresh, holding nothing of the input.

    A ``FormatError`` raised while another exception was handled keeps it as its
    ``__context__`` (with the frames, the bytes, the Arrow tables); the one raised here
    has no ``__context__`` or ``__cause__``, and the frames of the failed read are
    cleared. Running out of memory or nesting too deep is reported as a ``FormatError``
    too. Other exceptions (invalid arguments) pass unchanged.
    """

    @functools.wraps(read)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        failure: tuple[str, str | None, int | None, str | None]
        try:
            return read(*args, **kwargs)
        except FormatError as exc:
            failure = (exc.message, exc.source, exc.line, exc.text)
            _release(exc)
        except MemoryError as exc:
            failure = ("not enough memory to read this file", _names(args), None, None)
            _release(exc)
        except RecursionError as exc:
            failure = ("structure nested too deeply to read", _names(args), None, None)
            _release(exc)
        del args, kwargs
        message, source, line, text = failure
        raise FormatError(message, source=source, line=line, text=text)

    return wrapper


def _names(args: tuple[object, ...]) -> str | None:
    """The file name(s) of a reader's first argument (one source or a list of them)."""
    if not args:
        return None
    first = args[0]
    items = first if isinstance(first, list) else [first]
    names = [str(i[0]) if isinstance(i, tuple) and i else Path(i).name if isinstance(
        i, str | Path) else str(getattr(i, "name", "<input>")) for i in items]
    return ", ".join(names)[:120] or None


def _first_non_number(raw: np.ndarray) -> int:
    for i, value in enumerate(raw):
        text = str(value).strip()
        if not text:
            continue
        try:
            float(text)
        except ValueError:
            return i
    return 0  # pragma: no cover - only called when some value failed to parse


# --------------------------------------------------------------------------- reading


def _source(source: SourceLike) -> Source:
    if isinstance(source, tuple):
        name, data = source
        return Source.of(bytes(data), name=str(name))
    return Source.of(source)


def _detect(src: Source) -> str:
    head = src.head(8)
    if head[:4] == b"PAR1":
        return "parquet"
    if head[:4] == b"PK\x03\x04":
        return "xlsx"
    lower = src.name.lower().removesuffix(".gz")
    for ext, fmt in ((".parquet", "parquet"), (".pq", "parquet"), (".xlsx", "xlsx"),
                     (".tsv", "tsv"), (".csv", "csv")):
        if lower.endswith(ext):
            return fmt
    first = src.head(1 << 16).split(b"\n", 1)[0]
    return "tsv" if first.count(b"\t") > first.count(b",") else "csv"


def read_table(source: SourceLike, aliases: Mapping[str, Sequence[str]], *,
               required: Sequence[str] = (), kind: str = "labeling",
               numeric: Sequence[str] = ()) -> RawTable:
    """Read one CSV/TSV/XLSX/Parquet input and find its columns by alias.

    Parameters
    ----------
    source:
        A path, bytes, binary file object, or ``(name, bytes)``; gzip is detected.
    aliases:
        Canonical column name -> accepted header names (lower case), e.g.
        :data:`LABEL_ALIASES`. Other columns are ignored.
    required:
        Canonical names that must be found; a missing one is a
        :class:`FormatError` listing the accepted names.
    kind:
        What the file is, for messages (``"labeling"``, ``"GSB"``).
    numeric:
        Canonical names of number columns: CSV/TSV parse them as float64 directly
        (empty cells null) and fall back to text when a cell is not a number, so that
        :meth:`RawTable.numbers` can name its line.

    Raises
    ------
    FormatError
        Empty input, unreadable content (with the line), missing columns.
    """
    src = _source(source)
    if src.is_blank():
        raise FormatError(f"file is empty; expected a {kind} table with a header row "
                          f"({', '.join(required)})", source=src.name)
    fmt = _detect(src)
    if fmt == "parquet":
        table = _read_parquet(src, aliases)
        raw = RawTable(src.name, "parquet", {}, table.num_rows,
                       tuple(table.column_names))
        return _pick(raw, table, aliases, required, kind)
    if fmt == "xlsx":
        return _read_xlsx(src, aliases, required, kind)
    return _read_delimited(src, "\t" if fmt == "tsv" else ",", aliases, required, kind,
                           numeric=numeric)


def table_from_arrow(table: pa.Table, name: str, aliases: Mapping[str, Sequence[str]], *,
                     required: Sequence[str] = (), kind: str = "labeling") -> RawTable:
    """A :class:`RawTable` over an in-memory Arrow table (rows located as ``row N``)."""
    raw = RawTable(name, "frame", {}, table.num_rows, tuple(table.column_names))
    return _pick(raw, table, aliases, required, kind)


def _read_parquet(src: Source, aliases: Mapping[str, Sequence[str]],
                  high_cardinality: Sequence[str] = ("doc",)) -> pa.Table:
    """The columns named by ``aliases`` (all of them when none is); text columns with
    few distinct values are read dictionary-coded, as Parquet usually stores them
    (no string per row; document ids, with many distinct values, are read as text)."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(src.stream())
    except (pa.ArrowException, OSError, MemoryError) as exc:
        detail = _one_line(str(exc))
    else:
        detail = ""
    if detail:  # raised here, not in the except block: nothing of the input is chained
        raise FormatError(f"not a readable Parquet file ({detail})", source=src.name)
    found = _resolve(schema.names, aliases)
    for name in found.values():
        if schema.names.count(name) > 1:
            raise FormatError(f"column {name!r} appears twice in the Parquet file",
                              source=src.name)
    wanted = list(found.values()) or None
    coded = [name for key, name in found.items() if key not in high_cardinality
             and pa.types.is_string(schema.field(name).type)]
    try:
        table = pq.read_table(src.stream(), columns=wanted, read_dictionary=coded or None)
        # a damaged file can decode to arrays that break later kernels (dictionary
        # indices out of bounds, offsets past the data, text that is not UTF-8): check all
        table.validate(full=True)
        return table
    except MemoryError:
        detail = "not enough memory to read it"
    except (pa.ArrowException, OSError) as exc:
        detail = _one_line(str(exc))
    raise FormatError(f"not a readable Parquet file ({detail})", source=src.name)


def _resolve(header: Sequence[str], aliases: Mapping[str, Sequence[str]]) -> dict[str, str]:
    lower: dict[str, str] = {}
    for h in header:
        lower.setdefault(str(h).strip().lower().lstrip("\ufeff"), h)
    found: dict[str, str] = {}
    for key, names in aliases.items():
        for a in names:
            if a in lower and lower[a] not in found.values():
                found[key] = lower[a]
                break
    return found


def _missing_error(raw: RawTable, missing: Sequence[str], aliases: Mapping[str, Sequence[str]],
                   kind: str) -> FormatError:
    expected = "; ".join(f"{k}: one of {', '.join(aliases[k])}" for k in missing)
    return raw.header_error(f"missing column(s) in the {kind} header {list(raw.header)}; "
                            f"expected {expected}")


def _pick(raw: RawTable, table: pa.Table, aliases: Mapping[str, Sequence[str]],
          required: Sequence[str], kind: str) -> RawTable:
    found = _resolve(table.column_names, aliases)
    missing = [k for k in required if k not in found]
    if missing:
        raise _missing_error(raw, missing, aliases, kind)
    columns = {k: table.column(v) for k, v in found.items()}
    return RawTable(raw.name, raw.fmt, columns, raw.n_rows, raw.header, found, raw._lines,
                    raw._sheet_rows)


def _read_delimited(src: Source, delimiter: str, aliases: Mapping[str, Sequence[str]],
                    required: Sequence[str], kind: str, *,
                    numeric: Sequence[str] = (), high_cardinality: Sequence[str] = ("doc",)
                    ) -> RawTable:
    head = src.head(1 << 16)
    try:
        first = re.split(rb"\r\n|\r|\n", head, maxsplit=1)[0].decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        first = None
    if first is None:
        raise FormatError("line is not valid UTF-8; save the file as UTF-8", source=src.name,
                          line=1)
    try:
        header = tuple(next(_pycsv.reader([first], delimiter=delimiter), []))
    except _pycsv.Error as exc:  # a quote left open in the header
        problem = _one_line(str(exc))
    else:
        problem = ""
    if problem:
        raise FormatError(f"could not read the header row ({problem})", source=src.name,
                          line=1)
    lines = _LineIndex(src, delimiter)
    stub = RawTable(src.name, "tsv" if delimiter == "\t" else "csv", {}, 0, header,
                    _lines=lines.upto)
    found = _resolve(header, aliases)
    missing = [k for k in required if k not in found]
    if missing:
        raise _missing_error(stub, missing, aliases, kind)
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
            read_options=pacsv.ReadOptions(block_size=1 << 24),
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
        raise _diagnose(src, delimiter, header, detail)
    stub = RawTable(stub.name, stub.fmt, {}, table.num_rows, header, _lines=lines.upto)
    return _pick(stub, table, aliases, required, kind)


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
        prev = 0
        header_seen = False
        try:
            for row in reader:
                start, prev = prev + 1, reader.line_num
                if not row:  # an empty line: pyarrow skips it too
                    continue
                if not header_seen:
                    header_seen = True
                    continue
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


def _diagnose(src: Source, delimiter: str, header: Sequence[str], detail: str) -> FormatError:
    """Name the first bad line of a delimited file pyarrow could not parse."""
    try:
        text = src.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = src.data.count(b"\n", 0, exc.start) + 1
        return FormatError("line is not valid UTF-8; save the file as UTF-8",
                           source=src.name, line=lineno)
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
                return FormatError(f"expected {len(header)} fields ({delimiter.join(header)}),"
                                   f" got {len(row)}", source=src.name, line=reader.line_num,
                                   text=delimiter.join(row))
    except _pycsv.Error as exc:
        return FormatError(f"could not read as delimited text ({_one_line(str(exc))})",
                           source=src.name, line=reader.line_num + 1)
    return FormatError("could not read as delimited text with a header row "
                       f"({_one_line(detail)})", source=src.name)


# ----------------------------------------------------------------------------- Excel


def _cell_text(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 2**53:
            return str(int(value))
        return repr(value)
    if isinstance(value, _dt.datetime):
        if value.time() == _dt.time(0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, _dt.date):
        return value.isoformat()
    return str(value)


def _read_xlsx(src: Source, aliases: Mapping[str, Sequence[str]], required: Sequence[str],
               kind: str) -> RawTable:
    """Every sheet whose header has the required columns, rows kept with their numbers.

    Cells are turned into text as they would be written (``3`` not ``3.0``; a date
    cell as ``2026-05-01``). Blank rows are skipped; a sheet without a header with
    the required columns is ignored (notes, pivots), unless no sheet has one.
    """
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - openpyxl is in requirements.txt
        raise FormatError("reading Excel files needs openpyxl (pip install openpyxl)",
                          source=src.name) from None
    try:
        book = openpyxl.load_workbook(_io.BytesIO(src.data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged workbook
        damage = f"{type(exc).__name__}: {_one_line(str(exc))}"
    else:
        damage = ""
    if damage:  # raised here, not in the except block: nothing of the input is chained
        raise FormatError(f"not a readable Excel .xlsx workbook ({damage})", source=src.name)
    try:
        return _xlsx_table(src, book, aliases, required, kind)
    except FormatError:
        raise
    except Exception as exc:  # a damaged sheet found while reading its rows
        damage = f"{type(exc).__name__}: {_one_line(str(exc))}"
    finally:
        book.close()
    raise FormatError(f"not a readable Excel .xlsx workbook ({damage})", source=src.name)


def _xlsx_table(src: Source, book: object, aliases: Mapping[str, Sequence[str]],
                required: Sequence[str], kind: str) -> RawTable:
    """The rows of the sheets of an open workbook (see :func:`_read_xlsx`)."""
    sheets: list[str] = []
    header: tuple[str, ...] = ()
    names: dict[str, str] = {}
    cells: dict[str, list[str]] = {}
    sheet_of: list[int] = []
    row_of: list[int] = []
    first_problem: FormatError | None = None
    for ws in book.worksheets:  # type: ignore[attr-defined]
        rows = ws.iter_rows(values_only=True)
        sheet_header: tuple[str, ...] | None = None
        for number, values in enumerate(rows, start=1):
            texts = [_cell_text(v) for v in values]
            if not any(t.strip() for t in texts):
                continue
            if sheet_header is None:
                sheet_header = tuple(t.strip() for t in texts)
                while sheet_header and not sheet_header[-1]:
                    sheet_header = sheet_header[:-1]
                found = _resolve(sheet_header, aliases)
                missing = [k for k in required if k not in found]
                if missing:
                    if first_problem is None:
                        stub = RawTable(src.name, "xlsx", {}, 0, sheet_header,
                                        _sheet_rows=(np.zeros(0), np.zeros(0),
                                                     (ws.title,)))
                        first_problem = _missing_error(stub, missing, aliases, kind)
                    break
                if not sheets:
                    header, names = sheet_header, found
                    cells = {k: [] for k in found}
                elif set(found) != set(cells):
                    raise FormatError(
                        f"sheet {ws.title!r} has columns {sorted(found)}, but sheet "
                        f"{sheets[0]!r} has {sorted(cells)}; every sheet read must have "
                        "the same columns", source=src.name)
                sheets.append(ws.title)
                index = {k: sheet_header.index(v) for k, v in found.items()}
                continue
            for k, i in index.items():
                cells[k].append(texts[i] if i < len(texts) else "")
            sheet_of.append(len(sheets) - 1)
            row_of.append(number)
    if not sheets:
        raise first_problem or FormatError(f"no sheet holds a {kind} table", source=src.name)
    columns = {k: pa.chunked_array([pa.array(v, pa.string())]) for k, v in cells.items()}
    return RawTable(src.name, "xlsx", columns, len(sheet_of), header, names,
                    _sheet_rows=(np.asarray(sheet_of), np.asarray(row_of), tuple(sheets)))
