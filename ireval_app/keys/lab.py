"""Metric lab page: widget keys and URL parameters."""

from __future__ import annotations

from ireval_core.params import Options

from ..views import ViewParam

SOURCE = "ireval.lab.source"
"""Radio: a seed's preset, a typed list or a query of a loaded run."""
PRESET = "ireval.lab.preset"
"""Select: the preset (a key of ``ireval_core.lab.PRESETS``)."""
GRADES = "ireval.lab.grades"
"""Text: the typed ranked list of grades (``-`` = unjudged)."""
UNRETRIEVED = "ireval.lab.unretrieved"
"""Text: grades of the judged documents the typed list lacks."""
MEASURE = "ireval.lab.measure"
"""Select: the measure explained."""
TYPED_MEASURE = "ireval.lab.typed_measure"
"""Text: a typed measure, used instead of the pick."""
RUN = "ireval.lab.run"
"""Select: the run whose query is explained."""
QUERY = "ireval.lab.query"
"""Select: the query of that run."""

SOURCES = ("preset", "typed", "query")

PARAMS = (ViewParam(SOURCE, "list", Options(SOURCES)),
          ViewParam(PRESET, "preset"),
          ViewParam(GRADES, "grades"),
          ViewParam(UNRETRIEVED, "unretrieved"),
          ViewParam(MEASURE, "measure"),
          ViewParam(TYPED_MEASURE, "typed"),
          ViewParam(RUN, "run", loaded="run"),
          ViewParam(QUERY, "query", loaded="query"))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
