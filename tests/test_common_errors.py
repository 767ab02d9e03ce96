"""One message template for invalid parameters, everywhere (scikit-learn's convention).

Every public function that validates a parameter raises ``ValueError`` (``TypeError``
for a value of the wrong type) with the message built by
:func:`ireval_core.errors.invalid_parameter`::

    The '<param>' parameter of <function> must be <constraint>. Got <value!r> instead.

Each row of :data:`CASES` calls a function with one invalid parameter and names the
parameter (and, when it is not the callable's own name, the function the message
names: a measure family for ``parse_measure``).
"""

from __future__ import annotations

import inspect
import os
import tempfile

import numpy as np
import pytest
from _param_cases import Case, assert_invalid_parameter

from ireval_core import EvalOptions, Qrels, evaluate, stats
from ireval_core.compare import compare_evaluation, plan_next_round, verdicts
from ireval_core.data import Run
from ireval_core.errors import UnknownMeasureError, invalid_parameter, parameter_message
from ireval_core.io import Source
from ireval_core.lab import explain, preset, run_preset
from ireval_core.measures import parse_measure, parse_measures
from ireval_core.measures.pairwise import kendall_tau, kendall_tau_runs
from ireval_core.metadata import (
    by_segment,
    compare_by_segment,
    efficiency_points,
    latency_summary,
    pareto_front,
    read_metadata,
    weighted_mean,
)
from ireval_core.queries import ranking
from ireval_core.rounds import coverage, to_label
from ireval_core.tables import metrics_table
from ireval_core.workspace import Target, Workspace, dataset_id_of, resolve_url

A = [25, 43, 39, 75, 43, 15, 20, 52, 49, 50]  # seed 001, table 8-6
B = [35, 84, 15, 75, 68, 85, 80, 50, 58, 75]
AB = {"a": A, "b": B}
D = np.column_stack([np.subtract(B, A), np.subtract(A, B)])
SCORES = {"x": A, "y": B}
BY_MEASURE = {"P@10": SCORES}
T_RESULT = stats.paired_t_test(A, B)
COMPARISONS = stats.compare_pairs(SCORES)
RUN = Run.from_dict({"q1": {"d1": 2.0, "d2": 1.0}}, name="r")
QRELS = Qrels.from_dict({"q1": {"d1": 1}})
RES = evaluate(QRELS, [RUN], ["P@1"])
RES2 = evaluate(QRELS, [RUN, RUN.renamed("s")], ["P@1"])
RES_SUM = evaluate(QRELS, [RUN], ["P@1", "num_ret"])
META = read_metadata(b"query,segment,traffic,latency_ms_r\nq1,head,1,5\n", name="m.csv")
META_NO_WEIGHT = read_metadata(b"query,segment\nq1,head\n", name="m.csv")
SEG = {"res": RES2, "metadata": META, "column": "segment"}
PAIR = {**SEG, "measure": "P@1", "a": "r", "b": "s"}


# workspace used by the rows below (a SQLite file in a temporary folder)
WS = Workspace.open(os.path.join(tempfile.mkdtemp(prefix="ireval-errors-"), "ws.db"))
WS_FILES = [("qrels", "qrels.txt", b"q1 0 d1 1\n")]

# One row per validated parameter of every public function.
CASES: list[Case] = [
    # ---------------------------------------------------------------- ireval_core.stats
    Case(stats.paired_t_test, {**AB, "alternative": "bigger"}, "alternative"),
    Case(stats.wilcoxon_test, {**AB, "alternative": "two_sided"}, "alternative"),
    Case(stats.sign_test, {**AB, "alternative": ""}, "alternative"),
    Case(stats.randomization_test, {**AB, "alternative": "bigger"}, "alternative"),
    Case(stats.randomization_test, {**AB, "n_resamples": 0}, "n_resamples"),
    Case(stats.randomization_test, {**AB, "n_resamples": 10.5}, "n_resamples"),
    Case(stats.randomization_test, {**AB, "rng": "seed"}, "rng", TypeError),
    Case(stats.randomization_test, {**AB, "rng": -1}, "rng"),
    Case(stats.randomization_test_many, {"diffs": D, "alternative": "more"}, "alternative"),
    Case(stats.randomization_test_many, {"diffs": D, "n_resamples": -5}, "n_resamples"),
    Case(stats.randomization_test_many, {"diffs": D, "rng": 1.5}, "rng", TypeError),
    Case(stats.bootstrap_test, {**AB, "alternative": "bigger"}, "alternative"),
    Case(stats.bootstrap_test, {**AB, "method": "basic"}, "method"),
    Case(stats.bootstrap_test, {**AB, "n_resamples": True}, "n_resamples"),
    Case(stats.bootstrap_test, {**AB, "rng": [1, 2]}, "rng", TypeError),
    Case(stats.bootstrap_test_many, {"diffs": D, "alternative": "less than"}, "alternative"),
    Case(stats.bootstrap_test_many, {"diffs": D, "method": "bc"}, "method"),
    Case(stats.bootstrap_test_many, {"diffs": D, "n_resamples": 0}, "n_resamples"),
    Case(stats.bootstrap_test_many, {"diffs": D, "rng": "0"}, "rng", TypeError),
    Case(stats.bootstrap_ci, {**AB, "confidence_level": 95}, "confidence_level"),
    Case(stats.bootstrap_ci, {**AB, "confidence_level": "high"}, "confidence_level"),
    Case(stats.bootstrap_ci, {**AB, "confidence_level": None}, "confidence_level", TypeError),
    Case(stats.bootstrap_ci, {**AB, "method": "basic"}, "method"),
    Case(stats.bootstrap_ci, {**AB, "n_resamples": 0}, "n_resamples"),
    Case(stats.bootstrap_ci, {**AB, "rng": -3}, "rng"),
    Case(T_RESULT.confidence_interval, {"confidence_level": 1.0}, "confidence_level"),
    Case(stats.win_tie_loss, {**AB, "tol": -0.1}, "tol"),
    Case(stats.win_tie_loss, {**AB, "tol": float("nan")}, "tol"),
    Case(stats.correct_pvalues, {"pvalues": [0.01, 0.2], "method": "fdr"}, "method"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "tests": ()}, "tests"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "tests": ("t", "z")},
         "tests"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "tests": ("t", "t")},
         "tests"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "alternative": "b"},
         "alternative"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "correction": "fdr"},
         "correction"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "family": "pair"},
         "family"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "confidence_level": 0},
         "confidence_level"),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "n_resamples": 0},
         "n_resamples"),
    Case(stats.compare_measures,
         {"scores_by_measure": BY_MEASURE, "tests": ("randomization",), "rng": "x"},
         "rng", TypeError),
    Case(stats.compare_measures, {"scores_by_measure": BY_MEASURE, "baseline": "z"},
         "baseline"),
    Case(stats.compare_pairs, {"scores": SCORES, "tests": "anova"}, "tests"),
    Case(stats.compare_pairs, {"scores": SCORES, "alternative": "bigger"}, "alternative"),
    Case(stats.compare_pairs, {"scores": SCORES, "correction": "fdr"}, "correction"),
    Case(stats.compare_pairs, {"scores": SCORES, "confidence_level": 1.5},
         "confidence_level"),
    Case(stats.compare_pairs, {"scores": SCORES, "n_resamples": 0}, "n_resamples"),
    Case(stats.compare_pairs, {"scores": SCORES, "tests": ("bootstrap",), "rng": -1}, "rng"),
    Case(stats.compare_pairs, {"scores": SCORES, "baseline": "z"}, "baseline"),
    Case(stats.where_significant, {"comparisons": COMPARISONS, "alpha": 0.0}, "alpha"),
    Case(stats.tukey_hsd, {"scores": SCORES, "confidence_level": -1}, "confidence_level"),
    Case(stats.paired_t_power, {"sd_diff": 0.0, "delta": 0.1, "n_queries": 50}, "sd_diff"),
    Case(stats.paired_t_power, {"sd_diff": 0.2, "delta": -0.1, "n_queries": 50}, "delta"),
    Case(stats.paired_t_power, {"sd_diff": 0.2, "delta": 0.1, "n_queries": 1}, "n_queries"),
    Case(stats.paired_t_power, {"sd_diff": 0.2, "delta": 0.1, "n_queries": 2.5}, "n_queries"),
    Case(stats.paired_t_power, {"sd_diff": 0.2, "delta": 0.1, "n_queries": 50, "alpha": 1},
         "alpha"),
    Case(stats.paired_t_power,
         {"sd_diff": 0.2, "delta": 0.1, "n_queries": 50, "alternative": "up"}, "alternative"),
    Case(stats.min_detectable_difference, {"sd_diff": float("inf"), "n_queries": 50},
         "sd_diff"),
    Case(stats.min_detectable_difference, {"sd_diff": "wide", "n_queries": 50}, "sd_diff"),
    Case(stats.min_detectable_difference, {"sd_diff": 0.2, "n_queries": 1}, "n_queries"),
    Case(stats.min_detectable_difference, {"sd_diff": 0.2, "n_queries": 50, "alpha": 0},
         "alpha"),
    Case(stats.min_detectable_difference, {"sd_diff": 0.2, "n_queries": 50, "power": 1.5},
         "power"),
    Case(stats.min_detectable_difference, {"sd_diff": 0.2, "n_queries": 50, "power": 0.01},
         "power"),
    Case(stats.min_detectable_difference,
         {"sd_diff": 0.2, "n_queries": 50, "alternative": "up"}, "alternative"),
    Case(stats.queries_needed, {"sd_diff": -1.0, "delta": 0.05}, "sd_diff"),
    Case(stats.queries_needed, {"sd_diff": 0.2, "delta": 0.0}, "delta"),
    Case(stats.queries_needed, {"sd_diff": 1.0, "delta": 1e-9}, "delta"),
    Case(stats.queries_needed, {"sd_diff": 0.2, "delta": 0.05, "alpha": 2}, "alpha"),
    Case(stats.queries_needed, {"sd_diff": 0.2, "delta": 0.05, "power": 1.0}, "power"),
    Case(stats.queries_needed, {"sd_diff": 0.2, "delta": 0.05, "alternative": "up"},
         "alternative"),
    Case(stats.mean_ci, {"values": A, "confidence_level": 0.0}, "confidence_level"),
    Case(stats.mean_ci, {"values": A, "method": "bca"}, "method"),
    Case(stats.mean_ci, {"values": A, "method": "bootstrap", "n_resamples": 0}, "n_resamples"),
    Case(stats.mean_ci, {"values": A, "method": "bootstrap", "rng": "seed"}, "rng", TypeError),
    # ---------------------------------------------------- measures: spec parameters, @k
    Case(parse_measure, {"text": "P@0"}, "k", UnknownMeasureError, "P"),
    Case(parse_measure, {"text": "nDCG@2.5"}, "k", UnknownMeasureError, "nDCG"),
    Case(parse_measure, {"text": "IPrec@1.5"}, "k", UnknownMeasureError, "IPrec"),
    Case(parse_measure, {"text": "P(rel=x)@5"}, "rel", UnknownMeasureError, "P"),
    Case(parse_measure, {"text": "F(beta=0)"}, "beta", UnknownMeasureError, "F"),
    Case(parse_measure, {"text": "RBP(p=1.5)"}, "p", UnknownMeasureError, "RBP"),
    Case(parse_measure, {"text": "ERR(max_grade=-1)@10"}, "max_grade", UnknownMeasureError,
         "ERR"),
    Case(parse_measure, {"text": "nDCG(gain=cubic)"}, "gain", UnknownMeasureError, "nDCG"),
    Case(parse_measure, {"text": "DCG(discount=ln)"}, "discount", UnknownMeasureError, "DCG"),
    Case(parse_measure, {"text": "nDCG(ideal=best)"}, "ideal", UnknownMeasureError, "nDCG"),
    Case(parse_measure, {"text": "bpref(form=new)"}, "form", UnknownMeasureError, "bpref"),
    Case(parse_measure, {"text": "GAUC(weight=views)"}, "weight", UnknownMeasureError,
         "GAUC"),
    Case(parse_measures, {"texts": ["P@10", "R@-5"]}, "k", UnknownMeasureError, "R"),
    Case(kendall_tau, {"a": ["d1", "d2", "d1"], "b": ["d1"]}, "a"),
    Case(kendall_tau, {"a": ["d1"], "b": np.array(["d2", "d2"])}, "b"),
    Case(kendall_tau_runs, {"run_a": RUN, "run_b": RUN, "depth": 0}, "depth"),
    # ------------------------------------------------------------------------------ io
    Case(Source, {"name": "run.txt"}, "path"),
    # ----------------------------------------------------------- options and evaluation
    Case(EvalOptions, {"depth": 0}, "depth"),
    Case(EvalOptions, {"rel_level": float("inf")}, "rel_level"),
    Case(EvalOptions, {"idcg_zero": "keep"}, "idcg_zero"),
    Case(EvalOptions, {"complete": "yes"}, "complete"),
    Case(EvalOptions, {"judged_only": 1}, "judged_only"),
    Case(evaluate, {"qrels": QRELS, "runs": [RUN], "measures": ["P@1"],
                    "options": {"rel_level": 2}}, "options", TypeError),
    Case(evaluate, {"qrels": QRELS, "runs": [RUN, RUN], "measures": ["P@1"]}, "runs"),
    Case(metrics_table, {"res": RES, "confidence_level": 1.5}, "confidence_level"),
    # --------------------------------------------------------------------------- compare
    Case(compare_evaluation, {"res": RES2, "alternative": "bigger"}, "alternative"),
    Case(compare_evaluation, {"res": RES2, "baseline": "nope"}, "baseline"),
    Case(compare_evaluation, {"res": RES2, "systems": ["r"]}, "systems"),
    Case(verdicts, {"records": [], "alpha": 5}, "alpha"),
    Case(plan_next_round, {"differences": [0.1, 0.2], "delta": -1, "measure": "AP"}, "delta"),
    # ------------------------------------------------------------ queries, rounds, report
    Case(ranking, {"qrels": QRELS, "run": RUN, "query_id": "q1", "top": 0}, "top"),
    Case(coverage, {"qrels": QRELS, "runs": [RUN], "k": 0}, "k"),
    Case(to_label, {"qrels": QRELS, "runs": [RUN], "k": -1}, "k"),
    # ------------------------------------------------------------------- query metadata
    Case(META.segment, {"column": "intent"}, "column"),
    Case(META.segments, {"column": "traffic"}, "column"),
    Case(by_segment, {**SEG, "column": "language"}, "column"),
    Case(by_segment, {**SEG, "metadata": {"q1": "head"}}, "metadata", TypeError),
    Case(by_segment, {**SEG, "measures": ["AP"]}, "measures"),
    Case(by_segment, {**SEG, "res": RES_SUM, "measures": ["num_ret"]}, "measures"),
    Case(by_segment, {**SEG, "metadata": META_NO_WEIGHT, "weighted": True}, "weighted"),
    Case(weighted_mean, {"res": RES, "metadata": META, "system": "x", "measure": "P@1"},
         "system"),
    Case(weighted_mean, {"res": RES, "metadata": META, "system": "r", "measure": "P@2"},
         "measure"),
    Case(weighted_mean, {"res": RES, "metadata": META_NO_WEIGHT, "system": "r",
                         "measure": "P@1"}, "metadata"),
    Case(compare_by_segment, {**PAIR, "column": "intent"}, "column"),
    Case(compare_by_segment, {**PAIR, "metadata": None}, "metadata", TypeError),
    Case(compare_by_segment, {**PAIR, "measure": "AP"}, "measure"),
    Case(compare_by_segment, {**PAIR, "a": "x"}, "a"),
    Case(compare_by_segment, {**PAIR, "b": "r"}, "b"),
    Case(compare_by_segment, {**PAIR, "test": "z"}, "test"),
    Case(compare_by_segment, {**PAIR, "alternative": "bigger"}, "alternative"),
    Case(compare_by_segment, {**PAIR, "correction": "sidak"}, "correction"),
    Case(compare_by_segment, {**PAIR, "alpha": 1.0}, "alpha"),
    Case(latency_summary, {"metadata": "m.csv"}, "metadata", TypeError),
    Case(latency_summary, {"metadata": META, "systems": "r"}, "systems", TypeError),
    Case(efficiency_points, {"res": RES, "summary": latency_summary(META), "measure": "P@1",
                             "latency": "p90"}, "latency"),
    Case(efficiency_points, {"res": RES, "summary": None, "measure": "P@1"}, "summary",
         TypeError),
    Case(efficiency_points, {"res": RES, "summary": latency_summary(META), "measure": "AP"},
         "measure"),
    Case(pareto_front, {"points": latency_summary(META)}, "points", TypeError),
    # ---------------------------------------------------------------------- metric lab
    Case(explain, {"grades": [], "measure": "AP"}, "grades"),
    Case(explain, {"grades": [1], "measure": "AP", "unretrieved": [float("nan")]},
         "unretrieved"),
    Case(explain, {"grades": [1, 0], "measure": "AP", "scores": [1, 2]}, "scores"),
    Case(explain, {"grades": [1], "measure": "AP", "top_grade": float("nan")}, "top_grade"),
    Case(explain, {"grades": [1], "measure": "F@5"}, "measure"),
    Case(explain, {"grades": [1], "measure": "AP", "options": {}}, "options", TypeError),
    Case(preset, {"key": "x"}, "key"),
    Case(run_preset, {"item": 3}, "item", TypeError),
    # ------------------------------------------------------------------------ workspace
    Case(WS.save_dataset, {"files": [], "name": "n", "saved_by": "a"}, "files"),
    Case(WS.save_dataset, {"files": [("qrel", "q.txt", b"")], "name": "n", "saved_by": "a"},
         "files"),
    Case(WS.save_dataset, {"files": [("run", "r.txt", "text")], "name": "n", "saved_by": "a"},
         "files", TypeError),
    Case(WS.save_dataset, {"files": WS_FILES, "name": "", "saved_by": "a"}, "name"),
    Case(WS.save_dataset, {"files": WS_FILES, "name": "n", "saved_by": "a\x00"}, "saved_by"),
    Case(WS.save_dataset, {"files": WS_FILES, "name": "n", "saved_by": "a", "note": None},
         "note", TypeError),
    Case(WS.get_dataset, {"dataset_id": "abc"}, "dataset_id"),
    Case(WS.read_file, {"dataset_id": "not-hex!", "position": 0}, "dataset_id"),
    Case(WS.delete_dataset, {"dataset_id": "", "confirm": ""}, "dataset_id"),
    Case(WS.add_note, {"dataset_id": "0" * 12, "target": "q1", "text": "t", "author": "a"},
         "target", TypeError),
    Case(WS.add_note, {"dataset_id": "0" * 12, "target": Target.dataset(), "text": "t",
                       "author": "a", "kind": "todo"}, "kind"),
    Case(WS.add_note, {"dataset_id": "0" * 12, "target": Target.dataset(), "text": "t",
                       "author": "a", "supersedes": "3"}, "supersedes", TypeError),
    Case(WS.notes, {"kind": "decisions"}, "kind"),
    Case(Target, {"kind": "topic"}, "kind"),
    Case(Target, {"kind": "comparison", "key": "a|b|AP"}, "key"),
    Case(Target.query, {"query_id": " "}, "query_id"),
    Case(Target.comparison, {"run_a": "", "run_b": "b", "measure": "AP"}, "run_a"),
    Case(dataset_id_of, {"files": [("run", "a", b""), ("run", "a", b"")]}, "files"),
    Case(resolve_url, {"url": ""}, "url", function="Workspace.open"),
]


def _function(case: Case) -> str:
    """The function the message names (default: the callable's qualified name)."""
    return case.function or case.func.__qualname__


@pytest.mark.parametrize("case", CASES, ids=[f"{_function(c)}-{c.param}" for c in CASES])
def test_invalid_parameter_message(case: Case) -> None:
    assert_invalid_parameter(case, _function(case))


# public functions of ireval_core.stats that have no parameter to validate besides data
_NO_PARAMETER_CHECKS = {
    "effect_size": "checks only its data arrays a and b (data messages, not parameters)",
}


def test_every_public_stats_function_has_a_row() -> None:
    public = {name for name in stats.__all__ if inspect.isfunction(getattr(stats, name))}
    covered = {case.func.__name__ for case in CASES if case.func in
               {getattr(stats, name) for name in public}}
    assert public - covered == set(_NO_PARAMETER_CHECKS)


def test_helper_builds_the_template() -> None:
    assert parameter_message("k", "ndcg", "an int >= 1", 0) == (
        "The 'k' parameter of ndcg must be an int >= 1. Got 0 instead.")
    err = invalid_parameter("rng", "f", "None or an int", "x", error=TypeError)
    assert type(err) is TypeError
    assert str(err) == "The 'rng' parameter of f must be None or an int. Got 'x' instead."
    assert type(invalid_parameter("alpha", "f", "in (0, 1)", 2)) is ValueError
    # a long value is cut, and never spreads over several lines
    long = parameter_message("a", "f", "short", np.arange(10_000).reshape(100, 100))
    assert "\n" not in long and len(long) < 200
