"""Raters page: widget keys and URL parameters (with the labeling settings)."""

from __future__ import annotations

from ..views import ViewParam
from .labeling import SETTINGS

ROUND = "ireval.raters.round"
"""Select: the round of the confusion matrix."""
RATER = "ireval.raters.rater"
"""Select: the rater of the confusion matrix."""

PARAMS = (*SETTINGS, ViewParam(ROUND, "round", loaded="round"),
          ViewParam(RATER, "rater", loaded="rater"))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
