"""Hostile names in a real browser (issue 13): shown as text, never as markup, and the
app needs nothing from another host.

Uploads qrels, runs and labeling files whose run tags, query ids, document ids, rater,
system and segment names, and file names are Markdown images and links pointing at a
beacon server this test runs on the loopback, raw ``<img>`` and ``<script>`` tags,
LaTeX (``$\\input{/etc/passwd}$``, ``$$...$$``), Streamlit directives (``:red[...]``),
emphasis and table pipes. Then it opens every page through the sidebar and asserts,
on each: no element those names could create (an image or link to the beacon or to
``evil.example``, a script, KaTeX math, a coloured or bold span); no request ever
reached the beacon; and, for the whole browser session (Streamlit's own scripts,
fonts and icons included), no request to a host other than the loopback was even
attempted. The names must appear literally, so the test knows they were loaded.
Screenshots of every page go to ``test-artifacts/hostile_*.png``.
"""

from __future__ import annotations

import csv
import io
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from browser_support import (
    ARTIFACTS,
    ROOT,
    NetworkGuard,
    nav,
    no_exception,
    require_chromium,
    script_run,
    settle,
    shown,
)

require_chromium()

# Markers inside the hostile names: an element whose whole text is one of them was made
# by rendering a name (the alt text of an image, a link, a coloured or bold span, a
# table cell split at a pipe), never by showing it as text.
MARKERS = ("zqimg", "zqlink", "zqred", "zqbold", "zqb", "zqq", "zqd", "zqfile")
MATH = ("passwd", "zqmath")  # in KaTeX output: a name was typeset as math
EVIL = "evil.example"


@dataclass
class Beacon:
    """An HTTP server on the loopback that records every request it gets."""

    url: str
    hits: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def beacon() -> Iterator[Beacon]:
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the http.server name)
            hits.append(self.path)
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield Beacon(f"http://127.0.0.1:{httpd.server_address[1]}", hits)
    httpd.shutdown()
    httpd.server_close()


@dataclass(frozen=True)
class Names:
    """The hostile names of one test run (they hold the beacon's address)."""

    tags: tuple[str, ...]
    queries: tuple[str, ...]
    docs: tuple[str, ...]
    qrels_file: str
    run_file: str
    broken_file: str
    labels_file: str
    gsb_file: str
    meta_file: str
    meta_column: str
    systems: tuple[str, str]
    raters: tuple[str, str, str]
    segments: tuple[str, str, str]


def _names(beacon: str) -> Names:
    return Names(
        tags=(f"![zqimg]({beacon}/tag.png)",
              f"<img src={beacon}/tag-img.png><script>window.zqpwned=1</script>",
              f"[zqlink](http://{EVIL}/tag) :red[zqred] **zqbold**",
              "$\\input{/etc/passwd}$ $$zqmath$$ zqa|zqb|zqc"),
        queries=(f"![zqq]({beacon}/query.png)", f"<img src={beacon}/query-img.png>",
                 f"[zqq](http://{EVIL}/q)", "$\\input{/etc/passwd}$", "$$zqmath$$",
                 ":red[zqred]", "**zqbold**", "zqa|zqb|zqc", f"www.{EVIL}/zqw"),
        docs=(f"![zqd]({beacon}/doc.png)", f"<img src={beacon}/doc-img.png>",
              f"[zqd](http://{EVIL}/d)", "<script>window.zqpwned=1</script>",
              "$\\input{/etc/passwd}$", "$$zqmath$$", ":red[zqred]", "**zqbold**",
              "zqa|zqb|zqc", f"zqmail@{EVIL}"),
        qrels_file=f"![zqfile]({beacon}/qrels.png) <img src={beacon}/f.png> $zqmath$ "
                   "zqa|zqb|zqc.csv",
        run_file=f"[zqlink](http://{EVIL}/run) :red[zqred] **zqbold**.csv",
        broken_file="<script>window.zqpwned=1</script> newline.csv",
        labels_file=f"![zqfile]({beacon}/labels.png) $$zqmath$$.csv",
        gsb_file=f"[zqlink](http://{EVIL}/gsb) :red[zqred].csv",
        meta_file=f"<img src={beacon}/meta.png> **zqbold**.csv",
        meta_column=f"![zqimg]({beacon}/column.png) :red[zqred]",
        systems=(f"![zqimg]({beacon}/system.png)", f"[zqlink](http://{EVIL}/s) $$zqmath$$"),
        raters=(f"<img src={beacon}/rater.png>", ":red[zqred] **zqbold**",
                "$\\input{/etc/passwd}$"),
        segments=("<script>window.zqpwned=1</script>", "zqa|zqb|zqc", f"![zqimg]({beacon}/s)"),
    )


def _csv(rows: list[list[object]]) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _payload(name: str, data: bytes) -> dict[str, object]:
    return {"name": name, "mimeType": "text/csv", "buffer": data}


def _queries(n: Names) -> list[str]:
    """The query ids of the evaluation files: the hostile ones among plain ones."""
    return [*n.queries, *(f"q{i:02d}" for i in range(12))]


def _evaluation_files(n: Names) -> tuple[bytes, bytes, bytes]:
    """(qrels, runs, broken run) as CSV: the hostile queries and documents among plain
    ones, every hostile document judged relevant and ranked near the top."""
    queries = _queries(n)
    docs = [*n.docs, *(f"d{i:03d}" for i in range(40))]
    qrels: list[list[object]] = [["qid", "docid", "rel"]]
    run: list[list[object]] = [["qid", "docid", "score", "tag"]]
    for qi, q in enumerate(queries):
        judged = [docs[(qi + k) % len(docs)] for k in range(12)]
        qrels += [[q, d, (qi + k) % 4] for k, d in enumerate(judged)]
        for ti, tag in enumerate(n.tags):
            ranked = [docs[(qi + ti + k) % len(docs)] for k in range(15)]
            run += [[q, d, f"{15 - k + 0.1 * ti:.2f}", tag] for k, d in enumerate(ranked)]
    broken = _csv([["qid", "docid", "score", "tag"], ["q01", "d001", 1, "two\nlines"]])
    return _csv(qrels), _csv(run), broken


def _metadata_file(n: Names) -> bytes:
    """Query metadata: a segment column with a hostile name and hostile values, traffic
    weights, and a latency per run (``latency_ms_<tag>``)."""
    rows: list[list[object]] = [["query", n.meta_column, "traffic",
                                 *(f"latency_ms_{tag}" for tag in n.tags)]]
    for qi, q in enumerate(_queries(n)):
        rows.append([q, n.segments[qi % 3], 10 + qi,
                     *(f"{20 + 5 * ti + qi % 7:.1f}" for ti in range(len(n.tags)))])
    return _csv(rows)


def _labeling_files(n: Names) -> tuple[bytes, bytes]:
    """Two months of the bundled labeling sample and its GSB file, every name replaced."""
    swap = {"control": n.systems[0], "treatment": n.systems[1],
            "ann": n.raters[0], "bo": n.raters[1], "chen": n.raters[2],
            "head": n.segments[0], "torso": n.segments[1], "tail": n.segments[2]}
    hostile_queries = {f"q{i:04d}": q for i, q in enumerate(n.queries, start=1)}
    hostile_docs = dict(zip(("d000109", "d000117", "d000118", "d000125"), n.docs, strict=False))
    rows: list[list[object]] = []
    for month in ("2026-05", "2026-06"):
        text = (ROOT / "sample_data" / "labels" / f"labels_{month}.csv").read_text()
        for i, row in enumerate(csv.reader(io.StringIO(text))):
            if i == 0:
                if not rows:
                    rows.append(row)
                continue
            head = dict(zip(rows[0], row, strict=True))
            head["system"] = swap[head["system"]]
            head["rater"] = swap.get(head["rater"], head["rater"])
            head["segment"] = swap[head["segment"]]
            head["query"] = hostile_queries.get(head["query"], head["query"])
            head["doc"] = hostile_docs.get(head["doc"], head["doc"])
            rows.append([head[c] for c in rows[0]])
    gsb_text = (ROOT / "sample_data" / "labels" / "gsb.csv").read_text()
    gsb = [row if i == 0 else [row[0], hostile_queries.get(row[1], row[1]), row[2],
                                swap.get(row[3], row[3])]
           for i, row in enumerate(csv.reader(io.StringIO(gsb_text)))]
    return _csv(rows), _csv(gsb)


_FIND = """([needles, markers, math]) => {
  const urlAttrs = ['href', 'xlink:href', 'src', 'srcset', 'action', 'formaction', 'data',
                    'poster', 'background', 'style'];
  const found = {urls: [], markup: [], math: [], scripts: [], ran: false};
  const where = el => `${el.closest('[data-testid]')?.dataset.testid} ${el.tagName}`;
  // a link to a page of the app that carries a name as data in its query string (the
  // Compare page's worst losses open the Queries page on that query) goes nowhere else:
  // the name is URL-encoded after the '?', and the page opened escapes it again
  const sameOriginData = a => {
    if (a.name.toLowerCase() !== 'href') return false;
    try {
      const u = new URL(a.value, document.baseURI);
      return u.origin === location.origin && !needles.some(x => u.pathname.includes(x))
        && !a.value.split('?')[0].includes(':');
    } catch (e) { return false; }
  };
  for (const el of document.querySelectorAll('*')) {
    for (const a of el.attributes) {
      if (urlAttrs.includes(a.name.toLowerCase()) && needles.some(x => a.value.includes(x))
          && !sameOriginData(a)) found.urls.push(`${where(el)} ${a.name}=${a.value}`);
    }
    if (el.children.length === 0 && markers.includes(el.textContent.trim()))
      found.markup.push(`${where(el)}: ${el.textContent.trim()}`);
  }
  for (const el of document.querySelectorAll('.katex, .katex-error, .katex-display'))
    if (math.some(x => el.textContent.includes(x))) found.math.push(el.textContent);
  for (const el of document.querySelectorAll('script'))
    if (el.textContent.includes('zqpwned')) found.scripts.push(el.outerHTML.slice(0, 200));
  found.ran = window.zqpwned !== undefined;
  return found;
}"""


def _inspect(pg: Any, beacon: Beacon, name: str) -> str:
    """Assert that the page holds nothing rendered from a name; screenshot; its text."""
    host = beacon.url.removeprefix("http://")
    found = pg.evaluate(_FIND, [[host, EVIL], list(MARKERS), list(MATH)])
    nothing = {"urls": [], "markup": [], "math": [], "scripts": [], "ran": False}
    assert found == nothing, (name, found)
    assert beacon.hits == [], name
    no_exception(pg)
    pg.screenshot(path=str(ARTIFACTS / f"hostile_{name}.png"), full_page=True)
    return pg.inner_text("body")


EVALUATION_PAGES = ("Metrics", "Curves", "Compare", "Queries", "Efficiency", "Qrels rounds",
                    "nDCG vs DCG", "Meeting", "Metric lab")
LABELING_PAGES = ("Trend", "Raters", "Label changes", "Side by side")
SPLITS = {"Metrics": "Split the means by", "Compare": "Test again per value of",
          "Queries": "Only queries where"}


def _choose(pg: Any, label: str, option: str) -> None:
    """Pick ``option`` in the select box labelled ``label``."""
    box = pg.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    box.scroll_into_view_if_needed()
    box.locator("input").click()
    with script_run(pg):
        pg.get_by_role("option", name=option, exact=True).click()


def test_hostile_names_render_as_text_on_every_page(browser, server, beacon):
    names = _names(beacon.url)
    qrels, runs, broken = _evaluation_files(names)
    labels, gsb = _labeling_files(names)
    texts: dict[str, str] = {}
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    guard = NetworkGuard(context)  # from the session's first request to its last
    pg = context.new_page()
    pg.set_default_timeout(45_000)

    # ------------------------------------------------------------ evaluation data
    pg.goto(server)
    settle(pg)  # the first run drawn (as test_browser._choose_upload), then the choice
    pg.get_by_text("Upload", exact=True).first.click()
    inputs = pg.locator('[data-testid="stFileUploader"] input[type="file"]')
    inputs.first.wait_for(state="attached")
    settle(pg)
    inputs.nth(0).set_input_files(files=[_payload(names.qrels_file, qrels)])
    pg.get_by_text(f"qrels: {len(_queries(names))} queries").first.wait_for()
    settle(pg)
    inputs.nth(1).set_input_files(files=[_payload(names.run_file, runs),
                                         _payload(names.broken_file, broken)])
    # the reader refuses a newline
    pg.get_by_text("a line break").filter(visible=True).first.wait_for()
    settle(pg)
    inputs.nth(2).set_input_files(files=[_payload(names.meta_file, _metadata_file(names))])
    pg.wait_for_timeout(300)
    settle(pg)
    shown(pg, "4 runs")
    texts["data"] = _inspect(pg, beacon, "data")
    assert "4 runs" in texts["data"]  # the broken file's run was not loaded
    for title in EVALUATION_PAGES:
        nav(pg, title)
        if title in SPLITS:  # split by the metadata column with the hostile name
            _choose(pg, SPLITS[title], names.meta_column)
        if title == "Metric lab":  # a query of an uploaded run, step by step
            pg.get_by_text("A query of a loaded run", exact=True).click()
            pg.get_by_text("Run", exact=True).filter(visible=True).first.wait_for()
            settle(pg)
            _choose(pg, "Query", names.queries[3])  # $\input{/etc/passwd}$
        texts[title] = _inspect(pg, beacon, title.replace(" ", "_").lower())

    # ------------------------------------------------------------ labeling data
    nav(pg, "Labeling data")
    pg.get_by_text("Upload labeling files", exact=True).click()
    uploads = pg.locator('[data-testid="stFileUploader"] input[type="file"]')
    uploads.first.wait_for(state="attached")
    settle(pg)
    uploads.nth(0).set_input_files(files=[_payload(names.labels_file, labels)])
    pg.get_by_text("Labeled rows").filter(visible=True).first.wait_for()
    settle(pg)
    uploads.nth(1).set_input_files(files=[_payload(names.gsb_file, gsb)])
    pg.get_by_text("Side-by-side judgments:").filter(visible=True).first.wait_for()
    settle(pg)
    texts["labeling"] = _inspect(pg, beacon, "labels_data")
    for title in LABELING_PAGES:
        nav(pg, title)
        texts[title] = _inspect(pg, beacon, "labels_" + title.replace(" ", "_").lower())
    context.close()

    assert beacon.hits == []
    assert guard.blocked == [], f"requests to other hosts: {guard.blocked}"
    assert guard.allowed > 50  # the guard saw the session's requests
    # the names were loaded and are shown as the text they are
    every = "\n".join(texts.values())
    for name in (*names.tags, names.qrels_file, names.run_file, names.labels_file,
                 names.gsb_file, names.meta_column, *names.systems):
        assert name in every, name
    assert all(tag in texts["Metrics"] for tag in names.tags)
    drawn = [r for r in names.raters if r in texts["Raters"]]  # the rater picked, at least
    assert drawn, names.raters
    drawn = [q for q in names.queries if q in every]
    assert len(drawn) >= 2, drawn
    drawn = [d for d in names.docs if d in every]
    assert len(drawn) >= 2, drawn
