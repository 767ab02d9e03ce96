"""A monthly DCG@K interval that covers the raters too, and the change it can detect.

The band of :func:`~ireval_core.labels.trend.trend` resamples queries. When several
people label, the month's number also depends on *which* people labeled: a harsher
rater this month moves every query they touched. :func:`noise_trend` gives, per round
and system, a **two-stage bootstrap** interval of the mean DCG@K over queries and raters,
the **minimum detectable change** at the team's alpha and power, and month-over-month
changes whose drop flag uses that interval; with anchor items
(:mod:`~ireval_core.labels.anchors`) a drift of the raters is flagged before the trend
is read. ``docs/semantics.md`` (sections "Rater-noise interval", "Minimum detectable
change", "Anchors and drift") gives the reasoning.

The two-stage bootstrap, resample ``b`` of round ``r`` and system ``s``:

1. **queries**: draw the round's queries with replacement, exactly as the trend's band
   does (:func:`~ireval_core.labels.trend.resample_indices` with the same seed);
2. **raters, as a whole**: draw the round's ``R`` raters with replacement (one draw per
   round and resample, shared by the round's systems, from
   ``numpy.random.default_rng([seed, crc32(round name)])``): rater ``t`` counts
   ``V_t`` times (``V`` ~ Multinomial(R, 1/R)). Each unit's label is the ``combine`` of
   its raters' labels, each repeated ``V_t`` times; a unit all of whose raters were
   drawn 0 times is unlabeled in that resample.

With ``N_q`` the query's DCG@K under the resampled labels, ``L_q`` its labeled discount
mass (Σ 1/log2(p + 1) over labeled shown positions p <= K) under them, ``L°_q`` that
mass as labeled, and ``w_q`` the query weight (1 without weights), the resample's mean is

    θ* = (Σ* w N / Σ* w L) · (Σ* w L° / Σ* w)

(Σ* over the drawn queries, with multiplicity): the labeled results keep their weight
in each query, and a result that lost all its raters is replaced by the round's average
labeled gain per unit of discount -- the ratio form of the product-weight bootstrap for
crossed, sparsely filled designs (Owen 2007; Owen & Eckles 2012). With all ``V_t = 1``,
θ* is the query bootstrap's mean; with one rater in the round, the interval *is* the
trend's band (same draws, same arithmetic).

Everything is vectorised: per round, the labels as a (units x raters) matrix combined
for every distinct rater draw at once (:func:`~.kernels.weighted_combine`; at most
C(2R − 1, R) of them: 35 for four raters), then per (round, system) a gather of the
(queries x draws) index matrix. No Python loop over resamples or queries.

>>> import pandas as pd
>>> from ireval_core.labels import judgments_from_frame
>>> df = pd.DataFrame({"round": "m1", "query": ["q1", "q1", "q2", "q2", "q3", "q3"],
...                    "doc": "d", "position": 1, "rater": ["ann", "bo"] * 3,
...                    "label": [3, 2, 1, 1, 2, 3]})
>>> nt = noise_trend(judgments_from_frame(df), n_resamples=200)
>>> nt.table[["round", "queries", "raters", "dcg"]].values.tolist()
[['m1', 3, 2, 2.0]]
>>> nt.table["covers"].iloc[0]
'query sampling and rater noise (2 raters resampled as a whole)'
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats as _sps

from ..errors import invalid_parameter
from ..formats import p_text
from ..measures.gain import discounts, gains
from ..options import EvalOptions, options_or_default
from ..params import OPEN_UNIT, POSITIVE_INT, SEED, InstanceOf, any_of, check
from .anchors import AnchorDrift
from .judgments import COMBINE_RULES, Combine, Judgments, check_combine
from .kernels import one_blas_thread, percentile_intervals, records, weighted_combine
from .trend import (
    GAIN,
    Gain,
    PerQuery,
    Trend,
    bootstrap_columns,
    bootstrap_sums,
    dcg_definition,
    gather_sums,
    per_query_dcg,
    resample_chunks,
)

__all__ = ["CHANGE_COLUMNS", "TABLE_COLUMNS", "NoiseTrend", "RaterDraws",
           "minimum_detectable_change", "noise_trend", "rater_draws"]

TABLE_COLUMNS = ("round", "system", "queries", "raters", "dcg", "ci_low", "ci_high",
                 "ci_low_queries", "ci_high_queries", "se", "sd_between", "n_eff",
                 "var_queries", "var_raters", "rater_share", "mdc", "covers")
"""Columns of :attr:`NoiseTrend.table`."""

CHANGE_COLUMNS = ("system", "round_from", "round_to", "mean_from", "mean_to", "delta", "se",
                  "ci_low", "ci_high", "p", "significant", "drop", "mdc", "anchor_shift",
                  "anchor_ci_low", "anchor_ci_high", "anchor_drift", "drift_dcg", "sentence")
"""Columns of :attr:`NoiseTrend.changes`."""

_DEFINITIONS = {
    "dcg": "mean DCG@{k} over the round's queries ({averaging}), raters' labels combined "
           "by {combine}",
    "ci_low": "two-stage bootstrap percentile interval ({level:.0%}, {n_resamples} "
              "resamples, seed {seed}): queries and then the round's raters resampled "
              "with replacement, raters as a whole",
    "ci_low_queries": "the same resamples with the raters kept: the query-only band of "
                      "the trend",
    "se": "standard deviation of the two-stage bootstrap means",
    "sd_between": "standard deviation of the per-query DCG@{k} between queries "
                  "(weighted by the query weight when there are weights)",
    "n_eff": "effective number of queries, (Σw)² / Σw² (the number of queries without "
             "weights)",
    "var_queries": "sd_between² / n_eff: the variance of the mean from query sampling "
                   "(it holds the label noise that is independent from query to query)",
    "var_raters": "variance of the mean over the rater draws with the queries fixed: "
                  "what the choice of raters adds (a harsher or more lenient rater "
                  "shifts every query they labeled)",
    "rater_share": "var_raters / (var_queries + var_raters)",
    "mdc": "minimum detectable change at alpha {alpha:g} and power {power:g}: "
           "(z(1 - alpha/2) + z(power)) · √(2 · (var_queries + var_raters)), the smallest "
           "true month-over-month change of the mean a two-sided test detects with that "
           "power when next month has the same design",
    "covers": "which sources of variation the interval covers",
    "delta": "mean_to − mean_from (the published means)",
    "change_ci": "delta ± z · se, se = √(se_from² + se_to²) from the two rounds' two-stage "
                 "bootstraps (independent samples of queries and raters); p two-sided "
                 "normal; a drop is a negative delta with p < {alpha:g}",
    "anchor_drift": "the anchor items' mean label moved between the two rounds by more "
                    "than the threshold, with an interval excluding 0: part of the change "
                    "may be the raters'",
    "drift_dcg": "anchor_shift × the mean labeled discount mass per query of round_to: "
                 "the change of DCG@{k} a uniform label shift of that size gives (linear "
                 "gain only)",
}


def minimum_detectable_change(var_queries: float | np.ndarray, var_raters: float | np.ndarray,
                              *, alpha: float = 0.05, power: float = 0.8
                              ) -> float | np.ndarray:
    """Smallest true change of a monthly mean a two-sided test detects with ``power``.

    MDC = (z(1 − alpha/2) + z(power)) · √(2 (var_queries + var_raters)): the difference
    of two independent months, each with the variance of this one's mean (query
    sampling + the choice of raters); normal approximation.

    >>> round(float(minimum_detectable_change(0.01, 0.0)), 4)
    0.3962
    """
    fn = "minimum_detectable_change"
    alpha = check(alpha, "alpha", fn, OPEN_UNIT)
    power = check(power, "power", fn, OPEN_UNIT)
    z = _sps.norm.ppf(1.0 - alpha / 2.0) + _sps.norm.ppf(power)
    out = z * np.sqrt(2.0 * (np.asarray(var_queries, dtype=np.float64)
                             + np.asarray(var_raters, dtype=np.float64)))
    return float(out) if np.ndim(out) == 0 else out


# ----------------------------------------------------------------------------- the draws


@dataclass(frozen=True, eq=False)
class RaterDraws:
    """The rater stage of one round: who could be drawn and what was drawn.

    ``raters`` (names, sorted), ``picks`` ``(n_resamples, R)`` the raters drawn (codes
    into ``raters``), ``counts`` ``(n_resamples, R)`` how often each was drawn (both in
    the smallest integer type that holds R), ``outcomes`` the distinct rows of
    ``counts`` (int64) and ``outcome`` the row of each resample in ``outcomes`` (the
    smallest of int8, int16, int32 that holds them).
    """

    raters: tuple[str, ...]
    picks: np.ndarray
    counts: np.ndarray
    outcomes: np.ndarray
    outcome: np.ndarray


def rater_draws(round_name: str, raters: Sequence[str], n_resamples: int, seed: int
                ) -> RaterDraws:
    """The rater draws of a round: ``default_rng([seed, crc32(round name)])``, ``R``
    integers in ``[0, R)`` per resample. They depend only on the seed, the round's name
    and its raters, so a month keeps its interval when later months are added."""
    names = tuple(sorted(str(r) for r in raters))
    n = len(names)
    rng = np.random.default_rng([seed, zlib.crc32(str(round_name).encode("utf-8"))])
    picks = rng.integers(0, max(n, 1), size=(n_resamples, n))
    # the draws are kept with the trend, per round: in the smallest integers that hold
    # them (a round of 2 raters and 10,000 resamples: 40 kB instead of 400 kB)
    small = np.int8 if n < 2**7 else np.int16 if n < 2**15 else np.int64
    counts = np.zeros((n_resamples, n), dtype=small)
    for t in range(n):  # a loop over raters
        counts[:, t] = (picks == t).sum(axis=1)
    if n and (n + 1) ** n < 2**62:
        # each row as one integer, its first count the most significant digit: the
        # integers sort as the rows do, so their distinct values are np.unique(axis=0)'s
        # rows in its order (a 1-D sort instead of one over rows)
        code = np.zeros(n_resamples, dtype=np.int64)
        for t in range(n):  # a loop over raters
            code = code * (n + 1) + counts[:, t]
        distinct, outcome = np.unique(code, return_inverse=True)
        outcomes = np.empty((len(distinct), n), dtype=np.int64)
        rest = distinct.copy()
        for t in range(n - 1, -1, -1):  # the digits back, last rater first
            outcomes[:, t] = rest % (n + 1)
            rest //= n + 1
    else:
        outcomes, outcome = np.unique(counts, axis=0, return_inverse=True)
    n_out = len(outcomes)
    index = np.int8 if n_out <= 2**7 else np.int16 if n_out <= 2**15 else np.int32
    return RaterDraws(names, picks.astype(small), counts, outcomes.astype(np.int64),
                      np.asarray(outcome).ravel().astype(index))


RaterOnly = np.ndarray | tuple[np.ndarray, np.ndarray]
"""The rater-only resamples of a (round, system): an array, or (the value under each
distinct rater outcome, the outcome of each resample) -- that array gathered."""

# ----------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class NoiseTrend:
    """Mean DCG@k per round and system with a rater-noise interval and the MDC.

    Attributes
    ----------
    table:
        One row per (round, system): :data:`TABLE_COLUMNS`. ``dcg`` is the trend's
        mean (the same number); ``ci_low``/``ci_high`` the two-stage interval;
        ``ci_low_queries``/``ci_high_queries`` the query-only one from the same draws
        (the trend's band); ``raters`` the people resampled; ``covers`` says what the
        interval covers.
    changes:
        Month over month per system: :data:`CHANGE_COLUMNS`; the ``drop`` flag uses the
        two-stage interval; the ``anchor_*`` columns are filled when anchors were given.
    anchors:
        The anchor check (:class:`~ireval_core.labels.anchors.AnchorDrift`) or None.
    definitions:
        Column name -> what it means.
    raters:
        The raters whose labels make the numbers; ``excluded`` those left out (model
        judges).
    """

    table: pd.DataFrame
    changes: pd.DataFrame
    anchors: AnchorDrift | None
    definitions: dict[str, str]
    k: int
    gain: str
    combine: str
    confidence_level: float
    alpha: float
    power: float
    n_resamples: int
    seed: int
    raters: tuple[str, ...]
    excluded: tuple[str, ...]
    # (two-stage, query-only, rater-only) resamples of each (round, system); one array
    # serves twice when they are the same, a constant is a broadcast scalar (no memory),
    # and the rater-only ones are kept as (value per rater outcome, the round's outcome of
    # each resample): a few values and an index the round's systems share
    _resamples: dict[tuple[str, str], tuple[np.ndarray, np.ndarray | None, RaterOnly]] = (
        field(repr=False))
    _draws: dict[str, RaterDraws] = field(repr=False)

    def resamples(self, round: str, system: str, stage: str = "both") -> np.ndarray:
        """The bootstrap means of a (round, system): ``stage="both"`` (the two-stage
        θ*), ``"queries"`` (raters kept) or ``"raters"`` (queries kept)."""
        key = (str(round), str(system))
        if key not in self._resamples:
            raise invalid_parameter("round", "NoiseTrend.resamples",
                                    "a (round, system) of the table", key)
        i = {"both": 0, "queries": 1, "raters": 2}.get(stage)
        if i is None:
            raise invalid_parameter("stage", "NoiseTrend.resamples",
                                    "one of 'both', 'queries', 'raters'", stage)
        value = self._stages(key)[i]
        if value is None:
            raise invalid_parameter("stage", "NoiseTrend.resamples", "'both' (this trend "
                                    "keeps only the two-stage resamples)", stage)
        return value.copy()

    def _stages(self, key: tuple[str, str]
                ) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
        """The three resample arrays of a (round, system) as kept (not copies: read
        only); the rater-only one gathered from its outcomes."""
        theta, queries, by_rater = self._resamples[key]
        if isinstance(by_rater, tuple):
            values, outcome = by_rater
            by_rater = values[outcome]
        return theta, queries, by_rater

    def resamples_view(self, round: str, system: str) -> np.ndarray:
        """:meth:`resamples` ``(round, system)`` (two-stage) as kept, read only: no copy."""
        key = (str(round), str(system))
        if key not in self._resamples:
            raise invalid_parameter("round", "NoiseTrend.resamples_view",
                                    "a (round, system) of the table", key)
        view = self._resamples[key][0].view()
        view.flags.writeable = False
        return view

    def two_stage_only(self) -> NoiseTrend:
        """The same trend keeping only the two-stage resamples of every (round, system):
        the query-only ones let go (a third of the memory; the judge report reads no
        other), ``resamples(stage="queries")`` then refused."""
        kept: dict[tuple[str, str], tuple[np.ndarray, np.ndarray | None, RaterOnly]] = {
            key: (theta, None, by_rater)
            for key, (theta, _, by_rater) in self._resamples.items()}
        return replace(self, _resamples=kept)

    def draws(self, round: str) -> RaterDraws:
        """The rater stage of a round (see :func:`rater_draws`)."""
        if str(round) not in self._draws:
            raise invalid_parameter("round", "NoiseTrend.draws", "a round of the table", round)
        return self._draws[str(round)]

    def notes(self) -> list[str]:
        """Anchor drift first (read the trend with care), then the significant drops."""
        out = []
        if self.anchors is not None:
            out += self.anchors.notes()
        out += [str(s) for s in self.changes.loc[self.changes["drop"].astype(bool),
                                                 "sentence"]]
        return out

    def to_dict(self) -> dict[str, Any]:
        """Everything as JSON-ready data."""
        return {
            "k": self.k, "gain": self.gain, "combine": self.combine,
            "confidence_level": self.confidence_level, "alpha": self.alpha,
            "power": self.power, "n_resamples": self.n_resamples, "seed": self.seed,
            "raters": list(self.raters), "excluded": list(self.excluded),
            "table": records(self.table), "changes": records(self.changes),
            "anchors": None if self.anchors is None else self.anchors.to_dict(),
            "definitions": dict(self.definitions), "notes": self.notes()}


# ----------------------------------------------------------------------------- computing


def _by_code(codes: np.ndarray, n: int) -> Callable[[int], np.ndarray]:
    """``rows(c)``: the rows of code ``c`` (``0..n-1``), ascending, as
    ``flatnonzero(codes == c)``: a range when the codes are sorted (as read), else from
    one stable sort."""
    if len(codes) < 2 or bool((codes[1:] >= codes[:-1]).all()):
        bounds = np.searchsorted(codes, np.arange(n + 1))
        return lambda c: np.arange(bounds[c], bounds[c + 1])
    order = np.argsort(codes, kind="stable")
    parts = np.split(order, np.cumsum(np.bincount(codes, minlength=n))[:-1])
    return lambda c: parts[c]


def _label_rows(j: Judgments) -> Callable[[int], np.ndarray]:
    """``rows(r)``: the labels (rows of ``label_*``) of round code r, in label order."""
    n_rounds = len(j.round_names)
    unit = j.label_unit
    if (len(unit) < 2 or bool((unit[1:] >= unit[:-1]).all())) and (
            len(j.unit_round) < 2 or bool((j.unit_round[1:] >= j.unit_round[:-1]).all())):
        # as read: labels sorted by unit, units by round
        bounds = np.searchsorted(unit, np.searchsorted(j.unit_round, np.arange(n_rounds + 1)))
        return lambda r: np.arange(bounds[r], bounds[r + 1])
    return _by_code(j.unit_round[unit], n_rounds)


def _round_raters(j: Judgments, label_rows: Callable[[int], np.ndarray]) -> list[np.ndarray]:
    """Per round code: the codes of the raters who labeled in it, sorted by name."""
    out = []
    for r in range(len(j.round_names)):  # a loop over rounds
        rows = label_rows(r)
        given = j.label_rater[rows][np.isfinite(j.label_value[rows])]
        codes = np.flatnonzero(np.bincount(given, minlength=len(j.rater_names)))
        out.append(codes[np.argsort(j.rater_names[codes].astype(str), kind="stable")])
    return out


def _round_matrix(j: Judgments, rows: np.ndarray, codes: np.ndarray, u0: int, n_units: int,
                  buffer: np.ndarray) -> np.ndarray:
    """A round's units x raters labels (NaN = not labeled), in ``buffer``'s memory: unit
    ``u0 + i`` is row i, column t the round's t-th rater (``codes``, sorted by name);
    ``rows``: the round's labels."""
    y = buffer[:n_units * len(codes)].reshape(n_units, len(codes))
    y.fill(np.nan)
    col = np.full(max(len(j.rater_names), 1), -1, dtype=np.int64)
    col[codes] = np.arange(len(codes))
    rows = rows[np.isfinite(j.label_value[rows])]
    at = col[j.label_rater[rows]]
    rows, at = rows[at >= 0], at[at >= 0]
    y[j.label_unit[rows] - u0, at] = j.label_value[rows]
    return y


def _outcome_sums(j: Judgments, groups: np.ndarray, shown: np.ndarray, u0: int,
                  y: np.ndarray, draws: RaterDraws, gain: str, combine: str
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Per group of a round (``groups``: its rows of ``group_*``) and rater outcome: the
    DCG@k (``N``) and the labeled discount mass (``L``) under the outcome's weights.
    ``shown``: the round's shown results at positions <= k; ``y``: its units x raters
    labels from unit ``u0`` on. Sums run in position order within a group."""
    g_local = j.shown_group[shown] - (int(groups[0]) if len(groups) else 0)
    disc = discounts(j.shown_position[shown], "log2")
    unit_local = j.shown_unit[shown] - int(u0)
    n_out = len(draws.outcomes)
    big_n = np.zeros((len(groups), n_out))
    big_l = np.zeros((len(groups), n_out))
    step = max(1, (1 << 22) // max(len(y), 1))
    for lo in range(0, n_out, step):  # chunks of outcomes bound memory
        label = weighted_combine(y, draws.outcomes[lo:lo + step], combine)[unit_local]
        width = label.shape[1]
        # one bincount for every outcome of the chunk: bin (group, outcome) adds its
        # shown results in position order, as a bincount per outcome does
        cell = (g_local.astype(np.int64)[:, None] * width + np.arange(width)).ravel()
        cells = len(groups) * width
        big_n[:, lo:lo + width] = np.bincount(
            cell, weights=(gains(label, gain) * disc[:, None]).ravel(),
            minlength=cells).reshape(len(groups), width)
        big_l[:, lo:lo + width] = np.bincount(
            cell, weights=(np.isfinite(label) * disc[:, None]).ravel(),
            minlength=cells).reshape(len(groups), width)
    return big_n, big_l


def _query_columns(dcg: np.ndarray, w: np.ndarray | None, mass: np.ndarray,
                   reuse: bool) -> np.ndarray:
    """What the query stage of a group sums: Σ dcg and Σ mass, or Σ w·dcg, Σ w and
    Σ w·mass; only the mass with ``reuse`` (the trend's sums hold the rest)."""
    if w is None:
        return mass[:, None] if reuse else np.column_stack((dcg, mass))
    return (w * mass)[:, None] if reuse else np.column_stack((w * dcg, w, w * mass))


_SUM_CELLS = 1 << 21  # (resamples x columns) sums of one pass of the query stage (16 MB)


class _QuerySums:
    """:func:`~.trend.bootstrap_sums` of each group's columns (None: nothing to sum),
    handed out once each with :meth:`take`.

    Groups of one size draw the same queries: their columns are summed side by side in
    one pass over the draws, each to the bit what it is alone, about 2^21 sums a pass.
    A pass is summed when its first group is taken and let go with its last, so that
    memory holds a pass or so (resamples x columns), not every group's sums.
    """

    def __init__(self, columns: list[np.ndarray | None], n_resamples: int, seed: int,
                 cache: dict[tuple[int, int, int], list[np.ndarray]]) -> None:
        self.columns, self.n_resamples, self.seed, self.cache = (columns, n_resamples, seed,
                                                                 cache)
        by_size: dict[int, list[int]] = {}
        for i, c in enumerate(columns):
            if c is not None:
                by_size.setdefault(len(c), []).append(i)
        most = max(1, _SUM_CELLS // max(n_resamples, 1))  # columns summed in one pass
        self.batches: list[list[int]] = []
        self.batch_of: dict[int, tuple[int, int]] = {}  # group: (its pass, first column)
        for members in by_size.values():
            self.batches.append([])
            width = 0
            for i in members:  # groups in order, in passes of at most `most` columns
                w = columns[i].shape[1]  # type: ignore[union-attr]
                if self.batches[-1] and width + w > most:
                    self.batches.append([])
                    width = 0
                self.batches[-1].append(i)
                self.batch_of[i] = (len(self.batches) - 1, width)
                width += w
        self.open: dict[int, list[Any]] = {}  # pass: [its sums, groups not taken yet]

    def take(self, i: int) -> np.ndarray | None:
        """The sums of group ``i`` (once)."""
        if i not in self.batch_of:
            return None
        b, at = self.batch_of.pop(i)
        if b not in self.open:
            batch = self.batches[b]
            sums = bootstrap_sums(np.hstack([self.columns[g] for g in batch]),  # type: ignore[misc]
                                  self.n_resamples, self.seed, self.cache)
            self.open[b] = [sums, len(batch)]
        held = self.open[b]
        w = self.columns[i].shape[1]  # type: ignore[union-attr]
        out = held[0][:, at:at + w]
        held[1] -= 1
        if not held[1]:
            del self.open[b]  # the pass's array lives on only in its groups' slices
        return out


def _two_stage(dcg: np.ndarray, w: np.ndarray | None, big_n: np.ndarray, big_l: np.ndarray,
               mass: np.ndarray, outcome: np.ndarray, n_resamples: int, seed: int,
               cache: dict[tuple[int, int, int], list[np.ndarray]],
               query_sums: np.ndarray | None, mass_sums: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(two-stage θ*, query-only θ*, rater-only θ) of one (round, system) group.

    ``mass_sums``: :class:`_QuerySums` of the group's :func:`_query_columns`;
    ``query_sums``: the trend's resampled sums of the same group (``Trend.query_sums``:
    Σ dcg, or Σ w·dcg and Σ w), the same draws, or None (then ``mass_sums`` hold them).
    """
    n = len(dcg)
    chunks = resample_chunks(n, n_resamples, seed, cache)
    ww = np.ones(n) if w is None else w
    n_out = big_n.shape[1]
    wn = (ww[:, None] * big_n).ravel()
    # every unit keeps a rater under every outcome (each unit labeled by all the round's
    # raters, say): the labeled mass does not move, and its sums are those of ``mass``
    fixed = bool((big_l == mass[:, None]).all())
    table = wn[:, None] if fixed else np.column_stack((wn, (ww[:, None] * big_l).ravel()))
    base = outcome.astype(np.int64)

    def gather(sub: np.ndarray, out: np.ndarray) -> None:  # draw i of resample b: row
        flat = sub.astype(np.int64) * n_out  # i's values under b's outcome
        flat += base
        np.take(table, flat, axis=0, out=out)

    both_sums = gather_sums(chunks, n_resamples, table.shape[1], gather)
    sn = both_sums[:, 0]
    # the query stage and the labeled mass from the same draws; the resampled weight
    # sums (sw) are the query stage's own second column
    # (bootstrap_sums sums each column on its own: a column taken from the trend's sums
    # is the same to the bit as the same column summed here)
    raw = mass_sums if query_sums is None else np.column_stack((query_sums, mass_sums))
    if w is None:
        queries = raw[:, 0] / n
        sa = raw[:, 1]
        sw: float | np.ndarray = float(n)
    else:
        both = raw[:, :2] / n
        queries = both[:, 0] / both[:, 1]
        sa = raw[:, 2]
        sw = raw[:, 1]
    sl = sa if fixed else both_sums[:, 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = sn / sl * (sa / sw)
    theta = np.where(sa == 0, 0.0, theta)  # nothing labeled in the drawn queries: DCG 0
    # queries fixed: the rater stage alone
    tot_a, tot_w = float(ww @ mass), float(ww.sum())
    per_out_n, per_out_l = ww @ big_n, ww @ big_l
    with np.errstate(divide="ignore", invalid="ignore"):
        by_outcome = per_out_n / per_out_l * (tot_a / tot_w)
    by_outcome = np.where(tot_a == 0, 0.0, by_outcome)
    return theta, queries, by_outcome[outcome]


@one_blas_thread
def noise_trend(j: Judgments, *, k: int = 10, gain: Gain = "linear", combine: Combine = "mean",
                exclude: Sequence[str] = (), confidence_level: float = 0.95,
                n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05,
                power: float = 0.8, anchors: AnchorDrift | None = None,
                options: EvalOptions | None = None, trend_result: Trend | None = None
                ) -> NoiseTrend:
    """Mean DCG@k per round and system with the two-stage interval, MDC and changes.

    Parameters
    ----------
    j:
        The labeled result lists.
    k, gain, combine:
        As in :func:`~ireval_core.labels.trend.trend` (same means).
    exclude:
        Raters left out of every number (model judges: :mod:`.judge`).
    confidence_level, n_resamples, seed:
        The bootstrap (see the module docstring for the draws).
    alpha, power:
        The team's test level and power: the MDC, and a change is a ``drop`` when it is
        negative with p < alpha.
    anchors:
        The anchor check (:func:`~ireval_core.labels.anchors.anchor_drift`): each change
        says whether the anchors drifted between its two rounds.
    options:
        :class:`~ireval_core.options.EvalOptions` (only ``idcg_zero`` matters, for nDCG,
        which is not shown here).
    trend_result:
        The :func:`~ireval_core.labels.trend.trend` of the same judgments with the same
        ``k``, ``gain``, ``combine``, ``n_resamples`` and ``seed`` (``by=None``): its
        query bootstrap (:attr:`Trend.query_sums
        <ireval_core.labels.trend.Trend.query_sums>`) is reused, not drawn again; the
        same numbers to the bit. Not used with ``exclude`` (the trend counts every
        rater).

    Returns
    -------
    NoiseTrend
    """
    fn = "noise_trend"
    check(j, "j", fn, InstanceOf(Judgments, "Judgments (from read_judgments)"))
    k = check(k, "k", fn, POSITIVE_INT)
    check(gain, "gain", fn, GAIN)
    check_combine(combine, fn)
    level = check(confidence_level, "confidence_level", fn, OPEN_UNIT)
    n_resamples = check(n_resamples, "n_resamples", fn, POSITIVE_INT)
    seed = check(seed, "seed", fn, SEED)
    alpha = check(alpha, "alpha", fn, OPEN_UNIT)
    power = check(power, "power", fn, OPEN_UNIT)
    check(anchors, "anchors", fn, any_of(None, InstanceOf(AnchorDrift, "AnchorDrift (from "
                                                                       "anchor_drift)")))
    opts = options_or_default(options, fn)
    _check_trend_result(trend_result, k, gain, combine, n_resamples, seed, fn)
    exclude, people = _people(j, exclude, fn)
    jp = j.select(raters=people) if exclude else j
    reuse = {} if exclude or trend_result is None else trend_result.query_sums
    pq = per_query_dcg(jp, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero)
    weighted = jp.has_weight
    w_all = np.asarray(jp.group_weight, dtype=np.float64)
    # labeled discount mass of each query list, as labeled
    label, _ = jp.combined(combine)
    in_k = jp.shown_position <= k
    mass_all = np.bincount(jp.shown_group, weights=np.where(
        in_k & np.isfinite(label[jp.shown_unit]), discounts(jp.shown_position, "log2"), 0.0),
        minlength=jp.n_groups)

    cache: dict[tuple[int, int, int], list[np.ndarray]] = {}
    z_mdc = _sps.norm.ppf(1.0 - alpha / 2.0) + _sps.norm.ppf(power)
    jobs, columns, draws_of = _groups_to_resample(jp, pq, w_all, mass_all, reuse, k, gain,
                                                  combine, n_resamples, seed)
    # the query stage of every group, groups of one size side by side
    summed = _QuerySums(columns, n_resamples, seed, cache)
    rows, resamples, bands = _group_rows(jobs, summed, pq, w_all, mass_all, weighted,
                                         n_resamples, seed, cache, z_mdc)
    intervals = percentile_intervals(bands, level)
    for row, (low, high), (qlow, qhigh) in zip(rows, intervals[::2], intervals[1::2],
                                               strict=True):
        row.update(ci_low=low, ci_high=high, ci_low_queries=qlow, ci_high_queries=qhigh)
    table = pd.DataFrame(rows, columns=[*TABLE_COLUMNS, "_mass"])
    changes = _changes(table, level, alpha, z_mdc, anchors, gain, k)
    table = table.drop(columns="_mass")
    averaging = "weighted by the query weight" if weighted else "mean over queries"
    definitions = {name: text.format(k=k, averaging=averaging, combine=COMBINE_RULES[combine],
                                     level=level, n_resamples=n_resamples, seed=seed,
                                     alpha=alpha, power=power)
                   for name, text in _DEFINITIONS.items()}
    definitions["dcg_definition"] = dcg_definition(k, gain, combine)
    if j.conflict_note:  # how the labels were read is part of every number's definition
        for name in ("dcg", "dcg_definition"):
            definitions[name] += f"; {j.conflict_note}"
    return NoiseTrend(table, changes, anchors, definitions, k, gain, combine, level, alpha,
                      power, n_resamples, seed, tuple(people), exclude, resamples, draws_of)


def _check_trend_result(trend_result: Trend | None, k: int, gain: Gain, combine: Combine,
                        n_resamples: int, seed: int, fn: str) -> None:
    """A trend to reuse is one with these settings (``by=None``)."""
    check(trend_result, "trend_result", fn, any_of(None, InstanceOf(Trend, "Trend (from trend)")))
    if trend_result is not None and (
            trend_result.k, trend_result.gain, trend_result.combine, trend_result.by,
            trend_result.n_resamples, trend_result.seed) != (
            k, gain, combine, None, n_resamples, seed):
        raise invalid_parameter("trend_result", fn, f"a trend with k={k}, gain={gain!r}, "
                                f"combine={combine!r}, by=None, n_resamples={n_resamples} "
                                f"and seed={seed}", trend_result.definition)


def _people(j: Judgments, exclude: Sequence[str] | str, fn: str
            ) -> tuple[tuple[str, ...], list[str]]:
    """The raters left out (checked: raters of the data, not all of them) and the others."""
    if isinstance(exclude, str):
        exclude = (exclude,)
    exclude = tuple(str(x) for x in exclude)
    known = set(map(str, j.rater_names))
    unknown = [x for x in exclude if x not in known]
    if unknown:
        raise invalid_parameter("exclude", fn, "raters of the data (" + ", ".join(
            repr(str(r)) for r in j.rater_names) + ")", list(exclude))
    people = [r for r in j.raters if r not in exclude]
    if exclude and not people:
        raise invalid_parameter("exclude", fn, "some of the raters, not all of them",
                                list(exclude))
    return exclude, people


def _groups_to_resample(jp: Judgments, pq: PerQuery, w_all: np.ndarray, mass_all: np.ndarray,
                        reuse: dict[tuple[str, str], np.ndarray], k: int, gain: Gain,
                        combine: Combine, n_resamples: int, seed: int
                        ) -> tuple[list[tuple[Any, ...]], list[np.ndarray | None],
                                   dict[str, RaterDraws]]:
    """One job per (round, system): its query lists, the round's raters and their draws,
    the rater stage's outcome sums, the trend's query sums when reused; and the columns
    the query stage resamples (None: nothing to resample here). Returns the jobs, the
    columns and each round's rater draws."""
    weighted = jp.has_weight
    draws_of: dict[str, RaterDraws] = {}
    # what every round needs, from one pass over each table: its groups, its shown
    # results <= k, its units, its raters (sorted by name) and their labels
    n_rounds = len(jp.round_names)
    label_rows = _label_rows(jp)
    raters_of = _round_raters(jp, label_rows)
    groups_of = _by_code(jp.group_round, n_rounds)
    shown_of = _by_code(jp.shown_round, n_rounds)
    units_of = _by_code(jp.unit_round, n_rounds)
    n_units = np.bincount(jp.unit_round, minlength=n_rounds)
    buffer = np.empty(max((int(u) * len(c) for u, c in zip(n_units, raters_of, strict=True)),
                          default=0))  # one round's label matrix at a time
    jobs: list[tuple[Any, ...]] = []
    columns: list[np.ndarray | None] = []
    for r in np.unique(jp.group_round):  # a loop over rounds
        rname = str(jp.round_names[r])
        codes = raters_of[r]
        draws = rater_draws(rname, [str(x) for x in jp.rater_names[codes]], n_resamples, seed)
        draws_of[rname] = draws
        groups = groups_of(r)
        big_n = big_l = None
        if len(codes) >= 2:
            shown = shown_of(r)
            shown = shown[jp.shown_position[shown] <= k]
            units = units_of(r)
            u0 = int(units[0]) if len(units) else 0
            y = _round_matrix(jp, label_rows(r), codes, u0, len(units), buffer)
            big_n, big_l = _outcome_sums(jp, groups, shown, u0, y, draws, gain, combine)
        for s in np.unique(jp.group_system[groups]):  # a loop over the round's systems
            local = np.flatnonzero(jp.group_system[groups] == s)
            g = groups[local]
            x, wq = pq.dcg[g], w_all[g]
            sname = str(jp.system_names[s])
            sums = reuse.get((rname, sname))
            if sums is not None and sums.shape != (n_resamples, 2 if weighted else 1):
                sums = None  # not this group's: resample here
            wx = wq if weighted else None
            columns.append(None if len(g) < 2 else _query_columns(
                x, wx, mass_all[g], sums is not None) if len(codes) >= 2 else
                bootstrap_columns(x, wx) if sums is None else None)
            jobs.append((rname, sname, g, local, codes, draws, big_n, big_l, sums))
    return jobs, columns, draws_of


def _group_rows(jobs: list[tuple[Any, ...]], summed: _QuerySums, pq: PerQuery, w_all: np.ndarray,
                mass_all: np.ndarray, weighted: bool, n_resamples: int, seed: int,
                cache: dict[tuple[int, int, int], list[np.ndarray]], z_mdc: float
                ) -> tuple[list[dict[str, Any]],
                           dict[tuple[str, str],
                                tuple[np.ndarray, np.ndarray | None, RaterOnly]],
                           list[np.ndarray]]:
    """Per job: the two-stage resampled means (or the query bootstrap with one rater),
    the table's row (intervals left to fill) and the two bands whose intervals fill it."""
    rows: list[dict[str, Any]] = []
    resamples: dict[tuple[str, str], tuple[np.ndarray, np.ndarray | None, RaterOnly]] = {}
    bands: list[np.ndarray] = []  # theta and queries of each row, in turn
    for at, (rname, sname, g, local, codes, draws, big_n, big_l, sums) in enumerate(jobs):
        # a pass is summed when its first group comes, freed once its last is used
        raw = summed.take(at)
        x, wq = pq.dcg[g], w_all[g]
        n = len(g)
        if n >= 2 and len(codes) >= 2 and raw is not None:
            theta, queries, by_rater = _two_stage(
                x, wq if weighted else None, big_n[local], big_l[local], mass_all[g],
                draws.outcome, n_resamples, seed, cache, sums, raw)
        elif n >= 2 and (sums is not None or raw is not None):
            # one rater: the query bootstrap, exactly the trend's band
            mean_sums = np.asarray(sums if sums is not None else raw) / n
            queries = mean_sums[:, 0] / mean_sums[:, 1] if weighted else mean_sums[:, 0]
            theta = queries
            by_rater = np.broadcast_to(np.float64(_wmean(x, wq)), (n_resamples,))
        else:
            theta = queries = by_rater = np.broadcast_to(np.float64(np.nan), (n_resamples,))
        mean = _trend_mean(x, wq, weighted)
        sd, n_eff = _weighted_sd(x, wq if weighted else np.ones(n))
        var_q = sd ** 2 / n_eff if n_eff > 0 else math.nan
        var_r = float(np.var(by_rater, ddof=1)) if len(codes) >= 2 and n >= 2 else 0.0
        kept: RaterOnly = by_rater
        if by_rater.strides != (0,) and len(draws.outcome) == len(by_rater):
            # by_rater is a value per rater outcome, gathered: keep the few values
            values = np.zeros(len(draws.outcomes))
            values[draws.outcome] = by_rater
            if np.array_equal(values[draws.outcome], by_rater, equal_nan=True):
                kept = (values, draws.outcome)
        resamples[(rname, sname)] = (theta, queries, kept)
        bands += [theta, queries]  # their intervals: all at once below
        total = var_q + var_r
        rows.append({
            "round": rname, "system": sname, "queries": n, "raters": len(codes),
            "dcg": mean, "ci_low": math.nan, "ci_high": math.nan,
            "ci_low_queries": math.nan, "ci_high_queries": math.nan,
            "se": float(np.nanstd(theta, ddof=1)) if n >= 2 else math.nan,
            "sd_between": sd, "n_eff": n_eff, "var_queries": var_q, "var_raters": var_r,
            "rater_share": var_r / total if total > 0 else math.nan,
            "mdc": float(z_mdc * math.sqrt(2.0 * total)) if n >= 2 else math.nan,
            "covers": _covers(len(codes), n),
            "_mass": float(np.dot(wq, mass_all[g]) / wq.sum()) if weighted
            else float(mass_all[g].mean()) if n else math.nan,
        })
    return rows, resamples, bands


def _covers(n_raters: int, n: int) -> str:
    if n < 2:
        return "nothing (fewer than two queries)"
    if n_raters >= 2:
        return f"query sampling and rater noise ({n_raters} raters resampled as a whole)"
    return "query sampling only (one rater: rater noise cannot be estimated)"


def _wmean(x: np.ndarray, w: np.ndarray) -> float:
    return float(np.dot(x, w) / w.sum()) if len(x) and w.sum() > 0 else math.nan


def _trend_mean(x: np.ndarray, w: np.ndarray, weighted: bool) -> float:
    """The trend's mean, summed as :func:`~ireval_core.labels.trend.trend` sums it (the
    same bits)."""
    zero = np.zeros(len(x), dtype=np.int64)
    if weighted:
        return float(np.bincount(zero, weights=w * x, minlength=1)[0]
                     / max(float(np.bincount(zero, weights=w, minlength=1)[0]), 1e-300))
    return float(np.bincount(zero, weights=x, minlength=1)[0] / max(len(x), 1))


def _weighted_sd(x: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """(sd between queries, effective n): reliability-weighted variance
    Σ w (x − m)² / (Σw − Σw²/Σw) and n_eff = (Σw)² / Σw²."""
    if len(x) < 2:
        return math.nan, float(len(x))
    sw, sw2 = float(w.sum()), float((w * w).sum())
    m = float(np.dot(w, x) / sw)
    denom = sw - sw2 / sw
    var = float(np.dot(w, (x - m) ** 2) / denom) if denom > 0 else math.nan
    return math.sqrt(var), sw * sw / sw2


def _changes(table: pd.DataFrame, level: float, alpha: float, z_mdc: float,
             anchors: AnchorDrift | None, gain: str, k: int) -> pd.DataFrame:
    """Consecutive rounds of each system: delta, its interval from the two rounds'
    two-stage standard errors, the drop flag, and the anchor check."""
    z = _sps.norm.ppf(0.5 + level / 2.0)
    pairs = anchors.pairs.set_index(["round_from", "round_to"]) if anchors is not None else None
    # consecutive rounds of each system from plain lists (rows in time order already),
    # then every p value of the table from one call of the normal tail
    steps = []
    for system, part in table.groupby("system", sort=True):
        rounds, dcg, se_of = part["round"].tolist(), part["dcg"].tolist(), part["se"].tolist()
        mass = part["_mass"].tolist()
        for i in range(1, len(rounds)):
            delta = dcg[i] - dcg[i - 1]
            se = math.sqrt(se_of[i - 1] ** 2 + se_of[i] ** 2)
            ok = math.isfinite(se) and se > 0
            steps.append((system, rounds[i - 1], rounds[i], dcg[i - 1], dcg[i], mass[i],
                          delta, se, ok))
    tails = _sps.norm.sf(np.array([abs(st[6]) / st[7] if st[8] else 0.0 for st in steps],
                                  dtype=np.float64)).tolist() if steps else []
    out = []
    for (system, r_from, r_to, m_from, m_to, mass_to, delta, se, ok), tail in zip(
            steps, tails, strict=True):
        p = float(2.0 * tail) if ok else math.nan
        significant = bool(ok and p < alpha)
        drop = significant and delta < 0
        row = {"system": system, "round_from": r_from, "round_to": r_to,
               "mean_from": m_from, "mean_to": m_to, "delta": delta,
               "se": se, "ci_low": delta - z * se if ok else math.nan,
               "ci_high": delta + z * se if ok else math.nan, "p": p,
               "significant": significant, "drop": drop,
               "mdc": z_mdc * se if ok else math.nan, "anchor_shift": math.nan,
               "anchor_ci_low": math.nan, "anchor_ci_high": math.nan,
               "anchor_drift": False, "drift_dcg": math.nan}
        drift_text = ""
        if pairs is not None and (r_from, r_to) in pairs.index:
            pr = pairs.loc[(r_from, r_to)]
            row.update(anchor_shift=float(pr["shift"]), anchor_ci_low=float(pr["ci_low"]),
                       anchor_ci_high=float(pr["ci_high"]), anchor_drift=bool(pr["drift"]))
            if gain == "linear":
                row["drift_dcg"] = float(pr["shift"]) * mass_to
            if row["anchor_drift"]:
                part_of = (f": about {row['drift_dcg']:+.2f} of DCG@{k} may be the "
                           "raters', not the system's" if gain == "linear" else "")
                drift_text = (f" The anchor items drifted {pr['shift']:+.2f} grade "
                              f"({pr['ci_low']:+.2f} to {pr['ci_high']:+.2f}) between "
                              f"these rounds{part_of}.")
        verb = "fell" if delta < 0 else "rose" if delta > 0 else "stayed"
        verdict = ("a significant drop" if drop else "a significant rise" if significant
                   else "within noise" if ok else "no test possible")
        p_words = p_text(p) if ok else "p undefined"
        row["sentence"] = (
            f"{system}, {r_from} → {r_to}: DCG@{k} {verb} from "
            f"{m_from:.3f} to {m_to:.3f} ({delta:+.3f}"
            + (f", {level:.0%} interval {row['ci_low']:+.3f} to {row['ci_high']:+.3f} "
               "over queries and raters" if ok else "")
            + f"), {p_words}: {verdict}." + drift_text)
        out.append(row)
    frame = pd.DataFrame(out, columns=list(CHANGE_COLUMNS))
    return frame.astype({"significant": bool, "drop": bool, "anchor_drift": bool})
