"""Parsed columns kept on disk: a file read once is mapped, not parsed, when read again.

:func:`~.qrels_runs.read_qrels` and :func:`~.qrels_runs.read_runs` given a
:class:`ColumnCache` look the input up first. An entry holds exactly what the reader
built (:class:`~ireval_core.data.Qrels`' or every :class:`~ireval_core.data.Run`'s codes,
offsets, ids, grades or scores in ranking order, and the reading warnings) as one Arrow
IPC file, so a hit memory-maps the columns: the numbers are the parsed ones, bit for bit,
and nothing is parsed.

Keys
----
An entry is named by the SHA-256 of the input's bytes (as given: a ``.gz`` file by its
compressed bytes) and by everything else that changes what is read (:func:`entry_key`):
:data:`READER_VERSION`, what is read (qrels or runs), the format asked for, the name's
extensions (format detection looks at them), trec_eval 10.0's comment rule, ``one_run``
and the decompression limits. Names are not part of it: the file name is put back into
the result (``source``, each warning's file) on a hit, and runs are named (tags, files
already read) after the lookup. A path can skip the hash: :meth:`ColumnCache.key_of_path`
keeps the content key of a path by its size, modification time, inode and device (``stat``
mode), trusted while those are unchanged; ``hash`` mode hashes the file every time.

Entries
-------
``<key>.arrow``: the IPC file, then a 48-byte trailer (``IRVCACHE``, the IPC length, the
CRC-32 of the IPC bytes, :data:`ENTRY_FORMAT`, zero padding). An entry is used only when
the trailer is whole, its length and checksum match, and the IPC schema names this reader
version and this key; any other entry (truncated, corrupted, written by another version)
is deleted with a log line and the input parsed again. Entries are written to a temporary
file in the folder and renamed into place (atomic: a concurrent reader sees the old entry,
none, or the new one, never part of one; two processes writing the same key both write
whole files). A hit updates the entry's modification time; after a write, the oldest
entries are deleted until the folder is within ``max_bytes`` (least recently used out).

Other entries
-------------
The same folder, bound and checks hold two other kinds of entry: the document map of a
qrels and a run read through the cache (:meth:`ColumnCache.load_doc_map`, keyed by both
entries' keys: the one step of a join that compares ids, the same for every option;
:func:`ireval_core.data.run_doc_map` looks it up), labeling files read by
:func:`ireval_core.labels.read_judgments` (:mod:`ireval_core.labels.cache`; also found by
the files' names and SHA-256 alone, :func:`ireval_core.labels.reader.cached_read_judgments`),
and evaluations (:func:`ireval_core.evaluate.store_evaluation`: per-query values, means and
counts, keyed by the inputs' content, the measures, every option and the SHA-256 of this
package's source; files ``eval-*.arrow``).

Settings (:meth:`CacheSettings.from_env`): ``IREVAL_CACHE`` (``off`` turns the cache off),
``IREVAL_CACHE_DIR`` (default ``$XDG_CACHE_HOME/ireval/columns``, else
``~/.cache/ireval/columns``), ``IREVAL_CACHE_MAX`` (bytes, or with ``K``/``M``/``G``;
default 4G).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import struct
import tempfile
import threading
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa

from ..data import Qrels, Run, remember_doc_ids
from ..errors import DataWarning, invalid_parameter
from .source import ReadLimits

__all__ = ["ENTRY_FORMAT", "READER_VERSION", "CacheSettings", "ColumnCache", "ParsedRun",
           "entry_column", "entry_key", "entry_numbers", "entry_strings", "sha256_of_file"]

log = logging.getLogger("ireval.cache")

READER_VERSION = "2026.11.28-1"
"""Changes whenever what a reader builds from the same bytes changes (codes, order,
warnings): entries of another version are never used."""

ENTRY_FORMAT = 1
"""The layout of an entry file (trailer and IPC fields)."""

_MAGIC = b"IRVCACHE"
_TRAILER = struct.Struct("<8sQIIQQQ")  # magic, IPC length, CRC-32, format, padding
_HASH_BLOCK = 1 << 22
DEFAULT_MAX_BYTES = 4 << 30

CacheMode = Literal["stat", "hash"]


@dataclass(frozen=True)
class ParsedRun:
    """One system of a run file as the reader built it, before it is named: its tag
    (``None``: the lines without one), the run (named by its tag, with the reading's
    warnings), and the lines whose tag was a missing-value marker, with those markers."""

    tag: str | None
    run: Run
    missing_lines: int = 0
    missing_markers: tuple[str, ...] = ()


@dataclass(frozen=True)
class CacheSettings:
    """Where the cache lives, its bound in bytes, and whether it is used at all."""

    directory: Path
    max_bytes: int = DEFAULT_MAX_BYTES
    enabled: bool = True

    @classmethod
    def from_env(cls) -> CacheSettings:
        """``IREVAL_CACHE`` (``off``/``no``/``0``: off), ``IREVAL_CACHE_DIR``,
        ``IREVAL_CACHE_MAX`` (``500M``, ``2G``, or bytes)."""
        enabled = os.environ.get("IREVAL_CACHE", "on").strip().lower() not in (
            "off", "no", "0", "false")
        where = os.environ.get("IREVAL_CACHE_DIR")
        if where:
            directory = Path(where)
        else:
            base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
                os.path.expanduser("~"), ".cache")
            directory = Path(base) / "ireval" / "columns"
        return cls(directory, parse_size(os.environ.get("IREVAL_CACHE_MAX", "4G"),
                                         "IREVAL_CACHE_MAX"), enabled)


def parse_size(text: str, what: str) -> int:
    """``"4G"``, ``"500M"``, ``"64K"`` or a number of bytes, as an int.

    >>> parse_size("1.5K", "x"), parse_size("2G", "x"), parse_size("100", "x")
    (1536, 2147483648, 100)
    """
    t = text.strip().upper().removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    number = t[:-1] if scale > 1 else t
    try:
        value = float(number)
    except ValueError:
        value = -1.0
    if not value >= 0 or value != value:
        raise invalid_parameter(what, "CacheSettings", "a size such as 4G, 500M or bytes",
                                text)
    return int(value * scale)


def entry_key(content_sha256: str, *, kind: str, format: str, name: str, comments: bool,
              one_run: bool, limits: ReadLimits) -> str:
    """The key of an input's entry: its content hash, then the reading rule (as JSON).

    The entry's file is named by the content hash and the rule's CRC-32; the whole key
    is written in the entry and compared when it is read (no second hash of anything).
    """
    rule = {"reader": READER_VERSION, "kind": kind, "format": format,
            "extensions": _extensions(name), "comments": comments, "one_run": one_run,
            "limits": [limits.max_inflated_bytes, limits.max_gzip_ratio]}
    return f"{content_sha256}:{json.dumps(rule, sort_keys=True)}"


def _extensions(name: str) -> str:
    """The lower-cased extensions of a name (``Run.TSV.gz`` -> ``.tsv.gz``)."""
    base = os.path.basename(name).lower()
    return "".join(Path(base).suffixes[-2:]) if "." in base else ""


def sha256_of_file(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, read in blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(_HASH_BLOCK):
            h.update(block)
    return h.hexdigest()


class ColumnCache:
    """A folder of parsed columns (module docstring); safe to share between processes."""

    def __init__(self, settings: CacheSettings, mode: CacheMode = "stat") -> None:
        if mode not in ("stat", "hash"):
            raise invalid_parameter("mode", "ColumnCache", "'stat' or 'hash'", mode)
        self.settings = settings
        self.mode = mode
        self.hits = 0
        self.misses = 0
        self.dropped = 0

    def __eq__(self, other: object) -> bool:
        """Caches are the same when they use the same folder."""
        return isinstance(other, ColumnCache) and other.directory == self.directory

    def __hash__(self) -> int:
        return hash(self.directory)

    @classmethod
    def from_env(cls, mode: CacheMode = "stat") -> ColumnCache | None:
        """The cache the environment asks for, or ``None`` when it is turned off."""
        settings = CacheSettings.from_env()
        return cls(settings, mode) if settings.enabled else None

    @property
    def directory(self) -> Path:
        return self.settings.directory

    # ------------------------------------------------------------------ keys

    def content_hash(self, source: object) -> str | None:
        """SHA-256 of a path's or bytes' content (``None`` for other sources: file
        objects are read once and not cached). A path in ``stat`` mode is looked up by its
        ``stat`` first (:meth:`key_of_path`)."""
        if isinstance(source, bytes | bytearray | memoryview):
            return hashlib.sha256(source).hexdigest()
        if isinstance(source, str | os.PathLike):
            return self.key_of_path(source)
        return None

    def key_of_path(self, path: str | os.PathLike[str]) -> str:
        """The content hash of a file; in ``stat`` mode taken from the path's record
        while its size, modification time, inode and device are those recorded."""
        st = os.stat(path)
        ident = [os.path.abspath(path), st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev]
        record = self.directory / "paths" / (
            hashlib.sha256(json.dumps(ident[:1]).encode()).hexdigest() + ".json")
        if self.mode == "stat":
            try:
                saved = json.loads(record.read_text())
                if saved.get("stat") == ident and isinstance(saved.get("sha256"), str):
                    return str(saved["sha256"])
            except (OSError, ValueError):
                pass
        digest = sha256_of_file(path)
        after = os.stat(path)
        if (after.st_size, after.st_mtime_ns) == (st.st_size, st.st_mtime_ns):
            _write_atomic(record, json.dumps({"stat": ident, "sha256": digest}).encode())
        return digest

    # ------------------------------------------------------------------ entries

    def _path(self, key: str) -> Path:
        content, _, rule = key.partition(":")
        return self.directory / f"{content}-{zlib.crc32(rule.encode()):08x}.arrow"

    def load(self, key: str) -> tuple[pa.RecordBatch, dict[str, object]] | None:
        """The entry's columns (memory-mapped) and metadata, or ``None`` (absent, or
        invalid: then deleted, with a log line)."""
        path = self._path(key)
        try:
            mapped = pa.memory_map(str(path), "r")
        except (FileNotFoundError, NotADirectoryError):
            self.misses += 1
            return None
        except OSError as exc:
            log.warning("ireval cache: cannot open %s (%s); parsing the file", path, exc)
            self.misses += 1
            return None
        try:
            batch, meta = _validated(mapped.read_buffer(), key)
        except _Invalid as exc:
            log.warning("ireval cache: dropped %s: %s; parsing the file again", path, exc)
            self.dropped += 1
            self.misses += 1
            _unlink(path)
            return None
        try:
            os.utime(path)  # recently used
        except OSError:
            pass
        self.hits += 1
        log.debug("ireval cache: mapped %s", path)
        return batch, meta

    def store(self, key: str, columns: dict[str, pa.Array], meta: dict[str, object]) -> None:
        """Write an entry (atomically), then evict the least recently used beyond the
        bound. A failure to write (disk full, read-only folder) is logged, not raised."""
        fields, arrays = [], []
        for name, values in columns.items():
            arrays.append(_one_row_list(values))
            fields.append(pa.field(name, arrays[-1].type))
        schema = pa.schema(fields, metadata={
            b"ireval.reader": READER_VERSION.encode(), b"ireval.key": key.encode(),
            b"ireval.meta": json.dumps(meta).encode()})
        batch = pa.record_batch(arrays, schema=schema)
        try:
            _write_entry(self._path(key), batch)
        except OSError as exc:
            log.warning("ireval cache: could not write %s (%s)", self._path(key), exc)
            return
        self.evict()

    def evict(self) -> None:
        """Delete the least recently used entries until the folder is within the bound."""
        entries = []
        try:
            with os.scandir(self.directory) as it:
                for e in it:
                    if e.name.endswith(".arrow") and e.is_file():
                        try:
                            st = e.stat()
                        except OSError:
                            continue
                        entries.append((st.st_mtime_ns, st.st_size, e.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.settings.max_bytes:
                break
            _unlink(Path(path))
            total -= size

    # ------------------------------------------------------------------ qrels and runs

    def qrels(self, key: str, name: str) -> Qrels | None:
        """The cached :class:`Qrels` of ``key``, named ``name``, or ``None``."""
        got = self.load(key)
        if got is None:
            return None
        batch, meta = got
        try:
            qrels = _qrels_from(batch, meta, name)
        except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            self._drop(key, exc)
            return None
        remember_doc_ids(qrels.doc_ids, self, key)
        return qrels

    def runs(self, key: str, name: str) -> list[ParsedRun] | None:
        """The cached systems of ``key`` (before naming), or ``None``."""
        got = self.load(key)
        if got is None:
            return None
        batch, meta = got
        try:
            parsed = _runs_from(batch, meta, name)
        except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            self._drop(key, exc)
            return None
        for i, p in enumerate(parsed):
            remember_doc_ids(p.run.doc_ids, self, f"{key}#{i}")
        return parsed

    def drop(self, key: str, reason: Exception | str) -> None:
        """Delete the entry :meth:`load` just returned, found unusable when its columns were
        rebuilt (``reason``, logged); it counts as a miss, the input is read again."""
        self._drop(key, reason)

    def _drop(self, key: str, exc: Exception | str) -> None:
        log.warning("ireval cache: dropped %s: %s; parsing the file again", self._path(key),
                    exc)
        self.dropped += 1
        self.hits -= 1
        self.misses += 1
        _unlink(self._path(key))

    def store_qrels(self, key: str, qrels: Qrels) -> None:
        cols = {"query_ids": pa.array(list(qrels.query_ids), pa.string()),
                "doc_ids": qrels.doc_ids, "qcode": pa.array(qrels.qcode),
                "dcode": pa.array(qrels.dcode), "grade": pa.array(qrels.grade),
                "offsets": pa.array(qrels.offsets)}
        if qrels.groups is not None:
            cols["groups"] = qrels.groups
        self.store(key, cols, {"kind": "qrels", "warnings": _warnings_out(qrels.warnings)})
        remember_doc_ids(qrels.doc_ids, self, key)

    def store_runs(self, key: str, parsed: list[ParsedRun]) -> None:
        cols: dict[str, pa.Array] = {}
        systems = []
        for i, p in enumerate(parsed):
            r = p.run
            cols.update({f"{i}.query_ids": pa.array(list(r.query_ids), pa.string()),
                         f"{i}.doc_ids": r.doc_ids, f"{i}.qcode": pa.array(r.qcode),
                         f"{i}.dcode": pa.array(r.dcode), f"{i}.score": pa.array(r.score),
                         f"{i}.offsets": pa.array(r.offsets)})
            systems.append({"tag": p.tag, "name": r.name, "missing_lines": p.missing_lines,
                            "missing_markers": list(p.missing_markers),
                            "warnings": _warnings_out(r.warnings)})
        self.store(key, cols, {"kind": "runs", "systems": systems})
        for i, p in enumerate(parsed):
            remember_doc_ids(p.run.doc_ids, self, f"{key}#{i}")

    # ------------------------------------------------------------------ document maps

    def _doc_map_key(self, qrels_key: str, run_key: str) -> str:
        rule = {"reader": READER_VERSION, "kind": "doc-map", "qrels": qrels_key,
                "run": run_key}
        content = hashlib.sha256(f"{qrels_key}\n{run_key}".encode()).hexdigest()
        return f"{content}:{json.dumps(rule, sort_keys=True)}"

    def load_doc_map(self, qrels_key: str, run_key: str, n_run: int, n_qrels: int
                     ) -> np.ndarray | None:
        """The document map (:func:`~ireval_core.idcodes.doc_code_map`) of the run and
        qrels entries ``run_key`` and ``qrels_key`` (``n_run`` and ``n_qrels`` distinct
        documents), mapped; ``None`` when absent or invalid (then dropped with a log
        line)."""
        key = self._doc_map_key(qrels_key, run_key)
        got = self.load(key)
        if got is None:
            return None
        batch, meta = got
        try:
            if meta.get("kind") != "doc-map":
                raise ValueError(f"an entry of {meta.get('kind')!r}, not a document map")
            doc_map = entry_numbers(batch, "doc_map", np.int64)
            if len(doc_map) != n_run:
                raise ValueError(f"{len(doc_map)} documents, the run has {n_run}")
            if n_run and (int(doc_map.min()) < -1 or int(doc_map.max()) >= n_qrels):
                raise ValueError("document codes out of range")
        except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
            self._drop(key, exc)
            return None
        return doc_map

    def store_doc_map(self, qrels_key: str, run_key: str, doc_map: np.ndarray) -> None:
        """Keep the document map of two entries (:meth:`load_doc_map`)."""
        self.store(self._doc_map_key(qrels_key, run_key),
                   {"doc_map": pa.array(np.asarray(doc_map, dtype=np.int64))},
                   {"kind": "doc-map"})


_CRC_PART = 32 << 20  # bytes: an entry this large or more is checked in parts, on threads


def crc32(data: memoryview) -> int:
    """``zlib.crc32(data)``, computed in up to four parts on threads when ``data`` is large
    (``zlib`` releases the GIL: a reopen's largest entries are checked on every core, and
    their mapped pages read in parallel), the parts' CRCs combined into the whole one
    (:func:`crc32_combine`): the same value, bit for bit."""
    size = len(data)
    parts = min(4, os.cpu_count() or 1, size // _CRC_PART)
    if parts < 2:
        return zlib.crc32(data)
    from concurrent.futures import ThreadPoolExecutor

    bounds = [size * i // parts for i in range(parts + 1)]
    pieces = [data[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    with ThreadPoolExecutor(parts, thread_name_prefix="ireval-crc") as pool:
        crcs = list(pool.map(zlib.crc32, pieces))
    whole = crcs[0]
    for piece, part in zip(pieces[1:], crcs[1:], strict=True):
        whole = crc32_combine(whole, part, len(piece))
    return whole


def _gf2_times(matrix: list[int] | tuple[int, ...], vector: int) -> int:
    total, i = 0, 0
    while vector:
        if vector & 1:
            total ^= matrix[i]
        vector >>= 1
        i += 1
    return total


_ZERO_BYTES: list[tuple[int, ...]] = []  # [k]: the CRC-32 operator of 2**k zero bytes
_ZERO_BYTES_LOCK = threading.Lock()


def _zero_bytes(k: int) -> tuple[int, ...]:
    """The operator (32 x 32 over GF(2), one row per bit) that appends ``2**k`` zero bytes
    to a CRC-32 register; made once per process by squaring."""
    with _ZERO_BYTES_LOCK:
        if not _ZERO_BYTES:
            bit = [0xEDB88320] + [1 << n for n in range(31)]  # one zero bit
            for _ in range(3):  # one zero byte: eight bits
                bit = [_gf2_times(bit, row) for row in bit]
            _ZERO_BYTES.append(tuple(bit))
        while len(_ZERO_BYTES) <= k:
            last = _ZERO_BYTES[-1]
            _ZERO_BYTES.append(tuple(_gf2_times(last, row) for row in last))
        return _ZERO_BYTES[k]


def crc32_combine(crc1: int, crc2: int, len2: int) -> int:
    """The CRC-32 of ``a + b`` from ``crc1 = crc32(a)``, ``crc2 = crc32(b)`` and
    ``len2 = len(b)``: zlib's ``crc32_combine`` (which Python's ``zlib`` does not offer),
    ``len2`` zero bytes appended to ``crc1`` by operators over GF(2), then ``crc2``.

    >>> a, b = b"ireval ", b"column cache"
    >>> crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)
    True
    """
    k = 0
    while len2 > 0:
        if len2 & 1:
            crc1 = _gf2_times(_zero_bytes(k), crc1)
        len2 >>= 1
        k += 1
    return crc1 ^ crc2


class _Invalid(Exception):
    """An entry that must not be used."""


def _validated(buf: pa.Buffer, key: str) -> tuple[pa.RecordBatch, dict[str, object]]:
    size = buf.size
    if size < _TRAILER.size:
        raise _Invalid(f"truncated ({size} bytes)")
    magic, length, crc, fmt, *_ = _TRAILER.unpack(buf.slice(size - _TRAILER.size).to_pybytes())
    if magic != _MAGIC:
        raise _Invalid("no trailer (truncated or not an entry)")
    if fmt != ENTRY_FORMAT:
        raise _Invalid(f"entry format {fmt}, this version reads {ENTRY_FORMAT}")
    if length + _TRAILER.size != size:
        raise _Invalid(f"truncated ({size} bytes, {length + _TRAILER.size} written)")
    ipc = buf.slice(0, length)
    if crc32(memoryview(ipc)) != crc:
        raise _Invalid("checksum mismatch")
    try:
        reader = pa.ipc.open_file(pa.BufferReader(ipc))
        schema_meta = reader.schema.metadata or {}
        version = schema_meta.get(b"ireval.reader", b"").decode()
        if version != READER_VERSION:
            raise _Invalid(f"reader version {version!r}, this one is {READER_VERSION!r}")
        if schema_meta.get(b"ireval.key", b"").decode() != key:
            raise _Invalid("written for another key")
        if reader.num_record_batches != 1:
            raise _Invalid(f"{reader.num_record_batches} record batches, expected 1")
        batch = reader.get_batch(0)
        meta = json.loads(schema_meta[b"ireval.meta"])
    except (pa.ArrowException, ValueError, KeyError) as exc:
        raise _Invalid(f"unreadable ({exc})") from None
    if not isinstance(meta, dict):
        raise _Invalid("metadata is not an object")
    return batch, meta


def _one_row_list(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``values`` as the single row of a large list (fields of one record batch can then
    have any length)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    return pa.LargeListArray.from_arrays(pa.array([0, len(values)], pa.int64()), values)


def entry_column(batch: pa.RecordBatch, name: str) -> pa.Array:
    """Column ``name`` of an entry (:meth:`ColumnCache.store` wrote each as one row);
    a ``KeyError`` or ``ValueError`` when it is not there as written."""
    col = batch.column(name)
    if len(col) != 1:
        raise ValueError(f"column {name!r} has {len(col)} rows, expected 1")
    return col.flatten()


def entry_numbers(batch: pa.RecordBatch, name: str, dtype: type | np.dtype) -> np.ndarray:
    """Column ``name`` of an entry as a read-only numpy view of the mapped bytes, of
    ``dtype`` (a ``TypeError`` otherwise)."""
    values = entry_column(batch, name)
    out = values.to_numpy(zero_copy_only=True)
    if out.dtype != np.dtype(dtype):
        raise TypeError(f"column {name!r} is {out.dtype}, expected {np.dtype(dtype)}")
    return out


def entry_strings(batch: pa.RecordBatch, name: str) -> np.ndarray:
    """Column ``name`` of an entry (strings) as a numpy object array of ``str``."""
    values = entry_column(batch, name)
    out = np.empty(len(values), dtype=object)
    out[:] = values.to_pylist()
    return out


def _check_layout(n_queries: int, n_docs: int, qcode: np.ndarray, dcode: np.ndarray,
                  values: np.ndarray, offsets: np.ndarray) -> None:
    """The invariants every reader's result holds (cheap ones: lengths and bounds)."""
    n = len(values)
    if not (len(qcode) == len(dcode) == n) or len(offsets) != n_queries + 1:
        raise ValueError("column lengths do not agree")
    if n and (int(offsets[0]) != 0 or int(offsets[-1]) != n):
        raise ValueError("offsets do not cover the entries")
    if n and (int(qcode.max()) >= n_queries or int(dcode.max()) >= n_docs
              or int(qcode.min()) < 0 or int(dcode.min()) < 0):
        raise ValueError("codes out of range")


def _qrels_from(batch: pa.RecordBatch, meta: dict[str, object], name: str) -> Qrels:
    if meta.get("kind") != "qrels":
        raise ValueError(f"an entry of {meta.get('kind')!r}, not qrels")
    qids = entry_strings(batch, "query_ids")
    docs = entry_column(batch, "doc_ids")
    qcode = entry_numbers(batch, "qcode", np.int32)
    dcode = entry_numbers(batch, "dcode", np.int32)
    grade = entry_numbers(batch, "grade", np.float64)
    offsets = entry_numbers(batch, "offsets", np.int64)
    _check_layout(len(qids), len(docs), qcode, dcode, grade, offsets)
    groups = entry_column(batch, "groups") if "groups" in batch.schema.names else None
    return Qrels(qids, docs, qcode, dcode, grade, offsets, name,
                 _warnings_in(meta.get("warnings"), name), groups)


def _runs_from(batch: pa.RecordBatch, meta: dict[str, object], name: str) -> list[ParsedRun]:
    systems = meta.get("systems")
    if meta.get("kind") != "runs" or not isinstance(systems, list):
        raise ValueError(f"an entry of {meta.get('kind')!r}, not runs")
    out = []
    for i, s in enumerate(systems):
        qids = entry_strings(batch, f"{i}.query_ids")
        docs = entry_column(batch, f"{i}.doc_ids")
        qcode = entry_numbers(batch, f"{i}.qcode", np.int32)
        dcode = entry_numbers(batch, f"{i}.dcode", np.int32)
        score = entry_numbers(batch, f"{i}.score", np.float64)
        offsets = entry_numbers(batch, f"{i}.offsets", np.int64)
        _check_layout(len(qids), len(docs), qcode, dcode, score, offsets)
        run = Run(str(s["name"]), qids, docs, qcode, dcode, score, offsets, name,
                  _warnings_in(s["warnings"], name))
        tag = s["tag"]
        out.append(ParsedRun(None if tag is None else str(tag), run,
                             int(s["missing_lines"]),
                             tuple(str(m) for m in s["missing_markers"])))
    return out


def _warnings_out(warnings: tuple[DataWarning, ...]) -> list[dict[str, object]]:
    return [{"code": w.code, "message": w.message, "count": w.count,
             "examples": list(w.examples), "of_file": w.source is not None}
            for w in warnings]


def _warnings_in(saved: object, name: str) -> tuple[DataWarning, ...]:
    """The reading's warnings, about the file now named ``name``."""
    if not isinstance(saved, list):
        raise ValueError("warnings are not a list")
    return tuple(DataWarning(str(w["code"]), str(w["message"]),
                             name if w["of_file"] else None, int(w["count"]),
                             tuple(str(x) for x in w["examples"])) for w in saved)


def _write_entry(path: Path, batch: pa.RecordBatch) -> None:
    """Write ``batch`` as an entry (IPC file, then the trailer with its length and CRC-32)
    to ``path`` through a temporary file in its folder and a rename. The IPC is streamed
    to the file by Arrow and its CRC-32 read back from it block by block, so no copy of
    the columns is held in memory (an entry of a 7M-line run is 300-400 MB)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    os.close(fd)
    try:
        with pa.OSFile(tmp, "wb") as sink, pa.ipc.new_file(sink, batch.schema) as writer:
            writer.write_batch(batch)
        crc, length = 0, 0
        with open(tmp, "r+b") as fh:
            while block := fh.read(_HASH_BLOCK):
                crc = zlib.crc32(block, crc)
                length += len(block)
            fh.write(_TRAILER.pack(_MAGIC, length, crc, ENTRY_FORMAT, 0, 0, 0))
        os.replace(tmp, path)
    except BaseException:
        _unlink(Path(tmp))
        raise


def _write_atomic(path: Path, *parts: memoryview | bytes) -> None:
    """Write ``parts`` to ``path`` through a temporary file in its folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            for p in parts:
                fh.write(p)
        os.replace(tmp, path)
    except BaseException:
        _unlink(Path(tmp))
        raise


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass

