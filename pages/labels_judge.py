"""Model judge page: a rater marked as a model judge (an LLM's labels) checked against the
people: agreement, decisions, bias, disagreements."""

from __future__ import annotations

import streamlit as st

from ireval_app import fit, frame, labels_glue, labels_ppi, labels_widgets, views, widgets
from ireval_app.keys import labeling
from ireval_app.keys import labels_judge as keys
from ireval_core import charts, formats
from ireval_core.labels import JudgeReport, export_batch
from ireval_core.labels.ppi import PPIReport

_NUM = st.column_config.NumberColumn
_TEXT = st.column_config.TextColumn
_CHECK = st.column_config.CheckboxColumn
_CHART = {"displayModeBar": False}

def _agreement(report: JudgeReport, d: dict[str, str], judge: str, combine: str) -> None:
    """Agreement with the people: per round, and the confusion matrix of one round."""
    st.subheader("Agreement with the people")
    fit.dataframe(report.agreement, hide_index=True, column_config={
        "round": _TEXT("Round"),
        "units": _NUM("Results", format="%d", help="Results labeled by the judge and people"),
        "kappa": _NUM("Weighted kappa", format="%.3f", help=d.get("kappa")),
        "kappa_ci_low": _NUM("Kappa low", format="%.3f"),
        "kappa_ci_high": _NUM("Kappa high", format="%.3f"),
        "alpha": _NUM("Krippendorff's alpha", format="%.3f", help=d.get("alpha")),
        "alpha_ci_low": _NUM("Alpha low", format="%.3f"),
        "alpha_ci_high": _NUM("Alpha high", format="%.3f"),
        "exact_agreement": _NUM("Same label", format="percent"),
        "mean_judge": _NUM("Judge's mean label", format="%.2f"),
        "mean_people": _NUM("People's mean label", format="%.2f"),
        "difference": _NUM("Judge − people", format="%+.2f")})
    rounds = list(report.agreement["round"])
    c1, _ = st.columns([1, 3])
    views.bind_view(keys.ROUND, rounds[-1], choices=rounds)
    round_ = c1.selectbox("Round of the confusion matrix", rounds, key=keys.ROUND)
    left, right = st.columns([3, 2])
    left.plotly_chart(charts.transition_heatmap(
        report.confusion(round_), title=f"Judge against people, {round_}",
        x_label="people's consensus label", y_label=f"judge's ({judge}) label", unit="results"),
        config=_CHART)
    right.caption(widgets.md_escape(
        f"Rows: {judge}'s label; columns: the people's consensus ({combine} of their labels, "
        f"rounded to the nearest grade) of the same results in {round_}. The outlined diagonal "
        "is agreement; cells above it: the judge rated lower, below it: higher."))


def _bias_and_decisions(report: JudgeReport, d: dict[str, str]) -> None:
    """Bias per system, and whether the judge's labels lead to the same decisions (changes,
    order, GSB verdicts) as the people's."""
    st.subheader("Bias per system")
    fit.dataframe(report.bias, hide_index=True, column_config={
        "round": _TEXT("Round"), "system": _TEXT("System"),
        "results": _NUM("Results", format="%d"),
        "judge_mean": _NUM("Judge's mean label", format="%.3f"),
        "people_mean": _NUM("People's mean label", format="%.3f"),
        "bias": _NUM("Bias (judge − people)", format="%+.3f", help=d.get("bias")),
        "ci_low": _NUM("Low", format="%+.3f"), "ci_high": _NUM("High", format="%+.3f")})
    fit.dataframe(report.favours, hide_index=True, column_config={
        "round": _TEXT("Round"), "system": _TEXT("System"),
        "bias": _NUM("Bias", format="%+.3f"),
        "others_bias": _NUM("Other systems' bias", format="%+.3f"),
        "difference": _NUM("Difference", format="%+.3f", help=d.get("favours")),
        "ci_low": _NUM("Low", format="%+.3f"), "ci_high": _NUM("High", format="%+.3f"),
        "favours": _CHECK("Favours it", help=d.get("favours"))})

    # ------------------------------------------------------------------------- decisions
    st.subheader("Same decisions?")
    fit.dataframe(report.decisions, hide_index=True, column_config={
        "system": _TEXT("System"), "round_from": _TEXT("From"), "round_to": _TEXT("To"),
        "people_delta": _NUM("People's change", format="%+.3f"),
        "judge_delta": _NUM("Judge's change", format="%+.3f"),
        "same_direction": _CHECK("Same direction", help=d.get("decisions")),
        "people_drop": _CHECK("People: drop"), "judge_drop": _CHECK("Judge: drop"),
        "same_drop": _CHECK("Same drop flag"),
        "people_significant": _CHECK("People: significant"),
        "judge_significant": _CHECK("Judge: significant")})
    fit.dataframe(report.order, hide_index=True, column_config={
        "scope": _TEXT("Rounds"), "points": _NUM("Means", format="%d",
                                                 help="(round, system) means ordered"),
        "tau": _NUM("Kendall's tau", format="%.2f", help=d.get("order")),
        "ci_low": _NUM("Low", format="%.2f"), "ci_high": _NUM("High", format="%.2f"),
        "same_order": _CHECK("Same order")})
    if report.gsb is not None:
        fit.dataframe(report.gsb, hide_index=True, column_config={
            "round": _TEXT("Round"), "new": _TEXT("New"), "old": _TEXT("Old"),
            "queries": _NUM("Queries", format="%d"),
            "people_gsb": _NUM("People's GSB", format="%+.3f"),
            "people_ci_low": _NUM("Low", format="%+.3f"),
            "people_ci_high": _NUM("High", format="%+.3f"),
            "people_verdict": _TEXT("People's verdict"),
            "judge_gsb": _NUM("Judge's GSB", format="%+.3f", help=d.get("gsb")),
            "judge_ci_low": _NUM("Low ", format="%+.3f"),
            "judge_ci_high": _NUM("High ", format="%+.3f"),
            "judge_verdict": _TEXT("Judge's verdict"),
            "labels_gsb": _NUM("GSB from people's labels", format="%+.3f"),
            "labels_verdict": _TEXT("Verdict from people's labels"),
            "same_verdict": _CHECK("Same verdict")})
    else:
        st.caption("No side-by-side (GSB) file for two systems: the GSB verdicts are not "
                   "compared.")


def _disagreements(report: JudgeReport, d: dict[str, str], judge: str) -> None:
    """The results the judge and the people disagree on most: the batch for people to label,
    and what the tables mean."""
    n = len(report.disagreements)
    st.subheader(f"Disagreements: {n:,} result{'s' if n != 1 else ''} for people to label")
    st.caption(widgets.md_escape(d.get("disagreements", "")))
    fit.dataframe(report.disagreements.head(500), hide_index=True, column_config={
        "round": _TEXT("Round"), "query": _TEXT("Query"), "doc": _TEXT("Doc"),
        "systems": _TEXT("Shown by"), "position": _NUM("Position", format="%d"),
        "judge_label": _NUM("Judge's label", format="%g"),
        "people_label": _NUM("People's label", format="%.2f"),
        "people_labels": _NUM("People's labels", format="%d", help="How many people labeled it"),
        "difference": _NUM("Judge − people", format="%+.2f")})
    buttons = st.container(horizontal=True)  # as wide as their labels, never cut short
    buttons.download_button("Batch to label (CSV)", lambda: export_batch(report.batch(), "csv"),
                            f"judge_disagreements_{judge}.csv", "text/csv",
                            icon=":material/download:", on_click="ignore")
    buttons.download_button("Batch to label (Excel)", lambda: export_batch(report.batch(), "xlsx"),
                            f"judge_disagreements_{judge}.xlsx",
                            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
                            icon=":material/download:", on_click="ignore")
    with st.expander("What the tables mean"):
        st.markdown("\n".join(f"- **{widgets.md_escape(c)}**: {widgets.md_escape(t)}"
                              for c, t in d.items()))


def _model_and_people(mp: PPIReport, judge: str, k: int) -> None:
    """The model + people (PPI++) estimates: per round and system, per pair, the judge's
    ranking against the people's, and how many people's labels a target width needs."""
    dp = mp.definitions
    st.subheader("Model + people estimate")
    st.markdown("**For the memo**: " + widgets.md_escape(f"{mp.memo}."))
    st.caption(widgets.md_escape(
        f"Model + people (PPI++): mean DCG@{k} from {judge}'s labels of every shown result, "
        f"corrected by the people's labels of the results they labeled; "
        f"{dp['design']}. People only: the people's labels alone; model only: {judge}'s "
        "labels alone, its bias included."))
    labels_ppi.systems_table(mp)
    st.caption(widgets.md_escape(
        f"Pairs: the difference b − a of mean DCG@{k} over the queries both showed, model + "
        "people. Verdict: 'b better than a' when the interval is above 0, 'b worse than a' "
        "below, else 'no clear difference'; the people's verdict from the people-only "
        "interval, the judge's from the model-only one."))
    fit.dataframe(mp.pairs, hide_index=True, column_order=(
        "round", "system_a", "system_b", "estimate", "low", "high", "people_only",
        "model_only", "verdict", "people_verdict", "judge_verdict", "judge_agrees"),
        column_config={
        "round": _TEXT("Round"), "system_a": _TEXT("a"), "system_b": _TEXT("b"),
        "estimate": _NUM("b − a, model + people", format=formats.DIFFERENCE_GRID,
                         help=dp["estimate"]),
        "low": _NUM("Low", format=formats.DIFFERENCE_GRID),
        "high": _NUM("High", format=formats.DIFFERENCE_GRID),
        "people_only": _NUM("People only", format=formats.DIFFERENCE_GRID),
        "model_only": _NUM("Model only", format=formats.DIFFERENCE_GRID),
        "verdict": _TEXT("Verdict (used)"), "people_verdict": _TEXT("People's verdict"),
        "judge_verdict": _TEXT("Judge's verdict"),
        "judge_agrees": _CHECK("Judge agrees with people")})
    rank = mp.ranking
    if rank["kendall_tau"]["value"] is not None:
        def _two(v: float | None) -> str:
            return "–" if v is None else f"{v:.2f}"

        tau, tap = rank["kendall_tau"], rank["tau_ap"]
        st.caption(widgets.md_escape(
            f"The judge's ranking of the {rank['points']} (round, system) means against the "
            f"people's: Kendall's tau-b {_two(tau['value'])} [{_two(tau['low'])}, "
            f"{_two(tau['high'])}], tau_AP {_two(tap['value'])} [{_two(tap['low'])}, "
            f"{_two(tap['high'])}] (top-weighted: a swap at the top costs more)."))
    with st.expander("How many people's labels"):
        st.caption(widgets.md_escape(dp["plan"][0].upper() + dp["plan"][1:] + "."))
        st.markdown("\n".join(
            f"- **{widgets.md_escape(r['round'])}, {widgets.md_escape(r['system_a'])} vs "
            f"{widgets.md_escape(r['system_b'])}**: {widgets.md_escape(r['advice'])}"
            for r in mp.plan.to_dict("records")))


with frame.page("labels_judge"):
    loaded, loaded_gsb, sample = labels_widgets.current()
    labels_widgets.header(
        "Model judge", "A rater whose labels come from a model (e.g. an LLM) checked against the "
        "people: do they agree, would the judge's labels lead to the same decisions, does it "
        "favour a system, and which results should people label again. Nothing here runs a "
        "model: the judge's labels arrive in a labeling file like everyone's.", sample=sample)
    _, j = labels_widgets.require_judgments(loaded, people=False)
    raters = list(j.raters)
    if not j.has_rater or len(raters) < 2:
        st.info("A model judge is compared with people: the files need a rater column with "
                "the judge and at least one person.", icon=":material/info:")
        st.stop()
    key = loaded.key if loaded is not None else ""
    # no rater marked (the user's files): none is taken for the judge by default, since
    # marking one leaves its labels out of every labeling page (a person's, silently)
    views.bind_view(labeling.JUDGE, labels_widgets.judge(j), choices=[None, *raters])
    judge = st.selectbox("The model judge", [None, *raters], key=labeling.JUDGE,
                         format_func=lambda r: "(none marked)" if r is None
                         else widgets.md_escape(r),
                         help="The rater whose labels come from a model. Its labels are left "
                              "out of the people's numbers on every labeling page.")
    if judge is None:
        st.info("No rater is marked as a model judge. Pick the rater whose labels come from "
                "a model (e.g. an LLM): it is then compared with the people here, and its "
                "labels are left out of the people's numbers on every labeling page.",
                icon=":material/info:")
        st.stop()
    people = [r for r in raters if r != judge]
    st.caption(widgets.md_escape(f"People: {', '.join(people)}. The judge is compared with "
                                 "their consensus; the Trend, Raters and Label changes pages "
                                 f"leave {judge} out."))
    s = labels_widgets.settings()
    k, gain, combine = int(s["k"]), str(s["gain"]), str(s["combine"])
    gsb = loaded_gsb.gsb if loaded_gsb is not None and loaded_gsb.error is None else None
    gsb_systems = (j.systems[0], j.systems[1]) if gsb is not None and len(j.systems) == 2 else None
    if gsb_systems is None:
        gsb = None
    refusal = labels_glue.judge_refusal(j)
    if refusal is not None:  # checked before computing: the server's memory is shared
        st.error(widgets.md_escape(refusal), icon=":material/block:")
        st.stop()
    report = labels_glue.judge_cached(key, j, str(judge), k, gain, combine,
                                      loaded_gsb.key if gsb is not None else "",
                                      gsb, gsb_systems)
    d = report.definitions

    st.subheader("Findings")
    for sentence in report.summary:
        st.markdown(f"- {widgets.md_escape(sentence)}")

    # ------------------------------------------------------------------------- agreement
    _agreement(report, d, str(judge), combine)

    # ------------------------------------------------------------------------- bias
    _bias_and_decisions(report, d)

    # ------------------------------------------------------------------------- model + people
    _model_and_people(labels_glue.ppi_cached(key, j, str(judge), k, gain, combine),
                      str(judge), k)

    # ------------------------------------------------------------------------- disagreements
    _disagreements(report, d, str(judge))
