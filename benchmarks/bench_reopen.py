"""A saved dataset opened by its link after a restart, and by ten sessions at once.

For each id shape a qrels and ``--runs`` run files (``make_data.py``, ``--corpus real`` by
default; the issue's dataset is three runs of 7M lines: ``--size 7M --runs 3``; run 1 is
the generated run, the others rerank its documents, :func:`make_data.app_folder`) are saved
in a temporary workspace; then, each in a **fresh process** (a restarted server), the app
(Streamlit's AppTest, the real pages) opens the link ``/metrics?ds=<id>`` and draws the
Metrics page:

* **reopen**: one session; with the cache warm (filled by an untimed run before: the
  parsed columns, the document maps and the Metrics page's evaluation), with the columns
  warm but the evaluation entries deleted before the run ("columns": the evaluation and
  its joins computed, as before evaluations were cached), and with ``IREVAL_CACHE=off``
  (the files parsed from the workspace's bytes), in rotating order (``--no-off`` leaves
  the parsed reopen out: at 3 x 7M lines it is the slow one);
* **sessions**: ``--sessions`` sessions (threads, one AppTest each, as many browsers on
  one server) open the same link at once: the time to the last one drawn, and the
  process's peak memory (the columns are shared, not copied per session).

Each process runs under ``/usr/bin/time -v``: wall, user + sys CPU (all threads), peak
RSS; the 1-minute load average is printed before every figure (a loaded machine inflates
wall time much more than CPU time). Inside the process, the time from opening the link
to the page drawn is measured too (imports excluded). The workspace and the cache live
in a temporary folder, deleted at the end. Usage::

    python benchmarks/bench_reopen.py [--shapes msmarco prefixed uuid] [--size 7M]
        [--runs 3] [--corpus real] [--rounds 2] [--sessions 10] [--no-off]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def _child(args: argparse.Namespace) -> int:
    """In the fresh process: open the link in ``args.sessions`` sessions at once."""
    import resource

    from streamlit.testing.v1 import AppTest

    done: list[float] = []
    errors: list[str] = []
    t0, c0 = time.perf_counter(), time.process_time()

    def session() -> None:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=args.timeout)
        at.query_params["ds"] = args.dataset
        at.switch_page("pages/metrics.py").run()
        if at.exception:
            errors.append(at.exception[0].message)
        elif not (at.table or at.dataframe):
            errors.append("no table drawn")
        done.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=session) for _ in range(args.sessions)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print(json.dumps({"last_drawn_s": max(done), "first_drawn_s": min(done),
                      "cpu_s": time.process_time() - c0, "errors": errors,
                      "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}),
          flush=True)
    # Out now, as a stopped server goes: the page's background work (the joins the app
    # prefetches for the next pages once one is drawn) may still be running in Arrow's
    # threads, and an interpreter shutdown under them can abort.
    os._exit(0 if not errors else 1)


def _timed(cmd: list[str], env: dict[str, str]) -> dict[str, float | str]:
    load = os.getloadavg()[0]
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, env=env,
                       cwd=ROOT)
    if p.returncode:
        raise SystemExit(f"{cmd} failed:\n{p.stdout[-2000:]}\n{p.stderr[-3000:]}")
    inner = json.loads(p.stdout.strip().splitlines()[-1])

    def field(name: str) -> str:
        m = re.search(rf"{re.escape(name)}: (.+)", p.stderr)
        return m.group(1).strip() if m else "nan"

    wall = field("Elapsed (wall clock) time (h:mm:ss or m:ss)").split(":")
    return {**inner, "load": load,
            "wall_s": sum(float(x) * 60 ** i for i, x in enumerate(reversed(wall))),
            "cpu_total_s": float(field("User time (seconds)")) + float(
                field("System time (seconds)")),
            "rss_mib": int(field("Maximum resident set size (kbytes)")) / 1024}


def _drop_evaluations(folder: Path) -> None:
    """Delete the cache's evaluation entries (``eval-*.arrow``), keeping the columns."""
    for p in folder.glob("eval-*.arrow"):
        p.unlink()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", default=["msmarco", "prefixed", "uuid"])
    ap.add_argument("--size", default="7M")
    ap.add_argument("--runs", type=int, default=3, help="run files in the dataset")
    ap.add_argument("--no-off", action="store_true",
                    help="leave out the reopens with IREVAL_CACHE=off (parsed)")
    ap.add_argument("--corpus", default="real", choices=["default", "real"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dataset", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args)

    import make_data

    from ireval_core.workspace import Workspace

    rows = []
    for shape in args.shapes:
        folder = make_data.app_folder(args.size, shape, args.runs, corpus=args.corpus)
        tmp = Path(tempfile.mkdtemp(prefix="ireval-bench-reopen-"))
        try:
            env = dict(os.environ, IREVAL_WORKSPACE=str(tmp / "workspace.db"),
                       IREVAL_CACHE_DIR=str(tmp / "columns"), PYTHONPATH=str(ROOT))
            env.pop("IREVAL_CACHE", None)
            os.environ["IREVAL_WORKSPACE"] = env["IREVAL_WORKSPACE"]
            ws = Workspace.open()
            saved = [("qrels", "qrels.txt", (folder / "qrels.txt").read_bytes())]
            saved += [("run", f"run_{i + 1}.txt", (folder / f"run_{i + 1}.txt").read_bytes())
                      for i in range(args.runs)]
            info = ws.save_dataset(saved, name=f"{args.size}-{shape}", saved_by="bench")
            del saved
            ws.close()
            cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--dataset",
                   info.id, "--timeout", str(args.timeout)]
            _timed([*cmd, "--sessions", "1"], env)  # fills the cache (untimed)
            off = dict(env, IREVAL_CACHE="off")
            kinds = [("cache", env), ("columns", env)] + (
                [] if args.no_off else [("off", off)])
            for r in range(args.rounds):
                for label, e in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
                    if label == "columns":
                        _drop_evaluations(tmp / "columns")
                    got = _timed([*cmd, "--sessions", "1"], e)
                    rows.append((shape, f"reopen, {label}", got))
                    print(f"[reopen] {shape} {label}: {got}", file=sys.stderr)
            for label, e in [k for k in kinds if k[0] != "columns"]:
                got = _timed([*cmd, "--sessions", str(args.sessions)], e)
                rows.append((shape, f"{args.sessions} sessions, {label}", got))
                print(f"[sessions] {shape} {label}: {got}", file=sys.stderr)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    print(f"### Reopen of a saved dataset (qrels + {args.runs} x {args.size}, {args.corpus} "
          "corpus) on a fresh process\n")
    print("| shape | what | load (1 min) | link to last drawn s | process wall s | "
          "process CPU s (user+sys) | peak RSS MiB |\n|---|---|---:|---:|---:|---:|---:|")
    for shape, what, g in rows:
        print(f"| {shape} | {what} | {g['load']:.1f} | {g['last_drawn_s']:.2f} | "
              f"{g['wall_s']:.2f} | {g['cpu_total_s']:.2f} | {g['rss_mib']:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
