"""A real browser at 1280 x 800: no label on any page is cut short.

At that size (a laptop, the sidebar open) buttons in narrow columns read "Download …"
(which one is CSV, which JSON?), "Results to label…", "Batch to label (…", "Per-query
values (Excel, a sheet p…", and metric labels "Judged docum…", "Minimum detectable
differ…". Only a browser shows it: the test looks for text that CSS cuts with an
ellipsis (``text-overflow: ellipsis`` and wider than its box) on every page of the menu,
and for a table of the nDCG vs DCG page that scrolls sideways (its worked example's
DCG@rank column was out of sight).
The chips of a multiselect are left out: Streamlit cuts a long chip and its menu shows
the whole name. Server, chromium and waits: ``tests/browser_support.py``.
"""

from __future__ import annotations

from browser_support import guarded_page, nav, no_exception, require_chromium, settle

require_chromium()

PAGES = ("Data", "Metrics", "Curves", "Compare", "Queries", "Efficiency", "Qrels rounds",
         "nDCG vs DCG", "Labeling data", "Trend", "Raters", "Label changes", "Side by side",
         "Model judge", "Meeting", "Metric lab")

CUT = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter(e => e.offsetParent !== null && e.children.length <= 1 && e.innerText
          && !e.closest('[data-testid="stMultiSelectTagsContainer"]')
          && e.scrollWidth > e.clientWidth + 1
          && getComputedStyle(e).textOverflow === 'ellipsis')
  .map(e => e.innerText.trim())"""
"""The texts of the page shown cut short with an ellipsis (multiselect chips left out)."""


def test_no_label_is_cut_short_at_1280_by_800(server, browser):
    # the server and chromium of conftest; the page blocks and checks requests elsewhere
    with guarded_page(browser, width=1280, height=800, timeout=60_000) as page:
        page.goto(server)
        page.get_by_text("run_bm25.txt").first.wait_for()
        settle(page)
        cut: dict[str, list[str]] = {}
        for title in PAGES:
            if title != "Data":
                nav(page, title)
            no_exception(page)
            if found := page.evaluate(CUT):
                cut[title] = found
            if title == "nDCG vs DCG":  # its tables are narrow: none may need scrolling
                page.get_by_text("A worked example").wait_for()
                settle(page)
                frames = page.locator('[data-testid="stMain"] [data-testid="stDataFrame"]')
                assert frames.count() == 3
                for i in range(3):
                    frames.nth(i).scroll_into_view_if_needed()
                    scroller = frames.nth(i).locator(".dvn-scroller")
                    width, shown = scroller.evaluate("e => [e.scrollWidth, e.clientWidth]")
                    assert width <= shown + 1, f"table {i} of nDCG vs DCG scrolls sideways"
        # the labels this test was written for are on their pages, whole
        nav(page, "Compare")
        for label in ("Download CSV", "Download JSON", "Minimum detectable difference"):
            page.get_by_text(label, exact=True).first.wait_for()
    assert cut == {}, f"labels cut short at 1280 x 800: {cut}"
