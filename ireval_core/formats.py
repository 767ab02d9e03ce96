"""One way to write each kind of number, for every page, table, chart and export.

The same number reads the same wherever it is shown: a p-value in a verdict sentence,
in a memo and in a report is ``p = 0.012`` or ``p < 0.001`` everywhere (never ``p = 0``
beside ``p < 0.001``, never ``0.0000005`` beside ``2.27e-6``).

=================  ===================  =============================================
kind               text                 data grid (``st.column_config`` printf format)
=================  ===================  =============================================
p-value            ``p = 0.012``,       :data:`P_GRID` (``1.20e-02``: a grid sorts
                   ``p < 0.001``,       numbers; 3 significant digits, small values
                   ``p undefined``      still told apart)
measure value      ``0.5364`` (4 dp.)   :data:`MEASURE_GRID`
difference         ``+0.2452``          :data:`DIFFERENCE_GRID`
share              ``61.5%`` (1 dp.)    :data:`PERCENT_GRID` on the share ×100
count              ``1,234``            :data:`COUNT_GRID`
grade              ``0``, ``2``, ``2.5``  (labels of grade axes and tables)
mean label         ``1.67`` (2 dp.)     :data:`MEAN_LABEL_GRID`
grade or mean      ``2``, ``1.67``      (:func:`label`: a table of labels)
=================  ===================  =============================================

An undefined number (NaN, None) is :data:`UNDEFINED` (``–``) everywhere but in
``p undefined``. The module is pure: no Streamlit, no plotting.
"""

from __future__ import annotations

import math
from numbers import Real

__all__ = ["COUNT_GRID", "DIFFERENCE_GRID", "MEASURE_GRID", "MEAN_LABEL_GRID", "PERCENT_GRID",
           "P_FLOOR", "P_GRID", "UNDEFINED", "count", "difference", "grade", "label", "mean_label",
           "measure", "p_text", "p_value", "percent"]

UNDEFINED = "–"
"""What an undefined number is written as."""

P_FLOOR = 0.001
"""p-values below it are written ``< 0.001``: more digits say nothing a reader can use."""

MEASURE_GRID = "%.4f"
DIFFERENCE_GRID = "%+.4f"
P_GRID = "%.2e"
PERCENT_GRID = "%.1f%%"
COUNT_GRID = "%d"
MEAN_LABEL_GRID = "%.2f"


def _undefined(x: object) -> bool:
    return x is None or (isinstance(x, Real) and math.isnan(float(x)))


def p_value(p: float | None) -> str:
    """A p-value without the ``p``: ``0.012``, ``< 0.001``, ``–`` when undefined.

    >>> p_value(0.01234), p_value(0.0000005), p_value(0.0), p_value(1.0), p_value(float("nan"))
    ('0.012', '< 0.001', '< 0.001', '1.000', '–')
    """
    if _undefined(p):
        return UNDEFINED
    assert p is not None
    return f"< {P_FLOOR:g}" if p < P_FLOOR else f"{p:.3f}"


def p_text(p: float | None) -> str:
    """A p-value in a sentence: ``p = 0.012``, ``p < 0.001``, ``p undefined``.

    >>> p_text(0.04999), p_text(2.27e-6), p_text(None)
    ('p = 0.050', 'p < 0.001', 'p undefined')
    """
    if _undefined(p):
        return "p undefined"
    text = p_value(p)
    return f"p {text}" if text.startswith("<") else f"p = {text}"


def measure(value: float | None, decimals: int = 4) -> str:
    """A measure's value (a mean, a bound): ``0.5364``.

    >>> measure(0.53642), measure(1), measure(float("nan"))
    ('0.5364', '1.0000', '–')
    """
    return UNDEFINED if _undefined(value) else f"{float(value):.{decimals}f}"  # type: ignore[arg-type]


def difference(value: float | None, decimals: int = 4) -> str:
    """A difference, always signed: ``+0.2452``, ``-0.3753``, ``+0.0000``.

    >>> difference(0.24521), difference(-0.37529), difference(0.0)
    ('+0.2452', '-0.3753', '+0.0000')
    """
    if _undefined(value):
        return UNDEFINED
    text = f"{float(value):+.{decimals}f}"  # type: ignore[arg-type]
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def percent(share: float | None, decimals: int = 1) -> str:
    """A share in [0, 1] as a percentage, one decimal: ``61.5%``, ``0.0%``, ``100.0%``.

    >>> percent(0.6153), percent(0), percent(1), percent(None)
    ('61.5%', '0.0%', '100.0%', '–')
    """
    return UNDEFINED if _undefined(share) else f"{float(share):.{decimals}%}"  # type: ignore[arg-type]


def count(n: float | None) -> str:
    """A count with thousands separators: ``1,234``.

    >>> count(1234), count(7.0), count(None)
    ('1,234', '7', '–')
    """
    return UNDEFINED if _undefined(n) else f"{round(float(n)):,}"  # type: ignore[arg-type]


def grade(g: float | None) -> str:
    """A grade as written in a qrels or labeling file: ``0``, ``3``, ``2.5`` (never
    ``3.0``), ``-1`` for pooled but unjudged.

    >>> [grade(x) for x in (0, 1.0, 2.5, -1, 3.0000000001)]
    ['0', '1', '2.5', '-1', '3']
    """
    if _undefined(g):
        return UNDEFINED
    return f"{float(g):.6g}"  # type: ignore[arg-type]


def label(x: float | None) -> str:
    """A label that may be a grade or a mean of grades: a whole number as a grade
    (``2``), anything else as a mean label (``1.67``).

    >>> label(2.0), label(5 / 3), label(0.5)
    ('2', '1.67', '0.50')
    """
    if _undefined(x):
        return UNDEFINED
    return grade(x) if float(x).is_integer() else mean_label(x)  # type: ignore[arg-type]


def mean_label(x: float | None) -> str:
    """A mean of labels (between grades), two decimals: ``1.67``, ``2.00``.

    >>> mean_label(5 / 3), mean_label(2), mean_label(float("nan"))
    ('1.67', '2.00', '–')
    """
    return UNDEFINED if _undefined(x) else f"{float(x):.2f}"  # type: ignore[arg-type]
