"""Metric lab: one ranked list evaluated step by step, and the seeds' worked examples."""

from __future__ import annotations

import math

import streamlit as st

from ireval_app import evaluation, frame, lab_glue, state, views, widgets
from ireval_app.keys import lab as keys
from ireval_core import lab
from ireval_core.errors import FormatError
from ireval_core.options import EvalOptions
from ireval_core.queries import grade_text

SOURCES = {"preset": "A worked example from the seeds", "typed": "Type a list",
           "query": "A query of a loaded run"}
STEP_COLUMNS = {
    "rank": st.column_config.NumberColumn("rank", help="1 = the top of the list"),
    "grade": st.column_config.TextColumn(
        "grade", help="The judges' grade; unjudged = not in the qrels, pooled = graded "
                      "negative (pooled but never judged)"),
    "gain": st.column_config.NumberColumn("gain", format="%.4g",
                                          help="What the grade is worth (see the text)"),
    "discount": st.column_config.NumberColumn(
        "discount", format="%.4f", help="The weight of the rank (RBP: p^(rank − 1); ERR: 1/r)"),
    "precision": st.column_config.NumberColumn("precision", format="%.4f",
                                               help="P@rank: relevant so far / rank"),
    "dcg": st.column_config.NumberColumn("DCG so far", format="%.4f"),
    "stop": st.column_config.NumberColumn(
        "stop", format="%.4f", help="Probability that the user is satisfied here: "
                                    "(2^grade − 1) / 2^g_max"),
    "reach": st.column_config.NumberColumn(
        "reach", format="%.4f", help="Probability that the user gets here unsatisfied"),
    "contribution": st.column_config.NumberColumn(
        "contribution", format="%.4f", help="What this rank adds to the value"),
    "running": st.column_config.NumberColumn("running", format="%.4f",
                                             help="The value up to this rank"),
}
MEASURE_HELP = ("Any measure of " + ", ".join(lab.EXPLAINED_FAMILIES) + ", e.g. P(rel=2)@5, "
                "nDCG(gain=exp)@6, DCG(discount=jk)@6, bpref(form=original); used instead of "
                "the pick")


def _seed(number: str) -> str:
    """A seed's number as people say it: "000" -> "0", "012" -> "12"."""
    return str(int(number)) if number.isdigit() else number


def _value(x: float) -> str:
    if math.isnan(x):
        return "undefined"
    return "∞" if math.isinf(x) else f"{x:.4f}"


def show(ex: lab.Explanation) -> None:
    """The value, the formula, the words and the steps of one explanation."""
    left, right = st.columns([1, 3])
    left.metric(widgets.md_escape(ex.measure), _value(ex.value),
                help=widgets.md_escape(ex.definition))
    with right:
        st.latex(ex.formula)
    st.markdown(widgets.md_escape(ex.text))
    st.dataframe(ex.steps.assign(grade=ex.steps["grade"].map(grade_text)), hide_index=True,
                 column_config=STEP_COLUMNS)
    if ex.ideal is not None:
        st.markdown("**The ideal ranking**: its DCG is IDCG, the denominator of nDCG.")
        st.dataframe(ex.ideal.assign(grade=ex.ideal["grade"].map(grade_text)),
                     hide_index=True, column_config={**STEP_COLUMNS, "running": (
                         st.column_config.NumberColumn("IDCG so far", format="%.4f"))})
    st.caption(f"**{widgets.md_escape(ex.measure)}**: {widgets.md_escape(ex.definition)}.")


def pick_measure() -> str | None:
    """The measure picker (a choice, or a typed spec); ``None`` after showing an error."""
    left, right = st.columns(2)
    views.bind_view(keys.MEASURE, "nDCG@10", choices=lab.MEASURE_CHOICES)
    views.bind_view(keys.TYPED_MEASURE, "")
    picked = left.selectbox("Measure", lab.MEASURE_CHOICES, key=keys.MEASURE)
    typed = right.text_input("Or type a measure", key=keys.TYPED_MEASURE,
                             placeholder="nDCG(ideal=run)@6", help=MEASURE_HELP)
    specs, errors = evaluation.parse_specs([typed.strip() or picked])
    for message in errors:
        st.error(widgets.md_escape(message), icon=":material/error:")
    return specs[0] if specs else None


def explained(grades: tuple[float, ...], spec: str, options: EvalOptions, *,
              unretrieved: tuple[float, ...], scores: tuple[float, ...] | None = None,
              top_grade: float | None = None) -> lab.Explanation | None:
    """:func:`ireval_core.lab.explain`, or ``None`` after showing why it cannot."""
    try:
        return lab_glue.explain_cached(tuple(grades), spec, options, tuple(unretrieved),
                                       None if scores is None else tuple(scores), top_grade)
    except ValueError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        return None


def _preset() -> None:
    """A worked example from the seeds: its explanation, and the seed's numbers recomputed."""
    titles = {p.key: f"Seed {_seed(p.seed)}: {p.title}" for p in lab.PRESETS}
    views.bind_view(keys.PRESET, lab.PRESETS[0].key, choices=list(titles))
    key = st.selectbox("Worked example", list(titles), format_func=titles.__getitem__,
                       key=keys.PRESET)
    item = lab.preset(key)
    st.info(f"**Seed {_seed(item.seed)}**: {widgets.md_escape(item.claim)}",
            icon=":material/school:")
    res = lab_glue.preset_cached(item.key)
    st.caption("Worked examples use trec_eval's default options, as the seeds do; the sidebar "
               "options apply to typed lists and real queries.")
    if item.kind == "significance":
        st.subheader(f"Two systems, {len(item.a)} queries")
        if res.steps is not None:
            st.dataframe(res.steps, hide_index=True, column_config={
                "rank of |B − A|": st.column_config.NumberColumn(
                    format="%.1f",
                    help="Zero differences are dropped; ties share the mean rank"),
                "signed rank": st.column_config.NumberColumn(format="%.1f")})
        st.subheader("Three paired tests (one-sided: is B better?)")
        st.dataframe(res.tests_table(), hide_index=True, column_config={
            "p (one-sided)": st.column_config.NumberColumn(format="%.4f")})
        st.latex(res.formula)
        st.markdown(widgets.md_escape(res.text))
    elif len(res.explanations) == 1:
        show(res.explanations[0])
    else:
        st.metric(item.mean_label or "mean", _value(res.value),
                  help=f"Arithmetic mean of {item.measure} over the {len(item.queries)} "
                       "queries")
        st.latex(res.formula)
        tabs = st.tabs([q.label for q in item.queries])
        for tab, ex in zip(tabs, res.explanations, strict=True):
            with tab:
                show(ex)
    st.subheader("The seed's numbers, recomputed")
    st.dataframe(res.checks, hide_index=True, column_config={
        "published": st.column_config.NumberColumn(format="%g"),
        "computed": st.column_config.NumberColumn(format="%.4f"),
        "reproduced": st.column_config.CheckboxColumn(
            help="Equal to the published precision ('at most': within the seed's bound)")})


def _typed(options: EvalOptions) -> None:
    """A ranked list typed as grades, explained for the measure picked."""
    left, right = st.columns(2)
    views.bind_view(keys.GRADES, "3 2 3 0 1 2")
    views.bind_view(keys.UNRETRIEVED, "3 2")
    typed_grades = left.text_input(
        "Grades of the ranked list, best rank first", key=keys.GRADES,
        help="Numbers separated by spaces or commas; - (or ?) for a document the judges never "
             "saw, a negative grade for one that was pooled but not judged")
    typed_rest = right.text_input(
        "Judged documents the list does not contain: their grades", key=keys.UNRETRIEVED,
        help="They count in R (recall, AP, bpref), in bpref's N and in nDCG's ideal ranking")
    spec = pick_measure()
    try:
        grades = lab.parse_grades(typed_grades, source="ranked list")
        rest = lab.parse_grades(typed_rest, source="not in the list", allow_unjudged=False)
    except FormatError as exc:
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        st.stop()
    if not grades:
        st.info("Type the grades of the ranked list, e.g. 3 2 3 0 1 2.", icon=":material/info:")
        st.stop()
    if spec is not None:
        ex = explained(grades, spec, options, unretrieved=rest)
        if ex is not None:
            show(ex)


def _real_query(options: EvalOptions) -> None:
    """One query of a loaded run, explained for the measure picked, beside the value the whole
    run's evaluation gives it."""
    dataset = widgets.require_dataset()
    widgets.loaded_data_note()
    widgets.require_runs(dataset)
    names = list(dataset.run_names)
    left, right = st.columns(2)
    views.bind_view(keys.RUN, names[0], choices=names)
    run_name = left.selectbox("Run", names, key=keys.RUN)
    queries = list(lab_glue.queries_cached(state.get_dataset_key() or "", run_name,
                                           dataset))
    if not queries:
        st.info(widgets.md_escape(f"{run_name} answers no judged query."),
                icon=":material/info:")
        st.stop()
    views.bind_view(keys.QUERY, queries[0], choices=queries)
    query = right.selectbox("Query", queries, key=keys.QUERY,
                            help="Queries of the run that have judgments")
    spec = pick_measure()
    lst = lab_glue.query_list_cached(state.get_dataset_key() or "", run_name, query,
                                     dataset)
    st.caption(widgets.md_escape(
        f"{run_name} ranks {len(lst.grades):,} documents for {query}; the qrels judge "
        f"{len(lst.unretrieved):,} more that it does not rank."))
    if spec is not None:
        ex = explained(lst.grades, spec, options, unretrieved=lst.unretrieved,
                       scores=lst.scores, top_grade=lst.top_grade)
        if ex is not None:
            show(ex)
            res = evaluation.evaluate_cached(state.get_dataset_key() or "", dataset, (spec,),
                                             options)
            whole = res.per_query(run_name, spec)
            value = float(whole.loc[query]) if query in whole.index else math.nan
            st.caption(widgets.md_escape(
                f"Evaluating the whole run gives {query} the same {spec}: {_value(value)}; the "
                f"Metrics page averages these values over the queries."))


with frame.page("lab"):
    widgets.page_header(
        "Metric lab", "One ranked list evaluated step by step: what each rank adds, the formula "
        "and the words, for teaching in meetings. The value always comes from the same kernels "
        "as every other page.", data_note=False)  # a worked example is not the loaded data
    options = state.get_options()
    views.bind_view(keys.SOURCE, "preset", choices=list(SOURCES))
    source = st.radio("Ranked list", list(SOURCES), format_func=SOURCES.__getitem__,
                      key=keys.SOURCE, horizontal=True)

    # ------------------------------------------------------------------------- presets
    if source == "preset":
        _preset()

    # ------------------------------------------------------------------------- a typed list
    elif source == "typed":
        _typed(options)

    # ------------------------------------------------------------------------- a real query
    else:
        _real_query(options)
