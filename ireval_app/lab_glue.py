"""Cached explanations for the Metric lab page, keyed by explicit arguments only.

A preset is recomputed once per process and options; an explanation once per list,
measure and options; a loaded run's list of a query once per dataset key. Results
hold pandas tables, so they are cached as copies (:func:`ireval_app.shared_cache.shared`
with ``copy=True``): each session gets its own. Nothing here reads widget values or
session state.
"""

from __future__ import annotations

from ireval_core import lab
from ireval_core.data import evaluated_queries
from ireval_core.dataset import Dataset
from ireval_core.options import EvalOptions

from .shared_cache import shared

__all__ = ["explain_cached", "preset_cached", "queries_cached", "query_list_cached"]


@shared(copy=True)
def preset_cached(key: str) -> lab.PresetResult:
    """:func:`ireval_core.lab.run_preset` of the preset ``key`` (trec_eval's defaults, as
    the seeds use them)."""
    return lab.run_preset(lab.preset(key))


@shared(copy=True)
def explain_cached(grades: tuple[float, ...], spec: str, options: EvalOptions,
                   unretrieved: tuple[float, ...], scores: tuple[float, ...] | None = None,
                   top_grade: float | None = None) -> lab.Explanation:
    """:func:`ireval_core.lab.explain`, cached; raises its ``ValueError`` (not cached)."""
    return lab.explain(grades, spec, unretrieved=unretrieved, options=options, scores=scores,
                       top_grade=top_grade)


@shared()
def queries_cached(dataset_key: str, run_name: str, _dataset: Dataset) -> tuple[str, ...]:
    """The judged queries run ``run_name`` answers, as text, in their order."""
    run = _dataset.run(run_name)
    return tuple(str(q) for q in evaluated_queries(_dataset.qrels, run))


@shared()
def query_list_cached(dataset_key: str, run_name: str, query: str,
                      _dataset: Dataset) -> lab.LabList:
    """:func:`ireval_core.lab.query_list` of one query of run ``run_name`` (immutable)."""
    return lab.query_list(_dataset.qrels, _dataset.run(run_name), query)
