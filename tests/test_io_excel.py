"""Excel workbooks read as Excel shows them, or refused (issue 23, items 1, 2, 3 and 9).

* a hidden sheet is not read (unless named with ``sheet=``);
* a formula cell without a saved result (openpyxl and Apache POI save none) is a
  :class:`FormatError` naming the cells, never a blank label;
* a round column mixing typed months (``2026-05``) and Excel dates is read as one
  round per month;
* a workbook (a zip archive) is held to :class:`~ireval_core.io.ReadLimits` like gzip
  input: by the sizes its directory declares, and while inflating when they lie;
* merged header cells, merged cells of a column read, and header cells left empty over
  values are named with their sheet and cells (issue 18 item 1).

The workbooks are built here with openpyxl, then edited as zip archives where Excel
itself would write something else (saved formula results).
"""

from __future__ import annotations

import datetime as dt
import io
import re
import struct
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from ireval_core.errors import FormatError
from ireval_core.io import ReadLimits, Source, read_table
from ireval_core.io.columns import LABEL_ALIASES, REQUIRED_LABEL_COLUMNS
from ireval_core.labels import per_query_dcg, read_judgments
from ireval_core.labels.gsb import read_gsb

openpyxl = pytest.importorskip("openpyxl")

ROOT = Path(__file__).resolve().parents[1]
HEADER = ["month", "qid", "docid", "pos", "grade"]
MAY = [["2026-05", "q1", "d1", 1, "high"], ["2026-05", "q1", "d2", 2, "low"],
       ["2026-05", "q2", "d1", 1, "mid"]]
OLD = [["2026-05", "q1", "d1", 1, "none"], ["2026-05", "q1", "d9", 2, "high"],
       ["2026-04", "q3", "d4", 1, "high"]]


def _book(sheets: dict[str, list[list[object]]], *, hidden: dict[str, str] | None = None,
          formats: dict[str, dict[str, str]] | None = None) -> bytes:
    """A workbook with one sheet per item (``hidden``: sheet -> state; ``formats``:
    sheet -> cell -> number format)."""
    book = openpyxl.Workbook()
    first = True
    for title, rows in sheets.items():
        ws = book.active if first else book.create_sheet(title)
        ws.title = title
        first = False
        for row in rows:
            ws.append(row)
        if hidden and title in hidden:
            ws.sheet_state = hidden[title]
        for ref, fmt in ((formats or {}).get(title) or {}).items():
            ws[ref].number_format = fmt
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def _edit(data: bytes, member: str, edit) -> bytes:
    """``data`` with one member's bytes replaced by ``edit(bytes)``."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            body = src.read(info)
            z.writestr(info, edit(body) if info.filename == member else body)
    return out.getvalue()


def _refused(source: tuple[str, bytes], **kwargs: object) -> FormatError:
    with pytest.raises(FormatError) as info:
        read_judgments(source, **kwargs)
    err = info.value
    assert err.source == source[0]
    assert err.__context__ is None and err.__cause__ is None
    return err


# ----------------------------------------------------------------------------- 1. hidden sheets


@pytest.mark.parametrize("state", ["hidden", "veryHidden"])
def test_a_hidden_sheet_is_not_read(state) -> None:
    both = _book({"May": [HEADER, *MAY], "Old": [HEADER, *OLD]}, hidden={"Old": state})
    visible = _book({"May": [HEADER, *MAY]})
    j, only = read_judgments(("book.xlsx", both)), read_judgments(("book.xlsx", visible))
    assert j.rounds == only.rounds == ("2026-05",)
    assert j.label_table().equals(only.label_table())
    assert len(j.label_table()) == len(MAY)
    ours, theirs = per_query_dcg(j, k=10), per_query_dcg(only, k=10)
    np.testing.assert_array_equal(ours.dcg, theirs.dcg)
    assert [w.code for w in j.warnings] == ["hidden-sheet"]
    assert "'Old'" in j.warnings[0].message and "sheet=" in j.warnings[0].message
    assert only.warnings == ()


def test_a_hidden_sheet_named_is_read_with_a_warning() -> None:
    both = _book({"May": [HEADER, *MAY], "Old": [HEADER, *OLD]}, hidden={"Old": "hidden"})
    j = read_judgments(("book.xlsx", both), sheet="Old")
    assert j.rounds == ("2026-04", "2026-05")
    assert len(j.label_table()) == len(OLD)
    assert [w.code for w in j.warnings] == ["hidden-sheet"]
    assert j.warnings[0].message == ("sheet 'Old' is hidden in the workbook; read because it "
                                     "was named (sheet='Old')")
    only_may = read_judgments(("book.xlsx", both), sheet="May")
    assert len(only_may.label_table()) == len(MAY) and only_may.warnings == ()


def test_a_sheet_not_in_the_workbook_is_named_with_those_that_are() -> None:
    err = _refused(("book.xlsx", _book({"May": [HEADER, *MAY]})), sheet="June")
    assert str(err) == "book.xlsx: no sheet named 'June'; the workbook has 'May'"
    with pytest.raises(TypeError, match="'sheet' parameter of read_judgments"):
        read_judgments(("book.xlsx", b""), sheet=3)  # type: ignore[arg-type]


def test_a_hidden_sheet_without_a_table_is_skipped_silently() -> None:
    data = _book({"May": [HEADER, *MAY], "lists": [["grade"], ["high"]]},
                 hidden={"lists": "hidden"})
    assert read_judgments(("book.xlsx", data)).warnings == ()


def test_the_gsb_reader_skips_hidden_sheets_too() -> None:
    header = ["round", "query", "judgment"]
    data = _book({"GSB": [header, ["2026-05", "q1", "G"]],
                  "draft": [header, ["2026-05", "q2", "B"], ["2026-05", "q3", "B"]]},
                 hidden={"draft": "hidden"})
    assert len(read_gsb([("gsb.xlsx", data)]).table) == 1


# ----------------------------------------------------------------------------- 2. formulas


def _formula_book(n: int = 36, *, empty: bytes = b"<v />") -> bytes:
    """A book whose column E holds the formula ``="high"`` with no saved result, written
    as ``<f>"high"</f>`` followed by ``empty`` (openpyxl writes ``<v />`` up to 3.1.4 and
    ``<v></v>`` from 3.1.5: the tests fix the form they edit)."""
    rows = [["2026-05", "q1", f"d{i}", i, '="high"'] for i in range(1, n + 1)]
    return _edit(_book({"May": [HEADER, *rows]}), "xl/worksheets/sheet1.xml",
                 lambda xml: re.sub(rb'(<f>"high"</f>)<v\s*(?:/>|></v>)', rb"\1" + empty, xml))


def test_formula_cells_without_a_saved_value_are_refused() -> None:
    """openpyxl saves a formula with an empty value (``<v />``): read as blank, every
    label would have been "unlabeled"."""
    err = _refused(("book.xlsx", _formula_book()))
    assert str(err) == (
        "book.xlsx: sheet 'May': formula cells without a saved value: E2, E3, E4, E5, E6, … "
        "(36 cells); they would read as blank (the program that wrote the file saved the "
        "formulas, not their results). Open and save the file in Excel, or export the "
        "values (e.g. as CSV)")
    for empty in (b"<v />", b"<v></v>", b"<v/>"):  # as each openpyxl version writes it
        err = _refused(("book.xlsx", _formula_book(2, empty=empty)))
        assert "formula cells without a saved value: E2, E3 (2 cells);" in err.message


def test_formula_cells_without_any_value_element_are_refused() -> None:
    """Apache POI writes ``<f>`` alone."""
    data = _edit(_formula_book(3), "xl/worksheets/sheet1.xml",
                 lambda xml: xml.replace(b"<v />", b"").replace(b"<v/>", b""))
    xml = zipfile.ZipFile(io.BytesIO(data)).read("xl/worksheets/sheet1.xml")
    assert b'<c r="E2"><f>"high"</f></c>' in xml
    assert "E2, E3, E4 (3 cells)" in _refused(("book.xlsx", data)).message


def test_formulas_with_saved_results_are_read_as_their_results() -> None:
    """As Excel saves them: the result in ``<v>`` (an empty text result with t="str")."""
    def saved(xml: bytes) -> bytes:
        xml = xml.replace(b'<c r="E2"><f>"high"</f><v /></c>',
                          b'<c r="E2" t="str"><f>"high"</f><v>high</v></c>')
        xml = xml.replace(b'<c r="E3"><f>"high"</f><v /></c>',
                          b'<c r="E3" t="str"><f>"high"</f><v></v></c>')
        return re.sub(rb'<c (r="E[0-9]+")><f>"high"</f><v /></c>',
                      rb'<c \1 t="str"><f>"high"</f><v>mid</v></c>', xml)

    data = _edit(_formula_book(4), "xl/worksheets/sheet1.xml", saved)
    j = read_judgments(("book.xlsx", data))
    labels = j.label_table()
    # "high", "mid", "mid"; d2's empty result is unlabeled, as Excel shows it
    assert labels[["doc", "label"]].values.tolist() == [["d1", 3.0], ["d3", 2.0], ["d4", 2.0]]
    assert len(j.shown_table()) == 4


def test_a_formula_in_a_column_not_read_does_not_matter() -> None:
    rows = [[*r, "=1+1"] for r in MAY]
    data = _book({"May": [[*HEADER, "notes"], *rows]})
    assert len(read_judgments(("book.xlsx", data)).label_table()) == len(MAY)


# ----------------------------------------------------------------------------- 3. mixed rounds


def _months(dates: dict[str, object], text: dict[str, str], date_format: str | None
            ) -> bytes:
    """Rows of four rounds, April and May, some typed as text, some Excel dates."""
    rows, formats = [HEADER], {}
    for i, (doc, when) in enumerate({**dates, **text}.items(), start=2):
        rows.append([when, "q1" if i % 2 else "q2", doc, 1 + i // 2, "high"])
        if doc in dates and date_format:
            formats[f"A{i}"] = date_format
    return _book({"Rounds": rows}, formats={"Rounds": formats})


@pytest.mark.parametrize("date_format", ["yyyy-mm", "mmm-yy", "yyyy-mm-dd", None])
def test_typed_months_and_excel_dates_make_one_round_per_month(date_format) -> None:
    data = _months({"d1": dt.datetime(2026, 5, 1), "d2": dt.datetime(2026, 4, 1)},
                   {"d3": "2026-05", "d4": "2026-04"}, date_format)
    j = read_judgments(("book.xlsx", data))
    assert j.rounds == ("2026-04", "2026-05")
    assert [w.code for w in j.warnings] == ["mixed-rounds"]
    assert j.warnings[0].message.endswith("Rounds found: 2026-04, 2026-05")
    assert "sheet 'Rounds'" in j.warnings[0].message


def test_dates_shown_as_months_read_as_months() -> None:
    data = _months({"d1": dt.datetime(2026, 5, 1), "d2": dt.datetime(2026, 4, 1)}, {},
                   "yyyy-mm")
    j = read_judgments(("book.xlsx", data))
    assert j.rounds == ("2026-04", "2026-05") and j.warnings == ()


def test_dates_shown_two_ways_make_one_round_per_month() -> None:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "Rounds"
    ws.append(HEADER)
    for i, when in enumerate([dt.datetime(2026, 5, 1), dt.datetime(2026, 5, 1),
                              dt.datetime(2026, 4, 1)], start=2):
        ws.append([when, "q1", f"d{i}", i, "high"])
    ws["A2"].number_format = "yyyy-mm"
    buf = io.BytesIO()
    book.save(buf)
    j = read_judgments(("book.xlsx", buf.getvalue()))
    assert j.rounds == ("2026-04", "2026-05")
    assert j.warnings[0].message == (
        "sheet 'Rounds': the round column 'month' mixes dates shown as months and as days; "
        "its dates were read as months (YYYY-MM), as the other rounds are written. Rounds "
        "found: 2026-04, 2026-05")


def test_full_dates_stay_days_beside_rounds_that_are_not_months() -> None:
    data = _months({"d1": dt.datetime(2026, 5, 1)}, {"d3": "week 19"}, None)
    j = read_judgments(("book.xlsx", data))
    assert set(j.rounds) == {"2026-05-01", "week 19"}
    assert j.warnings[0].message.endswith("Rounds found: 2026-05-01, week 19")


def test_the_rounds_are_read_per_sheet() -> None:
    """Dates in one sheet, months typed in another: each sheet's column is one form
    already (``tests/test_labels.py`` reads such a workbook as two rounds of days and
    months)."""
    data = _book({"May": [HEADER, [dt.datetime(2026, 5, 1), "q1", "d1", 1, "high"]],
                  "June": [HEADER, ["2026-06", "q1", "d1", 1, "low"]]})
    j = read_judgments(("book.xlsx", data))
    assert j.rounds == ("2026-05-01", "2026-06") and j.warnings == ()


# ----------------------------------------------------------------------------- 9. zip bombs

INFLATED = 247 * 2**20


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """A valid workbook whose sheet XML inflates to 247 MiB from about 1 MB: 2.2 million
    labeled rows (no row numbers, no dimension, so that every row is read). The reader
    before the bound took 203 s and 739 MiB over its baseline to read it (and refuse
    its duplicate rows)."""
    data = _book({"May": [HEADER, *MAY]})
    src = zipfile.ZipFile(io.BytesIO(data))
    row = (b'<row><c t="inlineStr"><is><t>2026-05</t></is></c><c t="inlineStr"><is><t>q1</t>'
           b'</is></c><c t="inlineStr"><is><t>d1</t></is></c><c t="n"><v>1</v></c>'
           b'<c t="inlineStr"><is><t>high</t></is></c></row>')
    chunk = row * ((1 << 20) // len(row))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        for info in src.infolist():
            body = src.read(info)
            if info.filename != "xl/worksheets/sheet1.xml":
                z.writestr(info, body)
                continue
            head, tail = re.sub(rb"<dimension[^>]*/>", b"", body).split(b"</sheetData>")
            with z.open(info.filename, "w") as fh:
                fh.write(head)
                for _ in range(INFLATED // len(chunk) + 1):
                    fh.write(chunk)
                fh.write(b"</sheetData>" + tail)
    size = zipfile.ZipFile(io.BytesIO(out.getvalue())).getinfo("xl/worksheets/sheet1.xml")
    assert size.file_size > INFLATED and len(out.getvalue()) < 1_100_000
    return out.getvalue()


def _declare(data: bytes, member: str, size: int) -> bytes:
    """``data`` with the uncompressed size of ``member`` in the zip directory set to
    ``size`` (a forged archive: what zipfile trusts)."""
    out = bytearray(data)
    name = member.encode()
    at = out.find(b"PK\x01\x02")
    while at >= 0:
        name_len = struct.unpack_from("<H", out, at + 28)[0]
        if bytes(out[at + 46: at + 46 + name_len]) == name:
            struct.pack_into("<I", out, at + 24, size)
            return bytes(out)
        at = out.find(b"PK\x01\x02", at + 4)
    raise AssertionError(f"{member} not in the directory")


def test_a_workbook_bomb_is_refused_by_its_declared_sizes(bomb) -> None:
    start = time.process_time()  # this process's CPU: other processes' load does not count
    err = _refused(("bomb.xlsx", bomb))
    assert time.process_time() - start < 5
    assert re.fullmatch(
        r"the Excel \.xlsx workbook expands more than 200 times its [0-9.]+ KiB \(past "
        r"[0-9.]+ MiB\): a compression bomb\? The limit is ReadLimits\.max_gzip_ratio "
        r"\(environment variable IREVAL_MAX_GZIP_RATIO\); stopped there", err.message), err
    with pytest.raises(FormatError, match="expands more than 200 times"):
        read_gsb([("bomb.xlsx", bomb)])


def test_the_absolute_bound_applies_to_workbooks_too(bomb) -> None:
    src = Source("bomb.xlsx", bomb, limits=ReadLimits(max_inflated_bytes=2**20,
                                                       max_gzip_ratio=10**6))
    with pytest.raises(FormatError, match="expands to more than 1 MiB, the most ireval "
                                          "reads into memory"):
        read_table(src, LABEL_ALIASES, required=REQUIRED_LABEL_COLUMNS)


@pytest.mark.parametrize("declared", [1000, 150 * 2**20])
def test_a_bomb_whose_directory_lies_is_stopped_while_inflating(bomb, tmp_path,
                                                               declared) -> None:
    """The directory declares less than the sheet holds (within the bound): inflating
    stops at the declared size and the member fails its CRC check; quickly, and with
    little memory (measured in a fresh process)."""
    path = tmp_path / "bomb.xlsx"
    path.write_bytes(_declare(bomb, "xl/worksheets/sheet1.xml", declared))
    code = (
        "import resource, time\n"
        "from ireval_core.errors import FormatError\n"
        "from ireval_core.labels import read_judgments\n"
        "import openpyxl\n"
        f"data = open({str(path)!r}, 'rb').read()\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "start = time.process_time()\n"
        "try:\n"
        "    read_judgments(('bomb.xlsx', data))\n"
        "except FormatError as exc:\n"
        "    print(exc)\n"
        "print(time.process_time() - start)\n"
        "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    message, seconds, peak_mib = done.stdout.strip().split("\n")
    assert message.startswith("bomb.xlsx: not a readable Excel .xlsx workbook (BadZipFile: "
                              "Bad CRC-32 for file 'xl/worksheets/sheet1.xml')"), message
    assert float(seconds) < 5, seconds
    assert float(peak_mib) < 300, peak_mib


# ----------------------------------------------------------------------- merged and empty headers
# (issue 18 item 1)


def _merged_book(rows: list[list[object]], merges: list[str], title: str = "五月") -> bytes:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = title
    for row in rows:
        ws.append(row)
    for ref in merges:
        ws.merge_cells(ref)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def test_a_title_merged_over_the_header_is_named_with_the_missing_columns() -> None:
    # (the header is the first row holding something: a title row there is no header)
    """A report title merged across A1:E1 above the table: the first row is no header."""
    data = _merged_book([["2026年5月 搜索标注结果"], HEADER, *MAY], ["A1:E1"])
    err = _refused(("title.xlsx", data))
    assert err.message.startswith("sheet '五月': missing column(s) in the labeling header")
    assert err.message.endswith("the header cells A1:E1 are merged (a title over the table, "
                                "or one header over several columns): unmerge them and give "
                                "each column its own header cell in one row")


def test_merged_header_cells_of_a_table_are_refused() -> None:
    rows = [["month", "qid", "docid", "pos", "grade", None], *[r + ["x"] for r in MAY]]
    data = _merged_book(rows, ["E1:F1"])  # 'grade' over the label and a notes column
    err = _refused(("m.xlsx", data))
    assert str(err) == ("m.xlsx: sheet '五月': the header cells E1:F1 are merged: each column "
                        "needs its own header cell; unmerge them")
    assert err.problems[0].where == "sheet '五月'"


def test_merged_data_cells_in_a_column_read_are_refused_with_the_range() -> None:
    """A month merged down the round column: Excel shows it on every row, the file
    holds it in A2 only."""
    rows = [HEADER, *MAY, ["2026-06", "q1", "d1", 1, "high"], [None, "q1", "d2", 2, "low"]]
    data = _merged_book(rows, ["A2:A4", "A5:A6"])
    err = _refused(("months.xlsx", data))
    assert err.count == 2
    assert err.problems[0].message == (
        "the cells A2:A4 are merged: Excel shows one value over them, the file holds it in "
        "A2 only and the other rows would read as blank; unmerge them and fill the value "
        "into every row")
    assert [p.message.split(" are")[0] for p in err.problems] == ["the cells A2:A4",
                                                                  "the cells A5:A6"]
    # merges in a column not read do not matter
    rows = [HEADER + ["note"], *[r + ["n"] for r in MAY]]
    ok = read_judgments(("ok.xlsx", _merged_book(rows, ["F2:F3"])))
    assert ok.n_shown == 3


def test_a_column_without_a_header_cell_is_named() -> None:
    # the document column lost its name: the required column is missing, the cell named
    rows = [["month", "qid", None, "pos", "grade"], *MAY]
    err = _refused(("e.xlsx", _merged_book(rows, [])))
    assert "expected doc: one of" in err.message
    assert err.message.endswith("the header cell(s) C1 are empty over values (first at C2): "
                                "name those columns")
    # an extra column without a name, all required found: read, with a warning
    rows = [HEADER + [None], *[r + ["why"] for r in MAY]]
    j = read_judgments(("w.xlsx", _merged_book(rows, [])))
    (w,) = [w for w in j.warnings if w.code == "unnamed-columns"]
    assert w.message == ("sheet '五月': the header cell(s) F1 are empty over values (first at "
                         "F2); those columns are not read: give them a name to read them")
