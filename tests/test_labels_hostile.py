"""Malformed labeling and GSB files: always a FormatError naming the file and the place.

Each case is a file a person or a tool could produce (a Parquet list column, binary
cells that are not UTF-8, a column written twice, a damaged dictionary page, a tab in an
id, a huge position, CR line endings, a year written as ``-1``); each must be read or
refused with a :class:`FormatError` naming the file and the line (CSV/TSV), the sheet
and row (Excel) or the row and column (Parquet), holding no chained exception. Ids
stay the text written. ``tests/test_fuzz_readers.py`` searches the same space at
random.
"""

from __future__ import annotations

import io

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ireval_core.errors import FormatError
from ireval_core.labels import read_judgments
from ireval_core.labels.gsb import read_gsb

BASE = {"month": ["2026-05", "2026-05", "2026-05"], "qid": ["q1", "q1", "007"],
        "docid": ["d1", "d2", "d1"], "pos": [1, 2, 1], "grade": ["high", "low", "mid"]}


def _parquet(columns: dict[str, object] | pa.Table) -> bytes:
    table = columns if isinstance(columns, pa.Table) else pa.table(columns)
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _refused(source: tuple[str, bytes], *, gsb: bool = False) -> FormatError:
    with pytest.raises(FormatError) as info:
        (read_gsb if gsb else read_judgments)(source)
    err = info.value
    assert type(err) is FormatError
    assert err.source == source[0], str(err)
    assert err.__context__ is None and err.__cause__ is None
    assert "\n" not in str(err)
    return err


@pytest.mark.parametrize(("column", "values", "expected"), [
    ("qid", pa.array([[1], [2], [3]]), "column 'qid' holds list<element: int64> values; "
                                       "expected text or numbers"),
    ("docid", pa.array([{"a": 1}, {"a": 2}, {"a": 3}]), "column 'docid' holds struct"),
    ("grade", pa.array([[("k", 1)]] * 3, pa.map_(pa.string(), pa.int64())),
     "column 'grade' holds map<string, int64"),
    ("pos", pa.array([[1], [2], [1]]), "column 'pos' holds list"),
])
def test_a_parquet_column_that_is_not_text_or_numbers_is_named(column, values,
                                                               expected) -> None:
    err = _refused(("l.parquet", _parquet({**BASE, column: values})))
    assert err.message.startswith(expected), str(err)


def test_parquet_bytes_that_are_not_utf8_name_the_row() -> None:
    docid = pa.array([b"d1", b"\xff\xfe", b"d3"], pa.binary())
    err = _refused(("l.parquet", _parquet({**BASE, "docid": docid})))
    assert str(err) == ("l.parquet: row 2: column 'docid' holds bytes that are not UTF-8 "
                        "text; save the file with text columns in UTF-8")


def test_binary_utf8_ids_are_read_as_their_text() -> None:
    docid = pa.array([b"d1", b"d2", b"007"], pa.binary())
    j = read_judgments(("l.parquet", _parquet({**BASE, "docid": docid})))
    assert sorted(j.doc_ids.to_pylist()) == ["007", "d1", "d2"]


def test_a_column_written_twice_in_parquet_is_named() -> None:
    arrays = [pa.array(v) for v in BASE.values()] + [pa.array(["x", "y", "z"])]
    table = pa.Table.from_arrays(arrays, names=[*BASE, "qid"])
    err = _refused(("l.parquet", _parquet(table)))
    assert str(err) == "l.parquet: column 'qid' appears twice in the Parquet file"


def test_a_damaged_dictionary_page_is_refused_before_it_is_used() -> None:
    """Dictionary indices out of bounds decode without error; the full validation sees
    them (they used to reach a cast and raise ArrowIndexError)."""
    data = bytearray(_parquet({"round": ["2026-05", "2026-06", "2026-05", "2026-06"],
                               "query": ["q1", "q2", "q1", "q2"],
                               "judgment": ["G", "S", "B", "G"],
                               "rater": ["ann", "bo", "cy", "ann"]}))
    table = pq.read_table(io.BytesIO(bytes(data)), read_dictionary=["rater"])
    assert table.column("rater").num_chunks == 1
    # the rater column's RLE indices: raise the last index past the dictionary's end
    damaged = None
    for at in range(len(data) - 1, 3, -1):
        trial = bytearray(data)
        trial[at] ^= 0x04
        try:
            t = pq.read_table(io.BytesIO(bytes(trial)), read_dictionary=["rater"])
        except (pa.ArrowException, OSError):
            continue
        try:
            t.validate(full=True)
        except pa.ArrowInvalid:
            damaged = bytes(trial)
            break
    assert damaged is not None, "no single-bit damage decodes to an invalid table"
    err = _refused(("gsb.parquet", damaged), gsb=True)
    assert err.message.startswith("not a readable Parquet file (")


@pytest.mark.parametrize(("cell", "named"), [
    ("q\t1", "a tab"), ("q\x001", "a NUL byte"), ("q\u20281", "a line separator (U+2028)"),
    ("q\x851", "the control character U+0085"),
])
def test_a_control_character_in_an_id_names_the_line(cell, named) -> None:
    text = f'month,qid,docid,pos,grade\n2026-05,q1,d1,1,high\n2026-05,"{cell}",d2,1,low\n'
    err = _refused(("june.csv", text.encode()))
    assert err.line == 3, str(err)
    assert f"contains {named}" in err.message and "'qid'" in err.message


def test_a_control_character_in_a_parquet_cell_names_the_row() -> None:
    err = _refused(("l.parquet", _parquet({**BASE, "docid": ["d1", "d2", "d\n3"]})))
    assert str(err).startswith("l.parquet: row 3: 'd\\n3' in column 'docid' contains a "
                               "line break (\\n)")


def test_a_control_character_in_an_excel_cell_names_sheet_and_row() -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "June"
    sheet.append(list(BASE))
    sheet.append(["2026-05", "q1", "d1", 1, "high"])
    sheet.append(["2026-05", "q\t2", "d1", 1, "high"])
    buf = io.BytesIO()
    book.save(buf)
    err = _refused(("june.xlsx", buf.getvalue()))
    assert str(err).startswith("june.xlsx: sheet 'June', row 3: 'q\\t2' in column 'qid' "
                               "contains a tab")


def test_a_damaged_excel_workbook_is_refused() -> None:
    openpyxl = pytest.importorskip("openpyxl")
    buf = io.BytesIO()
    openpyxl.Workbook().save(buf)
    data = buf.getvalue()
    err = _refused(("june.xlsx", data[: len(data) // 2]))
    assert err.message.startswith("not a readable Excel .xlsx workbook (")


def test_a_huge_position_names_the_line() -> None:
    text = b"month,qid,docid,pos,grade\n2026-05,q1,d1,1e300,high\n2026-05,q1,d2,2,low\n"
    err = _refused(("june.csv", text))
    assert err.line == 2 and "expected a position (an int >= 1)" in err.message
    assert err.message.endswith("got '1e+300'")


def test_cr_line_endings_are_read() -> None:
    text = b"month,qid,docid,pos,grade\r2026-05,q1,d1,1,high\r2026-05,007,d2,1,low\r"
    j = read_judgments(("june.csv", text))
    assert sorted(j.query_ids.tolist()) == ["007", "q1"]


def test_a_bad_row_after_cr_line_endings_is_located() -> None:
    text = b"month,qid,docid,pos,grade\r2026-05,q1,d1,1,high\r2026-05,q1,d2,zero,low\r"
    err = _refused(("june.csv", text))
    assert err.line == 3 and "'zero'" in err.message


def test_ids_stay_the_text_written() -> None:
    text = b"month,qid,docid,pos,grade\n2026-05,007,0042,1,high\n2026-05,1e3,1.50,2,low\n"
    j = read_judgments(("june.csv", text))
    assert sorted(j.query_ids.tolist()) == ["007", "1e3"]
    assert sorted(j.doc_ids.to_pylist()) == ["0042", "1.50"]


def test_a_round_that_is_not_a_date_is_ordered_as_text() -> None:
    """'-1' parses as the year -1, out of pandas' range: it used to raise
    OutOfBoundsDatetime; the rounds are now ordered as text."""
    text = b"month,qid,docid,pos,grade\n2026-05,q1,d1,1,high\n-1,q1,d1,1,low\n"
    assert read_judgments(("june.csv", text)).round_names.tolist() == ["-1", "2026-05"]


def test_a_malformed_gsb_file_names_the_line() -> None:
    text = b"round,query,judgment,rater\n2026-05,q1,G,ann\n2026-05,q\t2,S,bo\n"
    err = _refused(("gsb.tsv.csv", text), gsb=True)
    assert err.line == 3 and "contains a tab" in err.message


def test_an_invalid_argument_is_not_a_format_error() -> None:
    with pytest.raises(ValueError, match="at least one file") as info:
        read_judgments([])
    assert not isinstance(info.value, FormatError)
