"""AppTest of the workspace in the app: open a saved dataset, a link that reopens it in a
new session, notes beside comparisons and queries (in the report), deleting with a
confirmation. Each test has its own SQLite workspace (``IREVAL_WORKSPACE``)."""

from __future__ import annotations

import pytest
from _apps import APP, NEEDS_SAMPLE, SAMPLE, sample_files
from streamlit.testing.v1 import AppTest

from ireval_app import state, workspace_widgets
from ireval_app.keys import compare as compare_keys
from ireval_app.keys import data as data_keys
from ireval_app.keys import labels_data as labels_data_keys
from ireval_core import read_qrels, read_runs
from ireval_core.evaluate import evaluate
from ireval_core.meeting import read_decision_note
from ireval_core.tables import metrics_table
from ireval_core.workspace import Target, Workspace

pytestmark = NEEDS_SAMPLE


@pytest.fixture
def ws(app_ws: Workspace) -> Workspace:
    app_ws.save_dataset(sample_files("run_bm25.txt", "run_neural.txt"), name="November round",
                        note="two runs", saved_by="ana")
    return app_ws


def _expected_p10() -> dict[str, float]:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = read_runs(SAMPLE / "run_bm25.txt") + read_runs(SAMPLE / "run_neural.txt")
    res = evaluate(qrels, runs, ["P@10"])
    return {s: res.mean(s, "P@10") for s in res.systems}


def test_open_a_saved_dataset_and_link_to_it(ws: Workspace) -> None:
    [info] = ws.list_datasets()
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.radio(key=state.SOURCE).set_value("saved").run()
    assert not at.exception
    assert at.selectbox(key=data_keys.SAVED_PICK).value == info.id
    assert at.query_params["ds"] == info.short_id
    assert "two runs" in " ".join(c.value for c in at.caption)
    at.switch_page("pages/metrics.py").run()
    assert not any("Sample data" in i.value for i in at.info)  # not the sample any more
    table = metrics_table(evaluate(read_qrels(SAMPLE / "qrels.txt"),
                                   read_runs(SAMPLE / "run_bm25.txt")
                                   + read_runs(SAMPLE / "run_neural.txt"), ["P@10"]))
    shown = at.table[0].value
    for system, p10 in _expected_p10().items():
        assert shown.loc[system, "P@10"] == table.cells.loc[system, "P@10"]
        assert shown.loc[system, "P@10"].startswith(f"{p10:.4f}")
    assert at.query_params["ds"] == info.short_id  # every page's link carries the dataset
    # a new session (another browser) opening the link gets the same dataset and view
    fresh = AppTest.from_file(APP, default_timeout=60)
    fresh.query_params["ds"] = info.short_id
    fresh.query_params["rel"] = "2"
    fresh.switch_page("pages/metrics.py").run()
    assert not fresh.exception
    assert sorted(fresh.table[0].value.index) == ["bm25", "neural_rerank"]
    assert fresh.session_state["ireval.options"].rel_level == 2.0


def test_a_link_to_an_unknown_dataset_says_so(ws: Workspace) -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ds"] = "0123456789ab"
    at.switch_page("pages/metrics.py").run()
    assert not at.exception
    assert any("cannot be opened" in w.value for w in at.warning)


def test_notes_beside_a_comparison_and_a_query_go_into_the_meeting(ws: Workspace) -> None:
    [info] = ws.list_datasets()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ds"] = info.short_id
    at.switch_page("pages/compare.py").run()
    at.number_input(key=compare_keys.RESAMPLES).set_value(200).run()
    target = Target.comparison("bm25", "neural_rerank", "nDCG@10")
    key = workspace_widgets.notes_key(target)
    # a form: fill every field, then submit (nothing is sent before the click)
    at.text_area(key=key + ".text").set_value("neural wins on head queries")
    at.radio(key=key + ".kind").set_value("decision")
    at.text_input(key=state.NOTES_AUTHOR).set_value("<b>bo</b>")
    at.button[[b.label for b in at.button].index("Add")].click().run()
    assert not at.exception
    [note] = ws.notes(info.id, target)
    # the note keeps the whole view it was written on: every option and selection
    body, _, link = read_decision_note(note.text)
    assert (body, note.kind, note.author) == ("neural wins on head queries", "decision",
                                              "<b>bo</b>")
    assert link.startswith("/compare?") and "resamples=200" in link and "rel=1" in link
    at.switch_page("pages/meeting.py").run()
    text = " ".join(m.value for m in at.markdown)
    assert "neural wins on head queries" in text and "<b>bo" not in text
    assert [b.proto.url for b in at.get("link_button")] == [link]  # its Live view


def test_delete_asks_for_the_id(ws: Workspace) -> None:
    [info] = ws.list_datasets()
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.radio(key=state.SOURCE).set_value("saved").run()
    at.text_input(key=data_keys.DELETE_CONFIRM).set_value("wrong").run()
    at.button[[b.label for b in at.button].index("Delete for good")].click().run()
    assert any("confirm" in e.value.lower() for e in at.error)
    assert len(ws.list_datasets()) == 1
    at.text_input(key=data_keys.DELETE_CONFIRM).set_value(info.short_id).run()
    at.button[[b.label for b in at.button].index("Delete for good")].click().run()
    assert not at.exception
    assert ws.list_datasets() == []


def test_a_saved_labeling_set_drives_the_labeling_pages(ws: Workspace) -> None:
    labels = sorted((SAMPLE / "labels").glob("labels_*.csv"))[:3]  # May to July
    info = ws.save_dataset([("labels", p.name, p.read_bytes()) for p in labels],
                           name="first quarter", saved_by="ana")
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["source"] = "saved"
    at.switch_page("pages/labels_data.py").run()
    assert not at.exception
    # the pick is the short id, as the link carries it
    assert at.selectbox(key=labels_data_keys.SAVED_PICK).value == info.short_id
    assert {m.label: m.value for m in at.metric}["Rounds"] == "3"
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    assert sorted(set(at.dataframe[0].value["round"])) == ["2026-05", "2026-06", "2026-07"]
    assert not any("Sample labeling data" in i.value for i in at.info)
