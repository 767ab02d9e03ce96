"""Cached significance comparisons for the Compare page, and their tables and sentences.

:func:`compare_cached` runs :func:`ireval_core.compare.compare_evaluation` on a cached
:class:`~ireval_core.evaluate.Evaluation`, keyed by explicit arguments only (the
dataset key stands for the dataset). The other functions turn its records into the
table, the plain-language verdicts, the downloads and the planning numbers; nothing
here reads widget values or session state.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from ireval_core.compare import aligned_scores, compare_evaluation, write_comparison
from ireval_core.evaluate import Evaluation
from ireval_core.report import SignificanceTable, significance_table
from ireval_core.stats import PairComparison, min_detectable_difference, queries_needed

__all__ = [
    "COLUMN_HELP",
    "CORRECTION_LABELS",
    "MEASURE_CHOICES",
    "TEST_LABELS",
    "Planning",
    "comparison_table",
    "compare_cached",
    "download",
    "pair_deltas",
    "planning",
    "report_cached",
    "report_styler",
    "verdicts",
]

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "nDCG", "bpref", "P@5")
"""Measures offered first; any other measure text can be typed in."""

TEST_LABELS = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank",
    "sign": "sign test",
    "randomization": "randomization (permutation)",
    "bootstrap": "bootstrap",
}
CORRECTION_LABELS = {
    "none": "uncorrected",
    "bonferroni": "Bonferroni-corrected",
    "holm": "Holm-corrected",
    "bh": "Benjamini–Hochberg-adjusted",
}

COLUMN_HELP = {
    "system_a": "System A of the pair (the baseline when comparing against one)",
    "system_b": "System B of the pair; differences are B − A",
    "mean_a": "Mean of system A over the compared queries",
    "mean_b": "Mean of system B over the compared queries",
    "mean_diff": "Mean per-query difference B − A (positive: B is better)",
    "95% CI": "95% confidence interval of B − A: Student t for every test except bootstrap, "
              "whose rows carry the bootstrap percentile interval",
    "p": "p-value of the test for the chosen alternative (Monte Carlo p = (b+1)/(B+1))",
    "corrected p": "p-value adjusted over the pairs of one measure and one test",
    "effect size": "Cohen's d_z = mean(B − A) / sd(B − A) over queries",
    "W/T/L": "Queries where B wins / ties / loses against A",
    "n": "Queries compared: those every selected system has a value for",
}


@st.cache_resource(max_entries=32, show_spinner=False)
def compare_cached(dataset_key: str, eval_key: tuple[object, ...], _res: Evaluation,
                   measures: tuple[str, ...], systems: tuple[str, ...], baseline: str | None,
                   tests: tuple[str, ...], alternative: str, correction: str,
                   n_resamples: int, seed: int) -> list[PairComparison]:
    """:func:`compare_evaluation`, cached; ``eval_key`` names the options of ``_res``."""
    return compare_evaluation(_res, list(measures), systems=list(systems), baseline=baseline,
                              tests=tests, alternative=alternative, correction=correction,
                              n_resamples=n_resamples, seed=seed)


@st.cache_resource(max_entries=16, show_spinner=False)
def report_cached(dataset_key: str, eval_key: tuple[object, ...], _res: Evaluation,
                  measures: tuple[str, ...], systems: tuple[str, ...], test: str,
                  correction: str, alpha: float, n_resamples: int,
                  seed: int) -> SignificanceTable:
    """:func:`significance_table`, cached; ``eval_key`` names the options of ``_res``."""
    return significance_table(_res, list(measures), systems=list(systems), test=test,
                              correction=correction, alpha=alpha, n_resamples=n_resamples,
                              seed=seed)


def report_styler(table: SignificanceTable) -> Styler:
    """The plain-text table with the best mean of each measure in bold."""
    frame = table.to_frame()
    best = pd.DataFrame({m: [table.is_best(s, m) for s in table.systems]
                         for m in table.measures}, index=frame.index)
    return frame.style.apply(
        lambda _: best.map(lambda b: "font-weight: 700" if b else ""), axis=None)


def comparison_table(records: Sequence[PairComparison]) -> pd.DataFrame:
    """One row per record, columns as shown on the page (``p`` etc. stay numeric)."""
    return pd.DataFrame({
        "system_a": [c.system_a for c in records],
        "system_b": [c.system_b for c in records],
        "measure": [c.measure for c in records],
        "test": [c.test for c in records],
        "mean_a": [c.mean_a for c in records],
        "mean_b": [c.mean_b for c in records],
        "mean_diff": [c.mean_diff for c in records],
        "95% CI": [f"[{c.ci_low:+.3f}, {c.ci_high:+.3f}]" for c in records],
        "p": [c.pvalue for c in records],
        "corrected p": [c.pvalue_corrected for c in records],
        "effect size": [c.effect_size for c in records],
        "W/T/L": [f"{c.wins}/{c.ties}/{c.losses}" for c in records],
        "n": [c.n for c in records],
    })


def _p(p: float) -> str:
    if math.isnan(p):
        return "p undefined"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


def _num(x: float) -> str:
    return f"{x:.2f}" if abs(x) >= 0.005 or x == 0 else f"{x:.4f}"


def verdicts(records: Sequence[PairComparison], *, alpha: float) -> list[tuple[bool, str]]:
    """One sentence per (pair, measure): ``(significant, text)``.

    With several tests the verdict follows the least significant one (largest
    corrected p): a difference is called only when every chosen test finds it.
    """
    groups: dict[tuple[str, str, str | None], list[PairComparison]] = {}
    for c in records:
        groups.setdefault((c.system_a, c.system_b, c.measure), []).append(c)
    out = []
    for (a, b, measure), rows in groups.items():
        worst = max(rows, key=lambda c: (np.nan_to_num(c.pvalue_corrected, nan=2.0)))
        d = worst.mean_diff
        how = f"{worst.test}, {CORRECTION_LABELS.get(worst.correction, worst.correction)}"
        if len(rows) > 1:
            others = ", ".join(f"{c.test} {_p(c.pvalue_corrected)}" for c in rows if c is not worst)
            how += f"; also {others}"
        ci = f"[{_num(worst.ci_low)}, {_num(worst.ci_high)}]"
        significant = bool(worst.pvalue_corrected < alpha)
        if significant:
            # told from the winner's side: the difference and its interval are winner − loser
            winner, loser, sign = (b, a, 1.0) if d > 0 else (a, b, -1.0)
            lo, hi = sorted((sign * worst.ci_low, sign * worst.ci_high))
            text = (f"**{winner}** beats **{loser}** on {measure} by {sign * d:+.2f} "
                    f"[{_num(lo)}, {_num(hi)}], "
                    f"{_p(worst.pvalue_corrected)} ({how})")
        else:
            text = (f"**{b}** vs **{a}** on {measure}: no significant difference at "
                    f"α = {alpha:g} ({d:+.2f} {ci}, {_p(worst.pvalue_corrected)}; {how})")
        out.append((significant, text))
    return out


def download(records: Sequence[PairComparison], fmt: str) -> str:
    """The records as CSV or JSON text (:func:`ireval_core.compare.write_comparison`)."""
    buf = io.StringIO()
    write_comparison(records, fmt, buf)
    return buf.getvalue()


def pair_deltas(res: Evaluation, measure: str, systems: Sequence[str], a: str,
                b: str) -> tuple[np.ndarray, np.ndarray]:
    """Query ids and per-query differences b − a on the queries the table compared."""
    queries, scores = aligned_scores(res, measure, systems)
    return queries, scores[b] - scores[a]


@dataclass(frozen=True)
class Planning:
    """Planning numbers of a paired t-test from observed per-query differences."""

    sd_diff: float
    n_queries: int
    min_detectable: float | None
    queries_needed: int | None
    delta: float
    alpha: float
    power: float


def planning(delta_values: np.ndarray, delta: float, *, alpha: float, power: float = 0.8,
             alternative: str = "two-sided") -> Planning:
    """Minimum detectable difference now and queries needed for ``delta``.

    ``None`` where undefined (fewer than 2 queries, or all differences equal).
    """
    d = np.asarray(delta_values, dtype=float)
    n = len(d)
    sd = float(np.std(d, ddof=1)) if n >= 2 else float("nan")
    ok = n >= 2 and math.isfinite(sd) and sd > 0
    mdd = (min_detectable_difference(sd, n, alpha=alpha, power=power, alternative=alternative)
           if ok else None)
    need = (queries_needed(sd, delta, alpha=alpha, power=power, alternative=alternative)
            if ok and delta > 0 else None)
    return Planning(sd, n, mdd, need, delta, alpha, power)
