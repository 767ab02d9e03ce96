"""Cached evaluation and the evaluation options shared by every page that evaluates.

:func:`evaluate_cached` is :func:`ireval_core.evaluate` cached by explicit arguments:
the dataset key (a digest of the loaded files, :func:`ireval_app.state.get_dataset_key`)
stands for the unhashable dataset. :func:`evaluation_options` draws the option widgets
(trec_eval ``-c``, ``-l``, ``-M``, the IDCG = 0 policy, judged-only) in the sidebar; their
values live in session state under the keys of :mod:`ireval_app.state` (kept with
``persist_state="session"`` while a page without these widgets is shown), so every page
sees the same choices.

Typical page::

    dataset = widgets.require_dataset()
    opts = evaluation.evaluation_options()
    res = evaluation.evaluate_cached(state.get_dataset_key() or "", dataset,
                                     ("nDCG@10", "AP"), **opts)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

import pandas as pd
import streamlit as st

from ireval_core.data import Qrels, Run
from ireval_core.dataset import Dataset
from ireval_core.errors import UnknownMeasureError
from ireval_core.evaluate import Evaluation, evaluate
from ireval_core.measures import parse_measure

from . import state

__all__ = ["IDCG_ZERO_LABELS", "TOY_QRELS", "TOY_RUN", "evaluate_cached", "evaluation_options",
           "ideal_pairs", "ideal_table", "mean_ci_tables", "parse_specs", "toy_example"]

IDCG_ZERO_LABELS = {
    "zero": "score 0 (trec_eval)",
    "drop": "drop the query (TF-Ranking)",
}
"""How the IDCG = 0 policies are shown."""


def evaluate_cached(dataset_key: str, dataset: Dataset, measures: tuple[str, ...],
                    complete: bool = False, depth: int | None = None,
                    rel_level: float = 1.0, idcg_zero: str = "zero",
                    judged_only: bool = False) -> Evaluation:
    """:func:`ireval_core.evaluate` of every run of ``dataset``, cached.

    Cached by ``dataset_key`` (use :func:`ireval_app.state.get_dataset_key`), the
    measures and the options; ``dataset`` itself is not hashed. Raises
    :class:`~ireval_core.errors.UnknownMeasureError` for an unknown measure (parse
    user text with :func:`ireval_core.measures.parse_measure` first to show it).
    """
    return _evaluate(dataset_key, dataset, tuple(measures), bool(complete),
                     None if depth is None else int(depth), float(rel_level),
                     str(idcg_zero), bool(judged_only))


@st.cache_resource(max_entries=64, show_spinner="Evaluating…")
def _evaluate(dataset_key: str, _dataset: Dataset, measures: tuple[str, ...], complete: bool,
              depth: int | None, rel_level: float, idcg_zero: str,
              judged_only: bool) -> Evaluation:
    # cache_resource: an Evaluation is never mutated, so it is shared, not copied.
    policy: Literal["zero", "drop"] = "drop" if idcg_zero == "drop" else "zero"
    return evaluate(_dataset.qrels, _dataset.runs, list(measures), complete=complete,
                    depth=depth, rel_level=rel_level, idcg_zero=policy,
                    judged_only=judged_only)


def evaluation_options(*, sidebar: bool = True) -> dict[str, Any]:
    """Draw the evaluation options; returns them as keyword arguments of :func:`evaluate_cached`.

    The widgets sit in an expander in the sidebar (or in the page with
    ``sidebar=False``); their values are kept in session state, shared by all pages.
    Returns ``{"complete", "depth", "rel_level", "idcg_zero", "judged_only"}``
    (``depth`` is ``None`` for the whole ranking).
    """
    state.init_eval_options()
    where = st.sidebar if sidebar else st.container()
    with where.expander("Evaluation options", icon=":material/tune:"):
        st.checkbox(
            "Every qrels query (-c)", key=state.EVAL_COMPLETE, persist_state="session",
            help="Average over every judged query; a query missing from a run scores 0 "
                 "(trec_eval -c). Off: average over the queries in both run and qrels.")
        st.number_input(
            "Relevance level (-l)", min_value=0.0, step=1.0, key=state.EVAL_REL_LEVEL,
            persist_state="session",
            help="A document is relevant for binary measures (P, R, AP, RR, bpref...) when "
                 "its grade >= this level. Graded measures (DCG, nDCG) use the grade.")
        st.number_input(
            "Depth cut (-M)", min_value=0, step=10, key=state.EVAL_DEPTH, persist_state="session",
            help="Keep only the top N documents of each ranking; 0 = the whole ranking.")
        st.radio(
            "nDCG of a query without relevant documents (IDCG = 0)",
            state.IDCG_ZERO_POLICIES, format_func=IDCG_ZERO_LABELS.__getitem__,
            key=state.EVAL_IDCG_ZERO, persist_state="session")
        st.checkbox(
            "Judged documents only", key=state.EVAL_JUDGED_ONLY, persist_state="session",
            help="Remove unjudged documents from the rankings before evaluating "
                 "(condensed lists). Off: unjudged documents count as non-relevant.")
    return state.get_eval_options()


# ----------------------------------------------------------------------------- page helpers


def parse_specs(texts: Iterable[str]) -> tuple[tuple[str, ...], list[str]]:
    """Canonical text of each measure spec in ``texts`` (in order, without repeats).

    Returns ``(valid specs, error messages)``; blank entries and commas separate specs
    in free text are the caller's business. Never raises.
    """
    valid: list[str] = []
    errors: list[str] = []
    for text in texts:
        if not text.strip():
            continue
        try:
            spec = str(parse_measure(text))
        except UnknownMeasureError as exc:
            errors.append(str(exc))
            continue
        if spec not in valid:
            valid.append(spec)
    return tuple(valid), errors


def mean_ci_tables(res: Evaluation, *, confidence_level: float = 0.95,
                   ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Aggregates and the bounds of their t confidence intervals (systems x measures).

    See :meth:`ireval_core.evaluate.Evaluation.intervals` (clipped to each measure's
    range; NaN where a mean interval does not apply).
    """
    low, high = res.intervals(confidence_level=confidence_level)
    return res.table(), low, high


def ideal_table(k: int, recall_k: int) -> tuple[str, ...]:
    """The measures of the nDCG-vs-DCG page: DCG@k, nDCG@k, nDCG(ideal=run)@k, R@recall_k."""
    return (f"DCG@{k}", f"nDCG@{k}", f"nDCG(ideal=run)@{k}", f"R@{recall_k}")


def ideal_pairs(res: Evaluation, k: int) -> pd.DataFrame:
    """Per-query ``system, query, x, y``: x = nDCG(ideal=run)@k, y = nDCG@k (qrels ideal)."""
    x_name, y_name = str(parse_measure(f"nDCG(ideal=run)@{k}")), str(parse_measure(f"nDCG@{k}"))
    tidy = res.tidy()
    wide = tidy[tidy["measure"].isin([x_name, y_name])].pivot_table(
        index=["system", "query"], columns="measure", values="value", sort=False)
    wide = wide.rename(columns={x_name: "x", y_name: "y"}).reset_index()
    return wide[["system", "query", "x", "y"]].dropna()


TOY_QRELS = {"q1": {"best1": 3, "best2": 3, "good": 2, "meh1": 1, "meh2": 1,
                    "junk1": 0, "junk2": 0}}
"""Toy judgments: three strong documents the toy run never retrieves."""
TOY_RUN = {"q1": {"meh1": 4.0, "meh2": 3.0, "junk1": 2.0, "junk2": 1.0}}
"""Toy run: only weak candidates, ranked as well as they can be."""


def toy_example(k: int = 4) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The worked example: the toy ranking with its grades, and the measures of it.

    Returns ``(ranking, summary)``: ``ranking`` has rank, document, grade, gain /
    log2(rank + 1) (a contribution to DCG, from ireval_core's DCG at each depth); ``summary``
    has one row per quantity (DCG, IDCG from the qrels, IDCG from the run, both nDCGs),
    all from :func:`ireval_core.evaluate` on in-memory data.
    """
    qrels = Qrels.from_dict(TOY_QRELS, source="toy qrels")
    run = Run.from_dict(TOY_RUN, name="toy run")
    docs = sorted(TOY_RUN["q1"], key=lambda d: -TOY_RUN["q1"][d])
    grades = TOY_QRELS["q1"]
    n = min(k, len(docs))
    cum = evaluate(qrels, run, [f"DCG@{i}" for i in range(1, n + 1)])
    dcg_at = [cum.mean("toy run", f"DCG@{i}") for i in range(1, n + 1)]
    ranking = pd.DataFrame({
        "rank": range(1, n + 1),
        "document": docs[:n],
        "grade": [grades.get(d, 0) for d in docs[:n]],
        "DCG contribution": [b - a for a, b in zip([0.0, *dcg_at[:-1]], dcg_at, strict=True)],
        "DCG@rank": dcg_at,
    })
    # the ideal rankings, scored by the same DCG: all judged documents vs the candidates only
    ideal_q = Run.from_dict({"q1": {d: float(g) for d, g in grades.items()}}, name="ideal")
    ideal_r = Run.from_dict({"q1": {d: float(grades.get(d, 0)) for d in docs}}, name="ideal")
    res = evaluate(qrels, run, [f"DCG@{k}", f"nDCG@{k}", f"nDCG(ideal=run)@{k}"])
    idcg_q = evaluate(qrels, ideal_q, [f"DCG@{k}"]).mean("ideal", f"DCG@{k}")
    idcg_r = evaluate(qrels, ideal_r, [f"DCG@{k}"]).mean("ideal", f"DCG@{k}")
    order_q = ", ".join(str(g) for g in sorted(grades.values(), reverse=True)[:k])
    order_r = ", ".join(str(g) for g in sorted((grades.get(d, 0) for d in docs),
                                                reverse=True)[:k])
    summary = pd.DataFrame({
        "quantity": [f"DCG@{k} of the run", f"IDCG@{k}, ideal from the qrels",
                     f"IDCG@{k}, ideal from the run", f"nDCG@{k} (qrels ideal)",
                     f"nDCG(ideal=run)@{k}"],
        "grades used": [", ".join(str(g) for g in ranking["grade"]), order_q, order_r,
                        "DCG / IDCG (qrels)", "DCG / IDCG (run)"],
        "value": [res.mean("toy run", f"DCG@{k}"), idcg_q, idcg_r,
                  res.mean("toy run", f"nDCG@{k}"),
                  res.mean("toy run", f"nDCG(ideal=run)@{k}")],
    })
    return ranking, summary
