"""Judging sets: several raters per document (aggregation, the overlap a second rater
gets, their agreement), "can't tell", grade names, the exports read back, and the
judging set's settings kept in the workspace (versioned, role-checked, audit-logged)."""

from __future__ import annotations

import math
import random

import pytest

from ireval_core import Qrels, Run
from ireval_core.decisions.judging import (
    AGREEMENT_ROUND,
    Judgment,
    aggregate,
    agreement,
    grade_names,
    in_overlap,
    judged_qrels,
    judgments_file,
    label_map_of,
    labeling_csv,
    labeling_table,
    read_judgments_file,
    second_rater_items,
    trec_qrels,
    with_judgments,
)
from ireval_core.errors import NotAllowedError
from ireval_core.io import read_qrels
from ireval_core.labels import read_judgments
from ireval_core.labels.agreement import cohen_kappa
from ireval_core.workspace import ANONYMOUS, OPERATOR, Actor, JudgingSet, Workspace

NAN = float("nan")


def J(q: str, d: str, g: float, rater: str, time: str = "2026-11-28T20:00:00Z") -> Judgment:
    return Judgment(q, d, g, rater, time)


@pytest.mark.parametrize(("grades", "expected"), [
    ([2.0], 2.0), ([3.0, 1.0], 1.0), ([0.0, 3.0, 2.0], 2.0), ([3.0, 2.0, 1.0, 0.0], 1.0),
    ([1.0, NAN], 1.0)])
def test_median_ties_to_the_lower_grade(grades: list[float], expected: float) -> None:
    rows = [J("q", "d", g, f"r{i}") for i, g in enumerate(grades)]
    assert aggregate(rows) == {("q", "d"): expected}


def test_each_raters_latest_label_counts_and_cant_tell_is_no_grade() -> None:
    rows = [J("q", "d", 3.0, "ana", "2026-11-28T20:00:00Z"),
            J("q", "d", 1.0, "bo", "2026-11-28T20:00:05Z"),
            J("q", "d", 2.0, "ana", "2026-11-28T20:01:00Z"),  # ana changed her mind
            J("q", "e", NAN, "ana")]  # can't tell: not a grade
    assert aggregate(rows) == {("q", "d"): 1.0}
    assert judged_qrels(rows).to_dict() == {"q": {"d": 1.0}}
    merged = with_judgments(Qrels.from_dict({"q": {"a": 1}}), rows)
    assert merged.to_dict() == {"q": {"a": 1.0, "d": 1.0}}
    assert trec_qrels(judged_qrels(rows)) == b"q 0 d 1\n"


def test_cant_tell_is_written_as_an_empty_label_and_read_back() -> None:
    rows = [J("q1", "d1", NAN, "ana"), J("q1", "d2", 0.0, "ana")]
    data = judgments_file("judging s", rows)
    assert data.splitlines()[1] == b"judging s\tq1\td1\t\tana\t2026-11-28T20:00:00Z"
    back = read_judgments_file(data)
    assert back == rows and back[0].cant_tell and not back[1].cant_tell


def test_the_overlap_share_and_who_gets_it() -> None:
    keys = [(f"q{i % 50}", f"d{i}") for i in range(20_000)]
    share = sum(in_overlap(q, d, 0.1) for q, d in keys) / len(keys)
    assert 0.09 < share < 0.11  # about the share of any set of documents
    assert all(in_overlap(q, d, 0.2) for q, d in keys if in_overlap(q, d, 0.1))  # nested
    chosen = [k for k in keys[:400] if in_overlap(*k, 0.1)]
    other = next(k for k in keys[:400] if not in_overlap(*k, 0.1))
    rows = [J(q, d, 1.0, "ana", f"2026-11-28T20:{i:02d}:00Z")
            for i, (q, d) in enumerate(reversed(chosen[:6]))]
    rows += [J(*other, 2.0, "ana"), J(*chosen[6], NAN, "ana"),  # not served: can't tell
             J(*chosen[7], 1.0, "ana"), J(*chosen[7], 1.0, "bo")]  # two raters already
    assert second_rater_items(rows, "bo", 0.1) == list(reversed(chosen[:6]))  # oldest first
    assert second_rater_items(rows, "ana", 0.1) == []  # never her own
    assert second_rater_items(rows, "bo", 0.0) == []
    rows.append(J(*chosen[0], NAN, "bo"))  # bo said can't tell: not asked again
    assert chosen[0] not in second_rater_items(rows, "bo", 0.1)


def test_agreement_goes_through_the_rater_analysis() -> None:
    rng = random.Random(7)
    ana = [rng.randrange(4) for _ in range(40)]
    bo = [a if rng.random() < 0.7 else rng.randrange(4) for a in ana]
    rows = [J("q", f"d{i}", float(a), "ana") for i, a in enumerate(ana)]
    rows += [J("q", f"d{i}", float(b), "bo") for i, b in enumerate(bo)]
    rows += [J("q", "solo", 2.0, "ana")]
    report = agreement(rows)
    assert report is not None
    row = report.per_round.iloc[0]
    assert (row["round"], row["raters"], row["pairable_units"]) == (AGREEMENT_ROUND, 2, 40)
    assert row["units"] == 41
    assert math.isclose(row["cohen_quadratic"],
                        cohen_kappa(ana, bo, weights="quadratic"), rel_tol=1e-12)
    assert agreement(rows[:40]) is None  # one rater: nothing to agree on


def test_grade_names_follow_the_label_map_and_the_scale() -> None:
    assert grade_names([0, 1, 2, 3]) == {0: "none", 1: "low", 2: "mid", 3: "high"}
    assert grade_names([0, 1]) == {0: "none", 1: "low"}
    assert grade_names([0, 1, 2, 3, 4], "bad/fair/good/excellent/perfect")[4] == "perfect"
    assert grade_names([0, 1, 2, 3, 4]) == {0: "none", 1: "low", 2: "mid", 3: "high"}
    with pytest.raises(ValueError, match="word=grade pairs"):
        grade_names([0, 1], "nonsense")
    words = b"round,query,doc,position,label\n2026-10,q1,d1,1,Good\n2026-10,q1,d2,2,bad\n"
    assert label_map_of([("month.csv", words)]) == "bad/fair/good/excellent/perfect"
    own = b"round,query,doc,position,label\n2026-10,q1,d1,1,meh\n"
    assert label_map_of([("m.csv", own)]) == ""  # not a map it knows: the default names
    numbers = b"round,query,doc,position,label\n2026-10,q1,d1,1,2\n"
    assert label_map_of([("m.csv", numbers)]) == label_map_of([]) == ""


RUNS = [Run.from_dict({"q1": {"d1": 3.0, "d2": 2.0, "=HYPERLINK(1)": 1.0},
                       "q2": {"d9": 1.0}}, name="bm25"),
        Run.from_dict({"q1": {"d2": 3.0, "d1": 1.0}}, name="neural")]


def test_labeling_table_round_trip_through_the_monthly_reader() -> None:
    rows = [J("q1", "d1", 2.0, "ana"), J("q1", "d1", 1.0, "bo"), J("q1", "d2", NAN, "ana"),
            J("q2", "d9", 3.0, "ana"), J("q7", "unranked", 1.0, "ana")]
    table, left_out = labeling_table(rows, RUNS)
    assert left_out == 1  # no run ranks q7/unranked: in the qrels export only
    assert table[table["doc"] == "d1"][["system", "position"]].drop_duplicates() \
        .values.tolist() == [["bm25", 1], ["neural", 2]]
    back = read_judgments(("judged.csv", labeling_csv(table)))
    got = back.label_table(labeled_only=False)
    assert sorted(map(tuple, got[["query", "doc", "rater"]].values.tolist())) == [
        ("q1", "d1", "ana"), ("q1", "d1", "bo"), ("q1", "d2", "ana"), ("q2", "d9", "ana")]
    labels = {(r.query, r.doc, r.rater): r.label for r in got.itertuples()}
    assert labels[("q1", "d1", "ana")] == 2.0 and labels[("q1", "d1", "bo")] == 1.0
    assert math.isnan(labels[("q1", "d2", "ana")])  # can't tell: unlabeled, never 0
    assert labels[("q2", "d9", "ana")] == 3.0


def test_exports_escape_formula_cells_and_qrels_read_back() -> None:
    rows = [J("q1", "=HYPERLINK(1)", 1.0, "@ana"), J("q1", "d2", 0.0, "bo")]
    csv = labeling_csv(labeling_table(rows, RUNS)[0]).decode()
    assert "'=HYPERLINK(1)" in csv and "'@ana" in csv
    assert ",=HYPERLINK" not in csv and ",@ana" not in csv
    qrels = read_qrels(trec_qrels(judged_qrels(rows)), name="judged.txt")
    assert qrels.to_dict() == {"q1": {"=HYPERLINK(1)": 1.0, "d2": 0.0}}


ODD_IDS = ["=SUM(A1)", "+d1", "-d2", "@d3", "'d4", "''d5", "d6"]
"""Document ids a spreadsheet would read as formulas, ids that really begin with ``'``,
and a plain one."""


def test_exported_ids_come_back_as_they_were() -> None:
    """ireval's labeling table escapes formula-like cells for spreadsheets and names them
    in ``ireval_escaped``; read back by the Monthly labeling reader every id, rater and
    round is what it was: the escape undone, an id that really begins with ``'`` kept."""
    import io

    import openpyxl

    from ireval_core.escape import ESCAPED_COLUMN
    from ireval_core.labels import export_batch, file_rounds
    from ireval_core.labels.anchors import read_anchors
    from ireval_core.labels.ppi import read_inclusion

    runs = [Run.from_dict({"-q": {d: float(10 - i) for i, d in enumerate(ODD_IDS)}},
                          name="=bm25")]
    rows = [J("-q", d, float(i % 4), "@ana") for i, d in enumerate(ODD_IDS)]
    assert read_judgments_file(judgments_file("judging 1", rows)) == rows  # kept verbatim
    data = labeling_csv(labeling_table(rows, runs)[0])
    assert b"'=SUM(A1)" in data and b",=SUM" not in data and ESCAPED_COLUMN.encode() in data
    back = read_judgments(("judged.csv", data)).label_table()
    assert sorted(back["doc"]) == sorted(ODD_IDS)
    assert set(back["query"]) == {"-q"} and set(back["rater"]) == {"@ana"}
    assert set(read_judgments(("judged.csv", data)).systems) == {"=bm25"}
    # saved again by a spreadsheet, which drops the quotes it showed as text: the same
    resaved = data.replace(b"'=SUM", b"=SUM").replace(b"'@ana", b"@ana")
    assert sorted(read_judgments(("j.csv", resaved)).label_table()["doc"]) == sorted(ODD_IDS)

    batch = labeling_table(rows, runs)[0].assign(round="-2026", label="").drop(
        columns="rater")
    for fmt in ("csv", "xlsx"):
        exported = export_batch(batch, fmt)
        filled = read_judgments((f"b.{fmt}", exported))
        assert sorted(filled.shown_table()["doc"]) == sorted(ODD_IDS)
        assert filled.rounds == ("-2026",) and file_rounds((f"b.{fmt}", exported))[0] == (
            "-2026",)
    book = openpyxl.load_workbook(io.BytesIO(export_batch(batch, "xlsx")))
    assert all(c.data_type != "f" for row in book.active.iter_rows() for c in row)
    anchors = export_batch(batch.assign(label="1"), "csv")
    assert sorted(read_anchors(("a.csv", anchors))["doc"]) == sorted(ODD_IDS)
    design = export_batch(batch.assign(inclusion=0.5), "csv")  # a people_sample design
    assert sorted(read_inclusion(("d.csv", design))["doc"]) == sorted(ODD_IDS)

    # a file that is not ireval's export (no marking column) is read exactly as written
    plain = ("round,query,doc,position,label\n" + "".join(
        f"m,q,{d},{i},1\n" for i, d in enumerate(["'=SUM(A1)", "'d4"], start=1))).encode()
    assert sorted(read_judgments(("p.csv", plain)).label_table()["doc"]) == ["'=SUM(A1)",
                                                                            "'d4"]


QRELS = b"q1 0 d1 2\nq1 0 d2 0\n"
ADA = Actor("ada@example.org", "Ada Admin")
RAY = Actor("ray@example.org", "Ray Rater")
EDD = Actor("edd@example.org", "Edd Editor")


def test_judging_set_is_versioned_role_checked_and_logged(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    info = ws.save_dataset([("qrels", "q.txt", QRELS)], name="d", saved_by="ana")
    assert ws.judging_set(info.id) == JudgingSet()
    first = ws.set_judging_set(info.id, JudgingSet("# Relevance\n*mid*: partly", "", 0.1),
                               author="ana")
    assert (first.version, first.overlap, first.edited_by) == (1, 0.1, "ana")
    monkeypatch.setenv("IREVAL_ADMINS", ADA.email)
    ws.sign_in(ADA)
    for person, role in ((RAY, "rater"), (EDD, "editor")):
        ws.sign_in(person)
        ws.set_role(person.email, role, actor=ADA, name=person.name)
    with pytest.raises(NotAllowedError, match="editor"):
        ws.set_judging_set(info.id, JudgingSet("mine"), actor=RAY)
    with pytest.raises(NotAllowedError):
        ws.set_judging_set(info.id, JudgingSet("anon"), author="x", actor=ANONYMOUS)
    second = ws.set_judging_set(info.id, JudgingSet("v2", "bad=0,ok=1,great=2", 0.25),
                                actor=EDD)
    assert second.version == 2 and second.edited_by == EDD.label
    assert ws.judging_set(info.id, actor=RAY) == second  # a rater reads it
    assert [s.guidelines for s in ws.judging_set_history(info.id, actor=RAY)] == [
        "# Relevance\n*mid*: partly", "v2"]  # the earlier version is kept
    assert ws.notes(info.id, actor=RAY) == []  # not a note
    edits = [e for e in ws.audit(actor=OPERATOR) if e.action == "judging set edited"]
    assert len(edits) == 2 and edits[-1].actor_email == EDD.email
    for bad, match in ((JudgingSet("", "nonsense"), "label_map"),
                       (JudgingSet("", "", 0.9), "overlap")):
        with pytest.raises(ValueError, match=match):
            ws.set_judging_set(info.id, bad, actor=EDD)
    assert ws.judging_set(info.id, actor=EDD).version == 2
