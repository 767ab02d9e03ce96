"""Evidence for decisions a review meeting can defend.

A meeting does not decide "is p < 0.05"; it decides "do we ship B", "can the cheaper B
replace A", "which candidate goes to the online test". This package answers the
questions such meetings argue about, on top of :mod:`ireval_core.evaluate` and
:mod:`ireval_core.stats`:

* :mod:`.holes` -- **judgment debt**: the unjudged documents in each system's top k,
  the measure's bounds with them non-relevant and relevant, and whether a verdict
  holds for any labeling of them (:func:`judgment_holes`, :func:`judgment_debt`),
  with the deciding documents as the next labeling batch;
* :mod:`.margin` -- **not worse, or equivalent**: paired non-inferiority and TOST
  equivalence tests against a margin the team sets, t and bootstrap
  (:func:`noninferiority_test`, :func:`equivalence_test`);
* :mod:`.ranking` -- **how sure the ranking is**: each system's probability of each
  rank over bootstrap resamples of the queries (:func:`rank_confidence`), and the
  two-way system x query model: ANOVA (:func:`two_way_anova`) and the linear mixed
  model with a random query effect, by REML in closed form (:func:`mixed_model`);
* :mod:`.risk` -- **who gets hurt**: the queries losing more than a delta, the worst
  losses, URisk and TRisk with its t test (:func:`risk_profile`, :func:`urisk`,
  :func:`trisk_test`);
* :mod:`.evidence` -- all of the above for every compared pair and measure at once,
  as ``python -m ireval_core compare --format json`` writes it
  (:func:`decision_evidence`).

The statistics work on aligned per-query arrays (``d = b - a``, as in
:mod:`ireval_core.stats`); :mod:`.holes` reads qrels and runs. Every result says in
words what it found.
"""

from __future__ import annotations

from .evidence import Evidence, MeasureEvidence, PairEvidence, decision_evidence
from .holes import (
    MONOTONE_FAMILIES,
    PREFIX_FAMILIES,
    HolesResult,
    inferred_ap,
    inferred_ndcg,
    judgment_debt,
    judgment_holes,
)
from .margin import (
    MARGIN_METHODS,
    MarginResult,
    equivalence_test,
    margin_value,
    noninferiority_test,
)
from .ranking import (
    AnovaRow,
    AnovaTable,
    MixedModel,
    RankConfidence,
    mixed_model,
    rank_confidence,
    two_way_anova,
)
from .risk import RiskProfile, RiskResult, risk_profile, trisk_test, urisk

__all__ = [
    "MARGIN_METHODS",
    "MONOTONE_FAMILIES",
    "PREFIX_FAMILIES",
    "AnovaRow",
    "AnovaTable",
    "Evidence",
    "HolesResult",
    "MarginResult",
    "MeasureEvidence",
    "MixedModel",
    "PairEvidence",
    "RankConfidence",
    "RiskProfile",
    "RiskResult",
    "decision_evidence",
    "equivalence_test",
    "inferred_ap",
    "inferred_ndcg",
    "judgment_debt",
    "judgment_holes",
    "margin_value",
    "mixed_model",
    "noninferiority_test",
    "rank_confidence",
    "risk_profile",
    "trisk_test",
    "two_way_anova",
    "urisk",
]
