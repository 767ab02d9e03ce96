"""The Data page reads an Excel workbook uploaded as qrels (or a run): the counts of its
first sheet, and the Metrics page's means equal the core's on the same workbook; a bad
cell is named with its sheet and row on the page, never as a traceback."""

from __future__ import annotations

import io
import re

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import metrics as metrics_keys
from ireval_core import evaluate
from ireval_core.io import read_qrels, read_runs
from tests._apps import APP

openpyxl = pytest.importorskip("openpyxl")

# MS MARCO-like ids typed as numbers in Excel; graded 0-3
QRELS_ROWS = [[1048585, 7187158, 3], [1048585, 7187157, 0], [1048585, 7187156.0, 2],
              [2, 11, 1], [2, 12, 2], [3, 30, 1]]
RUN = (b"1048585 Q0 7187156 1 3.0 alpha\n1048585 Q0 9 2 2.5 alpha\n"
       b"1048585 Q0 7187158 3 2.0 alpha\n2 Q0 12 1 1.0 alpha\n2 Q0 13 2 0.5 alpha\n"
       b"3 Q0 30 1 0.1 alpha\n")


def _xlsx(rows: list[list[object]]) -> bytes:
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "判断"  # a Chinese team's sheet name
    ws.append(["query_id", "doc_id", "grade"])
    for row in rows:
        ws.append(row)
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def _upload(qrels: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(
        ("judgments.xlsx", qrels, "application/vnd.openxmlformats-officedocument."
                                  "spreadsheetml.sheet"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value([("a.run", RUN, "text/plain")])
    at.run()
    assert not at.exception
    return at


def test_an_xlsx_qrels_upload_is_evaluated_as_the_core_does() -> None:
    data = _xlsx(QRELS_ROWS)
    at = _upload(data)
    assert not at.error
    counts = {m.label: m.value for m in at.metric}
    assert counts["Queries in qrels"] == "3"
    assert counts["Judgments"] == "6"
    at.query_params["measures"] = ["nDCG@10", "AP"]
    at.switch_page("pages/metrics.py").run()
    assert not at.exception
    assert at.multiselect(key=metrics_keys.MEASURES).value == ["nDCG@10", "AP"]
    expected = evaluate(read_qrels(data, name="judgments.xlsx"),
                        read_runs(RUN, name="a.run"), ["nDCG@10", "AP"])
    table = at.table[0].value
    for measure in ("nDCG@10", "AP"):
        shown = float(re.match(r"\s*(\d+\.\d+)", table.loc["alpha", measure])[1])  # type: ignore[index]
        assert shown == round(expected.mean("alpha", measure), 4)
        assert 0 < shown < 1


def test_a_bad_grade_cell_is_named_on_the_page() -> None:
    at = _upload(_xlsx([*QRELS_ROWS, [3, 31, "高"]]))
    [error] = [e.value for e in at.error if "judgments.xlsx" in e.value]
    assert "sheet '判断', row 8: expected a numeric grade in column 'grade' (cell C8), got '高'" \
        in error
