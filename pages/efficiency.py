"""Efficiency page: latency per run (p50 / p95 / p99, queries per second) and effectiveness
against latency with the Pareto front."""

from __future__ import annotations

import streamlit as st

from ireval_app import evaluation, files_widgets, frame, state, views, widgets
from ireval_app import metadata_glue as mg
from ireval_app.keys import efficiency as keys
from ireval_core import charts
from ireval_core.metadata import (
    LATENCY_DEFINITION,
    LATENCY_STATISTICS,
    front_sentence,
)

with frame.page("efficiency"):
    dataset = widgets.require_dataset()
    widgets.page_header(
        "Efficiency", "How fast each run answers, next to how good its answers are. Queries per "
        "second alone hides the slow queries users wait for: look at p95 and p99.")
    options = state.get_options()

    # ------------------------------------------------------------------------- metadata file
    upload = st.file_uploader("Query metadata file (latencies)", type=None,
                              key=keys.UPLOADER, help=mg.FORMAT_HELP)
    if upload is not None:
        loaded = mg.load_metadata(upload.name, upload.getvalue())
    elif state.is_sample():
        sample = mg.load_sample_metadata()
        if sample is None:
            st.info("The sample's metadata file is missing: upload a query metadata file.",
                    icon=":material/info:")
            st.stop()
        loaded = sample
        st.info(f"**Sample metadata**: `{mg.SAMPLE_METADATA.name}`, bundled with the sample data "
                "(synthetic latencies of its three runs). Upload a file to use your own.",
                icon=":material/science:")
    else:
        st.info("Upload a query metadata file with the latencies of your runs: one row per "
                "query, a `latency_ms_<run>` column per run (or long: `query, system, "
                "latency_ms`).", icon=":material/info:")
        st.stop()
    if loaded.error is not None or loaded.metadata is None:
        if loaded.error is not None:
            files_widgets.show_format_error(loaded.error)
        st.stop()
    meta = loaded.metadata
    dataset_key = state.get_dataset_key() or ""
    st.caption(f"{widgets.md_escape(meta.source)}: {files_widgets.metadata_summary(meta)}.")
    if not meta.has_latency:
        st.info("This file holds no latencies: add a `latency_ms_<run>` column per run.",
                icon=":material/info:")
        st.stop()

    # ------------------------------------------------------------------------- latency
    st.header("Latency per run")
    summary = mg.latency_cached(loaded.digest, meta)
    ms = st.column_config.NumberColumn(format="%.1f ms")
    st.dataframe(summary, hide_index=True, column_config={
        "system": st.column_config.TextColumn("run", pinned=True),
        "queries": st.column_config.NumberColumn(help="Queries timed for this run"),
        "p50": ms, "p95": ms, "p99": ms, "mean": ms,
        "qps": st.column_config.NumberColumn(
            "queries / s", format="%.1f",
            help="1000 / mean latency: one single-threaded worker answering one query at a time"),
    })
    st.caption(widgets.md_escape(LATENCY_DEFINITION) + ".")

    # ------------------------------------------------------------------------- chart
    st.header("Effectiveness vs latency")
    left, right = st.columns(2)
    views.bind_view(keys.MEASURE, mg.MEASURE_CHOICES[0])
    measure_text = left.selectbox(
        "Effectiveness measure", mg.MEASURE_CHOICES, key=keys.MEASURE,
        accept_new_options=True, help="Pick or type a measure (e.g. `P(rel=2)@5`)")
    views.bind_view(keys.LATENCY, "p95", choices=LATENCY_STATISTICS)
    latency = right.selectbox(
        "Latency", LATENCY_STATISTICS,
        key=keys.LATENCY, help="The latency statistic on the horizontal axis")
    specs, errors = evaluation.parse_specs([measure_text or ""])
    for message in errors:
        st.error(widgets.md_escape(message), icon=":material/error:")
    if not specs:
        st.stop()
    measure = specs[0]
    try:
        res = evaluation.evaluate_cached(dataset_key, dataset, (measure,), options)
    except ValueError as exc:
        st.error(widgets.md_escape(f"Cannot compute {measure}: {exc}"), icon=":material/error:")
        st.stop()
    points, front = mg.efficiency_cached(dataset_key, measure, options, loaded.digest,
                                         latency or "p95", res, meta)
    missing = points.attrs["missing"]
    if missing["no latency"]:
        st.caption("No latency for: " + ", ".join(widgets.md_escape(s)
                                                  for s in missing["no latency"]) + ".")
    if missing["not evaluated"]:
        st.caption("Latencies of systems that are not loaded runs, left out: " + ", ".join(
            widgets.md_escape(s) for s in missing["not evaluated"]) + ".")
    if points.empty:
        st.info("No loaded run has latencies in this file: name the latency columns after the "
                "runs (`latency_ms_<run>`).", icon=":material/info:")
        st.stop()
    st.plotly_chart(charts.effectiveness_latency(points, front, measure=measure,
                                                 latency=latency or "p95"))
    st.markdown(widgets.md_escape(front_sentence(points, front, measure=measure,
                                                 latency=latency or "p95")))
    st.caption(f"**{widgets.md_escape(measure)}**: {widgets.md_escape(res.definition(measure))}; "
               "the mean over each run's own queries (as on the Metrics page). Latency: over the "
               "queries timed for the run, judged or not.")
    shown = points.assign(front=points["system"].isin(front["system"]))
    st.dataframe(shown, hide_index=True, column_config={
        "system": st.column_config.TextColumn("run", pinned=True),
        "effectiveness": st.column_config.NumberColumn(measure, format="%.4f"),
        "latency": st.column_config.NumberColumn(f"{latency} latency", format="%.1f ms"),
        "queries": st.column_config.NumberColumn(help=f"Queries the mean of {measure} is over"),
        "timed": st.column_config.NumberColumn(help="Queries with a latency for this run"),
        "front": st.column_config.CheckboxColumn("on the front"),
    })
