"""The judge queue: its verdicts are the holes analysis's, its items exactly the holes of
the unsettled pairs, its random order fixed per seed, and driving it settles the verdict
the full judgments give with fewer labels than the random order.

Oracles: :func:`judgment_debt` on the whole runs with the labels added to the qrels, and
the holes found by slow reference code (loops over dictionaries). The simulation grid
(sample data and TREC-COVID, several seeds and pairs) runs with ``IREVAL_FULL_GRID=1``;
the suite runs one seeded pair of the sample.
"""

from __future__ import annotations

import io
import json
import os
import statistics
from pathlib import Path

import numpy as np
import pytest

from ireval_core import EvalOptions, Qrels, Run
from ireval_core.cli import main
from ireval_core.decisions.holes import judgment_debt
from ireval_core.decisions.queue import JudgeQueue
from ireval_core.decisions.queue_simulation import (
    complete_judgments,
    hide_judgments,
    simulate_queue,
)
from ireval_core.io import read_qrels, read_run

SAMPLE = Path(__file__).resolve().parent.parent / "sample_data"
COVID = Path(__file__).resolve().parents[2] / "shared" / "realdata" / "trec-covid"
FULL = os.environ.get("IREVAL_FULL_GRID") == "1"


def _case(seed: int, n_runs: int = 3) -> tuple[dict, list[dict]]:
    """Qrels (grades -1..2, a query without judgments) and runs with score ties, over 12
    queries so that the paired test has something to say."""
    rng = np.random.default_rng(seed)
    docs = [f"d{i:02d}" for i in range(16)]
    queries = [f"q{i:02d}" for i in range(12)]
    qrels = {q: {d: float(rng.choice([-1, 0, 0, 1, 2]))
                 for d in rng.choice(docs, size=int(rng.integers(3, 9)), replace=False)}
             for q in queries[:-1]}
    runs = []
    for s in range(n_runs):
        run = {}
        for q in queries:
            got = rng.choice(docs, size=int(rng.integers(2, 9)), replace=False)
            run[q] = {d: float(rng.integers(0, 6)) + 0.5 * s * (d in qrels.get(q, {}))
                      for d in got}
        runs.append(run)
    return qrels, runs


def _runs(runs: list[dict]) -> list[Run]:
    return [Run.from_dict(r, name=f"s{i}") for i, r in enumerate(runs)]


def _reference_holes(qrels: dict, runs: list[Run], k: int | None, queries: set[str]
                     ) -> set[tuple[str, str]]:
    """Unjudged (absent or negative) documents of every run's top k on ``queries``."""
    out = set()
    for run in runs:
        for q, scores in run.to_dict().items():
            if q not in queries:
                continue
            ranked = sorted(scores, key=lambda d: (-scores[d], [-ord(c) for c in d]))
            for d in ranked[:k] if k is not None else ranked:
                if not qrels.get(q, {}).get(d, -1) >= 0:
                    out.add((q, d))
    return out


@pytest.mark.parametrize(("measure", "seed"), [
    ("P@3", 0), ("nDCG@3", 1), ("DCG@3", 2), ("AP", 3), ("RR@2", 4), ("ERR@3", 5),
    ("bpref", 6), ("nDCG@3", 7)])
def test_verdicts_are_the_holes_analysis_on_the_labels_so_far(measure: str, seed: int
                                                               ) -> None:
    qrels, runs_d = _case(seed)
    runs = _runs(runs_d)
    options = (EvalOptions(judged_only=True) if seed == 7 else
               EvalOptions(trec_eval="10.0") if seed % 2 else EvalOptions())
    queue = JudgeQueue(Qrels.from_dict(qrels), runs, measure, options=options,
                       baseline="s0")
    given: dict = {q: dict(v) for q, v in qrels.items()}
    labelled: set[tuple[str, str]] = set()
    for step in range(3):
        want = judgment_debt(Qrels.from_dict(given), runs, measure, baseline="s0",
                             options=options, n_resamples=1_000)
        got = queue.verdicts
        assert [(v.system_a, v.system_b) for v in got] == [("s0", "s1"), ("s0", "s2")]
        assert [v.remaining_holes for v in got] == [r.n_holes for r in want]
        assert [v.winner for v in got] == [r.winner for r in want]
        assert [v.text for v in got] == [r.text for r in want]
        assert [v.verdict == "depends" for v in got] == [r.verdict == "depends" for r in want]
        for v in got:
            assert (v.estimate == 0) == (v.verdict != "depends")
            assert 0 <= v.estimate <= v.remaining_holes
        # the queue holds exactly the holes of the unsettled pairs on their compared queries
        unsettled = [r for r in want if r.verdict == "depends"]
        expected: set[tuple[str, str]] = set()
        for r in unsettled:
            pair = [x for x in runs if x.name in (r.system_a, r.system_b)]
            expected |= _reference_holes(given, pair, r.k, set(r.query_ids.tolist()))
        items = queue.next(10_000) if len(queue) else []
        assert {(i.query, i.doc) for i in items} == expected
        assert len(items) == len(queue) == len(expected)
        for i in items:  # each item says who ranks it where
            for name, rank in zip(i.systems, i.ranks, strict=True):
                scores = runs[int(name[1:])].to_dict()[i.query]
                assert i.doc in scores and rank >= 1
        if not items:
            break
        labels = [(i.query, i.doc, float((step + n) % 3)) for n, i in enumerate(items[:4])]
        queue.add(labels)
        for q, d, g in labels:
            given.setdefault(q, {})[d] = g
        labelled |= {(q, d) for q, d, _ in labels}
        assert queue.n_labels == len(labelled)


def test_cut_runs_read_the_same_top_k_under_float32_ties() -> None:
    """Scores equal as float32 but not as float64 order differently under 9.0.8 and 10.0;
    the queue's cut keeps every row either version may rank in the top k."""
    qrels = {f"q{i}": {"a": 1, "b": 0} for i in range(8)}
    base = {"a": 1.0 + 1e-9, "c": 1.0, "b": 1.0 - 1e-9, "d": 0.5, "e": 0.2}
    runs = [Run.from_dict({q: base for q in qrels}, name="x"),
            Run.from_dict({q: {"b": 3.0, "e": 2.0, "a": 1.0} for q in qrels}, name="y")]
    for version in ("9.0.8", "10.0"):
        options = EvalOptions(trec_eval=version)
        queue = JudgeQueue(Qrels.from_dict(qrels), runs, "P@2", options=options)
        want = judgment_debt(Qrels.from_dict(qrels), runs, "P@2", options=options)[0]
        assert queue.verdicts[0].remaining_holes == want.n_holes
        assert queue.verdicts[0].text == want.text


def test_random_order_is_fixed_per_seed_and_stays_as_labels_arrive() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [read_run(SAMPLE / "run_bm25.txt"), read_run(SAMPLE / "run_neural.txt")]
    one = JudgeQueue(qrels, runs, "nDCG@10", order="random", seed=3)
    again = JudgeQueue(qrels, runs, "nDCG@10", order="random", seed=3)
    other = JudgeQueue(qrels, runs, "nDCG@10", order="random", seed=4)
    first = [(i.query, i.doc) for i in one.next(len(one))]
    assert first == [(i.query, i.doc) for i in again.next(len(again))]
    assert first != [(i.query, i.doc) for i in other.next(len(other))]
    assert sorted(first) == sorted((i.query, i.doc) for i in other.next(len(other)))
    assert all("random order (seed 3)" in i.why for i in one.next(5))
    one.add([(q, d, 0.0) for q, d in first[:5]])
    if len(one):
        assert [(i.query, i.doc) for i in one.next(len(one))] == first[5:5 + len(one)]


def test_impact_order_explains_itself() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "neural", "narrow")]
    queue = JudgeQueue(qrels, runs, "nDCG@10", baseline="bm25")
    states = {(v.system_a, v.system_b): v.verdict for v in queue.verdicts}
    assert states == {("bm25", "neural_rerank"): "depends", ("bm25", "narrow_recall"): "holds"}
    items = queue.next(5)
    scores = [i.score for i in items]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    for i in items:
        assert i.why.startswith("in the top 10 of ")
        assert "neural_rerank vs bm25 depends on it" in i.why
        assert set(i.systems) <= {"bm25", "neural_rerank"}


def test_prior_learns_from_the_known_judgments() -> None:
    """The prior is fitted on the judged documents of the windows only: in queries whose
    judged documents are relevant a hole is more likely relevant than in queries whose
    judged documents are not; with fewer than 20 judged documents the plain shares."""
    rich = {f"r{i:02d}": {f"j{k}": 2 for k in range(4)} for i in range(12)}
    poor = {f"p{i:02d}": {f"j{k}": 0 for k in range(4)} for i in range(12)}
    judged = {**rich, **poor}

    def ranking(q: str, first: str) -> dict[str, float]:
        docs = [first, "j0", "j1", "j2", "j3", f"low_{q}"]
        return {d: float(10 - i) for i, d in enumerate(docs)}
    a = Run.from_dict({q: ranking(q, "top") for q in judged}, name="a")
    b = Run.from_dict({q: ranking(q, "top") for q in judged}, name="b")
    queue = JudgeQueue(Qrels.from_dict(judged), [a, b], "nDCG@6")
    t = queue._table
    prior = dict(zip(zip(t.query, t.doc, strict=True), t.prior, strict=True))
    assert min(prior[(q, "top")] for q in rich) > max(prior[(q, "top")] for q in poor)
    assert all(0.0 <= p <= 1.0 for p in prior.values())
    few = JudgeQueue(Qrels.from_dict({"r00": rich["r00"]}), [a, b], "nDCG@6")
    assert len(few._table.prior) and (few._table.prior <= 1.0).all()  # the plain shares


def test_reversed_when_settled_on_another_winner() -> None:
    """As judged b wins; labeling a's holes relevant settles on no winner."""
    qrels = {f"q{i}": {"r": 1, "n": 0} for i in range(10)}
    a = Run.from_dict({q: {"u": 2.0, "n": 1.0} for q in qrels}, name="a")
    b = Run.from_dict({q: {"r": 2.0, "n": 1.0} if i % 5 else {"n": 2.0, "r": 1.0}
                       for i, q in enumerate(qrels)}, name="b")
    queue = JudgeQueue(Qrels.from_dict(qrels), [a, b], "P@1")
    assert queue.verdicts[0].verdict == "depends"
    assert queue.verdicts[0].winner == "b"
    queue.add([(q, "u", 1.0) for q in qrels])
    v = queue.verdicts[0]
    assert (v.verdict, v.winner, v.remaining_holes, len(queue)) == ("reversed", None, 0, 0)
    assert queue.settled


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"order": "best"}, "order"), ({"measure": ["P@5", "nDCG@10"]}, "one measure"),
    ({"baseline": "zz"}, "baseline"), ({"seed": 1.5}, "seed")])
def test_bad_parameters_name_themselves(kwargs: dict, message: str) -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    runs = [Run.from_dict({"q": {"a": 1.0}}, name="x"), Run.from_dict({"q": {"b": 1.0}},
                                                                       name="y")]
    args = {"measure": "P@1", **kwargs}
    with pytest.raises((ValueError, TypeError), match=message):
        JudgeQueue(qrels, runs, args.pop("measure"), **args)


def test_bad_labels_are_refused() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1}})
    runs = [Run.from_dict({"q": {"a": 1.0}}, name="x"), Run.from_dict({"q": {"b": 1.0}},
                                                                       name="y")]
    queue = JudgeQueue(qrels, runs, "P@1")
    with pytest.raises(ValueError, match="grades >= 0"):
        queue.add([("q", "b", -1)])
    with pytest.raises(ValueError, match="triples"):
        queue.add([("q", "b")])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="n"):
        queue.next(0)


# ------------------------------------------------------------------------ the CLI


def _cli(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    status = main(list(argv), out=out)
    return status, out.getvalue()


def test_cli_json_and_labels_added_between_calls(tmp_path: Path) -> None:
    qrels_path = tmp_path / "qrels.txt"
    qrels_path.write_text((SAMPLE / "qrels.txt").read_text())
    runs = [str(SAMPLE / "run_bm25.txt"), str(SAMPLE / "run_neural.txt")]
    status, text = _cli("judge-queue", str(qrels_path), *runs, "-m", "nDCG@10",
                        "--batch", "4", "--format", "json")
    assert status == 0
    doc = json.loads(text)
    assert set(doc) == {"measure", "order", "verdicts", "queue"}
    (v,) = doc["verdicts"]
    assert {"system_a", "system_b", "verdict", "remaining_holes"} <= set(v)
    assert (v["system_a"], v["system_b"], v["verdict"]) == ("bm25", "neural_rerank",
                                                           "depends")
    assert len(doc["queue"]) == 4
    assert all({"query", "doc", "systems", "why"} <= set(i) for i in doc["queue"])
    with qrels_path.open("a") as f:  # the labels a rater gave: the next call reads them
        for i in doc["queue"]:
            f.write(f"{i['query']} 0 {i['doc']} 0\n")
    _, text2 = _cli("judge-queue", str(qrels_path), *runs, "-m", "nDCG@10", "--batch", "4",
                    "--format", "json")
    doc2 = json.loads(text2)
    assert doc2["verdicts"][0]["remaining_holes"] == v["remaining_holes"] - 4
    assert not {(i["query"], i["doc"]) for i in doc["queue"]} & {
        (i["query"], i["doc"]) for i in doc2["queue"]}


def test_cli_text_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = [str(SAMPLE / f"run_{n}.txt") for n in ("bm25", "neural", "narrow")]
    status, text = _cli("judge-queue", str(SAMPLE / "qrels.txt"), *runs, "-m", "nDCG@10",
                        "--baseline", "bm25", "--batch", "2", "--order", "random")
    assert status == 0
    assert "bm25 vs neural_rerank: depends" in text
    assert "bm25 vs narrow_recall: holds" in text
    assert "Next 2 to judge (random order" in text
    bad = tmp_path / "qrels.txt"
    bad.write_text("q001 0 d1 1\nq001 0 d2\n")
    assert _cli("judge-queue", str(bad), *runs, "-m", "nDCG@10")[0] == 2
    assert "qrels.txt:2: expected 4 columns" in capsys.readouterr().err
    assert _cli("judge-queue", str(SAMPLE / "qrels.txt"), *runs, "-m", "nDCG@10",
                "--baseline", "nope")[0] == 2
    assert "baseline" in capsys.readouterr().err


# ---------------------------------------------------------------------- simulation


def _simulate(truth: Qrels, runs: list[Run], pairs: list[tuple[int, int]], seeds: range,
              batch: int, share: float = 0.4, unjudged: str = "holes") -> list[float]:
    ratios = []
    for seed in seeds:
        start = hide_judgments(truth, runs, 10, share, seed=seed, unjudged=unjudged)
        for i, j in pairs:
            impact = simulate_queue(truth, start, runs[i], runs[j], "nDCG@10",
                                    order="impact", batch=batch, seed=seed)
            random = simulate_queue(truth, start, runs[i], runs[j], "nDCG@10",
                                    order="random", batch=batch, seed=seed)
            assert impact.correct and random.correct, (impact, random)
            ratios.append(impact.labels / random.labels)
    return ratios


def test_simulation_sample_seeded() -> None:
    """One pair of the sample, 40% of the top-10 judgments hidden: the impact order
    settles on the full judgments' verdict with at most 65% of the random order's
    labels (the figure measured: 0.60)."""
    truth = read_qrels(SAMPLE / "qrels.txt")
    runs = [read_run(SAMPLE / f"run_{n}.txt") for n in ("neural", "narrow")]
    (ratio,) = _simulate(truth, runs, [(0, 1)], range(1), batch=25)
    assert ratio <= 0.65


def test_hide_judgments_holes_are_the_hidden_judgments() -> None:
    """With ``unjudged="non-relevant"`` the documents of the windows the truth never
    judged are judged 0 first: the holes are exactly the hidden judgments, a share of the
    windows' documents; with ``holes`` the never-judged ones are holes too."""
    truth = read_qrels(SAMPLE / "qrels.txt")
    # two runs of every query: each hole is on a compared query
    runs = [read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "neural")]
    window = complete_judgments(truth, runs, 10)
    start = hide_judgments(truth, runs, 10, 0.4, seed=1, unjudged="non-relevant")
    hidden = len(window) - len(start)
    holes = JudgeQueue(start, runs, "nDCG@10").verdicts[0].remaining_holes
    assert holes == hidden > 0
    plain = hide_judgments(truth, runs, 10, 0.4, seed=1)
    never = len(window) - len(truth)  # in a window, never judged
    assert JudgeQueue(plain, runs, "nDCG@10").verdicts[0].remaining_holes == (
        len(truth) - len(plain) + never)
    with pytest.raises(ValueError, match="unjudged"):
        hide_judgments(truth, runs, 10, 0.4, unjudged="zero")


@pytest.mark.skipif(not FULL, reason="the full simulation grid: IREVAL_FULL_GRID=1")
@pytest.mark.parametrize("unjudged", ["holes", "non-relevant"])
@pytest.mark.parametrize("data", ["sample", "trec-covid"])
def test_simulation_full_grid(data: str, unjudged: str) -> None:
    """The impact order against the random order, median over 3 seeds and every pair,
    batches of 5, 40% of the top-10 judgments hidden. Measured: the sample 0.58
    (``holes``) and 0.52 (``non-relevant``); TREC-COVID 0.82 and 0.82."""
    if data == "sample":
        truth = read_qrels(SAMPLE / "qrels.txt")
        runs = [read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "neural", "narrow")]
    else:
        truth = read_qrels(COVID / "qrels.covid-complete.txt.gz")
        runs = [read_run(COVID / f).renamed(n) for f, n in (
            ("beir-bm25.run.gz", "bm25"), ("beir-splade-pp-ed.run.gz", "splade"),
            ("covidex.t5.run.gz", "t5"), ("covidex.sim.run.gz", "sim"))]
    pairs = [(i, j) for i in range(len(runs)) for j in range(i + 1, len(runs))]
    ratios = _simulate(truth, runs, pairs, range(3), batch=5, unjudged=unjudged)
    print(f"{data} ({unjudged}): median impact/random = {statistics.median(ratios):.2f} "
          f"over {len(ratios)} (seed, pair)")
    assert statistics.median(ratios) <= (0.65 if data == "sample" else 0.90)
