"""Prediction-powered inference (PPI++) for means: a model's labels corrected by a few
people's labels, with an interval that stays valid when the model is biased.

Two forms of the same estimator, both vectorised over leading axes:

* :func:`ppi_mean` -- the textbook form (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic,
  *Science* 2023; the tuned weight of PPI++, Angelopoulos, Duchi & Zrnic 2023): ``n``
  items with a person's label ``y`` and the model's ``f``, and ``N`` items with the
  model's label only. With a weight λ,

      θ̂(λ) = mean_N(λ f̃) + mean_n(y − λ f),
      var  = λ² var(f̃) / N + var(y − λ f) / n,
      λ̂   = cov(y, f) / ((1 + n/N) var(f))    (the variance's minimum, in [0, 1]),

  and the interval θ̂ ± z·√var. λ = 0 is the people-only mean; λ = 1 is plain PPI.
* :func:`ppi_clusters` -- the design-based form used for search measures, where the
  unit of sampling for the interval is a *query* (a cluster of labeled results) and
  each result was given to people with a known inclusion probability π (Zrnic &
  Candès, "Active statistical inference", 2024, write PPI this way). For a linear
  measure Σ c·label of a query (DCG@K: c = the discount of the shown position; a
  difference of two systems: the difference of their discounts), the query's value is

      Z_q(λ) = P_q + λ (A_q − H_q),
      P_q = Σ c ξ y / π   (people, Horvitz–Thompson),
      A_q = Σ c f         (the model, every result),
      H_q = Σ c ξ f / π   (the model, on the people's results),

  ξ = 1 when people labeled the result. E[Z_q] is the query's value under the people's
  labels for every λ (E[ξ/π] = 1), so the mean of Z over the queries is unbiased
  whatever the model's bias; its variance over the queries holds both the sampling of
  queries and the sampling of the results people labeled. λ̂ = −cov(P, D)/var(D),
  D = A − H, minimises it (PPI++). A second control variate D₀ = N − M, N = Σ c and
  M = Σ c ξ/π (the model "every gain is 1"), centres the estimator: Z = P + λ D + λ₀ D₀
  with (λ, λ₀) from the 2 × 2 normal equations. Without the model (λ = 0) this is the
  people-only regression estimator; without D₀, Horvitz–Thompson.

Weights of the queries (sampling weights) make the mean Σ w Z / Σ w and its variance
the ratio's linearisation Σ w² (Z − θ̂)² / (Σ w)² · m/(m − 1), m the queries of weight
> 0. Everything here is numpy; nothing runs a model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy import stats as _sps

__all__ = ["ClusterEstimate", "PPIMean", "ppi_bootstrap", "ppi_clusters", "ppi_mean",
           "tau_ap", "tau_ap_many"]

FloatArray = NDArray[np.float64]


@dataclass(frozen=True)
class PPIMean:
    """The textbook PPI++ mean (:func:`ppi_mean`): estimate, standard error, interval and
    the weight λ used."""

    estimate: float
    se: float
    low: float
    high: float
    lam: float


def ppi_mean(y: FloatArray, f: FloatArray, f_unlabeled: FloatArray, *, level: float = 0.95,
             lam: float | None = None, clip: bool = True) -> PPIMean:
    """PPI++ estimate of the mean of ``y`` with its normal interval.

    ``y`` and ``f`` are the people's and the model's labels of the ``n`` labeled items,
    ``f_unlabeled`` the model's labels of ``N`` other items. ``lam=None`` tunes the
    weight: λ̂ = cov(y, f) / ((1 + n/N) var(f ∪ f̃)), 0 when the model's labels are
    constant, clipped to [0, 1] unless ``clip=False``; ``lam=1`` is the original PPI,
    ``lam=0`` the people-only mean. The conventions are those of the authors' reference
    implementation (``ppi_py.ppi_mean_ci``): cov(y, f) and the two standard deviations
    of the interval divide by the count, var(f ∪ f̃) by the count − 1.

    >>> r = ppi_mean(np.array([1.0, 2, 3]), np.array([1.5, 2, 2.5]), np.array([2.0, 3, 4, 3]))
    >>> round(r.lam, 6), round(r.estimate, 6)
    (0.271186, 2.271186)
    """
    y, f, fu = (np.asarray(a, dtype=np.float64) for a in (y, f, f_unlabeled))
    n, big_n = len(y), len(fu)
    if n < 2 or big_n < 2:
        raise ValueError(f"ppi_mean needs at least 2 labeled and 2 unlabeled items, got "
                         f"{n} and {big_n}")
    if lam is None:
        var_f = float(np.var(np.concatenate([f, fu]), ddof=1))
        cov = float(np.mean((y - y.mean()) * (f - f.mean())))
        lam = cov / ((1.0 + n / big_n) * var_f) if var_f > 0 else 0.0
        if clip:
            lam = min(max(lam, 0.0), 1.0)
    estimate = float(np.mean(y - lam * f) + lam * np.mean(fu))
    var = lam ** 2 * float(np.var(fu)) / big_n + float(np.var(y - lam * f)) / n
    se = float(np.sqrt(var))
    z = float(_sps.norm.ppf(0.5 + level / 2.0))
    return PPIMean(estimate, se, estimate - z * se, estimate + z * se, float(lam))


@dataclass(frozen=True)
class ClusterEstimate:
    """:func:`ppi_clusters` per target (arrays over the leading axes): the PPI++
    estimate with its normal interval and weights (λ for the model, λ₀ for the count),
    the people-only estimate (no model: λ = 0, λ₀ tuned) and the model-only mean with
    theirs, and the queries used."""

    estimate: FloatArray
    se: FloatArray
    low: FloatArray
    high: FloatArray
    lam: FloatArray
    lam0: FloatArray
    people: FloatArray
    people_se: FloatArray
    people_low: FloatArray
    people_high: FloatArray
    people_lam0: FloatArray
    model: FloatArray
    model_se: FloatArray
    model_low: FloatArray
    model_high: FloatArray
    queries: NDArray[np.int64]


def _moments(w: FloatArray, x: FloatArray, y: FloatArray
             ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Weighted means of x and y along the last axis and the variance-of-the-mean
    covariance Σ w²(x − x̄)(y − ȳ)/(Σ w)² · m/(m − 1) (NaN with m < 2)."""
    total = w.sum(axis=-1)
    m = (w > 0).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mx = (w * x).sum(axis=-1) / total
        my = (w * y).sum(axis=-1) / total
        cov = ((w ** 2) * (x - mx[..., None]) * (y - my[..., None])).sum(axis=-1) / total ** 2
        cov = np.where(m >= 2, cov * m / np.maximum(m - 1, 1), np.nan)
    return mx, my, cov


def _weights(s1: FloatArray, s0: FloatArray, a: FloatArray, b: FloatArray, c: FloatArray,
             lam: FloatArray | None) -> tuple[FloatArray, FloatArray]:
    """(λ, λ₀) minimising var(P + λ D + λ₀ D₀) from s1 = cov(P, D), s0 = cov(P, D₀),
    a = var(D), b = cov(D, D₀), c = var(D₀); ``lam`` fixes λ (λ₀ then tuned alone). A
    control variate of variance 0 gets weight 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        c_ok = c > 1e-12 * np.maximum(np.abs(c) + np.abs(a), 1e-300)
        a_ok = a > 1e-12 * np.maximum(np.abs(c) + np.abs(a), 1e-300)
        if lam is None:
            det = a * c - b * b
            both = a_ok & c_ok & (det > 1e-12 * np.maximum(a * c, 1e-300))
            l1 = np.where(both, -(c * s1 - b * s0) / np.where(both, det, 1.0),
                          np.where(a_ok, -s1 / np.where(a_ok, a, 1.0), 0.0))
            l0 = np.where(both, -(a * s0 - b * s1) / np.where(both, det, 1.0),
                          np.where(~a_ok & c_ok, -s0 / np.where(c_ok, c, 1.0), 0.0))
            return l1, l0
        l1 = np.broadcast_to(np.asarray(lam, dtype=np.float64), s1.shape).copy()
        l0 = np.where(c_ok, -(s0 + l1 * b) / np.where(c_ok, c, 1.0), 0.0)
        return l1, l0


def ppi_clusters(people: FloatArray, model: FloatArray, model_sampled: FloatArray,
                 weight: FloatArray, *, count: FloatArray | None = None,
                 count_sampled: FloatArray | None = None, level: float = 0.95,
                 lam: FloatArray | float | None = None) -> ClusterEstimate:
    """PPI++ over queries from the per-query sums P, A, H (module docstring).

    All arrays have the queries on the last axis (``weight`` broadcasts; weight 0 leaves
    a query out of a target). ``count`` and ``count_sampled`` (N = Σ c, M = Σ c ξ/π)
    add D₀ = N − M as a second control variate: it fills the results people did not
    label with a constant (λ₀), which centres the estimator (a regression estimator);
    without them λ₀ = 0 (Horvitz–Thompson). ``lam=None`` tunes λ (and λ₀) to minimise
    the variance; a number or array fixes λ. The people-only estimate uses D₀ alone.
    """
    p, a, h = (np.asarray(x, dtype=np.float64) for x in (people, model, model_sampled))
    w = np.broadcast_to(np.asarray(weight, dtype=np.float64), p.shape)
    d = a - h
    d0 = (np.zeros_like(p) if count is None or count_sampled is None else
          np.asarray(count, dtype=np.float64) - np.asarray(count_sampled, dtype=np.float64))
    mp, md, s1 = _moments(w, p, d)
    _, md0, s0 = _moments(w, p, d0)
    _, _, v_d = _moments(w, d, d)
    _, _, b = _moments(w, d, d0)
    _, _, v_0 = _moments(w, d0, d0)
    _, _, v_p = _moments(w, p, p)
    ma, _, v_a = _moments(w, a, a)
    lam_ = None if lam is None else np.asarray(lam, dtype=np.float64)
    l1, l0 = _weights(s1, s0, v_d, b, v_0, lam_)
    est = mp + l1 * md + l0 * md0
    var = np.maximum(v_p + 2 * (l1 * s1 + l0 * s0) + l1 ** 2 * v_d + 2 * l1 * l0 * b
                     + l0 ** 2 * v_0, 0.0)
    _, p0 = _weights(s1, s0, v_d, b, v_0, np.zeros_like(s1))
    people_est = mp + p0 * md0
    var_p = np.maximum(v_p + 2 * p0 * s0 + p0 ** 2 * v_0, 0.0)
    z = float(_sps.norm.ppf(0.5 + level / 2.0))
    se, se_p, se_a = np.sqrt(var), np.sqrt(var_p), np.sqrt(np.maximum(v_a, 0))
    return ClusterEstimate(est, se, est - z * se, est + z * se, l1, l0, people_est, se_p,
                           people_est - z * se_p, people_est + z * se_p, p0, ma, se_a,
                           ma - z * se_a, ma + z * se_a, (w > 0).sum(axis=-1))


def ppi_bootstrap(people: FloatArray, model: FloatArray, model_sampled: FloatArray,
                  weight: FloatArray, counts: FloatArray, *, count: FloatArray | None = None,
                  count_sampled: FloatArray | None = None
                  ) -> tuple[FloatArray, FloatArray, FloatArray]:
    """The PPI++ estimate (λ, λ₀ tuned again in each resample), the people-only and the
    model-only mean of every bootstrap resample of the queries.

    ``people``, ``model``, ``model_sampled``, ``weight`` (and ``count``,
    ``count_sampled``): ``(T, m)`` (T targets over the same m queries, weight 0 where a
    target leaves a query out); ``counts``: ``(B, m)``, how often each query is drawn
    (:func:`~ireval_core.labels.kernels.resample_counts`). A query drawn twice counts as
    two queries of its weight. Returns three ``(B, T)`` arrays; every sum is a matrix
    product.
    """
    p, a, h = (np.atleast_2d(np.asarray(x, dtype=np.float64))
               for x in (people, model, model_sampled))
    w = np.broadcast_to(np.asarray(weight, dtype=np.float64), p.shape)
    d = a - h
    d0 = (np.zeros_like(p) if count is None or count_sampled is None else
          np.atleast_2d(np.asarray(count, dtype=np.float64)
                        - np.asarray(count_sampled, dtype=np.float64)))
    w2_ = w ** 2
    terms = [w, w2_, w * p, w * d, w * d0, w * a, w2_ * p, w2_ * d, w2_ * d0, w2_ * p * d,
             w2_ * p * d0, w2_ * d * d, w2_ * d * d0, w2_ * d0 * d0]
    n_t = p.shape[0]
    # every sum over the queries of every resample in one matrix product: (B, 14 T)
    sums = np.asarray(counts, dtype=np.float64) @ np.concatenate(terms).T
    (w1, w2, sp, sd, sd0, sa, qp, qd, qd0, qpd, qpd0, qdd, qdd0, qd0d0) = (
        sums[:, i * n_t:(i + 1) * n_t] for i in range(len(terms)))

    def cov(sxy: FloatArray, sx: FloatArray, sy: FloatArray, mx: FloatArray, my: FloatArray
            ) -> FloatArray:
        # Σ n w² (x − x̄)(y − ȳ), expanded into sums over the queries
        return sxy - my * sx - mx * sy + mx * my * w2

    with np.errstate(invalid="ignore", divide="ignore"):
        mp, md, md0, ma = sp / w1, sd / w1, sd0 / w1, sa / w1
        s1, s0 = cov(qpd, qp, qd, mp, md), cov(qpd0, qp, qd0, mp, md0)
        v_d, b = cov(qdd, qd, qd, md, md), cov(qdd0, qd, qd0, md, md0)
        v_0 = cov(qd0d0, qd0, qd0, md0, md0)
        l1, l0 = _weights(s1, s0, v_d, b, v_0, None)
        _, p0 = _weights(s1, s0, v_d, b, v_0, np.zeros_like(s1))
    return mp + l1 * md + l0 * md0, mp + p0 * md0, ma


def tau_ap(estimated: FloatArray, truth: FloatArray) -> float:
    """Yilmaz, Aslam & Robertson's AP correlation τ_AP (SIGIR 2008) of one ranking
    against the truth (higher value = ranked higher).

    Order the items by ``estimated`` (best first); for the item at rank i ≥ 2, C(i) is
    how many of the i − 1 items above it also lie above it in ``truth``:

        τ_AP = 2/(N − 1) · Σ_{i=2..N} C(i)/(i − 1) − 1.

    Errors at the top cost more than Kendall's τ charges; τ_AP = τ when errors are
    spread evenly. Not symmetric. Ties in ``estimated`` are broken by ``truth``
    (favourably), ties in ``truth`` count as not above. NaN with fewer than 2 items.

    >>> tau_ap(np.array([3.0, 2, 1]), np.array([3.0, 2, 1]))
    1.0
    >>> round(tau_ap(np.array([3.0, 2, 1]), np.array([2.0, 3, 1])), 4)
    0.0
    """
    return float(tau_ap_many(np.asarray(estimated)[None, :], np.asarray(truth)[None, :])[0])


def tau_ap_many(estimated: FloatArray, truth: FloatArray) -> FloatArray:
    """:func:`tau_ap` of each row of ``estimated`` against the same row of ``truth``
    (both ``(B, N)``); NaN rows give NaN."""
    e = np.atleast_2d(np.asarray(estimated, dtype=np.float64))
    t = np.atleast_2d(np.asarray(truth, dtype=np.float64))
    rows, n = e.shape
    out = np.full(rows, np.nan)
    if n < 2:
        return out
    order = np.lexsort((-t, -e), axis=-1)  # by estimated desc, ties by truth desc
    ts = np.take_along_axis(t, order, axis=-1)
    above = ts[:, :, None] > ts[:, None, :]  # [b, j, i]: item j above item i in truth
    upper = np.triu(np.ones((n, n), dtype=bool), k=1)  # j < i in estimated order
    c = (above & upper[None]).sum(axis=1)[:, 1:]  # C(i), i = 2..N
    value = 2.0 / (n - 1) * (c / np.arange(1, n)).sum(axis=1) - 1.0
    bad = np.isnan(e).any(axis=1) | np.isnan(t).any(axis=1)
    out[~bad] = value[~bad]
    return out
