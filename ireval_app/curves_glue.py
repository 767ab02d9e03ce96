"""Cached curve data per run for the Curves page, keyed by explicit arguments only.

One :class:`RunCurves` per (dataset key, run name, relevance threshold, depth,
averaging rule): the run is joined with the qrels once
(:func:`ireval_core.data.join`) and every curve of :mod:`ireval_core.curves` is
computed from that join. Nothing here reads widget values or session state.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import streamlit as st

from ireval_core.curves import interpolated_pr, pooled_auc, pooled_roc, pr_points, prevalence
from ireval_core.data import join
from ireval_core.dataset import Dataset

__all__ = ["PR_DEFINITION", "ROC_DEFINITION", "RunCurves", "curves_for", "pooled_prevalence",
           "run_curves"]

PR_DEFINITION = (
    "Precision and recall over the whole ranking; unjudged documents count as non-relevant "
    "and recall divides by R, the relevant documents (grade ≥ {rel:g}) in the qrels. "
    "Interpolated precision at recall r = the best precision at any recall ≥ r, then "
    "averaged over the evaluated queries (trec_eval `iprec_at_recall`; a query with R = 0 "
    "scores 0).")
"""Definition shown beside the PR charts; format with ``rel``."""

ROC_DEFINITION = (
    "Only judged retrieved documents enter the ROC: relevant (grade ≥ {rel:g}) against judged "
    "non-relevant; unjudged documents are left out. The documents of all queries are pooled "
    "and ranked by score, so the curve and its AUC compare scores across queries. "
    "AUC = P(a relevant document outscores a judged non-relevant one), ties count ½. "
    "Long curves are drawn within 1/{resolution} of every exact point; the AUC uses them all.")
"""Definition shown beside the ROC chart; format with ``rel`` and ``resolution``."""


@dataclass(frozen=True, eq=False)
class RunCurves:
    """Every curve of one run under one setting.

    Attributes
    ----------
    run:
        The run name.
    interpolated:
        Mean interpolated precision at recall 0.0, 0.1, ..., 1.0 (``recall``, ``precision``).
    points:
        Precision and recall after every rank, per query (``query``, ``rank``,
        ``recall``, ``precision``); queries with R = 0 are absent.
    roc:
        Pooled ROC points (``fpr``, ``tpr``, ``threshold``); empty when undefined.
    auc:
        Area under :attr:`roc` (NaN when undefined).
    prevalence:
        Relevant / judged among the retrieved documents (the PR chance line).
    n_queries:
        Queries evaluated (the mean of :attr:`interpolated` is over them).
    n_judged, n_relevant:
        Judged (grade >= 0) and relevant retrieved documents, over all queries.
    """

    run: str
    interpolated: pd.DataFrame
    points: pd.DataFrame
    roc: pd.DataFrame
    auc: float
    prevalence: float
    n_queries: int
    n_judged: int
    n_relevant: int

    def query_points(self, query: str) -> pd.DataFrame:
        """PR points of one query in rank order (empty when the query has no relevant docs)."""
        return self.points[self.points["query"] == query].reset_index(drop=True)


@st.cache_resource(max_entries=64, show_spinner=False)
def run_curves(dataset_key: str, _dataset: Dataset, run_name: str, rel_level: float,
               depth: int | None, complete: bool) -> RunCurves:
    """Curves of one run; cached by every argument except ``_dataset`` (its key stands in)."""
    r = join(_dataset.qrels, _dataset.run(run_name), depth=depth, complete=complete)
    return RunCurves(
        run=run_name,
        interpolated=interpolated_pr(r, rel_level=rel_level),
        points=pr_points(r, rel_level=rel_level),
        roc=pooled_roc(r, rel_level=rel_level),
        auc=pooled_auc(r, rel_level=rel_level),
        prevalence=prevalence(r, rel_level),
        n_queries=r.n_queries,
        n_judged=int(np.count_nonzero(r.grade >= 0)),
        n_relevant=int(np.count_nonzero(r.grade >= rel_level)),
    )


def curves_for(dataset_key: str, dataset: Dataset, *, rel_level: float = 1.0,
               depth: int | None = None, complete: bool = False) -> dict[str, RunCurves]:
    """:func:`run_curves` of every run of ``dataset``, in run order."""
    return {name: run_curves(dataset_key, dataset, name, float(rel_level), depth, bool(complete))
            for name in dataset.run_names}


def pooled_prevalence(curves: dict[str, RunCurves]) -> float:
    """Relevant / judged over the retrieved documents of all runs together (NaN if none)."""
    judged = sum(c.n_judged for c in curves.values())
    return sum(c.n_relevant for c in curves.values()) / judged if judged else float("nan")
