"""Benchmark of the batched significance tests in ``ireval_core.stats``.

Workload: 5 systems x 3 measures x 5,000 queries, all 10 system pairs per measure,
tests t, Wilcoxon, sign and Fisher randomization (10,000 resamples), in one
:func:`ireval_core.stats.compare_measures` call. Target: under 2 s on 2 cores.

With ``--decisions``, the decision evidence of issue 22 instead
(:func:`ireval_core.decisions.decision_evidence`): 10 systems x 5,000 queries (runs of
100 documents per query from a pool of 200, 60 of them judged, grades 0-3), nDCG@10,
all 45 pairs: judgment debt (holes, bounds, verdicts), URisk/TRisk, non-inferiority
at 1% (t and bootstrap) and rank confidence with the ANOVA and the mixed model,
10,000 resamples; the runs are read and joined before the clock starts (the app's
join cache). Target: under 3 s on 2 cores.

With ``--holes``, the judgment debt alone at scale: the three 7M-line runs of
``benchmarks/make_data.py``'s app folder (``benchmarks/data/7M-app/``, written on the
first call), nDCG@10, the 3 pairs (:func:`ireval_core.decisions.judgment_debt`: holes,
bounds, the verdicts' t tests); the runs are read and joined before the clock starts.
Target: under 2 s on 2 cores.

Run from the repository root::

    .venv/bin/python benchmarks/bench_stats.py [--repeat 3] [--queries 5000]
    .venv/bin/python benchmarks/bench_stats.py --decisions [--repeat 3]
    .venv/bin/python benchmarks/bench_stats.py --holes [--repeat 3] [--size 7M]

Data are synthetic and seeded: per-query measure values in [0, 1], with query
difficulty shared by all systems, small system effects, and P@10-like measures on a
0.1 grid (so that exact ties occur, as in real runs).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

N_SYSTEMS = 5
MEASURES = ("AP", "nDCG@10", "P@10")
TESTS = ("t", "wilcoxon", "sign", "randomization")


def make_scores(n_queries: int, seed: int = 20240) -> dict[str, dict[str, np.ndarray]]:
    """Seeded synthetic per-query values: measure -> system -> values."""
    rng = np.random.default_rng(seed)
    difficulty = rng.beta(2.0, 3.0, size=n_queries)
    effects = np.linspace(0.0, 0.04, N_SYSTEMS)
    scores: dict[str, dict[str, np.ndarray]] = {}
    for measure in MEASURES:
        systems = {}
        for i, effect in enumerate(effects):
            values = np.clip(difficulty + effect + rng.normal(0.0, 0.15, n_queries), 0.0, 1.0)
            if measure == "P@10":
                values = np.round(values * 10.0) / 10.0
            systems[f"sys{i}"] = values
        scores[measure] = systems
    return scores


def make_runs(n_queries: int, n_systems: int = 10, seed: int = 20240) -> tuple[Any, list[Any]]:
    """Seeded synthetic qrels and runs for the decision evidence (see the docstring)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from ireval_core import Qrels, Run

    pool, judged, depth = 200, 60, 100
    rng = np.random.default_rng(seed)
    grades = rng.choice([0, 0, 0, 1, 1, 2, 3], size=(n_queries, pool)).astype(float)
    qids = np.array([f"q{i:05d}" for i in range(n_queries)], dtype=object)

    def docids(q: np.ndarray, d: np.ndarray) -> pa.Array:
        return pc.binary_join_element_wise(pa.array(np.char.add("d", q.astype(str))),
                                           pa.array(np.char.add("_", d.astype(str))), "")

    pick = np.argsort(rng.random((n_queries, pool)), axis=1)[:, :judged]
    q, d = np.repeat(np.arange(n_queries), judged), pick.ravel()
    qrels = Qrels.from_arrays(qids[q], docids(q, d), grades[q, d])
    runs = []
    for s in range(n_systems):
        pick = np.argsort(rng.random((n_queries, pool)), axis=1)[:, :depth]
        q, d = np.repeat(np.arange(n_queries), depth), pick.ravel()
        score = grades[q, d] * (0.5 + 0.02 * s) + rng.normal(0.0, 1.0, len(q))
        runs.append(Run.from_arrays(qids[q], docids(q, d), score, name=f"sys{s}"))
    return qrels, runs


def _load() -> str:
    """The 1-minute load average (the cores are shared: wall times depend on it)."""
    try:
        import os

        return f"{os.getloadavg()[0]:.1f}"
    except (OSError, AttributeError):
        return "unknown"


def bench_decisions(args: argparse.Namespace) -> int:
    from ireval_core import evaluate
    from ireval_core.data import JoinCache
    from ireval_core.decisions import decision_evidence

    start = time.perf_counter()
    qrels, runs = make_runs(args.queries)
    joins = JoinCache()
    evaluate(qrels, runs, ["nDCG@10"], joins=joins)
    print(f"data: {len(runs)} runs x {args.queries} queries, {len(runs[0]):,} lines each, "
          f"{len(qrels):,} judgments; built and joined in {time.perf_counter() - start:.1f} s")
    times, cpu = [], []
    ev = None
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        ev = decision_evidence(qrels, runs, ["nDCG@10"], margin="1%", rank_confidence=True,
                               n_resamples=args.resamples, rng=12345, joins=joins)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    assert ev is not None
    print(f"decision_evidence: nDCG@10, {len(ev.pairs)} pairs, holes + risk + "
          f"non-inferiority (t, bootstrap) + rank confidence, ANOVA, mixed model, "
          f"B={args.resamples}")
    print(f"wall time: best {min(times):.3f} s, median {statistics.median(times):.3f} s, "
          f"worst {max(times):.3f} s over {args.repeat} runs (CPU time of the process: "
          f"{min(cpu):.3f}-{max(cpu):.3f} s; load average {_load()})")
    print(ev.measures[0].ranking.sentences()[0] if ev.measures[0].ranking else "")
    return 0


def bench_holes(args: argparse.Namespace) -> int:
    from make_data import app_folder

    from ireval_core import evaluate, read_qrels, read_runs
    from ireval_core.data import JoinCache
    from ireval_core.decisions import judgment_debt

    start = time.perf_counter()
    folder = app_folder(args.size)
    qrels = read_qrels(folder / "qrels.txt")
    runs = [r for p in sorted(folder.glob("run_*.txt")) for r in read_runs(p)]
    joins = JoinCache()
    evaluate(qrels, runs, ["nDCG@10"], joins=joins)
    print(f"data: {len(runs)} runs, {', '.join(f'{len(r):,}' for r in runs)} lines, "
          f"{len(qrels):,} judgments; read and joined in {time.perf_counter() - start:.1f} s")
    times, cpu = [], []
    debt = []
    for _ in range(args.repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        debt = judgment_debt(qrels, runs, ["nDCG@10"], joins=joins)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    print(f"judgment_debt: nDCG@10, {len(debt)} pairs, holes + bounds + verdicts (t)")
    for h in debt:
        print(f"  {h.system_b} vs {h.system_a}: {h.n_holes:,} holes, {h.verdict}")
    print(f"wall time: best {min(times):.3f} s, median {statistics.median(times):.3f} s, "
          f"worst {max(times):.3f} s over {args.repeat} runs (CPU time of the process: "
          f"{min(cpu):.3f}-{max(cpu):.3f} s; load average {_load()})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--decisions", action="store_true",
                        help="time the decision evidence of issue 22 instead")
    parser.add_argument("--holes", action="store_true",
                        help="time the judgment debt of three runs of --size instead")
    parser.add_argument("--size", default="7M", help="make_data size of --holes (default 7M)")
    args = parser.parse_args(argv)

    root = Path(__file__).resolve().parents[1]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    if args.decisions:
        return bench_decisions(args)
    if args.holes:
        return bench_holes(args)
    from ireval_core.stats import compare_measures

    scores = make_scores(args.queries)
    times = []
    rows = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        rows = compare_measures(
            scores, tests=TESTS, correction="holm", n_resamples=args.resamples, rng=12345
        )
        times.append(time.perf_counter() - start)
    n_pairs = N_SYSTEMS * (N_SYSTEMS - 1) // 2
    print(
        f"compare_measures: {N_SYSTEMS} systems x {len(MEASURES)} measures x "
        f"{args.queries} queries, {n_pairs} pairs, tests={','.join(TESTS)}, "
        f"randomization B={args.resamples}"
    )
    print(f"rows: {len(rows)}")
    print(
        f"wall time: best {min(times):.3f} s, median {statistics.median(times):.3f} s "
        f"over {args.repeat} runs"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
