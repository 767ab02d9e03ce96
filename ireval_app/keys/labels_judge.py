"""Model judge page: widget keys and URL parameters (with the labeling settings)."""

from __future__ import annotations

from ..views import ViewParam
from .labeling import SETTINGS

ROUND = "ireval.judge.round"
"""Select: the round of the confusion matrix."""

PARAMS = (*SETTINGS, ViewParam(ROUND, "round", loaded="round"))
"""The judge (:data:`~ireval_app.keys.labeling.JUDGE`) is one of the labeling settings:
kept for the session and in every labeling page's link, every labeling page leaves it out
of the people's numbers (:func:`ireval_app.labels_widgets.judge`)."""

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
