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
in a temporary folder, deleted at the end (``--work DIR``: kept in ``DIR`` and reused by
the next run, the datasets saved once). ``--trees OLD .`` runs every figure for each
checkout given (e.g. an export of an older commit and this one), alternating their order
round by round, each tree's own code opening the same workspace and cache folder. Usage::

    python benchmarks/bench_reopen.py [--shapes msmarco prefixed uuid] [--size 7M]
        [--runs 3] [--corpus real] [--rounds 2] [--sessions 10] [--no-off]
        [--trees OLD_TREE .] [--work DIR]
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
    """In the fresh process: open the link in ``args.sessions`` sessions at once, with the
    app of ``args.tree``."""
    import resource

    tree = Path(args.tree).resolve()
    sys.path.insert(0, str(tree))
    from streamlit.testing.v1 import AppTest

    components = _one_server()
    done: list[float] = []
    errors: list[str] = []
    t0, c0 = time.perf_counter(), time.process_time()

    def session() -> None:
        at = AppTest.from_file(str(tree / "app.py"), default_timeout=args.timeout)
        if components is not None:  # the server's, found once at its start
            at._bidi_component_manager = components
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


def _one_server() -> object | None:
    """Make the ``AppTest`` sessions of this process share what a server's sessions share,
    made once at its start, and return Streamlit's registry of installed components (``None``
    when this Streamlit has none), to be given to each ``AppTest``.

    Each ``AppTest`` otherwise builds its own: the registry (a scan of the metadata of every
    installed distribution), the script cache (each page compiled again), together about
    0.4-0.5 s of CPU over ten sessions here, and it resets the class-wide "app has a
    ``pages/`` folder" flag before every run: another session's script starting in that
    instant runs ``app.py`` instead of its page and fails. A server scans and compiles once
    and sets the flag once; so do these sessions, with one registry, one script cache and
    the flag reset on a subclass only. The pages' own work is untouched.
    """
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.runtime.scriptrunner.script_cache import ScriptCache
    from streamlit.testing.v1 import app_test

    class _ServerPages(PagesManager):
        """``AppTest``'s reset of the flag lands on this subclass, not on the class the
        script runner reads."""

    scripts = ScriptCache()
    if getattr(app_test, "PagesManager", None) is PagesManager:
        app_test.PagesManager = _ServerPages  # type: ignore[misc]
    if getattr(app_test, "ScriptCache", None) is ScriptCache:
        app_test.ScriptCache = lambda: scripts  # type: ignore[assignment]
    try:
        from streamlit.components.v2.component_manager import BidiComponentManager
    except ImportError:
        return None
    components = BidiComponentManager()
    components.discover_and_register_components(start_file_watching=False)
    return components


def _timed(cmd: list[str], env: dict[str, str], tree: Path = ROOT
           ) -> dict[str, float | str]:
    load = os.getloadavg()[0]
    p = subprocess.run(["/usr/bin/time", "-v", *cmd, "--tree", str(tree)], capture_output=True,
                       text=True, env=dict(env, PYTHONPATH=str(tree)), cwd=tree)
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


def _saved_dataset(work: Path, folder: Path, name: str, runs: int) -> str:
    """The id of the dataset of ``folder``'s qrels and ``runs`` runs in the workspace of
    ``work`` (saved now unless a run with ``--work`` saved it before)."""
    from ireval_core.workspace import Workspace

    record = work / "datasets.json"
    known = json.loads(record.read_text()) if record.exists() else {}
    if name in known:
        return str(known[name])
    ws = Workspace.open(str(work / "workspace.db"))
    saved = [("qrels", "qrels.txt", (folder / "qrels.txt").read_bytes())]
    saved += [("run", f"run_{i + 1}.txt", (folder / f"run_{i + 1}.txt").read_bytes())
              for i in range(runs)]
    info = ws.save_dataset(saved, name=name, saved_by="bench")
    del saved
    ws.close()
    known[name] = info.id
    record.write_text(json.dumps(known))
    return info.id


def _shape_rows(args: argparse.Namespace, shape: str, folder: Path, tmp: Path,
                trees: list[Path]) -> list[tuple[str, str, dict[str, float | str]]]:
    """The figures of one id shape: the dataset of ``folder`` saved in the workspace of
    ``tmp``, each tree with its own cache folder there (its entries may be of another
    format), the cache filled by an untimed run, then the reopens (kinds rotating, trees
    alternating) and the sessions."""
    names = {t: (t.name if len({u.name for u in trees}) == len(trees) else str(t))
             for t in trees}
    base = dict(os.environ, IREVAL_WORKSPACE=str(tmp / "workspace.db"))
    base.pop("IREVAL_CACHE", None)
    os.environ["IREVAL_WORKSPACE"] = base["IREVAL_WORKSPACE"]
    dataset = _saved_dataset(tmp, folder, f"{args.size}-{shape}-{args.corpus}-{args.runs}",
                             args.runs)
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", "--dataset", dataset,
           "--timeout", str(args.timeout)]
    columns = {t: tmp / ("columns" if i == 0 else f"columns-{i}") for i, t in enumerate(trees)}
    envs = {t: dict(base, IREVAL_CACHE_DIR=str(columns[t])) for t in trees}
    for t in trees:
        _timed([*cmd, "--sessions", "1"], envs[t], t)  # fills the cache (untimed)
    kinds = ["cache"] + ([] if args.no_columns else ["columns"]) + ([] if args.no_off else ["off"])

    def env_of(label: str, t: Path) -> dict[str, str]:
        return dict(envs[t], IREVAL_CACHE="off") if label == "off" else envs[t]

    def order(r: int) -> list[Path]:
        return trees if r % 2 == 0 else trees[::-1]

    def tag(t: Path) -> str:
        return f" ({names[t]})" if len(trees) > 1 else ""

    rows = []
    for r in range(args.rounds):
        for label in kinds[r % len(kinds):] + kinds[:r % len(kinds)]:
            for t in order(r):
                if label == "columns":  # the run computes and keeps them again
                    _drop_evaluations(columns[t])
                got = _timed([*cmd, "--sessions", "1"], env_of(label, t), t)
                rows.append((shape, f"reopen, {label}{tag(t)}", got))
                print(f"[reopen] {shape} {label}{tag(t)}: {got}", file=sys.stderr)
    for r in range(args.rounds if len(trees) > 1 else 1):
        for label in [k for k in kinds if k != "columns"]:
            for t in order(r):
                got = _timed([*cmd, "--sessions", str(args.sessions)], env_of(label, t), t)
                rows.append((shape, f"{args.sessions} sessions, {label}{tag(t)}", got))
                print(f"[sessions] {shape} {label}{tag(t)}: {got}", file=sys.stderr)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", default=["msmarco", "prefixed", "uuid"])
    ap.add_argument("--size", default="7M")
    ap.add_argument("--runs", type=int, default=3, help="run files in the dataset")
    ap.add_argument("--no-off", action="store_true",
                    help="leave out the reopens with IREVAL_CACHE=off (parsed)")
    ap.add_argument("--no-columns", action="store_true",
                    help="leave out the reopens whose evaluation entries are deleted first")
    ap.add_argument("--corpus", default="real", choices=["default", "real"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--sessions", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--trees", nargs="+", type=Path, default=[ROOT],
                    help="checkouts to measure, alternating (default: this one)")
    ap.add_argument("--work", type=Path,
                    help="keep the workspace and the cache in this folder, and reuse them")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--dataset", help=argparse.SUPPRESS)
    ap.add_argument("--tree", default=str(ROOT), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return _child(args)

    import make_data

    trees = [t.resolve() for t in args.trees]
    rows = []
    for shape in args.shapes:
        folder = make_data.app_folder(args.size, shape, args.runs, corpus=args.corpus)
        tmp = args.work or Path(tempfile.mkdtemp(prefix="ireval-bench-reopen-"))
        tmp.mkdir(parents=True, exist_ok=True)
        try:
            rows += _shape_rows(args, shape, folder, tmp, trees)
        finally:
            if args.work is None:
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
