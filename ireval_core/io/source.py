"""One input and the bounds on reading it: :class:`Source`, :class:`ReadLimits`.

Every reader of :mod:`ireval_core.io` takes a path, the bytes of an upload or a binary
file object, plain or gzip-compressed, and wraps it in a :class:`Source`: the name used
in messages and the bytes, read from disk only when needed. Gzip input is inflated in
a stream within :class:`ReadLimits` (:func:`inflate`), never past them; so are zip
archives (Excel workbooks, :func:`open_zip`).
"""

from __future__ import annotations

import io
import math
import os
import zlib
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np
import pyarrow as pa

from ..errors import FormatError, invalid_parameter, shorten

if TYPE_CHECKING:
    import zipfile

__all__ = ["DEFAULT_MAX_GZIP_RATIO", "DEFAULT_MAX_INFLATED_BYTES", "PathOrBytes", "ReadLimits",
           "Source", "SourceLike", "ZIP_MAGIC", "arrow_copy", "inflate", "one_line",
           "one_parse_thread", "parse_threads", "open_zip"]

_ONE_THREAD: ContextVar[bool] = ContextVar("ireval_one_parse_thread", default=False)


@contextmanager
def one_parse_thread() -> Iterator[None]:
    """Inside the block, text read on this thread is parsed by pyarrow's CSV reader on this
    thread alone (:func:`parse_threads` is False): for a reader running beside another
    that keeps a core busy (a run coding its ids), so that the two do not ask three threads
    of two cores."""
    token = _ONE_THREAD.set(True)
    try:
        yield
    finally:
        _ONE_THREAD.reset(token)


def parse_threads() -> bool:
    """Whether pyarrow's CSV reader may use its thread pool here (``use_threads``)."""
    return not _ONE_THREAD.get()

PathOrBytes = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO
"""One input of the qrels and run readers: a path, raw bytes or a binary file object."""
SourceLike = str | Path | bytes | bytearray | memoryview | BinaryIO | tuple[str, bytes]
"""One input: a path, raw bytes, a binary file object, or ``(name, bytes)`` (an upload)."""

ZIP_MAGIC = b"PK\x03\x04"
"""The first bytes of a zip archive (an Excel ``.xlsx`` workbook is one)."""
_GZIP_MAGIC = b"\x1f\x8b"

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


def one_line(text: str, limit: int = 120) -> str:
    """A message from elsewhere (pyarrow, zlib, csv, openpyxl) as one line of at most
    ``limit`` characters."""
    return shorten(" ".join(str(text).split()), limit)


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
    ``limits``) into memory owned by pyarrow. Text that is not UTF-8 is transcoded
    once, into a new source whose :attr:`encoding` names what it was
    (:func:`~ireval_core.io.encoding.decode_bom`, :func:`~ireval_core.io.encoding.read_text`).
    """

    def __init__(self, name: str, data: bytes | pa.Buffer | None = None,
                 path: Path | None = None, *, limits: ReadLimits | None = None,
                 encoding: str = "UTF-8") -> None:
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
        self.encoding = encoding
        """The text encoding the bytes were read from: ``"UTF-8"``, or the encoding of a
        file transcoded to UTF-8 (:mod:`~ireval_core.io.encoding`)."""

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
                    return cls(name, inflate(fh, size, name, limits), limits=limits)
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
            return cls(name, inflate(io.BytesIO(data), len(data), name, limits), limits=limits)
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
            return pa.BufferReader(arrow_copy(self._data))
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
        return file_stem(self.name)


def file_stem(name: str) -> str:
    """``name`` without folders and known extensions (``run.bm25.txt.gz`` → ``run.bm25``):
    the part of a run's name that says which file it came from."""
    stem = Path(name).name
    for ext in (".gz", ".txt", ".trec", ".tsv", ".csv", ".parquet", ".pq", ".json",
                ".qrels", ".run", ".res", ".xlsx", ".xlsm"):
        if stem.lower().endswith(ext) and len(stem) > len(ext):
            stem = stem[: -len(ext)]
    return stem


def arrow_copy(data: bytes) -> pa.Buffer:
    """``data`` copied into a buffer that pyarrow owns (no Python object behind it)."""
    buf = pa.allocate_buffer(len(data))
    if data:
        memoryview(buf).cast("B")[:] = data
    return buf


def inflate(fh: BinaryIO, compressed_size: int, name: str, limits: ReadLimits) -> pa.Buffer:
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
                raise FormatError(f"not valid gzip data ({one_line(str(exc))})",
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


def open_zip(src: Source, what: str, *, find: Sequence[bytes] = ()
             ) -> tuple[zipfile.ZipFile, set[str]]:
    """``src`` opened as a zip archive whose members inflate within ``src.limits``.

    A zip archive (an Excel ``.xlsx`` workbook) is held to the bounds of gzip input,
    twice over:

    * before anything is inflated, the sizes its directory declares must add up to no
      more than :meth:`ReadLimits.allowed` for the archive's size;
    * then every member is inflated once, in steps of at most 1 MiB that are counted
      and dropped, so that a directory declaring less than a member holds (a forged
      archive) is caught while inflating, never past the bound: :mod:`zipfile` stops
      a member at its declared size, and the member then fails its CRC check.

    Only then may a reader that trusts the directory (openpyxl reads some members
    whole) open it. Returns the archive and the names of the members in which one of
    the byte strings ``find`` occurs (a cheap search made during the same pass).
    ``what`` names the archive in messages (``"Excel .xlsx workbook"``).

    >>> import io, zipfile
    >>> buf = io.BytesIO()
    >>> with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
    ...     z.writestr("big.xml", b"0" * 50_000_000)
    >>> try:
    ...     open_zip(Source("bomb.xlsx", buf.getvalue()), "Excel .xlsx workbook")
    ... except FormatError as exc:
    ...     print(exc.message.split(" its ")[0])
    the Excel .xlsx workbook expands more than 200 times
    """
    import zipfile  # only for workbooks: not on the qrels and runs path

    limits = src.limits
    allowed = limits.allowed(src.size)
    problem = ""
    try:
        archive = zipfile.ZipFile(io.BytesIO(src.data))
        members = archive.infolist()
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
        problem = f"{type(exc).__name__}: {one_line(str(exc))}"
    if problem:  # raised here, not in the except block: nothing of the input is chained
        raise FormatError(f"not a readable {what} ({problem})", source=src.name)
    if sum(m.file_size for m in members) > allowed:
        archive.close()
        raise limits.error(src.name, src.size, what=f"the {what}")
    found: set[str] = set()
    overlap = max((len(f) for f in find), default=1) - 1
    total = 0
    try:
        for member in members:
            if member.is_dir():
                continue
            tail = b""
            with archive.open(member) as fh:
                while piece := fh.read(_READ_STEP):
                    total += len(piece)
                    if total > allowed:  # never with a sound zipfile: declared sizes hold
                        raise limits.error(src.name, src.size, what=f"the {what}")
                    if find and member.filename not in found:
                        window = tail + piece
                        if any(f in window for f in find):
                            found.add(member.filename)
                        tail = window[-overlap:] if overlap else b""
    except FormatError:
        archive.close()
        raise
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, ValueError,
            EOFError, zlib.error) as exc:
        problem = f"{type(exc).__name__}: {one_line(str(exc))}"
    if problem:
        archive.close()
        raise FormatError(f"not a readable {what} ({problem})", source=src.name)
    return archive, found
