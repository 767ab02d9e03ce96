"""Judge first what decides the comparison: the holes as a queue ordered by decision impact.

:mod:`.holes` says whether a verdict (``b`` beats ``a`` on a measure, or no significant
difference) survives every labeling of the unjudged documents in the systems' windows.
When it ``depends``, this module orders those documents so that the verdict settles with
as few labels as possible, and is recomputed after every label
(:class:`JudgeQueue`). Several pairs (a baseline against candidates, or every pair of
the runs) share one queue: a document counts for every unsettled pair whose systems
retrieved it.

**The impact order** models the paired test, not only the ranks (after the minimal test
collections of Carterette, Allan and Sitaraman, SIGIR 2006: label first the documents
that can most move the comparison; stop when no labeling of the rest can change it).
For each pair and each compared query the per-query difference ``d = b - a`` lies
between ``lo = low_b - high_a`` and ``hi = high_b - low_a`` (the bounds of
:class:`~.holes.HolesResult`). The verdict settles when the paired t statistic of
``lo`` and that of ``hi`` fall on the same side of the critical value: either bound must
move, and which one follows from the expected outcome (the t statistic of the expected
differences, each hole relevant with its prior probability):

* expected winner ``b``: raise ``t(lo)`` above the critical value ``c``; a hole of ``b``
  raises ``lo`` when it is relevant (probability ``p``), a hole of ``a`` when it is not
  (``1 - p``);
* expected winner ``a``: lower ``t(hi)`` below ``-c``, the other way round;
* no expected winner: raise ``t(lo)`` above ``-c`` and lower ``t(hi)`` below ``c``.

A hole's effect on its system's value is its query's range ``high - low`` shared among
that system's holes of the query by the rank discount ``1 / log2(1 + rank)``; its effect
on a bound's t statistic is that times the derivative of t with respect to the query's
difference (``1 / (sqrt(n) s) - t (d_q - mean) / ((n - 1) s^2)``). The score of a hole
is, over the unsettled pairs and the bounds they need to move, the expected change of
the bound's t statistic divided by the distance the bound still has to go. The prior
``p`` (the chance of a positive grade, weighted by the grade over the top grade) comes
from a logistic model fitted, at every recomputation, on the judged documents of the
runs' windows: the query's share of relevance among its other judged documents of the
windows and among all its other judgments, and each system's rank of the document
(:func:`_learned_prior`). Nothing but what is known when the queue is made enters it:
the judgments so far and the runs. The t statistic is the model for every test; the
verdicts themselves are :func:`~.holes.judgment_debt`'s, exact, with the chosen test.

**The estimate** of the labels a verdict may still need is the number of holes, in the
impact order, whose expected changes add up to the distances the bounds must go (all
the pair's holes when they do not suffice).

**The random order** is a fixed pseudo-random order of the holes for a seed (a keyed
hash of the query and document, so that it does not change as labels arrive): the
comparison the impact order is measured against.

The verdict per pair is that of :func:`~.holes.judgment_debt` on the qrels with the
labels given so far: ``holds`` when the verdict as judged survives every labeling of
the remaining holes, ``depends`` otherwise, and ``reversed`` when it holds but differs
from the verdict as judged when the queue was made (another winner, or a winner
appeared or went away).

Recomputing after a label reads only each run's window: for a measure with a cutoff
(``nDCG@10``: the top 10) the runs are cut once to their top k (with the rows tied at
the k-th score, so that either trec_eval version's ordering of ties reads the same
rows), and every recomputation joins those few rows with the qrels.

>>> from ireval_core import Qrels, Run
>>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "x": 0} for i in range(6)})
>>> old = Run.from_dict({q: {"x": 2.0, "new": 1.0} for q in qrels.query_ids}, name="old")
>>> new = Run.from_dict({q: {"a": 2.0, "x": 1.0} for q in qrels.query_ids}, name="new")
>>> queue = JudgeQueue(qrels, [old, new], "P@2")
>>> [(v.system_a, v.system_b, v.verdict, v.remaining_holes) for v in queue.verdicts]
[('old', 'new', 'depends', 6)]
>>> item = queue.next(1)[0]
>>> item.query, item.doc, item.systems
('q0', 'new', ('old',))
>>> queue.add([(f"q{i}", "new", 0) for i in range(6)])
>>> [(v.verdict, v.remaining_holes) for v in queue.verdicts]
[('holds', 0)]
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

import numpy as np
import pyarrow as pa

from ..data import JoinCache, Qrels, Ranked, Run
from ..errors import invalid_parameter
from ..idcodes import dictionary_codes
from ..measures import Measure, parse_measures
from ..options import EvalOptions
from .holes import HolesResult, judgment_debt, run_pairs

__all__ = ["ORDERS", "JudgeQueue", "PairVerdict", "QueueItem"]

ORDERS = ("impact", "random")
"""The queue's orders: ``impact`` (the verdicts settle soonest) and ``random``."""

QueueVerdict = Literal["holds", "reversed", "depends"]

_MIN_GAP = 0.25
"""Smallest distance (in t units) a bound is taken to still have to go: a bound the
t model puts past the critical value while the exact verdict still depends."""

_FIT_ROWS = 20_000
"""Judged documents the prior's logistic model is fitted on, at most (an even sample)."""


@dataclass(frozen=True)
class PairVerdict:
    """The state of one pair in the queue.

    Attributes
    ----------
    system_a, system_b : str
        The pair (``d = b - a``).
    verdict : {"holds", "reversed", "depends"}
        ``depends`` while some labeling of the remaining holes changes the verdict;
        ``holds`` when none does; ``reversed`` when none does and the verdict differs
        from the one as judged when the queue was made.
    remaining_holes : int
        Unjudged documents left in the pair's windows.
    estimate : int
        Labels the verdict may still need in the impact order (0 when settled).
    winner : str or None
        The significantly better system as judged now.
    text : str
        The holes analysis's sentence.
    """

    system_a: str
    system_b: str
    verdict: QueueVerdict
    remaining_holes: int
    estimate: int
    winner: str | None
    text: str

    def as_dict(self) -> dict[str, Any]:
        """The JSON record of ``judge-queue --format json``."""
        return {"system_a": self.system_a, "system_b": self.system_b,
                "verdict": self.verdict, "remaining_holes": self.remaining_holes,
                "estimate": self.estimate, "winner": self.winner, "text": self.text}


@dataclass(frozen=True)
class QueueItem:
    """One document to judge: its query, the systems whose window holds it, its rank in
    each, and why it is in the queue, in words."""

    query: str
    doc: str
    systems: tuple[str, ...]
    ranks: tuple[int, ...]
    why: str
    score: float

    def as_dict(self) -> dict[str, Any]:
        """The JSON record of ``judge-queue --format json``."""
        return {"query": self.query, "doc": self.doc, "systems": list(self.systems),
                "ranks": list(self.ranks), "why": self.why}


class JudgeQueue:
    """The holes of several pairs of runs on one measure, ordered to settle the verdicts.

    Parameters
    ----------
    qrels : Qrels
        The judgments so far.
    runs : sequence of Run
        Two runs or more with distinct names.
    measure : str or Measure
        One measure the holes analysis supports (``"nDCG@10"``, ``"P@5"``, ``"AP"``...).
    baseline : str, optional
        Pair each other run with this one; default: every pair, in run order.
    options : EvalOptions, optional
        As for :func:`~ireval_core.evaluate`.
    test, alpha, n_resamples, rng
        The paired test of the verdicts, as :func:`~.holes.judgment_debt`.
    order : {"impact", "random"}, default "impact"
    seed : int, default 0
        The random order's seed.
    """

    def __init__(self, qrels: Qrels, runs: Sequence[Run], measure: str | Measure, *,
                 baseline: str | None = None, options: EvalOptions | None = None,
                 test: str = "t", alpha: float = 0.05, n_resamples: int = 1_000,
                 rng: int = 0, order: str = "impact", seed: int = 0) -> None:
        fn = "JudgeQueue"
        if not isinstance(qrels, Qrels):
            raise invalid_parameter("qrels", fn, "a Qrels", qrels, error=TypeError)
        runs = list(runs)
        for run in runs:
            if not isinstance(run, Run):
                raise invalid_parameter("runs", fn, "a sequence of Run objects", runs,
                                        error=TypeError)
        self.pairs = run_pairs(runs, baseline, fn)
        specs = parse_measures(measure)
        if len(specs) != 1:
            raise invalid_parameter("measure", fn, "one measure", measure)
        if order not in ORDERS:
            raise invalid_parameter("order", fn, "one of " + ", ".join(map(repr, ORDERS)),
                                    order)
        if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool):
            raise invalid_parameter("seed", fn, "an int", seed, error=TypeError)
        self.measure = specs[0]
        self.options = EvalOptions() if options is None else options
        self.order, self.seed = order, int(seed)
        self.baseline = baseline
        self._debt_args = {"options": self.options, "test": test, "alpha": alpha,
                           "n_resamples": n_resamples, "rng": rng}
        self.alpha = alpha
        self._names = [r.name for r in runs]
        first = self._judge(qrels, runs, None)
        self.window = first[0].k if first else None
        self._start = {(r.system_a, r.system_b): r.winner for r in first}
        self._runs = [_cut(r, self.window) if self.window is not None
                      and not self.options.judged_only else r for r in runs]
        self._original = qrels
        self._base = (pa.array(qrels.query_ids.astype(str), type=pa.string()).take(
                          pa.array(qrels.qcode)),
                      qrels.doc_ids.cast(pa.string()).take(pa.array(qrels.dcode)),
                      np.asarray(qrels.grade, dtype=np.float64))
        self._labels: dict[tuple[str, str], float] = {}
        self.qrels = qrels
        self._recompute(first)

    # ----------------------------------------------------------------- public

    @property
    def verdicts(self) -> list[PairVerdict]:
        """One :class:`PairVerdict` per pair, in pair order."""
        return list(self._verdicts)

    @property
    def settled(self) -> bool:
        """No pair's verdict depends on the remaining holes."""
        return all(v.verdict != "depends" for v in self._verdicts)

    @property
    def n_labels(self) -> int:
        """Labels given through :meth:`add` so far."""
        return len(self._labels)

    def __len__(self) -> int:
        """Holes in the queue (those of the pairs whose verdict depends on them)."""
        return len(self._ranked)

    def next(self, n: int = 10) -> list[QueueItem]:
        """The next ``n`` documents to judge, in the queue's order."""
        if not isinstance(n, (int, np.integer)) or isinstance(n, bool) or n < 1:
            raise invalid_parameter("n", "JudgeQueue.next", "an int >= 1", n)
        return [self._item(int(i)) for i in self._ranked[:n]]

    def add(self, labels: Iterable[tuple[str, str, float]]) -> None:
        """Record labels ``(query, doc, grade)`` (a grade >= 0; a later label of the same
        document replaces an earlier one) and recompute the verdicts and the order."""
        got = list(labels)
        for item in got:
            if len(item) != 3:
                raise invalid_parameter("labels", "JudgeQueue.add",
                                        "(query, doc, grade) triples", item)
            grade = float(item[2])
            if not grade >= 0:
                raise invalid_parameter("labels", "JudgeQueue.add", "grades >= 0", item[2])
            self._labels[(str(item[0]), str(item[1]))] = grade
        if got:
            self.qrels = self._current_qrels()
            self._recompute(None)

    # ----------------------------------------------------------------- the work

    def _judge(self, qrels: Qrels, runs: list[Run], joins: JoinCache | None
               ) -> list[HolesResult]:
        """:func:`~.holes.judgment_debt` of the queue's pairs."""
        return judgment_debt(qrels, runs, self.measure, baseline=self.baseline,
                             joins=joins, **self._debt_args)  # type: ignore[arg-type]

    def _current_qrels(self) -> Qrels:
        """The original qrels, each labeled document's entry replaced by its label."""
        q, d, g = self._base
        new_q = pa.array([k[0] for k in self._labels], type=pa.string())
        new_d = pa.array([k[1] for k in self._labels], type=pa.string())
        new_g = np.fromiter(self._labels.values(), dtype=np.float64, count=len(self._labels))
        keep = ~_replaced(self._original, new_q, new_d)
        mask = pa.array(keep)
        return Qrels.from_arrays(pa.concat_arrays([q.filter(mask), new_q]),
                                 pa.concat_arrays([d.filter(mask), new_d]),
                                 np.concatenate([g[keep], new_g]), source=self._original.source)

    def _recompute(self, debt: list[HolesResult] | None) -> None:
        joins = JoinCache()  # the verdicts' joins serve the hole table
        if debt is None:
            debt = self._judge(self.qrels, self._runs, joins)
        self._debt = debt
        self._table = _hole_table(self.qrels, self._runs, self.window, self.options, joins)
        t = self._table
        n = len(t)
        score = np.zeros(n)
        share = np.zeros(n, dtype=bool)  # the holes of unsettled pairs
        estimates = []
        best_pair = np.full(n, -1, dtype=np.int64)
        best_val = np.zeros(n)
        best_dir = np.zeros(n, dtype=np.int8)
        for j, res in enumerate(debt):
            ia, ib = self._names.index(res.system_a), self._names.index(res.system_b)
            if res.verdict != "depends":
                estimates.append(0)
                continue
            gain, direction, est, in_pair = _pair_gain(res, t, ia, ib, self.alpha)
            share |= in_pair
            estimates.append(min(est, res.n_holes))
            score += gain
            better = gain > best_val
            best_val[better], best_pair[better] = gain[better], j
            best_dir[better] = direction[better]
        self._best = (best_pair, best_dir)
        self._score = score
        self._verdicts = [self._verdict(r, e) for r, e in zip(debt, estimates, strict=True)]
        keep = np.flatnonzero(share)
        if self.order == "random":
            key = _random_keys(t.qnames.astype(object)[t.qcode[keep]],
                               np.asarray(t.docs.take(pa.array(keep)).to_pylist(),
                                          dtype=object), self.seed)
            self._ranked = keep[np.argsort(key, kind="stable")]
        else:  # impact descending; ties by query, then the best rank, then document
            top_rank = np.where(t.rank > 0, t.rank, np.iinfo(np.int64).max).min(axis=1)
            o = np.lexsort((t.doc_rank[keep], top_rank[keep], t.qcode[keep], -score[keep]))
            self._ranked = keep[o]

    def _verdict(self, r: HolesResult, estimate: int) -> PairVerdict:
        verdict: QueueVerdict = r.verdict
        if verdict == "holds" and r.winner != self._start[(r.system_a, r.system_b)]:
            verdict = "reversed"
        return PairVerdict(r.system_a, r.system_b, verdict, r.n_holes, estimate,
                           r.winner, r.text)

    def _item(self, i: int) -> QueueItem:
        t = self._table
        systems = tuple(s for s, k in zip(self._names, t.rank[i], strict=True) if k > 0)
        ranks = tuple(int(k) for k in t.rank[i] if k > 0)
        shown = ", ".join(f"{s} #{k}" for s, k in zip(systems, ranks, strict=True))
        where = (f"in the top {self.window} of {shown}" if self.window is not None
                 else f"ranked by {shown}")
        if self.order == "random":
            why = f"{where}; random order (seed {self.seed})"
        else:
            j, direction = int(self._best[0][i]), int(self._best[1][i])
            if j < 0:
                why = f"{where}; its label moves no unsettled verdict's bound"
            else:
                r = self._debt[j]
                p = t.prior[i]
                pair = f"{r.system_b} vs {r.system_a}"
                if direction > 0:  # raising lo: toward b winning (or a not winning)
                    wanted = f"towards {r.system_b}"
                else:
                    wanted = f"towards {r.system_a}"
                why = (f"{where}; {pair} depends on it: the label moves the least "
                       f"favourable case {wanted} (relevant with probability {p:.0%})")
        return QueueItem(str(t.qnames[t.qcode[i]]), str(t.docs[i].as_py()), systems, ranks, why,
                         float(self._score[i]))


# ---------------------------------------------------------------------------- helpers


@dataclass
class _Table:
    """Every hole of the runs' windows, once per (query, document), in (query, document
    code) order."""

    qnames: np.ndarray  # the queries of the windows, sorted (str)
    qcode: np.ndarray  # (holes,) int64: index into qnames
    docs: pa.Array  # (holes,) the document ids
    doc_rank: np.ndarray  # (holes,) int64: rank of the document id among the holes' ids
    rank: np.ndarray  # (holes, runs) int64: rank in each run's window, 0 = not in it
    prior: np.ndarray  # probability of a positive grade

    def __len__(self) -> int:
        return len(self.qcode)

    @property
    def query(self) -> np.ndarray:
        """The query id of each hole (object array)."""
        return self.qnames.astype(object)[self.qcode]

    @property
    def doc(self) -> np.ndarray:
        """The document id of each hole (object array)."""
        return np.asarray(self.docs.to_pylist(), dtype=object)


def _cut(run: Run, k: int) -> Run:
    """``run`` with each query's top ``k`` and the rows whose float32 score equals the
    k-th's (so that the top k under either trec_eval version's ties is in it), its id
    dictionary cut to the ids kept (in the same order, so ties still break the same)."""
    depth = np.diff(run.offsets)
    nq = run.n_queries
    if not nq or int(depth.max()) <= k:
        return run
    kth = run.offsets[:-1] + np.minimum(depth, k) - 1
    floor = run.score[kth].astype(np.float32)
    qidx = np.repeat(np.arange(nq), depth)
    keep = run.score.astype(np.float32) >= floor[qidx]
    rows = np.flatnonzero(keep)
    offsets = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(qidx[rows], minlength=nq), out=offsets[1:])
    # only the kept documents' ids: every join maps the run's whole id dictionary
    used, dcode = np.unique(run.dcode[rows], return_inverse=True)
    return Run(run.name, run.query_ids, run.doc_ids.take(pa.array(used)),
               run.qcode[rows], dcode.astype(run.dcode.dtype), run.score[rows], offsets,
               run.source, run.warnings, run.tag)


def _replaced(qrels: Qrels, query: pa.Array, doc: pa.Array) -> np.ndarray:
    """Mask of the entries of ``qrels`` whose (query, document) is one of the pairs."""
    import pyarrow.compute as pc

    out = np.zeros(len(qrels), dtype=bool)
    if not len(query) or not len(qrels):
        return out
    qi = np.asarray(pc.index_in(query, value_set=pa.array(qrels.query_ids.astype(str),
                                                           type=pa.string())
                                ).fill_null(-1), dtype=np.int64)
    di = np.asarray(pc.index_in(doc, value_set=qrels.doc_ids.cast(pa.string())
                                ).fill_null(-1), dtype=np.int64)
    found = (qi >= 0) & (di >= 0)
    n_docs = max(len(qrels.doc_ids), 1)
    keys = qrels.qcode.astype(np.int64) * n_docs + qrels.dcode  # sorted (from_arrays)
    want = qi[found] * n_docs + di[found]
    at = np.minimum(np.searchsorted(keys, want), len(keys) - 1)
    out[at[keys[at] == want]] = True
    return out


def _hole_table(qrels: Qrels, runs: list[Run], window: int | None, options: EvalOptions,
                joins: JoinCache) -> _Table:
    """The holes of every run's window, with the rank in each run and a prior.

    A hole's prior is :func:`_learned_prior`'s; with fewer than 20 judged documents in
    the windows it is its system's share at its rank (:func:`_prior`, the mean over the
    systems ranking it) times its query's factor, times the factor of the number of
    systems whose window holds it: documents several systems retrieve are relevant more
    often (the same ratio among the judged documents of the windows)."""
    plain = replace(options, judged_only=False)
    joined = [joins.ranked(qrels, run, plain) for run in runs]
    qnames = np.unique(np.concatenate([r.query_ids.astype(str) for r in joined])
                       if joined else np.zeros(0, dtype=str))
    qs, ds, sys_i, pos_i, grades, priors = [], [], [], [], [], []
    for s, (run, r) in enumerate(zip(runs, joined, strict=True)):
        in_window = np.ones(len(r.pos), dtype=bool) if window is None else r.pos <= window
        judged = in_window & (r.grade >= 0)
        by_rank, by_query = _prior(r, judged)
        rows = np.flatnonzero(in_window)
        names = r.query_ids.astype(str)
        run_q = np.searchsorted(run.query_ids.astype(str), names)
        run_q = np.minimum(run_q, max(run.n_queries - 1, 0))
        local = r.qidx[rows]
        run_rows = run.offsets[run_q][local] + r.pos[rows].astype(np.int64) - 1
        ds.append(run.doc_ids.take(pa.array(run.dcode[run_rows])).cast(pa.string()))
        qs.append(np.searchsorted(qnames, names).astype(np.int64)[local])
        sys_i.append(np.full(len(rows), s, dtype=np.int64))
        pos_i.append(r.pos[rows].astype(np.int64))
        grades.append(r.grade[rows])
        priors.append(np.minimum(by_rank[np.minimum(r.pos[rows], len(by_rank) - 1)]
                                 * by_query[local], 1.0))
    qcodes = np.concatenate(qs) if qs else np.zeros(0, dtype=np.int64)
    dcodes, ddict = dictionary_codes(pa.chunked_array(ds, type=pa.string()))
    key = qcodes * max(len(ddict), 1) + dcodes.astype(np.int64)
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    grade = np.concatenate(grades) if grades else np.zeros(0)
    hole = ~(np.bincount(inverse, weights=grade >= 0, minlength=len(uniq)) > 0)
    systems = np.bincount(inverse, minlength=len(uniq))
    g = np.where(grade >= 0, np.clip(grade, 0.0, None), 0.0)
    g = g / max(float(g.max()) if len(g) else 1.0, 1.0)
    judged_key = ~hole
    rel = np.bincount(inverse, weights=g, minlength=len(uniq))  # sum over the runs' rows
    per_key = rel / np.maximum(systems, 1)
    overall = (per_key[judged_key].sum() + 1.0) / (judged_key.sum() + 2.0)
    m_max = len(runs) + 1
    n_m = np.bincount(systems[judged_key], minlength=m_max).astype(np.float64)
    rel_m = np.bincount(systems[judged_key], weights=per_key[judged_key], minlength=m_max)
    by_systems = (rel_m + 2.0 * overall) / (n_m + 2.0) / overall
    rank = np.zeros((len(uniq), len(runs)), dtype=np.int64)
    s_all, p_all = np.concatenate(sys_i), np.concatenate(pos_i)
    rank[inverse, s_all] = p_all
    prior = np.bincount(inverse, weights=np.concatenate(priors), minlength=len(uniq)) / (
        np.maximum(systems, 1)) * by_systems[systems]
    key_q = qcodes[first]
    prior = _learned_prior(qrels, qnames, key_q, rank, per_key, judged_key, window, prior)
    keep = np.flatnonzero(hole)
    docs = ddict.take(pa.array(dcodes[first[keep]]))
    import pyarrow.compute as pc

    doc_rank = np.asarray(pc.rank(docs, sort_keys="ascending", tiebreaker="dense"),
                          dtype=np.int64) if len(docs) else np.zeros(0, dtype=np.int64)
    return _Table(qnames, key_q[keep], docs, doc_rank, rank[keep],
                  np.minimum(prior[keep], 1.0))


def _logit(p: np.ndarray) -> np.ndarray:
    """``log(p / (1 - p))``, ``p`` clipped to [0.001, 0.999]."""
    p = np.clip(p, 1e-3, 1.0 - 1e-3)
    return np.log(p / (1.0 - p))


def _learned_prior(qrels: Qrels, qnames: np.ndarray, kq: np.ndarray, rank: np.ndarray,
                   y: np.ndarray, judged: np.ndarray, window: int | None,
                   fallback: np.ndarray) -> np.ndarray:
    """Each window document's chance of a positive grade (weighted by its grade over the
    top grade) from a logistic model fitted on the judged documents of the windows.

    Features: the query's share of relevance among its other judged documents of the
    windows and among all its other judgments in the qrels (each smoothed toward the
    collection's share, on the logit scale), and per system whether the document is in
    its window and the log of its rank there. Fitted by a few Newton steps with a small
    ridge; the judged documents' own labels are left out of their query's shares."""
    n = len(kq)
    if judged.sum() < 20:
        return fallback
    nq = len(qnames)
    yj = np.where(judged, y, 0.0)
    # window shares, leaving the document's own label out
    cnt = np.bincount(kq, weights=judged.astype(np.float64), minlength=nq)
    rel = np.bincount(kq, weights=yj, minlength=nq)
    base = (yj.sum() + 1.0) / (judged.sum() + 2.0)
    c_loo = cnt[kq] - judged
    r_loo = rel[kq] - yj
    w_share = (r_loo + 4.0 * base) / (c_loo + 4.0)
    # the query's share over all its judgments in the qrels (deeper pools too)
    g = np.clip(qrels.grade, 0.0, None)
    top = max(float(g.max()) if len(g) else 1.0, 1.0)
    ok = qrels.grade >= 0
    qc = np.bincount(qrels.qcode[ok], minlength=len(qrels.query_ids)).astype(np.float64)
    qr = np.bincount(qrels.qcode[ok], weights=g[ok] / top, minlength=len(qrels.query_ids))
    at = np.searchsorted(qrels.query_ids.astype(str), qnames.astype(str))
    at = np.minimum(at, max(len(qrels.query_ids) - 1, 0))
    found = (qrels.query_ids.astype(str)[at] == qnames.astype(str)) if len(
        qrels.query_ids) else np.zeros(nq, dtype=bool)
    qcnt = np.where(found, qc[at] if len(qc) else 0.0, 0.0)[kq] - judged
    qrel = np.where(found, qr[at] if len(qr) else 0.0, 0.0)[kq] - yj
    all_base = (float(qr.sum()) + 1.0) / (float(qc.sum()) + 2.0)
    q_share = (qrel + 4.0 * all_base) / (qcnt + 4.0)
    deep = (window if window is not None else int(rank.max(initial=0))) + 1  # not ranked
    cols = [np.ones(n), _logit(w_share), _logit(q_share)]
    for s in range(rank.shape[1]):
        inw = rank[:, s] > 0
        cols.append(inw.astype(np.float64))
        cols.append(np.log2(1.0 + np.where(inw, rank[:, s], deep)))
    X = np.column_stack(cols)
    mu, sd = X[:, 1:].mean(axis=0), X[:, 1:].std(axis=0)
    sd[sd == 0] = 1.0
    X[:, 1:] = (X[:, 1:] - mu) / sd
    fit = np.flatnonzero(judged)
    if len(fit) > _FIT_ROWS:  # an even sample: nearly the same fit, and quick
        fit = fit[np.linspace(0, len(fit) - 1, _FIT_ROWS).astype(np.int64)]
    Xj, tj = X[fit], y[fit]
    beta = np.zeros(X.shape[1])
    beta[0] = float(_logit(np.array([base]))[0])
    ridge = np.full(X.shape[1], 1.0)
    ridge[0] = 0.0
    for _ in range(12):
        z = np.clip(Xj @ beta, -30, 30)
        pj = 1.0 / (1.0 + np.exp(-z))
        wgt = pj * (1.0 - pj) + 1e-9
        grad = Xj.T @ (tj - pj) - ridge * beta
        hess = (Xj * wgt[:, None]).T @ Xj + np.diag(ridge + 1e-9)
        step = np.linalg.solve(hess, grad)
        beta += step
        if float(np.abs(step).max()) < 1e-6:
            break
    return 1.0 / (1.0 + np.exp(-np.clip(X @ beta, -30, 30)))


def _prior(r: Ranked, judged: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chance of a relevant label weighted by its grade (the mean grade over the top
    grade) among the judged rows of the window: per rank (indexed by rank), and each
    query's factor (its judged rows' mean over the mean of all, both smoothed toward the
    mean of all). A hole's prior is the product, at most 1."""
    top = int(r.pos.max()) if len(r.pos) else 0
    g = np.clip(r.grade[judged], 0.0, None)
    g = g / max(float(g.max()) if len(g) else 1.0, 1.0)
    overall = (g.sum() + 1.0) / (len(g) + 2.0)
    n = np.bincount(r.pos[judged], minlength=top + 1).astype(np.float64)
    rel = np.bincount(r.pos[judged], weights=g, minlength=top + 1)
    by_rank = (rel + 2.0 * overall) / (n + 2.0)
    nq = np.bincount(r.qidx[judged], minlength=r.n_queries).astype(np.float64)
    relq = np.bincount(r.qidx[judged], weights=g, minlength=r.n_queries)
    by_query = (relq + 2.0 * overall) / (nq + 2.0) / overall
    return np.minimum(by_rank, 1.0), by_query


def _t_and_slope(d: np.ndarray) -> tuple[float, np.ndarray]:
    """The paired t statistic of ``d`` and its derivative with respect to each value."""
    n = len(d)
    if n < 2:
        return 0.0, np.zeros(n)
    m = float(d.mean())
    s = float(d.std(ddof=1))
    s = max(s, 1e-9)
    t = math.sqrt(n) * m / s
    slope = 1.0 / (math.sqrt(n) * s) - t * (d - m) / ((n - 1) * s * s)
    return t, slope


def _critical(alpha: float, n: int) -> float:
    from scipy.stats import t as student

    return float(student.ppf(1.0 - alpha / 2.0, max(n - 1, 1)))


def _pair_gain(res: HolesResult, t: _Table, ia: int, ib: int, alpha: float
               ) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """Each hole's score for one unsettled pair, the direction of the bound it moves most
    (+1: ``lo`` up, -1: ``hi`` down), the estimate of the labels the pair needs and the
    mask of the pair's holes on its compared queries."""
    n_holes = len(t)
    common = np.asarray(res.query_ids, dtype=object).astype(str)
    nq = len(common)
    gain = np.zeros(n_holes)
    direction = np.zeros(n_holes, dtype=np.int8)
    if nq == 0:
        return gain, direction, res.n_holes, np.zeros(n_holes, dtype=bool)
    of_name = np.minimum(np.searchsorted(common, t.qnames), nq - 1)  # one per query
    at = of_name[t.qcode]
    compared = (common[of_name] == t.qnames)[t.qcode] & ((t.rank[:, ia] > 0)
                                                       | (t.rank[:, ib] > 0))
    if nq < 2:
        return gain, direction, res.n_holes, compared
    p = t.prior
    effects = []
    for col, low, high in ((ia, res.low_a, res.high_a), (ib, res.low_b, res.high_b)):
        rank = t.rank[:, col]
        mine = compared & (rank > 0)
        disc = np.where(mine, 1.0 / np.log2(1.0 + np.maximum(rank, 1)), 0.0)
        total = np.bincount(at[mine], weights=disc[mine], minlength=nq)
        rng_q = np.nan_to_num(np.asarray(high) - np.asarray(low))
        eff = np.where(mine, rng_q[at] * disc / np.where(total[at] > 0, total[at], 1.0), 0.0)
        effects.append((np.nan_to_num(np.asarray(low)), eff))
    (low_a, eff_a), (low_b, eff_b) = effects
    # a relevant label changes d = b - a by delta; the least favourable case for b gives
    # the holes with delta < 0 a relevant label, the most favourable those with delta > 0
    delta = np.where(compared, eff_b - eff_a, 0.0)
    judged = low_b - low_a
    qat = at[compared]
    lo = judged + np.bincount(qat, weights=np.minimum(delta, 0.0)[compared], minlength=nq)
    hi = judged + np.bincount(qat, weights=np.maximum(delta, 0.0)[compared], minlength=nq)
    expected = judged + np.bincount(qat, weights=(p * delta)[compared], minlength=nq)
    c = _critical(alpha, nq)
    t_lo, s_lo = _t_and_slope(lo)
    t_hi, s_hi = _t_and_slope(hi)
    t_e, _ = _t_and_slope(expected)
    exact = _exact_t(res, nq)
    if exact is not None and res.winner == res.system_b:  # the bound the verdict tested
        t_lo = exact
    elif exact is not None:
        t_hi = exact
    needs: list[tuple[int, float, np.ndarray]] = []  # (direction, gap, expected change)
    # raising lo: a hole taken relevant there (delta < 0) turning out non-relevant, or one
    # taken non-relevant (delta > 0) turning out relevant; lowering hi, the other way round
    up = (np.where(delta > 0, p, 1.0 - p) * np.abs(delta)) * np.maximum(s_lo[at], 0.0)
    down = (np.where(delta < 0, p, 1.0 - p) * np.abs(delta)) * np.maximum(s_hi[at], 0.0)
    if t_e > c:
        needs.append((1, c - t_lo, up))
    elif t_e < -c:
        needs.append((-1, t_hi + c, down))
    else:
        if t_lo <= -c:
            needs.append((1, -c - t_lo, up))
        if t_hi >= c:
            needs.append((-1, t_hi - c, down))
        if not needs:  # the t model sees it settled, the exact verdict does not
            needs = [(1, _MIN_GAP, up), (-1, _MIN_GAP, down)]
    best = np.zeros(n_holes)
    for sign, gap, change in needs:
        change = np.where(compared, change, 0.0)
        part = change / max(gap, _MIN_GAP)
        gain += part
        better = part > best
        best[better], direction[better] = part[better], sign
    order = np.argsort(-gain, kind="stable")
    estimate = 0
    for _sign, gap, change in needs:
        reached = np.cumsum(np.where(compared, change, 0.0)[order])
        hit = int(np.searchsorted(reached, max(gap, _MIN_GAP)))
        estimate = max(estimate, hit + 1 if hit < len(order) else res.n_holes)
    return gain, direction, estimate, compared


def _exact_t(res: HolesResult, nq: int) -> float | None:
    """The t statistic (as ``b - a``) of the labeling the holes analysis tested for the
    winner as judged, from its p-value; ``None`` without a winner."""
    if res.winner is None:
        return None
    from scipy.stats import t as student

    p = res.worst_pvalue
    if math.isnan(p) or math.isnan(res.worst_mean_diff):
        return 0.0
    size = float(student.isf(p / 2.0, max(nq - 1, 1)))
    return math.copysign(size, res.worst_mean_diff)


def _random_keys(query: np.ndarray, doc: np.ndarray, seed: int) -> np.ndarray:
    """A fixed pseudo-random key per (query, document) for ``seed`` (siphash, keyed)."""
    import pandas as pd

    key = f"{seed:016d}"[-16:]
    text = np.char.add(np.char.add(query.astype(str), "\x00"), doc.astype(str)) \
        if len(query) else np.zeros(0, dtype=str)
    return pd.util.hash_array(np.asarray(text, dtype=object), hash_key=key)
