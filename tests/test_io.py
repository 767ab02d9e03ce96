"""Readers: every format, every documented error, with files that really have the problem."""

from __future__ import annotations

import gzip
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ireval_core import FormatError, read_qrels, read_run, read_runs
from ireval_core.data import Qrels, Run

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d1 -1\nq2 0 d9 3\n"
RUN = "q1 Q0 d2 1 0.5 bm25\nq1 Q0 d1 2 0.5 bm25\nq1 Q0 d7 3 0.9 bm25\nq2 Q0 d9 1 3 bm25\n"


def write(tmp_path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def error_of(fn, *args, **kw) -> FormatError:
    with pytest.raises(FormatError) as info:
        fn(*args, **kw)
    return info.value


# ----------------------------------------------------------------------------- good input


def test_trec_qrels_from_path_keeps_grades(tmp_path):
    q = read_qrels(write(tmp_path, "qrels.txt", QRELS))
    assert q.source == "qrels.txt"
    assert q.to_dict() == {"q1": {"d1": 1.0, "d2": 0.0, "d3": 2.0}, "q2": {"d1": -1.0, "d9": 3.0}}
    assert list(q.query_ids) == ["q1", "q2"]
    assert q.offsets.tolist() == [0, 3, 5]


def test_run_ranking_is_score_desc_then_docid_desc():
    run = read_run(RUN.encode(), name="run.txt")
    docs = run.doc_ids.take(pa.array(run.dcode)).to_pylist()
    # q1: d7 (0.9) first, then the 0.5 tie broken by docid descending: d2 before d1
    assert docs == ["d7", "d2", "d1", "d9"]
    assert run.name == "bm25"
    assert run.score.tolist() == [0.9, 0.5, 0.5, 3.0]


def test_docid_tie_break_is_bytewise():
    # byte-wise: "B" (0x42) < "a" (0x61) < "é" (0xc3 0xa9); descending order wins ties
    run = read_run("q1 Q0 a 1 1 t\nq1 Q0 B 2 1 t\nq1 Q0 é 3 1 t\n".encode(), name="r")
    assert run.doc_ids.take(pa.array(run.dcode)).to_pylist() == ["é", "a", "B"]


def test_rank_column_is_ignored():
    a = read_run(b"q1 Q0 d1 1 0.1 t\nq1 Q0 d2 2 0.9 t\n", name="r")
    assert a.doc_ids.take(pa.array(a.dcode)).to_pylist() == ["d2", "d1"]


def test_sloppy_whitespace_crlf_blank_lines(tmp_path):
    text = "q1\tQ0  d2 1 0.5\tbm25  \r\n\r\n  q1 Q0 d1 2 0.7 bm25\r\n"
    run = read_run(text.encode(), name="r.txt")
    assert run.to_dict() == {"q1": {"d1": 0.7, "d2": 0.5}}
    tabs = read_qrels(b"q1\t0\td1\t1\nq1\t0\td2\t0\n", name="q")
    assert tabs.to_dict() == {"q1": {"d1": 1.0, "d2": 0.0}}


def test_gzip_and_bytes_and_file_object(tmp_path):
    data = gzip.compress(QRELS.encode())
    assert len(read_qrels(data, name="qrels.txt.gz")) == 5
    with open(write(tmp_path, "qrels.gz", data), "rb") as fh:
        assert len(read_qrels(fh)) == 5


def test_several_tags_become_several_systems():
    text = "q1 Q0 d1 1 2 a\nq1 Q0 d2 2 1 a\nq1 Q0 d1 1 1 b\nq2 Q0 d3 1 1 b\n"
    runs = read_runs(text.encode(), name="two.txt")
    assert [r.name for r in runs] == ["a", "b"]
    assert runs[0].to_dict() == {"q1": {"d1": 2.0, "d2": 1.0}}
    assert runs[1].to_dict() == {"q1": {"d1": 1.0}, "q2": {"d3": 1.0}}
    assert list(runs[0].query_ids) == ["q1"]  # no query leaks from the other tag


def test_run_named_by_file_when_tag_taken_or_missing(tmp_path):
    runs = read_runs(RUN.encode(), name="run_v2.txt", taken_names=["bm25"])
    assert runs[0].name == "run_v2:bm25"
    csv = "qid,docid,score\nq1,d1,0.3\n"
    assert read_run(csv.encode(), name="mine.csv").name == "mine"


def test_csv_tsv_with_aliases_and_rank_only(tmp_path):
    q = read_qrels(b"query_id,doc_id,relevance,extra\nq1,d1,2,x\nq1,d2,0,y\n", name="q.csv")
    assert q.to_dict() == {"q1": {"d1": 2.0, "d2": 0.0}}
    r = read_run(b"qid\tdocno\tscore\ttag\nq1\td1\t0.2\tsys\nq1\td2\t0.4\tsys\n", name="r.tsv")
    assert r.name == "sys" and r.to_dict() == {"q1": {"d2": 0.4, "d1": 0.2}}
    ranked = read_runs(b"qid,docid,rank\nq1,d1,2\nq1,d2,1\n", name="r.csv")[0]
    assert ranked.to_dict() == {"q1": {"d2": -1.0, "d1": -2.0}}
    assert [w.code for w in ranked.warnings] == ["score-from-rank"]


def test_trec_lines_in_a_file_named_tsv_or_csv(tmp_path):
    """MS MARCO ships its qrels as ``qrels.dev.small.tsv``: TREC lines, tab-separated, no
    header. The name does not make it a table (it was refused as a header-less TSV)."""
    qrels = b"1048585\t0\t7187158\t1\n1048585\t0\t7187157\t0\n2\t0\t15\t2\n"
    q = read_qrels(qrels, name="qrels.dev.small.tsv")
    assert q.to_dict() == {"1048585": {"7187158": 1.0, "7187157": 0.0}, "2": {"15": 2.0}}
    assert read_qrels(write(tmp_path, "qrels.dev.small.tsv", qrels)).to_dict() == q.to_dict()
    run = b"1048585 Q0 7187158 1 12.5 bm25\n1048585 Q0 7187157 2 11.0 bm25\n"
    assert read_run(run, name="run.dev.csv").to_dict() == {
        "1048585": {"7187158": 12.5, "7187157": 11.0}}
    # a header row still makes it a table, and a table without the columns says so
    assert read_qrels(b"qid\titer\tdocid\trel\n1\t0\t7\t1\n",
                      name="q.tsv").to_dict() == {"1": {"7": 1.0}}
    err = error_of(read_qrels, b"1048585,0,7187158,1\n", name="qrels.csv")
    assert "is data, not a header" in str(err) and err.line == 1


def test_an_excel_workbook_of_qrels_is_read(tmp_path):
    """An .xlsx of qrels was refused as 'a zip archive ... (extract it first)', then with
    how to save it as CSV; it is read now (its first sheet), by path or as an upload, and
    a workbook given with a text format says which formats read it."""
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["qid", "docid", "rel"])
    book.active.append(["q1", "d1", 1])
    book.save(tmp_path / "judgments.xlsx")
    data = (tmp_path / "judgments.xlsx").read_bytes()
    for source, name in ((str(tmp_path / "judgments.xlsx"), None), (data, "upload")):
        assert read_qrels(source, name=name).to_dict() == {"q1": {"d1": 1.0}}
    err = error_of(read_qrels, data, name="judgments.xlsx", format="csv")
    assert str(err).startswith("judgments.xlsx: this is an Excel workbook; read it with "
                               "format 'auto' or 'xlsx'")
    assert "this is a zip archive" in str(error_of(read_runs, b"PK\x03\x04rest", name="r.zip"))


def test_parquet(tmp_path):
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"query": ["q1", "q1"], "doc_id": ["a", "b"],
                             "score": [1.0, 2.0], "run": ["x", "x"]}), path)
    run = read_run(str(path))
    assert run.name == "x" and run.to_dict() == {"q1": {"b": 2.0, "a": 1.0}}


def test_json_dict_of_dicts():
    q = read_qrels(json.dumps({"q1": {"d1": 1, "d2": 0}}).encode(), name="q.json")
    assert q.to_dict() == {"q1": {"d1": 1.0, "d2": 0.0}}
    r = read_run(json.dumps({"q1": {"d1": 0.5}}).encode(), name="sys.json")
    assert r.name == "sys" and r.to_dict() == {"q1": {"d1": 0.5}}


def test_fractional_grades_kept_with_one_warning():
    q = read_qrels(b"q1 0 d1 1.5\nq1 0 d2 0.5\nq1 0 d3 2\n", name="q")
    assert q.to_dict()["q1"] == {"d1": 1.5, "d2": 0.5, "d3": 2.0}
    assert [w.code for w in q.warnings] == ["fractional-grades"]
    assert q.warnings[0].count == 2


def test_from_dict_matches_reader():
    a = read_qrels(QRELS.encode(), name="q")
    b = Qrels.from_dict(a.to_dict())
    assert b.to_dict() == a.to_dict()
    r = Run.from_dict({"q1": {"x": 1.0, "y": 1.0}}, name="r")
    assert r.doc_ids.take(pa.array(r.dcode)).to_pylist() == ["y", "x"]
    assert np.all(np.diff(r.offsets) == [2])


# ----------------------------------------------------------------------------- bad input


@pytest.mark.parametrize(
    ("reader", "content", "line", "needle"),
    [
        (read_qrels, "q1 0 d1 1\nq1 0 d2\n", 2, "expected 4 columns (qid iter docid rel), got 3"),
        (read_runs, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 t\n", 2,
         "expected 6 columns (qid Q0 docid rank score tag), got 5"),
        (read_runs, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 high t\n", 2,
         "expected a numeric score in column 5, got 'high'"),
        (read_qrels, "q1 0 d1 1\nq1 0 d2 yes\n", 2, "expected a numeric grade in column 4"),
        (read_runs, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 nan t\n", 2, "expected a finite score"),
        (read_qrels, "q1 0 d1 1\nq1 0 d2 0\nq1 0 d1 2\n", 3,
         "duplicate qrels entry for query 'q1', document 'd1' (first at line 1)"),
        (read_runs, "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\nq1 Q0 d1 3 0 t\n", 3,
         "duplicate run entry for query 'q1', document 'd1' (first at line 1)"),
        (read_runs, "q1 0 d1 1\nq1 0 d2 0\n", 1, "looks like a TREC qrels file"),
        (read_qrels, "q1 Q0 d1 1 2 t\n", 1, "looks like a TREC run file"),
    ],
    ids=["qrels-columns", "run-columns", "run-score", "qrels-grade", "run-nan",
         "qrels-duplicate", "run-duplicate", "qrels-as-run", "run-as-qrels"],
)
def test_errors_name_file_line_and_expectation(tmp_path, reader, content, line, needle):
    err = error_of(reader, write(tmp_path, "input.txt", content))
    assert err.source == "input.txt"
    assert err.line == line
    assert needle in err.message
    assert str(err).startswith(f"input.txt:{line}: ")
    assert err.text == content.splitlines()[line - 1]


def test_non_utf8_names_the_line(tmp_path):
    content = b"q1 0 d1 1\nq1 0 d2 0\n" + b"q1 0 d\xe9 1\n"
    err = error_of(read_qrels, write(tmp_path, "latin1.txt", content))
    assert (err.source, err.line) == ("latin1.txt", 3)
    assert "not valid UTF-8" in err.message and "0xe9" in err.message


def test_empty_file(tmp_path):
    err = error_of(read_runs, write(tmp_path, "empty.run", "\n  \n"))
    assert err.source == "empty.run" and "file is empty" in err.message
    assert "qid Q0 docid rank score tag" in err.message


def test_csv_errors_have_lines():
    err = error_of(read_qrels, b"qid,docid,rel\nq1,d1,1\nq1,d2,x\n", name="q.csv")
    assert err.line == 3 and "numeric grade" in err.message
    err = error_of(read_qrels, b"qid,docid,rel\nq1,d1,1\nq1,d1,0\n", name="q.csv")
    assert err.line == 3 and "first at line 2" in err.message
    err = error_of(read_qrels, b"query,passage\nq1,d1\n", name="q.csv")
    assert "missing column" in err.message and "rel" in err.message
    err = error_of(read_runs, b"qid,docid,label\nq1,d1,1\n", name="r.csv")
    assert "looks like qrels" in err.message


def test_json_errors():
    err = error_of(read_qrels, b'{"q1": {"d1": 1, "d1": 2}}', name="q.json")
    assert "duplicate key 'd1'" in err.message
    err = error_of(read_qrels, b'{"q1": {"d1": "high"}}', name="q.json")
    assert "finite numeric grade" in err.message
    err = error_of(read_qrels, b'{"q1": {"d1": 1,}}', name="q.json")
    assert err.line == 1 and "invalid JSON" in err.message


def test_duplicate_across_tags_is_not_a_duplicate():
    runs = read_runs(b"q1 Q0 d1 1 1 a\nq1 Q0 d1 1 1 b\n", name="r")
    assert [r.name for r in runs] == ["a", "b"]


def test_duplicate_within_second_tag_names_lines():
    err = error_of(read_runs, b"q1 Q0 d1 1 1 a\nq1 Q0 d1 1 1 b\nq1 Q0 d1 2 0 b\n", name="r")
    assert err.line == 3 and "first at line 2" in err.message


def test_a_csv_or_tsv_without_a_header_says_so():
    """MS MARCO's runs are 'qid pid rank' lines in a .tsv, no header: the message read
    "missing column(s) in header ['1048585', '7187158', '1']", as if that were a header."""
    err = error_of(read_runs, b"1048585\t7187158\t1\n1048585\t7187157\t2\n",
                   name="run.dev.small.tsv")
    assert str(err) == (
        "run.dev.small.tsv:1: the first line ['1048585', '7187158', '1'] is data, not a "
        "header: a CSV or TSV file starts with a header row naming its columns (qid, docid, "
        "score, tag; or qid, docid, rank for an MS MARCO run of qid, pid and rank)")
    # with that header it is read, ranked by rank
    ranked = read_runs(b"qid\tdocid\trank\n1048585\t7187158\t1\n1048585\t7187157\t2\n",
                       name="run.dev.small.tsv")[0]
    assert ranked.to_dict() == {"1048585": {"7187158": -1.0, "7187157": -2.0}}
    err = error_of(read_qrels, b"1048585,7187158,1\n", name="qrels.csv")
    assert "is data, not a header" in str(err) and "(qid, docid, rel)" in str(err)
    # a header with other names keeps its message
    assert "missing column(s) in header" in str(
        error_of(read_qrels, b"query,passage\nq1,d1\n", name="q.csv"))
