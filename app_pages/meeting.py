"""Meeting page: everything a review meeting needs in one file to send."""

from __future__ import annotations

import functools

import streamlit as st

from ireval_app import evaluation, meeting_glue, state, widgets
from ireval_core.meeting import ReportInput

DEFAULT_MEASURES = ["nDCG@10", "AP", "P@10", "R@100", "RR"]

dataset = widgets.require_dataset()
widgets.page_header("Meeting", "The report to send after a review meeting: one HTML file that "
                    "opens offline in any browser, with the numbers, the significance verdicts, "
                    "the curves, the recall check, the notes and every definition and option.")
options = state.get_options()

state.bind_view(state.MEETING_MEASURES, DEFAULT_MEASURES)
texts = st.multiselect("Measures in the report", DEFAULT_MEASURES + ["nDCG@20", "ERR@10",
                                                                     "bpref", "R@1000"],
                       key=state.MEETING_MEASURES, accept_new_options=True)
measures, errors = evaluation.parse_specs(texts)
for message in errors:
    st.error(widgets.md_escape(message), icon=":material/error:")
title = st.text_input("Title", value="ireval meeting report", key=state.MEETING_TITLE)

files = state.get_loaded_files()
inputs = [ReportInput(f.name, "qrels" if f.qrels is not None else "run", f.size, f.sha256)
          for f in (files.files if files is not None else ()) if f.ok]
st.download_button(
    "Download the meeting report (HTML)",
    functools.partial(meeting_glue.report_html, dataset, options, measures, inputs=inputs,
                      title=title),
    file_name="ireval_meeting_report.html", mime="text/html", icon=":material/download:",
    type="primary", disabled=not measures or not dataset.runs, on_click="ignore")
st.caption(f"{len(dataset.runs)} run(s), measures: {widgets.md_escape(', '.join(measures))}. "
           "The file (about 5 MB: the charting library is inside it) needs no network: no "
           "address outside the file is ever requested.")
