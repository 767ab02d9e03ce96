"""Trend page: mean DCG@K of what users saw, month by month, beside the model-score metrics."""

from __future__ import annotations

import streamlit as st

from ireval_app import (
    files_widgets,
    findings,
    fit,
    frame,
    labels_glue,
    labels_ppi,
    labels_widgets,
    views,
    widgets,
)
from ireval_app.keys import labels_trend as keys
from ireval_core import charts, formats
from ireval_core.labels import AnchorDrift, Judgments, export_batch, next_batch

_NUM = st.column_config.NumberColumn


def _trend_columns(k: int) -> dict[str, object]:
    """Readable names of the trend's columns (the query-only band of ``trend``)."""
    return {
        "round": st.column_config.TextColumn("Round"),
        "system": st.column_config.TextColumn("System"),
        "queries": _NUM("Queries", format="%d"),
        "dcg": _NUM(f"DCG@{k}", format="%.4f"),
        "dcg_ci_low": _NUM("Low (queries)", format="%.4f",
                           help="95% bootstrap interval over queries"),
        "dcg_ci_high": _NUM("High (queries)", format="%.4f",
                            help="95% bootstrap interval over queries"),
        "dcg_unweighted": _NUM(f"DCG@{k} unweighted", format="%.4f"),
        "ndcg": _NUM(f"nDCG@{k}", format="%.4f"),
        "coverage": _NUM("Coverage", format="percent"),
        "shown": _NUM("Shown", format="%d"), "labeled": _NUM("Labeled", format="%d"),
        "averaging": st.column_config.TextColumn("Averaging")}


def _round_table(nt_table, t_table, k: int, definitions: dict[str, str]) -> None:
    """The rater-noise table with the trend's nDCG and coverage, readable column names."""
    table = nt_table.merge(t_table[["round", "system", "ndcg", "coverage", "labeled", "shown"]],
                           on=["round", "system"], how="left")
    cols = ["round", "system", "queries", "raters", "dcg", "ci_low", "ci_high",
            "ci_low_queries", "ci_high_queries", "mdc", "rater_share", "ndcg", "coverage"]
    fit.dataframe(table[cols], hide_index=True, column_config={
        "round": st.column_config.TextColumn("Round"),
        "system": st.column_config.TextColumn("System"),
        "queries": _NUM("Queries", format="%d"),
        "raters": _NUM("Raters", format="%d", help="People whose labels make the round's "
                       "numbers (resampled as a whole for the interval)"),
        "dcg": _NUM(f"DCG@{k}", format="%.4f", help=definitions.get("dcg")),
        "ci_low": _NUM("Low (queries + raters)", format="%.4f", help=definitions.get("ci_low")),
        "ci_high": _NUM("High (queries + raters)", format="%.4f",
                        help=definitions.get("ci_low")),
        "ci_low_queries": _NUM("Low (queries only)", format="%.4f",
                               help=definitions.get("ci_low_queries")),
        "ci_high_queries": _NUM("High (queries only)", format="%.4f",
                                help=definitions.get("ci_low_queries")),
        "mdc": _NUM("Min. detectable change", format="%.3f", help=definitions.get("mdc")),
        "rater_share": _NUM("Raters' share of variance", format="percent",
                            help=definitions.get("rater_share")),
        "ndcg": _NUM(f"nDCG@{k}", format="%.4f",
                     help="Ideal from the round's labels of the shown results"),
        "coverage": _NUM("Coverage", format="percent",
                         help=f"Labeled share of the shown top {k}")})


def _changes_table(changes, k: int, definitions: dict[str, str]) -> None:
    """Month over month, readable: no raw column names, no "None" cells."""
    cols = ["system", "round_from", "round_to", "mean_from", "mean_to", "delta", "ci_low",
            "ci_high", "p", "drop", "mdc"]
    anchored = changes["anchor_shift"].notna().any()
    if anchored:
        cols += ["anchor_shift", "anchor_drift", "drift_dcg"]
    fit.dataframe(changes[cols], hide_index=True, column_config={
        "system": st.column_config.TextColumn("System"),
        "round_from": st.column_config.TextColumn("From"),
        "round_to": st.column_config.TextColumn("To"),
        "mean_from": _NUM("DCG before", format="%.4f"),
        "mean_to": _NUM("DCG after", format="%.4f"),
        "delta": _NUM("Change", format="%+.4f", help=definitions.get("delta")),
        "ci_low": _NUM("Low", format="%+.4f", help=definitions.get("change_ci")),
        "ci_high": _NUM("High", format="%+.4f", help=definitions.get("change_ci")),
        "p": _NUM("p", format=formats.P_GRID),
        "drop": st.column_config.CheckboxColumn("Drop", help=definitions.get("change_ci")),
        "mdc": _NUM("Min. detectable change", format="%.3f", help=definitions.get("mdc")),
        "anchor_shift": _NUM("Anchor shift (grade)", format="%+.2f",
                             help=definitions.get("anchor_drift")),
        "anchor_drift": st.column_config.CheckboxColumn(
            "Anchors drifted", help=definitions.get("anchor_drift")),
        "drift_dcg": _NUM(f"DCG@{k} from the drift", format="%+.3f",
                          help=definitions.get("drift_dcg"))})


def _anchors(a: labels_glue.Anchors | None, drift: AnchorDrift | None) -> None:
    """The anchor items first: did the raters drift month over month?"""
    if drift is not None:
        for sentence in drift.notes():
            findings.finding(widgets.md_escape(sentence), icon=":material/anchor:")
        if not drift.drifted():
            st.success("The anchor items did not drift: the raters labeled them alike every "
                       "month.", icon=":material/anchor:")
        files = widgets.md_escape(", ".join(a.names))
        with st.expander(f"Anchor items month over month ({files})"):
            fit.dataframe(drift.pairs.drop(columns=["sentence"]), hide_index=True, column_config={
                "round_from": st.column_config.TextColumn("From"),
                "round_to": st.column_config.TextColumn("To"),
                "items": _NUM("Items", format="%d", help=drift.definitions.get("items")),
                "mean_from": _NUM("Mean label before", format="%.2f"),
                "mean_to": _NUM("Mean label after", format="%.2f"),
                "shift": _NUM("Shift (grade)", format="%+.2f", help=drift.definitions.get("shift")),
                "ci_low": _NUM("Low", format="%+.2f"), "ci_high": _NUM("High", format="%+.2f"),
                "kappa": _NUM("Kappa", format="%.2f", help=drift.definitions.get("kappa")),
                "kappa_ci_low": _NUM("Kappa low", format="%.2f"),
                "kappa_ci_high": _NUM("Kappa high", format="%.2f"),
                "agreement": _NUM("Same label", format="percent",
                                  help=drift.definitions.get("agreement")),
                "drift": st.column_config.CheckboxColumn("Drift",
                                                         help=drift.definitions.get("drift"))})
    elif a is None:
        st.caption("No anchor items: upload a file of items re-labeled every month on the "
                   "Labeling data page to tell a drift of the raters from a change of the "
                   "systems.")


def _offline_online(key: str, j: Judgments, k: int, gain: str, combine: str) -> None:
    """Offline vs online (AUC, GAUC, PNR of the model scores) and the trend per segment."""
    st.subheader("Offline vs online")
    if not j.has_scores:
        st.caption("The files have no model scores: AUC, GAUC and PNR need a score column.")
    else:
        oo = labels_glue.offline_online_cached(key, j, k, gain, combine)
        for note in oo.notes:
            findings.finding(widgets.md_escape(note), icon=":material/compare_arrows:",
                             tone="violet")
        fit.dataframe(oo.table, hide_index=True, column_config=_trend_columns(k) | {
            "scored": _NUM("Scored", format="%d", help="Labeled shown results with a score"),
            "auc": _NUM("AUC", format="%.4f"), "gauc": _NUM("GAUC", format="%.4f"),
            "gauc_queries": _NUM("GAUC queries", format="%d"),
            "pnr": _NUM("PNR", format="%.4f")})
        st.caption(widgets.md_escape(oo.definition))

    # ------------------------------------------------------------------------- segments
    if j.has_segment:
        views.bind_view(keys.BY_SEGMENT, False)
        if st.toggle("Break down by segment", key=keys.BY_SEGMENT):
            seg = labels_glue.trend_cached(key, j, k, gain, combine, "segment")
            fit.dataframe(seg.table, hide_index=True, column_config=_trend_columns(k) | {
                "segment": st.column_config.TextColumn("Segment")})


def _planning(key: str, j: Judgments, k: int, gain: str, combine: str, alpha: float,
              power: float) -> None:
    """Planning the next round: the queries needed per system and design, and the results of the
    last round to label next."""
    st.subheader("Planning the next round")
    last = j.rounds[-1]
    views.bind_view(keys.PLAN_DELTA, keys.PLAN_DELTA_DEFAULT)
    delta = st.number_input(f"DCG@{k} change to detect", min_value=0.01, step=0.1, format="%.2f",
                            key=keys.PLAN_DELTA,
                            help="The smallest change of mean DCG the next round should detect "
                                 "(at the α and power above)")
    plan = labels_glue.plan_cached(key, j, last, float(delta), k, gain, combine, float(alpha),
                                   float(power))
    fit.dataframe(plan, hide_index=True, column_config={
        "round": st.column_config.TextColumn("Round"),
        "system": st.column_config.TextColumn("System"),
        "queries": _NUM("Queries", format="%d"),
        "mean": _NUM(f"Unweighted mean DCG@{k}" if j.has_weight else f"Mean DCG@{k}",
                     format="%.4f",
                     help=f"Mean of the per-query DCG@{k} of the round, every query counted "
                          "once (what the month-over-month test and this plan use)"
                          + (f"; the trend's DCG@{k} above is weighted by the query weight"
                             if j.has_weight else "")),
        "sd": _NUM("SD", format="%.4f", help=f"Standard deviation of per-query DCG@{k}"),
        "design": st.column_config.TextColumn("Next round"),
        "sd_used": _NUM("SD used", format="%.4f",
                        help="The SD of a difference the plan uses: of one round for a new "
                             "sample, of the paired differences for the same queries"),
        "delta": _NUM("Change", format="%.3f"),
        "alpha": _NUM("α", format="%g"),
        "power": _NUM("Power", format="%g"),
        "queries_needed": _NUM("Queries needed", format="%d"),
        "note": st.column_config.TextColumn("Note")})
    st.caption(f"From the spread of per-query DCG@{k} in {widgets.md_escape(last)}, every query "
               "counted once" + (" (the trend's means are weighted by the query weight)"
                                 if j.has_weight else "")
               + ": 'new sample' = a fresh sample of queries (two independent means), 'same "
               "queries' = the queries labeled again (paired).")
    buttons = st.container(horizontal=True)  # as wide as their labels, never cut short
    st.caption(f"The export holds the results shown in {widgets.md_escape(last)} (top {k}) without "
               "their labels, one row per shown result: the next batch for the raters.")
    buttons.download_button("Results to label (CSV)",
                            lambda: export_batch(next_batch(j, last, k=k), "csv"),
                            f"to_label_{last}.csv", "text/csv", icon=":material/download:",
                            on_click="ignore")
    buttons.download_button("Results to label (Excel)",
                            lambda: export_batch(next_batch(j, last, k=k), "xlsx"),
                            f"to_label_{last}.xlsx",
                            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                            icon=":material/download:", on_click="ignore")


with frame.page("labels_trend"):
    loaded, _, sample = labels_widgets.current()
    labels_widgets.header(
        "Labeling trend", "Mean DCG@K over the sampled queries of each round: it judges what users "
        "saw, so it moves with recall and ranking alike. With several raters each band is a 95% "
        "interval over queries and raters (two-stage bootstrap); with one rater, over queries.",
        sample=sample)
    key, j = labels_widgets.require_judgments(loaded)
    s = labels_widgets.settings()
    k, gain, combine = int(s["k"]), str(s["gain"]), str(s["combine"])

    c1, c2, c3 = st.columns([1, 1, 3])
    views.bind_view(keys.ALPHA, keys.ALPHA_DEFAULT)
    alpha = c1.number_input("Test level α", min_value=keys.ALPHA_MIN, max_value=keys.ALPHA_MAX,
                            step=0.01,
                            format="%.3f", key=keys.ALPHA,
                            help="A drop is a fall with p < α; the minimum detectable change "
                                 "and the planning use it too")
    views.bind_view(keys.POWER, keys.POWER_DEFAULT)
    power = c2.number_input("Power", min_value=keys.POWER_MIN, max_value=keys.POWER_MAX,
                            step=0.05, format="%.2f",
                            key=keys.POWER,
                            help="The chance to detect a true change of the minimum "
                                 "detectable change's size")
    views.bind_view(keys.QUERY_BAND, False)
    query_band = c3.toggle("Query-only band", key=keys.QUERY_BAND,
                           help="Also draw the interval over queries alone (the raters kept), "
                                "darker, inside the rater-noise band")

    t = labels_glue.trend_cached(key, j, k, gain, combine)
    a = labels_widgets.anchors()
    if a is not None and a.error is not None:
        files_widgets.show_format_error(a.error)
    drift = a.drift if a is not None else None
    nt = labels_glue.noise_trend_cached(key, j, k, gain, combine, (), float(alpha), float(power),
                                        labels_widgets.anchors_key(a, s), drift)
    drops = nt.changes[nt.changes["drop"].astype(bool)]

    _anchors(a, drift)

    # ------------------------------------------------------------------------- DCG
    if labels_ppi.estimate_choice() == "ppi":
        labels_ppi.ppi_trend(loaded, k, gain, combine)
        st.subheader("People's labels")
    st.plotly_chart(charts.label_trend(
        nt.table, low="ci_low", high="ci_high", title=f"Mean DCG@{k} per round",
        y_label=f"mean DCG@{k}", drops=drops,
        inner=("ci_low_queries", "ci_high_queries") if query_band else None),
        config={"displayModeBar": False})
    covers = sorted(set(nt.table["covers"]))
    st.caption(widgets.md_escape(
        f"Band: {nt.confidence_level:.0%} interval covering {'; '.join(covers)}"
        + (". Darker: queries only." if query_band else ".")))
    for sentence in drops["sentence"]:
        findings.finding(widgets.md_escape(str(sentence)), icon=":material/trending_down:")
    if drops.empty:
        st.success(f"No significant drop from one round to the next (α = {alpha:g}).",
                   icon=":material/check:")
    # the band and the drops above are the rater-noise trend's (nt): its definitions, at
    # this page's α (the query-only trend's definition names another band and test)
    d = nt.definitions
    st.caption(widgets.md_escape(
        f"{d['dcg_definition']}. Mean DCG@{k}: {d['dcg']}. Band: {d['ci_low']}. Month over "
        f"month: {d['change_ci']}. {t.ndcg_definition}"))
    with st.expander("Round by round", expanded=True):
        _round_table(nt.table, t.table, k, nt.definitions)
        _changes_table(nt.changes, k, nt.definitions)

    left, right = st.columns(2)
    left.plotly_chart(charts.label_trend(t.table, value="ndcg", low=None, high=None,
                                         title=f"nDCG@{k} (ideal from the round's labels)",
                                         y_label=f"nDCG@{k}"), config={"displayModeBar": False})
    right.plotly_chart(charts.label_trend(t.table, value="coverage", low=None, high=None,
                                          title=f"Coverage: labeled share of the shown top {k}",
                                          y_label="coverage", share=True),
                       config={"displayModeBar": False})

    st.subheader("Labels of what was shown")
    views.bind_view(keys.GRADE_SYSTEM, j.systems[0], choices=list(j.systems))
    system = st.radio("System", list(j.systems), horizontal=True, key=keys.GRADE_SYSTEM,
                      format_func=widgets.md_escape)  # options are Markdown: names shown as text
    st.plotly_chart(charts.grade_distribution(t.grades, system=system),
                    config={"displayModeBar": False})

    _offline_online(key, j, k, gain, combine)

    _planning(key, j, k, gain, combine, float(alpha), float(power))
