"""The Judging page's judging set in a real session on a real SQLite workspace: grade
names from the label map over the qrels' scale, the guidelines beside the document and
an editor's form that saves them (versioned, logged), "can't tell" recorded but not a
grade, a second rater served the overlap with the grade aggregated and the agreement
shown, and the rater's name given once per session."""

from __future__ import annotations

import math

import pytest
from _apps import APP
from streamlit.testing.v1 import AppTest
from test_app_judging import (
    QUERIES,
    judged_rows,
    judging_session,
    shown_doc,
    small_files,
)

from ireval_app import judging_glue as jg
from ireval_app.keys import judging as keys
from ireval_core.decisions import judging
from ireval_core.workspace import FileRounds, JudgingSet, Workspace


@pytest.fixture
def dataset(app_ws: Workspace) -> str:
    return app_ws.save_dataset(small_files(), name="holes", saved_by="ana").short_id


def session_of(at: AppTest) -> jg.Session:
    return at.session_state["ireval.judging.session"]


def test_grade_names_guidelines_and_cant_tell(app_ws: Workspace, dataset: str) -> None:
    app_ws.set_judging_set(dataset, JudgingSet("**Be strict**: a partial answer is *ok*.",
                                               "bad=0,ok=1,great=2"), author="ed")
    at = judging_session(dataset)
    labels = {b.key: b.label for b in at.button if b.key and b.key.startswith(keys.GRADE)}
    assert labels == {f"{keys.GRADE}0": "0 bad", f"{keys.GRADE}1": "1 ok"}  # qrels: 0-1
    assert any("**Be strict**" in m.value for m in at.markdown)
    first = shown_doc(at)
    at.button(key=keys.CANT_TELL).click().run()
    assert not at.exception and shown_doc(at) != first
    [row] = judged_rows(app_ws, dataset)
    assert row.cant_tell and row.rater == "ana"  # recorded ...
    qrels = session_of(at).queue.qrels.to_dict()
    assert row.doc not in qrels[row.query]  # ... but not a grade
    again = judging_session(dataset)  # the same rater is not asked again
    batch = {(i.query, i.doc) for i in session_of(again).batch}
    assert (row.query, row.doc) not in batch


def test_grade_names_from_the_datasets_labeling_files(app_ws: Workspace) -> None:
    month = b"round,query,doc,position,label\n2026-10,q1,d1,1,Good\n2026-10,q1,d2,2,bad\n"
    ds = app_ws.save_dataset([*small_files(), ("labels", "month.csv", month)],
                             name="with labels", saved_by="ana").short_id
    at = judging_session(ds)
    assert at.button(key=f"{keys.GRADE}0").label == "0 bad"
    assert at.button(key=f"{keys.GRADE}1").label == "1 fair"


def test_an_editor_saves_the_judging_set(app_ws: Workspace, dataset: str) -> None:
    at = judging_session(dataset)
    at.text_area(key=keys.SET_GUIDELINES).input("# Rules\nJudge the *answer*.")
    at.text_input(key=keys.SET_LABEL_MAP).input("nonsense")
    at.button(key=keys.SET_SAVE).click().run()
    assert any("label map" in e.value for e in at.error)
    assert app_ws.judging_set(dataset).version == 0  # refused: nothing saved
    at.text_input(key=keys.SET_LABEL_MAP).input("none=0,some=1")
    at.number_input(key=keys.SET_OVERLAP).set_value(20)
    at.button(key=keys.SET_SAVE).click().run()
    assert not at.exception
    saved = app_ws.judging_set(dataset)
    assert (saved.version, saved.guidelines, saved.label_map, saved.overlap,
            saved.edited_by) == (1, "# Rules\nJudge the *answer*.", "none=0,some=1", 0.2,
                                 "ana")
    assert [e.action for e in app_ws.audit()][-1] == "judging set edited"
    at.run()
    assert at.button(key=f"{keys.GRADE}1").label == "1 some"


def test_a_second_rater_gets_the_overlap_and_the_agreement_shows(
        app_ws: Workspace, dataset: str) -> None:
    app_ws.set_judging_set(dataset, JudgingSet("", "", 0.5), author="ed")
    graded = {(q, "d2"): 1.0 for q in QUERIES}  # ana's session, as the page writes it
    rows = [judging.Judgment(q, d, g, "ana", "2026-11-28T20:00:00Z")
            for (q, d), g in graded.items()]
    info = app_ws.get_dataset(dataset)
    name = judging.round_file_name("2026-11-28T20:00:00Z ana")
    app_ws.add_to_dataset(
        dataset, [("labels", name, judging.judgments_file(
            judging.FILE_PREFIX + "2026-11-28T20:00:00Z ana", rows))],
        rounds={**{f.name: FileRounds((), 0) for f in info.files if f.rounds is None},
                name: FileRounds(("judging 2026-11-28T20:00:00Z ana",), len(rows))},
        saved_by="ana")
    overlap = [k for k in graded if judging.in_overlap(*k, 0.5)]
    assert overlap  # 8 documents, half the share: the hash chose some
    bo = AppTest.from_file(APP, default_timeout=60)
    bo.query_params["ds"] = dataset
    bo.query_params["measure"] = "P@5"
    bo.switch_page("pages/judging.py").run()
    bo.text_input(key=keys.RATER).input("bo").run()
    s = session_of(bo)
    asked = [(i.query, i.doc) for i in s.batch if i.why == jg.SECOND_RATER]
    assert sorted(asked) == sorted(overlap)  # the overlap, and nothing else ana judged
    assert not set(graded) - set(overlap) & {(i.query, i.doc) for i in s.batch}
    assert s.agreement_memo is None and not bo.dataframe  # the panel closed: not computed
    bo.session_state[keys.RATERS] = True  # the panel opened
    bo.run()
    assert any("no document has two raters' grades yet" in c.value for c in bo.caption)
    while set(asked) - {(j.query, j.doc) for j in session_of(bo).rows}:
        bo.button(key=f"{keys.GRADE}0").click().run()  # the overlap comes mixed with new
        assert not bo.exception  # documents, in a random order within each query
        both = set(asked) & {(j.query, j.doc) for j in session_of(bo).rows}
        frames = [f.value for f in bo.dataframe]  # the agreement after every label
        pairable = [f["pairable_units"].iloc[0] for f in frames
                    if "pairable_units" in f.columns]
        assert pairable == ([len(both)] if both else []), (pairable, len(both))
    qrels = session_of(bo).queue.qrels.to_dict()
    assert all(qrels[q][d] == 0.0 for q, d in overlap)  # two raters: the lower grade
    assert any("Several raters: 50%" in c.value for c in bo.caption)
    assert session_of(bo).batch_number == 1  # all within the first batch
    per_round = next(f.value for f in bo.dataframe if "pairable_units" in f.value.columns)
    assert per_round["pairable_units"].iloc[0] == len(overlap)
    assert math.isnan(per_round["cohen_quadratic"].iloc[0]) or \
        per_round["cohen_quadratic"].iloc[0] <= 0  # all 1 against all 0: no agreement
    expected = judging.agreement(judged_rows(app_ws, dataset))  # every label, as saved
    assert expected is not None
    shown = [c for c in per_round.columns if c != "round"]
    assert per_round[shown].to_dict("records") == expected.per_round[shown].to_dict("records")


def test_the_raters_name_is_given_once_per_session(app_ws: Workspace, dataset: str) -> None:
    at = judging_session(dataset)
    at.switch_page("pages/compare.py").run()
    at.switch_page("pages/judging.py").run()
    assert not at.exception
    assert at.text_input(key=keys.RATER).value == "ana"
    assert session_of(at).current is not None
