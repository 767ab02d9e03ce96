"""The month's labeling task: sample the month's queries from a query log, list each
system's top K for them, add the anchor items, and write it all as a labeling file.

A **query log** (:func:`read_query_log`) has one row per distinct query: ``query`` (the
id the runs use), ``count`` (its searches this month, a number > 0) and optionally
``segment``. It is the sampling frame: the population is its N queries, or its
C = Σ count searches.

:func:`sample_queries` draws n queries by one of three designs and gives each sampled
query its **inclusion probability** π (the chance the design had of taking it):

* ``"srs"``: simple random sampling without replacement, π = n / N;
* ``"stratified"``: the log is cut into strata (frequency bands, or the log's
  segments), each stratum gets n_h queries (the allocation, stated below) and is
  sampled by SRS, π = n_h / N_h;
* ``"pps"``: probability proportional to size (the count), without replacement:
  π_i = min(1, λ·count_i) with λ such that Σ π_i = n (queries that would get π ≥ 1 are
  taken for sure), drawn by randomised systematic sampling (the queries in a random
  order, one random start u in [0, 1), the queries whose cumulated π interval holds
  u, u + 1, ..., u + n − 1), which gives every query exactly its π and a sample of
  exactly n queries.

Every design gives exactly n queries and Σ π_i over the log = n.

**Weights.** The trend (:func:`~ireval_core.labels.trend.trend`) averages per-query
DCG with the labeling file's ``weight`` column: Σ w·DCG / Σ w. The task writes
w = t_i / π_i, the Horvitz–Thompson expansion of what query i stands for: ``target=
"traffic"`` (default) counts searches, t_i = count_i, so the trend estimates the mean
DCG a search got this month; ``target="queries"`` counts distinct queries, t_i = 1, so
it estimates the mean over the log's queries. Σ_s w·y is the HT estimator of the
population total of t·y (unbiased for every design), Σ_s w the HT estimator of Σ t;
their ratio (what the trend computes, the Hájek estimator) equals the HT mean exactly
when Σ_s w is the same for every sample: SRS and stratified with ``target="queries"``
(Σ w = N), PPS with ``target="traffic"`` (Σ w = C: the self-weighting design). In the
other cases it is the ratio estimator, consistent, and nearly unbiased when Σ_s w
varies little between samples; it varies most for SRS with ``target="traffic"`` on a
skewed log (a sample that misses the head queries), where a few dozen queries can leave
the ratio several percent off: sample by PPS or by frequency band for that target.
(With replacement, the Hansen–Hurwitz estimator would divide by n·p_i instead; this
module draws without replacement only.)

**Strata.** ``strata="frequency"`` cuts the log by count into ``bands`` (count
thresholds, highest first: ``(1000, 100)`` makes ``head`` count ≥ 1000, ``torso``
100 ≤ count < 1000, ``tail`` the rest); by default three bands that each carry about a
third of the searches (a count's band is that of the third its first search falls in,
queries sorted by count, highest first; equal counts share a band). ``strata=
"segment"`` uses the log's segments. **Allocation** of n to strata: proportional to
the stratum's searches (``"traffic"``, default), to its number of queries
(``"proportional"``) or equal; a stratum gets at most N_h queries (a stratum that
would get more is taken whole and the rest is re-allocated) and at least one; the
shares are rounded by largest remainder (ties: the earlier stratum).

:func:`month_task` turns a sample and the runs into the task: one row per shown result
(each system's top ``k`` for each sampled query, positions 1..k in the run's order) in
the layout of a labeling file with ``weight`` (and ``segment``), blank ``rater`` and
``label``; filled, it is the month's round file that
:func:`~ireval_core.labels.read_judgments` reads. Anchor items go to their own table in
the layout of an anchor file (:func:`~ireval_core.labels.read_anchors`): read as a
labeling file they would count as shown results of some system. ``people_share`` marks
a random share of the shown results for people, as
:func:`~ireval_core.labels.ppi.people_sample` does (each distinct (query, document)
independently, probability = the share): columns ``for_people`` and ``inclusion``,
which :func:`~ireval_core.labels.ppi.read_inclusion` reads from the same file.

>>> log = read_query_log(("log.csv", b"query,count\\nq1,50\\nq2,30\\nq3,20\\n"))
>>> s = sample_queries(log, 2, design="pps", target="queries", seed=1)
>>> s.frame[["query", "inclusion", "weight"]].round(3).values.tolist()
[['q1', 1.0, 1.0], ['q2', 0.6, 1.667]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from ..data import Run
from ..errors import invalid_parameter
from ..io import SourceLike, read_table
from ..io.columns import LABEL_ALIASES
from ..io.guard import clean_errors
from ..params import OPEN_UNIT, POSITIVE_INT, SEED, InstanceOf, Options, check
from .planning import export_batch

__all__ = ["ALLOCATIONS", "DESIGNS", "QUERY_LOG_ALIASES", "TASK_COLUMNS", "Draw", "MonthTask",
           "QueryLog", "QuerySample", "allocate", "draw_queries", "fill_task", "month_task",
           "pps_inclusion", "read_query_log", "round_file", "sample_queries",
           "systematic_pps"]

Design = Literal["srs", "stratified", "pps"]
Strata = Literal["frequency", "segment"]
Allocation = Literal["traffic", "proportional", "equal"]
Target = Literal["traffic", "queries"]
DESIGNS = ("srs", "stratified", "pps")
"""The sample designs of :func:`sample_queries`."""
ALLOCATIONS = ("traffic", "proportional", "equal")
"""How :func:`sample_queries` shares n between strata."""

QUERY_LOG_ALIASES: dict[str, tuple[str, ...]] = {
    "query": LABEL_ALIASES["query"],
    "count": ("count", "frequency", "freq", "searches", "impressions", "volume", "n"),
    "segment": LABEL_ALIASES["segment"],
}
"""Accepted column names of a query log, per column (case-insensitive)."""

TASK_COLUMNS = ("round", "system", "query", "doc", "position", "score", "segment", "weight",
                "rater", "label", "for_people", "inclusion")
"""Columns of :attr:`MonthTask.items` (``segment`` when the sample has one,
``for_people`` and ``inclusion`` with a people's share)."""

BAND_NAMES = ("head", "torso", "tail")


# ----------------------------------------------------------------------------- the log


@dataclass(frozen=True, eq=False)
class QueryLog:
    """A month's query log: distinct queries (sorted), their counts and segments."""

    queries: np.ndarray
    counts: np.ndarray
    segments: np.ndarray | None
    source: str = "log"

    @property
    def n(self) -> int:
        return len(self.queries)


@clean_errors
def read_query_log(source: SourceLike) -> QueryLog:
    """Read a query log (CSV, TSV or Parquet; gzip detected): columns ``query`` and
    ``count``, optionally ``segment`` (aliases: :data:`QUERY_LOG_ALIASES`).

    Raises :class:`~ireval_core.errors.FormatError` naming the file, the line and what
    was expected: a missing column, an empty query, a count that is not a number > 0,
    an empty segment in a segment column, a query listed twice (both lines).
    """
    t = read_table(source, QUERY_LOG_ALIASES, required=("query", "count"), kind="query log",
                   numeric=("count",))
    if t.n_rows == 0:
        raise t.error(None, "expected at least one query below the header")
    queries = _texts(t, "query")
    counts = t.numbers("count", "count")
    bad = ~(np.isfinite(counts) & (counts > 0))
    if bad.any():
        row = int(np.argmax(bad))
        got = "an empty cell" if np.isnan(counts[row]) else f"{counts[row]:g}"
        raise t.error(row, f"expected a count > 0 (the query's searches) in column "
                      f"{t.header_name('count')!r}, got {got}")
    segments = _texts(t, "segment") if "segment" in t.columns else None
    order = np.argsort(queries, kind="stable")
    same = np.flatnonzero(queries[order][1:] == queries[order][:-1])
    if len(same):
        first, second = sorted((int(order[same[0]]), int(order[same[0] + 1])))
        raise t.error(second, f"query {queries[second]!r} is listed twice (first at "
                      f"{t.location(first)}); expected one row per query")
    return QueryLog(queries[order], counts[order],
                    None if segments is None else segments[order], t.name)


def _texts(t: object, key: str) -> np.ndarray:
    """Column ``key`` as stripped text; an empty cell is an error at its line."""
    col = t.text(key).cast(pa.string())  # type: ignore[attr-defined]
    values = np.asarray(col.to_numpy(zero_copy_only=False), dtype=object)
    out = np.array(["" if v is None else str(v).strip() for v in values], dtype=object)
    empty = out == ""
    if empty.any():
        raise t.error(int(np.argmax(empty)),  # type: ignore[attr-defined]
                      f"expected a {key} in column {t.header_name(key)!r}, "  # type: ignore[attr-defined]
                      "got an empty cell")
    return out


# ----------------------------------------------------------------------------- the sample


@dataclass(frozen=True, eq=False)
class QuerySample:
    """The sampled queries and their design.

    ``frame``: one row per sampled query, ``query, count, segment, stratum, inclusion``
    (π), ``design_weight`` (1/π) and ``weight`` (t/π, the trend's weight; see the module
    docstring). ``strata``: one row per stratum, ``stratum, queries`` (N_h), ``searches``
    (C_h), ``sampled`` (n_h). ``design``: the design in words.
    """

    frame: pd.DataFrame
    strata: pd.DataFrame
    design: str
    target: str
    n_log: int
    has_segment: bool = False
    inclusion_all: np.ndarray = field(default_factory=lambda: np.zeros(0))
    """π of every query of the log (in the log's order), for checks."""
    source: str = "log"
    """The query log's name, for messages."""


def sample_queries(log: QueryLog, n: int, *, design: Design = "srs",
                   strata: Strata = "frequency", bands: Sequence[float] | None = None,
                   allocation: Allocation = "traffic", target: Target = "traffic",
                   seed: int = 0) -> QuerySample:
    """Draw ``n`` queries of ``log`` by ``design`` (see the module docstring for the
    designs, strata, allocation, and the weights ``target`` gives).

    The draw is seeded and does not depend on the log's row order. Raises
    ``ValueError`` when ``n`` exceeds the log's queries, or (stratified) the number of
    strata exceeds ``n``, or ``strata="segment"`` with a log without segments.
    """
    fn = "sample_queries"
    check(log, "log", fn, InstanceOf(QueryLog, "a QueryLog (read_query_log)"))
    n = check(n, "n", fn, POSITIVE_INT)
    check(design, "design", fn, Options(DESIGNS))
    check(strata, "strata", fn, Options(("frequency", "segment")))
    check(allocation, "allocation", fn, Options(ALLOCATIONS))
    check(target, "target", fn, Options(("traffic", "queries")))
    check(seed, "seed", fn, SEED)
    if n > log.n:
        raise invalid_parameter("n", fn, f"at most the log's {log.n} queries", n)
    if bands is not None and not all(
            isinstance(b, int | float) and math.isfinite(b) and b > 0 for b in bands):
        raise invalid_parameter("bands", fn, "count thresholds (numbers > 0)", bands)
    d = draw_queries(log, n, np.random.default_rng(seed), design=design, strata=strata,
                     bands=bands, allocation=allocation)
    pi, chosen, stratum = d.inclusion, d.chosen, d.stratum
    t = log.counts if target == "traffic" else np.ones(log.n)
    segment = log.segments if log.segments is not None else (
        stratum if design == "stratified" else None)
    columns: dict[str, np.ndarray] = {"query": log.queries[chosen],
                                      "count": log.counts[chosen]}
    if segment is not None:
        columns["segment"] = segment[chosen]
    columns.update(stratum=stratum[chosen], inclusion=pi[chosen],
                   design_weight=1.0 / pi[chosen], weight=t[chosen] / pi[chosen])
    of = pd.Categorical(stratum, categories=d.names).codes.astype(np.int64)
    m = len(d.names)
    table = pd.DataFrame({
        "stratum": d.names, "queries": np.bincount(of, minlength=m),
        "searches": np.bincount(of, weights=log.counts, minlength=m),
        "sampled": np.bincount(of[chosen], minlength=m)})
    words = d.words + ("; weights: searches each query stands for (count/π)"
                       if target == "traffic" else
                       "; weights: queries each query stands for (1/π)")
    return QuerySample(pd.DataFrame(columns), table, words, target, log.n,
                       segment is not None, pi, log.source)


@dataclass(frozen=True, eq=False)
class Draw:
    """One draw of a design over a log: π of every query of the log (``inclusion``),
    the sampled rows (``chosen``, sorted), every query's stratum and the strata in
    order, and the design in words."""

    inclusion: np.ndarray
    chosen: np.ndarray
    stratum: np.ndarray
    names: list[str]
    words: str


def draw_queries(log: QueryLog, n: int, rng: np.random.Generator, *,
                 design: Design = "srs", strata: Strata = "frequency",
                 bands: Sequence[float] | None = None,
                 allocation: Allocation = "traffic") -> Draw:
    """The draw behind :func:`sample_queries` (same arguments, ``n`` already checked),
    without the tables: what a simulation of the design repeats."""
    if design == "stratified":
        stratum, names = _strata(log, strata, bands)
    else:
        stratum, names = np.full(log.n, "all", dtype=object), ["all"]
    if design == "srs":
        pi = np.full(log.n, n / log.n)
        chosen = np.sort(rng.choice(log.n, n, replace=False))
        words = f"simple random sample of {n} of {log.n} queries"
    elif design == "pps":
        pi = pps_inclusion(log.counts, n)
        chosen = systematic_pps(pi, rng)
        sure = int(np.count_nonzero(pi >= 1.0))
        words = (f"{n} of {log.n} queries with probability proportional to their searches "
                 f"(randomised systematic, without replacement; {sure} taken for sure)")
    else:
        pi, chosen, words = _stratified(log, stratum, names, n, allocation, rng,
                                        "frequency band" if strata == "frequency" else "segment")
    return Draw(pi, chosen, stratum, names, words)


def pps_inclusion(sizes: np.ndarray, n: int) -> np.ndarray:
    """π_i = min(1, λ·size_i) with Σ π_i = n: the sizes that would get π ≥ 1 are
    certainties (π = 1) and λ is found again for the rest, until none is left over.

    >>> pps_inclusion(np.array([50.0, 30, 20]), 2).round(3).tolist()
    [1.0, 0.6, 0.4]
    """
    sizes = np.asarray(sizes, dtype=np.float64)
    pi = np.zeros(len(sizes))
    sure = np.zeros(len(sizes), dtype=bool)
    while True:
        left = n - int(sure.sum())
        rest = ~sure
        pi[rest] = left * sizes[rest] / sizes[rest].sum()
        over = rest & (pi >= 1.0)
        if not over.any():
            break
        sure |= over
        pi[sure] = 1.0
    return pi


def systematic_pps(pi: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Randomised systematic sampling: the units in a random order, a start u in
    [0, 1), the units whose cumulated-π interval holds u, u + 1, ...; sorted indices.
    Each unit is taken with probability exactly π_i (Σ π_i must be an integer)."""
    n = int(round(pi.sum()))
    order = rng.permutation(len(pi))
    upper = np.cumsum(pi[order])
    upper[-1] = n  # rounding: the last interval ends exactly at n
    points = rng.random() + np.arange(n)
    at = np.searchsorted(upper, points, side="right")
    return np.sort(order[np.minimum(at, len(pi) - 1)])


def _strata(log: QueryLog, strata: Strata, bands: Sequence[float] | None
            ) -> tuple[np.ndarray, list[str]]:
    """The stratum of every query of the log, and the strata in order (bands highest
    first, segments sorted; empty bands left out)."""
    if strata == "segment":
        if log.segments is None:
            raise ValueError(f"{log.source}: stratified by segment needs a segment column "
                             f"(accepted names: {', '.join(QUERY_LOG_ALIASES['segment'])})")
        return log.segments, sorted(set(log.segments.tolist()))
    if bands is None:  # thirds of the searches
        order = np.argsort(-log.counts, kind="stable")
        before = np.cumsum(log.counts[order]) - log.counts[order]
        third = np.minimum((3 * before / log.counts.sum()).astype(np.int64), 2)
        values, first = np.unique(-log.counts[order], return_index=True)  # highest first
        band_of_value = third[first]
        band = np.empty(log.n, dtype=np.int64)
        band[order] = band_of_value[np.searchsorted(values, -log.counts[order])]
        names: tuple[str, ...] = BAND_NAMES
    else:
        cuts = sorted((float(b) for b in bands), reverse=True)
        band = np.sum(log.counts[:, None] < np.asarray(cuts)[None, :], axis=1)
        names = BAND_NAMES if len(cuts) == 2 else tuple(
            f"band {i + 1}" for i in range(len(cuts) + 1))
    return (np.array(names, dtype=object)[band], [names[b] for b in np.unique(band)])


def allocate(n: int, sizes: np.ndarray, shares: np.ndarray) -> np.ndarray:
    """n_h: n shared by ``shares``, at most ``sizes`` (a stratum over it is taken whole
    and the rest shared again), rounded by largest remainder (ties: the earlier
    stratum), then at least one each (taken from the largest allocations).

    >>> allocate(10, np.array([2, 50, 50]), np.array([0.6, 0.3, 0.1])).tolist()
    [2, 6, 2]
    """
    sizes = np.asarray(sizes, dtype=np.int64)
    shares = np.asarray(shares, dtype=np.float64)
    whole = np.zeros(len(sizes), dtype=bool)
    while True:
        left = n - sizes[whole].sum()
        ideal = np.where(whole, sizes, left * shares / shares[~whole].sum())
        over = ~whole & (ideal > sizes)
        if not over.any():
            break
        whole |= over
    alloc = np.floor(ideal + 1e-9).astype(np.int64)
    rest = ideal - alloc
    for i in np.argsort(-rest, kind="stable")[:n - int(alloc.sum())]:
        alloc[i] += 1
    for i in np.flatnonzero(alloc == 0):
        donor = int(np.argmax(alloc))
        alloc[donor] -= 1
        alloc[i] += 1
    return alloc


def _stratified(log: QueryLog, stratum: np.ndarray, names: list[str], n: int,
                allocation: Allocation, rng: np.random.Generator, by: str
                ) -> tuple[np.ndarray, np.ndarray, str]:
    if len(names) > n:
        raise ValueError(f"sample_queries: {len(names)} strata need n >= {len(names)} "
                         f"(one query each), got n = {n}")
    members = [np.flatnonzero(stratum == s) for s in names]
    sizes = np.array([len(m) for m in members])
    shares = {"traffic": np.array([log.counts[m].sum() for m in members]),
              "proportional": sizes.astype(np.float64),
              "equal": np.ones(len(names))}[allocation]
    alloc = allocate(n, sizes, shares)
    pi = np.zeros(log.n)
    chosen = []
    for m, n_h in zip(members, alloc, strict=True):
        pi[m] = n_h / len(m)
        chosen.append(rng.choice(m, int(n_h), replace=False))
    rule = {"traffic": "proportional to their searches",
            "proportional": "proportional to their queries", "equal": "equal"}[allocation]
    words = (f"{n} of {log.n} queries stratified by {by} ({len(names)} strata, allocation "
             f"{rule}, at least one each), simple random within each")
    return pi, np.sort(np.concatenate(chosen)), words


# ----------------------------------------------------------------------------- the task


@dataclass(frozen=True, eq=False)
class MonthTask:
    """A month's labeling task.

    ``items``: one row per shown result (:data:`TASK_COLUMNS`), blank ``rater`` and
    ``label``: the round file once filled. ``anchors``: the anchor items in the layout
    of an anchor file (``round, query, doc, rater, label``), or ``None``. ``units``: one
    row per distinct (query, document) to judge, ``round, query, doc, systems`` (who
    showed it, comma-separated), ``anchor`` and ``for_people``. ``missing``: per
    system, the sampled queries its run does not answer (no row of that system: the
    trend leaves the query out of its mean). ``sample``: the design.
    """

    round: str
    k: int
    items: pd.DataFrame
    anchors: pd.DataFrame | None
    units: pd.DataFrame
    missing: dict[str, list[str]]
    sample: QuerySample
    people_share: float | None = None

    def to_csv(self) -> bytes:
        """The items as CSV (formula-like cells neutralised)."""
        return export_batch(self.items, "csv")

    def anchors_csv(self) -> bytes | None:
        """The anchor items as CSV, or ``None`` without anchors."""
        return None if self.anchors is None else export_batch(self.anchors, "csv")

    def summary(self) -> str:
        """One line: the design, queries per stratum, items and labels to give."""
        per = ", ".join(f"{r.stratum} {r.sampled}/{r.queries}"
                        for r in self.sample.strata.itertuples())
        n_anchor = 0 if self.anchors is None else len(self.anchors)
        shown = int((~self.units["anchor"] | self.units["shown"]).sum())
        text = (f"round {self.round}: {self.sample.design}; queries sampled per stratum: "
                f"{per}; {self.items['system'].nunique()} systems, top {self.k}: "
                f"{len(self.items)} shown results, {shown} distinct to label"
                f" + {n_anchor} anchor items; expected labels per rater: {shown + n_anchor}")
        if self.people_share is not None:
            text += (f"; for people: {int(self.units['for_people'].sum())} results "
                     f"(share {self.people_share:g})")
        gaps = [f"{s}: {len(q)}" for s, q in self.missing.items() if q]
        if gaps:
            text += f"; sampled queries a run does not answer: {', '.join(gaps)}"
        return text


def month_task(sample: QuerySample, runs: Sequence[Run], round: str, *, k: int = 10,
               anchors: pd.DataFrame | None = None, people_share: float | None = None,
               seed: int = 0) -> MonthTask:
    """The labeling task of ``round``: each run's top ``k`` for every sampled query
    (positions 1..k in the run's ranking order, the run's score as ``score``), the
    query's ``weight`` (and ``segment``) from the sample, blank labels; the anchor items'
    distinct (query, document) pairs of ``anchors`` (:func:`~ireval_core.labels.
    read_anchors`'s table, any round) as this round's anchors; with ``people_share``,
    each distinct shown (query, document) drawn for people with that probability
    (seeded, independent of the row order), ``inclusion`` = the share.
    """
    fn = "month_task"
    check(sample, "sample", fn, InstanceOf(QuerySample, "a QuerySample (sample_queries)"))
    check(round, "round", fn, InstanceOf(str, "a round name (str)"))
    k = check(k, "k", fn, POSITIVE_INT)
    check(seed, "seed", fn, SEED)
    if people_share is not None:
        check(people_share, "people_share", fn, OPEN_UNIT)
    runs = list(runs)
    if not runs or not all(isinstance(r, Run) for r in runs):
        raise invalid_parameter("runs", fn, "one Run or more (read_runs)", runs)
    frame = sample.frame
    parts, missing = [], {}
    for run in runs:
        part, absent = _top_k(run, frame["query"].to_numpy(dtype=object), k)
        parts.append(part)
        missing[run.name] = absent
    items = pd.concat(parts, ignore_index=True)
    if items.empty:
        raise ValueError(f"{sample.source}: no run has any of the {len(frame)} sampled "
                         f"queries (e.g. {frame['query'].iloc[0]!r}); the log's query "
                         "column must hold the query ids the runs use")
    info = frame.set_index("query")
    items.insert(0, "round", round)
    if sample.has_segment:
        items["segment"] = info["segment"].reindex(items["query"]).to_numpy()
    items["weight"] = info["weight"].reindex(items["query"]).to_numpy()
    items["rater"] = ""
    items["label"] = ""
    units = items.groupby(["query", "doc"], sort=True)["system"].agg(
        lambda s: ",".join(dict.fromkeys(s))).reset_index().rename(columns={"system": "systems"})
    units.insert(0, "round", round)
    units["shown"] = True
    units["anchor"] = False
    if people_share is not None:
        # a stream of its own: independent of the draw of the queries with the same seed
        drawn = np.random.default_rng([seed, 1]).random(len(units)) < people_share
        units["for_people"] = drawn
        pick = units.set_index(["query", "doc"])["for_people"]
        items["for_people"] = pick.reindex(pd.MultiIndex.from_frame(
            items[["query", "doc"]])).to_numpy()
        items["inclusion"] = float(people_share)
    else:
        units["for_people"] = False
    table = None
    if anchors is not None:
        table, units = _anchors(anchors, round, units)
    return MonthTask(round, k, items, table, units, missing, sample, people_share)


def _top_k(run: Run, queries: np.ndarray, k: int) -> tuple[pd.DataFrame, list[str]]:
    """The run's top k of each of ``queries`` (in ranking order), and the queries it
    does not answer."""
    index = {str(q): i for i, q in enumerate(run.query_ids.tolist())}
    have = np.array([index.get(str(q), -1) for q in queries], dtype=np.int64)
    found = have >= 0
    rows, pos, qs = [], [], []
    for q, i in zip(queries[found], have[found], strict=True):
        start, stop = int(run.offsets[i]), min(int(run.offsets[i + 1]), int(run.offsets[i]) + k)
        rows.append(np.arange(start, stop))
        pos.append(np.arange(1, stop - start + 1))
        qs.append(np.full(stop - start, q, dtype=object))
    at = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
    docs = np.asarray(run.doc_ids.take(pa.array(run.dcode[at])).to_pylist(), dtype=object)
    part = pd.DataFrame({
        "system": run.name, "query": np.concatenate(qs) if qs else np.zeros(0, dtype=object),
        "doc": docs, "position": np.concatenate(pos) if pos else np.zeros(0, dtype=np.int64),
        "score": run.score[at]})
    return part, [str(q) for q in queries[~found]]


def _anchors(anchors: pd.DataFrame, round: str, units: pd.DataFrame
             ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """This round's anchor table (the distinct pairs of ``anchors``), and the units with
    the anchor items added (flagged; a shown pair is flagged where it is)."""
    missing = {"query", "doc"} - set(anchors.columns)
    if missing:
        raise ValueError(f"month_task: the anchors table needs the columns query, doc "
                         f"(missing: {', '.join(sorted(missing))})")
    pairs = anchors[["query", "doc"]].astype(str).drop_duplicates().sort_values(
        ["query", "doc"]).reset_index(drop=True)
    table = pairs.assign(round=round, rater="", label="")[
        ["round", "query", "doc", "rater", "label"]]
    merged = units.merge(pairs.assign(anchor_item=True), on=["query", "doc"], how="outer")
    merged["round"] = round
    merged["systems"] = merged["systems"].fillna("")
    merged["shown"] = merged["shown"].fillna(False).astype(bool)
    merged["anchor"] = merged["anchor_item"].fillna(False).astype(bool)
    merged["for_people"] = merged["for_people"].fillna(False).astype(bool)
    return table, merged.drop(columns="anchor_item").sort_values(
        ["query", "doc"]).reset_index(drop=True)


def fill_task(items: pd.DataFrame, labels: pd.DataFrame) -> pd.DataFrame:
    """The round file: ``items`` (a task's, or one read back) with the labels of
    ``labels`` (columns ``query, doc, label`` and optionally ``rater`` and ``time``; one
    label per (query, document, rater)) written on every row that shows that document
    for that query, one row per rater; rows nobody labeled keep a blank rater and label
    (and time)."""
    need = {"query", "doc", "label"} - set(labels.columns)
    if need:
        raise ValueError("fill_task: the labels need the columns query, doc, label "
                         f"(missing: {', '.join(sorted(need))})")
    given = labels.assign(rater=labels["rater"] if "rater" in labels.columns else "")
    extra = ["time"] if "time" in labels.columns else []
    given = given[["query", "doc", "rater", "label", *extra]].astype(
        {"query": str, "doc": str})
    dup = given.duplicated(["query", "doc", "rater"])
    if dup.any():
        r = given[dup].iloc[0]
        raise ValueError(f"fill_task: two labels for query {r['query']!r}, document "
                         f"{r['doc']!r}, rater {r['rater']!r}")
    cols = list(items.columns)
    base = items.drop(columns=["rater", "label"], errors="ignore")
    out = base.merge(given, on=["query", "doc"], how="left", sort=False)
    out["rater"] = out["rater"].fillna("")
    if extra:
        out["time"] = out["time"].fillna("")
    out["label"] = out["label"].astype(object).where(out["label"].notna(), "")
    order = [c for c in cols if c in out.columns] + [c for c in out.columns if c not in cols]
    return out[order]


def round_file(items: pd.DataFrame, labels: pd.DataFrame) -> bytes:
    """The round file of :func:`fill_task` as CSV (formula-like cells neutralised): what
    a labeling set keeps as the round, and every labeling reader reads."""
    return export_batch(fill_task(items, labels), "csv")
