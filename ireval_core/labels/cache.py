"""Labeling files read once are mapped, not read, when read again: :class:`Judgments` in
the parsed-column cache (:mod:`ireval_core.io.column_cache`).

:func:`~.reader.read_judgments` given a :class:`~ireval_core.io.column_cache.ColumnCache`
looks the files up first (:func:`judgments_key`). The key is the SHA-256 of every file's
bytes with its name, in the order given (names are in the result: ``sources`` and each
warning's file), and everything else that changes what is read: the cache's
:data:`~ireval_core.io.column_cache.READER_VERSION`, this reader's
:data:`JUDGMENTS_VERSION`, the label map (``None``: detected from the files, which the key
already holds), the sheet, the conflict rule, the round of tool exports and the
decompression limits. An entry holds every table of the :class:`Judgments` (int32/int64
codes, float64 labels, scores and weights, the id and name columns) and its other fields
in the entry's metadata, so a hit rebuilds the same object, array for array, from the
mapped file.

A hit is checked before it is used (on top of the entry's own checks: trailer, length,
CRC-32, reader version, key): every field present with its dtype, the four tables' columns
of equal length, and every code within its names; an entry that fails is deleted with a
log line and the files are read again. File objects are not cached (they are read once).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from dataclasses import fields

import numpy as np
import pyarrow as pa

from ..errors import DataWarning
from ..io.column_cache import (
    READER_VERSION,
    ColumnCache,
    entry_column,
    entry_numbers,
    entry_strings,
)
from ..io.source import ReadLimits
from .judgments import CONFLICT_RULES, Judgments
from .labelmap import LabelMap

__all__ = ["JUDGMENTS_VERSION", "cached_judgments", "judgments_key", "judgments_key_of",
           "path_stamps", "store_judgments"]

JUDGMENTS_VERSION = "2026.11.29-1"
"""Changes whenever what :func:`~.reader.read_judgments` builds from the same files
changes (codes, order, checks, warnings): entries of another version are never used."""

_NAMES = ("round_names", "system_names", "query_ids", "rater_names", "segment_names")
"""The name columns (numpy object arrays of ``str``)."""
_TABLES = {  # table -> its columns, each (field, dtype, the names its codes index or None)
    "shown": (("shown_round", np.int32, "round_names"), ("shown_system", np.int32,
                                                         "system_names"),
              ("shown_query", np.int32, "query_ids"), ("shown_doc", np.int32, "doc_ids"),
              ("shown_position", np.int32, None), ("shown_score", np.float64, None),
              ("shown_unit", np.int64, "unit"), ("shown_group", np.int64, "group")),
    "unit": (("unit_round", np.int32, "round_names"), ("unit_query", np.int32, "query_ids"),
             ("unit_doc", np.int32, "doc_ids")),
    "label": (("label_unit", np.int64, "unit"), ("label_rater", np.int32, "rater_names"),
              ("label_value", np.float64, None)),
    "group": (("group_round", np.int32, "round_names"), ("group_system", np.int32,
                                                         "system_names"),
              ("group_query", np.int32, "query_ids"), ("group_segment", np.int32,
                                                       "segment_names"),
              ("group_weight", np.float64, None)),
}
_SCALARS = ("has_rater", "has_system", "has_segment", "has_weight", "conflicts",
            "n_conflicts", "n_rows", "n_rows_labeled")


def _name_and_hash(cache: ColumnCache, source: object) -> tuple[str, str] | None:
    """(name, SHA-256) of one input, or ``None`` for a file object (not cached)."""
    if isinstance(source, tuple) and len(source) == 2:
        name, data = source
        if isinstance(name, str) and isinstance(data, bytes | bytearray | memoryview):
            return name, hashlib.sha256(data).hexdigest()
        return None
    if isinstance(source, bytes | bytearray | memoryview):
        return "", hashlib.sha256(source).hexdigest()
    if isinstance(source, str | os.PathLike):
        return os.fspath(source), cache.key_of_path(source)
    return None


def path_stamps(sources: Sequence[object]) -> tuple[tuple[int, int, int], ...]:
    """Size, modification time (ns) and inode of every path among ``sources``: a read is
    stored only when they are the same after it (a file changed while it was read is
    not cached under the hash taken before)."""
    out = []
    for s in sources:
        if isinstance(s, str | os.PathLike):
            try:
                st = os.stat(s)
                out.append((st.st_size, st.st_mtime_ns, st.st_ino))
            except OSError:
                out.append((-1, -1, -1))
    return tuple(out)


def _map_rule(label_map: LabelMap | None) -> object:
    if label_map is None:
        return None
    return [label_map.name, [list(w) for w in label_map.words], label_map.numeric]


def judgments_key(cache: ColumnCache, sources: Sequence[object], *,
                  label_map: LabelMap | None, sheet: str | None, conflicts: str,
                  round: str | None, limits: ReadLimits | None = None) -> str | None:
    """The cache entry of these labeling files read under this rule (module docstring);
    ``None`` when one of them is a file object or cannot be read (the read says why)."""
    named = []
    for s in sources:
        try:
            got = _name_and_hash(cache, s)
        except OSError:
            return None
        if got is None:
            return None
        named.append(got)
    return judgments_key_of(named, label_map=label_map, sheet=sheet, conflicts=conflicts,
                            round=round, limits=limits)


def judgments_key_of(named: Sequence[tuple[str, str]], *, label_map: LabelMap | None,
                     sheet: str | None, conflicts: str, round: str | None,
                     limits: ReadLimits | None = None) -> str:
    """:func:`judgments_key` of files known by ``(name, SHA-256 of the bytes)`` (a file
    kept elsewhere, e.g. in a workspace that stores contents by their SHA-256): the same
    key as for the bytes themselves, found without reading them."""
    files = [[str(name), str(sha)] for name, sha in named]
    limits = limits or ReadLimits.from_env()
    rule = {"reader": READER_VERSION, "judgments": JUDGMENTS_VERSION, "kind": "judgments",
            "files": files, "label_map": _map_rule(label_map), "sheet": sheet,
            "conflicts": conflicts, "round": round,
            "limits": [limits.max_inflated_bytes, limits.max_gzip_ratio]}
    content = hashlib.sha256(json.dumps(files).encode()).hexdigest()
    return f"{content}:{json.dumps(rule, sort_keys=True)}"


def store_judgments(cache: ColumnCache, key: str, j: Judgments) -> None:
    """Write ``j`` as the entry of ``key`` (a failure to write is logged, not raised)."""
    columns: dict[str, pa.Array] = {}
    for name in _NAMES:
        values = getattr(j, name)
        if not all(isinstance(v, str) for v in values):
            return  # not names as the reader builds them: not cached
        columns[name] = pa.array(list(values), pa.string())
    columns["doc_ids"] = j.doc_ids
    for table in _TABLES.values():
        for name, _, _ in table:
            columns[name] = pa.array(np.ascontiguousarray(getattr(j, name)))
    lm = j.label_map
    meta: dict[str, object] = {
        "kind": "judgments", "label_map": _map_rule(lm), "sources": list(j.sources),
        "warnings": [[w.code, w.message, w.source, w.count, list(w.examples)]
                     for w in j.warnings],
        **{name: getattr(j, name) for name in _SCALARS}}
    cache.store(key, columns, meta)


def cached_judgments(cache: ColumnCache, key: str) -> Judgments | None:
    """The :class:`Judgments` of ``key`` from the cache, or ``None`` (absent, or an entry
    that fails its checks: then deleted with a log line)."""
    got = cache.load(key)
    if got is None:
        return None
    batch, meta = got
    try:
        return _judgments_from(batch, meta)
    except (KeyError, ValueError, TypeError, IndexError, pa.ArrowException) as exc:
        cache.drop(key, exc)
        return None


def _judgments_from(batch: pa.RecordBatch, meta: dict[str, object]) -> Judgments:
    if meta.get("kind") != "judgments":
        raise ValueError(f"an entry of {meta.get('kind')!r}, not labeling files")
    names = {name: entry_strings(batch, name) for name in _NAMES}
    doc_ids = entry_column(batch, "doc_ids")
    if doc_ids.type != pa.string() and doc_ids.type != pa.large_string():
        raise TypeError(f"doc_ids are {doc_ids.type}, expected strings")
    sizes = {name: len(v) for name, v in names.items()} | {"doc_ids": len(doc_ids)}
    codes: dict[str, np.ndarray] = {}
    for table, columns in _TABLES.items():
        for name, dtype, _ in columns:
            codes[name] = entry_numbers(batch, name, dtype)
        lengths = {len(codes[name]) for name, _, _ in columns}
        if len(lengths) != 1:
            raise ValueError(f"the {table} table's columns differ in length")
        sizes[table] = lengths.pop()
    for columns in _TABLES.values():
        for name, _, indexes in columns:
            if indexes is not None and len(codes[name]):
                if int(codes[name].min()) < 0 or int(codes[name].max()) >= sizes[indexes]:
                    raise ValueError(f"{name} codes out of range")
    values: dict[str, object] = {**names, "doc_ids": doc_ids, **codes}
    lm = meta["label_map"]
    if not isinstance(lm, list) or len(lm) != 3:
        raise ValueError("no label map")
    values["label_map"] = LabelMap(str(lm[0]), tuple((str(w), float(g)) for w, g in lm[1]),
                                   bool(lm[2]))
    values["sources"] = tuple(str(s) for s in meta["sources"])  # type: ignore[attr-defined]
    values["warnings"] = tuple(
        DataWarning(str(c), str(m), None if s is None else str(s), int(n),
                    tuple(str(x) for x in e))
        for c, m, s, n, e in meta["warnings"])  # type: ignore[attr-defined]
    for name in _SCALARS:
        values[name] = meta[name]
    if values["conflicts"] not in CONFLICT_RULES:
        raise ValueError(f"conflict rule {values['conflicts']!r}")
    expected = {f.name for f in fields(Judgments) if f.name != "_cache"}
    if set(values) != expected:
        raise ValueError(f"fields {sorted(expected ^ set(values))} differ")
    return Judgments(**values)  # type: ignore[arg-type]
