"""Run every benchmark and print the result tables as Markdown (``make bench``).

1. generates the missing data files (``make_data.py``);
2. parsing: ireval vs pytrec_eval at 10k, 500k and 7M lines (``bench_parse.py``);
3. parse + evaluate: ireval vs pytrec_eval vs ranx at 500k and 7M (``bench_eval.py``);
4. the id shapes of real collections (MS MARCO numbers, prefixed ids, UUIDs, a mix;
   ``make_data.py --shape``): parse + evaluate vs pytrec_eval and the app's pages
   (``bench_app.py``) on each, at ``--id-size`` (500k by default; 7M on request);
   and a saved dataset reopened by its link on a fresh process, alone and by ten
   sessions at once, with the parsed-column cache and without (``bench_reopen.py``);
5. ``bench_stats.py`` when it exists (its stdout is included as it is);
6. the judge queue's recomputation after a label on 3 runs of 7M lines, reading the
   documents it needs from a 1 GB ``docid<TAB>text`` TSV made in a temporary folder and
   deleted after (``bench_judge_queue.py``; 1,000 queries and 256 MB with ``--quick``),
   and the Judging page's keypress (``bench_judging_keypress.py``); ``--no-judging``
   skips them;
7. with ``--profile``, ireval's stage breakdown at the largest size.

Tables go to stdout, progress to stderr, raw numbers to ``benchmarks/results/``.

    python benchmarks/run_all.py             # full run (~15-30 min, mostly pytrec_eval/ranx at 7M)
    python benchmarks/run_all.py --quick     # 10k and 500k only
    python benchmarks/run_all.py --id-size 7M   # the id shapes at 7M lines (make bench IDS=7M)
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_eval  # noqa: E402
import bench_parse  # noqa: E402
import make_data  # noqa: E402
from _harness import log, machine_info, machine_markdown, save_json  # noqa: E402


def _script(name: str, args: list[str] = ()) -> str:
    path = HERE / name
    p = subprocess.run([sys.executable, str(path), *args], capture_output=True, text=True,
                       cwd=HERE.parent)
    sys.stderr.write(p.stderr)
    if p.returncode != 0:
        return f"{name} failed (exit {p.returncode}):\n\n```\n{p.stderr[-2000:]}\n```"
    return p.stdout.strip()


def _code_digest() -> str:
    """Digest of ireval_core's sources, to notice edits made while the benchmarks run."""
    h = hashlib.sha256()
    for f in sorted((HERE.parent / "ireval_core").rglob("*.py")):
        h.update(f.read_bytes())
    return h.hexdigest()[:12]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="10k and 500k only")
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx")
    ap.add_argument("--no-stats", action="store_true", help="skip bench_stats.py")
    ap.add_argument("--profile", action="store_true",
                    help="append ireval's stage breakdown at the largest size")
    ap.add_argument("--id-size", default="500k", choices=list(make_data.SIZES),
                    help="size of the id-shape runs (default 500k; 7M takes ~2 min per shape "
                         "to generate once, and minutes per shape to measure)")
    ap.add_argument("--no-app", action="store_true", help="skip bench_app.py on the id shapes")
    ap.add_argument("--no-judging", action="store_true",
                    help="skip the judge queue's and the Judging page's benchmarks")
    args = ap.parse_args(argv)

    parse_sizes = ["10k", "500k"] if args.quick else ["10k", "500k", "7M"]
    eval_sizes = ["500k", "500k-ties"] if args.quick else ["500k", "7M", "7M-ties"]
    make_data.ensure(sorted(set(parse_sizes) | {s for s in eval_sizes if "-" not in s}))

    info = machine_info()
    digest = _code_digest()
    started = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [f"## ireval benchmarks — {started}", "", machine_markdown(info)
           + f" ireval_core sources digest {digest}.", ""]
    log("== parsing")
    parse = bench_parse.measure(parse_sizes)
    save_json(f"parse_{'-'.join(parse_sizes)}.json", parse)
    out += [bench_parse.markdown(parse), ""]
    log("== parse + evaluate")
    ev = bench_eval.measure(eval_sizes, ranx=not args.no_ranx)
    save_json(f"eval_{'-'.join(eval_sizes)}.json", ev)
    out += [bench_eval.markdown(ev), ""]
    log("== id shapes")
    id_sizes = [f"{args.id_size}-{shape}" for shape in make_data.ID_SHAPES]
    ids = bench_eval.measure(id_sizes, ranx=False)
    save_json(f"eval_{'-'.join(id_sizes)}.json", ids)
    out += ["### Id shapes of real collections", "", bench_eval.markdown(ids), ""]
    if not args.no_app:
        for shape in make_data.ID_SHAPES:
            folder = make_data.app_folder(args.id_size, shape)
            out += [_script("bench_app.py", [str(folder)]), ""]
        log("== reopen after a restart, ten sessions on one link (column cache)")
        out += [_script("bench_reopen.py", ["--size", args.id_size, "--shapes",
                                            *make_data.ID_SHAPES]), ""]
    if not args.no_stats and (HERE / "bench_stats.py").exists():
        log("== bench_stats.py")
        out += ["### Statistics (bench_stats.py)", "", _script("bench_stats.py"), ""]
    if not args.no_judging:
        log("== judge queue, documents, Judging page keypress")
        size = ["--queries", "1000", "--tsv-mb", "256"] if args.quick else []
        out += ["### Judging (bench_judge_queue.py, bench_judging_keypress.py)", "",
                "```", _script("bench_judge_queue.py", size),
                _script("bench_judging_keypress.py"), "```", ""]
    if args.profile:
        log("== ireval stage breakdown")
        out += [_script("profile_ireval.py", ["--size", eval_sizes[-1]]), ""]
    if _code_digest() != digest:
        out += ["**Warning: ireval_core changed while the benchmarks ran; the ireval rows may "
                "mix code versions. Run again.**", ""]
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
