"""Chart builders: pure figures that follow the conventions, and thinning of long curves."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ireval_core import charts


def _random_roc(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A monotone staircase from (0, 0) to (1, 1) with n steps."""
    steps = np.random.default_rng(seed).random(n) < 0.4  # True: up (tpr), False: right (fpr)
    tpr = np.concatenate(([0], np.cumsum(steps))) / max(steps.sum(), 1)
    fpr = np.concatenate(([0], np.cumsum(~steps))) / max((~steps).sum(), 1)
    return fpr, tpr


def _distance_to_polyline(px: np.ndarray, py: np.ndarray, x: np.ndarray,
                          y: np.ndarray) -> np.ndarray:
    """Largest coordinate distance of each point to the nearest segment of the polyline."""
    ax, ay, bx, by = x[:-1], y[:-1], x[1:], y[1:]
    dx, dy = bx - ax, by - ay
    length2 = np.where(dx * dx + dy * dy == 0, 1.0, dx * dx + dy * dy)
    t = np.clip(((px[:, None] - ax) * dx + (py[:, None] - ay) * dy) / length2, 0, 1)
    cx, cy = ax + t * dx, ay + t * dy
    return np.min(np.maximum(np.abs(px[:, None] - cx), np.abs(py[:, None] - cy)), axis=1)


@pytest.mark.parametrize(("n", "resolution"), [(3000, 50), (20000, 100), (5000, 200)])
def test_thinned_curve_stays_within_one_cell(n: int, resolution: int) -> None:
    fpr, tpr = _random_roc(n, seed=n)
    x, y = charts.thin_monotone_curve(fpr, tpr, resolution)
    assert len(x) <= 4 * resolution + 2 < len(fpr)
    assert (x[0], y[0], x[-1], y[-1]) == (0.0, 0.0, 1.0, 1.0)
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)
    # every kept point is an exact point, in order
    kept = np.flatnonzero(np.isin(fpr + 10 * tpr, x + 10 * y))
    assert len(kept) >= len(x)
    # every exact point lies within one cell of the drawn line
    sample = np.random.default_rng(0).choice(len(fpr), 1500, replace=False)
    assert _distance_to_polyline(fpr[sample], tpr[sample], x, y).max() <= 1 / resolution


def test_short_curves_are_drawn_as_they_are() -> None:
    fpr, tpr = _random_roc(100, seed=1)
    x, y = charts.thin_monotone_curve(fpr, tpr, 100)
    np.testing.assert_array_equal(x, fpr)
    np.testing.assert_array_equal(y, tpr)


def test_roc_figure_has_diagonal_equal_axes_and_bounded_size() -> None:
    fpr, tpr = _random_roc(200_000, seed=3)
    fig = charts.roc_curve({"big": pd.DataFrame({"fpr": fpr, "tpr": tpr})}, auc={"big": 0.5})
    chance, curve = fig.data
    assert list(chance.x) == [0, 1] and list(chance.y) == [0, 1]
    assert len(curve.x) <= 4 * charts.ROC_RESOLUTION + 2
    assert curve.name == "big (AUC 0.500)"
    assert fig.layout.yaxis.scaleanchor == "x"


def test_pr_curves_are_steps_with_a_flat_chance_line() -> None:
    points = pd.DataFrame({"recall": [0.0, 0.5, 1.0], "precision": [1.0, 1.0, 0.5]})
    fig = charts.pr_curve({"run": points}, prevalence=0.25)
    curve = fig.data[0]
    assert curve.line.shape == "vh"
    assert list(curve.x) == [0.0, 0.0, 0.5, 1.0] and list(curve.y) == [1.0, 1.0, 1.0, 0.5]
    assert [(s.type, s.y0, s.y1) for s in fig.layout.shapes] == [("line", 0.25, 0.25)]


def test_uploaded_names_are_escaped_for_plotly() -> None:
    """Plotly renders <a href>, <b> and entities in names, titles, ticks and hover text."""
    import pandas as pd

    from ireval_core import charts

    evil = '<a href="http://127.0.0.1:9/x">run</a>'
    values = pd.DataFrame({"system": [evil, evil], "query": ["<b>q1</b>", "q2"],
                           "value": [0.1, 0.2]})
    fig = charts.per_query_distribution(values, "P@10")
    text = fig.to_json()
    assert "<a href" not in text and "<b>q1" not in text
    assert fig.data[0].name == "&lt;a href=&quot;http://127.0.0.1:9/x&quot;&gt;run&lt;/a&gt;"
    assert list(fig.data[0].text) == ["&lt;b&gt;q1&lt;/b&gt;", "q2"]
    roc = charts.roc_curve({evil: pd.DataFrame({"fpr": [0, 1], "tpr": [0, 1]})},
                           auc={evil: 0.5}, title=f"ROC of {evil}")
    assert "<a href" not in roc.to_json()


def test_rank_probabilities_heatmap_is_the_table() -> None:
    from ireval_core.decisions import rank_confidence

    rng = np.random.default_rng(0)
    scores = {"<b>a</b>": rng.random(30) + 0.2, "b": rng.random(30), "c": rng.random(30)}
    rc = rank_confidence(scores, n_resamples=300, rng=0)
    fig = charts.rank_probabilities(rc.table(), measure="nDCG@10")
    heat = fig.data[0]
    assert np.array_equal(np.asarray(heat.z), rc.table()[["P(rank 1)", "P(rank 2)",
                                                          "P(rank 3)"]].to_numpy())
    assert list(heat.x) == ["1", "2", "3"] and "&lt;b&gt;a&lt;/b&gt;" in list(heat.y)
    assert fig.layout.title.text == "Rank probabilities on nDCG@10"
