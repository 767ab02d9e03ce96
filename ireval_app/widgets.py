"""What every page draws the same way: its header and the note on the data, the evaluation
options of the sidebar, the dataset's glance, the guards of pages that need data or runs,
the run summary's columns, the split by a metadata column.

The files read and their problems, and the Data page's uploaders, are
:mod:`ireval_app.files_widgets`'s; the workspace and the notes on a page
:mod:`ireval_app.workspace_widgets`'s; which data the session uses (and reading it again)
:mod:`ireval_app.loading`'s.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler
from streamlit.delta_generator import DeltaGenerator

from ireval_core.dataset import TOP_K, Dataset
from ireval_core.options import IDCG_ZERO_POLICIES, OPTION_HELP, TREC_EVAL_VERSIONS, EvalOptions

from . import cache, loading, state, views
from .text import inline_code, md_escape, md_frame

if TYPE_CHECKING:  # the metadata module brings scipy, which the Data page does not need
    from ireval_core.metadata import QueryMetadata

__all__ = ["DATA_PAGE", "GRADE_COLUMNS", "IDCG_ZERO_LABELS", "RUN_CHECK_COLUMNS",
           "RUN_OVERVIEW_COLUMNS", "RUN_SUMMARY_COLUMNS", "TREC_EVAL_LABELS", "dataset_glance",
           "highlight_problems", "loaded_data_note", "md_escape", "md_frame", "options_panel",
           "page_header", "require_dataset", "require_runs", "split_choice"]

DATA_PAGE = "app.py"
"""Path of the Data page (the main script), for ``st.page_link`` / ``st.switch_page``."""


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
    dataset = loading.default_dataset()
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


def highlight_problems(runs: pd.DataFrame) -> Styler:
    """The run summary with non-zero problem counts (:data:`RUN_CHECK_COLUMNS`) in amber."""
    cols = [c for c in RUN_CHECK_COLUMNS[1:] if c in runs.columns]
    return runs.style.map(
        lambda v: "color: #b45309; font-weight: 600" if v else "", subset=cols)


def split_choice(key: str, label: str = "Split by"
                 ) -> tuple[QueryMetadata | None, str | None, str]:
    """A select of the metadata columns (none: no split); ``(metadata, column, key)``,
    ``key`` standing for the metadata in the cache keys of what is computed from it."""
    meta, meta_key = loading.query_metadata_and_key()
    if meta is None or not meta.columns:
        return meta, None, meta_key
    choices = ["(none)", *meta.columns]
    views.bind_view(key, "(none)", choices=choices)
    column = st.selectbox(label, choices, key=key,
                          help="A column of the query metadata file (segment, intent, ...)")
    return meta, None if column == "(none)" else column, meta_key
