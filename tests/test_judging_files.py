"""Judging files: written and read back, refused with file and line, merged into qrels."""

from __future__ import annotations

import pytest

from ireval_core import Qrels
from ireval_core.decisions.judging import (
    Judgment,
    judgments_file,
    read_judgments_file,
    trec_qrels,
    with_judgments,
)
from ireval_core.errors import FormatError
from ireval_core.io.columns import LABEL_ALIASES
from ireval_core.io.labels import read_table


def test_round_trip_and_a_labeling_table() -> None:
    rows = [Judgment("q 1", "文书-7", 2.0, "Ana Núñez", "2026-11-28T20:41:07Z"),
            Judgment("q2", "d3", 0.5, "bo", "2026-11-28T20:41:09Z")]
    data = judgments_file("judging s1", rows)
    assert read_judgments_file(data) == rows
    table = read_table(("judging s1.tsv", data), LABEL_ALIASES)  # the Monthly labeling reader
    assert {"round", "query", "doc", "label", "rater"} <= set(table.columns)
    assert table.n_rows == 2


@pytest.mark.parametrize(("data", "message"), [
    (b"query\tdoc\tlabel\n", "f.tsv:1: expected the header"),
    (b"round\tquery\tdoc\tlabel\trater\ttime\nr\tq1\td1\t1\tana\n", "f.tsv:2: expected 6"),
    (b"round\tquery\tdoc\tlabel\trater\ttime\nr\tq\td\t1\ta\tt\nr\tq\td\thigh\ta\tt\n",
     "f.tsv:3: expected a grade .a number >= 0. or an empty cell .can't tell. as the "
     "label, found 'high'"),
])
def test_a_bad_file_names_file_and_line(data: bytes, message: str) -> None:
    with pytest.raises(FormatError, match=message):
        read_judgments_file(data, "f.tsv")


def test_a_tab_in_a_cell_is_refused() -> None:
    with pytest.raises(ValueError, match="one line of text"):
        judgments_file("r", [Judgment("q\t1", "d", 1.0, "ana", "t")])


def test_merge_keeps_the_qrels_grade_and_aggregates_the_raters() -> None:
    qrels = Qrels.from_dict({"q1": {"d1": 2, "d2": 0}})
    merged = with_judgments(qrels, [Judgment("q1", "d1", 0.0, "a", "t"),  # judged already
                                    Judgment("q1", "d9", 1.0, "a", "t"),
                                    Judgment("q2", "d9", 3.0, "a", "t"),
                                    Judgment("q1", "d9", 2.0, "b", "t")])  # two: the lower
    assert merged.to_dict() == {"q1": {"d1": 2.0, "d2": 0.0, "d9": 1.0}, "q2": {"d9": 3.0}}
    assert with_judgments(qrels, []) is qrels
    assert trec_qrels(merged) == b"q1 0 d1 2\nq1 0 d2 0\nq1 0 d9 1\nq2 0 d9 3\n"
