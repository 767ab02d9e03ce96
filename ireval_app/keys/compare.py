"""Compare page: widget keys and URL parameters."""

from __future__ import annotations

from numbers import Integral, Real

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

TEST_CHOICES = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
ALTERNATIVE_CHOICES = ("two-sided", "greater", "less")
CORRECTION_CHOICES = ("none", "bonferroni", "holm", "bh")
"""The keys of :data:`ireval_core.stats.TESTS`, ``ALTERNATIVES`` and ``CORRECTIONS``
(importing that package loads scipy: the frame imports this module on every page; a
test keeps them equal)."""
ALPHA_CHOICES = (0.01, 0.05, 0.1)
RESAMPLES_MIN, RESAMPLES_MAX = 100, 1_000_000
SEED_MAX = 2**32 - 1
"""The largest seed (a browser's number field holds it exactly, and so does any 32-bit
seed of other tools)."""
DELTA_MIN, DELTA_MAX_PLAN = 0.001, 1.0
"""The range of the difference the next round should detect."""

PARAMS = (ViewParam(MEASURES, "measures", many=True),
          ViewParam(SYSTEMS, "runs", many=True, loaded="run"),
          ViewParam(MODE, "pairs", Options(MODES)),
          ViewParam(BASELINE, "baseline", loaded="run"),
          ViewParam(SPLIT, "split", loaded="metadata column"),
          ViewParam(MARGIN, "margin", Interval(Real, MARGIN_MIN, MARGIN_MAX, closed="both")),
          ViewParam(MARGIN_UNIT, "margin_unit", Options(MARGIN_UNITS)),
          ViewParam(LOSS_DELTA, "loss_delta", Interval(Real, 0, DELTA_MAX, closed="both")),
          ViewParam(RISK_ALPHA, "risk_alpha", Interval(Real, 0, RISK_ALPHA_MAX,
                                                       closed="both")),
          ViewParam(TESTS, "tests", Options(TEST_CHOICES), many=True),
          ViewParam(ALTERNATIVE, "alternative", Options(ALTERNATIVE_CHOICES)),
          ViewParam(CORRECTION, "correction", Options(CORRECTION_CHOICES)),
          ViewParam(RESAMPLES, "resamples", Interval(Integral, RESAMPLES_MIN, RESAMPLES_MAX,
                                                     closed="both")),
          ViewParam(SEED, "seed", Interval(Integral, 0, SEED_MAX, closed="both")),
          ViewParam(ALPHA, "alpha", Options(ALPHA_CHOICES)),
          ViewParam(REPORT_TEST, "report_test", Options(TEST_CHOICES)),
          ViewParam(PAIR, "pair", loaded="pair"),
          ViewParam(DELTA, "delta", Interval(Real, DELTA_MIN, DELTA_MAX_PLAN, closed="both")))

LOCAL = {DECISION_TEXT: "the decision being written: recorded with the view's link, not in it",
         DECISION_AUTHOR: "who records a decision: a person, not a view"}
"""Widgets the link leaves out, and why."""
