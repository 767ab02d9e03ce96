"""Compare page: widget keys and URL parameters."""

from __future__ import annotations

from ireval_core.params import Options

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

MODES = ("all pairs", "against a baseline")

PARAMS = (ViewParam(MEASURES, "measures", many=True),
          ViewParam(SYSTEMS, "runs", many=True, loaded="run"),
          ViewParam(MODE, "pairs", Options(MODES)),
          ViewParam(BASELINE, "baseline", loaded="run"),
          ViewParam(SPLIT, "split", loaded="metadata column"))
