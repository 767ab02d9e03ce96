"""trec_eval's long tail (``ireval_core.measures.longtail``, Rprec_mult, rbp) against both oracles.

* trec_eval 9.0.8 through pytrec_eval, per query on the random data sets of
  ``test_oracle_trec_eval`` (default options, ``-l 2``, ``-J``, and ``-M`` as a cut run):
  gm_map, gm_bpref, infAP, binG, set_map, set_relative_P, relative_P_k and Rprec_mult_x,
  with parameters (not utility: pytrec_eval 0.5.11 reports "improper number of coefficients"
  for it with or without them, and prints 0; 9.0.8's own test files cover it).
  pytrec_eval keeps gm_map and gm_bpref per query as log(max(value, 1e-5)): compared as
  such, and their geometric means with ireval's.
* trec_eval 10.0 built from source, with parameters all_trec does not use: Rprec_mult,
  relative_P, utility (and ``-N``), unj, rbp and rbp_resid with another p.
* The parameter syntax of trec_eval's own test (``out.test.meas_params``, 4 decimals).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from test_oracle_trec_eval import make_dataset, top_m
from test_oracle_trec_eval_10 import dataset as dataset_10
from trec_eval_oracle import CONFORMANCE_10, parse_q, run, write_qrels, write_run

from ireval_core import EvalOptions, Qrels, Run, evaluate, read_qrels, read_runs

SEEDS = range(30)
TOL = 1e-9

# pytrec_eval measure -> the per-query names it prints
ORACLE = {
    "gm_map": ["gm_map"], "gm_bpref": ["gm_bpref"], "infAP": ["infAP"], "binG": ["binG"],
    "set_map": ["set_map"], "set_relative_P": ["set_relative_P"], "G": ["G"],
    "ndcg_rel": ["ndcg_rel"], "Rndcg": ["Rndcg"],
    "relative_P.1,2,5,10,20": [f"relative_P_{k}" for k in (1, 2, 5, 10, 20)],
    "Rprec_mult.0.2,0.5,1.0,1.5,3.0": [f"Rprec_mult_{x}" for x in
                                       ("0.20", "0.50", "1.00", "1.50", "3.00")],
}
LOG_PER_QUERY = {"gm_map", "gm_bpref"}


def pytrec(qrels, run_, **kwargs):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    int_qrels = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    return pytrec_eval.RelevanceEvaluator(int_qrels, set(ORACLE), **kwargs).evaluate(run_)


def ireval_names(options: EvalOptions, qrels, run_):
    names = [n for ns in ORACLE.values() for n in ns]
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run_, name="sys"), names,
                   options=options)
    return res, dict(zip(names, names, strict=True))


@pytest.mark.parametrize("case", ["default", "rel2", "judged", "depth5"])
@pytest.mark.parametrize("seed", SEEDS)
def test_long_tail_matches_pytrec_eval(seed: int, case: str) -> None:
    qrels, run_ = make_dataset(seed)
    kwargs = {"rel2": {"relevance_level": 2}, "judged": {"judged_docs_only_flag": True}}.get(
        case, {})
    fields = {"rel2": {"rel_level": 2}, "judged": {"judged_only": True},
              "depth5": {"depth": 5}}.get(case, {})
    expected = pytrec(qrels, top_m(run_, 5) if case == "depth5" else run_, **kwargs)
    res, spec = ireval_names(EvalOptions(**fields), qrels, run_)
    bad = []
    for name, s in spec.items():
        got = res.per_query("sys", s)
        for qid, values in expected.items():
            want = values[name]
            value = got[qid]
            if name in LOG_PER_QUERY:
                value = math.log(max(value, 1e-5))
            if not abs(value - want) <= TOL:
                bad.append(f"{name} {qid}: {value!r} != {want!r}")
        if name in LOG_PER_QUERY:
            mean = math.exp(math.fsum(v[name] for v in expected.values()) / len(expected))
            if not abs(res.mean("sys", s) - mean) <= TOL:
                bad.append(f"{name} mean: {res.mean('sys', s)!r} != {mean!r}")
    assert bad == []


# ----------------------------------------------------------------------------- 10.0

PARAMS_10 = ["-m", "Rprec_mult.0.1,0.25,1.5,4", "-m", "relative_P.1,3,7,50",
             "-m", "utility.3,-2,0.5,1", "-m", "unj.1,3,7,50", "-m", "rbp.p=0.5",
             "-m", "rbp_resid.p=0.75", "-N", "5000"]
SPECS_10 = {
    **{f"Rprec_mult_{x}": f"Rprec(mult={x})" for x in ("0.10", "0.25", "1.50", "4.00")},
    **{f"relative_P_{k}": f"RelativeP@{k}" for k in (1, 3, 7, 50)},
    **{f"unj_{k}": f"Unjudged@{k}" for k in (1, 3, 7, 50)},
    "utility_3,-2,0.5,1": "Utility(a=3,b=-2,c=0.5,d=1,docs=5000)",
    "rbp_p=0.5": "RBP(p=0.5,gain=graded)", "rbp_resid_p=0.75": "RBPResid(p=0.75)",
}


@pytest.mark.parametrize("flags", [[], ["-c", "-l", "2"], ["-J", "-M", "6"]],
                         ids=["default", "c-l2", "J-M6"])
@pytest.mark.parametrize("seed", range(12))
def test_parameters_match_trec_eval_10(trec_eval_10_precise: Path, tmp_path: Path,
                                       seed: int, flags: list[str]) -> None:
    qrels, run_ = dataset_10(seed)
    complete = "-c" in flags
    given = qrels if complete else {q: d for q, d in qrels.items() if q in run_}
    write_qrels(tmp_path / "qrels", given)
    write_run(tmp_path / "run", run_)
    expected = parse_q(run(trec_eval_10_precise, ["-q", *PARAMS_10, *flags,
                                                 str(tmp_path / "qrels"), str(tmp_path / "run")]))
    options = EvalOptions(trec_eval="10.0", complete=complete,
                          rel_level=2 if "-l" in flags else 1,
                          judged_only="-J" in flags, depth=6 if "-M" in flags else None)
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run_, name="sys"),
                   list(SPECS_10.values()), options=options)
    bad = []
    for name, spec in SPECS_10.items():
        got = res.per_query("sys", spec)
        queries = {q for (m, q) in expected if m == name} - {"all"}
        assert queries == set(res.query_ids["sys"])
        values, corrected = [], False
        for qid in queries:
            want = float(expected[(name, qid)])
            if complete and qid not in run_ and name in BOGUS:  # see bogus_value
                assert want == pytest.approx(bogus_value(name, qrels[qid]), abs=TOL)
                want, corrected = 0.0, True
            values.append(want)
            if not abs(got[qid] - want) <= TOL:
                bad.append(f"{name} {qid}: {got[qid]!r} != {want!r}")
        want_all = (math.fsum(values) / len(values) if corrected
                    else float(expected[(name, "all")]))
        if not abs(res.mean("sys", spec) - want_all) <= TOL * max(1.0, abs(want_all)):
            bad.append(f"{name} all")
    assert bad == []


BOGUS = {"utility_3,-2,0.5,1", "rbp_resid_p=0.75"}


def bogus_value(name: str, judged: dict[str, float]) -> float:
    """What trec_eval 10.0 -c prints for a judged query without a ranking, for the measures it
    forgets to zero (documented in docs/semantics.md; ireval scores 0, as 9.0.8).

    10.0 evaluates such a query on a one-document ranking of an unjudged document, then
    zeroes ``num_ret``, ``utility``, ``rbp_resid``, ``unj*`` and ``relstring`` by their
    names; given parameters, utility and rbp_resid print under other names and keep their
    values: utility = b + c·R + d·(N − 1 − R), rbp_resid = p + (1 − p) = 1 (with -l 2 here).
    """
    if name == "rbp_resid_p=0.75":
        return 1.0
    n_rel = sum(g >= 2 for g in judged.values())
    return -2 * 1 + 0.5 * n_rel + 1 * (5000 - 1 - n_rel)


@pytest.mark.skipif(not CONFORMANCE_10.is_dir(), reason="trec_eval 10.0 conformance absent")
def test_meas_params_file() -> None:
    """``out.test.meas_params``: Rprec_mult.5.0,0.2,0.35 and utility.2,-1,0,0 as trec_eval
    10.0 prints them (4 decimals), per query and for all."""
    expected = parse_q((CONFORMANCE_10 / "out.test.meas_params").read_text())
    specs = {"Rprec_mult_5.00": "Rprec(mult=5)", "Rprec_mult_0.20": "Rprec(mult=0.2)",
             "Rprec_mult_0.35": "Rprec(mult=0.35)", "utility_2,-1,0,0": "Utility(a=2)"}
    (run_,) = read_runs(CONFORMANCE_10 / "results.test")
    res = evaluate(read_qrels(CONFORMANCE_10 / "qrels.test"), run_, list(specs.values()),
                   options=EvalOptions(trec_eval="10.0"))
    for name, spec in specs.items():
        rows = {q: v for (m, q), v in expected.items() if m == name}
        assert len(rows) == 4
        for qid, printed in rows.items():
            got = res.mean(run_.name, spec) if qid == "all" else res.per_query(run_.name,
                                                                                 spec)[qid]
            assert abs(got - float(printed)) <= 5e-5 + 1e-9, (name, qid, got, printed)


def test_rbp_is_trec_eval_s_and_RBP_ir_measures_s() -> None:
    """``rbp`` (trec_eval) is graded with p = 0.9; ``RBP`` stays binary with p = 0.8."""
    from ireval_core import parse_measure

    assert str(parse_measure("rbp")) == "RBP(gain=graded,p=0.9)"
    assert str(parse_measure("RBP")) == "RBP"
    qrels = Qrels.from_dict({"q": {"a": 4, "b": 2, "c": 0}})
    run_ = Run.from_dict({"q": {"a": 3.0, "b": 2.0, "c": 1.0, "x": 0.5}}, name="r")
    res = evaluate(qrels, run_, ["rbp", "RBP", "rbp_resid", "unj_5"])
    assert res.mean("r", "rbp") == pytest.approx(0.1 * (1 + 0.9 * 0.5))
    assert res.mean("r", "RBP") == pytest.approx(0.2 * (1 + 0.8))
    assert res.mean("r", "rbp_resid") == pytest.approx(0.9**4 + 0.1 * 0.9**3)
    assert res.mean("r", "unj_5") == pytest.approx(1 / 5)
    assert np.isfinite(res.values[("r", "RBP(gain=graded,p=0.9)")]).all()
    # the names trec_eval prints for measures given parameters parse to the same measures
    assert parse_measure("rbp_p=0.5") == parse_measure("RBP(p=0.5, gain=graded)")
    assert parse_measure("rbp_resid_p=0.75") == parse_measure("RBPResid(p=0.75)")
    assert parse_measure("utility_2,-1,0,0") == parse_measure("Utility(a=2)")
    assert parse_measure("Rprec_mult_1.00") == parse_measure("Rprec")
