"""AppTest of the Efficiency page: the bundled sample metadata, an upload, a broken file.

Expected latencies are recomputed here from the CSV with the csv module and
``np.percentile`` (not through ireval_core.metadata).
"""

from __future__ import annotations

import csv

import numpy as np
import pytest
from _apps import APP, SAMPLE, after_data, displayed
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import efficiency as efficiency_keys

META = SAMPLE / "query_metadata.csv"
SYSTEMS = ("bm25", "neural_rerank", "narrow_recall")

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists() or not META.exists(),
                                reason="sample data not generated")


def _page() -> AppTest:
    return after_data("efficiency", "Efficiency", timeout=60)


def _sample_latencies() -> dict[str, np.ndarray]:
    with META.open(newline="") as fh:
        rows = list(csv.DictReader(fh))
    return {s: np.array([float(r[f"latency_ms_{s}"]) for r in rows if r[f"latency_ms_{s}"]])
            for s in SYSTEMS}


def test_sample_metadata_latency_table_and_front() -> None:
    at = _page()
    assert any("Sample metadata" in i.value and "query_metadata.csv" in i.value
               for i in at.info)
    table = at.dataframe[0].value.set_index("system")
    for system, x in _sample_latencies().items():
        assert table.loc[system, "queries"] == len(x)
        assert table.loc[system, "p95"] == pytest.approx(np.percentile(x, 95))
        assert table.loc[system, "p99"] == pytest.approx(np.percentile(x, 99))
        assert table.loc[system, "qps"] == pytest.approx(1000 / x.mean())
    # hand-checked p95 of the committed sample (linear interpolation, 59 / 58 queries)
    assert table["p95"].round(2).to_dict() == {"bm25": 23.25, "neural_rerank": 122.22,
                                               "narrow_recall": 131.3}
    assert len(at.get("plotly_chart")) == 1
    points = at.dataframe[1].value.set_index("system")
    assert sorted(points.index[points["front"]]) == ["bm25", "neural_rerank"]
    sentence = next(displayed(m.value) for m in at.markdown if "Pareto front" in m.value)
    assert sentence.startswith("On the Pareto front of nDCG@10 vs p95 latency: bm25, "
                               "neural_rerank ")
    assert "Dominated: narrow_recall" in sentence
    assert any("single-threaded" in c.value and "concurrency" in c.value for c in at.caption)


def test_latency_statistic_and_measure_change_the_front() -> None:
    at = _page()
    at.selectbox(key=efficiency_keys.LATENCY).set_value("p50").run()
    assert not at.exception
    points = at.dataframe[1].value.set_index("system")
    assert sorted(points.index[points["front"]]) == ["bm25", "narrow_recall", "neural_rerank"]
    at.selectbox(key=efficiency_keys.MEASURE).set_value("AP").run()
    assert not at.exception
    assert any("Pareto front of AP vs p50 latency" in displayed(m.value) for m in at.markdown)


def test_uploaded_long_metadata() -> None:
    at = _page()
    data = (b"query,system,latency_ms\n"
            b"q001,bm25,10\nq002,bm25,20\nq003,bm25,30\nq001,other,5\n")
    at.file_uploader(key=efficiency_keys.UPLOADER).set_value(("lat.csv", data, "text/csv"))
    at.run()
    assert not at.exception
    assert not any("Sample metadata" in i.value for i in at.info)
    table = at.dataframe[0].value.set_index("system")
    assert table.loc["bm25", "p95"] == pytest.approx(29.0)  # position 1.9 of 10 20 30
    assert table.loc["bm25", "qps"] == pytest.approx(50.0)
    points = at.dataframe[1].value
    assert points["system"].tolist() == ["bm25"]
    captions = " ".join(displayed(c.value) for c in at.caption)
    assert "No latency for: narrow_recall, neural_rerank" in captions
    assert "not loaded runs, left out: other" in captions


def test_broken_metadata_shows_file_and_line() -> None:
    at = _page()
    data = b"query,segment,latency_ms_bm25\nq001,head,12\nq002,tail,slow\n"
    at.file_uploader(key=efficiency_keys.UPLOADER).set_value(("bad.csv", data, "text/csv"))
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("bad.csv:3" in e and "slow" in e for e in errors), errors
    assert not at.dataframe


def test_own_data_does_not_get_the_sample_metadata() -> None:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(
        ("qrels.txt", (SAMPLE / "qrels.txt").read_bytes(), "text/plain"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(
        [("run_bm25.txt", (SAMPLE / "run_bm25.txt").read_bytes(), "text/plain")])
    at.run()
    at.switch_page("pages/efficiency.py").run()
    assert not at.exception
    assert not any("Sample metadata" in i.value for i in at.info)
    assert any("Upload a query metadata file" in i.value for i in at.info)
    assert not at.dataframe
