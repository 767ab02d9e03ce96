"""Anchor items: the same (query, document) pairs labeled every month, to tell rater
drift from system change.

A team re-labels a fixed set of anchor items every month alongside the sample. The
documents do not change, so when their labels move, the raters moved: a month whose
trend falls while the anchors' labels fall too may be the raters' doing, not the
system's. :func:`anchor_drift` compares consecutive months on the items labeled in both:

* **shift**: the mean over items of (this month's consensus − last month's consensus),
  the consensus of an item being the ``combine`` of its raters' labels, with a
  bootstrap percentile interval over the items;
* **weighted kappa** between the two months' consensus labels (rounded to the nearest
  grade), with a bootstrap interval, and the share of items with the same label;
* **drift**: ``|shift| > threshold`` and the interval excludes 0 (default threshold
  :data:`DRIFT_SHIFT`, a fifth of a grade: on a 0-3 scale it moves DCG@10 by about 0.9).

The same is given per rater (their own labels of the items they labeled in both months),
to say who moved. Anchors arrive as a separate file (:func:`read_anchors`: round, query,
doc, label, optional rater) or as the rows of a file flagged by an ``anchor`` column.

>>> import pandas as pd
>>> t = pd.DataFrame({"round": ["m1"] * 4 + ["m2"] * 4, "query": "q",
...                   "doc": list("abcd") * 2, "rater": "ann",
...                   "label": [3, 2, 1, 0, 2, 1, 0, 0]})
>>> d = anchor_drift(t, n_resamples=200)
>>> d.pairs[["round_from", "round_to", "items", "shift", "drift"]].values.tolist()
[['m1', 'm2', 4, -0.75, True]]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import invalid_parameter
from ..io import SourceLike, read_table
from ..io.columns import LABEL_ALIASES
from ..io.guard import clean_errors
from ..params import OPEN_UNIT, POSITIVE_INT, SEED, InstanceOf, Interval, Options, check
from .judgments import COMBINE_RULES, Combine, check_combine
from .kernels import (
    Weights,
    kappa_many,
    one_blas_thread,
    percentile_interval,
    records,
    resample_counts,
    snap,
    weighted_combine,
)
from .label_table import ordered_rounds
from .labelmap import LabelMap, UnknownLabels, detect_label_map
from .reader import ESCAPE_ALIASES, undo_export_escape
from .trend import bootstrap_means

__all__ = ["ANCHOR_ALIASES", "ANCHOR_COLUMNS", "DRIFT_SHIFT", "PAIR_COLUMNS",
           "RATER_COLUMNS", "AnchorDrift", "anchor_drift", "read_anchors"]

ANCHOR_ALIASES: dict[str, tuple[str, ...]] = {
    "round": LABEL_ALIASES["round"], "query": LABEL_ALIASES["query"],
    "doc": LABEL_ALIASES["doc"], "label": LABEL_ALIASES["label"],
    "rater": LABEL_ALIASES["rater"],
    "anchor": ("anchor", "is_anchor", "anchor_item", "gold", "calibration"),
}
"""Accepted column names of an anchor file (the labeling file's, plus the flag)."""

ANCHOR_COLUMNS = ("round", "query", "doc", "rater", "label")
"""Columns of the table :func:`read_anchors` returns (the long label table)."""

PAIR_COLUMNS = ("round_from", "round_to", "items", "mean_from", "mean_to", "shift", "ci_low",
                "ci_high", "kappa", "kappa_ci_low", "kappa_ci_high", "agreement", "drift",
                "sentence")
"""Columns of :attr:`AnchorDrift.pairs`."""

RATER_COLUMNS = ("rater", "round_from", "round_to", "items", "shift", "ci_low", "ci_high",
                 "drift")
"""Columns of :attr:`AnchorDrift.per_rater`."""

DRIFT_SHIFT = 0.2
"""Default threshold of the drift flag, in grades."""

_TRUE = frozenset({"1", "true", "yes", "y", "x", "t", "是", "1.0"})
_FALSE = frozenset({"0", "false", "no", "n", "f", "", "否", "0.0"})
_THRESHOLD = Interval(Real, 0, None, closed="left")
_WEIGHTS = Options((None, "linear", "quadratic"))

_DEFINITIONS = {
    "items": "anchor items (query, document) with a label in both rounds",
    "shift": "mean over those items of round_to's consensus − round_from's (the "
             "consensus of an item in a round: the {combine}); interval: bootstrap percentile "
             "over the items ({level:.0%}, {n_resamples} resamples, seed {seed})",
    "kappa": "{weights}-weighted Cohen's kappa between the two rounds' consensus labels "
             "rounded to the nearest grade, with a bootstrap interval over the items",
    "agreement": "share of the items whose rounded consensus label is the same",
    "drift": "|shift| > {threshold:g} grade and the shift's interval excludes 0",
    "per_rater": "the same shift for each rater's own labels of the items they labeled in "
                 "both rounds",
}


# ----------------------------------------------------------------------------- reading


@clean_errors
def read_anchors(sources: SourceLike | Sequence[SourceLike], *,
                 label_map: LabelMap | str | None = None) -> pd.DataFrame:
    """Read anchor labels: a separate file, or the flagged rows of a labeling file.

    Columns (any alias of the labeling file's): ``round, query, doc, label`` and
    optionally ``rater`` and an ``anchor`` flag (``1/0``, ``true/false``, ``yes/no``,
    ``是/否``): with a flag column, only the flagged rows are anchors. Other columns
    (position, system, ...) are ignored. Empty labels are unlabeled and left out.

    Returns
    -------
    pandas.DataFrame
        The long label table (:data:`ANCHOR_COLUMNS`), ``attrs["label_map"]`` naming
        the map used.

    Raises
    ------
    FormatError
        With the file and line: a missing column, an unknown label or flag, a
        (round, query, doc, rater) labeled twice.

    Examples
    --------
    >>> t = read_anchors(("a.csv", b"month,qid,docid,grade,anchor\\n"
    ...                           b"2026-05,q1,d1,high,1\\n2026-05,q1,d2,low,0\\n"))
    >>> t.values.tolist(), t.attrs["label_map"]
    ([['2026-05', 'q1', 'd1', '', 3.0]], 'none/low/mid/high')
    """
    from pathlib import Path

    one = isinstance(sources, str | Path | bytes | bytearray | memoryview) or hasattr(
        sources, "read") or (isinstance(sources, tuple) and len(sources) == 2
                             and isinstance(sources[0], str))
    items: list[SourceLike] = ([sources] if one else  # type: ignore[list-item]
                               list(sources))  # type: ignore[arg-type]
    if not items:
        raise invalid_parameter("sources", "read_anchors", "at least one file", sources)
    if isinstance(label_map, str):
        label_map = LabelMap.parse(label_map)
    tables = [undo_export_escape(read_table(
        s, {**ANCHOR_ALIASES, **ESCAPE_ALIASES}, required=("round", "query", "doc", "label"),
        kind="anchor")) for s in items]
    texts = []
    for t in tables:
        keep = np.ones(t.n_rows, dtype=bool)
        if "anchor" in t.columns:
            flag = pc.utf8_lower(pc.utf8_trim_whitespace(t.text("anchor").cast(pa.string())))
            values = np.asarray(flag.to_numpy(zero_copy_only=False), dtype=object)
            yes, no = np.isin(values, list(_TRUE)), np.isin(values, list(_FALSE))
            if not (yes | no).all():
                row = int(np.argmax(~(yes | no)))
                raise t.error(row, f"expected an anchor flag (1/0, true/false, yes/no) in "
                              f"column {t.header_name('anchor')!r}, got {values[row]!r}")
            keep = yes
        cols = {key: np.asarray(t.text(key).cast(pa.string()).to_numpy(zero_copy_only=False),
                                dtype=object) if key in t.columns else
                np.full(t.n_rows, "", dtype=object) for key in ANCHOR_COLUMNS}
        texts.append((t, keep, cols))
    if label_map is None:
        label_map = detect_label_map(x for _, keep, cols in texts
                                     for x in pd.unique(cols["label"][keep]))
    frames: list[pd.DataFrame] = []
    for t, keep, cols in texts:
        distinct, code = np.unique(cols["label"], return_inverse=True)
        try:
            grade = label_map.apply([str(x) for x in distinct])[np.asarray(code).ravel()]
        except UnknownLabels as exc:
            row = int(np.flatnonzero(keep & (cols["label"] == exc.labels[0]))[0])
            raise t.error(row, f"unknown label {exc.labels[0]!r}; the label map "
                          f"{label_map.name!r} knows {label_map.describe()}") from None
        for key in ("round", "query", "doc"):
            empty = keep & (np.char.strip(cols[key].astype(str)) == "")
            if empty.any():
                raise t.error(int(np.argmax(empty)), f"empty {key} in column "
                              f"{t.header_name(key)!r}")
        rows = np.flatnonzero(keep & np.isfinite(grade))
        frame = pd.DataFrame({key: cols[key][rows] for key in ANCHOR_COLUMNS[:4]})
        frame["label"] = grade[rows]
        frame["_row"] = rows
        frame["_table"] = len(frames)
        frames.append(frame)
    table = pd.concat(frames, ignore_index=True)
    dup = table.duplicated(["round", "query", "doc", "rater"], keep=False).to_numpy()
    if dup.any():
        first = table[dup].iloc[0]
        same = table[dup & (table["round"] == first["round"]).to_numpy()
                     & (table["query"] == first["query"]).to_numpy()
                     & (table["doc"] == first["doc"]).to_numpy()
                     & (table["rater"] == first["rater"]).to_numpy()]
        second = same.iloc[1]
        t0, t1 = tables[int(first["_table"])], tables[int(second["_table"])]
        where = (t0.location(int(first["_row"])) if t0 is not t1
                 else t0.short(int(first["_row"])))
        raise t1.error(int(second["_row"]), f"anchor item (query {first['query']!r}, doc "
                       f"{first['doc']!r}) of round {first['round']!r} labeled twice by "
                       f"rater {first['rater']!r} (first at {where})")
    out = table.drop(columns=["_row", "_table"])
    out.attrs["label_map"] = label_map.name
    return out


# ----------------------------------------------------------------------------- result


@dataclass(frozen=True, eq=False)
class AnchorDrift:
    """Month-over-month agreement of the anchor items and the drift flags.

    Attributes
    ----------
    per_round:
        ``round, items, raters, labels, mean_label`` (the mean consensus label).
    pairs:
        Consecutive rounds: :data:`PAIR_COLUMNS` (see the module docstring).
    per_rater:
        :data:`RATER_COLUMNS`: each rater's own shift between consecutive rounds.
    definitions:
        Column name -> what it means.
    """

    per_round: pd.DataFrame
    pairs: pd.DataFrame
    per_rater: pd.DataFrame
    threshold: float
    combine: str
    weights: str | None
    confidence_level: float
    n_resamples: int
    seed: int
    definitions: dict[str, str]

    def drifted(self) -> list[tuple[str, str]]:
        """The (round_from, round_to) pairs flagged."""
        flagged = self.pairs[self.pairs["drift"].astype(bool)]
        return [(str(a), str(b)) for a, b in zip(flagged["round_from"], flagged["round_to"],
                                                 strict=True)]

    def notes(self) -> list[str]:
        """One sentence per drift, to read before the trend."""
        return [str(s) for s in self.pairs.loc[self.pairs["drift"].astype(bool), "sentence"]]

    def to_dict(self) -> dict[str, Any]:
        return {"threshold": self.threshold, "combine": self.combine,
                "weights": self.weights, "confidence_level": self.confidence_level,
                "n_resamples": self.n_resamples, "seed": self.seed,
                "per_round": records(self.per_round), "pairs": records(self.pairs),
                "per_rater": records(self.per_rater), "drifted": [list(p) for p in
                                                                  self.drifted()],
                "definitions": dict(self.definitions), "notes": self.notes()}


def _shift_interval(d: np.ndarray, level: float, n_resamples: int, seed: int
                    ) -> tuple[float, float]:
    if len(d) < 2:
        return float("nan"), float("nan")
    return percentile_interval(bootstrap_means(d[:, None], n_resamples, seed)[:, 0], level)


@one_blas_thread
def anchor_drift(table: pd.DataFrame, *, combine: Combine = "mean",
                 threshold: float = DRIFT_SHIFT, weights: Weights = "quadratic",
                 confidence_level: float = 0.95, n_resamples: int = 2000,
                 seed: int = 0) -> AnchorDrift:
    """Compare the anchor items' labels month over month and flag drifts.

    Parameters
    ----------
    table:
        The long label table of the anchor items (:func:`read_anchors`, or
        ``Judgments.label_table()`` of them): ``round, query, doc, label`` and
        optionally ``rater``; NaN labels are left out.
    combine:
        How an item's labels in a round make its consensus (:data:`COMBINE_RULES`).
    threshold:
        A drift is a shift of more than this many grades whose interval excludes 0.
    weights:
        Of the kappa between months: ``None``, ``"linear"`` or ``"quadratic"``.
    confidence_level, n_resamples, seed:
        The bootstrap over items (the draws of the trend's band for that many items).

    Returns
    -------
    AnchorDrift
    """
    fn = "anchor_drift"
    check(table, "table", fn, InstanceOf(pd.DataFrame, "a pandas DataFrame"))
    missing = [c for c in ("round", "query", "doc", "label") if c not in table.columns]
    if missing:
        raise invalid_parameter("table", fn, "a DataFrame with columns round, query, doc, "
                                "label (and rater)", f"columns {list(map(str, table.columns))}")
    check_combine(combine, fn)
    threshold = check(threshold, "threshold", fn, _THRESHOLD)
    check(weights, "weights", fn, _WEIGHTS)
    level = check(confidence_level, "confidence_level", fn, OPEN_UNIT)
    n_resamples = check(n_resamples, "n_resamples", fn, POSITIVE_INT)
    seed = check(seed, "seed", fn, SEED)

    label = pd.to_numeric(table["label"], errors="coerce").to_numpy(dtype=np.float64)
    keep = np.isfinite(label)
    t = table.loc[keep]
    label = label[keep]
    rounds = ordered_rounds(t["round"].astype(str).to_numpy()) if len(t) else []
    r_code = pd.Index(rounds).get_indexer(t["round"].astype(str))
    items = pd.MultiIndex.from_arrays([t["query"].astype(str), t["doc"].astype(str)])
    i_code, item_index = pd.factorize(items, sort=True)
    rater = (t["rater"].astype(str) if "rater" in t.columns
             else pd.Series([""] * len(t), index=t.index))
    raters = sorted(pd.unique(rater))
    t_code = pd.Index(raters).get_indexer(rater)
    n_r, n_i, n_t = len(rounds), len(item_index), len(raters)
    if pd.DataFrame({"r": r_code, "i": i_code, "t": t_code}).duplicated().any():
        raise invalid_parameter("table", fn, "one label per (round, query, doc, rater)",
                                "a repeated row")
    cube = np.full((n_r, n_i, n_t), np.nan)
    cube[r_code, i_code, t_code] = label
    consensus = np.full((n_r, n_i), np.nan)
    for r in range(n_r):  # a loop over rounds
        consensus[r] = weighted_combine(cube[r], np.ones((1, n_t), dtype=np.int64),
                                        combine)[:, 0]
    scale = np.unique(label)
    per_round = pd.DataFrame({
        "round": rounds, "items": np.isfinite(consensus).sum(axis=1).astype(np.int64),
        "raters": (np.isfinite(cube).any(axis=1)).sum(axis=1).astype(np.int64),
        "labels": np.isfinite(cube).sum(axis=(1, 2)).astype(np.int64),
        "mean_label": [float(np.nanmean(c)) if np.isfinite(c).any() else np.nan
                       for c in consensus]})

    pairs, per_rater = [], []
    for r in range(1, n_r):  # consecutive rounds
        pairs.append(_pair_row(rounds[r - 1], rounds[r], consensus[r - 1], consensus[r], scale,
                               weights, level, n_resamples, seed, threshold))
        per_rater += _rater_shifts(cube[r - 1], cube[r], raters, rounds[r - 1], rounds[r],
                                   level, n_resamples, seed, threshold)
    definitions = {name: text.format(combine=COMBINE_RULES[combine], level=level,
                                     n_resamples=n_resamples, seed=seed,
                                     weights=weights or "un", threshold=threshold)
                   for name, text in _DEFINITIONS.items()}
    return AnchorDrift(
        per_round=per_round,
        pairs=pd.DataFrame(pairs, columns=list(PAIR_COLUMNS)).astype({"drift": bool}),
        per_rater=pd.DataFrame(per_rater, columns=list(RATER_COLUMNS)).astype({"drift": bool}),
        threshold=threshold, combine=combine, weights=weights, confidence_level=level,
        n_resamples=n_resamples, seed=seed, definitions=definitions)


def _pair_row(old: str, new: str, a: np.ndarray, b: np.ndarray, scale: np.ndarray,
              weights: Weights, level: float, n_resamples: int, seed: int, threshold: float
              ) -> dict[str, Any]:
    """The row of two consecutive rounds (consensus ``a`` then ``b`` per anchor item):
    the mean shift and its interval, weighted kappa and its interval, the drift flag and
    the sentence saying it."""
    k = len(scale)
    both = np.isfinite(a) & np.isfinite(b)
    n = int(both.sum())
    d = b[both] - a[both]
    shift = float(d.mean()) if n else float("nan")
    low, high = _shift_interval(d, level, n_resamples, seed)
    kappa = k_low = k_high = agreement = float("nan")
    if n:
        code = snap(a[both], scale) * k + snap(b[both], scale)
        onehot = np.zeros((n, k * k))
        onehot[np.arange(n), code] = 1.0
        kappa = float(kappa_many(onehot.sum(axis=0).reshape(1, k, k), weights)[0])
        agreement = float(np.mean(snap(a[both], scale) == snap(b[both], scale)))
        if n >= 2:
            boot = (resample_counts(n, n_resamples, seed) @ onehot).reshape(-1, k, k)
            k_low, k_high = percentile_interval(kappa_many(boot, weights), level)
    drift = bool(n >= 2 and abs(shift) > threshold + 1e-12
                 and (low > 0 or high < 0))
    direction = "stricter" if shift < 0 else "more lenient"
    sentence = (f"Anchor items {old} → {new}: mean label "
                f"{np.mean(a[both]) if n else float('nan'):.2f} → "
                f"{np.mean(b[both]) if n else float('nan'):.2f} ({shift:+.2f} grade, "
                f"{level:.0%} interval {low:+.2f} to {high:+.2f}, {n} items; weighted "
                f"kappa {kappa:.2f}): "
                + (f"the raters labeled {direction} -- a drift; read the trend's "
                   f"{old} → {new} change with care." if drift else
                   "no drift."))
    return {"round_from": old, "round_to": new, "items": n,
            "mean_from": float(np.mean(a[both])) if n else float("nan"),
            "mean_to": float(np.mean(b[both])) if n else float("nan"),
            "shift": shift, "ci_low": low, "ci_high": high, "kappa": kappa,
            "kappa_ci_low": k_low, "kappa_ci_high": k_high,
            "agreement": agreement, "drift": drift, "sentence": sentence}


def _rater_shifts(cube_a: np.ndarray, cube_b: np.ndarray, raters: list[str], old: str,
                  new: str, level: float, n_resamples: int, seed: int, threshold: float
                  ) -> list[dict[str, Any]]:
    """Per rater who labeled anchor items in both rounds (labels ``cube_a`` then
    ``cube_b``, items x raters): their own mean shift, its interval and drift flag."""
    out: list[dict[str, Any]] = []
    for tt in range(len(raters)):  # a loop over raters
        ya, yb = cube_a[:, tt], cube_b[:, tt]
        own = np.isfinite(ya) & np.isfinite(yb)
        if not own.any():
            continue
        dd = yb[own] - ya[own]
        lo, hi = _shift_interval(dd, level, n_resamples, seed)
        s = float(dd.mean())
        out.append({"rater": raters[tt], "round_from": old,
                          "round_to": new, "items": int(own.sum()), "shift": s,
                          "ci_low": lo, "ci_high": hi,
                          "drift": bool(own.sum() >= 2 and abs(s) > threshold + 1e-12
                                        and (lo > 0 or hi < 0))})
    return out
