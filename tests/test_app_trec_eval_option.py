"""The trec_eval version in the sidebar: read from a link, kept when another option
changes, stated in the options line, and the Metrics numbers are the core's for it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import metrics as metrics_keys
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"
MEASURES = ["11pt", "nDCG@10"]

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def _expected(options: EvalOptions):
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return evaluate(qrels, runs, MEASURES, options=options)


def _means(at: AppTest) -> dict[tuple[str, str], float]:
    table = at.table[0].value
    return {(s, m): float(re.match(r"\s*(-?\d+\.\d+)", table.loc[s, m])[1])  # type: ignore[index]
            for s in table.index for m in table.columns}


def _options_line(at: AppTest) -> str:
    return " ".join(re.sub(r"\\(.)", r"\1", c.value) for c in at.caption
                    if "Options" in c.value)


def _metrics(**params: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for name, value in {"measures": MEASURES, **params}.items():
        at.query_params[name] = value
    at.switch_page("pages/metrics.py").run()
    assert not at.exception
    assert at.multiselect(key=metrics_keys.MEASURES).value == MEASURES
    return at


def _check(at: AppTest, version: str) -> None:
    expected = _expected(EvalOptions(trec_eval=version))  # type: ignore[arg-type]
    for (system, measure), shown in _means(at).items():
        assert shown == pytest.approx(expected.mean(system, measure), abs=5e-5)
    assert f"trec_eval {version}" in _options_line(at)


def test_a_link_with_te_shows_the_10_0_numbers_and_another_option_keeps_it() -> None:
    at = _metrics(te="10.0")
    radio = at.sidebar.radio(key=state.OPTION_KEYS["trec_eval"])
    assert radio.value == "10.0"
    _check(at, "10.0")
    # changing another option must not bring the version back to its default
    at.sidebar.checkbox(key=state.OPTION_KEYS["complete"]).check().run()
    assert not at.exception
    assert at.query_params["te"] in ("10.0", ["10.0"])
    assert "trec_eval 10.0" in _options_line(at)
    # back to 9.0.8 with the radio: the link no longer carries te
    at.sidebar.radio(key=state.OPTION_KEYS["trec_eval"]).set_value("9.0.8").run()
    assert not at.exception
    assert "te" not in at.query_params
    at.sidebar.checkbox(key=state.OPTION_KEYS["complete"]).uncheck().run()
    _check(at, "9.0.8")


def test_the_versions_differ_on_the_sample_where_trec_eval_does() -> None:
    """The sample's 11pt differs between the versions (recall cutoffs rounded), so the
    page's numbers above really come from each version's kernel."""
    old, new = _expected(EvalOptions()), _expected(EvalOptions(trec_eval="10.0"))
    assert any(abs(old.mean(s, "11pt") - new.mean(s, "11pt")) > 1e-4 for s in old.systems)
