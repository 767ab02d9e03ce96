"""Label maps: from what raters wrote (``high``, ``高``, ``3``) to a numeric grade.

A :class:`LabelMap` is either *numeric* (numbers are grades as they are) or a
table of words, compared case-insensitively after trimming blanks. Four maps are
built in (:data:`BUILTIN_LABEL_MAPS`); any other is written like the CLI flag
``--label-map "none=0,low=1,mid=2,high=3"``. An empty cell is *unlabeled* (NaN),
never 0.

>>> m = LabelMap.parse("none=0, low=1, mid=2, high=3")
>>> m.apply(["High", "none", ""]).tolist()
[3.0, 0.0, nan]
>>> detect_label_map(["无", "高", "中"]).name
'无/低/中/高'
>>> detect_label_map(["0", "2.5"]).name
'0-3'
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import invalid_parameter
from ..params import InstanceOf, check

__all__ = ["BUILTIN_LABEL_MAPS", "LabelMap", "UnknownLabels", "detect_label_map"]


def _norm(text: str) -> str:
    """Key of a label: trimmed, lower case; a number in its canonical float form."""
    t = str(text).strip().lower()
    try:
        return repr(float(t))
    except ValueError:
        return t


def _number(text: str) -> float | None:
    try:
        value = float(str(text).strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


class UnknownLabels(ValueError):
    """Labels a map does not know; ``labels`` lists them as written."""

    def __init__(self, labels: Sequence[str], label_map: LabelMap) -> None:
        self.labels = tuple(labels)
        self.label_map = label_map
        shown = ", ".join(repr(x) for x in self.labels[:5])
        super().__init__(f"unknown label(s) {shown} for the label map {label_map.name!r}")


_MAP_TEXT = InstanceOf(str, "a string like 'none=0,low=1,mid=2,high=3'")

@dataclass(frozen=True)
class LabelMap:
    """How label text becomes a grade.

    Attributes
    ----------
    name:
        Shown next to the numbers (``"none/low/mid/high"``, ``"0-3"``, or the text
        it was parsed from).
    words:
        ``(word, grade)`` pairs, words in lower case; empty for a numeric map.
    numeric:
        Numbers are grades as they are (finite, >= 0).
    """

    name: str
    words: tuple[tuple[str, float], ...] = ()
    numeric: bool = False

    @classmethod
    def parse(cls, text: str) -> LabelMap:
        """A map from ``"none=0,low=1,mid=2,high=3"``, or a built-in map by name.

        >>> LabelMap.parse("bad=0,ok=1,great=2").apply(["OK"]).tolist()
        [1.0]
        >>> LabelMap.parse("none/low/mid/high") == BUILTIN_LABEL_MAPS["none/low/mid/high"]
        True
        """
        check(text, "text", "LabelMap.parse", _MAP_TEXT)
        key = text.strip()
        for name, builtin in BUILTIN_LABEL_MAPS.items():
            if key.lower() == name.lower():
                return builtin
        pairs: list[tuple[str, float]] = []
        seen: set[str] = set()
        for item in (x.strip() for x in key.replace("；", ",").replace("，", ",").split(",")):
            if not item:
                continue
            word, eq, value = item.rpartition("=")
            grade = _number(value)
            word = word.strip()
            if not eq or not word or grade is None or grade < 0:
                raise invalid_parameter(
                    "text", "LabelMap.parse", "comma-separated word=grade pairs with grades "
                    f">= 0 (e.g. 'none=0,low=1,mid=2,high=3') or a built-in map "
                    f"({', '.join(BUILTIN_LABEL_MAPS)})", text)
            norm = _norm(word)
            if norm in seen:
                raise invalid_parameter("text", "LabelMap.parse", f"a map naming each word "
                                        f"once ({word!r} is given twice)", text)
            seen.add(norm)
            pairs.append((norm, grade))
        if not pairs:
            raise invalid_parameter("text", "LabelMap.parse", "a non-empty map like "
                                    "'none=0,low=1,mid=2,high=3'", text)
        return cls(key, tuple(pairs))

    def grade_names(self) -> dict[float, str]:
        """Grade -> its first word (``{2.0: "mid"}``); empty for a numeric map."""
        out: dict[float, str] = {}
        for word, grade in self.words:
            out.setdefault(grade, word)
        return out

    def unknown(self, labels: Iterable[str]) -> list[str]:
        """The labels (non-empty) this map cannot turn into a grade, in input order."""
        table = dict(self.words)
        out = []
        for label in labels:
            text = str(label).strip()
            if not text:
                continue
            if self.numeric:
                value = _number(text)
                if value is None or value < 0:
                    out.append(label)
            elif _norm(text) not in table:
                out.append(label)
        return out

    def apply(self, labels: Sequence[str]) -> np.ndarray:
        """Grades of ``labels`` (float64, NaN for empty cells).

        Raises :class:`UnknownLabels` for text the map does not know. Meant for the
        *distinct* labels of a column (the readers map codes, not every row).
        """
        bad = self.unknown(labels)
        if bad:
            raise UnknownLabels(bad, self)
        table = dict(self.words)
        out = np.full(len(labels), np.nan)
        for i, label in enumerate(labels):
            text = str(label).strip()
            if text:
                out[i] = float(text) if self.numeric else table[_norm(text)]
        return out

    def describe(self) -> str:
        """The map in words, e.g. ``none=0, low=1, mid=2, high=3``."""
        if self.numeric:
            return "numbers are grades as written"
        return ", ".join(f"{w}={g:g}" for w, g in self.words)


def _words(*names: str) -> tuple[tuple[str, float], ...]:
    return tuple((n, float(i)) for i, n in enumerate(names))


BUILTIN_LABEL_MAPS: dict[str, LabelMap] = {
    "0-3": LabelMap("0-3", numeric=True),
    "none/low/mid/high": LabelMap("none/low/mid/high", _words("none", "low", "mid", "high")),
    "无/低/中/高": LabelMap("无/低/中/高", _words("无", "低", "中", "高")),
    "bad/fair/good/excellent/perfect": LabelMap(
        "bad/fair/good/excellent/perfect", _words("bad", "fair", "good", "excellent",
                                                  "perfect")),
}
"""The built-in maps: numbers as they are (``0-3``; any grade >= 0 passes), and the
word scales none/low/mid/high, 无/低/中/高 (0-3) and Bad/Fair/Good/Excellent/Perfect (0-4)."""


def detect_label_map(labels: Iterable[str]) -> LabelMap:
    """The built-in map that knows every (distinct, non-empty) label.

    Numbers only: the numeric map. Otherwise the word map knowing all of them;
    when none does, the one knowing the most (ties: the first in
    :data:`BUILTIN_LABEL_MAPS`), whose :meth:`LabelMap.unknown` then names the rest.
    """
    distinct = list(dict.fromkeys(str(x) for x in labels if str(x).strip()))
    numeric = BUILTIN_LABEL_MAPS["0-3"]
    if not numeric.unknown(distinct):
        return numeric
    best, best_known = numeric, -1
    for m in BUILTIN_LABEL_MAPS.values():
        known = len(distinct) - len(m.unknown(distinct))
        if known > best_known:
            best, best_known = m, known
    return best
