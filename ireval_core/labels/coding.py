"""Rows grouped and sorted by several integer code columns, vectorised.

What :mod:`ireval_core.labels.reader` builds the tables of a
:class:`~ireval_core.labels.judgments.Judgments` with: a text column coded into its
sorted distinct values (:func:`sorted_codes`; rounds in time order, :func:`time_order`;
runs of equal values hashed once, :func:`run_codes`), rows grouped by several code
columns (:func:`group_rows`: no sort) and sorted by them (:func:`order_rows`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..idcodes import dictionary_codes
from .label_table import ordered_rounds

__all__ = ["group_rows", "order_rows", "run_codes", "sorted_codes", "time_order"]


def sorted_codes(values: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """int32 codes into the byte-wise sorted distinct values (an object array)."""
    codes, dictionary = dictionary_codes(values)
    order = pc.sort_indices(dictionary).to_numpy()
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    names = np.asarray(dictionary.take(pa.array(order)).to_pylist(), dtype=object)
    return rank[codes], names


def time_order(codes: np.ndarray, names: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Recode rounds so that code order is time order (:func:`~ireval_core.labels.label_table.
    ordered_rounds`: numbers, then dates such as ``2026-05`` or ``May 2026``, else text)."""
    ordered = np.asarray(ordered_rounds(names), dtype=object)
    rank = pd.Index(ordered).get_indexer(names).astype(np.int32)
    return rank[codes], ordered


def run_codes(values: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, pa.Array]:
    """:func:`~ireval_core.data.dictionary_codes` of a column whose equal values often
    follow each other (the raters' rows of one shown result): only runs are hashed."""
    n = len(values)
    if n < 2 or pa.types.is_dictionary(values.type):
        return dictionary_codes(values)
    same = pc.equal(values.slice(1), values.slice(0, n - 1))
    if isinstance(same, pa.ChunkedArray):
        same = same.combine_chunks()
    change = np.concatenate(([True], ~same.to_numpy(zero_copy_only=False).astype(bool)))
    starts = np.flatnonzero(change)
    if len(starts) > 0.7 * n:
        return dictionary_codes(values)
    codes, dictionary = dictionary_codes(values.take(pa.array(starts)))
    return np.repeat(codes, np.diff(np.append(starts, n))), dictionary


def _combined_key(parts: Sequence[tuple[np.ndarray, int]]) -> tuple[np.ndarray, int] | None:
    """One int64 key per row for several code columns (None if it would overflow)."""
    size = 1
    for _, n in parts:
        size *= max(int(n), 1)
    if size >= 2**62:
        return None
    key = parts[0][0].astype(np.int64)
    for codes, n in parts[1:]:
        key = key * max(int(n), 1) + codes
    return key, size


def group_rows(*parts: tuple[np.ndarray, int]) -> tuple[np.ndarray, int, np.ndarray]:
    """Group rows by several code columns: ``(group id, n groups, first row of each)``.

    A small key space is counted (``bincount``: ids in key order); a large one is
    hashed (``pandas.factorize``: ids in order of first appearance). No sort either way.
    """
    n = len(parts[0][0])
    if n == 0:
        return np.zeros(0, dtype=np.int64), 0, np.zeros(0, dtype=np.int64)
    combined = _combined_key(parts)
    itype = np.int32 if n < 2**31 else np.int64
    if combined is not None and combined[1] <= max(8 * n, 1 << 24):
        key, size = combined
        present = np.bincount(key, minlength=size) > 0
        dense = (np.cumsum(present) - 1).astype(itype)
        del present
        ids = dense[key]
        del key, dense
        n_groups = int(ids.max()) + 1 if len(ids) else 0
        first = np.full(n_groups, n, dtype=itype)
        np.minimum.at(first, ids, np.arange(n, dtype=itype))
        return ids, n_groups, first.astype(np.int64)
    if combined is not None:
        key = combined[0]
    else:  # densify step by step
        key = parts[0][0].astype(np.int64)
        size = max(int(parts[0][1]), 1)
        for codes, m in parts[1:]:
            m = max(int(m), 1)
            if size * m >= 2**62:
                key, uniques = pd.factorize(key)
                size = max(len(uniques), 1)
            key = key * m + codes
            size *= m
    # rows of a group often follow each other (one row per rater): hash runs, not rows
    change = np.empty(n, dtype=bool)
    change[0] = True
    np.not_equal(key[1:], key[:-1], out=change[1:])
    starts = np.flatnonzero(change)
    del change
    run_ids, uniques = pd.factorize(key[starts])
    del key
    run_ids = run_ids.astype(itype, copy=False)
    new = np.empty(len(starts), dtype=bool)
    new[0] = True
    np.greater(run_ids[1:], np.maximum.accumulate(run_ids)[:-1], out=new[1:])
    ids = np.repeat(run_ids, np.diff(np.append(starts, n))) if len(starts) < n else run_ids
    return ids, len(uniques), starts[new]


def order_rows(*parts: tuple[np.ndarray, int]) -> np.ndarray:
    """Rows sorted by several code columns (first = most significant), stable."""
    combined = _combined_key(parts)
    if combined is None:
        return np.lexsort(tuple(c for c, _ in reversed(parts)))
    key = combined[0]
    if len(key) < 2 or bool((key[1:] >= key[:-1]).all()):  # files are often in order
        return np.arange(len(key))
    return np.argsort(key, kind="stable")
