"""Cached labeling-round computations for the Labeling rounds page.

Each function calls :mod:`ireval_core.rounds` and is cached by explicit arguments
only: ``key`` is a fingerprint of the inputs (the dataset key and the digest of the
other round's bytes, plus which one is old), standing for the unhashed qrels and runs.
Results hold pandas tables, so they are cached as copies (:func:`ireval_app.shared_cache.shared`
with ``copy=True``, byte-bounded): every session gets its own copy, and no page can
change another session's numbers.
"""

from __future__ import annotations

import pandas as pd

from ireval_core import rounds
from ireval_core.data import Qrels, Run
from ireval_core.dataset import Dataset
from ireval_core.escape import csv_frame
from ireval_core.options import EvalOptions

from . import cache
from .shared_cache import shared

__all__ = ["MEASURE_CHOICES", "compare_cached", "coverage_cached", "other_round",
           "stability_cached", "to_label_cached", "to_label_csv"]

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "bpref", "nDCG", "P@5")
"""Measures offered for the stability table; any other measure text can be typed in."""


def other_round(name: str, data: bytes, options: EvalOptions) -> cache.LoadedFile:
    """The uploaded qrels of another round, read as the Data page reads a qrels file
    (:func:`~ireval_app.cache.load_qrels`, with the options' comment rule): its qrels, or
    the :class:`~ireval_core.errors.FormatError` naming the file and line; never raises."""
    return cache.load_qrels(name, data, comments=cache.reads_comments(options))


@shared(copy=True, show_spinner="Comparing the rounds…")
def compare_cached(key: str, _old: Qrels, _new: Qrels, options: EvalOptions
                   ) -> rounds.RoundsDiff:
    """:func:`ireval_core.rounds.compare_qrels`, cached by ``key`` and the options."""
    return rounds.compare_qrels(_old, _new, options=options)


@shared(copy=True, show_spinner="Scoring the runs under both rounds…")
def stability_cached(key: str, _old: Qrels, _new: Qrels, _runs: tuple[Run, ...],
                     measure: str, options: EvalOptions) -> rounds.Stability:
    """:func:`ireval_core.rounds.ranking_stability` under ``options``, cached."""
    return rounds.ranking_stability(_old, _new, _runs, measure, options=options)


@shared(copy=True)
def coverage_cached(key: str, _qrels: Qrels, _runs: tuple[Run, ...], k: int,
                    _dataset: Dataset | None = None) -> pd.DataFrame:
    """:func:`ireval_core.rounds.coverage`, cached by ``key`` and ``k``; with the dataset
    of these qrels and runs, its kept joins and values are reused (the same numbers)."""
    if _dataset is None:
        return rounds.coverage(_qrels, _runs, k)
    return rounds.coverage(_qrels, _runs, k, joins=_dataset.joins, values=_dataset.values)


@shared(copy=True)
def to_label_cached(key: str, _qrels: Qrels, _runs: tuple[Run, ...], k: int) -> pd.DataFrame:
    """:func:`ireval_core.rounds.to_label`, cached by ``key`` and ``k``."""
    return rounds.to_label(_qrels, _runs, k)


def to_label_csv(table: pd.DataFrame) -> bytes:
    """The to-label list as CSV (UTF-8, header row) for the judges."""
    return csv_frame(table).to_csv(index=False).encode("utf-8")
