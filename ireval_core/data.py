"""Immutable qrels and runs, laid out for vectorised evaluation over all queries at once.

Layout
------
Identifiers are coded to integers exactly once, when a :class:`Qrels` or
:class:`Run` is built:

* ``query_ids`` is the sorted array of distinct query ids; ``qcode[i]`` indexes it.
* ``doc_ids`` is the array of distinct document ids (a pyarrow string array, so
  seven million ids do not become seven million Python objects); ``dcode[i]``
  indexes it. A run's ``doc_ids`` is in byte order and ``dcode`` is each id's byte
  rank, for every id form: ids that fit in 8 bytes after a prefix they all share are
  coded by sorting those bytes as integers; other ids (UUIDs, ``FBIS3-10082``,
  ClueWeb12's) are hashed and their distinct values ranked once
  (:func:`~ireval_core._arrow.byte_order`), so its ties compare integers, never
  strings. Qrels' ids are in byte order when they fit in 8 bytes, else in order of
  first appearance (their order is never used).

Entries are stored as flat columns grouped by query, with CSR offsets: the
entries of query ``q`` are ``offsets[q]:offsets[q + 1]``.

* :class:`Qrels` entries are sorted by (query, document); ``grade`` is float64.
  A negative grade means "in the pool but not judged" (kept as it is). ``groups``, when
  a TREC qrels file's second column (``iter``) is not the same on every line, holds it
  per entry: trec_eval's judgment group (``-R qrels_prefs``, ``-R qrels_jg``).
* :class:`Run` entries are sorted once in **ranking order**: score descending,
  ties broken by document id descending (byte-wise), exactly as trec_eval does.
  The rank column of the input file is ignored.

:func:`join` aligns one run with the qrels for a chosen set of queries and gives a
:class:`Ranked` structure, which is what every measure kernel consumes:

* ``offsets`` / ``qidx`` / ``pos``: CSR layout of the ranked lists, the query index of
  every entry and its 1-based rank;
* ``grade``: the qrels grade of every ranked document, NaN when it is not in the
  qrels (unjudged);
* ``ideal_offsets`` / ``ideal_grade``: every qrels grade of each evaluated query,
  sorted descending (the ideal ranking built from the qrels).

Counts that depend on the relevance threshold (relevant and judged non-relevant
documents per query) are computed on demand with :meth:`Ranked.n_relevant` and
:meth:`Ranked.n_nonrelevant`, vectorised with ``np.bincount``.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import cached_property
from typing import Protocol

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrow import (
    byte_order,
    from_numpy,
    release_unused,
    to_numpy,
)
from .errors import DataWarning
from .idcodes import (
    as_string_array,
    doc_code_map,
    doc_codes,
    doc_codes_of,
    encode_sorted,
    id_positions,
)
from .options import EvalOptions
from .progress import stage

__all__ = ["DuplicateEntryError", "JoinCache", "Qrels", "Ranked", "Run", "ids_coded_after",
           "join", "version_order"]


CONCURRENT_ROWS = 1 << 20
"""From this many rows on, a run's duplicate check runs on a second thread beside its
ranking (both are numpy sorts, which leave the GIL): about 0.45 s less on a 7M-line run."""


class CodingTurn(Protocol):
    """What a run waits on before it codes its ids (:func:`ids_coded_after`): an Event,
    or a gate of the caller's whose ``wait()`` returns once the run may code."""

    def wait(self, timeout: float | None = None) -> bool: ...


_CODING_AFTER: ContextVar[CodingTurn | None] = ContextVar("ireval_coding_after", default=None)
_CODED: ContextVar[threading.Event | None] = ContextVar("ireval_coded", default=None)
_PARSED: ContextVar[threading.Event | None] = ContextVar("ireval_parsed", default=None)
_BESIDE: ContextVar[list[Qrels] | None] = ContextVar("ireval_beside", default=None)


@contextmanager
def ids_coded_after(done: CodingTurn | None, *, coded: threading.Event | None = None,
                    parsed: threading.Event | None = None,
                    beside: list[Qrels] | None = None) -> Iterator[None]:
    """Inside the block, a :class:`Run` built on this thread (or a task of its context)
    codes its document ids only once ``done`` is set (once ``done.wait()`` returns; ``None``:
    at once), sets ``parsed`` when it has its columns (before it waits for ``done``) and
    ``coded`` once it has coded them and given that step's memory back.

    For a reader running beside another one (the qrels read on a second thread while the
    runs are read, :func:`~ireval_core.io.read_qrels_alongside`; run files read in turn on
    two threads, each next one's ``done`` being the ``coded`` of the one before): the two
    parses overlap, but a run's coding of millions of ids, its largest allocation, waits
    until the other reader has coded its own and given its freed memory back, so two
    codings never peak together and the peak does not depend on how the threads were
    scheduled. The other reader must set ``done`` whatever happens (in a ``finally``).

    ``beside``: where that other reader puts the :class:`Qrels` it read (before it sets
    ``done``; left empty when it failed). A run then codes its ids together with the
    qrels' (:func:`~ireval_core.idcodes.doc_codes_of`), which gives its document map to
    them (:func:`run_doc_map`) from the same sort; its codes are the same either way.
    """
    token = _CODING_AFTER.set(done)
    coded_token = _CODED.set(coded)
    parsed_token = _PARSED.set(parsed)
    beside_token = _BESIDE.set(beside)
    try:
        yield
    finally:
        _BESIDE.reset(beside_token)
        _PARSED.reset(parsed_token)
        _CODED.reset(coded_token)
        _CODING_AFTER.reset(token)


class DuplicateEntryError(ValueError):
    """Two rows share the same (query, document); ``rows`` are 0-based row indices."""

    def __init__(self, rows: tuple[int, int], query_id: str, doc_id: str) -> None:
        self.rows = rows
        self.query_id = query_id
        self.doc_id = doc_id
        super().__init__(f"duplicate entry for query {query_id!r}, document {doc_id!r}")


def _offsets(codes: np.ndarray, n_groups: int) -> np.ndarray:
    """CSR offsets of sorted group codes."""
    out = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=n_groups), out=out[1:])
    return out


def _check_unique(qcode: np.ndarray, dcode: np.ndarray, n_docs: int,
                  query_ids: np.ndarray, doc_ids: pa.Array) -> None:
    """Raise :class:`DuplicateEntryError` naming the first two rows of a duplicate pair."""
    key = qcode.astype(np.int64) * max(n_docs, 1) + dcode
    sorted_key = key.copy()
    sorted_key.sort()
    if not (sorted_key[1:] == sorted_key[:-1]).any():
        return
    del sorted_key
    order = np.argsort(key, kind="stable")  # only on failure: find the rows
    sorted_key = key[order]
    dup = np.flatnonzero(sorted_key[1:] == sorted_key[:-1])
    # report the duplicate whose second occurrence comes first in the file
    second = order[dup + 1]
    k = int(np.argmin(second))
    i, j = int(order[dup[k]]), int(second[k])
    raise DuplicateEntryError(
        (min(i, j), max(i, j)), str(query_ids[qcode[i]]), doc_ids[int(dcode[i])].as_py()
    )


def _string_numpy(dictionary: pa.Array) -> np.ndarray:
    return np.asarray(dictionary.to_pylist(), dtype=object)


def read_only(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (a copy if it is a view of another array)."""
    if a.base is not None:
        a = a.copy()
    a.setflags(write=False)
    return a


def freeze_arrays(obj: object) -> None:
    """Make every numpy array field of ``obj`` read-only.

    Qrels and runs are shared between sessions of the app (and between callers of the
    library): nothing may change them in place.
    """
    for value in vars(obj).values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)


@dataclass(frozen=True, eq=False)
class Qrels:
    """Relevance judgments, one graded entry per (query, document).

    Build with :meth:`from_arrays` (or a reader in :mod:`ireval_core.io`); the
    fields are documented in the module docstring.
    """

    query_ids: np.ndarray
    doc_ids: pa.Array
    qcode: np.ndarray
    dcode: np.ndarray
    grade: np.ndarray
    offsets: np.ndarray
    source: str = "qrels"
    warnings: tuple[DataWarning, ...] = field(default=())
    groups: pa.Array | None = None

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @classmethod
    def from_arrays(cls, query_ids: object, doc_ids: object, grades: object, *,
                    source: str = "qrels",
                    warnings: Sequence[DataWarning] = (),
                    groups: pa.Array | pa.ChunkedArray | None = None) -> Qrels:
        """Build qrels from three parallel columns (row order is irrelevant).

        ``groups``: a fourth parallel column, each entry's judgment group (the ``iter``
        column of TREC qrels), kept in entry order as :attr:`groups`; ``None`` when
        every entry is in the same group.

        Raises :class:`DuplicateEntryError` when a (query, document) pair repeats.
        """
        stage("coding ids")
        qcode, qdict = encode_sorted(query_ids)
        dcode, ddict, _ = doc_codes(doc_ids, rank=False)
        grade = np.asarray(grades, dtype=np.float64)
        if not (len(qcode) == len(dcode) == len(grade)):
            raise ValueError("query_ids, doc_ids and grades must have the same length")
        qids = _string_numpy(qdict)
        _check_unique(qcode, dcode, len(ddict), qids, ddict)
        # (query, document) pairs are distinct now: one integer sort orders them
        order = np.argsort(qcode.astype(np.int64) * max(len(ddict), 1) + dcode)
        qcode, dcode, grade = qcode[order], dcode[order], grade[order]
        kept = None
        if groups is not None:
            kept = groups.combine_chunks() if isinstance(groups, pa.ChunkedArray) else groups
            if len(kept) != len(grade):
                raise ValueError("groups must have the length of the grades")
            kept = kept.take(pa.array(order))
        return cls(qids, ddict, qcode, dcode, grade, _offsets(qcode, len(qids)),
                   source, tuple(warnings), kept)

    @classmethod
    def from_dict(cls, qrels: dict[str, dict[str, float]], *, source: str = "qrels") -> Qrels:
        """Build from ``{qid: {docid: grade}}`` (the pytrec_eval / ranx layout)."""
        q, d, g = _flatten(qrels)
        return cls.from_arrays(q, d, g, source=source)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.grade)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return ``{qid: {docid: grade}}``."""
        return _to_dict(self.query_ids, self.doc_ids, self.qcode, self.dcode, self.grade)

    def __repr__(self) -> str:
        return f"Qrels({self.source!r}: {self.n_queries} queries, {len(self)} judgments)"


@dataclass(frozen=True, eq=False)
class Run:
    """One system's ranked lists, stored in ranking order (score desc, docid desc).

    Build with :meth:`from_arrays` (or a reader in :mod:`ireval_core.io`).
    """

    name: str
    query_ids: np.ndarray
    doc_ids: pa.Array
    qcode: np.ndarray
    dcode: np.ndarray
    score: np.ndarray
    offsets: np.ndarray
    source: str = "run"
    warnings: tuple[DataWarning, ...] = field(default=())
    tag: str | None = None
    """The tag (run id) of the file's lines this run was read from; ``None`` when the
    file named none (the run is named after the file)."""

    def __post_init__(self) -> None:
        freeze_arrays(self)

    @classmethod
    def from_arrays(cls, query_ids: object, doc_ids: object, scores: object, *,
                    name: str, source: str = "run",
                    warnings: Sequence[DataWarning] = (), tag: str | None = None) -> Run:
        """Build a run from three parallel columns; rows are put in ranking order.

        Raises :class:`DuplicateEntryError` when a (query, document) pair repeats.
        """
        return cls.from_columns({"qid": query_ids, "docid": doc_ids}, scores, name=name,
                                source=source, warnings=warnings, tag=tag)

    @classmethod
    def from_columns(cls, columns: dict[str, object], scores: object, *, name: str,
                     source: str = "run", warnings: Sequence[DataWarning] = (),
                     tag: str | None = None) -> Run:
        """Like :meth:`from_arrays`, taking ``{"qid": ..., "docid": ...}``.

        The id columns are popped from ``columns`` as soon as they are coded, so a
        reader that hands over a dictionary it keeps no other reference to lets the
        large string columns be freed early (peak memory on big runs).
        """
        score = np.asarray(scores, dtype=np.float64)
        parsed = _PARSED.get()
        if parsed is not None:  # the next reader may parse its file now
            parsed.set()
        after = _CODING_AFTER.get()
        if after is not None:  # a reader beside this one: its peak first (ids_coded_after)
            after.wait()
        stage("coding ids")
        qcode, qdict = encode_sorted(columns.pop("qid"))
        beside = _BESIDE.get()
        dcode, ddict, byte_ranked = doc_codes_of(
            [as_string_array(columns.pop("docid"))],
            qrels_docs=beside[0].doc_ids if beside else None)
        release_unused()
        coded = _CODED.get()
        if coded is not None:  # the next reader may code its ids while this one orders
            coded.set()
        if not (len(qcode) == len(dcode) == len(score)):
            raise ValueError("query_ids, doc_ids and scores must have the same length")
        qids = _string_numpy(qdict)
        stage("checking for duplicates")
        # on large runs the check (one sort) runs on a second core beside the ordering
        with ThreadPoolExecutor(1, "ireval-unique") as pool:  # no thread until a submit
            checked = (pool.submit(_check_unique, qcode, dcode, len(ddict), qids, ddict)
                       if len(qcode) >= CONCURRENT_ROWS else None)
            if checked is None:
                _check_unique(qcode, dcode, len(ddict), qids, ddict)
            stage("ordering ties")
            order, sorted_ = _query_score_order(qcode, score, dcode, ddict,
                                                byte_ranked=byte_ranked)
            if order is not None:
                qcode, dcode, score = qcode[order], dcode[order], score[order]
            if not sorted_:
                dcode = _ties_by_code(qcode, score, dcode, ddict, byte_ranked=byte_ranked)
        if checked is not None:
            checked.result()  # a duplicate (query, document) is an error, as above
        return cls(name, qids, ddict, qcode, dcode, score, _offsets(qcode, len(qids)),
                   source, tuple(warnings), tag)

    @classmethod
    def from_dict(cls, run: dict[str, dict[str, float]], *, name: str = "run") -> Run:
        """Build from ``{qid: {docid: score}}`` (the pytrec_eval / ranx layout)."""
        q, d, s = _flatten(run)
        return cls.from_arrays(q, d, s, name=name, source=name)

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    def __len__(self) -> int:
        return len(self.score)

    @cached_property
    def depth(self) -> np.ndarray:
        """Number of retrieved documents per query."""
        return np.diff(self.offsets)

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Return ``{qid: {docid: score}}``."""
        return _to_dict(self.query_ids, self.doc_ids, self.qcode, self.dcode, self.score)

    def renamed(self, name: str, *, warnings: Sequence[DataWarning] | None = None) -> Run:
        """A copy of this run under another name (the data is shared, not copied), with
        ``warnings`` instead of its own when given."""
        return Run(name, self.query_ids, self.doc_ids, self.qcode, self.dcode, self.score,
                   self.offsets, self.source,
                   self.warnings if warnings is None else tuple(warnings), self.tag)

    def __repr__(self) -> str:
        return f"Run({self.name!r}: {self.n_queries} queries, {len(self)} documents)"


def ranking_order(qcode: np.ndarray, score: np.ndarray, dcode: np.ndarray,
                  doc_ids: pa.Array, *, byte_ranked: bool = False) -> np.ndarray | None:
    """Permutation putting rows in (query asc, score desc, docid desc) order.

    Document ids are compared byte-wise (as trec_eval's ``strcmp``), and only
    where scores tie. Returns ``None`` when the rows are already in that order.
    Rows grouped by query with scores descending (what search engines write) only
    need their groups moved and their ties fixed, a few linear passes; anything
    else is sorted. ``byte_ranked`` says the codes already number the ids in byte
    order (see :func:`doc_codes`), so ties need no string comparison at all.
    """
    order, sorted_ = _query_score_order(qcode, score, dcode, doc_ids, byte_ranked=byte_ranked)
    if sorted_:
        return order
    return _order_ties(order, qcode, score, dcode, doc_ids, byte_ranked=byte_ranked)


def _query_score_order(qcode: np.ndarray, score: np.ndarray, dcode: np.ndarray,
                       doc_ids: pa.Array, *, byte_ranked: bool = False
                       ) -> tuple[np.ndarray | None, bool]:
    """:func:`ranking_order` up to the ties: ``(order, done)``.

    ``order`` puts the rows in (query asc, score desc) order (``None``: they are); ``done``
    says it is the whole ranking order, ties included (a full sort was needed, or there
    are fewer than two rows). Otherwise rows of equal (query, score) keep their
    relative order, for :func:`_order_ties` or :func:`_ties_by_code` to fix.
    """
    n = len(qcode)
    if n < 2:
        return None, True
    starts = np.flatnonzero(np.diff(qcode)) + 1
    grouped = len(starts) + 1 == len(np.unique(qcode[np.concatenate(([0], starts))]))
    same = qcode[1:] == qcode[:-1]
    order: np.ndarray | None
    if grouped and not (same & (np.diff(score) > 0)).any():
        bounds = np.concatenate(([0], starts, [n]))
        group_q = qcode[bounds[:-1]]
        if (np.diff(group_q) > 0).all():
            order = None
        else:  # move whole groups into query order
            g_order = np.argsort(group_q, kind="stable")
            lengths = np.diff(bounds)[g_order]
            new_starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
            itype = np.int32 if n < 2**31 else np.int64
            shift = (bounds[:-1][g_order] - new_starts).astype(itype)
            order = np.arange(n, dtype=itype)
            order += np.repeat(shift, lengths)
    else:  # one multi-key sort in Arrow, faster than np.lexsort: ids compared as bytes,
        # or by code when the codes follow byte order (twice as fast as the strings)
        keys = pa.table({"q": from_numpy(qcode), "s": from_numpy(score),
                         "d": from_numpy(dcode) if byte_ranked
                         else doc_ids.take(from_numpy(dcode))})
        return to_numpy(pc.sort_indices(keys, sort_keys=[
            ("q", "ascending"), ("s", "descending"), ("d", "descending")])), True
    return order, False


def _ties_by_code(qcode: np.ndarray, score: np.ndarray, dcode: np.ndarray,
                  doc_ids: pa.Array, *, byte_ranked: bool) -> np.ndarray:
    """``dcode`` (rows in (query, score desc) order) with every run of equal (query,
    score) put in document-id-descending order.

    When the codes are byte ranks (every :class:`Run`), rows of a tie run differ only in
    their document, so the run's codes are simply sorted: one ``np.sort`` of
    (run, code descending) keys, three times faster than the ``argsort`` that
    :func:`_order_ties` needs to carry other columns along. Otherwise :func:`_order_ties`.
    """
    if not byte_ranked:
        order = _order_ties(None, qcode, score, dcode, doc_ids)
        return dcode if order is None else dcode[order]
    ties = _tie_runs(qcode, score)
    if ties is None:
        return dcode
    pos, key = ties
    del ties
    n = max(len(doc_ids), 1)
    key *= n  # in place, as below: these arrays are as long as the tied rows (peak memory)
    key += (n - 1) - dcode[pos]
    key.sort()
    key %= n
    np.subtract(n - 1, key, out=key)
    docs = key.astype(dcode.dtype)
    del key
    if np.array_equal(docs, dcode[pos]):
        return dcode
    out = dcode.copy()
    out[pos] = docs
    return out


def _tie_runs(qcode: np.ndarray, score: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows (in the given order) that tie with a neighbour on (query, score), and the
    tie run of each (int64, numbered from 0 in order); ``None`` when no two rows tie."""
    tie_with_prev = np.zeros(len(qcode), dtype=bool)
    np.logical_and(qcode[1:] == qcode[:-1], score[1:] == score[:-1], out=tie_with_prev[1:])
    if not tie_with_prev.any():
        return None
    in_tie = tie_with_prev.copy()
    in_tie[:-1] |= tie_with_prev[1:]  # the first row of a run ties with the next one
    pos = np.flatnonzero(in_tie)
    return pos, np.cumsum(~tie_with_prev[pos], dtype=np.int64) - 1


def _order_ties(order: np.ndarray | None, qcode: np.ndarray, score: np.ndarray,
                dcode: np.ndarray, doc_ids: pa.Array, *,
                byte_ranked: bool = False) -> np.ndarray | None:
    """Within each run of equal (query, score) in ``order``, put docids descending.

    Linear passes plus two sorts sized by the ties: the tied rows are found with a
    mask; when the codes are byte ranks (every :class:`Run`) the tie runs are ordered
    with one integer sort on (run, code descending). Otherwise the distinct documents
    among them (a presence mask over the codes) are put in byte order first
    (:func:`~ireval_core._arrow.byte_order`).
    """
    ties = _tie_runs(qcode if order is None else qcode[order],
                     score if order is None else score[order])
    if ties is None:
        return order
    pos, run_id = ties  # positions (in the current order) of every tied row, and its run
    rows = pos if order is None else order[pos]
    docs = dcode[rows]
    if byte_ranked:  # the code is the byte rank: one integer sort, no strings
        key = run_id * len(doc_ids) + (len(doc_ids) - 1 - docs)
        return _apply_within(order, pos, rows, key, len(qcode))
    present = np.zeros(len(doc_ids), dtype=bool)
    present[docs] = True
    codes = np.flatnonzero(present)  # the distinct tied documents, by code
    by_bytes = byte_order(doc_ids.take(from_numpy(codes)))  # integer keys, not strings
    rank = np.empty(len(doc_ids), dtype=np.int64)
    rank[codes[by_bytes]] = np.arange(len(codes), dtype=np.int64)
    # one key per tied row: its run, then its document's byte rank descending
    key = run_id * len(codes) + (len(codes) - 1 - rank[docs])
    return _apply_within(order, pos, rows, key, len(qcode))


def _apply_within(order: np.ndarray | None, pos: np.ndarray, rows: np.ndarray,
                  key: np.ndarray, n: int) -> np.ndarray | None:
    """``order`` with the tied rows at ``pos`` (rows ``rows``) put in ``key`` order.

    Keys are distinct (one document per query and tie run), so any sort will do.
    """
    within = np.argsort(key)
    if (within[1:] > within[:-1]).all():
        return order
    out = np.arange(n, dtype=np.int64) if order is None else order.copy()
    out[pos] = rows[within]
    return out


def _flatten(nested: dict[str, dict[str, float]]) -> tuple[list[str], list[str], list[float]]:
    q: list[str] = []
    d: list[str] = []
    v: list[float] = []
    for qid, docs in nested.items():
        q.extend([str(qid)] * len(docs))
        d.extend(str(k) for k in docs)
        v.extend(float(x) for x in docs.values())
    return q, d, v


def _to_dict(query_ids: np.ndarray, doc_ids: pa.Array, qcode: np.ndarray, dcode: np.ndarray,
             values: np.ndarray) -> dict[str, dict[str, float]]:
    docs = doc_ids.take(from_numpy(dcode)).to_pylist()
    out: dict[str, dict[str, float]] = {}
    for q, d, v in zip(query_ids[qcode].tolist(), docs, values.tolist(), strict=True):
        out.setdefault(q, {})[d] = v
    return out


@dataclass(frozen=True, eq=False)
class Ranked:
    """One run joined with the qrels over the evaluated queries (see module docstring)."""

    query_ids: np.ndarray
    offsets: np.ndarray
    qidx: np.ndarray
    pos: np.ndarray
    grade: np.ndarray
    score: np.ndarray
    ideal_offsets: np.ndarray
    ideal_grade: np.ndarray
    in_run: np.ndarray
    max_grade: float = 0.0

    @property
    def n_queries(self) -> int:
        return len(self.query_ids)

    @property
    def nbytes(self) -> int:
        """Bytes held by the numeric arrays (what a cache of joins is bounded by)."""
        return sum(v.nbytes for v in vars(self).values()
                   if isinstance(v, np.ndarray) and v.dtype != object)

    @cached_property
    def n_retrieved(self) -> np.ndarray:
        """Ranked documents per query (after any depth cut)."""
        return np.diff(self.offsets)

    @cached_property
    def ideal_qidx(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_queries), np.diff(self.ideal_offsets))

    def n_relevant(self, threshold: float = 1.0) -> np.ndarray:
        """Relevant documents in the qrels (grade >= threshold), per query (float64)."""
        # counting the selected entries: the same counts as weighing every entry by its
        # mask, in a fifth of the time
        return np.bincount(self.ideal_qidx[self.ideal_grade >= threshold],
                           minlength=self.n_queries).astype(np.float64)

    def n_nonrelevant(self, threshold: float = 1.0) -> np.ndarray:
        """Judged non-relevant documents in the qrels (0 <= grade < threshold), per query
        (float64)."""
        g = self.ideal_grade
        return np.bincount(self.ideal_qidx[(g >= 0) & (g < threshold)],
                           minlength=self.n_queries).astype(np.float64)


def pick_segments(offsets: np.ndarray, groups: np.ndarray,
                   depth: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of the CSR segments ``groups`` (each cut to ``depth``), and new offsets.

    ``groups`` may point at segments that do not exist when ``offsets`` has none (an empty
    run or qrels): callers mask those groups out, so they get empty segments here.
    """
    if len(offsets) < 2:  # no segment at all: every group is empty
        return np.zeros(0, dtype=np.int64), np.zeros(len(groups) + 1, dtype=np.int64)
    lengths = np.diff(offsets)[groups]
    starts = offsets[groups]
    if depth is not None:
        lengths = np.minimum(lengths, depth)
    new_offsets = np.zeros(len(groups) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    total = int(new_offsets[-1])
    seg = np.repeat(np.arange(len(groups)), lengths)
    rows = np.arange(total, dtype=np.int64) - new_offsets[seg] + starts[seg]
    return rows, new_offsets


# The ranking order of a run as trec_eval 9.0.8 sees it (scores read as float32), per run
# (held weakly: it goes with the run); see version_order.
_FLOAT32_ORDERS: weakref.WeakKeyDictionary[Run, tuple[np.ndarray | None, np.ndarray | None]] = (
    weakref.WeakKeyDictionary())
_FLOAT32_LOCK = threading.Lock()


def version_order(run: Run, trec_eval: str) -> tuple[np.ndarray | None, np.ndarray | None]:
    """How trec_eval ``trec_eval`` ranks ``run``: ``(order, score)``.

    trec_eval 10.0 keeps scores as doubles, so its order is the run's own (``(None,
    None)``). trec_eval 9.0.8 (and pytrec_eval) reads every score into a C ``float``:
    scores that differ only beyond float32 precision tie there, and those ties are
    broken by document id descending like any other. Then ``score`` holds the float32
    values (as float64, in the run's row order) and ``order`` the permutation of the
    run's rows into the new ranking order (``None`` when no row moves). Both are
    ``None`` when float32 merges no two scores of a query, the usual case: one cast and
    one comparison pass over the run, remembered per run.

    >>> run = Run.from_dict({"q": {"a": 0.03426470588235295, "b": 0.03426470588235294}})
    >>> run.doc_ids.take(run.dcode).to_pylist()  # as doubles, a scores higher
    ['a', 'b']
    >>> order, score = version_order(run, "9.0.8")
    >>> run.doc_ids.take(run.dcode[order]).to_pylist()  # a float32 tie: b > a by id
    ['b', 'a']
    >>> version_order(run, "10.0")
    (None, None)
    """
    if trec_eval != "9.0.8":
        return None, None
    with _FLOAT32_LOCK:
        hit = _FLOAT32_ORDERS.get(run)
    if hit is not None:
        return hit
    s64 = run.score
    with np.errstate(over="ignore"):  # beyond float32's range: inf, as C's conversion
        s32 = s64.astype(np.float32)
    merged = ((run.qcode[1:] == run.qcode[:-1]) & (s32[1:] == s32[:-1])
              & (s64[1:] != s64[:-1]))
    found: tuple[np.ndarray | None, np.ndarray | None] = (None, None)
    if merged.any():  # rows stay grouped by query, and descending: only ties can move
        score = s32.astype(np.float64)
        score.setflags(write=False)
        order = _order_ties(None, run.qcode, score, run.dcode, run.doc_ids,
                            byte_ranked=True)  # a run's codes are byte ranks
        if order is not None:
            order.setflags(write=False)
        found = (order, score)
    with _FLOAT32_LOCK:
        _FLOAT32_ORDERS[run] = found
    return found


def evaluated_queries(qrels: Qrels, run: Run, *, complete: bool = False) -> np.ndarray:
    """Query ids that enter the mean: run ∩ qrels (trec_eval), or every qrels query (``-c``)."""
    if complete:
        return qrels.query_ids
    return np.intersect1d(qrels.query_ids.astype(str), run.query_ids.astype(str)).astype(object)


def join(qrels: Qrels, run: Run, *, options: EvalOptions | None = None,
         queries: np.ndarray | None = None) -> Ranked:
    """Align ``run`` with ``qrels`` for vectorised evaluation.

    Parameters
    ----------
    qrels, run:
        The judgments and one system's rankings.
    options:
        The evaluation options; ``join`` applies the query set (``complete``), the
        depth cut (``depth``, trec_eval ``-M``) and judged-only rankings
        (``judged_only``: unjudged documents, not in the qrels or graded negative,
        are dropped after the depth cut, as trec_eval ``-J``) and the ranking order of
        the trec_eval version (``trec_eval``, see :func:`version_order`).
    queries:
        Query ids to evaluate, in output order, instead of the options' query set.
        A query absent from the run gets an empty ranking; one absent from the
        qrels gets no judgments.
    """
    options = EvalOptions() if options is None else options
    depth, judged_only = options.depth, options.judged_only
    if queries is None:
        queries = evaluated_queries(qrels, run, complete=options.complete)
    queries = np.asarray(queries, dtype=object)
    nq = len(queries)

    # the run's rows as the trec_eval version ranks them (9.0.8: scores as float32)
    order, score32 = version_order(run, options.trec_eval)
    run_dcode = run.dcode if order is None else run.dcode[order]
    run_score = run.score if score32 is None else (score32 if order is None else score32[order])

    # query codes of the evaluated queries in the run and in the qrels (-1 = absent)
    run_q = id_positions(run.query_ids, queries)
    qrels_q = id_positions(qrels.query_ids, queries)

    # ranked entries of the evaluated queries, in ranking order
    in_run = run_q >= 0
    whole = (nq == run.n_queries and bool((run_q == np.arange(nq)).all())
             and (depth is None or nq == 0 or depth >= int(run.depth.max())))
    if whole:  # every run row, in order (all its queries, no depth cut): no gathers
        rows, offsets, qidx = np.arange(0), run.offsets.copy(), run.qcode
    else:
        rows, offsets = pick_segments(run.offsets, np.where(in_run, run_q, 0), depth)
        if not in_run.all():  # absent queries: empty segments
            lengths = np.where(in_run, np.diff(offsets), 0)
            keep = np.repeat(in_run, np.diff(offsets))
            rows = rows[keep]
            offsets = np.zeros(nq + 1, dtype=np.int64)
            np.cumsum(lengths, out=offsets[1:])
        qidx = np.repeat(np.arange(nq, dtype=np.int32), np.diff(offsets))

    # qrels entries of the evaluated queries
    in_qrels = qrels_q >= 0
    qrows, _ = pick_segments(qrels.offsets, np.where(in_qrels, qrels_q, 0))
    qlen = np.where(in_qrels, np.diff(qrels.offsets)[np.where(in_qrels, qrels_q, 0)], 0)
    qkeep = np.repeat(in_qrels, np.diff(qrels.offsets)[np.where(in_qrels, qrels_q, 0)])
    qrows = qrows[qkeep]
    qqidx = np.repeat(np.arange(nq, dtype=np.int64), qlen)

    # grade of every ranked document: look (query, doc) up among the qrels rows
    doc_map = run_doc_map(qrels, run)  # run dcode -> qrels dcode or -1
    rdoc = doc_map[run_dcode if whole else run_dcode[rows]]
    n_docs = max(len(qrels.doc_ids), 1)
    qkey = qqidx * n_docs + qrels.dcode[qrows]  # sorted: queries ascending, docs ascending
    judged_doc = np.flatnonzero(rdoc >= 0)  # only documents judged for some query
    rkey = qidx[judged_doc].astype(np.int64) * n_docs + rdoc[judged_doc]
    # needles come grouped by query, so each search stays in its query's few qrels rows:
    # a plain binary search (numpy 2.4: 0.21 s for 4M needles; sorting them first, 0.34 s)
    hit = np.minimum(np.searchsorted(qkey, rkey), max(len(qkey) - 1, 0))
    grade = np.full(len(qidx), np.nan)
    if len(qkey):
        found = qkey[hit] == rkey
        grade[judged_doc[found]] = qrels.grade[qrows[hit[found]]]
    score = run_score if whole else run_score[rows]

    if judged_only:  # as trec_eval -J: cut to depth first, then drop unjudged documents
        keep = grade >= 0
        grade, score, qidx = grade[keep], score[keep], qidx[keep]
        offsets = np.zeros(nq + 1, dtype=np.int64)
        np.cumsum(np.bincount(qidx, minlength=nq), out=offsets[1:])

    pos = _positions(offsets, len(qidx))

    # ideal: every qrels grade of the query, descending
    ideal_offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(qlen, out=ideal_offsets[1:])
    top = float(qrels.grade.max()) if len(qrels.grade) else 0.0
    return Ranked(queries, offsets, qidx, pos, grade, score, ideal_offsets,
                  descending_within(qrels.grade[qrows], qqidx), in_run, max(top, 0.0))


def descending_within(grade: np.ndarray, qidx: np.ndarray) -> np.ndarray:
    """``grade`` sorted descending within each query (``qidx`` ascending, as given).

    The ideal ranking's grades (:func:`join`) and a run's own gains (nDCG with
    ``ideal=run``). One integer sort over (query, grade rank). Integer values in a small
    range (the usual grades 0-3 or -2..4, exp gains of them) are ranked by arithmetic and
    read back from the sorted keys; other values are ranked with ``np.unique`` (a NaN
    grade, possible through the API only, sorts last).
    """
    if len(grade) == 0:
        return grade.copy()
    low, high = float(np.min(grade)), float(np.max(grade))  # NaN if any grade is NaN
    span = high - low
    if span < (1 << 16) and bool(np.all(grade == np.floor(grade))):
        levels = int(span) + 1
        rank = (high - grade).astype(np.int64)  # 0 for the highest grade
        key = qidx.astype(np.int64) * levels + rank
        key.sort()
        return high - (key % levels).astype(np.float64)
    values, level = np.unique(np.nan_to_num(grade, nan=-np.inf), return_inverse=True)
    order = np.argsort(qidx.astype(np.int64) * len(values)
                       + (len(values) - 1 - level.reshape(-1)))
    return grade[order]


def _positions(offsets: np.ndarray, n: int) -> np.ndarray:
    """1-based rank of every entry of a CSR layout (int32): a running count reset at
    the start of every non-empty segment."""
    pos = np.ones(n, dtype=np.int32)
    lengths = np.diff(offsets)
    starts = offsets[:-1][lengths > 0]
    if len(starts) > 1:
        pos[starts[1:]] -= lengths[lengths > 0][:-1].astype(np.int32)
    return np.cumsum(pos, dtype=np.int32)


# The document map of a run against the qrels it was last joined with: the one step of a
# join that hashes strings, and the same for every option. One map per run (held weakly:
# it goes with the run), checked against the qrels object it was made for.
_DOC_MAPS: weakref.WeakKeyDictionary[Run, tuple[weakref.ref[Qrels], np.ndarray]] = (
    weakref.WeakKeyDictionary())
_DOC_MAPS_LOCK = threading.RLock()  # re-entered by a finalizer run by the GC


class DocMapStore(Protocol):
    """Where document maps outlive the process (the parsed-column cache,
    :class:`ireval_core.io.column_cache.ColumnCache`): by the keys of the two id arrays'
    contents (:func:`remember_doc_ids`)."""

    def load_doc_map(self, qrels_key: str, run_key: str, n_run: int, n_qrels: int
                     ) -> np.ndarray | None: ...

    def store_doc_map(self, qrels_key: str, run_key: str, doc_map: np.ndarray) -> None: ...


# Id arrays read through a DocMapStore, by id(): (a weak reference to the array, the
# store, the key of its content). The doc map depends only on the two id arrays, so a
# run renamed or cut down that keeps its array keeps its key.
_DOC_IDS: dict[int, tuple[weakref.ref[pa.Array], DocMapStore, str]] = {}


def remember_doc_ids(ids: pa.Array, store: DocMapStore, key: str) -> None:
    """Note that ``ids`` (a :class:`Qrels`' or :class:`Run`'s ``doc_ids``) is the content
    ``key`` of ``store``: :func:`run_doc_map` then looks the map of two such arrays up in
    the store before computing it, and stores what it computes."""
    ident = id(ids)
    with _DOC_MAPS_LOCK:
        _DOC_IDS[ident] = (weakref.ref(ids), store, key)
    weakref.finalize(ids, _forget_doc_ids, ident)


def _forget_doc_ids(ident: int) -> None:
    with _DOC_MAPS_LOCK:
        got = _DOC_IDS.get(ident)
        if got is not None and got[0]() is None:
            del _DOC_IDS[ident]


def _doc_ids_origin(ids: pa.Array) -> tuple[DocMapStore, str] | None:
    with _DOC_MAPS_LOCK:
        got = _DOC_IDS.get(id(ids))
    if got is None or got[0]() is not ids:
        return None
    return got[1], got[2]


def run_doc_map(qrels: Qrels, run: Run) -> np.ndarray:
    """``doc_code_map(run.doc_ids, qrels.doc_ids)``, remembered for the run's last qrels;
    taken from (and kept in) the :class:`DocMapStore` both id arrays were read through
    (:func:`remember_doc_ids`), so that a reopened dataset does not compute it again."""
    with _DOC_MAPS_LOCK:
        hit = _DOC_MAPS.get(run)
    if hit is not None and hit[0]() is qrels:
        return hit[1]
    of_qrels, of_run = _doc_ids_origin(qrels.doc_ids), _doc_ids_origin(run.doc_ids)
    store = of_run[0] if of_run is not None and of_qrels is not None \
        and of_run[0] == of_qrels[0] else None  # the same folder
    doc_map = None
    if store is not None and of_qrels is not None and of_run is not None:
        doc_map = store.load_doc_map(of_qrels[1], of_run[1], len(run.doc_ids),
                                     len(qrels.doc_ids))
    if doc_map is None:
        doc_map = doc_code_map(run.doc_ids, qrels.doc_ids)
        if store is not None and of_qrels is not None and of_run is not None:
            store.store_doc_map(of_qrels[1], of_run[1], doc_map)
    doc_map.setflags(write=False)
    with _DOC_MAPS_LOCK:
        _DOC_MAPS[run] = (weakref.ref(qrels), doc_map)
    return doc_map


def join_key(options: EvalOptions) -> tuple[bool, int | None, bool, str]:
    """The options a join depends on: query set, depth cut, judged-only rankings, and the
    trec_eval version (its ranking order, see :func:`version_order`).

    The relevance level and the IDCG policy are applied by the kernels, so changing
    them reuses a join.
    """
    return (options.complete, options.depth, options.judged_only, options.trec_eval)


class JoinCache:
    """Joined runs (:class:`Ranked`) kept for reuse, bounded by bytes.

    A page that evaluates other measures, draws curves of the same runs, or changes the
    relevance level reuses the join instead of redoing it. Entries are keyed by the
    qrels and run objects (checked by identity, held weakly) and :func:`join_key`;
    the least recently used entries go first once ``max_bytes`` is passed (the newest
    entry is always kept). Safe to share between threads; the cached arrays are
    read-only.

    Parameters
    ----------
    max_bytes:
        Bound on the bytes of the kept joins (default 1 GiB).
    """

    def __init__(self, max_bytes: int = 1 << 30) -> None:
        self.max_bytes = int(max_bytes)
        self._entries: OrderedDict[tuple[object, ...], tuple[weakref.ref[Qrels],
                                                              weakref.ref[Run], Ranked]] = (
            OrderedDict())
        self._pending: dict[tuple[object, ...], threading.Event] = {}
        self._prefetched: set[tuple[object, ...]] = set()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def ranked(self, qrels: Qrels, run: Run, options: EvalOptions) -> Ranked:
        """``join(qrels, run, options=options)``, from the cache when it was made before.

        A join another thread is computing is waited for, not computed twice.
        """
        key = (id(qrels), id(run), *join_key(options))
        while True:
            with self._lock:
                hit = self._entries.get(key)
                if hit is not None and hit[0]() is qrels and hit[1]() is run:
                    self._entries.move_to_end(key)
                    self.hits += 1
                    return hit[2]
                running = self._pending.get(key)
                if running is None:
                    done = self._pending[key] = threading.Event()
                    break
            running.wait()  # then look again (it failed if the entry is not there)
        try:
            ranked = join(qrels, run, options=options)
            freeze_arrays(ranked)
            with self._lock:
                self.misses += 1
                self._entries[key] = (weakref.ref(qrels), weakref.ref(run), ranked)
                self._entries.move_to_end(key)
                while len(self._entries) > 1 and self.nbytes > self.max_bytes:
                    self._entries.popitem(last=False)
            return ranked
        finally:
            with self._lock:
                del self._pending[key]
            done.set()

    def prefetch(self, qrels: Qrels, runs: Sequence[Run], options: EvalOptions
                 ) -> threading.Thread | None:
        """Join ``runs`` under ``options`` in a background thread, once per option set.

        For an app: started after a page is drawn, the joins are ready (or under way,
        and then waited for) when the next page evaluates. Returns the thread, or
        ``None`` when these joins were asked for before. Errors are left to the page
        that needs the join (it computes it again and reports them).
        """
        key = (id(qrels), tuple(id(r) for r in runs), *join_key(options))
        with self._lock:
            if key in self._prefetched:
                return None
            self._prefetched.add(key)

        def work() -> None:
            for run in runs:
                try:
                    self.ranked(qrels, run, options)
                except Exception:  # noqa: BLE001 - the page that needs it will say why
                    return

        thread = threading.Thread(target=work, name="ireval-join-prefetch", daemon=True)
        thread.start()
        return thread

    @property
    def nbytes(self) -> int:
        """Bytes held by the kept joins."""
        return sum(e[2].nbytes for e in self._entries.values())

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Drop every kept join."""
        with self._lock:
            self._entries.clear()
            self._prefetched.clear()


