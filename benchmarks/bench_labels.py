"""Benchmark of monthly labeling: read + trend + agreement on 3.6M label rows.

Workload (the issue's): 12 monthly rounds x 5,000 queries x the top 20 shown results x
3 raters = 3,600,000 label rows, one system, with model scores, segments and weights,
labels written as words (none/low/mid/high, mapped by the detected label map). Stages
timed, each from a fresh start of the data:

* ``read``: :func:`ireval_core.labels.read_judgments` of the CSV file (about 170 MB;
  ``--format parquet`` reads the Parquet file instead);
* ``trend``: :func:`ireval_core.labels.trend` (DCG@10, bootstrap bands with 2,000
  resamples per round, coverage, grades, month-over-month tests);
* ``online``: :func:`ireval_core.labels.offline_online` reusing that trend (AUC, GAUC,
  PNR per round from the model scores);
* ``agreement``: the long label table (:meth:`Judgments.label_table`) and
  :func:`ireval_core.labels.agreement.rater_report` (per round: Fleiss, Krippendorff's alpha,
  pairwise and leave-one-out kappas, drift flags), when Part B's module is present.

``--workload judge`` (issue 18): 12 rounds x 2,500 queries x 2 systems x the top 15 shown
x 4 raters (ann, bo, chen and the model judge llm) = 3,600,000 label rows (Parquet; the
two systems share most documents of a query, as in the bundled sample). Stages:

* ``read``: :func:`ireval_core.labels.read_judgments` (reported, not in the total);
* ``noise``: :func:`ireval_core.labels.noise_trend` of the people (the judge left out):
  DCG@10 per round and system with the two-stage interval over queries and raters (2,000
  resamples), the minimum detectable change and the month-over-month changes;
* ``judge``: :func:`ireval_core.labels.judge_report` reusing that trend (agreement with
  bootstrap intervals, the judge's own trend, decisions, order, bias, disagreements).

Target: noise + judge <= 8 s.

Target (``--workload agreement``, the default): read + trend + agreement under 5 s on
this machine (2 cores). Wall time depends on what else runs (the load average is
printed); CPU time (``time.process_time``, all threads) is the steadier figure. Run
from the repository root::

    .venv/bin/python benchmarks/bench_labels.py [--repeat 3] [--format csv|parquet]
    .venv/bin/python benchmarks/bench_labels.py --workload judge [--repeat 3]

The data are written once into ``benchmarks/data/labels/`` (gitignored), seeded.
Peak RSS is the benchmark process's high-water mark (``resource.getrusage``); the data
are generated in a separate process.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROUNDS, QUERIES, SHOWN, RATERS = 12, 5_000, 20, 3
WORDS = np.array(["none", "low", "mid", "high"])


def make_data(folder: Path, seed: int = 20260501) -> tuple[Path, Path]:
    """Write the CSV and Parquet files (vectorised; a few seconds, once)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    csv_path, pq_path = folder / "labels_3.6M.csv", folder / "labels_3.6M.parquet"
    if csv_path.exists() and pq_path.exists():
        return csv_path, pq_path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n_lists = ROUNDS * QUERIES
    r = np.repeat(np.arange(ROUNDS), QUERIES)
    # each round samples 5,000 distinct queries out of 20,000: queries repeat across rounds
    q = np.concatenate([np.sort(rng.choice(20_000, QUERIES, replace=False))
                        for _ in range(ROUNDS)])
    n_shown = n_lists * SHOWN
    lr = np.repeat(r, SHOWN)
    lq = np.repeat(q, SHOWN)
    pos = np.tile(np.arange(1, SHOWN + 1), n_lists)
    # distinct documents within a list (the position picks the low digits)
    doc = lq.astype(np.int64) * 100 + (pos - 1 + 20 * rng.integers(0, 5, size=n_shown))
    true = np.clip(np.round(3.2 - pos / 6.0 + rng.normal(0, 0.9, n_shown)), 0, 3)
    score = 1.0 / (1.0 + np.exp(-(true + rng.normal(0, 0.5, n_shown) - 1.5)))
    seg = np.array(["head", "torso", "tail"])[lq % 3]
    weight = np.array([3.0, 1.5, 1.0])[lq % 3]
    rows = n_shown * RATERS
    label = np.repeat(true, RATERS) + (rng.random(rows) < 0.1) * rng.choice([-1, 1], rows)
    label = np.clip(label, 0, 3).astype(np.int64)
    months = np.array([f"{2025 + (m + 4) // 12}-{(m + 4) % 12 + 1:02d}" for m in range(ROUNDS)])
    table = pa.table({
        "round": pa.array(np.repeat(months[lr], RATERS)),
        "system": pa.array(np.full(rows, "prod")),
        "query": pa.array(np.char.add("q", np.repeat(lq, RATERS).astype(str))),
        "doc": pa.array(np.char.add("d", np.repeat(doc, RATERS).astype(str))),
        "position": pa.array(np.repeat(pos, RATERS)),
        "rater": pa.array(np.tile(np.array(["ann", "bo", "chen"]), n_shown)),
        "label": pa.array(WORDS[label]),
        "score": pa.array(np.round(np.repeat(score, RATERS), 4)),
        "segment": pa.array(np.repeat(seg, RATERS)),
        "weight": pa.array(np.repeat(weight, RATERS)),
    })
    pacsv.write_csv(table, csv_path)
    pq.write_table(table, pq_path)
    return csv_path, pq_path


def make_judge_data(folder: Path, seed: int = 20260518) -> Path:
    """The ``--workload judge`` file (Parquet, vectorised; a few seconds, once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = folder / "labels_judge_3.6M.parquet"
    if path.exists():
        return path
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    n_q, shown, cands = 2_500, 15, 20
    raters = np.array(["ann", "bo", "chen", "llm"])
    severity = np.array([0.0, -0.2, 0.15, 0.3])  # llm overrates
    months = np.array([f"{2025 + (m + 4) // 12}-{(m + 4) % 12 + 1:02d}" for m in range(ROUNDS)])
    parts = []
    for r in range(ROUNDS):
        q = np.sort(rng.choice(20_000, n_q, replace=False))
        true = rng.integers(0, 4, (n_q, cands)).astype(np.float64)
        frames = {}
        for s, noise in (("control", 0.9), ("treatment", 0.8)):
            score = true + rng.normal(0, noise, (n_q, cands))
            top = np.argsort(-score, axis=1, kind="stable")[:, :shown]  # candidate ids
            frames[s] = top
        in_control = np.zeros((n_q, cands), dtype=bool)
        np.put_along_axis(in_control, frames["control"], True, axis=1)
        for s, top in frames.items():
            n = n_q * shown
            cand = top.ravel()
            qq = np.repeat(np.arange(n_q), shown)
            g = true[qq, cand]
            only_t = (s == "treatment") & ~in_control[qq, cand]
            for t, name in enumerate(raters):
                # a rater's label of a unit must not depend on the list it sits in: draw
                # the noise per (query, candidate), not per row
                u = np.random.default_rng([seed, r, t]).random((n_q, cands))[qq, cand]
                y = g + severity[t] + (u < 0.1) - (u > 0.95)
                if name == "llm":
                    y = y + only_t * (u < 0.6)
                parts.append(pa.table({
                    "round": pa.array(np.full(n, months[r])),
                    "system": pa.array(np.full(n, s)),
                    "query": pa.array(np.char.add("q", q[qq].astype(str))),
                    "doc": pa.array(np.char.add(np.char.add("d", q[qq].astype(str)),
                                                np.char.add("_", cand.astype(str)))),
                    "position": pa.array(np.tile(np.arange(1, shown + 1), n_q)),
                    "rater": pa.array(np.full(n, name)),
                    "label": pa.array(np.clip(np.round(y), 0, 3).astype(np.int64)),
                }))
    pq.write_table(pa.concat_tables(parts), path)
    return path


class Timings:
    """Wall-clock and CPU seconds of each run of each stage of a workload."""

    def __init__(self, stages: tuple[str, ...]) -> None:
        self.wall: dict[str, list[float]] = {s: [] for s in stages}
        self.cpu: dict[str, list[float]] = {s: [] for s in stages}

    def timed(self, stage: str, fn, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
        """``fn(*args, **kwargs)``, its times added to ``stage``'s."""
        t, c = time.perf_counter(), time.process_time()
        out = fn(*args, **kwargs)
        self.wall[stage].append(time.perf_counter() - t)
        self.cpu[stage].append(time.process_time() - c)
        return out


def judge_main(args: argparse.Namespace, root: Path, folder: Path) -> int:
    """``--workload judge``: read, then the people's rater-noise trend and the judge report."""
    t0 = time.perf_counter()
    subprocess.run([sys.executable, __file__, "--make-only", "--workload", "judge"], check=True)
    path = make_judge_data(folder)
    print(f"data: {path.stat().st_size / 1e6:.0f} MB Parquet "
          f"({time.perf_counter() - t0:.1f} s)", file=sys.stderr)
    from ireval_core.labels import judge_report, noise_trend, read_judgments

    stages = ("read", "noise", "judge")
    timings = Timings(stages)
    timed, wall, cpu = timings.timed, timings.wall, timings.cpu

    for _ in range(args.repeat):
        j = timed("read", read_judgments, path)
        nt = timed("noise", noise_trend, j, k=10, exclude=["llm"])
        rep = timed("judge", judge_report, j, "llm", k=10, people_trend=nt)
        del j, nt
    n_rows = 12 * 2_500 * 2 * 15 * 4
    load = os.getloadavg()[0]
    print(f"| stage (judge workload, {n_rows:,} label rows, 4 raters; load average {load:.1f} "
          f"on {os.cpu_count()} cores) | median wall s | median CPU s | runs |")
    print("|---|---:|---:|---:|")
    for stage in stages:
        w, c = statistics.median(wall[stage]), statistics.median(cpu[stage])
        print(f"| {stage} | {w:.2f} | {c:.2f} | {len(wall[stage])} |")
    tw = statistics.median([a + b for a, b in zip(wall["noise"], wall["judge"], strict=True)])
    tc = statistics.median([a + b for a, b in zip(cpu["noise"], cpu["judge"], strict=True)])
    print(f"| **rater-noise trend + judge report** | **{tw:.2f}** | **{tc:.2f}** | |")
    print(f"\npeak RSS: {peak_rss_mb():.0f} MB")
    print("\n".join(f"- {s}" for s in rep.summary), file=sys.stderr)
    return 0


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--format", choices=("csv", "parquet"), default="csv")
    parser.add_argument("--workload", choices=("agreement", "judge"), default="agreement")
    parser.add_argument("--make-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    folder = root / "benchmarks" / "data" / "labels"
    if args.make_only:
        if args.workload == "judge":
            make_judge_data(folder)
        else:
            make_data(folder)
        return 0
    if args.workload == "judge":
        return judge_main(args, root, folder)

    t0 = time.perf_counter()
    # the data are made in another process, so that the peak RSS below is ireval's own
    subprocess.run([sys.executable, __file__, "--make-only"], check=True)
    csv_path, pq_path = make_data(folder)
    print(f"data: {csv_path.stat().st_size / 1e6:.0f} MB CSV, "
          f"{pq_path.stat().st_size / 1e6:.0f} MB Parquet ({time.perf_counter() - t0:.1f} s)",
          file=sys.stderr)

    from ireval_core.labels import offline_online, read_judgments, trend
    try:
        from ireval_core.labels.agreement import rater_report
    except ImportError:  # Part B's module not there: agreement is not timed
        rater_report = None

    path = csv_path if args.format == "csv" else pq_path
    stages = ("read", "trend", "online", "agreement")
    timings = Timings(stages)
    timed, wall, cpu = timings.timed, timings.wall, timings.cpu

    def agreement(j):  # noqa: ANN001, ANN202 - the label table is part of the stage
        return rater_report(j.label_table())

    for _ in range(args.repeat):
        j = timed("read", read_judgments, path)
        tr = timed("trend", trend, j, k=10)
        timed("online", offline_online, j, k=10, trend_result=tr)
        if rater_report is not None:
            timed("agreement", agreement, j)
        del j, tr
    load = os.getloadavg()[0]
    print(f"| stage ({args.format}, 3.6M label rows; load average {load:.1f} on "
          f"{os.cpu_count()} cores) | median wall s | median CPU s | runs |")
    print("|---|---:|---:|---:|")
    total_wall = total_cpu = 0.0
    for stage in stages:
        if not wall[stage]:
            print(f"| {stage} | n/a (ireval_core.labels.agreement missing) | | 0 |")
            continue
        w, c = statistics.median(wall[stage]), statistics.median(cpu[stage])
        if stage != "online":
            total_wall, total_cpu = total_wall + w, total_cpu + c
        print(f"| {stage} | {w:.2f} | {c:.2f} | {len(wall[stage])} |")
    print(f"| **read + trend + agreement** | **{total_wall:.2f}** | **{total_cpu:.2f}** | |")
    print(f"\npeak RSS: {peak_rss_mb():.0f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
