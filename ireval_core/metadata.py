"""Query metadata: segments, traffic weights and per-system latencies.

An optional file with one row per query describes the queries beyond their judgments:
a segment (head / torso / tail), an intent, a language, how much traffic the query gets,
and how long each system took to answer it. With it, means can be split by segment
(:func:`by_segment`, :func:`compare_by_segment`), weighted by traffic
(:func:`weighted_mean`), and the systems' latencies summarised next to their
effectiveness (:func:`latency_summary`, :func:`efficiency_points`, :func:`pareto_front`).

File format
-----------
CSV, TSV (recognised by the content of the header row: the separator that splits it
into more fields) or Parquet (recognised by its magic bytes), plain or gzip-compressed,
with a header row. Column names are matched case-insensitively:

``query``
    The query id, under any name :mod:`ireval_core.io` accepts for query ids
    (``qid, query_id, query, topic, topic_id, queryid, q_id``). Ids are read as text
    and never normalised: ``007`` stays ``007`` (in Parquet, store ids as strings:
    an integer column becomes its decimal text).
weight (optional)
    One of ``weight, traffic, traffic_weight, frequency``: how much traffic the query
    stands for. A number >= 0 (finite); an empty cell = no weight (the query is left out
    of weighted means).
latencies (optional), in either layout
    *wide*: one column per system, ``latency_ms_<system>`` or ``<system>_latency_ms``
    (the system named as its run), one row per query; an empty cell = not timed.
    *long*: a ``system`` column (any name :mod:`ireval_core.io` accepts for a run tag:
    ``tag, run, run_id, run_name, system``) and a ``latency_ms`` column, one row per
    (query, system); the other columns must then repeat the same values on every row
    of a query. A long row with an empty system and latency only carries metadata.
    Latencies are milliseconds, finite and >= 0.
every other column
    A categorical column (segment, intent, language, ...): its values are kept as text;
    an empty cell is shown as :data:`NO_VALUE`.

A query given twice (a (query, system) pair in the long layout), a negative or
non-numeric weight or latency, or a query whose rows disagree are errors
(:class:`~ireval_core.errors.FormatError`) naming the file and line(s).

>>> meta = read_metadata(b"query,segment,traffic,latency_ms_bm25\\n"
...                      b"q1,head,10,12.5\\nq2,tail,1,30\\n", name="meta.csv")
>>> meta.queries.tolist(), meta.columns, meta.weights.tolist()
(['q1', 'q2'], ('segment',), [10.0, 1.0])
>>> meta.latency.to_dict("list")
{'query': ['q1', 'q2'], 'system': ['bm25', 'bm25'], 'latency_ms': [12.5, 30.0]}
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from io import StringIO
from types import MappingProxyType
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .compare import MIN_QUERIES, aligned_scores, difference_bounds, verdicts
from .errors import FormatError, invalid_parameter
from .evaluate import Evaluation
from .io import _ALIASES as _IO_ALIASES
from .io import PathOrBytes, Source
from .measures import Measure, parse_measures
from .stats import ALTERNATIVES, CORRECTIONS, TESTS, PairComparison, compare_measures

__all__ = [
    "LATENCY_DEFINITION", "LATENCY_STATISTICS", "NO_METADATA", "NO_VALUE", "PERCENTILE_METHOD",
    "QUERY_ALIASES", "SYSTEM_ALIASES", "WEIGHT_ALIASES", "QueryMetadata", "WeightedMean",
    "by_segment", "compare_by_segment", "efficiency_points", "front_sentence",
    "latency_summary", "pareto_front", "read_metadata", "weighted_definition", "weighted_mean",
]

QUERY_ALIASES: tuple[str, ...] = _IO_ALIASES["qid"]
"""Accepted names of the query id column (those of :mod:`ireval_core.io`)."""
SYSTEM_ALIASES: tuple[str, ...] = _IO_ALIASES["tag"]
"""Accepted names of the system column of long latencies (a run tag's in :mod:`.io`)."""
WEIGHT_ALIASES: tuple[str, ...] = ("weight", "traffic", "traffic_weight", "frequency")
"""Accepted names of the traffic weight column."""
LATENCY = "latency_ms"
"""Name of the latency column (long layout), prefix or suffix of a wide column."""

NO_METADATA = "(no metadata)"
"""The segment of an evaluated query that the metadata file does not list."""
NO_VALUE = "(no value)"
"""The segment of a query whose cell in the chosen column is empty."""

PERCENTILE_METHOD: Literal["linear"] = "linear"
"""Method of :func:`numpy.percentile` for latency percentiles: NumPy's default, the
linear interpolation between the two nearest ranks (``p`` of ``n`` sorted values sits at
position ``p / 100 · (n − 1)``), Hyndman & Fan's type 7, as Excel's ``PERCENTILE.INC``."""

LATENCY_STATISTICS: tuple[str, ...] = ("p50", "p95", "p99", "mean")
"""The latency columns of :func:`latency_summary` an efficiency chart can use."""

LATENCY_DEFINITION = (
    "per-query latency in ms, over the queries timed for the system; p50 / p95 / p99: "
    "percentiles with NumPy's 'linear' method (position p/100 · (n − 1) of the sorted "
    "latencies, interpolated); qps = 1000 / mean latency: the throughput of one "
    "single-threaded worker answering one query at a time. Under concurrency QPS differs "
    "(queries overlap, queues form), and neither QPS nor the mean tells the tail: "
    "throughput does not capture latency")
"""What the numbers of :func:`latency_summary` mean (also in its ``attrs['definition']``)."""

_MEAN_DEFINITION = "arithmetic mean over the queries of the segment that have a value"


def weighted_definition(n: int | str = "N", column: str | None = None) -> str:
    """The definition of a traffic-weighted mean over ``n`` queries.

    >>> weighted_definition(12, "traffic")
    "traffic-weighted mean: Σ w_q v_q / Σ w_q over the 12 queries with a weight (column 'traffic')"
    """
    text = f"traffic-weighted mean: Σ w_q v_q / Σ w_q over the {n} queries with a weight"
    return text + (f" (column {column!r})" if column else "")


# ----------------------------------------------------------------------------- the data


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (a copy when it is a view of another array)."""
    if a.base is not None or not a.flags.writeable:
        a = a.copy()
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class QueryMetadata:
    """What a query metadata file says about its queries (see :func:`read_metadata`).

    Every array is read-only and aligned as documented; build one with
    :func:`read_metadata`.

    Attributes
    ----------
    queries:
        The query ids (text), in file order, each once.
    columns:
        Names of the categorical columns (segment, intent, language, ...), as in the
        header.
    value_columns:
        Categorical values of each column of ``columns``, aligned to ``queries``
        (``None`` = empty cell); read them with :meth:`segment` or :attr:`values`.
    weights:
        Traffic weight per query (``NaN`` = no weight), or ``None`` without a weight
        column.
    weight_column:
        The weight column's name as in the header, or ``None``.
    latency_queries, latency_systems, latency_values:
        One entry per timed (query, system): the query id, the system name and the
        latency in ms (see :attr:`latency`).
    layout:
        How latencies were given: ``"wide"``, ``"long"`` or ``"none"``.
    source:
        The file name used in messages.
    """

    queries: np.ndarray
    columns: tuple[str, ...]
    value_columns: tuple[np.ndarray, ...]
    weights: np.ndarray | None
    weight_column: str | None
    latency_queries: np.ndarray
    latency_systems: np.ndarray
    latency_values: np.ndarray
    layout: str = "none"
    source: str = "<input>"
    _index: pa.Array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", pa.array(self.queries, type=pa.string()))

    def __len__(self) -> int:
        return len(self.queries)

    @property
    def values(self) -> Mapping[str, np.ndarray]:
        """Categorical column name -> its values aligned to :attr:`queries` (read-only)."""
        return MappingProxyType(dict(zip(self.columns, self.value_columns, strict=True)))

    def segment(self, column: str) -> np.ndarray:
        """The values of categorical ``column``, aligned to :attr:`queries` (``None`` = empty).

        >>> meta = read_metadata(b"qid,segment\\nq1,head\\nq2,\\n")
        >>> meta.segment("segment").tolist()
        ['head', None]
        """
        _check_column(self, column, "QueryMetadata.segment")
        return self.values[column]

    def segments(self, column: str) -> tuple[str, ...]:
        """The distinct values of ``column`` in order of first appearance (empty cells
        as :data:`NO_VALUE`, last)."""
        _check_column(self, column, "QueryMetadata.segments")
        return _segment_labels(self.values[column])

    @property
    def systems(self) -> tuple[str, ...]:
        """The systems with latencies, in order of first appearance."""
        return tuple(pd.unique(self.latency_systems))

    @property
    def has_latency(self) -> bool:
        """Whether any latency was given."""
        return bool(len(self.latency_values))

    @property
    def latency(self) -> pd.DataFrame:
        """Long table ``query, system, latency_ms``, one row per timed (query, system).

        A fresh frame on every access (the metadata itself stays unchanged).
        """
        return pd.DataFrame({"query": self.latency_queries.copy(),
                             "system": self.latency_systems.copy(),
                             "latency_ms": self.latency_values.copy()})

    def positions(self, query_ids: Sequence[str] | np.ndarray) -> np.ndarray:
        """Position of each id in :attr:`queries`, ``-1`` where the file does not list it."""
        ids = pa.array(np.asarray(query_ids, dtype=object), type=pa.string())
        found = pc.index_in(ids, value_set=self._index)
        return np.asarray(pc.fill_null(found, -1).to_numpy(zero_copy_only=False),
                          dtype=np.int64)


def _check_column(metadata: QueryMetadata, column: str, function: str) -> None:
    if column not in metadata.columns:
        choices = ", ".join(map(repr, metadata.columns)) or "none in this file"
        raise invalid_parameter("column", function,
                                f"a categorical column of the metadata ({choices})", column)


def _segment_labels(values: np.ndarray) -> tuple[str, ...]:
    missing = pd.isna(values)
    return tuple(pd.unique(values[~missing])) + ((NO_VALUE,) if missing.any() else ())


# ----------------------------------------------------------------------------- reading


class _Rows:
    """Where data row ``i`` is in the file, for messages (slow: only on the error path)."""

    def __init__(self, src: Source, delimiter: str | None) -> None:
        self.src = src
        self.delimiter = delimiter
        self._lines: list[int] | None = None
        self._text: list[str] | None = None

    def _load(self) -> tuple[list[int], list[str]]:
        if self._lines is None or self._text is None:
            text = self.src.data.decode("utf-8-sig", errors="replace")
            reader = csv.reader(StringIO(text, newline=""), delimiter=self.delimiter or ",")
            lines: list[int] = []
            start, header = 1, False
            for row in reader:
                line, start = start, reader.line_num + 1
                if not row:
                    continue
                if header:
                    lines.append(line)
                header = True
            self._lines = lines
            self._text = [t.rstrip("\r") for t in text.split("\n")]
        return self._lines, self._text

    def where(self, i: int) -> str:
        """``line N`` (text) or ``row N`` (Parquet) of data row ``i``."""
        return f"row {i + 1}" if self.delimiter is None else f"line {self._load()[0][i]}"

    def error(self, message: str, i: int) -> FormatError:
        """The error about data row ``i``: at its line, with the line's text."""
        if self.delimiter is None:  # Parquet: rows, no lines
            return FormatError(f"row {i + 1}: {message}", source=self.src.name)
        lines, text = self._load()
        return FormatError(message, source=self.src.name, line=lines[i],
                           text=text[lines[i] - 1])


def _diagnose(src: Source, delimiter: str, width: int) -> FormatError:
    """The first line that is not UTF-8 or has another number of fields than the header."""
    data = src.data
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        return FormatError("line is not valid UTF-8; save the file as UTF-8", source=src.name,
                           line=data.count(b"\n", 0, exc.start) + 1)
    reader = csv.reader(StringIO(text, newline=""), delimiter=delimiter)
    start = 1
    for row in reader:
        line, start = start, reader.line_num + 1
        if row and line > 1 and len(row) != width:
            return FormatError(f"expected {width} fields as in the header, got {len(row)}",
                               source=src.name, line=line, text=delimiter.join(row))
    return FormatError("could not read as delimited text with a header row", source=src.name)


def read_metadata(source: PathOrBytes | Source, *, name: str | None = None) -> QueryMetadata:
    """Read a query metadata file (CSV, TSV or Parquet; see the module docstring).

    Parameters
    ----------
    source:
        A path, the bytes of an upload, or a binary file object (gzip is detected).
    name:
        File name used in messages (defaults to the path's name).

    Returns
    -------
    QueryMetadata
        Queries in file order, categorical columns, weights and latencies.

    Raises
    ------
    FormatError
        With file, line and the offending line: no query column, a query given twice
        (both lines named), an empty query id, a weight or latency that is not a finite
        number >= 0, a query whose rows disagree (long layout), a malformed row.

    Examples
    --------
    >>> meta = read_metadata(b"topic\\tlanguage\\tbm25_latency_ms\\n007\\tde\\t9\\n")
    >>> meta.queries.tolist(), meta.segment("language").tolist(), meta.systems
    (['007'], ['de'], ('bm25',))
    >>> try:
    ...     read_metadata(b"query,weight\\nq1,2\\nq2,-1\\n", name="m.csv")
    ... except FormatError as exc:
    ...     print(exc)
    m.csv:3: expected a weight >= 0 in column 'weight', got '-1': 'q2,-1'
    """
    src = Source.of(source, name)
    if src.is_blank():
        raise FormatError("file is empty; expected a header row with a query column "
                          f"({', '.join(QUERY_ALIASES)})", source=src.name)
    if src.head(4) == b"PAR1":
        return _from_columns(*_read_parquet(src), _Rows(src, None), src.name)
    delimiter, header = _sniff(src)
    return _from_columns(header, _read_text(src, header, delimiter), _Rows(src, delimiter),
                         src.name)


def _sniff(src: Source) -> tuple[str, list[str]]:
    """The separator and the header row of a CSV or TSV file."""
    raw = src.head().split(b"\n", 1)[0]
    try:
        first = raw.decode("utf-8-sig").rstrip("\r")
    except UnicodeDecodeError:
        raise FormatError("line is not valid UTF-8; save the file as UTF-8", source=src.name,
                          line=1) from None
    if not first.strip():
        raise FormatError(f"expected a header row with a query column ({', '.join(QUERY_ALIASES)})"
                          ", got an empty line", source=src.name, line=1, text=first)
    delimiter = "\t" if first.count("\t") > first.count(",") else ","
    header = [c.strip() for c in next(csv.reader([first], delimiter=delimiter))]
    lower = [c.lower() for c in header]
    if len(set(lower)) != len(lower) or "" in lower:
        dup = next((c for c in header if lower.count(c.lower()) > 1), "")
        what = f"column {dup!r} appears twice" if dup else "a column has no name"
        raise FormatError(f"{what} in the header; each column needs its own name",
                          source=src.name, line=1, text=first)
    return delimiter, header


def _read_text(src: Source, header: list[str], delimiter: str) -> dict[str, pa.Array]:
    """Every column as text (``""`` for an empty cell)."""
    try:
        table = pacsv.read_csv(
            src.stream(),
            read_options=pacsv.ReadOptions(column_names=header, skip_rows=1),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                column_types={c: pa.string() for c in header}, null_values=[],
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowException):
        raise _diagnose(src, delimiter, len(header)) from None
    return {c: table.column(c).combine_chunks() for c in header}


def _read_parquet(src: Source) -> tuple[list[str], dict[str, pa.Array]]:
    import pyarrow.parquet as pq

    try:
        table = pq.read_table(src.stream())
    except (pa.ArrowException, OSError) as exc:
        raise FormatError(f"not a readable Parquet file ({exc})", source=src.name) from None
    header = [str(c).strip() for c in table.column_names]
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


def _text(values: pa.Array) -> np.ndarray:
    """Text cells as a writable object array of ``str``."""
    return np.array(values.to_numpy(zero_copy_only=False), dtype=object)


def _numbers(values: pa.Array, what: str, column: str, rows: _Rows) -> np.ndarray:
    """Text cells as floats (``NaN`` for an empty cell); a finite number >= 0 or an error."""
    text = pc.utf8_trim_whitespace(values)
    empty = np.asarray(pc.equal(text, "").to_numpy(zero_copy_only=False), dtype=bool)
    try:
        out = pc.cast(pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text),
                      pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # some cell is not a number
        out = pd.to_numeric(pd.Series(_text(text)), errors="coerce").to_numpy(np.float64)
    out = np.asarray(out, dtype=np.float64)
    bad = np.flatnonzero((~np.isfinite(out) & ~empty) | (out < 0))
    if bad.size:
        i = int(bad[0])
        need = "a weight >= 0" if what == "weight" else "a latency in ms >= 0"
        raise rows.error(f"expected {need} in column {column!r}, got {values[i].as_py()!r}",
                         i)
    return out


def _labels(values: pa.Array) -> np.ndarray:
    """Categorical cells without surrounding blanks; ``None`` for an empty cell."""
    text = pc.utf8_trim_whitespace(values)
    empty = np.asarray(pc.equal(text, "").to_numpy(zero_copy_only=False), dtype=bool)
    out = _text(text)
    out[empty] = None
    return out


def _codes(values: pa.Array) -> tuple[np.ndarray, int]:
    """Integer code of each cell, numbered in order of first appearance; and how many."""
    coded = pc.dictionary_encode(values)
    return (np.asarray(coded.indices.to_numpy(zero_copy_only=False), dtype=np.int64),
            len(coded.dictionary))


def _first_duplicate(codes: np.ndarray) -> tuple[int, int] | None:
    """Rows (first, second) of the first key given twice (by row of its repeat), or ``None``."""
    order = np.argsort(codes, kind="stable")
    repeats = order[1:][codes[order[1:]] == codes[order[:-1]]]
    if not repeats.size:
        return None
    second = int(repeats.min())
    return int(np.flatnonzero(codes == codes[second])[0]), second


def _from_columns(header: list[str], columns: dict[str, pa.Array], rows: _Rows,
                  source: str) -> QueryMetadata:
    by_lower = {c.lower(): c for c in header}
    header_line = None if rows.delimiter is None else 1
    query_col = next((by_lower[a] for a in QUERY_ALIASES if a in by_lower), None)
    if query_col is None:
        raise FormatError(f"missing query column in header {header}; expected one of "
                          f"{', '.join(QUERY_ALIASES)}", source=source, line=header_line)
    weight_cols = [by_lower[a] for a in WEIGHT_ALIASES if a in by_lower]
    if len(weight_cols) > 1:
        raise FormatError(f"two weight columns ({', '.join(weight_cols)}); keep one",
                          source=source, line=header_line)
    system_col = next((by_lower[a] for a in SYSTEM_ALIASES if a in by_lower), None)
    long_latency = by_lower.get(LATENCY)
    wide: dict[str, str] = {}  # system -> column
    for c in header:
        low = c.lower()
        system = (c[len(LATENCY) + 1:] if low.startswith(LATENCY + "_")
                  else c[:-len(LATENCY) - 1] if low.endswith("_" + LATENCY) else "")
        if system:
            if system in wide:
                raise FormatError(f"two latency columns for system {system!r} "
                                  f"({wide[system]}, {c}); keep one", source=source,
                                  line=header_line)
            wide[system] = c
    if long_latency is not None and system_col is None:
        raise FormatError(f"a {LATENCY!r} column needs a system column "
                          f"({', '.join(SYSTEM_ALIASES)}) naming the run on each row; or name "
                          f"the columns {LATENCY}_<system>", source=source, line=header_line)
    long = long_latency is not None and system_col is not None
    if long and wide:
        raise FormatError(f"latencies given both long ({system_col}, {long_latency}) and wide "
                          f"({', '.join(wide.values())}); use one layout", source=source,
                          line=header_line)
    special = {query_col, *weight_cols, *wide.values()} | (
        {system_col, long_latency} if long else set())
    categorical = tuple(c for c in header if c not in special)

    qid_cells = columns[query_col]  # as written: ids are never normalised
    empty = np.flatnonzero(np.asarray(pc.equal(qid_cells, "").to_numpy(zero_copy_only=False),
                                      dtype=bool))
    if empty.size:
        raise rows.error(f"empty query id in column {query_col!r}", int(empty[0]))
    qids = _text(qid_cells)
    codes, n_queries = _codes(qid_cells)
    weights = (_numbers(columns[weight_cols[0]], "weight", weight_cols[0], rows)
               if weight_cols else None)
    cats = {c: _labels(columns[c]) for c in categorical}

    if long_latency is not None and system_col is not None:
        return _long(qids, codes, cats, weights, weight_cols, columns[system_col], system_col,
                     _numbers(columns[long_latency], "latency", long_latency, rows), rows,
                     source)
    dup = _first_duplicate(codes) if n_queries != len(qids) else None
    if dup is not None:
        first, second = dup
        raise rows.error(f"duplicate query {qids[second]!r} (first at {rows.where(first)}); "
                         "each query may appear once", second)
    lat_q: list[np.ndarray] = []
    lat_s: list[np.ndarray] = []
    lat_v: list[np.ndarray] = []
    for system, c in wide.items():
        v = _numbers(columns[c], "latency", c, rows)
        ok = ~np.isnan(v)
        lat_q.append(qids[ok])
        lat_s.append(np.full(int(ok.sum()), system, dtype=object))
        lat_v.append(v[ok])
    return _metadata(qids, cats, weights, weight_cols, lat_q, lat_s, lat_v,
                     "wide" if wide else "none", source)


def _long(qids: np.ndarray, codes: np.ndarray, cats: dict[str, np.ndarray],
          weights: np.ndarray | None, weight_cols: list[str], systems_text: pa.Array,
          system_col: str, latency: np.ndarray, rows: _Rows, source: str) -> QueryMetadata:
    """Long latencies: rows per (query, system), the query's metadata repeated on each.

    ``codes`` numbers the queries in order of first appearance (:func:`_codes`).
    """
    system_cells = pc.utf8_trim_whitespace(systems_text)
    systems = _text(system_cells)
    no_system = np.asarray(pc.equal(system_cells, "").to_numpy(zero_copy_only=False),
                           dtype=bool)
    orphan = np.flatnonzero(no_system & ~np.isnan(latency))
    if orphan.size:
        raise rows.error(f"a latency without a system in column {system_col!r}; name the run "
                         "it was measured for", int(orphan[0]))
    timed = ~no_system
    system_codes, n_systems = _codes(system_cells)
    dup = _first_duplicate((codes * (n_systems + 1) + system_codes)[timed])
    if dup is not None:
        at = np.flatnonzero(timed)
        first, second = int(at[dup[0]]), int(at[dup[1]])
        raise rows.error(f"duplicate latency for query {qids[second]!r}, system "
                         f"{systems[second]!r} (first at {rows.where(first)}); each "
                         "(query, system) may appear once", second)
    # each query's metadata must be the same on all its rows: compare each row with the
    # first row of its query (vectorised over rows)
    first_of_query = np.unique(codes, return_index=True)[1]  # rows, in file order
    first_row = first_of_query[codes]  # the first row of each row's query
    for name, values in [*cats.items()] + ([(weight_cols[0], weights)] if weights is not None
                                           else []):
        firsts = values[first_row]
        missing, missing_first = pd.isna(values), pd.isna(firsts)
        differ = (missing != missing_first) | (~missing & (values != firsts))
        bad = np.flatnonzero(differ)
        if bad.size:
            i = int(bad[0])
            raise rows.error(f"query {qids[i]!r} has {name} {_cell(values[i])!r} here but "
                             f"{_cell(firsts[i])!r} at {rows.where(int(first_row[i]))}; a "
                             "query's metadata must be the same on all its rows", i)
    keep = first_of_query  # one row per query, in file order
    ok = timed & ~np.isnan(latency)
    return _metadata(qids[keep], {c: v[keep] for c, v in cats.items()},
                     None if weights is None else weights[keep], weight_cols,
                     [qids[ok]], [systems[ok]], [latency[ok]], "long", source)


def _cell(value: object) -> str:
    """A cell as the file showed it (empty for a missing value)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return f"{value:g}" if isinstance(value, float) else str(value)


def _metadata(qids: np.ndarray, cats: dict[str, np.ndarray], weights: np.ndarray | None,
              weight_cols: list[str], lat_q: list[np.ndarray], lat_s: list[np.ndarray],
              lat_v: list[np.ndarray], layout: str, source: str) -> QueryMetadata:
    def cat(parts: list[np.ndarray], dtype: type) -> np.ndarray:
        return np.concatenate(parts).astype(dtype) if parts else np.array([], dtype=dtype)

    return QueryMetadata(
        queries=_frozen(qids.astype(object)), columns=tuple(cats),
        value_columns=tuple(_frozen(v) for v in cats.values()),
        weights=None if weights is None else _frozen(weights),
        weight_column=weight_cols[0] if weight_cols else None,
        latency_queries=_frozen(cat(lat_q, object)), latency_systems=_frozen(cat(lat_s, object)),
        latency_values=_frozen(cat(lat_v, np.float64)), layout=layout, source=source)


# ----------------------------------------------------------------------------- segments


def _check_metadata(metadata: object, function: str) -> QueryMetadata:
    if not isinstance(metadata, QueryMetadata):
        raise invalid_parameter("metadata", function, "a QueryMetadata (see read_metadata)",
                                metadata, error=TypeError)
    return metadata


def _check_system(res: Evaluation, system: str, name: str, function: str) -> str:
    if system not in res.systems:
        raise invalid_parameter(name, function,
                                f"one of the evaluated runs ({', '.join(res.systems)})", system)
    return system


def _check_measure(res: Evaluation, measure: str | Measure, name: str, function: str) -> Measure:
    """One evaluated measure that is averaged over queries (an arithmetic mean)."""
    m = parse_measures(measure)[0]
    evaluated = [str(x) for x in res.measures]
    if str(m) not in evaluated:
        raise invalid_parameter(name, function,
                                f"one of the evaluated measures ({', '.join(evaluated)})",
                                str(m))
    if m.family.aggregate is not None:
        raise invalid_parameter(name, function, "a measure averaged over queries (not one "
                                f"{m.family.aggregate_rule})", str(m))
    return m


def _segment_of(res: Evaluation, metadata: QueryMetadata, column: str, system: str
                ) -> np.ndarray:
    """Segment label of each evaluated query of ``system`` (:data:`NO_METADATA`,
    :data:`NO_VALUE` included)."""
    values = metadata.values[column]
    labels = np.append(np.where(pd.isna(values), NO_VALUE, values).astype(object), NO_METADATA)
    return labels[metadata.positions(res.query_ids[system].astype(str))]  # -1: NO_METADATA


def _weights_of(res: Evaluation, metadata: QueryMetadata, system: str) -> np.ndarray:
    """Traffic weight of each evaluated query of ``system`` (NaN: none)."""
    if metadata.weights is None:
        return np.full(len(res.query_ids[system]), np.nan)
    return np.append(metadata.weights, np.nan)[metadata.positions(
        res.query_ids[system].astype(str))]


def by_segment(res: Evaluation, metadata: QueryMetadata, column: str, *,
               measures: Sequence[str | Measure] | None = None,
               weighted: bool = False) -> pd.DataFrame:
    """Per (segment, system, measure): how many queries, and their mean.

    Parameters
    ----------
    res:
        The evaluation (its per-query values are split, nothing is re-evaluated).
    metadata:
        The query metadata (:func:`read_metadata`).
    column:
        The categorical column that defines the segments (e.g. ``"segment"``).
    measures:
        Measures of ``res`` averaged over queries (default: all of them; counts summed
        over queries, PNR and GAUC are left out of the default, and refused by name).
    weighted:
        ``False``: the arithmetic mean over the segment's queries that have a value, the
        same as :func:`~ireval_core.evaluate` restricted to them. ``True``: the
        traffic-weighted mean Σ w_q v_q / Σ w_q over the segment's queries that have a
        value and a weight (:func:`weighted_definition`).

    Returns
    -------
    pandas.DataFrame
        Columns ``segment, system, measure, queries, mean, average`` (``average`` says
        ``"mean"`` or ``"traffic-weighted mean"``), plus ``weight`` (Σ w_q) when
        ``weighted``. Segments in order of first appearance in the metadata, then
        :data:`NO_VALUE` (empty cells), then :data:`NO_METADATA` (evaluated queries the
        metadata does not list); every segment of the file is listed, with 0 queries and
        a NaN mean where a run has none. ``attrs['definitions']`` maps each measure to its
        definition, ``attrs['average']`` says how the means average.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}})
    >>> run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}}, name="r")
    >>> res = evaluate(qrels, [run], ["P@1"])
    >>> meta = read_metadata(b"query,segment,traffic\\nq1,head,3\\nq2,head,1\\n")
    >>> by_segment(res, meta, "segment")[["segment", "queries", "mean"]].to_dict("list")
    {'segment': ['head', '(no metadata)'], 'queries': [2, 1], 'mean': [0.5, 1.0]}
    >>> by_segment(res, meta, "segment", weighted=True)["mean"].tolist()
    [0.75, nan]
    """
    function = "by_segment"
    metadata = _check_metadata(metadata, function)
    _check_column(metadata, column, function)
    if measures is None:
        specs = [m for m in res.measures if m.family.aggregate is None]
    else:
        specs = [_check_measure(res, m, "measures", function) for m in measures]
    if weighted and metadata.weights is None:
        raise invalid_parameter("weighted", function, "False for metadata without a weight "
                                f"column ({', '.join(WEIGHT_ALIASES)})", weighted)
    file_segments = _segment_labels(metadata.values[column])
    seg_of = {s: _segment_of(res, metadata, column, s) for s in res.systems}
    seen = set(np.concatenate([*seg_of.values(), np.array([], dtype=object)]))
    segments = [*file_segments, *([NO_METADATA] if NO_METADATA in seen else [])]
    code = {s: i for i, s in enumerate(segments)}
    k = len(segments)
    frames = []
    for system in res.systems:  # a loop over systems and measures; queries are vectorised
        idx = pd.Index(segments).get_indexer(seg_of[system])
        w = _weights_of(res, metadata, system) if weighted else None
        for m in specs:
            v = res.values[(system, str(m))]
            ok = ~np.isnan(v) if w is None else ~np.isnan(v) & ~np.isnan(w)
            weight = np.where(ok, 1.0 if w is None else w, 0.0)
            n = np.bincount(idx[ok], minlength=k)
            total = np.bincount(idx, weights=weight, minlength=k)
            sums = np.bincount(idx, weights=np.where(ok, v, 0.0) * weight, minlength=k)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(total > 0, sums / np.where(total > 0, total, 1.0), np.nan)
            frame = pd.DataFrame({"segment": segments, "system": system, "measure": str(m),
                                  "queries": n, "mean": mean,
                                  "average": "traffic-weighted mean" if weighted else "mean"})
            if weighted:
                frame["weight"] = total
            frames.append(frame)
    columns = ["segment", "system", "measure", "queries", "mean", "average"] + (
        ["weight"] if weighted else [])
    out = (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns))
    if frames:  # segment first, then system and measure in evaluation order
        order = np.lexsort((np.arange(len(out)), out["segment"].map(code).to_numpy()))
        out = out.iloc[order].reset_index(drop=True)
    out.attrs["definitions"] = {str(m): res.definition(m) for m in specs}
    out.attrs["average"] = (
        weighted_definition("N", metadata.weight_column) + "; N = the queries column"
        if weighted else _MEAN_DEFINITION)
    return out


class WeightedMean(NamedTuple):
    """A traffic-weighted mean: ``(value, n, total_weight)``, with its :attr:`definition`."""

    value: float
    n: int
    total_weight: float

    @property
    def definition(self) -> str:
        """``traffic-weighted mean: Σ w_q v_q / Σ w_q over the N queries with a weight``."""
        return weighted_definition(self.n)


def weighted_mean(res: Evaluation, metadata: QueryMetadata, system: str,
                  measure: str | Measure) -> WeightedMean:
    """The traffic-weighted mean of one run and measure over the queries with a weight.

    ``Σ w_q v_q / Σ w_q`` over the evaluated queries of ``system`` that have a value and
    a weight in ``metadata`` (queries not listed, or with an empty weight, are left out).
    ``value`` is NaN when no query has a weight > 0.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    >>> run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"x": 1.0}}, name="r")
    >>> res = evaluate(qrels, [run], ["P@1"])
    >>> meta = read_metadata(b"query,traffic\\nq1,3\\nq2,1\\n")
    >>> wm = weighted_mean(res, meta, "r", "P@1")
    >>> wm
    WeightedMean(value=0.75, n=2, total_weight=4.0)
    >>> wm.definition
    'traffic-weighted mean: Σ w_q v_q / Σ w_q over the 2 queries with a weight'
    """
    function = "weighted_mean"
    metadata = _check_metadata(metadata, function)
    _check_system(res, system, "system", function)
    m = _check_measure(res, measure, "measure", function)
    if metadata.weights is None:
        raise invalid_parameter("metadata", function, "query metadata with a weight column "
                                f"({', '.join(WEIGHT_ALIASES)})", metadata.source)
    v = res.values[(system, str(m))]
    w = _weights_of(res, metadata, system)
    ok = ~np.isnan(v) & ~np.isnan(w)
    total = float(w[ok].sum())
    value = float(np.dot(w[ok], v[ok]) / total) if total > 0 else math.nan
    return WeightedMean(value, int(ok.sum()), total)


def compare_by_segment(res: Evaluation, metadata: QueryMetadata, column: str, *,
                       measure: str | Measure, a: str, b: str, test: str = "t",
                       alternative: str = "two-sided", correction: str = "holm",
                       alpha: float = 0.05, n_resamples: int = 10_000,
                       seed: int | None = 0) -> pd.DataFrame:
    """Paired test of ``b`` against ``a`` within each segment, with verdicts in words.

    Within a segment the runs are paired on the queries both have a value for (as on the
    Compare page, :func:`ireval_core.compare.aligned_scores`). Segments with at least
    :data:`~ireval_core.compare.MIN_QUERIES` shared queries are tested
    (:func:`ireval_core.stats.compare_measures`) and corrected together: the family of
    the ``correction`` is the tested segments. Smaller segments get their means and
    ``"cannot tell"``, as :func:`ireval_core.compare.verdicts` says for small samples.

    Parameters
    ----------
    res, metadata, column:
        As for :func:`by_segment`.
    measure:
        An evaluated measure averaged over queries.
    a, b:
        The two runs; differences are ``b − a``.
    test:
        One of ``ireval_core.stats.TESTS`` (``"t"``, ``"wilcoxon"``, ``"sign"``,
        ``"randomization"``, ``"bootstrap"``).
    alternative, correction, n_resamples, seed:
        As for :func:`ireval_core.compare.compare_evaluation`.
    alpha:
        The significance level of the verdicts.

    Returns
    -------
    pandas.DataFrame
        One row per segment (order as in :func:`by_segment`; segments without a shared
        query left out): ``segment, queries, mean_a, mean_b, mean_diff, ci_low, ci_high``
        (the 95% interval of the difference, clipped to what the measure allows),
        ``statistic, pvalue, pvalue_corrected, wins, ties, losses, outcome, verdict``.
        ``attrs`` hold the ``definition`` of the measure and a ``note`` on the family.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(7)})
    >>> def run(name, misses):  # P@1 = 0 on the queries in misses, else 1
    ...     return Run.from_dict({f"q{i}": {"a": 0.0 if i in misses else 1.0, "b": 0.5}
    ...                           for i in range(7)}, name=name)
    >>> res = evaluate(qrels, [run("x", {5}), run("y", {2, 3})], ["P@1"])
    >>> meta = read_metadata(b"query,segment\\n" + b"".join(
    ...     f"q{i},{'tail' if i < 2 else 'head'}\\n".encode() for i in range(7)))
    >>> t = compare_by_segment(res, meta, "segment", measure="P@1", a="x", b="y")
    >>> t[["segment", "queries", "mean_diff", "outcome"]].to_dict("list")
    {'segment': ['tail', 'head'], 'queries': [2, 5], 'mean_diff': [0.0, -0.2], \
'outcome': ['cannot tell', 'not significant']}
    """
    function = "compare_by_segment"
    metadata = _check_metadata(metadata, function)
    _check_column(metadata, column, function)
    m = _check_measure(res, measure, "measure", function)
    _check_system(res, a, "a", function)
    _check_system(res, b, "b", function)
    if a == b:
        raise invalid_parameter("b", function, "a run other than a", b)
    if test not in TESTS:
        raise invalid_parameter("test", function, "one of " + ", ".join(map(repr, TESTS)), test)
    if alternative not in ALTERNATIVES:
        raise invalid_parameter("alternative", function,
                                "one of " + ", ".join(map(repr, ALTERNATIVES)), alternative)
    if correction not in CORRECTIONS:
        raise invalid_parameter("correction", function,
                                "one of " + ", ".join(map(repr, CORRECTIONS)), correction)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 < alpha < 1.0:
        raise invalid_parameter("alpha", function, "a float in (0, 1)", alpha)

    common, scores = aligned_scores(res, m, [a, b])
    values = metadata.values[column]
    labels = np.append(np.where(pd.isna(values), NO_VALUE, values).astype(object), NO_METADATA)
    seg = labels[metadata.positions(common.astype(str))]
    present = set(seg)
    order = list(dict.fromkeys(s for s in (*_segment_labels(values), NO_VALUE, NO_METADATA)
                               if s in present))
    members = {s: seg == s for s in order}
    tested = {s: {a: scores[a][mask], b: scores[b][mask]} for s, mask in members.items()
              if mask.sum() >= MIN_QUERIES}
    records: dict[str, PairComparison] = {}
    if tested:
        for r in compare_measures(tested, baseline=a, tests=(test,),
                                  alternative=alternative,  # type: ignore[arg-type]
                                  correction=correction, family="all",
                                  n_resamples=n_resamples, rng=seed):
            records[str(r.measure)] = replace(r, measure=str(m))
    rows = []
    bounds = difference_bounds(m)
    for s in order:
        va, vb = scores[a][members[s]], scores[b][members[s]]
        d = vb - va
        rec = records.get(s) or PairComparison(
            str(m), a, b, test, math.nan, math.nan, math.nan, correction, alternative,
            float(va.mean()), float(vb.mean()), float(d.mean()), math.nan, math.nan, math.nan,
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), int(d.size))
        verdict = verdicts([rec], alpha=alpha)[0]
        rows.append({
            "segment": s, "queries": rec.n, "mean_a": rec.mean_a, "mean_b": rec.mean_b,
            "mean_diff": rec.mean_diff,
            "ci_low": rec.ci_low if math.isnan(rec.ci_low) else max(rec.ci_low, bounds[0]),
            "ci_high": rec.ci_high if math.isnan(rec.ci_high) else min(rec.ci_high, bounds[1]),
            "statistic": rec.statistic, "pvalue": rec.pvalue,
            "pvalue_corrected": rec.pvalue_corrected, "wins": rec.wins, "ties": rec.ties,
            "losses": rec.losses, "outcome": verdict.outcome,
            "verdict": f"{column} = {s}: {verdict.text}"})
    columns = ["segment", "queries", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high",
               "statistic", "pvalue", "pvalue_corrected", "wins", "ties", "losses", "outcome",
               "verdict"]
    out = pd.DataFrame(rows, columns=columns)
    out.attrs["definition"] = res.definition(m)
    out.attrs["note"] = (
        f"{b} − {a} on {m}, paired on the queries both runs have a value for; "
        f"{len(tested)} segment(s) with at least {MIN_QUERIES} shared queries tested "
        f"({test}, {correction} correction over them); smaller segments: cannot tell")
    return out


# ----------------------------------------------------------------------------- efficiency


def latency_summary(metadata: QueryMetadata, *,
                    systems: Sequence[str] | None = None) -> pd.DataFrame:
    """Per system: timed queries, p50 / p95 / p99 / mean latency (ms) and queries per second.

    Percentiles use :func:`numpy.percentile` with ``method="linear"``
    (:data:`PERCENTILE_METHOD`, NumPy's default); ``qps = 1000 / mean`` is the
    throughput of one single-threaded worker (``inf`` for a mean of 0). QPS under
    concurrency differs, and no throughput number tells the tail: that is what the
    percentiles are for (:data:`LATENCY_DEFINITION`, also in ``attrs['definition']``).

    Parameters
    ----------
    metadata:
        Query metadata with latencies.
    systems:
        The systems to summarise, in this order (default: every system of the file, in
        order of first appearance). A system without latencies gets 0 queries and NaN.

    Examples
    --------
    >>> meta = read_metadata(b"query,latency_ms_a\\nq1,10\\nq2,20\\nq3,30\\nq4,40\\nq5,100\\n")
    >>> latency_summary(meta).round(2).to_dict("records")
    [{'system': 'a', 'queries': 5, 'p50': 30.0, 'p95': 88.0, 'p99': 97.6, 'mean': 40.0, \
'qps': 25.0}]
    """
    metadata = _check_metadata(metadata, "latency_summary")
    if isinstance(systems, str):
        raise invalid_parameter("systems", "latency_summary", "a sequence of system names",
                                systems, error=TypeError)
    names = list(metadata.systems if systems is None else systems)
    lat_s, lat_v = metadata.latency_systems, metadata.latency_values
    rows = []
    for s in names:  # a loop over systems; each is one vectorised percentile
        x = lat_v[lat_s == s]
        if x.size:
            p50, p95, p99 = np.percentile(x, [50, 95, 99], method=PERCENTILE_METHOD)
            mean = float(x.mean())
            qps = 1000.0 / mean if mean > 0 else math.inf
        else:
            p50 = p95 = p99 = mean = qps = math.nan
        rows.append({"system": s, "queries": int(x.size), "p50": float(p50),
                     "p95": float(p95), "p99": float(p99), "mean": mean, "qps": qps})
    out = pd.DataFrame(rows, columns=["system", "queries", "p50", "p95", "p99", "mean", "qps"])
    out.attrs["definition"] = LATENCY_DEFINITION
    return out


def efficiency_points(res: Evaluation, summary: pd.DataFrame, measure: str | Measure, *,
                      latency: str = "p95") -> pd.DataFrame:
    """Effectiveness and latency of each run that has both, for :func:`pareto_front`.

    Parameters
    ----------
    res:
        The evaluation; effectiveness is each run's mean of ``measure`` (its own queries,
        as :meth:`~ireval_core.evaluate.Evaluation.mean`).
    summary:
        :func:`latency_summary` of the runs.
    measure:
        An evaluated measure.
    latency:
        The latency statistic: one of :data:`LATENCY_STATISTICS`.

    Returns
    -------
    pandas.DataFrame
        Columns ``system, effectiveness, latency, queries`` (queries averaged by the mean)
        ``, timed`` (queries timed), in evaluation order, only runs with both numbers.
        ``attrs``: ``measure``, ``latency`` (the statistic), ``definition`` (of the
        measure), ``missing`` (runs without latencies, systems with latencies but not
        evaluated).

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}})
    >>> runs = [Run.from_dict({"q1": {"a": 1.0}}, name="x"),
    ...         Run.from_dict({"q1": {"b": 1.0}}, name="y")]
    >>> res = evaluate(qrels, runs, ["P@1"])
    >>> meta = read_metadata(b"query,latency_ms_x,latency_ms_z\\nq1,12,5\\n")
    >>> pts = efficiency_points(res, latency_summary(meta), "P@1", latency="mean")
    >>> pts.to_dict("list"), pts.attrs["missing"]
    ({'system': ['x'], 'effectiveness': [1.0], 'latency': [12.0], 'queries': [1], \
'timed': [1]}, {'no latency': ['y'], 'not evaluated': ['z']})
    """
    function = "efficiency_points"
    if latency not in LATENCY_STATISTICS:
        raise invalid_parameter("latency", function,
                                "one of " + ", ".join(map(repr, LATENCY_STATISTICS)), latency)
    need = {"system", "queries", latency}
    if not isinstance(summary, pd.DataFrame) or not need <= set(summary.columns):
        raise invalid_parameter("summary", function, "a latency_summary table", summary,
                                error=TypeError)
    m = parse_measures(measure)[0]
    if str(m) not in [str(x) for x in res.measures]:
        raise invalid_parameter("measure", function, "one of the evaluated measures ("
                                + ", ".join(str(x) for x in res.measures) + ")", str(m))
    timed = summary[(summary["queries"] > 0) & summary[latency].notna()].set_index("system")
    both = [s for s in res.systems if s in timed.index]
    out = pd.DataFrame({
        "system": both,
        "effectiveness": [res.mean(s, m) for s in both],
        "latency": [float(timed.loc[s, latency]) for s in both],
        "queries": [int(res.n_averaged.get((s, str(m)), 0)) for s in both],
        "timed": [int(timed.loc[s, "queries"]) for s in both],
    })
    out.attrs.update(measure=str(m), latency=latency, definition=res.definition(m),
                     missing={"no latency": [s for s in res.systems if s not in timed.index],
                              "not evaluated": [s for s in summary["system"]
                                                if s not in res.systems]})
    return out


def pareto_front(points: pd.DataFrame) -> pd.DataFrame:
    """The systems no other system beats on both effectiveness and latency.

    A system is dominated when another one is at least as effective **and** at least as
    fast, and strictly better on one of the two (higher effectiveness, lower latency).
    The front is every system not dominated; ties (the same point twice) are both kept.
    Rows with a NaN are left out.

    Parameters
    ----------
    points:
        Columns ``system, effectiveness, latency`` (e.g. :func:`efficiency_points`).

    Returns
    -------
    pandas.DataFrame
        The front's rows (all columns of ``points``), fastest first (then most effective).

    Examples
    --------
    >>> pts = pd.DataFrame({"system": ["fast", "good", "worse", "twin"],
    ...                     "effectiveness": [0.5, 0.8, 0.4, 0.8],
    ...                     "latency": [10.0, 90.0, 30.0, 90.0]})
    >>> pareto_front(pts)["system"].tolist()
    ['fast', 'good', 'twin']
    """
    need = ["system", "effectiveness", "latency"]
    if not isinstance(points, pd.DataFrame) or not set(need) <= set(points.columns):
        raise invalid_parameter("points", "pareto_front",
                                "a DataFrame with columns system, effectiveness, latency",
                                points if not isinstance(points, pd.DataFrame)
                                else list(points.columns), error=TypeError)
    e = points["effectiveness"].to_numpy(dtype=np.float64)
    t = points["latency"].to_numpy(dtype=np.float64)
    ok = ~(np.isnan(e) | np.isnan(t))
    e_, t_ = e[ok], t[ok]
    # dominated[i]: some j with e_j >= e_i, t_j <= t_i, and one of them strict
    no_worse = (e_[None, :] >= e_[:, None]) & (t_[None, :] <= t_[:, None])
    better = (e_[None, :] > e_[:, None]) | (t_[None, :] < t_[:, None])
    dominated = (no_worse & better).any(axis=1)
    front = points[ok][~dominated]
    order = np.lexsort((-front["effectiveness"].to_numpy(dtype=np.float64),
                        front["latency"].to_numpy(dtype=np.float64)))
    out = front.iloc[order].reset_index(drop=True)
    out.attrs = dict(points.attrs)
    return out


def front_sentence(points: pd.DataFrame, front: pd.DataFrame, *,
                   measure: str = "effectiveness", latency: str = "latency") -> str:
    """One plain-text sentence on the front: who is on it, and who beats each other run.

    Names are plain text (escape them for the output format).

    >>> pts = pd.DataFrame({"system": ["fast", "good", "worse"],
    ...                     "effectiveness": [0.5, 0.8, 0.4], "latency": [10.0, 90.0, 30.0]})
    >>> front_sentence(pts, pareto_front(pts), measure="nDCG@10", latency="p95")
    'On the Pareto front of nDCG@10 vs p95 latency: fast, good (no other run is at least as \
good on both and better on one). Dominated: worse (by fast).'
    """
    on = front["system"].tolist()
    if not on:
        return "No run has both an effectiveness and a latency: there is no front to draw."
    text = (f"On the Pareto front of {measure} vs {latency} latency: {', '.join(on)} (no other "
            "run is at least as good on both and better on one).")
    e = points["effectiveness"].to_numpy(dtype=np.float64)
    t = points["latency"].to_numpy(dtype=np.float64)
    names = points["system"].tolist()
    off = []
    for i, s in enumerate(names):  # a loop over systems, not queries
        if s in on or math.isnan(e[i]) or math.isnan(t[i]):
            continue
        by = [names[j] for j in range(len(names)) if names[j] in on and e[j] >= e[i]
              and t[j] <= t[i] and (e[j] > e[i] or t[j] < t[i])]
        off.append(f"{s} (by {', '.join(by)})")
    return text + (f" Dominated: {'; '.join(off)}." if off else "")
