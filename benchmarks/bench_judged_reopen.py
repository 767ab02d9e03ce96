"""Reopen of a saved dataset with Judging-page labels, after a restart, cache warm.

A qrels of ``--lines`` lines (default 1.41M: 14,100 queries x 100 documents, 7-digit
document ids, grades 0-3), a small run, and a judging file of ``--labels`` labels (new
documents, two raters) are saved in a temporary SQLite workspace as a judged dataset's
version. Each tree given (``--trees``: checkouts of ireval, e.g. the one before and the
one after a change) first opens it once (untimed: fills its own column cache), then opens
it ``--rounds`` times in a **fresh process** each (a restarted server), trees alternating:
``workspace_glue.open_dataset`` timed inside the process (imports excluded), the files
read out of the workspace counted, and the process under ``/usr/bin/time -v`` (user + sys
CPU of the whole process, peak RSS). The 1-minute load average is printed with every
figure. Usage::

    python benchmarks/bench_judged_reopen.py --trees /work/main . [--lines 1.41M]
        [--labels 300] [--rounds 3]
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
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

CHILD = r"""
import json, sys, time
from ireval_app import workspace_glue
from ireval_core.workspace import Workspace

class Counting(Workspace):
    reads = 0
    def read_file(self, *a, **k):
        Counting.reads += 1
        return super().read_file(*a, **k)

ws = Counting(sys.argv[1])
t = time.perf_counter()
info, loaded = workspace_glue.open_dataset(ws, sys.argv[2])
took = time.perf_counter() - t
assert loaded.qrels is not None and loaded.qrels.ok, loaded.qrels
print(json.dumps({"open_s": took, "reads": Counting.reads, "sha256": loaded.qrels.sha256,
                  "lines": len(loaded.qrels.qrels), "key": loaded.key}))
"""


def _size(text: str) -> int:
    scale = {"K": 1_000, "M": 1_000_000}.get(text[-1].upper(), 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def _make(folder: Path, lines: int, labels: int) -> str:
    from ireval_core.decisions import judging
    from ireval_core.workspace import FileRounds, Workspace

    rng = np.random.default_rng(7)
    per = 100
    queries = max(1, lines // per)
    qids = np.repeat(np.arange(1_000_000, 1_000_000 + queries), per)[:lines]
    start = np.repeat(rng.integers(0, 8_800_000, size=queries), per)[:lines]
    docs = (start + np.tile(np.arange(per) * 87_973, queries)[:lines]) % 8_800_000
    grades = rng.integers(0, 4, size=lines)
    qrels = "".join(f"{q} 0 {d} {g}\n" for q, d, g in zip(qids.tolist(), docs.tolist(),
                                                           grades.tolist(), strict=True))
    run = "".join(f"{1_000_000 + q} Q0 {d} {r} {100 - r}.0 bm25\n"
                  for q in range(50) for r, d in enumerate(range(10), start=1))
    rows = [judging.Judgment(str(1_000_000 + i % 50), f"n{i}", float(i % 4),
                             "ann" if i % 3 else "bob", f"2026-11-{1 + i % 28:02d}T10:00:00Z")
            for i in range(labels)]
    ws = Workspace.open(str(folder / "ws.db"))
    saved = ws.save_dataset([("qrels", "qrels.txt", qrels.encode()),
                             ("run", "bm25.txt", run.encode())], name="judged",
                            saved_by="bench")
    name = judging.round_file_name("2026-11")
    ws.add_to_dataset(saved.id, [("labels", name, judging.judgments_file(
        judging.FILE_PREFIX + "2026-11", rows))],
        rounds={"qrels.txt": FileRounds((), 0), "bm25.txt": FileRounds((), 0),
                name: FileRounds((judging.FILE_PREFIX + "2026-11",), labels)},
        replace=True, saved_by="bench")
    ws.close()
    return saved.id


def _run(tree: Path, db: Path, dataset_id: str, cache_dir: Path) -> dict[str, float]:
    env = {**os.environ, "IREVAL_CACHE_DIR": str(cache_dir), "PYTHONPATH": str(tree)}
    env.pop("IREVAL_CACHE", None)
    out = subprocess.run(["/usr/bin/time", "-v", sys.executable, "-c", CHILD, str(db),
                          dataset_id], cwd=tree, env=env, capture_output=True, text=True,
                         check=False)
    if out.returncode:
        raise SystemExit(f"{tree}: {out.stderr[-3000:]}")
    got = json.loads(out.stdout.strip().splitlines()[-1])

    def field(label: str) -> float:
        match = re.search(rf"{label}: ([\d.]+)", out.stderr)
        assert match, label
        return float(match.group(1))

    got["cpu_s"] = field("User time \\(seconds\\)") + field("System time \\(seconds\\)")
    got["peak_mib"] = field("Maximum resident set size \\(kbytes\\)") / 1024
    got["load"] = os.getloadavg()[0]
    return got


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", nargs="+", type=Path, required=True)
    parser.add_argument("--lines", default="1.41M")
    parser.add_argument("--labels", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="ireval-judged-"))
    try:
        dataset_id = _make(folder, _size(args.lines), args.labels)
        trees = [t.resolve() for t in args.trees]
        caches = {t: folder / f"cache-{i}" for i, t in enumerate(trees)}
        for t in trees:
            warm = _run(t, folder / "ws.db", dataset_id, caches[t])
            print(f"{t}: warm-up {warm['open_s']:.2f} s, {warm['reads']} reads", flush=True)
        for r in range(args.rounds):
            for t in (trees if r % 2 == 0 else trees[::-1]):
                got = _run(t, folder / "ws.db", dataset_id, caches[t])
                print(f"{t}: open {got['open_s']:.2f} s, process CPU {got['cpu_s']:.2f} s, "
                      f"peak {got['peak_mib']:.0f} MiB, {got['reads']} reads, "
                      f"{got['lines']} qrels lines, sha256 {got['sha256'][:12]}, "
                      f"load {got['load']:.1f}", flush=True)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
