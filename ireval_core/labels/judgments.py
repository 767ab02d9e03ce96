"""Labeled result lists: the columnar :class:`Judgments` and its reader.

A labeling file has one row per labeled shown result: the round (month or date),
the query, the document, the 1-based position it was shown at and the label;
optionally the rater, the system (bucket, arm; one system ``"default"`` when
absent), the model score, the query's segment and its sampling weight. Rounds
accumulate over files, and a file may hold several rounds.

The rows become three tables of integer codes (no Python loop over rows or
queries; every check is a vectorised pass):

* **shown results**, one per (round, system, query, document): position and
  model score, sorted by (round, system, query, position);
* **units**, one per (round, query, document) shown in the round: what raters
  label. The same document shown by two systems for the same query is one unit;
* **labels**, one per (unit, rater): the grade (NaN = the rater left it blank).

and **query groups**, one per (round, system, query), with segment and weight.

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

Several raters' labels of a unit are combined by a rule (:data:`COMBINE_RULES`),
which every number computed from them states.

>>> csv = (b"round,query,doc,position,label,rater\\n"
...        b"2026-05,q1,d1,1,high,ann\\n2026-05,q1,d1,1,mid,bob\\n2026-05,q1,d2,2,none,ann\\n")
>>> j = read_judgments(("may.csv", csv))
>>> j.rounds, j.systems, j.raters
(('2026-05',), ('default',), ('ann', 'bob'))
>>> j.round("2026-05").to_qrels(combine="mean").to_dict()
{'q1': {'d1': 2.5, 'd2': 0.0}}
>>> j.label_table()[["query", "doc", "rater", "label"]].values.tolist()
[['q1', 'd1', 'ann', 3.0], ['q1', 'd1', 'bob', 2.0], ['q1', 'd2', 'ann', 0.0]]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, TypeVar, cast

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..data import Qrels, Run
from ..errors import DataWarning, FormatError, Problem, Remedy, invalid_parameter
from ..idcodes import dictionary_codes
from ..io import RawTable, SourceLike, read_table
from ..io import table_from_arrow as _table_from_arrow
from ..io.columns import LABEL_ALIASES, REQUIRED_LABEL_COLUMNS
from ..io.guard import clean_errors
from ..params import InstanceOf, Options, check
from .agreement import LabelCodes, ordered_rounds
from .labelmap import LabelMap, detect_label_map

__all__ = ["COMBINE_RULES", "CONFLICT_RULES", "DEFAULT_SYSTEM", "Combine", "Conflicts",
           "Judgments", "file_rounds", "read_judgments"]

T = TypeVar("T")  # a value Judgments.cached keeps

Combine = Literal["mean", "median", "majority"]
COMBINE_RULES: dict[str, str] = {
    "mean": "mean of the raters' labels",
    "median": "median of the raters' labels (mean of the two middle ones for an even count)",
    "majority": "most frequent label among the raters (a tie goes to the lower label)",
}
"""How several raters' labels of one (round, query, document) become one label."""

DEFAULT_SYSTEM = "default"
"""The system's name when the file has no system column."""


COMBINE = Options(COMBINE_RULES)
"""The constraint of every ``combine`` parameter."""

Conflicts = Literal["refuse", "mean", "latest", "separate"]
CONFLICT_RULES: dict[str, str] = {
    "refuse": "refused: the file is an error listing every such label",
    "mean": "one label each: the mean of the rater's labels of the document",
    "latest": "one label each: the rater's label on the last row (later file, later line)",
    "separate": "each system's list counts as a separate rater ('ann (A)', 'ann (B)')",
}
"""What to do when one rater labels one document differently in several systems' lists
of a round (the same document shown by two systems for one query): the ``conflicts``
parameter of :func:`read_judgments`."""
CONFLICTS = Options(CONFLICT_RULES)
"""The constraint of every ``conflicts`` parameter."""
LABEL_PROBLEMS_KEPT = 10_000
"""The most problems one labeling error keeps (all are counted)."""


def check_combine(combine: str, function: str) -> str:
    """``combine`` if it is a rule of :data:`COMBINE_RULES`, else the parameter error."""
    return check(combine, "combine", function, COMBINE)


# ----------------------------------------------------------------------------- helpers


def _sorted_codes(values: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """int32 codes into the byte-wise sorted distinct values (an object array)."""
    codes, dictionary = dictionary_codes(values)
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    names = np.asarray(dictionary.take(pa.array(order)).to_pylist(), dtype=object)
    return rank[codes], names


def _time_order(codes: np.ndarray, names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recode rounds so that code order is time order (:func:`~ireval_core.labels.agreement.
    ordered_rounds`: numbers, then dates such as ``2026-05`` or ``May 2026``, else text)."""
    ordered = np.asarray(ordered_rounds(names), dtype=object)
    rank = pd.Index(ordered).get_indexer(names).astype(np.int32)
    return rank[codes], ordered


def _run_codes(values: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """:func:`~ireval_core.idcodes.dictionary_codes` of a column whose equal values often
    follow each other (the raters' rows of one shown result): only runs are hashed."""
    n = len(values)
    if n < 2 or pa.types.is_dictionary(values.type):
        return dictionary_codes(values)
    same = pc.equal(values.slice(1), values.slice(0, n - 1))
    if isinstance(same, pa.ChunkedArray):
        same = same.combine_chunks()
    change = np.concatenate(([True], ~same.to_numpy(zero_copy_only=False).astype(bool)))
    starts = np.flatnonzero(change)
    if len(starts) > 0.7 * n:
        return dictionary_codes(values)
    codes, dictionary = dictionary_codes(values.take(pa.array(starts)))
    return np.repeat(codes, np.diff(np.append(starts, n))), dictionary


def _combined_key(parts: Sequence[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int] | None:
    """One int64 key per row for several code columns (None if it would overflow)."""
    size = 1
    for _, n in parts:
        size *= max(int(n), 1)
    if size >= 2**62:
        return None
    key = parts[0][0].astype(np.int64)
    for codes, n in parts[1:]:
        key = key * max(int(n), 1) + codes
    return key, size


def _group(*parts: tuple[np.ndarray, int]) -> tuple[np.ndarray, int, np.ndarray]:
    """Group rows by several code columns: ``(group id, n groups, first row of each)``.

    A small key space is counted (``bincount``: ids in key order); a large one is
    hashed (``pandas.factorize``: ids in order of first appearance). No sort either way.
    """
    n = len(parts[0][0])
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0, np.zeros(0, dtype=np.int64)
    combined = _combined_key(parts)
    itype = np.int32 if n < 2**31 else np.int64
    if combined is not None and combined[1] <= max(8 * n, 1 << 24):
        key, size = combined
        present = np.bincount(key, minlength=size) > 0
        dense = (np.cumsum(present) - 1).astype(itype)
        del present
        ids = dense[key]
        del key, dense
        n_groups = int(ids.max()) + 1 if len(ids) else 0
        first = np.full(n_groups, n, dtype=itype)
        np.minimum.at(first, ids, np.arange(n, dtype=itype))
        return ids, n_groups, first.astype(np.int64)
    if combined is not None:
        key = combined[0]
    else:  # densify step by step
        key = parts[0][0].astype(np.int64)
        size = max(int(parts[0][1]), 1)
        for codes, m in parts[1:]:
            m = max(int(m), 1)
            if size * m >= 2**62:
                key, uniques = pd.factorize(key)
                size = max(len(uniques), 1)
            key = key * m + codes
            size *= m
    # rows of a group often follow each other (one row per rater): hash runs, not rows
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(key[1:], key[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    del change
    run_ids, uniques = pd.factorize(key[starts])
    del key
    run_ids = run_ids.astype(itype, copy=False)
    new = np.empty(len(starts), dtype=bool)
    new[0] = True
    np.greater(run_ids[1:], np.maximum.accumulate(run_ids)[:-1], out=new[1:])
    ids = np.repeat(run_ids, np.diff(np.append(starts, n))) if len(starts) < n else run_ids
    return ids, len(uniques), starts[new]


def _order(*parts: tuple[np.ndarray, int]) -> np.ndarray:
    """Rows sorted by several code columns (first = most significant), stable."""
    combined = _combined_key(parts)
    if combined is None:
        return np.lexsort(tuple(c for c, _ in reversed(parts)))
    key = combined[0]
    if len(key) < 2 or bool((key[1:] >= key[:-1]).all()):  # files are often in order
        return np.arange(len(key))
    return np.argsort(key, kind="stable")


_PANDAS3 = int(pd.__version__.split(".")[0]) >= 3


def text_column(names: np.ndarray | pa.Array, codes: np.ndarray) -> object:
    """``names[codes]`` as a pandas text column without a Python string per row:
    pandas' ``str`` dtype (Arrow-backed) on pandas 3, an object array before."""
    arr = names if isinstance(names, pa.Array) else pa.array(
        np.asarray(names, dtype=object).astype(str).tolist(), pa.string())
    taken = arr.take(pa.array(np.asarray(codes)))
    if _PANDAS3:
        return pd.array(taken, dtype="str")
    return taken.to_numpy(zero_copy_only=False)  # pragma: no cover - pandas 2


def _used(names: np.ndarray, codes: np.ndarray) -> tuple[str, ...]:
    """The names of the codes that occur in ``codes``, in code order."""
    return tuple(str(x) for x in names[np.flatnonzero(np.bincount(codes,
                                                                 minlength=len(names)))])


def _kept(names: np.ndarray, given: Sequence[str] | str | None, known: Sequence[str],
          param: str) -> np.ndarray:
    """Which of ``names`` (a code's name) :meth:`Judgments.select` keeps for its parameter
    ``param``: all when ``given`` is None, else those given (one name or several), each of
    which must be among ``known``."""
    if given is None:
        return np.ones(len(names), dtype=bool)
    if isinstance(given, str):
        given = [given]
    if any(x not in known for x in given):
        raise invalid_parameter(param, "Judgments.select", f"{param} among " + ", ".join(
            repr(x) for x in known), list(given))
    return np.isin(names.astype(str), np.asarray(list(given), dtype=str))


def _remap(keep: np.ndarray) -> np.ndarray:
    """Old index -> new index after keeping ``keep`` (-1 for dropped)."""
    out = np.cumsum(keep, dtype=np.int64) - 1
    out[~keep] = -1
    return out


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


# ----------------------------------------------------------------------------- model


@dataclass(frozen=True, eq=False)
class Judgments:
    """Labeled result lists of one or more rounds, columnar and read-only.

    Build with :func:`read_judgments` or :meth:`from_frame`. Names are kept once
    (``round_names`` in time order; ``system_names``, ``query_ids``, ``rater_names``,
    ``segment_names`` sorted; ``doc_ids`` in order of first appearance) and every
    table holds int32 codes into them; a view made by :meth:`select` or :meth:`round`
    shares the names. See the module docstring for
    the four tables. ``warnings`` holds what reading noticed without refusing the
    files (Excel: a hidden sheet left out, a round column mixing text and dates; the
    ``encoding`` of a file that was not UTF-8; the ``label-conflicts`` resolved).
    ``conflicts`` is the rule the reader applied to one rater's different labels of a
    document shown in several systems' lists (:data:`CONFLICT_RULES`) and
    ``n_conflicts`` how many (round, query, document, rater) it resolved;
    :attr:`conflict_note` states it, next to every number computed from the labels.
    ``n_rows`` is how many rows the files held, ``n_rows_labeled`` how many of them had a
    label (several rows can make one label: one rater's label of a document shown in
    several systems' lists); both count the files read, also in a :meth:`select` view.
    """

    round_names: np.ndarray
    system_names: np.ndarray
    query_ids: np.ndarray
    doc_ids: pa.Array
    rater_names: np.ndarray
    segment_names: np.ndarray
    shown_round: np.ndarray
    shown_system: np.ndarray
    shown_query: np.ndarray
    shown_doc: np.ndarray
    shown_position: np.ndarray
    shown_score: np.ndarray
    shown_unit: np.ndarray
    shown_group: np.ndarray
    unit_round: np.ndarray
    unit_query: np.ndarray
    unit_doc: np.ndarray
    label_unit: np.ndarray
    label_rater: np.ndarray
    label_value: np.ndarray
    group_round: np.ndarray
    group_system: np.ndarray
    group_query: np.ndarray
    group_segment: np.ndarray
    group_weight: np.ndarray
    label_map: LabelMap
    sources: tuple[str, ...] = ()
    has_rater: bool = False
    has_system: bool = False
    has_segment: bool = False
    has_weight: bool = False
    warnings: tuple[DataWarning, ...] = ()
    conflicts: Conflicts = "refuse"
    n_conflicts: int = 0
    n_rows: int = 0
    n_rows_labeled: int = 0
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        for value in vars(self).values():
            if isinstance(value, np.ndarray):
                value.setflags(write=False)

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, label_map: LabelMap | str | None = None,
                   source: str = "frame", conflicts: Conflicts = "refuse") -> Judgments:
        """Build from a DataFrame with the columns of a labeling file (any alias).

        Rows are named ``row N`` (1-based) in messages; ``conflicts`` as in
        :func:`read_judgments`.

        >>> df = pd.DataFrame({"month": ["2026-05"] * 2, "query": ["q1", "q1"],
        ...                    "doc": ["a", "b"], "rank": [1, 2], "grade": [2, None]})
        >>> Judgments.from_frame(df).round("2026-05").to_qrels().to_dict()
        {'q1': {'a': 2.0}}
        """
        check(frame, "frame", "Judgments.from_frame", InstanceOf(pd.DataFrame,
                                                                  "a pandas DataFrame"))
        check(conflicts, "conflicts", "Judgments.from_frame", CONFLICTS)
        table = pa.Table.from_pandas(frame.reset_index(drop=True), preserve_index=False)
        raw = _table_from_arrow(table, source, LABEL_ALIASES,
                                required=REQUIRED_LABEL_COLUMNS)
        return _from_tables([raw], label_map, conflicts)

    # ------------------------------------------------------------------ what is inside

    @property
    def rounds(self) -> tuple[str, ...]:
        """Rounds present, in time order (numbers, then dates such as ``2026-05`` or
        ``May 2026``, else the text sorted; :func:`~.agreement.ordered_rounds`)."""
        if "rounds" not in self._cache:  # the tables are read-only: found once
            self._cache["rounds"] = _used(self.round_names, self.shown_round)
        return self._cache["rounds"]

    @property
    def systems(self) -> tuple[str, ...]:
        """Systems present, sorted."""
        if "systems" not in self._cache:
            self._cache["systems"] = _used(self.system_names, self.shown_system)
        return self._cache["systems"]

    @property
    def raters(self) -> tuple[str, ...]:
        """Raters who gave at least one label, sorted (``""`` = no rater column)."""
        if "raters" not in self._cache:
            self._cache["raters"] = _used(self.rater_names,
                                          self.label_rater[np.isfinite(self.label_value)])
        return self._cache["raters"]

    @property
    def segments(self) -> tuple[str, ...]:
        """Segments present, sorted (``""`` = none given)."""
        return tuple(str(x) for x in self.segment_names[np.unique(self.group_segment)])

    @property
    def conflict_note(self) -> str:
        """How one rater's different labels of a document shown in several systems' lists
        became labels, in one sentence; empty when the files had none (and each list was
        not made a rater of its own). Part of the definition of every number computed
        from the labels.

        >>> csv = (b"round,system,query,doc,position,rater,label\\n"
        ...        b"r,a,q,d1,1,ann,1\\nr,b,q,d1,2,ann,3\\n")
        >>> j = read_judgments(("c.csv", csv), conflicts="mean")
        >>> j.round("r").to_qrels().to_dict(), j.conflict_note
        ({'q': {'d1': 2.0}}, "1 (round, query, document, rater) labeled differently in \
several systems' lists: one label each, the mean of the rater's labels of the document \
(conflicts='mean')")
        """
        n = self.n_conflicts
        what = (f"{n} (round, query, document, rater) labeled differently in several "
                "systems' lists")
        if self.conflicts == "separate" and len(self.system_names) > 1:
            return ("each system's list counts as a separate rater (conflicts='separate')"
                    + (f"; {what}" if n else ""))
        if not n:
            return ""
        rule = CONFLICT_RULES[self.conflicts].removeprefix("one label each: ")
        return f"{what}: one label each, {rule} (conflicts={self.conflicts!r})"

    @property
    def has_scores(self) -> bool:
        """True when some shown result carries a model score."""
        return bool(np.isfinite(self.shown_score).any())

    @property
    def n_shown(self) -> int:
        return len(self.shown_position)

    @property
    def n_units(self) -> int:
        return len(self.unit_round)

    @property
    def n_groups(self) -> int:
        return len(self.group_round)

    def __repr__(self) -> str:
        return (f"Judgments({len(self.rounds)} rounds, {len(self.systems)} systems, "
                f"{self.n_groups} (round, system, query) lists, {self.n_shown} shown results, "
                f"{int(np.isfinite(self.label_value).sum())} labels)")

    # ------------------------------------------------------------------ views

    def round_code(self, name: str, function: str) -> int:
        """The code of round ``name`` (its index in ``round_names``, as in ``group_round``).

        A round these judgments do not hold raises an invalid-parameter error that names
        ``function`` and the rounds there are.
        """
        hit = np.flatnonzero(self.round_names == str(name))
        if hit.size == 0 or str(name) not in self.rounds:
            raise invalid_parameter("round", function, str(Options(self.rounds)), name)
        return int(hit[0])

    def select(self, *, rounds: Sequence[str] | None = None,
               systems: Sequence[str] | None = None,
               raters: Sequence[str] | None = None) -> Judgments:
        """A view on some rounds, systems and/or raters (labels stay with their round).

        ``raters``: only these raters' labels are kept (the shown results and units
        stay: a unit none of them labeled is unlabeled in the view). This is how the
        people's numbers leave a model judge out (:mod:`.judge`).
        """
        r_keep = _kept(self.round_names, rounds, self.rounds, "rounds")
        s_keep = _kept(self.system_names, systems, self.systems, "systems")
        t_keep = _kept(self.rater_names, raters, tuple(str(t) for t in self.rater_names),
                       "raters")
        shown = r_keep[self.shown_round] & s_keep[self.shown_system]
        groups = r_keep[self.group_round] & s_keep[self.group_system]
        # a round's labels stay with it while one of the systems kept showed something
        r_shown = np.zeros(len(self.round_names), dtype=bool)
        r_shown[self.shown_round[shown]] = True
        units = r_shown[self.unit_round]
        labels = units[self.label_unit] & t_keep[self.label_rater]
        unit_new, group_new = _remap(units), _remap(groups)
        return replace(
            self,
            shown_round=self.shown_round[shown], shown_system=self.shown_system[shown],
            shown_query=self.shown_query[shown], shown_doc=self.shown_doc[shown],
            shown_position=self.shown_position[shown], shown_score=self.shown_score[shown],
            shown_unit=unit_new[self.shown_unit[shown]],
            shown_group=group_new[self.shown_group[shown]],
            unit_round=self.unit_round[units], unit_query=self.unit_query[units],
            unit_doc=self.unit_doc[units],
            label_unit=unit_new[self.label_unit[labels]], label_rater=self.label_rater[labels],
            label_value=self.label_value[labels],
            group_round=self.group_round[groups], group_system=self.group_system[groups],
            group_query=self.group_query[groups], group_segment=self.group_segment[groups],
            group_weight=self.group_weight[groups], _cache={})

    def round(self, name: str) -> Judgments:
        """The view on one round (what :meth:`to_qrels` and :meth:`to_runs` need)."""
        self.round_code(name, "Judgments.round")
        return self.select(rounds=[name])

    def cached(self, key: Hashable, compute: Callable[[], T]) -> T:
        """The value kept with these judgments under ``key``, computed by ``compute()``
        the first time it is asked for.

        The analyses of one page share what they compute from the same judgments this
        way (a view from :meth:`select` starts with nothing kept). The caller keeps the
        value read-only and makes ``key`` name everything the value depends on.
        """
        if key not in self._cache:
            self._cache[key] = compute()
        return cast(T, self._cache[key])

    # ------------------------------------------------------------------ labels

    def combined(self, combine: Combine = "mean") -> tuple[np.ndarray, np.ndarray]:
        """Per unit: the combined label (NaN = nobody labeled it) and how many labels.

        ``combine`` is a rule of :data:`COMBINE_RULES`. Vectorised over all units.
        """
        check_combine(combine, "Judgments.combined")
        key = ("combined", combine)
        if key in self._cache:
            return self._cache[key]
        n = self.n_units
        ok = np.isfinite(self.label_value)
        u, v = self.label_unit[ok], self.label_value[ok]
        count = np.bincount(u, minlength=n)
        out = np.full(n, np.nan)
        has = count > 0
        if combine == "mean":
            total = np.bincount(u, weights=v, minlength=n)
            out[has] = total[has] / count[has]
        else:
            order = np.lexsort((v, u))
            vs = v[order]
            start = np.concatenate(([0], np.cumsum(count)[:-1]))
            if combine == "median":
                lo = start + (count - 1) // 2
                hi = start + count // 2
                out[has] = (vs[lo[has]] + vs[hi[has]]) / 2.0
            else:  # majority: most frequent value, ties to the lower value
                us = u[order]
                new = np.ones(len(vs), dtype=bool)
                new[1:] = (us[1:] != us[:-1]) | (vs[1:] != vs[:-1])
                run_start = np.flatnonzero(new)
                run_len = np.diff(np.append(run_start, len(vs)))
                run_unit, run_value = us[run_start], vs[run_start]
                pick = np.lexsort((run_value, -run_len, run_unit))
                first = np.ones(len(pick), dtype=bool)
                first[1:] = run_unit[pick][1:] != run_unit[pick][:-1]
                chosen = pick[first]
                out[run_unit[chosen]] = run_value[chosen]
        out.setflags(write=False)
        count.setflags(write=False)
        self._cache[key] = (out, count)
        return out, count

    def label_table(self, round: str | None = None, *, labeled_only: bool = True
                    ) -> pd.DataFrame:
        """The long label table: ``round, query, doc, rater, label``.

        One row per labeled (round, query, doc, rater), sorted by round, query, then
        document (in order of first appearance) and rater; ``rater`` is ``""`` when the
        input has no rater column, ``label`` float64. With ``labeled_only=False``
        blank labels are kept as NaN. This is the input of
        :mod:`ireval_core.labels.agreement`.
        """
        j = self if round is None else self.round(round)
        keep = np.isfinite(j.label_value) if labeled_only else np.ones(len(j.label_value),
                                                                         dtype=bool)
        unit = j.label_unit[keep]
        return pd.DataFrame({
            "round": text_column(j.round_names, j.unit_round[unit]),
            "query": text_column(j.query_ids, j.unit_query[unit]),
            "doc": text_column(j.doc_ids, j.unit_doc[unit]),
            "rater": text_column(j.rater_names, j.label_rater[keep]),
            "label": np.asarray(j.label_value[keep], dtype=np.float64),
        })

    def label_codes(self) -> LabelCodes:
        """:meth:`label_table` (labeled rows only) as integer codes into the names, with
        no text column built: what :func:`~ireval_core.labels.agreement.rater_report`
        takes to skip coding the ids again (the same report as from the table)."""
        keep = np.isfinite(self.label_value)
        unit = self.label_unit[keep]
        return LabelCodes(
            round=self.unit_round[unit], query=self.unit_query[unit],
            doc=self.unit_doc[unit], rater=self.label_rater[keep],
            label=np.asarray(self.label_value[keep], dtype=np.float64),
            round_names=self.round_names, query_names=self.query_ids,
            doc_names=self.doc_ids, rater_names=self.rater_names)

    def shown_table(self, combine: Combine | None = None) -> pd.DataFrame:
        """The shown results: ``round, system, query, doc, position, score, segment,
        weight`` (+ ``label`` and ``n_labels`` when ``combine`` is given)."""
        g = self.shown_group
        frame = pd.DataFrame({
            "round": text_column(self.round_names, self.shown_round),
            "system": text_column(self.system_names, self.shown_system),
            "query": text_column(self.query_ids, self.shown_query),
            "doc": text_column(self.doc_ids, self.shown_doc),
            "position": self.shown_position.astype(np.int64),
            "score": np.asarray(self.shown_score),
            "segment": text_column(self.segment_names, self.group_segment[g]),
            "weight": np.asarray(self.group_weight[g]),
        })
        if combine is not None:
            label, count = self.combined(combine)
            frame["label"] = label[self.shown_unit]
            frame["n_labels"] = count[self.shown_unit]
        return frame

    # ------------------------------------------------------------------ the existing model

    def _one_round(self, function: str) -> None:
        if len(self.rounds) != 1:
            raise invalid_parameter("self", function, "the view of one round "
                                    "(use .round(name) first)", list(self.rounds))

    def to_qrels(self, combine: Combine = "mean") -> Qrels:
        """The round's combined labels as :class:`~ireval_core.data.Qrels`.

        One judgment per labeled (query, document) of the round, graded with the
        ``combine`` rule; unlabeled units are left out (unjudged in the runs).
        """
        self._one_round("Judgments.to_qrels")
        label, _ = self.combined(combine)
        ok = np.isfinite(label)
        docs = self.doc_ids.take(pa.array(self.unit_doc[ok]))
        note = f"; {self.conflict_note}" if self.conflict_note else ""
        return Qrels.from_arrays(self.query_ids[self.unit_query[ok]], docs, label[ok],
                                 source=f"{self.rounds[0]} labels ({combine}{note})")

    def to_runs(self, scores: Literal["position", "model"] = "position") -> list[Run]:
        """One :class:`~ireval_core.data.Run` per system of the round.

        ``scores="position"``: score = −position, so the ranking is the shown order.
        ``"model"``: the model scores (results without one are left out), for AUC,
        GAUC and PNR through :func:`ireval_core.evaluate`.
        """
        self._one_round("Judgments.to_runs")
        check(scores, "scores", "Judgments.to_runs", Options(("position", "model")))
        runs = []
        for code in np.unique(self.shown_system):
            rows = self.shown_system == code
            value = (-self.shown_position[rows].astype(np.float64) if scores == "position"
                     else self.shown_score[rows])
            ok = np.isfinite(value)
            rows = np.flatnonzero(rows)[ok]
            name = str(self.system_names[code])
            runs.append(Run.from_arrays(self.query_ids[self.shown_query[rows]],
                                        self.doc_ids.take(pa.array(self.shown_doc[rows])),
                                        value[ok], name=name,
                                        source=f"{self.rounds[0]} {name}"))
        return runs


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
                   round: str | None = None) -> Judgments:
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
        A :class:`LabelMap`, its text (``"none=0,low=1,mid=2,high=3"``) or the name
        of a built-in map; ``None`` picks the built-in map knowing every label of
        all the files (numbers: as they are).
    sheet:
        Excel: the sheet to read in each workbook, by name, even a hidden one (with a
        ``hidden-sheet`` warning in :attr:`Judgments.warnings`). By default every
        visible sheet with the labeling columns is read, and hidden sheets are not.
    conflicts:
        What to do when one rater labels one document differently in several systems'
        lists of a round (:data:`CONFLICT_RULES`): ``"refuse"`` (default: the files are
        an error that counts and lists every such label), one label per (round, query,
        document, rater) by ``"mean"`` or ``"latest"`` (the label on the last row), or
        ``"separate"``: each system's list counts as a separate rater. The rule is kept
        (:attr:`Judgments.conflicts`) and stated next to the numbers
        (:attr:`Judgments.conflict_note`).
    round:
        The round of a labeling tool's export that names none (Quepid's, Label Studio
        tasks without a round key), e.g. ``"2026-05"``; files with a round column keep
        theirs.

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
    tables = [read_table(s, LABEL_ALIASES, required=REQUIRED_LABEL_COLUMNS,
                         numeric=("position", "score", "weight"), sheet=sheet, tools=True,
                         round=round)
              for s in sources]
    return _from_tables(tables, label_map, conflicts)


@clean_errors
def file_rounds(source: SourceLike, *, sheet: str | None = None,
                round: str | None = None) -> tuple[tuple[str, ...], int]:
    """The rounds one labeling file holds (in time order) and its rows, read without
    checking its labels: what a saved set records for each of its files.

    >>> file_rounds(("m.csv", b"round,query,doc,position,label\\n2026-06,q,a,1,1\\n"
    ...                        b"2026-05,q,a,1,2\\n2026-06,q,b,2,\\n"))
    (('2026-05', '2026-06'), 3)
    """
    raw = read_table(source, LABEL_ALIASES, required=REQUIRED_LABEL_COLUMNS,
                     numeric=("position", "score", "weight"), sheet=sheet, tools=True,
                     round=round)
    names = pc.unique(raw.text("round").cast(pa.string())).to_pylist()
    return tuple(ordered_rounds([str(n) for n in names if n is not None])), raw.n_rows


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

    shown, n_shown, _ = _group(sub(r), sub(s), sub(q), sub(d))
    _, _, lab_first = _group((shown, n_shown), sub(t))
    unit, n_unit, _ = _group(sub(r), sub(q), sub(d))
    ur, n_ur, _ = _group((unit, n_unit), sub(t))
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


def _from_tables(tables: Sequence[RawTable], label_map: LabelMap | str | None,
                 conflicts: Conflicts = "refuse") -> Judgments:
    origin = _Origin(tables)
    n = int(origin.starts[-1])
    name_of = {k: tables[0].header_name(k) for k in LABEL_ALIASES}
    if n == 0:
        raise tables[0].error(None, "no rows below the header; expected labeled results")
    found = _Found(origin)

    # ---- each row on its own: labels, ids, numbers
    lm = _as_map(label_map)
    label, lm = _labels(tables, origin, lm, found)

    def text(key: str, default: str) -> pa.ChunkedArray:
        try:
            return _concat_text(tables, key, default)
        except FormatError as exc:  # a control character: the column cannot be used
            found.take(exc)
            raise  # pragma: no cover - take() raised

    def codes(key: str, default: str, what: str, *, allow_empty: bool
              ) -> tuple[np.ndarray, np.ndarray]:
        c, names = _sorted_codes(text(key, default))
        if not allow_empty and len(names) and names[0] == "":
            found.rows(np.flatnonzero(c == 0),
                       lambda row: f"empty {what} in column {name_of[key]!r}")
        return c, names

    rc, rounds = codes("round", "", "round", allow_empty=False)
    rc, rounds = _time_order(rc, rounds)
    qc, queries = codes("query", "", "query id", allow_empty=False)
    dc, docs = _run_codes(text("doc", ""))
    if len(docs) and pc.any(pc.equal(docs, "")).as_py():
        empty_doc = int(np.flatnonzero(np.asarray(pc.equal(docs, "")))[0])
        found.rows(np.flatnonzero(dc == empty_doc),
                   lambda row: f"empty document id in column {name_of['doc']!r}")
    tc, raters = codes("rater", "", "rater", allow_empty=True)
    sc, systems = codes("system", DEFAULT_SYSTEM, "system", allow_empty=False)
    gc, segments = codes("segment", "", "segment", allow_empty=True)
    has = {k: any(k in t.columns for t in tables) for k in LABEL_ALIASES}

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
        bad = ~np.isnan(weight) & ~(np.isfinite(weight) & (weight > 0))
        found.rows(np.flatnonzero(bad), lambda row: f"expected a weight > 0 in column "
                   f"{name_of['weight']!r}, got {weight[row]:g}")
    def conflict(row: int, other: int) -> str:
        return (f"{f'rater {raters[tc[row]]!r}' if has['rater'] else 'the file'} labels query "
                f"{queries[qc[row]]!r}, document {docs[int(dc[row])].as_py()!r} of round "
                f"{rounds[rc[row]]!r} {label[row]:g} here and {label[other]:g} at "
                f"{origin.at(other, relative_to=row)}; one label per (round, query, "
                "document, rater)")

    if found.count and conflicts == "refuse":  # listed with the problems above, at once
        ok = np.flatnonzero(~found.flagged)
        rows, others = _conflicts_among(ok, (rc, len(rounds)), (sc, len(systems)),
                                        (qc, len(queries)), (dc, len(docs)),
                                        (tc, len(raters)), label)
        other_of = dict(zip(rows.tolist(), others.tolist(), strict=True))
        found.conflicts = len(rows)
        found.rows(rows, lambda row: conflict(row, other_of[row]))
    found.raise_all()  # the rules below need sound rows

    nr, ns, nq, nd, nt = len(rounds), len(systems), len(queries), len(docs), len(raters)

    def what(row: int) -> str:
        return (f"round {rounds[rc[row]]!r}, system {systems[sc[row]]!r}, query "
                f"{queries[qc[row]]!r}, document {docs[int(dc[row])].as_py()!r}")

    # ---- shown results: one per (round, system, query, doc), one position each
    imp, n_imp, imp_first = _group((rc, nr), (sc, ns), (qc, nq), (dc, nd))
    pos_imp = position[imp_first]
    moved = np.flatnonzero(position != pos_imp[imp])
    found.rows(moved, lambda row: (
        f"{what(row)} is at position {position[row]:g} here and at position "
        f"{pos_imp[imp[row]]:g} at {origin.at(int(imp_first[imp[row]]), relative_to=row)}"
        "; a shown result has one position"))
    r_i, s_i, q_i = rc[imp_first], sc[imp_first], qc[imp_first]
    slot, n_slot, slot_first = _group((r_i, nr), (s_i, ns), (q_i, nq),
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
            return (f"position {position[row]:g} of query {queries[qc[row]]!r} (round "
                    f"{rounds[rc[row]]!r}, system {systems[sc[row]]!r}) holds two documents: "
                    f"{docs[int(dc[other])].as_py()!r} at {origin.at(other, relative_to=row)} "
                    f"and {docs[int(dc[row])].as_py()!r} here")

        found.rows(imp_first[second], two_documents)
    score_imp = np.full(n_imp, np.nan)
    if score is not None:
        fin = np.isfinite(score)
        score_imp[imp[fin]] = score[fin]
        rows, others = _disagreements(imp, fin, score, n_imp)
        other_of = dict(zip(rows.tolist(), others.tolist(), strict=True))
        found.rows(rows, lambda row: (
            f"{what(row)} has model score {score[row]:g} here and {score[other_of[row]]:g} "
            f"at {origin.at(other_of[row], relative_to=row)}"))

    # ---- label rows: one per (shown result, rater)
    lab, n_lab, lab_first = _group((imp, n_imp), (tc, nt))
    if n_lab < n:
        is_first = np.zeros(n, dtype=bool)
        is_first[lab_first] = True
        fix = "" if has["rater"] else "; with several raters, add a rater column"
        found.rows(np.flatnonzero(~is_first), lambda row: (
            f"duplicate row for {f'rater {raters[tc[row]]!r}, ' if has['rater'] else ''}"
            f"{what(row)} (first at "
            f"{origin.at(int(lab_first[lab[row]]), relative_to=row)}){fix}"))

    # ---- units (round, query, doc) and query groups (round, system, query), at the level
    # of shown results; then one label per (unit, rater)
    d_i = dc[imp_first]
    unit_imp, n_unit, unit_first_imp = _group((r_i, nr), (q_i, nq), (d_i, nd))
    grp_imp, n_grp, grp_first_imp = _group((r_i, nr), (s_i, ns), (q_i, nq))

    def unit_raters(codes: np.ndarray, n_codes: int, *, as_read: bool
                    ) -> tuple[np.ndarray, int, np.ndarray]:
        """(unit, rater) of every row: group ids, their number, the first row of each."""
        if n_unit == n_imp and as_read:  # no document shown twice: (shown, rater)
            return lab, n_lab, lab_first
        ur_lab, n_ur, ur_first_lab = _group((unit_imp[imp[lab_first]], n_unit),
                                            (codes[lab_first], n_codes))
        return ur_lab[lab], n_ur, lab_first[ur_first_lab]

    ur, n_ur, ur_first = unit_raters(tc, nt, as_read=True)
    fin = np.isfinite(label)
    # conflicts between systems' lists: a duplicate row (one list) is named as such
    once = np.zeros(n, dtype=bool)
    once[lab_first] = True
    conflict_rows, conflict_others = _disagreements(ur, fin & once, label, n_ur)
    n_conflicts = len(conflict_rows)
    if n_conflicts and conflicts == "refuse":
        other_of = dict(zip(conflict_rows.tolist(), conflict_others.tolist(), strict=True))
        found.conflicts = n_conflicts
        found.rows(conflict_rows, lambda row: conflict(row, other_of[row]))

    # ---- segment and weight of each query group
    grp_first = imp_first[grp_first_imp]
    grp = grp_imp[imp]
    seg_g = np.zeros(n_grp, dtype=np.int64)
    if has["segment"]:
        empty = np.flatnonzero(segments == "")
        named = gc != (int(empty[0]) if len(empty) else -1)
        seg_g -= 1
        seg_g[grp[named]] = gc[named]
        rows, others = _disagreements(grp, named, gc, n_grp)
        other_of = dict(zip(rows.tolist(), others.tolist(), strict=True))
        found.rows(rows, lambda row: (
            f"query {queries[qc[row]]!r} (round {rounds[rc[row]]!r}, system "
            f"{systems[sc[row]]!r}) is in segment {segments[gc[row]]!r} here and "
            f"{segments[gc[other_of[row]]]!r} at {origin.at(other_of[row], relative_to=row)}"))
        if (seg_g < 0).any():
            if not len(empty):
                segments = np.concatenate((np.array([""], dtype=object), segments))
                seg_g = np.where(seg_g >= 0, seg_g + 1, 0)
            else:
                seg_g = np.where(seg_g >= 0, seg_g, int(empty[0]))
    w_g = np.ones(n_grp)
    if weight is not None:
        w_g = np.full(n_grp, np.nan)
        given = np.isfinite(weight)
        w_g[grp[given]] = weight[given]
        rows, others = _disagreements(grp, given, weight, n_grp)
        other_of = dict(zip(rows.tolist(), others.tolist(), strict=True))
        found.rows(rows, lambda row: (
            f"query {queries[qc[row]]!r} (round {rounds[rc[row]]!r}, system "
            f"{systems[sc[row]]!r}) has weight {weight[row]:g} here and "
            f"{weight[other_of[row]]:g} at {origin.at(other_of[row], relative_to=row)}"))
        found.rows(np.sort(grp_first[np.isnan(w_g)]), lambda row: (
            f"no weight for query {queries[qc[row]]!r} (round {rounds[rc[row]]!r}, system "
            f"{systems[sc[row]]!r}); with a weight column every query needs one"))
    found.raise_all()

    # ---- one label per (unit, rater): conflicts resolved as chosen
    warnings: list[DataWarning] = [w for t in tables for w in t.warnings]
    has_rater = has["rater"]
    if conflicts == "separate" and ns > 1:
        tc, raters = _by_system(tc, raters, sc, systems)
        nt, has_rater = len(raters), True
        ur, n_ur, ur_first = unit_raters(tc, nt, as_read=True)
    value = np.full(n_ur, np.nan)
    value[ur[fin]] = label[fin]
    if n_conflicts and conflicts in ("mean", "latest"):
        groups = ur[conflict_rows]
        given = np.flatnonzero(fin)
        if conflicts == "mean":
            total = np.bincount(ur[given], weights=label[given], minlength=n_ur)
            count = np.bincount(ur[given], minlength=n_ur)
            value[groups] = total[groups] / count[groups]
        else:
            last = np.full(n_ur, -1, dtype=np.int64)
            np.maximum.at(last, ur[given], given)
            value[groups] = label[last[groups]]

    # ---- sort every table; renumber the references between them
    g_order = _order((rc[grp_first], nr), (sc[grp_first], ns), (qc[grp_first], nq))
    g_new = np.empty(n_grp, dtype=np.int64)
    g_new[g_order] = np.arange(n_grp)
    unit_first = imp_first[unit_first_imp]
    u_order = _order((rc[unit_first], nr), (qc[unit_first], nq), (dc[unit_first], nd))
    u_new = np.empty(n_unit, dtype=np.int64)
    u_new[u_order] = np.arange(n_unit)
    s_order = _order((r_i, nr), (s_i, ns), (q_i, nq),
                     (pos_imp.astype(np.int64), int(pos_imp.max()) + 1))
    sf = imp_first[s_order]
    l_unit = u_new[unit_imp[imp[ur_first]]]
    l_rater = tc[ur_first]
    l_order = _order((l_unit, n_unit), (l_rater, nt))
    gf, uf = grp_first[g_order], unit_first[u_order]
    j = Judgments(
        round_names=rounds, system_names=systems, query_ids=queries, doc_ids=docs,
        rater_names=raters, segment_names=segments,
        shown_round=rc[sf], shown_system=sc[sf], shown_query=qc[sf],
        shown_doc=dc[sf].astype(np.int32, copy=False),
        shown_position=pos_imp[s_order].astype(np.int32),
        shown_score=score_imp[s_order], shown_unit=u_new[unit_imp[s_order]],
        shown_group=g_new[grp_imp[s_order]],
        unit_round=rc[uf], unit_query=qc[uf], unit_doc=dc[uf].astype(np.int32, copy=False),
        label_unit=l_unit[l_order], label_rater=l_rater[l_order],
        label_value=value[l_order],
        group_round=rc[gf], group_system=sc[gf], group_query=qc[gf],
        group_segment=seg_g[g_order].astype(np.int32), group_weight=w_g[g_order],
        label_map=lm, sources=tuple(t.name for t in tables), has_rater=has_rater,
        has_system=has["system"], has_segment=has["segment"], has_weight=has["weight"],
        warnings=tuple(warnings), conflicts=conflicts, n_conflicts=n_conflicts,
        n_rows=n, n_rows_labeled=int(np.count_nonzero(fin)))
    if j.conflict_note:
        examples = tuple(f"query {queries[qc[r]]!r}, document {docs[int(dc[r])].as_py()!r}"
                         for r in conflict_rows[:3].tolist())
        j = replace(j, warnings=(*j.warnings, DataWarning(
            "label-conflicts", j.conflict_note, tables[0].name, n_conflicts, examples)))
    return j
