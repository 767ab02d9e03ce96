"""One qrels file and the runs evaluated against it: summaries and dataset-level checks.

A :class:`Dataset` is what the app loads and every later step works on. Beyond the
warnings each :class:`~ireval_core.data.Qrels` and :class:`~ireval_core.data.Run`
already carries from reading, it checks how the runs and the qrels fit together and
reports soft problems as :class:`~ireval_core.errors.DataWarning` objects with stable
codes:

``"run-query-without-qrels"``
    The run answers queries that have no judgments; they are left out of the means.
``"qrels-query-missing-from-run"``
    Judged queries the run does not answer; left out of the means by default, counted
    as 0 with the complete option (trec_eval ``-c``).
``"short-ranking"``
    Queries ranked fewer than 100 (and possibly fewer than 10) documents; cutoff
    measures at those depths see short lists.
``"unjudged-in-top10"``
    Documents in the top 10 (over the queries in both) that have no grade, or a
    negative grade ("pooled, unjudged"); they count as non-relevant by default.

Everything is computed with numpy over the flat per-query arrays, no loop over queries.

Examples
--------
>>> from ireval_core.data import Qrels, Run
>>> qrels = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}})
>>> run = Run.from_dict({"q1": {"d1": 2.0, "d3": 1.0}, "q2": {"d1": 1.0}}, name="bm25")
>>> ds = Dataset(qrels, (run,))
>>> [w.code for w in ds.warnings()]
['run-query-without-qrels', 'short-ranking', 'unjudged-in-top10']
>>> ds.summary().runs.loc[0, "unjudged in top 10"]
np.int64(1)
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from .data import JoinCache, Qrels, Ranked, Run, join
from .errors import DataWarning
from .options import EvalOptions
from .params import InstanceOf, check

if TYPE_CHECKING:  # pandas is imported where a table is built (not by `eval`)
    import pandas as pd

    from .evaluate import Evaluation, MeasureCache
    from .measures import Measure

__all__ = ["POOLED_LABEL", "SHORT_DEPTHS", "TOP_K", "Dataset", "DatasetSummary", "check_ahead"]

TOP_K = 10
"""Depth of the "top of the ranking" checks (judged share, unjudged documents)."""

SHORT_DEPTHS = (10, 100)
"""A query ranking fewer documents than these depths is reported as short."""

POOLED_LABEL = "pooled, unjudged"
"""Label of negative grades (in the pool, but never judged) in the grade distribution."""

_N_EXAMPLES = 3
_PREFETCH_LOCK = threading.Lock()


def _measure_cache() -> MeasureCache:
    from .evaluate import MeasureCache  # evaluate imports the measures: only when used

    return MeasureCache()


@dataclass(frozen=True)
class DatasetSummary:
    """Tables describing a :class:`Dataset` (see :meth:`Dataset.summary`).

    Attributes
    ----------
    qrels:
        One row: ``qrels`` (file name), ``queries``, ``judgments`` (entries),
        ``documents`` (distinct ids), ``judged`` (grade >= 0), ``relevant``
        (grade >= threshold), ``pooled, unjudged`` (grade < 0), ``queries without
        relevant``, ``min judgments`` / ``median judgments`` / ``max judgments`` per query.
    grades:
        One row per grade, ascending; all negative grades are one row labelled
        ``"pooled, unjudged"``. Columns ``grade`` (str label), ``judgments``, ``share``.
    runs:
        One row per run, in dataset order. Columns ``run``, ``file``, ``queries``,
        ``documents``, ``min depth``, ``median depth``, ``max depth``, ``queries in
        qrels``, ``judged in top 10`` (share of the top-10 documents of the queries in
        both that have a grade >= 0, NaN when there are none), ``run queries without
        qrels``, ``qrels queries missing``, ``queries < 10 docs``, ``queries < 100
        docs``, ``unjudged in top 10``.
    threshold:
        The relevance threshold used for the ``relevant`` columns.
    """

    qrels: pd.DataFrame
    grades: pd.DataFrame
    runs: pd.DataFrame
    threshold: float


@dataclass(frozen=True)
class _RunChecks:
    """Per-run numbers behind both :meth:`Dataset.summary` and :meth:`Dataset.warnings`."""

    without_qrels: np.ndarray  # run query ids absent from the qrels
    missing: np.ndarray  # qrels query ids absent from the run
    short: dict[int, np.ndarray]  # depth -> mask over run queries with fewer documents
    in_both: int
    top_docs: int  # documents in the top TOP_K of the queries in both
    top_unjudged: int  # of which grade NaN or negative
    top_pooled: int  # of which grade negative
    top_query_ids: np.ndarray  # queries in both
    top_unjudged_per_query: np.ndarray


@dataclass(frozen=True, eq=False)
class Dataset:
    """Judgments and the runs to evaluate with them.

    Parameters
    ----------
    qrels:
        The relevance judgments.
    runs:
        The systems, with distinct names (any sequence; stored as a tuple).

    Raises
    ------
    ValueError
        When two runs share a name.
    """

    qrels: Qrels
    runs: tuple[Run, ...] = ()
    joins: JoinCache = field(default_factory=JoinCache, repr=False, compare=False)
    """Joined runs kept for reuse by :meth:`ranked` and :meth:`evaluate` (bounded by bytes)."""
    values: MeasureCache = field(default_factory=lambda: _measure_cache(), repr=False,
                                 compare=False)
    """Per-query values kept for reuse by :meth:`evaluate`: a measure is computed again
    only when an option it reads changes (see :class:`~ireval_core.evaluate.MeasureCache`)."""
    _prefetched: set[tuple[object, ...]] = field(default_factory=set, init=False, repr=False,
                                                 compare=False)

    def __post_init__(self) -> None:
        check(self.qrels, "qrels", "Dataset", InstanceOf(Qrels))
        runs = tuple(self.runs)
        for r in runs:
            if not isinstance(r, Run):
                raise TypeError(f"The 'runs' parameter of Dataset must hold Run objects. "
                                f"Got {type(r).__name__} instead.")
        names = [r.name for r in runs]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"The run names of a Dataset must be unique. Got {dup[0]!r} "
                             f"{names.count(dup[0])} times.")
        object.__setattr__(self, "runs", runs)

    # ------------------------------------------------------------------ access

    @property
    def run_names(self) -> tuple[str, ...]:
        """Names of the runs, in dataset order."""
        return tuple(r.name for r in self.runs)

    def run(self, name: str) -> Run:
        """The run called ``name``; raises ``KeyError`` naming the available runs."""
        for r in self.runs:
            if r.name == name:
                return r
        raise KeyError(f"no run named {name!r}; the runs are {', '.join(self.run_names)}")

    def __len__(self) -> int:
        return len(self.runs)

    def __repr__(self) -> str:
        return f"Dataset({self.qrels!r}, runs={list(self.run_names)})"

    # ------------------------------------------------------------------ evaluation

    def ranked(self, name: str, options: EvalOptions) -> Ranked:
        """The run called ``name`` joined with the qrels under ``options`` (kept for reuse)."""
        return self.joins.ranked(self.qrels, self.run(name), options)

    def prefetch(self, options: EvalOptions, measures: Sequence[str] = ()
                 ) -> threading.Thread | None:
        """Join every run under ``options`` in the background (see :meth:`JoinCache.prefetch`),
        then evaluate ``measures`` there too (kept in :attr:`values`).

        For an app: started after a page is drawn, what the next page evaluates is ready
        (or under way, and then waited for). Once per (options, measures); returns the
        thread doing the evaluations, the join thread when there are no measures, or
        ``None`` when everything was asked for before. Errors (an unknown measure) are
        left to the page that evaluates.
        """
        joining = self.joins.prefetch(self.qrels, self.runs, options)
        if not measures or not self.runs:
            return joining
        key = (options, tuple(measures))
        with _PREFETCH_LOCK:
            if key in self._prefetched:
                return joining
            self._prefetched.add(key)

        def work() -> None:
            try:
                self.evaluate(list(measures), options)
            except Exception:  # noqa: BLE001 - the page that needs it will say why
                return

        thread = threading.Thread(target=work, name="ireval-evaluate-prefetch", daemon=True)
        thread.start()
        return thread

    def evaluate(self, measures: str | Sequence[str | Measure],
                 options: EvalOptions | None = None) -> Evaluation:
        """:func:`~ireval_core.evaluate.evaluate` of every run, reusing kept joins and values.

        The same numbers as ``evaluate(dataset.qrels, dataset.runs, measures,
        options=options)``; only the work differs.
        """
        from .evaluate import evaluate

        return evaluate(self.qrels, self.runs, measures, options=options, joins=self.joins,
                        values=self.values)

    # ------------------------------------------------------------------ checks

    def warnings(self, *, complete: bool | None = None) -> list[DataWarning]:
        """Every soft problem: those found while reading, then the dataset-level checks.

        Reading warnings come first (qrels, then each run; a warning shared by several
        runs read from one file appears once). Dataset-level warnings follow, run by
        run, in the order of the codes listed in the module docstring; their
        ``source`` is the run name. ``complete``: the complete option in force (trec_eval
        ``-c``), which decides what becomes of judged queries a run does not answer; the
        warning about them says so (``None``: it names both cases).

        >>> from ireval_core.data import Qrels, Run
        >>> ds = Dataset(Qrels.from_dict({"q1": {"d1": 1}, "q2": {"d1": 1}}),
        ...              (Run.from_dict({"q1": {"d1": 1.0}}, name="r"),))
        >>> [w.message.split("; ")[1] for w in ds.warnings(complete=True)
        ...  if w.code == "qrels-query-missing-from-run"]
        ['counted as 0 in the means, as the complete option (trec_eval -c) is on']
        """
        found: list[DataWarning] = list(self.qrels.warnings)
        for r in self.runs:
            found.extend(r.warnings)
        out = list(dict.fromkeys(found))  # keep order, drop repeats
        for r, checks in zip(self.runs, self._checks, strict=True):
            out.extend(_run_warnings(r, checks, self.qrels.n_queries, complete))
        return out

    def summary(self, *, threshold: float = 1.0) -> DatasetSummary:
        """Tables describing the qrels, their grades and each run (see :class:`DatasetSummary`).

        Parameters
        ----------
        threshold:
            Grade from which a judged document counts as relevant.
        """
        return DatasetSummary(_qrels_table(self.qrels, threshold), _grade_table(self.qrels),
                              self._runs_table(), float(threshold))

    # ------------------------------------------------------------------ internals

    @cached_property
    def _checks(self) -> tuple[_RunChecks, ...]:
        return tuple(_run_checks(self.qrels, r) for r in self.runs)

    def _runs_table(self) -> pd.DataFrame:
        rows = []
        for r, c in zip(self.runs, self._checks, strict=True):
            depth = r.depth
            rows.append({
                "run": r.name,
                "file": r.source,
                "queries": r.n_queries,
                "documents": len(r),
                "min depth": int(depth.min()) if depth.size else 0,
                "median depth": float(np.median(depth)) if depth.size else float("nan"),
                "max depth": int(depth.max()) if depth.size else 0,
                "queries in qrels": c.in_both,
                f"judged in top {TOP_K}": ((c.top_docs - c.top_unjudged) / c.top_docs
                                           if c.top_docs else float("nan")),
                "run queries without qrels": len(c.without_qrels),
                "qrels queries missing": len(c.missing),
                **{f"queries < {d} docs": int(c.short[d].sum()) for d in SHORT_DEPTHS},
                f"unjudged in top {TOP_K}": c.top_unjudged,
            })
        columns = ["run", "file", "queries", "documents", "min depth", "median depth",
                   "max depth", "queries in qrels", f"judged in top {TOP_K}",
                   "run queries without qrels", "qrels queries missing",
                   *(f"queries < {d} docs" for d in SHORT_DEPTHS), f"unjudged in top {TOP_K}"]
        import pandas as pd

        table = pd.DataFrame(rows, columns=columns)
        ints = [c for c in columns if c not in ("run", "file", "median depth",
                                                f"judged in top {TOP_K}")]
        return table.astype(dict.fromkeys(ints, "int64"))


_CHECKED: weakref.WeakKeyDictionary[Run, tuple[weakref.ref[Qrels], _RunChecks]] = (
    weakref.WeakKeyDictionary())
_CHECKED_LOCK = threading.Lock()


def check_ahead(qrels: Qrels, run: Run) -> None:
    """Make the dataset-level checks of ``run`` against ``qrels`` now (with the run's
    document map, which their join computes and keeps), so that a :class:`Dataset` holding
    both objects finds them made: for a reader that has ``run`` while it still reads other
    files, on a core the reading leaves free. Kept while both objects live."""
    _run_checks(qrels, run)


def _run_checks(qrels: Qrels, run: Run) -> _RunChecks:
    """:func:`_check_run`, made once per (qrels, run) objects."""
    with _CHECKED_LOCK:
        hit = _CHECKED.get(run)
    if hit is not None and hit[0]() is qrels:
        return hit[1]
    checks = _check_run(qrels, run)
    with _CHECKED_LOCK:
        _CHECKED[run] = (weakref.ref(qrels), checks)
    return checks


def _check_run(qrels: Qrels, run: Run) -> _RunChecks:
    qrels_q = qrels.query_ids.astype(str)
    run_q = run.query_ids.astype(str)
    in_qrels = np.isin(run_q, qrels_q)
    ranked = join(qrels, run, options=EvalOptions(depth=TOP_K))
    unjudged = ~(ranked.grade >= 0)  # NaN (not in the qrels) or negative (pooled)
    per_query = np.bincount(ranked.qidx, weights=unjudged, minlength=ranked.n_queries)
    return _RunChecks(
        without_qrels=run_q[~in_qrels],
        missing=qrels_q[~np.isin(qrels_q, run_q)],
        short={d: run.depth < d for d in SHORT_DEPTHS},
        in_both=int(in_qrels.sum()),
        top_docs=len(ranked.grade),
        top_unjudged=int(unjudged.sum()),
        top_pooled=int((ranked.grade < 0).sum()),
        top_query_ids=ranked.query_ids.astype(str),
        top_unjudged_per_query=per_query.astype(np.int64),
    )


_MISSING_FATE = {
    None: "left out of the means, or counted as 0 with the complete option (trec_eval -c)",
    True: "counted as 0 in the means, as the complete option (trec_eval -c) is on",
    False: "left out of the means; the complete option (trec_eval -c) would count them as 0",
}
"""What becomes of judged queries a run does not answer, by the complete option in force."""


def _plural(n: int, word: str, plural: str | None = None) -> str:
    return f"{n:,} {word if n == 1 else (plural or word + 's')}"


def _examples(ids: np.ndarray) -> tuple[str, ...]:
    return tuple(str(x) for x in ids[:_N_EXAMPLES])


def _run_warnings(run: Run, c: _RunChecks, n_qrels_queries: int,
                  complete: bool | None = None) -> list[DataWarning]:
    out: list[DataWarning] = []
    if len(c.without_qrels):
        n = len(c.without_qrels)
        out.append(DataWarning(
            "run-query-without-qrels",
            f"{_plural(n, 'query', 'queries')} of {run.n_queries:,} in the run "
            f"{'has' if n == 1 else 'have'} no qrels; left out of the means",
            run.name, n, _examples(c.without_qrels)))
    if len(c.missing):
        n = len(c.missing)
        out.append(DataWarning(
            "qrels-query-missing-from-run",
            f"{_plural(n, 'judged query', 'judged queries')} of {n_qrels_queries:,} "
            f"{'is' if n == 1 else 'are'} missing from the run; {_MISSING_FATE[complete]}",
            run.name, n, _examples(c.missing)))
    lo, hi = SHORT_DEPTHS
    n_hi = int(c.short[hi].sum())
    if n_hi:
        depth = run.depth
        order = np.lexsort((np.arange(len(depth)), depth))  # shortest first, then query order
        shown = order[depth[order] < hi][:_N_EXAMPLES]
        examples = tuple(f"{q}: {_plural(d, 'doc')}" for q, d in zip(
            run.query_ids[shown].astype(str), depth[shown].tolist(), strict=True))
        n_lo = int(c.short[lo].sum())
        cut = lo if n_lo else hi
        n_cut = n_lo or n_hi
        what = (f"all {n_cut:,} queries rank" if n_cut == run.n_queries > 1 else
                f"{_plural(n_cut, 'query', 'queries')} of {run.n_queries:,} "
                f"{'ranks' if n_cut == 1 else 'rank'}")
        what += f" fewer than {cut} documents"
        if n_lo and n_hi > n_lo:
            what += f" ({n_hi:,} fewer than {hi})"
        out.append(DataWarning(
            "short-ranking",
            f"{what}; measures with a cutoff beyond a query's depth (e.g. P@{cut}, R@{cut}) "
            "see short lists", run.name, n_hi, examples))
    if c.top_unjudged:
        n = c.top_unjudged
        pooled = (f", {c.top_pooled:,} of them pooled but not judged (grade < 0)"
                  if c.top_pooled else "")
        per_q = c.top_unjudged_per_query
        order = np.lexsort((np.arange(len(per_q)), -per_q))  # most unjudged first
        shown = order[per_q[order] > 0][:_N_EXAMPLES]
        examples = tuple(f"{q}: {k}" for q, k in zip(c.top_query_ids[shown],
                                                     per_q[shown].tolist(), strict=True))
        out.append(DataWarning(
            "unjudged-in-top10",
            f"{_plural(n, 'document')} of {c.top_docs:,} in the top {TOP_K} "
            f"{'is' if n == 1 else 'are'} unjudged ({n / c.top_docs:.1%}){pooled}; "
            "they count as non-relevant",
            run.name, n, examples))
    return out


def _qrels_table(qrels: Qrels, threshold: float) -> pd.DataFrame:
    g = qrels.grade
    per_query = np.diff(qrels.offsets)
    qidx = qrels.qcode
    relevant = g >= threshold
    rel_per_query = np.bincount(qidx, weights=relevant, minlength=qrels.n_queries)
    nonempty = per_query.size > 0
    row = {
        "qrels": qrels.source,
        "queries": qrels.n_queries,
        "judgments": len(qrels),
        "documents": len(qrels.doc_ids),
        "judged": int((g >= 0).sum()),
        "relevant": int(relevant.sum()),
        POOLED_LABEL: int((g < 0).sum()),
        "queries without relevant": int((rel_per_query == 0).sum()),
        "min judgments": int(per_query.min()) if nonempty else 0,
        "median judgments": float(np.median(per_query)) if nonempty else float("nan"),
        "max judgments": int(per_query.max()) if nonempty else 0,
    }
    import pandas as pd

    return pd.DataFrame([row])


def _grade_table(qrels: Qrels) -> pd.DataFrame:
    g = qrels.grade
    values, counts = np.unique(g[g >= 0], return_counts=True)
    labels: list[str] = [f"{v:g}" for v in values.tolist()]
    numbers: list[int] = counts.tolist()
    n_pooled = int((g < 0).sum())
    if n_pooled:
        labels.insert(0, POOLED_LABEL)
        numbers.insert(0, n_pooled)
    total = max(len(g), 1)
    import pandas as pd

    return pd.DataFrame({
        "grade": pd.Series(labels, dtype=object),
        "judgments": pd.Series(numbers, dtype="int64"),
        "share": pd.Series([n / total for n in numbers], dtype="float64"),
    })

