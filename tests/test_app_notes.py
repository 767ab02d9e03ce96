"""The notes panel (``workspace_widgets.notes_panel``): the author is asked once per session, then
remembered (also across pages without a name field), and a collapsed panel counts its
notes in its label."""

from __future__ import annotations

import pytest
from _apps import APP, NEEDS_SAMPLE, sample_files
from streamlit.testing.v1 import AppTest

from ireval_app import state, workspace_widgets
from ireval_app.keys import queries as queries_keys
from ireval_core.workspace import Target, Workspace

pytestmark = NEEDS_SAMPLE


@pytest.fixture
def ws(app_ws: Workspace) -> Workspace:
    app_ws.save_dataset(sample_files("run_bm25.txt"), name="November round", saved_by="ana")
    return app_ws


def _expander(at: AppTest, start: str):
    return next(e for e in at.expander if e.label.startswith(start))


def test_author_once_and_the_count_on_the_collapsed_panel(ws: Workspace) -> None:
    [info] = ws.list_datasets()
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ds"] = info.short_id
    at.switch_page("pages/queries.py").run()
    assert not at.exception
    query = at.selectbox(key=queries_keys.QUERY).value
    key = workspace_widgets.notes_key(Target.query(str(query)))
    assert _expander(at, f"Notes on query {query}").label == f"Notes on query {query}"
    at.text_area(key=key + ".text").set_value("odd qrels")
    at.text_input(key=state.NOTES_AUTHOR).set_value("bo")
    at.button[[b.label for b in at.button].index("Add")].click().run()
    assert not at.exception
    assert len(ws.notes(info.id, Target.query(str(query)))) == 1
    # the count is in the label; the name is remembered after a page without the field
    at.switch_page("pages/metrics.py").run()
    at.switch_page("pages/queries.py").run()
    assert _expander(at, f"Notes on query {query}").label == f"Notes on query {query} (1)"
    assert at.text_input(key=state.NOTES_AUTHOR).value == "bo"  # prefilled
    assert any(e.label == "As bo" for e in at.expander)  # folded away
    at.text_area(key=key + ".text").set_value("second")
    at.button[[b.label for b in at.button].index("Add")].click().run()
    assert [n.author for n in ws.notes(info.id, Target.query(str(query)))] == ["bo", "bo"]
