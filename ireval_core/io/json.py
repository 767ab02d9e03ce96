"""JSON qrels and runs: ``{qid: {docid: value}}`` as pytrec_eval and ranx use.

A grade for qrels, a score for runs. A key given twice in one object is an error (the
standard library would keep the last one silently); integers are read as floats at
once, so that a 400-digit number is a (too large) float, never an int numpy cannot
hold.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pyarrow as pa

from .._arrow import from_numpy, string_array
from ..errors import FormatError, shorten
from .checks import cut, text_problem
from .columns import VALUE_KEY, VALUE_WORD, Kind
from .encoding import utf8_text
from .source import Source

__all__ = ["parse_json", "read_json"]


def parse_json(src: Source, **hooks: Any) -> Any:
    """The JSON value of a file (UTF-8 text, see :func:`~.encoding.utf8_text`), parsed by
    :func:`json.loads` with ``hooks`` (``object_pairs_hook``, ``parse_int``, ...). Invalid
    JSON, or JSON nested too deeply to parse, is a :class:`FormatError` with its line and
    column."""
    text = utf8_text(src)
    try:
        return json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=src.name,
                          line=exc.lineno) from None
    except RecursionError:
        raise FormatError("invalid JSON: nested too deeply", source=src.name) from None


def read_json(src: Source, kind: Kind) -> pa.Table:
    """Qrels or a run from ``{qid: {docid: value}}``: columns qid, docid, rel|score."""
    def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
        out: dict = {}
        for k, v in pairs:
            if k in out:
                raise FormatError(f"duplicate key {k!r} in a JSON object; each (query, "
                                  "document) may appear once", source=src.name)
            out[k] = v
        return out

    # integers become floats at once: a 400-digit number is a (too large) float, never an
    # int that numpy cannot hold
    obj = parse_json(src, object_pairs_hook=no_duplicates, parse_int=float)
    word = VALUE_WORD[VALUE_KEY[kind]]
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object {{qid: {{docid: {word}}}}}", source=src.name)
    q: list[str] = []
    d: list[str] = []
    v: list[float] = []
    for qid, docs in obj.items():
        if not isinstance(docs, dict):
            raise FormatError(f"expected {{docid: {word}}} for query {cut(qid)!r}, got "
                              f"{type(docs).__name__}", source=src.name)
        problem = text_problem(qid, "qid", edges=True)
        if problem is not None:
            raise FormatError(problem, source=src.name)
        for docid, value in docs.items():
            problem = text_problem(docid, "docid", edges=True)
            if problem is not None:
                raise FormatError(f"{problem} (query {cut(qid)!r})", source=src.name)
            if isinstance(value, bool) or not isinstance(value, float) or not math.isfinite(
                    value):
                raise FormatError(f"expected a finite numeric {word} for query "
                                  f"{cut(qid)!r}, document {cut(docid)!r}, "
                                  f"got {shorten(repr(value), 40)}", source=src.name)
            q.append(qid)
            d.append(docid)
            v.append(value)
    if not q:
        raise FormatError(f"no entries; expected {{qid: {{docid: {word}}}}}", source=src.name)
    return pa.table({"qid": string_array(q), "docid": string_array(d),
                     VALUE_KEY[kind]: from_numpy(np.asarray(v, dtype=np.float64))})
