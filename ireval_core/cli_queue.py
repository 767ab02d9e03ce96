"""Command line for the judge queue: ``python -m ireval_core judge-queue QRELS RUN...``.

Prints, for every pair of runs (or each run against ``--baseline``) on one measure, the
verdict as the holes analysis states it (``holds``, ``depends``; :mod:`ireval_core.
decisions.queue`), the holes left and an estimate of the labels the verdict may still
need, then the next ``--batch`` documents to judge with the systems that rank them and
why they come first. ``--format json`` writes ``{"measure", "order", "verdicts":
[{system_a, system_b, verdict, remaining_holes, estimate, winner, text}], "queue":
[{query, doc, systems, ranks, why}]}``. The command keeps no state: labels added to the
qrels file between two calls change the next answer, which is how a script drives it.

This module only builds the parser at import time; the queue is imported when the
command runs.
"""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from .data import Qrels, Run
    from .options import EvalOptions

__all__ = ["add_parser", "run"]

_DESCRIPTION = (
    "The unjudged documents (holes) in the runs' windows, ordered so that the verdict of "
    "each pair settles with as few labels as possible (impact), or in a seeded random "
    "order (random), with each pair's verdict: holds (no labeling of the remaining holes "
    "changes it) or depends. Add the labels to the qrels file and call again: the next "
    "answer reads them.")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``judge-queue`` sub-command to ``sub`` (``add_subparsers()``); the caller
    adds the evaluation options and ``--progress``."""
    jq = sub.add_parser("judge-queue", help="the unjudged documents to label first, so "
                        "that the verdicts settle soonest", description=_DESCRIPTION)
    jq.add_argument("qrels", help="qrels file (TREC, CSV/TSV, Parquet, JSON; .gz ok)")
    jq.add_argument("runs", nargs="+", metavar="RUN", help="two runs or more")
    jq.add_argument("-m", "--measure", required=True, metavar="MEASURE",
                    help="one measure, e.g. nDCG@10, P@5, AP")
    jq.add_argument("--baseline", default=None, metavar="NAME",
                    help="pair each other run with this one (default: every pair)")
    jq.add_argument("--batch", type=_positive, default=10, metavar="N",
                    help="documents to list (default 10)")
    jq.add_argument("--order", choices=("impact", "random"), default="impact",
                    help="impact (default): the verdicts settle soonest; random: a "
                         "seeded random order, for comparison")
    jq.add_argument("--seed", type=int, default=0, help="the random order's seed")
    jq.add_argument("--test", choices=("t", "wilcoxon", "sign", "randomization",
                                       "bootstrap"), default="t",
                    help="the paired test of the verdicts (default t)")
    jq.add_argument("--alpha", type=float, default=0.05, help="its level (default 0.05)")
    jq.add_argument("--format", choices=("text", "json"), default="text")
    return jq


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}") from None
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected an int >= 1, got {text!r}")
    return n


def run(args: argparse.Namespace, out: TextIO, qrels: Qrels, runs: list[Run],
        options: EvalOptions) -> int:
    """Build the queue of ``runs`` against ``qrels`` and write its answer to ``out``."""
    from .decisions.queue import JudgeQueue
    from .progress import stage

    stage("judge queue")
    queue = JudgeQueue(qrels, runs, args.measure, baseline=args.baseline, options=options,
                       test=args.test, alpha=args.alpha, order=args.order, seed=args.seed)
    verdicts = queue.verdicts
    items = queue.next(args.batch) if len(queue) else []
    if args.format == "json":
        doc: dict[str, Any] = {"measure": str(queue.measure), "order": args.order,
                               "verdicts": [v.as_dict() for v in verdicts],
                               "queue": [i.as_dict() for i in items]}
        json.dump(doc, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return 0
    out.write(f"Verdicts on {queue.measure} ({args.test} test, alpha {args.alpha:g}):\n")
    for v in verdicts:
        more = (f"; about {v.estimate:,} more label{'s' if v.estimate != 1 else ''}"
                if v.verdict == "depends" else "")
        out.write(f"  {v.system_a} vs {v.system_b}: {v.verdict} ({v.remaining_holes:,} "
                  f"hole{'s' if v.remaining_holes != 1 else ''} left{more})\n"
                  f"    {v.text}\n")
    if not items:
        out.write("Nothing to judge: no verdict depends on the remaining holes.\n")
        return 0
    out.write(f"Next {len(items)} to judge ({args.order} order, {len(queue):,} in the "
              "queue):\n")
    for n, i in enumerate(items, 1):
        out.write(f"  {n}. {i.query}\t{i.doc}\t{', '.join(i.systems)}\n     {i.why}\n")
    return 0
