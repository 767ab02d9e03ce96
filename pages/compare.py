"""Compare page: paired significance tests between runs, verdicts, and planning the next round."""

from __future__ import annotations

import streamlit as st

from ireval_app import compare_glue as cg
from ireval_app import evaluation, frame, state, views, widgets
from ireval_app import metadata_glue as mg
from ireval_app.keys import compare as keys
from ireval_core import charts
from ireval_core.compare import (
    CORRECTION_LABELS,
    TEST_LABELS,
    aligned_scores,
    comparison_table,
    plan_next_round,
    query_set_note,
    verdicts,
)
from ireval_core.report import table_from_records
from ireval_core.stats import ALTERNATIVES, CORRECTIONS, TESTS
from ireval_core.workspace import Target

VERDICT_ICONS = {"significant": ":material/check_circle:", "not significant": ":material/remove:",
                 "cannot tell": ":material/help:"}

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

    # ------------------------------------------------------------------------- settings
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
            tests = st.multiselect("Tests", TESTS, default=["t", "randomization"],
                                   key=keys.TESTS, format_func=TEST_LABELS.__getitem__)
            alternative = st.selectbox(
                "Alternative", ALTERNATIVES, key=keys.ALTERNATIVE,
                help="two-sided: B ≠ A; greater: B better than A; less: B worse than A")
            correction = st.selectbox(
                "Multiple-comparison correction", CORRECTIONS, index=CORRECTIONS.index("holm"),
                key=keys.CORRECTION, format_func=CORRECTION_LABELS.__getitem__,
                help="Applied over the pairs of one measure and one test")
        with c3:
            n_resamples = st.number_input(
                "Resamples", min_value=100, max_value=1_000_000, value=10_000, step=1000,
                key=keys.RESAMPLES,
                help="Random sign flips (randomization) or resamples (bootstrap); with 2^n ≤ "
                     "resamples, randomization is exact")
            seed = st.number_input("Seed", min_value=0, value=0, step=1, key=keys.SEED,
                                   help="The same seed gives the same Monte Carlo p-values")
            alpha = st.selectbox("Significance level α", (0.01, 0.05, 0.1), index=1,
                                 key=keys.ALPHA,
                                 help="Rows with corrected p < α are highlighted")

    measures, bad = evaluation.parse_specs(measure_texts)
    if bad:
        st.error("Cannot parse: " + "; ".join(widgets.md_escape(b) for b in bad),
                 icon=":material/error:")
    problems = [msg for ok, msg in ((measures, "Choose at least one measure."),
                                    (len(systems) >= 2, "Choose at least two runs."),
                                    (tests, "Choose at least one test.")) if not ok]
    if problems:
        st.info(" ".join(problems), icon=":material/info:")
        st.stop()

    key = state.get_dataset_key() or ""
    res = evaluation.evaluate_cached(key, dataset, measures, options)
    with st.spinner(f"Running {len(tests)} test(s) with {int(n_resamples):,} resamples…"):
        records = cg.compare_cached(
            key, options, res, measures, tuple(systems), baseline, tuple(tests), alternative,
            correction, int(n_resamples), int(seed))

    # ------------------------------------------------------------------------- results
    st.subheader("Results")
    table = comparison_table(records)
    # Columns that hold one value for every row go to the caption: the table fits the page.
    constant = [c for c in ("measure", "n") if table[c].nunique() == 1]
    st.dataframe(
        table.style.apply(lambda row: ["background-color: #dcfce7" if row["corrected p"] < alpha
                                       else ""] * len(row), axis=1),
        hide_index=True,
        column_order=[c for c in table.columns if c not in constant],
        column_config={
            "system_a": st.column_config.Column("A", help=cg.COLUMN_HELP["system_a"]),
            "system_b": st.column_config.Column("B", help=cg.COLUMN_HELP["system_b"]),
            "measure": st.column_config.Column(width=90),
            "test": st.column_config.Column(width=95),
            "mean_a": st.column_config.NumberColumn("mean A", format="%.4f",
                                                    help=cg.COLUMN_HELP["mean_a"]),
            "mean_b": st.column_config.NumberColumn("mean B", format="%.4f",
                                                    help=cg.COLUMN_HELP["mean_b"]),
            "mean_diff": st.column_config.NumberColumn("B − A", format="%+.4f",
                                                       help=cg.COLUMN_HELP["mean_diff"]),
            "95% CI": st.column_config.Column(help=cg.COLUMN_HELP["95% CI"]),
            "p": st.column_config.NumberColumn(format="%.2e", help=cg.COLUMN_HELP["p"]),
            "corrected p": st.column_config.NumberColumn("adj. p", format="%.2e",
                                                         help=cg.COLUMN_HELP["corrected p"]),
            "effect size": st.column_config.NumberColumn("d_z", format="%+.3f",
                                                         help=cg.COLUMN_HELP["effect size"]),
            "W/T/L": st.column_config.Column(help=cg.COLUMN_HELP["W/T/L"]),
            "n": st.column_config.NumberColumn(help=cg.COLUMN_HELP["n"]),
        })
    same = [f"on {table['measure'].iloc[0]}" if "measure" in constant else "",
            f"over the same {table['n'].iloc[0]:,} queries" if "n" in constant else ""]
    st.caption(widgets.md_escape(
        (f"Every pair is compared {' '.join(x for x in same if x)}. " if any(same) else "")
        + "Means A and B are over the queries all selected runs share. "
        + f"Green rows: adjusted p < α = {alpha:g} ({CORRECTION_LABELS[correction]}). "
        "d_z = Cohen's effect size, mean(B − A) / sd(B − A)."))
    for m in measures:
        note = query_set_note(res, m, systems)
        if note:
            st.warning(widgets.md_escape(note), icon=":material/rule:")
        st.caption(f"**{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}")

    st.markdown("**Verdicts**")
    for verdict in verdicts(records, alpha=alpha):
        st.markdown(f"{VERDICT_ICONS[verdict.outcome]} {widgets.md_escape(verdict.text)}")

    d1, d2, _ = st.columns([1, 1, 4])
    d1.download_button("Download CSV", cg.download(records, "csv"), "comparison.csv", "text/csv",
                       icon=":material/download:")
    d2.download_button("Download JSON", cg.download(records, "json"), "comparison.json",
                       "application/json", icon=":material/download:")

    # ------------------------------------------------------------------------- report
    st.subheader("Results table for the report")
    r1, r2 = st.columns([1, 3])
    report_test = r1.selectbox("Test", tests, key=keys.REPORT_TEST,
                               format_func=TEST_LABELS.__getitem__,
                               help="One two-sided test marks the table; correction, α, resamples "
                                    "and seed as above")
    if baseline is None:  # every pair was compared above: the table reads those records
        report = table_from_records(res, [r for r in records if r.test == report_test], systems,
                                    alpha=float(alpha))
    else:
        report = cg.report_cached(key, options, res, measures, tuple(systems), report_test,
                                  correction, float(alpha), int(n_resamples), int(seed))
    st.table(cg.report_styler(report))
    st.caption(widgets.md_escape(report.caption() + " Letters: " + ", ".join(
        f"{letter} = {name}" for name, letter in report.labels.items()) + "."))
    e1, e2, e3, _ = st.columns([1, 1, 1, 3])
    e1.download_button("Markdown", report.to_markdown(), "results.md", "text/markdown",
                       icon=":material/download:")
    e2.download_button("LaTeX", report.to_latex(), "results.tex", "application/x-tex",
                       icon=":material/download:")
    e3.download_button("HTML", report.to_html(), "results.html", "text/html",
                       icon=":material/download:")

    # ------------------------------------------------------------------------- per query
    st.subheader("Per-query differences")
    pairs = list(dict.fromkeys((c.system_a, c.system_b, c.measure) for c in records))
    a, b, m = st.selectbox("Pair and measure", pairs, key=keys.PAIR,
                           format_func=lambda p: f"{p[1]} − {p[0]} on {p[2]}")
    queries, aligned = aligned_scores(res, str(m), systems)
    deltas = aligned[b] - aligned[a]
    st.plotly_chart(charts.per_query_delta(queries, deltas, a=a, b=b, measure=m),
                    config={"displayModeBar": False})
    meta, column, meta_key = widgets.split_choice(keys.SPLIT, "Test again per value of")
    if column is not None and meta is not None:
        seg = mg.compare_by_segment_cached(
            key, measures, options, meta_key, column, str(m), a, b, tests[0], alternative,
            correction, float(alpha), int(n_resamples), int(seed), res, meta)
        for row in seg.itertuples():
            st.markdown(f"{VERDICT_ICONS[row.outcome]} {widgets.md_escape(row.verdict)}")
        st.caption(widgets.md_escape(
            f"{TEST_LABELS[tests[0]]} within each value of {column}, "
            f"{CORRECTION_LABELS[correction]} over the values; fewer than 5 queries: cannot tell."))
    widgets.notes_panel(Target.comparison(a, b, str(m)),
                        title=f"Notes and decisions: {b} vs {a} on {m}")
    st.caption(widgets.md_escape(
        f"Each bar is one of the {len(deltas)} compared queries: {m} of {b} minus {m} of {a}, "
        f"sorted; bars above 0 are queries where {b} wins."))

    # ------------------------------------------------------------------------- planning
    st.subheader("Planning the next labeling round")
    st.caption(widgets.md_escape(
        f"Paired t-test, power 0.8, α = {alpha:g}, {alternative}; the spread of per-query "
        f"differences is taken from {b} − {a} on {m}."))
    delta = st.columns(4)[0].number_input(
        "Difference you want to detect (Δ)", min_value=0.001, max_value=1.0, value=0.02,
        step=0.005, format="%.3f", key=keys.DELTA,
        help="The true mean difference in the measure you want the next round to detect")
    plan = plan_next_round(deltas, delta, measure=str(m), alpha=alpha, power=0.8,
                           alternative=alternative)
    p1, p2, p3, p4 = st.columns(4)
    p1.metric("sd of differences", f"{plan.sd_diff:.4f}",
              help="Sample standard deviation of the per-query differences B − A")
    p2.metric("Queries now", f"{plan.n_queries:,}", help="Queries compared for this pair")
    p3.metric("Minimum detectable difference",
              "—" if plan.min_detectable is None else
              (f"> {plan.min_detectable:.2f}" if plan.exceeds_range
               else f"{plan.min_detectable:.4f}"),
              help="Smallest true mean difference the paired t-test finds with power 0.8 "
                   "with the current number of queries")
    p4.metric(f"Queries needed for Δ = {delta:g}",
              "—" if plan.queries_needed is None else f"{plan.queries_needed:,}",
              help="Smallest number of queries for power 0.8 at this Δ (same spread assumed)")
    if plan.note:
        st.warning(widgets.md_escape(plan.note), icon=":material/warning:")
