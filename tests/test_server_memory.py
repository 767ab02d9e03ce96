"""A real server's memory returns near its baseline when sessions end (issue 13).

``benchmarks/bench_memory.py`` drives ``streamlit run app.py`` with chromium: after a
warm-up, two sessions one after the other each upload a different ~38 MB run (1M
lines) through the real uploader and are closed; Streamlit drops them after its
session TTL (1 s here). The server's resident memory (VmRSS) must grow while a session
holds its upload (so the measurement sees the data) and come back within 48 MiB of the
baseline once the sessions are gone. The app's cache budget is set to 16 MiB, so that
what is left is what nothing should hold (``tests/test_memory_budget.py`` tests what the
budget keeps). The last measurement is taken as soon as the memory is back within the
margin (polled every 0.1 s), at the latest 10 s after the sessions were dropped (a loaded
machine releases later; a fixed wait of 3 s was both slower and too short there).
"""

from __future__ import annotations

import sys
from pathlib import Path

from browser_support import ROOT, require_chromium

sys.path.insert(0, str(ROOT / "benchmarks"))
require_chromium()

import bench_memory  # noqa: E402

LINES = 1_000_000  # about 38 MB of run text per session
MARGIN_MIB = 48


def test_memory_returns_near_the_baseline_when_sessions_end(tmp_path: Path) -> None:
    runs = []
    for seed in (1, 2):
        path = tmp_path / f"run_{seed}.txt"
        bench_memory.write_run(path, LINES, seed=seed)
        runs.append((path, LINES))
    figures = bench_memory.measure(runs, cache_mb=16, workdir=tmp_path,
                                   released=lambda grown: grown < MARGIN_MIB, wait_release=10)
    print("\n" + figures.table())
    grown = [o - figures.baseline for o in figures.open_]
    assert min(grown) > 100, grown  # each open session holds its upload and its parse
    assert figures.ended - figures.baseline < MARGIN_MIB, figures.table()
