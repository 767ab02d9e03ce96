"""The text to judge: topics (what the user typed) and documents (what the engine showed).

:func:`read_topics` reads

* TREC topic files: ``<top>`` blocks with ``<num> Number: 301`` and ``<title>`` (the
  classic layout), or XML ``<topic number="1">`` with ``<query>`` (TREC-COVID, TREC DL
  style), optionally ``<question>``/``<desc>`` and ``<narrative>``/``<narr>``;
* TSV ``qid<TAB>text`` (MS MARCO's ``queries.tsv``), no header;
* CSV with a header naming a query-id column (``qid``, ``query_id``, ``id``, ``topic``,
  ``number``) and a text column (``query``, ``text``, ``title``, ``question``).

:func:`read_documents` reads ``docid<TAB>text`` TSV (MS MARCO's ``collection.tsv``; a
header ``docid``/``id``/``pid`` is skipped), JSON lines with ``id``/``docid``/``_id``,
``title``, ``text``/``contents``, ``url`` (BEIR's ``corpus.jsonl``, Pyserini's
``contents``), and Parquet with the same columns. A collection can be far bigger than
memory: the file is read in one streaming pass of 16 MB blocks (Arrow's CSV, JSON and
Parquet readers) and only the documents asked for are kept, with progress reported
through :func:`ireval_core.progress.stage` and an optional callback.

Every input may be gzip-compressed (recognised by its first bytes), a path, bytes, a
binary file object or ``(name, bytes)`` (an upload). Errors are
:class:`~ireval_core.errors.FormatError` naming the file, the line and what was expected.
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import pyarrow as pa

from ..errors import FormatError, invalid_parameter
from ..progress import stage

__all__ = ["DOC_ID_COLUMNS", "TOPIC_ID_COLUMNS", "TOPIC_TEXT_COLUMNS", "Document",
           "read_documents", "read_topics"]

TextSource = str | os.PathLike[str] | bytes | bytearray | memoryview | BinaryIO | tuple[
    str, bytes]
"""One input of the text readers: a path, bytes, a binary file object or ``(name, bytes)``."""

TOPIC_ID_COLUMNS = ("qid", "query_id", "topic_id", "id", "topic", "number", "num")
"""Header names of a topic CSV's id column, in the order they are looked for."""
TOPIC_TEXT_COLUMNS = ("query", "text", "title", "question", "query_text")
"""Header names of a topic CSV's text column, in the order they are looked for."""
DOC_ID_COLUMNS = ("docid", "doc_id", "id", "_id", "pid")
"""Names of a document's id, in JSON lines and Parquet (and a TSV header)."""
_TEXT_COLUMNS = ("text", "contents", "body")
BLOCK = 16 << 20
"""Bytes per block of the streaming readers."""
_GZIP = b"\x1f\x8b"
_PARQUET = b"PAR1"


@dataclass(frozen=True)
class Document:
    """One document as shown to a rater (empty strings for what the file lacks)."""

    doc_id: str
    text: str
    title: str = ""
    url: str = ""


# ------------------------------------------------------------------------- opening


class _Input:
    """A streaming view of one input: its name, a binary stream (gunzipped), the size of
    the raw input and how far into it the stream is."""

    def __init__(self, source: TextSource, name: str | None) -> None:
        self.path: Path | None = None
        self._buffer: pa.Buffer | None = None
        if isinstance(source, tuple):
            name, data = source
            self._buffer = pa.py_buffer(bytes(data))
        elif isinstance(source, bytes | bytearray | memoryview):
            self._buffer = pa.py_buffer(bytes(source))
        elif isinstance(source, str | os.PathLike):
            self.path = Path(source)
            name = name or self.path.name
        elif hasattr(source, "read"):
            self._buffer = pa.py_buffer(source.read())
            name = name or str(getattr(source, "name", "upload"))
        else:
            raise invalid_parameter("source", "read_documents", "a path, bytes, a binary "
                                    "file or (name, bytes)", source, error=TypeError)
        self.name = str(name or "upload")
        self.rows_read: float | None = None
        self.raw = self._open()
        self.size = (os.path.getsize(self.path) if self.path is not None
                     else self._buffer.size if self._buffer is not None else 0)
        head = self.raw.read(4)
        self.raw.seek(0)
        self.gzip = head[:2] == _GZIP
        self.parquet = head == _PARQUET
        self.stream: pa.NativeFile = (pa.CompressedInputStream(self.raw, "gzip")
                                      if self.gzip else self.raw)

    def _open(self) -> pa.NativeFile:
        if self.path is not None:
            return pa.OSFile(str(self.path), "rb")
        return pa.BufferReader(self._buffer)

    def done(self) -> int:
        """Bytes of the raw input consumed so far (Parquet: the share of its rows read,
        in bytes of the file; its reader jumps about the file)."""
        return int(self.raw.tell()) if self.rows_read is None else int(
            self.size * self.rows_read)

    def head(self, n: int = 1 << 16) -> bytes:
        """The first ``n`` bytes of the text, read through a handle of its own."""
        raw = self._open()
        try:
            stream = pa.CompressedInputStream(raw, "gzip") if self.gzip else raw
            return bytes(stream.read(n))
        finally:
            raw.close()

    def text(self) -> str:
        data = bytes(self.stream.read())
        try:
            return data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data[:exc.start].count(b"\n") + 1
            raise FormatError("expected UTF-8 text", source=self.name, line=line) from None

    def close(self) -> None:
        self.raw.close()


# -------------------------------------------------------------------------- topics


_TOP = re.compile(r"<top>(.*?)</top>", re.S | re.I)
_NUM = re.compile(r"<num>\s*(?:Number:)?\s*([^\s<]+)", re.I)
_TITLE = re.compile(r"<title>\s*(?:Topic:)?\s*(.*?)\s*(?=<|\Z)", re.S | re.I)
_TOPIC = re.compile(r"<topic\b([^>]*)>(.*?)</topic>", re.S | re.I)
_NUMBER_ATTR = re.compile(r"""number\s*=\s*["']?([^"'\s>]+)""", re.I)
_QUERY = re.compile(r"<(query|title)>\s*(.*?)\s*</\1>", re.S | re.I)


def read_topics(source: TextSource, *, name: str | None = None) -> dict[str, str]:
    """Topics as ``{qid: text}``, in file order (the query or title text; see the module
    docstring for the layouts).

    Examples
    --------
    >>> read_topics(b"1\\tcoronavirus origin\\n2\\thow does the coronavirus respond\\n")
    {'1': 'coronavirus origin', '2': 'how does the coronavirus respond'}
    >>> read_topics(b'<topics><topic number="7"><query>serological tests</query>'
    ...             b'</topic></topics>')
    {'7': 'serological tests'}
    """
    src = _Input(source, name)
    try:
        text = src.text()
    finally:
        src.close()
    stripped = text.lstrip()
    if stripped.startswith("<") or "<top>" in text[:4096].lower():
        return _trec_topics(text, src.name)
    first = stripped.split("\n", 1)[0]
    if "\t" in first:
        return _tsv_topics(text, src.name)
    return _csv_topics(text, src.name)


def _line_of(text: str, at: int) -> int:
    return text.count("\n", 0, at) + 1


def _trec_topics(text: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    blocks = [(m.start(), m.group(1), None) for m in _TOP.finditer(text)] + [
        (m.start(), m.group(2), m.group(1)) for m in _TOPIC.finditer(text)]
    if not blocks:
        raise FormatError("expected TREC topics: <top> blocks with <num> and <title>, or "
                          "<topic number=...> with <query>", source=name, line=1,
                          text=text.split("\n", 1)[0])
    for at, body, attrs in sorted(blocks, key=lambda b: b[0]):
        line = _line_of(text, at)
        num = (_NUMBER_ATTR.search(attrs) if attrs is not None else None) or _NUM.search(body)
        if num is None:
            raise FormatError("expected a topic number (<num> Number: N, or "
                              "<topic number=\"N\">)", source=name, line=line,
                              text=body.strip().split("\n", 1)[0])
        found = _QUERY.search(body)
        title = found.group(2) if found is not None else None
        if title is None:
            t = _TITLE.search(body)
            title = t.group(1) if t is not None else None
        if not title or not title.strip():
            raise FormatError(f"expected a <title> or <query> for topic {num.group(1)}",
                              source=name, line=line)
        qid = num.group(1).strip()
        if qid in out:
            raise FormatError(f"topic {qid} appears twice", source=name, line=line)
        out[qid] = " ".join(title.split())
    return out


def _tsv_topics(text: str, name: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        qid, tab, rest = raw.partition("\t")
        if not tab or not qid.strip():
            raise FormatError("expected 2 columns (qid<TAB>text)", source=name, line=n,
                              text=raw)
        if qid.strip() in out:
            raise FormatError(f"query {qid.strip()} appears twice", source=name, line=n,
                              text=raw)
        out[qid.strip()] = rest.strip()
    return out


def _csv_topics(text: str, name: str) -> dict[str, str]:
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None:
        raise FormatError("file is empty; expected topics", source=name, line=1)
    lower = [h.strip().lower() for h in header]
    id_col = next((lower.index(c) for c in TOPIC_ID_COLUMNS if c in lower), None)
    text_col = next((lower.index(c) for c in TOPIC_TEXT_COLUMNS if c in lower), None)
    if id_col is None or text_col is None:
        raise FormatError(
            "expected a header with a query id column (" + ", ".join(TOPIC_ID_COLUMNS)
            + ") and a text column (" + ", ".join(TOPIC_TEXT_COLUMNS) + ")",
            source=name, line=1, text=",".join(header))
    out: dict[str, str] = {}
    for row in rows:
        n = rows.line_num
        if not any(c.strip() for c in row):
            continue
        if len(row) <= max(id_col, text_col):
            raise FormatError(f"expected {len(header)} columns, got {len(row)}",
                              source=name, line=n, text=",".join(row))
        qid = row[id_col].strip()
        if qid in out:
            raise FormatError(f"query {qid} appears twice", source=name, line=n,
                              text=",".join(row))
        out[qid] = row[text_col].strip()
    return out


# ----------------------------------------------------------------------- documents


def read_documents(source: TextSource, wanted: Iterable[str] | None = None, *,
                   name: str | None = None,
                   progress: Callable[[int, int], None] | None = None
                   ) -> dict[str, Document]:
    """The documents of ``wanted`` (all when ``None``) found in one streaming pass.

    Parameters
    ----------
    source
        ``docid<TAB>text`` TSV, JSON lines or Parquet (see the module docstring), plain or
        gzip-compressed.
    wanted : iterable of str, optional
        The document ids to keep (those the judge queue needs); the others are dropped
        block by block, so memory holds only these.
    name : str, optional
        The name used in messages (default: the file's name).
    progress : callable, optional
        Called after every block with ``(bytes read, total bytes)`` of the input as
        stored (compressed bytes for a gzip file); :func:`~ireval_core.progress.stage`
        also hears ``reading NAME: 40%``.

    Returns
    -------
    dict
        ``{doc_id: Document}`` of the documents found, in file order; a wanted id the
        file lacks is absent.

    Examples
    --------
    >>> docs = read_documents(b"d1\\tfirst passage\\nd2\\tsecond\\nd3\\tthird\\n",
    ...                       wanted=["d3", "d1", "zz"])
    >>> [(d.doc_id, d.text) for d in docs.values()]
    [('d1', 'first passage'), ('d3', 'third')]
    """
    keep = None if wanted is None else pa.array(sorted(set(map(str, wanted))),
                                                type=pa.string())
    src = _Input(source, name)
    try:
        if src.parquet:
            batches = _parquet_batches(src)
        else:
            head = src.head(4096).lstrip()
            batches = _json_batches(src) if head.startswith(b"{") else _tsv_batches(src)
        out: dict[str, Document] = {}
        for batch in batches:
            _keep_batch(batch, keep, out)
            if progress is not None:
                progress(src.done(), src.size)
            stage(f"reading {src.name}: {100.0 * src.done() / max(src.size, 1):.0f}%")
        return out
    finally:
        src.close()


def _keep_batch(batch: dict[str, pa.Array], keep: pa.Array | None,
                out: dict[str, Document]) -> None:
    import pyarrow.compute as pc

    ids = batch["docid"]
    if keep is not None:
        mask = pc.is_in(ids, value_set=keep)
        if not pc.any(mask).as_py():
            return
        batch = {k: pc.filter(v, mask) for k, v in batch.items()}
        ids = batch["docid"]
    cols = {k: v.to_pylist() for k, v in batch.items()}
    empty = [""] * len(cols["docid"])
    for d, text, title, url in zip(cols["docid"], cols.get("text", empty),
                                   cols.get("title", empty), cols.get("url", empty),
                                   strict=True):
        out[d] = Document(d, text or "", title or "", url or "")


def _tsv_batches(src: _Input) -> Iterator[dict[str, pa.Array]]:
    import pyarrow.csv as pcsv

    first = src.head(1 << 16).split(b"\n", 1)[0]
    if b"\t" not in first:
        raise FormatError("expected 2 columns (docid<TAB>text), JSON lines or Parquet",
                          source=src.name, line=1, text=first.decode("utf-8", "replace"))
    header = first.split(b"\t", 1)[0].strip().lower().decode("utf-8", "replace") in (
        DOC_ID_COLUMNS)
    problems: list[Any] = []

    def bad(row: Any) -> str:
        problems.append(row)
        return "error"

    try:
        reader = pcsv.open_csv(
            src.stream,
            read_options=pcsv.ReadOptions(column_names=["docid", "text"], block_size=BLOCK,
                                          skip_rows=1 if header else 0, use_threads=True),
            parse_options=pcsv.ParseOptions(delimiter="\t", quote_char=False,
                                            escape_char=False, newlines_in_values=False,
                                            invalid_row_handler=bad),
            convert_options=pcsv.ConvertOptions(
                column_types={"docid": pa.string(), "text": pa.string()},
                strings_can_be_null=False, quoted_strings_can_be_null=False))
    except pa.ArrowInvalid as exc:
        raise _tsv_error(src, problems, exc) from None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            raise _tsv_error(src, problems, exc) from None
        yield {"docid": batch.column(0), "text": batch.column(1)}


def _tsv_error(src: _Input, problems: list[Any], exc: Exception) -> FormatError:
    """The first bad line of a TSV collection, found again by a slow pass (line numbers
    are not known to the block reader)."""
    for p in problems:
        if p.number is not None and p.number > 0:
            return FormatError(f"expected 2 columns (docid<TAB>text), got "
                               f"{p.actual_columns}", source=src.name, line=int(p.number),
                               text=p.text)
    if src.path is not None:
        import gzip

        opener = gzip.open if src.gzip else open
        with opener(src.path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                line = raw.rstrip(b"\r\n")
                tabs = line.count(b"\t")
                if line and tabs != 1:
                    return FormatError(
                        f"expected 2 columns (docid<TAB>text), got {tabs + 1}",
                        source=src.name, line=n, text=line.decode("utf-8", "replace"))
    text = problems[0].text if problems else str(exc).splitlines()[0]
    return FormatError("expected 2 columns (docid<TAB>text)", source=src.name, text=text)


def _json_batches(src: _Input) -> Iterator[dict[str, pa.Array]]:
    import pyarrow.json as pjson

    try:
        reader = pjson.open_json(src.stream, read_options=pjson.ReadOptions(
            block_size=BLOCK, use_threads=True))
    except pa.ArrowInvalid as exc:
        raise _json_error(src, exc) from None
    while True:
        try:
            batch = reader.read_next_batch()
        except StopIteration:
            return
        except pa.ArrowInvalid as exc:
            raise _json_error(src, exc) from None
        yield _columns(pa.Table.from_batches([batch]), src.name)


def _json_error(src: _Input, exc: Exception) -> FormatError:
    """The first line that is not a JSON object, found by a slow pass."""
    import json

    if src.path is not None:
        import gzip

        opener = gzip.open if src.gzip else open
        with opener(src.path, "rb") as fh:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    if not isinstance(json.loads(raw), dict):
                        raise ValueError
                except ValueError:
                    return FormatError("expected one JSON object per line (id, title, "
                                       "text, url)", source=src.name, line=n,
                                       text=raw.decode("utf-8", "replace").rstrip())
    return FormatError("expected one JSON object per line (id, title, text, url): "
                       + str(exc).splitlines()[0], source=src.name)


def _parquet_batches(src: _Input) -> Iterator[dict[str, pa.Array]]:
    import pyarrow.parquet as pq

    f = pq.ParquetFile(src.raw)
    names = f.schema_arrow.names
    wanted = [n for n in names if n.lower() in {*DOC_ID_COLUMNS, *_TEXT_COLUMNS, "title",
                                                "url"}]
    total = max(f.metadata.num_rows, 1)
    read = 0
    for batch in f.iter_batches(columns=wanted, batch_size=65_536):
        read += batch.num_rows
        src.rows_read = read / total
        yield _columns(pa.Table.from_batches([batch]), src.name)


def _columns(table: pa.Table, name: str) -> dict[str, pa.Array]:
    """``docid``, ``text``, ``title``, ``url`` of a JSON-lines or Parquet block."""
    lower = {n.lower(): n for n in table.column_names}
    id_name = next((lower[c] for c in DOC_ID_COLUMNS if c in lower), None)
    if id_name is None:
        raise FormatError("expected a document id field (" + ", ".join(DOC_ID_COLUMNS)
                          + "), got " + ", ".join(table.column_names), source=name,
                          line=1)
    out = {"docid": _strings(table.column(id_name))}
    text_name = next((lower[c] for c in _TEXT_COLUMNS if c in lower), None)
    for key, col in (("text", text_name), ("title", lower.get("title")),
                     ("url", lower.get("url"))):
        if col is not None:
            out[key] = _strings(table.column(col))
    return out


def _strings(col: pa.ChunkedArray) -> pa.Array:
    arr = col.combine_chunks()
    if not pa.types.is_string(arr.type) and not pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.string())
    return arr

