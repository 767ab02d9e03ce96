"""Bad labeling input, each with a file that really has the problem, and the one
message template for invalid parameters of the labeling functions."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from _param_cases import Case, assert_invalid_parameter

from ireval_core import EvalOptions, FormatError
from ireval_core.labels import (
    LabelMap,
    dcg_decomposition,
    export_batch,
    judgments_from_frame,
    label_changes,
    next_batch,
    offline_online,
    plan_next_round,
    read_judgments,
    score_metrics,
    trend,
)

HEAD = "round,system,query,doc,position,rater,label,score,segment,weight\n"


def write(tmp_path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def error_of(*args, **kw) -> str:
    with pytest.raises(FormatError) as info:
        read_judgments(*args, **kw)
    return str(info.value)


# ----------------------------------------------------------------------------- bad files


def test_unknown_label_names_the_label_and_its_first_lines(tmp_path):
    text = ("round,query,doc,position,label\n" "r,q,d1,1,high\n" "r,q,d2,2,meh\n"
            "r,q,d3,3,low\n" "r,q,d4,4,meh\n" "r,q,d5,5,meh\n" "r,q,d6,6,meh\n")
    msg = error_of(write(tmp_path, "labels.csv", text))
    assert msg.startswith("labels.csv:3: unknown label 'meh' at lines 3, 5, 6; the label map "
                          "'none/low/mid/high' knows none=0, low=1, mid=2, high=3")
    assert "--label-map" not in msg and "label_map" not in msg  # the caller words it
    with pytest.raises(FormatError) as info:
        read_judgments(write(tmp_path, "labels.csv", text))
    assert [(r.parameter, r.example) for r in info.value.remedies] == [
        ("label_map", "none=0,low=1,mid=2,high=3")]
    assert info.value.hint == ("give a label map: read_judgments(..., "
                               "label_map='none=0,low=1,mid=2,high=3')")
    # an explicit map that lacks a label
    msg = error_of(write(tmp_path, "l2.csv", "round,query,doc,position,label\nr,q,d,1,2\n"
                                             "r,q,e,2,7x\n"), label_map="0-3")
    assert msg.startswith("l2.csv:3: unknown label '7x' at line 3; labels must be numbers >= 0")


def test_missing_label_is_unlabeled_never_zero(tmp_path):
    j = read_judgments(write(tmp_path, "l.csv", "round,query,doc,position,label\nr,q,d,1,\n"
                                                "r,q,e,2,1\n"))
    shown = j.shown_table("mean")
    assert shown["label"].isna().tolist() == [True, False]


def test_duplicate_rater_row_names_both_lines(tmp_path):
    text = HEAD + ("r,a,q,d1,1,ann,high,,,\n" "r,a,q,d2,2,ann,low,,,\n"
                   "r,a,q,d1,1,ann,mid,,,\n")
    msg = error_of(write(tmp_path, "dup.csv", text))
    assert msg == ("dup.csv:4: duplicate row for rater 'ann', round 'r', system 'a', query 'q', "
                   "document 'd1' (first at line 2)")


def test_duplicate_without_rater_column_suggests_one(tmp_path):
    text = "round,query,doc,position,label\nr,q,d1,1,1\nr,q,d1,1,2\n"
    msg = error_of(write(tmp_path, "dup.csv", text))
    assert msg.startswith("dup.csv:3: duplicate row for round 'r', system 'default', query "
                          "'q', document 'd1' (first at line 2); with several raters, add a "
                          "rater column")


def test_duplicate_across_files_names_both_files(tmp_path):
    a = write(tmp_path, "may.csv", "round,query,doc,position,label,rater\nr,q,d,1,1,ann\n")
    b = write(tmp_path, "again.csv", "round,query,doc,position,label,rater\n"
                                     "r,q,e,2,1,ann\nr,q,d,1,2,ann\n")
    msg = error_of([a, b])
    assert msg.startswith("again.csv:3: duplicate row for rater 'ann'")
    assert msg.endswith("(first at may.csv:2)")


def test_two_labels_of_one_rater_for_a_document_two_systems_show(tmp_path):
    text = HEAD + "r,a,q,d1,1,ann,high,,,\nr,b,q,d1,3,ann,low,,,\n"
    msg = error_of(write(tmp_path, "c.csv", text))
    assert msg == ("c.csv:3: rater 'ann' labels query 'q', document 'd1' of round 'r' 1 here "
                   "and 3 at line 2; one label per (round, query, document, rater)")
    # the same label under both systems is one judgment, not an error
    ok = read_judgments(("ok.csv", (HEAD + "r,a,q,d1,1,ann,high,,,\nr,b,q,d1,3,ann,high,,,\n"
                                    ).encode()))
    assert ok.label_table()["label"].tolist() == [3.0]


def test_two_positions_for_one_shown_result(tmp_path):
    text = HEAD + "r,a,q,d1,1,ann,high,,,\nr,a,q,d1,2,bob,low,,,\n"
    msg = error_of(write(tmp_path, "p.csv", text))
    assert msg == ("p.csv:3: round 'r', system 'a', query 'q', document 'd1' is at position 2 "
                   "here and at position 1 at line 2; a shown result has one position")


def test_two_documents_at_one_position(tmp_path):
    text = HEAD + "r,a,q,d1,1,ann,high,,,\nr,a,q,d2,1,ann,low,,,\n"
    msg = error_of(write(tmp_path, "p.csv", text))
    assert msg == ("p.csv:3: position 1 of query 'q' (round 'r', system 'a') holds two "
                   "documents: 'd1' at line 2 and 'd2' here")


@pytest.mark.parametrize(("value", "shown"), [("0", "'0'"), ("1.5", "'1.5'"), ("x", "'x'"),
                                               ("", "''")])
def test_bad_position(tmp_path, value, shown):
    text = f"round,query,doc,position,label\nr,q,d1,1,1\nr,q,d2,{value},1\n"
    msg = error_of(write(tmp_path, "pos.csv", text))
    if value == "x":
        assert msg == "pos.csv:3: expected a number in the position column 'position', got 'x'"
    else:
        assert msg == (f"pos.csv:3: expected a position (an int >= 1) in column 'position', "
                       f"got {shown}")


def test_non_numeric_score_and_bad_weight(tmp_path):
    text = HEAD + "r,a,q,d1,1,ann,high,0.5,,1\nr,a,q,d2,2,ann,low,high,,1\n"
    assert error_of(write(tmp_path, "s.csv", text)) == (
        "s.csv:3: expected a number in the score column 'score', got 'high'")
    text = HEAD + "r,a,q,d1,1,ann,high,0.5,,0\n"
    assert error_of(write(tmp_path, "w.csv", text)) == (
        "w.csv:2: expected a weight > 0 in column 'weight', got 0")


def test_conflicting_score_segment_weight_and_missing_weight(tmp_path):
    text = HEAD + "r,a,q,d1,1,ann,high,0.5,head,1\nr,a,q,d1,1,bob,high,0.7,head,1\n"
    assert error_of(write(tmp_path, "s.csv", text)) == (
        "s.csv:3: round 'r', system 'a', query 'q', document 'd1' has model score 0.7 here and "
        "0.5 at line 2")
    text = HEAD + "r,a,q,d1,1,ann,high,,head,1\nr,a,q,d2,2,ann,low,,tail,1\n"
    assert error_of(write(tmp_path, "g.csv", text)) == (
        "g.csv:3: query 'q' (round 'r', system 'a') is in segment 'tail' here and 'head' at "
        "line 2")
    text = HEAD + "r,a,q,d1,1,ann,high,,,1\nr,a,q,d2,2,ann,low,,,2\n"
    assert error_of(write(tmp_path, "w.csv", text)) == (
        "w.csv:3: query 'q' (round 'r', system 'a') has weight 2 here and 1 at line 2")
    text = HEAD + "r,a,q,d1,1,ann,high,,,1\nr,a,p,d2,1,ann,low,,,\n"
    assert error_of(write(tmp_path, "w.csv", text)) == (
        "w.csv:3: no weight for query 'p' (round 'r', system 'a'); with a weight column every "
        "query needs one")


def test_empty_ids_are_errors(tmp_path):
    assert error_of(write(tmp_path, "e.csv", "round,query,doc,position,label\nr,,d,1,1\n")) == (
        "e.csv:2: empty query id in column 'query'")
    assert error_of(write(tmp_path, "e.csv", "round,query,doc,position,label\n,q,d,1,1\n")) == (
        "e.csv:2: empty round in column 'round'")
    assert error_of(write(tmp_path, "e.csv", "round,query,doc,position,label\nr,q,d,1,1\n"
                                             "r,q,,2,1\n")) == (
        "e.csv:3: empty document id in column 'doc'")


def test_missing_columns_empty_file_and_header_only(tmp_path):
    msg = error_of(write(tmp_path, "m.csv", "round,query,doc,label\nr,q,d,1\n"))
    assert msg.startswith("m.csv:1: missing column(s) in the labeling header "
                          "['round', 'query', 'doc', 'label']; expected position: one of "
                          "position, pos, rank")
    assert error_of(write(tmp_path, "empty.csv", "\n\n")).startswith("empty.csv: file is empty")
    assert error_of(write(tmp_path, "h.csv", "round,query,doc,position,label\n")) == (
        "h.csv: no rows below the header; expected labeled results")


def test_wide_header_is_cut_in_the_missing_columns_message(tmp_path):
    names = [f"col{i}" for i in range(3000)]
    msg = error_of(write(tmp_path, "wide.csv", ",".join(names) + "\n" + "1," * 2999 + "1\n"))
    header = msg.split("labeling header ", 1)[1].split("; expected", 1)[0]
    assert header.startswith("['col0', 'col1', ") and header.endswith("…")
    assert len(header) == 80  # not the 3,000 names (35 kB)
    assert "expected round: one of round" in msg


def test_json_named_labeling_file_that_is_not_json_says_so(tmp_path):
    # a .json labeling file is Label Studio's export or an error about JSON, never a CSV
    assert error_of(write(tmp_path, "deep.json", "[" * 100_000)) == (
        "deep.json: invalid JSON: nested too deeply")
    assert error_of(write(tmp_path, "x.json", "round,query\nr,q\n")) == (
        "x.json:1: invalid JSON: Expecting value (column 1)")
    assert error_of(write(tmp_path, "obj.json", '{"a": 1}')).startswith(
        "obj.json: expected a Label Studio JSON export: a list of tasks")


def test_ragged_row_and_bad_utf8(tmp_path):
    text = "round,query,doc,position,label\nr,q,d,1,1\n\nr,q,e,2\n"
    assert error_of(write(tmp_path, "r.csv", text)) == (
        "r.csv:4: expected 5 fields (round,query,doc,position,label), got 4: 'r,q,e,2'")
    data = b"round,query,doc,position,label\nr,q,d,1,1\nr,q,\xff\xfe,2,1\n"
    # neither UTF-8 nor GB18030 (0xff is no GB18030 byte): the encodings tried and the fix
    assert error_of(write(tmp_path, "u.csv", data)) == (
        "u.csv:3: line is not valid UTF-8 (byte 0xff at column 5), and the file is not GB18030 "
        "text either (byte 0xff at line 3 is not GB18030). Tried UTF-8, UTF-16 (with a byte "
        "order mark) and GB18030; save it as UTF-8: in Excel, File > Save As > "
        "'CSV UTF-8 (Comma delimited) (*.csv)': 'r,q,\ufffd\ufffd,2,1'")


def test_line_numbers_count_blank_and_quoted_lines(tmp_path):
    text = ('round,query,doc,position,label\n\nr,"a\nb",d,1,1\n\nr,q,d,1,meh\n')
    msg = error_of(write(tmp_path, "q.csv", text))
    assert msg.startswith("q.csv:6: unknown label 'meh' at line 6")


def test_excel_errors_name_sheet_and_row(tmp_path):
    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "May"
    ws.append(["round", "query", "doc", "position", "label"])
    ws.append(["2026-05", "q", "d1", 1, "high"])
    ws.append([None] * 5)
    ws.append(["2026-05", "q", "d2", 2, "meh"])
    out = io.BytesIO()
    book.save(out)
    msg = error_of(("book.xlsx", out.getvalue()))
    assert msg.startswith("book.xlsx: sheet 'May', row 4: unknown label 'meh' at row 4;")
    ws.title = "Notes"
    ws.delete_rows(1, 10)
    ws.append(["what", "ever"])
    out = io.BytesIO()
    book.save(out)
    msg = error_of(("book.xlsx", out.getvalue()))
    assert msg.startswith("book.xlsx: sheet 'Notes': missing column(s) in the labeling header")
    assert error_of(("book.xlsx", b"PK\x03\x04 not really a zip")).startswith(
        "book.xlsx: not a readable Excel .xlsx workbook")


def test_parquet_errors_name_the_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "l.parquet"
    pq.write_table(pa.table({"round": ["r", "r"], "query": ["q", "q"], "doc": ["a", "b"],
                             "position": [1, 1], "label": [1, 2]}), path)
    assert error_of(str(path)) == ("l.parquet: row 2: position 1 of query 'q' (round 'r', "
                                   "system 'default') holds two documents: 'a' at row 1 and "
                                   "'b' here")
    assert error_of(("bad.parquet", b"PAR1 broken")).startswith(
        "bad.parquet: not a readable Parquet file")


def test_dataframe_errors_name_the_row():
    df = pd.DataFrame({"round": ["r"] * 2, "query": ["q"] * 2, "doc": ["a", "b"],
                       "position": [1, 2], "label": ["high", "meh"]})
    with pytest.raises(FormatError, match=r"^frame: row 2: unknown label 'meh'"):
        judgments_from_frame(df)


# ----------------------------------------------------------------------------- parameters

J = read_judgments(("j.csv", (HEAD + "2026-05,a,q,d,1,ann,high,0.5,head,1\n"
                                      "2026-06,a,q,d,1,ann,high,0.5,head,1\n").encode()))


# One row per validated parameter (to join tests/test_common_errors.py's CASES).
CASES: list[Case] = [
    Case(read_judgments, {"sources": []}, "sources"),
    Case(read_judgments, {"sources": ("j.csv", b"round,query,doc,position,label\nr,q,d,1,1\n"),
                          "label_map": 3}, "label_map", TypeError),
    Case(LabelMap.parse, {"text": "none"}, "text", function="LabelMap.parse"),
    Case(LabelMap.parse, {"text": 3}, "text", TypeError, function="LabelMap.parse"),
    Case(judgments_from_frame, {"frame": [1, 2]}, "frame", TypeError,
         function="judgments_from_frame"),
    Case(J.round, {"name": "1999"}, "round", function="Judgments.round"),
    Case(J.select, {"rounds": ["1999"]}, "rounds", function="Judgments.select"),
    Case(J.select, {"systems": ["z"]}, "systems", function="Judgments.select"),
    Case(J.combined, {"combine": "max"}, "combine", function="Judgments.combined"),
    Case(J.to_qrels, {}, "self", function="Judgments.to_qrels"),
    Case(J.round("2026-05").to_runs, {"scores": "rank"}, "scores",
         function="Judgments.to_runs"),
    Case(trend, {"j": J, "k": 0}, "k"),
    Case(trend, {"j": J, "gain": "log"}, "gain"),
    Case(trend, {"j": J, "combine": "mode"}, "combine"),
    Case(trend, {"j": J, "by": "system"}, "by"),
    Case(trend, {"j": J, "confidence_level": 95}, "confidence_level"),
    Case(trend, {"j": J, "n_resamples": 0}, "n_resamples"),
    Case(trend, {"j": J, "seed": -1}, "seed"),
    Case(trend, {"j": J, "alpha": 0.0}, "alpha"),
    Case(trend, {"j": J, "pairing": "both"}, "pairing"),
    Case(trend, {"j": J, "options": {"rel_level": 2}}, "options", TypeError),
    Case(score_metrics, {"j": J, "combine": "max"}, "combine"),
    Case(score_metrics, {"j": J, "options": 1}, "options", TypeError),
    Case(offline_online, {"j": J, "k": -1}, "k"),
    Case(offline_online, {"j": J, "gain": "x"}, "gain"),
    Case(offline_online, {"j": J, "combine": "x"}, "combine"),
    Case(offline_online, {"j": J, "alpha": 2}, "alpha"),
    Case(offline_online, {"j": J, "options": "x"}, "options", TypeError),
    Case(offline_online, {"j": J, "k": 5, "trend_result": trend(J, k=10, n_resamples=10)},
         "trend_result"),
    Case(label_changes, {"j": J, "old": "x", "new": "2026-06"}, "round"),
    Case(label_changes, {"j": J, "old": "2026-05", "new": "2026-06", "combine": "x"},
         "combine"),
    Case(dcg_decomposition, {"j": J, "old": "2026-05", "new": "y"}, "round"),
    Case(dcg_decomposition, {"j": J, "old": "2026-05", "new": "2026-06", "k": 0}, "k"),
    Case(dcg_decomposition, {"j": J, "old": "2026-05", "new": "2026-06", "gain": "x"},
         "gain"),
    Case(dcg_decomposition, {"j": J, "old": "2026-05", "new": "2026-06", "combine": "x"},
         "combine"),
    Case(dcg_decomposition, {"j": J, "old": "2026-05", "new": "2026-06",
                             "options": EvalOptions}, "options", TypeError),
    Case(plan_next_round, {"j": J, "delta": 0.0}, "delta"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "round": "z"}, "round"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "k": 0}, "k"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "gain": "x"}, "gain"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "combine": "x"}, "combine"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "alpha": 1.0}, "alpha"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "power": 0.01}, "power"),
    Case(plan_next_round, {"j": J, "delta": 0.5, "options": 3}, "options", TypeError),
    Case(next_batch, {"j": J, "round": "z"}, "round"),
    Case(next_batch, {"j": J, "round": "2026-05", "k": 0}, "k"),
    Case(export_batch, {"frame": "x"}, "frame", TypeError),
    Case(export_batch, {"frame": pd.DataFrame(), "format": "ods"}, "format"),
]


def _function(case: Case) -> str:
    """The function the message names (default: the callable's own name)."""
    return case.function or case.func.__name__


@pytest.mark.parametrize("case", CASES, ids=[f"{_function(c)}-{c.param}" for c in CASES])
def test_invalid_parameter_message(case: Case) -> None:
    assert_invalid_parameter(case, _function(case))
