"""Curves page: widget keys and URL parameters."""

from __future__ import annotations

from ..views import ViewParam

QUERY = "ireval.curves.query"
"""Select: the query whose precision-recall curve is drawn."""

PARAMS = (ViewParam(QUERY, "query", loaded="query"),)

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
