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

from ..errors import DataWarning, FormatError
from .columns import resolve
from .source import Source, one_line, open_zip
from .table import RawTable, missing_error

__all__ = ["read_xlsx"]

_WHAT = "Excel .xlsx workbook"
_FORMULA_HINTS = (b"<f", b":f>", b":f ", b":f/")
"""Bytes that may open a formula element (``<f>``, ``<x:f t="shared"/>``): a sheet
without any of them holds no formula and is not parsed again."""
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
    try:
        import openpyxl
    except ImportError:  # pragma: no cover - openpyxl is in requirements.txt
        raise FormatError("reading Excel files needs openpyxl (pip install openpyxl)",
                          source=src.name) from None
    archive, with_formulas = open_zip(src, _WHAT, find=_FORMULA_HINTS)
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
        table, read = _xlsx_table(src, book, aliases, required, kind, sheet)
        if with_formulas:
            _check_formulas(src, archive, with_formulas, read)
        return table
    except FormatError:
        raise
    except Exception as exc:  # a damaged sheet found while reading its rows
        damage = f"{type(exc).__name__}: {one_line(str(exc))}"
    finally:
        book.close()
        archive.close()
    raise FormatError(f"not a readable {_WHAT} ({damage})", source=src.name)


class _Read(NamedTuple):
    """A sheet read: its name, the row of its header and the columns used (0-based)."""

    title: str
    header_row: int
    columns: frozenset[int]


def _xlsx_table(src: Source, book: Any, aliases: Mapping[str, Sequence[str]],
                required: Sequence[str], kind: str, sheet: str | None
                ) -> tuple[RawTable, list[_Read]]:
    """The rows of the sheets of an open workbook (see :func:`read_xlsx`)."""
    sheets: list[str] = []
    read: list[_Read] = []
    header: tuple[str, ...] = ()
    names: dict[str, str] = {}
    cells: dict[str, list[str]] = {}
    sheet_of: list[int] = []
    row_of: list[int] = []
    warnings: list[DataWarning] = []
    hidden_tables: list[str] = []
    first_problem: FormatError | None = None
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
                        first_problem = missing_error(stub, missing, aliases, kind)
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
                continue
            for k, i in index.items():
                cells[k].append(texts[i] if i < len(texts) else "")
            if "round" in index:
                i = index["round"]
                value = values[i] if i < len(values) else None
                kinds.append(_round_kind(value, row[i] if i < len(row) else None))
            sheet_of.append(len(sheets) - 1)
            row_of.append(number)
        if kinds and sheets and sheets[-1] == ws.title:
            found_rounds, as_months = _one_form(cells["round"], start, kinds)
            if found_rounds:
                mix = ("text and Excel dates" if "text" in kinds
                       else "dates shown as months and as days")
                how = ("; its dates were read as months (YYYY-MM), as the other rounds are "
                       "written" if as_months else "")
                warnings.append(DataWarning(
                    "mixed-rounds", f"sheet {ws.title!r}: the round column "
                    f"{round_name!r} mixes {mix}{how}. Rounds found: "
                    f"{', '.join(found_rounds)}", src.name, len(found_rounds),
                    tuple(found_rounds[:3])))
    if hidden_tables:
        shown = ", ".join(repr(t) for t in hidden_tables)
        warnings.append(DataWarning(
            "hidden-sheet", f"hidden sheet(s) {shown} not read, as Excel does not show them "
            f"(name one with sheet= to read it)", src.name, len(hidden_tables),
            tuple(hidden_tables[:3])))
    if not sheets:
        raise first_problem or FormatError(f"no sheet holds a {kind} table", source=src.name)
    columns = {k: pa.chunked_array([pa.array(v, pa.string())]) for k, v in cells.items()}
    table = RawTable(src.name, "xlsx", columns, len(sheet_of), header, names,
                     sheet_rows=(np.asarray(sheet_of), np.asarray(row_of), tuple(sheets)),
                     warnings=tuple(warnings))
    return table, read


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


def _check_formulas(src: Source, archive: zipfile.ZipFile, with_formulas: set[str],
                    read: Sequence[_Read]) -> None:
    """A FormatError when a cell read holds a formula without a saved result.

    openpyxl reads a formula's saved result (``data_only=True``); a workbook written by
    a program (openpyxl, Apache POI) saves none, and those cells would read as blank.
    Only sheets whose XML holds a formula at all (found while the workbook was checked)
    are parsed again.
    """
    parts = _sheet_parts(archive)
    for sheet in read:
        part = parts.get(sheet.title)
        if part is None or part not in with_formulas:
            continue
        found = _uncached_formulas(archive, part, sheet)
        if found:
            n = len(found)
            shown = ", ".join(found[:_SHOWN]) + (", …" if n > _SHOWN else "")
            raise FormatError(
                f"sheet {sheet.title!r}: formula cells without a saved value: {shown} "
                f"({n} cell{'s' if n != 1 else ''}); they would read as blank (the program "
                "that wrote the file saved the formulas, not their results). Open and save "
                "the file in Excel, or export the values (e.g. as CSV)", source=src.name)


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


def _uncached_formulas(archive: zipfile.ZipFile, part: str, sheet: _Read) -> list[str]:
    """References of the cells of ``sheet``'s columns, from its header row down, holding a
    formula and no saved value (no ``<v>``, or an empty one on a cell that is not text)."""
    out: list[str] = []
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
                        row = int("".join(ch for ch in ref if ch.isdigit()) or 0)
                        if row >= sheet.header_row and _column_index(ref) in sheet.columns:
                            out.append(ref)
                el.clear()
            elif name == "row":
                el.clear()
    return out
