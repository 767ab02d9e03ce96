"""Query metadata files: segments, traffic weights and per-system latencies, read.

:func:`read_metadata` reads one file into a :class:`QueryMetadata`; the analyses over
it (means by segment, weighted means, latency summaries) are in
:mod:`ireval_core.metadata`, which also re-exports both names.

File format
-----------
CSV, TSV (recognised by the content of the header row: the separator that splits it
into more fields) or Parquet (recognised by its magic bytes), plain or gzip-compressed,
with a header row. Text in UTF-8 (with or without a byte order mark), GB18030/GBK or
UTF-16 with a byte order mark (:mod:`~ireval_core.io.encoding`; the ``encoding`` warning
says which). Column names are matched case-insensitively:

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
(:class:`~ireval_core.errors.FormatError`) naming the file and line(s). Every such row
is found in one pass: the error names the first, counts them all and holds the first
:data:`~ireval_core.io.checks.MAX_PROBLEMS` (``problems``, ``report()``,
``problems_csv()``), as the run and qrels readers do.

Reading imports no scipy; pandas is imported here (``QueryMetadata.latency`` is a
DataFrame), so :mod:`ireval_core.io` loads this module only when one of its names is
used.

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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from io import StringIO
from types import MappingProxyType

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..data import read_only
from ..errors import DataWarning, FormatError, Problem, invalid_parameter, shorten
from .checks import MAX_PROBLEMS
from .columns import LATENCY, QUERY_ALIASES, SYSTEM_ALIASES, WEIGHT_ALIASES
from .delimited import read_header, read_text_columns
from .detect import METADATA_FORMATS, detect_format
from .encoding import decode_bom, encoding_warning, read_text
from .parquet import read_parquet_text
from .source import PathOrBytes, Source

__all__ = ["LATENCY", "NO_VALUE", "QUERY_ALIASES", "SYSTEM_ALIASES", "WEIGHT_ALIASES",
           "QueryMetadata", "check_column", "read_metadata", "segment_labels"]

NO_VALUE = "(no value)"
"""The segment of a query whose cell in the chosen column is empty."""




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
    warnings:
        What reading noticed without refusing the file: the ``encoding`` of a file
        that was not UTF-8 ("read as GB18030").
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
    warnings: tuple[DataWarning, ...] = ()
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
        check_column(self, column, "QueryMetadata.segment")
        return self.values[column]

    def segments(self, column: str) -> tuple[str, ...]:
        """The distinct values of ``column`` in order of first appearance (empty cells
        as :data:`NO_VALUE`, last)."""
        check_column(self, column, "QueryMetadata.segments")
        return segment_labels(self.values[column])

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


def check_column(metadata: QueryMetadata, column: str, function: str) -> None:
    """A ``ValueError`` unless ``column`` is a categorical column of ``metadata``."""
    if column not in metadata.columns:
        choices = ", ".join(map(repr, metadata.columns)) or "none in this file"
        raise invalid_parameter("column", function,
                                f"a categorical column of the metadata ({choices})", column)


def segment_labels(values: np.ndarray) -> tuple[str, ...]:
    """The distinct values in order of first appearance; :data:`NO_VALUE` last if any is empty."""
    missing = pd.isna(values)
    return tuple(pd.unique(values[~missing])) + ((NO_VALUE,) if missing.any() else ())


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

    def problem(self, message: str, i: int) -> Problem:
        """The problem of data row ``i``: at its line, with the line's text (Parquet: its
        row)."""
        if self.delimiter is None:  # Parquet: rows, no lines
            return Problem(self.src.name, None, f"row {i + 1}", message)
        lines, text = self._load()
        return Problem(self.src.name, lines[i], "", message, shorten(text[lines[i] - 1]))


class _Found:
    """The bad rows of one metadata file: the first :data:`MAX_PROBLEMS` kept, all
    counted; :meth:`raise_all` reports them at once."""

    def __init__(self, rows: _Rows) -> None:
        self.rows = rows
        self.kept: list[tuple[int, Problem]] = []
        self.bad: list[np.ndarray] = []
        self.count = 0

    def add(self, bad: np.ndarray, message: Callable[[int], str]) -> None:
        """A problem at each data row of ``bad`` (indices, ascending), worded by
        ``message(i)``."""
        self.count += len(bad)
        for i in bad[: max(MAX_PROBLEMS - len(self.kept), 0)].tolist():
            self.kept.append((int(i), self.rows.problem(message(int(i)), int(i))))
        self.bad.append(bad)

    def marked(self, n: int) -> np.ndarray:
        """Which of the ``n`` data rows have a problem so far (a boolean mask)."""
        mask = np.zeros(n, dtype=bool)
        for bad in self.bad:
            mask[bad] = True
        return mask

    def raise_all(self) -> None:
        """Raise every problem found, in file order (the checks' order within a row), or
        nothing when there is none."""
        if self.count:
            kept = [p for _, p in sorted(self.kept, key=lambda x: x[0])]  # stable sort
            raise FormatError.of(kept, count=self.count, shown=20)


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
    fmt = detect_format(src, METADATA_FORMATS, extensions=False)
    if fmt == "parquet":
        return _from_columns(*read_parquet_text(src), _Rows(src, None), src.name)
    text = decode_bom(src)
    if text is not src:  # UTF-16: the separator is found in the text
        fmt = detect_format(text, METADATA_FORMATS, extensions=False)
    delimiter = "\t" if fmt == "tsv" else ","

    def read(decoded: Source) -> QueryMetadata:
        header = read_header(decoded, delimiter)
        meta = _from_columns(header, read_text_columns(decoded, header, delimiter),
                             _Rows(decoded, delimiter), decoded.name)
        note = encoding_warning(decoded)
        return meta if note is None else replace(meta, warnings=(note,))

    return read_text(text, read, header=True)


def _text(values: pa.Array) -> np.ndarray:
    """Text cells as a writable object array of ``str``."""
    return np.array(values.to_numpy(zero_copy_only=False), dtype=object)


def _numbers(values: pa.Array, what: str, column: str, found: _Found) -> np.ndarray:
    """Text cells as floats (``NaN`` for an empty cell); every cell that is not a finite
    number >= 0 is a problem (and ``NaN``)."""
    text = pc.utf8_trim_whitespace(values)
    empty = np.asarray(pc.equal(text, "").to_numpy(zero_copy_only=False), dtype=bool)
    try:
        out = pc.cast(pc.if_else(pc.equal(text, ""), pa.scalar(None, pa.string()), text),
                      pa.float64()).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # some cell is not a number
        out = pd.to_numeric(pd.Series(_text(text)), errors="coerce").to_numpy(np.float64)
    out = np.array(out, dtype=np.float64)
    bad = np.flatnonzero((~np.isfinite(out) & ~empty) | (out < 0))
    if bad.size:
        need = "a weight >= 0" if what == "weight" else "a latency in ms >= 0"
        found.add(bad, lambda i: f"expected {need} in column {column!r}, got "
                                 f"{values[i].as_py()!r}")
        out[bad] = np.nan
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


def _duplicates(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows that repeat an earlier row's key (ascending), and the first row of each one's
    key."""
    _, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
    first_of = first[inverse]
    again = np.flatnonzero(first_of != np.arange(len(codes)))
    return again, first_of[again]


def _from_columns(header: list[str], columns: dict[str, pa.Array], rows: _Rows,
                  source: str) -> QueryMetadata:
    by_lower = {c.lower(): c for c in header}
    header_line = None if rows.delimiter is None else 1
    query_col = next((by_lower[a] for a in QUERY_ALIASES if a in by_lower), None)
    if query_col is None:
        raise FormatError(f"missing query column in header {shorten(repr(header))}; "
                          f"expected one of "
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
    found = _Found(rows)
    found.add(empty, lambda i: f"empty query id in column {query_col!r}")
    qids = _text(qid_cells)
    codes, n_queries = _codes(qid_cells)
    weights = (_numbers(columns[weight_cols[0]], "weight", weight_cols[0], found)
               if weight_cols else None)
    cats = {c: _labels(columns[c]) for c in categorical}

    if long_latency is not None and system_col is not None:
        return _long(qids, codes, cats, weights, weight_cols, columns[system_col], system_col,
                     _numbers(columns[long_latency], "latency", long_latency, found), found,
                     source)
    if n_queries != len(qids):
        again, first = _duplicates(codes)
        keep = ~np.isin(again, empty)  # an empty id is a problem already
        again, first = again[keep], first[keep]
        first_of = dict(zip(again.tolist(), first.tolist(), strict=True))
        found.add(again, lambda i: f"duplicate query {qids[i]!r} (first at "
                                   f"{rows.where(first_of[i])}); each query may appear once")
    lat_q: list[np.ndarray] = []
    lat_s: list[np.ndarray] = []
    lat_v: list[np.ndarray] = []
    for system, c in wide.items():
        v = _numbers(columns[c], "latency", c, found)
        ok = ~np.isnan(v)
        lat_q.append(qids[ok])
        lat_s.append(np.full(int(ok.sum()), system, dtype=object))
        lat_v.append(v[ok])
    found.raise_all()
    return _metadata(qids, cats, weights, weight_cols, lat_q, lat_s, lat_v,
                     "wide" if wide else "none", source)


def _long(qids: np.ndarray, codes: np.ndarray, cats: dict[str, np.ndarray],
          weights: np.ndarray | None, weight_cols: list[str], systems_text: pa.Array,
          system_col: str, latency: np.ndarray, found: _Found, source: str) -> QueryMetadata:
    """Long latencies: rows per (query, system), the query's metadata repeated on each.

    ``codes`` numbers the queries in order of first appearance (:func:`_codes`); the
    problems found are added to ``found`` and raised at the end, all at once.
    """
    rows = found.rows
    unread = found.marked(len(qids))  # rows whose weight or latency is not a number: not compared
    system_cells = pc.utf8_trim_whitespace(systems_text)
    systems = _text(system_cells)
    no_system = np.asarray(pc.equal(system_cells, "").to_numpy(zero_copy_only=False),
                           dtype=bool)
    orphan = np.flatnonzero(no_system & ~np.isnan(latency))
    found.add(orphan, lambda i: f"a latency without a system in column {system_col!r}; "
                                "name the run it was measured for")
    timed = ~no_system & (qids != "")  # an empty query id is a problem already
    system_codes, n_systems = _codes(system_cells)
    at = np.flatnonzero(timed)
    again, first = _duplicates((codes * (n_systems + 1) + system_codes)[timed])
    first_of = dict(zip(at[again].tolist(), at[first].tolist(), strict=True))
    found.add(at[again], lambda i: f"duplicate latency for query {qids[i]!r}, system "
                                   f"{systems[i]!r} (first at {rows.where(first_of[i])}); "
                                   "each (query, system) may appear once")
    # each query's metadata must be the same on all its rows: compare each row with the
    # first row of its query (vectorised over rows)
    first_of_query = np.unique(codes, return_index=True)[1]  # rows, in file order
    first_row = first_of_query[codes]  # the first row of each row's query
    for name, values in [*cats.items()] + ([(weight_cols[0], weights)] if weights is not None
                                           else []):
        firsts = values[first_row]
        missing, missing_first = pd.isna(values), pd.isna(firsts)
        differ = (missing != missing_first) | (~missing & (values != firsts))
        if values is weights:  # a weight that is not a number is a problem already
            differ &= ~unread & ~unread[first_row]

        def disagree(i: int, name: str = name, values: np.ndarray = values,
                     firsts: np.ndarray = firsts) -> str:
            return (f"query {qids[i]!r} has {name} {_cell(values[i])!r} here but "
                    f"{_cell(firsts[i])!r} at {rows.where(int(first_row[i]))}; a query's "
                    "metadata must be the same on all its rows")

        found.add(np.flatnonzero(differ), disagree)
    found.raise_all()
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
        queries=read_only(qids.astype(object)), columns=tuple(cats),
        value_columns=tuple(read_only(v) for v in cats.values()),
        weights=None if weights is None else read_only(weights),
        weight_column=weight_cols[0] if weight_cols else None,
        latency_queries=read_only(cat(lat_q, object)),
        latency_systems=read_only(cat(lat_s, object)),
        latency_values=read_only(cat(lat_v, np.float64)), layout=layout, source=source)
