"""Every session-state key of the app, in one place, behind typed accessors.

Pages never touch ``st.session_state`` directly: they call these functions (widget keys
are passed as ``key=`` from the constants below).

What lives here
---------------
* the data source chosen on the Data page (bundled sample or upload);
* what was uploaded, already read (:class:`~ireval_app.cache.LoadedFiles`). A file
  uploader forgets its files when it is not rendered (another page, or the sample
  source chosen); the loaded files stay here, so nothing uploaded is lost;
* the current :class:`~ireval_core.dataset.Dataset` and its key, for every later page,
  and whether it is the bundled sample;
* the evaluation options (:class:`~ireval_core.options.EvalOptions`) under a plain key
  that no widget owns: a widget's own state is dropped by Streamlit when the widget is
  not drawn, so the option widgets only *show* this value and write it back from their
  ``on_change`` callback. A new session takes the options from the URL's query
  parameters, and every run writes them back there, so a reload or a link restores
  them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

import streamlit as st

from ireval_core.dataset import Dataset
from ireval_core.options import EvalOptions

from . import cache

if TYPE_CHECKING:  # imported where used: it brings scipy, which the Data page does not need
    from . import labels_glue

__all__ = [
    "OPTION_KEYS",
    "QRELS_UPLOADER",
    "RUNS_UPLOADER",
    "SOURCE",
    "SOURCES",
    "SourceMode",
    "UploadKind",
    "clear_uploads",
    "get_dataset",
    "get_dataset_key",
    "get_dataset_id",
    "set_dataset_id",
    "dataset_param",
    "url_dataset_pending",
    "get_author",
    "get_upload_bytes",
    "set_upload_bytes",
    "get_loaded_files",
    "get_options",
    "get_source",
    "get_upload_ids",
    "get_uploaded",
    "is_sample",
    "mark_upload_changed",
    "note_evaluated",
    "evaluated_measures",
    "option_problems",
    "options_from_widgets",
    "options_to_widgets",
    "pop_upload_changed",
    "set_loaded",
    "set_options",
    "set_source",
    "set_source_value",
    "set_upload_ids",
    "set_uploaded",
    "sync_query_params",
    "VIEW_PARAMS",
    "ViewParam",
    "bind_view",
    "current_link",
    "set_page",
]

SourceMode = Literal["sample", "upload", "saved"]
UploadKind = Literal["qrels", "runs"]
SOURCES: tuple[SourceMode, ...] = ("sample", "upload", "saved")

# widget keys
SOURCE = "ireval.source"
"""Radio on the Data page: ``"sample"``, ``"upload"`` or ``"saved"`` (the workspace)."""
SAVE_NAME = "ireval.save.name"
"""Text on the Data page: the name of the dataset to save."""
SAVE_NOTE = "ireval.save.note"
"""Text on the Data page: a note saved with the dataset."""
SAVED_PICK = "ireval.saved.pick"
"""Select on the Data page: the saved dataset to open."""
DELETE_CONFIRM = "ireval.saved.delete_confirm"
"""Text on the Data page: the id typed again to confirm a deletion."""
NOTES_AUTHOR = "ireval.notes.author"
"""Text beside every notes form: who writes (kept for the session)."""
NOTES_PREFIX = "ireval.notes."
"""Prefix of the keys of a notes form (one form per target shown on a page)."""
QRELS_UPLOADER = "ireval.upload.qrels"
RUNS_UPLOADER = "ireval.upload.runs"

# evaluation options: widgets that show the canonical EvalOptions (see get_options)
OPTION_KEYS: dict[str, str] = {
    "complete": "ireval.opt.complete",
    "rel_level": "ireval.opt.rel_level",
    "depth": "ireval.opt.depth",
    "judged_only": "ireval.opt.judged_only",
    "idcg_zero": "ireval.opt.idcg_zero",
}
"""Widget key of each :class:`EvalOptions` field (``depth`` shows 0 for the whole ranking)."""

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
COMPARE_MEASURES = "ireval.compare.measures"
"""Multiselect on the Compare page: the measures compared."""
COMPARE_SYSTEMS = "ireval.compare.systems"
"""Multiselect on the Compare page: the runs compared."""
COMPARE_MODE = "ireval.compare.mode"
"""Radio on the Compare page: all pairs or against a baseline."""
COMPARE_BASELINE = "ireval.compare.baseline"
"""Select on the Compare page: the baseline run (system A)."""
COMPARE_TESTS = "ireval.compare.tests"
"""Multiselect on the Compare page: the paired tests."""
COMPARE_ALTERNATIVE = "ireval.compare.alternative"
"""Select on the Compare page: two-sided, greater or less."""
COMPARE_CORRECTION = "ireval.compare.correction"
"""Select on the Compare page: the multiple-comparison correction."""
COMPARE_RESAMPLES = "ireval.compare.resamples"
"""Number on the Compare page: resamples of the randomization and bootstrap tests."""
COMPARE_SEED = "ireval.compare.seed"
"""Number on the Compare page: the seed of the Monte Carlo tests."""
COMPARE_ALPHA = "ireval.compare.alpha"
"""Select on the Compare page: the significance level."""
COMPARE_PAIR = "ireval.compare.pair"
"""Select on the Compare page: the pair and measure of the per-query chart."""
COMPARE_DELTA = "ireval.compare.delta"
"""Number on the Compare page: the difference the next round should detect."""
COMPARE_REPORT_TEST = "ireval.compare.report_test"
"""Select on the Compare page: the test marking the report table."""
QUERIES_MEASURE = "ireval.queries.measure"
"""Select on the Queries page: the measure."""
QUERIES_TYPED = "ireval.queries.typed"
"""Text on the Queries page: a typed measure, used instead of the pick."""
QUERIES_RUN_A = "ireval.queries.run_a"
"""Select on the Queries page: run A."""
QUERIES_RUN_B = "ireval.queries.run_b"
"""Select on the Queries page: run B (differences are B − A)."""
QUERIES_QUERY = "ireval.queries.query"
"""Select on the Queries page: the query opened."""
QUERIES_SHOWN = "ireval.queries.depth"
"""Select on the Queries page: how many documents of each ranking are shown."""
LABELS_SOURCE = "ireval.labels.source"
"""Radio on the Labeling data page: the bundled sample or uploaded files."""
LABELS_SAVED_PICK = "ireval.labels.saved_pick"
"""Select on the Labeling data page: the saved labeling dataset to open."""
LABELS_ADD_UPLOADER = "ireval.labels.add_upload"
"""File uploader on the Labeling data page: files added to an opened saved set."""
LABELS_SAVE_NAME = "ireval.labels.save_name"
"""Text on the Labeling data page: the name of the labeling set to save."""
LABELS_UPLOADER = "ireval.labels.upload"
"""File uploader on the Labeling data page: labeled result lists (one or more files)."""
GSB_UPLOADER = "ireval.labels.gsb_upload"
"""File uploader on the Labeling data page: side-by-side (GSB) judgments."""
LABELS_MAP = "ireval.labels.map"
"""Text on the Labeling data page: the label map (empty: detected)."""
LABELS_COMBINE = "ireval.labels.combine"
"""Select on the Labeling data page: how several raters' labels are combined."""
LABELS_K = "ireval.labels.k"
"""Number on the Labeling data page: the depth K of DCG@K."""
LABELS_GAIN = "ireval.labels.gain"
"""Radio on the Labeling data page: linear or exponential gain."""
LABELS_BY_SEGMENT = "ireval.labels.by_segment"
"""Toggle on the Trend page: the trend broken down by segment."""
LABELS_GRADE_SYSTEM = "ireval.labels.grade_system"
"""Radio on the Trend page: the system of the grade distribution."""
LABELS_PLAN_DELTA = "ireval.labels.plan_delta"
"""Number on the Trend page: the DCG change the next round should detect."""
RATERS_ROUND = "ireval.raters.round"
"""Select on the Raters page: the round of the confusion matrix."""
RATERS_RATER = "ireval.raters.rater"
"""Select on the Raters page: the rater of the confusion matrix."""
CHANGES_OLD = "ireval.changes.old"
"""Select on the Label changes page: the earlier round."""
CHANGES_NEW = "ireval.changes.new"
"""Select on the Label changes page: the later round."""
METADATA_UPLOADER = "ireval.upload.metadata"
"""File uploader on the Data page: the optional query metadata file."""
METRICS_SPLIT = "ireval.metrics.split"
"""Select on the Metrics page: the metadata column the means are split by."""
METRICS_WEIGHTED = "ireval.metrics.weighted"
"""Toggle on the Metrics page: traffic-weighted means in the split."""
COMPARE_SPLIT = "ireval.compare.split"
"""Select on the Compare page: the metadata column the tests are repeated per value of."""
QUERIES_SEGMENT_COLUMN = "ireval.queries.segment_column"
"""Select on the Queries page: the metadata column to filter the queries by."""
QUERIES_SEGMENT_VALUE = "ireval.queries.segment_value"
"""Select on the Queries page: the value of that column the queries must have."""
MEETING_MEASURES = "ireval.meeting.measures"
"""Multiselect on the Meeting page: the measures of the report."""
MEETING_TITLE = "ireval.meeting.title"
"""Text on the Meeting page: the report's title."""
NDCG_TABLE = "ireval.ndcg.table"
"""Dataframe on the nDCG vs DCG page (a key keeps its selection stable)."""
ROUNDS_UPLOADER = "ireval.rounds.upload"
"""File uploader on the Labeling rounds page: the qrels of another round."""
ROUNDS_SWAP = "ireval.rounds.swap"
"""Toggle on the Labeling rounds page: the uploaded round is the newer one."""
ROUNDS_MEASURE = "ireval.rounds.measure"
"""Select on the Labeling rounds page: the measure of the ranking-stability table."""
ROUNDS_K = "ireval.rounds.k"
"""Number on the Labeling rounds page: the depth k of coverage and of the to-label list."""
EFFICIENCY_UPLOADER = "ireval.efficiency.upload"
"""File uploader on the Efficiency page: the query metadata file (latencies, segments)."""
EFFICIENCY_MEASURE = "ireval.efficiency.measure"
"""Select on the Efficiency page: the effectiveness measure (default nDCG@10)."""
EFFICIENCY_LATENCY = "ireval.efficiency.latency"
"""Select on the Efficiency page: the latency statistic of the chart (p50, p95, p99, mean)."""
LAB_SOURCE = "ireval.lab.source"
"""Radio on the Metric lab page: a seed's preset, a typed list or a query of a loaded run."""
LAB_PRESET = "ireval.lab.preset"
"""Select on the Metric lab page: the preset (a key of ``ireval_core.lab.PRESETS``)."""
LAB_GRADES = "ireval.lab.grades"
"""Text on the Metric lab page: the typed ranked list of grades (``-`` = unjudged)."""
LAB_UNRETRIEVED = "ireval.lab.unretrieved"
"""Text on the Metric lab page: grades of the judged documents the typed list lacks."""
LAB_MEASURE = "ireval.lab.measure"
"""Select on the Metric lab page: the measure explained."""
LAB_TYPED_MEASURE = "ireval.lab.typed_measure"
"""Text on the Metric lab page: a typed measure, used instead of the pick."""
LAB_RUN = "ireval.lab.run"
"""Select on the Metric lab page: the run whose query is explained."""
LAB_QUERY = "ireval.lab.query"
"""Select on the Metric lab page: the query of that run."""

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
               sample: bool = False, dataset_id: str | None = None) -> Dataset | None:
    """Make ``files`` and their ``dataset`` the current data; returns the dataset.

    The caller reads the dataset (:func:`ireval_app.cache.dataset_for`): this module
    holds what the session uses, it computes nothing. ``sample``: the files are the
    bundled sample (every page then says so); ``dataset_id``: they are a dataset saved
    in the workspace (links then carry it).
    """
    st.session_state[_DATASET_ID] = dataset_id
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


def dataset_param() -> str | None:
    """The dataset id a link carries (the URL's ``ds``), or ``None``."""
    value = st.query_params.get("ds")
    return value or None


def url_dataset_pending() -> bool:
    """Whether this session still has to open the dataset its URL names (once)."""
    if st.session_state.get(_RESTORED):
        return False
    st.session_state[_RESTORED] = True
    return dataset_param() is not None and get_dataset() is None


def get_author() -> str:
    """Who writes notes in this session (empty until typed)."""
    return str(st.session_state.get(NOTES_AUTHOR, "") or "")


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
    ss[OPTION_KEYS["complete"]] = options.complete
    ss[OPTION_KEYS["rel_level"]] = options.rel_level
    ss[OPTION_KEYS["depth"]] = options.depth or 0
    ss[OPTION_KEYS["judged_only"]] = options.judged_only
    ss[OPTION_KEYS["idcg_zero"]] = options.idcg_zero


def options_from_widgets() -> None:
    """``on_change`` of every option widget: their values become the options.

    A value :class:`EvalOptions` refuses leaves the options as they were and is
    listed by :func:`option_problems`.
    """
    ss = st.session_state
    get = {name: ss.get(key) for name, key in OPTION_KEYS.items()}
    try:
        options = EvalOptions(
            complete=bool(get["complete"]), judged_only=bool(get["judged_only"]),
            rel_level=float(cast(float, get["rel_level"])) if get["rel_level"] is not None
            else 1.0,
            depth=int(cast(int, get["depth"])) or None if get["depth"] is not None else None,
            idcg_zero=cast(Literal["zero", "drop"], get["idcg_zero"] or "zero"))
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
        wanted["ds"] = dataset_id[:12]
    params = st.query_params
    for name in _OPTION_PARAM_NAMES | {"ds"} | wanted.keys():
        if name in wanted:
            if params.get(name) != wanted[name]:
                params[name] = wanted[name]
        elif name in params:
            del params[name]


_OPTION_PARAM_NAMES = frozenset(EvalOptions(complete=True, rel_level=2.0, depth=1,
                                            judged_only=True,
                                            idcg_zero="drop").to_query_params())


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


# ----------------------------------------------------------------------------- views in the URL


@dataclass(frozen=True)
class ViewParam:
    """A page widget whose value is part of the view a link restores.

    ``key`` is the widget key, ``param`` its URL query parameter, ``many`` whether it
    holds a list (repeated parameter), ``kind`` the type of one value.
    """

    key: str
    param: str
    many: bool = False
    kind: type = str


VIEW_PARAMS: dict[str, tuple[ViewParam, ...]] = {
    "metrics": (ViewParam(METRICS_MEASURES, "measures", many=True),
                ViewParam(METRICS_SPLIT, "split"), ViewParam(METRICS_WEIGHTED, "weighted",
                                                             kind=bool)),
    "curves": (ViewParam(CURVES_QUERY, "query"),),
    "compare": (ViewParam(COMPARE_MEASURES, "measures", many=True),
                ViewParam(COMPARE_SYSTEMS, "runs", many=True),
                ViewParam(COMPARE_MODE, "pairs"),
                ViewParam(COMPARE_BASELINE, "baseline"), ViewParam(COMPARE_SPLIT, "split")),
    "queries": (ViewParam(QUERIES_MEASURE, "measure"), ViewParam(QUERIES_RUN_A, "a"),
                ViewParam(QUERIES_RUN_B, "b"), ViewParam(QUERIES_QUERY, "query"),
                ViewParam(QUERIES_SEGMENT_COLUMN, "segment_by"),
                ViewParam(QUERIES_SEGMENT_VALUE, "segment")),
    "meeting": (ViewParam(MEETING_MEASURES, "measures", many=True),),
    "labels_data": (ViewParam(LABELS_SOURCE, "source"), ViewParam(LABELS_COMBINE, "combine"),
                    ViewParam(LABELS_SAVED_PICK, "set"),
                    ViewParam(LABELS_K, "k", kind=int),
                    ViewParam(LABELS_GAIN, "gain")),
    "labels_trend": (ViewParam(LABELS_BY_SEGMENT, "segments", kind=bool),
                     ViewParam(LABELS_PLAN_DELTA, "delta", kind=float)),
    "labels_raters": (ViewParam(RATERS_ROUND, "round"), ViewParam(RATERS_RATER, "rater")),
    "labels_changes": (ViewParam(CHANGES_OLD, "old"), ViewParam(CHANGES_NEW, "new")),
    "ndcg_vs_dcg": (ViewParam(NDCG_K, "k", kind=int), ViewParam(NDCG_RECALL_K, "recall_k",
                                                                  kind=int)),
    "lab": (ViewParam(LAB_SOURCE, "list"), ViewParam(LAB_PRESET, "preset"),
            ViewParam(LAB_GRADES, "grades"), ViewParam(LAB_UNRETRIEVED, "unretrieved"),
            ViewParam(LAB_MEASURE, "measure"), ViewParam(LAB_TYPED_MEASURE, "typed"),
            ViewParam(LAB_RUN, "run"), ViewParam(LAB_QUERY, "query")),
}
"""The URL parameters of each page (by its URL path) besides the evaluation options."""

_VIEW = "ireval.view."  # + widget key: the value kept while the widget is not drawn
_PAGE = "ireval.page"  # URL path of the page being run
_BY_KEY = {v.key: v for views in VIEW_PARAMS.values() for v in views}


def set_page(url_path: str) -> None:
    """Called by ``app.py`` before the page runs: keep only this page's view parameters
    (and the options) in the URL."""
    st.session_state[_PAGE] = url_path
    keep = _OPTION_PARAM_NAMES | {"ds"} | {v.param for v in VIEW_PARAMS.get(url_path, ())}
    for name in list(st.query_params.keys()):
        if name not in keep:
            del st.query_params[name]


def _parse(view: ViewParam, raw: list[str]) -> Any:
    try:
        values = [x.strip().lower() in ("1", "true", "yes") if view.kind is bool
                  else view.kind(x) for x in raw]
    except ValueError:
        return None
    if view.many:
        return values
    return values[-1] if values else None


def bind_view(key: str, default: Any, *, choices: Sequence[Any] | None = None) -> None:
    """Before drawing the page widget ``key``: give it its value, and put it in the URL.

    The value is, in order: the widget's own (the user just changed it), the value
    kept from an earlier visit of the page, the URL's (a link opened in a new
    session), ``default``. Values not among ``choices`` are dropped (a run that is
    no longer loaded). Draw the widget with ``key=key`` and no default of its own.
    """
    view = _BY_KEY[key]
    ss = st.session_state
    mirror = _VIEW + key
    if key in ss:
        value = ss[key]
    elif mirror in ss:
        value = ss[mirror]
    else:
        raw = st.query_params.get_all(view.param)
        value = _parse(view, raw) if raw else None
    if choices is not None and value is not None:
        allowed = list(choices)
        if view.many:
            value = [v for v in value if v in allowed] or None
        elif value not in allowed:
            value = None
    if value is None:
        value = list(default) if view.many else default
    ss[key] = value
    ss[mirror] = value
    if value == default or value == (list(default) if view.many else default):
        if view.param in st.query_params:
            del st.query_params[view.param]
    elif view.many:
        st.query_params[view.param] = [str(v) for v in value]
    else:
        st.query_params[view.param] = str(value)


def current_link() -> str | None:
    """The address of the current view (page, options, selections), or ``None`` when the
    browser's address is unknown (e.g. in tests)."""
    from urllib.parse import urlencode

    base = st.context.url
    if not base:
        return None
    pairs = [(k, v) for k in st.query_params.keys() for v in st.query_params.get_all(k)]
    return base + ("?" + urlencode(pairs) if pairs else "")



# ----------------------------------------------------------------------------- labeling

_LABEL_FILES = "ireval.labels.files"  # labels_glue.Files of the uploaded labeling files
_GSB_FILES = "ireval.labels.gsb_files"  # labels_glue.Files of the uploaded GSB files
LABEL_DEFAULTS: dict[str, object] = {LABELS_COMBINE: "mean", LABELS_K: 10,
                                     LABELS_GAIN: "linear", LABELS_MAP: ""}
"""The labeling settings before the user changes them."""


def label_settings() -> dict[str, object]:
    """``combine``, ``k``, ``gain`` and ``label_map`` of this session (defaults until set
    on the Labeling data page; kept while that page is not shown)."""
    ss = st.session_state
    get = {key: ss.get(key, ss.get(_VIEW + key, default)) for key, default in
           LABEL_DEFAULTS.items()}
    return {"combine": get[LABELS_COMBINE], "k": int(cast(int, get[LABELS_K])),
            "gain": get[LABELS_GAIN], "label_map": get[LABELS_MAP]}


def label_source() -> str:
    """``"sample"`` or ``"upload"``: where the labeling pages take their files from."""
    ss = st.session_state
    return str(ss.get(LABELS_SOURCE, ss.get(_VIEW + LABELS_SOURCE, "sample")))


def set_label_source(value: str) -> None:
    """Choose the labeling source programmatically (after saving a set)."""
    st.session_state[_VIEW + LABELS_SOURCE] = value
    st.session_state.pop(LABELS_SOURCE, None)


def keep_label_map(text: str) -> None:
    """Remember the label map text (a text input is dropped on other pages)."""
    st.session_state[_VIEW + LABELS_MAP] = text


def get_label_files() -> tuple[labels_glue.Files, labels_glue.Files]:
    """Uploaded (labeling files, GSB files), kept while the uploaders are not shown."""
    from . import labels_glue

    empty = labels_glue.Files()
    return (st.session_state.get(_LABEL_FILES, empty), st.session_state.get(_GSB_FILES, empty))


def set_label_files(labels: list[tuple[str, bytes]] | None = None,
                    gsb: list[tuple[str, bytes]] | None = None) -> None:
    """Keep uploaded labeling and GSB files (fingerprinted once, here)."""
    from . import labels_glue

    kept_labels, kept_gsb = get_label_files()
    if labels is not None and labels != list(kept_labels.files):  # new files: fingerprint
        st.session_state[_LABEL_FILES] = labels_glue.Files.of(labels)
    if gsb is not None and gsb != list(kept_gsb.files):
        st.session_state[_GSB_FILES] = labels_glue.Files.of(gsb)


# ----------------------------------------------------------------------------- Dask job

DASK_SCHEDULER = "ireval.dask.scheduler"
"""Text on the Data page: the address of the Dask scheduler (``tcp://HOST:PORT``)."""
DASK_QRELS = "ireval.dask.qrels"
"""Text on the Data page: the qrels path or URL the cluster's workers read."""
DASK_RUNS = "ireval.dask.runs"
"""Text area on the Data page: run paths or URLs, one per line."""
DASK_MEASURES = "ireval.dask.measures"
"""Multiselect on the Data page: the measures of the cluster job."""
DASK_DOWNLOAD = "ireval.dask.download"
"""Download button of the cluster job's per-query values."""
_DASK_RESULT = "ireval.dask.result"  # dask_glue.DaskResult of the last job


def get_dask_result() -> object | None:
    """The last Dask job of this session (a :class:`ireval_app.dask_glue.DaskResult`)."""
    return st.session_state.get(_DASK_RESULT)


def set_dask_result(result: object) -> None:
    """Keep the last Dask job's result (shown again on every rerun of the Data page)."""
    st.session_state[_DASK_RESULT] = result
