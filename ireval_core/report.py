"""A results table for papers and review notes: means with significance markers.

Systems are labelled ``a, b, c, ...`` in row order. The cell of system ``s`` on a
measure carries the labels of the systems ``s`` is significantly better than on that
measure: a two-sided paired test over the queries all listed systems share, p-values
corrected over the pairs of that measure, ``p < alpha``, and ``s`` has the higher
mean. The best mean of each measure is in bold. This is the layout of
ranx's ``Report`` and of most IR papers; the caption states the test, the
correction, alpha, the queries and every measure's definition.

>>> from ireval_core import Qrels, Run, evaluate
>>> qrels = Qrels.from_dict({f"q{i}": {"r": 1} for i in range(8)})
>>> good = Run.from_dict({f"q{i}": {"r": 2.0, "x": 1.0} for i in range(8)}, name="good")
>>> bad = Run.from_dict({f"q{i}": {"x": 2.0, "r": 1.0} for i in range(8)}, name="bad")
>>> table = significance_table(evaluate(qrels, [good, bad], ["RR"]), test="t")
>>> table.cell("good", "RR"), table.cell("bad", "RR")
('1.0000 ᵇ', '0.5000')
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from numbers import Real

import numpy as np
import pandas as pd

from .compare import compare_evaluation
from .decisions import Evidence, PairEvidence
from .errors import invalid_parameter
from .escape import html_text, latex_text, markdown_text
from .evaluate import Evaluation
from .formats import p_value
from .measures import parse_measures
from .params import Interval, Options, check
from .stats import TESTS, PairComparison
from .tables import best_marks

__all__ = ["EvidenceSection", "SignificanceTable", "significance_table", "table_from_records"]

_TEST = Options(TESTS)

_SUPERSCRIPT = dict(zip("abcdefghijklmnoprstuvwxyz", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖʳˢᵗᵘᵛʷˣʸᶻ", strict=True))
_LETTERS = tuple(_SUPERSCRIPT)  # q has no superscript form: it is skipped
_TEST_NAMES = {"t": "paired t-test", "wilcoxon": "Wilcoxon signed-rank test",
               "sign": "sign test", "randomization": "randomization (permutation) test",
               "bootstrap": "bootstrap test"}
_CORRECTION_NAMES = {"none": "no correction", "bonferroni": "Bonferroni correction",
                     "holm": "Holm correction", "bh": "Benjamini–Hochberg adjustment"}


def _label(i: int) -> str:
    """a, b, ..., z (no q), then aa, ab, ..."""
    n = len(_LETTERS)
    return _LETTERS[i] if i < n else _label(i // n - 1) + _LETTERS[i % n]


@dataclass(frozen=True)
class SignificanceTable:
    """Means of systems x measures with, per cell, the systems it significantly beats."""

    systems: tuple[str, ...]
    measures: tuple[str, ...]
    means: pd.DataFrame
    """Systems x measures: the mean over the compared queries of each measure."""
    beats: dict[tuple[str, str], tuple[str, ...]]
    """(system, measure) -> the systems it is significantly better than."""
    n_queries: dict[str, int]
    """Measure -> number of queries compared (those every listed system has)."""
    test: str
    correction: str
    alpha: float
    definitions: dict[str, str]
    options: str
    decimals: int = 4
    baseline: str | None = None
    """The system every other one was compared with (the others not with each other), or
    None: every pair."""

    @property
    def labels(self) -> dict[str, str]:
        """System -> its letter."""
        return {s: _label(i) for i, s in enumerate(self.systems)}

    def markers(self, system: str, measure: str) -> str:
        """Letters of the systems ``system`` beats on ``measure``, in row order."""
        labels = self.labels
        return "".join(labels[s] for s in self.systems if s in self.beats[(system, measure)])

    def is_best(self, system: str, measure: str) -> bool:
        """Whether ``system`` has the best mean of ``measure`` (equal means alike, as on the
        Metrics page: :func:`ireval_core.tables.best_marks`)."""
        return bool(best_marks(self.means[[measure]]).loc[system, measure])

    def _number(self, system: str, measure: str) -> str:
        v = self.means.loc[system, measure]
        return "–" if math.isnan(v) else f"{v:.{self.decimals}f}"

    def cell(self, system: str, measure: str) -> str:
        """Plain-text cell: the mean, then the markers as superscript letters."""
        marks = self.markers(system, measure)
        if not marks:
            return self._number(system, measure)
        sup = ("".join(_SUPERSCRIPT[c] for c in marks) if len(self.systems) <= len(_LETTERS)
               else f"^({marks})")
        return f"{self._number(system, measure)} {sup}"

    def to_frame(self) -> pd.DataFrame:
        """Plain-text table: systems (with their letters) x measures."""
        index = pd.Index([f"({self.labels[s]}) {s}" for s in self.systems], name="system")
        return pd.DataFrame({m: [self.cell(s, m) for s in self.systems] for m in self.measures},
                            index=index)

    def caption(self) -> str:
        """What the markers mean, under which evaluation options."""
        n = sorted(set(self.n_queries.values()))
        queries = f"{n[0]:,}" if len(n) == 1 else f"{n[0]:,}–{n[-1]:,} (by measure)"
        pairs = ("the pairs of each measure" if self.baseline is None else
                 f"the comparisons of each measure with the baseline "
                 f"({self.labels[self.baseline]}) {self.baseline}, the only ones made")
        return (f"Means over the {queries} queries every system has. A superscript letter "
                f"marks a system significantly better than the system with that letter: "
                f"two-sided {_TEST_NAMES[self.test]}, {_CORRECTION_NAMES[self.correction]} "
                f"over {pairs}, p < {self.alpha:g}. Best mean of each "
                f"measure in bold. Evaluation: {self.options}.")

    def _cells(self, system: str, bold: Callable[[str], str],
               sup: Callable[[str], str],
               text_of: Callable[[str], str] = lambda t: t) -> list[str]:
        """The cells of one row, the best mean marked with ``bold``, the letters with ``sup``;
        the number (or ``–``) written with ``text_of``."""
        cells = []
        for m in self.measures:
            text = text_of(self._number(system, m))
            if self.is_best(system, m):
                text = bold(text)
            marks = self.markers(system, m)
            cells.append(text + (sup(marks) if marks else ""))
        return cells

    def to_markdown(self) -> str:
        """A Markdown table (GitHub flavour; superscripts as ``<sup>``), caption and definitions.

        Names, caption and definitions are escaped (:func:`~ireval_core.escape.markdown_text`):
        they show as text, one table cell each, never as markup.
        """
        e = markdown_text
        head = "| system | " + " | ".join(e(m) for m in self.measures) + " |"
        rule = "|---|" + "---:|" * len(self.measures)
        rows = [f"| ({self.labels[s]}) {e(s)} | "
                + " | ".join(self._cells(s, lambda t: f"**{t}**", lambda k: f"<sup>{k}</sup>"))
                + " |" for s in self.systems]
        defs = "\n".join(f"- **{e(m)}**: {e(self.definitions[m])}" for m in self.measures)
        return "\n".join([head, rule, *rows, "", e(self.caption()), "", defs, ""])

    def to_latex(self) -> str:
        """A ``tabular`` (booktabs) with ``\\textbf`` for the best and ``$^{...}$`` markers.

        Names are escaped (:func:`~ireval_core.escape.latex_text`); the caption follows as a
        ``%`` comment on one line, escaped too, ready to paste into ``\\caption``.
        """
        esc = latex_text
        lines = [r"\begin{tabular}{l" + "r" * len(self.measures) + "}", r"\toprule",
                 "System & " + " & ".join(esc(m) for m in self.measures) + r" \\", r"\midrule"]
        for s in self.systems:
            cells = self._cells(s, lambda t: rf"\textbf{{{t}}}", lambda k: f"$^{{{k}}}$", esc)
            lines.append(f"({self.labels[s]}) {esc(s)} & " + " & ".join(cells) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}", "% " + latex_text(self.caption())]
        return "\n".join(lines) + "\n"

    def html_table(self) -> str:
        """The table and its caption as an HTML fragment (every name escaped)."""
        e = html_text
        head = "".join(f"<th>{e(m)}</th>" for m in self.measures)
        rows = []
        for s in self.systems:
            cells = self._cells(s, lambda t: f"<b>{t}</b>", lambda k: f"<sup>{k}</sup>")
            rows.append(f"<tr><th>({self.labels[s]}) {e(s)}</th>"
                        + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
        return (f"<table class='results'><thead><tr><th>system</th>{head}</tr></thead>"
                f"<tbody>{''.join(rows)}</tbody></table>\n<p class='caption'>"
                f"{e(self.caption())}</p>\n")

    def to_html(self) -> str:
        """A standalone HTML page: the table, the caption and the definitions (all escaped)."""
        e = html_text
        defs = "".join(f"<li><b>{e(m)}</b>: {e(self.definitions[m])}</li>" for m in self.measures)
        return (
            "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>ireval results</title>"
            "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
            "th,td{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}"
            "tr th:first-child{text-align:left}sup{color:#15803d}</style></head><body>\n"
            f"{self.html_table()}<ul>{defs}</ul>\n</body></html>\n"
        )


def significance_table(res: Evaluation, measures: Sequence[str] | None = None, *,
                       systems: Sequence[str] | None = None, test: str = "t",
                       correction: str = "holm", alpha: float = 0.05,
                       n_resamples: int = 10_000, seed: int | None = 0,
                       decimals: int = 4, baseline: str | None = None) -> SignificanceTable:
    """Means with significance markers for every pair of ``systems`` on ``measures``
    (or for each system against ``baseline`` only).

    Parameters
    ----------
    res:
        An evaluation holding the measures and systems.
    measures, systems:
        Default: all of ``res``, in its order (at least two systems).
    test:
        One of :data:`~ireval_core.stats.TESTS` (two-sided).
    correction:
        ``none``, ``bonferroni``, ``holm`` or ``bh``, over the pairs of each measure.
    alpha:
        Significance level of the corrected p-values.
    baseline:
        A system of ``systems``: each other system is compared with it only, and the
        correction runs over those comparisons, as ``compare --baseline`` (and
        :func:`~ireval_core.compare.compare_evaluation` with ``baseline``) does.
    """
    if not _TEST.is_satisfied_by(test):  # (the message predates the parameter template)
        raise ValueError(f"test must be {_TEST}; got {test!r}")
    specs = parse_measures(list(measures) if measures else list(res.measures))
    systems = tuple(systems or res.systems)
    if baseline is not None and baseline not in systems:
        raise invalid_parameter("baseline", "significance_table",
                                f"one of the runs ({', '.join(systems)})", baseline)
    records = compare_evaluation(res, [str(m) for m in specs], systems=systems, tests=(test,),
                                 correction=correction, n_resamples=n_resamples, seed=seed,
                                 baseline=baseline)
    return table_from_records(res, records, systems, alpha=alpha, decimals=decimals,
                              baseline=baseline)


def table_from_records(res: Evaluation, records: Sequence[PairComparison],
                       systems: Sequence[str], *, alpha: float = 0.05,
                       decimals: int = 4, baseline: str | None = None) -> SignificanceTable:
    """The table from comparisons already run (one test, every pair of ``systems``, or
    each system with ``baseline``).

    ``records`` are what :func:`~ireval_core.compare.compare_evaluation` returns for
    all pairs (or for ``baseline``, given the same ``baseline``) and a single test; the
    means and query counts are read from them, so nothing is recomputed.
    """
    alpha = check(alpha, "alpha", "table_from_records", Interval(Real, 0, 1, closed="neither"))
    systems = tuple(systems)
    tests = {r.test for r in records}
    if len(tests) != 1:
        raise ValueError(f"the records must hold exactly one test; got {sorted(tests)}")
    names = tuple(dict.fromkeys(str(r.measure) for r in records))
    pairs = {(r.system_a, r.system_b, r.measure) for r in records}
    if baseline is None:
        if len(pairs) != len(names) * len(systems) * (len(systems) - 1) // 2:
            raise ValueError("the records must compare every pair of the systems on every "
                             "measure")
    elif (baseline not in systems or any(r.system_a != baseline for r in records)
          or len(pairs) != len(names) * (len(systems) - 1)):
        raise ValueError(f"the records must compare each system with the baseline "
                         f"{baseline!r} on every measure")
    beats: dict[tuple[str, str], set[str]] = {(s, m): set() for s in systems for m in names}
    means = pd.DataFrame(index=pd.Index(systems, name="system"), columns=list(names),
                         dtype=np.float64)
    n_queries = {}
    for r in records:
        m = str(r.measure)
        means.loc[r.system_a, m], means.loc[r.system_b, m] = r.mean_a, r.mean_b
        n_queries[m] = r.n
        if r.pvalue_corrected < alpha and r.mean_diff != 0:
            winner, loser = ((r.system_b, r.system_a) if r.mean_diff > 0
                             else (r.system_a, r.system_b))
            beats[(winner, m)].add(loser)
    return SignificanceTable(
        systems, names, means, {k: tuple(sorted(v)) for k, v in beats.items()}, n_queries,
        tests.pop(), records[0].correction, float(alpha),
        {m: res.definition(m) for m in names}, res.options.describe(), decimals, baseline)


def _fixed(v: float | None, digits: int = 4) -> str:
    """A number of the evidence table (``–`` when undefined)."""
    return "–" if v is None or math.isnan(v) else f"{v:.{digits}f}"


_pvalue = p_value


EVIDENCE_COLUMNS = ("B vs A", "unjudged A", "unjudged B", "bounds A", "bounds B", "holes",
                    "URisk", "TRisk", "TRisk p", "not worse p", "interval", "not worse")
"""Columns of :meth:`EvidenceSection.table` (the last three only with a margin)."""


@dataclass(frozen=True)
class EvidenceSection:
    """The decision evidence (:func:`ireval_core.decisions.decision_evidence`) as a report
    section: per measure, a table of every pair's numbers and their sentences, then how
    sure the ranking is. The numbers are those ``compare --format json`` writes
    (:meth:`~ireval_core.decisions.Evidence.blocks`), rounded for reading: means and
    URisk to 4 decimals, TRisk to 2, p-values as everywhere
    (:func:`~ireval_core.formats.p_value`: ``0.012``, ``< 0.001``).

    >>> from ireval_core import Qrels, Run
    >>> from ireval_core.decisions import decision_evidence
    >>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(8)})
    >>> runs = [Run.from_dict({f"q{i}": {"b": 2.0, "a": 1.0} for i in range(8)}, name="old"),
    ...         Run.from_dict({f"q{i}": {"a": 2.0, "x": 1.0} for i in range(8)}, name="new")]
    >>> section = EvidenceSection(decision_evidence(qrels, runs, ["RR"]))
    >>> section.table("RR")[0][:6]
    ['new vs old', '0', '8', '0.5000–0.5000', '1.0000–1.0000', 'holds']
    """

    evidence: Evidence
    margin: float | str | None = None
    n_resamples: int = 10_000
    seed: int = 0
    baseline: str | None = None
    """The run each other run was compared with only (``decision_evidence(baseline=)``),
    said in the caption; None: every pair."""

    @property
    def measures(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p.measure for p in self.evidence.pairs))

    def _pairs(self, measure: str) -> list[PairEvidence]:
        return [p for p in self.evidence.pairs if p.measure == measure]

    def columns(self) -> tuple[str, ...]:
        ni = next((p.noninferiority for p in self.evidence.pairs
                   if p.noninferiority is not None), None)
        if ni is None:
            return EVIDENCE_COLUMNS[:9]
        return (*EVIDENCE_COLUMNS[:10], f"{1 - 2 * ni.alpha:.0%} interval",
                EVIDENCE_COLUMNS[11])

    def table(self, measure: str) -> list[list[str]]:
        """One row per pair of ``measure`` (plain text, names not escaped)."""
        rows = []
        for p in self._pairs(measure):
            h, r, ni = p.holes, p.risk, p.noninferiority
            row = [f"{p.system_b} vs {p.system_a}", f"{h.holes_a:,}", f"{h.holes_b:,}",
                   "–".join(_fixed(v) for v in h.bounds_a),
                   "–".join(_fixed(v) for v in h.bounds_b), h.verdict,
                   f"{r.urisk:+.4f}", "–" if math.isnan(r.trisk) else f"{r.trisk:+.2f}",
                   _pvalue(r.pvalue)]
            if len(self.columns()) > 9:
                row += (["–", "–", "no test"] if ni is None else [
                    _pvalue(ni.pvalue), f"[{ni.ci_low:+.4f}, {ni.ci_high:+.4f}]",
                    str(ni.as_dict()["verdict"])])
            rows.append(row)
        return rows

    def groups(self, measure: str) -> list[tuple[str, list[tuple[str, str]]]]:
        """``(title, [(what, sentence), ...])``: one group per pair of ``measure``, then
        one for its ranking (with three or more runs and rank confidence)."""
        out: list[tuple[str, list[tuple[str, str]]]] = []
        for p in self._pairs(measure):
            a, b = p.system_a, p.system_b
            items = [("Judgment debt", p.holes.text)]
            if p.holes.inferred is not None:
                items.append(("Inferred", p.holes.inferred_text()))
            if p.noninferiority is not None:
                items.append(("Not worse", p.noninferiority.sentence(a, b, measure)))
                if p.noninferiority_bootstrap is not None:
                    items.append(("Not worse (bootstrap)",
                                  p.noninferiority_bootstrap.sentence(a, b, measure)))
            items.append(("Who gets hurt", p.risk.sentence(a, b, measure)))
            out.append((f"{b} vs {a}", items))
        for e in self.evidence.measures:
            if e.measure != measure or e.ranking is None:
                continue
            items = [("Ranking", t) for t in e.ranking.sentences()]
            if e.anova is not None:
                items.append(("Two-way ANOVA", e.anova.sentence()))
            if e.mixed is not None:
                items.append(("Mixed model", e.mixed.sentence()))
            out.append((f"How sure the ranking of the {len(e.systems)} runs is", items))
        return out

    def caption(self) -> str:
        first = self.evidence.pairs[0] if self.evidence.pairs else None
        alpha = first.holes.alpha if first is not None else 0.05
        test = _TEST_NAMES.get(first.holes.test, "") if first is not None else ""
        margin = ("no non-inferiority margin" if self.margin is None
                  else f"non-inferiority margin {self.margin}")
        risk = ("" if first is None else
                f"URisk/TRisk with α = {first.risk.alpha:g}, a query losing when B − A < "
                + (f"−{first.risk.delta:g}" if first.risk.delta > 0 else "0"))
        pairs = ("Per pair, B − A with A the first run" if self.baseline is None else
                 f"Each run B against the baseline A = {self.baseline} only, B − A")
        return (f"{pairs}: unjudged documents in each run's "
                f"window and the mean with them non-relevant–relevant (bounds); holes: "
                f"whether the {test} verdict (α = {alpha:g}) survives the labeling least "
                f"favourable to the winner; {risk}; {margin}; {self.n_resamples:,} "
                f"resamples, seed {self.seed}.")

    def to_markdown(self) -> str:
        e = markdown_text
        out = ["## Decision evidence", "", e(self.caption()), ""]
        cols = self.columns()
        for m in self.measures:
            out += [f"### {e(m)}", "", "| " + " | ".join(cols) + " |",
                    "|---|" + "---:|" * (len(cols) - 1)]
            # the numbers and verdicts are ireval's own text: only the names are escaped
            out += ["| " + " | ".join([e(row[0]), *row[1:]]) + " |" for row in self.table(m)]
            out.append("")
            for title, items in self.groups(m):
                out.append(f"- **{e(title)}**")
                out += [f"  - **{e(k)}**: {e(v)}" for k, v in items]
            out.append("")
        return "\n".join(out)

    def to_latex(self) -> str:
        esc = latex_text
        cols = self.columns()
        out = ["% Decision evidence: " + esc(self.caption())]
        for m in self.measures:
            out += [f"% {esc(m)}", r"\begin{tabular}{l" + "r" * (len(cols) - 1) + "}",
                    r"\toprule", " & ".join(esc(c) for c in cols) + r" \\", r"\midrule"]
            out += [" & ".join(esc(c) for c in row) + r" \\" for row in self.table(m)]
            out += [r"\bottomrule", r"\end{tabular}", r"\begin{itemize}"]
            for title, items in self.groups(m):
                out += [rf"\item \textbf{{{esc(title)}}}", r"\begin{itemize}"]
                out += [rf"\item \textbf{{{esc(k)}}}: {esc(v)}" for k, v in items]
                out.append(r"\end{itemize}")
            out.append(r"\end{itemize}")
        return "\n".join(out) + "\n"

    def html(self, heading: str = "h2") -> str:
        """An HTML fragment (every name escaped); ``heading``: the section's level."""
        e = html_text
        sub = f"h{int(heading[1:]) + 1}"
        cols = self.columns()
        parts = [f"<{heading}>Decision evidence</{heading}>",
                 f"<p class='caption'>{e(self.caption())}</p>"]
        for m in self.measures:
            head = "".join(f"<th>{e(c)}</th>" for c in cols)
            body = "".join("<tr>" + "".join(
                f"<td class='text'>{e(c)}</td>" if i == 0 else f"<td>{e(c)}</td>"
                for i, c in enumerate(row)) + "</tr>" for row in self.table(m))
            parts += [f"<{sub}>{e(m)}</{sub}>",
                      f"<table class='evidence'><thead><tr>{head}</tr></thead>"
                      f"<tbody>{body}</tbody></table>",
                      "<ul>" + "".join(
                          f"<li><b>{e(title)}</b><ul>" + "".join(
                              f"<li><b>{e(k)}</b>: {e(v)}</li>" for k, v in items)
                          + "</ul></li>" for title, items in self.groups(m)) + "</ul>"]
        return "\n".join(parts) + "\n"
