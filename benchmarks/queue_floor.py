"""The judge queue's floor: how few labels a clairvoyant order needs, against the impact and
random orders.

The simulation of :mod:`ireval_core.decisions.queue_simulation` hides a share of the top-k
judgments and drives the queue until the verdict of
:func:`~ireval_core.decisions.holes.judgment_debt` no longer depends on the remaining
holes. This script measures, per (seed, pair), three label counts:

* ``impact`` and ``random``: :func:`~ireval_core.decisions.queue_simulation.simulate_queue`
  itself (batches of ``--batch``);
* ``hindsight``: an order that knows every hidden grade and, one label at a time, judges
  the hole whose true grade moves the statistic the verdict needs the most, recomputed
  exactly after every label (not a first-order model): the t statistic of the per-query
  differences under the labeling least favourable to the full judgments' winner (raised
  past the critical value), or, when the full judgments have no winner, the two
  favourable labelings' t statistics (pulled inside it). It stops at the first label after
  which the verdict holds on the full judgments' verdict. A second search judges, at each
  step, the first j holes of one query together (by their own moves, the set with the
  largest move per label), which sees what only several labels of a query move together
  (nDCG's ideal ranking, the smaller of two labelings); the count is the fewer of the two.

The hindsight search evaluates every candidate exactly with a per-query model of the
verdict for nDCG@k (linear gain, the ideal from the qrels, the paired t-test), the same
labelings :func:`judgment_debt` tests (each system's holes at 0 or the top grade, the
shared ones relevant where the other system ranks them higher, the other system's holes
in the ideal). The model is checked: at the hindsight order's settle point the script asks
:func:`judgment_debt` itself, on the qrels with those labels, and stops with an error if it
does not say ``holds`` on the full judgments' winner.

Greedy searches are not an optimum: the hindsight count is the floor these searches find,
an estimate of what any order can reach under this verdict rule (on the sample a removal
pass over the one-by-one search's labels, trying to drop each, freed at most one label per
pair, and the second search 0 to 5 labels, with one pair where it needed 6 more).

Run from the repository root (the TREC-COVID data are ``../shared/realdata``)::

    .venv/bin/python benchmarks/queue_floor.py --data sample --unjudged holes
    .venv/bin/python benchmarks/queue_floor.py --data trec-covid --unjudged non-relevant --seeds 1
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ireval_core import Qrels, Run  # noqa: E402
from ireval_core.decisions.holes import judgment_debt  # noqa: E402
from ireval_core.decisions.queue_simulation import (  # noqa: E402
    complete_judgments,
    hide_judgments,
    simulate_queue,
)
from ireval_core.io import read_qrels, read_run  # noqa: E402

SAMPLE = ROOT / "sample_data"
COVID = ROOT.parent / "shared" / "realdata" / "trec-covid"


def _t(d: np.ndarray) -> float:
    """The paired t statistic of ``d`` (NaN when every value is 0, ±inf for a constant)."""
    n = len(d)
    if n < 2 or not d.any():
        return math.nan
    s = float(d.std(ddof=1))
    if s == 0:
        return math.copysign(math.inf, float(d.mean()))
    return math.sqrt(n) * float(d.mean()) / s


class PairModel:
    """One pair's per-query nDCG@k under the labelings of :func:`judgment_debt`.

    ``values`` holds per compared query: a's and b's values as judged, the difference
    ``b - a`` under the labeling least favourable to b (b's holes 0, a's the top grade)
    and under the one least favourable to a; the verdict reads them as
    :func:`judgment_debt` does (a winner as judged holds when its least favourable
    difference stays significant; no winner holds when neither favourable one is).
    """

    def __init__(self, start: dict, truth: dict, run_a: Run, run_b: Run,
                 queries: list[str], k: int, alpha: float = 0.05) -> None:
        from scipy.stats import t as student

        self.k = k
        self.disc = 1.0 / np.log2(np.arange(2, k + 2))
        self.rank = (_top(run_a, k), _top(run_b, k))
        self.queries = queries
        self.crit = float(student.ppf(1.0 - alpha / 2.0, len(queries) - 1))
        self.top = max(v for q in start.values() for v in q.values())
        self.known: dict[str, dict[str, float]] = {}
        self.holes: dict[str, set[str]] = {}
        self.truth: dict[str, dict[str, float]] = {}
        self.ideal: dict[str, list[float]] = {}  # the top k positive judged grades
        for q in queries:
            judged = {d: v for d, v in start.get(q, {}).items() if v >= 0}
            window = set(self.rank[0].get(q, {})) | set(self.rank[1].get(q, {}))
            self.known[q] = judged
            self.holes[q] = {d for d in window if d not in judged}
            self.truth[q] = {d: max(truth.get(q, {}).get(d, 0.0), 0.0) for d in window}
            self.ideal[q] = sorted((v for v in judged.values() if v > 0), reverse=True)[:k]
        self.values = np.array([self._query(q) for q in queries])
        self.at = {q: i for i, q in enumerate(queries)}

    def n_holes(self) -> int:
        return sum(len(h) for h in self.holes.values())

    def _ndcg(self, q: str, s: int, labels: dict[str, float]) -> float:
        known, ranked = self.known[q], self.rank[s].get(q, {})
        dcg = sum(known.get(d, labels.get(d, 0.0)) * self.disc[r - 1] for d, r in ranked.items())
        ideal = sorted(self.ideal[q] + [v for v in labels.values() if v > 0],
                       reverse=True)[:self.k]
        idcg = float(np.dot(ideal, self.disc[:len(ideal)]))
        return dcg / idcg if idcg > 0 else 0.0

    def _worst(self, q: str, w: int, only: tuple[set[str], set[str]], shared: set[str]
               ) -> tuple[float, float]:
        """Low of ``w`` and high of the other under the labeling least favourable to w."""
        o, g = 1 - w, self.top
        pos = self.rank
        rule = {d: (g if pos[o][q][d] < pos[w][q][d] else 0.0) for d in shared}
        w_zero = dict.fromkeys(only[w], 0.0)
        w_top = dict.fromkeys(only[w], g)
        o_zero = dict.fromkeys(only[o], 0.0)
        o_top = dict.fromkeys(only[o], g)
        low = min(self._ndcg(q, w, {**w_zero, **o_top, **rule}),
                  self._ndcg(q, w, {**w_top, **o_top, **rule}))
        high = max(self._ndcg(q, o, {**w_zero, **o_top, **rule}),
                   self._ndcg(q, o, {**w_zero, **o_zero, **rule}))
        return low, high

    def _query(self, q: str) -> tuple[float, float, float, float]:
        holes = self.holes[q]
        va, vb = self._ndcg(q, 0, {}), self._ndcg(q, 1, {})
        if not holes:
            return va, vb, vb - va, vb - va
        in_a, in_b = self.rank[0].get(q, {}), self.rank[1].get(q, {})
        only = ({d for d in holes if d not in in_b}, {d for d in holes if d not in in_a})
        shared = holes - only[0] - only[1]
        low_b, high_a = self._worst(q, 1, only, shared)
        low_a, high_b = self._worst(q, 0, only, shared)
        return va, vb, low_b - high_a, high_b - low_a

    def with_label(self, q: str, d: str, grade: float) -> tuple[float, ...]:
        """The query's values with ``d`` judged ``grade`` (the model unchanged)."""
        return self.with_labels(q, [(d, grade)])

    def with_labels(self, q: str, labels: list[tuple[str, float]]) -> tuple[float, ...]:
        """The query's values with each ``(doc, grade)`` judged (the model unchanged)."""
        saved = set(self.holes[q]), dict(self.known[q]), self.ideal[q]
        for d, grade in labels:
            self._judge(q, d, grade)
        out = self._query(q)
        self.holes[q], self.known[q], self.ideal[q] = saved
        return out

    def _judge(self, q: str, d: str, grade: float) -> None:
        self.holes[q].discard(d)
        self.known[q][d] = grade
        if grade > 0:
            self.ideal[q] = sorted(self.ideal[q] + [grade], reverse=True)[:self.k]

    def reveal(self, q: str, d: str) -> None:
        self._judge(q, d, self.truth[q][d])
        self.values[self.at[q]] = self._query(q)

    def verdict(self) -> tuple[bool, int | None]:
        """(settled, winner: 0 = a, 1 = b, None) as :func:`judgment_debt` says."""
        v, c = self.values, self.crit
        t = _t(v[:, 1] - v[:, 0])
        winner = None if math.isnan(t) or abs(t) <= c else int(t > 0)
        if not self.n_holes():
            return True, winner
        if winner is not None:
            tw = _t(v[:, 2 if winner == 1 else 3])
            return (not math.isnan(tw) and (tw > c if winner == 1 else tw < -c)), winner
        return all(math.isnan(x) or abs(x) <= c for x in (_t(v[:, 2]), _t(v[:, 3]))), None


def _top(run: Run, k: int) -> dict[str, dict[str, int]]:
    """Each query's top ``k`` documents of ``run`` with their ranks (rows are in ranking
    order)."""
    docs = run.doc_ids.to_pylist()
    out = {}
    for i, q in enumerate(run.query_ids.astype(str)):
        s = run.offsets[i]
        e = min(run.offsets[i + 1], s + k)
        out[q] = {docs[c]: r + 1 for r, c in enumerate(run.dcode[s:e])}
    return out


def _objective(model: PairModel, values: np.ndarray, winner: int | None) -> np.ndarray:
    """Per candidate (a row of per-query values each): how settled the verdict on
    ``winner`` is (larger: closer)."""
    n, c = len(model.queries), model.crit

    def t_of(col: np.ndarray) -> np.ndarray:
        m = col.mean(axis=1)
        s = np.maximum(col.std(axis=1, ddof=1), 1e-12)
        return math.sqrt(n) * m / s
    if winner == 1:
        return t_of(values[:, :, 2])
    if winner == 0:
        return -t_of(values[:, :, 3])
    return -(np.maximum(np.abs(t_of(values[:, :, 2])) - c, 0.0)
             + np.maximum(np.abs(t_of(values[:, :, 3])) - c, 0.0))


def hindsight(model: PairModel, winner: int | None) -> list[tuple[str, str]]:
    """The labels, in order, of the greedy clairvoyant order until the verdict holds."""
    done: list[tuple[str, str]] = []
    cache: dict[tuple[str, str], tuple[float, ...]] = {}
    while not model.verdict()[0]:
        keys = [(q, d) for q in model.queries for d in sorted(model.holes[q])]
        for q, d in keys:
            if (q, d) not in cache:
                cache[(q, d)] = model.with_label(q, d, model.truth[q][d])
        rows = np.broadcast_to(model.values, (len(keys),) + model.values.shape).copy()
        at = np.array([model.at[q] for q, _ in keys])
        rows[np.arange(len(keys)), at] = np.array([cache[x] for x in keys])
        q, d = keys[int(np.argmax(_objective(model, rows, winner)))]
        model.reveal(q, d)
        done.append((q, d))
        cache = {x: v for x, v in cache.items() if x[0] != q}
    return done


def hindsight_by_query(model: PairModel, winner: int | None) -> list[tuple[str, str]]:
    """A second clairvoyant search: at each step, for every query, the first j of its
    holes (by their own effect, j = 1, 2, ...) judged together; the set with the largest
    move per label is judged. It sees moves that only several labels of a query make
    together (nDCG's ideal, the minimum over two labelings)."""
    done: list[tuple[str, str]] = []
    while not model.verdict()[0]:
        base = float(_objective(model, model.values[None], winner)[0])
        best: tuple[float, str, list[str]] = (-math.inf, "", [])
        for q in model.queries:
            holes = sorted(model.holes[q])
            if not holes:
                continue
            row = model.at[q]
            alone = []
            for d in holes:
                v = model.values.copy()
                v[row] = model.with_label(q, d, model.truth[q][d])
                alone.append((float(_objective(model, v[None], winner)[0]), d))
            alone.sort(key=lambda x: -x[0])
            for j in range(1, len(alone) + 1):
                picked = [d for _, d in alone[:j]]
                v = model.values.copy()
                v[row] = model.with_labels(q, [(d, model.truth[q][d]) for d in picked])
                gain = (float(_objective(model, v[None], winner)[0]) - base) / j
                if gain > best[0]:
                    best = (gain, q, picked)
        _, q, picked = best
        for d in picked:
            model.reveal(q, d)
            done.append((q, d))
    return done


def _data(name: str) -> tuple[Qrels, list[Run]]:
    if name == "sample":
        return (read_qrels(SAMPLE / "qrels.txt"),
                [read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "neural", "narrow")])
    return (read_qrels(COVID / "qrels.covid-complete.txt.gz"),
            [read_run(COVID / f).renamed(n) for f, n in (
                ("beir-bm25.run.gz", "bm25"), ("beir-splade-pp-ed.run.gz", "splade"),
                ("covidex.t5.run.gz", "t5"), ("covidex.sim.run.gz", "sim"))])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", choices=["sample", "trec-covid"], default="sample")
    ap.add_argument("--unjudged", choices=["holes", "non-relevant"], default="holes")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--share", type=float, default=0.4)
    ap.add_argument("--batch", type=int, default=5)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--no-orders", action="store_true",
                    help="the hindsight count only (not the impact and random orders)")
    ap.add_argument("--one-by-one", action="store_true",
                    help="only the one-by-one hindsight search (the quicker one)")
    args = ap.parse_args(argv)
    truth, runs = _data(args.data)
    grades = truth.to_dict()
    measure = f"nDCG@{args.k}"
    rows = []
    for seed in range(args.seeds):
        start = hide_judgments(truth, runs, args.k, args.share, seed=seed,
                               unjudged=args.unjudged)
        given = start.to_dict()
        for i, ra in enumerate(runs):
            for rb in runs[i + 1:]:
                began = time.perf_counter()
                now = judgment_debt(start, [ra, rb], measure)[0]
                if now.verdict != "depends":
                    print(f"{seed} {ra.name} vs {rb.name}: settled before any label")
                    continue
                full = judgment_debt(complete_judgments(truth, [ra, rb], args.k),
                                     [ra, rb], measure)[0]
                win = None if full.winner is None else int(full.winner == rb.name)
                queries = [str(q) for q in now.query_ids]
                found = []
                searches = (hindsight,) if args.one_by_one else (hindsight, hindsight_by_query)
                for search in searches:
                    model = PairModel(given, grades, ra, rb, queries, args.k)
                    holes = model.n_holes()
                    labels = search(model, win)
                    check = {q: dict(v) for q, v in given.items()}
                    for q, d in labels:
                        check.setdefault(q, {})[d] = model.truth[q][d]
                    exact = judgment_debt(Qrels.from_dict(check), [ra, rb], measure)[0]
                    if exact.verdict != "holds" or exact.winner != full.winner:
                        raise SystemExit(f"the model disagrees with judgment_debt: {exact.text}")
                    found.append(len(labels))
                floor = min(found)
                line = (f"{seed} {ra.name} vs {rb.name} (full: {full.winner or 'no winner'}):"
                        f" {holes} holes, hindsight {floor}")
                if len(found) > 1:
                    line += f" (one by one {found[0]}, by query {found[1]})"
                if not args.no_orders:
                    impact, random = (simulate_queue(truth, start, ra, rb, measure, order=o,
                                                     batch=args.batch, seed=seed)
                                      for o in ("impact", "random"))
                    rows.append((floor / random.labels, impact.labels / random.labels))
                    line += (f", impact {impact.labels}, random {random.labels}: "
                             f"hindsight/random {rows[-1][0]:.2f}, impact/random "
                             f"{rows[-1][1]:.2f}")
                print(line + f" ({time.perf_counter() - began:.0f} s)", flush=True)
    if rows:
        print(f"{args.data} ({args.unjudged}), median over {len(rows)} (seed, pair): "
              f"hindsight/random {statistics.median(r[0] for r in rows):.2f}, "
              f"impact/random {statistics.median(r[1] for r in rows):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
