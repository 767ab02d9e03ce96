"""Excel ``.xlsx`` workbooks (read with openpyxl), for every reader that accepts them.

Cells are turned into text as they would be written (``3`` not ``3.0``; a date cell as
``2026-05-01``). Every sheet whose header has the required columns is read; blank rows
are skipped.
"""

from __future__ import annotations

import datetime as _dt
import io as _io
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..errors import FormatError
from .columns import resolve
from .source import Source, one_line
from .table import RawTable, missing_error

__all__ = ["read_xlsx"]


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


def read_xlsx(src: Source, aliases: Mapping[str, Sequence[str]], required: Sequence[str],
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
        damage = f"{type(exc).__name__}: {one_line(str(exc))}"
    else:
        damage = ""
    if damage:  # raised here, not in the except block: nothing of the input is chained
        raise FormatError(f"not a readable Excel .xlsx workbook ({damage})", source=src.name)
    try:
        return _xlsx_table(src, book, aliases, required, kind)
    except FormatError:
        raise
    except Exception as exc:  # a damaged sheet found while reading its rows
        damage = f"{type(exc).__name__}: {one_line(str(exc))}"
    finally:
        book.close()
    raise FormatError(f"not a readable Excel .xlsx workbook ({damage})", source=src.name)


def _xlsx_table(src: Source, book: object, aliases: Mapping[str, Sequence[str]],
                required: Sequence[str], kind: str) -> RawTable:
    """The rows of the sheets of an open workbook (see :func:`read_xlsx`)."""
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
                found = resolve(sheet_header, aliases)
                missing = [k for k in required if k not in found]
                if missing:
                    if first_problem is None:
                        stub = RawTable(src.name, "xlsx", {}, 0, sheet_header,
                                        sheet_rows=(np.zeros(0), np.zeros(0),
                                                     (ws.title,)))
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
                continue
            for k, i in index.items():
                cells[k].append(texts[i] if i < len(texts) else "")
            sheet_of.append(len(sheets) - 1)
            row_of.append(number)
    if not sheets:
        raise first_problem or FormatError(f"no sheet holds a {kind} table", source=src.name)
    columns = {k: pa.chunked_array([pa.array(v, pa.string())]) for k, v in cells.items()}
    return RawTable(src.name, "xlsx", columns, len(sheet_of), header, names,
                    sheet_rows=(np.asarray(sheet_of), np.asarray(row_of), tuple(sheets)))
