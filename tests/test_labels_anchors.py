"""Anchor items (ireval_core.labels.anchors): reading them, the month-over-month shift and
kappa against sklearn, the drift flag, and the trend reading them first."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import cohen_kappa_score

from ireval_core.errors import FormatError
from ireval_core.labels.anchors import (
    PAIR_COLUMNS,
    RATER_COLUMNS,
    anchor_drift,
    read_anchors,
)
from ireval_core.labels.trend import bootstrap_means


def anchor_table(shift_round: str | None = "m3", n_items: int = 40, seed: int = 0
                 ) -> pd.DataFrame:
    """3 raters label the same items in 4 months; in ``shift_round`` every rater labels
    one grade lower (when above 0) two times in three."""
    rng = np.random.default_rng(seed)
    true = rng.integers(0, 4, n_items)
    rows = []
    for m in ("m1", "m2", "m3", "m4"):
        for i in range(n_items):
            for rater in ("ann", "bo", "chen"):
                y = int(np.clip(true[i] + (rng.random() < 0.1) * rng.choice((-1, 1)), 0, 3))
                if m == shift_round and y > 0 and rng.random() < 2 / 3:
                    y -= 1
                rows.append((m, f"q{i // 2}", f"d{i}", rater, float(y)))
    return pd.DataFrame(rows, columns=["round", "query", "doc", "rater", "label"])


def test_shift_kappa_and_drift_flag_against_references():
    t = anchor_table()
    d = anchor_drift(t, n_resamples=500, seed=2)
    assert list(d.pairs.columns) == list(PAIR_COLUMNS)
    assert list(d.per_rater.columns) == list(RATER_COLUMNS)
    assert d.drifted() == [("m2", "m3"), ("m3", "m4")]
    cons = t.groupby(["round", "query", "doc"])["label"].mean().unstack(["query", "doc"])
    for pair in d.pairs.itertuples():
        a, b = cons.loc[pair.round_from].to_numpy(), cons.loc[pair.round_to].to_numpy()
        assert pair.items == len(a)
        assert pair.shift == pytest.approx(np.mean(b - a))
        # the interval: the bootstrap means of the trend's draws over the items
        boot = bootstrap_means((b - a)[:, None], 500, 2)[:, 0]
        low, high = np.quantile(boot, [0.025, 0.975])
        assert (pair.ci_low, pair.ci_high) == pytest.approx((low, high))
        snap_a, snap_b = np.floor(a + 0.5), np.floor(b + 0.5)
        expected = cohen_kappa_score(snap_a, snap_b, weights="quadratic",
                                     labels=[0.0, 1.0, 2.0, 3.0])
        assert pair.kappa == pytest.approx(expected)
        assert pair.kappa_ci_low <= pair.kappa <= pair.kappa_ci_high
        assert pair.agreement == pytest.approx(np.mean(snap_a == snap_b))
        assert pair.drift == (abs(pair.shift) > 0.2 and (low > 0 or high < 0))
    assert d.pairs.set_index("round_to").loc["m3", "shift"] < -0.3
    assert len(d.notes()) == 2 and "stricter" in d.notes()[0]
    # per rater: every rater moved in m3
    moved = d.per_rater[d.per_rater["round_to"] == "m3"]
    assert moved["drift"].all() and len(moved) == 3


def test_no_drift_without_a_shift_and_linear_kappa():
    d = anchor_drift(anchor_table(shift_round=None), weights="linear", n_resamples=300)
    assert d.drifted() == [] and d.notes() == []
    assert (d.pairs["kappa"] > 0.7).all()
    assert d.to_dict()["drifted"] == []


def test_read_anchors_separate_file_and_flag_column(tmp_path):
    path = tmp_path / "anchors.csv"
    path.write_text("round,query,doc,rater,label\n2026-05,q1,d1,ann,high\n"
                    "2026-05,q1,d1,bo,mid\n2026-06,q1,d1,ann,\n", encoding="utf-8")
    t = read_anchors(path)
    assert t.values.tolist() == [["2026-05", "q1", "d1", "ann", 3.0],
                                 ["2026-05", "q1", "d1", "bo", 2.0]]
    flagged = read_anchors(("labels.csv", b"month,qid,docid,pos,grade,rater,anchor\n"
                                          b"2026-05,q1,d1,1,2,ann,yes\n"
                                          b"2026-05,q1,d2,2,1,ann,no\n"
                                          b"2026-05,q2,d9,1,0,ann,1\n"))
    assert flagged[["doc", "label"]].values.tolist() == [["d1", 2.0], ["d9", 0.0]]
    with pytest.raises(FormatError, match=r"bad\.csv:3: expected an anchor flag"):
        read_anchors(("bad.csv", b"round,query,doc,label,anchor\nm,q,d,1,1\nm,q,e,1,maybe\n"))
    with pytest.raises(FormatError, match=r"dup\.csv:3: anchor item .* labeled twice by "
                                          r"rater 'ann' \(first at line 2\)"):
        read_anchors(("dup.csv", b"round,query,doc,label,rater\nm,q,d,1,ann\nm,q,d,2,ann\n"))
    with pytest.raises(FormatError, match="unknown label 'great'"):
        read_anchors(("l.csv", b"round,query,doc,label\nm,q,d,high\nm,q,e,great\n"))


def test_parameters_are_checked():
    t = anchor_table()
    with pytest.raises(ValueError, match="'threshold' parameter of anchor_drift"):
        anchor_drift(t, threshold=-1)
    with pytest.raises(ValueError, match="'table' parameter of anchor_drift"):
        anchor_drift(t.drop(columns="doc"))
    with pytest.raises(ValueError, match="one label per"):
        anchor_drift(pd.concat([t, t.iloc[:1]]))
