"""Labeled result lists of labeling rounds: the columnar :class:`Judgments`.

A labeling file (read by :mod:`ireval_core.labels.reader`) has one row per labeled
shown result: the round (month or date), the query, the document, the 1-based position
it was shown at and the label; optionally the rater, the system (bucket, arm; one
system ``"default"`` when absent), the model score, the query's segment and its
sampling weight. Rounds accumulate over files, and a file may hold several rounds.

:class:`Judgments` holds the rows as three tables of integer codes (no Python loop over
rows or queries):

* **shown results**, one per (round, system, query, document): position and
  model score, sorted by (round, system, query, position);
* **units**, one per (round, query, document) shown in the round: what raters
  label. The same document shown by two systems for the same query is one unit;
* **labels**, one per (unit, rater): the grade (NaN = the rater left it blank).

and **query groups**, one per (round, system, query), with segment and weight. It
selects rounds, systems and raters (:meth:`Judgments.select`), combines several raters'
labels of a unit by a rule (:data:`COMBINE_RULES`, which every number computed from them
states), lays the tables out as DataFrames and bridges to the existing model
(``j.round(r).to_qrels(combine=...)``, ``.to_runs()``). The analyses of the package
read its tables and keep what they compute from them with :meth:`Judgments.cached`.

>>> from ireval_core.labels.reader import read_judgments
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

from ..data import Qrels, Run
from ..errors import DataWarning, invalid_parameter
from ..params import Options, check
from .label_table import LabelCodes
from .labelmap import LabelMap

__all__ = ["COMBINE_RULES", "CONFLICT_RULES", "DEFAULT_SYSTEM", "Combine", "Conflicts",
           "Judgments"]

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
parameter of :func:`~ireval_core.labels.reader.read_judgments`."""
CONFLICTS = Options(CONFLICT_RULES)
"""The constraint of every ``conflicts`` parameter."""


def check_combine(combine: str, function: str) -> str:
    """``combine`` if it is a rule of :data:`COMBINE_RULES`, else the parameter error."""
    return check(combine, "combine", function, COMBINE)


# ----------------------------------------------------------------------------- helpers


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


# ----------------------------------------------------------------------------- model


@dataclass(frozen=True, eq=False)
class Judgments:
    """Labeled result lists of one or more rounds, columnar and read-only.

    Built by :func:`~ireval_core.labels.reader.read_judgments` (files) or
    :func:`~ireval_core.labels.reader.judgments_from_frame` (a DataFrame). Names are kept once
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

    # ------------------------------------------------------------------ what is inside

    @property
    def rounds(self) -> tuple[str, ...]:
        """Rounds present, in time order (numbers, then dates such as ``2026-05`` or
        ``May 2026``, else the text sorted; :func:`~.label_table.ordered_rounds`)."""
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

        >>> from ireval_core.labels.reader import read_judgments
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

    def round(self, name: str, *, function: str = "Judgments.round") -> Judgments:
        """The view on one round (what :meth:`to_qrels` and :meth:`to_runs` need).

        A round these judgments do not hold raises the error of :meth:`round_code`,
        naming ``function`` (an analysis passes its own name).
        """
        self.round_code(name, function)
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
