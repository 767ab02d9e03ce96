"""trec_eval 10.0 and 9.0.8 built from source for the tests (besides pytrec_eval, which embeds
9.0.8's code but prints nothing of its own).

``../shared/oracles/trec_eval-10.0`` and ``../shared/oracles/trec_eval-9.0.8`` hold NIST's
trec_eval sources. The session fixtures :func:`trec_eval_10` and :func:`trec_eval_9` copy one
into a temporary folder (never building inside ``shared/``), run ``make`` there and yield the
binary's path; under pytest-xdist the workers share one build, made by the first that asks
(a file lock). Without a C compiler the tests that use them are skipped with the reason, or
fail under ``CI=true`` (CI has gcc), as the PostgreSQL and browser tests do.

trec_eval prints 4 decimals, too few to compare per-query values within 1e-9. The fixture
:func:`trec_eval_10_precise` builds a second binary whose only change is the format of the
printed values (``%6.4f`` -> ``%.17g`` in ``meas_print_single.c`` and ``meas_print_final.c``,
in the temporary copy): every number is computed by the same code and printed exactly.
``trec_eval_10`` is the pristine build, the one the quicktest outputs are compared with.

Helpers:

* :func:`quicktest_commands` reads the table of trec_eval 10.0's quicktest commands from
  ``../shared/conformance/trec_eval-10.0/README.md`` (each expected output file and the
  command that produced it, with the "also with" variants);
* :func:`run` runs the binary and returns what it printed (an error names the command);
* :func:`write_qrels` / :func:`write_run` write ``{qid: {docid: value}}`` as TREC files, and
  :func:`parse_q` reads ``-q`` output back as ``{(measure, qid): text}``.

Use it from a test module with ``from trec_eval_oracle import ...`` (the tests directory is
on ``sys.path``) and request the ``trec_eval_10`` or ``trec_eval_9`` fixture (defined once, in
``conftest.py``).
"""

from __future__ import annotations

import fcntl
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

__all__ = ["CONFORMANCE_10", "SOURCE_9", "SOURCE_10", "SOURCES", "QuicktestCommand",
           "find_compiler", "parse_q", "quicktest_commands", "run", "trec_eval_9", "trec_eval_10",
           "trec_eval_10_precise", "write_qrels", "write_run"]

_SHARED = Path(__file__).resolve().parents[1].parent / "shared"
SOURCE_10 = _SHARED / "oracles" / "trec_eval-10.0"
SOURCE_9 = _SHARED / "oracles" / "trec_eval-9.0.8"
SOURCES = {"10.0": SOURCE_10, "9.0.8": SOURCE_9}
"""The source folder of each trec_eval version, by version."""
CONFORMANCE_10 = _SHARED / "conformance" / "trec_eval-10.0"
_BUILD_TIMEOUT = 300  # seconds
_RUN_TIMEOUT = 120


def find_compiler() -> str | None:
    """The C compiler to build with: ``$CC``, else ``gcc``, else ``cc`` (None when none)."""
    for name in (os.environ.get("CC"), "gcc", "cc"):
        if name:
            found = shutil.which(name)
            if found:
                return found
    return None


_PRINT_FILES = ("meas_print_single.c", "meas_print_final.c")


def build(source: Path, dest: Path, compiler: str, *, precise: bool = False) -> Path:
    """Copy trec_eval's ``source`` folder to ``dest`` and build it there; the binary's path.

    With ``make`` the Makefile's own rule is used (``CC`` set to ``compiler``); without it,
    every ``.c`` file of the folder is compiled as that rule does. ``precise`` prints values
    with ``%.17g`` instead of ``%6.4f`` (the copy's print files only).
    """
    shutil.copytree(source, dest, dirs_exist_ok=True)
    if precise:
        for name in _PRINT_FILES:
            text = (dest / name).read_text(encoding="latin-1")
            if "%6.4f" not in text:
                raise RuntimeError(f"{name} of {source.name} no longer prints with %6.4f")
            (dest / name).write_text(text.replace("%6.4f", "%.17g"), encoding="latin-1")
    make = shutil.which("make")
    if make is not None:
        command = [make, f"CC={compiler}", "trec_eval"]
    else:
        command = [compiler, "-I.", "-o", "trec_eval",
                   *sorted(p.name for p in dest.glob("*.c")), "-lm"]
    done = subprocess.run(command, cwd=dest, capture_output=True, text=True,
                          timeout=_BUILD_TIMEOUT, check=False)
    binary = dest / "trec_eval"
    if done.returncode != 0 or not binary.is_file():
        raise RuntimeError(f"building {source.name} failed ({' '.join(command)}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return binary


def _built(tmp_path_factory: pytest.TempPathFactory, *, precise: bool,
           version: str = "10.0") -> Path:
    source = SOURCES[version]
    if not (source / "Makefile").is_file():
        pytest.skip(f"trec_eval {version} source not found at {source}")
    compiler = find_compiler()
    if compiler is None:
        message = f"no C compiler (gcc or cc, or $CC) to build trec_eval {version} with"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    folder = f"{source.name}-precise" if precise else source.name
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        return build(source, tmp_path_factory.mktemp(folder), compiler, precise=precise)
    # pytest-xdist (make test runs two workers): the workers share one build, made by the
    # first that asks, in the folder above each worker's own temporary folder
    shared = tmp_path_factory.getbasetemp().parent / folder
    with (shared.parent / f"{folder}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        binary = shared / "trec_eval"
        return binary if binary.is_file() else build(source, shared, compiler,
                                                     precise=precise)


@pytest.fixture(scope="session")
def trec_eval_10(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The path of a trec_eval 10.0 binary built from ``SOURCE_10`` for this session."""
    yield _built(tmp_path_factory, precise=False)


@pytest.fixture(scope="session")
def trec_eval_10_precise(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """trec_eval 10.0 printing every value with ``%.17g`` (see the module docstring)."""
    yield _built(tmp_path_factory, precise=True)


@pytest.fixture(scope="session")
def trec_eval_9(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The path of a trec_eval 9.0.8 binary built from ``SOURCE_9`` for this session."""
    yield _built(tmp_path_factory, precise=False, version="9.0.8")


def run(binary: Path, args: list[str], *, cwd: Path | None = None) -> str:
    """What ``trec_eval ARGS`` prints on stdout; ``RuntimeError`` naming it when it fails."""
    done = subprocess.run([str(binary), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=_RUN_TIMEOUT, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"trec_eval {shlex.join(args)} exited {done.returncode}: "
                           f"{done.stderr.strip()[:500]}")
    return done.stdout


# ----------------------------------------------------------------------------- quicktest


@dataclass(frozen=True)
class QuicktestCommand:
    """One quicktest command: trec_eval's arguments and the file holding what it prints."""

    args: tuple[str, ...]
    expected: str

    def __str__(self) -> str:
        return f"trec_eval {shlex.join(self.args)} -> {self.expected}"


_ROW = re.compile(r"^\|\s*`(?P<out>out\.[^`]+)`\s*\|\s*`trec_eval (?P<cmd>[^`]+)`"
                  r"(?P<also>.*)\|\s*$")


def quicktest_commands(readme: Path = CONFORMANCE_10 / "README.md") -> list[QuicktestCommand]:
    """Every command of the README's table, in its order, "also with" variants after each.

    A variant (``(also with `qrels.test.with-comments`)``) gives another judgments file: it
    replaces the command's judgments argument (the one before the results file).
    """
    out: list[QuicktestCommand] = []
    for line in readme.read_text(encoding="utf-8").splitlines():
        row = _ROW.match(line)
        if row is None:
            continue
        args = tuple(shlex.split(row["cmd"]))
        out.append(QuicktestCommand(args, row["out"]))
        for other in re.findall(r"`([^`]+)`", row["also"]):
            out.append(QuicktestCommand((*args[:-2], other, args[-1]), row["out"]))
    return out


# ----------------------------------------------------------------------------- files


Nested = dict[str, dict[str, float]]


def _number(x: float) -> str:
    """A value as trec_eval reads it back exactly: integers plainly, others by repr."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def write_qrels(path: Path, qrels: Nested) -> Path:
    """``{qid: {docid: grade}}`` as a TREC qrels file (``qid 0 docid grade``)."""
    with path.open("w", encoding="utf-8") as f:
        for qid, docs in qrels.items():
            for doc, grade in docs.items():
                f.write(f"{qid} 0 {doc} {_number(grade)}\n")
    return path


def write_run(path: Path, run: Nested, tag: str = "sys") -> Path:
    """``{qid: {docid: score}}`` as a TREC run file (rank column 0: trec_eval ignores it)."""
    with path.open("w", encoding="utf-8") as f:
        for qid, docs in run.items():
            for doc, score in docs.items():
                f.write(f"{qid} Q0 {doc} 0 {float(score)!r} {tag}\n")
    return path


def parse_q(text: str) -> dict[tuple[str, str], str]:
    """trec_eval's output (``measure<TAB>qid<TAB>value`` lines) as ``{(measure, qid): value}``."""
    out: dict[tuple[str, str], str] = {}
    for line in text.splitlines():
        measure, qid, value = (field.strip() for field in line.split("\t"))
        out[(measure, qid)] = value
    return out
