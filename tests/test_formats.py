"""The number format policy (:mod:`ireval_core.formats`): each kind of number written one
way, and every sentence, memo and export writing p-values through it."""

from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np
import pytest

from ireval_core import formats

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(("p", "value", "text"), [
    (0.01234, "0.012", "p = 0.012"),
    (0.001, "0.001", "p = 0.001"),
    (0.000999, "< 0.001", "p < 0.001"),
    (2.27e-6, "< 0.001", "p < 0.001"),
    (5e-7, "< 0.001", "p < 0.001"),
    (0.0, "< 0.001", "p < 0.001"),  # never "p = 0"
    (0.05, "0.050", "p = 0.050"),
    (1.0, "1.000", "p = 1.000"),
    (math.nan, "–", "p undefined"),
    (None, "–", "p undefined"),
    (np.float64(0.2), "0.200", "p = 0.200"),
])
def test_p_values(p, value, text) -> None:
    assert formats.p_value(p) == value
    assert formats.p_text(p) == text


def test_every_kind_has_one_width() -> None:
    # shares: one decimal whatever the value ("0%" beside "61.53%" was two formats)
    assert [formats.percent(x) for x in (0, 0.6153, 1, 0.05)] == [
        "0.0%", "61.5%", "100.0%", "5.0%"]
    # grades as written in the files: integers without ".0" ("1.0/2.0/3.0" vs "0/1/2/3")
    assert [formats.grade(g) for g in (0, 1.0, 2.0, 3.0, 2.5, -1)] == [
        "0", "1", "2", "3", "2.5", "-1"]
    # a mean label to two decimals ("1.66667" was six significant digits)
    assert formats.mean_label(5 / 3) == "1.67"
    assert formats.measure(0.5) == "0.5000" and formats.difference(-0.0) == "+0.0000"
    assert formats.count(1234567) == "1,234,567"
    for f in (formats.measure, formats.difference, formats.percent, formats.count,
              formats.grade, formats.mean_label):
        assert f(math.nan) == formats.UNDEFINED == f(None)


def test_grid_formats_agree_with_the_text() -> None:
    # the printf formats of the data grids write what the text functions write
    assert formats.MEASURE_GRID % 0.53642 == formats.measure(0.53642)
    assert formats.DIFFERENCE_GRID % 0.2452 == formats.difference(0.2452)
    assert formats.MEAN_LABEL_GRID % (5 / 3) == formats.mean_label(5 / 3)
    assert formats.PERCENT_GRID % (100 * 0.6153) == formats.percent(0.6153)


_OWN_P = re.compile(r'"p < 0\.001" if|(?<!r)f"p = \{|p = \{[^}]*:\.?\d*[gef]\}')


def test_no_module_writes_p_values_its_own_way() -> None:
    """Every p-value sentence goes through formats.p_text (the core's verdicts, the
    labeling trend, the decision evidence, the memo, the report): no module spells out
    ``"p < 0.001" if ...``, ``f"p = {...}"`` or ``p = {x:.3g}`` itself."""
    own = [f"{path.relative_to(ROOT)}:{i}" for folder in ("ireval_core", "ireval_app", "pages")
           for path in sorted((ROOT / folder).rglob("*.py")) if path.name != "formats.py"
           for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           if _OWN_P.search(line)]
    assert own == []
