"""Parquet: qrels and runs, labeling tables, query metadata.

Only file-level metadata is looked at from Python before the columns are read:
pyarrow's accessors of row group and column chunk metadata abort the process on some
corrupt files (a C++ exception where Python cannot catch it), while its readers report
them as errors. Every table read is validated in full, so that a damaged file never
hands an invalid array (dictionary indices out of bounds, offsets past the data) to a
kernel. Qrels and runs are read batch by batch within :class:`~.source.ReadLimits`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import string_array
from ..errors import DataWarning, FormatError
from .checks import find_problem, problem_message, to_float
from .columns import TEXT_KEYS, TEXT_WORD, VALUE_WORD, Kind, choose_columns, from_rank, resolve
from .source import Source, one_line

__all__ = ["is_text_type", "read_parquet", "read_parquet_columns", "read_parquet_text"]


def read_parquet(src: Source, kind: Kind) -> tuple[pa.Table, list[DataWarning]]:
    """Qrels or a run from Parquet: columns qid, docid, rel|score (+ tag), and warnings."""
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
        raise FormatError(f"not a readable Parquet file ({one_line(message)})",
                          source=src.name)
    chosen, warnings = choose_columns(schema.names, src, kind, None)
    text_columns = []
    for k, col in chosen.items():
        typ = schema.field(col).type
        base = typ.value_type if pa.types.is_dictionary(typ) else typ
        if k in TEXT_KEYS:
            if is_text_type(base):
                text_columns.append(col)
            elif not pa.types.is_integer(base):
                raise FormatError(f"column {col!r} holds {typ} values; {TEXT_WORD[k]}s must be "
                                  "strings (ids are never converted from numbers with a "
                                  "fraction or exponent)", source=src.name)
        elif not (pa.types.is_integer(base) or pa.types.is_floating(base)
                  or pa.types.is_decimal(base) or is_text_type(base)):
            word = "rank" if from_rank(warnings) else VALUE_WORD[k]
            raise FormatError(f"column {col!r} holds {typ} values; {word}s must be numbers",
                              source=src.name)
    table, message = _read_parquet_bounded(src, list(chosen.values()), text_columns)
    if table is None:
        raise (src.limits.error(src.name, src.size, what="the Parquet file") if not message
               else FormatError(f"not a readable Parquet file ({one_line(message)})",
                                source=src.name))
    if table.num_rows == 0:
        raise FormatError(f"the Parquet file has no rows; expected {kind} rows", source=src.name)
    out: dict[str, pa.ChunkedArray] = {}
    for k, col in chosen.items():
        values = table.column(col)
        typ = values.type
        base = typ.value_type if pa.types.is_dictionary(typ) else typ
        if k in TEXT_KEYS:
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
            word = "rank" if from_rank(warnings) else VALUE_WORD[k]
            values = to_float(values, src, col, None, word)
        out[k] = values
    del table
    if from_rank(warnings):
        out["score"] = pc.negate(out["score"])
    result = pa.table(out)
    found = find_problem(result, kind, edges=True)
    if found is not None:
        raise FormatError(problem_message(result, *found, edges=True, column=chosen[found[0]]),
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


def is_text_type(typ: pa.DataType) -> bool:
    """Whether ``typ`` holds text (string, large string or string view)."""
    return (pa.types.is_string(typ) or pa.types.is_large_string(typ)
            or pa.types.is_string_view(typ))


def read_parquet_columns(src: Source, aliases: Mapping[str, Sequence[str]],
                         high_cardinality: Sequence[str] = ("doc",)) -> pa.Table:
    """The columns named by ``aliases`` (all of them when none is); text columns with
    few distinct values are read dictionary-coded, as Parquet usually stores them
    (no string per row; document ids, with many distinct values, are read as text)."""
    import pyarrow.parquet as pq

    try:
        schema = pq.read_schema(src.stream())
        names = schema.names  # a column name that is not UTF-8 fails here
    except (pa.ArrowException, OSError, MemoryError, ValueError) as exc:
        detail = one_line(str(exc))
    else:
        detail = ""
    if detail:  # raised here, not in the except block: nothing of the input is chained
        raise FormatError(f"not a readable Parquet file ({detail})", source=src.name)
    found = resolve(names, aliases)
    for name in found.values():
        if names.count(name) > 1:
            raise FormatError(f"column {name!r} appears twice in the Parquet file",
                              source=src.name)
    wanted = list(found.values()) or None
    coded = [name for key, name in found.items() if key not in high_cardinality
             and pa.types.is_string(schema.field(name).type)]
    try:
        table = pq.read_table(src.stream(), columns=wanted, read_dictionary=coded or None)
        # a damaged file can decode to arrays that break later kernels (dictionary
        # indices out of bounds, offsets past the data, text that is not UTF-8): check all
        table.validate(full=True)
        return table
    except MemoryError:
        detail = "not enough memory to read it"
    except (pa.ArrowException, OSError) as exc:
        detail = one_line(str(exc))
    raise FormatError(f"not a readable Parquet file ({detail})", source=src.name)


def read_parquet_text(src: Source) -> tuple[list[str], dict[str, pa.Array]]:
    """Query metadata from Parquet: the header and every column as text (``""`` = empty)."""
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(src.stream())
        names = table.column_names  # a column name that is not UTF-8 fails here
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise FormatError(f"not a readable Parquet file ({exc})", source=src.name) from None
    header = [str(c).strip() for c in names]
    lower = [c.lower() for c in header]
    if len(set(lower)) != len(lower):
        raise FormatError("two columns have the same name; each column needs its own name",
                          source=src.name)
    columns: dict[str, pa.Array] = {}
    for name, col in zip(header, table.columns, strict=True):
        try:  # integer ids become their decimal text; numbers are parsed back later
            as_text = col.cast(pa.string())
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            raise FormatError(f"column {name!r} holds {col.type} values; expected text or "
                              "numbers", source=src.name) from None
        columns[name] = pc.fill_null(as_text.combine_chunks(), "")
    return header, columns
