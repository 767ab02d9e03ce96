"""Cached significance comparisons for the Compare page.

:func:`compare_cached` and :func:`report_cached` run the core functions on a cached
:class:`~ireval_core.evaluate.Evaluation`, keyed by explicit arguments only (the
dataset key stands for the dataset; the frozen options are part of the key). The
tables, verdicts and planning numbers are :mod:`ireval_core.compare`'s. Nothing here
reads widget values or session state.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pandas as pd
from pandas.io.formats.style import Styler

from ireval_core.compare import compare_evaluation, write_comparison
from ireval_core.evaluate import Evaluation
from ireval_core.options import EvalOptions
from ireval_core.report import SignificanceTable, significance_table
from ireval_core.stats import PairComparison

from .shared_cache import shared
from .text import md_frame

__all__ = ["COLUMN_HELP", "MEASURE_CHOICES", "compare_cached", "download", "report_cached",
           "report_styler"]

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "nDCG", "bpref", "P@5")
"""Measures offered first; any other measure text can be typed in."""

COLUMN_HELP = {
    "system_a": "System A of the pair (the baseline when comparing against one)",
    "system_b": "System B of the pair; differences are B − A",
    "mean_a": "Mean of system A over the compared queries (those all selected runs share)",
    "mean_b": "Mean of system B over the compared queries (those all selected runs share)",
    "mean_diff": "Mean per-query difference B − A (positive: B is better)",
    "95% CI": "95% confidence interval of B − A, clipped to the measure's range: Student t "
              "for every test except bootstrap, whose rows carry the bootstrap percentile "
              "interval",
    "p": "p-value of the test for the chosen alternative (Monte Carlo p = (b+1)/(B+1))",
    "corrected p": "p-value adjusted over the pairs of one measure and one test",
    "effect size": "Cohen's d_z = mean(B − A) / sd(B − A) over queries",
    "W/T/L": "Queries where B wins / ties / loses against A",
    "n": "Queries compared: those every selected system has a value for",
}


@shared(session_entries=8)
def compare_cached(dataset_key: str, options: EvalOptions, _res: Evaluation,
                   measures: tuple[str, ...], systems: tuple[str, ...], baseline: str | None,
                   tests: tuple[str, ...], alternative: str, correction: str,
                   n_resamples: int, seed: int) -> tuple[PairComparison, ...]:
    """:func:`compare_evaluation`, cached; ``options`` are those of ``_res``."""
    return tuple(compare_evaluation(
        _res, list(measures), systems=list(systems), baseline=baseline, tests=tests,
        alternative=alternative, correction=correction, n_resamples=n_resamples, seed=seed))


@shared(copy=True)
def report_cached(dataset_key: str, options: EvalOptions, _res: Evaluation,
                  measures: tuple[str, ...], systems: tuple[str, ...], test: str,
                  correction: str, alpha: float, n_resamples: int,
                  seed: int) -> SignificanceTable:
    """:func:`significance_table`, cached; ``options`` are those of ``_res``."""
    return significance_table(_res, list(measures), systems=list(systems), test=test,
                              correction=correction, alpha=alpha, n_resamples=n_resamples,
                              seed=seed)


def report_styler(table: SignificanceTable) -> Styler:
    """The plain-text table with the best mean of each measure in bold.

    For ``st.table``, which renders labels and cells as Markdown: every name escaped.
    """
    frame = md_frame(table.to_frame())
    best = pd.DataFrame({m: [table.is_best(s, m) for s in table.systems]
                         for m in table.measures}, index=frame.index)
    best.columns = frame.columns
    return frame.style.apply(
        lambda _: best.map(lambda b: "font-weight: 700" if b else ""), axis=None)


def download(records: Sequence[PairComparison], fmt: str) -> str:
    """The records as CSV or JSON text (:func:`ireval_core.compare.write_comparison`)."""
    buf = io.StringIO()
    write_comparison(records, fmt, buf)
    return buf.getvalue()
