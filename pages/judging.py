"""Judging page: label the unjudged documents that decide a comparison, one at a time."""

from __future__ import annotations

import streamlit as st

from ireval_app import frame, judging_task, state, views, widgets, workspace_glue
from ireval_app import judging_glue as jg
from ireval_app.keys import judging as keys
from ireval_core.decisions import judging

with frame.page("judging"):
    dataset = widgets.require_dataset()
    widgets.page_header(
        "Judging", "Label the unjudged documents that decide whether one run beats another, "
        "the most decisive first, until the verdict no longer depends on what is left; or "
        "label the month's task, the sampled queries' results, for the Trend.")
    dataset_id = state.get_dataset_id()
    ws = workspace_glue.workspace_or_problem()
    if isinstance(ws, workspace_glue.WorkspaceProblem):
        st.error(ws.message, icon=":material/error:")
        st.stop()
    if not workspace_glue.may("rater", dataset_id):  # the workspace refuses it anyway
        st.info("Judging writes labels: it needs the role rater or above in this dataset's "
                "project; ask an admin of the project.", icon=":material/lock:")
        st.stop()
    mode = st.radio("What to judge", jg.MODES, key=keys.MODE, horizontal=True,
                    label_visibility="collapsed")
    if mode == jg.MODES[1]:
        judging_task.page(ws, list(dataset.runs),
                          jg.grade_scale(sorted(set(dataset.qrels.grade.tolist()))))
        st.stop()
    if dataset_id is None or len(dataset.run_names) < 2:
        st.info("Judging writes every label into a dataset saved in the workspace: save the "
                "qrels and two runs or more on the Data page (or open a saved one), then come "
                "back.", icon=":material/info:")
        st.stop()
    names = list(dataset.run_names)
    c = st.columns([2, 2, 3, 3])
    views.bind_view(keys.MEASURE, jg.MEASURE_CHOICES[0])
    measure = c[0].selectbox("Measure", jg.MEASURE_CHOICES, key=keys.MEASURE,
                             accept_new_options=True, help="The verdicts the labels settle")
    views.bind_view(keys.BASELINE, names[0], choices=names)
    baseline = c[1].selectbox("Baseline", names, key=keys.BASELINE)
    others = [n for n in names if n != baseline]
    views.bind_view(keys.CANDIDATES, others[:1], choices=others)
    candidates = c[2].multiselect("Candidates", others, key=keys.CANDIDATES,
                                  help="Each is compared with the baseline; one queue serves all")
    typed = "" if jg.signed_in() else c[3].text_input(
        "Your name (the rater)", key=keys.RATER, help="Kept with every label you give")
    rater, actor = jg.rater_name(typed or "")
    area = st.container()  # the judging area, drawn below once the files are known
    with st.expander("Texts to judge: topics and documents files"):
        t_up = st.file_uploader("Topics (TREC topics, qid<TAB>text, CSV)", key=keys.TOPICS)
        d_up = st.file_uploader("Documents (docid<TAB>text, JSON lines, Parquet)",
                                key=keys.DOCUMENTS)
    notes = jg.guidelines(ws, dataset_id)
    with st.expander("Guidelines", expanded=notes is not None):
        st.markdown(notes or f"No guidelines yet: a dataset note whose first line is "
                    f"*{jg.GUIDELINES_TITLE}* is shown here, as markdown.")
    if not rater or not candidates or not measure:
        area.info("Give your name and choose the candidates to start.", icon=":material/info:")
        st.stop()
    runs = [r for r in dataset.runs if r.name in (baseline, *candidates)]
    try:
        session = jg.session_for(ws, dataset_id, runs, measure, baseline, state.get_options(),
                                 rater, actor)
    except ValueError as exc:
        st.error(str(exc), icon=":material/error:")
        st.stop()
    grades = jg.grade_scale(sorted(set(dataset.qrels.grade.tolist())))

    @st.fragment
    def judging_area() -> None:
        jg.run_pending(session)
        side, main = st.columns([1, 3])
        with side:
            st.progress(session.position / max(len(session.batch), 1),
                        text=f"Batch {session.batch_number}: {session.position} of "
                             f"{len(session.batch)}")
            for i, v in enumerate(session.queue.verdicts, start=1):
                st.markdown(widgets.md_escape(jg.verdict_line(i, v)))
            st.caption(f"{len(session.rows)} labels given in this session; version "
                       f"{session.version or '—'} of the dataset holds them.")
            st.download_button("Qrels (TREC)", judging.trec_qrels(session.queue.qrels),
                               file_name="qrels.judged.txt", icon=":material/download:")
        item = session.current
        with main:
            if session.error:
                st.error(session.error, icon=":material/error:")
            if item is None:
                st.success("Nothing left to judge: every verdict is settled.",
                           icon=":material/check_circle:")
                return
            query = jg.topics(t_up.name, t_up.getvalue()).get(item.query) if t_up else None
            st.markdown(f"**Query** `{widgets.md_escape(item.query)}`"
                        + (f": {widgets.md_escape(query)}" if query else ""))
            wanted = tuple(sorted({i.doc for i in session.batch}))
            doc = jg.documents(d_up.name, d_up.getvalue(), wanted).get(item.doc) if d_up else None
            with st.container(border=True, height=180):
                st.markdown(f"**Document** `{widgets.md_escape(item.doc)}`")
                if doc is not None and doc[0]:
                    st.markdown(f"**{widgets.md_escape(doc[0])}**")
                if doc is not None:
                    st.text(doc[1])
            cols = st.columns(len(grades) + 3)
            for col, g in zip(cols, grades, strict=False):
                col.button(str(g), key=f"{keys.GRADE}{g}", shortcut=str(g), type="primary",
                           use_container_width=True, on_click=jg.act,
                           args=(session, lambda g=g: jg.record(ws, session, g)))
            cols[-3].button("Can't tell", key=keys.CANT_TELL, shortcut="t",
                            on_click=jg.act, args=(session, lambda: jg.skip(session)))
            cols[-2].button("Skip", key=keys.SKIP, shortcut="Right",
                            on_click=jg.act, args=(session, lambda: jg.skip(session)))
            cols[-1].button("Undo", key=keys.UNDO, shortcut="u", disabled=not session.rows,
                            on_click=jg.act, args=(session, lambda: jg.undo(ws, session)))
            st.button("Back (undo)", key=keys.BACK, shortcut="Left", type="tertiary",
                      disabled=not session.rows, on_click=jg.act,
                      args=(session, lambda: jg.undo(ws, session)))
            st.caption("Keys: " + ", ".join(map(str, grades)) + " grade · t can't tell · "
                       "→ skip · u or ← undo. The document's system, rank and score are not "
                       "shown; documents of a query come in a random order.")

    with area:
        judging_area()
