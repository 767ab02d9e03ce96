"""Trend page: mean DCG@K of what users saw, month by month, beside the model-score metrics."""

from __future__ import annotations

import streamlit as st

from ireval_app import frame, labels_glue, labels_widgets, views, widgets
from ireval_app.keys import labels_trend as keys
from ireval_core import charts
from ireval_core.labels import export_batch, next_batch

with frame.page("labels_trend"):
    loaded, _, sample = labels_widgets.current()
    labels_widgets.header(
        "Labeling trend", "Mean DCG@K over the sampled queries of each round: it judges what users "
        "saw, so it moves with recall and ranking alike. Each band is a 95% bootstrap interval "
        "over queries.", sample=sample)
    key, j = labels_widgets.require_judgments(loaded)
    s = labels_widgets.settings()
    k, gain, combine = int(s["k"]), str(s["gain"]), str(s["combine"])
    t = labels_glue.trend_cached(key, j, k, gain, combine)
    drops = t.changes[t.changes["drop"]]

    # ------------------------------------------------------------------------- DCG
    st.plotly_chart(charts.label_trend(t.table, title=f"Mean DCG@{k} per round",
                                       y_label=f"mean DCG@{k}", drops=drops),
                    config={"displayModeBar": False})
    for sentence in t.notes():
        st.error(widgets.md_escape(sentence), icon=":material/trending_down:")
    if drops.empty:
        st.success("No significant drop from one round to the next.", icon=":material/check:")
    st.caption(widgets.md_escape(t.definition))
    with st.expander("Round by round"):
        st.dataframe(t.table, hide_index=True, column_config={
            c: st.column_config.NumberColumn(format="%.4f")
            for c in ("dcg", "dcg_ci_low", "dcg_ci_high", "dcg_unweighted", "ndcg")} | {
            "coverage": st.column_config.NumberColumn(format="percent")})
        st.dataframe(t.changes.drop(columns=["sentence"]), hide_index=True)

    left, right = st.columns(2)
    left.plotly_chart(charts.label_trend(t.table, value="ndcg", low=None, high=None,
                                         title=f"nDCG@{k} (ideal from the round's labels)",
                                         y_label=f"nDCG@{k}"), config={"displayModeBar": False})
    right.plotly_chart(charts.label_trend(t.table, value="coverage", low=None, high=None,
                                          title=f"Coverage: labeled share of the shown top {k}",
                                          y_label="coverage"), config={"displayModeBar": False})

    st.subheader("Labels of what was shown")
    system = st.radio("System", list(j.systems), horizontal=True, key=keys.GRADE_SYSTEM,
                      format_func=widgets.md_escape)  # options are Markdown: names shown as text
    st.plotly_chart(charts.grade_distribution(t.grades, system=system),
                    config={"displayModeBar": False})

    # ------------------------------------------------------------------------- offline vs online
    st.subheader("Offline vs online")
    if not j.has_scores:
        st.caption("The files have no model scores: AUC, GAUC and PNR need a score column.")
    else:
        oo = labels_glue.offline_online_cached(key, j, k, gain, combine)
        for note in oo.notes:
            st.warning(widgets.md_escape(note), icon=":material/compare_arrows:")
        st.dataframe(oo.table, hide_index=True, column_config={
            c: st.column_config.NumberColumn(format="%.4f")
            for c in ("dcg", "dcg_ci_low", "dcg_ci_high", "ndcg", "auc", "gauc", "pnr")})
        st.caption(widgets.md_escape(oo.definition))

    # ------------------------------------------------------------------------- segments
    if j.has_segment:
        views.bind_view(keys.BY_SEGMENT, False)
        if st.toggle("Break down by segment", key=keys.BY_SEGMENT):
            seg = labels_glue.trend_cached(key, j, k, gain, combine, "segment")
            st.dataframe(seg.table, hide_index=True, column_config={
                c: st.column_config.NumberColumn(format="%.4f")
                for c in ("dcg", "dcg_ci_low", "dcg_ci_high", "ndcg")})

    # ------------------------------------------------------------------------- next round
    st.subheader("Planning the next round")
    last = j.rounds[-1]
    views.bind_view(keys.PLAN_DELTA, 0.5)
    delta = st.number_input(f"DCG@{k} change to detect", min_value=0.01, step=0.1, format="%.2f",
                            key=keys.PLAN_DELTA,
                            help="The smallest change of mean DCG the next round should detect "
                                 "(α = 0.05, power 0.8)")
    plan = labels_glue.plan_cached(key, j, last, float(delta), k, gain, combine)
    st.dataframe(plan, hide_index=True)
    st.caption(f"From the spread of per-query DCG@{k} in {widgets.md_escape(last)}: 'new sample' "
               "= a fresh sample of queries (two independent means), 'same queries' = the queries "
               "labeled again (paired).")
    d1, d2, _ = st.columns([1, 1, 3])
    st.caption(f"The export holds the results shown in {widgets.md_escape(last)} (top {k}) without "
               "their labels, one row per shown result: the next batch for the raters.")
    d1.download_button("Results to label (CSV)",
                       lambda: export_batch(next_batch(j, last, k=k), "csv"),
                       f"to_label_{last}.csv", "text/csv", icon=":material/download:",
                       on_click="ignore")
    d2.download_button("Results to label (Excel)",
                       lambda: export_batch(next_batch(j, last, k=k), "xlsx"),
                       f"to_label_{last}.xlsx",
                       "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                       icon=":material/download:", on_click="ignore")
