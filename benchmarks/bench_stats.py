"""Benchmark of the batched significance tests in ``ireval_core.stats``.

Workload: 5 systems x 3 measures x 5,000 queries, all 10 system pairs per measure,
tests t, Wilcoxon, sign and Fisher randomization (10,000 resamples), in one
:func:`ireval_core.stats.compare_measures` call. Target: under 2 s on 2 cores.

Run from the repository root::

    .venv/bin/python benchmarks/bench_stats.py [--repeat 3] [--queries 5000]

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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=5_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    root = Path(__file__).resolve().parents[1]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
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
