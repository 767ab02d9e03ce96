"""Command line for the month's labeling task: ``python -m ireval_core labels-task
QUERY_LOG RUN [RUN ...] --round R -n N -o task.csv``.

Samples the month's queries from the query log (:func:`ireval_core.labels.task.
sample_queries`), lists each run's top k for them with the design's weights, adds the
anchor items and the people's share (:func:`~ireval_core.labels.task.month_task`),
writes the task (a labeling file with blank labels: filled, it is the month's round
file) and the anchor items beside it (``TASK.anchors.csv`` unless ``--anchors-out``),
and prints one summary line: the design, the queries sampled per stratum, the items to
label and the labels each rater is expected to give.

This module only builds the parser at import time; the core is imported when the
command runs.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

__all__ = ["add_parser", "run"]

_DESCRIPTION = (
    "The month's labeling task: a sample of the query log's queries (simple random, "
    "stratified by frequency band or segment, or proportional to their searches), each "
    "run's top k for them with the design weights the trend uses, the anchor items, and "
    "a random share marked for people. The query log has the columns query (the runs' "
    "query id), count and optionally segment (CSV, TSV or Parquet; .gz ok).")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Add the ``labels-task`` sub-command to ``sub`` (``add_subparsers()``)."""
    lt = sub.add_parser("labels-task", help="sample the month's queries and write the "
                        "labeling task", description=_DESCRIPTION)
    lt.add_argument("query_log", metavar="QUERY_LOG", help="query log: query, count[, segment]")
    lt.add_argument("runs", nargs="+", metavar="RUN", help="the systems' runs")
    lt.add_argument("--round", required=True, help="the round (month) of the task, e.g. 2026-07")
    lt.add_argument("-n", type=int, required=True, help="queries to sample")
    lt.add_argument("-k", type=int, default=10, help="each run's top k (default 10)")
    lt.add_argument("--design", choices=("srs", "stratified", "pps"), default="srs",
                    help="srs (default): simple random; stratified: by --strata; pps: "
                         "probability proportional to the query's count")
    lt.add_argument("--strata", choices=("frequency", "segment"), default="frequency",
                    help="stratified: frequency bands (default) or the log's segments")
    lt.add_argument("--bands", default=None, metavar="C1,C2",
                    help="frequency band thresholds, highest first (e.g. 1000,100: head "
                         ">= 1000, torso >= 100, tail); default: thirds of the searches")
    lt.add_argument("--allocation", choices=("traffic", "proportional", "equal"),
                    default="traffic", help="stratified: queries per stratum proportional "
                    "to its searches (default), to its queries, or equal")
    lt.add_argument("--target", choices=("traffic", "queries"), default="traffic",
                    help="what the weights count: searches (default; the trend is the mean "
                         "over searches) or distinct queries")
    lt.add_argument("--anchors", action="append", default=None, metavar="FILE",
                    help="anchor file(s): their (query, doc) pairs are added to the task")
    lt.add_argument("--anchors-out", default=None, metavar="FILE",
                    help="where the anchor items go (default: TASK.anchors.csv)")
    lt.add_argument("--people-share", type=float, default=None, metavar="SHARE",
                    help="mark this share of the shown results for people (e.g. 0.1)")
    lt.add_argument("--seed", type=int, default=0, help="the sample's seed (default 0)")
    lt.add_argument("-o", "--output", required=True, metavar="TASK", help="the task file (CSV)")
    return lt


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``labels-task``: write the files, print the summary line."""
    from .io import read_runs
    from .labels.anchors import read_anchors
    from .labels.task import month_task, read_query_log, sample_queries

    bands = None
    if args.bands is not None:
        try:
            bands = [float(b) for b in args.bands.split(",") if b.strip()]
        except ValueError:
            raise ValueError(f"--bands: expected count thresholds such as 1000,100, got "
                             f"{args.bands!r}") from None
    log = read_query_log(args.query_log)
    sample = sample_queries(log, args.n, design=args.design, strata=args.strata, bands=bands,
                            allocation=args.allocation, target=args.target, seed=args.seed)
    runs: list[Any] = []
    for path in args.runs:
        runs.extend(read_runs(path, taken_names={r.name: r.source for r in runs}))
    anchors = read_anchors(list(args.anchors)) if args.anchors else None
    task = month_task(sample, runs, args.round, k=args.k, anchors=anchors,
                      people_share=args.people_share, seed=args.seed)
    output = Path(args.output)
    output.write_bytes(task.to_csv())
    written = [str(output)]
    anchor_bytes = task.anchors_csv()
    if anchor_bytes is not None:
        target = Path(args.anchors_out) if args.anchors_out else output.with_name(
            output.name.removesuffix(".csv") + ".anchors.csv")
        target.write_bytes(anchor_bytes)
        written.append(str(target))
    out.write(task.summary() + f"; wrote {', '.join(written)}\n")
    return 0
