"""Offline vs online: the ranker's AUC, GAUC and PNR from model scores beside DCG@K.

Offline, a ranker is judged by how well its scores order labeled documents: AUC,
GAUC and PNR. Online, users see a list; DCG@K of that list judges the whole chain,
recall included. Seed 003's point: the pairwise and pointwise numbers can stay high
while DCG falls, because they only judge what was retrieved -- when recall breaks
(the good documents never reach the list) or the head positions go wrong.

Per round and system, over the labeled shown results that carry a model score
(relevant = combined label >= the relevance level of
:class:`~ireval_core.options.EvalOptions`, default 1):

* ``auc``: pooled AUC, every (relevant, non-relevant) pair of the round and system,
  score ties counting ½ (``sklearn.metrics.roc_auc_score`` on those results);
* ``gauc``: per-query AUC averaged over the queries having both classes, weighted
  by their labeled scored results (``GAUC(weight=impressions)``);
* ``pnr``: Σ concordant / Σ discordant pairs of results with different labels
  (equal scores excluded), as the ``PNR`` measure.

The kernels are those of :mod:`ireval_core.measures.pairwise`, run once over every
(round, system, query) list at once. :func:`offline_online` adds, per system and
pair of consecutive rounds, a sentence when DCG and the score-based numbers disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..data import Ranked
from ..errors import invalid_parameter
from ..measures import parse_measure
from ..measures.pairwise import auc, auc_counts, pnr_counts
from ..options import EvalOptions, options_or_default
from ..params import OPEN_UNIT, POSITIVE_INT, check
from .judgments import Combine, Judgments, check_combine, text_column
from .trend import GAIN, Gain, Trend, compare_rounds, p_text, trend

__all__ = ["ONLINE_COLUMNS", "OfflineOnline", "offline_online", "score_metrics"]

ONLINE_COLUMNS = ("round", "system", "queries", "dcg", "dcg_ci_low", "dcg_ci_high", "ndcg",
                  "scored", "auc", "gauc", "gauc_queries", "pnr")
"""Columns of :attr:`OfflineOnline.table`."""


def _by_score(j: Judgments, rows: np.ndarray) -> np.ndarray:
    """``rows``' positions by score descending (ties in numpy's quicksort order): the
    order within every group of :func:`_ranked`, sorted once for all of its calls."""
    return np.argsort(-j.shown_score[rows])


def _stable_order(codes: np.ndarray) -> np.ndarray:
    """A stable argsort of non-negative int32 codes: radix sorts of their two 16-bit
    halves (numpy sorts 16-bit integers by radix), low half first."""
    codes = np.asarray(codes, dtype=np.int64)
    order = np.argsort((codes & 0xFFFF).astype(np.uint16), kind="stable")
    if len(codes) and int(codes.max()) > 0xFFFF:
        order = order[np.argsort((codes[order] >> 16).astype(np.uint16), kind="stable")]
    return order


def _ranked(j: Judgments, rows: np.ndarray, group: np.ndarray, n: int, label: np.ndarray,
            by_score: np.ndarray) -> Ranked:
    """A :class:`Ranked` whose "queries" are ``group`` ids, entries by score descending.

    ``by_score``: :func:`_by_score` of ``rows``. The entries are sorted by (group, place
    in ``by_score``): a stable sort of the groups of the score order. The order within
    tied scores does not matter to AUC and PNR, which count ties by value."""
    score = j.shown_score[rows]
    order = by_score[_stable_order(group[by_score])]
    g = group[order].astype(np.int64)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=n), out=offsets[1:])
    pos = (np.arange(len(g)) - offsets[g] + 1).astype(np.int32)
    grade = label[rows][order]
    top = float(np.nanmax(grade)) if len(grade) else 0.0
    return Ranked(np.arange(n).astype(object), offsets, g.astype(np.int32), pos, grade,
                  score[order], np.zeros(n + 1, dtype=np.int64), np.zeros(0), np.ones(n, bool),
                  max(top, 0.0))


_SHORT = 32  # longest list counted pair by pair
_CELLS = 1 << 21  # pairs compared per block of lists


def _pnr_counts(r: Ranked, options: EvalOptions) -> tuple[np.ndarray, np.ndarray]:
    """Concordant and discordant pairs per list, as the ``PNR`` measure counts them
    (:func:`~ireval_core.measures.pairwise.pnr_counts`: judged results, different
    labels, equal scores neither).

    The lists here are the shown top results: at most a few dozen each. Up to
    ``_SHORT`` results a list's pairs are compared all at once, lists side by side (the
    same whole counts); longer lists go to the measure's kernel, which loops over the
    label levels.
    """
    n = r.n_queries
    keep = np.flatnonzero(r.grade >= 0)  # judged, as the measure's _judged_rows
    q, g, s = r.qidx[keep], r.grade[keep], r.score[keep]
    counts = np.bincount(q, minlength=n)
    longest = int(counts.max()) if len(counts) else 0
    if longest > _SHORT:
        return pnr_counts(r, parse_measure("PNR"), options)
    first = np.concatenate(([0], np.cumsum(counts)[:-1]))
    col = np.arange(len(q)) - first[q]
    grade = np.full((n, longest), -np.inf)  # padding: lower than any label, no score
    score = np.full((n, longest), np.nan)
    grade[q, col], score[q, col] = g, s
    conc, disc = np.zeros(n), np.zeros(n)
    step = max(1, _CELLS // max(longest * longest, 1))
    for lo in range(0, n, step):  # blocks of lists bound memory
        gb, sb = grade[lo:lo + step], score[lo:lo + step]
        higher = gb[:, :, None] > gb[:, None, :]  # result a has the higher label than b
        conc[lo:lo + step] = (higher & (sb[:, :, None] > sb[:, None, :])).sum(axis=(1, 2))
        disc[lo:lo + step] = (higher & (sb[:, :, None] < sb[:, None, :])).sum(axis=(1, 2))
    return conc, disc


def score_metrics(j: Judgments, *, combine: Combine = "mean",
                  options: EvalOptions | None = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """AUC, GAUC and PNR per (round, system), and AUC per (round, system, query).

    Returns ``(table, per_query)``: ``table`` has ``round, system, scored, auc, gauc,
    gauc_queries, pnr`` (NaN without model scores); ``per_query`` has ``round, system,
    query, scored, auc`` for every query list (AUC NaN when a class is missing).
    """
    fn = "score_metrics"
    check_combine(combine, fn)
    opts = options_or_default(options, fn)
    label, _ = j.combined(combine)
    shown_label = label[j.shown_unit]
    rows = np.flatnonzero(np.isfinite(j.shown_score) & np.isfinite(shown_label))
    n = j.n_groups
    lab = np.where(np.isfinite(shown_label), shown_label, np.nan)

    # per query list: AUC and PNR counts, through the measures' own kernels
    by_score = _by_score(j, rows)
    r_q = _ranked(j, rows, j.shown_group[rows], n, lab, by_score)
    per_auc = auc(r_q, parse_measure("AUC"), opts)
    conc, disc = _pnr_counts(r_q, opts)
    scored_q = np.bincount(j.shown_group[rows], minlength=n)

    # per (round, system): pooled AUC, GAUC by impressions, PNR as Σ/Σ
    rs_codes = pd.DataFrame({"r": j.group_round, "s": j.group_system})
    rs = rs_codes.groupby(["r", "s"], sort=True).ngroup().to_numpy()
    n_rs = int(rs.max()) + 1 if len(rs) else 0
    r_p = _ranked(j, rows, rs[j.shown_group[rows]], n_rs, lab, by_score)
    positive = r_p.grade >= opts.rel_level
    twice_u, n_pos, n_neg = auc_counts(r_p.qidx, r_p.score, positive, n_rs)
    pooled = np.full(n_rs, np.nan)
    np.divide(twice_u, 2.0 * n_pos * n_neg, out=pooled, where=n_pos * n_neg > 0)
    ok = ~np.isnan(per_auc)
    w = np.where(ok, scored_q, 0.0)
    wsum = np.bincount(rs, weights=w, minlength=n_rs)
    gauc = np.full(n_rs, np.nan)
    np.divide(np.bincount(rs, weights=np.where(ok, per_auc, 0.0) * w, minlength=n_rs), wsum,
              out=gauc, where=wsum > 0)
    c_rs = np.bincount(rs, weights=conc, minlength=n_rs)
    d_rs = np.bincount(rs, weights=disc, minlength=n_rs)
    pnr = np.full(n_rs, np.nan)
    np.divide(c_rs, d_rs, out=pnr, where=d_rs > 0)
    pnr[(d_rs == 0) & (c_rs > 0)] = np.inf

    first = np.zeros(n_rs, dtype=np.int64)
    order = np.argsort(rs, kind="stable")
    first[:] = order[np.concatenate(([0], np.cumsum(np.bincount(rs, minlength=n_rs))[:-1]))]
    table = pd.DataFrame({
        "round": j.round_names[j.group_round[first]].astype(str),
        "system": j.system_names[j.group_system[first]].astype(str),
        "scored": np.bincount(rs, weights=scored_q, minlength=n_rs).astype(np.int64),
        "auc": pooled, "gauc": gauc,
        "gauc_queries": np.bincount(rs, weights=ok, minlength=n_rs).astype(np.int64),
        "pnr": pnr})
    per_query = pd.DataFrame({
        "round": text_column(j.round_names, j.group_round),
        "system": text_column(j.system_names, j.group_system),
        "query": text_column(j.query_ids, j.group_query),
        "weight": np.asarray(j.group_weight), "scored": scored_q.astype(np.int64),
        "auc": per_auc})
    return table, per_query


@dataclass(frozen=True, eq=False)
class OfflineOnline:
    """DCG@k beside AUC, GAUC and PNR per round and system (module docstring).

    Attributes
    ----------
    table:
        :data:`ONLINE_COLUMNS`, one row per (round, system).
    per_query:
        ``round, system, query, weight, scored, auc`` per query list.
    changes:
        Month over month per system: the DCG change (from the trend) and the GAUC
        change (the same test on per-query AUC), side by side.
    notes:
        One sentence per (system, consecutive rounds) where DCG and the score-based
        numbers disagree.
    definition:
        What each column is.
    """

    table: pd.DataFrame
    per_query: pd.DataFrame
    changes: pd.DataFrame
    notes: tuple[str, ...]
    definition: str


def _fmt(x: float, digits: int = 3) -> str:
    if not np.isfinite(x):
        return "inf" if x == np.inf else "n/a"
    return f"{x:.{digits}f}"


MIN_GAUC_QUERIES = 5
"""Fewer queries with both classes in a round than this: GAUC is shown, but no sentence
rests on its change (a GAUC over one query is that query's AUC)."""


def _p_words(p: float, test: str) -> str:
    """A p-value for a sentence; an undefined one says why (the test's own words)."""
    if np.isfinite(p):
        return p_text(p)
    if ": not run, " in test:
        return "not tested: " + test.split(": not run, ", 1)[1]
    return "not tested: fewer than two queries with both classes in a round"


def offline_online(j: Judgments, *, k: int = 10, gain: Gain = "linear",
                   combine: Combine = "mean", alpha: float = 0.05,
                   options: EvalOptions | None = None, trend_result: Trend | None = None,
                   n_resamples: int = 2000, seed: int = 0) -> OfflineOnline:
    """DCG@k and the model-score metrics per round and system, and where they disagree.

    A note is written for a system and two consecutive rounds when

    * DCG@k drops significantly (the trend's test) while GAUC does not (the same
      test on per-query AUC: no significant fall): the list lost good results the
      ranker never saw -- look at recall or the head positions; when GAUC rests on
      fewer than :data:`MIN_GAUC_QUERIES` queries in either round, the note says that
      this cannot be told instead; or
    * GAUC falls significantly while DCG@k does not change significantly: the ranker
      orders what it shows worse, without (yet) a measurable effect on what users see.

    ``trend_result`` reuses a :func:`~ireval_core.labels.trend.trend` computed with
    the same ``k``, ``gain``, ``combine`` and options (its bootstrap is the costly
    part); otherwise one is computed with ``n_resamples`` and ``seed``.
    """
    fn = "offline_online"
    k = check(k, "k", fn, POSITIVE_INT)
    check(gain, "gain", fn, GAIN)
    check_combine(combine, fn)
    alpha = check(alpha, "alpha", fn, OPEN_UNIT)
    opts = options_or_default(options, fn)
    if trend_result is None:
        trend_result = trend(j, k=k, gain=gain, combine=combine, alpha=alpha, options=opts,
                             n_resamples=n_resamples, seed=seed)
    elif (trend_result.k, trend_result.gain, trend_result.combine, trend_result.by) != (
            k, gain, combine, None):
        raise invalid_parameter("trend_result", fn, f"a trend with k={k}, gain={gain!r}, "
                                f"combine={combine!r} and by=None", trend_result.definition)
    scores, per_query = score_metrics(j, combine=combine, options=opts)
    base = trend_result.table[["round", "system", "queries", "dcg", "dcg_ci_low",
                               "dcg_ci_high", "ndcg"]]
    table = base.merge(scores, on=["round", "system"], how="left")[list(ONLINE_COLUMNS)]

    # GAUC month over month: the round means weighted by scored results are the GAUC of
    # the table, and the test is on those weighted means
    auc_changes = compare_rounds(per_query.assign(weight=per_query["scored"]), value="auc",
                                 alpha=alpha, weighted=True, measure="GAUC")
    dcg_changes = trend_result.changes
    keys = ["system", "round_from", "round_to"]
    merged = dcg_changes.merge(auc_changes, on=keys, how="left", suffixes=("", "_gauc"))
    lookup = table.set_index(["round", "system"])
    notes: list[str] = []
    for row in merged.itertuples(index=False):
        s, r0, r1 = row.system, row.round_from, row.round_to
        p_g = float(row.p_gauc) if pd.notna(row.p_gauc) else math.nan
        g_drop = bool(row.drop_gauc) if pd.notna(row.drop_gauc) else False
        a0, a1 = lookup.loc[(r0, s)], lookup.loc[(r1, s)]
        scores_text = (f"GAUC {_fmt(a0['gauc'])} → {_fmt(a1['gauc'])}, AUC "
                       f"{_fmt(a0['auc'])} → {_fmt(a1['auc'])}, PNR {_fmt(a0['pnr'], 2)} → "
                       f"{_fmt(a1['pnr'], 2)}")
        if not (np.isfinite(a0["gauc"]) and np.isfinite(a1["gauc"])):
            continue
        few = min(int(a0["gauc_queries"]), int(a1["gauc_queries"]))
        if row.drop and not g_drop and few < MIN_GAUC_QUERIES:
            notes.append(
                f"{s}, {r0} → {r1}: DCG@{k} fell significantly ({row.mean_from:.3f} → "
                f"{row.mean_to:.3f}, {p_text(row.p)}). Whether the model scores order the "
                f"shown results as well as before cannot be told: GAUC rests on "
                f"{int(a0['gauc_queries'])} and {int(a1['gauc_queries'])} "
                "quer{} with both relevant and non-relevant scored results ({}), and a "
                f"comparison needs at least {MIN_GAUC_QUERIES} in each round."
                .format("y" if int(a1["gauc_queries"]) == 1 else "ies", scores_text))
        elif row.drop and not g_drop:
            notes.append(
                f"{s}, {r0} → {r1}: DCG@{k} fell significantly ({row.mean_from:.3f} → "
                f"{row.mean_to:.3f}, {p_text(row.p)}) while the model scores order the shown "
                f"results as well as before ({scores_text}; GAUC change "
                f"{_p_words(p_g, str(row.test_gauc))}). "
                "AUC, GAUC and PNR only judge what was retrieved: suspect recall (good "
                "documents no longer reach the list) or the head positions, not the ranker.")
        elif g_drop and not row.significant:
            notes.append(
                f"{s}, {r0} → {r1}: GAUC fell significantly ({scores_text}; {p_text(p_g)}) "
                f"while DCG@{k} stayed within noise ({row.mean_from:.3f} → "
                f"{row.mean_to:.3f}, {p_text(row.p)}): the ranker orders what it shows "
                "worse, without a measurable effect on what users see yet.")
    changes = merged[keys + ["mean_from", "mean_to", "p", "drop", "mean_from_gauc",
                             "mean_to_gauc", "p_gauc", "drop_gauc"]].rename(columns={
        "mean_from": "dcg_from", "mean_to": "dcg_to", "p": "p_dcg", "drop": "dcg_drop",
        "mean_from_gauc": "gauc_from", "mean_to_gauc": "gauc_to",
        "drop_gauc": "gauc_drop"})
    definition = (
        f"dcg: mean DCG@{k} ({trend_result.table['averaging'].iloc[0] if len(table) else ''})"
        f"; scored: labeled shown results with a model score; relevant: label >= "
        f"{opts.rel_level:g}; auc: pooled over the round's scored results, ties ½; gauc: "
        "per-query AUC averaged over queries having both classes, weighted by scored "
        "results; pnr: Σ concordant / Σ discordant pairs with different labels (equal "
        "scores excluded); month over month, GAUC is tested like DCG, on the per-query AUC "
        "weighted by scored results (the GAUC shown).")
    return OfflineOnline(table, per_query, changes, tuple(notes), definition)
