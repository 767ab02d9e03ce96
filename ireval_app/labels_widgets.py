"""What every Labeling page shares: the labeling settings, source and files of the session,
the current labeling data, its header, its guard.

The settings (K, gain, how raters are combined, the label map, the conflict rule, the
round of tool exports, the model judge) are set on the Labeling data page (the judge on
the Model judge page) and used by every labeling page; their keys and URL parameters are
:mod:`ireval_app.keys.labeling`. The frame calls :func:`bind_settings` before a labeling
page runs, so a link to any labeling page restores them (or says which value it could
not apply).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, cast

import pandas as pd
import streamlit as st

from ireval_core.errors import FormatError, NotAllowedError, Remedy
from ireval_core.labels import Judgments
from ireval_core.labels.gsb import GsbJudgments
from ireval_core.workspace import DatasetInfo, DatasetNotFoundError, DatasetVersion, Workspace

from . import fit, labels_glue, views, workspace_glue
from .files_widgets import show_format_error
from .keys import labeling
from .keys import labels_data as keys
from .text import md_escape
from .workspace_widgets import workspace_problem

__all__ = ["CONFLICT_WORDS", "LABELS_DATA_PAGE", "added", "anchors", "anchors_key",
           "bind_settings", "choose_saved", "conflict_hint", "conflict_words", "count_add",
           "current", "get_files", "header", "judge", "names", "open_once", "opened",
           "require_gsb", "require_judgments", "SavedView", "set_anchor_files", "set_files",
           "set_source", "settings", "shown_as_chosen", "source", "table"]

LABELS_DATA_PAGE = "pages/labels_data.py"
"""Path of the Labeling data page, for ``st.page_link``."""

_COMBINE_WORDS = {"mean": "mean of the raters' labels", "median": "median of the raters' labels",
                  "majority": "most frequent label (ties: the lower)"}
CONFLICT_WORDS = {
    "refuse": "Refuse the files (list every such label)",
    "mean": "One label: the rater's mean",
    "latest": "One label: the latest row's",
    "separate": "Each system's list as a separate rater"}
"""The conflict rules as the radio on the Labeling data page names them."""
_LABEL_FILES = "ireval.labels.files"  # labels_glue.Files of the uploaded labeling files
_GSB_FILES = "ireval.labels.gsb_files"  # labels_glue.Files of the uploaded GSB files
_ANCHOR_FILES = "ireval.labels.anchor_files"  # labels_glue.Files of the uploaded anchor items
_OPENED = "ireval.labels.opened"  # SavedView: the saved set (and version) the session shows
_TRIED = "ireval.labels.saved_tried"  # the set this session last tried to open
_ADDS = "ireval.labels.adds"  # adds made this session: a new add uploader after each


@dataclass(frozen=True)
class SavedView:
    """The saved labeling set the labeling pages show: the version shown, and every
    version of the set (as listed when it was opened)."""

    info: DatasetInfo
    versions: tuple[DatasetVersion, ...]

    @property
    def newer(self) -> tuple[DatasetVersion, ...]:
        """The versions after the one shown."""
        return tuple(v for v in self.versions if v.version > self.info.version)


# ----------------------------------------------------------------------------- session state


def bind_settings() -> None:
    """Before a labeling page runs: the source (a saved set: its id and version, opened
    here) and the settings from their widgets, the session or the link (checked: ``k=0``
    is not applied, and says so), written into the URL."""
    _bind_source()
    views.view_value(labeling.K, labeling.DEFAULTS[labeling.K])
    views.view_value(labeling.GAIN, labeling.DEFAULTS[labeling.GAIN],
                     choices=labeling.GAINS)
    views.view_value(labeling.COMBINE, labeling.DEFAULTS[labeling.COMBINE],
                     choices=labeling.COMBINES)
    views.view_value(labeling.CONFLICTS, labeling.DEFAULTS[labeling.CONFLICTS],
                     choices=labeling.CONFLICT_CHOICES)
    views.view_value(labeling.ROUND, "")
    _bind_label_map()


def _bind_label_map() -> None:
    """The label map of the session or the link; a link's text that is not a label map is
    not applied (detected from the labels instead), and says why."""
    ss = st.session_state
    from_link = labeling.MAP not in ss and views.kept_value(labeling.MAP, None) is None
    text = str(views.view_value(labeling.MAP, "") or "")
    if not from_link or not text.strip():
        return
    from ireval_core.labels import LabelMap

    try:
        LabelMap.parse(text)
    except ValueError:  # the parameter error names LabelMap.parse: say it for the link instead
        views.not_applied("map", text, "not a label map: word=grade pairs such as "
                                       "none=0,low=1,mid=2,high=3, or a built-in map's name")
        views.keep_value(labeling.MAP, "")
        views.view_value(labeling.MAP, "")  # out of the link


def _bind_source() -> None:
    """The source of the link or the session; a saved set is opened at the version the link
    names (the newest when none), and the set's short id and version are written into the
    link, so that it keeps showing these labels after newer months are added. A newer
    version is noted at the top of the page."""
    if views.view_value(keys.SOURCE, "sample", choices=keys.SOURCES) != "saved":
        return
    wanted = str(views.view_value(keys.SAVED_PICK, "") or "").strip().lower()
    if not wanted:
        return
    version = int(cast(int, views.view_value(keys.SAVED_VERSION, 0)) or 0)
    shown: SavedView | None = st.session_state.get(_OPENED)
    if shown is None or not shown.info.id.startswith(wanted) or version not in (
            0, shown.info.version):
        shown = _open_saved(wanted, version)
        if shown is None:
            return
    for key, value in ((keys.SAVED_PICK, shown.info.short_id),
                       (keys.SAVED_VERSION, shown.info.version)):
        views.keep_value(key, value)
        if key in st.session_state:  # before its widget is drawn in this run
            st.session_state[key] = value
        views.view_value(key, "" if key == keys.SAVED_PICK else 0)  # into the link
    if shown.newer:
        st.info(_newer_note(shown), icon=":material/history:")


def _open_saved(wanted: str, version: int) -> SavedView | None:
    """Open version ``version`` (``0``: the newest) of the saved set ``wanted`` into the
    session; ``None`` (with a note) when it cannot be."""
    who = workspace_glue.actor()

    def work(ws: Workspace) -> SavedView | str:
        try:
            newest = ws.get_dataset(wanted, actor=who)
        except ValueError:  # not an id
            return "not a saved set's id"
        except NotAllowedError as exc:  # a project this person has no role in
            return str(exc)
        info = newest
        if version and version != newest.version:
            if not 1 <= version <= newest.latest_version:
                views.not_applied("version", str(version),
                                  f"the set has versions 1 to {newest.latest_version}")
            else:
                info = ws.get_dataset(newest.id, version, actor=who)
        files = workspace_glue.stored_files_of_kind(info, ("labels", "gsb"))
        st.session_state[_LABEL_FILES] = labels_glue.Files.stored(
            [(n, f) for k, n, f in files if k == "labels"])
        st.session_state[_GSB_FILES] = labels_glue.Files.stored(
            [(n, f) for k, n, f in files if k == "gsb"])
        return SavedView(info, tuple(ws.versions(info.id, actor=who)))

    try:
        got = workspace_glue.with_workspace(work)
    except DatasetNotFoundError:  # deleted, or a link from another workspace
        got = "no such saved labeling set here"
    if isinstance(got, workspace_glue.WorkspaceProblem):
        workspace_problem(got)
        return None
    if isinstance(got, str):
        views.not_applied("set", wanted, got)
        views.keep_value(keys.SAVED_PICK, "")
        st.session_state.pop(_OPENED, None)
        return None
    st.session_state[_OPENED] = got
    return got


def _newer_note(shown: SavedView) -> str:
    """The note on a page showing an older version of a saved set."""
    info = shown.info
    def adds(v: DatasetVersion) -> str:
        what = (f"round{'s' if len(v.rounds) != 1 else ''} {', '.join(v.rounds)}"
                if v.rounds else ", ".join(f.name for f in v.added))
        replaced = (f" (replacing {', '.join(f.name for f in v.replaced)})"
                    if v.replaced else "")
        return (f"version {v.version} adds {md_escape(what)}{md_escape(replaced)}, saved by "
                f"{md_escape(v.saved_by)} on {v.saved_at:%Y-%m-%d}")

    return (f"**Newer months exist.** This view shows version {info.version} of the saved "
            f"labeling set **{md_escape(info.name)}** (rounds "
            f"{md_escape(', '.join(info.rounds)) or 'not recorded'}), as when the link was "
            f"made; its numbers are those of that version. Since then: "
            + "; ".join(adds(v) for v in shown.newer)
            + ". Choose the newest version on the Labeling data page to include them.")


def opened() -> SavedView | None:
    """The saved set (and version) the labeling pages show, when the source is a saved set."""
    return st.session_state.get(_OPENED) if source() == "saved" else None


def choose_saved(short_id: str | None, version: int = 0) -> None:
    """Show another saved set, or another version (``0``: the newest), from the next run
    (call from a widget's callback, or before ``st.rerun()``)."""
    if short_id is not None:
        views.keep_value(keys.SAVED_PICK, short_id)
    views.keep_value(keys.SAVED_VERSION, version)
    st.session_state.pop(keys.SAVED_VERSION, None)
    st.session_state.pop(_OPENED, None)
    if "version" in st.query_params:
        del st.query_params["version"]


def open_once(short_id: str) -> bool:
    """Open the saved set ``short_id`` from the next run (:func:`choose_saved`) unless it
    is the set this session tried last (a set that fails to open says so once, and is not
    tried again on every run); whether it was chosen now (then rerun)."""
    if st.session_state.get(_TRIED) == short_id:
        return False
    st.session_state[_TRIED] = short_id
    choose_saved(short_id)
    return True


def shown_as_chosen() -> None:
    """The set chosen is the one shown: the next one chosen is tried (:func:`open_once`)."""
    st.session_state.pop(_TRIED, None)


def added() -> int:
    """How many times files were added to a saved set in this session (the add uploader's
    key counts them: after an add, a new and empty uploader)."""
    return int(st.session_state.get(_ADDS, 0))


def count_add() -> None:
    """Files were added to a saved set: the next run draws a new, empty add uploader."""
    st.session_state[_ADDS] = added() + 1


def settings() -> dict[str, object]:
    """``combine``, ``k``, ``gain``, ``label_map``, ``conflicts`` and ``round`` (of tool
    exports naming none) of this session (defaults until set on the Labeling data page or
    by a link; kept while that page is not shown)."""
    ss = st.session_state
    get = {key: ss.get(key, views.kept_value(key, default))
           for key, default in labeling.DEFAULTS.items()}
    return {"combine": get[labeling.COMBINE], "k": int(cast(int, get[labeling.K])),
            "gain": get[labeling.GAIN], "label_map": str(get[labeling.MAP] or ""),
            "conflicts": str(get[labeling.CONFLICTS] or "refuse"),
            "round": str(get[labeling.ROUND] or "").strip()}


def source() -> str:
    """``"sample"``, ``"upload"`` or ``"saved"``: where the labeling pages take their files."""
    ss = st.session_state
    return str(ss.get(keys.SOURCE, views.kept_value(keys.SOURCE, "sample")))


def set_source(value: str) -> None:
    """Choose the labeling source programmatically (after saving a set; then rerun)."""
    views.keep_value(keys.SOURCE, value)
    st.session_state.pop(keys.SOURCE, None)  # the radio shows the kept value


def get_files() -> tuple[labels_glue.Files, labels_glue.Files]:
    """Uploaded (labeling files, GSB files), kept while the uploaders are not shown."""
    empty = labels_glue.Files()
    return (st.session_state.get(_LABEL_FILES, empty), st.session_state.get(_GSB_FILES, empty))


def set_files(labels: list[tuple[str, bytes]] | None = None,
              gsb: list[tuple[str, bytes]] | None = None) -> None:
    """Keep uploaded labeling and GSB files (fingerprinted once, here)."""
    kept_labels, kept_gsb = get_files()
    # new files: fingerprint (kept files of a saved set are not read to compare)
    if labels is not None and (kept_labels.hashes is not None and labels
                               or labels != list(kept_labels.files)):
        st.session_state[_LABEL_FILES] = labels_glue.Files.of(labels)
    if gsb is not None and (kept_gsb.hashes is not None and gsb
                            or gsb != list(kept_gsb.files)):
        st.session_state[_GSB_FILES] = labels_glue.Files.of(gsb)


def set_anchor_files(files: list[tuple[str, bytes]]) -> None:
    """Keep uploaded anchor-item files (fingerprinted once, here)."""
    kept = st.session_state.get(_ANCHOR_FILES, labels_glue.Files())
    if files != list(kept.files):
        st.session_state[_ANCHOR_FILES] = labels_glue.Files.of(files)


def anchors() -> labels_glue.Anchors | None:
    """The anchor items' check of this session's source (the sample's ``anchors.csv``, or
    the uploaded anchor files), or None without anchor items."""
    files = (labels_glue.sample_anchors() if source() == "sample"
             else st.session_state.get(_ANCHOR_FILES, labels_glue.Files()))
    if not files:
        return None
    s = settings()
    return labels_glue.anchors_cached(files.key, files.names, str(s["label_map"]),
                                      str(s["combine"]), files.files)


# ----------------------------------------------------------------------------- for every page


def current() -> tuple[labels_glue.Loaded | None, labels_glue.Loaded | None, bool]:
    """(judgments, GSB judgments, is_sample) for this session, read through the cache."""
    s = settings()
    if source() in ("upload", "saved"):
        labels, gsb = get_files()
        sample = False
    else:
        labels, gsb = labels_glue.sample_files()
        sample = True
    loaded = (labels_glue.load_judgments(labels, str(s["label_map"]), str(s["conflicts"]),
                                         str(s["round"])) if labels else None)
    loaded_gsb = labels_glue.load_gsb(gsb) if gsb else None
    return loaded, loaded_gsb, sample


def header(title: str, intro: str, *, sample: bool, dcg: bool = True) -> None:
    """Title, introduction, the sample banner, and the settings line every number uses
    (``dcg=False``: a page the DCG settings do not apply to, e.g. side by side)."""
    st.title(title)
    st.caption(intro)
    if sample:
        st.info("**Sample labeling data**: six synthetic monthly rounds, not your files. "
                "Upload labeling files on the Labeling data page.", icon=":material/science:")
    if not dcg:
        return
    s = settings()
    st.caption(f":material/tune: **Settings**: DCG@{s['k']}, {s['gain']} gain, label = "
               f"{_COMBINE_WORDS.get(str(s['combine']), str(s['combine']))}"
               f"{conflict_words(str(s['conflicts']))} (change them on the Labeling data page)")


def conflict_words(rule: str) -> str:
    """The conflict rule for a settings line (``"; ..."``), empty for the default
    (refuse: the labels hold no conflict)."""
    if rule == "refuse":
        return ""
    return (f"; one rater's different labels of a document in several systems' lists: "
            f"{CONFLICT_WORDS.get(rule, rule).lower()} (conflicts={rule})")


def conflict_hint(error: FormatError) -> str | None:
    """What to do about a labeling file the reader refused, in the app's terms: each of
    the error's remedies (:class:`~ireval_core.errors.Remedy`: the reader's parameter)
    named as its field under Settings on the Labeling data page, never as the Python
    parameter or the command line's flag. ``None`` without a remedy or a hint."""
    if not error.remedies:
        return error.hint
    return " ".join(_remedy_words(r) for r in error.remedies)


def _remedy_words(remedy: Remedy) -> str:
    """One remedy, as the fields on the Labeling data page name it."""
    if remedy.parameter == "conflicts":
        n = remedy.count
        return (f"{n:,} of these {'are' if n != 1 else 'is'} one rater's different labels of "
                "a document shown in several systems' lists. Choose what they become under "
                "Settings on the Labeling data page (\"One rater, one document, several "
                "lists\"): the rater's mean, the latest row's label, or each system's list as "
                "a separate rater. The choice is stated next to every number and kept in the "
                "link.")
    if remedy.parameter == "round":
        return (f"Set the \"Round of tool exports\" under Settings on the Labeling data page "
                f"(e.g. {remedy.example}): this export names no round of its own.")
    if remedy.parameter == "label_map":
        return (f"Fill the \"Label map\" under Settings on the Labeling data page with every "
                f"label's grade, e.g. {remedy.example}.")
    return f"Change \"{remedy.parameter}\" under Settings on the Labeling data page."


def judge(j: Judgments) -> str | None:
    """The rater marked as a model judge in this session (on the Model judge page), or
    None: when never marked, the bundled sample's judge while the sample is shown."""
    if len(j.raters) < 2:
        return None
    default = labels_glue.SAMPLE_JUDGE if source() == "sample" else None
    kept = views.view_value(labeling.JUDGE, default, choices=list(j.raters))
    return str(kept) if kept in j.raters else None


def require_judgments(loaded: labels_glue.Loaded | None, *, people: bool = True,
                      link: bool = True) -> tuple[str, Judgments]:
    """(cache key, judgments), or a pointer to the Labeling data page (the page stops).

    ``people``: the model judge (:func:`judge`) left out, so that every people's number
    is the people's (the key says who is left out); ``False``: every rater's labels.
    ``link``: the pointer links to the Labeling data page (not on that page itself).
    """
    if loaded is not None and loaded.error is not None:
        show_format_error(loaded.error, hint=conflict_hint(loaded.error))
        if link:
            st.page_link(LABELS_DATA_PAGE, label="Go to the Labeling data page",
                         icon=":material/upload_file:")
        st.stop()  # the files are loaded, and refused: said above
    if loaded is None or loaded.judgments is None:
        st.info("No labeling files loaded: choose the sample or upload files on the "
                "Labeling data page.", icon=":material/info:")
        if link:
            st.page_link(LABELS_DATA_PAGE, label="Go to the Labeling data page",
                         icon=":material/upload_file:")
        st.stop()
    j = loaded.judgments
    model = judge(j) if people else None
    if model is None:
        return loaded.key, j
    st.caption(f":material/smart_toy: The model judge **{md_escape(model)}** is left out of "
               "the people's numbers here (see the Model judge page).")
    return _people(loaded.key, j, model)


def _people(key: str, j: Judgments, model: str | None) -> tuple[str, Judgments]:
    """(cache key, judgments) without the model judge ``model`` (None: every rater)."""
    if model is None:
        return key, j
    return f"{key}|-{model}", labels_glue.people_cached(key, j, (model,))


def anchors_key(a: labels_glue.Anchors | None, s: Mapping[str, object]) -> str:
    """What the anchor check ``a`` (:func:`anchors`) is keyed by in the rater-noise trend,
    under the settings ``s``: ``""`` without anchor items (or when they cannot be read)."""
    if a is None or a.drift is None:
        return ""
    return f"{a.names}|{s['combine']}|{s['label_map']}"


def require_gsb(loaded: labels_glue.Loaded | None) -> tuple[str, GsbJudgments]:
    """(cache key, side-by-side judgments), or a pointer to the Labeling data page."""
    if loaded is not None and loaded.error is not None:
        show_format_error(loaded.error)
    if loaded is None or loaded.gsb is None:
        st.info("No side-by-side (GSB) file loaded: upload one on the Labeling data page "
                "(columns round, query, judgment in G/S/B, optional rater).",
                icon=":material/info:")
        st.page_link(LABELS_DATA_PAGE, label="Go to the Labeling data page",
                     icon=":material/upload_file:")
        st.stop()
    return loaded.key, loaded.gsb


def names(items: list[str]) -> str:
    """A list of uploaded names for Markdown."""
    return ", ".join(md_escape(i) for i in items)


UNDEFINED = "–"
"""What a table cell shows when its number is not defined (no "None")."""


def table(frame: pd.DataFrame,
          columns: Mapping[str, tuple[str, str | Callable[[Any], str] | None, str | None]], *,
          row_style: Callable[[pd.Series], list[str]] | None = None,
          undefined: str | None = None) -> None:
    """``st.dataframe`` of ``frame``'s ``columns`` with readable headers: each column is
    ``name -> (header, format, help)`` (format as ``str.format``, e.g. ``"{:.3f}"``, or a
    function such as :func:`ireval_core.formats.label`,
    ``None``: as it is). Undefined numbers show as :data:`UNDEFINED`, and ``undefined``
    (what they mean) is said in a caption under the table when there is any."""
    shown = frame[list(columns)]
    formats = {c: f for c, (_, f, _) in columns.items() if f}
    styler = shown.style.format(formats, na_rep=UNDEFINED)  # type: ignore[arg-type]
    if row_style is not None:
        styler = styler.apply(row_style, axis=1)
    fit.dataframe(styler, number_formats=formats, column_config={
        c: st.column_config.Column(header, help=help_) for c, (header, _, help_) in
        columns.items()})
    if undefined and bool(shown.isna().to_numpy().any()):
        st.caption(f"{UNDEFINED}: {undefined}")
