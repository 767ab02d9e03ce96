"""Agreement between raters: Cohen's, Fleiss' and weighted kappas, Krippendorff's alpha, drift.

Labeling rounds give several raters the same (query, document) pairs. This module says
how far they agree, per round and per rater, and flags a rater who drifts. Every
function takes the **long label table** (:mod:`.label_table`:
``Judgments.label_table()``): a DataFrame with one row per labeled (round, query, doc,
rater) and the columns

========  ===========================================================================
round     the labeling round (str)
query     the query id (str)
doc       the document id (str)
rater     who gave the label (str; ``""`` when the file has no rater column)
label     the grade (float64); NaN = unlabeled, left out of every statistic
========  ===========================================================================

A **unit** is one (round, query, doc); the same pair in two rounds is two units. A
unit is *pairable* when it carries at least two labels. Everything is vectorised over
units and labels (integer codes, ``np.bincount``, sparse products); the only Python
loops are over rounds and raters, which are few.

* :func:`cohen_kappa` -- two aligned label arrays, unweighted, linear or quadratic
  weights (exactly :func:`sklearn.metrics.cohen_kappa_score`).
* :func:`fleiss_kappa` -- any number of raters per unit (Fleiss 1971).
* :func:`krippendorff_alpha` -- nominal, ordinal or interval distances, missing labels
  allowed (Krippendorff 2011; equal to the ``krippendorff`` package).
* :func:`rater_report` -- per round, per rater against the leave-one-out consensus,
  the rater-vs-consensus confusion matrix, the most disputed pairs and the drift rule
  (:data:`DRIFT_KAPPA_GAP`, :data:`DRIFT_MEAN_SHIFT`).

>>> import pandas as pd
>>> table = pd.DataFrame({
...     "round": ["2024-01"] * 6, "query": ["q1"] * 6,
...     "doc": ["a", "a", "b", "b", "c", "c"], "rater": ["ann", "bob"] * 3,
...     "label": [3.0, 3.0, 1.0, 0.0, 2.0, 2.0]})
>>> round(krippendorff_alpha(table, level="ordinal"), 4)
0.9495
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from numbers import Real
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

from ..errors import invalid_parameter
from ..params import Interval, Options, check
from .label_table import CodedTable, LabelCodes, code_table

__all__ = [
    "BASELINE_MAX_RATERS",
    "COMBINE_RULES",
    "DISPUTED_COLUMNS",
    "DRIFT_KAPPA_GAP",
    "DRIFT_MEAN_SHIFT",
    "LEVELS",
    "PER_RATER_COLUMNS",
    "PER_ROUND_COLUMNS",
    "RaterReport",
    "cohen_kappa",
    "fleiss_kappa",
    "krippendorff_alpha",
    "rater_report",
]

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

Weights = Literal[None, "linear", "quadratic"]
Level = Literal["nominal", "ordinal", "interval"]
Combine = Literal["mean", "median", "majority"]

LEVELS = ("nominal", "ordinal", "interval")
"""Levels of measurement of :func:`krippendorff_alpha`."""

COMBINE_RULES = ("mean", "median", "majority")
"""Rules that turn the other raters' labels of a unit into the consensus."""

DRIFT_KAPPA_GAP = 0.2
"""A rater is flagged in a round when their kappa vs the consensus is more than this
below the other raters' (the median of their kappas, each against a consensus that
leaves the flagged rater out too). See :class:`RaterReport`."""

DRIFT_MEAN_SHIFT = 0.5
"""A rater is flagged in a round when their mean label differs by more than this many
grades from their own mean label over the other rounds, and also by more than this
from how the other raters' means moved. See :class:`RaterReport`."""

PER_ROUND_COLUMNS = ("round", "raters", "units", "pairable_units", "fleiss", "alpha",
                     "cohen", "cohen_linear", "cohen_quadratic")
"""Columns of :attr:`RaterReport.per_round`."""

PER_RATER_COLUMNS = ("round", "rater", "labels", "mean_label", "kappa_vs_consensus",
                     "agreement_vs_consensus", "drift_flag", "drift_reason",
                     "units_vs_consensus", "kappa_others_median", "mean_label_other_rounds",
                     "others_mean_shift")
"""Columns of :attr:`RaterReport.per_rater`."""

DISPUTED_COLUMNS = ("round", "query", "doc", "labels", "spread", "n_labels", "mean_label")
"""Columns of :attr:`RaterReport.disputed`."""

_WEIGHTS: tuple[Weights, ...] = (None, "linear", "quadratic")
_WEIGHT = Options(_WEIGHTS)
_THRESHOLD = Interval(Real, 0, None, closed="left")  # a finite number >= 0


# ----------------------------------------------------------------------------- kappa kernel


def _weight_matrix(k: int, weights: Weights) -> FloatArray:
    """Disagreement weights over label positions 0..k-1 (sklearn's definition)."""
    idx = np.arange(k, dtype=np.float64)
    diff = idx[:, None] - idx[None, :]
    if weights is None:
        return (diff != 0).astype(np.float64)
    if weights == "linear":
        return np.abs(diff)
    return diff ** 2


def _kappas(counts: NDArray[Any], weights: Weights) -> FloatArray:
    """Cohen's kappa of each confusion matrix of ``counts`` (shape P x k x k).

    κ = 1 − Σ w·o / Σ w·e with o the observed shares and e the product of the
    marginal shares; NaN for an empty matrix or when Σ w·e = 0 (one label only).
    """
    counts = np.asarray(counts, dtype=np.float64)
    w = _weight_matrix(counts.shape[-1], weights)
    n = counts.sum(axis=(1, 2))
    rows, cols = counts.sum(axis=2), counts.sum(axis=1)
    observed = np.einsum("pij,ij->p", counts, w)
    expected = np.einsum("pi,pj,ij->p", rows, cols, w)
    ok = (n > 0) & (expected > 0)
    out = np.full(len(n), np.nan)
    # κ = 1 − (Σ w o / n) / (Σ w r c / n²) = 1 − n Σ w o / Σ w r c
    out[ok] = 1.0 - n[ok] * observed[ok] / expected[ok]
    return out


def cohen_kappa(a: ArrayLike, b: ArrayLike, *, weights: Weights = None,
                labels: ArrayLike | None = None) -> float:
    """Cohen's kappa between two raters' labels of the same items.

    κ = 1 − Σ w_ij o_ij / Σ w_ij e_ij, where o is the observed share of items with
    labels (i, j), e = (row share) × (column share) is what chance gives, and w the
    disagreement weights over the *positions* i, j of the labels in the sorted list of
    labels seen (or in ``labels``): ``None`` → w = [i ≠ j], so that κ = (p_o − p_e) /
    (1 − p_e); ``"linear"`` → |i − j|; ``"quadratic"`` → (i − j)². This is exactly
    :func:`sklearn.metrics.cohen_kappa_score`. 1 = perfect agreement, 0 = what chance
    gives, < 0 = worse than chance.

    Parameters
    ----------
    a, b:
        The two raters' labels, aligned item by item. An item where either label is
        NaN (unlabeled) is left out.
    weights:
        ``None``, ``"linear"`` or ``"quadratic"``.
    labels:
        The label scale whose positions the weights use (must contain every label of
        ``a`` and ``b``); default: the distinct labels of ``a`` and ``b``. Give the full
        scale (e.g. ``[0, 1, 2, 3]``) so that weighted kappas of raters who never used
        some grade stay comparable.

    Returns
    -------
    float
        NaN when no item is left or when chance agreement is total (Σ w e = 0, e.g.
        both raters used one and the same label), as sklearn.

    Examples
    --------
    >>> cohen_kappa([0, 1, 1, 2], [0, 1, 2, 2])
    0.6363636363636364
    >>> round(cohen_kappa([0, 1, 1, 2], [0, 1, 2, 2], weights="quadratic"), 4)
    0.8
    >>> round(cohen_kappa([0, 1, 3], [0, 1, 2], weights="linear", labels=[0, 1, 2, 3]), 4)
    0.7273
    """
    check(weights, "weights", "cohen_kappa", _WEIGHT)
    x = np.asarray(a, dtype=np.float64).ravel()
    y = np.asarray(b, dtype=np.float64).ravel()
    if len(x) != len(y):
        raise invalid_parameter("b", "cohen_kappa", f"as long as a ({len(x)} labels)",
                                f"{len(y)} labels")
    keep = ~(np.isnan(x) | np.isnan(y))
    x, y = x[keep], y[keep]
    if labels is None:
        scale = np.unique(np.concatenate((x, y)))
    else:
        scale = np.unique(np.asarray(labels, dtype=np.float64))
        if np.isnan(scale).any() or not np.isin(np.concatenate((x, y)), scale).all():
            raise invalid_parameter("labels", "cohen_kappa",
                                    "a list holding every label of a and b", labels)
    k = len(scale)
    if len(x) == 0 or k == 0:
        return float("nan")
    ix, iy = np.searchsorted(scale, x), np.searchsorted(scale, y)
    counts = np.bincount(ix * k + iy, minlength=k * k).reshape(1, k, k)
    return float(_kappas(counts, weights)[0])


# ----------------------------------------------------------------------------- kernels
# Every kernel takes rows sorted by (unit, value): the layout of :class:`CodedTable`.


def _unit_values(unit: IntArray, value: IntArray
                 ) -> tuple[IntArray, IntArray, FloatArray, FloatArray]:
    """Per (unit, value) present, over the pairable units (two labels or more) only:
    the unit (renumbered 0..), the value, the count n_uc and the unit's labels m_u."""
    n = len(unit)
    if n == 0:
        z = np.zeros(0, dtype=np.int64)
        return z, z, np.zeros(0), np.zeros(0)
    new = np.ones(n, dtype=bool)
    new[1:] = (unit[1:] != unit[:-1]) | (value[1:] != value[:-1])
    starts = np.flatnonzero(new)
    counts = np.diff(np.append(starts, n)).astype(np.float64)
    g_unit, g_value = unit[starts], value[starts]
    m_unit = np.bincount(unit)
    pairable = m_unit[g_unit] >= 2
    g_unit, g_value, counts = g_unit[pairable], g_value[pairable], counts[pairable]
    _, g_unit = np.unique(g_unit, return_inverse=True)
    g_unit = np.asarray(g_unit, dtype=np.int64).ravel()
    m = np.asarray(np.bincount(g_unit, weights=counts), dtype=np.float64)
    return g_unit, g_value, counts, m[g_unit]


def _fleiss(unit: IntArray, value: IntArray, n_values: int) -> float:
    g_unit, g_value, c, _ = _unit_values(unit, value)
    if len(c) == 0:
        return float("nan")
    m_u = np.bincount(g_unit, weights=c)
    p_unit = (np.bincount(g_unit, weights=c * c) - m_u) / (m_u * (m_u - 1.0))
    p_bar = float(p_unit.mean())
    p_j = np.bincount(g_value, weights=c, minlength=n_values) / m_u.sum()
    p_e = float((p_j ** 2).sum())
    if p_e >= 1.0 - 1e-15:
        return float("nan")
    return (p_bar - p_e) / (1.0 - p_e)


def _delta2(scale: FloatArray, n_v: FloatArray, level: Level) -> FloatArray:
    """Krippendorff's squared distances between the values of ``scale``."""
    idx = np.arange(len(scale))
    if level == "nominal":
        return (idx[:, None] != idx[None, :]).astype(np.float64)
    if level == "interval":
        return (scale[:, None] - scale[None, :]) ** 2
    lo, hi = np.minimum(idx[:, None], idx[None, :]), np.maximum(idx[:, None], idx[None, :])
    cum = np.concatenate(([0.0], np.cumsum(n_v)))
    between = cum[hi + 1] - cum[lo]  # Σ n_g for g from lo to hi
    return (between - (n_v[lo] + n_v[hi]) / 2.0) ** 2


def _alpha(unit: IntArray, value: IntArray, scale: FloatArray, level: Level) -> float:
    n_values = len(scale)
    g_unit, g_value, c, m = _unit_values(unit, value)
    if len(c) == 0:
        return float("nan")
    shape = (int(g_unit[-1]) + 1, n_values)
    counts = sparse.csr_matrix((c, (g_unit, g_value)), shape=shape)
    scaled = sparse.csr_matrix((c / (m - 1.0), (g_unit, g_value)), shape=shape)
    # coincidences o_ck = Σ_u (n_uc n_uk − [c = k] n_uc) / (m_u − 1)
    o = np.asarray((counts.T @ scaled).todense(), dtype=np.float64)
    o -= np.diag(np.bincount(g_value, weights=c / (m - 1.0), minlength=n_values))
    n_v = o.sum(axis=0)
    n = float(n_v.sum())
    d2 = _delta2(scale, n_v, level)
    expected = float((np.outer(n_v, n_v) * d2).sum()) / (n - 1.0) if n > 1 else 0.0
    if expected <= 1e-12 * max(n, 1.0):
        return float("nan")
    return 1.0 - float((o * d2).sum()) / expected


def _pairs_within_units(unit: IntArray) -> tuple[IntArray, IntArray]:
    """All index pairs (i, j), i < j, of rows of the same unit (rows sorted by unit)."""
    n = len(unit)
    if n == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    new = np.flatnonzero(np.r_[True, unit[1:] != unit[:-1]])
    sizes = np.diff(np.r_[new, n])
    pos = np.arange(n) - np.repeat(new, sizes)
    partners = np.repeat(sizes, sizes) - 1 - pos  # rows after this one in its unit
    left = np.repeat(np.arange(n), partners)
    first = np.cumsum(partners) - partners
    step = np.arange(len(left)) - np.repeat(first, partners) + 1
    return left, left + step


def _pairwise_cohen(rater: IntArray, unit: IntArray, value: IntArray, n_raters: int,
                    n_values: int) -> tuple[float, float, float]:
    """Mean over rater pairs of Cohen's kappa (unweighted, linear, quadratic) on the
    units both labeled; weights over the positions of the whole label scale."""
    left, right = _pairs_within_units(unit)
    if len(left) == 0:
        return float("nan"), float("nan"), float("nan")
    swap = rater[left] > rater[right]
    a, b = np.where(swap, right, left), np.where(swap, left, right)
    pair_codes, pair = np.unique(rater[a] * n_raters + rater[b], return_inverse=True)
    k = n_values
    counts = np.bincount(np.asarray(pair, dtype=np.int64).ravel() * k * k + value[a] * k
                         + value[b], minlength=len(pair_codes) * k * k).reshape(-1, k, k)
    means = []
    for weights in _WEIGHTS:
        kappas = _kappas(counts, weights)
        defined = kappas[~np.isnan(kappas)]
        means.append(float(defined.mean()) if defined.size else float("nan"))
    return means[0], means[1], means[2]


# ----------------------------------------------------------------------------- public stats


def fleiss_kappa(table: pd.DataFrame) -> float:
    """Fleiss' kappa of the long label table: agreement of any number of raters.

    Units are (round, query, doc); every non-NaN label of a unit is one rating (who gave
    it does not matter). With n_u ratings of unit u, n_uj of them in category j (the
    distinct label values):

    * P_u = (Σ_j n_uj² − n_u) / (n_u (n_u − 1)), the share of agreeing rating pairs;
    * P̄ = mean of P_u over the units with n_u ≥ 2 (the others are left out);
    * p_j = Σ_u n_uj / Σ_u n_u over those units, P̄_e = Σ_j p_j²;
    * κ = (P̄ − P̄_e) / (1 − P̄_e).

    With the same number of ratings per unit this is Fleiss (1971); with varying
    numbers P̄ averages the units' own agreement. Labels are nominal categories (a 0 vs
    3 disagreement counts as much as 0 vs 1; :func:`krippendorff_alpha` with
    ``level="ordinal"`` does not). The table is pooled over its rounds: filter it to
    one round for a per-round value (:func:`rater_report` does).

    Returns
    -------
    float
        NaN when no unit has two ratings or when P̄_e = 1 (one category only).

    Examples
    --------
    Three units rated by three raters:

    >>> import pandas as pd
    >>> t = pd.DataFrame({"query": ["q"] * 9, "doc": list("aaabbbccc"),
    ...                   "rater": list("xyz") * 3, "label": [1, 1, 1, 0, 0, 1, 0, 0, 0]})
    >>> round(fleiss_kappa(t), 4)
    0.55
    """
    coded = code_table(table, "fleiss_kappa", need_rater=False)
    return _fleiss(coded.unit, coded.value, len(coded.scale))


def krippendorff_alpha(table: pd.DataFrame, *, level: Level = "ordinal") -> float:
    """Krippendorff's alpha of the long label table (missing labels allowed).

    Units are (round, query, doc), coders the raters, values the distinct labels; NaN
    labels are left out, and so are units with fewer than two labels (not pairable).
    With m_u labels in unit u, the coincidence matrix is
    o_ck = Σ_u (number of ordered pairs of different labels of u valued (c, k)) / (m_u − 1),
    n_c = Σ_k o_ck, n = Σ_c n_c, and

        α = 1 − D_o / D_e = 1 − (n − 1) Σ o_ck δ²_ck / Σ n_c n_k δ²_ck.

    Distances δ²: ``nominal`` 1 when c ≠ k; ``interval`` (c − k)²; ``ordinal``
    (Σ_{g=c..k} n_g − (n_c + n_k)/2)², which uses only the order of the grades and how
    often each is used (Krippendorff 2011). 1 = perfect agreement, 0 = chance,
    negative = systematic disagreement; 0.8 is the usual bar for reliable labels, 0.667
    for tentative conclusions. Equal to ``krippendorff.alpha`` on the reliability
    matrix (raters x units) with the labels seen as the value domain.

    Returns
    -------
    float
        NaN when no unit is pairable or the pairable labels all have one value.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"round": "r1", "query": "q", "doc": list("aabbcc"),
    ...                   "rater": list("xy") * 3, "label": [0, 0, 1, 2, 3, 3]})
    >>> round(krippendorff_alpha(t, level="interval"), 4), \
round(krippendorff_alpha(t, level="nominal"), 4)
    (0.9123, 0.6154)
    """
    level = check(level, "level", "krippendorff_alpha", Options(LEVELS))
    coded = code_table(table, "krippendorff_alpha", need_rater=False)
    return _alpha(coded.unit, coded.value, coded.scale, level)


# ----------------------------------------------------------------------------- consensus


def _snap(values: FloatArray, scale: FloatArray) -> IntArray:
    """Index in ``scale`` of the nearest label to each value (halfway goes up): one
    search among the midpoints between neighbouring grades."""
    midpoints = (scale[1:] + scale[:-1]) / 2.0 - 1e-9
    return np.searchsorted(midpoints, values, side="right").astype(np.int64)


def _leave_one_out(unit: IntArray, label: FloatArray, unit_start: IntArray,
                   combine: Combine) -> FloatArray:
    """For each label, the ``combine`` of the *other* labels of its unit (NaN when there
    is none), before rounding to the scale. Rows sorted by (unit, label)."""
    n = len(label)
    out = np.full(n, np.nan)
    if n == 0:
        return out
    start = unit_start[unit]
    m = unit_start[unit + 1] - start
    others = m >= 2
    if combine == "mean":
        total = np.add.reduceat(label, unit_start[:-1])[unit]
        with np.errstate(divide="ignore", invalid="ignore"):
            value = (total - label) / (m - 1)
    elif combine == "median":
        p = np.arange(n) - start  # position of the label in its sorted unit
        m1 = np.maximum(m - 1, 1)

        def other(k: IntArray) -> FloatArray:  # the k-th smallest of the others
            return label[np.minimum(start + k + (k >= p), n - 1)]

        value = (other((m1 - 1) // 2) + other(m1 // 2)) / 2.0
    else:  # majority: the most frequent other label; a tie goes to the lowest tied label
        new = np.ones(n, dtype=bool)
        new[1:] = (unit[1:] != unit[:-1]) | (label[1:] != label[:-1])
        g = np.cumsum(new) - 1
        g_start = np.flatnonzero(new)  # (unit, label) runs, labels ascending in a unit
        g_count = np.diff(np.append(g_start, n)).astype(np.float64)
        g_value, g_unit = label[g_start], unit[g_start]
        n_units = len(unit_start) - 1
        top = np.zeros(n_units)
        np.maximum.at(top, g_unit, g_count)
        is_top = g_count == top[g_unit]
        k_top = np.bincount(g_unit, weights=is_top, minlength=n_units)

        def lowest(mask: NDArray[np.bool_]) -> FloatArray:  # lowest label of the runs
            out_u = np.full(n_units, np.inf)
            np.minimum.at(out_u, g_unit[mask], g_value[mask])
            return out_u

        low_top = lowest(is_top)
        second_top = lowest(is_top & (g_value > low_top[g_unit]))
        low_next = lowest(g_count == top[g_unit] - 1)
        c, top_u = g_count[g], top[unit]
        only_top = (c == top_u) & (k_top[unit] == 1)  # the single mode: now it ties
        shared = (c == top_u) & (k_top[unit] > 1)     # one of several modes
        value = np.where(only_top, np.minimum(label, low_next[unit]),
                         np.where(shared & (label == low_top[unit]), second_top[unit],
                                  low_top[unit]))
    out[others] = value[others]
    return out


def _consensus_kappa(unit: IntArray, rater: IntArray, label: FloatArray, value: IntArray,
                     scale: FloatArray, combine: Combine, n_raters: int) -> FloatArray:
    """Quadratic-weighted kappa of each rater against the leave-one-out consensus of
    the given rows (sorted by unit, then label), NaN for a rater with nothing scored."""
    n = len(unit)
    k = len(scale)
    if n == 0 or k == 0:
        return np.full(n_raters, np.nan)
    new = np.ones(n, dtype=bool)
    new[1:] = unit[1:] != unit[:-1]
    local = np.cumsum(new, dtype=np.int64) - 1
    start = np.append(np.flatnonzero(new), n).astype(np.int64)
    consensus = _leave_one_out(local, label, start, combine)
    scored = ~np.isnan(consensus)
    cons = _snap(consensus[scored], scale)
    counts = np.bincount(rater[scored] * k * k + value[scored] * k + cons,
                         minlength=n_raters * k * k).reshape(n_raters, k, k)
    return _kappas(counts, "quadratic")


BASELINE_MAX_RATERS = 12
"""Above this many raters in a round, the kappa baseline of the drift rule is the plain
median of the other raters' ``kappa_vs_consensus`` (one rater barely moves a consensus
of so many), which saves a pass over the round per rater."""


def _kappa_baselines(c: CodedTable, combine: Combine, kappa: FloatArray,
                     labels: IntArray) -> FloatArray:
    """Per (round, rater): the median, over the other raters of the round, of their kappa
    against a consensus that leaves this rater out too (so that a drifting rater does
    not drag down the agreement they are compared with). A loop over rounds and raters;
    each step is vectorised over the round's units."""
    n_rounds, n_raters = len(c.rounds), len(c.raters)
    out = np.full(n_rounds * n_raters, np.nan)
    for r in range(n_rounds):
        rows = c.round_rows(r)
        present = np.flatnonzero(labels[r * n_raters:(r + 1) * n_raters] > 0)
        for i in present:
            if len(present) > BASELINE_MAX_RATERS:
                others = kappa[r * n_raters + present[present != i]]
            else:
                keep = c.rater[rows] != i
                others = _consensus_kappa(
                    c.unit[rows][keep], c.rater[rows][keep], c.label[rows][keep],
                    c.value[rows][keep], c.scale, combine, n_raters)[present[present != i]]
            others = others[~np.isnan(others)]
            if others.size:
                out[r * n_raters + i] = float(np.median(others))
    return out


# ----------------------------------------------------------------------------- report


_DEFINITIONS = {
    "raters": "distinct raters with at least one label in the round",
    "units": "distinct (query, doc) pairs labeled in the round",
    "pairable_units": "units with at least two labels (the only ones agreement can use)",
    "fleiss": "Fleiss' kappa over the round's units (labels as nominal categories)",
    "alpha": "Krippendorff's alpha, ordinal distances, over the round's units",
    "cohen": "mean over rater pairs of Cohen's kappa on the units both labeled",
    "cohen_linear": "mean over rater pairs of linearly weighted Cohen's kappa (weights |i - j| "
                    "over the positions of the label scale)",
    "cohen_quadratic": "mean over rater pairs of quadratically weighted Cohen's kappa "
                       "(weights (i - j)^2 over the positions of the label scale)",
    "labels": "labels the rater gave in the round",
    "mean_label": "mean of the rater's labels in the round",
    "kappa_vs_consensus": "quadratic-weighted Cohen's kappa between the rater and the "
                          "leave-one-out consensus ({combine} of the other raters' labels "
                          "of the same unit, rounded to the nearest grade of the label "
                          "scale, halfway up), over the units where another rater labeled",
    "agreement_vs_consensus": "share of those units where the rater's label equals the "
                              "consensus",
    "units_vs_consensus": "units the two columns above are computed over",
    "kappa_others_median": "median, over the other raters of the round, of their kappa vs "
                           "a consensus that leaves this rater out too (what this rater's "
                           "kappa is compared with)",
    "mean_label_other_rounds": "mean of the rater's labels in all the other rounds",
    "others_mean_shift": "median, over the other raters of the round, of how far their mean "
                         "label moved from their own mean over the other rounds",
    "drift_flag": "kappa_vs_consensus is more than {gap:g} below kappa_others_median; or "
                  "mean_label differs by more than {shift:g} grade from "
                  "mean_label_other_rounds and that move differs by more than {shift:g} "
                  "grade from others_mean_shift",
    "spread": "highest minus lowest label of the unit",
}


@dataclass(frozen=True, eq=False)
class RaterReport:
    """How far raters agree, per round and per rater, and who drifts.

    Attributes
    ----------
    per_round:
        One row per round (in time order), columns :data:`PER_ROUND_COLUMNS`:
        ``raters``, ``units`` ((query, doc) pairs labeled), ``pairable_units`` (with at
        least two labels), ``fleiss`` (:func:`fleiss_kappa`), ``alpha``
        (:func:`krippendorff_alpha`, ordinal), ``cohen``, ``cohen_linear``,
        ``cohen_quadratic``: the mean over the pairs of raters of Cohen's kappa
        (:func:`cohen_kappa`) on the units both labeled, weights over the positions of
        the whole label scale (:attr:`scale`); pairs whose kappa is undefined are left
        out of the mean. NaN where nothing is pairable.
    per_rater:
        One row per (round, rater) with labels, columns :data:`PER_RATER_COLUMNS`:
        ``labels``, ``mean_label``; ``kappa_vs_consensus``, the quadratic-weighted
        Cohen's kappa between the rater and the **leave-one-out consensus** (the
        :attr:`combine` of the *other* raters' labels of the same unit, rounded to the
        nearest grade of :attr:`scale`, halfway up), and ``agreement_vs_consensus``,
        the share of equal labels, both over the ``units_vs_consensus`` units another
        rater labeled too; ``kappa_others_median``, ``mean_label_other_rounds`` and
        ``others_mean_shift``, what the drift rule compares with; ``drift_flag`` and
        ``drift_reason`` (the rule that fired, with its numbers, in words; ``""`` when
        none).
    disputed:
        The units whose labels differ, columns :data:`DISPUTED_COLUMNS`: ``labels``
        (``"rater: label"`` for each label, lowest label first), ``spread`` (highest −
        lowest label), ``n_labels``, ``mean_label``; sorted by spread, then
        number of labels (both descending), ties in round order and then in the order
        the queries and documents first appear in the table.
    combine:
        The consensus rule: ``mean``, ``median`` (the middle label, or the mean of the
        two middle ones) or ``majority`` (the most frequent label, a tie going to the
        lowest tied label, as :meth:`Judgments.combined
        <ireval_core.labels.Judgments.combined>`), before rounding to the scale.
    scale:
        The distinct labels of the table, sorted: the rows and columns of
        :meth:`confusion` and the positions the weighted kappas use.
    kappa_gap, mean_shift:
        The drift thresholds used (:data:`DRIFT_KAPPA_GAP`, :data:`DRIFT_MEAN_SHIFT`).
    definitions:
        Column name → what the number means (shown next to the numbers).

    The drift rule, per round and rater (thresholds :data:`DRIFT_KAPPA_GAP` = 0.2 and
    :data:`DRIFT_MEAN_SHIFT` = 0.5 grade by default); a rater is flagged when

    1. **agreement drops**: their ``kappa_vs_consensus`` is more than ``kappa_gap``
       below ``kappa_others_median``, the median over the other raters of the round of
       *their* kappa against a consensus that leaves this rater out as well. Leaving
       the suspect out of the baseline matters with few raters: with three, a rater
       labeling at random drags the others' agreement with their consensus (half of
       which is that rater) down too, and a plain median of the others' kappas would
       hide the drift. Needs two other raters
       (with two raters in all, nobody can tell which of them drifted). Above
       :data:`BASELINE_MAX_RATERS` raters in a round the baseline is the plain median
       of the others' ``kappa_vs_consensus``;
    2. **or the mean label moves**: their ``mean_label`` differs by more than
       ``mean_shift`` grade from the mean of all their labels in the other rounds
       (needs labels in another round), **and** that move differs by more than
       ``mean_shift`` from the median move of the other raters that round
       (``others_mean_shift``). The second condition keeps a month whose shown
       results really were better or worse for everybody (recall broke, say) from
       flagging every rater.
    """

    per_round: pd.DataFrame
    per_rater: pd.DataFrame
    disputed: pd.DataFrame
    combine: str
    scale: tuple[float, ...]
    kappa_gap: float
    mean_shift: float
    definitions: Mapping[str, str]
    _rounds: tuple[str, ...] = field(repr=False)
    _raters: tuple[str, ...] = field(repr=False)
    _confusion: NDArray[np.int64] = field(repr=False)

    def __reduce__(self) -> tuple[object, tuple[dict[str, object]]]:
        """Pickle support (a cached copy per session): the read-only mapping goes as a dict."""
        state = {f.name: getattr(self, f.name) for f in fields(self)}
        state["definitions"] = dict(self.definitions)
        return _rebuild_report, (state,)

    def confusion(self, round: str, rater: str) -> pd.DataFrame:
        """Counts of the rater's label (rows) against the leave-one-out consensus
        (columns) in a round, over the units another rater labeled too.

        Rows and columns are every grade of :attr:`scale` (as text, ``"2"``, ``"2.5"``);
        the diagonal is agreement. All zeros when the rater gave no label in that round.

        Examples
        --------
        >>> import pandas as pd
        >>> t = pd.DataFrame({"round": "r1", "query": "q", "doc": list("aabb"),
        ...                   "rater": list("xy") * 2, "label": [0.0, 1.0, 1.0, 1.0]})
        >>> rater_report(t).confusion("r1", "x").to_dict("index")
        {'0': {'0': 0, '1': 1}, '1': {'0': 0, '1': 1}}
        """
        if round not in self._rounds:
            raise invalid_parameter("round", "RaterReport.confusion",
                                    "one of the table's rounds", round)
        if rater not in self._raters:
            raise invalid_parameter("rater", "RaterReport.confusion",
                                    "one of the table's raters", rater)
        i = self._rounds.index(round) * len(self._raters) + self._raters.index(rater)
        names = [f"{v:g}" for v in self.scale]
        return pd.DataFrame(self._confusion[i].copy(),
                            index=pd.Index(names, name=f"{rater} label"),
                            columns=pd.Index(names, name="consensus label"))


def rater_report(table: pd.DataFrame | LabelCodes, *, combine: Combine = "mean",
                 kappa_gap: float = DRIFT_KAPPA_GAP,
                 mean_shift: float = DRIFT_MEAN_SHIFT) -> RaterReport:
    """Agreement per round and per rater, confusion against the consensus, disputes, drift.

    Parameters
    ----------
    table:
        The long label table (columns :data:`~.label_table.TABLE_COLUMNS`, one row per (round,
        query, doc, rater); NaN labels are unlabeled and left out), or the same table
        as :class:`LabelCodes` (``Judgments.label_codes()``: the same report, without
        coding the ids' text again).
    combine:
        How the other raters' labels of a unit make the consensus a rater is scored
        against: ``"mean"`` (default), ``"median"`` or ``"majority"``.
    kappa_gap, mean_shift:
        The drift thresholds (:data:`DRIFT_KAPPA_GAP`, :data:`DRIFT_MEAN_SHIFT`).

    Returns
    -------
    RaterReport
        Every table and the drift rule are defined there.

    Raises
    ------
    ValueError
        When a (round, query, doc, rater) appears twice or a column is missing.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"round": "r1", "query": "q", "doc": list("aaabbbccc"),
    ...                   "rater": list("xyz") * 3,
    ...                   "label": [3, 3, 3, 0, 0, 2, 1, 1, 1]})
    >>> rep = rater_report(t)
    >>> rep.per_round[["raters", "units", "pairable_units"]].to_dict("records")
    [{'raters': 3, 'units': 3, 'pairable_units': 3}]
    >>> rep.disputed[["doc", "labels", "spread"]].to_dict("records")
    [{'doc': 'b', 'labels': 'x: 0, y: 0, z: 2', 'spread': 2.0}]
    """
    check(combine, "combine", "rater_report", Options(COMBINE_RULES))
    gap = check(kappa_gap, "kappa_gap", "rater_report", _THRESHOLD)
    shift = check(mean_shift, "mean_shift", "rater_report", _THRESHOLD)
    c = code_table(table, "rater_report", need_rater=True)
    per_rater, confusion = _per_rater(c, combine, gap, shift)
    per_round = _per_round(c)

    disputed = _disputed(c)
    confusion.setflags(write=False)
    definitions = {name: text.format(combine=combine, gap=gap, shift=shift)
                   for name, text in _DEFINITIONS.items()}
    return RaterReport(
        per_round=per_round, per_rater=per_rater, disputed=disputed, combine=combine,
        scale=tuple(float(v) for v in c.scale), kappa_gap=gap, mean_shift=shift,
        definitions=MappingProxyType(definitions), _rounds=tuple(map(str, c.rounds)),
        _raters=tuple(map(str, c.raters)), _confusion=confusion)


def _per_rater(c: CodedTable, combine: Combine, gap: float, shift: float
               ) -> tuple[pd.DataFrame, NDArray[np.int64]]:
    """The per-rater table of :func:`rater_report` (each rater of each round against the
    leave-one-out consensus of the others, with the drift rule) and the (round, rater)
    confusion matrices against that consensus."""
    n_rounds, n_raters, k = len(c.rounds), len(c.raters), len(c.scale)
    consensus = _leave_one_out(c.unit, c.label, c.unit_start, combine)
    scored = ~np.isnan(consensus)
    cons_value = _snap(consensus[scored], c.scale) if k else np.zeros(0, dtype=np.int64)
    group = c.round * max(n_raters, 1) + c.rater
    n_groups = n_rounds * n_raters
    labels = np.bincount(group, minlength=n_groups)
    sums = np.bincount(group, weights=c.label, minlength=n_groups)
    confusion = np.bincount(group[scored] * k * k + c.value[scored] * k + cons_value,
                            minlength=n_groups * k * k).reshape(n_groups, k, k)
    n_scored = confusion.sum(axis=(1, 2))
    kappa = _kappas(confusion, "quadratic") if n_groups else np.zeros(0)
    with np.errstate(divide="ignore", invalid="ignore"):
        agreement = np.where(n_scored > 0,
                             np.trace(confusion, axis1=1, axis2=2) / n_scored, np.nan)
        mean_label = np.where(labels > 0, sums / labels, np.nan)
        rater_sum = sums.reshape(n_rounds, n_raters).sum(axis=0)
        rater_n = labels.reshape(n_rounds, n_raters).sum(axis=0)
        other_n = np.tile(rater_n, n_rounds) - labels
        other_mean = np.where(other_n > 0, (np.tile(rater_sum, n_rounds) - sums) / other_n,
                              np.nan)
    others_median = _kappa_baselines(c, combine, kappa, labels)
    others_shift, low_kappa, moved, reasons = _drift(
        kappa, others_median, mean_label, other_mean, n_rounds, n_raters, gap, shift)
    rows = np.flatnonzero(labels > 0)
    return pd.DataFrame({
        "round": c.rounds[rows // max(n_raters, 1)],
        "rater": c.raters[rows % max(n_raters, 1)] if n_raters else np.zeros(0, object),
        "labels": labels[rows].astype(np.int64),
        "mean_label": mean_label[rows],
        "kappa_vs_consensus": kappa[rows],
        "agreement_vs_consensus": agreement[rows],
        "drift_flag": (low_kappa | moved)[rows],
        "drift_reason": np.asarray(reasons, dtype=object)[rows] if reasons
        else np.zeros(0, object),
        "units_vs_consensus": n_scored[rows].astype(np.int64),
        "kappa_others_median": others_median[rows],
        "mean_label_other_rounds": other_mean[rows],
        "others_mean_shift": others_shift[rows],
    }, columns=list(PER_RATER_COLUMNS)), confusion


def _drift(kappa: FloatArray, others_median: FloatArray, mean_label: FloatArray,
           other_mean: FloatArray, n_rounds: int, n_raters: int, gap: float, shift: float
           ) -> tuple[FloatArray, NDArray[np.bool_], NDArray[np.bool_], list[str]]:
    """The drift rule per (round, rater): the median shift of the round's other raters,
    whether kappa dropped below theirs by more than ``gap``, whether the mean label moved
    by more than ``shift`` (on its own and against theirs), and the reasons in words."""
    own_shift = mean_label - other_mean
    n_groups = n_rounds * n_raters
    others_shift = np.full(n_groups, np.nan)
    for r in range(n_rounds):  # a loop over rounds and raters, never over units
        block = own_shift[r * n_raters:(r + 1) * n_raters]
        for j in range(n_raters):
            rest = np.delete(block, j)
            rest = rest[~np.isnan(rest)]
            if rest.size:
                others_shift[r * n_raters + j] = float(np.median(rest))
    low_kappa = kappa < others_median - gap - 1e-12
    relative = np.where(np.isnan(others_shift), own_shift, own_shift - others_shift)
    moved = (np.abs(own_shift) > shift + 1e-12) & (np.abs(relative) > shift + 1e-12)
    reasons = []
    for i in range(n_groups):
        why = []
        if low_kappa[i]:
            why.append(f"agreement with the consensus dropped: kappa {kappa[i]:.2f} is "
                       f"{others_median[i] - kappa[i]:.2f} below the other raters' kappa "
                       f"{others_median[i]:.2f} (more than {gap:g})")
        if moved[i]:
            others = ("" if np.isnan(others_shift[i]) else
                      f", while the other raters' moved {others_shift[i]:+.2f}")
            why.append(f"mean label {mean_label[i]:.2f} moved {own_shift[i]:+.2f} from their "
                       f"mean {other_mean[i]:.2f} over the other rounds{others} (more than "
                       f"{shift:g} grade)")
        reasons.append("; ".join(why))
    return others_shift, low_kappa, moved, reasons


def _per_round(c: CodedTable) -> pd.DataFrame:
    """The per-round table of :func:`rater_report`: raters, units, Fleiss' kappa,
    Krippendorff's alpha and the mean pairwise Cohen's kappas."""
    n_rounds, n_raters, k = len(c.rounds), len(c.raters), len(c.scale)
    records = []
    for r in range(n_rounds):  # rows of a round are contiguous
        rows_r = c.round_rows(r)
        unit, value, rater = c.unit[rows_r], c.value[rows_r], c.rater[rows_r]
        m = np.diff(c.unit_start[unit[0]:unit[-1] + 2]) if len(unit) else np.zeros(0)
        cohen = _pairwise_cohen(rater, unit, value, max(n_raters, 1), k)
        records.append({
            "round": c.rounds[r], "raters": int(np.count_nonzero(np.bincount(rater))),
            "units": int(len(m)), "pairable_units": int((m >= 2).sum()),
            "fleiss": _fleiss(unit, value, k), "alpha": _alpha(unit, value, c.scale, "ordinal"),
            "cohen": cohen[0], "cohen_linear": cohen[1], "cohen_quadratic": cohen[2],
        })
    return pd.DataFrame.from_records(records, columns=list(PER_ROUND_COLUMNS))


def _disputed(c: CodedTable) -> pd.DataFrame:
    """Units whose labels differ, most disputed first (see :class:`RaterReport`)."""
    first, last = c.unit_start[:-1], c.unit_start[1:] - 1
    count = np.diff(c.unit_start)
    spread = c.label[last] - c.label[first] if len(first) else np.zeros(0)
    units = np.flatnonzero((count >= 2) & (spread > 0))
    # "rater: label" for every (rater, grade), then joined position by position: a loop
    # over the labels of a unit (at most the number of raters), not over units
    k = len(c.scale)
    grades = [f"{v:g}" for v in c.scale]
    names = np.asarray([f"{r}: {g}" for r in c.raters for g in grades], dtype=object)
    text = np.full(len(units), "", dtype=object)
    n_labels = count[units]
    for j in range(int(n_labels.max()) if len(units) else 0):
        has = n_labels > j
        rows = c.unit_start[units[has]] + j
        piece = names[c.rater[rows] * k + c.value[rows]]
        text[has] = text[has] + (piece if j == 0 else ", " + piece)
    total = np.add.reduceat(c.label, first)[units] if len(units) else np.zeros(0)
    out = pd.DataFrame({
        "round": c.rounds[c.unit_round[units]], "query": c.unit_query[units],
        "doc": c.unit_doc[units], "labels": text, "spread": spread[units],
        "n_labels": n_labels.astype(np.int64), "mean_label": total / np.maximum(n_labels, 1),
    }, columns=list(DISPUTED_COLUMNS))
    # units are in (round, query, doc) order already: a stable sort keeps it for ties
    key = np.lexsort((-n_labels, -spread[units]))
    return out.iloc[key].reset_index(drop=True)


def _rebuild_report(state: dict[str, object]) -> RaterReport:
    """Unpickle a :class:`RaterReport` (see :meth:`RaterReport.__reduce__`)."""
    definitions = MappingProxyType(dict(state["definitions"]))  # type: ignore[call-overload]
    return RaterReport(**{**state, "definitions": definitions})  # type: ignore[arg-type]
