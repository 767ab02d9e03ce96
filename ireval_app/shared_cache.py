"""The byte-bounded cache every page shares: :class:`SharedCache`, :data:`SHARED` and the
:func:`shared` decorator that caches a function in it, keyed by explicit arguments.

Generic: nothing here knows about files, datasets or pages (reading files is
:mod:`ireval_app.cache`, which caches its readers with :func:`shared`).

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
* freed memory goes back to the system: once a large object is freed,
  :func:`release_free_memory` runs (``malloc_trim``), and Arrow allocates with the system
  allocator in the app's process (:func:`use_system_memory_pool`), not mimalloc.

So when sessions end, what they computed is freed, and the server keeps at most the
budget. Functions computing from the data are cached with :func:`shared`
(``st.cache_resource`` and ``st.cache_data`` hold their entries until evicted by count,
whatever their size, and after every session has gone).

Nothing in this module reads widget values or other globals; :func:`shared` keeps a
session's own results in ``st.session_state`` under :data:`PINS_KEY`.
"""

from __future__ import annotations

import functools
import inspect
import logging
import os
import pickle
import queue
import threading
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar, cast

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ireval_core.sizes import memory_blocks

from .working import working

__all__ = [
    "CACHE_MB_VAR",
    "DEFAULT_CACHE_MB",
    "PINS_KEY",
    "RELEASE_AFTER_BYTES",
    "SHARED",
    "CacheStats",
    "SharedCache",
    "cache_budget",
    "release_free_memory",
    "shared",
    "use_system_memory_pool",
]

_log = logging.getLogger(__name__)

CACHE_MB_VAR = "IREVAL_CACHE_MB"
"""Environment variable: megabytes kept for later sessions (see the module docstring)."""

DEFAULT_CACHE_MB = 256
"""The budget when :data:`CACHE_MB_VAR` is not set."""

PINS_KEY = "ireval.cache.pins"
"""Session-state key of the results :func:`shared` keeps for the session itself."""

_P = ParamSpec("_P")
_R = TypeVar("_R")


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
            in_session = get_script_run_ctx(suppress_warning=True) is not None  # or a worker

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

