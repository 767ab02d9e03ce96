"""Excel ``.xlsx`` workbooks (read with openpyxl), for every reader that accepts them.

Cells are turned into text as they would be written (``3`` not ``3.0``; a date cell as
``2026-05-01``, or ``2026-05`` when its number format shows only the year and month).
Every visible sheet whose header has the required columns is read (or the one sheet
named by ``sheet=``, hidden or not); blank rows are skipped.

What Excel shows is what is read, or the file is refused:

* **hidden sheets** are not read (a ``hidden-sheet`` warning names those that hold a
  table), unless named;
* a **formula without a saved result** (files written by openpyxl or Apache POI store
  the formula only) would read as blank: a :class:`~ireval_core.errors.FormatError`
  names the cells;
* **merged cells** show one value over a range while the file holds it in the first
  cell only: merged header cells (a column without a name) and merged cells of the
  columns read are an error naming the sheet and the range; a header that lacks a
  required column names the merged and the empty header cells, the usual cause;
* a **column with values under an empty header cell** is not read (an
  ``unnamed-columns`` warning names the cells);
* a **round column mixing text and dates** (``2026-05`` typed, and dates formatted
  ``yyyy-mm``) is read in one form, so that a month is one round (a ``mixed-rounds``
  warning lists the rounds found);
* the workbook, a zip archive, is inflated within :class:`~.source.ReadLimits`
  (:func:`~.source.open_zip`) before openpyxl opens it.
"""

from __future__ import annotations

import datetime as _dt
import io as _io
import posixpath
import re
import xml.etree.ElementTree as ET
import zipfile
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa

from ..errors import DataWarning, FormatError, Problem
from .checks import MAX_PROBLEMS, tag_key, text_problem, value_problem
from .columns import (
    ALIASES,
    TEXT_KEYS,
    VALUE_KEY,
    VALUE_WORD,
    Kind,
    choose_columns,
    from_rank,
    resolve,
)
from .source import Source, one_line, open_zip
from .table import RawTable, missing_error

__all__ = ["read_xlsx", "read_xlsx_columns"]

_WHAT = "Excel .xlsx workbook"
_FORMULA_HINTS = (b"<f", b":f>", b":f ", b":f/")
"""Bytes that may open a formula element (``<f>``, ``<x:f t="shared"/>``): a sheet
without any of them holds no formula and is not parsed again."""
_MERGE_HINTS = (b"mergeCell ",)
"""Bytes of a merged range (``<mergeCell ref="A1:B1"/>``, any prefix)."""
_YEAR_MONTH = re.compile(r"[0-9]{4}-[0-9]{2}")
_SHOWN = 5  # formula cells named in a message


def _cell_text(value: object) -> str:
    """A cell's value as the text it shows (``3`` not ``3.0``, a date ``2026-05-01``)."""
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


def _shows_year_month_only(number_format: str | None) -> bool:
    """Whether a date format shows the year and month but no day and no time
    (``yyyy-mm``, ``mmm-yy``, ``mmmm yyyy``); quoted text and ``[...]`` are ignored."""
    if not number_format:
        return False
    plain = re.sub(r'"[^"]*"|\[[^\]]*\]|\\.', "", number_format.split(";")[0]).lower()
    return "y" in plain and "m" in plain and not any(c in plain for c in "dhs")


def read_xlsx(src: Source, aliases: Mapping[str, Sequence[str]], required: Sequence[str],
              kind: str, *, sheet: str | None = None) -> RawTable:
    """Every visible sheet whose header has the required columns, rows kept with their
    numbers; or only ``sheet``, when named (hidden or not).

    Cells are turned into text as they would be written (``3`` not ``3.0``; a date
    cell as ``2026-05-01``). Blank rows are skipped; a sheet without a header with
    the required columns is ignored (notes, pivots), unless no sheet has one. The
    workbook is checked against ``src.limits`` first, and a cell read that holds a
    formula without a saved result is an error (see the module notes).
    """
    return _read_book(src, aliases, required, kind, sheet, first=False)[0]


def _read_book(src: Source, aliases: Mapping[str, Sequence[str]], required: Sequence[str],
               kind: str, sheet: str | None, *, first: bool) -> tuple[RawTable, list[_Read]]:
    """:func:`read_xlsx`, and the sheets read; ``first``: only the first visible sheet
    whose header has the required columns."""
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - openpyxl is in requirements.txt
        raise FormatError("reading Excel files needs openpyxl (pip install openpyxl)",
                          source=src.name) from None
    archive, to_scan = open_zip(src, _WHAT, find=_FORMULA_HINTS + _MERGE_HINTS)
    try:
        book = openpyxl.load_workbook(_io.BytesIO(src.data), read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many kinds for a damaged workbook
        damage = f"{type(exc).__name__}: {one_line(str(exc))}"
    else:
        damage = ""
    if damage:  # raised here, not in the except block: nothing of the input is chained
        archive.close()
        raise FormatError(f"not a readable {_WHAT} ({damage})", source=src.name)
    try:
        try:
            table, read = _xlsx_table(src, book, aliases, required, kind, sheet, first)
        except _NoTable as exc:  # say why when merged or empty header cells are the cause
            raise _explained(src, archive, to_scan, exc) from None
        if to_scan:
            _check_sheets(src, archive, to_scan, read)
        return table, read
    except FormatError:
        raise
    except Exception as exc:  # a damaged sheet found while reading its rows
        damage = f"{type(exc).__name__}: {one_line(str(exc))}"
    finally:
        book.close()
        archive.close()
    raise FormatError(f"not a readable {_WHAT} ({damage})", source=src.name)


def read_xlsx_columns(src: Source, kind: Kind) -> tuple[pa.Table, list[DataWarning]]:
    """Qrels or a run from a workbook: columns qid, docid, rel|score (+ tag), and warnings.

    The first visible sheet whose header has a query and a document column is read
    (a notes sheet before it is passed over), its columns picked by
    :func:`~.columns.choose_columns` as a CSV header's are. Ids typed as numbers read as
    Excel shows them (``1048585``, never ``1048585.0``); grades and scores must be
    numbers (a number typed as text counts). Every bad row is named by sheet and row, up
    to :data:`~.checks.MAX_PROBLEMS`: an empty id, a value that is not a number (with its
    cell), a (query, document) given twice (per tag in a run). The rows are checked in
    one Python pass, as openpyxl has just read them one by one.
    """
    raw, read = _read_book(src, ALIASES, ("qid", "docid"), kind, None, first=True)
    title, header_row = read[0].title, read[0].header_row
    try:
        chosen, warnings = choose_columns(raw.header, src, kind, None)
    except FormatError as exc:
        raise FormatError(f"sheet {title!r}, row {header_row}: {exc.message}",
                          source=src.name) from None
    if raw.n_rows == 0:
        raise FormatError(f"sheet {title!r}: no {kind} rows after the header", source=src.name)
    key_of = {name: key for key, name in raw.names.items()}
    texts = {k: raw.columns[key_of[name]].to_pylist() for k, name in chosen.items()}
    value_key = VALUE_KEY[kind]
    word = "rank" if from_rank(warnings) else VALUE_WORD[value_key]
    name = chosen[value_key]
    letter = _letter(raw.header.index(name))
    _, row_of, _ = raw.sheet_rows or (None, np.zeros(0), ())
    problems: list[Problem] = []
    count = 0
    seen: dict[tuple[str, ...], int] = {}
    tags = texts.get("tag")
    for i, (qid, docid, value) in enumerate(zip(texts["qid"], texts["docid"], texts[value_key],
                                                strict=True)):
        problem = None
        for key in TEXT_KEYS:
            if key in texts and problem is None:
                problem = text_problem(texts[key][i], key, edges=True)
        if problem is None:
            problem = value_problem(value, word, f"{name!r} (cell {letter}{int(row_of[i])})")
        if problem is None:
            key_fields = (qid, docid, tag_key(tags[i])) if tags is not None else (qid, docid)
            first = seen.setdefault(key_fields, i)
            if first != i:
                problem = (f"duplicate {kind} entry for query {qid!r}, document {docid!r} "
                           f"(first at {raw.short(first)}); each (query, document) may "
                           "appear once")
        if problem is not None:
            count += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append(raw.problem(i, problem))
    if problems:
        raise FormatError.of(problems, count=count, shown=MAX_PROBLEMS)
    values = np.array([float(v) for v in texts[value_key]], dtype=np.float64)
    out = {k: pa.array(texts[k], pa.string()) for k in ("qid", "docid")}
    out[value_key] = pa.array(-values if from_rank(warnings) else values)
    if tags is not None:
        out["tag"] = pa.array(tags, pa.string())
    return pa.table(out), [*raw.warnings, *warnings]


class _Read(NamedTuple):
    """A sheet read: its name, the row of its header and the columns used (0-based)."""

    title: str
    header_row: int
    columns: frozenset[int]


class _NoTable(FormatError):
    """No sheet has the required columns; the first sheet that has a header but lacks
    some: its name, header row and the header cells that are empty over values."""

    def __init__(self, error: FormatError, title: str, header_row: int,
                 unnamed: dict[int, int]) -> None:
        super().__init__(error.message, source=error.source, line=error.line,
                         text=error.text)
        self.title = title
        self.header_row = header_row
        self.unnamed = unnamed


def _xlsx_table(src: Source, book: Any, aliases: Mapping[str, Sequence[str]],
                required: Sequence[str], kind: str, sheet: str | None, first: bool = False
                ) -> tuple[RawTable, list[_Read]]:
    """The rows of the sheets of an open workbook (see :func:`read_xlsx`); ``first``:
    those of the first visible sheet with the required columns only."""
    sheets: list[str] = []
    read: list[_Read] = []
    header: tuple[str, ...] = ()
    names: dict[str, str] = {}
    cells: dict[str, list[str]] = {}
    sheet_of: list[int] = []
    row_of: list[int] = []
    warnings: list[DataWarning] = []
    hidden_tables: list[str] = []
    first_problem: _NoTable | None = None
    worksheets = list(book.worksheets)
    if sheet is not None:
        worksheets = [ws for ws in worksheets if ws.title == sheet]
        if not worksheets:
            shown = ", ".join(repr(ws.title) for ws in book.worksheets)
            raise FormatError(f"no sheet named {sheet!r}; the workbook has {shown}",
                              source=src.name)
    for ws in worksheets:
        hidden = ws.sheet_state != "visible"
        if hidden and sheet is not None:
            warnings.append(DataWarning(
                "hidden-sheet", f"sheet {ws.title!r} is hidden in the workbook; read because "
                f"it was named (sheet={sheet!r})", src.name, 1, (ws.title,)))
        sheet_header: tuple[str, ...] | None = None
        kinds: list[str] = []  # of the round cells: "blank", "text", "date" or "month"
        unnamed: dict[int, int] = {}  # column -> first row with a value under no header
        blank: list[int] = []
        width = 0
        for number, row in enumerate(ws.iter_rows(), start=1):
            values = [c.value for c in row]
            texts = [_cell_text(v) for v in values]
            if not any(t.strip() for t in texts):
                continue
            if sheet_header is None:
                sheet_header = tuple(t.strip() for t in texts)
                while sheet_header and not sheet_header[-1]:
                    sheet_header = sheet_header[:-1]
                found = resolve(sheet_header, aliases)
                missing = [k for k in required if k not in found]
                if hidden and sheet is None:  # not read; named in a warning if a table
                    if not missing:
                        hidden_tables.append(ws.title)
                    break
                if missing:
                    if first_problem is None:
                        stub = RawTable(src.name, "xlsx", {}, 0, sheet_header,
                                        sheet_rows=(np.zeros(0), np.zeros(0), (ws.title,)))
                        first_problem = _NoTable(missing_error(stub, missing, aliases, kind),
                                                 ws.title, number, {})
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
                read.append(_Read(ws.title, number, frozenset(index.values())))
                round_name = found.get("round", "")
                start = len(row_of)
                blank = [i for i, h in enumerate(sheet_header) if not h]
                width = len(sheet_header)
                continue
            if blank or len(texts) > width:
                for i in [*blank, *range(width, len(texts))]:
                    if i < len(texts) and texts[i].strip() and i not in unnamed:
                        unnamed[i] = number
            for k, i in index.items():
                cells[k].append(texts[i] if i < len(texts) else "")
            if "round" in index:
                i = index["round"]
                value = values[i] if i < len(values) else None
                kinds.append(_round_kind(value, row[i] if i < len(row) else None))
            sheet_of.append(len(sheets) - 1)
            row_of.append(number)
        if sheets and sheets[-1] == ws.title:
            warnings.extend(_sheet_warnings(src.name, ws.title, read[-1].header_row, unnamed,
                                            cells.get("round"), start, kinds, round_name))
        if first and sheets:
            break
    if hidden_tables:
        shown = ", ".join(repr(t) for t in hidden_tables)
        warnings.append(DataWarning(
            "hidden-sheet", f"hidden sheet(s) {shown} not read, as Excel does not show them "
            f"(name one with sheet= to read it)", src.name, len(hidden_tables),
            tuple(hidden_tables[:3])))
    if not sheets:
        if first_problem is not None:
            first_problem.unnamed = _unnamed_columns(book[first_problem.title],
                                                     first_problem.header_row)
            raise first_problem
        raise FormatError(f"no sheet holds a {kind} table", source=src.name)
    columns = {k: pa.chunked_array([pa.array(v, pa.string())]) for k, v in cells.items()}
    table = RawTable(src.name, "xlsx", columns, len(sheet_of), header, names,
                     sheet_rows=(np.asarray(sheet_of), np.asarray(row_of), tuple(sheets)),
                     warnings=tuple(warnings))
    return table, read


def _sheet_warnings(source: str, title: str, header_row: int, unnamed: Mapping[int, int],
                    rounds: list[str] | None, start: int, kinds: list[str],
                    round_name: str) -> list[DataWarning]:
    """What a sheet just read warns of: values under empty header cells (``unnamed``:
    column -> first row), and a round column mixing text and dates (``rounds[start:]``
    are the sheet's, ``kinds`` their cells' kinds; such cells are made one form here)."""
    warnings = []
    if unnamed:
        empty = ", ".join(f"{_letter(i)}{header_row}" for i in sorted(unnamed))
        at = ", ".join(f"{_letter(i)}{r}" for i, r in sorted(unnamed.items()))
        warnings.append(DataWarning(
            "unnamed-columns", f"sheet {title!r}: the header cell(s) {empty} are empty "
            f"over values (first at {at}); those columns are not read: give them a "
            "name to read them", source, len(unnamed)))
    if kinds and rounds is not None:
        found_rounds, as_months = _one_form(rounds, start, kinds)
        if found_rounds:
            mix = ("text and Excel dates" if "text" in kinds
                   else "dates shown as months and as days")
            how = ("; its dates were read as months (YYYY-MM), as the other rounds are "
                   "written" if as_months else "")
            warnings.append(DataWarning(
                "mixed-rounds", f"sheet {title!r}: the round column "
                f"{round_name!r} mixes {mix}{how}. Rounds found: "
                f"{', '.join(found_rounds)}", source, len(found_rounds),
                tuple(found_rounds[:3])))
    return warnings


def _letter(column: int) -> str:
    """The letters of a 0-based column (``0`` -> ``A``, ``27`` -> ``AB``)."""
    out = ""
    n = column + 1
    while n:
        n, rest = divmod(n - 1, 26)
        out = chr(65 + rest) + out
    return out


_PEEK = 50  # rows below a header looked at for values under empty header cells


def _unnamed_columns(ws: Any, header_row: int) -> dict[int, int]:
    """Columns whose header cell is empty but that hold values in the rows below it
    (the first :data:`_PEEK`): column -> first row with a value."""
    header: list[str] = []
    out: dict[int, int] = {}
    for number, row in enumerate(ws.iter_rows(max_row=header_row + _PEEK), start=1):
        texts = [_cell_text(c.value).strip() for c in row]
        if number == header_row:
            header = texts
        elif number > header_row:
            for i, t in enumerate(texts):
                if t and (i >= len(header) or not header[i]) and i not in out:
                    out[i] = number
    return out


def _explained(src: Source, archive: zipfile.ZipFile, to_scan: set[str],
               error: _NoTable) -> FormatError:
    """The missing-columns error of ``error``'s sheet, with its merged and empty header
    cells named: the usual reasons a header lacks a column."""
    merged: list[_Merge] = []
    part = _sheet_parts(archive).get(error.title)
    if part is not None and part in to_scan:
        merged = sorted((m for m in _scan(archive, part)[1]
                         if m.min_row <= error.header_row <= m.max_row),
                        key=lambda m: (m.min_row, m.min_col))
    why = []
    if merged:
        why.append(f"the header cells {', '.join(m.ref for m in merged)} are merged (a title "
                   "over the table, or one header over several columns): unmerge them and "
                   "give each column its own header cell in one row")
    covered = {c for m in merged for c in range(m.min_col, m.max_col + 1)}
    unnamed = {i: r for i, r in error.unnamed.items() if i not in covered}
    if unnamed:
        empty = ", ".join(f"{_letter(i)}{error.header_row}" for i in sorted(unnamed))
        first = ", ".join(f"{_letter(i)}{r}" for i, r in sorted(unnamed.items()))
        why.append(f"the header cell(s) {empty} are empty over values (first at {first}): "
                   "name those columns")
    if not why:
        return error.fresh()
    return FormatError(f"{error.message}; {'; '.join(why)}", source=error.source)


def _round_kind(value: object, cell: Any) -> str:
    """``"month"`` for a date shown as year and month, ``"date"`` for another date or
    time, ``"blank"`` or ``"text"`` (numbers included) otherwise."""
    if isinstance(value, _dt.date):
        return "month" if _shows_year_month_only(cell.number_format) else "date"
    return "blank" if value is None or not str(value).strip() else "text"


def _one_form(rounds: list[str], start: int, kinds: list[str]) -> tuple[list[str], bool]:
    """Rewrite the round cells ``rounds[start:]`` of one sheet in one form: the rounds
    found when the column mixed forms (text and dates, or dates shown two ways), else
    none; and whether full dates were read as months.

    A date shown as year and month reads as ``YYYY-MM``, as shown; a full date stays
    ``YYYY-MM-DD`` unless every other round of the column is a month ``YYYY-MM``: then
    it is that month too.
    """
    for i, k in enumerate(kinds):
        if k == "month":
            rounds[start + i] = rounds[start + i][:7]
    forms = set(kinds) - {"blank"}
    if len(forms) < 2:
        return [], False
    others = [rounds[start + i].strip() for i, k in enumerate(kinds) if k in ("text", "month")]
    as_months = "date" in forms and all(_YEAR_MONTH.fullmatch(r) for r in others)
    if as_months:
        for i, k in enumerate(kinds):
            if k == "date":
                rounds[start + i] = rounds[start + i][:7]
    found = sorted({rounds[start + i].strip() for i, k in enumerate(kinds) if k != "blank"})
    return found, as_months


class _Merge(NamedTuple):
    """A merged range of cells (rows 1-based, columns 0-based, bounds included)."""

    ref: str
    min_col: int
    min_row: int
    max_col: int
    max_row: int


def _merge(ref: str) -> _Merge:
    first, _, last = ref.partition(":")
    last = last or first
    return _Merge(ref, _column_index(first), _row_number(first), _column_index(last),
                  _row_number(last))


def _row_number(ref: str) -> int:
    return int("".join(ch for ch in ref if ch.isdigit()) or 0)


def _check_sheets(src: Source, archive: zipfile.ZipFile, to_scan: set[str],
                  read: Sequence[_Read]) -> None:
    """A FormatError when a cell read holds a formula without a saved result, or when
    cells of the table read are merged.

    openpyxl reads a formula's saved result (``data_only=True``); a workbook written by
    a program (openpyxl, Apache POI) saves none, and those cells would read as blank.
    Merged cells show one value over the range while the file holds it in the first
    cell only: merged header cells leave columns without a name, merged data cells
    leave rows blank. Only sheets whose XML holds a formula or a merge at all (found
    while the workbook was checked) are parsed again.
    """
    parts = _sheet_parts(archive)
    problems: list[Problem] = []
    for sheet in read:
        part = parts.get(sheet.title)
        if part is None or part not in to_scan:
            continue
        formulas, merges = _scan(archive, part)
        merges.sort(key=lambda m: (m.min_row, m.min_col))
        found = [ref for ref, row, col in formulas
                 if row >= sheet.header_row and col in sheet.columns]
        if found:
            n = len(found)
            shown = ", ".join(found[:_SHOWN]) + (", …" if n > _SHOWN else "")
            problems.append(Problem(
                src.name, None, "", f"sheet {sheet.title!r}: formula cells without a saved "
                f"value: {shown} ({n} cell{'s' if n != 1 else ''}); they would read as blank "
                "(the program that wrote the file saved the formulas, not their results). "
                "Open and save the file in Excel, or export the values (e.g. as CSV)"))
        for m in merges:
            if m.max_row < sheet.header_row:
                continue  # a title above the table
            if m.min_row <= sheet.header_row:
                problems.append(Problem(
                    src.name, None, f"sheet {sheet.title!r}", f"the header cells {m.ref} are "
                    "merged: each column needs its own header cell; unmerge them"))
            elif any(c in sheet.columns for c in range(m.min_col, m.max_col + 1)):
                first = f"{_letter(m.min_col)}{m.min_row}"
                problems.append(Problem(
                    src.name, None, f"sheet {sheet.title!r}", f"the cells {m.ref} are merged: "
                    f"Excel shows one value over them, the file holds it in {first} only "
                    "and the other rows would read as blank; unmerge them and fill the "
                    "value into every row"))
    if problems:
        raise FormatError.of(problems)


def _local(tag: str) -> str:
    """An XML name without its namespace (``{ns}sheet`` -> ``sheet``)."""
    return tag.rsplit("}", 1)[-1]


def _sheet_parts(archive: zipfile.ZipFile) -> dict[str, str]:
    """Sheet name -> the archive member holding its XML, from the package's relations
    (``_rels/.rels`` names the workbook part, its own ``.rels`` the sheets' parts)."""
    names = set(archive.namelist())

    def relations(part: str) -> list[tuple[str, str, str]]:
        """(id, type, member) of each relation of ``part`` (``""``: the package)."""
        folder, base = posixpath.split(part)
        rels = posixpath.join(folder, "_rels", base + ".rels")
        if rels not in names:
            return []
        out = []
        for el in ET.fromstring(archive.read(rels)).iter():
            target = el.get("Target")
            if _local(el.tag) == "Relationship" and target:
                member = (target.lstrip("/") if target.startswith("/")
                          else posixpath.normpath(posixpath.join(folder, target)))
                out.append((el.get("Id", ""), el.get("Type", ""), member))
        return out

    workbook = next((m for _, t, m in relations("") if t.endswith("/officeDocument")),
                    "xl/workbook.xml")
    if workbook not in names:
        return {}
    targets = {i: m for i, _, m in relations(workbook)}
    parts = {}
    for el in ET.fromstring(archive.read(workbook)).iter():
        if _local(el.tag) == "sheet":
            rid = next((v for k, v in el.attrib.items() if _local(k) == "id"), "")
            if rid in targets and el.get("name") is not None:
                parts[el.get("name", "")] = targets[rid]
    return parts


def _column_index(ref: str) -> int:
    """0-based column of a cell reference (``B7`` -> 1)."""
    n = 0
    for ch in ref:
        if not ch.isalpha():
            break
        n = n * 26 + (ord(ch.upper()) - 64)
    return n - 1


def _scan(archive: zipfile.ZipFile, part: str
          ) -> tuple[list[tuple[str, int, int]], list[_Merge]]:
    """One pass over a sheet's XML: the cells holding a formula and no saved value (no
    ``<v>``, or an empty one on a cell that is not text), as ``(ref, row, column)``,
    and the merged ranges."""
    formulas: list[tuple[str, int, int]] = []
    merges: list[_Merge] = []
    with archive.open(part) as fh:
        for _, el in ET.iterparse(fh, events=("end",)):
            name = _local(el.tag)
            if name == "c":
                kids = {_local(k.tag): k for k in el}
                if "f" in kids:
                    v = kids.get("v")
                    empty = v is None or not (v.text or "")
                    if empty and not (v is not None and el.get("t") in ("str", "inlineStr")):
                        ref = el.get("r", "")
                        formulas.append((ref, _row_number(ref), _column_index(ref)))
                el.clear()
            elif name == "row":
                el.clear()
            elif name == "mergeCell" and el.get("ref"):
                merges.append(_merge(el.get("ref", "")))
    return formulas, merges
