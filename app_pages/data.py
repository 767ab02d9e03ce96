"""Data page: choose the sample or upload qrels and runs, see what was read and what is odd."""

from __future__ import annotations

import streamlit as st

from ireval_app import cache, state, widgets
from ireval_core import charts
from ireval_core.dataset import POOLED_LABEL, Dataset


def _show_summary(dataset: Dataset, files: cache.LoadedFiles) -> None:
    summary = dataset.summary(threshold=state.get_options().rel_level)
    q = summary.qrels.iloc[0]

    # ----------------------------------------------------------------------------- qrels
    st.subheader("Qrels")
    cols = st.columns(6)
    cols[0].metric("Queries in qrels", f"{q['queries']:,}")
    cols[1].metric("Judged documents", f"{q['judged']:,}", help="Judgments with a grade ≥ 0")
    cols[2].metric(f"Relevant (grade ≥ {summary.threshold:g})", f"{q['relevant']:,}")
    cols[3].metric("Pooled, unjudged", f"{q[POOLED_LABEL]:,}",
                   help="Judgments with a negative grade: in the pool but never judged")
    cols[4].metric("No relevant docs", f"{q['queries without relevant']:,}",
                   help=f"Queries with no judged document of grade ≥ {summary.threshold:g}: "
                        "their IDCG is 0")
    cols[5].metric("Runs", f"{len(dataset.runs):,}")

    chart, table = st.columns([3, 2])
    grade_counts = dict(zip(summary.grades["grade"], summary.grades["judgments"], strict=True))
    chart.plotly_chart(charts.grade_bars(grade_counts), config={"displayModeBar": False})
    with table:
        st.caption(f"{widgets.md_escape(str(q['qrels']))}: {q['judgments']:,} judgments of "
                   f"{q['documents']:,} distinct "
                   f"documents; {q['min judgments']:,} to {q['max judgments']:,} judgments per "
                   f"query (median {q['median judgments']:g}).")
        st.dataframe(summary.grades, hide_index=True, column_config=widgets.GRADE_COLUMNS)

    # ----------------------------------------------------------------------------- runs
    st.subheader("Runs")
    if dataset.runs:
        st.dataframe(summary.runs, hide_index=True, column_order=widgets.RUN_OVERVIEW_COLUMNS,
                     column_config=widgets.RUN_SUMMARY_COLUMNS)
    else:
        st.info("No runs loaded yet.", icon=":material/info:")

    # ----------------------------------------------------------------------------- checks
    st.subheader("Checks")
    if dataset.runs:
        st.dataframe(widgets.highlight_problems(summary.runs), hide_index=True,
                     column_order=widgets.RUN_CHECK_COLUMNS,
                     column_config=widgets.RUN_SUMMARY_COLUMNS)
    warnings = dataset.warnings()
    if warnings:
        widgets.show_warnings(warnings)
    if files.errors:
        st.error(f"{len(files.errors)} file(s) could not be read (see above): the checks cover "
                 "only the files that were read.", icon=":material/error:")
    elif not warnings:
        st.success("No problems found.", icon=":material/check:")


# ----------------------------------------------------------------------------- source
st.title("Data")
st.caption("Relevance judgments (qrels) and the runs to evaluate with them.")
source = widgets.source_choice()
if source == "sample":
    files = cache.load_sample()
    if files is None:
        st.info("The bundled sample data is not available (no `sample_data/qrels.txt`). "
                "Choose **Upload** to load your own files.", icon=":material/info:")
    else:
        st.caption("Synthetic sample from `sample_data/`: one qrels file and three runs "
                   "(a baseline, a stronger reranker and a short, high-precision run). "
                   "Choose **Upload** to evaluate your own files.")
else:
    files = widgets.upload_block()
dataset = state.set_loaded(files, sample=source == "sample")

# ----------------------------------------------------------------------------- files
if files is not None and not files.is_empty:
    st.subheader("Files")
    widgets.show_loaded_files(files)

if dataset is None:
    if source == "upload":
        missing = "a qrels file that can be read" if files.qrels is not None else "a qrels file"
        st.info(f"Upload {missing} to see the summary; run files alone cannot be evaluated.",
                icon=":material/upload_file:")
else:
    _show_summary(dataset, files if files is not None else cache.LoadedFiles())
