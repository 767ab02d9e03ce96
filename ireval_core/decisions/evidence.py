"""All the decision evidence for every compared pair and measure, at once.

:func:`decision_evidence` evaluates the runs (or takes an evaluation), pairs them as
:func:`ireval_core.compare.compare_evaluation` does (every pair, or each run against a
baseline; on the queries every compared run has a value for) and gathers, per pair and
measure, the judgment debt (:mod:`.holes`), who gets hurt (:mod:`.risk`) and, with a
margin, non-inferiority (:mod:`.margin`); per measure, with ``rank_confidence``, the
rank probabilities, the ANOVA and the mixed model (:mod:`.ranking`).

The bootstrap resamples of the queries are drawn once per measure for all systems:
the rank probabilities and every pair's bootstrap non-inferiority test read the same
resampled means (a pair's resampled mean difference is the difference of the two
systems' resampled means). This is what ``python -m ireval_core compare --format json``
writes beside each comparison record (:meth:`Evidence.blocks`).

>>> from ireval_core import Qrels, Run
>>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(8)})
>>> runs = [Run.from_dict({f"q{i}": {"b": 2.0, "a": 1.0} for i in range(8)}, name="old"),
...         Run.from_dict({f"q{i}": {"a": 2.0, "x": 1.0} for i in range(8)}, name="new")]
>>> ev = decision_evidence(qrels, runs, ["RR"], margin="5%", rank_confidence=True)
>>> p = ev.pair("old", "new", "RR")
>>> p.holes.verdict, round(p.risk.urisk, 2), p.noninferiority.conclusive
('holds', 0.5, True)
>>> ev.measure("RR").ranking.sentences()[0]
'new is first in 100% of 10,000 resamples of the 8 queries (95% rank interval: 1)'
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..data import JoinCache, Qrels, Run
from ..errors import invalid_parameter
from ..evaluate import evaluate
from ..measures import Measure, parse_measures
from ..options import EvalOptions
from ..params import check
from ..stats.base import N_RESAMPLES, PROBABILITY, RngLike, check_rng
from ..stats.resampling import bootstrap_means
from .holes import HolesResult, debt_for_pair, run_pairs
from .margin import Margin, MarginResult, bootstrap_margin, margin_value, t_margin
from .ranking import (
    AnovaTable,
    MixedModel,
    RankConfidence,
    mixed_model,
    rank_probabilities,
    two_way_anova,
)
from .risk import RiskProfile, risk_profile

__all__ = ["Evidence", "MeasureEvidence", "PairEvidence", "decision_evidence"]


@dataclass(frozen=True)
class PairEvidence:
    """The evidence about one pair on one measure (``d = b - a``, ``a`` the baseline)."""

    system_a: str
    system_b: str
    measure: str
    holes: HolesResult
    risk: RiskProfile
    noninferiority: MarginResult | None
    noninferiority_bootstrap: MarginResult | None

    def as_dict(self) -> dict[str, Any]:
        """JSON blocks ``holes``, ``risk`` and (with a margin) ``noninferiority``."""
        out: dict[str, Any] = {"holes": self.holes.as_dict(), "risk": self.risk.as_dict()}
        ni = self.noninferiority
        if ni is not None:
            block = ni.as_dict()
            block["text"] = ni.sentence(self.system_a, self.system_b, self.measure)
            if self.noninferiority_bootstrap is not None:
                boot = self.noninferiority_bootstrap.as_dict()
                block["bootstrap"] = {k: boot[k] for k in ("p", "interval", "verdict")}
            out["noninferiority"] = block
        return out


@dataclass(frozen=True)
class MeasureEvidence:
    """How sure the ranking of every compared system is on one measure."""

    measure: str
    systems: tuple[str, ...]
    n_queries: int
    ranking: RankConfidence | None
    anova: AnovaTable | None
    mixed: MixedModel | None

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"queries": self.n_queries}
        if self.ranking is not None:
            out.update(self.ranking.as_dict())
        if self.anova is not None:
            out["anova"] = self.anova.as_dict()
            out["anova_text"] = self.anova.sentence()
        if self.mixed is not None:
            out["mixed_model"] = self.mixed.as_dict()
            out["mixed_model_text"] = self.mixed.sentence()
        return out


@dataclass(frozen=True)
class Evidence:
    """:class:`PairEvidence` per (pair, measure) and :class:`MeasureEvidence` per measure."""

    pairs: tuple[PairEvidence, ...]
    measures: tuple[MeasureEvidence, ...]

    def pair(self, a: str, b: str, measure: str | Measure) -> PairEvidence:
        m = str(parse_measures(measure)[0])
        for p in self.pairs:
            if (p.system_a, p.system_b, p.measure) == (a, b, m):
                return p
        raise KeyError((a, b, m))

    def measure(self, measure: str | Measure) -> MeasureEvidence:
        m = str(parse_measures(measure)[0])
        for e in self.measures:
            if e.measure == m:
                return e
        raise KeyError(m)

    def blocks(self) -> dict[tuple[str, str, str], dict[str, Any]]:
        """``{(system_a, system_b, measure): JSON blocks}``: ``holes``, ``risk``, with a
        margin ``noninferiority``, with rank confidence ``rank_confidence`` (the
        measure's, the same in every pair)."""
        ranks = {e.measure: e.as_dict() for e in self.measures if e.ranking is not None}
        out = {}
        for p in self.pairs:
            block = p.as_dict()
            if p.measure in ranks:
                block["rank_confidence"] = ranks[p.measure]
            out[(p.system_a, p.system_b, p.measure)] = block
        return out


def decision_evidence(qrels: Qrels, runs: Sequence[Run],
                      measures: str | Measure | Sequence[str | Measure], *,
                      options: EvalOptions | None = None, baseline: str | None = None,
                      margin: Margin | None = None, alpha: float = 0.05, test: str = "t",
                      risk_alpha: float = 1.0, loss_delta: float = 0.0, n_worst: int = 10,
                      rank_confidence: bool = False, n_resamples: int = 10_000,
                      rng: RngLike = 0, joins: JoinCache | None = None) -> Evidence:
    """Judgment debt, risk, non-inferiority and ranking confidence of compared runs.

    Parameters
    ----------
    qrels, runs, measures, options
        As for :func:`ireval_core.evaluate` (at least two runs).
    baseline : str, optional
        Compare each run with this one only; default every pair (``a`` before ``b``).
    margin : float or str, optional
        Non-inferiority margin of ``b`` against ``a``: measure units, or ``"P%"`` of
        ``a``'s mean. ``None``: no non-inferiority test.
    alpha : float, default 0.05
        Level of the verdicts (holes: two-sided; non-inferiority: one-sided).
    test : str, default "t"
        The paired test of the holes verdicts.
    risk_alpha, loss_delta, n_worst
        URisk's loss weight, the loss that counts, how many worst losses to list.
    rank_confidence : bool, default False
        Add the rank probabilities, the ANOVA and the mixed model per measure.
    n_resamples, rng
        Bootstrap resamples (rank confidence, bootstrap non-inferiority, the holes
        verdicts' resampling tests) and their seed.
    joins : JoinCache, optional
        Joined runs to reuse.

    Returns
    -------
    Evidence
    """
    fn = "decision_evidence"
    if not isinstance(qrels, Qrels):
        raise invalid_parameter("qrels", fn, "a Qrels", qrels, error=TypeError)
    runs = list(runs)
    pairs = run_pairs(runs, baseline, fn)
    names = [r.name for r in runs]
    if margin is not None:
        margin_value(margin, 1.0, function=fn)  # the kind of margin, checked early
    alpha = check(alpha, "alpha", fn, PROBABILITY)
    if margin is not None and not alpha < 0.5:
        raise invalid_parameter("alpha", fn, "a number strictly between 0 and 0.5", alpha)
    for name, value in (("risk_alpha", risk_alpha), ("loss_delta", loss_delta)):
        if (isinstance(value, bool) or not isinstance(value, numbers.Real)
                or not (math.isfinite(value) and value >= 0)):
            raise invalid_parameter(name, fn, "a finite number >= 0", value)
    if isinstance(n_worst, bool) or not isinstance(n_worst, numbers.Integral) or n_worst < 0:
        raise invalid_parameter("n_worst", fn, "an int >= 0", n_worst)
    if not isinstance(rank_confidence, bool):
        raise invalid_parameter("rank_confidence", fn, "True or False", rank_confidence,
                                error=TypeError)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    rng = check_rng(rng, fn)
    options = EvalOptions() if options is None else options
    specs = parse_measures(measures)
    joins = JoinCache() if joins is None else joins

    res = evaluate(qrels, runs, specs, options=options, joins=joins)
    holes = debt_for_pair(qrels, runs, specs, pairs, options=options, test=test, alpha=alpha,
                  n_resamples=n_resamples, rng=rng, joins=joins, fn=fn, evaluation=res)
    holes_of = {(h.system_a, h.system_b, h.measure): h for h in holes}

    from ..compare import aligned_scores

    pair_out: list[PairEvidence] = []
    measure_out: list[MeasureEvidence] = []
    for m in specs:
        common, values = aligned_scores(res, m, names)
        X = np.column_stack([values[s] for s in names]) if len(common) else None
        testable = X is not None and X.shape[0] >= 2 and bool(np.isfinite(X).all())
        theta = (bootstrap_means(X, n_resamples, rng)
                 if testable and X is not None and (rank_confidence or margin is not None)
                 else None)
        if rank_confidence:
            ranking = anova = mixed = None
            if testable and X is not None and theta is not None:
                ranking = rank_probabilities(tuple(names), X, theta, 0.95)
                scores = {s: values[s] for s in names}
                anova, mixed = two_way_anova(scores), mixed_model(scores)
            measure_out.append(MeasureEvidence(str(m), tuple(names), len(common), ranking,
                                               anova, mixed))
        for a, b in pairs:
            va, vb = values[a], values[b]
            ni = ni_boot = None
            if margin is not None and testable:
                d = vb - va
                value, percent = margin_value(margin, float(np.mean(va)), function=fn)
                ni = t_margin(d, value, percent, float(np.mean(va)), alpha, "noninferiority")
                if theta is not None:
                    ia, ib = names.index(a), names.index(b)
                    ni_boot = bootstrap_margin(theta[:, ib] - theta[:, ia], d, value,
                                                percent, float(np.mean(va)), alpha,
                                                "noninferiority")
            risk = (risk_profile(va, vb, query_ids=list(common), alpha=risk_alpha,
                                 delta=loss_delta, n_worst=n_worst)
                    if testable else _no_risk(len(common), risk_alpha, loss_delta))
            pair_out.append(PairEvidence(a, b, str(m), holes_of[(a, b, str(m))], risk, ni,
                                         ni_boot))
    return Evidence(tuple(pair_out), tuple(measure_out))


def _no_risk(n: int, alpha: float, delta: float) -> RiskProfile:
    nan = float("nan")
    return RiskProfile(n, float(delta), 0, 0, [], nan, nan, nan, float(alpha))
