"""Reading: qrels and runs, labeling tables and query metadata, in every input format.

Every reader takes a path or the raw bytes of an upload (with its file name), plain
or gzip-compressed. :func:`read_qrels`, :func:`read_runs` and :func:`read_run` return
immutable :class:`~ireval_core.data.Qrels` or :class:`~ireval_core.data.Run` objects;
:func:`read_table` a labeling or GSB table (:class:`RawTable`); :func:`read_metadata`
a :class:`~ireval_core.io.metadata.QueryMetadata`.

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
    no score column, with a warning). Other columns are ignored; a column used
    that appears twice in the header is an error.
Parquet
    The same column names as CSV.
JSON
    ``{qid: {docid: value}}`` as pytrec_eval and ranx use (grade for qrels,
    score for runs).
Excel ``.xlsx``
    Qrels and runs: the first visible sheet whose header row names a query and a
    document column, the same column names as CSV; ids typed as numbers read as Excel
    shows them, errors name the sheet and row (:func:`~.excel.read_xlsx_columns`; in
    memory only, not with Dask). Labeling and GSB tables: every visible sheet with
    their columns (:func:`read_table`).
Label Studio JSON, Quepid ratings CSV
    Labeling files only (:func:`read_table` with ``tools=True``, as
    :func:`~ireval_core.labels.read_judgments` reads them): the exports of two labeling
    tools, read as labeled results with their raters.

Lines end with LF, CRLF or a lone CR (old Mac files are read in full).

Encodings
---------
Every text format is read in UTF-8 (with or without a byte order mark), GB18030/GBK
(a CSV saved by Excel on Chinese Windows) or UTF-16 LE/BE with a byte order mark
(Excel's "Unicode text"), decided in that order (:mod:`~ireval_core.io.encoding`: a
byte order mark, strict UTF-8, then GB18030 only when the whole file decodes and
looks like Chinese text). What is not UTF-8 is transcoded once, and what is read says
so: a warning with the code ``encoding`` ("read as GB18030 ..."). A file none of them
decodes is an error naming the file, its first line that is not UTF-8, the encodings
tried and how to save "CSV UTF-8" from Excel.

Identifiers
-----------
Query and document ids and run tags are strings, exactly as written, in every
format: never type-inferred, trimmed or normalised (``007`` stays ``007``, ``1.10``
stays ``1.10``, two 20-digit ids stay two ids). CSV/TSV id columns are read as
text; JSON keys are text. A Parquet id column must hold strings, or integers,
which are read as their decimal text (``7``) with an ``integer-ids`` warning
(a file that wrote ``007`` as an integer has already lost the zeros); any other
type (float, boolean, list, ...) is an error naming the column.

Hard errors, with the line (Parquet: column and row): an empty id; an id or tag
holding a line break, a tab or another control character (it would forge lines
or columns in tab-separated output); in CSV/TSV/Parquet/JSON, an id starting or
ending with a space (it would never match the same id in a TREC file); a grade or
score that is not a finite number (``true``/``false`` are not grades).

A run line whose tag is empty or a missing-value marker (``NA``, ``N/A``,
``NaN``, ``nan``, ``null``, ``NULL``, ``None``; a null Parquet cell) belongs to a
system named after the file (its stem, as for files without a tag column), with a
``tag-missing`` warning saying how many lines.

Limits
------
Gzip input is inflated in a stream, never past a bound (:class:`ReadLimits`): at
most ``max_inflated_bytes`` (default :data:`DEFAULT_MAX_INFLATED_BYTES`, 2 GiB, env
``IREVAL_MAX_INFLATED_BYTES``) and at most ``max_gzip_ratio`` times the compressed
size (default :data:`DEFAULT_MAX_GZIP_RATIO`, 200, env ``IREVAL_MAX_GZIP_RATIO``;
the first MiB is always allowed). Text compresses 3 to 10 times; a gzip "bomb"
(gigabytes of zeros in a few MB) is stopped with a :class:`FormatError` naming the
file and the limit, after inflating no more than the limit. Parquet files are held
to the same bounds: the row count before any column is decoded, then the columns
batch by batch as they are decoded. So are Excel workbooks (zip archives): the sizes
their directory declares, before openpyxl opens them, then every member as it is
inflated (:func:`~ireval_core.io.source.open_zip`).

Errors
------
Anything wrong with the input is a :class:`~ireval_core.errors.FormatError`
(``file:line: what was expected: 'the line'``). Run and qrels files report up to 100
bad lines at once (wrong column count, bad number, bad id, a pair given twice): the
error describes the first and counts them all, its ``problems`` hold the first 100
(``report()`` lists them, ``problems_csv()`` is a download). No other exception escapes a
reader for a malformed input (a file that cannot be opened is an ``OSError``;
an invalid argument a ``ValueError`` or ``TypeError``). A ``FormatError`` from a
reader holds nothing of the input: no ``__context__`` or ``__cause__``, and no
frame in its traceback refers to the bytes or to Arrow objects, so an app can
cache it. Running out of memory while reading is reported the same way.

Parsing is columnar (pyarrow's multi-threaded CSV reader) with no Python loop over
lines. When the fast path rejects a file, a slow line-by-line pass finds the
bad lines so that the :class:`~ireval_core.errors.FormatError` can name them.
Memory handed to pyarrow's threads is always owned by pyarrow (never a Python
``bytes`` object), so no pyarrow thread needs the interpreter when it lets go of
it, even while the interpreter shuts down.

Layout
------
One module per concern, one per format; the readers meet in one format detector and
one column-alias table:

================ ==========================================================================
``source``       :class:`Source` (one input), :class:`ReadLimits`, bounded gunzip
``encoding``     text encodings: UTF-8, GB18030, UTF-16 (what is not UTF-8 is transcoded)
``detect``       the format detector, for every reader
``columns``      the column-alias table, for every reader
``checks``       id, tag and value checks (vectorised) and their messages
``guard``        a failed read becomes one fresh ``FormatError``
``trec``         TREC text
``delimited``    CSV / TSV
``parquet``      Parquet
``json``         JSON
``excel``        Excel ``.xlsx`` (openpyxl)
``labelstudio``  Label Studio's JSON export (one row per annotation)
``quepid``       Quepid's ratings CSV (basic and judgement-book exports)
``table``        :class:`RawTable`, a table found by aliases that locates its rows
``qrels_runs``   :func:`read_qrels`, :func:`read_runs`, :func:`read_run`,
                 :func:`read_qrels_alongside` (qrels on a second thread),
                 :func:`shared_tag_names` (a tag of several files: named after each file)
``labels``       :func:`read_table` (labeling and GSB tables)
``metadata``     :func:`read_metadata` (query metadata)
``partitions``   checks of a partition's columns and ids, for the Dask readers
``dask``         :func:`~.dask.read_qrels_dask`, :func:`~.dask.read_runs_dask` (Dask
                 DataFrames; each format read as :data:`~.detect.DASK_READING` says), and
                 the error of a failed read in the in-memory engine's order
``dask_rows``    labeled rows as Dask DataFrames, and their errors in row order
================ ==========================================================================

Importing this package loads the qrels and run readers only; the table and metadata
readers are loaded when one of their names is first used.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .columns import Kind
from .detect import Format
from .qrels_runs import read_qrels, read_qrels_alongside, read_run, read_runs, shared_tag_names
from .source import (
    DEFAULT_MAX_GZIP_RATIO,
    DEFAULT_MAX_INFLATED_BYTES,
    PathOrBytes,
    ReadLimits,
    Source,
    SourceLike,
)
from .trec import has_comment_lines, has_judgment_groups

if TYPE_CHECKING:
    from .labels import read_table, table_from_arrow
    from .metadata import QueryMetadata, read_metadata
    from .table import RawTable

__all__ = ["DEFAULT_MAX_GZIP_RATIO", "DEFAULT_MAX_INFLATED_BYTES", "Format", "Kind",
           "PathOrBytes", "QueryMetadata", "RawTable", "ReadLimits", "Source", "SourceLike",
           "has_comment_lines", "has_judgment_groups", "read_metadata", "read_qrels",
           "read_qrels_alongside", "read_run", "read_runs", "read_table", "shared_tag_names",
           "table_from_arrow"]

_LAZY = {"QueryMetadata": "metadata", "read_metadata": "metadata", "RawTable": "table",
         "read_table": "labels", "table_from_arrow": "labels"}
"""Names imported on first use: the table readers need openpyxl's helpers (zip, XML) and
the metadata reader pandas, which reading qrels and runs (the CLI's ``eval``) does not."""


def __getattr__(name: str) -> Any:
    """The names of :data:`_LAZY`, from their module, on first use."""
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
