"""Every problem at once: run and qrels files report up to 100 bad lines in one error.

The error describes the first bad line as before (``file:line: message: 'text'``, one
line, ending with how many there are); :attr:`FormatError.problems` holds the first
100, :attr:`FormatError.count` all of them, :meth:`FormatError.report` lists them and
:meth:`FormatError.problems_csv` is the download.
"""

from __future__ import annotations

import csv
import io

import pytest

from ireval_core import FormatError
from ireval_core.errors import PROBLEM_COLUMNS, Problem
from ireval_core.io import read_qrels, read_runs


def error_of(reader, data: bytes, name: str) -> FormatError:
    with pytest.raises(FormatError) as info:
        reader(data, name=name)
    return info.value


def run_with_bad_lines(n_bad: int) -> bytes:
    """A TREC run of 400 lines, ``n_bad`` of them (every other one from line 2) bad in
    turn: too few columns, a score that is not a number, a query id given again."""
    lines = []
    bad = 0
    for i in range(400):
        if i % 2 == 1 and bad < n_bad:
            kind = bad % 3
            bad += 1
            if kind == 0:
                lines.append(f"q1 Q0 d{i} {i}")
            elif kind == 1:
                lines.append(f"q1 Q0 d{i} {i} high bm25")
            else:
                lines.append(f"q1 Q0 d{i - 1} {i} 0.5 bm25")  # the line above's document
            continue
        lines.append(f"q1 Q0 d{i} {i} {1000 - i} bm25")
    return ("\n".join(lines) + "\n").encode()


def test_a_run_with_150_bad_lines_reports_100_and_50_more():
    err = error_of(read_runs, run_with_bad_lines(150), "run.txt")
    assert err.count == 150 and len(err.problems) == 100
    # the error itself is the first bad line, as before, and says how many there are
    assert (err.source, err.line) == ("run.txt", 2)
    assert err.message == "expected 6 columns (qid Q0 docid rank score tag), got 4"
    assert str(err) == ("run.txt:2: expected 6 columns (qid Q0 docid rank score tag), got 4: "
                        "'q1 Q0 d1 1'; and 149 more problems (150 in all)")
    assert "\n" not in str(err)
    report = err.report().splitlines()
    assert report[0] == "150 problems in run.txt; the first 100:"
    assert len(report) == 102 and report[-1] == "  and 50 more"
    assert report[1] == "  " + str(err.problems[0])
    # the three kinds of bad line, each with its line
    assert [p.line for p in err.problems[:3]] == [2, 4, 6]
    assert err.problems[1].message == "expected a numeric score in column 5, got 'high'"
    assert err.problems[2].message.startswith("duplicate run entry for query 'q1', document "
                                              "'d4' (first at line 5)")
    assert err.problems[-1].line == 200


def test_the_problems_as_csv():
    err = error_of(read_runs, run_with_bad_lines(150), "run.txt")
    rows = list(csv.reader(io.StringIO(err.problems_csv())))
    assert tuple(rows[0]) == PROBLEM_COLUMNS
    assert len(rows) == 1 + 100 + 1  # header, the 100 kept, and how many more
    assert rows[1] == ["run.txt", "2", "",
                       "expected 6 columns (qid Q0 docid rank score tag), got 4", "q1 Q0 d1 1"]
    assert rows[-1][3] == "and 50 more (not kept)"


def test_fewer_than_100_bad_lines_are_all_listed_csv_qrels():
    text = "qid,docid,rel\n" + "".join(
        f"q{i},d{i},{'x' if i % 10 == 0 else 1}\n" for i in range(300))
    err = error_of(read_qrels, text.encode(), "q.csv")
    assert err.count == len(err.problems) == 30
    assert [p.line for p in err.problems] == [2 + 10 * k for k in range(30)]
    assert err.report().splitlines()[-1] == "  q.csv:292: expected a numeric grade in column " \
        "'rel', got 'x': 'q290,d290,x'"
    assert str(err).endswith("; and 29 more problems (30 in all)")


def test_one_bad_line_is_one_line_as_before():
    err = error_of(read_qrels, b"q1 0 d1 1\nq1 0 d2\n", "q.txt")
    assert str(err) == err.report() == "q.txt:2: expected 4 columns (qid iter docid rel), got 3: " \
                                       "'q1 0 d2'"
    assert err.count == 1 and err.problems == (Problem("q.txt", 2, "", err.message, "q1 0 d2"),)


def test_a_csv_cell_that_looks_like_a_formula_is_neutralised():
    err = error_of(read_qrels, b"qid,docid,rel\n=cmd|' /C calc'!A0,d1,x\n", "q.csv")
    row = list(csv.reader(io.StringIO(err.problems_csv())))[1]
    assert row[4].startswith("'=")
