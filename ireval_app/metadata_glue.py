"""Cached reading of query metadata files (segments, traffic weights, latencies).

:func:`load_metadata` reads an upload through :func:`ireval_core.metadata.read_metadata`,
cached as a copy (:func:`ireval_app.shared_cache.shared`, byte-bounded) by the file name and a
digest of its bytes (the bytes themselves are not hashed again): every session gets its
own copy. A file that cannot be
read gives a :class:`LoadedMetadata` carrying the
:class:`~ireval_core.errors.FormatError`: errors are cached and shown, never raised into
the page. Nothing here reads widget values, session state or other globals.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from ireval_core.errors import FormatError
from ireval_core.metadata import QueryMetadata, read_metadata

from .cache import SAMPLE_DIR, digest
from .shared_cache import shared

__all__ = ["FORMAT_HELP", "MEASURE_CHOICES", "SAMPLE_METADATA", "LoadedMetadata",
           "load_metadata", "load_sample_metadata"]

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
