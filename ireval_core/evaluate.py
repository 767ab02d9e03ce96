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

import threading
import weakref
from collections import OrderedDict
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

import numpy as np

from .data import JoinCache, Qrels, Ranked, Run, join, join_key, read_only
from .errors import invalid_parameter
from .measures import Measure, parse_measures
from .measures.prefs_and_groups import refusal
from .options import EvalOptions
from .params import OPEN_UNIT, InstanceOf, check
from .progress import stage

if TYPE_CHECKING:
    import pandas as pd

    from .io.column_cache import ColumnCache

__all__ = ["EvalOptions", "Evaluation", "MeasureCache", "cached_evaluation", "code_version",
           "evaluate", "evaluation_key", "store_evaluation"]


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
    answered: dict[str, np.ndarray] = field(default_factory=dict)
    """The queries each run answers (its ranked queries, evaluated or not): with
    ``complete``, the evaluated queries missing from it score 0."""

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

        # the kernels of stats.mean_ci(method="t"): scipy only when intervals are asked for
        from .intervals import t_interval, t_kernel

        level = check(confidence_level, "confidence_level", "Evaluation.intervals", OPEN_UNIT)
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
                    mean, se, _, df = t_kernel(v[:, None])
                    ci_low, ci_high = t_interval(mean, se, df, level, "two-sided")
                    low.loc[s, str(m)] = min(max(float(ci_low[0]), lo_b), hi_b)
                    high.loc[s, str(m)] = min(max(float(ci_high[0]), lo_b), hi_b)
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
             options: EvalOptions | None = None, joins: JoinCache | None = None,
             values: MeasureCache | None = None) -> Evaluation:
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
    values:
        Where per-query values are kept for reuse (:class:`MeasureCache`): a measure
        already computed for a run under options that agree on every option it reads
        is taken from there (the same numbers), and the join is skipped when every
        measure of a run is found. ``None`` computes every value.

    Returns
    -------
    Evaluation
        Per-query values (NaN = the query is not counted for that measure) and
        aggregates, with the averaging rule of each measure in its definition. Its
        arrays are read-only: an evaluation can be shared (cached) safely.
    """
    options = EvalOptions() if options is None else options
    check(options, "options", "evaluate", InstanceOf(EvalOptions))
    if isinstance(runs, Run):
        runs = [runs]
    runs = list(runs)
    names = [r.name for r in runs]
    if len(set(names)) != len(names):
        raise invalid_parameter("runs", "evaluate", "runs with distinct names", names)
    specs = parse_measures(list(measures) if not isinstance(measures, str) else measures)
    for m in specs:  # before any join: a preference measure needs other judgments
        if m.family.judgments != "qrels":
            raise refusal(m)
    values_out: dict[tuple[str, str], np.ndarray] = {}
    aggregates: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    query_ids: dict[str, np.ndarray] = {}
    answered = {run.name: run.query_ids for run in runs}
    for run in runs:
        joined: list[Ranked] = []

        def ranked(run: Run = run, joined: list[Ranked] = joined) -> Ranked:
            if not joined:
                stage(f"joining {run.name} with the qrels")
                joined.append(joins.ranked(qrels, run, options) if joins is not None
                              else join(qrels, run, options=options))
                stage(f"evaluating {run.name}")
            return joined[0]

        for m in specs:
            if values is not None:
                got = values.value(qrels, run, m, options, ranked)
            else:
                r = ranked()
                v = read_only(np.asarray(m.family.kernel(r, m, options), dtype=np.float64))
                got = _Value(v, *_aggregate(r, m, options, v))
            values_out[(run.name, str(m))] = got.values
            aggregates[(run.name, str(m))], counts[(run.name, str(m))] = got.aggregate, got.count
        query_ids[run.name] = (values.query_ids(qrels, run, options, ranked)
                               if values is not None else read_only(ranked().query_ids))
    return Evaluation(tuple(names), tuple(specs), options, query_ids, values_out, aggregates,
                      counts, answered)


# ----------------------------------------------------------------------------- kept values

_FIELDS = tuple(f.name for f in fields(EvalOptions))
_FIELD_SET = frozenset(_FIELDS)
# reading these may read every field at once (a copy, a pickle, the instance dict)
_READS_ALL = frozenset({"__dict__", "__reduce__", "__reduce_ex__", "__getstate__",
                        "__copy__", "__deepcopy__"})


class _Recording(EvalOptions):
    """The same options, noting which of their fields are read (see :class:`MeasureCache`)."""

    _reads: set[str]

    def __getattribute__(self, name: str) -> Any:
        if name in _FIELD_SET:
            object.__getattribute__(self, "_reads").add(name)
        elif name in _READS_ALL:
            object.__getattribute__(self, "_reads").update(_FIELDS)
        return object.__getattribute__(self, name)

    def _plain(self) -> EvalOptions:
        return EvalOptions(**{name: getattr(self, name) for name in _FIELDS})  # reads all

    def __eq__(self, other: object) -> bool:  # equal to the EvalOptions it stands for
        return self._plain() == other

    def __hash__(self) -> int:
        return hash(self._plain())


def _recording(options: EvalOptions) -> _Recording:
    rec = object.__new__(_Recording)
    for name in _FIELDS:
        object.__setattr__(rec, name, getattr(options, name))
    object.__setattr__(rec, "_reads", set())
    return rec


@dataclass(frozen=True)
class _Value:
    values: np.ndarray  # read-only per-query values
    aggregate: float
    count: int


class MeasureCache:
    """Per-query values of one measure on one run, kept for reuse, bounded by bytes.

    A value is computed once per run, measure and the options *it reads*: while a
    kernel and its aggregate run, the options note which of their fields are read
    (the join's ``complete``, ``depth`` and ``judged_only`` always count), and the
    value is kept under those fields' values only. Any later options that agree on
    them give the same computation, so the kept value is exact: nDCG, whose kernel
    never reads the relevance level, is computed once for every level, while P@10 is
    computed again when the level changes (and kept per level).

    Entries are keyed by the qrels and run objects (checked by identity, held weakly)
    like :class:`~ireval_core.data.JoinCache`; the least recently used go first once
    ``max_bytes`` is passed. Safe to share between threads: a value another thread is
    computing is waited for, not computed twice.

    Parameters
    ----------
    max_bytes:
        Bound on the bytes of the kept per-query values (default 64 MiB: over a
        thousand values of a run of 7,000 queries).

    Examples
    --------
    >>> from ireval_core import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 2}})
    >>> run = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="r")
    >>> cache = MeasureCache()
    >>> for level in (1, 2):
    ...     res = evaluate(qrels, run, ["nDCG", "P@1"], options=EvalOptions(rel_level=level),
    ...                    values=cache)
    >>> res.mean("r", "P@1"), cache.hits, cache.misses  # nDCG found for level 2
    (0.0, 1, 3)
    """

    def __init__(self, max_bytes: int = 64 << 20) -> None:
        self.max_bytes = int(max_bytes)
        self._entries: OrderedDict[Hashable, tuple[weakref.ref[Qrels], weakref.ref[Run],
                                                   _Value]] = OrderedDict()
        self._reads: dict[Hashable, set[tuple[str, ...]]] = {}  # base key -> field sets
        self._queries: OrderedDict[Hashable, tuple[weakref.ref[Qrels], weakref.ref[Run],
                                                   np.ndarray]] = OrderedDict()
        self._pending: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self._nbytes = 0
        self.hits = 0
        self.misses = 0

    def value(self, qrels: Qrels, run: Run, measure: Measure, options: EvalOptions,
              ranked: Any) -> _Value:
        """The values of ``measure`` on ``run`` under ``options``; ``ranked()`` gives the
        join when they must be computed."""
        base = (id(qrels), id(run), join_key(options), str(measure))
        while True:
            with self._lock:
                found = self._find(base, qrels, run, options)
                if found is not None:
                    self.hits += 1
                    return found
                running = self._pending.get(base)
                if running is None:
                    done = self._pending[base] = threading.Event()
                    break
            running.wait()  # then look again: its options may have read other fields
        try:
            r = ranked()
            rec = _recording(options)
            v = read_only(np.asarray(measure.family.kernel(r, measure, rec), dtype=np.float64))
            got = _Value(v, *_aggregate(r, measure, rec, v))
            reads = tuple(sorted(rec._reads))
            with self._lock:
                self.misses += 1
                self._put(base, reads, tuple(getattr(options, f) for f in reads),
                          qrels, run, got)
            return got
        finally:
            with self._lock:
                del self._pending[base]
            done.set()

    def query_ids(self, qrels: Qrels, run: Run, options: EvalOptions, ranked: Any
                  ) -> np.ndarray:
        """The evaluated query ids of ``run`` under ``options`` (read-only)."""
        key = (id(qrels), id(run), join_key(options))
        with self._lock:
            hit = self._queries.get(key)
            if hit is not None and hit[0]() is qrels and hit[1]() is run:
                self._queries.move_to_end(key)
                return hit[2]
        ids = read_only(ranked().query_ids)
        with self._lock:
            self._queries[key] = (weakref.ref(qrels), weakref.ref(run), ids)
            while len(self._queries) > 64:
                self._queries.popitem(last=False)
        return ids

    def keep(self, qrels: Qrels, runs: Sequence[Run], res: Evaluation) -> None:
        """Keep the values of ``res``, an evaluation of ``runs`` against ``qrels`` made
        elsewhere (read back from a :class:`~ireval_core.io.column_cache.ColumnCache` by
        :func:`cached_evaluation`), as if they had been computed here: each is found again
        only under options equal to ``res.options`` in every field (its kernel's reads are
        not known), with the run's evaluated query ids. Values kept already stay."""
        options = res.options
        reads = tuple(sorted(_FIELDS))
        seen = tuple(getattr(options, f) for f in reads)
        joined = join_key(options)
        with self._lock:
            for run in runs:
                if run.name not in res.query_ids:
                    continue
                for m in res.measures:
                    name = str(m)
                    base = (id(qrels), id(run), joined, name)
                    if (run.name, name) not in res.values or self._find(
                            base, qrels, run, options) is not None:
                        continue
                    self._put(base, reads, seen, qrels, run, _Value(
                        res.values[(run.name, name)], res.aggregates[(run.name, name)],
                        res.n_averaged[(run.name, name)]))
                key = (id(qrels), id(run), joined)
                if key not in self._queries:
                    self._queries[key] = (weakref.ref(qrels), weakref.ref(run),
                                          res.query_ids[run.name])
                    while len(self._queries) > 64:
                        self._queries.popitem(last=False)

    @property
    def nbytes(self) -> int:
        """Bytes of the kept per-query values."""
        return self._nbytes

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forget every kept value."""
        with self._lock:
            self._entries.clear()
            self._reads.clear()
            self._queries.clear()
            self._nbytes = 0

    def _find(self, base: Hashable, qrels: Qrels, run: Run, options: EvalOptions
              ) -> _Value | None:
        for reads in self._reads.get(base, ()):
            key = (base, reads, tuple(getattr(options, f) for f in reads))
            hit = self._entries.get(key)
            if hit is not None and hit[0]() is qrels and hit[1]() is run:
                self._entries.move_to_end(key)
                return hit[2]
        return None

    def _put(self, base: Hashable, reads: tuple[str, ...], seen: tuple[object, ...],
             qrels: Qrels, run: Run, got: _Value) -> None:
        key = (base, reads, seen)
        old = self._entries.pop(key, None)
        if old is not None:
            self._nbytes -= old[2].values.nbytes
        self._entries[key] = (weakref.ref(qrels), weakref.ref(run), got)
        self._reads.setdefault(base, set()).add(reads)
        self._nbytes += got.values.nbytes
        while len(self._entries) > 1 and self._nbytes > self.max_bytes:
            _, _, gone = self._entries.popitem(last=False)[1]
            self._nbytes -= gone.values.nbytes


# ----------------------------------------------------------------------------- kept on disk

_CODE_VERSION: str | None = None
_CODE_VERSION_LOCK = threading.Lock()


def code_version() -> str:
    """The SHA-256 of this ``ireval_core``'s source (every ``.py`` file, by relative path):
    an evaluation kept on disk is used only by the code that computed it, so a change to
    any kernel, join or reader makes new entries without a version to bump by hand.
    Computed once per process (about 10 ms)."""
    global _CODE_VERSION
    with _CODE_VERSION_LOCK:
        if _CODE_VERSION is None:
            import hashlib
            from pathlib import Path

            root = Path(__file__).resolve().parent
            h = hashlib.sha256()
            for p in sorted(root.rglob("*.py")):
                h.update(p.relative_to(root).as_posix().encode() + b"\0")
                h.update(p.read_bytes() + b"\0")
            _CODE_VERSION = h.hexdigest()
        return _CODE_VERSION


def evaluation_key(content_key: str, measures: Sequence[str], options: EvalOptions) -> str:
    """The key of an evaluation kept in a :class:`~ireval_core.io.column_cache.ColumnCache`
    (:func:`store_evaluation`): ``content_key`` names the qrels and runs by their content
    and the rule they were read with (an app: the digest of every file's name, SHA-256 and
    comment rule, in order), then the measures as asked, every option (each changes some
    number), the reader version and :func:`code_version`.

    The entry's file is ``eval-<SHA-256 of all that>-<CRC>.arrow``; the whole key is
    written in the entry and compared when it is read.
    """
    import hashlib
    import json
    from dataclasses import asdict

    from .io.column_cache import READER_VERSION

    rule = {"kind": "evaluation", "reader": READER_VERSION, "code": code_version(),
            "content": content_key, "measures": [str(m) for m in measures],
            "options": asdict(options)}
    text = json.dumps(rule, sort_keys=True)
    return f"eval-{hashlib.sha256(text.encode()).hexdigest()}:{text}"


def store_evaluation(cache: ColumnCache, key: str, res: Evaluation) -> None:
    """Keep ``res`` in ``cache`` under ``key`` (:func:`evaluation_key`): every run's
    evaluated query ids and per-query values (float64, as computed), the aggregates and
    their counts. A failure to write is logged by the cache, not raised."""
    import pyarrow as pa

    names = [str(m) for m in res.measures]
    columns: dict[str, pa.Array] = {}
    aggregates, counts = [], []
    for i, system in enumerate(res.systems):
        columns[f"{i}.query_ids"] = pa.array(list(res.query_ids[system]), pa.string())
        for j, m in enumerate(names):
            columns[f"{i}.{j}"] = pa.array(np.asarray(res.values[(system, m)],
                                                      dtype=np.float64))
            aggregates.append(res.aggregates[(system, m)])
            counts.append(res.n_averaged[(system, m)])
    columns["aggregates"] = pa.array(np.asarray(aggregates, dtype=np.float64))
    columns["counts"] = pa.array(np.asarray(counts, dtype=np.int64))
    cache.store(key, columns, {"kind": "evaluation", "systems": list(res.systems),
                               "measures": names})


def cached_evaluation(cache: ColumnCache, key: str, runs: Sequence[Run],
                      measures: Sequence[str], options: EvalOptions) -> Evaluation | None:
    """The :class:`Evaluation` of ``runs`` on ``measures`` under ``options`` kept under
    ``key`` (:func:`evaluation_key`), its per-query values mapped from the file (read-only,
    the computed bits); ``None`` when absent, or when the entry fails its checks (the
    cache's own, then: the runs and measures those asked for, every run's values as many
    as its query ids, each count the values that are not NaN): then it is deleted with a
    log line, and the caller computes the evaluation again."""
    import pyarrow as pa

    from .io.column_cache import entry_numbers, entry_strings

    specs = parse_measures(list(measures))
    got = cache.load(key)
    if got is None:
        return None
    batch, meta = got
    try:
        names = [str(m) for m in specs]
        systems = [r.name for r in runs]
        if meta.get("kind") != "evaluation":
            raise ValueError(f"an entry of {meta.get('kind')!r}, not an evaluation")
        if meta.get("systems") != systems or meta.get("measures") != names:
            raise ValueError("the entry holds other runs or measures")
        aggregates = entry_numbers(batch, "aggregates", np.float64)
        counts = entry_numbers(batch, "counts", np.int64)
        if len(aggregates) != len(systems) * len(names) or len(counts) != len(aggregates):
            raise ValueError("aggregates do not match the runs and measures")
        query_ids: dict[str, np.ndarray] = {}
        values: dict[tuple[str, str], np.ndarray] = {}
        means: dict[tuple[str, str], float] = {}
        n_averaged: dict[tuple[str, str], int] = {}
        at = 0
        for i, system in enumerate(systems):
            ids = entry_strings(batch, f"{i}.query_ids")
            ids.setflags(write=False)
            query_ids[system] = ids
            for j, m in enumerate(names):
                v = entry_numbers(batch, f"{i}.{j}", np.float64)
                if len(v) != len(ids):
                    raise ValueError(f"{system} {m}: {len(v)} values, {len(ids)} queries")
                if int(np.count_nonzero(~np.isnan(v))) != int(counts[at]):
                    raise ValueError(f"{system} {m}: the count does not match the values")
                values[(system, m)] = v
                means[(system, m)] = float(aggregates[at])
                n_averaged[(system, m)] = int(counts[at])
                at += 1
    except (KeyError, ValueError, TypeError, pa.ArrowException) as exc:
        cache.drop(key, exc)
        return None
    return Evaluation(tuple(systems), tuple(specs), options, query_ids, values, means,
                      n_averaged, {run.name: run.query_ids for run in runs})
