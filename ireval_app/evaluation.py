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
import weakref
from collections.abc import Collection, Iterable

import pandas as pd
from streamlit.runtime.scriptrunner import get_script_run_ctx

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

__all__ = ["METRICS_DEFAULT", "evaluate_cached", "ideal_pairs_cached", "measure_values",
           "parse_specs", "prefetch", "prefetch_measures", "table_cached"]


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


def prefetch(dataset: Dataset, options: EvalOptions) -> None:
    """After a page is drawn: :meth:`~ireval_core.dataset.Dataset.prefetch` of
    :func:`prefetch_measures` under ``options``, with the joins on two threads.

    The dataset's prefetch joins the runs one after another on one thread (and
    evaluates each run once it is joined, on another); a second thread joins them from
    the last run backwards, once per join option set, so on two cores the first results
    page waits for about half the joins; that thread then imports scipy
    (:mod:`ireval_core.stats`, for the Metrics table's intervals). A join either thread
    is making is waited for by the other (:meth:`ireval_core.data.JoinCache.ranked`),
    never made twice: the same joins, and so the same numbers.
    """
    key = join_key(options)
    with _JOINING_LOCK:
        seen = _JOINING.setdefault(dataset, set())
        first = key not in seen
        seen.add(key)
    if first and len(dataset.runs) > 1:
        threading.Thread(target=_join_backwards, args=(dataset, options),
                         name="ireval-join-prefetch", daemon=True).start()
    dataset.prefetch(options, prefetch_measures())


def _join_backwards(dataset: Dataset, options: EvalOptions) -> None:
    for run in reversed(dataset.runs):
        try:
            dataset.joins.ranked(dataset.qrels, run, options)
        except Exception:  # noqa: BLE001 - the page that needs the join will say why
            return
    # then scipy (about 0.6 s): the Metrics table's t intervals need it (ireval_core.stats)
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
