"""trec_eval's judgment-group qrels (``-R qrels_jg``): ``qid jg docid rel``.

The second column, which plain qrels ignore (``iter``), names a judgment group: one
person's (or one round's) complete judgments of the query. A document may be judged in
several groups of a query, once per group. :func:`read_qrels_jg` gives one
:class:`~ireval_core.data.Qrels` per group; the ``*_avgjg`` measures evaluate a run on
each and average per query over the groups that judged it
(:mod:`ireval_core.judgment_groups`).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..data import DuplicateEntryError, Qrels
from ..errors import FormatError
from .guard import guarded
from .source import PathOrBytes, ReadLimits, Source
from .trec import diagnose_fields, fields_malformed, read_fields, skip_comments

__all__ = ["judgment_groups", "read_qrels_jg"]

_COLUMNS = ("qid", "jg", "docid", "rel")


def read_qrels_jg(source: PathOrBytes | Source, *, name: str | None = None,
                  limits: ReadLimits | None = None,
                  comments: bool = False) -> dict[str, Qrels]:
    """Read judgment-group qrels: ``{group: Qrels}``, groups in order of their names.

    Lines are ``qid jg docid rel`` separated by runs of spaces or tabs; blank lines are
    skipped; ``comments`` skips ``#`` lines as trec_eval 10.0's reader does
    (:func:`~.trec.skip_comments`). A malformed line, a grade that is no number or a
    (query, group, document) given twice is a :class:`FormatError` with file and line.

    Examples
    --------
    >>> groups = read_qrels_jg(b"1 A d1 1\\n1 B d1 0\\n1 B d2 2\\n", name="jg")
    >>> {g: q.to_dict() for g, q in groups.items()}
    {'A': {'1': {'d1': 1.0}}, 'B': {'1': {'d1': 0.0, 'd2': 2.0}}}
    """
    outcome = guarded(_read, source, name, limits, comments)
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    return outcome


def _read(source: PathOrBytes | Source, name: str | None, limits: ReadLimits | None,
          comments: bool) -> dict[str, Qrels]:
    src = Source.of(source, name, limits=limits)
    if src.is_blank():
        raise FormatError("file is empty; expected judgment-group qrels lines "
                          "'qid jg docid rel'", source=src.name)
    note = None
    if comments:
        src, note = skip_comments(src, "qrels")
    try:
        table = read_fields(src, _COLUMNS)
    except (pa.ArrowException, UnicodeDecodeError):
        raise _diagnose(src) or FormatError("could not read as judgment-group qrels",
                                            source=src.name) from None
    if fields_malformed(table):
        raise _diagnose(src) or FormatError("a grade or an id is malformed", source=src.name)
    groups = table.column("jg").dictionary_encode().combine_chunks()
    warnings = [note] if note is not None else []
    out: dict[str, Qrels] = {}
    for code, group in sorted(enumerate(groups.dictionary.to_pylist()), key=lambda x: x[1]):
        part = table.filter(pc.equal(groups.indices, code))
        try:
            out[group] = Qrels.from_arrays(part.column("qid"), part.column("docid"),
                                           part.column("rel").to_numpy(), source=src.name,
                                           warnings=warnings)
        except DuplicateEntryError:
            raise _diagnose(src) or FormatError("a document is judged twice in one group",
                                                source=src.name) from None
    return out


def judgment_groups(qrels: Qrels) -> dict[str, Qrels]:
    """Qrels split by judgment group, as ``-R qrels_jg`` reads a qrels file: the group of
    each entry is its ``iter`` (:attr:`~ireval_core.data.Qrels.groups`), groups in order of
    their names; ``{"0": qrels}`` when the file's ``iter`` is constant or it has none.

    >>> from ireval_core.io import read_qrels
    >>> q = read_qrels(b"1 A d1 1\\n1 B d2 0\\n2 B d1 2\\n", name="q")
    >>> {g: part.to_dict() for g, part in judgment_groups(q).items()}
    {'A': {'1': {'d1': 1.0}}, 'B': {'1': {'d2': 0.0}, '2': {'d1': 2.0}}}
    """
    if qrels.groups is None:
        return {"0": qrels}
    groups = qrels.groups.dictionary_encode() if not pa.types.is_dictionary(
        qrels.groups.type) else qrels.groups
    names = groups.dictionary.to_pylist()
    codes = groups.indices.to_numpy(zero_copy_only=False)
    qids = np.asarray(qrels.query_ids, dtype=object)[qrels.qcode]
    docs = qrels.doc_ids.take(pa.array(qrels.dcode))
    out: dict[str, Qrels] = {}
    for code, name in sorted(enumerate(names), key=lambda x: x[1]):
        rows = np.flatnonzero(codes == code)
        if rows.size:
            out[name] = Qrels.from_arrays(qids[rows], docs.take(pa.array(rows)),
                                          qrels.grade[rows], source=qrels.source,
                                          warnings=qrels.warnings)
    return out


def _diagnose(src: Source) -> FormatError | None:
    """The bad lines (up to 100), found line by line; None when every line is good."""
    return diagnose_fields(
        src, ("qid", "tag", "docid"), "qid jg docid rel", "grade",
        lambda f: (f[0], f[1], f[2]),
        lambda k: f"query {k[0]!r}, group {k[1]!r}, document {k[2]!r}")
