"""AppTest of the Metric lab page: every preset shows its published number, a typed list and
a real query of the sample are explained with the kernel's value."""

from __future__ import annotations

import pytest
from _apps import APP, NEEDS_SAMPLE, SAMPLE, metric_values
from streamlit.testing.v1 import AppTest

from ireval_app.keys import lab as lab_keys
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs
from ireval_core.lab import PRESETS, Preset


def _lab(params: dict[str, str] | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in (params or {}).items():
        at.query_params[key] = value
    at.switch_page("pages/lab.py").run()
    assert not at.exception
    assert at.title[0].value == "Metric lab"
    return at


def _checks(at: AppTest):
    return next(d.value for d in at.dataframe if "published" in d.value.columns)


@pytest.mark.parametrize("item", PRESETS, ids=[p.key for p in PRESETS])
def test_each_preset_shows_its_published_numbers(item: Preset) -> None:
    at = _lab()
    at.selectbox(key=lab_keys.PRESET).set_value(item.key).run()
    assert not at.exception and not at.error
    assert at.info[0].value.startswith(f"**Seed {int(item.seed)}**: {item.claim[:20]}")
    assert "Seed 000" not in at.info[0].value
    checks = _checks(at).set_index("quantity")
    for pub in item.published:
        row = checks.loc[pub.quantity]
        assert row["published"] == pub.number
        if pub.relation == "equal":
            assert round(row["computed"], pub.decimals) == round(pub.number, pub.decimals)
        else:
            assert row["computed"] <= pub.number
        assert bool(row["reproduced"])
    metrics = metric_values(at)
    if item.kind == "significance":
        tests = next(d.value for d in at.dataframe if "p (one-sided)" in d.value.columns)
        tests = tests.set_index("test")
        assert tests.loc["paired t-test", "value"] == 2.33
        assert tests.loc["Wilcoxon signed-rank", "value"] == 35
        assert tests.loc["sign test", "value"] == 7 and tests.loc["sign test", "n"] == 9
        assert tests.loc["sign test", "p (one-sided)"] == 46 / 512
        assert tests.loc["Wilcoxon signed-rank", "p (one-sided)"] == 18 / 1024
        assert "0.0176" in tests.loc["Wilcoxon signed-rank", "seed"]  # both p-values said
        assert "p ≤ 0.025" in tests.loc["Wilcoxon signed-rank", "seed"]
        assert at.dataframe[0].value["signed rank"].sum() == 35
        return
    # the headline number: the mean over the lists, or the measure of the one list
    headline = item.published[-1]
    label = item.mean_label or headline.quantity
    shown = float(metrics[label])
    assert round(shown, headline.decimals) == round(headline.number, headline.decimals)
    assert len(at.get("latex")) >= 1
    steps = next(d.value for d in at.dataframe if "running" in d.value.columns)
    assert steps["rank"].iloc[0] == 1


def test_seed_004_ndcg_shows_both_tables() -> None:
    at = _lab({"preset": "seed004-ndcg"})
    assert at.selectbox(key=lab_keys.PRESET).value == "seed004-ndcg"
    steps, ideal = [d.value for d in at.dataframe if "running" in d.value.columns]
    assert steps["grade"].tolist() == ["3", "2", "3", "0", "1", "2"]
    assert ideal["grade"].tolist() == ["3", "3", "3", "2", "2", "2", "1", "0"][:6]
    assert round(float(ideal["running"].iloc[-1]), 3) == 8.740
    assert round(float(steps["dcg"].iloc[-1]), 3) == 6.861
    assert r"\frac{6.8611}{8.7403}" in at.get("latex")[0].proto.body


def test_typed_list() -> None:
    at = _lab()
    at.radio(key=lab_keys.SOURCE).set_value("typed").run()
    at.text_input(key=lab_keys.GRADES).set_value("3 2 3 0 1 2")
    at.text_input(key=lab_keys.UNRETRIEVED).set_value("3 2")
    at.text_input(key=lab_keys.TYPED_MEASURE).set_value("nDCG@6").run()
    assert not at.exception and not at.error
    assert metric_values(at)["nDCG@6"] == "0.7850"
    at.text_input(key=lab_keys.TYPED_MEASURE).set_value("nDCG(ideal=run)@6").run()
    assert metric_values(at)["nDCG(ideal=run)@6"] == "0.9608"
    # unjudged ("-") and pooled (negative) documents, a short list and k beyond it
    at.text_input(key=lab_keys.GRADES).set_value("1, -, 0, -1")
    at.text_input(key=lab_keys.TYPED_MEASURE).set_value("")
    at.selectbox(key=lab_keys.MEASURE).set_value("P@10").run()
    assert metric_values(at)["P@10"] == "0.1000"
    steps = next(d.value for d in at.dataframe if "running" in d.value.columns)
    assert steps["grade"].tolist() == ["1", "unjudged", "0", "pooled, unjudged"]
    assert at.query_params["grades"] == "1, -, 0, -1" and at.query_params["list"] == "typed"


def test_typed_mistakes_are_named() -> None:
    at = _lab({"list": "typed", "grades": "3 x 1"})
    assert "ranked list: item 2 is not a grade" in at.error[0].value
    at.text_input(key=lab_keys.GRADES).set_value("3 2 1")
    at.text_input(key=lab_keys.UNRETRIEVED).set_value("2 -").run()
    assert "item 2 is not a grade" in at.error[0].value
    at.text_input(key=lab_keys.UNRETRIEVED).set_value("")
    at.text_input(key=lab_keys.TYPED_MEASURE).set_value("F@5").run()
    assert not at.exception
    assert "The 'measure' parameter of explain must be a measure of P, R" in at.error[0].value
    at.text_input(key=lab_keys.TYPED_MEASURE).set_value("nDGC@5").run()
    assert "Unknown measure" in at.error[0].value


@NEEDS_SAMPLE
def test_real_query_equals_evaluate() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    at = _lab({"list": "query", "rel": "2"})
    assert at.session_state["ireval.options"].rel_level == 2.0
    at.selectbox(key=lab_keys.RUN).set_value("bm25")
    at.selectbox(key=lab_keys.QUERY).set_value("q012")  # score ties: AUC counts them as ½
    for spec in ("AUC", "AP", "ERR@10", "nDCG@10"):
        at.text_input(key=lab_keys.TYPED_MEASURE).set_value(spec).run()
        assert not at.exception and not at.error
        expected = evaluate(qrels, runs, [spec], options=EvalOptions(rel_level=2)).per_query(
            "bm25", spec).loc["q012"]
        assert metric_values(at)[spec] == f"{expected:.4f}", spec
        steps = next(d.value for d in at.dataframe if "running" in d.value.columns)
        assert float(steps["running"].iloc[-1]) == pytest.approx(expected, abs=1e-12)
    assert "Sample data" in at.info[0].value
    assert any("Evaluating the whole run gives q012 the same" in c.value for c in at.caption)
    assert "run" not in at.query_params  # bm25 is the default run
    assert at.query_params["query"] == "q012" and at.query_params["typed"] == "nDCG@10"
