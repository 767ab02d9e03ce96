"""One ranked list explained: the list taken from a person or a real query, its number
from the real kernels, its steps from the family's explainer (:mod:`~.steps`)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..data import Qrels, Run
from ..errors import FormatError, invalid_parameter
from ..evaluate import evaluate
from ..measures import Measure, parse_measure
from ..options import EvalOptions, options_or_default
from ..params import FINITE, any_of, check
from ..queries import judgments, ranking

if TYPE_CHECKING:
    pass

from .steps import EXPLAINED_FAMILIES, EXPLAINERS, Context, plural

__all__ = ["MEASURE_CHOICES", "QUERY", "Explanation", "LabList", "explain", "lab_data",
           "parse_grades", "query_list"]

QUERY = "q"  # the query of a single explained list
SCALE_QUERY = "_scale"  # holds the top grade of a real query's qrels (ERR's default g_max)

MEASURE_CHOICES: tuple[str, ...] = (
    "P@5", "P@10", "R@10", "AP", "RR", "Success@5", "Rprec", "bpref", "RBP",
    "CG@10", "DCG@10", "DCG(discount=jk)@10", "nDCG@10", "nDCG(ideal=run)@10",
    "nDCG(gain=exp)@10", "ERR@10", "AUC", "PNR")
"""Measures offered by the lab's measure picker (any spec of :data:`EXPLAINED_FAMILIES`
can be typed)."""


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True, eq=False)
class Explanation:
    """One measure on one ranked list, with the steps that lead to its value.

    Attributes
    ----------
    measure : str
        The measure's canonical spec (``"nDCG@6"``).
    value : float
        The value computed by :func:`ireval_core.evaluate` (the kernel): NaN when the
        measure is undefined for the list (AUC without both classes, nDCG without a
        relevant document under ``idcg_zero="drop"``, PNR without a counted pair) or
        when the query has no judgment at all (trec_eval does not evaluate it).
    steps : pandas.DataFrame
        One row per rank the measure looks at: ``rank``, ``grade`` and, wherever they
        apply, ``gain``, ``discount``, ``contribution`` (what the rank adds to the
        value) and ``running`` (the value so far); family-specific columns besides
        (``relevant``, ``precision``, ``stop``, ``reach``, ...). ``contribution`` sums
        to ``value`` and the last ``running`` equals it (PNR: ``running`` is the
        ratio of the counts so far). A fresh frame for every call of :func:`explain`.
    formula : str
        The formula in LaTeX (for ``st.latex``), with this list's numbers put in.
    text : str
        One paragraph in words.
    definition : str
        The registry's definition of the measure under the options.
    quantities : tuple of (str, float)
        Named intermediate numbers (``R``, ``N``, ``DCG@6``, ``IDCG@6``, ``C``, ``D``...).
    ideal : pandas.DataFrame or None
        nDCG only: the ideal ranking with its own gain, discount, contribution and
        running (IDCG so far) columns.
    """

    measure: str
    value: float
    steps: pd.DataFrame
    formula: str
    text: str
    definition: str
    quantities: tuple[tuple[str, float], ...] = ()
    ideal: pd.DataFrame | None = None

    def quantity(self, name: str) -> float:
        """The intermediate number called ``name`` (``KeyError`` when there is none)."""
        for key, value in self.quantities:
            if key == name:
                return value
        raise KeyError(name)


@dataclass(frozen=True)
class LabList:
    """A real query's list as the lab takes it (see :func:`query_list`)."""

    grades: tuple[float, ...]
    unretrieved: tuple[float, ...]
    scores: tuple[float, ...]
    top_grade: float


# ----------------------------------------------------------------------------- the input


def _invalid(param: str, constraint: str, got: object, function: str = "explain",
             error: type[Exception] = ValueError) -> Exception:
    return invalid_parameter(param, function, constraint, got, error=error)


_TOP_GRADE = any_of(None, FINITE)


def _as_grades(values: object, param: str, *, allow_nan: bool) -> np.ndarray:
    constraint = ("a 1-D sequence of grades (numbers; NaN = unjudged)" if allow_nan
                  else "a 1-D sequence of finite grades")
    if isinstance(values, str | bytes):
        raise _invalid(param, constraint, values, error=TypeError)
    try:
        out = np.array(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise _invalid(param, constraint, values, error=TypeError) from None
    if out.ndim != 1 or np.isinf(out).any() or (not allow_nan and np.isnan(out).any()):
        raise _invalid(param, constraint, values)
    return out


def parse_grades(text: str, *, source: str = "grades",
                 allow_unjudged: bool = True) -> tuple[float, ...]:
    """Grades typed by a person: numbers separated by spaces or commas.

    ``-``, ``?`` or ``nan`` stand for an unjudged document (when ``allow_unjudged``);
    a negative number is a pooled but unjudged one.

    Raises :class:`~ireval_core.errors.FormatError` naming the item at fault
    (``source`` is the name shown in the message).

    Examples
    --------
    >>> parse_grades("3 2 - 0, -1")
    (3.0, 2.0, nan, 0.0, -1.0)
    >>> parse_grades("3 x 1")
    Traceback (most recent call last):
    ...
    ireval_core.errors.FormatError: grades: item 2 is not a grade (a number, or - for unjudged): 'x'
    """
    out: list[float] = []
    items = text.replace(",", " ").split()
    expected = "a number, or - for unjudged" if allow_unjudged else "a number"
    for i, item in enumerate(items, start=1):
        if item.lower() in ("-", "?", "nan"):
            if not allow_unjudged:
                raise FormatError(f"item {i} is not a grade ({expected}): every document "
                                  "here is judged", source=source, text=item)
            out.append(math.nan)
            continue
        try:
            value = float(item)
        except ValueError:
            raise FormatError(f"item {i} is not a grade ({expected})", source=source,
                              text=item) from None
        if not math.isfinite(value):
            raise FormatError(f"item {i} is not a grade ({expected})", source=source,
                              text=item)
        out.append(value)
    return tuple(out)


def lab_data(lists: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
              queries: Sequence[str], *, top_grade: float | None = None) -> tuple[Qrels, Run]:
    """In-memory qrels and run of ranked lists ``(grades, unretrieved, scores)``.

    The document at rank i of an n-document list is ``d{i}`` with score n + 1 - i
    (so the ranking is the list), unretrieved judged documents are ``u1, u2, ...``.
    With explicit scores (ties allowed), documents are named so that trec_eval's tie
    order (document id descending) keeps the list's order. ``top_grade`` adds one
    judgment in a query of its own, so that the qrels' highest grade is at least it.
    """
    qq: list[str] = []
    qd: list[str] = []
    qg: list[float] = []
    rq: list[str] = []
    rd: list[str] = []
    rs: list[float] = []
    for query, (grades, unretrieved, scores) in zip(queries, lists, strict=True):
        n = len(grades)
        if scores is None:
            docs = [f"d{i}" for i in range(1, n + 1)]
            score = np.arange(n, 0, -1, dtype=np.float64)
        else:
            width = len(str(n))
            docs = [f"t{n + 1 - i:0{width}d}" for i in range(1, n + 1)]
            score = scores
        rq += [query] * n
        rd += docs
        rs += score.tolist()
        judged = ~np.isnan(grades)
        qq += [query] * int(judged.sum())
        qd += [d for d, j in zip(docs, judged, strict=True) if j]
        qg += grades[judged].tolist()
        qq += [query] * len(unretrieved)
        qd += [f"u{i}" for i in range(1, len(unretrieved) + 1)]
        qg += unretrieved.tolist()
    if top_grade is not None:
        qq.append(SCALE_QUERY)
        qd.append("top")
        qg.append(float(top_grade))
    qrels = Qrels.from_arrays(qq, qd, qg, source="lab qrels")
    return qrels, Run.from_arrays(rq, rd, rs, name="lab", source="lab")


# ----------------------------------------------------------------------------- explain


def explain(grades: Sequence[float] | np.ndarray, measure: str | Measure, *,
            unretrieved: Sequence[float] | np.ndarray = (),
            options: EvalOptions | None = None,
            scores: Sequence[float] | np.ndarray | None = None,
            top_grade: float | None = None) -> Explanation:
    r"""Evaluate one ranked list for one measure, step by step.

    Parameters
    ----------
    grades : sequence of float
        The ranked list: the grade of the document at each rank, best rank first
        (at least one). NaN = unjudged (not in the qrels); negative = pooled but
        unjudged.
    measure : str or Measure
        A measure spec of one of :data:`EXPLAINED_FAMILIES` (``"P@5"``, ``"AP"``,
        ``"nDCG(gain=exp)@10"``, ``"nDCG(ideal=run)@6"``, ``"ERR@10"``, ``"bpref"``,
        ``"DCG(discount=jk)@6"``, ``"PNR"``, ``"AUC"``...).
    unretrieved : sequence of float, default ()
        Grades of the query's judged documents that the list does not contain
        (finite; negative = pooled but unjudged). They count in R, in bpref's N and in
        the ideal ranking of nDCG.
    options : EvalOptions, optional
        The evaluation options (relevance level, depth cut, judged-only rankings,
        IDCG = 0 policy); default: trec_eval's defaults.
    scores : sequence of float, optional
        The list's scores, non-increasing (ties allowed): AUC and PNR count equal
        scores as ties. Default: distinct scores n, ..., 1.
    top_grade : float, optional
        The highest grade of the whole qrels the list comes from, ERR's default
        g_max (a real query's qrels hold other queries); default: the highest grade
        of this list and ``unretrieved``.

    Returns
    -------
    Explanation
        ``value`` from :func:`ireval_core.evaluate` on in-memory data built from the
        list; ``steps``, ``formula`` and ``text`` explain it.

    Raises
    ------
    ValueError, TypeError
        For an invalid parameter (the message names it), and
        :class:`~ireval_core.errors.UnknownMeasureError` for an unknown measure.

    Examples
    --------
    Seed 004: grades 3, 2, 3, 0, 1, 2, and two more judged documents (grades 3 and 2)
    that the list does not contain.

    >>> ex = explain([3, 2, 3, 0, 1, 2], "nDCG@6", unretrieved=[3, 2])
    >>> round(ex.quantity("DCG@6"), 3), round(ex.quantity("IDCG@6"), 3), round(ex.value, 3)
    (6.861, 8.74, 0.785)
    >>> round(explain([3, 2, 3, 0, 1, 2], "nDCG(ideal=run)@6", unretrieved=[3, 2]).value, 3)
    0.961
    >>> ex.steps.columns.tolist()
    ['rank', 'grade', 'gain', 'discount', 'dcg', 'contribution', 'running']
    """
    options = options_or_default(options, "explain")
    m = parse_measure(measure) if isinstance(measure, str | Measure) else None
    if m is None:
        raise _invalid("measure", "a measure spec (str or Measure)", measure, error=TypeError)
    if m.name not in EXPLAINERS:
        raise _invalid("measure", "a measure of " + ", ".join(EXPLAINED_FAMILIES), str(m))
    g_full = _as_grades(grades, "grades", allow_nan=True)
    if g_full.size == 0:
        raise _invalid("grades", "a non-empty sequence of grades", grades)
    unret = _as_grades(unretrieved, "unretrieved", allow_nan=False)
    s_full: np.ndarray | None = None
    if scores is not None:
        s_full = _as_grades(scores, "scores", allow_nan=False)
        if len(s_full) != len(g_full) or (np.diff(s_full) > 0).any():
            raise _invalid("scores", f"{len(g_full)} non-increasing finite scores (one per "
                           "grade)", scores)
    top_grade = check(top_grade, "top_grade", "explain", _TOP_GRADE)

    # the number: the real kernel on in-memory qrels and run
    qrels, run = lab_data([(g_full, unret, s_full)], [QUERY], top_grade=top_grade)
    per_query = evaluate(qrels, run, [m], options=options).per_query("lab", m)
    value = float(per_query.get(QUERY, math.nan))

    # the explanation: the list as the measure sees it, then the family's steps
    score = np.arange(len(g_full), 0, -1, dtype=np.float64) if s_full is None else s_full
    depth = len(g_full) if options.depth is None else min(options.depth, len(g_full))
    g, s = g_full[:depth], score[:depth]
    dropped = 0
    if options.judged_only:
        keep = g >= 0
        dropped = int(np.count_nonzero(~keep))
        g, s = g[keep], s[keep]
    judged = np.concatenate((g_full[~np.isnan(g_full)], unret))
    ctx = Context(m, options, m.threshold(options), g, s, judged, len(g_full),
               len(g_full) - depth, dropped, None if top_grade is None else float(top_grade))
    parts = EXPLAINERS[m.name](ctx)
    text = _preamble(ctx) + parts.text
    if judged.size == 0:
        text = ("The query has no judgment at all: trec_eval does not evaluate it, so there "
                "is no value (it is in no mean). " + text)
    return Explanation(str(m), value, parts.steps, parts.formula, text,
                       m.definition(options), parts.quantities, parts.ideal)


def _preamble(c: Context) -> str:
    """What the options did to the list, in words (empty when nothing)."""
    out = ""
    if c.n_cut:
        out += (f"The depth cut keeps the top {c.options.depth} of the "
                f"{c.n_listed} documents. ")
    if c.n_dropped:
        out += (f"Judged-only evaluation removes {plural(c.n_dropped, 'unjudged document')} "
                "and re-ranks the rest. ")
    return out


# ----------------------------------------------------------------------------- real queries


def query_list(qrels: Qrels, run: Run, query_id: str) -> LabList:
    """A real query's ranked list as :func:`explain` takes it.

    The whole ranking (no depth cut, unjudged documents kept: :func:`explain` applies
    the options itself), its scores, the grades of the query's judged documents the
    run does not rank, and the highest grade of the qrels (ERR's default g_max).

    Examples
    --------
    >>> qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": 1}, "q2": {"z": 3}})
    >>> run = Run.from_dict({"q1": {"a": 0.5, "x": 0.9, "b": 0.1}}, name="bm25")
    >>> query_list(qrels, run, "q1")
    LabList(grades=(nan, 2.0, 0.0), unretrieved=(1.0,), scores=(0.9, 0.5, 0.1), top_grade=3.0)
    """
    table = ranking(qrels, run, query_id, options=EvalOptions())
    ranked = set(table["docid"])
    rest = tuple(float(g) for d, g in judgments(qrels, query_id).items() if d not in ranked)
    top = float(qrels.grade.max()) if len(qrels.grade) else 0.0
    return LabList(tuple(table["grade"].astype(float).tolist()), rest,
                   tuple(table["score"].astype(float).tolist()), top)
