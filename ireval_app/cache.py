"""Cached reading of qrels and runs, and the byte-bounded cache every page shares.

Every input is identified by its file name and a digest of its bytes, so re-reading the
same upload costs one hash, not one parse. A file that cannot be read gives a
:class:`LoadedFile` carrying the :class:`~ireval_core.errors.FormatError`: errors are
cached and shown, never raised into the page, and hold nothing of the input.

Memory
------
Parsed files and everything computed from them (evaluations, curves, comparisons,
labeling results) go through one :class:`SharedCache`, :data:`SHARED`:

* an object some session still uses is shared by every session asking for it: the
  cache holds it *weakly*, the sessions hold it (their ``st.session_state``, which
  Streamlit drops when a session ends);
* besides, the most recently used objects are kept strongly within a byte budget,
  ``IREVAL_CACHE_MB`` megabytes (default 256), so that a new session does not redo
  the work of one that just ended. Sizes are measured from the arrays an object keeps
  alive (:func:`ireval_core.sizes.memory_blocks`, an array two objects share counted
  once). An object larger than a quarter of the budget is not kept for others: it
  lives as long as a session holds it;
* the bundled sample and the folder of ``IREVAL_DATA_DIR`` are the server's own data:
  read once and kept while the server runs, outside the budget;
* freed memory goes back to the system: once a large object is freed,
  :func:`release_free_memory` runs (``malloc_trim``), and Arrow allocates with the system
  allocator in the app's process (:func:`use_system_memory_pool`), not mimalloc.

So when sessions end, what they read is freed, and the server keeps at most the budget.
Functions computing from the data are cached with :func:`shared` (``st.cache_resource``
and ``st.cache_data`` hold their entries until evicted by count, whatever their size,
and after every session has gone).

Nothing in this module reads widget values or other globals; :func:`shared` keeps a
session's own results in ``st.session_state`` under :data:`PINS_KEY`.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import inspect
import logging
import os
import pickle
import queue
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ParamSpec, TypeVar, cast

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ireval_core.data import Qrels, Run
from ireval_core.dataset import Dataset
from ireval_core.errors import FormatError
from ireval_core.io import read_qrels, read_runs
from ireval_core.sizes import memory_blocks

from .working import working

__all__ = [
    "SAMPLE_DIR",
    "FORMATS_HELP",
    "CACHE_MB_VAR",
    "DEFAULT_CACHE_MB",
    "PINS_KEY",
    "SHARED",
    "CacheStats",
    "LoadedFile",
    "LoadedFiles",
    "SharedCache",
    "cache_budget",
    "dataset_for",
    "digest",
    "load_qrels",
    "load_run_files",
    "load_runs",
    "load_sample",
    "load_default",
    "load_folder",
    "data_dir",
    "shared",
    "release_free_memory",
    "use_system_memory_pool",
    "RELEASE_AFTER_BYTES",
    "without_traceback",
    "DATA_DIR_VAR",
]

_log = logging.getLogger(__name__)

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"
"""The bundled synthetic sample (``qrels.txt`` and ``run_*.txt``)."""

FORMATS_HELP = (
    "**Accepted formats**, recognised from the content (any file name, e.g. `results.test`, "
    "`input.runA`, `qrels.dl19-passage.txt`, or none): TREC qrels `qid iter docid grade` and "
    "TREC runs `qid Q0 docid rank score tag` (spaces or tabs); CSV or TSV with a header row "
    "(`qid`/`query`, `docid`/`doc`, `rel`/`grade`/`label` or `score`/`rank`, optional "
    "`tag`/`run`/`system`); Parquet with the same columns; JSON `{qid: {docid: value}}`. "
    "Any of them gzip-compressed.")
"""Listed under the uploaders: what can be uploaded."""

CACHE_MB_VAR = "IREVAL_CACHE_MB"
"""Environment variable: megabytes kept for later sessions (see the module docstring)."""

DEFAULT_CACHE_MB = 256
"""The budget when :data:`CACHE_MB_VAR` is not set."""

PINS_KEY = "ireval.cache.pins"
"""Session-state key of the results :func:`shared` keeps for the session itself."""

_P = ParamSpec("_P")
_R = TypeVar("_R")


@dataclass(frozen=True, eq=False)
class LoadedFile:
    """One input file after reading: its qrels or runs, or the error that stopped it.

    Attributes
    ----------
    name:
        The file name (as uploaded), used in every message.
    digest:
        Hex digest of the raw bytes (see :func:`digest`).
    qrels:
        The judgments, for a qrels file read without error.
    runs:
        The systems of a run file read without error (one per tag).
    error:
        Why the file could not be read, or ``None``.
    size, sha256:
        The size and SHA-256 of the raw bytes (shown in reports).
    """

    name: str
    digest: str
    qrels: Qrels | None = None
    runs: tuple[Run, ...] = ()
    error: FormatError | None = None
    size: int = 0
    sha256: str = ""

    @property
    def ok(self) -> bool:
        """Whether the file was read without error."""
        return self.error is None


@dataclass(frozen=True, eq=False)
class LoadedFiles:
    """The qrels file and run files currently chosen, each read or failed on its own."""

    qrels: LoadedFile | None = None
    runs: tuple[LoadedFile, ...] = ()

    @property
    def files(self) -> tuple[LoadedFile, ...]:
        """The qrels file (if any), then the run files."""
        return ((self.qrels,) if self.qrels is not None else ()) + self.runs

    @property
    def errors(self) -> list[FormatError]:
        """The errors of the files that could not be read, in file order."""
        return [f.error for f in self.files if f.error is not None]

    @property
    def is_empty(self) -> bool:
        return not self.files

    @property
    def key(self) -> str:
        """Fingerprint of the inputs (names, contents and order); the cache key of a dataset."""
        parts = [f"qrels\0{self.qrels.name}\0{self.qrels.digest}" if self.qrels else "qrels\0"]
        parts += [f"run\0{f.name}\0{f.digest}" for f in self.runs]
        return digest("\n".join(parts).encode())


def digest(data: bytes) -> str:
    """Hex digest identifying ``data``: the first 128 bits of its SHA-256.

    SHA-256, not a second hash function, because the workspace identifies a file by its
    SHA-256 too (:func:`_sha256_and_key` computes both from one pass over the bytes),
    and it is the faster of the two on CPUs with SHA extensions (0.53 s against BLAKE2b's
    0.77 s per GB here).
    """
    return hashlib.sha256(data).hexdigest()[:32]


def _sha256_and_key(data: bytes) -> tuple[str, str]:
    """``data``'s SHA-256 (hex) and its :func:`digest`, from one pass over the bytes."""
    sha = hashlib.sha256(data).hexdigest()
    return sha, sha[:32]


# ----------------------------------------------------------------------------- the shared cache


def cache_budget(value: str | None = None) -> int:
    """The byte budget of :data:`SHARED`: ``value`` (default: :data:`CACHE_MB_VAR`) in
    megabytes (MiB, a number >= 0), else :data:`DEFAULT_CACHE_MB`.

    >>> cache_budget("64"), cache_budget("0.5"), cache_budget(""), cache_budget("lots")
    (67108864, 524288, 268435456, 268435456)
    """
    text = (os.environ.get(CACHE_MB_VAR, "") if value is None else value).strip()
    if text:
        try:
            megabytes = float(text)
        except ValueError:
            megabytes = -1.0
        if megabytes >= 0 and megabytes != float("inf"):
            return int(megabytes * 2**20)
        _log.warning("%s=%r is not a number of megabytes >= 0; using %d", CACHE_MB_VAR,
                     text, DEFAULT_CACHE_MB)
    return DEFAULT_CACHE_MB * 2**20


@dataclass(frozen=True)
class CacheStats:
    """What a :class:`SharedCache` holds.

    Attributes
    ----------
    kept:
        Entries held strongly (kept for later sessions).
    kept_bytes:
        Bytes those entries keep alive, each array counted once (<= ``budget``).
    budget:
        The byte budget of the strongly held entries.
    shared:
        Entries reachable at all: kept, or held by some session (weakly referenced).
    hits, misses:
        Lookups that found an entry, and those that computed it.
    """

    kept: int
    kept_bytes: int
    budget: int
    shared: int
    hits: int
    misses: int


@dataclass
class _Entry:
    value: object
    blocks: dict[Hashable, int]


class _Pickled:
    """A result kept as its pickle: every caller unpickles its own copy."""

    __slots__ = ("blob", "__weakref__")

    def __init__(self, blob: bytes) -> None:
        self.blob = blob


class SharedCache:
    """Objects shared between sessions: weakly while sessions hold them, and the most
    recently used strongly within ``budget`` bytes.

    :meth:`get` returns the object stored under a key, computing it (once, even when
    several threads ask at the same time) when no session holds it and it is not kept.
    An object larger than ``budget / 4`` (:attr:`max_entry`) is never kept: only the
    sessions holding it keep it alive. Thread-safe.

    >>> import numpy as np
    >>> c = SharedCache(budget=64_000)
    >>> a = c.get("a", lambda: np.zeros(1000))  # 8,000 bytes: kept
    >>> c.get("a", lambda: None) is a, c.stats().kept_bytes >= 8000
    (True, True)
    >>> big = c.get("big", lambda: np.zeros(10_000))  # 80,000 bytes: over a quarter
    >>> c.stats().kept, c.stats().shared  # shared while this code holds it, not kept
    (1, 2)
    >>> del big
    >>> c.stats().shared
    1
    """

    def __init__(self, budget: int) -> None:
        self.budget = max(0, int(budget))
        self._lock = threading.RLock()  # weakref callbacks may run inside a locked section
        self._kept: OrderedDict[Hashable, _Entry] = OrderedDict()
        self._block_users: dict[Hashable, list[int]] = {}  # block -> [entries using it, size]
        self._kept_bytes = 0
        self._weak: dict[Hashable, weakref.ref[Any]] = {}
        self._computing: dict[Hashable, list[Any]] = {}  # key -> [lock, threads waiting]
        self._sizes: dict[Hashable, int] = {}  # bytes of each weakly held object
        self._hits = 0
        self._misses = 0

    @property
    def max_entry(self) -> int:
        """The largest object (bytes) kept for later sessions: a quarter of the budget."""
        return self.budget // 4

    def get(self, key: Hashable, compute: Callable[[], _R]) -> _R:
        """The object under ``key``; ``compute()`` makes it when none is reachable."""
        found = self._lookup(key)
        if found is not None:
            return cast(_R, found[0])
        with self._lock:
            slot = self._computing.setdefault(key, [threading.Lock(), 0])
            slot[1] += 1
        try:
            with slot[0]:  # one computation per key; the others wait and find it
                found = self._lookup(key)
                if found is not None:
                    return cast(_R, found[0])
                with self._lock:
                    self._misses += 1
                value = compute()
                self.put(key, value)
                return value
        finally:
            with self._lock:
                slot[1] -= 1
                if not slot[1]:
                    del self._computing[key]

    def put(self, key: Hashable, value: object) -> None:
        """Store ``value`` under ``key``: shared (when it can be weakly referenced) and
        kept within the budget (when at most :attr:`max_entry` bytes)."""
        blocks = memory_blocks(value)
        size = sum(blocks.values())
        with self._lock:
            self._drop(key)
            try:
                self._weak[key] = weakref.ref(value, functools.partial(self._expired, key))
                self._sizes[key] = size
            except TypeError:  # tuples, strings: only kept (or not) below
                pass
            if size > self.max_entry:
                return
            self._keep(key, _Entry(value, blocks))
        self._remeasure()
        with self._lock:
            while self._kept_bytes > self.budget and len(self._kept) > 1:
                self._unkeep(next(iter(self._kept)))  # the least recently used

    def stats(self) -> CacheStats:
        """Counts of what is held (see :class:`CacheStats`)."""
        with self._lock:
            alive = {k for k, ref in self._weak.items() if ref() is not None}
            return CacheStats(kept=len(self._kept), kept_bytes=self._kept_bytes,
                              budget=self.budget, shared=len(alive | self._kept.keys()),
                              hits=self._hits, misses=self._misses)

    def live_keys(self) -> list[Hashable]:
        """The keys whose object is reachable (kept, or held by some session)."""
        with self._lock:
            alive = [k for k, ref in self._weak.items() if ref() is not None]
            return alive + [k for k in self._kept if k not in self._weak]

    def clear(self) -> None:
        """Forget every entry (sessions keep the objects they hold)."""
        with self._lock:
            for key in list(self._kept):
                self._unkeep(key)
            self._weak.clear()
            self._sizes.clear()

    def _lookup(self, key: Hashable) -> tuple[object] | None:
        with self._lock:
            entry = self._kept.get(key)
            if entry is not None:
                self._kept.move_to_end(key)
                self._hits += 1
                return (entry.value,)
            ref = self._weak.get(key)
            value = ref() if ref is not None else None
            if value is None:
                return None
            self._hits += 1
            return (value,)

    def _keep(self, key: Hashable, entry: _Entry) -> None:
        self._kept[key] = entry
        for block, nbytes in entry.blocks.items():
            users = self._block_users.setdefault(block, [0, nbytes])
            if users[0] == 0:
                self._kept_bytes += nbytes
            users[0] += 1

    def _remeasure(self) -> None:
        """Measure the kept entries again: some grow after they are stored (a dataset's
        memoised checks and kept joins); one grown over :attr:`max_entry` is let go."""
        with self._lock:
            entries = list(self._kept.items())
        for key, entry in entries:
            blocks = memory_blocks(entry.value)
            if blocks.keys() == entry.blocks.keys():
                continue
            with self._lock:
                if self._kept.get(key) is not entry:
                    continue
                position = list(self._kept).index(key)
                self._unkeep(key)
                if sum(blocks.values()) > self.max_entry:
                    continue
                self._keep(key, _Entry(entry.value, blocks))
                for later in list(self._kept)[position:-1]:  # back to its place in the order
                    self._kept.move_to_end(later)

    def _drop(self, key: Hashable) -> None:
        self._weak.pop(key, None)
        self._sizes.pop(key, None)
        if key in self._kept:
            self._unkeep(key)

    def _unkeep(self, key: Hashable) -> None:
        entry = self._kept.pop(key)
        for block in entry.blocks:
            users = self._block_users[block]
            users[0] -= 1
            if users[0] == 0:
                self._kept_bytes -= users[1]
                del self._block_users[block]

    def _expired(self, key: Hashable, ref: weakref.ref[Any]) -> None:
        """An object no session holds any more has been freed."""
        with self._lock:
            if self._weak.get(key) is not ref:
                return
            del self._weak[key]
            size = self._sizes.pop(key, 0)
        if size >= RELEASE_AFTER_BYTES:
            _release_soon()


RELEASE_AFTER_BYTES = 8 * 2**20
"""Freeing an object at least this large gives the freed memory back to the system."""

_RELEASE_DELAY = 1.0  # seconds: one release after a session's objects are all gone
_RELEASES: queue.SimpleQueue[float] = queue.SimpleQueue()


def release_free_memory() -> None:
    """Give memory that was freed back to the operating system.

    pyarrow's memory pool and glibc's ``malloc`` both keep freed blocks for reuse; after
    a session's files are freed, the server's resident memory only goes down once they
    are released: ``pyarrow.default_memory_pool().release_unused()`` and glibc's
    ``malloc_trim(0)`` (skipped where there is no glibc).
    """
    import pyarrow as pa

    pa.default_memory_pool().release_unused()
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    import ctypes
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return cast(Callable[[int], int], trim)


def _release_soon() -> None:
    """:func:`release_free_memory` once, shortly after the last of a burst of frees
    (a session ending frees several objects at once), on the releaser thread.

    Called from weakref callbacks, which run wherever the collector frees an object,
    possibly while this thread holds :mod:`threading`'s own locks: so this only puts
    a note in a :class:`queue.SimpleQueue` (safe there). Starting a thread here
    deadlocked the app: ``Thread.start`` waited for a thread that needed a lock the
    waiting thread held.
    """
    _RELEASES.put(time.monotonic())


def _releaser() -> None:
    """The releaser thread: after each burst of frees, one :func:`release_free_memory`."""
    while True:
        _RELEASES.get()
        while True:  # wait until frees stop arriving for _RELEASE_DELAY seconds
            try:
                _RELEASES.get(timeout=_RELEASE_DELAY)
            except queue.Empty:
                break
        try:
            release_free_memory()
        except Exception:  # noqa: BLE001 - memory stays with the process; log why
            _log.exception("could not give freed memory back to the system")


threading.Thread(target=_releaser, name="ireval-memory-release", daemon=True).start()


SHARED = SharedCache(cache_budget())
"""The cache of this server process (budget from :data:`CACHE_MB_VAR`)."""


def use_system_memory_pool() -> str:
    """Make Arrow allocate with the system allocator (glibc ``malloc``); returns the
    backend in use.

    pyarrow's default, mimalloc, keeps memory freed by one thread in the heap of the
    thread that allocated it, and only that thread can give it back: in the app, the
    threads that read an upload (a session's script thread, Arrow's pool) are not the
    ones that free it when the session ends, and 165 MiB of a 356 MB upload stayed
    resident (``benchmarks/bench_memory.py``). The system allocator gives memory back
    from any thread (:func:`release_free_memory`), and reads as fast here. An explicit
    ``ARROW_DEFAULT_MEMORY_POOL`` is respected.
    """
    import pyarrow as pa

    if not os.environ.get("ARROW_DEFAULT_MEMORY_POOL"):
        pa.set_memory_pool(pa.system_memory_pool())
    return str(pa.default_memory_pool().backend_name)


use_system_memory_pool()


def shared(*, copy: bool = False, session_entries: int = 0,
           show_spinner: str | None = None) -> Callable[[Callable[_P, _R]], Callable[_P, _R]]:
    """Cache a function in :data:`SHARED`, keyed by its arguments not starting with ``_``.

    As with ``st.cache_resource``, an argument whose name starts with ``_`` is not part
    of the key (a digest or key argument before it stands for its content); the other
    arguments must be hashable.

    Parameters
    ----------
    copy:
        The result is mutable (pandas tables): it is stored pickled, and every call
        returns its own copy, as ``st.cache_data`` does. Otherwise the result is
        immutable and the same object is returned to everyone.
    session_entries:
        How many of its own results of this function a session holds (in
        ``st.session_state``, dropped with the session), so that a result too large to
        be kept for others is still not recomputed on every rerun. 0: none (the caller
        keeps what it needs).
    show_spinner:
        Text of the spinner shown while the function computes.
    """

    def decorate(fn: Callable[_P, _R]) -> Callable[_P, _R]:
        signature = inspect.signature(fn)
        name = f"{fn.__module__}.{fn.__qualname__}"

        @functools.wraps(fn)
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            key = (name, *((k, v) for k, v in bound.arguments.items()
                           if not k.startswith("_")))
            in_session = get_script_run_ctx() is not None

            def compute() -> object:
                if show_spinner and in_session:
                    with working(show_spinner):
                        result: object = fn(*args, **kwargs)
                else:
                    result = fn(*args, **kwargs)
                return _Pickled(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)) \
                    if copy else result

            pinned = _pinned(name, key) if session_entries and in_session else None
            if pinned is not None:
                stored = pinned[0]
            else:
                stored = SHARED.get(key, compute)
                if session_entries and in_session:
                    _pin(name, key, stored, session_entries)
            if copy:
                return cast(_R, pickle.loads(cast(_Pickled, stored).blob))
            return cast(_R, stored)

        return wrapper

    return decorate


def _session_pins() -> dict[str, OrderedDict[Hashable, object]]:
    pins = st.session_state.get(PINS_KEY)
    if not isinstance(pins, dict):
        pins = {}
        st.session_state[PINS_KEY] = pins
    return pins


def _pinned(name: str, key: Hashable) -> tuple[object] | None:
    held = _session_pins().get(name)
    if held is None or key not in held:
        return None
    held.move_to_end(key)
    return (held[key],)


def _pin(name: str, key: Hashable, value: object, limit: int) -> None:
    held = _session_pins().setdefault(name, OrderedDict())
    held[key] = value
    held.move_to_end(key)
    while len(held) > limit:
        held.popitem(last=False)


# ----------------------------------------------------------------------------- reading files


def load_qrels(name: str, data: bytes) -> LoadedFile:
    """Read a qrels file given its name and raw bytes (plain or gzip); never raises.

    Shared by ``(name, digest(data))``: the session keeps the result (in its state).
    """
    sha, key = _sha256_and_key(data)
    return _read_qrels(name, key, data, sha)


def load_runs(name: str, data: bytes, *,
              taken_names: Sequence[tuple[str, str]] = ()) -> LoadedFile:
    """Read a run file (one run per tag) given its name and raw bytes; never raises.

    ``taken_names`` are ``(run name, file name)`` pairs already in use: a clashing
    tag is renamed ``stem:tag`` with a warning naming both files (see
    :func:`ireval_core.io.read_runs`). Shared by ``(name, digest(data), taken_names)``.
    """
    sha, key = _sha256_and_key(data)
    return _read_runs(name, key, tuple(taken_names), data, sha)


@dataclass(frozen=True, eq=False)
class _Fetched:
    """A file's bytes with their SHA-256 and cache key (one hash computed once)."""

    name: str
    data: bytes
    digest: str  # :func:`digest` (the cache key)
    sha256: str  # shown in reports, and the workspace's id of the file


def _fetch(path: Path) -> _Fetched:
    """Read ``path`` and hash it once (both without the GIL: on a thread, beside a parse)."""
    data = path.read_bytes()
    sha, key = _sha256_and_key(data)
    return _Fetched(path.name, data, key, sha)


def load_run_files(files: Sequence[tuple[str, bytes]]) -> tuple[LoadedFile, ...]:
    """Read several ``(name, bytes)`` run files in order, keeping run names distinct.

    A file that fails does not affect the others.
    """
    out: list[LoadedFile] = []
    taken: list[tuple[str, str]] = []
    for name, data in files:
        loaded = load_runs(name, data, taken_names=taken)
        taken += [(r.name, name) for r in loaded.runs]
        out.append(loaded)
    return tuple(out)


DATA_DIR_VAR = "IREVAL_DATA_DIR"
"""Environment variable naming a folder the app opens instead of the bundled sample."""


def data_dir() -> Path | None:
    """The folder of :data:`DATA_DIR_VAR` (``make run DATA=folder``), or ``None``."""
    value = os.environ.get(DATA_DIR_VAR, "").strip()
    return Path(value).expanduser().resolve() if value else None


def load_folder(directory: Path) -> LoadedFiles | None:
    """A folder of files: the first ``qrels*`` file is the qrels, every other file a run
    (hidden files and ``README*``/``*.md`` are skipped). ``None`` without a qrels file.

    Read once while the files stay the same (names, sizes, modification times), and
    kept while the server runs (the server's own data, outside the cache budget).
    """
    files = sorted(p for p in directory.iterdir() if p.is_file()
                   and not p.name.startswith(".") and not p.name.lower().startswith("readme")
                   and p.suffix.lower() != ".md")
    qrels = [p for p in files if p.name.lower().startswith("qrels")]
    if not qrels:
        return None
    runs = [p for p in files if p != qrels[0]]
    return _resident(qrels[0], runs)


def load_default() -> tuple[LoadedFiles | None, bool]:
    """The data shown before the user uploads: (files, whether it is the bundled sample).

    The folder of ``IREVAL_DATA_DIR`` when it is set, else the bundled sample.
    """
    folder = data_dir()
    if folder is not None:
        return load_folder(folder), False
    return load_sample(), True


def load_sample(directory: Path = SAMPLE_DIR) -> LoadedFiles | None:
    """The bundled sample: ``qrels.txt`` and every ``run_*.txt``; ``None`` when absent.

    Read once and kept while the server runs (like :func:`load_folder`).
    """
    qrels_path = directory / "qrels.txt"
    if not qrels_path.is_file():
        return None
    return _resident(qrels_path, sorted(directory.glob("run_*.txt")))


_RESIDENT: OrderedDict[tuple[object, ...], LoadedFiles] = OrderedDict()
_RESIDENT_LOCK = threading.Lock()
_MAX_RESIDENT = 4  # sets of server files kept (the sample, a data folder, their updates)


def _resident(qrels_path: Path, run_paths: Sequence[Path]) -> LoadedFiles:
    """The files read once per (paths, sizes, modification times) and kept."""
    paths = (qrels_path, *run_paths)
    stats = [p.stat() for p in paths]
    key = tuple((str(p.resolve()), s.st_size, s.st_mtime_ns) for p, s in zip(paths, stats,
                                                                             strict=True))
    with _RESIDENT_LOCK:
        if key in _RESIDENT:
            _RESIDENT.move_to_end(key)
            return _RESIDENT[key]
    files = _read_in_turn(qrels_path, run_paths)
    with _RESIDENT_LOCK:
        _RESIDENT[key] = files
        while len(_RESIDENT) > _MAX_RESIDENT:
            _RESIDENT.popitem(last=False)
    return files


def _read_in_turn(qrels_path: Path, run_paths: Sequence[Path]) -> LoadedFiles:
    """The qrels and runs of ``paths``, read as :func:`load_qrels` and
    :func:`load_run_files` read them, with the next file's bytes read and hashed on a
    thread while this one is parsed: at most two files' bytes are held at once, and each
    digest is computed once."""
    paths = [qrels_path, *run_paths]
    runs: list[LoadedFile] = []
    taken: list[tuple[str, str]] = []
    qrels: LoadedFile | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ireval-read") as pool:
        ahead: Future[_Fetched] = pool.submit(_fetch, paths[0])
        for i in range(len(paths)):
            got = ahead.result()
            if i + 1 < len(paths):
                ahead = pool.submit(_fetch, paths[i + 1])
            if i == 0:
                qrels = _read_qrels(got.name, got.digest, got.data, got.sha256)
            else:
                loaded = _read_runs(got.name, got.digest, tuple(taken), got.data, got.sha256)
                taken += [(r.name, got.name) for r in loaded.runs]
                runs.append(loaded)
            del got  # its bytes: the parse keeps nothing of them
    return LoadedFiles(qrels, tuple(runs))


def dataset_for(files: LoadedFiles) -> Dataset | None:
    """The :class:`Dataset` of the files that were read; ``None`` without valid qrels.

    Runs whose file failed are simply absent. Shared by :attr:`LoadedFiles.key`, so the
    same inputs give the same object (and its memoised checks) on every rerun and in
    every session holding them.
    """
    if files.qrels is None or files.qrels.qrels is None:
        return None
    runs = tuple(r for f in files.runs for r in f.runs)
    return _build_dataset(files.key, files.qrels.qrels, runs)


# ----------------------------------------------------------------------------- cached kernels
# Arguments starting with "_" are not part of the key: the digest before them stands for
# their content. The sessions hold what they read (state.set_loaded), hence no pins.


@shared()
def _read_qrels(name: str, data_digest: str, _data: bytes, _sha256: str = "") -> LoadedFile:
    size, sha = len(_data), _sha256 or hashlib.sha256(_data).hexdigest()
    with _spinner(f"Reading {name}…"), _released():
        try:
            return LoadedFile(name, data_digest, qrels=read_qrels(_data, name=name),
                              size=size, sha256=sha)
        except FormatError as exc:  # kept: the message, not the frames (they hold _data)
            return LoadedFile(name, data_digest, error=without_traceback(exc), size=size,
                              sha256=sha)
        except Exception as exc:  # the app must show a message, never a traceback
            return LoadedFile(name, data_digest, error=_unexpected(name, "qrels", exc),
                              size=size, sha256=sha)


@shared()
def _read_runs(name: str, data_digest: str, taken_names: tuple[tuple[str, str], ...],
               _data: bytes, _sha256: str = "") -> LoadedFile:
    size, sha = len(_data), _sha256 or hashlib.sha256(_data).hexdigest()
    with _spinner(f"Reading {name}…"), _released():
        try:
            runs = read_runs(_data, name=name, taken_names=dict(taken_names))
            return LoadedFile(name, data_digest, runs=tuple(runs), size=size, sha256=sha)
        except FormatError as exc:  # kept: the message, not the frames (they hold _data)
            return LoadedFile(name, data_digest, error=without_traceback(exc), size=size,
                              sha256=sha)
        except Exception as exc:  # the app must show a message, never a traceback
            return LoadedFile(name, data_digest, error=_unexpected(name, "run", exc),
                              size=size, sha256=sha)


@shared()
def _build_dataset(key: str, _qrels: Qrels, _runs: tuple[Run, ...]) -> Dataset:
    return Dataset(_qrels, _runs)


@contextlib.contextmanager
def _released() -> Iterator[None]:
    """Give the memory a read freed back to the system once it is done (one trim per
    file: the reader itself does not trim under the system allocator, between stages)."""
    try:
        yield
    finally:
        release_free_memory()


def _spinner(text: str) -> Any:
    """A spinner with the stage of the work (:func:`ireval_app.working.working`) in a
    script run; nothing elsewhere (tests, benchmarks)."""
    return working(text)


def without_traceback(exc: FormatError) -> FormatError:
    """``exc`` without traceback, context or cause: it holds nothing of the input."""
    exc.__traceback__ = None
    exc.__context__ = exc.__cause__ = None
    exc.__suppress_context__ = True
    return exc


def _unexpected(name: str, kind: str, exc: Exception) -> FormatError:
    _log.exception("unexpected error reading %s %s", kind, name)
    error = FormatError(f"could not read this {kind} file ({type(exc).__name__})", source=name)
    error.__suppress_context__ = True  # nothing of the input kept alive by the cache
    return error
