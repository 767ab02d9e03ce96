"""The long label table: its columns, and its coding into integers.

Every statistic of :mod:`ireval_core.labels.agreement` takes the **long label table**
(``Judgments.label_table()``): one row per labeled (round, query, doc, rater), the
columns :data:`TABLE_COLUMNS`, or the same table as integer codes,
:class:`LabelCodes` (``Judgments.label_codes()``). :func:`code_table` checks either and
codes it once (:class:`CodedTable`: NaN labels dropped, rows sorted by unit, label and
rater), with rounds in time order (:func:`ordered_rounds`, also the order of rounds on
every page).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import ArrayLike, NDArray

from ..errors import invalid_parameter

__all__ = ["TABLE_COLUMNS", "CodedTable", "LabelCodes", "code_table", "ordered_rounds"]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

TABLE_COLUMNS = ("round", "query", "doc", "rater", "label")
"""Columns of the long label table."""


@dataclass(frozen=True)
class LabelCodes:
    """The long label table as integer codes into names, one row per labeled (round,
    query, doc, rater), in the row order of the table it stands for.

    What :meth:`Judgments.label_codes <ireval_core.labels.Judgments.label_codes>` gives,
    so that :func:`rater_report` uses the codes the reader already made instead of
    coding the text columns again. ``round[i]`` indexes ``round_names``, and so on for
    ``query``, ``doc`` and ``rater``; names are distinct. ``label`` is float64, NaN =
    unlabeled (left out, as in the table).
    """

    round: NDArray[np.integer[Any]]
    query: NDArray[np.integer[Any]]
    doc: NDArray[np.integer[Any]]
    rater: NDArray[np.integer[Any]]
    label: FloatArray
    round_names: NDArray[np.object_]
    query_names: NDArray[np.object_]
    doc_names: NDArray[np.object_] | pa.Array
    rater_names: NDArray[np.object_]


@dataclass(frozen=True)
class CodedTable:
    """The label table as integer codes, NaN labels dropped, rows sorted by
    (unit, label, rater).

    ``unit`` codes (round, query, doc) and is ascending, so the rows of a unit, and of a
    round, are contiguous (``unit_start`` are the CSR offsets of the units, rounds come
    first in the unit order). ``round`` indexes ``rounds`` (in time order), ``rater``
    indexes ``raters`` (sorted), ``value`` indexes ``scale`` (the sorted distinct
    labels). ``unit_round``, ``unit_query``, ``unit_doc`` give each unit's ids.
    """

    round: IntArray
    unit: IntArray
    rater: IntArray
    label: FloatArray
    value: IntArray
    rounds: NDArray[np.object_]
    raters: NDArray[np.object_]
    scale: FloatArray
    unit_start: IntArray
    unit_round: IntArray
    unit_query: NDArray[np.object_]
    unit_doc: NDArray[np.object_]

    @property
    def n_units(self) -> int:
        return len(self.unit_round)

    def round_rows(self, r: int) -> slice:
        """The rows of round ``r`` (contiguous)."""
        lo, hi = np.searchsorted(self.round, [r, r + 1])
        return slice(int(lo), int(hi))


def _round_sort_key(rounds: Sequence[str]) -> list[int]:
    """Positions of ``rounds`` in time order (see :func:`ordered_rounds`)."""
    names = pd.Series(list(rounds), dtype=object).astype(str)
    as_num = pd.to_numeric(names, errors="coerce")
    key: pd.Series = names
    if len(names) and as_num.notna().all():
        key = as_num
    elif len(names):
        as_date = pd.Series(pd.NaT, index=names.index, dtype="datetime64[ns]")
        for fmt in ("ISO8601", "%b %Y", "%B %Y", "%Y/%m", "%Y.%m", "%Y%m"):
            missing = as_date.isna()
            if not missing.any():
                break
            try:
                as_date[missing] = pd.to_datetime(names[missing], format=fmt, errors="coerce")
            except (ValueError, OverflowError):  # out of range ("-1" as year -1): not dates
                continue
        if as_date.notna().all():
            key = as_date
    return sorted(range(len(names)), key=lambda i: (key.iloc[i], names.iloc[i]))


def ordered_rounds(rounds: Sequence[str] | ArrayLike) -> list[str]:
    """Distinct round names in time order.

    Numerically when every name is a number, by date when every name parses as a
    date (``2024-01``, ``2024-01-15``, ``Jan 2024``, ``2024/01``), else alphabetically.

    >>> ordered_rounds(["2024-10", "2024-9", "2024-11", "2024-9"])
    ['2024-9', '2024-10', '2024-11']
    >>> ordered_rounds(["10", "9"]), ordered_rounds(["b", "a"])
    (['9', '10'], ['a', 'b'])
    """
    values = pd.unique(np.asarray(rounds, dtype=object).ravel())  # distinct, vectorised
    distinct = list(dict.fromkeys(str(r) for r in values))
    return [distinct[i] for i in _round_sort_key(distinct)]


def _check_table(table: object, function: str, needed: Sequence[str]) -> pd.DataFrame:
    if not isinstance(table, pd.DataFrame):
        raise invalid_parameter("table", function, "a pandas DataFrame (the long label table)",
                                type(table).__name__, error=TypeError)
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise invalid_parameter("table", function,
                                f"a DataFrame with columns {', '.join(needed)}",
                                f"columns {list(map(str, table.columns))}")
    return table


def _labels(table: pd.DataFrame, function: str) -> FloatArray:
    raw = table["label"]
    try:
        label = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        as_num = pd.to_numeric(raw, errors="coerce")
        bad = as_num.isna() & raw.notna()
        if bad.any():
            raise invalid_parameter("table", function,
                                    "a DataFrame whose 'label' column is numeric",
                                    f"label {raw[bad].iloc[0]!r}") from None
        label = as_num.to_numpy(dtype=np.float64)
    if np.isinf(label).any():
        raise invalid_parameter("table", function, "a DataFrame with finite labels",
                                "an infinite label")
    return label


def _factorize(values: pd.Series | None, n: int) -> tuple[IntArray, NDArray[np.object_]]:
    """Integer codes of an id column (as text, missing = "") and the names they index.

    One hashing pass in pyarrow; a categorical column reuses its codes.
    """
    if values is None:
        return np.zeros(n, dtype=np.int64), np.asarray([""], dtype=object)
    if isinstance(values.dtype, pd.CategoricalDtype):
        codes = np.asarray(values.cat.codes, dtype=np.int64)
        names = np.asarray(values.cat.categories.astype(str), dtype=object)
        if (codes < 0).any():
            names = np.append(names, "")
            codes = np.where(codes < 0, len(names) - 1, codes)
        used = np.bincount(codes, minlength=len(names)) > 0
        remap = np.cumsum(used) - 1
        return remap[codes], names[used]
    try:
        arr = pa.array(values, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError):
        arr = pa.array(values.astype(str).to_numpy(dtype=object), type=pa.string())
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string()) if not pa.types.is_null(arr.type) else pa.array(
            [""] * len(arr), pa.string())
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    encoded = pc.dictionary_encode(pc.fill_null(arr, ""))
    return (np.asarray(encoded.indices, dtype=np.int64),
            np.asarray(encoded.dictionary.to_pylist(), dtype=object))


def code_table(table: pd.DataFrame | LabelCodes, function: str, *, need_rater: bool) -> CodedTable:
    """Validate and code the table (see :class:`CodedTable`).

    ``table`` may be :class:`LabelCodes`: its codes are renumbered in order of first
    appearance, as the text columns would be, so that everything after is the same.
    With ``need_rater`` the rater column is required and a repeated (round, query, doc,
    rater) is an error; otherwise only query, doc and label are required (a missing
    round or rater column is one round, one rater).
    """
    if isinstance(table, LabelCodes):
        keep = ~np.isnan(table.label)
        label = np.asarray(table.label[keep], dtype=np.float64)
        columns = [label, *(_recode(codes[keep], names) for codes, names in (
            (table.round, table.round_names), (table.query, table.query_names),
            (table.doc, table.doc_names), (table.rater, table.rater_names)))]
        del label, keep
        return _code_columns(columns, function, need_rater=need_rater)
    needed = TABLE_COLUMNS if need_rater else ("query", "doc", "label")
    table = _check_table(table, function, needed)
    label = _labels(table, function)
    keep = ~np.isnan(label)
    sub = table if keep.all() else table.loc[keep]
    label = label[keep]
    n = len(label)

    def column(name: str) -> pd.Series | None:
        return sub[name] if name in sub.columns else None

    columns = [label, _factorize(column("round"), n), _factorize(column("query"), n),
               _factorize(column("doc"), n), _factorize(column("rater"), n)]
    del label
    return _code_columns(columns, function, need_rater=need_rater)


def _recode(codes: NDArray[np.integer[Any]], names: NDArray[np.object_] | pa.Array
            ) -> tuple[IntArray, NDArray[np.object_]]:
    """Codes in order of first appearance and the names they index, from codes into
    distinct ``names``: what :func:`_factorize` gives for the column ``names[codes]``,
    by hashing integers instead of text."""
    new, used = pd.factorize(np.asarray(codes))
    if isinstance(names, (pa.Array, pa.ChunkedArray)):
        taken = np.asarray(names.take(pa.array(used)).to_pylist(), dtype=object)
    else:
        taken = np.asarray(np.asarray(names, dtype=object)[used].astype(str), dtype=object)
    if not len(taken):
        taken = np.zeros(0, dtype=object)
    return np.asarray(new, dtype=np.int64), taken


def _code_columns(columns: list[Any], function: str, *, need_rater: bool) -> CodedTable:
    """:func:`_code` once every column is coded (codes in order of first appearance).

    ``columns``: ``[label, round, query, doc, rater]``, each id column a pair (codes,
    names). The list is emptied, so that the caller holds no column while they are
    sorted (peak memory: on 3.6M label rows each column is 29 MB).
    """
    label: FloatArray = columns[0]
    round_, query, doc, rater = columns[1:]
    columns.clear()
    n = len(label)
    r_codes, r_names = round_
    r_order = np.asarray(_round_sort_key(list(r_names)), dtype=np.int64)
    rank = np.empty(len(r_order), dtype=np.int64)
    rank[r_order] = np.arange(len(r_order), dtype=np.int64)
    r_codes, rounds = rank[r_codes], r_names[r_order]
    q_codes, q_names = query
    d_codes, d_names = doc
    rater_codes, rater_names = rater
    del round_, query, doc, rater
    rater_order = np.argsort(rater_names.astype(str), kind="stable")
    rank = np.empty(len(rater_order), dtype=np.int64)
    rank[rater_order] = np.arange(len(rater_order), dtype=np.int64)
    rater_codes, raters = rank[rater_codes], rater_names[rater_order]
    value, distinct = pd.factorize(label)  # hashing: few grades, many labels
    scale = np.sort(np.asarray(distinct, dtype=np.float64))
    rank = np.empty(len(scale), dtype=np.int64)
    rank[np.argsort(np.asarray(distinct, dtype=np.float64))] = np.arange(len(scale))
    value = rank[np.asarray(value, dtype=np.int64)] if len(scale) else np.zeros(0, np.int64)

    # one sort of the rows by (round, query, doc, label, rater)
    sizes = [len(rounds), len(q_names), len(d_names), len(scale), len(raters)]
    if float(np.prod(np.maximum(sizes, 1), dtype=np.float64)) < 2.0 ** 62:
        composite = r_codes
        for codes, size in zip((q_codes, d_codes, value, rater_codes), sizes[1:], strict=True):
            composite = composite * max(size, 1) + codes
        order = np.argsort(composite, kind="stable")
        del composite
    else:
        order = np.lexsort((rater_codes, value, d_codes, q_codes, r_codes))
    r_codes, q_codes, d_codes = r_codes[order], q_codes[order], d_codes[order]
    value, rater_codes, label = value[order], rater_codes[order], label[order]
    del order
    new_unit = np.ones(n, dtype=bool)
    if n:
        new_unit[1:] = ((r_codes[1:] != r_codes[:-1]) | (q_codes[1:] != q_codes[:-1])
                        | (d_codes[1:] != d_codes[:-1]))
    unit = np.cumsum(new_unit, dtype=np.int64) - 1
    start = np.flatnonzero(new_unit)
    if need_rater and n:
        _check_unique_raters(unit, rater_codes, start, len(raters), function, rounds,
                             r_codes, q_names, q_codes, d_names, d_codes, raters)
    return CodedTable(
        round=r_codes, unit=unit, rater=rater_codes, label=label, value=value,
        rounds=rounds, raters=raters, scale=scale,
        unit_start=np.append(start, n).astype(np.int64), unit_round=r_codes[start],
        unit_query=q_names[q_codes[start]], unit_doc=d_names[d_codes[start]])


def _check_unique_raters(unit: IntArray, rater: IntArray, start: IntArray, n_raters: int,
                         function: str, rounds: NDArray[np.object_], r_codes: IntArray,
                         q_names: NDArray[np.object_], q_codes: IntArray,
                         d_names: NDArray[np.object_], d_codes: IntArray,
                         raters: NDArray[np.object_]) -> None:
    """Raise when a rater labels one unit twice (rows sorted by unit)."""
    if n_raters <= 62:  # a bit per rater: a repeat makes the sum differ from the union
        bits = np.left_shift(np.int64(1), rater)
        repeated = np.add.reduceat(bits, start) != np.bitwise_or.reduceat(bits, start)
        if not repeated.any():
            return
    pair = unit * max(n_raters, 1) + rater
    uniq, first, counts = np.unique(pair, return_index=True, return_counts=True)
    if not (counts > 1).any():
        return
    i = int(first[np.flatnonzero(counts > 1)[0]])
    raise invalid_parameter(
        "table", function, "a table with one row per (round, query, doc, rater)",
        f"{int((counts - 1).sum())} repeated row(s), e.g. round {rounds[r_codes[i]]!r}, "
        f"query {q_names[q_codes[i]]!r}, doc {d_names[d_codes[i]]!r}, "
        f"rater {raters[rater[i]]!r}")
