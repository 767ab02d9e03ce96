"""Measure kernels and the registry of measure specs (see :mod:`.registry`)."""

# catalogue registers the families over a joined ranking, prefs_and_groups the preference and
# judgment-group families (in this order)
from . import catalogue, prefs_and_groups  # noqa: F401
from .registry import (
    FAMILIES,
    JUDGMENTS,
    Family,
    JudgmentKind,
    Measure,
    families,
    parse_measure,
    parse_measures,
)

__all__ = ["FAMILIES", "JUDGMENTS", "Family", "JudgmentKind", "Measure", "families",
           "parse_measure", "parse_measures"]
