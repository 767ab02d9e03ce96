"""The everyday case: one command on small files, timed as a whole process.

Runs, alternating, ``python -m ireval_core eval QRELS RUN -m map -m ndcg_cut_10`` and a
pytrec_eval script doing the same job (parse both files with pytrec_eval's parsers,
evaluate MAP and nDCG@10, print per-query and mean values), each as a fresh process,
and reports the median wall time of each and their ratio. Also times
``python -c "import ireval_core"`` and ``python -c pass`` (the interpreter's floor).

    python benchmarks/bench_cli.py [--repeat 9] [--qrels sample_data/qrels.txt]
                                   [--run sample_data/run_bm25.txt]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from _harness import machine_info, machine_markdown, md_table, save_json  # noqa: E402

PYTREC_SCRIPT = """
import sys
import pytrec_eval
with open(sys.argv[1]) as f:
    qrels = pytrec_eval.parse_qrel(f)
with open(sys.argv[2]) as f:
    run = pytrec_eval.parse_run(f)
res = pytrec_eval.RelevanceEvaluator(qrels, {"map", "ndcg_cut_10"}).evaluate(run)
out = []
for q in sorted(res):
    out.append(f"map\\t{q}\\t{res[q]['map']:.4f}")
    out.append(f"ndcg_cut_10\\t{q}\\t{res[q]['ndcg_cut_10']:.4f}")
n = len(res)
out.append(f"map\\tall\\t{sum(v['map'] for v in res.values()) / n:.4f}")
out.append(f"ndcg_cut_10\\tall\\t{sum(v['ndcg_cut_10'] for v in res.values()) / n:.4f}")
sys.stdout.write("\\n".join(out) + "\\n")
"""


def commands(qrels: Path, run: Path) -> dict[str, list[str]]:
    py = sys.executable
    return {
        "ireval eval": [py, "-m", "ireval_core", "eval", str(qrels), str(run),
                        "-m", "map", "-m", "ndcg_cut_10", "-q"],
        "pytrec_eval script": [py, "-c", PYTREC_SCRIPT, str(qrels), str(run)],
        "import ireval_core": [py, "-c", "import ireval_core"],
        "python -c pass": [py, "-c", "pass"],
    }


def _time(cmd: list[str]) -> float:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT, env=env)
    return time.perf_counter() - t


def measure(qrels: Path, run: Path, repeat: int) -> dict:
    cmds = commands(qrels, run)
    for cmd in cmds.values():  # warm the page cache and the .pyc files
        _time(cmd)
    samples: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(repeat):  # alternate, so a busy moment hits every command alike
        for k, cmd in cmds.items():
            samples[k].append(_time(cmd))
    med = {k: statistics.median(v) for k, v in samples.items()}
    return {"qrels": str(qrels), "run": str(run), "repeat": repeat, "samples": samples,
            "median": med,
            "ratio": med["ireval eval"] / med["pytrec_eval script"],
            "load": os.getloadavg()[0]}


def markdown(res: dict) -> str:
    rows = [[k, f"{v:.3f}", f"{min(res['samples'][k]):.3f}", f"{max(res['samples'][k]):.3f}"]
            for k, v in res["median"].items()]
    return (f"### CLI on small files ({Path(res['run']).name}), whole process, "
            f"{res['repeat']} alternating runs\n\n"
            + md_table(["command", "median (s)", "min (s)", "max (s)"], rows)
            + f"\n\nratio ireval / pytrec_eval (medians): **{res['ratio']:.2f}x**; "
            f"load average at the end {res['load']:.2f}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9)
    ap.add_argument("--qrels", type=Path, default=ROOT / "sample_data" / "qrels.txt")
    ap.add_argument("--run", type=Path, default=ROOT / "sample_data" / "run_bm25.txt")
    args = ap.parse_args(argv)
    res = measure(args.qrels, args.run, args.repeat)
    res["machine"] = machine_info()
    save_json("cli_sample.json", res)
    print(machine_markdown(res["machine"]))
    print()
    print(markdown(res))


if __name__ == "__main__":
    main()
