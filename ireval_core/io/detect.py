"""The format detector: which reader an input goes to, from its content and its name.

Every reader asks :func:`detect_format`, naming the formats it reads:

1. content signatures: Parquet's ``PAR1`` (at the start, and at the end or followed by
   binary bytes), the ZIP header of an Excel ``.xlsx`` workbook; then, for labeling
   files, the exports of labeling tools: Label Studio's JSON (a list of tasks with
   ``data`` and ``annotations``) and Quepid's ratings CSV (a header ``query,docid,...``
   without a round or position column);
2. the file name's extension (``.parquet``, ``.pq``, ``.xlsx``, ``.json``, ``.csv``,
   ``.tsv``; a ``.gz`` after it is ignored), unless the reader recognises text by its
   content alone (query metadata); a ``.csv`` or ``.tsv`` qrels or run file whose first
   line is a TREC line, not a header, is TREC (MS MARCO's ``qrels.dev.small.tsv``);
3. the text itself: qrels and runs are JSON when they start with ``{``, CSV or TSV
   when the first line, split by commas or tabs, names a query and a document column,
   TREC otherwise; a table with a header row is TSV when its first line holds more
   tabs than commas, CSV otherwise.

Adding an input format means a line in :data:`SIGNATURES` or :data:`EXTENSIONS`, its
name in the readers' format tuples and in :data:`DASK_READING` (how the Dask engine reads
it), and its reading module.

>>> from ireval_core.io import Source
>>> detect_format(Source("run", b"q1 Q0 d1 1 2.5 bm25\\n"))
'trec'
>>> detect_format(Source("l", b"month\\tqid\\tdocid\\n"), TABLE_FORMATS)
'tsv'
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Literal

from ..errors import FormatError
from .columns import ALIASES, LABEL_ALIASES
from .source import ZIP_MAGIC, Source

__all__ = ["DASK_READING", "EXTENSIONS", "FORMATS", "LABEL_FORMATS", "MEMORY_ONLY_WORDS",
           "METADATA_FORMATS", "RUN_FORMATS",
           "SIGNATURES", "TABLE_FORMATS", "TEXT_SIGNATURES", "Format", "detect_format",
           "is_workbook", "refuse_unreadable"]

Format = Literal["auto", "trec", "csv", "tsv", "parquet", "json", "xlsx"]
FORMATS = ("auto", "trec", "csv", "tsv", "parquet", "json", "xlsx")
"""The ``format=`` values of the qrels and run readers."""

RUN_FORMATS = ("trec", "csv", "tsv", "parquet", "json")
"""What qrels and runs may be written in."""
TABLE_FORMATS = ("csv", "tsv", "parquet", "xlsx")
"""What labeling and GSB tables may be written in."""
LABEL_FORMATS = (*TABLE_FORMATS, "labelstudio", "quepid")
"""What labeling files may be: a table, or a labeling tool's export (Label Studio's JSON,
Quepid's ratings CSV)."""
METADATA_FORMATS = ("csv", "tsv", "parquet")
"""What query metadata may be written in."""

DaskReading = Literal["lines", "dataset", "file", "memory"]
DASK_READING: dict[str, DaskReading] = {
    "trec": "lines", "csv": "lines", "tsv": "lines", "parquet": "dataset", "json": "memory",
    "xlsx": "memory"}
"""How the Dask engine (:mod:`~ireval_core.io.dask`) reads each format of qrels and runs:
``lines``, text cut into blocks of whole lines, each read by the format's parser;
``dataset``, by Dask's Parquet reader (row groups); ``file``, each file whole in one
partition by the in-memory reader; ``memory``, not at all (a
:class:`~ireval_core.errors.FormatError` says it is read in memory only). Every format
of :data:`FORMATS` but ``auto`` has an entry (a test checks it)."""
MEMORY_ONLY_WORDS = {"json": "JSON input is", "xlsx": "Excel workbooks are"}
"""The subject of the Dask engine's "... read in memory only" error, per format."""


def _is_parquet(src: Source) -> bool:
    head = src.head(64)
    return head[:4] == b"PAR1" and (src.tail(4) == b"PAR1"
                                    or re.search(rb"[\x00-\x08\x0e-\x1f]", head[4:]) is not None)


def _is_zip(src: Source) -> bool:
    return src.head(4) == ZIP_MAGIC


SIGNATURES: tuple[tuple[str, Callable[[Source], bool]], ...] = (
    ("parquet", _is_parquet), ("xlsx", _is_zip))
"""Formats recognised by their bytes, checked first, in this order."""


def _is_label_studio(src: Source) -> bool:
    """A Label Studio JSON export: a list of tasks with ``data`` and ``annotations``."""
    head = src.head(1 << 16).removeprefix(b"\xef\xbb\xbf").lstrip()
    return head[:1] == b"[" and b'"annotations"' in head and b'"data"' in head


_NOT_QUEPID = frozenset(a for k in ("round", "position") for a in LABEL_ALIASES[k])


def _is_quepid(src: Source) -> bool:
    """A Quepid ratings CSV: ``query,docid,...`` without a round or position column."""
    first = re.split(rb"\r\n|\r|\n", src.head(1 << 16), maxsplit=1)[0]
    names = [n.strip().lower() for n in
             first.removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace").split(",")]
    return names[:2] == ["query", "docid"] and not _NOT_QUEPID.intersection(names[2:])


TEXT_SIGNATURES: tuple[tuple[str, Callable[[Source], bool]], ...] = (
    ("labelstudio", _is_label_studio), ("quepid", _is_quepid))
"""Exports of labeling tools, recognised by their text before the file name is looked
at (a Quepid export is a ``.csv``, a Label Studio export a ``.json``)."""
EXTENSIONS = ((".parquet", "parquet"), (".pq", "parquet"), (".xlsx", "xlsx"), (".json", "json"),
              (".json", "labelstudio"), (".csv", "csv"), (".tsv", "tsv"))
"""Formats recognised by the file name (after the content signatures). A labeling file
named ``.json`` that is not recognisably Label Studio's export is still read as JSON
(Label Studio's reader then says what is wrong with it), never as a CSV."""

_OTHER_COMPRESSION = ((ZIP_MAGIC, "a zip archive"), (b"\xfd7zXZ\x00", "xz"),
                      (b"\x28\xb5\x2f\xfd", "zstd"))


def _is_trec_line(src: Source) -> bool:
    """Whether the first line is a TREC qrels or run line rather than a header row:
    4 fields with a numeric grade last, or 6 with a numeric rank and score, split on
    white space (spaces or tabs), and no field is a query or document column name.

    A ``.tsv`` or ``.csv`` name does not make a file a table: MS MARCO's
    ``qrels.dev.small.tsv`` holds tab-separated TREC qrels lines.

    >>> _is_trec_line(Source("qrels.dev.small.tsv", b"1048585\\t0\\t7187158\\t1\\n"))
    True
    >>> _is_trec_line(Source("q.tsv", b"qid\\titer\\tdocid\\trel\\n1\\t0\\t7\\t1\\n"))
    False
    """
    head = src.head(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    first = re.split(rb"\r\n|\r|\n", head, maxsplit=1)[0]
    fields = first.decode("utf-8", "replace").split()
    if len(fields) not in (4, 6):
        return False
    names = {n.lower() for n in fields}
    if names & set(ALIASES["qid"] + ALIASES["docid"]):
        return False
    numbers = fields[3:4] if len(fields) == 4 else fields[3:5]
    try:
        for n in numbers:
            float(n)
    except ValueError:
        return False
    return True


def detect_format(src: Source, formats: Sequence[str] = RUN_FORMATS, *,
                  extensions: bool = True) -> str:
    """The format of ``src``, one of ``formats`` (see the module notes).

    ``extensions=False`` skips the file name: the text is recognised by its content.
    """
    for fmt, matches in SIGNATURES + TEXT_SIGNATURES:
        if fmt in formats and matches(src):
            return fmt
    if extensions:
        lower = src.name.lower().removesuffix(".gz")
        for ext, fmt in EXTENSIONS:
            if fmt in formats and lower.endswith(ext):
                if fmt in ("csv", "tsv") and "trec" in formats and _is_trec_line(src):
                    return "trec"  # MS MARCO's qrels.dev.small.tsv: TREC lines, no header
                return fmt
    if "trec" not in formats:  # a table with a header row: the separator that splits it more
        first = src.head(1 << 16).split(b"\n", 1)[0]
        return "tsv" if first.count(b"\t") > first.count(b",") else "csv"
    head = src.head(4096).removeprefix(b"\xef\xbb\xbf").lstrip()
    if head[:1] == b"{" and "json" in formats:
        return "json"
    first = re.split(rb"\r\n|\r|\n", head, maxsplit=1)[0]
    first_text = first.decode("utf-8", "replace").strip().lower()
    for sep, fmt in ((",", "csv"), ("\t", "tsv")):
        names = [c.strip() for c in first_text.split(sep)]
        if len(names) > 1 and any(n in ALIASES["qid"] for n in names) and any(
                n in ALIASES["docid"] for n in names):
            return fmt
    return "trec"


def is_workbook(src: Source) -> bool:
    """Whether ``src`` is an Excel workbook: a zip archive named ``.xlsx``/``.xlsm``, or
    one whose first entries are under ``xl/`` (an upload without its name).

    >>> is_workbook(Source("q.xlsx", ZIP_MAGIC + b"rest"))
    True
    >>> is_workbook(Source("qrels.zip", ZIP_MAGIC + b"qrels.txt"))
    False
    """
    return src.head(4) == ZIP_MAGIC and (src.name.lower().endswith((".xlsx", ".xlsm"))
                                          or b"xl/" in src.head(1 << 16))


def refuse_unreadable(src: Source) -> None:
    """A :class:`FormatError` for bytes no text reader can read: an Excel workbook given
    with a text ``format=`` (said so), an archive, another compression. (Text in another
    encoding is :mod:`~ireval_core.io.encoding`'s; a workbook with ``format="auto"`` or
    ``"xlsx"`` is read by :mod:`~ireval_core.io.excel` before this is asked.)"""
    head = src.head(16)
    if is_workbook(src):
        raise FormatError("this is an Excel workbook; read it with format 'auto' or 'xlsx' "
                          "(its first sheet with a header row naming the columns: qid, "
                          "docid, rel; or qid, docid, score, tag)", source=src.name)
    for magic, what in _OTHER_COMPRESSION:
        if head.startswith(magic):
            raise FormatError(f"this is {what}; only plain or gzip-compressed files are read "
                              "(extract it first)", source=src.name)
    if head[:3] == b"BZh" and head[4:10] == b"\x31\x41\x59\x26\x53\x59":
        raise FormatError("this is bzip2-compressed; only plain or gzip-compressed files are "
                          "read (decompress it first)", source=src.name)
