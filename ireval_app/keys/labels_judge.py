"""Model judge page: widget keys and URL parameters (with the labeling settings)."""

from __future__ import annotations

from ..views import ViewParam
from .labeling import JUDGE, SETTINGS

ROUND = "ireval.judge.round"
"""Select: the round of the confusion matrix."""

PARAMS = (*SETTINGS, ViewParam(JUDGE, "judge", loaded="rater"),
          ViewParam(ROUND, "round", loaded="round"))
"""The judge is kept for the session: every labeling page leaves it out of the people's
numbers (:func:`ireval_app.labels_widgets.judge`)."""
