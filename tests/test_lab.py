"""The metric lab: the steps of every explained family add up to the kernel's value, the
seeds' worked examples reproduce their published numbers, real queries match evaluate()."""

from __future__ import annotations

import dataclasses
import math
import re
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ireval_core import EvalOptions, evaluate, stats
from ireval_core.errors import FormatError, UnknownMeasureError
from ireval_core.io import read_qrels, read_runs
from ireval_core.lab import (
    EXPLAINED_FAMILIES,
    PRESETS,
    Explanation,
    Published,
    explain,
    parse_grades,
    preset,
    query_list,
    run_preset,
)
from ireval_core.measures import parse_measure

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
NAN = math.nan

# Every explained family, with the parameters that change its steps.
SPECS = (
    "P@5", "P@3", "P", "P(rel=2)@4", "R@3", "R", "Success@2", "Success", "AP", "AP@3", "RR",
    "RR@2", "Rprec", "bpref", "bpref(form=original)", "RBP", "RBP(p=0.5)@4", "CG@4", "CG",
    "DCG", "DCG(discount=jk)@6", "DCG(gain=exp)@3", "nDCG@5", "nDCG", "nDCG(ideal=run)@4",
    "nDCG(gain=exp,discount=jk)@3", "nDCG(gain={0:0,1:1,2:5,3:2})@4", "ERR@10", "ERR",
    "ERR(max_grade=2)@5", "AUC", "AUC@4", "PNR", "PNR@5",
)


def _total(ex: Explanation) -> float | None:
    """What the steps add up to: Σ contribution (propagating NaN), or the last running value
    (PNR's ratio); ``None`` when the measure looks at no rank."""
    steps = ex.steps
    if steps.empty:
        return None
    if "contribution" in steps.columns:
        return float(np.sum(steps["contribution"].to_numpy(dtype=np.float64)))
    return float(steps["running"].iloc[-1])


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if math.isinf(a) or math.isinf(b):
        return a == b
    return abs(a - b) <= 1e-12


def _check_steps(ex: Explanation) -> None:
    total = _total(ex)
    if total is None:  # nothing ranked within reach: the kernel gives 0 or "undefined"
        assert ex.value == 0.0 or math.isnan(ex.value), ex
        return
    assert _same(total, ex.value), (ex.measure, total, ex.value, ex.steps)
    assert _same(float(ex.steps["running"].iloc[-1]), ex.value), ex.steps


def test_every_explained_family_is_in_the_property_test() -> None:
    assert {parse_measure(s).name for s in SPECS} == set(EXPLAINED_FAMILIES)


# ----------------------------------------------------------------------------- property test

GRADE = st.sampled_from([NAN, -1.0, 0.0, 0.0, 1.0, 1.0, 2.0, 3.0, 0.5])
OPTIONS = st.builds(
    EvalOptions,
    rel_level=st.sampled_from([1.0, 2.0, 0.5]),
    depth=st.one_of(st.none(), st.integers(1, 8)),
    judged_only=st.booleans(),
    idcg_zero=st.sampled_from(["zero", "drop"]),
)


@st.composite
def _lists(draw: st.DrawFn) -> dict[str, object]:
    grades = draw(st.lists(GRADE, min_size=1, max_size=12))
    unretrieved = draw(st.lists(GRADE.filter(lambda g: not math.isnan(g)), max_size=4))
    scores = None
    if draw(st.booleans()):  # score ties: AUC and PNR count them as ties
        steps = draw(st.lists(st.sampled_from([0.0, 0.0, 1.0, 2.5]), min_size=len(grades),
                              max_size=len(grades)))
        scores = list(-np.cumsum(steps))
    top = draw(st.one_of(st.none(), st.sampled_from([3.0, 4.0])))
    return {"grades": grades, "unretrieved": unretrieved, "scores": scores, "top_grade": top}


@pytest.mark.parametrize("spec", SPECS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_lists(), options=OPTIONS)
def test_steps_add_up_to_the_kernel(spec: str, case: dict, options: EvalOptions) -> None:
    ex = explain(case["grades"], spec, unretrieved=case["unretrieved"], options=options,
                 scores=case["scores"], top_grade=case["top_grade"])
    judged = [g for g in case["grades"] if not math.isnan(g)] + case["unretrieved"]
    if not judged:  # a query without judgments is not evaluated (trec_eval)
        assert math.isnan(ex.value) and "no judgment" in ex.text
        return
    _check_steps(ex)
    assert ex.measure == str(parse_measure(spec))
    assert ex.definition == parse_measure(spec).definition(options)
    assert ex.text and ex.formula


# ----------------------------------------------------------------------------- by hand


def test_ap_seed_000_step_by_step() -> None:
    ex = explain([1, 0, 1, 0, 0, 1], "AP")
    assert ex.steps["hits"].tolist() == [1, 1, 2, 2, 2, 3]
    assert ex.steps["contribution"].tolist() == pytest.approx([1 / 3, 0, 2 / 9, 0, 0, 1 / 6])
    assert ex.value == pytest.approx((1 + 2 / 3 + 3 / 6) / 3, abs=1e-15)
    assert ex.quantity("R") == 3
    assert ex.formula.endswith(r"\frac{1}{3}\left(\frac{1}{1} + \frac{2}{3} + \frac{3}{6}"
                               r"\right) = 0.7222")
    assert "ranks 1, 3, 6" in ex.text and "AP = 0.7222" in ex.text


def test_unretrieved_relevant_count_in_r_and_ap() -> None:
    ex = explain([1, 0, 1], "R@3", unretrieved=[1, 2, 0])
    assert ex.quantity("R") == 4 and ex.value == 0.5
    assert explain([1, 0, 1], "AP", unretrieved=[1, 2, 0]).value == pytest.approx(
        (1 + 2 / 3) / 4)


def test_precision_of_a_short_list_keeps_k() -> None:
    ex = explain([1, NAN, 2], "P@10")
    assert ex.value == pytest.approx(0.2)
    assert len(ex.steps) == 3 and ex.steps["contribution"].tolist() == [0.1, 0.0, 0.1]
    assert "denominator stays 10" in ex.text and "1 unjudged document" in ex.text


def test_ndcg_seed_004_tables() -> None:
    ex = explain([3, 2, 3, 0, 1, 2], "nDCG@6", unretrieved=[3, 2])
    gains = [3, 2, 3, 0, 1, 2]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate([3, 3, 3, 2, 2, 2]))
    assert ex.steps["gain"].tolist() == gains
    assert ex.steps["discount"].tolist() == pytest.approx([1 / math.log2(i + 2)
                                                           for i in range(6)])
    assert ex.steps["dcg"].iloc[-1] == pytest.approx(dcg, abs=1e-12)
    assert ex.quantity("DCG@6") == pytest.approx(dcg, abs=1e-12)
    assert ex.quantity("IDCG@6") == pytest.approx(idcg, abs=1e-12)
    assert ex.ideal is not None
    assert ex.ideal["grade"].tolist() == [3, 3, 3, 2, 2, 2]
    assert ex.ideal["running"].iloc[-1] == pytest.approx(idcg, abs=1e-12)
    assert ex.value == pytest.approx(dcg / idcg, abs=1e-12)
    # the DCG quantity is the kernel's DCG, and the ideal is what the kernel divides by
    assert ex.quantity("DCG@6") == pytest.approx(explain([3, 2, 3, 0, 1, 2], "DCG@6").value,
                                                 abs=1e-12)
    run_ideal = explain([3, 2, 3, 0, 1, 2], "nDCG(ideal=run)@6", unretrieved=[3, 2])
    assert run_ideal.ideal is not None
    assert run_ideal.ideal["grade"].tolist() == [3, 3, 2, 2, 1, 0]
    assert "hides recall failures" in run_ideal.text


def test_dcg_jk_discount_and_exp_gain() -> None:
    ex = explain([2, 3, 1], "DCG(gain=exp,discount=jk)")
    assert ex.steps["gain"].tolist() == [3, 7, 1]
    assert ex.steps["discount"].tolist() == pytest.approx([1, 1, 1 / math.log2(3)])
    assert ex.value == pytest.approx(3 + 7 + 1 / math.log2(3), abs=1e-12)


def test_ndcg_without_relevant_documents_follows_the_idcg_zero_policy() -> None:
    assert explain([0, 0], "nDCG@2").value == 0.0
    dropped = explain([0, NAN], "nDCG@2", options=EvalOptions(idcg_zero="drop"))
    assert math.isnan(dropped.value) and "left out of the mean" in dropped.text


def test_err_by_hand() -> None:
    # g_max = 3: R = 7/8, 0, 3/8
    ex = explain([3, 0, 2], "ERR")
    expected = 7 / 8 + (1 / 8) * (3 / 8) / 3
    assert ex.value == pytest.approx(expected, abs=1e-15)
    assert ex.steps["reach"].tolist() == pytest.approx([1, 1 / 8, 1 / 8])
    assert ex.quantity("g_max") == 3
    # the qrels a real query comes from may hold a higher grade than the list
    assert explain([3, 0, 2], "ERR", top_grade=4).quantity("g_max") == 4


def test_bpref_by_hand() -> None:
    # R = 2 (one unretrieved), N = 3; relevant at rank 3 has 1 non-relevant above
    ex = explain([0, NAN, 1, 0], "bpref", unretrieved=[1, 0])
    assert (ex.quantity("R"), ex.quantity("N")) == (2, 3)
    assert ex.steps["non-relevant above"].tolist() == [0, 0, 1, 0]
    assert ex.value == pytest.approx((1 - 1 / 2) / 2)
    original = explain([0, NAN, 1, 0], "bpref(form=original)", unretrieved=[1, 0])
    assert original.value == pytest.approx((1 - 1 / 2) / 2)


def test_auc_with_score_ties_by_hand() -> None:
    # relevant at ranks 1 and 3; non-relevant at 2 and 4; ranks 3 and 4 tie on score
    ex = explain([1, 0, 1, 0, NAN], "AUC", scores=[5, 4, 3, 3, 1])
    assert ex.steps["non-relevant below"].tolist() == [2.0, 0.0, 0.5, 0.0, 0.0]
    assert ex.value == pytest.approx(2.5 / 4, abs=1e-15)
    undefined = explain([1, 1, NAN], "AUC")
    assert math.isnan(undefined.value) and "undefined" in undefined.text


def test_pnr_by_hand() -> None:
    # grades 2, 0, 1 with distinct scores: (2,0) and (2,1) concordant, (1,0) discordant
    ex = explain([2, 0, 1], "PNR")
    assert (ex.quantity("C"), ex.quantity("D")) == (2, 1)
    assert ex.value == 2.0
    assert math.isinf(explain([2, 1, 0], "PNR").value)
    assert math.isnan(explain([1, 1], "PNR").value)


def test_options_reach_the_steps_and_the_text() -> None:
    options = EvalOptions(depth=4, judged_only=True, rel_level=2)
    ex = explain([2, NAN, 1, -1, 3, 2], "P@3", options=options)
    assert ex.steps["grade"].tolist() == [2, 1]  # cut to 4, then unjudged removed
    assert ex.value == pytest.approx(1 / 3)
    assert "top 4 of the 6" in ex.text and "removes 2 unjudged documents" in ex.text
    assert "grade ≥ 2" in ex.text
    assert ex.definition == parse_measure("P@3").definition(options)


def test_a_list_without_judgments_is_not_evaluated() -> None:
    ex = explain([NAN, NAN], "AP")
    assert math.isnan(ex.value)
    assert ex.text.startswith("The query has no judgment")


def test_explanations_are_frozen_and_fresh() -> None:
    first = explain([1, 0], "AP")
    with pytest.raises(dataclasses.FrozenInstanceError):
        first.value = 1.0  # type: ignore[misc]
    first.steps.loc[0, "contribution"] = 99.0
    assert explain([1, 0], "AP").steps.loc[0, "contribution"] == 1.0


# ----------------------------------------------------------------------------- presets


@pytest.mark.parametrize("item", PRESETS, ids=[p.key for p in PRESETS])
def test_preset_reproduces_its_published_numbers(item) -> None:
    res = run_preset(item)
    assert res.checks["quantity"].tolist() == [p.quantity for p in item.published]
    for pub in item.published:
        computed = res.number(pub.quantity)
        if pub.relation == "equal":
            assert round(computed, pub.decimals) == round(pub.number, pub.decimals), pub
        else:
            assert computed <= pub.number, pub
    assert res.checks["reproduced"].all()
    assert item.claim and item.title
    for ex in res.explanations:
        _check_steps(ex)


def test_preset_numbers_by_hand() -> None:
    assert run_preset("seed000-ap").value == pytest.approx(13 / 18, abs=1e-15)
    res = run_preset("seed002-map")
    q1 = (1 + 1 + 3 / 4 + 4 / 7) / 4
    q2 = (1 + 2 / 3 + 3 / 5) / 5
    assert res.number("AP of q1") == pytest.approx(q1, abs=1e-15)
    assert res.number("AP of q2") == pytest.approx(q2, abs=1e-15)
    assert res.value == pytest.approx((q1 + q2) / 2, abs=1e-15)
    mrr = run_preset("seed004-mrr")
    assert mrr.value == pytest.approx((1 / 3 + 1 + 1 / 5 + 0) / 4, abs=1e-15)
    assert [ex.value for ex in mrr.explanations] == pytest.approx([1 / 3, 1, 1 / 5, 0])
    assert mrr.formula.startswith(r"\mathrm{MRR} = \frac{1}{4}")
    ndcg = run_preset("seed004-ndcg")
    assert ndcg.number("IDCG@6") == pytest.approx(
        sum(g / math.log2(i + 2) for i, g in enumerate([3, 3, 3, 2, 2, 2])), abs=1e-12)


def test_significance_preset_uses_ireval_stats() -> None:
    item = preset("seed001-table-8-6")
    res = run_preset(item)
    t, w, s = res.tests
    assert t == stats.paired_t_test(item.a, item.b, alternative="greater")
    assert w == stats.wilcoxon_test(item.a, item.b, alternative="greater")
    assert s == stats.sign_test(item.a, item.b, alternative="greater")
    assert res.number("p (Wilcoxon, one-sided)") == 18 / 1024
    assert res.number("p (sign, one-sided)") == 46 / 512
    assert res.number("W (signed-rank sum)") == 35.0
    assert res.steps is not None
    assert res.steps["signed rank"].sum() == 35.0  # the table adds up to W
    assert res.steps["B − A"].tolist() == [10, 41, -24, 0, 25, 70, 60, -2, 9, 25]
    assert "18/1024" in res.text and "46/512" in res.text
    wilcoxon = res.checks.set_index("quantity").loc["p (Wilcoxon, one-sided)"]
    assert wilcoxon["relation"] == "at most" and "0.0176" in wilcoxon["note"]
    assert math.isnan(res.value) and res.explanations == ()


def test_published_relations() -> None:
    assert Published("x", 0.83, 2).holds(0.8304) and not Published("x", 0.83, 2).holds(0.836)
    assert Published("p", 0.025, 3, "at most").holds(0.0176)
    assert not Published("p", 0.025, 3, "at most").holds(0.03)


# ----------------------------------------------------------------------------- real queries


@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
@pytest.mark.parametrize("options", [EvalOptions(), EvalOptions(rel_level=2, depth=20),
                                     EvalOptions(judged_only=True, idcg_zero="drop")],
                         ids=["default", "rel2-depth20", "judged-only"])
def test_real_queries_equal_evaluate(options: EvalOptions) -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = {r.name: r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)}
    specs = ["P@10", "R@100", "AP", "RR", "bpref", "nDCG@10", "nDCG(ideal=run)@10", "ERR@20",
             "AUC", "PNR", "RBP", "Rprec"]
    res = {name: evaluate(qrels, run, specs, options=options) for name, run in runs.items()}
    # bm25 q012 and neural_rerank q027 have score ties; q005, q040 are ordinary queries
    for name, query in [("bm25", "q012"), ("neural_rerank", "q027"), ("bm25", "q005"),
                        ("narrow_recall", "q040")]:
        lst = query_list(qrels, runs[name], query)
        for spec in specs:
            ex = explain(lst.grades, spec, unretrieved=lst.unretrieved, scores=lst.scores,
                         top_grade=lst.top_grade, options=options)
            expected = float(res[name].per_query(name, spec).loc[query])
            assert _same(ex.value, expected), (name, query, spec, ex.value, expected)
            _check_steps(ex)


# ----------------------------------------------------------------------------- typed grades


def test_parse_grades() -> None:
    assert parse_grades("3 2 3 0 1 2") == (3, 2, 3, 0, 1, 2)
    parsed = parse_grades("1, -, ? -1 nan 0.5")
    assert parsed[0] == 1 and parsed[3] == -1 and parsed[5] == 0.5
    assert all(math.isnan(x) for x in parsed[1:3] + parsed[4:5])
    assert parse_grades("  ") == ()


@pytest.mark.parametrize("text, item, token", [("3 two 1", 2, "two"), ("1 inf", 2, "inf"),
                                               ("0 1 2 3 x1", 5, "x1")])
def test_parse_grades_names_the_item_at_fault(text: str, item: int, token: str) -> None:
    with pytest.raises(FormatError) as info:
        parse_grades(text, source="ranked grades")
    assert str(info.value) == (f"ranked grades: item {item} is not a grade (a number, or - for "
                               f"unjudged): {token!r}")


def test_parse_grades_without_unjudged() -> None:
    with pytest.raises(FormatError, match=r"^unretrieved: item 2 is not a grade \(a number\)"):
        parse_grades("3 - 1", source="unretrieved", allow_unjudged=False)


# ----------------------------------------------------------------------------- bad parameters

MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


@pytest.mark.parametrize("call, param, function, error", [
    (lambda: explain([], "AP"), "grades", "explain", ValueError),
    (lambda: explain([[1, 0]], "AP"), "grades", "explain", ValueError),
    (lambda: explain([1, math.inf], "AP"), "grades", "explain", ValueError),
    (lambda: explain("3 2 1", "AP"), "grades", "explain", TypeError),
    (lambda: explain([1, "x"], "AP"), "grades", "explain", TypeError),
    (lambda: explain([1, 0], "AP", unretrieved=[NAN]), "unretrieved", "explain", ValueError),
    (lambda: explain([1, 0], "AP", scores=[1, 2]), "scores", "explain", ValueError),
    (lambda: explain([1, 0], "AP", scores=[1]), "scores", "explain", ValueError),
    (lambda: explain([1, 0], "AP", top_grade=math.nan), "top_grade", "explain", ValueError),
    (lambda: explain([1, 0], "AP", top_grade="3"), "top_grade", "explain", ValueError),
    (lambda: explain([1, 0], "F@5"), "measure", "explain", ValueError),
    (lambda: explain([1, 0], 5), "measure", "explain", TypeError),
    (lambda: explain([1, 0], "AP", options={"rel_level": 2}), "options", "explain", TypeError),
    (lambda: preset("seed999"), "key", "preset", ValueError),
    (lambda: run_preset(3), "item", "run_preset", TypeError),
    (lambda: run_preset("seed000-ap", options=2), "options", "run_preset", TypeError),
])
def test_invalid_parameters_use_the_common_message(call, param, function, error) -> None:
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert re.fullmatch(MESSAGE.format(param=param, function=function), str(info.value)), (
        str(info.value))


def test_unknown_measure_is_the_registrys_error() -> None:
    with pytest.raises(UnknownMeasureError, match="Did you mean 'nDCG'"):
        explain([1, 0], "nDGC@10")
