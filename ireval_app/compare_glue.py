"""Cached significance comparisons for the Compare page.

:func:`compare_cached` runs the core comparisons on a cached
:class:`~ireval_core.evaluate.Evaluation`, keyed by explicit arguments only (the
dataset key stands for the dataset; the frozen options are part of the key). The
tables, verdicts and planning numbers are :mod:`ireval_core.compare`'s.
:func:`deciding` gathers the evidence a decision is argued on (judgment debt, margin
tests, ranking, risk) for one pair and measure, and :func:`record_decision` keeps a
decision with that evidence in the workspace. Nothing here reads widget values or
session state: the page passes what was chosen (:class:`Settings`).
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.io.formats.style import Styler

from ireval_core.compare import compare_evaluation, write_comparison
from ireval_core.dataset import Dataset
from ireval_core.decisions import (
    Evidence,
    HolesResult,
    MarginResult,
    MeasureEvidence,
    PairEvidence,
    decision_evidence,
    equivalence_test,
)
from ireval_core.evaluate import Evaluation
from ireval_core.meeting import DecisionSettings, decision_note
from ireval_core.options import EvalOptions
from ireval_core.report import SignificanceTable
from ireval_core.stats import PairComparison
from ireval_core.workspace import Note, Target

from . import workspace_glue
from .shared_cache import shared
from .text import md_frame

__all__ = ["COLUMN_HELP", "MEASURE_CHOICES", "Deciding", "Settings", "compare_cached",
           "deciding", "download", "evidence_cached", "evidence_sentences", "holes_table",
           "margin_of", "margin_table", "pair_labels", "record_decision", "report_styler"]

MEASURE_CHOICES = ("nDCG@10", "AP", "P@10", "RR", "R@100", "nDCG", "bpref", "P@5")
"""Measures offered first; any other measure text can be typed in."""

COLUMN_HELP = {
    "system_a": "System A of the pair (the baseline when comparing against one)",
    "system_b": "System B of the pair; differences are B − A",
    "mean_a": "Mean of system A over the compared queries (those all selected runs share)",
    "mean_b": "Mean of system B over the compared queries (those all selected runs share)",
    "mean_diff": "Mean per-query difference B − A (positive: B is better)",
    "95% CI": "95% confidence interval of B − A, clipped to the measure's range: Student t "
              "for every test except bootstrap, whose rows carry the bootstrap percentile "
              "interval",
    "p": "p-value of the test for the chosen alternative (Monte Carlo p = (b+1)/(B+1))",
    "corrected p": "p-value adjusted over the pairs of one measure and one test",
    "effect size": "Cohen's d_z = mean(B − A) / sd(B − A) over queries",
    "W/T/L": "Queries where B wins / ties / loses against A",
    "n": "Queries compared: those every selected system has a value for",
}


@dataclass(frozen=True)
class Settings:
    """The test settings chosen on the Compare page, shared by its every table, verdict,
    decision and plan: the runs compared (``baseline`` the system A of every pair, or
    ``None`` for all pairs), the tests (the first one the decisions and per-segment
    tests use), the alternative, the correction, the Monte Carlo resamples and seed, and
    the significance level."""

    systems: tuple[str, ...]
    baseline: str | None
    tests: tuple[str, ...]
    alternative: str
    correction: str
    n_resamples: int
    seed: int
    alpha: float


@shared(session_entries=8)
def compare_cached(dataset_key: str, options: EvalOptions, _res: Evaluation,
                   measures: tuple[str, ...], systems: tuple[str, ...], baseline: str | None,
                   tests: tuple[str, ...], alternative: str, correction: str,
                   n_resamples: int, seed: int) -> tuple[PairComparison, ...]:
    """:func:`compare_evaluation`, cached; ``options`` are those of ``_res``."""
    return tuple(compare_evaluation(
        _res, list(measures), systems=list(systems), baseline=baseline, tests=tests,
        alternative=alternative, correction=correction, n_resamples=n_resamples, seed=seed))


def report_styler(table: SignificanceTable) -> Styler:
    """The plain-text table with the best mean of each measure in bold.

    For ``st.table``, which renders labels and cells as Markdown: every name escaped.
    """
    frame = md_frame(table.to_frame())
    best = pd.DataFrame({m: [table.is_best(s, m) for s in table.systems]
                         for m in table.measures}, index=frame.index)
    best.columns = frame.columns
    return frame.style.apply(
        lambda _: best.map(lambda b: "font-weight: 700" if b else ""), axis=None)


def download(records: Sequence[PairComparison], fmt: str) -> str:
    """The records as CSV or JSON text (:func:`ireval_core.compare.write_comparison`)."""
    buf = io.StringIO()
    write_comparison(records, fmt, buf)
    return buf.getvalue()


def pair_labels(pairs: Iterable[tuple[str, str, str]]) -> dict[str, tuple[str, str, str]]:
    """Each ``(run A, run B, measure)`` by the label the page shows and the link carries,
    ``"B − A on measure"``, in order, without repeats. Two pairs whose names would give
    one label (a run named with " − ") get ``" (2)"``, ``" (3)"``, ...: a label names
    one pair.

    >>> pair_labels([("bm25", "dense", "AP"), ("bm25", "dense", "AP"), ("x − y", "z", "AP"),
    ...              ("y", "z − x", "AP")])
    {'dense − bm25 on AP': ('bm25', 'dense', 'AP'), 'z − x − y on AP': ('x − y', 'z', 'AP'), \
'z − x − y on AP (2)': ('y', 'z − x', 'AP')}
    """
    out: dict[str, tuple[str, str, str]] = {}
    for pair in dict.fromkeys(pairs):
        a, b, m = pair
        label = base = f"{b} − {a} on {m}"
        n = 1
        while label in out:
            n += 1
            label = f"{base} ({n})"
        out[label] = pair
    return out


def margin_of(value: float, unit: str) -> float | str:
    """The margin :func:`ireval_core.decisions.decision_evidence` takes: measure units
    as a number, a percentage of A's mean as ``"P%"``."""
    return f"{value:g}%" if unit.startswith("%") else float(value)


@shared(session_entries=4)
def evidence_cached(dataset_key: str, options: EvalOptions, _dataset: Dataset,
                    systems: tuple[str, ...], baseline: str, measure: str,
                    margin: float | str | None, alpha: float, test: str, risk_alpha: float,
                    loss_delta: float, n_resamples: int, seed: int) -> Evidence:
    """:func:`ireval_core.decisions.decision_evidence` of ``systems`` against
    ``baseline`` on one measure, cached; with rank confidence when 3+ systems are
    compared. ``options`` are the evaluation options of the dataset's runs."""
    runs = [r for s in systems for r in _dataset.runs if r.name == s]
    return decision_evidence(_dataset.qrels, runs, [measure], options=options,
                             baseline=baseline, margin=margin, alpha=alpha, test=test,
                             risk_alpha=risk_alpha, loss_delta=loss_delta,
                             rank_confidence=len(runs) >= 3, n_resamples=n_resamples,
                             rng=seed, joins=_dataset.joins)


def evidence_sentences(pair: PairEvidence, ranking: MeasureEvidence | None,
                       equivalence: MarginResult | None) -> list[str]:
    """The evidence in words, as a decision note keeps it."""
    a, b, m = pair.system_a, pair.system_b, pair.measure
    out = [f"Judgment debt: {pair.holes.text}"]
    if pair.noninferiority is not None:
        out.append(f"Not worse: {pair.noninferiority.sentence(a, b, m)}")
    if equivalence is not None:
        out.append(f"Equivalent: {equivalence.sentence(a, b, m)}")
    if ranking is not None and ranking.ranking is not None:
        out += [f"Ranking: {t}" for t in ranking.ranking.sentences()]
        if ranking.anova is not None:
            out.append(f"Two-way ANOVA: {ranking.anova.sentence()}")
    out.append(f"Who gets hurt: {pair.risk.sentence(a, b, m)}")
    return out


def holes_table(holes: HolesResult) -> pd.DataFrame:
    """One row per system of the pair: its unjudged documents, its mean as judged and
    its bounds (holes non-relevant, holes relevant) and, where the qrels mark pooled but
    unjudged documents, the inferred estimate (a column named ``infAP``/``infNDCG@k``)."""
    table = pd.DataFrame({
        "system": [holes.system_a, holes.system_b],
        "unjudged": [holes.holes_a, holes.holes_b],
        "as judged": [holes.mean_a, holes.mean_b],
        "holes non-relevant": [holes.bounds_a[0], holes.bounds_b[0]],
        "holes relevant": [holes.bounds_a[1], holes.bounds_b[1]]})
    if holes.inferred is not None:
        table[holes.inferred_name] = [holes.inferred[holes.system_a],
                                      holes.inferred[holes.system_b]]
    return table


def margin_table(*results: MarginResult | None) -> pd.DataFrame:
    """The margin tests side by side: test, method, margin, interval, p, verdict."""
    rows = [r.as_dict() | {"level": f"{1 - 2 * r.alpha:.0%}"} for r in results if r is not None]
    return pd.DataFrame({
        "test": [("non-inferiority" if r["test"] == "noninferiority" else "equivalence (TOST)")
                 for r in rows],
        "method": [r["method"] for r in rows],
        "margin": [r["margin"] for r in rows],
        "B − A": [r["mean_diff"] for r in rows],
        "interval": [f"{r['level']} [{r['interval'][0]:+.4f}, {r['interval'][1]:+.4f}]"
                     for r in rows],
        "p": [r["p"] for r in rows],
        "verdict": [r["verdict"] for r in rows]})


@dataclass(frozen=True)
class Deciding:
    """The evidence a decision on one pair (``pair.system_b`` against the baseline
    ``pair.system_a``) and one measure is argued on: the pair's judgment debt, margin tests
    and risk, the ranking of every compared run (``None`` with fewer than 3), the
    equivalence test (``None`` when there are too few queries for the margin tests), the
    margin (measure units, or ``"P%"`` of A's mean) and why it could not be applied
    (``margin_error``, e.g. a percentage of a baseline mean of 0; the evidence then has no
    margin), with the risk settings."""

    pair: PairEvidence
    ranking: MeasureEvidence | None
    equivalence: MarginResult | None
    margin: float | str
    margin_error: str | None
    loss_delta: float
    risk_alpha: float

    def sentences(self) -> list[str]:
        """The evidence in words (:func:`evidence_sentences`)."""
        return evidence_sentences(self.pair, self.ranking, self.equivalence)


def deciding(dataset_key: str, options: EvalOptions, dataset: Dataset, settings: Settings,
             pair: tuple[str, str, str], scores: tuple[np.ndarray, np.ndarray], *,
             margin: float | str, loss_delta: float, risk_alpha: float) -> Deciding:
    """The :class:`Deciding` evidence of ``pair`` = ``(a, b, measure)`` (``a`` the
    baseline) over the runs of ``settings``; ``scores`` are the per-query values of ``a``
    and ``b`` on the compared queries (for the equivalence test). A margin that cannot be
    applied (a percentage of a baseline mean of 0) is left out and said why."""
    a, b, measure = pair

    def evidence(applied: float | str | None) -> Evidence:
        return evidence_cached(
            dataset_key, options, dataset, settings.systems, a, measure, applied,
            settings.alpha, settings.tests[0], risk_alpha, loss_delta, settings.n_resamples,
            settings.seed)

    margin_error = None
    try:
        found = evidence(margin)
    except ValueError as exc:  # a percentage of a baseline mean of 0
        margin_error = str(exc)
        found = evidence(None)
    pe = found.pair(a, b, measure)
    me = found.measure(measure) if len(settings.systems) >= 3 else None
    equivalence = (equivalence_test(scores[0], scores[1], margin=margin, alpha=settings.alpha)
                   if pe.noninferiority is not None else None)
    return Deciding(pe, me, equivalence, margin, margin_error, loss_delta, risk_alpha)


def record_decision(dataset_id: str, target: Target, decision: str, *, author: str,
                    evidence: Deciding, settings: Settings,
                    link: str) -> Note | workspace_glue.WorkspaceProblem:
    """Keep ``decision`` on ``target`` of the saved dataset ``dataset_id`` as a decision
    note (:func:`ireval_core.meeting.decision_note`): the decision, the evidence sentences,
    the settings they were computed with and ``link``, the view they were shown on (the
    meeting report recomputes the evidence from them). A workspace that cannot be used is
    a :class:`~ireval_app.workspace_glue.WorkspaceProblem`; a text the workspace refuses
    raises (``IrevalError``, ``ValueError``), as does a role that does not allow it. The
    decision is recorded by :func:`~ireval_app.workspace_glue.actor` (``author``: the typed
    name of a person not signed in)."""
    text = decision_note(
        decision, evidence.sentences(),
        DecisionSettings(settings.systems,
                         None if evidence.pair.noninferiority is None else evidence.margin,
                         settings.alpha, settings.tests[0], evidence.loss_delta,
                         evidence.risk_alpha, settings.n_resamples, settings.seed),
        link)
    who = workspace_glue.actor()
    return workspace_glue.with_workspace(lambda ws: ws.add_note(
        dataset_id, target, text, author=None if who.signed_in else author, kind="decision",
        actor=who))
