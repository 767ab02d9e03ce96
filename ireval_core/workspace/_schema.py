"""The workspace's tables and the migrations that build them, version by version.

:data:`META` holds the live tables the queries use; :data:`MIGRATIONS` build them
step by step from an empty database (a test compares the two). A migration is frozen
once released: a change of schema is a new migration and a change of the live tables.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ._types import WorkspaceError, utc, utc_now

_PG_LOCK_KEY = 0x1E7A1  # advisory lock held while migrating a PostgreSQL workspace

# ----------------------------------------------------------------------- the schema
# The live tables the queries use. They must equal what MIGRATIONS build (a test
# compares them with the migrated database): change both together.
META = sa.MetaData()

VERSION_TABLE = sa.Table(
    "schema_version", META,
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("description", sa.Text, nullable=False),
    sa.Column("applied_at", sa.DateTime(timezone=True), nullable=False),
)
BLOBS = sa.Table(
    "blobs", META,
    sa.Column("sha256", sa.String(64), primary_key=True),
    sa.Column("size", sa.BigInteger, nullable=False),
    sa.Column("stored_size", sa.BigInteger, nullable=False),
    sa.Column("n_chunks", sa.Integer, nullable=False),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
)
CHUNKS = sa.Table(
    "blob_chunks", META,
    sa.Column("sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), primary_key=True),
    sa.Column("seq", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("codec", sa.String(8), nullable=False),
    sa.Column("data", sa.LargeBinary, nullable=False),
)
DATASETS = sa.Table(
    "datasets", META,
    sa.Column("id", sa.String(64), primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False),
    sa.Column("saved_by", sa.Text, nullable=False),
    sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("project_id", sa.Integer, nullable=False),  # PROJECTS.c.id (not enforced)
)
FILES = sa.Table(
    "dataset_files", META,
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("kind", sa.String(16), nullable=False),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("blob_sha256", sa.String(64), sa.ForeignKey("blobs.sha256"), nullable=False),
)
VERSIONS = sa.Table(
    "dataset_versions", META,
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("saved_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("saved_by", sa.Text, nullable=False),
    sa.Column("note", sa.Text, nullable=False),
)
VERSION_FILES = sa.Table(
    "version_files", META,
    sa.Column("dataset_id", sa.String(64), sa.ForeignKey("datasets.id"), primary_key=True),
    sa.Column("version", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("position", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("added", sa.Boolean, nullable=False),
    sa.Column("rounds", sa.Text, nullable=True),
    sa.Column("n_rows", sa.BigInteger, nullable=True),
)
NOTES = sa.Table(
    "notes", META,
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
PROJECTS = sa.Table(
    "projects", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
    sa.Column("name", sa.Text, nullable=False, unique=True),
    sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    sqlite_autoincrement=True,
)
MEMBERS = sa.Table(
    "members", META,
    sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), primary_key=True),
    sa.Column("email", sa.Text, primary_key=True),
    sa.Column("name", sa.Text, nullable=False),
    sa.Column("role", sa.String(16), nullable=False),
    sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("added_by", sa.Text, nullable=False),
)
AUDIT_LOG = sa.Table(
    "audit_log", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("at", sa.String(32), nullable=False),
    sa.Column("actor_email", sa.Text, nullable=False),
    sa.Column("actor_name", sa.Text, nullable=False),
    sa.Column("action", sa.String(32), nullable=False),
    sa.Column("project", sa.Text, nullable=False),
    sa.Column("target", sa.Text, nullable=False),
    sa.Column("detail", sa.Text, nullable=False),
    sa.Column("prev_hash", sa.String(64), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
)
AUDIT_HEAD = sa.Table(
    "audit_head", META,
    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
    sa.Column("rows", sa.Integer, nullable=False),
    sa.Column("hash", sa.String(64), nullable=False),
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


def _migration_4(conn: Connection) -> None:
    """Version 4: projects, members with their roles, and the audit log; every dataset
    in the project "default", every dataset version and note written before in the log,
    attributed to "before sign-in", in the order they were written (frozen: never edit)."""
    meta = sa.MetaData()
    projects = sa.Table(
        "projects", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.Text, nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sqlite_autoincrement=True)
    sa.Table("members", meta,
             sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"),
                       primary_key=True),
             sa.Column("email", sa.Text, primary_key=True),
             sa.Column("name", sa.Text, nullable=False),
             sa.Column("role", sa.String(16), nullable=False),
             sa.Column("added_at", sa.DateTime(timezone=True), nullable=False),
             sa.Column("added_by", sa.Text, nullable=False))
    audit = sa.Table(
        "audit_log", meta,
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("actor_email", sa.Text, nullable=False),
        sa.Column("actor_name", sa.Text, nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("project", sa.Text, nullable=False),
        sa.Column("target", sa.Text, nullable=False),
        sa.Column("detail", sa.Text, nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False))
    head = sa.Table("audit_head", meta,
                    sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
                    sa.Column("rows", sa.Integer, nullable=False),
                    sa.Column("hash", sa.String(64), nullable=False))
    meta.create_all(conn)
    now = utc_now()
    pid = int(conn.execute(projects.insert().values(name="default", created_at=now)
                           .returning(projects.c.id)).scalar_one())
    conn.execute(sa.text("ALTER TABLE datasets ADD COLUMN project_id INTEGER NOT NULL "
                         f"DEFAULT {pid}"))
    rows = _history_before_sign_in(conn)
    prev = "0" * 64
    for i, (at, action, target, detail) in enumerate(rows, start=1):
        stamp = utc(at).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        body = json.dumps(detail, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        content = json.dumps([i, stamp, "", "before sign-in", action, "default", target,
                              body, prev], ensure_ascii=False, separators=(",", ":"))
        digest = hashlib.sha256(content.encode("utf-8")).hexdigest()
        conn.execute(audit.insert().values(
            id=i, at=stamp, actor_email="", actor_name="before sign-in", action=action,
            project="default", target=target, detail=body, prev_hash=prev, hash=digest))
        prev = digest
    if rows:
        conn.execute(head.insert().values(id=1, rows=len(rows), hash=prev))


def _history_before_sign_in(conn: Connection) -> list[tuple[datetime, str, str, dict[str, Any]]]:
    """``(when, action, target, detail)`` of every dataset version and note of a version 3
    database, oldest first (frozen with :func:`_migration_4`)."""
    out: list[tuple[datetime, str, str, dict[str, Any]]] = []
    for r in conn.execute(sa.text(
            "SELECT v.dataset_id, v.version, v.saved_at, v.saved_by, d.name "
            "FROM dataset_versions v JOIN datasets d ON d.id = v.dataset_id")).all():
        action = "dataset saved" if r.version == 1 else "version added"
        out.append((r.saved_at if isinstance(r.saved_at, datetime)
                    else datetime.fromisoformat(str(r.saved_at)), action, r.dataset_id,
                    {"name": r.name, "version": int(r.version), "saved_by": r.saved_by}))
    for r in conn.execute(sa.text(
            "SELECT id, dataset_id, kind, author, created_at FROM notes")).all():
        out.append((r.created_at if isinstance(r.created_at, datetime)
                    else datetime.fromisoformat(str(r.created_at)),
                    "decision recorded" if r.kind == "decision" else "note added",
                    f"note {r.id}", {"dataset": r.dataset_id, "author": r.author}))
    out.sort(key=lambda e: (utc(e[0]), e[1] != "dataset saved", e[2]))
    return out


MIGRATIONS: tuple[tuple[int, str, Callable[[Connection], None]], ...] = (
    (1, "datasets: content-addressed files in chunks", _migration_1),
    (2, "notes and decisions on datasets, comparisons and queries", _migration_2),
    (3, "versions of a dataset: files added by rounds, earlier versions kept", _migration_3),
    (4, "projects, members and roles; the audit log", _migration_4),
)
"""``(version, description, function)`` applied in order, all in one transaction, by
:meth:`Workspace.open` to bring an older database up to :data:`SCHEMA_VERSION`."""

SCHEMA_VERSION = MIGRATIONS[-1][0]
"""The schema version this ireval writes."""


def newer_error(version: int, url: str) -> WorkspaceError:
    """The error for a database written by a newer ireval (schema ``version``)."""
    return WorkspaceError(
        f"the database at {url} is schema version {version}, newer than this ireval "
        f"({SCHEMA_VERSION}): upgrade ireval to use it", url=url)


def migrate(conn: Connection, dialect: str, url: str, target: int = SCHEMA_VERSION) -> None:
    """Apply the :data:`MIGRATIONS` above the database's version, up to ``target``.

    Runs in the caller's write transaction, so a failed migration changes nothing;
    PostgreSQL takes an advisory lock first, SQLite's ``BEGIN IMMEDIATE`` already
    excludes other writers, so two processes opening a new workspace at once migrate
    it once.
    """
    if dialect == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_LOCK_KEY)))
    VERSION_TABLE.create(conn, checkfirst=True)
    current = conn.execute(sa.select(sa.func.max(VERSION_TABLE.c.version))).scalar() or 0
    if current > SCHEMA_VERSION:
        raise newer_error(current, url)
    for version, description, step in MIGRATIONS:
        if current < version <= target:
            step(conn)
            conn.execute(VERSION_TABLE.insert().values(
                version=version, description=description, applied_at=utc_now()))
