"""Evaluate several runs against qrels: per-query values and aggregates.

>>> from ireval_core import Qrels, Run, evaluate
>>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0, "d3": 2}})
>>> run = Run.from_dict({"q1": {"d1": 0.9, "d2": 0.8, "d3": 0.1}}, name="bm25")
>>> res = evaluate(qrels, [run], ["P@2", "AP"])
>>> round(res.mean("bm25", "AP"), 4)
0.8333
>>> res = evaluate(qrels, [run], ["AP"], options=EvalOptions(rel_level=2))
>>> round(res.mean("bm25", "AP"), 4)
0.3333
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .data import JoinCache, Qrels, Ranked, Run, join
from .errors import invalid_parameter
from .measures import Measure, parse_measures
from .options import EvalOptions
from .progress import stage

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["EvalOptions", "Evaluation", "evaluate"]


@dataclass(frozen=True, eq=False)
class Evaluation:
    """Per-query values and aggregates for several systems and measures."""

    systems: tuple[str, ...]
    measures: tuple[Measure, ...]
    options: EvalOptions
    query_ids: dict[str, np.ndarray]
    values: dict[tuple[str, str], np.ndarray]
    aggregates: dict[tuple[str, str], float]
    n_averaged: dict[tuple[str, str], int] = field(default_factory=dict)

    def per_query(self, system: str, measure: str | Measure) -> pd.Series:
        """Per-query values of one system and measure, indexed by query id."""
        import pandas as pd

        key = (system, str(measure if isinstance(measure, Measure) else
                           parse_measures(measure)[0]))
        return pd.Series(self.values[key], index=pd.Index(self.query_ids[system], name="query"),
                         name=key[1])

    def mean(self, system: str, measure: str | Measure) -> float:
        """The aggregate of one system and measure (see :meth:`definition` for the rule)."""
        m = measure if isinstance(measure, Measure) else parse_measures(measure)[0]
        return self.aggregates[(system, str(m))]

    def definition(self, measure: str | Measure) -> str:
        """One-line definition of a measure under these options."""
        m = measure if isinstance(measure, Measure) else parse_measures(measure)[0]
        return m.definition(self.options)

    def averaged(self, system: str, measure: str | Measure) -> np.ndarray:
        """Ids of the queries the aggregate of ``system`` on ``measure`` is over (NaN left out)."""
        m = str(measure if isinstance(measure, Measure) else parse_measures(measure)[0])
        return self.query_ids[system][~np.isnan(self.values[(system, m)])]

    def tidy(self) -> pd.DataFrame:
        """Long table: system, query, measure, value (one row per value)."""
        import pandas as pd

        frames = []
        for (system, measure), v in self.values.items():
            frames.append(pd.DataFrame({"system": system, "query": self.query_ids[system],
                                        "measure": measure, "value": v}))
        if not frames:
            return pd.DataFrame(columns=["system", "query", "measure", "value"])
        return pd.concat(frames, ignore_index=True)

    def table(self) -> pd.DataFrame:
        """Aggregates as a systems x measures table (measure order as requested)."""
        import pandas as pd

        cols = [str(m) for m in self.measures]
        data = {c: [self.aggregates[(s, c)] for s in self.systems] for c in cols}
        return pd.DataFrame(data, index=pd.Index(self.systems, name="system"))

    def intervals(self, *, confidence_level: float = 0.95) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Student-t confidence interval of each mean, as (low, high) systems x measures tables.

        Over the per-query values that are counted (NaN left out); clipped to the
        measure's range (a t-interval of a mean near 1 can pass 1). NaN for fewer than
        two queries and for measures not aggregated by a mean (sums, ratios of sums).
        """
        import pandas as pd

        from .stats import mean_ci  # scipy: imported only when intervals are asked for

        cols = [str(m) for m in self.measures]
        low = pd.DataFrame(np.nan, index=pd.Index(self.systems, name="system"), columns=cols)
        high = low.copy()
        for m in self.measures:
            fam = m.family
            if fam.aggregate is not None:
                continue
            lo_b = -np.inf if fam.bounds[0] is None else fam.bounds[0]
            hi_b = np.inf if fam.bounds[1] is None else fam.bounds[1]
            for s in self.systems:
                v = self.values[(s, str(m))]
                v = v[~np.isnan(v)]
                if v.size >= 2:
                    ci = mean_ci(v, confidence_level=confidence_level, method="t")
                    low.loc[s, str(m)] = min(max(ci.low, lo_b), hi_b)
                    high.loc[s, str(m)] = min(max(ci.high, lo_b), hi_b)
        return low, high

    def paired(self, measure: str | Measure, a: str, b: str) -> tuple[np.ndarray, np.ndarray,
                                                                        np.ndarray]:
        """Values of two systems on their common queries: (query_ids, values_a, values_b)."""
        m = str(measure if isinstance(measure, Measure) else parse_measures(measure)[0])
        qa, qb = self.query_ids[a], self.query_ids[b]
        common, ia, ib = np.intersect1d(qa.astype(str), qb.astype(str), return_indices=True)
        va, vb = self.values[(a, m)][ia], self.values[(b, m)][ib]
        ok = ~(np.isnan(va) | np.isnan(vb))
        return common[ok].astype(object), va[ok], vb[ok]


def _aggregate(r: Ranked, m: Measure, o: EvalOptions, values: np.ndarray
               ) -> tuple[float, int]:
    fam = m.family
    n = int(np.count_nonzero(~np.isnan(values)))
    if fam.aggregate is not None:
        return fam.aggregate(r, m, o, values), n
    return (float(np.nanmean(values)) if n else float("nan")), n


def evaluate(qrels: Qrels, runs: Run | Iterable[Run], measures: str | Sequence[str | Measure], *,
             options: EvalOptions | None = None, joins: JoinCache | None = None
             ) -> Evaluation:
    """Compute ``measures`` for every run; vectorised over all queries of each run.

    Parameters
    ----------
    qrels:
        Relevance judgments.
    runs:
        One run or several (names must be distinct).
    measures:
        Measure specs or their text (``"nDCG@10"``, ``"P(rel=2)@5"``, ``"map"``, ...).
    options:
        Which queries are averaged, the relevance level, depth cut, judged-only
        rankings and the IDCG = 0 policy (:class:`~ireval_core.options.EvalOptions`;
        default: trec_eval's defaults).
    joins:
        Where joined runs are kept for reuse (:class:`~ireval_core.data.JoinCache`):
        evaluating other measures, or under another relevance level, then skips the
        join. ``None`` joins afresh.

    Returns
    -------
    Evaluation
        Per-query values (NaN = the query is not counted for that measure) and
        aggregates, with the averaging rule of each measure in its definition. Its
        arrays are read-only: an evaluation can be shared (cached) safely.
    """
    options = EvalOptions() if options is None else options
    if not isinstance(options, EvalOptions):
        raise invalid_parameter("options", "evaluate", "an EvalOptions", options,
                                error=TypeError)
    if isinstance(runs, Run):
        runs = [runs]
    runs = list(runs)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise invalid_parameter("runs", "evaluate", "runs with distinct names", names)
    specs = parse_measures(list(measures) if not isinstance(measures, str) else measures)
    values: dict[tuple[str, str], np.ndarray] = {}
    aggregates: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    query_ids: dict[str, np.ndarray] = {}
    for run in runs:
        stage(f"joining {run.name} with the qrels")
        ranked = (joins.ranked(qrels, run, options) if joins is not None
                  else join(qrels, run, options=options))
        stage(f"evaluating {run.name}")
        query_ids[run.name] = _frozen(ranked.query_ids)
        for m in specs:
            v = np.asarray(m.family.kernel(ranked, m, options), dtype=np.float64)
            values[(run.name, str(m))] = _frozen(v)
            aggregates[(run.name, str(m))], counts[(run.name, str(m))] = _aggregate(
                ranked, m, options, v)
    return Evaluation(tuple(names), tuple(specs), options, query_ids, values, aggregates, counts)


def _frozen(a: np.ndarray) -> np.ndarray:
    """``a`` made read-only (a copy if it is a view of another array)."""
    if a.base is not None:
        a = a.copy()
    a.setflags(write=False)
    return a
