"""Pure chart builders: data in, ``plotly.graph_objects.Figure`` out.

No Streamlit and no metric computation here: callers pass numbers computed by
:mod:`ireval_core.evaluate` and :mod:`ireval_core.curves`. One template for all
charts is set in :data:`TEMPLATE`.

Conventions: PR curves are steps (precision is piecewise constant between
recall levels) with the chance line horizontal at the prevalence; ROC curves
have the diagonal and equal axes.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio

from .escape import html_text
from .formats import grade

__all__ = [
    "COLORS", "ROC_RESOLUTION", "TEMPLATE", "effectiveness_latency",
    "ideal_comparison", "ideal_scatter",
    "interpolated_pr_curve", "metric_bars", "per_query_delta", "per_query_distribution",
    "pr_curve", "roc_curve", "thin_monotone_curve", "transition_heatmap",
    "use_template_by_default",
]

TEMPLATE = "plotly_white"
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf"]


ROC_RESOLUTION = 1000
"""ROC curves are drawn within 1/ROC_RESOLUTION of every exact point (see
:func:`thin_monotone_curve`): a pooled ROC over millions of judged documents would
otherwise send millions of points to the browser."""


def thin_monotone_curve(x: np.ndarray, y: np.ndarray, resolution: int = ROC_RESOLUTION
                        ) -> tuple[np.ndarray, np.ndarray]:
    """Fewer points for drawing a curve that never goes back in x or in y (ROC, CG).

    The unit square is cut into ``resolution`` x ``resolution`` cells; a monotone path
    visits each cell once, in one stretch, and crosses at most ``2 * resolution``
    of them. Keeping the first and the last point of every stretch keeps the drawn
    line within one cell (``1 / resolution`` in each coordinate) of every exact
    point, with at most ``4 * resolution + 2`` points. The first and last points are
    always kept. Numbers computed from the curve (AUC) must use the exact points.
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if len(x) <= 4 * resolution + 2:
        return x, y
    cell = (np.floor(np.clip(x, 0, 1) * resolution).astype(np.int64) * (resolution + 1)
            + np.floor(np.clip(y, 0, 1) * resolution).astype(np.int64))
    change = cell[1:] != cell[:-1]
    keep = np.ones(len(x), dtype=bool)
    keep[1:-1] = change[:-1] | change[1:]  # last of a stretch, or first of the next
    return x[keep], y[keep]


def _t(text: object) -> str:
    """Text for plotly, which renders a subset of HTML (``<a href>``, ``<b>``, entities) in
    trace names, titles, tick labels and hover text: uploaded names are escaped."""
    return html_text(str(text))


def _ts(values: object) -> list[str]:
    return [_t(v) for v in np.asarray(values, dtype=object)]


def _texts(values: object) -> np.ndarray:
    """:func:`_ts` as an object array: per-point labels (one per query). plotly checks a
    list element by element and deep-copies it when a trace is added; an array is
    taken as a whole (the same JSON, about 4x faster on 7,000 points)."""
    return np.array(_ts(values), dtype=object)


def use_template_by_default() -> None:
    """Make :data:`TEMPLATE` plotly's default template (the app does, once): a figure then
    carries it from its creation, as plotly applies a default, instead of a checked copy
    made by every chart builder (about 10 ms a chart, 0.2 s for the first charts of a
    process). The figures are the same."""
    pio.templates.default = TEMPLATE


def _layout(fig: go.Figure, title: str, x: str, y: str, **kw: object) -> go.Figure:
    layout: dict[str, object] = dict(legend_title_text="system",
                                     margin=dict(l=50, r=20, t=50, b=45))
    if pio.templates.default != TEMPLATE:  # else the figure has it (use_template_by_default)
        layout["template"] = TEMPLATE
    layout.update(kw)  # a caller may override the defaults (e.g. legend_title_text)
    fig.update_layout(title=_t(title), xaxis_title=_t(x), yaxis_title=_t(y), **layout)
    return fig


def _grade_colors(n: int) -> list[str]:
    """``n`` colours ordered by grade: light (lowest) to dark blue (highest)."""
    from plotly.colors import sample_colorscale

    return sample_colorscale("Blues", [0.25 + 0.75 * i / max(n - 1, 1) for i in range(n)])


def _color(i: int) -> str:
    return COLORS[i % len(COLORS)]


_DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
_SYMBOLS = ("circle", "square", "diamond", "triangle-up", "x", "star")


def _line(i: int) -> dict[str, object]:
    """Colour, dash and width of the i-th system's line.

    Dashes differ as well as colours, and earlier lines are drawn wider, so two
    systems with identical curves (e.g. the same run uploaded twice) stay visible
    one on top of the other.
    """
    return dict(color=_color(i), dash=_DASHES[i % len(_DASHES)], width=max(4.0 - 0.8 * i, 1.6))


def _chance_line(fig: go.Figure, prevalence: float, label: str) -> None:
    """The horizontal chance line at ``prevalence``, named in the legend (a label on the
    plot would lie across the curves that cross it)."""
    fig.add_hline(y=prevalence, line_dash="dot", line_color="grey")
    fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", name=label, hoverinfo="skip",
                             line=dict(dash="dot", color="grey")))


def interpolated_pr_curve(curves: Mapping[str, pd.DataFrame], *,
                          prevalence: float | None = None) -> go.Figure:
    """11-point interpolated precision/recall, one stepped line per system.

    ``curves[system]`` has columns ``recall`` and ``precision`` (means over queries).
    """
    fig = go.Figure()
    for i, (name, df) in enumerate(curves.items()):
        fig.add_trace(go.Scatter(x=df["recall"], y=df["precision"], mode="lines+markers",
                                 line_shape="hv", name=_t(name), line=_line(i),
                                 marker=dict(symbol=_SYMBOLS[i % len(_SYMBOLS)], size=8)))
    if prevalence is not None:
        _chance_line(fig, prevalence, f"chance (prevalence {prevalence:.3f})")
    fig.update_xaxes(range=[0, 1.02])
    fig.update_yaxes(range=[0, 1.02])
    return _layout(fig, "Interpolated precision at recall (mean over queries)", "recall",
                   "interpolated precision")


def pr_curve(points: Mapping[str, pd.DataFrame], *, prevalence: float | None = None,
             title: str = "Precision–recall") -> go.Figure:
    """Raw precision/recall points of one query per system, drawn as steps.

    ``points[system]`` has columns ``recall`` and ``precision`` in rank order.
    """
    fig = go.Figure()
    for i, (name, df) in enumerate(points.items()):
        x = np.concatenate(([0.0], df["recall"].to_numpy()))
        y = np.concatenate(([df["precision"].iloc[0] if len(df) else 0.0],
                            df["precision"].to_numpy()))
        fig.add_trace(go.Scatter(x=x, y=y, mode="lines", line_shape="vh", name=_t(name),
                                 line=_line(i)))
    if prevalence is not None:
        _chance_line(fig, prevalence, "chance")
    fig.update_xaxes(range=[0, 1.02])
    fig.update_yaxes(range=[0, 1.02])
    return _layout(fig, title, "recall", "precision")


def roc_curve(points: Mapping[str, pd.DataFrame], *, auc: Mapping[str, float] | None = None,
              title: str = "ROC (judged retrieved documents, pooled over queries)"
              ) -> go.Figure:
    """ROC curves with the chance diagonal and equal axes; ``points[s]`` has fpr, tpr.

    Long curves are drawn through fewer points (:func:`thin_monotone_curve`).
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="chance",
                             line=dict(dash="dot", color="grey")))
    for i, (name, df) in enumerate(points.items()):
        label = name if auc is None else f"{name} (AUC {auc[name]:.3f})"
        fpr, tpr = thin_monotone_curve(df["fpr"].to_numpy(), df["tpr"].to_numpy())
        fig.add_trace(go.Scatter(x=fpr, y=tpr, mode="lines", name=_t(label),
                                 line_shape="linear", line=_line(i)))
    fig.update_xaxes(range=[0, 1], constrain="domain")
    fig.update_yaxes(range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain")
    return _layout(fig, title, "false positive rate", "true positive rate")


def per_query_distribution(values: pd.DataFrame, measure: str) -> go.Figure:
    """Box + points of per-query values; ``values`` has columns system, query, value."""
    fig = go.Figure()
    for i, (name, df) in enumerate(values.groupby("system", sort=False)):
        fig.add_trace(go.Box(y=df["value"], x=np.full(len(df), _t(name), dtype=object),
                             name=_t(name), boxpoints="all", jitter=0.4, pointpos=0,
                             text=_texts(df["query"]),
                             hovertemplate="%{text}: %{y:.4f}<extra></extra>",
                             marker_color=_color(i), boxmean=True))
    fig.update_layout(showlegend=False)
    return _layout(fig, f"Per-query {measure}", "system", measure)


def per_query_delta(queries: np.ndarray, delta: np.ndarray, *, a: str, b: str,
                    measure: str) -> go.Figure:
    """Sorted per-query differences b − a (wins up, losses down)."""
    order = np.argsort(delta, kind="stable")
    d = np.asarray(delta)[order]
    q = np.asarray(queries)[order]
    colors = np.where(d > 0, COLORS[2], np.where(d < 0, COLORS[1], "#bbbbbb"))
    # the trace as a dict: plotly checks the 7,000 colours once (a go.Bar would be checked
    # when made and again when the figure copies it)
    fig = go.Figure(data=[dict(type="bar", x=np.arange(len(d)), y=d, marker=dict(color=colors),
                               customdata=_texts(q),
                               hovertemplate="%{customdata}: %{y:+.4f}<extra></extra>")])
    fig.update_xaxes(showticklabels=False)
    return _layout(fig, f"{measure}: {b} − {a} per query (sorted)", "queries", "difference")


def ideal_comparison(table: pd.DataFrame) -> go.Figure:
    """Grouped bars per system of the measures in ``table`` (index system, one column each).

    Used to show that nDCG with an ideal taken from the run hides recall failures
    that DCG, nDCG with the qrels ideal and recall expose.
    """
    fig = go.Figure()
    for i, col in enumerate(table.columns):
        fig.add_trace(go.Bar(x=_ts(table.index), y=table[col], name=_t(col),
                             marker_color=_color(i),
                             hovertemplate="%{x}: %{y:.4f}<extra>" + str(col) + "</extra>"))
    fig.update_layout(barmode="group", legend_title_text="measure")
    return _layout(fig, "Same runs, different normalisation", "system", "mean over queries",
                   legend_title_text="measure")


def metric_bars(table: pd.DataFrame, low: pd.DataFrame | None = None,
                high: pd.DataFrame | None = None) -> go.Figure:
    """Bars of aggregates (index system, columns measures) with optional CI error bars."""
    fig = go.Figure()
    for i, name in enumerate(table.index):
        err = None
        if low is not None and high is not None:
            y = table.loc[name].to_numpy(dtype=float)
            err = dict(type="data", symmetric=False,
                       array=high.loc[name].to_numpy(dtype=float) - y,
                       arrayminus=y - low.loc[name].to_numpy(dtype=float))
        fig.add_trace(go.Bar(x=_ts(table.columns), y=table.loc[name],
                             name=_t(name), marker_color=_color(i), error_y=err))
    fig.update_layout(barmode="group")
    return _layout(fig, "Mean per measure (95% CI)", "measure", "mean")


def ideal_scatter(df: pd.DataFrame, *, x_label: str = "nDCG (ideal = run)",
                  y_label: str = "nDCG (ideal = qrels)") -> go.Figure:
    """Per-query scatter of two nDCG variants, one colour per system, with the diagonal.

    ``df`` has columns ``system``, ``query``, ``x`` (nDCG with the ideal from the
    retrieved list) and ``y`` (nDCG with the ideal from the qrels). Points far below
    the diagonal are queries whose candidates miss relevant documents: the run-ideal
    nDCG looks good while the qrels-ideal nDCG does not.
    """
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=[0, 1], y=[0, 1], mode="lines", name="y = x",
                             line=dict(color="grey", dash="dot"), hoverinfo="skip"))
    for i, (name, part) in enumerate(df.groupby("system", sort=False)):
        fig.add_trace(go.Scatter(
            x=part["x"], y=part["y"], mode="markers", name=_t(name), text=_texts(part["query"]),
            marker=dict(color=_color(i), size=8, opacity=0.75),
            hovertemplate="%{text}: x=%{x:.4f}, y=%{y:.4f}<extra>" + str(name) + "</extra>"))
    fig.update_xaxes(range=[-0.02, 1.02])
    fig.update_yaxes(range=[-0.02, 1.02])
    return _layout(fig, "Per query: run ideal vs qrels ideal", x_label, y_label)


def _grade_text(value: object) -> str:
    """An axis label of a grade table: a number as :func:`~ireval_core.formats.grade`."""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return grade(float(value))
    return str(value)


def transition_heatmap(table: pd.DataFrame, *,
                       title: str = "Grade transitions (judgments in both rounds)",
                       x_label: str = "new grade", y_label: str = "old grade",
                       unit: str = "judgments") -> go.Figure:
    """Heatmap of a grade transition table: rows = old grade, columns = new grade.

    ``table`` holds counts (e.g. :attr:`ireval_core.rounds.RoundsDiff.transitions`);
    each cell is annotated with its count. The diagonal (unchanged grades) is outlined
    so that the off-diagonal cells, the regraded judgments, stand out. ``title``,
    ``x_label``, ``y_label`` and ``unit`` (what a count counts) name another kind of
    cross table, e.g. a rater's labels (rows) against a consensus (columns).
    """
    z = table.to_numpy(dtype=float)
    x = [_grade_text(c) for c in table.columns]  # 1, not 1.0: grades as the files write them
    y = [_grade_text(i) for i in table.index]
    fig = go.Figure(go.Heatmap(
        z=z, x=x, y=y, colorscale="Blues", text=table.to_numpy(), texttemplate="%{text:,}",
        hovertemplate=(_t(y_label) + " %{y}, " + _t(x_label) + " %{x}: %{z:,.0f} "
                       + _t(unit) + "<extra></extra>"),
        colorbar=dict(title=_t(unit))))
    for label in [c for c in x if c in set(y)]:  # in column order: the same figure every run
        fig.add_shape(type="rect", xref="x", yref="y", line=dict(color="#d62728", width=2),
                      x0=x.index(label) - 0.5, x1=x.index(label) + 0.5,
                      y0=y.index(label) - 0.5, y1=y.index(label) + 0.5)
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="bottom")
    return _layout(fig, title, x_label, y_label)


def effectiveness_latency(points: pd.DataFrame, front: pd.DataFrame, *,
                          measure: str = "effectiveness", latency: str = "latency"
                          ) -> go.Figure:
    """Effectiveness (up is better) against latency (left is better), one marker per system,
    with the Pareto front drawn as a step line.

    ``points`` has columns ``system``, ``effectiveness``, ``latency`` (ms), e.g.
    :func:`ireval_core.metadata.efficiency_points`; ``front`` is its
    :func:`ireval_core.metadata.pareto_front`. The front goes from each front system
    across to the next slower one, then up to it: the edge of everything the front
    dominates. Front systems are filled markers, dominated ones open. ``measure`` and
    ``latency`` (the statistic, e.g. ``"p95"``) label the axes.
    """
    fig = go.Figure()
    on_front = set(front["system"])
    if len(front):
        f = front.sort_values(["latency", "effectiveness"], ascending=[True, False])
        fig.add_trace(go.Scatter(x=f["latency"], y=f["effectiveness"], mode="lines",
                                 line_shape="hv", name="Pareto front", hoverinfo="skip",
                                 line=dict(color="grey", dash="dot", width=2)))
    for i, row in enumerate(points.itertuples(index=False)):  # one trace per system
        name = _t(row.system)
        on = row.system in on_front
        fig.add_trace(go.Scatter(
            x=[row.latency], y=[row.effectiveness], mode="markers+text", name=name,
            text=[name], customdata=[name], textposition="top center",
            marker=dict(color=_color(i), size=14 if on else 11,
                        symbol=_SYMBOLS[i % len(_SYMBOLS)] + ("" if on else "-open"),
                        line=dict(width=2, color=_color(i))),
            hovertemplate=("%{customdata}<br>" + _t(latency) + " latency: %{x:.1f} ms<br>"
                           + _t(measure) + ": %{y:.4f}<extra></extra>")))
    fig.update_xaxes(rangemode="tozero")
    return _layout(fig, f"{measure} vs {latency} latency (Pareto front dotted)",
                   f"{latency} latency (ms)", measure)


# ----------------------------------------------------------------------------- labeling


def label_trend(table: pd.DataFrame, *, value: str = "dcg", low: str | None = "dcg_ci_low",
                high: str | None = "dcg_ci_high", title: str = "Mean DCG per round",
                y_label: str = "mean DCG", drops: pd.DataFrame | None = None,
                inner: tuple[str, str] | None = None, share: bool = False) -> go.Figure:
    """One line per system over the rounds, with a confidence band.

    ``table`` has columns ``round``, ``system``, ``value`` and (optionally) the band's
    ``low``/``high``; ``inner`` (two columns, e.g. the query-only interval) draws a
    second, darker band inside it; ``drops`` (``system``, ``round_to``) marks
    significant drops with a red ring on the round they reach. ``share``: the value is a
    share, the axis runs from 0 to 100%.
    """
    fig = go.Figure()
    for i, (name, df) in enumerate(table.groupby("system", sort=False)):
        color = _color(i)
        rounds = _ts(df["round"])
        bands = [(low, high, 0.15)] + ([(inner[0], inner[1], 0.3)] if inner else [])
        for lo, hi, opacity in bands:
            if lo is None or hi is None:
                continue
            fig.add_trace(go.Scatter(
                x=rounds + rounds[::-1],
                y=list(df[hi]) + list(df[lo])[::-1], fill="toself", fillcolor=color,
                opacity=opacity, line=dict(width=0), hoverinfo="skip", showlegend=False))
        fig.add_trace(go.Scatter(x=rounds, y=df[value], mode="lines+markers", name=_t(name),
                                 line=dict(color=color, dash=_DASHES[i % len(_DASHES)]),
                                 marker=dict(symbol=_SYMBOLS[i % len(_SYMBOLS)], size=8)))
    if drops is not None and not drops.empty:
        merged = drops.merge(table, left_on=["system", "round_to"],
                             right_on=["system", "round"], how="inner")
        fig.add_trace(go.Scatter(
            x=_ts(merged["round"]), y=merged[value], mode="markers", name="significant drop",
            marker=dict(size=18, color="rgba(0,0,0,0)", line=dict(color="#d62728", width=3))))
    fig.update_xaxes(type="category")
    if share:
        fig.update_yaxes(tickformat=".0%", range=[0, 1.02])
    return _layout(fig, title, "round", y_label)


def grade_distribution(grades: pd.DataFrame, *, system: str) -> go.Figure:
    """Stacked bars of the share of each grade per round (one system).

    ``grades`` has columns ``round``, ``system``, ``grade``, ``name``, ``share``.
    """
    part = grades[grades["system"] == system]
    fig = go.Figure()
    groups = list(part.groupby(["grade", "name"], sort=True))  # lowest grade first
    colors = _grade_colors(len(groups))
    for i, ((_, name), df) in enumerate(groups):
        fig.add_trace(go.Bar(x=_ts(df["round"]), y=df["share"], name=_t(name),
                             marker_color=colors[i]))
    fig.update_layout(barmode="stack", legend_title_text="label")
    fig.update_yaxes(tickformat=".0%", range=[0, 1])
    fig.update_xaxes(type="category")
    return _layout(fig, f"Labels of the shown results: {system}", "round",
                   "share of shown positions", legend_title_text="label")


def gsb_trend(table: pd.DataFrame) -> go.Figure:
    """GSB per round with its confidence interval (``round, gsb, ci_low, ci_high``)."""
    fig = go.Figure(go.Scatter(
        x=_ts(table["round"]), y=table["gsb"], mode="lines+markers", name="GSB",
        line=dict(color=_color(0)),
        error_y=dict(type="data", symmetric=False, array=table["ci_high"] - table["gsb"],
                     arrayminus=table["gsb"] - table["ci_low"])))
    fig.add_hline(y=0, line_dash="dot", line_color="grey")
    fig.update_yaxes(range=[-1, 1])
    fig.update_xaxes(type="category")
    return _layout(fig, "GSB = (good − bad) / all judgments, per round", "round", "GSB",
                   showlegend=False)


def rank_probabilities(table: pd.DataFrame, *, measure: str = "") -> go.Figure:
    """Heatmap of each system's probability of each rank (rows best first).

    ``table`` as :meth:`ireval_core.decisions.RankConfidence.table` gives it: a
    ``system`` column and one ``P(rank r)`` column per rank; each cell is annotated
    with its percentage.
    """
    cols = [c for c in table.columns if str(c).startswith("P(rank ")]
    z = table[cols].to_numpy(dtype=float)
    x = [str(c)[len("P(rank "):-1] for c in cols]
    y = _ts(table["system"])
    fig = go.Figure(go.Heatmap(
        z=z, x=x, y=y, zmin=0, zmax=1, colorscale="Blues",
        text=[[f"{v:.0%}" for v in row] for row in z], texttemplate="%{text}",
        hovertemplate="%{y} at rank %{x}: %{z:.1%} of resamples<extra></extra>",
        colorbar=dict(title="share", tickformat=".0%")))
    fig.update_yaxes(autorange="reversed", type="category")
    fig.update_xaxes(type="category", side="bottom")
    title = f"Rank probabilities on {measure}" if measure else "Rank probabilities"
    return _layout(fig, title, "rank (1 = best)", "system",
                   height=max(220, 70 + 40 * len(y)))
