"""Measure kernels and the registry of measure specs (see :mod:`.registry`)."""

from . import catalogue  # noqa: F401  (registers every family)
from .registry import FAMILIES, Family, Measure, parse_measure, parse_measures

__all__ = ["FAMILIES", "Family", "Measure", "parse_measure", "parse_measures"]
