"""Efficiency page: widget keys and URL parameters."""

from __future__ import annotations

from ireval_core.params import Options

from ..views import ViewParam

UPLOADER = "ireval.efficiency.upload"
"""File uploader: the query metadata file (latencies, segments)."""
MEASURE = "ireval.efficiency.measure"
"""Select: the effectiveness measure (default nDCG@10)."""
LATENCY = "ireval.efficiency.latency"
"""Select: the latency statistic of the chart (p50, p95, p99, mean)."""

LATENCIES = ("p50", "p95", "p99", "mean")
"""The keys of :data:`ireval_core.metadata.LATENCY_STATISTICS` (importing that module loads
scipy: the frame imports this module on every page; a test keeps them equal)."""

PARAMS = (ViewParam(MEASURE, "measure"),
          ViewParam(LATENCY, "latency", Options(LATENCIES)))

LOCAL = {UPLOADER: "a file: a link cannot carry it (the sample's metadata needs none)"}
"""Widgets the link leaves out, and why."""
