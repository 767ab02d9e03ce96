"""Metrics page: the chosen measures for every run, with confidence intervals and definitions."""

from __future__ import annotations

import streamlit as st

from ireval_app import evaluation, frame, prefs_and_groups_glue, state, views, widgets
from ireval_app.keys import metrics as keys
from ireval_core import formats
from ireval_core.dataset import Dataset
from ireval_core.escape import csv_frame
from ireval_core.evaluate import Evaluation
from ireval_core.measures import JUDGMENTS
from ireval_core.options import EvalOptions
from ireval_core.preferences import PreferenceError
from ireval_core.tables import MetricsTable, per_query_workbook

DEFAULT_MEASURES = list(evaluation.METRICS_DEFAULT)
MORE_MEASURES = ["nDCG@20", "nDCG", "DCG@10", "nDCG(ideal=run)@10", "P@5", "P@20", "R@10",
                 "R@1000", "RPrec", "ERR@10", "Success@1", "Success@10", "AP@100", "11pt"]
CHOICES = DEFAULT_MEASURES + MORE_MEASURES + list(prefs_and_groups_glue.CHOICES)
BEST_STYLE = "font-weight: 700; background-color: #e8f1fb"


def _judgment_sections(key: str, dataset: Dataset, by_kind: dict[str, tuple[str, ...]],
                       options: EvalOptions) -> None:
    """A table per kind of judgments besides qrels (preferences, judgment groups) whose
    measures were chosen: means with intervals, the definitions, which judgments."""
    for kind in prefs_and_groups_glue.KINDS:
        chosen = by_kind[kind]
        if not chosen:
            continue
        title, what = prefs_and_groups_glue.TITLES[kind]
        st.subheader(title)
        st.caption(f"{what} (trec_eval needs {JUDGMENTS[kind]}.)")
        try:
            res = prefs_and_groups_glue.evaluate_judgments_cached(key, dataset, kind, chosen,
                                                                  options)
        except PreferenceError as exc:
            st.error(widgets.md_escape(str(exc)), icon=":material/error:")
            continue
        table = evaluation.table_cached(key, chosen, options, res)
        best = widgets.md_frame(table.best)
        st.table(widgets.md_frame(table.cells).style.apply(
            lambda _, best=best: best.map(lambda b: BEST_STYLE if b else ""), axis=None))
        summed = [m for m in chosen if res.definition(m).count("; summed over queries")]
        st.caption("Each cell: the mean over queries to 4 decimals, then its 95% confidence "
                   "interval" + (f" ({', '.join(summed)}: the sum over queries)" if summed
                                 else "") + ". " + widgets.md_escape(table.queries_caption()))
        with st.container(border=True):
            st.markdown("\n".join(
                f"- **{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}"
                for m in table.mean.columns))
            st.caption(f"Options: {widgets.md_escape(res.options.describe())}.")


def _segments(key: str, measures: tuple[str, ...], options: EvalOptions, res: Evaluation) -> None:
    """The means split by a column of the query metadata (traffic-weighted when it has
    weights)."""
    meta, column, meta_key = widgets.split_choice(keys.SPLIT, "Split the means by")
    if column is not None and meta is not None:
        weighted = False
        if meta.weight_column:
            views.bind_view(keys.WEIGHTED, False)
            weighted = st.toggle(f"Traffic-weighted means ({meta.weight_column})",
                                 key=keys.WEIGHTED)
        from ireval_app import metadata_glue  # imports scipy: only when a split is shown

        split = metadata_glue.by_segment_cached(key, measures, options, meta_key, column,
                                                weighted, res, meta)
        for m in split["measure"].unique():
            part = split[split["measure"] == m]
            st.markdown(f"**{widgets.md_escape(m)}** by {widgets.md_escape(column)}")
            wide = part.pivot_table(index="segment", columns="system", values="mean", sort=False)
            counts = part.pivot_table(index="segment", columns="system", values="queries",
                                      sort=False)
            st.dataframe(wide.style.format(formats.measure), column_config={
                s: st.column_config.NumberColumn(s, format="%.4f") for s in wide.columns})
            st.caption(widgets.md_escape(
                "Queries per segment: " + "; ".join(
                    f"{seg} {int(counts.loc[seg].max()):,}" for seg in counts.index)
                + ". " + str(split.attrs.get("average", ""))))


def _per_query_values(key: str, measures: tuple[str, ...], options: EvalOptions,
                      res: Evaluation, table: MetricsTable) -> None:
    """The per-query values of one measure, one point per query."""
    st.subheader("Per-query values")
    names = list(table.mean.columns)
    views.bind_view(keys.DISTRIBUTION, "nDCG@10" if "nDCG@10" in names else names[0],
                    choices=names)
    shown = st.selectbox("Measure", names, key=keys.DISTRIBUTION)
    # the shown measure only, not the whole tidy table; one figure for every session
    st.plotly_chart(evaluation.per_query_chart_cached(key, measures, options, shown, res),
                    config={"displayModeBar": False})
    st.caption(widgets.md_escape(f"One point per query; box: quartiles, dashed line: mean. "
                                 f"{shown}: {res.definition(shown)}."))


def _downloads(res: Evaluation, table: MetricsTable) -> None:
    """The downloads: per-query values (CSV, Excel) and the aggregate table."""
    # Built when clicked (21,000 rows per measure on three 7,000-query runs), not on every run.
    buttons = st.container(horizontal=True)  # as wide as their labels, never cut short
    buttons.download_button("Per-query values (CSV)",
                            lambda: csv_frame(res.tidy()).to_csv(index=False),
                            file_name="ireval_per_query.csv", mime="text/csv",
                            icon=":material/download:", on_click="ignore")
    buttons.download_button("Per-query values (Excel, a sheet per measure)",
                            lambda: per_query_workbook(res), file_name="ireval_per_query.xlsx",
                            mime="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                            icon=":material/download:", on_click="ignore")
    buttons.download_button("Aggregate table (CSV)",
                            lambda: csv_frame(table.to_long(res)).to_csv(index=False),
                            file_name="ireval_metrics.csv", mime="text/csv",
                            icon=":material/download:", on_click="ignore")


with frame.page("metrics"):
    dataset = widgets.require_dataset()
    widgets.page_header("Metrics", "Every run on the chosen measures: means over queries with "
                        "95% intervals, each measure's definition, and the per-query values.")
    options = state.get_options()
    widgets.require_runs(dataset, link=True)

    pick, extra = st.columns([3, 2])
    views.bind_view(keys.MEASURES, DEFAULT_MEASURES, choices=CHOICES)
    chosen = pick.multiselect("Measures", CHOICES, key=keys.MEASURES,
                              help="The preference measures (Pref..., NumPrefs...) and the "
                                   "judgment-group measures (...AvgJG) are computed from the "
                                   "qrels as trec_eval -R qrels_prefs and -R qrels_jg do, in "
                                   "tables of their own.")
    views.bind_view(keys.EXTRA, "")
    typed = extra.text_input(
        "More measures (separate with ;)", key=keys.EXTRA,
        placeholder="nDCG(gain=exp)@20; P(rel=2)@5",
        help="Any measure spec: a name, parameters in parentheses and an @k cutoff, e.g. "
             "nDCG(gain=exp)@20, P(rel=2)@5, DCG(discount=jk)@6, or trec_eval names "
             "such as ndcg_cut_10 or recall_100.")
    specs, errors = evaluation.parse_specs([*chosen, *typed.split(";")], judgments=JUDGMENTS)
    for message in errors:
        st.error(message, icon=":material/error:")
    by_kind = prefs_and_groups_glue.split_specs(specs)
    measures = by_kind["qrels"]
    key = state.get_dataset_key() or ""
    if not measures:
        if specs:  # only preference or judgment-group measures
            _judgment_sections(key, dataset, by_kind, options)
        else:
            st.info("Choose at least one measure.", icon=":material/info:")
        st.stop()

    # scipy.special (the table's t intervals, ireval_core.intervals) is imported now, while
    # the evaluation below may still wait for the runs' joins made in the background, not
    # after it; not scipy.stats, which nothing on this page needs
    import ireval_core.intervals  # noqa: E402, F401

    res = evaluation.evaluate_cached(key, dataset, measures, options)
    table = evaluation.table_cached(key, measures, options, res)

    # ------------------------------------------------------------------------- table
    st.subheader("Mean per run")
    best = widgets.md_frame(table.best)
    st.table(widgets.md_frame(table.cells).style.apply(
        lambda _: best.map(lambda b: BEST_STYLE if b else ""), axis=None))
    st.caption("Each cell: the mean over queries to 4 decimals, then its 95% confidence interval "
               "[low, high] (Student t over the per-query values, clipped to the measure's "
               "range). Highlighted: the highest mean of each measure (equal means alike). "
               + widgets.md_escape(table.queries_caption()))
    for note in (table.small_note, table.query_note):
        if note:
            st.warning(widgets.md_escape(note), icon=":material/rule:")

    with st.container(border=True):
        st.markdown("**What the numbers are**")
        st.markdown("\n".join(
            f"- **{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}"
            for m in table.mean.columns))
        st.caption(f"Options: {widgets.md_escape(res.options.describe())}.")

    _judgment_sections(key, dataset, by_kind, options)

    # ------------------------------------------------------------------------- segments
    _segments(key, measures, options, res)

    # ------------------------------------------------------------------------- charts
    st.plotly_chart(evaluation.metric_bars_cached(key, measures, options, table),
                    config={"displayModeBar": False})
    st.caption("Bars: means; error bars: 95% t-intervals over queries (definitions above).")

    _per_query_values(key, measures, options, res, table)

    # ------------------------------------------------------------------------- downloads
    _downloads(res, table)
