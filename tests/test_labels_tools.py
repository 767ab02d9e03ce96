"""The exports of the tools teams label with: Label Studio's JSON, Quepid's ratings CSV.

Small realistic exports are written here as the tools write them (Label Studio's
"JSON" export: a list of tasks with data, annotations and predictions; Quepid's
"basic" ratings export and its judgement-book export) and read to the right labels
and raters.
"""

from __future__ import annotations

import io
import json

import pytest

from ireval_core import FormatError, cli
from ireval_core.labels import read_judgments

# ----------------------------------------------------------------------------- Label Studio


def ls_result(choice: str | None = None, *, rating: int | None = None,
              from_name: str = "relevance", comment: str | None = None) -> list[dict]:
    out = []
    if choice is not None:
        out.append({"id": "Xy1", "from_name": from_name, "to_name": "doc", "type": "choices",
                    "origin": "manual", "value": {"choices": [choice]}})
    if rating is not None:
        out.append({"id": "Xy2", "from_name": "rating", "to_name": "doc", "type": "rating",
                    "origin": "manual", "value": {"rating": rating}})
    if comment is not None:
        out.append({"id": "Xy3", "from_name": "note", "to_name": "doc", "type": "textarea",
                    "origin": "manual", "value": {"text": [comment]}})
    return out


def ls_annotation(who: object, result: list[dict], *, cancelled: bool = False,
                  n: int = 1) -> dict:
    return {"id": 1000 + n, "completed_by": who, "result": result,
            "was_cancelled": cancelled, "ground_truth": False,
            "created_at": "2026-06-02T09:14:03.112233Z",
            "updated_at": "2026-06-02T09:14:03.112233Z", "lead_time": 7.5,
            "prediction": {}, "result_count": len(result), "task": n, "parent_prediction": None}


def ls_task(tid: int, data: dict, annotations: list[dict]) -> dict:
    return {"id": tid, "data": data, "annotations": annotations, "drafts": [],
            "predictions": [{"model_version": "llm-judge-v1", "score": 0.7,
                             "result": ls_result("high")}],
            "meta": {}, "created_at": "2026-06-01T08:00:00.000000Z",
            "updated_at": "2026-06-02T09:14:03.000000Z", "inner_id": tid,
            "total_annotations": len(annotations), "cancelled_annotations": 0,
            "total_predictions": 1, "comment_count": 0, "unresolved_comment_count": 0,
            "last_comment_updated_at": None, "project": 12, "updated_by": 3,
            "file_upload": "may_tasks.json", "comment_authors": []}


ANN = {"id": 3, "first_name": "", "last_name": "", "email": "ann@example.com"}


def label_studio_export() -> list[dict]:
    """May's tasks: query 天气 with two systems' lists, two people labeling."""
    def data(query: str, url: str, pos: int, system: str) -> dict:
        return {"month": "2026-05", "query": query, "url": url, "position": pos,
                "system": system, "title": f"title of {url}"}

    return [
        ls_task(101, data("天气", "https://a.example/1", 1, "A"), [
            ls_annotation(ANN, ls_result("high", comment="spot on"), n=1),
            ls_annotation(7, ls_result("mid"), n=2)]),
        ls_task(102, data("天气", "https://a.example/2", 2, "A"), [
            ls_annotation(ANN, ls_result("none"), n=3),
            ls_annotation(7, [], n=4)]),                       # opened, nothing chosen
        ls_task(103, data("天气", "https://a.example/1", 2, "B"), [
            ls_annotation(ANN, ls_result("high"), n=5)]),      # the same document in B
        ls_task(104, data("地铁", "https://b.example/9", 1, "A"), [
            ls_annotation(7, ls_result("low"), n=6),
            ls_annotation(ANN, ls_result("high"), cancelled=True, n=7)]),  # skipped
    ]


def as_bytes(tasks: list[dict]) -> bytes:
    return json.dumps(tasks, ensure_ascii=False, indent=2).encode()


def labels_of(j) -> list[tuple]:
    t = j.label_table(labeled_only=False)
    return sorted(zip(t["query"], t["doc"], t["rater"], t["label"].fillna(-1), strict=True))


def test_label_studio_export_reads_to_the_right_labels_and_raters():
    j = read_judgments(("project-12-at-2026-06-02.json", as_bytes(label_studio_export())))
    assert j.rounds == ("2026-05",) and j.systems == ("A", "B")
    assert j.raters == ("7", "ann@example.com")
    assert j.label_map.name == "none/low/mid/high"
    assert labels_of(j) == [
        ("地铁", "https://b.example/9", "7", 1.0),
        ("天气", "https://a.example/1", "7", 2.0),
        ("天气", "https://a.example/1", "ann@example.com", 3.0),  # once: the same label in B
        ("天气", "https://a.example/2", "7", -1),                  # unlabeled, not 0
        ("天气", "https://a.example/2", "ann@example.com", 0.0),
    ]
    shown = j.shown_table()
    assert shown[["system", "query", "position"]].values.tolist() == [
        ["A", "地铁", 1], ["A", "天气", 1], ["A", "天气", 2], ["B", "天气", 2]]
    (skipped,) = [w for w in j.warnings if w.code == "skipped-annotations"]
    assert skipped.count == 1
    assert j.round("2026-05").to_qrels().to_dict()["天气"] == {
        "https://a.example/1": 2.5, "https://a.example/2": 0.0}


def test_label_studio_rating_controls_and_the_label_control_by_name():
    tasks = [ls_task(1, {"Query": "q1", "doc_id": "d1", "rank": 1, "Month": "2026-05"}, [
        ls_annotation({"id": 9, "username": "bo"},
                      ls_result("Great", from_name="quality", rating=3))])]
    j = read_judgments(("ls.json", as_bytes(tasks)))
    assert labels_of(j) == [("q1", "d1", "bo", 3.0)]  # the 'rating' control, by its name


def test_label_studio_without_round_or_position():
    tasks = [ls_task(i, {"query": "q", "url": f"u{i % 2}"}, [ls_annotation(1, ls_result("2"))])
             for i in range(3)]
    with pytest.raises(FormatError) as info:
        read_judgments(("ls.json", as_bytes(tasks)))
    assert "have no round" in info.value.message and "read_judgments" not in info.value.message
    assert [(r.parameter, r.example) for r in info.value.remedies] == [("round", "2026-05")]
    assert info.value.hint == "set the round of the file: read_judgments(..., round='2026-05')"
    j = read_judgments(("ls.json", as_bytes(tasks[:2])), round="2026-06")
    assert j.rounds == ("2026-06",)
    assert j.shown_table()["position"].tolist() == [1, 2]
    assert any(w.code == "position-from-order" for w in j.warnings)


def test_label_studio_problems_name_task_and_annotation_all_at_once():
    tasks = [
        ls_task(5, {"month": "r", "query": "q", "url": "u", "position": 1}, [
            ls_annotation(1, [{"from_name": "relevance", "type": "choices",
                               "value": {"choices": ["high", "mid"]}}])]),
        ls_task(6, {"month": "r", "query": "q", "url": "v", "position": 2}, [
            ls_annotation(1, ls_result("high")),
            ls_annotation(2, ls_result("high", from_name="a")
                          + ls_result("low", from_name="b"))]),
    ]
    with pytest.raises(FormatError) as info:
        read_judgments(("ls.json", as_bytes(tasks)))
    err = info.value
    assert err.count == 2
    assert [p.where for p in err.problems] == ["task 1 (id 5), annotation 1",
                                               "task 2 (id 6), annotation 2"]
    assert str(err).startswith("ls.json: task 1 (id 5), annotation 1: several choices")
    assert "several label controls ('a', 'b')" in err.problems[1].message
    # a problem found later (an unknown label) names the task too
    tasks = [ls_task(5, {"month": "r", "query": "q", "url": "u", "position": 1},
                     [ls_annotation(1, ls_result("splendid"))])]
    with pytest.raises(FormatError) as info:
        read_judgments(("ls.json", as_bytes(tasks)))
    assert str(info.value).startswith("ls.json: task 1 (id 5), annotation 1: unknown label "
                                      "'splendid'")


# ----------------------------------------------------------------------------- Quepid


QUEPID_BASIC = (
    "query,docid,rating\n"
    "star wars,doc-1,3\n"
    "star wars,doc-7,0\n"
    "star wars,doc-2,1\n"
    " -1 results,doc-3,2\n"     # Quepid's guard against formulas: the space is removed
    "empty query\n"             # a query without ratings: the query alone
    "天气,doc-9,2\n"
)

QUEPID_BOOK = (
    "query,docid,Alice,bob@example.com\n"
    "star wars,doc-1,3,2\n"
    "star wars,doc-7,,0\n"      # Alice did not rate this one
    "天气,doc-9,1,1\n"
)


def test_quepid_basic_ratings_export():
    j = read_judgments(("case_42_basic.csv", QUEPID_BASIC.encode()), round="2026-05")
    assert j.rounds == ("2026-05",) and j.systems == ("default",) and j.raters == ("",)
    assert labels_of(j) == [("-1 results", "doc-3", "", 2.0), ("star wars", "doc-1", "", 3.0),
                            ("star wars", "doc-2", "", 1.0), ("star wars", "doc-7", "", 0.0),
                            ("天气", "doc-9", "", 2.0)]
    shown = j.shown_table()
    assert shown.loc[shown["query"] == "star wars", ["doc", "position"]].values.tolist() == [
        ["doc-1", 1], ["doc-7", 2], ["doc-2", 3]]  # the order of the lines
    codes = {w.code: w for w in j.warnings}
    assert codes["unrated-queries"].count == 1 and "position-from-order" in codes


def test_quepid_book_export_one_column_per_rater():
    j = read_judgments(("book_7_export.csv", QUEPID_BOOK.encode()), round="2026-05")
    assert j.raters == ("Alice", "bob@example.com")
    assert labels_of(j) == [("star wars", "doc-1", "Alice", 3.0),
                            ("star wars", "doc-1", "bob@example.com", 2.0),
                            ("star wars", "doc-7", "bob@example.com", 0.0),
                            ("天气", "doc-9", "Alice", 1.0),
                            ("天气", "doc-9", "bob@example.com", 1.0)]


def test_quepid_long_with_a_user_column_and_its_errors_name_lines():
    text = "query,docid,rating,user\nq1,d1,3,ann\nq1,d1,2,bob\nq1,d2,high,ann\n"
    with pytest.raises(FormatError) as info:
        read_judgments(("r.csv", text.encode()), round="r")
    assert str(info.value).startswith("r.csv:4: unknown label 'high' at line 4")
    j = read_judgments(("r.csv", text.replace("high", "1").encode()), round="r")
    assert j.raters == ("ann", "bob")
    with pytest.raises(FormatError) as info:
        read_judgments(("r.csv", text.encode()))
    assert str(info.value) == ("r.csv:1: a Quepid export has no rounds, and no round was "
                               "given for it")
    assert [r.parameter for r in info.value.remedies] == ["round"]


def test_a_labeling_csv_with_query_and_docid_columns_is_not_quepid():
    text = "query,docid,month,position,label\nq1,d1,2026-05,1,2\n"
    j = read_judgments(("l.csv", text.encode()))
    assert j.rounds == ("2026-05",) and not any(w.code == "position-from-order"
                                                for w in j.warnings)


def test_the_cli_reads_quepid_and_label_studio(tmp_path):
    quepid = tmp_path / "ratings.csv"
    quepid.write_bytes(QUEPID_BOOK.encode("gb18030"))  # as saved again by Excel in China
    ls = tmp_path / "export.json"
    ls.write_bytes(as_bytes(label_studio_export()))
    out = io.StringIO()
    assert cli.main(["labels", str(quepid), "--round", "2026-04", "--format", "json",
                     "--resamples", "50"], out=out) == 0
    rows = json.loads(out.getvalue())["rows"]
    assert [(r["round"], r["system"], r["queries"]) for r in rows] == [("2026-04", "default", 2)]
    out = io.StringIO()
    assert cli.main(["labels", str(ls), "--format", "json", "--resamples", "50"], out=out) == 0
    rows = json.loads(out.getvalue())["rows"]
    assert [(r["round"], r["system"]) for r in rows] == [("2026-05", "A"), ("2026-05", "B")]


def test_label_studio_export_that_is_not_json_says_where():
    from ireval_core.io.labelstudio import read_label_studio
    from ireval_core.io.source import Source

    for data, message, line in [
            (b'[{"id": 1,\n "data": {}}, x]', "invalid JSON: Expecting value (column 15)", 2),
            (b"[" * 100_000, "invalid JSON: nested too deeply", None)]:
        with pytest.raises(FormatError) as info:
            read_label_studio(Source.of(data, "ls.json"), {}, (), "labels")
        assert info.value.message == message and info.value.line == line
        assert info.value.__cause__ is None and info.value.__suppress_context__  # no chain
