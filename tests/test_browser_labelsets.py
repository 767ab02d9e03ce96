"""Real browser: a labeling set grows month after month on the Labeling data page. The
first month is saved as a set, then two more months are added one after another through
Saved labeling sets (each add in the same uploader's place, as a user does every month):
no red box at any step, the uploader is empty after each add, and the set then holds
three rounds (the workspace's record and the page's versions table)."""

from __future__ import annotations

from pathlib import Path

from browser_support import (
    ARTIFACTS,
    guarded_page,
    no_exception,
    page_screenshot,
    require_chromium,
    settle,
    shown,
)

require_chromium()

MONTHS = sorted((Path(__file__).resolve().parents[1] / "sample_data" / "labels")
                .glob("labels_*.csv"))[:3]


def _file(path: Path) -> dict[str, object]:
    return {"name": path.name, "mimeType": "text/csv", "buffer": path.read_bytes()}


def _no_red_box(pg) -> None:
    no_exception(pg)
    errors = pg.locator('[data-testid="stAlertContentError"]')
    assert errors.count() == 0, errors.all_inner_texts()


def test_three_months_one_after_another(browser, server) -> None:
    with guarded_page(browser, height=1000, timeout=90_000) as pg:
        pg.goto(f"{server}/labels_data")
        settle(pg)
        pg.get_by_text("Upload labeling files").first.click()
        settle(pg)
        pg.locator('input[type="file"]').first.set_input_files([_file(MONTHS[0])])
        pg.get_by_text("Save these files to the workspace").filter(visible=True).first.wait_for()
        pg.get_by_label("Name", exact=True).fill("monthly labels")
        pg.get_by_label("Your name").fill("ana")
        pg.get_by_role("button", name="Save").click()
        pg.get_by_text("version 1 of 1").filter(visible=True).first.wait_for()
        settle(pg)
        _no_red_box(pg)
        for version, month in enumerate(MONTHS[1:], start=2):
            uploader = pg.locator('[data-testid="stFileUploader"]').filter(
                has_text="Add labeling files to monthly labels")
            assert uploader.locator('[data-testid="stFileUploaderFile"]').count() == 0
            uploader.locator('input[type="file"]').set_input_files([_file(month)])
            button = pg.get_by_role("button", name="Add to set monthly labels")
            button.wait_for()
            settle(pg)
            _no_red_box(pg)  # no round of this month in the set: no warning, no refusal
            assert "already in the set" not in pg.inner_text("body")
            button.click()
            pg.get_by_text(f"version {version} of {version}").filter(visible=True).first.wait_for()
            settle(pg)
            _no_red_box(pg)
        body = shown(pg, "Rounds: 2026-05, 2026-06, 2026-07.", "version 3 of 3",
                     "Versions of monthly labels (3)")
        assert "Rounds: 2026-05, 2026-06, 2026-07." in body
        assert "version 3 of 3" in body
        assert "Versions of monthly labels (3)" in body
        uploader = pg.locator('[data-testid="stFileUploader"]').filter(
            has_text="Add labeling files to monthly labels")
        assert uploader.locator('[data-testid="stFileUploaderFile"]').count() == 0
        page_screenshot(pg, ARTIFACTS / "labelflow_three_months.png", at_most=2400)
        # the Rounds metric of the set's newest version: three months
        metric = pg.locator('[data-testid="stMetric"]').filter(has_text="Rounds")
        assert metric.locator('[data-testid="stMetricValue"]').first.inner_text() == "3"
