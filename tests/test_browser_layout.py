"""A real browser at 1280 x 800: every page fits, nothing is cut short.

At that size (a laptop, the sidebar open) the main column is about 820 px. The test
visits every page of the menu on the bundled sample, the Meeting page of a saved dataset
with a recorded decision, the labeling pages on a saved labeling set (two months, Chinese
labels and query ids), and the Labeling data page with a month of 83 conflicts (its list
of problems), in one session of one browser. On each it asserts:

* no text cut short with an ellipsis (``text-overflow: ellipsis`` and wider than its box:
  buttons read "Download …", metrics "Judged docum…"); the chips of a multiselect are left
  out here: Streamlit cuts a long chip and its menu shows the whole name;
* no horizontal scroll (:data:`OVERFLOW`): not the main area, not a table (the data
  grid's scroller and canvas, ``st.table``, Markdown tables), not a code block, not a
  multiselect's chips (all inside the box), and no element wider than the block it is
  laid out in;
* no clipped table header: each data-grid column is at least as wide as its title
  (widths from the grid's own column list, the title measured in the grid's header font).

With ``IREVAL_SCREENSHOTS=1`` it saves a screenshot of each page's whole main column (the
window made taller, the width unchanged) to ``test-artifacts/layout_<page>.png``, to be
looked at by a person; a page with a problem is always saved. The meeting
report's HTML file is checked the same way at 1280 px. Server, chromium and waits:
``tests/browser_support.py``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from _apps import sample_files
from browser_support import ARTIFACTS, guarded_page, nav, no_exception, require_chromium, settle

from ireval_app import frame

require_chromium()

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
SCREENSHOTS = os.environ.get("IREVAL_SCREENSHOTS") == "1"
"""Save every page's screenshot (a page with a problem is always saved): off in the
suite, where the tall screenshots would double the test's time."""

PAGES = tuple(p.title for p in frame.PAGES.values() if not p.admin)
"""Every page of the menu, in its order (a new page is checked without being added here).
An admin-only page is in the menu only for a signed-in admin (test_browser_roles)."""
LABELING = ("Trend", "Raters", "Label changes", "Model judge", "Labeling data")

CUT = """() => [...document.querySelectorAll('[data-testid="stMain"] *')]
  .filter(e => e.offsetParent !== null && e.children.length <= 1 && e.innerText
          && !e.closest('[data-testid="stMultiSelectTagsContainer"]')
          && e.scrollWidth > e.clientWidth + 1
          && getComputedStyle(e).textOverflow === 'ellipsis')
  .map(e => e.innerText.trim())"""
"""The texts of the page shown cut short with an ellipsis (multiselect chips left out)."""

OVERFLOW = """() => {
  const out = [];
  const main = document.querySelector('[data-testid="stMain"]');
  const shown = e => e.offsetParent !== null || e.getClientRects().length > 0;
  const right = e => Math.round(e.getBoundingClientRect().right);
  const label = e => (e.getAttribute('data-testid') || e.tagName.toLowerCase()) + ' "'
      + (e.innerText || '').trim().replace(/\\s+/g, ' ').slice(0, 60) + '"';
  for (const id of ['stMain', 'stMainBlockContainer']) {
    const e = document.querySelector(`[data-testid="${id}"]`);
    if (e && e.scrollWidth > e.clientWidth + 1)
      out.push(`${id} scrolls sideways (${e.scrollWidth} > ${e.clientWidth})`);
  }
  // the data grids: their scroller, their canvases, their headers
  for (const f of main.querySelectorAll('[data-testid="stDataFrame"]')) {
    if (!shown(f)) continue;
    const s = f.querySelector('.dvn-scroller');
    const heads = [...f.querySelectorAll('[role="columnheader"]')].map(h => h.textContent);
    const name = `table [${heads.join(' | ')}]`;
    if (s && s.scrollWidth > s.clientWidth + 1)
      out.push(`${name} scrolls sideways (${s.scrollWidth} > ${s.clientWidth})`);
    const box = right(f.parentElement);
    for (const c of f.querySelectorAll('canvas'))
      if (c.getBoundingClientRect().width > 0 && right(c) > box + 1)
        out.push(`${name}: a canvas ends at ${right(c)} > ${box}`);
    // the grid's own column list (React props): widths and titles
    let fiber = s && s[Object.keys(s).find(k => k.startsWith('__reactFiber'))];
    let cols = null, theme = null;
    for (; fiber && !cols; fiber = fiber.return) {
      const p = fiber.memoizedProps || {};
      if (Array.isArray(p.columns) && p.columns.length && p.columns[0].width !== undefined) {
        cols = p.columns; theme = p.theme;
      }
    }
    if (!cols) { if (s) out.push(`${name}: its column widths were not found`); continue; }
    const ctx = document.createElement('canvas').getContext('2d');
    ctx.font = theme && theme.headerFontStyle && theme.fontFamily
        ? `${theme.headerFontStyle} ${theme.fontFamily}` : '600 14px sans-serif';
    for (const c of cols) {
      const need = ctx.measureText(c.title || '').width + 2 * 8;  // the grid's padding
      if (c.title && need > c.width + 1)
        out.push(`header "${c.title}" cut: ${Math.round(need)} px in ${c.width} px`);
    }
  }
  // static tables and code blocks
  const statics = '[data-testid="stTable"], [data-testid="stMarkdownContainer"] table, pre';
  for (const e of main.querySelectorAll(statics)) {
    if (!shown(e)) continue;
    if (e.scrollWidth > e.clientWidth + 1 || right(e) > right(e.parentElement) + 1)
      out.push(`${label(e)} wider than its box (${e.scrollWidth} > ${e.clientWidth})`);
  }
  // every element against the block it is laid out in
  const blocks = '[data-testid="stVerticalBlock"] > *, [data-testid="stHorizontalBlock"] > *';
  for (const e of main.querySelectorAll(blocks)) {
    if (shown(e) && e.getBoundingClientRect().width > 0 && right(e) > right(e.parentElement) + 1)
      out.push(`${label(e)} ends at ${right(e)} > its block's ${right(e.parentElement)}`);
  }
  // anything else that scrolls sideways (a multiselect's chips, a code block)
  for (const e of main.querySelectorAll('*')) {
    if (!shown(e) || e.closest('[data-testid="stDataFrame"], .js-plotly-plot')) continue;
    const ox = getComputedStyle(e).overflowX;
    if ((ox === 'auto' || ox === 'scroll') && e.scrollWidth > e.clientWidth + 1)
      out.push(`${label(e)} scrolls sideways (${e.scrollWidth} > ${e.clientWidth})`);
  }
  // multiselects: every chip inside the box
  for (const m of main.querySelectorAll('[data-testid="stMultiSelect"]')) {
    const box = m.querySelector('[data-testid="stMultiSelectTagsContainer"]');
    if (!box || !shown(box)) continue;
    const b = box.getBoundingClientRect();
    const tags = [...m.querySelectorAll('[data-tag]')].filter(t => !t.closest('template'));
    const hidden = tags.filter(t => {
      const r = t.getBoundingClientRect();
      return r.width === 0 || r.right > b.right + 1 || r.bottom > b.bottom + 1;
    });
    if (hidden.length)
      out.push(`multiselect "${(m.innerText || '').split('\\n')[0]}" hides `
               + `${hidden.length} of ${tags.length} chips`);
  }
  return out;
}"""
"""What of the page shown is wider than its column, scrolls sideways, or hides part of a
table header or of a multiselect's chips: one sentence each."""


def _check(page: Any, name: str, found: dict[str, list[str]]) -> None:
    """Run both checks on the page shown; save its screenshot as ``layout_<name>.png``."""
    no_exception(page)
    problems = [f"cut short: {t}" for t in page.evaluate(CUT)] + page.evaluate(OVERFLOW)
    if problems:
        found[name] = problems
    if not SCREENSHOTS and not problems:
        return
    height = page.evaluate(
        "() => document.querySelector('[data-testid=stMainBlockContainer]').scrollHeight")
    page.set_viewport_size({"width": 1280, "height": min(height + 120, 16_000)})
    page.wait_for_timeout(400)
    page.screenshot(path=str(ARTIFACTS / f"layout_{name.lower().replace(' ', '_')}.png"))
    page.set_viewport_size({"width": 1280, "height": 800})


def _chinese(path: Path) -> tuple[str, bytes]:
    """A sample month with Chinese labels and query ids (高/中/低/无, 查询0001)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    words = {"high": "高", "mid": "中", "low": "低", "none": "无"}
    out = [lines[0]]
    for line in lines[1:]:
        cells = line.split(",")
        cells[2] = cells[2].replace("q", "查询")
        cells[6] = words.get(cells[6], cells[6])
        out.append(",".join(cells))
    return path.name, ("\n".join(out) + "\n").encode("utf-8")


def _save(workspace: Path) -> tuple[str, str]:
    """The sample saved as a dataset with a decision on bm25 vs neural_rerank, and two
    Chinese months saved as a labeling set; their short ids."""
    from ireval_core.meeting import DecisionSettings, decision_note
    from ireval_core.workspace import Target, Workspace

    months = [_chinese(p) for p in sorted((SAMPLE / "labels").glob("labels_*.csv"))[:2]]
    with Workspace.open(str(workspace)) as ws:
        data = ws.save_dataset(sample_files(), name="November round", saved_by="ana")
        text = decision_note(
            "Ship neural_rerank: it is not worse than bm25 and the win holds.",
            ["neural_rerank beats bm25 on nDCG@10 (p < 0.001).",
             "No query loses more than 0.1 against bm25."],
            DecisionSettings(("bm25", "narrow_recall", "neural_rerank"), "2%",
                             n_resamples=2000),
            f"compare?ds={data.short_id}&margin=2")
        ws.add_note(data.id, Target.comparison("bm25", "neural_rerank", "nDCG@10"), text,
                    author="ana", kind="decision")
        labels = ws.save_dataset([("labels", n, d) for n, d in months], name="月度标注 2026",
                                 saved_by="张伟")
    return data.short_id, labels.short_id


def test_every_page_fits_1280_by_800(server, server_workspace, browser, month):
    dataset, labels = _save(server_workspace)
    found: dict[str, list[str]] = {}
    with guarded_page(browser, width=1280, height=800, timeout=90_000) as page:
        page.goto(server)
        page.get_by_text("run_bm25.txt").filter(visible=True).first.wait_for()
        settle(page)
        for title in PAGES:
            if title != "Data":
                nav(page, title)
            if page.locator(".js-plotly-plot").count():
                page.locator(".js-plotly-plot").first.wait_for()
            _check(page, title, found)
        # the labels this test was first written for are on their pages, whole
        nav(page, "Compare")
        for label in ("Download CSV", "Download JSON", "Minimum detectable difference"):
            page.get_by_text(label, exact=True).filter(visible=True).first.wait_for()
        # a saved dataset: its recorded decision on the Meeting page
        page.goto(f"{server}/meeting?ds={dataset}")
        page.get_by_text("Ship neural_rerank").filter(visible=True).first.wait_for()
        settle(page)
        _check(page, "Meeting (a decision)", found)
        # a saved labeling set
        page.goto(f"{server}/labels_trend?source=saved&set={labels}")
        page.get_by_text("2026-06").filter(visible=True).first.wait_for()
        settle(page)
        for title in LABELING:
            if title != "Trend":
                nav(page, title)
            assert "source=saved" in page.url, page.url
            _check(page, f"{title} (a labeling set)", found)
        # a month with 83 conflicts: the list of problems wraps its lines
        page.goto(f"{server}/labels_data")
        settle(page)
        page.get_by_text("Upload labeling files").first.click()
        settle(page)
        page.locator('input[type="file"]').first.set_input_files(
            [{"name": "五月.csv", "mimeType": "text/csv", "buffer": month[0].encode()}])
        page.get_by_text("83 problems").filter(visible=True).first.wait_for()
        settle(page)
        _check(page, "Labeling data (83 problems)", found)
    assert found == {}, "at 1280 x 800:\n" + "\n".join(
        f"{page}: {p}" for page, problems in found.items() for p in problems)


def test_the_meeting_report_fits_1280(browser) -> None:
    """The meeting report's HTML file (memo of a decision, decision evidence, long run
    names) at 1280 px: no table wider than the text column, no sideways scroll."""
    from ireval_core import read_qrels, read_runs
    from ireval_core.meeting import DecisionSettings, ReportNote, decision_note, meeting_report

    qrels = read_qrels(SAMPLE / "qrels.txt")
    # names as real runs have them (file:tag), long enough to fill a table's first column
    runs = [r.renamed(f"{r.name}-splade-pp-ed-rerank:{r.name}_2026-11")
            for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    names = tuple(r.name for r in runs)
    text = decision_note("Ship neural_rerank.", ["neural_rerank beats bm25."],
                         DecisionSettings(names, "2%", n_resamples=500), "compare?margin=2")
    note = ReportNote(text, "ana", "2026-11-25 15:00 UTC", "bm25 vs neural_rerank on nDCG@10",
                      "decision", (names[0], names[2], "nDCG@10"))
    html = meeting_report(qrels, runs, ["nDCG@10", "AP"], notes=[note], n_resamples=500,
                          charts=False).html
    # the decision among the notes reads as a block: settings as a list, no JSON
    assert "<li>runs compared: " in html and '{"systems"' not in html
    with guarded_page(browser, width=1280, height=800) as pg:
        pg.set_content(html, wait_until="load")
        wide = pg.evaluate("""() => {
          const body = document.body.getBoundingClientRect();
          const out = [...document.querySelectorAll('table, pre, ul, p, section')]
            .filter(e => e.getBoundingClientRect().right > body.right + 1)
            .map(e => `${e.tagName} ${Math.round(e.getBoundingClientRect().width)} px`);
          const doc = document.documentElement;
          if (doc.scrollWidth > doc.clientWidth + 1)
            out.push(`the page scrolls sideways (${doc.scrollWidth} > ${doc.clientWidth})`);
          return out; }""")
        pg.set_viewport_size({"width": 1280, "height": min(
            pg.evaluate("() => document.documentElement.scrollHeight"), 16_000)})
        pg.screenshot(path=str(ARTIFACTS / "layout_meeting_report.png"))
    assert wide == [], wide
