"""Cached reading of query metadata files (segments, traffic weights, latencies).

:func:`load_metadata` reads an upload through :func:`ireval_core.metadata.read_metadata`,
cached as a copy (:func:`ireval_app.shared_cache.shared`, byte-bounded) by the file name and a
digest of its bytes (the bytes themselves are not hashed again): every session gets its
own copy. A file that cannot be
read gives a :class:`LoadedMetadata` carrying the
:class:`~ireval_core.errors.FormatError`: errors are cached and shown, never raised into
the page.

What the pages compute from the metadata (means and tests per segment, latency
percentiles, the Pareto front) is cached here too, by explicit arguments: the
metadata's digest stands for the metadata, the dataset key, measures and options for
the evaluation. Nothing here reads widget values, session state or other globals.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ireval_core.errors import FormatError
from ireval_core.evaluate import Evaluation
from ireval_core.metadata import (
    QueryMetadata,
    by_segment,
    compare_by_segment,
    efficiency_points,
    latency_summary,
    pareto_front,
    read_metadata,
)
from ireval_core.options import EvalOptions

from .cache import SAMPLE_DIR, digest
from .shared_cache import shared

__all__ = ["FORMAT_HELP", "MEASURE_CHOICES", "SAMPLE_METADATA", "LoadedMetadata",
           "by_segment_cached", "compare_by_segment_cached", "efficiency_cached",
           "latency_cached", "load_metadata", "load_sample_metadata"]

_log = logging.getLogger(__name__)

SAMPLE_METADATA = SAMPLE_DIR / "query_metadata.csv"
"""The bundled sample's query metadata (made by ``sample_data/make_metadata.py``)."""

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "nDCG", "ERR@10")
"""Effectiveness measures offered first; any other measure text can be typed in."""

FORMAT_HELP = (
    "CSV, TSV or Parquet with a header row, one row per query: a query column (`query`, "
    "`qid`, `topic`, ...), any categorical columns (segment, intent, language, ...), an "
    "optional traffic weight (`weight`, `traffic`, `traffic_weight` or `frequency`), and "
    "latencies in milliseconds, one column per run: `latency_ms_<run>` or "
    "`<run>_latency_ms`. Or long: a `system` column and a `latency_ms` column, one row per "
    "(query, run). Plain or gzip-compressed.")
"""Shown with the uploader: what a metadata file holds."""


@dataclass(frozen=True, eq=False)
class LoadedMetadata:
    """One metadata file after reading: its content, or the error that stopped it."""

    name: str
    digest: str
    metadata: QueryMetadata | None = None
    error: FormatError | None = None


def load_metadata(name: str, data: bytes) -> LoadedMetadata:
    """Read a metadata file given its name and raw bytes (plain or gzip); never raises.

    Cached by ``(name, digest(data))``.
    """
    return _read(name, digest(data), data)


def load_sample_metadata(path: Path = SAMPLE_METADATA) -> LoadedMetadata | None:
    """The bundled sample's metadata; ``None`` when the file is absent."""
    if not path.is_file():
        return None
    return load_metadata(path.name, path.read_bytes())


@shared(copy=True, show_spinner="Reading the query metadata…")
def _read(name: str, data_digest: str, _data: bytes) -> LoadedMetadata:
    try:
        return LoadedMetadata(name, data_digest, metadata=read_metadata(_data, name=name))
    except FormatError as exc:
        return LoadedMetadata(name, data_digest, error=exc)
    except Exception as exc:  # the app must show a message, never a traceback
        _log.exception("unexpected error reading metadata %s", name)
        return LoadedMetadata(name, data_digest, error=FormatError(
            f"could not read this metadata file ({type(exc).__name__}: {exc})", source=name))


# ----------------------------------------------------------------------------- computed from it
# "_" arguments are not part of the key: ``meta_key`` (the file's digest) stands for the
# metadata, ``dataset_key`` with the measures and the options for the evaluation.


@shared(copy=True, show_spinner="Splitting the means by segment…")
def by_segment_cached(dataset_key: str, measures: tuple[str, ...], options: EvalOptions,
                      meta_key: str, column: str, weighted: bool, _res: Evaluation,
                      _meta: QueryMetadata) -> pd.DataFrame:
    """:func:`ireval_core.metadata.by_segment` of an evaluation of ``measures``, cached."""
    return by_segment(_res, _meta, column, measures=list(measures), weighted=weighted)


@shared(copy=True, show_spinner="Testing again per segment…")
def compare_by_segment_cached(dataset_key: str, measures: tuple[str, ...],
                              options: EvalOptions, meta_key: str, column: str, measure: str,
                              a: str, b: str, test: str, alternative: str, correction: str,
                              alpha: float, n_resamples: int, seed: int, _res: Evaluation,
                              _meta: QueryMetadata) -> pd.DataFrame:
    """:func:`ireval_core.metadata.compare_by_segment`, cached (``_res`` evaluates
    ``measures`` under ``options``)."""
    return compare_by_segment(_res, _meta, column, measure=measure, a=a, b=b, test=test,
                              alternative=alternative, correction=correction, alpha=alpha,
                              n_resamples=n_resamples, seed=seed)


@shared(copy=True)
def latency_cached(meta_key: str, _meta: QueryMetadata) -> pd.DataFrame:
    """:func:`ireval_core.metadata.latency_summary` of every system, cached."""
    return latency_summary(_meta)


@shared(copy=True)
def efficiency_cached(dataset_key: str, measure: str, options: EvalOptions, meta_key: str,
                      latency: str, _res: Evaluation, _meta: QueryMetadata
                      ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(points, front)``: :func:`ireval_core.metadata.efficiency_points` of ``measure``
    against the ``latency`` statistic, and their :func:`~ireval_core.metadata.pareto_front`."""
    points = efficiency_points(_res, latency_cached(meta_key, _meta), measure,
                               latency=latency)
    return points, pareto_front(points)
