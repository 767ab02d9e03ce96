"""Server memory across sessions: large run uploads, one session each, then the sessions end.

Reproduces the measurement of issue 13 (854 -> 1,523 -> 2,115 MiB after three 350 MB run
uploads, one per session, and the memory never coming back): starts ``streamlit run
app.py`` on a loopback port, and with Debian's chromium driven by playwright

1. warms the server up: one session uploads a small run (the reading code, Arrow's
   thread pool and the upload path are loaded once), then ends;
2. measures the baseline resident memory (VmRSS of the server process);
3. three sessions, one after the other, each in its own browser context: open the
   Data page, choose Upload, upload the sample qrels and a generated run (different
   content each time), wait until the page says the run was read, measure, close;
4. measures again once Streamlit has dropped the closed sessions and the resident
   memory has stopped moving (:func:`end_sessions`).

Streamlit keeps a closed session for ``server.disconnectedSessionTTL`` seconds (a
reconnect gets it back), then drops it the next time any session connects or
disconnects (it expires stored sessions lazily). Here the TTL is 1 s, and a short
"probe" session (the sample's Data page) opens, and closes once the TTL is over: the
state, uploads and parsed files of the closed sessions are freed then.

    python benchmarks/bench_memory.py                 # three ~350 MB runs, default budget
    python benchmarks/bench_memory.py --mb 100 --cache-mb 16

Needs chromium (``apt-get install chromium``) and playwright (requirements-dev.txt).
``tests/test_server_memory.py`` runs the same protocol with ~38 MB runs and asserts it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
QRELS = ROOT / "sample_data" / "qrels.txt"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-quic"]
SESSION_TTL = 1  # seconds Streamlit keeps a disconnected session (default 120)
LINE_BYTES = 38  # about one generated run line


# ----------------------------------------------------------------------------- data


def write_run(path: Path, n_lines: int, *, seed: int, per_query: int = 1000) -> int:
    """A TREC run of ``n_lines`` lines (``q17 Q0 d123456 1 999.000000 sys<seed>``), every
    document distinct, different for every seed; returns the file size in bytes."""
    rng = np.random.default_rng(seed)
    n_queries = max(1, n_lines // per_query)
    n = n_queries * per_query
    qid = np.repeat(np.arange(1, n_queries + 1), per_query)
    rank = np.tile(np.arange(1, per_query + 1), n_queries)
    doc = rng.permutation(n) + 10_000_000 * seed
    micro = (per_query - rank) * 1_000_000 + rng.integers(0, 1_000_000, n)

    def text(values: np.ndarray) -> pa.Array:
        return pc.cast(pa.array(values), pa.string())

    score = pc.binary_join_element_wise(
        text(micro // 1_000_000), pc.utf8_lpad(text(micro % 1_000_000), width=6, padding="0"),
        ".")
    lines = pc.binary_join_element_wise(
        pc.binary_join_element_wise("q", text(qid), ""), "Q0",
        pc.binary_join_element_wise("d", text(doc), ""), text(rank), score, f"sys{seed}", " ")
    lines = pc.binary_join_element_wise(lines, "", "\n").cast(pa.large_string())
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)
    data = memoryview(lines.buffers()[2])[offsets[0]:offsets[len(lines)]]
    path.write_bytes(data)
    return len(data)


# ----------------------------------------------------------------------------- the server


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mib(pid: int) -> float:
    """Resident memory (VmRSS) of process ``pid`` in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for process {pid}")


@dataclass
class Server:
    """A running ``streamlit run app.py``: its URL, process and output file."""

    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def rss(self, samples: int = 3, every: float = 0.3) -> float:
        """The server's resident memory in MiB (median of a few readings)."""
        values = []
        for i in range(samples):
            if i:
                time.sleep(every)
            values.append(rss_mib(self.proc.pid))
        return float(np.median(values))

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@contextmanager
def server(*, cache_mb: float | None = None, workdir: Path) -> Iterator[Server]:
    """Start the app on a free loopback port (file watcher off, session TTL
    :data:`SESSION_TTL`); stop it (terminate, then kill) on exit."""
    port = _free_port()
    env = {**os.environ, "IREVAL_WORKSPACE": str(workdir / "workspace.db")}
    env.pop("IREVAL_DATA_DIR", None)
    env.pop("IREVAL_CACHE_MB", None)
    if cache_mb is not None:
        env["IREVAL_CACHE_MB"] = str(cache_mb)
    log = workdir / "server.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true",
             "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none",
             "--server.disconnectedSessionTTL", str(SESSION_TTL)],
            cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("streamlit did not start:\n"
                                       + log.read_text(errors="replace")) from None
                time.sleep(0.3)
        yield Server(url, proc, log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


# ----------------------------------------------------------------------------- sessions


def _settle(page: object, timeout: float = 300_000) -> None:
    """Wait until Streamlit has finished running the script."""
    page.wait_for_selector('[data-testid="stApp"]')  # type: ignore[attr-defined]
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=timeout)
    page.wait_for_timeout(300)  # type: ignore[attr-defined]


@contextmanager
def _data_page(browser: object, url: str, timeout: float) -> Iterator[Any]:
    """A session in its own browser context on the Data page (the bundled sample, shown
    and settled), closed on leaving; ``timeout`` (ms) is each step's default."""
    context = browser.new_context()  # type: ignore[attr-defined]
    try:
        page = context.new_page()
        page.set_default_timeout(timeout)
        page.goto(url)
        page.get_by_text("run_bm25.txt").first.wait_for()
        _settle(page)
        yield page
    finally:
        context.close()


def sample_session(browser: object, url: str) -> None:
    """Open the Data page (the bundled sample), then close the session."""
    with _data_page(browser, url, 120_000):
        pass


def upload_session(browser: object, url: str, run: Path, n_lines: int,
                   while_open: Callable[[], None] | None = None) -> None:
    """One session: choose Upload, upload the sample qrels and ``run``, wait until the
    page says its ``n_lines`` documents were read, call ``while_open``, close."""
    from playwright.sync_api import Error as PlaywrightError

    with _data_page(browser, url, 300_000) as page:
        inputs = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        for _ in range(5):  # a click landing while the script reruns can be lost: retry
            page.get_by_text("Upload", exact=True).first.click()
            try:
                inputs.first.wait_for(state="attached", timeout=10_000)
                break
            except PlaywrightError:
                continue
        _settle(page)
        inputs.nth(0).set_input_files(str(QRELS))
        _settle(page)
        inputs.nth(1).set_input_files(str(run))
        page.get_by_text(f"{n_lines:,} documents").first.wait_for()
        _settle(page)
        if while_open is not None:
            while_open()


def end_sessions(browser: object, srv: Server, closed_at: float,
                 released: Callable[[float], bool] | None = None,
                 wait_release: float = 3.0) -> None:
    """Let Streamlit drop the sessions closed by ``closed_at`` (``time.monotonic()``):
    open a probe session and close it once their TTL is over (its disconnect expires
    them), then wait for the memory release: until ``released(rss)`` holds for the
    server's resident memory in MiB (polled), else until it has not moved by 1 MiB for
    longer than the app's delay before it releases freed memory
    (``ireval_app.shared_cache``, 1 s); ``wait_release`` seconds at most either way."""
    with _data_page(browser, srv.url, 120_000):
        time.sleep(max(0.0, closed_at + SESSION_TTL + 1 - time.monotonic()))
    deadline = time.monotonic() + wait_release
    readings: list[tuple[float, float]] = []  # (time, RSS)
    while time.monotonic() < deadline:
        now, rss = time.monotonic(), rss_mib(srv.proc.pid)
        if released is not None and released(rss):
            return
        readings.append((now, rss))
        recent = [r for t, r in readings if t >= now - _STILL]
        if (released is None and readings[0][0] <= now - _STILL
                and max(recent) - min(recent) < 1):
            return
        time.sleep(0.1)


_STILL = 1.5  # seconds the RSS stays within 1 MiB to count as settled (release delay 1 s)


# ----------------------------------------------------------------------------- the measurement


@dataclass
class Figures:
    """Resident memory (MiB) of the server at each step."""

    run_mb: list[float] = field(default_factory=list)  # size of each uploaded run
    baseline: float = 0.0  # after warm-up, every session ended
    open_: list[float] = field(default_factory=list)  # while each upload session is open
    closed: list[float] = field(default_factory=list)  # right after each session closed
    ended: float = 0.0  # after the sessions were dropped by Streamlit
    seconds: float = 0.0

    def table(self) -> str:
        rows = ["| step | RSS (MiB) | vs baseline |", "|---|---:|---:|",
                f"| baseline (warmed up, no session) | {self.baseline:,.0f} | |"]
        for i, (mb, o, c) in enumerate(zip(self.run_mb, self.open_, self.closed,
                                           strict=True), start=1):
            rows.append(f"| session {i} open, {mb:,.0f} MB run read | {o:,.0f} | "
                        f"{o - self.baseline:+,.0f} |")
            rows.append(f"| session {i} closed (kept by Streamlit for its TTL) | {c:,.0f} | "
                        f"{c - self.baseline:+,.0f} |")
        rows.append(f"| sessions dropped by Streamlit | {self.ended:,.0f} | "
                    f"{self.ended - self.baseline:+,.0f} |")
        return "\n".join(rows)


def measure(runs: list[tuple[Path, int]], *, cache_mb: float | None, workdir: Path,
            warmup_lines: int = 20_000, released: Callable[[float], bool] | None = None,
            wait_release: float = 3.0) -> Figures:
    """The protocol of the module docstring on ``(run file, lines)`` pairs. The last
    measurement is taken once the sessions' memory is released (:func:`end_sessions`):
    when ``released(RSS - baseline)`` holds (MiB), else once the RSS is still; after
    ``wait_release`` seconds at most."""
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium")
    if chromium is None:
        raise RuntimeError("chromium is not installed: apt-get install chromium")
    warm = workdir / "warmup.txt"
    write_run(warm, warmup_lines, seed=99)
    figures = Figures(run_mb=[p.stat().st_size / 1e6 for p, _ in runs])
    start = time.perf_counter()
    with server(cache_mb=cache_mb, workdir=workdir) as srv, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            upload_session(browser, srv.url, warm, warmup_lines)
            end_sessions(browser, srv, time.monotonic())
            figures.baseline = srv.rss()
            for run, n_lines in runs:
                upload_session(browser, srv.url, run, n_lines,
                               while_open=lambda: figures.open_.append(srv.rss()))
                closed_at = time.monotonic()
                time.sleep(1)
                figures.closed.append(srv.rss())
            end_sessions(browser, srv, closed_at,
                         released=None if released is None
                         else lambda rss: released(rss - figures.baseline),
                         wait_release=wait_release)
            figures.ended = srv.rss()
        finally:
            browser.close()
        if "Traceback" in srv.output():
            raise RuntimeError("the server logged an exception:\n" + srv.output()[-3000:])
    figures.seconds = time.perf_counter() - start
    return figures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=350, help="size of each run (MB)")
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--cache-mb", type=float, default=None,
                        help="IREVAL_CACHE_MB of the server (default: the app's default)")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as tmp:
        workdir = Path(tmp)
        runs = []
        n_lines = int(args.mb * 1e6 / LINE_BYTES) // 1000 * 1000
        for i in range(1, args.sessions + 1):
            path = workdir / f"run_{i}.txt"
            write_run(path, n_lines, seed=i)
            runs.append((path, n_lines))
        print(f"{args.sessions} runs of {n_lines:,} lines "
              f"({runs[0][0].stat().st_size / 1e6:,.0f} MB each), "
              f"IREVAL_CACHE_MB={args.cache_mb if args.cache_mb is not None else 'default'}",
              file=sys.stderr)
        figures = measure(runs, cache_mb=args.cache_mb, workdir=workdir)
    print(figures.table())
    print(f"\n{figures.seconds:.0f} s in all")
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"memory_{args.mb:g}MB.json"
    out.write_text(json.dumps({"args": vars(args), **asdict(figures)}, indent=2))
    print(f"raw numbers: {out.relative_to(ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
