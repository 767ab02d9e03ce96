"""The Labeling pages on 3.6M label rows (12 rounds x 5,000 queries x top 20 x 3 raters).

Drives the real pages with AppTest, as one browser session: the Labeling data page
(reading the files), the first render of Trend, Raters and Label changes, then later
interactions. Targets of the labeling issue: first render under 5 s, later interactions
under 1 s. The data is the CSV ``benchmarks/bench_labels.py`` writes (run it first).

    python benchmarks/bench_label_pages.py [PAUSE]

``PAUSE`` (seconds, default 0): time spent reading the Labeling data page before opening
Trend, as a person does; the Trend and Raters analyses are prepared in the background
meanwhile (``ireval_app.labels_widgets.prepare_analyses``). Each step has its wall time
the CPU time of the whole process (every thread: the script runs in one), so that a
run on a loaded machine can be told apart from slower code, and the peak RSS so far.
"""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "benchmarks" / "data" / "labels"


def main() -> int:
    os.environ["IREVAL_WORKSPACE"] = str(Path(tempfile.mkdtemp()) / "workspace.db")
    sys.path.insert(0, str(ROOT))
    from streamlit.testing.v1 import AppTest

    from ireval_app import labels_glue
    from ireval_app.keys import labels_data as labels_data_keys
    from ireval_app.keys import labels_trend as labels_trend_keys

    load0 = os.getloadavg()[0]
    files = [(p.name, p.read_bytes()) for p in sorted(DATA.glob("labels_*.csv"))]
    if not files:
        raise SystemExit(f"no labeling files in {DATA}: run benchmarks/bench_labels.py first")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=600)
    at.session_state["ireval.labels.files"] = labels_glue.Files.of(files)  # as if uploaded
    at.session_state["ireval.view." + labels_data_keys.SOURCE] = "upload"
    rows = []

    def timed(label: str, run) -> None:  # noqa: ANN001
        t, c = time.perf_counter(), time.process_time()
        run()
        if at.exception:
            raise SystemExit(f"{label}: {at.exception[0].message}")
        rows.append((label, time.perf_counter() - t, time.process_time() - c,
                     resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024))

    def page(name: str):  # noqa: ANN202
        return lambda: at.switch_page(f"pages/{name}.py").run()

    timed("Labeling data (reads the files)", page("labels_data"))
    pause = float(sys.argv[1]) if len(sys.argv) > 1 else 0.0
    time.sleep(pause)  # reading the page; not counted
    timed(f"Trend, first render ({pause:g} s after)", page("labels_trend"))
    timed("Raters, first render", page("labels_raters"))
    timed("Label changes, first render", page("labels_changes"))
    timed("Trend, return", page("labels_trend"))
    other = at.radio(key=labels_trend_keys.GRADE_SYSTEM).options[-1]
    timed("Trend, another system's grades",
          lambda: at.radio(key=labels_trend_keys.GRADE_SYSTEM).set_value(other).run())
    timed("Raters, return", page("labels_raters"))
    print(f"| step ({sum(len(d) for _, d in files) / 2**20:,.0f} MiB of CSV) | wall s "
          "| CPU s | peak RSS so far (MiB) |")
    print("|---|---:|---:|---:|")
    for label, dt, cpu, peak in rows:
        print(f"| {label} | {dt:.2f} | {cpu:.2f} | {peak:,} |")
    print(f"\nPeak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024:,} MiB; "
          f"load average {load0:.2f} at the start, {os.getloadavg()[0]:.2f} at the end.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
