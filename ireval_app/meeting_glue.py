"""The meeting report for the app: built from the loaded dataset when the user clicks.

Nothing here reads widget values or session state: the page passes the dataset, the
options, the measures and the notes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ireval_core.dataset import Dataset
from ireval_core.meeting import ReportInput, ReportNote, meeting_report
from ireval_core.options import EvalOptions

__all__ = ["memo_markdown", "report_html"]


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
