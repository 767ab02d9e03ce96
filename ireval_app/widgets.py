"""Widgets and renderers shared by the pages.

Errors are shown as a message with ``file:line``, the reason and the offending line,
never as a traceback; warnings as one box listing every soft problem.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.uploaded_file_manager import UploadedFile

from ireval_core.dataset import TOP_K, Dataset
from ireval_core.errors import DataWarning, FormatError
from ireval_core.io import has_comment_lines, has_judgment_groups
from ireval_core.options import IDCG_ZERO_POLICIES, OPTION_HELP, TREC_EVAL_VERSIONS, EvalOptions
from ireval_core.workspace import Target

from . import cache, state, views
from .text import code_block, inline_code, md_escape, md_frame

if TYPE_CHECKING:  # the metadata module brings scipy, which the Data page does not need
    from ireval_core.metadata import QueryMetadata
    from ireval_core.workspace import Workspace

    from . import workspace_glue
    from .metadata_glue import LoadedMetadata

__all__ = [
    "DATA_PAGE",
    "PROBLEMS_SHOWN",
    "GRADE_COLUMNS",
    "RUN_CHECK_COLUMNS",
    "RUN_OVERVIEW_COLUMNS",
    "RUN_SUMMARY_COLUMNS",
    "IDCG_ZERO_LABELS",
    "notes_key",
    "notes_panel",
    "restore_dataset_from_url",
    "dataset_glance",
    "follow_reading_rule",
    "highlight_problems",
    "md_escape",
    "md_frame",
    "options_panel",
    "page_header",
    "loaded_data_note",
    "metadata_summary",
    "show_metadata_upload",
    "default_dataset",
    "require_dataset",
    "require_runs",
    "show_format_error",
    "show_loaded_files",
    "show_warnings",
    "tags_split_note",
    "COMMENTS_HOW",
    "GROUPS_HOW",
    "source_choice",
    "upload_block",
    "workspace_problem",
    "write_to_workspace",
]

DATA_PAGE = "app.py"
"""Path of the Data page (the main script), for ``st.page_link`` / ``st.switch_page``."""

_SOURCE_LABELS = {"sample": "Use the bundled sample data", "upload": "Upload",
                  "saved": "Saved datasets"}

_QRELS_HELP = (
    "TREC qrels (`qid iter docid rel`), CSV/TSV with a header row, Parquet, Excel `.xlsx` "
    "(first sheet, header row as in CSV), or JSON `{qid: {docid: grade}}`; plain or "
    "gzip-compressed. A negative grade means 'pooled, not judged'.")
_RUNS_HELP = (
    "TREC runs (`qid Q0 docid rank score tag`; a file with several tags gives several "
    "runs), CSV/TSV with a header row, Parquet, Excel `.xlsx` (first sheet, header row as in "
    "CSV), or JSON `{qid: {docid: score}}`; plain or "
    "gzip-compressed. Documents are ranked by score, ties by document id descending.")

GRADE_COLUMNS: dict[str, object] = {
    "judgments": st.column_config.NumberColumn(format="localized"),
    "share": st.column_config.NumberColumn(format="percent"),
}
"""``column_config`` for :attr:`ireval_core.dataset.DatasetSummary.grades` in ``st.dataframe``."""

RUN_OVERVIEW_COLUMNS = ("run", "file", "queries", "documents", "min depth", "median depth",
                        "max depth", "queries in qrels", f"judged in top {TOP_K}")
"""``column_order`` of the run overview (sizes, depths, overlap with the qrels)."""

RUN_CHECK_COLUMNS = ("run", "run queries without qrels", "qrels queries missing",
                     "queries < 10 docs", "queries < 100 docs", f"unjudged in top {TOP_K}")
"""``column_order`` of the per-run soft-problem counts."""

RUN_SUMMARY_COLUMNS: dict[str, object] = {
    "run": st.column_config.TextColumn("run", pinned=True),
    "documents": st.column_config.NumberColumn(format="localized"),
    "median depth": st.column_config.NumberColumn(format="%.1f"),
    "queries in qrels": st.column_config.NumberColumn(
        help="Queries the run answers that have judgments: the queries it is evaluated on"),
    f"judged in top {TOP_K}": st.column_config.NumberColumn(
        format="percent",
        help=f"Share of the top-{TOP_K} documents (queries in both) that have a grade ≥ 0"),
    "run queries without qrels": st.column_config.NumberColumn(
        help="Queries in the run with no judgments; left out of the means"),
    "qrels queries missing": st.column_config.NumberColumn(
        help="Judged queries the run does not answer; left out of the means, or 0 with "
             "the complete option (trec_eval -c)"),
    "queries < 10 docs": st.column_config.NumberColumn(
        help="Queries that rank fewer than 10 documents; P@10 and nDCG@10 see short lists"),
    "queries < 100 docs": st.column_config.NumberColumn(
        help="Queries that rank fewer than 100 documents; R@100 sees short lists"),
    f"unjudged in top {TOP_K}": st.column_config.NumberColumn(
        help=f"Top-{TOP_K} documents with no grade or a negative grade; counted as "
             "non-relevant"),
}
"""``column_config`` for :attr:`ireval_core.dataset.DatasetSummary.runs` in ``st.dataframe``."""

# ----------------------------------------------------------------------------- errors, warnings


PROBLEMS_SHOWN = 20
"""How many problems of a file an error box lists (all are in its CSV download)."""


COMMENTS_HOW = ("Lines starting with `#` are comments for trec_eval 10.0: choose **10.0** "
                "under **trec_eval semantics** in the sidebar's **Evaluation options** to "
                "read the file as trec_eval 10.0 does (they are skipped).")
"""Said under a reading error naming a ``#`` line, when the file was read as 9.0.8 reads."""

GROUPS_HOW = ("The app cannot read a qrels file that judges a document in several judgment "
              "groups: it keeps one judgment per query and document, and the Metrics page "
              "computes the judgment-group measures (`*_avgjg`) from the second column only "
              "when each document is in one group. The command line reads the file as "
              "trec_eval -R qrels_jg does: `python -m ireval_core eval -R qrels_jg -m "
              "qrels_jg QRELS RUN`.")
"""Said under a qrels reading error naming a document judged again in another judgment
group (:func:`~ireval_core.io.has_judgment_groups`)."""


def show_format_error(error: FormatError, *, hint: str | None = None,
                      comments: bool = False) -> None:
    """One ``st.error`` for a file that cannot be read, and what to do about it.

    One problem: ``file:line``, what is wrong, the offending line as code. Several (a
    reader found them in one pass): how many, the first :data:`PROBLEMS_SHOWN` one a line
    with ``file:line`` (Excel: sheet and row), and a download of every problem kept as
    CSV (:meth:`~ireval_core.errors.FormatError.problems_csv`, formula cells escaped).
    ``hint`` (default: the error's own) is shown under it. ``comments``: whether the
    file was read with trec_eval 10.0's comment rule; when it was not and a bad line
    starts with ``#``, the box says how to choose that rule (:data:`COMMENTS_HOW`). A
    qrels document judged in several judgment groups: what the app does with such a file
    (:data:`GROUPS_HOW`).
    """
    hint = error.hint if hint is None else hint
    if error.count <= 1:
        body = f"**Could not read {inline_code(error.location)}**: {md_escape(error.message)}"
        if error.text is not None:
            body += "\n\n" + code_block(error.text)
    else:
        files = sorted({p.source or "<input>" for p in error.problems})
        where = inline_code(files[0]) if len(files) == 1 else f"{len(files)} files"
        listed = error.problems[:PROBLEMS_SHOWN]
        body = (f"**Could not read {where}: {error.count:,} problems.** "
                + (f"The first {len(listed)}:" if error.count > len(listed) else "All of them:")
                + "\n\n" + code_block("\n".join(str(p) for p in listed)))
        if error.count > len(listed):
            body += (f"\n\nAnd {error.count - len(listed):,} more: every problem is in the CSV "
                     "below" + ("" if error.count <= len(error.problems) else
                                f" (the first {len(error.problems):,}; the rest counted)")
                     + ".")
    if hint:
        body += "\n\n" + md_escape(hint)
    if not comments and has_comment_lines(error):
        body += "\n\n" + COMMENTS_HOW
    if has_judgment_groups(error):
        body += "\n\n" + GROUPS_HOW
    st.error(body, icon=":material/error:")
    if error.count > 1:
        name = re.sub(r"[^\w.-]+", "_", (error.source or "input").rsplit("/", 1)[-1])
        digest = hashlib.blake2b(f"{error}|{error.count}".encode(), digest_size=8).hexdigest()
        st.download_button(f"All {error.count:,} problems (CSV)", error.problems_csv(),
                           f"problems_{name}.csv", "text/csv", icon=":material/download:",
                           key=f"ireval.problems.{digest}", on_click="ignore",
                           help="One row per problem: file, line, where (Excel: sheet and "
                                "row), problem, the offending text. Cells a spreadsheet "
                                "would run as a formula start with a quote.")


def show_warnings(warnings: Sequence[DataWarning]) -> None:
    """One ``st.warning`` listing every :class:`DataWarning` (nothing when there are none)."""
    if not warnings:
        return
    lines = []
    for w in warnings:
        where = f"**{md_escape(w.source)}**: " if w.source else ""
        eg = (f" (e.g. {', '.join(inline_code(x) for x in w.examples)})"
              if w.examples else "")
        lines.append(f"- {where}{md_escape(w.message)}{eg}")
    n = len(warnings)
    head = f"**{n} data warning{'s' if n != 1 else ''}**: the data can be evaluated, but check"
    st.warning(head + "\n" + "\n".join(lines), icon=":material/warning:")


def show_loaded_files(files: cache.LoadedFiles) -> None:
    """An error box for each file that failed, and one line for each file that was read."""
    for error in files.errors:
        show_format_error(error, comments=files.comments)
    lines = []
    for f in files.files:
        if f.qrels is not None:
            what = (f"qrels: {f.qrels.n_queries:,} queries, {len(f.qrels):,} judgments")
        elif f.ok:
            what = "; ".join(f"run {inline_code(r.name)}: {r.n_queries:,} queries, "
                             f"{len(r):,} documents" for r in f.runs)
        else:
            continue
        lines.append(f"- :green[:material/check_circle:] {inline_code(f.name)}: {what}")
    if lines:
        st.markdown("\n".join(lines))
    for f in files.runs:
        if len(f.runs) > 1:
            st.info(tags_split_note(f), icon=":material/call_split:")


def metadata_summary(meta: QueryMetadata) -> str:
    """What a query metadata file holds, in one line (Markdown): queries, columns,
    weights, latencies."""
    weights = f", weights from {md_escape(meta.weight_column)}" if meta.weight_column else ""
    columns = ", ".join(md_escape(c) for c in meta.columns) or "none"
    return (f"{len(meta):,} queries; categorical columns {columns}{weights}; latencies of "
            f"{len(meta.systems)} system(s)")


def show_metadata_upload() -> None:
    """The Data page's line for the uploaded query metadata file: what it holds and what
    its reader noticed, or why it cannot be read (file, line, what was expected). The
    pages that use it (Metrics, Compare, Queries split by its columns) otherwise drop a
    file that cannot be read without a word; the Efficiency page says it too."""
    loaded: LoadedMetadata | None = state.get_metadata_upload()  # type: ignore[assignment]
    if loaded is None:
        return
    if loaded.error is not None or loaded.metadata is None:
        if loaded.error is not None:
            show_format_error(loaded.error)
        return
    meta = loaded.metadata
    st.markdown(f"- :green[:material/check_circle:] {inline_code(loaded.name)}: query metadata: "
                f"{metadata_summary(meta)}")
    show_warnings(meta.warnings)


def tags_split_note(file: cache.LoadedFile) -> str:
    """What the Data page says of a run file whose tag column names several systems."""
    n = len(file.runs)
    shown = ", ".join(inline_code(r.name) for r in file.runs[:3]) + (", ..." if n > 3 else "")
    return (f"**{md_escape(file.name)} holds {n} tags**, read as {n} systems ({shown}): "
            "each tag is a run here. trec_eval reads a file as one run whatever its tags "
            "(named by the tag of its last line); the command line's `eval --one-run` "
            "does the same. To compare them as one system, give every line the same tag.")


# ----------------------------------------------------------------------------- data source


def source_choice() -> state.SourceMode:
    """The sample-or-upload choice (the sample by default, so a newcomer sees results)."""
    state.set_source()
    labels = dict(_SOURCE_LABELS)
    if cache.data_dir() is not None:
        labels["sample"] = f"The folder {cache.data_dir()}"
    choice = st.radio(
        "Data", state.SOURCES, format_func=labels.__getitem__, key=state.SOURCE,
        horizontal=True, label_visibility="collapsed")
    state.keep_source(choice or "sample")
    return choice or "sample"


# ----------------------------------------------------------------------------- options


def options_panel() -> EvalOptions:
    """The evaluation option widgets (sidebar of every page); returns the options.

    The widgets show :func:`ireval_app.state.get_options` and write back through
    their ``on_change`` callback, so no page switch, reload or page without these
    widgets can change an option: only the user can.
    """
    state.options_to_widgets()
    keys, on_change = state.OPTION_KEYS, state.options_from_widgets
    with st.expander("Evaluation options", icon=":material/tune:"):
        st.checkbox("Every qrels query (-c)", key=keys["complete"], on_change=on_change,
                    help=OPTION_HELP["complete"])
        st.number_input("Relevance level (-l)", step=1.0, format="%g", key=keys["rel_level"],
                        on_change=on_change, help=OPTION_HELP["rel_level"])
        st.number_input("Depth cut (-M), 0 = whole ranking", min_value=0, step=10,
                        key=keys["depth"], on_change=on_change, help=OPTION_HELP["depth"])
        st.checkbox("Judged documents only (-J)", key=keys["judged_only"], on_change=on_change,
                    help=OPTION_HELP["judged_only"])
        st.radio("nDCG of a query without relevant documents (IDCG = 0)",
                 IDCG_ZERO_POLICIES, format_func=IDCG_ZERO_LABELS.__getitem__,
                 key=keys["idcg_zero"], on_change=on_change, help=OPTION_HELP["idcg_zero"])
        st.radio("trec_eval semantics", TREC_EVAL_VERSIONS,
                 format_func=TREC_EVAL_LABELS.__getitem__, key=keys["trec_eval"],
                 on_change=on_change, help=OPTION_HELP["trec_eval"])
    for problem in state.option_problems():
        st.warning(f"Option not applied: {md_escape(problem)}", icon=":material/warning:")
    return state.get_options()


IDCG_ZERO_LABELS = {"zero": "score 0 (trec_eval)", "drop": "drop the query (TF-Ranking)"}
TREC_EVAL_LABELS = {"9.0.8": "9.0.8 (pytrec_eval, ir_measures)",
                    "10.0": "10.0 (a fresh trec_eval build)"}
"""How the IDCG = 0 policies are shown."""


def page_header(title: str, intro: str | None = None, *, results: bool = True,
                data_note: bool = True) -> None:
    """Title, one line of introduction, and what the numbers below are computed on.

    On every page: a note when the data is the bundled sample (never mistaken for
    the user's), unless ``data_note=False`` (a page whose numbers may come from
    elsewhere calls :func:`loaded_data_note` where they come from the loaded data).
    On results pages (``results=True``): the options line, e.g.
    ``relevant: grade >= 1 · queries in both run and qrels · whole ranking``.
    """
    st.title(title)
    if intro:
        st.caption(intro)
    if data_note:
        loaded_data_note()
    if results:
        st.caption(f":material/tune: **Options**: {md_escape(state.get_options().summary())}")


def loaded_data_note() -> None:
    """Where the loaded data comes from, when it is not the user's upload: the folder of
    ``IREVAL_DATA_DIR``, or the bundled sample."""
    folder = cache.data_dir()
    if folder is not None and state.get_source() in (None, "sample"):
        st.info(f"Data from the folder {md_escape(str(folder))} (`IREVAL_DATA_DIR`).",
                icon=":material/folder_open:")
    elif state.is_sample():
        st.info("**Sample data**: these numbers are from the bundled synthetic sample, "
                "not your files. Upload qrels and runs on the Data page.",
                icon=":material/science:")


def upload_block() -> cache.LoadedFiles:
    """Uploaders for one qrels file and any number of run files; returns what was read.

    Each file is read on its own (a broken file leaves the others loaded). Files stay
    loaded when the uploaders are not shown (another page, or the sample chosen) and
    come back with them; uploading new files replaces them.
    """
    left, right = st.columns(2)
    with left:
        qrels_file = st.file_uploader(
            "Qrels: one file", type=None, key=state.QRELS_UPLOADER,
            on_change=state.mark_upload_changed, args=("qrels",), help=_QRELS_HELP)
    with right:
        run_files = st.file_uploader(
            "Runs: one or more files", type=None,
            accept_multiple_files=True, key=state.RUNS_UPLOADER,
            on_change=state.mark_upload_changed, args=("runs",), help=_RUNS_HELP)
    st.caption(cache.FORMATS_HELP)
    meta_file = st.file_uploader(
        "Query metadata (optional): segments, traffic weights, latencies", type=None,
        key=state.METADATA_UPLOADER,
        help="CSV/TSV/Parquet with a query column and any columns: segment, intent, "
             "language, a traffic weight, per-run latency_ms")
    if meta_file is not None:
        from . import metadata_glue

        state.set_metadata_upload(
            metadata_glue.load_metadata(meta_file.name, meta_file.getvalue()),
            (meta_file.name, meta_file.getvalue()))
    files = _sync_uploads(qrels_file, list(run_files or ()))
    kept = [f.name for f in files.files
            if (f is files.qrels and qrels_file is None) or (f in files.runs and not run_files)]
    if kept:
        note, forget = st.columns([5, 1], vertical_alignment="center")
        note.caption("Still loaded from an earlier upload: "
                     + ", ".join(inline_code(n) for n in kept)
                     + ". Uploading new files replaces them.")
        forget.button("Forget them", on_click=state.clear_uploads, type="tertiary",
                      icon=":material/delete:")
    return files


def _sync_uploads(qrels_file: UploadedFile | None,
                  run_files: list[UploadedFile]) -> cache.LoadedFiles:
    """Read the uploads that changed since the last run; keep the rest as they are."""
    current = state.get_uploaded()
    qrels, runs = current.qrels, current.runs
    comments = cache.reads_comments(state.get_options())
    qrels_ids = (qrels_file.file_id,) if qrels_file is not None else ()
    if state.pop_upload_changed("qrels") or (
            qrels_ids and qrels_ids != state.get_upload_ids("qrels")):
        qrels = (None if qrels_file is None
                 else cache.load_qrels(qrels_file.name, qrels_file.getvalue(),
                                       comments=comments))
        state.set_upload_ids("qrels", qrels_ids)
        state.set_upload_bytes("qrels", [] if qrels_file is None
                               else [(qrels_file.name, qrels_file.getvalue())])
    run_ids = tuple(f.file_id for f in run_files)
    if state.pop_upload_changed("runs") or (
            run_ids and run_ids != state.get_upload_ids("runs")):
        runs = cache.load_run_files([(f.name, f.getvalue()) for f in run_files],
                                    comments=comments)
        state.set_upload_ids("runs", run_ids)
        state.set_upload_bytes("runs", [(f.name, f.getvalue()) for f in run_files])
    files = cache.LoadedFiles(qrels, runs)
    state.set_uploaded(files)
    return files


# ----------------------------------------------------------------------------- for every page


def follow_reading_rule() -> None:
    """Read the data again when the trec_eval version chosen reads ``#`` lines otherwise.

    trec_eval 10.0 skips TREC text lines starting with ``#``, 9.0.8 reads them as data
    (:func:`ireval_app.cache.reads_comments`): after the version changed, the uploads
    (from their kept bytes), the default data or the saved dataset in use are read with
    the new rule (each read is cached per rule, so switching back costs nothing). A saved
    dataset the workspace cannot give again stays as it was read.
    """
    comments = cache.reads_comments(state.get_options())
    uploaded = state.get_uploaded()
    if not uploaded.is_empty and uploaded.comments != comments:
        qrels = state.get_upload_bytes("qrels")
        state.set_uploaded(cache.LoadedFiles(
            cache.load_qrels(*qrels[0], comments=comments) if qrels else None,
            cache.load_run_files(state.get_upload_bytes("runs"), comments=comments)))
    files = state.get_loaded_files()
    if files is None or files.is_empty or files.comments == comments:
        return
    dataset_id, source = state.get_dataset_id(), state.get_source()
    if dataset_id is not None:
        from ireval_core.errors import IrevalError

        from . import workspace_glue

        try:
            opened = workspace_glue.with_workspace(
                lambda ws: workspace_glue.open_dataset(ws, dataset_id, comments=comments,
                                                       version=state.get_dataset_version()))
        except (IrevalError, ValueError):  # the dataset was deleted meanwhile
            return
        if not isinstance(opened, workspace_glue.WorkspaceProblem):
            state.set_loaded(opened[1], cache.dataset_for(opened[1]), dataset_id=dataset_id,
                             dataset_version=state.get_dataset_version())
    elif source == "upload":
        files = state.get_uploaded()
        state.set_loaded(files, cache.dataset_for(files))
    else:
        files, sample = cache.load_default(comments=comments)
        state.set_loaded(files, cache.dataset_for(files), sample=sample)



def restore_dataset_from_url() -> None:
    """On a session's first run: open the saved dataset the URL names (``?ds=...``).

    A link to a view carries the dataset id; a new browser opening it gets the same
    data from the workspace. A value that is not a dataset id, or an id the workspace
    does not have, is not applied: the page shows the default data, and says so
    (:func:`ireval_app.views.not_applied`) on every page while it does.
    """
    if state.url_dataset_pending():
        text = state.dataset_param() or ""
        why = _dataset_id_problem(text)
        if why is None:
            from ireval_core.errors import IrevalError

            from . import workspace_glue

            try:
                opened = workspace_glue.with_workspace(
                    lambda ws: workspace_glue.open_dataset(
                        ws, text.strip(), comments=cache.reads_comments(state.get_options()),
                        version=state.dataset_version_param()))
            except (IrevalError, ValueError) as exc:  # an unknown id
                why = f"the saved dataset cannot be opened: {exc}"
            else:
                if isinstance(opened, workspace_glue.WorkspaceProblem):
                    why = opened.message
                else:
                    info, files = opened
                    state.set_source_value("saved")
                    state.set_loaded(files, cache.dataset_for(files), dataset_id=info.id,
                                     dataset_version=info.version)
                    return
        st.session_state[_DATASET_NOT_APPLIED] = (text, why)
    refused = st.session_state.get(_DATASET_NOT_APPLIED)
    if refused is not None and (state.get_dataset_id() is None
                                and state.get_source() in (None, "sample")):
        views.not_applied(state.DATASET_PARAM, *refused)  # while the default data stands in


_DATASET_NOT_APPLIED = "ireval.dataset.not_applied"  # (text, why) of a refused ?ds=
_DATASET_ID = re.compile(r"[0-9a-fA-F]{8,64}")


def _dataset_id_problem(text: str) -> str | None:
    """Why ``text`` cannot be a dataset id (8 to 64 hexadecimal characters), or ``None``."""
    if _DATASET_ID.fullmatch(text.strip()):
        return None
    return "not a dataset id: 8 to 64 hexadecimal characters"


def notes_key(target: Target) -> str:
    """The key prefix of the notes form of ``target`` (stable across runs and processes)."""
    return state.NOTES_PREFIX + hashlib.sha1(str(target).encode()).hexdigest()[:12]


def notes_panel(target: Target, *, title: str) -> None:
    """Notes and decisions on ``target`` of the current saved dataset, and a form to add
    one. Notes need a saved dataset. ``title`` is plain text (it names runs and queries):
    it is shown literally. A note keeps the link to the whole view it was written on
    (:func:`ireval_app.views.full_link`), opened by its "Live view" link."""
    from ireval_core.errors import IrevalError
    from ireval_core.meeting import note_text

    from . import workspace_glue

    dataset_id = state.get_dataset_id()
    notes = ([] if dataset_id is None
             else workspace_glue.with_workspace(lambda ws: ws.notes(dataset_id, target)))
    count = 0 if isinstance(notes, workspace_glue.WorkspaceProblem) else len(notes)
    label = md_escape(title) + (f" ({count})" if count else "")  # seen while collapsed
    with st.expander(label, icon=":material/sticky_note_2:"):
        if dataset_id is None:
            st.caption("Notes are kept with a saved dataset: save these files to the "
                       "workspace on the Data page (**Save to the workspace**).")
            return
        if isinstance(notes, workspace_glue.WorkspaceProblem):
            workspace_problem(notes)
            return
        for n in notes:
            kind = ":green[**Decision**]" if n.kind == "decision" else "**Note**"
            st.markdown(f"{kind}: {md_escape(n.text)}")
            st.caption(f"{md_escape(n.author)} · {n.created_at:%Y-%m-%d %H:%M} UTC")
            live_view(n.text)
        key = notes_key(target)
        with st.form(key + ".form", clear_on_submit=True, border=False):
            text = st.text_area("Add a note", key=key + ".text", height=80)
            left, right = st.columns(2)
            kind = left.radio("Kind", ("note", "decision"), horizontal=True, key=key + ".kind")
            state.restore_author()
            known = state.get_author().strip()
            if known:  # asked once per session: then folded away, prefilled
                with right.expander(f"As {md_escape(known)}", icon=":material/person:"):
                    st.text_input("Your name", key=state.NOTES_AUTHOR)
            else:
                right.text_input("Your name", key=state.NOTES_AUTHOR)
            if st.form_submit_button("Add", icon=":material/add:"):
                author = state.get_author().strip()
                if not text.strip() or not author:
                    st.error("A note needs a text and your name.", icon=":material/error:")
                else:
                    kept = note_text(text, views.full_link())  # the view it was written on
                    try:
                        added = workspace_glue.with_workspace(lambda ws: ws.add_note(
                            dataset_id, target, kept, author=author, kind=kind))
                    except (IrevalError, ValueError) as exc:  # e.g. a NUL character
                        st.error(md_escape(str(exc)), icon=":material/error:")
                    else:
                        if isinstance(added, workspace_glue.WorkspaceProblem):
                            workspace_problem(added, lead="The note is not saved. ")
                        else:
                            st.rerun()


def live_view(text: str) -> None:
    """A "Live view" link to the view a note or decision was written on (the link it
    keeps, :func:`ireval_core.meeting.view_link`), when it has one."""
    from ireval_core.meeting import view_link

    if link := view_link(text):
        st.link_button("Live view", link, icon=":material/open_in_new:", type="tertiary",
                       help="The page with every selection as when this was written")


def workspace_problem(problem: workspace_glue.WorkspaceProblem, *, lead: str = "") -> None:
    """The one message saying why the workspace cannot be used, where it is and what to
    do (:attr:`ireval_app.workspace_glue.WorkspaceProblem.message`), after ``lead``
    (plain text)."""
    st.warning(md_escape(lead + problem.message), icon=":material/cloud_off:")


_T = TypeVar("_T")


def write_to_workspace(work: Callable[[Workspace], _T], *, lead: str = "") -> _T | None:
    """``work(workspace)`` for a Save or Add button, or ``None`` once it is shown why it did
    not happen: a name or a text the workspace refuses (an ``IrevalError``, ``ValueError``
    or ``TypeError``: its message, as an error), or a workspace that cannot be used
    (:func:`workspace_problem`, after ``lead``)."""
    from ireval_core.errors import IrevalError

    from . import workspace_glue

    try:
        done = workspace_glue.with_workspace(work)
    except (IrevalError, ValueError, TypeError) as exc:
        st.error(md_escape(str(exc)), icon=":material/error:")
        return None
    if isinstance(done, workspace_glue.WorkspaceProblem):
        workspace_problem(done, lead=lead)
        return None
    return done


def dataset_glance(dataset: Dataset | None, lines: DeltaGenerator,
                   problems: DeltaGenerator) -> None:
    """A few lines for the sidebar: which qrels and runs are loaded, in the one-element
    slot ``lines`` (an ``st.empty``), and the files that could not be read in the slot
    ``problems`` (emptied when there are none). A slot holds one element, so drawing the
    glance again in the same run (after the page changed the dataset) replaces it whole:
    a container in a slot would keep the lines of the earlier one that the new one lacks
    ("No data loaded yet." above "3 runs: ...")."""
    if dataset is None:
        lines.caption("**Dataset**  \nNo data loaded yet.")
        problems.empty()
        return
    q = dataset.qrels
    n = len(dataset.runs)
    names = ", ".join(inline_code(name) for name in dataset.run_names)
    lines.caption(f"**Dataset**  \nQrels {inline_code(q.source)}: {q.n_queries:,} queries, "
                  f"{len(q):,} judgments  \n{n} run{'s' if n != 1 else ''}"
                  + (f": {names}" if n else ""))
    files = state.get_loaded_files()
    failed = [f.name for f in files.files if not f.ok] if files is not None else []
    if failed:  # on every page: numbers without those files are not the whole upload
        problems.warning(f"{len(failed)} file(s) could not be read and are left out: "
                         + ", ".join(inline_code(name) for name in failed)
                         + " (the Data page says why).", icon=":material/error:")
    else:
        problems.empty()


def require_dataset() -> Dataset:
    """The loaded dataset, for pages that need one; otherwise a pointer to the Data page.

    A visitor who opens another page first gets the bundled sample, as on the Data page
    (and :func:`page_header` says it is the sample). When nothing can be loaded, shows
    how to load data and stops the page.
    """
    dataset = default_dataset()
    if dataset is None:
        st.info("No data loaded yet: choose the sample data or upload qrels and runs on the "
                "Data page.", icon=":material/info:")
        st.page_link(DATA_PAGE, label="Go to the Data page", icon=":material/database:")
        st.stop()
    return dataset


def require_runs(dataset: Dataset, *, link: bool = False) -> None:
    """For pages that evaluate runs: when ``dataset`` has none (qrels alone), says to add
    run files on the Data page (``link``: with a link to it) and stops the page."""
    if not dataset.runs:
        st.info("No runs loaded yet: add run files on the Data page.", icon=":material/info:")
        if link:
            st.page_link(DATA_PAGE, label="Go to the Data page", icon=":material/database:")
        st.stop()


def default_dataset() -> Dataset | None:
    """The loaded dataset; while there is none and the sample is the source, the default
    data (the bundled sample, or the folder of ``IREVAL_DATA_DIR``) is loaded first."""
    dataset = state.get_dataset()
    if dataset is None and state.get_source() in (None, "sample"):
        files, sample = cache.load_default()
        dataset = state.set_loaded(files, cache.dataset_for(files), sample=sample)
    return dataset


# ----------------------------------------------------------------------------- tables


def highlight_problems(runs: pd.DataFrame) -> Styler:
    """The run summary with non-zero problem counts (:data:`RUN_CHECK_COLUMNS`) in amber."""
    cols = [c for c in RUN_CHECK_COLUMNS[1:] if c in runs.columns]
    return runs.style.map(
        lambda v: "color: #b45309; font-weight: 600" if v else "", subset=cols)


# ----------------------------------------------------------------------------- query metadata


def query_metadata() -> QueryMetadata | None:
    """The query metadata of the current data: the sample's with the sample, else the
    uploaded file's (``None`` when there is none or it could not be read)."""
    return query_metadata_and_key()[0]


def query_metadata_and_key() -> tuple[QueryMetadata | None, str]:
    """:func:`query_metadata` and the digest of its file (the cache key of what is
    computed from it; ``""`` without metadata)."""
    if state.is_sample():
        from . import metadata_glue  # imports scipy (through ireval_core.metadata): when used

        loaded = metadata_glue.load_sample_metadata()
    else:
        loaded = state.get_metadata_upload()  # type: ignore[assignment]
    meta = getattr(loaded, "metadata", None)
    return meta, str(getattr(loaded, "digest", "")) if meta is not None else ""


def split_choice(key: str, label: str = "Split by"
                 ) -> tuple[QueryMetadata | None, str | None, str]:
    """A select of the metadata columns (none: no split); ``(metadata, column, key)``,
    ``key`` standing for the metadata in the cache keys of what is computed from it."""
    meta, meta_key = query_metadata_and_key()
    if meta is None or not meta.columns:
        return meta, None, meta_key
    choices = ["(none)", *meta.columns]
    views.bind_view(key, "(none)", choices=choices)
    column = st.selectbox(label, choices, key=key,
                          help="A column of the query metadata file (segment, intent, ...)")
    return meta, None if column == "(none)" else column, meta_key
