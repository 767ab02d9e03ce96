"""Benchmark of the judge queue: recomputing after a label, and reading the documents.

Two workloads (issue 32's speed targets), each from data generated in memory or on disk
by this script (seeded):

* ``queue``: three runs of ``--queries`` x ``--depth`` lines (default 7,000 x 1,000 =
  7M lines each) and qrels judging each query's pool of ``--judged`` documents (about
  half of each run's top 10 is judged), ``nDCG@10``, every pair. Timed: building the
  :class:`~ireval_core.decisions.queue.JudgeQueue` (one full evaluation, then the runs
  cut to their top 10), and ``--labels`` times one label added followed by the next 10
  items (the recomputation a rater waits for). Target: <= 1 s per label.
* ``read``: a ``docid<TAB>text`` TSV of ``--tsv-mb`` MB (default 1,024; about 330 bytes
  a line, as MS MARCO's passages) written into a temporary folder (``--tmp``; deleted
  after the run), and :func:`~ireval_core.io.texts.read_documents` keeping ``--wanted``
  random ids of it. Target: >= 200 MB/s.

Wall and CPU seconds (``time.process_time``, all threads) and the load average are
printed; on a shared machine the CPU figure is the steadier one. Run from the
repository root::

    .venv/bin/python benchmarks/bench_judge_queue.py [--workload queue|read|both]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _runs_and_qrels(queries: int, depth: int, judged: int, seed: int = 20261128):
    from ireval_core import Qrels, Run

    rng = np.random.default_rng(seed)
    qids = np.array([f"q{i:05d}" for i in range(queries)], dtype=object)
    pool = 3 * depth  # each query's candidate documents
    runs = []
    for s in range(3):
        # a run: a random ranking of `depth` of the query's pool, better systems put the
        # low-numbered (more often relevant) documents higher
        docs = np.argsort(rng.random((queries, pool)) + np.arange(pool) / (pool * (1 + s)),
                          axis=1)[:, :depth]
        q = np.repeat(np.arange(queries), depth)
        doc_ids = np.char.add(np.char.add("d", q.astype(str)), np.char.add(
            "_", docs.ravel().astype(str)))
        score = np.tile(np.arange(depth, 0, -1, dtype=np.float64), queries)
        runs.append(Run.from_arrays(qids[q], doc_ids, score, name=f"sys{s}"))
    jq = np.repeat(np.arange(queries), judged)
    jd = np.tile(np.arange(judged), queries) * 2  # every other document of the pool's top
    grade = rng.choice([0, 0, 1, 2], size=len(jq)).astype(np.float64)
    qrels = Qrels.from_arrays(qids[jq], np.char.add(np.char.add("d", jq.astype(str)),
                                                    np.char.add("_", jd.astype(str))), grade)
    return qrels, runs


def queue_main(args: argparse.Namespace) -> None:
    from ireval_core.decisions.queue import JudgeQueue

    t0 = time.perf_counter()
    qrels, runs = _runs_and_qrels(args.queries, args.depth, args.judged)
    print(f"data: 3 runs x {len(runs[0]):,} lines, {len(qrels):,} judgments "
          f"({time.perf_counter() - t0:.1f} s to build)", flush=True)
    w, c = time.perf_counter(), time.process_time()
    queue = JudgeQueue(qrels, runs, "nDCG@10")
    print(f"queue built: {time.perf_counter() - w:.2f} s wall, {time.process_time() - c:.2f} "
          f"s CPU; {len(queue):,} holes in the queue; verdicts "
          + ", ".join(f"{v.system_a}-{v.system_b} {v.verdict}" for v in queue.verdicts),
          flush=True)
    walls, cpus = [], []
    for _ in range(args.labels):
        item = queue.next(1)[0] if len(queue) else None
        if item is None:
            break
        w, c = time.perf_counter(), time.process_time()
        queue.add([(item.query, item.doc, 1.0)])
        queue.next(10)
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    print(f"per label (add + next 10), {len(walls)} labels: median {statistics.median(walls):.3f}"
          f" s wall (max {max(walls):.3f}), median {statistics.median(cpus):.3f} s CPU; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)


def read_main(args: argparse.Namespace) -> None:
    import shutil
    import tempfile

    from ireval_core.io.texts import read_documents

    folder = Path(tempfile.mkdtemp(prefix="ireval-texts-", dir=args.tmp))
    path = folder / f"collection_{args.tsv_mb}MB.tsv"
    line = 330
    n = args.tsv_mb * (1 << 20) // line
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True)
        rng = np.random.default_rng(7)
        words = np.array(["the", "passage", "retrieval", "judging", "query", "document",
                          "relevant", "system", "evaluation", "ranking"])
        text = " ".join(rng.choice(words, 45))[: line - 12]
        with open(path, "wb") as f:
            step = 1_000_000
            for start in range(0, n, step):
                ids = np.arange(start, min(start + step, n)).astype(str)
                f.write(("\n".join(f"{i}\t{text}" for i in ids) + "\n").encode())
    size = path.stat().st_size
    rng = np.random.default_rng(1)
    wanted = rng.choice(n, args.wanted, replace=False).astype(str).tolist()
    best = None
    for _ in range(args.repeat):
        w, c = time.perf_counter(), time.process_time()
        got = read_documents(path, wanted=wanted)
        wall, cpu = time.perf_counter() - w, time.process_time() - c
        best = wall if best is None else min(best, wall)
        print(f"read {size / 1e6:,.0f} MB, kept {len(got):,} of {n:,}: {wall:.2f} s wall "
              f"({size / 1e6 / wall:,.0f} MB/s), {cpu:.2f} s CPU ({size / 1e6 / cpu:,.0f} "
              f"MB per CPU second); load {os.getloadavg()[0]:.1f}", flush=True)
    assert best is not None
    shutil.rmtree(folder)  # the collection is deleted after the run


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workload", choices=("queue", "read", "both"), default="both")
    p.add_argument("--queries", type=int, default=7_000)
    p.add_argument("--depth", type=int, default=1_000)
    p.add_argument("--judged", type=int, default=20)
    p.add_argument("--labels", type=int, default=5)
    p.add_argument("--tsv-mb", type=int, default=1_024)
    p.add_argument("--wanted", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--tmp", default=None,
                   help="folder for the generated collection (default: the system's temporary "
                        "folder); it is deleted after the run")
    args = p.parse_args()
    if args.workload in ("queue", "both"):
        queue_main(args)
    if args.workload in ("read", "both"):
        read_main(args)


if __name__ == "__main__":
    main()
