"""The team workspace: a database that keeps datasets and notes across sessions.

A **dataset** is a named set of files (at most one qrels, any number of runs, labeling
files and query metadata) saved with a name, a note, who saved it and when. A
**note** (or a **decision**) is a line of text attached to a dataset, to a comparison
of two runs on one measure, or to one query, with its author and time.

The workspace is one database, reached through SQLAlchemy Core, with the same code
path for both back ends:

* **SQLite** (the default, no set-up): a file created on first use. ``url=None``
  means the ``IREVAL_WORKSPACE`` environment variable when it is set (a URL or a file
  path), else ``$XDG_DATA_HOME/ireval/workspace.db`` (``~/.local/share/ireval/
  workspace.db``). The file runs in WAL mode (readers never wait for a writer) with a
  busy timeout of :data:`BUSY_TIMEOUT` seconds; every write transaction takes the
  write lock when it starts (``BEGIN IMMEDIATE``), so writers queue instead of
  failing. Keep the file on a local disk: SQLite's WAL mode does not work over
  network file systems.
* **PostgreSQL** for a team server: ``postgresql://user:password@host:5432/db``
  (``postgres://`` and ``postgresql+psycopg://`` are accepted; the driver is psycopg
  3). Writers lock the rows they depend on in one global order, so concurrent saves
  and deletes neither deadlock nor leave a file without its bytes; a transaction that
  PostgreSQL still aborts (deadlock, serialization failure) is retried.

The schema is created by the first :meth:`Workspace.open` and migrated by later ones
(see :data:`MIGRATIONS`); a database written by a newer ireval is refused rather
than misread.

What is stored, and the rules:

* **Content-addressed and immutable.** Every file's bytes are stored once, under
  their SHA-256, in chunks of :data:`CHUNK_SIZE` bytes, each compressed with zlib
  level 1 when that makes it smaller (TREC text shrinks 3–5×; incompressible bytes
  are stored as they are). A dataset's id is the SHA-256 of its manifest, the sorted
  ``(kind, name, sha256)`` of its files, so saving the same files again (in any
  order, under any dataset name) returns the dataset already stored: nothing is
  overwritten, the first name, note, author and time stay. Ids are 64 hexadecimal
  characters; their first 12 (:attr:`DatasetInfo.short_id`), or any unambiguous
  prefix of 8 or more, are accepted wherever an id is.
* **A set grows by versions.** :meth:`Workspace.add_to_dataset` adds files (next
  month's labeling file) to a saved dataset as its next version: the id and name stay,
  and every earlier version stays readable (:meth:`Workspace.get_dataset` with
  ``version=``, :meth:`Workspace.versions` lists them: when, who, which files, which
  rounds, how many rows). Each file's rounds are stated by the saver
  (:class:`FileRounds`; the workspace does not read files); a round the set already has
  is refused (:class:`RoundsInSetError`) unless replacing is chosen, and then the file
  that held it is left out of the new version only. The id stays the id of the files
  first saved: saving those files again returns the set (at its newest version).
* **Deleting asks to confirm** and is final: :meth:`Workspace.delete_dataset` takes
  the id (or its short form) a second time as ``confirm=``, then removes the dataset,
  every version of it, its notes, and the bytes of every file no other dataset uses.
  Saving the same files later stores them afresh, under the same id.
* **Notes are append-only.** An edit is a new note that names the one it
  ``supersedes``; nothing is overwritten, and :meth:`Workspace.notes` shows the
  current notes (or, on request, the whole history).
* **Every write names who does it, and the role decides.** Datasets (labeling sets
  included) belong to projects (:meth:`Workspace.projects`; a workspace made before
  projects has them all in :data:`DEFAULT_PROJECT`). A person (:class:`Actor`: e-mail
  and display name as the sign-in verified them) has a role per project, one of
  :data:`ROLES`: ``viewer`` reads, ``rater`` also adds labeling rounds, ``editor`` also
  saves datasets, notes and decisions, ``admin`` also deletes and manages members.
  Each write takes ``actor=`` and refuses what the role does not allow
  (:class:`~ireval_core.errors.NotAllowedError`); its record names the actor
  (:attr:`Actor.label`), never a typed name. Without members (local mode, no sign-in)
  the default actor, the anonymous local user, may do everything under the names it
  types, as a single-person tool; once a project has a member, only signed-in people
  write. :meth:`Workspace.sign_in` makes a person ``IREVAL_ADMINS`` lists an admin while
  the default project has no admin (``IREVAL_DEFAULT_ROLE=viewer``: everyone else joins
  as a viewer). :meth:`Workspace.projects_allowing` names the projects where a person may
  save.
* **Every write is in a tamper-evident log.** :meth:`Workspace.audit` lists who did
  what, when, to what; each row's SHA-256 chains it to the row before, and
  :meth:`Workspace.verify_audit` (``python -m ireval_core workspace audit --verify``)
  names the first row changed or removed with plain SQL. Only admins read it (each the
  rows of their projects), the local user in local mode, and :data:`OPERATOR`, the
  command line run with the database's URL.
* **Sessions do not see each other's uploads.** The workspace keeps no "current"
  dataset: a file one browser session uploads is in that session only until it is
  saved, and a saved dataset appears in another session only when that session
  opens it.

Strings (names, notes, query ids) are stored exactly as given, any Unicode; only the
NUL character and unpaired surrogates are refused, because PostgreSQL text cannot
hold them. Times are UTC.

One :class:`Workspace` per process: it holds a pool of connections that threads
share safely (the app keeps it in ``st.cache_resource``); a child process opens
its own.

Examples
--------
>>> import os, tempfile
>>> ws = Workspace.open(os.path.join(tempfile.mkdtemp(), "workspace.db"))
>>> qrels = b"q1 0 d1 1\\n"
>>> run = b"q1 Q0 d1 1 2.5 bm25\\n"
>>> info = ws.save_dataset([("qrels", "qrels.txt", qrels), ("run", "bm25.txt", run)],
...                        name="round 1", saved_by="ana")
>>> [(f.kind, f.name, f.size) for f in info.files]
[('qrels', 'qrels.txt', 10), ('run', 'bm25.txt', 20)]
>>> ws.read_file(info.short_id, 1) == run
True
>>> again = ws.save_dataset([("run", "bm25.txt", run), ("qrels", "qrels.txt", qrels)],
...                         name="same files", saved_by="bo")
>>> (again.id == info.id, again.name, len(ws.list_datasets()))
(True, 'round 1', 1)
>>> note = ws.add_note(info.id, Target.query("q1"), "d1 is a duplicate", author="ana")
>>> [(str(n.target), n.text) for n in ws.notes(info.id)]
[('query q1', 'd1 is a duplicate')]
>>> ada = Actor("ada@example.org", "Ada")
>>> ws.set_role(ada.email, "admin", actor=ANONYMOUS).role  # the first member: team mode
'admin'
>>> ws.add_note(info.id, Target.dataset(), "ship it", kind="decision", actor=ada).author
'Ada <ada@example.org>'
>>> [(e.action, e.who) for e in ws.audit(actor=ada)][-2:]
[('role changed', 'local user (not signed in)'), ('decision recorded', 'Ada <ada@example.org>')]
>>> ws.verify_audit(actor=ada).intact
True
>>> ws.close()
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from ._access import (
    ADMINS_VAR,
    ANONYMOUS,
    DEFAULT_PROJECT,
    DEFAULT_ROLE_VAR,
    OPERATOR,
    ROLES,
    Actor,
    Member,
    Project,
)
from ._audit import BEFORE_SIGN_IN, AuditCheck, AuditEntry
from ._blobs import CHUNK_SIZE
from ._datasets import (
    add_to_dataset,
    dataset_id_from_sha256,
    dataset_id_of,
    delete_dataset,
    find_dataset,
    get_dataset,
    list_datasets,
    read_file,
    save_dataset,
    usage,
    versions,
)
from ._db import BUSY_TIMEOUT, Store
from ._members import (
    audit,
    create_project,
    has_members,
    members,
    projects,
    projects_for,
    role,
    set_role,
    sign_in,
    verify_audit,
)
from ._notes import MAX_OVERLAP, add_note, judging_set_history, select_notes, set_judging_set
from ._schema import MIGRATIONS, SCHEMA_VERSION
from ._types import (
    FILE_KINDS,
    NOTE_KINDS,
    SHORT_ID_LENGTH,
    TARGET_KINDS,
    DatasetInfo,
    DatasetNotFoundError,
    DatasetVersion,
    DeletedDataset,
    FileContent,
    FileInfo,
    FileNameTakenError,
    FileRounds,
    JudgingSet,
    Note,
    RoundsInSetError,
    Target,
    WorkspaceError,
    WorkspaceUsage,
)
from ._urls import ENV_VAR, default_url, resolve_url

__all__ = [
    "ADMINS_VAR",
    "ANONYMOUS",
    "BEFORE_SIGN_IN",
    "DEFAULT_PROJECT",
    "DEFAULT_ROLE_VAR",
    "OPERATOR",
    "ROLES",
    "Actor",
    "AuditCheck",
    "AuditEntry",
    "Member",
    "Project",
    "BUSY_TIMEOUT",
    "CHUNK_SIZE",
    "ENV_VAR",
    "FILE_KINDS",
    "FileContent",
    "MIGRATIONS",
    "NOTE_KINDS",
    "SCHEMA_VERSION",
    "SHORT_ID_LENGTH",
    "TARGET_KINDS",
    "DatasetInfo",
    "DatasetNotFoundError",
    "FileNameTakenError",
    "DatasetVersion",
    "DeletedDataset",
    "FileInfo",
    "Note",
    "RoundsInSetError",
    "FileRounds",
    "JudgingSet",
    "MAX_OVERLAP",
    "Target",
    "Workspace",
    "WorkspaceError",
    "WorkspaceUsage",
    "dataset_id_from_sha256",
    "dataset_id_of",
    "default_url",
    "resolve_url",
]


class Workspace:
    """A workspace database (SQLite file or PostgreSQL), open and migrated.

    Use :meth:`open` (or the constructor, which takes the same argument). See the
    module documentation for what is stored and the rules.

    Parameters
    ----------
    url:
        A database URL (``sqlite:////abs/path.db``, ``postgresql://user@host/db``),
        a SQLite file path, or ``None`` for :func:`default_url`.
    """

    def __init__(self, url: str | None = None) -> None:
        self._store = Store(url)
        self.url = self._store.url
        """The workspace's URL, password hidden."""

    @classmethod
    def open(cls, url: str | None = None) -> Workspace:
        """Open (creating and migrating as needed) the workspace at ``url``.

        ``None`` means ``$IREVAL_WORKSPACE``, else the default SQLite file (see
        :func:`default_url`).
        """
        return cls(url)

    def close(self) -> None:
        """Close the pooled connections (the object is not usable afterwards)."""
        self._store.engine.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({self.url!r})"

    @property
    def schema_version(self) -> int:
        """The schema version of the database (:data:`SCHEMA_VERSION` once open)."""
        return self._store.read_version() or 0

    # ------------------------------------------------------------------ datasets
    def save_dataset(self, files: Sequence[tuple[str, str, FileContent]], *, name: str,
                     note: str = "", saved_by: str | None = None,
                     rounds: Mapping[str, FileRounds] | None = None,
                     actor: Actor = ANONYMOUS,
                     project: str = DEFAULT_PROJECT) -> DatasetInfo:
        """Save a set of files as a dataset; the same files again return the saved one.

        Parameters
        ----------
        files:
            ``(kind, name, content)`` triples, in the order to keep: ``kind`` one of
            :data:`FILE_KINDS` (at most one ``"qrels"``), names distinct, content
            ``bytes`` (or any bytes-like object) of any size: files are hashed and
            stored in chunks without holding more than one extra copy.
        name:
            The dataset's name, shown in lists (need not be unique).
        note:
            Free text saved with it.
        saved_by:
            Who saves it, as typed by a person not signed in (required then); the
            record of a signed-in ``actor`` names them (:attr:`Actor.label`) instead.
        rounds:
            For a set that will grow by rounds (months of labeling): the rounds and rows
            of each file, by file name (see :class:`FileRounds`). Files left out have
            unknown rounds; :meth:`add_to_dataset` asks for them then.
        actor:
            Who acts (see :class:`Actor`): refused with
            :class:`~ireval_core.errors.NotAllowedError` unless their role in the
            project allows it: saving needs ``editor``.
            The default, the anonymous local user, may do everything in a workspace
            without members (local mode), nothing in one with members.
        project:
            The project the dataset joins (see :meth:`projects`).

        Returns
        -------
        DatasetInfo
            Version 1 of the dataset stored under :func:`dataset_id_of` ``(files)``. When that
            dataset was already saved (the same files, in any order), it is returned
            unchanged: its first name, note, author and time; nothing is overwritten.
            Compare ``.saved_by``/``.saved_at`` with yours, or call
            :meth:`find_dataset` first, to tell the user.
        """
        return save_dataset(self._store, files, name=name, note=note, saved_by=saved_by,
                            rounds=rounds, actor=actor, project=project)

    def find_dataset(self, dataset_id: str, *, actor: Actor = ANONYMOUS) -> DatasetInfo | None:
        """The dataset with this id (or unambiguous prefix), or ``None`` if none
        (``actor``: who reads, as :meth:`get_dataset`)."""
        return find_dataset(self._store, dataset_id, actor=actor)

    def get_dataset(self, dataset_id: str, version: int | None = None, *,
                    actor: Actor = ANONYMOUS) -> DatasetInfo:
        """The dataset with this id or unambiguous id prefix (8 or more characters).

        ``version``: one of its versions (see :meth:`versions`); ``None`` for the newest.
        ``actor``: who reads: refused with :class:`~ireval_core.errors.NotAllowedError`
        unless they have a role (``viewer`` or above) in the dataset's project; the
        default, the anonymous local user, reads everything in local mode and nothing
        once the workspace has members (as every read: :meth:`read_file`,
        :meth:`versions`, :meth:`notes`, :meth:`list_datasets`).
        Raises :class:`DatasetNotFoundError` when there is none (for example after
        it was deleted), ``ValueError`` for a version it does not have.
        """
        return get_dataset(self._store, dataset_id, version, actor=actor)

    def list_datasets(self, *, actor: Actor = ANONYMOUS,
                      project: str | None = None) -> list[DatasetInfo]:
        """The datasets ``actor`` may read, the most recently saved first.

        ``actor``: only the datasets of the projects where they have a role (every one for
        the anonymous local user in local mode, none once the workspace has members);
        ``project``: only that project's.
        """
        return list_datasets(self._store, actor=actor, project=project)

    def files(self, dataset_id: str, *, actor: Actor = ANONYMOUS) -> tuple[FileInfo, ...]:
        """The files of a dataset, in their order (see :meth:`read_file`)."""
        return self.get_dataset(dataset_id, actor=actor).files

    def versions(self, dataset_id: str, *, actor: Actor = ANONYMOUS) -> list[DatasetVersion]:
        """Every version of a dataset, the first (as saved) first: when, by whom, the files
        it added with their rounds and rows, the files it replaced (``actor``: who reads,
        as :meth:`get_dataset`)."""
        return versions(self._store, dataset_id, actor=actor)

    def add_to_dataset(self, dataset_id: str, files: Sequence[tuple[str, str, FileContent]],
                       *, rounds: Mapping[str, FileRounds], saved_by: str | None = None,
                       replace: bool = False, note: str = "",
                       actor: Actor = ANONYMOUS) -> DatasetInfo:
        """Add files (e.g. next month's labeling file) to a saved dataset, as its next
        version: same id and name; the earlier versions stay as they were, readable.

        Parameters
        ----------
        dataset_id:
            The dataset (id or unambiguous prefix).
        files:
            ``(kind, name, content)`` triples to add, as :meth:`save_dataset` takes them.
        rounds:
            The rounds and rows of every added file, by name (:class:`FileRounds`); also,
            for a dataset saved without them, those of its files (by name).
        saved_by:
            Who adds them, as typed by a person not signed in (required then); the
            record of a signed-in ``actor`` names them instead.
        replace:
            ``False`` (the default): a round the dataset already has is refused. ``True``:
            the files holding those rounds are left out of the new version (they stay in
            the earlier ones); each must hold only rounds the added files bring.
        note:
            Free text kept with the version.
        actor:
            Who acts (see :class:`Actor`): refused with
            :class:`~ireval_core.errors.NotAllowedError` unless their role in the
            project allows it: adding labeling files only (kinds ``labels``, ``gsb``)
            needs ``rater``, other files ``editor``.
            The default, the anonymous local user, may do everything in a workspace
            without members (local mode), nothing in one with members.

        Returns
        -------
        DatasetInfo
            The new version. The same files again (the version already has every added
            file, byte for byte, under its name) return the current version unchanged.

        Raises
        ------
        RoundsInSetError
            A round is already in the dataset and ``replace`` is ``False``, or replacing
            would drop a round the added files do not bring.
        ValueError
            A file of the dataset has no rounds stated (given neither when saved nor in
            ``rounds``), or an added file's name is taken by a file that stays.
        """
        return add_to_dataset(self._store, dataset_id, files, rounds=rounds,
                              saved_by=saved_by, replace=replace, note=note, actor=actor)

    def read_file(self, dataset_id: str, position: int, *, actor: Actor = ANONYMOUS) -> bytes:
        """The bytes of the file at ``position`` (see :attr:`FileInfo.position`).

        The bytes are checked against their SHA-256 before they are returned.
        ``actor``: who reads, as :meth:`get_dataset`.
        """
        return read_file(self._store, dataset_id, position, actor=actor)

    def delete_dataset(self, dataset_id: str, *, confirm: str,
                       actor: Actor = ANONYMOUS) -> DeletedDataset:
        """Delete a dataset, its notes and the file contents no other dataset uses.

        Deleting is final. ``confirm`` must repeat the dataset's full id or its short
        id (:attr:`DatasetInfo.short_id`): a UI asks the user to type it. ``actor``: who
        deletes (an ``admin`` of the dataset's project; see :meth:`save_dataset`).

        Raises
        ------
        ValueError
            ``confirm`` is not the dataset's id or short id; nothing is deleted.
        DatasetNotFoundError
            No such dataset (perhaps already deleted).
        """
        return delete_dataset(self._store, dataset_id, confirm=confirm, actor=actor)

    # ---------------------------------------------------------------------- notes
    def add_note(self, dataset_id: str, target: Target, text: str, *,
                 author: str | None = None, kind: str = "note",
                 supersedes: int | None = None, actor: Actor = ANONYMOUS) -> Note:
        """Append a note (or a decision) on a dataset, a comparison or a query.

        Parameters
        ----------
        dataset_id:
            The dataset (id or unambiguous prefix).
        target:
            What the note is about: :meth:`Target.dataset`, :meth:`Target.comparison`
            or :meth:`Target.query`.
        text:
            The note, any Unicode, several lines allowed.
        author:
            Who writes it, as typed by a person not signed in (required then); a
            signed-in ``actor``'s note names them (:attr:`Actor.label`) instead.
        kind:
            ``"note"`` or ``"decision"``.
        supersedes:
            To edit a note: the id of the note on the same dataset and target that
            this one replaces. The old note is kept (append-only); :meth:`notes`
            shows only the latest version unless asked for the history.
        actor:
            Who acts (see :class:`Actor`): refused with
            :class:`~ireval_core.errors.NotAllowedError` unless their role in the
            project allows it: a note or a decision needs ``editor``.
            The default, the anonymous local user, may do everything in a workspace
            without members (local mode), nothing in one with members.
        """
        return add_note(self._store, dataset_id, target, text, author=author, kind=kind,
                        supersedes=supersedes, actor=actor)

    def notes(self, dataset_id: str | None = None, target: Target | None = None, *,
              kind: str | None = None, include_superseded: bool = False,
              actor: Actor = ANONYMOUS) -> list[Note]:
        """Notes in the order they were added (a dataset's judging-set versions, kept
        in the same table, are not notes: see :meth:`judging_set_history`).

        Parameters
        ----------
        dataset_id:
            Only this dataset's notes; ``None`` for every dataset (a meeting's list).
        target:
            Only the notes on this target; ``None`` for all targets. A comparison
            target matches its notes whichever run was A.
        kind:
            ``"note"`` or ``"decision"`` for one kind only.
        include_superseded:
            Also the notes later edits replaced (the whole history); each says which
            note replaced it in :attr:`Note.superseded_by`.
        actor:
            Who reads: a dataset's notes are refused as :meth:`get_dataset` refuses the
            dataset; without ``dataset_id``, the notes of the datasets they may read.
        """
        return select_notes(self._store, dataset_id, target, kind=kind,
                            include_superseded=include_superseded, actor=actor)

    # ------------------------------------------------------------------ judging sets
    def judging_set(self, dataset_id: str, *, actor: Actor = ANONYMOUS) -> JudgingSet:
        """The newest version of a dataset's judging set (:class:`JudgingSet`: the
        guidelines, label map and overlap share of the Judging page); the defaults,
        version 0, when nobody edited it. Refused as :meth:`get_dataset` refuses the
        dataset."""
        history = judging_set_history(self._store, dataset_id, actor=actor)
        return history[-1] if history else JudgingSet()

    def judging_set_history(self, dataset_id: str, *,
                            actor: Actor = ANONYMOUS) -> list[JudgingSet]:
        """Every version of a dataset's judging set, oldest first (empty when never
        edited)."""
        return judging_set_history(self._store, dataset_id, actor=actor)

    def set_judging_set(self, dataset_id: str, settings: JudgingSet, *,
                        author: str | None = None, actor: Actor = ANONYMOUS) -> JudgingSet:
        """Record ``settings`` (its guidelines, label map and overlap; the other fields
        are ignored) as the next version of the dataset's judging set, and return it.

        Versioned: the earlier versions are kept (:meth:`judging_set_history`). Needs
        the role ``editor`` in the dataset's project (refused with
        :class:`~ireval_core.errors.NotAllowedError`), and writes an audit-log row
        ``judging set edited``. A label map that does not parse, or an overlap outside
        0 to :data:`MAX_OVERLAP`, is refused. ``author`` as for :meth:`add_note`.
        """
        return set_judging_set(self._store, dataset_id, settings, author=author,
                               actor=actor)

    # ---------------------------------------------------------------------- usage
    def usage(self) -> WorkspaceUsage:
        """Counts and sizes of what the workspace holds."""
        return usage(self._store)

    # ---------------------------------------------------------- people and roles
    def sign_in(self, actor: Actor) -> str | None:
        """Record that ``actor`` signed in; their role in the default project.

        A person ``IREVAL_ADMINS`` (comma-separated e-mails) lists becomes an ``admin`` of
        the default project when it has no admin yet (the first sign-in on an empty
        workspace, or one whose people all joined as viewers); once it has one, the list
        grants nothing. Anyone else not yet a member joins it as ``viewer`` when
        ``IREVAL_DEFAULT_ROLE=viewer``, else not at all (``None``: no access until an
        admin adds them). A member keeps the role they have. Joining is in the audit log.
        """
        return sign_in(self._store, actor)

    def role(self, actor: Actor, project: str = DEFAULT_PROJECT) -> str | None:
        """``actor``'s role in ``project`` (one of :data:`ROLES`), ``None`` for no access.

        The anonymous local user is ``admin`` while the workspace has no members (local
        mode) and has no access once it has (see :meth:`has_members`).
        """
        return role(self._store, actor, project)

    def has_members(self) -> bool:
        """Whether any project has a member: the workspace is then in team mode, where
        only signed-in people act, each as their role allows."""
        return has_members(self._store)

    def members(self, project: str = DEFAULT_PROJECT, *, actor: Actor) -> list[Member]:
        """The members of ``project`` and their roles, by e-mail (``actor``: an admin)."""
        return members(self._store, project, actor=actor)

    def set_role(self, email: str, role: str | None, *, actor: Actor,
                 project: str = DEFAULT_PROJECT, name: str = "") -> Member | None:
        """Add a member to ``project``, change their role, or remove them (``role=None``).

        ``actor`` must be an admin of the project; the last admin cannot be demoted or
        removed. ``name``: the person's display name (kept from before when empty).
        Returns the member (``None`` when removed). The change is in the audit log.
        """
        return set_role(self._store, email, role, actor=actor, project=project, name=name)

    def projects(self) -> list[Project]:
        """Every project, the default (:data:`DEFAULT_PROJECT`) first."""
        return projects(self._store)

    def projects_allowing(self, actor: Actor, needed: str = "editor") -> list[str]:
        """The names of the projects where ``actor``'s role is ``needed`` (one of
        :data:`ROLES`) or above, the default first: where they may save a dataset
        (``"editor"``, the default) or read (``"viewer"``). Every project for the
        anonymous local user in local mode, none once the workspace has members."""
        return projects_for(self._store, actor, needed)

    def create_project(self, name: str, *, actor: Actor) -> Project:
        """A new, empty project; ``actor`` (an admin of the default project) becomes its
        admin. The creation is in the audit log."""
        return create_project(self._store, name, actor=actor)

    # ---------------------------------------------------------------- audit log
    def audit(self, since: str | datetime | None = None, *,
              actor: Actor = ANONYMOUS) -> list[AuditEntry]:
        """The audit log, oldest first; ``since``: only the rows at or after that time
        (a datetime, naive meaning UTC, or ISO 8601 text: ``2026-11-01``).

        ``actor``: who reads: an admin reads the rows of the projects they administer
        (an admin of the default project also the rows in no project); the anonymous
        local user in local mode and :data:`OPERATOR` read every row; anyone else is
        refused with :class:`~ireval_core.errors.NotAllowedError`.
        """
        return audit(self._store, since, actor=actor)

    def verify_audit(self, *, actor: Actor = ANONYMOUS) -> AuditCheck:
        """Check the audit log's hash chain (every row): intact, or the first row changed
        or removed and what is wrong with it. ``actor``: who asks, allowed as
        :meth:`audit` allows (an admin of any project)."""
        return verify_audit(self._store, actor=actor)
