"""Side by side page: good / same / bad preference judgments of two systems, per round."""

from __future__ import annotations

import streamlit as st

from ireval_app import findings, frame, labels_glue, labels_widgets, widgets
from ireval_core import charts
from ireval_core.labels.gsb import GSB_DEFINITION

with frame.page("labels_gsb"):
    _, loaded_gsb, sample = labels_widgets.current()
    labels_widgets.header(
        "Side by side (GSB)", "Raters see the results of two systems for the same query and say "
        "which is better: Good (the new one), Same or Bad. GSB = (G − B) / (G + S + B).",
        sample=sample, dcg=False)
    key, g = labels_widgets.require_gsb(loaded_gsb)
    table = labels_glue.gsb_cached(key, g)
    st.plotly_chart(charts.gsb_trend(table), config={"displayModeBar": False})
    worse = table[(table["ci_high"] < 0)]
    for row in worse.itertuples():
        findings.finding(widgets.md_escape(
            f"{row.round}: the new system is judged worse (GSB {row.gsb:+.3f}, 95% interval "
            f"[{row.ci_low:+.3f}, {row.ci_high:+.3f}], p = {row.p:.3g})."),
            icon=":material/thumb_down:")
    st.dataframe(table, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%+.4f") for c in ("gsb", "ci_low", "ci_high")} | {
        "p": st.column_config.NumberColumn(format="%.3g")})
    st.caption(widgets.md_escape(GSB_DEFINITION))
