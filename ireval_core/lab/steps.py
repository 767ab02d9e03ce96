"""The lab's step-by-step explainers: one per measure family it explains.

Each explainer takes the list as the measure sees it (:class:`Context`: after the depth
cut and judged-only removal) and gives the steps table, the formula in LaTeX and the
paragraph in words (:class:`Parts`); :func:`~ireval_core.lab.explain` computes the
number with the real kernels and puts both together. :data:`EXPLAINERS` holds exactly
the families that declare ``explained=True`` in the measure registry (a test checks it).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from ..measures import Measure
from ..measures.gain import discounts, err_reach, err_stop, gains, rbp_weights
from ..options import EvalOptions

if TYPE_CHECKING:
    pass

__all__ = ["EXPLAINED_FAMILIES", "EXPLAINERS", "Context", "Parts", "plural", "num",
           "tex"]


# ----------------------------------------------------------------------------- the steps


@dataclass(frozen=True, eq=False)
class Context:
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
        return f"grade ≥ {num(self.t)}"

    def unjudged_note(self, g: np.ndarray) -> str:
        """A sentence on unjudged documents among ``g``, when there are any."""
        n = int(np.count_nonzero(np.isnan(g) | (g < 0)))
        if not n:
            return ""
        verb = "counts" if n == 1 else "count"
        return (f" {plural(n, 'unjudged document')} (not in the qrels, or pooled but "
                f"unjudged) {verb} as non-relevant.")


@dataclass(frozen=True, eq=False)
class Parts:
    steps: pd.DataFrame
    formula: str
    text: str
    quantities: tuple[tuple[str, float], ...] = ()
    ideal: pd.DataFrame | None = None


def num(x: float, digits: int = 4) -> str:
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


def tex(x: float, digits: int = 4) -> str:
    text = num(x, digits)
    return {"undefined": r"\text{undefined}", "∞": r"\infty", "-∞": r"-\infty"}.get(text, text)


def plural(n: int, word: str) -> str:
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


def _explain_precision(c: Context) -> Parts:
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
                   rf"\mathrm{{rel}}_i = \frac{{{hits}}}{{{c.k}}} = {tex(value)}")
        short = ""
        if c.n < c.k:
            short = (f" The list has only {plural(c.n, 'document')}: the missing ranks count "
                     f"as non-relevant, so the denominator stays {c.k}.")
        text = (f"{hits} of the top {c.k} documents are relevant ({c.rel_words})."
                f"{short}{c.unjudged_note(g)} Each relevant rank adds 1/{c.k}: "
                f"P@{c.k} = {hits}/{c.k} = {num(value)}.")
    else:
        formula = (rf"\mathrm{{P}} = \frac{{1}}{{n}}\sum_{{i=1}}^{{n}}\mathrm{{rel}}_i = "
                   rf"\frac{{{hits}}}{{{c.n}}} = {tex(value)}")
        text = (f"Without a cutoff, P is over the whole list (set precision): {hits} of the "
                f"{plural(c.n, 'retrieved document')} are relevant ({c.rel_words}), "
                f"P = {num(value)}.{c.unjudged_note(g)}")
    return Parts(steps, formula, text, (("relevant retrieved", float(hits)),))


def _explain_recall(c: Context) -> Parts:
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
               rf"\mathrm{{rel}}_i = \frac{{{hits}}}{{{big_r}}} = {tex(value)}")
    if big_r:
        text = (f"The query has R = {big_r} relevant documents ({c.rel_words}) in its "
                f"judgments, retrieved or not. {hits} of them are in {top}: "
                f"{name} = {hits}/{big_r} = {num(value)}. Each relevant rank adds 1/R; a "
                "relevant document never retrieved (or cut by the depth) adds nothing but "
                "still counts in R.")
    else:
        text = (f"The query has no relevant document ({c.rel_words}) in its judgments: "
                f"{name} is 0 by convention (trec_eval).")
    return Parts(steps, formula, text, (("R", float(big_r)),))


def _explain_success(c: Context) -> Parts:
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
               rf"\mathrm{{rel}}_i] = {tex(value)}")
    where = (f"the first is at rank {int(rank[rel][0])}" if rel.any()
             else "there is none")
    text = (f"1 when a relevant document ({c.rel_words}) is in "
            f"{'the list' if c.k is None else f'the top {c.k}'}, else 0: {where}, so "
            f"{name} = {num(value)}.")
    return Parts(steps, formula, text)


def _explain_ap(c: Context) -> Parts:
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
               rf"{tex(value)}")
    if not big_r:
        text = (f"The query has no relevant document ({c.rel_words}) in its judgments: "
                f"{name} is 0 by convention (trec_eval).")
    elif not rel.any():
        text = (f"R = {big_r} relevant documents ({c.rel_words}), none of them in "
                f"{'the list' if c.k is None else f'the top {c.k}'}: {name} = 0.")
    else:
        precisions = ", ".join(num(p) for p in precision[rel][:12])
        text = (f"R = {big_r} relevant documents ({c.rel_words}) in the judgments. The "
                f"relevant ones in {'the list' if c.k is None else f'the top {c.k}'} are at "
                f"ranks {_ranks(rank[rel])}; precision at those ranks: {precisions}"
                f"{', ...' if rel.sum() > 12 else ''}. Their sum {num(weighted.sum())} "
                f"divided by R = {big_r} gives {name} = {num(value)}. A relevant document "
                "that is not retrieved adds 0 but still counts in R."
                f"{c.unjudged_note(g)}")
    return Parts(steps, formula, text, (("R", float(big_r)),))


def _explain_rr(c: Context) -> Parts:
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
                   rf"\frac{{1}}{{{first}}} = {tex(1.0 / first)}")
        text = (f"The first relevant document ({c.rel_words}) is at rank {first}: "
                f"{name} = 1/{first} = {num(1.0 / first)}. Later relevant documents do not "
                "count.")
    else:
        formula = rf"\mathrm{{RR}}{c.at_k} = 0 \quad (\text{{no relevant document}})"
        text = (f"No relevant document ({c.rel_words}) in "
                f"{'the list' if c.k is None else f'the top {c.k}'}: {name} = 0.")
    return Parts(steps, formula, text)


def _explain_rprec(c: Context) -> Parts:
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
               rf"\frac{{{hits}}}{{{big_r}}} = {tex(value)}")
    text = (f"Precision at rank R, R = {big_r} relevant documents ({c.rel_words}) in the "
            f"judgments: {hits} of the top {big_r} are relevant, Rprec = {num(value)}."
            if big_r else f"No relevant document ({c.rel_words}): Rprec = 0.")
    return Parts(steps, formula, text, (("R", float(big_r)),))


def _explain_bpref(c: Context) -> Parts:
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
               rf"\ \Rightarrow\ {tex(value)}")
    if big_r:
        text = (f"R = {big_r} relevant ({c.rel_words}) and N = {big_n} judged non-relevant "
                f"documents in the judgments. Each retrieved relevant document adds "
                f"(1 − min(n_r, R) / {'R' if original else 'min(N, R)'}) / R, where n_r counts "
                "the judged non-relevant documents ranked above it"
                + ("" if original else " (trec_eval's denominator min(N, R); "
                   "form=original divides by R)")
                + ". Unjudged documents are skipped: they are neither relevant nor judged "
                f"non-relevant. bpref = {num(value)}.")
    else:
        text = f"No relevant document ({c.rel_words}): bpref = 0."
    return Parts(steps, formula, text, (("R", float(big_r)), ("N", float(big_n))))


def _explain_rbp(c: Context) -> Parts:
    rank, g, _ = c.top()
    rel = c.relevant(g)
    p = c.m.number("p")
    weight = rbp_weights(rank, p)
    contribution = (1.0 - p) * np.where(rel, weight, 0.0)
    steps = _frame(rank=rank, grade=g, relevant=rel, discount=weight,
                   contribution=contribution, running=_running(contribution))
    value = float(contribution.sum())
    formula = (rf"\mathrm{{RBP}}{c.at_k} = (1-p)\sum_{{i}}\mathrm{{rel}}_i\,p^{{i-1}},\quad "
               rf"p = {tex(p)}\ \Rightarrow\ {tex(value)}")
    text = (f"A user reads rank 1, and goes on to the next rank with probability p = {num(p)}: "
            f"rank i is read with probability p^(i−1) (the discount column). Each relevant "
            f"document ({c.rel_words}) adds (1 − p)·p^(i−1); RBP{c.at_k} = {num(value)}.")
    return Parts(steps, formula, text)


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


def _dcg_table(c: Context, rank: np.ndarray, g: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    gain = gains(g, str(c.m.get("gain")))
    return gain, discounts(rank, str(c.m.get("discount")))


def _dcg_terms(gain: np.ndarray, discount: np.ndarray, rank: np.ndarray, spec: str) -> str:
    parts = []
    for gi, r in zip(gain, rank, strict=True):
        if gi == 0:
            continue
        if spec == "jk" and r <= 2:
            parts.append(tex(gi))
        elif spec == "jk":
            parts.append(rf"\frac{{{tex(gi)}}}{{\log_2 {int(r)}}}")
        else:
            parts.append(rf"\frac{{{tex(gi)}}}{{\log_2 {int(r) + 1}}}")
    return _terms(parts, 8) if parts else "0"


def _explain_cg(c: Context) -> Parts:
    rank, g, _ = c.top()
    gain = gains(g, str(c.m.get("gain")))
    steps = _frame(rank=rank, grade=g, gain=gain, contribution=gain, running=_running(gain))
    value = float(gain.sum())
    nonzero = [tex(x) for x in gain if x != 0]
    formula = (rf"\mathrm{{CG}}{c.at_k} = \sum_i \mathrm{{gain}}(g_i) = "
               rf"{_terms(nonzero) if nonzero else '0'} = {tex(value)}")
    text = (f"Cumulative gain: the gains of the documents in "
            f"{'the list' if c.k is None else f'the top {c.k}'} added up, whatever their rank "
            f"({_gain_words(str(c.m.get('gain')))}; unjudged and negative grades gain 0). "
            f"CG{c.at_k} = {num(value)}.")
    return Parts(steps, formula, text)


def _explain_dcg(c: Context) -> Parts:
    rank, g, _ = c.top()
    gain, discount = _dcg_table(c, rank, g)
    contribution = gain * discount
    steps = _frame(rank=rank, grade=g, gain=gain, discount=discount,
                   contribution=contribution, running=_running(contribution))
    value = float(contribution.sum())
    gain_spec, disc_spec = str(c.m.get("gain")), str(c.m.get("discount"))
    gain_tex = _GAIN_TEX.get(gain_spec, r"\mathrm{gain}(g_i)")
    formula = (rf"\mathrm{{DCG}}{c.at_k} = \sum_i {gain_tex}\cdot {_DISCOUNT_TEX[disc_spec]} = "
               rf"{_dcg_terms(gain, discount, rank, disc_spec)} = {tex(value)}")
    text = (f"Each document adds its gain times the discount of its rank "
            f"({_gain_words(gain_spec)}; {_DISCOUNT_WORDS[disc_spec]}); unjudged and negative "
            f"grades gain 0. DCG{c.at_k} = {num(value)}. DCG is absolute: it grows with the "
            "grades and with k, and is not bounded by 1.")
    return Parts(steps, formula, text, ((f"DCG{c.at_k}", value),))


def _explain_ndcg(c: Context) -> Parts:
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
               rf"{{\mathrm{{IDCG}}{c.at_k}}} = \frac{{{tex(dcg)}}}{{{tex(idcg)}}} = "
               rf"{tex(value)}")
    best = ", ".join("unjudged" if math.isnan(x) else num(x)
                     for x in pool[order][:min(n_ideal, 12)])
    text = (f"DCG{c.at_k} = {num(dcg)} ({_gain_words(str(c.m.get('gain')))}; "
            f"{_DISCOUNT_WORDS[str(c.m.get('discount'))]}). The ideal ranking is {ideal_words}:"
            f" grades {best}{', ...' if n_ideal > 12 else ''}, whose DCG is "
            f"IDCG{c.at_k} = {num(idcg)}. ")
    if idcg > 0:
        text += f"nDCG{c.at_k} = DCG / IDCG = {num(value)}."
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
    return Parts(steps, formula, text, ((f"DCG{c.at_k}", dcg), (f"IDCG{c.at_k}", idcg)),
                  ideal)


def _explain_err(c: Context) -> Parts:
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
               rf"\quad R_i = \frac{{2^{{g_i}}-1}}{{2^{{{tex(gmax)}}}}}\ \Rightarrow\ "
               rf"{tex(value)}")
    source = ("the max_grade parameter" if given is not None
              else "the highest grade in the qrels")
    text = (f"Cascade model: a user reads down the list and stops at rank r, satisfied, with "
            f"probability R_r = (2^grade − 1) / 2^{num(gmax)} (the stop column; g_max = "
            f"{num(gmax)}, {source}). The reach column is the probability of getting to rank r "
            f"unsatisfied, Π(1 − R_i) over the ranks above. Each rank adds reach · R_r / r; "
            f"ERR{c.at_k} = {num(value)}.")
    return Parts(steps, formula, text, (("g_max", gmax),))


# ----------------------------------------------------------------- pairwise measures


def _explain_auc(c: Context) -> Parts:
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
               rf"\frac{{{tex(float(below.sum()))}}}{{{n_pos} \cdot {n_neg}}} = {tex(value)}")
    if pairs:
        text = (f"Among the judged documents retrieved{'' if c.k is None else f' in the top {c.k}'}"
                f", {n_pos} are relevant ({c.rel_words}) and {n_neg} judged non-relevant: "
                f"{pairs} (relevant, non-relevant) pairs. A pair counts 1 when the relevant "
                "document is scored higher, ½ on a score tie. Each relevant document adds the "
                f"non-relevant ones below it, / {pairs}: AUC = {num(value)}. Unjudged "
                "documents are left out.")
    else:
        missing = "relevant" if not n_pos else "judged non-relevant"
        text = (f"No {missing} document among the judged documents retrieved: there is no "
                "(relevant, non-relevant) pair, so AUC is undefined for this query and it is "
                "left out of the mean.")
    return Parts(steps, formula, text, (("n+", float(n_pos)), ("n-", float(n_neg))))


def _ratio(num: float, den: float) -> float:
    if den > 0:
        return num / den
    return math.inf if num > 0 else math.nan


def _explain_pnr(c: Context) -> Parts:
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
    formula = (rf"\mathrm{{PNR}}{c.at_k} = \frac{{C}}{{D}} = \frac{{{tex(big_c)}}}"
               rf"{{{tex(big_d)}}} = {tex(value)}")
    text = (f"Pairs of judged documents with different grades"
            f"{'' if c.k is None else f' in the top {c.k}'}: concordant when the higher grade "
            "is scored higher (C, counted at the higher-graded document: lower grades below "
            "it), discordant when it is scored lower (D: lower grades above it); pairs with "
            f"equal scores are left out. C = {num(big_c)}, D = {num(big_d)}, so "
            f"PNR = {num(value)}")
    if math.isinf(value):
        text += " (no discordant pair: infinite)."
    elif math.isnan(value):
        text += " (no pair counts: undefined)."
    else:
        text += "."
    text += " Over several queries, PNR is Σ C / Σ D, not a mean of ratios."
    return Parts(steps, formula, text, (("C", big_c), ("D", big_d)))


EXPLAINERS: dict[str, Callable[[Context], Parts]] = {
    "P": _explain_precision, "R": _explain_recall, "Success": _explain_success,
    "AP": _explain_ap, "RR": _explain_rr, "Rprec": _explain_rprec, "bpref": _explain_bpref,
    "RBP": _explain_rbp, "CG": _explain_cg, "DCG": _explain_dcg, "nDCG": _explain_ndcg,
    "ERR": _explain_err, "AUC": _explain_auc, "PNR": _explain_pnr,
}

EXPLAINED_FAMILIES: tuple[str, ...] = tuple(EXPLAINERS)
"""The measure families :func:`explain` explains step by step."""
