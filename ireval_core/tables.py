"""The systems x measures table people read: means, intervals, best marks, query sets.

:func:`metrics_table` turns an :class:`~ireval_core.evaluate.Evaluation` into what the
Metrics page, the CLI and the reports show, so that each of them shows the same
numbers with the same marks:

* every cell is the mean to 4 decimals and its 95% interval (clipped to the
  measure's range, :meth:`~ireval_core.evaluate.Evaluation.intervals`);
* the best mean of each measure is marked, and means equal to it (to within
  floating-point summation error) are marked too;
* every mean says how many queries it averages; when runs average different query
  sets, :attr:`MetricsTable.query_note` says so, because the best mark then
  compares means over different queries.

>>> from ireval_core import Qrels, Run, evaluate
>>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
>>> x = Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}}, name="x")
>>> y = Run.from_dict({"q1": {"a": 1.0}}, name="y")
>>> t = metrics_table(evaluate(qrels, [x, y], ["P@1"]))
>>> t.best["P@1"].tolist()
[True, True]
>>> t.query_note.split(":")[0]
'The runs average different query sets (x 2, y 1 queries)'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .evaluate import Evaluation
from .params import OPEN_UNIT, validate_params

__all__ = ["SMALL_SAMPLE", "MetricsTable", "best_marks", "metrics_table", "per_query_workbook"]

SMALL_SAMPLE = 5
"""Means over fewer queries than this get a warning beside their intervals."""

_REL_TOL = 1e-12


@dataclass(frozen=True, eq=False)
class MetricsTable:
    """Means, intervals and marks of an evaluation, systems x measures.

    Every frame is a fresh object built by :func:`metrics_table`; nothing here is
    shared with a cached evaluation.

    Attributes
    ----------
    mean, low, high:
        The aggregates and the bounds of their confidence intervals.
    cells:
        Text cells: ``0.4746 [0.42, 0.53]`` (the interval to 2 decimals; no interval
        where it does not apply, ``–`` where the mean is undefined).
    best:
        True where the mean is the best of its measure (ties all marked).
    n_queries:
        Queries averaged per (system, measure).
    query_note:
        A sentence when the systems average different query sets, else ``None``.
    small_note:
        A sentence when a mean averages fewer than :data:`SMALL_SAMPLE` queries (its
        interval is then too rough to read much into), else ``None``.
    confidence_level:
        Of the intervals.
    """

    mean: pd.DataFrame
    low: pd.DataFrame
    high: pd.DataFrame
    cells: pd.DataFrame
    best: pd.DataFrame
    n_queries: pd.DataFrame
    query_note: str | None
    confidence_level: float
    small_note: str | None = None

    def queries_caption(self) -> str:
        """How many queries each system's means average, in words."""
        parts = []
        for system, row in self.n_queries.iterrows():
            n = sorted(set(row.tolist()))
            parts.append(f"{system} {n[0]:,}" if len(n) == 1
                         else f"{system} {n[0]:,}–{n[-1]:,} (by measure)")
        return "Queries averaged: " + ", ".join(parts) + "."

    def to_long(self, evaluation: Evaluation) -> pd.DataFrame:
        """One row per (system, measure): mean, interval, queries, definition, options."""
        rows = []
        for s in self.mean.index:
            for m in self.mean.columns:
                rows.append({"system": s, "measure": m, "mean": self.mean.loc[s, m],
                             "ci_low": self.low.loc[s, m], "ci_high": self.high.loc[s, m],
                             "queries": int(self.n_queries.loc[s, m]),
                             "definition": evaluation.definition(m),
                             "options": evaluation.options.describe()})
        return pd.DataFrame(rows, columns=["system", "measure", "mean", "ci_low", "ci_high",
                                           "queries", "definition", "options"])


def _cell(mean: float, low: float, high: float) -> str:
    if math.isnan(mean):
        return "–"
    if math.isnan(low):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{low:.2f}, {high:.2f}]"


def best_marks(mean: pd.DataFrame) -> pd.DataFrame:
    """True where a mean equals the best of its column (relative tolerance 1e-12).

    Means computed over different query orders can differ in the last bit; equal
    means get equal marks. Higher is better for every measure of the registry.
    """
    top = mean.max(axis=0)
    close = np.isclose(mean.to_numpy(dtype=float), top.to_numpy(dtype=float)[None, :],
                       rtol=_REL_TOL, atol=0.0)
    return pd.DataFrame(close & mean.notna().to_numpy(), index=mean.index, columns=mean.columns)


@validate_params({"confidence_level": OPEN_UNIT})
def metrics_table(res: Evaluation, *, confidence_level: float = 0.95) -> MetricsTable:
    """The table of ``res``: see the module docstring."""
    mean = res.table()
    low, high = res.intervals(confidence_level=confidence_level)
    cells = pd.DataFrame({m: [_cell(mean.loc[s, m], low.loc[s, m], high.loc[s, m])
                              for s in mean.index] for m in mean.columns}, index=mean.index)
    n = pd.DataFrame({m: [res.n_averaged[(s, m)] for s in mean.index] for m in mean.columns},
                     index=mean.index)
    note = None
    for m in mean.columns:  # the same query set for every system, measure by measure?
        sets = {s: res.averaged(s, m).astype(str) for s in res.systems}
        arrays = list(sets.values())  # compared as arrays, not as tuples of strings
        if any(not np.array_equal(v, arrays[0]) for v in arrays[1:]):
            counts = ", ".join(f"{s} {len(v):,}" for s, v in sets.items())
            note = (f"The runs average different query sets ({counts} queries): a highlighted "
                    "best mean may compare different queries. The Compare page tests the "
                    "runs on the queries they share.")
            break
    fewest = int(n.to_numpy().min()) if n.size else 0
    small = None
    if fewest < SMALL_SAMPLE:
        small = (f"Only {fewest} quer{'y' if fewest == 1 else 'ies'} behind some means: their "
                 "intervals are rough (or missing with one query); do not read much into "
                 "differences between them.")
    return MetricsTable(mean, low, high, cells, best_marks(mean), n, note, confidence_level,
                        small)


_SHEET_FORBIDDEN = str.maketrans({c: "_" for c in "[]:*?/\\"})


def per_query_workbook(res: Evaluation) -> bytes:
    """Per-query values as an Excel workbook (``.xlsx``): one sheet per measure.

    Each sheet has a ``query`` column and one column per system (empty where a system
    has no value for the query), then a last sheet ``definitions`` with every measure's
    definition and the options. Text cells that a spreadsheet would run as a formula
    (``= + - @``) are written with a leading ``'`` (:func:`ireval_core.escape.csv_frame`).
    Sheet names are the measure names with the characters Excel forbids replaced and cut
    to 31 characters (numbered if two collide).

    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    >>> run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"c": 1.0}}, name="x")
    >>> data = per_query_workbook(evaluate(qrels, run, ["P@1", "AP"]))
    >>> import io, pandas as pd
    >>> sheets = pd.read_excel(io.BytesIO(data), sheet_name=None)
    >>> list(sheets), sheets["P@1"].to_dict("list")
    (['P@1', 'AP', 'definitions'], {'query': ['q1', 'q2'], 'x': [1, 0]})
    """
    import io

    from .escape import csv_frame

    buf = io.BytesIO()
    used: set[str] = set()
    with pd.ExcelWriter(buf, engine="openpyxl") as writer:
        for m in res.measures:
            frame = pd.concat([res.per_query(s, m).rename(s) for s in res.systems], axis=1)
            frame.index = frame.index.astype(str)
            frame = frame.sort_index().rename_axis("query").reset_index()
            name = str(m).translate(_SHEET_FORBIDDEN)[:31] or "measure"
            base, n = name, 2
            while name in used:
                name = f"{base[:28]}~{n}"
                n += 1
            used.add(name)
            csv_frame(frame).to_excel(writer, sheet_name=name, index=False)
        defs = pd.DataFrame({"measure": [str(m) for m in res.measures],
                             "definition": [res.definition(m) for m in res.measures]})
        defs.loc[len(defs)] = ["options", res.options.describe()]
        csv_frame(defs).to_excel(writer, sheet_name="definitions", index=False)
    return buf.getvalue()
