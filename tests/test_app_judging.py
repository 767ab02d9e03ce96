"""The Judging page in a real session on a real SQLite workspace: grade, undo, skip, and
the labels still there for a new session; a link to an earlier version keeps its qrels."""

from __future__ import annotations

import pytest
from _apps import APP
from streamlit.testing.v1 import AppTest

from ireval_app.keys import judging as keys
from ireval_core.decisions import judging
from ireval_core.workspace import Workspace

QUERIES = [f"q{i}" for i in range(8)]


def small_files() -> list[tuple[str, str, bytes]]:
    """Qrels judging d0 and d1 of every query; two runs whose top 3 hold unjudged d2..d4."""
    qrels = "".join(f"{q} 0 d0 1\n{q} 0 d1 0\n" for q in QUERIES)
    a = "".join(f"{q} Q0 d{d} {r} {10 - r} base\n"
                for q in QUERIES for r, d in enumerate((0, 2, 1, 3), start=1))
    b = "".join(f"{q} Q0 d{d} {r} {10 - r} cand\n"
                for q in QUERIES for r, d in enumerate((4, 0, 3, 1), start=1))
    return [("qrels", "qrels.txt", qrels.encode()), ("run", "base.txt", a.encode()),
            ("run", "cand.txt", b.encode())]


@pytest.fixture
def dataset(app_ws: Workspace) -> str:
    return app_ws.save_dataset(small_files(), name="holes", saved_by="ana").short_id


def judging_session(ds: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ds"] = ds
    at.query_params["measure"] = "P@5"
    at.switch_page("pages/judging.py").run()
    at.text_input(key=keys.RATER).input("ana").run()
    assert not at.exception
    return at


def shown_doc(at: AppTest) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("**Document**"))


def judged_rows(ws: Workspace, ds: str) -> list[judging.Judgment]:
    info = ws.get_dataset(ds)
    return [j for f in info.files if judging.is_judging_file(f.name)
            for j in judging.read_judgments_file(ws.read_file(info.id, f.position))]


def test_grade_undo_skip_and_a_new_session(app_ws: Workspace, dataset: str) -> None:
    at = judging_session(dataset)
    assert "Pair 1: depends on" in " ".join(m.value for m in at.markdown)
    first = shown_doc(at)
    at.button(key=f"{keys.GRADE}1").click().run()
    assert not at.exception
    rows = judged_rows(app_ws, dataset)
    assert [(r.grade, r.rater) for r in rows] == [(1.0, "ana")]
    assert app_ws.get_dataset(dataset).version == 2
    at.button(key=keys.UNDO).click().run()
    assert judged_rows(app_ws, dataset) == []  # undo is written too
    assert shown_doc(at) == first  # and the document is the next again
    # one undo control, bound to u; the left arrow's (hidden) button is the same undo
    assert (at.button(key=keys.UNDO).proto.shortcut, at.button(key=keys.BACK).proto.shortcut
            ) == ("u", "left")
    assert at.button(key=keys.UNDO).label == "Undo last label"
    assert any(c.value.endswith("· → skip · u or ← undo the last label. The document's "
                                "system, rank and score are not shown; documents of a "
                                "query come in a random order.") for c in at.caption)
    at.button(key=f"{keys.GRADE}1").click().run()
    at.button(key=keys.BACK).click().run()
    assert judged_rows(app_ws, dataset) == [] and shown_doc(at) == first
    at.button(key=keys.SKIP).click().run()
    assert shown_doc(at) != first and judged_rows(app_ws, dataset) == []
    second = shown_doc(at)
    at.button(key=f"{keys.GRADE}0").click().run()
    [kept] = judged_rows(app_ws, dataset)
    # a new session (a closed browser) sees the label: the queue no longer offers it
    again = judging_session(dataset)
    assert f"`{kept.doc}`" in second
    qrels = again.session_state["ireval.judging.session"].queue.qrels
    assert qrels.to_dict()[kept.query][kept.doc] == 0.0


def test_a_link_to_a_version_keeps_its_qrels(app_ws: Workspace, dataset: str) -> None:
    at = judging_session(dataset)
    at.button(key=f"{keys.GRADE}1").click().run()
    [row] = judged_rows(app_ws, dataset)
    for version, has in (("1", False), ("2", True), (None, True)):
        page = AppTest.from_file(APP, default_timeout=60)
        page.query_params["ds"] = dataset
        if version:
            page.query_params["dsv"] = version
        page.switch_page("pages/compare.py").run()
        assert not page.exception
        qrels = page.session_state["ireval.dataset"].qrels.to_dict()
        assert (row.doc in qrels[row.query]) is has


def test_a_workspace_with_members_shows_nothing_to_the_local_user(app_ws: Workspace,
                                                                  dataset: str) -> None:
    """A workspace with members refuses the anonymous local user, reads included: the link's
    dataset is not opened (the page says why), none of its documents is shown to judge,
    and nothing is written."""
    from ireval_core.workspace import ANONYMOUS, Actor

    app_ws.set_role("ada@example.org", "admin", actor=ANONYMOUS)  # team mode from now on
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["ds"] = dataset
    at.query_params["measure"] = "P@5"
    at.switch_page("pages/judging.py").run()
    assert not at.exception
    shown = " ".join(e.value for e in [*at.error, *at.warning, *at.info, *at.caption])
    assert "Not applied" in shown or "access" in shown or "role" in shown, shown
    assert not any(m.value.startswith("**Document**") for m in at.markdown)
    ada = Actor("ada@example.org", "Ada")
    info = app_ws.get_dataset(dataset, actor=ada)
    assert info.version == 1
    assert not any(judging.is_judging_file(f.name) for f in info.files)

