"""What every Labeling page shares: the labeling settings, source and files of the session,
the current labeling data, its header, its guard.

The settings (K, gain, how raters are combined, the label map) are set on the Labeling
data page and used by every labeling page; their keys and URL parameters are
:mod:`ireval_app.keys.labeling`. The frame calls :func:`bind_settings` before a labeling
page runs, so a link to any labeling page restores them (or says which value it could
not apply).
"""

from __future__ import annotations

from typing import cast

import streamlit as st

from ireval_core.labels import Judgments
from ireval_core.labels.gsb import GsbJudgments

from . import labels_glue, views
from .keys import labeling
from .keys import labels_data as keys
from .text import md_escape
from .widgets import show_format_error

__all__ = ["LABELS_DATA_PAGE", "anchors", "bind_settings", "current", "get_files", "header",
           "judge", "keep_label_map", "names", "require_gsb", "require_judgments",
           "set_anchor_files", "set_files", "set_source", "settings", "source"]

LABELS_DATA_PAGE = "pages/labels_data.py"
"""Path of the Labeling data page, for ``st.page_link``."""

_COMBINE_WORDS = {"mean": "mean of the raters' labels", "median": "median of the raters' labels",
                  "majority": "most frequent label (ties: the lower)"}
_LABEL_FILES = "ireval.labels.files"  # labels_glue.Files of the uploaded labeling files
_GSB_FILES = "ireval.labels.gsb_files"  # labels_glue.Files of the uploaded GSB files
_ANCHOR_FILES = "ireval.labels.anchor_files"  # labels_glue.Files of the uploaded anchor items


# ----------------------------------------------------------------------------- session state


def bind_settings() -> None:
    """Before a labeling page runs: the settings from their widgets, the session or the
    link (checked: ``k=0`` is not applied, and says so), written into the URL."""
    views.view_value(labeling.K, labeling.DEFAULTS[labeling.K])
    views.view_value(labeling.GAIN, labeling.DEFAULTS[labeling.GAIN],
                     choices=labeling.GAINS)
    views.view_value(labeling.COMBINE, labeling.DEFAULTS[labeling.COMBINE],
                     choices=labeling.COMBINES)


def settings() -> dict[str, object]:
    """``combine``, ``k``, ``gain`` and ``label_map`` of this session (defaults until set
    on the Labeling data page or by a link; kept while that page is not shown)."""
    ss = st.session_state
    get = {key: ss.get(key, views.kept_value(key, default))
           for key, default in labeling.DEFAULTS.items()}
    return {"combine": get[labeling.COMBINE], "k": int(cast(int, get[labeling.K])),
            "gain": get[labeling.GAIN], "label_map": get[labeling.MAP]}


def source() -> str:
    """``"sample"``, ``"upload"`` or ``"saved"``: where the labeling pages take their files."""
    ss = st.session_state
    return str(ss.get(keys.SOURCE, views.kept_value(keys.SOURCE, "sample")))


def set_source(value: str) -> None:
    """Choose the labeling source programmatically (after saving a set; then rerun)."""
    views.keep_value(keys.SOURCE, value)
    st.session_state.pop(keys.SOURCE, None)  # the radio shows the kept value


def keep_label_map(text: str) -> None:
    """Remember the label map text (a text input is dropped on other pages)."""
    views.keep_value(labeling.MAP, text)


def get_files() -> tuple[labels_glue.Files, labels_glue.Files]:
    """Uploaded (labeling files, GSB files), kept while the uploaders are not shown."""
    empty = labels_glue.Files()
    return (st.session_state.get(_LABEL_FILES, empty), st.session_state.get(_GSB_FILES, empty))


def set_files(labels: list[tuple[str, bytes]] | None = None,
              gsb: list[tuple[str, bytes]] | None = None) -> None:
    """Keep uploaded labeling and GSB files (fingerprinted once, here)."""
    kept_labels, kept_gsb = get_files()
    if labels is not None and labels != list(kept_labels.files):  # new files: fingerprint
        st.session_state[_LABEL_FILES] = labels_glue.Files.of(labels)
    if gsb is not None and gsb != list(kept_gsb.files):
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
    label_map = str(settings()["label_map"])
    if source() in ("upload", "saved"):
        labels, gsb = get_files()
        sample = False
    else:
        labels, gsb = labels_glue.sample_files()
        sample = True
    loaded = labels_glue.load_judgments(labels, label_map) if labels else None
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
               f"{_COMBINE_WORDS.get(str(s['combine']), str(s['combine']))} "
               "(change them on the Labeling data page)")


def judge(j: Judgments) -> str | None:
    """The rater marked as a model judge in this session (on the Model judge page), or
    None: when never marked, the bundled sample's judge while the sample is shown."""
    kept = views.kept_value(labeling.JUDGE, None)
    if kept is None and source() == "sample":
        kept = labels_glue.SAMPLE_JUDGE
    return str(kept) if kept in j.raters and len(j.raters) > 1 else None


def require_judgments(loaded: labels_glue.Loaded | None, *, people: bool = True,
                      link: bool = True) -> tuple[str, Judgments]:
    """(cache key, judgments), or a pointer to the Labeling data page (the page stops).

    ``people``: the model judge (:func:`judge`) left out, so that every people's number
    is the people's (the key says who is left out); ``False``: every rater's labels.
    ``link``: the pointer links to the Labeling data page (not on that page itself).
    """
    if loaded is not None and loaded.error is not None:
        show_format_error(loaded.error)
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
    return (f"{loaded.key}|-{model}",
            labels_glue.people_cached(loaded.key, j, (model,)))


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
