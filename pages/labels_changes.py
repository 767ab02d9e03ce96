"""Label changes page: what changed between two rounds, and where a DCG change came from."""

from __future__ import annotations

import streamlit as st

from ireval_app import frame, labels_glue, labels_widgets, views, widgets
from ireval_app.keys import labels_changes as keys
from ireval_core import charts

with frame.page("labels_changes"):
    loaded, _, sample = labels_widgets.current()
    labels_widgets.header(
        "Label changes", "Results labeled in two rounds: which labels changed, and how much of a "
        "change of mean DCG comes from new result lists and how much from changed labels.",
        sample=sample)
    key, j = labels_widgets.require_judgments(loaded)
    rounds = list(j.rounds)
    if len(rounds) < 2:
        st.info("Comparing needs two rounds.", icon=":material/info:")
        st.stop()
    c1, c2, _ = st.columns([1, 1, 2])
    views.bind_view(keys.OLD, rounds[-2], choices=rounds)
    old = c1.selectbox("Earlier round", rounds, key=keys.OLD)
    views.bind_view(keys.NEW, rounds[-1], choices=rounds)
    new = c2.selectbox("Later round", rounds, key=keys.NEW)
    if old == new:
        st.info("Pick two different rounds.", icon=":material/info:")
        st.stop()
    s = labels_widgets.settings()
    k, gain, combine = int(s["k"]), str(s["gain"]), str(s["combine"])

    st.subheader("Where the DCG change comes from")
    parts = labels_glue.decomposition_cached(key, j, old, new, k, gain, combine)
    st.dataframe(parts, hide_index=True, column_config={
        c: st.column_config.NumberColumn(format="%+.4f" if c in ("total", "from_lists",
                                                                  "from_labels") else "%.4f")
        for c in ("dcg_old", "dcg_mixed", "dcg_new", "total", "from_lists", "from_labels")})
    st.caption(widgets.md_escape(str(parts.attrs.get("definition", ""))))

    st.subheader("Labels that changed")
    ch = labels_glue.changes_cached(key, j, old, new, combine)
    m1, m2, m3 = st.columns(3)
    m1.metric("Labeled in both rounds", f"{ch.n_both:,}")
    m2.metric("Changed", f"{ch.n_changed:,}")
    m3.metric("Share changed", f"{ch.n_changed / ch.n_both:.1%}" if ch.n_both else "–")
    left, right = st.columns([3, 2])
    left.plotly_chart(charts.transition_heatmap(ch.transitions), config={"displayModeBar": False})
    right.caption(widgets.md_escape(ch.definition))
    st.dataframe(ch.pairs.head(500), hide_index=True)
