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

import numpy as np
import pandas as pd
import pyarrow as pa

from .data import Qrels, Run
from .evaluate import Evaluation

__all__ = ["RANKING_COLUMNS", "judgments", "missed_relevant", "query_differences", "ranking"]

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


def ranking(qrels: Qrels, run: Run, query_id: str, *, depth: int | None = None
            ) -> pd.DataFrame:
    """One query's ranking in trec_eval's order, with the qrels grade of every document.

    Parameters
    ----------
    qrels, run:
        The judgments and one system's rankings.
    query_id:
        The query; a query the run does not answer gives an empty table.
    depth:
        Keep only the top ``depth`` documents (None: the whole ranking).

    Returns
    -------
    pandas.DataFrame
        Columns ``rank`` (1-based), ``docid``, ``score`` and ``grade`` (NaN when the
        document is not in the qrels of this query).
    """
    if depth is not None and depth < 1:
        raise ValueError(f"depth must be at least 1, got {depth}")
    rows = _segment(run.query_ids, run.offsets, query_id)
    if depth is not None:
        rows = slice(rows.start, min(rows.stop, rows.start + depth))
    docs = _docs(run.doc_ids, run.dcode[rows])
    judged = judgments(qrels, query_id)
    return pd.DataFrame({
        "rank": np.arange(1, len(docs) + 1, dtype=np.int64),
        "docid": pd.Series(docs, dtype=object),
        "score": run.score[rows],
        "grade": np.array([judged.get(d, np.nan) for d in docs], dtype=np.float64),
    }, columns=list(RANKING_COLUMNS))


def missed_relevant(qrels: Qrels, run: Run, query_id: str, *, rel_level: float = 1.0,
                    depth: int | None = None) -> pd.DataFrame:
    """Relevant documents of a query (grade >= ``rel_level``) that the run does not rank.

    With ``depth``, documents ranked below ``depth`` count as missed too (what a
    measure cut at that depth sees). Sorted by grade descending, then document id.
    Columns ``docid`` and ``grade``.
    """
    judged = judgments(qrels, query_id)
    ranked = set(ranking(qrels, run, query_id, depth=depth)["docid"])
    rows = [(d, g) for d, g in judged.items() if g >= rel_level and d not in ranked]
    rows.sort(key=lambda dg: (-dg[1], dg[0]))
    return pd.DataFrame(rows, columns=["docid", "grade"]).astype({"grade": np.float64})


def query_differences(evaluation: Evaluation, measure: str, a: str, b: str) -> pd.DataFrame:
    """Per-query values of systems ``a`` and ``b`` on one measure, and ``b − a``.

    Over the queries both systems have a value for (as the paired tests use), sorted
    by the difference ascending: the queries where ``b`` loses most come first.
    Columns ``query``, ``a``, ``b``, ``diff``.
    """
    queries, va, vb = evaluation.paired(measure, a, b)
    out = pd.DataFrame({"query": queries.astype(str), "a": va, "b": vb, "diff": vb - va})
    return out.sort_values(["diff", "query"], kind="stable", ignore_index=True)
