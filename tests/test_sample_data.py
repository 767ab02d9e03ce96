"""Checks of the committed sample data set (sample_data/) and of its generator.

Self-contained on purpose: files are parsed with plain Python and the few measures needed are
recomputed here (ireval_core is not imported), following REFERENCE.md semantics: ranking by
score descending then docid descending, gain = grade (negative grades count 0), relevant =
grade >= 1, means over the queries present in both the run and the qrels.
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"
GENERATOR = SAMPLE_DIR / "make_sample.py"
DATA_FILES = ("qrels.txt", "run_bm25.txt", "run_neural.txt", "run_narrow.txt")
RUN_TAGS = {
    "run_bm25.txt": "bm25",
    "run_neural.txt": "neural_rerank",
    "run_narrow.txt": "narrow_recall",
}

Qrels = dict[str, dict[str, int]]
Run = dict[str, list[tuple[str, int, float, str]]]  # qid -> [(docid, rank, score, score text)]


def read_qrels(path: Path) -> Qrels:
    qrels: Qrels = {}
    for number, line in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        fields = line.split()
        assert len(fields) == 4, f"{path.name}:{number}: {line!r}"
        qid, iteration, docid, grade = fields
        assert iteration == "0", f"{path.name}:{number}"
        assert docid not in qrels.setdefault(qid, {}), f"duplicate {qid} {docid}"
        qrels[qid][docid] = int(grade)
    return qrels


def read_run(path: Path) -> Run:
    run: Run = {}
    for number, line in enumerate(path.read_text(encoding="ascii").splitlines(), start=1):
        fields = line.split()
        assert len(fields) == 6, f"{path.name}:{number}: {line!r}"
        qid, q0, docid, rank, score, tag = fields
        assert q0 == "Q0" and tag == RUN_TAGS[path.name], f"{path.name}:{number}"
        run.setdefault(qid, []).append((docid, int(rank), float(score), score))
    return run


@pytest.fixture(scope="module")
def qrels() -> Qrels:
    return read_qrels(SAMPLE_DIR / "qrels.txt")


@pytest.fixture(scope="module")
def runs() -> dict[str, Run]:
    return {tag: read_run(SAMPLE_DIR / name) for name, tag in RUN_TAGS.items()}


def ranking(entries: list[tuple[str, int, float, str]]) -> list[str]:
    """Docids in trec_eval order: score descending, ties by docid descending."""
    return [doc for doc, _, _, _ in sorted(entries, key=lambda e: (e[2], e[0]), reverse=True)]


def dcg(gains: list[int], k: int = 10) -> float:
    return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))


def per_query(grades: dict[str, int], docs: list[str]) -> dict[str, float]:
    """nDCG@10 (qrels ideal and run ideal), DCG@10, R@100 and AP of one ranked list."""
    gains = [max(grades.get(doc, 0), 0) for doc in docs]
    n_rel = sum(1 for g in grades.values() if g >= 1)
    ideal_qrels = dcg(sorted((max(g, 0) for g in grades.values()), reverse=True))
    ideal_run = dcg(sorted(gains, reverse=True))
    found, ap = 0, 0.0
    for rank, gain in enumerate(gains, start=1):
        if gain >= 1:
            found += 1
            ap += found / rank
    found_100 = sum(1 for g in gains[:100] if g >= 1)
    value = dcg(gains)
    return {
        "ndcg_qrels": value / ideal_qrels if ideal_qrels else 0.0,
        "ndcg_run": value / ideal_run if ideal_run else 0.0,
        "dcg": value,
        "recall": found_100 / n_rel if n_rel else 0.0,
        "ap": ap / n_rel if n_rel else 0.0,
    }


def means(qrels: Qrels, run: Run) -> dict[str, float]:
    scores = [per_query(qrels[q], ranking(run[q])) for q in sorted(run) if q in qrels]
    return {name: sum(s[name] for s in scores) / len(scores) for name in scores[0]}


def test_generator_reproduces_committed_files(tmp_path: Path) -> None:
    subprocess.run([sys.executable, str(GENERATOR), "--out", str(tmp_path)], check=True)
    for name in DATA_FILES:
        assert (tmp_path / name).read_bytes() == (SAMPLE_DIR / name).read_bytes(), name


def test_qrels_shape(qrels: Qrels) -> None:
    assert sorted(qrels) == [f"q{i:03d}" for i in range(1, 60)]
    lines = (SAMPLE_DIR / "qrels.txt").read_text(encoding="ascii").splitlines()
    keys = [(line.split()[0], line.split()[2]) for line in lines]
    assert keys == sorted(keys)
    for qid, grades in qrels.items():
        assert set(grades.values()) <= {-1, 0, 1, 2, 3}, qid
        assert 30 <= len(grades) <= 80, qid
        assert all(d[0] == "d" and len(d) == 8 and d[1:].isdigit() for d in grades), qid
    n_relevant = {q: sum(1 for g in grades.values() if g >= 1) for q, grades in qrels.items()}
    assert 2 <= sum(1 for n in n_relevant.values() if n == 0) <= 3
    assert max(n_relevant.values()) <= 20
    assert 2 <= sum(1 for grades in qrels.values() if -1 in grades.values()) <= 5
    counts = [sum(list(gs.values()).count(grade) for gs in qrels.values()) for grade in (1, 2, 3)]
    assert counts[0] > counts[1] > counts[2] > 0  # skewed: many low, few high


@pytest.mark.parametrize("tag", sorted(RUN_TAGS.values()))
def test_run_shape(runs: dict[str, Run], qrels: Qrels, tag: str) -> None:
    run = runs[tag]
    assert "q060" in run and "q060" not in qrels  # run query without qrels
    expected = set(qrels) | {"q060"}
    assert set(run) == (expected - {"q031"} if tag == "narrow_recall" else expected)
    n_ties = 0
    for qid, entries in run.items():
        docs = [doc for doc, _, _, _ in entries]
        assert len(docs) == len(set(docs)), f"duplicate docid in {tag} {qid}"
        assert [rank for _, rank, _, _ in entries] == list(range(1, len(entries) + 1))
        assert docs == ranking(entries), f"{tag} {qid}: rank column disagrees with scores"
        assert all(4 <= len(text.split(".")[1]) <= 6 for _, _, _, text in entries)
        lengths = (10, 20) if tag == "narrow_recall" else (100, 100)
        assert lengths[0] <= len(entries) <= lengths[1]
        scores = [score for _, _, score, _ in entries]
        tied = [i for i in range(1, len(scores)) if scores[i] == scores[i - 1]]
        assert len(set(scores)) == len(scores) - len(tied)  # ties only between neighbours
        for i in tied:  # a deliberate tie: the docid tie-break must change the grade order
            n_ties += 1
            assert qrels[qid][docs[i - 1]] != qrels[qid][docs[i]], f"{tag} {qid}"
    assert n_ties == (0 if tag == "narrow_recall" else 1)


def test_bm25_has_unjudged_docs_near_the_top(runs: dict[str, Run], qrels: Qrels) -> None:
    top10 = [(q, doc) for q, e in runs["bm25"].items() if q in qrels for doc in ranking(e)[:10]]
    unjudged = sum(1 for q, doc in top10 if doc not in qrels[q])
    assert 0 < unjudged / len(top10) < 0.3


def test_narrow_recall_fools_run_ideal_ndcg_only(runs: dict[str, Run], qrels: Qrels) -> None:
    bm25, narrow = means(qrels, runs["bm25"]), means(qrels, runs["narrow_recall"])
    assert narrow["ndcg_run"] > bm25["ndcg_run"] + 0.2  # looks great with ideal=run
    assert narrow["ndcg_run"] > bm25["ndcg_qrels"] + 0.2
    assert narrow["dcg"] < 0.5 * bm25["dcg"]  # ... but DCG@10 collapses
    assert narrow["ndcg_qrels"] < 0.5 * bm25["ndcg_qrels"]  # so does nDCG@10 with qrels ideal
    assert narrow["recall"] < 0.5 * bm25["recall"]  # and R@100


def test_neural_beats_bm25(runs: dict[str, Run], qrels: Qrels) -> None:
    bm25, neural = means(qrels, runs["bm25"]), means(qrels, runs["neural_rerank"])
    assert neural["ndcg_qrels"] > bm25["ndcg_qrels"] + 0.1
    assert neural["ap"] > bm25["ap"] + 0.1
    assert neural["recall"] > bm25["recall"]
