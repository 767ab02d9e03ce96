"""Cached evaluation shared by every page that evaluates.

:func:`evaluate_cached` is :func:`ireval_core.evaluate` cached by explicit arguments:
the dataset key (a digest of the loaded files, :func:`ireval_app.state.get_dataset_key`)
stands for the unhashable dataset, and the frozen
:class:`~ireval_core.options.EvalOptions` is part of the key. The result is shared
between sessions: its arrays are read-only (see :func:`ireval_core.evaluate`). It lives
in the byte-bounded :data:`ireval_app.shared_cache.SHARED`, and each session holds its last
16 evaluations itself, dropped with the session.

Typical page::

    dataset = widgets.require_dataset()
    options = state.get_options()
    res = evaluation.evaluate_cached(state.get_dataset_key() or "", dataset,
                                     ("nDCG@10", "AP"), options)
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import pandas as pd
from streamlit.runtime.scriptrunner import get_script_run_ctx

from ireval_core import charts
from ireval_core.data import join_key
from ireval_core.dataset import Dataset
from ireval_core.errors import UnknownMeasureError
from ireval_core.evaluate import (
    Evaluation,
    cached_evaluation,
    evaluation_key,
    store_evaluation,
)
from ireval_core.ideal import ideal_pairs
from ireval_core.measures import parse_measure
from ireval_core.options import EvalOptions
from ireval_core.tables import MetricsTable, metrics_table

from . import state
from .cache import column_cache
from .shared_cache import shared

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["IDLE_WAIT_MAX", "METRICS_DEFAULT", "evaluate_cached", "ideal_pairs_cached",
           "measure_values", "metric_bars_cached", "page_run", "parse_specs",
           "per_query_chart_cached", "prefetch", "prefetch_measures", "prefetch_when_idle",
           "table_cached"]


METRICS_DEFAULT = ("nDCG@10", "AP", "P@10", "R@100", "RR", "bpref", "Judged@10")
"""The measures of the Metrics page until the user chooses others."""


def evaluate_cached(dataset_key: str, dataset: Dataset, measures: tuple[str, ...],
                    options: EvalOptions) -> Evaluation:
    """:func:`ireval_core.evaluate` of every run of the dataset, cached (see
    :func:`_evaluate_cached`); the measures are noted for :func:`prefetch_measures`."""
    res = _evaluate_cached(dataset_key, dataset, measures, options)
    if get_script_run_ctx() is not None:
        state.note_evaluated(measures)
    return res


def prefetch_measures() -> tuple[str, ...]:
    """What to evaluate in the background after a page is drawn, under the current
    options (:meth:`ireval_core.dataset.Dataset.prefetch`): every measure this session's
    pages evaluated, so that after an option change the other pages find their values
    made; before any page evaluated, the Metrics page's defaults."""
    return state.evaluated_measures() or METRICS_DEFAULT


# per dataset, the join option sets (ireval_core.data.join_key) whose second join thread ran
_JOINING: weakref.WeakKeyDictionary[Dataset, set[tuple[object, ...]]] = (
    weakref.WeakKeyDictionary())
_JOINING_LOCK = threading.Lock()


IDLE_WAIT_MAX = 5.0
"""Seconds :func:`prefetch_when_idle` waits at most for the pages being drawn to finish."""

_RUNS = threading.Condition()  # guards _running; notified when a page run ends
_running = 0  # script runs of this process inside page_run() now
_WAITING: set[tuple[int, tuple[object, ...], tuple[str, ...]]] = set()  # prefetches waiting


@contextmanager
def page_run() -> Iterator[None]:
    """Count a page's script run while it lasts (:func:`ireval_app.frame.page` wraps every
    page in it), for :func:`prefetch_when_idle`."""
    global _running
    with _RUNS:
        _running += 1
    try:
        yield
    finally:
        with _RUNS:
            _running -= 1
            _RUNS.notify_all()


def prefetch_when_idle(dataset: Dataset, options: EvalOptions,
                       measures: tuple[str, ...] | None = None) -> threading.Thread | None:
    """:func:`prefetch` once no page of any session is being drawn (:func:`page_run`), or
    after :data:`IDLE_WAIT_MAX` seconds, on a thread that waits for the work it starts.

    Called at the end of a page's run (``measures``: by default :func:`prefetch_measures`,
    read now, in the session): the background work for the next pages (joins on both
    cores, evaluations) does not compete with the sessions still drawing their first page,
    as when many open one link at once. Returns the waiting thread (named like the join
    threads, ``ireval-join-prefetch``), or ``None`` when the same work is already waiting.
    The work and its numbers are those of :func:`prefetch`; only when it starts differs.
    """
    wanted = prefetch_measures() if measures is None else tuple(measures)
    key = (id(dataset), join_key(options), wanted)
    with _RUNS:
        if key in _WAITING:
            return None
        _WAITING.add(key)

    def wait_then_prefetch() -> None:
        deadline = time.monotonic() + IDLE_WAIT_MAX
        try:
            with _RUNS:
                while _running and (left := deadline - time.monotonic()) > 0:
                    _RUNS.wait(left)
        finally:
            with _RUNS:
                _WAITING.discard(key)
        for thread in prefetch(dataset, options, wanted):
            thread.join()

    thread = threading.Thread(target=wait_then_prefetch, name="ireval-join-prefetch",
                              daemon=True)
    thread.start()
    return thread


def prefetch(dataset: Dataset, options: EvalOptions,
             measures: tuple[str, ...] | None = None) -> list[threading.Thread]:
    """After a page is drawn: :meth:`~ireval_core.dataset.Dataset.prefetch` of ``measures``
    (by default :func:`prefetch_measures`) under ``options``, with the joins on two
    threads; returns the threads started (none when all of it was asked for before).

    The dataset's prefetch joins the runs one after another on one thread (and
    evaluates each run once it is joined, on another); a second thread joins them from
    the last run backwards, once per join option set, so on two cores the first results
    page waits for about half the joins; that thread then imports scipy.stats
    (:mod:`ireval_core.stats`, for the pages' tests and intervals). A join either thread
    is making is waited for by the other (:meth:`ireval_core.data.JoinCache.ranked`),
    never made twice: the same joins, and so the same numbers.
    """
    key = join_key(options)
    with _JOINING_LOCK:
        seen = _JOINING.setdefault(dataset, set())
        first = key not in seen
        seen.add(key)
    started = []
    if first and len(dataset.runs) > 1:
        started.append(threading.Thread(target=_join_backwards, args=(dataset, options),
                                        name="ireval-join-prefetch", daemon=True))
        started[-1].start()
    joining = dataset.joins.prefetch(dataset.qrels, dataset.runs, options)
    evaluating = dataset.prefetch(options, prefetch_measures() if measures is None
                                  else measures)
    return started + [t for t in dict.fromkeys((joining, evaluating)) if t is not None]


def _join_backwards(dataset: Dataset, options: EvalOptions) -> None:
    for run in reversed(dataset.runs):
        try:
            dataset.joins.ranked(dataset.qrels, run, options)
        except Exception:  # noqa: BLE001 - the page that needs the join will say why
            return
    # then scipy.stats (about 0.6 s): the statistics of the other results pages need it
    import ireval_core.stats  # noqa: F401


@shared(session_entries=16, show_spinner="Evaluating…")
def _evaluate_cached(dataset_key: str, _dataset: Dataset, measures: tuple[str, ...],
                     options: EvalOptions) -> Evaluation:
    """:func:`ireval_core.evaluate` of every run of the dataset, cached.

    Cached by ``dataset_key`` (use :func:`ireval_app.state.get_dataset_key`), the
    measures and the options; the dataset itself is not hashed. Joins come from the
    dataset's :class:`~ireval_core.data.JoinCache`: another page's measures, or another
    relevance level, reuse them. Raises
    :class:`~ireval_core.errors.UnknownMeasureError` for an unknown measure (parse
    user text with :func:`parse_specs` first to show it).

    After a restart, an evaluation made before is mapped from the parsed-column cache
    (:func:`ireval_app.cache.column_cache`; off with ``IREVAL_CACHE=off``) instead of
    joined and computed: it is kept there under the dataset key (a digest of every
    file's name, SHA-256 and comment rule), the measures, every option and the code's
    version (:func:`ireval_core.evaluate.evaluation_key`), and checked when read.
    """
    columns = column_cache() if dataset_key else None
    if columns is None:
        return _dataset.evaluate(list(measures), options)
    key = evaluation_key(dataset_key, measures, options)
    hit = cached_evaluation(columns, key, _dataset.runs, measures, options)
    if hit is not None:
        # the background evaluation of these measures after the page (prefetch) and the
        # other pages' evaluations under these options find them, not computed again
        _dataset.values.keep(_dataset.qrels, _dataset.runs, hit)
        return hit
    res = _dataset.evaluate(list(measures), options)
    store_evaluation(columns, key, res)
    return res


# ----------------------------------------------------------------------------- from an evaluation
# ``_res`` is evaluate_cached(dataset_key, _, measures, options): those arguments stand for it.


@shared(copy=True)
def table_cached(dataset_key: str, measures: tuple[str, ...], options: EvalOptions,
                 _res: Evaluation) -> MetricsTable:
    """:func:`ireval_core.tables.metrics_table` (means, t intervals, best), cached."""
    return metrics_table(_res)


@shared()
def metric_bars_cached(dataset_key: str, measures: tuple[str, ...], options: EvalOptions,
                       _table: MetricsTable) -> go.Figure:
    """:func:`ireval_core.charts.metric_bars` of the table's means and intervals (``_table``
    is :func:`table_cached` of the same arguments), cached: built once, and the same figure
    is drawn by every session showing this evaluation (drawing a figure does not change it)."""
    return charts.metric_bars(_table.mean, _table.low, _table.high)


@shared()
def per_query_chart_cached(dataset_key: str, measures: tuple[str, ...], options: EvalOptions,
                           measure: str, _res: Evaluation) -> go.Figure:
    """:func:`ireval_core.charts.per_query_distribution` of ``measure``'s per-query values
    (:func:`measure_values`), cached like :func:`metric_bars_cached`."""
    return charts.per_query_distribution(measure_values(_res, measure), measure)


@shared(copy=True)
def ideal_pairs_cached(dataset_key: str, measures: tuple[str, ...], options: EvalOptions,
                       k: int, _res: Evaluation) -> pd.DataFrame:
    """:func:`ireval_core.ideal.ideal_pairs` at cutoff ``k``, cached."""
    return ideal_pairs(_res, k)


# ----------------------------------------------------------------------------- page helpers


def parse_specs(texts: Iterable[str], *, judgments: Collection[str] = ("qrels",)
                ) -> tuple[tuple[str, ...], list[str]]:
    """Canonical text of each measure spec in ``texts`` (in order, without repeats).

    Returns ``(valid specs, error messages)``; blank entries and commas separate specs
    in free text are the caller's business. A measure computed from other judgments
    than those in ``judgments`` (``Family.judgments``: the preference and judgment-group
    measures, which only the Metrics page evaluates) is an error saying so. Never raises.
    """
    valid: list[str] = []
    errors: list[str] = []
    for text in texts:
        if not text.strip():
            continue
        try:
            m = parse_measure(text)
        except UnknownMeasureError as exc:
            errors.append(str(exc))
            continue
        spec = str(m)
        if m.family.judgments not in judgments:
            errors.append(f"{spec} is computed from {m.family.needs}, not from a run joined "
                          "with the qrels: the Metrics page shows it (from the loaded qrels, "
                          "as trec_eval does).")
            continue
        if spec not in valid:
            valid.append(spec)
    return tuple(valid), errors


def measure_values(res: Evaluation, measure: str) -> pd.DataFrame:
    """The rows of ``res.tidy()`` of one measure whose value is not NaN (columns
    ``system``, ``query``, ``measure``, ``value``), without building the whole tidy table."""
    frames = [pd.DataFrame({"system": s, "query": res.query_ids[s], "measure": measure,
                            "value": res.values[(s, measure)]}) for s in res.systems
              if (s, measure) in res.values]
    if not frames:
        return pd.DataFrame(columns=["system", "query", "measure", "value"])
    values = pd.concat(frames, ignore_index=True)
    return values[values["value"].notna()]
