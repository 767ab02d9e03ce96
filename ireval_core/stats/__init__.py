"""Paired significance tests, confidence intervals and planning for IR evaluation.

Every test here compares two systems evaluated on the *same* queries: ``a`` and ``b``
are aligned 1-D arrays of per-query values of one measure, and the difference is
always ``d = b - a``. ``alternative="greater"`` means "b is better than a".

The results follow :mod:`scipy.stats`: each test returns a frozen :class:`TestResult`
with ``statistic``, ``pvalue``, ``alternative`` and a ``confidence_interval()``
method where one is defined. Monte Carlo p-values are ``(b + 1) / (B + 1)``, never 0,
and are reproducible: ``rng`` accepts ``None``, an ``int`` seed or a
:class:`numpy.random.Generator`.

Layers
------
* kernels over a matrix of difference columns ``D`` (``n_queries x n_pairs``), so that
  many pairs and measures share one sign matrix (randomization) or one resampling
  matrix (bootstrap) and one BLAS matrix product;
* single-pair functions, which call the same kernels with one column:
  :func:`paired_t_test`, :func:`wilcoxon_test`, :func:`sign_test` (:mod:`.paired`),
  :func:`randomization_test`, :func:`bootstrap_test`, :func:`bootstrap_ci`
  (:mod:`.resampling`), :func:`effect_size`, :func:`win_tie_loss` (:mod:`.effects`);
* many systems (:mod:`.systems`): :func:`compare_pairs`, :func:`compare_measures`,
  :func:`tukey_hsd`, with :func:`correct_pvalues` (:mod:`.effects`);
* planning (:mod:`.planning`): :func:`paired_t_power`, :func:`min_detectable_difference`,
  :func:`queries_needed`, and :func:`mean_ci` for one system's mean.

Result types, constants, parameter constraints and input checks shared by all of them
are in :mod:`.base`; the t and bootstrap interval kernels, which the result types use
too, are in :mod:`ireval_core.intervals`, below this package and the evaluation. The
kernels a module shares with another (``t_many``, ``bootstrap_means``, ...) are public
names of the module that defines them, but not part of this package's API.

Seed 001 (table 8-6) is the worked example used throughout the docstrings.
"""

from __future__ import annotations

from .base import (
    ALTERNATIVES,
    BOOTSTRAP_METHODS,
    CORRECTIONS,
    FAMILIES,
    TESTS,
    ConfidenceInterval,
    MeanCI,
    PairComparison,
    TestResult,
    TukeyComparison,
)
from .effects import correct_pvalues, effect_size, win_tie_loss
from .paired import paired_t_test, sign_test, wilcoxon_test
from .planning import mean_ci, min_detectable_difference, paired_t_power, queries_needed
from .resampling import (
    bootstrap_ci,
    bootstrap_test,
    bootstrap_test_many,
    randomization_test,
    randomization_test_many,
)
from .systems import compare_measures, compare_pairs, tukey_hsd, where_significant

__all__ = [
    "ALTERNATIVES",
    "BOOTSTRAP_METHODS",
    "CORRECTIONS",
    "FAMILIES",
    "TESTS",
    "ConfidenceInterval",
    "MeanCI",
    "PairComparison",
    "TestResult",
    "TukeyComparison",
    "bootstrap_ci",
    "bootstrap_test",
    "bootstrap_test_many",
    "compare_measures",
    "compare_pairs",
    "correct_pvalues",
    "effect_size",
    "mean_ci",
    "min_detectable_difference",
    "paired_t_power",
    "paired_t_test",
    "queries_needed",
    "randomization_test",
    "randomization_test_many",
    "sign_test",
    "tukey_hsd",
    "where_significant",
    "wilcoxon_test",
    "win_tie_loss",
]
