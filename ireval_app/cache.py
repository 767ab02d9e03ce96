"""Cached reading of qrels and runs into ``ireval_core`` objects.

Every input is identified by its file name and a digest of its bytes, so re-reading the
same upload costs one hash, not one parse. A file that cannot be read gives a
:class:`LoadedFile` carrying the :class:`~ireval_core.errors.FormatError`: errors are
cached and shown, never raised into the page, and hold nothing of the input.

Parsed files and their :class:`~ireval_core.dataset.Dataset` are shared between
sessions through the byte-bounded cache of :mod:`ireval_app.shared_cache` (see there
for the memory rules). The bundled sample and the folder of ``IREVAL_DATA_DIR`` are the
server's own data: read once and kept while the server runs, outside the budget.

Nothing in this module reads widget values, session state or other globals.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

from ireval_core.data import Qrels, Run, ids_coded_after
from ireval_core.dataset import Dataset, check_ahead
from ireval_core.errors import FormatError
from ireval_core.io import ReadLimits, read_qrels, shared_tag_names
from ireval_core.io.column_cache import ColumnCache, entry_key
from ireval_core.io.qrels_runs import ParsedRunFile, cached_qrels, cached_runs, parse_runs
from ireval_core.io.source import one_parse_thread
from ireval_core.options import EvalOptions

from .shared_cache import release_free_memory, shared
from .working import working

__all__ = [
    "DATA_DIR_VAR",
    "FORMATS_HELP",
    "SAMPLE_DIR",
    "READ_ATTEMPTS",
    "READ_MEMORY_VAR",
    "LoadedFile",
    "LoadedFiles",
    "StoredFile",
    "data_dir",
    "dataset_for",
    "digest",
    "load_default",
    "load_folder",
    "load_made_qrels",
    "load_qrels",
    "load_run_files",
    "load_uploads",
    "load_runs",
    "load_sample",
    "read_memory",
    "reads_comments",
    "remember_made_qrels",
    "resident_bytes",
    "without_traceback",
]

_log = logging.getLogger(__name__)

_R = TypeVar("_R")

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"
"""The bundled synthetic sample (``qrels.txt`` and ``run_*.txt``)."""

FORMATS_HELP = (
    "**Accepted formats**, recognised from the content (any file name, e.g. `results.test`, "
    "`input.runA`, `qrels.dl19-passage.txt`, or none): TREC qrels `qid iter docid grade` and "
    "TREC runs `qid Q0 docid rank score tag` (spaces or tabs); CSV or TSV with a header row "
    "(`qid`/`query`, `docid`/`doc`, `rel`/`grade`/`label` or `score`/`rank`, optional "
    "`tag`/`run`/`system`); Parquet with the same columns; Excel `.xlsx` (its first sheet "
    "with such a header row); JSON `{qid: {docid: value}}`. Any of them "
    "gzip-compressed.")
"""Listed under the uploaders: what can be uploaded."""



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
    comments:
        Whether TREC text was read with trec_eval 10.0's comment rule (lines starting
        with ``#`` skipped; :func:`reads_comments`) rather than 9.0.8's (data).
    """

    name: str
    digest: str
    qrels: Qrels | None = None
    runs: tuple[Run, ...] = ()
    error: FormatError | None = None
    size: int = 0
    sha256: str = ""
    comments: bool = False

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
    def comments(self) -> bool:
        """Whether the files were read with trec_eval 10.0's comment rule (see
        :attr:`LoadedFile.comments`; all of them are read with one rule)."""
        return any(f.comments for f in self.files)

    @property
    def key(self) -> str:
        """Fingerprint of the inputs (names, contents, order and the comment rule they
        were read with); the cache key of a dataset."""
        parts = [f"qrels\0{self.qrels.name}\0{self.qrels.digest}" if self.qrels else "qrels\0"]
        parts += [f"run\0{f.name}\0{f.digest}" for f in self.runs]
        parts += ["comments"] if self.comments else []
        return digest("\n".join(parts).encode())


def reads_comments(options: EvalOptions) -> bool:
    """Whether files are read with trec_eval 10.0's comment rule for ``options``: under
    ``trec_eval="10.0"`` a TREC text line starting with ``#`` is a comment (see
    :func:`ireval_core.io.read_qrels`), under 9.0.8 it is data."""
    return options.trec_eval == "10.0"


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


# ----------------------------------------------------------------------------- reading files


@dataclass(frozen=True, eq=False)
class StoredFile:
    """A file kept elsewhere (a saved dataset's file in the workspace), known by its
    SHA-256 and size: its bytes are fetched (``fetch()``) only when its columns are in
    neither the shared cache nor the column cache, so a dataset reopened after a restart,
    or by many sessions at once, is not read out of the workspace again."""

    sha256: str
    size: int
    fetch: Callable[[], bytes]


@dataclass(frozen=True, eq=False)
class _Ahead:
    """A run file whose parse was started on a reading thread (:func:`_read_in_turn`,
    :func:`load_uploads`): its ``data`` (a folder's path or an upload's bytes) and the
    parse to come, named when its turn comes."""

    data: bytes | Path
    parsed: Future[ParsedRunFile]


def _sha256_and_key_of(data: bytes | StoredFile) -> tuple[str, str]:
    if isinstance(data, StoredFile):
        return data.sha256, data.sha256[:32]
    return _sha256_and_key(data)


def load_qrels(name: str, data: bytes | StoredFile, *, comments: bool = False) -> LoadedFile:
    """Read a qrels file given its name and raw bytes (plain or gzip; or a
    :class:`StoredFile`, fetched only if needed); never raises.

    ``comments``: skip ``#`` lines as trec_eval 10.0 does (:func:`reads_comments`).
    Shared by ``(name, digest(data), comments)``: the session keeps the result (in its
    state).
    """
    sha, key = _sha256_and_key_of(data)
    return _read_qrels(name, key, comments, data, sha)


def load_made_qrels(name: str, recipe: str, make: Callable[[], bytes], *,
                    comments: bool = False) -> LoadedFile | None:
    """A qrels file made from other files (a saved dataset's qrels with the Judging
    page's labels merged in), read as :func:`load_qrels` reads ``make()``'s bytes, when
    the column cache knows what ``recipe`` makes; ``None`` when it does not (then make and
    read it, and :func:`remember_made_qrels`).

    ``recipe`` names everything the bytes are made from (the inputs' SHA-256s and the
    rule that makes them). The cache keeps, beside the parsed columns, the SHA-256 and size
    of the bytes that recipe made: the file is then a :class:`StoredFile` of that SHA-256,
    so its digest, SHA-256 and size are those of the made bytes, exactly, and ``make`` is
    called only when the columns themselves are no longer cached. Bytes made then that are
    not those remembered (a rule changed without its version) are an error, and the
    record is dropped.
    """
    columns = column_cache()
    if columns is None:
        return None
    key = _made_key(name, recipe, comments)
    got = columns.load(key)
    if got is None:
        return None
    meta = got[1]
    sha, size = meta.get("sha256"), meta.get("size")
    if not isinstance(sha, str) or len(sha) != 64 or not isinstance(size, int):
        columns.drop(key, "not a made file's SHA-256 and size")
        return None

    def remade() -> bytes:
        data = make()
        if hashlib.sha256(data).hexdigest() != sha:
            columns.drop(key, "made bytes differ from the ones remembered")
            raise FormatError("the qrels made again differ from the ones cached; "
                              "reload the page", source=name)
        return data

    return load_qrels(name, StoredFile(sha, size, remade), comments=comments)


def remember_made_qrels(name: str, recipe: str, loaded: LoadedFile, *,
                        comments: bool = False) -> None:
    """Keep the SHA-256 and size of ``loaded`` (read from the bytes ``recipe`` makes) in
    the column cache, for :func:`load_made_qrels`; nothing for a file that failed."""
    columns = column_cache()
    if columns is None or not loaded.ok or not loaded.sha256:
        return
    columns.store(_made_key(name, recipe, comments),
                  {}, {"sha256": loaded.sha256, "size": loaded.size})


def _made_key(name: str, recipe: str, comments: bool) -> str:
    """The column-cache key of what ``recipe`` made, read under this rule."""
    return entry_key(hashlib.sha256(recipe.encode()).hexdigest(), kind="made-qrels",
                     format="auto", name=name, comments=comments, one_run=False,
                     limits=ReadLimits.from_env())


def load_runs(name: str, data: bytes | StoredFile, *,
              taken_names: Sequence[tuple[str, str]] = (),
              comments: bool = False) -> LoadedFile:
    """Read a run file (one run per tag) given its name and raw bytes; never raises.

    ``taken_names`` are ``(run name, file name)`` pairs already in use: a clashing
    tag is renamed ``stem:tag`` with a warning naming both files (see
    :func:`ireval_core.io.read_runs`). ``comments``: skip ``#`` lines as trec_eval 10.0
    does. Shared by ``(name, digest(data), taken_names, comments)``.
    """
    sha, key = _sha256_and_key_of(data)
    return _read_runs(name, key, tuple(taken_names), comments, data, sha)


_Stamp = tuple[int, int, int]


@dataclass(frozen=True, eq=False)
class _Fetched:
    """A file of a folder with its SHA-256 and cache key (one hash computed once)."""

    name: str
    path: Path  # parsed from the file itself, block by block
    digest: str  # :func:`digest` (the cache key)
    sha256: str  # shown in reports, and the workspace's id of the file
    stamp: _Stamp | None = None  # the file as it was hashed (:func:`_stamp`)


def _stamp(st: os.stat_result) -> _Stamp:
    """What says a file changed: its size, modification time (ns) and inode (a file
    replaced by another, whatever its time)."""
    return st.st_size, st.st_mtime_ns, st.st_ino


def _fetch(path: Path) -> _Fetched:
    """Hash ``path`` in a stream (without the GIL: on a thread, beside a parse).

    Nothing of the bytes is kept: the reader then parses the file itself, block by block,
    so no copy of a whole file is held while it is parsed (a 7M-line run of UUIDs is
    600 MB). The file's :func:`_stamp` is taken before the hash: the reader compares it
    with the file's after the parse (:class:`_Changed`)."""
    with open(path, "rb") as fh:
        stamp = _stamp(os.fstat(fh.fileno()))
        sha = hashlib.file_digest(fh, hashlib.sha256).hexdigest()
    return _Fetched(path.name, path, sha[:32], sha, stamp)


class _Changed(Exception):
    """A folder's file changed between its hash and the end of its parse: what was parsed
    may not be what was hashed, so it is not cached under that digest."""


def _check_unchanged(data: bytes | Path | StoredFile, stamp: _Stamp | None) -> None:
    """Raise :class:`_Changed` when ``data`` is a file no longer as it was hashed."""
    if not isinstance(data, Path) or stamp is None:
        return
    try:
        now = _stamp(data.stat())
    except OSError:  # removed or renamed
        raise _Changed(data.name) from None
    if now != stamp:
        raise _Changed(data.name)


READ_ATTEMPTS = 3
"""How many times a folder's file that changes while it is read is hashed and parsed again
before the app says so (:func:`_read_fetched`)."""


def _read_fetched(got: _Fetched, read: Callable[[_Fetched], LoadedFile]) -> LoadedFile:
    """``read(got)``; when the file changed between its hash and its parse, hash and parse
    it again, :data:`READ_ATTEMPTS` times in all, then a :class:`LoadedFile` saying that
    the file changed while it was being read (not cached: the next visit reads it again)."""
    for attempt in range(READ_ATTEMPTS):
        try:
            return read(got)
        except _Changed:
            if attempt + 1 == READ_ATTEMPTS:
                break
            try:
                got = _fetch(got.path)
            except OSError as exc:
                return LoadedFile(got.name, got.digest, error=FormatError(
                    f"the file could not be read again after it changed ({exc.strerror}); "
                    "reload the page", source=got.name))
    return LoadedFile(got.name, got.digest, error=FormatError(
        f"the file changed while it was being read ({READ_ATTEMPTS} times); reload the page "
        "once it is written", source=got.name), sha256=got.sha256)


def load_run_files(files: Sequence[tuple[str, bytes | StoredFile]], *,
                   comments: bool = False) -> tuple[LoadedFile, ...]:
    """Read several ``(name, bytes)`` run files in order, keeping run names distinct.

    A file that fails does not affect the others. ``comments`` as in :func:`load_runs`.
    """
    out: list[LoadedFile] = []
    taken: list[tuple[str, str]] = []
    for name, data in files:
        loaded = load_runs(name, data, taken_names=taken, comments=comments)
        taken += [(r.name, name) for r in loaded.runs]
        out.append(loaded)
    return _named_by_file(out)


def load_uploads(qrels: tuple[str, bytes] | None,
                 runs: Sequence[tuple[str, bytes]] | None, *, comments: bool = False
                 ) -> tuple[LoadedFile | None, tuple[LoadedFile, ...] | None]:
    """A new upload read on both cores: ``load_qrels(*qrels)`` and
    ``load_run_files(runs)`` (``None`` for either: not read, ``None`` returned), the same
    files with the same names and numbers, read as :func:`_read_in_turn` reads a folder:
    the bytes hashed ahead on one thread, reading threads parsing in turn (the qrels
    beside the first run, each next run while the one before is coded, one coding at a
    time), the runs named in file order, their dataset checks made meanwhile. Never raises
    for a file that cannot be read (its :class:`LoadedFile` carries the error)."""
    files = list(runs) if runs is not None else []
    budget = read_memory()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ireval-hash") as hashing, \
            ThreadPoolExecutor(max_workers=3, thread_name_prefix="ireval-read") as reading:
        hashes = [hashing.submit(_sha256_and_key, data) for _, data in files]
        turns = [_Turn(len(qrels[1]) if qrels is not None else 0)] + [
            _Turn(len(data)) for _, data in files]
        turns[0].parsed.set()  # the first run parses beside the qrels, codes after them
        read_qrels: Future[LoadedFile] | None = None
        if qrels is not None:
            name, data = qrels
            read_qrels = reading.submit(_in_turn, None, turns[0], functools.partial(
                load_qrels, name, data, comments=comments))
        else:
            turns[0].coded.set()
        ahead = [reading.submit(_in_turn, _Room.of(turns, i + 1, budget), turns[i + 1],
                                functools.partial(_parse_upload, name, data, hashes[i],
                                                  comments))
                 for i, (name, data) in enumerate(files)]
        out: list[LoadedFile] = []
        taken: list[tuple[str, str]] = []
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="ireval-check") as checking:
            for i, ((name, data), hashed, parsed) in enumerate(zip(files, hashes, ahead,
                                                                   strict=True)):
                sha, key = hashed.result()
                loaded = _read_runs(name, key, tuple(taken), comments, _Ahead(data, parsed),
                                    sha)
                taken += [(r.name, name) for r in loaded.runs]
                out.append(loaded)
                _check_ahead(checking, read_qrels, loaded,
                             turns[i + 2].coded if i + 2 < len(turns) else None)
        return (read_qrels.result() if read_qrels is not None else None,
                _named_by_file(out) if runs is not None else None)


def _parse_upload(name: str, data: bytes, hashed: Future[tuple[str, str]], comments: bool
                  ) -> ParsedRunFile:
    """An uploaded run file parsed (not named) on a reading thread, once hashed (its
    column-cache entry is keyed by that hash)."""
    return parse_runs(data, name=name, comments=comments, cache=column_cache(),
                      content_sha256=hashed.result()[0])


def _named_by_file(files: Sequence[LoadedFile]) -> tuple[LoadedFile, ...]:
    """The run files with a tag that several of them carry named after each file, every
    one of them (``bm25:rank``; :func:`ireval_core.io.shared_tag_names`)."""
    runs = shared_tag_names([r for f in files for r in f.runs])
    out, at = [], 0
    for f in files:
        n = len(f.runs)
        named = tuple(runs[at:at + n])
        at += n
        out.append(f if all(a is b for a, b in zip(named, f.runs, strict=True))
                   else replace(f, runs=named))
    return tuple(out)


DATA_DIR_VAR = "IREVAL_DATA_DIR"
"""Environment variable naming a folder the app opens instead of the bundled sample."""


def data_dir() -> Path | None:
    """The folder of :data:`DATA_DIR_VAR` (``make run DATA=folder``), or ``None``."""
    value = os.environ.get(DATA_DIR_VAR, "").strip()
    return Path(value).expanduser().resolve() if value else None


def load_folder(directory: Path, *, comments: bool = False) -> LoadedFiles | None:
    """A folder of files: the first ``qrels*`` file is the qrels, every other file a run
    (hidden files and ``README*``/``*.md`` are skipped). ``None`` without a qrels file.

    Read once while the files stay the same (names, sizes, modification times) for
    each comment rule (``comments`` as in :func:`load_qrels`), and kept while the server
    runs (the server's own data, outside the cache budget).
    """
    files = sorted(p for p in directory.iterdir() if p.is_file()
                   and not p.name.startswith(".") and not p.name.lower().startswith("readme")
                   and p.suffix.lower() != ".md")
    qrels = [p for p in files if p.name.lower().startswith("qrels")]
    if not qrels:
        return None
    runs = [p for p in files if p != qrels[0]]
    return _resident(qrels[0], runs, comments)


def load_default(*, comments: bool = False) -> tuple[LoadedFiles | None, bool]:
    """The data shown before the user uploads: (files, whether it is the bundled sample).

    The folder of ``IREVAL_DATA_DIR`` when it is set, else the bundled sample;
    ``comments`` as in :func:`load_qrels`.
    """
    folder = data_dir()
    if folder is not None:
        return load_folder(folder, comments=comments), False
    return load_sample(comments=comments), True


def load_sample(directory: Path = SAMPLE_DIR, *,
                comments: bool = False) -> LoadedFiles | None:
    """The bundled sample: ``qrels.txt`` and every ``run_*.txt``; ``None`` when absent.

    Read once per comment rule and kept while the server runs (like
    :func:`load_folder`).
    """
    qrels_path = directory / "qrels.txt"
    if not qrels_path.is_file():
        return None
    return _resident(qrels_path, sorted(directory.glob("run_*.txt")), comments)


_RESIDENT: OrderedDict[tuple[object, ...], LoadedFiles] = OrderedDict()
_RESIDENT_LOCK = threading.Lock()
_MAX_RESIDENT = 4  # sets of server files kept (the sample, a data folder, their updates)


def _resident(qrels_path: Path, run_paths: Sequence[Path], comments: bool) -> LoadedFiles:
    """The files read once per (paths, sizes, modification times, comment rule) and
    kept."""
    paths = (qrels_path, *run_paths)
    stats = [p.stat() for p in paths]
    key = tuple((str(p.resolve()), s.st_size, s.st_mtime_ns) for p, s in zip(paths, stats,
                                                                             strict=True)
                ) + (comments,)
    with _RESIDENT_LOCK:
        if key in _RESIDENT:
            _RESIDENT.move_to_end(key)
            return _RESIDENT[key]
    files = _read_in_turn(qrels_path, run_paths, comments)
    with _RESIDENT_LOCK:
        _RESIDENT[key] = files
        while len(_RESIDENT) > _MAX_RESIDENT:
            _RESIDENT.popitem(last=False)
    return files


def _read_in_turn(qrels_path: Path, run_paths: Sequence[Path], comments: bool
                  ) -> LoadedFiles:
    """The qrels and runs of ``paths``, read as :func:`load_qrels` and
    :func:`load_run_files` read them, on both cores: every file is hashed ahead on one
    thread (each digest computed once), and reading threads take the files in turn
    (:func:`_in_turn`): the qrels beside the first run; each next run parsed once the one
    before codes its ids, so that its parse fills the core that single-threaded coding
    leaves free, when the memory allows (:class:`_Room`: the overlaps are bounded by
    :func:`read_memory`); a run codes its ids once the run before has coded its own
    (:func:`~ireval_core.data.ids_coded_after`: one coding at a time). The runs are named
    in file order once each is read (:func:`~ireval_core.io.qrels_runs.parse_runs`), and
    each run's dataset checks are made on another thread meanwhile (:func:`_check_ahead`).
    A file that changes between its hash and the end of its parse is hashed and parsed
    again (:func:`_read_fetched`), so a parse is never cached under the digest of other
    bytes."""
    paths = [qrels_path, *run_paths]
    runs: list[LoadedFile] = []
    taken: list[tuple[str, str]] = []
    budget = read_memory()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ireval-hash") as hashing, \
            ThreadPoolExecutor(max_workers=3, thread_name_prefix="ireval-read") as reading:
        hashes = [hashing.submit(_fetch, p) for p in paths]
        turns = [_Turn(_size_of(p)) for p in paths]
        qrels = reading.submit(_in_turn, None, turns[0], lambda: _read_fetched(
            hashes[0].result(), functools.partial(_fetched_qrels, comments)))
        # the first run parses beside the qrels (no wait), codes after them
        turns[0].parsed.set()
        ahead = [reading.submit(_in_turn, _Room.of(turns, i, budget), turns[i],
                                functools.partial(_parse_fetched, hashes[i], comments))
                 for i in range(1, len(paths))]
        with ThreadPoolExecutor(max_workers=2, thread_name_prefix="ireval-check") as checking:
            for i, parsed in enumerate(ahead, start=1):
                got = hashes[i].result()
                loaded = _read_fetched(got, functools.partial(
                    _fetched_runs_ahead, tuple(taken), comments, got, parsed))
                taken += [(r.name, got.name) for r in loaded.runs]
                runs.append(loaded)
                _check_ahead(checking, qrels, loaded,
                             turns[i + 1].coded if i + 1 < len(turns) else None)
        return LoadedFiles(qrels.result(), _named_by_file(runs))


def _check_ahead(checking: ThreadPoolExecutor, qrels: Future[LoadedFile] | None,
                 loaded: LoadedFile, after: threading.Event | None) -> None:
    """The dataset checks of the runs of ``loaded`` against the qrels being read
    (:func:`ireval_core.dataset.check_ahead`), on ``checking``'s threads while the next
    files are read, once ``after`` is set (the next file has coded its ids: the checks'
    document map does not add to that step's peak): the Data page's summary then finds them
    made. Two threads: the last two runs' checks, left for the end of the reading, are made
    side by side on both cores. Nothing when the qrels could not be read; an error is left
    to the summary, which computes the checks again."""
    for run in loaded.runs:
        checking.submit(_checked, qrels, run, after)


def _checked(qrels: Future[LoadedFile] | None, run: Run, after: threading.Event | None
             ) -> None:
    if after is not None:
        after.wait()
    judged = qrels.result().qrels if qrels is not None else None
    if judged is None:
        return
    try:
        check_ahead(judged, run)
    except Exception:  # noqa: BLE001 - the summary computes them again and says why
        _log.debug("dataset checks ahead of %s failed", run.name, exc_info=True)


@dataclass(frozen=True, eq=False)
class _Turn:
    """One file's steps as the files read after it see them: its text is parsed
    (``parsed``), its ids are coded and that step's memory given back (``coded``), its
    read is over (``finished``); its ``size`` in bytes of text (what its parse and coding
    hold is estimated from it)."""

    size: int
    parsed: threading.Event = field(default_factory=threading.Event)
    coded: threading.Event = field(default_factory=threading.Event)
    finished: threading.Event = field(default_factory=threading.Event)
    """Its read is over (ordered too) and the memory it freed given back."""


@dataclass(frozen=True, eq=False)
class _Room:
    """When a run file's parse may start, in turn with the run before (``before``), whose
    coding may start once ``coding`` is set (the file before it has coded its ids).

    The parse starts once the run before is parsed and has started coding, so at most one
    parsed run waits for its turn to code. It runs beside that coding (the core the coding
    leaves free) when the memory fits: the process's resident bytes now, plus the growth
    of the coding under way and the columns of this parse, estimated from the two files'
    sizes (:data:`CODING_PER_BYTE`, :data:`PARSED_PER_BYTE`), within ``budget``
    (:func:`read_memory`); or, when the file before that one was still ordering its rows,
    once it is finished and the memory fits then; otherwise once the run before has coded
    its ids and given that memory back, beside its ordering. The run then codes its ids
    (:meth:`wait_to_code`) once the run before has coded its own, beside that run's
    ordering if this coding's growth fits too, else once the run before is finished. The
    numbers do not depend on any of it: only when each step starts."""

    before: _Turn
    coding: threading.Event
    size: int
    budget: int
    beside: bool = True  # False: the first run, parsed beside the qrels' read
    earlier: _Turn | None = None  # the file before ``before``: its end gives memory back

    @classmethod
    def of(cls, turns: Sequence[_Turn], i: int, budget: int) -> tuple[_Turn, _Room]:
        """``(turns[i - 1], the room of turns[i])``: ``turns[0]`` is the qrels, whose
        ``parsed`` is set from the start (the first run parses beside them)."""
        if i == 1:  # the first run: beside the qrels, at once, with pyarrow's threads
            return turns[0], cls(turns[0], turns[0].parsed, turns[1].size, budget, False)
        return turns[i - 1], cls(turns[i - 1], turns[i - 2].coded, turns[i].size, budget,
                                 earlier=turns[i - 2])

    def wait(self) -> bool:
        """Block until this parse may start; whether it starts beside the run before's
        coding (``False``: that coding is over, or the first run's turn)."""
        self.before.parsed.wait()
        self.coding.wait()
        if not self.beside or self.before.coded.is_set():
            return False
        if self.fits():
            return True
        _log.debug("the next run's parse waits for the run before to code its ids "
                   "(%s bytes of memory to read in)", f"{self.budget:,}")
        earlier = self.earlier
        if earlier is not None and not earlier.finished.is_set():
            # the file before that one still orders its rows: once it is finished and its
            # memory given back, look again, counting what the coding under way may have
            # freed meanwhile (its query ids) as still to come
            while not self.before.coded.wait(_POLL):
                if earlier.finished.is_set():
                    if self._room(self._need() + FREED_PER_BYTE * self.before.size):
                        return True
                    break
        self.before.coded.wait()
        return False

    def wait_to_code(self, timeout: float | None = None) -> bool:
        """Block until this run may code its ids (a
        :class:`~ireval_core.data.CodingTurn`): once the run before has coded its own,
        beside that run's ordering when the estimated growth of this coding fits the
        budget now, otherwise once the run before is finished and its memory given back.
        ``timeout`` is not used: the run waits for its turn, which always comes (every
        file's events are set when its read ends)."""
        self.before.coded.wait()
        if self.before.finished.is_set() or self._room(CODING_PER_BYTE * self.size):
            return True
        _log.debug("a run's coding waits for the run before to finish (%s bytes of "
                   "memory to read in)", f"{self.budget:,}")
        self.before.finished.wait()
        return True

    def fits(self) -> bool:
        """Whether the memory estimated for this parse beside the coding under way stays
        within the budget (no when the resident bytes cannot be read)."""
        return self._room(self._need())

    def _need(self) -> float:
        return CODING_PER_BYTE * self.before.size + PARSED_PER_BYTE * self.size

    def _room(self, need: float) -> bool:
        resident = resident_bytes()
        return resident is not None and resident + need <= self.budget


READ_MEMORY_VAR = "IREVAL_READ_MEMORY"
"""Environment variable: the bytes of resident memory within which several run files read
together may overlap (a parse beside a coding); a count of bytes (``2.5e9``, ``4000000000``).
Not a hard bound: one run's own parse and coding, one after the other, take what they take."""

DEFAULT_READ_MEMORY = 2_500_000_000
"""The default of :data:`READ_MEMORY_VAR` (at most half the machine's memory)."""

PARSED_PER_BYTE = 1.5
"""Bytes of parsed columns per byte of run text, at most (measured on 7M-line runs: 1.46
with 25-byte document ids, 0.88 with UUIDs for queries and documents)."""

CODING_PER_BYTE = 1.4
"""Bytes a run's coding of its ids adds to its parsed columns at its peak, per byte of
run text, at most (measured: 1.35 with 25-byte ids, 1.18 with UUIDs)."""

FREED_PER_BYTE = 0.5
"""Bytes a run's coding may have freed in its first second (its query-id column), per byte
of run text, at most (measured: 0.23 with 25-byte ids, 0.43 with UUIDs): counted as still to
come when a parse's room is looked at again during that coding."""

_POLL = 0.05  # s: how often a parse waiting for memory looks at the file before's end


def read_memory() -> int:
    """The memory budget of a read of several run files (:data:`READ_MEMORY_VAR`, else
    :data:`DEFAULT_READ_MEMORY` or half the machine's memory if less)."""
    raw = os.environ.get(READ_MEMORY_VAR, "").strip()
    if raw:
        try:
            value = float(raw)
        except ValueError:
            _log.warning("%s=%r is not a number of bytes; using the default", READ_MEMORY_VAR,
                         raw)
        else:
            if value >= 0:
                return int(value)
            _log.warning("%s=%r is negative; using the default", READ_MEMORY_VAR, raw)
    total = _machine_bytes()
    return DEFAULT_READ_MEMORY if total is None else min(DEFAULT_READ_MEMORY, total // 2)


def resident_bytes() -> int | None:
    """This process's resident memory now (Linux ``/proc/self/statm``), or ``None``."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _machine_bytes() -> int | None:
    try:
        return os.sysconf("SC_PHYS_PAGES") * _PAGE
    except (ValueError, OSError, AttributeError):
        return None


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _size_of(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _in_turn(order: tuple[_Turn, _Room] | None, this: _Turn, read: Callable[[], _R]) -> _R:
    """``read()`` on a reading thread, in turn with the file before (``order``: its steps
    and this file's :class:`_Room`; ``None`` for the qrels, read at once). The parse starts
    when :meth:`_Room.wait` says, and this file's run codes its ids when
    :meth:`_Room.wait_to_code` says (:func:`~ireval_core.data.ids_coded_after`). A parse
    that starts while the file before codes its ids is made by pyarrow on this thread alone
    (:func:`~ireval_core.io.source.one_parse_thread`): that coding holds one core, the
    parse takes the other, and neither waits for a third thread. This file's events are
    set as it gets there, and all of them when the read ends, whatever happens, after the
    memory it freed went back to the system."""
    try:
        beside = order[1].wait() if order is not None else False
        with ids_coded_after(_CodingGate(order[1]) if order is not None else None,
                             parsed=this.parsed, coded=this.coded), \
                (one_parse_thread() if beside else contextlib.nullcontext()):
            return read()
    finally:
        release_free_memory()
        this.parsed.set()
        this.coded.set()
        this.finished.set()


@dataclass(frozen=True)
class _CodingGate:
    """A :class:`_Room`'s :meth:`~_Room.wait_to_code` as a
    :class:`~ireval_core.data.CodingTurn`."""

    room: _Room

    def wait(self, timeout: float | None = None) -> bool:
        return self.room.wait_to_code(timeout)


def _parse_fetched(fetched: Future[_Fetched], comments: bool) -> ParsedRunFile:
    """A folder's run file parsed (not named) on a reading thread, once hashed: its
    column-cache entry is keyed by that hash, and stored only if the file kept its stamp."""
    got = fetched.result()
    return parse_runs(got.path, name=got.name, comments=comments, cache=column_cache(),
                      content_sha256=got.sha256, content_stamp=got.stamp)


def _fetched_qrels(comments: bool, got: _Fetched) -> LoadedFile:
    return _read_qrels(got.name, got.digest, comments, got.path, got.sha256, got.stamp)


def _fetched_runs(taken_names: tuple[tuple[str, str], ...], comments: bool, got: _Fetched
                  ) -> LoadedFile:
    return _read_runs(got.name, got.digest, taken_names, comments, got.path, got.sha256,
                      got.stamp)


def _fetched_runs_ahead(taken_names: tuple[tuple[str, str], ...], comments: bool,
                        first: _Fetched, parsed: Future[ParsedRunFile], got: _Fetched
                        ) -> LoadedFile:
    """:func:`_fetched_runs`, taking the parse of ``first`` made on a reading thread
    (``parsed``); a file hashed again after it changed (``got`` is not ``first``) is
    parsed here."""
    if got is not first:
        return _fetched_runs(taken_names, comments, got)
    return _read_runs(got.name, got.digest, taken_names, comments,
                      _Ahead(got.path, parsed), got.sha256, got.stamp)


def dataset_for(files: LoadedFiles | None) -> Dataset | None:
    """The :class:`Dataset` of the files that were read; ``None`` without files or valid
    qrels.

    Runs whose file failed are simply absent. Shared by :attr:`LoadedFiles.key`, so the
    same inputs give the same object (and its memoised checks) on every rerun and in
    every session holding them.
    """
    if files is None or files.qrels is None or files.qrels.qrels is None:
        return None
    runs = tuple(r for f in files.runs for r in f.runs)
    return _build_dataset(files.key, files.qrels.qrels, runs)


# ----------------------------------------------------------------------------- cached kernels
# Arguments starting with "_" are not part of the key: the digest before them stands for
# their content. The sessions hold what they read (state.set_loaded), hence no pins.


@shared()
def _read_qrels(name: str, data_digest: str, comments: bool, _data: bytes | Path | StoredFile,
                _sha256: str = "", _stamp: _Stamp | None = None) -> LoadedFile:
    def parse(file: LoadedFile) -> LoadedFile:
        columns = column_cache()
        hit = (cached_qrels(columns, _data.sha256, name=name, comments=comments)
               if columns is not None and isinstance(_data, StoredFile) else None)
        if hit is None:
            hit = read_qrels(_fetched(_data), name=name, comments=comments, cache=columns,
                             content_sha256=file.sha256,
                             content_stamp=_stamp_of(_data, _stamp))
        return replace(file, qrels=hit)

    return _read_file(name, data_digest, "qrels", comments, _data, _sha256, _stamp, parse)


@shared()
def _read_runs(name: str, data_digest: str, taken_names: tuple[tuple[str, str], ...],
               comments: bool, _data: bytes | Path | StoredFile | _Ahead, _sha256: str = "",
               _stamp: _Stamp | None = None) -> LoadedFile:
    def parse(file: LoadedFile) -> LoadedFile:
        if isinstance(_data, _Ahead):  # parsed on a reading thread: named here, in turn
            return replace(file, runs=tuple(_data.parsed.result().named(dict(taken_names))))
        columns = column_cache()
        hit = (cached_runs(columns, _data.sha256, name=name, taken_names=dict(taken_names),
                           comments=comments)
               if columns is not None and isinstance(_data, StoredFile) else None)
        if hit is None:
            hit = parse_runs(_fetched(_data), name=name, comments=comments, cache=columns,
                             content_sha256=file.sha256,
                             content_stamp=_stamp_of(_data, _stamp)).named(dict(taken_names))
        return replace(file, runs=tuple(hit))

    return _read_file(name, data_digest, "run", comments, _data, _sha256, _stamp, parse)


def _fetched(data: bytes | Path | StoredFile) -> bytes | Path:
    """The bytes of a :class:`StoredFile` (read now), or ``data`` as it is."""
    return data.fetch() if isinstance(data, StoredFile) else data


def _read_file(name: str, data_digest: str, kind: str, comments: bool,
               data: bytes | Path | StoredFile | _Ahead,
               sha256: str, stamp: _Stamp | None,
               parse: Callable[[LoadedFile], LoadedFile]) -> LoadedFile:
    """One qrels or run file read by ``parse`` (given the file without content, it returns
    the file with its qrels or runs), or the error that stopped it, with the size and
    SHA-256 of its bytes; raises when the file changed meanwhile (then nothing is cached)."""
    if isinstance(data, _Ahead):
        data = data.data
    size, sha = _size_and_sha256(data, sha256)
    empty = LoadedFile(name, data_digest, size=size, sha256=sha, comments=comments)
    with _spinner(f"Reading {name}…"), _released():
        try:
            loaded = parse(empty)
        except FormatError as exc:  # kept: the message, not the frames (they hold the data)
            loaded = replace(empty, error=without_traceback(exc))
        except Exception as exc:  # the app must show a message, never a traceback
            loaded = replace(empty, error=_unexpected(name, kind, exc))
    _check_unchanged(data, stamp)  # else not cached: raises
    return loaded


@shared()
def _build_dataset(key: str, _qrels: Qrels, _runs: tuple[Run, ...]) -> Dataset:
    return Dataset(_qrels, _runs)


def column_cache() -> ColumnCache | None:
    """The parsed-column cache every read of the app goes through
    (:mod:`ireval_core.io.column_cache`: a file read before, uploaded again, reopened from
    the workspace or found in a folder after a restart, is mapped instead of parsed);
    ``None`` when ``IREVAL_CACHE=off``. Entries are keyed by the SHA-256 the app has
    already computed for the file; a folder file changed after it was hashed is not
    stored (its stamp is compared after the read)."""
    return ColumnCache.from_env()




def _stamp_of(data: bytes | Path | StoredFile, stamp: _Stamp | None) -> _Stamp | None:
    """A folder file's stamp from when it was hashed (the column cache keeps its read only
    if the file still has it); ``None`` for bytes."""
    return stamp if isinstance(data, Path) else None


def _size_and_sha256(data: bytes | Path | StoredFile, sha256: str) -> tuple[int, str]:
    """Bytes and SHA-256 of an upload, a folder's file or a stored file (``sha256`` when
    known)."""
    if isinstance(data, StoredFile):
        return data.size, data.sha256
    if isinstance(data, Path):
        return data.stat().st_size, sha256 or _fetch(data).sha256
    return len(data), sha256 or hashlib.sha256(data).hexdigest()


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
