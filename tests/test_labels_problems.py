"""Every problem of a labeling file at once, and the explicit choice for conflicts.

A labeling file with problems is one error that names the first (as a reader stopping
there would), counts them all and holds them (``problems``, ``report()``,
``problems_csv()``). One rater labeling one document differently in several systems'
lists is a conflict: refused by default (the count stated, the first 20 listed), or
resolved by ``conflicts=`` ("mean", "latest", "separate"), a rule stated next to the
numbers it affects.
"""

from __future__ import annotations

import csv
import io
import random

import numpy as np
import pandas as pd
import pytest

from ireval_core import FormatError, cli
from ireval_core.errors import PROBLEM_COLUMNS
from ireval_core.labels import Judgments, judgments_from_frame, read_judgments
from ireval_core.labels.judgments import CONFLICT_RULES

HEAD = "round,system,query,doc,position,rater,label\n"


def error_of(*args, **kw) -> FormatError:
    with pytest.raises(FormatError) as info:
        read_judgments(*args, **kw)
    return info.value


# ----------------------------------------------------------------------------- 83 conflicts


def month_with_conflicts(n_conflicts: int, seed: int = 7) -> tuple[str, list[tuple[int, int]]]:
    """A realistic month: 60 queries, systems A and B showing 10 results each, 5 of them
    the same documents; one rater per query labels both lists. ``n_conflicts`` of the
    300 shared (query, document) get a different label in B's list than in A's.

    Returns the CSV text and, per conflict, (line of the B row, line of the A row).
    """
    rnd = random.Random(seed)
    shared = [(q, k) for q in range(60) for k in range(5)]
    planted = set(rnd.sample(shared, n_conflicts))
    lines = [HEAD.rstrip("\n")]
    where: dict[tuple[int, str], int] = {}
    expected = []
    for q in range(60):
        rater = ("张伟", "bob", "chen")[q // 20]
        labels = {f"s{k}": rnd.randint(0, 3) for k in range(5)}
        for system in ("A", "B"):
            docs = [f"s{k}" for k in range(5)] + [f"{system}{k}" for k in range(5)]
            rnd.shuffle(docs)
            for pos, doc in enumerate(docs, start=1):
                label = labels.get(doc, rnd.randint(0, 3))
                k = int(doc[1:]) if doc.startswith("s") else -1
                if system == "B" and (q, k) in planted:
                    label = (label + 1) % 4
                lines.append(f"2026-05,{system},q{q},{doc},{pos},{rater},{label}")
                where[(q, f"{system}:{doc}")] = len(lines)
                if system == "B" and (q, k) in planted:
                    expected.append((len(lines), where[(q, f"A:{doc}")]))
    return "\n".join(lines) + "\n", expected


def test_a_file_with_83_conflicts_reports_83_and_lists_the_first_20(month):
    text, expected = month
    err = error_of(("may.csv", text.encode()))
    assert err.count == 83 and len(err.problems) == 83 and err.conflicts == 83
    assert [p.line for p in err.problems] == [b for b, _ in expected]
    # the error itself: the first conflict, worded as before, and how many there are
    b, a = expected[0]
    assert err.line == b and "here and" in err.message and f"at line {a}" in err.message
    assert err.message.endswith("; one label per (round, query, document, rater)")
    assert str(err).endswith("; and 82 more problems (83 in all)")
    report = err.report().splitlines()
    assert report[0] == "83 problems in may.csv; the first 20:"
    assert [line.split(":")[1] for line in report[1:21]] == [str(b) for b, _ in expected[:20]]
    assert report[21] == "  and 63 more"
    # the choice to make, in the hint (an exception note, shown in tracebacks)
    assert err.hint.startswith("83 of these: one rater's different labels of a document shown "
                               "in several systems' lists")
    assert "conflicts='mean'" in err.hint and "--conflicts" not in err.hint  # Python's terms
    assert [(r.parameter, r.choices, r.count) for r in err.remedies] == [
        ("conflicts", ("mean", "latest", "separate"), 83)]  # each place words it
    assert err.__notes__ == [err.hint]
    # all of them as CSV: a row per conflict
    rows = list(csv.reader(io.StringIO(err.problems_csv())))
    assert tuple(rows[0]) == PROBLEM_COLUMNS and len(rows) == 84
    assert rows[1][:2] == ["may.csv", str(b)]


def test_the_cli_refuses_the_file_and_states_the_count(month, tmp_path, capsys):
    path = tmp_path / "may.csv"
    path.write_text(month[0], encoding="utf-8")
    out = io.StringIO()
    assert cli.main(["labels", str(path), "--resamples", "50"], out=out) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("; and 82 more problems (83 in all)")
    assert err[1] == "83 problems in may.csv; the first 20:"
    assert err[22] == "  and 63 more"
    assert err[23] == ("83 of these are one rater's different labels of a document in "
                       "several systems' lists: choose what they become with --conflicts "
                       "mean|latest|separate")  # the flag, not read_judgments' parameter
    assert out.getvalue() == ""
    # with a choice, the numbers and the rule next to them
    for choice in ("mean", "latest", "separate"):
        out = io.StringIO()
        assert cli.main(["labels", str(path), "--resamples", "50", "--conflicts", choice,
                         "--format", "json"], out=out) == 0
        doc = __import__("json").loads(out.getvalue())
        labels_note = next(n for n in doc["notes"] if n.startswith("labels: "))
        assert f"conflicts={choice!r}" in labels_note
        assert "83 (round, query, document, rater) labeled differently" in labels_note


@pytest.mark.parametrize("choice", ["mean", "latest", "separate"])
def test_each_choice_reads_the_83_conflicts(month, choice):
    j = read_judgments(("may.csv", month[0].encode()), conflicts=choice)
    assert j.conflicts == choice and j.n_conflicts == 83
    assert f"conflicts={choice!r}" in j.conflict_note
    (note,) = [w for w in j.warnings if w.code == "label-conflicts"]
    assert note.count == 83 and note.message == j.conflict_note
    labels = j.label_table()
    if choice == "separate":  # every rater once per system's list
        assert set(labels["rater"]) == {"张伟 (A)", "张伟 (B)", "bob (A)", "bob (B)",
                                        "chen (A)", "chen (B)"}
        assert len(labels) == 60 * 20
    else:  # one label per (query, document, rater)
        assert len(labels) == 60 * 15


# ----------------------------------------------------------------------------- by hand


SMALL = HEAD + (
    "r,A,q,d1,1,ann,3\n"   # line 2: ann labels d1 3 in A's list,
    "r,A,q,d2,2,ann,1\n"   # line 3
    "r,B,q,d1,2,ann,1\n"   # line 4: 1 in B's,
    "r,B,q,d3,1,ann,2\n"   # line 5
    "r,A,q,d1,1,bob,2\n"   # line 6: bob labels d1 once, 2
    "r,C,q,d1,3,ann,0\n"   # line 7: and ann 0 in C's: one conflict, three labels
)


def small(**kw) -> Judgments:
    return read_judgments(("small.csv", SMALL.encode()), **kw)


def test_one_conflict_refused_as_before_with_the_choice_as_a_note():
    err = error_of(("small.csv", SMALL.encode()))
    assert str(err) == ("small.csv:4: rater 'ann' labels query 'q', document 'd1' of round 'r' "
                        "1 here and 3 at line 2; one label per (round, query, document, rater)")
    assert err.count == 1 and err.report() == str(err)
    assert err.hint.startswith("1 of these: ")


def test_mean_latest_and_separate_give_the_hand_computed_labels():
    table = {c: small(conflicts=c).label_table() for c in ("mean", "latest", "separate")}
    by = {c: {(d, r): v for d, r, v in t[["doc", "rater", "label"]].itertuples(index=False)}
          for c, t in table.items()}
    # mean: ann's labels of d1 are 3, 1, 0 -> 4/3; latest: line 7's 0
    assert by["mean"] == {("d1", "ann"): 4 / 3, ("d1", "bob"): 2.0, ("d2", "ann"): 1.0,
                          ("d3", "ann"): 2.0}
    assert by["latest"] == {("d1", "ann"): 0.0, ("d1", "bob"): 2.0, ("d2", "ann"): 1.0,
                            ("d3", "ann"): 2.0}
    assert by["separate"] == {("d1", "ann (A)"): 3.0, ("d1", "ann (B)"): 1.0,
                              ("d1", "ann (C)"): 0.0, ("d1", "bob (A)"): 2.0,
                              ("d2", "ann (A)"): 1.0, ("d3", "ann (B)"): 2.0}
    # the combined label of d1 (mean of the raters): (4/3 + 2) / 2, (0 + 2) / 2, 6 / 4
    qrels = {c: small(conflicts=c).round("r").to_qrels("mean") for c in by}
    assert qrels["mean"].to_dict()["q"]["d1"] == pytest.approx(5 / 3)
    assert qrels["latest"].to_dict()["q"]["d1"] == 1.0
    assert qrels["separate"].to_dict()["q"]["d1"] == 1.5
    # the rule travels with the numbers
    for c, q in qrels.items():
        assert f"conflicts={c!r}" in q.source
    shown = small(conflicts="separate").shown_table("mean")
    assert shown.loc[shown["doc"] == "d1", "n_labels"].tolist() == [4, 4, 4]


def test_the_rule_is_stated_only_when_it_changed_something():
    text = HEAD + "r,A,q,d1,1,ann,3\nr,B,q,d1,2,ann,3\n"  # the same label in both lists
    for choice in ("refuse", "mean", "latest"):
        j = read_judgments(("same.csv", text.encode()), conflicts=choice)
        assert j.n_conflicts == 0 and j.conflict_note == ""
        assert not [w for w in j.warnings if w.code == "label-conflicts"]
    j = read_judgments(("same.csv", text.encode()), conflicts="separate")
    assert j.raters == ("ann (A)", "ann (B)")
    assert j.conflict_note.startswith("each system's list counts as a separate rater")
    one = read_judgments(("one.csv", b"round,query,doc,position,label,rater\nr,q,d,1,2,ann\n"),
                         conflicts="separate")
    assert one.raters == ("ann",) and one.conflict_note == ""  # one system: nothing to split


def test_conflicts_is_checked_and_from_frame_takes_it():
    with pytest.raises(ValueError, match="The 'conflicts' parameter of read_judgments must be "
                                         "one of 'refuse', 'mean', 'latest', 'separate'. Got "
                                         "'max' instead."):
        small(conflicts="max")
    frame = pd.read_csv(io.StringIO(SMALL), dtype=str)
    j = judgments_from_frame(frame, conflicts="latest")
    assert j.round("r").to_qrels().to_dict()["q"]["d1"] == 1.0
    assert set(CONFLICT_RULES) == {"refuse", "mean", "latest", "separate"}


# ----------------------------------------------------------------------------- every problem


def test_every_problem_of_a_labeling_file_at_once():
    text = ("round,query,doc,position,label\n"
            "r,q1,d1,1,high\n"      # 2
            "r,q1,d2,2,meh\n"       # 3 unknown label
            "r,,d3,3,low\n"         # 4 empty query id
            "r,q1,d4,0,low\n"       # 5 bad position
            "r,q1,d5,x,low\n"       # 6 not a number
            "r,q2,d6,1,bof\n"       # 7 unknown label
            "r,q2,d7,2,meh\n")      # 8 (the same unknown label: one problem)
    err = error_of(("bad.csv", text.encode()))
    assert err.count == 5
    assert [(p.line, p.message.split(";")[0]) for p in err.problems] == [
        (3, "unknown label 'meh' at lines 3, 8"),
        (7, "unknown label 'bof' at line 7"),
        (4, "empty query id in column 'query'"),
        (6, "expected a number in the position column 'position', got 'x'"),
        (5, "expected a position (an int >= 1) in column 'position', got '0'"),
    ]
    assert str(err).startswith("bad.csv:3: unknown label 'meh' at lines 3, 8; the label map")


def test_problems_of_the_second_stage_are_all_reported_too():
    text = HEAD + ("r,A,q,d1,1,ann,3\n"     # 2
                   "r,A,q,d1,2,bob,3\n"     # 3 d1 at two positions in A's list
                   "r,A,q,d2,1,ann,1\n"     # 4 two documents at position 1
                   "r,A,q,d3,3,ann,1\n"     # 5
                   "r,A,q,d3,3,ann,2\n"     # 6 duplicate row
                   "r,B,q,d3,1,ann,0\n")    # 7 conflict with line 5
    err = error_of(("two.csv", text.encode()))
    assert [p.line for p in err.problems] == [3, 4, 6, 7]
    assert err.problems[2].message.startswith("duplicate row for rater 'ann'")
    assert err.hint.startswith("1 of these")


def test_excel_problems_name_sheet_and_row(tmp_path):
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    ws = book.active
    ws.title = "五月"
    ws.append(["round", "query", "doc", "position", "label"])
    for row in [("r", "q", "d1", 1, "high"), ("r", "q", "d2", 2, "meh"),
                ("r", "q", "d3", -1, "low")]:
        ws.append(list(row))
    path = tmp_path / "l.xlsx"
    book.save(path)
    err = error_of(str(path))
    assert [(p.line, p.where) for p in err.problems] == [(None, "sheet '五月', row 3"),
                                                         (None, "sheet '五月', row 4")]
    assert str(err).startswith("l.xlsx: sheet '五月', row 3: unknown label 'meh'")
    rows = list(csv.reader(io.StringIO(err.problems_csv())))
    assert rows[2][:3] == ["l.xlsx", "", "sheet '五月', row 4"]


def test_many_problems_are_counted_beyond_those_kept(monkeypatch):
    import ireval_core.labels.reader as reader

    monkeypatch.setattr(reader, "LABEL_PROBLEMS_KEPT", 50)
    text = "round,query,doc,position,label\n" + "".join(f"r,q,d{i},0,1\n" for i in range(120))
    err = error_of(("many.csv", text.encode()))
    assert err.count == 120 and len(err.problems) == 50
    assert err.report().splitlines()[-1] == "  and 100 more"
    assert np.diff([p.line for p in err.problems]).min() == 1


# ----------------------------------------------------------------------------- GSB files


def test_every_problem_of_a_gsb_file_at_once():
    from ireval_core.labels.gsb import read_gsb

    text = ("round,query,judgment,rater\n"
            "r,q1,G,ann\n"      # 2
            "r,,S,ann\n"        # 3 empty query
            "r,q2,meh,ann\n"    # 4 unknown judgment
            "r,q3,meh,ann\n"    # 5 (the same unknown judgment: one problem)
            "r,q4,??,bob\n")    # 6 another
    with pytest.raises(FormatError) as info:
        read_gsb([("g.csv", text.encode())])
    err = info.value
    assert [p.line for p in err.problems] == [3, 4, 6]
    assert err.problems[1].message.startswith("unknown judgment 'meh' (at lines 4, 5)")
    text = ("round,query,judgment,rater\n" + "r,q1,G,ann\nr,q1,B,ann\nr,q2,S,ann\n"
            "r,q2,S,ann\nr,q2,G,ann\n")
    with pytest.raises(FormatError) as info:
        read_gsb([("d.csv", text.encode())])
    assert [(p.line, p.message[-17:]) for p in info.value.problems] == [
        (3, "(first at line 2)"), (5, "(first at line 4)"), (6, "(first at line 4)")]


def test_format_problems_and_conflicts_are_listed_at_once() -> None:
    """A month with 3 conflicts, an unknown label and a bad position: one error lists all
    five (the format problems first, then the conflicts among the sound rows), with the
    label map's and the conflict rule's remedies; fixing nothing else, the conflicts no
    longer wait for the format problems to be fixed."""
    text, expected = month_with_conflicts(3)
    lines = text.splitlines()
    head = lines[0].split(",")
    meh, bad = 5, 9  # lines (1-based) given an unknown label and a position 0
    for line, (col, value) in ((meh, ("label", "meh")), (bad, ("position", "0"))):
        cells = lines[line - 1].split(",")
        cells[head.index(col)] = value
        lines[line - 1] = ",".join(cells)
    with pytest.raises(FormatError) as info:
        read_judgments(("may.csv", ("\n".join(lines) + "\n").encode()))
    err = info.value
    assert err.count == 5 and err.conflicts == 3
    assert [p.line for p in err.problems] == [meh, bad] + [b for b, _ in expected]
    assert "unknown label 'meh'" in err.problems[0].message
    assert "expected a position" in err.problems[1].message
    assert all("one label per (round, query, document, rater)" in p.message
               for p in err.problems[2:])
    assert [(r.parameter, r.count) for r in err.remedies] == [("label_map", 0),
                                                               ("conflicts", 3)]


def test_the_cli_words_the_remedies_as_its_flags(tmp_path, capsys) -> None:
    from ireval_core import cli

    text, _ = month_with_conflicts(2)
    lines = text.splitlines()
    lines[4] = lines[4].rsplit(",", 1)[0] + ",meh"
    path = tmp_path / "may.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli.main(["labels", str(path)]) == 2
    err = capsys.readouterr().err
    assert "3 problems in may.csv" in err
    assert err.rstrip().splitlines()[-1] == (
        "Pass a label map with --label-map, e.g. --label-map 'none=0,low=1,mid=2,high=3'; 2 "
        "of these are one rater's different labels of a document in several systems' lists: "
        "choose what they become with --conflicts mean|latest|separate")
    assert "read_judgments" not in err and "conflicts=" not in err


def test_the_cli_asks_for_a_quepid_exports_round_by_its_flag(tmp_path, capsys) -> None:
    from ireval_core import cli

    path = tmp_path / "quepid.csv"
    path.write_text("query,docid,rating\nq1,d1,3\nq1,d2,1\n", encoding="utf-8")
    assert cli.main(["labels", str(path)]) == 2
    assert capsys.readouterr().err == (
        "quepid.csv:1: a Quepid export has no rounds, and no round was given for it; give the "
        "file's round with --round, e.g. --round 2026-05\n")
