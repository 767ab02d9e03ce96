"""Judging page: label the unjudged documents that decide a comparison, one at a time."""

from __future__ import annotations

from typing import Any

import streamlit as st

from ireval_app import frame, judging_task, labels_widgets, state, views, widgets, workspace_glue
from ireval_app import judging_glue as jg
from ireval_app.keys import judging as keys
from ireval_core import Run, formats
from ireval_core.decisions import judging
from ireval_core.workspace import JudgingSet, Workspace


def judging_set_editor(ws: Workspace, dataset_id: str, current: JudgingSet,
                       author: str) -> None:
    """The judging set's guidelines, label map and overlap, for an editor."""
    with st.expander("Judging set: guidelines, grade names, second raters"), \
            st.form("ireval.judging.set.form", border=False):
        guidelines = st.text_area("Guidelines (markdown, shown beside every document)",
                                  current.guidelines, key=keys.SET_GUIDELINES, height=160)
        c = st.columns([3, 1])
        label_map = c[0].text_input(
            "Grade names (a label map)", current.label_map, key=keys.SET_LABEL_MAP,
            placeholder="none=0,low=1,mid=2,high=3 (the default)",
            help="word=grade pairs, or a built-in map's name (bad/fair/good/excellent/"
                 "perfect); empty: the names of the dataset's labeling files, else the "
                 "default. The grades offered follow the qrels' scale")
        overlap = c[1].number_input(
            "Second rater (%)", 0, 50, round(current.overlap * 100), key=keys.SET_OVERLAP,
            help="The share of the documents a second rater is asked to judge too, for "
                 "the agreement")
        st.caption(f"Version {current.version} of this dataset's judging set"
                   + (f", saved by {widgets.md_escape(current.edited_by)} on "
                      f"{current.edited_at:%Y-%m-%d %H:%M} UTC" if current.edited_at else "")
                   + ". Saving keeps every earlier version; it needs the role editor.")
        if st.form_submit_button("Save the judging set", key=keys.SET_SAVE):
            saved = jg.save_judging_set(ws, dataset_id, guidelines, label_map, overlap,
                                        author)
            if isinstance(saved, str):
                st.error(widgets.md_escape(saved), icon=":material/error:")
            else:
                st.success(f"Saved as version {saved.version}.", icon=":material/check:")


def guidelines_panel(current: JudgingSet) -> None:
    """The team's guidelines, beside the document."""
    with st.container(border=True, height=230):
        st.markdown("**Guidelines**")
        if current.guidelines.strip():
            st.markdown(current.guidelines)
        else:
            st.caption("None yet: an editor writes them under *Judging set* below.")


def raters_and_exports(session: jg.Session, runs: list[Run]) -> None:
    """Several raters' agreement and rule, and the downloads."""
    overlap = session.settings.overlap
    st.caption(f"Several raters: {formats.percent(overlap, 0)} of the documents are asked "
               f"of a second rater. How their labels make one grade: {judging.AGGREGATION}.")
    report = jg.agreement(session)
    if report is None:
        st.caption("Agreement: no document has two raters' grades yet.")
    else:
        st.caption("Agreement, as of your last label (every rater's labels: the others' "
                   "as read at the start of this batch):")
        d = report.definitions
        labels_widgets.table(report.per_round, {
            "raters": ("Raters", None, d.get("raters")),
            "pairable_units": ("Documents with 2+ grades", "{:,}", d.get("pairable_units")),
            "cohen_quadratic": ("Cohen's kappa, quadratic", "{:.3f}",
                                d.get("cohen_quadratic")),
            "alpha": ("Krippendorff's alpha", "{:.3f}", d.get("alpha"))},
            undefined="not defined: every grade is the same")
        labels_widgets.table(report.per_rater, {
            "rater": ("Rater", None, None),
            "labels": ("Grades", "{:,}", d.get("labels")),
            "kappa_vs_consensus": ("Kappa vs the others", "{:.3f}",
                                   d.get("kappa_vs_consensus")),
            "agreement_vs_consensus": ("Same grade as the others", "{:.1%}",
                                       d.get("agreement_vs_consensus"))},
            undefined="not defined: no other rater graded the rater's documents")
    c = st.columns(2)
    c[0].download_button("Judged labels (TREC qrels)", lambda: jg.exports(session, runs)[0],
                         file_name="judged.qrels.txt", key=keys.EXPORT_QRELS,
                         icon=":material/download:")
    c[1].download_button("Labeling table (CSV)", lambda: jg.exports(session, runs)[1],
                         file_name="judged.labels.csv", key=keys.EXPORT_TABLE,
                         icon=":material/download:")
    st.caption("The labeling table is what the Monthly labeling pages read: one row per "
               "rater's label and run that ranks the document, at its position there.")


def item_view(session: jg.Session, t_up: Any, d_up: Any) -> None:
    """The query and the document to judge (no system, rank or score)."""
    item = session.current
    assert item is not None
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


def buttons(ws: Workspace, session: jg.Session, grades: tuple[int, ...]) -> None:
    """Grade, can't tell, skip, undo: each a key."""
    named = jg.grade_buttons(grades, session.label_map)
    cols = st.columns(jg.button_widths(len(named), (1.25, 0.85)))
    for col, (g, text) in zip(cols, named, strict=False):
        col.button(text, key=f"{keys.GRADE}{g}", shortcut=str(g), type="primary",
                   use_container_width=True, on_click=jg.act,
                   args=(session, lambda g=g: jg.record(ws, session, g)))
    cols[-3].button("Can't tell", key=keys.CANT_TELL, shortcut="t",
                    on_click=jg.act, args=(session, lambda: jg.cant_tell(ws, session)))
    cols[-2].button("Skip", key=keys.SKIP, shortcut="Right",
                    on_click=jg.act, args=(session, lambda: jg.skip(session, ws)))
    jg.undo_button(cols[-1], session, lambda: jg.undo(ws, session), bool(session.rows))
    st.caption("Keys: " + ", ".join(map(str, grades)) + " grade · t can't tell (recorded, "
               "not a grade) · → skip · " + jg.UNDO_KEYS + ". The document's system, rank "
               "and score are not shown; documents of a query come in a random order.")


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
    mode = st.radio("What to judge", jg.MODES, key=keys.MODE, horizontal=True,
                    label_visibility="collapsed")
    if mode == jg.MODES[1]:  # labels go to a labeling set: the set's project decides
        judging_task.page(ws, list(dataset.runs),
                          jg.grade_scale(sorted(set(dataset.qrels.grade.tolist()))))
        st.stop()
    if not workspace_glue.may("rater", dataset_id):  # the workspace refuses it anyway
        st.info("Judging writes labels: it needs the role rater or above in this dataset's "
                "project; ask an admin of the project.", icon=":material/lock:")
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
    jg.restore_rater(keys.RATER)
    typed = "" if jg.signed_in() else c[3].text_input(
        "Your name (the rater)", key=keys.RATER, help="Asked once per session; kept with "
                                                      "every label you give")
    rater, actor = jg.rater_name(typed or "")
    settings = jg.judging_set(ws, dataset_id)
    area = st.container()  # the judging area, drawn below once the files are known
    with st.expander("Texts to judge: topics and documents files"):
        t_up = st.file_uploader("Topics (TREC topics, qid<TAB>text, CSV)", key=keys.TOPICS)
        d_up = st.file_uploader("Documents (docid<TAB>text, JSON lines, Parquet)",
                                key=keys.DOCUMENTS)
    if workspace_glue.may("editor", dataset_id):
        judging_set_editor(ws, dataset_id, settings, rater)
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
        side, main, notes = st.columns([1.1, 2.4, 1.5])
        with side:
            st.progress(session.position / max(len(session.batch), 1),
                        text=f"Batch {session.batch_number}: {session.position} of "
                             f"{len(session.batch)}")
            for i, v in enumerate(session.queue.verdicts, start=1):
                st.markdown(widgets.md_escape(jg.verdict_line(i, v)))
            st.caption(f"{len(session.rows)} labels given in this session; version "
                       f"{session.version or '—'} of the dataset holds them.")
        with notes:
            guidelines_panel(session.settings)
        with main:
            if session.error:
                st.error(session.error, icon=":material/error:")
            if session.current is None:
                st.success("Nothing left to judge: every verdict is settled.",
                           icon=":material/check_circle:")
            else:
                item_view(session, t_up, d_up)
        if session.current is not None:  # the whole width: every key's name readable
            buttons(ws, session, grades)
        with st.expander("Raters, agreement and exports", key=keys.RATERS,
                         on_change="rerun") as panel:
            if panel.open:  # computed only when shown, after the next document is drawn
                raters_and_exports(session, list(dataset.runs))

    with area:
        judging_area()
