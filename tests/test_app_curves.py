"""AppTest of the Curves page: the numbers shown equal ``ireval_core.curves`` on the sample."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from ireval_app.keys import curves as curves_keys
from ireval_core.curves import pooled_auc, prevalence
from ireval_core.data import join
from ireval_core.io import read_qrels, read_runs
from ireval_core.options import EvalOptions

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def _sample_ranked(options: EvalOptions | None = None) -> dict[str, object]:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return {r.name: join(qrels, r, options=options) for r in runs}


def _curves_page() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.switch_page("pages/curves.py").run()
    assert not at.exception
    return at


def test_pooled_auc_and_prevalence_match_core() -> None:
    at = _curves_page()
    assert at.title[0].value == "Curves"
    shown = at.dataframe[0].value.set_index("run")
    expected = _sample_ranked()
    assert sorted(shown.index) == sorted(expected)
    for name, r in expected.items():
        assert shown.loc[name, "pooled AUC"] == pytest.approx(pooled_auc(r), abs=1e-12)
        assert shown.loc[name, "prevalence"] == pytest.approx(prevalence(r), abs=1e-12)
        assert shown.loc[name, "queries"] == r.n_queries
    # the AUC of every run also travels in the ROC legend
    roc = at.get("plotly_chart")[-1].proto.spec
    for name, r in expected.items():
        assert f"{name} (AUC {pooled_auc(r):.3f})" in roc
    assert not np.isnan(shown["pooled AUC"]).any()


def test_relevance_level_changes_the_curves() -> None:
    at = _curves_page()
    level = next(n for n in at.sidebar.number_input if n.label.startswith("Relevance level"))
    level.set_value(2.0).run()
    assert not at.exception
    shown = at.dataframe[0].value.set_index("run")
    for name, r in _sample_ranked().items():
        assert shown.loc[name, "pooled AUC"] == pytest.approx(pooled_auc(r, rel_level=2.0),
                                                              abs=1e-12)
    assert "grade ≥ 2" in " ".join(c.value for c in at.caption)


def test_query_choice_draws_that_query() -> None:
    at = _curves_page()
    box = at.selectbox(key=curves_keys.QUERY)
    query = box.options[3]
    box.set_value(query).run()
    assert not at.exception
    assert f"query {query}" in at.get("plotly_chart")[1].proto.spec
