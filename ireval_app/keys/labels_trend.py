"""Trend page: widget keys and URL parameters (with the labeling settings)."""

from __future__ import annotations

from numbers import Real

from ireval_core.params import Boolean, Interval, Options

from ..views import ViewParam
from .labeling import SETTINGS

BY_SEGMENT = "ireval.labels.by_segment"
"""Toggle: the trend broken down by segment."""
GRADE_SYSTEM = "ireval.labels.grade_system"
"""Radio: the system of the grade distribution."""
PLAN_DELTA = "ireval.labels.plan_delta"
"""Number: the DCG change the next round should detect."""
ALPHA = "ireval.labels.alpha"
"""Number: the team's test level (drop flags, minimum detectable change, planning)."""
POWER = "ireval.labels.power"
"""Number: the power the minimum detectable change and the planning aim at."""
QUERY_BAND = "ireval.labels.query_band"
"""Toggle: also draw the query-only band (inside the rater-noise band)."""
ESTIMATE = "ireval.labels.trend_estimate"
"""Radio: the trend's estimate, the people's labels (``"people"``) or the model judge's
labels corrected by the people's (``"ppi"``, PPI++)."""
ESTIMATES = ("people", "ppi")
ESTIMATE_DEFAULT = "people"

DELTA_MIN = 0.01
ALPHA_DEFAULT, POWER_DEFAULT = 0.05, 0.8
ALPHA_MIN, ALPHA_MAX = 0.001, 0.5
POWER_MIN, POWER_MAX = 0.5, 0.99
"""The ranges of the test level and power fields (and of their link's values)."""
PLAN_DELTA_DEFAULT = 0.5

PARAMS = (*SETTINGS,
          ViewParam(BY_SEGMENT, "segments", Boolean()),
          ViewParam(PLAN_DELTA, "delta", Interval(Real, DELTA_MIN, None, closed="left")),
          ViewParam(ALPHA, "alpha", Interval(Real, ALPHA_MIN, ALPHA_MAX, closed="both")),
          ViewParam(POWER, "power", Interval(Real, POWER_MIN, POWER_MAX, closed="both")),
          ViewParam(QUERY_BAND, "qband", Boolean()),
          ViewParam(ESTIMATE, "estimate", Options(ESTIMATES)),
          ViewParam(GRADE_SYSTEM, "system", loaded="system"))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
