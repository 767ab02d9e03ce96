"""AppTest of the nDCG vs DCG page: the run ideal hides narrow_recall's recall failure."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app.keys import ndcg_vs_dcg as ndcg_vs_dcg_keys
from ireval_core import evaluate
from ireval_core.ideal import toy_example
from ireval_core.io import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"




@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
def test_run_ideal_hides_recall_failure() -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.switch_page("pages/ndcg_vs_dcg.py").run()
    assert not at.exception
    assert at.title[0].value == "nDCG vs DCG"
    table = at.dataframe[0].value
    assert list(table.columns) == ["DCG@10", "nDCG@10", "nDCG(ideal=run)@10", "R@100"]
    narrow, bm25 = table.loc["narrow_recall"], table.loc["bm25"]
    assert narrow["nDCG(ideal=run)@10"] > bm25["nDCG(ideal=run)@10"]
    assert narrow["DCG@10"] < bm25["DCG@10"]
    assert narrow["nDCG@10"] < bm25["nDCG@10"]
    assert narrow["R@100"] < bm25["R@100"]
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    expected = evaluate(qrels, runs, list(table.columns))
    for system in table.index:
        for m in table.columns:
            assert table.loc[system, m] == pytest.approx(expected.mean(system, m))
    assert "Sample data" in at.info[0].value  # every page says so first
    assert "narrow_recall" in at.info[1].value
    # the toy example is shown, run ideal = 1, qrels ideal well below
    summary = at.dataframe[2].value.set_index("quantity")["value"]
    assert summary["nDCG(ideal=run)@4"] == pytest.approx(1.0)
    assert summary["nDCG@4 (qrels ideal)"] < 0.5

    at.selectbox(key=ndcg_vs_dcg_keys.K).set_value(5).run()
    assert not at.exception
    assert "nDCG(ideal=run)@5" in at.dataframe[0].value.columns


def test_toy_example_numbers() -> None:
    ranking, summary = toy_example(4)
    values = summary.set_index("quantity")["value"]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(ranking["grade"]))
    assert values["DCG@4 of the run"] == pytest.approx(dcg)
    assert ranking["DCG@rank"].iloc[-1] == pytest.approx(dcg)
    # ideal from the qrels: grades 3, 3, 2, 1
    idcg = 3 + 3 / math.log2(3) + 2 / 2 + 1 / math.log2(5)
    assert values["IDCG@4, ideal from the qrels"] == pytest.approx(idcg)
    assert values["nDCG@4 (qrels ideal)"] == pytest.approx(dcg / idcg)
    assert values["IDCG@4, ideal from the run"] == pytest.approx(dcg)
