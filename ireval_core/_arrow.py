"""Arrow <-> numpy conversions that do not import pandas.

pyarrow imports pandas (about 0.2-0.3 s, more than the rest of a small evaluation) the
first time a value crosses between Python or numpy and Arrow: ``Array.to_numpy``,
``np.asarray(array)``, ``pa.array(...)``, ``pa.scalar(...)``, and a Python scalar
passed to a compute function. Reading memory through the arrays' buffers does not, so
the everyday path (read two files, evaluate, print) uses these helpers instead.

Only what the readers and kernels need is covered: fixed-width numbers and booleans
without nulls, and string arrays. Anything else falls back to pyarrow's own conversion.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["to_numpy", "to_numpy_filled", "valid_mask", "from_numpy", "bool_array",
           "string_array", "string_layout", "byte_groups", "byte_order", "byte_order_keys",
           "matrix_groups", "matrix_order", "padded_matrix", "strings_of_rows",
           "byte_order_keys_and_prefix", "byte_order_words", "padded_bytes",
           "strings_from_keys", "release_unused", "byte_window", "PiecedRows",
           "pieced_groups", "pieces_of_one_length"]

_NUMPY_OF = {
    pa.int8(): np.int8, pa.int16(): np.int16, pa.int32(): np.int32, pa.int64(): np.int64,
    pa.uint8(): np.uint8, pa.uint16(): np.uint16, pa.uint32(): np.uint32,
    pa.uint64(): np.uint64, pa.float32(): np.float32, pa.float64(): np.float64,
}
_ARROW_OF = {np.dtype(v): k for k, v in _NUMPY_OF.items()}


def _chunk_numpy(arr: pa.Array) -> np.ndarray | None:
    """The values of one chunk as numpy, read through its buffers; None when not covered."""
    if arr.null_count:
        return None
    n, off = len(arr), arr.offset
    if arr.type == pa.bool_():
        buf = arr.buffers()[1]
        if buf is None:
            return np.zeros(n, dtype=bool)
        bits = np.unpackbits(np.frombuffer(buf, dtype=np.uint8), bitorder="little")
        return bits[off: off + n].astype(bool)
    dtype = _NUMPY_OF.get(arr.type)
    if dtype is None:
        return None
    buf = arr.buffers()[1]
    if buf is None or n == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=n, offset=off * np.dtype(dtype).itemsize)


def to_numpy(arr: pa.Array | pa.ChunkedArray, dtype: Any = None) -> np.ndarray:
    """``arr`` as a numpy array (a copy only where chunks are joined or ``dtype`` asks).

    Numbers and booleans without nulls are read through the buffers (no pandas import);
    other arrays use pyarrow's conversion. The result may be read-only.
    """
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    maybe = [_chunk_numpy(c) for c in chunks]
    parts = [p for p in maybe if p is not None]
    if len(parts) < len(maybe):
        out = arr.to_numpy(zero_copy_only=False)
    elif len(parts) == 1:
        out = parts[0]
    elif parts:
        out = np.concatenate(parts)
    else:
        out = np.zeros(0, dtype=_NUMPY_OF.get(arr.type, np.float64))
    return out if dtype is None else out.astype(dtype, copy=False)


def valid_mask(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """True where ``arr`` holds a value, False where it is null (read from the bitmaps)."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = []
    for c in chunks:
        bitmap = c.buffers()[0]
        if not c.null_count or bitmap is None:
            parts.append(np.full(len(c), c.null_count == 0, dtype=bool))
            continue
        bits = np.unpackbits(np.frombuffer(bitmap, dtype=np.uint8), bitorder="little")
        parts.append(bits[c.offset: c.offset + len(c)].astype(bool))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=bool)


def to_numpy_filled(arr: pa.Array | pa.ChunkedArray, fill: float | int,
                    dtype: Any = None) -> np.ndarray:
    """Like :func:`to_numpy`, with ``fill`` where ``arr`` is null (fixed-width numbers)."""
    chunks = arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]
    parts = []
    for c in chunks:
        dt = _NUMPY_OF.get(c.type)
        if dt is None:  # not a fixed-width number: pyarrow's own conversion
            return np.where(valid_mask(arr), arr.to_numpy(zero_copy_only=False), fill
                            ).astype(dtype if dtype is not None else np.float64)
        buf = c.buffers()[1]
        values = (np.frombuffer(buf, dtype=dt, count=len(c),
                                offset=c.offset * np.dtype(dt).itemsize)
                  if buf is not None and len(c) else np.zeros(len(c), dtype=dt))
        if c.null_count:
            values = np.where(valid_mask(c), values, fill)
        parts.append(values)
    out = (parts[0] if len(parts) == 1 else np.concatenate(parts) if parts
           else np.zeros(0, dtype=np.float64))
    return out if dtype is None else out.astype(dtype, copy=False)


def from_numpy(values: np.ndarray) -> pa.Array:
    """A numeric or boolean numpy array as an Arrow array without nulls (no pandas import).

    The Arrow array shares memory with a contiguous copy of ``values``.
    """
    values = np.ascontiguousarray(values)
    if values.dtype == np.bool_:
        return bool_array(values)
    atype = _ARROW_OF.get(values.dtype)
    if atype is None:
        raise TypeError(f"no Arrow type for numpy dtype {values.dtype}")
    return pa.Array.from_buffers(atype, len(values), [None, pa.py_buffer(values)])


def bool_array(mask: np.ndarray) -> pa.Array:
    """A boolean numpy array as an Arrow boolean array (bit-packed)."""
    mask = np.asarray(mask, dtype=bool)
    bits = np.packbits(mask, bitorder="little")
    return pa.Array.from_buffers(pa.bool_(), len(mask), [None, pa.py_buffer(bits)])


def string_array(values: Sequence[str] | np.ndarray) -> pa.Array:
    """Python strings as an Arrow ``string`` array (offsets and UTF-8 bytes built here)."""
    encoded = [str(v).encode("utf-8") for v in values]
    lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
    offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(pa.string(), len(encoded), [
            None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(encoded))])
    return pa.Array.from_buffers(pa.large_string(), len(encoded), [
        None, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]).cast(pa.string())


def string_layout(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (int64, one per value plus one) and the bytes of a string array."""
    if pa.types.is_string_view(arr.type) or pa.types.is_binary_view(arr.type):
        arr = arr.cast(pa.large_string())
    large = pa.types.is_large_string(arr.type) or pa.types.is_large_binary(arr.type)
    buffers = arr.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int64 if large else np.int32)
    offsets = offsets[arr.offset: arr.offset + len(arr) + 1].astype(np.int64)
    data = (np.frombuffer(buffers[2], dtype=np.uint8) if buffers[2] is not None
            else np.zeros(0, dtype=np.uint8))
    return offsets, data


def byte_order_keys(arr: pa.Array | pa.ChunkedArray, *,
                    max_prefix: int = 64) -> np.ndarray | None:
    """uint64 keys that order the values of a string array byte-wise (see
    :func:`byte_order_keys_and_prefix`, which also gives the shared prefix)."""
    found = byte_order_keys_and_prefix(arr, max_prefix=max_prefix)
    return None if found is None else found[0]


def byte_order_keys_and_prefix(arr: pa.Array | pa.ChunkedArray, *, max_prefix: int = 64
                               ) -> tuple[np.ndarray, bytes] | None:
    """uint64 keys that order the values of a string array byte-wise, as ``strcmp`` does.

    Exact when they are returned: the prefix every value shares (up to ``max_prefix``
    bytes) is left out and the rest, at most 8 bytes, read as a big-endian number
    padded with zero bytes on the right, so a value that is a prefix of another comes
    first. ``None`` when the rest is longer than 8 bytes, a value holds a zero byte
    (padding could not be told from it) or a value is null; callers then sort the
    strings themselves. Sorting these integers is several times faster than sorting
    the strings (document ids such as ``clueweb-01234567`` or MS MARCO's numbers fit).
    A chunked array is read chunk by chunk (its strings are not copied into one).
    """
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint64), b""
    if arr.null_count:
        return None
    chunks = [c for c in (arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]) if len(c)]
    parts = []
    for chunk in chunks:
        offsets, data = string_layout(chunk)
        seg = data[offsets[0]: offsets[-1]]
        if seg.size and not seg.all():  # a zero byte inside a value
            return None
        parts.append((chunk, offsets, seg, np.diff(offsets)))
    _, first_off, first_seg, first_len = parts[0]
    prefix_bytes = first_seg[: min(max_prefix, int(first_len[0]))]
    longest = 0
    for _, offsets, seg, lengths in parts:
        longest = max(longest, int(lengths.max()))
        prefix_bytes = prefix_bytes[: _shared_prefix(offsets, seg, lengths, prefix_bytes)]
    prefix = len(prefix_bytes)
    width = longest - prefix
    if width > 8:
        return None
    if len(parts) == 1:
        return _chunk_keys(*parts[0], prefix, width), prefix_bytes.tobytes()
    keys = np.empty(n, dtype=np.uint64)  # filled chunk by chunk: no second copy (peak memory)
    at = 0
    for part in parts:
        keys[at: at + len(part[3])] = _chunk_keys(*part, prefix, width)
        at += len(part[3])
    return keys, prefix_bytes.tobytes()


def byte_order(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The permutation (int64) that sorts the values of a string array byte-wise, as
    ``strcmp`` does; equal values keep their order.

    For any id form: ids that fit in 8 bytes after a shared prefix are sorted as one
    integer key (:func:`byte_order_keys`); longer ones (UUIDs, ``FBIS3-10082``,
    ``clueweb12-0000tw-00-00000``, a mix) as a few integer words
    (:func:`byte_order_words`), the later words only where the earlier ones tie. Only
    values with a zero byte, or nulls, fall back to sorting the strings in Arrow.
    Meant for distinct values (a dictionary), not for every line of a file.
    """
    keys = byte_order_keys(arr)
    if keys is not None:
        return np.argsort(keys, kind="stable")
    matrix = _byte_matrix(arr)
    if matrix is not None and len(matrix):
        found = _window_order(matrix)
        if found is not None:
            return found
    words = _packed_words(matrix) if matrix is not None else None
    if words is None:
        import pyarrow.compute as pc  # the rare case: ids with a zero byte

        return to_numpy(pc.sort_indices(arr), np.int64)
    return _lexicographic_order(words)


def byte_order_words(arr: pa.Array | pa.ChunkedArray) -> list[np.ndarray] | None:
    """uint64 words whose lexicographic order is the byte order of the values.

    The values are laid out as a matrix of bytes, one column per byte position (zero
    past a value's end). A column every value agrees on cannot decide an order and is
    left out; every other column is replaced by the rank of its byte among the bytes
    that column holds (a column of digits needs 4 bits, not 8), and the ranks are packed
    in column order into as few 64-bit words as they fit. Comparing the words in order
    then compares the values byte by byte, and a value that is a prefix of another
    comes first (its zero padding ranks lowest). A UUID takes 2 words, MS MARCO numbers
    and ``clueweb12-0000tw-00-00000`` 1. ``None`` when a value holds a zero byte or is
    null (padding could not be told from it).
    """
    matrix = _byte_matrix(arr)
    return None if matrix is None else _packed_words(matrix)


def _packed_words(matrix: np.ndarray, pair_rows: int | None = None) -> list[np.ndarray]:
    """:func:`byte_order_words` of the rows of a padded byte matrix.

    Each column that can decide an order gets a lookup table from its bytes to their
    rank, already shifted to the column's place in its word; the words are then filled
    block of rows by block of rows (:data:`_PACK_ROWS`), so the block's bytes and words
    stay in the CPU's cache while every column is added in; from ``pair_rows`` rows on
    (:data:`_PAIR_ROWS` by default) two columns at a time (:func:`_packed_by_pairs`).
    """
    n, width = matrix.shape
    if n == 0:
        return []
    seen = np.zeros(256 * width, dtype=np.int64)  # per column, how often each byte
    base = np.arange(0, 256 * width, 256, dtype=np.int32)
    for lo in range(0, n, _PACK_ROWS):
        seen += np.bincount((matrix[lo: lo + _PACK_ROWS] + base).ravel(),
                            minlength=256 * width)
    tables: list[list[tuple[int, np.ndarray]]] = []  # per word: (column, shifted ranks)
    used = 64
    for j in range(width):
        present = seen[256 * j: 256 * (j + 1)] > 0
        count = int(present.sum())
        if count < 2:  # every value has this byte here: it never decides
            continue
        bits = (count - 1).bit_length()
        if used + bits > 64:
            tables.append([])
            used = 0
        for _, earlier in tables[-1]:  # the columns before this one move up by ``bits``
            earlier <<= np.uint64(bits)
        tables[-1].append((j, (np.cumsum(present) - 1).astype(np.uint64)))
        used += bits
    if not tables:
        return [np.zeros(n, dtype=np.uint64)]
    if matrix.flags.c_contiguous and width > 1 and n >= (
            _PAIR_ROWS if pair_rows is None else pair_rows):
        return _packed_by_pairs(matrix, tables)
    words = [np.empty(n, dtype=np.uint64) for _ in tables]
    for lo in range(0, n, _PACK_ROWS):
        block = matrix[lo: lo + _PACK_ROWS]
        for word, columns in zip(words, tables, strict=True):
            out = word[lo: lo + len(block)]
            (j, table), *rest = columns
            np.take(table, block[:, j], out=out)
            for j, table in rest:
                out |= table[block[:, j]]
    return words


def _packed_by_pairs(matrix: np.ndarray, tables: list[list[tuple[int, np.ndarray]]]
                     ) -> list[np.ndarray]:
    """:func:`_packed_words`' words filled two columns at a time: each pair of adjacent
    columns is read as one 16-bit number (a strided view of the C-contiguous matrix) and
    looked up in a table of 65,536 entries holding both columns' shifted ranks, half the
    lookups of one column at a time (a 7M-line run of 25-byte ids: 13 lookups a row,
    not 25)."""
    n, width = matrix.shape
    where = {j: (w, table) for w, columns in enumerate(tables) for j, table in columns}
    lookups: list[tuple[np.ndarray, int, np.ndarray]] = []  # (values, word, table)
    for j in range(0, width, 2):
        if j + 1 < width:
            view = np.ndarray((n,), dtype="<u2", buffer=matrix, offset=j, strides=(width,))
            per_word: dict[int, list[tuple[int, np.ndarray]]] = {}
            for k, shift in ((j, 0), (j + 1, 8)):  # little-endian: column j is the low byte
                if k in where:
                    per_word.setdefault(where[k][0], []).append((shift, where[k][1]))
            for w, parts in per_word.items():
                low = np.zeros(256, dtype=np.uint64)
                high = np.zeros(256, dtype=np.uint64)
                for shift, table in parts:
                    low, high = (table, high) if shift == 0 else (low, table)
                lookups.append((view, w, (high[:, None] | low[None, :]).ravel()))
        elif j in where:
            view = np.ndarray((n,), dtype=np.uint8, buffer=matrix, offset=j, strides=(width,))
            lookups.append((view, where[j][0], where[j][1]))
    words = [np.zeros(n, dtype=np.uint64) for _ in tables]
    for lo in range(0, n, _PACK_ROWS):
        for values, w, table in lookups:
            out = words[w][lo: lo + _PACK_ROWS]
            out |= table[values[lo: lo + _PACK_ROWS]]
    return words


_PACK_ROWS = 1 << 15
"""Rows per block in :func:`_packed_words` (a block's words: 256 KiB)."""

_PAIR_ROWS = 1 << 20
"""From this many rows on, :func:`_packed_words` looks two columns up at a time (its
tables, 512 KiB a pair of columns, then weigh little beside the matrix)."""


def _window_order(matrix: np.ndarray, most_tied: float = 0.5) -> np.ndarray | None:
    """Byte order of the rows of a padded byte matrix read 8 bytes at a time, or None.

    The first 8 bytes after the prefix every row shares, read as one big-endian integer,
    are sorted; the next 8 bytes are read only for the rows that still tie, and so on.
    Cheap when the first window tells many rows apart (random ids such as UUIDs, a mix
    of forms where a third share ``clueweb1``); when more than ``most_tied`` of the rows
    tie there (judged on a sample), None: :func:`byte_order_words` packs such ids
    (``clueweb12-…`` after ``FBIS3-…``) tighter.
    """
    n, width = matrix.shape
    start = 0
    while start < width and n > 1 and bool((matrix[:, start] == matrix[0, start]).all()):
        start += 1  # the prefix every row shares
    found = _window_groups(matrix, most_tied)
    return None if found is None else _stable_ties(*found)


class PiecedRows:
    """The rows of a byte matrix kept as the pieces it would be joined from (C-contiguous,
    one width): a chunked column of ids of one length (UUIDs) read in place, each chunk's
    bytes a piece, instead of copied into one matrix. Gives what the window sort reads
    (:func:`pieced_groups`) and the distinct rows (:meth:`scattered`)."""

    def __init__(self, pieces: list[np.ndarray]) -> None:
        self.pieces = pieces
        self.bounds = np.cumsum([0] + [len(p) for p in pieces])
        self.shape = (int(self.bounds[-1]), int(pieces[0].shape[1]))

    def __len__(self) -> int:
        return self.shape[0]

    def window(self, at: int) -> np.ndarray:
        """:func:`byte_window` of every row."""
        out = np.empty(self.shape[0], dtype=np.uint64)
        for lo, piece in zip(self.bounds[:-1], self.pieces, strict=True):
            out[lo: lo + len(piece)] = byte_window(piece, at)
        return out

    def rows_at(self, rows: np.ndarray) -> np.ndarray:
        """The increasing ``rows``, as one C-contiguous matrix (each piece's rows are one
        slice of ``rows``: no lookup row by row)."""
        out = np.empty((len(rows), self.shape[1]), dtype=np.uint8)
        cuts = np.searchsorted(rows, self.bounds)
        for i, piece in enumerate(self.pieces):
            out[cuts[i]: cuts[i + 1]] = piece[rows[cuts[i]: cuts[i + 1]] - self.bounds[i]]
        return out

    def scattered(self, codes: np.ndarray, n_codes: int) -> np.ndarray:
        """The matrix whose row ``c`` is the row of every row coded ``c`` (rows of one code
        are equal), piece by piece: ``n_codes`` rows, C-contiguous."""
        out = np.empty((n_codes, self.shape[1]), dtype=np.uint8)
        for lo, piece in zip(self.bounds[:-1], self.pieces, strict=True):
            out[codes[lo: lo + len(piece)]] = piece
        return out

    def column_is(self, j: int, value: int) -> bool:
        """Whether every row holds ``value`` at byte ``j``."""
        return all(bool((p[:, j] == value).all()) for p in self.pieces)


def _tied_rows(rows: PiecedRows, order: np.ndarray, first: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
    """The rows (kept in pieces) whose first window (``first``, sorted by ``order``)
    repeats, the only ones :func:`_window_groups` reads again, gathered once into a small
    matrix, and each row's place in it (read only at those rows): so no later window
    looks a row's piece up."""
    head = first[order]
    pos = np.flatnonzero(head[1:] == head[:-1])
    del head
    is_tied = np.zeros(len(order), dtype=bool)
    is_tied[order[pos]] = True
    is_tied[order[pos + 1]] = True
    del pos
    tied = np.flatnonzero(is_tied)
    del is_tied
    slot = np.empty(len(order), dtype=np.int32)
    slot[tied] = np.arange(len(tied), dtype=np.int32)
    return rows.rows_at(tied), slot


def pieced_groups(rows: PiecedRows) -> tuple[np.ndarray, np.ndarray]:
    """:func:`matrix_groups` of rows kept in pieces (the pieces joined only when the
    8-byte windows do not tell most rows apart)."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    found = _window_groups(rows)
    return found if found is not None else matrix_groups(np.concatenate(rows.pieces))


def _window_groups(matrix: np.ndarray | PiecedRows, most_tied: float = 0.5
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """:func:`_window_order` before equal rows are put in row order: the rows in byte
    order (equal ones in any order) and where each group of equal rows starts."""
    n, width = matrix.shape
    start = 0
    while start < width and n > 1 and _column_shared(matrix, start):
        start += 1  # the prefix every row shares
    if start == width:  # every row the same
        return np.arange(n, dtype=np.int64), np.arange(n) == 0
    first = (matrix.window(start) if isinstance(matrix, PiecedRows)
             else byte_window(matrix, start))
    picks = first[np.random.default_rng(0).choice(n, size=min(n, 4096), replace=False)]
    if len(np.unique(picks)) < (1 - most_tied) * len(picks):
        return None  # many rows tie already in a sample: not worth a sort
    order = np.argsort(first)  # equal rows: put back in row order at the end
    head = first[order]
    tied = np.count_nonzero(head[1:] == head[:-1])
    del head
    if tied > most_tied * n:
        return None
    if not tied:
        return order, np.ones(n, dtype=bool)
    n_windows = -(-(width - start) // 8)
    if isinstance(matrix, PiecedRows):
        sub, slot = _tied_rows(matrix, order, first)
        return _grouped_within(first, order, n_windows,
                               lambda k, rows: byte_window(sub, start + 8 * k, slot[rows]))
    whole = matrix
    return _grouped_within(first, order, n_windows,
                           lambda k, rows: byte_window(whole, start + 8 * k, rows))


def _column_shared(matrix: np.ndarray | PiecedRows, j: int) -> bool:
    """Whether every row holds the first row's byte at column ``j``."""
    if isinstance(matrix, PiecedRows):
        return matrix.column_is(j, int(matrix.pieces[0][0, j]))
    return bool((matrix[:, j] == matrix[0, j]).all())


def padded_matrix(arr: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """The values of a string array as rows of a uint8 matrix zero-padded to the longest
    (as :func:`padded_bytes`), filled chunk by chunk: a chunked array is never copied
    into one. One chunk of values of one length gives a view of its bytes. ``None`` when
    a value is null or holds a zero byte."""
    if arr.null_count:
        return None
    chunks = [c for c in (arr.chunks if isinstance(arr, pa.ChunkedArray) else [arr]) if len(c)]
    if len(chunks) <= 1:
        return _byte_matrix(chunks[0] if chunks else arr)
    import pyarrow.compute as pc

    width = max(int(pc.max(pc.binary_length(c)).as_py()) for c in chunks)
    matrix = np.empty((len(arr), width), dtype=np.uint8)
    at = 0
    for chunk in chunks:
        part = _byte_matrix(chunk, width)
        if part is None:
            return None
        matrix[at: at + len(part)] = part
        at += len(part)
    return matrix


def pieces_of_one_length(arr: pa.Array | pa.ChunkedArray) -> PiecedRows | None:
    """The values of a chunked string array of two or more chunks, all of one length, as
    :class:`PiecedRows` on the chunks' own bytes (no copy); ``None`` otherwise (one chunk,
    lengths that differ, a null, a zero byte)."""
    if not isinstance(arr, pa.ChunkedArray) or arr.null_count:
        return None
    chunks = [c for c in arr.chunks if len(c)]
    if len(chunks) < 2:
        return None
    pieces = []
    width = -1
    for chunk in chunks:
        offsets, data = string_layout(chunk)
        lengths = np.diff(offsets)
        if width < 0:
            width = int(lengths[0])
        if width == 0 or int(lengths.min()) != width or int(lengths.max()) != width:
            return None
        seg = data[offsets[0]: offsets[-1]]
        if not seg.all():  # a zero byte inside a value
            return None
        pieces.append(seg.reshape(len(chunk), width))
    return PiecedRows(pieces)


def strings_of_rows(matrix: np.ndarray, rows: np.ndarray | None = None) -> pa.Array:
    """The strings of ``rows`` of a padded byte matrix (:func:`padded_matrix`; None:
    every row), exactly: each row without its zero padding (the values hold no zero
    byte). Rows that all fill the width (ids of one length, such as UUIDs) are the
    strings' bytes as they are: the array is built on them, no copy."""
    import pyarrow.compute as pc

    width = matrix.shape[1]
    picked = np.ascontiguousarray(matrix if rows is None else matrix[rows])
    n = len(picked)
    if n and width and n * width < 2**31 and bool(picked[:, -1].all()):
        offsets = np.arange(0, (n + 1) * width, width, dtype=np.int32)
        return pa.Array.from_buffers(pa.string(), n, [None, pa.py_buffer(offsets),
                                                      pa.py_buffer(picked)])
    fixed = pa.Array.from_buffers(pa.binary(max(width, 1)), n,
                                  [None, pa.py_buffer(picked if width else
                                                      np.zeros(n, dtype=np.uint8))])
    del picked
    # the padded values are whole UTF-8 strings followed by NULs: trimming them is exact
    return pc.utf8_rtrim(fixed.cast(pa.large_binary() if n * width >= 2**31 else pa.binary())
                         .view(pa.large_string() if n * width >= 2**31 else pa.string()),
                         characters="\x00").cast(pa.string())


def byte_groups(arr: pa.Array | np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows of a string array grouped by value, the groups in byte order (as
    ``strcmp``): ``(order, starts)``, ``order`` the rows (int64; equal values in any
    order) and ``starts`` where each group of equal values begins in it. ``None`` when a
    value is null or holds a zero byte. ``arr`` may be its :func:`padded_matrix`.

    For every line of a file, not only distinct values: the rows are read 8 bytes at a
    time (:func:`_window_order`) or packed into integer words (:func:`byte_order_words`),
    and equal words are equal values, so the groups come out of the same sorts.
    """
    matrix = arr if isinstance(arr, np.ndarray) else padded_matrix(arr)
    return None if matrix is None else matrix_groups(matrix)


def matrix_groups(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`byte_groups` of the rows of a padded byte matrix (:func:`padded_matrix`)."""
    if not len(matrix):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=bool)
    found = _window_groups(matrix)
    if found is not None:
        return found
    words = _packed_words(matrix)
    del matrix
    return _grouped_within(words[0], np.argsort(words[0]), len(words),
                           lambda k, rows: words[k][rows])


def matrix_order(matrix: np.ndarray) -> np.ndarray:
    """:func:`byte_order` of the rows of a padded byte matrix (:func:`padded_matrix`)."""
    if not len(matrix):
        return np.zeros(0, dtype=np.int64)
    found = _window_order(matrix)
    return found if found is not None else _lexicographic_order(_packed_words(matrix))


def byte_window(matrix: np.ndarray, at: int, rows: np.ndarray | None = None) -> np.ndarray:
    """Bytes ``at .. at + 8`` of every row (or of ``rows``) as big-endian uint64 (zero
    past the end)."""
    n, width = matrix.shape
    if at + 8 <= width and matrix.flags.c_contiguous:  # a strided view, read at ``rows``
        view = np.ndarray((n,), dtype=">u8", buffer=matrix, offset=at, strides=(width,))
        return (view if rows is None else view[rows]).astype(np.uint64)
    picked = matrix[:, at: at + 8] if rows is None else matrix[rows, at: at + 8]
    block = np.zeros((len(picked), 8), dtype=np.uint8)
    block[:, : picked.shape[1]] = picked
    return block.view(">u8").reshape(len(picked)).astype(np.uint64)


def _byte_matrix(arr: pa.Array | pa.ChunkedArray, width: int = 0) -> np.ndarray | None:
    """The values as rows of a uint8 matrix, zero-padded on the right to the longest value
    (or ``width``); ``None`` when a value is null or holds a zero byte."""
    if arr.null_count:
        return None
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    n = len(arr)
    if n == 0:
        return np.zeros((0, width), dtype=np.uint8)
    offsets, data = string_layout(arr)
    seg = data[offsets[0]: offsets[-1]]
    if seg.size and not seg.all():
        return None
    lengths = np.diff(offsets)
    longest = int(lengths.max())
    width = max(width, longest)
    if int(lengths.min()) == width:
        return seg.reshape(n, width)
    import pyarrow.compute as pc  # padding in Arrow (characters): faster than numpy's mask

    padded = pc.utf8_rpad(arr.cast(pa.string()) if pa.types.is_large_string(arr.type)
                          else arr, width=width, padding="\x00")
    p_offsets, p_data = string_layout(padded)
    if int(p_offsets[-1] - p_offsets[0]) == n * width:  # ASCII: characters are bytes
        return p_data[p_offsets[0]: p_offsets[-1]].reshape(n, width)
    matrix = np.zeros((n, width), dtype=np.uint8)  # characters of several bytes
    matrix[np.arange(width) < lengths[:, None]] = seg
    return matrix


def padded_bytes(arr: pa.Array | pa.ChunkedArray, width: int = 0) -> np.ndarray | None:
    """The values as a numpy fixed-width bytes array (``S<width>``, zero-padded).

    numpy compares such items byte by byte with the padding as zero bytes, so for values
    without a zero byte its order and equality are ``strcmp``'s: sorted id arrays can be
    merged with ``np.searchsorted`` (no hashing). ``width`` at least the longest value
    (0: the longest). ``None`` when a value is null or holds a zero byte.
    """
    matrix = _byte_matrix(arr, width)
    if matrix is None:
        return None
    n, w = matrix.shape
    return np.ascontiguousarray(matrix).view(f"S{max(w, 1)}").reshape(n) if w else (
        np.zeros(n, dtype="S1"))


def _lexicographic_order(words: list[np.ndarray], order: np.ndarray | None = None
                         ) -> np.ndarray:
    """Stable order of rows by ``words[0]``, then ``words[1]``, ...: a sort of the first
    word (or ``order``, its sort, when given), then of each next word only among the rows
    that still tie."""
    if order is None:
        order = np.argsort(words[0])
    return _ordered_within(words[0], order, len(words), lambda k, rows: words[k][rows])


def _ordered_within(first: np.ndarray, order: np.ndarray, n_words: int,
                    word: Callable[[int, np.ndarray], np.ndarray]) -> np.ndarray:
    """``order`` (rows sorted by ``first``, equal ones in any order) made the stable
    lexicographic order of the rows' words; ``word(k, rows)`` gives word ``k`` of ``rows``.

    Each next word is read and sorted only for the rows that still tie (within their
    group of equal earlier words); rows equal in every word end in row order.
    """
    return _stable_ties(*_grouped_within(first, order, n_words, word))


def _grouped_within(first: np.ndarray, order: np.ndarray, n_words: int,
                    word: Callable[[int, np.ndarray], np.ndarray]
                    ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_ordered_within` before rows equal in every word are put in row order:
    ``order`` and where each group of rows equal in every word starts in it."""
    head = first[order]
    starts = np.empty(len(order), dtype=bool)  # where a group of equal words begins
    starts[:1] = True
    np.not_equal(head[1:], head[:-1], out=starts[1:])
    del head
    for k in range(1, n_words):
        pos = _tied_positions(starts)
        if not len(pos):
            break
        rows = order[pos]
        group = np.cumsum(starts[pos], dtype=np.int64)  # each group's first row is in pos
        values = word(k, rows)
        differ = values[1:] != values[:-1]  # from the row before, in the same group
        differ &= ~starts[pos[1:]]
        if not differ.any():  # every group still tied (repeated values): nothing to sort
            continue
        unsorted = np.zeros(int(group[-1]) + 1, dtype=bool)
        unsorted[group[1:][differ]] = True
        del differ
        if not unsorted[group].all():  # sort only the groups whose values differ here
            keep = np.flatnonzero(unsorted[group])
            pos = pos[keep]  # one at a time: each copy replaces its whole array
            rows = rows[keep]
            group = group[keep]
            values = values[keep]
            del keep
        within = _group_sort(group, values)
        order[pos] = rows[within]
        values = values[within]
        starts[pos[1:]] |= values[1:] != values[:-1]  # new boundaries inside the groups
    return order, starts


def _stable_ties(order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``order`` with each group of equal rows (from ``starts``) in row order."""
    pos = _tied_positions(starts)
    if len(pos):
        rows = order[pos]
        order[pos] = rows[np.lexsort((rows, np.cumsum(starts[pos], dtype=np.int64)))]
    return order


def _tied_positions(starts: np.ndarray) -> np.ndarray:
    """Positions in a group of two or more rows, given where the groups start."""
    member = ~starts
    member[:-1] |= member[1:]  # the first row of a group ties with the next one
    return np.flatnonzero(member)


def _group_sort(group: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A permutation sorting by (``group``, ``values``), equal pairs in any order: one
    sort of a combined key when both fit in 64 bits, else the values ranked first."""
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    group_bits = int(group[-1]).bit_length()  # groups are numbered from 1 in order
    value_bits = int(values.max()).bit_length()
    if group_bits + value_bits > 64:  # replace the values by their rank (< len)
        by_value = np.argsort(values)
        values = np.empty(len(by_value), dtype=np.uint64)
        values[by_value] = np.arange(len(by_value), dtype=np.uint64)
        value_bits = len(by_value).bit_length()
    key = group.astype(np.uint64)
    key <<= np.uint64(value_bits)
    key |= values
    return np.argsort(key)


def strings_from_keys(keys: np.ndarray, prefix: bytes) -> pa.Array:
    """The strings :func:`byte_order_keys_and_prefix` made ``keys`` from, exactly.

    Each is ``prefix`` followed by its key's bytes, most significant first, without the
    zero bytes padding it on the right (the strings hold no zero byte, so the padding is
    all the zeros there are at the end). Lets a reader free the id column once it has
    the keys, and rebuild just the distinct ids.
    """
    n = len(keys)
    keys = np.ascontiguousarray(keys, dtype=np.uint64)
    if (prefix.isascii() and n * (len(prefix) + 8) < 2**31
            and not bool((keys & np.uint64(0x8080808080808080)).any())):
        return _ascii_from_keys(keys, prefix)
    # bytes of padding: trailing zero bytes of the key (the lowest set bit says where)
    low = keys & (~keys + np.uint64(1))  # the lowest set bit, 0 for a zero key
    pad = np.where(low > 0, np.log2(np.maximum(low, 1).astype(np.float64)).astype(np.int64)
                   // 8, 8)
    lengths = len(prefix) + 8 - pad
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    matrix = np.empty((n, len(prefix) + 8), dtype=np.uint8)
    matrix[:, : len(prefix)] = np.frombuffer(prefix, dtype=np.uint8)
    matrix[:, len(prefix):] = keys.astype(">u8").view(np.uint8).reshape(n, 8)
    data = matrix[np.arange(len(prefix) + 8) < lengths[:, None]]
    large = int(offsets[-1]) >= 2**31
    return pa.Array.from_buffers(
        pa.large_string() if large else pa.string(), n,
        [None, pa.py_buffer(offsets if large else offsets.astype(np.int32)),
         pa.py_buffer(data)])


def _ascii_from_keys(keys: np.ndarray, prefix: bytes) -> pa.Array:
    """:func:`strings_from_keys` of ASCII keys and prefix, in Arrow: the keys' 8 bytes
    each, their padding trimmed, the prefix put in front (about 4 times faster than
    cutting a byte matrix in numpy)."""
    import pyarrow.compute as pc

    n = len(keys)
    fixed = pa.Array.from_buffers(pa.binary(8), n, [None, pa.py_buffer(keys.astype(">u8"))])
    ids = pc.utf8_rtrim(fixed.cast(pa.binary()).view(pa.string()), characters="\x00")
    if prefix:  # the scalars made from an array: a Python scalar would import pandas
        parts = string_array([prefix.decode("ascii"), ""])
        ids = pc.binary_join_element_wise(parts[0], ids, parts[1])
    return ids


def _shared_prefix(offsets: np.ndarray, seg: np.ndarray, lengths: np.ndarray,
                   ref: np.ndarray) -> int:
    """How many leading bytes of ``ref`` every value of one chunk starts with."""
    n, shortest = len(lengths), int(lengths.min())
    ref = ref[:shortest]
    if shortest == int(lengths.max()):  # one length: byte j of every value is seg[j::len]
        matrix = seg.reshape(n, shortest)
        for j in range(len(ref)):  # column by column: a reduction along axis 0 is slow
            if not bool((matrix[:, j] == ref[j]).all()):
                return j
        return len(ref)
    starts = offsets[:-1] - offsets[0]
    for j in range(len(ref)):
        if not bool((seg[starts + j] == ref[j]).all()):
            return j
    return len(ref)


def _chunk_keys(chunk: pa.Array, offsets: np.ndarray, seg: np.ndarray, lengths: np.ndarray,
                prefix: int, width: int) -> np.ndarray:
    """The keys of one chunk: bytes ``prefix .. prefix + width`` big-endian, zero-padded.

    Ids of one length are one reshape. ASCII ids of several lengths are cut after the
    prefix and padded to 8 bytes in Arrow (two passes in C, about 5 times faster than
    placing the bytes position by position, which other ids take).
    """
    n, shortest = len(lengths), int(lengths.min())
    if shortest == int(lengths.max()):
        block = np.zeros((n, 8), dtype=np.uint8)
        block[:, : shortest - prefix] = seg.reshape(n, shortest)[:, prefix:]
        return block.view(">u8").reshape(n).astype(np.uint64)
    if seg.size and int(seg.max()) < 0x80 and pa.types.is_string(chunk.type):
        import pyarrow.compute as pc

        rest = (chunk if not prefix else
                pc.utf8_slice_codeunits(chunk, prefix))  # ASCII: code units are bytes
        padded = pc.utf8_rpad(rest, width=8, padding="\x00")  # ASCII: characters are bytes
        p_offsets, p_data = string_layout(padded)
        if int(p_offsets[-1] - p_offsets[0]) == 8 * n:
            return p_data[p_offsets[0]: p_offsets[-1]].view(">u8").astype(np.uint64)
    keys = np.zeros(n, dtype=np.uint64)
    starts = offsets[:-1] - offsets[0] + prefix
    rest = lengths - prefix
    for j in range(width):
        present = rest > j
        byte = np.zeros(n, dtype=np.uint64)
        byte[present] = seg[starts[present] + j]
        keys |= byte << np.uint64(8 * (7 - j))
    return keys


def release_unused() -> None:
    """Give memory Arrow's pool keeps back to the system, where that is cheap.

    mimalloc and jemalloc return their free pages; with the system allocator Arrow would
    call glibc's ``malloc_trim(0)``, which also returns the pages numpy's next arrays
    reuse, so they are faulted in again (0.3-0.4 s per 7M-line run read in the app): it
    is skipped there (the app trims when large objects are freed, see ``ireval_app.cache``).
    """
    pool = pa.default_memory_pool()
    if pool.backend_name != "system":
        pool.release_unused()
