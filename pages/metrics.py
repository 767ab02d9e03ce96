"""Metrics page: the chosen measures for every run, with confidence intervals and definitions."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from ireval_app import evaluation, state, widgets
from ireval_core import charts

DEFAULT_MEASURES = ["nDCG@10", "AP", "P@10", "R@100", "RR", "bpref", "Judged@10"]
MORE_MEASURES = ["nDCG@20", "nDCG", "DCG@10", "nDCG(ideal=run)@10", "P@5", "P@20", "R@10",
                 "R@1000", "RPrec", "ERR@10", "Success@1", "Success@10", "AP@100", "11pt"]
MEASURES_KEY = state.METRICS_MEASURES
EXTRA_KEY = state.METRICS_EXTRA
DIST_KEY = state.METRICS_DISTRIBUTION


def _cell(mean: float, low: float, high: float) -> str:
    if pd.isna(mean):
        return "–"
    if pd.isna(low):
        return f"{mean:.4f}"
    return f"{mean:.4f} [{low:.2f}, {high:.2f}]"


def _bold_best(mean: pd.DataFrame) -> Callable[[pd.DataFrame], pd.DataFrame]:
    """Styler function marking the highest mean of each measure."""
    def style(frame: pd.DataFrame) -> pd.DataFrame:
        best = mean.eq(mean.max(axis=0), axis=1) & mean.notna()
        return best.map(lambda b: "font-weight: 700; background-color: #e8f1fb" if b else "")
    return style


st.title("Metrics")
dataset = widgets.require_dataset()
options = evaluation.evaluation_options()
if not dataset.runs:
    st.info("No runs loaded yet: add run files on the Data page.", icon=":material/info:")
    st.page_link(widgets.DATA_PAGE, label="Go to the Data page", icon=":material/database:")
    st.stop()

pick, extra = st.columns([3, 2])
chosen = pick.multiselect("Measures", DEFAULT_MEASURES + MORE_MEASURES,
                          default=DEFAULT_MEASURES, key=MEASURES_KEY)
typed = extra.text_input(
    "More measures (separate with ;)", key=EXTRA_KEY,
    placeholder="nDCG(gain=exp)@20; P(rel=2)@5",
    help="Any measure spec: a name, parameters in parentheses and an @k cutoff, e.g. "
         "nDCG(gain=exp)@20, P(rel=2)@5, DCG(discount=jk)@6, or trec_eval names "
         "such as ndcg_cut_10 or recall_100.")
measures, errors = evaluation.parse_specs([*chosen, *typed.split(";")])
for message in errors:
    st.error(message, icon=":material/error:")
if not measures:
    st.info("Choose at least one measure.", icon=":material/info:")
    st.stop()

res = evaluation.evaluate_cached(state.get_dataset_key() or "", dataset, measures, **options)
mean, low, high = evaluation.mean_ci_tables(res)

# ----------------------------------------------------------------------------- table
st.subheader("Mean per run")
cells = pd.DataFrame({m: [_cell(mean.loc[s, m], low.loc[s, m], high.loc[s, m])
                          for s in mean.index] for m in mean.columns},
                     index=mean.index)
st.table(cells.style.apply(_bold_best(mean), axis=None))
st.caption("Each cell: the mean over queries to 4 decimals, then its 95% confidence interval "
           "[low, high] (Student t over the per-query values). Highlighted: the highest "
           "mean of each measure.")

with st.container(border=True):
    st.markdown("**What the numbers are**")
    st.markdown("\n".join(f"- **{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}"
                          for m in mean.columns))
    st.caption(f"Options: {widgets.md_escape(res.options.describe())}.")
    counts = []
    for system in mean.index:
        n = sorted({res.n_averaged[(system, m)] for m in mean.columns})
        counts.append(f"{widgets.md_escape(system)} {n[0]:,}" if len(n) == 1
                      else f"{widgets.md_escape(system)} {n[0]:,}–{n[-1]:,} (by measure)")
    st.caption("Queries averaged: " + ", ".join(counts) + ".")

# ----------------------------------------------------------------------------- charts
st.plotly_chart(charts.metric_bars(mean, low, high), config={"displayModeBar": False})
st.caption("Bars: means; error bars: 95% t-intervals over queries (definitions above).")

st.subheader("Per-query values")
names = list(mean.columns)
default = names.index("nDCG@10") if "nDCG@10" in names else 0
shown = st.selectbox("Measure", names, index=default, key=DIST_KEY)
tidy = res.tidy()
values = tidy[(tidy["measure"] == shown) & tidy["value"].notna()]
st.plotly_chart(charts.per_query_distribution(values, shown), config={"displayModeBar": False})
st.caption(f"One point per query; box: quartiles, dashed line: mean. {shown}: "
           f"{widgets.md_escape(res.definition(shown))}.")

# ----------------------------------------------------------------------------- downloads
aggregate = pd.DataFrame([
    {"system": s, "measure": m, "mean": mean.loc[s, m], "ci95_low": low.loc[s, m],
     "ci95_high": high.loc[s, m], "queries": res.n_averaged[(s, m)],
     "definition": res.definition(m), "options": res.options.describe()}
    for s in mean.index for m in mean.columns])
left, right = st.columns(2)
left.download_button("Per-query values (CSV)", tidy.to_csv(index=False),
                     file_name="ireval_per_query.csv", mime="text/csv",
                     icon=":material/download:")
right.download_button("Aggregate table (CSV)", aggregate.to_csv(index=False),
                      file_name="ireval_metrics.csv", mime="text/csv",
                      icon=":material/download:")
