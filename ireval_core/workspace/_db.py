"""The connection to a workspace database: engines, transactions, retries, dataset ids.

A :class:`Store` holds one SQLAlchemy engine (a pool of connections threads share) and
runs every read and write of the workspace in a transaction: a database error becomes
a :class:`WorkspaceError` naming what was being done and the workspace (password
hidden), and a write PostgreSQL aborted (deadlock, serialization failure) is retried.
SQLite files run in WAL mode and a writer takes the write lock when it begins
(``BEGIN IMMEDIATE``), waiting up to :data:`BUSY_TIMEOUT` seconds for another writer.
"""

from __future__ import annotations

import random
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.dialects import postgresql as pg_dialect
from sqlalchemy.dialects import sqlite as sqlite_dialect
from sqlalchemy.engine import Connection, Engine

from ..errors import invalid_parameter
from ._schema import DATASETS, SCHEMA_VERSION, VERSION_TABLE, migrate, newer_error
from ._types import SHORT_ID_LENGTH, DatasetNotFoundError, WorkspaceError
from ._urls import resolve_url

BUSY_TIMEOUT = 60.0
"""Seconds a SQLite writer waits for another writer's transaction before giving up."""

_MIN_PREFIX = 8
_HEX = frozenset("0123456789abcdef")
_PG_RETRY_STATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock
_ATTEMPTS = 6

_T = TypeVar("_T")


def sqlite_engine(url: sa.URL) -> Engine:
    """An engine on a SQLite file (its folder made): WAL mode, foreign keys on, the busy
    timeout, and ``BEGIN IMMEDIATE`` for write transactions."""
    database = url.database or ""
    if database and database != ":memory:" and not database.startswith("file:"):
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": BUSY_TIMEOUT})

    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        # SQLAlchemy, not the sqlite3 module, decides when transactions begin
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        wal(cursor)
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


def wal(cursor: Any) -> None:
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


def insert_or_skip(dialect: str, table: sa.Table) -> Any:
    """``INSERT`` that the dialect can turn into ``ON CONFLICT DO NOTHING``."""
    return (pg_dialect.insert(table) if dialect == "postgresql"
            else sqlite_dialect.insert(table))


class Store:
    """An open, migrated workspace database: its URL (password hidden), its dialect
    (``"sqlite"`` or ``"postgresql"``) and its engine, and the transactions on it."""

    def __init__(self, url: str | None) -> None:
        resolved = resolve_url(url)
        self.url = resolved.render_as_string(hide_password=True)
        self.dialect = resolved.get_backend_name()
        try:
            self.engine = (sqlite_engine(resolved) if self.dialect == "sqlite"
                           else sa.create_engine(resolved, pool_pre_ping=True,
                                                 connect_args={"connect_timeout": 10}))
        except (ImportError, OSError) as exc:  # no driver; cannot create the folder
            raise WorkspaceError(f"cannot open workspace {self.url}: {exc}",
                                 url=self.url) from exc
        try:
            self._migrate()
        except BaseException:
            self.engine.dispose()
            raise

    def fail(self, exc: sa.exc.SQLAlchemyError, doing: str) -> NoReturn:
        """Raise the :class:`WorkspaceError` for a database error while ``doing``."""
        orig = getattr(exc, "orig", None) or exc
        text = str(orig).strip().splitlines()[0] if str(orig).strip() else type(orig).__name__
        if self.dialect == "sqlite" and "locked" in text:
            text += (f" (another writer held it for more than {BUSY_TIMEOUT:g} s)")
        raise WorkspaceError(f"cannot {doing} in workspace {self.url}: {text}",
                             url=self.url) from exc

    @contextmanager
    def transaction(self, doing: str, *, write: bool = False) -> Iterator[Connection]:
        """One transaction; database errors become :class:`WorkspaceError`."""
        try:
            with self.engine.connect() as conn:
                if write:
                    conn.execution_options(ireval_write=True)
                with conn.begin():
                    yield conn
        except sa.exc.DBAPIError as exc:
            if self._retryable(exc):
                raise
            self.fail(exc, doing)

    def _retryable(self, exc: sa.exc.DBAPIError) -> bool:
        return (self.dialect == "postgresql"
                and getattr(exc.orig, "sqlstate", None) in _PG_RETRY_STATES)

    def write(self, doing: str, work: Callable[[Connection], _T]) -> _T:
        """Run ``work`` in a write transaction, retrying what PostgreSQL aborted."""
        for attempt in range(_ATTEMPTS):
            try:
                with self.transaction(doing, write=True) as conn:
                    return work(conn)
            except sa.exc.DBAPIError as exc:  # only retryable ones get here
                if attempt == _ATTEMPTS - 1:
                    self.fail(exc, doing)
                time.sleep(random.uniform(0, 0.02 * 2 ** attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def _migrate(self) -> None:
        if self.read_version() == SCHEMA_VERSION:
            return
        self.write("create or migrate the schema",
                   lambda conn: migrate(conn, self.dialect, self.url))

    def read_version(self) -> int | None:
        """The database's schema version (``None`` before the first migration)."""
        with self.transaction("read the schema version") as conn:
            if not sa.inspect(conn).has_table("schema_version"):
                return None
            version = conn.execute(sa.select(sa.func.max(VERSION_TABLE.c.version))).scalar()
        if version is not None and version > SCHEMA_VERSION:
            raise newer_error(version, self.url)
        return version

    def resolve(self, conn: Connection, dataset_id: object, function: str) -> str:
        """The full id of the one dataset whose id starts with ``dataset_id``."""
        if not isinstance(dataset_id, str):
            raise invalid_parameter("dataset_id", function, "a str", dataset_id,
                                    error=TypeError)
        prefix = dataset_id.strip().lower()
        if not (_MIN_PREFIX <= len(prefix) <= 64 and set(prefix) <= _HEX):
            raise invalid_parameter("dataset_id", function,
                                    "a dataset id: 8 to 64 hexadecimal characters",
                                    dataset_id)
        query = sa.select(DATASETS.c.id)
        query = (query.where(DATASETS.c.id == prefix) if len(prefix) == 64
                 else query.where(DATASETS.c.id.startswith(prefix)))
        found = conn.execute(query.order_by(DATASETS.c.id).limit(5)).scalars().all()
        if not found:
            raise self.not_found(dataset_id)
        if len(found) > 1:
            shown = ", ".join(f[:SHORT_ID_LENGTH + 4] for f in found)
            raise WorkspaceError(
                f"dataset id {dataset_id} is ambiguous in workspace {self.url}: it starts "
                f"{shown}{', ...' if len(found) == 5 else ''}; give more characters",
                url=self.url)
        return str(found[0])

    def not_found(self, dataset_id: str) -> DatasetNotFoundError:
        """The error for a dataset id that is not (or no longer) in the workspace."""
        return DatasetNotFoundError(f"no dataset {dataset_id} in workspace {self.url}",
                                    url=self.url)
