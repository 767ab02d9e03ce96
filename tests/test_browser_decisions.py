"""The Compare page's decision panels and the meeting report's decision memo in a real
browser (Debian's chromium): drawn without an exception, no request to another host.
Screenshots go to ``test-artifacts/decisions_compare.png`` and
``test-artifacts/decisions_report.png`` (the memo) and
``test-artifacts/decisions_report_evidence.png`` (the decision evidence)."""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    app_server,
    guarded_page,
    no_exception,
    require_chromium,
    settle,
    shown,
)

from ireval_core import read_qrels, read_runs
from ireval_core.meeting import DecisionSettings, ReportNote, decision_note, meeting_report

require_chromium()
SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def test_compare_panels_in_a_browser(browser, tmp_path) -> None:
    with (guarded_page(browser, height=1000, timeout=90_000) as pg,
          app_server(tmp_path / "workspace.db") as url):
        pg.goto(f"{url}/compare?margin=2&margin_unit=%25+of+A%27s+mean&loss_delta=0.1")
        settle(pg)
        no_exception(pg)
        # the screenshot's 2,600 pixels from here on: chromium draws every frame of a
        # load as tall as its window (browser_support.page_screenshot)
        pg.set_viewport_size({"width": 1400, "height": 2600})
        heading = pg.get_by_text("Deciding:", exact=False).first
        heading.evaluate("e => e.scrollIntoView({block: 'start'})")
        settle(pg)
        wanted = ("Judgment debt", "Download the next labeling batch", "Not worse",
                  "How sure the ranking is", "Who gets hurt", "Record a decision")
        body = shown(pg, *wanted)
        for text in wanted:
            assert text in body, text
        pg.screenshot(path=str(ARTIFACTS / "decisions_compare.png"))


def test_report_memo_in_a_browser(browser) -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    names = tuple(r.name for r in runs)
    text = decision_note("Ship neural_rerank: it is not worse than bm25 and the win holds.",
                         [], DecisionSettings(names, "2%", n_resamples=2000),
                         "http://127.0.0.1:8501/compare?margin=2")
    note = ReportNote(text, "ana", "2025-11-25 15:00 UTC", "bm25 vs neural_rerank on nDCG@10",
                      "decision", (names[0], names[2], "nDCG@10"))
    html = meeting_report(qrels, runs, ["nDCG@10", "AP"], notes=[note], n_resamples=2000).html
    (ARTIFACTS / "decisions_report.html").write_text(html, encoding="utf-8")
    with guarded_page(browser, width=1200, height=1500) as pg:
        pg.set_content(html, wait_until="load")
        decision = "Decision: neural_rerank vs bm25 on nDCG@10"
        assert decision in shown(pg, decision)
        pg.screenshot(path=str(ARTIFACTS / "decisions_report.png"))
        section = pg.locator("h2", has_text="Decision evidence")
        assert section.count() == 1
        section.evaluate("e => e.scrollIntoView({block: 'start'})")
        pg.screenshot(path=str(ARTIFACTS / "decisions_report_evidence.png"))
