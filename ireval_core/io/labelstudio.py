"""Label Studio's JSON export, read as a labeling table: one row per annotation.

Label Studio ("Export" > "JSON") writes a list of tasks. Each task holds the ``data``
it was created from (whatever the project imported: here the query, the document, its
position, the system) and its ``annotations``, one per person who labeled it::

    [{"id": 17,
      "data": {"month": "2026-05", "query": "天气", "url": "https://...", "position": 3,
               "system": "A"},
      "annotations": [{"completed_by": 4, "was_cancelled": false,
                       "result": [{"from_name": "relevance", "type": "choices",
                                   "value": {"choices": ["high"]}}]}]}]

Read as:

* **round, query, doc, position, system, score, segment, weight**: the task's ``data``
  keys named as in :data:`~.columns.LABEL_STUDIO_FIELDS` (case-insensitive; a labeling
  file's column names, and ``url`` / ``link`` for the document, ``query_text`` for the
  query). Without a round key, the round given to the reader (``round=``); without a
  position key, the order of the tasks within each (round, system, query), with a
  ``position-from-order`` warning.
* **rater**: the annotation's ``completed_by``: a user id (``4``), or an object whose
  ``email`` (else ``username``, else ``id``) is used.
* **label**: the annotation's ``choices`` (one choice), ``rating`` or ``number`` result;
  when it holds several, the one whose ``from_name`` is a label column's name
  (``relevance``, ``label``, ``grade``, ``rating``, ...). An annotation without a
  result is a blank label (unlabeled); a cancelled one (``was_cancelled``, "skipped")
  is left out, with a ``skipped-annotations`` warning; predictions are not read.

Rows are located as ``task 3 (id 17), annotation 1`` in messages; every problem of the
file is reported at once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pyarrow as pa

from ..errors import DataWarning, FormatError, Problem, Remedy
from .columns import LABEL_STUDIO_CONTROLS, LABEL_STUDIO_FIELDS
from .json import parse_json
from .source import Source
from .table import RawTable, pick, positions_in_order

__all__ = ["read_label_studio"]

_KEPT = 1000  # problems of one export kept (all counted)
_VALUE_KEYS = ("choices", "rating", "number")


def _text(value: object) -> str:
    """A data value or a label as text (``3`` not ``3.0``)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return str(int(value))
    return str(value)


def _rater(who: object) -> str:
    if isinstance(who, Mapping):
        for key in ("email", "username", "id"):
            if who.get(key) not in (None, ""):
                return _text(who[key])
        return ""
    return _text(who)


def _label(result: object) -> tuple[str, str | None]:
    """The label of an annotation's ``result`` and, when it cannot be read, why."""
    if not isinstance(result, list):
        return "", f"'result' is {type(result).__name__}, expected a list"
    found = [r for r in result if isinstance(r, Mapping) and isinstance(r.get("value"), Mapping)
             and any(k in r["value"] for k in _VALUE_KEYS)]
    if not found:
        return "", None  # nothing labeled
    if len(found) > 1:
        named = [r for r in found if str(r.get("from_name", "")).lower() in LABEL_STUDIO_CONTROLS]
        if len(named) != 1:
            names = ", ".join(repr(str(r.get("from_name", ""))) for r in found)
            return "", (f"several label controls ({names}); name the one to read "
                        f"{' or '.join(repr(n) for n in LABEL_STUDIO_CONTROLS[:3])} in the "
                        "labeling config")
        found = named
    value = found[0]["value"]
    if "choices" in value:
        choices = value["choices"]
        if not isinstance(choices, list) or len(choices) > 1:
            return "", f"several choices {choices!r}; a label is one choice"
        return (_text(choices[0]) if choices else ""), None
    key = "rating" if "rating" in value else "number"
    return _text(value[key]), None


def read_label_studio(src: Source, aliases: Mapping[str, Sequence[str]],
                      required: Sequence[str], kind: str, *,
                      round: str | None = None) -> RawTable:
    """The annotations of a Label Studio JSON export as a labeling table (see the module
    notes); ``round``: the round of tasks whose data has none."""
    tasks = parse_json(src)
    if not isinstance(tasks, list):
        raise FormatError("expected a Label Studio JSON export: a list of tasks, each with "
                          "'data' and 'annotations'", source=src.name)
    columns: dict[str, list[str]] = {k: [] for k in (*LABEL_STUDIO_FIELDS, "rater", "label")}
    places: list[tuple[int, str, int]] = []  # task number, task id, annotation number
    problems: list[Problem] = []
    count = 0
    skipped = 0
    keys_seen: set[str] = set()

    def problem(place: str, message: str) -> None:
        nonlocal count
        count += 1
        if len(problems) < _KEPT:
            problems.append(Problem(src.name, None, place, message))

    for t, task in enumerate(tasks, start=1):
        if not isinstance(task, Mapping):
            problem(f"task {t}", f"expected a task (an object), got {type(task).__name__}")
            continue
        tid = _text(task.get("id", ""))
        where = f"task {t}" + (f" (id {tid})" if tid else "")
        fields = task.get("data")
        if not isinstance(fields, Mapping):
            problem(where, "no 'data' object")
            continue
        by_lower = {str(k).strip().lower(): v for k, v in fields.items()}
        keys_seen.update(fields)
        values = {}
        for key, names in LABEL_STUDIO_FIELDS.items():
            hit = next((n for n in names if n in by_lower), None)
            values[key] = _text(by_lower[hit]) if hit is not None else None
        annotations = task.get("annotations") or []
        if not isinstance(annotations, list):
            problem(where, f"'annotations' is {type(annotations).__name__}, expected a list")
            continue
        for a, annotation in enumerate(annotations, start=1):
            if not isinstance(annotation, Mapping):
                problem(f"{where}, annotation {a}", "expected an annotation (an object)")
                continue
            if annotation.get("was_cancelled"):
                skipped += 1
                continue
            label, why = _label(annotation.get("result", []))
            if why is not None:
                problem(f"{where}, annotation {a}", why)
                continue
            for key, value in values.items():
                columns[key].append("" if value is None else value)
            columns["rater"].append(_rater(annotation.get("completed_by")))
            columns["label"].append(label)
            places.append((t, tid, a))
    if count:
        raise FormatError.of(problems, count=count)
    warnings: list[DataWarning] = []
    if skipped:
        warnings.append(DataWarning(
            "skipped-annotations", f"{skipped} annotation(s) were skipped in Label Studio "
            "(was_cancelled) and are not read", src.name, skipped))
    present = {k for k in LABEL_STUDIO_FIELDS if any(v for v in columns[k])}
    if "round" not in present:
        if round is None:
            raise FormatError(
                "the tasks' data have no round (one of "
                f"{', '.join(LABEL_STUDIO_FIELDS['round'])}); add one to the tasks, or give "
                "the round of this file", source=src.name,
                remedies=(Remedy("round", "2026-05"),))
        columns["round"] = [round] * len(places)
        present.add("round")
    missing = [k for k in ("query", "doc") if k not in present]
    if missing:
        shown = ", ".join(sorted(keys_seen)[:8])
        expected = "; ".join(f"{k}: one of {', '.join(LABEL_STUDIO_FIELDS[k])}" for k in missing)
        raise FormatError(f"the tasks' data have no {' and no '.join(missing)} (data keys: "
                          f"{shown}); expected {expected}", source=src.name)
    if "position" not in present:
        columns["position"] = positions_in_order(columns)
        present.add("position")
        warnings.append(DataWarning(
            "position-from-order", "the tasks' data have no position: the results of each "
            "(round, system, query) are numbered in the order of the tasks", src.name,
            len(places)))
    keep = [k for k in (*LABEL_STUDIO_FIELDS, "rater", "label") if k in present
            or k in ("rater", "label")]
    table = pa.table({k: pa.array(columns[k], pa.string()) for k in keep})
    n = table.num_rows
    raw = RawTable(src.name, "labelstudio", {}, n, tuple(keep), warnings=tuple(warnings),
                   place=lambda row: f"task {places[row][0]}"
                   + (f" (id {places[row][1]})" if places[row][1] else "")
                   + f", annotation {places[row][2]}")
    return pick(raw, table, aliases, required, kind)
