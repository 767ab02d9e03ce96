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


def test_a_recorded_decision_reads_as_a_block(app_ws) -> None:
    """On the Meeting page a decision is its text, then its evidence as a list, its
    settings as a short list (no JSON) and its live-view link; uploaded names escaped."""
    from _apps import open_page, sample_files

    from ireval_core.meeting import DecisionSettings, decision_note
    from ireval_core.workspace import Target

    info = app_ws.save_dataset(sample_files(), name="November", saved_by="ana")
    text = decision_note("Ship *neural_rerank*", ["neural_rerank beats bm25 (p < 0.001).",
                                                  "No query loses more than 0.1."],
                         DecisionSettings(("bm25", "neural_rerank"), "2%", n_resamples=2000),
                         f"compare?ds={info.short_id}")
    app_ws.add_note(info.id, Target.comparison("bm25", "neural_rerank", "nDCG@10"), text,
                    author="ana", kind="decision")
    at = open_page("meeting", ds=info.short_id)
    [block] = [m.value for m in at.markdown if "**Decision**" in m.value]
    assert r"Ship \*neural_rerank\*" in block
    assert "\n- neural_rerank beats bm25 (p < 0.001).\n- No query loses more than 0.1." in block
    assert "\n- runs compared: bm25, neural_rerank\n" in block
    assert "non-inferiority margin: 2%" in block and "resamples: 2,000, seed 0" in block
    assert f"**Live view**: `compare?ds={info.short_id}`" in block
    assert '{"systems"' not in block and "Settings: " not in block
