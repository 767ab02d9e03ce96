r"""The metric lab: one ranked list of grades, evaluated step by step (issue 10).

For teaching in meetings: a ranked list (a grade per rank, typed or taken from a
real query) is explained rank by rank for one measure, with a table of rank,
grade, gain, discount, contribution and running total, the formula in LaTeX and
one paragraph in words (:func:`explain`). The number itself always comes from
the real kernels: :func:`explain` builds in-memory :class:`~ireval_core.data.Qrels`
and :class:`~ireval_core.data.Run` from the list and calls
:func:`ireval_core.evaluate`; the steps are the explanation, and the tests check
that they add up to the kernel's number.

The seeds' worked examples are :data:`PRESETS`, each with the number the seed
publishes; :func:`run_preset` recomputes them (:class:`PresetResult`).

Conventions of a list: ``grades[i]`` is the grade of the document at rank
``i + 1``; NaN = not in the qrels (unjudged); a negative grade = pooled but not
judged. ``unretrieved`` are the grades of the query's judged documents that the
list does not contain: they count in R (recall, AP, bpref), in N (bpref) and in
the ideal ranking of nDCG.

>>> ex = explain([1, 0, 1, 0, 0, 1], "AP")
>>> round(ex.value, 4)
0.7222
>>> ex.steps["precision"].round(4).tolist()
[1.0, 0.5, 0.6667, 0.5, 0.4, 0.5]
>>> ex.steps["contribution"].round(4).tolist()
[0.3333, 0.0, 0.2222, 0.0, 0.0, 0.1667]
>>> ex.text.split(". ")[1]
'The relevant ones in the list are at ranks 1, 3, 6; precision at those ranks: 1, 0.6667, 0.5'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from .data import Qrels, Run
from .errors import FormatError, invalid_parameter
from .evaluate import evaluate
from .measures import Measure, parse_measure
from .measures.gain import discounts, err_reach, err_stop, gains, rbp_weights
from .options import EvalOptions, options_or_default
from .params import FINITE, InstanceOf, Options, any_of, check
from .queries import judgments, ranking

if TYPE_CHECKING:
    from .stats import TestResult

__all__ = ["EXPLAINED_FAMILIES", "MEASURE_CHOICES", "PRESETS", "Explanation", "LabList",
           "LabQuery", "Preset", "PresetResult", "Published", "explain", "parse_grades",
           "preset", "query_list", "run_preset"]

_QUERY = "q"  # the query of a single explained list
_SCALE_QUERY = "_scale"  # holds the top grade of a real query's qrels (ERR's default g_max)

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


def _lab_data(lists: Sequence[tuple[np.ndarray, np.ndarray, np.ndarray | None]],
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
        qq.append(_SCALE_QUERY)
        qd.append("top")
        qg.append(float(top_grade))
    qrels = Qrels.from_arrays(qq, qd, qg, source="lab qrels")
    return qrels, Run.from_arrays(rq, rd, rs, name="lab", source="lab")


# ----------------------------------------------------------------------------- the steps


@dataclass(frozen=True, eq=False)
class _Ctx:
    """The list as the measure sees it, and what the explainers need."""

    m: Measure
    options: EvalOptions
    t: float  # relevance threshold in force
    grade: np.ndarray  # after the depth cut and judged-only removal
    score: np.ndarray
    judged: np.ndarray  # every judged grade of the query (list and unretrieved)
    n_listed: int  # documents in the list as given
    n_cut: int  # removed by the depth cut
    n_dropped: int  # unjudged removed by judged-only evaluation
    top_grade: float | None

    @property
    def n(self) -> int:
        return len(self.grade)

    @property
    def k(self) -> int | None:
        return self.m.k

    def top(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Ranks, grades and scores within the cutoff."""
        n = self.n if self.k is None else min(self.k, self.n)
        return np.arange(1, n + 1, dtype=np.int64), self.grade[:n], self.score[:n]

    def relevant(self, g: np.ndarray) -> np.ndarray:
        return np.asarray(g >= self.t)  # NaN: False

    def nonrelevant(self, g: np.ndarray) -> np.ndarray:
        return np.asarray((g >= 0) & (g < self.t))

    @property
    def n_rel(self) -> int:
        return int(np.count_nonzero(self.judged >= self.t))

    @property
    def n_nonrel(self) -> int:
        return int(np.count_nonzero(self.nonrelevant(self.judged)))

    @property
    def at_k(self) -> str:
        """``@k`` or nothing."""
        return "" if self.k is None else f"@{self.k}"

    @property
    def rel_words(self) -> str:
        return f"grade ≥ {_num(self.t)}"

    def unjudged_note(self, g: np.ndarray) -> str:
        """A sentence on unjudged documents among ``g``, when there are any."""
        n = int(np.count_nonzero(np.isnan(g) | (g < 0)))
        if not n:
            return ""
        verb = "counts" if n == 1 else "count"
        return (f" {_count(n, 'unjudged document')} (not in the qrels, or pooled but "
                f"unjudged) {verb} as non-relevant.")


@dataclass(frozen=True, eq=False)
class _Parts:
    steps: pd.DataFrame
    formula: str
    text: str
    quantities: tuple[tuple[str, float], ...] = ()
    ideal: pd.DataFrame | None = None


def _num(x: float, digits: int = 4) -> str:
    """A number as people write it: ``2`` for 2.0, else at most ``digits`` decimals."""
    x = float(x)
    if math.isnan(x):
        return "undefined"
    if math.isinf(x):
        return "∞" if x > 0 else "-∞"
    if x.is_integer() and abs(x) < 1e15:
        return str(int(x))
    text = f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _tex(x: float, digits: int = 4) -> str:
    text = _num(x, digits)
    return {"undefined": r"\text{undefined}", "∞": r"\infty", "-∞": r"-\infty"}.get(text, text)


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _ranks(ranks: np.ndarray) -> str:
    shown = [str(int(r)) for r in ranks[:12]]
    return ", ".join(shown) + (", ..." if len(ranks) > 12 else "")


def _terms(terms: list[str], limit: int = 10) -> str:
    """LaTeX terms joined by +, elided in the middle when there are many."""
    if len(terms) > limit:
        terms = terms[: limit - 2] + [r"\cdots", terms[-1]]
    return " + ".join(terms)


def _frame(**columns: object) -> pd.DataFrame:
    return pd.DataFrame(columns)


def _running(contribution: np.ndarray) -> np.ndarray:
    return np.cumsum(contribution) if contribution.size else contribution.astype(np.float64)


# ----------------------------------------------------------------- binary, cutoff measures


def _explain_precision(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    hits = int(rel.sum())
    denom = c.k if c.k is not None else c.n
    contribution = rel / denom if denom else np.zeros(len(g))
    steps = _frame(rank=rank, grade=g, relevant=rel, contribution=contribution,
                   running=_running(contribution))
    value = hits / denom if denom else 0.0
    if c.k is not None:
        formula = (rf"\mathrm{{P}}@{c.k} = \frac{{1}}{{{c.k}}}\sum_{{i=1}}^{{{c.k}}}"
                   rf"\mathrm{{rel}}_i = \frac{{{hits}}}{{{c.k}}} = {_tex(value)}")
        short = ""
        if c.n < c.k:
            short = (f" The list has only {_count(c.n, 'document')}: the missing ranks count "
                     f"as non-relevant, so the denominator stays {c.k}.")
        text = (f"{hits} of the top {c.k} documents are relevant ({c.rel_words})."
                f"{short}{c.unjudged_note(g)} Each relevant rank adds 1/{c.k}: "
                f"P@{c.k} = {hits}/{c.k} = {_num(value)}.")
    else:
        formula = (rf"\mathrm{{P}} = \frac{{1}}{{n}}\sum_{{i=1}}^{{n}}\mathrm{{rel}}_i = "
                   rf"\frac{{{hits}}}{{{c.n}}} = {_tex(value)}")
        text = (f"Without a cutoff, P is over the whole list (set precision): {hits} of the "
                f"{_count(c.n, 'retrieved document')} are relevant ({c.rel_words}), "
                f"P = {_num(value)}.{c.unjudged_note(g)}")
    return _Parts(steps, formula, text, (("relevant retrieved", float(hits)),))


def _explain_recall(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    hits, big_r = int(rel.sum()), c.n_rel
    contribution = rel / big_r if big_r else np.zeros(len(g))
    steps = _frame(rank=rank, grade=g, relevant=rel, contribution=contribution,
                   running=_running(contribution))
    value = hits / big_r if big_r else 0.0
    name = f"R{c.at_k}"
    top = "the list" if c.k is None else f"the top {c.k}"
    formula = (rf"\mathrm{{R}}{c.at_k} = \frac{{1}}{{R}}\sum_{{i \le {c.k or 'n'}}}"
               rf"\mathrm{{rel}}_i = \frac{{{hits}}}{{{big_r}}} = {_tex(value)}")
    if big_r:
        text = (f"The query has R = {big_r} relevant documents ({c.rel_words}) in its "
                f"judgments, retrieved or not. {hits} of them are in {top}: "
                f"{name} = {hits}/{big_r} = {_num(value)}. Each relevant rank adds 1/R; a "
                "relevant document never retrieved (or cut by the depth) adds nothing but "
                "still counts in R.")
    else:
        text = (f"The query has no relevant document ({c.rel_words}) in its judgments: "
                f"{name} is 0 by convention (trec_eval).")
    return _Parts(steps, formula, text, (("R", float(big_r)),))


def _explain_success(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    contribution = np.zeros(len(g))
    if rel.any():
        contribution[int(np.argmax(rel))] = 1.0
    steps = _frame(rank=rank, grade=g, relevant=rel, contribution=contribution,
                   running=_running(contribution))
    value = float(rel.any())
    name = f"Success{c.at_k}"
    formula = (rf"\mathrm{{Success}}{c.at_k} = [\exists\, i \le {c.k or 'n'}: "
               rf"\mathrm{{rel}}_i] = {_tex(value)}")
    where = (f"the first is at rank {int(rank[rel][0])}" if rel.any()
             else "there is none")
    text = (f"1 when a relevant document ({c.rel_words}) is in "
            f"{'the list' if c.k is None else f'the top {c.k}'}, else 0: {where}, so "
            f"{name} = {_num(value)}.")
    return _Parts(steps, formula, text)


def _explain_ap(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    big_r = c.n_rel
    hits = np.cumsum(rel)
    precision = hits / rank if len(rank) else np.zeros(0)
    weighted = np.where(rel, precision, 0.0)
    contribution = weighted / big_r if big_r else np.zeros(len(g))
    steps = _frame(rank=rank, grade=g, relevant=rel, hits=hits, precision=precision,
                   contribution=contribution,
                   running=np.cumsum(weighted) / big_r if big_r else np.zeros(len(g)))
    value = float(weighted.sum() / big_r) if big_r else 0.0
    name = f"AP{c.at_k}"
    fractions = [rf"\frac{{{int(h)}}}{{{int(r)}}}" for h, r in zip(hits[rel], rank[rel],
                                                                   strict=True)]
    inner = rf"\left({_terms(fractions)}\right)" if fractions else "0"
    within = "" if c.k is None else rf"\le {c.k}"
    formula = (rf"\mathrm{{AP}}{c.at_k} = \frac{{1}}{{R}}\sum_{{i{within}}}"
               rf"\mathrm{{rel}}_i\,\mathrm{{P}}@i = \frac{{1}}{{{big_r}}}{inner} = "
               rf"{_tex(value)}")
    if not big_r:
        text = (f"The query has no relevant document ({c.rel_words}) in its judgments: "
                f"{name} is 0 by convention (trec_eval).")
    elif not rel.any():
        text = (f"R = {big_r} relevant documents ({c.rel_words}), none of them in "
                f"{'the list' if c.k is None else f'the top {c.k}'}: {name} = 0.")
    else:
        precisions = ", ".join(_num(p) for p in precision[rel][:12])
        text = (f"R = {big_r} relevant documents ({c.rel_words}) in the judgments. The "
                f"relevant ones in {'the list' if c.k is None else f'the top {c.k}'} are at "
                f"ranks {_ranks(rank[rel])}; precision at those ranks: {precisions}"
                f"{', ...' if rel.sum() > 12 else ''}. Their sum {_num(weighted.sum())} "
                f"divided by R = {big_r} gives {name} = {_num(value)}. A relevant document "
                "that is not retrieved adds 0 but still counts in R."
                f"{c.unjudged_note(g)}")
    return _Parts(steps, formula, text, (("R", float(big_r)),))


def _explain_rr(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    contribution = np.zeros(len(g))
    first = int(rank[rel][0]) if rel.any() else 0
    if first:
        contribution[first - 1] = 1.0 / first
    steps = _frame(rank=rank, grade=g, relevant=rel, contribution=contribution,
                   running=_running(contribution))
    name = f"RR{c.at_k}"
    if first:
        formula = (rf"\mathrm{{RR}}{c.at_k} = \frac{{1}}{{\min\{{i : \mathrm{{rel}}_i\}}}} = "
                   rf"\frac{{1}}{{{first}}} = {_tex(1.0 / first)}")
        text = (f"The first relevant document ({c.rel_words}) is at rank {first}: "
                f"{name} = 1/{first} = {_num(1.0 / first)}. Later relevant documents do not "
                "count.")
    else:
        formula = rf"\mathrm{{RR}}{c.at_k} = 0 \quad (\text{{no relevant document}})"
        text = (f"No relevant document ({c.rel_words}) in "
                f"{'the list' if c.k is None else f'the top {c.k}'}: {name} = 0.")
    return _Parts(steps, formula, text)


def _explain_rprec(c: _Ctx) -> _Parts:
    big_r = c.n_rel
    n = min(big_r, c.n)
    rank, g = np.arange(1, n + 1, dtype=np.int64), c.grade[:n]
    rel = c.relevant(g)
    hits = int(rel.sum())
    contribution = rel / big_r if big_r else np.zeros(n)
    steps = _frame(rank=rank, grade=g, relevant=rel, contribution=contribution,
                   running=_running(contribution))
    value = hits / big_r if big_r else 0.0
    formula = (rf"\mathrm{{Rprec}} = \frac{{1}}{{R}}\sum_{{i=1}}^{{R}}\mathrm{{rel}}_i = "
               rf"\frac{{{hits}}}{{{big_r}}} = {_tex(value)}")
    text = (f"Precision at rank R, R = {big_r} relevant documents ({c.rel_words}) in the "
            f"judgments: {hits} of the top {big_r} are relevant, Rprec = {_num(value)}."
            if big_r else f"No relevant document ({c.rel_words}): Rprec = 0.")
    return _Parts(steps, formula, text, (("R", float(big_r)),))


def _explain_bpref(c: _Ctx) -> _Parts:
    g = c.grade
    rank = np.arange(1, c.n + 1, dtype=np.int64)
    rel, nonrel = c.relevant(g), c.nonrelevant(g)
    big_r, big_n = c.n_rel, c.n_nonrel
    above = np.cumsum(nonrel) - nonrel  # judged non-relevant ranked above
    original = c.m.get("form") == "original"
    denom = big_r if original else min(big_n, big_r)
    penalty = np.minimum(above, big_r) / denom if denom else np.zeros(c.n)
    term = np.where(above > 0, 1.0 - penalty, 1.0)
    weighted = np.where(rel, term, 0.0)
    contribution = weighted / big_r if big_r else np.zeros(c.n)
    steps = _frame(rank=rank, grade=g, relevant=rel, nonrelevant=nonrel,
                   **{"non-relevant above": np.where(rel, above, 0)},
                   contribution=contribution,
                   running=np.cumsum(weighted) / big_r if big_r else np.zeros(c.n))
    value = float(weighted.sum() / big_r) if big_r else 0.0
    den_tex = "R" if original else r"\min(N, R)"
    formula = (rf"\mathrm{{bpref}} = \frac{{1}}{{R}}\sum_{{r\ \mathrm{{relevant}}}}\left(1 - "
               rf"\frac{{\min(n_r, R)}}{{{den_tex}}}\right),\quad R = {big_r},\ N = {big_n}"
               rf"\ \Rightarrow\ {_tex(value)}")
    if big_r:
        text = (f"R = {big_r} relevant ({c.rel_words}) and N = {big_n} judged non-relevant "
                f"documents in the judgments. Each retrieved relevant document adds "
                f"(1 − min(n_r, R) / {'R' if original else 'min(N, R)'}) / R, where n_r counts "
                "the judged non-relevant documents ranked above it"
                + ("" if original else " (trec_eval's denominator min(N, R); "
                   "form=original divides by R)")
                + ". Unjudged documents are skipped: they are neither relevant nor judged "
                f"non-relevant. bpref = {_num(value)}.")
    else:
        text = f"No relevant document ({c.rel_words}): bpref = 0."
    return _Parts(steps, formula, text, (("R", float(big_r)), ("N", float(big_n))))


def _explain_rbp(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    p = c.m.number("p")
    weight = rbp_weights(rank, p)
    contribution = (1.0 - p) * np.where(rel, weight, 0.0)
    steps = _frame(rank=rank, grade=g, relevant=rel, discount=weight,
                   contribution=contribution, running=_running(contribution))
    value = float(contribution.sum())
    formula = (rf"\mathrm{{RBP}}{c.at_k} = (1-p)\sum_{{i}}\mathrm{{rel}}_i\,p^{{i-1}},\quad "
               rf"p = {_tex(p)}\ \Rightarrow\ {_tex(value)}")
    text = (f"A user reads rank 1, and goes on to the next rank with probability p = {_num(p)}: "
            f"rank i is read with probability p^(i−1) (the discount column). Each relevant "
            f"document ({c.rel_words}) adds (1 − p)·p^(i−1); RBP{c.at_k} = {_num(value)}.")
    return _Parts(steps, formula, text)


# ----------------------------------------------------------------- graded measures


# Gains, discounts, ERR's stop and reach probabilities and RBP's weights are the measures'
# own (ireval_core.measures.gain): a number shown in a step is the number the kernel
# adds up, by construction.

_GAIN_WORDS = {"linear": "gain = grade", "exp": "gain = 2^grade − 1"}
_GAIN_TEX = {"linear": r"g_i", "exp": r"(2^{g_i} - 1)"}
_DISCOUNT_WORDS = {"log2": "discount = 1 / log2(rank + 1)",
                   "jk": "discount = 1 at rank 1, then 1 / log2(rank) (Järvelin–Kekäläinen)"}
_DISCOUNT_TEX = {"log2": r"\frac{1}{\log_2(i+1)}", "jk": r"\frac{1}{\max(1, \log_2 i)}"}


def _gain_words(spec: str) -> str:
    return _GAIN_WORDS.get(spec, f"gain from the map {spec} (other grades gain 0)")


def _dcg_table(c: _Ctx, rank: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gain = gains(g, str(c.m.get("gain")))
    return gain, discounts(rank, str(c.m.get("discount")))


def _dcg_terms(gain: np.ndarray, discount: np.ndarray, rank: np.ndarray, spec: str) -> str:
    parts = []
    for gi, r in zip(gain, rank, strict=True):
        if gi == 0:
            continue
        if spec == "jk" and r <= 2:
            parts.append(_tex(gi))
        elif spec == "jk":
            parts.append(rf"\frac{{{_tex(gi)}}}{{\log_2 {int(r)}}}")
        else:
            parts.append(rf"\frac{{{_tex(gi)}}}{{\log_2 {int(r) + 1}}}")
    return _terms(parts, 8) if parts else "0"


def _explain_cg(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    gain = gains(g, str(c.m.get("gain")))
    steps = _frame(rank=rank, grade=g, gain=gain, contribution=gain, running=_running(gain))
    value = float(gain.sum())
    nonzero = [_tex(x) for x in gain if x != 0]
    formula = (rf"\mathrm{{CG}}{c.at_k} = \sum_i \mathrm{{gain}}(g_i) = "
               rf"{_terms(nonzero) if nonzero else '0'} = {_tex(value)}")
    text = (f"Cumulative gain: the gains of the documents in "
            f"{'the list' if c.k is None else f'the top {c.k}'} added up, whatever their rank "
            f"({_gain_words(str(c.m.get('gain')))}; unjudged and negative grades gain 0). "
            f"CG{c.at_k} = {_num(value)}.")
    return _Parts(steps, formula, text)


def _explain_dcg(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    gain, discount = _dcg_table(c, rank, g)
    contribution = gain * discount
    steps = _frame(rank=rank, grade=g, gain=gain, discount=discount,
                   contribution=contribution, running=_running(contribution))
    value = float(contribution.sum())
    gain_spec, disc_spec = str(c.m.get("gain")), str(c.m.get("discount"))
    gain_tex = _GAIN_TEX.get(gain_spec, r"\mathrm{gain}(g_i)")
    formula = (rf"\mathrm{{DCG}}{c.at_k} = \sum_i {gain_tex}\cdot {_DISCOUNT_TEX[disc_spec]} = "
               rf"{_dcg_terms(gain, discount, rank, disc_spec)} = {_tex(value)}")
    text = (f"Each document adds its gain times the discount of its rank "
            f"({_gain_words(gain_spec)}; {_DISCOUNT_WORDS[disc_spec]}); unjudged and negative "
            f"grades gain 0. DCG{c.at_k} = {_num(value)}. DCG is absolute: it grows with the "
            "grades and with k, and is not bounded by 1.")
    return _Parts(steps, formula, text, ((f"DCG{c.at_k}", value),))


def _explain_ndcg(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    gain, discount = _dcg_table(c, rank, g)
    term = gain * discount
    dcg = float(term.sum())
    from_run = c.m.get("ideal") == "run"
    pool = c.grade if from_run else c.judged
    pool_gain = gains(pool, str(c.m.get("gain")))
    order = np.lexsort((-np.nan_to_num(pool, nan=-np.inf), -pool_gain))
    n_ideal = len(pool) if c.k is None else min(c.k, len(pool))
    ideal_rank = np.arange(1, n_ideal + 1, dtype=np.int64)
    ideal_gain = pool_gain[order][:n_ideal]
    ideal_discount = discounts(ideal_rank, str(c.m.get("discount")))
    ideal_term = ideal_gain * ideal_discount
    idcg = float(ideal_term.sum())
    ideal = _frame(rank=ideal_rank, grade=pool[order][:n_ideal], gain=ideal_gain,
                   discount=ideal_discount, contribution=ideal_term,
                   running=_running(ideal_term))
    if idcg > 0:
        contribution = term / idcg
        running = np.cumsum(term) / idcg
        value = dcg / idcg
    else:
        fill = 0.0 if c.options.idcg_zero == "zero" else math.nan
        contribution = np.full(len(g), fill)
        running = np.full(len(g), fill)
        value = fill
    steps = _frame(rank=rank, grade=g, gain=gain, discount=discount, dcg=_running(term),
                   contribution=contribution, running=running)
    ideal_words = ("the list's own documents re-sorted by grade (ideal=run)" if from_run
                   else "every judged document of the query, best first (from the qrels)")
    formula = (rf"\mathrm{{nDCG}}{c.at_k} = \frac{{\mathrm{{DCG}}{c.at_k}}}"
               rf"{{\mathrm{{IDCG}}{c.at_k}}} = \frac{{{_tex(dcg)}}}{{{_tex(idcg)}}} = "
               rf"{_tex(value)}")
    best = ", ".join("unjudged" if math.isnan(x) else _num(x)
                     for x in pool[order][:min(n_ideal, 12)])
    text = (f"DCG{c.at_k} = {_num(dcg)} ({_gain_words(str(c.m.get('gain')))}; "
            f"{_DISCOUNT_WORDS[str(c.m.get('discount'))]}). The ideal ranking is {ideal_words}:"
            f" grades {best}{', ...' if n_ideal > 12 else ''}, whose DCG is "
            f"IDCG{c.at_k} = {_num(idcg)}. ")
    if idcg > 0:
        text += f"nDCG{c.at_k} = DCG / IDCG = {_num(value)}."
        if from_run:
            text += (" An ideal taken from the list itself cannot see relevant documents the "
                     "list missed: this nDCG hides recall failures (see the nDCG vs DCG page).")
        elif len(c.judged) > np.count_nonzero(~np.isnan(c.grade)):
            text += (" Judged documents the list does not contain are in the ideal, so a list "
                     "that misses good documents cannot reach 1.")
    elif c.options.idcg_zero == "zero":
        text += "With IDCG = 0 (no document with a gain) nDCG is 0 and the query is kept."
    else:
        text += ("With IDCG = 0 (no document with a gain) nDCG is undefined and the query is "
                 "left out of the mean (idcg_zero = drop).")
    return _Parts(steps, formula, text, ((f"DCG{c.at_k}", dcg), (f"IDCG{c.at_k}", idcg)),
                  ideal)


def _explain_err(c: _Ctx) -> _Parts:
    rank, g, _ = c.top()
    given = c.m.get("max_grade")
    if given is not None:
        gmax = float(given)
    else:
        scale = [0.0, *c.judged.tolist()] + ([] if c.top_grade is None else [c.top_grade])
        gmax = max(scale)
    stop = err_stop(g, gmax)
    reach = err_reach(stop, np.zeros(len(stop), dtype=np.int64),
                      np.array([0, len(stop)], dtype=np.int64))
    discount = 1.0 / rank if len(rank) else np.zeros(0)
    contribution = reach * stop * discount
    steps = _frame(rank=rank, grade=g, stop=stop, reach=reach, discount=discount,
                   contribution=contribution, running=_running(contribution))
    value = float(contribution.sum())
    formula = (rf"\mathrm{{ERR}}{c.at_k} = \sum_{{r}} \frac{{1}}{{r}}\,R_r\prod_{{i<r}}(1-R_i),"
               rf"\quad R_i = \frac{{2^{{g_i}}-1}}{{2^{{{_tex(gmax)}}}}}\ \Rightarrow\ "
               rf"{_tex(value)}")
    source = ("the max_grade parameter" if given is not None
              else "the highest grade in the qrels")
    text = (f"Cascade model: a user reads down the list and stops at rank r, satisfied, with "
            f"probability R_r = (2^grade − 1) / 2^{_num(gmax)} (the stop column; g_max = "
            f"{_num(gmax)}, {source}). The reach column is the probability of getting to rank r "
            f"unsatisfied, Π(1 − R_i) over the ranks above. Each rank adds reach · R_r / r; "
            f"ERR{c.at_k} = {_num(value)}.")
    return _Parts(steps, formula, text, (("g_max", gmax),))


# ----------------------------------------------------------------- pairwise measures


def _explain_auc(c: _Ctx) -> _Parts:
    rank, g, s = c.top()
    judged = g >= 0
    pos = judged & (g >= c.t)
    neg = judged & (g < c.t)
    n_pos, n_neg = int(pos.sum()), int(neg.sum())
    lower = (s[None, :] < s[:, None]) & neg[None, :]
    equal = (s[None, :] == s[:, None]) & neg[None, :]
    below = np.where(pos, lower.sum(axis=1) + 0.5 * equal.sum(axis=1), 0.0)
    pairs = n_pos * n_neg
    role = np.where(pos, "relevant", np.where(neg, "judged non-relevant", "unjudged: ignored"))
    if pairs:
        contribution = below / pairs
        running = np.cumsum(below) / pairs
        value = float(below.sum() / pairs)
    else:
        contribution = np.full(len(g), math.nan)
        running = np.full(len(g), math.nan)
        value = math.nan
    steps = _frame(rank=rank, grade=g, score=s, role=role,
                   **{"non-relevant below": below}, contribution=contribution,
                   running=running)
    formula = (rf"\mathrm{{AUC}}{c.at_k} = \frac{{1}}{{n_+ n_-}}\sum_{{i\,\in\,+}}\Bigl(\#\{{j"
               rf"\in -: s_j < s_i\}} + \tfrac12\,\#\{{j \in -: s_j = s_i\}}\Bigr) = "
               rf"\frac{{{_tex(float(below.sum()))}}}{{{n_pos} \cdot {n_neg}}} = {_tex(value)}")
    if pairs:
        text = (f"Among the judged documents retrieved{'' if c.k is None else f' in the top {c.k}'}"
                f", {n_pos} are relevant ({c.rel_words}) and {n_neg} judged non-relevant: "
                f"{pairs} (relevant, non-relevant) pairs. A pair counts 1 when the relevant "
                "document is scored higher, ½ on a score tie. Each relevant document adds the "
                f"non-relevant ones below it, / {pairs}: AUC = {_num(value)}. Unjudged "
                "documents are left out.")
    else:
        missing = "relevant" if not n_pos else "judged non-relevant"
        text = (f"No {missing} document among the judged documents retrieved: there is no "
                "(relevant, non-relevant) pair, so AUC is undefined for this query and it is "
                "left out of the mean.")
    return _Parts(steps, formula, text, (("n+", float(n_pos)), ("n-", float(n_neg))))


def _ratio(num: float, den: float) -> float:
    if den > 0:
        return num / den
    return math.inf if num > 0 else math.nan


def _explain_pnr(c: _Ctx) -> _Parts:
    rank, g, s = c.top()
    judged = g >= 0
    gj = np.where(judged, g, np.nan)
    lower = (gj[None, :] < gj[:, None])  # j has a lower grade than i (NaN: never)
    conc = (lower & (s[None, :] < s[:, None])).sum(axis=1).astype(np.float64)
    disc = (lower & (s[None, :] > s[:, None])).sum(axis=1).astype(np.float64)
    cum_c, cum_d = np.cumsum(conc), np.cumsum(disc)
    running = np.array([_ratio(a, b) for a, b in zip(cum_c, cum_d, strict=True)])
    big_c, big_d = float(conc.sum()), float(disc.sum())
    value = _ratio(big_c, big_d)
    steps = _frame(rank=rank, grade=g, score=s, judged=judged,
                   **{"lower grades below": conc, "lower grades above": disc},
                   running=running)
    formula = (rf"\mathrm{{PNR}}{c.at_k} = \frac{{C}}{{D}} = \frac{{{_tex(big_c)}}}"
               rf"{{{_tex(big_d)}}} = {_tex(value)}")
    text = (f"Pairs of judged documents with different grades"
            f"{'' if c.k is None else f' in the top {c.k}'}: concordant when the higher grade "
            "is scored higher (C, counted at the higher-graded document: lower grades below "
            "it), discordant when it is scored lower (D: lower grades above it); pairs with "
            f"equal scores are left out. C = {_num(big_c)}, D = {_num(big_d)}, so "
            f"PNR = {_num(value)}")
    if math.isinf(value):
        text += " (no discordant pair: infinite)."
    elif math.isnan(value):
        text += " (no pair counts: undefined)."
    else:
        text += "."
    text += " Over several queries, PNR is Σ C / Σ D, not a mean of ratios."
    return _Parts(steps, formula, text, (("C", big_c), ("D", big_d)))


_EXPLAINERS: dict[str, Callable[[_Ctx], _Parts]] = {
    "P": _explain_precision, "R": _explain_recall, "Success": _explain_success,
    "AP": _explain_ap, "RR": _explain_rr, "Rprec": _explain_rprec, "bpref": _explain_bpref,
    "RBP": _explain_rbp, "CG": _explain_cg, "DCG": _explain_dcg, "nDCG": _explain_ndcg,
    "ERR": _explain_err, "AUC": _explain_auc, "PNR": _explain_pnr,
}

EXPLAINED_FAMILIES: tuple[str, ...] = tuple(_EXPLAINERS)
"""The measure families :func:`explain` explains step by step."""


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
    if m.name not in _EXPLAINERS:
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
    qrels, run = _lab_data([(g_full, unret, s_full)], [_QUERY], top_grade=top_grade)
    per_query = evaluate(qrels, run, [m], options=options).per_query("lab", m)
    value = float(per_query.get(_QUERY, math.nan))

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
    ctx = _Ctx(m, options, m.threshold(options), g, s, judged, len(g_full),
               len(g_full) - depth, dropped, None if top_grade is None else float(top_grade))
    parts = _EXPLAINERS[m.name](ctx)
    text = _preamble(ctx) + parts.text
    if judged.size == 0:
        text = ("The query has no judgment at all: trec_eval does not evaluate it, so there "
                "is no value (it is in no mean). " + text)
    return Explanation(str(m), value, parts.steps, parts.formula, text,
                       m.definition(options), parts.quantities, parts.ideal)


def _preamble(c: _Ctx) -> str:
    """What the options did to the list, in words (empty when nothing)."""
    out = ""
    if c.n_cut:
        out += (f"The depth cut keeps the top {c.options.depth} of the "
                f"{c.n_listed} documents. ")
    if c.n_dropped:
        out += (f"Judged-only evaluation removes {_count(c.n_dropped, 'unjudged document')} "
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


# ----------------------------------------------------------------------------- presets


@dataclass(frozen=True)
class LabQuery:
    """One ranked list of a preset: grades by rank, unretrieved judged grades, a label."""

    label: str
    grades: tuple[float, ...]
    unretrieved: tuple[float, ...] = ()


@dataclass(frozen=True)
class Published:
    """A number a seed publishes, and how it is checked.

    ``relation="equal"``: the computed number rounded to ``decimals`` equals
    ``number``; ``"at most"``: the seed gives a bound read from a table (the
    computed number must not exceed it). ``note`` says what else to know.
    """

    quantity: str
    number: float
    decimals: int
    relation: Literal["equal", "at most"] = "equal"
    note: str = ""

    def holds(self, computed: float) -> bool:
        """Whether ``computed`` reproduces this number (to the published precision)."""
        if self.relation == "at most":
            return computed <= self.number
        return round(computed, self.decimals) == round(self.number, self.decimals)


@dataclass(frozen=True)
class Preset:
    """A seed's worked example: its lists (or paired scores), measure and numbers.

    ``queries`` hold the ranked lists of a measure example (``measure``; several lists
    are averaged, the mean called ``mean_label``); ``a`` and ``b`` the per-query
    scores of two systems for a significance example. ``published`` are the seed's
    numbers, ``claim`` its claim in words.
    """

    key: str
    title: str
    seed: str
    claim: str
    published: tuple[Published, ...]
    measure: str = ""
    queries: tuple[LabQuery, ...] = ()
    mean_label: str = ""
    a: tuple[float, ...] = ()
    b: tuple[float, ...] = ()

    @property
    def kind(self) -> Literal["measure", "significance"]:
        return "significance" if self.a else "measure"


PRESETS: tuple[Preset, ...] = (
    Preset(
        "seed000-ap", "AP: relevant documents at ranks 1, 3, 6", "000",
        "With the relevant documents of a query at ranks 1, 3 and 6 (and no other relevant "
        "document), AP = (1/1 + 2/3 + 3/6) / 3 = 0.7222.",
        (Published("AP", 0.7222, 4),), measure="AP",
        queries=(LabQuery("q1", (1, 0, 1, 0, 0, 1)),)),
    Preset(
        "seed002-map", "MAP over two queries", "002",
        "Query 1 has 4 relevant documents, retrieved at ranks 1, 2, 4 and 7: AP = 0.83. "
        "Query 2 has 5 relevant documents, of which 3 are retrieved, at ranks 1, 3 and 5: "
        "AP = 0.45 (the two never retrieved count in R). MAP = (0.83 + 0.45) / 2 = 0.64.",
        (Published("AP of q1", 0.83, 2), Published("AP of q2", 0.45, 2),
         Published("MAP", 0.64, 2)), measure="AP", mean_label="MAP",
        queries=(LabQuery("q1", (1, 1, 0, 1, 0, 0, 1)),
                 LabQuery("q2", (1, 0, 1, 0, 1), (1, 1)))),
    Preset(
        "seed004-ndcg", "nDCG@6, ideal from the qrels", "004",
        "Grades 3, 2, 3, 0, 1, 2 in ranked order; the qrels also judge two documents the "
        "list does not contain (grades 3 and 2). DCG@6 = 6.861; the ideal ranking of every "
        "judged document (3, 3, 3, 2, 2, 2) gives IDCG@6 = 8.740, so nDCG@6 = 0.785.",
        (Published("DCG@6", 6.861, 3), Published("IDCG@6", 8.740, 3),
         Published("nDCG@6", 0.785, 3)), measure="nDCG@6",
        queries=(LabQuery("q1", (3, 2, 3, 0, 1, 2), (3, 2)),)),
    Preset(
        "seed004-ndcg-run", "nDCG@6, ideal from the list (ideal=run)", "004",
        "The same list with the ideal built from the retrieved documents only (3, 3, 2, 2, 1, "
        "0): IDCG@6 = 7.141, nDCG@6 = 0.961, higher although the list missed a grade-3 and a "
        "grade-2 document.",
        (Published("DCG@6", 6.861, 3), Published("IDCG@6", 7.141, 3),
         Published("nDCG(ideal=run)@6", 0.961, 3)), measure="nDCG(ideal=run)@6",
        queries=(LabQuery("q1", (3, 2, 3, 0, 1, 2), (3, 2)),)),
    Preset(
        "seed004-mrr", "MRR over four queries", "004",
        "The first relevant document is at rank 3, 1 and 5 for three queries and missing for "
        "the fourth: MRR = (1/3 + 1 + 1/5 + 0) / 4 = 0.383.",
        (Published("MRR", 0.383, 3),), measure="RR", mean_label="MRR",
        queries=(LabQuery("q1", (0, 0, 1, 0, 1)), LabQuery("q2", (1, 0, 0, 1, 0)),
                 LabQuery("q3", (0, 0, 0, 0, 1)), LabQuery("q4", (0, 0, 0, 0, 0), (1,)))),
    Preset(
        "seed001-table-8-6", "Significance: table 8-6 (two systems, ten queries)", "001",
        "System B beats A by 21.4 points on average (sd of the differences 29.1): t = 2.33, "
        "one-sided p ≈ 0.02. Wilcoxon: 9 non-zero differences, signed-rank sum W = 35, "
        "one-sided p ≈ 0.025. Sign test: B wins 7 of the 9, one-sided p = 46/512 ≈ 0.090.",
        (Published("mean(B − A)", 21.4, 1), Published("sd(B − A)", 29.1, 1),
         Published("t", 2.33, 2), Published("p (t, one-sided)", 0.02, 2),
         Published("non-zero differences", 9, 0), Published("W (signed-rank sum)", 35, 0),
         Published("p (Wilcoxon, one-sided)", 0.025, 3, "at most",
                   "the seed reads p ≈ 0.025 from a table of critical values of W (n = 9, "
                   "one-sided α = 0.025), i.e. p ≤ 0.025; the exact p (scipy, ties and a zero "
                   "present) is 18/1024 = 0.0176"),
         Published("positive differences", 7, 0),
         Published("p (sign, one-sided)", 0.090, 3, note="46/512 = 0.0898")),
        a=(25, 43, 39, 75, 43, 15, 20, 52, 49, 50),
        b=(35, 84, 15, 75, 68, 85, 80, 50, 58, 75)),
)
"""The seeds' worked examples, with the numbers they publish."""


def preset(key: str) -> Preset:
    """The preset called ``key`` (see :data:`PRESETS`).

    >>> preset("seed000-ap").measure
    'AP'
    """
    check(key, "key", "preset", Options(tuple(p.key for p in PRESETS)))
    return next(p for p in PRESETS if p.key == key)


@dataclass(frozen=True, eq=False)
class PresetResult:
    """A preset recomputed: the explanations, the numbers, and the check of each
    published number.

    Attributes
    ----------
    preset : Preset
    explanations : tuple of Explanation
        One per list (measure presets); empty for the significance preset.
    value : float
        The measure's value (one list) or its mean over the lists, from
        :func:`ireval_core.evaluate`; NaN for the significance preset.
    numbers : tuple of (str, float)
        Every computed quantity the preset publishes, by its name.
    checks : pandas.DataFrame
        ``quantity, published, computed, relation, reproduced, note``.
    tests : tuple of TestResult
        Significance preset: the paired t, Wilcoxon and sign tests (one-sided, B > A).
    steps : pandas.DataFrame or None
        Significance preset: per query A, B, B − A, the rank of |B − A| and its signed rank.
    formula : str
        The mean over the lists, or the tests' statistics, in LaTeX.
    text : str
        In words.
    """

    preset: Preset
    explanations: tuple[Explanation, ...]
    value: float
    numbers: tuple[tuple[str, float], ...]
    checks: pd.DataFrame
    tests: tuple[TestResult, ...] = ()
    steps: pd.DataFrame | None = None
    formula: str = ""
    text: str = ""

    def number(self, quantity: str) -> float:
        """The computed number called ``quantity``."""
        for key, value in self.numbers:
            if key == quantity:
                return value
        raise KeyError(quantity)

    def tests_table(self) -> pd.DataFrame:
        """Significance preset: one row per test, with what the seed says (empty otherwise).

        Columns ``test, statistic, value, n, p (one-sided), seed``.

        >>> table = run_preset("seed001-table-8-6").tests_table()
        >>> table["test"].tolist()
        ['paired t-test', 'Wilcoxon signed-rank', 'sign test']
        >>> table["value"].tolist(), table["n"].tolist()
        ([2.33, 35.0, 7.0], [10, 9, 9])
        """
        columns = ["test", "statistic", "value", "n", "p (one-sided)", "seed"]
        if len(self.tests) != 3:
            return pd.DataFrame(columns=columns)
        t, w, s = self.tests
        claims = {p.quantity: p for p in self.preset.published}

        def seed(quantity: str) -> str:
            pub = claims.get(quantity)
            if pub is None:
                return ""
            sign = "≤" if pub.relation == "at most" else "≈"
            return f"p {sign} {pub.number:.{pub.decimals}f}" + (f" ({pub.note})" if pub.note
                                                                else "")

        rows = [
            ("paired t-test", "t = mean(d) / (sd(d) / √n)", round(t.statistic, 2), t.n,
             t.pvalue, seed("p (t, one-sided)")),
            ("Wilcoxon signed-rank", f"W = Σ signed ranks (R+ = {_num(w.statistic)})",
             float(w.w_signed_rank_sum or 0.0), w.n, w.pvalue,
             seed("p (Wilcoxon, one-sided)")),
            ("sign test", "queries B wins", s.statistic, s.n, s.pvalue,
             seed("p (sign, one-sided)")),
        ]
        return pd.DataFrame(rows, columns=columns)


def run_preset(item: Preset | str, *, options: EvalOptions | None = None) -> PresetResult:
    r"""Recompute a preset with the real kernels (measures) or :mod:`ireval_core.stats`.

    Parameters
    ----------
    item : Preset or str
        A preset or its key.
    options : EvalOptions, optional
        Default: trec_eval's defaults, the settings of the seeds' examples.

    Examples
    --------
    >>> res = run_preset("seed002-map")
    >>> round(res.value, 2), res.checks["reproduced"].all()
    (0.64, np.True_)
    >>> res = run_preset("seed001-table-8-6")
    >>> res.number("W (signed-rank sum)"), round(res.number("p (Wilcoxon, one-sided)"), 4)
    (35.0, 0.0176)
    """
    p = preset(item) if isinstance(item, str) else item
    check(p, "item", "run_preset", InstanceOf(Preset, "a Preset or a preset key"))
    options = options_or_default(options, "run_preset")
    if p.kind == "significance":
        return _run_significance(p)
    explanations = tuple(explain(q.grades, p.measure, unretrieved=q.unretrieved,
                                 options=options) for q in p.queries)
    m = parse_measure(p.measure)
    numbers: list[tuple[str, float]] = []
    if len(p.queries) == 1:
        value = explanations[0].value
        numbers.append((str(m), value))
        numbers += list(explanations[0].quantities)
        formula = ""
        text = explanations[0].text
    else:
        lists = [(np.array(q.grades, dtype=np.float64), np.array(q.unretrieved,
                                                                 dtype=np.float64), None)
                 for q in p.queries]
        labels = [q.label for q in p.queries]
        qrels, run = _lab_data(lists, labels)
        value = evaluate(qrels, run, [m], options=options).mean("lab", m)
        numbers += [(f"{m} of {q.label}", ex.value) for q, ex in zip(p.queries, explanations,
                                                                       strict=True)]
        numbers.append((p.mean_label or f"mean {m}", value))
        name = p.mean_label or rf"\overline{{\mathrm{{{m}}}}}"
        formula = (rf"\mathrm{{{name}}} = \frac{{1}}{{{len(p.queries)}}}\left("
                   + " + ".join(_tex(ex.value) for ex in explanations)
                   + rf"\right) = {_tex(value)}")
        text = (f"{p.mean_label or 'The mean'} is the arithmetic mean of {m} over the "
                f"{len(p.queries)} queries: {_num(value)}.")
    return PresetResult(p, explanations, value, tuple(numbers), _checks(p, numbers),
                        formula=formula, text=text)


def _checks(p: Preset, numbers: Sequence[tuple[str, float]]) -> pd.DataFrame:
    found = dict(numbers)
    rows = []
    for pub in p.published:
        computed = found[pub.quantity]
        rows.append({"quantity": pub.quantity, "published": pub.number, "computed": computed,
                     "relation": pub.relation, "reproduced": pub.holds(computed),
                     "note": pub.note})
    return pd.DataFrame(rows, columns=["quantity", "published", "computed", "relation",
                                       "reproduced", "note"])


def _fraction(p: float, n: int) -> str:
    """`` (k/2^n)`` when ``p`` is an exact count over the 2^n sign patterns, else nothing."""
    count = p * 2.0**n
    return f" ({int(round(count))}/{2**n})" if n <= 30 and abs(count - round(count)) < 1e-9 else ""


def _run_significance(p: Preset) -> PresetResult:
    from scipy.stats import rankdata  # the tests need scipy anyway

    from .stats import paired_t_test, sign_test, wilcoxon_test

    a, b = np.array(p.a, dtype=np.float64), np.array(p.b, dtype=np.float64)
    d = b - a
    t = paired_t_test(a, b, alternative="greater")
    w = wilcoxon_test(a, b, alternative="greater")
    s = sign_test(a, b, alternative="greater")
    nonzero = d != 0
    rank = np.full(len(d), math.nan)
    rank[nonzero] = rankdata(np.abs(d[nonzero]), method="average")
    signed = np.where(nonzero, np.sign(d) * rank, 0.0)
    steps = pd.DataFrame({"query": np.arange(1, len(d) + 1), "A": a, "B": b, "B − A": d,
                          "rank of |B − A|": rank, "signed rank": signed})
    sd = float(np.std(d, ddof=1))
    numbers = [("mean(B − A)", t.mean_diff), ("sd(B − A)", sd), ("t", t.statistic),
               ("p (t, one-sided)", t.pvalue), ("non-zero differences", float(w.n)),
               ("W (signed-rank sum)", float(w.w_signed_rank_sum or 0.0)),
               ("R+", w.statistic), ("p (Wilcoxon, one-sided)", w.pvalue),
               ("positive differences", s.statistic), ("p (sign, one-sided)", s.pvalue)]
    n = len(d)
    formula = (r"\begin{gathered}"
               rf"t = \frac{{\bar d}}{{s_d/\sqrt{{n}}}} = \frac{{{_tex(t.mean_diff)}}}"
               rf"{{{_tex(sd)}/\sqrt{{{n}}}}} = {_tex(t.statistic, 2)}\\ "
               rf"W = \sum_i \operatorname{{sign}}(d_i)\,\mathrm{{rank}}|d_i| = "
               rf"{_tex(w.w_signed_rank_sum or 0.0)}\\ "
               rf"p_{{\mathrm{{sign}}}} = P(X \ge {int(s.statistic)}) = {_tex(s.pvalue)},\quad "
               rf"X \sim \mathrm{{Bin}}({s.n}, \tfrac12)"
               r"\end{gathered}")
    zeros = n - w.n
    seed_w = next((q for q in p.published if q.quantity == "p (Wilcoxon, one-sided)"), None)
    text = (f"Paired over the {n} queries, d = B − A. Paired t-test: mean(d) = "
            f"{_num(t.mean_diff)}, sd(d) = {_num(sd)}, t = {_num(t.statistic, 2)} with {n - 1} "
            f"degrees of freedom, one-sided p = {_num(t.pvalue)}. Wilcoxon signed-rank: "
            + (f"{_count(zeros, 'zero difference')} dropped ({w.n} remain), " if zeros else "")
            + f"|d| ranked (ties share the mean rank), signed ranks sum to W = "
            f"{_num(w.w_signed_rank_sum or 0.0)} (R+ = {_num(w.statistic)}); the exact "
            f"one-sided p is {_num(w.pvalue)}{_fraction(w.pvalue, n)}"
            + (f", the seed quotes p ≈ {seed_w.number:g} from a table of critical values"
               if seed_w is not None else "")
            + f". Sign test: B wins {int(s.statistic)} of {s.n}, one-sided p = "
            f"{_num(s.pvalue)}{_fraction(s.pvalue, s.n)}"
            + (": not significant at 0.05." if s.pvalue > 0.05 else "."))
    return PresetResult(p, (), math.nan, tuple(numbers), _checks(p, numbers), (t, w, s), steps,
                        formula, text)
