"""A table found by column aliases, that knows where each of its rows came from.

:class:`RawTable` is what the labeling and GSB readers get from every format: the
columns found under their accepted names, and each row's origin, so that any later
check can raise a :class:`~ireval_core.errors.FormatError` naming the file and the line
(CSV/TSV), the sheet and row (Excel) or the row (Parquet, a DataFrame).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataWarning, FormatError, Problem, shorten
from .checks import (
    CHAR_NAMES,
    CONTROL_CHAR,
    first_control_character,
    first_invalid_utf8,
    first_non_number,
)
from .columns import resolve

__all__ = ["RawTable", "missing_error", "pick", "positions_in_order"]


def _number(text: str) -> float:
    """``text`` as a number, NaN when empty or not one (only on the error path)."""
    try:
        return float(text.strip()) if text.strip() else float("nan")
    except ValueError:
        return float("nan")


@dataclass(frozen=True, eq=False)
class RawTable:
    """The columns of one input under their canonical names, and each row's origin.

    Attributes
    ----------
    name:
        The file name used in messages.
    fmt:
        ``"csv"``, ``"tsv"``, ``"xlsx"``, ``"parquet"``, ``"labelstudio"``, ``"quepid"``
        or ``"frame"``.
    columns:
        Canonical column name -> pyarrow column, as read (text for CSV/TSV and
        Excel; the file's own types for Parquet and DataFrames).
    n_rows:
        Number of data rows.
    header:
        The header as written in the file.
    names:
        Canonical column name -> its name in the header.
    line_index:
        CSV/TSV (and Quepid's CSV): ``line_index(n)`` gives the 1-based line of each of
        the first ``n`` data rows (computed on demand, only when a message needs it).
    sheet_rows:
        Excel: each row's sheet (index into the third item, the sheet names) and row
        number in that sheet.
    warnings:
        What the reader noticed and did not refuse (Excel: hidden sheets left out, a
        round column mixing text and dates; the ``encoding`` of a file that was not
        UTF-8).
    encoding:
        The text encoding the file was read in (``"UTF-8"``, ``"GB18030"``,
        ``"UTF-16 LE"``, ...; see :mod:`~ireval_core.io.encoding`).
    place:
        Where a row is when it has no line or sheet row (a Label Studio export:
        ``place(row)`` is ``"task 3 (id 17), annotation 1"``).
    """

    name: str
    fmt: str
    columns: dict[str, pa.ChunkedArray]
    n_rows: int
    header: tuple[str, ...] = ()
    names: dict[str, str] = field(default_factory=dict)
    line_index: Callable[[int], np.ndarray] | None = field(default=None, repr=False)
    sheet_rows: tuple[np.ndarray, np.ndarray, tuple[str, ...]] | None = field(
        default=None, repr=False)
    warnings: tuple[DataWarning, ...] = ()
    encoding: str = "UTF-8"
    place: Callable[[int], str] | None = field(default=None, repr=False)
    _text: dict[str, pa.ChunkedArray] = field(default_factory=dict, repr=False)

    def where(self, row: int) -> tuple[int | None, str]:
        """``(line, prefix)`` of a 0-based data row: the 1-based line of a CSV/TSV file
        (``prefix`` empty), or no line and ``"sheet 'S', row N"`` / ``"row N"``."""
        if self.fmt in ("csv", "tsv") or self.line_index is not None:
            return int(self._line_numbers(row + 1)[row]), ""
        if self.sheet_rows is not None:
            sheet_of, row_of, sheets = self.sheet_rows
            return None, f"sheet {sheets[int(sheet_of[row])]!r}, row {int(row_of[row])}"
        if self.place is not None:
            return None, self.place(row)
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
        line = 1 if self.fmt in ("csv", "tsv") or self.line_index is not None else None
        if self.sheet_rows is not None:
            return FormatError(f"sheet {self.sheet_rows[2][0]!r}: {message}", source=self.name)
        return FormatError(message, source=self.name, line=line)

    def _line_numbers(self, upto: int) -> np.ndarray:
        if self.line_index is None:  # pragma: no cover - set for every CSV/TSV table
            return np.arange(2, upto + 2)
        return self.line_index(upto)

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
        row = first_control_character(col)
        if row is not None:
            value = col[row].as_py()
            bad = CONTROL_CHAR.search(value)
            char = bad.group() if bad is not None else "?"
            named = CHAR_NAMES.get(char, f"the control character U+{ord(char):04X}")
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
            row = first_invalid_utf8(col)
            raise self.error(row, f"column {self.header_name(key)!r} holds bytes that are "
                             "not UTF-8 text; save the file with text columns in UTF-8")
        raise self.error(None, problem + "; expected text or numbers")

    def numbers(self, key: str, what: str,
                problems: list[tuple[int, Problem]] | None = None) -> np.ndarray:
        """Column ``key`` as float64; empty cells are NaN; text that is not a number is a
        :class:`FormatError` naming the row (``what`` names the column in messages).

        With ``problems``, every cell that is not a number is added to it instead, as
        ``(row, problem)``, and reads as NaN.
        """
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
        if values is not None:
            return np.asarray(values.to_numpy(), dtype=np.float64)
        raw = self.text(key).to_numpy(zero_copy_only=False)
        if problems is None:
            bad = first_non_number(raw)
            raise self.error(bad, f"expected a number in the {what} column "
                             f"{self.header_name(key)!r}, got {raw[bad]!r}")
        codes, distinct = np.unique(raw.astype(str), return_inverse=True)[::-1]
        parsed = np.array([_number(v) for v in distinct], dtype=np.float64)
        wrong = np.array([bool(v.strip()) and np.isnan(p) and v.strip().lower() != "nan"
                          for v, p in zip(distinct, parsed, strict=True)], dtype=bool)
        for row in np.flatnonzero(wrong[codes]):
            problems.append((int(row), self.problem(
                int(row), f"expected a number in the {what} column "
                f"{self.header_name(key)!r}, got {raw[row]!r}")))
        return parsed[codes]

    def problem(self, row: int | None, message: str, text: str | None = None) -> Problem:
        """The :class:`~ireval_core.errors.Problem` at a 0-based data row (``None``: the
        file), as :meth:`error` words it."""
        if row is None:
            return Problem(self.name, None, "", message, text)
        line, prefix = self.where(row)
        return Problem(self.name, line, "" if line is not None else prefix, message,
                       None if text is None else shorten(text))

    def header_name(self, key: str) -> str:
        """The column's name as written in the file."""
        return self.names.get(key, key)


def missing_error(raw: RawTable, missing: Sequence[str], aliases: Mapping[str, Sequence[str]],
                  kind: str) -> FormatError:
    """The error for required columns not found in the header (listing their aliases)."""
    expected = "; ".join(f"{k}: one of {', '.join(aliases[k])}" for k in missing)
    return raw.header_error(f"missing column(s) in the {kind} header "
                            f"{shorten(repr(list(raw.header)))}; expected {expected}")


def pick(raw: RawTable, table: pa.Table, aliases: Mapping[str, Sequence[str]],
         required: Sequence[str], kind: str) -> RawTable:
    """``raw`` with the columns of ``table`` found by ``aliases``; the required ones must be."""
    found = resolve(table.column_names, aliases)
    missing = [k for k in required if k not in found]
    if missing:
        raise missing_error(raw, missing, aliases, kind)
    columns = {k: table.column(v) for k, v in found.items()}
    return RawTable(raw.name, raw.fmt, columns, raw.n_rows, raw.header, found, raw.line_index,
                    raw.sheet_rows, raw.warnings, raw.encoding, raw.place)


def positions_in_order(columns: Mapping[str, Sequence[str]]) -> list[str]:
    """Positions 1, 2, ... of the documents of each (round, system, query), in the order
    of the rows, for a labeling tool's export that has none (Quepid, Label Studio tasks
    without a position); a document met again keeps its position.

    >>> positions_in_order({"round": ["r"] * 4, "system": [""] * 4,
    ...                     "query": ["q", "q", "q", "p"], "doc": ["a", "b", "a", "a"]})
    ['1', '2', '1', '1']
    """
    seen: dict[tuple[str, str, str], dict[str, int]] = {}
    out = []
    for r, s, q, d in zip(columns["round"], columns["system"], columns["query"],
                          columns["doc"], strict=True):
        docs = seen.setdefault((r, s, q), {})
        out.append(str(docs.setdefault(d, len(docs) + 1)))
    return out
