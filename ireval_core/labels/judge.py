"""Model judges checked against people: agreement, decisions, bias, disagreements.

Any rater of a labeling file can be a model judge (an LLM's labels arriving in the same
layout; nothing runs a model here). :func:`judge_report` sets the judge apart from the
people -- the people's numbers never include it -- and answers, per round:

* **agreement**: the judge's label against the people's consensus (the ``combine`` of
  their labels, rounded to the nearest grade) on the units both labeled: weighted
  Cohen's kappa and Krippendorff's alpha (two coders: judge and consensus) with
  bootstrap intervals over the round's queries, the share of equal labels, and the
  confusion matrix (rows: the judge's label, columns: the people's consensus);
* **decisions**: would the judge's labels give the same month-over-month direction and
  drop flags (:func:`~ireval_core.labels.noise.noise_trend` on each), the same order of
  the (round, system) means (Kendall's tau-b with a bootstrap interval), and -- with
  side-by-side data -- the same GSB verdict (per query, the new system's DCG@K against
  the old one's under the judge's labels, as G/S/B);
* **bias**: the judge − people label difference on each system's shown top K, with an
  interval, and whether it favours a system (its difference minus the other systems',
  with an interval from the same resampled queries);
* **disagreements**: the units where the judge and the people differ by ``min_gap``
  grades or more, as the next batch for people (:meth:`JudgeReport.batch`, written by
  :func:`~ireval_core.labels.planning.export_batch` as CSV or Excel).

Bootstrap intervals resample the round's queries with the trend's draws
(:func:`~ireval_core.labels.kernels.resample_counts`); statistics pooled over rounds
shuffle each round's resamples with its own permutation, so that the rounds are
resampled independently while the systems of a round stay paired.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from ..errors import TooLargeError, invalid_parameter
from ..options import EvalOptions, options_or_default
from ..params import OPEN_UNIT, POSITIVE_INT, SEED, InstanceOf, Interval, Options, any_of, check
from .judgments import COMBINE_RULES, Combine, Judgments, check_combine, text_column
from .kernels import (
    Level,
    Weights,
    alpha_many,
    kappa_many,
    one_blas_thread,
    percentile_interval,
    percentile_intervals,
    records,
    resample_counts,
    snap,
    tau_b_many,
)
from .noise import NoiseTrend, noise_trend
from .trend import GAIN, Gain, per_query_dcg

__all__ = ["AGREEMENT_COLUMNS", "BIAS_COLUMNS", "DECISION_COLUMNS", "DISAGREEMENT_COLUMNS",
           "FAVOURS_COLUMNS", "GSB_COLUMNS", "JUDGE_MAX_WORK", "ORDER_COLUMNS", "TREND_COLUMNS",
           "JudgeReport", "check_judge_work", "judge_report", "judge_work"]

AGREEMENT_COLUMNS = ("round", "units", "kappa", "kappa_ci_low", "kappa_ci_high", "alpha",
                     "alpha_ci_low", "alpha_ci_high", "exact_agreement", "mean_judge",
                     "mean_people", "difference")
"""Columns of :attr:`JudgeReport.agreement`."""
TREND_COLUMNS = ("round", "system", "people_dcg", "people_ci_low", "people_ci_high",
                 "judge_dcg", "judge_ci_low", "judge_ci_high", "difference", "judge_coverage")
"""Columns of :attr:`JudgeReport.trend`."""
DECISION_COLUMNS = ("system", "round_from", "round_to", "people_delta", "judge_delta",
                    "same_direction", "people_drop", "judge_drop", "same_drop",
                    "people_significant", "judge_significant")
"""Columns of :attr:`JudgeReport.decisions`."""
ORDER_COLUMNS = ("scope", "points", "tau", "ci_low", "ci_high", "same_order")
"""Columns of :attr:`JudgeReport.order`."""
GSB_COLUMNS = ("round", "new", "old", "queries", "people_gsb", "people_ci_low",
               "people_ci_high", "people_verdict", "judge_gsb", "judge_ci_low", "judge_ci_high",
               "judge_verdict", "labels_gsb", "labels_verdict", "same_verdict")
"""Columns of :attr:`JudgeReport.gsb`."""
BIAS_COLUMNS = ("round", "system", "results", "judge_mean", "people_mean", "bias", "ci_low",
                "ci_high")
"""Columns of :attr:`JudgeReport.bias` (``round`` is ``"all"`` for the pooled rows)."""
FAVOURS_COLUMNS = ("round", "system", "bias", "others_bias", "difference", "ci_low",
                   "ci_high", "favours")
"""Columns of :attr:`JudgeReport.favours`."""
DISAGREEMENT_COLUMNS = ("round", "query", "doc", "systems", "position", "judge_label",
                        "people_label", "people_labels", "difference")
"""Columns of :attr:`JudgeReport.disagreements`."""

JUDGE_MAX_WORK = 10_000_000
"""The largest bootstrap :func:`judge_report` takes by default: (round, system) points x
resamples. Its memory and time grow with this product (two rater-noise trends keep the
two-stage resample of every point; each round's agreement and bias intervals take every
resample): about 26 bytes and 1.1-1.9 µs of CPU per point and resample with two people
(``benchmarks/README.md``, section "Model judge and the other labeling bootstraps"), so
this limit keeps one report within about 0.26 GB above the process's own (a process of
about 0.5 GB in all in the benchmark)."""

_WEIGHTS = Options((None, "linear", "quadratic"))
_LEVELS = Options(("nominal", "ordinal", "interval"))
_NONNEG = Interval(Real, 0, None, closed="left")
_GAP = Interval(Real, 0, None, closed="neither")

_DEFINITIONS = {
    "people": "the people's consensus of a unit: {combine} of their labels",
    "kappa": "{weights}-weighted Cohen's kappa between the judge's label and the people's "
             "consensus rounded to the nearest grade, over the units both labeled; "
             "interval: bootstrap over the round's queries ({level:.0%}, {n_resamples} "
             "resamples, seed {seed})",
    "alpha": "Krippendorff's alpha ({alpha_level}) of two coders, the judge and the "
             "people's rounded consensus, over the same units and resamples",
    "confusion": "rows: the judge's label; columns: the people's consensus rounded to the "
                 "nearest grade; counts of units both labeled",
    "trend": "mean DCG@{k} of each (round, system) from the people's labels (the judge "
             "left out; interval over queries and raters) and from the judge's labels alone "
             "(interval over queries); judge_coverage: shown positions <= {k} the judge "
             "labeled",
    "decisions": "month over month per system: the direction (sign of the change) and the "
                 "drop flag (negative with p < {alpha:g}, noise_trend's test) under each",
    "order": "Kendall's tau-b between the people's and the judge's means over the "
             "(round, system) points (all rounds, then each round); interval: the same "
             "bootstrap resamples of both, each round's resamples shuffled by its own "
             "permutation",
    "gsb": "per round: the people's side-by-side verdict (the GSB file), the judge's (per "
           "query shown by both systems: G when the new system's DCG@{k} under the judge's "
           "labels exceeds the old one's by more than {tie:g}, B when it is lower by more, "
           "else S) and the same rule on the people's labels; verdict: 'new better' when "
           "the interval of GSB is above 0, 'new worse' below 0, else 'no clear "
           "preference'",
    "bias": "mean of (judge − people's consensus) over the system's shown results at "
            "positions <= {k} both labeled; interval: bootstrap over the queries",
    "favours": "the system's bias minus the mean bias of the other systems, from the same "
               "resampled queries; the judge favours the system when the interval is above "
               "0",
    "disagreements": "units where |judge − people's consensus| >= {gap:g} grade: the next "
                     "batch for people",
}


@dataclass(frozen=True, eq=False)
class JudgeReport:
    """A model judge against the people (see the module docstring for every table).

    Attributes
    ----------
    judge, people:
        The judge's name and the people whose labels make the consensus.
    agreement, trend, decisions, order, gsb, bias, favours, disagreements:
        The tables (``gsb`` is None without side-by-side data).
    summary:
        The findings in sentences.
    definitions:
        What every table means.
    """

    judge: str
    people: tuple[str, ...]
    agreement: pd.DataFrame
    trend: pd.DataFrame
    decisions: pd.DataFrame
    order: pd.DataFrame
    gsb: pd.DataFrame | None
    bias: pd.DataFrame
    favours: pd.DataFrame
    disagreements: pd.DataFrame
    summary: tuple[str, ...]
    definitions: dict[str, str]
    scale: tuple[float, ...]
    k: int
    combine: str
    weights: str | None
    confidence_level: float
    _confusion: dict[str, np.ndarray] = field(repr=False)
    _batch: pd.DataFrame = field(repr=False)

    def confusion(self, round: str) -> pd.DataFrame:
        """Counts of units by the judge's label (rows) and the people's consensus rounded
        to the nearest grade (columns) in a round."""
        if str(round) not in self._confusion:
            raise invalid_parameter("round", "JudgeReport.confusion", "a round of the report",
                                    round)
        names = [f"{v:g}" for v in self.scale]
        return pd.DataFrame(self._confusion[str(round)].copy(),
                            index=pd.Index(names, name=f"judge ({self.judge}) label"),
                            columns=pd.Index(names, name="people's consensus label"))

    def batch(self) -> pd.DataFrame:
        """The disagreements as a labeling file for people: every shown result of those
        units, ``rater`` and ``label`` empty (:data:`~ireval_core.labels.planning.
        BATCH_COLUMNS`)."""
        return self._batch.copy()

    def to_dict(self, *, max_disagreements: int = 100) -> dict[str, Any]:
        """Everything as JSON-ready data (the first ``max_disagreements`` disagreements;
        ``disagreements_total`` says how many there are)."""
        names = [f"{v:g}" for v in self.scale]
        return {
            "judge": self.judge, "people": list(self.people), "k": self.k,
            "combine": self.combine, "weights": self.weights,
            "confidence_level": self.confidence_level, "summary": list(self.summary),
            "agreement": records(self.agreement), "trend": records(self.trend),
            "decisions": records(self.decisions), "order": records(self.order),
            "gsb": None if self.gsb is None else records(self.gsb),
            "bias": records(self.bias), "favours": records(self.favours),
            "confusion": {r: {"rows": f"judge ({self.judge}) label",
                              "columns": "people's consensus label", "labels": names,
                              "counts": c.astype(int).tolist()}
                          for r, c in self._confusion.items()},
            "disagreements_total": len(self.disagreements),
            "disagreements": records(self.disagreements.head(max_disagreements)),
            "definitions": dict(self.definitions)}


def _verdict(low: float, high: float) -> str:
    if not (math.isfinite(low) and math.isfinite(high)):
        return "no data"
    return "new better" if low > 0 else "new worse" if high < 0 else "no clear preference"


def _permutation(round_name: str, n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, zlib.crc32(str(round_name).encode("utf-8")), 1])
    return rng.permutation(n)


def judge_work(j: Judgments, n_resamples: int) -> int:
    """The size of :func:`judge_report`'s bootstrap on ``j``: its (round, system) points
    times ``n_resamples`` (counted from the data's lists, before any computing)."""
    n_sys = max(len(j.system_names), 1)
    points = len(np.unique(j.group_round.astype(np.int64) * n_sys + j.group_system))
    return points * int(n_resamples)


def check_judge_work(j: Judgments, n_resamples: int, max_work: int | None = JUDGE_MAX_WORK,
                     *, limit: str = "JUDGE_MAX_WORK", hint: str = "use fewer resamples, "
                     "or the files of fewer rounds") -> None:
    """Refuse, before any computing, a judge report larger than ``max_work`` (None: no
    limit): :class:`~ireval_core.errors.TooLargeError` saying the points, the resamples,
    the limit (named ``limit``) and what to do (``hint``)."""
    if max_work is None:
        return
    work = judge_work(j, n_resamples)
    if work > max_work:
        points = work // max(int(n_resamples), 1)
        raise TooLargeError(
            f"The model-judge report is too large: {points:,} (round, system) points x "
            f"{int(n_resamples):,} resamples = {work:,}, over the limit of {max_work:,} "
            f"points x resamples ({limit}); {hint}.", limit=limit, size=work,
            maximum=int(max_work))


@one_blas_thread
def judge_report(j: Judgments, judge: str, *, people: Sequence[str] | None = None,
                 k: int = 10, gain: Gain = "linear", combine: Combine = "mean",
                 weights: Weights = "quadratic", level: Level = "ordinal",
                 gsb: Any = None, gsb_systems: tuple[str, str] | None = None,
                 gsb_tie: float = 0.0, min_gap: float = 1.0, confidence_level: float = 0.95,
                 n_resamples: int = 2000, seed: int = 0, alpha: float = 0.05,
                 power: float = 0.8, people_trend: NoiseTrend | None = None,
                 options: EvalOptions | None = None,
                 max_work: int | None = JUDGE_MAX_WORK) -> JudgeReport:
    """Check a model judge's labels against the people's (see the module docstring).

    Parameters
    ----------
    j:
        The labeled result lists, the judge's labels among them (same file or not).
    judge:
        The rater who is a model judge.
    people:
        The raters whose consensus the judge is compared with (default: every other
        rater; leave other judges out here).
    k, gain, combine:
        As in :func:`~ireval_core.labels.trend.trend`; ``combine`` makes the people's
        consensus.
    weights, level:
        Kappa's weights (``None``, ``"linear"``, ``"quadratic"``) and alpha's level of
        measurement (``"nominal"``, ``"ordinal"``, ``"interval"``).
    gsb, gsb_systems, gsb_tie:
        Side-by-side judgments (:func:`~ireval_core.labels.gsb.read_gsb`) and which systems
        they compare, ``(old, new)``; a per-query DCG difference within ``gsb_tie`` is S.
    min_gap:
        A unit is a disagreement when the judge and the consensus differ by this many
        grades or more.
    confidence_level, n_resamples, seed, alpha, power:
        The bootstraps and the month-over-month test (:func:`noise_trend`).
    people_trend:
        The people's :func:`noise_trend` when already computed (same k, gain, combine,
        resamples and seed, the judge excluded), reused.
    max_work:
        The largest (round, system) points x resamples taken (:data:`JUDGE_MAX_WORK`;
        None: no limit): a larger report raises
        :class:`~ireval_core.errors.TooLargeError` before any computing.

    Returns
    -------
    JudgeReport
    """
    fn = "judge_report"
    check(j, "j", fn, InstanceOf(Judgments, "Judgments (from read_judgments)"))
    check(judge, "judge", fn, InstanceOf(str, "a rater's name"))
    raters = j.raters
    if judge not in raters:
        raise invalid_parameter("judge", fn, "one of the raters (" + ", ".join(
            repr(r) for r in raters) + ")", judge)
    k = check(k, "k", fn, POSITIVE_INT)
    check(gain, "gain", fn, GAIN)
    check_combine(combine, fn)
    check(weights, "weights", fn, _WEIGHTS)
    check(level, "level", fn, _LEVELS)
    gsb_tie = check(gsb_tie, "gsb_tie", fn, _NONNEG)
    min_gap = check(min_gap, "min_gap", fn, _GAP)
    conf = check(confidence_level, "confidence_level", fn, OPEN_UNIT)
    n_resamples = check(n_resamples, "n_resamples", fn, POSITIVE_INT)
    seed = check(seed, "seed", fn, SEED)
    alpha = check(alpha, "alpha", fn, OPEN_UNIT)
    power = check(power, "power", fn, OPEN_UNIT)
    check(people_trend, "people_trend", fn, any_of(None, InstanceOf(
        NoiseTrend, "NoiseTrend (from noise_trend)")))
    opts = options_or_default(options, fn)
    check(max_work, "max_work", fn, any_of(None, POSITIVE_INT))
    check_judge_work(j, n_resamples, max_work)
    people = _checked_people(raters, judge, people, fn)
    _check_gsb(j, gsb, gsb_systems, fn)

    others = [r for r in raters if r not in people]
    boot = dict(k=k, gain=gain, combine=combine, confidence_level=conf,
                n_resamples=n_resamples, seed=seed, alpha=alpha, power=power, options=opts)
    pt = people_trend if people_trend is not None else noise_trend(  # the report reads
        j, exclude=others, **boot).two_stage_only()  # its two-stage resamples only
    jt = noise_trend(j, exclude=[r for r in raters if r != judge], **boot)
    jp, jj = j.select(raters=people), j.select(raters=[judge])
    cp, n_people = jp.combined(combine)
    cj, _ = jj.combined("mean")
    finite = np.isfinite(j.label_value)
    scale = np.unique(j.label_value[finite]) if finite.any() else np.zeros(1)
    both = np.isfinite(cp) & np.isfinite(cj)

    agreement_t, bias_t, favours_t, confusion = _agreement_and_bias(
        j, cj, cp, both, scale, k, weights, level, n_resamples, seed, conf)
    trend_t = _trend_table(j, jj, pt, jt, k, gain, opts)
    decisions_t = _decisions_table(pt, jt)

    # ------------------------------------------------------------ order
    order_t = _order(pt, jt, seed, conf)

    # ------------------------------------------------------------ GSB
    gsb_t = None
    if gsb is not None and gsb_systems is not None:
        pair = (str(gsb_systems[0]), str(gsb_systems[1]))
        gsb_t = _gsb_table(gsb, j, jp, jj, pair, k, gain, combine, gsb_tie, conf,
                           opts.idcg_zero)

    # ------------------------------------------------------------ disagreements
    dis_t, batch = _disagreements(j, cj, cp, n_people, both, min_gap)

    definitions = {name: text.format(combine=COMBINE_RULES[combine], weights=weights or "un",
                                     level=conf, n_resamples=n_resamples, seed=seed,
                                     alpha_level=level, k=k, alpha=alpha, tie=gsb_tie,
                                     gap=min_gap)
                   for name, text in _DEFINITIONS.items()}
    summary = _summary(judge, people, agreement_t, decisions_t, order_t, gsb_t, bias_t,
                       favours_t, dis_t, min_gap, conf)
    return JudgeReport(judge=judge, people=tuple(people), agreement=agreement_t,
                       trend=trend_t, decisions=decisions_t, order=order_t, gsb=gsb_t,
                       bias=bias_t, favours=favours_t, disagreements=dis_t,
                       summary=tuple(summary), definitions=definitions,
                       scale=tuple(float(v) for v in scale), k=k, combine=combine,
                       weights=weights, confidence_level=conf, _confusion=confusion,
                       _batch=batch)


def _checked_people(raters: tuple[str, ...], judge: str, people: Sequence[str] | None,
                    fn: str) -> list[str]:
    """The raters the judge is compared with (default: every other rater), checked."""
    if people is None:
        people = [r for r in raters if r != judge]
    people = [str(p) for p in ([people] if isinstance(people, str) else people)]
    if not people or judge in people or any(p not in raters for p in people):
        raise invalid_parameter("people", fn, "raters of the data other than the judge",
                                list(people))
    return people


def _check_gsb(j: Judgments, gsb: Any, gsb_systems: tuple[str, str] | None, fn: str) -> None:
    """Side-by-side judgments, when given, are GsbJudgments of two systems of ``j``."""
    if gsb is None:
        return
    from .gsb import GsbJudgments

    check(gsb, "gsb", fn, InstanceOf(GsbJudgments, "GsbJudgments (from read_gsb)"))
    if (not isinstance(gsb_systems, tuple | list) or len(gsb_systems) != 2
            or any(s not in j.systems for s in gsb_systems)):
        raise invalid_parameter("gsb_systems", fn, "(old, new): two systems of the data "
                                "(" + ", ".join(map(repr, j.systems)) + ")", gsb_systems)


_PENDING_VALUES = 1 << 20  # bootstrap values waiting for their intervals (8 MB)


class _Intervals:
    """Percentile intervals to fill in rows, computed together
    (:func:`~.kernels.percentile_intervals`: each one's own bits) once about 2^20 values
    wait, and at :meth:`flush`: the rounds' kappa, alpha, bias and favours intervals in a
    few calls instead of one each."""

    def __init__(self, conf: float) -> None:
        self.conf = conf
        self.rows: list[tuple[dict[str, Any], str, str]] = []
        self.values: list[np.ndarray] = []
        self.size = 0

    def add(self, row: dict[str, Any], low: str, high: str, theta: np.ndarray) -> None:
        """Fill ``row[low]``, ``row[high]`` with the interval of ``theta`` (soon)."""
        self.rows.append((row, low, high))
        self.values.append(theta)
        self.size += len(theta)
        if self.size >= _PENDING_VALUES:
            self.flush()

    def flush(self) -> None:
        for (row, low, high), (lo, hi) in zip(
                self.rows, percentile_intervals(self.values, self.conf), strict=True):
            row[low], row[high] = lo, hi
        self.rows, self.values, self.size = [], [], 0


def _agreement_and_bias(j: Judgments, cj: np.ndarray, cp: np.ndarray, both: np.ndarray,
                        scale: np.ndarray, k: int, weights: Weights, level: Level,
                        n_resamples: int, seed: int, conf: float
                        ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame,
                                   dict[str, np.ndarray]]:
    """Per round, then pooled (``"all"``): the judge's agreement with the people's
    consensus ``cp`` (kappa, alpha and their bootstrap intervals, from one confusion
    matrix per query resampled) and its bias and favour per system (the differences
    ``cj - cp`` of the shown results in the top ``k``, resampled with the same queries).
    Returns the agreement, bias and favours tables and each round's confusion matrix."""
    n_scale = len(scale)
    agreement, bias_rows, favours_rows = [], [], []
    confusion: dict[str, np.ndarray] = {}
    pooled: dict[str, list[np.ndarray]] = {"sum": [], "cnt": []}
    # the resampled sums pooled over rounds, added round after round as they come (what
    # np.sum of the list over axis 0 gives, to the bit, without keeping every round's)
    pooled_boot: list[np.ndarray] = []
    n_sys = len(j.system_names)
    in_k = j.shown_position <= k
    shown_both = in_k & both[j.shown_unit]
    diff_shown = np.where(shown_both, cj[j.shown_unit] - cp[j.shown_unit], 0.0)
    count_cache: dict[int, np.ndarray] = {}
    pending = _Intervals(conf)
    for r in np.unique(j.group_round):  # a loop over rounds
        rname = str(j.round_names[r])
        queries = np.unique(j.group_query[j.group_round == r])
        nq = len(queries)
        units = np.flatnonzero((j.unit_round == r) & both)
        q_unit = np.searchsorted(queries, j.unit_query[units])
        code = snap(cj[units], scale) * n_scale + snap(cp[units], scale)
        per_q = np.bincount(q_unit * n_scale ** 2 + code,
                            minlength=nq * n_scale ** 2).reshape(nq, n_scale ** 2)
        # bias: per (query, system) sums of the differences and counts of shown results
        rows = np.flatnonzero((j.shown_round == r) & shown_both)
        q_shown = np.searchsorted(queries, j.shown_query[rows])
        cell = q_shown * n_sys + j.shown_system[rows]
        s_sum = np.bincount(cell, weights=diff_shown[rows], minlength=nq * n_sys)
        s_cnt = np.bincount(cell, minlength=nq * n_sys).astype(np.float64)
        s_judge = np.bincount(cell, weights=cj[j.shown_unit[rows]], minlength=nq * n_sys)
        values = np.hstack((per_q.astype(np.float64), s_sum.reshape(nq, n_sys),
                            s_cnt.reshape(nq, n_sys)))
        if nq >= 2 and nq not in count_cache:
            count_cache.clear()  # one size kept: rounds often have the same number
            count_cache[nq] = resample_counts(nq, n_resamples, seed)
        counts = count_cache.get(nq) if nq >= 2 else None
        res = counts @ values if counts is not None else None
        total = per_q.sum(axis=0).reshape(1, n_scale, n_scale)
        confusion[rname] = total[0].astype(np.int64)
        kap = float(kappa_many(total, weights)[0])
        alp = float(alpha_many(total, scale, level)[0])
        n_units = len(units)
        agreement.append({
            "round": rname, "units": n_units, "kappa": kap, "kappa_ci_low": math.nan,
            "kappa_ci_high": math.nan, "alpha": alp, "alpha_ci_low": math.nan,
            "alpha_ci_high": math.nan,
            "exact_agreement": float(np.trace(total[0]) / n_units) if n_units else math.nan,
            "mean_judge": float(cj[units].mean()) if n_units else math.nan,
            "mean_people": float(cp[units].mean()) if n_units else math.nan,
            "difference": float((cj[units] - cp[units]).mean()) if n_units else math.nan})
        if res is not None:
            mats = np.asarray(res[:, :n_scale ** 2], dtype=np.float64).reshape(
                -1, n_scale, n_scale)
            # whole counts times whole per-query counts, every sum below 2^53: the
            # products are whole counts (what kappa_many and alpha_many would check)
            whole = bool(nq * max(float(per_q.max(initial=0)), 1.0) < 2.0 ** 53) or None
            pending.add(agreement[-1], "kappa_ci_low", "kappa_ci_high",
                        kappa_many(mats, weights, whole=whole))
            pending.add(agreement[-1], "alpha_ci_low", "alpha_ci_high",
                        alpha_many(mats, scale, level, whole=whole))
        point_sum, point_cnt = s_sum.reshape(nq, n_sys).sum(0), s_cnt.reshape(nq, n_sys).sum(0)
        point_judge = s_judge.reshape(nq, n_sys).sum(0)
        if res is not None:
            b_sum = res[:, n_scale ** 2:n_scale ** 2 + n_sys]
            b_cnt = res[:, n_scale ** 2 + n_sys:]
            perm = _permutation(rname, n_resamples, seed)
            if pooled_boot:
                pooled_boot[0] += b_sum[perm]
                pooled_boot[1] += b_cnt[perm]
            else:
                pooled_boot = [b_sum[perm], b_cnt[perm]]
        else:
            b_sum = b_cnt = np.full((n_resamples, n_sys), np.nan)
        pooled["sum"].append(point_sum)
        pooled["cnt"].append(point_cnt)
        present = np.flatnonzero(point_cnt > 0)
        bias_rows += _bias_rows(rname, j.system_names, present, point_sum, point_cnt,
                                point_judge, b_sum, b_cnt, pending)
        favours_rows += _favours_rows(rname, j.system_names, present, point_sum, point_cnt,
                                      b_sum, b_cnt, pending)
    if pooled["sum"]:
        ps, pc_ = np.sum(pooled["sum"], axis=0), np.sum(pooled["cnt"], axis=0)
        present = np.flatnonzero(pc_ > 0)
        if pooled_boot:
            bs, bc = pooled_boot
        else:
            bs = bc = np.full((n_resamples, n_sys), np.nan)
        judge_sum = np.zeros(n_sys)
        np.add.at(judge_sum, j.shown_system[shown_both], cj[j.shown_unit[shown_both]])
        bias_rows += _bias_rows("all", j.system_names, present, ps, pc_, judge_sum, bs, bc,
                                pending)
        favours_rows += _favours_rows("all", j.system_names, present, ps, pc_, bs, bc,
                                      pending)
    pending.flush()
    for row in favours_rows:
        row["favours"] = bool(row["ci_low"] > 0)
    agreement_t = pd.DataFrame(agreement, columns=list(AGREEMENT_COLUMNS))
    bias_t = pd.DataFrame(bias_rows, columns=list(BIAS_COLUMNS))
    favours_t = pd.DataFrame(favours_rows, columns=list(FAVOURS_COLUMNS)).astype(
        {"favours": bool})
    return agreement_t, bias_t, favours_t, confusion


def _trend_table(j: Judgments, jj: Judgments, pt: NoiseTrend, jt: NoiseTrend, k: int,
                 gain: Gain, opts: EvalOptions) -> pd.DataFrame:
    """Per (round, system): the people's and the judge's DCG with their intervals, the
    difference and the judge's coverage of the shown results."""
    pq_j = per_query_dcg(jj, k=k, gain=gain, combine="mean", idcg_zero=opts.idcg_zero)
    cov = pd.DataFrame({"round": jj.group_round, "system": jj.group_system,
                        "shown": pq_j.shown, "labeled": pq_j.labeled}).groupby(
        ["round", "system"], sort=True)[["shown", "labeled"]].sum()
    coverage = {(str(j.round_names[r]), str(j.system_names[s])): row.labeled / row.shown
                if row.shown else math.nan for (r, s), row in cov.iterrows()}
    p_tab, j_tab = pt.table.set_index(["round", "system"]), jt.table.set_index(["round",
                                                                                "system"])
    trend_t = pd.DataFrame({
        "round": pt.table["round"], "system": pt.table["system"],
        "people_dcg": pt.table["dcg"].to_numpy(), "people_ci_low": pt.table["ci_low"].to_numpy(),
        "people_ci_high": pt.table["ci_high"].to_numpy(),
        "judge_dcg": j_tab.loc[list(p_tab.index), "dcg"].to_numpy(),
        "judge_ci_low": j_tab.loc[list(p_tab.index), "ci_low"].to_numpy(),
        "judge_ci_high": j_tab.loc[list(p_tab.index), "ci_high"].to_numpy()},
        columns=list(TREND_COLUMNS))
    trend_t["difference"] = trend_t["judge_dcg"] - trend_t["people_dcg"]
    trend_t["judge_coverage"] = [coverage.get(key, math.nan) for key in p_tab.index]
    return trend_t


def _decisions_table(pt: NoiseTrend, jt: NoiseTrend) -> pd.DataFrame:
    """Per system and pair of consecutive rounds: the people's and the judge's change,
    drop flag and significance side by side."""
    on = ["system", "round_from", "round_to"]
    merged = pt.changes[[*on, "delta", "drop", "significant"]].merge(
        jt.changes[[*on, "delta", "drop", "significant"]], on=on, suffixes=("_p", "_j"))
    return pd.DataFrame({
        "system": merged["system"], "round_from": merged["round_from"],
        "round_to": merged["round_to"], "people_delta": merged["delta_p"],
        "judge_delta": merged["delta_j"],
        "same_direction": np.sign(merged["delta_p"]) == np.sign(merged["delta_j"]),
        "people_drop": merged["drop_p"], "judge_drop": merged["drop_j"],
        "same_drop": merged["drop_p"] == merged["drop_j"],
        "people_significant": merged["significant_p"],
        "judge_significant": merged["significant_j"]}, columns=list(DECISION_COLUMNS))


def _bias_rows(rname: str, names: np.ndarray, present: np.ndarray, point_sum: np.ndarray,
               point_cnt: np.ndarray, point_judge: np.ndarray, b_sum: np.ndarray,
               b_cnt: np.ndarray, pending: _Intervals) -> list[dict[str, Any]]:
    """The bias rows of a round (or ``"all"``); their intervals left to ``pending``."""
    out: list[dict[str, Any]] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        boot = b_sum / b_cnt
    for s in present:
        bias = float(point_sum[s] / point_cnt[s])
        judge_mean = float(point_judge[s] / point_cnt[s])
        out.append({"round": rname, "system": str(names[s]), "results": int(point_cnt[s]),
                    "judge_mean": judge_mean, "people_mean": judge_mean - bias, "bias": bias,
                    "ci_low": math.nan, "ci_high": math.nan})
        pending.add(out[-1], "ci_low", "ci_high", boot[:, s])
    return out


def _favours_rows(rname: str, names: np.ndarray, present: np.ndarray, point_sum: np.ndarray,
                  point_cnt: np.ndarray, b_sum: np.ndarray, b_cnt: np.ndarray,
                  pending: _Intervals) -> list[dict[str, Any]]:
    """The favours rows of a round (or ``"all"``); their intervals left to ``pending``
    (``favours``: set from ``ci_low`` once filled)."""
    if len(present) < 2:
        return []
    out: list[dict[str, Any]] = []
    bias = point_sum[present] / point_cnt[present]
    with np.errstate(divide="ignore", invalid="ignore"):
        boot = b_sum[:, present] / b_cnt[:, present]
    m = len(present)
    for i, s in enumerate(present):
        rest = np.delete(np.arange(m), i)
        others = float(bias[rest].mean())
        diff = boot[:, i] - boot[:, rest].mean(axis=1)
        out.append({"round": rname, "system": str(names[s]), "bias": float(bias[i]),
                    "others_bias": others, "difference": float(bias[i]) - others,
                    "ci_low": math.nan, "ci_high": math.nan, "favours": False})
        pending.add(out[-1], "ci_low", "ci_high", diff)
    return out


_ORDER_CELLS = 1 << 19  # (resamples x points) values per chunk of the all-rounds tau


def _order(pt: NoiseTrend, jt: NoiseTrend, seed: int, conf: float) -> pd.DataFrame:
    """Kendall's tau-b of the (round, system) means, over all rounds and per round.

    The all-rounds interval takes the resamples a chunk at a time (about 2^20 values of
    each trend), so memory grows with the points, not with the points squared nor the
    resamples times the points; each round's interval takes its own few columns.
    """
    keys = list(zip(pt.table["round"], pt.table["system"], strict=True))
    x = pt.table["dcg"].to_numpy(dtype=np.float64)
    y = jt.table.set_index(["round", "system"]).loc[keys, "dcg"].to_numpy(dtype=np.float64)
    n_res = pt.n_resamples
    # each round's permutation, in the smallest integers that index the resamples
    small = np.int32 if n_res < 2**31 else np.int64
    perms: dict[Any, np.ndarray[Any, np.dtype[np.signedinteger[Any]]]] = {
        r: _permutation(r, n_res, seed).astype(small) for r in pt.table["round"].unique()}

    # each point's resamples (views, no copies) and its round's permutation, looked up once
    views = {id(nt): [nt.resamples_view(r, s) for r, s in keys] for nt in (pt, jt)}
    point_perm = [perms[r] for r, _ in keys]

    def columns(nt: NoiseTrend, cols: np.ndarray, lo: int, hi: int) -> np.ndarray:
        """Resamples lo..hi of the points ``cols`` (each round's shuffled by its
        permutation), ``(resamples, points)``: the transpose of rows written point by
        point (contiguous writes; the sorts read the rows as fast)."""
        out = np.empty((len(cols), hi - lo))
        src = views[id(nt)]
        for i, c in enumerate(cols.tolist()):  # a loop over points
            src[c].take(point_perm[c][lo:hi], out=out[i])
        return out.T

    rows = []
    scopes = [("all rounds", np.arange(len(keys)))] + [
        (str(r), np.flatnonzero(pt.table["round"].to_numpy() == r))
        for r in pt.table["round"].unique()]
    for scope, cols in scopes:  # all rounds, then a loop over rounds
        tau = float(tau_b_many(x[None, cols], y[None, cols])[0]) if len(cols) >= 2 else math.nan
        low = high = math.nan
        if len(cols) >= 2:
            boot = np.empty(n_res)
            step = max(1, _ORDER_CELLS // len(cols))
            for lo in range(0, n_res, step):  # chunks of resamples bound memory
                hi = min(lo + step, n_res)
                boot[lo:hi] = tau_b_many(columns(pt, cols, lo, hi), columns(jt, cols, lo, hi))
            low, high = percentile_interval(boot, conf)
        rows.append({"scope": scope, "points": len(cols), "tau": tau, "ci_low": low,
                     "ci_high": high, "same_order": bool(tau == 1.0)})
    return pd.DataFrame(rows, columns=list(ORDER_COLUMNS)).astype({"same_order": bool})


def _gsb_table(gsb: Any, j: Judgments, jp: Judgments, jj: Judgments,
               systems: tuple[str, str], k: int, gain: str, combine: str, tie: float,
               conf: float, idcg_zero: str) -> pd.DataFrame:
    from .gsb import gsb_by_round, gsb_from_counts

    old, new = systems
    people_t = gsb_by_round(gsb, confidence_level=conf).set_index("round")
    code = {str(s): i for i, s in enumerate(j.system_names)}
    per_q = {}
    for name, view, rule in (("judge", jj, "mean"), ("labels", jp, combine)):
        pq = per_query_dcg(view, k=k, gain=gain, combine=rule,  # type: ignore[arg-type]
                           idcg_zero=idcg_zero)
        per_q[name] = pd.DataFrame({"round": view.group_round, "system": view.group_system,
                                    "query": view.group_query, "dcg": pq.dcg})
    table = gsb.table
    rows = []
    for rname in people_t.index:  # a loop over the GSB file's rounds
        hit = np.flatnonzero(j.round_names == rname)
        row: dict[str, Any] = {"round": rname, "new": new, "old": old}
        p = people_t.loc[rname]
        row.update(people_gsb=float(p["gsb"]), people_ci_low=float(p["ci_low"]),
                   people_ci_high=float(p["ci_high"]),
                   people_verdict=_verdict(float(p["ci_low"]), float(p["ci_high"])))
        asked = set(table.loc[table["round"] == rname, "query"].astype(str))
        n = 0
        for name in ("judge", "labels"):
            g = dict(gsb=math.nan, low=math.nan, high=math.nan)
            if len(hit):
                f = per_q[name]
                f = f[f["round"] == hit[0]]
                a = f[f["system"] == code[old]].set_index("query")["dcg"]
                b = f[f["system"] == code[new]].set_index("query")["dcg"]
                shared = a.index.intersection(b.index)
                shared = [q for q in shared if str(j.query_ids[q]) in asked]
                d = b.loc[shared].to_numpy() - a.loc[shared].to_numpy()
                n = len(d)
                if n:
                    out = gsb_from_counts(int((d > tie).sum()), int((np.abs(d) <= tie).sum()),
                                          int((d < -tie).sum()), confidence_level=conf).iloc[0]
                    g = dict(gsb=float(out["gsb"]), low=float(out["ci_low"]),
                             high=float(out["ci_high"]))
            row[f"{name}_gsb"] = g["gsb"]
            if name == "judge":
                row.update(judge_ci_low=g["low"], judge_ci_high=g["high"])
            row[f"{name}_verdict"] = _verdict(g["low"], g["high"]) if n else "no data"
        row["queries"] = n
        row["same_verdict"] = row["judge_verdict"] == row["people_verdict"]
        rows.append(row)
    return pd.DataFrame(rows, columns=list(GSB_COLUMNS)).astype({"same_verdict": bool})


def _disagreements(j: Judgments, cj: np.ndarray, cp: np.ndarray, n_people: np.ndarray,
                   both: np.ndarray, gap: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    diff = np.where(both, cj - cp, 0.0)
    hit = both & (np.abs(diff) >= gap - 1e-12)
    units = np.flatnonzero(hit)
    shown = np.flatnonzero(hit[j.shown_unit])
    # per unit: the systems that showed it (a set of system codes, as the sorted distinct
    # (unit, system) pairs) and its best position; no Python loop over units
    local = np.searchsorted(units, j.shown_unit[shown])
    best = np.full(len(units), np.iinfo(np.int64).max)
    np.minimum.at(best, local, j.shown_position[shown].astype(np.int64))
    n_sys = max(len(j.system_names), 1)
    pairs = np.unique(local * n_sys + j.shown_system[shown])
    pair_unit, pair_sys = pairs // n_sys, pairs % n_sys
    names = [str(x) for x in j.system_names]
    text = np.full(len(units), "", dtype=object)
    first = np.ones(len(pairs), dtype=bool)
    first[1:] = pair_unit[1:] != pair_unit[:-1]
    rank = np.arange(len(pairs)) - np.maximum.accumulate(np.where(first, np.arange(len(pairs)),
                                                                  0))
    for step in range(int(rank.max()) + 1 if len(pairs) else 0):  # at most the systems
        at = rank == step
        piece = np.asarray(names, dtype=object)[pair_sys[at]]
        text[pair_unit[at]] = text[pair_unit[at]] + (piece if step == 0 else ", " + piece)
    out = pd.DataFrame({
        "round": text_column(j.round_names, j.unit_round[units]),
        "query": text_column(j.query_ids, j.unit_query[units]),
        "doc": text_column(j.doc_ids, j.unit_doc[units]),
        "systems": text, "position": best,
        "judge_label": cj[units], "people_label": cp[units],
        "people_labels": n_people[units].astype(np.int64), "difference": diff[units]},
        columns=list(DISAGREEMENT_COLUMNS))
    order = np.lexsort((best, j.unit_doc[units], j.unit_query[units], j.unit_round[units],
                        -np.abs(diff[units])))
    out = out.iloc[order].reset_index(drop=True)
    cols = ["round", "system", "query", "doc", "position"]
    cols += ["score"] if j.has_scores else []
    cols += ["segment"] if j.has_segment else []
    cols += ["weight"] if j.has_weight else []
    sub = j.shown_table().iloc[shown][cols].reset_index(drop=True)
    return out, sub.assign(rater="", label="")


def _summary(judge: str, people: Sequence[str], agreement: pd.DataFrame,
             decisions: pd.DataFrame, order: pd.DataFrame, gsb: pd.DataFrame | None,
             bias: pd.DataFrame, favours: pd.DataFrame, dis: pd.DataFrame, gap: float,
             conf: float) -> list[str]:
    out = []
    who = f"the people ({', '.join(people)})"
    if len(agreement):
        worst = agreement.loc[agreement["kappa"].idxmin()] if agreement["kappa"].notna().any() \
            else agreement.iloc[0]
        out.append(f"Agreement of {judge} with {who}: weighted kappa "
                   f"{agreement['kappa'].min():.2f}–{agreement['kappa'].max():.2f} over the "
                   f"rounds (lowest {worst['round']}: {worst['kappa']:.2f}, {conf:.0%} interval "
                   f"{worst['kappa_ci_low']:.2f}–{worst['kappa_ci_high']:.2f}); Krippendorff's "
                   f"alpha {agreement['alpha'].min():.2f}–{agreement['alpha'].max():.2f}; "
                   f"{judge} − people {agreement['difference'].mean():+.2f} grade on average.")
    if len(decisions):
        same_dir = int(decisions["same_direction"].sum())
        same_drop = int(decisions["same_drop"].sum())
        flagged = decisions[decisions["people_drop"] | decisions["judge_drop"]]
        what = "; ".join(f"{r.system} {r.round_from} → {r.round_to}: people "
                         f"{'drop' if r.people_drop else 'no drop'}, {judge} "
                         f"{'drop' if r.judge_drop else 'no drop'}"
                         for r in flagged.itertuples())
        sig = decisions[decisions["people_significant"]]
        out.append(f"Decisions: the same month-over-month direction in {same_dir} of "
                   f"{len(decisions)} changes ({int(sig['same_direction'].sum())} of the "
                   f"{len(sig)} the people's test calls significant), the same drop flag in "
                   f"{same_drop} of "
                   f"{len(decisions)}" + (f" ({what})." if what else " (no drop either way)."))
    if len(order):
        o = order.iloc[0]
        out.append(f"Order of the {o['points']} (round, system) means: Kendall's tau "
                   f"{o['tau']:.2f} ({conf:.0%} interval {o['ci_low']:.2f}–{o['ci_high']:.2f}); "
                   f"the same order within {int(order['same_order'].iloc[1:].sum())} of "
                   f"{len(order) - 1} rounds.")
    if gsb is not None and len(gsb):
        out.append(f"GSB verdict: the same in {int(gsb['same_verdict'].sum())} of {len(gsb)} "
                   "rounds" + "".join(
                       f"; {r.round}: people {r.people_verdict}, {judge} {r.judge_verdict}"
                       for r in gsb.itertuples() if not r.same_verdict) + ".")
    pooled = bias[bias["round"] == "all"]
    if len(pooled):
        parts = ", ".join(f"{r.bias:+.2f} on {r.system}'s results ({r.ci_low:+.2f} to "
                          f"{r.ci_high:+.2f})" for r in pooled.itertuples())
        fav = favours[(favours["round"] == "all") & favours["favours"]]
        verdict = (f": it favours {', '.join(fav['system'])} (difference "
                   + ", ".join(f"{r.difference:+.2f}, {conf:.0%} interval {r.ci_low:+.2f} to "
                               f"{r.ci_high:+.2f}" for r in fav.itertuples()) + ")"
                   if len(fav) else ": no system favoured")
        out.append(f"Bias ({judge} − people, all rounds): {parts}{verdict}.")
    out.append(f"{len(dis):,} units where {judge} and the people differ by {gap:g} grade or "
               "more: the next batch for people.")
    return out

