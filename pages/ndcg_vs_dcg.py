"""nDCG vs DCG: an ideal taken from the candidates hides recall failures (seed 003)."""

from __future__ import annotations

import streamlit as st

from ireval_app import evaluation, frame, state, views, widgets
from ireval_app.keys import ndcg_vs_dcg as keys
from ireval_core import charts, formats
from ireval_core.ideal import ideal_measures, toy_example

with frame.page("ndcg_vs_dcg"):
    dataset = widgets.require_dataset()
    widgets.page_header("nDCG vs DCG")
    options = state.get_options()
    st.markdown(
        "nDCG divides DCG by the DCG of an *ideal* ranking. Where that ideal comes from matters. "
        "With the ideal built from **every judged document of the query (the qrels)**, as "
        "trec_eval does, a run that misses the relevant documents scores low. With the ideal "
        "built from **the retrieved candidates only** (`ideal=run`, what many libraries and "
        "dashboards do), a run that retrieves only junk, but ranks that junk well, still "
        "scores near 1: nDCG then measures the ranker on its own candidates and hides the "
        "recall failure. DCG (absolute, not normalised) and recall expose it.")
    widgets.require_runs(dataset)

    left, right, _ = st.columns([1, 1, 3])
    views.bind_view(keys.K, 10, choices=(5, 10, 20, 100))
    views.bind_view(keys.RECALL_K, 100, choices=(10, 100, 1000))
    k = int(left.selectbox("Cutoff k (DCG, nDCG)", (5, 10, 20, 100), key=keys.K))
    recall_k = int(right.selectbox("Recall cutoff", (10, 100, 1000), key=keys.RECALL_K))
    measures = ideal_measures(k, recall_k)
    key = state.get_dataset_key() or ""
    res = evaluation.evaluate_cached(key, dataset, measures, options)
    table = res.table()

    # ------------------------------------------------------------------------- per system
    st.subheader("Same runs, four numbers")
    bounded, absolute = st.columns([2, 1])
    bounded.plotly_chart(charts.ideal_comparison(table[list(measures[1:])]).update_layout(
        title="Normalised measures and recall, in [0, 1]"), config={"displayModeBar": False})
    absolute.plotly_chart(charts.ideal_comparison(table[[measures[0]]]).update_layout(
        title=f"DCG@{k}, absolute", showlegend=False), config={"displayModeBar": False})
    st.caption(f"Left: the three measures in [0, 1]; right: DCG@{k}, on its own scale (not "
               "bounded by 1: it grows with the grades and k). Definitions below.")
    st.dataframe(table.style.format(formats.measure), key=keys.TABLE)  # NaN: "–"
    st.caption(widgets.md_escape(
        evaluation.table_cached(key, measures, options, res).queries_caption()))
    st.markdown("\n".join(f"- **{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}"
                          for m in table.columns))
    st.caption(f"Options: {widgets.md_escape(res.options.describe())}.")
    if state.is_sample() and "narrow_recall" in table.index:
        row = table.loc["narrow_recall"]
        st.info(
            f"In the sample, `narrow_recall` retrieves few documents and misses most relevant "
            f"ones: nDCG(ideal=run)@{k} = {row[measures[2]]:.4f}, close to a perfect score, "
            f"while DCG@{k} = {row[measures[0]]:.4f}, nDCG@{k} = {row[measures[1]]:.4f} and "
            f"R@{recall_k} = {row[measures[3]]:.4f} show how little it found.",
            icon=":material/lightbulb:")

    # ------------------------------------------------------------------------- per query
    st.subheader("Per query")
    st.plotly_chart(charts.ideal_scatter(evaluation.ideal_pairs_cached(key, measures, options,
                                                                       k, res),
                                         x_label=f"nDCG(ideal=run)@{k}",
                                         y_label=f"nDCG@{k} (ideal from qrels)"),
                    config={"displayModeBar": False})
    st.caption(f"One point per query and run. x: nDCG(ideal=run)@{k}, the ideal from the "
               f"retrieved list; y: nDCG@{k}, the ideal from the qrels. y ≤ x always (the qrels "
               "ideal is at least as good); points far below the diagonal are queries whose "
               "candidates miss relevant documents.")

    # ------------------------------------------------------------------------- toy example
    st.subheader("A worked example")
    ranking, summary = toy_example(4)
    st.markdown(
        "One query; the qrels judge seven documents, three of them strong (grades 3, 3, 2). "
        "The run retrieves four weak candidates (grades 1, 1, 0, 0) and ranks them perfectly. "
        "Gain = grade (linear), discount = 1 / log2(rank + 1); every number below is computed "
        "by ireval_core on these in-memory qrels and run.")
    # one above the other: side by side at 1280 px, the ranking's DCG@rank column was cut off
    st.dataframe(ranking, hide_index=True, column_config={
        "DCG contribution": st.column_config.NumberColumn(
            format="%.4f", help="grade / log2(rank + 1): DCG@rank − DCG@(rank − 1)"),
        "DCG@rank": st.column_config.NumberColumn(format="%.4f", help="DCG up to this rank")})
    st.dataframe(summary, hide_index=True, column_config={
        "grades used": st.column_config.TextColumn(
            help="Grades in ranked order: the run's, or the best possible order of the judged "
                 "documents (qrels ideal) or of the retrieved ones (run ideal)"),
        "value": st.column_config.NumberColumn(format="%.4f")})
    st.caption("The run did the best it could with its candidates, so nDCG(ideal=run) is 1; "
               "nDCG with the qrels ideal and the small DCG show that the strong documents were "
               "never retrieved.")
