"""A real browser against a real server: Debian's chromium driven by playwright.

Starts ``streamlit run app.py`` on a free loopback port, clicks through the pages as a
person does and asserts the numbers they show (the same after every page switch, an
option changed on one page used by all, restored by a reload), opens every page by
its own URL, uploads a broken run file through the real uploader, and saves
screenshots to ``test-artifacts/`` for a person to look at. Clicks made before the page
has finished loading, or while a script runs, must all take effect. On the Data,
Metrics, Trend and Metric lab pages the tab icon is the app's own inline SVG and every
Material icon is drawn from the app's own font (:func:`_icons_are_drawn_here`). The
tests' chromium reaches no host but the loopback, every browser context records any
request to another host (``browser_support.NetworkGuard``, itself tested here) and
none may have been attempted. Several checks share one page load where the load itself is
not what is tested. Server, chromium and waits: ``tests/browser_support.py`` (the
``server`` and ``browser`` fixtures: ``tests/conftest.py``); hostile names:
``tests/test_browser_hostile.py``.
"""

from __future__ import annotations

import re

import pytest
from browser_support import (
    ARTIFACTS,
    MENU,
    ROOT,
    NetworkGuard,
    guarded_page,
    nav,
    no_exception,
    require_chromium,
    script_run,
    settle,
    shown,
    shows_value,
    view_link,
)

require_chromium()

GRADE_1 = re.compile("grade (≥|>=) 1")


@pytest.fixture(scope="module")
def page(browser):
    """One page (one Streamlit session) for the tests of this module, in a context that
    records every request to another host; none may have been attempted at the end."""
    with guarded_page(browser, height=1000, timeout=45_000) as pg:
        yield pg


def _table(pg) -> dict[tuple[str, str], str]:
    """The first ``st.table`` of the page: (row label, column) -> cell text."""
    rows = pg.locator('[data-testid="stTable"]').first.evaluate(
        "t => [...t.querySelectorAll('tr')].map("
        "r => [...r.querySelectorAll('th,td')].map(c => c.innerText.trim()))")
    head = rows[0]
    return {(r[0], head[i]): r[i] for r in rows[1:] for i in range(1, len(r))}


def _rel_level(pg, value: str, where: str = "") -> None:
    """Wait until the sidebar's options show the relevance level ``value``."""
    shows_value(pg.locator('[data-testid="stSidebar"] input[type="number"]').first, value,
                where=where)


def _set_rel_level(pg, value: str) -> None:
    sidebar = pg.locator('[data-testid="stSidebar"]')
    box = sidebar.locator('input[type="number"]').first
    if not box.is_visible():
        sidebar.get_by_text("Evaluation options").click()
    box.fill(value)
    with script_run(pg):
        box.press("Enter")


def _choose_upload(pg, server: str):
    """Open the Data page and choose Upload; returns the file inputs (qrels, runs, metadata)."""
    pg.goto(server)
    pg.get_by_text("run_bm25.txt").filter(visible=True).first.wait_for()
    settle(pg)
    pg.get_by_text("Upload", exact=True).first.click()  # once: a click is never lost
    inputs = pg.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.first.wait_for(state="attached")
    settle(pg)
    return inputs


def _core_means(options) -> dict[tuple[str, str], float]:
    from ireval_core import evaluate
    from ireval_core.io import read_qrels, read_runs
    sample = ROOT / "sample_data"
    runs = [r for p in sorted(sample.glob("run_*.txt")) for r in read_runs(p)]
    res = evaluate(read_qrels(sample / "qrels.txt"), runs, ["P@10", "AP", "nDCG@10"],
                   options=options)
    return {(s, m): res.mean(s, m) for s in res.systems for m in ("P@10", "AP", "nDCG@10")}


def _assert_metrics(pg, expected: dict[tuple[str, str], float]) -> None:
    table = _table(pg)
    for key, value in expected.items():
        assert table[key].startswith(f"{value:.4f}"), (key, table[key], value)


_ICONS = """() => {
  const faces = [...document.fonts].filter(f => f.family.replace(/"/g, '') ===
                                                'Material Symbols Rounded');
  const icons = [...document.querySelectorAll('[data-testid="stIconMaterial"]')]
    .filter(e => e.offsetParent !== null)
    .map(e => {
      const r = e.getBoundingClientRect();
      return {name: e.textContent, width: r.width,
              size: parseFloat(getComputedStyle(e).fontSize),
              font: getComputedStyle(e).fontFamily};
    });
  return {faces: faces.map(f => f.status), icons};
}"""


def _icons_are_drawn_here(pg, path: str) -> None:
    """Issue 13: every page's own Material icon became the tab icon, fetched from
    fonts.gstatic.com (a broken icon offline). The page just opened at ``path``: its tab
    icon is the app's own SVG, inline (a data URL that decodes to an image), and the
    Material Symbols font comes from the app's server: each icon is drawn as one glyph
    (about 1 em wide; the unrendered ligature, e.g. "database", would be several em). The
    page's guard (:func:`page`) asserts that no request to another host was attempted."""
    pg.wait_for_function(
        "() => document.querySelector(\"link[rel~='icon']\")?.href.startsWith('data:')")
    settle(pg)
    favicon = pg.evaluate("() => document.querySelector(\"link[rel~='icon']\").href")
    assert favicon.startswith("data:image/svg+xml"), path
    size = pg.evaluate("async src => { const i = new Image(); i.src = src;"
                       " await i.decode(); return [i.naturalWidth, i.naturalHeight]; }",
                       favicon)
    assert size[0] > 0 and size[1] > 0
    found = pg.evaluate(_ICONS)
    assert found["faces"] and set(found["faces"]) == {"loaded"}, path
    nav_icons = [i for i in found["icons"] if i["name"] in ("database", "table_chart")]
    assert len(nav_icons) == 2, path  # the sidebar's Data and Metrics icons
    for icon in found["icons"]:
        assert "Material Symbols Rounded" in icon["font"], icon
        assert 0.5 * icon["size"] <= icon["width"] <= 1.5 * icon["size"], icon


def test_numbers_hold_across_page_switches(page, server):
    """The Data page opened by the app's address shows the sample (and its icons,
    :func:`_icons_are_drawn_here`); then issue 8: Data, Metrics, Compare, Metrics,
    Curves with default options, the same numbers after every switch."""
    from ireval_core import EvalOptions
    expected = _core_means(EvalOptions())
    assert f"{expected[('bm25', 'P@10')]:.4f}" == "0.4746"
    page.goto(server)
    page.get_by_text("run_bm25.txt").filter(visible=True).first.wait_for()
    settle(page)
    no_exception(page)
    body = shown(page, "narrow_recall", "neural_rerank")
    assert "narrow_recall" in body and "neural_rerank" in body
    page.screenshot(path=str(ARTIFACTS / "data.png"), full_page=True)
    _icons_are_drawn_here(page, "")
    for title in ("Metrics", "Compare", "Metrics", "Curves", "Queries", "Data", "Metrics"):
        nav(page, title)
        no_exception(page)
        _rel_level(page, "1", title)
        body = shown(page, GRADE_1)
        assert "grade ≥ 1" in body or "grade >= 1" in body, title
        if title == "Metrics":
            _assert_metrics(page, expected)
        if title == "Curves":
            assert "No ROC curve" not in body
            # an ROC legend entry is drawn
            page.get_by_text("AUC 0.").filter(visible=True).first.wait_for()
    page.screenshot(path=str(ARTIFACTS / "metrics_after_switches.png"), full_page=True)


def test_option_change_holds_across_pages_and_reload(page, server):
    from ireval_core import EvalOptions
    expected = _core_means(EvalOptions(rel_level=2))
    page.goto(server)
    page.get_by_text("run_bm25.txt").filter(visible=True).first.wait_for()
    settle(page)
    nav(page, "Compare")
    _set_rel_level(page, "2")
    assert "rel=2" in page.url
    for title in ("Metrics", "Curves", "Metrics"):
        nav(page, title)
        no_exception(page)
        _rel_level(page, "2", title)
    _assert_metrics(page, expected)
    page.reload()
    page.get_by_text("Mean per run").filter(visible=True).first.wait_for()
    settle(page)
    _rel_level(page, "2")
    _assert_metrics(page, expected)
    page.screenshot(path=str(ARTIFACTS / "metrics_rel2_reloaded.png"), full_page=True)
    _set_rel_level(page, "1")  # leave the shared browser page as the other tests expect
    assert "rel=" not in page.url


def test_a_link_opens_the_same_view_in_a_fresh_browser(page, server):
    """The Queries page opened by its address (as :func:`test_every_page_renders` opens
    the others); copy the link of a view, open it in a new browser context (no session,
    no cookies)."""
    page.goto(f"{server}/queries")
    page.get_by_text("Run A").filter(visible=True).first.wait_for()
    settle(page)
    _renders(page, "queries", "relevant document(s)")
    # its input opened, as test_browser_hostile picks options (a click on the whole box
    # once left the list unopened under load: no option within 45 s)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Run A").locator("input").click()
    with script_run(page):
        page.get_by_role("option", name="neural_rerank").click()
    assert "a=neural_rerank" in page.url
    link = view_link(page)
    assert link == page.url
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    guard = NetworkGuard(other)
    fresh = other.new_page()
    fresh.set_default_timeout(45_000)
    fresh.goto(link)
    fresh.get_by_text("neural_rerank").filter(visible=True).first.wait_for()
    no_exception(fresh)
    # the heading names both runs: B − A with A = neural_rerank from the link
    fresh.get_by_text("narrow_recall − neural_rerank on nDCG@10").filter(
        visible=True).first.wait_for()
    fresh.screenshot(path=str(ARTIFACTS / "queries_from_link.png"), full_page=True)
    other.close()
    assert guard.blocked == []


def test_the_link_box_follows_menu_moves(page, server):
    """After moving with the menu (Labeling data -> Trend -> Data -> Metrics), the sidebar's
    "Link to this view" is the address the browser shows: it once read
    ``/labels_/labels_trend`` after the move from ``/labels_data`` (Streamlit took the page
    off the path as a suffix), an address that does not load."""
    page.goto(f"{server}/labels_data")
    # "Label rows" counted labels, not rows (issue 18)
    page.get_by_text("Labeled rows").filter(visible=True).first.wait_for()
    settle(page)
    _renders(page, "labels_data", "Labeled rows")
    sidebar = page.locator('[data-testid="stSidebar"]')
    for title in ("Trend", "Data", "Metrics"):
        with script_run(page):
            sidebar.locator('[data-testid="stPageLink"]').get_by_text(title,
                                                                      exact=True).click()
        link = view_link(page)
        assert link == page.url, (title, link, page.url)
        no_exception(page)


def test_meeting_report_downloads_and_opens_offline(page, server, tmp_path):
    """The Meeting page opened by its address; its report downloaded and opened offline."""
    page.goto(f"{server}/meeting")
    button = page.get_by_text("Download the meeting report (HTML)")
    button.wait_for()
    settle(page)
    _renders(page, "meeting", "meeting report")
    with page.expect_download(timeout=60_000) as info:
        button.click()
    path = tmp_path / "report.html"
    info.value.save_as(path)
    html = path.read_text()
    assert "bm25" in html and "Recall check" in html
    offline = page.context.browser.new_context(offline=True)
    report = offline.new_page()
    requests: list[str] = []
    report.on("request", lambda r: requests.append(r.url))
    report.goto(path.as_uri())
    report.wait_for_selector(".js-plotly-plot")
    report.wait_for_timeout(1000)
    assert [u for u in requests if not u.startswith("file:")] == []
    assert report.locator(".js-plotly-plot").count() >= 3
    report.screenshot(path=str(ARTIFACTS / "meeting_report.png"))
    offline.close()


def test_saved_upload_survives_a_reload(page, server):
    """Upload, save to the workspace, reload: the same data, not the bundled sample."""
    inputs = _choose_upload(page, server)
    inputs.nth(0).set_input_files(str(ROOT / "sample_data" / "qrels.txt"))
    settle(page)
    inputs.nth(1).set_input_files(str(ROOT / "sample_data" / "run_narrow.txt"))
    page.get_by_text("Save to the workspace").filter(visible=True).first.wait_for()
    settle(page)
    assert "a reload of the page loses these files" in shown(
        page, "a reload of the page loses these files")
    page.get_by_label("Name", exact=True).fill("narrow only")
    page.get_by_label("Your name").fill("ana")
    page.get_by_role("button", name="Save").click()
    page.get_by_text("These files are saved in the workspace").filter(visible=True).first.wait_for()
    settle(page)
    assert "ds=" in page.url
    page.reload()
    # the saved files, opened again
    page.get_by_text("run_narrow.txt").filter(visible=True).first.wait_for()
    settle(page)
    assert "run_bm25.txt" not in page.inner_text("body")
    no_exception(page)
    nav(page, "Metrics")
    table = _table(page)
    assert {system for system, _ in table} == {"narrow_recall"}  # not the 3-run sample
    assert "Sample data" not in page.inner_text("body")
    page.screenshot(path=str(ARTIFACTS / "saved_after_reload.png"), full_page=True)
    nav(page, "Data")  # leave the shared page on the Data page, sample source again
    page.get_by_text("Use the bundled sample data").first.click()
    settle(page)


def _renders(pg, path: str, expect: str) -> None:
    """The page just opened at ``path`` shows ``expect`` and no exception; screenshot."""
    # visible: a short word ("GSB") also matches the hidden span holding the page's URL
    pg.get_by_text(expect).filter(visible=True).first.wait_for()
    no_exception(pg)
    pg.screenshot(path=str(ARTIFACTS / f"{path}.png"), full_page=True)


# Every page is opened by its own address once in a fresh session: here, or where another
# test opens it so anyway (a page load is seconds of the browser's CPU): Compare, Queries,
# Meeting and Labeling data in this module's tests that start there; Model judge, Raters,
# Label changes and Side by side in test_browser_labels.test_labeling_page_screenshot
# (the same texts asserted there, with their charts drawn).
@pytest.mark.parametrize(("path", "expect"), [
    ("metrics", "nDCG@10"),
    ("curves", "ROC"),
    ("rounds", "To label next"),
    ("ndcg_vs_dcg", "DCG@10"),
    ("labels_trend", "Offline vs online"),
    ("efficiency", "Pareto"),
    ("lab", "Metric lab"),
])
def test_every_page_renders(page, server, path, expect):
    page.goto(f"{server}/{path}")
    page.get_by_text(expect).filter(visible=True).first.wait_for()
    settle(page)
    _renders(page, path, expect)
    if path in ("metrics", "labels_trend", "lab"):
        _icons_are_drawn_here(page, path)
    if path == "lab":
        page.locator(MENU).screenshot(path=str(ARTIFACTS / "icons_nav.png"))
        page.screenshot(path=str(ARTIFACTS / "icons_lab.png"))


def test_broken_upload_shows_file_and_line(page, server, tmp_path):
    good_qrels = ROOT / "sample_data" / "qrels.txt"
    broken = tmp_path / "broken.run"
    broken.write_text("q001 Q0 d1 1 2.5 mine\nq001 Q0 d2 2\n")
    inputs = _choose_upload(page, server)
    inputs.nth(0).set_input_files(str(good_qrels))
    settle(page)
    inputs.nth(1).set_input_files([str(broken), str(ROOT / "sample_data" / "run_bm25.txt")])
    page.get_by_text("broken.run:2").filter(visible=True).first.wait_for()
    settle(page)
    no_exception(page)
    body = shown(page, "expected 6 columns", "bm25")
    assert "expected 6 columns" in body
    assert "bm25" in body  # the good run stays loaded next to the broken one
    page.screenshot(path=str(ARTIFACTS / "upload_error.png"), full_page=True)


def test_early_clicks_are_not_lost(browser, server):
    """Issue 13: a click on Upload before the first run finished was lost (5 of 5).

    In three new sessions (each loads the page's code afresh, as a person's first visit
    does), click "Upload" the moment the word is on the screen, without waiting for
    the script run or the radio's code, and choose the qrels file the moment its
    uploader exists: every click and every file takes effect the first time. The word
    used to be, for the first seconds, the bold **Upload** of the sample's caption,
    not the radio, and a click on it did nothing.
    """
    took_effect = []
    for attempt in range(3):
        with guarded_page(browser, height=1000, timeout=45_000) as pg:
            pg.goto(server)
            upload = pg.get_by_text("Upload", exact=True).first
            upload.click()
            assert upload.evaluate("e => !!e.closest('[data-testid=\"stRadio\"]')"), attempt
            qrels = pg.locator('[data-testid="stFileUploader"] input[type="file"]').first
            qrels.wait_for(state="attached")
            qrels.set_input_files(str(ROOT / "sample_data" / "qrels.txt"))
            pg.get_by_text("qrels: 59 queries, 3,018 judgments").filter(
                visible=True).first.wait_for()
            settle(pg)
            took_effect.append(pg.get_by_role("radio", name="Upload").is_checked())
            no_exception(pg)
    assert took_effect == [True] * 3


def test_option_changed_while_the_page_runs_is_kept(page, server):
    """Change the relevance level in the sidebar while the Compare page is computing
    (a million resamples: the spinner is on screen): the new level is applied, shown,
    put in the link, and the page is computed with it. The page is opened by its
    address first (as :func:`test_every_page_renders` opens the others)."""
    page.goto(f"{server}/compare")
    page.get_by_text("Resamples").filter(visible=True).first.wait_for()
    settle(page)
    _renders(page, "compare", "neural_rerank")
    tests = page.locator('[data-testid="stMultiSelect"]').filter(has_text="Tests")
    tests.locator("input").click()
    page.get_by_role("option", name="bootstrap").click()
    page.keyboard.press("Escape")
    settle(page)
    sidebar = page.locator('[data-testid="stSidebar"]')
    level = sidebar.locator('input[type="number"]').first
    if not level.is_visible():
        sidebar.get_by_text("Evaluation options").click()
    resamples = page.get_by_role("spinbutton", name="Resamples")
    resamples.fill("1000000")
    resamples.press("Enter")
    spinner = page.get_by_text("with 1,000,000 resamples")
    spinner.wait_for()  # the script is computing now
    level.fill("2")
    assert spinner.is_visible()  # still computing when the new level is entered
    level.press("Enter")
    page.wait_for_timeout(300)
    settle(page)
    no_exception(page)
    _rel_level(page, "2")
    assert "rel=2" in page.url
    body = shown(page, re.compile("grade (≥|>=) 2"))
    assert "grade ≥ 2" in body or "grade >= 2" in body
    shows_value(resamples, "1000000")  # the earlier change is kept too
    page.screenshot(path=str(ARTIFACTS / "compare_option_during_run.png"), full_page=True)
    resamples.fill("10000")  # leave the shared page as the other tests expect
    with script_run(page):
        resamples.press("Enter")
    _set_rel_level(page, "1")



def test_the_guard_records_and_the_browser_refuses_other_hosts(browser, server):
    """The network guard the other tests rely on: in a context of the tests' chromium, a
    fetch, an image and a WebSocket to other hosts (by name, IPv4 and IPv6 address) each
    fail without reaching their host (the browser's proxy refuses them) and are each
    recorded in ``blocked``, in order; a request to the app's server is let through and
    counted in ``allowed``."""
    other = ["http://evil.example/x", "http://93.184.216.34/y", "https://www.evil.example/z",
             "http://[2606:4700::1]/w"]
    context = browser.new_context()
    guard = NetworkGuard(context)
    pg = context.new_page()
    failures: dict[str, str] = {}
    pg.on("requestfailed", lambda r: failures.setdefault(r.url, r.failure or ""))
    pg.goto(f"{server}/_stcore/health")
    said = pg.evaluate("""async urls => {
      const out = [];
      for (const u of urls) {
        try { await fetch(u, {mode: 'no-cors'}); out.push('reached'); }
        catch (e) { out.push('failed'); }
      }
      out.push(await new Promise(done => { const w = new WebSocket('ws://evil.example/s');
        w.onerror = () => done('failed'); w.onopen = () => done('reached'); }));
      out.push(await new Promise(done => { const i = new Image();
        i.onerror = () => done('failed'); i.onload = () => done('reached');
        i.src = 'http://198.51.100.7/i.png'; }));
      return out; }""", other)
    context.close()
    assert said == ["failed"] * 6
    assert guard.blocked == [*other, "ws://evil.example/s", "http://198.51.100.7/i.png"]
    assert {failures[u] for u in guard.blocked if u.startswith("http")} == {
        "net::ERR_PROXY_CONNECTION_FAILED"}
    assert guard.allowed >= 1  # the app's health address
