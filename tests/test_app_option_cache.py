"""A relevance-level change in the app: every page shows the new exact numbers, values
that do not depend on the level are reused, and going back to a level reuses its values.

The numbers are compared with ``ireval_core.evaluate`` run afresh (no cache) under the
session's options; the session's dataset counts what its kept values computed.
"""

from __future__ import annotations

import re
import threading
import uuid
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import evaluation, state
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
MEASURES = list(evaluation.METRICS_DEFAULT)
LEVEL_FREE = {"nDCG@10", "Judged@10"}  # their kernels never read the relevance level

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def _leading(cell: str) -> float:
    match = re.match(r"\s*(-?\d+\.\d+)", cell)
    assert match, cell
    return float(match[1])


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The sample with one more judgment of a query of its own: a dataset (and its kept
    values) no other test shares, opened as ``IREVAL_DATA_DIR``."""
    (tmp_path / "qrels.txt").write_bytes((SAMPLE / "qrels.txt").read_bytes()
                                         + f"{uuid.uuid4().hex} 0 d1 1\n".encode())
    for run in sorted(SAMPLE.glob("run_*.txt")):
        (tmp_path / run.name).write_bytes(run.read_bytes())
    monkeypatch.setenv("IREVAL_DATA_DIR", str(tmp_path))
    return tmp_path


def _fresh(folder: Path, level: float):  # noqa: ANN202
    qrels = read_qrels(folder / "qrels.txt")
    runs = [r for p in sorted(folder.glob("run_*.txt")) for r in read_runs(p)]
    return evaluate(qrels, runs, MEASURES + ["R@100", "DCG@10"],
                    options=EvalOptions(rel_level=level))


def _check_metrics(at: AppTest, folder: Path, level: float) -> None:
    assert not at.exception, at.exception
    res = _fresh(folder, level)
    table = at.table[0].value
    for system in res.systems:
        for m in MEASURES:
            assert _leading(table.loc[system, m]) == pytest.approx(res.mean(system, m),
                                                                   abs=5e-5), (level, m)


def _settle() -> None:
    """Wait for the joins and evaluations the app started in the background."""
    for t in threading.enumerate():
        if t.name in ("ireval-join-prefetch", "ireval-evaluate-prefetch"):
            t.join()


def test_level_changes_show_new_values_and_reuse_the_others(folder: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    _settle()
    dataset = at.session_state["ireval.dataset"]
    at.switch_page("pages/metrics.py").run()
    _settle()
    _check_metrics(at, folder, 1.0)
    n_runs = len(dataset.runs)
    assert dataset.values.misses == n_runs * len(MEASURES)
    computed = dataset.values.misses
    for level, new in ((2.0, True), (1.0, False), (3.0, True), (2.0, False)):
        at.number_input(key=state.OPTION_KEYS["rel_level"]).set_value(level).run()
        _settle()
        _check_metrics(at, folder, level)
        # a new level computes the measures that read it; a level seen before, nothing
        step = n_runs * (len(MEASURES) - len(LEVEL_FREE)) if new else 0
        assert dataset.values.misses == computed + step, level
        computed += step
        # another page under the same options: its own numbers, also fresh
        at.switch_page("pages/ndcg_vs_dcg.py").run()
        assert not at.exception
        frame = at.dataframe[0].value
        res = _fresh(folder, level)
        for system in res.systems:
            assert frame.loc[system, "R@100"] == pytest.approx(res.mean(system, "R@100"),
                                                               rel=1e-12)
            assert frame.loc[system, "DCG@10"] == pytest.approx(res.mean(system, "DCG@10"),
                                                                rel=1e-12)
        _settle()
        computed = dataset.values.misses
        at.switch_page("pages/metrics.py").run()
        _settle()
        _check_metrics(at, folder, level)
        assert dataset.values.misses == computed  # back on Metrics: everything kept


def test_pages_note_their_measures_for_the_background(folder: Path) -> None:
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert "ireval.evaluated" not in at.session_state  # nothing evaluated yet
    at.switch_page("pages/ndcg_vs_dcg.py").run()
    at.switch_page("pages/metrics.py").run()
    noted = at.session_state["ireval.evaluated"]
    assert list(noted) == ["DCG@10", "nDCG(ideal=run)@10", *MEASURES]
