"""Local files read slowly on purpose by Dask workers, for the tests of error order
(``tests/test_distributed.py``): the ``slowfile://`` protocol of fsspec.

Kept apart from the test module, so that a worker process unpickling the file system
imports this small module only (the test module imports scikit-learn, the CLI and the
whole package: over a second of CPU in each worker).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import fsspec
from distributed import get_worker
from fsspec.implementations.local import LocalFileSystem

__all__ = ["SlowFileSystem", "slow_url"]


class SlowFileSystem(LocalFileSystem):
    """Local files whose reads starting at chosen places are held, in a Dask worker only
    (the client reads at full speed), until the other workers are idle (every task the
    scheduler has sent them is done, in memory or failed, and none waits at the scheduler
    for a worker) but for reads held here: the task reading there finishes after the
    others (but those queued behind it on its own worker), so a later block or file fails
    first, however fast or loaded the machine. ``limit`` (seconds) bounds the hold.

    ``slow`` holds ``(file name, byte offset)`` pairs: the offset where a block's lines
    start (the block's one data read begins there; the reads that look for a block's
    ends begin a byte before a line start), or ``0`` with a whole file read as one block.
    """

    protocol = ("slowfile",)

    def __init__(self, slow: tuple[tuple[str, int], ...] = (), limit: float = 60.0,
                 **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.slow = frozenset(slow)
        self.limit = limit

    def _open(self, path: str, mode: str = "rb", **kwargs: Any) -> Any:
        return _SlowReads(super()._open(path, mode, **kwargs), Path(path).name, self)


fsspec.register_implementation("slowfile", SlowFileSystem, clobber=True)


class _SlowReads:
    def __init__(self, fh: Any, name: str, fs: SlowFileSystem) -> None:
        self.fh, self.name, self.fs = fh, name, fs

    def read(self, n: int = -1) -> bytes:
        if (self.name, self.fh.tell()) in self.fs.slow and _in_worker():
            _hold_until_the_others_are_done(self.fs.limit)
        return self.fh.read(n)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.fh, attr)

    def __enter__(self) -> _SlowReads:
        return self

    def __exit__(self, *exc: object) -> None:
        self.fh.close()


def _in_worker() -> bool:
    try:
        get_worker()
    except ValueError:
        return False
    return True


def _others_busy(dask_scheduler: Any, key: str, worker: str, hold: bool) -> bool:
    """On the scheduler: whether a task is still to run or running on another worker than
    ``worker``, or waits for one, besides the held reads (``key`` among them while
    ``hold``, dropped from them when not)."""
    held = dask_scheduler.__dict__.setdefault("_held_reads", set())
    (held.add if hold else held.discard)(key)
    return any(ts.key not in held and (
        ts.state in ("queued", "no-worker")
        or (ts.state == "processing" and ts.processing_on.address != worker))
        for ts in dask_scheduler.tasks.values())


def _hold_until_the_others_are_done(limit: float) -> None:
    """In a worker's task: wait until the other workers are idle and no task waits for a
    worker (:func:`_others_busy`), at most ``limit`` seconds."""
    from distributed import get_client

    worker = get_worker()
    client, key = get_client(), worker.get_current_task()
    deadline = time.monotonic() + limit
    try:
        while (client.run_on_scheduler(_others_busy, key=key, worker=worker.address,
                                       hold=True)
               and time.monotonic() < deadline):
            time.sleep(0.02)
    finally:
        client.run_on_scheduler(_others_busy, key=key, worker=worker.address, hold=False)


def slow_url(path: Path) -> str:
    """``path`` as a ``slowfile://`` URL (:class:`SlowFileSystem`)."""
    return f"slowfile://{path}"
