"""Cached reading of qrels and runs, keyed by explicit arguments only.

Every input is identified by its file name and a digest of its bytes, so re-reading the
same upload (or the bundled sample on every rerun) costs one hash, not one parse. The
parsed objects are immutable, so they are cached with ``st.cache_resource`` and shared
rather than copied. A file that cannot be read gives a :class:`LoadedFile` carrying the
:class:`~ireval_core.errors.FormatError`: errors are cached and shown, never raised
into the page.

Nothing in this module reads widget values, session state or other globals.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ireval_core.data import Qrels, Run
from ireval_core.dataset import Dataset
from ireval_core.errors import FormatError
from ireval_core.io import read_qrels, read_runs

__all__ = [
    "SAMPLE_DIR",
    "FORMATS_HELP",
    "LoadedFile",
    "LoadedFiles",
    "dataset_for",
    "digest",
    "load_qrels",
    "load_run_files",
    "load_runs",
    "load_sample",
    "load_default",
    "load_folder",
    "data_dir",
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

_MAX_CACHED_FILES = 32


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
    """Hex digest identifying ``data`` (BLAKE2b, 128 bits)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def load_qrels(name: str, data: bytes) -> LoadedFile:
    """Read a qrels file given its name and raw bytes (plain or gzip); never raises.

    Cached by ``(name, digest(data))``.
    """
    with st.spinner(f"Reading {name}…"):
        return _read_qrels(name, digest(data), data)


def load_runs(name: str, data: bytes, *,
              taken_names: Sequence[tuple[str, str]] = ()) -> LoadedFile:
    """Read a run file (one run per tag) given its name and raw bytes; never raises.

    ``taken_names`` are ``(run name, file name)`` pairs already in use: a clashing
    tag is renamed ``stem:tag`` with a warning naming both files (see
    :func:`ireval_core.io.read_runs`). Cached by ``(name, digest(data), taken_names)``.
    """
    with st.spinner(f"Reading {name}…"):
        return _read_runs(name, digest(data), tuple(taken_names), data)


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
    (hidden files and ``README*``/``*.md`` are skipped). ``None`` without a qrels file."""
    files = sorted(p for p in directory.iterdir() if p.is_file()
                   and not p.name.startswith(".") and not p.name.lower().startswith("readme")
                   and p.suffix.lower() != ".md")
    qrels = [p for p in files if p.name.lower().startswith("qrels")]
    if not qrels:
        return None
    runs = [p for p in files if p != qrels[0]]
    return LoadedFiles(load_qrels(qrels[0].name, qrels[0].read_bytes()),
                       load_run_files([(p.name, p.read_bytes()) for p in runs]))


def load_default() -> tuple[LoadedFiles | None, bool]:
    """The data shown before the user uploads: (files, whether it is the bundled sample).

    The folder of ``IREVAL_DATA_DIR`` when it is set, else the bundled sample.
    """
    folder = data_dir()
    if folder is not None:
        return load_folder(folder), False
    return load_sample(), True


def load_sample(directory: Path = SAMPLE_DIR) -> LoadedFiles | None:
    """The bundled sample: ``qrels.txt`` and every ``run_*.txt``; ``None`` when absent."""
    qrels_path = directory / "qrels.txt"
    if not qrels_path.is_file():
        return None
    run_paths = sorted(directory.glob("run_*.txt"))
    return LoadedFiles(
        load_qrels(qrels_path.name, qrels_path.read_bytes()),
        load_run_files([(p.name, p.read_bytes()) for p in run_paths]),
    )


def dataset_for(files: LoadedFiles) -> Dataset | None:
    """The :class:`Dataset` of the files that were read; ``None`` without valid qrels.

    Runs whose file failed are simply absent. Cached by :attr:`LoadedFiles.key`, so the
    same inputs give the same object (and its memoised checks) on every rerun.
    """
    if files.qrels is None or files.qrels.qrels is None:
        return None
    runs = tuple(r for f in files.runs for r in f.runs)
    return _build_dataset(files.key, files.qrels.qrels, runs)


# ----------------------------------------------------------------------------- cached kernels
# Arguments starting with "_" are not hashed: the digest before them stands for their content.


@st.cache_resource(max_entries=_MAX_CACHED_FILES, show_spinner=False)
def _read_qrels(name: str, data_digest: str, _data: bytes) -> LoadedFile:
    size, sha = len(_data), hashlib.sha256(_data).hexdigest()
    try:
        return LoadedFile(name, data_digest, qrels=read_qrels(_data, name=name), size=size,
                          sha256=sha)
    except FormatError as exc:  # cached: keep the message, not the frames (they hold _data)
        return LoadedFile(name, data_digest, error=exc.with_traceback(None), size=size,
                          sha256=sha)
    except Exception as exc:  # the app must show a message, never a traceback
        return LoadedFile(name, data_digest, error=_unexpected(name, "qrels", exc), size=size,
                          sha256=sha)


@st.cache_resource(max_entries=_MAX_CACHED_FILES, show_spinner=False)
def _read_runs(name: str, data_digest: str, taken_names: tuple[tuple[str, str], ...],
               _data: bytes) -> LoadedFile:
    size, sha = len(_data), hashlib.sha256(_data).hexdigest()
    try:
        runs = read_runs(_data, name=name, taken_names=dict(taken_names))
        return LoadedFile(name, data_digest, runs=tuple(runs), size=size, sha256=sha)
    except FormatError as exc:  # cached: keep the message, not the frames (they hold _data)
        return LoadedFile(name, data_digest, error=exc.with_traceback(None), size=size,
                          sha256=sha)
    except Exception as exc:  # the app must show a message, never a traceback
        return LoadedFile(name, data_digest, error=_unexpected(name, "run", exc), size=size,
                          sha256=sha)


@st.cache_resource(max_entries=8, show_spinner=False)
def _build_dataset(key: str, _qrels: Qrels, _runs: tuple[Run, ...]) -> Dataset:
    return Dataset(_qrels, _runs)


def _unexpected(name: str, kind: str, exc: Exception) -> FormatError:
    _log.exception("unexpected error reading %s %s", kind, name)
    error = FormatError(f"could not read this {kind} file ({type(exc).__name__})", source=name)
    error.__suppress_context__ = True  # nothing of the input kept alive by the cache
    return error
