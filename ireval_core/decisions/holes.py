"""Judgment debt: does a win survive the documents nobody labeled?

A new system retrieves documents the old pool never judged. By default they count
as non-relevant, so a meeting cannot tell a real win from an artefact of the pool.
For a pair of runs and a measure this module finds

* the **holes**: the unjudged documents (absent from the qrels, or pooled but not
  judged: a negative grade) in each system's top k, where k is the measure's cutoff
  (``nDCG@10``: the top 10) or, for a measure without one (or one that reads past its
  cutoff), the whole evaluated ranking (the evaluation's depth). Under judged-only
  rankings (``-J``) the top k is that of the condensed list, so the window is every
  document above the k-th judged one;
* each system's **bounds**: its per-query values with its holes labeled non-relevant
  (grade 0) and relevant (the relevance level for binary measures, the top grade of
  the qrels for graded ones), reported as the lower and upper of the two;
* a **verdict**: the paired test is run again under the labeling least favourable to
  the winner (the winner's holes non-relevant, the other system's holes relevant,
  also where the other system's holes enter the winner's qrels: its recall or its
  ideal ranking). ``holds`` when the winner still wins, ``depends`` otherwise, with
  exactly the deciding (query, document) pairs as the next labeling batch
  (:meth:`HolesResult.batch`, :meth:`HolesResult.export`). With no significant winner
  as judged, the verdict ``holds`` when neither system would win under the labeling
  most favourable to it.

The values under a labeling are those of :func:`~ireval_core.evaluate` with the holes
added to the qrels (the tests compare both: equal, or within 1e-15 for ERR, whose
running product is summed over the rows of every query). They are computed from each
run's join with the qrels, with the holes' grades set and the ideal ranking of each
query updated, and read by the same vectorised measure kernels: one join per run, no
loop over queries, no new qrels to build and join for every labeling.

For the families in :data:`MONOTONE_FAMILIES` (P, Success, RR, CG, DCG, ERR, RBP,
NumRelRet: a value that never decreases when one of the system's own documents gets a
higher grade, and that reads no other document) the two labelings are the extremes:
``holds`` means *for any labeling* of the holes. For the others (AP, R, nDCG with the
ideal from the qrels, bpref, ...) a relevant hole also raises the number of relevant
documents or the ideal DCG, so a mixed labeling can fall outside the two; the sentence
then says "labeled either way".

Where the qrels mark pooled-but-unjudged documents (negative grades) and the measure is
AP or nDCG (ideal from the qrels), the result also carries the inferred estimate, which
treats the judged documents as a uniform random sample of each query's pool:
:func:`inferred_ap` (Yilmaz and Aslam's infAP) and :func:`inferred_ndcg` (infNDCG,
after Yilmaz, Kanoulas and Aslam 2008).

>>> from ireval_core import Qrels, Run
>>> qrels = Qrels.from_dict({"q1": {"a": 1, "x": 0}, "q2": {"a": 1, "x": 0},
...                          "q3": {"a": 1, "x": 0}, "q4": {"a": 1, "x": 0},
...                          "q5": {"a": 1, "x": 0}, "q6": {"a": 1, "x": 0}})
>>> old = Run.from_dict({q: {"x": 2.0, "new": 1.0} for q in qrels.query_ids}, name="old")
>>> new = Run.from_dict({q: {"a": 2.0, "x": 1.0} for q in qrels.query_ids}, name="new")
>>> res = judgment_holes(qrels, old, new, "P@1")
>>> res.verdict, res.holes_a, res.holes_b
('holds', 0, 0)
>>> res = judgment_holes(qrels, old, new, "P@2")  # old's second document is unjudged
>>> res.verdict, res.holes_a, res.bounds_a
('depends', 6, (0.0, 0.5))
>>> print(res.text)  # doctest: +NORMALIZE_WHITESPACE
new beats old on P@2 as judged (p < 0.001), but the verdict depends on 6 unjudged
documents in the top 2: with new's non-relevant and old's relevant, they tie on every query
>>> res.batch()[["query", "doc", "system", "position"]].values.tolist()[:2]
[['q1', 'new', 'old', 2], ['q2', 'new', 'old', 2]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pyarrow as pa

from ..data import JoinCache, Qrels, Ranked, Run
from ..errors import invalid_parameter
from ..evaluate import Evaluation, evaluate
from ..formats import p_text
from ..idcodes import dictionary_codes
from ..measures import Measure, parse_measures
from ..measures.segments import safe_div, seg_cumcount, seg_sum
from ..options import EvalOptions
from ..params import check
from ..stats import (
    TESTS,
    bootstrap_test,
    paired_t_test,
    randomization_test,
    sign_test,
    wilcoxon_test,
)
from ..stats.base import N_RESAMPLES, PROBABILITY, RngLike, check_rng

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BATCH_COLUMNS", "MONOTONE_FAMILIES", "PREFIX_FAMILIES", "HolesResult",
           "inferred_ap", "inferred_ndcg", "judgment_debt", "judgment_holes"]

PREFIX_FAMILIES = frozenset({
    "P", "R", "F", "Fallout", "Accuracy", "Success", "Judged", "AP", "RR", "NumRet",
    "NumRelRet", "NumNonRelRet", "CG", "DCG", "nDCG", "ERR", "RBP"})
"""Families whose value at cutoff k reads only the top k of the ranking (and counts
from the qrels): their holes are the unjudged documents of the top k. nDCG with
``ideal=run`` reads the whole ranking (its ideal is built from it) and is not one of
them. Any other family (including those registered later) reads the whole evaluated
ranking, so its holes are every unjudged document of it."""

MONOTONE_FAMILIES = frozenset({"P", "Success", "RR", "CG", "DCG", "ERR", "RBP", "NumRelRet"})
"""Families whose value never decreases when one of the system's own documents gets a
higher grade and that read no other judgment (with the linear or exp gain, and without
judged-only rankings): labeling every hole non-relevant, then relevant, gives the
extremes over all labelings, so ``holds`` means "for any labeling"."""

BATCH_COLUMNS = ("round", "system", "query", "doc", "position", "rater", "label")
"""Columns of :meth:`HolesResult.batch`: the layout of a labeling file
(:func:`ireval_core.labels.read_judgments` reads the filled-in batch back)."""

Verdict = Literal["holds", "depends"]

_INFAP_EPSILON = 1e-5


# ---------------------------------------------------------------------------- results


@dataclass(frozen=True)
class HolesResult:
    """The judgment debt of one pair of systems on one measure (``d = b - a``).

    Attributes
    ----------
    system_a, system_b, measure : str
        The pair and the measure.
    k : int or None
        The window the holes are counted in: the measure's cutoff, ``None`` for the
        whole evaluated ranking.
    n_queries : int
        Queries compared (those every compared system has a value for, as in
        :func:`ireval_core.compare.compare_evaluation`).
    holes_a, holes_b, shared : int
        Unjudged documents in a's and in b's window over those queries, and how many
        of them both systems retrieved. ``n_holes = holes_a + holes_b - shared``.
    mean_a, mean_b : float
        Means as judged (holes non-relevant, the usual evaluation).
    bounds_a, bounds_b : tuple of float
        Means of the per-query lower and upper values with the system's holes labeled
        non-relevant and relevant.
    test, alpha : str, float
        The paired test (two-sided, as :mod:`ireval_core.stats`) and its level.
    pvalue : float
        The test as judged (NaN when undefined, e.g. every query ties).
    winner : str or None
        The significantly better system as judged, if any.
    worst_labeling : str
        The labeling tested for the verdict, in words.
    worst_mean_diff, worst_pvalue : float
        Mean of ``b - a`` and the test's p-value under that labeling.
    verdict : {"holds", "depends"}
        Whether the verdict as judged survives that labeling.
    any_labeling : bool
        The bounds are the extremes over every labeling (:data:`MONOTONE_FAMILIES`).
    inferred : dict or None
        The inferred estimate per system (mean over the compared queries) when the qrels
        hold pooled-but-unjudged documents: :func:`inferred_ap` for AP,
        :func:`inferred_ndcg` for nDCG with the ideal from the qrels.
    text : str
        The verdict in words.
    """

    system_a: str
    system_b: str
    measure: str
    k: int | None
    n_queries: int
    holes_a: int
    holes_b: int
    shared: int
    mean_a: float
    mean_b: float
    bounds_a: tuple[float, float]
    bounds_b: tuple[float, float]
    test: str
    alpha: float
    pvalue: float
    winner: str | None
    worst_labeling: str
    worst_mean_diff: float
    worst_pvalue: float
    verdict: Verdict
    any_labeling: bool
    inferred: dict[str, float] | None
    text: str
    query_ids: np.ndarray = field(repr=False, compare=False)
    low_a: np.ndarray = field(repr=False, compare=False)
    high_a: np.ndarray = field(repr=False, compare=False)
    low_b: np.ndarray = field(repr=False, compare=False)
    high_b: np.ndarray = field(repr=False, compare=False)
    _batch: dict[str, Any] = field(repr=False, compare=False)
    inferred_name: str = ""
    """``infAP`` or ``infNDCG`` (with the measure's cutoff) when :attr:`inferred` is set."""

    def inferred_text(self) -> str:
        """The inferred estimates in words (empty without them)."""
        if self.inferred is None:
            return ""
        values = ", ".join(f"{s} {v:.4f}" for s, v in self.inferred.items())
        return (f"{self.inferred_name}, the estimate treating the pooled-but-unjudged "
                f"documents (grade -1) as a random sample of each query's pool: {values} "
                f"(mean over the {self.n_queries:,} compared queries; as judged: "
                f"{self.system_a} {self.mean_a:.4f}, {self.system_b} {self.mean_b:.4f})")

    def inferred_definition(self) -> str:
        """What :attr:`inferred` is, in one sentence (empty without it)."""
        if self.inferred is None:
            return ""
        how = ("the expected precision at each judged relevant document from the judged "
               "documents above it (Yilmaz and Aslam 2006)" if self.inferred_name.startswith(
                   "infAP") else
               "the DCG of the judged documents divided by the share p of the pool that was "
               "judged, over the ideal DCG of round(n/p) documents of each grade judged n "
               "times (Yilmaz, Kanoulas and Aslam 2008); equal to nDCG when nothing is "
               "missing, and one query's value can exceed 1")
        return (f"{self.inferred_name}: the pool of a query is every document of its qrels, "
                f"the judged ones taken as a uniform random sample of it, the ones marked -1 "
                f"pooled but not judged; the estimate uses {how}.")

    def bounds_note(self) -> str:
        """Why the verdict's difference need not be the difference of two bounds, in one
        sentence: each bound labels one system's holes, the verdict one labeling of both."""
        if self.n_holes == 0:
            return ""
        a, b, d = self.system_a, self.system_b, self.worst_mean_diff
        if self.winner is not None:  # as the verdict's sentence: winner - loser
            loser = a if self.winner == b else b
            diff = f"{self.winner} − {loser} = {(d if self.winner == b else -d):+.4f}"
        else:
            diff = f"{b} − {a} = {d:+.4f}"
        return (f"Each bound labels one system's holes and leaves the other's unjudged; "
                f"the verdict labels both systems' holes at once, so its difference "
                f"({diff}) need not equal a difference of two bounds: a "
                f"hole labeled relevant is a relevant document of its query for both "
                f"systems, raising nDCG's ideal ranking and the number of relevant documents "
                f"AP, recall and R-precision divide by.")

    @property
    def n_holes(self) -> int:
        """Distinct (query, document) pairs unjudged in either window."""
        return self.holes_a + self.holes_b - self.shared

    def batch(self, round: str = "next") -> pd.DataFrame:
        """The holes as the next labeling batch, one row per (query, document).

        Columns :data:`BATCH_COLUMNS`: ``system`` and ``position`` say where the
        document was shown (the system ranking it higher; a on ties), ``rater`` and
        ``label`` are empty for the raters to fill in. Ordered by query, then position.
        """
        import pandas as pd

        b = self._batch
        if "index" not in b:  # made on the first call: most results are never exported
            b.update(_batch_rows(*b.pop("args")))
        n = len(b["index"])
        query = np.empty(n, dtype=object)
        doc = np.empty(n, dtype=object)
        for i, h in enumerate(b["holes"]):
            mine = np.flatnonzero(b["which"] == i)
            rows = h.rows[b["index"][mine]]
            query[mine] = h.base.query_ids[h.base.qidx[rows]]
            doc[mine] = h.docs.take(pa.array(b["index"][mine])).to_pylist()
        return pd.DataFrame({
            "round": np.full(n, round, dtype=object),
            "system": np.asarray(b["systems"], dtype=object)[b["which"]],
            "query": query, "doc": doc, "position": b["position"],
            "rater": np.full(n, "", dtype=object), "label": np.full(n, "", dtype=object)},
            columns=list(BATCH_COLUMNS))

    def export(self, format: Literal["csv", "xlsx"] = "csv", *, round: str = "next") -> bytes:
        """:meth:`batch` as CSV or Excel bytes (:func:`ireval_core.labels.export_batch`:
        cells a spreadsheet would read as formulas are neutralised)."""
        from ..labels import export_batch

        return export_batch(self.batch(round), format)

    def as_dict(self) -> dict[str, Any]:
        """The summary as plain JSON-ready values (NaN as ``None``)."""
        return {
            "k": self.k, "queries": self.n_queries,
            "holes": {self.system_a: self.holes_a, self.system_b: self.holes_b,
                      "shared": self.shared, "total": self.n_holes},
            "bounds": {self.system_a: [_num(v) for v in self.bounds_a],
                       self.system_b: [_num(v) for v in self.bounds_b]},
            "test": self.test, "pvalue": _num(self.pvalue), "winner": self.winner,
            "worst_labeling": self.worst_labeling,
            "worst_mean_diff": _num(self.worst_mean_diff),
            "worst_pvalue": _num(self.worst_pvalue),
            "verdict": self.verdict, "any_labeling": self.any_labeling,
            **({"inferred": {s: _num(v) for s, v in self.inferred.items()},
                "inferred_measure": self.inferred_name}
               if self.inferred is not None else {}),
            "text": self.text,
        }


def _num(v: float) -> float | None:
    return None if math.isnan(v) else float(v)


# ------------------------------------------------------------------------ public API


def judgment_holes(qrels: Qrels, run_a: Run, run_b: Run, measure: str | Measure, *,
                   options: EvalOptions | None = None, test: str = "t", alpha: float = 0.05,
                   n_resamples: int = 10_000, rng: RngLike = 0,
                   joins: JoinCache | None = None) -> HolesResult:
    """The judgment debt of ``run_b`` against ``run_a`` on one measure.

    Parameters
    ----------
    qrels : Qrels
        The judgments.
    run_a, run_b : Run
        The baseline and the candidate (``d = b - a``).
    measure : str or Measure
        One measure (``"nDCG@10"``, ``"P@5"``, ``"AP"``, ...).
    options : EvalOptions, optional
        As for :func:`~ireval_core.evaluate` (default: trec_eval's).
    test : {"t", "wilcoxon", "sign", "randomization", "bootstrap"}, default "t"
        The two-sided paired test of the verdicts (uncorrected).
    alpha : float, default 0.05
        Its level.
    n_resamples : int, default 10_000
        Resamples of the randomization and bootstrap tests.
    rng : None, int or numpy.random.Generator, default 0
        Seed of those tests (each test restarts from an int seed).
    joins : JoinCache, optional
        Joined runs to reuse (the app's cache).

    Returns
    -------
    HolesResult

    See Also
    --------
    judgment_debt : every pair of several runs, on several measures, at once.
    """
    fn = "judgment_holes"
    for name, run in (("run_a", run_a), ("run_b", run_b)):
        if not isinstance(run, Run):
            raise invalid_parameter(name, fn, "a Run", run, error=TypeError)
    if run_a.name == run_b.name:
        raise invalid_parameter("run_b", fn, f"a run other than run_a ({run_a.name!r})",
                                run_b.name)
    specs = parse_measures(measure)
    if len(specs) != 1:
        raise invalid_parameter("measure", fn, "one measure", measure)
    return debt_for_pair(qrels, [run_a, run_b], specs, [(run_a.name, run_b.name)], options=options,
                 test=test, alpha=alpha, n_resamples=n_resamples, rng=rng, joins=joins,
                 fn=fn)[0]


def judgment_debt(qrels: Qrels, runs: Sequence[Run], measures: str | Measure |
                  Sequence[str | Measure], *, baseline: str | None = None,
                  options: EvalOptions | None = None, test: str = "t", alpha: float = 0.05,
                  n_resamples: int = 10_000, rng: RngLike = 0,
                  joins: JoinCache | None = None) -> list[HolesResult]:
    """:func:`judgment_holes` for every pair of ``runs`` (or each run against
    ``baseline``) and every measure, sharing the joins and the labeled rankings.

    Pairs are ``(a, b)`` in run order (``a`` first), as :func:`ireval_core.compare.
    compare_evaluation` makes them; the compared queries are those every run has a
    value for. Results are ordered by measure, then pair.

    Examples
    --------
    >>> from ireval_core import Qrels, Run
    >>> qrels = Qrels.from_dict({"q1": {"a": 1}, "q2": {"a": 1}})
    >>> runs = [Run.from_dict({"q1": {"a": 1.0}, "q2": {"b": 1.0}}, name="x"),
    ...         Run.from_dict({"q1": {"c": 1.0}, "q2": {"a": 1.0}}, name="y")]
    >>> [(r.system_a, r.system_b, r.holes_a, r.holes_b) for r in judgment_debt(
    ...     qrels, runs, ["P@1", "RR"])]
    [('x', 'y', 1, 1), ('x', 'y', 1, 1)]
    """
    fn = "judgment_debt"
    runs = list(runs)
    for run in runs:
        if not isinstance(run, Run):
            raise invalid_parameter("runs", fn, "a sequence of Run objects", runs,
                                    error=TypeError)
    pairs = run_pairs(runs, baseline, fn)
    return debt_for_pair(qrels, runs, parse_measures(measures), pairs, options=options, test=test,
                 alpha=alpha, n_resamples=n_resamples, rng=rng, joins=joins, fn=fn)


def inferred_ap(r: Ranked, measure: str | Measure = "AP", *,
                options: EvalOptions | None = None) -> np.ndarray:
    """Per-query inferred AP (infAP; Yilmaz and Aslam, CIKM 2006) of one joined run.

    The pool is every document in the qrels; a negative grade marks a pooled document
    that was not judged (not sampled), and a document absent from the qrels is outside
    the pool (non-relevant). The expected precision at a judged relevant document at
    rank k is

    ``E[P@k] = 1/k + ((k-1)/k) * (|pool above k| / (k-1)) * (rel + e) / (rel + nonrel + 2e)``

    with ``rel`` and ``nonrel`` the judged relevant and non-relevant documents above
    rank k and ``e = 1e-5``, and infAP is their sum divided by the number of judged
    relevant documents of the query (0 when there is none). Without pooled-but-unjudged
    documents it equals AP up to ``e``. ``AP@k`` gives infAP over the top k.

    Parameters
    ----------
    r : Ranked
        A run joined with the qrels (:func:`ireval_core.join`, without judged-only
        rankings: the estimate reads the ranking as the system returned it).
    measure : str or Measure, default "AP"
        ``AP`` or ``AP@k``, with its relevance level (``AP(rel=2)``).
    options : EvalOptions, optional
        For the relevance level.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, join
    >>> qrels = Qrels.from_dict({"q": {"r1": 1, "r2": 1, "n": 0, "u": -1}})
    >>> run = Run.from_dict({"q": {"r1": 4.0, "u": 3.0, "n": 2.0, "r2": 1.0}}, name="s")
    >>> float(np.round(inferred_ap(join(qrels, run))[0], 4))  # (1 + 1/4 + 3/4 · 1/2) / 2
    0.8125
    """
    fn = "inferred_ap"
    if not isinstance(r, Ranked):
        raise invalid_parameter("r", fn, "a Ranked (a run joined with the qrels)", r,
                                error=TypeError)
    specs = parse_measures(measure)
    if len(specs) != 1 or specs[0].name != "AP":
        raise invalid_parameter("measure", fn, "AP or AP@k", measure)
    m = specs[0]
    options = EvalOptions() if options is None else options
    t = m.threshold(options)
    g = r.grade
    rel = g >= t
    nonrel = (g >= 0) & (g < t)
    pooled = ~np.isnan(g)
    above_pool = seg_cumcount(pooled, r.offsets, r.qidx) - pooled
    above_rel = seg_cumcount(rel, r.offsets, r.qidx) - rel
    above_non = seg_cumcount(nonrel, r.offsets, r.qidx) - nonrel
    pos = r.pos.astype(np.float64)
    e = _INFAP_EPSILON
    expected = 1.0 / pos + (above_pool / pos) * (above_rel + e) / (above_rel + above_non
                                                                    + 2.0 * e)
    take = rel if m.cutoff is None else rel & (r.pos <= m.k)
    return safe_div(seg_sum(np.where(take, expected, 0.0), r.qidx, r.n_queries),
                    r.n_relevant(t))


def inferred_ndcg(r: Ranked, measure: str | Measure = "nDCG", *,
                  options: EvalOptions | None = None) -> np.ndarray:
    """Per-query inferred nDCG (infNDCG) of one joined run.

    The sampling model is that of :func:`inferred_ap`: the pool of a query is every
    document in its qrels, the judged ones (grade >= 0) a uniform random sample of it,
    the pooled-but-unjudged ones marked by a negative grade; a document absent from the
    qrels is outside the pool and gains 0. With ``J`` judged of ``P`` pooled documents,
    each pooled document was judged with probability ``p = J / P``, and

    * the DCG is estimated by Horvitz and Thompson's estimator: the DCG of the judged
      documents of the ranking divided by ``p`` (unbiased for the DCG the ranking would
      have with the whole pool judged);
    * the ideal DCG is that of an ideal ranking holding, of each positive grade ``g``,
      ``round(n_g / p)`` documents (``n_g`` judged with grade ``g``; halves round up):
      the estimated number of documents of that grade in the pool;
    * infNDCG = estimated DCG / estimated ideal DCG, with the measure's gain, discount
      and cutoff; an estimated ideal DCG of 0 scores as nDCG's (``idcg_zero``).

    Without pooled-but-unjudged documents ``p = 1`` and infNDCG is nDCG exactly. It is a
    ratio of estimates: not unbiased, and one query's value can exceed 1 (a relevant
    document at the top weighs ``1 / p``); the mean over queries is what to read.

    Parameters
    ----------
    r : Ranked
        A run joined with the qrels (without judged-only rankings).
    measure : str or Measure, default "nDCG"
        ``nDCG`` or ``nDCG@k`` with the ideal from the qrels (any gain and discount).
    options : EvalOptions, optional
        For ``idcg_zero``.

    Examples
    --------
    >>> from ireval_core import Qrels, Run, join
    >>> qrels = Qrels.from_dict({"q": {"r": 1, "n": 0, "u": -1, "v": -1}})
    >>> run = Run.from_dict({"q": {"r": 3.0, "u": 2.0, "n": 1.0}}, name="s")
    >>> float(inferred_ndcg(join(qrels, run))[0])  # p = 1/2: (1 / 0.5) / (1 + 1/log2(3))
    1.2262...
    """
    fn = "inferred_ndcg"
    if not isinstance(r, Ranked):
        raise invalid_parameter("r", fn, "a Ranked (a run joined with the qrels)", r,
                                error=TypeError)
    specs = parse_measures(measure)
    if len(specs) != 1 or specs[0].name != "nDCG" or specs[0].get("ideal") == "run":
        raise invalid_parameter("measure", fn, "nDCG or nDCG@k with the ideal from the qrels",
                                measure)
    m = specs[0]
    options = EvalOptions() if options is None else options
    iq, ig = r.ideal_qidx, r.ideal_grade
    pooled = np.bincount(iq, minlength=r.n_queries).astype(np.float64)
    judged = np.bincount(iq, weights=ig >= 0, minlength=r.n_queries)
    scale = safe_div(pooled, judged, fill=1.0)  # 1 / p; 1 where nothing is judged
    # the ideal: each run of equal positive grades of a query (sorted descending) repeated
    # round(n / p) times instead of n
    keep = np.flatnonzero(ig > 0)
    q, g = iq[keep], ig[keep]
    start = np.ones(len(keep), dtype=bool)
    start[1:] = (q[1:] != q[:-1]) | (g[1:] != g[:-1])
    first = np.flatnonzero(start)
    n = np.diff(np.append(first, len(keep)))
    estimated = np.floor(n * scale[q[first]] + 0.5).astype(np.int64)
    ideal_grade = np.repeat(g[first], estimated)
    offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(q[first], weights=estimated, minlength=r.n_queries
                          ).astype(np.int64), out=offsets[1:])
    estimate = Ranked(r.query_ids, r.offsets, r.qidx, r.pos, r.grade, r.score, offsets,
                      ideal_grade, r.in_run, r.max_grade)
    return np.asarray(m.family.kernel(estimate, m, options), dtype=np.float64) * scale


# -------------------------------------------------------------------------- the work


def _check_test(test: str, fn: str) -> str:
    if test not in TESTS:
        raise invalid_parameter("test", fn, "one of " + ", ".join(map(repr, TESTS)), test)
    return test


@dataclass
class _Holes:
    """One run's window for one measure: the (possibly cut) join and its holes."""

    base: Ranked  # the join without judged-only rankings, cut to the window when it can be
    rows: np.ndarray  # rows of ``base`` that are holes
    gquery: np.ndarray  # global query index of each hole
    key: np.ndarray  # (global query, global document) key of each hole
    docs: pa.Array  # document id of each hole
    local: np.ndarray  # global query index -> row of base.query_ids (-1: absent)
    counts: dict[tuple[float, bool], np.ndarray] = field(default_factory=dict)


def run_pairs(runs: Sequence[Run], baseline: str | None, fn: str) -> list[tuple[str, str]]:
    """The pairs ``(a, b)`` of run names the decision evidence compares: each run against
    ``baseline``, or every pair in run order (``a`` first). ``ValueError`` naming ``fn``
    unless there are two runs or more with distinct names and ``baseline`` is one of them.
    """
    names = [r.name for r in runs]
    if len(runs) < 2 or len(set(names)) != len(names):
        raise invalid_parameter("runs", fn, "at least two runs with distinct names", names)
    if baseline is not None and baseline not in names:
        raise invalid_parameter("baseline", fn, f"one of the runs ({', '.join(names)})",
                                baseline)
    return ([(baseline, s) for s in names if s != baseline] if baseline is not None
            else [(a, b) for i, a in enumerate(names) for b in names[i + 1:]])


def debt_for_pair(qrels: Qrels, runs: list[Run], specs: list[Measure], pairs: list[tuple[str, str]],
          *, options: EvalOptions | None, test: str, alpha: float, n_resamples: int,
          rng: RngLike, joins: JoinCache | None, fn: str,
          evaluation: Evaluation | None = None) -> list[HolesResult]:
    """The work of :func:`judgment_debt`; ``evaluation``: the runs evaluated on
    ``specs`` under ``options`` already."""
    from ..compare import aligned_scores

    if not isinstance(qrels, Qrels):
        raise invalid_parameter("qrels", fn, "a Qrels", qrels, error=TypeError)
    options = EvalOptions() if options is None else options
    if not isinstance(options, EvalOptions):
        raise invalid_parameter("options", fn, "an EvalOptions", options, error=TypeError)
    _check_test(test, fn)
    alpha = check(alpha, "alpha", fn, PROBABILITY)
    n_resamples = check(n_resamples, "n_resamples", fn, N_RESAMPLES)
    rng = check_rng(rng, fn)
    joins = JoinCache() if joins is None else joins
    res = (evaluate(qrels, runs, specs, options=options, joins=joins) if evaluation is None
           else evaluation)
    plain = replace(options, judged_only=False)
    by_name = {r.name: r for r in runs}
    full = {r.name: joins.ranked(qrels, r, plain) for r in runs}
    gqueries = np.unique(np.concatenate([f.query_ids.astype(str) for f in full.values()]))
    systems = [r.name for r in runs]
    tester = _Tester(test, n_resamples, rng)

    windows: dict[tuple[str, int | None], _Holes] = {}
    out: list[HolesResult] = []
    for m in specs:
        window = _window_of(m)
        if (systems[0], window) not in windows:
            windows.update(_windows(full, by_name, window, options.judged_only, gqueries))
        label = _relevant_label(m, options, qrels)
        common, values = aligned_scores(res, m, systems)
        common = common.astype(str)
        worlds = _Worlds(m, options, label, {s: windows[(s, window)] for s in systems},
                         common)
        inferred = _inferred(m, options, full, common) if (
            _inferred_name(m) and bool((qrels.grade < 0).any())) else None
        for a, b in pairs:
            out.append(_pair_result(a, b, m, window, values, worlds, tester, alpha,
                                    options, inferred))
    return out


def _window_of(m: Measure) -> int | None:
    """The top k the measure reads, ``None`` for the whole evaluated ranking."""
    if m.name not in PREFIX_FAMILIES or m.cutoff is None:
        return None
    if m.family.cutoff not in ("optional", "required"):
        return None
    if m.name == "nDCG" and m.get("ideal") == "run":
        return None
    return m.k


def _relevant_label(m: Measure, options: EvalOptions, qrels: Qrels) -> float:
    """The grade a relevant hole gets: the relevance level (binary measures), the top
    grade of the qrels (graded measures; the relevance level if no grade is positive)."""
    t = m.threshold(options)
    if m.family.binary:
        return t
    top = float(qrels.grade.max()) if len(qrels.grade) else 0.0
    return top if top > 0 else max(t, 1.0)


def _windows(full: dict[str, Ranked], runs: dict[str, Run], k: int | None,
             judged_only: bool, gqueries: np.ndarray) -> dict[tuple[str, int | None], _Holes]:
    """Every run's window of the top ``k`` and its holes, documents coded together."""
    parts: dict[str, tuple[Ranked, np.ndarray, pa.Array, np.ndarray, np.ndarray]] = {}
    for name, r in full.items():
        judged = r.grade >= 0
        if k is None:
            base = r
        else:
            if judged_only:  # the condensed top k: every row above the k-th judged one
                above = seg_cumcount(judged, r.offsets, r.qidx) - judged
                keep = above < k
            else:
                keep = r.pos <= k
            base = _take_rows(r, np.flatnonzero(keep))
        rows = np.flatnonzero(~(base.grade >= 0))
        local_q = base.qidx[rows]
        run = runs[name]
        run_q = np.searchsorted(run.query_ids.astype(str), base.query_ids.astype(str))
        run_rows = run.offsets[np.minimum(run_q, max(len(run.query_ids) - 1, 0))][local_q] + (
            base.pos[rows].astype(np.int64) - 1)
        docs = run.doc_ids.take(pa.array(run.dcode[run_rows])).cast(pa.string())
        gq_of_local = np.searchsorted(gqueries, base.query_ids.astype(str))
        local = np.full(len(gqueries), -1, dtype=np.int64)
        local[gq_of_local] = np.arange(len(base.query_ids))
        parts[name] = (base, rows, docs, gq_of_local[local_q], local)
    chunks = [p[2] for p in parts.values()]
    codes, distinct = dictionary_codes(pa.chunked_array(chunks, type=pa.string()))
    n_docs = max(len(distinct), 1)
    out: dict[tuple[str, int | None], _Holes] = {}
    start = 0
    for name, (base, rows, docs, gq, local) in parts.items():
        c = codes[start:start + len(rows)].astype(np.int64)
        start += len(rows)
        out[(name, k)] = _Holes(base, rows, gq, gq.astype(np.int64) * n_docs + c, docs, local)
    return out


def _take_rows(r: Ranked, rows: np.ndarray) -> Ranked:
    """``r`` with only ``rows`` (a prefix of every query's ranking) kept."""
    qidx = r.qidx[rows]
    offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
    np.cumsum(np.bincount(qidx, minlength=r.n_queries), out=offsets[1:])
    return Ranked(r.query_ids, offsets, qidx, r.pos[rows], r.grade[rows], r.score[rows],
                  r.ideal_offsets, r.ideal_grade, r.in_run, r.max_grade)


def _ideal_top(r: Ranked, k: int) -> Ranked:
    """``r`` with only the ``k`` highest ideal grades of each query."""
    within = np.arange(len(r.ideal_grade)) - r.ideal_offsets[r.ideal_qidx]
    keep = within < k
    offsets = np.zeros(r.n_queries + 1, dtype=np.int64)
    np.cumsum(np.minimum(np.diff(r.ideal_offsets), k), out=offsets[1:])
    return Ranked(r.query_ids, r.offsets, r.qidx, r.pos, r.grade, r.score, offsets,
                  r.ideal_grade[keep], r.in_run, r.max_grade)


def _labeled(base: Ranked, rows: np.ndarray, row_labels: np.ndarray, extra_q: np.ndarray,
             extra_grade: np.ndarray, extra_label: float, *, condense: bool,
             cut: int | None, counts: dict[tuple[float, bool], np.ndarray]) -> Ranked:
    """``base`` as :func:`~ireval_core.data.join` would give it with the qrels plus
    ``rows`` graded ``row_labels`` and the (query, original grade) entries ``extra_*``
    graded ``extra_label`` (documents outside this ranking's window: only the ideal
    changes).

    ``condense``: drop the still unjudged rows and rank again (judged-only), then keep
    the top ``cut``.
    """
    grade = base.grade.copy()
    grade[rows] = row_labels
    qidx, pos, score, offsets = base.qidx, base.pos, base.score, base.offsets
    if condense:
        keep = grade >= 0
        qidx, grade, score = qidx[keep], grade[keep], score[keep]
        offsets = np.zeros(base.n_queries + 1, dtype=np.int64)
        np.cumsum(np.bincount(qidx, minlength=base.n_queries), out=offsets[1:])
        pos = (np.arange(len(qidx), dtype=np.int64) - offsets[qidx] + 1).astype(np.int32)
        if cut is not None:
            first = np.flatnonzero(pos <= cut)
            qidx, grade, score, pos = qidx[first], grade[first], score[first], pos[first]
            np.cumsum(np.bincount(qidx, minlength=base.n_queries), out=offsets[1:])
    q_new = np.concatenate([base.qidx[rows].astype(np.int64), extra_q.astype(np.int64)])
    original = np.concatenate([base.grade[rows], extra_grade])
    labels = np.concatenate([row_labels, np.full(len(extra_q), extra_label)])
    ideal_offsets, ideal_grade = _ideal_with(base, q_new, original, labels, counts)
    top = max(base.max_grade, float(labels.max())) if len(labels) else base.max_grade
    return Ranked(base.query_ids, offsets, qidx, pos, grade, score, ideal_offsets,
                  ideal_grade, base.in_run, top)


def _ideal_with(r: Ranked, q: np.ndarray, original: np.ndarray, labels: np.ndarray,
                counts: dict[tuple[float, bool], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """The ideal grades (descending within each query) with a judgment per entry:
    an entry whose original grade is negative (pooled, unjudged) replaces one such
    grade of its query; one absent from the qrels (NaN) is added. ``labels`` are >= 0.
    Linear passes, no sort of the ideal; ``counts`` keeps the per-query
    counts of ``r``'s ideal grades for the next labeling of the same join."""
    nq = r.n_queries
    if len(q) == 0:
        return r.ideal_offsets, r.ideal_grade
    grade, offsets = r.ideal_grade, r.ideal_offsets
    kept, kept_offsets = grade, offsets
    pooled = ~np.isnan(original)
    if pooled.any():
        qi = r.ideal_qidx
        keep = np.ones(len(grade), dtype=bool)
        for v in np.unique(original[pooled]):  # usually one value, -1
            count = np.bincount(q[pooled & (original == v)], minlength=nq)
            start = offsets[:-1] + _count_within(r, v, strict=True, kept=counts)
            at = np.flatnonzero(grade == v)
            within = at - start[qi[at]]
            keep[at[within < count[qi[at]]]] = False
        kept = grade[keep]
        kept_offsets = offsets.copy()  # fewer removed where a cut ideal lacks the grades
        kept_offsets[1:] -= np.cumsum(np.bincount(qi[~keep], minlength=nq))
    # each new grade goes after the kept grades >= it in its query (the removed grades
    # are negative, so those counts are the original ideal's), the higher label first.
    # No sort: the kept grades move down by the new grades placed before them, and the
    # free places take the new grades in (query, label descending) order.
    lo, hi = float(labels.min()), float(labels.max())
    values = ([hi, lo] if hi != lo else [hi]) if bool(((labels == lo) | (labels == hi)).all()) \
        else sorted(set(labels.tolist()), reverse=True)
    per_query = np.stack([np.bincount(q[labels == v], minlength=nq) for v in values], axis=1)
    before = np.zeros(len(kept) + 1, dtype=np.int64)
    for j, v in enumerate(values):
        at = kept_offsets[:-1] + _count_within(r, v, strict=False, kept=counts)
        before += np.bincount(at, weights=per_query[:, j], minlength=len(kept) + 1
                              ).astype(np.int64)
    new_grade = np.empty(len(kept) + len(labels), dtype=np.float64)
    free = np.ones(len(new_grade), dtype=bool)
    moved = np.arange(len(kept)) + np.cumsum(before)[:len(kept)]
    new_grade[moved] = kept
    free[moved] = False
    new_grade[free] = np.repeat(np.tile(np.asarray(values, dtype=np.float64), nq),
                                per_query.ravel())
    new_offsets = kept_offsets.copy()
    new_offsets[1:] += np.cumsum(per_query.sum(axis=1))
    return new_offsets, new_grade


def _count_within(r: Ranked, v: float, *, strict: bool,
                  kept: dict[tuple[float, bool], np.ndarray]) -> np.ndarray:
    """Ideal grades ``> v`` (``strict``) or ``>= v`` per query, kept in ``kept`` (the
    same join serves every labeling of a run)."""
    key = (float(v), strict)
    if key not in kept:
        g = r.ideal_grade
        mask = g > v if strict else g >= v
        kept[key] = np.bincount(r.ideal_qidx[mask], minlength=r.n_queries).astype(np.int64)
    return kept[key]


class _Worlds:
    """Per-query values of each system under the labelings the verdicts need, each
    computed once (the two per-system labelings are shared by every pair)."""

    def __init__(self, m: Measure, options: EvalOptions, label: float,
                 holes: dict[str, _Holes], common: np.ndarray) -> None:
        self.m, self.options, self.label = m, options, label
        if m.name == "nDCG" and m.get("ideal") == "qrels" and m.cutoff is not None:
            # nDCG@k reads the ideal's top k only: labelings keep the top k exact (an
            # entry removed is a pooled-unjudged grade, which gains 0 as any below it)
            holes = {s: replace(h, base=_ideal_top(h.base, int(m.cutoff)), counts={})
                     for s, h in holes.items()}
        self.holes = holes
        self.common = common
        self.cut = m.k if _window_of(m) is not None else None
        self._compared: dict[str, np.ndarray] = {}
        self._at: dict[str, np.ndarray] = {}
        self._only: dict[tuple[str, str], np.ndarray] = {}
        self._sorted: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._match: dict[tuple[str, str], np.ndarray] = {}
        self._values: dict[tuple[str, float, str | None, float, str | None], np.ndarray] = {}

    def compared(self, s: str) -> np.ndarray:
        """Mask of the holes of ``s`` whose query is compared."""
        if s not in self._compared:
            h = self.holes[s]
            asked = np.isin(h.base.query_ids.astype(str), self.common)  # one per query
            self._compared[s] = asked[h.base.qidx[h.rows]]
        return self._compared[s]

    def at(self, s: str) -> np.ndarray:
        """Rows of the compared queries in the values of ``s``."""
        if s not in self._at:
            self._at[s] = np.searchsorted(self.holes[s].base.query_ids.astype(str),
                                          self.common)
        return self._at[s]

    def only(self, other: str, s: str) -> np.ndarray:
        """Mask of the holes of ``other`` that are not holes of ``s`` (on queries ``s``
        was evaluated on)."""
        if (other, s) not in self._only:
            h, o = self.holes[s], self.holes[other]
            self._only[(other, s)] = (self.match(other, s) < 0) & (h.local[o.gquery] >= 0)
        return self._only[(other, s)]

    def sorted_keys(self, s: str) -> tuple[np.ndarray, np.ndarray]:
        """The hole keys of ``s``, sorted, and the order that sorts them."""
        if s not in self._sorted:
            order = np.argsort(self.holes[s].key)
            self._sorted[s] = (self.holes[s].key[order], order)
        return self._sorted[s]

    def match(self, s: str, other: str) -> np.ndarray:
        """For each hole of ``s``, the index of the same (query, document) among the holes
        of ``other``, -1 when ``other`` did not retrieve it in its window."""
        if (s, other) not in self._match:
            keys, order = self.sorted_keys(other)
            x = self.holes[s].key
            if len(keys):
                at = np.minimum(np.searchsorted(keys, x), len(keys) - 1)
                self._match[(s, other)] = np.where(keys[at] == x, order[at], -1)
            else:
                self._match[(s, other)] = np.full(len(x), -1, dtype=np.int64)
        return self._match[(s, other)]

    def values(self, s: str, own: float, other: str | None = None,
               other_label: float = 0.0, against: str | None = None) -> np.ndarray:
        """Values of ``s`` on the compared queries, its holes graded ``own`` and the
        holes of ``other`` it does not share graded ``other_label``.

        ``against`` (one of the pair): the holes both retrieved are graded the same in
        both systems' worlds, relevant where the system that is not ``against`` ranks
        them strictly higher (least favourable to ``against`` for a measure adding up
        rank-discounted gains), else non-relevant.
        """
        key = (s, own, other, other_label if other is not None else 0.0, against)
        hit = self._values.get(key)
        if hit is not None:
            return hit
        h = self.holes[s]
        row_labels = np.full(len(h.rows), own)
        if other is None:
            extra_q = np.zeros(0, dtype=np.int64)
            extra_grade = np.zeros(0)
        else:
            o = self.holes[other]
            only = self.only(other, s)
            extra_q = h.local[o.gquery[only]]
            extra_grade = o.base.grade[o.rows[only]]
            if against is not None:
                match = self.match(s, other)
                both = np.flatnonzero(match >= 0)
                mine = h.base.pos[h.rows[both]]
                theirs = o.base.pos[o.rows[match[both]]]
                favoured_higher = theirs < mine if s == against else mine < theirs
                row_labels[both] = np.where(favoured_higher, self.label, 0.0)
        world = _labeled(h.base, h.rows, row_labels, extra_q, extra_grade, other_label,
                         condense=self.options.judged_only, cut=self.cut, counts=h.counts)
        v = np.asarray(self.m.family.kernel(world, self.m, self.options), dtype=np.float64)
        out = v[self.at(s)]
        self._values[key] = out
        return out


def _member(x: np.ndarray, sorted_y: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_y)`` for int64 keys, by binary search (no hashing)."""
    if not len(sorted_y):
        return np.zeros(len(x), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_y, x), len(sorted_y) - 1)
    return sorted_y[at] == x


def _monotone(m: Measure, options: EvalOptions) -> bool:
    """The two per-system labelings are the extremes (:data:`MONOTONE_FAMILIES`)."""
    if m.name not in MONOTONE_FAMILIES or options.judged_only:
        return False
    return m.name not in ("CG", "DCG") or m.get("gain") in ("linear", "exp")


def _additive(m: Measure) -> bool:
    """A sum over the window of gains times a weight that does not grow down the
    ranking and is the same for both systems: the shared holes' least favourable labels
    are then found one by one (relevant where the other system ranks them higher)."""
    if m.name == "P":
        return m.cutoff is not None  # set_P divides by each run's own length
    return m.name in ("CG", "DCG", "RBP", "NumRelRet")


class _Tester:
    """The chosen two-sided paired test of per-query differences."""

    def __init__(self, test: str, n_resamples: int, rng: RngLike) -> None:
        self.test, self.n_resamples, self.rng = test, n_resamples, rng

    def pvalue(self, d: np.ndarray) -> float:
        """NaN when undefined: fewer than 2 queries, every difference 0, or a value that
        is not finite (PNR of a query without discordant pairs)."""
        if len(d) < 2 or not d.any() or not np.isfinite(d).all():
            return math.nan
        zeros = np.zeros_like(d)
        if self.test == "t":
            return paired_t_test(zeros, d).pvalue
        if self.test == "wilcoxon":
            return wilcoxon_test(zeros, d).pvalue
        if self.test == "sign":
            return sign_test(zeros, d).pvalue
        if self.test == "randomization":
            return randomization_test(zeros, d, n_resamples=self.n_resamples,
                                      rng=self.rng).pvalue
        return bootstrap_test(zeros, d, n_resamples=self.n_resamples, rng=self.rng).pvalue


def _worst_for(w: str, other: str, worlds: _Worlds, monotone: bool
               ) -> tuple[np.ndarray, np.ndarray]:
    """Per-query values of ``w`` and ``other`` under the labeling least favourable to
    ``w``: its holes non-relevant, the other's relevant (also in ``w``'s qrels), the
    shared ones relevant where ``other`` ranks them higher."""
    g = worlds.label
    if monotone:  # its own holes non-relevant give its lowest value, and the other's highest
        return (worlds.values(w, 0.0, other, g, against=w),
                worlds.values(other, g, w, 0.0, against=w))
    low = np.fmin(worlds.values(w, 0.0, other, g, against=w),
                  worlds.values(w, g, other, g, against=w))
    high = np.fmax(worlds.values(other, g, w, 0.0, against=w),
                   worlds.values(other, 0.0, w, 0.0, against=w))
    return low, high


_p_text = p_text


def _pair_result(a: str, b: str, m: Measure, window: int | None,
                 values: dict[str, np.ndarray], worlds: _Worlds, tester: _Tester,
                 alpha: float, options: EvalOptions, inferred: dict[str, np.ndarray] | None
                 ) -> HolesResult:
    va, vb = values[a], values[b]
    monotone = _monotone(m, options)
    g = worlds.label
    low_a = np.fmin(worlds.values(a, 0.0), worlds.values(a, g))
    high_a = np.fmax(worlds.values(a, 0.0), worlds.values(a, g))
    low_b = np.fmin(worlds.values(b, 0.0), worlds.values(b, g))
    high_b = np.fmax(worlds.values(b, 0.0), worlds.values(b, g))
    ha, hb = worlds.holes[a], worlds.holes[b]
    in_a, in_b = worlds.compared(a), worlds.compared(b)
    key_a, key_b = ha.key[in_a], hb.key[in_b]
    shared = int(_member(key_a, np.sort(key_b)).sum())
    n_holes = len(key_a) + len(key_b) - shared
    exact = monotone and (shared == 0 or _additive(m))

    with np.errstate(invalid="ignore"):  # inf - inf (PNR): NaN, and no test
        d = vb - va
    p = tester.pvalue(d)
    mean_d = float(d.mean()) if len(d) else math.nan
    winner = (b if mean_d > 0 else a) if (not math.isnan(p) and p < alpha) else None
    where = f"in the top {window}" if window is not None else "in the evaluated rankings"

    if n_holes == 0:
        worst_labeling, worst_d, worst_p = "none (no unjudged document)", mean_d, p
        verdict: Verdict = "holds"
        worst_ties = not d.any()
    elif winner is not None:
        loser = a if winner == b else b
        w_low, l_high = _worst_for(winner, loser, worlds, monotone)
        with np.errstate(invalid="ignore"):
            dd = (w_low - l_high) * (1.0 if winner == b else -1.0)  # as b - a
        worst_p = tester.pvalue(dd)
        worst_d = float(dd.mean())
        worst_ties = not dd.any()
        worst_labeling = (f"{winner}'s unjudged non-relevant, {loser}'s relevant, the shared "
                          f"ones relevant where {loser} ranks them higher")
        still = (worst_d > 0) == (winner == b) and worst_d != 0
        verdict = "holds" if (still and not math.isnan(worst_p) and worst_p < alpha) else (
            "depends")
    else:  # no winner as judged: could the labeling most favourable to either make one?
        tried = []
        for favoured, other in ((b, a), (a, b)):
            o_low, f_high = _worst_for(other, favoured, worlds, monotone)
            with np.errstate(invalid="ignore"):
                dd = (f_high - o_low) * (1.0 if favoured == b else -1.0)
            tried.append((float(dd.mean()), tester.pvalue(dd),
                          f"{favoured}'s unjudged relevant, {other}'s non-relevant, the "
                          f"shared ones relevant where {favoured} ranks them higher"))
        # the labeling closest to a verdict: the smaller p-value (an undefined one last)
        worst_d, worst_p, worst_labeling = min(
            tried, key=lambda t: 2.0 if math.isnan(t[1]) else t[1])
        worst_ties = worst_d == 0
        verdict = "depends" if (not math.isnan(worst_p) and worst_p < alpha) else "holds"

    text = _sentence(a, b, str(m), where, n_holes, exact, winner, p, d, verdict,
                     worst_labeling, worst_d, worst_p, worst_ties)
    inf = None if inferred is None else {a: float(np.mean(inferred[a])) if len(inferred[a])
                                         else math.nan,
                                         b: float(np.mean(inferred[b])) if len(inferred[b])
                                         else math.nan}
    batch = {"args": (a, b, worlds.holes[a], worlds.holes[b], in_a, in_b)}
    return HolesResult(
        a, b, str(m), window, len(d), int(in_a.sum()), int(in_b.sum()), shared,
        float(va.mean()) if len(va) else math.nan, float(vb.mean()) if len(vb) else math.nan,
        _means(low_a, high_a), _means(low_b, high_b), tester.test, alpha, p, winner,
        worst_labeling, worst_d, worst_p, verdict, exact, inf, text,
        worlds.common.astype(object), low_a, high_a, low_b, high_b, batch,
        _inferred_name(m) if inf is not None else "")


def _sentence(a: str, b: str, m: str, where: str, n_holes: int, exact: bool,
              winner: str | None, p: float, d: np.ndarray, verdict: str, labeling: str,
              worst_d: float, worst_p: float, worst_ties: bool) -> str:
    """The verdict in words (``worst_d`` is ``b - a`` under ``labeling``)."""
    docs = f"{n_holes:,} unjudged document{'s' if n_holes != 1 else ''} {where}"
    judged = "every query ties" if not d.any() else f"{float(d.mean()):+.2f}, {_p_text(p)}"
    if winner is not None:
        loser = a if winner == b else b
        sign = 1.0 if winner == b else -1.0
        if n_holes == 0:
            return (f"{winner} beats {loser} on {m} ({_p_text(p)}); no unjudged document "
                    f"{where}, so no labeling can change it")
        worst = ("they tie on every query" if worst_ties else
                 f"{winner} − {loser} = {sign * worst_d:+.2f}, {_p_text(worst_p)}")
        if verdict == "holds" and exact:
            return (f"{winner} beats {loser} on {m} for any labeling of the {docs} "
                    f"(least favourable: {worst})")
        if verdict == "holds":
            return (f"{winner} beats {loser} on {m} with the {docs} labeled either way "
                    f"({winner}'s non-relevant and {loser}'s relevant: {worst})")
        return (f"{winner} beats {loser} on {m} as judged ({_p_text(p)}), but the verdict "
                f"depends on {docs}: with {winner}'s non-relevant and {loser}'s relevant, "
                f"{worst}")
    if n_holes == 0:
        return (f"{b} vs {a} on {m}: no significant difference ({judged}); no unjudged "
                f"document {where}")
    if verdict == "holds":
        return (f"{b} vs {a} on {m}: no significant difference ({judged}), "
                + (f"for any labeling of the {docs}" if exact
                   else f"with the {docs} labeled either way"))
    favoured = labeling.split("'s", 1)[0]
    other = a if favoured == b else b
    first, second = (b, a) if worst_d > 0 else (a, b)
    return (f"{b} vs {a} on {m}: no significant difference as judged ({judged}), but the "
            f"verdict depends on the {docs}: with {favoured}'s relevant and {other}'s "
            f"non-relevant, {first} beats {second} by {abs(worst_d):+.2f} "
            f"({_p_text(worst_p)})")


def _means(low: np.ndarray, high: np.ndarray) -> tuple[float, float]:
    if not len(low):
        return (math.nan, math.nan)
    return float(np.nanmean(low)), float(np.nanmean(high))


def _batch_rows(a: str, b: str, ha: _Holes, hb: _Holes, in_a: np.ndarray, in_b: np.ndarray
                ) -> dict[str, Any]:
    """Which holes make the batch, one per distinct (query, document): shown by the
    system ranking it higher (a on ties)."""
    sel = [np.flatnonzero(in_a), np.flatnonzero(in_b)]
    key = np.concatenate([ha.key[sel[0]], hb.key[sel[1]]])
    pos = np.concatenate([ha.base.pos[ha.rows[sel[0]]], hb.base.pos[hb.rows[sel[1]]]]
                         ).astype(np.int64)
    which = np.repeat(np.array([0, 1], dtype=np.int64), [len(sel[0]), len(sel[1])])
    gq = np.concatenate([ha.gquery[sel[0]], hb.gquery[sel[1]]])
    order = np.lexsort((which, pos, key))  # per document: higher rank first, a on ties
    first = np.ones(len(order), dtype=bool)
    first[1:] = key[order][1:] != key[order][:-1]
    pick = order[first]
    pick = pick[np.lexsort((pos[pick], gq[pick]))]  # by query, then position
    index = np.concatenate(sel)[pick]
    return {"systems": (a, b), "holes": (ha, hb), "which": which[pick], "index": index,
            "position": pos[pick]}


def _inferred_name(m: Measure) -> str:
    """The inferred estimate of ``m`` (``""``: none)."""
    cut = f"@{m.k}" if m.cutoff is not None else ""
    if m.name == "AP":
        return "infAP" + cut
    if m.name == "nDCG" and m.get("ideal") != "run":
        return "infNDCG" + cut
    return ""


def _inferred(m: Measure, options: EvalOptions, full: dict[str, Ranked], common: np.ndarray
              ) -> dict[str, np.ndarray]:
    out = {}
    estimator = inferred_ap if m.name == "AP" else inferred_ndcg
    for s, r in full.items():
        v = estimator(r, m, options=options)
        out[s] = v[np.searchsorted(r.query_ids.astype(str), common)]
    return out
