"""The judge queue's floor script (``benchmarks/queue_floor.py``): its per-query model of
the verdict says what :func:`judgment_debt` says, label after label, and its clairvoyant
search settles on the full judgments' verdict with fewer than half the holes labeled.

Oracle: :func:`judgment_debt` on the qrels with the labels given so far.
"""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path

from ireval_core import Qrels
from ireval_core.decisions.holes import judgment_debt
from ireval_core.decisions.queue_simulation import complete_judgments, hide_judgments
from ireval_core.io import read_qrels, read_run

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "sample_data"


def _floor_module():
    spec = importlib.util.spec_from_file_location("queue_floor",
                                                  ROOT / "benchmarks" / "queue_floor.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_model_is_judgment_debt_and_the_clairvoyant_order_settles_on_the_truth() -> None:
    floor = _floor_module()
    truth = read_qrels(SAMPLE / "qrels.txt")
    runs = [read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "neural", "narrow")]
    start = hide_judgments(truth, runs, 10, 0.4, seed=1)
    a, b = runs[0], runs[1]
    now = judgment_debt(start, [a, b], "nDCG@10")[0]
    queries = [str(q) for q in now.query_ids]
    given, grades = start.to_dict(), truth.to_dict()
    model = floor.PairModel(given, grades, a, b, queries, 10)
    assert model.n_holes() == now.n_holes > 0
    holes = [(q, d) for q in queries for d in sorted(model.holes[q])]
    random.Random(0).shuffle(holes)
    labels = {q: dict(v) for q, v in given.items()}
    states = set()
    for step in range(0, len(holes) + 1, 60):
        want = judgment_debt(Qrels.from_dict(labels), [a, b], "nDCG@10")[0]
        settled, winner = model.verdict()
        states.add((settled, winner))
        assert settled == (want.verdict == "holds")
        assert winner == (None if want.winner is None else int(want.winner == b.name))
        for q, d in holes[step:step + 60]:
            model.reveal(q, d)
            labels.setdefault(q, {})[d] = model.truth[q][d]
    assert (False, 1) in states and (True, 1) in states  # depends, then holds
    full = judgment_debt(complete_judgments(truth, [a, b], 10), [a, b], "nDCG@10")[0]
    assert full.winner == b.name
    model = floor.PairModel(given, grades, a, b, queries, 10)
    clairvoyant = floor.hindsight(model, 1)
    labels = {q: dict(v) for q, v in given.items()}
    for q, d in clairvoyant:
        labels.setdefault(q, {})[d] = model.truth[q][d]
    settled = judgment_debt(Qrels.from_dict(labels), [a, b], "nDCG@10")[0]
    assert (settled.verdict, settled.winner) == ("holds", b.name)
    assert 0 < len(clairvoyant) < now.n_holes // 2
