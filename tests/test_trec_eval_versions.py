"""The two trec_eval semantics: ``EvalOptions(trec_eval="9.0.8")`` (default) and ``"10.0"``.

* scores: 9.0.8 (and pytrec_eval) reads them as float32, so doubles float32 cannot tell apart
  tie and are ranked by docid; 10.0 keeps doubles. Checked per query against pytrec_eval on
  data full of such near ties (the 10.0 side is in ``test_oracle_trec_eval_10.py``);
* fractions of R: 9.0.8 needs ``(long)(r·R + 0.9)`` relevant documents for IPrec@r and 11pt,
  10.0 ``lround(r·R)`` (the issue's worked example: topic 302);
* every cache keyed by options tells the versions apart.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from test_oracle_trec_eval import ireval, make_dataset, mismatches, oracle
from test_oracle_trec_eval_10 import near_ties
from trec_eval_oracle import CONFORMANCE_10 as FIXTURE_10

from ireval_core import EvalOptions, Qrels, Run, evaluate, read_qrels, read_runs
from ireval_core.data import JoinCache, join, join_key, version_order
from ireval_core.evaluate import MeasureCache
from ireval_core.queries import ranking


def near_tie_dataset(seed: int):
    qrels, run = make_dataset(seed)
    return qrels, near_ties(run, random.Random(9_000 + seed))


@pytest.mark.parametrize("seed", range(20))
def test_float32_ties_match_pytrec_eval(seed: int) -> None:
    pytest.importorskip("pytrec_eval")
    qrels, run = near_tie_dataset(seed)
    assert mismatches(ireval(qrels, run), oracle(qrels, run)) == []


def test_near_ties_change_numbers_between_versions() -> None:
    """On the same data the 10.0 ranking differs, so the check above is not vacuous."""
    pytest.importorskip("pytrec_eval")
    differ = 0
    for seed in range(20):
        qrels, run = near_tie_dataset(seed)
        differ += len(mismatches(ireval(qrels, run, trec_eval="10.0"), oracle(qrels, run)))
    assert differ > 20


def test_version_order_reorders_only_float32_ties() -> None:
    run = Run.from_dict({"q1": {"a": 0.03426470588235295, "b": 0.03426470588235294, "c": 0.5},
                         "q2": {"x": 1.0, "y": 2.0}}, name="r")
    order, score = version_order(run, "9.0.8")
    assert order is not None and score is not None
    docs = run.doc_ids.take(run.dcode[order]).to_pylist()
    assert docs == ["c", "b", "a", "y", "x"]  # the tie goes by docid descending
    assert score[1] == score[2] == float(np.float32(0.03426470588235295))
    assert version_order(run, "10.0") == (None, None)
    plain = Run.from_dict({"q": {"a": 1.0, "b": 1.0 + 2**-20}}, name="p")
    assert version_order(plain, "9.0.8") == (None, None)  # float32 keeps them apart
    q = Qrels.from_dict({"q1": {"a": 1}})
    assert list(ranking(q, run, "q1")["docid"]) == ["c", "b", "a"]
    assert list(ranking(q, run, "q1", options=EvalOptions(trec_eval="10.0"))["docid"]) == [
        "c", "a", "b"]
    j9, j10 = (join(q, run, options=EvalOptions(trec_eval=v)) for v in ("9.0.8", "10.0"))
    assert np.isnan(j9.grade[1]) and j9.grade[2] == 1.0  # b (unjudged) then a
    assert j10.grade[1] == 1.0 and np.isnan(j10.grade[2])


def test_huge_scores_do_not_warn() -> None:
    """Beyond float32's range a score becomes inf (as C's conversion): no RuntimeWarning."""
    run = Run.from_dict({"q": {"a": 2e300, "b": 1e300, "c": 1.0}}, name="r")
    order, score = version_order(run, "9.0.8")
    assert score is not None and np.isinf(score[:2]).all()
    assert run.doc_ids.take(run.dcode[order]).to_pylist() == ["b", "a", "c"]


@pytest.mark.skipif(not FIXTURE_10.is_dir(), reason="trec_eval 10.0 conformance files absent")
def test_topic_302_worked_example() -> None:
    """The issue's example: iprec_at_recall_0.60 of topic 302 is 0.1420 in 9.0.8, 0.1528 in
    10.0 (R = 77: 9.0.8 needs (long)(46.2 + 0.9) = 47 relevant, 10.0 lround(46.2) = 46)."""
    qrels = read_qrels(FIXTURE_10 / "qrels.test")
    (run,) = read_runs(FIXTURE_10 / "results.test")
    got = {v: evaluate(qrels, run, ["iprec_at_recall_0.60", "11pt_avg"],
                       options=EvalOptions(trec_eval=v)) for v in ("9.0.8", "10.0")}
    assert round(float(got["9.0.8"].per_query(run.name, "IPrec@0.6")["302"]), 4) == 0.1420
    assert round(float(got["10.0"].per_query(run.name, "IPrec@0.6")["302"]), 4) == 0.1528
    assert round(got["9.0.8"].mean(run.name, "11pt"), 4) == 0.1958
    assert round(got["10.0"].mean(run.name, "11pt"), 4) == 0.1962


def test_caches_tell_the_versions_apart() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 0}})
    run = Run.from_dict({"q": {"a": 0.03426470588235295, "b": 0.03426470588235294}}, name="r")
    assert join_key(EvalOptions()) != join_key(EvalOptions(trec_eval="10.0"))
    joins, values = JoinCache(), MeasureCache()
    rr = {v: evaluate(qrels, run, ["RR", "nDCG"], options=EvalOptions(trec_eval=v),
                      joins=joins, values=values) for v in ("9.0.8", "10.0", "9.0.8")}
    assert rr["9.0.8"].mean("r", "RR") == 0.5
    assert rr["10.0"].mean("r", "RR") == 1.0
    assert joins.misses == 2 and values.misses == 4
