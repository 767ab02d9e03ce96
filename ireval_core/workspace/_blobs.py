"""File contents, stored once under their SHA-256 in compressed chunks.

A content (a blob) is written in chunks of :data:`CHUNK_SIZE` bytes, each compressed with
zlib level 1 when that makes it smaller, and read back checked against its SHA-256.
Writers lock (or create) the contents they use in one global order, sorted by hash, so
that concurrent saves and deletes neither deadlock nor leave a file without its bytes.
"""

from __future__ import annotations

import hashlib
import zlib
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ._db import insert_or_skip
from ._schema import BLOBS, CHUNKS, FILES
from ._types import WorkspaceError

CHUNK_SIZE = 4 * 1024 * 1024
"""Files are stored in chunks of this many bytes (before compression)."""

Chunks = list[tuple[int, str, memoryview | bytes]]
"""``(seq, codec, data)`` of each chunk of a content, as :func:`split_chunks` makes them."""


def split_chunks(view: memoryview) -> Chunks:
    """``(seq, codec, data)`` of each chunk: zlib level 1 when smaller, else as is.

    Stored-as-is chunks are views of the caller's bytes (no copy), so preparing a
    file holds at most one more (compressed) copy of it.
    """
    out: Chunks = []
    for seq, start in enumerate(range(0, max(len(view), 1), CHUNK_SIZE)):
        raw = view[start:start + CHUNK_SIZE]
        packed = zlib.compress(raw, 1)
        out.append((seq, "zlib", packed) if len(packed) < len(raw) else (seq, "raw", raw))
    return out


def present(conn: Connection, shas: list[str]) -> set[str]:
    """Which of the contents ``shas`` are stored."""
    return set(conn.execute(sa.select(BLOBS.c.sha256).where(
        BLOBS.c.sha256.in_(sorted(set(shas))))).scalars())


def lock_or_insert(conn: Connection, dialect: str, sha: str, view: memoryview,
                   prepared: dict[str, Chunks], now: datetime) -> None:
    """Lock the stored content ``sha`` against deletion, storing it first when it is not
    (from ``prepared`` chunks, or chunks made now when it was deleted since)."""
    locked = (sa.select(BLOBS.c.sha256).where(BLOBS.c.sha256 == sha)
              .with_for_update(key_share=True))  # nothing on SQLite: BEGIN IMMEDIATE
    while conn.execute(locked).first() is None:
        chunks = prepared.get(sha)
        if chunks is None:  # deleted since we looked: prepare it now
            chunks = prepared[sha] = split_chunks(view)
        inserted = conn.execute(
            insert_or_skip(dialect, BLOBS)
            .values(sha256=sha, size=len(view), n_chunks=len(chunks), created_at=now,
                    stored_size=sum(len(data) for _, _, data in chunks))
            .on_conflict_do_nothing(index_elements=["sha256"])
            .returning(BLOBS.c.sha256)).first()
        if inserted is not None:
            for seq, codec, data in chunks:  # one statement per chunk: no extra copy
                conn.execute(CHUNKS.insert().values(sha256=sha, seq=seq, codec=codec,
                                                    data=data))
            return
        # else a concurrent save stored it first and committed: lock it (loop)


def read_blob(conn: Connection, sha: str, *, what: str, url: str) -> bytes:
    """The bytes of the content ``sha``, checked against their size and SHA-256.

    ``what`` names the file in the error when they no longer match (``"file 0 of
    dataset ..."``).
    """
    blob = conn.execute(sa.select(BLOBS).where(BLOBS.c.sha256 == sha)).one()
    parts: list[bytes] = []
    chunks = conn.execution_options(yield_per=1).execute(
        sa.select(CHUNKS.c.seq, CHUNKS.c.codec, CHUNKS.c.data)
        .where(CHUNKS.c.sha256 == sha).order_by(CHUNKS.c.seq))
    for seq, codec, data in chunks:
        parts.append(zlib.decompress(data) if codec == "zlib" else bytes(data))
        if seq != len(parts) - 1:
            break
    content = b"".join(parts)
    del parts
    if len(content) != blob.size or hashlib.sha256(content).hexdigest() != sha:
        raise WorkspaceError(
            f"{what} is damaged in workspace {url}: its bytes no longer match their "
            f"SHA-256 {sha}", url=url)
    return content


def lock_for_delete(conn: Connection, shas: list[str]) -> None:
    """Lock the contents ``shas`` in the savers' order (sorted), before a dataset row."""
    conn.execute(sa.select(BLOBS.c.sha256).where(BLOBS.c.sha256.in_(shas))
                 .order_by(BLOBS.c.sha256).with_for_update())


def remove_unused(conn: Connection, shas: list[str]) -> tuple[int, int]:
    """Remove the contents of ``shas`` no dataset file uses any more: ``(contents removed,
    their uncompressed bytes)``."""
    used = sa.select(FILES.c.blob_sha256).where(FILES.c.blob_sha256 == BLOBS.c.sha256)
    unused = conn.execute(sa.select(BLOBS.c.sha256, BLOBS.c.size).where(
        BLOBS.c.sha256.in_(shas), ~used.exists())).all()
    gone = [u.sha256 for u in unused]
    if gone:
        conn.execute(sa.delete(CHUNKS).where(CHUNKS.c.sha256.in_(gone)))
        conn.execute(sa.delete(BLOBS).where(BLOBS.c.sha256.in_(gone)))
    return len(gone), sum(int(u.size) for u in unused)
