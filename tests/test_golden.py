"""Golden values: the worked examples of the seed documents (REFERENCE.md, "Worked examples").

Each example is written as small TREC files and read back with the real readers, so the path
a user takes (file -> reader -> evaluate) is what is checked. Values are compared at the
precision the seeds print them.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from ireval_core import evaluate, read_qrels, read_runs


def write_qrels(tmp_path: Path, judgments: dict[str, dict[str, int]]) -> Path:
    path = tmp_path / "qrels.txt"
    path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in judgments.items()
                            for d, g in docs.items()))
    return path


def write_run(tmp_path: Path, rankings: dict[str, dict[str, list[str]]]) -> Path:
    """``{tag: {qid: [docid in rank order]}}`` as a TREC run with strictly falling scores."""
    path = tmp_path / "run.txt"
    lines = []
    for tag, queries in rankings.items():
        for q, docs in queries.items():
            for i, d in enumerate(docs, start=1):
                lines.append(f"{q} Q0 {d} {i} {100 - i}.5 {tag}\n")
    path.write_text("".join(lines))
    return path


def read(tmp_path: Path, judgments, rankings):
    qrels = read_qrels(write_qrels(tmp_path, judgments))
    runs = read_runs(write_run(tmp_path, rankings))
    assert [r.name for r in runs] == list(rankings)
    return qrels, runs


def ranking(n: int, relevant_at: tuple[int, ...], prefix: str) -> tuple[list[str], dict]:
    """n docs; those at the given ranks relevant (grade 1), the others judged 0."""
    docs = [f"{prefix}{i}" for i in range(1, n + 1)]
    grades = {d: int(i in relevant_at) for i, d in enumerate(docs, start=1)}
    return docs, grades


def test_ap_seed000_relevant_at_1_3_6(tmp_path: Path) -> None:
    docs, grades = ranking(8, (1, 3, 6), "d")
    qrels, runs = read(tmp_path, {"q1": grades}, {"sys": {"q1": docs}})
    res = evaluate(qrels, runs, ["AP"])
    ap = res.per_query("sys", "AP")["q1"]
    assert ap == pytest.approx((1 / 1 + 2 / 3 + 3 / 6) / 3, abs=1e-12)
    assert round(ap, 4) == 0.7222


def test_map_seed002(tmp_path: Path) -> None:
    docs1, grades1 = ranking(10, (1, 2, 4, 7), "a")
    docs2, grades2 = ranking(10, (1, 3, 5), "b")
    grades2.update({"b-unretrieved-1": 1, "b-unretrieved-2": 1})  # q2 has 5 relevant
    qrels, runs = read(tmp_path, {"q1": grades1, "q2": grades2},
                       {"sys": {"q1": docs1, "q2": docs2}})
    res = evaluate(qrels, runs, ["map"])
    ap = res.per_query("sys", "AP")
    assert round(ap["q1"], 2) == 0.83
    assert round(ap["q2"], 2) == 0.45
    assert round(res.mean("sys", "map"), 2) == 0.64
    assert ap["q1"] == pytest.approx((1 + 1 + 3 / 4 + 4 / 7) / 4, abs=1e-12)
    assert ap["q2"] == pytest.approx((1 + 2 / 3 + 3 / 5) / 5, abs=1e-12)


@pytest.fixture
def seed004_ndcg(tmp_path: Path):
    """Grades at ranks 1-6 = 3, 2, 3, 0, 1, 2; the qrels also hold unretrieved 3 and 2."""
    docs = [f"d{i}" for i in range(1, 7)]
    grades = dict(zip(docs, (3, 2, 3, 0, 1, 2), strict=True))
    grades.update({"u3": 3, "u2": 2})
    qrels, runs = read(tmp_path, {"q1": grades}, {"sys": {"q1": docs}})
    return evaluate(qrels, runs, ["DCG@6", "nDCG@6", "nDCG(ideal=run)@6"])


def test_dcg_ndcg_seed004(seed004_ndcg) -> None:
    res = seed004_ndcg
    dcg = res.per_query("sys", "DCG@6")["q1"]
    ndcg = res.per_query("sys", "nDCG@6")["q1"]
    assert round(dcg, 3) == 6.861
    assert round(dcg / ndcg, 3) == 8.740  # IDCG@6 from the ideal 3, 3, 3, 2, 2, 2
    assert round(ndcg, 3) == 0.785
    ideal = [3, 3, 3, 2, 2, 2]
    assert dcg / ndcg == pytest.approx(sum(g / math.log2(i + 2) for i, g in enumerate(ideal)))


def test_ndcg_ideal_from_run_seed004(seed004_ndcg) -> None:
    res = seed004_ndcg
    dcg = res.per_query("sys", "DCG@6")["q1"]
    ndcg_run = res.per_query("sys", "nDCG(ideal=run)@6")["q1"]
    assert round(dcg / ndcg_run, 3) == 7.141  # IDCG@6 from the retrieved 3, 3, 2, 2, 1, 0
    assert round(ndcg_run, 3) == 0.961


def test_mrr_seed004(tmp_path: Path) -> None:
    judgments, rankings = {}, {}
    for q, first in (("q1", 3), ("q2", 1), ("q3", 5), ("q4", None)):
        docs, grades = ranking(6, () if first is None else (first,), f"{q}d")
        if first is None:
            grades["never-retrieved"] = 1  # q4's relevant document is not in the ranking
        judgments[q], rankings[q] = grades, docs
    qrels, runs = read(tmp_path, judgments, {"sys": rankings})
    res = evaluate(qrels, runs, ["RR"])
    assert res.per_query("sys", "RR").to_dict() == pytest.approx(
        {"q1": 1 / 3, "q2": 1.0, "q3": 1 / 5, "q4": 0.0})
    assert round(res.mean("sys", "recip_rank"), 3) == 0.383


def test_dcg_exposes_junk_that_ideal_from_run_hides_seed003(tmp_path: Path) -> None:
    """Every candidate of "junk" is grade 0 or 1 while grade-3 documents sit elsewhere."""
    junk = [f"j{i}" for i in range(10)]
    good = [f"g{i}" for i in range(5)] + junk[:5]
    grades = {d: 0 for d in junk} | {"j0": 1} | {f"g{i}": 3 for i in range(5)}
    qrels, runs = read(tmp_path, {"q1": grades}, {"junk": {"q1": junk}, "good": {"q1": good}})
    res = evaluate(qrels, runs, ["DCG@10", "nDCG@10", "nDCG(ideal=run)@10"])

    def value(system: str, measure: str) -> float:
        return res.per_query(system, measure)["q1"]

    idcg = sum(3 / math.log2(i + 2) for i in range(5)) + 1 / math.log2(7)
    assert value("junk", "DCG@10") == pytest.approx(1.0)  # one grade-1 doc at rank 1
    assert value("junk", "nDCG(ideal=run)@10") == pytest.approx(1.0)  # looks perfect
    assert value("junk", "nDCG@10") == pytest.approx(1.0 / idcg)
    assert value("junk", "nDCG@10") < 0.15
    # the good system retrieves the grade-3 documents: only DCG and nDCG(ideal=qrels) show it
    assert value("good", "DCG@10") > 8 * value("junk", "DCG@10")
    assert value("good", "nDCG@10") > 0.9
    assert value("good", "nDCG(ideal=run)@10") == pytest.approx(1.0)
