"""The metric lab shows the measures' own numbers: its gain, discount, stop, reach and
weight columns are those of :mod:`ireval_core.measures.gain`, bit for bit, and its DCG is
the DCG kernel's."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ireval_core import Qrels, Run, evaluate
from ireval_core.lab import explain
from ireval_core.measures import parse_measure
from ireval_core.measures.gain import discounts, err_reach, err_stop, gains, rbp_weights

NAN = math.nan
GAINS = ("linear", "exp", "{0:0,1:1,2:5,3:2}", "{1:0.5,3:10}")
DISCOUNTS = ("log2", "jk")
GRADE = st.sampled_from([NAN, -1.0, 0.0, 1.0, 2.0, 3.0, 0.5, 4.0])
LISTS = st.lists(GRADE, min_size=1, max_size=15)


def _kernel_dcg(grades: list[float], spec: str) -> float:
    """The DCG kernel on qrels and run holding just this list (document i at rank i)."""
    qrels = {f"d{i}": g for i, g in enumerate(grades) if not math.isnan(g)}
    run = {f"d{i}": float(len(grades) - i) for i in range(len(grades))}
    res = evaluate(Qrels.from_dict({"q": qrels}), Run.from_dict({"q": run}, name="r"), [spec])
    return float(res.per_query("r", parse_measure(spec))["q"])


@pytest.mark.parametrize("gain", GAINS)
@pytest.mark.parametrize("discount", DISCOUNTS)
@settings(max_examples=25, deadline=None)
@given(grades=LISTS, k=st.sampled_from([None, 1, 3, 10]))
def test_gains_discounts_and_dcg_are_the_kernels(gain: str, discount: str,
                                                 grades: list[float], k: int | None) -> None:
    at = "" if k is None else f"@{k}"
    for family in ("DCG", "nDCG"):
        spec = f"{family}(gain={gain},discount={discount}){at}"
        ex = explain(grades, spec)
        steps = ex.steps
        shown = np.array(grades[: len(steps)], dtype=np.float64)
        rank = np.arange(1, len(steps) + 1)
        np.testing.assert_array_equal(steps["gain"].to_numpy(), gains(shown, gain))
        np.testing.assert_array_equal(steps["discount"].to_numpy(), discounts(rank, discount))
        dcg = ex.value if family == "DCG" else ex.quantity(f"DCG{at}")
        if all(math.isnan(g) for g in grades):  # no judgment: not evaluated (trec_eval)
            assert family == "nDCG" or math.isnan(dcg)
        else:
            assert dcg == pytest.approx(_kernel_dcg(grades, spec.replace("nDCG", "DCG")),
                                        rel=1e-12, abs=1e-12)
        if family == "nDCG":  # the ideal ranking's columns too
            ideal = ex.ideal
            assert ideal is not None
            np.testing.assert_array_equal(
                ideal["gain"].to_numpy(), gains(ideal["grade"].to_numpy(dtype=np.float64), gain))
            np.testing.assert_array_equal(ideal["discount"].to_numpy(),
                                          discounts(ideal["rank"].to_numpy(), discount))


@settings(max_examples=40, deadline=None)
@given(grades=LISTS, max_grade=st.sampled_from([None, 2, 4]))
def test_err_stop_and_reach_are_the_kernels(grades: list[float], max_grade: int | None) -> None:
    spec = "ERR" if max_grade is None else f"ERR(max_grade={max_grade})"
    ex = explain(grades, spec)
    g = np.array(grades, dtype=np.float64)
    stop = err_stop(g, ex.quantity("g_max"))
    np.testing.assert_array_equal(ex.steps["stop"].to_numpy(), stop)
    np.testing.assert_array_equal(
        ex.steps["reach"].to_numpy(),
        err_reach(stop, np.zeros(len(g), dtype=np.int64), np.array([0, len(g)])))


@pytest.mark.parametrize("p", [0.5, 0.8, 0.95])
def test_rbp_weights_are_the_kernels(p: float) -> None:
    ex = explain([1, 0, NAN, 2, 1, 0, 3], f"RBP(p={p})")
    np.testing.assert_array_equal(ex.steps["discount"].to_numpy(),
                                  rbp_weights(np.arange(1, 8), p))
