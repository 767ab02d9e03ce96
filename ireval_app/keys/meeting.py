"""Meeting page: widget keys and URL parameters."""

from __future__ import annotations

from ..views import ViewParam

MEASURES = "ireval.meeting.measures"
"""Multiselect: the measures of the report."""
TITLE = "ireval.meeting.title"
"""Text: the report's title."""

PARAMS = (ViewParam(MEASURES, "measures", many=True),
          ViewParam(TITLE, "title"))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
