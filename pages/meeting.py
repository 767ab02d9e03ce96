"""Meeting page: everything a review meeting needs in one file to send."""

from __future__ import annotations

import functools

import streamlit as st

from ireval_app import (
    evaluation,
    frame,
    meeting_glue,
    state,
    views,
    widgets,
    workspace_glue,
    workspace_widgets,
)
from ireval_app.keys import meeting as keys
from ireval_core.meeting import ReportInput, ReportNote
from ireval_core.workspace import Target

DEFAULT_MEASURES = ["nDCG@10", "AP", "P@10", "R@100", "RR"]

with frame.page("meeting"):
    dataset = widgets.require_dataset()
    widgets.page_header("Meeting", "The report to send after a review meeting: one HTML file "
                        "that opens offline in any browser, with the numbers, the significance "
                        "verdicts, the curves, the recall check, the notes and every definition "
                        "and option.")
    options = state.get_options()

    views.bind_view(keys.MEASURES, DEFAULT_MEASURES)
    texts = st.multiselect("Measures in the report", DEFAULT_MEASURES + ["nDCG@20", "ERR@10",
                                                                         "bpref", "R@1000"],
                           key=keys.MEASURES, accept_new_options=True)
    measures, errors = evaluation.parse_specs(texts)
    for message in errors:
        st.error(widgets.md_escape(message), icon=":material/error:")
    views.bind_view(keys.TITLE, "ireval meeting report")
    title = st.text_input("Title", key=keys.TITLE)

    dataset_id = state.get_dataset_id()
    read = workspace_glue.notes(dataset_id) if dataset_id else []
    problem = read if isinstance(read, workspace_glue.WorkspaceProblem) else None
    notes = [] if isinstance(read, workspace_glue.WorkspaceProblem) else read
    report_notes = [ReportNote(n.text, n.author, f"{n.created_at:%Y-%m-%d %H:%M} UTC",
                               str(n.target), n.kind,
                               n.target.parts if n.target.kind == "comparison" else None)
                    for n in notes]
    files = state.get_loaded_files()
    inputs = [ReportInput(f.name, "qrels" if f.qrels is not None else "run", f.size, f.sha256)
              for f in (files.files if files is not None else ()) if f.ok]
    d1, d2 = st.columns(2)
    d1.download_button(
        "Download the meeting report (HTML)",
        functools.partial(meeting_glue.report_html, dataset, options, measures, inputs=inputs,
                          notes=report_notes, title=title),
        file_name="ireval_meeting_report.html", mime="text/html", icon=":material/download:",
        type="primary", disabled=not measures or not dataset.runs, on_click="ignore")
    d2.download_button(
        "Download the decision memo (Markdown)",
        functools.partial(meeting_glue.memo_markdown, dataset, options, measures,
                          notes=report_notes, title=title),
        file_name="ireval_decision_memo.md", mime="text/markdown", icon=":material/download:",
        disabled=not measures or len(dataset.runs) < 2, on_click="ignore",
        help="The decisions recorded on the Compare page with their evidence recomputed, "
             "then the decision evidence of every pair and measure (judgment debt, who "
             "gets hurt), as a Markdown file for a wiki or a pull request")
    if not dataset.runs:  # both buttons are greyed out: say why and what to do
        st.info("No runs loaded yet: the report and the memo need run files; add them on the "
                "Data page.", icon=":material/info:")
    elif not measures:
        st.info("Choose at least one measure for the report.", icon=":material/info:")
    elif len(dataset.runs) < 2:
        st.caption("The decision memo compares runs: it needs at least two (add run files on "
                   "the Data page).")
    st.caption(f"{len(dataset.runs)} run(s), measures: {widgets.md_escape(', '.join(measures))}. "
               "The file (about 5 MB: the charting library is inside it) needs no network: no "
               "address outside the file is ever requested.")
    n_decisions = sum(n.kind == "decision" and n.comparison is not None for n in report_notes)
    if n_decisions:
        st.caption(f"The report opens with the memo of the {n_decisions} decision(s) recorded "
                   "on the Compare page: the question, the evidence recomputed with the "
                   "settings each was recorded with, the decision, who recorded it and the "
                   "link back to the live view.")

    st.subheader("Notes and decisions")
    if dataset_id is None:
        st.caption("Notes are kept with a saved dataset: save these files to the workspace on the "
                   "Data page to attach notes to the dataset, a comparison or a query.")
    elif problem is not None:  # the report above is made without the notes
        workspace_widgets.workspace_problem(
            problem, lead="The notes cannot be read, and the report has none of them. ")
    else:
        st.caption(f"Every note and decision on this dataset ({len(notes)}), newest last; they "
                   "are in the report. Add them here, beside a comparison on the Compare page or "
                   "beside a query on the Queries page.")
        for n in notes:
            if n.kind == "decision":
                st.markdown(meeting_glue.decision_markdown(str(n.target), n.text))
            else:
                st.markdown(f"**Note** on {widgets.md_escape(str(n.target))}: "
                            f"{widgets.md_escape(n.text)}")
            st.caption(f"{widgets.md_escape(n.author)} · {n.created_at:%Y-%m-%d %H:%M} UTC")
            workspace_widgets.live_view(n.text)
        workspace_widgets.notes_panel(Target.dataset(), title="Add a note on the whole dataset")
