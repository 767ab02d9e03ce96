"""Compare page: paired significance tests between runs, verdicts, and planning the next round.

The page draws, top to bottom: the settings, the results of every test, the table for the
report, the per-query differences of one pair and measure, the evidence for deciding on
that pair (judgment debt, not worse or equivalent, the ranking, who gets hurt), the form
recording a decision and the planning of the next labeling round. The numbers are
:mod:`ireval_app.compare_glue`'s (cached) and :mod:`ireval_core.compare`'s.
"""

from __future__ import annotations

import functools

import numpy as np
import streamlit as st

from ireval_app import compare_glue as cg
from ireval_app import (
    evaluation,
    fit,
    frame,
    state,
    views,
    widgets,
    workspace_glue,
    workspace_widgets,
)
from ireval_app import metadata_glue as mg
from ireval_app.keys import compare as keys
from ireval_core import charts, formats
from ireval_core.compare import (
    CORRECTION_LABELS,
    TEST_LABELS,
    aligned_scores,
    comparison_table,
    plan_next_round,
    query_set_note,
    verdicts,
)
from ireval_core.dataset import Dataset
from ireval_core.decisions import HolesResult, MeasureEvidence, RiskProfile
from ireval_core.errors import IrevalError
from ireval_core.evaluate import Evaluation
from ireval_core.options import EvalOptions
from ireval_core.report import table_from_records
from ireval_core.stats import ALTERNATIVES, CORRECTIONS, TESTS, PairComparison
from ireval_core.workspace import Target

VERDICT_ICONS = {"significant": ":material/check_circle:", "not significant": ":material/remove:",
                 "cannot tell": ":material/help:"}

COLUMNS = {
    "system_a": st.column_config.Column("A", help=cg.COLUMN_HELP["system_a"]),
    "system_b": st.column_config.Column("B", help=cg.COLUMN_HELP["system_b"]),
    "measure": st.column_config.Column(width=90),
    "test": st.column_config.Column(),
    "mean_a": st.column_config.NumberColumn("mean A", format="%.4f",
                                            help=cg.COLUMN_HELP["mean_a"]),
    "mean_b": st.column_config.NumberColumn("mean B", format="%.4f",
                                            help=cg.COLUMN_HELP["mean_b"]),
    "mean_diff": st.column_config.NumberColumn("B − A", format="%+.4f",
                                               help=cg.COLUMN_HELP["mean_diff"]),
    "95% CI": st.column_config.Column(help=cg.COLUMN_HELP["95% CI"]),
    "p": st.column_config.NumberColumn(format=formats.P_GRID, help=cg.COLUMN_HELP["p"]),
    "corrected p": st.column_config.NumberColumn("adj. p", format=formats.P_GRID,
                                                 help=cg.COLUMN_HELP["corrected p"]),
    "effect size": st.column_config.NumberColumn("d_z", format="%+.3f",
                                                 help=cg.COLUMN_HELP["effect size"]),
    "W/T/L": st.column_config.Column(help=cg.COLUMN_HELP["W/T/L"]),
    "n": st.column_config.NumberColumn(help=cg.COLUMN_HELP["n"]),
}  # the results table's columns (a string here would be drawn: Streamlit's magic)


def _settings_panel(dataset: Dataset) -> tuple[list[str], cg.Settings]:
    """The settings box: the measure texts typed or picked, and the other settings."""
    with st.container(border=True):
        c1, c2, c3 = st.columns(3)
        with c1:
            views.bind_view(keys.MEASURES, ["nDCG@10"])
            measure_texts = st.multiselect(
                "Measures", cg.MEASURE_CHOICES, key=keys.MEASURES,
                accept_new_options=True,
                help="Pick or type measures (e.g. `P(rel=2)@5`, `nDCG@20`)")
            views.bind_view(keys.SYSTEMS, list(dataset.run_names),
                            choices=dataset.run_names)
            systems = st.multiselect("Runs", dataset.run_names, key=keys.SYSTEMS)
            views.bind_view(keys.MODE, "all pairs",
                            choices=("all pairs", "against a baseline"))
            mode = st.radio("Pairs", ("all pairs", "against a baseline"), key=keys.MODE,
                            horizontal=True)
            baseline = None
            if mode == "against a baseline" and systems:
                views.bind_view(keys.BASELINE, systems[0], choices=systems)
                baseline = st.selectbox("Baseline (system A)", systems, key=keys.BASELINE)
        with c2:
            views.bind_view(keys.TESTS, ["t", "randomization"], choices=TESTS)
            tests = st.multiselect("Tests", TESTS, key=keys.TESTS,
                                   format_func=TEST_LABELS.__getitem__)
            views.bind_view(keys.ALTERNATIVE, "two-sided", choices=ALTERNATIVES)
            alternative = st.selectbox(
                "Alternative", ALTERNATIVES, key=keys.ALTERNATIVE,
                help="two-sided: B ≠ A; greater: B better than A; less: B worse than A")
            views.bind_view(keys.CORRECTION, "holm", choices=CORRECTIONS)
            correction = st.selectbox(
                "Multiple-comparison correction", CORRECTIONS,
                key=keys.CORRECTION, format_func=CORRECTION_LABELS.__getitem__,
                help="Applied over the pairs of one measure and one test")
        with c3:
            views.bind_view(keys.RESAMPLES, 10_000)
            n_resamples = st.number_input(
                "Resamples", min_value=keys.RESAMPLES_MIN, max_value=keys.RESAMPLES_MAX,
                step=1000, key=keys.RESAMPLES,
                help="Random sign flips (randomization) or resamples (bootstrap); with 2^n ≤ "
                     "resamples, randomization is exact")
            views.bind_view(keys.SEED, 0)
            seed = st.number_input("Seed", min_value=0, max_value=keys.SEED_MAX, step=1,
                                   key=keys.SEED,
                                   help="The same seed gives the same Monte Carlo p-values")
            views.bind_view(keys.ALPHA, 0.05)
            alpha = st.selectbox("Significance level α", keys.ALPHA_CHOICES,
                                 key=keys.ALPHA,
                                 help="Rows with corrected p < α are highlighted")
    return measure_texts, cg.Settings(
        tuple(systems), baseline, tuple(tests), str(alternative), str(correction),
        int(n_resamples), int(seed), float(alpha))


def _measures_or_stop(measure_texts: list[str], settings: cg.Settings) -> tuple[str, ...]:
    """The measures parsed (what cannot be is said); the page stops, saying what is
    missing, without a measure, two runs and a test."""
    measures, bad = evaluation.parse_specs(measure_texts)
    if bad:
        st.error("Cannot parse: " + "; ".join(widgets.md_escape(b) for b in bad),
                 icon=":material/error:")
    problems = [msg for ok, msg in ((measures, "Choose at least one measure."),
                                    (len(settings.systems) >= 2, "Choose at least two runs."),
                                    (settings.tests, "Choose at least one test.")) if not ok]
    if problems:
        st.info(" ".join(problems), icon=":material/info:")
        st.stop()
    return measures


def _results(records: tuple[PairComparison, ...], res: Evaluation, measures: tuple[str, ...],
             settings: cg.Settings) -> None:
    """Every test of every pair and measure, the verdicts and the downloads."""
    st.subheader("Results")
    alpha = settings.alpha
    table = comparison_table(records)
    # Columns that hold one value for every row go to the caption: the table fits the page.
    constant = [c for c in ("measure", "n") if table[c].nunique() == 1]
    fit.dataframe(
        table.style.apply(lambda row: ["background-color: #dcfce7" if row["corrected p"] < alpha
                                       else ""] * len(row), axis=1),
        keys=["system_a", "system_b", "test"], budget=800,
        column_order=[c for c in table.columns if c not in constant], column_config=COLUMNS)
    same = [f"on {table['measure'].iloc[0]}" if "measure" in constant else "",
            f"over the same {table['n'].iloc[0]:,} queries" if "n" in constant else ""]
    st.caption(widgets.md_escape(
        (f"Every pair is compared {' '.join(x for x in same if x)}. " if any(same) else "")
        + "Means A and B are over the queries all selected runs share. "
        + f"Green rows: adjusted p < α = {alpha:g} ({CORRECTION_LABELS[settings.correction]}). "
        "d_z = Cohen's effect size, mean(B − A) / sd(B − A)."))
    for m in measures:
        note = query_set_note(res, m, list(settings.systems))
        if note:
            st.warning(widgets.md_escape(note), icon=":material/rule:")
        st.caption(f"**{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}")

    st.markdown("**Verdicts**")
    for verdict in verdicts(records, alpha=alpha):
        st.markdown(f"{VERDICT_ICONS[verdict.outcome]} {widgets.md_escape(verdict.text)}")

    with st.container(horizontal=True):  # buttons as wide as their labels, never cut short
        st.download_button("Download CSV", cg.download(records, "csv"), "comparison.csv",
                           "text/csv", icon=":material/download:")
        st.download_button("Download JSON", cg.download(records, "json"), "comparison.json",
                           "application/json", icon=":material/download:")


def _report_table(records: tuple[PairComparison, ...], res: Evaluation,
                  settings: cg.Settings) -> None:
    """The results of one test as the table of a report, with its downloads."""
    st.subheader("Results table for the report")
    r1, _ = st.columns([1, 3])
    tests = list(settings.tests)
    views.bind_view(keys.REPORT_TEST, tests[0], choices=tests)
    report_test = r1.selectbox("Test", tests, key=keys.REPORT_TEST,
                               format_func=TEST_LABELS.__getitem__,
                               help="One two-sided test marks the table; correction, α, resamples "
                                    "and seed as above")
    # the pairs compared above (every pair, or each system with the baseline, as
    # `report --baseline` does): the table reads those records, nothing is run again
    report = table_from_records(res, [r for r in records if r.test == report_test],
                                list(settings.systems), alpha=settings.alpha,
                                baseline=settings.baseline)
    st.table(cg.report_styler(report))
    st.caption(widgets.md_escape(report.caption() + " Letters: " + ", ".join(
        f"{letter} = {name}" for name, letter in report.labels.items()) + "."))
    with st.container(horizontal=True):
        st.download_button("Markdown", report.to_markdown(), "results.md", "text/markdown",
                           icon=":material/download:")
        st.download_button("LaTeX", report.to_latex(), "results.tex", "application/x-tex",
                           icon=":material/download:")
        st.download_button("HTML", report.to_html(), "results.html", "text/html",
                           icon=":material/download:")


def _per_query(records: tuple[PairComparison, ...], res: Evaluation, measures: tuple[str, ...],
               options: EvalOptions, key: str, settings: cg.Settings
               ) -> tuple[tuple[str, str, str], dict[str, np.ndarray]]:
    """The per-query differences of the pair and measure chosen (and its tests per
    metadata value); that ``(a, b, measure)`` and the compared queries' values per run."""
    st.subheader("Per-query differences")
    s = settings
    pairs = cg.pair_labels((c.system_a, c.system_b, c.measure) for c in records)
    views.bind_view(keys.PAIR, next(iter(pairs)), choices=list(pairs))
    a, b, m = pairs[st.selectbox("Pair and measure", list(pairs), key=keys.PAIR)]
    queries, aligned = aligned_scores(res, str(m), list(s.systems))
    deltas = aligned[b] - aligned[a]
    st.plotly_chart(charts.per_query_delta(queries, deltas, a=a, b=b, measure=m),
                    config={"displayModeBar": False})
    meta, column, meta_key = widgets.split_choice(keys.SPLIT, "Test again per value of")
    if column is not None and meta is not None:
        seg = mg.compare_by_segment_cached(
            key, measures, options, meta_key, column, str(m), a, b, s.tests[0], s.alternative,
            s.correction, s.alpha, s.n_resamples, s.seed, res, meta)
        for row in seg.itertuples():
            st.markdown(f"{VERDICT_ICONS[row.outcome]} {widgets.md_escape(row.verdict)}")
        st.caption(widgets.md_escape(
            f"{TEST_LABELS[s.tests[0]]} within each value of {column}, "
            f"{CORRECTION_LABELS[s.correction]} over the values; fewer than 5 queries: "
            "cannot tell."))
    st.caption(widgets.md_escape(
        f"Each bar is one of the {len(deltas)} compared queries: {m} of {b} minus {m} of {a}, "
        f"sorted; bars above 0 are queries where {b} wins."))
    return (a, b, m), aligned


def _deciding(dataset: Dataset, options: EvalOptions, key: str, settings: cg.Settings,
              pair: tuple[str, str, str], aligned: dict[str, np.ndarray]) -> cg.Deciding:
    """The heading of the decision evidence, its settings box, and the evidence."""
    a, b, m = pair
    s = settings
    st.subheader(f"Deciding: {widgets.md_escape(b)} against {widgets.md_escape(a)} on "
                 f"{widgets.md_escape(m)}")
    st.caption(widgets.md_escape(
        f"The evidence a review meeting argues about, for the pair and measure chosen above "
        f"(differences {b} − {a}, {a} the baseline), over the {len(aligned[a])} queries every "
        f"selected run has; {s.n_resamples:,} resamples, seed {s.seed}, α = {s.alpha:g}."))
    with st.container(border=True):
        n1, n2, n3, _ = st.columns([1, 1, 1, 1])
        views.bind_view(keys.MARGIN, keys.MARGIN_DEFAULT)
        margin_number = n1.number_input(
            "Margin", min_value=keys.MARGIN_MIN, max_value=keys.MARGIN_MAX, step=0.005,
            format="%.4f", key=keys.MARGIN,
            help="How much worse B may be and still be acceptable (non-inferiority), or how "
                 "close the two must be (equivalence)")
        views.bind_view(keys.MARGIN_UNIT, keys.MARGIN_UNITS[0])
        margin_unit = n2.radio("Margin in", keys.MARGIN_UNITS, key=keys.MARGIN_UNIT,
                               horizontal=True)
        views.bind_view(keys.LOSS_DELTA, 0.0)
        loss_delta = n3.number_input(
            "Loss threshold δ", min_value=0.0, max_value=keys.DELTA_MAX,
            step=0.01, format="%.3f", key=keys.LOSS_DELTA,
            help="Who gets hurt: a query loses when B − A < −δ, B worse than A by more "
                 "than δ")
        views.bind_view(keys.RISK_ALPHA, 1.0)
        risk_alpha = n3.number_input(
            "URisk α (extra weight of a loss)", min_value=0.0, max_value=keys.RISK_ALPHA_MAX,
            step=1.0, format="%g", key=keys.RISK_ALPHA)
    with st.spinner("Judgment debt, non-inferiority, ranking and risk…"):
        return cg.deciding(key, options, dataset, settings, (a, b, str(m)),
                           (aligned[a], aligned[b]),
                           margin=cg.margin_of(float(margin_number), margin_unit),
                           loss_delta=float(loss_delta), risk_alpha=float(risk_alpha))


def _holes_box(holes: HolesResult, pair: tuple[str, str, str]) -> None:
    """Judgment debt: the unjudged documents of each system, the bounds, the verdict, and
    the next labeling batch to download."""
    a, b, m = pair
    with st.container(border=True):
        st.markdown("**Judgment debt: does the verdict survive the unjudged documents?**")
        icon = ":material/check_circle:" if holes.verdict == "holds" else ":material/help:"
        st.markdown(f"{icon} **{holes.verdict}**: {widgets.md_escape(holes.text)}")
        if holes.verdict == "depends":  # label the documents it depends on
            st.page_link("pages/judging.py", label="Judge these documents", icon=":material/rule:",
                         query_params={"measure": str(m), "baseline": a, "candidate": b})
        st.dataframe(
            cg.holes_table(holes), hide_index=True,
            column_config={
                "unjudged": st.column_config.NumberColumn(
                    help="Unjudged documents in the system's window over the compared "
                         "queries"),
                "as judged": st.column_config.NumberColumn(
                    format="%.4f", help="Mean with unjudged documents non-relevant (the "
                                        "usual evaluation)"),
                "holes non-relevant": st.column_config.NumberColumn(
                    format="%.4f", help="Mean with the system's holes labeled non-relevant"),
                "holes relevant": st.column_config.NumberColumn(
                    format="%.4f", help="Mean with the system's holes labeled relevant"),
                holes.inferred_name or "inferred": st.column_config.NumberColumn(
                    format="%.4f", help="The inferred estimate: the documents marked -1 in "
                                        "the qrels as a random sample of the pool")})
        window = f"top {holes.k}" if holes.k is not None else "whole evaluated ranking"
        st.caption(widgets.md_escape(
            f"Holes: documents without a judgment (or pooled but not judged) in each "
            f"system's {window}, over the {holes.n_queries:,} compared queries; "
            f"{holes.shared:,} of them both systems retrieved, {holes.n_holes:,} distinct "
            f"(query, document) pairs in all. Bounds: the mean of {m} with the system's holes "
            f"labeled non-relevant and relevant. The verdict reruns the "
            f"{TEST_LABELS[holes.test]} (two-sided, uncorrected, α = {holes.alpha:g}) under "
            f"{holes.worst_labeling}. {holes.bounds_note()} " + holes.inferred_definition()))
        b1, b2, _ = st.columns([3, 1, 2])
        batch_name = f"labeling_batch_{a}_vs_{b}"
        b1.download_button(
            f"Download the next labeling batch (CSV, {holes.n_holes:,} pairs)",
            functools.partial(holes.export, "csv"), f"{batch_name}.csv", "text/csv",
            icon=":material/download:", disabled=holes.n_holes == 0, on_click="ignore")
        b2.download_button(
            "Excel", functools.partial(holes.export, "xlsx"), f"{batch_name}.xlsx",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            icon=":material/download:", disabled=holes.n_holes == 0, on_click="ignore")


def _margin_box(evidence: cg.Deciding, pair: tuple[str, str, str], alpha: float) -> None:
    """Not worse, or equivalent: the margin tests, in words and as a table."""
    a, b, m = pair
    with st.container(border=True):
        st.markdown("**Not worse, or equivalent**")
        if evidence.margin_error is not None:
            st.warning(widgets.md_escape(evidence.margin_error), icon=":material/warning:")
        ni, boot = evidence.pair.noninferiority, evidence.pair.noninferiority_bootstrap
        if ni is None:
            st.info("Not enough queries for the tests.", icon=":material/info:")
            return
        for result in (ni, boot, evidence.equivalence):
            if result is not None:
                mark = (":material/check_circle:" if result.conclusive
                        else ":material/remove:")
                st.markdown(f"{mark} {widgets.md_escape(result.sentence(a, b, str(m)))}")
        st.dataframe(cg.margin_table(ni, boot, evidence.equivalence), hide_index=True,
                     column_config={
                         "B − A": st.column_config.NumberColumn(format=formats.DIFFERENCE_GRID),
                         "p": st.column_config.NumberColumn(format=formats.P_GRID)})
        st.caption(widgets.md_escape(
            f"Margin M = {ni.margin:.4g} {m}"
            + (f" ({ni.percent:g}% of {a}'s mean {ni.baseline_mean:.4f})"
               if ni.percent is not None else "")
            + f". Non-inferiority: H0 mean({b} − {a}) ≤ −M, one-sided at α = {alpha:g}; "
            f"not worse exactly when the {1 - 2 * alpha:.0%} interval lies above −M. "
            f"Equivalence (TOST): the interval within (−M, M). The bootstrap resamples the "
            f"{ni.n:,} compared queries. A non-significant difference is not evidence of "
            f"'not worse'."))


def _ranking_box(me: MeasureEvidence | None, m: str) -> None:
    """How sure the ranking of the compared runs is (three runs or more)."""
    with st.container(border=True):
        st.markdown("**How sure the ranking is**")
        if me is None or me.ranking is None:
            st.caption("Needs three or more runs with values on the same queries: choose more "
                       "runs above.")
            return
        st.plotly_chart(charts.rank_probabilities(me.ranking.table(), measure=str(m)),
                        config={"displayModeBar": False})
        st.caption(widgets.md_escape(  # right under the chart it explains
            f"Each of the {me.ranking.n_resamples:,} bootstrap resamples draws the "
            f"{me.n_queries:,} compared queries with replacement and ranks the "
            f"{len(me.systems)} runs by their mean {m} on it; a cell is the share of "
            f"resamples putting the run at that rank, the rank interval the central "
            f"{me.ranking.confidence_level:.0%}."))
        for sentence in me.ranking.sentences():
            st.markdown(f"- {widgets.md_escape(sentence)}")
        for model in (me.anova, me.mixed):
            if model is not None:
                st.markdown(widgets.md_escape(model.sentence()))
        st.caption("The two-way model: run × query without interaction (ANOVA) and with "
                   "a random query effect (linear mixed model, REML).")


def _risk_box(risk: RiskProfile, pair: tuple[str, str, str]) -> None:
    """Who gets hurt: the losing queries, URisk and TRisk, links to the worst losses."""
    a, b, m = pair
    with st.container(border=True):
        st.markdown("**Who gets hurt**")
        st.markdown(widgets.md_escape(risk.sentence(a, b, str(m))))
        r1, r2, r3, r4 = st.columns(4)
        r1.metric(f"Queries losing > {risk.delta:g}", f"{risk.n_losses:,} of {risk.n_queries:,}",
                  help=f"Queries where {b} − {a} < −{risk.delta:g}")
        r2.metric(f"URisk (α = {risk.alpha:g})", f"{risk.urisk:+.4f}",
                  help="Mean difference in which each loss weighs 1 + α")
        r3.metric("TRisk", f"{risk.trisk:+.2f}",
                  help="URisk over its standard error: below −2, B is significantly riskier")
        r4.metric("TRisk p", formats.p_value(risk.pvalue),
                  help="Two-sided, t with n − 1 degrees of freedom")
        if risk.worst:
            st.markdown("Worst losses (open a query on the Queries page):")
            for q, va, vb, d in risk.worst:
                st.page_link("pages/queries.py", query_params={
                    "a": a, "b": b, "query": str(q), "measure": str(m)},
                    label=widgets.md_escape(f"{q}: {d:+.4f} ({a} {va:.4f} → {b} {vb:.4f})"),
                    icon=":material/arrow_downward:")
        st.caption(widgets.md_escape(
            f"Over the {risk.n_queries:,} compared queries, d = {b} − {a} per query. URisk = "
            f"(1/n)[Σ gains − (1 + α) Σ losses] (Wang et al. 2012); TRisk = URisk / "
            f"(s/√n), s the standard deviation of the weighted differences (Dinçer et al. "
            f"2014)."))


def _record_box(evidence: cg.Deciding, settings: cg.Settings, target: Target,
                pair: tuple[str, str, str]) -> None:
    """The form recording a decision on the pair, with the evidence above (a saved
    dataset only)."""
    a, b, m = pair
    with st.container(border=True):
        st.markdown("**Record a decision**")
        dataset_id = state.get_dataset_id()
        if dataset_id is None:
            st.caption("Decisions are kept with a saved dataset: save these files to the "
                       "workspace on the Data page (**Save to the workspace**); the data "
                       "shown now is not saved.")
            return
        if not workspace_glue.may("editor", dataset_id):
            st.caption("Recording a decision needs the role editor in the dataset's project: "
                       "ask an admin of the project.")
            return
        signed_in = workspace_glue.actor().signed_in
        state.prefill(keys.DECISION_AUTHOR, state.get_author())
        with st.form("ireval.compare.decision.form", clear_on_submit=False, border=False):
            decision = st.text_area(
                f"Decision on {b} against {a} on {m}", key=keys.DECISION_TEXT, height=80,
                placeholder=f"e.g. ship {b}: not worse than {a} and the win holds")
            if signed_in:
                workspace_widgets.author_field()
            author = ("" if signed_in
                      else st.text_input("Your name", key=keys.DECISION_AUTHOR))
            if st.form_submit_button("Record the decision", icon=":material/gavel:"):
                author = workspace_widgets.author() if signed_in else author.strip()
                _record(dataset_id, target, decision, author, evidence, settings)
        st.caption("The note keeps the decision, the evidence sentences above, the "
                   "settings and the link to this view; the meeting report recomputes "
                   "the evidence from them.")


def _record(dataset_id: str, target: Target, decision: str, author: str,
            evidence: cg.Deciding, settings: cg.Settings) -> None:
    """Record the decision submitted, and say how it went."""
    if not decision.strip() or not author:
        st.error("A decision needs a text and your name.", icon=":material/error:")
        return
    try:
        saved = cg.record_decision(dataset_id, target, decision, author=author,
                                   evidence=evidence, settings=settings,
                                   link=views.full_link())  # every selection, defaults too
    except (IrevalError, ValueError) as exc:  # e.g. a NUL character
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        return
    if isinstance(saved, workspace_glue.WorkspaceProblem):
        workspace_widgets.workspace_problem(saved, lead="The decision was not recorded. ")
        return
    if not workspace_glue.actor().signed_in:
        state.set_author(author)
    st.success("Recorded, with the evidence above; it opens the meeting report.",
               icon=":material/check:")


def _planning(deltas: np.ndarray, settings: cg.Settings, pair: tuple[str, str, str]) -> None:
    """Planning the next labeling round from the spread of the pair's differences."""
    a, b, m = pair
    alpha, alternative = settings.alpha, settings.alternative
    st.subheader("Planning the next labeling round")
    st.caption(widgets.md_escape(
        f"Paired t-test, power 0.8, α = {alpha:g}, {alternative}; the spread of per-query "
        f"differences is taken from {b} − {a} on {m}."))
    views.bind_view(keys.DELTA, 0.02)
    delta = st.columns(4)[0].number_input(
        "Difference you want to detect (Δ)", min_value=keys.DELTA_MIN,
        max_value=keys.DELTA_MAX_PLAN, step=0.005, format="%.3f", key=keys.DELTA,
        help="The true mean difference in the measure you want the next round to detect")
    plan = plan_next_round(deltas, delta, measure=str(m), alpha=alpha, power=0.8,
                           alternative=alternative)
    with st.container(horizontal=True, gap="medium"):  # wraps instead of cutting a label
        st.metric("sd of differences", f"{plan.sd_diff:.4f}", width="content",
                  help="Sample standard deviation of the per-query differences B − A")
        st.metric("Queries now", f"{plan.n_queries:,}", width="content",
                  help="Queries compared for this pair")
        st.metric("Minimum detectable difference",
                  "—" if plan.min_detectable is None else
                  (f"> {plan.min_detectable:.2f}" if plan.exceeds_range
                   else f"{plan.min_detectable:.4f}"), width="content",
                  help="Smallest true mean difference the paired t-test finds with power 0.8 "
                       "with the current number of queries")
        st.metric(f"Queries needed for Δ = {delta:g}",
                  "—" if plan.queries_needed is None else f"{plan.queries_needed:,}",
                  width="content",
                  help="Smallest number of queries for power 0.8 at this Δ (same spread "
                       "assumed)")
    if plan.note:
        st.warning(widgets.md_escape(plan.note), icon=":material/warning:")


with frame.page("compare"):
    dataset = widgets.require_dataset()
    widgets.page_header("Compare", "Paired significance tests between runs, query by query: every "
                        "test pairs the same queries (those all selected runs have), and "
                        "differences are always B − A.")
    options = state.get_options()
    if len(dataset.runs) < 2:
        st.info("Comparing needs at least two runs: add run files on the Data page.",
                icon=":material/info:")
        st.stop()

    measure_texts, settings = _settings_panel(dataset)
    measures = _measures_or_stop(measure_texts, settings)
    key = state.get_dataset_key() or ""
    res = evaluation.evaluate_cached(key, dataset, measures, options)
    with st.spinner(f"Running {len(settings.tests)} test(s) with {settings.n_resamples:,} "
                    "resamples…"):
        records = cg.compare_cached(
            key, options, res, measures, settings.systems, settings.baseline, settings.tests,
            settings.alternative, settings.correction, settings.n_resamples, settings.seed)
    _results(records, res, measures, settings)
    _report_table(records, res, settings)

    pair, aligned = _per_query(records, res, measures, options, key, settings)
    evidence = _deciding(dataset, options, key, settings, pair, aligned)
    _holes_box(evidence.pair.holes, pair)
    _margin_box(evidence, pair, settings.alpha)
    _ranking_box(evidence.ranking, pair[2])
    _risk_box(evidence.pair.risk, pair)
    a, b, m = pair
    target = Target.comparison(a, b, str(m))
    _record_box(evidence, settings, target, pair)
    workspace_widgets.notes_panel(target, title=f"Notes and decisions: {b} vs {a} on {m}")
    _planning(aligned[b] - aligned[a], settings, pair)
