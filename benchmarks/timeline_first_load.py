"""Where a first load's time goes: a stage timeline of the Data page on new files.

Drives the real Data page (AppTest, as ``bench_app.py`` does) on a folder of qrels and
runs, either opened as the folder of ``IREVAL_DATA_DIR`` (``--mode folder``) or uploaded
through the page's two uploaders (``--mode upload``: the bytes handed over as a browser's
upload is), with an empty column cache (or none: ``--cache off``). While it runs:

* every call of the stages below is timed (wall, the CPU of the thread that called it,
  and the process's CPU over the same span), with the thread it ran on: hashing
  (SHA-256), parsing the text, coding ids and ordering a run, the qrels' coding, writing
  the column cache, the dataset check (each run joined to depth 100), the summary, the
  workspace lookup, joins and evaluations, the allocator's trims;
* every ``--interval`` seconds a sampler reads the CPU ticks of every thread of the process
  (``/proc/self/task``: Python threads by name, the others, pyarrow's pool among them,
  as ``native``) and the RSS, so the table of slices says how many of the two cores were
  busy, and with what, from the upload to the page drawn.

Usage::

    python benchmarks/timeline_first_load.py benchmarks/data/7M-msmarco-real-app \
        [--mode folder|upload] [--cache on|off] [--pages metrics] [--slice 0.5]

Run it under ``/usr/bin/time -v`` for the whole process's peak RSS and CPU. Timings
inside one process; nothing is written but to stdout (a temporary workspace and cache
folder, deleted after).
"""

from __future__ import annotations

import argparse
import functools
import inspect
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")

STAGES: tuple[tuple[str, str, str], ...] = (
    # (module, attribute (Class.method for a method), label)
    ("ireval_app.cache", "_fetch", "hash file (SHA-256)"),
    ("ireval_app.cache", "_sha256_and_key", "hash bytes (SHA-256)"),
    ("ireval_app.cache", "load_qrels", "load_qrels (hash + read)"),
    ("ireval_app.cache", "load_run_files", "load_run_files (all runs)"),
    ("ireval_app.cache", "dataset_for", "dataset_for"),
    ("ireval_core.io.qrels_runs", "decoded_columns", "parse text to columns"),
    ("ireval_core.data", "Qrels.from_arrays", "qrels: code ids, sort"),
    ("ireval_core.data", "Run.from_columns", "run: code ids, order"),
    ("ireval_core.idcodes", "doc_codes_of", "run: doc ids coded"),
    ("ireval_core.io.column_cache", "ColumnCache.store", "column cache write"),
    ("ireval_core.dataset", "_check_run", "dataset check (join @100)"),
    ("ireval_core.dataset", "Dataset.summary", "summary tables"),
    ("ireval_core.dataset", "Dataset.warnings", "dataset warnings"),
    ("ireval_core.idcodes", "doc_code_map", "run-to-qrels doc map"),
    ("ireval_core.data", "join", "join"),
    ("ireval_core.evaluate", "evaluate", "evaluate"),
    ("ireval_app.workspace_glue", "dataset_id", "workspace id of the files"),
    ("ireval_app.workspace_glue", "saved_as", "workspace lookup"),
    ("ireval_app.shared_cache", "release_free_memory", "malloc trim"),
    ("ireval_app.cache", "_Room.wait", "next parse waits its turn"),
    ("ireval_app.cache", "_Room.wait_to_code", "coding waits its turn"),
    ("ireval_app.evaluation", "prefetch", "prefetch started"),
)


@dataclass
class Span:
    label: str
    thread: str
    start: float
    end: float
    cpu_thread: float
    cpu_process: float
    depth: int


SPANS: list[Span] = []
_DEPTH = threading.local()
T0 = time.perf_counter()


def _wrap(label: str, func):  # noqa: ANN001, ANN202
    @functools.wraps(func)
    def timed(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
        depth = getattr(_DEPTH, "n", 0)
        _DEPTH.n = depth + 1
        t, ct, cp = time.perf_counter(), time.thread_time(), time.process_time()
        try:
            return func(*args, **kwargs)
        finally:
            _DEPTH.n = depth
            SPANS.append(Span(label, threading.current_thread().name, t - T0,
                              time.perf_counter() - T0, time.thread_time() - ct,
                              time.process_time() - cp, depth))
    timed.__wrapped_stage__ = True  # type: ignore[attr-defined]
    return timed


def instrument() -> None:
    """Wrap every stage of :data:`STAGES` wherever a module of ireval holds it."""
    import importlib

    for module_name, attr, label in STAGES:
        module = importlib.import_module(module_name)
        if "." in attr:
            cls_name, meth = attr.split(".")
            cls = getattr(module, cls_name)
            raw = inspect.getattr_static(cls, meth)
            if isinstance(raw, classmethod):
                setattr(cls, meth, classmethod(_wrap(label, raw.__func__)))
            else:
                setattr(cls, meth, _wrap(label, raw))
            continue
        original = getattr(module, attr)
        wrapped = _wrap(label, original)
        for m in list(sys.modules.values()):
            name = getattr(m, "__name__", "") or ""
            if not name.startswith(("ireval_core", "ireval_app")):
                continue
            for key, value in list(vars(m).items()):
                if value is original:
                    setattr(m, key, wrapped)


class Sampler(threading.Thread):
    """Every ``interval`` s: the CPU ticks of each thread and the RSS."""

    def __init__(self, interval: float) -> None:
        super().__init__(name="timeline-sampler", daemon=True)
        self.interval = interval
        self.samples: list[tuple[float, dict[str, int], int]] = []
        self.stop = threading.Event()

    @staticmethod
    def read() -> tuple[dict[str, int], int]:
        names = {t.native_id: t.name for t in threading.enumerate()}
        ticks: dict[str, int] = {}
        for tid in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{tid}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            name = names.get(int(tid), "native")
            if name.startswith("ThreadPoolExecutor") or name.startswith("Thread-"):
                name = "py-pool"
            ticks[name] = ticks.get(name, 0) + int(fields[11]) + int(fields[12])
        with open("/proc/self/statm") as fh:
            rss = int(fh.read().split()[1]) * PAGE
        return ticks, rss

    def run(self) -> None:
        while not self.stop.is_set():
            ticks, rss = self.read()
            self.samples.append((time.perf_counter() - T0, ticks, rss))
            self.stop.wait(self.interval)


def _slices(sampler: Sampler, start: float, end: float, width: float) -> list[str]:
    """One line per ``width`` s between ``start`` and ``end``: cores busy by thread
    group, the RSS at the slice's end, and the stages open in it."""
    rows = ["| from s | to s | cores busy | by thread | RSS MiB | stages |",
            "|---:|---:|---:|---|---:|---|"]
    samples = [s for s in sampler.samples if start - width <= s[0] <= end + width]
    t = start
    while t < end:
        a = [s for s in samples if s[0] <= t]
        b = [s for s in samples if s[0] <= t + width]
        if not a or not b:
            t += width
            continue
        s0, s1 = a[-1], b[-1]
        dt = s1[0] - s0[0]
        if dt <= 0:
            t += width
            continue
        by = {k: (s1[1].get(k, 0) - s0[1].get(k, 0)) / TICK / dt for k in s1[1]}
        busy = sum(by.values())
        parts = ", ".join(f"{k} {v:.2f}" for k, v in sorted(by.items(), key=lambda x: -x[1])
                          if v >= 0.05)
        open_ = sorted({sp.label for sp in SPANS if sp.start < t + width and sp.end > t
                        and sp.label not in ("malloc trim", "prefetch started")})
        rows.append(f"| {t - start:.1f} | {t + width - start:.1f} | {busy:.2f} | {parts} | "
                    f"{s1[2] / 2**20:,.0f} | {'; '.join(open_)} |")
        t += width
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a folder with a qrels* file and run files")
    ap.add_argument("--mode", choices=("folder", "upload"), default="folder")
    ap.add_argument("--cache", choices=("on", "off"), default="on",
                    help="the column cache (an empty temporary folder) or IREVAL_CACHE=off")
    ap.add_argument("--pages", nargs="*", default=[], help="results pages visited after")
    ap.add_argument("--interval", type=float, default=0.02, help="sampling period (s)")
    ap.add_argument("--slice", type=float, default=0.5, help="width of a table row (s)")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--tree", type=Path, default=ROOT,
                    help="the checkout whose app is run (another tree: before/after figures)")
    ap.add_argument("--no-timeline", action="store_true",
                    help="time the load only: no stage wrappers, no sampler")
    args = ap.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="ireval-timeline-"))
    try:
        return _main(args, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _main(args: argparse.Namespace, tmp: Path) -> int:
    folder = args.folder.resolve()
    if args.mode == "folder":
        os.environ["IREVAL_DATA_DIR"] = str(folder)
    else:
        os.environ.pop("IREVAL_DATA_DIR", None)
    os.environ["IREVAL_WORKSPACE"] = str(tmp / "workspace.db")
    os.environ["IREVAL_CACHE_DIR"] = str(tmp / "cache")
    if args.cache == "off":
        os.environ["IREVAL_CACHE"] = "off"
    tree = args.tree.resolve()
    sys.path.insert(0, str(tree))
    os.chdir(tree)
    import importlib

    from streamlit.testing.v1 import AppTest

    for module in ("ireval_app.frame", "ireval_app.loading", "ireval_app.files_widgets",
                   "ireval_app.workspace_glue", "ireval_app.evaluation"):
        importlib.import_module(module)  # every holder of a stage is patched
    from ireval_app import state

    if not args.no_timeline:
        instrument()
    files = sorted(p for p in folder.iterdir() if p.is_file())
    qrels = next(p for p in files if p.name.startswith("qrels"))
    runs = [p for p in files if p != qrels]
    at = AppTest.from_file(str(tree / "app.py"), default_timeout=args.timeout)
    uploads = None
    if args.mode == "upload":
        at.run()  # the bundled sample, then the uploaders
        at.radio(key=state.SOURCE).set_value("upload").run()
        uploads = ((qrels.name, qrels.read_bytes()),
                   [(p.name, p.read_bytes()) for p in runs])
    sampler = Sampler(args.interval)
    if not args.no_timeline:
        sampler.start()
    SPANS.clear()
    start = time.perf_counter() - T0
    c0 = time.process_time()
    if uploads is not None:
        at.file_uploader(key=state.QRELS_UPLOADER).set_value((*uploads[0], "text/plain"))
        at.file_uploader(key=state.RUNS_UPLOADER).set_value(
            [(n, d, "text/plain") for n, d in uploads[1]])
        del uploads
    at.run()
    end = time.perf_counter() - T0
    cpu = time.process_time() - c0
    if at.exception:
        raise SystemExit(f"data: {at.exception[0].message}")
    print(f"### First load ({args.mode}, cache {args.cache}) of {folder.name}, tree {tree}\n")
    print(f"Page drawn after {end - start:.2f} s wall, {cpu:.2f} s CPU (process); peak RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB; "
          f"load average {os.getloadavg()[0]:.2f}.\n")
    import ireval_app.cache as app_cache

    if hasattr(app_cache, "read_memory"):  # trees before the reads were bounded by memory
        print(f"Reads together bounded by {app_cache.read_memory():,} bytes of resident "
              f"memory ({app_cache.READ_MEMORY_VAR}).\n")
    first = list(SPANS)
    for page in args.pages:
        t, c = time.perf_counter(), time.process_time()
        at.switch_page(f"pages/{page}.py").run()
        print(f"{page} first visit: {time.perf_counter() - t:.2f} s wall, "
              f"{time.process_time() - c:.2f} s CPU\n")
    after = time.perf_counter() - T0
    if args.no_timeline:
        return 0
    sampler.stop.set()
    sampler.join()
    print("| stage | thread | start s | end s | wall s | thread CPU s | process CPU s |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for sp in sorted(SPANS, key=lambda s: s.start):
        if sp.end - sp.start < 0.02 and sp.label in ("malloc trim", "prefetch started"):
            continue
        print(f"| {'  ' * sp.depth}{sp.label} | {sp.thread} | {sp.start - start:.2f} | "
              f"{sp.end - start:.2f} | {sp.end - sp.start:.2f} | {sp.cpu_thread:.2f} | "
              f"{sp.cpu_process:.2f} |")
    print("\nTotals per stage up to the page drawn (outermost calls; thread CPU):\n")
    totals: dict[str, list[float]] = {}
    for sp in first:
        got = totals.setdefault(sp.label, [0, 0.0, 0.0])
        got[0] += 1
        got[1] += sp.end - sp.start
        got[2] += sp.cpu_thread
    print("| stage | calls | wall s (sum) | thread CPU s (sum) |\n|---|---:|---:|---:|")
    for label, (n, w, c) in sorted(totals.items(), key=lambda x: -x[1][1]):
        print(f"| {label} | {n} | {w:.2f} | {c:.2f} |")
    print(f"\nSlices of {args.slice:g} s (cores busy = CPU seconds per wall second, all "
          "threads; the page was drawn at "
          f"{end - start:.2f} s):\n")
    print("\n".join(_slices(sampler, start, after, args.slice)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
