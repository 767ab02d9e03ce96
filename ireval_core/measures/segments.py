"""Segmented (per-query) array primitives over CSR layouts.

Every helper works on flat arrays holding all queries at once; ``qidx`` gives the
query of each entry and ``offsets`` the CSR boundaries. None loops over queries.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    pass

def seg_sum(values: np.ndarray, qidx: np.ndarray, n: int) -> np.ndarray:
    """Sum of ``values`` per query (float64)."""
    return np.bincount(qidx, weights=values, minlength=n).astype(np.float64, copy=False)


def seg_count(mask: np.ndarray, qidx: np.ndarray, n: int) -> np.ndarray:
    """Number of true entries per query (int64)."""
    return np.bincount(qidx[mask], minlength=n)


def seg_cumcount(mask: np.ndarray, offsets: np.ndarray, qidx: np.ndarray) -> np.ndarray:
    """Inclusive running count of true entries within each query (int64, exact)."""
    c = np.cumsum(mask, dtype=np.int64)
    before = np.concatenate(([0], c))[offsets[:-1]]
    return c - before[qidx]


def seg_first(mask: np.ndarray, pos: np.ndarray, qidx: np.ndarray, n: int) -> np.ndarray:
    """Smallest ``pos`` where ``mask`` holds, per query (0 when never)."""
    out = np.zeros(n, dtype=np.int64)
    hits = np.flatnonzero(mask)
    if hits.size:
        # entries are in rank order, so the first hit of a query is its smallest pos
        q = qidx[hits]
        first = np.concatenate(([True], q[1:] != q[:-1]))
        out[q[first]] = pos[hits[first]]
    return out


def seg_reverse_cummax(values: np.ndarray, qidx: np.ndarray, n: int) -> np.ndarray:
    """``out[i] = max(values[j] for j >= i in the same query)`` (exact).

    ``qidx`` is grouped (non-decreasing). When the queries fit a grid at most four times
    the values, each query is a column, its entries in reverse from the bottom row up, and
    one running maximum down the rows gives every value; otherwise a running maximum
    over the ranks of the distinct values (a sort). A maximum is exact either way.
    """
    if values.size == 0:
        return values.copy()
    new_query = np.ones(len(values), dtype=bool)
    new_query[1:] = qidx[1:] != qidx[:-1]
    column = np.cumsum(new_query) - 1  # the queries with values, numbered 0, 1, ...
    first = np.flatnonzero(new_query)
    local = np.arange(len(values), dtype=np.int64) - first[column]  # 0-based in its query
    width, n_columns = int(local.max()) + 1, int(column[-1]) + 1
    if values.dtype.kind == "f" and width * n_columns <= 4 * len(values):
        grid = np.full((width, n_columns), -np.inf)  # padding above each query's last entry
        cell = (width - 1 - local) * n_columns + column
        grid.ravel()[cell] = values
        np.maximum.accumulate(grid, axis=0, out=grid)
        return grid.ravel()[cell].astype(values.dtype, copy=False)
    # Exact: work on the ranks of the distinct values (integers), lifted per query so
    # that one running maximum over the reversed array never crosses a query boundary.
    distinct, rank = np.unique(values, return_inverse=True)
    rev_q = np.asarray(qidx[::-1], dtype=np.int64)
    lift = (rev_q.max() - rev_q) * len(distinct)  # grows along the reversed array
    running = np.maximum.accumulate(rank.reshape(-1)[::-1].astype(np.int64) + lift) - lift
    return distinct[running][::-1]


def safe_div(num: np.ndarray, den: np.ndarray, fill: float = 0.0) -> np.ndarray:
    """``num / den`` with ``fill`` where ``den == 0``."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    out = np.full(np.broadcast(num, den).shape, fill, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out
