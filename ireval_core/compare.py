"""Evaluate runs and compare them pairwise: the logic behind ``compare`` and the app.

Per-query values come from :func:`ireval_core.evaluate`; every system pair is
compared on the queries all compared systems share (with the ``complete`` option,
every qrels query, missing = 0), so each test is paired over the same queries, and
the means shown beside a test are the means over those queries
(:func:`query_set_note` says when they differ from each run's own mean).

Small or degenerate samples get no verdict: with fewer than :data:`MIN_QUERIES`
compared queries, or when every per-query difference is zero, :func:`verdicts`
says the data cannot tell. Intervals of a difference are clipped to what the
measure allows (a difference of two values in [0, 1] lies in [-1, 1]).
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TextIO

import numpy as np
import pandas as pd

from .data import Qrels, Run
from .errors import invalid_parameter
from .escape import csv_cell
from .evaluate import Evaluation, evaluate
from .measures import Measure, parse_measures
from .options import EvalOptions
from .params import OPEN_UNIT, POSITIVE, Options, check, validate_params
from .stats import (
    ALTERNATIVES,
    PairComparison,
    compare_measures,
    min_detectable_difference,
    queries_needed,
)

__all__ = ["CORRECTION_LABELS", "FIELDS", "MIN_QUERIES", "TEST_LABELS", "Planning", "Verdict",
           "aligned_scores", "compare_evaluation", "compare_runs", "comparison_table",
           "difference_bounds", "plan_next_round", "query_set_note", "verdicts",
           "write_comparison"]

MIN_QUERIES = 5
"""Fewer compared queries than this: no verdict, the data cannot tell."""

TEST_LABELS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank",
    "sign": "sign test",
    "randomization": "randomization (permutation)",
    "bootstrap": "bootstrap",
}
"""How each test is named in tables and sentences."""

CORRECTION_LABELS = {
    "none": "uncorrected",
    "bonferroni": "Bonferroni-corrected",
    "holm": "Holm-corrected",
    "bh": "Benjamini–Hochberg-adjusted",
}
"""How each multiple-comparison correction is named in tables and sentences."""

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
        raise invalid_parameter("baseline", "compare_evaluation",
                                f"one of the runs ({', '.join(systems)})", baseline)
    if len(systems) < 2:
        raise invalid_parameter("systems", "compare_evaluation", "at least two runs", systems)
    scores = {str(m): aligned_scores(res, m, systems)[1] for m in specs}
    check(alternative, "alternative", "compare_evaluation", Options(ALTERNATIVES))
    # a test needs two queries: measures with fewer shared queries get records without one
    testable = {m: v for m, v in scores.items() if len(next(iter(v.values()))) >= 2}
    tested = compare_measures(testable, baseline=baseline, tests=tuple(tests),
                              alternative=alternative,  # type: ignore[arg-type]
                              correction=correction,
                              n_resamples=n_resamples, rng=seed) if testable else []
    if len(testable) == len(scores):
        return tested
    pairs = ([(baseline, s) for s in systems if s != baseline] if baseline is not None
             else [(a, b) for i, a in enumerate(systems) for b in systems[i + 1:]])
    out: list[PairComparison] = []
    for m, v in scores.items():
        if m in testable:
            out.extend(r for r in tested if r.measure == m)
            continue
        for a, b in pairs:
            d = v[b] - v[a]
            for test in tests:
                out.append(PairComparison(
                    m, a, b, test, math.nan, math.nan, math.nan, correction, alternative,
                    float(np.mean(v[a])) if len(d) else math.nan,
                    float(np.mean(v[b])) if len(d) else math.nan,
                    float(np.mean(d)) if len(d) else math.nan, math.nan, math.nan, math.nan,
                    int(np.count_nonzero(d > 0)), int(np.count_nonzero(d == 0)),
                    int(np.count_nonzero(d < 0)), int(len(d))))
    return out


def compare_runs(qrels: Qrels, runs: Sequence[Run], measures: Sequence[str | Measure], *,
                 options: EvalOptions | None = None, baseline: str | None = None,
                 tests: Sequence[str] = ("t",), alternative: str = "two-sided",
                 correction: str = "holm", n_resamples: int = 10_000,
                 seed: int | None = 0) -> list[PairComparison]:
    """Evaluate ``runs`` on ``measures`` under ``options`` and compare every pair
    (or each run with ``baseline``)."""
    res = evaluate(qrels, runs, measures, options=options)
    return compare_evaluation(res, baseline=baseline, tests=tests, alternative=alternative,
                              correction=correction, n_resamples=n_resamples, seed=seed)


def _record(c: PairComparison, extra: Mapping[str, object] | None = None
            ) -> dict[str, object]:
    d = c.as_dict()
    out = {}
    for k in FIELDS:
        v = d[k]
        if isinstance(v, float | np.floating):
            v = None if math.isnan(v) else float(v)
        elif isinstance(v, np.integer):
            v = int(v)
        out[k] = v
    if extra:
        out.update(extra)
    return out


def write_comparison(records: Sequence[PairComparison], fmt: str, out: TextIO, *,
                     extras: Mapping[tuple[str, str, str], Mapping[str, object]] | None = None,
                     alpha: float = 0.05) -> None:
    """Write comparison records as text, JSON (a list of objects) or CSV (header + rows).

    Text: per (pair, measure) the :func:`verdicts` sentence at level ``alpha``, then one
    indented line per test with its numbers (means, difference and interval, p and
    corrected p, wins/ties/losses, queries), for a person at a terminal.

    ``extras``: more keys for the JSON record of each ``(system_a, system_b, measure)``
    (the decision evidence of :func:`ireval_core.decisions.evidence.decision_evidence`:
    ``holes``, ``risk``, ``noninferiority``, ``rank_confidence``); CSV leaves them out.

    In CSV a name a spreadsheet would read as a formula (``=...``, ``+...``, ``-...``,
    ``@...``) is written with a leading ``'`` (:func:`~ireval_core.escape.csv_cell`);
    JSON holds the names as they are.
    """
    if fmt == "text":
        _write_text(records, out, alpha)
        return
    rows = [_record(c, extras.get((c.system_a, c.system_b, str(c.measure)))
                    if extras and fmt == "json" else None) for c in records]
    if fmt == "json":
        json.dump(rows, out, indent=2)
        out.write("\n")
        return
    w = csv.DictWriter(out, fieldnames=FIELDS, lineterminator="\n")
    w.writeheader()
    w.writerows({k: csv_cell(v) for k, v in row.items()} for row in rows)


def _write_text(records: Sequence[PairComparison], out: TextIO, alpha: float) -> None:
    """The text format of :func:`write_comparison`."""
    by_pair: dict[tuple[str, str, str], list[PairComparison]] = {}
    for c in records:
        by_pair.setdefault((c.system_a, c.system_b, str(c.measure)), []).append(c)
    for v in verdicts(records, alpha=alpha):
        out.write(f"{v.text}\n")
        for c in by_pair[(v.system_a, v.system_b, v.measure)]:
            bounds = difference_bounds(v.measure)
            lo, hi = _clip(c.ci_low, bounds), _clip(c.ci_high, bounds)
            out.write(f"  {TEST_LABELS.get(c.test, c.test)}: {c.system_a} {c.mean_a:.4f}, "
                      f"{c.system_b} {c.mean_b:.4f}, difference {c.mean_diff:+.4f} "
                      f"[{lo:.4f}, {hi:.4f}], {_p(c.pvalue)}, "
                      f"{CORRECTION_LABELS.get(c.correction, c.correction)} "
                      f"{_p(c.pvalue_corrected).removeprefix('p ')}, W/T/L "
                      f"{c.wins}/{c.ties}/{c.losses}, {c.n} queries\n")


# ----------------------------------------------------------------------------- for people


def difference_bounds(measure: str | Measure) -> tuple[float, float]:
    """The range of a difference of two values of ``measure`` (``±inf`` when unbounded).

    >>> difference_bounds("nDCG@10")
    (-1.0, 1.0)
    """
    lo, hi = parse_measures(measure)[0].family.bounds
    if lo is None or hi is None:
        return -math.inf, math.inf
    return float(lo - hi), float(hi - lo)


def _clip(x: float, bounds: tuple[float, float]) -> float:
    return x if math.isnan(x) else min(max(x, bounds[0]), bounds[1])


def comparison_table(records: Sequence[PairComparison]) -> pd.DataFrame:
    """One row per comparison, as shown in the app (numbers stay numbers).

    The interval of the difference is clipped to what the measure allows
    (:func:`difference_bounds`) and shown as text ``[low, high]``; ``W/T/L`` is
    wins / ties / losses of B.
    """
    cis = []
    for c in records:
        b = difference_bounds(c.measure) if c.measure else (-math.inf, math.inf)
        cis.append("–" if math.isnan(c.ci_low) else
                   f"[{_clip(c.ci_low, b):+.3f}, {_clip(c.ci_high, b):+.3f}]")
    return pd.DataFrame({
        "system_a": [c.system_a for c in records],
        "system_b": [c.system_b for c in records],
        "measure": [c.measure for c in records],
        "test": [c.test for c in records],
        "mean_a": [c.mean_a for c in records],
        "mean_b": [c.mean_b for c in records],
        "mean_diff": [c.mean_diff for c in records],
        "95% CI": cis,
        "p": [c.pvalue for c in records],
        "corrected p": [c.pvalue_corrected for c in records],
        "effect size": [c.effect_size for c in records],
        "W/T/L": [f"{c.wins}/{c.ties}/{c.losses}" for c in records],
        "n": [c.n for c in records],
    })


@dataclass(frozen=True)
class Verdict:
    """The plain-language outcome of one (pair, measure) over the chosen tests.

    ``outcome`` is ``"significant"``, ``"not significant"`` or ``"cannot tell"``
    (too few queries, or no query differs). ``text`` is the sentence; names in it
    are plain text (escape them for the output format).
    """

    system_a: str
    system_b: str
    measure: str
    outcome: str
    text: str

    @property
    def significant(self) -> bool:
        return self.outcome == "significant"


def _p(p: float) -> str:
    if math.isnan(p):
        return "p undefined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _num(x: float) -> str:
    return f"{x:.2f}" if abs(x) >= 0.005 or x == 0 else f"{x:.4f}"


@validate_params({"alpha": OPEN_UNIT})
def verdicts(records: Sequence[PairComparison], *, alpha: float) -> list[Verdict]:
    """One :class:`Verdict` per (pair, measure), in record order.

    With several tests the verdict follows the least significant one (largest
    corrected p): a difference is called only when every chosen test finds it.
    Fewer than :data:`MIN_QUERIES` compared queries, all differences zero, or an
    undefined p-value give ``"cannot tell"`` instead of a verdict.
    """
    groups: dict[tuple[str, str, str], list[PairComparison]] = {}
    for c in records:
        groups.setdefault((c.system_a, c.system_b, str(c.measure)), []).append(c)
    out = []
    for (a, b, measure), rows in groups.items():
        worst = max(rows, key=lambda c: np.nan_to_num(c.pvalue_corrected, nan=2.0))
        d = worst.mean_diff
        bounds = difference_bounds(measure)
        lo, hi = _clip(worst.ci_low, bounds), _clip(worst.ci_high, bounds)
        how = f"{worst.test}, {CORRECTION_LABELS.get(worst.correction, worst.correction)}"
        if len(rows) > 1:
            others = ", ".join(f"{c.test} {_p(c.pvalue_corrected)}" for c in rows
                               if c is not worst)
            how += f"; also {others}"
        if worst.n < MIN_QUERIES:
            outcome = "cannot tell"
            text = (f"{b} vs {a} on {measure}: cannot tell from {worst.n} "
                    f"quer{'y' if worst.n == 1 else 'ies'} (a test needs at least "
                    f"{MIN_QUERIES}); mean difference {d:+.2f}")
        elif worst.wins == 0 and worst.losses == 0:
            outcome = "cannot tell"
            text = (f"{b} vs {a} on {measure}: cannot tell, the two runs score the same on "
                    f"every one of the {worst.n} queries")
        elif math.isnan(worst.pvalue_corrected):
            outcome = "cannot tell"
            text = f"{b} vs {a} on {measure}: cannot tell, the test is undefined ({how})"
        elif worst.pvalue_corrected < alpha:
            outcome = "significant"
            # told from the winner's side: the difference and its interval are winner − loser
            winner, loser, sign = (b, a, 1.0) if d > 0 else (a, b, -1.0)
            wl, wh = sorted((sign * lo, sign * hi))
            text = (f"{winner} beats {loser} on {measure} by {sign * d:+.2f} "
                    f"[{_num(wl)}, {_num(wh)}], {_p(worst.pvalue_corrected)} ({how}; "
                    f"{worst.n} queries)")
        else:
            outcome = "not significant"
            text = (f"{b} vs {a} on {measure}: no significant difference at α = {alpha:g} "
                    f"({d:+.2f} [{_num(lo)}, {_num(hi)}], {_p(worst.pvalue_corrected)}; "
                    f"{how}; {worst.n} queries)")
        out.append(Verdict(a, b, measure, outcome, text))
    return out


def query_set_note(res: Evaluation, measure: str | Measure, systems: Sequence[str]
                   ) -> str | None:
    """A sentence when the compared means are over fewer queries than a run's own mean.

    The tests pair the queries every system in ``systems`` has a value for; a run
    answering more queries has another mean on the Metrics page. ``None`` when
    every system's own query set is the common one.
    """
    m = parse_measures(measure)[0]
    own = {s: res.averaged(s, m) for s in systems}
    common, _ = aligned_scores(res, m, systems)
    differing = [s for s in systems if len(own[s]) != len(common)]
    if not differing:
        return None
    counts = ", ".join(f"{s} {len(own[s]):,}" for s in systems)
    return (f"{m}: the means here are over the {len(common):,} queries all compared runs "
            f"share; each run's own mean (Metrics page) is over its own queries ({counts}).")


@dataclass(frozen=True)
class Planning:
    """How many queries the next round needs, from observed per-query differences.

    ``min_detectable`` is the smallest true mean difference a paired t-test finds
    with ``power`` at the current number of queries; ``queries_needed`` the number
    of queries for ``delta``. Both are ``None`` where undefined (fewer than two
    queries, or no spread). ``exceeds_range`` flags a minimum detectable difference
    larger than the measure allows: with so few queries nothing can be detected.
    """

    sd_diff: float
    n_queries: int
    min_detectable: float | None
    queries_needed: int | None
    delta: float
    alpha: float
    power: float
    exceeds_range: bool = False
    note: str | None = None


def plan_next_round(differences: np.ndarray, delta: float, *, measure: str | Measure,
                    alpha: float = 0.05, power: float = 0.8,
                    alternative: str = "two-sided") -> Planning:
    """Minimum detectable difference now, and queries needed to detect ``delta``.

    ``differences`` are per-query B − A values; their spread is assumed for the
    next round. See :class:`Planning` for the fields and the undefined cases.
    """
    delta = check(delta, "delta", "plan_next_round", POSITIVE,
                  error=ValueError)
    d = np.asarray(differences, dtype=float)
    n = len(d)
    sd = float(np.std(d, ddof=1)) if n >= 2 else float("nan")
    ok = n >= 2 and math.isfinite(sd) and sd > 0
    alt = alternative  # validated by the planning functions
    mdd = (min_detectable_difference(sd, n, alpha=alpha, power=power,
                                     alternative=alt)  # type: ignore[arg-type]
           if ok else None)
    need = (queries_needed(sd, delta, alpha=alpha, power=power,
                           alternative=alt)  # type: ignore[arg-type]
            if ok else None)
    width = difference_bounds(measure)[1]
    exceeds = mdd is not None and mdd > width
    note = None
    if n < 2:
        note = f"{n} compared quer{'y' if n == 1 else 'ies'}: no spread to plan from."
    elif not ok:
        note = "Every query has the same difference: no spread to plan from."
    elif exceeds:
        note = (f"With {n} queries the smallest detectable difference ({mdd:.2f}) is larger "
                f"than {measure} allows ({width:g}): nothing can be detected yet.")
    elif n < MIN_QUERIES:
        note = f"Only {n} queries: the spread itself is a rough estimate."
    return Planning(sd, n, mdd, need, float(delta), alpha, power, exceeds, note)
