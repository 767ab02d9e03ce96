"""A real browser against a real server: Debian's chromium driven by playwright.

Starts ``streamlit run app.py`` on a free loopback port, clicks through the pages as a
person does and asserts the numbers they show (the same after every page switch, an
option changed on one page used by all, restored by a reload), opens every page by
its own URL, uploads a broken run file through the real uploader, and saves
screenshots to ``test-artifacts/`` for a person to look at.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic"]

if CHROMIUM is None:
    if os.environ.get("CI"):
        pytest.fail("chromium is not installed (make test installs it when run as root)",
                    pytrace=False)
    pytest.skip("chromium is not installed: apt-get install chromium", allow_module_level=True)
playwright = pytest.importorskip("playwright.sync_api")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    port = _free_port()
    env = {**os.environ,
           "IREVAL_WORKSPACE": str(tmp_path_factory.mktemp("workspace") / "workspace.db")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.3)
    else:
        proc.kill()
        pytest.fail(f"streamlit did not start: {proc.stdout.read() if proc.stdout else ''}")
    yield url
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def page(server: str):
    ARTIFACTS.mkdir(exist_ok=True)
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        pg = browser.new_page(viewport={"width": 1400, "height": 1000})
        pg.set_default_timeout(45_000)
        yield pg
        browser.close()


def _settle(pg) -> None:
    """Wait until Streamlit has finished running the script."""
    pg.wait_for_selector('[data-testid="stApp"]')
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    pg.wait_for_timeout(500)


def _nav(pg, title: str) -> None:
    """Switch page by clicking its entry in the sidebar navigation (same session)."""
    pg.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True).click()
    pg.wait_for_timeout(300)
    _settle(pg)


def _table(pg) -> dict[tuple[str, str], str]:
    """The first ``st.table`` of the page: (row label, column) -> cell text."""
    rows = pg.locator('[data-testid="stTable"]').first.evaluate(
        "t => [...t.querySelectorAll('tr')].map("
        "r => [...r.querySelectorAll('th,td')].map(c => c.innerText.trim()))")
    head = rows[0]
    return {(r[0], head[i]): r[i] for r in rows[1:] for i in range(1, len(r))}


def _rel_level(pg) -> str:
    """The relevance level shown in the sidebar's options."""
    return pg.locator('[data-testid="stSidebar"] input[type="number"]').first.input_value()


def _set_rel_level(pg, value: str) -> None:
    sidebar = pg.locator('[data-testid="stSidebar"]')
    box = sidebar.locator('input[type="number"]').first
    if not box.is_visible():
        sidebar.get_by_text("Evaluation options").click()
    box.fill(value)
    box.press("Enter")
    pg.wait_for_timeout(300)
    _settle(pg)


def _choose_upload(pg, server: str):
    """Open the Data page and choose Upload; returns the file inputs (qrels, runs, metadata)."""
    pg.goto(server)
    pg.get_by_text("run_bm25.txt").first.wait_for()
    _settle(pg)
    inputs = pg.locator('[data-testid="stFileUploader"] input[type="file"]')
    for _ in range(3):  # a click that lands while the script reruns can be lost: retry
        pg.get_by_text("Upload", exact=True).first.click()
        try:
            inputs.first.wait_for(state="attached", timeout=10_000)
            break
        except playwright.Error:
            continue
    _settle(pg)
    return inputs


def _no_exception(pg) -> None:
    assert pg.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in pg.inner_text("body")


def test_data_page_shows_the_sample(page, server):
    page.goto(server)
    page.get_by_text("run_bm25.txt").first.wait_for()
    _settle(page)
    _no_exception(page)
    body = page.inner_text("body")
    assert "narrow_recall" in body and "neural_rerank" in body
    page.screenshot(path=str(ARTIFACTS / "data.png"), full_page=True)


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


def test_numbers_hold_across_page_switches(page, server):
    """Issue 8: Data, Metrics, Compare, Metrics, Curves with default options."""
    from ireval_core import EvalOptions
    expected = _core_means(EvalOptions())
    assert f"{expected[('bm25', 'P@10')]:.4f}" == "0.4746"
    page.goto(server)
    page.get_by_text("run_bm25.txt").first.wait_for()
    _settle(page)
    for title in ("Metrics", "Compare", "Metrics", "Curves", "Queries", "Data", "Metrics"):
        _nav(page, title)
        _no_exception(page)
        assert _rel_level(page) == "1", title
        body = page.inner_text("body")
        assert "grade ≥ 1" in body or "grade >= 1" in body, title
        if title == "Metrics":
            _assert_metrics(page, expected)
        if title == "Curves":
            assert "No ROC curve" not in body
            page.get_by_text("AUC 0.").first.wait_for()  # an ROC legend entry is drawn
    page.screenshot(path=str(ARTIFACTS / "metrics_after_switches.png"), full_page=True)


def test_option_change_holds_across_pages_and_reload(page, server):
    from ireval_core import EvalOptions
    expected = _core_means(EvalOptions(rel_level=2))
    page.goto(server)
    page.get_by_text("run_bm25.txt").first.wait_for()
    _settle(page)
    _nav(page, "Compare")
    _set_rel_level(page, "2")
    assert "rel=2" in page.url
    for title in ("Metrics", "Curves", "Metrics"):
        _nav(page, title)
        _no_exception(page)
        assert _rel_level(page) == "2", title
    _assert_metrics(page, expected)
    page.reload()
    page.get_by_text("Mean per run").first.wait_for()
    _settle(page)
    assert _rel_level(page) == "2"
    _assert_metrics(page, expected)
    page.screenshot(path=str(ARTIFACTS / "metrics_rel2_reloaded.png"), full_page=True)
    _set_rel_level(page, "1")  # leave the shared browser page as the other tests expect
    assert "rel=" not in page.url


def test_a_link_opens_the_same_view_in_a_fresh_browser(page, server):
    """Copy the link of a view, open it in a new browser context (no session, no cookies)."""
    page.goto(f"{server}/queries")
    page.get_by_text("Run A").first.wait_for()
    _settle(page)
    page.locator('[data-testid="stSelectbox"]').filter(has_text="Run A").click()
    page.get_by_role("option", name="neural_rerank").click()
    _settle(page)
    assert "a=neural_rerank" in page.url
    sidebar = page.locator('[data-testid="stSidebar"]')
    sidebar.get_by_text("Link to this view").click()
    link = sidebar.locator('[data-testid="stCode"]').inner_text().strip()
    assert link == page.url
    other = page.context.browser.new_context(viewport={"width": 1400, "height": 1000})
    fresh = other.new_page()
    fresh.set_default_timeout(45_000)
    fresh.goto(link)
    fresh.get_by_text("neural_rerank").first.wait_for()
    _no_exception(fresh)
    # the heading names both runs: B − A with A = neural_rerank from the link
    fresh.get_by_text("narrow_recall − neural_rerank on nDCG@10").first.wait_for()
    fresh.screenshot(path=str(ARTIFACTS / "queries_from_link.png"), full_page=True)
    other.close()


def test_meeting_report_downloads_and_opens_offline(page, server, tmp_path):
    page.goto(f"{server}/meeting")
    button = page.get_by_text("Download the meeting report (HTML)")
    button.wait_for()
    _settle(page)
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
    _settle(page)
    inputs.nth(1).set_input_files(str(ROOT / "sample_data" / "run_narrow.txt"))
    page.get_by_text("Save to the workspace").first.wait_for()
    _settle(page)
    assert "a reload of the page loses these files" in page.inner_text("body")
    page.get_by_label("Name", exact=True).fill("narrow only")
    page.get_by_label("Your name").fill("ana")
    page.get_by_role("button", name="Save").click()
    page.get_by_text("These files are saved in the workspace").first.wait_for()
    _settle(page)
    assert "ds=" in page.url
    page.reload()
    page.get_by_text("run_narrow.txt").first.wait_for()  # the saved files, opened again
    _settle(page)
    assert "run_bm25.txt" not in page.inner_text("body")
    _no_exception(page)
    _nav(page, "Metrics")
    table = _table(page)
    assert {system for system, _ in table} == {"narrow_recall"}  # not the 3-run sample
    assert "Sample data" not in page.inner_text("body")
    page.screenshot(path=str(ARTIFACTS / "saved_after_reload.png"), full_page=True)
    _nav(page, "Data")  # leave the shared page on the Data page, sample source again
    page.get_by_text("Use the bundled sample data").first.click()
    _settle(page)


@pytest.mark.parametrize(("path", "expect"), [
    ("metrics", "nDCG@10"),
    ("curves", "ROC"),
    ("compare", "neural_rerank"),
    ("queries", "relevant document(s)"),
    ("rounds", "To label next"),
    ("ndcg_vs_dcg", "DCG@10"),
    ("meeting", "meeting report"),
    ("labels_data", "Label rows"),
    ("labels_trend", "Offline vs online"),
    ("labels_raters", "One rater against the others"),
    ("labels_changes", "Where the DCG change comes from"),
    ("labels_gsb", "GSB"),
    ("efficiency", "Pareto"),
    ("lab", "Metric lab"),
])
def test_every_page_renders(page, server, path, expect):
    page.goto(f"{server}/{path}")
    page.get_by_text(expect).first.wait_for()
    _settle(page)
    _no_exception(page)
    page.screenshot(path=str(ARTIFACTS / f"{path}.png"), full_page=True)


def test_broken_upload_shows_file_and_line(page, server, tmp_path):
    good_qrels = ROOT / "sample_data" / "qrels.txt"
    broken = tmp_path / "broken.run"
    broken.write_text("q001 Q0 d1 1 2.5 mine\nq001 Q0 d2 2\n")
    inputs = _choose_upload(page, server)
    inputs.nth(0).set_input_files(str(good_qrels))
    _settle(page)
    inputs.nth(1).set_input_files([str(broken), str(ROOT / "sample_data" / "run_bm25.txt")])
    page.get_by_text("broken.run:2").first.wait_for()
    _settle(page)
    _no_exception(page)
    body = page.inner_text("body")
    assert "expected 6 columns" in body
    assert "bm25" in body  # the good run stays loaded next to the broken one
    page.screenshot(path=str(ARTIFACTS / "upload_error.png"), full_page=True)
