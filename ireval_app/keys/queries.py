"""Queries page: widget keys and URL parameters."""

from __future__ import annotations

from ireval_core.params import Options

from ..views import ViewParam

MEASURE = "ireval.queries.measure"
"""Select: the measure."""
TYPED = "ireval.queries.typed"
"""Text: a typed measure, used instead of the pick."""
RUN_A = "ireval.queries.run_a"
"""Select: run A."""
RUN_B = "ireval.queries.run_b"
"""Select: run B (differences are B − A)."""
QUERY = "ireval.queries.query"
"""Select: the query opened."""
SHOWN = "ireval.queries.depth"
"""Select: how many documents of each ranking are shown."""
SEGMENT_COLUMN = "ireval.queries.segment_column"
"""Select: the metadata column to filter the queries by."""
SEGMENT_VALUE = "ireval.queries.segment_value"
"""Select: the value of that column the queries must have."""

SHOWN_CHOICES = (10, 20, 50, 100)

PARAMS = (ViewParam(MEASURE, "measure"),
          ViewParam(TYPED, "typed"),
          ViewParam(RUN_A, "a", loaded="run"),
          ViewParam(RUN_B, "b", loaded="run"),
          ViewParam(QUERY, "query", loaded="query"),
          ViewParam(SEGMENT_COLUMN, "segment_by", loaded="metadata column"),
          ViewParam(SEGMENT_VALUE, "segment", loaded="segment"),
          ViewParam(SHOWN, "shown", Options(SHOWN_CHOICES)))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
