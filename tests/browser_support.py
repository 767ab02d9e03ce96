"""What the real-browser tests share: the app server, chromium, and the network guard.

``streamlit run app.py`` on a free loopback port with its own workspace; Debian's
chromium driven by playwright, which can reach no host but the loopback (every other
request goes to a proxy that refuses it, :func:`chromium`); every request to a host other
than the loopback recorded (:class:`NetworkGuard`), so that a test can assert the app
needed nothing from another host; and the few waits that know when Streamlit has
finished a script run.

Not a test module: ``tests/test_browser*.py`` import it.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM = shutil.which("chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic"]
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
"""Hosts a request may go to: the app's own server (and a test's own servers)."""

_NOWHERE: list[socket.socket] = []


def _nowhere() -> str:
    """A loopback address where nothing answers: a port this process holds bound but never
    listens on (so no other program can take it), where every connection is refused at
    once. :func:`chromium`'s proxy: the browser sends every request for another host
    there (Chromium never sends the loopback through a proxy), so none leaves the
    machine, whatever address, scheme or WebSocket it names."""
    if not _NOWHERE:
        held = socket.socket()
        held.bind(("127.0.0.1", 0))
        _NOWHERE.append(held)
    return f"http://127.0.0.1:{_NOWHERE[0].getsockname()[1]}"


def require_chromium() -> Any:
    """Skip the calling test module without chromium (fail on CI, where it must be there)
    or without playwright; returns ``playwright.sync_api``."""
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (make test installs it when run as root)",
                        pytrace=False)
        pytest.skip("chromium is not installed: apt-get install chromium",
                    allow_module_level=True)
    return pytest.importorskip("playwright.sync_api")


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium launched through playwright (its sync API runs one event loop at
    a time: one browser at a time per process, shared by the browser modules a worker
    runs one after another, ``conftest._SharedChromium``); makes :data:`ARTIFACTS`
    for the screenshots. Its proxy is :func:`_nowhere`: a request for any host but the
    loopback fails without leaving the machine (a context's :class:`NetworkGuard` records it)."""
    sync_api = require_chromium()
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM,
                                     args=[*CHROMIUM_ARGS, f"--proxy-server={_nowhere()}"])
        yield launched
        launched.close()


@contextmanager
def guarded_page(browser: Any, *, height: int, timeout: int | None = None,
                 width: int = 1400) -> Iterator[Any]:
    """A page (one Streamlit session) in a new context of ``browser``, ``width`` x
    ``height`` pixels, whose requests to other hosts are recorded (:class:`NetworkGuard`);
    ``timeout`` (ms), if given, is the page's default. When the block ends the context is
    closed and none of those requests may have been attempted."""
    context = browser.new_context(viewport={"width": width, "height": height})
    guard = NetworkGuard(context)
    pg = context.new_page()
    if timeout is not None:
        pg.set_default_timeout(timeout)
    yield pg
    context.close()
    assert guard.blocked == [], f"requests to other hosts: {guard.blocked}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def app_server(workspace: Path, *, port: int | None = None, args: Sequence[str] = (),
               log: Path | None = None, **env: str) -> Iterator[str]:
    """``streamlit run app.py`` on a loopback port (``port``, or a free one); yields its URL.

    ``workspace`` is the SQLite file the app saves to; ``args`` more options of
    ``streamlit run``; ``log``, if given, the file that receives the server's output;
    ``env`` more environment variables. The file watcher is off: the server runs the
    code as it was when it started, whatever else is edited in the repository meanwhile.
    """
    port = free_port() if port is None else port
    output = log.open("w") if log is not None else subprocess.PIPE
    proc = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
         "--server.address", "127.0.0.1", "--server.headless", "true",
         "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false", *args],
        cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "IREVAL_WORKSPACE": str(workspace), **env})
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
        said = proc.stdout.read() if proc.stdout else log.read_text() if log else ""
        pytest.fail(f"streamlit did not start: {said}")
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        if log is not None:
            output.close()  # type: ignore[union-attr]


class NetworkGuard:
    """Records every request of a browser context to a host outside :data:`LOOPBACK`.

    It sees every request of the context: the app's pages, Streamlit's own scripts,
    fonts and icons, and whatever an uploaded name might make the browser load.
    ``blocked`` lists, in order, the URLs that were attempted (a browser of
    :func:`chromium` sends them to a proxy that refuses them: none reaches its host);
    ``allowed`` counts the loopback requests. It listens, it does not intercept: a
    playwright route on the context would turn its HTTP cache off and pass every request
    through this process, which made each page load fetch and compile Streamlit's scripts
    again (about a third more CPU per load). Install it before the first ``goto``.
    """

    def __init__(self, context: Any) -> None:
        self.blocked: list[str] = []
        self.allowed = 0
        context.on("request", self._request)
        # WebSockets are not requests: record any to another host
        context.on("page", lambda page: page.on("websocket", self._websocket))

    def _websocket(self, ws: Any) -> None:
        if urlsplit(ws.url).hostname not in LOOPBACK:
            self.blocked.append(ws.url)

    def _request(self, request: Any) -> None:
        url = request.url
        parts = urlsplit(url)
        if parts.hostname is not None and parts.hostname not in LOOPBACK:
            self.blocked.append(url)
        else:
            self.allowed += 1


_QUIET = """quiet => new Promise(done => {
  const app = document.querySelector('[data-testid="stApp"]');
  let timer = setTimeout(() => { observer.disconnect(); done(true); }, quiet);
  const observer = new MutationObserver(() => {
    clearTimeout(timer);
    timer = setTimeout(() => { observer.disconnect(); done(true); }, quiet);
  });
  observer.observe(app, {subtree: true, childList: true, attributes: true,
                         characterData: true});
  setTimeout(() => { observer.disconnect(); done(false); }, 10000);
})"""


def settle(pg: Any) -> None:
    """Wait until Streamlit has finished running the script and the browser has drawn what
    it sent: no script running, then the page unchanged for half a second (at most ten
    seconds). Every page draws the app's menu (:data:`MENU`) first: its links are waited
    for (their code is loaded by the browser on demand, which can take a while). The
    sidebar's widgets can appear a few hundred milliseconds after the page's text, and a
    number input first shows 0 before its value."""
    pg.wait_for_selector('[data-testid="stApp"]')
    pg.wait_for_selector(f'{MENU} [data-testid="stPageLink"] [data-testid="stIconMaterial"]',
                         timeout=60_000)
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    pg.evaluate(_QUIET, 500)


MENU = ".st-key-ireval-menu"
"""The app's menu of pages in the sidebar (``ireval_app.frame.menu``)."""


_WATCH_RUN = """() => {
  const app = document.querySelector('[data-testid="stApp"]');
  const watch = window.__irevalRun = {started: false};
  const observer = new MutationObserver(() => { watch.started = true; observer.disconnect(); });
  observer.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  setTimeout(() => { observer.disconnect(); watch.started = true; }, 5000);
}"""

_RUN_DONE = """() => {
  const watch = window.__irevalRun;
  const app = document.querySelector('[data-testid="stApp"]');
  return !watch || (watch.started && app !== null
                    && app.getAttribute('data-test-script-state') === 'notRunning');
}"""


@contextmanager
def script_run(pg: Any) -> Iterator[None]:
    """Around an action that makes Streamlit run the script again (a click in the menu, a
    widget changed): after the block, wait until that run has started and finished, then
    :func:`settle`. Streamlit marks its app element with the script's state
    (``data-test-script-state``); a change of it after the action is the new run, so the
    wait never ends on the page as it was before the action, however slowly the server
    answers. An action that starts no run within five seconds is waited for as
    :func:`settle` alone would; a new document (a full reload) counts as the new run."""
    pg.evaluate(_WATCH_RUN)
    yield
    pg.wait_for_function(_RUN_DONE, timeout=60_000)
    settle(pg)


def nav(pg: Any, title: str) -> None:
    """Switch page by clicking its entry in the sidebar menu (same session)."""
    with script_run(pg):
        pg.locator(MENU).get_by_text(title, exact=True).click()


LINK_BOX = ".st-key-ireval-link"
"""The address in the sidebar's "Link to this view" box (``ireval_app.frame``)."""


def view_link(pg: Any) -> str:
    """The address the sidebar's "Link to this view" box shows, its expander opened
    first if it is closed."""
    sidebar = pg.locator('[data-testid="stSidebar"]')
    address = sidebar.locator(f"{LINK_BOX} code")
    if not address.is_visible():
        sidebar.get_by_text("Link to this view").click()
    return str(address.inner_text()).strip()


def shows_value(box: Any, value: str, *, timeout: int = 20_000, where: str = "") -> None:
    """Wait until the input ``box`` shows ``value`` (at most ``timeout`` ms), else fail
    saying what it shows. An input's value is a property the browser's widget code sets
    after drawing, not a change of the page's elements, so :func:`settle` does not wait
    for it: under load a reopened link's input was still empty a second after the page
    had settled, its value (and the table computed from it) already there."""
    from playwright.sync_api import expect

    expect(box, message=f"{where}: the input should show {value!r}" if where else None
           ).to_have_value(value, timeout=timeout)


def shown(pg: Any, *texts: str | re.Pattern[str], timeout: int | None = None) -> str:
    """Wait until each of ``texts`` is shown, then return the page's text (``inner_text``
    of the body) for the caller's assertions. Each is waited for as every browser test
    waits for a text: the first *visible* element holding it
    (``get_by_text(text).filter(visible=True).first.wait_for()``; a pattern is searched
    for). A page draws its elements over several messages, and under load more than
    :func:`settle`'s half second can pass between two of them: a text asserted right after
    a wait for another one (or after :func:`settle`) may not be there yet."""
    for text in texts:
        pg.get_by_text(text).filter(visible=True).first.wait_for(timeout=timeout)
    return str(pg.inner_text("body"))


def page_screenshot(pg: Any, path: Path, *, height: int | None = None,
                    at_most: int = 16_000) -> None:
    """A screenshot of the whole page to ``path``: the viewport made as tall as the page's
    content, at most ``at_most`` pixels (or ``height`` pixels), the page left quiet
    (:func:`settle`'s wait), the screenshot taken, the viewport's size put back.
    Streamlit's main area scrolls inside the window, so a full-page screenshot shows only
    the viewport. A test that wants all of a page keeps an ordinary window for its
    session and calls this for the picture: chromium draws every frame of a load as tall
    as the window, and a 4,200-pixel window cost a third more of its CPU per page load
    (the labeling pages' screenshots: 37 s against 25 s for six loads)."""
    size = pg.viewport_size
    if height is None:
        content = pg.evaluate("() => document.querySelector("
                              "'[data-testid=\"stMainBlockContainer\"]').scrollHeight")
        height = min(content + 120, at_most)
    pg.set_viewport_size({"width": size["width"], "height": height})
    pg.evaluate(_QUIET, 500)
    pg.screenshot(path=str(path), full_page=True)
    pg.set_viewport_size(size)


def no_exception(pg: Any) -> None:
    """No exception box and no traceback on the page."""
    assert pg.locator('[data-testid="stException"]').count() == 0
    assert "Traceback" not in pg.inner_text("body")


_CHARTS_DRAWN = """() => {
  const charts = [...document.querySelectorAll('[data-testid="stPlotlyChart"]')];
  return charts.length > 0 && charts.every(c => {
    const plot = c.querySelector('.js-plotly-plot');
    return plot && plot._fullLayout && plot._fullData && plot.querySelector('.main-svg');
  });
}"""


def charts_drawn(pg: Any) -> None:
    """Wait until the page shows at least one Plotly chart and plotly.js has drawn every
    chart on it (its figure laid out, its SVG made), then until the page is unchanged for
    half a second. Call after :func:`settle`: the script has sent every chart by then, and
    they are made together once the browser has loaded plotly's code."""
    pg.wait_for_function(_CHARTS_DRAWN)
    pg.evaluate(_QUIET, 500)
