"""AppTest of the Meeting page, and the report it builds when the button is clicked."""

from __future__ import annotations

import hashlib

from _apps import APP, NEEDS_SAMPLE, SAMPLE
from streamlit.testing.v1 import AppTest

from ireval_app import meeting_glue
from ireval_app.keys import meeting as meeting_keys
from ireval_core import EvalOptions, read_qrels, read_runs
from ireval_core.dataset import Dataset
from ireval_core.meeting import ReportInput

pytestmark = NEEDS_SAMPLE


def test_meeting_page_offers_the_report() -> None:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("pages/meeting.py").run()
    assert not at.exception
    assert at.title[0].value == "Meeting"
    assert at.multiselect(key=meeting_keys.MEASURES).value == [
        "nDCG@10", "AP", "P@10", "R@100", "RR"]
    report, memo = at.get("download_button")
    assert "meeting report" in report.proto.label
    assert "decision memo (Markdown)" in memo.proto.label and not memo.proto.disabled


def test_report_bytes_hold_the_sessions_numbers_and_inputs() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    data = (SAMPLE / "qrels.txt").read_bytes()
    inputs = [ReportInput("qrels.txt", "qrels", len(data), hashlib.sha256(data).hexdigest())]
    html = meeting_glue.report_html(Dataset(qrels, tuple(runs)), EvalOptions(rel_level=2),
                                    ["P@10"], inputs=inputs).decode()
    assert hashlib.sha256(data).hexdigest() in html
    assert "relevant: grade &gt;= 2" in html
    assert "0.2831" in html  # bm25 P@10 at grade >= 2 (see test_app_consistency / test_options)


def test_memo_bytes_are_the_cores_memo() -> None:
    from ireval_core.meeting import DecisionSettings, ReportNote, decision_note, meeting_report

    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    a, b = runs[0].name, runs[1].name
    note = ReportNote(decision_note("Ship *it*", [], DecisionSettings((a, b), n_resamples=300),
                                    ""), "ana", kind="decision", comparison=(a, b, "P@10"))
    options = EvalOptions(rel_level=2)
    md = meeting_glue.memo_markdown(Dataset(qrels, tuple(runs)), options, ["P@10"],
                                    notes=[note], title="Weekly").decode()
    core = meeting_report(qrels, runs, ["P@10"], options=options, notes=[note],
                          title="Weekly", charts=False)
    [memo] = core.decisions
    assert md.startswith("# Weekly: decision memo")
    assert memo.markdown() in md and r"**Decision**: Ship \*it\*" in md
    assert core.evidence is not None and md.endswith(core.evidence.to_markdown())
    assert "relevant: grade >= 2" in md
