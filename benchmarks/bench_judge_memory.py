"""Memory and CPU of the labeling pages' bootstraps as rounds, systems and resamples grow.

Every measurement runs in a fresh child process (this script with ``--child``), which
builds its data, notes its resident set (``resource.getrusage(RUSAGE_SELF).ru_maxrss``),
runs one stage and reports its wall and CPU seconds (``time.process_time``) and its peak
RSS: absolute and Δ over the resident set before the stage. Stages:

* ``judge``: :func:`ireval_core.labels.judge_report` as the Model judge page calls it
  (both rater-noise trends, agreement, bias and order intervals), no size limit;
* ``tau``: the order table's kernel alone, :func:`ireval_core.labels.kernels.tau_b_many`
  on ``resamples x points`` values (sort-based counts);
* ``tau-pairwise``: the pairwise kernel it replaced (as of 97762a0, kept in
  ``tests/_reference_kernels.py``), chunked by resamples so that it fits in memory;
* ``noise``: :func:`ireval_core.labels.noise_trend` of the people (the Trend page's
  rater-noise interval);
* ``anchors``: :func:`ireval_core.labels.anchor_drift` on ``rounds`` rounds of
  ``--items`` anchor items, each labeled by every rater;
* ``agreement``: :func:`ireval_core.labels.agreement.rater_report` (the Raters page;
  no bootstrap).

Data: ``rounds`` x ``systems`` lists of ``--queries`` queries x the top 5, labeled 0-3 by
``--raters`` people and a model judge ``llm`` (seeded). Run from the repository root::

    .venv/bin/python benchmarks/bench_judge_memory.py                 # the README's table
    .venv/bin/python benchmarks/bench_judge_memory.py --only judge tau
    git archive 97762a0 ireval_core | tar -x -C /tmp/old     # the code before, to compare
    .venv/bin/python benchmarks/bench_judge_memory.py --child judge --rounds 100 \
        --systems 2 --tree /tmp/old
    .venv/bin/python benchmarks/bench_judge_memory.py --child judge --rounds 500 \\
        --systems 2 --resamples 10000                                 # one measurement

Prints a Markdown table (and the load average; the machine is shared, so CPU time and
peak RSS are the steady figures, wall time is not).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
JUDGE = "llm"

# (stage, rounds, systems, resamples, people) of the table in benchmarks/README.md
PLAN = [
    ("judge", 500, 2, 2000, 2), ("judge", 200, 5, 2000, 2), ("judge", 500, 2, 4000, 2),
    ("judge", 500, 2, 10000, 2), ("judge", 500, 2, 2000, 5),
    ("tau", 500, 2, 10000, 2), ("tau", 2500, 2, 2000, 2), ("tau-pairwise", 500, 2, 100, 2),
    ("noise", 500, 2, 2000, 2), ("noise", 500, 2, 10000, 2), ("noise", 500, 2, 2000, 5),
    ("anchors", 24, 1, 2000, 2), ("anchors", 24, 1, 10000, 2), ("anchors", 24, 1, 2000, 5),
    ("agreement", 500, 2, 0, 2), ("agreement", 500, 2, 0, 5),
]


def people(n: int) -> list[str]:
    return [f"p{i}" for i in range(n)]


def frame(rounds: int, systems: int, queries: int, shown: int = 5, seed: int = 36,
          raters: int = 2):
    """The labeling rows (a pandas DataFrame), vectorised: ``raters`` people and the
    judge label every shown result."""
    import pandas as pd

    rng = np.random.default_rng(seed)
    n = rounds * systems * queries * shown
    r = np.repeat(np.arange(rounds), systems * queries * shown)
    s = np.tile(np.repeat(np.arange(systems), queries * shown), rounds)
    q = np.tile(np.repeat(np.arange(queries), shown), rounds * systems)
    p = np.tile(np.arange(1, shown + 1), rounds * systems * queries)
    true = rng.integers(0, 4, n)
    parts = []
    for name in [*people(raters), JUDGE]:
        y = np.clip(true + (rng.random(n) < 0.2) * rng.choice([-1, 1], n), 0, 3)
        parts.append(pd.DataFrame({
            "round": np.char.add("r", (r + 1000).astype(str)),
            "system": np.char.add("s", s.astype(str)),
            "query": np.char.add("q", q.astype(str)),
            "doc": np.char.add("d", (q * 100 + p + 10 * s).astype(str)),
            "position": p, "rater": name, "label": y}))
    return pd.concat(parts, ignore_index=True)


def anchor_table(rounds: int, items: int, seed: int = 36, raters: int = 2):
    import pandas as pd

    rng = np.random.default_rng(seed)
    true = rng.integers(0, 4, items)
    rows = [pd.DataFrame({"round": f"r{1000 + r}", "query": np.char.add(
        "q", np.arange(items).astype(str)), "doc": "d", "rater": name,
        "label": np.clip(true + (rng.random(items) < 0.2), 0, 3)})
        for r in range(rounds) for name in people(raters)]
    return pd.concat(rows, ignore_index=True)


def child(args: argparse.Namespace) -> int:
    sys.path.insert(0, str(ROOT))
    if args.tree:  # another checkout's ireval_core (an older commit, to compare)
        sys.path.insert(0, str(Path(args.tree).resolve()))
    stage, rounds, systems, b = args.child, args.rounds, args.systems, args.resamples
    work = None
    if stage in ("judge", "noise", "agreement"):
        import ireval_core.labels as labels
        from ireval_core.labels import judge_report, noise_trend
        from ireval_core.labels.agreement import rater_report

        # an older tree builds judgments from a frame with Judgments.from_frame
        from_frame = getattr(labels, "judgments_from_frame", None) or labels.Judgments.from_frame
        j = from_frame(frame(rounds, systems, args.queries, raters=args.raters))
        if stage == "judge":
            extra = {} if args.tree else {"max_work": None}  # older trees have no limit

            def work() -> object:
                return judge_report(j, JUDGE, n_resamples=b, **extra)
        elif stage == "noise":
            only_people = j.select(raters=people(args.raters))

            def work() -> object:
                return noise_trend(only_people, n_resamples=b)
        else:
            codes = j.label_codes()

            def work() -> object:
                return rater_report(codes)
    elif stage in ("tau", "tau-pairwise"):
        rng = np.random.default_rng(36)
        m = rounds * systems
        x = rng.normal(size=(b, m))
        y = x + rng.normal(size=(b, m))
        if stage == "tau":
            from ireval_core.labels.kernels import tau_b_many

            def work() -> object:
                return tau_b_many(x, y)
        else:
            sys.path.insert(0, str(ROOT / "tests"))
            from _reference_kernels import tau_b_many_97762a0

            rows = max(1, (1 << 22) // max(m * (m - 1) // 2, 1))

            def work() -> object:
                return np.concatenate([tau_b_many_97762a0(x[lo:lo + rows], y[lo:lo + rows])
                                       for lo in range(0, b, rows)])
    elif stage == "anchors":
        from ireval_core.labels import anchor_drift

        table = anchor_table(rounds, args.items, raters=args.raters)

        def work() -> object:
            return anchor_drift(table, n_resamples=b)
    else:
        raise SystemExit(f"unknown stage {stage!r}")
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t, c = time.perf_counter(), time.process_time()
    work()
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"stage": stage, "rounds": rounds, "systems": systems, "resamples": b,
                      "raters": args.raters,
                      "wall": wall, "cpu": cpu, "before_mb": before, "peak_mb": peak,
                      "load": os.getloadavg()[0]}))
    return 0


def measure(stage: str, rounds: int, systems: int, b: int, raters: int, queries: int,
            items: int, tree: str | None = None) -> dict:
    out = subprocess.run([sys.executable, __file__, "--child", stage, "--rounds", str(rounds),
                          "--systems", str(systems), "--resamples", str(b), "--queries",
                          str(queries), "--items", str(items), "--raters", str(raters),
                          *(["--tree", tree] if tree else [])],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--rounds", type=int, default=500)
    parser.add_argument("--systems", type=int, default=2)
    parser.add_argument("--resamples", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=10)
    parser.add_argument("--items", type=int, default=200, help="anchor items per round")
    parser.add_argument("--raters", type=int, default=2, help="people (besides the judge)")
    parser.add_argument("--only", nargs="*", default=None, help="stages of the plan to run")
    parser.add_argument("--tree", default=None, help="import ireval_core from this checkout "
                        "(e.g. an older commit's, extracted with git archive)")
    args = parser.parse_args(argv)
    if args.child:
        return child(args)
    print("| stage | rounds x systems (points) | people | resamples | CPU s | wall s "
          "| peak RSS MB | Δ MB | load |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for stage, rounds, systems, b, raters in PLAN:
        if args.only and stage not in args.only:
            continue
        r = measure(stage, rounds, systems, b, raters, args.queries, args.items, args.tree)
        what = (f"{rounds} rounds x {args.items} items" if stage == "anchors"
                else f"{rounds} x {systems} ({rounds * systems:,})")
        print(f"| {stage} | {what} | {raters} | {b:,} | {r['cpu']:.2f} | {r['wall']:.2f} | "
              f"{r['peak_mb']:.0f} | {r['peak_mb'] - r['before_mb']:.0f} | {r['load']:.1f} |",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
