"""Cached reading and computing for the Labeling pages, keyed by explicit arguments only.

Labeling files are read once per (names, digests, label map), through the parsed-column
cache (:func:`ireval_app.cache.column_cache`: after a restart, a saved labeling set
reopened or the same files uploaded again are mapped, not read): the resulting
:class:`~ireval_core.labels.Judgments` is immutable (read-only arrays) and shared
between sessions (:func:`ireval_app.shared_cache.shared`; each session holds its own, the
cache keeps recent ones within its byte budget). Everything computed from it holds
pandas tables and is cached as copies (``copy=True``), so each session gets its own. A
file that cannot be read gives its :class:`~ireval_core.errors.FormatError` (holding
nothing of the input), never a traceback. Nothing here reads widget values.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import streamlit as st

from ireval_core.errors import FormatError, TooLargeError
from ireval_core.labels import (
    AnchorDrift,
    JudgeReport,
    Judgments,
    LabelMap,
    NoiseTrend,
    OfflineOnline,
    Trend,
    anchor_drift,
    dcg_decomposition,
    file_rounds,
    judge_report,
    label_changes,
    noise_trend,
    offline_online,
    plan_next_round,
    read_anchors,
    read_judgments,
    trend,
)
from ireval_core.labels.agreement import RaterReport, rater_report
from ireval_core.labels.gsb import GsbJudgments, gsb_by_round, read_gsb
from ireval_core.labels.judge import JUDGE_MAX_WORK, check_judge_work
from ireval_core.labels.ppi import PPIReport, ppi_report
from ireval_core.labels.reader import cached_read_judgments
from ireval_core.workspace import DatasetVersion, FileRounds

from .cache import StoredFile, column_cache, without_traceback
from .shared_cache import shared

__all__ = ["SAMPLE_DIR", "SAMPLE_JUDGE", "Anchors", "Files", "Loaded", "anchors_cached",
           "changes_cached", "decomposition_cached", "file_rounds_cached", "gsb_cached",
           "JUDGE_LIMIT_VAR", "JUDGE_RESAMPLES", "judge_cached", "judge_limit",
           "judge_refusal", "load_gsb", "ppi_cached", "ppi_of", "load_judgments",
           "noise_trend_cached",
           "offline_online_cached", "people_cached", "plan_cached", "raters_cached",
           "sample_anchors", "sample_files", "trend_cached", "versions_table",
           "workspace_id"]

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data" / "labels"
"""The bundled labeling sample: six monthly rounds, two systems, three raters, a model
judge (``judge_llm.csv``) and anchor items (``anchors.csv``)."""
SAMPLE_JUDGE = "llm"
"""The model judge of the bundled sample (its labels are in ``judge_llm.csv``)."""
JUDGE_LIMIT_VAR = "IREVAL_JUDGE_MAX_WORK"
"""Environment variable: this server's largest model-judge report, in (round, system)
points x resamples (a whole number; 0: no limit); default
:data:`~ireval_core.labels.judge.JUDGE_MAX_WORK`."""
JUDGE_RESAMPLES = 2000
"""The resamples of the Model judge page's bootstraps (``judge_report``'s default)."""


@dataclass(frozen=True, eq=False)
class Loaded:
    """Labeling files after reading: the judgments (or GSB judgments), or the error."""

    names: tuple[str, ...]
    key: str
    judgments: Judgments | None = None
    gsb: GsbJudgments | None = None
    error: FormatError | None = None


@dataclass(frozen=True, eq=False)
class Files:
    """Files as ``(name, bytes)`` with the fingerprint of their names and contents.

    The fingerprint is computed once, when the files arrive (:meth:`of`), not on
    every rerun of every labeling page: it is the cache key of what is read from them.
    A saved set's files (:meth:`stored`) are known by the SHA-256 the workspace keeps:
    their fingerprint is made of those, and their bytes are read out of the workspace
    only when asked for (:attr:`files`), so that a set whose judgments are in the
    column cache is opened without reading it (:func:`load_judgments`).
    """

    sources: tuple[tuple[str, bytes | StoredFile], ...] = ()
    key: str = ""
    _fetched: dict[int, bytes] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @classmethod
    def of(cls, files: Sequence[tuple[str, bytes]]) -> Files:
        return cls(tuple(files), _fingerprint(
            [(name, hashlib.sha256(data).digest()) for name, data in files]))

    @classmethod
    def stored(cls, files: Sequence[tuple[str, StoredFile]]) -> Files:
        """Files kept in the workspace: the same fingerprint as :meth:`of` of their
        bytes, from their SHA-256; nothing read."""
        return cls(tuple(files), _fingerprint(
            [(name, bytes.fromhex(f.sha256)) for name, f in files]))

    @property
    def files(self) -> tuple[tuple[str, bytes], ...]:
        """``(name, bytes)`` of every file (a stored one read once, when first asked)."""
        out = []
        for i, (name, data) in enumerate(self.sources):
            if isinstance(data, StoredFile):
                with self._lock:
                    if i not in self._fetched:
                        self._fetched[i] = data.fetch()
                    data = self._fetched[i]
            out.append((name, data))
        return tuple(out)

    @property
    def hashes(self) -> tuple[tuple[str, str], ...] | None:
        """``(name, SHA-256)`` of every file when all are stored files, else ``None``."""
        if not all(isinstance(d, StoredFile) for _, d in self.sources):
            return None
        return tuple((n, d.sha256) for n, d in self.sources  # type: ignore[union-attr]
                     )

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.sources)

    def __bool__(self) -> bool:
        return bool(self.sources)


def _fingerprint(named: Sequence[tuple[str, bytes]]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for name, sha in named:
        h.update(name.encode() + b"\0" + sha)
    return h.hexdigest()


@st.cache_resource(show_spinner=False)
def sample_files() -> tuple[Files, Files]:
    """The bundled sample: (labeling files, GSB files), read from disk once."""
    labels = [(p.name, p.read_bytes()) for p in [*sorted(SAMPLE_DIR.glob("labels_*.csv")),
                                                  *sorted(SAMPLE_DIR.glob("judge_*.csv"))]]
    gsb = [(p.name, p.read_bytes()) for p in sorted(SAMPLE_DIR.glob("gsb*.csv"))]
    return Files.of(labels), Files.of(gsb)


@st.cache_resource(show_spinner=False)
def sample_anchors() -> Files:
    """The bundled sample's anchor items (``anchors.csv``), read from disk once."""
    return Files.of([(p.name, p.read_bytes()) for p in sorted(SAMPLE_DIR.glob("anchors*.csv"))])


@st.cache_resource(max_entries=16, show_spinner=False)
def workspace_id(key: str, _files: tuple[tuple[str, str, bytes], ...]) -> str:
    """The workspace dataset id of ``(kind, name, bytes)`` files, once per fingerprint
    ``key`` (a SHA-256 over every byte: not on every rerun)."""
    from ireval_core.workspace import dataset_id_of

    return dataset_id_of(list(_files))


@st.cache_resource(max_entries=64, show_spinner=False)
def _file_rounds(kind: str, name: str, digest: str, round_: str,
                 _data: bytes) -> FileRounds | FormatError:
    try:
        if kind == "gsb":
            g = read_gsb((name, _data))
            return FileRounds(g.rounds, len(g.table))
        rounds, rows = file_rounds((name, _data), round=round_ or None)
        return FileRounds(rounds, rows)
    except FormatError as exc:
        return without_traceback(exc)


def file_rounds_cached(kind: str, name: str, data: bytes, round_: str = ""
                       ) -> FileRounds | FormatError:
    """The rounds and rows of one labeling (``kind="labels"``) or GSB file, what a saved
    set records for it (:class:`~ireval_core.workspace.FileRounds`), or why it cannot be
    read; ``round_``: the round of a tool export that names none. Cached by the file's
    name and digest, never raises."""
    digest = hashlib.blake2b(data, digest_size=16).hexdigest()
    return _file_rounds(kind, name, digest, round_, data)


def versions_table(versions: Sequence[DatasetVersion]) -> pd.DataFrame:
    """The versions of a saved set, newest first: one row each, for a page's table."""
    def names(files: object) -> str:
        return ", ".join(f.name for f in files)  # type: ignore[attr-defined]

    return pd.DataFrame({
        "Version": [v.version for v in versions],
        "Saved (UTC)": [f"{v.saved_at:%Y-%m-%d %H:%M}" for v in versions],
        "By": [v.saved_by for v in versions],
        "Files added": [names(v.added) for v in versions],
        "Rounds added": [", ".join(v.rounds) if v.rounds else "–" for v in versions],
        "Rows added": [v.rows for v in versions],
        "Replaced": [names(v.replaced) or "–" for v in versions],
        "Files": [v.n_files for v in versions],
        "Note": [v.note or "–" for v in versions],
    }).iloc[::-1].reset_index(drop=True)


def load_judgments(files: Files, label_map: str = "", conflicts: str = "refuse",
                   round_: str = "") -> Loaded:
    """Read labeling files with a label map text (``""`` = detect), the rule for one
    rater's different labels of a document in several lists (``conflicts``, see
    :func:`ireval_core.labels.read_judgments`) and the round of tool exports naming none
    (``round_``, ``""``: none given); never raises."""
    n = len(files.sources)
    with st.spinner(f"Reading {n} labeling file{'s' if n != 1 else ''}…"):
        return _read_judgments(files.key, files.names, label_map, conflicts, round_, files)


@shared(session_entries=2)
def _read_judgments(files_key: str, names: tuple[str, ...], label_map: str, conflicts: str,
                    round_: str, _files: Files) -> Loaded:
    # what everything computed from the judgments is keyed by
    key = f"{files_key}|{label_map}|{conflicts}|{round_}"
    try:
        mapping = LabelMap.parse(label_map) if label_map.strip() else None
        columns = column_cache()
        hashes = _files.hashes
        if columns is not None and hashes is not None:  # a saved set: not read if cached
            hit = cached_read_judgments(columns, hashes, label_map=mapping,
                                        conflicts=conflicts,  # type: ignore[arg-type]
                                        round=round_ or None)
            if hit is not None:
                return Loaded(names, key, judgments=hit)
        return Loaded(names, key, judgments=read_judgments(
            list(_files.files), label_map=mapping,
            conflicts=conflicts,  # type: ignore[arg-type]
            round=round_ or None, cache=columns))
    except FormatError as exc:
        return Loaded(names, key, error=without_traceback(exc))
    except ValueError as exc:  # a label map that cannot be read
        return Loaded(names, key, error=FormatError(str(exc), source="label map"))


def load_gsb(files: Files) -> Loaded:
    """Read side-by-side (GSB) files; never raises."""
    return _read_gsb(files.key, files.names, files.files)


@shared(session_entries=2)
def _read_gsb(key: str, names: tuple[str, ...],
              _files: tuple[tuple[str, bytes], ...]) -> Loaded:
    try:
        return Loaded(names, key, gsb=read_gsb(list(_files)))
    except FormatError as exc:
        return Loaded(names, key, error=without_traceback(exc))


@shared(copy=True, show_spinner="Computing the trend…")
def trend_cached(key: str, _j: Judgments, k: int, gain: str, combine: str,
                 by: str | None = None) -> Trend:
    """:func:`ireval_core.labels.trend`, cached by the files' key and the settings."""
    return trend(_j, k=k, gain=gain, combine=combine, by=by)  # type: ignore[arg-type]


@shared(copy=True, show_spinner="Scoring the model scores…")
def offline_online_cached(key: str, _j: Judgments, k: int, gain: str,
                          combine: str) -> OfflineOnline:
    """:func:`ireval_core.labels.offline_online`, cached; it reuses the trend of the same
    settings (:func:`trend_cached`, the Trend page's own) instead of bootstrapping again."""
    return offline_online(_j, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                          trend_result=trend_cached(key, _j, k, gain, combine))


@shared(copy=True, show_spinner="Measuring the raters' agreement…")
def raters_cached(key: str, _j: Judgments, combine: str) -> RaterReport:
    """:func:`ireval_core.labels.agreement.rater_report` of every round, cached; from the
    reader's integer codes (``label_codes``), not the text table."""
    return rater_report(_j.label_codes(), combine=combine)  # type: ignore[arg-type]


@shared(copy=True)
def changes_cached(key: str, _j: Judgments, old: str, new: str, combine: str) -> object:
    """:func:`ireval_core.labels.label_changes`, cached."""
    return label_changes(_j, old, new, combine=combine)  # type: ignore[arg-type]


@shared(copy=True)
def decomposition_cached(key: str, _j: Judgments, old: str, new: str, k: int, gain: str,
                         combine: str) -> object:
    """:func:`ireval_core.labels.dcg_decomposition`, cached."""
    return dcg_decomposition(_j, old, new, k=k, gain=gain,  # type: ignore[arg-type]
                             combine=combine)  # type: ignore[arg-type]


@shared(copy=True)
def plan_cached(key: str, _j: Judgments, round_: str, delta: float, k: int, gain: str,
                combine: str, alpha: float = 0.05, power: float = 0.8) -> object:
    """:func:`ireval_core.labels.plan_next_round`, cached."""
    return plan_next_round(_j, round_, delta=delta, k=k, gain=gain,  # type: ignore[arg-type]
                           combine=combine, alpha=alpha, power=power)  # type: ignore[arg-type]


@shared(copy=True)
def gsb_cached(key: str, _g: GsbJudgments) -> object:
    """:func:`ireval_core.labels.gsb.gsb_by_round`, cached."""
    return gsb_by_round(_g)


@shared(session_entries=2)
def people_cached(key: str, _j: Judgments, exclude: tuple[str, ...]) -> Judgments:
    """The judgments without the raters ``exclude`` (model judges): the people's labels,
    cached by the files' key and who is left out."""
    people = [r for r in _j.raters if r not in exclude]
    return _j.select(raters=people) if exclude and people else _j


@dataclass(frozen=True, eq=False)
class Anchors:
    """Anchor items after reading: their month-over-month check, or the error."""

    names: tuple[str, ...]
    drift: AnchorDrift | None = None
    error: FormatError | None = None


@shared(session_entries=2, show_spinner="Checking the anchor items…")
def anchors_cached(files_key: str, names: tuple[str, ...], label_map: str, combine: str,
                   _files: tuple[tuple[str, bytes], ...]) -> Anchors:
    """:func:`ireval_core.labels.read_anchors` and :func:`~ireval_core.labels.anchor_drift`
    of anchor files, cached by their fingerprint, the label map and ``combine``; never
    raises."""
    try:
        mapping = LabelMap.parse(label_map) if label_map.strip() else None
        table = read_anchors(list(_files), label_map=mapping)
        return Anchors(names, drift=anchor_drift(table, combine=combine))  # type: ignore[arg-type]
    except FormatError as exc:
        return Anchors(names, error=without_traceback(exc))
    except ValueError as exc:
        return Anchors(names, error=FormatError(str(exc), source="anchor items"))


@shared(copy=True, show_spinner="Computing the rater-noise intervals…")
def noise_trend_cached(key: str, _j: Judgments, k: int, gain: str, combine: str,
                       exclude: tuple[str, ...], alpha: float, power: float,
                       anchors_key: str = "", _anchors: AnchorDrift | None = None
                       ) -> NoiseTrend:
    """:func:`ireval_core.labels.noise_trend` of the people (``exclude``: the model
    judges), cached by the files' key, the settings and the anchors' key; it reuses the
    query bootstrap of the trend of the same settings (:func:`trend_cached`, the Trend
    page's own)."""
    return noise_trend(_j, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                       exclude=exclude, alpha=alpha, power=power, anchors=_anchors,
                       trend_result=None if exclude else trend_cached(key, _j, k, gain,
                                                                      combine))


def judge_limit(value: str | None = None) -> int | None:
    """The server's limit on a model-judge report, points x resamples: ``value`` (default:
    :data:`JUDGE_LIMIT_VAR`) when a whole number >= 0 (0: None, no limit), else
    :data:`~ireval_core.labels.judge.JUDGE_MAX_WORK`.

    >>> judge_limit("1000000"), judge_limit("0"), judge_limit(""), judge_limit("lots")
    (1000000, None, 10000000, 10000000)
    """
    text = (os.environ.get(JUDGE_LIMIT_VAR, "") if value is None else value).strip()
    if text.isdigit():
        return int(text) or None
    return JUDGE_MAX_WORK


def judge_refusal(j: Judgments) -> str | None:
    """Why the Model judge page refuses ``j`` (too large for :func:`judge_limit`, said
    with the numbers and the limit's name), or None; computes nothing."""
    try:
        check_judge_work(j, JUDGE_RESAMPLES, judge_limit(),
                         limit=f"this server's {JUDGE_LIMIT_VAR}",
                         hint="load the files of fewer rounds on the Labeling data page, or "
                              "ask whoever runs the server to raise the limit")
    except TooLargeError as exc:
        return str(exc)
    return None


@shared(copy=True, show_spinner="Checking the model judge against the people…")
def judge_cached(key: str, _j: Judgments, judge: str, k: int, gain: str, combine: str,
                 gsb_key: str = "", _gsb: GsbJudgments | None = None,
                 gsb_systems: tuple[str, str] | None = None) -> JudgeReport:
    """:func:`ireval_core.labels.judge_report` of ``judge`` against every other rater,
    cached by the files' key, the judge, the settings and the GSB files' key."""
    return judge_report(_j, judge, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                        gsb=_gsb, gsb_systems=gsb_systems if _gsb is not None else None,
                        n_resamples=JUDGE_RESAMPLES, max_work=judge_limit())


@shared(copy=True, show_spinner="Correcting the judge's labels with the people's…")
def ppi_cached(key: str, _j: Judgments, judge: str, k: int, gain: str, combine: str
               ) -> PPIReport:
    """:func:`ireval_core.labels.ppi.ppi_report` (model + people estimates) of ``judge``,
    cached by the files' key, the judge and the settings (the judge page's resamples)."""
    return ppi_report(_j, judge, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                      n_resamples=JUDGE_RESAMPLES)


def ppi_of(loaded: Loaded, judge: str | None, k: int, gain: str, combine: str
           ) -> PPIReport | str:
    """The model + people report of ``judge`` on every rater's labels of ``loaded`` (the
    Model judge page's :func:`ppi_cached`, the same cache entry, so both pages show the
    same numbers), or why there is none, in words."""
    j = loaded.judgments
    if j is None:
        return "no labeling files are loaded"
    if judge is None or judge not in j.raters:
        return ("no rater is marked as a model judge: mark the rater whose labels come from "
                "a model on the Model judge page")
    if len(j.raters) < 2:
        return "the files hold no people's labels besides the judge's"
    refusal = judge_refusal(j)
    if refusal is not None:
        return refusal
    return ppi_cached(loaded.key, j, judge, k, gain, combine)
