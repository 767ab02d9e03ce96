"""Labeling rounds: what changed between two qrels, and what to label next.

Teams judge documents in rounds (e.g. monthly): a round adds judgments, corrects
grades, and sometimes drops documents. This module compares two rounds and plans
the next one; everything is vectorised over all judgments at once.

* :func:`compare_qrels` aligns two qrels by (query, document) and counts what was
  added, removed and regraded, with the grade transition table, Cohen's kappa and a
  per-query summary (:class:`RoundsDiff`).
* :func:`ranking_stability` scores the same runs under both rounds and measures how
  much the system ordering moved (Kendall's τ, :class:`Stability`).
* :func:`coverage` and :func:`to_label`: how much of each run's top k the judges have
  seen, and the distinct unjudged (query, document) pairs to send them next.

A negative grade means "in the pool but not judged" (see the reference): it counts
as a judgment *entry* (it is in the file) but not as a judged document (grade >= 0).

>>> from ireval_core import Qrels
>>> old = Qrels.from_dict({"q1": {"d1": 1, "d2": 0}})
>>> new = Qrels.from_dict({"q1": {"d1": 2, "d2": 0, "d3": 1}})
>>> diff = compare_qrels(old, new)
>>> diff.n_both, diff.n_only_new, diff.n_changed
(2, 1, 1)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from .data import JoinCache, Qrels, Run, run_doc_map
from .evaluate import MeasureCache, evaluate
from .idcodes import id_positions, strictly_increasing
from .measures import parse_measure
from .measures.pairwise import system_ranking_tau
from .options import EvalOptions
from .params import POSITIVE_INT, check

__all__ = [
    "PER_QUERY_COLUMNS",
    "TO_LABEL_COLUMNS",
    "UNJUDGED_LABEL",
    "RoundsDiff",
    "Stability",
    "compare_qrels",
    "coverage",
    "ranking_stability",
    "to_label",
]



def __getattr__(name: str) -> object:
    """``cohen_kappa`` moved to :mod:`ireval_core.labels.agreement`; it is still importable
    from here, loaded on first use (importing the labels package loads scipy.stats)."""
    if name == "cohen_kappa":
        from .labels.agreement import cohen_kappa

        return cohen_kappa
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


UNJUDGED_LABEL = "pooled, unjudged"
"""Row/column label of negative grades in the transition table."""

PER_QUERY_COLUMNS = ("query", "judged_old", "judged_new", "added", "removed", "changed",
                     "relevant_old", "relevant_new")
"""Columns of :attr:`RoundsDiff.per_query`."""

TO_LABEL_COLUMNS = ("query", "docid", "runs", "best_rank", "grade", "status")
"""Columns of :func:`to_label`."""


# ----------------------------------------------------------------------------- diff


@dataclass(frozen=True, eq=False)
class RoundsDiff:
    """Two labeling rounds (qrels) compared judgment by judgment.

    A *judgment* is one (query, document) entry of a qrels file, whatever its grade.

    Attributes
    ----------
    old_source, new_source:
        Names of the two qrels.
    n_only_old:
        Judgments in the old round only (removed in the new one).
    n_only_new:
        Judgments in the new round only (added).
    n_both:
        Judgments in both rounds.
    n_changed:
        Judgments in both rounds whose grade differs.
    queries_only_old, queries_only_new, queries_both:
        Query ids (sorted) with judgments in the old round only, the new only, both.
    transitions:
        Counts over the judgments in both rounds: rows = old grade, columns = new grade
        (negative grades are one label, :data:`UNJUDGED_LABEL`, listed first). The
        diagonal is unchanged judgments.
    kappa:
        Cohen's kappa κ = (p_o − p_e) / (1 − p_e) over the documents judged (grade ≥ 0)
        in both rounds: p_o is the share with the same grade, p_e the share expected by
        chance from each round's grade distribution. 1 = perfect agreement, 0 = what
        chance gives, < 0 = worse than chance. NaN when there is no such document or
        when p_e = 1 (one grade only in both rounds).
    weighted_kappa:
        Linearly weighted kappa κ_w = 1 − Σ w_ij o_ij / Σ w_ij e_ij, w_ij = |i − j|,
        where i, j are the positions of the grades in the sorted list of grades seen
        (sklearn's ``cohen_kappa_score(weights="linear")``): a 0→3 change costs three
        times a 0→1 change. Same documents and NaN cases as :attr:`kappa`.
    n_kappa:
        The number of documents both kappas are computed over.
    per_query:
        One row per query of either round (columns :data:`PER_QUERY_COLUMNS`):
        judged documents (grade ≥ 0) in each round, judgments added, removed and
        regraded, relevant documents (grade ≥ ``rel_level``) in each round.
    changes:
        The regraded judgments: ``query, docid, old, new`` (sorted by query, docid).
    rel_level:
        The relevance threshold used for ``relevant_old`` / ``relevant_new``.
    """

    old_source: str
    new_source: str
    n_only_old: int
    n_only_new: int
    n_both: int
    n_changed: int
    queries_only_old: np.ndarray
    queries_only_new: np.ndarray
    queries_both: np.ndarray
    transitions: pd.DataFrame
    kappa: float
    weighted_kappa: float
    n_kappa: int
    per_query: pd.DataFrame
    changes: pd.DataFrame
    rel_level: float = 1.0


def _grade_label(g: float) -> str:
    return UNJUDGED_LABEL if g < 0 else f"{g:g}"


def _query_union(old: Qrels, new: Qrels) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    qo, qn = old.query_ids.astype(str), new.query_ids.astype(str)
    queries = np.union1d(qo, qn)
    return queries, np.searchsorted(queries, qo), np.searchsorted(queries, qn)


def _doc_codes_new(old: Qrels, new: Qrels) -> tuple[np.ndarray, int]:
    """Codes of ``new``'s documents in a dictionary extending ``old``'s; its size."""
    where = pc.index_in(new.doc_ids.cast(pa.string()), value_set=old.doc_ids.cast(pa.string()))
    out = pc.fill_null(where, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    missing = out < 0
    out[missing] = len(old.doc_ids) + np.arange(int(missing.sum()), dtype=np.int64)
    return out, len(old.doc_ids) + int(missing.sum())


def compare_qrels(old: Qrels, new: Qrels, *, options: EvalOptions | None = None) -> RoundsDiff:
    """Align two rounds of judgments by (query, document) and describe the changes.

    Parameters
    ----------
    old, new:
        The earlier and the later round.
    options:
        The evaluation options; their relevance level is the threshold of the
        per-query ``relevant_old`` / ``relevant_new`` counts.

    Returns
    -------
    RoundsDiff
        Counts, the grade transition table, kappas and the per-query summary; every
        field is defined in :class:`RoundsDiff`.

    Examples
    --------
    >>> from ireval_core import Qrels
    >>> old = Qrels.from_dict({"q1": {"a": 0, "b": 1, "c": 2}, "q2": {"x": 1}})
    >>> new = Qrels.from_dict({"q1": {"a": 0, "b": 2, "c": 2, "d": 1}, "q3": {"y": 0}})
    >>> d = compare_qrels(old, new)
    >>> (d.n_only_old, d.n_only_new, d.n_both, d.n_changed)
    (1, 2, 3, 1)
    >>> list(d.queries_only_old), list(d.queries_only_new), list(d.queries_both)
    (['q2'], ['q3'], ['q1'])
    """
    rel_level = (EvalOptions() if options is None else options).rel_level
    queries, qmap_old, qmap_new = _query_union(old, new)
    nq = len(queries)
    dcode_new, n_docs = _doc_codes_new(old, new)
    nd = max(n_docs, 1)
    q_old = qmap_old[old.qcode].astype(np.int64)
    q_new = qmap_new[new.qcode].astype(np.int64)
    key_old = q_old * nd + old.dcode.astype(np.int64)
    key_new = q_new * nd + dcode_new[new.dcode]
    _, i_old, i_new = np.intersect1d(key_old, key_new, assume_unique=True,
                                     return_indices=True)
    in_both_old = np.zeros(len(key_old), dtype=bool)
    in_both_old[i_old] = True
    in_both_new = np.zeros(len(key_new), dtype=bool)
    in_both_new[i_new] = True
    g_old, g_new = old.grade[i_old], new.grade[i_new]
    changed = g_old != g_new

    # transitions: negative grades collapse to one label, listed first
    lab_old = np.where(g_old < 0, -1.0, g_old)
    lab_new = np.where(g_new < 0, -1.0, g_new)
    values, codes = np.unique(np.concatenate((lab_old, lab_new)), return_inverse=True)
    k, m = len(values), len(lab_old)
    counts = np.bincount(codes[:m] * k + codes[m:], minlength=k * k).reshape(k, k)
    labels = [_grade_label(v) for v in values]
    transitions = pd.DataFrame(counts, index=pd.Index(labels, name="old grade"),
                               columns=pd.Index(labels, name="new grade"))

    from .labels.agreement import cohen_kappa  # the labels package loads scipy.stats

    judged = (g_old >= 0) & (g_new >= 0)
    kappa = cohen_kappa(g_old[judged], g_new[judged])
    weighted = cohen_kappa(g_old[judged], g_new[judged], weights="linear")

    def per_q(q: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.bincount(q, weights=weights, minlength=nq).astype(np.int64)

    per_query = pd.DataFrame({
        "query": queries.astype(object),
        "judged_old": per_q(q_old, old.grade >= 0),
        "judged_new": per_q(q_new, new.grade >= 0),
        "added": per_q(q_new[~in_both_new]),
        "removed": per_q(q_old[~in_both_old]),
        "changed": per_q(q_old[i_old][changed]),
        "relevant_old": per_q(q_old, old.grade >= rel_level),
        "relevant_new": per_q(q_new, new.grade >= rel_level),
    })
    has_old = per_q(q_old) > 0
    has_new = per_q(q_new) > 0

    rows = i_old[changed]
    changes = pd.DataFrame({
        "query": queries[q_old[rows]].astype(object),
        "docid": old.doc_ids.take(pa.array(old.dcode[rows])).to_numpy(zero_copy_only=False),
        "old": g_old[changed],
        "new": g_new[changed],
    })  # old rows are sorted by (query code, doc code); sort by ids for people
    changes = changes.sort_values(["query", "docid"], kind="stable", ignore_index=True)

    return RoundsDiff(
        old_source=old.source, new_source=new.source,
        n_only_old=int((~in_both_old).sum()), n_only_new=int((~in_both_new).sum()),
        n_both=int(len(i_old)), n_changed=int(changed.sum()),
        queries_only_old=queries[has_old & ~has_new].astype(object),
        queries_only_new=queries[has_new & ~has_old].astype(object),
        queries_both=queries[has_old & has_new].astype(object),
        transitions=transitions, kappa=kappa, weighted_kappa=weighted,
        n_kappa=int(judged.sum()), per_query=per_query, changes=changes,
        rel_level=float(rel_level))


# ----------------------------------------------------------------------------- stability


@dataclass(frozen=True, eq=False)
class Stability:
    """The same runs scored under two rounds.

    Attributes
    ----------
    measure:
        The canonical measure text.
    table:
        One row per run: ``system``, ``mean_old``, ``mean_new``, ``delta``
        (new − old), ``rank_old``, ``rank_new`` (1 = best mean; equal means share the
        best rank) and ``rank_change`` (rank_old − rank_new: positive = moved up).
    tau:
        Kendall's τ = (P − Q) / (P + Q) between the system orderings under the two
        rounds (:func:`~ireval_core.measures.pairwise.system_ranking_tau`): 1 = same
        order, −1 = reversed; NaN with fewer than two comparable systems.
    definition:
        The measure's definition under the evaluation options used.
    """

    measure: str
    table: pd.DataFrame
    tau: float
    definition: str


def ranking_stability(old: Qrels, new: Qrels, runs: Run | Iterable[Run], measure: str, *,
                      options: EvalOptions | None = None) -> Stability:
    """Mean of ``measure`` for each run under each round, ranks, and Kendall's τ.

    Both rounds are evaluated with the same ``options`` (:func:`ireval_core.evaluate`).

    Examples
    --------
    >>> from ireval_core import Qrels, Run
    >>> old = Qrels.from_dict({"q1": {"a": 1, "b": 0}})
    >>> new = Qrels.from_dict({"q1": {"a": 0, "b": 1}})
    >>> runs = [Run.from_dict({"q1": {"a": 2.0, "b": 1.0}}, name="x"),
    ...         Run.from_dict({"q1": {"a": 1.0, "b": 2.0}}, name="y")]
    >>> s = ranking_stability(old, new, runs, "P@1")
    >>> s.table["rank_old"].tolist(), s.table["rank_new"].tolist(), s.tau
    ([1, 2], [2, 1], -1.0)
    """
    runs = [runs] if isinstance(runs, Run) else list(runs)
    spec = str(parse_measure(measure))
    res_old = evaluate(old, runs, [spec], options=options)
    res_new = evaluate(new, runs, [spec], options=options)
    names = [r.name for r in runs]
    mean_old = pd.Series([res_old.mean(s, spec) for s in names], index=names, dtype=float)
    mean_new = pd.Series([res_new.mean(s, spec) for s in names], index=names, dtype=float)
    rank_old = mean_old.rank(ascending=False, method="min").astype("Int64")
    rank_new = mean_new.rank(ascending=False, method="min").astype("Int64")
    table = pd.DataFrame({
        "system": names,
        "mean_old": mean_old.to_numpy(), "mean_new": mean_new.to_numpy(),
        "delta": (mean_new - mean_old).to_numpy(),
        "rank_old": rank_old.to_numpy(), "rank_new": rank_new.to_numpy(),
        "rank_change": (rank_old - rank_new).to_numpy(),
    })
    tau = system_ranking_tau(dict(zip(names, mean_old.to_numpy(), strict=True)),
                             dict(zip(names, mean_new.to_numpy(), strict=True)))
    return Stability(spec, table, tau, res_old.definition(spec))


# ----------------------------------------------------------------------------- coverage


def _top_k_table(runs: list[Run], qrels: Qrels, k: int) -> pa.Table:
    """Top-k entries of every run on the qrels queries: run, query, docid, rank, grade.

    ``grade`` is the qrels grade of (query, docid), null when not judged. Rows are in no
    particular order. Computed on integer codes: the top-k rows are picked per query
    segment (not by ranking every row), each run document is mapped to the qrels' code
    with the run's document map (the one its joins use, see
    :func:`ireval_core.data.join`), and (query, document) keys are looked up in the
    qrels' sorted keys; strings are built for the top-k rows only.
    """
    schema = pa.schema([("run", pa.int32()), ("query", pa.string()), ("docid", pa.string()),
                        ("rank", pa.int64()), ("grade", pa.float64())])
    n_docs = max(len(qrels.doc_ids), 1)
    qkey = qrels.qcode.astype(np.int64) * n_docs + qrels.dcode
    order = None if strictly_increasing(qkey) else np.argsort(qkey, kind="stable")
    if order is not None:
        qkey = qkey[order]
    parts = []
    for i, run in enumerate(runs):  # a loop over runs, not queries
        # qrels query code of each run query (-1: not judged, the query is left out)
        qmap = id_positions(qrels.query_ids, run.query_ids)
        lengths = np.diff(run.offsets)
        take = np.where(qmap >= 0, np.minimum(lengths, k), 0)
        n = int(take.sum())
        seg = np.repeat(np.arange(len(take), dtype=np.int64), take)
        starts = np.cumsum(take) - take  # first output row of each segment
        within = np.arange(n, dtype=np.int64) - starts[seg]
        rows = run.offsets[:-1][seg] + within
        dcode = run.dcode[rows]
        qdoc = run_doc_map(qrels, run)[dcode]  # qrels document code or -1
        key = qmap[seg].astype(np.int64) * n_docs + qdoc
        at = np.minimum(np.searchsorted(qkey, key), max(len(qkey) - 1, 0))
        found = (qdoc >= 0) & (qkey[at] == key) if len(qkey) else np.zeros(n, dtype=bool)
        where = at if order is None else order[at]
        grade = np.where(found, qrels.grade[where] if len(qkey) else 0.0, np.nan)
        parts.append(pa.table({
            "run": pa.array(np.full(n, i, dtype=np.int32)),
            "query": pa.array(run.query_ids.astype(str), pa.string()).take(pa.array(seg)),
            "docid": run.doc_ids.take(pa.array(dcode)).cast(pa.string()),
            "rank": pa.array(within + 1),
            "grade": pa.array(grade, pa.float64(), mask=~found),
        }, schema=schema))
    return pa.concat_tables(parts) if parts else schema.empty_table()


def _unjudged(table: pa.Table) -> pa.Table:
    grade = table["grade"]
    return table.filter(pc.or_kleene(pc.is_null(grade), pc.less(grade, 0.0)))


def coverage(qrels: Qrels, runs: Run | Iterable[Run], k: int = 10, *,
             joins: JoinCache | None = None, values: MeasureCache | None = None
             ) -> pd.DataFrame:
    """How much of each run's top ``k`` the judges have seen.

    Over the queries a run shares with the qrels (the queries it is evaluated on).
    Columns: ``run``; ``Judged@k``, the mean over those queries of judged documents
    (grade ≥ 0) in the top k / min(k, retrieved), from :func:`ireval_core.evaluate`;
    ``top-k documents``, the ranked documents considered; ``unjudged in top k``, how
    many of them are not in the qrels or have a negative grade (what judging this run
    alone would cost; :func:`to_label` merges the runs, so its size is at most the sum).
    ``joins`` and ``values``: joins and per-query values kept for reuse (a dataset's,
    see :func:`ireval_core.evaluate`); the same numbers without them.

    Examples
    --------
    >>> from ireval_core import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"a": 1, "b": -1}})
    >>> run = Run.from_dict({"q1": {"a": 3.0, "b": 2.0, "c": 1.0}}, name="x")
    >>> coverage(qrels, run, k=2)[["run", "Judged@2", "unjudged in top 2"]].to_dict("records")
    [{'run': 'x', 'Judged@2': 0.5, 'unjudged in top 2': 1}]
    """
    k = check(k, "k", "coverage", POSITIVE_INT)
    runs = [runs] if isinstance(runs, Run) else list(runs)
    measure = f"Judged@{k}"
    names = [r.name for r in runs]
    res = evaluate(qrels, runs, [measure], joins=joins, values=values) if runs else None
    top = _top_k_table(runs, qrels, k)
    n_top = np.bincount(top["run"].to_numpy(), minlength=len(runs))
    unjudged = np.bincount(_unjudged(top)["run"].to_numpy(), minlength=len(runs))
    return pd.DataFrame({
        "run": names,
        measure: [res.mean(n, measure) for n in names] if res is not None else [],
        f"top-{k} documents": n_top.astype(np.int64),
        f"unjudged in top {k}": unjudged.astype(np.int64),
    })


def to_label(qrels: Qrels, runs: Run | Iterable[Run], k: int = 10) -> pd.DataFrame:
    """The distinct unjudged (query, document) pairs in any run's top ``k``: the next round.

    Only queries of the qrels are considered (a query nobody judged yet is a new topic,
    not a gap in the pool). A document is unjudged when it is not in the qrels or has a
    negative grade ("pooled, unjudged"). Columns (:data:`TO_LABEL_COLUMNS`): ``query``,
    ``docid``, ``runs`` (how many runs rank it in their top k), ``best_rank`` (its best
    rank among them), ``grade`` (NaN when absent from the qrels, else the negative
    grade) and ``status`` (the same in words: ``unjudged`` or ``pooled, unjudged``).
    Sorted by query, best rank, then docid: export it and send it to the judges.

    Examples
    --------
    >>> from ireval_core import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}})
    >>> runs = [Run.from_dict({"q1": {"a": 3.0, "b": 2.0}}, name="x"),
    ...         Run.from_dict({"q1": {"b": 3.0, "c": 2.0}}, name="y")]
    >>> to_label(qrels, runs, k=2)[["query", "docid", "runs", "best_rank"]].to_dict("records")
    [{'query': 'q1', 'docid': 'b', 'runs': 2, 'best_rank': 1}, \
{'query': 'q1', 'docid': 'c', 'runs': 1, 'best_rank': 2}]
    """
    k = check(k, "k", "to_label", POSITIVE_INT)
    runs = [runs] if isinstance(runs, Run) else list(runs)
    pending = _unjudged(_top_k_table(runs, qrels, k))
    grouped = pending.group_by(["query", "docid"]).aggregate(
        [("run", "count_distinct"), ("rank", "min"), ("grade", "max")])
    out = pd.DataFrame({
        "query": grouped["query"].to_numpy(zero_copy_only=False).astype(object),
        "docid": grouped["docid"].to_numpy(zero_copy_only=False).astype(object),
        "runs": grouped["run_count_distinct"].to_numpy(zero_copy_only=False).astype(np.int64),
        "best_rank": grouped["rank_min"].to_numpy(zero_copy_only=False).astype(np.int64),
        "grade": grouped["grade_max"].to_numpy(zero_copy_only=False).astype(np.float64),
    })
    out["status"] = np.where(out["grade"].isna(), "unjudged", UNJUDGED_LABEL).astype(object)
    return out.sort_values(["query", "best_rank", "docid"], kind="stable", ignore_index=True)
