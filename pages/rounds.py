"""Qrels rounds page: compare two rounds of judgments and plan the next one."""

from __future__ import annotations

import math

import pandas as pd
import streamlit as st

from ireval_app import evaluation, files_widgets, fit, frame, state, views, widgets
from ireval_app import rounds_glue as rg
from ireval_app.keys import rounds as keys
from ireval_core import charts
from ireval_core.data import Qrels, Run
from ireval_core.options import EvalOptions
from ireval_core.rounds import UNJUDGED_LABEL, RoundsDiff


def _what_changed(diff: RoundsDiff) -> None:
    """What the judges added, removed and regraded between the two rounds, and how much
    they agree."""
    st.subheader("What changed")
    c = st.columns(4)
    c[0].metric("Judgments in both", f"{diff.n_both:,}")
    c[1].metric("Added (new only)", f"{diff.n_only_new:,}")
    c[2].metric("Removed (old only)", f"{diff.n_only_old:,}")
    c[3].metric("Regraded", f"{diff.n_changed:,}",
                help="Judgments in both rounds whose grade differs")
    c = st.columns(4)
    c[0].metric("Queries in both", f"{len(diff.queries_both):,}")
    c[1].metric("Queries new only", f"{len(diff.queries_only_new):,}")
    c[2].metric("Queries old only", f"{len(diff.queries_only_old):,}")
    c[3].metric("Judged in both (kappa)", f"{diff.n_kappa:,}",
                help="Documents with a grade ≥ 0 in both rounds: the kappas use these")

    st.subheader("Agreement")
    k1, k2 = st.columns(2)
    k1.metric("Cohen's kappa", "n/a" if math.isnan(diff.kappa) else f"{diff.kappa:.4f}")
    k1.caption("κ = (p_o − p_e) / (1 − p_e) over the documents judged (grade ≥ 0) in both "
               "rounds: p_o is the share given the same grade, p_e the share expected by "
               "chance from each round's grade distribution. 1 = perfect agreement, "
               "0 = chance, < 0 = worse than chance.")
    k2.metric("Linearly weighted kappa",
              "n/a" if math.isnan(diff.weighted_kappa)
              else f"{diff.weighted_kappa:.4f}")
    k2.caption("κ_w = 1 − Σ w·observed / Σ w·expected with w = |i − j| between the positions "
               "of the two grades on the scale: a change 0 → 3 costs three times a change "
               "0 → 1 (sklearn `weights=\"linear\"`).")

    st.subheader("Grade transitions")
    if diff.n_both:
        left, right = st.columns([3, 2])
        left.plotly_chart(charts.transition_heatmap(diff.transitions))
        right.caption(f"Judgments in both rounds, old grade (rows) × new grade (columns); "
                      f"negative grades are shown as “{UNJUDGED_LABEL}”. The outlined "
                      "diagonal is unchanged; every other cell is a regrading, e.g. below "
                      "the diagonal the new round graded lower.")
        with st.expander("Transition table"):
            st.dataframe(diff.transitions)
    else:
        st.info("The two rounds share no judgment.", icon=":material/info:")

    st.subheader("Per query")
    st.caption(f"judged = grade ≥ 0; relevant = grade ≥ {diff.rel_level:g} (the relevance "
               "level of the evaluation options); added / removed / changed count judgments.")
    st.dataframe(diff.per_query, hide_index=True,
                 column_config={"query": st.column_config.TextColumn(pinned=True)})
    if diff.n_changed:
        with st.expander(f"The {diff.n_changed:,} regraded judgments"):
            st.dataframe(diff.changes, hide_index=True)


def _stability(key: str, old: Qrels, new: Qrels, runs: tuple[Run, ...],
               options: EvalOptions) -> None:
    """Ranking stability: do the runs keep their order under the new round's judgments?"""
    st.subheader("Ranking stability")
    if not runs:
        st.info("Add run files on the Data page to score them under both rounds.",
                icon=":material/info:")
    else:
        views.bind_view(keys.MEASURE, rg.MEASURE_CHOICES[0])
        measure_text = st.columns(3)[0].selectbox(
            "Measure", rg.MEASURE_CHOICES, key=keys.MEASURE,
            accept_new_options=True, help="Pick or type a measure (e.g. `P(rel=2)@5`)")
        specs, errors = evaluation.parse_specs([measure_text or ""])
        for message in errors:
            st.error(message, icon=":material/error:")
        if specs:
            try:
                stab = rg.stability_cached(key, old, new, runs, specs[0], options)
            except ValueError as exc:
                st.error(widgets.md_escape(f"Cannot compute {specs[0]}: {exc}"),
                         icon=":material/error:")
            else:
                s1, s2 = st.columns([1, 3])
                s1.metric("Kendall's τ", "n/a" if math.isnan(stab.tau) else f"{stab.tau:.4f}",
                          help="(P − Q) / (P + Q) over pairs of runs: P ordered the same way "
                               "under both rounds, Q reversed. 1 = same order.")
                s2.caption(f"**{widgets.md_escape(stab.measure)}**: "
                           f"{widgets.md_escape(stab.definition)}. Mean of each run under "
                           "each round; delta = new − old; rank 1 = best; rank change > 0 = "
                           "moved up in the new round.")
                s2.dataframe(stab.table, hide_index=True, column_config={
                    c: st.column_config.NumberColumn(format="%.4f")
                    for c in ("mean_old", "mean_new", "delta")})


def _to_label(pending: pd.DataFrame, k: int) -> None:
    """The (query, document) pairs to send to the judges next, with their download."""
    st.subheader("To label next")
    n_pending = len(pending)
    m1, m2 = st.columns(2)
    m1.metric(f"Distinct unjudged pairs in the top {k}", f"{n_pending:,}")
    m2.metric("Queries concerned", f"{pending['query'].nunique():,}")
    st.caption("Every (query, document) in some run's top k that has no grade ≥ 0, once, with how "
               "many runs rank it there and its best rank: send this list to the judges.")
    st.dataframe(pending.head(1000), hide_index=True,
                 column_order=[c for c in pending.columns if c != "grade"], column_config={
                     "status": st.column_config.TextColumn(
                         help=f"unjudged: not in the qrels; {UNJUDGED_LABEL}: in the pool with a "
                              "negative grade"),
                     "runs": st.column_config.NumberColumn(
                         help="How many runs rank it in their top k"),
                 })
    if n_pending > 1000:
        st.caption(f"The first 1,000 of {n_pending:,} shown; the download holds them all.")
    st.download_button("Download the to-label list (CSV)", rg.to_label_csv(pending),
                       f"to_label_top{k}.csv", "text/csv", icon=":material/download:",
                       disabled=not n_pending)


with frame.page("rounds"):
    dataset = widgets.require_dataset()
    widgets.page_header("Qrels rounds")
    options = state.get_options()
    dataset_key = state.get_dataset_key() or ""
    current = dataset.qrels
    runs = tuple(dataset.runs)

    st.markdown(
        "Judges label documents in rounds (e.g. monthly). The qrels loaded on the Data page is "
        "the **current round**. Upload the qrels of **another round** to see what the judges "
        "added, removed and regraded, how much they agree with the earlier round (Cohen's "
        "kappa), and whether the runs keep their order under the new judgments (Kendall's τ). "
        "Below, the coverage of the current round shows how much of each run's top k is judged, "
        "and the documents to send to the judges next.")

    # ------------------------------------------------------------------------- another round
    st.header("Compare with another round")
    upload = st.file_uploader(
        "Qrels of another round", type=None, key=keys.UPLOADER,
        help="Same formats as the qrels on the Data page. Compared judgment by judgment "
             "(query, document) with the current round.")
    other = None
    if upload is not None:
        loaded = rg.other_round(upload.name, upload.getvalue(), options)
        if loaded.error is not None:
            files_widgets.show_format_error(loaded.error, comments=loaded.comments)
        else:
            other = loaded

    if other is None or other.qrels is None:
        st.caption("No other round uploaded: only the coverage of the current round is shown.")
    else:
        uploaded_is_new = st.toggle(
            "The uploaded round is the newer one", key=keys.SWAP,
            help="Off: the uploaded file is the earlier round and the current round (Data page) "
                 "the newer one. On: the other way round.")
        sides = [(current, "current round, Data page"), (other.qrels, "uploaded")]
        (old, old_what), (new, new_what) = sides if uploaded_is_new else sides[::-1]
        st.markdown(f"**Old:** {widgets.md_escape(old.source)} ({old_what}) → **New:** "
                    f"{widgets.md_escape(new.source)} ({new_what})")
        key = f"{dataset_key}|{other.digest}|{uploaded_is_new}"
        diff = rg.compare_cached(key, old, new, options)

        _what_changed(diff)

        _stability(key, old, new, runs, options)

    # ------------------------------------------------------------------------- next round
    st.header("Coverage of the current round")
    if not runs:
        st.info("Add run files on the Data page to see their coverage and what to label next.",
                icon=":material/info:")
        st.stop()
    views.bind_view(keys.K, 10)
    k = int(st.columns(4)[0].number_input("Depth k", min_value=1, max_value=keys.K_MAX, step=1,
                            key=keys.K,
                            help="Look at each run's top k documents (queries in the qrels)"))
    cov = rg.coverage_cached(dataset_key, current, runs, k, dataset)
    pending = rg.to_label_cached(dataset_key, current, runs, k)
    st.caption(f"Judged@{k}: judged documents (grade ≥ 0) in the top {k} / min({k}, retrieved), "
               f"mean over the queries the run shares with the qrels. Unjudged: not in the qrels "
               f"or graded negative ({UNJUDGED_LABEL}); they count as non-relevant.")
    fit.dataframe(cov, column_config={
        f"Judged@{k}": st.column_config.NumberColumn(format="percent")})

    _to_label(pending, k)
