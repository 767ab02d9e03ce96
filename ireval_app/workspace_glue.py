"""The app's workspace: which database, and moving files between it and the session.

The workspace (:class:`ireval_core.workspace.Workspace`) is opened once per process
(``st.cache_resource``) from, in order: the ``IREVAL_WORKSPACE`` environment variable,
``workspace`` in ``.streamlit/secrets.toml``, or the SQLite file
``data/workspace.db`` beside ``app.py`` (created on first use). A team server sets a
PostgreSQL URL there instead.

The workspace is an optional part of every page: :func:`workspace_or_problem` gives it,
or a :class:`WorkspaceProblem` (what is wrong, where, what to do) when it cannot be
opened or read (a damaged SQLite file, a folder where it cannot be created, PostgreSQL
stopped or unreachable). The page shows the problem in one message and does all that
needs no workspace. A failure is remembered for :data:`RETRY_SECONDS`, then the
workspace is opened again: a server that comes back, or a file moved away, works
without restarting the app. :func:`with_workspace` runs one piece of work on it the
same way.

Who acts: with sign-in configured, every read and write of the workspace names the
signed-in person (:func:`actor`, an :class:`~ireval_core.workspace.Actor`), and the
workspace refuses what their role in the dataset's project does not allow; the pages ask
:func:`may` to draw only the controls the role allows. Without sign-in the actor is the
anonymous local user, who may do everything in a workspace without members (today's
single-person tool).

Nothing here reads widget values; functions take what they need.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import streamlit as st

from ireval_core.errors import FormatError, IrevalError
from ireval_core.workspace import (
    ANONYMOUS,
    DEFAULT_PROJECT,
    ENV_VAR,
    ROLES,
    Actor,
    DatasetInfo,
    DatasetNotFoundError,
    FileInfo,
    Note,
    Target,
    Workspace,
    WorkspaceError,
    dataset_id_from_sha256,
    resolve_url,
)

from . import cache, signin, state

__all__ = ["DEFAULT_PATH", "DEFAULT_PROJECT", "RETRY_SECONDS", "Refused", "WorkspaceProblem",
           "actor",
           "add_note", "admit", "is_admin",
           "dataset_files", "dataset_id", "files_of_kind", "may", "open_dataset",
           "stored_files_of_kind",
           "projects_allowing", "shows_projects", "role",
           "with_workspace", "workspace_failed", "workspace_or_problem", "workspace_url",
           "write"]

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "data" / "workspace.db"
"""The default workspace: a SQLite file in the repository's ``data/`` folder."""


RETRY_SECONDS = 5.0
"""After the workspace failed, it is opened again on the first run this many seconds later
(a run before that shows the same problem at once, without waiting on the database)."""

_SECRETS_SETTING = "`workspace` in .streamlit/secrets.toml"


def workspace_url() -> str:
    """Where the workspace is (URL or file path), see the module docstring."""
    return _configured()[0]


def _configured() -> tuple[str, str]:
    """``(url, the setting that names it)``: the environment variable, the secrets file,
    or (the default file) the environment variable to set."""
    url = os.environ.get(ENV_VAR)
    if url:
        return url, ENV_VAR
    try:
        secret = st.secrets.get("workspace")
    except (FileNotFoundError, OSError):  # no secrets file: the default
        secret = None
    except Exception:  # a malformed secrets file must not stop the app  # noqa: BLE001
        secret = None
    return (str(secret), _SECRETS_SETTING) if secret else (str(DEFAULT_PATH), ENV_VAR)


@st.cache_resource(show_spinner=False)
def _open(url: str) -> Workspace:
    return Workspace.open(url)


# ----------------------------------------------------------------------------- problems


@dataclass(frozen=True)
class WorkspaceProblem:
    """Why the workspace cannot be used now: where it is (a SQLite file's path, or a
    PostgreSQL URL with its password hidden), the reason, and what to do. No field
    holds a password."""

    where: str
    """E.g. ``"the SQLite file /srv/ireval/workspace.db"``, or
    ``"PostgreSQL at postgresql+psycopg://ana:***@db:5432/ireval"``."""
    reason: str
    """What the database or the system answered: ``"database disk image is malformed"``."""
    fix: str
    """What to do: one sentence, without its full stop."""

    @property
    def message(self) -> str:
        """The one message a page shows (plain text)."""
        return (f"The workspace cannot be used: {self.where}: {self.reason}. {self.fix}. "
                "Everything that needs no workspace works as usual; saved datasets, saving "
                "and notes are back once it can be read (tried again every "
                f"{RETRY_SECONDS:g} s).")


_failed: dict[str, tuple[float, WorkspaceProblem]] = {}  # url -> (retry after, problem)
_failed_lock = threading.Lock()


def workspace_or_problem() -> Workspace | WorkspaceProblem:
    """The workspace of this app (one per process, shared by sessions: it is
    thread-safe), or why it cannot be used now.

    A failure (here, or reported by :func:`workspace_failed`) is answered for
    :data:`RETRY_SECONDS`; the first call after that opens the workspace again.
    """
    url = workspace_url()
    with _failed_lock:
        failed = _failed.get(url)
    if failed is not None and time.monotonic() < failed[0]:
        return failed[1]
    try:
        ws = _open(url)
    except Exception as exc:  # noqa: BLE001 - whatever stops it opening, the page goes on
        return workspace_failed(exc)
    with _failed_lock:
        _failed.pop(url, None)
    return ws


def workspace_failed(error: BaseException) -> WorkspaceProblem:
    """The problem to show for ``error``, raised by opening or using the workspace.

    It is remembered for :data:`RETRY_SECONDS`, and the open workspace is let go of, so
    that the next try opens it afresh (a file moved away starts an empty workspace; a
    PostgreSQL server that came back is connected to again).
    """
    url, setting = _configured()
    problem = _problem(url, setting, error)
    with _failed_lock:
        _failed[url] = (time.monotonic() + RETRY_SECONDS, problem)
    _open.clear(url)
    return problem


_T = TypeVar("_T")


def with_workspace(work: Callable[[Workspace], _T]) -> _T | WorkspaceProblem:
    """``work(workspace)``, or the problem when the workspace cannot be opened or
    ``work`` fails with a :class:`~ireval_core.workspace.WorkspaceError`.

    :class:`~ireval_core.workspace.DatasetNotFoundError` (an unknown id: the
    workspace itself is fine) is raised as it is.
    """
    ws = workspace_or_problem()
    if isinstance(ws, WorkspaceProblem):
        return ws
    try:
        return work(ws)
    except DatasetNotFoundError:
        raise
    except WorkspaceError as exc:
        return workspace_failed(exc)


@dataclass(frozen=True)
class Refused:
    """A write the workspace refused: a name or text it does not take, a role that does
    not allow it (:class:`~ireval_core.errors.IrevalError`, ``ValueError`` or
    ``TypeError``), in its own words."""

    message: str


def write(work: Callable[[Workspace], _T]) -> _T | WorkspaceProblem | Refused:
    """:func:`with_workspace` for a write: ``work(workspace)``, the problem when the
    workspace cannot be used, or :class:`Refused` when the write is refused."""
    try:
        return with_workspace(work)
    except (IrevalError, ValueError, TypeError) as exc:
        return Refused(str(exc))


_URL_PASSWORD = re.compile(r"(://[^/:@\s]*):[^\s/]*@")
_CORRUPT = ("malformed", "not a database", "encrypted", "corrupt")


def _hide_password(text: str, password: str | None = None) -> str:
    """``text`` with the password of every ``scheme://user:password@`` in it hidden, and
    ``password`` itself (when known and not too short to be told from other words)."""
    text = _URL_PASSWORD.sub(r"\1:***@", text)
    if password and len(password) >= 4:
        text = text.replace(password, "***")
    return text


def _problem(url: str, setting: str, error: BaseException) -> WorkspaceProblem:
    """What :func:`workspace_failed` shows: the place, the reason, the fix."""
    try:
        parsed = resolve_url(url)
    except Exception:  # noqa: BLE001 - not a URL the workspace takes
        parsed = None
    if (parsed is None or parsed.get_backend_name() not in ("sqlite", "postgresql")
            or "@" in (parsed.host or "")):  # a password with an "@" not written %40
        return WorkspaceProblem(
            f"{setting} is {_hide_password(url)}", "not a SQLite file path or a PostgreSQL URL",
            f"Set {setting} to a SQLite file path or a "
            "postgresql://user:password@host:port/database URL (with @ : / in the password "
            "written %40 %3A %2F)")
    cause = error.__cause__ if isinstance(error, WorkspaceError) else None
    answer = getattr(cause, "orig", None) or cause or error
    text = str(answer).strip()
    reason = _hide_password(text.splitlines()[0] if text else type(answer).__name__,
                            parsed.password)
    low = reason.lower()
    sqlite = parsed.get_backend_name() == "sqlite"
    path = Path(parsed.database or "")
    host = f"{parsed.host or 'localhost'}:{parsed.port or 5432}"
    if "newer than this ireval" in low:
        fix = f"Upgrade ireval, or set {setting} to another workspace"
    elif sqlite and any(word in low for word in _CORRUPT):
        fix = "Restore the file from a backup, or move it away to start an empty workspace"
    elif sqlite and "locked" in low:
        fix = "Another program holds the file's write lock: wait, or stop it"
    elif sqlite:
        fix = f"Set {setting} to a writable path" + (
            f", or make the folder {path.parent} writable" if path.parent.is_dir() else "")
    elif "authentication" in low or "password" in low:
        fix = f"Check the user name and password in {setting}"
    elif "does not exist" in low:
        fix = (f"Create the database {parsed.database} at {host}, or correct its name in "
               f"{setting}")
    else:
        fix = f"Check that PostgreSQL is running at {host} and that this server can reach it"
    where = (f"the SQLite file {path}" if sqlite
             else f"PostgreSQL at {parsed.render_as_string(hide_password=True)}")
    return WorkspaceProblem(where, reason, fix)


def open_dataset(ws: Workspace, dataset_id: str, *, comments: bool = False,
                 version: int | None = None) -> tuple[DatasetInfo, cache.LoadedFiles]:
    """A saved dataset (``version``: one of its versions, ``None`` the newest) and its qrels
    and runs read through the app's cached readers (``comments``: with trec_eval 10.0's
    comment rule, :func:`~ireval_app.cache.reads_comments`).

    The qrels are the qrels file with the documents graded on the Judging page added
    (the version's judging files, :func:`ireval_core.decisions.judging.with_judgments`),
    read as one TREC qrels file named after the qrels file. Files of other kinds
    (labeling files, metadata) are not part of :class:`~ireval_app.cache.LoadedFiles`
    and are left to the pages that use them. The qrels and run files are read out of the
    workspace only when their columns are in neither the shared cache nor the column
    cache (:class:`~ireval_app.cache.StoredFile`); so are the judged qrels, known in the
    column cache by the SHA-256s of the qrels and judging files and
    :data:`~ireval_core.decisions.judging.MERGE_RULE` (:func:`_judged_recipe`,
    :func:`~ireval_app.cache.load_made_qrels`). Raises
    :class:`~ireval_core.workspace.WorkspaceError` when the id is unknown.
    """
    who = actor()
    info = ws.get_dataset(dataset_id, version, actor=who)
    runs: list[tuple[str, bytes | cache.StoredFile]] = []

    def stored(position: int, sha256: str, size: int) -> cache.StoredFile:
        return cache.StoredFile(sha256, size,
                                lambda: ws.read_file(info.id, position, actor=who))

    qrels_file = next((f for f in info.files if f.kind == "qrels"), None)
    judging_files = _judging_files(info.files)
    for f in info.files:
        if f.kind == "run":
            runs.append((f.name, stored(f.position, f.sha256, f.size)))
    qrels = None
    if qrels_file is not None:
        plain = stored(qrels_file.position, qrels_file.sha256, qrels_file.size)
        qrels = (_judged_qrels(ws, info, who, qrels_file, plain, judging_files, comments)
                 if judging_files else cache.load_qrels(qrels_file.name, plain,
                                                        comments=comments))
    return info, cache.LoadedFiles(qrels, cache.load_run_files(runs, comments=comments))


def _judging_files(files: Sequence[FileInfo]) -> list[FileInfo]:
    """The judging files among a dataset's ``files`` (kind ``labels``, named as
    :func:`~ireval_core.decisions.judging.is_judging_file` says), in dataset order."""
    labels = [f for f in files if f.kind == "labels"]
    if not labels:  # the decisions package imports scipy: only when there are labels
        return []
    from ireval_core.decisions import judging

    return [f for f in labels if judging.is_judging_file(f.name)]


def _judged_qrels(ws: Workspace, info: DatasetInfo, who: Actor, qrels_file: FileInfo,
                  plain: cache.StoredFile, judging_files: Sequence[FileInfo],
                  comments: bool) -> cache.LoadedFile:
    """The qrels file with the judging files' judgments merged in, read as one TREC qrels
    file: mapped from the column cache by :func:`_judged_recipe` when it was made before,
    else made (the qrels read, the judgments merged, the text rendered) and read."""
    from ireval_core.decisions import judging

    recipe = _judged_recipe(qrels_file, judging_files, judging.MERGE_RULE)

    def judged_now() -> tuple[cache.LoadedFile, bytes | None]:
        """The qrels file read, and its TREC text with the judgments merged in
        (``None`` without judgments or when the qrels file could not be read)."""
        loaded = cache.load_qrels(qrels_file.name, plain, comments=comments)
        judged: list[judging.Judgment] = []
        for j in judging_files:
            judged += judging.read_judgments_file(
                ws.read_file(info.id, j.position, actor=who), j.name)
        if not judged or loaded.qrels is None:
            return loaded, None
        return loaded, judging.trec_qrels(judging.with_judgments(loaded.qrels, judged))

    def made() -> bytes:
        loaded, text = judged_now()
        if text is None:
            raise loaded.error or FormatError(
                "the judging files hold no judgments any more", source=qrels_file.name)
        return text

    qrels = cache.load_made_qrels(qrels_file.name, recipe, made, comments=comments)
    if qrels is None:
        qrels, text = judged_now()
        if text is not None:
            qrels = cache.load_qrels(qrels.name, text, comments=comments)
            cache.remember_made_qrels(qrels_file.name, recipe, qrels, comments=comments)
    return qrels


def _judged_recipe(qrels: FileInfo, judging_files: Sequence[FileInfo],
                   rule: str) -> str:
    """What a dataset's judged qrels are made from: the qrels file's and the judging
    files' names and SHA-256s (in dataset order) and the merge rule (the reading rule of
    the qrels file is part of the cache key, :func:`ireval_app.cache.load_made_qrels`)."""
    return json.dumps({"merge": rule, "qrels": [qrels.name, qrels.sha256],
                       "judging": [[f.name, f.sha256] for f in judging_files]})


def files_of_kind(ws: Workspace, info: DatasetInfo, kinds: Sequence[str]
                  ) -> list[tuple[str, str, bytes]]:
    """``(kind, name, bytes)`` of the dataset's files of ``kinds``, in dataset order."""
    who = actor()
    return [(f.kind, f.name, ws.read_file(info.id, f.position, actor=who))
            for f in info.files if f.kind in kinds]


def stored_files_of_kind(info: DatasetInfo, kinds: Sequence[str]
                         ) -> list[tuple[str, str, cache.StoredFile]]:
    """``(kind, name, file)`` of the dataset's files of ``kinds``, in dataset order, each
    known by the SHA-256 and size the workspace keeps and read out of it only when its
    bytes are asked for (:class:`~ireval_app.cache.StoredFile`; the workspace is opened
    then: a problem with it is a :class:`~ireval_core.errors.FormatError` naming the
    file)."""
    who = actor()

    def fetch(name: str, position: int) -> bytes:
        got = with_workspace(lambda ws: ws.read_file(info.id, position, actor=who))
        if isinstance(got, WorkspaceProblem):
            raise FormatError(f"could not be read out of the workspace: {got.message}",
                              source=name)
        return got

    return [(f.kind, f.name, cache.StoredFile(
        f.sha256, f.size, functools.partial(fetch, f.name, f.position)))
        for f in info.files if f.kind in kinds]


def dataset_files(qrels: tuple[str, bytes] | None, runs: Sequence[tuple[str, bytes]],
                  metadata: tuple[str, bytes] | None = None) -> list[tuple[str, str, bytes]]:
    """The ``(kind, name, bytes)`` list :meth:`Workspace.save_dataset` takes."""
    out = [("qrels", qrels[0], qrels[1])] if qrels is not None else []
    out += [("run", name, data) for name, data in runs]
    return out + ([("metadata", metadata[0], metadata[1])] if metadata is not None else [])


def dataset_id(files: Sequence[tuple[str, str, bytes]], read: cache.LoadedFiles) -> str:
    """:func:`ireval_core.workspace.dataset_id_of` of ``files`` (``(kind, name, bytes)``),
    taking the SHA-256 of each qrels or run file from the :class:`~ireval_app.cache.LoadedFile`
    that read it (same kind, name and size) instead of hashing its bytes again: the Data
    page asks on every run, and uploads can be a gigabyte. Other files are hashed."""
    known = {("qrels", f.name, f.size): f.sha256
             for f in ((read.qrels,) if read.qrels is not None else ()) if f.sha256}
    known.update({("run", f.name, f.size): f.sha256 for f in read.runs if f.sha256})
    return dataset_id_from_sha256([
        (kind, name, known.get((kind, name, len(data))) or hashlib.sha256(data).hexdigest())
        for kind, name, data in files])


def saved_as(files_id: str) -> DatasetInfo | None | WorkspaceProblem:
    """The saved dataset holding exactly these files (``files_id``: their workspace id,
    :func:`dataset_id`), or ``None``; raises :class:`~ireval_core.errors.IrevalError` when
    it is in a project this session may not read."""
    who = actor()
    return with_workspace(lambda ws: ws.find_dataset(files_id, actor=who))


def save_dataset(files: Sequence[tuple[str, str, bytes]], *, name: str, note: str,
                 author: str, project: str | None) -> DatasetInfo | WorkspaceProblem | Refused:
    """Save ``files`` (``(kind, name, bytes)``, :func:`dataset_files`) as a new dataset
    named ``name`` in ``project``, by :func:`actor` (``author``: the typed name of a person
    not signed in)."""
    who = actor()
    return write(lambda ws: ws.save_dataset(
        files, name=name, note=note, saved_by=None if who.signed_in else author, actor=who,
        project=project))


def notes(dataset_id: str, target: Target | None = None) -> list[Note] | WorkspaceProblem:
    """The notes of the saved dataset ``dataset_id`` (on ``target`` only, when given) that
    :func:`actor` may read, in the order they were added."""
    who = actor()
    return with_workspace(lambda ws: ws.notes(dataset_id, target, actor=who))


def add_note(dataset_id: str, target: Target, text: str, *, author: str | None, kind: str,
             link: str) -> Note | WorkspaceProblem:
    """Keep a note (``kind`` ``"note"`` or ``"decision"``) on ``target`` of the saved
    dataset ``dataset_id``, with ``link``, the view it was written on
    (:func:`ireval_core.meeting.note_text`), by :func:`actor` (``author``: the typed name
    of a person not signed in; a signed-in person's note names them); a
    :class:`WorkspaceProblem` when the workspace cannot be used. A text the workspace
    refuses, or a role that does not allow it, raises (``IrevalError``, ``ValueError``)."""
    from ireval_core.meeting import note_text  # imports scipy: when a note is added

    kept = note_text(text, link)
    who = actor()
    return with_workspace(lambda ws: ws.add_note(
        dataset_id, target, kept, author=None if who.signed_in else author, kind=kind,
        actor=who))


# ----------------------------------------------------------------------------- who acts


def actor() -> Actor:
    """Who this session acts as: the signed-in person (e-mail and name as the identity
    provider gave them), or the anonymous local user when sign-in is not configured."""
    person = signin.signed_in_person()
    return ANONYMOUS if person is None else Actor(person.email, person.name)


def admit(person: signin.Person) -> list[str] | WorkspaceProblem:
    """Tell the workspace that ``person`` signed in (once per session: a first sign-in
    may make them a member, see :meth:`~ireval_core.workspace.Workspace.sign_in`); the
    projects where they have a role now (empty: no access)."""
    who = Actor(person.email, person.name)

    def work(ws: Workspace) -> list[str]:
        if not state.is_sign_in_recorded(who.email):
            ws.sign_in(who)
            state.record_sign_in(who.email)
        return [p.name for p in ws.projects() if ws.role(who, p.name) is not None]

    return with_workspace(work)


def role(dataset_id: str | None = None) -> str | None:
    """This session's role (one of :data:`~ireval_core.workspace.ROLES`, ``None``: no
    access) in the project of the saved dataset ``dataset_id``, or in the default project
    (where new datasets are saved) when ``None``. The anonymous local user is an admin
    while the workspace has no members; a workspace that cannot be used answers as the
    local mode does for them, ``None`` for a signed-in person."""
    who = actor()

    def work(ws: Workspace) -> str | None:
        project = (DEFAULT_PROJECT if dataset_id is None
                   else ws.get_dataset(dataset_id, actor=who).project)
        return ws.role(who, project)

    try:
        found = with_workspace(work)
    except (IrevalError, ValueError):  # no longer there, or not readable
        return None
    if isinstance(found, WorkspaceProblem):
        return None if who.signed_in else "admin"
    return found


def projects_allowing(needed: str) -> list[str] | WorkspaceProblem:
    """The projects where this session's role is ``needed`` or above (where it may save:
    ``"editor"``), the default project first; the workspace refuses a save anywhere else."""
    who = actor()
    return with_workspace(lambda ws: ws.projects_allowing(who, needed))


def shows_projects(infos: Sequence[DatasetInfo]) -> bool:
    """Whether lists of the saved datasets ``infos`` name each one's project: when one of
    them is in another project than the default (a workspace of one project, the single
    local user's, lists them as it always did)."""
    return any(i.project != DEFAULT_PROJECT for i in infos)


def is_admin(projects: Sequence[str]) -> bool:
    """Whether this session is an admin of one of ``projects``."""
    who = actor()
    found = with_workspace(lambda ws: any(ws.role(who, p) == "admin" for p in projects))
    return found is True


def may(needed: str, dataset_id: str | None = None) -> bool:
    """Whether this session's :func:`role` is ``needed`` (one of
    :data:`~ireval_core.workspace.ROLES`) or above: the controls of a write are drawn only
    then (the workspace refuses the write anyway)."""
    had = role(dataset_id)
    return had is not None and ROLES.index(had) >= ROLES.index(needed)
