"""ireval: search-evaluation workbench. Run with ``streamlit run app.py``.

This script is the Data page (URL ``/``): choose the sample or upload qrels and runs, see
what was read and what is odd. The other pages are ``pages/<name>.py`` (Streamlit's own
multipage layout, each at ``/<name>``); every page, this one included, draws the shared
frame (menu, options, dataset, link) with ``with frame.page(...)``
(:mod:`ireval_app.frame`).
"""

from __future__ import annotations

import streamlit as st

from ireval_app import cache, dask_glue, fit, frame, state, widgets, workspace_glue
from ireval_app import files_widgets as fw
from ireval_app import workspace_widgets as ww
from ireval_app.keys import data as keys
from ireval_core.dataset import POOLED_LABEL, Dataset
from ireval_core.errors import IrevalError
from ireval_core.workspace import DatasetInfo, DatasetNotFoundError, Workspace, WorkspaceError


def _show_summary(dataset: Dataset, files: cache.LoadedFiles) -> None:
    summary = dataset.summary(threshold=state.get_options().rel_level)
    q = summary.qrels.iloc[0]

    # ------------------------------------------------------------------------- qrels
    st.subheader("Qrels")
    # a row that wraps rather than cutting a label short (1280 px wide: "Judged docum...")
    with st.container(horizontal=True, gap="medium"):
        st.metric("Queries in qrels", f"{q['queries']:,}", width="content")
        st.metric("Judgments", f"{q['judged']:,}", width="content",
                  help="Judgments with a grade ≥ 0 (query, document) pairs: a document judged "
                       "for two queries counts twice; the pooled, unjudged ones are not counted")
        st.metric(f"Relevant (grade ≥ {summary.threshold:g})", f"{q['relevant']:,}",
                  width="content")
        st.metric("Pooled, unjudged", f"{q[POOLED_LABEL]:,}", width="content",
                  help="Judgments with a negative grade: in the pool but never judged")
        st.metric("No relevant docs", f"{q['queries without relevant']:,}", width="content",
                  help=f"Queries with no judged document of grade ≥ {summary.threshold:g}: "
                       "their IDCG is 0")
        st.metric("Runs", f"{len(dataset.runs):,}", width="content")

    # The grades with their counts drawn as bars in the table, not a Plotly chart beside it
    # (the same numbers twice): plotly.js is 4.7 MB that the browser loads and runs, about
    # two seconds of its CPU, on the page every session opens first.
    with st.columns([3, 2])[0]:
        st.caption(f"{widgets.md_escape(str(q['qrels']))}: {q['judgments']:,} judgments of "
                   f"{q['documents']:,} distinct "
                   f"documents; {q['min judgments']:,} to {q['max judgments']:,} judgments per "
                   f"query (median {q['median judgments']:g}).")
        most = max(int(summary.grades["judgments"].max()), 1)
        fit.dataframe(summary.grades, column_config={
            **widgets.GRADE_COLUMNS,
            "judgments": st.column_config.ProgressColumn(format="localized", min_value=0,
                                                         max_value=most)})

    # ------------------------------------------------------------------------- runs
    st.subheader("Runs")
    if dataset.runs:
        fit.dataframe(summary.runs, column_order=widgets.RUN_OVERVIEW_COLUMNS,
                      column_config=widgets.RUN_SUMMARY_COLUMNS)
    else:
        st.info("No runs loaded yet.", icon=":material/info:")

    # ------------------------------------------------------------------------- checks
    st.subheader("Checks")
    if dataset.runs:
        st.dataframe(widgets.highlight_problems(summary.runs), hide_index=True,
                     column_order=widgets.RUN_CHECK_COLUMNS,
                     column_config=widgets.RUN_SUMMARY_COLUMNS)
    warnings = dataset.warnings(complete=state.get_options().complete)
    if warnings:
        fw.show_warnings(warnings)
    if files.errors:
        st.error(f"{len(files.errors)} file(s) could not be read (see above): the checks cover "
                 "only the files that were read.", icon=":material/error:")
    elif not warnings:
        st.success("No problems found.", icon=":material/check:")


def _saved_block() -> tuple[cache.LoadedFiles | None, str | None]:
    """Pick a dataset saved in the workspace (and delete one, with a confirmation); when
    the workspace cannot be used, say why, where, and what to do."""
    try:
        picked = workspace_glue.with_workspace(_saved_pick)
    except DatasetNotFoundError as exc:  # deleted in another session since it was listed
        st.warning(widgets.md_escape(str(exc)), icon=":material/warning:")
        return None, None
    if isinstance(picked, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(picked)
        return None, None
    return picked


def _saved_pick(ws: Workspace) -> tuple[cache.LoadedFiles | None, str | None]:
    infos = ws.list_datasets(actor=workspace_glue.actor())
    st.caption(f"Workspace: {widgets.md_escape(ws.url)}. Saved datasets are shared by "
               "everyone using this workspace (with sign-in, by the members of their "
               "project: this list has the projects you may read); a link to a view opens "
               "its dataset.")
    if not infos:
        st.info("No saved dataset yet: choose Upload above, load qrels and runs, then "
                "**Save to the workspace**.", icon=":material/info:")
        return None, None
    by_id = {i.id: i for i in infos}
    projects = workspace_glue.shows_projects(infos)
    current = state.get_dataset_id()
    state.keep_choice(keys.SAVED_PICK, list(by_id), current if current in by_id else infos[0].id)
    pick = st.selectbox(
        "Saved dataset", list(by_id), key=keys.SAVED_PICK,
        format_func=lambda i: (f"{by_id[i].name}  ·  "
                               + (f"project {by_id[i].project}  ·  " if projects else "")
                               + f"{len(by_id[i].files)} files  ·  saved "
                               f"by {by_id[i].saved_by} on {by_id[i].saved_at:%Y-%m-%d}  ·  "
                               f"{by_id[i].short_id}"))
    info, files = workspace_glue.open_dataset(
        ws, pick, comments=cache.reads_comments(state.get_options()))
    meta = workspace_glue.files_of_kind(ws, info, ("metadata",))
    if meta:  # the query metadata saved with the dataset
        from ireval_app import metadata_glue

        _, name, data = meta[0]
        state.set_metadata_upload(metadata_glue.load_metadata(name, data), (name, data))
    else:
        state.set_metadata_upload(None)
    if info.note:
        st.caption(f"Note: {widgets.md_escape(info.note)}")
    if workspace_glue.may("admin", info.id):
        _delete_box(ws, info)
    return files, info.id


def _delete_box(ws: Workspace, info: DatasetInfo) -> None:
    """Delete the dataset ``info``, after its id is typed (an admin of its project)."""
    with st.expander("Delete this dataset", icon=":material/delete:"):
        st.caption(f"Deleting removes the dataset, its notes and decisions, and the files no "
                   f"other dataset uses, for everyone. Type its id **{info.short_id}** to "
                   "confirm.")
        typed = st.text_input("Id", key=keys.DELETE_CONFIRM)
        if st.button("Delete for good", type="primary", disabled=not typed):
            try:
                gone = ws.delete_dataset(info.id, confirm=typed.strip(),
                                         actor=workspace_glue.actor())
            except (IrevalError, ValueError) as exc:  # ValueError: a wrong confirmation
                if isinstance(exc, WorkspaceError) and not isinstance(exc,
                                                                      DatasetNotFoundError):
                    raise  # the workspace failed: _saved_block says so
                st.error(widgets.md_escape(str(exc)), icon=":material/error:")
            else:
                state.forget(keys.SAVED_PICK, keys.DELETE_CONFIRM)
                state.set_loaded(None, None)
                st.toast(f"Deleted {gone.name} ({gone.files} files, {gone.notes} notes)")
                st.rerun()


_NOT_SAVED = "Not saved: a reload of the page loses these files. "


def _save_block() -> None:
    """Save the uploaded files to the workspace (once; the same files are one dataset);
    when the workspace cannot be used, say so (the files stay loaded in this session)."""
    qrels = state.get_upload_bytes("qrels")
    runs = state.get_upload_bytes("runs")
    if not qrels:
        return
    files = workspace_glue.dataset_files(qrels[0], runs, state.get_metadata_bytes())
    files_id = workspace_glue.dataset_id(files, state.get_uploaded())
    try:
        existing = workspace_glue.saved_as(files_id)
    except IrevalError as exc:  # saved in a project this person may not read
        st.warning(widgets.md_escape(_NOT_SAVED + str(exc)), icon=":material/cloud_off:")
        return
    if isinstance(existing, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(existing, lead=_NOT_SAVED)
        return
    if existing is not None:
        state.set_dataset_id(existing.id)
        st.success(f"These files are saved in the workspace as "
                   f"**{widgets.md_escape(existing.name)}** ("
                   + (f"project {widgets.md_escape(existing.project)}, "
                      if workspace_glue.shows_projects([existing]) else "")
                   + "by "
                   f"{widgets.md_escape(existing.saved_by)}, "
                   f"{existing.saved_at:%Y-%m-%d}): links to this view open them.",
                   icon=":material/cloud_done:")
        return
    projects = workspace_glue.projects_allowing("editor")
    if isinstance(projects, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(projects, lead=_NOT_SAVED)
        return
    if not projects:
        st.warning(_NOT_SAVED + "Saving to the workspace needs the role editor in a project: "
                   "ask an admin of the project.", icon=":material/cloud_off:")
        return
    st.warning(_NOT_SAVED + "Save them to the workspace to keep them, share a link, and "
               "attach notes.", icon=":material/cloud_off:")
    with st.form("ireval.save.form", border=True):
        st.markdown("**Save to the workspace**")
        name = st.text_input("Name", key=keys.SAVE_NAME,
                             placeholder="e.g. TREC DL 2019, November round")
        note = st.text_input("Note (optional)", key=keys.SAVE_NOTE)
        project = ww.project_choice(projects, keys.SAVE_PROJECT)
        ww.author_field()
        if st.form_submit_button("Save", icon=":material/cloud_upload:", type="primary"):
            author = ww.author()
            if not name.strip() or not author:
                st.error("A saved dataset needs a name and your name.", icon=":material/error:")
                return
            info = ww.written(workspace_glue.save_dataset(
                files, name=name.strip(), note=note.strip(), author=author, project=project),
                lead=_NOT_SAVED)
            if info is None:
                return
            state.set_last_project(info.project)
            state.set_dataset_id(info.id)
            st.toast(f"Saved as {info.name} ({info.short_id})")
            st.rerun()


with frame.page("data"):
    # ------------------------------------------------------------------------- source
    st.title("Data")
    st.caption("Relevance judgments (qrels) and the runs to evaluate with them.")
    source = fw.source_choice()
    folder = cache.data_dir()
    if source == "sample" and folder is not None:
        files = (cache.load_folder(folder, comments=cache.reads_comments(state.get_options()))
                 if folder.is_dir() else None)
        st.caption(f"Files of the folder {widgets.md_escape(str(folder))} (`IREVAL_DATA_DIR`).")
        if files is None:
            st.error(f"No qrels file (`qrels*`) in {widgets.md_escape(str(folder))}.",
                     icon=":material/error:")
        dataset = state.set_loaded(files, cache.dataset_for(files))
    elif source == "sample":
        files = cache.load_sample(comments=cache.reads_comments(state.get_options()))
        if files is None:
            st.info("The bundled sample data is not available (no `sample_data/qrels.txt`). "
                    "Choose Upload above to load your own files.", icon=":material/info:")
        else:
            # Not "**Upload**": until the browser has loaded the radio's code (a grey box for
            # up to seconds on a busy server), a bold "Upload" here is the only one on screen, and
            # a click on it, which looks like the way to upload, did nothing.
            st.caption("Synthetic sample from `sample_data/`: one qrels file and three runs "
                       "(a baseline, a stronger reranker and a short, high-precision run). "
                       "Choose Upload above to evaluate your own files.")
        dataset = state.set_loaded(files, cache.dataset_for(files), sample=True)
    elif source == "saved":
        files, saved_id = _saved_block()
        dataset = state.set_loaded(files, cache.dataset_for(files), dataset_id=saved_id)
        state.sync_query_params()  # the link names the dataset picked in this run
    else:
        files = fw.upload_block()
        dataset = state.set_loaded(files, cache.dataset_for(files))
        saving = st.container()  # filled after the summary: the files first, the workspace next

    # ------------------------------------------------------------------------- files
    if files is not None and not files.is_empty:
        st.subheader("Files")
        fw.show_loaded_files(files)
        if source == "upload":
            fw.show_metadata_upload()

    if dataset is None:
        if source == "upload":
            missing = "a qrels file that can be read" if files.qrels is not None else "a qrels file"
            st.info(f"Upload {missing} to see the summary; run files alone cannot be evaluated.",
                    icon=":material/upload_file:")
    else:
        _show_summary(dataset, files if files is not None else cache.LoadedFiles())
        if source == "upload":
            with saving:
                _save_block()
            state.sync_query_params()

    # ------------------------------------------------------------------------- cluster
    dask_glue.dask_job_block()  # files too large for this server, on a Dask cluster
