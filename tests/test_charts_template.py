"""The app makes the charts' template plotly's default (``charts.use_template_by_default``,
issue 18: the Trend page's first visit): a chart then carries it from its creation
instead of a checked copy made by each builder. The figures are the same: the same
JSON content as a builder that sets the template itself, for every chart of the Trend
page and a few others."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from ireval_core import charts


@pytest.fixture
def plotly_default() -> Iterator[None]:
    before = pio.templates.default
    yield
    pio.templates.default = before


def trend_table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    rounds = ["2026-05", "2026-06", "2026-07"]
    return pd.DataFrame({"round": rounds * 2, "system": ["prod"] * 3 + ["<b>new</b>"] * 3,
                         "dcg": rng.random(6) * 5, "ci_low": rng.random(6),
                         "ci_high": rng.random(6) * 9, "ndcg": rng.random(6),
                         "coverage": rng.random(6)})


BUILDERS: dict[str, Callable[[], go.Figure]] = {
    "label trend": lambda: charts.label_trend(trend_table(), low="ci_low", high="ci_high",
                                              title="Mean DCG@10", y_label="mean DCG@10"),
    "nDCG trend": lambda: charts.label_trend(trend_table(), value="ndcg", low=None, high=None,
                                             title="nDCG@10", y_label="nDCG@10"),
    "coverage": lambda: charts.label_trend(trend_table(), value="coverage", low=None,
                                           high=None, title="Coverage", y_label="coverage",
                                           share=True),
    "grades": lambda: charts.grade_distribution(pd.DataFrame({
        "round": ["2026-05"] * 3, "system": ["prod"] * 3, "grade": ["0", "1", "unlabeled"],
        "name": ["bad", "good", "unlabeled"], "count": [3, 5, 1],
        "share": [3 / 9, 5 / 9, 1 / 9]}), system="prod"),
    "metric bars": lambda: charts.metric_bars(pd.DataFrame(
        {"bm25": [0.3, 0.5]}, index=["P@10", "nDCG@10"])),
}


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_a_chart_with_the_default_template_is_the_same_figure(name: str,
                                                              plotly_default: None) -> None:
    pio.templates.default = "plotly"  # the builder sets the template itself
    own = json.loads(pio.to_json(BUILDERS[name](), validate=False))
    charts.use_template_by_default()
    assert pio.templates.default == charts.TEMPLATE
    by_default = json.loads(pio.to_json(BUILDERS[name](), validate=False))
    assert by_default == own
    assert by_default["layout"]["template"]["layout"]["plot_bgcolor"] == "white"  # plotly_white
