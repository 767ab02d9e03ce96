"""Queries page: where two runs differ on a measure, query by query, and what each ranked."""

from __future__ import annotations

import streamlit as st

from ireval_app import evaluation, state, widgets
from ireval_app import queries_glue as qg
from ireval_core.queries import missed_relevant, query_differences

K = state.QUERIES_PREFIX
MEASURE, TYPED, RUN_A, RUN_B, QUERY, DEPTH = (K + "measure", K + "typed", K + "run_a",
                                              K + "run_b", K + "query", K + "depth")

dataset = widgets.require_dataset()
opts = evaluation.evaluation_options()

st.title("Queries")
st.caption("From the means to the queries behind them: pick a measure and two runs, find the "
           "queries where they differ most, and open one to see both rankings with the "
           "judges' grades beside every document.")

if not dataset.runs:
    st.info("No runs loaded yet: add run files on the Data page.", icon=":material/info:")
    st.stop()

# ----------------------------------------------------------------------------- settings
names = list(dataset.run_names)
c1, c2 = st.columns(2)
picked = c1.selectbox("Measure", qg.MEASURE_CHOICES, key=MEASURE)
typed = c2.text_input("Or type a measure", key=TYPED, placeholder="P(rel=2)@5",
                      help="Any measure spec, e.g. nDCG(gain=exp)@20, P(rel=2)@5, or a "
                           "trec_eval name such as ndcg_cut_10; used instead of the pick")
c3, c4, c5 = st.columns([2, 2, 1])
a = c3.selectbox("Run A", names, key=RUN_A)
b = c4.selectbox("Run B", names, index=min(1, len(names) - 1), key=RUN_B,
                 help="Differences are B − A: negative where B does worse")
depth = c5.selectbox("Documents shown", (10, 20, 50, 100), index=1, key=DEPTH)

specs, errors = evaluation.parse_specs([typed.strip() or picked])
if errors or not specs:
    for message in errors:
        st.error(message, icon=":material/error:")
    st.stop()
measure = specs[0]

res = evaluation.evaluate_cached(state.get_dataset_key() or "", dataset, (measure,), **opts)
single = a == b  # one run: its queries from the lowest value up
diffs = query_differences(res, measure, a, b)
if single:
    diffs = diffs.sort_values(["a", "query"], kind="stable", ignore_index=True)
if diffs.empty:
    st.info(f"{a} and {b} have no query with a value of {measure} in common.",
            icon=":material/info:")
    st.stop()

# ----------------------------------------------------------------------------- differences
st.subheader(f"{a} on {measure}, query by query" if single else f"{b} − {a} on {measure}")
left, right = st.columns([3, 2])
with left:
    st.dataframe(
        diffs, hide_index=True, height=320,
        column_config={
            "query": st.column_config.Column("query"),
            "a": st.column_config.NumberColumn(a, format="%.4f", help=f"{measure} of {a}"),
            "b": st.column_config.NumberColumn(b, format="%.4f", help=f"{measure} of {b}"),
            "diff": st.column_config.NumberColumn("B − A", format="%+.4f",
                                                  help=f"{measure} of {b} minus {a}"),
        },
        column_order=["query", "a"] if single else None)
with right:
    n = len(diffs)
    if single:
        st.caption(f"{n:,} queries of {a} with a value, the lowest first. Pick two different "
                   "runs to see where they differ.")
    else:
        wins, losses = int((diffs["diff"] > 0).sum()), int((diffs["diff"] < 0).sum())
        st.metric(f"Queries where {b} wins / ties / loses", f"{wins} / {n - wins - losses} / "
                  f"{losses}", help="Per-query comparison of the measure, ties exact")
        st.caption(f"{n:,} queries that both runs have, sorted by B − A: the queries where B "
                   "loses most come first.")
    st.caption(f"**{measure}**: {widgets.md_escape(res.definition(measure))}. Evaluation: "
               f"{widgets.md_escape(res.options.describe())}.")

# ----------------------------------------------------------------------------- one query
shown_value = diffs["a"] if single else diffs["diff"]
labels = {q: f"{q}   ({v:.4f})" if single else f"{q}   ({v:+.4f})"
          for q, v in zip(diffs["query"], shown_value, strict=True)}
query = st.selectbox("Query", list(labels), key=QUERY, format_func=labels.__getitem__,
                     help="Ordered as the table above")
row = diffs.set_index("query").loc[query]
st.subheader(f"Query {query}")
m1, m2, m3, m4 = st.columns(4)
m1.metric(f"{measure} of {a}", f"{row['a']:.4f}")
if not single:
    m2.metric(f"{measure} of {b}", f"{row['b']:.4f}", delta=f"{row['diff']:+.4f}")
relevant, judged = qg.judged_counts(dataset.qrels, query, float(opts["rel_level"]))
m3.metric("Relevant in the qrels", f"{relevant:,}", help=f"Grade ≥ {opts['rel_level']:g}")
m4.metric("Judged documents", f"{judged:,}",
          help="Grade ≥ 0 (negative grades: pooled, not judged)")

shown = [a] if single else [a, b]
# the measures see no document below the evaluation's depth cut (-M): neither does the table
shown_depth = int(depth) if opts["depth"] is None else min(int(depth), int(opts["depth"]))
columns = st.columns(len(shown))
for col, name in zip(columns, shown, strict=True):
    other = None if single else dataset.run(b if name == a else a)
    table = qg.side_ranking(dataset.qrels, dataset.run(name), other, query, shown_depth,
                            cut=opts["depth"])
    with col:
        st.markdown(f"**{name}**: top {len(table)} of {query}")
        st.dataframe(qg.style_ranking(table, float(opts["rel_level"])), hide_index=True,
                     height=qg.table_height(len(table)),
                     column_config={c: st.column_config.Column(help=h)
                                    for c, h in qg.RANKING_HELP.items()})
        missed = missed_relevant(dataset.qrels, dataset.run(name), query,
                                 rel_level=float(opts["rel_level"]), depth=opts["depth"])
        if missed.empty:
            st.caption(f"{name} ranks every relevant document of {query}.")
        else:
            with st.expander(f"{len(missed):,} relevant document(s) {name} does not rank"):
                st.dataframe(missed, hide_index=True)
st.caption(f"Rows: green = relevant (grade ≥ {opts['rel_level']:g}, darker = higher grade), "
           "grey = not judged or pooled but unjudged (both count as non-relevant unless the "
           "judged-only option is on), white = judged non-relevant. 'other rank' is the "
           "document's rank in the other run."
           + ("" if opts["depth"] is None else
              f" Rankings are cut at the depth of the evaluation options (top {opts['depth']})."))
