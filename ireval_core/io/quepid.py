"""Quepid's ratings CSV, read as a labeling table.

Quepid (o19s) exports ratings as CSV in two layouts, both read:

* a case's ratings ("Export" > "Basic"; the snapshot export too): ``query,docid,rating``,
  one rated document a line; a query without ratings is a line holding only the query.
  A ``user`` / ``rater`` / ``email`` column, when a team adds one, names the rater;
* a judgement book ("Export" > CSV): ``query,docid,<rater>,<rater>,...``, one
  (query, document) a line and one column per rater (named by the rater's name or
  email), an empty cell where that rater gave no rating.

Quepid writes a query that starts with ``-``, ``=``, ``+`` or ``@`` with a space in
front (against formula injection in spreadsheets); that space is removed. Quepid has
no rounds, positions or systems: the round is the one given to the reader
(``round=``), the position of a document is its order among its query's lines (the
snapshot export lists a query's documents in rank order), with a
``position-from-order`` warning; one system. Lines are kept, so messages name them.

The format detector (:mod:`~.detect`) recognises the file by a header whose first two
columns are ``query`` and ``docid`` and that has no round or position column (a
labeling file with those is read as CSV).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

import numpy as np
import pyarrow as pa

from ..errors import DataWarning, FormatError, Remedy
from .columns import QUEPID_RATER_ALIASES
from .source import Source, one_line
from .table import RawTable, pick, positions_in_order

__all__ = ["read_quepid"]

_FORMULA_GUARD = re.compile(r" [-=+@]")


def read_quepid(src: Source, aliases: Mapping[str, Sequence[str]], required: Sequence[str],
                kind: str, *, round: str | None = None) -> RawTable:
    """The ratings of a Quepid CSV export as a labeling table (see the module notes)."""
    try:
        text = src.data.decode("utf-8-sig")
    except UnicodeDecodeError:  # pragma: no cover - decided by read_text before
        raise FormatError("the file is not UTF-8", source=src.name) from None
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(rows)]
    except (StopIteration, csv.Error):  # pragma: no cover - recognised by its header
        raise FormatError("no header row", source=src.name, line=1) from None
    lower = [h.lower() for h in header]
    if round is None:
        raise FormatError("a Quepid export has no rounds, and no round was given for it",
                          source=src.name, line=1, remedies=(Remedy("round", "2026-05"),))
    long = "rating" in lower[2:]
    rating_at = lower.index("rating") if long else -1
    rater_at = next((lower.index(a) for a in QUEPID_RATER_ALIASES if a in lower[2:]), -1)
    raters = [] if long else [(i, header[i]) for i in range(2, len(header))]
    if not long and not raters:
        raise FormatError("expected a rating column (query,docid,rating) or one column per "
                          "rater (a Quepid book export)", source=src.name, line=1)
    queries: list[str] = []
    docs: list[str] = []
    who: list[str] = []
    labels: list[str] = []
    lines: list[int] = []
    unrated = 0
    start = 1
    try:
        for row in rows:
            line, start = start + 1, rows.line_num
            if not row or not "".join(row).strip():
                continue
            query = row[0][1:] if _FORMULA_GUARD.match(row[0]) else row[0]
            if len(row) == 1:  # a query without ratings
                unrated += 1
                continue
            doc = row[1]
            if long:
                cells = [(row[rating_at] if rating_at < len(row) else "",
                          row[rater_at] if 0 <= rater_at < len(row) else "")]
            else:
                cells = [(row[i] if i < len(row) else "", name) for i, name in raters]
            for label, rater in cells:
                if not long and not label.strip():
                    continue  # this rater did not rate this document
                queries.append(query)
                docs.append(doc)
                who.append(rater)
                labels.append(label)
                lines.append(line)
    except csv.Error as exc:
        raise FormatError(f"malformed CSV ({one_line(str(exc))})", source=src.name,
                          line=start + 1) from None
    if not queries:
        raise FormatError("no ratings below the header", source=src.name, line=1)
    n = len(queries)
    columns = {"round": [round] * n, "system": [""] * n, "query": queries, "doc": docs}
    table = pa.table({
        "round": pa.array(columns["round"], pa.string()),
        "query": pa.array(queries, pa.string()), "doc": pa.array(docs, pa.string()),
        "position": pa.array(positions_in_order(columns), pa.string()),
        "label": pa.array(labels, pa.string()), "rater": pa.array(who, pa.string())})
    warnings = [DataWarning(
        "position-from-order", "a Quepid export has no positions: the documents of each "
        "query are numbered in the order of their lines (the rank order in a snapshot "
        "export)", src.name, n)]
    if unrated:
        warnings.append(DataWarning("unrated-queries", f"{unrated} query line(s) without "
                                    "ratings", src.name, unrated))
    line_of = np.asarray(lines, dtype=np.int64)
    raw = RawTable(src.name, "quepid", {}, n, tuple(header), warnings=tuple(warnings),
                   line_index=lambda upto: line_of)
    return pick(raw, table, aliases, required, kind)
