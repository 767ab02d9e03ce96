"""The Queries page's tables, cached, and their styling (rows shaded by grade).

The tables come from :mod:`ireval_core.queries`, cached by explicit arguments (the
dataset key stands for the dataset, with the measure and the options for the
evaluation), as copies: each session gets its own. Everything here takes explicit
arguments (no widget values, no session state).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ireval_core import formats
from ireval_core.dataset import Dataset
from ireval_core.evaluate import Evaluation
from ireval_core.options import EvalOptions
from ireval_core.queries import (
    grade_text,
    judged_counts,
    missed_relevant,
    query_differences,
    side_by_side,
)

from .shared_cache import shared

__all__ = ["MEASURE_CHOICES", "RANKING_HELP", "differences_cached", "judged_cached",
           "ranking_cached", "style_ranking", "table_height"]

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "nDCG", "bpref", "ERR@10")
"""Measures offered first; any other measure text can be typed in."""

RANKING_HELP = {
    "rank": "Position in this run's ranking (score descending, document id descending on "
            "ties, as trec_eval)",
    "docid": "Document id",
    "score": "The run's score",
    "grade": "The judges' grade in the qrels; 'unjudged' = not in the qrels, "
             "'pooled, unjudged' = a negative grade",
    "other rank": "Rank of the same document in the other run ('–': not ranked there, "
                  "below the depth cut, or removed as unjudged by the evaluation options)",
}

# background of a row by grade: unjudged grey, non-relevant none, relevant greens by level
_UNJUDGED = "background-color: #f1f1f1; color: #6b7280"
_RELEVANT = ("#dcfce7", "#bbf7d0", "#86efac", "#4ade80")


def style_ranking(table: pd.DataFrame, rel_level: float) -> Styler:
    """Rows shaded by grade: relevant greens (darker = higher), unjudged grey.

    Grades and ranks in the other run are shown as text ("unjudged", "–"): a
    dataframe shows missing numbers as "None", which reads like a value.
    """
    grades = table["grade"].to_numpy()
    known = grades[~np.isnan(grades)]
    top = max(float(known.max()) if known.size else 0.0, rel_level)

    def css(g: float) -> str:
        if math.isnan(g) or g < 0:
            return _UNJUDGED
        if g < rel_level:
            return ""
        steps = len(_RELEVANT) - 1
        level = 0 if top <= rel_level else round((g - rel_level) / (top - rel_level) * steps)
        return f"background-color: {_RELEVANT[min(max(level, 0), steps)]}"

    shown = table.assign(grade=[grade_text(g) for g in grades])
    if "other rank" in shown.columns:
        shown["other rank"] = ["–" if pd.isna(r) else str(r) for r in table["other rank"]]
    rows = [css(g) for g in grades]
    return (shown.style.apply(lambda col: rows, axis=0)
            .format(formats.measure, subset=["score"]))


def table_height(rows: int, *, max_rows: int = 25) -> int:
    """Pixel height of a dataframe showing up to ``max_rows`` rows without scrolling."""
    return 38 + 35 * min(max(rows, 1), max_rows)


# ----------------------------------------------------------------------------- cached tables


@shared(copy=True)
def differences_cached(dataset_key: str, measure: str, options: EvalOptions, a: str, b: str,
                       _res: Evaluation) -> pd.DataFrame:
    """:func:`ireval_core.queries.query_differences` (``_res`` evaluates ``measure``
    under ``options``), cached."""
    return query_differences(_res, measure, a, b)


@shared(copy=True)
def ranking_cached(dataset_key: str, options: EvalOptions, query: str, name: str,
                   other: str | None, top: int, _dataset: Dataset
                   ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(ranking, missed)`` of run ``name`` for ``query``: its top ``top`` documents
    beside their rank in run ``other`` (:func:`~ireval_core.queries.side_by_side`) and
    the relevant documents it does not rank (:func:`~ireval_core.queries.missed_relevant`)."""
    run = _dataset.run(name)
    table = side_by_side(_dataset.qrels, run, None if other is None else _dataset.run(other),
                         query, options=options, top=top)
    return table, missed_relevant(_dataset.qrels, run, query, options=options)


@shared()
def judged_cached(dataset_key: str, options: EvalOptions, query: str, _dataset: Dataset
                  ) -> tuple[int, int]:
    """:func:`ireval_core.queries.judged_counts` of ``query``, cached."""
    return judged_counts(_dataset.qrels, query, options=options)
