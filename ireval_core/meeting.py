"""The meeting report: one self-contained HTML file a team can send, open offline, archive.

:func:`meeting_report` evaluates the runs once and writes everything a review meeting
walks through: the inputs with their SHA-256, every option, the metric table with
intervals and significance letters, the verdicts in words, precision–recall and ROC
curves, per-query distributions, the queries flagged by the recall check (nDCG with a
run-only ideal far above nDCG with the qrels ideal), an optional labeling trend, the
notes and decisions, and the definition of every measure.

The file needs nothing else: plotly.js is inlined, with the addresses it carries for
map tiles and help links (never fetched by these charts) neutralised, so the file
holds no external URL at all; the only ``http://`` strings left are the XML namespace
identifiers of SVG (``http://www.w3.org/...``), which browsers never fetch. Every
uploaded string (ids, run names, file names, notes) is escaped for HTML, and for
plotly's HTML subset inside the charts.

>>> from ireval_core import Qrels, Run
>>> qrels = Qrels.from_dict({f"q{i}": {"a": 1, "b": 0} for i in range(6)})
>>> runs = [Run.from_dict({f"q{i}": {"a": 2.0, "b": 1.0} for i in range(6)}, name="good"),
...         Run.from_dict({f"q{i}": {"b": 2.0, "a": 1.0} for i in range(6)}, name="<b>ad")]
>>> report = meeting_report(qrels, runs, ["P@1", "nDCG@10"], n_resamples=200, charts=False)
>>> float(report.table.mean.loc["good", "P@1"])
1.0
>>> "&lt;b&gt;ad" in report.html, "<b>ad" in report.html
(True, False)
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import cache
from numbers import Integral
from typing import TYPE_CHECKING

from . import __version__
from .compare import Verdict, compare_evaluation, verdicts
from .curves import run_curves
from .data import JoinCache, Qrels, Run
from .decisions import (
    MarginResult,
    MeasureEvidence,
    PairEvidence,
    decision_evidence,
    equivalence_test,
)
from .errors import invalid_parameter
from .escape import html_text, markdown_text
from .evaluate import Evaluation, evaluate
from .formats import p_text
from .ideal import ideal_measures, recall_flags
from .measures import parse_measures
from .options import EvalOptions
from .params import Interval, check
from .report import EvidenceSection, SignificanceTable, table_from_records
from .stats import PairComparison
from .tables import MetricsTable, metrics_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DecisionMemo", "DecisionSettings", "MeetingReport", "RecordedDecision", "ReportInput",
           "ReportNote", "decision_memo", "decision_note", "input_of", "meeting_report",
           "note_text", "read_decision_note", "recorded_decision", "view_link"]

_EXTERNAL = re.compile(r"https?://(?!www\.w3\.org/)")


@dataclass(frozen=True)
class ReportInput:
    """One input file of the report: its name, kind, size and SHA-256."""

    name: str
    kind: str
    size: int
    sha256: str


def input_of(name: str, kind: str, data: bytes) -> ReportInput:
    """The :class:`ReportInput` of a file's bytes."""
    return ReportInput(name, kind, len(data), hashlib.sha256(data).hexdigest())


@dataclass(frozen=True)
class ReportNote:
    """A note or decision shown in the report (from the workspace or a notes file)."""

    text: str
    author: str = ""
    created_at: str = ""
    target: str = "dataset"
    kind: str = "note"
    comparison: tuple[str, str, str] | None = None
    """``(run A, run B, measure)`` when the note is on a comparison: a decision on one
    gets its memo at the top of the report."""


_EVIDENCE = "\n\nEvidence when recorded:\n"
_SETTINGS = "Settings: "
_LINK = "Live view: "


@dataclass(frozen=True)
class DecisionSettings:
    """The settings a decision's evidence was computed with (kept in the note's text).

    ``systems``: the runs compared (their common queries are the compared ones);
    ``margin``: the non-inferiority margin, measure units or ``"P%"`` (``None``: none).
    """

    systems: tuple[str, ...] = ()
    margin: float | str | None = None
    alpha: float = 0.05
    test: str = "t"
    loss_delta: float = 0.0
    risk_alpha: float = 1.0
    n_resamples: int = 10_000
    seed: int = 0

    def to_text(self) -> str:
        """One line, ``Settings: {json}``."""
        return _SETTINGS + json.dumps(
            {"systems": list(self.systems), "margin": self.margin, "alpha": self.alpha,
             "test": self.test, "loss_delta": self.loss_delta, "risk_alpha": self.risk_alpha,
             "resamples": self.n_resamples, "seed": self.seed}, ensure_ascii=False)

    def describe(self) -> list[str]:
        """The settings as a short list for reading, one setting a line.

        >>> DecisionSettings(("bm25", "new"), "2%", n_resamples=2000).describe()
        ['runs compared: bm25, new', 'test: paired t-test, α = 0.05', \
'non-inferiority margin: 2%', 'who gets hurt: a query loses when B − A < 0, URisk α = 1', \
'resamples: 2,000, seed 0']
        """
        from .compare import TEST_LABELS

        margin = "none" if self.margin is None else (
            self.margin if isinstance(self.margin, str) else f"{self.margin:g}")
        loss = f"−{self.loss_delta:g}" if self.loss_delta > 0 else "0"
        return [f"runs compared: {', '.join(self.systems) or 'every run'}",
                f"test: {TEST_LABELS.get(self.test, self.test)}, α = {self.alpha:g}",
                f"non-inferiority margin: {margin}",
                f"who gets hurt: a query loses when B − A < {loss}, URisk α = "
                f"{self.risk_alpha:g}",
                f"resamples: {self.n_resamples:,}, seed {self.seed}"]

    @classmethod
    def from_text(cls, line: str) -> DecisionSettings | None:
        """The settings of a :meth:`to_text` line; ``None`` when it is not one."""
        if not line.startswith(_SETTINGS):
            return None
        try:
            d = json.loads(line[len(_SETTINGS):])
            margin = d.get("margin")
            return cls(tuple(str(s) for s in d.get("systems", ())),
                       margin if isinstance(margin, (int, float, str)) else None,
                       float(d.get("alpha", 0.05)), str(d.get("test", "t")),
                       float(d.get("loss_delta", 0.0)), float(d.get("risk_alpha", 1.0)),
                       int(d.get("resamples", 10_000)), int(d.get("seed", 0)))
        except (ValueError, TypeError, AttributeError):
            return None


def decision_note(decision: str, evidence: Sequence[str], settings: DecisionSettings,
                  link: str = "") -> str:
    """The text of a decision note: the decision, the evidence sentences when it was
    recorded, the settings (one JSON line) and the link to the live view.

    >>> text = decision_note("Ship B", ["B beats A."], DecisionSettings(("A", "B")), "/c")
    >>> read_decision_note(text)[0], read_decision_note(text)[2]
    ('Ship B', '/c')
    """
    lines = [f"- {e}" for e in evidence] + [settings.to_text()]
    if link:
        lines.append(_LINK + link)
    return decision.strip() + _EVIDENCE + "\n".join(lines)


def note_text(text: str, link: str = "") -> str:
    """The text a note keeps: ``text`` and, after a blank line, the link to the view it
    was written on (``Live view: <link>``, read back by :func:`read_decision_note`).

    >>> read_decision_note(note_text("Looks fine ", "/queries?query=q1"))
    ('Looks fine', None, '/queries?query=q1')
    """
    return text.strip() + (f"\n\n{_LINK}{link}" if link else "")


def read_decision_note(text: str) -> tuple[str, DecisionSettings | None, str]:
    """The decision, its settings and its link from a :func:`decision_note` text; a note
    of :func:`note_text`: ``(text, None, link)``; a plain text: ``(text, None, "")``."""
    head, sep, tail = text.rpartition(_EVIDENCE)
    if not sep:
        body, sep, link = text.rpartition("\n\n" + _LINK)
        if sep and link.strip() and "\n" not in link.strip():
            return body, None, link.strip()
        return text, None, ""
    settings, link = None, ""
    for line in tail.splitlines():
        settings = DecisionSettings.from_text(line) or settings
        if line.startswith(_LINK):
            link = line[len(_LINK):].strip()
    return head, settings, link


def view_link(text: str) -> str:
    """The live view a decision or note keeps (:func:`read_decision_note`) when a browser
    may open it from the app: an ``http(s)`` address or a path of the app
    (``/compare?...``); ``""`` otherwise (none, or a ``javascript:`` text).

    >>> view_link(note_text("ok", "http://h/compare?pair=b")), view_link("javascript:x")
    ('http://h/compare?pair=b', '')
    """
    link = read_decision_note(text)[2]
    return link if re.match(r"(https?://|/(?!/))", link) else ""


@dataclass(frozen=True)
class RecordedDecision:
    """A decision note's text in its parts (:func:`recorded_decision`), to show it as a
    block: the decision, the evidence sentences when it was recorded, the settings, the
    link to the live view."""

    decision: str
    evidence: tuple[str, ...]
    settings: DecisionSettings | None
    link: str


def recorded_decision(text: str) -> RecordedDecision:
    """The parts of a :func:`decision_note` text (a plain note: its text, nothing else).

    >>> text = decision_note("Ship B", ["B beats A.", "Nobody loses."],
    ...                      DecisionSettings(("A", "B")), "compare?x=1")
    >>> r = recorded_decision(text)
    >>> r.decision, r.evidence, r.link
    ('Ship B', ('B beats A.', 'Nobody loses.'), 'compare?x=1')
    """
    decision, settings, link = read_decision_note(text)
    _, sep, tail = text.rpartition(_EVIDENCE)
    evidence = tuple(line[2:] for line in tail.splitlines() if sep and line.startswith("- "))
    return RecordedDecision(decision, evidence, settings, link)


def _num(x: float, fmt: str = "+.4f") -> str:
    return "undefined" if math.isnan(x) else format(x, fmt)


_p = p_text


@dataclass(frozen=True, eq=False)
class DecisionMemo:
    """One recorded decision with its evidence recomputed by the core (the memo)."""

    note: ReportNote
    decision: str
    system_a: str
    system_b: str
    measure: str
    settings: DecisionSettings
    link: str
    comparison: PairComparison | None
    evidence: PairEvidence
    ranking: MeasureEvidence | None
    equivalence: MarginResult | None

    @property
    def question(self) -> str:
        return (f"{self.system_b} against {self.system_a} on {self.measure} "
                f"(runs compared: {', '.join(self.settings.systems)})")

    def lines(self) -> list[tuple[str, str]]:
        """``(what, sentence)`` of every piece of evidence, in the memo's order."""
        a, b, m = self.system_a, self.system_b, self.measure
        out: list[tuple[str, str]] = []
        c = self.comparison
        if c is not None:
            from .compare import TEST_LABELS

            out.append(("Effect", f"{b} − {a} = {_num(c.mean_diff)} {m} (95% interval "
                        f"[{_num(c.ci_low)}, {_num(c.ci_high)}]; mean {a} "
                        f"{_num(c.mean_a, '.4f')}, {b} {_num(c.mean_b, '.4f')}; W/T/L "
                        f"{c.wins}/{c.ties}/{c.losses} over {c.n:,} queries)"))
            out.append(("Test", f"{TEST_LABELS.get(c.test, c.test)}, two-sided, "
                        f"uncorrected: {_p(c.pvalue)}"))
        ni = self.evidence.noninferiority
        if ni is not None:
            out.append(("Not worse", ni.sentence(a, b, m)))
            if self.equivalence is not None:
                out.append(("Equivalent", self.equivalence.sentence(a, b, m)))
        else:
            out.append(("Not worse", "no margin was set"))
        out.append(("Judgment debt", self.evidence.holes.text))
        r = self.ranking
        if r is not None and r.ranking is not None:
            out.extend(("Ranking", t) for t in r.ranking.sentences())
            if r.anova is not None:
                out.append(("Two-way ANOVA", r.anova.sentence()))
            if r.mixed is not None:
                out.append(("Mixed model", r.mixed.sentence()))
        out.append(("Who gets hurt", self.evidence.risk.sentence(a, b, m)))
        return out

    def html(self) -> str:
        e = html_text
        n = self.note
        who = " · ".join(x for x in (n.author, n.created_at) if x)
        items = "".join(f"<li><b>{e(k)}</b>: {e(v)}</li>" for k, v in self.lines())
        link = (f"<p class='meta'>Live view: <code>{e(self.link)}</code></p>"
                if self.link else "")
        return (f"<section class='memo'><h2>Decision: {e(self.system_b)} vs "
                f"{e(self.system_a)} on {e(self.measure)}</h2>"
                f"<p><b>Question</b>: {e(self.question)}</p>"
                f"<p><b>Evidence</b> (recomputed now, {self.settings.n_resamples:,} "
                f"resamples, seed {self.settings.seed}, α = {self.settings.alpha:g}):</p>"
                f"<ul>{items}</ul>"
                f"<div class='note decision'><b>Decision</b>: {e(self.decision)}"
                f"<div class='meta'>Recorded by {e(who)}</div></div>{link}</section>")

    def markdown(self) -> str:
        t = markdown_text
        n = self.note
        who = " · ".join(x for x in (n.author, n.created_at) if x)
        out = [f"## Decision: {t(self.system_b)} vs {t(self.system_a)} on {t(self.measure)}",
               "", f"**Question**: {t(self.question)}", "", "**Evidence**:", ""]
        out += [f"- **{t(k)}**: {t(v)}" for k, v in self.lines()]
        out += ["", f"**Decision**: {t(self.decision)} (recorded by {t(who)})"]
        if self.link:
            out += ["", f"Live view: `{self.link.replace('`', '%60')}`"]
        return "\n".join(out) + "\n"


def decision_memo(qrels: Qrels, runs: Sequence[Run], note: ReportNote, *,
                  options: EvalOptions | None = None, correction: str = "holm",
                  joins: JoinCache | None = None) -> DecisionMemo | None:
    """The memo of a decision note on a comparison (``None`` for other notes or when its
    runs are not loaded): the evidence recomputed with the settings it was recorded with
    (:func:`read_decision_note`; without them, every run and the defaults)."""
    if note.kind != "decision" or note.comparison is None:
        return None
    a, b, m = note.comparison
    decision, settings, link = read_decision_note(note.text)
    names = [r.name for r in runs]
    if settings is None or not settings.systems:
        settings = replace(settings or DecisionSettings(), systems=tuple(names))
    chosen = [r for s in settings.systems for r in runs if r.name == s]
    if a not in settings.systems or b not in settings.systems or len(chosen) < 2:
        return None
    options = EvalOptions() if options is None else options
    joins = JoinCache() if joins is None else joins
    margin = settings.margin
    ev = decision_evidence(qrels, chosen, [m], options=options, baseline=a, margin=margin,
                           alpha=settings.alpha, test=settings.test,
                           risk_alpha=settings.risk_alpha, loss_delta=settings.loss_delta,
                           rank_confidence=len(chosen) >= 3,
                           n_resamples=settings.n_resamples, rng=settings.seed, joins=joins)
    res = evaluate(qrels, chosen, [m], options=options, joins=joins)
    records = compare_evaluation(res, [m], systems=list(settings.systems), baseline=a,
                                 tests=(settings.test,), correction=correction,
                                 n_resamples=settings.n_resamples, seed=settings.seed)
    pair = ev.pair(a, b, m)
    record = next((r for r in records if (r.system_a, r.system_b) == (a, b)), None)
    equivalence = None
    if margin is not None and pair.noninferiority is not None:
        from .compare import aligned_scores

        _, values = aligned_scores(res, pair.measure, list(settings.systems))
        equivalence = equivalence_test(values[a], values[b], margin=margin,
                                       alpha=settings.alpha)
    ranking = ev.measure(m) if len(chosen) >= 3 else None
    return DecisionMemo(note, decision, a, b, pair.measure, settings, link, record, pair,
                        ranking, equivalence)


@dataclass(frozen=True, eq=False)
class MeetingReport:
    """The report's HTML and the numbers it shows (the same objects the app shows)."""

    html: str
    evaluation: Evaluation
    table: MetricsTable
    significance: SignificanceTable | None
    verdicts: tuple[Verdict, ...]
    recall_flags: pd.DataFrame
    options: EvalOptions
    inputs: tuple[ReportInput, ...] = field(default=())
    decisions: tuple[DecisionMemo, ...] = field(default=())
    evidence: EvidenceSection | None = field(default=None)
    """The decision evidence of every pair and measure (``None``: one run, or left out)."""
    title: str = "ireval meeting report"
    written: str = ""
    notes: tuple[ReportNote, ...] = field(default=())
    labels_memo: str = ""
    """The model judge's sentence of the labeling part (``""``: no judge)."""

    def memo_markdown(self) -> str:
        """The decision memo as Markdown: the title, one section per decision recorded on
        a comparison (:meth:`DecisionMemo.markdown`), then the decision evidence of every
        pair and measure. Uploaded strings are escaped (:func:`~ireval_core.escape.
        markdown_text`): they show as text, never as markup."""
        t = markdown_text
        out = [f"# {t(self.title)}: decision memo", "",
               f"Written {self.written} by ireval {__version__}; evaluation: "
               f"{t(self.options.describe())}.", ""]
        if self.decisions:
            out += [memo.markdown() for memo in self.decisions]
        else:
            out += ["No decision was recorded on a comparison (the Compare page's "
                    "*Record a decision*).", ""]
        plain = [n for n in self.notes if n.kind == "decision" and n.comparison is None]
        if plain:
            out += ["## Other decisions", ""]
            for n in plain:
                who = " · ".join(x for x in (n.author, n.created_at, n.target) if x)
                out.append(f"- {t(n.text)}" + (f" ({t(who)})" if who else ""))
            out.append("")
        if self.labels_memo:
            out += ["## Labeling: the model judge", "",
                    f"**Model + people (PPI++)**: {t(self.labels_memo)}.", ""]
        if self.evidence is not None:
            out.append(self.evidence.to_markdown())
        return "\n".join(out)


@cache
def offline_plotlyjs() -> str:
    """plotly.js with every fetchable address neutralised (``about:blank#`` + the rest).

    The replaced strings are map-tile servers, topojson and help links that charts
    without maps never use; XML namespace identifiers are kept.
    """
    from plotly.offline import get_plotlyjs

    return _EXTERNAL.sub("about:blank#", get_plotlyjs())


def _figure_html(fig: object, div_id: str) -> str:
    html = fig.to_html(full_html=False, include_plotlyjs=False,  # type: ignore[attr-defined]
                       div_id=div_id, config={"displaylogo": False, "displayModeBar": False,
                               "responsive": True})
    return _EXTERNAL.sub("about:blank#", html)


_STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;
color:#1f2328;line-height:1.45;padding:0 1em}
h1{margin-bottom:0}h2{border-bottom:1px solid #d0d7de;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0}th,td{padding:4px 10px;border-bottom:1px solid #e5e7eb;
text-align:right;vertical-align:top}tr th:first-child,td.text{text-align:left}
.caption,.meta{color:#57606a;font-size:.92em}sup{color:#15803d}code{font-size:.9em}
.verdict{margin:.3em 0}.significant{color:#15803d}.none{color:#57606a}.cannot{color:#b45309}
.note{border-left:3px solid #1f6feb;padding:.2em .8em;margin:.6em 0}
.decision{border-left-color:#15803d}.memo{border:1px solid #d0d7de;border-radius:6px;
padding:0 1em .6em;margin:1.2em 0}.memo h2{margin-top:.6em}.best{font-weight:700;background:#e8f1fb}
table.evidence td{white-space:nowrap}table.evidence td.text{white-space:normal}
td.text,th{overflow-wrap:anywhere}table{max-width:100%}
"""


def _note_html(note: ReportNote) -> str:
    """A note's text as HTML; a decision as a block: its text, the evidence when it was
    recorded, its settings as a short list, its link (:func:`recorded_decision`)."""
    e = html_text
    if note.kind != "decision":
        return e(note.text)
    r = recorded_decision(note.text)
    out = e(r.decision)
    if r.evidence:
        out += ("<div class='meta'>Evidence when recorded:</div><ul>"
                + "".join(f"<li>{e(x)}</li>" for x in r.evidence) + "</ul>")
    if r.settings is not None:
        out += ("<div class='meta'>Settings:</div><ul class='meta'>"
                + "".join(f"<li>{e(x)}</li>" for x in r.settings.describe()) + "</ul>")
    if r.link:
        out += f"<div class='meta'>Live view: <code>{e(r.link)}</code></div>"
    return out


def _table(head: Sequence[str], rows: Sequence[Sequence[str]], *, text_cols: int = 1) -> str:
    """An HTML table from cells that are already escaped."""
    th = "".join(f"<th>{h}</th>" for h in head)
    body = "".join(
        "<tr>" + "".join(f"<td class='text'>{c}</td>" if i < text_cols else f"<td>{c}</td>"
                         for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"


def meeting_report(qrels: Qrels, runs: Sequence[Run], measures: Sequence[str], *,
                   options: EvalOptions | None = None, inputs: Sequence[ReportInput] = (),
                   notes: Sequence[ReportNote] = (), test: str = "t",
                   correction: str = "holm", alpha: float = 0.05, n_resamples: int = 10_000,
                   seed: int = 0, recall_k: int = 10, labels_trend: pd.DataFrame | None = None,
                   labels_memo: str = "",
                   title: str = "ireval meeting report", charts: bool = True,
                   now: _dt.datetime | None = None, evidence: bool = True,
                   margin: float | str | None = None, rank_confidence: bool = False,
                   risk_alpha: float = 1.0, loss_delta: float = 0.0,
                   baseline: str | None = None) -> MeetingReport:
    """Evaluate ``runs`` and write the meeting report (see the module docstring).

    Parameters
    ----------
    qrels, runs, measures:
        What to evaluate (measure specs as :func:`ireval_core.evaluate` takes them).
    options:
        The evaluation options (shown in full in the report).
    inputs:
        The input files (names and SHA-256, see :func:`input_of`).
    notes:
        Notes and decisions, shown in their order.
    test, correction, alpha, n_resamples, seed:
        The two-sided paired test marking the table and giving the verdicts.
    recall_k:
        The cutoff of the recall check (nDCG(ideal=run)@k against nDCG@k).
    labels_trend:
        A labeling trend table (one row per round and system) to include as is.
    labels_memo:
        When a model judge labeled the labeling files: its one sentence for the memo
        (:attr:`ireval_core.labels.ppi.PPIReport.memo`), shown under the labeling trend
        and in the decision memo (:meth:`MeetingReport.memo_markdown`).
    charts:
        Draw the curves and distributions (``False``: tables only, a small file).
    now:
        The time printed in the report (default: now, UTC).
    evidence, margin, rank_confidence, risk_alpha, loss_delta:
        Add the decision evidence of every pair and measure after the verdicts
        (:func:`ireval_core.decisions.decision_evidence` with ``test``, ``alpha``,
        ``n_resamples`` and ``seed``; the numbers of ``compare --format json``).
    baseline:
        A run's name: the significance table, the verdicts and the decision evidence
        compare each other run with it only (as ``compare --baseline``); default: every
        pair.
    """
    if not runs:
        raise invalid_parameter("runs", "meeting_report", "at least one run", list(runs))
    recall_k = check(recall_k, "recall_k", "meeting_report",
                     Interval(Integral, 1, None, closed="left"))
    options = EvalOptions() if options is None else options
    specs = [str(m) for m in parse_measures(list(measures))]
    recall_specs = list(ideal_measures(recall_k, 100)[:3])
    res = evaluate(qrels, runs, list(dict.fromkeys(specs + recall_specs)), options=options)
    table = metrics_table(res)
    systems = [r.name for r in runs]
    if baseline is not None and baseline not in systems:
        raise invalid_parameter("baseline", "meeting_report",
                                f"one of the runs ({', '.join(systems)})", baseline)
    records = (compare_evaluation(res, specs, systems=systems, tests=(test,),
                                  correction=correction, n_resamples=n_resamples, seed=seed,
                                  baseline=baseline)
               if len(systems) > 1 else [])
    sig = (table_from_records(res, records, systems, alpha=alpha, baseline=baseline)
           if records else None)
    said = tuple(verdicts(records, alpha=alpha)) if records else ()
    flags = recall_flags(res, recall_k)
    when = (now or _dt.datetime.now(_dt.UTC)).strftime("%Y-%m-%d %H:%M UTC")
    e = html_text

    parts = [f"<h1>{e(title)}</h1>",
             f"<p class='meta'>Written {e(when)} by ireval {e(__version__)}. "
             f"{len(systems)} run(s), {qrels.n_queries:,} judged queries.</p>"]

    # the decision memo: one section per decision recorded on a comparison
    joins = JoinCache()
    memos = tuple(memo for n in notes for memo in [decision_memo(
        qrels, runs, n, options=options, correction=correction, joins=joins)]
        if memo is not None)
    parts.extend(memo.html() for memo in memos)

    parts.extend(_inputs_and_options(inputs, options))
    parts.extend(_results(table, systems, specs, sig, said))
    section = None
    if evidence and len(systems) > 1:
        section = EvidenceSection(decision_evidence(
            qrels, runs, specs, options=options, margin=margin, alpha=alpha, test=test,
            risk_alpha=risk_alpha, loss_delta=loss_delta, rank_confidence=rank_confidence,
            n_resamples=n_resamples, rng=seed, joins=joins, baseline=baseline), margin,
            n_resamples, seed, baseline)
        parts.append(section.html("h2"))
    if charts:
        parts.extend(_charts(qrels, runs, res, specs, options))
    parts.extend(_recall_check(flags, recall_k))
    if labels_trend is not None:
        parts.extend(_labels_trend(labels_trend, labels_memo))
    parts.extend(_notes(notes))
    parts.append("<h2>Definitions</h2><ul>" + "".join(
        f"<li><b>{e(m)}</b>: {e(res.definition(m))}</li>" for m in specs) + "</ul>")

    script = (f"<script>{offline_plotlyjs()}</script>" if charts else "")
    html = ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
            f"<title>{e(title)}</title><style>{_STYLE}</style>{script}</head><body>\n"
            + "\n".join(parts) + "\n</body></html>\n")
    return MeetingReport(html, res, table, sig, said, flags, options, tuple(inputs), memos,
                         section, title, when, tuple(notes), labels_memo)


def _inputs_and_options(inputs: Sequence[ReportInput], options: EvalOptions) -> list[str]:
    """The report's "Inputs" and "Options" sections (HTML)."""
    e = html_text
    parts = ["<h2>Inputs</h2>"]
    if inputs:
        parts.append(_table(["file", "kind", "bytes", "SHA-256"],
                            [[e(i.name), e(i.kind), f"{i.size:,}", f"<code>{i.sha256}</code>"]
                             for i in inputs], text_cols=2))
    else:
        parts.append("<p class='meta'>No file names were given (in-memory data).</p>")
    parts.append("<h2>Options</h2><ul>" + "".join(
        f"<li>{e(p)}</li>" for p in options.describe().split("; ")) + "</ul>"
        f"<p class='meta'>trec_eval flags giving the same numbers: "
        f"<code>{e(options.trec_eval_flags() or '(none)')}</code></p>")
    return parts


def _results(table: MetricsTable, systems: Sequence[str], specs: Sequence[str],
             sig: SignificanceTable | None, said: Sequence[Verdict]) -> list[str]:
    """The "Results" section: the means with the best marked, then significance and
    verdicts when there are several runs (HTML)."""
    e = html_text
    head = ["system", *[e(m) for m in specs]]
    rows = []
    for s in systems:
        cells = [e(s)]
        for m in specs:
            cell = e(table.cells.loc[s, m])
            cells.append(f"<span class='best'>{cell}</span>" if table.best.loc[s, m] else cell)
        rows.append(cells)
    parts = ["<h2>Results</h2>", _table(head, rows),
             f"<p class='caption'>Mean over queries and its 95% interval (Student t, "
             f"clipped to the measure's range); highlighted: the best mean of each "
             f"measure. {e(table.queries_caption())}</p>"]
    for note in (table.small_note, table.query_note):
        if note:
            parts.append(f"<p class='caption'>{e(note)}</p>")
    if sig is not None:
        parts.append("<h3>Significance</h3>" + sig.html_table())
        parts.append("<h3>Verdicts</h3>")
        css = {"significant": "significant", "not significant": "none",
               "cannot tell": "cannot"}
        parts.extend(f"<p class='verdict {css[v.outcome]}'>{e(v.text)}</p>" for v in said)
    return parts


def _recall_check(flags: pd.DataFrame, recall_k: int) -> list[str]:
    """The "Recall check" section: queries whose run-ideal nDCG hides a recall failure."""
    e = html_text
    parts = [f"<h2>Recall check (nDCG@{recall_k})</h2>",
             f"<p class='caption'>Queries where nDCG(ideal=run)@{recall_k} exceeds "
             f"nDCG@{recall_k} by at least 0.3: the run orders its own candidates well "
             "while the qrels know relevant documents it never retrieved (a recall "
             "failure nDCG with a run-only ideal hides).</p>"]
    if flags.empty:
        parts.append("<p>No query is flagged.</p>")
        return parts
    shown = flags.head(50)
    parts.append(_table(["system", "query", f"nDCG(ideal=run)@{recall_k}",
                         f"nDCG@{recall_k}", "gap"],
                        [[e(r.system), e(r.query), f"{r.ndcg_run_ideal:.4f}",
                          f"{r.ndcg:.4f}", f"{r.gap:.4f}"]
                         for r in shown.itertuples()], text_cols=2))
    if len(flags) > len(shown):
        parts.append(f"<p class='caption'>The first 50 of {len(flags):,} flagged.</p>")
    return parts


def _labels_trend(labels_trend: pd.DataFrame, memo: str = "") -> list[str]:
    """The "Labeling trend" section: the trend table as it was given, then the model
    judge's sentence ``memo`` (when given)."""
    e = html_text
    cols = [str(c) for c in labels_trend.columns]
    return ["<h2>Labeling trend</h2>", _table([e(c) for c in cols], [
        [e(f"{v:.4f}" if isinstance(v, float) else str(v)) for v in row]
        for row in labels_trend.itertuples(index=False)], text_cols=2)] + (
        [f"<p><b>Model + people (PPI++)</b>: {e(memo)}.</p>"] if memo else [])


def _notes(notes: Sequence[ReportNote]) -> list[str]:
    """The "Notes and decisions" section, in the notes' order."""
    e = html_text
    parts = ["<h2>Notes and decisions</h2>"]
    if not notes:
        parts.append("<p class='meta'>No notes.</p>")
    for n in notes:
        who = " · ".join(x for x in (n.author, n.created_at, n.target) if x)
        parts.append(f"<div class='note {'decision' if n.kind == 'decision' else ''}'>"
                     f"<b>{e(n.kind.capitalize())}</b>: {_note_html(n)}"
                     f"<div class='meta'>{e(who)}</div></div>")
    return parts


def _charts(qrels: Qrels, runs: Sequence[Run], res: Evaluation, specs: Sequence[str],
            options: EvalOptions) -> list[str]:
    from . import charts
    from .curves import pooled_prevalence

    curves = {r.name: run_curves(qrels, r, options=options) for r in runs}
    out = ["<h2>Curves</h2>"]
    drawable = {n: c for n, c in curves.items() if c.pr_problem() is None}
    if drawable:
        out.append(_figure_html(charts.interpolated_pr_curve(
            {n: c.interpolated_frame() for n, c in drawable.items()},
            prevalence=pooled_prevalence(curves)), "pr"))
    rocs = {n: c for n, c in curves.items() if c.roc_problem() is None}
    if rocs:
        out.append(_figure_html(charts.roc_curve({n: c.roc_frame() for n, c in rocs.items()},
                                                 auc={n: c.auc for n, c in rocs.items()}),
                                "roc"))
    for n, c in curves.items():
        problem = c.roc_problem() or c.pr_problem()
        if problem:
            out.append(f"<p class='caption'>{html_text(n)}: {html_text(problem)}.</p>")
    out.append("<h2>Per-query distributions</h2>")
    tidy = res.tidy()
    for i, m in enumerate(specs):
        values = tidy[(tidy["measure"] == m) & tidy["value"].notna()]
        out.append(_figure_html(charts.per_query_distribution(values, m), f"dist{i}"))
    return out
