"""Gain maps of trec_eval's ``G``, ``ndcg_rel``, ``Rndcg`` (and ``ndcg``) against trec_eval 10.0.

trec_eval reads ``-m G.1=3,2=9`` as gains for relevance levels (a level not given gains its
own value; ``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c`` and ``m_ndcg.c`` all take these
pairs, ``gain_init.c``; ``binG`` and ``ndcg_cut`` take none). ``eval`` reads the same
syntax (:func:`ireval_core.trec_output.trec_params`) into ``G(gain={...})``,
``nDCGRel(gain={...})``, ``RnDCG(gain={...})``. The precise trec_eval 10.0 build and
ireval are compared per query within 1e-9 on the random data of the main 10.0 oracle
(grades 0-4, -1 and -2, ties, short rankings), under several options.

The maps keep distinct gains at least 1 apart: trec_eval sorts gains with a comparator
that truncates their difference to an integer, so gains closer than that (3 and 3.5)
come in an order it does not define; ireval sorts them exactly (docs/semantics.md).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from test_oracle_trec_eval_10 import TOL, dataset
from trec_eval_oracle import parse_q, run, write_qrels, write_run

from ireval_core import EvalOptions, Qrels, Run, evaluate, parse_measure
from ireval_core.trec_output import columns

MAPS = ["1=3,2=9,4=4.5", "1=10,4=1", "2=0,3=7", "0=0,1=2"]
BASES = ["G", "ndcg_rel", "Rndcg", "ndcg"]
CASES = {"default": ([], {}), "c": (["-c"], {"complete": True}), "M5": (["-M", "5"], {"depth": 5}),
         "J": (["-J"], {"judged_only": True}), "l2": (["-l", "2"], {"rel_level": 2.0})}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("gain_map", MAPS)
@pytest.mark.parametrize("seed", range(6))
def test_gain_maps_match_trec_eval_10(trec_eval_10_precise: Path, tmp_path: Path, seed: int,
                                      gain_map: str, case: str) -> None:
    qrels, run_ = dataset(seed)
    flags, fields = CASES[case]
    if "-c" not in flags:  # trec_eval 10.0 stops on a judged query without a ranking
        qrels = {q: docs for q, docs in qrels.items() if q in run_}
    write_qrels(tmp_path / "qrels", qrels)
    write_run(tmp_path / "run", run_)
    names = [f"{base}.{gain_map}" for base in BASES]
    expected = parse_q(run(trec_eval_10_precise, [
        "-q", *(a for n in names for a in ("-m", n)), *flags, str(tmp_path / "qrels"),
        str(tmp_path / "run")]))
    q = Qrels.from_dict(qrels)
    cols = columns(names, parse_measure, grades=np.unique(q.grade), trec_order=True)
    assert [c.label for c in cols] == [f"{b}_{gain_map}" for b in ("G", "ndcg", "ndcg_rel",
                                                                   "Rndcg")]
    res = evaluate(q, Run.from_dict(run_, name="sys"), [c.measure for c in cols],
                   options=EvalOptions(trec_eval="10.0", **fields))
    bad, seen = [], 0
    for c in cols:
        got = res.per_query("sys", c.measure)
        for (name, qid), text in expected.items():
            if name != c.label:
                continue
            seen += 1
            value = res.mean("sys", c.measure) if qid == "all" else got[qid]
            if not abs(value - float(text)) <= TOL:
                bad.append(f"{name} {qid}: ireval {value!r} != trec_eval {text}")
    assert bad == []
    assert seen == len(expected)  # every line trec_eval printed was compared
    assert {qid for _, qid in expected} - {"all"} == set(res.query_ids["sys"])


def test_the_map_reaches_the_measure() -> None:
    """``-m G.1=3`` on grades 0-2 is G with gains 0:0, 1:3, 2:2, and its definition says so."""
    [col] = columns(["G.1=3"], parse_measure, grades=[0.0, 1.0, 2.0])
    assert str(col.measure) == "G(gain={0:0,1:3,2:2})"
    qrels = Qrels.from_dict({"q": {"a": 2, "b": 1}})
    run_ = Run.from_dict({"q": {"b": 2.0, "a": 1.0}}, name="s")
    res = evaluate(qrels, [run_], [col.measure, "G"])
    # gains 3 then 2 against the ideal 3, 2: the run is ideal under the map, not without it
    assert res.mean("s", col.measure) == pytest.approx(1.0)
    assert res.mean("s", "G") < 1.0
    assert "{0:0,1:3,2:2}" in res.definition(col.measure)
