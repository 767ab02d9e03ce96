"""The meeting report for the app: built from the loaded dataset when the user clicks.

Nothing here reads widget values or session state: the page passes the dataset, the
options, the measures and the notes.
"""

from __future__ import annotations

from collections.abc import Sequence

from ireval_core.dataset import Dataset
from ireval_core.meeting import ReportInput, ReportNote, meeting_report
from ireval_core.options import EvalOptions

__all__ = ["report_html"]


def report_html(dataset: Dataset, options: EvalOptions, measures: Sequence[str], *,
                inputs: Sequence[ReportInput] = (), notes: Sequence[ReportNote] = (),
                title: str = "ireval meeting report") -> bytes:
    """The self-contained HTML report of ``dataset`` under ``options`` (UTF-8 bytes)."""
    report = meeting_report(dataset.qrels, list(dataset.runs), list(measures), options=options,
                            inputs=inputs, notes=notes, title=title)
    return report.html.encode("utf-8")
