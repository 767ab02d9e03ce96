"""Projects, roles and the audit log of the workspace, on SQLite and a real PostgreSQL.

Every test runs on both back ends (the ``url``/``ws`` fixtures of ``conftest.py``). The
roles are checked by doing each write as each role and seeing it refused or done; the
audit log by editing and deleting its rows with plain SQL through a separate engine (what
someone with database access would do) and seeing ``verify_audit`` and the CLI name the
row.
"""

from __future__ import annotations

import io
import re
import sqlite3
from contextlib import redirect_stderr
from datetime import UTC, datetime
from pathlib import Path

import pytest
import sqlalchemy as sa

from ireval_core.cli import main
from ireval_core.errors import NotAllowedError
from ireval_core.workspace import (
    ANONYMOUS,
    BEFORE_SIGN_IN,
    OPERATOR,
    SCHEMA_VERSION,
    Actor,
    FileRounds,
    Target,
    Workspace,
    resolve_url,
)
from ireval_core.workspace._schema import migrate

QRELS = b"q1 0 d1 2\nq1 0 d2 0\n"
RUN = b"q1 Q0 d1 1 2.5 bm25\nq1 Q0 d2 2 1.5 bm25\n"
LABELS = b"round,query,doc,position,label\n2026-10,q1,d1,1,2\n"
LABELS_2 = b"round,query,doc,position,label\n2026-11,q1,d1,1,1\n"

ADA = Actor("ada@example.org", "Ada Admin")
VIC = Actor("vic@example.org", "Vic Viewer")
RAY = Actor("ray@example.org", "Ray Rater")
EDD = Actor("Edd@Example.org", "Edd Editor")


def sql(url: str, statement: str, **params: object) -> list[tuple[object, ...]]:
    """Run one statement with an engine of its own (not the workspace's); its rows."""
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.begin() as conn:
            result = conn.execute(sa.text(statement), params)
            return [tuple(r) for r in result.all()] if result.returns_rows else []
    finally:
        engine.dispose()


def team(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ada signs in first as the admin ``IREVAL_ADMINS`` names, and gives the others
    their roles."""
    monkeypatch.setenv("IREVAL_ADMINS", " someone@else.org , ADA@example.org")
    monkeypatch.delenv("IREVAL_DEFAULT_ROLE", raising=False)
    assert ws.sign_in(ADA) == "admin"
    for person, role in ((VIC, "viewer"), (RAY, "rater"), (EDD, "editor")):
        assert ws.sign_in(person) is None  # no access until added
        member = ws.set_role(person.email, role, actor=ADA, name=person.name)
        assert member is not None and (member.role, member.added_by) == (role, ADA.email)


def test_local_mode_keeps_todays_behaviour(ws: Workspace) -> None:
    """Without members the anonymous local user does everything under typed names, and
    each write is in the log, attributed to the typed name."""
    assert not ws.has_members() and ws.role(ANONYMOUS) == "admin"
    info = ws.save_dataset([("qrels", "q.txt", QRELS)], name="d", saved_by="ana")
    note = ws.add_note(info.id, Target.dataset(), "looks fine", author="bo")
    assert (info.saved_by, note.author, info.project) == ("ana", "bo", "default")
    ws.delete_dataset(info.id, confirm=info.short_id)
    log = ws.audit()  # the local user reads the log in local mode
    assert [(e.id, e.action, e.who) for e in log] == [
        (1, "dataset saved", "ana (not signed in)"), (2, "note added", "bo (not signed in)"),
        (3, "dataset deleted", "local user (not signed in)")]
    assert log[0].target == info.id and log[1].prev_hash == log[0].hash
    assert ws.verify_audit().intact


def test_first_sign_in(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("IREVAL_ADMINS", "ada@example.org")
    monkeypatch.delenv("IREVAL_DEFAULT_ROLE", raising=False)
    assert ws.sign_in(VIC) is None and not ws.has_members()
    assert ws.sign_in(ADA) == "admin" and ws.has_members()
    monkeypatch.setenv("IREVAL_DEFAULT_ROLE", "viewer")
    assert ws.sign_in(VIC) == "viewer" and ws.role(VIC) == "viewer"
    ws.set_role(VIC.email, "editor", actor=ADA)
    assert ws.sign_in(VIC) == "editor"  # a member keeps their role
    assert [e.action for e in ws.audit(actor=OPERATOR)] == [
        "member added", "member added", "role changed"]
    monkeypatch.setenv("IREVAL_DEFAULT_ROLE", "admin")
    with pytest.raises(Exception, match=r"^IREVAL_DEFAULT_ROLE is 'admin': set it to "
                       r"'viewer' or leave it unset"):
        ws.sign_in(RAY)


def test_each_role_does_what_it_may_and_nothing_more(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    team(ws, monkeypatch)
    files = [("labels", "l.csv", LABELS)]
    rounds = {"l.csv": FileRounds(("2026-10",), 1)}
    with pytest.raises(NotAllowedError, match=re.escape(
            "vic@example.org may not save a dataset in project 'default': that needs the "
            "role editor or above, and they are a viewer there (an admin of the project "
            "can change it)")) as refused:
        ws.save_dataset(files, name="set", rounds=rounds, actor=VIC)
    assert (refused.value.role, refused.value.needed) == ("viewer", "editor")
    with pytest.raises(NotAllowedError, match="may not save a dataset"):
        ws.save_dataset(files, name="set", rounds=rounds, actor=RAY)
    with pytest.raises(NotAllowedError, match="only a signed-in person may read or write"):
        ws.save_dataset(files, name="set", rounds=rounds, saved_by="ana")
    info = ws.save_dataset(files, name="set", saved_by="typed name", rounds=rounds, actor=EDD)
    assert info.saved_by == "Edd Editor <edd@example.org>"  # never the typed name

    more = [("labels", "l2.csv", LABELS_2)]
    more_rounds = {"l2.csv": FileRounds(("2026-11",), 1)}
    with pytest.raises(NotAllowedError, match="vic@example.org may not add labeling rounds"):
        ws.add_to_dataset(info.id, more, rounds=more_rounds, actor=VIC)
    with pytest.raises(NotAllowedError, match="ray@example.org may not add files to a "
                       "dataset"):
        ws.add_to_dataset(info.id, [("run", "r.txt", RUN)],
                          rounds={"r.txt": FileRounds((), 2)}, actor=RAY)
    grown = ws.add_to_dataset(info.id, more, rounds=more_rounds, actor=RAY)
    assert ws.versions(grown.id, actor=VIC)[-1].saved_by == "Ray Rater <ray@example.org>"

    with pytest.raises(NotAllowedError, match="ray@example.org may not record a decision"):
        ws.add_note(info.id, Target.dataset(), "ship it", kind="decision", actor=RAY)
    decision = ws.add_note(info.id, Target.dataset(), "ship it", kind="decision",
                           author="someone", actor=EDD)
    assert decision.author == "Edd Editor <edd@example.org>"

    with pytest.raises(NotAllowedError, match="edd@example.org may not delete a dataset"):
        ws.delete_dataset(info.id, confirm=info.short_id, actor=EDD)
    with pytest.raises(NotAllowedError, match="may not list the members"):
        ws.members(actor=EDD)
    with pytest.raises(NotAllowedError, match="may not set roles"):
        ws.set_role(VIC.email, "admin", actor=EDD)
    with pytest.raises(NotAllowedError, match="ada@example.org is the last admin"):
        ws.set_role(ADA.email, "editor", actor=ADA)
    assert [(m.email, m.role) for m in ws.members(actor=ADA)] == [
        ("ada@example.org", "admin"), ("edd@example.org", "editor"),
        ("ray@example.org", "rater"), ("vic@example.org", "viewer")]
    ws.delete_dataset(info.id, confirm=info.short_id, actor=ADA)
    assert ws.set_role(VIC.email, None, actor=ADA) is None and ws.role(VIC) is None
    log = ws.audit(actor=OPERATOR)
    actions = [(e.action, e.actor_email) for e in log][4:]  # after the team's set-up
    assert actions == [("dataset saved", EDD.email), ("version added", RAY.email),
                       ("decision recorded", EDD.email), ("dataset deleted", ADA.email),
                       ("role changed", ADA.email)]
    assert ws.verify_audit(actor=OPERATOR).intact


def test_a_person_has_a_role_per_project(ws: Workspace, monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    team(ws, monkeypatch)
    with pytest.raises(NotAllowedError, match="may not create a project"):
        ws.create_project("search", actor=EDD)
    ws.create_project("search", actor=ADA)
    ws.set_role(VIC.email, "editor", actor=ADA, project="search")
    assert [p.name for p in ws.projects()] == ["default", "search"]
    assert (ws.role(VIC), ws.role(VIC, "search"), ws.role(EDD, "search")) == (
        "viewer", "editor", None)
    info = ws.save_dataset([("run", "r.txt", RUN)], name="s", actor=VIC, project="search")
    assert info.project == "search" and ws.get_dataset(info.id, actor=VIC).project == "search"
    home = ws.save_dataset([("qrels", "q.txt", QRELS)], name="h", actor=EDD)
    assert [d.name for d in ws.list_datasets(actor=EDD)] == ["h"]  # not a member of search
    assert [d.name for d in ws.list_datasets(actor=VIC)] == ["h", "s"]
    assert ws.list_datasets(actor=ANONYMOUS) == []  # team mode: not signed in, no access
    assert ws.list_datasets(actor=EDD, project="search") == []
    assert ws.list_datasets(actor=VIC, project="search") == [ws.get_dataset(info.id, actor=VIC)]
    assert ws.list_datasets(actor=VIC) == [home, ws.get_dataset(info.id, actor=VIC)]
    ws.add_note(info.id, Target.query("q1"), "odd", actor=VIC)
    with pytest.raises(NotAllowedError, match="in project 'search'"):
        ws.add_note(info.id, Target.query("q1"), "odd", actor=EDD)
    with pytest.raises(ValueError, match="the name of a project"):
        ws.save_dataset([("run", "r.txt", RUN)], name="s", actor=VIC, project="nope")


READERS = {"viewer": VIC, "rater": RAY, "editor": EDD, "admin": ADA}


def test_reads_need_a_role_in_the_project(ws: Workspace, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """Every read of a dataset (its record, a version, its files, versions, notes; the
    lists) is refused to a person without a role in its project and to anyone not signed
    in once the workspace has members; each role reads."""
    team(ws, monkeypatch)
    ws.create_project("search", actor=ADA)
    ws.set_role(EDD.email, "editor", actor=ADA, project="search")
    info = ws.save_dataset([("qrels", "q.txt", QRELS), ("run", "r.txt", RUN)], name="s",
                           actor=EDD, project="search")
    ws.add_note(info.id, Target.query("q1"), "odd", actor=EDD)
    home = ws.save_dataset([("qrels", "q.txt", QRELS)], name="h", actor=EDD)
    reads = {"get_dataset": lambda who: ws.get_dataset(info.short_id, actor=who),
             "a version": lambda who: ws.get_dataset(info.id, 1, actor=who),
             "find_dataset": lambda who: ws.find_dataset(info.id, actor=who),
             "files": lambda who: ws.files(info.id, actor=who),
             "read_file": lambda who: ws.read_file(info.id, 1, actor=who),
             "versions": lambda who: ws.versions(info.id, actor=who),
             "notes": lambda who: ws.notes(info.id, actor=who)}
    for who in (VIC, RAY, ANONYMOUS, Actor("out@example.org", "Outsider")):
        for what, read in reads.items():
            with pytest.raises(NotAllowedError, match="may not read the datasets") as no:
                read(who)
            assert no.value.needed == "viewer", what
        assert info.id not in [d.id for d in ws.list_datasets(actor=who)]
        assert [n.text for n in ws.notes(actor=who)] == []  # every dataset's: none of s
    ws.set_role(VIC.email, "viewer", actor=ADA, project="search")
    assert ws.read_file(info.id, 1, actor=VIC) == RUN
    assert [n.text for n in ws.notes(actor=VIC)] == ["odd"]
    for role, who in READERS.items():  # the default project: every role reads
        assert ws.get_dataset(home.id, actor=who).name == "h", role
        assert ws.read_file(home.id, 0, actor=who) == QRELS, role


def scripted_day(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> int:
    """A day of team work; the number of rows it logs."""
    team(ws, monkeypatch)
    info = ws.save_dataset([("labels", "l.csv", LABELS)], name="month", actor=EDD,
                           rounds={"l.csv": FileRounds(("2026-10",), 1)})
    ws.add_to_dataset(info.id, [("labels", "l2.csv", LABELS_2)], actor=RAY,
                      rounds={"l2.csv": FileRounds(("2026-11",), 1)})
    note = ws.add_note(info.id, Target.query("q1"), "d1 is a duplicate", actor=EDD)
    ws.add_note(info.id, Target.query("q1"), "d1 is a near duplicate", actor=EDD,
                supersedes=note.id)
    ws.add_note(info.id, Target.dataset(), "keep the new labels", kind="decision", actor=EDD)
    other = ws.save_dataset([("run", "r.txt", RUN)], name="scratch", actor=EDD)
    ws.delete_dataset(other.id, confirm=other.id, actor=ADA)
    ws.set_role(VIC.email, "rater", actor=ADA)
    return len(ws.audit(actor=OPERATOR))


def cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stderr(err):
        status = main(list(args), out=out)
    return status, out.getvalue(), err.getvalue()


def test_the_chain_verifies_and_names_an_edited_row(
        ws: Workspace, url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = scripted_day(ws, monkeypatch)
    assert rows == 12 and ws.verify_audit(actor=OPERATOR).intact
    status, out, _ = cli("workspace", "--url", url, "audit", "--verify")
    assert (status, out) == (0, f"audit log intact: 12 rows in {ws.url}\n")
    status, out, _ = cli("workspace", "--url", url, "audit")
    lines = out.splitlines()
    assert lines[0] == "row\tat\twho\taction\tproject\ttarget\tdetail" and len(lines) == 13
    assert lines[5].split("\t")[2:4] == ["Edd Editor <edd@example.org>", "dataset saved"]
    status, out, _ = cli("workspace", "--url", url, "audit", "--since", "2999-01-01")
    assert (status, out.count("\n")) == (0, 1)
    status, out, err = cli("workspace", "--url", url, "audit", "--since", "yesterday")
    assert (status, out) == (2, "") and err.startswith(
        "The 'since' parameter of Workspace.audit must be None, a datetime or an ISO 8601 "
        "date or time")

    sql(url, "UPDATE audit_log SET actor_email = 'vic@example.org' WHERE id = 7")
    check = ws.verify_audit(actor=OPERATOR)
    assert (check.intact, check.broken_row, check.reason) == (
        False, 7, "row 7 was changed: its content no longer matches its hash")
    status, _, err = cli("workspace", "--url", url, "audit", "--verify")
    assert status == 1
    assert err == (f"audit log broken at row 7 in {ws.url}: row 7 was changed: its content "
                   "no longer matches its hash\n")


def test_the_chain_names_a_removed_row(ws: Workspace, url: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    rows = scripted_day(ws, monkeypatch)
    last = sql(url, f"SELECT * FROM audit_log WHERE id = {rows}")[0]
    sql(url, f"DELETE FROM audit_log WHERE id = {rows}")
    check = ws.verify_audit(actor=OPERATOR)
    assert (check.broken_row, check.reason) == (
        rows, f"row {rows} was removed: the log ends at row {rows - 1} but {rows} rows "
              "were written")
    assert cli("workspace", "--url", url, "audit", "--verify")[0] == 1
    sql(url, "INSERT INTO audit_log VALUES (:a, :b, :c, :d, :e, :f, :g, :h, :i, :j)",
        **dict(zip("abcdefghij", last, strict=True)))
    assert ws.verify_audit(actor=OPERATOR).intact  # put back as it was: intact again
    sql(url, "DELETE FROM audit_log WHERE id = 4")
    check = ws.verify_audit(actor=OPERATOR)
    assert (check.broken_row, check.reason) == (4, "row 4 was removed: row 5 follows row 3")


def make_v3_workspace(url: str) -> tuple[str, str]:
    """A workspace as ireval with schema version 3 (before projects and the log) left it:
    the schema its migrations build, rows written with plain SQL as that code wrote them:
    a dataset of two versions, a note, its edit and a decision. Its id and blob hash."""
    if url.startswith("sqlite"):
        Path(resolve_url(url).database or "").parent.mkdir(parents=True, exist_ok=True)
    dataset = "e" * 64
    sha = "a" * 64
    t = [datetime(2026, 10, d, 9, 30, tzinfo=UTC) for d in (1, 2, 3, 4, 5)]
    engine = sa.create_engine(resolve_url(url))
    try:
        with engine.begin() as conn:
            migrate(conn, engine.dialect.name, url, target=3)
            run = conn.execute
            run(sa.text("INSERT INTO blobs VALUES (:s, 3, 3, 1, :t)"), {"s": sha, "t": t[0]})
            run(sa.text("INSERT INTO blob_chunks VALUES (:s, 0, 'raw', :d)"),
                {"s": sha, "d": b"abc"})
            run(sa.text("INSERT INTO datasets VALUES (:i, 'october', '', 'ana', :t)"),
                {"i": dataset, "t": t[0]})
            for position, name in enumerate(("l.csv", "l2.csv")):
                run(sa.text("INSERT INTO dataset_files VALUES (:i, :p, 'labels', :n, :s)"),
                    {"i": dataset, "p": position, "n": name, "s": sha})
            for version, who, when in ((1, "ana", t[0]), (2, "bo", t[2])):
                run(sa.text("INSERT INTO dataset_versions VALUES (:i, :v, :t, :w, '')"),
                    {"i": dataset, "v": version, "t": when, "w": who})
            for version, position in ((1, 0), (2, 0), (2, 1)):
                run(sa.text("INSERT INTO version_files VALUES (:i, :v, :p, :a, NULL, NULL)"),
                    {"i": dataset, "v": version, "p": position, "a": version == 2 and
                     position == 1})
            for kind, text, who, when, old in (("note", "odd", "cy", t[1], None),
                                               ("note", "odder", "cy", t[3], 1),
                                               ("decision", "ship", "di", t[4], None)):
                run(sa.text("INSERT INTO notes (dataset_id, target_kind, target_key, kind, "
                            "text, author, created_at, supersedes) VALUES (:i, 'dataset', "
                            "'', :k, :x, :w, :t, :o)"),
                    {"i": dataset, "k": kind, "x": text, "w": who, "t": when, "o": old})
    finally:
        engine.dispose()
    return dataset, sha


def test_a_workspace_of_schema_3_is_migrated_keeping_every_row(
        url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset, _ = make_v3_workspace(url)
    before = {t: sql(url, f"SELECT * FROM {t}") for t in (
        "blobs", "blob_chunks", "dataset_files", "dataset_versions", "version_files",
        "notes")}
    with Workspace.open(url) as ws:
        assert ws.schema_version == SCHEMA_VERSION == 4
        for table, rows in before.items():
            assert sql(url, f"SELECT * FROM {table}") == rows, table
        info = ws.get_dataset(dataset)
        assert (info.name, info.saved_by, info.project, info.latest_version) == (
            "october", "ana", "default", 2)
        assert [n.author for n in ws.notes(dataset)] == ["cy", "di"]
        log = ws.audit(actor=OPERATOR)
        assert [(e.action, e.who, e.at[:10]) for e in log] == [
            ("dataset saved", BEFORE_SIGN_IN, "2026-10-01"),
            ("note added", BEFORE_SIGN_IN, "2026-10-02"),
            ("version added", BEFORE_SIGN_IN, "2026-10-03"),
            ("note added", BEFORE_SIGN_IN, "2026-10-04"),
            ("decision recorded", BEFORE_SIGN_IN, "2026-10-05")]
        assert ws.verify_audit(actor=OPERATOR).intact and not ws.has_members()
        ws.add_note(dataset, Target.dataset(), "after", author="ana")  # local mode still
        team(ws, monkeypatch)
        ws.add_note(dataset, Target.dataset(), "signed", actor=EDD)
        assert len(ws.audit(actor=OPERATOR)) == 11 and ws.verify_audit(actor=OPERATOR).intact


FIXTURE = Path(__file__).resolve().parent / "fixtures" / "workspace_v3.sql"


def test_a_file_written_by_the_schema_3_code_is_migrated(tmp_path: Path) -> None:
    """``fixtures/workspace_v3.sql``: the dump of a SQLite workspace that the code of
    schema version 3 wrote (two datasets, one grown to a second version, a note, its edit
    and a decision), made a file again and opened by this code."""
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(FIXTURE.read_text(encoding="utf-8"))
    conn.close()
    before = {t: sql(f"sqlite:///{path}", f"SELECT * FROM {t}") for t in (
        "datasets", "dataset_files", "dataset_versions", "version_files", "notes",
        "blob_chunks")}
    with Workspace.open(str(path)) as ws:
        assert ws.schema_version == 4
        for table, rows in before.items():
            now = sql(f"sqlite:///{path}", f"SELECT * FROM {table}")
            assert [r[:len(rows[0])] for r in now] == rows, table  # datasets: + project_id
        baseline, labels = sorted(ws.list_datasets(), key=lambda d: d.name)
        assert ws.read_file(baseline.id, 1).startswith(b"q1 Q0 d1 1 2.5 bm25")
        assert [v.saved_by for v in ws.versions(labels.id)] == ["bo", "cy"]
        assert labels.rounds == ("2026-09", "2026-10") and labels.project == "default"
        assert [(n.author, n.kind) for n in ws.notes(baseline.id)] == [
            ("bo", "note"), ("di", "decision")]
        log = ws.audit(actor=OPERATOR)
        assert [(e.action, e.who) for e in log] == [
            ("dataset saved", BEFORE_SIGN_IN), ("dataset saved", BEFORE_SIGN_IN),
            ("version added", BEFORE_SIGN_IN), ("note added", BEFORE_SIGN_IN),
            ("note added", BEFORE_SIGN_IN), ("decision recorded", BEFORE_SIGN_IN)]
        assert [e.target for e in log[:3]] == [baseline.id, labels.id, labels.id]
        assert ws.verify_audit(actor=OPERATOR).intact


def test_concurrent_writers_keep_one_chain(ws: Workspace, url: str,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Four sessions (each its own Workspace, its own connections) write notes at once:
    the log has every write once, numbered without a gap, and its chain verifies."""
    import threading

    team(ws, monkeypatch)
    info = ws.save_dataset([("qrels", "q.txt", QRELS)], name="d", actor=EDD)
    errors: list[BaseException] = []

    def session(i: int) -> None:
        try:
            with Workspace.open(url) as mine:
                for j in range(5):
                    mine.add_note(info.id, Target.query(f"q{i}"), f"note {j}", actor=EDD)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=session, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    log = ws.audit(actor=OPERATOR)
    assert [e.id for e in log] == list(range(1, 26))  # 4 set-up + 1 save + 20 notes
    assert sorted(e.target for e in log if e.action == "note added") == sorted(
        f"note {n.id}" for n in ws.notes(info.id, actor=EDD))
    assert ws.verify_audit(actor=OPERATOR).intact


def test_admins_list_makes_an_admin_only_while_there_is_none(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """``IREVAL_ADMINS`` makes an admin of the default project only while it has none: a
    person added to the list later (or named by another server's list) signs in as
    anyone else does, and keeps the role they have; on a workspace whose people all joined
    as viewers, a listed person who signs in becomes its admin."""
    monkeypatch.setenv("IREVAL_DEFAULT_ROLE", "viewer")
    monkeypatch.setenv("IREVAL_ADMINS", "")
    assert ws.sign_in(VIC) == "viewer" and ws.sign_in(RAY) == "viewer"
    monkeypatch.setenv("IREVAL_ADMINS", "ray@example.org")  # no admin yet: Ray becomes it
    assert ws.sign_in(RAY) == "admin" and ws.role(RAY) == "admin"
    assert [(m.email, m.role, m.added_by) for m in ws.members(actor=RAY)] == [
        ("ray@example.org", "admin", "IREVAL_ADMINS"), ("vic@example.org", "viewer",
                                                        "IREVAL_DEFAULT_ROLE")]
    monkeypatch.setenv("IREVAL_ADMINS", "ray@example.org, vic@example.org, ada@example.org")
    assert ws.sign_in(VIC) == "viewer"  # a member keeps their role: Ray is the admin
    assert ws.sign_in(ADA) == "viewer"  # a newcomer joins as anyone else does
    monkeypatch.delenv("IREVAL_DEFAULT_ROLE")
    assert ws.sign_in(Actor("nia@example.org")) is None
    monkeypatch.setenv("IREVAL_ADMINS", "nia@example.org")
    assert ws.sign_in(Actor("nia@example.org")) is None and ws.role(VIC) == "viewer"
    log = [(e.action, e.target, e.detail) for e in ws.audit(actor=RAY)]
    assert log == [
        ("member added", VIC.email, '{"by":"IREVAL_DEFAULT_ROLE","role":"viewer"}'),
        ("member added", RAY.email, '{"by":"IREVAL_DEFAULT_ROLE","role":"viewer"}'),
        ("role changed", RAY.email, '{"by":"IREVAL_ADMINS","from":"viewer","to":"admin"}'),
        ("member added", ADA.email, '{"by":"IREVAL_DEFAULT_ROLE","role":"viewer"}')]


def test_only_admins_read_the_audit_log(ws: Workspace, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    """The log is the admins' (each reads the rows of the projects they administer), the
    local user's in local mode and the command line's (:data:`OPERATOR`); anyone else is
    refused, the chain's check too."""
    ws.save_dataset([("qrels", "q.txt", QRELS)], name="local", saved_by="ana")
    assert len(ws.audit()) == 1 and ws.verify_audit().intact  # local mode: the local user
    team(ws, monkeypatch)
    ws.create_project("search", actor=ADA)
    ws.set_role(EDD.email, "admin", actor=ADA, project="search")
    ws.save_dataset([("run", "r.txt", RUN)], name="s", actor=EDD, project="search")
    for who in (VIC, RAY, ANONYMOUS, Actor("out@example.org")):
        with pytest.raises(NotAllowedError, match="may not read the audit log") as no:
            ws.audit(actor=who)
        assert no.value.needed == "admin"
        with pytest.raises(NotAllowedError, match="may not read the audit log"):
            ws.verify_audit(actor=who)
    every = ws.audit(actor=OPERATOR)
    assert ws.audit(actor=ADA) == every  # admin of both projects
    assert {e.project for e in ws.audit(actor=EDD)} == {"search"}  # admin of search only
    assert ws.verify_audit(actor=EDD).rows == len(every)


def test_a_person_saves_where_they_are_an_editor_and_reads_both(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    """Vic is an editor in ``search`` and a viewer in ``default``: the workspace offers
    only ``search`` to save into, refuses a save into ``default`` (nothing written), and
    lists the datasets of both with their project."""
    assert ws.projects_allowing(ANONYMOUS) == ["default"]  # local mode: the local user's
    team(ws, monkeypatch)
    ws.create_project("search", actor=ADA)
    ws.set_role(VIC.email, "editor", actor=ADA, project="search")
    assert ws.projects_allowing(VIC) == ["search"]
    assert ws.projects_allowing(VIC, "viewer") == ["default", "search"]
    assert ws.projects_allowing(ADA) == ["default", "search"]
    assert ws.projects_allowing(EDD) == ["default"] and ws.projects_allowing(ANONYMOUS) == []
    home = ws.save_dataset([("qrels", "q.txt", QRELS)], name="home", actor=EDD)
    rows = len(ws.audit(actor=OPERATOR))
    with pytest.raises(NotAllowedError, match="may not save a dataset in project 'default'"):
        ws.save_dataset([("run", "r.txt", RUN)], name="mine", actor=VIC)
    assert len(ws.audit(actor=OPERATOR)) == rows
    mine = ws.save_dataset([("run", "r.txt", RUN)], name="mine", actor=VIC, project="search")
    assert [(d.name, d.project) for d in ws.list_datasets(actor=VIC)] == [
        ("mine", "search"), ("home", "default")]
    assert [d.id for d in ws.list_datasets(actor=EDD)] == [home.id]
    assert mine.project == "search"
    with pytest.raises(ValueError, match="'needed' parameter"):
        ws.projects_allowing(VIC, "boss")


def test_the_cli_saves_into_a_project(ws: Workspace, url: str, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """``workspace save --project``: into the project named, as the local user of a
    workspace without members; a project that does not exist, and any save once the
    workspace has members, refused (exit 2, one line), nothing written."""
    (tmp_path / "q.txt").write_bytes(QRELS)
    (tmp_path / "r.txt").write_bytes(RUN)
    files = ["--qrels", str(tmp_path / "q.txt"), "--run", str(tmp_path / "r.txt")]
    ws.create_project("search", actor=ANONYMOUS)
    status, out, _ = cli("workspace", "--url", url, "save", "--name", "cli set", "--by",
                         "ana", "--project", "search", *files)
    [info] = ws.list_datasets(project="search")
    assert (status, out) == (0, f"{info.short_id}\tcli set\tproject search\n")
    assert (info.saved_by, [f.name for f in info.files]) == ("ana", ["q.txt", "r.txt"])
    status, _, err = cli("workspace", "--url", url, "save", "--name", "x", "--by", "ana",
                         "--project", "nope", "--run", str(tmp_path / "r.txt"))
    assert status == 2 and "the name of a project (default, search)" in err
    team(ws, monkeypatch)
    rows = len(ws.audit(actor=OPERATOR))
    status, _, err = cli("workspace", "--url", url, "save", "--name", "y", "--by", "ana",
                         "--run", str(tmp_path / "r.txt"))
    assert status == 2 and "only a signed-in person may read or write it" in err
    assert len(ws.audit(actor=OPERATOR)) == rows
