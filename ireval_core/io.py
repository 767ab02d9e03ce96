"""Readers for qrels and runs: TREC text, CSV/TSV with a header, Parquet and JSON.

Every reader takes a path or the raw bytes of an upload (with its file name), plain
or gzip-compressed, and returns immutable :class:`~ireval_core.data.Qrels` or
:class:`~ireval_core.data.Run` objects.

Formats
-------
TREC qrels
    ``qid iter docid rel`` separated by spaces or tabs; ``iter`` is ignored.
TREC run
    ``qid Q0 docid rank score tag``; ``Q0`` and ``rank`` are ignored (the ranking
    is score descending, then document id descending). A file with several tags
    holds several systems and gives several runs.
CSV / TSV
    A header row naming the columns. Accepted names (case-insensitive):
    query ``qid, query_id, query, topic, topic_id``; document ``docid, doc_id,
    docno, document_id, doc, pid, passage_id``; grade ``rel, relevance, label,
    grade, judgment``; score ``score, sim, similarity``; system ``tag, run,
    run_id, run_name, system``; rank ``rank`` (used, negated, only when there is
    no score column, with a warning). Other columns are ignored; a column used
    that appears twice in the header is an error.
Parquet
    The same column names as CSV.
JSON
    ``{qid: {docid: value}}`` as pytrec_eval and ranx use (grade for qrels,
    score for runs).

Lines end with LF, CRLF or a lone CR (old Mac files are read in full).

Identifiers
-----------
Query and document ids and run tags are strings, exactly as written, in every
format: never type-inferred, trimmed or normalised (``007`` stays ``007``, ``1.10``
stays ``1.10``, two 20-digit ids stay two ids). CSV/TSV id columns are read as
text; JSON keys are text. A Parquet id column must hold strings, or integers,
which are read as their decimal text (``7``) with an ``integer-ids`` warning
(a file that wrote ``007`` as an integer has already lost the zeros); any other
type (float, boolean, list, ...) is an error naming the column.

Hard errors, with the line (Parquet: column and row): an empty id; an id or tag
holding a line break, a tab or another control character (it would forge lines
or columns in tab-separated output); in CSV/TSV/Parquet/JSON, an id starting or
ending with a space (it would never match the same id in a TREC file); a grade or
score that is not a finite number (``true``/``false`` are not grades).

A run line whose tag is empty or a missing-value marker (``NA``, ``N/A``,
``NaN``, ``nan``, ``null``, ``NULL``, ``None``; a null Parquet cell) belongs to a
system named after the file (its stem, as for files without a tag column), with a
``tag-missing`` warning saying how many lines.

Limits
------
Gzip input is inflated in a stream, never past a bound (:class:`ReadLimits`): at
most ``max_inflated_bytes`` (default :data:`DEFAULT_MAX_INFLATED_BYTES`, 2 GiB, env
``IREVAL_MAX_INFLATED_BYTES``) and at most ``max_gzip_ratio`` times the compressed
size (default :data:`DEFAULT_MAX_GZIP_RATIO`, 200, env ``IREVAL_MAX_GZIP_RATIO``;
the first MiB is always allowed). Text compresses 3 to 10 times; a gzip "bomb"
(gigabytes of zeros in a few MB) is stopped with a :class:`FormatError` naming the
file and the limit, after inflating no more than the limit. Parquet files are held
to the same bounds: the row count before any column is decoded, then the columns
batch by batch as they are decoded.

Errors
------
Anything wrong with the input is a :class:`~ireval_core.errors.FormatError`
(``file:line: what was expected: 'the line'``); no other exception escapes a
reader for a malformed input (a file that cannot be opened is an ``OSError``;
an invalid argument a ``ValueError`` or ``TypeError``). A ``FormatError`` from a
reader holds nothing of the input: no ``__cause__`` or ``__context__``, and no
frame in its traceback refers to the bytes or to Arrow objects, so an app can
cache it. Running out of memory while reading is reported the same way.

Parsing is columnar (pyarrow's multi-threaded CSV reader) with no Python loop over
lines. When the fast path rejects a file, a slow line-by-line pass finds the
first bad line so that the :class:`~ireval_core.errors.FormatError` can name it.
Memory handed to pyarrow's threads is always owned by pyarrow (never a Python
``bytes`` object), so no pyarrow thread needs the interpreter when it lets go of
it, even while the interpreter shuts down.
"""

from __future__ import annotations

import csv as _pycsv
import io
import json
import math
import os
import re
import traceback
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from ._arrow import (
    bool_array,
    from_numpy,
    release_unused,
    string_array,
    to_numpy,
    to_numpy_filled,
    valid_mask,
)
from ._arrow import string_layout as _string_layout
from .data import DuplicateEntryError, Qrels, Run, dictionary_codes
from .errors import DataWarning, FormatError, invalid_parameter, shorten
from .progress import stage

__all__ = ["DEFAULT_MAX_GZIP_RATIO", "DEFAULT_MAX_INFLATED_BYTES", "ReadLimits", "Source",
           "read_qrels", "read_run", "read_runs"]

Kind = Literal["qrels", "run"]
Format = Literal["auto", "trec", "csv", "tsv", "parquet", "json"]
_FORMATS = ("auto", "trec", "csv", "tsv", "parquet", "json")

_TREC_COLUMNS = {
    "qrels": ("qid", "iter", "docid", "rel"),
    "run": ("qid", "Q0", "docid", "rank", "score", "tag"),
}
_ALIASES = {
    "qid": ("qid", "query_id", "query", "topic", "topic_id", "queryid", "q_id"),
    "docid": ("docid", "doc_id", "docno", "document_id", "doc", "pid", "passage_id", "corpus_id"),
    "rel": ("rel", "relevance", "label", "grade", "judgment", "judgement"),
    "score": ("score", "sim", "similarity"),
    "tag": ("tag", "run", "run_id", "run_name", "system"),
    "rank": ("rank",),
}
_VALUE = {"qrels": "rel", "run": "score"}
_VALUE_WORD = {"rel": "grade", "score": "score", "rank": "rank"}
_TEXT_KEYS = ("qid", "docid", "tag")
_WHAT = {"qid": "query id", "docid": "document id", "tag": "tag"}
_MISSING_TAGS = frozenset({"", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"})
"""Tag cells that mean "no tag": the line belongs to the run named after the file."""

PathOrBytes = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO

_GZIP_MAGIC = b"\x1f\x8b"
_OTHER_COMPRESSION = ((b"PK\x03\x04", "a zip archive"), (b"\xfd7zXZ\x00", "xz"),
                      (b"\x28\xb5\x2f\xfd", "zstd"))

# ----------------------------------------------------------------------------- limits

DEFAULT_MAX_INFLATED_BYTES = 2 * 1024**3
"""Default bound on the bytes a compressed input may expand to (2 GiB)."""
DEFAULT_MAX_GZIP_RATIO = 200.0
"""Default bound on inflated size / compressed size (text compresses 3 to 10 times)."""
_RATIO_GRACE_BYTES = 1024**2  # the ratio bound applies beyond the first MiB
_ENV_BYTES = "IREVAL_MAX_INFLATED_BYTES"
_ENV_RATIO = "IREVAL_MAX_GZIP_RATIO"
_READ_STEP = 1 << 20  # compressed bytes read at a time
_INFLATE_STEP = 1 << 22  # most bytes one decompress call may produce


@dataclass(frozen=True)
class ReadLimits:
    """How far a compressed input may expand in memory while it is read.

    Parameters
    ----------
    max_inflated_bytes:
        The most bytes a gzip input may inflate to (and the most a Parquet file's
        columns may take once decoded).
    max_gzip_ratio:
        The most the input may expand relative to its compressed size; the first
        MiB of output is always allowed, whatever the ratio.

    :meth:`from_env` reads ``IREVAL_MAX_INFLATED_BYTES`` and
    ``IREVAL_MAX_GZIP_RATIO``; readers use it when no limits are given.

    Examples
    --------
    >>> ReadLimits().allowed(1_000_000)  # 200 times 1 MB
    200000000
    >>> ReadLimits(max_inflated_bytes=50_000_000).allowed(1_000_000)
    50000000
    >>> ReadLimits().allowed(100)  # tiny inputs may still inflate to 1 MiB
    1048576
    >>> ReadLimits(max_gzip_ratio=0.5)
    Traceback (most recent call last):
    ...
    ValueError: The 'max_gzip_ratio' parameter of ReadLimits must be a finite number >= 1. \
Got 0.5 instead.
    """

    max_inflated_bytes: int = DEFAULT_MAX_INFLATED_BYTES
    max_gzip_ratio: float = DEFAULT_MAX_GZIP_RATIO

    def __post_init__(self) -> None:
        n = self.max_inflated_bytes
        if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 1:
            raise invalid_parameter("max_inflated_bytes", "ReadLimits", "an int >= 1", n)
        r = self.max_gzip_ratio
        if (isinstance(r, bool) or not isinstance(r, int | float | np.integer | np.floating)
                or not math.isfinite(r) or r < 1):
            raise invalid_parameter("max_gzip_ratio", "ReadLimits", "a finite number >= 1", r)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ReadLimits:
        """The limits set by ``IREVAL_MAX_INFLATED_BYTES`` / ``IREVAL_MAX_GZIP_RATIO``.

        Unset variables keep the defaults.

        >>> ReadLimits.from_env({"IREVAL_MAX_GZIP_RATIO": "50"}).max_gzip_ratio
        50.0
        """
        env = os.environ if environ is None else environ
        size: Any = env.get(_ENV_BYTES, "").strip()
        ratio: Any = env.get(_ENV_RATIO, "").strip()
        try:
            size = int(size) if size else DEFAULT_MAX_INFLATED_BYTES
        except ValueError:
            raise invalid_parameter(_ENV_BYTES, "ReadLimits.from_env", "an int >= 1",
                                    size) from None
        try:
            ratio = float(ratio) if ratio else DEFAULT_MAX_GZIP_RATIO
        except ValueError:
            raise invalid_parameter(_ENV_RATIO, "ReadLimits.from_env", "a finite number >= 1",
                                    ratio) from None
        return cls(size, ratio)

    def allowed(self, compressed_size: int) -> int:
        """The most bytes an input of ``compressed_size`` bytes may expand to."""
        by_ratio = max(int(self.max_gzip_ratio * compressed_size), _RATIO_GRACE_BYTES)
        return int(min(self.max_inflated_bytes, by_ratio))

    def error(self, name: str, compressed_size: int, what: str = "gzip data") -> FormatError:
        """The error for an input of ``compressed_size`` bytes expanding past :meth:`allowed`."""
        allowed = self.allowed(compressed_size)
        if allowed >= self.max_inflated_bytes:
            message = (f"{what} expands to more than {_human(allowed)}, the most ireval reads "
                       f"into memory (ReadLimits.max_inflated_bytes, environment variable "
                       f"{_ENV_BYTES}); stopped there")
        else:
            message = (f"{what} expands more than {self.max_gzip_ratio:g} times its "
                       f"{_human(compressed_size)} (past {_human(allowed)}): a compression "
                       f"bomb? The limit is ReadLimits.max_gzip_ratio (environment variable "
                       f"{_ENV_RATIO}); stopped there")
        return FormatError(message, source=name)


def _one_line(text: str) -> str:
    """A message from elsewhere (pyarrow, zlib, csv) as one short line."""
    return shorten(" ".join(text.split()), 120)


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return f"{n} bytes"


# ----------------------------------------------------------------------------- sources


class Source:
    """One input: the name used in messages, and its bytes.

    A plain (uncompressed) file on disk is not read into memory up front: the
    columnar parser streams it, and the bytes are loaded only when a slow
    diagnostic pass has to name a bad line. Gzip input is inflated (within
    ``limits``) into memory owned by pyarrow.
    """

    def __init__(self, name: str, data: bytes | pa.Buffer | None = None,
                 path: Path | None = None, *, limits: ReadLimits | None = None) -> None:
        if data is None and path is None:
            raise invalid_parameter("path", "Source", "a path when data is None", path)
        if limits is not None and not isinstance(limits, ReadLimits):
            raise invalid_parameter("limits", "Source", "a ReadLimits or None", limits,
                                    error=TypeError)
        self.name = name
        self._buffer: pa.Buffer | None = data if isinstance(data, pa.Buffer) else None
        self._data: bytes | None = (None if data is None or isinstance(data, pa.Buffer)
                                    else bytes(data))
        self.path = path
        self._limits = limits

    @classmethod
    def of(cls, source: PathOrBytes | Source, name: str | None = None, *,
           limits: ReadLimits | None = None) -> Source:
        """Wrap a path, bytes or binary file object; gunzip (within ``limits``) when compressed."""
        if isinstance(source, Source):
            return source
        limits = limits or ReadLimits.from_env()
        if isinstance(source, str | os.PathLike):
            path = Path(source)
            name = str(name or path.name)
            with open(path, "rb") as fh:
                if fh.read(2) == _GZIP_MAGIC:
                    fh.seek(0)
                    size = os.fstat(fh.fileno()).st_size
                    return cls(name, _inflate(fh, size, name, limits), limits=limits)
            return cls(name, None, path, limits=limits)
        if isinstance(source, bytes | bytearray | memoryview):
            data = bytes(source)
        else:
            data = source.read()
            if not isinstance(data, bytes | bytearray | memoryview):
                raise invalid_parameter("source", "Source.of", "a binary file object (opened "
                                        "with 'rb')", source, error=TypeError)
            data = bytes(data)
            name = name or getattr(source, "name", None)
        name = str(name or "<input>")
        if data[:2] == _GZIP_MAGIC:
            return cls(name, _inflate(io.BytesIO(data), len(data), name, limits), limits=limits)
        return cls(name, data, limits=limits)

    @property
    def limits(self) -> ReadLimits:
        """The limits this input is read under (from the environment when not given)."""
        return self._limits or ReadLimits.from_env()

    @property
    def data(self) -> bytes:
        """All the bytes (read from disk, or copied out of pyarrow's memory, on first use)."""
        if self._data is None:
            self._data = (self._buffer.to_pybytes() if self._buffer is not None
                          else self._path().read_bytes())
        return self._data

    @property
    def size(self) -> int:
        """Number of bytes (after gunzip)."""
        if self._buffer is not None:
            return int(self._buffer.size)
        if self._data is not None:
            return len(self._data)
        return self._path().stat().st_size

    def _path(self) -> Path:
        """The file on disk; only called while the bytes are not loaded."""
        if self.path is None:  # __init__ rejects a Source with neither data nor path
            raise ValueError(f"{self.name}: neither bytes nor a path to read")
        return self.path

    def head(self, size: int = 1 << 16) -> bytes:
        """The first ``size`` bytes, without reading the rest of a file."""
        if self._buffer is not None:
            return self._buffer.slice(0, min(size, self._buffer.size)).to_pybytes()
        if self._data is not None:
            return self._data[:size]
        with open(self._path(), "rb") as fh:
            return fh.read(size)

    def tail(self, size: int) -> bytes:
        """The last ``size`` bytes (fewer when the input is shorter)."""
        total = self.size
        start = max(total - size, 0)
        if self._buffer is not None:
            return self._buffer.slice(start).to_pybytes()
        if self._data is not None:
            return self._data[start:]
        with open(self._path(), "rb") as fh:
            fh.seek(start)
            return fh.read(size)

    def stream(self) -> pa.NativeFile:
        """A pyarrow input stream over the bytes (the file itself when not yet loaded).

        Bytes held by Python are copied into pyarrow's memory first: pyarrow's
        reader threads may let go of their last reference to the buffer after the
        read returns, which must not need the interpreter (see the module notes).
        """
        if self._buffer is not None:
            return pa.BufferReader(self._buffer)
        if self._data is not None:
            return pa.BufferReader(_arrow_copy(self._data))
        return pa.OSFile(str(self._path()))

    def is_blank(self) -> bool:
        """True when the input holds nothing but whitespace."""
        head = self.head()
        if head.strip():
            return False
        return len(head) < (1 << 16) or not self.data.strip()

    @property
    def stem(self) -> str:
        """File name without folders and known extensions (``run.bm25.txt.gz`` → ``run.bm25``)."""
        stem = Path(self.name).name
        for ext in (".gz", ".txt", ".trec", ".tsv", ".csv", ".parquet", ".pq", ".json",
                    ".qrels", ".run", ".res"):
            if stem.lower().endswith(ext) and len(stem) > len(ext):
                stem = stem[: -len(ext)]
        return stem


def _arrow_copy(data: bytes) -> pa.Buffer:
    """``data`` copied into a buffer that pyarrow owns (no Python object behind it)."""
    buf = pa.allocate_buffer(len(data))
    if data:
        memoryview(buf).cast("B")[:] = data
    return buf


def _inflate(fh: BinaryIO, compressed_size: int, name: str, limits: ReadLimits) -> pa.Buffer:
    """Gunzip ``fh`` (every member) into pyarrow's memory, stopping at the limits.

    Output is produced in steps of at most 4 MiB and counted before it is kept, so
    no more than ``limits.allowed(compressed_size)`` bytes are ever held. The buffer
    is sized once from the gzip trailer's length field (capped at the limit; a wrong
    value only costs a reallocation), so a valid file is not copied while it grows.
    """
    allowed = limits.allowed(compressed_size)
    fh.seek(max(compressed_size - 4, 0))
    hint = int.from_bytes(fh.read(4), "little")  # ISIZE: length mod 2**32 of the last member
    fh.seek(0)
    out = pa.allocate_buffer(min(max(hint, 1 << 16), allowed), resizable=True)
    total = 0

    def keep(piece: bytes) -> None:
        nonlocal total
        end = total + len(piece)
        if end > allowed:
            raise limits.error(name, compressed_size)
        if end > out.size:
            out.resize(min(max(end, 2 * out.size), allowed))
        memoryview(out).cast("B")[total:end] = piece
        total = end

    def drain(inflater: Any, data: bytes) -> bytes:
        """Inflate all of ``data``; return the bytes after the member's end, if it ended."""
        while True:
            step = min(allowed - total + 1, _INFLATE_STEP)
            try:
                piece = inflater.decompress(data, step)
            except zlib.error as exc:
                raise FormatError(f"not valid gzip data ({_one_line(str(exc))})",
                                  source=name) from None
            keep(piece)
            if inflater.eof:
                return bytes(inflater.unused_data)
            data = inflater.unconsumed_tail
            if len(piece) < step:  # all input consumed and all output flushed
                return b""

    inflater: Any = None
    padding = False
    while True:
        data = fh.read(_READ_STEP)
        if not data:
            break
        while data:
            if padding or (inflater is None and data[:1] == b"\0"):
                padding = True  # zeros after the last member are allowed (tape padding)
                if data.strip(b"\0"):
                    raise FormatError("unexpected data after the end of the gzip stream",
                                      source=name)
                break
            if inflater is None:
                inflater = zlib.decompressobj(wbits=31)
            data = drain(inflater, data)
            if inflater.eof:
                inflater = None
    if inflater is not None:
        raise FormatError("gzip data is truncated: the file ends inside the compressed "
                          "stream", source=name)
    out.resize(total)
    return out


# ----------------------------------------------------------------------------- public API

_T = TypeVar("_T")


def read_qrels(source: PathOrBytes | Source, *, name: str | None = None,
               format: Format = "auto", limits: ReadLimits | None = None) -> Qrels:
    """Read relevance judgments.

    Parameters
    ----------
    source:
        A path, the bytes of an upload, or a binary file object (gzip is detected).
    name:
        File name used in messages (defaults to the path's name).
    format:
        ``"auto"`` (by content and extension), ``"trec"``, ``"csv"``, ``"tsv"``,
        ``"parquet"`` or ``"json"``.
    limits:
        Bounds on decompression (default: :meth:`ReadLimits.from_env`).

    Returns
    -------
    Qrels
        The judgments, with ids exactly as written.

    Raises
    ------
    FormatError
        With file, line and what was expected, for anything that is not valid qrels.

    Examples
    --------
    >>> q = read_qrels(b"007 0 d1 1\\n007 0 d2 0\\n", name="qrels.txt")
    >>> q.to_dict()
    {'007': {'d1': 1.0, 'd2': 0.0}}
    >>> read_qrels(b"qid,docid,rel\\nq1,d1,true\\n", name="q.csv")
    Traceback (most recent call last):
    ...
    ireval_core.errors.FormatError: q.csv:2: expected a numeric grade in column 'rel', got 'true': \
'q1,d1,true'
    """
    _check_arguments("read_qrels", source, format, limits)
    limits = limits or ReadLimits.from_env()  # a bad variable is a ValueError, here
    outcome = _guarded(_read_qrels, source, name, format, limits)
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    return outcome


def read_runs(source: PathOrBytes | Source, *, name: str | None = None,
              format: Format = "auto",
              taken_names: Iterable[str] | Mapping[str, str] = (),
              limits: ReadLimits | None = None) -> list[Run]:
    """Read a run file, which may hold several systems (one per tag).

    Each system is named by its tag; by the file name when there is no tag column
    or when the tag is already in ``taken_names`` (then ``stem:tag``, numbered if
    needed), with a ``run-renamed`` warning naming both files when ``taken_names``
    maps each name to the file it came from. Lines with an empty or missing tag
    (``NA``, ...) form the system named after the file, with a ``tag-missing``
    warning. Returns one :class:`Run` per system, in order of first appearance.

    Examples
    --------
    >>> runs = read_runs(b"qid,docid,score,tag\\nq1,d1,2,bm25\\nq1,d2,1,NA\\n", name="r.csv")
    >>> [(r.name, r.to_dict()) for r in runs]
    [('bm25', {'q1': {'d1': 2.0}}), ('r', {'q1': {'d2': 1.0}})]
    >>> [w.code for w in runs[1].warnings]
    ['tag-missing']
    """
    _check_arguments("read_runs", source, format, limits)
    limits = limits or ReadLimits.from_env()  # a bad variable is a ValueError, here
    outcome = _guarded(_read_runs, source, name, format, taken_names, limits)
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    return outcome


def read_run(source: PathOrBytes | Source, *, name: str | None = None,
             format: Format = "auto", limits: ReadLimits | None = None) -> Run:
    """Read a run file holding exactly one system (see :func:`read_runs`)."""
    _check_arguments("read_run", source, format, limits)
    limits = limits or ReadLimits.from_env()  # a bad variable is a ValueError, here
    outcome = _guarded(_read_run, source, name, format, limits)
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    return outcome


def _check_arguments(function: str, source: object, format: object, limits: object) -> None:
    """Invalid arguments (not invalid data) raise ValueError / TypeError, unguarded."""
    if not isinstance(source, str | os.PathLike | bytes | bytearray | memoryview | Source) and (
            not callable(getattr(source, "read", None)) or isinstance(source, io.TextIOBase)):
        raise invalid_parameter("source", function, "a path, bytes or a binary file object",
                                source, error=TypeError)
    if format not in _FORMATS:
        raise invalid_parameter("format", function,
                                f"one of {', '.join(repr(f) for f in _FORMATS)}", format)
    if limits is not None and not isinstance(limits, ReadLimits):
        raise invalid_parameter("limits", function, "a ReadLimits or None", limits,
                                error=TypeError)


def _guarded(read: Callable[..., _T], source: object, name: str | None,
             *args: Any) -> _T | FormatError:
    """Call ``read``; whatever a bad input makes it raise comes back as a fresh FormatError.

    The error is built after the ``except`` blocks, so it has no ``__context__``,
    and it is returned rather than raised here, so that no frame of the failed
    read (holding the bytes, tables, pyarrow errors) is reachable from it.
    OSError from opening or reading a file is not about the format: it propagates.
    """
    failure: tuple[str, str | None, int | None, str | None]
    where = _name_hint(source, name)
    try:
        return read(source, name, *args)
    except FormatError as exc:
        failure = (exc.message, exc.source, exc.line, exc.text)
        _release(exc)
    except MemoryError as exc:
        failure = ("not enough memory to read this file", where, None, None)
        _release(exc)
    except RecursionError as exc:
        failure = ("structure nested too deeply to read", where, None, None)
        _release(exc)
    except OSError as exc:
        if not isinstance(exc, pa.ArrowException):
            raise
        failure = (f"could not read this file ({type(exc).__name__}: {_one_line(str(exc))})",
                   where, None, None)
        _release(exc)
    except Exception as exc:  # a reader bug: still one line naming the file, never a traceback
        failure = (f"could not read this file ({type(exc).__name__}: {_one_line(str(exc))}); "
                   "this is a bug in ireval's reader, please report it", where, None, None)
        _release(exc)
    message, src_name, line, text = failure
    return FormatError(message, source=src_name, line=line, text=text)


def _release(exc: BaseException) -> None:
    """Clear the locals of every finished frame of ``exc`` and of the exceptions it chains.

    A failed read leaves reference cycles (an error kept in a local of the frame it
    was raised from); clearing the frames frees the input at once instead of at the
    next garbage collection.
    """
    todo: list[BaseException | None] = [exc]
    seen: set[int] = set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)  # skips the frames still running
        todo += [e.__context__, e.__cause__]


def _name_hint(source: object, name: str | None) -> str:
    if name:
        return str(name)
    if isinstance(source, Source):
        return source.name
    if isinstance(source, str | os.PathLike):
        return Path(source).name
    hint = getattr(source, "name", None)
    return str(hint) if hint else "<input>"


def _read_qrels(source: PathOrBytes | Source, name: str | None, format: Format,
                limits: ReadLimits | None) -> Qrels:
    src = Source.of(source, name, limits=limits)
    table, warnings = _read_table(src, "qrels", format)
    grades = _numeric(table.column("rel"))
    frac = grades[grades != np.floor(grades)]
    if frac.size:
        warnings.append(DataWarning(
            "fractional-grades",
            f"{frac.size} grade(s) are not whole numbers; kept as they are "
            "(trec_eval would truncate them)",
            src.name, int(frac.size), tuple(str(x) for x in np.unique(frac)[:3])))
    try:
        return Qrels.from_arrays(table.column("qid"), table.column("docid"), grades,
                                 source=src.name, warnings=warnings)
    except DuplicateEntryError as exc:
        raise _duplicate_error(src, "qrels", format, exc) from None


def _read_run(source: PathOrBytes | Source, name: str | None, format: Format,
              limits: ReadLimits | None) -> Run:
    src = Source.of(source, name, limits=limits)
    runs = _read_runs(src, None, format, (), limits)
    if len(runs) != 1:
        raise FormatError(
            f"expected one system, found {len(runs)} tags ({', '.join(r.name for r in runs)}); "
            "use read_runs to read them all", source=src.name)
    return runs[0]


def _read_runs(source: PathOrBytes | Source, name: str | None, format: Format,
               taken_names: Iterable[str] | Mapping[str, str],
               limits: ReadLimits | None) -> list[Run]:
    src = Source.of(source, name, limits=limits)
    table, warnings = _read_table(src, "run", format)
    owners = dict(taken_names) if isinstance(taken_names, Mapping) else dict.fromkeys(
        taken_names, "")
    taken = set(owners)
    scores = _numeric(table.column("score"))
    tag_codes: np.ndarray | None = None
    tag_names: list[str | None] = [None]
    missing_lines = 0
    missing_markers: tuple[str, ...] = ()
    if "tag" in table.column_names:
        tag_codes, tag_dict = dictionary_codes(table.column("tag"))
        tag_names, tag_codes, missing_lines, missing_markers = _merge_missing_tags(
            tag_dict.to_pylist(), tag_codes)
    if len(tag_names) == 1:  # one system: hand the columns over, drop the table
        parts = [{"qid": table.column("qid"), "docid": table.column("docid")}]
        del table
        tag_codes = None  # one code per line, all equal: not needed (peak memory)
    else:
        assert tag_codes is not None  # several tags come from a tag column
        parts = [{"qid": table.column("qid").filter(bool_array(np.equal(tag_codes, i))),
                  "docid": table.column("docid").filter(bool_array(np.equal(tag_codes, i)))}
                 for i in range(len(tag_names))]
        del table
    runs = []
    for i, tag in enumerate(tag_names):
        part_scores = scores if len(tag_names) == 1 else scores[tag_codes == i]
        run_name = _unique_name(tag, src.stem, taken)
        taken.add(run_name)
        run_warnings = list(warnings)
        if tag and run_name != tag:
            other = owners.get(tag, "")
            where = f"the run {tag!r} of {other}" if other else f"the run name {tag!r}"
            run_warnings.append(DataWarning(
                "run-renamed", f"tag {tag!r} is already {where}: this run is named "
                f"{run_name!r}", source=src.name, count=1))
        if tag is None and missing_lines:
            shown = ", ".join(repr(m) for m in missing_markers)
            run_warnings.append(DataWarning(
                "tag-missing", f"{missing_lines} line(s) have no tag ({shown}); they are the "
                f"run named {run_name!r}, after the file", source=src.name,
                count=missing_lines))
        try:
            runs.append(Run.from_columns(parts[i], part_scores, name=run_name,
                                         source=src.name, warnings=run_warnings))
        except DuplicateEntryError as exc:
            if tag_codes is not None and len(tag_names) > 1:
                first, second = np.flatnonzero(tag_codes == i)[list(exc.rows)]
                exc.rows = (int(first), int(second))
            raise _duplicate_error(src, "run", format, exc) from None
        parts[i] = {}
    return runs


def _merge_missing_tags(names: list[str], codes: np.ndarray
                        ) -> tuple[list[str | None], np.ndarray, int, tuple[str, ...]]:
    """Tags that mean "no tag" become one system (``None``); codes renumbered to match."""
    missing = [i for i, t in enumerate(names) if t in _MISSING_TAGS]
    if not missing:
        return list(names), codes, 0, ()
    mapping = np.empty(len(names), dtype=np.int32)
    merged: list[str | None] = []
    slot = -1
    for i, t in enumerate(names):
        if t in _MISSING_TAGS:
            if slot < 0:
                slot = len(merged)
                merged.append(None)
            mapping[i] = slot
        else:
            mapping[i] = len(merged)
            merged.append(t)
    lines = int(np.isin(codes, missing).sum())
    return merged, mapping[codes], lines, tuple(names[i] for i in missing)


def _unique_name(tag: str | None, stem: str, taken: set[str]) -> str:
    candidates = [tag] if tag else []
    candidates += [f"{stem}:{tag}" if tag else stem]
    for c in candidates:
        if c not in taken:
            return c
    base, k = candidates[-1], 2
    while f"{base}-{k}" in taken:
        k += 1
    return f"{base}-{k}"


# ----------------------------------------------------------------------------- dispatch


def _detect_format(src: Source, format: Format) -> str:
    if format != "auto":
        return format
    head = src.head(64)
    if head[:4] == b"PAR1" and (src.tail(4) == b"PAR1"
                                or re.search(rb"[\x00-\x08\x0e-\x1f]", head[4:])):
        return "parquet"
    lower = src.name.lower().removesuffix(".gz")
    for ext, fmt in ((".parquet", "parquet"), (".pq", "parquet"), (".json", "json"),
                     (".csv", "csv"), (".tsv", "tsv")):
        if lower.endswith(ext):
            return fmt
    head = src.head(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    if head[:1] == b"{":
        return "json"
    first = re.split(rb"\r\n|\r|\n", head, maxsplit=1)[0]
    first_text = first.decode("utf-8", "replace").strip().lower()
    for sep, fmt in ((",", "csv"), ("\t", "tsv")):
        names = [c.strip() for c in first_text.split(sep)]
        if len(names) > 1 and any(n in _ALIASES["qid"] for n in names) and any(
                n in _ALIASES["docid"] for n in names):
            return fmt
    return "trec"


def _read_table(src: Source, kind: Kind, format: Format) -> tuple[pa.Table, list[DataWarning]]:
    """Return a table with columns qid, docid, rel|score (+ tag), and reading warnings.

    Ids and tags are validated strings (plain or dictionary-coded), values finite
    float64; a tag may be empty or a missing-value marker (see ``_MISSING_TAGS``).
    """
    if src.is_blank():
        cols = " ".join(_TREC_COLUMNS[kind])
        raise FormatError(f"file is empty; expected {kind} lines '{cols}'", source=src.name)
    head = src.head(16)
    for magic, what in _OTHER_COMPRESSION:
        if head.startswith(magic):
            raise FormatError(f"this is {what}; only plain or gzip-compressed files are read "
                              "(extract it first)", source=src.name)
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise FormatError("this is UTF-16 text; save the file as UTF-8", source=src.name)
    if head[:3] == b"BZh" and head[4:10] == b"\x31\x41\x59\x26\x53\x59":
        raise FormatError("this is bzip2-compressed; only plain or gzip-compressed files are "
                          "read (decompress it first)", source=src.name)
    fmt = _detect_format(src, format)
    stage("parsing")
    if fmt == "trec":
        return _read_trec(src, kind)
    if fmt == "json":
        return _read_json(src, kind), []
    if fmt == "parquet":
        return _read_parquet(src, kind)
    return _read_delimited(src, kind, "," if fmt == "csv" else "\t")


# ----------------------------------------------------------------------------- validation

_NUMBER = re.compile(r"[ \t]*[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
                     r"|nan|inf|infinity)[ \t]*", re.IGNORECASE)
"""The numbers pyarrow's CSV float parser accepts (Python's float() accepts more: ``1_0``)."""
_STRICT_NUMBER = re.compile(_NUMBER.pattern.replace("[ \\t]*", ""), re.IGNORECASE)
"""The same without blanks around, as pyarrow's cast from string wants them."""
_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")
_CHAR_NAMES = {"\n": "a line break (\\n)", "\r": "a carriage return (\\r)", "\t": "a tab",
               "\x00": "a NUL byte", "\u2028": "a line separator (U+2028)",
               "\u2029": "a paragraph separator (U+2029)"}


_SURROGATE = re.compile("[\ud800-\udfff]")


def _text_problem(value: str | None, key: str, *, edges: bool) -> str | None:
    """What is wrong with one id or tag, or None (the slow twin of :func:`_bad_text_rows`)."""
    what = _WHAT[key]
    if value is None or (value == "" and key != "tag"):
        return f"empty {what}"
    bad = _BAD_CHAR.search(value)
    if bad is not None:
        char = bad.group()
        named = _CHAR_NAMES.get(char, f"the control character U+{ord(char):04X}")
        return (f"{what} {_cut(value)!r} contains {named}; ids and tags must be one "
                "line without tabs or control characters")
    surrogate = _SURROGATE.search(value)
    if surrogate is not None:  # JSON "\ud800" escapes decode to these: not valid text
        return (f"{what} {_cut(value)!r} contains the lone surrogate "
                f"U+{ord(surrogate.group()):04X}, which is not valid Unicode text")
    if edges and value and (value[0] == " " or value[-1] == " "):
        return (f"{what} {value!r} starts or ends with a space; ids are compared exactly "
                "(' d1' is not 'd1')")
    return None


def _cut(text: str, limit: int = 40) -> str:
    """``text`` cut to ``limit`` characters (line breaks kept: they may be the problem)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _value_problem(text: str, word: str, column: str) -> str | None:
    """What is wrong with one grade or score as written, or None."""
    if not _NUMBER.fullmatch(text):
        return f"expected a numeric {word} in column {column}, got {text!r}"
    if not math.isfinite(float(text)):
        return f"expected a finite {word} in column {column}, got {text!r}"
    return None


def _bad_text_mask(arr: pa.Array, *, allow_empty: bool, edges: bool,
                   forbid_space: bool) -> np.ndarray:
    """Per value of a string array: null, empty, control character, or space at an edge.

    Vectorised over the array's bytes (no Python loop): control characters are
    bytes below 0x20 and 0x7f, C1 controls (UTF-8 ``c2 80``-``c2 9f``) and the
    Unicode line and paragraph separators (``e2 80 a8``/``a9``).
    """
    n = len(arr)
    bad = np.zeros(n, dtype=bool)
    if n == 0:
        return bad
    if arr.null_count:
        bad |= ~valid_mask(arr)
    offsets, data = _string_layout(arr)
    lengths = np.diff(offsets)
    if not allow_empty:
        bad |= lengths == 0
    seg = data[offsets[0]: offsets[-1]]
    if seg.size and (seg.min() < 0x20 or seg.max() >= 0x7F
                     or (forbid_space and bool((seg == 0x20).any()))):
        _mark_bad_bytes(bad, seg, offsets, forbid_space)
    if edges:
        full = lengths > 0
        starts = offsets[:-1][full]
        ends = offsets[1:][full] - 1
        bad[full] |= (data[starts] == 0x20) | (data[ends] == 0x20)
    return bad


def _mark_bad_bytes(bad: np.ndarray, seg: np.ndarray, offsets: np.ndarray,
                    forbid_space: bool) -> None:
    """Mark the values whose bytes hold a control character (or a space when forbidden).

    Only called when the bytes are not all printable ASCII (two reductions say so).
    """
    hit = (seg < 0x20) | (seg == 0x7F)
    if forbid_space:
        hit |= seg == 0x20
    if seg.size >= 2:
        lead = seg[:-1]
        nxt = seg[1:]
        hit[:-1] |= (lead == 0xC2) & (nxt >= 0x80) & (nxt <= 0x9F)
    if seg.size >= 3:
        hit[:-2] |= (seg[:-2] == 0xE2) & (seg[1:-1] == 0x80) & ((seg[2:] == 0xA8)
                                                              | (seg[2:] == 0xA9))
    pos = np.flatnonzero(hit)
    if pos.size:
        rows = np.searchsorted(offsets, pos + offsets[0], side="right") - 1
        bad[rows] = True


def _first_bad_text(col: pa.ChunkedArray | pa.Array, *, allow_empty: bool = False,
                    edges: bool = False, forbid_space: bool = False) -> int | None:
    """Row of the first null, empty (unless allowed) or malformed value, or None."""
    chunks = col.chunks if isinstance(col, pa.ChunkedArray) else [col]
    base = 0
    checked: dict[int, np.ndarray] = {}
    for chunk in chunks:
        if pa.types.is_dictionary(chunk.type):
            dictionary = chunk.dictionary
            key = dictionary.buffers()[1].address if len(dictionary) else 0
            if key not in checked:
                checked[key] = np.flatnonzero(_bad_text_mask(
                    dictionary, allow_empty=allow_empty, edges=edges,
                    forbid_space=forbid_space))
            bad_values = checked[key]
            mask = np.zeros(len(chunk), dtype=bool)
            if chunk.null_count:
                mask |= ~valid_mask(chunk)
            if bad_values.size:
                idx = to_numpy_filled(chunk.indices, 0)
                mask |= np.isin(idx, bad_values)
        else:
            mask = _bad_text_mask(chunk, allow_empty=allow_empty, edges=edges,
                                  forbid_space=forbid_space)
        hits = np.flatnonzero(mask)
        if hits.size:
            return base + int(hits[0])
        base += len(chunk)
    return None


def _problem(table: pa.Table, kind: Kind, *, edges: bool, forbid_space: bool = False
             ) -> tuple[str, int] | None:
    """(column key, row) of the first invalid id, tag or value in a parsed table, or None."""
    for key in _TEXT_KEYS:
        if key in table.column_names:
            row = _first_bad_text(table.column(key), allow_empty=key == "tag", edges=edges,
                                  forbid_space=forbid_space)
            if row is not None:
                return key, row
    values = _numeric(table.column(_VALUE[kind]))
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        return _VALUE[kind], int(bad[0])
    return None


def _problem_message(table: pa.Table, key: str, row: int, *, edges: bool,
                     column: str | None = None) -> str:
    """The message for a problem found by :func:`_problem` (when no line can be named)."""
    value = table.column(key)[row].as_py()
    if key in _TEXT_KEYS:
        problem = _text_problem(value, key, edges=edges) or f"invalid {_WHAT[key]} {value!r}"
    else:
        problem = f"expected a finite {_VALUE_WORD[key]}, got {value!r}"
    where = f"column {column!r}, row {row + 1}" if column else f"row {row + 1}"
    return f"{where}: {problem}"


def _numeric(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    return to_numpy(col, np.float64)


def _iter_lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """``(line number, line with its ending)``; lines end with LF, CRLF or a lone CR.

    Lazy (one line at a time), so a diagnostic pass over a large input does not
    hold a list of all its lines.
    """
    for lineno, match in enumerate(_LINE.finditer(data), start=1):
        yield lineno, match.group()


_LINE = re.compile(rb"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


# ----------------------------------------------------------------------------- TREC text

def _read_trec(src: Source, kind: Kind) -> tuple[pa.Table, list[DataWarning]]:
    _check_first_line(src, kind)
    warnings: list[DataWarning] = []
    delimiter = _sniff_delimiter(src.head())
    if delimiter is not None:
        table, _ = _try_parse_trec(src.stream(), kind, delimiter)
        # a tab inside a field of a space-delimited file (or a space in a tab-delimited
        # one) is a field separator for trec_eval: only the normalised parse is right
        if table is not None and _problem(table, kind, edges=False,
                                          forbid_space=delimiter == "\t") is None:
            release_unused()  # the parser's block buffers
            return table, warnings
        del table
    # Irregular whitespace (tabs and spaces mixed, runs of blanks, CR line ends, blanks
    # at line ends) is legal in TREC files: normalise to single spaces, lines kept.
    data = _normalise_whitespace(src.data)
    table, arrow_error = _try_parse_trec(pa.BufferReader(_arrow_copy(data)), kind, " ")
    if table is None:
        error, extra = _diagnose_trec(src, kind)
        if error is not None:
            raise error
        if extra:
            # trec_eval reads the first six fields of a run line and ignores the rest
            data = re.sub(rb"(?m)^((?:[^ \n]+ ){5}[^ \n]+) [^\n]*$", rb"\1", data)
            table, arrow_error = _try_parse_trec(pa.BufferReader(_arrow_copy(data)), kind, " ")
            warnings.append(DataWarning(
                "extra-columns", f"{extra} line(s) have more than 6 columns; the extra "
                "columns were ignored (as trec_eval does)", src.name, extra))
    del data
    if table is None:
        raise FormatError(f"could not read as TREC {kind} ({_one_line(arrow_error)})",
                          source=src.name)
    found = _problem(table, kind, edges=False)
    if found is not None:
        error = _diagnose_trec(src, kind)[0]
        raise error or FormatError(_problem_message(table, *found, edges=False),
                                   source=src.name)
    release_unused()
    return table, warnings


def _try_parse_trec(stream: pa.NativeFile, kind: Kind, delimiter: str
                    ) -> tuple[pa.Table | None, str]:
    """The parsed table, or None and pyarrow's message (only the text is kept)."""
    message = ""
    try:
        return _parse_trec(stream, kind, delimiter), ""
    except pa.ArrowException as exc:
        message = str(exc)
    return None, message


def _sniff_delimiter(head: bytes) -> str | None:
    """Single spaces or single tabs from the first lines; None for irregular whitespace."""
    if head[:1] in (b" ", b"\t") or any(p in head for p in (b"  ", b"\t\t", b"\r", b" \n",
                                                               b"\n ", b"\t\n", b"\n\t")):
        return None
    if b"\t" in head:
        return "\t" if b" " not in head else None
    return " "


def _normalise_whitespace(data: bytes) -> bytes:
    """Line ends become LF; runs of spaces and tabs one space; no space at line ends."""
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    data = re.sub(rb"[ \t]+", b" ", data)
    return re.sub(rb"(?m)^ | $", b"", data)


def _parse_trec(stream: pa.NativeFile, kind: Kind, delimiter: str) -> pa.Table:
    """Columnar parse with pyarrow; raises pyarrow's error on any malformed line.

    Document ids are read as plain strings and coded afterwards: with millions of
    distinct values, pyarrow's dictionary conversion inside the CSV reader is
    several times slower than one ``dictionary_encode`` pass over the finished
    column. Query ids and tags (few distinct values) are dictionary-coded by the
    reader itself, block by block, which costs no time and keeps a 7M-line run's
    table about 110 MB smaller.
    """
    names = _TREC_COLUMNS[kind]
    keep = ["qid", "docid", _VALUE[kind]] + (["tag"] if kind == "run" else [])
    coded = pa.dictionary(pa.int32(), pa.string())
    types = {"qid": coded, "docid": pa.string(), _VALUE[kind]: pa.float64(), "tag": coded}
    return pacsv.read_csv(
        stream,
        read_options=pacsv.ReadOptions(column_names=list(_col_keys(names)),
                                       block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False,
                                         double_quote=False, escape_char=False,
                                         ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types={k: types[k] for k in keep}, include_columns=keep,
            null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
    )


def _col_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple({"Q0": "q0", "iter": "iter"}.get(n, n) for n in names)


def _check_first_line(src: Source, kind: Kind) -> None:
    """Say early, by shape, when qrels were given as a run or the reverse."""
    head = src.head()
    for lineno, raw in enumerate(head.splitlines()[:-1] or [head], start=1):
        fields = raw.split()
        if not fields:
            continue
        text = raw.decode("utf-8", "replace")
        other = "run" if kind == "qrels" else "qrels"
        if len(fields) == len(_TREC_COLUMNS[other]) != len(_TREC_COLUMNS[kind]):
            raise FormatError(
                f"this looks like a TREC {other} file ({len(fields)} columns: "
                f"{' '.join(_TREC_COLUMNS[other])}), but a {kind} file was expected "
                f"({' '.join(_TREC_COLUMNS[kind])})", source=src.name, line=lineno, text=text)
        return


def _diagnose_trec(src: Source, kind: Kind) -> tuple[FormatError | None, int]:
    """Slow line-by-line pass naming the first bad line (only used on failure).

    Fields are split exactly as the fast path splits them (runs of spaces and tabs;
    lines end with LF, CRLF or CR). Returns the error (or None) and the number of
    run lines with extra columns, which trec_eval ignores and so do we, with a
    warning.
    """
    names = _TREC_COLUMNS[kind]
    value_col = names.index(_VALUE[kind] if kind == "run" else "rel")
    word = _VALUE_WORD[_VALUE[kind]]
    seen: dict[tuple[str, ...], int] = {}
    extra = 0
    for lineno, raw in _iter_lines(src.data):
        raw = raw.rstrip(b"\r\n")
        if not raw.strip(b" \t"):
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return FormatError(
                f"line is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1});"
                " save the file as UTF-8", source=src.name, line=lineno,
                text=raw.decode("utf-8", "replace")), extra
        fields = re.split(r"[ \t]+", text.strip(" \t"))
        if kind == "run" and len(fields) > len(names):
            extra += 1
            fields = fields[: len(names)]
        if len(fields) != len(names):
            return FormatError(f"expected {len(names)} columns ({' '.join(names)}), "
                               f"got {len(fields)}", source=src.name, line=lineno,
                               text=text), extra
        problem = _value_problem(fields[value_col], word, str(value_col + 1))
        for key, i in (("qid", 0), ("docid", 2)) + ((("tag", 5),) if kind == "run" else ()):
            problem = problem or _text_problem(fields[i], key, edges=False)
        if problem is not None:
            return FormatError(problem, source=src.name, line=lineno, text=text), extra
        key_fields = ((fields[0], fields[2]) if kind == "qrels"
                      else (fields[0], fields[2], _tag_key(fields[5])))
        if key_fields in seen:
            return _dup_message(src, kind, seen[key_fields], lineno, fields[0], fields[2],
                                text), extra
        seen[key_fields] = lineno
    return None, extra


def _tag_key(tag: str) -> str:
    """Tags that mean "no tag" are one system: one key for duplicate detection."""
    return "" if tag in _MISSING_TAGS else tag


def _dup_message(src: Source, kind: Kind, first: int, second: int, qid: str, docid: str,
                 text: str | None) -> FormatError:
    return FormatError(
        f"duplicate {kind} entry for query {qid!r}, document {docid!r} "
        f"(first at line {first}); each (query, document) may appear once",
        source=src.name, line=second, text=text)


def _duplicate_error(src: Source, kind: Kind, format: Format,
                     exc: DuplicateEntryError) -> FormatError:
    """Turn a row-level duplicate into a line-level message."""
    fmt = _detect_format(src, format)
    if fmt == "trec":
        err = _diagnose_trec(src, kind)[0]
        if err is not None:
            return err
    if fmt in ("csv", "tsv"):
        err = _diagnose_delimited(src, kind, "," if fmt == "csv" else "\t")
        if err is not None:
            return err
    return FormatError(
        f"duplicate {kind} entry for query {exc.query_id!r}, document {exc.doc_id!r} "
        f"(rows {exc.rows[0] + 1} and {exc.rows[1] + 1})", source=src.name)


# ----------------------------------------------------------------------------- CSV / TSV


def _header(src: Source, delimiter: str) -> tuple[list[str], int]:
    """The header's column names and its line number (the first non-empty line)."""
    head = src.head()
    size = len(head)
    head = head.removeprefix(b"\xef\xbb\xbf")  # pyarrow skips a UTF-8 byte order mark too
    line = b""
    lineno = 0
    for lineno, raw in _iter_lines(head):
        line = raw.rstrip(b"\r\n")
        if line:
            if raw == line and size >= (1 << 16):
                raise FormatError("the header row is longer than 64 KiB", source=src.name,
                                  line=lineno)
            break
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError:
        raise FormatError("the header row is not valid UTF-8; save the file as UTF-8",
                          source=src.name, line=lineno,
                          text=line.decode("utf-8", "replace")) from None
    try:
        names = next(_pycsv.reader([text], delimiter=delimiter), [])
    except _pycsv.Error as exc:
        raise FormatError(f"the header row is not valid CSV ({_one_line(str(exc))})",
                          source=src.name,
                          line=lineno, text=text) from None
    return names, lineno


def _choose_columns(names: Iterable[str], src: Source, kind: Kind, header_line: int | None
                    ) -> tuple[dict[str, str], list[DataWarning]]:
    """The column used for each of qid, docid, rel|score (+ tag): key -> column name.

    When a run has no score column but a rank column, ``"score"`` maps to the rank
    column (to be negated), with a ``score-from-rank`` warning.
    """
    by_lower: dict[str, list[str]] = {}
    for c in names:
        by_lower.setdefault(str(c).strip().lower(), []).append(c)
    found: dict[str, str] = {}
    for key, aliases in _ALIASES.items():
        for a in aliases:
            if a in by_lower:
                found[key] = a
                break
    warnings: list[DataWarning] = []
    if kind == "run" and "score" not in found and "rel" in found and "rank" not in found:
        raise FormatError("this looks like qrels (a relevance column and no score), but a run "
                          "was expected", source=src.name, line=header_line)
    if kind == "qrels" and "rel" not in found and "score" in found:
        raise FormatError("this looks like a run (a score column and no relevance), but qrels "
                          "were expected", source=src.name, line=header_line)
    need = ["qid", "docid", _VALUE[kind]]
    if kind == "run" and "score" not in found and "rank" in found:
        warnings.append(DataWarning("score-from-rank", "no score column: ranking by the rank "
                                    "column (score = -rank)", src.name))
        found["score"] = found["rank"]
    missing = [k for k in need if k not in found]
    if missing:
        expected = "; ".join(f"{k}: one of {', '.join(_ALIASES[k])}" for k in missing)
        raise FormatError(f"missing column(s) in header {list(names)}; expected "
                          f"{expected}", source=src.name, line=header_line)
    keys = need + (["tag"] if kind == "run" and "tag" in found else [])
    chosen = {}
    for k in keys:
        columns = by_lower[found[k]]
        if len(columns) > 1:
            raise FormatError(f"column {columns[0]!r} appears {len(columns)} times in the "
                              "header; each column may appear once", source=src.name,
                              line=header_line)
        chosen[k] = columns[0]
    return chosen, warnings


def _read_delimited(src: Source, kind: Kind, delimiter: str) -> tuple[pa.Table, list[DataWarning]]:
    names, header_line = _header(src, delimiter)
    chosen, warnings = _choose_columns(names, src, kind, header_line)
    types = {col: (pa.string() if k in _TEXT_KEYS else pa.float64()) for k, col in chosen.items()}
    include = list(types)
    table = None
    arrow_error = ""
    for newlines_in_values in (False, True):  # a quoted line break needs the slow mode
        try:
            table = pacsv.read_csv(
                src.stream(),
                read_options=pacsv.ReadOptions(block_size=1 << 24),
                parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True,
                                                 newlines_in_values=newlines_in_values),
                convert_options=pacsv.ConvertOptions(
                    column_types=types, include_columns=include, null_values=[],
                    strings_can_be_null=False, quoted_strings_can_be_null=False),
            )
        except pa.ArrowException as exc:
            arrow_error = str(exc)
            continue
        break
    if table is not None and (table.column_names != include or any(
            table.column(c).type != t for c, t in types.items())):
        table, arrow_error = None, "the header row was read differently"
    if table is None:
        raise _diagnose_delimited(src, kind, delimiter) or FormatError(
            f"could not read as delimited text with a header row ({_one_line(arrow_error)})",
            source=src.name)
    if table.num_rows == 0:
        raise FormatError(f"no {kind} rows after the header", source=src.name,
                          line=header_line)
    out = {k: table.column(col) for k, col in chosen.items()}
    del table
    if _from_rank(warnings):
        out["score"] = pc.negate(out["score"])
    result = pa.table(out)
    found = _problem(result, kind, edges=True)
    if found is not None:
        raise _diagnose_delimited(src, kind, delimiter) or FormatError(
            _problem_message(result, *found, edges=True), source=src.name)
    return result, warnings


def _from_rank(warnings: list[DataWarning]) -> bool:
    """Whether the score column is the rank column (to be negated)."""
    return any(w.code == "score-from-rank" for w in warnings)


def _text_lines(src: Source) -> Iterator[str]:
    """The lines of ``src`` decoded (endings kept); a FormatError names a non-UTF-8 line."""
    data = src.data
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    for lineno, raw in _iter_lines(data):
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise FormatError(f"line is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at "
                              f"column {exc.start + 1}); save the file as UTF-8",
                              source=src.name, line=lineno,
                              text=raw.decode("utf-8", "replace")) from None


def _diagnose_delimited(src: Source, kind: Kind, delimiter: str) -> FormatError | None:
    """Slow pass with Python's csv module naming the first bad line (only on failure)."""
    names, header_line = _header(src, delimiter)
    chosen, warnings = _choose_columns(names, src, kind, header_line)
    index = {k: names.index(col) for k, col in chosen.items()}
    value_key = _VALUE[kind]
    word = "rank" if _from_rank(warnings) else _VALUE_WORD[value_key]
    seen: dict[tuple[str, ...], int] = {}
    reader = _pycsv.reader(_text_lines(src), delimiter=delimiter)
    prev = 0
    header_seen = False
    while True:
        try:
            row = next(reader, None)
        except _pycsv.Error as exc:
            return FormatError(f"malformed {'CSV' if delimiter == ',' else 'TSV'} "
                               f"({_one_line(str(exc))})",
                               source=src.name, line=reader.line_num)
        if row is None:
            return None
        start, prev = prev + 1, reader.line_num
        if not row:  # an empty line: pyarrow skips it too
            continue
        if not header_seen:
            header_seen = True
            continue
        text = delimiter.join(row)
        if len(row) != len(names):
            return FormatError(f"expected {len(names)} fields ({delimiter.join(names)}), "
                               f"got {len(row)}", source=src.name, line=start, text=text)
        problem = None
        for key in _TEXT_KEYS:
            if key in index and problem is None:
                problem = _text_problem(row[index[key]], key, edges=True)
        if problem is None:
            problem = _value_problem(row[index[value_key]], word, repr(chosen[value_key]))
        if problem is not None:
            return FormatError(problem, source=src.name, line=start, text=text)
        key_fields = (row[index["qid"]], row[index["docid"]]) + (
            (_tag_key(row[index["tag"]]),) if "tag" in index else ())
        if key_fields in seen:
            return _dup_message(src, kind, seen[key_fields], start, row[index["qid"]],
                                row[index["docid"]], None)
        seen[key_fields] = start


def _columns_by_alias(table: pa.Table, src: Source, kind: Kind, *, header_line: int | None,
                      delimiter: str = ",") -> tuple[pa.Table, list[DataWarning]]:
    """Columns qid, docid, rel|score (+ tag) of an already parsed table, by alias.

    Kept for callers that parse themselves (:mod:`ireval_core.distributed`): ids are
    cast to strings, values to float64 (a non-numeric value names its line when
    ``header_line`` is given).
    """
    chosen, warnings = _choose_columns(table.column_names, src, kind, header_line)
    out = {}
    for k, name in chosen.items():
        col = table.column(name)
        if k in _TEXT_KEYS:
            col = col.cast(pa.string())
        else:
            col = _to_float(col, src, name, header_line, "rank" if _from_rank(warnings)
                            else _VALUE_WORD[k])
        out[k] = col
    if _from_rank(warnings):
        out["score"] = pc.negate(out["score"])
    return pa.table(out), warnings


def _to_float(col: pa.ChunkedArray, src: Source, name: str, header_line: int | None,
              word: str) -> pa.ChunkedArray:
    """``col`` as float64; a FormatError names the first value that is not a finite number."""
    if pa.types.is_boolean(col.type):
        raise FormatError(f"column {name!r} holds booleans; {word}s must be numbers",
                          source=src.name, line=header_line)
    try:
        values = col.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        values = None
    if values is None:
        if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)):
            raise FormatError(f"column {name!r} holds {col.type} values; {word}s must be "
                              "numbers", source=src.name, line=header_line)
        i = next((i for i, v in enumerate(col.to_pylist())  # only on failure
                  if v is None or not _STRICT_NUMBER.fullmatch(v)), 0)
        raise _value_error(src, name, header_line, i, col[i].as_py(), word, numeric=False)
    arr = _numeric(values)
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        i = int(bad[0])
        raise _value_error(src, name, header_line, i, col[i].as_py(), word, numeric=True)
    return values


def _value_error(src: Source, name: str, header_line: int | None, row: int, value: object,
                 word: str, *, numeric: bool) -> FormatError:
    what = "a finite numeric" if numeric else "a numeric"
    if header_line:
        return FormatError(f"expected {what} {word} in column {name!r}, got {value!r}",
                           source=src.name, line=row + header_line + 1)
    return FormatError(f"column {name!r}, row {row + 1}: expected {what} {word}, got "
                       f"{value!r}", source=src.name)


# ----------------------------------------------------------------------------- Parquet


def _read_parquet(src: Source, kind: Kind) -> tuple[pa.Table, list[DataWarning]]:
    import pyarrow.parquet as pq

    # Only file-level metadata is looked at from Python: pyarrow's accessors of row group
    # and column chunk metadata abort the process on some corrupt files (a C++ exception
    # where Python cannot catch it), while its readers report them as errors.
    try:
        schema = pq.ParquetFile(src.stream()).schema_arrow
        message = ""
    except (pa.ArrowException, OSError, ValueError, IndexError) as exc:
        message = str(exc)
    if message:
        raise FormatError(f"not a readable Parquet file ({_one_line(message)})",
                          source=src.name)
    chosen, warnings = _choose_columns(schema.names, src, kind, None)
    text_columns = []
    for k, col in chosen.items():
        typ = schema.field(col).type
        base = typ.value_type if pa.types.is_dictionary(typ) else typ
        if k in _TEXT_KEYS:
            if _is_text_type(base):
                text_columns.append(col)
            elif not pa.types.is_integer(base):
                raise FormatError(f"column {col!r} holds {typ} values; {_WHAT[k]}s must be "
                                  "strings (ids are never converted from numbers with a "
                                  "fraction or exponent)", source=src.name)
        elif not (pa.types.is_integer(base) or pa.types.is_floating(base)
                  or pa.types.is_decimal(base) or _is_text_type(base)):
            word = "rank" if _from_rank(warnings) else _VALUE_WORD[k]
            raise FormatError(f"column {col!r} holds {typ} values; {word}s must be numbers",
                              source=src.name)
    table, message = _read_parquet_bounded(src, list(chosen.values()), text_columns)
    if table is None:
        raise (src.limits.error(src.name, src.size, what="the Parquet file") if not message
               else FormatError(f"not a readable Parquet file ({_one_line(message)})",
                                source=src.name))
    if table.num_rows == 0:
        raise FormatError(f"the Parquet file has no rows; expected {kind} rows", source=src.name)
    out: dict[str, pa.ChunkedArray] = {}
    for k, col in chosen.items():
        values = table.column(col)
        typ = values.type
        base = typ.value_type if pa.types.is_dictionary(typ) else typ
        if k in _TEXT_KEYS:
            if pa.types.is_integer(base):
                values = values.cast(pa.string())
                warnings.append(DataWarning(
                    "integer-ids", f"column {col!r} holds integers: read as their decimal "
                    "text (7, never 007), which must match the other files exactly",
                    src.name))
            elif pa.types.is_string_view(base):
                values = values.cast(pa.string())
            if k == "tag" and values.null_count:
                values = pc.fill_null(values.cast(pa.string()), "")
        else:
            word = "rank" if _from_rank(warnings) else _VALUE_WORD[k]
            values = _to_float(values, src, col, None, word)
        out[k] = values
    del table
    if _from_rank(warnings):
        out["score"] = pc.negate(out["score"])
    result = pa.table(out)
    found = _problem(result, kind, edges=True)
    if found is not None:
        raise FormatError(_problem_message(result, *found, edges=True, column=chosen[found[0]]),
                          source=src.name)
    return result, warnings


def _read_parquet_bounded(src: Source, columns: list[str], dictionary_columns: list[str]
                          ) -> tuple[pa.Table | None, str]:
    """The columns, read batch by batch while their size stays within ``src.limits``.

    Returns the table, or None and pyarrow's message (empty when a limit was hit).
    Before anything is decoded, the row count alone must fit (8 bytes per row and
    column); then the batches are counted as they come (ids dictionary-coded, each
    dictionary once), so at most one batch of 64K rows is read past the limit.
    """
    import pyarrow.parquet as pq

    allowed = src.limits.allowed(src.size)
    batches: list[pa.RecordBatch] = []
    message = ""
    try:
        reader = pq.ParquetFile(src.stream(), read_dictionary=dictionary_columns)
        if reader.metadata.num_rows * 8 * len(columns) > allowed:
            return None, ""
        held = 0
        seen: set[int] = set()
        for batch in reader.iter_batches(batch_size=1 << 16, columns=columns):
            for col in batch.columns:
                if pa.types.is_dictionary(col.type):
                    held += col.indices.nbytes
                    key = col.dictionary.buffers()[-1].address if len(col.dictionary) else 0
                    if key not in seen:
                        seen.add(key)
                        held += col.dictionary.nbytes
                else:
                    held += col.nbytes
            if held > allowed:
                return None, ""
            # a corrupt file can decode to invalid arrays (dictionary indices out of
            # bounds): never let one reach a kernel
            batch.validate(full=True)
            batches.append(batch)
    except (pa.ArrowException, OSError, ValueError, IndexError) as exc:
        message = str(exc)
    if message:
        return None, message
    if not batches:
        return pa.table({c: string_array([]) for c in columns}), ""
    return pa.Table.from_batches(batches), ""


def _is_text_type(typ: pa.DataType) -> bool:
    return (pa.types.is_string(typ) or pa.types.is_large_string(typ)
            or pa.types.is_string_view(typ))


# ----------------------------------------------------------------------------- JSON


def _read_json(src: Source, kind: Kind) -> pa.Table:
    def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
        out: dict = {}
        for k, v in pairs:
            if k in out:
                raise FormatError(f"duplicate key {k!r} in a JSON object; each (query, "
                                  "document) may appear once", source=src.name)
            out[k] = v
        return out

    data = src.data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError("not valid UTF-8; save the file as UTF-8", source=src.name,
                          line=line) from None
    del data
    try:
        # integers become floats at once: a 400-digit number is a (too large) float,
        # never an int that numpy cannot hold
        obj = json.loads(text, object_pairs_hook=no_duplicates, parse_int=float)
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=src.name,
                          line=exc.lineno) from None
    except RecursionError:
        raise FormatError("invalid JSON: nested too deeply", source=src.name) from None
    del text
    word = _VALUE_WORD[_VALUE[kind]]
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object {{qid: {{docid: {word}}}}}", source=src.name)
    q: list[str] = []
    d: list[str] = []
    v: list[float] = []
    for qid, docs in obj.items():
        if not isinstance(docs, dict):
            raise FormatError(f"expected {{docid: {word}}} for query {_cut(qid)!r}, got "
                              f"{type(docs).__name__}", source=src.name)
        problem = _text_problem(qid, "qid", edges=True)
        if problem is not None:
            raise FormatError(problem, source=src.name)
        for docid, value in docs.items():
            problem = _text_problem(docid, "docid", edges=True)
            if problem is not None:
                raise FormatError(f"{problem} (query {_cut(qid)!r})", source=src.name)
            if isinstance(value, bool) or not isinstance(value, float) or not math.isfinite(
                    value):
                raise FormatError(f"expected a finite numeric {word} for query "
                                  f"{_cut(qid)!r}, document {_cut(docid)!r}, "
                                  f"got {shorten(repr(value), 40)}", source=src.name)
            q.append(qid)
            d.append(docid)
            v.append(value)
    if not q:
        raise FormatError(f"no entries; expected {{qid: {{docid: {word}}}}}", source=src.name)
    return pa.table({"qid": string_array(q), "docid": string_array(d),
                     _VALUE[kind]: from_numpy(np.asarray(v, dtype=np.float64))})
