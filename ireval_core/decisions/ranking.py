"""How sure the ranking of several systems is.

With five candidates a meeting wants to know how sure each position of the ranking
is, not ten pairwise p-values. Two answers, both over a balanced design (every system
on the same queries, ``scores[s][j]`` the value of system ``s`` on query ``j``):

* :func:`rank_confidence` -- the queries are resampled with replacement (the paired
  bootstrap of :mod:`ireval_core.stats`), every system's mean is computed on each
  resample (one matrix product: resampling counts x the per-query matrix) and the
  systems are ranked on it. Each system's probability of each rank is the share of
  resamples that put it there (systems tied on a resample share the ranks they span
  evenly), and its rank interval the central ``confidence_level`` of that distribution.
  "A is first in 91% of resamples."
* the two-way model ``y_ij = mu + system_i + query_j + e_ij``:
  :func:`two_way_anova` (sums of squares, F tests of systems and queries; equal to
  ``statsmodels``' ``anova_lm`` of ``ols("y ~ C(system) + C(query)")``) and
  :func:`mixed_model`, the linear mixed model with a random query effect
  (``query_j ~ N(0, s2_q)``, ``e_ij ~ N(0, s2_e)``) fitted by REML. In a balanced design
  REML has a closed form: ``s2_e = MS_residual``, ``s2_q = (MS_query - MS_residual) / S``
  (on the boundary ``s2_q = 0`` when that is negative, and then ``s2_e`` is the pooled
  ``(SS_query + SS_residual) / (df_query + df_residual)``); the system effects are the
  system means, with standard error ``sqrt((s2_q + s2_e) / n)`` for a mean and
  ``sqrt(2 s2_e / n)`` for a difference of two. The tests check it against
  ``statsmodels``' ``MixedLM``.

>>> scores = {"A": [0.6, 0.5, 0.7, 0.4, 0.8, 0.5], "B": [0.5, 0.6, 0.7, 0.3, 0.6, 0.6],
...           "C": [0.2, 0.3, 0.4, 0.1, 0.3, 0.2]}
>>> rc = rank_confidence(scores, rng=0)
>>> rc.order, rc.probabilities.round(2).tolist()
(('A', 'B', 'C'), [[0.78, 0.22, 0.0], [0.22, 0.78, 0.0], [0.0, 0.0, 1.0]])
>>> print(rc.sentences()[0])
A is first in 78% of 10,000 resamples of the 6 queries (95% rank interval: 1–2)
>>> anova = two_way_anova(scores)
>>> print(anova.sentence())
Systems explain 61% of the variation, queries 32%, and 7% is left (system effect \
F(2, 10) = 41.36, p < 0.001)
>>> mm = mixed_model(scores)
>>> round(mm.var_query, 5), round(mm.var_residual, 5), round(mm.std_err_diff, 4)
(0.01233, 0.00489, 0.0404)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..errors import invalid_parameter
from ..formats import p_text
from ..params import check
from ..stats.base import (
    CONFIDENCE_LEVEL,
    N_RESAMPLES,
    FloatArray,
    RngLike,
    check_finite,
    check_rng,
)
from ..stats.resampling import bootstrap_means

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["AnovaRow", "AnovaTable", "MixedModel", "RankConfidence", "mixed_model",
           "rank_confidence", "two_way_anova"]

_ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth",
             "ninth", "tenth")


def _ordinal(rank: int) -> str:
    if rank <= len(_ORDINALS):
        return _ORDINALS[rank - 1]
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10,
                                                                                  "th")
    return f"{rank}{suffix}"


def _matrix(scores: Mapping[str, ArrayLike], fn: str) -> tuple[tuple[str, ...], FloatArray]:
    """The ``n_queries x n_systems`` matrix of aligned per-query values."""
    if not isinstance(scores, Mapping):
        raise invalid_parameter("scores", fn, "a mapping of system name to per-query values",
                                scores, error=TypeError)
    systems = tuple(str(s) for s in scores)
    if len(systems) < 2:
        raise invalid_parameter("scores", fn, "at least two systems", list(systems))
    columns = []
    for name, values in scores.items():
        try:
            col = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"scores[{name!r}] must be numeric per-query values: {exc}"
                             ) from None
        if col.ndim != 1:
            raise ValueError(f"scores[{name!r}] must be 1-D; got shape {col.shape}")
        columns.append(col)
    sizes = {c.size for c in columns}
    if len(sizes) != 1:
        raise ValueError("every system needs a value on the same queries (a balanced "
                         f"design); got lengths {[c.size for c in columns]}")
    X = np.column_stack(columns)
    if X.shape[0] < 2:
        raise ValueError(f"at least 2 queries are needed; got {X.shape[0]}")
    check_finite(X, "scores")
    return systems, np.ascontiguousarray(X)


# ------------------------------------------------------------------ rank confidence


@dataclass(frozen=True)
class RankConfidence:
    """Each system's probability of each rank over bootstrap resamples of the queries.

    Attributes
    ----------
    systems : tuple of str
        In the order given; ``probabilities`` and the other arrays follow it.
    means : ndarray
        Observed means.
    order : tuple of str
        Systems by observed mean, best first (ties in the order given).
    probabilities : ndarray, shape (n_systems, n_systems)
        ``probabilities[i, r]``: share of resamples ranking system ``i`` at rank
        ``r + 1`` (each row sums to 1).
    rank_low, rank_high : ndarray of int
        The central ``confidence_level`` interval of each system's rank (1 = best).
    above : ndarray, shape (n_systems, n_systems)
        ``above[i, j]``: share of resamples where ``i``'s mean is above ``j``'s (ties
        count one half).
    n_resamples, n_queries : int
    confidence_level : float
    """

    systems: tuple[str, ...]
    means: FloatArray
    order: tuple[str, ...]
    probabilities: FloatArray
    rank_low: np.ndarray
    rank_high: np.ndarray
    above: FloatArray
    n_resamples: int
    n_queries: int
    confidence_level: float
    resampled_means: FloatArray = field(repr=False, compare=False)

    def p_rank(self, system: str, rank: int) -> float:
        """Probability that ``system`` is at ``rank`` (1 = best)."""
        return float(self.probabilities[self.systems.index(system), rank - 1])

    def sentences(self) -> list[str]:
        """One sentence per system, best first: its most likely rank and its interval."""
        out = []
        for s in self.order:
            i = self.systems.index(s)
            r = int(np.argmax(self.probabilities[i])) + 1
            lo, hi = int(self.rank_low[i]), int(self.rank_high[i])
            span = f"{lo}" if lo == hi else f"{lo}–{hi}"
            out.append(f"{s} is {_ordinal(r)} in {self.probabilities[i, r - 1]:.0%} of "
                       f"{self.n_resamples:,} resamples of the {self.n_queries:,} queries "
                       f"({self.confidence_level:.0%} rank interval: {span})")
        return out

    def table(self) -> pd.DataFrame:
        """One row per system, best first: mean, rank interval, P(rank = r) columns."""
        import pandas as pd

        idx = [self.systems.index(s) for s in self.order]
        frame = pd.DataFrame({"system": list(self.order), "mean": self.means[idx],
                              "rank_low": self.rank_low[idx], "rank_high": self.rank_high[idx]})
        for r in range(len(self.systems)):
            frame[f"P(rank {r + 1})"] = self.probabilities[idx, r]
        return frame

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: per system (best first) its mean, rank interval and probabilities."""
        return {"n_resamples": self.n_resamples, "confidence_level": self.confidence_level,
                "systems": {s: {"mean": float(self.means[i]),
                                "rank_interval": [int(self.rank_low[i]),
                                                  int(self.rank_high[i])],
                                "rank_probabilities": [float(p) for p in
                                                       self.probabilities[i]]}
                            for s in self.order for i in [self.systems.index(s)]},
                "sentences": self.sentences()}


def rank_confidence(scores: Mapping[str, ArrayLike], *, n_resamples: int = 10_000,
                    confidence_level: float = 0.95, rng: RngLike = None) -> RankConfidence:
    """How sure the ranking is: each system's probability of each rank over resamples.

    Parameters
    ----------
    scores : mapping of str to array_like
        System name -> per-query values, aligned on the same queries.
    n_resamples : int, default 10_000
        Bootstrap resamples of the queries.
    confidence_level : float, default 0.95
        Of the rank intervals.
    rng : None, int or numpy.random.Generator
        Seed or generator; the resamples are those of :func:`ireval_core.stats.
        bootstrap_test` for the same seed.

    Returns
    -------
    RankConfidence

    Examples
    --------
    >>> rc = rank_confidence({"x": [1, 2, 3, 4], "y": [1, 2, 3, 4]}, rng=1)
    >>> rc.probabilities.tolist()  # identical systems share ranks 1 and 2
    [[0.5, 0.5], [0.5, 0.5]]
    """
    fn = "rank_confidence"
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    level = check(confidence_level, "confidence_level", fn, CONFIDENCE_LEVEL)
    rng = check_rng(rng, fn)
    systems, X = _matrix(scores, fn)
    theta = bootstrap_means(X, n_resamples, rng)
    return rank_probabilities(systems, X, theta, level)


def rank_probabilities(systems: tuple[str, ...], X: FloatArray, theta: FloatArray,
                     level: float) -> RankConfidence:
    """Rank probabilities from the resampled means ``theta`` (resamples x systems)."""
    B, S = theta.shape
    prob = np.zeros((S, S + 1))
    above = np.zeros((S, S))
    chunk = max(1, 2**21 // (S * S))
    cols = np.arange(S)
    for start in range(0, B, chunk):
        t = theta[start:start + chunk]
        greater = t[:, None, :] > t[:, :, None]  # [b, i, j]: j's mean above i's
        equal = t[:, None, :] == t[:, :, None]
        g = greater.sum(axis=2)  # systems strictly above i
        e = equal.sum(axis=2)  # tied with i, itself included
        share = 1.0 / e
        # i spreads 1 evenly over ranks g + 1 .. g + e: +share at g, -share at g + e
        np.add.at(prob, (np.broadcast_to(cols, g.shape), g), share)
        np.add.at(prob, (np.broadcast_to(cols, g.shape), g + e), -share)
        above += (greater.sum(axis=0) + 0.5 * (equal.sum(axis=0) - np.eye(S, dtype=int))).T
    probabilities = np.cumsum(prob, axis=1)[:, :S] / B
    probabilities[np.abs(probabilities) < 1e-12] = 0.0
    above /= B
    np.fill_diagonal(above, 0.0)
    tail = (1.0 - level) / 2.0
    cum = np.cumsum(probabilities, axis=1)
    eps = 1e-9  # cumulated shares are sums of fractions: compare with a little room
    rank_low = (cum < tail - eps).sum(axis=1) + 1
    rank_high = np.minimum((cum < 1.0 - tail - eps).sum(axis=1) + 1, S)
    means = X.mean(axis=0)
    order = tuple(systems[i] for i in np.argsort(-means, kind="stable"))
    return RankConfidence(systems, means, order, probabilities, rank_low, rank_high, above,
                          B, X.shape[0], level, theta)


# ------------------------------------------------------------------ two-way model


@dataclass(frozen=True)
class AnovaRow:
    """One line of an ANOVA table (``F`` and ``pvalue`` NaN for the residual)."""

    source: str
    df: float
    sum_sq: float
    mean_sq: float
    F: float
    pvalue: float


@dataclass(frozen=True)
class AnovaTable:
    """The two-way ANOVA of systems and queries (no interaction: one value per cell)."""

    systems: tuple[str, ...]
    n_queries: int
    rows: tuple[AnovaRow, ...]

    def row(self, source: str) -> AnovaRow:
        """The row ``"system"``, ``"query"`` or ``"residual"``."""
        for r in self.rows:
            if r.source == source:
                return r
        raise KeyError(source)

    def table(self) -> pd.DataFrame:
        """The table as ``statsmodels``' ``anova_lm`` lays it out."""
        import pandas as pd

        return pd.DataFrame({"df": [r.df for r in self.rows],
                             "sum_sq": [r.sum_sq for r in self.rows],
                             "mean_sq": [r.mean_sq for r in self.rows],
                             "F": [r.F for r in self.rows],
                             "PR(>F)": [r.pvalue for r in self.rows]},
                            index=[r.source for r in self.rows])

    def sentence(self) -> str:
        """What the table says, in words."""
        s, q, e = self.rows
        total = s.sum_sq + q.sum_sq + e.sum_sq
        share = (lambda x: f"{x / total:.0%}") if total > 0 else (lambda x: "0%")
        return (f"Systems explain {share(s.sum_sq)} of the variation, queries "
                f"{share(q.sum_sq)}, and {share(e.sum_sq)} is left "
                f"(system effect F({s.df:g}, {e.df:g}) = {s.F:.2f}, {_p(s.pvalue)})")

    def as_dict(self) -> dict[str, Any]:
        return {r.source: {"df": r.df, "sum_sq": r.sum_sq, "mean_sq": r.mean_sq,
                           "F": _none(r.F), "p": _none(r.pvalue)} for r in self.rows}


def _none(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


_p = p_text


def _sums(X: FloatArray) -> tuple[float, float, float, FloatArray, FloatArray, float]:
    """Sums of squares of systems, queries and residual; system and query means."""
    n, S = X.shape
    grand = float(X.mean())
    sys_means = X.mean(axis=0)
    query_means = X.mean(axis=1)
    ss_sys = float(n * np.sum((sys_means - grand) ** 2))
    ss_query = float(S * np.sum((query_means - grand) ** 2))
    resid = X - sys_means[None, :] - query_means[:, None] + grand
    ss_res = float(np.sum(resid**2))
    return ss_sys, ss_query, ss_res, sys_means, query_means, grand


def _f_row(source: str, ss: float, df: float, ms_res: float, df_res: float) -> AnovaRow:
    ms = ss / df
    if ms_res > 0:
        F = ms / ms_res
        p = float(special.fdtrc(df, df_res, F))
    else:
        F = math.inf if ms > 0 else math.nan
        p = 0.0 if ms > 0 else math.nan
    return AnovaRow(source, df, ss, ms, F, p)


def two_way_anova(scores: Mapping[str, ArrayLike]) -> AnovaTable:
    """Two-way ANOVA of a balanced systems x queries table, without interaction.

    Equal to ``statsmodels``' ``anova_lm(ols("y ~ C(system) + C(query)", data))``
    (either type: the design is balanced).

    Parameters
    ----------
    scores : mapping of str to array_like
        System name -> per-query values, aligned on the same queries.

    Returns
    -------
    AnovaTable
        Rows ``system``, ``query``, ``residual``.

    Examples
    --------
    >>> t = two_way_anova({"A": [1, 2, 3], "B": [2, 3, 5]})
    >>> [(r.source, r.df, round(r.sum_sq, 4)) for r in t.rows]
    [('system', 1.0, 2.6667), ('query', 2.0, 6.3333), ('residual', 2.0, 0.3333)]
    """
    systems, X = _matrix(scores, "two_way_anova")
    n, S = X.shape
    ss_sys, ss_query, ss_res, *_ = _sums(X)
    df_sys, df_query, df_res = S - 1.0, n - 1.0, (S - 1.0) * (n - 1.0)
    ms_res = ss_res / df_res
    rows = (_f_row("system", ss_sys, df_sys, ms_res, df_res),
            _f_row("query", ss_query, df_query, ms_res, df_res),
            AnovaRow("residual", df_res, ss_res, ms_res, math.nan, math.nan))
    return AnovaTable(systems, n, rows)


@dataclass(frozen=True)
class MixedModel:
    """REML fit of ``y_ij = system_i + query_j + e_ij`` with a random query effect.

    Attributes
    ----------
    systems : tuple of str
    means : ndarray
        The system effects (cell means model: each system's mean).
    std_err_mean : float
        Standard error of a system's mean, ``sqrt((var_query + var_residual) / n)``.
    std_err_diff : float
        Standard error of a difference of two system means, ``sqrt(2 var_residual / n)``.
    var_query, var_residual : float
        The REML variance components (``var_query`` is 0 on the boundary).
    df_residual : float
        Degrees of freedom of the t tests of differences.
    boundary : bool
        The unconstrained estimate of ``var_query`` was negative.
    n_queries : int
    """

    systems: tuple[str, ...]
    means: FloatArray
    std_err_mean: float
    std_err_diff: float
    var_query: float
    var_residual: float
    df_residual: float
    boundary: bool
    n_queries: int

    @property
    def query_share(self) -> float:
        """Share of the per-query variance due to the query (intraclass correlation)."""
        total = self.var_query + self.var_residual
        return self.var_query / total if total > 0 else math.nan

    def difference(self, a: str, b: str) -> tuple[float, float, float]:
        """``mean(b) - mean(a)``, its t statistic and two-sided p-value under the model."""
        d = float(self.means[self.systems.index(b)] - self.means[self.systems.index(a)])
        if self.std_err_diff > 0:
            t = d / self.std_err_diff
            p = float(2.0 * special.stdtr(self.df_residual, -abs(t)))
        else:
            t, p = (0.0, 1.0) if d == 0 else (math.copysign(math.inf, d), 0.0)
        return d, t, p

    def sentence(self) -> str:
        return (f"Queries account for {self.query_share:.0%} of the per-query variance "
                f"(REML: query variance {self.var_query:.4g}, residual {self.var_residual:.4g}"
                f"{', on the boundary' if self.boundary else ''}); a difference of two "
                f"system means has standard error {self.std_err_diff:.4g}")

    def as_dict(self) -> dict[str, Any]:
        return {"var_query": self.var_query, "var_residual": self.var_residual,
                "query_share": _none(self.query_share), "std_err_mean": self.std_err_mean,
                "std_err_diff": self.std_err_diff, "df_residual": self.df_residual,
                "boundary": self.boundary,
                "means": {s: float(m) for s, m in zip(self.systems, self.means, strict=True)}}


def mixed_model(scores: Mapping[str, ArrayLike]) -> MixedModel:
    """Linear mixed model with fixed system effects and a random query effect, by REML.

    Closed form for the balanced design (see the module docstring); the same estimates
    as ``statsmodels``' ``mixedlm("y ~ C(system)", data, groups=data["query"]).fit(
    reml=True)`` (its ``cov_re`` and ``scale``, and the system effects and standard
    errors of its ``fe_params``), without an optimiser.

    Parameters
    ----------
    scores : mapping of str to array_like
        System name -> per-query values, aligned on the same queries.

    Returns
    -------
    MixedModel

    Examples
    --------
    >>> mm = mixed_model({"A": [1, 2, 3], "B": [2, 3, 5]})
    >>> round(mm.var_query, 4), round(mm.var_residual, 4), mm.difference("A", "B")[0]
    (1.5, 0.1667, 1.3333333333333335)
    """
    systems, X = _matrix(scores, "mixed_model")
    n, S = X.shape
    ss_sys, ss_query, ss_res, sys_means, *_ = _sums(X)
    df_query, df_res = n - 1.0, (S - 1.0) * (n - 1.0)
    ms_query, ms_res = ss_query / df_query, ss_res / df_res
    var_query = (ms_query - ms_res) / S
    boundary = var_query < 0
    if boundary:
        var_query = 0.0
        var_res = (ss_query + ss_res) / (df_query + df_res)
        df_t = df_query + df_res
    else:
        var_res = ms_res
        df_t = df_res
    return MixedModel(systems, sys_means, math.sqrt((var_query + var_res) / n),
                      math.sqrt(2.0 * var_res / n), float(var_query), float(var_res),
                      float(df_t), bool(boundary), n)
