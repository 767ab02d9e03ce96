"""The Dask engine's text blocks kept in the column cache: a block's parsed columns are
written once and mapped when the same bytes are read again (:func:`block_cache`,
:func:`keeping_blocks`). :mod:`.dask` reads the blocks; this module only keys, keeps and
checks them, and imports no Dask.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
from collections.abc import Iterator
from dataclasses import replace

import pyarrow as pa

from .column_cache import READER_VERSION, CacheSettings, ColumnCache, entry_column
from .source import ReadLimits, Source

__all__ = ["BLOCK_CACHE_VAR", "block_cache", "block_key", "cached_block", "kept_blocks",
           "keeping_blocks"]

BLOCK_CACHE_VAR = "IREVAL_CACHE"
"""A text block's parsed columns are kept in a column cache
(:class:`~.column_cache.ColumnCache`) when the client asks for it with
:func:`keeping_blocks` (``eval --engine dask --cache yes``: the folder and bound of the
client's ``IREVAL_CACHE_DIR`` and ``IREVAL_CACHE_MAX`` go with every read task), or else
when this variable is ``yes``, ``on`` or ``hash`` in the worker's environment (then the
worker's own ``IREVAL_CACHE_DIR`` and ``IREVAL_CACHE_MAX``). A block is known by the
SHA-256 of its bytes, so a file changed since is read again, and a hit gives the frame the
parse gives, column for column."""

_KEEP_BLOCKS: contextvars.ContextVar[CacheSettings | None] = contextvars.ContextVar(
    "ireval_keep_blocks", default=None)


def kept_blocks() -> CacheSettings | None:
    """The block cache asked for by the enclosing :func:`keeping_blocks` (``None``: none
    asked; each worker's :data:`BLOCK_CACHE_VAR` decides), to send with a read task."""
    return _KEEP_BLOCKS.get()


@contextlib.contextmanager
def keeping_blocks(keep: bool | None) -> Iterator[None]:
    """Within the block, the text inputs read for Dask keep their blocks' parsed columns in
    the column cache of this process's environment (``keep=True``: its
    ``IREVAL_CACHE_DIR``, which the workers must be able to write; a local cluster's
    workers share this machine's), or never keep them (``False``); ``None`` leaves it to
    each worker's :data:`BLOCK_CACHE_VAR`. The setting is taken when an input is read
    (its frame built) and travels with its read tasks."""
    if keep is None:
        yield
        return
    settings = replace(CacheSettings.from_env(), enabled=bool(keep))
    token = _KEEP_BLOCKS.set(settings)
    try:
        yield
    finally:
        _KEEP_BLOCKS.reset(token)


def block_cache(settings: CacheSettings | None = None) -> ColumnCache | None:
    """The column cache a Dask worker keeps text blocks in, or ``None``: the one of
    ``settings`` (a read task's, :func:`keeping_blocks`; ``None`` when it is turned off),
    else the worker's own (:data:`BLOCK_CACHE_VAR`)."""
    if settings is not None:
        return ColumnCache(settings) if settings.enabled else None
    if os.environ.get(BLOCK_CACHE_VAR, "").strip().lower() not in ("yes", "on", "hash"):
        return None
    return ColumnCache.from_env()


def block_key(src: Source, kind: str, fmt: str, tag: str | None, limits: ReadLimits
              ) -> str | None:
    """The entry of a block's text: the SHA-256 of the bytes parsed (the header put
    before a later block's lines and the comment rule applied), and what else changes the
    frame (kind, format, the tag of untagged lines, limits, reader version)."""
    data = src.data
    if not isinstance(data, bytes | bytearray | memoryview):
        return None
    rule = {"reader": READER_VERSION, "kind": f"dask-{kind}", "format": fmt, "tag": tag,
            "limits": [limits.max_inflated_bytes, limits.max_gzip_ratio]}
    return f"{hashlib.sha256(data).hexdigest()}:{json.dumps(rule, sort_keys=True)}"


def cached_block(cache: ColumnCache, key: str, kind: str, names: list[str]
                 ) -> pa.Table | None:
    """The columns ``names`` of a ``kind`` block kept under ``key`` (mapped; ``value`` a
    float64, the others strings, none missing), or ``None`` (absent, or invalid: dropped
    with a log line)."""
    got = cache.load(key)
    if got is None:
        return None
    batch, meta = got
    try:
        if meta.get("kind") != f"dask-{kind}":
            raise ValueError(f"an entry of {meta.get('kind')!r}, not a {kind} block")
        cols = {c: entry_column(batch, c) for c in names}
        if len({len(v) for v in cols.values()}) != 1:
            raise ValueError("columns of different lengths")
        for c in names:
            want = pa.float64() if c == "value" else pa.string()
            if cols[c].type != want:
                raise TypeError(f"column {c!r} is {cols[c].type}, expected {want}")
            if cols[c].null_count:
                raise ValueError(f"column {c!r} has missing values")
    except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
        cache.drop(key, exc)
        return None
    return pa.table(cols)
