"""AppTest of the app with a workspace that cannot be used (issue 23, item 6).

The workspace is an optional part of every page: with a truncated SQLite file, a file of
garbage bytes, a path where the file cannot be created, or PostgreSQL stopped, every page
still does what needs no workspace (the sample, uploads with their summary and checks,
the results pages, the labeling pages), and says in one message what is wrong, where
(the file, or the URL without its password) and what to do. Never a traceback, never
the password. PostgreSQL stopped and started again: a later run works again, without
restarting the app.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
from pg import PostgresServer, own_postgres_server  # noqa: F401  (the fixture)
from streamlit.testing.v1 import AppTest

from ireval_app import state, widgets, workspace_glue
from ireval_app.keys import data as data_keys
from ireval_app.keys import labels_data as labels_keys
from ireval_core import read_qrels, read_runs
from ireval_core.evaluate import evaluate
from ireval_core.workspace import Target, Workspace, WorkspaceError

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"
SECRET = "s3cret"  # the password of every PostgreSQL URL here: it must never be shown

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")

SAMPLE_FILES = [("qrels", "qrels.txt", (SAMPLE / "qrels.txt").read_bytes()),
                ("run", "run_bm25.txt", (SAMPLE / "run_bm25.txt").read_bytes()),
                ("run", "run_neural.txt", (SAMPLE / "run_neural.txt").read_bytes())]


@dataclass(frozen=True)
class Broken:
    """A workspace that cannot be used: its setting, the place and the fix the page names."""

    url: str
    place: str
    fix: str


def _saved_workspace(path: Path) -> None:
    """A valid workspace file with one dataset, closed (no WAL file beside it)."""
    ws = Workspace.open(str(path))
    ws.save_dataset(SAMPLE_FILES, name="November round", saved_by="ana")
    ws.close()
    for extra in ("-wal", "-shm"):
        Path(f"{path}{extra}").unlink(missing_ok=True)


def _truncated(tmp_path: Path) -> Broken:
    path = tmp_path / "workspace.db"
    _saved_workspace(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    return Broken(str(path), f"the SQLite file {path}", "Restore the file from a backup")


def _garbage(tmp_path: Path) -> Broken:
    path = tmp_path / "workspace.db"
    path.write_bytes(random.Random(23).randbytes(64 * 1024))
    return Broken(str(path), f"the SQLite file {path}", "Restore the file from a backup")


def _unwritable(tmp_path: Path) -> Broken:
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    path = folder / "workspace.db"
    if os.access(folder, os.W_OK):  # root writes in a read-only folder: a path under a file
        path = Path("/dev/null/workspace.db")
    try:
        Workspace.open(str(path)).close()
    except WorkspaceError:
        pass
    else:
        pytest.skip(f"{path} can be created here: no unwritable path to try")
    return Broken(str(path), f"the SQLite file {path}", "Set IREVAL_WORKSPACE to a writable path")


def _postgres_refused(tmp_path: Path) -> Broken:
    return Broken(f"postgresql://u:{SECRET}@127.0.0.1:1/db",
                  "PostgreSQL at postgresql+psycopg://u:***@127.0.0.1:1/db",
                  "Check that PostgreSQL is running at 127.0.0.1:1")


BROKEN = {"truncated": _truncated, "garbage": _garbage, "unwritable": _unwritable,
          "postgres_refused": _postgres_refused}


@pytest.fixture(params=sorted(BROKEN))
def broken(request, tmp_path, monkeypatch) -> Broken:
    case = BROKEN[request.param](tmp_path)
    monkeypatch.setenv("IREVAL_WORKSPACE", case.url)
    yield case
    if (tmp_path / "read-only").exists():
        (tmp_path / "read-only").chmod(0o755)


# ----------------------------------------------------------------------------- helpers

_KINDS = ("title", "subheader", "markdown", "caption", "warning", "error", "info", "success",
          "toast", "code", "exception")


def _texts(at: AppTest) -> list[str]:
    """Every text the page shows (Markdown source), and the values of its URL."""
    out = [str(getattr(e, "value", "")) for kind in _KINDS for e in at.get(kind)]
    return out + [str(v) for v in at.query_params.values()]


def _plain(text: str) -> str:
    """Markdown source as read: escapes and the address-splitting spans taken out."""
    return text.replace(":small[]", "").replace("\\", "")


def _problem_messages(at: AppTest, place: str) -> list[str]:
    return [_plain(w.value) for w in (*at.warning, *at.error) if place in _plain(w.value)]


def _check(at: AppTest, place: str | None = None, fix: str | None = None) -> None:
    """No exception, no red box, no password; with ``place``: one message naming the
    place and the fix."""
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert not any(SECRET in t for t in _texts(at))
    if place is not None:
        messages = _problem_messages(at, place)
        assert len(messages) == 1, messages
        assert fix is not None and fix in messages[0], messages[0]


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _p10(*runs: str) -> dict[str, float]:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    res = evaluate(qrels, [r for name in runs for r in read_runs(SAMPLE / name)], ["P@10"])
    return {s: res.mean(s, "P@10") for s in res.systems}


def _assert_p10(at: AppTest, expected: dict[str, float]) -> None:
    shown = at.table[0].value
    assert sorted(shown.index) == sorted(expected)
    for system, p10 in expected.items():
        assert shown.loc[system, "P@10"].startswith(f"{p10:.4f}")


def _upload(at: AppTest, runs: tuple[str, ...] = ("run_bm25.txt", "run_neural.txt")) -> None:
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(
        ("my.qrels", (SAMPLE / "qrels.txt").read_bytes(), "text/plain"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(
        [(name, (SAMPLE / name).read_bytes(), "text/plain") for name in runs])
    at.run()


def _app() -> AppTest:
    return AppTest.from_file(APP, default_timeout=90)


# ----------------------------------------------------------------------------- a broken workspace


def test_the_data_page_draws_the_sample_and_says_what_is_wrong(broken: Broken) -> None:
    at = _app().run()
    _check(at)  # the sample needs no workspace: nothing about it
    assert _metrics(at)["Queries in qrels"] == "59"
    at.radio(key=state.SOURCE).set_value("saved").run()
    _check(at, broken.place, broken.fix)
    assert "redacted" not in " ".join(_texts(at))


def test_an_upload_draws_its_summary_and_checks(broken: Broken) -> None:
    at = _app().run()
    _upload(at)
    _check(at, broken.place, broken.fix)
    [message] = _problem_messages(at, broken.place)
    assert message.startswith("Not saved: a reload of the page loses these files.")
    assert _metrics(at)["Queries in qrels"] == "59" and _metrics(at)["Runs"] == "2"
    assert [s.value for s in at.subheader] == ["Files", "Qrels", "Runs", "Checks"]
    assert at.dataframe[2].value["run"].tolist() == ["bm25", "neural_rerank"]  # the checks
    at.switch_page("pages/metrics.py").run()  # the upload is evaluated
    _check(at)
    _assert_p10(at, _p10("run_bm25.txt", "run_neural.txt"))


def test_results_pages_and_a_link_to_a_saved_dataset(broken: Broken) -> None:
    at = _app()
    at.switch_page("pages/metrics.py").run()  # the sample: no workspace needed, none named
    _check(at)
    _assert_p10(at, _p10("run_bm25.txt", "run_neural.txt", "run_narrow.txt"))
    linked = _app()  # a link to a saved dataset: a note, and the page with the sample
    linked.query_params["ds"] = "0123456789ab"
    linked.switch_page("pages/metrics.py").run()
    _check(linked)
    [note] = _problem_messages(linked, broken.place)
    assert note.startswith("Not applied: ds=0123456789ab") and broken.fix in note
    _assert_p10(linked, _p10("run_bm25.txt", "run_neural.txt", "run_narrow.txt"))
    linked.switch_page("pages/queries.py").run()  # still noted while the sample stands in
    assert not linked.exception and len(_problem_messages(linked, broken.place)) == 1


def test_the_labeling_pages_work_with_uploads(broken: Broken) -> None:
    at = _app()
    at.query_params["source"] = "saved"
    at.switch_page("pages/labels_data.py").run()
    _check(at, broken.place, broken.fix)
    at.radio(key=labels_keys.SOURCE).set_value("upload").run()
    labels = sorted((SAMPLE / "labels").glob("labels_*.csv"))[:2]
    at.file_uploader(key=labels_keys.UPLOADER).set_value(
        [(p.name, p.read_bytes(), "text/csv") for p in labels]).run()
    _check(at, broken.place, broken.fix)
    assert _metrics(at)["Rounds"] == "2"
    at.switch_page("pages/labels_trend.py").run()
    _check(at)
    assert sorted(set(at.dataframe[0].value["round"])) == ["2026-05", "2026-06"]


def test_a_failure_is_tried_again_after_a_few_seconds(tmp_path, monkeypatch) -> None:
    broken = _garbage(tmp_path)
    monkeypatch.setenv("IREVAL_WORKSPACE", broken.url)
    monkeypatch.setattr(workspace_glue, "RETRY_SECONDS", 0.5)
    # the module's clock, stopped: "at once" is at once however slow the machine is
    now = [time.monotonic()]
    monkeypatch.setattr(workspace_glue, "time", SimpleNamespace(monotonic=lambda: now[0]))
    problem = workspace_glue.workspace_or_problem()
    assert isinstance(problem, workspace_glue.WorkspaceProblem)
    assert problem.where == broken.place and problem.reason == "file is not a database"
    Path(broken.url).rename(tmp_path / "broken.db")  # moved away, as the message says
    now[0] += 0.49
    assert workspace_glue.workspace_or_problem() is problem  # not tried again at once
    now[0] += 0.02
    ws = workspace_glue.workspace_or_problem()
    assert isinstance(ws, Workspace) and ws.list_datasets() == []  # a new, empty workspace


def test_no_password_in_a_url_the_workspace_cannot_read(monkeypatch) -> None:
    for url in (f"postgresql://u:{SECRET}@127.0.0.1:notaport/db",
                f"mysql://u:{SECRET}@127.0.0.1/db", f"postgresql://u:p@{SECRET}@127.0.0.1:1/db"):
        monkeypatch.setenv("IREVAL_WORKSPACE", url)
        problem = workspace_glue.workspace_or_problem()
        assert isinstance(problem, workspace_glue.WorkspaceProblem)
        assert SECRET not in problem.message and "IREVAL_WORKSPACE" in problem.fix


@pytest.mark.parametrize(("url", "answer", "fix"), [
    ("{tmp}/ws.db", "unable to open database file",
     "Set IREVAL_WORKSPACE to a writable path, or make the folder {tmp} writable"),
    ("{tmp}/ws.db", "database is locked", "Another program holds the file's write lock"),
    (f"postgresql://ana:{SECRET}@db:5433/ireval",
     f'connection to server at "db", port 5433 failed: FATAL:  password authentication failed '
     f'for user "ana" (password {SECRET})', "Check the user name and password in IREVAL_WORKSPACE"),
    (f"postgresql://ana:{SECRET}@db/ireval", 'FATAL:  database "ireval" does not exist',
     "Create the database ireval at db:5432, or correct its name in IREVAL_WORKSPACE"),
])
def test_each_failure_names_its_fix(url, answer, fix, tmp_path, monkeypatch) -> None:
    """Failures not made for real above (a read-only folder needs a user other than root;
    a refused password, a missing database need a server set up so): the fix named."""
    import sqlite3

    monkeypatch.setenv("IREVAL_WORKSPACE", url.format(tmp=tmp_path))
    try:
        try:
            raise sqlite3.OperationalError(answer)
        except sqlite3.OperationalError as exc:
            raise WorkspaceError("cannot read the schema version in workspace …") from exc
    except WorkspaceError as error:
        problem = workspace_glue.workspace_failed(error)
    assert problem.fix.startswith(fix.format(tmp=tmp_path))
    assert SECRET not in problem.message and problem.reason.startswith(answer[:20])


# ----------------------------------------------------------------------------- PostgreSQL


def test_postgresql_stopped_then_started_again(own_postgres_server: PostgresServer,  # noqa: F811
                                               monkeypatch) -> None:
    server = own_postgres_server
    url = server.new_database().replace("ireval@", f"ireval:{SECRET}@")  # trust: not checked
    monkeypatch.setenv("IREVAL_WORKSPACE", url)
    monkeypatch.setattr(workspace_glue, "RETRY_SECONDS", 1.0)
    with Workspace.open(url) as ws:
        info = ws.save_dataset(SAMPLE_FILES, name="November round", saved_by="ana")
        ws.add_note(info.id, Target.dataset(), "ship neural", author="ana", kind="decision")
    place = f"PostgreSQL at {url.replace(SECRET, '***')}"
    fix = f"Check that PostgreSQL is running at 127.0.0.1:{server.port}"
    both = _p10("run_bm25.txt", "run_neural.txt")

    at = _app()  # a session with the saved dataset open, its notes shown
    at.query_params["ds"] = info.short_id
    at.switch_page("pages/meeting.py").run()
    _check(at)
    assert any("ship neural" in m.value for m in at.markdown)

    server.checkpoint()  # the saved dataset survives the crash below
    server.stop()
    at.run()  # Meeting: the report without the notes, and why
    _check(at, place, fix)
    assert "The notes cannot be read" in _problem_messages(at, place)[0]
    assert not any("ship neural" in m.value for m in at.markdown)
    at.switch_page("pages/queries.py").run()  # the notes panel beside a query
    _check(at, place, fix)
    at.switch_page("pages/compare.py").run()  # the notes panel beside a comparison
    _check(at, place, fix)
    assert at.dataframe  # the comparison is drawn
    at.switch_page("pages/metrics.py").run()  # the loaded dataset stays
    _check(at)
    _assert_p10(at, both)
    at.switch_page(widgets.DATA_PAGE).run()
    _check(at, place, fix)  # Saved datasets: the list cannot be read
    fresh = _app().run()  # a new session: an upload, and a link
    _upload(fresh, ("run_bm25.txt",))
    _check(fresh, place, fix)
    assert _metrics(fresh)["Runs"] == "1"
    linked = _app()
    linked.query_params["ds"] = info.short_id
    linked.switch_page("pages/metrics.py").run()
    assert not linked.exception and len(_problem_messages(linked, place)) == 1

    server.start()
    # a later run opens the workspace again: after RETRY_SECONDS, and once the server
    # accepts connections (on a loaded machine that can take a few seconds more)
    deadline = time.monotonic() + 30
    while True:
        time.sleep(1.1)
        at.run()
        if any(s.key == data_keys.SAVED_PICK for s in at.selectbox):
            break
        assert time.monotonic() < deadline, _problem_messages(at, place)
    _check(at)
    assert at.selectbox(key=data_keys.SAVED_PICK).value == info.id
    at.switch_page("pages/meeting.py").run()
    _check(at)
    assert any("ship neural" in m.value for m in at.markdown)
    again = _app()  # the link works again in a new session
    again.query_params["ds"] = info.short_id
    again.switch_page("pages/metrics.py").run()
    _check(again)
    assert not any("Sample data" in i.value for i in again.info)
    _assert_p10(again, both)
