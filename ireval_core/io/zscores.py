"""trec_eval's z-score file (``-Z FILE``): the mean and standard deviation of each
measure on each query, against which values are standardised.

Each line is ``qid measure mean stddev``, separated by spaces or tabs; ``measure`` is the
name trec_eval prints (``P_10``, ``iprec_at_recall_0.10``, ``ndcg_cut_10``). Lines that are
not four fields, or whose mean or standard deviation is not a finite number, are a
:class:`~ireval_core.errors.FormatError` with the file and line; so is a (query, measure)
given twice.

>>> z = read_zscores(b"301 map 0.25 0.1\\n301 P_10 0.5 0\\n", name="z.txt")
>>> z[("301", "map")]
(0.25, 0.1)
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import FormatError

__all__ = ["ZScores", "read_zscores"]

ZScores = dict[tuple[str, str], tuple[float, float]]
"""``{(query id, trec_eval measure name): (mean, standard deviation)}``."""


def read_zscores(source: str | Path | bytes, *, name: str | None = None) -> ZScores:
    """Read a z-score file (a path, or its bytes with ``name`` for messages)."""
    if isinstance(source, bytes):
        data, where = source, name or "<zscores>"
    else:
        data, where = Path(source).read_bytes(), name or Path(source).name
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise FormatError(f"not UTF-8 text (byte {exc.start})", source=where) from None
    out: ZScores = {}
    first: dict[tuple[str, str], int] = {}
    lines = text.splitlines()
    if not lines:
        raise FormatError("file is empty; expected lines 'qid measure mean stddev'",
                          source=where)
    for number, line in enumerate(lines, start=1):
        fields = line.split()
        if len(fields) != 4:
            raise FormatError(f"expected 4 columns (qid measure mean stddev), got "
                              f"{len(fields)}", source=where, line=number, text=line)
        qid, measure, mean, stddev = fields
        values = []
        for label, value in (("mean", mean), ("stddev", stddev)):
            try:
                x = float(value)
            except ValueError:
                x = math.nan
            if not math.isfinite(x):
                raise FormatError(f"the {label} must be a finite number, got {value!r}",
                                  source=where, line=number, text=line)
            values.append(x)
        key = (qid, measure)
        if key in first:
            raise FormatError(f"query {qid!r} and measure {measure!r} are given twice "
                              f"(first on line {first[key]})", source=where, line=number,
                              text=line)
        first[key] = number
        out[key] = (values[0], values[1])
    return out
