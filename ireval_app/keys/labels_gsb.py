"""Side by side page: no widget of its own; its link keeps the labeling settings."""

from __future__ import annotations

from .labeling import SETTINGS

PARAMS = SETTINGS

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
