"""Compare page: widget keys and URL parameters."""

from __future__ import annotations

from numbers import Real

from ireval_core.params import Interval, Options

from ..views import ViewParam

MEASURES = "ireval.compare.measures"
"""Multiselect: the measures compared."""
SYSTEMS = "ireval.compare.systems"
"""Multiselect: the runs compared."""
MODE = "ireval.compare.mode"
"""Radio: all pairs or against a baseline."""
BASELINE = "ireval.compare.baseline"
"""Select: the baseline run (system A)."""
TESTS = "ireval.compare.tests"
"""Multiselect: the paired tests."""
ALTERNATIVE = "ireval.compare.alternative"
"""Select: two-sided, greater or less."""
CORRECTION = "ireval.compare.correction"
"""Select: the multiple-comparison correction."""
RESAMPLES = "ireval.compare.resamples"
"""Number: resamples of the randomization and bootstrap tests."""
SEED = "ireval.compare.seed"
"""Number: the seed of the Monte Carlo tests."""
ALPHA = "ireval.compare.alpha"
"""Select: the significance level."""
PAIR = "ireval.compare.pair"
"""Select: the pair and measure of the per-query chart."""
DELTA = "ireval.compare.delta"
"""Number: the difference the next round should detect."""
REPORT_TEST = "ireval.compare.report_test"
"""Select: the test marking the report table."""
SPLIT = "ireval.compare.split"
"""Select: the metadata column the tests are repeated per value of."""

MARGIN = "ireval.compare.margin"
"""Number: the non-inferiority / equivalence margin."""
MARGIN_UNIT = "ireval.compare.margin_unit"
"""Radio: the margin in the measure's units or in percent of A's mean."""
LOSS_DELTA = "ireval.compare.loss_delta"
"""Number: a query loses when B − A is below minus this."""
RISK_ALPHA = "ireval.compare.risk_alpha"
"""Number: URisk's extra weight of a loss."""
DECISION_TEXT = "ireval.compare.decision.text"
"""Text area: the decision recorded beside the comparison."""
DECISION_AUTHOR = "ireval.compare.decision.author"
"""Text: who records the decision (kept for the session)."""

MODES = ("all pairs", "against a baseline")
MARGIN_UNITS = ("measure units", "% of A's mean")
MARGIN_MIN, MARGIN_MAX = 0.0001, 100.0
"""The margin input's range (a percentage or measure units)."""
MARGIN_DEFAULT = 0.01
DELTA_MAX = 1000.0
RISK_ALPHA_MAX = 100.0

PARAMS = (ViewParam(MEASURES, "measures", many=True),
          ViewParam(SYSTEMS, "runs", many=True, loaded="run"),
          ViewParam(MODE, "pairs", Options(MODES)),
          ViewParam(BASELINE, "baseline", loaded="run"),
          ViewParam(SPLIT, "split", loaded="metadata column"),
          ViewParam(MARGIN, "margin", Interval(Real, MARGIN_MIN, MARGIN_MAX, closed="both")),
          ViewParam(MARGIN_UNIT, "margin_unit", Options(MARGIN_UNITS)),
          ViewParam(LOSS_DELTA, "loss_delta", Interval(Real, 0, DELTA_MAX, closed="both")),
          ViewParam(RISK_ALPHA, "risk_alpha", Interval(Real, 0, RISK_ALPHA_MAX,
                                                       closed="both")))
