"""Reading labeling files into :class:`~ireval_core.labels.judgments.Judgments`.

A labeling file has one row per labeled shown result: the round (month or date), the
query, the document, the 1-based position it was shown at and the label; optionally
the rater, the system (bucket, arm; one system ``"default"`` when absent), the model
score, the query's segment and its sampling weight. :func:`read_judgments` reads one
or several such files (rounds accumulate over files, and a file may hold several
rounds), :func:`judgments_from_frame` a DataFrame with the same columns, and
:func:`file_rounds` only the rounds a file holds. The rows become the tables of
integer codes of :mod:`ireval_core.labels.judgments` in named steps (no Python loop
over rows or queries; every check is a vectorised pass): each row on its own
(:func:`_read_rows`), then shown results, label rows, units and query groups, segments
and weights, one label per (unit, rater), and the sorted tables.

Rules (each broken rule is a :class:`~ireval_core.errors.FormatError` naming the
file and line, both lines when two rows disagree):

* a (round, system, query, document, rater) appears once ("duplicate row");
* a rater gives one label per (round, query, document): the same document shown by
  two systems may be listed under each, with the same label (or blank in all but one);
* a (round, system, query, document) has one position, and a position of a
  (round, system, query) holds one document;
* model score, segment and weight agree between the rows that repeat them; with a
  weight column every (round, system, query) needs a weight > 0;
* labels go through a :class:`~ireval_core.labels.labelmap.LabelMap`; an unknown
  label names the label and its first lines; an empty label is unlabeled, never 0.

>>> csv = (b"round,query,doc,position,label,rater\\n"
...        b"2026-05,q1,d1,1,high,ann\\n2026-05,q1,d1,1,mid,bob\\n")
>>> read_judgments(("may.csv", csv)).label_table()[["rater", "label"]].values.tolist()
[['ann', 3.0], ['bob', 2.0]]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import DataWarning, FormatError, Problem, Remedy, invalid_parameter
from ..escape import ESCAPED_COLUMN
from ..idcodes import dictionary_codes
from ..io import RawTable, SourceLike, read_table
from ..io import table_from_arrow as _table_from_arrow
from ..io.column_cache import ColumnCache
from ..io.columns import LABEL_ALIASES, REQUIRED_LABEL_COLUMNS
from ..io.guard import clean_errors
from ..params import InstanceOf, check
from .cache import (
    cached_judgments,
    judgments_key,
    judgments_key_of,
    path_stamps,
    store_judgments,
)
from .coding import group_rows, order_rows, run_codes, sorted_codes, time_order
from .judgments import CONFLICTS, DEFAULT_SYSTEM, Conflicts, Judgments
from .label_table import ordered_rounds
from .labelmap import LabelMap, detect_label_map

__all__ = ["ESCAPE_ALIASES", "LABEL_PROBLEMS_KEPT", "cached_read_judgments", "file_rounds",
           "judgments_from_frame", "read_judgments", "undo_export_escape"]

LABEL_PROBLEMS_KEPT = 10_000
"""The most problems one labeling error keeps (all are counted)."""


# ----------------------------------------------------------------------------- reading


def _is_one_source(sources: object) -> bool:
    if isinstance(sources, str | bytes | bytearray | memoryview) or hasattr(sources, "read"):
        return True
    from pathlib import Path

    if isinstance(sources, Path):
        return True
    return (isinstance(sources, tuple) and len(sources) == 2 and isinstance(sources[0], str)
            and isinstance(sources[1], bytes | bytearray | memoryview))


@clean_errors
def read_judgments(sources: SourceLike | Sequence[SourceLike], *,
                   label_map: LabelMap | str | None = None,
                   sheet: str | None = None, conflicts: Conflicts = "refuse",
                   round: str | None = None, cache: ColumnCache | None = None) -> Judgments:
    """Read one or several labeling files (CSV, TSV, Excel ``.xlsx``, Parquet), or the
    exports of labeling tools (Label Studio's JSON, Quepid's ratings CSV).

    Text files may be UTF-8 (with or without a byte order mark), GB18030/GBK or UTF-16
    with a byte order mark; a file that was not UTF-8 leaves an ``encoding`` warning in
    :attr:`Judgments.warnings` ("read as GB18030 ..."). A Label Studio export is read one
    row per annotation, its rater the annotator (``completed_by``); a Quepid export one
    row per rating, with the rater of a book export's column
    (:mod:`ireval_core.io.labelstudio`, :mod:`ireval_core.io.quepid`).

    Parameters
    ----------
    sources:
        One input or a list of them: a path, bytes, a binary file object or
        ``(name, bytes)`` (an upload); gzip is detected. Rounds accumulate.
    label_map:
        A :class:`~ireval_core.labels.labelmap.LabelMap`, its text
        (``"none=0,low=1,mid=2,high=3"``) or the name of a built-in map; ``None``
        picks the built-in map knowing every label of all the files (numbers: as they
        are).
    sheet:
        Excel: the sheet to read in each workbook, by name, even a hidden one (with a
        ``hidden-sheet`` warning in :attr:`Judgments.warnings`). By default every
        visible sheet with the labeling columns is read, and hidden sheets are not.
    conflicts:
        What to do when one rater labels one document differently in several systems'
        lists of a round (:data:`~ireval_core.labels.judgments.CONFLICT_RULES`):
        ``"refuse"`` (default: the files are an error that counts and lists every such
        label), one label per (round, query, document, rater) by ``"mean"`` or
        ``"latest"`` (the label on the last row), or ``"separate"``: each system's list
        counts as a separate rater. The rule is kept
        (:attr:`Judgments.conflicts`) and stated next to the numbers
        (:attr:`Judgments.conflict_note`).
    round:
        The round of a labeling tool's export that names none (Quepid's, Label Studio
        tasks without a round key), e.g. ``"2026-05"``; files with a round column keep
        theirs.
    cache:
        A :class:`~ireval_core.io.column_cache.ColumnCache`: files (paths, bytes,
        ``(name, bytes)``) read before under the same rule are mapped from it instead of
        read (the same arrays, bit for bit; :mod:`.cache`), and a new read is stored in it.

    Raises
    ------
    FormatError
        With the file and line (Excel: sheet and row) for every rule of the module
        docstring. Every problem found is reported at once: the error names the first,
        counts them all, and holds them (``problems``, ``report()``,
        ``problems_csv()``; at most :data:`LABEL_PROBLEMS_KEPT`). Checks that need the
        rows' positions, ids and labels to be sound run once those are.
    """
    if _is_one_source(sources):
        sources = [sources]  # type: ignore[list-item]
    sources = list(sources)  # type: ignore[arg-type]
    if not sources:
        raise invalid_parameter("sources", "read_judgments", "at least one file", sources)
    if sheet is not None and not isinstance(sheet, str):
        raise invalid_parameter("sheet", "read_judgments", "a sheet name (str) or None", sheet,
                                error=TypeError)
    check(conflicts, "conflicts", "read_judgments", CONFLICTS)
    check(round, "round", "read_judgments", (None, InstanceOf(str, "a round name (str)")))
    stamps = path_stamps(sources)
    key = None if cache is None else _cache_key(cache, sources, label_map, sheet, conflicts,
                                                round)
    if cache is not None and key is not None:
        hit = cached_judgments(cache, key)
        if hit is not None:
            return hit
    tables = [_read_file(s, sheet, round) for s in sources]
    judgments = _from_tables(tables, label_map, conflicts)
    if key is not None and cache is not None and path_stamps(sources) == stamps:
        store_judgments(cache, key, judgments)  # not a file changed while it was read
    return judgments


ESCAPE_ALIASES = {"escaped": (ESCAPED_COLUMN,)}
"""The column that marks ireval's own export, as a reader's aliases take it (added to a
reader's columns for :func:`undo_export_escape`)."""

_FILE_ALIASES = {**LABEL_ALIASES, **ESCAPE_ALIASES}
"""The labeling columns, and the column that marks ireval's own export."""


def _read_file(source: SourceLike, sheet: str | None, round: str | None) -> RawTable:
    """One labeling file's columns (:func:`~ireval_core.io.read_table`), ireval's own
    escape undone (:func:`undo_export_escape`)."""
    return undo_export_escape(read_table(source, _FILE_ALIASES, required=REQUIRED_LABEL_COLUMNS,
                                 numeric=("position", "score", "weight"), sheet=sheet,
                                 tools=True, round=round))


def undo_export_escape(raw: RawTable) -> RawTable:
    """``raw`` as ireval exported it: a file with the column
    :data:`~ireval_core.escape.ESCAPED_COLUMN` is ireval's export
    (:func:`~ireval_core.escape.csv_frame_marked`), and each text cell its row lists there
    loses the leading ``'`` the export added (:func:`~ireval_core.escape.undo_marked`,
    vectorised); a cell not listed, or any cell of another file, is left as it is (an id
    that really begins with ``'`` included). The marking column itself is dropped."""
    marks = raw.columns.get("escaped")
    if marks is None:
        return raw
    marks = marks.cast(pa.string()) if not pa.types.is_string(marks.type) else marks
    columns = {k: v for k, v in raw.columns.items() if k != "escaped"}
    for key, col in columns.items():
        coded = pa.types.is_dictionary(col.type)
        text = col.cast(pa.string()) if coded else col
        if not (pa.types.is_string(text.type) or pa.types.is_large_string(text.type)):
            continue
        header = re.escape(raw.names.get(key, key))
        listed = pc.match_substring_regex(marks, rf"(^|\s){header}(\s|$)")
        hit = pc.fill_null(pc.and_(listed, pc.starts_with(text, "'")), False)
        if pc.any(hit).as_py():
            plain = pc.if_else(hit, pc.utf8_slice_codeunits(text, 1), text)
            columns[key] = plain.dictionary_encode() if coded else plain
    return replace(raw, columns=columns, _text={})


def cached_read_judgments(cache: ColumnCache, named: Sequence[tuple[str, str]], *,
                          label_map: LabelMap | str | None = None, sheet: str | None = None,
                          conflicts: Conflicts = "refuse", round: str | None = None
                          ) -> Judgments | None:
    """What :func:`read_judgments` of files named ``name`` whose bytes have these
    SHA-256 (``named``: ``(name, SHA-256 hex)`` in order) returns under this rule, when
    ``cache`` holds it; else ``None`` (and the caller reads the bytes). Files kept
    elsewhere (a workspace stores them by their SHA-256) are then not read at all."""
    try:
        the_map = _as_map(label_map)
    except (ValueError, TypeError):
        return None
    key = judgments_key_of(named, label_map=the_map, sheet=sheet, conflicts=conflicts,
                           round=round)
    return cached_judgments(cache, key)


def _cache_key(cache: ColumnCache, sources: Sequence[object], label_map: LabelMap | str | None,
               sheet: str | None, conflicts: str, round: str | None) -> str | None:
    """The cache entry of the files read under this rule (:func:`~.cache.judgments_key`);
    ``None`` for a label map that cannot be read (the read then says why, after the
    files' own errors)."""
    try:
        the_map = _as_map(label_map)
    except (ValueError, TypeError):
        return None
    return judgments_key(cache, sources, label_map=the_map, sheet=sheet, conflicts=conflicts,
                         round=round)


@clean_errors
def file_rounds(source: SourceLike, *, sheet: str | None = None,
                round: str | None = None) -> tuple[tuple[str, ...], int]:
    """The rounds one labeling file holds (in time order) and its rows, read without
    checking its labels: what a saved set records for each of its files.

    >>> file_rounds(("m.csv", b"round,query,doc,position,label\\n2026-06,q,a,1,1\\n"
    ...                        b"2026-05,q,a,1,2\\n2026-06,q,b,2,\\n"))
    (('2026-05', '2026-06'), 3)
    """
    raw = _read_file(source, sheet, round)
    names = pc.unique(raw.text("round").cast(pa.string())).to_pylist()
    return tuple(ordered_rounds([str(n) for n in names if n is not None])), raw.n_rows



def judgments_from_frame(frame: pd.DataFrame, *, label_map: LabelMap | str | None = None,
                         source: str = "frame", conflicts: Conflicts = "refuse") -> Judgments:
    """Judgments from a DataFrame with the columns of a labeling file (any alias).

    Rows are named ``row N`` (1-based) in messages; ``label_map`` and ``conflicts`` as
    in :func:`read_judgments`.

    >>> df = pd.DataFrame({"month": ["2026-05"] * 2, "query": ["q1", "q1"],
    ...                    "doc": ["a", "b"], "rank": [1, 2], "grade": [2, None]})
    >>> judgments_from_frame(df).round("2026-05").to_qrels().to_dict()
    {'q1': {'a': 2.0}}
    """
    check(frame, "frame", "judgments_from_frame", InstanceOf(pd.DataFrame,
                                                             "a pandas DataFrame"))
    check(conflicts, "conflicts", "judgments_from_frame", CONFLICTS)
    table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
    raw = _table_from_arrow(table, source, LABEL_ALIASES, required=REQUIRED_LABEL_COLUMNS)
    return _from_tables([raw], label_map, conflicts)


def _as_map(label_map: LabelMap | str | None) -> LabelMap | None:
    if label_map is None or isinstance(label_map, LabelMap):
        return label_map
    if isinstance(label_map, str):
        return LabelMap.parse(label_map)
    raise invalid_parameter("label_map", "read_judgments", "a LabelMap, its text or None",
                            label_map, error=TypeError)


def _concat_text(tables: Sequence[RawTable], key: str, default: str) -> pa.ChunkedArray:
    cols = [t.text(key) if key in t.columns else
            pa.chunked_array([pa.array(np.full(t.n_rows, default, dtype=object), pa.string())])
            for t in tables]
    if len(cols) == 1:
        return cols[0]
    types = {c.type for c in cols}
    if len(types) > 1:
        cols = [c.cast(pa.string()) for c in cols]
    return pa.chunked_array([ch for c in cols for ch in c.chunks], type=cols[0].type)


class _Found:
    """The problems of the files being read: kept (up to :data:`LABEL_PROBLEMS_KEPT`)
    with their row, all counted; :meth:`raise_all` reports them at once."""

    def __init__(self, origin: _Origin) -> None:
        self.origin = origin
        self.kept: list[tuple[int, Problem]] = []
        self.count = 0
        self.conflicts = 0
        self.remedies: dict[str, Remedy] = {}  # by parameter: what the caller can set
        self.flagged = np.zeros(int(origin.starts[-1]), dtype=bool)  # rows with a problem

    def add(self, row: int, message: str) -> None:
        self.count += 1
        if 0 <= row < len(self.flagged):
            self.flagged[row] = True
        if len(self.kept) < LABEL_PROBLEMS_KEPT:
            self.kept.append(self.origin.problem(row, message))

    def rows(self, rows: np.ndarray, message: Callable[[int], str]) -> None:
        """A problem at each of ``rows``, worded by ``message(row)``, in file order."""
        rows = np.sort(rows)
        self.flagged[rows] = True
        room = max(LABEL_PROBLEMS_KEPT - len(self.kept), 0)
        self.origin.warm(rows[:room])
        for row in rows[:room]:
            self.kept.append(self.origin.problem(int(row), message(int(row))))
        self.count += len(rows)

    def take(self, error: FormatError) -> None:
        """The problems of an error raised by a check that cannot go on (a column holding
        a control character): kept with the others, then all raised."""
        for p in error.problems:
            self.count += 1
            if len(self.kept) < LABEL_PROBLEMS_KEPT:
                self.kept.append((-1, p))
        self.raise_all()

    def raise_all(self) -> None:
        """Raise the problems found so far (nothing when there is none): in the order the
        checks run, so that the first is the one a reader stopping at the first problem
        would name; by line within a check."""
        if not self.count:
            return
        hint = None
        remedies = list(self.remedies.values())
        if self.conflicts:
            remedies.append(Remedy("conflicts", choices=("mean", "latest", "separate"),
                                   count=self.conflicts))
            hint = "; ".join([r.python() for r in remedies[:-1]] + [
                f"{self.conflicts} of these: one rater's different labels of a document "
                "shown in several systems' lists. Choose what they become: "
                "conflicts='mean' (the rater's mean), 'latest' (the label on the last "
                "row) or 'separate' (each system's list counts as a separate rater)"])
        raise FormatError.of([p for _, p in self.kept], count=self.count, hint=hint,
                             conflicts=self.conflicts, remedies=remedies)


def _labels(tables: Sequence[RawTable], origin: _Origin, label_map: LabelMap | None,
            found: _Found) -> tuple[np.ndarray, LabelMap]:
    """Grades of every row, mapping each file's distinct label texts once; each unknown
    label is a problem (naming its first lines), its rows NaN."""
    parts = []
    for t in tables:
        try:
            labels = t.text("label")
        except FormatError as exc:  # a control character: the column cannot be used
            found.take(exc)
            raise  # pragma: no cover - take() raised
        codes, dictionary = dictionary_codes(labels)
        parts.append((codes, [str(x) for x in dictionary.to_pylist()]))
    if label_map is None:
        label_map = detect_label_map(x for _, d in parts for x in d)
    hint = ("labels must be numbers >= 0" if label_map.numeric else
            f"the label map {label_map.name!r} knows {label_map.describe()}")
    out = []
    for t_index, (codes, distinct) in enumerate(parts):
        unknown = set(label_map.unknown(distinct))
        grades = label_map.apply(["" if d in unknown else d for d in distinct])
        for i, word in enumerate(distinct):
            if word in unknown:
                rows = np.flatnonzero(codes == i)[:3] + origin.starts[t_index]
                found.add(int(rows[0]), f"unknown label {word!r} at {origin.lines(rows)}; "
                          f"{hint}")
                found.remedies["label_map"] = Remedy("label_map",
                                                     "none=0,low=1,mid=2,high=3")
        out.append(grades[codes] if len(codes) else np.zeros(0))
    return np.concatenate(out) if out else np.zeros(0), label_map


def _numbers(tables: Sequence[RawTable], key: str, what: str, origin: _Origin,
             found: _Found) -> tuple[np.ndarray | None, np.ndarray]:
    """Column ``key`` of every file as numbers (NaN: empty, or not a number: a problem
    each), and where a cell was not a number."""
    if not any(key in t.columns for t in tables):
        return None, np.zeros(0, dtype=np.int64)
    parts, wrong = [], []
    for t, start in zip(tables, origin.starts, strict=False):
        if key not in t.columns:
            parts.append(np.full(t.n_rows, np.nan))
            continue
        problems: list[tuple[int, Problem]] = []
        parts.append(t.numbers(key, what, problems))
        for row, problem in problems:
            found.count += 1
            found.flagged[int(start) + row] = True
            wrong.append(int(start) + row)
            if len(found.kept) < LABEL_PROBLEMS_KEPT:
                found.kept.append((int(start) + row, problem))
    return np.concatenate(parts), np.asarray(wrong, dtype=np.int64)


def _conflicts_among(rows: np.ndarray, r: tuple[np.ndarray, int], s: tuple[np.ndarray, int],
                     q: tuple[np.ndarray, int], d: tuple[np.ndarray, int],
                     t: tuple[np.ndarray, int], label: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """Among ``rows`` (the rows without another problem): one rater's different labels of
    a (round, query, document) in several systems' lists, as the full check finds them
    on sound files (a row repeating a (shown result, rater) is a duplicate, not a
    conflict): (rows, the earlier row each disagrees with), both in file order."""
    def sub(part: tuple[np.ndarray, int]) -> tuple[np.ndarray, int]:
        return np.asarray(part[0])[rows], part[1]

    shown, n_shown, _ = group_rows(sub(r), sub(s), sub(q), sub(d))
    _, _, lab_first = group_rows((shown, n_shown), sub(t))
    unit, n_unit, _ = group_rows(sub(r), sub(q), sub(d))
    ur, n_ur, _ = group_rows((unit, n_unit), sub(t))
    once = np.zeros(len(rows), dtype=bool)
    once[lab_first] = True
    value = label[rows]
    found, other = _disagreements(ur, np.isfinite(value) & once, value, n_ur)
    return rows[found], rows[other]


def _disagreements(group: np.ndarray, given: np.ndarray, values: np.ndarray, n_groups: int
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Per group whose given values differ: the first row disagreeing with the group's
    first given row, and that first row (both ascending by group)."""
    rows = np.flatnonzero(given)
    kept = np.zeros(n_groups)  # a value of each group (the last given): all agree, mostly
    kept[group[rows]] = values[rows]
    if not len(rows) or bool((kept[group[rows]] == values[rows]).all()):
        return rows[:0], rows[:0]
    first = np.full(n_groups, -1, dtype=np.int64)
    groups, at = np.unique(group[rows], return_index=True)
    first[groups] = rows[at]
    differ = rows[values[rows] != values[first[group[rows]]]]
    if not len(differ):
        return differ, differ
    groups, at = np.unique(group[differ], return_index=True)
    return differ[at], first[groups]


def _by_system(tc: np.ndarray, raters: np.ndarray, sc: np.ndarray, systems: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """Rater codes and names when each system's list is a rater of its own:
    ``ann (A)``, or ``(A)`` without a rater column; names sorted."""
    pair = tc.astype(np.int64) * len(systems) + sc
    uniq, inverse = np.unique(pair, return_inverse=True)
    names = np.asarray([f"{raters[p // len(systems)]} ({systems[p % len(systems)]})".lstrip()
                        for p in uniq], dtype=object)
    order = np.argsort(names.astype(str), kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[inverse].astype(np.int32), names[order]


# ----------------------------------------------------------------------------- where rows came from


class _Origin:
    """Where every row of the concatenated input came from (for messages)."""

    def __init__(self, tables: Sequence[RawTable]) -> None:
        self.tables = list(tables)
        self.starts = np.concatenate(([0], np.cumsum([t.n_rows for t in tables])))

    def locate(self, row: int) -> tuple[RawTable, int]:
        i = int(np.searchsorted(self.starts, row, side="right")) - 1
        return self.tables[i], int(row - self.starts[i])

    def at(self, row: int, *, relative_to: int | None = None) -> str:
        """``line 5`` within the same file as ``relative_to``, else ``file:5``."""
        table, local = self.locate(row)
        if relative_to is not None and self.locate(relative_to)[0] is table:
            return table.short(local)
        return table.location(local)

    def lines(self, rows: np.ndarray) -> str:
        """``lines 4, 9, 12`` (or sheet rows) of a few rows of one file."""
        table = self.locate(int(rows[0]))[0]
        parts = [table.short(self.locate(int(r))[1]) for r in rows]
        for word, plural in (("line ", "lines "), ("row ", "rows ")):
            heads = {p.rpartition(word)[0] for p in parts}
            if len(heads) == 1 and all(word in p for p in parts):  # one file, one sheet
                nums = [p.rpartition(word)[2] for p in parts]
                return (word if len(nums) == 1 else plural) + ", ".join(nums)
        return "; ".join(parts)

    def error(self, row: int, message: str) -> FormatError:
        table, local = self.locate(row)
        return table.error(local, message)

    def problem(self, row: int, message: str) -> tuple[int, Problem]:
        """``(row, the problem there)``, to be sorted with the others by row."""
        table, local = self.locate(row)
        return row, table.problem(local, message)

    def warm(self, rows: np.ndarray) -> None:
        """Find the lines of ``rows`` in one pass per file (before naming them one by one:
        a CSV file's lines are found by reading it up to the last row asked)."""
        if len(rows):
            for i, table in enumerate(self.tables):
                mine = rows[(rows >= self.starts[i]) & (rows < self.starts[i + 1])]
                if len(mine):
                    table.where(int(mine.max() - self.starts[i]))


# ----------------------------------------------------------------------------- the rows, coded


@dataclass
class _Rows:
    """Every row of the files on its own: labels, ids coded (``rc`` into ``rounds``, ...)
    and numbers, with the problems found so far; what the later steps check and build on."""

    tables: Sequence[RawTable]
    origin: _Origin
    found: _Found
    name_of: dict[str, str]  # a column's name in the first file
    has: dict[str, bool]  # which columns some file has
    label: np.ndarray
    label_map: LabelMap
    rc: np.ndarray
    rounds: np.ndarray
    qc: np.ndarray
    queries: np.ndarray
    dc: np.ndarray
    docs: pa.Array
    tc: np.ndarray
    raters: np.ndarray
    sc: np.ndarray
    systems: np.ndarray
    gc: np.ndarray
    segments: np.ndarray
    position: np.ndarray
    score: np.ndarray | None
    weight: np.ndarray | None

    @property
    def n(self) -> int:
        return int(self.origin.starts[-1])

    def what(self, row: int) -> str:
        """The shown result of ``row`` in words."""
        return (f"round {self.rounds[self.rc[row]]!r}, system {self.systems[self.sc[row]]!r}, "
                f"query {self.queries[self.qc[row]]!r}, document "
                f"{self.docs[int(self.dc[row])].as_py()!r}")

    def query_of(self, row: int) -> str:
        """The (round, system, query) of ``row`` in words."""
        return (f"query {self.queries[self.qc[row]]!r} (round {self.rounds[self.rc[row]]!r}, "
                f"system {self.systems[self.sc[row]]!r})")

    def conflict(self, row: int, other: int) -> str:
        """One rater's label at ``row`` differing from theirs at ``other``, in words."""
        who = f"rater {self.raters[self.tc[row]]!r}" if self.has["rater"] else "the file"
        return (f"{who} labels query {self.queries[self.qc[row]]!r}, document "
                f"{self.docs[int(self.dc[row])].as_py()!r} of round "
                f"{self.rounds[self.rc[row]]!r} {self.label[row]:g} here and "
                f"{self.label[other]:g} at {self.origin.at(other, relative_to=row)}; one label "
                "per (round, query, document, rater)")


def _coded_ids(tables: Sequence[RawTable], found: _Found, name_of: dict[str, str]
               ) -> dict[str, tuple[np.ndarray, np.ndarray | pa.Array]]:
    """The id columns as codes into their names (rounds in time order, the rest sorted,
    documents in order of first appearance); an empty id is a problem of its row."""

    def text(key: str, default: str) -> pa.ChunkedArray:
        try:
            return _concat_text(tables, key, default)
        except FormatError as exc:  # a control character: the column cannot be used
            found.take(exc)
            raise  # pragma: no cover - take() raised

    def codes(key: str, default: str, what: str, *, allow_empty: bool
              ) -> tuple[np.ndarray, np.ndarray]:
        c, names = sorted_codes(text(key, default))
        if not allow_empty and len(names) and names[0] == "":
            found.rows(np.flatnonzero(c == 0),
                       lambda row: f"empty {what} in column {name_of[key]!r}")
        return c, names

    out: dict[str, tuple[np.ndarray, np.ndarray | pa.Array]] = {}
    out["round"] = time_order(*codes("round", "", "round", allow_empty=False))
    out["query"] = codes("query", "", "query id", allow_empty=False)
    dc, docs = run_codes(text("doc", ""))
    if len(docs) and pc.any(pc.equal(docs, "")).as_py():
        empty_doc = int(np.flatnonzero(np.asarray(pc.equal(docs, "")))[0])
        found.rows(np.flatnonzero(dc == empty_doc),
                   lambda row: f"empty document id in column {name_of['doc']!r}")
    out["doc"] = dc, docs
    out["rater"] = codes("rater", "", "rater", allow_empty=True)
    out["system"] = codes("system", DEFAULT_SYSTEM, "system", allow_empty=False)
    out["segment"] = codes("segment", "", "segment", allow_empty=True)
    return out


def _checked_numbers(tables: Sequence[RawTable], origin: _Origin, found: _Found,
                     name_of: dict[str, str], has: dict[str, bool]
                     ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Position, model score and weight of every row (score, weight: None without the
    column; an all-empty weight column counts as none, ``has["weight"]`` set False): a
    position is an int >= 1, a score finite, a weight > 0, else a problem of the row."""
    position, wrong = _numbers(tables, "position", "position", origin, found)
    if position is None:  # pragma: no cover - a required column, checked by read_table
        raise tables[0].header_error("missing the position column")
    bad = ~(np.isfinite(position) & (position >= 1) & (position == np.floor(position))
            & (position < 2**31))
    bad[wrong] = False  # named already: not a number

    def bad_position(row: int) -> str:
        t, local = origin.locate(row)
        shown = t.text("position")[local].as_py()
        return (f"expected a position (an int >= 1) in column {name_of['position']!r}, "
                f"got {shown!r}")

    found.rows(np.flatnonzero(bad), bad_position)
    score, _ = _numbers(tables, "score", "score", origin, found)
    if score is not None:
        found.rows(np.flatnonzero(np.isinf(score)), lambda row: "expected a finite model score")
    weight, _ = _numbers(tables, "weight", "weight", origin, found)
    if weight is not None and np.isnan(weight).all():  # an empty weight column: no weights
        weight = None
        has["weight"] = False
    if weight is not None:
        w = weight
        bad = ~np.isnan(w) & ~(np.isfinite(w) & (w > 0))
        found.rows(np.flatnonzero(bad), lambda row: f"expected a weight > 0 in column "
                   f"{name_of['weight']!r}, got {w[row]:g}")
    return position, score, weight


def _read_rows(tables: Sequence[RawTable], label_map: LabelMap | str | None) -> _Rows:
    """Step 1: each row on its own (labels, ids, numbers), its problems found."""
    origin = _Origin(tables)
    name_of = {k: tables[0].header_name(k) for k in LABEL_ALIASES}
    if int(origin.starts[-1]) == 0:
        raise tables[0].error(None, "no rows below the header; expected labeled results")
    found = _Found(origin)
    label, lm = _labels(tables, origin, _as_map(label_map), found)
    ids = _coded_ids(tables, found, name_of)
    has = {k: any(k in t.columns for t in tables) for k in LABEL_ALIASES}
    position, score, weight = _checked_numbers(tables, origin, found, name_of, has)
    return _Rows(
        tables=tables, origin=origin, found=found, name_of=name_of, has=has, label=label,
        label_map=lm, rc=ids["round"][0], rounds=cast(np.ndarray, ids["round"][1]),
        qc=ids["query"][0], queries=cast(np.ndarray, ids["query"][1]),
        dc=ids["doc"][0], docs=cast(pa.Array, ids["doc"][1]),
        tc=ids["rater"][0], raters=cast(np.ndarray, ids["rater"][1]),
        sc=ids["system"][0], systems=cast(np.ndarray, ids["system"][1]),
        gc=ids["segment"][0], segments=cast(np.ndarray, ids["segment"][1]),
        position=position, score=score, weight=weight)


def _refuse_conflicts_of_sound_rows(rows: _Rows) -> None:
    """Step 2 when other problems were found and conflicts are refused: the conflicts
    among the rows without a problem, listed with those problems at once."""
    found = rows.found
    ok = np.flatnonzero(~found.flagged)
    conflict, others = _conflicts_among(
        ok, (rows.rc, len(rows.rounds)), (rows.sc, len(rows.systems)),
        (rows.qc, len(rows.queries)), (rows.dc, len(rows.docs)), (rows.tc, len(rows.raters)),
        rows.label)
    other_of = dict(zip(conflict.tolist(), others.tolist(), strict=True))
    found.conflicts = len(conflict)
    found.rows(conflict, lambda row: rows.conflict(row, other_of[row]))


# ----------------------------------------------------------------------------- the tables


@dataclass
class _Shown:
    """Shown results, one per (round, system, query, document): the shown result of each
    row (``imp``), their number, the first row of each, its position and model score."""

    imp: np.ndarray
    n: int
    first: np.ndarray
    position: np.ndarray
    score: np.ndarray


def _shown_results(rows: _Rows) -> _Shown:
    """Step 3: the shown results; a shown result has one position (and model score), a
    position of a (round, system, query) holds one document."""
    nr, ns, nq, nd = len(rows.rounds), len(rows.systems), len(rows.queries), len(rows.docs)
    found, origin, position = rows.found, rows.origin, rows.position
    imp, n_imp, imp_first = group_rows((rows.rc, nr), (rows.sc, ns), (rows.qc, nq), (rows.dc, nd))
    pos_imp = position[imp_first]
    moved = np.flatnonzero(position != pos_imp[imp])
    found.rows(moved, lambda row: (
        f"{rows.what(row)} is at position {position[row]:g} here and at position "
        f"{pos_imp[imp[row]]:g} at {origin.at(int(imp_first[imp[row]]), relative_to=row)}"
        "; a shown result has one position"))
    slot, n_slot, slot_first = group_rows(
        (rows.rc[imp_first], nr), (rows.sc[imp_first], ns), (rows.qc[imp_first], nq),
        (pos_imp.astype(np.int64), int(pos_imp.max()) + 1))
    if n_slot < n_imp:
        is_first = np.zeros(n_imp, dtype=bool)
        is_first[slot_first] = True
        second = np.flatnonzero(~is_first)
        second = second[np.argsort(imp_first[second], kind="stable")]
        other_of = dict(zip(imp_first[second].tolist(),
                            imp_first[slot_first[slot[second]]].tolist(), strict=True))

        def two_documents(row: int) -> str:
            other = other_of[row]
            return (f"position {position[row]:g} of {rows.query_of(row)} holds two documents: "
                    f"{rows.docs[int(rows.dc[other])].as_py()!r} at "
                    f"{origin.at(other, relative_to=row)} and "
                    f"{rows.docs[int(rows.dc[row])].as_py()!r} here")

        found.rows(imp_first[second], two_documents)
    score_imp = np.full(n_imp, np.nan)
    if rows.score is not None:
        score = rows.score
        fin = np.isfinite(score)
        score_imp[imp[fin]] = score[fin]
        differ, others = _disagreements(imp, fin, score, n_imp)
        score_other = dict(zip(differ.tolist(), others.tolist(), strict=True))
        found.rows(differ, lambda row: (
            f"{rows.what(row)} has model score {score[row]:g} here and "
            f"{score[score_other[row]]:g} at {origin.at(score_other[row], relative_to=row)}"))
    return _Shown(imp, n_imp, imp_first, pos_imp, score_imp)


@dataclass
class _Keys:
    """The groups the tables are made of, at the level of shown results (``*_imp``) or
    rows: label rows (shown result, rater), units (round, query, document), query groups
    (round, system, query), and (unit, rater) with the conflicts between systems' lists."""

    lab: np.ndarray
    n_lab: int
    lab_first: np.ndarray
    unit_imp: np.ndarray
    n_unit: int
    unit_first_imp: np.ndarray
    grp_imp: np.ndarray
    n_grp: int
    grp_first_imp: np.ndarray
    ur: np.ndarray
    n_ur: int
    ur_first: np.ndarray
    conflict_rows: np.ndarray
    n_shown: int

    def unit_raters(self, shown: _Shown, codes: np.ndarray, n_codes: int, *, as_read: bool
                    ) -> tuple[np.ndarray, int, np.ndarray]:
        """(unit, rater) of every row: group ids, their number, the first row of each."""
        if self.n_unit == self.n_shown and as_read:  # no document shown twice: (shown, rater)
            return self.lab, self.n_lab, self.lab_first
        ur_lab, n_ur, ur_first_lab = group_rows((self.unit_imp[shown.imp[self.lab_first]],
                                             self.n_unit), (codes[self.lab_first], n_codes))
        return ur_lab[self.lab], n_ur, self.lab_first[ur_first_lab]


def _keys(rows: _Rows, shown: _Shown, conflicts: Conflicts) -> _Keys:
    """Step 4: label rows (a (shown result, rater) appears once), units and query groups,
    and one rater's labels of a unit in several systems' lists (refused unless
    ``conflicts`` resolves them)."""
    found, origin, n = rows.found, rows.origin, rows.n
    nr, ns, nq, nd = len(rows.rounds), len(rows.systems), len(rows.queries), len(rows.docs)
    lab, n_lab, lab_first = group_rows((shown.imp, shown.n), (rows.tc, len(rows.raters)))
    if n_lab < n:
        is_first = np.zeros(n, dtype=bool)
        is_first[lab_first] = True
        fix = "" if rows.has["rater"] else "; with several raters, add a rater column"
        found.rows(np.flatnonzero(~is_first), lambda row: (
            f"duplicate row for "
            f"{f'rater {rows.raters[rows.tc[row]]!r}, ' if rows.has['rater'] else ''}"
            f"{rows.what(row)} (first at "
            f"{origin.at(int(lab_first[lab[row]]), relative_to=row)}){fix}"))
    r_i, s_i, q_i = rows.rc[shown.first], rows.sc[shown.first], rows.qc[shown.first]
    unit_imp, n_unit, unit_first_imp = group_rows((r_i, nr), (q_i, nq), (rows.dc[shown.first], nd))
    grp_imp, n_grp, grp_first_imp = group_rows((r_i, nr), (s_i, ns), (q_i, nq))
    keys = _Keys(lab, n_lab, lab_first, unit_imp, n_unit, unit_first_imp, grp_imp, n_grp,
                 grp_first_imp, lab, n_lab, lab_first, lab_first[:0], shown.n)
    keys.ur, keys.n_ur, keys.ur_first = keys.unit_raters(shown, rows.tc, len(rows.raters),
                                                         as_read=True)
    # conflicts between systems' lists: a duplicate row (one list) is named as such
    once = np.zeros(n, dtype=bool)
    once[lab_first] = True
    keys.conflict_rows, conflict_others = _disagreements(
        keys.ur, np.isfinite(rows.label) & once, rows.label, keys.n_ur)
    if len(keys.conflict_rows) and conflicts == "refuse":
        other_of = dict(zip(keys.conflict_rows.tolist(), conflict_others.tolist(),
                            strict=True))
        found.conflicts = len(keys.conflict_rows)
        found.rows(keys.conflict_rows, lambda row: rows.conflict(row, other_of[row]))
    return keys


def _group_segments(rows: _Rows, grp: np.ndarray, n_grp: int
                    ) -> tuple[np.ndarray, np.ndarray]:
    """Step 5a: the segment code of each query group and the segment names (``""`` added
    for groups without one); a query in two segments is a problem."""
    segments, gc = rows.segments, rows.gc
    seg_g = np.zeros(n_grp, dtype=np.int64)
    if not rows.has["segment"]:
        return seg_g, segments
    empty = np.flatnonzero(segments == "")
    named = gc != (int(empty[0]) if len(empty) else -1)
    seg_g -= 1
    seg_g[grp[named]] = gc[named]
    differ, others = _disagreements(grp, named, gc, n_grp)
    other_of = dict(zip(differ.tolist(), others.tolist(), strict=True))
    rows.found.rows(differ, lambda row: (
        f"{rows.query_of(row)} is in segment {segments[gc[row]]!r} here and "
        f"{segments[gc[other_of[row]]]!r} at "
        f"{rows.origin.at(other_of[row], relative_to=row)}"))
    if (seg_g < 0).any():
        if not len(empty):
            segments = np.concatenate((np.array([""], dtype=object), segments))
            seg_g = np.where(seg_g >= 0, seg_g + 1, 0)
        else:
            seg_g = np.where(seg_g >= 0, seg_g, int(empty[0]))
    return seg_g, segments


def _group_weights(rows: _Rows, grp: np.ndarray, n_grp: int, grp_first: np.ndarray
                   ) -> np.ndarray:
    """Step 5b: the weight of each query group (1 without a weight column); a query with
    two weights, or none in a file with weights, is a problem."""
    if rows.weight is None:
        return np.ones(n_grp)
    weight, origin = rows.weight, rows.origin
    w_g = np.full(n_grp, np.nan)
    given = np.isfinite(weight)
    w_g[grp[given]] = weight[given]
    differ, others = _disagreements(grp, given, weight, n_grp)
    other_of = dict(zip(differ.tolist(), others.tolist(), strict=True))
    rows.found.rows(differ, lambda row: (
        f"{rows.query_of(row)} has weight {weight[row]:g} here and "
        f"{weight[other_of[row]]:g} at {origin.at(other_of[row], relative_to=row)}"))
    rows.found.rows(np.sort(grp_first[np.isnan(w_g)]), lambda row: (
        f"no weight for {rows.query_of(row)}; with a weight column every query needs one"))
    return w_g


@dataclass
class _Labels:
    """One label per (unit, rater) (``value``; NaN = blank), the rater codes and names
    they use, and the first row of each (unit, rater)."""

    value: np.ndarray
    tc: np.ndarray
    raters: np.ndarray
    has_rater: bool
    ur_first: np.ndarray


def _one_label_each(rows: _Rows, shown: _Shown, keys: _Keys, conflicts: Conflicts
                    ) -> _Labels:
    """Step 6: one label per (unit, rater), one rater's different labels in several
    systems' lists resolved by ``conflicts`` (``"separate"``: each list a rater)."""
    tc, raters, has_rater = rows.tc, rows.raters, rows.has["rater"]
    ur, n_ur, ur_first = keys.ur, keys.n_ur, keys.ur_first
    label = rows.label
    fin = np.isfinite(label)
    if conflicts == "separate" and len(rows.systems) > 1:
        tc, raters = _by_system(tc, raters, rows.sc, rows.systems)
        has_rater = True
        ur, n_ur, ur_first = keys.unit_raters(shown, tc, len(raters), as_read=True)
    value = np.full(n_ur, np.nan)
    value[ur[fin]] = label[fin]
    if len(keys.conflict_rows) and conflicts in ("mean", "latest"):
        groups = ur[keys.conflict_rows]
        given = np.flatnonzero(fin)
        if conflicts == "mean":
            total = np.bincount(ur[given], weights=label[given], minlength=n_ur)
            count = np.bincount(ur[given], minlength=n_ur)
            value[groups] = total[groups] / count[groups]
        else:
            last = np.full(n_ur, -1, dtype=np.int64)
            np.maximum.at(last, ur[given], given)
            value[groups] = label[last[groups]]
    return _Labels(value, tc, raters, has_rater, ur_first)


def _judgments(rows: _Rows, shown: _Shown, keys: _Keys, labels: _Labels,
               segments: tuple[np.ndarray, np.ndarray], w_g: np.ndarray,
               conflicts: Conflicts) -> Judgments:
    """Step 7: every table sorted (query groups and units by their ids, shown results by
    position, labels by unit and rater), the references between them renumbered."""
    rc, sc, qc, dc = rows.rc, rows.sc, rows.qc, rows.dc
    nr, ns, nq, nd = len(rows.rounds), len(rows.systems), len(rows.queries), len(rows.docs)
    imp_first, pos_imp = shown.first, shown.position
    grp_first = imp_first[keys.grp_first_imp]
    g_order = order_rows((rc[grp_first], nr), (sc[grp_first], ns), (qc[grp_first], nq))
    g_new = np.empty(keys.n_grp, dtype=np.int64)
    g_new[g_order] = np.arange(keys.n_grp)
    unit_first = imp_first[keys.unit_first_imp]
    u_order = order_rows((rc[unit_first], nr), (qc[unit_first], nq), (dc[unit_first], nd))
    u_new = np.empty(keys.n_unit, dtype=np.int64)
    u_new[u_order] = np.arange(keys.n_unit)
    s_order = order_rows((rc[imp_first], nr), (sc[imp_first], ns), (qc[imp_first], nq),
                     (pos_imp.astype(np.int64), int(pos_imp.max()) + 1))
    sf = imp_first[s_order]
    l_unit = u_new[keys.unit_imp[shown.imp[labels.ur_first]]]
    l_rater = labels.tc[labels.ur_first]
    l_order = order_rows((l_unit, keys.n_unit), (l_rater, len(labels.raters)))
    gf, uf = grp_first[g_order], unit_first[u_order]
    seg_g, segment_names = segments
    return Judgments(
        round_names=rows.rounds, system_names=rows.systems, query_ids=rows.queries,
        doc_ids=rows.docs, rater_names=labels.raters, segment_names=segment_names,
        shown_round=rc[sf], shown_system=sc[sf], shown_query=qc[sf],
        shown_doc=dc[sf].astype(np.int32, copy=False),
        shown_position=pos_imp[s_order].astype(np.int32),
        shown_score=shown.score[s_order], shown_unit=u_new[keys.unit_imp[s_order]],
        shown_group=g_new[keys.grp_imp[s_order]],
        unit_round=rc[uf], unit_query=qc[uf], unit_doc=dc[uf].astype(np.int32, copy=False),
        label_unit=l_unit[l_order], label_rater=l_rater[l_order],
        label_value=labels.value[l_order],
        group_round=rc[gf], group_system=sc[gf], group_query=qc[gf],
        group_segment=seg_g[g_order].astype(np.int32), group_weight=w_g[g_order],
        label_map=rows.label_map, sources=tuple(t.name for t in rows.tables),
        has_rater=labels.has_rater, has_system=rows.has["system"],
        has_segment=rows.has["segment"], has_weight=rows.has["weight"],
        warnings=tuple(w for t in rows.tables for w in t.warnings), conflicts=conflicts,
        n_conflicts=len(keys.conflict_rows), n_rows=rows.n,
        n_rows_labeled=int(np.count_nonzero(np.isfinite(rows.label))))


def _from_tables(tables: Sequence[RawTable], label_map: LabelMap | str | None,
                 conflicts: Conflicts = "refuse") -> Judgments:
    """The judgments of the tables of labeling files, every rule of the module docstring
    checked, in steps: each row on its own, then (once the rows are sound) shown results,
    label rows, units and query groups, segments and weights; each step's problems are
    raised together (:class:`_Found`), then the labels are resolved and the tables built."""
    rows = _read_rows(tables, label_map)
    if rows.found.count and conflicts == "refuse":  # listed with the problems above, at once
        _refuse_conflicts_of_sound_rows(rows)
    rows.found.raise_all()  # the rules below need sound rows
    shown = _shown_results(rows)
    keys = _keys(rows, shown, conflicts)
    grp = keys.grp_imp[shown.imp]
    segments = _group_segments(rows, grp, keys.n_grp)
    w_g = _group_weights(rows, grp, keys.n_grp, shown.first[keys.grp_first_imp])
    rows.found.raise_all()
    labels = _one_label_each(rows, shown, keys, conflicts)
    j = _judgments(rows, shown, keys, labels, segments, w_g, conflicts)
    if j.conflict_note:
        examples = tuple(f"query {rows.queries[rows.qc[r]]!r}, document "
                         f"{rows.docs[int(rows.dc[r])].as_py()!r}"
                         for r in keys.conflict_rows[:3].tolist())
        j = replace(j, warnings=(*j.warnings, DataWarning(
            "label-conflicts", j.conflict_note, tables[0].name, j.n_conflicts, examples)))
    return j
