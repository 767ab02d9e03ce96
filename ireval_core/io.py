"""Readers for qrels and runs: TREC text, CSV/TSV with a header, Parquet and JSON.

Every reader takes a path or the raw bytes of an upload (with its file name), plain
or gzip-compressed, and returns immutable :class:`~ireval_core.data.Qrels` or
:class:`~ireval_core.data.Run` objects.

Formats
-------
TREC qrels
    ``qid iter docid rel`` separated by spaces or tabs; ``iter`` is ignored.
TREC run
    ``qid Q0 docid rank score tag``; ``Q0`` and ``rank`` are ignored (the ranking
    is score descending, then document id descending). A file with several tags
    holds several systems and gives several runs.
CSV / TSV
    A header row naming the columns. Accepted names (case-insensitive):
    query ``qid, query_id, query, topic, topic_id``; document ``docid, doc_id,
    docno, document_id, doc, pid, passage_id``; grade ``rel, relevance, label,
    grade, judgment``; score ``score, sim, similarity``; system ``tag, run,
    run_id, run_name, system``; rank ``rank`` (used, negated, only when there is
    no score column, with a warning). Other columns are ignored.
Parquet
    The same column names as CSV.
JSON
    ``{qid: {docid: value}}`` as pytrec_eval and ranx use (grade for qrels,
    score for runs).

Parsing is columnar (pyarrow's multi-threaded CSV reader) with no Python loop over
lines. When the fast path rejects a file, a slow line-by-line pass finds the
first bad line so that the :class:`~ireval_core.errors.FormatError` can name it.
"""

from __future__ import annotations

import csv as _pycsv
import gzip
import io
import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import BinaryIO, Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from .data import DuplicateEntryError, Qrels, Run, dictionary_codes
from .errors import DataWarning, FormatError, invalid_parameter

__all__ = ["read_qrels", "read_run", "read_runs", "Source"]

Kind = Literal["qrels", "run"]
Format = Literal["auto", "trec", "csv", "tsv", "parquet", "json"]

_TREC_COLUMNS = {
    "qrels": ("qid", "iter", "docid", "rel"),
    "run": ("qid", "Q0", "docid", "rank", "score", "tag"),
}
_ALIASES = {
    "qid": ("qid", "query_id", "query", "topic", "topic_id", "queryid", "q_id"),
    "docid": ("docid", "doc_id", "docno", "document_id", "doc", "pid", "passage_id", "corpus_id"),
    "rel": ("rel", "relevance", "label", "grade", "judgment", "judgement"),
    "score": ("score", "sim", "similarity"),
    "tag": ("tag", "run", "run_id", "run_name", "system"),
    "rank": ("rank",),
}
_VALUE = {"qrels": "rel", "run": "score"}
_VALUE_WORD = {"rel": "grade", "score": "score"}

PathOrBytes = str | Path | bytes | bytearray | memoryview | BinaryIO


class Source:
    """One input: the name used in messages, and its bytes.

    A plain (uncompressed) file on disk is not read into memory up front: the
    columnar parser streams it, and the bytes are loaded only when a slow
    diagnostic pass has to name a bad line.
    """

    def __init__(self, name: str, data: bytes | None = None, path: Path | None = None) -> None:
        if data is None and path is None:
            raise invalid_parameter("path", "Source", "a path when data is None", path)
        self.name = name
        self._data = data
        self.path = path

    @classmethod
    def of(cls, source: PathOrBytes | Source, name: str | None = None) -> Source:
        """Wrap a path, bytes or binary file object; gunzip when compressed."""
        if isinstance(source, Source):
            return source
        data: bytes | None = None
        path: Path | None = None
        if isinstance(source, str | Path):
            path = Path(source)
            name = name or path.name
            with open(path, "rb") as fh:
                if fh.read(2) == b"\x1f\x8b":
                    data = path.read_bytes()
        elif isinstance(source, bytes | bytearray | memoryview):
            data = bytes(source)
        else:
            data = source.read()
            name = name or getattr(source, "name", None)
        name = str(name or "<input>")
        if data is not None and data[:2] == b"\x1f\x8b":
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError) as exc:
                raise FormatError(f"cannot decompress gzip data ({exc})", source=name) from exc
            path = None
        return cls(name, data, None if data is not None else path)

    @property
    def data(self) -> bytes:
        """All the bytes (read from disk on first use)."""
        if self._data is None:
            self._data = self._path().read_bytes()
        return self._data

    def _path(self) -> Path:
        """The file on disk; only called while the bytes are not loaded."""
        if self.path is None:  # __init__ rejects a Source with neither data nor path
            raise ValueError(f"{self.name}: neither bytes nor a path to read")
        return self.path

    def head(self, size: int = 1 << 16) -> bytes:
        """The first ``size`` bytes, without reading the rest of a file."""
        if self._data is not None:
            return self._data[:size]
        with open(self._path(), "rb") as fh:
            return fh.read(size)

    def stream(self) -> pa.NativeFile:
        """A pyarrow input stream over the bytes (the file itself when not yet loaded)."""
        if self._data is None:
            return pa.OSFile(str(self._path()))
        return pa.BufferReader(self._data)

    def is_blank(self) -> bool:
        """True when the input holds nothing but whitespace."""
        head = self.head()
        if head.strip():
            return False
        return len(head) < (1 << 16) or not self.data.strip()

    @property
    def stem(self) -> str:
        """File name without folders and known extensions (``run.bm25.txt.gz`` → ``run.bm25``)."""
        stem = Path(self.name).name
        for ext in (".gz", ".txt", ".trec", ".tsv", ".csv", ".parquet", ".pq", ".json",
                    ".qrels", ".run", ".res"):
            if stem.lower().endswith(ext) and len(stem) > len(ext):
                stem = stem[: -len(ext)]
        return stem


# ----------------------------------------------------------------------------- public API


def read_qrels(source: PathOrBytes | Source, *, name: str | None = None,
               format: Format = "auto") -> Qrels:
    """Read relevance judgments.

    Parameters
    ----------
    source:
        A path, the bytes of an upload, or a binary file object (gzip is detected).
    name:
        File name used in messages (defaults to the path's name).
    format:
        ``"auto"`` (by content and extension), ``"trec"``, ``"csv"``, ``"tsv"``,
        ``"parquet"`` or ``"json"``.

    Raises
    ------
    FormatError
        With file, line and what was expected, for anything that is not valid qrels.
    """
    src = Source.of(source, name)
    table, warnings = _read_table(src, "qrels", format)
    grades = _numeric(table.column("rel"))
    frac = grades[np.isfinite(grades) & (grades != np.floor(grades))]
    if frac.size:
        warnings.append(DataWarning(
            "fractional-grades",
            f"{frac.size} grade(s) are not whole numbers; kept as they are "
            "(trec_eval would truncate them)",
            src.name, int(frac.size), tuple(str(x) for x in np.unique(frac)[:3])))
    try:
        return Qrels.from_arrays(table.column("qid"), table.column("docid"), grades,
                                 source=src.name, warnings=warnings)
    except DuplicateEntryError as exc:
        raise _duplicate_error(src, "qrels", format, exc) from None


def read_runs(source: PathOrBytes | Source, *, name: str | None = None,
              format: Format = "auto",
              taken_names: Iterable[str] | Mapping[str, str] = ()) -> list[Run]:
    """Read a run file, which may hold several systems (one per tag).

    Each system is named by its tag; by the file name when there is no tag column
    or when the tag is already in ``taken_names`` (then ``stem:tag``, numbered if
    needed), with a ``run-renamed`` warning naming both files when ``taken_names``
    maps each name to the file it came from. Returns one :class:`Run` per tag, in
    order of first appearance.
    """
    src = Source.of(source, name)
    table, warnings = _read_table(src, "run", format)
    owners = dict(taken_names) if isinstance(taken_names, Mapping) else dict.fromkeys(
        taken_names, "")
    taken = set(owners)
    scores = _numeric(table.column("score"))
    if "tag" in table.column_names:
        tag_codes, tag_dict = dictionary_codes(table.column("tag"))
        tag_names = tag_dict.to_pylist()
    else:
        tag_names, tag_codes = [None], None
    if len(tag_names) == 1:  # one system: hand the columns over, drop the table
        parts = [{"qid": table.column("qid"), "docid": table.column("docid")}]
        del table
    else:
        parts = [{"qid": table.column("qid").filter(pa.array(tag_codes == i)),
                  "docid": table.column("docid").filter(pa.array(tag_codes == i))}
                 for i in range(len(tag_names))]
        del table
    runs = []
    for i, tag in enumerate(tag_names):
        part_scores = scores if len(tag_names) == 1 else scores[tag_codes == i]
        run_name = _unique_name(tag, src.stem, taken)
        taken.add(run_name)
        run_warnings = list(warnings)
        if tag and run_name != tag:
            other = owners.get(tag, "")
            where = f"the run {tag!r} of {other}" if other else f"the run name {tag!r}"
            run_warnings.append(DataWarning(
                "run-renamed", f"tag {tag!r} is already {where}: this run is named "
                f"{run_name!r}", source=src.name, count=1))
        try:
            runs.append(Run.from_columns(parts[i], part_scores, name=run_name,
                                         source=src.name, warnings=run_warnings))
        except DuplicateEntryError as exc:
            if tag_codes is not None and len(tag_names) > 1:
                first, second = np.flatnonzero(tag_codes == i)[list(exc.rows)]
                exc.rows = (int(first), int(second))
            raise _duplicate_error(src, "run", format, exc) from None
        parts[i] = {}
    return runs


def read_run(source: PathOrBytes | Source, *, name: str | None = None,
             format: Format = "auto") -> Run:
    """Read a run file holding exactly one system (see :func:`read_runs`)."""
    src = Source.of(source, name)
    runs = read_runs(src, format=format)
    if len(runs) != 1:
        raise FormatError(
            f"expected one system, found {len(runs)} tags ({', '.join(r.name for r in runs)}); "
            "use read_runs to read them all", source=src.name)
    return runs[0]


def _unique_name(tag: str | None, stem: str, taken: set[str]) -> str:
    candidates = [tag] if tag else []
    candidates += [f"{stem}:{tag}" if tag else stem]
    for c in candidates:
        if c not in taken:
            return c
    base, k = candidates[-1], 2
    while f"{base}-{k}" in taken:
        k += 1
    return f"{base}-{k}"


# ----------------------------------------------------------------------------- dispatch


def _detect_format(src: Source, format: Format) -> str:
    if format != "auto":
        return format
    if src.head(4) == b"PAR1":
        return "parquet"
    lower = src.name.lower().removesuffix(".gz")
    for ext, fmt in ((".parquet", "parquet"), (".pq", "parquet"), (".json", "json"),
                     (".csv", "csv"), (".tsv", "tsv")):
        if lower.endswith(ext):
            return fmt
    head = src.head(4096).lstrip()
    if head[:1] == b"{":
        return "json"
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace").strip().lower()
    for sep, fmt in ((",", "csv"), ("\t", "tsv")):
        names = [c.strip() for c in first.split(sep)]
        if len(names) > 1 and any(n in _ALIASES["qid"] for n in names) and any(
                n in _ALIASES["docid"] for n in names):
            return fmt
    return "trec"


def _read_table(src: Source, kind: Kind, format: Format) -> tuple[pa.Table, list[DataWarning]]:
    """Return a table with columns qid, docid, rel|score (+ tag), and reading warnings."""
    if src.is_blank():
        cols = " ".join(_TREC_COLUMNS[kind])
        raise FormatError(f"file is empty; expected {kind} lines '{cols}'", source=src.name)
    fmt = _detect_format(src, format)
    if fmt == "trec":
        return _read_trec(src, kind)
    if fmt == "json":
        return _read_json(src, kind), []
    if fmt == "parquet":
        import pyarrow.parquet as pq

        try:
            table = pq.read_table(src.stream())
        except (pa.ArrowException, OSError) as exc:
            raise FormatError(f"not a readable Parquet file ({exc})", source=src.name) from None
        return _columns_by_alias(table, src, kind, header_line=None)
    return _read_delimited(src, kind, "," if fmt == "csv" else "\t")


# ----------------------------------------------------------------------------- TREC text

def _read_trec(src: Source, kind: Kind) -> tuple[pa.Table, list[DataWarning]]:
    _check_first_line(src, kind)
    warnings: list[DataWarning] = []
    delimiter = _sniff_delimiter(src.head())
    try:
        if delimiter is None:  # mixed whitespace: normalise first
            raise pa.ArrowInvalid("irregular whitespace")
        table = _parse_trec(src.stream(), kind, delimiter)
    except (pa.ArrowInvalid, pa.ArrowException):
        table = None
    if table is None:
        # Irregular whitespace (tabs and spaces mixed, runs of blanks, CR, blanks at
        # line ends) is legal in TREC files: normalise to single spaces, lines kept.
        data = _normalise_whitespace(src.data)
        try:
            table = _parse_trec(pa.BufferReader(data), kind, " ")
        except (pa.ArrowInvalid, pa.ArrowException):
            error, extra = _diagnose_trec(src, kind)
            if error is not None or not extra:
                raise error or FormatError(f"could not read as TREC {kind}",
                                           source=src.name) from None
            # trec_eval reads the first six fields of a run line and ignores the rest
            data = re.sub(rb"(?m)^((?:\S+ ){5}\S+) .*$", rb"\1", data)
            table = _parse_trec(pa.BufferReader(data), kind, " ")
            warnings.append(DataWarning(
                "extra-columns", f"{extra} line(s) have more than 6 columns; the extra "
                "columns were ignored (as trec_eval does)", src.name, extra))
    values = table.column(_VALUE[kind])
    if values.null_count or not np.isfinite(_numeric(values)).all():
        raise _diagnose_trec(src, kind)[0] or FormatError(
            f"non-finite {_VALUE_WORD[_VALUE[kind]]}", source=src.name)
    pa.default_memory_pool().release_unused()  # the parser's block buffers
    return table, warnings


def _sniff_delimiter(head: bytes) -> str | None:
    """Single spaces or single tabs from the first lines; None for irregular whitespace."""
    if head[:1] in (b" ", b"\t") or any(p in head for p in (b"  ", b"\t\t", b"\r", b" \n",
                                                               b"\n ", b"\t\n", b"\n\t")):
        return None
    if b"\t" in head:
        return "\t" if b" " not in head else None
    return " "


def _normalise_whitespace(data: bytes) -> bytes:
    """Runs of spaces, tabs and CRs become one space; no space at line ends (lines kept)."""
    data = re.sub(rb"[ \t\r]+", b" ", data)
    return re.sub(rb"(?m)^ | $", b"", data)


def _parse_trec(stream: pa.NativeFile, kind: Kind, delimiter: str) -> pa.Table:
    """Columnar parse with pyarrow; raises pyarrow's error on any malformed line.

    Document ids are read as plain strings and coded afterwards: with millions of
    distinct values, pyarrow's dictionary conversion inside the CSV reader is
    several times slower than one ``dictionary_encode`` pass over the finished
    column. Query ids and tags (few distinct values) are dictionary-coded by the
    reader itself, block by block, which costs no time and keeps a 7M-line run's
    table about 110 MB smaller.
    """
    names = _TREC_COLUMNS[kind]
    keep = ["qid", "docid", _VALUE[kind]] + (["tag"] if kind == "run" else [])
    coded = pa.dictionary(pa.int32(), pa.string())
    types = {"qid": coded, "docid": pa.string(), _VALUE[kind]: pa.float64(), "tag": coded}
    return pacsv.read_csv(
        stream,
        read_options=pacsv.ReadOptions(column_names=list(_col_keys(names)),
                                       block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=delimiter, quote_char=False,
                                         double_quote=False, escape_char=False,
                                         ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types={k: types[k] for k in keep}, include_columns=keep,
            null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False),
    )


def _col_keys(names: tuple[str, ...]) -> tuple[str, ...]:
    return tuple({"Q0": "q0", "iter": "iter"}.get(n, n) for n in names)


def _lines(src: Source) -> Iterable[tuple[int, bytes]]:
    return enumerate(src.data.splitlines(), start=1)


def _check_first_line(src: Source, kind: Kind) -> None:
    """Say early, by shape, when qrels were given as a run or the reverse."""
    head = src.head()
    for lineno, raw in enumerate(head.splitlines()[:-1] or [head], start=1):
        fields = raw.split()
        if not fields:
            continue
        text = raw.decode("utf-8", "replace")
        other = "run" if kind == "qrels" else "qrels"
        if len(fields) == len(_TREC_COLUMNS[other]) != len(_TREC_COLUMNS[kind]):
            raise FormatError(
                f"this looks like a TREC {other} file ({len(fields)} columns: "
                f"{' '.join(_TREC_COLUMNS[other])}), but a {kind} file was expected "
                f"({' '.join(_TREC_COLUMNS[kind])})", source=src.name, line=lineno, text=text)
        return


def _diagnose_trec(src: Source, kind: Kind) -> tuple[FormatError | None, int]:
    """Slow line-by-line pass naming the first bad line (only used on failure).

    Returns the error (or None) and the number of run lines with extra columns,
    which trec_eval ignores and so do we, with a warning.
    """
    names = _TREC_COLUMNS[kind]
    value_col = names.index(_VALUE[kind] if kind == "run" else "rel")
    seen: dict[tuple[str, ...], int] = {}
    extra = 0
    for lineno, raw in _lines(src):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return FormatError(
                f"line is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at column {exc.start + 1});"
                " save the file as UTF-8", source=src.name, line=lineno,
                text=raw.decode("utf-8", "replace")), extra
        fields = text.split()
        if not fields:
            continue
        if kind == "run" and len(fields) > len(names):
            extra += 1
            fields = fields[: len(names)]
        if len(fields) != len(names):
            return FormatError(f"expected {len(names)} columns ({' '.join(names)}), "
                               f"got {len(fields)}", source=src.name, line=lineno,
                               text=text), extra
        value = fields[value_col]
        word = _VALUE_WORD[_VALUE[kind]]
        try:
            number = float(value)
        except ValueError:
            return FormatError(f"expected a numeric {word} in column {value_col + 1}, "
                               f"got {value!r}", source=src.name, line=lineno, text=text), extra
        if not np.isfinite(number):
            return FormatError(f"expected a finite {word} in column {value_col + 1}, "
                               f"got {value!r}", source=src.name, line=lineno, text=text), extra
        key = (fields[0], fields[2]) if kind == "qrels" else (fields[0], fields[2], fields[5])
        if key in seen:
            return _dup_message(src, kind, seen[key], lineno, fields[0], fields[2], text), extra
        seen[key] = lineno
    return None, extra


def _dup_message(src: Source, kind: Kind, first: int, second: int, qid: str, docid: str,
                 text: str | None) -> FormatError:
    return FormatError(
        f"duplicate {kind} entry for query {qid!r}, document {docid!r} "
        f"(first at line {first}); each (query, document) may appear once",
        source=src.name, line=second, text=text)


def _duplicate_error(src: Source, kind: Kind, format: Format,
                     exc: DuplicateEntryError) -> FormatError:
    """Turn a row-level duplicate into a line-level message."""
    fmt = _detect_format(src, format)
    if fmt == "trec":
        err = _diagnose_trec(src, kind)[0]
        if err is not None:
            return err
    if fmt in ("csv", "tsv"):
        first, second = (int(r) + 2 for r in exc.rows)  # header is line 1
        return _dup_message(src, kind, first, second, exc.query_id, exc.doc_id, None)
    return FormatError(
        f"duplicate {kind} entry for query {exc.query_id!r}, document {exc.doc_id!r} "
        f"(rows {exc.rows[0] + 1} and {exc.rows[1] + 1})", source=src.name)


# ----------------------------------------------------------------------------- CSV / TSV / Parquet


def _read_delimited(src: Source, kind: Kind, delimiter: str) -> tuple[pa.Table, list[DataWarning]]:
    try:
        table = pacsv.read_csv(
            src.stream(),
            parse_options=pacsv.ParseOptions(delimiter=delimiter, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, pa.ArrowException):
        raise _diagnose_delimited(src, delimiter) from None
    return _columns_by_alias(table, src, kind, header_line=1, delimiter=delimiter)


def _diagnose_delimited(src: Source, delimiter: str) -> FormatError:
    try:
        text = src.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = src.data.count(b"\n", 0, exc.start) + 1
        return FormatError("line is not valid UTF-8; save the file as UTF-8",
                           source=src.name, line=lineno)
    reader = _pycsv.reader(io.StringIO(text), delimiter=delimiter)
    header = None
    for row in reader:
        if not row:
            continue
        if header is None:
            header = row
            continue
        if len(row) != len(header):
            return FormatError(f"expected {len(header)} fields ({delimiter.join(header)}), "
                               f"got {len(row)}", source=src.name, line=reader.line_num,
                               text=delimiter.join(row))
    return FormatError("could not read as delimited text with a header row", source=src.name)


def _columns_by_alias(table: pa.Table, src: Source, kind: Kind, *, header_line: int | None,
                      delimiter: str = ",") -> tuple[pa.Table, list[DataWarning]]:
    lower = {c.strip().lower(): c for c in table.column_names}
    found = {}
    for key, aliases in _ALIASES.items():
        for a in aliases:
            if a in lower:
                found[key] = lower[a]
                break
    warnings: list[DataWarning] = []
    if kind == "run" and "score" not in found and "rel" in found and "rank" not in found:
        raise FormatError("this looks like qrels (a relevance column and no score), but a run "
                          "was expected", source=src.name, line=header_line)
    if kind == "qrels" and "rel" not in found and "score" in found:
        raise FormatError("this looks like a run (a score column and no relevance), but qrels "
                          "were expected", source=src.name, line=header_line)
    need = ["qid", "docid", _VALUE[kind]]
    if kind == "run" and "score" not in found and "rank" in found:
        warnings.append(DataWarning("score-from-rank", "no score column: ranking by the rank "
                                    "column (score = -rank)", src.name))
        found["score"] = found["rank"]
        table = table.set_column(table.column_names.index(found["rank"]), found["rank"],
                                 pc.negate(table.column(found["rank"]).cast(pa.float64())))
    missing = [k for k in need if k not in found]
    if missing:
        expected = "; ".join(f"{k}: one of {', '.join(_ALIASES[k])}" for k in missing)
        raise FormatError(f"missing column(s) in header {list(table.column_names)}; expected "
                          f"{expected}", source=src.name, line=header_line)
    cols = need + (["tag"] if kind == "run" and "tag" in found else [])
    out = {}
    for k in cols:
        col = table.column(found[k])
        if k in ("rel", "score"):
            col = _to_float(col, src, found[k], header_line, table)
        else:
            col = col.cast(pa.string())
        out[k] = col
    return pa.table(out), warnings


def _to_float(col: pa.ChunkedArray, src: Source, name: str, header_line: int | None,
              table: pa.Table) -> pa.ChunkedArray:
    word = "grade" if name in _ALIASES["rel"] else "score"
    try:
        values = col.cast(pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        as_text = col.cast(pa.string()).to_pylist()
        for i, v in enumerate(as_text):
            try:
                float(v)
            except (TypeError, ValueError):
                line = i + header_line + 1 if header_line else None
                raise FormatError(f"expected a numeric {word} in column {name!r}, got {v!r}",
                                  source=src.name, line=line) from None
        raise
    arr = _numeric(values)
    bad = np.flatnonzero(~np.isfinite(arr) | np.asarray(values.is_null()))
    if bad.size:
        i = int(bad[0])
        line = i + header_line + 1 if header_line else None
        raise FormatError(f"expected a finite numeric {word} in column {name!r}, "
                          f"got {col[i].as_py()!r}", source=src.name,
                          line=line if header_line else None)
    return values


def _numeric(col: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return col.to_numpy(zero_copy_only=False).astype(np.float64, copy=False)


# ----------------------------------------------------------------------------- JSON


def _read_json(src: Source, kind: Kind) -> pa.Table:
    def no_duplicates(pairs: list[tuple[str, object]]) -> dict:
        out: dict = {}
        for k, v in pairs:
            if k in out:
                raise FormatError(f"duplicate key {k!r} in a JSON object; each (query, "
                                  "document) may appear once", source=src.name)
            out[k] = v
        return out

    try:
        obj = json.loads(src.data.decode("utf-8"), object_pairs_hook=no_duplicates)
    except UnicodeDecodeError as exc:
        line = src.data.count(b"\n", 0, exc.start) + 1
        raise FormatError("not valid UTF-8; save the file as UTF-8", source=src.name,
                          line=line) from None
    except json.JSONDecodeError as exc:
        raise FormatError(f"invalid JSON: {exc.msg} (column {exc.colno})", source=src.name,
                          line=exc.lineno) from None
    word = _VALUE_WORD[_VALUE[kind]]
    if not isinstance(obj, dict):
        raise FormatError(f"expected a JSON object {{qid: {{docid: {word}}}}}", source=src.name)
    q: list[str] = []
    d: list[str] = []
    v: list[float] = []
    for qid, docs in obj.items():
        if not isinstance(docs, dict):
            raise FormatError(f"expected {{docid: {word}}} for query {qid!r}, got "
                              f"{type(docs).__name__}", source=src.name)
        for docid, value in docs.items():
            if isinstance(value, bool) or not isinstance(value, int | float) or not np.isfinite(
                    value):
                raise FormatError(f"expected a finite numeric {word} for query {qid!r}, "
                                  f"document {docid!r}, got {value!r}", source=src.name)
            q.append(qid)
            d.append(docid)
            v.append(float(value))
    if not q:
        raise FormatError(f"no entries; expected {{qid: {{docid: {word}}}}}", source=src.name)
    return pa.table({"qid": pa.array(q, pa.string()), "docid": pa.array(d, pa.string()),
                     _VALUE[kind]: pa.array(v, pa.float64())})
