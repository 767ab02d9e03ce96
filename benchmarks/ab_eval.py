"""A/B of parse + evaluate against an older checkout of ireval, and pytrec_eval, per id shape.

    python benchmarks/ab_eval.py OLD_TREE [--shapes ties uuid ...] [--size 7M] [--rounds 2]

``OLD_TREE``: a directory holding another version of the repository (``git worktree add
--detach /tmp/old <commit>``). For each shape and round, three fresh processes run the same
task as ``bench_eval.py`` (8 measures, the files of ``make_data.py``): this tree's
``_worker.py``, the old tree's, and pytrec_eval, in an order rotated each round, so that
neither version always runs first on a shared machine. Every sample is printed (wall and
CPU seconds, peak RSS, load average) and the means checked against pytrec_eval's (1e-9).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def sample(tree: Path, lib: str, qrels: Path, run: Path) -> dict:
    cmd = [sys.executable, str(tree / "benchmarks" / "_worker.py"), "eval", lib, str(qrels),
           str(run)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tree, check=True)
    return json.loads(p.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("--shapes", nargs="+", default=["ties", "msmarco", "prefixed", "uuid",
                                                     "mixed"])
    ap.add_argument("--size", default="7M")
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from make_data import ensure, paths

    print("| shape | round | who | wall (s) | CPU (s) | peak MiB | / pytrec_eval | load |")
    print("|---|---:|---|---:|---:|---:|---:|---:|")
    for shape in args.shapes:
        ensure([args.size], shape=shape, quiet=True)
        files = paths(args.size, shape)
        for path in (files["qrels"], files["run"]):
            path.read_bytes()  # page cache
        who = [("new", HERE.parent, "ireval"), ("old", args.old.resolve(), "ireval"),
               ("pytrec_eval", HERE.parent, "pytrec_eval")]
        for r in range(args.rounds):
            got = {}
            for name, tree, lib in who[r % 3:] + who[:r % 3]:
                got[name] = sample(tree, lib, files["qrels"], files["run"])
            ref = got["pytrec_eval"]
            for name in ("new", "old", "pytrec_eval"):
                s = got[name]
                bad = [m for m, v in s["means"].items() if abs(v - ref["means"][m]) > 1e-9]
                ratio = s["times"]["total"] / ref["times"]["total"]
                print(f"| {shape} | {r + 1} | {name} | {s['times']['total']:.2f} | "
                      f"{s['cpu']:.2f} | {s['peak'] // 1024:,} | {ratio:.2f} | "
                      f"{s['load']:.1f} |" + (f" MISMATCH {bad}" if bad else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
