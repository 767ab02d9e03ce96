"""Benchmark of the Judging page's keypress: a grade given, the next document shown.

The real page in a real session (AppTest) on a real SQLite workspace (a temporary file):
the bundled sample's qrels and two runs (``bm25``, ``neural_rerank``) saved as a dataset,
the page opened on it for ``nDCG@10`` with a rater's name, then ``--keys`` grades given
one after the other, each as the grade button's click (what its keyboard shortcut
presses; 0 and 1 in turn: the sample's verdict settles after the first batch of 10).
Timed per keypress:

* **page run**: the click and the script run it triggers, until the next document is
  drawn. AppTest reruns the whole page for a click (a browser reruns only the judging
  area, an ``st.fragment``), so this is an upper bound of what the server spends;
* **label work**: the part of that run that handles the grade (``run_pending``: the
  label written to the workspace as the dataset's next version, the queue recomputed,
  the next item chosen), the bulk of a fragment's run;
* **agreement shown**: the raters' agreement the page draws after the next document
  (``agreement``; only while its panel is open), when it draws it.

With ``--second-rater``, another rater ("other") has already graded the queue's first 40
documents, the judging set asks a second rater for 50% of them, and the page's "Raters,
agreement and exports" panel is open: most keypresses then change the agreement shown,
which is computed again after each of them.

Target (issue 32): the next item within 200 ms on the server. Wall and CPU seconds
(``time.process_time``) and the load average are printed; on a shared machine the CPU
figure is the steadier one. Run from the repository root::

    .venv/bin/python benchmarks/bench_judging_keypress.py [--keys 10] [--measure nDCG@10]
        [--second-rater]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _judging(at: Any, grade_key: str) -> bool:
    """Whether the page shows a document to grade (else what it shows is printed)."""
    if any(b.key == f"{grade_key}0" for b in at.button):
        return True
    shown = [e.value for e in (*at.exception, *at.error, *at.info, *at.warning, *at.success)]
    print("no document to grade:", shown, file=sys.stderr)
    return False


def _second_rater(ws: Any, ds: str, measure: str) -> None:
    """Another rater's grades of the queue's first 40 documents, written as the page
    writes them, and a judging set asking a second rater for 50% of the documents."""
    from ireval_core import read_qrels, read_run
    from ireval_core.decisions import judging
    from ireval_core.decisions.queue import JudgeQueue
    from ireval_core.workspace import FileRounds, JudgingSet

    info = ws.get_dataset(ds)
    by_name = {f.name: ws.read_file(info.id, f.position) for f in info.files}
    qrels = read_qrels(by_name["qrels.txt"], name="qrels.txt")
    runs = [read_run(by_name[n], name=n) for n in ("run_bm25.txt", "run_neural.txt")]
    items = JudgeQueue(qrels, runs, measure, baseline=runs[0].name).next(40)
    round_name = judging.FILE_PREFIX + "2026-11-28T20:00:00Z other"
    rows = [judging.Judgment(i.query, i.doc, float(n % 3), "other", "2026-11-28T20:00:00Z")
            for n, i in enumerate(items)]
    name = judging.round_file_name("2026-11-28T20:00:00Z other")
    ws.add_to_dataset(ds, [("labels", name, judging.judgments_file(round_name, rows))],
                      rounds={**{f.name: FileRounds((), 0) for f in info.files},
                              name: FileRounds((round_name,), len(rows))},
                      saved_by="other")
    ws.set_judging_set(ds, JudgingSet("", "", 0.5), author="bench")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keys", type=int, default=10,
                    help="grades to give (timed); fewer when the verdict settles first")
    ap.add_argument("--measure", default="nDCG@10")
    ap.add_argument("--timeout", type=float, default=120.0, help="per script run (s)")
    ap.add_argument("--second-rater", action="store_true",
                    help="another rater's labels, a 50%% overlap, the agreement panel open")
    args = ap.parse_args(argv)
    folder = Path(tempfile.mkdtemp(prefix="ireval-keypress-"))
    try:
        return _run(args, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(args: argparse.Namespace, folder: Path) -> int:
    os.environ["IREVAL_WORKSPACE"] = str(folder / "workspace.db")
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    from ireval_app import judging_glue
    from ireval_app.keys import judging as keys
    from ireval_core.workspace import Workspace

    sample = ROOT / "sample_data"
    files = [("qrels", "qrels.txt", (sample / "qrels.txt").read_bytes()),
             ("run", "run_bm25.txt", (sample / "run_bm25.txt").read_bytes()),
             ("run", "run_neural.txt", (sample / "run_neural.txt").read_bytes())]
    with Workspace.open(os.environ["IREVAL_WORKSPACE"]) as ws:
        ds = ws.save_dataset(files, name="keypress", saved_by="bench").short_id
        if args.second_rater:
            _second_rater(ws, ds, args.measure)

    work: list[tuple[float, float]] = []
    plain = judging_glue.run_pending

    def timed_pending(session: judging_glue.Acting) -> None:
        had = session.pending is not None
        w, c = time.perf_counter(), time.process_time()
        plain(session)
        if had:
            work.append((time.perf_counter() - w, time.process_time() - c))

    judging_glue.run_pending = timed_pending  # the page calls jg.run_pending at run time
    agreed: list[tuple[float, float]] = []
    plain_agreement = judging_glue.agreement

    def timed_agreement(session: judging_glue.Session) -> object:
        w, c = time.perf_counter(), time.process_time()
        try:
            return plain_agreement(session)
        finally:
            agreed.append((time.perf_counter() - w, time.process_time() - c))

    judging_glue.agreement = timed_agreement  # type: ignore[assignment]

    w = time.perf_counter()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=args.timeout)
    at.query_params["ds"] = ds
    at.query_params["measure"] = args.measure
    at.switch_page("pages/judging.py").run()
    at.text_input(key=keys.RATER).input("bench").run()
    if args.second_rater:
        at.session_state[getattr(keys, "RATERS", "ireval.judging.raters")] = True
        at.run()
    if at.exception:
        print(at.exception[0].value, file=sys.stderr)
        return 1
    print(f"page opened, queue built: {time.perf_counter() - w:.2f} s wall", flush=True)
    if not _judging(at, keys.GRADE):
        return 1
    walls, cpus = [], []
    agreed.clear()  # the keypresses' own
    for n in range(args.keys):
        if n and not _judging(at, keys.GRADE):
            break
        button = at.button(key=f"{keys.GRADE}{n % 2}")
        w, c = time.perf_counter(), time.process_time()
        button.click().run()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
        if at.exception:
            print(at.exception[0].value, file=sys.stderr)
            return 1
    load = os.getloadavg()
    ww = [x[0] for x in work]
    wc = [x[1] for x in work]
    print(f"{len(walls)} keypresses, {args.measure}, sample (bm25 vs neural_rerank):")
    print(f"  page run (click -> next document drawn, whole page): median "
          f"{1e3 * statistics.median(walls):.0f} ms wall (max {1e3 * max(walls):.0f}), "
          f"{1e3 * statistics.median(cpus):.0f} ms CPU")
    if ww:
        print(f"  label work (write the version, recompute the queue, next item): median "
              f"{1e3 * statistics.median(ww):.0f} ms wall (max {1e3 * max(ww):.0f}), "
              f"{1e3 * statistics.median(wc):.0f} ms CPU")
    if agreed:
        aw, ac = [x[0] for x in agreed], [x[1] for x in agreed]
        print(f"  agreement shown (the rater analysis, or its memo), {len(agreed)} calls: "
              f"median {1e3 * statistics.median(aw):.0f} ms wall (max {1e3 * max(aw):.0f}), "
              f"{1e3 * statistics.median(ac):.0f} ms CPU (max {1e3 * max(ac):.0f})")
    print(f"  load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
