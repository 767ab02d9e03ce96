"""Click-log scale on a local Dask cluster: AUC + GAUC + PNR over labeled rows on disk.

Not a test (``make bench``). Writes ``benchmarks/data/clicks/part-NNNNN.parquet``, one
million ``(session, item, label, score)`` rows per file (seeded, vectorised; a size of
N million rows is the first N files), then for each size:

* ``evaluate_labeled(files, ["GAUC", "PNR"])`` (rows shuffled by session, the
  in-memory kernels per partition) and ``pooled_auc_dask(files)`` (exact pooled AUC),
  on a fresh local cluster of ``--workers`` processes, one thread each
  (``dask_client(n_workers=...)``, what ``eval --engine dask`` starts);
* wall time, and the peak RSS of every worker process (sampled every 0.05 s) in each of
  the two jobs, which must stay flat as the rows grow (the checks say how flat: the
  largest peak of a size over the smallest one's); the rows of the largest partition
  the pooled AUC counted at once (``PooledAUC.largest_partition``), which is what
  bounds it;
* at ``--compare`` size, the same numbers in memory (one process: read the Parquet files,
  ``evaluate`` + ``curves.pooled_auc``) and ``sklearn.metrics.roc_auc_score``, each in a
  fresh process for its own peak RSS; the numbers must agree.

    python benchmarks/bench_dask.py                        # 10M compare, 25M 50M 100M
    python benchmarks/bench_dask.py --sizes 25 --compare 10

Tables go to stdout as Markdown, progress to stderr, raw numbers to
``benchmarks/results/dask_<sizes>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from _harness import log, machine_info, machine_markdown, md_table, save_json  # noqa: E402

DATA = HERE / "data" / "clicks"
ROWS_PER_FILE = 1_000_000
MEASURES = ["GAUC", "PNR"]


# ----------------------------------------------------------------------------- data


def write_file(i: int) -> Path:
    """File ``i``: sessions of 1-19 items (mean ~10) with distinct items, ~10% clicks."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = DATA / f"part-{i:05d}.parquet"
    if path.exists():
        return path
    rng = np.random.default_rng(1000 + i)
    sizes = rng.integers(1, 20, size=ROWS_PER_FILE // 5)
    sizes = sizes[: np.searchsorted(np.cumsum(sizes), ROWS_PER_FILE) + 1]
    sizes[-1] -= int(sizes.sum()) - ROWS_PER_FILE
    sizes = sizes[sizes > 0]
    n = int(sizes.sum())
    session = np.repeat(np.int64(i) * 10_000_000 + np.arange(len(sizes)), sizes)
    start = np.repeat(np.cumsum(sizes) - sizes, sizes)
    pos = np.arange(n) - start  # position in the session: distinct items per session
    item = (rng.integers(0, 5_000_000, size=len(sizes))[np.repeat(np.arange(len(sizes)),
                                                                  sizes)] + pos * 7_919)
    quality = rng.normal(size=n)
    label = (quality + rng.normal(scale=1.5, size=n) > 1.8).astype(np.int8)
    score = 1.0 / (1.0 + np.exp(-(quality + rng.normal(scale=1.0, size=n))))  # distinct floats
    DATA.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    pq.write_table(pa.table({"session": session, "item": item.astype(np.int64),
                             "label": label, "score": score}), tmp)
    tmp.rename(path)
    return path


def files_for(millions: int) -> list[str]:
    return [str(write_file(i)) for i in range(millions)]


# ----------------------------------------------------------------------------- measuring


class PeakRSS:
    """Peak resident memory of a set of processes, sampled in a background thread."""

    def __init__(self, pids: list[int], every: float = 0.05) -> None:
        import psutil

        self.procs = [psutil.Process(p) for p in pids]
        self.peak = [0] * len(pids)
        self.every = every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            for k, p in enumerate(self.procs):
                try:
                    self.peak[k] = max(self.peak[k], p.memory_info().rss)
                except Exception:  # noqa: BLE001 - a process gone is simply not sampled
                    pass
            self._stop.wait(self.every)

    def __enter__(self) -> PeakRSS:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


def _worker_env() -> dict:
    """What shapes a worker's unmanaged memory, as the worker process sees it."""
    import pyarrow as pa

    return {"MALLOC_TRIM_THRESHOLD_": os.environ.get("MALLOC_TRIM_THRESHOLD_"),
            "arrow_pool": pa.default_memory_pool().backend_name}


def dask_run(millions: int, workers: int) -> dict:
    from ireval_core.distributed import dask_client, evaluate_labeled, pooled_auc_dask

    files = files_for(millions)
    out: dict = {"rows": millions * ROWS_PER_FILE, "files": len(files), "workers": workers}
    with dask_client(n_workers=workers) as client:  # a local cluster, as the CLI starts
        pids = list(client.run(os.getpid).values())
        out["worker_env"] = next(iter(client.run(_worker_env).values()))
        with PeakRSS(pids) as rss:
            t = time.perf_counter()
            res = evaluate_labeled(files, MEASURES, client=client)
            out["gauc_pnr_s"] = time.perf_counter() - t
        out["gauc_pnr_peak_mib"] = [p / 2**20 for p in rss.peak]
        with PeakRSS(pids) as rss:
            t = time.perf_counter()
            pooled = pooled_auc_dask(files, client=client)
            out["pooled_auc_s"] = time.perf_counter() - t
        out["pooled_auc_peak_mib"] = [p / 2**20 for p in rss.peak]
    out["peak_rss_mib"] = [max(a, b) for a, b in zip(out["gauc_pnr_peak_mib"],
                                                     out["pooled_auc_peak_mib"], strict=True)]
    out["sessions"] = len(res.query_ids["score"])
    out["gauc"] = res.mean("score", "GAUC")
    out["pnr"] = res.mean("score", "PNR")
    out["auc"] = pooled.auc
    out["n_buckets"] = pooled.n_buckets
    out["largest_partition"] = pooled.largest_partition
    out["total_s"] = out["gauc_pnr_s"] + out["pooled_auc_s"]
    out["load"] = os.getloadavg()[0]  # the machine may be shared: the 1-minute load average
    return out


def in_memory_worker(millions: int, what: str) -> dict:
    """One in-process measurement (run in a fresh interpreter by :func:`in_process`)."""
    import pyarrow.parquet as pq

    t = time.perf_counter()
    table = pq.ParquetDataset(files_for(millions)).read()
    out: dict = {"read_s": time.perf_counter() - t}
    if what == "sklearn":
        from sklearn.metrics import roc_auc_score

        label = table["label"].to_numpy()
        score = table["score"].to_numpy()
        del table
        t = time.perf_counter()
        out["auc"] = float(roc_auc_score(label >= 1, score))
        out["compute_s"] = time.perf_counter() - t
    else:
        from ireval_core import Qrels, Run, evaluate, join
        from ireval_core.curves import pooled_auc

        t = time.perf_counter()
        qrels = Qrels.from_arrays(table["session"], table["item"], table["label"])
        run = Run.from_arrays(table["session"], table["item"], table["score"], name="score")
        del table
        res = evaluate(qrels, [run], MEASURES)
        out["gauc"], out["pnr"] = res.mean("score", "GAUC"), res.mean("score", "PNR")
        out["auc"] = pooled_auc(join(qrels, run))
        out["sessions"] = len(res.query_ids["score"])
        out["compute_s"] = time.perf_counter() - t
    out["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out["load"] = os.getloadavg()[0]
    return out


def in_process(millions: int, what: str) -> dict:
    p = subprocess.run([sys.executable, __file__, "--worker", what, "--compare", str(millions)],
                       capture_output=True, text=True, cwd=ROOT)
    if p.returncode != 0:
        raise RuntimeError(f"{what} at {millions}M failed:\n{p.stderr[-2000:]}")
    return json.loads(p.stdout)


# ----------------------------------------------------------------------------- report


def markdown(results: dict) -> str:
    rows = []
    def peaks(r: dict) -> str:
        if "gauc_pnr_peak_mib" not in r:
            return " / ".join(f"{m:.0f}" for m in r["peak_rss_mib"])
        return (" / ".join(f"{m:.0f}" for m in r["gauc_pnr_peak_mib"]) + " ; "
                + " / ".join(f"{m:.0f}" for m in r["pooled_auc_peak_mib"]))

    for r in results["dask"]:
        rows.append([f"{r['rows'] / 1e6:.0f}M", f"Dask, {r['workers']} workers",
                     f"{r['gauc_pnr_s']:.1f}", f"{r['pooled_auc_s']:.1f}", f"{r['total_s']:.1f}",
                     peaks(r),
                     f"{r['auc']:.6f}", f"{r['gauc']:.6f}", f"{r['pnr']:.6f}",
                     f"{r.get('load', float('nan')):.1f}"])
    cmp_ = results.get("compare")
    if cmp_:
        mem, sk = cmp_["memory"], cmp_["sklearn"]
        n = f"{cmp_['millions']}M"
        rows.append([n, "in memory, 1 process (read + evaluate + pooled_auc)",
                     f"{mem['compute_s']:.1f} (+ read {mem['read_s']:.1f})", "(included)",
                     f"{mem['read_s'] + mem['compute_s']:.1f}", f"{mem['peak_rss_mib']:.0f}",
                     f"{mem['auc']:.6f}", f"{mem['gauc']:.6f}", f"{mem['pnr']:.6f}",
                     f"{mem.get('load', float('nan')):.1f}"])
        rows.append([n, "sklearn roc_auc_score, 1 process", "–",
                     f"{sk['compute_s']:.1f} (+ read {sk['read_s']:.1f})",
                     f"{sk['read_s'] + sk['compute_s']:.1f}", f"{sk['peak_rss_mib']:.0f}",
                     f"{sk['auc']:.6f}", "–", "–", f"{sk.get('load', float('nan')):.1f}"])
    table = md_table(["rows", "engine", "GAUC + PNR (s)", "pooled AUC (s)", "total (s)",
                      "peak RSS per worker, MiB (GAUC + PNR ; pooled AUC)", "pooled AUC",
                      "GAUC", "PNR", "load avg"], rows)
    notes = results.get("checks", [])
    return "\n".join(["### Click-log scale on a local Dask cluster (bench_dask.py)", "",
                      table, "", *[f"* {c}" for c in notes]])


def checks(results: dict) -> list[str]:
    out = []
    runs = results["dask"]
    growth = results.get("sizes") or [r["rows"] // ROWS_PER_FILE for r in runs]
    grown = [r for r in runs if r["rows"] // ROWS_PER_FILE in growth]
    if len(runs) > 1:
        top = [max(r["peak_rss_mib"]) for r in runs]
        sizes = ", ".join(f"{r['rows'] / 1e6:.0f}M {t:.0f}" for r, t in zip(runs, top,
                                                                          strict=True))
        out.append(f"Peak RSS of the busiest worker by size (MiB): {sizes}.")
    if len(grown) > 1:
        for what, key in (("GAUC + PNR", "gauc_pnr_peak_mib"),
                          ("pooled AUC", "pooled_auc_peak_mib"), ("both", "peak_rss_mib")):
            if all(key in r for r in grown):
                top = [max(r[key]) for r in grown]
                out.append(f"{what}, {grown[0]['rows'] / 1e6:.0f}M to "
                           f"{grown[-1]['rows'] / 1e6:.0f}M rows: busiest worker's peak "
                           f"{min(top):.0f} to {max(top):.0f} MiB, largest / smallest = "
                           f"{max(top) / min(top):.2f}.")
        parts = ", ".join(f"{r['rows'] / 1e6:.0f}M {r['largest_partition']:,} of "
                          f"{r['n_buckets']} ranges" for r in runs if "largest_partition" in r)
        if parts:
            out.append(f"Pooled AUC, rows of the largest partition counted at once: {parts}.")
    cmp_ = results.get("compare")
    same = [r for r in results["dask"] if cmp_ and r["rows"] == cmp_["millions"] * ROWS_PER_FILE]
    if cmp_ and same:
        d, mem, sk = same[0], cmp_["memory"], cmp_["sklearn"]
        ok = (d["gauc"] == mem["gauc"] and d["pnr"] == mem["pnr"]
              and d["sessions"] == mem["sessions"])
        out.append(f"{cmp_['millions']}M: Dask GAUC, PNR and session count "
                   f"{'equal' if ok else 'DIFFER FROM'} the in-memory ones "
                   f"({d['sessions']:,} sessions).")
        out.append(f"{cmp_['millions']}M: pooled AUC Dask − sklearn = "
                   f"{d['auc'] - sk['auc']:.2e}, Dask − in memory = {d['auc'] - mem['auc']:.2e}.")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", type=int, nargs="*", default=[25, 50, 100],
                    help="millions of rows on the Dask cluster (default 25 50 100)")
    ap.add_argument("--compare", type=int, default=10,
                    help="millions of rows for Dask vs in memory vs sklearn (0: skip)")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--worker", choices=("memory", "sklearn"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print(json.dumps(in_memory_worker(args.compare, args.worker)))
        return 0

    log(f"== data: {max([*args.sizes, args.compare])} files of {ROWS_PER_FILE:,} rows")
    t = time.perf_counter()
    files_for(max([*args.sizes, args.compare]))
    log(f"   ready in {time.perf_counter() - t:.0f} s")
    results: dict = {"machine": machine_info(), "dask": [], "sizes": list(args.sizes)}
    name = f"dask_{'-'.join(str(s) for s in [args.compare, *args.sizes])}.json"
    if args.compare:
        log(f"== {args.compare}M: in memory, sklearn, Dask")
        results["compare"] = {"millions": args.compare,
                              "memory": in_process(args.compare, "memory"),
                              "sklearn": in_process(args.compare, "sklearn")}
    for size in dict.fromkeys(([args.compare] if args.compare else []) + list(args.sizes)):
        log(f"== Dask {size}M")
        r = dask_run(size, args.workers)
        log(f"   {r['total_s']:.0f} s, peak RSS per worker "
            f"{', '.join(f'{m:.0f}' for m in r['peak_rss_mib'])} MiB")
        results["dask"].append(r)
        save_json(name, results)  # after every size: a long run stopped keeps what it did
    results["checks"] = checks(results)
    save_json(name, results)
    print("\n".join([machine_markdown(results["machine"]), "", markdown(results)]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
