"""How many labels a queue order needs: hide judgments, judge in the queue's order.

The simulation behind the judge queue's promise (:mod:`.queue`): from qrels taken as
the truth (a document in a system's window but absent from them counts as non-relevant,
grade 0), hide a share of the judgments of the documents in the runs' windows (the
documents never judged stay holes too, or are judged 0 first so that the holes are
exactly the hidden judgments), then
drive :class:`~.queue.JudgeQueue` batch by batch, revealing the hidden grade of every
document it asks for, until the verdict no longer depends on the remaining holes. The
result says how many labels that took, whether the settled verdict (the winner, or
none) equals the verdict on the truth, and the same for the ``random`` order.
``benchmarks/queue_floor.py`` adds what an order knowing every hidden grade needs under
the same verdict rule (a greedy search over the true grades: an estimate of the floor of
any order, not a proven minimum).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from ..data import Qrels, Run, join
from ..decisions.holes import judgment_debt
from ..errors import invalid_parameter
from ..options import EvalOptions
from .queue import JudgeQueue

__all__ = ["SimulationResult", "complete_judgments", "hide_judgments", "simulate_queue"]


@dataclass(frozen=True)
class SimulationResult:
    """One pair's labels to a settled verdict under one order.

    Attributes
    ----------
    order : str
        ``impact`` or ``random``.
    labels : int
        Labels given until the verdict settled (all the holes when it never did).
    holes : int
        Holes at the start (unjudged documents in the pair's windows).
    settled : bool
        The verdict settled before the holes ran out.
    winner, truth_winner : str or None
        The settled verdict's winner and the winner on the truth.
    """

    order: str
    labels: int
    holes: int
    settled: bool
    winner: str | None
    truth_winner: str | None

    @property
    def correct(self) -> bool:
        """The settled verdict is the verdict on the truth."""
        return self.settled and self.winner == self.truth_winner


def hide_judgments(truth: Qrels, runs: Sequence[Run], k: int, share: float, *,
                   seed: int = 0, unjudged: str = "holes") -> Qrels:
    """``truth`` without a random ``share`` of the judgments of the documents in some
    run's top ``k`` (the judgments outside every window stay).

    ``unjudged`` says what becomes of the documents of the windows that ``truth`` never
    judged: ``holes`` (they stay unjudged, so the holes are they and the hidden
    judgments), or ``non-relevant`` (they are judged 0 first, as the simulation's truth
    counts them, so the holes are exactly the hidden judgments)."""
    if not 0.0 <= share <= 1.0:
        raise invalid_parameter("share", "hide_judgments", "a number in [0, 1]", share)
    if unjudged not in ("holes", "non-relevant"):
        raise invalid_parameter("unjudged", "hide_judgments", "'holes' or 'non-relevant'",
                                unjudged)
    if unjudged == "non-relevant":
        truth = complete_judgments(truth, runs, k)
    n = len(truth)
    in_window = np.zeros(n, dtype=bool)
    order = np.argsort(truth.qcode.astype(np.int64) * max(len(truth.doc_ids), 1)
                       + truth.dcode, kind="stable")
    keys = (truth.qcode.astype(np.int64) * max(len(truth.doc_ids), 1) + truth.dcode)[order]
    for run in runs:
        r = join(truth, run)
        rows = np.flatnonzero((r.pos <= k) & (r.grade >= 0))
        q = np.searchsorted(truth.query_ids.astype(str), r.query_ids.astype(str)[r.qidx[rows]])
        run_q = np.searchsorted(run.query_ids.astype(str), r.query_ids.astype(str))
        docs = run.doc_ids.take(pa.array(run.dcode[run.offsets[run_q][r.qidx[rows]]
                                                   + r.pos[rows].astype(np.int64) - 1]))
        d = _codes_in(truth.doc_ids, docs)
        key = q.astype(np.int64) * max(len(truth.doc_ids), 1) + d
        at = np.minimum(np.searchsorted(keys, key), max(n - 1, 0))
        found = (d >= 0) & (keys[at] == key)
        in_window[order[at[found]]] = True
    rows = np.flatnonzero(in_window)
    rng = np.random.default_rng(seed)
    hidden = rng.choice(rows, size=int(round(share * len(rows))), replace=False)
    keep = np.ones(n, dtype=bool)
    keep[hidden] = False
    return Qrels.from_arrays(truth.query_ids[truth.qcode[keep]],
                             truth.doc_ids.take(pa.array(truth.dcode[keep])),
                             truth.grade[keep], source=truth.source)


def _codes_in(dictionary: pa.Array, values: pa.Array) -> np.ndarray:
    import pyarrow.compute as pc

    found = pc.index_in(values.cast(pa.string()), value_set=dictionary.cast(pa.string()))
    return np.asarray(found.fill_null(-1), dtype=np.int64)


def simulate_queue(truth: Qrels, start: Qrels, run_a: Run, run_b: Run, measure: str, *,
                   order: str = "impact", batch: int = 5, seed: int = 0,
                   options: EvalOptions | None = None, test: str = "t",
                   alpha: float = 0.05) -> SimulationResult:
    """Judge the pair's holes in ``order``, ``batch`` at a time, with grades from
    ``truth`` (0 for a document absent from it), until the verdict settles."""
    queue = JudgeQueue(start, [run_a, run_b], measure, options=options, test=test,
                       alpha=alpha, order=order, seed=seed)
    truth_res = judgment_debt(complete_judgments(truth, [run_a, run_b], queue.window),
                              [run_a, run_b], measure, options=options, test=test,
                              alpha=alpha)[0]
    grades = truth.to_dict()
    holes = queue.verdicts[0].remaining_holes
    while not queue.settled and len(queue):
        items = queue.next(batch)
        queue.add([(i.query, i.doc, grades.get(i.query, {}).get(i.doc, 0.0)) for i in items])
    v = queue.verdicts[0]
    return SimulationResult(order, queue.n_labels, holes, v.verdict != "depends", v.winner,
                            truth_res.winner)


def complete_judgments(truth: Qrels, runs: Sequence[Run], k: int | None) -> Qrels:
    """``truth`` with every document of the runs' windows it lacks graded 0 (and its
    pooled-but-unjudged entries, negative grades, graded 0)."""
    q = list(truth.query_ids[truth.qcode])
    d = truth.doc_ids.take(pa.array(truth.dcode)).to_pylist()
    g = list(np.maximum(truth.grade, 0.0))
    seen = set(zip(q, d, strict=True))
    judged = frozenset(truth.query_ids.tolist())
    for run in runs:
        depth = np.diff(run.offsets)
        within = np.arange(len(run.score)) - np.repeat(run.offsets[:-1], depth)
        rows = np.flatnonzero(within < k) if k is not None else np.arange(len(run.score))
        rq = run.query_ids[run.qcode[rows]]
        rd = run.doc_ids.take(pa.array(run.dcode[rows])).to_pylist()
        for qi, di in zip(rq, rd, strict=True):
            if qi in judged and (qi, di) not in seen:
                seen.add((qi, di))
                q.append(qi)
                d.append(di)
                g.append(0.0)
    return Qrels.from_arrays(np.asarray(q, dtype=object), d, np.asarray(g),
                             source=truth.source)

