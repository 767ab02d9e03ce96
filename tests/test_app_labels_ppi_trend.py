"""AppTest of the Trend page's model + people estimate on the bundled sample (judge
``llm``): the choice is in the link, its numbers are the Model judge page's and the
CLI's ``labels --judge llm --ppi --format json`` key ``ppi``."""

from __future__ import annotations

import io
import json

import pytest
from _apps import LABELS, open_page
from streamlit.testing.v1 import AppTest

from ireval_app.keys import labels_trend as keys

pytestmark = pytest.mark.skipif(not (LABELS / "judge_llm.csv").exists(),
                                reason="labeling sample not generated")


@pytest.fixture(scope="module")
def trend() -> AppTest:
    return open_page("labels_trend", estimate="ppi")


def _ppi_frame(at: AppTest):
    return next(d.value for d in at.dataframe if "boot_low" in d.value.columns)


def _ppi_columns(at: AppTest) -> dict:
    """The table's column settings as sent to the browser (labels, number formats)."""
    element = next(d for d in at.dataframe if "boot_low" in d.value.columns)
    return json.loads(element.proto.columns)


def _captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption).replace("\\", "").replace("&lt;", "<")


def test_people_by_default_and_the_choice_goes_into_the_link() -> None:
    at = open_page("labels_trend")
    assert at.radio(key=keys.ESTIMATE).value == "people"
    assert "Model + people estimate" not in [s.value for s in at.subheader]
    assert at.query_params.get("estimate") is None  # the default is not in the link
    at.radio(key=keys.ESTIMATE).set_value("ppi").run()
    assert not at.exception
    assert at.query_params.get("estimate") in ("ppi", ["ppi"])
    assert "Model + people estimate" in [s.value for s in at.subheader]


def test_the_link_restores_the_choice_and_every_caption_states_it(trend: AppTest) -> None:
    assert trend.radio(key=keys.ESTIMATE).value == "ppi"
    heads = [s.value for s in trend.subheader]
    assert heads.index("Model + people estimate") < heads.index("People's labels")
    captions = [c.value.replace("\\", "").replace("&lt;", "<") for c in trend.caption]
    stated = [c for c in captions if c.startswith("Model + people (PPI++), mean DCG@10")]
    assert len(stated) == 2  # under the chart and under the table
    for c in stated:
        assert "llm's labels of every shown result at positions <= 10" in c
        assert "people's (ann, bo, chen) labels" in c
        assert "95% normal interval over the queries" in c and "bootstrap" in c
    chart = json.loads(trend.get("plotly_chart")[0].proto.spec)
    assert "model + people (PPI++)" in chart["layout"]["title"]["text"]


def test_the_trend_equals_the_model_judge_page_and_the_cli(trend: AppTest) -> None:
    from ireval_core.cli import main

    shown = _ppi_frame(trend).set_index(["round", "system"])
    shown_columns = _ppi_columns(trend)
    trend.switch_page("pages/labels_judge.py").run()  # the same session, the other page
    assert not trend.exception
    judge_page = _ppi_frame(trend).set_index(["round", "system"])
    # the same table: the same labels and number formats (the same digits shown)
    assert _ppi_columns(trend) == shown_columns
    assert shown_columns["estimate"]["type_config"]["format"] == "%.4f"
    out = io.StringIO()
    files = [*map(str, sorted(LABELS.glob("labels_*.csv"))), str(LABELS / "judge_llm.csv")]
    assert main(["labels", *files, "--judge", "llm", "--ppi", "--format", "json"],
                out=out) == 0
    cli = {(s["round"], s["system"]): s for s in json.loads(out.getvalue())["ppi"]["systems"]}
    assert len(shown) == len(judge_page) == len(cli) > 2
    for idx, row in shown.iterrows():
        for col in ("estimate", "low", "high", "boot_low", "boot_high", "model_only"):
            assert row[col] == judge_page.loc[idx, col]  # the same cache entry
        assert row["people_only"] == judge_page.loc[idx, "people_only"]
        for col in ("estimate", "low", "high", "model_only"):
            assert row[col] == pytest.approx(cli[idx][col], rel=1e-12)
        assert row["people_only"] == pytest.approx(cli[idx]["people_only"]["estimate"],
                                                   rel=1e-12)
        assert row["n_people"] == cli[idx]["n_people"]
