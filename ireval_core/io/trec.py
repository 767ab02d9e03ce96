"""TREC text: ``qid iter docid rel`` qrels and ``qid Q0 docid rank score tag`` runs.

Parsed by pyarrow's multi-threaded CSV reader when the file is separated by single
spaces or single tabs; irregular whitespace (tabs and spaces mixed, runs of blanks, CR
line ends) is normalised first, as trec_eval splits on any run of blanks. When the
fast path rejects a file, :func:`diagnose_trec` names the bad lines (up to 100 at
once): a pass over whole columns picks the lines that may be bad or repeat a key, and
the per-line checks word those. Extra columns of a run line are ignored, as
trec_eval does, with a warning.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .._arrow import release_unused, string_layout
from ..errors import DataWarning, FormatError
from .checks import (
    CONTROL_RE2,
    Problems,
    dup_message,
    find_problem,
    first_control_character,
    iter_lines,
    problem_message,
    tag_key,
    text_problem,
    value_problem,
)
from .columns import MISSING_TAGS, TREC_COLUMNS, VALUE_KEY, VALUE_WORD, Kind
from .encoding import not_utf8
from .source import Source, arrow_copy, one_line, parse_threads

__all__ = ["COMMENT_HINT", "GROUPS_EXPLAINED", "GROUPS_NOTE", "LineCheck", "check_first_line",
           "check_trec_lines", "diagnose_fields", "diagnose_trec", "fields_malformed",
           "groups_note", "has_comment_lines", "has_judgment_groups", "read_fields",
           "read_trec", "skip_comments", "trec_key"]

_RUN_COMMENT = re.compile(rb"(?m)^[ \t]*#[^\r\n]*")
_QRELS_COMMENT = re.compile(rb"(?m)^#[^\r\n]*(?:\r\n|\r|\n)?")
COMMENT_HINT = ("; a line starting with '#' is a comment for trec_eval 10.0 (which skips "
                "it; in qrels only at the line's first character and not right after another "
                "comment line), data for 9.0.8")
"""Added to the message of a bad line starting with ``#``. How to choose trec_eval
10.0's reading is the caller's to say (a CLI flag, a sidebar option): see
:func:`has_comment_lines`."""


GROUPS_NOTE = ("; the two lines differ in their second column ({first!r} at line {line}, "
               "{second!r} here)")
"""Added to the message of a qrels line judging a (query, document) again in another
judgment group (the second column): the two groups, on every such line. The first such
line also gets :data:`GROUPS_EXPLAINED`."""
GROUPS_EXPLAINED = (": the file looks like judgment groups (trec_eval -R qrels_jg), each of "
                    "which judges a document once")
"""Said once per error, after :data:`GROUPS_NOTE` on the first line judging a document again
in another judgment group: what such a file is. How to read it is the caller's to say (the
CLI's ``eval -R qrels_jg``; what the app does): see :func:`has_judgment_groups`."""
_GROUPS_MARK = "the file looks like judgment groups"


def has_judgment_groups(error: FormatError) -> bool:
    """Whether a problem of ``error`` is a qrels document judged again in another
    judgment group (the first such problem says :data:`GROUPS_EXPLAINED`): a file for
    trec_eval's ``-R qrels_jg``, so the caller can say how to read it.

    >>> from ireval_core.io import read_qrels
    >>> try:
    ...     read_qrels(b"1 A d1 1\\n1 B d1 0\\n", name="q")
    ... except FormatError as exc:
    ...     has_judgment_groups(exc)
    True
    """
    return any(_GROUPS_MARK in p.message for p in error.problems)


def has_comment_lines(error: FormatError) -> bool:
    """Whether a line ``error`` names starts with ``#`` (blanks before it allowed): a
    comment line for trec_eval 10.0's readers, so the caller can say how to read the
    file with that rule.

    >>> has_comment_lines(FormatError("expected 4 columns", source="q", line=1, text="# A"))
    True
    """
    return any(p.text is not None and p.text.lstrip(" \t").startswith("#")
               for p in error.problems)


def skip_comments(src: Source, kind: str = "run") -> tuple[Source, DataWarning | None]:
    """``src`` with trec_eval 10.0's comment lines blanked, and a warning counting them.

    trec_eval 10.0 has two rules. Its run reader skips blanks at the start of a line and
    then the line when it goes on with ``#``. Its qrels readers (``kind`` ``"qrels"``;
    also preference and judgment-group files) skip a line whose first character is
    ``#``, one at a time: the line after a comment line is read as data whatever it
    starts with, so a second ``#`` line in a row is data (and mostly malformed). A ``#``
    anywhere else is part of a field (``CR93E-3103#37`` is a document id). The lines
    are emptied, not removed, so that every message keeps the file's own line numbers.
    ``src`` itself when it has no comment line.

    Examples
    --------
    >>> src, note = skip_comments(Source("q", b"# judged by A\\n1 0 d#1 1\\n"), "qrels")
    >>> src.data, note.count
    (b'\\n1 0 d#1 1\\n', 1)
    """
    data = src.data
    pattern = _RUN_COMMENT if kind == "run" else _QRELS_COMMENT
    if pattern.search(data) is None:
        return src, None
    if kind == "run":
        blanked, count = pattern.subn(b"", data)
    else:
        pieces: list[bytes] = []
        last, after_comment = 0, -1
        for match in pattern.finditer(data):
            if match.start() == after_comment:  # right after a comment line: data
                continue
            end = match.end()
            line_end = match.group()[len(match.group().rstrip(b"\r\n")):]
            pieces += [data[last:match.start()], line_end]
            last, after_comment = end, end
        count = len(pieces) // 2
        blanked = b"".join([*pieces, data[last:]])
    note = DataWarning("comment-lines", f"{count} comment line(s) starting with '#' were "
                       "skipped, as trec_eval 10.0 does", src.name, count)
    return Source(src.name, blanked, limits=src.limits, encoding=src.encoding), note


def read_trec(src: Source, kind: Kind) -> tuple[pa.Table, list[DataWarning]]:
    """Qrels or a run from TREC text: columns qid, docid, rel|score (+ tag), and warnings."""
    check_first_line(src, kind)
    warnings: list[DataWarning] = []
    delimiter = _sniff_delimiter(src.head())
    if delimiter is not None:
        table, _ = _try_parse_trec(src.stream(), kind, delimiter)
        # a tab inside a field of a space-delimited file (or a space in a tab-delimited
        # one) is a field separator for trec_eval: only the normalised parse is right
        if table is not None and find_problem(table, kind, edges=False,
                                              forbid_space=delimiter == "\t") is None:
            release_unused()  # the parser's block buffers
            return table, warnings
        del table
    # Irregular whitespace (tabs and spaces mixed, runs of blanks, CR line ends, blanks
    # at line ends) is legal in TREC files: normalise to single spaces, lines kept.
    data = _normalise_whitespace(src.data)
    table, arrow_error = _try_parse_trec(pa.BufferReader(arrow_copy(data)), kind, " ")
    if table is None:
        error, extra = diagnose_trec(src, kind)
        if error is not None:
            raise error
        if extra:
            # trec_eval reads the first six fields of a run line and ignores the rest
            data = re.sub(rb"(?m)^((?:[^ \n]+ ){5}[^ \n]+) [^\n]*$", rb"\1", data)
            table, arrow_error = _try_parse_trec(pa.BufferReader(arrow_copy(data)), kind, " ")
            warnings.append(DataWarning(
                "extra-columns", f"{extra} line(s) have more than 6 columns; the extra "
                "columns were ignored (as trec_eval does)", src.name, extra))
    del data
    if table is None:
        raise FormatError(f"could not read as TREC {kind} ({one_line(arrow_error)})",
                          source=src.name)
    found = find_problem(table, kind, edges=False)
    if found is not None:
        error = diagnose_trec(src, kind)[0]
        raise error or FormatError(problem_message(table, *found, edges=False),
                                   source=src.name)
    release_unused()
    return table, warnings


def _try_parse_trec(stream: pa.NativeFile, kind: Kind, delimiter: str
                    ) -> tuple[pa.Table | None, str]:
    """The parsed table, or None and pyarrow's message (only the text is kept)."""
    message = ""
    try:
        return _parse_trec(stream, kind, delimiter), ""
    except pa.ArrowException as exc:
        message = str(exc)
    return None, message


def _sniff_delimiter(head: bytes) -> str | None:
    """Single spaces or single tabs from the first lines; None for irregular whitespace."""
    if head[:1] in (b" ", b"\t") or any(p in head for p in (b"  ", b"\t\t", b"\r", b" \n",
                                                               b"\n ", b"\t\n", b"\n\t")):
        return None
    if b"\t" in head:
        return "\t" if b" " not in head else None
    return " "


def _normalise_whitespace(data: bytes) -> bytes:
    """Line ends become LF; runs of spaces and tabs one space; no space at line ends."""
    data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    data = re.sub(rb"[ \t]+", b" ", data)
    return re.sub(rb"(?m)^ | $", b"", data)


def _parse_trec(stream: pa.NativeFile, kind: Kind, delimiter: str) -> pa.Table:
    """Columnar parse with pyarrow; raises pyarrow's error on any malformed line.

    Document ids are read as plain strings and coded afterwards: with millions of
    distinct values, pyarrow's dictionary conversion inside the CSV reader is
    several times slower than one ``dictionary_encode`` pass over the finished
    column. Query ids, tags and a qrels file's ``iter`` (few distinct values) are
    dictionary-coded by the reader itself, block by block, which costs no time and
    keeps a 7M-line run's table about 110 MB smaller.
    """
    names = TREC_COLUMNS[kind]
    # a qrels file's iter column: the judgment group (-R qrels_prefs, -R qrels_jg), coded
    keep = ["qid", "docid", VALUE_KEY[kind]] + (["tag"] if kind == "run" else ["iter"])
    coded = pa.dictionary(pa.int32(), pa.string())
    types = {"qid": coded, "docid": pa.string(), VALUE_KEY[kind]: pa.float64(), "tag": coded,
             "iter": coded}
    return pacsv.read_csv(
        stream,
        read_options=pacsv.ReadOptions(column_names=list(_col_keys(names)),
                                       block_size=1 << 24, use_threads=parse_threads()),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False,
                                         double_quote=False, escape_char=False,
                                         ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types={k: types[k] for k in keep}, include_columns=keep,
            null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
    )


def _col_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple({"Q0": "q0", "iter": "iter"}.get(n, n) for n in names)


def check_first_line(src: Source, kind: Kind) -> None:
    """Say early, by shape, when qrels were given as a run or the reverse (from the first
    non-blank line; before any other check of the file)."""
    head = src.head()
    for lineno, raw in enumerate(head.splitlines()[:-1] or [head], start=1):
        fields = raw.split()
        if not fields:
            continue
        text = raw.decode("utf-8", "replace")
        other = "run" if kind == "qrels" else "qrels"
        if len(fields) == len(TREC_COLUMNS[other]) != len(TREC_COLUMNS[kind]):
            raise FormatError(
                f"this looks like a TREC {other} file ({len(fields)} columns: "
                f"{' '.join(TREC_COLUMNS[other])}), but a {kind} file was expected "
                f"({' '.join(TREC_COLUMNS[kind])})", source=src.name, line=lineno, text=text)
        return


class LineCheck(NamedTuple):
    """What the line-by-line pass finds on one non-blank line of a TREC file.

    ``problem`` is what is wrong with the line (with :data:`COMMENT_HINT` when it starts
    with ``#``), or None for a good line, whose ``fields`` are then its columns (the first
    six of a run line with more; ``extra`` says it had more). Whether a good line gives a
    (query, document) again is the caller's to check: :func:`diagnose_trec` does it for a
    whole file, :mod:`ireval_core.distributed` across the blocks of a partitioned one.
    """

    line: int
    text: str
    problem: str | None
    fields: tuple[str, ...]
    extra: bool


def check_trec_lines(src: Source, kind: Kind, *, first_line: int = 1) -> Iterator[LineCheck]:
    """The non-blank lines of TREC text, each checked as :func:`diagnose_trec` checks it
    (column count, number, ids), numbered from ``first_line``.

    Fields are split exactly as the fast path splits them (runs of spaces and tabs; lines
    end with LF, CRLF or CR). A line that is not UTF-8 stops the pass
    (:class:`~.encoding.NotUtf8`).
    """
    for lineno, raw in iter_lines(src.data):
        check = _check_line(src, kind, lineno + first_line - 1, raw)
        if check is not None:
            yield check


def _check_line(src: Source, kind: Kind, lineno: int, raw: bytes) -> LineCheck | None:
    """One line of :func:`check_trec_lines` (``raw`` with or without its line end), or
    None when it is blank."""
    names = TREC_COLUMNS[kind]
    raw = raw.rstrip(b"\r\n")
    if not raw.strip(b" \t"):
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise not_utf8(src, lineno, raw, exc.start) from None
    fields = re.split(r"[ \t]+", text.strip(" \t"))
    extra = kind == "run" and len(fields) > len(names)
    if extra:
        fields = fields[: len(names)]
    hint = COMMENT_HINT if fields[0].startswith("#") else ""
    if len(fields) != len(names):
        return LineCheck(lineno, text, f"expected {len(names)} columns ({' '.join(names)}), "
                         f"got {len(fields)}{hint}", tuple(fields), extra)
    value_col = names.index(VALUE_KEY[kind] if kind == "run" else "rel")
    problem = value_problem(fields[value_col], VALUE_WORD[VALUE_KEY[kind]], str(value_col + 1))
    for key, i in (("qid", 0), ("docid", 2)) + ((("tag", 5),) if kind == "run" else ()):
        problem = problem or text_problem(fields[i], key, edges=False)
    return LineCheck(lineno, text, None if problem is None else problem + hint,
                     tuple(fields), extra)


def trec_key(kind: Kind, fields: tuple[str, ...]) -> tuple[str, ...]:
    """The fields of a good TREC line that may not repeat: (query, document), and a run
    line's tag (tags meaning "no tag" are one, :func:`~.checks.tag_key`)."""
    return (fields[0], fields[2]) if kind == "qrels" else (fields[0], fields[2],
                                                           tag_key(fields[5]))


def diagnose_trec(src: Source, kind: Kind) -> tuple[FormatError | None, int]:
    """Line-by-line pass naming the bad lines (only used on failure).

    Lines are checked as :func:`check_trec_lines` checks them. Returns the error (or
    None) and the number of run lines with extra columns, which trec_eval ignores and so
    do we, with a warning. The error holds every bad line up to
    :data:`~.checks.MAX_PROBLEMS` (wrong column count, bad number, bad id, a (query,
    document) given again) and counts the rest. A line that is not UTF-8 stops the pass
    (:class:`~.encoding.NotUtf8`: the file is decoded again as a whole).

    A vectorised first pass (:func:`_lines_to_check`) finds the lines that may be bad or
    give a key that repeats; only those go through the per-line checks, in file order,
    so the result is that of checking every line, in a fraction of the time.
    """
    data = src.data
    starts, ends, rows, extra = _lines_to_check(data, kind)
    lines = ((int(i) + 1, data[starts[i]:ends[i]]) for i in rows.tolist())
    return _diagnose_lines(src, kind, lines)[0], extra


def _diagnose_lines(src: Source, kind: Kind, lines: Iterable[tuple[int, bytes]]
                    ) -> tuple[FormatError | None, int]:
    """:func:`diagnose_trec` over the given ``(line number, line)`` pairs, in order."""
    seen: dict[tuple[str, ...], tuple[int, str]] = {}  # line, and a qrels line's group
    extra = 0
    explained = False  # whether a problem said the file looks like judgment groups
    problems = Problems(src)
    for lineno, raw in lines:
        check = _check_line(src, kind, lineno, raw)
        if check is None:
            continue
        extra += check.extra
        if check.problem is not None:
            problems.add(check.line, check.problem, check.text)
            continue
        fields = check.fields
        key_fields = trec_key(kind, fields)
        if key_fields in seen:
            first, group = seen[key_fields]
            note = ""
            if kind == "qrels" and group != fields[1]:  # what such a file is: said once
                note = groups_note(group, first, fields[1], explain=not explained)
                explained = True
            problems.add_error(dup_message(src, kind, first, check.line, fields[0], fields[2],
                                           check.text, note=note))
            continue
        seen[key_fields] = (check.line, fields[1])
    return problems.error(), extra


_FINITE_FORM = r"^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$"
"""A number as :func:`~.checks.value_problem` accepts it, without nan and inf."""


def _lines_to_check(data: bytes, kind: Kind) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """The lines of ``data`` the per-line checks must see, found over whole columns.

    Returns each line's start and end (its line end included; line ``i + 1`` is
    ``data[starts[i]:ends[i]]``), the indices of the lines to check, in order, and the
    number of run lines with extra columns. When ``data`` is not UTF-8, the one line to
    check is the first that is not (where the per-line checks stop). A line is
    checked when it may be bad (wrong column count, a value that is not a plain finite
    number, a control character anywhere) or when its key (:func:`trec_key`, from the
    same split on runs of spaces and tabs) is given by another line with the right
    column count. Every other line is good and gives a key no other line gives, so the
    per-line checks say nothing about it and its key cannot be repeated.
    """
    raw = np.frombuffer(data, dtype=np.uint8)
    size = raw.size
    lf = np.flatnonzero(raw == 0x0A)
    cr = np.flatnonzero(raw == 0x0D)
    if cr.size:  # a CR is a line end unless an LF follows it (then that LF is)
        nxt = np.minimum(cr + 1, size - 1)
        cr = cr[(cr + 1 >= size) | (raw[nxt] != 0x0A)]
        ends = np.union1d(lf, cr) + 1
    else:
        ends = lf + 1
    del lf, cr, raw
    if not ends.size or ends[-1] != size:
        ends = np.append(ends, size)  # the last line has no line end (or data is empty)
    starts = np.concatenate(([0], ends[:-1])).astype(np.int64)
    ends = ends.astype(np.int64)
    n = len(ends)
    offsets = np.concatenate((starts, ends[-1:]))
    try:
        lines = pa.Array.from_buffers(pa.large_binary(), n, [None, pa.py_buffer(offsets),
                                                             pa.py_buffer(data)]
                                      ).cast(pa.large_string())
    except pa.ArrowInvalid:  # not UTF-8: the per-line checks stop at the first such line
        return starts, ends, _first_not_utf8(data, starts, ends), 0
    # blanks at the ends dropped, tabs and runs of blanks one space (each pass halves runs)
    text = pc.replace_substring(pc.ascii_trim(lines, " \t\r\n"), "\t", " ")
    del lines
    while pc.any(pc.match_substring(text, "  ")).as_py():
        text = pc.replace_substring(text, "  ", " ")
    names = TREC_COLUMNS[kind]
    ncols = len(names)
    nonblank = np.diff(string_layout(text)[0]) > 0
    counts = pc.count_substring(text, " ").to_numpy(zero_copy_only=False) + 1
    whole = nonblank & ((counts >= ncols) if kind == "run" else (counts == ncols))
    check = nonblank & ~whole
    check |= pc.match_substring_regex(text, CONTROL_RE2).to_numpy(zero_copy_only=False)
    extra = int(np.count_nonzero(nonblank & (counts > ncols))) if kind == "run" else 0
    whole = np.flatnonzero(whole)  # lines with their columns: values and keys to look at
    if whole.size:
        if whole.size < n:
            text = pc.take(text, pa.array(whole))
        fields = pc.split_pattern(text, " ", max_splits=ncols)
        del text
        value_col = names.index(VALUE_KEY[kind] if kind == "run" else "rel")
        value = pc.list_element(fields, value_col)
        bad = ~pc.match_substring_regex(value, _FINITE_FORM).to_numpy(zero_copy_only=False)
        try:
            numbers = pc.cast(pc.if_else(pa.array(bad), "0", value), pa.float64()).to_numpy()
            bad |= ~(np.abs(numbers) < 1e308)  # near the largest double: let float() say
        except pa.ArrowInvalid:  # a form pyarrow does not read: every line is checked
            bad[:] = True
        check[whole[bad]] = True
        key = [pc.list_element(fields, 0), pc.list_element(fields, 2)]
        if kind == "run":
            tag = pc.list_element(fields, 5)
            key.append(pc.if_else(pc.is_in(tag, pa.array(sorted(MISSING_TAGS))), "", tag))
        del fields, value
        joined = pc.binary_join_element_wise(*key, pa.scalar(" ", pa.large_string()))
        codes = pc.dictionary_encode(joined).indices.to_numpy(zero_copy_only=False)
        del joined, key
        check[whole[np.bincount(codes)[codes] > 1]] = True
    return starts, ends, np.flatnonzero(check), extra


def _first_not_utf8(data: bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The index of the first line of ``data`` that is not UTF-8 (every index when none
    is), decoding about a mebibyte of whole lines at a time."""
    k, n = 0, len(starts)
    while k < n:
        j = max(int(np.searchsorted(starts, starts[k] + (1 << 20))), k + 1)
        try:
            data[starts[k]:ends[j - 1]].decode("utf-8")
        except UnicodeDecodeError as exc:
            return np.array([np.searchsorted(ends, starts[k] + exc.start, side="right")])
        k = j
    return np.arange(n)


def groups_note(first: str, line: int | str, second: str, *, explain: bool) -> str:
    """What a qrels line judging a document again in another judgment group adds to its
    message: :data:`GROUPS_NOTE`, and :data:`GROUPS_EXPLAINED` when ``explain`` (the first
    such line of an error)."""
    note = GROUPS_NOTE.format(first=first, line=line, second=second)
    return note + (GROUPS_EXPLAINED if explain else "")


def read_fields(src: Source, columns: tuple[str, ...]) -> pa.Table:
    """The fast read of a whitespace-separated judgments file (those of
    :func:`diagnose_fields`): one column per name in ``columns``, ids as text, the last
    column a number (``float64``). Line ends and runs of spaces and tabs are normalised
    first, as trec_eval splits on any run of blanks; blank lines are skipped. Raises
    pyarrow's error (or ``UnicodeDecodeError``) on a malformed line; check the table with
    :func:`fields_malformed`. Used by the readers of ``-R qrels_jg`` and ``-R prefs`` /
    ``qrels_prefs``.
    """
    data = _normalise_whitespace(src.data)
    types = {c: pa.float64() if c == columns[-1] else pa.string() for c in columns}
    return pacsv.read_csv(
        pa.BufferReader(arrow_copy(data)),
        read_options=pacsv.ReadOptions(column_names=list(columns)),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False,
                                         double_quote=False, escape_char=False,
                                         ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(column_types=types, null_values=[],
                                             strings_can_be_null=False))


def fields_malformed(table: pa.Table) -> bool:
    """Whether a table of :func:`read_fields` has a number that is not finite, or an id
    that is empty (a line starting with a blank) or holds a control character; then
    :func:`diagnose_fields` names the lines."""
    *ids, value = table.column_names
    control = [first_control_character(table.column(c)) is not None
               or pc.any(pc.equal(pc.utf8_length(table.column(c)), 0)).as_py()
               for c in ids]
    return not np.isfinite(table.column(value).to_numpy()).all() or any(control)


def diagnose_fields(src: Source, words: tuple[str, ...], layout: str, value_word: str,
                    key: Callable[[list[str]], tuple[str, ...]],
                    again: Callable[[tuple[str, ...]], str]) -> FormatError | None:
    """The bad lines (up to 100) of a whitespace-separated judgments file whose columns are
    ids named by ``words`` (``"qid"``, ``"tag"``, ``"docid"``) then a number
    (``value_word``), found line by line; None when every line is good. ``key`` gives
    the fields that may not repeat, ``again`` names a repeated key. The readers of
    ``-R qrels_jg`` and ``-R prefs`` / ``qrels_prefs`` call it once their fast read failed.
    """
    problems = Problems(src)
    seen: dict[tuple[str, ...], int] = {}
    n = len(words) + 1
    for lineno, raw in iter_lines(src.data):
        text = raw.rstrip(b"\r\n").decode("utf-8", "replace")
        fields = re.split(r"[ \t]+", text.strip(" \t"))
        if fields == [""]:
            continue
        hint = COMMENT_HINT if fields[0].startswith("#") else ""
        if len(fields) != n:
            problems.add(lineno, f"expected {n} columns ({layout}), got {len(fields)}" + hint,
                         text)
            continue
        problem = value_problem(fields[-1], value_word, str(n))
        for field, word in zip(fields, words, strict=False):
            problem = problem or text_problem(field, word, edges=False)
        if problem is not None:
            problems.add(lineno, problem + hint, text)
            continue
        k = key(fields)
        if k in seen:
            problems.add(lineno, f"{again(k)} is judged again (first on line {seen[k]})", text)
            continue
        seen[k] = lineno
    return problems.error()
