"""The audit log: one row for every write, chained by SHA-256 so that a change shows.

Every write of the workspace (a dataset saved, a version added, a dataset deleted, a note
or a decision, a member added or a role changed, a project created) appends a row to
``audit_log`` in the same transaction: its number, when (UTC, ISO 8601 text, stored as
hashed), who (e-mail and display name; an empty e-mail for a person not signed in), the
action, the project, the target and a JSON detail. Its ``hash`` is the SHA-256 of the
row's canonical content (:func:`row_hash`) together with the previous row's hash, the
first row chaining to :data:`GENESIS`. The one row of ``audit_head`` holds the number
and hash of the last row, so that a row removed from the end shows too.

:func:`verify` reads the log in order and names the first row that was changed (its hash
no longer matches its content), removed (its number is missing, or the head records more
rows than there are), or does not follow the row before it. Writers append one at a time
(SQLite: the write lock; PostgreSQL: an advisory lock held to the end of the
transaction, taken after every row lock the write needs, so that no write deadlocks on
it).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ._schema import AUDIT_HEAD, AUDIT_LOG

GENESIS = "0" * 64
"""The previous hash of the first row."""

BEFORE_SIGN_IN = "before sign-in"
"""Who the rows written before the workspace had an audit log are attributed to."""

_PG_AUDIT_LOCK = 0x1E7A2  # advisory lock held by the writer appending to the log


@dataclass(frozen=True)
class AuditEntry:
    """One row of the audit log."""

    id: int
    """1, 2, 3, ... in the order of the writes."""
    at: str
    """When, UTC, ISO 8601 (``2026-11-28T20:01:02.123456Z``), as hashed."""
    actor_email: str
    """The signed-in person's e-mail; ``""`` for a person not signed in."""
    actor_name: str
    """Their display name (the typed name of a person not signed in)."""
    action: str
    """What was done: ``"dataset saved"``, ``"role changed"``, ..."""
    project: str
    """The project's name (``""`` for a write that is not in one)."""
    target: str
    """What it was done to: a dataset id, a note id, an e-mail."""
    detail: str
    """Canonical JSON of the rest (a dataset's name, a role before and after, ...)."""
    prev_hash: str
    hash: str

    @property
    def who(self) -> str:
        """``Name <e-mail>`` for a signed-in person; else the name and "(not signed in)"."""
        if self.actor_email:
            return (self.actor_email if self.actor_name in ("", self.actor_email)
                    else f"{self.actor_name} <{self.actor_email}>")
        if self.actor_name == BEFORE_SIGN_IN:
            return BEFORE_SIGN_IN
        return f"{self.actor_name} (not signed in)"


@dataclass(frozen=True)
class AuditCheck:
    """What :meth:`Workspace.verify_audit` found."""

    intact: bool
    rows: int
    """Rows read."""
    broken_row: int | None = None
    """The first row changed or removed (``None`` when intact)."""
    reason: str = ""
    """What is wrong with it, one sentence (``""`` when intact)."""


def canonical(detail: Mapping[str, Any]) -> str:
    """``detail`` as canonical JSON: sorted keys, no spaces, Unicode kept."""
    return json.dumps(dict(detail), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def iso(at: datetime) -> str:
    """A UTC time as stored in the log."""
    return at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def row_hash(row_id: int, at: str, actor_email: str, actor_name: str, action: str,
             project: str, target: str, detail: str, prev_hash: str) -> str:
    """SHA-256 (hex) of a row's canonical content and the previous row's hash."""
    content = json.dumps([row_id, at, actor_email, actor_name, action, project, target,
                          detail, prev_hash], ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def append(conn: Connection, dialect: str, *, at: datetime, actor_email: str,
           actor_name: str, action: str, project: str, target: str,
           detail: Mapping[str, Any]) -> None:
    """Append one row, chained to the last, and move the head to it."""
    if dialect == "postgresql":
        conn.execute(sa.select(sa.func.pg_advisory_xact_lock(_PG_AUDIT_LOCK)))
    head = conn.execute(sa.select(AUDIT_HEAD.c.rows, AUDIT_HEAD.c.hash)).first()
    rows, prev = (int(head.rows), head.hash) if head is not None else (0, GENESIS)
    stamp, body = iso(at), canonical(detail)
    digest = row_hash(rows + 1, stamp, actor_email, actor_name, action, project, target, body,
                      prev)
    conn.execute(AUDIT_LOG.insert().values(
        id=rows + 1, at=stamp, actor_email=actor_email, actor_name=actor_name, action=action,
        project=project, target=target, detail=body, prev_hash=prev, hash=digest))
    if head is None:
        conn.execute(AUDIT_HEAD.insert().values(id=1, rows=rows + 1, hash=digest))
    else:
        conn.execute(AUDIT_HEAD.update().values(rows=rows + 1, hash=digest))


def entries(conn: Connection, since: str | None = None) -> list[AuditEntry]:
    """The rows, in order; ``since``: only those at or after that ISO date or time."""
    query = sa.select(AUDIT_LOG).order_by(AUDIT_LOG.c.id)
    if since is not None:
        query = query.where(AUDIT_LOG.c.at >= since)
    return [AuditEntry(**dict(m)) for m in conn.execute(query).mappings().all()]


def verify(conn: Connection) -> AuditCheck:
    """Check the chain from the first row to the head."""
    prev, expected = GENESIS, 1
    for row in conn.execution_options(yield_per=1000).execute(
            sa.select(AUDIT_LOG).order_by(AUDIT_LOG.c.id)):
        if row.id != expected:
            return AuditCheck(False, expected - 1, expected,
                              f"row {expected} was removed: row {row.id} follows row "
                              f"{expected - 1}")
        if row_hash(row.id, row.at, row.actor_email, row.actor_name, row.action,
                    row.project, row.target, row.detail, row.prev_hash) != row.hash:
            return AuditCheck(False, expected, row.id,
                              f"row {row.id} was changed: its content no longer matches "
                              "its hash")
        if row.prev_hash != prev:
            return AuditCheck(False, expected, row.id,
                              f"row {row.id} does not follow row {row.id - 1}: its "
                              "previous hash is not that row's hash")
        prev, expected = row.hash, expected + 1
    rows = expected - 1
    head = conn.execute(sa.select(AUDIT_HEAD.c.rows, AUDIT_HEAD.c.hash)).first()
    head_rows, head_hash = (int(head.rows), head.hash) if head is not None else (0, GENESIS)
    if head_rows > rows:
        return AuditCheck(False, rows, rows + 1,
                          f"row {rows + 1} was removed: the log ends at row {rows} but "
                          f"{head_rows} rows were written")
    if (head_rows, head_hash) != (rows, prev):
        return AuditCheck(False, rows, max(rows, 1),
                          f"the log's head (row {head_rows}) does not match its last row "
                          f"{rows}: the head or the last row was changed")
    return AuditCheck(True, rows)
