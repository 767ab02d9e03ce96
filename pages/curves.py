"""Curves page: interpolated PR curves, one query's PR curve, and the pooled ROC of every run."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ireval_app import curves_glue, frame, state, views, widgets
from ireval_app.keys import curves as keys
from ireval_core import charts
from ireval_core.curves import (
    PR_DEFINITION,
    ROC_DEFINITION,
    pooled_prevalence,
    queries_averaged,
)

with frame.page("curves"):
    dataset = widgets.require_dataset()
    widgets.page_header("Curves", "Precision–recall and ROC curves of every run, under the "
                        "evaluation options in the sidebar.")
    options = state.get_options()
    widgets.require_runs(dataset)

    curves = curves_glue.curves_for(state.get_dataset_key() or "", dataset, options)
    chance = pooled_prevalence(curves)
    rel = options.rel_level
    pr_problems = {name: c.pr_problem() for name, c in curves.items() if c.pr_problem()}

    # ------------------------------------------------------------------------- interpolated PR
    st.subheader("Interpolated precision–recall (11 points)")
    if len(pr_problems) == len(curves):
        st.info("No precision–recall curve can be drawn: "
                + "; ".join(f"{widgets.md_escape(n)}: {p}" for n, p in pr_problems.items()) + ".",
                icon=":material/info:")
    else:
        chart, text = st.columns([3, 1])
        chart.plotly_chart(charts.interpolated_pr_curve(
            {name: c.interpolated_frame() for name, c in curves.items() if name not in pr_problems},
            prevalence=chance), config={"displayModeBar": False})
        with text:
            st.caption(widgets.md_escape(PR_DEFINITION.format(rel=rel) + " "
                                         + queries_averaged(curves)))
            st.caption(f"Chance line: prevalence = relevant / judged among the retrieved documents "
                       f"of all runs together = {chance:.3f} (a random ordering of the judged "
                       "documents has this precision at every recall).")
            for name, problem in pr_problems.items():
                st.caption(f"Not drawn, {widgets.md_escape(name)}: {widgets.md_escape(problem)}.")

    # ------------------------------------------------------------------------- one query
    st.subheader("Precision–recall of one query")
    queries = sorted(set().union(*(c.queries_with_relevant for c in curves.values())))
    if queries:
        chart, text = st.columns([3, 1])
        with text:
            views.bind_view(keys.QUERY, queries[0], choices=queries)
            query = st.selectbox("Query", queries, key=keys.QUERY,
                                 help=f"Queries with at least one document of grade ≥ {rel:g} in "
                                      "the qrels")
            st.caption(f"Precision (relevant so far / rank) and recall (relevant so far / R) after "
                       f"every ranked document of this query, relevant = grade ≥ {rel:g}; drawn as "
                       "steps, not interpolated. A run that never reaches recall 1 stops where its "
                       "ranking ends.")
        chart.plotly_chart(charts.pr_curve(
            {name: c.query_points(query) for name, c in curves.items()},
            title=f"Precision–recall of query {query}"), config={"displayModeBar": False})
    else:
        st.info(f"No evaluated query has a relevant document (grade ≥ {rel:g}) in the qrels, so "
                "recall is undefined for every query.", icon=":material/info:")

    # ------------------------------------------------------------------------- ROC
    st.subheader("ROC, pooled over queries")
    roc_problems = {name: c.roc_problem() for name, c in curves.items() if c.roc_problem()}
    if len(roc_problems) == len(curves):
        st.info("No ROC curve can be drawn: " + "; ".join(
            f"{widgets.md_escape(n)}: {widgets.md_escape(str(p))}" for n, p in roc_problems.items())
            + ". Lower the relevance level or judge more documents.", icon=":material/info:")
    else:
        chart, text = st.columns([3, 1])
        chart.plotly_chart(charts.roc_curve(
            {name: c.roc_frame() for name, c in curves.items() if name not in roc_problems},
            auc={name: c.auc for name, c in curves.items() if name not in roc_problems}),
            config={"displayModeBar": False})
        text.caption(widgets.md_escape(ROC_DEFINITION.format(rel=rel))
                     + f" Long curves are drawn within 1/{charts.ROC_RESOLUTION} of every exact "
                     "point; the AUC uses them all.")
        for name, problem in roc_problems.items():
            text.caption(f"Not drawn, {widgets.md_escape(name)}: "
                         f"{widgets.md_escape(str(problem))}.")
    table, _ = st.columns([3, 1])
    with table:
        st.dataframe(pd.DataFrame({
            "run": list(curves),
            "pooled AUC": [c.auc for c in curves.values()],
            "prevalence": [c.prevalence for c in curves.values()],
            "judged retrieved": [c.n_judged for c in curves.values()],
            "queries": [c.n_queries for c in curves.values()],
            "why no ROC": [roc_problems.get(n, "") for n in curves],
        }), hide_index=True, column_config={
            "pooled AUC": st.column_config.NumberColumn(format="%.4f",
                                                        help="Area under the pooled ROC curve"),
            "prevalence": st.column_config.NumberColumn(
                format="%.3f", help="Relevant / judged among this run's retrieved documents"),
            "judged retrieved": st.column_config.NumberColumn(
                help="Retrieved documents with a judgment (grade ≥ 0): the ROC's population"),
            "why no ROC": st.column_config.TextColumn(help="Empty when the ROC is drawn"),
        }, column_order=None if roc_problems else ["run", "pooled AUC", "prevalence",
                                                    "judged retrieved", "queries"])
