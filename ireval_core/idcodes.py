"""Identifiers to integer codes: how query and document ids become the ``qcode`` /
``dcode`` columns of :mod:`ireval_core.data`, and how two id arrays are matched.

* :func:`dictionary_codes` hashes strings (codes in order of first appearance);
  :func:`encode_sorted` puts the distinct values in byte order (query ids).
* :func:`doc_codes` codes document ids so that the codes follow byte order: ids that
  fit in 8 bytes after a prefix they share become integer keys, hashed when few are
  distinct and sorted otherwise (:func:`few_distinct`). A run's other ids (UUIDs,
  ``FBIS3-10082``, ClueWeb12's, a mix) are sorted row by row when most of them are
  distinct (:func:`mostly_distinct`: their bytes padded into a matrix, read as 8-byte
  windows or packed integer words, :func:`~ireval_core._arrow.byte_groups`), hashed and
  their distinct values ranked once otherwise; qrels' other ids are hashed only.
* :func:`doc_code_map` maps a run's document codes to the qrels' by a merge of two
  byte-ordered arrays where it can, by searching 8-byte windows of ids of one length
  (UUIDs) among the run's, by a hash table otherwise. Ids coded as integer
  keys keep those keys beside their array (:func:`remember_keys`), so the map merges
  them without reading the strings again.

Only the speed depends on which path is taken, never the codes.

Why a run's long ids are sorted, not hashed, when most are distinct (measured on 7M-line
runs with 6.53M distinct ids, process CPU at load 8-9): Arrow's hash table of millions of
strings costs 3-4 s and 760 MB at the reading's peak, and ranking its 6.53M distinct
values another 2-5 s; one sort of every row's packed bytes gives the codes and the byte
order together: UUIDs 5.7 -> 3.3 s, ``FBIS3-…``/ClueWeb12 ids 6.8 -> 4.3 s, a mix of forms
6.5 -> 5.3 s, and the peak 230-330 MB lower. With few distinct ids (a corpus of 2M) the
hash table is small and the sort of every row costs more. Crossover, on 7M ``FBIS3-…`` /
ClueWeb12 ids resampled to fewer distinct (hash + rank / sort, CPU s, load 11-13): 0.14 of
the rows distinct 2.57 / 4.01, 0.28 3.23 / 4.75, 0.43 3.59 / 4.04, 0.54 3.86 / 3.65; hence
sorting above an estimated 0.5 (:data:`SORT_DISTINCT_RATIO`; the estimate runs a little
low on such data, so the sort is taken from about 0.55).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ._arrow import (
    PiecedRows,
    bool_array,
    byte_order,
    byte_order_keys,
    byte_order_keys_and_prefix,
    byte_window,
    from_numpy,
    matrix_groups,
    matrix_order,
    padded_bytes,
    padded_matrix,
    pieced_groups,
    pieces_of_one_length,
    release_unused,
    string_array,
    string_layout,
    strings_from_keys,
    strings_of_rows,
    to_numpy,
    to_numpy_filled,
)

__all__ = ["HASH_DISTINCT_RATIO", "SAMPLE_KEYS", "as_string_array", "dictionary_codes",
           "doc_code_map", "doc_codes", "doc_codes_of", "encode_sorted", "few_distinct",
           "id_positions", "key_codes_by_hash", "key_codes_by_sort", "mostly_distinct",
           "remember_doc_map",
           "remember_keys", "remembered_keys", "strictly_increasing"]


def as_string_array(values: object) -> pa.Array | pa.ChunkedArray:
    """``values`` as a pyarrow string (or dictionary-of-string) array, chunks kept."""
    if isinstance(values, pa.Array | pa.ChunkedArray):
        arr = values
    else:
        arr = string_array(np.asarray(values, dtype=object).astype(str))
    if pa.types.is_dictionary(arr.type):
        if not pa.types.is_string(arr.type.value_type):
            arr = arr.cast(pa.dictionary(arr.type.index_type, pa.string()))
        return arr
    if not pa.types.is_string(arr.type):
        arr = arr.cast(pa.string())
    return arr


def dictionary_codes(values: object) -> tuple[np.ndarray, pa.Array]:
    """Integer codes (int32) and distinct values, in order of first appearance.

    A chunked column is encoded chunk by chunk with one hash table: pyarrow gives
    every chunk the same final dictionary, so the indices are simply concatenated
    (no copy of the strings into one chunk, no merging of dictionaries).
    """
    arr = as_string_array(values)
    encoded_here = isinstance(arr, pa.ChunkedArray) and not pa.types.is_dictionary(arr.type)
    if encoded_here:
        arr = pc.dictionary_encode(arr)
    if isinstance(arr, pa.ChunkedArray):  # dictionary chunks
        if arr.num_chunks == 0:
            return np.zeros(0, dtype=np.int32), string_array([])
        if not _shared_dictionary(arr):
            arr = arr.unify_dictionaries()
        codes = np.concatenate([to_numpy(c.indices, np.int32) for c in arr.chunks])
        if encoded_here:  # every value of a dictionary we built is used
            return codes, arr.chunk(0).dictionary
        return _compact(codes, arr.chunk(0).dictionary)
    if pa.types.is_dictionary(arr.type):  # may keep values no row uses: drop them
        codes = to_numpy(arr.indices, np.int32)
        return _compact(codes, arr.dictionary)
    encoded = pc.dictionary_encode(arr)
    codes = to_numpy(encoded.indices, np.int32)
    return codes, encoded.dictionary


def doc_codes(values: object, *, rank: bool = True) -> tuple[np.ndarray, pa.Array, bool]:
    """Document codes, the distinct ids, and whether the codes are byte ranks.

    Ids that fit in 8 bytes after the prefix they all share (``clueweb-01234567``,
    MS MARCO numbers) become integer keys (:func:`~ireval_core._arrow.byte_order_keys`),
    coded by hashing them when few are distinct, by one sort otherwise
    (:func:`few_distinct`): faster than hashing the strings, and the codes follow byte
    order. Other ids are hashed (:func:`dictionary_codes`) and, with
    ``rank`` (a run: its ties are ordered by code), their distinct values put in byte
    order once (:func:`~ireval_core._arrow.byte_order`, integer words, not string
    compares). Qrels skip that ranking: nothing orders their documents, and the join
    hashes their ids as fast as it would merge ranked ones (measured).
    """
    holder = [as_string_array(values)]
    del values
    return doc_codes_of(holder, rank=rank)


def doc_codes_of(holder: list[pa.Array | pa.ChunkedArray], *, rank: bool = True,
                 qrels_docs: pa.Array | None = None) -> tuple[np.ndarray, pa.Array, bool]:
    """:func:`doc_codes` of the one column in ``holder``, which it empties.

    When the ids become keys, the column is let go before the keys are sorted (only the
    distinct ids are rebuilt, from their keys): with nobody else holding it, a 7M-line
    run's id strings (140 MB) are not held at the reading's peak.

    ``qrels_docs``: the distinct document ids of the qrels this run will be evaluated
    against (a :class:`~ireval_core.data.Qrels`' ``doc_ids``), when already read. Where
    the run's ids are sorted row by row into a padded matrix (:func:`_codes_by_byte_sort`),
    the run-to-qrels document map is computed from the distinct ids' padded rows before
    they become strings, and :func:`doc_code_map` of the returned ids and ``qrels_docs``
    then returns it without computing it again (:func:`remember_doc_map`). The codes and
    ids are the same either way.
    """
    arr = holder.pop()
    keyed = (byte_order_keys_and_prefix(arr) if len(arr) and not pa.types.is_dictionary(arr.type)
             else None)
    if keyed is None:
        if rank and not pa.types.is_dictionary(arr.type) and mostly_distinct(arr):
            holder.append(arr)
            del arr
            found = _codes_by_byte_sort(holder, qrels_docs)
            if found is not None:
                codes, distinct, doc_map = found
                if doc_map is not None and qrels_docs is not None:
                    remember_doc_map(distinct, qrels_docs, doc_map)
                return codes, distinct, True
            arr = holder.pop()
        codes, dictionary = dictionary_codes(arr)
        del arr
        release_unused()  # the hash table's pages: not held under what follows
        if not rank:
            return codes, dictionary, False
        return (*_byte_ranked(codes, dictionary), True)
    keys, prefix = keyed
    del arr, keyed
    release_unused()
    if few_distinct(keys):
        codes, distinct_keys = key_codes_by_hash(keys)
    else:
        codes, distinct_keys = key_codes_by_sort(keys)
    del keys
    distinct = strings_from_keys(distinct_keys, prefix)  # the distinct ids, byte order
    remember_keys(distinct, distinct_keys, prefix)
    return codes, distinct, True


# The integer keys an id array was rebuilt from (:func:`doc_codes_of`), by id() of the
# array: (a weak reference to it, its keys, their prefix). The document map of a run and
# its qrels merges these keys instead of deriving them again from the strings.
_KEYS: dict[int, tuple[weakref.ref[pa.Array], np.ndarray, bytes]] = {}
_KEYS_LOCK = threading.RLock()  # re-entered by a finalizer run by the GC


def remember_keys(ids: pa.Array, keys: np.ndarray, prefix: bytes) -> None:
    """Note that the strictly increasing ``keys`` after ``prefix`` are ``ids``, exactly
    (:func:`~ireval_core._arrow.byte_order_keys_and_prefix`'s keys of ``ids``), for
    :func:`doc_code_map`. Kept as long as ``ids`` lives."""
    ident = id(ids)
    keys.setflags(write=False)
    with _KEYS_LOCK:
        _KEYS[ident] = (weakref.ref(ids), keys, prefix)
    weakref.finalize(ids, _forget_keys, ident)


def _forget_keys(ident: int) -> None:
    with _KEYS_LOCK:
        got = _KEYS.get(ident)
        if got is not None and got[0]() is None:
            del _KEYS[ident]


def remembered_keys(ids: pa.Array) -> tuple[np.ndarray, bytes] | None:
    """The keys and prefix :func:`remember_keys` noted for ``ids``, or ``None``."""
    with _KEYS_LOCK:
        got = _KEYS.get(id(ids))
    if got is None or got[0]() is not ids:
        return None
    return got[1], got[2]


# Document maps computed with a run's codes (:func:`doc_codes_of` given the qrels' ids), by
# id() of the run's distinct ids: (weak references to both id arrays, the map). Taken out
# by the first :func:`doc_code_map` of the two arrays.
_MAPS: dict[int, tuple[weakref.ref[pa.Array], weakref.ref[pa.Array], np.ndarray]] = {}


def remember_doc_map(run_docs: pa.Array, qrels_docs: pa.Array, doc_map: np.ndarray) -> None:
    """Note that ``doc_map`` is :func:`doc_code_map` of ``run_docs`` and ``qrels_docs``,
    which the next such call returns (once) instead of computing it. Kept as long as
    both arrays live."""
    ident = id(run_docs)
    doc_map.setflags(write=False)
    with _KEYS_LOCK:
        _MAPS[ident] = (weakref.ref(run_docs), weakref.ref(qrels_docs), doc_map)
    weakref.finalize(run_docs, _forget_map, ident)
    weakref.finalize(qrels_docs, _forget_map, ident)


def _forget_map(ident: int) -> None:
    with _KEYS_LOCK:
        got = _MAPS.get(ident)
        if got is not None and (got[0]() is None or got[1]() is None):
            del _MAPS[ident]


def _remembered_map(run_docs: pa.Array, qrels_docs: pa.Array) -> np.ndarray | None:
    """The map :func:`remember_doc_map` noted for these two arrays (taken out), or None."""
    with _KEYS_LOCK:
        got = _MAPS.get(id(run_docs))
        if got is None or got[0]() is not run_docs or got[1]() is not qrels_docs:
            return None
        del _MAPS[id(run_docs)]
    return got[2]


def _shared_keys(run_docs: pa.Array, qrels_docs: pa.Array
                 ) -> tuple[np.ndarray, np.ndarray] | None:
    """Keys of both id arrays that compare like their strings, from the keys noted when
    they were coded (:func:`remember_keys`), or ``None``.

    With the same prefix the keys are used as they are. Otherwise the longer prefix's
    extra bytes are put back in front of its keys, which stay exact when the key's last
    bytes are padding (the id is short enough): then both sides are keys after the
    shorter prefix.
    """
    got_run, got_qrels = remembered_keys(run_docs), remembered_keys(qrels_docs)
    if got_run is None or got_qrels is None:
        return None
    (run_keys, run_prefix), (qrels_keys, qrels_prefix) = got_run, got_qrels
    if run_prefix == qrels_prefix:
        return run_keys, qrels_keys
    short, long_ = sorted((run_prefix, qrels_prefix), key=len)
    if not long_.startswith(short) or len(long_) - len(short) >= 8:
        return None
    shift = 8 * (len(long_) - len(short))
    keys = qrels_keys if len(qrels_prefix) > len(run_prefix) else run_keys
    if len(keys) and bool((keys & np.uint64((1 << shift) - 1)).any()):
        return None  # an id fills the bytes the extra prefix needs
    head = np.uint64(int.from_bytes(long_[len(short):], "big") << (64 - shift))
    moved = (keys >> np.uint64(shift)) | head
    return (run_keys, moved) if keys is qrels_keys else (moved, qrels_keys)


SORT_DISTINCT_RATIO = 0.5
"""Long ids (strings, not integer keys) of a run are sorted row by row when more than this
share of them is estimated to be distinct (:func:`mostly_distinct`), hashed and their
distinct values ranked otherwise."""


def mostly_distinct(arr: pa.Array | pa.ChunkedArray) -> bool:
    """Whether more than :data:`SORT_DISTINCT_RATIO` of the values of a string array are
    estimated distinct, from :data:`SAMPLE_KEYS` evenly spaced values (as
    :func:`few_distinct` estimates it for integer keys; a few ms)."""
    n_rows = len(arr)
    if n_rows <= SAMPLE_KEYS:
        return False  # small: hashing is fast
    step = n_rows // SAMPLE_KEYS
    sample = _taken(arr, np.arange(0, step * SAMPLE_KEYS, step, dtype=np.int64))
    codes = np.sort(to_numpy(pc.dictionary_encode(sample).indices))
    n = len(codes)
    repeats = 1.0 + 2.0 * n_rows * _equal_pairs(codes) / (n * (n - 1))
    return 1.0 / repeats > SORT_DISTINCT_RATIO


def _taken(arr: pa.Array | pa.ChunkedArray, rows: np.ndarray) -> pa.Array:
    """The values of ``arr`` at the increasing positions ``rows``, as one array, taken
    chunk by chunk (Arrow's ``take`` of a chunked array first joins its chunks: a copy of
    the whole column)."""
    if not isinstance(arr, pa.ChunkedArray):
        return pc.take(arr, from_numpy(rows))
    parts = []
    start = 0
    for chunk in arr.chunks:
        lo, hi = np.searchsorted(rows, [start, start + len(chunk)])
        if hi > lo:
            parts.append(pc.take(chunk, from_numpy(rows[lo:hi] - start)))
        start += len(chunk)
    if not parts:  # no row: an empty array of the column's type
        return arr.chunk(0).slice(0, 0) if arr.num_chunks else arr.combine_chunks()
    return pa.concat_arrays(parts)


def _codes_by_byte_sort(holder: list[pa.Array | pa.ChunkedArray],
                        qrels_docs: pa.Array | None = None
                        ) -> tuple[np.ndarray, pa.Array, np.ndarray | None] | None:
    """Byte-rank codes, the distinct ids in byte order and the document map to
    ``qrels_docs`` (or None) by sorting every row's bytes
    (:func:`~ireval_core._arrow.byte_groups`), no hash table; None when an id is null or
    holds a zero byte. Takes the one column in ``holder`` (the caller's is let go).

    Ids of several lengths are padded into a byte matrix chunk by chunk and the column is
    let go before the sort; the distinct ids are then cut out of the matrix's rows (a
    7M-line run's id strings are not held beside the matrix at the peak). Ids of one
    length (UUIDs) are read in place: the matrix is the column's own bytes, or, for a
    chunked column, its chunks' bytes piece by piece (:func:`_codes_of_pieces`).

    With ``qrels_docs`` (distinct ids) and a padded matrix (not read in place), the
    qrels' ids are searched among the distinct ids' padded rows, which are cut out of
    the matrix anyway (:func:`_map_of_rows`).
    """
    arr = holder.pop()
    if arr.null_count:
        holder.append(arr)
        return None
    pieces = pieces_of_one_length(arr)
    if pieces is not None:  # the pieces hold the column's bytes: let it go with them
        del arr
        held = [pieces]
        del pieces
        return _codes_of_pieces(held, qrels_docs)
    matrix = padded_matrix(arr)
    if matrix is None:
        holder.append(arr)
        return None
    one_length = matrix.base is not None and _shares_memory(matrix, arr)
    if not one_length:
        del arr  # the matrix holds every byte of the ids
        release_unused()  # the column's pages: not held beside the matrix and its sort
    order, starts = matrix_groups(matrix)
    codes = _codes_of_groups(order, starts)
    firsts = order[starts]
    del order, starts
    if one_length:
        whole = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
        return codes, whole.take(from_numpy(firsts)), None
    rows = np.ascontiguousarray(matrix[firsts])  # the distinct ids, padded, in byte order
    del matrix, firsts
    doc_map = (_map_of_rows(rows, qrels_docs)
               if isinstance(qrels_docs, pa.Array) and len(qrels_docs) else None)
    return codes, strings_of_rows(rows), doc_map


def _codes_of_groups(order: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Each row's code from a byte sort: ``order`` the rows in byte order, ``starts`` true
    where a new distinct id begins in that order (int32 codes, byte ranks)."""
    group = np.cumsum(starts, dtype=np.int32)
    group -= 1
    codes = np.empty(len(order), dtype=np.int32)
    codes[order] = group
    return codes


def _codes_of_pieces(held: list[PiecedRows], qrels_docs: pa.Array | None
                     ) -> tuple[np.ndarray, pa.Array, np.ndarray | None]:
    """:func:`_codes_by_byte_sort` of a chunked column of ids of one length (UUIDs), read
    in place chunk by chunk (the one :class:`~ireval_core._arrow.PiecedRows` in ``held``,
    which it empties): no matrix is copied beside the column, only the distinct rows are
    gathered out of it, and the column goes once they are."""
    pieces = held.pop()
    order, starts = pieced_groups(pieces)
    codes = _codes_of_groups(order, starts)
    n_codes = int(np.count_nonzero(starts))
    del order, starts
    rows = pieces.scattered(codes, n_codes)  # the distinct ids, in byte order
    del pieces
    doc_map = (_map_of_rows(rows, qrels_docs)
               if isinstance(qrels_docs, pa.Array) and len(qrels_docs) else None)
    return codes, strings_of_rows(rows), doc_map


def _map_of_rows(rows: np.ndarray, qrels_docs: pa.Array) -> np.ndarray | None:
    """:func:`doc_code_map` of a run's distinct ids, given as the rows of a padded byte
    matrix in byte order (:func:`_codes_by_byte_sort`), and the qrels' ``qrels_docs``
    (any order), or None (a qrels id null or with a zero byte).

    The qrels' ids are padded to the run's width (an id longer than that is no run id),
    put in byte order (:func:`~ireval_core._arrow.matrix_order`) and searched, in that
    order, among the run's rows read as fixed-width bytes (``S<width>``, compared like
    ``strcmp``): on 6.53M run ids and 1.39M qrels ids (``FBIS3-…``/ClueWeb12, a mix of
    forms) about 0.9 s, where a hash table of the qrels' ids looked up with the run's
    strings took 1.0-1.4 s.
    """
    qrels = padded_matrix(qrels_docs)
    n_run, width = rows.shape
    if qrels is None or not n_run or not width:
        return None
    if qrels.shape[1] > width:
        longer = (qrels[:, width:] != 0).any(axis=1)
        qrels = qrels[:, :width]
    else:
        longer = None
        if qrels.shape[1] < width:
            qrels = np.pad(qrels, ((0, 0), (0, width - qrels.shape[1])))
    order = matrix_order(qrels)  # searched in order: each search starts near the last
    needles = np.ascontiguousarray(qrels[order]).view(f"S{width}").reshape(len(order))
    del qrels
    haystack = rows.view(f"S{width}").reshape(n_run)
    at = np.searchsorted(haystack, needles)
    np.minimum(at, n_run - 1, out=at)
    found = haystack[at] == needles
    if longer is not None:
        found &= ~longer[order]
    out = np.full(n_run, -1, dtype=np.int64)
    out[at[found]] = order[found]
    return out


def _shares_memory(matrix: np.ndarray, arr: pa.Array | pa.ChunkedArray) -> bool:
    """Whether ``matrix`` is a view of the bytes of ``arr`` (one chunk, ids of one length)."""
    if isinstance(arr, pa.ChunkedArray):
        return False
    data = arr.buffers()[2]
    return data is not None and np.shares_memory(matrix, np.frombuffer(data, dtype=np.uint8))


HASH_DISTINCT_RATIO = 0.25
"""Integer keys are hashed when at most this share of them is estimated to be distinct,
sorted otherwise. Measured on 7M uint64 keys (CPU seconds, hash / sort): 20k distinct
0.13 / 0.83, 1M 0.75 / 1.1, 2M 1.1 / 1.2, 4.8M 1.9 / 1.2, 6.5M 2.5 / 1.0; the hash table
of millions of entries also stays in Arrow's pool at the reading's peak (+500 MB at 4.8M)."""


SAMPLE_KEYS = 1 << 16
"""How many keys :func:`few_distinct` looks at (evenly spaced rows)."""


def few_distinct(keys: np.ndarray) -> bool:
    """Whether at most :data:`HASH_DISTINCT_RATIO` of ``keys`` are estimated distinct.

    From :data:`SAMPLE_KEYS` evenly spaced rows (about 5 ms on 7M keys): if the ``n``
    values read have ``p`` pairs of equal ones, a population of ``N`` rows where every
    distinct value appears ``f`` times gives ``p ≈ n²(f − 1) / 2N``, so the estimate is
    ``f = 1 + 2Np / n²`` and the distinct share ``1 / f``. Skewed counts (a few values on
    many rows) raise ``p`` and so lean to hashing, which the hot values make cheap anyway.
    Only the speed depends on the answer, never the codes.
    """
    n_rows = len(keys)
    if n_rows <= SAMPLE_KEYS:
        return True  # small: either is fast, and the hash table is small too
    step = n_rows // SAMPLE_KEYS
    sample = np.sort(keys[::step][:SAMPLE_KEYS])
    n = len(sample)
    pairs = _equal_pairs(sample)
    repeats = 1.0 + 2.0 * n_rows * pairs / (n * (n - 1))
    return 1.0 / repeats <= HASH_DISTINCT_RATIO


def _equal_pairs(sorted_values: np.ndarray) -> int:
    """How many pairs of equal values a sorted array holds (a run of ``k``: k(k-1)/2)."""
    if len(sorted_values) < 2:
        return 0
    starts = np.flatnonzero(np.concatenate(
        ([True], sorted_values[1:] != sorted_values[:-1], [True])))
    runs = np.diff(starts).astype(np.int64)
    return int((runs * (runs - 1) // 2).sum())


def key_codes_by_hash(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`key_codes_by_sort`'s result by hashing the keys (Arrow's table), then
    sorting only the distinct ones and renumbering by their rank."""
    encoded = pc.dictionary_encode(from_numpy(keys))
    first_seen = to_numpy(encoded.indices)
    distinct_keys = to_numpy(encoded.dictionary)
    del encoded
    order = np.argsort(distinct_keys)
    byte_rank = np.empty(len(order), dtype=np.int32)
    byte_rank[order] = np.arange(len(order), dtype=np.int32)
    codes = byte_rank[first_seen]
    del first_seen
    distinct_keys = distinct_keys[order]
    release_unused()
    return codes, distinct_keys


def key_codes_by_sort(keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each key's rank among the distinct keys (int32), and the distinct keys, sorted.
    Sorts ``keys`` in place (the caller lets them go).

    One argsort of every key: its cost hardly depends on how many are distinct, where a
    hash table's grows with them (:data:`HASH_DISTINCT_RATIO`).
    """
    order = np.argsort(keys)  # any order of equal keys: they are one id
    keys.sort()  # a second (vectorised) sort beats gathering; in place: peak memory
    new = np.empty(len(keys), dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    distinct_keys = keys[new]
    group = np.cumsum(new, dtype=np.int32)
    group -= 1
    del new
    codes = np.empty(len(order), dtype=np.int32)
    codes[order] = group
    return codes, distinct_keys


def _byte_ranked(codes: np.ndarray, dictionary: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """``codes`` renumbered so that they index ``dictionary`` put in byte order."""
    order = byte_order(dictionary)
    if len(order) and not bool((order[1:] > order[:-1]).all()):
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        codes = rank[codes]
        dictionary = dictionary.take(from_numpy(order))
    return codes, dictionary


def _shared_dictionary(arr: pa.ChunkedArray) -> bool:
    """True when every chunk's dictionary is the very same array (same buffers)."""
    def ident(d: pa.Array) -> tuple[object, ...]:
        return (d.offset, len(d), *(b.address if b is not None else 0 for b in d.buffers()))
    first = ident(arr.chunk(0).dictionary)
    return all(ident(c.dictionary) == first for c in arr.chunks[1:])


def encode_sorted(values: object) -> tuple[np.ndarray, pa.Array]:
    """Code strings to int32 indices into their byte-wise sorted distinct values.

    Used for query ids (few distinct values): hashing happens on all values,
    sorting only on the distinct ones.
    """
    codes, dictionary = dictionary_codes(values)
    order = to_numpy(pc.sort_indices(dictionary))
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    return rank[codes], dictionary.take(from_numpy(order))


def _compact(codes: np.ndarray, dictionary: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Drop dictionary values no row uses (a filtered dictionary column keeps them)."""
    used = np.bincount(codes, minlength=len(dictionary)) > 0
    if used.all():
        return codes, dictionary
    remap = np.cumsum(used, dtype=np.int32) - 1
    return remap[codes], dictionary.filter(bool_array(used))


def id_positions(haystack: np.ndarray, needles: np.ndarray) -> np.ndarray:
    """Index of each needle in the sorted string array ``haystack``, -1 when absent."""
    idx = pc.index_in(string_array(needles.astype(str)),
                      value_set=string_array(haystack.astype(str)))
    return _indices(idx)


def doc_code_map(run_docs: pa.Array, qrels_docs: pa.Array) -> np.ndarray:
    """For each run document code, the qrels document code (or -1 when never judged).

    Where both id arrays are in byte order they are merged by one binary search over
    sorted needles, never hashed: as integer keys when the ids fit in 8 bytes after a
    shared prefix (:func:`doc_codes` leaves such ids in byte order, qrels' too),
    otherwise as numpy fixed-width bytes (``S<n>``, compared like ``strcmp``; UUIDs,
    ``FBIS3-10082``, ClueWeb12 ids, a mix). Run ids in byte order and qrels ids in any
    order, all of one length (UUIDs), are matched by their first 8-byte window
    (:func:`_merged_by_window`). Other arrays (or ids with a zero byte) are looked up in
    a hash table of the qrels' ids. Id arrays that :func:`doc_codes` rebuilt from
    integer keys merge those keys (:func:`remember_keys`), not derived again. A map
    computed when the run's ids were coded (:func:`doc_codes_of` with ``qrels_docs``) is
    returned as it is (read-only), the first time it is asked for.
    """
    remembered = _remembered_map(run_docs, qrels_docs)
    if remembered is not None:
        return remembered
    if len(qrels_docs) and len(run_docs):
        shared = _shared_keys(run_docs, qrels_docs)
        if shared is not None:
            return _merged(*shared)
    if len(run_docs) >= 4096 and len(qrels_docs) and run_docs.type == qrels_docs.type:
        keys = byte_order_keys(pa.chunked_array([run_docs, qrels_docs]))
        if keys is not None:  # one key per id, consistent across the two arrays
            run_keys, qrels_keys = keys[: len(run_docs)], keys[len(run_docs):]
            if strictly_increasing(run_keys) and strictly_increasing(qrels_keys):
                return _merged(run_keys, qrels_keys)
        else:
            found = _merge_sorted_ids(run_docs, qrels_docs)
            if found is None:
                found = _merged_by_window(run_docs, qrels_docs)
            if found is not None:
                return found
    return _indices(pc.index_in(run_docs, value_set=qrels_docs))


MAX_WINDOW_RANGE = 8
"""In :func:`_merged_by_window`, the most run ids one qrels id's 8-byte window may point
to before the map is left to a hash table."""


def _merged_by_window(run_docs: pa.Array, qrels_docs: pa.Array) -> np.ndarray | None:
    """:func:`doc_code_map` of run ids in byte order and qrels ids in any order, all of one
    length (UUIDs; both read in place as byte matrices), or None.

    Each qrels id's first 8 bytes after the prefix the run's ids share, read as one
    big-endian integer, are searched among the run's (non-decreasing, as the ids are in
    byte order); the few run ids of that window (at most :data:`MAX_WINDOW_RANGE`,
    else None) are compared with it byte for byte. No hash of the run's millions of ids:
    on UUIDs (6.53M run ids, 1.39M qrels ids) a hash table's lookup costs 1.1-1.6 s.
    """
    if not (_one_length(qrels_docs) and _one_length(run_docs)):  # the shorter first
        return None
    run = padded_matrix(run_docs)
    qrels = padded_matrix(qrels_docs)
    if run is None or qrels is None or run.shape[1] != qrels.shape[1]:
        return None
    width = run.shape[1]
    shared = 0  # the prefix of every run id: that of its first and last (byte order)
    while shared < width and run[0, shared] == run[-1, shared]:
        shared += 1
    at = min(shared, max(width - 8, 0))
    if width - at < 8:
        return None
    run_key = byte_window(run, at)
    if not bool((run_key[1:] >= run_key[:-1]).all()):
        return None  # not in byte order
    qrels_key = byte_window(qrels, at)
    by_key = np.argsort(qrels_key)  # searched in order: each search starts near the last
    qrels_key = qrels_key[by_key]
    lo = np.searchsorted(run_key, qrels_key, side="left")
    span = np.searchsorted(run_key, qrels_key, side="right") - lo
    if len(span) and int(span.max()) > MAX_WINDOW_RANGE:
        return None
    out = np.full(len(run), -1, dtype=np.int64)
    found = np.flatnonzero(span)  # positions in by_key
    for k in range(int(span.max()) if len(span) else 0):
        found = found[span[found] > k]
        candidate = lo[found] + k
        rows = by_key[found]
        same = np.ones(len(rows), dtype=bool)
        for start in (*range(0, width - 8, 8), width - 8):  # the last window may overlap
            same &= byte_window(run, start, candidate) == byte_window(qrels, start, rows)
        out[candidate[same]] = rows[same]
    return out


def _one_length(ids: pa.Array) -> bool:
    """Whether the ids are not empty and all have the same number of bytes."""
    if not len(ids) or isinstance(ids, pa.ChunkedArray) or pa.types.is_dictionary(ids.type):
        return False
    lengths = np.diff(string_layout(ids)[0])
    return int(lengths.min()) == int(lengths.max())


def _merge_sorted_ids(run_docs: pa.Array, qrels_docs: pa.Array) -> np.ndarray | None:
    """:func:`doc_code_map` of two byte-ordered id arrays as fixed-width bytes, or None."""
    if not (_strings_increasing(qrels_docs) and _strings_increasing(run_docs)):
        return None  # e.g. qrels with long ids (in order of first appearance)
    qrels_bytes = padded_bytes(qrels_docs)
    if qrels_bytes is None:
        return None
    run_bytes = padded_bytes(run_docs, qrels_bytes.dtype.itemsize)
    if run_bytes is None or run_bytes.dtype != qrels_bytes.dtype:  # a longer run id
        longer = padded_bytes(qrels_docs, run_bytes.dtype.itemsize) if run_bytes is not None \
            else None
        if longer is None or run_bytes is None:
            return None
        qrels_bytes = longer
    if not (strictly_increasing(run_bytes) and strictly_increasing(qrels_bytes)):
        return None
    return _merged(run_bytes, qrels_bytes)


def _merged(run_keys: np.ndarray, qrels_keys: np.ndarray) -> np.ndarray:
    """For each of the strictly increasing ``run_keys``, its position in the strictly
    increasing ``qrels_keys`` (-1 when absent), by binary searches of the shorter array's
    keys in the longer one (a real run has several times more documents than its qrels)."""
    if len(run_keys) <= len(qrels_keys):
        at = np.minimum(np.searchsorted(qrels_keys, run_keys), len(qrels_keys) - 1)
        return np.where(qrels_keys[at] == run_keys, at, -1)
    at = np.searchsorted(run_keys, qrels_keys)
    found = at < len(run_keys)
    found[found] = run_keys[at[found]] == qrels_keys[found]
    out = np.full(len(run_keys), -1, dtype=np.int64)
    out[at[found]] = np.flatnonzero(found)
    return out


def _strings_increasing(ids: pa.Array) -> bool:
    """Whether a string array is in byte order with no repeat (Arrow compares bytes)."""
    if len(ids) < 2:
        return True
    return bool(pc.all(pc.less(ids.slice(0, len(ids) - 1), ids.slice(1))).as_py())


def strictly_increasing(keys: np.ndarray) -> bool:  # numbers or fixed-width bytes
    """Whether ``keys`` is sorted with no repeat (so ``searchsorted`` finds each once)."""
    return bool((keys[1:] > keys[:-1]).all())


def _indices(found: pa.Array) -> np.ndarray:
    """int64 positions from ``index_in``; -1 where the value was not found (null)."""
    return to_numpy_filled(found, -1, np.int64)
