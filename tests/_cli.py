"""The command line run in the test's own process, for tests about what it computes.

``tests/test_cli.py`` runs ``python -m ireval_core`` as a user does, in a subprocess;
a test that checks numbers, records or messages of a command calls :func:`run` instead
and saves the interpreter's start and imports (about a second each on the shared
machine). :func:`run` gives what the subprocess gives: the exit status, and stdout and
stderr as text, with the working directory at the repository's root, standard output
and error not terminals (so the commands print JSON and no status line), and Python
warnings written to stderr as an interpreter does. Not a test module.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
import warnings
from pathlib import Path
from typing import Any

from ireval_core.cli import main

ROOT = Path(__file__).resolve().parents[1]


def run(*args: object) -> subprocess.CompletedProcess[str]:
    """``python -m ireval_core *args`` in this process; the arguments as text."""
    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()

    def show(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
             line: str | None = None) -> None:
        err.write(warnings.formatwarning(message, category, filename, lineno, line))

    with contextlib.chdir(ROOT), contextlib.redirect_stdout(out), \
            contextlib.redirect_stderr(err), warnings.catch_warnings():
        warnings.resetwarnings()
        warnings.simplefilter("default")
        warnings.showwarning = show
        try:
            status = main(argv)
        except SystemExit as exc:  # argparse: a usage error (2) or --help (0)
            status = exc.code if isinstance(exc.code, int) else 1
    return subprocess.CompletedProcess(["ireval_core", *argv], status, out.getvalue(),
                                       err.getvalue())
