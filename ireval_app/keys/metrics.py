"""Metrics page: widget keys and URL parameters."""

from __future__ import annotations

from ireval_core.params import Boolean

from ..views import ViewParam

MEASURES = "ireval.metrics.measures"
"""Multiselect: the measures of the table."""
EXTRA = "ireval.metrics.extra"
"""Text: more measure specs, separated by ``;``."""
DISTRIBUTION = "ireval.metrics.distribution"
"""Select: the measure of the per-query distribution chart."""
SPLIT = "ireval.metrics.split"
"""Select: the metadata column the means are split by."""
WEIGHTED = "ireval.metrics.weighted"
"""Toggle: traffic-weighted means in the split."""

PARAMS = (ViewParam(MEASURES, "measures", many=True),
          ViewParam(EXTRA, "more"),
          ViewParam(SPLIT, "split", loaded="metadata column"),
          ViewParam(WEIGHTED, "weighted", Boolean()),
          ViewParam(DISTRIBUTION, "distribution", loaded="measure"))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
