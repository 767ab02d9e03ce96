"""A real browser against a real server: Debian's chromium driven by playwright.

Starts ``streamlit run app.py`` on a free loopback port, opens every page, uploads a
broken run file through the real uploader, and saves screenshots to
``test-artifacts/`` for a person to look at.
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
def server() -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--browser.gatherUsageStats", "false"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
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


@pytest.mark.parametrize(("path", "expect"), [
    ("metrics", "nDCG@10"),
    ("curves", "ROC"),
    ("compare", "neural_rerank"),
    ("queries", "relevant document(s)"),
    ("rounds", "To label next"),
    ("ndcg_vs_dcg", "DCG@10"),
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
    page.goto(server)
    page.get_by_text("run_bm25.txt").first.wait_for()
    _settle(page)
    inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
    for _ in range(3):  # a click that lands while the script reruns can be lost: retry
        page.get_by_text("Upload", exact=True).first.click()
        try:
            inputs.first.wait_for(state="attached", timeout=10_000)
            break
        except playwright.Error:
            continue
    _settle(page)
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
