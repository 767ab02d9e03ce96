"""Whole-process A/B of the CLI against an older checkout and pytrec_eval, per id shape.

    python benchmarks/ab_cli.py OLD_TREE [OLD_TREE ...] [--shapes msmarco ties ...]
                                [--corpus real] [--size 7M] [--rounds 3] [--cache]
                                [--per-query]

Each sample is one fresh process under ``/usr/bin/time -v``: this tree's
``python -m ireval_core eval QRELS RUN -m ... --format json`` (8 measures, every mean
printed in full), each old tree's same command (named after its folder when there are
several, e.g. an export of a commit in ``/tmp/ids-19c8880``),
and a pytrec_eval script parsing both files and evaluating the same 8 measures, in an
order rotated each round (a shared machine's busy moments hit every side alike). Printed
per sample: wall, user and system CPU seconds, peak RSS (``Maximum resident set size``)
and the 1-minute load average before it ran; the means of every measure are checked
against pytrec_eval's (1e-9). User + system CPU and the peak are the figures robust to
other work on the machine; wall is shown beside them.

``--cache``: this tree also runs with ``--cache yes`` (a warm cache entry of both files,
written by one untimed run first) as a further side.

``--per-query``: before the timed rounds, every tree runs once more with ``-q`` (untimed)
and each old tree's per-query values and means must equal this tree's exactly (not
within a tolerance); the number of values compared is printed.
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

HERE = Path(__file__).resolve().parent
MEASURES = ["map", "ndcg", "ndcg_cut_10", "P_10", "recall_100", "recip_rank", "bpref", "Rprec"]

PYTREC_SCRIPT = """
import math, sys
import pytrec_eval
M = sys.argv[3].split(",")
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
res = pytrec_eval.RelevanceEvaluator(qrels, set(M)).evaluate(run)
for m in M:
    print(f"{m}\\tall\\t{math.fsum(v[m] for v in res.values()) / len(res)!r}")
"""

_TIME = {"wall": r"Elapsed \(wall clock\) time.*: (.+)", "user": r"User time.*: ([\d.]+)",
         "sys": r"System time.*: ([\d.]+)", "rss_kib": r"Maximum resident set size.*: (\d+)"}


def _seconds(text: str) -> float:
    parts = [float(p) for p in text.strip().split(":")]
    out = 0.0
    for p in parts:
        out = out * 60 + p
    return out


def timed(cmd: list[str], tree: Path, env_extra: dict[str, str] | None = None
          ) -> tuple[dict[str, float], dict[str, float]]:
    """Run ``cmd`` under ``/usr/bin/time -v``; its figures and the means it printed."""
    env = dict(os.environ, PYTHONPATH=str(tree), **(env_extra or {}))
    load = os.getloadavg()[0]
    p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True,
                       env=env, cwd=tree)
    if p.returncode:
        raise RuntimeError(f"{cmd} failed:\n{p.stderr[-3000:]}")
    fig = {"load": load}
    for key, pattern in _TIME.items():
        m = re.search(pattern, p.stderr)
        assert m, p.stderr[-2000:]
        fig[key] = _seconds(m.group(1)) if key == "wall" else float(m.group(1))
    means = {}
    if p.stdout.lstrip().startswith("{"):  # ireval --format json
        for per_measure in json.loads(p.stdout)["runs"].values():
            means = {m: float(v["all"]) for m, v in per_measure.items()}
    for line in p.stdout.splitlines():
        f = line.split()
        if len(f) == 3 and f[1] == "all" and f[0] in MEASURES:
            means[f[0]] = float(f[2])
    return fig, means


def ireval_cmd(qrels: Path, run: Path, *extra: str) -> list[str]:
    cmd = [sys.executable, "-m", "ireval_core", "eval", str(qrels), str(run)]
    for m in MEASURES:
        cmd += ["-m", m]
    return cmd + ["--format", "json", *extra]


def per_query_values(qrels: Path, run: Path, tree: Path) -> dict[tuple[str, ...], float]:
    """Every value ``eval -q --format json`` prints in ``tree``: (run, measure, query) ->
    value, the means under the query ``all``."""
    p = subprocess.run([*ireval_cmd(qrels, run, "-q")], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=str(tree)), cwd=tree)
    if p.returncode:
        raise RuntimeError(f"eval -q failed in {tree}:\n{p.stderr[-3000:]}")
    out = {}
    for run_name, per_measure in json.loads(p.stdout)["runs"].items():
        for measure, v in per_measure.items():
            out[(run_name, measure, "all")] = v["all"]
            for query, value in v["per_query"].items():
                out[(run_name, measure, query)] = value
    return out


def same_per_query(qrels: Path, run: Path, new_tree: Path, olds: list[tuple[str, Path]]
                   ) -> str:
    """Check every per-query value and mean of each old tree equal to this tree's,
    exactly (NaN equal to NaN); what was compared, as a sentence."""
    new = per_query_values(qrels, run, new_tree)
    said = []
    for name, tree in olds:
        old = per_query_values(qrels, run, tree)
        assert old.keys() == new.keys(), (name, len(old), len(new))
        differ = [k for k, v in new.items()
                  if not (v == old[k] or (v != v and old[k] != old[k]))]
        assert not differ, (name, differ[:5])
        said.append(f"{len(new):,} values equal to {name}'s exactly")
    return "; ".join(said)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path, nargs="+")
    ap.add_argument("--shapes", nargs="+", default=["msmarco", "ties", "prefixed", "uuid",
                                                     "mixed"])
    ap.add_argument("--corpus", default="real", choices=["default", "real"])
    ap.add_argument("--size", default="7M")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cache", action="store_true", help="also: this tree with --cache yes")
    ap.add_argument("--no-pytrec", action="store_true", help="leave pytrec_eval out")
    ap.add_argument("--per-query", action="store_true",
                    help="check every per-query value equal to each old tree's, exactly")
    args = ap.parse_args()
    sys.path.insert(0, str(HERE))
    from make_data import ensure, paths

    new_tree = HERE.parent
    olds = [(("old" if len(args.old) == 1 else path.resolve().name), path.resolve())
            for path in args.old]
    cache_dir = Path(tempfile.mkdtemp(prefix="ireval-ab-cache-"))
    print("| shape | round | who | wall (s) | user (s) | sys (s) | user+sys (s) | peak MiB "
          "| load |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for shape in args.shapes:
        ensure([args.size], shape=shape, corpus=args.corpus, quiet=True)
        files = paths(args.size, shape, args.corpus)
        q, r = files["qrels"], files["run"]
        for path in (q, r):
            path.read_bytes()  # page cache
        if args.per_query:
            print(f"<!-- {shape}: {same_per_query(q, r, new_tree, olds)} -->", flush=True)
        who: list[tuple[str, Path, list[str], dict[str, str]]] = [
            ("new", new_tree, ireval_cmd(q, r), {})]
        who += [(name, tree, ireval_cmd(q, r), {}) for name, tree in olds]
        if not args.no_pytrec:
            who.append(("pytrec_eval", new_tree, [sys.executable, "-c", PYTREC_SCRIPT, str(q),
                                                  str(r), ",".join(MEASURES)], {}))
        if args.cache:
            env = {"IREVAL_CACHE_DIR": str(cache_dir)}
            timed(ireval_cmd(q, r, "--cache", "yes"), new_tree, env)  # fill the cache
            who.append(("new --cache", new_tree, ireval_cmd(q, r, "--cache", "yes"), env))
        for rnd in range(args.rounds):
            got = {}
            k = rnd % len(who)
            for name, tree, cmd, env in who[k:] + who[:k]:
                got[name] = timed(cmd, tree, env)
            ref = got.get("pytrec_eval", got[olds[0][0]])[1]
            for name, _, _, _ in who:
                fig, means = got[name]
                bad = [m for m in MEASURES if abs(means[m] - ref[m]) > 1e-9]
                assert not bad, (shape, name, bad, means, ref)
                print(f"| {shape}{'' if args.corpus == 'default' else '-' + args.corpus} "
                      f"| {rnd + 1} | {name} | {fig['wall']:.2f} | {fig['user']:.2f} "
                      f"| {fig['sys']:.2f} | {fig['user'] + fig['sys']:.2f} "
                      f"| {fig['rss_kib'] / 1024:.0f} | {fig['load']:.1f} |", flush=True)
    shutil.rmtree(cache_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
