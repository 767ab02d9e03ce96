"""Per-query charts built with arrays of labels draw the same figures as with lists.

The reference builders below are the earlier code of :mod:`ireval_core.charts` (lists
of escaped labels); the figures must serialise to the same JSON as the ones the app
sends to the browser (``plotly.io.to_json``, as ``st.plotly_chart`` does).
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from ireval_core import charts
from ireval_core.charts import COLORS, _color, _layout, _t, _ts

# hostile and ordinary ids: the labels must be escaped the same way
QUERIES = np.array(["q<1>", "q&2", 'q"3', "q'4", "5", "q 6", "<b>x</b>", "é7"] * 40,
                   dtype=object)


def _values() -> pd.DataFrame:
    rng = np.random.default_rng(7)
    frames = [pd.DataFrame({"system": name, "query": QUERIES, "measure": "nDCG@10",
                            "value": rng.random(len(QUERIES))})
              for name in ("bm25", "<i>neural</i>", "a&b")]
    return pd.concat(frames, ignore_index=True)


def _reference_distribution(values: pd.DataFrame, measure: str) -> go.Figure:
    fig = go.Figure()
    for i, (name, df) in enumerate(values.groupby("system", sort=False)):
        fig.add_trace(go.Box(y=df["value"], x=[_t(name)] * len(df), name=_t(name),
                             boxpoints="all", jitter=0.4, pointpos=0, text=_ts(df["query"]),
                             hovertemplate="%{text}: %{y:.4f}<extra></extra>",
                             marker_color=_color(i), boxmean=True))
    fig.update_layout(showlegend=False)
    return _layout(fig, f"Per-query {measure}", "system", measure)


def _reference_delta(queries: np.ndarray, delta: np.ndarray, *, a: str, b: str,
                     measure: str) -> go.Figure:
    order = np.argsort(delta, kind="stable")
    d = np.asarray(delta)[order]
    q = np.asarray(queries)[order]
    colors = np.where(d > 0, COLORS[2], np.where(d < 0, COLORS[1], "#bbbbbb"))
    fig = go.Figure(go.Bar(x=np.arange(len(d)), y=d, marker_color=colors, customdata=_ts(q),
                           hovertemplate="%{customdata}: %{y:+.4f}<extra></extra>"))
    fig.update_xaxes(showticklabels=False)
    return _layout(fig, f"{measure}: {b} − {a} per query (sorted)", "queries", "difference")


def _reference_scatter(df: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="y = x",
                             line=dict(color="grey", dash="dot"), hoverinfo="skip"))
    for i, (name, part) in enumerate(df.groupby("system", sort=False)):
        fig.add_trace(go.Scatter(
            x=part["x"], y=part["y"], mode="markers", name=_t(name), text=_ts(part["query"]),
            marker=dict(color=_color(i), size=8, opacity=0.75),
            hovertemplate="%{text}: x=%{x:.4f}, y=%{y:.4f}<extra>" + str(name) + "</extra>"))
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    return _layout(fig, "Per query: run ideal vs qrels ideal", "nDCG (ideal = run)",
                   "nDCG (ideal = qrels)")


def _json(fig: go.Figure) -> str:
    return pio.to_json(fig, validate=False)


def test_per_query_distribution_same_figure() -> None:
    values = _values()
    fig = charts.per_query_distribution(values, "nDCG@10")
    assert _json(fig) == _json(_reference_distribution(values, "nDCG@10"))
    assert [len(t.y) for t in fig.data] == [len(QUERIES)] * 3
    assert fig.data[1].x[0] == "&lt;i&gt;neural&lt;/i&gt;" and fig.data[0].text[0] == "q&lt;1&gt;"


def test_per_query_delta_same_figure() -> None:
    rng = np.random.default_rng(3)
    delta = np.round(rng.normal(size=len(QUERIES)), 1)  # ties and zeros
    fig = charts.per_query_delta(QUERIES, delta, a="bm25", b="<i>x</i>", measure="AP")
    assert _json(fig) == _json(_reference_delta(QUERIES, delta, a="bm25", b="<i>x</i>",
                                                measure="AP"))
    assert list(fig.data[0].y) == sorted(delta)


def test_ideal_scatter_same_figure() -> None:
    values = _values()
    df = pd.DataFrame({"system": values["system"], "query": values["query"],
                       "x": values["value"], "y": values["value"][::-1].to_numpy()})
    fig = charts.ideal_scatter(df)
    assert _json(fig) == _json(_reference_scatter(df))
    assert sum(len(t.x) for t in fig.data[1:]) == len(df)
