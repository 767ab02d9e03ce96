"""Trend page: widget keys and URL parameters (with the labeling settings)."""

from __future__ import annotations

from numbers import Real

from ireval_core.params import Boolean, Interval

from ..views import ViewParam
from .labeling import SETTINGS

BY_SEGMENT = "ireval.labels.by_segment"
"""Toggle: the trend broken down by segment."""
GRADE_SYSTEM = "ireval.labels.grade_system"
"""Radio: the system of the grade distribution."""
PLAN_DELTA = "ireval.labels.plan_delta"
"""Number: the DCG change the next round should detect."""

DELTA_MIN = 0.01

PARAMS = (*SETTINGS,
          ViewParam(BY_SEGMENT, "segments", Boolean()),
          ViewParam(PLAN_DELTA, "delta", Interval(Real, DELTA_MIN, None, closed="left")))
