"""trec_eval's preference judgments: ``-R prefs`` and ``-R qrels_prefs``.

``-R prefs`` lines are ``qid jg jsg docid rel_level``: a judgment group (``jg``: one
person's view of the query at one time) holds judgment sub-groups (``jsg``); within a
sub-group a document with a higher ``rel_level`` is preferred to every document with a
lower one (the values only order the documents, except that 0 means non-relevant).
``-R qrels_prefs`` reads ordinary qrels ``qid iter docid rel`` the same way, the
``iter`` column naming the judgment group and every line in one sub-group (``"0"``),
as trec_eval 10.0's ``get_qrels_prefs.c`` does. :func:`read_prefs` reads both into a
:class:`Preferences`; :mod:`ireval_core.preferences` turns them into the measures.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..data import Qrels
from ..errors import DataWarning, FormatError
from .guard import guarded
from .source import PathOrBytes, ReadLimits, Source
from .trec import diagnose_fields, fields_malformed, read_fields, skip_comments

__all__ = ["Preferences", "prefs_from_qrels", "read_prefs"]

_COLUMNS = {"prefs": ("qid", "jg", "jsg", "docid", "rel"),
            "qrels_prefs": ("qid", "jg", "docid", "rel")}
_LAYOUT = {"prefs": "qid jg jsg docid rel_level", "qrels_prefs": "qid iter docid rel"}
QRELS_PREFS_JSG = "0"
"""The one sub-group every line of a ``-R qrels_prefs`` file is in (trec_eval's)."""


@dataclass(frozen=True)
class Preferences:
    """Preference judgments, one row per line read: parallel arrays of equal length.

    ``qid``, ``jg``, ``jsg`` and ``docid`` hold the ids as written (``object`` arrays of
    ``str``), ``rel`` the relevance level of the line. No (qid, jg, jsg, docid) repeats.
    """

    qid: np.ndarray
    jg: np.ndarray
    jsg: np.ndarray
    docid: np.ndarray
    rel: np.ndarray
    source: str = "prefs"
    warnings: tuple[DataWarning, ...] = field(default=())

    @property
    def query_ids(self) -> list[str]:
        """The judged queries, in byte order (as trec_eval sorts them)."""
        return sorted(set(self.qid.tolist()))

    def __len__(self) -> int:
        return len(self.rel)


def read_prefs(source: PathOrBytes | Source, *, kind: str = "prefs", name: str | None = None,
               limits: ReadLimits | None = None, comments: bool = False) -> Preferences:
    """Read preference judgments: ``kind`` ``"prefs"`` (``qid jg jsg docid rel_level``)
    or ``"qrels_prefs"`` (qrels ``qid iter docid rel``, ``iter`` as the group).

    Fields are separated by runs of spaces or tabs; blank lines are skipped; ``comments``
    skips ``#`` lines as trec_eval 10.0's readers of these files do (only a ``#`` at the
    line's first character, and not on the line right after a comment line:
    :func:`~.trec.skip_comments`). A line with another number of fields, a level that
    is no finite number, or a (query, group, sub-group, document) given twice is a
    :class:`FormatError` with file and line.

    Examples
    --------
    >>> p = read_prefs(b"q1 u1 s1 d1 3\\nq1 u1 s1 d2 2\\n", name="p")
    >>> p.docid.tolist(), p.rel.tolist()
    (['d1', 'd2'], [3.0, 2.0])
    >>> read_prefs(b"q1 0 d1 1\\n", kind="qrels_prefs", name="q").jsg.tolist()
    ['0']
    """
    if kind not in _COLUMNS:
        raise ValueError(f"kind must be 'prefs' or 'qrels_prefs', got {kind!r}")
    outcome = guarded(_read, source, name, limits, comments, kind)
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    return outcome


def _read(source: PathOrBytes | Source, name: str | None, limits: ReadLimits | None,
          comments: bool, kind: str) -> Preferences:
    src = Source.of(source, name, limits=limits)
    columns = _COLUMNS[kind]
    if src.is_blank():
        raise FormatError(f"file is empty; expected preference lines '{_LAYOUT[kind]}'",
                          source=src.name)
    note = None
    if comments:
        src, note = skip_comments(src, "qrels")
    try:
        table = read_fields(src, columns)
    except (pa.ArrowException, UnicodeDecodeError):
        raise _diagnose(src, kind) or FormatError("could not read as preference judgments",
                                                  source=src.name) from None
    if table.num_rows == 0:
        raise FormatError(f"no preference line; expected '{_LAYOUT[kind]}'", source=src.name)
    if fields_malformed(table):
        raise _diagnose(src, kind) or FormatError("a level or an id is malformed",
                                                  source=src.name)
    jsg = (table.column("jsg") if kind == "prefs"
           else pa.array(np.full(table.num_rows, QRELS_PREFS_JSG, dtype=object), pa.string()))
    key = pc.binary_join_element_wise(table.column("qid"), table.column("jg"), jsg,
                                      table.column("docid"), "\x00")
    if pc.count_distinct(key).as_py() != table.num_rows:
        raise _diagnose(src, kind) or FormatError("a document is judged twice in one "
                                                  "sub-group", source=src.name)

    def strings(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
        return np.asarray(col.to_pylist(), dtype=object)

    return Preferences(strings(table.column("qid")), strings(table.column("jg")),
                       strings(jsg), strings(table.column("docid")),
                       np.ascontiguousarray(table.column("rel").to_numpy(), dtype=np.float64),
                       src.name,
                       (note,) if note is not None else ())


def prefs_from_qrels(qrels: Qrels) -> Preferences:
    """Qrels read as preferences, as ``-R qrels_prefs`` reads a qrels file: the judgment
    group of each entry is its ``iter`` (:attr:`~ireval_core.data.Qrels.groups`; one
    group, ``"0"``, when the file's ``iter`` is constant or it has none), every entry in
    one sub-group.

    >>> q = Qrels.from_dict({"1": {"a": 2, "b": 0}})
    >>> p = prefs_from_qrels(q)
    >>> p.docid.tolist(), p.jg.tolist(), p.rel.tolist()
    (['a', 'b'], ['0', '0'], [2.0, 0.0])
    """
    docs = np.asarray(qrels.doc_ids.to_pylist(), dtype=object)[qrels.dcode]
    qids = np.asarray(qrels.query_ids, dtype=object)[qrels.qcode].astype(str).astype(object)
    n = len(qrels)
    jg = (np.full(n, QRELS_PREFS_JSG, dtype=object) if qrels.groups is None
          else np.asarray(qrels.groups.to_pylist(), dtype=object))
    return Preferences(qids, jg, np.full(n, QRELS_PREFS_JSG, dtype=object),
                       docs.astype(str).astype(object), np.array(qrels.grade, dtype=np.float64),
                       qrels.source, qrels.warnings)


def _diagnose(src: Source, kind: str) -> FormatError | None:
    """The bad lines (up to 100), found line by line; None when every line is good."""
    def key(f: list[str]) -> tuple[str, ...]:
        return (f[0], f[1], f[2] if kind == "prefs" else QRELS_PREFS_JSG, f[-2])

    def again(k: tuple[str, ...]) -> str:
        where = (f"group {k[1]!r}, sub-group {k[2]!r}" if kind == "prefs"
                 else f"group (iter) {k[1]!r}")
        return f"query {k[0]!r}, {where}, document {k[3]!r}"

    words = tuple("docid" if c == "docid" else "qid" if c == "qid" else "tag"
                  for c in _COLUMNS[kind][:-1])
    return diagnose_fields(src, words, _LAYOUT[kind], "relevance level", key, again)
