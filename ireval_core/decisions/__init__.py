"""Evidence for decisions a review meeting can defend (issue 22).

A meeting does not decide "is p < 0.05"; it decides "do we ship B", "can the cheaper B
replace A", "which candidate goes to the online test". This package answers the
questions such meetings argue about, on top of :mod:`ireval_core.evaluate` and
:mod:`ireval_core.stats`:

* :mod:`.holes` -- **judgment debt**: the unjudged documents in each system's top k,
  the measure's bounds with them non-relevant and relevant, and whether a verdict
  holds for any labeling of them (:func:`judgment_holes`, :func:`judgment_debt`),
  with the deciding documents as the next labeling batch;
Every result says in words what it found.
"""

from __future__ import annotations

from .holes import (
    MONOTONE_FAMILIES,
    PREFIX_FAMILIES,
    HolesResult,
    inferred_ap,
    judgment_debt,
    judgment_holes,
)

__all__ = [
    "MONOTONE_FAMILIES",
    "PREFIX_FAMILIES",
    "HolesResult",
    "inferred_ap",
    "judgment_debt",
    "judgment_holes",
]
