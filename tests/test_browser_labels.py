"""Real browser: every labeling page changed for issue 18 (Trend with the rater-noise
band, Model judge, Raters, Labeling data, Side by side) on the bundled sample, one
full-page screenshot each in ``test-artifacts/`` (looked at by a person)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from browser_support import (
    ARTIFACTS,
    CHROMIUM,
    CHROMIUM_ARGS,
    NetworkGuard,
    app_server,
    no_exception,
    require_chromium,
    settle,
)

require_chromium()
playwright = pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    with app_server(tmp_path_factory.mktemp("ws") / "workspace.db") as url:
        yield url


@pytest.fixture(scope="module")
def page():
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 1400, "height": 4200})
        guard = NetworkGuard(context)
        pg = context.new_page()
        pg.set_default_timeout(90_000)
        yield pg
        context.close()
        browser.close()
        assert guard.blocked == [], f"requests to other hosts: {guard.blocked}"


@pytest.mark.parametrize(("path", "wait", "expected"), [
    ("labels_trend?alpha=0.01&qband=1", "Offline vs online",
     ["rater noise (3 raters resampled as a whole)", "Anchor items 2026-06", "α"]),
    ("labels_judge", "Disagreements", ["it favours treatment", "people's consensus label"]),
    ("labels_raters", "One rater against the others", ["chen against the other raters"]),
    ("labels_data", "Rounds", ["Combine raters by", "Labeled rows"]),
    ("labels_gsb", "GSB", ["Side by side"]),
])
def test_labeling_page_screenshot(page, server, path: str, wait: str, expected: list[str]):
    page.goto(f"{server}/{path}")
    page.get_by_text(wait).first.wait_for()
    settle(page)
    charts = page.locator(".js-plotly-plot")
    if path != "labels_data":
        charts.first.wait_for()  # the charts drawn, not their placeholders
    page.wait_for_timeout(1500)
    no_exception(page)
    body = page.inner_text("body")
    for text in expected:
        assert text in body, text
    assert "Go to the Labeling data page" not in body
    name = path.split("?")[0]
    page.screenshot(path=str(ARTIFACTS / f"issue18_{name}.png"), full_page=True)
