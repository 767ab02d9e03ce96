"""A spinner that says which stage long work is in (reading, ordering, joining, ...).

:func:`working` shows Streamlit's spinner with a title and, below it, the stage the
core reports through :mod:`ireval_core.progress` with the seconds elapsed, so half a
minute on a seven-million-line run is not a silent wait. Outside a script run (tests,
benchmarks) it does nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ireval_core import progress

from .text import md_escape

__all__ = ["working"]


@contextmanager
def working(title: str) -> Iterator[None]:
    """Show ``title`` with a spinner and the current stage while the block runs.

    ``title`` is shown literally (file names are escaped); the stage line is removed
    when the block ends.
    """
    if get_script_run_ctx() is None:
        yield
        return
    start = time.perf_counter()
    with st.spinner(md_escape(title)):
        line = st.empty()

        def show(stage: str) -> None:
            line.caption(f"{md_escape(stage)}… ({time.perf_counter() - start:.1f} s so far)")

        try:
            with progress.reporting(show):
                yield
        finally:
            line.empty()
