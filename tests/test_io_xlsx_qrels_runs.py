"""Qrels and runs read from an Excel ``.xlsx`` workbook (its first sheet with the id
columns): the same column names, checks and errors as CSV, with sheet and row.

Ids typed as numbers in Excel (MS MARCO's) come out as the text Excel shows; the means
of a workbook equal those of the same judgments read from TREC text, exactly.
"""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest

from ireval_core import FormatError, read_qrels, read_runs
from ireval_core.evaluate import evaluate
from ireval_core.io import ReadLimits

openpyxl = pytest.importorskip("openpyxl")

MEASURES = ["nDCG@10", "AP", "P@5", "RR", "recall@100"]


def _book(sheets: dict[str, list[list[object]]], *, hidden: tuple[str, ...] = ()) -> bytes:
    """A workbook with one sheet per item, in order."""
    book = openpyxl.Workbook()
    for i, (title, rows) in enumerate(sheets.items()):
        ws = book.active if i == 0 else book.create_sheet(title)
        ws.title = title
        for row in rows:
            ws.append(row)
        if title in hidden:
            ws.sheet_state = "hidden"
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def _msmarco(seed: int = 7) -> tuple[list[list[object]], list[list[object]]]:
    """Qrels rows (qid, docid, grade 0-3) and run rows (qid, docid, score, tag) with
    MS MARCO-like numeric ids, as Excel holds them: int and float cells."""
    rng = np.random.default_rng(seed)
    qrels: list[list[object]] = []
    run: list[list[object]] = []
    for q in rng.choice(np.arange(1_000_000, 1_200_000), 12, replace=False):
        docs = rng.choice(np.arange(100, 8_841_823), 30, replace=False)
        for i, d in enumerate(docs[:15]):
            qrels.append([int(q), float(d) if i % 2 else int(d), int(rng.integers(0, 4))])
        for tag in ("bm25", "dense"):
            for d in rng.permutation(docs)[:20]:
                run.append([int(q), int(d), float(rng.normal()), tag])
    return qrels, run


def _trec(qrels: list[list[object]], run: list[list[object]]) -> tuple[bytes, bytes]:
    q = "".join(f"{a} 0 {int(b)} {c}\n" for a, b, c in qrels)  # type: ignore[call-overload]
    r = "".join(f"{a} Q0 {b} {i} {s!r} {t}\n" for i, (a, b, s, t) in enumerate(run))
    return q.encode(), r.encode()


def test_qrels_and_run_sheets_give_the_trec_files_means_exactly() -> None:
    qrels_rows, run_rows = _msmarco()
    qrels_x = _book({"judgments": [["query_id", "doc_id", "relevance"], *qrels_rows]})
    run_x = _book({"run": [["qid", "docid", "score", "tag"], *run_rows]})
    qrels_t, run_t = _trec(qrels_rows, run_rows)
    from_xlsx = evaluate(read_qrels(qrels_x, name="qrels.xlsx"),
                         read_runs(run_x, name="run.xlsx"), MEASURES)
    from_trec = evaluate(read_qrels(qrels_t, name="qrels.txt"),
                         read_runs(run_t, name="run.txt"), MEASURES)
    for tag in ("bm25", "dense"):
        for m in MEASURES:
            assert from_xlsx.mean(tag, m) == from_trec.mean(tag, m), (tag, m)
    assert from_xlsx.mean("bm25", "nDCG@10") > 0


def test_numeric_ids_read_as_the_text_excel_shows() -> None:
    data = _book({"q": [["qid", "pid", "rel"], [1048585, 7187158.0, 1],
                        [1048585, 1200000.0, 3.0], ["007", "d1", 0]]})
    qrels = read_qrels(data, name="q.xlsx")
    assert qrels.to_dict() == {"1048585": {"7187158": 1.0, "1200000": 3.0},
                               "007": {"d1": 0.0}}


def test_run_tags_and_rank_columns() -> None:
    data = _book({"runs": [["Topic", "DocNo", "Score", "Run"], [1, 10, 2.5, "a"],
                           [1, 11, 1.5, "a"], [1, 10, 0.25, "b"], [2, 12, 3, None]]})
    runs = read_runs(data, name="sys.xlsx")
    assert [(r.name, r.to_dict()) for r in runs] == [
        ("a", {"1": {"10": 2.5, "11": 1.5}}), ("b", {"1": {"10": 0.25}}),
        ("sys", {"2": {"12": 3.0}})]
    assert [w.code for w in runs[2].warnings] == ["tag-missing"]
    ranked = read_runs(_book({"r": [["qid", "pid", "rank"], [5, 70, 1], [5, 71, 2]]}),
                       name="msmarco.xlsx")
    assert ranked[0].to_dict() == {"5": {"70": -1.0, "71": -2.0}}
    assert "score-from-rank" in [w.code for w in ranked[0].warnings]


def test_the_first_sheet_with_the_id_columns_is_read() -> None:
    data = _book({"notes": [["read me"], ["judged in May"]],
                  "hidden": [["qid", "docid", "rel"], ["h", "d", 1]],
                  "May": [["qid", "docid", "rel"], ["q1", "d1", 2]],
                  "June": [["qid", "docid", "rel"], ["q2", "d2", 1]]}, hidden=("hidden",))
    assert read_qrels(data, name="q.xlsx").to_dict() == {"q1": {"d1": 2.0}}


@pytest.mark.parametrize(("rows", "message"), [
    ([["q1", "d1", 1], [None, "d2", 0]],
     "q.xlsx: sheet 'S', row 3: empty query id"),
    ([["q1", "d1", 1], ["q1", "d2", "high"]],
     "q.xlsx: sheet 'S', row 3: expected a numeric grade in column 'rel' (cell C3), "
     "got 'high'"),
    ([["q1", "d1", 1], ["q1", "d2", None]],
     "q.xlsx: sheet 'S', row 3: expected a numeric grade in column 'rel' (cell C3), got ''"),
    ([["q1", "d1", 1], ["q2", "d2", 0], ["q1", "d1", 3]],
     "q.xlsx: sheet 'S', row 4: duplicate qrels entry for query 'q1', document 'd1' "
     "(first at sheet 'S', row 2); each (query, document) may appear once"),
])
def test_qrels_errors_name_sheet_and_row(rows: list[list[object]], message: str) -> None:
    data = _book({"S": [["qid", "docid", "rel"], *rows]})
    with pytest.raises(FormatError) as err:
        read_qrels(data, name="q.xlsx")
    assert str(err.value).startswith(message), str(err.value)


def test_a_score_column_of_text_is_an_error_naming_the_cell() -> None:
    data = _book({"Run": [["qid", "docid", "score", "tag"], [1, 2, 0.5, "a"],
                          [1, 3, "n/a", "a"], [1, 4, "0.2x", "a"]]})
    with pytest.raises(FormatError) as err:
        read_runs(data, name="r.xlsx")
    assert str(err.value) == ("r.xlsx: sheet 'Run', row 3: expected a numeric score in column "
                              "'score' (cell C3), got 'n/a'; and 1 more problem (2 in all)")
    assert "r.xlsx: sheet 'Run', row 4: expected a numeric score" in err.value.report()


def test_header_problems_name_the_sheet() -> None:
    run_as_qrels = _book({"S": [["qid", "docid", "score"], ["q", "d", 1.0]]})
    with pytest.raises(FormatError, match=r"q.xlsx: sheet 'S', row 1: this looks like a run"):
        read_qrels(run_as_qrels, name="q.xlsx")
    no_ids = _book({"S": [["query text", "url", "rel"], ["q", "d", 1]]})
    with pytest.raises(FormatError, match=r"q.xlsx: sheet 'S': missing column\(s\) in the "
                                          r"qrels header \['query text', 'url', 'rel'\]"):
        read_qrels(no_ids, name="q.xlsx")
    empty = _book({"S": [["qid", "docid", "rel"]]})
    with pytest.raises(FormatError, match=r"sheet 'S': no qrels rows after the header"):
        read_qrels(empty, name="q.xlsx")


def test_the_read_limits_hold_for_workbooks() -> None:
    qrels_rows, _ = _msmarco()
    book = io.BytesIO(_book({"q": [["qid", "docid", "rel"], *qrels_rows]}))
    with zipfile.ZipFile(book, "a") as z:  # a part that inflates far beyond the file
        z.writestr("xl/media/pad.bin", b"\0" * (50 << 20), zipfile.ZIP_DEFLATED)
    with pytest.raises(FormatError, match="expands more than"):
        read_qrels(book.getvalue(), name="bomb.xlsx", limits=ReadLimits(max_gzip_ratio=200))


def test_format_xlsx_is_accepted_and_other_zips_still_refused() -> None:
    data = _book({"q": [["qid", "docid", "rel"], ["q1", "d1", 1]]})
    assert read_qrels(data, name="judgments.bin", format="xlsx").to_dict() == {
        "q1": {"d1": 1.0}}
    assert read_qrels(data, name="upload").to_dict() == {"q1": {"d1": 1.0}}  # by content
    other = io.BytesIO()
    with zipfile.ZipFile(other, "w") as z:
        z.writestr("qrels.txt", "q1 0 d1 1\n")
    with pytest.raises(FormatError, match="this is a zip archive"):
        read_qrels(other.getvalue(), name="qrels.zip")


def test_the_cli_prints_the_trec_files_output_for_workbooks(tmp_path) -> None:
    from ireval_core.cli import main

    qrels_rows, run_rows = _msmarco(seed=3)
    qrels_t, run_t = _trec(qrels_rows, run_rows)
    files = {"q.xlsx": _book({"q": [["qid", "docid", "rel"], *qrels_rows]}),
             "r.xlsx.gz": gzip.compress(_book({"r": [["qid", "docid", "score", "tag"],
                                                     *run_rows]})),
             "q.txt": qrels_t, "r.txt": run_t}
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    printed = []
    for qrels, run in (("q.xlsx", "r.xlsx.gz"), ("q.txt", "r.txt")):
        out = io.StringIO()
        assert main(["eval", "-q", "-m", "map", "-m", "ndcg_cut_10", str(tmp_path / qrels),
                     str(tmp_path / run)], out=out) == 0
        printed.append(out.getvalue())
    assert printed[0] == printed[1]
    assert "ndcg_cut_10" in printed[0] and len(printed[0].splitlines()) > 24
