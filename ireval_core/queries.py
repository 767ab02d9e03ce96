"""One query at a time: where two systems differ, what each ranked, what each missed.

Review meetings go from the means to the queries behind them. These functions give
the tables for that: the per-query differences of two systems on one measure
(:func:`query_differences`), one query's ranking with the judges' grades beside
every document (:func:`ranking`), and the relevant documents of the query that a
run does not rank (:func:`missed_relevant`) — the recall failures that nDCG with a
run-only ideal hides.

Rankings are in trec_eval's order (score descending, document id descending on
ties), the order every measure uses. A grade of NaN means the document is not in
the qrels; a negative grade means "pooled, unjudged". Both count as non-relevant
in the measures (unless judged-only evaluation removes them).

These functions look up one query, so they are cheap on runs of any size; nothing
here loops over queries.

>>> from ireval_core import Qrels, Run
>>> qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": 1}})
>>> run = Run.from_dict({"q1": {"a": 0.5, "x": 0.9, "b": 0.1}}, name="bm25")
>>> ranking(qrels, run, "q1")[["rank", "docid", "grade"]].to_dict("list")
{'rank': [1, 2, 3], 'docid': ['x', 'a', 'b'], 'grade': [nan, 2.0, 0.0]}
>>> missed_relevant(qrels, run, "q1")["docid"].tolist()
['c']
"""

from __future__ import annotations

import math
from numbers import Integral

import numpy as np
import pandas as pd
import pyarrow as pa

from .data import Qrels, Run, version_order
from .evaluate import Evaluation
from .measures import parse_measures
from .options import EvalOptions
from .params import Interval, check

__all__ = ["RANKING_COLUMNS", "grade_text", "judged_counts", "judgments", "missed_relevant",
           "means_note", "query_differences", "ranking", "side_by_side", "wins_ties_losses"]

RANKING_COLUMNS = ("rank", "docid", "score", "grade")
"""Columns of :func:`ranking`."""


def _segment(query_ids: np.ndarray, offsets: np.ndarray, query_id: str) -> slice:
    """Rows of ``query_id`` in a CSR layout (an empty slice when the query is absent)."""
    i = int(np.searchsorted(query_ids.astype(str), str(query_id)))
    if i < len(query_ids) and str(query_ids[i]) == str(query_id):
        return slice(int(offsets[i]), int(offsets[i + 1]))
    return slice(0, 0)


def _docs(doc_ids: pa.Array, codes: np.ndarray) -> list[str]:
    return doc_ids.take(pa.array(codes, type=pa.int32())).to_pylist()


def judgments(qrels: Qrels, query_id: str) -> dict[str, float]:
    """Every judgment of one query: ``{docid: grade}`` (empty when the query has none)."""
    rows = _segment(qrels.query_ids, qrels.offsets, query_id)
    return dict(zip(_docs(qrels.doc_ids, qrels.dcode[rows]), qrels.grade[rows].tolist(),
                    strict=True))


def ranking(qrels: Qrels, run: Run, query_id: str, *, options: EvalOptions | None = None,
            top: int | None = None) -> pd.DataFrame:
    """One query's ranking as the measures see it, with the qrels grade of every document.

    Parameters
    ----------
    qrels, run:
        The judgments and one system's rankings.
    query_id:
        The query; a query the run does not answer gives an empty table.
    options:
        The evaluation options: the ranking is cut at their depth (``-M``) and,
        with judged-only rankings, unjudged documents are removed after the cut
        and the rest re-ranked (``-J``), and ranked as their trec_eval version ranks
        (9.0.8: scores read as float32), exactly as the measures see it.
    top:
        Show only the first ``top`` rows (None: all).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1-based), ``docid``, ``score`` and ``grade`` (NaN when the
        document is not in the qrels of this query).
    """
    options = EvalOptions() if options is None else options
    top = check(top, "top", "ranking", (Interval(Integral, 1, None, closed="left"), None),
                error=ValueError)
    rows = _segment(run.query_ids, run.offsets, query_id)
    if options.depth is not None:
        rows = slice(rows.start, min(rows.stop, rows.start + options.depth))
    order, score32 = version_order(run, options.trec_eval)
    at = np.arange(rows.start, rows.stop) if order is None else order[rows]
    docs = np.array(_docs(run.doc_ids, run.dcode[at]), dtype=object)
    judged = judgments(qrels, query_id)
    grade = np.array([judged.get(d, np.nan) for d in docs], dtype=np.float64)
    score = (run.score if score32 is None else score32)[at]
    if options.judged_only:
        keep = grade >= 0
        docs, grade, score = docs[keep], grade[keep], score[keep]
    n = len(docs) if top is None else min(len(docs), top)
    return pd.DataFrame({
        "rank": np.arange(1, n + 1, dtype=np.int64),
        "docid": pd.Series(docs[:n], dtype=object),
        "score": score[:n],
        "grade": grade[:n],
    }, columns=list(RANKING_COLUMNS))


def side_by_side(qrels: Qrels, run: Run, other: Run | None, query_id: str, *,
                 options: EvalOptions | None = None, top: int | None = None) -> pd.DataFrame:
    """:func:`ranking` of ``run`` with, per document, its rank in ``other`` (``other rank``).

    Both rankings are taken under the same ``options``: a document the other run
    ranks below the depth cut (or removes as unjudged) counts as not ranked there,
    as the measures see it (``<NA>``).
    """
    table = ranking(qrels, run, query_id, options=options, top=top)
    if other is not None:
        theirs = ranking(qrels, other, query_id, options=options)
        where = dict(zip(theirs["docid"], theirs["rank"], strict=True))
        table["other rank"] = pd.array([where.get(d) for d in table["docid"]], dtype="Int64")
    return table


def grade_text(grade: float) -> str:
    """How a grade is shown in tables: the number, ``unjudged`` or ``pooled, unjudged``.

    >>> grade_text(2.0), grade_text(float("nan")), grade_text(-1.0)
    ('2', 'unjudged', 'pooled, unjudged')
    """
    if math.isnan(grade):
        return "unjudged"
    if grade < 0:
        return "pooled, unjudged"
    return f"{grade:g}"


def judged_counts(qrels: Qrels, query_id: str, *, options: EvalOptions | None = None
                  ) -> tuple[int, int]:
    """(relevant, judged) documents of one query in the qrels: grade >= level, grade >= 0."""
    options = EvalOptions() if options is None else options
    grades = np.fromiter(judgments(qrels, query_id).values(), dtype=np.float64)
    return int(np.count_nonzero(grades >= options.rel_level)), int(np.count_nonzero(grades >= 0))


def missed_relevant(qrels: Qrels, run: Run, query_id: str, *,
                    options: EvalOptions | None = None) -> pd.DataFrame:
    """Relevant documents of a query (grade >= the relevance level) that the run does not rank.

    Under ``options``: documents ranked below the depth cut count as missed too
    (what a measure cut at that depth sees). Sorted by grade descending, then
    document id. Columns ``docid`` and ``grade``.
    """
    options = EvalOptions() if options is None else options
    judged = judgments(qrels, query_id)
    ranked = set(ranking(qrels, run, query_id, options=options)["docid"])
    rows = [(d, g) for d, g in judged.items() if g >= options.rel_level and d not in ranked]
    rows.sort(key=lambda dg: (-dg[1], dg[0]))
    return pd.DataFrame(rows, columns=["docid", "grade"]).astype({"grade": np.float64})


def query_differences(evaluation: Evaluation, measure: str, a: str, b: str) -> pd.DataFrame:
    """Per-query values of systems ``a`` and ``b`` on one measure, and ``b − a``.

    Over the queries both systems have a value for (as the paired tests use), sorted
    by the difference ascending: the queries where ``b`` loses most come first. With
    ``a == b`` (one run), sorted by its value ascending: its weakest queries first.
    Columns ``query``, ``a``, ``b``, ``diff``.
    """
    queries, va, vb = evaluation.paired(measure, a, b)
    out = pd.DataFrame({"query": queries.astype(str), "a": va, "b": vb, "diff": vb - va})
    by = ["a", "query"] if a == b else ["diff", "query"]
    return out.sort_values(by, kind="stable", ignore_index=True)


def wins_ties_losses(differences: pd.DataFrame) -> tuple[int, int, int]:
    """Queries where ``b`` wins, ties (exactly) and loses, from :func:`query_differences`."""
    d = differences["diff"].to_numpy()
    wins, losses = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
    return wins, len(d) - wins - losses, losses


def means_note(evaluation: Evaluation, differences: pd.DataFrame, measure: str, a: str,
               b: str) -> str:
    """The means behind a table of :func:`query_differences`, each with the queries it averages.

    First the arithmetic means of ``a``, ``b`` and ``b − a`` over the rows of
    ``differences`` (the queries both runs have, as a paired test and the Compare page's
    "mean A" / "mean B" use them); then each run's own aggregate, as the Metrics page
    shows it, over its own queries. A measure not aggregated by a mean (a sum, a
    geometric mean, a ratio of sums) gets its own aggregates only: a mean of the listed
    values would not be its number.
    """
    m = str(measure)
    family = parse_measures(m)[0].family
    n = len(differences)
    parts = []
    if family.aggregate is None and n:
        if a == b:
            parts.append(f"Mean over these {n:,} queries: {a} {differences['a'].mean():.4f}.")
        else:
            parts.append(f"Means over these {n:,} queries: {a} {differences['a'].mean():.4f}, "
                         f"{b} {differences['b'].mean():.4f}, B − A "
                         f"{differences['diff'].mean():+.4f}.")
    own = ", ".join(f"{s} {evaluation.mean(s, m):.4f} over {len(evaluation.averaged(s, m)):,} "
                    "queries" for s in dict.fromkeys((a, b)))
    parts.append(f"Each run's own {m} (Metrics page; {family.aggregate_rule}): {own}.")
    return " ".join(parts)
