"""Side-by-side (GSB) judgments: is the new system preferred over the old one?

Raters see two systems' results for a query side by side and judge the new one
**G**ood (better), **S**ame or **B**ad (worse). A GSB file has one row per judgment:

==========  ====================================================================
round       the labeling round (month or date); also ``month, date, period, batch``
query       the query id; also ``qid, query_id, topic, ...`` as the other readers
judgment    ``G/S/B``, ``good/same/bad``, ``better/same/worse``, ``>/=/<`` (any case)
            or a number ``+1/0/-1``; also named ``gsb, preference, pref, verdict,
            label``
rater       optional: who judged (``rater, annotator, judge, labeler, worker``)
==========  ====================================================================

CSV, TSV, Excel ``.xlsx`` and Parquet, one or many files (rounds accumulate), read by
the labeling reader's :func:`~ireval_core.io.read_table`, with the same
``file:line`` errors (Excel: sheet and row).

Per round, **GSB = (G − B) / (G + S + B)**, in [−1, 1]: +1 = the new system always
preferred, 0 = no preference on balance. Every judgment counts once: with several raters
per query, the round pools their judgments (:func:`gsb_by_rater` splits them).

* Interval: Agresti–Min (2005) adjusted Wald interval for a difference of paired
  proportions. G and B are the two discordant cells of a paired 2x2 table (S the
  concordant ones), so GSB = p_G − p_B has variance (p_G + p_B − (p_G − p_B)²) / n. The
  interval adds 0.5 to G and to B and 1 to S (n + 2) before that Wald formula, which
  keeps a sensible width when a round has few judgments or none on one side, and is
  clipped to [−1, 1]. The exact coverage of the 95% interval is 93.7–95.5% for 20 to 150
  judgments per round, higher (conservative, up to 98%) when only a handful of them are
  G or B (``tests/test_gsb.py`` checks it, exactly and in simulation).
* p: two-sided exact sign test of G against B, S (ties) left out:
  ``scipy.stats.binomtest(G, G + B, 0.5).pvalue``; 1 when G + B = 0.

>>> j = read_gsb([("may.csv", b"round,query,judgment\\n2026-05,q1,G\\n2026-05,q2,good\\n"
...                           b"2026-05,q3,same\\n2026-05,q4,<\\n")])
>>> gsb_by_round(j)[["round", "good", "same", "bad", "gsb"]].to_dict("records")
[{'round': '2026-05', 'good': 2, 'same': 1, 'bad': 1, 'gsb': 0.25}]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from numpy.typing import ArrayLike, NDArray
from scipy import stats

from ..errors import DataWarning, FormatError, Problem, invalid_parameter
from ..io import RawTable, SourceLike, read_table, table_from_arrow
from ..io.columns import LABEL_ALIASES
from ..io.guard import clean_errors
from ..params import OPEN_UNIT, InstanceOf, check
from .label_table import ordered_rounds

__all__ = [
    "GSB_ALIASES",
    "GSB_COLUMNS",
    "GSB_DEFINITION",
    "GSB_WORDS",
    "GsbJudgments",
    "gsb_by_rater",
    "gsb_by_round",
    "gsb_from_counts",
    "read_gsb",
]

GSB_ALIASES: dict[str, tuple[str, ...]] = {
    "round": LABEL_ALIASES["round"],
    "query": LABEL_ALIASES["query"],
    "judgment": ("judgment", "judgement", "gsb", "preference", "pref", "verdict", "label"),
    "rater": LABEL_ALIASES["rater"],
}
"""Accepted column names of a GSB file, per column (first match wins, case-insensitive)."""

_REQUIRED = ("round", "query", "judgment")

GSB_WORDS: dict[str, str] = {
    "g": "G", "good": "G", "better": "G", ">": "G", "+1": "G", "1": "G",
    "s": "S", "same": "S", "=": "S", "0": "S",
    "b": "B", "bad": "B", "worse": "B", "<": "B", "-1": "B",
}
"""Judgment text (trimmed, lower case) -> ``"G"``, ``"S"`` or ``"B"``; a number equal to
1, 0 or -1 (``1.0``, ``-1``) is read as ``+1/0/-1`` too."""

_EXPECTED = "G/S/B, good/same/bad, better/same/worse, >/=/< or +1/0/-1 (any case)"

GSB_COLUMNS = ("round", "good", "same", "bad", "gsb", "ci_low", "ci_high", "p")
"""Columns of :func:`gsb_by_round` (:func:`gsb_by_rater` adds ``rater`` after ``round``)."""

GSB_DEFINITION = (
    "GSB = (G - B) / (G + S + B) over the round's judgments (G: the new system is better, "
    "S: same, B: worse; every judgment counts once, raters pooled); interval: Agresti-Min "
    "adjusted Wald interval for a difference of paired proportions (0.5 added to G and "
    "to B, 1 to S), clipped to [-1, 1]; p: two-sided exact sign test of G against B, "
    "S left out (1 when G + B = 0)")
"""What every number of :func:`gsb_by_round` means (also in ``DataFrame.attrs``)."""

_CODES = np.array(["G", "S", "B"], dtype=object)


def _readonly(values: NDArray[np.object_]) -> NDArray[np.object_]:
    values.setflags(write=False)
    return values


@dataclass(frozen=True, eq=False)
class GsbJudgments:
    """Side-by-side judgments, one per (round, query, rater), as read-only arrays.

    Attributes
    ----------
    round, query:
        Round name and query id of each judgment (str).
    judgment:
        ``"G"``, ``"S"`` or ``"B"`` (str).
    rater:
        Who judged (str; ``""`` when the input has no rater column).
    has_rater:
        Whether the input had a rater column.
    sources:
        The names of the files (or frames) read.
    warnings:
        Soft problems, e.g. rows with an empty judgment, which are left out.
    """

    round: NDArray[np.object_]
    query: NDArray[np.object_]
    judgment: NDArray[np.object_]
    rater: NDArray[np.object_]
    has_rater: bool = False
    sources: tuple[str, ...] = ()
    warnings: tuple[DataWarning, ...] = field(default=())

    def __len__(self) -> int:
        return len(self.judgment)

    @property
    def rounds(self) -> tuple[str, ...]:
        """The rounds, in time order (:func:`~ireval_core.labels.label_table.ordered_rounds`)."""
        return tuple(ordered_rounds(self.round))

    @property
    def raters(self) -> tuple[str, ...]:
        """The raters, sorted (``("",)`` without a rater column)."""
        return tuple(sorted(str(r) for r in pd.unique(self.rater)))

    @property
    def table(self) -> pd.DataFrame:
        """A fresh DataFrame ``round, query, judgment, rater`` (the input order)."""
        return pd.DataFrame({"round": self.round, "query": self.query,
                             "judgment": self.judgment, "rater": self.rater})

    @classmethod
    def from_frame(cls, frame: pd.DataFrame, *, name: str = "<frame>") -> GsbJudgments:
        """Judgments from a DataFrame with the columns of a GSB file (same names,
        mapping and checks as :func:`read_gsb`; rows are located as ``row N``).

        >>> f = pd.DataFrame({"round": ["r1", "r1"], "qid": ["a", "b"], "gsb": [1, -1]})
        >>> GsbJudgments.from_frame(f).judgment.tolist()
        ['G', 'B']
        """
        if not isinstance(frame, pd.DataFrame):
            raise invalid_parameter("frame", "GsbJudgments.from_frame", "a pandas DataFrame",
                                    type(frame).__name__, error=TypeError)
        frame = frame.reset_index(drop=True)
        try:
            arrow = pa.Table.from_pandas(frame, preserve_index=False)
        except (pa.ArrowException, TypeError, ValueError):  # mixed types in a column
            text = frame.astype(object).where(frame.notna(), None)
            arrow = pa.Table.from_pandas(text.map(lambda v: v if v is None else str(v)),
                                         preserve_index=False)
        raw = table_from_arrow(arrow, name, GSB_ALIASES, required=_REQUIRED, kind="GSB")
        return _build([raw])


_JUDGMENTS = InstanceOf(GsbJudgments, "GsbJudgments (from read_gsb)")


# ----------------------------------------------------------------------------- reading


@clean_errors
def read_gsb(sources: Sequence[SourceLike] | SourceLike) -> GsbJudgments:
    """Read side-by-side judgments from one or many files.

    Parameters
    ----------
    sources:
        Paths, bytes, binary file objects or ``(name, bytes)`` uploads (a single one is
        accepted too); CSV, TSV, Excel ``.xlsx`` or Parquet, gzip detected.

    Returns
    -------
    GsbJudgments
        Every judgment mapped to ``G``/``S``/``B``. A row with an empty judgment is
        left out, with a ``gsb-empty-judgment`` warning.

    Raises
    ------
    FormatError
        ``file:line: message`` (Excel: ``file, sheet 'S', row N``) for a missing column,
        an empty round or query, an unknown judgment (named, with its first lines), or a
        second judgment of the same (round, query, rater) (both places named).

    Examples
    --------
    >>> j = read_gsb(("june.tsv", b"month\\tqid\\tpreference\\trater\\n"
    ...                            b"2026-06\\tq1\\tBetter\\tann\\n2026-06\\tq1\\t=\\tbob\\n"))
    >>> j.judgment.tolist(), j.rater.tolist(), j.rounds
    (['G', 'S'], ['ann', 'bob'], ('2026-06',))
    """
    if isinstance(sources, str | Path | bytes | bytearray | memoryview) or (
            isinstance(sources, tuple) and len(sources) == 2 and isinstance(sources[0], str)
            and isinstance(sources[1], bytes | bytearray | memoryview)) or hasattr(
            sources, "read"):
        sources = [sources]  # type: ignore[list-item]
    items = list(sources)
    if not items:
        raise invalid_parameter("sources", "read_gsb", "a non-empty sequence of files",
                                sources)
    tables = [read_table(s, GSB_ALIASES, required=_REQUIRED, kind="GSB") for s in items]
    return _build(tables)


def _where(tables: Sequence[RawTable], starts: NDArray[np.int64], row: int
           ) -> tuple[RawTable, int]:
    i = int(np.searchsorted(starts, row, side="right")) - 1
    return tables[i], int(row - starts[i])


def _error(tables: Sequence[RawTable], starts: NDArray[np.int64], row: int,
           message: str) -> FormatError:
    table, local = _where(tables, starts, row)
    return table.error(local, message)


def _at(tables: Sequence[RawTable], starts: NDArray[np.int64], row: int,
        relative_to: int) -> str:
    """``line 5`` in the same file as ``relative_to``, else ``file:5``."""
    table, local = _where(tables, starts, row)
    if _where(tables, starts, relative_to)[0] is table:
        return table.short(local)
    return table.location(local)


def _text(tables: Sequence[RawTable], key: str) -> pa.ChunkedArray:
    parts = [t.text(key) if key in t.columns else pa.chunked_array(
        [pa.array([""] * t.n_rows, pa.string())]) for t in tables]
    chunks = [c.cast(pa.large_string()) for p in parts for c in p.chunks]
    return pa.chunked_array(chunks, type=pa.large_string())


def _judgment_codes(raw: pa.ChunkedArray) -> tuple[NDArray[np.int64], list[str]]:
    """Codes 0 (G), 1 (S), 2 (B), -1 (empty), -2 (unknown) of each judgment text, and
    the distinct texts; one mapping per distinct text, not per row."""
    norm = pc.utf8_lower(pc.utf8_trim_whitespace(raw)).combine_chunks()
    encoded = pc.dictionary_encode(norm)
    distinct = [str(v) for v in encoded.dictionary.to_pylist()]
    lookup = np.empty(len(distinct), dtype=np.int64)
    for i, text in enumerate(distinct):  # a loop over distinct judgment texts
        word = GSB_WORDS.get(text)
        if word is None and text:
            try:
                number = float(text)
            except ValueError:
                number = float("nan")
            word = {1.0: "G", 0.0: "S", -1.0: "B"}.get(number)
        lookup[i] = -1 if not text else (-2 if word is None else "GSB".index(word))
    codes = np.asarray(encoded.indices, dtype=np.int64)
    return (lookup[codes] if len(codes) else codes), distinct


_KEPT = 10_000  # problems of the files kept in one error (all are counted)


class _Found:
    """The problems of the files: kept up to :data:`_KEPT`, all counted."""

    def __init__(self, tables: Sequence[RawTable], starts: NDArray[np.int64]) -> None:
        self.tables, self.starts = tables, starts
        self.kept: list[Problem] = []
        self.count = 0

    def rows(self, rows: NDArray[np.int64], message: Callable[[int], str]) -> None:
        """A problem at each of ``rows`` (ascending), worded by ``message(row)``."""
        take = rows[: max(_KEPT - len(self.kept), 0)]
        for i, table in enumerate(self.tables):  # find the lines of a file in one pass
            mine = take[(take >= self.starts[i]) & (take < self.starts[i + 1])]
            if len(mine):
                table.where(int(mine.max() - self.starts[i]))
        for row in take:
            table, local = _where(self.tables, self.starts, int(row))
            self.kept.append(table.problem(local, message(int(row))))
        self.count += len(rows)

    def raise_all(self) -> None:
        if self.count:
            raise FormatError.of(self.kept, count=self.count)


def _fixed(message: str) -> Callable[[int], str]:
    """The same message for every row."""
    return lambda row: message


def _build(tables: Sequence[RawTable]) -> GsbJudgments:
    """The judgments of the files; every problem of them reported at once (in the order
    of the checks, by line within each)."""
    starts = np.concatenate(([0], np.cumsum([t.n_rows for t in tables]))).astype(np.int64)
    found = _Found(tables, starts)
    rounds = _text(tables, "round")
    queries = _text(tables, "query")
    raw_judgment = _text(tables, "judgment")
    has_rater = any("rater" in t.columns for t in tables)
    raters = _text(tables, "rater")
    for key, column in (("round", rounds), ("query", queries)):
        empty = np.asarray(pc.equal(pc.utf8_trim_whitespace(column), ""), dtype=bool)
        found.rows(np.flatnonzero(empty), _fixed(f"empty {key}; every judgment needs a round "
                                                 "and a query"))
    codes, distinct = _judgment_codes(raw_judgment)
    unknown = codes == -2
    if unknown.any():
        norm = pc.utf8_lower(pc.utf8_trim_whitespace(raw_judgment))
        firsts = []
        seen: set[str] = set()
        for row in np.flatnonzero(unknown):  # one problem per unknown text
            text = raw_judgment[int(row)].as_py()
            if text.strip().lower() not in seen:
                seen.add(text.strip().lower())
                firsts.append(int(row))
            if len(firsts) >= _KEPT:
                break

        def unknown_judgment(row: int) -> str:
            text = raw_judgment[row].as_py()
            same = pc.equal(norm, text.strip().lower())
            rows = np.flatnonzero(np.asarray(same, dtype=bool))[:3]
            table = _where(tables, starts, row)[0]
            places = [_where(tables, starts, int(r)) for r in rows]
            shown = [t.short(i) for t, i in places if t is table]
            if all(s.startswith("line ") for s in shown):
                shown = [("line " if len(shown) == 1 else "lines ") + ", ".join(
                    s[5:] for s in shown)]
            return f"unknown judgment {text!r} (at {'; '.join(shown)}); expected {_EXPECTED}"

        found.rows(np.asarray(firsts, dtype=np.int64), unknown_judgment)
    found.raise_all()
    warnings: list[DataWarning] = [w for t in tables for w in t.warnings]  # encoding, sheets
    empty = codes == -1
    if empty.any():
        first = _where(tables, starts, int(np.argmax(empty)))
        warnings.append(DataWarning(
            "gsb-empty-judgment", f"{int(empty.sum())} row(s) have no judgment and are left "
            f"out (first at {first[0].location(first[1])})", source=first[0].name,
            count=int(empty.sum())))
    keep = ~empty
    r = np.asarray(rounds.to_numpy(zero_copy_only=False), dtype=object)
    q = np.asarray(queries.to_numpy(zero_copy_only=False), dtype=object)
    who = np.asarray(raters.to_numpy(zero_copy_only=False), dtype=object)
    _check_duplicates(found, r, q, who, keep, has_rater)
    found.raise_all()
    rows = np.flatnonzero(keep)
    return GsbJudgments(
        round=_readonly(r[rows]), query=_readonly(q[rows]),
        judgment=_readonly(_CODES[codes[rows]]), rater=_readonly(who[rows]),
        has_rater=has_rater, sources=tuple(t.name for t in tables), warnings=tuple(warnings))


def _check_duplicates(found: _Found, r: NDArray[np.object_], q: NDArray[np.object_],
                      who: NDArray[np.object_], keep: NDArray[np.bool_], has_rater: bool
                      ) -> None:
    """Each (round, query, rater) judged again is a problem naming the first place."""
    rows = np.flatnonzero(keep)
    if len(rows) < 2:
        return
    frame = pd.DataFrame({"r": r[rows], "q": q[rows], "w": who[rows]})
    dup = frame.duplicated(keep="first").to_numpy()
    if not dup.any():
        return
    group = frame.groupby(["r", "q", "w"], sort=False).ngroup().to_numpy()
    first_of = np.full(int(group.max()) + 1, -1, dtype=np.int64)
    order = np.arange(len(group))[::-1]
    first_of[group[order]] = order  # the last written wins: the first row of each group
    by_row = dict(zip(rows[dup].tolist(), rows[first_of[group[dup]]].tolist(), strict=True))
    fix = "" if has_rater else "; with several raters, add a rater column"

    def duplicate(second: int) -> str:
        first = by_row[second]
        by = f"rater {who[second]!r}, " if has_rater else ""
        return (f"duplicate judgment for {by}query {q[second]!r} of round {r[second]!r} "
                f"(first at {_at(found.tables, found.starts, first, second)}){fix}")

    found.rows(rows[dup], duplicate)


# ----------------------------------------------------------------------------- statistics


def _as_counts(values: ArrayLike, name: str) -> NDArray[np.int64]:
    arr = np.atleast_1d(np.asarray(values))
    if arr.dtype.kind not in "iuf" or arr.ndim != 1 or not np.isfinite(arr).all() or (
            arr < 0).any() or (arr != np.round(arr)).any():
        raise invalid_parameter(name, "gsb_from_counts", "whole numbers >= 0", values)
    return arr.astype(np.int64)


def gsb_from_counts(good: ArrayLike, same: ArrayLike, bad: ArrayLike, *,
                    confidence_level: float = 0.95) -> pd.DataFrame:
    """GSB, its interval and the sign test from counts (vectorised over rows).

    Parameters
    ----------
    good, same, bad:
        Counts of G, S and B judgments (one number or aligned arrays).
    confidence_level:
        Two-sided level of the interval.

    Returns
    -------
    pandas.DataFrame
        Columns ``good, same, bad, gsb, ci_low, ci_high, p``, as defined in
        :data:`GSB_DEFINITION`: gsb = (G − B) / n, n = G + S + B; the Agresti–Min
        interval g' ± z √((p'_G + p'_B − g'²) / n') with G' = G + ½, B' = B + ½,
        n' = n + 2, p' = ·/n', g' = p'_G − p'_B, clipped to [−1, 1]; p = two-sided
        exact binomial test of G out of G + B at ½ (1 when G + B = 0). A row with
        n = 0 has NaN gsb and interval.

    Examples
    --------
    >>> r = gsb_from_counts(30, 50, 20).round(4).iloc[0].to_dict()
    >>> r["gsb"], r["ci_low"], r["ci_high"], r["p"]
    (0.1, -0.0379, 0.2339, 0.2026)
    """
    level = check(confidence_level, "confidence_level", "gsb_from_counts", OPEN_UNIT)
    g, s, b = (_as_counts(v, name) for v, name in ((good, "good"), (same, "same"),
                                                    (bad, "bad")))
    try:
        g, s, b = np.broadcast_arrays(g, s, b)
    except ValueError:
        raise invalid_parameter("bad", "gsb_from_counts", "as long as good and same",
                                f"{len(b)} counts") from None
    n = g + s + b
    z = float(stats.norm.ppf(0.5 + level / 2.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        point = np.where(n > 0, (g - b) / n, np.nan)
    n2 = n + 2.0
    pg, pb = (g + 0.5) / n2, (b + 0.5) / n2
    centre = pg - pb
    half = z * np.sqrt(np.maximum(pg + pb - centre ** 2, 0.0) / n2)
    low = np.where(n > 0, np.clip(centre - half, -1.0, 1.0), np.nan)
    high = np.where(n > 0, np.clip(centre + half, -1.0, 1.0), np.nan)
    m = g + b
    tail = stats.binom.cdf(np.minimum(g, b), np.maximum(m, 1), 0.5)
    p = np.where(m > 0, np.minimum(1.0, 2.0 * tail), 1.0)
    out = pd.DataFrame({"good": g.astype(np.int64), "same": s.astype(np.int64),
                        "bad": b.astype(np.int64), "gsb": point, "ci_low": low,
                        "ci_high": high, "p": p})
    out.attrs["definition"] = GSB_DEFINITION
    return out


def _counts(keys: NDArray[np.int64], n_keys: int, judgment: NDArray[np.object_]
            ) -> tuple[NDArray[np.int64], NDArray[np.int64], NDArray[np.int64]]:
    code = np.select([judgment == "G", judgment == "S"], [0, 1], 2).astype(np.int64)
    flat = np.bincount(keys * 3 + code, minlength=n_keys * 3).reshape(n_keys, 3)
    return flat[:, 0], flat[:, 1], flat[:, 2]


def gsb_by_round(judgments: GsbJudgments, *, confidence_level: float = 0.95
                 ) -> pd.DataFrame:
    """GSB per round, in time order: the trend across rounds.

    Every judgment of a round counts once (raters pooled). Columns :data:`GSB_COLUMNS`:
    ``round, good, same, bad, gsb, ci_low, ci_high, p``, defined in
    :func:`gsb_from_counts` and :data:`GSB_DEFINITION` (also in ``.attrs``).

    Examples
    --------
    >>> f = pd.DataFrame({"round": ["2026-06"] * 3 + ["2026-05"] * 2,
    ...                   "query": ["a", "b", "c", "a", "b"],
    ...                   "judgment": ["G", "G", "B", "S", "B"]})
    >>> t = gsb_by_round(GsbJudgments.from_frame(f))
    >>> t[["round", "good", "same", "bad", "gsb", "p"]].round(4).values.tolist()
    [['2026-05', 0, 1, 1, -0.5, 1.0], ['2026-06', 2, 0, 1, 0.3333, 1.0]]
    """
    j = check(judgments, "judgments", "gsb_by_round", _JUDGMENTS)
    level = check(confidence_level, "confidence_level", "gsb_by_round", OPEN_UNIT)
    names = ordered_rounds(j.round) if len(j) else []
    codes = pd.Index(names).get_indexer(j.round).astype(np.int64)
    g, s, b = _counts(codes, len(names), j.judgment)
    out = gsb_from_counts(g, s, b, confidence_level=level)
    out.insert(0, "round", np.asarray(names, dtype=object))
    out.attrs["definition"] = GSB_DEFINITION
    return out


def gsb_by_rater(judgments: GsbJudgments, *, confidence_level: float = 0.95
                 ) -> pd.DataFrame:
    """GSB per (round, rater): does one rater prefer the new system more than the others?

    Columns ``round, rater`` then those of :func:`gsb_by_round`; rounds in time order,
    raters sorted; only (round, rater) pairs with judgments. Without a rater column
    there is one rater, ``""``.

    Examples
    --------
    >>> f = pd.DataFrame({"round": "r1", "query": ["a", "a", "b"],
    ...                   "rater": ["ann", "bob", "ann"], "judgment": ["G", "S", "G"]})
    >>> gsb_by_rater(GsbJudgments.from_frame(f))[["rater", "good", "same", "gsb"]
    ...                                          ].values.tolist()
    [['ann', 2, 0, 1.0], ['bob', 0, 1, 0.0]]
    """
    j = check(judgments, "judgments", "gsb_by_rater", _JUDGMENTS)
    level = check(confidence_level, "confidence_level", "gsb_by_rater", OPEN_UNIT)
    rounds = ordered_rounds(j.round) if len(j) else []
    raters = sorted(str(r) for r in pd.unique(j.rater))
    rc = pd.Index(rounds).get_indexer(j.round).astype(np.int64)
    wc = pd.Index(raters).get_indexer(j.rater).astype(np.int64)
    n_raters = max(len(raters), 1)
    g, s, b = _counts(rc * n_raters + wc, len(rounds) * n_raters, j.judgment)
    has = np.flatnonzero(g + s + b > 0)
    out = gsb_from_counts(g[has], s[has], b[has], confidence_level=level)
    out.insert(0, "rater", np.asarray(raters, dtype=object)[has % n_raters] if len(has)
               else np.zeros(0, dtype=object))
    out.insert(0, "round", np.asarray(rounds, dtype=object)[has // n_raters] if len(has)
               else np.zeros(0, dtype=object))
    out.attrs["definition"] = GSB_DEFINITION.replace("raters pooled", "per rater")
    return out
