"""AppTest of a saved labeling set growing month by month (issue 18, items 2 and 3): the
Labeling data page saves months 1–2, adds month 3 as version 2 of the same set, refuses a
round already in it unless replacing, and a link to version 1 keeps its numbers (the core's
trend of months 1–2) with a note that newer months exist. Each test has its own SQLite
workspace (``IREVAL_WORKSPACE``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from _apps import APP, LABELS, metric_values
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import labels_data as keys
from ireval_core.labels import read_judgments, trend
from ireval_core.workspace import Workspace

MONTHS = sorted(LABELS.glob("labels_*.csv"))[:3]


def _upload(paths: list[Path]) -> list[tuple[str, bytes, str]]:
    return [(p.name, p.read_bytes(), "text/csv") for p in paths]


def _button(at: AppTest, label: str):
    return next(b for b in at.button if b.label == label)


def _save_two_months(at: AppTest) -> None:
    at.switch_page("pages/labels_data.py").run()
    at.radio(key=keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=keys.UPLOADER).set_value(_upload(MONTHS[:2])).run()
    at.text_input(key=keys.SAVE_NAME).input("labels 2026")
    at.text_input(key=state.NOTES_AUTHOR).input("ana")
    _button(at, "Save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]


def _add_uploader(at: AppTest):
    """The add form's uploader (a new key after each add)."""
    [uploader] = [u for u in at.file_uploader if u.key.startswith(keys.ADD_UPLOADER)]
    return uploader


def _add(at: AppTest, paths: list[Path], *, replace: bool | None = None) -> None:
    _add_uploader(at).set_value(_upload(paths)).run()
    if replace is not None:
        at.checkbox(key=keys.REPLACE).set_value(replace)
    at.text_input(key=state.NOTES_AUTHOR).input("bo")
    _button(at, "Add to set labels 2026").click().run()


def test_a_set_grows_by_months_and_refuses_a_round_twice(app_ws: Workspace) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    _save_two_months(at)
    [saved] = app_ws.list_datasets()
    assert (saved.version, saved.rounds) == (1, ("2026-05", "2026-06"))
    assert at.radio(key=keys.SOURCE).value == "saved"
    assert metric_values(at)["Rounds"] == "2"
    assert at.query_params["set"] == saved.short_id and at.query_params["version"] == "1"
    _add(at, [MONTHS[2]])
    assert not at.exception and not at.error, [e.value for e in at.error]
    grown = app_ws.get_dataset(saved.id)
    assert (grown.id, grown.name, grown.version, grown.rounds) == (
        saved.id, "labels 2026", 2, ("2026-05", "2026-06", "2026-07"))
    assert [i.id for i in app_ws.list_datasets()] == [saved.id]
    assert metric_values(at)["Rounds"] == "3" and at.query_params["version"] == "2"
    table = next(d.value for d in at.dataframe if "Rounds added" in d.value.columns)
    assert table[["Version", "By", "Rounds added", "Rows added"]].values.tolist() == [
        [2, "bo", "2026-07", sum(1 for _ in MONTHS[2].open()) - 1],
        [1, "ana", "2026-05, 2026-06",
         sum(sum(1 for _ in p.open()) - 1 for p in MONTHS[:2])]]
    # month 3 again (another name): refused, then replaced when chosen
    again = MONTHS[2].parent / MONTHS[2].name  # same bytes under the uploader's new name
    assert _add_uploader(at).key == keys.add_uploader(1)  # a new, empty one after the add
    assert not _add_uploader(at).value
    _add_uploader(at).set_value([("july_fixed.csv", again.read_bytes(), "text/csv")]).run()
    assert any("2026-07" in w.value and "already in the set" in w.value for w in at.warning)
    at.text_input(key=state.NOTES_AUTHOR).input("bo")
    _button(at, "Add to set labels 2026").click().run()
    [refused] = [e.value for e in at.error]  # what to do, in the form's terms
    assert refused == (
        "Not added: round 2026-07 is already in the set **labels 2026** (file "
        f"{MONTHS[2].name}). To add this month, remove from the uploader above the file "
        "holding it; to relabel it, tick \"Replace round 2026-07 in the new version\" and "
        "add again.")
    assert at.checkbox(key=keys.REPLACE).label == "Replace round 2026-07 in the new version"
    assert app_ws.get_dataset(saved.id).version == 2
    at.checkbox(key=keys.REPLACE).set_value(True)
    _button(at, "Add to set labels 2026").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [f.name for f in app_ws.get_dataset(saved.id).files] == [
        MONTHS[0].name, MONTHS[1].name, "july_fixed.csv"]
    assert [f.name for f in app_ws.versions(saved.id)[-1].replaced] == [MONTHS[2].name]


def test_a_link_to_version_1_keeps_its_numbers(app_ws: Workspace) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    _save_two_months(at)
    [saved] = app_ws.list_datasets()
    _add(at, [MONTHS[2]])
    assert app_ws.get_dataset(saved.id).version == 2
    expected = trend(read_judgments(MONTHS[:2]), k=10).table
    for page in ("labels_trend", "labels_data", "labels_raters", "labels_changes",
                 "labels_gsb", "labels_judge"):
        link = AppTest.from_file(APP, default_timeout=120)  # a fresh session
        link.query_params.update({"source": "saved", "set": saved.short_id, "version": "1"})
        link.switch_page(f"pages/{page}.py").run()
        assert not link.exception, page
        notes = " ".join(i.value for i in link.info)
        assert "Newer months exist" in notes and "version 2 adds round 2026-07" in notes, page
        assert link.query_params["version"] == "1", page
        if page == "labels_trend":
            shown = next(d.value for d in link.dataframe if "mdc" in d.value.columns)
            assert sorted(shown["round"].unique()) == ["2026-05", "2026-06"]
            merged = shown.merge(expected, on=["round", "system"], suffixes=("", "_core"))
            assert len(merged) == len(expected) == 4
            assert merged["dcg"].tolist() == pytest.approx(merged["dcg_core"].tolist(),
                                                           rel=1e-12)
        if page == "labels_data":
            assert metric_values(link)["Rounds"] == "2"
    # without a version the link opens the newest, and says which
    newest = AppTest.from_file(APP, default_timeout=120)
    newest.query_params.update({"source": "saved", "set": saved.short_id})
    newest.switch_page("pages/labels_trend.py").run()
    assert newest.query_params["version"] == "2"
    assert not any("Newer months exist" in i.value for i in newest.info)
    # a set that is not in this workspace: not applied, and said
    gone = AppTest.from_file(APP, default_timeout=120)
    gone.query_params.update({"source": "saved", "set": "0123456789ab", "version": "1"})
    gone.switch_page("pages/labels_trend.py").run()
    assert not gone.exception
    assert any("Not applied: set=0123456789ab (no such saved labeling set here)" in w.value
               for w in gone.warning)


def test_a_month_under_a_name_the_set_has_is_refused_in_the_forms_terms(app_ws: Workspace
                                                                        ) -> None:
    """Teams often name every month's export the same: the add is refused with what to do
    on this page (rename the file), not the workspace method's parameter message."""
    at = AppTest.from_file(APP, default_timeout=120)
    _save_two_months(at)
    [saved] = app_ws.list_datasets()
    _add_uploader(at).set_value([(MONTHS[0].name, MONTHS[2].read_bytes(), "text/csv")]).run()
    at.text_input(key=state.NOTES_AUTHOR).input("bo")
    _button(at, "Add to set labels 2026").click().run()
    [refused] = [e.value for e in at.error]
    assert refused == (
        f"Not added: the set **labels 2026** already has a file named {MONTHS[0].name} (a "
        "file's name is part of the set). Rename this month's file before uploading it (e.g. "
        "with its month in the name), then add again.")
    assert "parameter" not in refused and "add_to_dataset" not in refused
    assert app_ws.get_dataset(saved.id).version == 1
