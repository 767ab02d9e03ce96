"""Cached curve data per run for the Curves page, keyed by explicit arguments only.

One :class:`~ireval_core.curves.RunCurves` per (dataset key, run name, options): every
curve is computed from one join of the run with the qrels, the join the other pages
use too (kept in the dataset's :class:`~ireval_core.data.JoinCache`). Results hold
read-only arrays, so they are shared between sessions (:func:`ireval_app.shared_cache.shared`:
byte-bounded, and each session holds its own last 32). Nothing here reads widget values
or session state.
"""

from __future__ import annotations

from ireval_core.curves import RunCurves, run_curves
from ireval_core.dataset import Dataset
from ireval_core.options import EvalOptions

from .shared_cache import shared
from .working import working

__all__ = ["curves_for", "run_curves_cached"]


@shared(session_entries=32)
def run_curves_cached(dataset_key: str, _dataset: Dataset, run_name: str,
                      options: EvalOptions) -> RunCurves:
    """Curves of one run; cached by every argument except ``_dataset`` (its key stands in)."""
    return run_curves(_dataset.qrels, _dataset.run(run_name), options=options,
                      joins=_dataset.joins)


def curves_for(dataset_key: str, dataset: Dataset, options: EvalOptions) -> dict[str, RunCurves]:
    """:func:`run_curves_cached` of every run of ``dataset``, in run order."""
    with working("Computing the curves"):
        return {name: run_curves_cached(dataset_key, dataset, name, options)
                for name in dataset.run_names}
