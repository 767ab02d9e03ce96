"""Dataset summary and dataset-level checks (ireval_core.dataset), on hand-counted data."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ireval_core.data import Qrels, Run
from ireval_core.dataset import POOLED_LABEL, Dataset
from ireval_core.errors import DataWarning
from ireval_core.io import read_qrels, read_runs

SAMPLE_DIR = Path(__file__).resolve().parents[1] / "sample_data"

# q1: grades 2, 0, 1, -1 (one pooled, unjudged); q2: only a grade-0 document; q3: one relevant.
QRELS = {"q1": {"d1": 2, "d2": 0, "d3": 1, "d4": -1}, "q2": {"d5": 0}, "q3": {"d6": 1}}


def _ranking(*docs: str) -> dict[str, float]:
    """Documents in ranking order (scores strictly descending)."""
    return {d: float(len(docs) - i) for i, d in enumerate(docs)}


# A: q1 ranks 12 documents: d1 (2), d2 (0), d4 (-1, pooled) then x1..x9 (not in the qrels), so
#    its top 10 holds 2 judged and 8 unjudged (1 of them pooled); q2 ranks 3 (d5 judged, 2 not);
#    q9 has no qrels; q3 is judged but missing. Depths 12, 3, 1.
RUN_A = {
    "q1": _ranking("d1", "d2", "d4", *(f"x{i}" for i in range(1, 10))),
    "q2": _ranking("d5", "y1", "y2"),
    "q9": _ranking("z1"),
}
# B: every qrels query, every retrieved document judged; only short rankings (3, 1, 1).
RUN_B = {"q1": _ranking("d1", "d3", "d2"), "q2": _ranking("d5"), "q3": _ranking("d6")}


@pytest.fixture
def dataset() -> Dataset:
    qrels = Qrels.from_dict(QRELS, source="tiny.qrels")
    return Dataset(qrels, (Run.from_dict(RUN_A, name="A"), Run.from_dict(RUN_B, name="B")))


def test_qrels_summary(dataset: Dataset) -> None:
    row = dataset.summary().qrels.iloc[0].to_dict()
    assert row == {
        "qrels": "tiny.qrels", "queries": 3, "judgments": 6, "documents": 6, "judged": 5,
        "relevant": 3, POOLED_LABEL: 1, "queries without relevant": 1,
        "min judgments": 1, "median judgments": 1.0, "max judgments": 4,
    }


def test_relevance_threshold_changes_relevant_counts(dataset: Dataset) -> None:
    s = dataset.summary(threshold=2)
    assert s.threshold == 2.0
    assert s.qrels.loc[0, "relevant"] == 1
    assert s.qrels.loc[0, "queries without relevant"] == 2


def test_grade_distribution(dataset: Dataset) -> None:
    grades = dataset.summary().grades
    assert grades["grade"].tolist() == [POOLED_LABEL, "0", "1", "2"]
    assert grades["judgments"].tolist() == [1, 2, 2, 1]
    assert grades["share"].tolist() == pytest.approx([1 / 6, 2 / 6, 2 / 6, 1 / 6])


def test_grade_distribution_merges_negative_grades() -> None:
    qrels = Qrels.from_dict({"q1": {"a": -1, "b": -2, "c": 0.5, "d": 3}})
    grades = Dataset(qrels).summary().grades
    assert grades["grade"].tolist() == [POOLED_LABEL, "0.5", "3"]
    assert grades["judgments"].tolist() == [2, 1, 1]


def test_run_summary(dataset: Dataset) -> None:
    runs = dataset.summary().runs.set_index("run")
    a, b = runs.loc["A"].to_dict(), runs.loc["B"].to_dict()
    assert a.pop("judged in top 10") == pytest.approx(3 / 13)  # (2 + 1) judged of (10 + 3)
    assert a == {
        "file": "A", "queries": 3, "documents": 16, "min depth": 1, "median depth": 3.0,
        "max depth": 12, "queries in qrels": 2, "run queries without qrels": 1,
        "qrels queries missing": 1, "queries < 10 docs": 2, "queries < 100 docs": 3,
        "unjudged in top 10": 10,
    }
    assert b.pop("judged in top 10") == 1.0
    assert b == {
        "file": "B", "queries": 3, "documents": 5, "min depth": 1, "median depth": 1.0,
        "max depth": 3, "queries in qrels": 3, "run queries without qrels": 0,
        "qrels queries missing": 0, "queries < 10 docs": 3, "queries < 100 docs": 3,
        "unjudged in top 10": 0,
    }
    assert runs["documents"].dtype == np.int64


def test_warnings(dataset: Dataset) -> None:
    got = [(w.code, w.source, w.count, w.examples) for w in dataset.warnings()]
    assert got == [
        ("run-query-without-qrels", "A", 1, ("q9",)),
        ("qrels-query-missing-from-run", "A", 1, ("q3",)),
        ("short-ranking", "A", 3, ("q9: 1 doc", "q2: 3 docs", "q1: 12 docs")),
        ("unjudged-in-top10", "A", 10, ("q1: 8", "q2: 2")),
        ("short-ranking", "B", 3, ("q2: 1 doc", "q3: 1 doc", "q1: 3 docs")),
    ]
    messages = {(w.code, w.source): w.message for w in dataset.warnings()}
    assert messages["unjudged-in-top10", "A"].startswith(
        "10 documents of 13 in the top 10 are unjudged (76.9%), 1 of them pooled but not judged")
    assert messages["short-ranking", "A"].startswith(
        "2 queries of 3 rank fewer than 10 documents (3 fewer than 100)")
    assert messages["short-ranking", "B"].startswith("all 3 queries rank fewer than 10 documents")


def test_reading_warnings_come_first_once() -> None:
    shared = DataWarning("score-from-rank", "no score column", "runs.csv")
    qrels_warning = DataWarning("fractional-grades", "1 grade is not whole", "q.txt", 1)
    qrels = Qrels.from_arrays(["q1"], ["d1"], [0.5], source="q.txt", warnings=[qrels_warning])
    runs = [Run.from_arrays(["q1"] * 100, [f"d{i}" for i in range(100)], np.arange(100.0),
                            name=n, source="runs.csv", warnings=[shared]) for n in ("a", "b")]
    got = Dataset(qrels, runs).warnings()
    assert got[:2] == [qrels_warning, shared]
    assert [w.code for w in got[2:]] == ["unjudged-in-top10", "unjudged-in-top10"]


def test_clean_dataset_has_no_warnings() -> None:
    qrels = Qrels.from_dict({"q1": {f"d{i}": i % 3 for i in range(100)}})
    run = Run.from_dict({"q1": {f"d{i}": float(i) for i in range(100)}}, name="r")
    ds = Dataset(qrels, [run])
    assert ds.warnings() == []
    assert ds.runs == (run,)  # any sequence is stored as a tuple
    assert ds.summary().runs.loc[0, "judged in top 10"] == 1.0


def test_no_runs() -> None:
    ds = Dataset(Qrels.from_dict(QRELS))
    assert ds.warnings() == []
    assert ds.summary().runs.empty
    assert ds.run_names == ()


def test_run_access_and_validation(dataset: Dataset) -> None:
    assert dataset.run_names == ("A", "B")
    assert dataset.run("B") is dataset.runs[1]
    assert len(dataset) == 2
    with pytest.raises(KeyError, match="no run named 'C'; the runs are A, B"):
        dataset.run("C")
    with pytest.raises(ValueError, match="must be unique. Got 'A' 2 times"):
        Dataset(dataset.qrels, (dataset.runs[0], dataset.runs[0]))
    with pytest.raises(TypeError, match="must be a Qrels"):
        Dataset(QRELS)  # type: ignore[arg-type]


def test_run_without_any_qrels_query() -> None:
    ds = Dataset(Qrels.from_dict(QRELS), [Run.from_dict({"q7": _ranking("a")}, name="r")])
    row = ds.summary().runs.iloc[0]
    assert row["queries in qrels"] == 0
    assert math.isnan(row["judged in top 10"])
    assert row["qrels queries missing"] == 3


@pytest.mark.skipif(not (SAMPLE_DIR / "qrels.txt").exists(), reason="sample data not generated")
def test_sample_data_quirks_are_reported() -> None:
    """The deliberate quirks listed in sample_data/README.md show up as warnings."""
    runs = []
    for name in ("run_bm25.txt", "run_neural.txt", "run_narrow.txt"):
        runs += read_runs(SAMPLE_DIR / name, taken_names=[r.name for r in runs])
    ds = Dataset(read_qrels(SAMPLE_DIR / "qrels.txt"), runs)
    found = {(w.code, w.source): w for w in ds.warnings()}
    for run in ("bm25", "neural_rerank", "narrow_recall"):
        assert found["run-query-without-qrels", run].examples == ("q060",)
    assert found["qrels-query-missing-from-run", "narrow_recall"].examples == ("q031",)
    assert found["short-ranking", "narrow_recall"].count == 59
    s = ds.summary()
    assert s.qrels.loc[0, "queries"] == 59
    assert s.qrels.loc[0, "queries without relevant"] == 2  # q017 and q042
    assert dict(zip(s.grades["grade"], s.grades["judgments"], strict=True)) == {
        POOLED_LABEL: 9, "0": 2286, "1": 391, "2": 222, "3": 110}
    # README: Judged@10 0.86 / 0.99 / 0.78 (every evaluated query ranks >= 10 documents)
    judged = s.runs.set_index("run")["judged in top 10"]
    assert judged.round(2).to_dict() == {"bm25": 0.86, "neural_rerank": 0.99,
                                         "narrow_recall": 0.78}
