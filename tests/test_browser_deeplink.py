"""Deep links opened first on a fresh server, in a real browser (Debian's chromium).

Issue 20: with a ``pages/`` folder beside ``app.py`` the first script run of a new server
process took Streamlit's pages-folder path, so an app routing with ``st.navigation``
showed a deep link opened first after a start without its frame, or with a "Page not
found" dialog. The app is now Streamlit's own multipage layout and every page draws the
frame itself (``ireval_app.frame``). Each test here starts its own ``streamlit run
app.py`` (the only request before the link is the health check, which runs no script)
and opens a link as the server's first page: the page, its sidebar (menu, the options
the link carries, the link box) and no "Page not found". Screenshots go to
``test-artifacts/deeplink_*.png``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from browser_support import (
    ARTIFACTS,
    MENU,
    app_server,
    guarded_page,
    no_exception,
    require_chromium,
    settle,
    shown,
    shows_value,
)

require_chromium()


@pytest.fixture
def fresh_server(tmp_path) -> Iterator[str]:
    """A new server process for each test: the link is its first page."""
    with app_server(tmp_path / "workspace.db") as url:
        yield url


@pytest.fixture
def page(browser):
    with guarded_page(browser, height=1000, timeout=60_000) as pg:
        yield pg


def _frame(pg) -> str:
    """Assert the frame is drawn (menu with every section, the link box) and no "Page not
    found"; returns the sidebar's text."""
    sidebar = pg.locator('[data-testid="stSidebar"]')
    menu = sidebar.locator(MENU)
    menu.wait_for()
    text = menu.inner_text()
    for entry in ("Evaluate", "Data", "Metrics", "Monthly labeling", "Trend", "Meet and learn",
                  "Metric lab"):
        assert entry in text, entry
    assert sidebar.get_by_text("Link to this view").count() == 1
    assert pg.get_by_text("Page not found").count() == 0
    no_exception(pg)
    return sidebar.inner_text()


def test_metrics_link_with_options_first_after_a_start(page, fresh_server):
    page.goto(f"{fresh_server}/metrics?rel=2&measures=AP&measures=P@10")
    page.get_by_text("Mean per run").filter(visible=True).first.wait_for()
    settle(page)
    _frame(page)
    # the page: the link's measures, computed under the link's relevance level
    assert page.locator('[data-testid="stTable"]').first.inner_text().count("AP") >= 1
    body = shown(page, re.compile("grade (≥|>=) 2"))
    assert "grade ≥ 2" in body or "grade >= 2" in body
    # the options panel shows the option from the URL
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Evaluation options").click()
    level = sidebar.locator('input[type="number"]').first
    level.wait_for()
    shows_value(level, "2")
    assert "/metrics?" in page.url and "rel=2" in page.url
    page.screenshot(path=str(ARTIFACTS / "deeplink_metrics_rel2.png"), full_page=True)


def test_labeling_link_first_after_a_start(page, fresh_server):
    page.goto(f"{fresh_server}/labels_trend?k=5")
    page.get_by_text("Offline vs online").filter(visible=True).first.wait_for()
    settle(page)
    sidebar = _frame(page)
    assert "Evaluation options" not in sidebar  # not on the labeling pages
    body = shown(page, "DCG@5")
    assert "DCG@5" in body and "DCG@10" not in body
    assert "k=5" in page.url
    page.screenshot(path=str(ARTIFACTS / "deeplink_labels_trend_k5.png"), full_page=True)


def test_a_refused_value_in_a_first_link_is_noted(page, fresh_server):
    page.goto(f"{fresh_server}/labels_trend?k=0")
    page.get_by_text("Offline vs online").filter(visible=True).first.wait_for()
    settle(page)
    _frame(page)
    body = shown(page, "Not applied: k=0 (not an int from 1 to 1000)", "DCG@10")
    assert "Not applied: k=0 (not an int from 1 to 1000)" in body
    assert "DCG@10" in body and "DCG@1 " not in body
    page.screenshot(path=str(ARTIFACTS / "deeplink_labels_trend_k0.png"), full_page=True)


def test_the_old_data_address_opens_the_data_page(page, fresh_server):
    page.goto(f"{fresh_server}/data?rel=2")
    page.get_by_text("run_bm25.txt").filter(visible=True).first.wait_for()
    # the radio's code loaded
    page.get_by_text("Use the bundled sample data").filter(visible=True).first.wait_for()
    settle(page)
    _frame(page)
    assert page.locator("h1").first.inner_text().strip() == "Data"
    assert page.url.rstrip("/").endswith("?rel=2") and "/data" not in page.url
    page.screenshot(path=str(ARTIFACTS / "deeplink_old_data.png"), full_page=True)
