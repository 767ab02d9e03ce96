"""Kernel time of every registered measure on one joined run, relative to nDCG@10.

The run and the qrels are read and joined once (trec_eval's default options); then each
measure's kernel (``Family.kernel(ranked, measure, options)``, what ``evaluate`` calls
per measure after the join) is timed alone, best of N, as wall-clock and as the
process's CPU time (``time.process_time``: the kernels are single-threaded numpy, and
on a shared machine the CPU time is the steadier of the two, as time spent waiting for a
core is not counted). The repetitions go round the measures (one call of each per
round, in a new seeded order each round), so a burst of load from other processes hits
every measure alike. The join
itself and the averaging over queries are not timed.

Measures: every family computed from qrels (``measures.families()``), at its default
parameters, without a cutoff and at @10 where it takes one (IPrec at recall 0.5), plus
trec_eval's parameterised long-tail names (``Rprec_mult_2``, ``rbp``, gain maps, ...).

    python benchmarks/bench_kernels.py [--size 500k] [--shape ties] [--reps 15]
                                       [--only G nDCGRel ...] [--json out.json]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import make_data  # noqa: E402
import numpy as np  # noqa: E402

from ireval_core import EvalOptions, read_qrels, read_runs  # noqa: E402
from ireval_core.data import join  # noqa: E402
from ireval_core.measures import Measure, parse_measure  # noqa: E402
from ireval_core.measures.registry import families  # noqa: E402

BASELINE = "nDCG@10"
EXTRAS = ("Rprec(mult=2)", "RBP(p=0.9,gain=graded)", "RBPResid(p=0.5)",
          "Utility(a=2,b=-1)", "G(gain={1:3,2:9})", "nDCGRel(gain={1:3,2:9})",
          "RnDCG(gain={1:3,2:9})", "nDCG(gain=exp)@10")
"""Parameterised forms worth their own line: trec_eval's Rprec_mult_2, rbp, gain maps."""


def specs(only: list[str] | None = None) -> list[Measure]:
    """The measures timed: every qrels family's default forms, then :data:`EXTRAS`."""
    texts: list[str] = [BASELINE]
    for name, fam in families().items():
        if fam.cutoff == "recall":
            texts.append(f"{name}@0.5")
            continue
        if fam.cutoff in ("none", "optional"):
            texts.append(name)
        if fam.cutoff in ("optional", "required"):
            texts.append(f"{name}@10")
    texts.extend(EXTRAS)
    out: list[Measure] = []
    for t in texts:
        m = parse_measure(t)
        if m not in out and (only is None or str(m) == BASELINE or m.name in only
                             or str(m) in only):
            out.append(m)
    return out


def load() -> str:
    """``/proc/loadavg``'s 1/5/15-minute averages (the machine is shared)."""
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="500k", choices=list(make_data.SIZES))
    ap.add_argument("--shape", default="ties", choices=make_data.SHAPES)
    ap.add_argument("--reps", type=int, default=15, help="repetitions per measure (best kept)")
    ap.add_argument("--only", nargs="+", help="family names or specs to time (and nDCG@10)")
    ap.add_argument("--json", type=Path, help="also write every sample (ms) here")
    args = ap.parse_args(argv)

    make_data.ensure([args.size], shape=args.shape)
    files = make_data.paths(args.size, args.shape)
    qrels = read_qrels(files["qrels"])
    run = read_runs(files["run"])[0]
    options = EvalOptions()
    ranked = join(qrels, run, options=options)
    measures = specs(args.only)
    for m in measures:  # a first call outside the timing: imports, cached properties
        m.family.kernel(ranked, m, options)

    load_before = load()
    wall: dict[str, list[float]] = {str(m): [] for m in measures}
    cpu: dict[str, list[float]] = {str(m): [] for m in measures}
    order = np.random.default_rng(0)
    gc.disable()  # the kernels make no reference cycles: nothing for the collector to do
    try:
        for _ in range(args.reps):
            for i in order.permutation(len(measures)):  # no measure always runs first
                m = measures[i]
                t, c = time.perf_counter(), time.process_time()
                m.family.kernel(ranked, m, options)
                cpu[str(m)].append((time.process_time() - c) * 1e3)
                wall[str(m)].append((time.perf_counter() - t) * 1e3)
    finally:
        gc.enable()
    best = {k: min(v) for k, v in wall.items()}
    best_cpu = {k: min(v) for k, v in cpu.items()}
    base, base_cpu = best[BASELINE], best_cpu[BASELINE]

    print(f"{args.size}-{args.shape}: {len(ranked.pos):,} ranked rows, {ranked.n_queries} "
          f"queries; best of {args.reps}; load average {load_before} before, {load()} after "
          f"({os.cpu_count()} CPUs)\n")
    print("| measure | trec_eval | CPU ms | × nDCG@10 | wall ms | × nDCG@10 |")
    print("|---|---|---:|---:|---:|---:|")
    for m in measures:
        k = str(m)
        print(f"| `{k}` | {m.family.trec or ''} | {best_cpu[k]:.2f} | "
              f"{best_cpu[k] / base_cpu:.2f} | {best[k]:.2f} | {best[k] / base:.2f} |")
    if args.json:
        args.json.write_text(json.dumps({"size": args.size, "shape": args.shape,
                                         "reps": args.reps, "load": [load_before, load()],
                                         "wall_ms": wall, "cpu_ms": cpu}, indent=1))


if __name__ == "__main__":
    main()
