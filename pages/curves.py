"""Curves page: interpolated PR curves, one query's PR curve, and the pooled ROC of every run."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ireval_app import curves_glue, evaluation, state, widgets
from ireval_core import charts

QUERY = state.CURVES_QUERY

dataset = widgets.require_dataset()
opts = evaluation.evaluation_options()

st.title("Curves")
st.caption("Precision–recall and ROC curves of every run, under the evaluation options in the "
           "sidebar (relevance level, depth cut, query set). The judged-only option does not "
           "apply here: PR counts unjudged documents as non-relevant, ROC leaves them out.")

if not dataset.runs:
    st.info("No runs loaded yet: add run files on the Data page.", icon=":material/info:")
    st.stop()

rel = opts["rel_level"]
curves = curves_glue.curves_for(state.get_dataset_key() or "", dataset, rel_level=rel,
                                depth=opts["depth"], complete=opts["complete"])
chance = curves_glue.pooled_prevalence(curves)

# ----------------------------------------------------------------------------- interpolated PR
st.subheader("Interpolated precision–recall (11 points)")
chart, text = st.columns([3, 1])
chart.plotly_chart(charts.interpolated_pr_curve(
    {name: c.interpolated for name, c in curves.items()}, prevalence=chance),
    config={"displayModeBar": False})
with text:
    st.caption(curves_glue.PR_DEFINITION.format(rel=rel))
    st.caption(f"Chance line: prevalence = relevant / judged among the retrieved documents of "
               f"all runs together = {chance:.3f} (a random ordering of the judged documents "
               "has this precision at every recall).")

# ----------------------------------------------------------------------------- one query
st.subheader("Precision–recall of one query")
queries = sorted(set().union(*(set(c.points["query"]) for c in curves.values())))
if queries:
    chart, text = st.columns([3, 1])
    with text:
        query = st.selectbox("Query", queries, key=QUERY,
                             help="Queries with at least one relevant document in the qrels")
        st.caption(f"Precision (relevant so far / rank) and recall (relevant so far / R) after "
                   f"every ranked document of this query, relevant = grade ≥ {rel:g}; drawn as "
                   "steps, not interpolated. A run that never reaches recall 1 stops where its "
                   "ranking ends.")
    chart.plotly_chart(charts.pr_curve(
        {name: c.query_points(query) for name, c in curves.items()},
        title=f"Precision–recall of query {query}"), config={"displayModeBar": False})
else:
    st.info(f"No query has a relevant document (grade ≥ {rel:g}).", icon=":material/info:")

# ----------------------------------------------------------------------------- ROC
st.subheader("ROC, pooled over queries")
chart, text = st.columns([3, 1])
chart.plotly_chart(charts.roc_curve({name: c.roc for name, c in curves.items()},
                                    auc={name: c.auc for name, c in curves.items()}),
                   config={"displayModeBar": False})
text.caption(curves_glue.ROC_DEFINITION.format(rel=rel,
                                                resolution=charts.ROC_RESOLUTION))
table, _ = st.columns([3, 1])
with table:
    st.dataframe(pd.DataFrame({
        "run": list(curves),
        "pooled AUC": [c.auc for c in curves.values()],
        "prevalence": [c.prevalence for c in curves.values()],
        "judged retrieved": [c.n_judged for c in curves.values()],
        "queries": [c.n_queries for c in curves.values()],
    }), hide_index=True, column_config={
        "pooled AUC": st.column_config.NumberColumn(format="%.4f",
                                                    help="Area under the pooled ROC curve"),
        "prevalence": st.column_config.NumberColumn(
            format="%.3f", help="Relevant / judged among this run's retrieved documents"),
        "judged retrieved": st.column_config.NumberColumn(
            help="Retrieved documents with a judgment (grade ≥ 0): the ROC's population"),
    })
