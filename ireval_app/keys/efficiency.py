"""Efficiency page: widget keys (no URL parameter of its own)."""

from __future__ import annotations

from ..views import ViewParam

UPLOADER = "ireval.efficiency.upload"
"""File uploader: the query metadata file (latencies, segments)."""
MEASURE = "ireval.efficiency.measure"
"""Select: the effectiveness measure (default nDCG@10)."""
LATENCY = "ireval.efficiency.latency"
"""Select: the latency statistic of the chart (p50, p95, p99, mean)."""

PARAMS: tuple[ViewParam, ...] = ()
