"""Labeling tables: CSV, TSV, Excel (.xlsx), Parquet and labeling tools' exports.

:func:`read_table` turns one input (a path, bytes, a binary file object, or a
``(name, bytes)`` pair; gzip is detected) into a :class:`~.table.RawTable`: the columns
found under their accepted names (aliases, case-insensitive), and where each row came
from, so that any later check can raise a :class:`~ireval_core.errors.FormatError`
naming the file and the line (CSV/TSV), the sheet and row (Excel) or the row (Parquet,
a DataFrame).

The format is recognised by :func:`~.detect.detect_format`: from the content
(Parquet's ``PAR1``, the ZIP header of an ``.xlsx`` workbook), then from the
extension, then by counting tabs and commas in the header line. CSV and TSV are parsed
by pyarrow's multi-threaded reader: text columns as text (ids keep their leading zeros,
``2026-05`` stays a month), the number columns a reader names as numbers (with a
fallback to text that finds the bad cell).

With ``tools=True`` (the labeling reader), the exports of two labeling tools are read
too, as a table with the labeling columns: Label Studio's JSON export (one row per
annotation, its rater the annotator; :mod:`~.labelstudio`) and Quepid's ratings CSV
(:mod:`~.quepid`).

The labeling reader (:func:`ireval_core.labels.read_judgments`) and the GSB reader
(:func:`ireval_core.labels.gsb.read_gsb`) use it with their own aliases.

Errors
------
Every malformed input is a :class:`~ireval_core.errors.FormatError` naming the file and,
where there is one, the line (CSV/TSV), the sheet and row (Excel) or the row and column
(Parquet): a file that is not Parquet or Excel after all, a column of a type that is not
text or numbers (a Parquet list, struct or map), binary cells that are not UTF-8, a
column name written twice, a cell holding a line break, a tab or another control
character (ids, labels and rounds are one line of text). Ids are read as the text
written, never inferred (``007`` stays ``007``; a Parquet integer id column reads as
its decimal text). Readers wrapped in :func:`~.guard.clean_errors` raise a
``FormatError`` without ``__context__`` or ``__cause__``, so that nothing of the input
stays reachable from a kept error.

>>> t = read_table(("l.csv", b"month,qid,docid,pos,grade\\n2026-05,q1,d1,1,high\\n"), LABEL_ALIASES)
>>> sorted(t.columns), t.n_rows, t.location(0)
(['doc', 'label', 'position', 'query', 'round'], 1, 'l.csv:2')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import pyarrow as pa

from ..errors import FormatError
from .columns import LABEL_ALIASES
from .delimited import read_delimited_table
from .detect import LABEL_FORMATS, TABLE_FORMATS, detect_format
from .encoding import decode_bom, encoding_warning, read_text
from .excel import read_xlsx
from .labelstudio import read_label_studio
from .parquet import read_parquet_columns
from .quepid import read_quepid
from .source import Source, SourceLike
from .table import RawTable, pick

__all__ = ["LABEL_ALIASES", "RawTable", "noted", "read_table", "table_from_arrow"]


def _source(source: SourceLike) -> Source:
    if isinstance(source, tuple):
        name, data = source
        return Source.of(bytes(data), name=str(name))
    return Source.of(source)


def read_table(source: SourceLike, aliases: Mapping[str, Sequence[str]], *,
               required: Sequence[str] = (), kind: str = "labeling",
               numeric: Sequence[str] = (), sheet: str | None = None,
               tools: bool = False, round: str | None = None) -> RawTable:
    """Read one CSV/TSV/XLSX/Parquet input and find its columns by alias.

    Parameters
    ----------
    source:
        A path, bytes, binary file object, or ``(name, bytes)``; gzip is detected.
    aliases:
        Canonical column name -> accepted header names (lower case), e.g.
        :data:`LABEL_ALIASES`. Other columns are ignored.
    required:
        Canonical names that must be found; a missing one is a
        :class:`FormatError` listing the accepted names.
    kind:
        What the file is, for messages (``"labeling"``, ``"GSB"``).
    numeric:
        Canonical names of number columns: CSV/TSV parse them as float64 directly
        (empty cells null) and fall back to text when a cell is not a number, so that
        :meth:`RawTable.numbers` can name its line.
    sheet:
        Excel: the one sheet to read, by name, even when hidden (with a
        ``hidden-sheet`` warning). By default every visible sheet whose header has the
        required columns is read; hidden sheets are not (a ``hidden-sheet`` warning
        names those that hold a table). Other formats hold one table and ignore it.
    tools:
        Also read the exports of labeling tools (:data:`~.detect.LABEL_FORMATS`): Label
        Studio's JSON (:mod:`~.labelstudio`) and Quepid's ratings CSV (:mod:`~.quepid`),
        as a table with the labeling columns (``aliases`` must be those of a labeling
        file, :data:`LABEL_ALIASES`).
    round:
        The round of the rows of a tool's export that names none (a Quepid export, Label
        Studio tasks without a round key).

    Raises
    ------
    FormatError
        Empty input, unreadable content (with the line), missing columns.
    """
    src = _source(source)
    if src.is_blank():
        raise FormatError(f"file is empty; expected a {kind} table with a header row "
                          f"({', '.join(required)})", source=src.name)
    formats = LABEL_FORMATS if tools else TABLE_FORMATS
    fmt = detect_format(src, formats)
    if fmt == "parquet":
        table = read_parquet_columns(src, aliases)
        raw = RawTable(src.name, "parquet", {}, table.num_rows,
                       tuple(table.column_names))
        return pick(raw, table, aliases, required, kind)
    if fmt == "xlsx":
        return read_xlsx(src, aliases, required, kind, sheet=sheet)
    text = decode_bom(src)
    if text is not src:  # UTF-16 (Excel's "Unicode text"): by content, whatever its name
        fmt = detect_format(text, formats, extensions=False)

    def read(decoded: Source) -> RawTable:
        if fmt == "labelstudio":
            raw = read_label_studio(decoded, aliases, required, kind, round=round)
        elif fmt == "quepid":
            raw = read_quepid(decoded, aliases, required, kind, round=round)
        else:
            raw = read_delimited_table(decoded, "\t" if fmt == "tsv" else ",", aliases,
                                       required, kind, numeric=numeric)
        return noted(raw, decoded)

    return read_text(text, read, header=True)


def noted(raw: RawTable, src: Source) -> RawTable:
    """``raw`` with the encoding ``src`` was read in, and its note when not UTF-8."""
    note = encoding_warning(src)
    if note is None:
        return raw
    return replace(raw, encoding=src.encoding, warnings=(note, *raw.warnings))


def table_from_arrow(table: pa.Table, name: str, aliases: Mapping[str, Sequence[str]], *,
                     required: Sequence[str] = (), kind: str = "labeling") -> RawTable:
    """A :class:`RawTable` over an in-memory Arrow table (rows located as ``row N``)."""
    raw = RawTable(name, "frame", {}, table.num_rows, tuple(table.column_names))
    return pick(raw, table, aliases, required, kind)
