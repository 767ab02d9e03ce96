"""The files read, as the pages show them, and the Data page's source and uploaders.

A file that cannot be read is one message with ``file:line``, the reason and the
offending line, never a traceback (:func:`show_format_error`); soft problems are one box
listing every one of them (:func:`show_warnings`). Reading the uploads is
:mod:`ireval_app.loading`'s.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

import streamlit as st

from ireval_core.errors import DataWarning, FormatError
from ireval_core.io import has_comment_lines, has_judgment_groups

from . import cache, loading, state
from .text import code_block, inline_code, md_escape

if TYPE_CHECKING:  # the metadata module brings scipy, which the Data page does not need
    from ireval_core.metadata import QueryMetadata

    from .metadata_glue import LoadedMetadata

__all__ = ["COMMENTS_HOW", "GROUPS_HOW", "PROBLEMS_SHOWN", "metadata_summary",
           "show_format_error", "show_loaded_files", "show_metadata_upload", "show_warnings",
           "source_choice", "tags_split_note", "upload_block"]

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
    files = loading.read_uploads(qrels_file, list(run_files or ()))
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
