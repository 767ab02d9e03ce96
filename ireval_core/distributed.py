"""Evaluation over partitioned data with Dask: the same measures and numbers past one machine.

Nothing here computes a measure. Rows are moved so that every query (or every
session of a click log) is whole inside one partition, each partition is turned
into :class:`~ireval_core.data.Qrels` and :class:`~ireval_core.data.Run` objects and
evaluated by :func:`ireval_core.evaluate` itself, and the per-query values come
back as the same :class:`~ireval_core.evaluate.Evaluation` the in-memory path
gives: tables, tests, reports and pages work on them unchanged.

* :func:`evaluate_dask`: qrels and runs (Parquet datasets, TREC or CSV/TSV files
  larger than memory, local or any fsspec URL such as ``s3://``, or Dask
  DataFrames), every measure of the catalogue.
* :func:`evaluate_labeled`: labeled rows ``(session, item, label, score)`` such as
  click logs or model scores over labeled data; a group (session or query) plays
  the query: AUC, GAUC, PNR and every other per-query measure.
* :func:`pooled_auc_dask`: AUC over all rows pooled, exact.
* :func:`dask_client`: a client on a running scheduler (``tcp://HOST:PORT``) or on
  a local cluster started for the job.

How the numbers stay the in-memory ones
---------------------------------------
* Rows are shuffled on a hash of the query id (qrels and run rows in one shuffle),
  so a query split across input files or partitions is evaluated as one.
* The aggregates are recomputed over all queries, as :func:`~ireval_core.evaluate`
  does: a mean over the concatenated per-query values, sums for counts, and for
  the two measures whose aggregate is not a mean of the values, per-query partial
  counts carried beside them (PNR: Σ concordant / Σ discordant; GAUC weighted by
  impressions: the judged retrieved documents of each query).
* Ids are text exactly as :mod:`ireval_core.io` reads them: TREC and CSV/TSV by
  ireval's own parser, a Parquet id column as strings, or integers as their decimal
  text (read with Arrow types, so an integer column with a null never becomes
  float64); a float or other id column is a :class:`FormatError` naming it. Labeled
  rows: CSV id cells as written (``007``, ``NA``), Parquet as above.
* ERR's default top grade is the highest grade of the whole qrels: it is found
  first and given to every partition.
* Errors are the in-memory engine's, in its order: the qrels' before the runs', a
  file's first bad line before its later ones, and for TREC and CSV/TSV text the same
  message and "and N more problems" count, whichever task failed first
  (:func:`_diagnose_input` reads the input again on failure, block by block).
* Before an :class:`~ireval_core.evaluate.Evaluation` is returned, the rows that
  reached the evaluation are counted against the rows read and every query must
  come from one partition only; a failed job (a worker lost beyond Dask's retries)
  raises :class:`DistributedError`. A partial table is never returned.

Memory and cost: a worker holds one partition as read (64 MB of text, a gzip file
inflated within :class:`~ireval_core.io.ReadLimits` as in memory, or a Parquet
file's row groups) or one partition after the shuffle (about the same number of rows),
plus Dask's shuffle buffers; each partition's per-query values are fetched as soon as
it is done. The client holds the per-query values (the :class:`Evaluation`). PNR and
``GAUC(weight=impressions)`` cost a second join per partition, for the partial counts.

Systems are ordered by input, then by first appearance of their tag; a tag already
used by an earlier input is renamed ``stem:tag`` with a ``run-renamed`` warning, as
:func:`ireval_core.io.read_runs` does. Reading warnings of the in-memory readers
(fractional grades, extra columns) are not collected here.

>>> import dask.dataframe as dd
>>> import pandas as pd
>>> rows = pd.DataFrame({"session": ["s1", "s1", "s1", "s2", "s2"],
...                      "item": ["a", "b", "c", "a", "d"],
...                      "label": [1, 0, 0, 0, 1],
...                      "score": [0.9, 0.8, 0.95, 0.7, 0.6]})
>>> res = evaluate_labeled(dd.from_pandas(rows, npartitions=2), ["GAUC", "PNR"])
>>> res.per_query("score", "GAUC").round(3).to_dict()
{'s1': 0.5, 's2': 0.0}
>>> res.mean("score", "GAUC"), res.mean("score", "PNR")
(0.25, 0.5)
>>> auc = pooled_auc_dask(dd.from_pandas(rows, npartitions=2))
>>> auc.auc, auc.n_positive, auc.n_negative  # 2 of the 6 pairs are won
(0.3333333333333333, 2, 3)
"""

from __future__ import annotations

import logging
import os
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import IO, TYPE_CHECKING, Any, Literal

import dask
import dask.dataframe as dd
import fsspec  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .data import DuplicateEntryError, Qrels, Run, join, read_only
from .errors import DataWarning, FormatError, IrevalError, Problem, invalid_parameter, shorten
from .evaluate import Evaluation, evaluate
from .io import ReadLimits, Source
from .io.checks import MAX_PROBLEMS, dup_message
from .io.delimited import check_delimited_rows
from .io.detect import detect_format, is_workbook
from .io.partitions import (
    NO_TAG,
    block_without_comments,
    check_columns,
    check_values,
    columns_by_alias,
    id_text,
    ids_as_text,
)
from .io.qrels_runs import empty_file_error, read_columns, unique_name
from .io.source import inflate
from .io.trec import check_first_line, check_trec_lines, groups_note, trec_key
from .measures import Measure, parse_measures
from .measures.binary import num_rel as binary_num_rel
from .measures.binary import num_rel_aggregate, num_rel_terms, sum_aggregate
from .measures.longtail import floored_geometric_mean, geometric_mean
from .measures.pairwise import (
    auc_counts,
    gauc_aggregate,
    gauc_weights,
    pnr_aggregate,
    pnr_counts,
    pnr_ratio,
)
from .measures.registry import Aggregator
from .options import EvalOptions

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["DEFAULT_BLOCKSIZE", "POOLED_AUC_DEFINITION", "DistributedError", "PooledAUC",
           "dask_client", "evaluate_dask", "evaluate_labeled", "pooled_auc_dask",
           "read_qrels_dask", "read_runs_dask"]

DEFAULT_BLOCKSIZE = 64 * 2**20
"""Bytes of text per partition when reading TREC or CSV files (gzip files: one each)."""

Kind = Literal["qrels", "run"]
PathLike = str | os.PathLike[str]
Sources = PathLike | Sequence[PathLike]

_STR = pd.StringDtype("pyarrow")
_GZIP = b"\x1f\x8b"
_ABSENT = "\x00absent"  # query id of the one-row run standing for a system a partition lacks


class DistributedError(IrevalError):
    """The Dask job did not give a complete result; no partial table is returned."""


# ----------------------------------------------------------------------------- clients


@contextmanager
def dask_client(scheduler: str | None = None, *, n_workers: int | None = None,
                timeout: float = 10.0) -> Iterator[Client]:
    """A Dask client on a running scheduler, or on a local cluster started for the job.

    Parameters
    ----------
    scheduler:
        Address of a running scheduler (``tcp://HOST:PORT``). Its workers read the
        input themselves: paths must exist on every worker (a shared file system)
        or be URLs they can reach (``s3://``, ``gs://``, ...), and ``ireval_core``
        must be importable there.
    n_workers:
        Without ``scheduler``: worker processes of the local cluster (one thread
        each; default one per core).
    timeout:
        Seconds to wait for the scheduler.

    Raises
    ------
    DistributedError
        When the scheduler cannot be reached.
    """
    from distributed import Client, LocalCluster

    if scheduler is not None and n_workers is not None:
        raise invalid_parameter("n_workers", "dask_client", "None when a scheduler address "
                                "is given", n_workers)
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int)
                                  or n_workers < 1):
        raise invalid_parameter("n_workers", "dask_client", "an int >= 1 or None", n_workers)
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise DistributedError(f"cannot reach the Dask scheduler at {scheduler}: "
                                   f"{_first_line(exc)}") from exc
        try:
            yield client
        finally:
            client.close()
        return
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__


def _compute(client: Client | None, *objs: Any,
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
            f"the Dask job stopped before every partition was evaluated ({_first_line(exc)}); "
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


def _meta(kind: Kind | Literal["union"]) -> pd.DataFrame:
    cols: dict[str, pd.Series] = {"qid": pd.Series([], dtype=_STR),
                                  "docid": pd.Series([], dtype=_STR),
                                  "value": pd.Series([], dtype=np.float64)}
    if kind != "qrels":
        cols["tag"] = pd.Series([], dtype=_STR)
    if kind == "union":
        cols["run"] = pd.Series([], dtype=np.int16)
    return pd.DataFrame(cols)


def _name_of(source: Sources | dd.DataFrame, kind: str) -> str:
    if isinstance(source, dd.DataFrame):
        return kind
    if isinstance(source, str | os.PathLike):
        return os.fspath(source)
    return ",".join(os.fspath(s) for s in source)


def _stem(name: str) -> str:
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
    name = _name_of(source, kind)
    tag = tag or _stem(name)
    if isinstance(source, dd.DataFrame):
        if list(source.columns) == list(_meta(kind).columns):  # read by this module already
            return source
        check_columns(list(source.columns), kind, name)
        ids_as_text(_empty_like(source._meta), kind, name)  # a float id column: now
        return source.map_partitions(_canonical_pandas, kind, tag, name, meta=_meta(kind))
    fs, files = _files(source, storage_options)
    if not files:
        raise FormatError(f"no {kind} file found", source=name)
    head = _head(fs, files[0])
    fmt = detect_format(Source(files[0], data=head))
    if is_workbook(Source(files[0], data=head)):
        raise FormatError("Excel workbooks are read in memory only (--engine memory); give "
                          "Parquet, CSV/TSV or TREC text to Dask", source=files[0])
    if fmt == "json":
        raise FormatError("JSON input is read in memory only (--engine memory); give "
                          "Parquet, CSV/TSV or TREC text to Dask", source=files[0])
    if fmt == "parquet":
        urls = [fs.unstrip_protocol(f) for f in files]
        # Arrow types, not numpy's: an integer id column with a null would become
        # float64 (12345678901234567 -> "12345678901234568")
        probe = dd.read_parquet(urls, storage_options=storage_options, dtype_backend="pyarrow")
        cols = check_columns(list(probe.columns), kind, name)
        ids_as_text(_empty_like(probe._meta), kind, name)  # a float id column: now
        frame = dd.read_parquet(urls, columns=cols, storage_options=storage_options,
                                dtype_backend="pyarrow")
        return frame.map_partitions(_canonical_pandas, kind, tag, name, meta=_meta(kind))
    return _text_frame(fs, files, kind, fmt, tag, blocksize, limits,
                       comments and fmt == "trec")


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


def _empty_like(meta: pd.DataFrame) -> pa.Table:
    """The Arrow schema of a Dask frame's ``meta``, as an empty table."""
    try:
        return pa.Table.from_pandas(meta.iloc[:0], preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError):
        return pa.table({c: pa.array([], pa.string()) for c in meta.columns})


def _head(fs: Any, path: str, size: int = 1 << 16) -> bytes:
    with fs.open(path, "rb") as fh:
        data = fh.read(size)
    if data[:2] == _GZIP:
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


@dataclass(frozen=True)
class _Plan:
    """How a text input was cut into read tasks: its files in order, each with its blocks
    in order (the partitions of the frame, in that order)."""

    kind: Kind
    files: tuple[tuple[str, tuple[_Block, ...]], ...]


_PLANS: dict[str, _Plan] = {}
"""The plans of the text frames this module built, by the frame's token
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
            compressed = fh.read(2) == _GZIP
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
                                        limits, comments) for off, length in spans)))
    parts = [dask.delayed(_read_text_block)(block) for _, blocks in plan for block in blocks]
    frame = dd.from_delayed(parts, meta=_meta(kind), verify_meta=False)
    while len(_PLANS) >= _MAX_PLANS:
        del _PLANS[next(iter(_PLANS))]
    _PLANS[dask.base.tokenize(frame)] = _Plan(kind, tuple(plan))
    return frame


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
        return _meta(block.kind)
    try:
        table, _ = read_columns(src, block.kind, block.fmt)  # type: ignore[arg-type]
    except FormatError as exc:
        if exc.line is None or start == 0:
            raise
        before = _count_lines(block.fs, block.path, start)
        raise FormatError(exc.message, source=block.path, line=exc.line + before - header_lines,
                          text=exc.text) from None
    return _canonical(table, block.kind, block.tag, block.path)


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
            compressed, start = fh.read(2) == _GZIP, 0
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
        raise FormatError(f"columns that are not one type each ({_first_line(exc)})",
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
    return canonical.to_pandas(types_mapper={pa.string(): _STR}.get)


# ----------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class _SystemPart:
    """One system's per-query values in one partition, and the partials of aggregates."""

    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    partials: dict[str, tuple[np.ndarray, ...]]
    answered: np.ndarray | None = None  # the queries the run answers in this partition


@dataclass(frozen=True)
class _Part:
    """What one partition sends back: its systems (by input key) and its row count."""

    rows: int
    systems: dict[tuple[int, str], _SystemPart]
    absent: _SystemPart | None = None  # values of a system with no row here (complete=True)


def _gauc_partials(ranked: Any, m: Measure, o: EvalOptions) -> tuple[np.ndarray, ...]:
    w = gauc_weights(ranked, m, o)  # impressions or clicks per query, as in memory
    return () if w is None else (w,)


def _pnr_partials(ranked: Any, m: Measure, o: EvalOptions) -> tuple[np.ndarray, ...]:
    return pnr_counts(ranked, m, o)


def _gauc_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    # the rule of pairwise.gauc_aggregate, over all queries
    ok = ~np.isnan(values)
    if not ok.any():
        return float("nan")
    if partials:  # weighted: impressions or clicks
        w = partials[0][ok]
        return float(np.dot(w, values[ok]) / w.sum())
    return float(values[ok].mean())


def _pnr_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    # the rule of pairwise.pnr_aggregate: Σ concordant / Σ discordant over all queries
    conc, disc = partials or (np.zeros(0), np.zeros(0))
    return float(pnr_ratio(np.array([conc.sum()]), np.array([disc.sum()]))[0])


def _sum_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    return float(np.nansum(values))  # the rule of binary.sum_aggregate


def _num_rel_partials(ranked: Any, m: Measure, o: EvalOptions) -> tuple[np.ndarray, ...]:
    values = binary_num_rel(ranked, m, o)
    return (num_rel_terms(ranked, m, o, values),)


def _num_rel_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    return float(np.nansum(partials[0]))  # the rule of binary.num_rel_aggregate


def _gm_combine(m: Measure, values: np.ndarray, partials: tuple[np.ndarray, ...]) -> float:
    return floored_geometric_mean(values)  # the rule of longtail.geometric_mean


Partials = Callable[[Any, Measure, EvalOptions], tuple[np.ndarray, ...]]
Combine = Callable[[Measure, np.ndarray, tuple[np.ndarray, ...]], float]

# Aggregates that are not a mean of the per-query values: what each partition sends
# beside the values, and how the parts make the evaluation's aggregate.
_AGGREGATES: dict[Aggregator, tuple[Partials | None, Combine]] = {
    sum_aggregate: (None, _sum_combine),
    num_rel_aggregate: (_num_rel_partials, _num_rel_combine),
    geometric_mean: (None, _gm_combine),
    gauc_aggregate: (_gauc_partials, _gauc_combine),
    pnr_aggregate: (_pnr_partials, _pnr_combine),
}


def _partials_of(m: Measure) -> Partials | None:
    agg = m.family.aggregate
    return None if agg is None else _AGGREGATES[agg][0]


def _check_aggregates(specs: Sequence[Measure]) -> None:
    for m in specs:
        agg = m.family.aggregate
        if agg is not None and agg not in _AGGREGATES:
            raise invalid_parameter("measures", "evaluate_dask", "measures whose aggregate "
                                    f"has a distributed form ({m} has none yet)", str(m))


def _with_global_grade(specs: Sequence[Measure], top: float | None) -> list[Measure]:
    """ERR without ``max_grade`` takes the highest grade of the whole qrels, not the part's."""
    out = []
    for m in specs:
        if top is not None and m.name == "ERR" and m.get("max_grade") is None:
            params = tuple(sorted((*m.params, ("max_grade", float(top)))))
            m = Measure(m.name, m.cutoff, params)
        out.append(m)
    return out


def _needs_top_grade(specs: Sequence[Measure]) -> bool:
    return any(m.name == "ERR" and m.get("max_grade") is None for m in specs)


def _system_part(qrels: Qrels, run: Run, res: Evaluation, specs: Sequence[Measure],
                 eval_specs: Sequence[Measure], o: EvalOptions) -> _SystemPart:
    values = {str(m): res.values[(run.name, str(em))] for m, em in zip(specs, eval_specs,
                                                                          strict=True)}
    partials: dict[str, tuple[np.ndarray, ...]] = {}
    need = [(m, em, fn) for m, em in zip(specs, eval_specs, strict=True)
            if (fn := _partials_of(m)) is not None]
    if need:
        ranked = join(qrels, run, options=o)
        for m, em, fn in need:
            partials[str(m)] = fn(ranked, em, o)
    return _SystemPart(res.query_ids[run.name], values, partials, run.query_ids)


def _evaluate_part(qrels: Qrels, runs: Mapping[tuple[int, str], Run], rows: int,
                   specs: Sequence[Measure], eval_specs: Sequence[Measure],
                   o: EvalOptions) -> _Part:
    """Evaluate one partition with :func:`ireval_core.evaluate`."""
    named = [run.renamed(str(i)) for i, run in enumerate(runs.values())]
    if o.complete:  # every qrels query counts, also for systems without a row here
        named.append(Run.from_arrays([_ABSENT], [_ABSENT], [0.0], name=str(len(named))))
    if not named:
        return _Part(rows, {})
    res = evaluate(qrels, named, eval_specs, options=o)
    parts = [_system_part(qrels, run, res, specs, eval_specs, o) for run in named]
    absent = parts.pop() if o.complete else None
    return _Part(rows, dict(zip(runs, parts, strict=True)), absent)


def _build(kind: Kind, q: pd.Series | pa.ChunkedArray, d: pd.Series | pa.ChunkedArray,
           v: pd.Series, *, name: str, source: str) -> Any:
    """Qrels or Run from a partition's columns; a duplicate pair is a format error."""
    ids = [x if isinstance(x, pa.ChunkedArray) else _chunked(pa.Array.from_pandas(x)).cast(
        pa.string()) for x in (q, d)]
    values = v.to_numpy(dtype=np.float64, na_value=np.nan)
    try:
        if kind == "qrels":
            return Qrels.from_arrays(ids[0], ids[1], values, source=source)
        return Run.from_arrays(ids[0], ids[1], values, name=name, source=source)
    except DuplicateEntryError as exc:
        message = (f"duplicate {kind} entry for query {exc.query_id!r}, document "
                   f"{exc.doc_id!r}; each (query, document) may appear once")
        if kind == "run":
            message = f"{message} per run (run {name!r})"
        raise FormatError(message, source=source) from None


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


_KEYS = {"qid": _STR, "docid": _STR, "tag": _STR, "group": _STR, "text": _STR,
         "file": np.int32, "block": np.int32, "line": np.int64}
"""Columns of the good lines a block sends to the duplicate search: the fields that may
not repeat (``tag``: a run line's tag key, else empty), a TREC qrels line's judgment
group, the line as written (TREC) and where it is."""


def _keys_frame(rows: list[tuple[str, str, str, str, str | None, int]], file: int,
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
    return table.to_pandas(types_mapper={pa.string(): _STR}.get)


def _diagnose_block(block: _Block, file: int, index: int) -> tuple[_BlockReport, pd.DataFrame]:
    """Every line of a block checked as the in-memory reader checks a file on failure
    (:func:`~ireval_core.io.trec.check_trec_lines`,
    :func:`~ireval_core.io.delimited.check_delimited_rows`): its report, and its good
    lines for the duplicate search. Never raises a :class:`FormatError`: an error that
    is not a bad line (gzip past the limits, a run given as qrels, a bad header, text
    the reader cannot decode) is the report's ``fatal``."""
    empty = _keys_frame([], file, index)
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
    return _BlockReport(lines, tuple(kept), count), _keys_frame(rows, file, index)


_DUPS = {**_KEYS, "first_file": np.int32, "first_block": np.int32, "first_line": np.int64,
         "first_group": _STR}


def _duplicates_of(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[int, int], int]]:
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
    giving a (query, document) again (:func:`_duplicates_of`); then, file by file in
    order, the bad lines and the duplicates are numbered as the file's lines and merged
    in line order: the first :data:`~ireval_core.io.checks.MAX_PROBLEMS` kept, all
    counted. Other frames (Parquet, a Dask DataFrame): the error of the first partition
    in order that has one.
    """
    plan = _PLANS.get(dask.base.tokenize(frame))
    if plan is None:
        return _first_partition_error(frame, client)
    tasks = [dask.delayed(_diagnose_block, nout=2)(block, f, b)
             for f, (_, blocks) in enumerate(plan.files) for b, block in enumerate(blocks)]
    if sum(blocks[0].size for _, blocks in plan.files) <= _ONE_SEARCH:  # a small input
        shuffled = [dask.delayed(pd.concat)([t[1] for t in tasks], ignore_index=True)]
    else:
        keys = dd.from_delayed([t[1] for t in tasks], meta=_keys_frame([], 0, 0),
                               verify_meta=False)
        shuffled = keys.shuffle(on="qid", npartitions=len(tasks)).to_delayed()
    found = _compute(client, *[t[0] for t in tasks],
                     *[dask.delayed(_duplicates_of, nout=2)(p) for p in shuffled])
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


_ONE_SEARCH = DEFAULT_BLOCKSIZE // 8
"""Bytes of files (as stored) up to which one task searches all of an input's good lines
for duplicates; larger inputs are shuffled by query first."""


def _first_error(inputs: Sequence[dd.DataFrame], client: Client | None) -> FormatError | None:
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


def _union_partition(df: pd.DataFrame, specs: Sequence[Measure], eval_specs: Sequence[Measure],
                     o: EvalOptions, sources: Sequence[str]) -> _Part:
    run = df["run"].to_numpy()
    is_qrels = run < 0
    qrels = _build("qrels", df["qid"][is_qrels], df["docid"][is_qrels], df["value"][is_qrels],
                   name="", source=sources[0])
    rdf = df[~is_qrels]
    runs: dict[tuple[int, str], Run] = {}
    groups = rdf.groupby(["run", "tag"], sort=True, observed=True, dropna=False).indices
    for (i, tag), rows in sorted(groups.items()):
        part = rdf.iloc[rows]
        runs[(int(i), str(tag))] = _build("run", part["qid"], part["docid"], part["value"],
                                         name=str(tag), source=sources[int(i) + 1])
    return _evaluate_part(qrels, runs, len(df), specs, eval_specs, o)


def _prepare(measures: str | Sequence[str | Measure], options: EvalOptions | None,
             npartitions: int | None, function: str) -> tuple[list[Measure], EvalOptions]:
    options = EvalOptions() if options is None else options
    if not isinstance(options, EvalOptions):
        raise invalid_parameter("options", function, "an EvalOptions", options, error=TypeError)
    if npartitions is not None and (isinstance(npartitions, bool)
                                    or not isinstance(npartitions, int) or npartitions < 1):
        raise invalid_parameter("npartitions", function, "an int >= 1 or None", npartitions)
    specs = parse_measures(list(measures) if not isinstance(measures, str) else measures)
    _check_aggregates(specs)
    return specs, options


def evaluate_dask(qrels: Sources | dd.DataFrame,
                  runs: PathLike | dd.DataFrame | Sequence[PathLike | dd.DataFrame],
                  measures: str | Sequence[str | Measure], *,
                  options: EvalOptions | None = None, client: Client | None = None,
                  npartitions: int | None = None,
                  storage_options: Mapping[str, Any] | None = None,
                  notes: list[DataWarning] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> Evaluation:
    """:func:`ireval_core.evaluate` on partitioned data: same measures, same numbers.

    Parameters
    ----------
    qrels:
        Judgments: a path, folder, glob or URL (Parquet, TREC, CSV/TSV), a list of
        them, or a Dask DataFrame (see :func:`read_qrels_dask`).
    runs:
        One run input or a list of them (paths as ``qrels``, or Dask DataFrames);
        each may hold several systems (a tag column). A list of paths is several
        runs; to give one run split over several files, use a folder or a glob.
    measures:
        Measure specs or their text, as :func:`ireval_core.evaluate`.
    options:
        The evaluation options (:class:`~ireval_core.options.EvalOptions`); with
        ``trec_eval="10.0"`` TREC text files are read with its ``#`` comment rule (as
        ``eval --trec-eval 10.0`` reads them in memory), else with 9.0.8's (no comments).
    client:
        A ``distributed.Client`` (see :func:`dask_client`); ``None``: Dask's current
        scheduler (the active client, else local threads).
    npartitions:
        Partitions after the shuffle by query (default: as many as read).
    storage_options:
        Passed to fsspec for URL inputs.
    notes:
        A list receiving ``run-renamed`` warnings.
    progress:
        Called as ``progress(done, total)`` each time a partition's evaluation is
        fetched (``total``: the partitions after the shuffle, plus 2 small tasks).

    Returns
    -------
    Evaluation
        Exactly what :func:`ireval_core.evaluate` returns on the same data.

    Raises
    ------
    FormatError
        Input that cannot be read (file and line when there is one), or a duplicate
        (query, document) pair: the error of the first input that has one (the qrels,
        then the runs in order), and of its first file that has one, whichever task
        failed first. For TREC and CSV/TSV text read by this module, it is the error the
        in-memory reader gives for that file: its bad lines and duplicates in line order
        (the first 100, and how many in all), a duplicate named by both its lines (and as
        judgment groups when their second columns differ). On such a failure the input
        is read once more, every block line by line, and its good lines shuffled by query
        to pair the duplicates (:func:`_diagnose_input`). Parquet and Dask DataFrames: the
        error of their first partition that has one.
    DistributedError
        The job stopped (e.g. workers lost beyond Dask's retries) or its result is
        incomplete.
    """
    specs, options = _prepare(measures, options, npartitions, "evaluate_dask")
    comments = options.trec_eval == "10.0"  # its '#' comment lines, as the CLI reads them
    q_frame = read_qrels_dask(qrels, storage_options=storage_options, comments=comments)
    run_inputs: list[PathLike | dd.DataFrame] = (
        list(runs) if isinstance(runs, Sequence) and not isinstance(runs, str) else [runs])
    names = [_name_of(r, "run") for r in run_inputs]
    r_frames = [read_runs_dask(r, storage_options=storage_options, comments=comments)
                for r in run_inputs]
    inputs = [q_frame, *r_frames]
    try:
        top = None
        if _needs_top_grade(specs):
            (top,) = _compute(client, q_frame["value"].max())
            top = max(float(top), 0.0) if top == top else 0.0  # empty qrels: 0, as join does
        eval_specs = _with_global_grade(specs, top)
        union = dd.concat(
            [q_frame.assign(tag="", run=np.int16(-1))[list(_meta("union").columns)]]
            + [f.assign(run=np.int16(i))[list(_meta("union").columns)]
               for i, f in enumerate(r_frames)])
        union = union.astype({"tag": _STR, "run": np.int16})
        shuffled, counts, firsts = _shuffled(union, "qid", npartitions, _meta("union"),
                                             _systems_in)
        sources = [_name_of(qrels, "qrels"), *names]
        tasks = [dask.delayed(_union_partition)(p, specs, eval_specs, options, sources)
                 for p in shuffled]
        *parts, total, firsts = _compute(client, *tasks, counts, firsts, progress=progress)
    except FormatError as exc:  # the first input's first error, whichever task failed first
        raise (_first_error(inputs, client) or exc.fresh()) from None
    keys = list(dict.fromkeys(k for found in firsts for k in found))  # first appearance
    if set(keys) != {k for p in parts for k in p.systems}:
        raise DistributedError("incomplete result: the systems read and the systems "
                               "evaluated differ; no partial result is returned")
    system_names = _system_names(keys, [_stem(n) for n in names], names, notes)
    return _assemble(parts, int(total), keys, system_names, specs, options)


def _shuffled(frame: dd.DataFrame, on: str, npartitions: int | None, meta: pd.DataFrame,
              probe: Callable[[pd.DataFrame], Any] | None = None) -> tuple[list[Any], Any, Any]:
    """Partitions of ``frame`` shuffled on ``on``, the rows read, and ``probe`` of each
    partition read (a list, in input order); all delayed.

    They come from the same read tasks, so the data is read once and the count is of
    exactly the rows that went into the shuffle.
    """
    read = frame.to_delayed()
    total = dask.delayed(sum)([dask.delayed(len)(p) for p in read])
    probes = dask.delayed(list)([dask.delayed(probe)(p) for p in read] if probe else [])
    moved = dd.from_delayed(read, meta=meta, verify_meta=False).shuffle(
        on=on, npartitions=npartitions or max(len(read), 1))
    return list(moved.to_delayed()), total, probes


def _systems_in(df: pd.DataFrame) -> list[tuple[int, str]]:
    """(run input, tag) of the run rows of a partition, in order of first appearance."""
    rows = df.loc[df["run"].to_numpy() >= 0, ["run", "tag"]].drop_duplicates()
    return [(int(i), str(t)) for i, t in zip(rows["run"], rows["tag"], strict=True)]


def _system_names(keys: Sequence[tuple[int, str]], stems: Sequence[str], sources: Sequence[str],
                  notes: list[DataWarning] | None) -> list[str]:
    """Names of the systems, in order; a tag of several inputs names each of them after
    its input (``bm25:rank``, as :func:`ireval_core.io.shared_tag_names`), a tag taken by
    an earlier input's name is renamed."""
    inputs: dict[str, list[int]] = {}
    for i, tag in keys:
        inputs.setdefault(tag, []).append(i)
    taken: dict[str, str] = {}
    out = []
    for i, tag in keys:
        if tag and len(inputs[tag]) > 1:
            name = unique_name(None, f"{stems[i]}:{tag}", set(taken))
            if notes is not None:
                files = ", ".join(sources[k] for k in inputs[tag])
                notes.append(DataWarning(
                    "run-renamed", f"tag {tag!r} is the tag of runs in {len(inputs[tag])} "
                    f"files ({files}): each is named after its file and tag, this one "
                    f"{name!r}", source=sources[i], count=1))
            taken[name] = sources[i]
            out.append(name)
            continue
        name = unique_name(tag, stems[i], set(taken))
        if name != tag and notes is not None:
            other = taken.get(tag, "")
            where = f"the run {tag!r} of {other}" if other else f"the run name {tag!r}"
            notes.append(DataWarning("run-renamed", f"tag {tag!r} is already {where}: this "
                                     f"run is named {name!r}", source=sources[i], count=1))
        taken[name] = sources[i]
        out.append(name)
    return out


def _assemble(parts: Sequence[_Part], total: int, keys: Sequence[tuple[int, str]],
              names: Sequence[str], specs: Sequence[Measure], o: EvalOptions) -> Evaluation:
    """One :class:`Evaluation` from the partitions, after checking nothing is missing."""
    seen = sum(p.rows for p in parts)
    if seen != total:
        raise DistributedError(f"incomplete result: {seen} of {total} rows reached the "
                               "evaluation; no partial result is returned")
    query_ids: dict[str, np.ndarray] = {}
    values: dict[tuple[str, str], np.ndarray] = {}
    aggregates: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    answered: dict[str, np.ndarray] = {}
    for key, name in zip(keys, names, strict=True):
        answered[name] = read_only(np.concatenate([np.zeros(0, object)] + [
            np.asarray(p.systems[key].answered, dtype=object) for p in parts
            if key in p.systems and p.systems[key].answered is not None]))
        pieces = [p.systems.get(key, p.absent) for p in parts]
        got = [s for s in pieces if s is not None]
        qids = np.concatenate([s.query_ids for s in got]) if got else np.array([], object)
        order = np.argsort(qids.astype(str), kind="stable")
        qids = qids[order]
        if len(qids) > 1 and (qids[1:] == qids[:-1]).any():
            dup = qids[1:][qids[1:] == qids[:-1]][0]
            raise DistributedError(f"query {dup!r} of {name!r} came from two partitions; "
                                   "no partial result is returned")
        query_ids[name] = read_only(qids.astype(object))
        for m in specs:
            k = str(m)
            v = (np.concatenate([s.values[k] for s in got]) if got else np.array([]))[order]
            values[(name, k)] = read_only(v)
            agg = m.family.aggregate
            n = int(np.count_nonzero(~np.isnan(v)))
            counts[(name, k)] = n
            if agg is None:  # as evaluate: the mean over the counted queries
                aggregates[(name, k)] = float(np.nanmean(v)) if n else float("nan")
                continue
            width = len(got[0].partials.get(k, ())) if got else 0
            partials = tuple(np.concatenate([s.partials[k][j] for s in got])[order]
                             for j in range(width))
            aggregates[(name, k)] = _AGGREGATES[agg][1](m, v, partials)
    return Evaluation(tuple(names), tuple(specs), o, query_ids, values, aggregates, counts,
                      answered)


# ----------------------------------------------------------------------------- labeled rows


_CSV_MISSING = ["", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "<NA>"]
"""Cells of a CSV label or score column read as missing (never in an id column)."""


def _is_gzip(fs: Any, path: str) -> bool:
    with fs.open(path, "rb") as fh:
        return bool(fh.read(2) == _GZIP)


def _read_csv_file(fs: Any, path: str, limits: ReadLimits,
                   options: dict[str, Any]) -> pd.DataFrame:
    """One CSV file (gzip inflated within ``limits``) as a pandas frame."""
    size = fs.size(path)
    with fs.open(path, "rb") as fh:
        compressed = fh.read(2) == _GZIP
        fh.seek(0)
        data = inflate(fh, size, path, limits) if compressed else fh.read()
    return pd.read_csv(pa.BufferReader(data), **options)


def _labeled_frame(data: Sources | dd.DataFrame, columns: Sequence[str],
                   storage_options: Mapping[str, Any] | None,
                   ids: Sequence[str] = ()) -> tuple[dd.DataFrame, str]:
    """The columns of labeled rows: a Dask DataFrame, Parquet or CSV with a header.

    The ``ids`` columns are text exactly as written: CSV cells as they are (``007``,
    ``NA``), Parquet strings, or integers as their decimal text; a column of floats
    or another type is a :class:`FormatError` naming it, before anything is read.
    """
    name = _name_of(data, "data")
    cols = list(dict.fromkeys(columns))
    if isinstance(data, dd.DataFrame):
        frame = data
    else:
        paths = [os.fspath(s) for s in ([data] if isinstance(data, str | os.PathLike)
                                        else data)]
        is_csv = all(p.lower().removesuffix(".gz").endswith((".csv", ".tsv")) for p in paths)
        if is_csv:
            sep = "\t" if paths[0].lower().removesuffix(".gz").endswith(".tsv") else ","
            csv_options: dict[str, Any] = dict(
                sep=sep, usecols=cols, dtype={c: _STR for c in ids}, keep_default_na=False,
                na_values={c: _CSV_MISSING for c in cols if c not in ids})
            fs, _, found = fsspec.get_fs_token_paths(
                paths, storage_options=dict(storage_options or {}))
            if any(_is_gzip(fs, f) for f in found):
                # pandas would inflate without a bound: one partition per file, inflated
                # within the client's ReadLimits as the in-memory readers do
                limits = ReadLimits.from_env()
                frame = dd.from_delayed([dask.delayed(_read_csv_file)(
                    fs, f, limits, csv_options) for f in found])
            else:
                frame = dd.read_csv(paths, storage_options=storage_options, **csv_options)
        else:  # Arrow types: an integer column with a null stays integers, not float64
            frame = dd.read_parquet(paths if len(paths) > 1 else paths[0],
                                    storage_options=storage_options, dtype_backend="pyarrow")
    missing = [c for c in cols if c not in frame.columns]
    if missing:
        raise FormatError(f"missing column(s) {missing}; the data has {list(frame.columns)}",
                          source=name)
    frame = frame[cols]
    schema = _empty_like(frame._meta)
    for c in ids:
        id_text(schema.column(c), c, f"{c} id", name)
    return frame, name


def _chunked(values: pa.Array | pa.ChunkedArray) -> pa.ChunkedArray:
    """A column of a partition as one ChunkedArray (Arrow-backed pandas columns may
    already be one, of several chunks after a shuffle)."""
    return values if isinstance(values, pa.ChunkedArray) else pa.chunked_array([values])


def _labeled_ids(df: pd.DataFrame, column: str, source: str) -> pa.ChunkedArray:
    """A partition's id column as text (see :func:`~.io.partitions.id_text`); a missing or
    empty id is a :class:`FormatError`."""
    try:
        values = _chunked(pa.Array.from_pandas(df[column]))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # an object column of mixed types
        raise FormatError(f"column {column!r} holds values of several types "
                          f"({_first_line(exc)})", source=source) from None
    text = id_text(values, column, f"{column} id", source)
    empty = text.null_count + int(pc.sum(pc.equal(pc.utf8_length(text), 0)).as_py() or 0)
    if empty:
        raise FormatError(f"{empty} row(s) without a {column!r} value", source=source)
    return text


def _labeled_partition(df: pd.DataFrame, group: str, item: str, label: str,
                       scores: Sequence[str], specs: Sequence[Measure],
                       eval_specs: Sequence[Measure], o: EvalOptions, source: str) -> _Part:
    gid, iid = (_labeled_ids(df, col, source) for col in (group, item))
    grades = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isinf(grades).any():
        raise FormatError(f"expected finite labels in column {label!r}, got an infinite one",
                          source=source)
    judged = ~np.isnan(grades)  # a missing label: an unjudged row, kept in the rankings
    keep = pa.array(judged)
    qrels = _build("qrels", gid.filter(keep), iid.filter(keep), df[label][judged],
                   name="", source=source)
    runs: dict[tuple[int, str], Run] = {}
    for s in scores:
        v = df[s].to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.isfinite(v).all():
            bad = int(np.flatnonzero(~np.isfinite(v))[0])
            raise FormatError(f"expected finite scores in column {s!r}, got {float(v[bad])} "
                              f"({group} {str(df[group].iloc[bad])!r}, {item} "
                              f"{str(df[item].iloc[bad])!r})", source=source)
        runs[(0, s)] = _build("run", gid, iid, df[s], name=s, source=source)
    return _evaluate_part(qrels, runs, len(df), specs, eval_specs, o)


def evaluate_labeled(data: Sources | dd.DataFrame, measures: str | Sequence[str | Measure], *,
                     group: str = "session", item: str = "item", label: str = "label",
                     score: str | Sequence[str] = "score", options: EvalOptions | None = None,
                     client: Client | None = None, npartitions: int | None = None,
                     storage_options: Mapping[str, Any] | None = None) -> Evaluation:
    """Evaluate labeled rows (a click log, model scores over labeled data) group by group.

    Every ``group`` (a search session for GAUC, or a query) plays the query, its
    rows are the ranked items, ``label`` their grade (clicks: 1 / 0; a missing label
    is an unjudged row) and each ``score`` column one system. The result is the
    :class:`~ireval_core.evaluate.Evaluation` that :func:`ireval_core.evaluate` gives
    for ``Qrels(group, item, label)`` and ``Run(group, item, score)``: GAUC is the
    per-group AUC averaged over the groups having both classes (plain, or weighted
    by group size with ``GAUC(weight=impressions)``), PNR is Σ concordant / Σ
    discordant pairs over all groups.

    Parameters
    ----------
    data:
        Parquet file or dataset folder (local or URL), CSV/TSV files with a header,
        or a Dask DataFrame.
    measures:
        Any measure of the catalogue (``"GAUC"``, ``"PNR"``, ``"nDCG@10"``, ...).
    group, item, label, score:
        Column names; ``score`` may list several columns (several systems, named by
        their column).
    options, client, npartitions, storage_options:
        As :func:`evaluate_dask`.
    """
    specs, options = _prepare(measures, options, npartitions, "evaluate_labeled")
    scores = [score] if isinstance(score, str) else list(score)
    if not scores or len(set(scores)) != len(scores) or {group, item, label} & set(scores):
        raise invalid_parameter("score", "evaluate_labeled", "one or more distinct columns, "
                                "none of them the group, item or label", score)
    frame, name = _labeled_frame(data, [group, item, label, *scores], storage_options,
                                 ids=[group, item])
    top = None
    if _needs_top_grade(specs):
        (top,) = _compute(client, frame[label].max())
        top = max(float(top), 0.0) if top == top else 0.0
    eval_specs = _with_global_grade(specs, top)
    shuffled, counts, _ = _shuffled(frame, group, npartitions, frame._meta)
    tasks = [dask.delayed(_labeled_partition)(p, group, item, label, scores, specs, eval_specs,
                                              options, name)
             for p in shuffled]
    *parts, total = _compute(client, *tasks, counts)
    keys = [(0, s) for s in scores]
    return _assemble(parts, int(total), keys, scores, specs, options)


# ----------------------------------------------------------------------------- pooled AUC


POOLED_AUC_DEFINITION = (
    "pooled AUC over all rows: P(score of a relevant row (label >= {rel}) > score of a "
    "non-relevant one (0 <= label < {rel})), score ties count ½; rows with a missing or "
    "negative label are left out; exact (Mann–Whitney U from per-bucket counts over one "
    "global score order, equal to sklearn's roc_auc_score on the same rows)")
"""Definition of :func:`pooled_auc_dask`; format with ``rel``."""


@dataclass(frozen=True)
class PooledAUC:
    """AUC over all rows pooled, with the counts it is made of and its definition.

    ``twice_u`` is 2·U of Mann–Whitney (pairs won count 2, ties 1), so
    ``auc = twice_u / (2 · n_positive · n_negative)``. ``n_buckets`` is the number of
    score ranges the rows were cut into, one partition each, and ``largest_partition``
    the judged rows of the largest: what one worker held at once for the count
    (about judged rows / ``n_buckets``).
    """

    auc: float
    n_positive: int
    n_negative: int
    twice_u: int
    definition: str
    n_buckets: int = field(default=1, compare=False)
    largest_partition: int = field(default=0, compare=False)

    def __float__(self) -> float:
        return self.auc


def _sketch(df: pd.DataFrame, label: str, score: str, k: int,
            source: str) -> tuple[np.ndarray, int]:
    """``k + 1`` quantiles of the judged rows' scores of one partition, and their number."""
    grade = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    s = df[score].to_numpy(dtype=np.float64, na_value=np.nan)[grade >= 0]
    if not np.isfinite(s).all():
        raise FormatError(f"expected finite scores in column {score!r}, got "
                          f"{float(s[~np.isfinite(s)][0])}", source=source)
    if not s.size:
        return np.zeros(0), 0
    return np.quantile(s, np.linspace(0.0, 1.0, k + 1)), int(s.size)


SKETCH_POINTS = 1 << 24
"""Most quantile points all partitions' sketches hold together (on the client)."""


def _sketch_size(n_partitions: int, n_buckets: int) -> int:
    """Quantile intervals per partition's sketch: 8 per bucket (at least 64), within
    :data:`SKETCH_POINTS` in all."""
    return int(max(64, min(8 * n_buckets, SKETCH_POINTS // max(n_partitions, 1))))


def _bucket_bounds(sketches: Sequence[tuple[np.ndarray, int]], n_buckets: int) -> np.ndarray:
    """Interior bucket boundaries that cut the judged rows into ``n_buckets`` equal parts.

    Each partition's ``k + 1`` quantiles say that ``n / k`` of its rows lie between two
    consecutive ones; spread evenly there (all at one value when both are equal), the
    partitions add up to a piecewise linear estimate of the pooled distribution, which
    is cut at ``i / n_buckets``. Partitions alike (the usual case) give the same
    quantiles over and over: weighing the points themselves would leave no boundary
    between them, and buckets as large as a quantile step, however many were asked.

    Any boundaries give the exact AUC (a score value falls in exactly one bucket);
    these balance the buckets, so a bucket holds about rows / ``n_buckets``.
    """
    pts = [(np.asarray(q, dtype=np.float64), n) for q, n in sketches if n]
    if not pts or n_buckets < 2:
        return np.zeros(0)
    lo = np.concatenate([q[:-1] if len(q) > 1 else q for q, _ in pts])
    hi = np.concatenate([q[1:] if len(q) > 1 else q for q, _ in pts])
    mass = np.concatenate([np.full(max(len(q) - 1, 1), n / max(len(q) - 1, 1))
                           for q, n in pts])
    grid = np.unique(np.concatenate([lo, hi]))
    point = lo == hi
    at_point = np.bincount(np.searchsorted(grid, lo[point]), weights=mass[point],
                           minlength=len(grid))
    # mass of each gap between consecutive grid values: every interval spreads its mass
    # over the gaps it covers, in proportion to their widths
    width = np.diff(grid)
    first = np.searchsorted(grid, lo[~point])
    last = np.searchsorted(grid, hi[~point])  # the interval covers gaps first .. last - 1
    density = mass[~point] / (hi[~point] - lo[~point])
    slope = np.cumsum(np.bincount(first, weights=density, minlength=len(grid))
                      - np.bincount(last, weights=density, minlength=len(grid)))[:-1]
    in_gap = np.maximum(slope, 0.0) * width
    # the estimated count of rows below each grid value, and up to it (its point mass)
    after = np.cumsum(at_point + np.concatenate([[0.0], in_gap]))
    before = after - at_point
    cdf = np.column_stack([before, after]).ravel()
    xs = np.repeat(grid, 2)
    targets = np.linspace(0.0, cdf[-1], n_buckets + 1)[1:-1]
    return np.unique(np.interp(targets, cdf, xs))


def _bucketed(df: pd.DataFrame, label: str, score: str, rel_level: float,
              bounds: np.ndarray) -> pd.DataFrame:
    grade = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    judged = grade >= 0
    s = df[score].to_numpy(dtype=np.float64, na_value=np.nan)[judged]
    return pd.DataFrame({"bucket": np.searchsorted(bounds, s, side="right").astype(np.int32),
                         "score": s, "positive": grade[judged] >= rel_level})


def _bucket_counts(df: pd.DataFrame) -> np.ndarray:
    """Mann–Whitney counts of the buckets in this partition (indexed by bucket).

    Rows: bucket, 2U, positives, negatives; a column per bucket present (one, after
    the shuffle by bucket). Within a bucket the kernel's sums are exact integers
    below 2**53, i.e. for buckets of fewer than about 10**8 rows.
    """
    b = df.index.to_numpy(dtype=np.int64)
    s = df["score"].to_numpy(dtype=np.float64)
    present, code = np.unique(b, return_inverse=True)
    order = np.lexsort((-s, code))
    twice_u, n_pos, n_neg = auc_counts(code[order], s[order],
                                       df["positive"].to_numpy(dtype=bool)[order],
                                       len(present))
    return np.stack([present, twice_u, n_pos, n_neg]).astype(np.int64)


def pooled_auc_dask(data: Sources | dd.DataFrame, *, label: str = "label", score: str = "score",
                    rel_level: float = 1.0, client: Client | None = None,
                    n_buckets: int | None = None,
                    storage_options: Mapping[str, Any] | None = None) -> PooledAUC:
    """AUC over all rows pooled (no grouping), exact, on data past one machine's memory.

    A row is relevant when its label >= ``rel_level``, judged non-relevant when
    0 <= label < ``rel_level``; other rows (missing or negative label) are left
    out, as the pooled ROC of :mod:`ireval_core.curves` does. Equal to
    ``sklearn.metrics.roc_auc_score`` on the same rows; NaN when a class is missing.

    How: the scores are cut into ``n_buckets`` ranges of about equal row counts
    (boundaries from an estimate of the pooled distribution made of per-partition
    quantile sketches, :func:`_bucket_bounds`), rows are shuffled so that range *i*
    is partition *i*, and each range gets its Mann–Whitney counts from the
    in-memory kernel (:func:`~ireval_core.measures.pairwise.auc_counts`, ties ½).
    Every pair across two ranges is won by the higher range, so one pass over the
    ranges in score order adds them up, in exact integer arithmetic. Memory: a
    worker holds one partition of input or one range of rows (about rows /
    ``n_buckets``, i.e. a partition's rows by default, whatever the total; more
    when one score value repeats very often: equal scores share a range;
    :attr:`PooledAUC.largest_partition` says how many); the client holds a sketch of
    each partition (at most :data:`SKETCH_POINTS` numbers in all) and 3 integers
    per range.

    Parameters
    ----------
    data:
        Parquet file or dataset folder (local or URL), CSV/TSV files with a header,
        or a Dask DataFrame.
    label, score:
        Column names.
    rel_level:
        Relevance threshold on the label.
    client:
        A ``distributed.Client``; ``None``: Dask's current scheduler.
    n_buckets:
        Score ranges (default: the number of input partitions).
    storage_options:
        Passed to fsspec for URL inputs.
    """
    if isinstance(rel_level, bool) or not isinstance(rel_level, int | float) or not np.isfinite(
            rel_level):
        raise invalid_parameter("rel_level", "pooled_auc_dask", "a finite number", rel_level)
    if n_buckets is not None and (isinstance(n_buckets, bool) or not isinstance(n_buckets, int)
                                  or n_buckets < 1):
        raise invalid_parameter("n_buckets", "pooled_auc_dask", "an int >= 1 or None",
                                n_buckets)
    if label == score:
        raise invalid_parameter("score", "pooled_auc_dask", "a column other than the label",
                                score)
    frame, name = _labeled_frame(data, [label, score], storage_options)
    nb = n_buckets or frame.npartitions
    parts = frame.to_delayed()
    k = _sketch_size(len(parts), nb)
    sketches = _compute(client, *[dask.delayed(_sketch)(p, label, score, k, name)
                                  for p in parts])
    judged = sum(n for _, n in sketches)
    bounds = _bucket_bounds(sketches, nb)
    nb = len(bounds) + 1
    rows = frame.map_partitions(_bucketed, label, score, float(rel_level), bounds,
                                meta=pd.DataFrame({"bucket": pd.Series([], dtype=np.int32),
                                                   "score": pd.Series([], dtype=np.float64),
                                                   "positive": pd.Series([], dtype=bool)}))
    # bucket i to partition i (a hash of the bucket would put several in one partition
    # and leave others empty: the largest grows with the number of buckets)
    shuffled = rows.set_index("bucket", divisions=tuple(range(nb + 1)))
    counts = _compute(client, *[dask.delayed(_bucket_counts)(p)
                                for p in shuffled.to_delayed()])
    total = np.zeros((3, nb), dtype=np.int64)
    for c in counts:
        for row in range(3):
            np.add.at(total[row], c[0], c[row + 1])
    twice_u_b, pos_b, neg_b = ([int(x) for x in row] for row in total)
    n_pos, n_neg = sum(pos_b), sum(neg_b)
    if n_pos + n_neg != judged:
        raise DistributedError(f"incomplete result: {n_pos + n_neg} of {judged} judged rows "
                               "reached the count; no partial result is returned")
    twice_u, below = 0, 0
    for tu, p, n in zip(twice_u_b, pos_b, neg_b, strict=True):  # ranges, lowest scores first
        twice_u += tu + 2 * p * below
        below += n
    auc = twice_u / (2 * n_pos * n_neg) if n_pos and n_neg else float("nan")
    rel = f"{float(rel_level):g}"
    largest = max((int(c[2:].sum()) for c in counts), default=0)  # rows of a partition
    return PooledAUC(float(auc), n_pos, n_neg, twice_u,
                     POOLED_AUC_DEFINITION.format(rel=rel), nb, largest)
