"""Query metadata: segments, traffic weights and per-system latencies.

An optional file with one row per query describes the queries beyond their judgments:
a segment (head / torso / tail), an intent, a language, how much traffic the query gets,
and how long each system took to answer it. With it, means can be split by segment
(:func:`by_segment`, :func:`compare_by_segment`), weighted by traffic
(:func:`weighted_mean`), and the systems' latencies summarised next to their
effectiveness (:func:`latency_summary`, :func:`efficiency_points`, :func:`pareto_front`).

The file is read by :func:`read_metadata` (:mod:`ireval_core.io.metadata`, which
describes the format: CSV, TSV or Parquet, one row per query, a query column, optional
weight and latency columns, every other column categorical); this module re-exports it
with :class:`QueryMetadata` and the accepted column names. Reading imports no scipy;
the analyses here do.

>>> meta = read_metadata(b"query,segment,traffic,latency_ms_bm25\\n"
...                      b"q1,head,10,12.5\\nq2,tail,1,30\\n", name="meta.csv")
>>> meta.queries.tolist(), meta.columns, meta.weights.tolist()
(['q1', 'q2'], ('segment',), [10.0, 1.0])
>>> meta.latency.to_dict("list")
{'query': ['q1', 'q2'], 'system': ['bm25', 'bm25'], 'latency_ms': [12.5, 30.0]}
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd

from .compare import MIN_QUERIES, aligned_scores, difference_bounds, verdicts
from .errors import invalid_parameter
from .evaluate import Evaluation
from .io.metadata import (
    NO_VALUE,
    QUERY_ALIASES,
    SYSTEM_ALIASES,
    WEIGHT_ALIASES,
    QueryMetadata,
    check_column,
    read_metadata,
    segment_labels,
)
from .measures import Measure, parse_measures
from .stats import ALTERNATIVES, CORRECTIONS, TESTS, PairComparison, compare_measures

__all__ = [
    "LATENCY_DEFINITION", "LATENCY_STATISTICS", "NO_METADATA", "NO_VALUE", "PERCENTILE_METHOD",
    "QUERY_ALIASES", "SYSTEM_ALIASES", "WEIGHT_ALIASES", "QueryMetadata", "WeightedMean",
    "by_segment", "compare_by_segment", "efficiency_points", "front_sentence",
    "latency_summary", "pareto_front", "read_metadata", "weighted_definition", "weighted_mean",
]

NO_METADATA = "(no metadata)"
"""The segment of an evaluated query that the metadata file does not list."""
PERCENTILE_METHOD: Literal["linear"] = "linear"
"""Method of :func:`numpy.percentile` for latency percentiles: NumPy's default, the
linear interpolation between the two nearest ranks (``p`` of ``n`` sorted values sits at
position ``p / 100 · (n − 1)``), Hyndman & Fan's type 7, as Excel's ``PERCENTILE.INC``."""

LATENCY_STATISTICS: tuple[str, ...] = ("p50", "p95", "p99", "mean")
"""The latency columns of :func:`latency_summary` an efficiency chart can use."""

LATENCY_DEFINITION = (
    "per-query latency in ms, over the queries timed for the system; p50 / p95 / p99: "
    "percentiles with NumPy's 'linear' method (position p/100 · (n − 1) of the sorted "
    "latencies, interpolated); qps = 1000 / mean latency: the throughput of one "
    "single-threaded worker answering one query at a time. Under concurrency QPS differs "
    "(queries overlap, queues form), and neither QPS nor the mean tells the tail: "
    "throughput does not capture latency")
"""What the numbers of :func:`latency_summary` mean (also in its ``attrs['definition']``)."""

_MEAN_DEFINITION = "arithmetic mean over the queries of the segment that have a value"


def weighted_definition(n: int | str = "N", column: str | None = None) -> str:
    """The definition of a traffic-weighted mean over ``n`` queries.

    >>> weighted_definition(12, "traffic")
    "traffic-weighted mean: Σ w_q v_q / Σ w_q over the 12 queries with a weight (column 'traffic')"
    """
    text = f"traffic-weighted mean: Σ w_q v_q / Σ w_q over the {n} queries with a weight"
    return text + (f" (column {column!r})" if column else "")


# ----------------------------------------------------------------------------- segments


def _check_metadata(metadata: object, function: str) -> QueryMetadata:
    if not isinstance(metadata, QueryMetadata):
        raise invalid_parameter("metadata", function, "a QueryMetadata (see read_metadata)",
                                metadata, error=TypeError)
    return metadata


def _check_system(res: Evaluation, system: str, name: str, function: str) -> str:
    if system not in res.systems:
        raise invalid_parameter(name, function,
                                f"one of the evaluated runs ({', '.join(res.systems)})", system)
    return system


def _check_measure(res: Evaluation, measure: str | Measure, name: str, function: str) -> Measure:
    """One evaluated measure that is averaged over queries (an arithmetic mean)."""
    m = parse_measures(measure)[0]
    evaluated = [str(x) for x in res.measures]
    if str(m) not in evaluated:
        raise invalid_parameter(name, function,
                                f"one of the evaluated measures ({', '.join(evaluated)})",
                                str(m))
    if m.family.aggregate is not None:
        raise invalid_parameter(name, function, "a measure averaged over queries (not one "
                                f"{m.family.aggregate_rule})", str(m))
    return m


def _segment_of(res: Evaluation, metadata: QueryMetadata, column: str, system: str
                ) -> np.ndarray:
    """Segment label of each evaluated query of ``system`` (:data:`NO_METADATA`,
    :data:`NO_VALUE` included)."""
    values = metadata.values[column]
    labels = np.append(np.where(pd.isna(values), NO_VALUE, values).astype(object), NO_METADATA)
    return labels[metadata.positions(res.query_ids[system].astype(str))]  # -1: NO_METADATA


def _weights_of(res: Evaluation, metadata: QueryMetadata, system: str) -> np.ndarray:
    """Traffic weight of each evaluated query of ``system`` (NaN: none)."""
    if metadata.weights is None:
        return np.full(len(res.query_ids[system]), np.nan)
    return np.append(metadata.weights, np.nan)[metadata.positions(
        res.query_ids[system].astype(str))]


def by_segment(res: Evaluation, metadata: QueryMetadata, column: str, *,
               measures: Sequence[str | Measure] | None = None,
               weighted: bool = False) -> pd.DataFrame:
    """Per (segment, system, measure): how many queries, and their mean.

    Parameters
    ----------
    res:
        The evaluation (its per-query values are split, nothing is re-evaluated).
    metadata:
        The query metadata (:func:`read_metadata`).
    column:
        The categorical column that defines the segments (e.g. ``"segment"``).
    measures:
        Measures of ``res`` averaged over queries (default: all of them; counts summed
        over queries, PNR and GAUC are left out of the default, and refused by name).
    weighted:
        ``False``: the arithmetic mean over the segment's queries that have a value, the
        same as :func:`~ireval_core.evaluate` restricted to them. ``True``: the
        traffic-weighted mean Σ w_q v_q / Σ w_q over the segment's queries that have a
        value and a weight (:func:`weighted_definition`).

    Returns
    -------
    pandas.DataFrame
        Columns ``segment, system, measure, queries, mean, average`` (``average`` says
        ``"mean"`` or ``"traffic-weighted mean"``), plus ``weight`` (Σ w_q) when
        ``weighted``. Segments in order of first appearance in the metadata, then
        :data:`NO_VALUE` (empty cells), then :data:`NO_METADATA` (evaluated queries the
        metadata does not list); every segment of the file is listed, with 0 queries and
        a NaN mean where a run has none. ``attrs['definitions']`` maps each measure to its
        definition, ``attrs['average']`` says how the means average.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 1}})
    >>> run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"x": 1.0}, "q3": {"c": 1.0}}, name="r")
    >>> res = evaluate(qrels, [run], ["P@1"])
    >>> meta = read_metadata(b"query,segment,traffic\\nq1,head,3\\nq2,head,1\\n")
    >>> by_segment(res, meta, "segment")[["segment", "queries", "mean"]].to_dict("list")
    {'segment': ['head', '(no metadata)'], 'queries': [2, 1], 'mean': [0.5, 1.0]}
    >>> by_segment(res, meta, "segment", weighted=True)["mean"].tolist()
    [0.75, nan]
    """
    function = "by_segment"
    metadata = _check_metadata(metadata, function)
    check_column(metadata, column, function)
    if measures is None:
        specs = [m for m in res.measures if m.family.aggregate is None]
    else:
        specs = [_check_measure(res, m, "measures", function) for m in measures]
    if weighted and metadata.weights is None:
        raise invalid_parameter("weighted", function, "False for metadata without a weight "
                                f"column ({', '.join(WEIGHT_ALIASES)})", weighted)
    file_segments = segment_labels(metadata.values[column])
    seg_of = {s: _segment_of(res, metadata, column, s) for s in res.systems}
    seen = set(np.concatenate([*seg_of.values(), np.array([], dtype=object)]))
    segments = [*file_segments, *([NO_METADATA] if NO_METADATA in seen else [])]
    code = {s: i for i, s in enumerate(segments)}
    k = len(segments)
    frames = []
    for system in res.systems:  # a loop over systems and measures; queries are vectorised
        idx = pd.Index(segments).get_indexer(seg_of[system])
        w = _weights_of(res, metadata, system) if weighted else None
        for m in specs:
            v = res.values[(system, str(m))]
            ok = ~np.isnan(v) if w is None else ~np.isnan(v) & ~np.isnan(w)
            weight = np.where(ok, 1.0 if w is None else w, 0.0)
            n = np.bincount(idx[ok], minlength=k)
            total = np.bincount(idx, weights=weight, minlength=k)
            sums = np.bincount(idx, weights=np.where(ok, v, 0.0) * weight, minlength=k)
            with np.errstate(invalid="ignore", divide="ignore"):
                mean = np.where(total > 0, sums / np.where(total > 0, total, 1.0), np.nan)
            frame = pd.DataFrame({"segment": segments, "system": system, "measure": str(m),
                                  "queries": n, "mean": mean,
                                  "average": "traffic-weighted mean" if weighted else "mean"})
            if weighted:
                frame["weight"] = total
            frames.append(frame)
    columns = ["segment", "system", "measure", "queries", "mean", "average"] + (
        ["weight"] if weighted else [])
    out = (pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=columns))
    if frames:  # segment first, then system and measure in evaluation order
        order = np.lexsort((np.arange(len(out)), out["segment"].map(code).to_numpy()))
        out = out.iloc[order].reset_index(drop=True)
    out.attrs["definitions"] = {str(m): res.definition(m) for m in specs}
    out.attrs["average"] = (
        weighted_definition("N", metadata.weight_column) + "; N = the queries column"
        if weighted else _MEAN_DEFINITION)
    return out


class WeightedMean(NamedTuple):
    """A traffic-weighted mean: ``(value, n, total_weight)``, with its :attr:`definition`."""

    value: float
    n: int
    total_weight: float

    @property
    def definition(self) -> str:
        """``traffic-weighted mean: Σ w_q v_q / Σ w_q over the N queries with a weight``."""
        return weighted_definition(self.n)


def weighted_mean(res: Evaluation, metadata: QueryMetadata, system: str,
                  measure: str | Measure) -> WeightedMean:
    """The traffic-weighted mean of one run and measure over the queries with a weight.

    ``Σ w_q v_q / Σ w_q`` over the evaluated queries of ``system`` that have a value and
    a weight in ``metadata`` (queries not listed, or with an empty weight, are left out).
    ``value`` is NaN when no query has a weight > 0.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"b": 1}})
    >>> run = Run.from_dict({"q1": {"a": 1.0}, "q2": {"x": 1.0}}, name="r")
    >>> res = evaluate(qrels, [run], ["P@1"])
    >>> meta = read_metadata(b"query,traffic\\nq1,3\\nq2,1\\n")
    >>> wm = weighted_mean(res, meta, "r", "P@1")
    >>> wm
    WeightedMean(value=0.75, n=2, total_weight=4.0)
    >>> wm.definition
    'traffic-weighted mean: Σ w_q v_q / Σ w_q over the 2 queries with a weight'
    """
    function = "weighted_mean"
    metadata = _check_metadata(metadata, function)
    _check_system(res, system, "system", function)
    m = _check_measure(res, measure, "measure", function)
    if metadata.weights is None:
        raise invalid_parameter("metadata", function, "query metadata with a weight column "
                                f"({', '.join(WEIGHT_ALIASES)})", metadata.source)
    v = res.values[(system, str(m))]
    w = _weights_of(res, metadata, system)
    ok = ~np.isnan(v) & ~np.isnan(w)
    total = float(w[ok].sum())
    value = float(np.dot(w[ok], v[ok]) / total) if total > 0 else math.nan
    return WeightedMean(value, int(ok.sum()), total)


def compare_by_segment(res: Evaluation, metadata: QueryMetadata, column: str, *,
                       measure: str | Measure, a: str, b: str, test: str = "t",
                       alternative: str = "two-sided", correction: str = "holm",
                       alpha: float = 0.05, n_resamples: int = 10_000,
                       seed: int | None = 0) -> pd.DataFrame:
    """Paired test of ``b`` against ``a`` within each segment, with verdicts in words.

    Within a segment the runs are paired on the queries both have a value for (as on the
    Compare page, :func:`ireval_core.compare.aligned_scores`). Segments with at least
    :data:`~ireval_core.compare.MIN_QUERIES` shared queries are tested
    (:func:`ireval_core.stats.compare_measures`) and corrected together: the family of
    the ``correction`` is the tested segments. Smaller segments get their means and
    ``"cannot tell"``, as :func:`ireval_core.compare.verdicts` says for small samples.

    Parameters
    ----------
    res, metadata, column:
        As for :func:`by_segment`.
    measure:
        An evaluated measure averaged over queries.
    a, b:
        The two runs; differences are ``b − a``.
    test:
        One of ``ireval_core.stats.TESTS`` (``"t"``, ``"wilcoxon"``, ``"sign"``,
        ``"randomization"``, ``"bootstrap"``).
    alternative, correction, n_resamples, seed:
        As for :func:`ireval_core.compare.compare_evaluation`.
    alpha:
        The significance level of the verdicts.

    Returns
    -------
    pandas.DataFrame
        One row per segment (order as in :func:`by_segment`; segments without a shared
        query left out): ``segment, queries, mean_a, mean_b, mean_diff, ci_low, ci_high``
        (the 95% interval of the difference, clipped to what the measure allows),
        ``statistic, pvalue, pvalue_corrected, wins, ties, losses, outcome, verdict``.
        ``attrs`` hold the ``definition`` of the measure and a ``note`` on the family.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1} for i in range(7)})
    >>> def run(name, misses):  # P@1 = 0 on the queries in misses, else 1
    ...     return Run.from_dict({f"q{i}": {"a": 0.0 if i in misses else 1.0, "b": 0.5}
    ...                           for i in range(7)}, name=name)
    >>> res = evaluate(qrels, [run("x", {5}), run("y", {2, 3})], ["P@1"])
    >>> meta = read_metadata(b"query,segment\\n" + b"".join(
    ...     f"q{i},{'tail' if i < 2 else 'head'}\\n".encode() for i in range(7)))
    >>> t = compare_by_segment(res, meta, "segment", measure="P@1", a="x", b="y")
    >>> t[["segment", "queries", "mean_diff", "outcome"]].to_dict("list")
    {'segment': ['tail', 'head'], 'queries': [2, 5], 'mean_diff': [0.0, -0.2], \
'outcome': ['cannot tell', 'not significant']}
    """
    function = "compare_by_segment"
    metadata = _check_metadata(metadata, function)
    check_column(metadata, column, function)
    m = _check_measure(res, measure, "measure", function)
    _check_system(res, a, "a", function)
    _check_system(res, b, "b", function)
    if a == b:
        raise invalid_parameter("b", function, "a run other than a", b)
    if test not in TESTS:
        raise invalid_parameter("test", function, "one of " + ", ".join(map(repr, TESTS)), test)
    if alternative not in ALTERNATIVES:
        raise invalid_parameter("alternative", function,
                                "one of " + ", ".join(map(repr, ALTERNATIVES)), alternative)
    if correction not in CORRECTIONS:
        raise invalid_parameter("correction", function,
                                "one of " + ", ".join(map(repr, CORRECTIONS)), correction)
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0.0 < alpha < 1.0:
        raise invalid_parameter("alpha", function, "a float in (0, 1)", alpha)

    common, scores = aligned_scores(res, m, [a, b])
    values = metadata.values[column]
    labels = np.append(np.where(pd.isna(values), NO_VALUE, values).astype(object), NO_METADATA)
    seg = labels[metadata.positions(common.astype(str))]
    present = set(seg)
    order = list(dict.fromkeys(s for s in (*segment_labels(values), NO_VALUE, NO_METADATA)
                               if s in present))
    members = {s: seg == s for s in order}
    tested = {s: {a: scores[a][mask], b: scores[b][mask]} for s, mask in members.items()
              if mask.sum() >= MIN_QUERIES}
    records: dict[str, PairComparison] = {}
    if tested:
        for r in compare_measures(tested, baseline=a, tests=(test,),
                                  alternative=alternative,  # type: ignore[arg-type]
                                  correction=correction, family="all",
                                  n_resamples=n_resamples, rng=seed):
            records[str(r.measure)] = replace(r, measure=str(m))
    rows = []
    bounds = difference_bounds(m)
    for s in order:
        va, vb = scores[a][members[s]], scores[b][members[s]]
        d = vb - va
        rec = records.get(s) or PairComparison(
            str(m), a, b, test, math.nan, math.nan, math.nan, correction, alternative,
            float(va.mean()), float(vb.mean()), float(d.mean()), math.nan, math.nan, math.nan,
            int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()), int(d.size))
        verdict = verdicts([rec], alpha=alpha)[0]
        rows.append({
            "segment": s, "queries": rec.n, "mean_a": rec.mean_a, "mean_b": rec.mean_b,
            "mean_diff": rec.mean_diff,
            "ci_low": rec.ci_low if math.isnan(rec.ci_low) else max(rec.ci_low, bounds[0]),
            "ci_high": rec.ci_high if math.isnan(rec.ci_high) else min(rec.ci_high, bounds[1]),
            "statistic": rec.statistic, "pvalue": rec.pvalue,
            "pvalue_corrected": rec.pvalue_corrected, "wins": rec.wins, "ties": rec.ties,
            "losses": rec.losses, "outcome": verdict.outcome,
            "verdict": f"{column} = {s}: {verdict.text}"})
    columns = ["segment", "queries", "mean_a", "mean_b", "mean_diff", "ci_low", "ci_high",
               "statistic", "pvalue", "pvalue_corrected", "wins", "ties", "losses", "outcome",
               "verdict"]
    out = pd.DataFrame(rows, columns=columns)
    out.attrs["definition"] = res.definition(m)
    out.attrs["note"] = (
        f"{b} − {a} on {m}, paired on the queries both runs have a value for; "
        f"{len(tested)} segment(s) with at least {MIN_QUERIES} shared queries tested "
        f"({test}, {correction} correction over them); smaller segments: cannot tell")
    return out


# ----------------------------------------------------------------------------- efficiency


def latency_summary(metadata: QueryMetadata, *,
                    systems: Sequence[str] | None = None) -> pd.DataFrame:
    """Per system: timed queries, p50 / p95 / p99 / mean latency (ms) and queries per second.

    Percentiles use :func:`numpy.percentile` with ``method="linear"``
    (:data:`PERCENTILE_METHOD`, NumPy's default); ``qps = 1000 / mean`` is the
    throughput of one single-threaded worker (``inf`` for a mean of 0). QPS under
    concurrency differs, and no throughput number tells the tail: that is what the
    percentiles are for (:data:`LATENCY_DEFINITION`, also in ``attrs['definition']``).

    Parameters
    ----------
    metadata:
        Query metadata with latencies.
    systems:
        The systems to summarise, in this order (default: every system of the file, in
        order of first appearance). A system without latencies gets 0 queries and NaN.

    Examples
    --------
    >>> meta = read_metadata(b"query,latency_ms_a\\nq1,10\\nq2,20\\nq3,30\\nq4,40\\nq5,100\\n")
    >>> latency_summary(meta).round(2).to_dict("records")
    [{'system': 'a', 'queries': 5, 'p50': 30.0, 'p95': 88.0, 'p99': 97.6, 'mean': 40.0, \
'qps': 25.0}]
    """
    metadata = _check_metadata(metadata, "latency_summary")
    if isinstance(systems, str):
        raise invalid_parameter("systems", "latency_summary", "a sequence of system names",
                                systems, error=TypeError)
    names = list(metadata.systems if systems is None else systems)
    lat_s, lat_v = metadata.latency_systems, metadata.latency_values
    rows = []
    for s in names:  # a loop over systems; each is one vectorised percentile
        x = lat_v[lat_s == s]
        if x.size:
            p50, p95, p99 = np.percentile(x, [50, 95, 99], method=PERCENTILE_METHOD)
            mean = float(x.mean())
            qps = 1000.0 / mean if mean > 0 else math.inf
        else:
            p50 = p95 = p99 = mean = qps = math.nan
        rows.append({"system": s, "queries": int(x.size), "p50": float(p50),
                     "p95": float(p95), "p99": float(p99), "mean": mean, "qps": qps})
    out = pd.DataFrame(rows, columns=["system", "queries", "p50", "p95", "p99", "mean", "qps"])
    out.attrs["definition"] = LATENCY_DEFINITION
    return out


def efficiency_points(res: Evaluation, summary: pd.DataFrame, measure: str | Measure, *,
                      latency: str = "p95") -> pd.DataFrame:
    """Effectiveness and latency of each run that has both, for :func:`pareto_front`.

    Parameters
    ----------
    res:
        The evaluation; effectiveness is each run's mean of ``measure`` (its own queries,
        as :meth:`~ireval_core.evaluate.Evaluation.mean`).
    summary:
        :func:`latency_summary` of the runs.
    measure:
        An evaluated measure.
    latency:
        The latency statistic: one of :data:`LATENCY_STATISTICS`.

    Returns
    -------
    pandas.DataFrame
        Columns ``system, effectiveness, latency, queries`` (queries averaged by the mean)
        ``, timed`` (queries timed), in evaluation order, only runs with both numbers.
        ``attrs``: ``measure``, ``latency`` (the statistic), ``definition`` (of the
        measure), ``missing`` (runs without latencies, systems with latencies but not
        evaluated).

    Examples
    --------
    >>> from ireval_core import Qrels, Run, evaluate
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}})
    >>> runs = [Run.from_dict({"q1": {"a": 1.0}}, name="x"),
    ...         Run.from_dict({"q1": {"b": 1.0}}, name="y")]
    >>> res = evaluate(qrels, runs, ["P@1"])
    >>> meta = read_metadata(b"query,latency_ms_x,latency_ms_z\\nq1,12,5\\n")
    >>> pts = efficiency_points(res, latency_summary(meta), "P@1", latency="mean")
    >>> pts.to_dict("list"), pts.attrs["missing"]
    ({'system': ['x'], 'effectiveness': [1.0], 'latency': [12.0], 'queries': [1], \
'timed': [1]}, {'no latency': ['y'], 'not evaluated': ['z']})
    """
    function = "efficiency_points"
    if latency not in LATENCY_STATISTICS:
        raise invalid_parameter("latency", function,
                                "one of " + ", ".join(map(repr, LATENCY_STATISTICS)), latency)
    need = {"system", "queries", latency}
    if not isinstance(summary, pd.DataFrame) or not need <= set(summary.columns):
        raise invalid_parameter("summary", function, "a latency_summary table", summary,
                                error=TypeError)
    m = parse_measures(measure)[0]
    if str(m) not in [str(x) for x in res.measures]:
        raise invalid_parameter("measure", function, "one of the evaluated measures ("
                                + ", ".join(str(x) for x in res.measures) + ")", str(m))
    timed = summary[(summary["queries"] > 0) & summary[latency].notna()].set_index("system")
    both = [s for s in res.systems if s in timed.index]
    out = pd.DataFrame({
        "system": both,
        "effectiveness": [res.mean(s, m) for s in both],
        "latency": [float(timed.loc[s, latency]) for s in both],
        "queries": [int(res.n_averaged.get((s, str(m)), 0)) for s in both],
        "timed": [int(timed.loc[s, "queries"]) for s in both],
    })
    out.attrs.update(measure=str(m), latency=latency, definition=res.definition(m),
                     missing={"no latency": [s for s in res.systems if s not in timed.index],
                              "not evaluated": [s for s in summary["system"]
                                                if s not in res.systems]})
    return out


def pareto_front(points: pd.DataFrame) -> pd.DataFrame:
    """The systems no other system beats on both effectiveness and latency.

    A system is dominated when another one is at least as effective **and** at least as
    fast, and strictly better on one of the two (higher effectiveness, lower latency).
    The front is every system not dominated; ties (the same point twice) are both kept.
    Rows with a NaN are left out.

    Parameters
    ----------
    points:
        Columns ``system, effectiveness, latency`` (e.g. :func:`efficiency_points`).

    Returns
    -------
    pandas.DataFrame
        The front's rows (all columns of ``points``), fastest first (then most effective).

    Examples
    --------
    >>> pts = pd.DataFrame({"system": ["fast", "good", "worse", "twin"],
    ...                     "effectiveness": [0.5, 0.8, 0.4, 0.8],
    ...                     "latency": [10.0, 90.0, 30.0, 90.0]})
    >>> pareto_front(pts)["system"].tolist()
    ['fast', 'good', 'twin']
    """
    need = ["system", "effectiveness", "latency"]
    if not isinstance(points, pd.DataFrame) or not set(need) <= set(points.columns):
        raise invalid_parameter("points", "pareto_front",
                                "a DataFrame with columns system, effectiveness, latency",
                                points if not isinstance(points, pd.DataFrame)
                                else list(points.columns), error=TypeError)
    e = points["effectiveness"].to_numpy(dtype=np.float64)
    t = points["latency"].to_numpy(dtype=np.float64)
    ok = ~(np.isnan(e) | np.isnan(t))
    e_, t_ = e[ok], t[ok]
    # dominated[i]: some j with e_j >= e_i, t_j <= t_i, and one of them strict
    no_worse = (e_[None, :] >= e_[:, None]) & (t_[None, :] <= t_[:, None])
    better = (e_[None, :] > e_[:, None]) | (t_[None, :] < t_[:, None])
    dominated = (no_worse & better).any(axis=1)
    front = points[ok][~dominated]
    order = np.lexsort((-front["effectiveness"].to_numpy(dtype=np.float64),
                        front["latency"].to_numpy(dtype=np.float64)))
    out = front.iloc[order].reset_index(drop=True)
    out.attrs = dict(points.attrs)
    return out


def front_sentence(points: pd.DataFrame, front: pd.DataFrame, *,
                   measure: str = "effectiveness", latency: str = "latency") -> str:
    """One plain-text sentence on the front: who is on it, and who beats each other run.

    Names are plain text (escape them for the output format).

    >>> pts = pd.DataFrame({"system": ["fast", "good", "worse"],
    ...                     "effectiveness": [0.5, 0.8, 0.4], "latency": [10.0, 90.0, 30.0]})
    >>> front_sentence(pts, pareto_front(pts), measure="nDCG@10", latency="p95")
    'On the Pareto front of nDCG@10 vs p95 latency: fast, good (no other run is at least as \
good on both and better on one). Dominated: worse (by fast).'
    """
    on = front["system"].tolist()
    if not on:
        return "No run has both an effectiveness and a latency: there is no front to draw."
    text = (f"On the Pareto front of {measure} vs {latency} latency: {', '.join(on)} (no other "
            "run is at least as good on both and better on one).")
    e = points["effectiveness"].to_numpy(dtype=np.float64)
    t = points["latency"].to_numpy(dtype=np.float64)
    names = points["system"].tolist()
    off = []
    for i, s in enumerate(names):  # a loop over systems, not queries
        if s in on or math.isnan(e[i]) or math.isnan(t[i]):
            continue
        by = [names[j] for j in range(len(names)) if names[j] in on and e[j] >= e[i]
              and t[j] <= t[i] and (e[j] > e[i] or t[j] < t[i])]
        off.append(f"{s} (by {', '.join(by)})")
    return text + (f" Dominated: {'; '.join(off)}." if off else "")
