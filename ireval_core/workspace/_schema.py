"""The workspace's tables and the migrations that build them, version by version.

:data:`META` holds the live tables the queries use; :data:`MIGRATIONS` build them
step by step from an empty database (a test compares the two). A migration is frozen
once released: a change of schema is a new migration and a change of the live tables.
"""

from __future__ import annotations

from collections.abc import Callable

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ._types import WorkspaceError, utc_now

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
