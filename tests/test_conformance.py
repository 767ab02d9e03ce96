"""trec_eval 9.0.8's own test data, reproduced to the 4 decimals trec_eval prints.

The fixture lives outside the project, in ``../shared/conformance/trec_eval-9.0.8/`` (see its
README): NIST's ``qrels.test``, ``qrels.rel_level`` (grades -1..4), ``results.test`` and
``results.trunc`` (a shorter run missing topic 302), with the output of

* ``out.test.aq``   ``trec_eval -m all_trec -q qrels.test results.test``
* ``out.test.aqc``  ``trec_eval -m all_trec -q -c qrels.test results.trunc``
* ``out.test.aqcM`` ``trec_eval -m all_trec -q -c -M100 qrels.test results.trunc``
* ``out.test.aql``  ``trec_eval -m all_trec -mrelstring.20 -q -l2 qrels.rel_level results.test``

Every measure ireval supports that appears there is compared per query and for ``all``:
values within half a unit of the 4th decimal, counts exactly. Files go through the real
readers. trec_eval 9 stores scores as float32 and ireval as float64; on these files that makes
no difference: the runs have exact score ties (494-498 distinct scores per 500 documents,
broken by docid descending), and float32 merges no further scores.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ireval_core import EvalOptions, evaluate, parse_measure, read_qrels, read_runs
from ireval_core.errors import UnknownMeasureError

FIXTURE = Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "trec_eval-9.0.8"
if not FIXTURE.is_dir():
    pytest.skip(f"trec_eval conformance files not found at {FIXTURE}", allow_module_level=True)

PRINTED = 5e-5 + 1e-9  # half a unit of the 4th decimal, plus rounding slack
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}

CASES = {
    "aq": ("qrels.test", "results.test", EvalOptions()),
    "aqc": ("qrels.test", "results.trunc", EvalOptions(complete=True)),
    "aqcM": ("qrels.test", "results.trunc", EvalOptions(complete=True, depth=100)),
    "aql": ("qrels.rel_level", "results.test", EvalOptions(rel_level=2)),
}

# Measures trec_eval prints that ireval does not have (checked so that the list stays honest).
NOT_IN_IREVAL = {"runid", "num_q", "relstring", "relstring_20"}
NOT_IN_IREVAL_PREFIXES: tuple[str, ...] = ()
SUMMARY_ONLY = {"gm_map", "gm_bpref"}  # no per-query lines: their per-query values are map, bpref


def read_expected(name: str) -> dict[tuple[str, str], str]:
    """``{(measure, query): printed value}`` of one trec_eval output file."""
    out = {}
    for line in (FIXTURE / f"out.test.{name}").read_text().splitlines():
        measure, query, value = (field.strip() for field in line.split("\t"))
        out[(measure, query)] = value
    return out


def read_run_file(filename: str):
    """The run through the real reader, from the file as trec_eval read it.

    ``results.trunc`` carries junk after the 6th column on a few lines ("more junk at end of
    lines. reserved for future expansion"), which trec_eval ignores and so does ireval, with
    a warning (see ``test_reader_ignores_trailing_junk_like_trec_eval``).
    """
    (run,) = read_runs(FIXTURE / filename)
    return run


def supported(names: set[str]) -> list[str]:
    out = []
    for name in sorted(names):
        try:
            parse_measure(name)
        except UnknownMeasureError:
            continue
        out.append(name)
    return out


def evaluated(case: str):
    qrels_file, run_file, options = CASES[case]
    expected = read_expected(case)
    names = supported({m for m, _ in expected})
    run = read_run_file(run_file)
    res = evaluate(read_qrels(FIXTURE / qrels_file), run, names, options=options)
    return res, run.name, names, expected


_CACHE: dict[str, tuple] = {}


def _cached(case: str):
    if case not in _CACHE:
        _CACHE[case] = evaluated(case)
    return _CACHE[case]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"unsupported-only-{c}")
def test_only_trec_eval_extras_are_skipped(case: str) -> None:
    names = {m for m, _ in read_expected(case)}
    skipped = names - set(supported(names))
    assert {n for n in skipped if not n.startswith(NOT_IN_IREVAL_PREFIXES)} == NOT_IN_IREVAL & names
    assert len(supported(names)) == 92


def _comparisons():
    for case in CASES:
        for measure in supported({m for m, _ in read_expected(case)}):
            yield pytest.param(case, measure, id=f"{case}-{measure}")


@pytest.mark.parametrize(("case", "measure"), list(_comparisons()))
def test_matches_trec_eval_output(case: str, measure: str) -> None:
    res, system, _, expected = _cached(case)
    per_query = res.per_query(system, measure)
    rows = {q: v for (m, q), v in expected.items() if m == measure}
    assert "all" in rows and (len(rows) >= 3 or measure in SUMMARY_ONLY)
    for query, printed in rows.items():
        got = res.mean(system, measure) if query == "all" else float(per_query[query])
        if measure in COUNTS:
            assert got == int(printed), (query, got, printed)
        else:
            assert abs(got - float(printed)) <= PRINTED, (query, got, printed)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"queries-{c}")
def test_evaluated_queries(case: str) -> None:
    """Per-query lines trec_eval prints = ireval's queries that have a ranking.

    With -c, topic 302 (absent from results.trunc) is averaged in but has no per-query line.
    """
    res, system, _, expected = _cached(case)
    printed = {q for (_, q) in expected} - {"all"}
    queries = set(res.query_ids[system])
    if CASES[case][2].complete:
        assert printed == {"301", "303"}
        assert queries == {"301", "302", "303"}
        assert res.per_query(system, "map")["302"] == 0.0
        assert res.per_query(system, "num_rel")["302"] == 77  # still counted under -c
    else:
        assert printed == queries == {"301", "302", "303"}


def test_depth_cuts_rankings_to_100() -> None:
    res, system, _, _ = _cached("aqcM")
    assert res.per_query(system, "num_ret").to_dict() == {"301": 100, "302": 0, "303": 84}


def test_trec_eval_ndcg_ignores_relevance_level() -> None:
    """In out.test.aql (-l2) ndcg and ndcg_cut_k are the -l1 values: gains are the grades.

    ireval with rel_level=1 reproduces the printed -l2 numbers, and pytrec_eval (trec_eval
    9.0.8) gives identical ndcg for relevance_level 1 and 2 on qrels.rel_level.
    """
    expected = read_expected("aql")
    qrels = read_qrels(FIXTURE / "qrels.rel_level")
    run = read_run_file("results.test")
    ndcg_names = supported({m for m, _ in expected if m.startswith("ndcg")})
    at_1 = evaluate(qrels, run, ndcg_names, options=EvalOptions(rel_level=1))
    for name in ndcg_names:
        for (m, q), printed in expected.items():
            if m == name:
                got = at_1.mean(run.name, m) if q == "all" else at_1.per_query(run.name, m)[q]
                assert abs(got - float(printed)) <= PRINTED, (m, q)
    # binary measures do move with -l, so the comparison above is not vacuous
    at_2 = evaluate(qrels, run, ["map", "ndcg"], options=EvalOptions(rel_level=2))
    at_1b = evaluate(qrels, run, ["map", "ndcg"], options=EvalOptions(rel_level=1))
    assert at_2.mean(run.name, "map") != pytest.approx(at_1b.mean(run.name, "map"), abs=1e-3)
    assert at_2.mean(run.name, "ndcg") == at_1b.mean(run.name, "ndcg")

    oracle = pytest.importorskip("pytrec_eval")
    qd = qrels.to_dict()
    qd = {q: {d: int(g) for d, g in docs.items()} for q, docs in qd.items()}
    rd = run.to_dict()
    by_level = [oracle.RelevanceEvaluator(qd, {"ndcg", "map"}, relevance_level=level)
                .evaluate(rd) for level in (1, 2)]
    for q in ("301", "302", "303"):
        assert by_level[0][q]["ndcg"] == by_level[1][q]["ndcg"]
        assert abs(by_level[1][q]["ndcg"] - at_2.per_query(run.name, "ndcg")[q]) <= 1e-9


def test_reader_ignores_trailing_junk_like_trec_eval() -> None:
    (run,) = read_runs(FIXTURE / "results.trunc")
    assert len(run) == 584
    assert run.name == "STANDARD"
    assert [(w.code, w.count) for w in run.warnings] == [("extra-columns", 5)]


def test_float32_scores_change_no_ranking() -> None:
    """trec_eval 9 keeps scores as float32: on these runs that merges no distinct scores."""
    for filename in ("results.test", "results.trunc"):
        run = read_run_file(filename)
        for q in range(run.n_queries):
            scores = run.score[run.offsets[q]:run.offsets[q + 1]]
            assert len(np.unique(scores)) == len(np.unique(scores.astype(np.float32)))
            assert len(np.unique(scores)) < len(scores) or filename == "results.trunc"
