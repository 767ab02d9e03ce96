"""The qrels and run readers: :func:`read_qrels`, :func:`read_runs`, :func:`read_run`.

Each reads one input in any format :func:`~.detect.detect_format` recognises
(TREC text, CSV/TSV, Parquet, JSON) or an Excel workbook (its first sheet with the id
columns, :func:`~.excel.read_xlsx_columns`) into a table of columns ``qid, docid,
rel|score`` (+ ``tag``) (:func:`read_columns`), then builds immutable
:class:`~ireval_core.data.Qrels` or :class:`~ireval_core.data.Run` objects. Every
read is :func:`~.guard.guarded`: a malformed input is one fresh
:class:`~ireval_core.errors.FormatError` holding nothing of the input.
"""

from __future__ import annotations

import contextvars
import io
import os
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .._arrow import bool_array, release_unused
from ..data import DuplicateEntryError, Qrels, Run, ids_coded_after
from ..errors import DataWarning, FormatError, invalid_parameter
from ..idcodes import dictionary_codes
from ..progress import stage
from .checks import numeric
from .column_cache import ColumnCache, ParsedRun, entry_key
from .columns import MISSING_TAGS, TREC_COLUMNS, Kind
from .delimited import diagnose_delimited, read_delimited
from .detect import FORMATS, Format, detect_format, is_workbook, refuse_unreadable
from .encoding import decode_bom, encoding_warning, read_text
from .excel import read_xlsx_columns
from .guard import guarded
from .json import read_json
from .parquet import read_parquet
from .source import PathOrBytes, ReadLimits, Source, file_stem
from .trec import diagnose_trec, read_trec, skip_comments

__all__ = ["ParsedRunFile", "cached_qrels", "cached_runs", "decoded_columns",
           "empty_file_error", "parse_runs", "read_columns", "read_qrels",
           "read_qrels_alongside", "read_run", "read_runs", "shared_tag_names",
           "unique_name"]

T = TypeVar("T")


def read_qrels(source: PathOrBytes | Source, *, name: str | None = None,
               format: Format = "auto", limits: ReadLimits | None = None,
               comments: bool = False, cache: ColumnCache | None = None,
               content_sha256: str | None = None,
               content_stamp: tuple[int, int, int] | None = None) -> Qrels:
    """Read relevance judgments.

    Parameters
    ----------
    source:
        A path, the bytes of an upload, or a binary file object (gzip is detected).
    name:
        File name used in messages (defaults to the path's name).
    format:
        ``"auto"`` (by content and extension), ``"trec"``, ``"csv"``, ``"tsv"``,
        ``"parquet"``, ``"json"`` or ``"xlsx"`` (an Excel workbook: its first sheet
        with a header naming the columns, as in CSV; errors name sheet and row).
    limits:
        Bounds on decompression (default: :meth:`ReadLimits.from_env`).
    comments:
        Skip TREC text comment lines as trec_eval 10.0's qrels reader does: a line
        whose first character is ``#``, unless the line before was one (see
        :func:`~.trec.skip_comments`), with a ``comment-lines`` warning. trec_eval 9.0.8
        reads them as data, and so does the default.
    cache:
        A :class:`~.column_cache.ColumnCache`: a path or bytes read before under the same
        rule are mapped from it instead of parsed (the same numbers, bit for bit), and a
        new read is stored in it.
    content_sha256:
        The SHA-256 (hex) of ``source``'s bytes when the caller has it (then the cache
        does not hash them again); only used with ``cache``.
    content_stamp:
        For a path with ``content_sha256``: the file's (size, modification time in ns,
        inode) when it was hashed. A read is stored only when the file still has its
        stamp afterwards (taken as the read starts when not given), so a file changed
        meanwhile is never cached under the hash of its old bytes.

    Returns
    -------
    Qrels
        The judgments, with ids exactly as written.

    Raises
    ------
    FormatError
        With file, line and what was expected, for anything that is not valid qrels.

    Examples
    --------
    >>> q = read_qrels(b"007 0 d1 1\\n007 0 d2 0\\n", name="qrels.txt")
    >>> q.to_dict()
    {'007': {'d1': 1.0, 'd2': 0.0}}
    >>> read_qrels(b"qid,docid,rel\\nq1,d1,true\\n", name="q.csv")
    Traceback (most recent call last):
    ...
    ireval_core.errors.FormatError: q.csv:2: expected a numeric grade in column 'rel', got 'true': \
'q1,d1,true'
    """
    _check_arguments("read_qrels", source, format, limits)
    limits = limits or ReadLimits.from_env()  # a bad variable is a ValueError, here
    stamp = content_stamp or _stamp(source) if cache is not None else None
    key = _cache_key(cache, source, name, "qrels", format, limits, comments, False,
                     content_sha256)
    if key is not None and cache is not None:
        hit = cache.qrels(key, _display_name(source, name))
        if hit is not None:
            return hit
    outcome = guarded(_read_qrels, source, name, format, limits, comments)
    source_path = source if isinstance(source, str | os.PathLike) else None
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    if key is not None and cache is not None and _stamp(source_path) == stamp:
        cache.store_qrels(key, outcome)
    return outcome


def cached_qrels(cache: ColumnCache, content_sha256: str, *, name: str,
                 format: Format = "auto", limits: ReadLimits | None = None,
                 comments: bool = False) -> Qrels | None:
    """What :func:`read_qrels` of a file named ``name`` whose bytes have this SHA-256
    returns, when ``cache`` holds it (else ``None``): a file kept elsewhere (a workspace)
    is then not read at all."""
    limits = limits or ReadLimits.from_env()
    key = entry_key(content_sha256, kind="qrels", format=format, name=name,
                    comments=comments, one_run=False, limits=limits)
    return cache.qrels(key, name)


def cached_runs(cache: ColumnCache, content_sha256: str, *, name: str,
                format: Format = "auto",
                taken_names: Iterable[str] | Mapping[str, str] = (),
                limits: ReadLimits | None = None, one_run: bool = False,
                comments: bool = False) -> list[Run] | None:
    """What :func:`read_runs` of a file named ``name`` whose bytes have this SHA-256
    returns, when ``cache`` holds it (else ``None``), named as :func:`read_runs` names."""
    limits = limits or ReadLimits.from_env()
    key = entry_key(content_sha256, kind="runs", format=format, name=name,
                    comments=comments, one_run=one_run, limits=limits)
    hit = cache.runs(key, name)
    if hit is None:
        return None
    return _named_runs(hit, name, Source(name, b"").stem, taken_names)


def _stamp(source: object) -> tuple[int, int, int] | None:
    """A path's size, modification time (ns) and inode (``None`` for other sources): a
    file that changed while it was read is not cached under the hash taken before."""
    if not isinstance(source, str | os.PathLike):
        return None
    try:
        st = os.stat(source)
    except OSError:
        return (-1, -1, -1)
    return st.st_size, st.st_mtime_ns, st.st_ino


def _display_name(source: object, name: str | None) -> str:
    """The name a read of ``source`` gives its result (as :meth:`Source.of` names it)."""
    if isinstance(source, Source):
        return source.name
    if isinstance(source, str | os.PathLike):
        return str(name or os.path.basename(os.fspath(source)))
    return str(name or getattr(source, "name", None) or "<input>")


def _cache_key(cache: ColumnCache | None, source: object, name: str | None, kind: str,
               format: Format, limits: ReadLimits, comments: bool, one_run: bool,
               content_sha256: str | None = None) -> str | None:
    """The cache entry of a path or bytes read under this rule; ``None`` without a cache,
    for other sources, or when the file cannot be hashed (the read then says why)."""
    if cache is None or not isinstance(source, str | os.PathLike | bytes | bytearray
                                       | memoryview):
        return None
    try:
        digest = content_sha256 or cache.content_hash(source)
    except OSError:
        return None
    if digest is None:
        return None
    return entry_key(digest, kind=kind, format=format, name=_display_name(source, name),
                     comments=comments, one_run=one_run, limits=limits)


def read_qrels_alongside(source: PathOrBytes | Source, work: Callable[[], T], *,
                         name: str | None = None, format: Format = "auto",
                         limits: ReadLimits | None = None,
                         comments: bool = False,
                         cache: ColumnCache | None = None) -> tuple[Qrels, T]:
    """:func:`read_qrels` on a second thread while ``work()`` (reading the runs) runs on
    this one: ``(qrels, work())``.

    The two reads overlap on two cores: the qrels are read while the runs are parsed.
    A run's coding of its ids (its largest allocation) waits until the qrels are read and
    their thread has given its freed memory back (:func:`~ireval_core.data.ids_coded_after`),
    so the peak does not depend on how the two threads were scheduled; a run whose ids are
    sorted row by row sorts the qrels' ids with its own, which gives its document map to
    these qrels from the same sort. Errors come out as
    when the qrels are read first: a qrels error is raised even when ``work`` failed too.
    Progress (:func:`~ireval_core.progress.stage`) reaches the caller's reporter from
    both threads. The arguments after ``work`` are :func:`read_qrels`'s.

    Examples
    --------
    >>> qrels, runs = read_qrels_alongside(
    ...     b"q1 0 d1 1\\n", lambda: read_runs(b"q1 Q0 d1 1 2.0 bm25\\n", name="r"),
    ...     name="qrels")
    >>> qrels.to_dict(), [r.name for r in runs]
    ({'q1': {'d1': 1.0}}, ['bm25'])
    """
    context = contextvars.copy_context()  # the caller's progress reporter
    done = threading.Event()
    held = [source]  # the worker's only reference: the bytes of an upload go with the read
    del source
    read: list[Qrels] = []  # the qrels, for the runs' coding (ids_coded_after's ``beside``)

    def qrels_then_release() -> Qrels:
        try:
            read.append(read_qrels(held.pop(), name=name, format=format, limits=limits,
                                   comments=comments, cache=cache))
            return read[0]
        finally:
            release_unused()  # this thread's freed pages, before the runs' ids are coded
            done.set()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ireval-qrels") as pool:
        pending = pool.submit(context.run, qrels_then_release)
        try:
            with ids_coded_after(done, beside=read):
                other = work()
        except BaseException:
            pending.result()  # the qrels' own error, if any, is the one reported
            raise
        return pending.result(), other


def read_runs(source: PathOrBytes | Source, *, name: str | None = None,
              format: Format = "auto",
              taken_names: Iterable[str] | Mapping[str, str] = (),
              limits: ReadLimits | None = None, one_run: bool = False,
              comments: bool = False, cache: ColumnCache | None = None,
              content_sha256: str | None = None,
              content_stamp: tuple[int, int, int] | None = None) -> list[Run]:
    """Read a run file, which may hold several systems (one per tag).

    Each system is named by its tag; by the file name when there is no tag column
    or when the tag is already in ``taken_names`` (then ``stem:tag``, numbered if
    needed), with a ``run-renamed`` warning naming both files when ``taken_names``
    maps each name to the file it came from. Lines with an empty or missing tag
    (``NA``, ...) form the system named after the file, with a ``tag-missing``
    warning. Returns one :class:`Run` per system, in order of first appearance.
    ``one_run``: the whole file is one system whatever its tags, named by the tag of its
    last line, as trec_eval reads a run. ``comments``: skip lines whose first
    non-blank character is ``#``, as trec_eval 10.0's run reader does. ``cache``: as
    :func:`read_qrels`'s (the systems are cached before they are named, so names still
    follow ``taken_names``), and so are ``content_sha256`` and ``content_stamp``.

    Examples
    --------
    >>> runs = read_runs(b"qid,docid,score,tag\\nq1,d1,2,bm25\\nq1,d2,1,NA\\n", name="r.csv")
    >>> [(r.name, r.to_dict()) for r in runs]
    [('bm25', {'q1': {'d1': 2.0}}), ('r', {'q1': {'d2': 1.0}})]
    >>> [w.code for w in runs[1].warnings]
    ['tag-missing']
    """
    # parse_runs's body, not a call to it: this frame must drop ``source`` itself
    _check_arguments("read_runs", source, format, limits)
    parsed = _parsed_run_file(source, name, format, limits, one_run, comments, cache,
                              content_sha256, content_stamp)
    del source  # an error raised below holds no frame referring to the input
    if isinstance(parsed, FormatError):
        raise parsed
    return parsed.named(taken_names)


def parse_runs(source: PathOrBytes | Source, *, name: str | None = None,
               format: Format = "auto", limits: ReadLimits | None = None,
               one_run: bool = False, comments: bool = False,
               cache: ColumnCache | None = None, content_sha256: str | None = None,
               content_stamp: tuple[int, int, int] | None = None) -> ParsedRunFile:
    """:func:`read_runs` without the naming: the file's systems as read (from ``cache``
    when it holds them, else parsed and stored), to be named by
    :meth:`ParsedRunFile.named` once the names taken by other files are known.

    ``read_runs(source, taken_names=t, **kw)`` is ``parse_runs(source, **kw).named(t)``:
    a caller reading several files at once parses them side by side and names them in
    file order. Arguments as :func:`read_runs`'s; errors too.

    >>> parsed = parse_runs(b"q1 Q0 d1 1 2.0 bm25\\n", name="a.txt")
    >>> [r.name for r in parsed.named({"bm25": "b.txt"})]
    ['a:bm25']
    """
    _check_arguments("parse_runs", source, format, limits)
    parsed = _parsed_run_file(source, name, format, limits, one_run, comments, cache,
                              content_sha256, content_stamp)
    del source  # an error raised below holds no frame referring to the input
    if isinstance(parsed, FormatError):
        raise parsed
    return parsed


@dataclass(frozen=True, eq=False)
class ParsedRunFile:
    """The systems of one run file as read, before they are named
    (:func:`parse_runs`): the file's name as messages give it, its stem (the name of a
    system without a tag) and each system with its tag and reading warnings."""

    source: str
    stem: str
    systems: tuple[ParsedRun, ...]

    def named(self, taken_names: Iterable[str] | Mapping[str, str] = ()) -> list[Run]:
        """The runs, each named by its tag, else after the file, numbered when the name
        is in ``taken_names`` (as :func:`read_runs` names them, warnings included)."""
        return _named_runs(list(self.systems), self.source, self.stem, taken_names)


def _parsed_run_file(source: PathOrBytes | Source, name: str | None, format: Format,
                     limits: ReadLimits | None, one_run: bool, comments: bool,
                     cache: ColumnCache | None, content_sha256: str | None,
                     content_stamp: tuple[int, int, int] | None
                     ) -> ParsedRunFile | FormatError:
    """:func:`parse_runs` after its arguments were checked; an error is returned, for the
    caller to raise once it let go of the input."""
    limits = limits or ReadLimits.from_env()  # a bad variable is a ValueError, here
    stamp = content_stamp or _stamp(source) if cache is not None else None
    key = _cache_key(cache, source, name, "runs", format, limits, comments, one_run,
                     content_sha256)
    display = _display_name(source, name)
    if key is not None and cache is not None:
        hit = cache.runs(key, display)
        if hit is not None:
            return ParsedRunFile(display, Source(display, b"").stem, tuple(hit))
    outcome = guarded(_parse_runs, source, name, format, limits, one_run, comments)
    source_path = source if isinstance(source, str | os.PathLike) else None
    del source
    if isinstance(outcome, FormatError):
        return outcome
    src_name, stem, parsed = outcome
    if key is not None and cache is not None and _stamp(source_path) == stamp:
        cache.store_runs(key, parsed)
    return ParsedRunFile(src_name, stem, tuple(parsed))




def read_run(source: PathOrBytes | Source, *, name: str | None = None,
             format: Format = "auto", limits: ReadLimits | None = None) -> Run:
    """Read a run file holding exactly one system (see :func:`read_runs`)."""
    _check_arguments("read_run", source, format, limits)
    limits = limits or ReadLimits.from_env()  # a bad variable is a ValueError, here
    outcome = guarded(_read_run, source, name, format, limits)
    del source
    if isinstance(outcome, FormatError):
        raise outcome
    return outcome


def _check_arguments(function: str, source: object, format: object, limits: object) -> None:
    """Invalid arguments (not invalid data) raise ValueError / TypeError, unguarded."""
    if not isinstance(source, str | os.PathLike | bytes | bytearray | memoryview | Source) and (
            not callable(getattr(source, "read", None)) or isinstance(source, io.TextIOBase)):
        raise invalid_parameter("source", function, "a path, bytes or a binary file object",
                                source, error=TypeError)
    if format not in FORMATS:
        raise invalid_parameter("format", function,
                                f"one of {', '.join(repr(f) for f in FORMATS)}", format)
    if limits is not None and not isinstance(limits, ReadLimits):
        raise invalid_parameter("limits", function, "a ReadLimits or None", limits,
                                error=TypeError)


def _read_qrels(source: PathOrBytes | Source, name: str | None, format: Format,
                limits: ReadLimits | None, comments: bool = False) -> Qrels:
    src, note = _without_comments(Source.of(source, name, limits=limits), format, comments,
                                  "qrels")
    src, table, warnings = decoded_columns(src, "qrels", format)
    warnings += [note] if note is not None else []
    grades = numeric(table.column("rel"))
    frac = grades[grades != np.floor(grades)]
    if frac.size:
        warnings.append(DataWarning(
            "fractional-grades",
            f"{frac.size} grade(s) are not whole numbers; kept as they are "
            "(trec_eval would truncate them)",
            src.name, int(frac.size), tuple(str(x) for x in np.unique(frac)[:3])))
    try:
        return Qrels.from_arrays(table.column("qid"), table.column("docid"), grades,
                                 source=src.name, warnings=warnings, groups=_groups(table))
    except DuplicateEntryError as exc:
        raise _duplicate_error(src, "qrels", format, exc) from None


def _groups(table: pa.Table) -> pa.ChunkedArray | None:
    """TREC qrels' ``iter`` column when it is not the same on every line (trec_eval's
    judgment group), else None: a look at each block's dictionary, no pass over the rows
    unless a block holds several values."""
    if "iter" not in table.column_names or table.num_rows == 0:
        return None
    column = table.column("iter")
    if not pa.types.is_dictionary(column.type):  # the TREC reader codes it; others, if any
        return column if pc.count_distinct(column).as_py() > 1 else None
    first = None
    for chunk in column.chunks:
        if not len(chunk):
            continue
        values = chunk.dictionary
        if len(values) > 1 and pc.count_distinct(chunk.indices).as_py() > 1:
            return column
        value = values[int(chunk.indices[0].as_py())].as_py()
        if first is not None and value != first:
            return column
        first = value
    return None


def _read_run(source: PathOrBytes | Source, name: str | None, format: Format,
              limits: ReadLimits | None) -> Run:
    src = Source.of(source, name, limits=limits)
    runs = _read_runs(src, None, format, (), limits)
    if len(runs) != 1:
        raise FormatError(
            f"expected one system, found {len(runs)} tags ({', '.join(r.name for r in runs)}); "
            "use read_runs to read them all", source=src.name)
    return runs[0]


def _read_runs(source: PathOrBytes | Source, name: str | None, format: Format,
               taken_names: Iterable[str] | Mapping[str, str],
               limits: ReadLimits | None, one_run: bool = False,
               comments: bool = False) -> list[Run]:
    """The systems of a run file, named (:func:`_parse_runs`, :func:`_named_runs`)."""
    src_name, stem, parsed = _parse_runs(source, name, format, limits, one_run, comments)
    return _named_runs(parsed, src_name, stem, taken_names)


def _parse_runs(source: PathOrBytes | Source, name: str | None, format: Format,
                limits: ReadLimits | None, one_run: bool = False, comments: bool = False
                ) -> tuple[str, str, list[ParsedRun]]:
    """The file's name, its stem, and its systems as read, before they are named: each
    run named by its tag (empty without one) and holding the reading's warnings."""
    src, note = _without_comments(Source.of(source, name, limits=limits), format, comments,
                                  "run")
    src, table, warnings = decoded_columns(src, "run", format)
    warnings += [note] if note is not None else []
    last_tag: list[str | None] = [None]
    if one_run and "tag" in table.column_names:  # trec_eval: the run id of the last line
        last = table.column("tag")[-1].as_py() if table.num_rows else None
        last_tag = [None if last is None or last in MISSING_TAGS else str(last)]
        table = table.drop_columns(["tag"])
    scores = numeric(table.column("score"))
    tag_codes: np.ndarray | None = None
    tag_names: list[str | None] = last_tag
    missing_lines = 0
    missing_markers: tuple[str, ...] = ()
    if "tag" in table.column_names:
        tag_codes, tag_dict = dictionary_codes(table.column("tag"))
        tag_names, tag_codes, missing_lines, missing_markers = _merge_missing_tags(
            tag_dict.to_pylist(), tag_codes)
    if len(tag_names) == 1:  # one system: hand the columns over, drop the table
        parts = [{"qid": table.column("qid"), "docid": table.column("docid")}]
        del table
        tag_codes = None  # one code per line, all equal: not needed (peak memory)
    else:
        assert tag_codes is not None  # several tags come from a tag column
        parts = [{"qid": table.column("qid").filter(bool_array(np.equal(tag_codes, i))),
                  "docid": table.column("docid").filter(bool_array(np.equal(tag_codes, i)))}
                 for i in range(len(tag_names))]
        del table
    parsed = []
    for i, tag in enumerate(tag_names):
        part_scores = scores if len(tag_names) == 1 else scores[tag_codes == i]
        try:
            run = Run.from_columns(parts[i], part_scores, name=tag or "", source=src.name,
                                   warnings=warnings, tag=tag)
        except DuplicateEntryError as exc:
            if tag_codes is not None and len(tag_names) > 1:
                first, second = np.flatnonzero(tag_codes == i)[list(exc.rows)]
                exc.rows = (int(first), int(second))
            raise _duplicate_error(src, "run", format, exc) from None
        parts[i] = {}
        parsed.append(ParsedRun(tag, run, missing_lines if tag is None else 0,
                                missing_markers if tag is None else ()))
    return src.name, src.stem, parsed


def _named_runs(parsed: list[ParsedRun], source: str, stem: str,
                taken_names: Iterable[str] | Mapping[str, str]) -> list[Run]:
    """Name every system: by its tag, else by the file (``stem``), numbered when the name
    is taken, with the ``run-renamed`` and ``tag-missing`` warnings."""
    owners = dict(taken_names) if isinstance(taken_names, Mapping) else dict.fromkeys(
        taken_names, "")
    taken = set(owners)
    runs = []
    for p in parsed:
        tag, run = p.tag, p.run
        run_name = unique_name(tag, stem, taken)
        taken.add(run_name)
        run_warnings = list(run.warnings)
        if tag and run_name != tag:
            other = owners.get(tag, "")
            where = f"the run {tag!r} of {other}" if other else f"the run name {tag!r}"
            run_warnings.append(DataWarning(
                "run-renamed", f"tag {tag!r} is already {where}: this run is named "
                f"{run_name!r}", source=source, count=1))
        if tag is None and p.missing_lines:
            shown = ", ".join(repr(m) for m in p.missing_markers)
            run_warnings.append(DataWarning(
                "tag-missing", f"{p.missing_lines} line(s) have no tag ({shown}); they are "
                f"the run named {run_name!r}, after the file", source=source,
                count=p.missing_lines))
        runs.append(Run(run_name, run.query_ids, run.doc_ids, run.qcode, run.dcode,
                        run.score, run.offsets, source, tuple(run_warnings), tag))
    return runs


def _without_comments(src: Source, format: Format, comments: bool, kind: Kind
                      ) -> tuple[Source, DataWarning | None]:
    """``src`` with trec_eval 10.0's ``#`` comment lines blanked when ``comments`` and it
    is TREC text (:func:`~.trec.skip_comments`); CSV, JSON and Parquet are left alone."""
    if not comments or src.is_blank() or format == "xlsx" or is_workbook(src):
        return src, None
    fmt = format if format != "auto" else detect_format(src)
    return skip_comments(src, kind) if fmt == "trec" else (src, None)


def _merge_missing_tags(names: list[str], codes: np.ndarray
                        ) -> tuple[list[str | None], np.ndarray, int, tuple[str, ...]]:
    """Tags that mean "no tag" become one system (``None``); codes renumbered to match."""
    missing = [i for i, t in enumerate(names) if t in MISSING_TAGS]
    if not missing:
        return list(names), codes, 0, ()
    mapping = np.empty(len(names), dtype=np.int32)
    merged: list[str | None] = []
    slot = -1
    for i, t in enumerate(names):
        if t in MISSING_TAGS:
            if slot < 0:
                slot = len(merged)
                merged.append(None)
            mapping[i] = slot
        else:
            mapping[i] = len(merged)
            merged.append(t)
    lines = int(np.isin(codes, missing).sum())
    return merged, mapping[codes], lines, tuple(names[i] for i in missing)


def shared_tag_names(runs: Sequence[Run]) -> list[Run]:
    """The runs of several files, named so that each name says which run: a tag that
    runs of several files carry (rank_llm writes ``rank`` for every run) names every one
    of them ``stem:tag`` after its file (``bm25:rank``, ``splade:rank``), not a bare
    ``rank`` for the first file's and ``stem:tag`` for the others'; each gets a
    ``run-renamed`` warning naming the files. The other runs keep their names.

    >>> a = read_runs(b"q1 Q0 d1 1 2 rank\\n", name="bm25.txt")
    >>> b = read_runs(b"q1 Q0 d2 1 2 rank\\n", name="splade.txt",
    ...               taken_names={"rank": "bm25.txt"})
    >>> [r.name for r in shared_tag_names([*a, *b])]
    ['bm25:rank', 'splade:rank']
    """
    files: dict[str, list[str]] = {}
    for r in runs:
        if r.tag is not None:
            files.setdefault(r.tag, []).append(r.source)
    shared = {t for t, f in files.items() if len(f) > 1}
    if not shared:
        return list(runs)
    taken = {r.name for r in runs if r.tag not in shared}
    out = []
    for r in runs:
        if r.tag not in shared:
            out.append(r)
            continue
        tag = r.tag
        name = unique_name(None, f"{file_stem(r.source)}:{tag}", taken)
        taken.add(name)
        others = ", ".join(files[tag])
        note = DataWarning("run-renamed", f"tag {tag!r} is the tag of runs in {len(files[tag])} "
                           f"files ({others}): each is named after its file and tag, this "
                           f"one {name!r}", source=r.source, count=1)
        kept = [w for w in r.warnings if w.code != "run-renamed"]
        out.append(r.renamed(name, warnings=[*kept, note]))
    return out


def unique_name(tag: str | None, stem: str, taken: set[str]) -> str:
    """``tag``, or ``stem:tag`` (``stem`` without a tag), numbered when already taken."""
    candidates = [tag] if tag else []
    candidates += [f"{stem}:{tag}" if tag else stem]
    for c in candidates:
        if c not in taken:
            return c
    base, k = candidates[-1], 2
    while f"{base}-{k}" in taken:
        k += 1
    return f"{base}-{k}"


def read_columns(src: Source, kind: Kind, format: Format) -> tuple[pa.Table, list[DataWarning]]:
    """Return a table with columns qid, docid, rel|score (+ tag), and reading warnings.

    Ids and tags are validated strings (plain or dictionary-coded), values finite
    float64; a tag may be empty or a missing-value marker (see
    :data:`~.columns.MISSING_TAGS`). Text that is not UTF-8 is transcoded first
    (:mod:`~.encoding`), with an ``encoding`` warning.
    """
    _, table, warnings = decoded_columns(src, kind, format)
    if "iter" in table.column_names:  # kept for read_qrels' judgment groups only
        table = table.drop_columns(["iter"])
    return table, warnings


def empty_file_error(name: str, kind: Kind) -> FormatError:
    """The error for a qrels or run file without a data line (nothing but blanks, or
    nothing but comment lines when they are skipped), naming the file and its layout.

    >>> print(empty_file_error("run.txt", "run"))
    run.txt: file is empty; expected run lines 'qid Q0 docid rank score tag'
    """
    cols = " ".join(TREC_COLUMNS[kind])
    return FormatError(f"file is empty; expected {kind} lines '{cols}'", source=name)


def decoded_columns(src: Source, kind: Kind, format: Format
                    ) -> tuple[Source, pa.Table, list[DataWarning]]:
    """:func:`read_columns`, and the source read: ``src``, or its text as UTF-8."""
    if src.is_blank():
        raise empty_file_error(src.name, kind)
    if format == "xlsx" or (format == "auto" and is_workbook(src)):
        stage("parsing")
        return (src, *read_xlsx_columns(src, kind))
    refuse_unreadable(src)
    fmt = format if format != "auto" else detect_format(src)
    if fmt == "parquet":  # by its bytes or its name: not text
        stage("parsing")
        return (src, *read_parquet(src, kind))
    text = decode_bom(src)
    if text is not src and format == "auto":  # UTF-16: by content, whatever its name
        fmt = detect_format(text, extensions=False)
    src = text

    def read(text: Source) -> tuple[Source, pa.Table, list[DataWarning]]:
        stage("parsing")
        if fmt == "trec":
            return (text, *read_trec(text, kind))
        if fmt == "json":
            return text, read_json(text, kind), []
        if fmt == "parquet":
            return (text, *read_parquet(text, kind))
        return (text, *read_delimited(text, kind, "," if fmt == "csv" else "\t"))

    used, table, warnings = read_text(src, read, header=fmt in ("csv", "tsv"))
    note = encoding_warning(used)
    return used, table, ([note] if note is not None else []) + warnings


def _duplicate_error(src: Source, kind: Kind, format: Format,
                     exc: DuplicateEntryError) -> FormatError:
    """Turn a row-level duplicate into a line-level message."""
    fmt = format if format != "auto" else "xlsx" if is_workbook(src) else detect_format(src)
    if fmt == "trec":
        err = diagnose_trec(src, kind)[0]
        if err is not None:
            return err
    if fmt in ("csv", "tsv"):
        err = diagnose_delimited(src, kind, "," if fmt == "csv" else "\t")
        if err is not None:
            return err
    return FormatError(
        f"duplicate {kind} entry for query {exc.query_id!r}, document {exc.doc_id!r} "
        f"(rows {exc.rows[0] + 1} and {exc.rows[1] + 1})", source=src.name)
