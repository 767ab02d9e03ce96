"""Labeled result lists: reading every format, label maps, combining, the bridge to
Qrels/Run, and the long label table (the contract with ireval_core.labels.agreement)."""

from __future__ import annotations

import gzip
import io

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ireval_core import evaluate
from ireval_core.labels import (
    BUILTIN_LABEL_MAPS,
    Judgments,
    LabelMap,
    detect_label_map,
    judgments_from_frame,
    read_judgments,
)

CSV = (
    "round,system,query,doc,position,rater,label,score,segment,weight\n"
    "2026-05,a,q1,d1,1,ann,high,0.9,head,2\n"
    "2026-05,a,q1,d1,1,bob,mid,0.9,head,2\n"
    "2026-05,a,q1,d2,2,ann,none,0.4,head,2\n"
    "2026-05,a,q1,d3,3,,,0.3,head,2\n"
    "2026-05,b,q1,d2,1,ann,none,0.8,head,2\n"
    "2026-05,b,q1,d4,2,bob,low,0.5,head,2\n"
    "2026-05,a,q2,d5,1,ann,low,0.7,tail,1\n"
    "2026-06,a,q1,d1,1,ann,mid,0.9,head,2\n"
)


def write(tmp_path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def xlsx_bytes(rows: list[list[object]], sheet: str = "labels",
               extra: dict[str, list[list[object]]] | None = None) -> bytes:
    import openpyxl

    book = openpyxl.Workbook()
    ws = book.active
    ws.title = sheet
    for r in rows:
        ws.append(r)
    for name, more in (extra or {}).items():
        other = book.create_sheet(name)
        for r in more:
            other.append(r)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


@pytest.fixture(scope="module")
def j() -> Judgments:
    return read_judgments(("labels.csv", CSV.encode()))


# ----------------------------------------------------------------------------- model


def test_tables_hold_shown_results_units_and_labels(j):
    assert j.rounds == ("2026-05", "2026-06")
    assert j.systems == ("a", "b")
    assert j.raters == ("ann", "bob")  # the blank row's empty rater gave no label
    assert j.segments == ("head", "tail")
    assert j.n_shown == 7  # (round, system, query, doc)
    # d2 of q1 in 2026-05 is shown by a and b: one unit
    assert j.n_units == 6
    assert j.has_scores and j.has_weight and j.has_segment and j.has_rater and j.has_system
    shown = j.shown_table(combine="mean")
    first = shown[(shown["round"] == "2026-05") & (shown["system"] == "a")
                  & (shown["query"] == "q1")]
    assert first["doc"].tolist() == ["d1", "d2", "d3"]
    assert first["position"].tolist() == [1, 2, 3]
    assert first["label"].tolist()[:2] == [2.5, 0.0] and np.isnan(first["label"].iloc[2])
    assert first["n_labels"].tolist() == [2, 1, 0]
    assert first["score"].tolist() == [0.9, 0.4, 0.3]
    assert set(first["weight"]) == {2.0} and set(first["segment"]) == {"head"}


def test_arrays_are_read_only(j):
    for value in vars(j).values():
        if isinstance(value, np.ndarray):
            assert not value.flags.writeable
    with pytest.raises(ValueError):
        j.label_value[0] = 1.0


def test_combine_rules_by_hand():
    df = pd.DataFrame({"round": "r", "query": "q", "doc": np.repeat(["a", "b", "c", "d"],
                                                                    [3, 4, 2, 1]),
                       "position": np.repeat([1, 2, 3, 4], [3, 4, 2, 1]),
                       "rater": ["x", "y", "z", "w", "x", "y", "z", "x", "y", "x"],
                       "label": [0, 1, 3, 2, 2, 3, 3, 1, 2, None]})
    jj = judgments_from_frame(df)
    mean, count = jj.combined("mean")
    median, _ = jj.combined("median")
    majority, _ = jj.combined("majority")
    # a: 0,1,3   b: 2,2,3,3   c: 1,2   d: unlabeled
    assert count.tolist() == [3, 4, 2, 0]
    np.testing.assert_allclose(mean[:3], [4 / 3, 2.5, 1.5])
    np.testing.assert_allclose(median[:3], [1.0, 2.5, 1.5])
    np.testing.assert_allclose(majority[:3], [0.0, 2.0, 1.0])  # ties go to the lower label
    assert np.isnan(mean[3]) and np.isnan(median[3]) and np.isnan(majority[3])


def test_label_table_is_the_agreement_contract(j):
    t = j.label_table()
    assert list(t.columns) == ["round", "query", "doc", "rater", "label"]
    assert t["label"].dtype == np.float64
    for col in ("round", "query", "doc", "rater"):
        assert all(isinstance(v, str) for v in t[col])
    # one row per labeled (round, query, doc, rater); d2 labeled once by ann though shown twice
    assert len(t) == 6
    assert not t.duplicated(["round", "query", "doc", "rater"]).any()
    assert t.query("doc == 'd2'")[["rater", "label"]].values.tolist() == [["ann", 0.0]]
    may = j.label_table("2026-05")
    assert set(may["round"]) == {"2026-05"} and len(may) == 5
    # blank labels kept on request
    kept = j.label_table(labeled_only=False)
    assert len(kept) == 7 and kept["label"].isna().sum() == 1


def test_label_table_without_rater_column():
    jj = read_judgments(("x.csv", b"round,query,doc,position,label\nr,q,d,1,2\n"))
    t = jj.label_table()
    assert t["rater"].tolist() == [""] and not jj.has_rater


def test_to_qrels_and_to_runs_feed_the_existing_measures(j):
    may = j.round("2026-05")
    qrels = may.to_qrels()
    assert qrels.to_dict() == {"q1": {"d1": 2.5, "d2": 0.0, "d4": 1.0}, "q2": {"d5": 1.0}}
    assert may.to_qrels(combine="majority").to_dict()["q1"]["d1"] == 2.0
    runs = may.to_runs()
    assert [r.name for r in runs] == ["a", "b"]
    ranked = runs[0].doc_ids.take(pa.array(runs[0].dcode)).to_pylist()
    assert ranked == ["d1", "d2", "d3", "d5"]  # q1 by position, then q2
    res = evaluate(qrels, runs, ["DCG@3"])
    assert res.mean("b", "DCG@3") == pytest.approx(0.0 + 1.0 / np.log2(3))
    model = may.to_runs(scores="model")
    assert model[0].to_dict()["q1"] == {"d1": 0.9, "d2": 0.4, "d3": 0.3}


def test_to_qrels_needs_one_round(j):
    with pytest.raises(ValueError, match="must be the view of one round"):
        j.to_qrels()
    with pytest.raises(ValueError, match="'round' parameter of Judgments.round"):
        j.round("2030-01")


def test_select_keeps_labels_with_their_round(j):
    b = j.select(systems=["b"])
    assert b.systems == ("b",) and b.rounds == ("2026-05",)
    # the ideal of q1 still has every labeled document of the round (d1 shown only by a)
    assert b.round("2026-05").to_qrels().to_dict()["q1"] == {"d1": 2.5, "d2": 0.0, "d4": 1.0}
    june = j.select(rounds=["2026-06"])
    assert june.n_units == 1 and june.label_table()["label"].tolist() == [2.0]


def test_select_refuses_unknown_names_and_keeps_one_name_as_a_list(j):
    for kw, among in [({"rounds": ["2026-07"]}, "rounds among '2026-05', '2026-06'"),
                      ({"systems": "c"}, "systems among 'a', 'b'"),
                      ({"raters": ["zed", "ann"]}, "raters among '', 'ann', 'bob'")]:
        with pytest.raises(ValueError) as info:
            j.select(**kw)
        given = [next(iter(kw.values()))] if isinstance(next(iter(kw.values())), str) else (
            next(iter(kw.values())))
        assert str(info.value) == (f"The '{next(iter(kw))}' parameter of Judgments.select must "
                                   f"be {among}. Got {given!r} instead.")
    bob = j.select(rounds="2026-05", systems=["a"], raters=["bob"])
    assert (bob.rounds, bob.systems, bob.raters) == (("2026-05",), ("a",), ("bob",))
    assert bob.label_table()["label"].tolist() == [2.0, 1.0]


def test_rounds_in_time_order():
    text = "round,query,doc,position,label\n2024-10,q,d,1,1\n2024-9,q,d,1,2\nMay,q,e,1,1\n"
    jj = read_judgments(("t.csv", text.encode()))
    assert jj.rounds == ("2024-10", "2024-9", "May")  # not all dates: text order
    jj = read_judgments(("t.csv", b"month,qid,docid,rank,grade\n2024-10,q,d,1,1\n"
                                  b"2024-9,q,d,1,2\n"))
    assert jj.rounds == ("2024-9", "2024-10")


# ----------------------------------------------------------------------------- formats


def test_aliases_tsv_and_default_system():
    text = "month\tqid\tdocid\trank\tgrade\tannotator\tbucket\n2026-05\tq1\td1\t1\t3\tx\tA\n"
    jj = read_judgments(("t.tsv", text.encode()))
    assert jj.systems == ("A",) and jj.raters == ("x",)
    jj = read_judgments(("plain.txt", b"period,topic,pid,pos,relevance\np,1,007,1,2\n"))
    assert jj.systems == ("default",)
    assert jj.label_table()["doc"].tolist() == ["007"]  # ids keep their zeros


def test_gzip_path_bytes_and_file_object(tmp_path):
    a = read_judgments(write(tmp_path, "l.csv.gz", gzip.compress(CSV.encode())))
    with open(write(tmp_path, "l.csv", CSV), "rb") as fh:
        b = read_judgments(fh)
    c = read_judgments(CSV.encode())
    for x in (a, b, c):
        assert len(x.label_table()) == 6


def test_several_files_accumulate_rounds(tmp_path):
    may = "round,query,doc,position,label\n2026-05,q,d1,1,1\n"
    june = "round,query,doc,position,label\n2026-06,q,d1,1,2\n2026-07,q,d1,1,3\n"
    jj = read_judgments([write(tmp_path, "may.csv", may), ("june.csv", june.encode())])
    assert jj.rounds == ("2026-05", "2026-06", "2026-07")
    assert jj.sources == ("may.csv", "june.csv")


def test_parquet_with_typed_columns(tmp_path):
    table = pa.table({"round": ["2026-05"] * 3, "query": [101, 101, 102],
                      "doc": ["d1", "d2", "d1"], "position": [1, 2, 1],
                      "label": [3.0, None, 1.0], "score": [0.5, 0.25, None]})
    path = tmp_path / "l.parquet"
    pq.write_table(table, path)
    jj = read_judgments(str(path))
    assert jj.round("2026-05").to_qrels().to_dict() == {"101": {"d1": 3.0}, "102": {"d1": 1.0}}
    shown = jj.shown_table()
    assert np.isnan(shown["score"].iloc[2])


def test_excel_workbook_all_sheets_and_dates(tmp_path):
    import datetime as dt

    rows = [["Month", "Query", "Doc", "Position", "Label", "Rater"],
            [dt.datetime(2026, 5, 1), "q1", "d1", 1, "high", "ann"],
            [None, None, None, None, None, None],  # a blank row is skipped
            [dt.datetime(2026, 5, 1), "q1", "d2", 2.0, "low", "ann"]]
    more = [["month", "query", "doc", "position", "label", "rater"],
            ["2026-06", 7, "d1", 1, "mid", "bob"]]
    notes = [["just", "notes"]]
    data = xlsx_bytes(rows, extra={"june": more, "notes": notes})
    jj = read_judgments(("book.xlsx", data))
    assert jj.rounds == ("2026-05-01", "2026-06")
    assert jj.label_table()[["query", "doc", "label"]].values.tolist() == [
        ["q1", "d1", 3.0], ["q1", "d2", 1.0], ["7", "d1", 2.0]]


def test_from_frame_matches_reading_the_file(j):
    df = pd.read_csv(io.StringIO(CSV), dtype=str, keep_default_na=False)
    other = judgments_from_frame(df)
    pd.testing.assert_frame_equal(other.label_table(), j.label_table())
    pd.testing.assert_frame_equal(other.shown_table("mean"), j.shown_table("mean"))


def test_file_order_does_not_matter(j):
    lines = CSV.strip().split("\n")
    shuffled = "\n".join([lines[0], *reversed(lines[1:])]) + "\n"
    other = read_judgments(("s.csv", shuffled.encode()))
    pd.testing.assert_frame_equal(other.shown_table("mean"), j.shown_table("mean"))
    a = other.label_table().sort_values(["round", "query", "doc", "rater"], ignore_index=True)
    b = j.label_table().sort_values(["round", "query", "doc", "rater"], ignore_index=True)
    pd.testing.assert_frame_equal(a, b)


# ----------------------------------------------------------------------------- label maps


@pytest.mark.parametrize(("labels", "name", "grades"), [
    (["0", "3", "2.5"], "0-3", [0.0, 3.0, 2.5]),
    (["None", "LOW", " mid ", "high"], "none/low/mid/high", [0.0, 1.0, 2.0, 3.0]),
    (["无", "低", "中", "高"], "无/低/中/高", [0.0, 1.0, 2.0, 3.0]),
    (["Bad", "fair", "Good", "Excellent", "PERFECT"], "bad/fair/good/excellent/perfect",
     [0.0, 1.0, 2.0, 3.0, 4.0]),
])
def test_builtin_maps_are_detected(labels, name, grades):
    m = detect_label_map(labels)
    assert m is BUILTIN_LABEL_MAPS[name]
    assert m.apply(labels).tolist() == grades


def test_label_map_text_and_cli_form():
    m = LabelMap.parse("none=0, low=1, mid=2, high=3")
    assert m.apply(["High", "", "none"]).tolist()[0] == 3.0
    assert np.isnan(m.apply([""])[0])  # empty = unlabeled, never 0
    assert m.grade_names() == {0.0: "none", 1.0: "low", 2.0: "mid", 3.0: "high"}
    assert LabelMap.parse("1=0,2=1,3=2").apply(["2.0", "3"]).tolist() == [1.0, 2.0]
    jj = read_judgments(("x.csv", b"round,query,doc,position,label\nr,q,d,1,ok\n"),
                        label_map="bad=0,ok=1,great=2")
    assert jj.label_table()["label"].tolist() == [1.0]


@pytest.mark.parametrize("text", ["", "none", "none=x", "none=-1", "a=1,a=2", "=3"])
def test_bad_label_map_text(text):
    with pytest.raises(ValueError, match=r"^The 'text' parameter of LabelMap.parse must be"):
        LabelMap.parse(text)


def test_a_change_is_one_definition_for_the_count_and_the_transitions() -> None:
    """A pair labeled 1, 2, 2 (mean 1.667) in one round and 2, 2, 2 in the next changed: it
    is counted and lies off the transitions' diagonal (it was on it when the transitions
    rounded to grades); the same labels summed in another order did not change."""
    import numpy as np
    import pandas as pd

    from ireval_core.labels import label_changes

    rows = []
    for rnd, labels in (("a", {"d1": (1, 2, 2), "d2": (0.1, 0.2, 0.3)}),
                        ("b", {"d1": (2, 2, 2), "d2": (0.3, 0.2, 0.1)})):
        for pos, (doc, given) in enumerate(labels.items(), start=1):
            rows += [{"round": rnd, "query": "q", "doc": doc, "position": pos,
                      "rater": r, "label": v} for r, v in zip("xyz", given, strict=True)]
    ch = label_changes(judgments_from_frame(pd.DataFrame(rows)), "a", "b")
    t = ch.transitions
    assert (ch.n_both, ch.n_changed) == (2, 1)
    assert int(t.to_numpy().sum() - np.trace(t.to_numpy())) == ch.n_changed
    assert t.loc["1.67", "2"] == 1 and t.loc["0.2", "0.2"] == 1
    assert ch.pairs.set_index("doc")["change"].to_dict() == pytest.approx(
        {"d1": 1 / 3, "d2": 0.0})
