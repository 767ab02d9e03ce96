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
    # the answer first (change, from the lists, from the labels), then what it is made of:
    # at 1280 px the table scrolls sideways, and these columns were out of sight at its end
    labels_widgets.table(parts, {
        "system": ("System", None, None),
        "total": ("Change", "{:+.4f}", "From the lists + from the labels"),
        "from_lists": ("From the lists", "{:+.4f}", "Later lists, earlier labels − earlier"),
        "from_labels": ("From the labels", "{:+.4f}", "Later − later lists with earlier labels"),
        "dcg_old": (f"DCG@{k} earlier", "{:.4f}", "The earlier round's lists with its labels"),
        "dcg_mixed": (f"DCG@{k} later lists, earlier labels", "{:.4f}",
                      "The later round's lists with the earlier round's label of each (query, "
                      "document) where it has one, else the later one"),
        "dcg_new": (f"DCG@{k} later", "{:.4f}", "The later round's lists with its labels"),
        "queries_old": ("Queries (earlier)", "{:,}", None),
        "queries_new": ("Queries (later)", "{:,}", None),
        "old_labels_used": ("Earlier labels reused", "{:,}",
                            "Later shown results scored with the earlier round's label"),
        "relabeled": ("Relabeled", "{:,}",
                      "Of those, results whose label changed in the later round"),
        "round_old": ("Earlier", None, None), "round_new": ("Later", None, None)},
        undefined="not defined: the system has no labeled query in that round")
    st.caption(widgets.md_escape(str(parts.attrs.get("definition", ""))))

    st.subheader("Labels that changed")
    ch = labels_glue.changes_cached(key, j, old, new, combine)
    m1, m2, m3 = st.columns(3)
    m1.metric("Labeled in both rounds", f"{ch.n_both:,}")
    m2.metric("Changed", f"{ch.n_changed:,}",
              help=f"Pairs whose label (the {combine} of the raters' labels) differs between "
                   "the rounds: the off-diagonal cells of the transitions below")
    m3.metric("Share changed", f"{ch.n_changed / ch.n_both:.1%}" if ch.n_both else "–")
    left, right = st.columns([3, 2])
    left.plotly_chart(charts.transition_heatmap(
        ch.transitions, title="Label transitions (pairs labeled in both rounds)",
        x_label=f"label in {new}", y_label=f"label in {old}", unit="pairs"),
        config={"displayModeBar": False})
    right.caption(widgets.md_escape(ch.definition))
    labels_widgets.table(ch.pairs.head(500), {
        "query": ("Query", None, None), "doc": ("Document", None, None),
        "old": (f"Label in {old}", "{:g}", None), "new": (f"Label in {new}", "{:g}", None),
        "change": ("Change", "{:+g}", "Later label − earlier label")})
