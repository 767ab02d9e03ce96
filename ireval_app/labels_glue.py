"""Cached reading and computing for the Labeling pages, keyed by explicit arguments only.

Labeling files are read once per (names, digests, label map): the resulting
:class:`~ireval_core.labels.Judgments` is immutable (read-only arrays) and shared
between sessions (``st.cache_resource``). Everything computed from it holds pandas
tables and is cached with ``st.cache_data``, so each session gets its own copy. A file
that cannot be read gives its :class:`~ireval_core.errors.FormatError`, never a
traceback. Nothing here reads widget values or session state.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from ireval_core.agreement import RaterReport, rater_report
from ireval_core.errors import FormatError
from ireval_core.gsb import GsbJudgments, gsb_by_round, read_gsb
from ireval_core.labels import (
    Judgments,
    LabelMap,
    OfflineOnline,
    Trend,
    dcg_decomposition,
    label_changes,
    offline_online,
    plan_next_round,
    read_judgments,
    trend,
)

__all__ = ["SAMPLE_DIR", "Loaded", "changes_cached", "decomposition_cached", "gsb_cached",
           "load_gsb", "load_judgments", "offline_online_cached", "plan_cached",
           "raters_cached", "sample_files", "trend_cached"]

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data" / "labels"
"""The bundled labeling sample: six monthly rounds, two systems, three raters."""


@dataclass(frozen=True, eq=False)
class Loaded:
    """Labeling files after reading: the judgments (or GSB judgments), or the error."""

    names: tuple[str, ...]
    key: str
    judgments: Judgments | None = None
    gsb: GsbJudgments | None = None
    error: FormatError | None = None


def _key(files: Sequence[tuple[str, bytes]], extra: str = "") -> str:
    h = hashlib.blake2b(digest_size=16)
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.blake2b(data, digest_size=16).digest())
    h.update(extra.encode())
    return h.hexdigest()


def sample_files() -> tuple[list[tuple[str, bytes]], list[tuple[str, bytes]]]:
    """The bundled sample: (labeling files, GSB files) as ``(name, bytes)``."""
    labels = [(p.name, p.read_bytes()) for p in sorted(SAMPLE_DIR.glob("labels_*.csv"))]
    gsb = [(p.name, p.read_bytes()) for p in sorted(SAMPLE_DIR.glob("gsb*.csv"))]
    return labels, gsb


def load_judgments(files: Sequence[tuple[str, bytes]], label_map: str = "") -> Loaded:
    """Read labeling files (and a label map text, ``""`` = detect); never raises."""
    key = _key(files, label_map)
    with st.spinner(f"Reading {len(files)} labeling file(s)…"):
        return _read_judgments(key, tuple(n for n, _ in files), label_map, tuple(files))


@st.cache_resource(max_entries=8, show_spinner=False)
def _read_judgments(key: str, names: tuple[str, ...], label_map: str,
                    _files: tuple[tuple[str, bytes], ...]) -> Loaded:
    try:
        mapping = LabelMap.parse(label_map) if label_map.strip() else None
        return Loaded(names, key, judgments=read_judgments(list(_files), label_map=mapping))
    except FormatError as exc:
        return Loaded(names, key, error=exc)
    except ValueError as exc:  # a label map that cannot be read
        return Loaded(names, key, error=FormatError(str(exc), source="label map"))


def load_gsb(files: Sequence[tuple[str, bytes]]) -> Loaded:
    """Read side-by-side (GSB) files; never raises."""
    key = _key(files, "gsb")
    return _read_gsb(key, tuple(n for n, _ in files), tuple(files))


@st.cache_resource(max_entries=8, show_spinner=False)
def _read_gsb(key: str, names: tuple[str, ...],
              _files: tuple[tuple[str, bytes], ...]) -> Loaded:
    try:
        return Loaded(names, key, gsb=read_gsb(list(_files)))
    except FormatError as exc:
        return Loaded(names, key, error=exc)


@st.cache_data(max_entries=32, show_spinner="Computing the trend…")
def trend_cached(key: str, _j: Judgments, k: int, gain: str, combine: str,
                 by: str | None = None) -> Trend:
    """:func:`ireval_core.labels.trend`, cached by the files' key and the settings."""
    return trend(_j, k=k, gain=gain, combine=combine, by=by)  # type: ignore[arg-type]


@st.cache_data(max_entries=16, show_spinner="Scoring the model scores…")
def offline_online_cached(key: str, _j: Judgments, k: int, gain: str,
                          combine: str) -> OfflineOnline:
    """:func:`ireval_core.labels.offline_online`, cached."""
    return offline_online(_j, k=k, gain=gain, combine=combine)  # type: ignore[arg-type]


@st.cache_data(max_entries=16, show_spinner="Measuring the raters' agreement…")
def raters_cached(key: str, _j: Judgments, combine: str) -> RaterReport:
    """:func:`ireval_core.agreement.rater_report` of every round, cached."""
    return rater_report(_j.label_table(), combine=combine)  # type: ignore[arg-type]


@st.cache_data(max_entries=16, show_spinner=False)
def changes_cached(key: str, _j: Judgments, old: str, new: str, combine: str) -> object:
    """:func:`ireval_core.labels.label_changes`, cached."""
    return label_changes(_j, old, new, combine=combine)  # type: ignore[arg-type]


@st.cache_data(max_entries=16, show_spinner=False)
def decomposition_cached(key: str, _j: Judgments, old: str, new: str, k: int, gain: str,
                         combine: str) -> object:
    """:func:`ireval_core.labels.dcg_decomposition`, cached."""
    return dcg_decomposition(_j, old, new, k=k, gain=gain,  # type: ignore[arg-type]
                             combine=combine)  # type: ignore[arg-type]


@st.cache_data(max_entries=16, show_spinner=False)
def plan_cached(key: str, _j: Judgments, round_: str, delta: float, k: int, gain: str,
                combine: str) -> object:
    """:func:`ireval_core.labels.plan_next_round`, cached."""
    return plan_next_round(_j, round_, delta=delta, k=k, gain=gain,  # type: ignore[arg-type]
                           combine=combine)  # type: ignore[arg-type]


@st.cache_data(max_entries=16, show_spinner=False)
def gsb_cached(key: str, _g: GsbJudgments) -> object:
    """:func:`ireval_core.gsb.gsb_by_round`, cached."""
    return gsb_by_round(_g)
