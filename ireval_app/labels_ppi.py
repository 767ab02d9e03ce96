"""The Trend page's model + people estimate: the choice of estimate (in the page's link)
and, when the model + people estimate is chosen, its month-by-month trend with PPI++
intervals, every caption saying which queries, which labels and which interval.

The numbers are the Model judge page's (:func:`ireval_app.labels_glue.ppi_of`, the same
cache entry) and the CLI's ``labels --judge RATER --ppi`` key ``ppi``.
"""

from __future__ import annotations

import streamlit as st

from ireval_core import charts, formats
from ireval_core.labels.ppi import PPIReport

from . import fit, labels_glue, labels_widgets, views
from .keys import labels_trend as keys
from .text import md_escape

__all__ = ["estimate_choice", "ppi_caption", "ppi_trend", "systems_table"]

_NUM = st.column_config.NumberColumn
_TEXT = st.column_config.TextColumn
_WORDS = {"people": "People's labels", "ppi": "Model + people (PPI++)"}


def estimate_choice() -> str:
    """The radio of the trend's estimate (``"people"`` or ``"ppi"``), bound to the link."""
    views.bind_view(keys.ESTIMATE, keys.ESTIMATE_DEFAULT, choices=list(keys.ESTIMATES))
    return str(st.radio(
        "Estimate", keys.ESTIMATES, horizontal=True, key=keys.ESTIMATE,
        format_func=_WORDS.__getitem__,
        help="People's labels: the trend of the people's labels alone (the model judge left "
             "out). Model + people: the model judge's labels of every shown result corrected "
             "by the people's labels of the results they labeled (prediction-powered "
             "inference, PPI++), with its interval; the judge is the one marked on the "
             "Model judge page."))


def ppi_caption(report: PPIReport) -> str:
    """What the model + people numbers are: which queries, which labels, which interval
    (said under each chart and table of the estimate)."""
    d = report.definitions
    people = ", ".join(report.people)
    return (f"Model + people (PPI++), mean DCG@{report.k} over each round's sampled queries: "
            f"{report.judge}'s labels of every shown result at positions <= {report.k}, "
            f"corrected by the people's ({people}) labels of the results they labeled; "
            f"{d['design']}. Band and Low/High: {d['low/high']}; Bootstrap low/high: "
            f"{d['boot_low/boot_high']}. People only: {d['people_only']}. Model only: "
            f"{d['model_only']}. The people's trend (people's labels) counts an unlabeled "
            "result as gain 0, so it is not this estimate.")


def ppi_trend(loaded: labels_glue.Loaded | None, k: int, gain: str, combine: str) -> None:
    """The model + people trend: a chart with the PPI++ intervals, the per-round table
    beside the people-only and model-only numbers, their captions; or why there is none."""
    st.subheader("Model + people estimate")
    judge = labels_widgets.judge(loaded.judgments) if loaded and loaded.judgments else None
    report = (labels_glue.ppi_of(loaded, judge, k, gain, combine) if loaded is not None
              else "no labeling files are loaded")
    if isinstance(report, str):
        st.info(md_escape(f"No model + people estimate: {report}."), icon=":material/info:")
        return
    caption = md_escape(ppi_caption(report))
    st.plotly_chart(charts.label_trend(
        report.systems, value="estimate", low="low", high="high",
        title=f"Mean DCG@{k} per round, model + people (PPI++)",
        y_label=f"mean DCG@{k}, model + people"), config={"displayModeBar": False})
    st.caption(caption)
    st.markdown("**For the memo**: " + md_escape(f"{report.memo}."))
    systems_table(report)
    st.caption(caption)


def systems_table(report: PPIReport) -> None:
    """The per-round, per-system table of the model + people estimate: the PPI++ value
    with its CLT and bootstrap intervals beside the people-only and model-only numbers.
    One table for the Trend and the Model judge page, so a value reads the same on both
    (measure values with :data:`~ireval_core.formats.MEASURE_GRID`)."""
    d, k, grid = report.definitions, report.k, formats.MEASURE_GRID
    fit.dataframe(report.systems, hide_index=True, column_order=(
        "round", "system", "queries", "n_people", "n_model", "estimate", "low", "high",
        "boot_low", "boot_high", "people_only", "people_low", "people_high", "model_only",
        "width_ratio"), column_config={
        "round": _TEXT("Round"), "system": _TEXT("System"),
        "queries": _NUM("Queries", format=formats.COUNT_GRID),
        "n_people": _NUM("People's labels", format=formats.COUNT_GRID),
        "n_model": _NUM("Judge's labels", format=formats.COUNT_GRID),
        "estimate": _NUM(f"DCG@{k}, model + people", format=grid, help=d["estimate"]),
        "low": _NUM("Low", format=grid, help=d["low/high"]),
        "high": _NUM("High", format=grid, help=d["low/high"]),
        "boot_low": _NUM("Bootstrap low", format=grid, help=d["boot_low/boot_high"]),
        "boot_high": _NUM("Bootstrap high", format=grid),
        "people_only": _NUM("People only", format=grid, help=d["people_only"]),
        "people_low": _NUM("People low", format=grid),
        "people_high": _NUM("People high", format=grid),
        "model_only": _NUM("Model only", format=grid, help=d["model_only"]),
        "width_ratio": _NUM("Width vs people only", format="%.2f", help=d["width_ratio"])})
