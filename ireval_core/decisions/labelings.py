"""The labelings of a comparison's holes: each system's window of the ranking, its holes,
and its per-query values with the holes graded one way or another.

:func:`run_windows` cuts every run's join (with the qrels) to the top k a measure reads
(:func:`window_of`, from the family's declared ``prefix`` fact) and finds its holes (the
unjudged documents there), documents coded together across runs. :class:`Worlds` then
computes, once each, the per-query values of a system under a labeling: the join with
the holes' grades set and the ideal ranking of each query updated in linear passes (no
new qrels to build and join), read by the measure's own kernel. Used by
:mod:`ireval_core.decisions.holes`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa

from ..data import Ranked, Run
from ..idcodes import dictionary_codes
from ..measures import Measure
from ..measures.segments import seg_cumcount
from ..options import EvalOptions

__all__ = ["Holes", "Worlds", "run_windows", "window_of"]


@dataclass
class Holes:
    """One run's window for one measure: the (possibly cut) join and its holes."""

    base: Ranked  # the join without judged-only rankings, cut to the window when it can be
    rows: np.ndarray  # rows of ``base`` that are holes
    gquery: np.ndarray  # global query index of each hole
    key: np.ndarray  # (global query, global document) key of each hole
    docs: pa.Array  # document id of each hole
    local: np.ndarray  # global query index -> row of base.query_ids (-1: absent)
    counts: dict[tuple[float, bool], np.ndarray] = field(default_factory=dict)


def window_of(m: Measure) -> int | None:
    """The top k the measure reads, ``None`` for the whole evaluated ranking."""
    if not m.family.prefix or m.cutoff is None:
        return None
    if m.family.cutoff not in ("optional", "required"):
        return None
    if m.name == "nDCG" and m.get("ideal") == "run":
        return None
    return m.k


def run_windows(full: dict[str, Ranked], runs: dict[str, Run], k: int | None,
             judged_only: bool, gqueries: np.ndarray) -> dict[tuple[str, int | None], Holes]:
    """Every run's window of the top ``k`` and its holes, documents coded together."""
    parts: dict[str, tuple[Ranked, np.ndarray, pa.Array, np.ndarray, np.ndarray]] = {}
    for name, r in full.items():
        judged = r.grade >= 0
        if k is None:
            base = r
        else:
            if judged_only:  # the condensed top k: every row above the k-th judged one
                above = seg_cumcount(judged, r.offsets, r.qidx) - judged
                keep = above < k
            else:
                keep = r.pos <= k
            base = _take_rows(r, np.flatnonzero(keep))
        rows = np.flatnonzero(~(base.grade >= 0))
        local_q = base.qidx[rows]
        run = runs[name]
        run_q = np.searchsorted(run.query_ids.astype(str), base.query_ids.astype(str))
        run_rows = run.offsets[np.minimum(run_q, max(len(run.query_ids) - 1, 0))][local_q] + (
            base.pos[rows].astype(np.int64) - 1)
        docs = run.doc_ids.take(pa.array(run.dcode[run_rows])).cast(pa.string())
        gq_of_local = np.searchsorted(gqueries, base.query_ids.astype(str))
        local = np.full(len(gqueries), -1, dtype=np.int64)
        local[gq_of_local] = np.arange(len(base.query_ids))
        parts[name] = (base, rows, docs, gq_of_local[local_q], local)
    chunks = [p[2] for p in parts.values()]
    codes, distinct = dictionary_codes(pa.chunked_array(chunks, type=pa.string()))
    n_docs = max(len(distinct), 1)
    out: dict[tuple[str, int | None], Holes] = {}
    start = 0
    for name, (base, rows, docs, gq, local) in parts.items():
        c = codes[start:start + len(rows)].astype(np.int64)
        start += len(rows)
        out[(name, k)] = Holes(base, rows, gq, gq.astype(np.int64) * n_docs + c, docs, local)
    return out


def _take_rows(r: Ranked, rows: np.ndarray) -> Ranked:
    """``r`` with only ``rows`` (a prefix of every query's ranking) kept."""
    qidx = r.qidx[rows]
    offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(qidx, minlength=r.n_queries), out=offsets[1:])
    return Ranked(r.query_ids, offsets, qidx, r.pos[rows], r.grade[rows], r.score[rows],
                  r.ideal_offsets, r.ideal_grade, r.in_run, r.max_grade)


def _ideal_top(r: Ranked, k: int) -> Ranked:
    """``r`` with only the ``k`` highest ideal grades of each query."""
    within = np.arange(len(r.ideal_grade)) - r.ideal_offsets[r.ideal_qidx]
    keep = within < k
    offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
    np.cumsum(np.minimum(np.diff(r.ideal_offsets), k), out=offsets[1:])
    return Ranked(r.query_ids, r.offsets, r.qidx, r.pos, r.grade, r.score, offsets,
                  r.ideal_grade[keep], r.in_run, r.max_grade)


def _labeled(base: Ranked, rows: np.ndarray, row_labels: np.ndarray, extra_q: np.ndarray,
             extra_grade: np.ndarray, extra_label: float, *, condense: bool,
             cut: int | None, counts: dict[tuple[float, bool], np.ndarray]) -> Ranked:
    """``base`` as :func:`~ireval_core.data.join` would give it with the qrels plus
    ``rows`` graded ``row_labels`` and the (query, original grade) entries ``extra_*``
    graded ``extra_label`` (documents outside this ranking's window: only the ideal
    changes).

    ``condense``: drop the still unjudged rows and rank again (judged-only), then keep
    the top ``cut``.
    """
    grade = base.grade.copy()
    grade[rows] = row_labels
    qidx, pos, score, offsets = base.qidx, base.pos, base.score, base.offsets
    if condense:
        keep = grade >= 0
        qidx, grade, score = qidx[keep], grade[keep], score[keep]
        offsets = np.zeros(base.n_queries + 1, dtype=np.int64)
        np.cumsum(np.bincount(qidx, minlength=base.n_queries), out=offsets[1:])
        pos = (np.arange(len(qidx), dtype=np.int64) - offsets[qidx] + 1).astype(np.int32)
        if cut is not None:
            first = np.flatnonzero(pos <= cut)
            qidx, grade, score, pos = qidx[first], grade[first], score[first], pos[first]
            np.cumsum(np.bincount(qidx, minlength=base.n_queries), out=offsets[1:])
    q_new = np.concatenate([base.qidx[rows].astype(np.int64), extra_q.astype(np.int64)])
    original = np.concatenate([base.grade[rows], extra_grade])
    labels = np.concatenate([row_labels, np.full(len(extra_q), extra_label)])
    ideal_offsets, ideal_grade = _ideal_with(base, q_new, original, labels, counts)
    top = max(base.max_grade, float(labels.max())) if len(labels) else base.max_grade
    return Ranked(base.query_ids, offsets, qidx, pos, grade, score, ideal_offsets,
                  ideal_grade, base.in_run, top)


def _ideal_with(r: Ranked, q: np.ndarray, original: np.ndarray, labels: np.ndarray,
                counts: dict[tuple[float, bool], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ideal grades (descending within each query) with a judgment per entry:
    an entry whose original grade is negative (pooled, unjudged) replaces one such
    grade of its query; one absent from the qrels (NaN) is added. ``labels`` are >= 0.
    Linear passes, no sort of the ideal; ``counts`` keeps the per-query
    counts of ``r``'s ideal grades for the next labeling of the same join."""
    nq = r.n_queries
    if len(q) == 0:
        return r.ideal_offsets, r.ideal_grade
    grade, offsets = r.ideal_grade, r.ideal_offsets
    kept, kept_offsets = grade, offsets
    pooled = ~np.isnan(original)
    if pooled.any():
        qi = r.ideal_qidx
        keep = np.ones(len(grade), dtype=bool)
        for v in np.unique(original[pooled]):  # usually one value, -1
            count = np.bincount(q[pooled & (original == v)], minlength=nq)
            start = offsets[:-1] + _count_within(r, v, strict=True, kept=counts)
            at = np.flatnonzero(grade == v)
            within = at - start[qi[at]]
            keep[at[within < count[qi[at]]]] = False
        kept = grade[keep]
        kept_offsets = offsets.copy()  # fewer removed where a cut ideal lacks the grades
        kept_offsets[1:] -= np.cumsum(np.bincount(qi[~keep], minlength=nq))
    # each new grade goes after the kept grades >= it in its query (the removed grades
    # are negative, so those counts are the original ideal's), the higher label first.
    # No sort: the kept grades move down by the new grades placed before them, and the
    # free places take the new grades in (query, label descending) order.
    lo, hi = float(labels.min()), float(labels.max())
    values = ([hi, lo] if hi != lo else [hi]) if bool(((labels == lo) | (labels == hi)).all()) \
        else sorted(set(labels.tolist()), reverse=True)
    per_query = np.stack([np.bincount(q[labels == v], minlength=nq) for v in values], axis=1)
    before = np.zeros(len(kept) + 1, dtype=np.int64)
    for j, v in enumerate(values):
        at = kept_offsets[:-1] + _count_within(r, v, strict=False, kept=counts)
        before += np.bincount(at, weights=per_query[:, j], minlength=len(kept) + 1
                              ).astype(np.int64)
    new_grade = np.empty(len(kept) + len(labels), dtype=np.float64)
    free = np.ones(len(new_grade), dtype=bool)
    moved = np.arange(len(kept)) + np.cumsum(before)[:len(kept)]
    new_grade[moved] = kept
    free[moved] = False
    new_grade[free] = np.repeat(np.tile(np.asarray(values, dtype=np.float64), nq),
                                per_query.ravel())
    new_offsets = kept_offsets.copy()
    new_offsets[1:] += np.cumsum(per_query.sum(axis=1))
    return new_offsets, new_grade


def _count_within(r: Ranked, v: float, *, strict: bool,
                  kept: dict[tuple[float, bool], np.ndarray]) -> np.ndarray:
    """Ideal grades ``> v`` (``strict``) or ``>= v`` per query, kept in ``kept`` (the
    same join serves every labeling of a run)."""
    key = (float(v), strict)
    if key not in kept:
        g = r.ideal_grade
        mask = g > v if strict else g >= v
        kept[key] = np.bincount(r.ideal_qidx[mask], minlength=r.n_queries).astype(np.int64)
    return kept[key]


class Worlds:
    """Per-query values of each system under the labelings the verdicts need, each
    computed once (the two per-system labelings are shared by every pair)."""

    def __init__(self, m: Measure, options: EvalOptions, label: float,
                 holes: dict[str, Holes], common: np.ndarray) -> None:
        self.m, self.options, self.label = m, options, label
        if m.name == "nDCG" and m.get("ideal") == "qrels" and m.cutoff is not None:
            # nDCG@k reads the ideal's top k only: labelings keep the top k exact (an
            # entry removed is a pooled-unjudged grade, which gains 0 as any below it)
            holes = {s: replace(h, base=_ideal_top(h.base, int(m.cutoff)), counts={})
                     for s, h in holes.items()}
        self.holes = holes
        self.common = common
        self.cut = m.k if window_of(m) is not None else None
        self._compared: dict[str, np.ndarray] = {}
        self._at: dict[str, np.ndarray] = {}
        self._only: dict[tuple[str, str], np.ndarray] = {}
        self._sorted: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._match: dict[tuple[str, str], np.ndarray] = {}
        self._values: dict[tuple[str, float, str | None, float, str | None], np.ndarray] = {}

    def compared(self, s: str) -> np.ndarray:
        """Mask of the holes of ``s`` whose query is compared."""
        if s not in self._compared:
            h = self.holes[s]
            asked = np.isin(h.base.query_ids.astype(str), self.common)  # one per query
            self._compared[s] = asked[h.base.qidx[h.rows]]
        return self._compared[s]

    def at(self, s: str) -> np.ndarray:
        """Rows of the compared queries in the values of ``s``."""
        if s not in self._at:
            self._at[s] = np.searchsorted(self.holes[s].base.query_ids.astype(str),
                                          self.common)
        return self._at[s]

    def only(self, other: str, s: str) -> np.ndarray:
        """Mask of the holes of ``other`` that are not holes of ``s`` (on queries ``s``
        was evaluated on)."""
        if (other, s) not in self._only:
            h, o = self.holes[s], self.holes[other]
            self._only[(other, s)] = (self.match(other, s) < 0) & (h.local[o.gquery] >= 0)
        return self._only[(other, s)]

    def sorted_keys(self, s: str) -> tuple[np.ndarray, np.ndarray]:
        """The hole keys of ``s``, sorted, and the order that sorts them."""
        if s not in self._sorted:
            order = np.argsort(self.holes[s].key)
            self._sorted[s] = (self.holes[s].key[order], order)
        return self._sorted[s]

    def match(self, s: str, other: str) -> np.ndarray:
        """For each hole of ``s``, the index of the same (query, document) among the holes
        of ``other``, -1 when ``other`` did not retrieve it in its window."""
        if (s, other) not in self._match:
            keys, order = self.sorted_keys(other)
            x = self.holes[s].key
            if len(keys):
                at = np.minimum(np.searchsorted(keys, x), len(keys) - 1)
                self._match[(s, other)] = np.where(keys[at] == x, order[at], -1)
            else:
                self._match[(s, other)] = np.full(len(x), -1, dtype=np.int64)
        return self._match[(s, other)]

    def values(self, s: str, own: float, other: str | None = None,
               other_label: float = 0.0, against: str | None = None) -> np.ndarray:
        """Values of ``s`` on the compared queries, its holes graded ``own`` and the
        holes of ``other`` it does not share graded ``other_label``.

        ``against`` (one of the pair): the holes both retrieved are graded the same in
        both systems' worlds, relevant where the system that is not ``against`` ranks
        them strictly higher (least favourable to ``against`` for a measure adding up
        rank-discounted gains), else non-relevant.
        """
        key = (s, own, other, other_label if other is not None else 0.0, against)
        hit = self._values.get(key)
        if hit is not None:
            return hit
        h = self.holes[s]
        row_labels = np.full(len(h.rows), own)
        if other is None:
            extra_q = np.zeros(0, dtype=np.int64)
            extra_grade = np.zeros(0)
        else:
            o = self.holes[other]
            only = self.only(other, s)
            extra_q = h.local[o.gquery[only]]
            extra_grade = o.base.grade[o.rows[only]]
            if against is not None:
                match = self.match(s, other)
                both = np.flatnonzero(match >= 0)
                mine = h.base.pos[h.rows[both]]
                theirs = o.base.pos[o.rows[match[both]]]
                favoured_higher = theirs < mine if s == against else mine < theirs
                row_labels[both] = np.where(favoured_higher, self.label, 0.0)
        world = _labeled(h.base, h.rows, row_labels, extra_q, extra_grade, other_label,
                         condense=self.options.judged_only, cut=self.cut, counts=h.counts)
        v = np.asarray(self.m.family.kernel(world, self.m, self.options), dtype=np.float64)
        out = v[self.at(s)]
        self._values[key] = out
        return out
