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
from ..measures import FAMILIES, Measure, parse_measures
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
from .labelings import Holes, Worlds, run_windows, window_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BATCH_COLUMNS", "MONOTONE_FAMILIES", "PREFIX_FAMILIES", "HolesResult",
           "inferred_ap", "inferred_ndcg", "judgment_debt", "judgment_holes"]

PREFIX_FAMILIES = frozenset(n for n, f in FAMILIES.items() if f.prefix)
"""Families whose value at cutoff k reads only the top k of the ranking (and counts
from the qrels), as each declares (:attr:`~ireval_core.measures.registry.Family.prefix`):
their holes are the unjudged documents of the top k. nDCG with ``ideal=run`` reads the
whole ranking (its ideal is built from it) and is then read whole. Any other family reads
the whole evaluated ranking, so its holes are every unjudged document of it."""

MONOTONE_FAMILIES = frozenset(n for n, f in FAMILIES.items() if f.monotone)
"""Families whose value never decreases when one of the system's own documents gets a
higher grade and that read no other judgment, as each declares
(:attr:`~ireval_core.measures.registry.Family.monotone`; with the linear or exp gain, and
without judged-only rankings): labeling every hole non-relevant, then relevant, gives the
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

    windows: dict[tuple[str, int | None], Holes] = {}
    out: list[HolesResult] = []
    for m in specs:
        window = window_of(m)
        if (systems[0], window) not in windows:
            windows.update(run_windows(full, by_name, window, options.judged_only, gqueries))
        label = _relevant_label(m, options, qrels)
        common, values = aligned_scores(res, m, systems)
        common = common.astype(str)
        worlds = Worlds(m, options, label, {s: windows[(s, window)] for s in systems},
                         common)
        inferred = _inferred(m, options, full, common) if (
            _inferred_name(m) and bool((qrels.grade < 0).any())) else None
        for a, b in pairs:
            out.append(_pair_result(a, b, m, window, values, worlds, tester, alpha,
                                    options, inferred))
    return out


def _relevant_label(m: Measure, options: EvalOptions, qrels: Qrels) -> float:
    """The grade a relevant hole gets: the relevance level (binary measures), the top
    grade of the qrels (graded measures; the relevance level if no grade is positive)."""
    t = m.threshold(options)
    if m.family.binary:
        return t
    top = float(qrels.grade.max()) if len(qrels.grade) else 0.0
    return top if top > 0 else max(t, 1.0)


def _member(x: np.ndarray, sorted_y: np.ndarray) -> np.ndarray:
    """``np.isin(x, sorted_y)`` for int64 keys, by binary search (no hashing)."""
    if not len(sorted_y):
        return np.zeros(len(x), dtype=bool)
    at = np.minimum(np.searchsorted(sorted_y, x), len(sorted_y) - 1)
    return sorted_y[at] == x


def _monotone(m: Measure, options: EvalOptions) -> bool:
    """The two per-system labelings are the extremes (:data:`MONOTONE_FAMILIES`)."""
    if not m.family.monotone or options.judged_only:
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


def _worst_for(w: str, other: str, worlds: Worlds, monotone: bool
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
                 values: dict[str, np.ndarray], worlds: Worlds, tester: _Tester,
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


def _batch_rows(a: str, b: str, ha: Holes, hb: Holes, in_a: np.ndarray, in_b: np.ndarray
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
