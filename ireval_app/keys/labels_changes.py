"""Label changes page: widget keys and URL parameters (with the labeling settings)."""

from __future__ import annotations

from ..views import ViewParam
from .labeling import SETTINGS

OLD = "ireval.changes.old"
"""Select: the earlier round."""
NEW = "ireval.changes.new"
"""Select: the later round."""

PARAMS = (*SETTINGS, ViewParam(OLD, "old", loaded="round"),
          ViewParam(NEW, "new", loaded="round"))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
