"""Every session-state key of the app, in one place, behind typed accessors.

Pages never touch ``st.session_state`` directly: they call these functions (widget keys
are passed as ``key=`` from the constants below).

What lives here
---------------
* the data source chosen on the Data page (bundled sample or upload);
* what was uploaded, already read (:class:`~ireval_app.cache.LoadedFiles`). A file
  uploader forgets its files when it is not rendered (another page, or the sample
  source chosen); the loaded files stay here, so nothing uploaded is lost;
* the current :class:`~ireval_core.dataset.Dataset` and its key, for every later page.
"""

from __future__ import annotations

from typing import Literal, cast

import streamlit as st

from ireval_core.dataset import Dataset

from . import cache

__all__ = [
    "QRELS_UPLOADER",
    "RUNS_UPLOADER",
    "SOURCE",
    "SOURCES",
    "SourceMode",
    "UploadKind",
    "EVAL_COMPLETE",
    "EVAL_DEPTH",
    "EVAL_IDCG_ZERO",
    "EVAL_JUDGED_ONLY",
    "EVAL_REL_LEVEL",
    "IDCG_ZERO_POLICIES",
    "clear_uploads",
    "get_dataset",
    "get_eval_options",
    "get_dataset_key",
    "get_source",
    "get_upload_ids",
    "init_eval_options",
    "get_uploaded",
    "mark_upload_changed",
    "pop_upload_changed",
    "set_loaded",
    "set_upload_ids",
    "set_uploaded",
]

SourceMode = Literal["sample", "upload"]
UploadKind = Literal["qrels", "runs"]
SOURCES: tuple[SourceMode, ...] = ("sample", "upload")

# widget keys
SOURCE = "ireval.source"
"""Radio on the Data page: ``"sample"`` or ``"upload"``."""
QRELS_UPLOADER = "ireval.upload.qrels"
RUNS_UPLOADER = "ireval.upload.runs"

# evaluation options (widgets of ireval_app.evaluation.evaluation_options, shared by pages)
EVAL_COMPLETE = "ireval.eval.complete"
"""Checkbox: average over every qrels query, a missing query scoring 0 (trec_eval -c)."""
EVAL_REL_LEVEL = "ireval.eval.rel_level"
"""Number: relevance threshold of binary measures (trec_eval -l)."""
EVAL_DEPTH = "ireval.eval.depth"
"""Number: keep the top N documents of each ranking; 0 = whole ranking (trec_eval -M)."""
EVAL_IDCG_ZERO = "ireval.eval.idcg_zero"
"""Radio: nDCG of a query without relevant documents, ``"zero"`` or ``"drop"``."""
EVAL_JUDGED_ONLY = "ireval.eval.judged_only"
"""Checkbox: remove unjudged documents from the rankings first (condensed lists)."""
IDCG_ZERO_POLICIES: tuple[str, ...] = ("zero", "drop")

# page widgets
METRICS_MEASURES = "ireval.metrics.measures"
"""Multiselect on the Metrics page: the measures of the table."""
METRICS_EXTRA = "ireval.metrics.extra"
"""Text on the Metrics page: more measure specs, separated by ``;``."""
METRICS_DISTRIBUTION = "ireval.metrics.distribution"
"""Select on the Metrics page: the measure of the per-query distribution chart."""
CURVES_QUERY = "ireval.curves.query"
"""Select on the Curves page: the query whose precision-recall curve is drawn."""
NDCG_K = "ireval.ndcg.k"
"""Select on the nDCG vs DCG page: the cutoff of DCG and nDCG."""
NDCG_RECALL_K = "ireval.ndcg.recall_k"
"""Select on the nDCG vs DCG page: the cutoff of recall."""
COMPARE_PREFIX = "ireval.compare."
"""Prefix of every widget key on the Compare page (one per setting)."""
QUERIES_PREFIX = "ireval.queries."
"""Prefix of every widget key on the Queries page (one per setting)."""

_EVAL_DEFAULTS: dict[str, object] = {
    EVAL_COMPLETE: False,
    EVAL_REL_LEVEL: 1.0,
    EVAL_DEPTH: 0,
    EVAL_IDCG_ZERO: "zero",
    EVAL_JUDGED_ONLY: False,
}

# plain keys
_UPLOAD_CHANGED = "ireval.upload.changed"  # set of UploadKind touched by the user
_UPLOAD_IDS = "ireval.upload.ids"  # UploadKind -> file ids last read
_UPLOADED = "ireval.upload.loaded"  # LoadedFiles read from uploads
_DATASET = "ireval.dataset"
_DATASET_KEY = "ireval.dataset.key"


# ----------------------------------------------------------------------------- data source


def get_source() -> SourceMode | None:
    """The data source chosen on the Data page, or ``None`` before the page first ran."""
    value = st.session_state.get(SOURCE)
    return cast(SourceMode, value) if value in SOURCES else None


# ----------------------------------------------------------------------------- dataset


def get_dataset() -> Dataset | None:
    """The dataset the pages work on, or ``None`` when no valid qrels are loaded."""
    return st.session_state.get(_DATASET)


def get_dataset_key() -> str | None:
    """Fingerprint of the loaded inputs: use it as the cache key of anything derived.

    Example: ``@st.cache_data def scores(key: str, _dataset: Dataset, ...)`` called as
    ``scores(state.get_dataset_key(), state.get_dataset(), ...)``.
    """
    return st.session_state.get(_DATASET_KEY)


def set_loaded(files: cache.LoadedFiles | None) -> Dataset | None:
    """Make ``files`` the current data; returns (and stores) their dataset, if any."""
    dataset = None if files is None else cache.dataset_for(files)
    st.session_state[_DATASET] = dataset
    st.session_state[_DATASET_KEY] = None if dataset is None or files is None else files.key
    return dataset


# ----------------------------------------------------------------------------- evaluation options


def init_eval_options() -> None:
    """Put the default evaluation options in session state (before their widgets draw)."""
    for key, default in _EVAL_DEFAULTS.items():
        if key not in st.session_state:
            st.session_state[key] = default


def get_eval_options() -> dict[str, object]:
    """The evaluation options as keyword arguments of :func:`ireval_core.evaluate`.

    Keys: ``complete``, ``depth`` (``None`` = whole ranking), ``rel_level``,
    ``idcg_zero`` and ``judged_only``; defaults when the widgets were never drawn.
    """
    get = st.session_state.get
    depth = int(get(EVAL_DEPTH, 0) or 0)
    idcg = get(EVAL_IDCG_ZERO, "zero")
    return {
        "complete": bool(get(EVAL_COMPLETE, False)),
        "depth": depth if depth > 0 else None,
        "rel_level": float(get(EVAL_REL_LEVEL, 1.0)),
        "idcg_zero": idcg if idcg in IDCG_ZERO_POLICIES else "zero",
        "judged_only": bool(get(EVAL_JUDGED_ONLY, False)),
    }


# ----------------------------------------------------------------------------- uploads


def get_uploaded() -> cache.LoadedFiles:
    """The uploaded files read so far (empty when nothing was uploaded)."""
    return st.session_state.get(_UPLOADED) or cache.LoadedFiles()


def set_uploaded(files: cache.LoadedFiles) -> None:
    st.session_state[_UPLOADED] = files


def get_upload_ids(kind: UploadKind) -> tuple[str, ...]:
    """File ids of the uploads of ``kind`` that :func:`get_uploaded` holds."""
    return st.session_state.get(_UPLOAD_IDS, {}).get(kind, ())


def set_upload_ids(kind: UploadKind, ids: tuple[str, ...]) -> None:
    st.session_state[_UPLOAD_IDS] = {**st.session_state.get(_UPLOAD_IDS, {}), kind: ids}


def mark_upload_changed(kind: UploadKind) -> None:
    """``on_change`` callback of the uploaders: the user added or removed files."""
    st.session_state[_UPLOAD_CHANGED] = st.session_state.get(_UPLOAD_CHANGED, set()) | {kind}


def pop_upload_changed(kind: UploadKind) -> bool:
    """Whether the user changed the uploads of ``kind`` since the last call."""
    changed: set[str] = st.session_state.get(_UPLOAD_CHANGED, set())
    st.session_state[_UPLOAD_CHANGED] = changed - {kind}
    return kind in changed


def clear_uploads() -> None:
    """Forget every uploaded file (the button next to files kept from an earlier upload)."""
    for key in (_UPLOADED, _UPLOAD_IDS, _UPLOAD_CHANGED):
        st.session_state.pop(key, None)
ROUNDS_UPLOADER = "ireval.rounds.upload"
"""File uploader on the Labeling rounds page: the qrels of another round."""
ROUNDS_SWAP = "ireval.rounds.swap"
"""Toggle on the Labeling rounds page: the uploaded round is the newer one."""
ROUNDS_MEASURE = "ireval.rounds.measure"
"""Select on the Labeling rounds page: the measure of the ranking-stability table."""
ROUNDS_K = "ireval.rounds.k"
"""Number on the Labeling rounds page: the depth k of coverage and of the to-label list."""
