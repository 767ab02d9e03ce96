"""What changed between two labeling rounds: labels, and where a DCG change came from.

Between two rounds both the result lists and the labels can change. For the
(query, document) pairs labeled in both rounds, :func:`label_changes` lists the
old and new combined label and the transition table. :func:`dcg_decomposition`
splits the change of mean DCG@k of each system into the part due to the new result
lists and the part due to changed labels, so that the two add up exactly:

* ``dcg_old``: the old round's lists with the old round's labels;
* ``dcg_mixed``: the new round's lists, each shown document graded with the **old**
  round's combined label of that (query, document) where the old round has one,
  else with the new label ("the new lists with the old labels where they exist");
* ``dcg_new``: the new round's lists with the new labels.

``from_lists = dcg_mixed − dcg_old`` and ``from_labels = dcg_new − dcg_mixed``;
``total = dcg_new − dcg_old = from_lists + from_labels``. Means are over each
round's queries of the system, weighted by the query weight when the input has
weights (``dcg_mixed`` and ``dcg_new`` share the new round's queries and weights).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa

from ..options import EvalOptions, options_or_default
from ..params import POSITIVE_INT, check
from .judgments import Combine, Judgments, check_combine
from .trend import GAIN, Gain, dcg_definition, per_query_dcg

__all__ = ["DECOMPOSITION_COLUMNS", "LabelChanges", "changed", "dcg_decomposition",
           "label_changes", "label_text"]

DECOMPOSITION_COLUMNS = ("system", "round_old", "round_new", "queries_old", "queries_new",
                         "dcg_old", "dcg_mixed", "dcg_new", "total", "from_lists",
                         "from_labels", "old_labels_used", "relabeled")
"""Columns of :func:`dcg_decomposition`."""


_DECIMALS = 9
"""Combined labels are compared at this many decimals: a mean of the same labels summed
in another order is the same label."""


def _comparable(labels: np.ndarray) -> np.ndarray:
    return np.round(np.asarray(labels, dtype=float), _DECIMALS)


def changed(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Whether a (query, document)'s combined label changed between two rounds: the one
    definition of a change the count, the transitions and the DCG decomposition's
    ``relabeled`` use (``1.667 -> 2`` is a change; NaN on either side is not compared).

    >>> changed(np.array([1.0, 5 / 3, 2.0, np.nan]), np.array([1.0, 2.0, 0.1 + 1.9, 1.0]))
    array([False,  True, False, False])
    """
    o, n = _comparable(old), _comparable(new)
    return np.isfinite(o) & np.isfinite(n) & (o != n)


def label_text(value: float) -> str:
    """A combined label as the transitions name it: at most two decimals, no trailing
    zeros (``2``, ``2.5``, ``1.67``).

    >>> [label_text(v) for v in (2.0, 2.5, 5 / 3, 0.0)]
    ['2', '2.5', '1.67', '0']
    """
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _unit_keys(j: Judgments) -> np.ndarray:
    return j.unit_query.astype(np.int64) * max(len(j.doc_ids), 1) + j.unit_doc


def _old_label_of_new_units(j_old: Judgments, j_new: Judgments, combine: Combine
                            ) -> np.ndarray:
    """For every unit of the new round: the old round's combined label (NaN if none)."""
    old_label, _ = j_old.combined(combine)
    k_old = _unit_keys(j_old)
    ok = np.isfinite(old_label)
    k_old, v_old = k_old[ok], old_label[ok]
    order = np.argsort(k_old)
    k_old, v_old = k_old[order], v_old[order]
    k_new = _unit_keys(j_new)
    out = np.full(len(k_new), np.nan)
    if len(k_old):
        hit = np.minimum(np.searchsorted(k_old, k_new), len(k_old) - 1)
        found = k_old[hit] == k_new
        out[found] = v_old[hit[found]]
    return out


@dataclass(frozen=True, eq=False)
class LabelChanges:
    """The (query, document) pairs labeled in two rounds and how their labels moved.

    Attributes
    ----------
    pairs:
        ``query, doc, old, new, change`` (combined labels; ``change = new − old``),
        one row per pair labeled in both rounds, largest absolute change first.
    transitions:
        Counts of old combined label (rows) x new combined label (columns), the labels
        as :func:`label_text` writes them (``"1.67"``): the same labels the pairs and
        the count compare, so the off-diagonal cells sum to ``n_changed``.
    n_old, n_new, n_both, n_changed:
        Labeled pairs in the old round, in the new one, in both, and those whose
        combined label differs (:func:`changed`: the one definition of a change).
    definition:
        What is compared, in words.
    """

    old: str
    new: str
    combine: str
    pairs: pd.DataFrame
    transitions: pd.DataFrame
    n_old: int
    n_new: int
    n_both: int
    n_changed: int
    definition: str


def label_changes(j: Judgments, old: str, new: str, *, combine: Combine = "mean"
                  ) -> LabelChanges:
    """Compare the combined labels of the (query, document) pairs labeled in both rounds.

    >>> import pandas as pd
    >>> from ireval_core.labels import judgments_from_frame
    >>> df = pd.DataFrame({"round": ["a", "a", "b", "b"], "query": "q",
    ...                    "doc": ["d1", "d2", "d1", "d3"], "position": [1, 2, 1, 2],
    ...                    "label": [2, 1, 3, 0]})
    >>> ch = label_changes(judgments_from_frame(df), "a", "b")
    >>> ch.n_both, ch.n_changed, ch.pairs[["doc", "old", "new"]].values.tolist()
    (1, 1, [['d1', 2.0, 3.0]])
    """
    fn = "label_changes"
    check_combine(combine, fn)
    j_old, j_new = j.round(old, function=fn), j.round(new, function=fn)
    new_label, _ = j_new.combined(combine)
    old_label = _old_label_of_new_units(j_old, j_new, combine)
    both = np.isfinite(new_label) & np.isfinite(old_label)
    docs = j_new.doc_ids.take(pa.array(j_new.unit_doc[both])).to_numpy(zero_copy_only=False)
    pairs = pd.DataFrame({"query": j_new.query_ids[j_new.unit_query[both]].astype(str),
                          "doc": docs.astype(str), "old": old_label[both],
                          "new": new_label[both]})
    moved = changed(pairs["old"].to_numpy(), pairs["new"].to_numpy())
    pairs["change"] = np.where(moved, pairs["new"] - pairs["old"], 0.0)
    pairs = pairs.iloc[np.lexsort((pairs["doc"].to_numpy(), pairs["query"].to_numpy(),
                                   -pairs["change"].abs().to_numpy()))].reset_index(drop=True)
    values, codes = np.unique(np.concatenate((_comparable(pairs["old"].to_numpy()),
                                              _comparable(pairs["new"].to_numpy()))),
                              return_inverse=True)
    m, v = len(pairs), len(values)
    counts = np.bincount(codes[:m] * v + codes[m:], minlength=v * v).reshape(v, v)
    names = [label_text(x) for x in values]
    transitions = pd.DataFrame(counts, index=pd.Index(names, name=f"{old} label"),
                               columns=pd.Index(names, name=f"{new} label"))
    n_changed = int(moved.sum())
    n_old = int(np.isfinite(j_old.combined(combine)[0]).sum())
    return LabelChanges(
        old, new, combine, pairs, transitions, n_old, int(np.isfinite(new_label).sum()),
        int(both.sum()), n_changed,
        f"(query, document) pairs labeled in both {old} and {new}; label = the {combine} of "
        f"the raters' labels in each round (the label DCG uses); a pair changed when that "
        f"label differs between the rounds. The transitions count the same labels: their "
        f"off-diagonal cells hold the {n_changed:,} changed pairs")


def dcg_decomposition(j: Judgments, old: str, new: str, *, k: int = 10,
                      gain: Gain = "linear", combine: Combine = "mean",
                      options: EvalOptions | None = None) -> pd.DataFrame:
    """Split each system's change of mean DCG@k between two rounds (module docstring).

    Returns :data:`DECOMPOSITION_COLUMNS`: one row per system shown in both rounds;
    ``old_labels_used`` counts the new round's shown positions <= k graded with an
    old label in ``dcg_mixed``, ``relabeled`` those among them whose label changed.

    >>> import pandas as pd
    >>> from ireval_core.labels import judgments_from_frame
    >>> df = pd.DataFrame({"round": ["a", "a", "b", "b"], "query": "q",
    ...                    "doc": ["d1", "d2", "d2", "d1"], "position": [1, 2, 1, 2],
    ...                    "label": [3, 1, 1, 2]})
    >>> d = dcg_decomposition(judgments_from_frame(df), "a", "b", k=2)
    >>> d[["dcg_old", "dcg_mixed", "dcg_new", "from_lists", "from_labels"]].round(4).values
    array([[ 3.6309,  2.8928,  2.2619, -0.7381, -0.6309]])
    """
    fn = "dcg_decomposition"
    k = check(k, "k", fn, POSITIVE_INT)
    check(gain, "gain", fn, GAIN)
    check_combine(combine, fn)
    opts = options_or_default(options, fn)
    j_old, j_new = j.round(old, function=fn), j.round(new, function=fn)
    old_of_new = _old_label_of_new_units(j_old, j_new, combine)
    new_label, _ = j_new.combined(combine)
    mixed_unit = np.where(np.isfinite(old_of_new), old_of_new, new_label)
    pq_old = per_query_dcg(j_old, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero)
    pq_new = per_query_dcg(j_new, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero)
    pq_mix = per_query_dcg(j_new, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero,
                           shown_label=mixed_unit[j_new.shown_unit])
    in_k = j_new.shown_position <= k
    used = in_k & np.isfinite(old_of_new[j_new.shown_unit])
    relabeled = used & changed(old_of_new[j_new.shown_unit], new_label[j_new.shown_unit])
    rows = []
    for system in sorted(set(j_old.systems) & set(j_new.systems)):
        so = j_old.group_system == np.flatnonzero(j.system_names == system)[0]
        sn = j_new.group_system == np.flatnonzero(j.system_names == system)[0]
        wo = j_old.group_weight[so] if j.has_weight else np.ones(int(so.sum()))
        wn = j_new.group_weight[sn] if j.has_weight else np.ones(int(sn.sum()))
        d_old = float(np.dot(pq_old.dcg[so], wo) / wo.sum())
        d_mix = float(np.dot(pq_mix.dcg[sn], wn) / wn.sum())
        d_new = float(np.dot(pq_new.dcg[sn], wn) / wn.sum())
        shown_sys = j_new.shown_system == np.flatnonzero(j.system_names == system)[0]
        rows.append({"system": system, "round_old": old, "round_new": new,
                     "queries_old": int(so.sum()), "queries_new": int(sn.sum()),
                     "dcg_old": d_old, "dcg_mixed": d_mix, "dcg_new": d_new,
                     "total": d_new - d_old, "from_lists": d_mix - d_old,
                     "from_labels": d_new - d_mix,
                     "old_labels_used": int((used & shown_sys).sum()),
                     "relabeled": int((relabeled & shown_sys).sum())})
    out = pd.DataFrame(rows, columns=list(DECOMPOSITION_COLUMNS))
    out.attrs["definition"] = (
        f"{dcg_definition(k, gain, combine)}. dcg_old: {old}'s lists with {old}'s labels; "
        f"dcg_mixed: {new}'s lists with {old}'s label of each (query, document) where it has "
        f"one, else {new}'s; dcg_new: {new}'s lists with {new}'s labels. from_lists = "
        "dcg_mixed − dcg_old, from_labels = dcg_new − dcg_mixed, total = their sum; means "
        + ("weighted by the query weight" if j.has_weight else "over queries"))
    return out
