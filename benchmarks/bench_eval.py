"""End-to-end parse + evaluate: ireval vs pytrec_eval vs ranx, with a correctness check.

Measures (ireval / pytrec_eval / ranx names)::

    AP       map          map
    nDCG     ndcg         ndcg
    nDCG@10  ndcg_cut_10  ndcg@10
    P@10     P_10         precision@10
    R@100    recall_100   recall@100
    RR       recip_rank   mrr
    bpref    bpref        bpref
    Rprec    Rprec        r-precision

What is timed, on the same files, each measurement in its own fresh interpreter:

* ireval: ``read_qrels`` + ``read_runs`` + ``evaluate`` (+ reading the means);
* pytrec_eval: ``parse_qrel`` + ``parse_run`` + ``RelevanceEvaluator(qrels, measures)``
  + ``.evaluate(run)`` + the mean of every measure over the queries;
* ranx (optional; skipped when it does not import): ``Qrels.from_file`` +
  ``Run.from_file`` (``kind="trec"``) + ``ranx.evaluate`` (default threads: all
  cores; ``make_comparable=True``, without which ranx refuses the files because 1%
  of the judged queries are missing from the run — so ranx averages over every
  judged query, a missing one scoring 0, like trec_eval ``-c``). Twice:
  **warm** — the same calls on the tiny 10k files first, excluded from the time
  (numba kernels compiled or loaded from numba's on-disk cache); **incl. JIT** —
  no warm-up and an empty ``NUMBA_CACHE_DIR``, so the time includes compiling every
  kernel, as on a first use (measured once: N = 1).

Best of N by total time; peak RSS is ``ru_maxrss`` (largest over the N), also shown
as the increase over the post-import (post-warm-up) baseline.

The check: every ireval mean must equal pytrec_eval's within 1e-9 (OK/MISMATCH);
ranx's means are shown for information only, twice: as ``ranx.evaluate`` returns them
(averaged over every judged query, see above) and averaged over the run's queries from
its per-query scores (as trec_eval does); the difference to pytrec_eval is that of
the latter (not timed; its definitions differ in places, e.g. tie handling).

    python benchmarks/bench_eval.py [--sizes 500k 7M] [--reps N] [--no-ranx]
    python benchmarks/bench_eval.py --sizes 7M-msmarco 7M-prefixed 7M-uuid 7M-mixed --no-ranx

A size may carry a shape (``make_data.py --shape``): ``7M-ties``, or one of the id shapes
of real collections, ``7M-msmarco``, ``7M-prefixed``, ``7M-uuid``, ``7M-mixed`` (tie-heavy).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import make_data  # noqa: E402
from _harness import (  # noqa: E402
    WorkerError,
    best_of,
    fmt_mib,
    fmt_ratio,
    fmt_s,
    has_module,
    load_note,
    log,
    machine_info,
    md_table,
    run_worker,
    save_json,
    warm_page_cache,
)
from _worker import MEASURES  # noqa: E402

DEFAULT_REPS = {"10k": 3, "500k": 3, "7M": 2}
TOLERANCE = 1e-9
# label -> (worker library, options, most repetitions)
VARIANTS = {
    "ireval": ("ireval", {}, None),
    "pytrec_eval": ("pytrec_eval", {}, None),
    "ranx (warm)": ("ranx", {"warmup": True}, None),
    # compiling takes about a minute whatever the size: measured once
    "ranx (incl. JIT)": ("ranx", {"fresh_numba_cache": True}, 1),
}


def measure(sizes: list[str], reps: int | None = None, ranx: bool = True,
            shuffled: bool = False) -> dict:
    for shape in sorted({_split(s)[1] for s in sizes}):
        base = sorted({_split(s)[0] for s in sizes if _split(s)[1] == shape})
        make_data.ensure(base, shuffled=shuffled, shape=shape)
    make_data.ensure(["10k"])  # ranx warm-up
    variants = dict(VARIANTS)
    ranx_note = ""
    if ranx:
        ok, why = has_module("ranx")
        if not ok:
            ranx_note = f"ranx skipped: it does not import ({why})"
            log(f"[eval] {ranx_note}")
    else:
        ranx_note = "ranx skipped (--no-ranx)"
    if ranx_note:
        variants = {k: v for k, v in variants.items() if v[0] != "ranx"}
    results: dict = {"machine": machine_info(), "shuffled": shuffled, "ranx_note": ranx_note,
                     "sizes": {}}
    for size in sizes:
        p = make_data.paths(*_split(size))
        run = p["shuffled"] if shuffled else p["run"]
        warm_page_cache(p["qrels"], run)
        n = reps or DEFAULT_REPS[_split(size)[0]]
        samples: dict[str, list[dict]] = {k: [] for k in variants}
        errors: dict[str, str] = {}
        for i in range(n):
            for label, (lib, opts, most) in variants.items():
                if label in errors or (most is not None and i >= most):
                    continue
                log(f"[eval] {size} {label} run {i + 1}/{n}")
                try:
                    s = run_worker("eval", lib, p["qrels"], run, **opts)
                except WorkerError as exc:
                    log(str(exc))
                    errors[label] = str(exc).splitlines()[-1]
                    continue
                log(f"       total {s['times']['total']:.2f} s (cpu {s['cpu']:.2f} s), "
                    f"peak {s['peak'] / 1024:.0f} MiB, load {s['load']:.1f}")
                samples[label].append(s)
        results["sizes"][size] = {
            "best": {k: best_of(v) for k, v in samples.items() if v}, "errors": errors}
    return results


def _split(size: str) -> tuple[str, str]:
    """``"7M-ties"`` -> ``("7M", "ties")``; ``"7M"`` -> ``("7M", "clean")``."""
    base, _, shape = size.partition("-")
    return base, shape or "clean"


def check_rows(best: dict) -> tuple[list[list[object]], bool]:
    ir, pt = best.get("ireval"), best.get("pytrec_eval")
    rx = best.get("ranx (warm)") or best.get("ranx (incl. JIT)")
    rows, all_ok = [], True
    for m in MEASURES:
        a, b = ir["means"][m], pt["means"][m]
        diff = abs(a - b)
        ok = diff < TOLERANCE
        all_ok &= ok
        row = [m, f"{a:.12f}", f"{b:.12f}", f"{diff:.1e}", "OK" if ok else "MISMATCH"]
        if rx is not None:
            r_all, r_run = rx["means"][m], rx.get("means_run_queries", {}).get(m, float("nan"))
            row += [f"{r_all:.12f}", f"{r_run:.12f}", f"{abs(r_run - b):.1e}"]
        rows.append(row)
    return rows, all_ok


def markdown(results: dict) -> str:
    rows, checks, verdicts = [], [], []
    has_ranx = any(k.startswith("ranx") for s in results["sizes"].values() for k in s["best"])
    for size, entry in results["sizes"].items():
        best = entry["best"]
        ir, pt = best.get("ireval"), best.get("pytrec_eval")
        for label, r in best.items():
            t = r["times"]
            parse = t["qrels"] + t["run"]
            rows.append([
                size, label, r["n"], fmt_s(parse), fmt_s(t["evaluate"]), fmt_s(t["total"]),
                fmt_s(r["cpu"]), fmt_mib(r["peak"]), fmt_mib(r["peak"] - r["base"]),
                fmt_ratio(t["total"] / ir["times"]["total"]) if ir and label != "ireval" else "",
            ])
        for label, err in entry["errors"].items():
            rows.append([size, label, 0, "failed", "", "", "", "", "", err[:80]])
        if ir and pt:
            crow, ok = check_rows(best)
            header = ["measure", "ireval", "pytrec_eval", "abs. diff", "check"]
            if has_ranx and len(crow[0]) > 5:
                header += ["ranx (all judged queries)", "ranx (run's queries)",
                           "abs. diff ranx (run's queries) vs pytrec_eval"]
            checks.append(f"#### Means at {size}: ireval vs pytrec_eval "
                          f"({'all OK' if ok else 'MISMATCH'}, tolerance {TOLERANCE:g})\n\n"
                          + md_table(header, crow))
        if _split(size)[0] == "7M" and ir and pt:
            tot = ir["times"]["total"]
            r_pt = pt["times"]["total"] / tot
            target = 0.3 if _split(size)[1] == "clean" else 0.35
            verdicts.append(f"- {size}: ireval end to end {tot:.1f} s = {1 / r_pt:.2f} × "
                            f"pytrec_eval's time (target ≤ {target}: "
                            f"{'MET' if 1 / r_pt <= target else 'NOT MET'})")
            for label in ("ranx (warm)", "ranx (incl. JIT)"):
                if label in best:
                    r_rx = best[label]["times"]["total"] / tot
                    verdicts.append(f"- {size}: ireval time = {1 / r_rx:.2f} × {label}'s (target "
                                    f"≤ 0.10: {'MET' if r_rx >= 10 else 'NOT MET'})")
            verdicts.append(
                f"- {size}: ireval peak RSS {ir['peak'] / 1024:.0f} MiB vs pytrec_eval "
                f"{pt['peak'] / 1024:.0f} MiB (target below: "
                f"{'MET' if ir['peak'] < pt['peak'] else 'NOT MET'}; Δ over imports "
                f"{(ir['peak'] - ir['base']) / 1024:.0f} vs "
                f"{(pt['peak'] - pt['base']) / 1024:.0f} MiB)")
    header = ["size", "library", "N", "parse (s)", "evaluate (s)", "total (s)", "CPU (s)",
              "peak RSS (MiB)", "Δ peak (MiB)", "total / ireval total"]
    order = " (run file shuffled)" if results.get("shuffled") else ""
    text = [f"### Parse + evaluate (8 measures){order}", "", md_table(header, rows), "",
            "Times: best of N (wall clock), each in a fresh process; CPU = user + system time "
            "of that process (all threads). Peak RSS = ru_maxrss (largest over the N); Δ = peak "
            "minus the RSS after the imports (for ranx (warm): after the warm-up). "
            "ranx (warm) excludes a warm-up run of the same calls on the 10k files; "
            "ranx (incl. JIT) starts with an empty numba cache, so its time includes the JIT "
            "compilation (N = 1). " + load_note([r for e in results["sizes"].values()
                                                 for r in e["best"].values()])]
    if results.get("ranx_note"):
        text += ["", f"Note: {results['ranx_note']}."]
    if verdicts:
        text += ["", *verdicts]
    for c in checks:
        text += ["", c]
    return "\n".join(text)


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", default=["500k", "7M"],
                    choices=[*DEFAULT_REPS, *(f"{s}-{shape}" for s in DEFAULT_REPS
                                              for shape in make_data.SHAPES[1:])],
                    help="a size, or a size with a shape: -ties (tie-heavy), -msmarco, "
                         "-prefixed, -uuid, -mixed (the ids of real collections)")
    ap.add_argument("--reps", type=int, default=None, help="best of N (default 3; 2 for 7M)")
    ap.add_argument("--no-ranx", action="store_true", help="skip ranx")
    ap.add_argument("--shuffled", action="store_true", help="use run.shuffled.txt")
    args = ap.parse_args(argv)
    results = measure(args.sizes, args.reps, not args.no_ranx, args.shuffled)
    save_json(f"eval_{'-'.join(args.sizes)}{'_shuffled' if args.shuffled else ''}.json",
              results)
    print(markdown(results))
    if any(e["best"].get("ireval") and e["best"].get("pytrec_eval")
           and not check_rows(e["best"])[1] for e in results["sizes"].values()):
        print("\nMISMATCH between ireval and pytrec_eval", file=sys.stderr)
    return results


if __name__ == "__main__":
    main()
