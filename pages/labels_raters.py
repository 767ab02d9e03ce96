"""Raters page: do the raters agree, and has one of them drifted?"""

from __future__ import annotations

import streamlit as st

from ireval_app import findings, frame, labels_glue, labels_widgets, views, widgets
from ireval_app.keys import labels_raters as keys
from ireval_core import charts

with frame.page("labels_raters"):
    loaded, _, sample = labels_widgets.current()
    labels_widgets.header(
        "Raters", "Agreement between the raters of each round (Fleiss' kappa, Krippendorff's alpha "
        "on the ordinal scale, Cohen's kappa per pair) and of each rater with the others "
        "(leave-one-out consensus). A rater whose agreement or mean label moves away from the "
        "others in a round is flagged.", sample=sample)
    key, j = labels_widgets.require_judgments(loaded)
    if not j.has_rater or len(j.raters) < 2:
        st.info("Agreement needs at least two raters: the files have no rater column or one "
                "rater.", icon=":material/info:")
        st.stop()
    s = labels_widgets.settings()
    report = labels_glue.raters_cached(key, j, str(s["combine"]))

    flagged = report.per_rater[report.per_rater["drift_flag"]]
    for row in flagged.itertuples():
        findings.finding(widgets.md_escape(f"{row.rater}, {row.round}: {row.drift_reason}."),
                         icon=":material/flag:")
    if flagged.empty:
        st.success("No rater drifts in any round.", icon=":material/check:")

    st.subheader("Per round")
    st.plotly_chart(charts.label_trend(
        report.per_round.assign(system="Krippendorff's alpha"), value="alpha", low=None, high=None,
        title="Agreement per round", y_label="alpha (ordinal)"), config={"displayModeBar": False})
    d = report.definitions
    labels_widgets.table(report.per_round, {
        "round": ("Round", None, None),
        "raters": ("Raters", None, d.get("raters")),
        "units": ("Results", "{:,}", d.get("units")),
        "pairable_units": ("Results with 2+ labels", "{:,}", d.get("pairable_units")),
        "fleiss": ("Fleiss' kappa", "{:.3f}", d.get("fleiss")),
        "alpha": ("Krippendorff's alpha", "{:.3f}", d.get("alpha")),
        "cohen": ("Cohen's kappa", "{:.3f}", d.get("cohen")),
        "cohen_linear": ("Cohen's kappa, linear", "{:.3f}", d.get("cohen_linear")),
        "cohen_quadratic": ("Cohen's kappa, quadratic", "{:.3f}", d.get("cohen_quadratic"))},
        undefined="not defined: no result of the round has labels of two raters, or every "
                  "label is the same")

    st.subheader("Per rater")
    labels_widgets.table(report.per_rater, {
        "round": ("Round", None, None),
        "rater": ("Rater", None, None),
        "labels": ("Labels", "{:,}", d.get("labels")),
        "mean_label": ("Mean label", "{:.3f}", d.get("mean_label")),
        "kappa_vs_consensus": ("Kappa vs the others", "{:.3f}", d.get("kappa_vs_consensus")),
        "agreement_vs_consensus": ("Same label as the others", "{:.1%}",
                                   d.get("agreement_vs_consensus")),
        "units_vs_consensus": ("Results compared", "{:,}", d.get("units_vs_consensus")),
        "kappa_others_median": ("Others' kappa (median)", "{:.3f}",
                                d.get("kappa_others_median")),
        "mean_label_other_rounds": ("Mean label, other rounds", "{:.3f}",
                                    d.get("mean_label_other_rounds")),
        "others_mean_shift": ("Others' shift (median)", "{:+.3f}", d.get("others_mean_shift")),
        "drift_flag": ("Drift", None, d.get("drift_flag")),
        "drift_reason": ("Why flagged", None, "The rule that flagged the rater (empty: not "
                                              "flagged)")},
        row_style=lambda row: ["background-color: #fde2e2" if row["drift_flag"] else ""]
        * len(row),
        undefined="not defined: no other rater labeled the rater's results in that round, or "
                  "the rater labeled in no other round")
    st.subheader("One rater against the others")
    c1, c2, _ = st.columns([1, 1, 2])
    rounds = list(report.per_round["round"])
    default_round = str(flagged["round"].iloc[0]) if not flagged.empty else rounds[-1]
    views.bind_view(keys.ROUND, default_round, choices=rounds)
    round_ = c1.selectbox("Round", rounds, key=keys.ROUND)
    raters = list(report.per_rater.loc[report.per_rater["round"] == round_, "rater"])
    default_rater = (str(flagged["rater"].iloc[0]) if not flagged.empty
                     and str(flagged["rater"].iloc[0]) in raters else raters[0])
    views.bind_view(keys.RATER, default_rater, choices=raters)
    rater = c2.selectbox("Rater", raters, key=keys.RATER)
    left, right = st.columns([3, 2])
    left.plotly_chart(charts.transition_heatmap(
        report.confusion(round_, rater), title=f"{rater} against the other raters, {round_}",
        x_label="other raters' consensus label", y_label=f"{rater}'s label", unit="results"),
        config={"displayModeBar": False})
    right.caption(widgets.md_escape(
        f"Rows: {rater}'s label; columns: the consensus of the other raters of the same results "
        f"in {round_}. The outlined diagonal is agreement."))
    st.subheader("Most disputed results")
    labels_widgets.table(report.disputed.head(200), {
        "round": ("Round", None, None), "query": ("Query", None, None),
        "doc": ("Document", None, None),
        "labels": ("Labels (rater: label)", None, "Every rater's label of the result"),
        "spread": ("Spread", "{:g}", report.definitions.get("spread")),
        "n_labels": ("Raters", None, "How many raters labeled the result"),
        "mean_label": ("Mean label", "{:.2f}", "Mean of the raters' labels")})
