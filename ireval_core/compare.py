"""Evaluate runs and compare them pairwise: the glue behind ``compare`` and the app.

Per-query values come from :func:`ireval_core.evaluate`; every system pair is
compared on the queries all compared systems share (with ``complete=True``,
every qrels query, missing = 0), so each test is paired over the same queries.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from typing import TextIO

import numpy as np

from .data import Qrels, Run
from .evaluate import Evaluation, evaluate
from .measures import Measure, parse_measures
from .stats import PairComparison, compare_measures

__all__ = ["FIELDS", "aligned_scores", "compare_evaluation", "compare_runs", "write_comparison"]

FIELDS = ("system_a", "system_b", "measure", "test", "statistic", "pvalue", "pvalue_corrected",
          "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high", "effect_size", "wins", "ties",
          "losses", "n")


def aligned_scores(res: Evaluation, measure: Measure | str,
                   systems: Sequence[str] | None = None) -> tuple[np.ndarray, dict[str,
                                                                            np.ndarray]]:
    """Per-query values of ``systems`` on the queries they all have (NaN-free)."""
    systems = list(systems or res.systems)
    m = parse_measures(measure)[0]
    common = None
    for s in systems:
        q = res.query_ids[s].astype(str)
        q = q[~np.isnan(res.values[(s, str(m))])]
        common = q if common is None else np.intersect1d(common, q)
    common = np.sort(common) if common is not None else np.array([], dtype=str)
    out = {}
    for s in systems:
        q = res.query_ids[s].astype(str)
        idx = np.searchsorted(q, common)  # query_ids are sorted
        out[s] = res.values[(s, str(m))][idx]
    return common.astype(object), out


def compare_evaluation(res: Evaluation, measures: Sequence[Measure | str] | None = None, *,
                       systems: Sequence[str] | None = None, baseline: str | None = None,
                       tests: Sequence[str] = ("t",), alternative: str = "two-sided",
                       correction: str = "holm", n_resamples: int = 10_000,
                       seed: int | None = 0) -> list[PairComparison]:
    """Paired tests between the systems of an evaluation (see :func:`compare_measures`)."""
    specs = parse_measures(list(measures) if measures else list(res.measures))
    systems = list(systems or res.systems)
    if baseline is not None and baseline not in systems:
        raise ValueError(f"baseline {baseline!r} is not one of the runs: {', '.join(systems)}")
    if len(systems) < 2:
        raise ValueError("comparing needs at least two runs")
    scores = {str(m): aligned_scores(res, m, systems)[1] for m in specs}
    return compare_measures(scores, baseline=baseline, tests=tuple(tests),
                            alternative=alternative, correction=correction,
                            n_resamples=n_resamples, rng=seed)


def compare_runs(qrels: Qrels, runs: Sequence[Run], measures: Sequence[str | Measure], *,
                 baseline: str | None = None, tests: Sequence[str] = ("t",),
                 alternative: str = "two-sided", correction: str = "holm",
                 n_resamples: int = 10_000, seed: int | None = 0, complete: bool = False,
                 rel_level: float = 1.0, depth: int | None = None) -> list[PairComparison]:
    """Evaluate ``runs`` on ``measures`` and compare every pair (or each with ``baseline``)."""
    res = evaluate(qrels, runs, measures, complete=complete, rel_level=rel_level, depth=depth)
    return compare_evaluation(res, baseline=baseline, tests=tests, alternative=alternative,
                              correction=correction, n_resamples=n_resamples, seed=seed)


def _record(c: PairComparison) -> dict[str, object]:
    d = c.as_dict()
    out = {}
    for k in FIELDS:
        v = d[k]
        if isinstance(v, float | np.floating):
            v = None if math.isnan(v) else float(v)
        elif isinstance(v, np.integer):
            v = int(v)
        out[k] = v
    return out


def write_comparison(records: Sequence[PairComparison], fmt: str, out: TextIO) -> None:
    """Write comparison records as JSON (a list of objects) or CSV (header + rows)."""
    rows = [_record(c) for c in records]
    if fmt == "json":
        json.dump(rows, out, indent=2)
        out.write("\n")
        return
    w = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
