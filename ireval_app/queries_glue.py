"""Tables of the Queries page: one query's rankings side by side, styled by grade.

Everything here takes explicit arguments (no widget values, no session state) and
calls :mod:`ireval_core.queries` for the numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ireval_core.data import Qrels, Run
from ireval_core.queries import judgments, ranking

__all__ = ["MEASURE_CHOICES", "RANKING_HELP", "grade_text", "judged_counts", "side_ranking",
           "style_ranking", "table_height"]

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "nDCG", "bpref", "ERR@10")
"""Measures offered first; any other measure text can be typed in."""

RANKING_HELP = {
    "rank": "Position in this run's ranking (score descending, document id descending on "
            "ties, as trec_eval)",
    "docid": "Document id",
    "score": "The run's score",
    "grade": "The judges' grade in the qrels; 'not judged' = not in the qrels, "
             "'pooled, unjudged' = a negative grade",
    "other rank": "Rank of the same document in the other run ('–': not ranked there, or "
                  "below the depth cut of the evaluation options)",
}

# background of a row by grade: unjudged grey, non-relevant none, relevant greens by level
_UNJUDGED = "background-color: #f1f1f1; color: #6b7280"
_RELEVANT = ("#dcfce7", "#bbf7d0", "#86efac", "#4ade80")


def grade_text(grade: float) -> str:
    """How a grade is shown: the number, or why there is none."""
    if math.isnan(grade):
        return "not judged"
    if grade < 0:
        return "pooled, unjudged"
    return f"{grade:g}"


def judged_counts(qrels: Qrels, query_id: str, rel_level: float) -> tuple[int, int]:
    """(relevant documents, judged documents) of one query: grade >= rel_level, grade >= 0."""
    grades = list(judgments(qrels, query_id).values())
    return sum(g >= rel_level for g in grades), sum(g >= 0 for g in grades)


def side_ranking(qrels: Qrels, run: Run, other: Run | None, query_id: str, depth: int, *,
                 cut: int | None = None) -> pd.DataFrame:
    """The top ``depth`` of ``run`` for one query, with the rank in ``other`` of each document.

    ``cut`` is the evaluation's depth cut (trec_eval ``-M``): a document the other run
    ranks below it counts as not ranked there, as the measures see it.
    """
    table = ranking(qrels, run, query_id, depth=depth)
    if other is not None:
        theirs = ranking(qrels, other, query_id, depth=cut)
        where = dict(zip(theirs["docid"], theirs["rank"], strict=True))
        table["other rank"] = pd.array([where.get(d) for d in table["docid"]], dtype="Int64")
    return table


def style_ranking(table: pd.DataFrame, rel_level: float) -> Styler:
    """Rows shaded by grade: relevant greens (darker = higher), unjudged grey.

    Grades and ranks in the other run are shown as text ("not judged", "–"): a
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
            .format("{:.4f}", subset=["score"]))


def table_height(rows: int, *, max_rows: int = 25) -> int:
    """Pixel height of a dataframe showing up to ``max_rows`` rows without scrolling."""
    return 38 + 35 * min(max(rows, 1), max_rows)
