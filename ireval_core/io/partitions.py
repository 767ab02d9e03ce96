"""Reading helpers for the Dask partitions of :mod:`ireval_core.distributed`.

A partition of a Parquet dataset or a Dask DataFrame arrives already parsed: its
columns are found by the same aliases (:func:`columns_by_alias`), its id columns made
text by the rules of the Parquet reader (:func:`id_text`) and its values checked as the
in-memory readers check them (:func:`check_values`), so that the distributed path reads
exactly what :func:`~ireval_core.io.read_qrels` and :func:`~ireval_core.io.read_runs`
read. Text partitions (TREC, CSV/TSV blocks) go through
:func:`~.qrels_runs.read_columns` itself, after trec_eval 10.0's comment lines are blanked
when that rule is asked for (:func:`block_without_comments`).
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataWarning, FormatError
from .checks import find_problem, text_problem, to_float
from .columns import (
    ALIASES,
    MISSING_TAGS,
    TEXT_KEYS,
    TEXT_WORD,
    VALUE_WORD,
    Kind,
    choose_columns,
    from_rank,
)
from .parquet import is_text_type
from .source import Source
from .trec import skip_comments

__all__ = ["NO_TAG", "block_without_comments", "check_columns", "check_values",
           "columns_by_alias", "id_text", "ids_as_text"]

NO_TAG = pa.array(sorted({"", *MISSING_TAGS}), pa.string())
"""Tag cells that mean "no tag" (and the empty tag), as an Arrow array for ``is_in``."""


def columns_by_alias(table: pa.Table, src: Source, kind: Kind, *, header_line: int | None,
                     delimiter: str = ",") -> tuple[pa.Table, list[DataWarning]]:
    """Columns qid, docid, rel|score (+ tag) of an already parsed table, by alias.

    Kept for callers that parse themselves (:mod:`ireval_core.distributed`): ids are
    cast to strings, values to float64 (a non-numeric value names its line when
    ``header_line`` is given).
    """
    chosen, warnings = choose_columns(table.column_names, src, kind, header_line)
    out = {}
    for k, name in chosen.items():
        col = table.column(name)
        if k in TEXT_KEYS:
            col = col.cast(pa.string())
        else:
            col = to_float(col, src, name, header_line, "rank" if from_rank(warnings)
                           else VALUE_WORD[k])
        out[k] = col
    if from_rank(warnings):
        out["score"] = pc.negate(out["score"])
    return pa.table(out), warnings


def check_columns(columns: list[str], kind: Kind, name: str) -> list[str]:
    """Validate a header as the in-memory readers do; the source columns to read."""
    empty = pa.table({c: pa.array([], pa.string()) for c in columns})
    columns_by_alias(empty, Source(name, data=b""), kind, header_line=None)
    lower = {c.strip().lower(): c for c in columns}
    keep = []
    for key in ("qid", "docid", "rel" if kind == "qrels" else "score", "tag", "rank"):
        if kind == "qrels" and key in ("tag", "rank"):
            continue
        hit = next((lower[a] for a in ALIASES[key] if a in lower), None)
        if hit is not None and hit not in keep:
            keep.append(hit)
    return keep


def id_text(values: pa.ChunkedArray | pa.Array, column: str, what: str,
            source: str) -> pa.ChunkedArray | pa.Array:
    """Ids as the Parquet reader reads an id column: text as written, integers as their
    decimal text; any other type is a :class:`FormatError` naming the column."""
    typ = values.type
    base = typ.value_type if pa.types.is_dictionary(typ) else typ
    if not (is_text_type(base) or pa.types.is_integer(base)):
        raise FormatError(f"column {column!r} holds {typ} values; {what}s must be strings "
                          "(ids are never converted from numbers with a fraction or "
                          "exponent)", source=source)
    if base != typ:
        values = values.cast(base)  # dictionary-coded: the values themselves
    return values.cast(pa.string())


def ids_as_text(table: pa.Table, kind: Kind, name: str) -> pa.Table:
    """``table`` with its id and tag columns as text (see :func:`id_text`)."""
    chosen, _ = choose_columns(table.column_names, Source(name, data=b""), kind, None)
    for key, col in chosen.items():
        if key in TEXT_KEYS:
            i = table.column_names.index(col)
            table = table.set_column(i, col, id_text(table.column(i), col, TEXT_WORD[key],
                                                     name))
    return table


def check_values(table: pa.Table, kind: Kind, name: str) -> None:
    """The checks the Parquet reader makes, on one partition (columns ``qid``, ``docid``,
    ``value`` [, ``tag``]).

    Empty ids, control characters, spaces at either end of an id (ids are compared
    exactly) and scores or grades that are not finite are a :class:`FormatError` with
    the value and what is wrong. The row is not named: a partition's rows are not
    numbered as the file's (the in-memory reader, ``read_qrels``/``read_runs``, names it).
    """
    value = "rel" if kind == "qrels" else "score"
    found = find_problem(table.rename_columns(
        [value if c == "value" else c for c in table.column_names]), kind, edges=True)
    if found is None:
        return
    key, row = found
    column = value if key == value else key
    shown = table.column("value" if key == value else key)[row].as_py()
    if key in TEXT_KEYS:
        problem = (text_problem(shown, key, edges=True)
                   or f"invalid {TEXT_WORD[key]} {shown!r}")
    else:
        problem = f"expected a finite {VALUE_WORD[value]}, got {shown!r}"
    raise FormatError(f"{problem} (column {column!r})", source=name)


def block_without_comments(src: Source, kind: Kind, *, after_comment: bool = False) -> Source:
    """A block of whole lines of a TREC text file with trec_eval 10.0's comment lines
    blanked (:func:`~.trec.skip_comments`), as when the whole file is read.

    The qrels rule reads the line right after a comment line as data: ``after_comment``
    says that the line before the block was a comment line that was skipped, so the
    block's first line is data even if it starts with ``#``.

    >>> src = Source("q", b"# b\\n1 0 d1 1\\n")
    >>> block_without_comments(src, "qrels").data, block_without_comments(
    ...     src, "qrels", after_comment=True).data
    (b'\\n1 0 d1 1\\n', b'# b\\n1 0 d1 1\\n')
    """
    if after_comment and kind != "run" and src.data.startswith(b"#"):
        end = src.data.find(b"\n") + 1 or len(src.data)
        rest, _ = skip_comments(Source(src.name, src.data[end:], limits=src.limits,
                                       encoding=src.encoding), kind)
        return Source(src.name, src.data[:end] + rest.data, limits=src.limits,
                      encoding=src.encoding)
    return skip_comments(src, kind)[0]
