"""Search quality month by month: DCG@K of what users were shown, per round and system.

The seed's formula (seed 003): for one query,

    DCG@K = Σ over shown positions p <= K of gain(label at p) / log2(p + 1)

with the *shown* position (not a re-ranking), gain ``linear`` (= the label) or
``exp`` (2^label − 1), and the label combined over raters by a stated rule. An
unlabeled shown position gains 0 and lowers the **coverage** (labeled shown
positions <= K / shown positions <= K). **nDCG@K** divides by the DCG of the
round's labeled documents of that query (whatever system showed them), sorted by
label: the ideal comes from the round's labels, so a list that lost the good
documents scores low on both.

:func:`trend` gives, per round and system (and segment with ``by="segment"``),
the mean DCG@K over the sampled queries -- weighted by the query weight when the
file has weights -- with a seeded bootstrap percentile interval, nDCG@K, the
coverage, the grade distribution of the shown top K, and the month-over-month
change of every system with a test: paired t over the queries both rounds share
when they make at least half of each round, Welch's t over all queries otherwise.

Everything is vectorised over all rounds, systems and queries at once (one
``bincount`` per quantity); the bootstrap sums the groups of one size side by
side, looping over blocks of draws, and the tests loop over consecutive rounds.

>>> from ireval_core.labels import judgments_from_frame
>>> import pandas as pd
>>> df = pd.DataFrame({"round": ["m1"] * 3, "query": ["q"] * 3, "doc": ["a", "b", "c"],
...                    "position": [1, 2, 3], "label": [1, 3, None]})
>>> t = trend(judgments_from_frame(df), k=3)
>>> t.table[["round", "queries", "dcg", "ndcg", "coverage"]].round(4).values.tolist()
[['m1', 1, 2.8928, 0.7967, 0.6667]]
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats as _sps

from ..formats import p_text
from ..measures.gain import discounts, gains
from ..options import EvalOptions, options_or_default
from ..params import OPEN_UNIT, POSITIVE_INT, SEED, Options, any_of, check
from ..stats import paired_t_test
from .judgments import COMBINE_RULES, Combine, Judgments, check_combine, text_column
from .label_table import ordered_rounds

__all__ = ["TABLE_COLUMNS", "CHANGE_COLUMNS", "Trend", "bootstrap_columns", "bootstrap_means",
           "bootstrap_sums", "compare_rounds", "dcg_definition", "gather_sums",
           "per_query_dcg", "resample_chunks", "resample_indices", "trend"]

Gain = Literal["linear", "exp"]

TABLE_COLUMNS = ("round", "system", "queries", "dcg", "dcg_ci_low", "dcg_ci_high",
                 "dcg_unweighted", "ndcg", "coverage", "shown", "labeled", "averaging")
"""Columns of :attr:`Trend.table` (``segment`` after ``system`` with ``by="segment"``)."""

CHANGE_COLUMNS = ("system", "measure", "round_from", "round_to", "mean_from", "mean_to",
                  "delta", "relative", "test", "queries_from", "queries_to", "shared", "test_delta",
                  "ci_low", "ci_high", "p", "significant", "drop", "sentence")
"""Columns of :attr:`Trend.changes` (``segment`` after ``system`` with ``by="segment"``)."""


# ----------------------------------------------------------------------------- checks


GAIN = Options(("linear", "exp"))
"""The gains of the labeling measures (see :func:`~ireval_core.measures.gain.gains`)."""
PAIRING = Options(("auto", "paired", "unpaired"))
BY = any_of(None, Options(("segment",)))


def dcg_definition(k: int, gain: str, combine: str) -> str:
    """The definition of DCG@k on labeled result lists, in one line."""
    g = "the label" if gain == "linear" else "2^label − 1"
    return (f"DCG@{k} = Σ over shown positions p <= {k} of gain / log2(p + 1), gain = {g}, "
            f"label = {COMBINE_RULES[combine]}; an unlabeled position gains 0")


# ----------------------------------------------------------------------------- kernels


@dataclass(frozen=True, eq=False)
class PerQuery:
    """Per (round, system, query) list of a :class:`Judgments` (its ``group_*`` order)."""

    dcg: np.ndarray
    idcg: np.ndarray
    ndcg: np.ndarray
    shown: np.ndarray
    labeled: np.ndarray


def per_query_dcg(j: Judgments, *, k: int = 10, gain: Gain = "linear",
                  combine: Combine = "mean", idcg_zero: str = "zero",
                  shown_label: np.ndarray | None = None) -> PerQuery:
    """DCG@k, IDCG@k, nDCG@k, shown and labeled positions <= k of every query list.

    ``shown_label`` replaces the combined label of each shown result (the label
    used for its gain; :mod:`.changes` evaluates new lists with old labels this
    way). The ideal always comes from the round's combined labels. Without
    ``shown_label`` the result is kept with the judgments (read-only arrays): the
    analyses of one page (trend, rater noise, planning) compute it once.
    """
    if shown_label is None:
        return j.cached(("per_query_dcg", k, gain, combine, idcg_zero),
                        lambda: _per_query_dcg(j, k, gain, combine, idcg_zero, None))
    return _per_query_dcg(j, k, gain, combine, idcg_zero, shown_label)


def _per_query_dcg(j: Judgments, k: int, gain: Gain, combine: Combine, idcg_zero: str,
                   shown_label: np.ndarray | None) -> PerQuery:
    """:func:`per_query_dcg`, computed (read-only arrays without ``shown_label``)."""
    unit_label, _ = j.combined(combine)
    label = unit_label[j.shown_unit] if shown_label is None else shown_label
    pos = j.shown_position
    in_k = pos <= k
    w = np.where(in_k, gains(label, gain) * discounts(pos, "log2"), 0.0)
    n = j.n_groups
    dcg = np.bincount(j.shown_group, weights=w, minlength=n)
    shown = np.bincount(j.shown_group, weights=in_k, minlength=n)
    labeled = np.bincount(j.shown_group, weights=in_k & np.isfinite(label), minlength=n)

    # ideal per (round, query): the round's labeled units sorted by label, top k
    nq = max(len(j.query_ids), 1)
    ok = np.flatnonzero(np.isfinite(unit_label))
    key = j.unit_round[ok].astype(np.int64) * nq + j.unit_query[ok]
    g = gains(unit_label[ok], gain)
    order = np.lexsort((-g, key))
    key, g = key[order], g[order]
    new = np.ones(len(key), dtype=bool)
    new[1:] = key[1:] != key[:-1]
    run = np.cumsum(new) - 1
    starts = np.flatnonzero(new)
    rank = np.arange(len(key)) - starts[run] + 1 if len(key) else np.zeros(0, dtype=np.int64)
    wi = np.where(rank <= k, g * discounts(rank, "log2"), 0.0)
    idcg_run = np.bincount(run, weights=wi, minlength=len(starts))
    run_key = key[starts]
    gkey = j.group_round.astype(np.int64) * nq + j.group_query
    hit = np.minimum(np.searchsorted(run_key, gkey), max(len(run_key) - 1, 0))
    found = (run_key[hit] == gkey) if len(run_key) else np.zeros(n, dtype=bool)
    idcg = np.where(found, idcg_run[hit] if len(run_key) else 0.0, 0.0)
    fill = 0.0 if idcg_zero == "zero" else np.nan
    ndcg = np.full(n, fill)
    np.divide(dcg, idcg, out=ndcg, where=idcg > 0)
    if shown_label is None:
        for a in (dcg, idcg, ndcg, shown, labeled):
            a.setflags(write=False)
    return PerQuery(dcg, idcg, ndcg, shown, labeled)


def _wmean(x: np.ndarray, w: np.ndarray) -> float:
    ok = ~np.isnan(x)
    if not ok.any():
        return math.nan
    return float(np.dot(x[ok], w[ok]) / w[ok].sum())


_CHUNK = 1 << 21  # random draws per chunk (8 MB of float32): memory stays bounded


def resample_indices(n: int, n_resamples: int, seed: int) -> list[np.ndarray]:
    """The bootstrap draws as chunks of rows of the (n x n_resamples) index matrix."""
    rng = np.random.default_rng(seed)
    dtype = np.float32 if n <= 1 << 20 else np.float64
    rows = max(1, _CHUNK // n_resamples)
    chunks = []
    for start in range(0, n, rows):
        u = rng.random((min(rows, n - start), n_resamples), dtype=dtype)
        idx = (u * dtype(n)).astype(np.int32 if n < 2**31 else np.int64)
        np.minimum(idx, n - 1, out=idx)  # float rounding can reach n
        chunks.append(idx)
    return chunks


def bootstrap_sums(values: np.ndarray, n_resamples: int, seed: int,
                   cache: dict[tuple[int, int, int], list[np.ndarray]] | None = None
                   ) -> np.ndarray:
    """Sums of ``n_resamples`` bootstrap resamples of the rows of ``values`` (n x c).

    Draw ``i`` of resample ``b`` is row ``floor(u[i, b] · n)`` with ``u`` the uniform
    matrix of ``numpy.random.default_rng(seed)`` generated row by row (float32 draws for
    n <= 2^20, float64 beyond), in chunks of rows so that memory stays bounded; each
    column is summed in draw order, chunk by chunk. The resamples depend only on
    (seed, n, n_resamples): groups of the same size share them (the systems of one
    round, for one), and ``cache`` keeps them between calls when they fit in 64 MB.
    Returns ``(n_resamples, c)``.
    """
    n, c = values.shape
    chunks = resample_chunks(n, n_resamples, seed, cache)
    table = np.ascontiguousarray(values, dtype=np.float64)
    return gather_sums(chunks, n_resamples, c,
                        lambda sub, out: np.take(table, sub, axis=0, out=out))


def resample_chunks(n: int, n_resamples: int, seed: int,
            cache: dict[tuple[int, int, int], list[np.ndarray]] | None) -> list[np.ndarray]:
    """:func:`resample_indices`, kept in ``cache`` when they fit in 64 MB."""
    key = (n, n_resamples, seed)
    if cache is not None and key in cache:
        return cache[key]
    chunks = resample_indices(n, n_resamples, seed)
    if cache is not None and n * n_resamples <= 1 << 24:
        cache[key] = chunks
    return chunks


_BLOCK = 1 << 18  # gathered values per block (2 MB): the block stays in the CPU cache


def gather_sums(chunks: list[np.ndarray], n_resamples: int, c: int,
                 gather: Callable[[np.ndarray, np.ndarray], object]) -> np.ndarray:
    """Σ over the draws of each chunk, chunk after chunk: ``(n_resamples, c)``.

    ``gather(sub, out)`` writes the ``c`` values of draws ``sub`` (rows of a chunk,
    ``(m, n_resamples)``) to ``out`` (``(m, n_resamples, c)``). The sums are those of
    ``table[idx].sum(axis=0)`` per chunk and column, added chunk by chunk, to the bit:
    numpy adds the rows of a chunk one after the other (for n_resamples >= 2), and so
    does this, a block of rows at a time with the running sum as the block's first row
    -- the block stays in the CPU cache, and every column of every draw is gathered at
    once. With one resample numpy sums a chunk's column pairwise: so does this.
    """
    sums = np.zeros((n_resamples, c))
    if n_resamples == 1:
        for idx in chunks:
            buf1 = np.empty((len(idx), 1, c))
            gather(idx, buf1)
            for col in range(c):
                sums[:, col] += np.ascontiguousarray(buf1[:, :, col]).sum(axis=0)
        return sums
    m = max(1, min(64, _BLOCK // max(n_resamples * c, 1)))
    buf = np.empty((m + 1, n_resamples, c))
    for idx in chunks:  # a chunk holds draws i..i+r of every resample
        part: np.ndarray | None = None
        for lo in range(0, len(idx), m):  # blocks of draws, summed in draw order
            sub = idx[lo:lo + m]
            if part is None:
                gather(sub, buf[:len(sub)])
                part = buf[:len(sub)].sum(axis=0)
            else:
                buf[0] = part
                gather(sub, buf[1:len(sub) + 1])
                part = buf[:len(sub) + 1].sum(axis=0)
        if part is not None:
            sums += part
    return sums


def bootstrap_means(values: np.ndarray, n_resamples: int, seed: int,
                    cache: dict[tuple[int, int, int], list[np.ndarray]] | None = None
                    ) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of the rows of ``values`` (n x c):
    :func:`bootstrap_sums` divided by n. Returns ``(n_resamples, c)``."""
    return bootstrap_sums(values, n_resamples, seed, cache) / values.shape[0]


def _bootstrap(x: np.ndarray, w: np.ndarray | None, level: float, n_resamples: int,
               seed: int, cache: dict[tuple[int, int, int], list[np.ndarray]] | None = None
               ) -> tuple[float, float, np.ndarray | None]:
    """Percentile interval of the (weighted) mean of ``x``: queries resampled with
    replacement (:func:`bootstrap_means`); the weighted mean of a resample is
    Σ w·x / Σ w over its draws. NaN for fewer than two values. Also the resampled
    sums (:func:`bootstrap_sums` of ``x``, or of ``w·x`` and ``w``; None for fewer than
    two values), which :func:`~ireval_core.labels.noise.noise_trend` reuses."""
    if len(x) < 2:
        return math.nan, math.nan, None
    sums = bootstrap_sums(bootstrap_columns(x, w), n_resamples, seed, cache)
    low, high = _interval(sums, len(x), level)
    return low, high, sums


def bootstrap_columns(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """What the query bootstrap sums: ``x``, or ``w·x`` and ``w``."""
    return x[:, None] if w is None else np.column_stack((w * x, w))


def _interval(sums: np.ndarray, n: int, level: float) -> tuple[float, float]:
    """The percentile interval of the means of :func:`bootstrap_columns`' resampled sums."""
    if sums.shape[1] == 1:
        theta = (sums / n)[:, 0]
    else:
        both = sums / n
        theta = both[:, 0] / both[:, 1]
    alpha = (1.0 - level) / 2.0
    low, high = np.quantile(theta, [alpha, 1.0 - alpha])
    return float(low), float(high)


def _bootstrap_groups(x: np.ndarray, w: np.ndarray | None, groups: list[np.ndarray],
                      n_resamples: int, seed: int) -> list[np.ndarray | None]:
    """:func:`bootstrap_sums` of :func:`bootstrap_columns` of each group of rows (None for fewer
    than two rows). Groups of the same size draw the same resamples: their columns are
    summed side by side in one pass over the draws, each to the bit what it is alone."""
    out: list[np.ndarray | None] = [None] * len(groups)
    by_size: dict[int, list[int]] = {}
    for i, rows in enumerate(groups):
        if len(rows) >= 2:
            by_size.setdefault(len(rows), []).append(i)
    for members in by_size.values():
        cols = [bootstrap_columns(x[groups[i]], None if w is None else w[groups[i]])
                for i in members]
        sums = bootstrap_sums(np.hstack(cols), n_resamples, seed)
        c = cols[0].shape[1]
        for at, i in enumerate(members):
            out[i] = np.ascontiguousarray(sums[:, at * c:(at + 1) * c])
    return out


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class Trend:
    """DCG@k per round and system (see the module docstring).

    Attributes
    ----------
    table:
        One row per (round, system[, segment]): :data:`TABLE_COLUMNS`. ``dcg`` and
        ``ndcg`` are weighted by the query weight when the input has weights
        (``averaging`` says which); ``dcg_unweighted`` is always the plain mean;
        ``coverage`` = ``labeled / shown`` (positions <= k, pooled over queries).
    per_query:
        One row per (round, system, query): ``round, system, query, segment,
        weight, dcg, idcg, ndcg, shown, labeled``.
    grades:
        The shown top-k positions per (round, system) by combined label (rounded
        to the nearest grade, halves up) and ``unlabeled``: ``round, system, grade,
        name, count, share``.
    changes:
        Month over month per system (and segment): :data:`CHANGE_COLUMNS`.
    definition:
        What ``dcg``, ``ndcg``, the interval and the test are, in words.
    n_resamples, seed:
        The query bootstrap of the bands.
    query_sums:
        Per (round, system) of two queries or more (``by=None`` only): the query
        bootstrap's resampled sums, shape (n_resamples, 1) Σ DCG, or (n_resamples, 2)
        Σ w·DCG and Σ w with weights; the band is their mean's percentile interval.
        :func:`~ireval_core.labels.noise.noise_trend` reuses them (``trend_result``)
        instead of resampling the queries again.
    """

    table: pd.DataFrame
    per_query: pd.DataFrame
    grades: pd.DataFrame
    changes: pd.DataFrame
    definition: str
    k: int
    gain: str
    combine: str
    by: str | None
    options: EvalOptions = field(default_factory=EvalOptions)
    n_resamples: int = 2000
    seed: int = 0
    query_sums: dict[tuple[str, str], np.ndarray] = field(default_factory=dict, repr=False)
    ndcg_definition: str = ""
    """What ``ndcg`` and ``coverage`` are, in words (the part of :attr:`definition` that
    a page showing another band and test beside them, the rater-noise trend's, keeps)."""

    def notes(self) -> list[str]:
        """The sentences of the significant drops (empty when there is none)."""
        return [str(s) for s in self.changes.loc[self.changes["drop"], "sentence"]]


def trend(j: Judgments, *, k: int = 10, gain: Gain = "linear", combine: Combine = "mean",
          by: Literal["segment"] | None = None, confidence_level: float = 0.95,
          n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05,
          pairing: Literal["auto", "paired", "unpaired"] = "auto",
          options: EvalOptions | None = None) -> Trend:
    """Mean DCG@k per round and system, with bands, nDCG, coverage, grades and changes.

    Parameters
    ----------
    j:
        The labeled result lists.
    k:
        Cutoff: shown positions 1..k count.
    gain:
        ``"linear"`` (gain = label, the seed's formula) or ``"exp"`` (2^label − 1).
    combine:
        How several raters' labels become one (:data:`COMBINE_RULES`).
    by:
        ``"segment"``: one row per (round, system, segment) instead.
    confidence_level, n_resamples, seed:
        The bootstrap percentile interval of each mean (queries resampled).
    alpha:
        Level of the month-over-month test; a change is a ``drop`` when it is
        negative and p < alpha.
    pairing:
        ``"auto"``: paired t over the shared queries when they are at least half of
        each round's queries (and >= 2), else Welch's t over all; or force one.
    options:
        :class:`~ireval_core.options.EvalOptions`; its ``idcg_zero`` decides nDCG of
        a query without any labeled gain (0 and kept, or left out). Depth, judged-only
        and the query set do not apply: the lists are what users were shown.

    Returns
    -------
    Trend
    """
    fn = "trend"
    k = check(k, "k", fn, POSITIVE_INT)
    check(gain, "gain", fn, GAIN)
    check_combine(combine, fn)
    check(by, "by", fn, BY)
    level = check(confidence_level, "confidence_level", fn, OPEN_UNIT)
    n_resamples = check(n_resamples, "n_resamples", fn, POSITIVE_INT)
    seed = check(seed, "seed", fn, SEED)
    alpha = check(alpha, "alpha", fn, OPEN_UNIT)
    check(pairing, "pairing", fn, PAIRING)
    opts = options_or_default(options, fn)

    pq = per_query_dcg(j, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero)
    weighted = j.has_weight
    averaging = ("weighted by the query weight" if weighted else "mean over queries")
    table, query_sums = _trend_table(j, pq, by, level, n_resamples, seed)
    per_query = _per_query_table(j, pq)

    changes = compare_rounds(per_query, by=by, alpha=alpha, confidence_level=level,
                             pairing=pairing, k=k, weighted=weighted)
    ndcg = (f"nDCG@{k} = DCG@{k} / the DCG@{k} of the round's labeled documents of the "
            "query sorted by label "
            f"({'0 when that is 0' if opts.idcg_zero == 'zero' else 'left out when 0'}). "
            f"Coverage = labeled / shown positions <= {k}.")
    definition = (f"{dcg_definition(k, gain, combine)}. nDCG@{k} = DCG@{k} / the DCG@{k} of "
                  "the round's labeled documents of the query sorted by label "
                  f"({'0 when that is 0' if opts.idcg_zero == 'zero' else 'left out when 0'}). "
                  f"Averages: {averaging} per round and system; the band is a "
                  f"{level:.0%} bootstrap percentile interval over queries ({n_resamples} "
                  f"resamples, seed {seed}). Coverage = labeled / shown positions <= {k}. "
                  "Month over month: paired t over the queries both rounds share when they are "
                  "at least half of each round, else Welch's t over all queries, on the "
                  + (f"weighted means of the per-query DCG@{k} (the means shown; a shared "
                     "query paired with the mean of its two rounds' weights; variances by "
                     "linearization)" if weighted else f"per-query DCG@{k}")
                  + f"; a drop is negative with p < {alpha:g}."
                  + (f" Labels: {j.conflict_note}." if j.conflict_note else ""))
    return Trend(table, per_query, _grades(j, k, combine), changes, definition, k, gain,
                 combine, by, opts, n_resamples, seed, query_sums, ndcg)


def _trend_table(j: Judgments, pq: PerQuery, by: Literal["segment"] | None, level: float,
                 n_resamples: int, seed: int
                 ) -> tuple[pd.DataFrame, dict[tuple[str, str], np.ndarray]]:
    """The trend's table, one row per (round, system[, segment]): queries, mean DCG
    (weighted when the files have weights) with its bootstrap band, nDCG, coverage; and
    each (round, system)'s resampled query sums (``by=None`` only), kept for reuse."""
    weighted = j.has_weight
    w = j.group_weight
    seg = j.group_segment if by == "segment" else np.zeros(j.n_groups, dtype=np.int32)
    names = ["round", "system"] + (["segment"] if by else [])
    codes = pd.DataFrame({"r": j.group_round, "s": j.group_system, "g": seg})
    key = codes.groupby(["r", "s", "g"], sort=True).ngroup().to_numpy()
    n_keys = int(key.max()) + 1 if len(key) else 0

    # vectorised aggregates per key
    cnt = np.bincount(key, minlength=n_keys)
    shown = np.bincount(key, weights=pq.shown, minlength=n_keys)
    labeled = np.bincount(key, weights=pq.labeled, minlength=n_keys)
    sw = np.bincount(key, weights=w, minlength=n_keys)
    dcg_w = np.bincount(key, weights=w * pq.dcg, minlength=n_keys) / np.maximum(sw, 1e-300)
    dcg_u = np.bincount(key, weights=pq.dcg, minlength=n_keys) / np.maximum(cnt, 1)
    nd_ok = ~np.isnan(pq.ndcg)
    nd_w = np.where(nd_ok, w, 0.0)
    ndcg = (np.bincount(key, weights=np.where(nd_ok, pq.ndcg, 0.0) * nd_w, minlength=n_keys)
            / np.bincount(key, weights=nd_w, minlength=n_keys).clip(1e-300))
    ndcg = np.where(np.bincount(key, weights=nd_ok, minlength=n_keys) > 0, ndcg, np.nan)

    order = np.argsort(key, kind="stable")
    bounds = np.concatenate(([0], np.cumsum(cnt)))
    first = order[bounds[:-1]]
    low = np.full(n_keys, np.nan)
    high = np.full(n_keys, np.nan)
    label_of = []
    query_sums: dict[tuple[str, str], np.ndarray] = {}
    # one bootstrap per (round, system[, segment]) group, groups of one size together
    rows_of = [order[bounds[i]:bounds[i + 1]] for i in range(n_keys)]
    all_sums = _bootstrap_groups(pq.dcg, w if weighted else None, rows_of, n_resamples, seed)
    for i in range(n_keys):
        f = first[i]
        parts = [str(j.round_names[j.group_round[f]]), str(j.system_names[j.group_system[f]])]
        if by:
            parts.append(str(j.segment_names[j.group_segment[f]]))
        label_of.append(parts)
        sums = all_sums[i]
        if sums is None:
            continue
        low[i], high[i] = _interval(sums, len(rows_of[i]), level)
        if not by:
            sums.setflags(write=False)
            query_sums[(parts[0], parts[1])] = sums
    head = pd.DataFrame(label_of, columns=names) if n_keys else pd.DataFrame(columns=names)
    averaging = ("weighted by the query weight" if weighted else "mean over queries")
    table = head.assign(
        queries=cnt.astype(np.int64), dcg=dcg_w if weighted else dcg_u, dcg_ci_low=low,
        dcg_ci_high=high, dcg_unweighted=dcg_u, ndcg=ndcg,
        coverage=np.where(shown > 0, labeled / np.maximum(shown, 1), np.nan),
        shown=shown.astype(np.int64), labeled=labeled.astype(np.int64), averaging=averaging)
    return table, query_sums


def _per_query_table(j: Judgments, pq: PerQuery) -> pd.DataFrame:
    """One row per (round, system, query): segment, weight, DCG, IDCG, nDCG, shown and
    labeled positions."""
    w = j.group_weight
    return pd.DataFrame({
        "round": text_column(j.round_names, j.group_round),
        "system": text_column(j.system_names, j.group_system),
        "query": text_column(j.query_ids, j.group_query),
        "segment": text_column(j.segment_names, j.group_segment),
        "weight": np.asarray(w), "dcg": pq.dcg, "idcg": pq.idcg, "ndcg": pq.ndcg,
        "shown": pq.shown.astype(np.int64), "labeled": pq.labeled.astype(np.int64)})


def _whole_levels(grade: np.ndarray) -> np.ndarray:
    """``numpy.unique`` of whole numbers: by counting when their range is small."""
    if not len(grade):
        return np.unique(grade)
    low, high = float(grade.min()), float(grade.max())
    if high - low > 1 << 16 or not np.array_equal(grade, np.trunc(grade)):
        return np.unique(grade)
    seen = np.flatnonzero(np.bincount((grade - low).astype(np.int64)))
    return low + seen.astype(np.float64)


def _grades(j: Judgments, k: int, combine: Combine) -> pd.DataFrame:
    """Shown positions <= k per (round, system) and rounded combined label; every grade
    seen anywhere is listed for every (round, system), with 0 where absent."""
    label, _ = j.combined(combine)
    lab = label[j.shown_unit]
    in_k = j.shown_position <= k
    grade = np.where(np.isfinite(lab), np.floor(lab + 0.5), np.nan)[in_k]
    levels = _whole_levels(grade[np.isfinite(grade)])
    slot = np.where(np.isfinite(grade), np.searchsorted(levels, grade), len(levels))
    n_slots = len(levels) + 1
    # the (round, system) pairs present, in code order (round, then system)
    n_s = max(len(j.system_names), 1)
    pair = j.shown_round[in_k].astype(np.int64) * n_s + j.shown_system[in_k]
    present = np.flatnonzero(np.bincount(pair, minlength=len(j.round_names) * n_s))
    lookup = np.zeros(len(j.round_names) * n_s, dtype=np.int64)
    lookup[present] = np.arange(len(present))
    rs = lookup[pair]
    n_rs = len(present)
    counts = np.bincount(rs * n_slots + slot, minlength=n_rs * n_slots).reshape(n_rs, n_slots)
    names = j.label_map.grade_names()
    grade_text = [f"{g:g}" for g in levels] + ["unlabeled"]
    grade_name = [names.get(float(g), f"{g:g}") for g in levels] + ["unlabeled"]
    total = counts.sum(axis=1, keepdims=True)
    return pd.DataFrame({
        "round": np.repeat(j.round_names[present // n_s].astype(str), n_slots),
        "system": np.repeat(j.system_names[present % n_s].astype(str), n_slots),
        "grade": np.tile(np.asarray(grade_text, dtype=object), n_rs),
        "name": np.tile(np.asarray(grade_name, dtype=object), n_rs),
        "count": counts.ravel().astype(np.int64),
        "share": (counts / np.maximum(total, 1)).ravel()})


# ----------------------------------------------------------------------------- month over month




def _test(x0: np.ndarray, x1: np.ndarray, q0: np.ndarray, q1: np.ndarray, pairing: str,
          level: float, w0: np.ndarray | None = None, w1: np.ndarray | None = None
          ) -> dict[str, object]:
    """Compare two rounds' per-query values (x1 − x0): paired over shared queries or Welch.

    With query weights ``w0``/``w1`` (a design's 1/π, or GAUC's scored counts) the test is
    on the weighted means the trend shows (:func:`_weighted_t`); without, Student's
    paired t or Welch's t of scipy on the plain means."""
    shared, i0, i1 = np.intersect1d(q0, q1, assume_unique=True, return_indices=True)
    n0, n1, ns = len(x0), len(x1), len(shared)
    paired = (pairing == "paired" or (pairing == "auto" and ns >= 2
                                      and 2 * ns >= max(n0, n1)))
    weighted = w0 is not None and w1 is not None
    tag = ", weighted" if weighted else ""
    out: dict[str, object] = {"shared": ns, "test": "none", "test_delta": math.nan,
                              "ci_low": math.nan, "ci_high": math.nan, "p": math.nan}
    if paired and ns >= 2:
        a, b = x0[i0], x1[i1]
        d = b - a
        u = (w0[i0] + w1[i1]) / 2 if weighted else None  # type: ignore[index]
        out["test"] = f"paired t over {ns} shared queries{tag}"
        out["test_delta"] = _wmean(d, u) if u is not None else float(np.mean(d))
        if _constant(d):  # no spread to test against (floating noise is none)
            out["test"] = (f"paired t over {ns} shared queries{tag}: not run, every shared "
                           f"query changed by the same {float(np.mean(d)):+.4g}, so there is "
                           "no spread to test the change against")
        elif u is not None:
            out.update(_weighted_t([(d, u)], level))
        else:
            res = paired_t_test(a, b)
            ci = res.confidence_interval(level)
            out.update(p=float(res.pvalue), ci_low=float(ci.low), ci_high=float(ci.high))
        return out
    if pairing != "paired" and n0 >= 2 and n1 >= 2:
        out["test"] = f"Welch t{tag}"
        out["test_delta"] = (_wmean(x1, w1) - _wmean(x0, w0) if weighted  # type: ignore[arg-type]
                             else float(np.mean(x1) - np.mean(x0)))
        if _constant(x0) and _constant(x1):  # scipy: "Precision loss", a meaningless p
            out["test"] = (f"Welch t{tag}: not run, every query has the same value within "
                           "each round, so there is no spread to test the change against")
        elif weighted:
            out.update(_weighted_t([(x1, w1), (x0, w0)], level))  # type: ignore[list-item]
        else:
            res = _sps.ttest_ind(x1, x0, equal_var=False)
            ci = res.confidence_interval(level)
            out.update(p=float(res.pvalue), ci_low=float(ci.low), ci_high=float(ci.high))
    return out


def _mean_variance(x: np.ndarray, w: np.ndarray) -> float:
    """The variance of the weighted mean Σwx / Σw of a sample of ``n`` queries, by
    linearization (the with-replacement estimator of a ratio mean):
    n/(n−1) · Σ (w_i (x_i − m) / Σw)². With equal weights it is s²/n, Student's."""
    n = len(x)
    z = w * (x - _wmean(x, w)) / w.sum()
    return float(n / (n - 1) * np.sum(z * z))


def _weighted_t(samples: list[tuple[np.ndarray, np.ndarray]], level: float
                ) -> dict[str, float]:
    """A t-test of weighted means: one sample (a paired difference: H0 mean 0, n − 1
    degrees of freedom) or two (first minus second: Welch–Satterthwaite degrees of
    freedom from the two variances). Variances by :func:`_mean_variance`; with equal
    weights the numbers are Student's paired t and Welch's t."""
    means = [_wmean(x, w) for x, w in samples]
    variances = [_mean_variance(x, w) for x, w in samples]
    estimate = means[0] - (means[1] if len(means) == 2 else 0.0)
    var = sum(variances)
    if len(samples) == 1:
        df = float(len(samples[0][0]) - 1)
    else:
        df = var ** 2 / sum(v ** 2 / (len(x) - 1)
                            for v, (x, _) in zip(variances, samples, strict=True))
    se = math.sqrt(var)
    t = estimate / se
    half = float(_sps.t.ppf((1 + level) / 2, df)) * se
    return {"p": float(2 * _sps.t.sf(abs(t), df)), "ci_low": estimate - half,
            "ci_high": estimate + half}


def _constant(values: np.ndarray) -> bool:
    """Whether ``values`` are all one number up to floating-point noise (a spread of at
    most 1e-12 of their size): a t-test of them is degenerate (scipy warns of precision
    loss and returns a p-value of noise)."""
    if not len(values):
        return True
    scale = max(1.0, float(np.max(np.abs(values))))
    return float(np.ptp(values)) <= 1e-12 * scale


def compare_rounds(per_query: pd.DataFrame, *, value: str = "dcg", by: str | None = None,
                   alpha: float = 0.05, confidence_level: float = 0.95,
                   pairing: str = "auto", k: int = 10, weighted: bool = False,
                   measure: str | None = None) -> pd.DataFrame:
    """Change between consecutive rounds of each system (and segment), with a test.

    ``per_query`` has ``round, system, query, weight`` (and ``segment``) and the
    ``value`` column; NaN values are left out. ``mean_from``/``mean_to`` are the
    round means of ``measure`` (default ``DCG@k``; weighted when ``weighted``) and
    ``delta`` their difference; the test (``test_delta``, its interval and p) is paired
    t over shared queries (see :func:`trend`'s ``pairing``) or Welch's t, on the same
    means: when ``weighted``, the weighted means (a shared query paired with the mean of
    its two rounds' weights, the variance of a weighted mean by linearization, Welch's
    t's degrees of freedom from those), so the test and the means shown never disagree
    in sign. Returns :data:`CHANGE_COLUMNS`.
    """
    measure = measure or f"DCG@{k}"
    keys = ["system"] + (["segment"] if by else [])
    rows: list[dict[str, object]] = []
    data = per_query[~per_query[value].isna()]
    for key_values, part in data.groupby(keys, sort=True):  # systems (and segments)
        key_values = key_values if isinstance(key_values, tuple) else (key_values,)
        rounds = ordered_rounds(part["round"].unique())
        by_round = {r: g for r, g in part.groupby("round", sort=True)}
        for r0, r1 in zip(rounds[:-1], rounds[1:], strict=True):
            g0, g1 = by_round[r0], by_round[r1]
            x0, x1 = g0[value].to_numpy(float), g1[value].to_numpy(float)
            w0 = g0["weight"].to_numpy(float) if weighted else np.ones(len(x0))
            w1 = g1["weight"].to_numpy(float) if weighted else np.ones(len(x1))
            m0, m1 = _wmean(x0, w0), _wmean(x1, w1)
            res = _test(x0, x1, g0["query"].to_numpy(str), g1["query"].to_numpy(str),
                        pairing, confidence_level, *((w0, w1) if weighted else ()))
            p = float(res["p"])  # type: ignore[arg-type]
            significant = bool(np.isfinite(p) and p < alpha)
            tdelta = float(res["test_delta"])  # type: ignore[arg-type]
            drop = significant and tdelta < 0
            delta = m1 - m0
            rel = delta / m0 if m0 else math.nan
            who = ", ".join(str(v) for v in key_values)
            verb = "fell" if delta < 0 else "rose" if delta > 0 else "stayed"
            verdict = ("a significant drop" if drop else "a significant rise" if significant
                       else "within noise" if np.isfinite(p) else "no test possible")
            rel_text = f", {rel:+.1%}" if np.isfinite(rel) else ""
            test = str(res["test"])
            if test == "none":  # said in words, not as "p undefined"
                how = (f"too few queries to test ({len(x0)} and {len(x1)}; a test needs at "
                       "least 2 in each round)")
            elif ": not run, " in test:
                how = test
            else:
                how = (f"{test} ({len(x0)} and {len(x1)} queries)"
                       if test.startswith("Welch t") else test) + f", {p_text(p)}"
            sentence = (f"{who}, {r0} → {r1}: {measure} {verb} from {m0:.3f} to {m1:.3f} "
                        f"({delta:+.3f}{rel_text}); {how}: {verdict}.")
            rows.append(dict(zip(keys, key_values, strict=True)) | {
                "measure": measure, "round_from": r0, "round_to": r1, "mean_from": m0,
                "mean_to": m1, "delta": delta,
                "relative": rel, "test": test, "queries_from": len(x0), "queries_to": len(x1),
                "shared": res["shared"], "test_delta": tdelta, "ci_low": res["ci_low"],
                "ci_high": res["ci_high"], "p": p, "significant": significant, "drop": drop,
                "sentence": sentence})
    columns = list(CHANGE_COLUMNS)
    if by:
        columns.insert(1, "segment")
    if not rows:
        return pd.DataFrame(columns=columns).astype({"drop": bool, "significant": bool})
    return pd.DataFrame(rows)[columns]
