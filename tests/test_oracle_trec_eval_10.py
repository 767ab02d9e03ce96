"""ireval (``trec_eval="10.0"``) against trec_eval 10.0 built from source, per query.

The second oracle: the ``trec_eval_10_precise`` binary (trec_eval 10.0 printing ``%.17g``
instead of ``%6.4f``, see ``trec_eval_oracle.py``) is run with ``-q -m all_trec`` (plus small
cutoffs: ``P``, ``recall``, ``map_cut``, ``ndcg_cut`` at 1, 2, 3, 5, 10, 20 and ``success``
at 1, 3, 5, 10, as random rankings are short) on seeded random data, under the options
``-c``, ``-M``, ``-l``, ``-J`` and combinations. Every line it prints for a measure ireval
parses (its trec_eval name is an alias) is compared, per query and for ``all``, within 1e-9.

The data sets are those of the pytrec_eval comparison (``test_oracle_trec_eval.make_dataset``:
score ties, docids whose byte order differs from numeric order, short rankings, queries
without relevant documents, qrels queries without a ranking, run queries without qrels,
pooled-but-unjudged ``-1`` grades, grades 0-4), with two changes that matter to 10.0 only:
scores are made doubles that float32 cannot tell apart (``near_ties``), and grade ``-2``
(trec_eval's own "in the pool, unjudged" value) appears besides ``-1``.

Two documented differences are checked rather than ignored:

* without ``-c``, trec_eval 10.0 stops ("result qid 'X' not found in qrels", exit 4) when a
  judged query has no ranking; ireval evaluates the other queries (as 9.0.8 did). The binary
  is therefore given the qrels of the queries the run answers, ireval the whole qrels: the
  same numbers must come out;
* an empty condensed ranking (``-J``, every retrieved document unjudged): trec_eval divides 0
  by 0 in ``iprec_at_recall`` and ``11pt_avg`` and prints NaN (and a NaN mean); ireval's
  value is NaN (undefined) there too. Those NaN are checked to be exactly those cases and
  ireval's NaN exactly trec_eval's; ireval's own mean leaves the NaN queries out, so it is
  compared with the mean of the defined per-query values (``eval``'s trec layout prints
  trec_eval's NaN mean: ``test_trec_eval_diff.py``).
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest
from test_oracle_trec_eval import make_dataset, top_m
from trec_eval_oracle import parse_q, run, write_qrels, write_run

from ireval_core import EvalOptions, Qrels, Run, evaluate, parse_measure
from ireval_core.errors import UnknownMeasureError

SEEDS = range(24)
TOL = 1e-9
CUTS = "1,2,3,5,10,20"
MEASURES = ["-m", "all_trec", "-m", f"P.{CUTS}", "-m", f"recall.{CUTS}", "-m", f"map_cut.{CUTS}",
            "-m", f"ndcg_cut.{CUTS}", "-m", "success.1,3,5,10"]

# (trec_eval flags, EvalOptions fields) of every case compared
CASES: dict[str, tuple[list[str], dict[str, Any]]] = {
    "default": ([], {}),
    "c": (["-c"], {"complete": True}),
    "M5": (["-M", "5"], {"depth": 5}),
    "cM3": (["-c", "-M", "3"], {"complete": True, "depth": 3}),
    "l2": (["-l", "2"], {"rel_level": 2}),
    "cl3": (["-c", "-l", "3"], {"complete": True, "rel_level": 3}),
    "J": (["-J"], {"judged_only": True}),
    "JM5": (["-J", "-M", "5"], {"judged_only": True, "depth": 5}),
    "cJl2": (["-c", "-J", "-l", "2"], {"complete": True, "judged_only": True, "rel_level": 2}),
}

# trec_eval names that parse in ireval but mean another measure there (none may remain)
DIFFERENT_MEANING: set[str] = set()
# what all_trec prints that ireval does not compute yet (issue 19), and lines that are no measure
NOT_YET = {"relstring"}
NOT_YET_PREFIXES: tuple[str, ...] = ()
NOT_MEASURES = {"runid", "num_q"}
COUNTS = {"num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}
SUMMARY_ONLY = {"gm_map", "gm_bpref"}  # trec_eval prints no per-query line for them
NAN_WHEN_EMPTY = ("iprec_at_recall_", "11pt_avg")

Nested = dict[str, dict[str, float]]


def near_ties(run: Nested, rng: random.Random) -> Nested:
    """Scores made doubles: about a third nudged by less than float32 can see (2**-35 of the
    score), so float32 ties them where doubles do not; a few queries fully random doubles."""
    out: Nested = {}
    for qid, docs in run.items():
        if rng.random() < 0.2:
            out[qid] = {d: rng.uniform(-5, 5) for d in docs}
            continue
        out[qid] = {d: (s + rng.choice((-1, 1)) * rng.randint(1, 9) * 2.0**-35 * max(abs(s), 1)
                        if rng.random() < 0.35 else s) for d, s in docs.items()}
    return out


def dataset(seed: int) -> tuple[Nested, Nested]:
    qrels, run_ = make_dataset(seed)
    rng = random.Random(7_000 + seed)
    qrels = {q: {d: (-2.0 if g == -1 and rng.random() < 0.5 else g) for d, g in docs.items()}
             for q, docs in qrels.items()}
    return qrels, near_ties(run_, rng)


def oracle(binary: Path, folder: Path, qrels: Nested, run_: Nested, flags: list[str]
           ) -> dict[tuple[str, str], str]:
    """trec_eval 10.0's ``-q`` lines; without ``-c`` on the qrels of the answered queries."""
    if "-c" not in flags:
        qrels = {q: docs for q, docs in qrels.items() if q in run_}
    write_qrels(folder / "qrels", qrels)
    write_run(folder / "run", run_)
    return parse_q(run(binary, ["-q", *MEASURES, *flags, str(folder / "qrels"),
                                str(folder / "run")]))


def compared(names: set[str]) -> list[str]:
    """The printed names ireval parses (its aliases), minus those meaning something else."""
    out = []
    for name in sorted(names - DIFFERENT_MEANING):
        try:
            parse_measure(name)
        except UnknownMeasureError:
            continue
        out.append(name)
    return out


def mismatches(expected: dict[tuple[str, str], str], qrels: Nested, run_: Nested,
               options: EvalOptions) -> list[str]:
    names = compared({m for m, _ in expected})
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run_, name="sys"), names,
                   options=options)
    bad = []
    printed_queries = {q for _, q in expected} - {"all"}
    assert set(res.query_ids["sys"]) == printed_queries
    for name in names:
        got = res.per_query("sys", name)
        corrected = []
        summary_only = name in SUMMARY_ONLY  # gm_map, gm_bpref: their values are map, bpref
        for qid in sorted(printed_queries):
            if summary_only:
                assert (name, qid) not in expected
                corrected.append(float(got[qid]))
                continue
            want = float(expected[(name, qid)])
            if math.isnan(want):  # see the module docstring
                ranking = top_m({qid: run_.get(qid, {})}, options.depth or 10**9)[qid]
                judged_ret = sum(qrels[qid].get(d, -1.0) >= 0 for d in ranking)
                if not (options.judged_only and judged_ret == 0
                        and name.startswith(NAN_WHEN_EMPTY)):
                    bad.append(f"{name} {qid}: trec_eval NaN")
                if not math.isnan(got[qid]):
                    bad.append(f"{name} {qid}: ireval {got[qid]!r} != trec_eval NaN")
                continue
            corrected.append(want)
            if not abs(got[qid] - want) <= TOL:
                bad.append(f"{name} {qid}: ireval {got[qid]!r} != trec_eval {want!r}")
        want_all = float(expected[(name, "all")])
        if math.isnan(want_all):  # ireval's mean: over the defined values
            want_all = math.fsum(corrected) / (1 if name in COUNTS else len(corrected))
        if not abs(res.mean("sys", name) - want_all) <= TOL * max(1.0, abs(want_all)):
            bad.append(f"{name} all: ireval {res.mean('sys', name)!r} != trec_eval {want_all!r}")
    return bad


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("seed", SEEDS)
def test_per_query_matches_trec_eval_10(trec_eval_10_precise: Path, tmp_path: Path,
                                         seed: int, case: str) -> None:
    qrels, run_ = dataset(seed)
    flags, fields = CASES[case]
    expected = oracle(trec_eval_10_precise, tmp_path, qrels, run_, flags)
    assert mismatches(expected, qrels, run_, EvalOptions(trec_eval="10.0", **fields)) == []


def test_comparison_covers_the_measures(trec_eval_10_precise: Path, tmp_path: Path) -> None:
    """Every measure ireval shares with trec_eval's all_trec is compared, and the data
    exercise the 10.0 cases: float32 ties, -2 grades, judged queries without a ranking and
    qrels-less run queries."""
    qrels, run_ = dataset(0)
    expected = oracle(trec_eval_10_precise, tmp_path, qrels, run_, ["-c"])
    printed = {m for m, _ in expected}
    names = compared(printed)
    left = {n for n in printed - set(names) - NOT_MEASURES - DIFFERENT_MEANING
            if not n.startswith(NOT_YET_PREFIXES)}
    assert left == NOT_YET
    assert len(names) == 86
    assert {"map", "ndcg", "bpref", "iprec_at_recall_0.60", "11pt_avg", "P_1", "set_F",
            "num_nonrel_judged_ret"} <= set(names)
    assert any(g == -2 for docs in qrels.values() for g in docs.values())
    assert set(qrels) - set(run_) and set(run_) - set(qrels)
    import numpy as np
    merged = 0
    for seed in SEEDS:
        for docs in dataset(seed)[1].values():
            scores = np.array(list(docs.values()))
            merged += len(np.unique(scores)) - len(np.unique(scores.astype(np.float32)))
    assert merged > 50
