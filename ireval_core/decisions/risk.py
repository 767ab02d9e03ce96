"""Who gets hurt: the queries a new system makes worse, and risk-sensitive evaluation.

A mean gain can hide a tail of queries that got much worse. With a baseline ``a``, a
candidate ``b`` and ``d = b - a`` per query:

* the queries losing more than ``delta`` (``d < -delta``) and the worst losses;
* **URisk** (Wang, Bennett and Collins-Thompson, SIGIR 2012; the TREC Web track's
  risk-sensitive measure): the mean of ``d`` with every loss weighted ``1 + alpha``,

  ``URisk = (1/n) [ sum over d > 0 of d  -  (1 + alpha) sum over d < 0 of |d| ]``;

  ``alpha = 0`` gives the mean difference; larger alphas punish losses more (1, 5 and
  10 are usual);
* **TRisk** (Dinçer, Macdonald and Ounis, SIGIR 2014): URisk divided by its standard
  error, ``TRisk = URisk / (s / sqrt(n))`` with ``s`` the sample standard deviation
  (``n - 1``) of the weighted differences ``d_i`` (gains) and ``(1 + alpha) d_i``
  (losses); it is the paired t statistic of those values, tested with ``n - 1``
  degrees of freedom. TRisk > 2 (about ``p < 0.05``): the candidate is significantly
  less risky than the baseline; TRisk < -2: significantly riskier. With
  ``alpha = 0`` it is the paired t statistic of ``b - a``.

>>> a = [0.50, 0.40, 0.30, 0.60, 0.70]
>>> b = [0.60, 0.30, 0.50, 0.60, 0.75]
>>> urisk(a, b, alpha=1.0)  # (0.1 + 0.2 + 0.05 - 2 * 0.1) / 5
0.03
>>> res = risk_profile(a, b, query_ids=["q1", "q2", "q3", "q4", "q5"], delta=0.05)
>>> res.n_losses, [(q, round(d, 3)) for q, _, _, d in res.worst]
(1, [('q2', -0.1)])
>>> print(res.sentence("A", "B", "nDCG@10"))  # doctest: +NORMALIZE_WHITESPACE
B loses more than 0.05 nDCG@10 on 1 of 5 queries against A (20%; worst: q2 -0.100);
URisk(α=1) = +0.030, TRisk = +0.45 (p = 0.675): no significant risk either way
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..errors import invalid_parameter
from ..formats import p_text
from ..params import check
from ..stats.base import ALTERNATIVE, Alternative, FloatArray, paired_diff

__all__ = ["RiskProfile", "RiskResult", "risk_profile", "trisk_test", "urisk"]


def _check_alpha(alpha: float, fn: str) -> float:
    if (isinstance(alpha, bool) or not isinstance(alpha, numbers.Real)
            or not (math.isfinite(alpha) and alpha >= 0)):
        raise invalid_parameter("alpha", fn, "a finite number >= 0", alpha)
    return float(alpha)


def _weighted(d: FloatArray, alpha: float) -> FloatArray:
    """Gains as they are, losses weighted ``1 + alpha``."""
    return np.where(d < 0, (1.0 + alpha) * d, d)


def urisk(a: ArrayLike, b: ArrayLike, *, alpha: float = 1.0) -> float:
    """URisk of ``b`` against the baseline ``a``: the mean of ``b - a`` with losses
    weighted ``1 + alpha`` (Wang et al. 2012).

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values of the baseline and the candidate.
    alpha : float, default 1.0
        Extra weight of a loss (>= 0; 0 gives the mean difference).

    Examples
    --------
    >>> urisk([0.5, 0.5], [0.7, 0.4], alpha=5)  # (0.2 - 6 * 0.1) / 2
    -0.2
    """
    alpha = _check_alpha(alpha, "urisk")
    d = paired_diff(a, b)
    return float(round(float(np.mean(_weighted(d, alpha))), 15))


@dataclass(frozen=True)
class RiskResult:
    """TRisk: URisk standardised by its standard error, a t statistic (``n - 1`` df).

    Attributes
    ----------
    statistic : float
        TRisk (``inf`` with the sign of URisk when every weighted difference is equal
        and not 0; 0 when all are 0).
    pvalue : float
        For ``alternative`` (``"greater"``: ``b`` less risky than ``a``).
    urisk, std_err : float
        URisk and its standard error.
    alpha : float
    alternative : str
    n, df : int, float
    """

    statistic: float
    pvalue: float
    urisk: float
    std_err: float
    alpha: float
    alternative: str
    n: int
    df: float


def trisk_test(a: ArrayLike, b: ArrayLike, *, alpha: float = 1.0,
               alternative: Alternative = "two-sided") -> RiskResult:
    """TRisk of ``b`` against the baseline ``a`` and its t test (Dinçer et al. 2014).

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values (at least 2 queries).
    alpha : float, default 1.0
        Extra weight of a loss (>= 0). With 0, TRisk is the paired t statistic.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        ``"greater"``: ``b`` is less risky (URisk > 0).

    Returns
    -------
    RiskResult

    Examples
    --------
    >>> res = trisk_test([0.5, 0.4, 0.3, 0.6], [0.6, 0.3, 0.5, 0.6], alpha=1)
    >>> round(res.urisk, 3), round(res.statistic, 4), res.df
    (0.025, 0.2928, 3.0)
    """
    fn = "trisk_test"
    alpha = _check_alpha(alpha, fn)
    check(alternative, "alternative", fn, ALTERNATIVE)
    d = paired_diff(a, b)
    w = _weighted(d, alpha)
    n = w.size
    mean = float(np.mean(w))
    se = float(np.std(w, ddof=1) / math.sqrt(n))
    if se > 0:
        t = mean / se
    else:
        t = 0.0 if mean == 0 else math.copysign(math.inf, mean)
    df = n - 1.0
    if alternative == "greater":
        p = float(special.stdtr(df, -t))
    elif alternative == "less":
        p = float(special.stdtr(df, t))
    else:
        p = float(2.0 * special.stdtr(df, -abs(t)))
    if se == 0 and mean == 0:
        p = 1.0
    return RiskResult(t, p, mean, se, alpha, alternative, n, df)


@dataclass(frozen=True)
class RiskProfile:
    """Who gets hurt when ``a`` is replaced by ``b`` (``d = b - a``).

    Attributes
    ----------
    n_queries : int
    delta : float
        A query "loses" when ``d < -delta``.
    n_losses, n_gains : int
        Queries with ``d < -delta`` and ``d > delta``.
    worst : list of (query, a, b, d)
        The largest losses beyond ``delta``, worst first (at most ``n_worst``).
    urisk, trisk, pvalue, alpha : float
        URisk, TRisk and its two-sided p-value at ``alpha``.
    """

    n_queries: int
    delta: float
    n_losses: int
    n_gains: int
    worst: list[tuple[Any, float, float, float]]
    urisk: float
    trisk: float
    pvalue: float
    alpha: float

    def sentence(self, a: str = "A", b: str = "B", measure: str = "") -> str:
        """Who gets hurt, in words."""
        unit = f" {measure}" if measure else ""
        beyond = f"more than {self.delta:g}{unit}" if self.delta > 0 else (
            f"on {measure}" if measure else "anything")
        share = self.n_losses / self.n_queries if self.n_queries else math.nan
        worst = ", ".join(f"{q} {d:+.3f}" for q, _, _, d in self.worst[:3])
        lost = (f"{b} loses {beyond} on {self.n_losses:,} of {self.n_queries:,} queries "
                f"against {a} ({share:.0%}" + (f"; worst: {worst})" if worst else ")"))
        if math.isnan(self.pvalue):
            verdict = "no test (too few queries)"
        elif self.pvalue < 0.05:
            verdict = (f"{b} is significantly less risky than {a}" if self.trisk > 0 else
                       f"{b} is significantly riskier than {a}")
        else:
            verdict = "no significant risk either way"
        p = p_text(self.pvalue)
        return (f"{lost}; URisk(α={self.alpha:g}) = {self.urisk:+.3f}, TRisk = "
                f"{self.trisk:+.2f} ({p}): {verdict}")

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (the worst losses as ``[query, d]`` pairs)."""
        return {"alpha": self.alpha, "urisk": self.urisk,
                "trisk": None if math.isnan(self.trisk) else self.trisk,
                "p": None if math.isnan(self.pvalue) else self.pvalue,
                "delta": self.delta, "losses": self.n_losses, "gains": self.n_gains,
                "worst": [[str(q), d] for q, _, _, d in self.worst]}


def risk_profile(a: ArrayLike, b: ArrayLike, *, query_ids: Sequence[Any] | None = None,
                 alpha: float = 1.0, delta: float = 0.0, n_worst: int = 10) -> RiskProfile:
    """Losses beyond ``delta``, the worst of them, URisk and TRisk of ``b`` against ``a``.

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values of the baseline and the candidate.
    query_ids : sequence, optional
        The queries' ids (default: their positions), to name the worst losses.
    alpha : float, default 1.0
        URisk's extra weight of a loss.
    delta : float, default 0.0
        A query loses when ``b - a < -delta`` (>= 0, in the measure's units).
    n_worst : int, default 10
        How many of the worst losses to list.

    Returns
    -------
    RiskProfile
        TRisk's p-value is two-sided.
    """
    fn = "risk_profile"
    alpha = _check_alpha(alpha, fn)
    if (isinstance(delta, bool) or not isinstance(delta, numbers.Real)
            or not (math.isfinite(delta) and delta >= 0)):
        raise invalid_parameter("delta", fn, "a finite number >= 0", delta)
    if (isinstance(n_worst, bool) or not isinstance(n_worst, numbers.Integral)
            or n_worst < 0):
        raise invalid_parameter("n_worst", fn, "an int >= 0", n_worst)
    d = paired_diff(a, b)
    av, bv = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    ids = np.arange(d.size) if query_ids is None else np.asarray(query_ids, dtype=object)
    if len(ids) != d.size:
        raise ValueError(f"query_ids must name every query: {len(ids)} ids for {d.size} "
                         "queries")
    lose = np.flatnonzero(d < -delta)
    order = lose[np.argsort(d[lose], kind="stable")][:n_worst]
    worst = [(ids[i].item() if isinstance(ids[i], np.generic) else ids[i], float(av[i]),
              float(bv[i]), float(d[i])) for i in order]
    t = trisk_test(a, b, alpha=alpha)
    return RiskProfile(int(d.size), float(delta), int(lose.size),
                       int(np.count_nonzero(d > delta)), worst, t.urisk, t.statistic,
                       t.pvalue, alpha)
