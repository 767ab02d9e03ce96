"""One benchmark measurement in a fresh process; prints one JSON object on stdout.

Run by :mod:`_harness` (never imported by the benchmarks themselves)::

    python benchmarks/_worker.py TASK LIB QRELS RUN [--warmup]

TASK is ``parse`` or ``eval``; LIB is ``ireval``, ``pytrec_eval`` or ``ranx``.

Memory: ``ru_maxrss`` of this process (peak resident set, KiB on Linux) is read
once after the imports (and after the ranx warm-up when ``--warmup``) and once at
the end; both are reported, so the caller can show the absolute peak and the peak
above the post-import baseline.
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import time
from pathlib import Path

# ireval names -> pytrec_eval / ranx names (same measures, same order)
MEASURES = ["AP", "nDCG", "nDCG@10", "P@10", "R@100", "RR", "bpref", "Rprec"]
PYTREC = ["map", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "bpref", "Rprec"]
WARMUP_DIR = Path(__file__).resolve().parent / "data" / "10k"  # ranx warm-up files
RANX = ["map", "ndcg", "ndcg@10", "precision@10", "recall@100", "mrr", "bpref", "r-precision"]


def _rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _ireval(task: str, qrels_path: str, run_path: str) -> tuple[dict, dict]:
    from ireval_core import evaluate, read_runs
    from ireval_core.io import read_qrels_alongside

    base, cpu0 = _rss_kib(), _cpu_s()
    t = {}
    t0 = time.perf_counter()
    done = {}

    def runs_read() -> list:
        out = read_runs(run_path)
        done["run"] = time.perf_counter()
        return out

    # as the CLI reads them: the qrels on a second thread beside the run
    qrels, runs = read_qrels_alongside(qrels_path, runs_read)
    t2 = time.perf_counter()
    # "run": until the run is read; "qrels": what the qrels added after that (overlapped)
    t["run"], t["qrels"] = done["run"] - t0, t2 - done["run"]
    means = {}
    if task == "eval":
        res = evaluate(qrels, runs, MEASURES)
        t3 = time.perf_counter()
        t["evaluate"] = t3 - t2
        means = {m: res.mean(runs[0].name, m) for m in MEASURES}
        t["total"] = time.perf_counter() - t0
    else:
        t["total"] = t2 - t0
    assert len(runs) == 1
    return {"base": base, "cpu0": cpu0, "times": t}, means


def _pytrec(task: str, qrels_path: str, run_path: str) -> tuple[dict, dict]:
    import pytrec_eval

    base, cpu0 = _rss_kib(), _cpu_s()
    t = {}
    t0 = time.perf_counter()
    with open(qrels_path) as f:
        qrels = pytrec_eval.parse_qrel(f)
    t1 = time.perf_counter()
    with open(run_path) as f:
        run = pytrec_eval.parse_run(f)
    t2 = time.perf_counter()
    t["qrels"], t["run"] = t1 - t0, t2 - t1
    means = {}
    if task == "eval":
        evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC))
        per_query = evaluator.evaluate(run)
        means = {m: math.fsum(v[p] for v in per_query.values()) / len(per_query)
                 for m, p in zip(MEASURES, PYTREC, strict=True)}
        t3 = time.perf_counter()
        t["evaluate"] = t3 - t2
        t["total"] = t3 - t0
    else:
        t["total"] = t2 - t0
    return {"base": base, "cpu0": cpu0, "times": t}, means


def _ranx(task: str, qrels_path: str, run_path: str, warmup: bool) -> tuple[dict, dict]:
    import ranx

    if warmup:  # compile (or load from numba's cache) every code path on the 10k files
        wq, wr = (str(WARMUP_DIR / f) for f in ("qrels.txt", "run.txt"))
        ranx.evaluate(ranx.Qrels.from_file(wq, kind="trec"),
                      ranx.Run.from_file(wr, kind="trec"), RANX, make_comparable=True)
    base, cpu0 = _rss_kib(), _cpu_s()
    t = {}
    t0 = time.perf_counter()
    qrels = ranx.Qrels.from_file(qrels_path, kind="trec")
    t1 = time.perf_counter()
    run = ranx.Run.from_file(run_path, kind="trec")
    t2 = time.perf_counter()
    t["qrels"], t["run"] = t1 - t0, t2 - t1
    means = {}
    if task == "eval":
        run_queries = list(run.keys())  # (not timed) for means over the run's queries
        t2b = time.perf_counter()
        # ranx refuses qrels and runs with different query sets unless told to align
        # them (then a judged query missing from the run scores 0, as trec_eval -c)
        out = ranx.evaluate(qrels, run, RANX, make_comparable=True)
        t3 = time.perf_counter()
        t["evaluate"] = t3 - t2b
        t["total"] = (t2 - t0) + (t3 - t2b)
        means = {m: float(out[r]) for m, r in zip(MEASURES, RANX, strict=True)}
        # the same per-query values averaged like trec_eval (queries in the run only)
        means_run = {m: math.fsum(run.scores[r][q] for q in run_queries) / len(run_queries)
                     for m, r in zip(MEASURES, RANX, strict=True)}
        return {"base": base, "cpu0": cpu0, "times": t, "means_run_queries": means_run}, means
    else:
        t["total"] = t2 - t0
    return {"base": base, "cpu0": cpu0, "times": t}, means


def main() -> None:
    task, lib, qrels_path, run_path = sys.argv[1:5]
    warmup = "--warmup" in sys.argv[5:]
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    if lib == "ireval":
        out, means = _ireval(task, qrels_path, run_path)
    elif lib == "pytrec_eval":
        out, means = _pytrec(task, qrels_path, run_path)
    elif lib == "ranx":
        out, means = _ranx(task, qrels_path, run_path, warmup)
    else:
        raise SystemExit(f"unknown library {lib!r}")
    out.update(peak=_rss_kib(), means=means, cpu=_cpu_s() - out.pop("cpu0"),
               load=os.getloadavg()[0])
    sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
