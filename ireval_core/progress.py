"""Stage reports from long work (reading, ordering, joining, evaluating), for a progress line.

The readers and :func:`~ireval_core.evaluate.evaluate` call :func:`stage` when they
start a new step; nothing happens unless a caller asked to hear about it with
:func:`reporting`. The reporter lives in a :class:`contextvars.ContextVar`, so it
belongs to the thread (or task) that set it: two app sessions reading at once each see
their own stages.

>>> seen = []
>>> with reporting(seen.append):
...     stage("parsing")
>>> seen
['parsing']
>>> stage("ignored")  # nobody listening: a no-op
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TextIO

__all__ = ["TerminalStatus", "reporting", "stage"]

_REPORTER: ContextVar[Callable[[str], None] | None] = ContextVar("ireval_progress",
                                                                default=None)


def stage(name: str) -> None:
    """Report that the current work enters stage ``name`` (a few words, no period)."""
    report = _REPORTER.get()
    if report is not None:
        report(name)


@contextmanager
def reporting(callback: Callable[[str], None]) -> Iterator[None]:
    """Call ``callback(stage)`` for every :func:`stage` reported inside the block."""
    token = _REPORTER.set(callback)
    try:
        yield
    finally:
        _REPORTER.reset(token)


class TerminalStatus:
    """A one-line status on a terminal: the current stage and the seconds so far.

    Use as the callback of :func:`reporting` and as a context manager around the work.
    Nothing is written for work shorter than ``delay`` seconds; after that the line is
    redrawn every ``interval`` seconds (``label: stage (3.2 s)``) from a background
    thread, and cleared at the end, so the output that follows starts on a clean line.

    >>> import io
    >>> err = io.StringIO()
    >>> with TerminalStatus(err, delay=10) as status, reporting(status):
    ...     stage("parsing")
    >>> err.getvalue()  # quick work: nothing written
    ''
    """

    def __init__(self, stream: TextIO, *, delay: float = 1.0, interval: float = 0.25) -> None:
        self.stream = stream
        self.delay = delay
        self.interval = interval
        self.label = ""
        self._stage = ""
        self._drawn = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._start = 0.0

    def __call__(self, name: str) -> None:
        self._stage = name

    def line(self) -> str:
        """The status as it is drawn now."""
        what = ": ".join(p for p in (self.label, self._stage) if p) or "working"
        return f"{what} ({time.monotonic() - self._start:.1f} s)"

    def _draw(self) -> None:
        if self._done.wait(self.delay):
            return
        while True:
            self.stream.write("\r\x1b[K" + self.line())
            self.stream.flush()
            self._drawn = True
            if self._done.wait(self.interval):
                return

    def __enter__(self) -> TerminalStatus:
        self._start = time.monotonic()
        self._thread = threading.Thread(target=self._draw, name="ireval-status", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop drawing and clear the line (before other output goes to the terminal)."""
        self._done.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._drawn:  # leave the terminal as it was
            self._drawn = False
            self.stream.write("\r\x1b[K")
            self.stream.flush()

    def __exit__(self, *exc: object) -> None:
        self.stop()
