"""Judgments given on the Judging page: the file that keeps them, and the qrels they make.

A judging session's labels are kept in a dataset of the workspace as one labeling file
(kind ``labels``) named ``judging <round>.tsv``: a tab-separated table with a header
``round  query  doc  label  rater  time`` and one row per document judged (the latest
grade when a document was graded again). It is a labeling table the Monthly labeling
readers accept (``round``, ``query``, ``doc``, ``label``, ``rater``), so the rater
analysis reads it as it reads any month. The round names the session
(``judging 2026-11-28T20:41:07Z ana``): each session adds its own round, and rewrites its
own file as labels arrive.

The qrels of a dataset version are its qrels file with the graded documents of its
judging files added (:func:`with_judgments`): a document the qrels file already judges
keeps that grade; among judging files, the later one decides.

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
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..data import Qrels
from ..errors import FormatError

__all__ = ["FILE_PREFIX", "HEADER", "Judgment", "is_judging_file", "judgments_file",
           "read_judgments_file", "round_file_name", "trec_qrels", "with_judgments"]

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
    rater: str
    time: str


def round_file_name(round_name: str) -> str:
    """The judging file of a round: ``judging <round>.tsv`` (``round_name`` without the
    prefix)."""
    return f"{FILE_PREFIX}{round_name}.tsv"


def is_judging_file(name: str) -> bool:
    """Whether a dataset file of that name is a judging file."""
    return name.startswith(FILE_PREFIX) and name.endswith(".tsv")


def _grade_text(grade: float) -> str:
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
            grade = float(cells[3])
        except ValueError:
            raise FormatError(f"{name}:{n}: expected a number as the label, "
                              f"found {cells[3]!r}") from None
        out.append(Judgment(cells[1], cells[2], grade, cells[4], cells[5]))
    return out


def _entries(qrels: Qrels) -> tuple[list[str], list[str], np.ndarray]:
    docs = qrels.doc_ids.take(qrels.dcode).to_pylist() if len(qrels) else []
    return qrels.query_ids[qrels.qcode].tolist(), docs, qrels.grade


def with_judgments(qrels: Qrels, judgments: Sequence[Judgment]) -> Qrels:
    """``qrels`` with the documents of ``judgments`` it does not judge added (the last
    judgment of a document decides); ``qrels`` itself when nothing is added."""
    q, d, g = _entries(qrels)
    known = set(zip(q, d, strict=True))
    added: dict[tuple[str, str], float] = {}
    for j in judgments:
        if (j.query, j.doc) not in known:
            added[(j.query, j.doc)] = float(j.grade)
    if not added:
        return qrels
    return Qrels.from_arrays(q + [k[0] for k in added], d + [k[1] for k in added],
                             np.concatenate([g, np.fromiter(added.values(), dtype=np.float64)]),
                             source=qrels.source, warnings=qrels.warnings)


def trec_qrels(qrels: Qrels) -> bytes:
    """``qrels`` as a TREC qrels file (``query 0 doc grade``, sorted by query and doc)."""
    q, d, g = _entries(qrels)
    rows = sorted(zip(q, d, g.tolist(), strict=True))
    return "".join(f"{a} 0 {b} {_grade_text(c)}\n" for a, b, c in rows).encode("utf-8")
