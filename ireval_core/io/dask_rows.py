"""Labeled rows (a click log, model scores over labeled data) as Dask DataFrames, and the
error of a failed job over them in row order.

* :func:`labeled_frame`: the columns of labeled rows from Parquet, CSV/TSV with a header
  (gzip inflated within :class:`~ireval_core.io.ReadLimits`) or a Dask DataFrame; the id
  columns text exactly as written.
* :func:`labeled_ids`: a partition's id column as text.
* :func:`labeled_error`: when a task failed, the problems of the rows in row order
  (ids present, finite labels and scores, a (group, item) pair given once), numbered as
  rows of the whole input, whichever task failed first, with the "and N more problems"
  count of the in-memory readers.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import dask
import dask.dataframe as dd
import fsspec  # type: ignore[import-untyped]
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import FormatError, Problem
from .checks import MAX_PROBLEMS
from .dask import (
    GZIP,
    TEXT,
    Sources,
    chunked,
    compute,
    duplicates_of,
    empty_like,
    first_line,
    keys_frame,
    name_of,
)
from .partitions import id_text
from .source import ReadLimits, inflate

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["labeled_error", "labeled_frame", "labeled_ids"]


_CSV_MISSING = ["", "NA", "N/A", "NaN", "nan", "null", "NULL", "None", "<NA>"]
"""Cells of a CSV label or score column read as missing (never in an id column)."""


def _is_gzip(fs: Any, path: str) -> bool:
    with fs.open(path, "rb") as fh:
        return bool(fh.read(2) == GZIP)


def _read_csv_file(fs: Any, path: str, limits: ReadLimits,
                   options: dict[str, Any]) -> pd.DataFrame:
    """One CSV file (gzip inflated within ``limits``) as a pandas frame."""
    size = fs.size(path)
    with fs.open(path, "rb") as fh:
        compressed = fh.read(2) == GZIP
        fh.seek(0)
        data = inflate(fh, size, path, limits) if compressed else fh.read()
    return pd.read_csv(pa.BufferReader(data), **options)


def labeled_frame(data: Sources | dd.DataFrame, columns: Sequence[str],
                   storage_options: Mapping[str, Any] | None,
                   ids: Sequence[str] = ()) -> tuple[dd.DataFrame, str]:
    """The columns of labeled rows: a Dask DataFrame, Parquet or CSV with a header.

    The ``ids`` columns are text exactly as written: CSV cells as they are (``007``,
    ``NA``), Parquet strings, or integers as their decimal text; a column of floats
    or another type is a :class:`FormatError` naming it, before anything is read.
    """
    name = name_of(data, "data")
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
                sep=sep, usecols=cols, dtype={c: TEXT for c in ids}, keep_default_na=False,
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
    schema = empty_like(frame._meta)
    for c in ids:
        id_text(schema.column(c), c, f"{c} id", name)
    return frame, name


def labeled_ids(df: pd.DataFrame, column: str, source: str) -> pa.ChunkedArray:
    """A partition's id column as text (see :func:`~.io.partitions.id_text`); a missing or
    empty id is a :class:`FormatError`."""
    try:
        values = chunked(pa.Array.from_pandas(df[column]))
    except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:  # an object column of mixed types
        raise FormatError(f"column {column!r} holds values of several types "
                          f"({first_line(exc)})", source=source) from None
    text = id_text(values, column, f"{column} id", source)
    empty = text.null_count + int(pc.sum(pc.equal(pc.utf8_length(text), 0)).as_py() or 0)
    if empty:
        raise FormatError(f"{empty} row(s) without a {column!r} value", source=source)
    return text


# ----------------------------------------------------------------------------- diagnosis


@dataclass(frozen=True)
class _RowsReport:
    """What the row-by-row pass found in one partition of labeled rows: its rows, its
    problems in row order (the first :data:`~ireval_core.io.checks.MAX_PROBLEMS`, each
    ``(row within the partition, 1-based; message; text)``) and how many."""

    rows: int
    problems: tuple[tuple[int, str, str | None], ...] = ()
    count: int = 0


def labeled_error(frame: dd.DataFrame, client: Client | None, *, source: str,
                  ids: Sequence[str], label: str, scores: Sequence[str],
                  judged_scores_only: bool = False) -> FormatError | None:
    """The error of labeled rows (None: none found), in row order whichever task failed
    first: every partition read is checked row by row (ids present, finite labels, finite
    scores: of every row, or of the judged ones with ``judged_scores_only``) and, with
    two ``ids`` columns, the good rows are searched for a (group, item) pair given again;
    the problems are numbered as rows of the whole input (1-based, in partition order),
    the first :data:`~ireval_core.io.checks.MAX_PROBLEMS` kept and all counted ("and N
    more problems"). A partition that cannot be read stops the count there: its error,
    unless an earlier row has one."""
    tasks = [dask.delayed(_labeled_rows, nout=2)(p, i, source, tuple(ids), label,
                                                 tuple(scores), judged_scores_only)
             for i, p in enumerate(frame.to_delayed())]
    try:
        outcomes = _outcomes(client, [t[0] for t in tasks])
    except Exception:  # a partition failed otherwise (a lost worker): the job's error stands
        return None
    found: list[tuple[int, str, str | None]] = []
    count, start = 0, 0
    for outcome in outcomes:
        if isinstance(outcome, FormatError):
            if count:
                break
            return outcome.fresh()
        found += [(start + row, message, text) for row, message, text in outcome.problems]
        count += outcome.count
        start += outcome.rows
    else:
        if len(ids) == 2:
            starts = np.concatenate([[0], np.cumsum([o.rows for o in outcomes])]).tolist()
            more, n = _labeled_duplicates([t[1] for t in tasks], client, starts, ids, label,
                                          scores)
            found, count = found + more, count + n
    if not count:
        return None
    found.sort(key=lambda p: p[0])
    return FormatError.of([Problem(source, None, f"row {row}", message, text)
                           for row, message, text in found[:MAX_PROBLEMS]],
                          count=count, shown=MAX_PROBLEMS)


def _outcomes(client: Client | None, tasks: Sequence[Any]) -> list[Any]:
    """Each task's result, or its :class:`FormatError`, in order (every task run to its
    end); another error is raised."""
    if client is None:
        out: list[Any] = []
        for task in tasks:  # one at a time, in order
            try:
                out.append(dask.compute(task)[0])
            except FormatError as exc:
                out.append(exc)
        return out
    from distributed import wait

    futures = client.compute(list(tasks))
    try:
        wait(futures)
        out = []
        for fut in futures:
            error = fut.exception() if fut.status == "error" else None
            if error is not None and not isinstance(error, FormatError):
                raise error
            out.append(error if error is not None else fut.result())
        return out
    finally:
        client.cancel(futures)


def _labeled_rows(df: pd.DataFrame, index: int, source: str, ids: tuple[str, ...],
                  label: str, scores: tuple[str, ...], judged_scores_only: bool
                  ) -> tuple[_RowsReport, pd.DataFrame]:
    """The row-by-row pass over one partition (:func:`labeled_error`): its report, and the
    keys of its good rows for the duplicate search (``qid``: group, ``docid``: item,
    ``block``: the partition, ``line``: the row within it; ``tag``: ``j`` for a judged
    row, else empty)."""
    n = len(df)
    bad: list[tuple[np.ndarray, str, np.ndarray | None]] = []  # mask, message, value shown
    texts: dict[str, pa.ChunkedArray] = {}
    for column in ids:
        try:
            values = chunked(pa.Array.from_pandas(df[column]))
        except (pa.ArrowInvalid, pa.ArrowTypeError) as exc:
            raise FormatError(f"column {column!r} holds values of several types "
                              f"({first_line(exc)})", source=source) from None
        text = id_text(values, column, f"{column} id", source)
        texts[column] = text
        empty = pc.fill_null(pc.equal(pc.utf8_length(text), 0), True)
        bad.append((np.asarray(empty.to_numpy(zero_copy_only=False), dtype=bool),
                    f"no {column!r} value", None))
    grades = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    bad.append((np.isinf(grades), f"expected finite labels in column {label!r}, got an "
                "infinite one", None))
    for s in scores:
        v = df[s].to_numpy(dtype=np.float64, na_value=np.nan)
        wrong = ~np.isfinite(v)
        if judged_scores_only:
            wrong &= grades >= 0
        bad.append((wrong, f"expected finite scores in column {s!r}, got ", v))
    any_bad = np.zeros(n, dtype=bool)
    for mask, _, _ in bad:
        any_bad |= mask
    rows = np.flatnonzero(any_bad)
    problems: list[tuple[int, str, str | None]] = []
    for r in rows[:MAX_PROBLEMS]:
        for mask, message, shown in bad:
            if mask[r]:
                value = "" if shown is None else str(float(shown[r]))
                problems.append((int(r) + 1, message + value, None))
                break
    report = _RowsReport(n, tuple(problems), len(rows))
    if len(ids) != 2:
        return report, keys_frame([], 0, index)
    good = ~any_bad
    keys: list[tuple[str, str, str, str, str | None, int]] = [
        (str(g), str(i), "j" if judged else "", "", None, int(r) + 1)
            for r, g, i, judged in zip(np.flatnonzero(good),
                                       texts[ids[0]].filter(pa.array(good)).to_pylist(),
                                       texts[ids[1]].filter(pa.array(good)).to_pylist(),
                                       ~np.isnan(grades[good]), strict=True)]
    return report, keys_frame(keys, 0, index)


def _labeled_duplicates(keys: Sequence[Any], client: Client | None, starts: Sequence[int],
                        ids: Sequence[str], label: str, scores: Sequence[str]
                        ) -> tuple[list[tuple[int, str, str | None]], int]:
    """The rows giving a (group, item) pair again, as the evaluation refuses them: the
    pair of two judged rows is a duplicate judgment, else a duplicate in the first
    score column's ranking; each named with the row giving it first."""
    frame = dd.from_delayed(list(keys), meta=keys_frame([], 0, 0), verify_meta=False)
    shuffled = frame.shuffle(on="qid", npartitions=max(len(keys), 1)).to_delayed()
    found = compute(client, *[dask.delayed(_pair_duplicates)(p) for p in shuffled])
    dups = pd.concat([d for d, _ in found], ignore_index=True)
    count = sum(n for _, counts in found for n in counts.values())
    out: list[tuple[int, str, str | None]] = []
    for row in dups.itertuples(index=False):
        at = int(row.line) + starts[int(row.block)]
        first = int(row.first_line) + starts[int(row.first_block)]
        both = row.tag == "j" and row.first_tag == "j"
        kind, per = ("qrels", "") if both else ("run", f" per run (run {scores[0]!r})")
        out.append((at, f"duplicate {kind} entry for {ids[0]} {row.qid!r}, {ids[1]} "
                        f"{row.docid!r} (rows {first} and {at}); each ({ids[0]}, {ids[1]}) "
                        f"may appear once{per}", None))
    return out, int(count)


def _pair_duplicates(df: pd.DataFrame) -> tuple[pd.DataFrame, dict[tuple[int, int], int]]:
    """:func:`duplicates_of` on (group, item) alone, the judged mark of both rows kept."""
    marks = df["tag"]
    dups, counts = duplicates_of(df.assign(tag="", group=marks))
    return dups.drop(columns=["tag"]).rename(
        columns={"group": "tag", "first_group": "first_tag"}), counts
