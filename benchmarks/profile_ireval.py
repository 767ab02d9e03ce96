"""Stage-by-stage timing of ireval's parse + evaluate (for optimisation work).

Wraps the internal stages of ``ireval_core.io`` / ``ireval_core.data`` with timers
(the code itself is not changed), runs ``read_qrels`` + ``read_runs`` + ``evaluate``
once on a benchmark size, and prints a breakdown; ``--cprofile`` also prints the
top functions by own time.

    python benchmarks/profile_ireval.py [--size 7M] [--shape ties] [--shuffled] [--cprofile]
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import make_data  # noqa: E402
from _worker import MEASURES  # noqa: E402

import ireval_core.data as D  # noqa: E402
import ireval_core.idcodes as IDC  # noqa: E402
import ireval_core.io as IO  # noqa: E402
import ireval_core.io.qrels_runs as IO_READERS  # noqa: E402
import ireval_core.io.trec as IO_TREC  # noqa: E402
from ireval_core import evaluate, read_qrels, read_runs  # noqa: E402

E = sys.modules["ireval_core.evaluate"]  # the package attribute is the function

TIMES: dict[str, list[float]] = defaultdict(list)
CPU: dict[str, list[float]] = defaultdict(list)  # process CPU time (all threads)
PEAK: dict[str, int] = {}  # ru_maxrss (KiB) when the stage returned: the peak so far
STACK: list[str] = []


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def _wrap(module: object, name: str, label: str | None = None) -> None:
    fn = getattr(module, name, None)
    if fn is None:  # the stage does not exist in this version of ireval_core
        return
    label = label or name

    @functools.wraps(fn)
    def timed(*args, **kwargs):
        STACK.append(label)
        t, c = time.perf_counter(), time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            key = " > ".join(STACK)
            TIMES[key].append(time.perf_counter() - t)
            CPU[key].append(time.process_time() - c)
            PEAK[key] = _maxrss()
            STACK.pop()

    setattr(module, name, timed)


def _instrument() -> None:
    _wrap(IO.Source, "of", "Source.of (read file)")  # classmethods: the bound method is wrapped
    # wrapped where the callers look them up (the module that calls them)
    _wrap(IO_TREC, "_check_first_line")
    _wrap(IO_READERS, "numeric")
    _wrap(IO_READERS, "read_columns", "read_columns (pyarrow csv)")
    for name in ("encode_sorted", "_check_unique", "ranking_order", "_query_score_order",
                 "_ties_by_code", "_order_ties", "_offsets", "_string_numpy", "id_positions",
                 "doc_code_map", "pick_segments", "doc_codes_of"):
        _wrap(D, name)
    for name in ("_compact", "dictionary_codes", "_byte_ranked", "byte_order_keys_and_prefix"):
        _wrap(IDC, name)
    _wrap(D.Qrels, "from_arrays", "Qrels.from_arrays")
    _wrap(D.Run, "from_arrays", "Run.from_arrays")
    _wrap(D.Run, "from_columns", "Run.from_columns")
    _wrap(E, "evaluated_queries")
    _wrap(E, "join")
    _wrap(E, "_aggregate")
    for name in ("read_qrels", "read_runs"):
        _wrap(IO, name)


def _instrument_kernels(measures: list) -> None:
    """Time each measure's kernel (families are shared objects; wrap their kernel)."""
    seen = set()
    for m in measures:
        fam = m.family
        if id(fam) in seen:
            continue
        seen.add(id(fam))
        kernel = fam.kernel

        def timed(r, m, o, _k=kernel):
            t, c = time.perf_counter(), time.process_time()
            try:
                return _k(r, m, o)
            finally:
                TIMES[f"kernel {m}"].append(time.perf_counter() - t)
                CPU[f"kernel {m}"].append(time.process_time() - c)
                PEAK[f"kernel {m}"] = _maxrss()

        try:
            object.__setattr__(fam, "kernel", timed)
        except (AttributeError, TypeError):
            pass


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", default="7M", choices=list(make_data.SIZES))
    ap.add_argument("--shape", default="clean", choices=make_data.SHAPES,
                    help="ties: 3-decimal scores, most lines tied (make_data --shape ties)")
    ap.add_argument("--shuffled", action="store_true")
    ap.add_argument("--cprofile", action="store_true")
    args = ap.parse_args(argv)
    make_data.ensure([args.size], shuffled=args.shuffled, shape=args.shape)
    p = make_data.paths(args.size, args.shape)
    run_path = p["shuffled"] if args.shuffled else p["run"]

    from ireval_core.measures import parse_measures
    specs = parse_measures(MEASURES)
    _instrument_kernels(specs)
    if not args.cprofile:
        _instrument()

    base = _maxrss()
    prof = cProfile.Profile() if args.cprofile else None
    t0 = time.perf_counter()
    if prof:
        prof.enable()
    qrels = IO.read_qrels(str(p["qrels"])) if not prof else read_qrels(str(p["qrels"]))
    t1 = time.perf_counter()
    runs = IO.read_runs(str(run_path)) if not prof else read_runs(str(run_path))
    t2 = time.perf_counter()
    res = evaluate(qrels, runs, specs)
    t3 = time.perf_counter()
    if prof:
        prof.disable()
    peak = _maxrss()
    shuffled = " shuffled" if args.shuffled else ""
    print(f"## ireval stage breakdown, {args.size} {args.shape}{shuffled}")
    print(f"read_qrels {t1 - t0:.3f} s, read_runs {t2 - t1:.3f} s, evaluate {t3 - t2:.3f} s, "
          f"total {t3 - t0:.3f} s; peak RSS {peak / 1024:.0f} MiB (Δ {(peak - base) / 1024:.0f})")
    print(f"AP = {res.mean(runs[0].name, 'AP'):.6f}; RSS after imports {base / 1024:.0f} MiB")
    if prof:
        s = io.StringIO()
        pstats.Stats(prof, stream=s).sort_stats("tottime").print_stats(30)
        print(s.getvalue())
        return
    print()
    print("| stage (nested: caller > callee) | calls | wall (s) | CPU (s) "
          "| peak RSS so far (MiB) |")
    print("|---|---:|---:|---:|---:|")
    for k, v in TIMES.items():
        print(f"| {k} | {len(v)} | {sum(v):.3f} | {sum(CPU[k]):.3f} | "
              f"{PEAK.get(k, 0) / 1024:,.0f} |")


if __name__ == "__main__":
    main()
