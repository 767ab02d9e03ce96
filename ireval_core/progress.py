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

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["reporting", "stage"]

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
