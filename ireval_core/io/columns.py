"""The column-alias table: every name a reader accepts for each column, in one place.

Column names are matched case-insensitively, the first alias found wins. Qrels and
runs (:data:`ALIASES`), labeling and GSB tables (:data:`LABEL_ALIASES`) and query
metadata (:data:`QUERY_ALIASES`, :data:`SYSTEM_ALIASES`, :data:`WEIGHT_ALIASES`) share
the id columns' names; their value columns differ (a run's ``score``, a label's
``label``, a metadata file's ``weight``). :func:`choose_columns` picks the columns of
a qrels or run table (with the errors naming what is missing), :func:`resolve` those of
a labeling table.

>>> resolve(["Month", "QID", "docno", "pos", "grade"], LABEL_ALIASES)["round"]
'Month'
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

from ..errors import DataWarning, FormatError
from .source import Source

__all__ = ["ALIASES", "LABEL_ALIASES", "LABEL_STUDIO_CONTROLS", "LABEL_STUDIO_FIELDS",
           "LATENCY", "MISSING_TAGS", "QUERY_ALIASES", "QUEPID_RATER_ALIASES",
           "REQUIRED_LABEL_COLUMNS", "SYSTEM_ALIASES", "TEXT_KEYS", "TEXT_WORD", "TREC_COLUMNS",
           "VALUE_KEY", "VALUE_WORD", "WEIGHT_ALIASES", "Kind", "choose_columns", "from_rank",
           "resolve"]

Kind = Literal["qrels", "run"]

# ----------------------------------------------------------------------------- qrels and runs

TREC_COLUMNS = {
    "qrels": ("qid", "iter", "docid", "rel"),
    "run": ("qid", "Q0", "docid", "rank", "score", "tag"),
}
"""The columns of a TREC qrels or run line, in order."""
ALIASES = {
    "qid": ("qid", "query_id", "query", "topic", "topic_id", "queryid", "q_id"),
    "docid": ("docid", "doc_id", "docno", "document_id", "doc", "pid", "passage_id", "corpus_id"),
    "rel": ("rel", "relevance", "label", "grade", "judgment", "judgement"),
    "score": ("score", "sim", "similarity"),
    "tag": ("tag", "run", "run_id", "run_name", "system"),
    "rank": ("rank",),
}
"""Accepted column names of qrels and runs (CSV/TSV headers, Parquet), per column."""
VALUE_KEY = {"qrels": "rel", "run": "score"}
"""The value column of each kind of file."""
VALUE_WORD = {"rel": "grade", "score": "score", "rank": "rank"}
"""A value column's values, named in messages."""
TEXT_KEYS = ("qid", "docid", "tag")
"""The text columns (ids and tags), checked as text and never type-inferred."""
TEXT_WORD = {"qid": "query id", "docid": "document id", "tag": "tag"}
"""A text column's values, named in messages."""
MISSING_TAGS = frozenset({"", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"})
"""Tag cells that mean "no tag": the line belongs to the run named after the file."""

# ----------------------------------------------------------------------------- labeling tables

LABEL_ALIASES: dict[str, tuple[str, ...]] = {
    "round": ("round", "month", "date", "period", "batch"),
    "query": ALIASES["qid"],
    "doc": ALIASES["docid"],
    "position": ("position", "pos", "rank"),
    "label": ("label", "grade", "rel", "relevance", "rating", "judgment", "judgement"),
    "rater": ("rater", "annotator", "judge", "labeler", "labeller", "worker"),
    "system": ("system", "bucket", "arm", "tag", "run"),
    "score": ("score", "model_score", "prob"),
    "segment": ("segment", "bucket_type", "traffic", "tier"),
    "weight": ("weight", "sampling_weight", "w"),
}
"""Accepted column names of a labeling file, per column (first match wins); ids as in
qrels and runs."""
REQUIRED_LABEL_COLUMNS = ("round", "query", "doc", "position", "label")
"""Columns every labeling file must have."""

# ----------------------------------------------------------------------------- labeling tools

LABEL_STUDIO_FIELDS: dict[str, tuple[str, ...]] = {
    "round": LABEL_ALIASES["round"],
    "query": LABEL_ALIASES["query"] + ("query_text", "q", "keyword", "search_query"),
    "doc": LABEL_ALIASES["doc"] + ("url", "doc_url", "document_url", "link", "document"),
    "position": LABEL_ALIASES["position"],
    "system": LABEL_ALIASES["system"],
    "score": LABEL_ALIASES["score"],
    "segment": LABEL_ALIASES["segment"],
    "weight": LABEL_ALIASES["weight"],
}
"""Keys of a Label Studio task's ``data`` read as the labeling columns (case-insensitive,
first match wins): the labeling file's column names, and what a project's labeling
config usually names its ``$variables`` (``url`` for the document, ``query_text``)."""
LABEL_STUDIO_CONTROLS: tuple[str, ...] = LABEL_ALIASES["label"]
"""``from_name`` of the control preferred for the label when an annotation holds several
(``choices``, ``rating`` or ``number`` results)."""
QUEPID_RATER_ALIASES: tuple[str, ...] = LABEL_ALIASES["rater"] + ("user", "email",
                                                                   "user_email")
"""Names of the rater column of a long Quepid ratings CSV (``query,docid,rating,user``)."""

# ----------------------------------------------------------------------------- query metadata

QUERY_ALIASES: tuple[str, ...] = ALIASES["qid"]
"""Accepted names of the query id column (those of qrels and runs)."""
SYSTEM_ALIASES: tuple[str, ...] = ALIASES["tag"]
"""Accepted names of the system column of long latencies (a run tag's)."""
WEIGHT_ALIASES: tuple[str, ...] = ("weight", "traffic", "traffic_weight", "frequency")
"""Accepted names of the traffic weight column."""

LATENCY = "latency_ms"
"""Name of the latency column (long layout), prefix or suffix of a wide column."""


def choose_columns(names: Iterable[str], src: Source, kind: Kind, header_line: int | None
                    ) -> tuple[dict[str, str], list[DataWarning]]:
    """The column used for each of qid, docid, rel|score (+ tag): key -> column name.

    When a run has no score column but a rank column, ``"score"`` maps to the rank
    column (to be negated), with a ``score-from-rank`` warning.
    """
    by_lower: dict[str, list[str]] = {}
    for c in names:
        by_lower.setdefault(str(c).strip().lower(), []).append(c)
    found: dict[str, str] = {}
    for key, aliases in ALIASES.items():
        for a in aliases:
            if a in by_lower:
                found[key] = a
                break
    warnings: list[DataWarning] = []
    if kind == "run" and "score" not in found and "rel" in found and "rank" not in found:
        raise FormatError("this looks like qrels (a relevance column and no score), but a run "
                          "was expected", source=src.name, line=header_line)
    if kind == "qrels" and "rel" not in found and "score" in found:
        raise FormatError("this looks like a run (a score column and no relevance), but qrels "
                          "were expected", source=src.name, line=header_line)
    need = ["qid", "docid", VALUE_KEY[kind]]
    if kind == "run" and "score" not in found and "rank" in found:
        warnings.append(DataWarning("score-from-rank", "no score column: ranking by the rank "
                                    "column (score = -rank)", src.name))
        found["score"] = found["rank"]
    missing = [k for k in need if k not in found]
    if missing:
        expected = "; ".join(f"{k}: one of {', '.join(ALIASES[k])}" for k in missing)
        if not found and all(_is_number(str(n)) for n in names):  # data where a header goes
            row = ("qid, docid, rel" if kind == "qrels" else
                   "qid, docid, score, tag; or qid, docid, rank for an MS MARCO run of qid, "
                   "pid and rank")
            raise FormatError(f"the first line {list(names)} is data, not a header: a CSV or "
                              f"TSV file starts with a header row naming its columns ({row})",
                              source=src.name, line=header_line)
        raise FormatError(f"missing column(s) in header {list(names)}; expected "
                          f"{expected}", source=src.name, line=header_line)
    keys = need + (["tag"] if kind == "run" and "tag" in found else [])
    chosen = {}
    for k in keys:
        columns = by_lower[found[k]]
        if len(columns) > 1:
            raise FormatError(f"column {columns[0]!r} appears {len(columns)} times in the "
                              "header; each column may appear once", source=src.name,
                              line=header_line)
        chosen[k] = columns[0]
    return chosen, warnings


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def from_rank(warnings: list[DataWarning]) -> bool:
    """Whether the score column is the rank column (to be negated)."""
    return any(w.code == "score-from-rank" for w in warnings)


def resolve(header: Sequence[str], aliases: Mapping[str, Sequence[str]]) -> dict[str, str]:
    """Canonical name -> the header's column, for every key of ``aliases`` found.

    Names are compared trimmed, lower-cased and without a byte order mark; the first
    alias found wins, and a column serves one key only.
    """
    lower: dict[str, str] = {}
    for h in header:
        lower.setdefault(str(h).strip().lower().lstrip("\ufeff"), h)
    found: dict[str, str] = {}
    for key, names in aliases.items():
        for a in names:
            if a in lower and lower[a] not in found.values():
                found[key] = lower[a]
                break
    return found
