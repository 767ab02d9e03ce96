"""What every page shares, in session state, behind typed accessors.

Pages never touch ``st.session_state`` directly: they call these functions, and pass
widget keys as ``key=`` from the constants here (shared widgets) or from their own
module of :mod:`ireval_app.keys` (a page's own widgets and URL parameters).

What lives here
---------------
* the data source chosen on the Data page (bundled sample, upload or saved);
* what was uploaded, already read (:class:`~ireval_app.cache.LoadedFiles`). A file
  uploader forgets its files when it is not rendered (another page, or the sample
  source chosen); the loaded files stay here, so nothing uploaded is lost;
* the current :class:`~ireval_core.dataset.Dataset` and its key, for every later page,
  and whether it is the bundled sample or a saved dataset (its id, the URL's ``ds``).
  The callers read the dataset (:func:`ireval_app.cache.dataset_for`); this module
  only holds it;
* the evaluation options (:class:`~ireval_core.options.EvalOptions`) under a plain key
  that no widget owns: a widget's own state is dropped by Streamlit when the widget is
  not drawn, so the option widgets only *show* this value and write it back from their
  ``on_change`` callback. A new session takes the options from the URL's query
  parameters, and every run writes them back there, so a reload or a link restores
  them;
* the measures this session's pages evaluated (evaluated ahead in the background);
* a widget's value outside its own call, by its key: prefilled before it is drawn
  (:func:`prefill`), kept among its choices (:func:`keep_choice`), read in a callback
  (:func:`widget_value`), forgotten after what it named is gone (:func:`forget`).

A page's own selections in the URL are :mod:`ireval_app.views`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Literal, cast

import streamlit as st

from ireval_core.dataset import Dataset
from ireval_core.options import EvalOptions

from . import cache

__all__ = [
    "DATASET_PARAM",
    "LOCAL",
    "METADATA_UPLOADER",
    "NOTES_AUTHOR",
    "NOTES_PREFIX",
    "OPTION_KEYS",
    "OPTION_PARAMS",
    "QRELS_UPLOADER",
    "RUNS_UPLOADER",
    "SHARED_PARAMS",
    "SOURCE",
    "SOURCES",
    "SourceMode",
    "UploadKind",
    "clear_uploads",
    "dataset_param",
    "evaluated_measures",
    "forget",
    "get_author",
    "get_last_project",
    "is_sign_in_recorded",
    "get_dataset",
    "get_dataset_id",
    "get_dataset_version",
    "get_judging",
    "set_judging",
    "dataset_version_param",
    "get_dataset_key",
    "get_loaded_files",
    "get_metadata_bytes",
    "get_metadata_upload",
    "get_options",
    "get_source",
    "get_upload_bytes",
    "get_upload_ids",
    "get_uploaded",
    "is_sample",
    "keep_choice",
    "keep_source",
    "mark_upload_changed",
    "note_evaluated",
    "option_problems",
    "options_from_widgets",
    "options_to_widgets",
    "pop_upload_changed",
    "refuse_dataset_param",
    "refused_dataset_param",
    "prefill",
    "restore_author",
    "record_sign_in",
    "set_author",
    "set_dataset_id",
    "set_last_project",
    "set_loaded",
    "set_metadata_upload",
    "set_options",
    "set_source",
    "set_source_value",
    "set_upload_bytes",
    "set_upload_ids",
    "set_uploaded",
    "sync_query_params",
    "url_dataset_pending",
    "widget_value",
]

SourceMode = Literal["sample", "upload", "saved"]
UploadKind = Literal["qrels", "runs"]
SOURCES: tuple[SourceMode, ...] = ("sample", "upload", "saved")

# widgets of more than one page (or of the frame)
SOURCE = "ireval.source"
"""Radio on the Data page: ``"sample"``, ``"upload"`` or ``"saved"`` (the workspace); read by
every page (the sample is loaded on any page while it is the source)."""
QRELS_UPLOADER = "ireval.upload.qrels"
"""File uploader on the Data page: the qrels file."""
RUNS_UPLOADER = "ireval.upload.runs"
"""File uploader on the Data page: the run files."""
METADATA_UPLOADER = "ireval.upload.metadata"
"""File uploader on the Data page: the optional query metadata file (Metrics, Compare,
Queries and Efficiency use it)."""
NOTES_AUTHOR = "ireval.notes.author"
"""Text beside every notes form (and the save forms): who writes (kept for the session)."""
NOTES_PREFIX = "ireval.notes."
"""Prefix of the keys of a notes form (one form per target shown on a page)."""

LOCAL = {SOURCE: "where the data comes from: a saved dataset is the link's ds, and "
                 "uploaded files cannot be in a link",
         QRELS_UPLOADER: "a file: a link cannot carry it (save the data: ds)",
         RUNS_UPLOADER: "files: a link cannot carry them (save the data: ds)",
         METADATA_UPLOADER: "a file: a link cannot carry it (save the data: ds)",
         NOTES_AUTHOR: "who writes: a person, not a view",
         NOTES_PREFIX.rstrip("."): "a note being written: kept with the view's link"}
"""Widgets of several pages that a link leaves out, and why (a key, or the start of
keys made from it: ``<key>.<more>``)."""

# evaluation options: widgets in the sidebar of every results page that show the canonical
# EvalOptions (see get_options)
OPTION_KEYS: dict[str, str] = {f.name: f"ireval.opt.{f.name}" for f in fields(EvalOptions)}
"""Widget key of each :class:`EvalOptions` field (``depth`` shows 0 for the whole ranking)."""

# plain keys
_UPLOAD_CHANGED = "ireval.upload.changed"  # set of UploadKind touched by the user
_UPLOAD_IDS = "ireval.upload.ids"  # UploadKind -> file ids last read
_UPLOADED = "ireval.upload.loaded"  # LoadedFiles read from uploads
_DATASET = "ireval.dataset"
_DATASET_KEY = "ireval.dataset.key"
_FILES = "ireval.dataset.files"  # the LoadedFiles behind the dataset
_METADATA = "ireval.upload.metadata.loaded"  # LoadedMetadata of the uploaded metadata file
_METADATA_BYTES = "ireval.upload.metadata.bytes"  # (name, bytes) of that file
_DATASET_ID = "ireval.dataset.id"  # workspace id of the dataset, None when not saved
_DATASET_VERSION = "ireval.dataset.version"  # its version when a link must name it
_UPLOAD_BYTES = "ireval.upload.bytes"  # UploadKind -> [(name, bytes)], kept until saved
_RESTORED = "ireval.dataset.restored"  # the URL's dataset was looked up this session
_DATASET_SAMPLE = "ireval.dataset.sample"  # bool: the dataset is the bundled sample
_SOURCE_KEPT = "ireval.source.kept"  # the source choice, kept while its radio is not drawn
_OPTIONS = "ireval.options"  # the canonical EvalOptions
_OPTION_PROBLEMS = "ireval.options.problems"  # why a URL or widget value was not taken
_EVALUATED = "ireval.evaluated"  # measure specs this session's pages evaluated, oldest first
_MAX_EVALUATED = 32


# ----------------------------------------------------------------------------- data source


def get_source() -> SourceMode | None:
    """The data source chosen on the Data page, or ``None`` before the page first ran."""
    value = st.session_state.get(SOURCE, st.session_state.get(_SOURCE_KEPT))
    return cast(SourceMode, value) if value in SOURCES else None


def set_source() -> None:
    """Before the source radio is drawn: restore its value (dropped on other pages).

    Also its ``on_change``-free mirror: call it right before drawing the radio.
    """
    if SOURCE not in st.session_state and _SOURCE_KEPT in st.session_state:
        st.session_state[SOURCE] = st.session_state[_SOURCE_KEPT]


def set_source_value(value: SourceMode) -> None:
    """Choose the data source programmatically (a link opening a saved dataset)."""
    st.session_state[_SOURCE_KEPT] = value
    st.session_state.pop(SOURCE, None)


def keep_source(value: SourceMode) -> None:
    """After the source radio is drawn: remember its value for the other pages."""
    st.session_state[_SOURCE_KEPT] = value


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


def set_loaded(files: cache.LoadedFiles | None, dataset: Dataset | None, *,
               sample: bool = False, dataset_id: str | None = None,
               dataset_version: int | None = None) -> Dataset | None:
    """Make ``files`` and their ``dataset`` the current data; returns the dataset.

    The caller reads the dataset (:func:`ireval_app.cache.dataset_for`): this module
    holds what the session uses, it computes nothing. ``sample``: the files are the
    bundled sample (every page then says so); ``dataset_id``: they are a dataset saved
    in the workspace (links then carry it); ``dataset_version``: they are that version of
    it (links then carry the version too, and keep showing its numbers).
    """
    st.session_state[_DATASET_ID] = dataset_id
    st.session_state[_DATASET_VERSION] = dataset_version if dataset_id else None
    st.session_state[_DATASET] = dataset
    st.session_state[_FILES] = files
    st.session_state[_DATASET_KEY] = None if dataset is None or files is None else files.key
    st.session_state[_DATASET_SAMPLE] = bool(sample and dataset is not None)
    return dataset


def get_dataset_id() -> str | None:
    """The workspace id of the current dataset; ``None`` when it is not a saved dataset."""
    return st.session_state.get(_DATASET_ID)


def set_dataset_id(dataset_id: str | None) -> None:
    """Mark the current data as the saved dataset ``dataset_id`` (after saving it)."""
    st.session_state[_DATASET_ID] = dataset_id
    st.session_state[_DATASET_VERSION] = None


def get_dataset_version() -> int | None:
    """The version of the saved dataset in use, when it was opened at a version."""
    return st.session_state.get(_DATASET_VERSION)


def dataset_version_param() -> int | None:
    """The dataset version a link carries (the URL's ``dsv``), or ``None`` (the newest,
    also for a value that is not a positive integer)."""
    value = st.query_params.get(DATASET_VERSION_PARAM) or ""
    return int(value) if value.isdigit() and int(value) >= 1 else None


def dataset_param() -> str | None:
    """The dataset id a link carries (the URL's ``ds``), or ``None``."""
    value = st.query_params.get(DATASET_PARAM)
    return value or None


_DATASET_NOT_APPLIED = "ireval.dataset.not_applied"  # (text, why) of a refused ?ds=


def refuse_dataset_param(text: str, why: str) -> None:
    """The URL's dataset ``text`` was not applied, because ``why``."""
    st.session_state[_DATASET_NOT_APPLIED] = (text, why)


def refused_dataset_param() -> tuple[str, str] | None:
    """``(text, why)`` of the URL's dataset when it was not applied, else ``None``."""
    return st.session_state.get(_DATASET_NOT_APPLIED)


def url_dataset_pending() -> bool:
    """Whether this session still has to open the dataset its URL names (once)."""
    if st.session_state.get(_RESTORED):
        return False
    st.session_state[_RESTORED] = True
    return dataset_param() is not None and get_dataset() is None


_JUDGING = "ireval.judging.session"  # the Judging page's session (judging_glue.Session)


def get_judging() -> object | None:
    """The Judging page's session in this browser session (see
    :class:`ireval_app.judging_glue.Session`), or ``None`` before the first label."""
    return st.session_state.get(_JUDGING)


def set_judging(session: object | None) -> None:
    st.session_state[_JUDGING] = session


_SIGNED_IN = "ireval.signin.recorded"  # the e-mail whose sign-in the workspace recorded


def is_sign_in_recorded(email: str) -> bool:
    """Whether this session already told the workspace that ``email`` signed in."""
    return st.session_state.get(_SIGNED_IN) == email


def record_sign_in(email: str) -> None:
    """Note that the workspace was told that ``email`` signed in (once per session)."""
    st.session_state[_SIGNED_IN] = email


_LAST_PROJECT = "ireval.save.last_project"  # the project of this session's last save


def get_last_project() -> str | None:
    """The project this session last saved a dataset or labeling set into (``None``
    before the first save)."""
    found = st.session_state.get(_LAST_PROJECT)
    return None if found is None else str(found)


def set_last_project(project: str) -> None:
    """Remember the project of a save: the next save form chooses it first."""
    st.session_state[_LAST_PROJECT] = project


_AUTHOR_KEPT = "ireval.notes.author_kept"  # the name, kept while no name field is drawn


def get_author() -> str:
    """Who writes notes in this session (empty until typed; remembered for the session,
    also on pages without a name field, where Streamlit drops the field's state)."""
    ss = st.session_state
    typed = str(ss.get(NOTES_AUTHOR, "") or "")
    if typed:
        ss[_AUTHOR_KEPT] = typed
        return typed
    return str(ss.get(_AUTHOR_KEPT, "") or "")


def set_author(name: str) -> None:
    """Who writes notes from now on in this session (the name fields show it)."""
    st.session_state[NOTES_AUTHOR] = name


def restore_author() -> None:
    """Before drawing a name field keyed :data:`NOTES_AUTHOR`: give it the remembered
    name (the field is prefilled once the name was typed anywhere in the session)."""
    if NOTES_AUTHOR not in st.session_state and (author := get_author()):
        st.session_state[NOTES_AUTHOR] = author


def get_upload_bytes(kind: UploadKind) -> list[tuple[str, bytes]]:
    """The raw bytes of the uploads of ``kind``, kept so that they can be saved later."""
    return list(st.session_state.get(_UPLOAD_BYTES, {}).get(kind, []))


def set_upload_bytes(kind: UploadKind, files: list[tuple[str, bytes]]) -> None:
    st.session_state[_UPLOAD_BYTES] = {**st.session_state.get(_UPLOAD_BYTES, {}), kind: files}


def get_metadata_upload() -> object | None:
    """The uploaded query metadata (:class:`ireval_app.metadata_glue.LoadedMetadata`)."""
    return st.session_state.get(_METADATA)


def set_metadata_upload(loaded: object | None, data: tuple[str, bytes] | None = None) -> None:
    """The uploaded metadata, read, and its raw ``(name, bytes)`` (kept to save it later)."""
    st.session_state[_METADATA] = loaded
    st.session_state[_METADATA_BYTES] = data


def get_metadata_bytes() -> tuple[str, bytes] | None:
    """The raw uploaded metadata file, ``(name, bytes)``, or ``None``."""
    return st.session_state.get(_METADATA_BYTES)


def get_loaded_files() -> cache.LoadedFiles | None:
    """The files behind the current dataset (names, sizes, SHA-256, errors)."""
    return st.session_state.get(_FILES)


def is_sample() -> bool:
    """Whether the current dataset is the bundled sample."""
    return bool(st.session_state.get(_DATASET_SAMPLE, False))


# ----------------------------------------------------------------------------- evaluation options


def get_options() -> EvalOptions:
    """The evaluation options of this session (the one value every page evaluates with).

    On a session's first call they are read from the URL's query parameters
    (defaults where absent; a value that cannot be read keeps its default and is
    listed by :func:`option_problems`). After that only the option widgets change
    them (:func:`options_from_widgets`), whatever page is shown.
    """
    options = st.session_state.get(_OPTIONS)
    if not isinstance(options, EvalOptions):
        options, problems = EvalOptions.from_query_params(st.query_params.to_dict())
        st.session_state[_OPTIONS] = options
        st.session_state[_OPTION_PROBLEMS] = problems
    return options


def set_options(options: EvalOptions) -> None:
    """Replace the evaluation options (the widgets show them on the next run)."""
    st.session_state[_OPTIONS] = options


def option_problems() -> list[str]:
    """Option values from the URL or the widgets that were not taken, and why."""
    return list(st.session_state.get(_OPTION_PROBLEMS, []))


def options_to_widgets() -> None:
    """Before the option widgets are drawn: make them show the current options."""
    options = get_options()
    ss = st.session_state
    for name, key in OPTION_KEYS.items():
        value = getattr(options, name)
        ss[key] = 0 if name == "depth" and value is None else value  # 0: the whole ranking


def _option_value(name: str, value: object) -> object:
    """A widget's value as the :class:`EvalOptions` field ``name`` takes it: of the type
    of the field's default (a number input may give an int for a float), ``depth`` 0 the
    whole ranking (None)."""
    if name == "depth":
        return int(cast(int, value)) or None
    default = getattr(_DEFAULT_OPTIONS, name)
    if isinstance(default, bool):
        return bool(value)
    if isinstance(default, float):
        return float(cast(float, value))
    return value


_DEFAULT_OPTIONS = EvalOptions()


def options_from_widgets() -> None:
    """``on_change`` of every option widget: their values become the options.

    A widget not drawn (None) leaves its field at the default. A value
    :class:`EvalOptions` refuses leaves the options as they were and is listed by
    :func:`option_problems`.
    """
    ss = st.session_state
    values = {name: _option_value(name, ss.get(key)) for name, key in OPTION_KEYS.items()
              if ss.get(key) is not None}
    try:
        options = EvalOptions(**values)  # type: ignore[arg-type]
    except (TypeError, ValueError) as exc:
        ss[_OPTION_PROBLEMS] = [str(exc)]
        return
    ss[_OPTIONS] = options
    ss[_OPTION_PROBLEMS] = []


def note_evaluated(measures: Sequence[str]) -> None:
    """Remember the measures a page evaluated (the last 32 distinct ones), so that they
    can be evaluated ahead, in the background, under the session's next options."""
    seen: dict[str, None] = st.session_state.get(_EVALUATED) or {}
    seen = {m: None for m in seen if m not in measures} | dict.fromkeys(measures)
    st.session_state[_EVALUATED] = dict(list(seen.items())[-_MAX_EVALUATED:])


def evaluated_measures() -> tuple[str, ...]:
    """The measures this session's pages evaluated (:func:`note_evaluated`), oldest first."""
    return tuple(st.session_state.get(_EVALUATED) or ())


def sync_query_params(extra: dict[str, str] | None = None) -> None:
    """Write the options (and ``extra`` parameters) into the URL, only where they changed.

    Parameters at their default are removed, so a plain link means default options.
    """
    wanted = {**get_options().to_query_params(), **(extra or {})}
    dataset_id = get_dataset_id()
    if dataset_id:
        wanted[DATASET_PARAM] = dataset_id[:12]
        version = get_dataset_version()
        if version is not None:
            wanted[DATASET_VERSION_PARAM] = str(version)
    params = st.query_params
    for name in SHARED_PARAMS | wanted.keys():
        if name in wanted:
            if params.get(name) != wanted[name]:
                params[name] = wanted[name]
        elif name in params:
            del params[name]


OPTION_PARAMS = frozenset(EvalOptions(complete=True, rel_level=2.0, depth=1, judged_only=True,
                                      idcg_zero="drop", trec_eval="10.0").to_query_params())
"""The URL parameters of the evaluation options (``rel``, ``depth``, ...)."""

DATASET_PARAM = "ds"
"""The URL parameter naming the saved dataset of a link."""

DATASET_VERSION_PARAM = "dsv"
"""The URL parameter naming the version of the saved dataset of a link (absent: the
newest)."""

SHARED_PARAMS = OPTION_PARAMS | {DATASET_PARAM, DATASET_VERSION_PARAM}
"""The URL parameters every page keeps: the options and the dataset."""


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
    for key in (_UPLOADED, _UPLOAD_IDS, _UPLOAD_CHANGED, _UPLOAD_BYTES):
        st.session_state.pop(key, None)


# ----------------------------------------------------------------------------- a widget by key


def widget_value(key: str, default: object = None) -> object:
    """The value of the widget keyed ``key`` (``default`` before it was drawn), e.g. in
    an ``on_change`` callback."""
    return st.session_state.get(key, default)


def prefill(key: str, value: object) -> None:
    """Give the widget keyed ``key`` ``value`` when the session has none for it yet (before
    the widget is drawn; what the person types afterwards stays)."""
    if key not in st.session_state:
        st.session_state[key] = value


def keep_choice(key: str, choices: Sequence[object], fallback: object) -> None:
    """Before drawing a select keyed ``key`` over ``choices``: when its value is not one of
    them (nothing chosen yet, or a choice that is gone), make it ``fallback``."""
    if st.session_state.get(key) not in choices:
        st.session_state[key] = fallback


def forget(*keys: str) -> None:
    """Drop the values of the widgets (or entries) ``keys``: drawn again, they start from
    their defaults."""
    for key in keys:
        st.session_state.pop(key, None)


_RATER = "ireval.judging.rater_name"  # the name a rater gave, not signed in


def get_rater() -> str:
    """The name this session's rater gave on the Judging page (``""`` before)."""
    return str(st.session_state.get(_RATER, ""))


def set_rater(name: str) -> None:
    st.session_state[_RATER] = name
