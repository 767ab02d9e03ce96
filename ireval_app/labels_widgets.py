"""What every Labeling page shares: the current labeling data, its header, its guard."""

from __future__ import annotations

import streamlit as st

from ireval_core.labels import Judgments
from ireval_core.labels.gsb import GsbJudgments

from . import labels_glue, state
from .widgets import md_escape, show_format_error

__all__ = ["LABELS_DATA_PAGE", "current", "header", "require_gsb", "require_judgments"]

LABELS_DATA_PAGE = "pages/labels_data.py"
"""Path of the Labeling data page, for ``st.page_link``."""

_COMBINE_WORDS = {"mean": "mean of the raters' labels", "median": "median of the raters' labels",
                  "majority": "most frequent label (ties: the lower)"}


def current() -> tuple[labels_glue.Loaded | None, labels_glue.Loaded | None, bool]:
    """(judgments, GSB judgments, is_sample) for this session, read through the cache."""
    settings = state.label_settings()
    if state.label_source() in ("upload", "saved"):
        labels, gsb = state.get_label_files()
        sample = False
    else:
        labels, gsb = labels_glue.sample_files()
        sample = True
    loaded = labels_glue.load_judgments(labels, str(settings["label_map"])) if labels else None
    loaded_gsb = labels_glue.load_gsb(gsb) if gsb else None
    return loaded, loaded_gsb, sample


def header(title: str, intro: str, *, sample: bool) -> None:
    """Title, introduction, the sample banner, and the settings line every number uses."""
    st.title(title)
    st.caption(intro)
    if sample:
        st.info("**Sample labeling data**: six synthetic monthly rounds, not your files. "
                "Upload labeling files on the Labeling data page.", icon=":material/science:")
    s = state.label_settings()
    st.caption(f":material/tune: **Settings**: DCG@{s['k']}, {s['gain']} gain, label = "
               f"{_COMBINE_WORDS.get(str(s['combine']), str(s['combine']))} "
               "(change them on the Labeling data page)")


def require_judgments(loaded: labels_glue.Loaded | None) -> tuple[str, Judgments]:
    """(cache key, judgments), or a pointer to the Labeling data page (the page stops)."""
    if loaded is not None and loaded.error is not None:
        show_format_error(loaded.error)
    if loaded is None or loaded.judgments is None:
        st.info("No labeling files loaded: choose the sample or upload files on the "
                "Labeling data page.", icon=":material/info:")
        st.page_link(LABELS_DATA_PAGE, label="Go to the Labeling data page",
                     icon=":material/upload_file:")
        st.stop()
    return loaded.key, loaded.judgments


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
