"""Checks of ids, tags and values: the vectorised passes and the messages they give.

Ids and tags are one line of text: no control character (C0, DEL, C1, U+2028/9), and
in CSV/TSV/Parquet/JSON no space at either end. Grades and scores are finite numbers.
The fast checks look at the bytes of whole Arrow columns (no Python loop over rows);
their slow twins (:func:`text_problem`, :func:`value_problem`) word the message for
one value once a bad row is found.

>>> text_problem("", "qid", edges=False)
'empty query id'
>>> value_problem("high", "grade", "'rel'")
"expected a numeric grade in column 'rel', got 'high'"
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import string_layout, to_numpy, to_numpy_filled, valid_mask
from ..errors import FormatError, Problem, shorten
from .columns import MISSING_TAGS, TEXT_KEYS, TEXT_WORD, VALUE_KEY, VALUE_WORD, Kind
from .source import Source

__all__ = ["CHAR_NAMES", "CONTROL_CHAR", "CONTROL_RE2", "MAX_PROBLEMS", "Problems", "cut",
           "dup_message", "find_problem", "first_control_character", "first_invalid_utf8",
           "first_non_number", "iter_lines", "numeric", "problem_message", "tag_key",
           "text_problem", "to_float", "value_problem"]

_NUMBER = re.compile(r"[ \t]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|nan|inf|infinity)[ \t]*", re.IGNORECASE)
"""The numbers pyarrow's CSV float parser accepts (Python's float() accepts more: ``1_0``)."""

_STRICT_NUMBER = re.compile(_NUMBER.pattern.replace("[ \\t]*", ""), re.IGNORECASE)
"""The same without blanks around, as pyarrow's cast from string wants them."""

CONTROL_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
"""A character no id, tag, label or round may hold: C0, DEL, C1, U+2028, U+2029."""

CHAR_NAMES = {"\n": "a line break (\\n)", "\r": "a carriage return (\\r)", "\t": "a tab",
              "\x00": "a NUL byte", "\u2028": "a line separator (U+2028)",
              "\u2029": "a paragraph separator (U+2029)"}
"""How messages name the control characters seen most (others by their code point)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
CONTROL_RE2 = "[\\x00-\\x1f\\x7f-\\x{9f}\\x{2028}\\x{2029}]"
"""The control characters an id or tag may not hold (C0, DEL, C1, the line and paragraph
separators), as an RE2 class for Arrow's regex kernels (:data:`CONTROL_CHAR`'s twin)."""


def text_problem(value: str | None, key: str, *, edges: bool) -> str | None:
    """What is wrong with one id or tag, or None (the slow twin of :func:`_bad_text_mask`)."""
    what = TEXT_WORD[key]
    if value is None or (value == "" and key != "tag"):
        return f"empty {what}"
    bad = CONTROL_CHAR.search(value)
    if bad is not None:
        char = bad.group()
        named = CHAR_NAMES.get(char, f"the control character U+{ord(char):04X}")
        return (f"{what} {cut(value)!r} contains {named}; ids and tags must be one "
                "line without tabs or control characters")
    surrogate = _SURROGATE.search(value)
    if surrogate is not None:  # JSON "\ud800" escapes decode to these: not valid text
        return (f"{what} {cut(value)!r} contains the lone surrogate "
                f"U+{ord(surrogate.group()):04X}, which is not valid Unicode text")
    if edges and value and (value[0] == " " or value[-1] == " "):
        return (f"{what} {value!r} starts or ends with a space; ids are compared exactly "
                "(' d1' is not 'd1')")
    return None


def cut(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (line breaks kept: they may be the problem)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def value_problem(text: str, word: str, column: str) -> str | None:
    """What is wrong with one grade or score as written, or None."""
    if not _NUMBER.fullmatch(text):
        return f"expected a numeric {word} in column {column}, got {text!r}"
    if not math.isfinite(float(text)):
        return f"expected a finite {word} in column {column}, got {text!r}"
    return None


def _bad_text_mask(arr: pa.Array, *, allow_empty: bool, edges: bool,
                   forbid_space: bool) -> np.ndarray:
    """Per value of a string array: null, empty, control character, or space at an edge.

    Vectorised over the array's bytes (no Python loop): control characters are
    bytes below 0x20 and 0x7f, C1 controls (UTF-8 ``c2 80``-``c2 9f``) and the
    Unicode line and paragraph separators (``e2 80 a8``/``a9``).
    """
    n = len(arr)
    bad = np.zeros(n, dtype=bool)
    if n == 0:
        return bad
    if arr.null_count:
        bad |= ~valid_mask(arr)
    offsets, data = string_layout(arr)
    lengths = np.diff(offsets)
    if not allow_empty:
        bad |= lengths == 0
    seg = data[offsets[0]: offsets[-1]]
    if seg.size and (seg.min() < 0x20 or seg.max() >= 0x7F
                     or (forbid_space and bool((seg == 0x20).any()))):
        _mark_bad_bytes(bad, seg, offsets, forbid_space)
    if edges:
        full = lengths > 0
        starts = offsets[:-1][full]
        ends = offsets[1:][full] - 1
        bad[full] |= (data[starts] == 0x20) | (data[ends] == 0x20)
    return bad


def _mark_bad_bytes(bad: np.ndarray, seg: np.ndarray, offsets: np.ndarray,
                    forbid_space: bool) -> None:
    """Mark the values whose bytes hold a control character (or a space when forbidden).

    Only called when the bytes are not all printable ASCII (two reductions say so).
    """
    hit = (seg < 0x20) | (seg == 0x7F)
    if forbid_space:
        hit |= seg == 0x20
    if seg.size >= 2:
        lead = seg[:-1]
        nxt = seg[1:]
        hit[:-1] |= (lead == 0xC2) & (nxt >= 0x80) & (nxt <= 0x9F)
    if seg.size >= 3:
        hit[:-2] |= (seg[:-2] == 0xE2) & (seg[1:-1] == 0x80) & ((seg[2:] == 0xA8)
                                                              | (seg[2:] == 0xA9))
    pos = np.flatnonzero(hit)
    if pos.size:
        rows = np.searchsorted(offsets, pos + offsets[0], side="right") - 1
        bad[rows] = True


def _first_bad_text(col: pa.ChunkedArray | pa.Array, *, allow_empty: bool = False,
                    edges: bool = False, forbid_space: bool = False) -> int | None:
    """Row of the first null, empty (unless allowed) or malformed value, or None."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    base = 0
    checked: dict[int, np.ndarray] = {}
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            dictionary = chunk.dictionary
            key = dictionary.buffers()[1].address if len(dictionary) else 0
            if key not in checked:
                checked[key] = np.flatnonzero(_bad_text_mask(
                    dictionary, allow_empty=allow_empty, edges=edges,
                    forbid_space=forbid_space))
            bad_values = checked[key]
            mask = np.zeros(len(chunk), dtype=bool)
            if chunk.null_count:
                mask |= ~valid_mask(chunk)
            if bad_values.size:
                idx = to_numpy_filled(chunk.indices, 0)
                mask |= np.isin(idx, bad_values)
        else:
            mask = _bad_text_mask(chunk, allow_empty=allow_empty, edges=edges,
                                  forbid_space=forbid_space)
        hits = np.flatnonzero(mask)
        if hits.size:
            return base + int(hits[0])
        base += len(chunk)
    return None


def find_problem(table: pa.Table, kind: Kind, *, edges: bool, forbid_space: bool = False
             ) -> tuple[str, int] | None:
    """(column key, row) of the first invalid id, tag or value in a parsed table, or None."""
    for key in TEXT_KEYS:
        if key in table.column_names:
            row = _first_bad_text(table.column(key), allow_empty=key == "tag", edges=edges,
                                  forbid_space=forbid_space)
            if row is not None:
                return key, row
    values = numeric(table.column(VALUE_KEY[kind]))
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        return VALUE_KEY[kind], int(bad[0])
    return None


def problem_message(table: pa.Table, key: str, row: int, *, edges: bool,
                    column: str | None = None) -> str:
    """The message for a problem found by :func:`find_problem` (when no line can be named)."""
    value = table.column(key)[row].as_py()
    if key in TEXT_KEYS:
        problem = text_problem(value, key, edges=edges) or f"invalid {TEXT_WORD[key]} {value!r}"
    else:
        problem = f"expected a finite {VALUE_WORD[key]}, got {value!r}"
    where = f"column {column!r}, row {row + 1}" if column else f"row {row + 1}"
    return f"{where}: {problem}"


def numeric(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    """A numeric column as float64 numpy values (read through its buffers: no pandas)."""
    return to_numpy(col, np.float64)


def iter_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line with its ending)``; lines end with LF, CRLF or a lone CR.

    Lazy (one line at a time), so a diagnostic pass over a large input does not
    hold a list of all its lines.
    """
    for lineno, match in enumerate(_LINE.finditer(data), start=1):
        yield lineno, match.group()


_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


MAX_PROBLEMS = 100
"""The most bad lines of a qrels or run file one error reports (the rest are counted)."""


class Problems:
    """The bad lines of one file found in one pass: the first ``limit`` kept, all counted.

    >>> found = Problems(Source("r.txt", b""), limit=2)
    >>> for line in (3, 5, 8):
    ...     found.add(line, "empty query id")
    >>> print(found.error().report())
    3 problems in r.txt; the first 2:
      r.txt:3: empty query id
      r.txt:5: empty query id
      and 1 more
    """

    def __init__(self, src: Source, limit: int = MAX_PROBLEMS) -> None:
        self.name = src.name
        self.limit = limit
        self.kept: list[Problem] = []
        self.count = 0

    def add(self, line: int | None, message: str, text: str | None = None) -> None:
        """One more bad line (kept while fewer than ``limit`` are)."""
        self.count += 1
        if len(self.kept) < self.limit:
            self.kept.append(Problem(self.name, line, "", message,
                                     None if text is None else shorten(text)))

    def add_error(self, error: FormatError) -> None:
        """One more bad line, as a one-problem error describes it."""
        self.add(error.line, error.message, error.text)

    def error(self) -> FormatError | None:
        """The error listing the problems kept and counting all, or None when none."""
        if not self.kept:
            return None
        return FormatError.of(self.kept, count=self.count, shown=self.limit)


def tag_key(tag: str) -> str:
    """Tags that mean "no tag" are one system: one key for duplicate detection."""
    return "" if tag in MISSING_TAGS else tag


def dup_message(src: Source, kind: Kind, first: int | str, second: int, qid: str, docid: str,
                text: str | None, *, note: str = "") -> FormatError:
    """The error for a (query, document) given at line ``first`` and again at ``second``;
    ``first`` may name another file (``"3 of qrels_a.txt"``); ``note`` is added to its
    message (why the file may hold it twice)."""
    return FormatError(
        f"duplicate {kind} entry for query {qid!r}, document {docid!r} "
        f"(first at line {first}); each (query, document) may appear once{note}",
        source=src.name, line=second, text=text)


def to_float(col: pa.ChunkedArray, src: Source, name: str, header_line: int | None,
             word: str) -> pa.ChunkedArray:
    """``col`` as float64; a FormatError names the first value that is not a finite number."""
    if pa.types.is_boolean(col.type):
        raise FormatError(f"column {name!r} holds booleans; {word}s must be numbers",
                          source=src.name, line=header_line)
    try:
        values = col.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = None
    if values is None:
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            raise FormatError(f"column {name!r} holds {col.type} values; {word}s must be "
                              "numbers", source=src.name, line=header_line)
        i = next((i for i, v in enumerate(col.to_pylist())  # only on failure
                  if v is None or not _STRICT_NUMBER.fullmatch(v)), 0)
        raise _value_error(src, name, header_line, i, col[i].as_py(), word, numeric=False)
    arr = numeric(values)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise _value_error(src, name, header_line, i, col[i].as_py(), word, numeric=True)
    return values


def _value_error(src: Source, name: str, header_line: int | None, row: int, value: object,
                 word: str, *, numeric: bool) -> FormatError:
    what = "a finite numeric" if numeric else "a numeric"
    if header_line:
        return FormatError(f"expected {what} {word} in column {name!r}, got {value!r}",
                           source=src.name, line=row + header_line + 1)
    return FormatError(f"column {name!r}, row {row + 1}: expected {what} {word}, got "
                       f"{value!r}", source=src.name)


def first_control_character(col: pa.ChunkedArray) -> int | None:
    """Row of the first value holding a control character (C0, DEL, C1, U+2028/9), or None.

    Printable ASCII (every byte 0x20-0x7e) is ruled out from the bytes alone; other text
    goes through a regular expression (on the dictionary of a coded column)."""
    base = 0
    for chunk in col.chunks:
        values = chunk.dictionary if isinstance(chunk, pa.DictionaryArray) else chunk
        if len(values) and not _printable_ascii(values):
            hit = pc.match_substring_regex(values, CONTROL_RE2).fill_null(False)
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


def first_invalid_utf8(col: pa.ChunkedArray) -> int | None:
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


def first_non_number(raw: np.ndarray) -> int:
    """Row of the first non-empty cell that is not a number (only called on failure)."""
    for i, value in enumerate(raw):
        text = str(value).strip()
        if not text:
            continue
        try:
            float(text)
        except ValueError:
            return i
    return 0  # pragma: no cover - only called when some value failed to parse
