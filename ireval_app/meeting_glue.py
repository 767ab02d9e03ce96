"""The meeting report for the app: built from the loaded dataset when the user clicks.

Nothing here reads widget values or session state: the page passes the dataset, the
options, the measures and the notes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ireval_core.dataset import Dataset
from ireval_core.meeting import ReportInput, ReportNote, meeting_report, recorded_decision
from ireval_core.options import EvalOptions

from .text import inline_code, md_escape

__all__ = ["decision_markdown", "memo_markdown", "report_html"]


def decision_markdown(target: str, text: str) -> str:
    """A recorded decision as a readable Markdown block: the decision on its target, the
    evidence when it was recorded as a list, the settings as a short list, the link to
    the live view (every uploaded name escaped)."""
    r = recorded_decision(text)
    out = [f":green[**Decision**] on {md_escape(target)}: {md_escape(r.decision)}"]
    if r.evidence:
        out += ["", "**Evidence when recorded**", ""]
        out += [f"- {md_escape(e)}" for e in r.evidence]
    if r.settings is not None:
        out += ["", "**Settings**", ""]
        out += [f"- {md_escape(line)}" for line in r.settings.describe()]
    if r.link:
        out += ["", f"**Live view**: {inline_code(r.link)}"]
    return "\n".join(out)


def report_html(dataset: Dataset, options: EvalOptions, measures: Sequence[str], *,
                inputs: Sequence[ReportInput] = (), notes: Sequence[ReportNote] = (),
                title: str = "ireval meeting report") -> bytes:
    """The self-contained HTML report of ``dataset`` under ``options`` (UTF-8 bytes)."""
    report = meeting_report(dataset.qrels, list(dataset.runs), list(measures), options=options,
                            inputs=inputs, notes=notes, title=title)
    return report.html.encode("utf-8")


def memo_markdown(dataset: Dataset, options: EvalOptions, measures: Sequence[str], *,
                  notes: Sequence[ReportNote] = (),
                  title: str = "ireval meeting report") -> bytes:
    """The decision memo of the same report as Markdown (UTF-8 bytes): the decisions
    recorded on comparisons, then the decision evidence of every pair and measure
    (:meth:`~ireval_core.meeting.MeetingReport.memo_markdown`); no charts are drawn."""
    report = meeting_report(dataset.qrels, list(dataset.runs), list(measures), options=options,
                            notes=notes, title=title, charts=False)
    return report.memo_markdown().encode("utf-8")
