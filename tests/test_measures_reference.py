"""Measures trec_eval lacks, checked against slow, obviously correct reference code.

Each reference below is a plain Python loop over one query's ranking (a sorted list), written
from the definition in REFERENCE.md and independent of ireval's vectorised kernels. Data sets
are random and seeded, with score ties (ranked by docid descending), unjudged retrieved
documents, pooled-but-unjudged documents (grade -1), queries without relevant documents and
grades 0-4.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from functools import cache

import numpy as np
import pytest

from ireval_core import EvalOptions, Qrels, Run, evaluate

SEEDS = range(12)
TOL = 1e-9

Nested = dict[str, dict[str, float]]


# ----------------------------------------------------------------------------- data


def make_dataset(seed: int) -> tuple[Nested, Nested]:
    rng = random.Random(1000 + seed)
    qrels: Nested = {}
    run: Nested = {}
    for i in range(rng.randint(5, 10)):
        qid = f"q{i}"
        docs = [f"d{n}" for n in rng.sample(range(1, 120), 50)]
        n_judged = rng.randint(1, 25)
        if i == 0:  # no relevant document at all
            grades = [rng.choice((-1, 0)) for _ in range(n_judged)]
        elif i == 1:  # every judgment a pooled-but-unjudged -1
            grades = [-1] * n_judged
        else:
            grades = [rng.choice((-1, 0, 0, 1, 1, 2, 3, 4)) for _ in range(n_judged)]
        qrels[qid] = dict(zip(docs[:n_judged], map(float, grades), strict=True))
        length = rng.randint(1, 30)
        chosen = rng.sample(docs[: n_judged + 15], min(length, n_judged + 15))
        tied = rng.random() < 0.5
        run[qid] = {d: (rng.randint(0, 6) / 4 if tied else rng.uniform(0, 10)) for d in chosen}
    run["only-in-run"] = {"d1": 1.0}
    return qrels, run


def ranked(docs: dict[str, float]) -> list[str]:
    """Score descending, ties by docid descending."""
    return [d for d, _ in sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


# ----------------------------------------------------------------------------- references
# Each takes (ranking, judgments of the query, every grade in the qrels) -> float.

Ref = Callable[[list[str], dict[str, float], list[float]], float]


def grade_of(judgments: dict[str, float], doc: str) -> float:
    return judgments.get(doc, math.nan)


def is_rel(g: float, t: float = 1.0) -> bool:
    return not math.isnan(g) and g >= t


def is_nonrel(g: float, t: float = 1.0) -> bool:
    return not math.isnan(g) and 0 <= g < t


def linear_gain(g: float) -> float:
    return 0.0 if math.isnan(g) or g <= 0 else g


def exp_gain(g: float) -> float:
    return 0.0 if math.isnan(g) or g <= 0 else 2.0 ** g - 1.0


def map_gain(table: dict[int, float]) -> Callable[[float], float]:
    return lambda g: 0.0 if math.isnan(g) or g <= 0 else table.get(int(g), 0.0)


def log2_discount(i: int) -> float:
    return 1.0 / math.log2(i + 1)


def jk_discount(i: int) -> float:
    return 1.0 if i == 1 else 1.0 / math.log2(i)


def ref_err(k: int | None, gmax: float | None = None) -> Ref:
    def f(docs, judgments, all_grades):
        top = gmax if gmax is not None else max(all_grades)
        keep_going, total = 1.0, 0.0
        for r, d in enumerate(docs[:k], start=1):
            g = min(max(linear_gain(grade_of(judgments, d)), 0.0), top)
            stop = (2.0 ** g - 1.0) / 2.0 ** top
            total += keep_going * stop / r
            keep_going *= 1.0 - stop
        return total
    return f


def ref_rbp(p: float, k: int | None) -> Ref:
    def f(docs, judgments, _):
        return (1 - p) * sum(p ** (i - 1) for i, d in enumerate(docs[:k], start=1)
                             if is_rel(grade_of(judgments, d)))
    return f


def _dcg(grades: list[float], k: int | None, gain, discount) -> float:
    return sum(gain(g) * discount(i) for i, g in enumerate(grades[:k], start=1))


def ref_dcg(k: int | None, gain=linear_gain, discount=log2_discount) -> Ref:
    def f(docs, judgments, _):
        return _dcg([grade_of(judgments, d) for d in docs], k, gain, discount)
    return f


def ref_cg(k: int | None) -> Ref:
    return ref_dcg(k, linear_gain, lambda i: 1.0)


def ref_ndcg(k: int | None, gain=linear_gain, discount=log2_discount, ideal="qrels",
             empty: float = 0.0) -> Ref:
    def f(docs, judgments, _):
        grades = [grade_of(judgments, d) for d in docs]
        pool = list(judgments.values()) if ideal == "qrels" else grades
        best = sorted(pool, key=gain, reverse=True)  # the ideal orders by gain
        idcg = _dcg(best, k, gain, discount)
        return _dcg(grades, k, gain, discount) / idcg if idcg > 0 else empty
    return f


def _counts(docs, judgments, k, t=1.0):
    top = [grade_of(judgments, d) for d in docs[:k]]
    n_rel = sum(is_rel(g, t) for g in judgments.values())
    n_non = sum(is_nonrel(g, t) for g in judgments.values())
    return top, n_rel, n_non


def ref_accuracy(k: int) -> Ref:
    def f(docs, judgments, _):
        shown = set(docs[:k])
        judged = [(d, g) for d, g in judgments.items() if g >= 0]
        if not judged:
            return 0.0
        return sum((d in shown) == is_rel(g) for d, g in judged) / len(judged)
    return f


def ref_fallout(k: int) -> Ref:
    def f(docs, judgments, _):
        top, _, n_non = _counts(docs, judgments, k)
        return sum(is_nonrel(g) for g in top) / n_non if n_non else 0.0
    return f


def ref_judged(k: int) -> Ref:
    def f(docs, judgments, _):
        top = [grade_of(judgments, d) for d in docs[:k]]
        return sum(g >= 0 for g in top if not math.isnan(g)) / len(top) if top else 0.0
    return f


def ref_precision(k: int) -> Ref:
    def f(docs, judgments, _):
        return sum(is_rel(grade_of(judgments, d)) for d in docs[:k]) / k
    return f


def ref_recall(k: int | None) -> Ref:
    def f(docs, judgments, _):
        top, n_rel, _ = _counts(docs, judgments, k)
        return sum(is_rel(g) for g in top) / n_rel if n_rel else 0.0
    return f


def ref_f(beta: float, k: int) -> Ref:
    def f(docs, judgments, all_grades):
        p = ref_precision(k)(docs, judgments, all_grades)
        r = ref_recall(k)(docs, judgments, all_grades)
        b2 = beta * beta
        return (1 + b2) * p * r / (b2 * p + r) if b2 * p + r > 0 else 0.0
    return f


def ref_bpref_original(docs, judgments, _) -> float:
    n_rel = sum(is_rel(g) for g in judgments.values())
    if n_rel == 0:
        return 0.0
    above, total = 0, 0.0
    for d in docs:
        g = grade_of(judgments, d)
        if is_rel(g):
            total += 1.0 - min(above, n_rel) / n_rel
        elif is_nonrel(g):
            above += 1
    return total / n_rel


def ref_ap(docs, judgments, _) -> float:
    n_rel = sum(is_rel(g) for g in judgments.values())
    hits, total = 0, 0.0
    for i, d in enumerate(docs, start=1):
        if is_rel(grade_of(judgments, d)):
            hits += 1
            total += hits / i
    return total / n_rel if n_rel else 0.0


def ref_rr(docs, judgments, _) -> float:
    for i, d in enumerate(docs, start=1):
        if is_rel(grade_of(judgments, d)):
            return 1.0 / i
    return 0.0


EXP = exp_gain
MAP_GAIN = map_gain({0: 0, 1: 1, 2: 3, 3: 10})  # grade 4 is absent: it gains 0

REFERENCES: dict[str, Ref] = {
    "ERR@10": ref_err(10),
    "ERR": ref_err(None),
    "ERR(max_grade=4)@10": ref_err(10, 4.0),
    "ERR(max_grade=4)@3": ref_err(3, 4.0),
    "RBP": ref_rbp(0.8, None),
    "RBP(p=0.8)@10": ref_rbp(0.8, 10),
    "RBP(p=0.5)@10": ref_rbp(0.5, 10),
    "CG@5": ref_cg(5),
    "CG": ref_cg(None),
    "DCG@10": ref_dcg(10),
    "DCG(gain=exp)@10": ref_dcg(10, EXP),
    "DCG(discount=jk)@6": ref_dcg(6, discount=jk_discount),
    "DCG(gain=exp,discount=jk)": ref_dcg(None, EXP, jk_discount),
    "nDCG(gain=exp)@10": ref_ndcg(10, EXP),
    "nDCG(discount=jk)@10": ref_ndcg(10, discount=jk_discount),
    "nDCG(ideal=run)@10": ref_ndcg(10, ideal="run"),
    "nDCG(ideal=run)": ref_ndcg(None, ideal="run"),
    "nDCG(gain=exp,ideal=run,discount=jk)@5": ref_ndcg(5, EXP, jk_discount, "run"),
    "nDCG(gain={0:0,1:1,2:3,3:10})@10": ref_ndcg(10, MAP_GAIN),
    "nDCG(gain={0:0,1:1,2:3,3:10},ideal=run)@10": ref_ndcg(10, MAP_GAIN, ideal="run"),
    "Accuracy@5": ref_accuracy(5),
    "Accuracy@20": ref_accuracy(20),
    "Fallout@10": ref_fallout(10),
    "Judged@5": ref_judged(5),
    "Judged@20": ref_judged(20),
    "F(beta=2)@10": ref_f(2.0, 10),
    "F(beta=0.5)@5": ref_f(0.5, 5),
    "bpref(form=original)": ref_bpref_original,
}
# the same through the condensed lists of judged_only=True
CONDENSED: dict[str, Ref] = {
    "P@5": ref_precision(5),
    "AP": ref_ap,
    "RR": ref_rr,
    "nDCG@10": ref_ndcg(10),
    "ERR@10": ref_err(10),
    "RBP(p=0.5)@10": ref_rbp(0.5, 10),
    "Judged@10": ref_judged(10),
    "bpref(form=original)": ref_bpref_original,
}


def reference_values(qrels: Nested, run: Nested, refs: dict[str, Ref],
                     condense: bool = False) -> dict[str, dict[str, float]]:
    all_grades = [g for docs in qrels.values() for g in docs.values()]
    out: dict[str, dict[str, float]] = {name: {} for name in refs}
    for qid in sorted(set(qrels) & set(run)):
        docs = ranked(run[qid])
        if condense:
            docs = [d for d in docs if qrels[qid].get(d, -1.0) >= 0]
        for name, ref in refs.items():
            out[name][qid] = ref(docs, qrels[qid], all_grades)
    return out


def compare(res, expected: dict[str, dict[str, float]]) -> list[str]:
    bad = []
    for name, values in expected.items():
        got = res.per_query("sys", name)
        assert set(got.index) == set(values), name
        for qid, want in values.items():
            same = (math.isnan(want) and math.isnan(got[qid])) or abs(got[qid] - want) <= TOL
            if not same:
                bad.append(f"{name} {qid}: ireval {got[qid]!r} != reference {want!r}")
    return bad


def run_ireval(qrels: Nested, run: Nested, names, **options):
    """ireval's evaluation under ``EvalOptions(**options)``."""
    return evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="sys"), list(names),
                    options=EvalOptions(**options))


@cache
def evaluated(seed: int, judged_only: bool = False):
    """ireval's values for every measure of a table on one data set (computed once)."""
    qrels, run = make_dataset(seed)
    names = CONDENSED if judged_only else REFERENCES
    return run_ireval(qrels, run, names, judged_only=judged_only)


# ----------------------------------------------------------------------------- tests


@pytest.mark.parametrize("name", REFERENCES)
def test_measure_matches_reference(name: str) -> None:
    bad = []
    for seed in SEEDS:
        qrels, run = make_dataset(seed)
        expected = reference_values(qrels, run, {name: REFERENCES[name]})
        res = evaluated(seed)
        bad += [f"seed {seed}: {b}" for b in compare(res, expected)]
        want_mean = float(np.mean(list(expected[name].values())))
        assert res.mean("sys", name) == pytest.approx(want_mean, abs=TOL)
    assert bad == []


@pytest.mark.parametrize("name", CONDENSED, ids=lambda n: f"judged_only-{n}")
def test_judged_only_uses_condensed_lists(name: str) -> None:
    bad = []
    for seed in SEEDS:
        qrels, run = make_dataset(seed)
        expected = reference_values(qrels, run, {name: CONDENSED[name]}, condense=True)
        bad += compare(evaluated(seed, judged_only=True), expected)
    assert bad == []


@pytest.mark.parametrize("name", ["nDCG@10", "nDCG", "nDCG(gain=exp)@5", "nDCG(ideal=run)@10"],
                         ids=lambda n: f"idcg_zero_drop-{n}")
def test_idcg_zero_drop(name: str) -> None:
    """IDCG = 0 gives NaN per query and the query leaves the mean; "zero" keeps it as 0."""
    for seed in SEEDS:
        qrels, run = make_dataset(seed)
        ref = {"nDCG@10": ref_ndcg(10, empty=math.nan), "nDCG": ref_ndcg(None, empty=math.nan),
               "nDCG(gain=exp)@5": ref_ndcg(5, EXP, empty=math.nan),
               "nDCG(ideal=run)@10": ref_ndcg(10, ideal="run", empty=math.nan)}[name]
        expected = reference_values(qrels, run, {name: ref})
        dropped = run_ireval(qrels, run, [name], idcg_zero="drop")
        assert compare(dropped, expected) == []
        values = list(expected[name].values())
        kept = [v for v in values if not math.isnan(v)]
        assert len(kept) < len(values)  # query q0 has no relevant document
        assert dropped.mean("sys", name) == pytest.approx(sum(kept) / len(kept), abs=TOL)
        assert dropped.n_averaged[("sys", name)] == len(kept)
        zero = run_ireval(qrels, run, [name])
        assert zero.mean("sys", name) == pytest.approx(sum(kept) / len(values), abs=TOL)


def test_custom_gain_map_ideal_orders_by_gain() -> None:
    """A gain map that is not monotone in the grade (grade 4 absent: gain 0) still has an
    ideal ranking sorted by gain, so nDCG <= 1 and a gain-sorted ranking scores 1."""
    qrels = {"q": {"a": 4, "b": 3, "c": 1}}
    run = {"q": {"b": 3.0, "c": 2.0, "a": 1.0}}  # gains 10, 1, 0: the best possible order
    res = run_ireval(qrels, run, ["nDCG(gain={0:0,1:1,2:3,3:10})@2"])
    assert res.per_query("sys", "nDCG(gain={0:0,1:1,2:3,3:10})@2")["q"] == pytest.approx(1.0)


def test_err_default_max_grade_is_the_top_grade_of_the_qrels() -> None:
    """ERR's g_max comes from the whole qrels, not from the query or the ranking."""
    qrels = {"q1": {"a": 1}, "q2": {"b": 3}}
    run = {"q1": {"a": 1.0}, "q2": {"x": 1.0}}
    res = run_ireval(qrels, run, ["ERR@10", "ERR(max_grade=1)@10"])
    assert res.per_query("sys", "ERR@10")["q1"] == pytest.approx((2 ** 1 - 1) / 2 ** 3)
    assert res.per_query("sys", "ERR(max_grade=1)@10")["q1"] == pytest.approx(0.5)
