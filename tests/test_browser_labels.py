"""Real browser: every labeling page changed for issue 18 (Trend with the rater-noise
band, Model judge, Raters, Labeling data, Side by side) on the bundled sample, one
full-page screenshot each in ``test-artifacts/`` (looked at by a person)."""

from __future__ import annotations

import pytest
from browser_support import (
    ARTIFACTS,
    NetworkGuard,
    charts_drawn,
    guarded_page,
    nav,
    no_exception,
    page_screenshot,
    require_chromium,
    settle,
    shown,
)

require_chromium()


@pytest.fixture(scope="module")
def page(browser):
    with guarded_page(browser, height=1000, timeout=90_000) as pg:
        yield pg


@pytest.mark.parametrize(("path", "wait", "expected"), [
    ("labels_trend?alpha=0.01&qband=1&estimate=ppi", "Offline vs online",
     ["rater noise (3 raters resampled as a whole)", "Anchor items 2026-06", "α",
      "Model + people estimate", "Model + people (PPI++), mean DCG@10", "People's labels",
      "the PPI verdict is used"]),
    ("labels_judge", "Disagreements", ["Model judge", "it favours treatment",
                                       "people's consensus label", "Model + people estimate",
                                       "the PPI verdict is used"]),
    ("labels_raters", "One rater against the others", ["chen against the other raters"]),
    ("labels_changes", "Labels that changed", ["Where the DCG change comes from"]),
    ("labels_gsb", "GSB", ["Side by side"]),
])
def test_labeling_page_screenshot(page, server, path: str, wait: str, expected: list[str]):
    """Each labeling page with charts opened by its address (test_browser opens the other
    pages so; the Labeling data page is the first page of
    :func:`test_83_conflicts_are_listed_and_a_choice_reads_them`): its texts, its charts
    drawn, a screenshot."""
    page.goto(f"{server}/{path}")
    # visible: a short word ("GSB") also matches the hidden span holding the page's URL,
    # which, once it is the first match, is waited for in vain
    page.get_by_text(wait).filter(visible=True).first.wait_for()
    settle(page)
    charts_drawn(page)  # the charts drawn, not their placeholders
    _shows(page, path, expected)


def _shows(pg, path: str, expected: list[str]) -> None:
    """The labeling page just opened at ``path`` shows each of ``expected`` (every text
    drawn, not just the one waited for), no exception and no "Go to the Labeling data
    page"; a screenshot of the whole page."""
    no_exception(pg)
    body = shown(pg, *expected)
    for text in expected:
        assert text in body, text
    assert "Go to the Labeling data page" not in body
    name = path.split("?")[0]
    page_screenshot(pg, ARTIFACTS / f"issue18_{name}.png", at_most=4200)


def test_83_conflicts_are_listed_and_a_choice_reads_them(page, server, month) -> None:
    """A month with 83 conflicts: refused with the count and the first 20 lines, the CSV
    download offered (screenshot); "One label: the rater's mean" reads it and the settings
    line states the rule. The page is first the sample's, as its address opens it (the
    labeling pages' screenshots, :func:`test_labeling_page_screenshot`)."""
    text, _ = month
    page.goto(f"{server}/labels_data")
    page.get_by_text("Rounds").filter(visible=True).first.wait_for()
    settle(page)
    _shows(page, "labels_data", ["Combine raters by", "File rows", "Labels",
                                 "One rater, one document, several lists"])
    page.get_by_text("Upload labeling files").first.click()
    settle(page)
    page.locator('input[type="file"]').first.set_input_files(
        [{"name": "五月.csv", "mimeType": "text/csv", "buffer": text.encode()}])
    page.get_by_text("83 problems").filter(visible=True).first.wait_for()
    settle(page)
    no_exception(page)
    body = shown(page, "The first 20:", "And 63 more", "All 83 problems (CSV)")
    assert "The first 20:" in body and "And 63 more" in body
    assert "All 83 problems (CSV)" in body and "Save these files" not in body
    page_screenshot(page, ARTIFACTS / "issue18_labels_data_conflicts.png",
                    at_most=4200)
    page.get_by_text("One label: the rater's mean").first.click()
    page.get_by_text("File rows").filter(visible=True).first.wait_for()
    settle(page)
    no_exception(page)
    assert "conflicts=mean" in page.url
    rule = "83 (round, query, document, rater) labeled differently"
    assert rule in shown(page, rule)
    page_screenshot(page, ARTIFACTS / "issue18_labels_data_mean.png", at_most=4200)


def _chinese(path) -> tuple[str, bytes]:
    """A sample month with its labels and query ids in Chinese (高/中/低/无, 查询0001)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    words = {"high": "高", "mid": "中", "low": "低", "none": "无"}
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        cells[2] = cells[2].replace("q", "查询")
        cells[6] = words.get(cells[6], cells[6])
        out.append(",".join(cells))
    return path.name, ("\n".join(out) + "\n").encode("utf-8")


def test_a_trend_link_holds_after_a_newer_month(browser, server) -> None:
    """Save months 1–2 as a set, copy the Trend link, add month 3 to the set, open the old
    link in a fresh browser context: the mean DCG values of months 1–2 (the core's) and
    the "Newer months exist" note; Chinese labels and queries render (screenshot)."""
    from pathlib import Path

    from ireval_core.labels import read_judgments, trend

    months = [_chinese(p) for p in sorted(
        (Path(__file__).resolve().parents[1] / "sample_data" / "labels").glob("labels_*.csv"))[:3]]
    expected = trend(read_judgments(months[:2]), k=10).table
    files = [{"name": n, "mimeType": "text/csv", "buffer": d} for n, d in months]
    first = browser.new_context(viewport={"width": 1400, "height": 1000})
    guard = NetworkGuard(first)
    pg = first.new_page()
    pg.set_default_timeout(90_000)
    pg.goto(f"{server}/labels_data")
    settle(pg)
    pg.get_by_text("Upload labeling files").first.click()
    settle(pg)
    pg.locator('input[type="file"]').first.set_input_files(files[:2])
    pg.get_by_text("Save these files to the workspace").filter(visible=True).first.wait_for()
    pg.get_by_label("Name", exact=True).fill("月度标注 2026")
    pg.get_by_label("Your name").fill("张伟")
    pg.get_by_role("button", name="Save").click()
    pg.get_by_text("version 1 of 1").filter(visible=True).first.wait_for()
    settle(pg)
    nav(pg, "Trend")
    pg.wait_for_function("() => location.search.includes('version=1')")
    link = pg.url  # the address bar: the page's link with the set and its version
    assert "source=saved" in link and "version=1" in link and "labels_trend" in link
    nav(pg, "Labeling data")
    pg.locator('input[type="file"]').first.set_input_files(files[2:])
    pg.get_by_role("button", name="Add to set 月度标注 2026").wait_for()
    pg.get_by_label("Your name").fill("李娜")
    pg.get_by_role("button", name="Add to set 月度标注 2026").click()
    pg.get_by_text("version 2 of 2").filter(visible=True).first.wait_for()
    no_exception(pg)
    first.close()

    fresh = browser.new_context(viewport={"width": 1400, "height": 1000})
    guard2 = NetworkGuard(fresh)
    old = fresh.new_page()
    old.set_default_timeout(90_000)
    old.goto(link)
    old.get_by_text("Newer months exist").filter(visible=True).first.wait_for()
    settle(old)
    charts_drawn(old)
    no_exception(old)
    body = shown(old, "version 2 adds round 2026-07")
    assert "version 2 adds round 2026-07" in body
    traces = old.evaluate("() => [...document.querySelectorAll('.js-plotly-plot')]"
                          ".flatMap(p => (p._fullData || []).map(t => ({name: t.name || '', "
                          "x: Array.from(t.x || []).map(String), "
                          "y: Array.from(t.y || [])})))")
    assert not any("2026-07" in t["x"] for t in traces)  # the link's months only
    points = [(x, t["name"], y) for t in traces
              for x, y in zip(t["x"], t["y"], strict=False) if isinstance(y, (int, float))]
    for row in expected.itertuples():  # each month's mean DCG@10, as the core computes it
        assert any(abs(y - row.dcg) < 1e-9 for x, name, y in points
                   if x == row.round and name == row.system), (row.round, row.system)
    assert any(t["name"] == "高" for t in traces)  # the grade distribution, in Chinese
    page_screenshot(old, ARTIFACTS / "issue18_trend_old_link.png", at_most=4200)
    fresh.close()
    assert guard.blocked == guard2.blocked == [], (guard.blocked, guard2.blocked)
