"""Judgments given on the Judging page: the file that keeps them, the qrels they make,
the second rater's share, the raters' agreement and the exports.

A judging session's labels are kept in a dataset of the workspace as one labeling file
(kind ``labels``) named ``judging <round>.tsv``: a tab-separated table with a header
``round  query  doc  label  rater  time`` and one row per document judged (the latest
label when a document was judged again). The round names the session
(``judging 2026-11-28T20:41:07Z ana``): each session adds its own round, and rewrites its
own file as labels arrive. A **"can't tell"** is recorded as a row with an empty label
(a :class:`Judgment` whose grade is NaN): who said it and when are kept, but it is not
a grade: it enters neither the qrels nor the agreement, and the document stays
unjudged for the other raters.

**Several raters per document** (:data:`AGGREGATION`): each rater's latest label of a
document counts (the latest ``time``; rows of the same time, the later given); the
document's grade is the **median of the raters' grades, the lower middle grade when
their number is even** (two raters: the lower grade). The qrels of a dataset version
are its qrels file with the graded documents of its judging files added
(:func:`with_judgments`): a document the qrels file already judges keeps that grade.

**The overlap** (:func:`in_overlap`): a fixed share of the documents, chosen by a hash
of the query and document id (the same documents for every rater and session, about
that share of any set of documents), is served to a second rater once a first one has
graded it (:func:`second_rater_items`). The agreement on them is the rater analysis of
:mod:`ireval_core.labels.agreement` (:func:`agreement`), every judging file read as one
round.

**Exports**: the judged labels as TREC qrels (:func:`judged_qrels`,
:func:`trec_qrels`), and as the labeling table the Monthly labeling pages read
(:func:`labeling_table`, :func:`labeling_csv`: one row per rater's label and system
that ranks the document, its position there; cells a spreadsheet would take as a
formula are escaped, and the column ``ireval_escaped`` names them in each row, so that
ireval reading the table back takes off exactly the quotes it added).

>>> rows = [Judgment("q1", "d9", 2.0, "ana", "2026-11-28T20:41:07Z")]
>>> data = judgments_file("judging 1", rows)
>>> data.splitlines()[1]
b'judging 1\\tq1\\td9\\t2\\tana\\t2026-11-28T20:41:07Z'
>>> read_judgments_file(data) == rows
True
>>> from ireval_core import Qrels
>>> merged = with_judgments(Qrels.from_dict({"q1": {"d1": 1}}), rows)
>>> merged.to_dict()
{'q1': {'d1': 1.0, 'd9': 2.0}}
>>> trec_qrels(merged)
b'q1 0 d1 1\\nq1 0 d9 2\\n'
>>> aggregate(rows + [Judgment("q1", "d9", 1.0, "bo", "2026-11-28T20:45:00Z")])
{('q1', 'd9'): 1.0}
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..data import Qrels, Run
from ..errors import FormatError
from ..escape import csv_frame_marked
from ..labels.agreement import RaterReport, rater_report
from ..labels.labelmap import BUILTIN_LABEL_MAPS, LabelMap

__all__ = ["AGGREGATION", "AGREEMENT_ROUND", "CANT_TELL", "DEFAULT_NAMES", "FILE_PREFIX",
           "HEADER", "LABELING_COLUMNS", "MERGE_RULE", "Judgment", "aggregate", "agreement",
           "agreement_table", "grade_names", "in_overlap", "is_judging_file",
           "judged_qrels", "judgments_file", "label_map_of", "labeling_csv", "labeling_table",
           "read_judgments_file", "round_file_name", "second_rater_items", "trec_qrels",
           "with_judgments"]

AGGREGATION = ("each rater's latest label counts; a document's grade is the median of "
               "its raters' grades, the lower middle grade when their number is even "
               "(two raters: the lower grade); \"can't tell\" is not a grade")

MERGE_RULE = "1"
"""Changes whenever the qrels a dataset's judging files give change for the same files
(:func:`read_judgments_file`, :func:`with_judgments`, :data:`AGGREGATION`,
:func:`trec_qrels`): the app keys the merged qrels it caches by the files' SHA-256s and
this rule, without reading them."""
"""The rule that makes one grade of several raters' labels, in words."""

CANT_TELL = float("nan")
"""The grade of a "can't tell" (written as an empty label cell)."""

DEFAULT_NAMES = BUILTIN_LABEL_MAPS["none/low/mid/high"]
"""The product's default scale: 0 none, 1 low, 2 mid, 3 high."""

AGREEMENT_ROUND = "judging"
"""The round every judging file is read as for the agreement (one unit per document)."""

LABELING_COLUMNS = ("round", "system", "query", "doc", "position", "label", "rater")
"""The columns of :func:`labeling_table`."""

FILE_PREFIX = "judging "
"""The name of every judging file starts with this."""

HEADER = ("round", "query", "doc", "label", "rater", "time")
"""The columns of a judging file, in order."""

_BAD = re.compile(r"[\t\r\n]")


@dataclass(frozen=True)
class Judgment:
    """One document judged: its query, id, grade (a qrels grade), who and when (UTC,
    ISO 8601)."""

    query: str
    doc: str
    grade: float
    """A qrels grade; NaN for "can't tell" (:data:`CANT_TELL`)."""
    rater: str
    time: str

    @property
    def cant_tell(self) -> bool:
        """Whether this is a "can't tell" (no grade)."""
        return math.isnan(self.grade)

    def __eq__(self, other: object) -> bool:  # NaN grades (can't tell) are equal
        if not isinstance(other, Judgment):
            return NotImplemented
        return (self.query, self.doc, self.rater, self.time) == (
            other.query, other.doc, other.rater, other.time) and (
            self.grade == other.grade or (self.cant_tell and other.cant_tell))

    def __hash__(self) -> int:
        return hash((self.query, self.doc, self.rater, self.time))


def round_file_name(round_name: str) -> str:
    """The judging file of a round: ``judging <round>.tsv`` (``round_name`` without the
    prefix)."""
    return f"{FILE_PREFIX}{round_name}.tsv"


def is_judging_file(name: str) -> bool:
    """Whether a dataset file of that name is a judging file."""
    return name.startswith(FILE_PREFIX) and name.endswith(".tsv")


def _grade_text(grade: float) -> str:
    if math.isnan(grade):
        return ""
    return str(int(grade)) if float(grade).is_integer() else repr(float(grade))


def judgments_file(round_name: str, rows: Iterable[Judgment]) -> bytes:
    """The judging file of ``rows`` (UTF-8 TSV with :data:`HEADER`)."""
    lines = ["\t".join(HEADER)]
    for j in rows:
        cells = (round_name, j.query, j.doc, _grade_text(j.grade), j.rater, j.time)
        if any(_BAD.search(c) for c in cells):
            raise ValueError(f"a tab or line break in {cells!r}: a judging file's cells "
                             "are one line of text")
        lines.append("\t".join(cells))
    return ("\n".join(lines) + "\n").encode("utf-8")


def read_judgments_file(data: bytes, name: str = "judging file") -> list[Judgment]:
    """The rows of a judging file; a :class:`~ireval_core.errors.FormatError` naming the
    file and line when it is not one."""
    lines = data.decode("utf-8").splitlines()
    if not lines or tuple(lines[0].split("\t")) != HEADER:
        raise FormatError(f"{name}:1: expected the header {' '.join(HEADER)!r}")
    out = []
    for n, line in enumerate(lines[1:], start=2):
        cells = line.split("\t")
        if len(cells) != len(HEADER):
            raise FormatError(f"{name}:{n}: expected {len(HEADER)} tab-separated cells, "
                              f"found {len(cells)}")
        try:
            grade = float(cells[3]) if cells[3].strip() else CANT_TELL
            if not (grade >= 0 or math.isnan(grade)) or math.isinf(grade):
                raise ValueError(grade)
        except ValueError:
            raise FormatError(f"{name}:{n}: expected a grade (a number >= 0) or an "
                              f"empty cell (can't tell) as the label, found "
                              f"{cells[3]!r}") from None
        out.append(Judgment(cells[1], cells[2], grade, cells[4], cells[5]))
    return out


def _entries(qrels: Qrels) -> tuple[list[str], list[str], np.ndarray]:
    docs = qrels.doc_ids.take(qrels.dcode).to_pylist() if len(qrels) else []
    return qrels.query_ids[qrels.qcode].tolist(), docs, qrels.grade


def _latest(judgments: Sequence[Judgment]) -> dict[tuple[str, str], dict[str, Judgment]]:
    """``(query, doc) -> rater -> their latest judgment`` (latest ``time``; the later
    given at the same time), documents and raters in the order they first appear."""
    out: dict[tuple[str, str], dict[str, Judgment]] = {}
    for j in judgments:
        by = out.setdefault((j.query, j.doc), {})
        old = by.get(j.rater)
        if old is None or j.time >= old.time:
            by[j.rater] = j
    return out


def _lower_median(grades: list[float]) -> float:
    ordered = sorted(grades)
    return ordered[(len(ordered) - 1) // 2]


def aggregate(judgments: Sequence[Judgment]) -> dict[tuple[str, str], float]:
    """``(query, doc) -> grade`` of every document some rater graded, by
    :data:`AGGREGATION` (documents only said "can't tell" of are left out)."""
    out: dict[tuple[str, str], float] = {}
    for key, by in _latest(judgments).items():
        grades = [j.grade for j in by.values() if not j.cant_tell]
        if grades:
            out[key] = _lower_median(grades)
    return out


def with_judgments(qrels: Qrels, judgments: Sequence[Judgment]) -> Qrels:
    """``qrels`` with the documents of ``judgments`` it does not judge added, each
    with its grade by :data:`AGGREGATION`; ``qrels`` itself when nothing is added."""
    q, d, g = _entries(qrels)
    known = set(zip(q, d, strict=True))
    added = {k: v for k, v in aggregate(judgments).items() if k not in known}
    if not added:
        return qrels
    return Qrels.from_arrays(q + [k[0] for k in added], d + [k[1] for k in added],
                             np.concatenate([g, np.fromiter(added.values(), dtype=np.float64)]),
                             source=qrels.source, warnings=qrels.warnings)


def judged_qrels(judgments: Sequence[Judgment]) -> Qrels:
    """The graded documents of ``judgments`` alone, by :data:`AGGREGATION`."""
    graded = aggregate(judgments)
    return Qrels.from_arrays([k[0] for k in graded], [k[1] for k in graded],
                             np.fromiter(graded.values(), dtype=np.float64, count=len(graded)),
                             source="judged")


def in_overlap(query: str, doc: str, share: float) -> bool:
    """Whether the document is in the overlap of ``share`` (0 to 1): a keyed hash of the
    query and document id, read as a number in [0, 1), is below ``share``. The same
    documents for every rater and session; about ``share`` of any set of documents.

    >>> in_overlap("q1", "d1", 0.0), in_overlap("q1", "d1", 1.0)
    (False, True)
    """
    digest = hashlib.sha256(f"ireval overlap\x1f{query}\x1f{doc}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64 < share


def second_rater_items(judgments: Sequence[Judgment], rater: str,
                       share: float) -> list[tuple[str, str]]:
    """The documents of the overlap (:func:`in_overlap`) that one rater, not ``rater``,
    has graded and nobody else has judged yet: what ``rater`` is asked to judge too, the
    oldest first. A document ``rater`` has judged (a "can't tell" included) is never
    among them."""
    if share <= 0:
        return []
    out: list[tuple[str, tuple[str, str]]] = []
    for key, by in _latest(judgments).items():
        if rater in by or len(by) != 1:
            continue
        (first,) = by.values()
        if not first.cant_tell and in_overlap(key[0], key[1], share):
            out.append((first.time, key))
    return [key for _, key in sorted(out, key=lambda t: t[0])]


def agreement_table(judgments: Sequence[Judgment]) -> pd.DataFrame:
    """The long label table (``round, query, doc, rater, label``) of each rater's latest
    grade of each document, every judging file as one round
    (:data:`AGREEMENT_ROUND`); "can't tell" left out."""
    rows = [(AGREEMENT_ROUND, q, d, j.rater, j.grade) for (q, d), by in
            _latest(judgments).items() for j in by.values() if not j.cant_tell]
    table = pd.DataFrame(rows, columns=["round", "query", "doc", "rater", "label"])
    return table.astype({"round": object, "query": object, "doc": object,
                         "rater": object, "label": np.float64})


def agreement(judgments: Sequence[Judgment]) -> RaterReport | None:
    """The rater analysis (:func:`~ireval_core.labels.agreement.rater_report`, the
    consensus a rater is scored against being the median of the others) of the
    documents two raters or more graded; ``None`` when there is none."""
    table = agreement_table(judgments)
    if not table.duplicated(["query", "doc"]).any():
        return None
    return rater_report(table, combine="median")


def grade_names(grades: Sequence[int], label_map: str = "") -> dict[int, str]:
    """The name of each grade: from ``label_map`` (a label map's text, see
    :class:`~ireval_core.labels.labelmap.LabelMap`) when given, else the product's
    default scale (:data:`DEFAULT_NAMES`); a grade the map does not name has none.

    >>> grade_names([0, 1, 2, 3])
    {0: 'none', 1: 'low', 2: 'mid', 3: 'high'}
    >>> grade_names([0, 1, 2], "bad=0,ok=1,great=2,perfect=3")
    {0: 'bad', 1: 'ok', 2: 'great'}
    >>> grade_names([0, 1, 2, 3, 4], "0-3")
    {}
    """
    m = LabelMap.parse(label_map) if label_map.strip() else DEFAULT_NAMES
    names = m.grade_names()
    return {g: names[float(g)] for g in grades if float(g) in names}


def label_map_of(files: Sequence[tuple[str, bytes]]) -> str:
    """The label map of labeling files (``(name, bytes)``, the dataset's own, judging
    files aside) as :func:`grade_names` takes it: the map their labels were read with
    when they are words (``"none/low/mid/high"``), ``""`` when they are numbers, there
    are none, or they cannot be read (the default names then)."""
    if not files:
        return ""
    from ..errors import IrevalError
    from ..labels.reader import read_judgments

    try:
        found = read_judgments(list(files), conflicts="latest").label_map
    except (IrevalError, ValueError):
        return ""
    if found.numeric:
        return ""
    return found.name if found.name in BUILTIN_LABEL_MAPS else found.describe()


def _positions(run: Run, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], int]:
    """The 1-based position of each ``(query, doc)`` in ``run`` (those it ranks)."""
    if not keys or not len(run.dcode):
        return {}
    index = {str(q): i for i, q in enumerate(run.query_ids.tolist())}
    docs = sorted({d for _, d in keys})
    codes = pc.index_in(run.doc_ids.cast(pa.string()), pa.array(docs, type=pa.string()))
    code_of: dict[str, int] = {}
    for code, at in enumerate(codes.to_pylist()):
        if at is not None:
            code_of.setdefault(docs[at], code)
    out: dict[tuple[str, str], int] = {}
    for q, d in keys:
        i, c = index.get(q), code_of.get(d)
        if i is None or c is None:
            continue
        start, stop = int(run.offsets[i]), int(run.offsets[i + 1])
        hit = np.flatnonzero(run.dcode[start:stop] == c)
        if len(hit):
            out[(q, d)] = int(hit[0]) + 1
    return out


def labeling_table(judgments: Sequence[Judgment], runs: Sequence[Run],
                   round_name: str = AGREEMENT_ROUND) -> tuple[pd.DataFrame, int]:
    """The judged labels as a labeling table (:data:`LABELING_COLUMNS`), and how many
    labels it leaves out.

    One row per rater's latest label of a document (a "can't tell" as an empty label)
    and per run that ranks the document, at its position there: the table the Monthly
    labeling pages read, every label in round ``round_name``. A label of a document no
    run ranks has no position and is left out (it is in the qrels export).
    """
    latest = [j for by in _latest(judgments).values() for j in by.values()]
    keys = list(dict.fromkeys((j.query, j.doc) for j in latest))
    where = [(run.name, _positions(run, keys)) for run in runs]
    rows, left_out = [], 0
    for j in latest:
        shown = [(name, pos[(j.query, j.doc)]) for name, pos in where
                 if (j.query, j.doc) in pos]
        left_out += not shown
        rows += [(round_name, name, j.query, j.doc, p, j.grade, j.rater) for name, p in shown]
    table = pd.DataFrame(rows, columns=list(LABELING_COLUMNS))
    return table.astype({"position": np.int64, "label": np.float64}), left_out


def labeling_csv(table: pd.DataFrame) -> bytes:
    """:func:`labeling_table`'s table as UTF-8 CSV, text cells a spreadsheet would read
    as a formula escaped and each row's escaped cells named in a last column
    (:func:`~ireval_core.escape.csv_frame_marked`: the labeling reader takes exactly those
    quotes off again), a "can't tell" as an empty label, grades written as in a qrels
    file."""
    out = csv_frame_marked(table.astype({"label": object}))
    out["label"] = [_grade_text(float(g)) for g in table["label"]]
    return out.to_csv(index=False, lineterminator="\n").encode("utf-8")


def trec_qrels(qrels: Qrels) -> bytes:
    """``qrels`` as a TREC qrels file (``query 0 doc grade``, sorted by query and doc)."""
    q, d, g = _entries(qrels)
    rows = sorted(zip(q, d, g.tolist(), strict=True))
    return "".join(f"{a} 0 {b} {_grade_text(c)}\n" for a, b, c in rows).encode("utf-8")
