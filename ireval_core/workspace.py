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
>>> ws.close()
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sqlite3
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection, Engine

from .errors import IrevalError, invalid_parameter
from .measures import parse_measure
from .params import InstanceOf, Options, any_of, check

__all__ = [
    "BUSY_TIMEOUT",
    "CHUNK_SIZE",
    "ENV_VAR",
    "FILE_KINDS",
    "FileContent",
    "MIGRATIONS",
    "NOTE_KINDS",
    "SCHEMA_VERSION",
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
    "Target",
    "Workspace",
    "WorkspaceError",
    "WorkspaceUsage",
    "dataset_id_from_sha256",
    "dataset_id_of",
    "default_url",
    "resolve_url",
]

ENV_VAR = "IREVAL_WORKSPACE"
"""Environment variable naming the workspace (a database URL or a SQLite file path)."""

FILE_KINDS = ("qrels", "run", "labels", "gsb", "metadata")
"""What a dataset file can be: judgments, a run, a labeling file (graded labels or
side-by-side good/same/bad preferences), or query metadata."""

TARGET_KINDS = ("dataset", "comparison", "query")
"""What a note can be attached to (see :class:`Target`)."""

NOTE_KINDS = ("note", "decision")
"""A note records an observation; a decision records what the team decided."""

CHUNK_SIZE = 4 * 1024 * 1024
"""Files are stored in chunks of this many bytes (before compression)."""

BUSY_TIMEOUT = 60.0
"""Seconds a SQLite writer waits for another writer's transaction before giving up."""

SHORT_ID_LENGTH = 12
"""Length of :attr:`DatasetInfo.short_id`."""

_MIN_PREFIX = 8
_HEX = frozenset("0123456789abcdef")
_PG_LOCK_KEY = 0x1E7A1  # advisory lock held while migrating a PostgreSQL workspace
_PG_RETRY_STATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock
_ATTEMPTS = 6
_MANIFEST_FORMAT = 1

_T = TypeVar("_T")

FileContent = bytes | bytearray | memoryview
"""The content of a file to save: any bytes-like object (read, never copied whole)."""


# ------------------------------------------------------------------------- errors
class WorkspaceError(IrevalError):
    """The workspace cannot do what was asked; the message says what and where.

    ``url`` is the workspace's URL with any password hidden.
    """

    def __init__(self, message: str, *, url: str | None = None) -> None:
        self.url = url
        super().__init__(message)


class DatasetNotFoundError(WorkspaceError, LookupError):
    """No dataset with that id (or id prefix) is in the workspace."""


class RoundsInSetError(IrevalError, ValueError):
    """Files added to a dataset hold rounds it already has (and replacing was not chosen),
    or replacing them would drop rounds the new files do not bring. A refusal of the
    files, not a problem of the workspace (so not a :class:`WorkspaceError`).

    ``rounds`` are the rounds in question, ``files`` the names of the set's files that
    hold them, ``url`` the workspace's URL with any password hidden; ``replacing`` is
    ``True`` when replacing was chosen and would drop ``rounds`` (``False``: the rounds
    are already in the set). A caller words what to do from these fields in its own
    terms (the message says it in the API's).
    """

    def __init__(self, message: str, *, url: str | None = None,
                 rounds: tuple[str, ...] = (), files: tuple[str, ...] = (),
                 replacing: bool = False) -> None:
        self.url = url
        self.rounds = rounds
        self.files = files
        self.replacing = replacing
        super().__init__(message)


class FileNameTakenError(IrevalError, ValueError):
    """Files added to a dataset whose names are taken by files that stay in it (a file
    name is part of the dataset). ``names`` are those names, for a caller to word what
    to do in its own terms (rename the file, or replace the file of that name)."""

    names: tuple[str, ...] = ()


# ------------------------------------------------------------------- result types
@dataclass(frozen=True)
class FileInfo:
    """One file of a dataset: where it is in the dataset, what it is, its bytes' hash."""

    position: int
    """0-based place in the dataset, in the order the files were first saved."""
    kind: str
    """One of :data:`FILE_KINDS`."""
    name: str
    """The file name as uploaded, byte for byte."""
    sha256: str
    """SHA-256 of the file's bytes, 64 lowercase hexadecimal characters."""
    size: int
    """Size of the file in bytes (uncompressed)."""
    rounds: tuple[str, ...] | None = None
    """The rounds (e.g. months) the file holds, as the saver gave them (see
    :class:`FileRounds`); ``None`` when not given."""
    rows: int | None = None
    """The rows the file holds, as the saver gave them; ``None`` when not given."""


@dataclass(frozen=True)
class FileRounds:
    """What a saver states about one file of a set that grows by rounds: the rounds it
    holds and its rows (a labeling file's rounds and labeled rows, counted by the reader).

    The workspace does not read files: it records these, lists them with each version, and
    checks with them that a round is added to a set only once.
    """

    rounds: tuple[str, ...]
    rows: int

    def __post_init__(self) -> None:
        fn = "FileRounds"
        if isinstance(self.rounds, str) or not all(isinstance(r, str) for r in self.rounds):
            raise invalid_parameter("rounds", fn, "a tuple of round names (str)", self.rounds,
                                    error=TypeError)
        for r in self.rounds:
            _check_text(r, "rounds", fn)
        if len(set(self.rounds)) != len(self.rounds):
            raise invalid_parameter("rounds", fn, "distinct round names", self.rounds)
        if isinstance(self.rows, bool) or not isinstance(self.rows, int) or self.rows < 0:
            raise invalid_parameter("rows", fn, "an int >= 0", self.rows, error=TypeError)
        object.__setattr__(self, "rounds", tuple(self.rounds))


@dataclass(frozen=True)
class DatasetVersion:
    """One version of a dataset: what it added (and replaced), when and by whom.

    Version 1 is the dataset as first saved; :meth:`Workspace.add_to_dataset` makes the
    next. Every version stays readable (:meth:`Workspace.get_dataset` with ``version=``).
    """

    dataset_id: str
    version: int
    saved_at: datetime
    """Timezone-aware UTC."""
    saved_by: str
    note: str
    added: tuple[FileInfo, ...]
    """The files this version added (version 1: all of its files)."""
    replaced: tuple[FileInfo, ...]
    """The files of the previous version this one left out (their rounds were replaced)."""
    n_files: int
    """Files in this version."""

    @property
    def rounds(self) -> tuple[str, ...]:
        """The rounds the added files hold, in the order given (unknown ones left out)."""
        return tuple(r for f in self.added for r in (f.rounds or ()))

    @property
    def rows(self) -> int | None:
        """The rows the added files hold; ``None`` when a file's rows were not given."""
        counts = [f.rows for f in self.added]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)


@dataclass(frozen=True)
class DatasetInfo:
    """A saved dataset: its id, name, note, who saved it and when, and its files."""

    id: str
    """SHA-256 of the dataset's manifest (the sorted kinds, names and file hashes)."""
    name: str
    note: str
    saved_by: str
    saved_at: datetime
    """When it was first saved, timezone-aware UTC."""
    files: tuple[FileInfo, ...]
    """The files of :attr:`version`."""
    version: int = 1
    """The version these files are (1 = as first saved)."""
    latest_version: int = 1
    """The dataset's newest version: newer than :attr:`version` when this is an old one."""

    @property
    def rounds(self) -> tuple[str, ...]:
        """The rounds the files hold, as their savers stated them (unknown ones left out)."""
        return tuple(r for f in self.files for r in (f.rounds or ()))

    @property
    def short_id(self) -> str:
        """The first 12 characters of :attr:`id`, accepted wherever an id is."""
        return self.id[:SHORT_ID_LENGTH]

    @property
    def size(self) -> int:
        """Total size of the files in bytes."""
        return sum(f.size for f in self.files)

    def files_of_kind(self, kind: str) -> tuple[FileInfo, ...]:
        """The files of one kind (see :data:`FILE_KINDS`), in dataset order."""
        return tuple(f for f in self.files if f.kind == kind)


@dataclass(frozen=True)
class DeletedDataset:
    """What :meth:`Workspace.delete_dataset` removed."""

    id: str
    name: str
    files: int
    """Files the dataset had."""
    notes: int
    """Notes and decisions removed with it."""
    blobs_removed: int
    """Stored contents removed because no other dataset uses them."""
    bytes_freed: int
    """Uncompressed size of the removed contents."""


@dataclass(frozen=True)
class WorkspaceUsage:
    """How much the workspace holds."""

    datasets: int
    files: int
    """Files over all datasets (a content shared by two datasets counts twice)."""
    blobs: int
    """Distinct file contents stored."""
    raw_bytes: int
    """Uncompressed size of the distinct contents."""
    stored_bytes: int
    """Size of the distinct contents as stored (after compression)."""
    notes: int


@dataclass(frozen=True)
class Target:
    """What a note is about: the whole dataset, a comparison, or a query.

    Build one with :meth:`dataset`, :meth:`comparison` or :meth:`query`. ``key`` is
    the stored form: ``""`` for the dataset, the query id for a query, and for a
    comparison the JSON list ``["run A", "run B", "measure"]`` (JSON, so that run
    names containing any character stay unambiguous).

    Examples
    --------
    >>> t = Target.comparison("bm25", "neural", "ndcg_cut_10")
    >>> t.key, str(t)
    ('["bm25","neural","nDCG@10"]', 'bm25 vs neural on nDCG@10')
    >>> t.parts
    ('bm25', 'neural', 'nDCG@10')
    >>> str(Target.query("q7")), str(Target.dataset())
    ('query q7', 'dataset')
    """

    kind: str
    key: str = ""

    def __post_init__(self) -> None:
        check(self.kind, "kind", "Target", Options(TARGET_KINDS))
        check(self.key, "key", "Target", _STR)
        _check_text(self.key, "key", "Target", allow_empty=self.kind == "dataset")
        if self.kind == "dataset" and self.key:
            raise invalid_parameter("key", "Target", "'' for a dataset target", self.key)
        if self.kind == "comparison":
            try:
                parts = json.loads(self.key)
            except ValueError:
                parts = None
            if not (isinstance(parts, list) and len(parts) == 3
                    and all(isinstance(p, str) and p for p in parts)
                    and _comparison_key(*parts) == self.key):
                raise invalid_parameter(
                    "key", "Target", "a comparison key made by Target.comparison", self.key)

    @classmethod
    def dataset(cls) -> Target:
        """The whole dataset."""
        return cls("dataset", "")

    @classmethod
    def comparison(cls, run_a: str, run_b: str, measure: str) -> Target:
        """Run B against run A on one measure.

        The measure is stored under its canonical name (``ndcg_cut_10`` and
        ``nDCG@10`` are one target; a name the registry does not know raises
        :class:`~ireval_core.errors.UnknownMeasureError`); :meth:`Workspace.notes`
        finds the notes of a comparison whichever run is A.
        """
        for param, value in (("run_a", run_a), ("run_b", run_b), ("measure", measure)):
            _check_text(value, param, "Target.comparison")
        return cls("comparison", _comparison_key(run_a, run_b, str(parse_measure(measure))))

    @classmethod
    def query(cls, query_id: str) -> Target:
        """One query, by its id."""
        _check_text(query_id, "query_id", "Target.query")
        return cls("query", query_id)

    @property
    def parts(self) -> tuple[str, ...]:
        """``()``, ``(query_id,)`` or ``(run_a, run_b, measure)``."""
        if self.kind == "dataset":
            return ()
        if self.kind == "query":
            return (self.key,)
        return tuple(json.loads(self.key))

    def _keys(self) -> tuple[str, ...]:
        """The stored keys that match this target (a comparison matches both orders)."""
        if self.kind != "comparison":
            return (self.key,)
        a, b, m = self.parts
        return (self.key, _comparison_key(b, a, m))

    def __str__(self) -> str:
        if self.kind == "dataset":
            return "dataset"
        if self.kind == "query":
            return f"query {self.key}"
        a, b, m = self.parts
        return f"{a} vs {b} on {m}"


@dataclass(frozen=True)
class Note:
    """A note or decision on a dataset, a comparison or a query (append-only)."""

    id: int
    """Increasing in the order notes were added."""
    dataset_id: str
    target: Target
    kind: str
    """``"note"`` or ``"decision"``."""
    text: str
    author: str
    created_at: datetime
    """Timezone-aware UTC."""
    supersedes: int | None = None
    """The id of the note this one replaces (an edit), if any."""
    superseded_by: int | None = None
    """The id of the latest note that replaces this one, if any."""


# ----------------------------------------------------------------------- the schema
# The live tables the queries use. They must equal what MIGRATIONS build (a test
# compares them with the migrated database): change both together.
_META = sa.MetaData()

_SCHEMA_VERSION = sa.Table(
    "schema_version", _META,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)
_BLOBS = sa.Table(
    "blobs", _META,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("stored_size", sa.BigInteger, nullable=False),
    sa.Column("n_chunks", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
_CHUNKS = sa.Table(
    "blob_chunks", _META,
    sa.Column("sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("codec", sa.String(8), nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)
_DATASETS = sa.Table(
    "datasets", _META,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("saved_by", sa.Text, nullable=False),
    sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
)
_FILES = sa.Table(
    "dataset_files", _META,
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("blob_sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=False),
)
_VERSIONS = sa.Table(
    "dataset_versions", _META,
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("saved_by", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False),
)
_VERSION_FILES = sa.Table(
    "version_files", _META,
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("added", sa.Boolean, nullable=False),
    sa.Column("rounds", sa.Text, nullable=True),
    sa.Column("n_rows", sa.BigInteger, nullable=True),
)
_NOTES = sa.Table(
    "notes", _META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), nullable=False),
    sa.Column("target_kind", sa.String(16), nullable=False),
    sa.Column("target_key", sa.Text, nullable=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("text", sa.Text, nullable=False),
    sa.Column("author", sa.Text, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("supersedes", sa.Integer, sa.ForeignKey("notes.id"), nullable=True),
    sqlite_autoincrement=True,  # never reuse the id of a deleted note
)


def _migration_1(conn: Connection) -> None:
    """Version 1: content-addressed file storage and datasets (frozen: never edit)."""
    meta = sa.MetaData()
    sa.Table("blobs", meta,
             sa.Column("sha256", sa.String(64), primary_key=True),
             sa.Column("size", sa.BigInteger, nullable=False),
             sa.Column("stored_size", sa.BigInteger, nullable=False),
             sa.Column("n_chunks", sa.Integer, nullable=False),
             sa.Column("created_at", sa.DateTime(timezone=True), nullable=False))
    sa.Table("blob_chunks", meta,
             sa.Column("sha256", sa.String(64), sa.ForeignKey("blobs.sha256"),
                       primary_key=True),
             sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
             sa.Column("codec", sa.String(8), nullable=False),
             sa.Column("data", sa.LargeBinary, nullable=False))
    datasets = sa.Table(
        "datasets", meta,
        sa.Column("id", sa.String(64), primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False),
        sa.Column("saved_by", sa.Text, nullable=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False))
    files = sa.Table(
        "dataset_files", meta,
        sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"),
                  primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("blob_sha256", sa.String(64), sa.ForeignKey("blobs.sha256"),
                  nullable=False))
    sa.Index("ix_datasets_saved_at", datasets.c.saved_at)
    sa.Index("ix_dataset_files_blob", files.c.blob_sha256)
    meta.create_all(conn)


def _migration_2(conn: Connection) -> None:
    """Version 2: notes and decisions (frozen: never edit)."""
    meta = sa.MetaData()
    sa.Table("datasets", meta, sa.Column("id", sa.String(64), primary_key=True))
    notes = sa.Table(
        "notes", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"),
                  nullable=False),
        sa.Column("target_kind", sa.String(16), nullable=False),
        sa.Column("target_key", sa.Text, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("text", sa.Text, nullable=False),
        sa.Column("author", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("supersedes", sa.Integer, sa.ForeignKey("notes.id"), nullable=True),
        sqlite_autoincrement=True)
    sa.Index("ix_notes_target", notes.c.dataset_id, notes.c.target_kind, notes.c.target_key)
    sa.Index("ix_notes_supersedes", notes.c.supersedes)
    notes.create(conn)  # with its indexes


def _migration_3(conn: Connection) -> None:
    """Version 3: versions of a dataset, each a list of its files with their rounds;
    every dataset saved before is its version 1 (frozen: never edit)."""
    meta = sa.MetaData()
    datasets = sa.Table("datasets", meta, sa.Column("id", sa.String(64), primary_key=True),
                        sa.Column("saved_by", sa.Text), sa.Column("saved_at",
                                                                  sa.DateTime(timezone=True)))
    files = sa.Table("dataset_files", meta,
                     sa.Column("dataset_id", sa.String(64), primary_key=True),
                     sa.Column("position", sa.Integer, primary_key=True))
    versions = sa.Table(
        "dataset_versions", meta,
        sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"),
                  primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("saved_by", sa.Text, nullable=False),
        sa.Column("note", sa.Text, nullable=False))
    members = sa.Table(
        "version_files", meta,
        sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"),
                  primary_key=True),
        sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("added", sa.Boolean, nullable=False),
        sa.Column("rounds", sa.Text, nullable=True),
        sa.Column("n_rows", sa.BigInteger, nullable=True))
    versions.create(conn)
    members.create(conn)
    conn.execute(versions.insert().from_select(
        ["dataset_id", "version", "saved_at", "saved_by", "note"],
        sa.select(datasets.c.id, sa.literal(1), datasets.c.saved_at, datasets.c.saved_by,
                  sa.literal(""))))
    conn.execute(members.insert().from_select(
        ["dataset_id", "version", "position", "added"],
        sa.select(files.c.dataset_id, sa.literal(1), files.c.position, sa.true())))


MIGRATIONS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "datasets: content-addressed files in chunks", _migration_1),
    (2, "notes and decisions on datasets, comparisons and queries", _migration_2),
    (3, "versions of a dataset: files added by rounds, earlier versions kept", _migration_3),
)
"""``(version, description, function)`` applied in order, all in one transaction, by
:meth:`Workspace.open` to bring an older database up to :data:`SCHEMA_VERSION`."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
"""The schema version this ireval writes."""


# ------------------------------------------------------------------------- helpers
_STR = InstanceOf(str)


def _check_text(given: object, param: str, function: str, *,
                allow_empty: bool = False) -> str:
    """A str PostgreSQL and SQLite both store exactly: no NUL, no lone surrogate."""
    value: str = check(given, param, function, _STR)
    if not allow_empty and not value.strip():
        raise invalid_parameter(param, function, "a non-blank str", value)
    if "\x00" in value:
        raise invalid_parameter(param, function, "a str without NUL characters", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_parameter(param, function, "valid Unicode (no unpaired surrogate)",
                                value) from None
    return value


def _comparison_key(run_a: str, run_b: str, measure: str) -> str:
    return json.dumps([run_a, run_b, measure], ensure_ascii=False, separators=(",", ":"))


def _utc(value: datetime) -> datetime:
    """A stored time as timezone-aware UTC (SQLite returns naive UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _now() -> datetime:
    return datetime.now(UTC)


def _file_tuples(files: object, function: str) -> list[tuple[str, str, memoryview]]:
    """Validate ``(kind, name, bytes)`` triples; the bytes as zero-copy memoryviews."""
    if isinstance(files, (str, bytes)) or not isinstance(files, Sequence):
        raise invalid_parameter("files", function, "a sequence of (kind, name, bytes)",
                                files, error=TypeError)
    if not files:
        raise invalid_parameter("files", function, "a non-empty sequence of files", files)
    out: list[tuple[str, str, memoryview]] = []
    for item in files:
        if not (isinstance(item, tuple) and len(item) == 3):
            raise invalid_parameter("files", function, "a sequence of (kind, name, bytes)",
                                    item, error=TypeError)
        kind, name, data = item
        if kind not in FILE_KINDS:
            raise invalid_parameter("files", function,
                                    f"files whose kind is {Options(FILE_KINDS)}", kind)
        try:
            _check_text(name, "files", function)
        except (TypeError, ValueError) as exc:
            raise invalid_parameter(
                "files", function, "files whose names are non-blank str without NUL "
                "characters or unpaired surrogates", name, error=type(exc)) from None
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise invalid_parameter("files", function, "files whose content is bytes",
                                    type(data).__name__, error=TypeError)
        view = memoryview(data).cast("B")
        out.append((kind, name, view))
    names = [name for _, name, _ in out]
    if len(set(names)) != len(names):
        raise invalid_parameter("files", function, "files with distinct names", names)
    if sum(kind == "qrels" for kind, _, _ in out) > 1:
        raise invalid_parameter("files", function, "files with at most one qrels",
                                [n for k, n, _ in out if k == "qrels"])
    return out


def _manifest_id(entries: Sequence[tuple[str, str, str]]) -> str:
    """SHA-256 of the canonical manifest of ``(kind, name, sha256)`` entries."""
    manifest = json.dumps({"ireval-dataset": _MANIFEST_FORMAT, "files": sorted(entries)},
                          ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def _check_rounds(rounds: object, names: set[str] | None, function: str
                  ) -> dict[str, FileRounds]:
    """``rounds`` checked: ``None`` or a mapping from file names (of ``names``, when given)
    to :class:`FileRounds`."""
    if rounds is None:
        return {}
    if not isinstance(rounds, Mapping) or not all(
            isinstance(k, str) and isinstance(v, FileRounds) for k, v in rounds.items()):
        raise invalid_parameter("rounds", function,
                                "None or a mapping of file names to FileRounds", rounds,
                                error=TypeError)
    if names is not None and set(rounds) - names:
        raise invalid_parameter("rounds", function, "the rounds of files being saved",
                                sorted(set(rounds) - names))
    return dict(rounds)


def _member(dataset_id: str, version: int, position: int, added: bool,
            stated: FileRounds | None) -> dict[str, object]:
    """A ``version_files`` row."""
    return {"dataset_id": dataset_id, "version": version, "position": position,
            "added": added,
            "rounds": None if stated is None else json.dumps(list(stated.rounds),
                                                             ensure_ascii=False),
            "n_rows": None if stated is None else stated.rows}


def _file_info(row: Any) -> FileInfo:
    """A :class:`FileInfo` from a row of ``dataset_files`` joined with its size and its
    ``version_files`` row."""
    return FileInfo(position=row.position, kind=row.kind, name=row.name,
                    sha256=row.blob_sha256, size=int(row.size),
                    rounds=None if row.rounds is None else tuple(json.loads(row.rounds)),
                    rows=None if row.n_rows is None else int(row.n_rows))


def _plan_version(current: DatasetInfo, stated: Mapping[str, FileRounds],
                  added: set[str], replace: bool, name: str, url: str) -> list[FileInfo]:
    """The files of ``current`` that stay in the next version (with their rounds filled in
    from ``stated`` when unknown), or the error why the added files cannot join."""
    fn = "Workspace.add_to_dataset"
    known: list[FileInfo] = []
    for f in current.files:
        if f.rounds is None and f.name in stated:
            f = FileInfo(f.position, f.kind, f.name, f.sha256, f.size,
                         stated[f.name].rounds, stated[f.name].rows)
        if f.rounds is None:
            raise invalid_parameter(
                "rounds", fn, f"the rounds of the set's file {f.name!r} too (it was saved "
                "without them)", sorted(stated))
        known.append(f)
    new_rounds = {r for n in added for r in stated[n].rounds}
    hit = [f for f in known if set(f.rounds or ()) & new_rounds]
    if hit and not replace:
        both = tuple(r for f in hit for r in (f.rounds or ()) if r in new_rounds)
        raise RoundsInSetError(
            f"round{'s' if len(both) > 1 else ''} {', '.join(both)} "
            f"{'are' if len(both) > 1 else 'is'} already in the set {name!r} (file"
            f"{'s' if len(hit) > 1 else ''} {', '.join(f.name for f in hit)}, version "
            f"{current.version}): choose to replace, or add a file of new rounds only",
            url=url, rounds=both, files=tuple(f.name for f in hit))
    for f in hit:
        lost = [r for r in (f.rounds or ()) if r not in new_rounds]
        if lost:
            raise RoundsInSetError(
                f"replacing file {f.name!r} of the set {name!r} would drop its round"
                f"{'s' if len(lost) > 1 else ''} {', '.join(lost)}, which the added files "
                "do not hold: add a file with all of its rounds", url=url,
                rounds=tuple(lost), files=(f.name,), replacing=True)
    stays = [f for f in known if f not in hit]
    taken = sorted(added & {f.name for f in stays})
    if taken:
        error = invalid_parameter("files", fn, "names not taken by files that stay in the set",
                                  taken, error=FileNameTakenError)
        error.names = tuple(taken)
        raise error
    return stays


def dataset_id_of(files: Sequence[tuple[str, str, FileContent]]) -> str:
    """The id :meth:`Workspace.save_dataset` gives these files, without saving them.

    The SHA-256 of the sorted ``(kind, name, sha256 of the bytes)`` of the files: the
    order of the files, the dataset's name and note do not change it.

    Examples
    --------
    >>> a = dataset_id_of([("qrels", "q.txt", b"q1 0 d1 1\\n"), ("run", "r.txt", b"x")])
    >>> b = dataset_id_of([("run", "r.txt", b"x"), ("qrels", "q.txt", b"q1 0 d1 1\\n")])
    >>> a == b, len(a)
    (True, 64)
    >>> a == dataset_id_of([("qrels", "q.txt", b"q1 0 d1 1\\n"), ("run", "r2.txt", b"x")])
    False
    """
    checked = _file_tuples(files, "dataset_id_of")
    return _manifest_id([(k, n, hashlib.sha256(v).hexdigest()) for k, n, v in checked])


def dataset_id_from_sha256(entries: Sequence[tuple[str, str, str]]) -> str:
    """:func:`dataset_id_of` from each file's ``(kind, name, SHA-256 hex digest)``, for a
    caller that already hashed the bytes (they are not hashed again).

    >>> import hashlib
    >>> files = [("qrels", "q.txt", b"q1 0 d1 1\\n"), ("run", "r.txt", b"x")]
    >>> dataset_id_from_sha256([(k, n, hashlib.sha256(v).hexdigest()) for k, n, v in files]
    ...                        ) == dataset_id_of(files)
    True
    """
    checked = _file_tuples([(k, n, b"") for k, n, _ in entries], "dataset_id_from_sha256")
    shas = [sha for _, _, sha in entries]
    for sha in shas:
        if not (isinstance(sha, str) and len(sha) == 64
                and all(c in "0123456789abcdef" for c in sha)):
            raise invalid_parameter("entries", "dataset_id_from_sha256",
                                    "lower-case hex SHA-256 digests (64 characters)", sha)
    return _manifest_id([(k, n, sha) for (k, n, _), sha in zip(checked, shas, strict=True)])


def default_url() -> str:
    """The workspace used when none is given.

    ``$IREVAL_WORKSPACE`` when set (a database URL or a SQLite file path), else the
    SQLite file ``$XDG_DATA_HOME/ireval/workspace.db``, where ``XDG_DATA_HOME``
    defaults to ``~/.local/share``.
    """
    configured = os.environ.get(ENV_VAR, "").strip()
    if configured:
        return configured
    base = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local/share")
    return str(Path(base) / "ireval" / "workspace.db")


def resolve_url(url: str | None = None) -> sa.URL:
    """The SQLAlchemy URL of a workspace given as a URL, a file path or ``None``.

    A string without ``://`` is a SQLite file path (``~`` expanded, made absolute).
    PostgreSQL URLs get the psycopg 3 driver. Other databases are refused.

    Examples
    --------
    >>> resolve_url("/srv/ireval/ws.db").render_as_string()
    'sqlite:////srv/ireval/ws.db'
    >>> resolve_url("postgres://ana:secret@db:5432/ireval").render_as_string()
    'postgresql+psycopg://ana:***@db:5432/ireval'
    """
    text = default_url() if url is None else url
    if not isinstance(text, str) or not text.strip():
        raise invalid_parameter("url", "Workspace.open", "None, a database URL or a path",
                                url)
    if "://" not in text:
        return sa.URL.create("sqlite", database=str(Path(text).expanduser().absolute()))
    try:
        parsed = sa.make_url(text)
    except sa.exc.ArgumentError:
        raise invalid_parameter("url", "Workspace.open", "None, a database URL or a path",
                                url) from None
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite" and parsed.get_driver_name() in ("pysqlite", ""):
        return parsed.set(drivername="sqlite")
    raise WorkspaceError(
        f"unsupported workspace database {parsed.drivername!r} in "
        f"{parsed.render_as_string(hide_password=True)}: use a SQLite file or PostgreSQL",
        url=parsed.render_as_string(hide_password=True))


def _chunks(view: memoryview) -> list[tuple[int, str, memoryview | bytes]]:
    """``(seq, codec, data)`` of each chunk: zlib level 1 when smaller, else as is.

    Stored-as-is chunks are views of the caller's bytes (no copy), so preparing a
    file holds at most one more (compressed) copy of it.
    """
    out: list[tuple[int, str, memoryview | bytes]] = []
    for seq, start in enumerate(range(0, max(len(view), 1), CHUNK_SIZE)):
        raw = view[start:start + CHUNK_SIZE]
        packed = zlib.compress(raw, 1)
        out.append((seq, "zlib", packed) if len(packed) < len(raw) else (seq, "raw", raw))
    return out


def _sqlite_engine(url: sa.URL) -> Engine:
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy, not the sqlite3 module, decides when transactions begin
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        _wal(cursor)
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT * 1000)}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(conn: Connection) -> None:
        # a writer takes the write lock at BEGIN (and waits for it there, up to the busy
        # timeout), so it can never fail half-way to upgrade a read lock
        write = conn.get_execution_options().get("ireval_write", False)
        conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def _wal(cursor: Any) -> None:
    """Put the database in WAL mode, waiting up to :data:`BUSY_TIMEOUT` for other openers.

    The first switch of a new file to WAL needs it to itself, and SQLite may answer
    "database is locked" at once instead of calling the busy handler (several processes
    opening a new workspace together). Retried with a short random pause; a database
    already in WAL mode answers at once.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT
    while True:
        try:
            cursor.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(random.uniform(0.005, 0.05))


def _newer(version: int, url: str) -> WorkspaceError:
    return WorkspaceError(
        f"the database at {url} is schema version {version}, newer than this ireval "
        f"({SCHEMA_VERSION}): upgrade ireval to use it", url=url)


def _migrate(conn: Connection, dialect: str, url: str, target: int = SCHEMA_VERSION) -> None:
    """Apply the :data:`MIGRATIONS` above the database's version, up to ``target``.

    Runs in the caller's write transaction, so a failed migration changes nothing;
    PostgreSQL takes an advisory lock first, SQLite's ``BEGIN IMMEDIATE`` already
    excludes other writers, so two processes opening a new workspace at once migrate
    it once.
    """
    if dialect == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
    _SCHEMA_VERSION.create(conn, checkfirst=True)
    current = conn.execute(sa.select(sa.func.max(_SCHEMA_VERSION.c.version))).scalar() or 0
    if current > SCHEMA_VERSION:
        raise _newer(current, url)
    for version, description, migrate in MIGRATIONS:
        if current < version <= target:
            migrate(conn)
            conn.execute(_SCHEMA_VERSION.insert().values(
                version=version, description=description, applied_at=_now()))


def _insert(dialect: str, table: sa.Table) -> Any:
    """``INSERT`` that the dialect can turn into ``ON CONFLICT DO NOTHING``."""
    return (pg_dialect.insert(table) if dialect == "postgresql"
            else sqlite_dialect.insert(table))


# ----------------------------------------------------------------------- workspace
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
        resolved = resolve_url(url)
        self.url = resolved.render_as_string(hide_password=True)
        """The workspace's URL, password hidden."""
        self._dialect = resolved.get_backend_name()
        try:
            self._engine = (_sqlite_engine(resolved) if self._dialect == "sqlite"
                            else sa.create_engine(resolved, pool_pre_ping=True,
                                                  connect_args={"connect_timeout": 10}))
        except (ImportError, OSError) as exc:  # no driver; cannot create the folder
            raise WorkspaceError(f"cannot open workspace {self.url}: {exc}",
                                 url=self.url) from exc
        try:
            self._migrate()
        except BaseException:
            self._engine.dispose()
            raise

    @classmethod
    def open(cls, url: str | None = None) -> Workspace:
        """Open (creating and migrating as needed) the workspace at ``url``.

        ``None`` means ``$IREVAL_WORKSPACE``, else the default SQLite file (see
        :func:`default_url`).
        """
        return cls(url)

    def close(self) -> None:
        """Close the pooled connections (the object is not usable afterwards)."""
        self._engine.dispose()

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Workspace({self.url!r})"

    # ------------------------------------------------------------- transactions
    def _fail(self, exc: sa.exc.SQLAlchemyError, doing: str) -> NoReturn:
        orig = getattr(exc, "orig", None) or exc
        text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        if self._dialect == "sqlite" and "locked" in text:
            text += (f" (another writer held it for more than {BUSY_TIMEOUT:g} s)")
        raise WorkspaceError(f"cannot {doing} in workspace {self.url}: {text}",
                             url=self.url) from exc

    @contextmanager
    def _transaction(self, doing: str, *, write: bool = False) -> Iterator[Connection]:
        """One transaction; database errors become :class:`WorkspaceError`."""
        try:
            with self._engine.connect() as conn:
                if write:
                    conn.execution_options(ireval_write=True)
                with conn.begin():
                    yield conn
        except sa.exc.DBAPIError as exc:
            if self._retryable(exc):
                raise
            self._fail(exc, doing)

    def _retryable(self, exc: sa.exc.DBAPIError) -> bool:
        return (self._dialect == "postgresql"
                and getattr(exc.orig, "sqlstate", None) in _PG_RETRY_STATES)

    def _write(self, doing: str, work: Callable[[Connection], _T]) -> _T:
        """Run ``work`` in a write transaction, retrying what PostgreSQL aborted."""
        for attempt in range(_ATTEMPTS):
            try:
                with self._transaction(doing, write=True) as conn:
                    return work(conn)
            except sa.exc.DBAPIError as exc:  # only retryable ones get here
                if attempt == _ATTEMPTS - 1:
                    self._fail(exc, doing)
                time.sleep(random.uniform(0, 0.02 * 2 ** attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _migrate(self) -> None:
        if self._read_version() == SCHEMA_VERSION:
            return
        self._write("create or migrate the schema",
                    lambda conn: _migrate(conn, self._dialect, self.url))

    def _read_version(self) -> int | None:
        with self._transaction("read the schema version") as conn:
            if not sa.inspect(conn).has_table("schema_version"):
                return None
            version = conn.execute(sa.select(sa.func.max(_SCHEMA_VERSION.c.version))).scalar()
        if version is not None and version > SCHEMA_VERSION:
            raise _newer(version, self.url)
        return version

    @property
    def schema_version(self) -> int:
        """The schema version of the database (:data:`SCHEMA_VERSION` once open)."""
        return self._read_version() or 0

    # ------------------------------------------------------------------ ids
    def _resolve(self, conn: Connection, dataset_id: object, function: str) -> str:
        """The full id of the one dataset whose id starts with ``dataset_id``."""
        if not isinstance(dataset_id, str):
            raise invalid_parameter("dataset_id", function, "a str", dataset_id,
                                    error=TypeError)
        prefix = dataset_id.strip().lower()
        if not (_MIN_PREFIX <= len(prefix) <= 64 and set(prefix) <= _HEX):
            raise invalid_parameter("dataset_id", function,
                                    "a dataset id: 8 to 64 hexadecimal characters",
                                    dataset_id)
        query = sa.select(_DATASETS.c.id)
        query = (query.where(_DATASETS.c.id == prefix) if len(prefix) == 64
                 else query.where(_DATASETS.c.id.startswith(prefix)))
        found = conn.execute(query.order_by(_DATASETS.c.id).limit(5)).scalars().all()
        if not found:
            raise DatasetNotFoundError(f"no dataset {dataset_id} in workspace {self.url}",
                                       url=self.url)
        if len(found) > 1:
            shown = ", ".join(f[:SHORT_ID_LENGTH + 4] for f in found)
            raise WorkspaceError(
                f"dataset id {dataset_id} is ambiguous in workspace {self.url}: it starts "
                f"{shown}{', ...' if len(found) == 5 else ''}; give more characters",
                url=self.url)
        return str(found[0])

    # ------------------------------------------------------------------ datasets
    def save_dataset(self, files: Sequence[tuple[str, str, FileContent]], *, name: str,
                     note: str = "", saved_by: str,
                     rounds: Mapping[str, FileRounds] | None = None) -> DatasetInfo:
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
            Who saves it.
        rounds:
            For a set that will grow by rounds (months of labeling): the rounds and rows
            of each file, by file name (see :class:`FileRounds`). Files left out have
            unknown rounds; :meth:`add_to_dataset` asks for them then.

        Returns
        -------
        DatasetInfo
            Version 1 of the dataset stored under :func:`dataset_id_of` ``(files)``. When that
            dataset was already saved (the same files, in any order), it is returned
            unchanged: its first name, note, author and time; nothing is overwritten.
            Compare ``.saved_by``/``.saved_at`` with yours, or call
            :meth:`find_dataset` first, to tell the user.
        """
        fn = "Workspace.save_dataset"
        checked = _file_tuples(files, fn)
        _check_text(name, "name", fn)
        _check_text(note, "note", fn, allow_empty=True)
        _check_text(saved_by, "saved_by", fn)
        stated = _check_rounds(rounds, {n for _, n, _ in checked}, fn)
        hashes = [hashlib.sha256(view).hexdigest() for _, _, view in checked]
        dataset_id = _manifest_id([(k, n, h) for (k, n, _), h in zip(checked, hashes,
                                                                       strict=True)])
        existing = self.find_dataset(dataset_id)
        if existing is not None:
            return existing
        content = dict(zip(hashes, (view for _, _, view in checked), strict=True))
        with self._transaction("look up stored files") as conn:
            present = set(conn.execute(sa.select(_BLOBS.c.sha256).where(
                _BLOBS.c.sha256.in_(sorted(content)))).scalars())
        # compress outside the write transaction, so that writers queue briefly
        prepared = {sha: _chunks(view) for sha, view in content.items() if sha not in present}

        def work(conn: Connection) -> DatasetInfo:
            now = _now()
            # lock (or create) every content in one global order: no deadlock, and no
            # concurrent delete can remove a content this dataset is about to use
            for sha in sorted(content):
                self._lock_or_insert_blob(conn, sha, content[sha], prepared, now)
            inserted = conn.execute(
                _insert(self._dialect, _DATASETS)
                .values(id=dataset_id, name=name, note=note, saved_by=saved_by, saved_at=now)
                .on_conflict_do_nothing(index_elements=["id"])
                .returning(_DATASETS.c.id)).first()
            if inserted is not None:  # else a concurrent save of the same files won
                conn.execute(_FILES.insert(), [
                    {"dataset_id": dataset_id, "position": i, "kind": kind, "name": fname,
                     "blob_sha256": sha}
                    for i, ((kind, fname, _), sha) in enumerate(zip(checked, hashes,
                                                                    strict=True))])
                conn.execute(_VERSIONS.insert().values(dataset_id=dataset_id, version=1,
                                                       saved_at=now, saved_by=saved_by,
                                                       note=note))
                conn.execute(_VERSION_FILES.insert(), [
                    _member(dataset_id, 1, i, True, stated.get(fname))
                    for i, (_, fname, _) in enumerate(checked)])
            return self._infos(conn, _DATASETS.c.id == dataset_id)[0]

        return self._write(f"save dataset {name!r}", work)

    def _lock_or_insert_blob(self, conn: Connection, sha: str, view: memoryview,
                             prepared: dict[str, list[tuple[int, str, memoryview | bytes]]],
                             now: datetime) -> None:
        locked = (sa.select(_BLOBS.c.sha256).where(_BLOBS.c.sha256 == sha)
                  .with_for_update(key_share=True))  # nothing on SQLite: BEGIN IMMEDIATE
        while conn.execute(locked).first() is None:
            chunks = prepared.get(sha)
            if chunks is None:  # deleted since we looked: prepare it now
                chunks = prepared[sha] = _chunks(view)
            inserted = conn.execute(
                _insert(self._dialect, _BLOBS)
                .values(sha256=sha, size=len(view), n_chunks=len(chunks), created_at=now,
                        stored_size=sum(len(data) for _, _, data in chunks))
                .on_conflict_do_nothing(index_elements=["sha256"])
                .returning(_BLOBS.c.sha256)).first()
            if inserted is not None:
                for seq, codec, data in chunks:  # one statement per chunk: no extra copy
                    conn.execute(_CHUNKS.insert().values(sha256=sha, seq=seq, codec=codec,
                                                         data=data))
                return
            # else a concurrent save stored it first and committed: lock it (loop)

    def find_dataset(self, dataset_id: str) -> DatasetInfo | None:
        """The dataset with this id (or unambiguous prefix), or ``None`` if none."""
        try:
            return self.get_dataset(dataset_id)
        except DatasetNotFoundError:
            return None

    def get_dataset(self, dataset_id: str, version: int | None = None) -> DatasetInfo:
        """The dataset with this id or unambiguous id prefix (8 or more characters).

        ``version``: one of its versions (see :meth:`versions`); ``None`` for the newest.
        Raises :class:`DatasetNotFoundError` when there is none (for example after
        it was deleted), ``ValueError`` for a version it does not have.
        """
        fn = "Workspace.get_dataset"
        if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
            raise invalid_parameter("version", fn, "None or an int >= 1", version,
                                    error=TypeError)
        with self._transaction("read a dataset") as conn:
            full = self._resolve(conn, dataset_id, fn)
            if version is not None:
                latest = self._latest_version(conn, full)
                if not 1 <= version <= latest:
                    raise invalid_parameter("version", fn,
                                            f"None or a version from 1 to {latest}", version)
            infos = self._infos(conn, _DATASETS.c.id == full, version=version)
        if not infos:  # pragma: no cover - resolved inside the same snapshot
            raise DatasetNotFoundError(f"no dataset {dataset_id} in workspace {self.url}",
                                       url=self.url)
        return infos[0]

    def list_datasets(self) -> list[DatasetInfo]:
        """Every dataset, the most recently saved first."""
        with self._transaction("list datasets") as conn:
            return self._infos(conn, sa.true())

    def files(self, dataset_id: str) -> tuple[FileInfo, ...]:
        """The files of a dataset, in their order (see :meth:`read_file`)."""
        return self.get_dataset(dataset_id).files

    def _latest_version(self, conn: Connection, full: str) -> int:
        return int(conn.execute(sa.select(sa.func.max(_VERSIONS.c.version)).where(
            _VERSIONS.c.dataset_id == full)).scalar() or 1)

    def _infos(self, conn: Connection, where: sa.ColumnElement[bool], *,
               version: int | None = None) -> list[DatasetInfo]:
        """The datasets ``where`` selects, each at ``version`` (``None``: its newest)."""
        rows = conn.execute(sa.select(_DATASETS).where(where).order_by(
            _DATASETS.c.saved_at.desc(), _DATASETS.c.id)).all()
        latest_of = {str(i): int(v) for i, v in conn.execute(
            sa.select(_VERSIONS.c.dataset_id, sa.func.max(_VERSIONS.c.version))
            .join(_DATASETS, _DATASETS.c.id == _VERSIONS.c.dataset_id)
            .where(where).group_by(_VERSIONS.c.dataset_id)).all()}
        shown = {r.id: version if version is not None else int(latest_of.get(r.id, 1))
                 for r in rows}
        files: dict[str, list[FileInfo]] = {row.id: [] for row in rows}
        file_rows = conn.execute(
            sa.select(_FILES, _BLOBS.c.size, _VERSION_FILES.c.version,
                      _VERSION_FILES.c.rounds, _VERSION_FILES.c.n_rows)
            .join(_BLOBS, _BLOBS.c.sha256 == _FILES.c.blob_sha256)
            .join(_DATASETS, _DATASETS.c.id == _FILES.c.dataset_id)
            .join(_VERSION_FILES, sa.and_(_VERSION_FILES.c.dataset_id == _FILES.c.dataset_id,
                                          _VERSION_FILES.c.position == _FILES.c.position))
            .where(where, *(() if version is None else (_VERSION_FILES.c.version == version,)))
            .order_by(_FILES.c.dataset_id, _FILES.c.position)).all()
        for f in file_rows:
            if f.version == shown[f.dataset_id]:
                files[f.dataset_id].append(_file_info(f))
        return [DatasetInfo(id=r.id, name=r.name, note=r.note, saved_by=r.saved_by,
                            saved_at=_utc(r.saved_at), files=tuple(files[r.id]),
                            version=shown[r.id], latest_version=int(latest_of.get(r.id, 1)))
                for r in rows]

    def versions(self, dataset_id: str) -> list[DatasetVersion]:
        """Every version of a dataset, the first (as saved) first: when, by whom, the files
        it added with their rounds and rows, the files it replaced."""
        with self._transaction("list versions") as conn:
            full = self._resolve(conn, dataset_id, "Workspace.versions")
            heads = conn.execute(sa.select(_VERSIONS).where(_VERSIONS.c.dataset_id == full)
                                 .order_by(_VERSIONS.c.version)).all()
            rows = conn.execute(
                sa.select(_FILES, _BLOBS.c.size, _VERSION_FILES.c.version,
                          _VERSION_FILES.c.added, _VERSION_FILES.c.rounds,
                          _VERSION_FILES.c.n_rows)
                .join(_BLOBS, _BLOBS.c.sha256 == _FILES.c.blob_sha256)
                .join(_VERSION_FILES,
                      sa.and_(_VERSION_FILES.c.dataset_id == _FILES.c.dataset_id,
                              _VERSION_FILES.c.position == _FILES.c.position))
                .where(_FILES.c.dataset_id == full)
                .order_by(_VERSION_FILES.c.version, _FILES.c.position)).all()
        members: dict[int, list[Any]] = {}
        for r in rows:
            members.setdefault(int(r.version), []).append(r)
        out: list[DatasetVersion] = []
        before: dict[int, FileInfo] = {}
        for h in heads:
            mine = members.get(int(h.version), [])
            now = {int(r.position): _file_info(r) for r in mine}
            out.append(DatasetVersion(
                dataset_id=full, version=int(h.version), saved_at=_utc(h.saved_at),
                saved_by=h.saved_by, note=h.note,
                added=tuple(_file_info(r) for r in mine if r.added),
                replaced=tuple(f for p, f in before.items() if p not in now),
                n_files=len(mine)))
            before = now
        return out

    def add_to_dataset(self, dataset_id: str, files: Sequence[tuple[str, str, FileContent]],
                       *, rounds: Mapping[str, FileRounds], saved_by: str,
                       replace: bool = False, note: str = "") -> DatasetInfo:
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
            Who adds them.
        replace:
            ``False`` (the default): a round the dataset already has is refused. ``True``:
            the files holding those rounds are left out of the new version (they stay in
            the earlier ones); each must hold only rounds the added files bring.
        note:
            Free text kept with the version.

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
        fn = "Workspace.add_to_dataset"
        checked = _file_tuples(files, fn)
        _check_text(saved_by, "saved_by", fn)
        _check_text(note, "note", fn, allow_empty=True)
        if not isinstance(replace, bool):
            raise invalid_parameter("replace", fn, "a bool", replace, error=TypeError)
        added_names = {n for _, n, _ in checked}
        stated = _check_rounds(rounds, None, fn)
        missing = sorted(added_names - set(stated))
        if missing:
            raise invalid_parameter("rounds", fn, "the rounds of every added file (missing: "
                                    + ", ".join(missing) + ")", sorted(stated))
        hashes = [hashlib.sha256(view).hexdigest() for _, _, view in checked]
        with self._transaction("read a dataset") as conn:
            full = self._resolve(conn, dataset_id, fn)
            present = set(conn.execute(sa.select(_BLOBS.c.sha256).where(
                _BLOBS.c.sha256.in_(sorted(set(hashes))))).scalars())
        content = dict(zip(hashes, (view for _, _, view in checked), strict=True))
        prepared = {sha: _chunks(view) for sha, view in content.items() if sha not in present}

        def work(conn: Connection) -> DatasetInfo:
            now = _now()
            for sha in sorted(content):
                self._lock_or_insert_blob(conn, sha, content[sha], prepared, now)
            head = conn.execute(sa.select(_DATASETS.c.name).where(_DATASETS.c.id == full)
                                .with_for_update()).first()  # one adder at a time
            if head is None:
                raise DatasetNotFoundError(f"no dataset {dataset_id} in workspace {self.url}",
                                           url=self.url)
            current = self._infos(conn, _DATASETS.c.id == full)[0]
            kept = {(f.name, f.sha256) for f in current.files}
            if all((n, h) in kept for (_, n, _), h in zip(checked, hashes, strict=True)):
                return current  # already added: nothing changes
            plan = _plan_version(current, stated, added_names, replace, head.name, self.url)
            version = current.version + 1
            next_position = int(conn.execute(sa.select(sa.func.count()).where(
                _FILES.c.dataset_id == full)).scalar_one())
            conn.execute(_VERSIONS.insert().values(dataset_id=full, version=version,
                                                   saved_at=now, saved_by=saved_by, note=note))
            members: list[dict[str, object]] = [
                {"dataset_id": full, "version": version, "position": f.position,
                 "added": False,
                 "rounds": json.dumps(list(f.rounds or ()), ensure_ascii=False),
                 "n_rows": f.rows} for f in plan]
            new_files = []
            for i, ((kind, fname, _), sha) in enumerate(zip(checked, hashes, strict=True)):
                new_files.append({"dataset_id": full, "position": next_position + i,
                                  "kind": kind, "name": fname, "blob_sha256": sha})
                members.append(_member(full, version, next_position + i, True, stated[fname]))
            conn.execute(_FILES.insert(), new_files)
            conn.execute(_VERSION_FILES.insert(), members)
            return self._infos(conn, _DATASETS.c.id == full)[0]

        return self._write(f"add files to dataset {full[:SHORT_ID_LENGTH]}", work)

    def read_file(self, dataset_id: str, position: int) -> bytes:
        """The bytes of the file at ``position`` (see :attr:`FileInfo.position`).

        The bytes are checked against their SHA-256 before they are returned.
        """
        fn = "Workspace.read_file"
        with self._transaction("read a file") as conn:
            full = self._resolve(conn, dataset_id, fn)
            n_files = conn.execute(sa.select(sa.func.count()).where(
                _FILES.c.dataset_id == full)).scalar_one()
            if isinstance(position, bool) or not isinstance(position, int):
                raise invalid_parameter("position", fn, "an int", position, error=TypeError)
            if not 0 <= position < n_files:
                raise invalid_parameter("position", fn,
                                        f"a file position from 0 to {n_files - 1}", position)
            sha = conn.execute(sa.select(_FILES.c.blob_sha256).where(
                _FILES.c.dataset_id == full, _FILES.c.position == position)).scalar_one()
            blob = conn.execute(sa.select(_BLOBS).where(_BLOBS.c.sha256 == sha)).one()
            parts: list[bytes] = []
            chunks = conn.execution_options(yield_per=1).execute(
                sa.select(_CHUNKS.c.seq, _CHUNKS.c.codec, _CHUNKS.c.data)
                .where(_CHUNKS.c.sha256 == sha).order_by(_CHUNKS.c.seq))
            for seq, codec, data in chunks:
                parts.append(zlib.decompress(data) if codec == "zlib" else bytes(data))
                if seq != len(parts) - 1:
                    break
        content = b"".join(parts)
        del parts
        if len(content) != blob.size or hashlib.sha256(content).hexdigest() != sha:
            raise WorkspaceError(
                f"file {position} of dataset {full[:SHORT_ID_LENGTH]} is damaged in "
                f"workspace {self.url}: its bytes no longer match their SHA-256 {sha}",
                url=self.url)
        return content

    def delete_dataset(self, dataset_id: str, *, confirm: str) -> DeletedDataset:
        """Delete a dataset, its notes and the file contents no other dataset uses.

        Deleting is final. ``confirm`` must repeat the dataset's full id or its short
        id (:attr:`DatasetInfo.short_id`): a UI asks the user to type it.

        Raises
        ------
        ValueError
            ``confirm`` is not the dataset's id or short id; nothing is deleted.
        DatasetNotFoundError
            No such dataset (perhaps already deleted).
        """
        fn = "Workspace.delete_dataset"
        with self._transaction("read a dataset") as conn:
            full = self._resolve(conn, dataset_id, fn)
        if not isinstance(confirm, str) or confirm.strip().lower() not in (
                full, full[:SHORT_ID_LENGTH]):
            raise invalid_parameter(
                "confirm", fn, f"the dataset's id or short id {full[:SHORT_ID_LENGTH]!r}",
                confirm)

        def work(conn: Connection) -> DeletedDataset:
            shas = sorted(set(conn.execute(sa.select(_FILES.c.blob_sha256).where(
                _FILES.c.dataset_id == full)).scalars()))
            # lock in the savers' order, contents (sorted) before the dataset row, so
            # that nothing deadlocks; a saver reusing one of these contents waits, then
            # finds it gone (and stores it again) or still used by another dataset
            conn.execute(sa.select(_BLOBS.c.sha256).where(_BLOBS.c.sha256.in_(shas))
                         .order_by(_BLOBS.c.sha256).with_for_update())
            row = conn.execute(sa.select(_DATASETS.c.name).where(_DATASETS.c.id == full)
                               .with_for_update()).first()  # waits for add_note
            if row is None:
                raise DatasetNotFoundError(f"no dataset {dataset_id} in workspace {self.url}",
                                           url=self.url)
            # (counted with RETURNING: psycopg's rowcount is not reliable through SQLAlchemy)
            n_notes = len(conn.execute(sa.delete(_NOTES).where(_NOTES.c.dataset_id == full)
                                       .returning(_NOTES.c.id)).all())
            conn.execute(sa.delete(_VERSION_FILES).where(_VERSION_FILES.c.dataset_id == full))
            conn.execute(sa.delete(_VERSIONS).where(_VERSIONS.c.dataset_id == full))
            n_files = len(conn.execute(sa.delete(_FILES).where(_FILES.c.dataset_id == full)
                                       .returning(_FILES.c.position)).all())
            conn.execute(sa.delete(_DATASETS).where(_DATASETS.c.id == full))  # locked above
            used = sa.select(_FILES.c.blob_sha256).where(_FILES.c.blob_sha256 == _BLOBS.c.sha256)
            unused = conn.execute(sa.select(_BLOBS.c.sha256, _BLOBS.c.size).where(
                _BLOBS.c.sha256.in_(shas), ~used.exists())).all()
            gone = [u.sha256 for u in unused]
            if gone:
                conn.execute(sa.delete(_CHUNKS).where(_CHUNKS.c.sha256.in_(gone)))
                conn.execute(sa.delete(_BLOBS).where(_BLOBS.c.sha256.in_(gone)))
            return DeletedDataset(id=full, name=row.name, files=n_files, notes=n_notes,
                                  blobs_removed=len(gone),
                                  bytes_freed=sum(int(u.size) for u in unused))

        return self._write(f"delete dataset {full[:SHORT_ID_LENGTH]}", work)

    # ---------------------------------------------------------------------- notes
    def add_note(self, dataset_id: str, target: Target, text: str, *, author: str,
                 kind: str = "note", supersedes: int | None = None) -> Note:
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
            Who writes it.
        kind:
            ``"note"`` or ``"decision"``.
        supersedes:
            To edit a note: the id of the note on the same dataset and target that
            this one replaces. The old note is kept (append-only); :meth:`notes`
            shows only the latest version unless asked for the history.
        """
        fn = "Workspace.add_note"
        check(target, "target", fn, InstanceOf(Target))
        _check_text(text, "text", fn)
        _check_text(author, "author", fn)
        check(kind, "kind", fn, Options(NOTE_KINDS))
        if supersedes is not None and (isinstance(supersedes, bool)
                                       or not isinstance(supersedes, int)):
            raise invalid_parameter("supersedes", fn, "None or a note id", supersedes,
                                    error=TypeError)
        with self._transaction("read a dataset") as conn:
            full = self._resolve(conn, dataset_id, fn)
            if supersedes is not None:
                old = conn.execute(sa.select(_NOTES).where(_NOTES.c.id == supersedes)).first()
                if old is None or (old.dataset_id, old.target_kind, old.target_key) != (
                        full, target.kind, target.key):
                    raise invalid_parameter(
                        "supersedes", fn, "None or the id of a note on the same dataset "
                        "and target", supersedes)

        def work(conn: Connection) -> int:
            if conn.execute(sa.select(_DATASETS.c.id).where(_DATASETS.c.id == full)
                            .with_for_update(key_share=True)).first() is None:
                raise DatasetNotFoundError(f"no dataset {dataset_id} in workspace {self.url}",
                                           url=self.url)
            return int(conn.execute(_NOTES.insert().values(
                dataset_id=full, target_kind=target.kind, target_key=target.key, kind=kind,
                text=text, author=author, created_at=_now(), supersedes=supersedes)
                .returning(_NOTES.c.id)).scalar_one())

        note_id = self._write("add a note", work)
        with self._transaction("read a note") as conn:
            return self._notes(conn, _NOTES.c.id == note_id, include_superseded=True)[0]

    def notes(self, dataset_id: str | None = None, target: Target | None = None, *,
              kind: str | None = None, include_superseded: bool = False) -> list[Note]:
        """Notes in the order they were added.

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
        """
        fn = "Workspace.notes"
        check(target, "target", fn, any_of(None, InstanceOf(Target)))
        check(kind, "kind", fn, any_of(None, Options(NOTE_KINDS)))
        with self._transaction("read notes") as conn:
            where: list[sa.ColumnElement[bool]] = []
            if dataset_id is not None:
                where.append(_NOTES.c.dataset_id == self._resolve(conn, dataset_id, fn))
            if target is not None:
                where += [_NOTES.c.target_kind == target.kind,
                          _NOTES.c.target_key.in_(target._keys())]
            if kind is not None:
                where.append(_NOTES.c.kind == kind)
            return self._notes(conn, sa.and_(sa.true(), *where),
                               include_superseded=include_superseded)

    def _notes(self, conn: Connection, where: sa.ColumnElement[bool], *,
               include_superseded: bool) -> list[Note]:
        newer = _NOTES.alias("newer")
        superseded_by = (sa.select(sa.func.max(newer.c.id))
                         .where(newer.c.supersedes == _NOTES.c.id)
                         .scalar_subquery().label("superseded_by"))
        query = sa.select(_NOTES, superseded_by).where(where).order_by(_NOTES.c.id)
        rows = conn.execute(query).all()
        return [Note(id=r.id, dataset_id=r.dataset_id,
                     target=Target(r.target_kind, r.target_key), kind=r.kind, text=r.text,
                     author=r.author, created_at=_utc(r.created_at), supersedes=r.supersedes,
                     superseded_by=r.superseded_by)
                for r in rows if include_superseded or r.superseded_by is None]

    # ---------------------------------------------------------------------- usage
    def usage(self) -> WorkspaceUsage:
        """Counts and sizes of what the workspace holds."""
        with self._transaction("measure the workspace") as conn:
            def count(table: sa.Table) -> int:
                return int(conn.execute(sa.select(sa.func.count()).select_from(table))
                           .scalar_one())

            raw, stored = conn.execute(sa.select(
                sa.func.coalesce(sa.func.sum(_BLOBS.c.size), 0),
                sa.func.coalesce(sa.func.sum(_BLOBS.c.stored_size), 0))).one()
            return WorkspaceUsage(datasets=count(_DATASETS), files=count(_FILES),
                                  blobs=count(_BLOBS), raw_bytes=int(raw),
                                  stored_bytes=int(stored), notes=count(_NOTES))
