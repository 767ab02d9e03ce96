"""Queries page: where two runs differ on a measure, query by query, and what each ranked."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from ireval_app import evaluation, frame, state, views, widgets, workspace_widgets
from ireval_app import queries_glue as qg
from ireval_app.keys import queries as keys
from ireval_core.dataset import Dataset
from ireval_core.evaluate import Evaluation
from ireval_core.options import EvalOptions
from ireval_core.queries import means_note, wins_ties_losses
from ireval_core.workspace import Target


def _differences(diffs: pd.DataFrame, res: Evaluation, measure: str, a: str, b: str,
                 single: bool) -> None:
    """The table of per-query values (or differences B − A) and, beside it, what they add up
    to."""
    st.subheader(widgets.md_escape(f"{a} on {measure}, query by query" if single
                                    else f"{b} − {a} on {measure}"))
    left, right = st.columns([3, 2])
    with left:
        st.dataframe(
            diffs, hide_index=True, height=320,
            column_config={
                "query": st.column_config.Column("query"),
                "a": st.column_config.NumberColumn(a, format="%.4f",
                                                   help=widgets.md_escape(f"{measure} of {a}")),
                "b": st.column_config.NumberColumn(b, format="%.4f",
                                                   help=widgets.md_escape(f"{measure} of {b}")),
                "diff": st.column_config.NumberColumn("B − A", format="%+.4f",
                                                      help=widgets.md_escape(
                                                          f"{measure} of {b} minus {a}")),
            },
            column_order=["query", "a"] if single else None)
    with right:
        n = len(diffs)
        if single:
            st.caption(widgets.md_escape(f"{n:,} queries of {a} with a value, the lowest first. "
                                         "Pick two different runs to see where they differ."))
        else:
            wins, ties, losses = wins_ties_losses(diffs)
            st.metric(widgets.md_escape(f"Queries where {b} wins / ties / loses"),
                      f"{wins} / {ties} / {losses}",
                      help="Per-query comparison of the measure, ties exact")
            st.caption(f"{n:,} queries that both runs have, sorted by B − A: the queries where B "
                       "loses most come first.")
        st.caption(widgets.md_escape(means_note(res, diffs, str(measure), a, b)))
        st.caption(f"**{widgets.md_escape(measure)}**: "
                   f"{widgets.md_escape(res.definition(measure))}.")


def _rankings(key: str, options: EvalOptions, query: str, dataset: Dataset, a: str,
              b: str, single: bool, depth: int) -> None:
    """The runs' rankings of the query side by side, grades beside every document, and the
    relevant documents a run misses."""
    shown = [a] if single else [a, b]
    columns = st.columns(len(shown))
    for col, name in zip(columns, shown, strict=True):
        table, missed = qg.ranking_cached(key, options, str(query), name,
                                          None if single else (b if name == a else a),
                                          int(depth), dataset)
        with col:
            st.markdown(f"**{widgets.md_escape(name)}**: top {len(table)} of "
                        f"{widgets.md_escape(query)}")
            st.dataframe(qg.style_ranking(table, options.rel_level), hide_index=True,
                         height=qg.table_height(len(table)),
                         column_config={c: st.column_config.Column(help=h)
                                        for c, h in qg.RANKING_HELP.items()})
            if missed.empty:
                st.caption(widgets.md_escape(f"{name} ranks every relevant document of {query}."))
            else:
                with st.expander(widgets.md_escape(
                        f"{len(missed):,} relevant document(s) {name} does not rank")):
                    st.dataframe(missed, hide_index=True)
    st.caption(f"Rows: green = relevant (grade ≥ {options.rel_level:g}, darker = higher grade), "
               "grey = not judged or pooled but unjudged (both count as non-relevant"
               + (", and are removed: judged-only rankings" if options.judged_only else "")
               + "), white = judged non-relevant. 'other rank' is the document's rank in the other "
               "run. Rankings are as the measures see them"
               + ("" if options.depth is None else f": cut at the top {options.depth}") + ".")


with frame.page("queries"):
    dataset = widgets.require_dataset()
    widgets.page_header("Queries", "From the means to the queries behind them: pick a measure and "
                        "two runs, find the queries where they differ most, and open one to see "
                        "both rankings with the judges' grades beside every document.")
    options = state.get_options()

    widgets.require_runs(dataset)

    # ------------------------------------------------------------------------- settings
    names = list(dataset.run_names)
    c1, c2 = st.columns(2)
    views.bind_view(keys.MEASURE, qg.MEASURE_CHOICES[0], choices=qg.MEASURE_CHOICES)
    picked = c1.selectbox("Measure", qg.MEASURE_CHOICES, key=keys.MEASURE)
    views.bind_view(keys.TYPED, "")
    typed = c2.text_input("Or type a measure", key=keys.TYPED, placeholder="P(rel=2)@5",
                          help="Any measure spec, e.g. nDCG(gain=exp)@20, P(rel=2)@5, or a "
                               "trec_eval name such as ndcg_cut_10; used instead of the pick")
    c3, c4, c5 = st.columns([2, 2, 1])
    views.bind_view(keys.RUN_A, names[0], choices=names)
    views.bind_view(keys.RUN_B, names[min(1, len(names) - 1)], choices=names)
    a = c3.selectbox("Run A", names, key=keys.RUN_A)
    b = c4.selectbox("Run B", names, key=keys.RUN_B,
                     help="Differences are B − A: negative where B does worse")
    views.bind_view(keys.SHOWN, 20)
    depth = c5.selectbox("Documents shown", keys.SHOWN_CHOICES, key=keys.SHOWN)

    specs, errors = evaluation.parse_specs([typed.strip() or picked])
    if errors or not specs:
        for message in errors:
            st.error(message, icon=":material/error:")
        st.stop()
    measure = specs[0]

    key = state.get_dataset_key() or ""
    res = evaluation.evaluate_cached(key, dataset, (measure,), options)
    single = a == b  # one run: its queries from the lowest value up
    diffs = qg.differences_cached(key, measure, options, a, b, res)
    meta, column, _ = widgets.split_choice(keys.SEGMENT_COLUMN, "Only queries where")
    if column is not None and meta is not None:
        values = sorted(set(meta.segment(column)))
        views.bind_view(keys.SEGMENT_VALUE, values[0], choices=values)
        value = st.selectbox(f"{widgets.md_escape(column)} is", values,  # a label is Markdown
                             key=keys.SEGMENT_VALUE)
        keep = meta.queries[meta.segment(column) == value]
        diffs = diffs[diffs["query"].isin(keep)].reset_index(drop=True)
    if diffs.empty:
        st.info(widgets.md_escape(f"{a} and {b} have no query with a value of {measure} in "
                                  "common."), icon=":material/info:")
        st.stop()

    # ------------------------------------------------------------------------- differences
    _differences(diffs, res, measure, a, b, single)

    # ------------------------------------------------------------------------- one query
    shown_value = diffs["a"] if single else diffs["diff"]
    labels = {q: f"{q}   ({v:.4f})" if single else f"{q}   ({v:+.4f})"
              for q, v in zip(diffs["query"], shown_value, strict=True)}
    views.bind_view(keys.QUERY, next(iter(labels)), choices=list(labels))
    query = st.selectbox("Query", list(labels), key=keys.QUERY,
                         format_func=labels.__getitem__,
                         help="Ordered as the table above")
    row = diffs.set_index("query").loc[query]
    st.subheader(widgets.md_escape(f"Query {query}"))
    workspace_widgets.notes_panel(Target.query(str(query)), title=f"Notes on query {query}")
    m1, m2, m3, m4 = st.columns(4)
    m1.metric(widgets.md_escape(f"{measure} of {a}"), f"{row['a']:.4f}")
    if not single:
        m2.metric(widgets.md_escape(f"{measure} of {b}"), f"{row['b']:.4f}",
                  delta=f"{row['diff']:+.4f}")
    relevant, judged = qg.judged_cached(key, options, str(query), dataset)
    m3.metric("Relevant in the qrels", f"{relevant:,}", help=f"Grade ≥ {options.rel_level:g}")
    m4.metric("Judged documents", f"{judged:,}",
              help="Grade ≥ 0 (negative grades: pooled, not judged)")

    _rankings(key, options, str(query), dataset, a, b, single, int(depth))
