"""The app at scale: drive the real pages (AppTest) on a folder of qrels and runs.

Times, each in this one process (as one browser session on a fresh server):

* **first load**: the Data page on the folder (reading every file, the summary); with
  ``--upload``, the Data page reading the folder's files uploaded through its uploaders;
* **first visit** of each results page;
* **return visit** of each page (cached: what a user feels when switching back);
* **option change**: the relevance level changed on Metrics, then each page again.

With ``--pause S`` each timed step comes S seconds after the previous one (a user
reading the page), so the work the app starts in the background after a page is drawn
can finish first. Peak RSS is ``ru_maxrss`` of this process. The folder is opened the way
``make run DATA=folder`` opens it (``IREVAL_DATA_DIR``); the workspace is a
temporary file. Usage::

    python benchmarks/bench_app.py benchmarks/data/500k-ties [--pages metrics curves]

The targets of the speed issue: first load <= 10 s, first visit <= 3 s, return visit
and option change <= 0.5 s, peak memory <= 2.5 GB (3 x 7M-line runs).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = ("metrics", "curves", "compare", "queries", "rounds", "ndcg_vs_dcg")


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="a folder with a qrels* file and run files")
    ap.add_argument("--pages", nargs="+", default=list(PAGES), choices=PAGES)
    ap.add_argument("--timeout", type=float, default=600.0, help="per script run (s)")
    ap.add_argument("--upload", action="store_true",
                    help="upload the folder's files through the Data page's uploaders (a new "
                         "upload, as a browser sends it) instead of opening the folder as "
                         "IREVAL_DATA_DIR; the page first shows the bundled sample (untimed)")
    ap.add_argument("--pause", type=float, default=0.0,
                    help="seconds to wait (untimed) before each timed step, as a user reading "
                         "the page does: work the app starts in the background after a page "
                         "is drawn (joins, evaluations) can then finish; 0: back to back")
    args = ap.parse_args(argv)
    if not args.upload:
        os.environ["IREVAL_DATA_DIR"] = str(args.folder.resolve())
    os.environ["IREVAL_WORKSPACE"] = str(Path(tempfile.mkdtemp()) / "workspace.db")
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    from ireval_app import state

    size = sum(p.stat().st_size for p in args.folder.iterdir() if p.is_file())
    rows: list[tuple[str, str, float, float]] = []

    def timed(label: str, page: str, run) -> AppTest:  # noqa: ANN001
        if args.pause and rows:
            time.sleep(args.pause)
        t, c = time.perf_counter(), time.process_time()
        at = run()
        dt, dc = time.perf_counter() - t, time.process_time() - c
        if at.exception:
            raise SystemExit(f"{page}: {at.exception[0].message}")
        rows.append((label, page, dt, dc))
        print(f"[app] {label:<14} {page:<12} {dt:7.2f} s  CPU {dc:7.2f} s   "
              f"peak {_rss_mib():,.0f} MiB", file=sys.stderr)
        return at

    base = _rss_mib()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=args.timeout)
    if args.upload:
        files = sorted(p for p in args.folder.iterdir() if p.is_file())
        qrels = next(p for p in files if p.name.lower().startswith("qrels"))
        runs = [(p.name, p.read_bytes(), "text/plain") for p in files if p != qrels]
        at.run()  # the bundled sample, then the uploaders (untimed)
        at.radio(key=state.SOURCE).set_value("upload").run()
        base = _rss_mib()
        at.file_uploader(key=state.QRELS_UPLOADER).set_value(
            (qrels.name, qrels.read_bytes(), "text/plain"))
        at.file_uploader(key=state.RUNS_UPLOADER).set_value(runs)
        del runs
    timed("first load", "data", at.run)
    for page in args.pages:
        timed("first visit", page, lambda p=page: at.switch_page(f"pages/{p}.py").run())
    for page in args.pages:
        timed("return visit", page, lambda p=page: at.switch_page(f"pages/{p}.py").run())
    at.switch_page("pages/metrics.py").run()
    if args.pause:
        time.sleep(args.pause)
    timed("option change", "metrics",
          lambda: at.number_input(key=state.OPTION_KEYS["rel_level"]).set_value(2.0).run())
    for page in args.pages:
        if page != "metrics":
            timed("option change", page,
                  lambda p=page: at.switch_page(f"pages/{p}.py").run())

    print(f"### App on {args.folder} ({size / 2**20:,.0f} MiB of files)\n")
    print(f"Steps {'back to back' if not args.pause else f'{args.pause:g} s apart (untimed)'}.\n")
    print(f"Load average at the end: {os.getloadavg()[0]:.2f} (CPU seconds count every thread "
          "of this process: a busy machine inflates the wall time, not the CPU time).\n")
    print("| step | page | seconds | CPU seconds |\n|---|---|---:|---:|")
    for label, page, dt, dc in rows:
        print(f"| {label} | {page} | {dt:.2f} | {dc:.2f} |")
    print(f"\nPeak RSS {_rss_mib():,.0f} MiB (after imports {base:,.0f} MiB).")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
