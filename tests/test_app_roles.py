"""The app's controls follow the signed-in person's role, and the Admin page.

AppTest sessions with sign-in configured (``[auth]`` injected into ``st.secrets``, as
``test_app_signin.py`` does) and a signed-in identity (``AppTest.user``), on a temporary
SQLite workspace (``IREVAL_WORKSPACE``) where Ada is an admin (``IREVAL_ADMINS``), Vic a
viewer, Ray a rater and Edd an editor of the default project, and a second project
``secret`` only Ada belongs to. A viewer sees the data but no Save, Delete, Add or Record
control; an editor records a decision the workspace attributes to them, with no name to
type; an admin deletes and manages members on the Admin page; a person without a role
sees only whom to ask. The security probes open pages with links to both projects as
each person and check that nothing of a project is shown to someone without a role in
it, and that nothing is written. The round trip through a real provider in Chromium is
``test_browser_signin.py``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from _apps import APP, LABELS, NEEDS_SAMPLE, displayed, sample_files
from streamlit.testing.v1 import AppTest
from test_app_signin import AUTH

from ireval_app.frame import PAGES
from ireval_app.keys import admin as admin_keys
from ireval_app.keys import compare as compare_keys
from ireval_app.keys import labels_data as labels_keys
from ireval_core.workspace import OPERATOR, Actor, FileRounds, Workspace

pytestmark = NEEDS_SAMPLE

ADA = Actor("ada@example.org", "Ada Admin")
VIC = Actor("vic@example.org", "Vic Viewer")
RAY = Actor("ray@example.org", "Ray Rater")
EDD = Actor("edd@example.org", "Edd Editor")
OUT = Actor("out@example.org", "Otto Outsider")

SECRET_QRELS = b"sq1 0 sdoc1 1\nsq1 0 sdoc2 0\n"
SECRET_RUN = b"sq1 Q0 sdoc1 1 2.0 secretsys\nsq1 Q0 sdoc2 2 1.0 secretsys\n"


@dataclass(frozen=True)
class Team:
    ws: Workspace
    home: str
    """The id of the sample dataset in the default project (Edd saved it)."""
    secret: str
    """The id of a dataset in the project ``secret`` (only Ada is a member)."""


@pytest.fixture
def team(app_ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> Iterator[Team]:
    monkeypatch.setenv("IREVAL_ADMINS", ADA.email)
    monkeypatch.delenv("IREVAL_DEFAULT_ROLE", raising=False)
    app_ws.sign_in(ADA)
    for person, role in ((VIC, "viewer"), (RAY, "rater"), (EDD, "editor")):
        app_ws.set_role(person.email, role, actor=ADA, name=person.name)
    home = app_ws.save_dataset(sample_files(), name="sample", actor=EDD)
    app_ws.create_project("secret", actor=ADA)
    secret = app_ws.save_dataset([("qrels", "secret_qrels.txt", SECRET_QRELS),
                                  ("run", "secret_run.txt", SECRET_RUN)],
                                 name="secret set", actor=ADA, project="secret")
    yield Team(app_ws, home.id, secret.id)


def session(person: Actor | None, page: str, *, timeout: float = 90,
            **params: str) -> AppTest:
    """A new session of ``page`` (``app.py`` or ``pages/<name>.py``) with sign-in
    configured, signed in as ``person`` (``None``: not signed in), opened by a link with
    ``params``; run once, asserting it raised nothing."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    at.secrets["auth"] = AUTH
    if person is not None:
        at.user = {"is_logged_in": True, "email": person.email, "name": person.name,
                   "email_verified": True}
    for key, value in params.items():
        at.query_params[key] = value
    if page != "app.py":
        at.switch_page(page)
    at.run()
    assert not at.exception, at.exception
    return at


def shown_text(at: AppTest) -> str:
    """Everything a session shows as text: Markdown, captions, messages, labels, tables."""
    parts = [displayed(str(e.value)) for kind in ("markdown", "caption", "info", "warning",
                                                  "error", "success", "title", "subheader")
             for e in getattr(at, kind)]
    parts += [str(w.label) for kind in ("button", "text_input", "selectbox", "text_area")
              for w in getattr(at, kind)]
    parts += [d.value.to_string() for d in at.dataframe]
    parts += [str(s.options) for s in at.selectbox]
    return "\n".join(parts).replace(":small[]", "")  # md_escape's break of autolinks


def menu_titles(at: AppTest) -> list[str]:
    return [str(link.proto.label) for link in at.get("page_link")]


def test_a_viewer_sees_the_data_and_no_write_control(team: Team) -> None:
    data = session(VIC, "app.py", ds=team.home)
    assert "Admin" not in menu_titles(data)
    text = shown_text(data)
    assert "Saved dataset" in text and "bm25" in text  # the data
    assert not any("Delete" in str(e.proto.label) for e in data.expander)
    compare = session(VIC, "pages/compare.py", ds=team.home)
    compare.number_input(key=compare_keys.RESAMPLES).set_value(300).run()
    assert not compare.exception
    text = shown_text(compare)
    assert "Recording a decision needs the role editor" in text
    assert not [b for b in compare.button if "Record" in str(b.label)]
    assert not [b for b in compare.button if str(b.label) == "Add"]  # no notes form
    assert not [t for t in compare.text_input if t.label == "Your name"]


def test_an_editor_records_a_decision_attributed_to_them(team: Team) -> None:
    at = session(EDD, "pages/compare.py", ds=team.home)
    at.number_input(key=compare_keys.RESAMPLES).set_value(300).run()
    assert not [t for t in at.text_input if t.label == "Your name"]  # nothing to type
    assert "As **Edd Editor &lt;edd@example.org>**" in shown_text(at)  # the label, escaped
    at.text_area(key=compare_keys.DECISION_TEXT).set_value("ship it")
    next(b for b in at.button if "Record" in str(b.label)).click().run()
    assert not at.exception
    decisions = team.ws.notes(team.home, kind="decision", actor=EDD)
    assert [(d.author, d.text.splitlines()[0]) for d in decisions] == [
        ("Edd Editor <edd@example.org>", "ship it")]
    assert team.ws.audit(actor=OPERATOR)[-1].actor_email == EDD.email
    data = session(EDD, "app.py", ds=team.home)  # an editor does not delete
    assert not any("Delete" in str(e.proto.label) for e in data.expander)


def _labeling_set(ws: Workspace) -> str:
    """A labeling set of one month in the default project (Edd saved it); its short id."""
    may = LABELS / "labels_2026-05.csv"
    rows = len(may.read_bytes().splitlines()) - 1
    return ws.save_dataset([("labels", may.name, may.read_bytes())], name="labels 2026",
                           rounds={may.name: FileRounds(("2026-05",), rows)},
                           actor=EDD).short_id


def _add_uploaders(at: AppTest) -> list[Any]:
    return [u for u in at.file_uploader if u.key.startswith(labels_keys.ADD_UPLOADER)]


def test_a_rater_adds_a_round_but_does_not_record(team: Team) -> None:
    labels = _labeling_set(team.ws)
    viewer = session(VIC, "pages/labels_data.py", source="saved", set=labels)
    assert "labels 2026" in shown_text(viewer) and _add_uploaders(viewer) == []
    at = session(RAY, "pages/labels_data.py", source="saved", set=labels)
    june = LABELS / "labels_2026-06.csv"
    [uploader] = _add_uploaders(at)
    uploader.set_value([(june.name, june.read_bytes(), "text/csv")]).run()
    assert not [t for t in at.text_input if t.label == "Your name"]
    next(b for b in at.button if b.label == "Add to set labels 2026").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    grown = team.ws.versions(labels, actor=RAY)[-1]
    assert (grown.version, grown.saved_by) == (2, "Ray Rater <ray@example.org>")
    compare = session(RAY, "pages/compare.py", ds=team.home)
    compare.number_input(key=compare_keys.RESAMPLES).set_value(300).run()
    assert "Recording a decision needs the role editor" in shown_text(compare)


def test_the_admin_page_manages_members_and_verifies_the_log(team: Team) -> None:
    data = session(ADA, "app.py", ds=team.home)
    assert "Admin" in menu_titles(data)
    assert any("Delete" in str(e.proto.label) for e in data.expander)  # an admin deletes
    at = session(ADA, "pages/admin.py")
    members = at.dataframe[0].value
    assert list(members["E-mail"]) == [ADA.email, EDD.email, RAY.email, VIC.email]
    assert list(members["Role"]) == ["admin", "editor", "rater", "viewer"]
    at.selectbox(key=admin_keys.MEMBER).set_value(VIC.email)
    at.selectbox(key=admin_keys.ROLE).set_value("editor")
    next(b for b in at.button if b.label == "Set the role").click().run()
    assert not at.exception
    assert team.ws.role(VIC) == "editor"
    at.text_input(key=admin_keys.NEW_EMAIL).input("Nia@Example.org")
    at.selectbox(key=admin_keys.NEW_ROLE).set_value("rater")
    next(b for b in at.button if b.label == "Add").click().run()
    assert team.ws.role(Actor("nia@example.org")) == "rater"
    at.selectbox(key=admin_keys.MEMBER).set_value(ADA.email)
    at.selectbox(key=admin_keys.ROLE).set_value("viewer")
    next(b for b in at.button if b.label == "Set the role").click().run()
    assert "ada@example.org is the last admin" in shown_text(at)
    log = at.dataframe[-1].value
    assert list(log["Action"][:2]) == ["role changed", "role changed"]  # the newest first
    assert list(log["Who"][:1]) == ["Ada Admin <ada@example.org>"]
    next(b for b in at.button if b.label == "Verify the chain").click().run()
    rows = len(team.ws.audit(actor=OPERATOR))
    assert [s.value for s in at.success] == [f"The chain is intact: {rows:,} rows."]


def test_the_admin_page_is_for_admins_only(team: Team) -> None:
    at = session(EDD, "pages/admin.py")
    assert "Admin" not in menu_titles(at)
    assert "you are not an admin of any" in shown_text(at)
    assert len(at.dataframe) == 0 and not at.get("date_input")


TINY_QRELS = b"tq1 0 tdoc1 1\n"
TINY_RUN = b"tq1 Q0 tdoc1 1 2.0 tinysys\n"


def test_a_person_saves_into_a_project_where_the_role_allows_and_sees_both(team: Team
                                                                           ) -> None:
    """Vic is an editor in ``search`` and ``lab`` and a viewer in ``default``: the Data
    page offers those two to save into (not ``default``), saves into the one chosen, the
    Labeling data page then offers that one first; a save into a project where the role
    was taken away after the form was drawn is refused by the workspace and writes
    nothing; the saved list shows each dataset's project, the default's and lab's."""
    from ireval_app import state
    from ireval_app.keys import data as data_keys

    for project in ("search", "lab"):
        team.ws.create_project(project, actor=ADA)
        team.ws.set_role(VIC.email, "editor", actor=ADA, project=project)
    at = session(VIC, "app.py")
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(("t.qrels", TINY_QRELS, "text/plain"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value([("t.run", TINY_RUN, "text/plain")])
    at.run()
    choice = at.selectbox(key=data_keys.SAVE_PROJECT)
    assert (choice.options, choice.value) == (["search", "lab"], "search")
    choice.set_value("lab")
    at.text_input(key=data_keys.SAVE_NAME).input("tiny")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [tiny] = team.ws.list_datasets(actor=VIC, project="lab")
    assert (tiny.name, tiny.saved_by) == ("tiny", "Vic Viewer <vic@example.org>")

    at.switch_page("pages/labels_data.py").run()  # the same session: lab first
    at.radio(key=labels_keys.SOURCE).set_value("upload").run()
    may = LABELS / "labels_2026-05.csv"
    at.file_uploader(key=labels_keys.UPLOADER).set_value([(may.name, may.read_bytes(),
                                                          "text/csv")]).run()
    assert at.selectbox(key=labels_keys.SAVE_PROJECT).value == "lab"
    at.selectbox(key=labels_keys.SAVE_PROJECT).set_value("search")
    at.text_input(key=labels_keys.SAVE_NAME).input("may labels")
    team.ws.set_role(VIC.email, "viewer", actor=ADA, project="search")  # meanwhile
    rows = len(team.ws.audit(actor=OPERATOR))
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception
    assert "vic@example.org may not save a dataset in project 'search'" in shown_text(at)
    assert len(team.ws.audit(actor=OPERATOR)) == rows  # nothing written
    assert team.ws.list_datasets(actor=VIC, project="search") == []

    data = session(VIC, "app.py", ds=tiny.short_id)
    listed = shown_text(data)
    assert "tiny  ·  project lab" in listed and "sample  ·  project default" in listed
    assert "secret set" not in listed


def test_the_months_task_saves_a_new_set_into_a_project_the_role_allows(team: Team) -> None:
    """On the Judging page's month's task, Vic (editor in ``lab``, rater in ``default``:
    he may judge there, not save a new set) is offered ``lab`` alone for a new labeling
    set, and the first label creates the set there."""
    from ireval_app import judging_glue
    from ireval_app.keys import judging as judging_keys

    team.ws.create_project("lab", actor=ADA)
    team.ws.set_role(VIC.email, "editor", actor=ADA, project="lab")
    team.ws.set_role(VIC.email, "rater", actor=ADA)
    at = session(VIC, "pages/judging.py")  # the bundled sample's runs
    at.radio(key=judging_keys.MODE).set_value(judging_glue.MODES[1]).run()
    assert not at.exception
    shown = shown_text(at).replace("*", "")  # one project allows: said, not asked
    assert "Saved in the project lab" in shown, shown
    at.number_input(key=judging_keys.TASK_N).set_value(3)
    at.number_input(key=judging_keys.TASK_K).set_value(2)
    at.text_input(key=judging_keys.TASK_SET_NAME).input("lab labels")
    next(b for b in at.button if b.label == "Build the task").click().run()
    at.button(key=f"{judging_keys.GRADE}1").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [made] = [i for i in team.ws.list_datasets(actor=VIC) if i.name == "lab labels"]
    assert made.project == "lab" and made.saved_by == "Vic Viewer <vic@example.org>"


def test_the_months_task_is_gated_on_the_labeling_sets_project(team: Team) -> None:
    """The month's task writes into a labeling set: the rater role that lets a person
    label it is the one in the set's project, not in the current dataset's. Lia, a rater
    only in ``lab``, labels ``lab``'s set (she has no role where the bundled sample's
    dataset would be saved); Ray, a rater in ``default`` and a viewer in ``lab``, is not
    offered ``lab``'s set and the workspace refuses his write into it; Lia, made a
    viewer there after building her task, gets no grade button."""
    from ireval_app import judging_glue, judging_task
    from ireval_app.keys import judging as judging_keys
    from ireval_core.errors import NotAllowedError

    lia = Actor("lia@example.org", "Lia Labeler")
    team.ws.create_project("lab", actor=ADA)
    team.ws.set_role(lia.email, "rater", actor=ADA, project="lab", name=lia.name)
    team.ws.set_role(RAY.email, "viewer", actor=ADA, project="lab")
    may = LABELS / "labels_2026-05.csv"
    rows = len(may.read_bytes().splitlines()) - 1
    lab_set = team.ws.save_dataset([("labels", may.name, may.read_bytes())],
                                   name="lab labels", project="lab", actor=ADA,
                                   rounds={may.name: FileRounds(("2026-05",), rows)})

    def month_task(person: Actor) -> AppTest:
        at = session(person, "pages/judging.py")  # the bundled sample's runs
        at.radio(key=judging_keys.MODE).set_value(judging_glue.MODES[1]).run()
        assert not at.exception
        return at

    ray = month_task(RAY)
    assert judging_task.NEEDS_ROLE in shown_text(ray)
    assert not [b for b in ray.button if b.label == "Build the task"]
    with pytest.raises(NotAllowedError, match="role rater"):  # the core, whatever the page
        june = LABELS / "labels_2026-06.csv"
        team.ws.add_to_dataset(
            lab_set.id, [("labels", june.name, june.read_bytes())], actor=RAY,
            rounds={may.name: FileRounds(("2026-05",), rows),
                    june.name: FileRounds(("2026-06",), len(june.read_bytes().splitlines()) - 1)})
    assert team.ws.get_dataset(lab_set.id, actor=ADA).version == 1

    at = month_task(lia)
    assert at.selectbox(key=judging_keys.TASK_SET).options == ["A new labeling set",
                                                               "lab labels"]
    at.selectbox(key=judging_keys.TASK_SET).set_value(lab_set.short_id)
    at.text_input(key=judging_keys.TASK_ROUND).input("2026-07")
    at.number_input(key=judging_keys.TASK_N).set_value(3)
    at.number_input(key=judging_keys.TASK_K).set_value(2)
    next(b for b in at.button if b.label == "Build the task").click().run()
    at.button(key=f"{judging_keys.GRADE}1").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    grown = team.ws.get_dataset(lab_set.id, actor=ADA)
    assert grown.version == 2 and grown.rounds == ("2026-05", "2026-07")
    assert team.ws.versions(lab_set.id, actor=ADA)[-1].saved_by == (
        "Lia Labeler <lia@example.org>")

    team.ws.set_role(lia.email, "viewer", actor=ADA, project="lab")  # meanwhile
    at.run()
    assert not at.exception
    assert judging_task.NEEDS_ROLE in shown_text(at)  # no set to label, none to start
    assert not [b for b in at.button if str(b.key).startswith(judging_keys.GRADE)]
    team.ws.set_role(lia.email, "editor", actor=ADA)  # a new set she may start elsewhere
    at.run()
    assert not at.exception
    assert "needs the role rater or above in its project" in shown_text(at)
    assert not [b for b in at.button if str(b.key).startswith(judging_keys.GRADE)]


def every_link_param(**targets: str) -> dict[str, str]:
    """Every URL parameter any page reads (the shared ones and each page's), each
    ``"probe"`` unless ``targets`` gives it a value (the dataset and labeling set to
    open, and the few that keep a page cheap)."""
    import importlib

    from ireval_app import state

    names = set(state.SHARED_PARAMS)
    for name in PAGES:
        module = importlib.import_module(f"ireval_app.keys.{name}")
        names |= {p.param for p in getattr(module, "PARAMS", ())}
    return {name: targets.get(name, "probe") for name in sorted(names)} | targets


CHEAP = {"resamples": "100", "tests": "t", "measures": "nDCG@10", "measure": "nDCG@10",
         "source": "saved"}
"""Link values that keep the pages that compute cheap (one test, 100 resamples, one
measure: a measure typed in a select that takes new text is a value AppTest cannot send
back as the session walks on)."""

WRITE_LABELS = ("Save", "Delete", "Record", "Add", "Set the role", "Remove")
"""How the buttons of writes begin."""


def probe(person: Actor | None, link: dict[str, str], *, fresh: bool,
          pages: list[str] | None = None) -> Iterator[tuple[str, AppTest]]:
    """Every page (or ``pages``, by name) opened by ``link`` as ``person``: one session
    walking the pages (a person moving through the menu), or a new session per page when
    ``fresh``."""
    at: AppTest | None = None
    for info in (PAGES[n] for n in (pages or list(PAGES))):
        if at is None or fresh:
            at = AppTest.from_file(APP, default_timeout=90)
            at.secrets["auth"] = AUTH
            if person is not None:
                at.user = {"is_logged_in": True, "email": person.email, "name": person.name,
                           "email_verified": True}
        at.query_params.clear()
        for key, value in link.items():
            at.query_params[key] = value
        at.switch_page(info.path)
        at.run()
        assert not at.exception, (info.path, person, at.exception)
        yield info.path, at


def _ids(*full: str) -> tuple[str, ...]:
    return tuple(i for f in full for i in (f, f[:12]))


def test_probes_without_a_session_or_a_role_show_and_write_nothing(team: Team) -> None:
    """Every page, with every link parameter (the dataset's link naming the default
    project's dataset, the labeling set's the secret one), not signed in and signed in
    without a role: only the sign-in screen (no menu, no control but Sign in), or whom
    to ask; nothing of any dataset (no name, value or id, no table, figure or metric);
    nothing written. ``IREVAL_ROLES_ALL_PAGES=1``: a new session per page, and the secret
    dataset's link too (the gate reads no link before it lets a person in)."""
    every = os.environ.get("IREVAL_ROLES_ALL_PAGES") == "1"
    before = len(team.ws.audit(actor=OPERATOR))
    markers = ("bm25", "neural_rerank", "secretsys", "secret_run", "secret set", "sample",
               "'secret'", *_ids(team.home, team.secret), AUTH["cookie_secret"],
               AUTH["client_secret"])
    for ds in (team.home, team.secret) if every else (team.home,):
        link = every_link_param(ds=ds, set=team.secret[:12], dsv="1", version="1", **CHEAP)
        for person in (None, OUT):
            for page, at in probe(person, link, fresh=every):
                text = shown_text(at)
                assert not [m for m in markers if m in text], (page, person)
                assert len(at.dataframe) == len(at.table) == len(at.metric) == 0, page
                assert not at.get("plotly_chart"), page
                if person is None:
                    assert [b.label for b in at.button] == ["Sign in"], page
                    assert "Sign in" in [h.value for h in at.subheader], page
                    assert len(at.sidebar) == 0, page  # no menu, dataset, link or options
                    for kind in ("selectbox", "radio", "text_input", "multiselect"):
                        assert len(getattr(at, kind)) == 0, (page, kind)
                else:
                    assert [b.label for b in at.button] == ["Sign out"], page
                    assert "ask an admin of the project 'default' for access" in text
                    assert "Otto Outsider" in text and "out@example.org" in text
                    assert menu_titles(at) == [], page
    assert len(team.ws.audit(actor=OPERATOR)) == before


def test_probes_as_each_role_show_and_write_nothing_beyond_it(team: Team) -> None:
    """Every page, with every link parameter, as each role of the default project: a
    viewer opening the default project's dataset sees its data and no write control
    (Save, Delete, Record, Add, no name to type, no grade button), and the link's labeling
    set, in the secret project, shows nothing of it; a rater and an editor (each on half
    the pages, in turn) opening the secret project's dataset see nothing of it, nor its
    project; nothing is written. The admin of the secret project sees it (the control).
    ``IREVAL_ROLES_ALL_PAGES=1``: a new session per page, the rater and the editor on
    every page, and the viewer with the secret dataset's link too."""
    from ireval_app.keys import judging as judging_keys

    every = os.environ.get("IREVAL_ROLES_ALL_PAGES") == "1"
    before = len(team.ws.audit(actor=OPERATOR))
    secret = ("secretsys", "secret_run", "secret set", "'secret'", *_ids(team.secret))
    home = every_link_param(ds=team.home, set=team.secret[:12], version="1", **CHEAP)
    away = every_link_param(ds=team.secret, set=team.secret[:12], dsv="1", version="1",
                            **CHEAP)
    names = list(PAGES)
    runs = [(VIC, home, names), (RAY, away, names[::2]), (EDD, away, names[1::2])]
    if every:
        runs = [(VIC, home, names), (VIC, away, names), (RAY, away, names),
                (EDD, away, names)]
    for person, link, pages in runs:
        for page, at in probe(person, link, fresh=every, pages=pages):
            # the link's own value, said back ("Not applied: ds=..."), is not the data's
            text = re.sub(r"Not applied: \w+=[0-9a-f]+…?", "", shown_text(at))
            assert not [m for m in secret if m in text], (page, person)
            if person is VIC:
                assert not [b.label for b in at.button
                            if str(b.label).startswith(WRITE_LABELS)], page
                assert not [t for t in at.text_input if t.label == "Your name"], page
                assert not [b for b in at.button
                            if str(b.key).startswith(judging_keys.GRADE)], page
            if page == "app.py" and link is home:
                assert "bm25" in text  # the viewer sees the data
    assert len(team.ws.audit(actor=OPERATOR)) == before  # the sign-ins were recorded before
    seen = session(ADA, "app.py", ds=team.secret)
    assert "secret set" in shown_text(seen)


def test_a_rater_judges_and_a_viewer_cannot(team: Team) -> None:
    """On the Judging page a rater's grade is saved at once as the dataset's next version,
    attributed to their verified identity (the version and the judging file's rater
    column); a viewer gets no grade button, only the role judging needs."""
    from ireval_app.keys import judging as judging_keys
    from ireval_core.decisions import judging

    def judged(version_info: Any) -> list[judging.Judgment]:
        return [j for f in version_info.files if judging.is_judging_file(f.name)
                for j in judging.read_judgments_file(
                    team.ws.read_file(version_info.id, f.position, actor=ADA), f.name)]

    before = team.ws.get_dataset(team.home, actor=ADA).version
    pair = {"ds": team.home, "measure": "nDCG@10", "baseline": "bm25",
            "candidate": "neural_rerank"}  # the sample's verdict that depends on holes
    viewer = session(VIC, "pages/judging.py", **pair)
    assert not any(t.key == judging_keys.RATER for t in viewer.text_input)  # no name typed
    assert not any(str(b.key).startswith(judging_keys.GRADE) for b in viewer.button)
    assert "needs the role rater" in shown_text(viewer)
    assert team.ws.get_dataset(team.home, actor=ADA).version == before

    rater = session(RAY, "pages/judging.py", **pair)
    assert not any(b.key == judging_keys.SET_SAVE for b in rater.button)  # editor's form
    rater.button(key=f"{judging_keys.GRADE}1").click().run()
    assert not rater.exception
    info = team.ws.get_dataset(team.home, actor=ADA)
    assert info.version == before + 1
    assert RAY.email in team.ws.versions(team.home, actor=ADA)[-1].saved_by  # who added it
    rows = judged(info)
    assert len(rows) == 1 and rows[0].grade == 1 and RAY.name in rows[0].rater
