"""Tables that fit the page: no sideways scrolling, no header cut short.

Streamlit's data grid sizes each column to its header and its values and scrolls
sideways when they add up to more than the page's column (a laptop at 1280 px with the
sidebar open leaves about 800 px). :func:`dataframe` estimates each column's width from
its header and formatted values; a table too wide is drawn as several tables one under
the other, each with the columns that name a row (round, system) and as many of the
others as fit, in their order. Every part holds the whole frame (only the columns shown
differ), so what a test reads from any part is the table's data.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pandas as pd
import streamlit as st
from pandas.io.formats.style import Styler

from ireval_core import formats

__all__ = ["BUDGET", "column_groups", "dataframe", "needed_widths", "percent_columns",
           "text_width"]

BUDGET = 750
"""Pixels a table may take: the main column at 1280 x 800 with the sidebar open is about
800 px, less inside tabs, expanders and bordered containers, less a margin for the
estimate."""

_PAD = 20
"""Pixels a column takes beyond its text: the grid's padding, the sort and menu icons."""


def text_width(text: str, *, bold: bool = False) -> float:
    """Estimated pixels of ``text`` in the grid's 14 px font (wide characters, as Chinese,
    count twice; a header is semibold)."""
    wide = sum(unicodedata.east_asian_width(c) in "WF" for c in text)
    per_char = 6.9 if bold else 7.0
    return (len(text) - wide) * per_char + wide * 14.5


def _formatted(value: Any, fmt: str | Callable[[Any], str] | None) -> str:
    """A cell as the grid shows it, near enough for its width."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if callable(fmt):
        return fmt(value)
    if isinstance(value, bool):
        return "☑"
    if isinstance(value, (int, float)):
        if fmt == "percent":
            return formats.percent(float(value))
        if fmt == "localized":
            return f"{value:,}"
        if fmt and fmt.startswith("{"):
            return fmt.format(value)
        if fmt and "%" in fmt:
            try:
                return fmt % value
            except (TypeError, ValueError):
                return str(value)
        return f"{value:.4f}" if isinstance(value, float) else str(value)
    return str(value)


def needed_widths(frame: pd.DataFrame, columns: Sequence[str],
                  config: Mapping[str, Any], number_formats: Mapping[str, Any] | None = None,
                  ) -> dict[str, float]:
    """Estimated pixels each of ``columns`` needs: its header (the config's label, else the
    column's name) or its widest value (the first 300 rows, formatted with ``number_formats`` or
    the config's number format), whichever is wider, plus padding."""
    out = {}
    sample = frame.head(300)
    for c in columns:
        cfg = config.get(c) or {}
        if isinstance(cfg, str):
            cfg = {"label": cfg}
        label = cfg.get("label") or str(c)
        fmt = (number_formats or {}).get(c) or (cfg.get("type_config") or {}).get("format")
        values = sample[c].tolist() if c in sample.columns else []
        widest = max((text_width(_formatted(v, fmt)) for v in values), default=0.0)
        out[c] = max(text_width(label, bold=True), widest) + _PAD
    return out


def column_groups(widths: Mapping[str, float], keys: Sequence[str],
                  budget: float = BUDGET) -> list[list[str]]:
    """The columns of ``widths`` (not ``keys``) in their order, cut into as few groups as
    fit ``budget`` beside the ``keys`` columns, of widths as even as can be (a column
    wider than that alone has a group of its own).

    >>> column_groups({"a": 100, "b": 300, "c": 300, "d": 200}, ["a"], 700)
    [['b'], ['c', 'd']]
    >>> column_groups({"a": 100, "b": 200, "c": 200, "d": 200, "e": 200}, ["a"], 700)
    [['b', 'c'], ['d', 'e']]
    >>> column_groups({"a": 100, "b": 300}, ["a"], 700)
    [['b']]
    """
    room = budget - sum(widths[k] for k in keys)
    rest = {c: w for c, w in widths.items() if c not in keys}

    def pack(limit: float) -> list[list[str]]:
        groups: list[list[str]] = [[]]
        used = 0.0
        for c, w in rest.items():
            if groups[-1] and used + w > limit:
                groups.append([])
                used = 0.0
            groups[-1].append(c)
            used += w
        return groups

    fewest = pack(room)
    # the same number of groups with the smallest widest group: the parts look alike
    target = max(sum(rest.values()) / len(fewest), max(rest.values(), default=0.0))
    while target < room and len(pack(target)) > len(fewest):
        target += 10
    return pack(min(target, room))


def percent_columns(frame: pd.DataFrame, column_config: Mapping[str, Any],
                    ) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Shares shown as percentages with one decimal (:func:`ireval_core.formats.percent`):
    the columns configured with Streamlit's ``"percent"`` format (which shows ``97%``,
    ``96.6%`` and ``96.53%`` in one column) are multiplied by 100 in a copy and shown
    with :data:`~ireval_core.formats.PERCENT_GRID`.

    >>> import streamlit as st
    >>> f, c = percent_columns(pd.DataFrame({"share": [0.966, 0.9653]}),
    ...                        {"share": st.column_config.NumberColumn("Share", format="percent")})
    >>> [formats.PERCENT_GRID % v for v in f["share"]], c["share"]["label"]
    (['96.6%', '96.5%'], 'Share')
    """
    config = dict(column_config)
    shares = [c for c, cfg in config.items() if isinstance(cfg, Mapping) and c in frame.columns
              and (cfg.get("type_config") or {}).get("format") == "percent"]
    if not shares:
        return frame, config
    frame = frame.copy()
    for c in shares:
        frame[c] = frame[c] * 100
        cfg = dict(config[c])
        cfg["type_config"] = {**cfg["type_config"], "format": formats.PERCENT_GRID}
        config[c] = cfg
    return frame, config


def dataframe(data: pd.DataFrame | Styler, *, column_config: Mapping[str, Any],
              column_order: Sequence[str] | None = None, keys: Sequence[str] | None = None,
              number_formats: Mapping[str, Any] | None = None, budget: float = BUDGET,
              **kwargs: Any) -> None:
    """``st.dataframe`` of ``data`` (index hidden), cut into several tables when its
    columns (``column_order``, default all) would not fit ``budget`` pixels; ``keys``:
    the columns that name a row, shown in every part (default: the leading text columns,
    at most two). ``number_formats``: the Styler's formats (``str.format`` or a function), for the
    estimate."""
    if not isinstance(data, Styler):
        data, column_config = percent_columns(data, column_config)
    frame = data.data if isinstance(data, Styler) else data
    shown = list(column_order) if column_order is not None else [str(c) for c in frame.columns]
    if keys is None:
        keys = []
        for c in shown[:2]:
            if not (pd.api.types.is_object_dtype(frame[c])
                    or pd.api.types.is_string_dtype(frame[c])):
                break
            keys.append(c)
    keys = [k for k in keys if k in shown]
    widths = needed_widths(frame, shown, column_config, number_formats)
    kwargs.setdefault("hide_index", True)
    if sum(widths.values()) <= budget:
        st.dataframe(data, column_config=dict(column_config), column_order=shown, **kwargs)
        return
    for group in column_groups(widths, keys, budget):
        st.dataframe(data, column_config=dict(column_config),
                     column_order=[*keys, *group], **kwargs)
