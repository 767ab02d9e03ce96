"""What a meeting saw comes back, in a real browser (Debian's chromium): on Compare a
non-default measure, test and pair; a decision recorded on it; the decision memo
downloaded from the Meeting page; its "Live view" link opened in a fresh browser context
(no session, no cookies) shows the same pair, tests and measures and the same numbers.
The same for measures typed under Metrics' "More measures", through the link box. The
module's server opens a workspace in which the sample is saved (a real SQLite file):
decisions are kept with a saved dataset.
Screenshots: ``test-artifacts/links_compare.png``, ``links_compare_reopened.png``,
``links_meeting.png`` and ``links_metrics_reopened.png``."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    app_server,
    guarded_page,
    no_exception,
    require_chromium,
    script_run,
    settle,
    shows_value,
    view_link,
)

require_chromium()
ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")

PAIR = "neural_rerank − narrow_recall on AP"
"""Not the default pair (the first: narrow_recall − bm25 on nDCG@10)."""


def _key(key: str) -> str:
    """The CSS class Streamlit gives the element of a widget keyed ``key``."""
    return ".st-key-" + re.sub(r"[^A-Za-z0-9_-]", "-", key)


def _pick(pg, key: str, text: str) -> None:
    """Type ``text`` into the select or multiselect keyed ``key`` and take the option."""
    box = pg.locator(_key(key)).locator("input").first
    box.click()
    box.fill(text)
    with script_run(pg):
        pg.get_by_role("option", name=text, exact=True).first.click()


def _compare_view(pg) -> dict[str, object]:
    """What the Compare page shows: the selections and the numbers of the decision panels."""
    from ireval_app.keys import compare as keys

    def chips(key: str) -> str:  # a multiselect: its label and chips
        return pg.locator(_key(key)).inner_text().strip()

    def chosen(key: str) -> str:  # a select: the value it shows
        return pg.locator(_key(key)).locator("input").input_value()

    return {"measures": chips(keys.MEASURES), "tests": chips(keys.TESTS),
            "pair": chosen(keys.PAIR), "report test": chosen(keys.REPORT_TEST),
            "resamples": pg.locator(_key(keys.RESAMPLES)).locator("input").input_value(),
            "heading": pg.get_by_text("Deciding:", exact=False).first.inner_text(),
            "metrics": pg.locator('[data-testid="stMetric"]').all_inner_texts(),
            "report table": pg.locator('[data-testid="stTable"]').first.inner_text()}


WINDOW = {"width": 1400, "height": 1000}
SHOT = {"width": 1400, "height": 1400}
"""The window of a session, and the taller one of its screenshots, made just before them:
chromium draws every frame of a load as tall as its window."""


@pytest.fixture(scope="module")
def saved(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """The app on a workspace holding the sample, saved (decisions need a saved dataset):
    its URL and the dataset's short id. One server for the tests of this module."""
    from _apps import sample_files

    from ireval_core.workspace import Workspace

    path = tmp_path_factory.mktemp("workspace") / "workspace.db"
    with Workspace.open(str(path)) as ws:
        short_id = ws.save_dataset(sample_files(), name="sample", saved_by="ana").short_id
    with app_server(path) as url:
        yield url, short_id


def test_a_decisions_live_view_opens_the_same_comparison(browser, saved, tmp_path) -> None:
    from ireval_app.keys import compare as keys

    server, dataset = saved
    with guarded_page(browser, height=1000, timeout=90_000) as pg:
        # 500 resamples (not 10,000): quicker, and a number the link must carry
        pg.goto(f"{server}/compare?ds={dataset}&resamples=500")
        pg.get_by_text("Pair and measure").filter(visible=True).first.wait_for()
        settle(pg)
        _pick(pg, keys.MEASURES, "AP")
        _pick(pg, keys.TESTS, "sign test")
        _pick(pg, keys.PAIR, PAIR)
        _pick(pg, keys.REPORT_TEST, "sign test")
        seen = _compare_view(pg)
        assert seen["pair"] == PAIR and seen["report test"] == "sign test"
        assert seen["resamples"] == "500"
        assert "sign test" in str(seen["tests"]) and "AP" in str(seen["measures"])
        assert seen["heading"] == "Deciding: neural_rerank against narrow_recall on AP"
        form = pg.locator(_key(keys.DECISION_TEXT)).locator("textarea")
        form.scroll_into_view_if_needed()
        form.fill("Ship neural_rerank")
        pg.locator(_key(keys.DECISION_AUTHOR)).locator("input").fill("ana")
        pg.get_by_role("button", name="Record the decision").click()
        pg.get_by_text("Recorded, with the evidence above").filter(visible=True).first.wait_for()
        settle(pg)
        pg.set_viewport_size(SHOT)
        pg.get_by_text("Deciding:", exact=False).first.scroll_into_view_if_needed()
        pg.screenshot(path=str(ARTIFACTS / "links_compare.png"))
        pg.set_viewport_size(WINDOW)
        no_exception(pg)
        # the Meeting page with one measure: the memo's evidence of every pair is quicker
        pg.goto(f"{server}/meeting?ds={dataset}&measures=AP")
        pg.get_by_text("Ship neural_rerank").filter(visible=True).first.wait_for()
        settle(pg)
        with pg.expect_download(timeout=120_000) as info:
            pg.get_by_role("button", name="Download the decision memo (Markdown)").click()
        memo = tmp_path / "memo.md"
        info.value.save_as(memo)
        [link] = re.findall(r"^Live view: `(.+)`$", memo.read_text(), flags=re.MULTILINE)
        # the Meeting page's own "Live view" beside the decision is the memo's link
        button = pg.get_by_role("link", name="Live view")
        assert button.count() == 1 and button.get_attribute("href") == link
        pg.set_viewport_size(SHOT)
        button.scroll_into_view_if_needed()
        pg.screenshot(path=str(ARTIFACTS / "links_meeting.png"))
    assert link.startswith(f"{server}/compare?") and "pair=" in link, link
    with guarded_page(browser, height=1000, timeout=90_000) as fresh:
        fresh.goto(link)
        fresh.get_by_text("Deciding:", exact=False).filter(visible=True).first.wait_for()
        settle(fresh)
        no_exception(fresh)
        assert "Not applied" not in fresh.inner_text("body")
        for key, shown in ((keys.PAIR, seen["pair"]), (keys.REPORT_TEST, seen["report test"]),
                           (keys.RESAMPLES, seen["resamples"])):
            shows_value(fresh.locator(_key(key)).locator("input"), str(shown))
        assert _compare_view(fresh) == seen
        fresh.set_viewport_size(SHOT)
        fresh.get_by_text("Deciding:", exact=False).first.scroll_into_view_if_needed()
        fresh.screenshot(path=str(ARTIFACTS / "links_compare_reopened.png"))


def test_typed_measures_come_back_from_the_metrics_link(browser, saved) -> None:
    from ireval_app.keys import metrics as keys

    server, _ = saved
    with guarded_page(browser, height=1000, timeout=90_000) as pg:
        pg.goto(f"{server}/metrics")
        pg.get_by_text("Mean per run").filter(visible=True).first.wait_for()
        settle(pg)
        typed = pg.locator(_key(keys.EXTRA)).locator("input")
        typed.fill("IPrec@0.6; 11pt")
        with script_run(pg):
            typed.press("Enter")
        table = pg.locator('[data-testid="stTable"]').first.inner_text()
        assert "11pt" in table or "11-point" in table, table
        link = view_link(pg)
        assert link == pg.url and "more=" in link
    with guarded_page(browser, height=1000, timeout=90_000) as fresh:
        fresh.goto(link)
        fresh.get_by_text("Mean per run").filter(visible=True).first.wait_for()
        settle(fresh)
        no_exception(fresh)
        shows_value(fresh.locator(_key(keys.EXTRA)).locator("input"), "IPrec@0.6; 11pt")
        assert fresh.locator('[data-testid="stTable"]').first.inner_text() == table
        fresh.screenshot(path=str(ARTIFACTS / "links_metrics_reopened.png"), full_page=True)
