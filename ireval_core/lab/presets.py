"""The seeds' worked examples (:data:`PRESETS`), each with the number the seed
publishes, recomputed by :func:`run_preset`."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np
import pandas as pd

from ..evaluate import evaluate
from ..measures import parse_measure
from ..options import EvalOptions, options_or_default
from ..params import InstanceOf, Options, check

if TYPE_CHECKING:
    from ..stats import TestResult

from .explainer import Explanation, explain, lab_data
from .steps import num, plural, tex

__all__ = ["PRESETS", "LabQuery", "Preset", "PresetResult", "Published", "preset",
           "run_preset"]


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
            ("Wilcoxon signed-rank", f"W = Σ signed ranks (R+ = {num(w.statistic)})",
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
        qrels, run = lab_data(lists, labels)
        value = evaluate(qrels, run, [m], options=options).mean("lab", m)
        numbers += [(f"{m} of {q.label}", ex.value) for q, ex in zip(p.queries, explanations,
                                                                       strict=True)]
        numbers.append((p.mean_label or f"mean {m}", value))
        name = p.mean_label or rf"\overline{{\mathrm{{{m}}}}}"
        formula = (rf"\mathrm{{{name}}} = \frac{{1}}{{{len(p.queries)}}}\left("
                   + " + ".join(tex(ex.value) for ex in explanations)
                   + rf"\right) = {tex(value)}")
        text = (f"{p.mean_label or 'The mean'} is the arithmetic mean of {m} over the "
                f"{len(p.queries)} queries: {num(value)}.")
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

    from ..stats import paired_t_test, sign_test, wilcoxon_test

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
               rf"t = \frac{{\bar d}}{{s_d/\sqrt{{n}}}} = \frac{{{tex(t.mean_diff)}}}"
               rf"{{{tex(sd)}/\sqrt{{{n}}}}} = {tex(t.statistic, 2)}\\ "
               rf"W = \sum_i \operatorname{{sign}}(d_i)\,\mathrm{{rank}}|d_i| = "
               rf"{tex(w.w_signed_rank_sum or 0.0)}\\ "
               rf"p_{{\mathrm{{sign}}}} = P(X \ge {int(s.statistic)}) = {tex(s.pvalue)},\quad "
               rf"X \sim \mathrm{{Bin}}({s.n}, \tfrac12)"
               r"\end{gathered}")
    zeros = n - w.n
    seed_w = next((q for q in p.published if q.quantity == "p (Wilcoxon, one-sided)"), None)
    text = (f"Paired over the {n} queries, d = B − A. Paired t-test: mean(d) = "
            f"{num(t.mean_diff)}, sd(d) = {num(sd)}, t = {num(t.statistic, 2)} with {n - 1} "
            f"degrees of freedom, one-sided p = {num(t.pvalue)}. Wilcoxon signed-rank: "
            + (f"{plural(zeros, 'zero difference')} dropped ({w.n} remain), " if zeros else "")
            + f"|d| ranked (ties share the mean rank), signed ranks sum to W = "
            f"{num(w.w_signed_rank_sum or 0.0)} (R+ = {num(w.statistic)}); the exact "
            f"one-sided p is {num(w.pvalue)}{_fraction(w.pvalue, n)}"
            + (f", the seed quotes p ≈ {seed_w.number:g} from a table of critical values"
               if seed_w is not None else "")
            + f". Sign test: B wins {int(s.statistic)} of {s.n}, one-sided p = "
            f"{num(s.pvalue)}{_fraction(s.pvalue, s.n)}"
            + (": not significant at 0.05." if s.pvalue > 0.05 else "."))
    return PresetResult(p, (), math.nan, tuple(numbers), _checks(p, numbers), (t, w, s), steps,
                        formula, text)
