"""Reading qrels, runs and labeled rows as Dask DataFrames, and finding a failed read's error.

The Dask engine (:mod:`ireval_core.distributed`) reads its input here, as the in-memory
engine reads it in the rest of :mod:`ireval_core.io`: the same parsers, the same ids
(text exactly as written) and the same errors.

* :func:`read_qrels_dask`, :func:`read_runs_dask`: qrels and runs in the canonical
  columns (``qid``, ``docid``, ``value`` [, ``tag``]). How each format is read is
  :data:`~ireval_core.io.detect.DASK_READING`'s: TREC and CSV/TSV text cut into blocks of
  whole lines (:data:`DEFAULT_BLOCKSIZE` bytes; a gzip file one block), each block read
  by ireval's own parser; Parquet by Dask's reader (row groups, Arrow types); a format
  read ``"file"`` by file, each file whole in one partition by
  :func:`~ireval_core.io.qrels_runs.read_columns`; the others (JSON, Excel) refused
  with a :class:`~ireval_core.errors.FormatError` saying they are read in memory only.
* :func:`first_error`: when a task failed, the error the in-memory engine gives for the
  same input, whichever task failed first: the qrels' before the runs', a file's first
  bad line before its later ones, with the same "and N more problems" count (text is
  read again block by block, line by line; Parquet rows are numbered as the in-memory
  reader numbers them).
* :func:`labeled_frame`, :func:`labeled_ids`: labeled rows (a click log, model scores)
  from Parquet, CSV/TSV or a Dask DataFrame, their ids as text.
* :func:`compute`: Dask objects computed all or nothing (a lost job is a
  :class:`~ireval_core.errors.DistributedError`, never a partial result).
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import IO, TYPE_CHECKING, Any, Literal

import dask
import dask.dataframe as dd
import fsspec  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..errors import DistributedError, FormatError, IrevalError, Problem, invalid_parameter, shorten
from .checks import MAX_PROBLEMS, dup_message
from .column_cache import CacheSettings
from .columns import Kind
from .dask_blocks import block_cache, block_key, cached_block, keeping_blocks, kept_blocks
from .delimited import check_delimited_rows
from .detect import DASK_READING, MEMORY_ONLY_WORDS, detect_format, is_workbook
from .partitions import (
    NO_TAG,
    block_without_comments,
    check_columns,
    check_values,
    columns_by_alias,
    ids_as_text,
)
from .qrels_runs import empty_file_error, read_columns
from .source import ReadLimits, Source, inflate
from .trec import check_first_line, check_trec_lines, groups_note, trec_key

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["DEFAULT_BLOCKSIZE", "GZIP", "TEXT", "PathLike", "Sources", "chunked", "compute",
           "duplicates_of", "empty_like", "first_error", "first_line", "frame_meta",
           "keeping_blocks", "keys_frame",
           "name_of", "read_qrels_dask", "read_runs_dask", "stem"]

DEFAULT_BLOCKSIZE = 64 * 2**20
"""Bytes of text per partition when reading TREC or CSV files (gzip files: one each)."""

PathLike = str | os.PathLike[str]
Sources = PathLike | Sequence[PathLike]

TEXT = pd.StringDtype("pyarrow")
"""The dtype of every id and tag column of the frames read here."""
GZIP = b"\x1f\x8b"
"""The first two bytes of a gzip file."""


# ----------------------------------------------------------------------------- computing


def first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def compute(client: Client | None, *objs: Any,
             progress: Callable[[int, int], None] | None = None) -> tuple[Any, ...]:
    """Compute Dask objects on ``client`` (or Dask's current scheduler), all or nothing.

    On a cluster, each result is fetched as soon as it is ready and released on the
    worker, so workers never hold the per-query values of every partition at once;
    ``progress(done, total)`` is called after each (with Dask's local schedulers, once
    at the end).
    """
    if client is None:
        out = _all_or_nothing(lambda: tuple(dask.compute(*objs)))
        if progress is not None:
            progress(len(objs), len(objs))
        return out
    from distributed import as_completed

    futures = client.compute(list(objs))

    def fetch() -> tuple[Any, ...]:
        slot = {f.key: i for i, f in enumerate(futures)}
        out: list[Any] = [None] * len(futures)
        for done, fut in enumerate(as_completed(futures), start=1):
            out[slot[fut.key]] = fut.result()
            fut.release()
            if progress is not None:
                progress(done, len(futures))
        return tuple(out)

    try:
        return _all_or_nothing(fetch)
    except BaseException:
        client.cancel(futures)  # stop what is still running
        raise


def _all_or_nothing(run: Callable[[], tuple[Any, ...]]) -> tuple[Any, ...]:
    try:
        return run()
    except IrevalError:
        raise
    except Exception as exc:  # a worker lost beyond the retries, a closed connection, ...
        raise DistributedError(
            f"the Dask job stopped before every partition was evaluated ({first_line(exc)}); "
            "no partial result is returned") from exc


# ----------------------------------------------------------------------------- reading


def read_qrels_dask(source: Sources | dd.DataFrame, *, storage_options: Mapping[str, Any]
                    | None = None, blocksize: int | None = DEFAULT_BLOCKSIZE,
                    limits: ReadLimits | None = None, comments: bool = False) -> dd.DataFrame:
    """Qrels as a Dask DataFrame with columns ``qid``, ``docid`` (strings), ``value`` (grade).

    Parameters
    ----------
    source:
        A Parquet file or dataset folder, TREC or CSV/TSV files (a path, a folder, a
        glob, or a list of them), local or any fsspec URL; or a Dask DataFrame with
        the column names :mod:`ireval_core.io` accepts.
    storage_options:
        Passed to fsspec (credentials of ``s3://`` and the like).
    blocksize:
        Bytes of text per partition (``None``: one partition per file).
    limits:
        How far a gzip file may inflate in a worker's memory (default:
        :meth:`~ireval_core.io.ReadLimits.from_env` on the client, so the workers
        apply the client's ``IREVAL_MAX_INFLATED_BYTES`` / ``IREVAL_MAX_GZIP_RATIO``).
    comments:
        Skip TREC text comment lines as trec_eval 10.0 does (``#`` at a qrels line's
        first character, not right after another comment line; a run line's first
        non-blank character), as :func:`ireval_core.io.read_qrels` with ``comments``;
        trec_eval 9.0.8 reads them as data (the default).

    Ids are text exactly as written, as :mod:`ireval_core.io` reads them: a Parquet
    id column holds strings, or integers read as their decimal text (``7``); a
    column of any other type (float, boolean, ...) is a
    :class:`~ireval_core.errors.FormatError` naming it, raised before any
    partition is read. So is a text file without a data line (blank, or comment lines
    only with ``comments``), as the in-memory readers refuse it, whatever ``blocksize``.
    Bad lines raise a ``FormatError`` naming the file and the line, when the partition
    holding them is read.
    """
    return _read(source, "qrels", None, storage_options, blocksize, limits, comments)


def read_runs_dask(source: Sources | dd.DataFrame, *, name: str | None = None,
                   storage_options: Mapping[str, Any] | None = None,
                   blocksize: int | None = DEFAULT_BLOCKSIZE,
                   limits: ReadLimits | None = None, comments: bool = False) -> dd.DataFrame:
    """Runs as a Dask DataFrame with columns ``qid``, ``docid``, ``value`` (score), ``tag``.

    ``tag`` names the system of each row; without a tag column it is ``name``, by
    default the file or folder name without extensions (as
    :func:`ireval_core.io.read_runs`). Other parameters as :func:`read_qrels_dask`.
    """
    return _read(source, "run", name, storage_options, blocksize, limits, comments)


def frame_meta(kind: Kind | Literal["union"]) -> pd.DataFrame:
    cols: dict[str, pd.Series] = {"qid": pd.Series([], dtype=TEXT),
                                  "docid": pd.Series([], dtype=TEXT),
                                  "value": pd.Series([], dtype=np.float64)}
    if kind != "qrels":
        cols["tag"] = pd.Series([], dtype=TEXT)
    if kind == "union":
        cols["run"] = pd.Series([], dtype=np.int16)
    return pd.DataFrame(cols)


def name_of(source: Sources | dd.DataFrame, kind: str) -> str:
    if isinstance(source, dd.DataFrame):
        return kind
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return ",".join(os.fspath(s) for s in source)


def stem(name: str) -> str:
    return Source(name.rstrip("/").rsplit("/", 1)[-1] or name, data=b"").stem


def _read(source: Sources | dd.DataFrame, kind: Kind, tag: str | None,
          storage_options: Mapping[str, Any] | None, blocksize: int | None,
          limits: ReadLimits | None, comments: bool = False) -> dd.DataFrame:
    function = f"read_{kind}s_dask" if kind == "run" else "read_qrels_dask"
    if blocksize is not None and (isinstance(blocksize, bool) or not isinstance(blocksize, int)
                                  or blocksize < 1):
        raise invalid_parameter("blocksize", function, "an int >= 1 or None", blocksize)
    if limits is not None and not isinstance(limits, ReadLimits):
        raise invalid_parameter("limits", function, "a ReadLimits or None", limits,
                                error=TypeError)
    limits = limits or ReadLimits.from_env()  # the client's, given to every worker
    name = name_of(source, kind)
    tag = tag or stem(name)
    if isinstance(source, dd.DataFrame):
        if list(source.columns) == list(frame_meta(kind).columns):  # read by this module already
            return source
        check_columns(list(source.columns), kind, name)
        ids_as_text(empty_like(source._meta), kind, name)  # a float id column: now
        return source.map_partitions(_canonical_pandas, kind, tag, name, meta=frame_meta(kind))
    fs, files = _files(source, storage_options)
    if not files:
        raise FormatError(f"no {kind} file found", source=name)
    first = Source(files[0], data=_head(fs, files[0]))
    fmt = "xlsx" if is_workbook(first) else detect_format(first)
    how = DASK_READING[fmt]
    if how == "memory":
        raise FormatError(f"{MEMORY_ONLY_WORDS.get(fmt, f'{fmt} input is')} read in memory "
                          "only (--engine memory); give Parquet, CSV/TSV or TREC text to Dask",
                          source=files[0])
    if how == "file":
        return _file_frame(fs, files, kind, fmt, tag, limits)
    if how == "dataset":
        urls = [fs.unstrip_protocol(f) for f in files]
        # Arrow types, not numpy's: an integer id column with a null would become
        # float64 (12345678901234567 -> "12345678901234568")
        probe = dd.read_parquet(urls, storage_options=storage_options, dtype_backend="pyarrow")
        cols = check_columns(list(probe.columns), kind, name)
        ids_as_text(empty_like(probe._meta), kind, name)  # a float id column: now
        frame = dd.read_parquet(urls, columns=cols, storage_options=storage_options,
                                dtype_backend="pyarrow")
        frame = frame.map_partitions(_canonical_pandas, kind, tag, name, meta=frame_meta(kind))
        _remember(frame, _TablePlan(kind, fs, tuple(files), tuple(cols), tag))
        return frame
    return _text_frame(fs, files, kind, fmt, tag, blocksize, limits,
                       comments and fmt == "trec")


def _file_frame(fs: Any, files: list[str], kind: Kind, fmt: str, tag: str,
                limits: ReadLimits) -> dd.DataFrame:
    """A format read by file (``"file"`` in :data:`~.detect.DASK_READING`): each file whole
    in one partition, read by the in-memory reader
    (:func:`~ireval_core.io.qrels_runs.read_columns`), gzip inflated within ``limits``."""
    for path in files:
        if not fs.size(path):
            raise empty_file_error(path, kind)
    parts = [dask.delayed(_read_file)(fs, path, kind, fmt, tag, limits) for path in files]
    return dd.from_delayed(parts, meta=frame_meta(kind), verify_meta=False)


def _read_file(fs: Any, path: str, kind: Kind, fmt: str, tag: str,
               limits: ReadLimits) -> pd.DataFrame:
    size = fs.size(path)
    with fs.open(path, "rb") as fh:
        compressed = fh.read(2) == GZIP
        fh.seek(0)
        data = inflate(fh, size, path, limits) if compressed else fh.read()
    table, _ = read_columns(Source(path, data=data, limits=limits), kind, fmt)  # type: ignore[arg-type]
    return _canonical(table, kind, tag, path, check=True)


def _files(source: Sources, storage_options: Mapping[str, Any] | None
           ) -> tuple[Any, list[str]]:
    """The file system of ``source`` and its files: each path, or a folder's files (names
    starting with ``_`` or ``.`` left out), in order."""
    paths = [os.fspath(s) for s in ([source] if isinstance(source, str | os.PathLike)
                                    else source)]
    fs, _, found = fsspec.get_fs_token_paths(paths, storage_options=dict(storage_options or {}))
    files: list[str] = []
    for p in found:
        if fs.isdir(p):
            files.extend(f for f in sorted(fs.find(p))
                         if not f.rsplit("/", 1)[-1].startswith(("_", ".")))
        else:
            files.append(p)
    return fs, files


def empty_like(meta: pd.DataFrame) -> pa.Table:
    """The Arrow schema of a Dask frame's ``meta``, as an empty table."""
    try:
        return pa.Table.from_pandas(meta.iloc[:0], preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return pa.table({c: pa.array([], pa.string()) for c in meta.columns})


def _head(fs: Any, path: str, size: int = 1 << 16) -> bytes:
    with fs.open(path, "rb") as fh:
        data = fh.read(size)
    if data[:2] == GZIP:
        try:
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, size)
        except zlib.error as exc:
            raise FormatError(f"cannot decompress gzip data ({exc})", source=path) from None
    return bytes(data)


@dataclass(frozen=True)
class _Block:
    """One read task of a text file: the lines starting in ``[offset, offset + length)``
    (``length`` None: the whole file), and how they are read."""

    fs: Any
    path: str
    size: int
    offset: int
    length: int | None
    kind: Kind
    fmt: str
    header: bytes | None  # a CSV/TSV file's header line, put before a later block's lines
    tag: str
    limits: ReadLimits
    comments: bool
    cache: CacheSettings | None = None  # the client's block cache (:func:`keeping_blocks`)


@dataclass(frozen=True)
class _Plan:
    """How a text input was cut into read tasks: its files in order, each with its blocks
    in order (the partitions of the frame, in that order)."""

    kind: Kind
    files: tuple[tuple[str, tuple[_Block, ...]], ...]


@dataclass(frozen=True)
class _TablePlan:
    """A Parquet input: its files in order (its frame's partitions follow them), the
    columns read and the tag of rows without one."""

    kind: Kind
    fs: Any
    files: tuple[str, ...]
    columns: tuple[str, ...]
    tag: str


_PLANS: dict[str, _Plan | _TablePlan] = {}
"""The plans of the text and Parquet frames this module built, by the frame's token
(``dask.base.tokenize``: a hash of its tasks): :func:`evaluate_dask` diagnoses a failed
read with them. Kept for the last
:data:`_MAX_PLANS` frames."""
_MAX_PLANS = 256


def _text_frame(fs: Any, files: list[str], kind: Kind, fmt: str, tag: str,
                blocksize: int | None, limits: ReadLimits, comments: bool) -> dd.DataFrame:
    plan: list[tuple[str, tuple[_Block, ...]]] = []
    for path in files:
        size = fs.size(path)
        if not size:
            raise empty_file_error(path, kind)
        with fs.open(path, "rb") as fh:
            compressed = fh.read(2) == GZIP
        header = None
        if fmt in ("csv", "tsv"):
            header = _head(fs, path).split(b"\n", 1)[0] + b"\n"
        spans: list[tuple[int, int | None]]
        if compressed or blocksize is None or size <= blocksize:
            spans = [(0, None)]
        else:
            spans = [(off, blocksize) for off in range(0, size, blocksize)]
            if fmt == "trec" and not _has_data_line(fs, path, kind, comments):
                raise empty_file_error(path, kind)  # each block alone would read as empty
            if header is not None and not _has_row_after_header(fs, path):
                raise FormatError(f"no {kind} rows after the header", source=path, line=1)
        plan.append((path, tuple(_Block(fs, path, size, off, length, kind, fmt, header, tag,
                                        limits, comments, kept_blocks())
                                 for off, length in spans)))
    parts = [dask.delayed(_read_text_block)(block) for _, blocks in plan for block in blocks]
    frame = dd.from_delayed(parts, meta=frame_meta(kind), verify_meta=False)
    _remember(frame, _Plan(kind, tuple(plan)))
    return frame


def _remember(frame: dd.DataFrame, plan: _Plan | _TablePlan) -> None:
    while len(_PLANS) >= _MAX_PLANS:
        del _PLANS[next(iter(_PLANS))]
    _PLANS[dask.base.tokenize(frame)] = plan


def _has_data_line(fs: Any, path: str, kind: Kind, comments: bool) -> bool:
    """Whether a TREC text file holds a line that is neither blank nor (with
    ``comments``) a comment line trec_eval 10.0 skips, as the in-memory reader decides
    before it says "file is empty". Read from the start in 64 KB pieces of whole lines,
    only until the first such line: a few bytes for an ordinary file."""
    after, tail = False, b""
    with fs.open(path, "rb") as fh:
        while True:
            chunk = fh.read(1 << 16)
            data = tail + chunk
            if chunk:  # whole lines only; the rest waits for the next piece
                cut = data.rfind(b"\n") + 1
                data, tail = data[:cut], data[cut:]
            if data:
                src = Source(path, data=data)
                if comments:
                    src = block_without_comments(src, kind, after_comment=after)
                if src.data.strip():
                    return True
                # all blank: a last line starting with '#' was a skipped comment line
                after = kind != "run" and data.rstrip(b"\r\n").rsplit(b"\n", 1)[-1][:1] == b"#"
            if not chunk:
                return False


def _has_row_after_header(fs: Any, path: str) -> bool:
    """Whether a CSV/TSV file holds a non-blank line after its first (the header), read
    in 64 KB pieces only until the first such line (as the in-memory reader refuses a
    file with none: "no run rows after the header")."""
    seen_header = False
    with fs.open(path, "rb") as fh:
        while chunk := fh.read(1 << 16):
            if not seen_header:
                if b"\n" not in chunk:
                    continue  # still in the header line
                chunk, seen_header = chunk.split(b"\n", 1)[1], True
            if chunk.strip():
                return True
    return False


def _read_text_block(block: _Block) -> pd.DataFrame:
    """The lines of ``block``, read by ireval's parser (:func:`_block_source`).

    Errors keep the file's own line numbers: lines before the block are counted (only
    on failure). Which error :func:`evaluate_dask` reports when several blocks fail is
    decided by :func:`_diagnose_input`, not by which of these tasks fails first.
    """
    src, start, header_lines, _ = _block_source(block)
    if src is None:
        return frame_meta(block.kind)
    cache = block_cache(block.cache)
    key = None if cache is None else block_key(src, block.kind, block.fmt, block.tag,
                                               block.limits)
    if cache is not None and key is not None:
        hit = cached_block(cache, key, block.kind, list(frame_meta(block.kind).columns))
        if hit is not None:
            return hit.to_pandas(types_mapper={pa.string(): TEXT}.get)
    try:
        table, _ = read_columns(src, block.kind, block.fmt)  # type: ignore[arg-type]
    except FormatError as exc:
        if exc.line is None or start == 0:
            raise
        before = _count_lines(block.fs, block.path, start)
        raise FormatError(exc.message, source=block.path, line=exc.line + before - header_lines,
                          text=exc.text) from None
    canonical = _canonical_table(table, block.kind, block.tag, block.path)
    if cache is not None and key is not None:
        cache.store(key, {c: canonical.column(c) for c in canonical.column_names},
                    {"kind": f"dask-{block.kind}"})
    return canonical.to_pandas(types_mapper={pa.string(): TEXT}.get)


def _block_source(block: _Block) -> tuple[Source | None, int, int, int]:
    """The text a block's lines are read from (None: no row in it), where its lines
    start in the file, how many lines of that text come before them (a CSV/TSV header
    put first: 0 or 1), and how many line ends the block's own bytes hold.

    A gzip file (always one block) is inflated in a stream within the block's limits,
    as :mod:`ireval_core.io` does: past them, a :class:`FormatError` names the file and
    the limit, and no more than the limit was held. With ``comments``, TREC text is read
    with trec_eval 10.0's comment rule (:func:`block_without_comments`; for a qrels block
    starting with ``#``, the ``#`` lines right before it say whether it is read as data).
    """
    prefix = b""
    kind, size, offset, length = block.kind, block.size, block.offset, block.length
    with block.fs.open(block.path, "rb") as fh:
        if length is None:  # a whole file
            compressed, start = fh.read(2) == GZIP, 0
            fh.seek(0)
            src = Source(block.path, data=inflate(fh, size, block.path, block.limits)
                         if compressed else fh.read(), limits=block.limits)
            lines = 0  # no block after it
        else:
            data, start = _line_block(fh, size, offset, length)
            lines = _lines_in(data)
            rows = data
            if block.header is not None and start == 0:  # the first block starts with it
                rows = data.split(b"\n", 1)[1] if b"\n" in data else b""
            if not rows.strip() and not (start == 0 and offset + length >= size):
                return None, start, 0, lines  # no row in this block (blank lines, the header)
            prefix = block.header if block.header is not None and start > 0 else b""
            src = Source(block.path, data=prefix + data, limits=block.limits)
        if block.comments:
            after = (kind != "run" and start > 0 and src.data.startswith(b"#")
                     and _comment_lines_before(fh, start) % 2 == 1)
            src = block_without_comments(src, kind, after_comment=after)
            whole = start == 0 and (length is None or offset + length >= size)
            if not whole and not src.data.strip():  # comment lines only: no rows here
                return None, start, 0, lines
    return src, start, 1 if prefix else 0, lines


def _line_block(fh: IO[bytes], size: int, offset: int, length: int) -> tuple[bytes, int]:
    """Bytes of the lines that start in ``[offset, offset + length)``, and where they start."""
    start = 0 if offset == 0 else _next_line_start(fh, offset)
    stop = size if offset + length >= size else _next_line_start(fh, offset + length)
    if stop <= start:
        return b"", start
    fh.seek(start)
    return fh.read(stop - start), start


def _next_line_start(fh: IO[bytes], pos: int) -> int:
    """The first position >= ``pos`` where a line starts (just after a newline), or EOF."""
    fh.seek(pos - 1)
    at = pos - 1
    while True:
        chunk = fh.read(1 << 16)
        if not chunk:
            return at
        i = chunk.find(b"\n")
        if i >= 0:
            return at + i + 1
        at += len(chunk)


def _comment_lines_before(fh: IO[bytes], pos: int) -> int:
    """How many lines starting with ``#`` come right before the line at ``pos`` (a line
    start): under trec_eval 10.0's qrels rule they are comment, data, comment, ... so the
    line at ``pos`` follows a skipped comment line when the count is odd."""
    count, end, tail = 0, pos, b""
    while end > 0:
        start = max(0, end - (1 << 16))
        fh.seek(start)
        chunk = fh.read(end - start) + tail
        lines = chunk[:-1].split(b"\n") if chunk.endswith(b"\n") else chunk.split(b"\n")
        if start > 0:  # the first piece may be the end of a longer line: read it again
            tail, lines = lines[0], lines[1:]
        for line in reversed(lines):
            if not line.startswith(b"#"):
                return count
            count += 1
        end = start
    return count


def _count_lines(fs: Any, path: str, end: int) -> int:
    n = 0
    with fs.open(path, "rb") as fh:
        while end > 0:
            chunk = fh.read(min(end, 1 << 24))
            if not chunk:
                break
            n += chunk.count(b"\n")
            end -= len(chunk)
    return n


def _canonical_pandas(df: pd.DataFrame, kind: Kind, tag: str, name: str) -> pd.DataFrame:
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # e.g. an object column of mixed types
        raise FormatError(f"columns that are not one type each ({first_line(exc)})",
                          source=name) from None
    table = ids_as_text(table, kind, name)  # before the columns lose their names
    table, _ = columns_by_alias(table, Source(name, data=b""), kind, header_line=None)
    return _canonical(table, kind, tag, name, check=True)


def _canonical(table: pa.Table, kind: Kind, tag: str, name: str, *,
               check: bool = False) -> pd.DataFrame:
    """qid, docid (strings), value (float64) [, tag] from a table of ireval's readers.

    ``check``: validate ids and values as io does (for Parquet and Dask frames; text
    blocks were checked by io's reader already).
    """
    return _canonical_table(table, kind, tag, name, check=check).to_pandas(
        types_mapper={pa.string(): TEXT}.get)


def _canonical_table(table: pa.Table, kind: Kind, tag: str, name: str, *,
                     check: bool = False) -> pa.Table:
    """:func:`_canonical`'s columns as an Arrow table."""
    ids = {c: table.column(c).cast(pa.string()) for c in ("qid", "docid")}
    for c, col in ids.items():
        if col.null_count:
            raise FormatError(f"{col.null_count} row(s) without a "
                              f"{'query' if c == 'qid' else 'document'} id", source=name)
    value = "rel" if kind == "qrels" else "score"
    cols: dict[str, Any] = {**ids, "value": table.column(value).cast(pa.float64())}
    if kind == "run":
        if "tag" in table.column_names:  # an empty or missing tag: the input's name, as io
            tags = pc.fill_null(table.column("tag").cast(pa.string()), "")
            cols["tag"] = pc.if_else(pc.is_in(tags, value_set=NO_TAG), tag, tags)
        else:
            cols["tag"] = pa.array([tag] * table.num_rows, pa.string())
    canonical = pa.table(cols)
    if check:
        check_values(canonical, kind, name)
    return canonical


# ----------------------------------------------------------------------------- diagnosis


@dataclass(frozen=True)
class _BlockReport:
    """What the line-by-line pass found in one block: its bad lines (the first
    :data:`~ireval_core.io.checks.MAX_PROBLEMS`, numbered within the block's own bytes)
    and how many, or an error that stops the reading of the file there (``fatal``);
    and the block's line ends, to number the next blocks' lines."""

    lines: int
    problems: tuple[Problem, ...] = ()
    count: int = 0
    fatal: FormatError | None = None
    header_lines: int = 0  # lines of the fatal error's text before the block's own


_KEYS = {"qid": TEXT, "docid": TEXT, "tag": TEXT, "group": TEXT, "text": TEXT,
         "file": np.int32, "block": np.int32, "line": np.int64}
"""Columns of the good lines a block sends to the duplicate search: the fields that may
not repeat (``tag``: a run line's tag key, else empty), a TREC qrels line's judgment
group, the line as written (TREC) and where it is."""


def keys_frame(rows: list[tuple[str, str, str, str, str | None, int]], file: int,
                block: int) -> pd.DataFrame:
    cols = list(zip(*rows, strict=True)) if rows else [()] * 6
    table = pa.table({"qid": pa.array(cols[0], pa.string()),
                      "docid": pa.array(cols[1], pa.string()),
                      "tag": pa.array(cols[2], pa.string()),
                      "group": pa.array(cols[3], pa.string()),
                      "text": pa.array(cols[4], pa.string()),
                      "file": pa.array(np.full(len(rows), file, np.int32)),
                      "block": pa.array(np.full(len(rows), block, np.int32)),
                      "line": pa.array(np.asarray(cols[5], dtype=np.int64))})
    return table.to_pandas(types_mapper={pa.string(): TEXT}.get)


def _diagnose_block(block: _Block, file: int, index: int) -> tuple[_BlockReport, pd.DataFrame]:
    """Every line of a block checked as the in-memory reader checks a file on failure
    (:func:`~ireval_core.io.trec.check_trec_lines`,
    :func:`~ireval_core.io.delimited.check_delimited_rows`): its report, and its good
    lines for the duplicate search. Never raises a :class:`FormatError`: an error that
    is not a bad line (gzip past the limits, a run given as qrels, a bad header, text
    the reader cannot decode) is the report's ``fatal``."""
    empty = keys_frame([], file, index)
    try:
        src, start, header_lines, lines = _block_source(block)
    except FormatError as exc:
        return _BlockReport(0, fatal=exc), empty
    if src is None:
        return _BlockReport(lines), empty
    kind = block.kind
    kept: list[Problem] = []
    count = 0
    rows: list[tuple[str, str, str, str, str | None, int]] = []
    try:
        if block.fmt == "trec":
            if start == 0:
                check_first_line(src, kind)
            for line in check_trec_lines(src, kind, first_line=1 - header_lines):
                if line.problem is not None:
                    count += 1
                    if len(kept) < MAX_PROBLEMS:
                        kept.append(Problem(block.path, line.line, "", line.problem,
                                            shorten(line.text)))
                    continue
                key = trec_key(kind, line.fields)
                rows.append((key[0], key[1], key[2] if kind == "run" else "",
                             line.fields[1] if kind == "qrels" else "", line.text, line.line))
        else:
            delimiter = "," if block.fmt == "csv" else "\t"
            for row in check_delimited_rows(src, kind, delimiter, first_line=1 - header_lines):
                if row.problem is not None:
                    count += 1
                    if len(kept) < MAX_PROBLEMS:
                        kept.append(Problem(block.path, row.line, "", row.problem,
                                            None if row.text is None else shorten(row.text)))
                    continue
                rows.append((row.key[0], row.key[1], row.key[2] if len(row.key) > 2 else "",
                             "", None, row.line))
    except FormatError:  # a bad header, a run given as qrels, a line not UTF-8, ...
        rows, count = [], 0
    if not count:  # no bad line: what else the reader refuses, as the read task does
        try:
            read_columns(src, kind, block.fmt)  # type: ignore[arg-type]
        except FormatError as exc:
            return _BlockReport(lines, fatal=exc, header_lines=header_lines), empty
    return _BlockReport(lines, tuple(kept), count), keys_frame(rows, file, index)


_DUPS = {**_KEYS, "first_file": np.int32, "first_block": np.int32, "first_line": np.int64,
         "first_group": TEXT}


def duplicates_of(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[int, int], int]]:
    """The lines of a partition (shuffled by query) that give a key again, each with the
    first line giving it, as the in-memory reader pairs them: the first
    :data:`~ireval_core.io.checks.MAX_PROBLEMS` in file order, and how many per (file,
    block)."""
    key = ["qid", "docid", "tag"]
    df = df.sort_values(["file", "block", "line"], kind="stable")
    again = df.duplicated(key, keep="first").to_numpy()
    if not again.any():
        return pd.DataFrame({c: pd.Series([], dtype=t) for c, t in _DUPS.items()}), {}
    firsts = df[~again][key + ["file", "block", "line", "group"]].rename(
        columns={c: f"first_{c}" for c in ("file", "block", "line", "group")})
    dups = df[again].merge(firsts, on=key, how="left", sort=False)
    counts = dups.groupby(["file", "block"]).size()
    dups = dups.sort_values(["file", "block", "line"], kind="stable").head(MAX_PROBLEMS)
    return dups, {(int(f), int(b)): int(n) for (f, b), n in counts.items()}


def _diagnose_input(frame: dd.DataFrame, client: Client | None) -> FormatError | None:
    """The error the in-memory reader gives for the first file of an input that has one
    (None when none has), whichever task failed first.

    For text this module read (a :class:`_Plan`), every block is checked line by line
    (:func:`_diagnose_block`) and the good lines are shuffled by query to find the ones
    giving a (query, document) again (:func:`duplicates_of`); then, file by file in
    order, the bad lines and the duplicates are numbered as the file's lines and merged
    in line order: the first :data:`~ireval_core.io.checks.MAX_PROBLEMS` kept, all
    counted. Other frames (Parquet, a Dask DataFrame): the error of the first partition
    in order that has one; for Parquet this module read, else the first duplicate
    (:func:`_table_duplicate`).
    """
    plan = _PLANS.get(dask.base.tokenize(frame))
    if plan is None:
        return _first_partition_error(frame, client)
    if isinstance(plan, _TablePlan):
        return _first_partition_error(frame, client) or _table_duplicate(plan, client)
    tasks = [dask.delayed(_diagnose_block, nout=2)(block, f, b)
             for f, (_, blocks) in enumerate(plan.files) for b, block in enumerate(blocks)]
    if sum(blocks[0].size for _, blocks in plan.files) <= _ONE_SEARCH:  # a small input
        shuffled = [dask.delayed(pd.concat)([t[1] for t in tasks], ignore_index=True)]
    else:
        keys = dd.from_delayed([t[1] for t in tasks], meta=keys_frame([], 0, 0),
                               verify_meta=False)
        shuffled = keys.shuffle(on="qid", npartitions=len(tasks)).to_delayed()
    found = compute(client, *[t[0] for t in tasks],
                     *[dask.delayed(duplicates_of, nout=2)(p) for p in shuffled])
    reports: list[_BlockReport] = list(found[: len(tasks)])
    dup_parts = found[len(tasks):]
    dups = pd.concat([d for d, _ in dup_parts], ignore_index=True)
    dup_counts: dict[tuple[int, int], int] = {}
    for _, counts in dup_parts:
        for k, n in counts.items():
            dup_counts[k] = dup_counts.get(k, 0) + n
    starts: list[list[int]] = []  # the line before each block of each file
    at = 0
    for _, blocks in plan.files:
        mine = reports[at: at + len(blocks)]
        starts.append(np.concatenate([[0], np.cumsum([r.lines for r in mine])]).tolist())
        at += len(blocks)
    at = 0
    for f, (path, blocks) in enumerate(plan.files):
        mine, at = reports[at: at + len(blocks)], at + len(blocks)
        error = _file_error(plan, f, path, mine, starts, dups[dups["file"] == f], dup_counts)
        if error is not None:
            return error
    return None


def _table_duplicate(plan: _TablePlan, client: Client | None) -> FormatError | None:
    """The duplicate of a Parquet input the in-memory reader names (None: none): of the
    first file having one, the (query, document) whose second row comes first, named by
    both its rows (1-based rows of the file; the first in an earlier file: of that file).
    The files' keys are shuffled by query to find them, as for text."""
    tasks = [dask.delayed(_table_keys)(plan, f) for f in range(len(plan.files))]
    if sum(plan.fs.size(path) for path in plan.files) <= _ONE_SEARCH:
        shuffled = [dask.delayed(pd.concat)(tasks, ignore_index=True)]
    else:
        keys = dd.from_delayed(tasks, meta=keys_frame([], 0, 0), verify_meta=False)
        shuffled = keys.shuffle(on="qid", npartitions=len(tasks)).to_delayed()
    found = compute(client, *[dask.delayed(duplicates_of, nout=2)(p) for p in shuffled])
    dups = pd.concat([d for d, _ in found], ignore_index=True)
    if not len(dups):
        return None
    row = dups.sort_values(["file", "line"], kind="stable").iloc[0]
    at, first, f = int(row["line"]), int(row["first_line"]), int(row["file"])
    rows = (f"rows {first} and {at}" if int(row["first_file"]) == f else
            f"row {first} of {plan.files[int(row['first_file'])]} and row {at}")
    return FormatError(f"duplicate {plan.kind} entry for query {row['qid']!r}, document "
                       f"{row['docid']!r} ({rows})", source=plan.files[f])


def _table_keys(plan: _TablePlan, f: int) -> pd.DataFrame:
    """The keys of every row of file ``f`` of a Parquet input, numbered from 1."""
    path = plan.files[f]
    with plan.fs.open(path, "rb") as fh:
        table = pq.read_table(fh, columns=list(plan.columns))
    name = Source(path, data=b"")
    table = ids_as_text(table, plan.kind, path)
    table, _ = columns_by_alias(table, name, plan.kind, header_line=None)
    rows = _canonical(table, plan.kind, plan.tag, path)
    n = len(rows)
    return pd.DataFrame({
        "qid": rows["qid"], "docid": rows["docid"],
        "tag": rows["tag"] if plan.kind == "run" else pd.Series([""] * n, dtype=TEXT),
        "group": pd.Series([""] * n, dtype=TEXT), "text": pd.Series([None] * n, dtype=TEXT),
        "file": np.full(n, f, np.int32), "block": np.zeros(n, np.int32),
        "line": np.arange(1, n + 1, dtype=np.int64)})


_ONE_SEARCH = DEFAULT_BLOCKSIZE // 8
"""Bytes of files (as stored) up to which one task searches all of an input's good lines
for duplicates; larger inputs are shuffled by query first."""


def first_error(inputs: Sequence[dd.DataFrame], client: Client | None) -> FormatError | None:
    """The error of the first input that has one (qrels first, then the runs in order), as
    the in-memory engine reports it; inputs are diagnosed one after the other."""
    for frame in inputs:
        error = _diagnose_input(frame, client)
        if error is not None:
            return error
    return None


def _file_error(plan: _Plan, f: int, path: str, reports: Sequence[_BlockReport],
                starts: Sequence[Sequence[int]], dups: pd.DataFrame,
                dup_counts: Mapping[tuple[int, int], int]) -> FormatError | None:
    """The error of file ``f`` from its blocks' reports and duplicates (None: none): its
    bad lines up to the first block that stops the reading, else that block's error."""
    stop, fatal = next(((b, r.fatal) for b, r in enumerate(reports) if r.fatal is not None),
                       (len(reports), None))
    found: list[Problem] = [replace(p, line=p.line + starts[f][b])
                            for b, r in enumerate(reports[:stop]) for p in r.problems
                            if p.line is not None]
    count = sum(r.count for r in reports[:stop])
    count += sum(n for (file, b), n in dup_counts.items() if file == f and b < stop)
    explained = False  # the first line judging a document in another group says what that is
    src = Source(path, data=b"")
    mine = dups[dups["block"] < stop].sort_values(["block", "line"], kind="stable")
    for row in mine.itertuples(index=False):
        first: int | str = int(row.first_line) + starts[row.first_file][row.first_block]
        if row.first_file != f:
            first = f"{first} of {plan.files[row.first_file][0]}"
        note = ""
        if plan.kind == "qrels" and row.first_group != row.group:
            note = groups_note(str(row.first_group), first, str(row.group),
                               explain=not explained)
            explained = True
        text = None if pd.isna(row.text) else str(row.text)
        error = dup_message(src, plan.kind, first, int(row.line) + starts[f][row.block],
                            str(row.qid), str(row.docid), text, note=note)
        found.append(Problem(path, error.line, "", error.message, error.text))
    if count:
        found.sort(key=lambda p: p.line or 0)
        return FormatError.of(found[:MAX_PROBLEMS], count=count, shown=MAX_PROBLEMS)
    if fatal is None:
        return None
    if stop == 0:
        return fatal.fresh()
    # the block's lines were numbered from its start: so is a line its message names
    # ("byte 0xe9 at line 18 is not GB18030")
    shift = starts[f][stop] - reports[stop].header_lines
    message = _LINE_IN_MESSAGE.sub(lambda m: f"line {int(m[1]) + shift}", fatal.message)
    return FormatError(message, source=path, text=fatal.text, hint=fatal.hint,
                       line=None if fatal.line is None else fatal.line + shift)


_LINE_IN_MESSAGE = re.compile(r"\bline (\d+)")


def _first_partition_error(frame: dd.DataFrame, client: Client | None) -> FormatError | None:
    """The error of the first partition of ``frame`` (in order) that has one: every
    partition is read to its end (a task counting its rows, so nothing is held), then
    they are looked at in order."""
    sizes = [dask.delayed(len)(p) for p in frame.to_delayed()]
    if client is None:
        for size in sizes:  # one at a time, in order: the first to fail is the first
            try:
                dask.compute(size)
            except FormatError as exc:
                return exc.fresh()
        return None
    from distributed import wait

    futures = client.compute(sizes)
    try:
        wait(futures)
        for fut in futures:
            if fut.status == "error":
                error = fut.exception()
                if isinstance(error, FormatError):
                    return error.fresh()
    finally:
        client.cancel(futures)
    return None


def _lines_in(data: bytes) -> int:
    """How many line ends ``data`` holds (LF, CRLF or a lone CR, as the readers count)."""
    return data.count(b"\n") + data.count(b"\r") - data.count(b"\r\n")


def chunked(values: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    """A column of a partition as one ChunkedArray (Arrow-backed pandas columns may
    already be one, of several chunks after a shuffle)."""
    return values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])
