"""ireval against pytrec_eval (pytrec-eval-terrier = trec_eval 9.0.8) as an oracle.

Every trec_eval measure ireval has is computed by both on seeded random data sets and compared
per query within 1e-9, together with the set of evaluated queries and the aggregates. The data
sets hold what trips evaluators up: score ties (ranked by docid descending, byte-wise), runs
shorter than the cutoffs, queries without relevant documents, qrels queries missing from the
run, run queries missing from the qrels, pooled-but-unjudged documents (grade -1), unjudged
retrieved documents and grades 0-4.

Notes on the oracle:

* trec_eval 9 stores scores as float32, ireval as float64. Every generated score is therefore
  exactly representable in float32, and scores that are meant to differ differ in float32;
  deliberate ties are multiples of 1/8.
* Negative grades are -1 only: pytrec_eval segfaults on some qrels queries whose only grades are
  <= -2 (trec_eval's RELVALUE_UNJUDGED sentinel), so grades -2 and below are never generated.
* pytrec_eval has no ``-c`` (complete) and no ``-M`` (depth): ``complete=True`` is checked against
  trec_eval's semantics written out by hand (a missing query is evaluated as an empty ranking:
  every measure 0, num_rel = its relevant count) and ``depth=M`` against cutting the run dict
  to its top M by (score desc, docid desc) before handing it to pytrec_eval.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np
import pytest

from ireval_core import EvalOptions, Qrels, Run, evaluate

pytrec_eval = pytest.importorskip("pytrec_eval")

SEEDS = range(30)
TOL = 1e-9

CUTOFFS = (1, 2, 3, 5, 10, 20)
SUCCESS_CUTOFFS = (1, 3, 5, 10)
IPREC_LEVELS = tuple(f"{i / 10:.2f}" for i in range(11))

# what pytrec_eval is asked for ...
ORACLE_MEASURES = {
    "P." + ",".join(map(str, CUTOFFS)),
    "recall." + ",".join(map(str, CUTOFFS)),
    "map_cut." + ",".join(map(str, CUTOFFS)),
    "ndcg_cut." + ",".join(map(str, CUTOFFS)),
    "success." + ",".join(map(str, SUCCESS_CUTOFFS)),
    "map", "ndcg", "recip_rank", "Rprec", "bpref", "iprec_at_recall", "11pt_avg",
    "set_F", "set_P", "set_recall", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret",
}
# ... and the per-query names it prints, which ireval parses as aliases
TREC_NAMES = (
    [f"{m}_{k}" for m in ("P", "recall", "map_cut", "ndcg_cut") for k in CUTOFFS]
    + [f"success_{k}" for k in SUCCESS_CUTOFFS]
    + [f"iprec_at_recall_{r}" for r in IPREC_LEVELS]
    + ["map", "ndcg", "recip_rank", "Rprec", "bpref", "11pt_avg", "set_F", "set_P",
       "set_recall", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
)
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}  # summed, not averaged

Nested = dict[str, dict[str, float]]


# ----------------------------------------------------------------------------- data


def _doc_id(rng: random.Random) -> str:
    """Ids whose byte order differs from numeric order (d10 < d9) and mixes cases."""
    n = rng.randint(1, 300)
    return rng.choice((f"d{n}", f"D{n}", f"doc-{n:04d}", f"x{n}", f"A{n}b"))


def _distinct_f32(rng: random.Random, n: int) -> list[float]:
    """n scores that are exact float32 values and pairwise distinct in float32."""
    out: set[float] = set()
    while len(out) < n:
        out.add(float(np.float32(rng.uniform(-3.0, 30.0))))
    scores = list(out)
    rng.shuffle(scores)
    return scores


def _scores(rng: random.Random, n: int) -> list[float]:
    style = rng.choice(("distinct", "ties", "mixed"))
    if style == "distinct":
        return _distinct_f32(rng, n)
    ties = [rng.randint(0, 12) / 8 for _ in range(n)]  # multiples of 1/8: exact, many ties
    if style == "ties":
        return ties
    distinct = [d for d in _distinct_f32(rng, 2 * n) if (d * 8) % 1][:n]  # never k/8
    return [t if rng.random() < 0.5 else d for t, d in zip(ties, distinct, strict=True)]


def make_dataset(seed: int) -> tuple[Nested, Nested]:
    """Random qrels and run (``{qid: {docid: value}}``) covering the awkward cases."""
    rng = random.Random(seed)
    qrels: Nested = {}
    run: Nested = {}
    n_queries = rng.randint(6, 14)
    kinds = ["normal"] * n_queries
    # make sure every awkward kind occurs, then shuffle
    kinds[:4] = ["no_relevant", "qrels_only", "run_only", "short_run"]
    rng.shuffle(kinds)
    for i, kind in enumerate(kinds):
        qid = f"q{i}" if rng.random() < 0.7 else f"Q{i}-{rng.randint(0, 9)}"
        pool: set[str] = set()
        while len(pool) < 60:
            pool.add(_doc_id(rng))
        docs = sorted(pool)
        rng.shuffle(docs)
        if kind != "run_only":
            n_judged = rng.randint(1, 30)
            if kind == "no_relevant":
                grades = [rng.choice((-1, 0, 0)) for _ in range(n_judged)]
            else:
                grades = [rng.choice((-1, 0, 0, 0, 1, 1, 2, 3, 4)) for _ in range(n_judged)]
            qrels[qid] = dict(zip(docs[:n_judged], map(float, grades), strict=True))
        if kind != "qrels_only":
            length = rng.randint(1, 4) if kind == "short_run" else rng.randint(1, 40)
            # a mix of judged documents and documents the qrels never saw (unjudged)
            chosen = rng.sample(docs, length)
            run[qid] = dict(zip(chosen, _scores(rng, length), strict=True))
    return qrels, run


def top_m(run: Nested, m: int) -> Nested:
    """Each ranking cut to its top m by (score desc, docid desc), done independently."""
    out: Nested = {}
    for qid, docs in run.items():
        ranked = sorted(docs.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        out[qid] = dict(ranked[:m])
    return out


# ----------------------------------------------------------------------------- helpers


def oracle(qrels: Nested, run: Nested, **kwargs: object) -> dict[str, dict[str, float]]:
    """pytrec_eval's per-query values; a fresh evaluator for every data set."""
    int_qrels = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    evaluator = pytrec_eval.RelevanceEvaluator(int_qrels, ORACLE_MEASURES, **kwargs)
    return evaluator.evaluate(run)


def ireval(qrels: Nested, run: Nested, **options: Any):
    """ireval's evaluation under ``EvalOptions(**options)``."""
    return evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="sys"), TREC_NAMES,
                    options=EvalOptions(**options))


def mismatches(res, expected: dict[str, dict[str, float]]) -> list[str]:
    """Every (measure, query) where ireval and the oracle differ by more than TOL (or one
    is NaN, undefined, and the other not)."""
    bad = []
    for name in TREC_NAMES:
        got = res.per_query("sys", name)
        for qid, values in expected.items():
            if math.isnan(got[qid]) and math.isnan(values[name]):
                continue
            if not abs(got[qid] - values[name]) <= TOL:
                bad.append(f"{name} {qid}: ireval {got[qid]!r} != trec_eval {values[name]!r}")
    return bad


def expected_mean(name: str, values: list[float]) -> float:
    return math.fsum(values) if name in COUNTS else math.fsum(values) / len(values)


# ----------------------------------------------------------------------------- tests


def test_oracle_prints_exactly_the_measures_compared() -> None:
    qrels, run = make_dataset(0)
    printed = set(next(iter(oracle(qrels, run).values())))
    assert printed == set(TREC_NAMES)


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"default-seed{s}")
def test_per_query_and_mean_match_trec_eval(seed: int) -> None:
    qrels, run = make_dataset(seed)
    expected = oracle(qrels, run)
    res = ireval(qrels, run)
    # evaluated queries: in both run and qrels, qrels queries without relevant docs included
    assert set(res.query_ids["sys"]) == set(expected) == set(qrels) & set(run)
    assert mismatches(res, expected) == []
    for name in TREC_NAMES:
        want = expected_mean(name, [v[name] for v in expected.values()])
        assert res.mean("sys", name) == pytest.approx(want, abs=TOL), name


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"rel_level2-seed{s}")
def test_rel_level_matches_relevance_level(seed: int) -> None:
    qrels, run = make_dataset(seed)
    expected = oracle(qrels, run, relevance_level=2)
    res = ireval(qrels, run, rel_level=2)
    assert set(res.query_ids["sys"]) == set(expected)
    assert mismatches(res, expected) == []


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"depth-seed{s}")
def test_depth_matches_truncated_run(seed: int) -> None:
    qrels, run = make_dataset(seed)
    depth = (3, 5, 10)[seed % 3]
    expected = oracle(qrels, top_m(run, depth))
    res = ireval(qrels, run, depth=depth)
    assert set(res.query_ids["sys"]) == set(expected)
    assert mismatches(res, expected) == []
    assert res.per_query("sys", "num_ret").max() <= depth


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"complete-seed{s}")
def test_complete_scores_missing_queries_zero(seed: int) -> None:
    qrels, run = make_dataset(seed)
    expected = oracle(qrels, run)
    missing = set(qrels) - set(run)
    assert missing  # the data set has a qrels query without a ranking
    for qid in missing:  # trec_eval -c: an empty ranking, so 0 except num_rel
        n_rel = float(sum(g >= 1 for g in qrels[qid].values()))
        expected[qid] = {name: (n_rel if name == "num_rel" else 0.0) for name in TREC_NAMES}
    res = ireval(qrels, run, complete=True)
    assert set(res.query_ids["sys"]) == set(qrels) == set(expected)
    assert mismatches(res, expected) == []
    for name in TREC_NAMES:
        want = expected_mean(name, [v[name] for v in expected.values()])
        assert res.mean("sys", name) == pytest.approx(want, abs=TOL), name


@pytest.mark.parametrize("seed", SEEDS[:10], ids=lambda s: f"ties-seed{s}")
def test_tie_order_is_docid_descending(seed: int) -> None:
    """With every score equal, the ranking is docid descending, byte-wise (as trec_eval)."""
    qrels, run = make_dataset(seed)
    flat = {q: dict.fromkeys(docs, 1.0) for q, docs in run.items()}
    expected = oracle(qrels, flat)
    res = ireval(qrels, flat)
    assert mismatches(res, expected) == []


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: f"judged_only-seed{s}")
def test_judged_only_matches_judged_docs_only_flag(seed: int) -> None:
    """judged_only=True is trec_eval -J (condensed lists: grade >= 0 kept, -1 dropped).

    When a query's condensed ranking is empty, trec_eval 9.0.8 divides 0 by 0 in
    iprec_at_recall (so 11pt_avg) and gives NaN; ireval's value is NaN (undefined) there
    too, checked to be only there.
    """
    qrels, run = make_dataset(seed)
    expected = oracle(qrels, run, judged_docs_only_flag=True)
    for qid, values in expected.items():
        judged_ret = sum(qrels[qid].get(d, -1.0) >= 0 for d in run[qid])
        for name, value in values.items():
            if math.isnan(value):
                assert judged_ret == 0, (qid, name)
                assert name.startswith("iprec_at_recall_") or name == "11pt_avg", name
    res = ireval(qrels, run, judged_only=True)
    assert set(res.query_ids["sys"]) == set(expected)
    assert mismatches(res, expected) == []


def test_judged_only_with_depth_cuts_before_condensing() -> None:
    bad = []
    for seed in SEEDS:
        qrels, run = make_dataset(seed)
        expected = oracle(qrels, top_m(run, 5), judged_docs_only_flag=True)
        bad += mismatches(ireval(qrels, run, judged_only=True, depth=5), expected)
    assert bad == []
