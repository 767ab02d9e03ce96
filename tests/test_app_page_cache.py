"""Every page's analysis is cached by its inputs: a rerun of the page (same inputs) does
not compute it again, and shows the same values.

Each test counts the calls of the core functions a page's glue wraps (Compare's tests
per segment with resamples, Metrics' table and split, Queries' tables, Efficiency's
latencies and front, the Metric lab's presets and explanations, nDCG vs DCG's pairs),
in a cache of its own (``ireval_app.shared_cache.SHARED`` replaced), runs the page twice
and compares what it shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _apps import pair_of
from streamlit.testing.v1 import AppTest

from ireval_app import evaluation, lab_glue, metadata_glue, queries_glue, shared_cache
from ireval_app.keys import compare as compare_keys
from ireval_app.keys import lab as lab_keys
from ireval_core import evaluate
from ireval_core.io import read_qrels, read_runs
from ireval_core.metadata import compare_by_segment, read_metadata

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "query_metadata.csv").exists(),
                                reason="sample data not generated")


@pytest.fixture
def calls(monkeypatch) -> Callable[[Any, str], None]:
    """``count(module, name)``: count the calls of ``module.name`` in ``calls.counts``; the
    app's cache is a new one, so that nothing computed by another test is found."""
    monkeypatch.setattr(shared_cache, "SHARED", shared_cache.SharedCache(budget=256 * 2**20))
    counts: Counter[str] = Counter()

    def count(module: Any, name: str) -> None:
        fn = getattr(module, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return fn(*args, **kwargs)

        monkeypatch.setattr(module, name, counted)

    count.counts = counts  # type: ignore[attr-defined]
    return count


def _twice(page: str, params: dict[str, str | list[str]], setup=None) -> tuple[AppTest, dict]:
    """Open the page, then rerun it with nothing changed; returns the test and what the
    first run showed (dataframes, tables, markdown, metrics)."""
    at = AppTest.from_file(APP, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(f"pages/{page}.py").run()
    if setup is not None:
        setup(at)
    assert not at.exception
    first = _shown(at)
    at.run()
    assert not at.exception
    assert _shown(at).keys() == first.keys()
    for name, value in _shown(at).items():
        assert _same(value, first[name]), name
    return at, first


def _shown(at: AppTest) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, d in enumerate(at.dataframe):
        out[f"dataframe {i}"] = d.value
    for i, t in enumerate(at.table):
        out[f"table {i}"] = t.value
    out["markdown"] = [m.value for m in at.main.markdown]
    out["metrics"] = [(m.label, m.value) for m in at.metric]
    return out


def _same(a: Any, b: Any) -> bool:
    if hasattr(a, "equals"):
        return bool(a.equals(b))
    return bool(a == b)


def test_compare_tests_per_segment_once(calls) -> None:
    calls(metadata_glue, "compare_by_segment")
    at, first = _twice("compare", {"split": "segment"})
    assert calls.counts == {"compare_by_segment": 1}
    # the verdicts shown are the core's
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    a, b, m = pair_of(at.selectbox(key=compare_keys.PAIR).value)
    seg = compare_by_segment(evaluate(qrels, runs, ["nDCG@10"]),
                             read_metadata(SAMPLE / "query_metadata.csv"), "segment",
                             measure=m, a=a, b=b, test="t", n_resamples=10_000, seed=0)
    shown = " ".join(first["markdown"]).replace("\\", "")
    for verdict in seg["verdict"]:
        assert verdict in shown


def test_metrics_table_and_split_once(calls) -> None:
    calls(evaluation, "metrics_table")
    calls(metadata_glue, "by_segment")
    _twice("metrics", {"split": "segment"})
    assert calls.counts == {"metrics_table": 1, "by_segment": 1}


def test_queries_tables_once(calls) -> None:
    for name in ("query_differences", "side_by_side", "missed_relevant", "judged_counts"):
        calls(queries_glue, name)
    _twice("queries", {})
    # two runs shown: a ranking and the missed documents of each
    assert calls.counts == {"query_differences": 1, "side_by_side": 2, "missed_relevant": 2,
                            "judged_counts": 1}


def test_efficiency_latencies_and_front_once(calls) -> None:
    for name in ("latency_summary", "efficiency_points", "pareto_front"):
        calls(metadata_glue, name)
    _twice("efficiency", {})
    assert calls.counts == {"latency_summary": 1, "efficiency_points": 1, "pareto_front": 1}


def test_metric_lab_presets_and_explanations_once(calls) -> None:
    calls(lab_glue.lab, "run_preset")
    _twice("lab", {})
    assert calls.counts == {"run_preset": 1}
    calls(lab_glue.lab, "explain")

    def typed(at: AppTest) -> None:
        at.radio(key=lab_keys.SOURCE).set_value("typed").run()

    _twice("lab", {}, typed)
    assert calls.counts["explain"] == 1


def test_ndcg_pairs_once(calls) -> None:
    calls(evaluation, "ideal_pairs")
    _twice("ndcg_vs_dcg", {})
    assert calls.counts == {"ideal_pairs": 1}


def _chart_specs(at: AppTest) -> list[str]:
    return [e.proto.spec for e in at.get("plotly_chart")]


def test_metrics_charts_built_once_for_every_session(calls) -> None:
    """Two sessions on the Metrics page are sent the same two charts, built once; another
    option (relevance level) builds new ones from its own numbers, never the old ones."""
    import plotly.io as pio

    from ireval_app import state
    from ireval_core import EvalOptions, charts
    from ireval_core.tables import metrics_table

    calls(charts, "metric_bars")
    calls(charts, "per_query_distribution")
    sessions = [AppTest.from_file(APP, default_timeout=90) for _ in range(2)]
    for at in sessions:
        at.switch_page("pages/metrics.py").run()
        assert not at.exception
    assert calls.counts == {"metric_bars": 1, "per_query_distribution": 1}
    first, second = (_chart_specs(at) for at in sessions)
    assert len(first) == 2 and first == second

    at = sessions[1]
    at.number_input(key=state.OPTION_KEYS["rel_level"]).set_value(2.0).run()
    assert not at.exception
    assert calls.counts == {"metric_bars": 2, "per_query_distribution": 2}
    changed = _chart_specs(at)
    assert changed[0] != first[0]
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    table = metrics_table(evaluate(qrels, runs, list(evaluation.METRICS_DEFAULT),
                                   options=EvalOptions(rel_level=2.0)))
    fresh = charts.metric_bars(table.mean, table.low, table.high)
    assert changed[0] == pio.to_json(fresh.to_dict(), validate=False)
    sessions[0].run()  # the first session, unchanged, still gets its own charts
    assert _chart_specs(sessions[0]) == first
