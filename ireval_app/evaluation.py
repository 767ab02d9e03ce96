"""Cached evaluation shared by every page that evaluates.

:func:`evaluate_cached` is :func:`ireval_core.evaluate` cached by explicit arguments:
the dataset key (a digest of the loaded files, :func:`ireval_app.state.get_dataset_key`)
stands for the unhashable dataset, and the frozen
:class:`~ireval_core.options.EvalOptions` is part of the key. The result is shared
between sessions: its arrays are read-only (see :func:`ireval_core.evaluate`).

Typical page::

    dataset = widgets.require_dataset()
    options = state.get_options()
    res = evaluation.evaluate_cached(state.get_dataset_key() or "", dataset,
                                     ("nDCG@10", "AP"), options)
"""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
import streamlit as st

from ireval_core.data import Qrels, Run
from ireval_core.dataset import Dataset
from ireval_core.errors import UnknownMeasureError
from ireval_core.evaluate import Evaluation, evaluate
from ireval_core.measures import parse_measure
from ireval_core.options import EvalOptions

__all__ = ["TOY_QRELS", "TOY_RUN", "evaluate_cached", "ideal_pairs", "ideal_table",
           "parse_specs", "toy_example"]


@st.cache_resource(max_entries=64, show_spinner="Evaluating…")
def evaluate_cached(dataset_key: str, _dataset: Dataset, measures: tuple[str, ...],
                    options: EvalOptions) -> Evaluation:
    """:func:`ireval_core.evaluate` of every run of the dataset, cached.

    Cached by ``dataset_key`` (use :func:`ireval_app.state.get_dataset_key`), the
    measures and the options; the dataset itself is not hashed. Raises
    :class:`~ireval_core.errors.UnknownMeasureError` for an unknown measure (parse
    user text with :func:`parse_specs` first to show it).
    """
    return evaluate(_dataset.qrels, _dataset.runs, list(measures), options=options)


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
