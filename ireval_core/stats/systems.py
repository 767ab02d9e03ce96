"""Many systems at once: pairwise comparisons over measures, Tukey HSD."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike
from scipy import stats

from ..errors import invalid_parameter
from ..intervals import bootstrap_interval, t_interval, t_kernel
from ..params import Options, check, validate_params
from .base import (
    ALTERNATIVE,
    CONFIDENCE_LEVEL,
    FAMILIES,
    N_RESAMPLES,
    PROBABILITY,
    TESTS,
    Alternative,
    FloatArray,
    PairComparison,
    RngLike,
    TestResult,
    TukeyComparison,
    as_values,
    check_rng,
    exact_sums,
)
from .effects import CORRECTION, correct_pvalues, effect_sizes, win_tie_loss_counts
from .paired import sign_test, t_many, wilcoxon_test
from .resampling import bootstrap_means, bootstrap_pvalues, randomization_core

TEST = Options(TESTS)
FAMILY = Options(FAMILIES)

# ------------------------------------------------------------- many systems


@dataclass(frozen=True)
class _Column:
    measure: str
    system_a: str
    system_b: str
    a: FloatArray
    b: FloatArray


# Each entry: (D, alternative, confidence_level, n_resamples, rng) ->
#   (statistic, pvalue, ci_low or None, ci_high or None); None = the t-interval.
_ColumnResult = tuple[FloatArray, FloatArray, FloatArray | None, FloatArray | None]
_ColumnTest = Callable[[FloatArray, str, float, int, RngLike], _ColumnResult]


def _compare_t(
    D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
) -> _ColumnResult:
    t, p, _, _ = t_many(D, alternative)
    return t, p, None, None


def _compare_per_column(
    fn: Callable[..., TestResult],
) -> _ColumnTest:
    def run(
        D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
    ) -> _ColumnResult:
        zeros = np.zeros(D.shape[0])
        results = [fn(zeros, D[:, j], alternative=alternative) for j in range(D.shape[1])]
        return (
            np.array([r.statistic for r in results]),
            np.array([r.pvalue for r in results]),
            None,
            None,
        )

    return run


def _compare_randomization(
    D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
) -> _ColumnResult:
    means, p, _, _ = randomization_core(D, alternative, n_resamples, rng)
    return means, p, None, None


def _compare_bootstrap(
    D: FloatArray, alternative: str, level: float, n_resamples: int, rng: RngLike
) -> _ColumnResult:
    theta_b = bootstrap_means(D, n_resamples, rng)
    p = bootstrap_pvalues(theta_b, D, alternative)
    low, high = bootstrap_interval(theta_b, level, "two-sided", None)
    return exact_sums(D) / D.shape[0], p, low, high


_COMPARE_TESTS: dict[str, _ColumnTest] = {
    "t": _compare_t,
    "wilcoxon": _compare_per_column(wilcoxon_test),
    "sign": _compare_per_column(sign_test),
    "randomization": _compare_randomization,
    "bootstrap": _compare_bootstrap,
}


# resampling tests: the only ones that use ``rng``
_RESAMPLING_TESTS = frozenset({"randomization", "bootstrap"})


def _check_tests(tests: Sequence[str], function: str) -> tuple[str, ...]:
    """A sequence of tests (one name alone counts as one), each :data:`TEST`, distinct."""
    given = tests
    names = (tests,) if isinstance(tests, str) else tuple(tests)
    if (not names or len(set(names)) != len(names)
            or not all(TEST.is_satisfied_by(n) for n in names)):
        raise invalid_parameter("tests", function, "a non-empty sequence of distinct names, "
                                f"each {TEST}", given)
    return names


def _system_columns(
    measure: str, scores: Mapping[str, ArrayLike], baseline: str | None, function: str
) -> list[_Column]:
    if len(scores) < 2:
        raise ValueError(f"measure {measure!r}: need at least 2 systems; got {len(scores)}")
    values = {name: as_values(v, f"scores[{name!r}]") for name, v in scores.items()}
    sizes = {v.size for v in values.values()}
    if len(sizes) != 1:
        shown = ", ".join(f"{name}={v.size}" for name, v in values.items())
        raise ValueError(f"measure {measure!r}: systems must share the same queries; {shown}")
    names = list(values)
    if baseline is None:
        pairs = [(names[i], names[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    elif baseline not in values:
        of_measure = f" (measure {measure!r})" if measure else ""
        raise invalid_parameter("baseline", function,
                                f"None or one of the systems {names}{of_measure}", baseline)
    else:
        pairs = [(baseline, name) for name in names if name != baseline]
    return [_Column(measure, x, y, values[x], values[y]) for x, y in pairs]


def compare_measures(
    scores_by_measure: Mapping[str, Mapping[str, ArrayLike]],
    *,
    baseline: str | None = None,
    tests: Sequence[str] = ("t",),
    alternative: Alternative = "two-sided",
    correction: str = "none",
    family: Literal["measure", "all"] = "measure",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: RngLike = None,
) -> list[PairComparison]:
    """Paired comparisons of many systems on several measures.

    Parameters
    ----------
    scores_by_measure : mapping measure -> (mapping system -> per-query values)
        Within a measure all systems must be aligned on the same queries. Different
        measures may use different query sets.
    baseline : str, optional
        ``None``: every unordered pair once, ``a`` = the system earlier in mapping
        order, ``b`` = the later. A name: each other system ``b`` against ``a = baseline``.
    tests : sequence of {"t", "wilcoxon", "sign", "randomization", "bootstrap"}
    alternative : {"two-sided", "greater", "less"}
        ``"greater"`` = b better than a.
    correction : {"none", "bonferroni", "holm", "bh"}
        Applied by :func:`correct_pvalues` within each family.
    family : {"measure", "all"}, default "measure"
        The family of a correction is always one test; ``"measure"``: the pairs of one
        measure and one test (what :func:`compare_pairs` does); ``"all"``: the pairs of
        all measures for one test.
    confidence_level : float, default 0.95
        Of the (two-sided) ``ci_low``/``ci_high`` columns.
    n_resamples : int, default 10_000
        For the randomization and bootstrap tests.
    rng : None, int or numpy.random.Generator
        With an int seed each resampling test of each query-set size starts a new
        generator from that seed, so every row equals the single-pair function
        (:func:`randomization_test`, :func:`bootstrap_test`) with the same seed. A
        Generator is consumed in order: per query-set size, tests in ``tests`` order.

    Returns
    -------
    list of PairComparison
        Ordered by measure, then pair, then test (in the order of ``tests``).

    Notes
    -----
    All randomization columns with the same number of queries (all pairs of all such
    measures) share one sign matrix and one matrix product per chunk; the same for the
    bootstrap resampling. The t-test is vectorised over columns; Wilcoxon and sign
    tests are computed pair by pair (about 1 ms each).
    """
    return _compare_measures(
        scores_by_measure, baseline=baseline, tests=tests, alternative=alternative,
        correction=correction, family=family, confidence_level=confidence_level,
        n_resamples=n_resamples, rng=rng, function="compare_measures",
    )


def _compare_measures(
    scores_by_measure: Mapping[str, Mapping[str, ArrayLike]],
    *,
    baseline: str | None,
    tests: Sequence[str],
    alternative: Alternative,
    correction: str,
    family: Literal["measure", "all"],
    confidence_level: float,
    n_resamples: int,
    rng: RngLike,
    function: str,
) -> list[PairComparison]:
    """:func:`compare_measures`, naming ``function`` in the messages of invalid parameters."""
    tests = _check_tests(tests, function)
    check(alternative, "alternative", function, ALTERNATIVE)
    check(correction, "correction", function, CORRECTION)
    check(family, "family", function, FAMILY)
    level = check(confidence_level, "confidence_level", function, CONFIDENCE_LEVEL)
    n_resamples = check(n_resamples, "n_resamples", function, N_RESAMPLES)
    if _RESAMPLING_TESTS.intersection(tests):  # rng is not used (nor checked) otherwise
        check_rng(rng, function)
    if not scores_by_measure:
        raise ValueError("scores_by_measure must hold at least one measure")
    if isinstance(rng, np.random.SeedSequence):
        rng = np.random.default_rng(rng)  # consumed in order, like a Generator

    columns: list[_Column] = []
    for measure, scores in scores_by_measure.items():
        columns.extend(_system_columns(measure, scores, baseline, function))

    # group the columns by query count: one D matrix (and one resampling) per group
    groups: dict[int, list[int]] = {}
    for i, col in enumerate(columns):
        groups.setdefault(col.a.size, []).append(i)

    k = len(columns)
    stat = {name: np.empty(k) for name in tests}
    pval = {name: np.empty(k) for name in tests}
    ci_low = {name: np.empty(k) for name in tests}
    ci_high = {name: np.empty(k) for name in tests}
    effect = np.empty(k)
    wtl = np.empty((3, k), dtype=np.int64)
    for idx in groups.values():
        D = np.ascontiguousarray(np.column_stack([columns[i].b - columns[i].a for i in idx]))
        mean, se, _, df = t_kernel(D)
        t_low, t_high = t_interval(mean, se, df, level, "two-sided")
        effect[idx] = effect_sizes(D)
        wtl[:, idx] = np.vstack(win_tie_loss_counts(D, 0.0))
        for name in tests:
            s, p, low, high = _COMPARE_TESTS[name](D, alternative, level, n_resamples, rng)
            stat[name][idx] = s
            pval[name][idx] = p
            ci_low[name][idx] = t_low if low is None else low
            ci_high[name][idx] = t_high if high is None else high

    corrected = {name: np.empty(k) for name in tests}
    for name in tests:
        fam_of = [None if family == "all" else col.measure for col in columns]
        for key in dict.fromkeys(fam_of):
            members = [i for i in range(k) if fam_of[i] == key]
            corrected[name][members] = correct_pvalues(pval[name][members], correction)

    records = []
    for i, col in enumerate(columns):
        mean_a = float(col.a.mean())
        mean_b = float(col.b.mean())
        for name in tests:
            records.append(
                PairComparison(
                    measure=col.measure, system_a=col.system_a, system_b=col.system_b,
                    test=name, statistic=float(stat[name][i]), pvalue=float(pval[name][i]),
                    pvalue_corrected=float(corrected[name][i]), correction=correction,
                    alternative=alternative, mean_a=mean_a, mean_b=mean_b,
                    mean_diff=float(np.mean(col.b - col.a)),
                    ci_low=float(ci_low[name][i]), ci_high=float(ci_high[name][i]),
                    effect_size=float(effect[i]), wins=int(wtl[0, i]), ties=int(wtl[1, i]),
                    losses=int(wtl[2, i]), n=int(col.a.size),
                )
            )
    return records


def compare_pairs(
    scores: Mapping[str, ArrayLike],
    *,
    baseline: str | None = None,
    tests: Sequence[str] = ("t",),
    alternative: Alternative = "two-sided",
    correction: str = "none",
    confidence_level: float = 0.95,
    n_resamples: int = 10_000,
    rng: RngLike = None,
    measure: str | None = None,
) -> list[PairComparison]:
    """Paired comparisons of many systems on one measure.

    ``scores`` maps system name -> per-query values, all aligned on the same queries.
    Pairs: all unordered pairs (``a`` earlier in mapping order, ``b`` later), or each
    system against ``baseline`` (``a = baseline``). The correction family is one test
    over all pairs of this call. ``measure`` only labels the records. See
    :func:`compare_measures` for the parameters and for several measures at once (which
    shares one resampling across measures).

    Examples
    --------
    >>> rows = compare_pairs(
    ...     {"A": [25, 43, 39, 75, 43, 15, 20, 52, 49, 50],
    ...      "B": [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]},
    ...     tests=("t", "sign"), alternative="greater")
    >>> [(r.test, r.mean_diff, r.wins, r.ties, r.losses) for r in rows]
    [('t', 21.4, 7, 1, 2), ('sign', 21.4, 7, 1, 2)]
    """
    rows = _compare_measures(
        {"" if measure is None else measure: scores}, baseline=baseline, tests=tests,
        alternative=alternative, correction=correction, family="measure",
        confidence_level=confidence_level, n_resamples=n_resamples, rng=rng,
        function="compare_pairs",
    )
    if measure is not None:
        return rows
    return [PairComparison(**{**r.as_dict(), "measure": None}) for r in rows]


@validate_params({"alpha": PROBABILITY})
def where_significant(
    comparisons: Sequence[PairComparison], *, alpha: float = 0.05, corrected: bool = True
) -> list[PairComparison]:
    """The comparisons whose (corrected) p-value is below ``alpha``."""
    key = "pvalue_corrected" if corrected else "pvalue"
    return [c for c in comparisons if getattr(c, key) < alpha]


def tukey_hsd(
    scores: Mapping[str, ArrayLike],
    *,
    paired: bool = True,
    confidence_level: float = 0.95,
) -> list[TukeyComparison]:
    """Tukey's honestly significant difference test over all pairs of systems.

    Parameters
    ----------
    scores : mapping system -> per-query values (aligned)
    paired : bool, default True
        ``True``: repeated-measures Tukey HSD. The error term is the residual mean
        square of the two-way ANOVA (systems x queries, no interaction),
        ``df = (n - 1)(k - 1)``, so per-query difficulty is removed as in the paired
        tests; the studentized range statistic is ``|mean_b - mean_a| / sqrt(MSE / n)``.
        With two systems its p-value equals the two-sided paired t-test's. With zero
        residual variance (every system a constant shift of another) the p-value is 0
        for a non-zero difference and 1 otherwise.
        ``False``: ``scipy.stats.tukey_hsd`` on the per-system samples, which treats
        them as independent groups (one-way ANOVA; ignores the pairing).
    confidence_level : float, default 0.95
        Of the simultaneous intervals.

    Returns
    -------
    list of TukeyComparison
        All unordered pairs, ``a`` earlier in mapping order, ``mean_diff = b - a``.
    """
    level = check(confidence_level, "confidence_level", "tukey_hsd", CONFIDENCE_LEVEL)
    columns = _system_columns("tukey_hsd", scores, None, "tukey_hsd")
    names = list(scores)
    X = np.column_stack([as_values(scores[name], f"scores[{name!r}]") for name in names])
    n, k = X.shape
    pos = {name: j for j, name in enumerate(names)}
    if not paired:
        res = stats.tukey_hsd(*(X[:, j] for j in range(k)))
        ci = res.confidence_interval(level)
        out = []
        for col in columns:
            i, j = pos[col.system_a], pos[col.system_b]
            out.append(
                TukeyComparison(
                    col.system_a, col.system_b, float(res.statistic[j, i]),
                    float(res.pvalue[j, i]), float(ci.low[j, i]), float(ci.high[j, i]),
                )
            )
        return out
    resid = X - X.mean(axis=1, keepdims=True) - X.mean(axis=0, keepdims=True) + X.mean()
    df = (n - 1) * (k - 1)
    se = math.sqrt(float(np.sum(resid**2)) / df / n)
    crit = float(stats.studentized_range.ppf(level, k, df))
    out = []
    for col in columns:
        diff = float(np.mean(col.b) - np.mean(col.a))
        if se == 0.0:
            p = 1.0 if diff == 0.0 else 0.0
        else:
            p = float(stats.studentized_range.sf(abs(diff) / se, k, df))
        out.append(
            TukeyComparison(col.system_a, col.system_b, diff, min(p, 1.0),
                            diff - crit * se, diff + crit * se)
        )
    return out
