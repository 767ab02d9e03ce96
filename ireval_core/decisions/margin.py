"""Not worse, or equivalent: paired tests against a margin the team accepts.

Replacing A with a cheaper or faster B needs evidence that B is not worse by more than a
margin ``M``; a non-significant difference is not that evidence (too few queries give
it too). With ``d = b - a`` per query:

* **non-inferiority**: H0 ``mean(d) <= -M`` against H1 ``mean(d) > -M``. The paired
  t-test of ``d + M`` (one-sided, ``alternative="greater"``), equal to
  ``scipy.stats.ttest_rel(b + M, a, alternative="greater")``; B is not worse when
  ``p < alpha``, exactly when the lower end of the two-sided ``1 - 2 alpha`` interval of
  ``mean(d)`` is above ``-M``.
* **equivalence** (TOST, two one-sided tests): H0 ``|mean(d)| >= M``; ``p`` is the larger
  of the p-values of ``mean(d) > -M`` and ``mean(d) < M``, equal to
  ``statsmodels.stats.weightstats.ttost_paired(b, a, -M, M)``; equivalent exactly when
  the ``1 - 2 alpha`` interval lies inside ``(-M, M)``.
* ``method="bootstrap"``: the queries are resampled (as :func:`ireval_core.stats.
  bootstrap_test`); the interval is the percentile interval of the resampled means and
  ``p = (#{resampled mean <= -M} + 1) / (B + 1)`` (and the same at ``+M`` for TOST): the
  test that inverts the percentile interval, so verdict and interval agree up to one
  resample, and ``p`` is never 0.

The margin is in the measure's units, or a percentage of the baseline's mean over the
compared queries (``margin="1%"``; :func:`margin_value`).

>>> A = [0.50, 0.42, 0.61, 0.30, 0.55, 0.47, 0.38, 0.66, 0.52, 0.44]
>>> B = [0.51, 0.41, 0.62, 0.31, 0.55, 0.46, 0.39, 0.66, 0.53, 0.45]
>>> res = noninferiority_test(A, B, margin=0.02)
>>> res.pvalue < 0.001, res.conclusive
(True, True)
>>> print(res.sentence("A", "B", "nDCG@10"))  # doctest: +NORMALIZE_WHITESPACE
B is not worse than A by more than 0.02 nDCG@10 (B − A = +0.004, 90% interval
[-0.001, +0.009], p < 0.001; non-inferiority t-test, 10 queries)
>>> print(equivalence_test(A, B, margin="1%").sentence("A", "B", "nDCG@10"))
... # doctest: +NORMALIZE_WHITESPACE
B and A are not shown equivalent within ±0.0049 nDCG@10 (1% of A's mean; the 90%
interval of B − A, [-0.0009, +0.0089], reaches outside; p = 0.379; TOST t-test,
10 queries)
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import special

from ..errors import invalid_parameter
from ..formats import p_text
from ..params import Options, check
from ..stats import ConfidenceInterval
from ..stats.base import N_RESAMPLES, PROBABILITY, FloatArray, RngLike, check_rng, paired_diff
from ..stats.resampling import bootstrap_means

__all__ = ["MARGIN_METHODS", "MarginResult", "equivalence_test", "margin_value",
           "noninferiority_test"]

MARGIN_METHODS: tuple[str, ...] = ("t", "bootstrap")
"""How :func:`noninferiority_test` and :func:`equivalence_test` compute."""

Margin = float | str
"""A margin: a positive number in the measure's units, or ``"P%"`` of the baseline mean."""


@dataclass(frozen=True)
class MarginResult:
    """A non-inferiority or equivalence test of ``d = b - a`` against a margin.

    Attributes
    ----------
    test : {"noninferiority", "equivalence"}
    method : {"t", "bootstrap"}
    statistic : float
        t: the t statistic of ``mean(d) + margin`` (non-inferiority), or of the side of
        TOST with the larger p-value. bootstrap: the mean difference.
    pvalue : float
        p < ``alpha``: B is not worse (non-inferiority), or the two are equivalent.
    pvalue_lower, pvalue_upper : float
        The one-sided p-values of ``mean(d) > -margin`` and (TOST only; NaN otherwise)
        ``mean(d) < margin``.
    margin : float
        The margin in the measure's units.
    percent : float or None
        The margin as given in percent of the baseline mean, if it was.
    baseline_mean : float
        ``mean(a)``.
    alpha : float
        The level; the interval is two-sided at ``1 - 2 alpha``.
    n : int
        Queries.
    mean_diff : float
        ``mean(b - a)``.
    df, std_err : float or None
        t only.
    ci_low, ci_high : float
        The ``1 - 2 alpha`` interval of ``mean(d)``.
    n_resamples : int or None
        bootstrap only.
    """

    test: str
    method: str
    statistic: float
    pvalue: float
    pvalue_lower: float
    pvalue_upper: float
    margin: float
    percent: float | None
    baseline_mean: float
    alpha: float
    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    df: float | None = None
    std_err: float | None = None
    n_resamples: int | None = None
    bootstrap_distribution: FloatArray | None = field(default=None, repr=False,
                                                      compare=False)

    @property
    def conclusive(self) -> bool:
        """``pvalue < alpha``: not worse (non-inferiority) or equivalent (TOST)."""
        return bool(self.pvalue < self.alpha)

    def confidence_interval(self) -> ConfidenceInterval:
        """The two-sided ``1 - 2 alpha`` interval of ``mean(b - a)`` the verdict reads."""
        return ConfidenceInterval(self.ci_low, self.ci_high)

    def sentence(self, a: str = "A", b: str = "B", measure: str = "") -> str:
        """The verdict in words, naming the systems and the measure."""
        unit = f" {measure}" if measure else ""
        level = f"{round(100 * (1 - 2 * self.alpha)):g}%"
        how = (f"{'non-inferiority' if self.test == 'noninferiority' else 'TOST'} "
               f"{'t-test' if self.method == 't' else 'bootstrap'}, {self.n:,} queries")
        share = f"{self.percent:g}% of {a}'s mean; " if self.percent is not None else ""
        digits = max(3, 1 - math.floor(math.log10(self.margin)))
        ci = f"[{_num(self.ci_low, digits)}, {_num(self.ci_high, digits)}]"
        diff = _num(self.mean_diff, digits)
        m = f"{self.margin:.2g}"
        if self.test == "noninferiority":
            if self.conclusive:
                return (f"{b} is not worse than {a} by more than {m}{unit} "
                        f"({share}{b} − {a} = {diff}, {level} interval {ci}, "
                        f"{_p(self.pvalue)}; {how})")
            return (f"{b} may be worse than {a} by more than {m}{unit} ({share}the {level} "
                    f"interval of {b} − {a}, {ci}, reaches below -{m}; {_p(self.pvalue)}; "
                    f"{how})")
        if self.conclusive:
            return (f"{b} and {a} are equivalent within ±{m}{unit} ({share}{level} interval "
                    f"of {b} − {a} {ci}, {_p(self.pvalue)}; {how})")
        return (f"{b} and {a} are not shown equivalent within ±{m}{unit} ({share}the {level} "
                f"interval of {b} − {a}, {ci}, reaches outside; {_p(self.pvalue)}; {how})")

    def as_dict(self) -> dict[str, object]:
        """JSON-ready summary (NaN as ``None``)."""
        return {"test": self.test, "method": self.method, "margin": self.margin,
                "percent": self.percent, "alpha": self.alpha, "p": _none(self.pvalue),
                "statistic": _none(self.statistic), "mean_diff": _none(self.mean_diff),
                "interval": [_none(self.ci_low), _none(self.ci_high)],
                "verdict": ("not worse" if self.test == "noninferiority" else "equivalent")
                if self.conclusive else ("may be worse" if self.test == "noninferiority"
                                         else "not shown equivalent")}


def _none(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


def _num(x: float, digits: int) -> str:
    return f"{x:+.{digits}f}"


_p = p_text


def margin_value(margin: Margin, baseline_mean: float, *, function: str = "margin_value"
                 ) -> tuple[float, float | None]:
    """The margin in measure units, and the percentage if it was given as one.

    >>> margin_value(0.005, 0.4)
    (0.005, None)
    >>> margin_value("2.5%", 0.4)
    (0.01, 2.5)
    """
    constraint = "a number > 0 or a percentage such as '1%' of the baseline mean"
    if isinstance(margin, str):
        text = margin.strip()
        if not text.endswith("%"):
            raise invalid_parameter("margin", function, constraint, margin)
        try:
            percent = float(text[:-1])
        except ValueError:
            raise invalid_parameter("margin", function, constraint, margin) from None
        if not (math.isfinite(percent) and percent > 0):
            raise invalid_parameter("margin", function, constraint, margin)
        value = abs(baseline_mean) * percent / 100.0
        if not value > 0:
            raise ValueError(f"a margin of {text} of the baseline mean is 0: the baseline "
                             f"mean is {baseline_mean}")
        return float(round(value, 15)), percent
    if (isinstance(margin, bool) or not isinstance(margin, numbers.Real)
            or not (math.isfinite(margin) and margin > 0)):
        raise invalid_parameter("margin", function, constraint, margin)
    return float(margin), None


def _check(a: ArrayLike, b: ArrayLike, margin: Margin, alpha: float, method: str,
           n_resamples: int, rng: RngLike, fn: str
           ) -> tuple[FloatArray, float, float, float | None, float]:
    alpha = check(alpha, "alpha", fn, PROBABILITY)
    if not alpha < 0.5:
        raise invalid_parameter("alpha", fn, "a number strictly between 0 and 0.5", alpha)
    check(method, "method", fn, Options(MARGIN_METHODS))
    check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    check_rng(rng, fn)
    d = paired_diff(a, b)
    base = float(np.mean(np.asarray(a, dtype=np.float64)))
    value, percent = margin_value(margin, base, function=fn)
    return d, alpha, value, percent, base


def noninferiority_test(a: ArrayLike, b: ArrayLike, *, margin: Margin, alpha: float = 0.05,
                        method: Literal["t", "bootstrap"] = "t", n_resamples: int = 10_000,
                        rng: RngLike = None) -> MarginResult:
    """Is ``b`` not worse than ``a`` by more than ``margin``? (``d = b - a``)

    Parameters
    ----------
    a, b : array_like
        Aligned per-query values of the baseline and the candidate (at least 2).
    margin : float or str
        The largest loss the team accepts: a number in the measure's units, or
        ``"P%"`` of ``mean(a)``.
    alpha : float, default 0.05
        The level of the one-sided test (below 0.5); the interval is ``1 - 2 alpha``.
    method : {"t", "bootstrap"}, default "t"
    n_resamples : int, default 10_000
        bootstrap only.
    rng : None, int or numpy.random.Generator
        bootstrap only: seed or generator.

    Returns
    -------
    MarginResult
        ``test="noninferiority"``; ``conclusive`` when ``pvalue < alpha``.

    Examples
    --------
    >>> res = noninferiority_test([0.5, 0.4, 0.6, 0.3], [0.49, 0.41, 0.58, 0.31], margin=0.05)
    >>> res.conclusive, res.confidence_interval().low > -0.05
    (True, True)
    """
    return _margin_test(a, b, margin, alpha, method, n_resamples, rng, "noninferiority",
                        "noninferiority_test")


def equivalence_test(a: ArrayLike, b: ArrayLike, *, margin: Margin, alpha: float = 0.05,
                     method: Literal["t", "bootstrap"] = "t", n_resamples: int = 10_000,
                     rng: RngLike = None) -> MarginResult:
    """Are ``a`` and ``b`` equivalent within ``±margin``? TOST (``d = b - a``).

    Parameters are those of :func:`noninferiority_test`. The t version equals
    ``statsmodels.stats.weightstats.ttost_paired(b, a, -margin, margin)``.

    Returns
    -------
    MarginResult
        ``test="equivalence"``; ``pvalue`` is the larger of the two one-sided p-values
        (``pvalue_lower``: ``mean(d) > -margin``, ``pvalue_upper``: ``mean(d) < margin``).

    Examples
    --------
    >>> res = equivalence_test([0.5, 0.4, 0.6, 0.3], [0.49, 0.41, 0.58, 0.31], margin=0.05)
    >>> res.conclusive, res.pvalue == max(res.pvalue_lower, res.pvalue_upper)
    (True, True)
    """
    return _margin_test(a, b, margin, alpha, method, n_resamples, rng, "equivalence",
                        "equivalence_test")


def _margin_test(a: ArrayLike, b: ArrayLike, margin: Margin, alpha: float, method: str,
                 n_resamples: int, rng: RngLike, test: str, fn: str) -> MarginResult:
    """The parameters of public function ``fn`` checked, then ``test`` (``"noninferiority"``
    or ``"equivalence"``) by the t or the bootstrap kernel."""
    d, alpha, value, percent, base = _check(a, b, margin, alpha, method, n_resamples, rng, fn)
    if method == "t":
        return t_margin(d, value, percent, base, alpha, test)
    theta = bootstrap_means(d[:, None], n_resamples, check_rng(rng, fn))[:, 0]
    return bootstrap_margin(theta, d, value, percent, base, alpha, test)


# -------------------------------------------------------------------------- kernels


def t_margin(d: FloatArray, margin: float, percent: float | None, base: float, alpha: float,
              test: str) -> MarginResult:
    """The t versions, with scipy's arithmetic (mean, ``sd / sqrt(n)``)."""
    n = d.size
    df = n - 1.0
    mean = float(d.mean())
    se = float(np.sqrt(((d - mean) ** 2).sum() / df / n))
    t_low = _t(mean + margin, se)  # H0: mean <= -margin
    p_low = float(special.stdtr(df, -t_low))
    t_high = _t(mean - margin, se)  # H0: mean >= margin
    p_high = float(special.stdtr(df, t_high)) if test == "equivalence" else math.nan
    q = float(special.stdtrit(df, 1.0 - alpha))
    low, high = mean - q * se, mean + q * se
    if test == "noninferiority":
        statistic, p = t_low, p_low
    else:
        statistic, p = (t_low, p_low) if p_low >= p_high else (t_high, p_high)
    return MarginResult(test, "t", statistic, p, p_low, p_high, margin, percent, base, alpha,
                        n, mean, low, high, df=df, std_err=se)


def _t(x: float, se: float) -> float:
    if se > 0:
        return x / se
    return 0.0 if x == 0 else math.copysign(math.inf, x)


def bootstrap_margin(theta: FloatArray, d: FloatArray, margin: float, percent: float | None,
                      base: float, alpha: float, test: str) -> MarginResult:
    """The bootstrap versions from the resampled means ``theta`` of ``d``."""
    B = theta.size
    p_low = (np.count_nonzero(theta <= -margin) + 1.0) / (B + 1.0)
    p_high = ((np.count_nonzero(theta >= margin) + 1.0) / (B + 1.0)
              if test == "equivalence" else math.nan)
    p = p_low if test == "noninferiority" else max(p_low, p_high)
    low, high = np.quantile(theta, [alpha, 1.0 - alpha])
    mean = float(d.mean())
    return MarginResult(test, "bootstrap", mean, float(p), float(p_low), float(p_high),
                        margin, percent, base, alpha, d.size, mean, float(low), float(high),
                        n_resamples=B, bootstrap_distribution=theta)
