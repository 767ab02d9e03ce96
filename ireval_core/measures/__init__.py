"""Measure kernels and the registry of measure specs (see :mod:`.registry`)."""

# catalogue registers the families over a joined ranking, judgments the preference and
# judgment-group families (in this order)
from . import catalogue, judgments  # noqa: F401
from .registry import (
    FAMILIES,
    JUDGMENTS,
    Family,
    Judgments,
    Measure,
    families,
    parse_measure,
    parse_measures,
)

__all__ = ["FAMILIES", "JUDGMENTS", "Family", "Judgments", "Measure", "families",
           "parse_measure", "parse_measures"]
