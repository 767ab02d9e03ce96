"""Real browser: judge by keyboard on the Judging page, reload mid-batch, lose nothing;
Compare on the new version shows the new verdict, a link to the first version the old one."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from browser_support import (
    ARTIFACTS,
    guarded_page,
    nav,
    no_exception,
    require_chromium,
    settle,
    shown,
)
from test_app_judging import judged_rows, small_files

from ireval_core.workspace import JudgingSet, Workspace

require_chromium()


@pytest.fixture(scope="module")
def dataset(server_workspace: Path) -> str:
    with Workspace.open(str(server_workspace)) as ws:
        ds = ws.save_dataset(small_files(), name="holes", saved_by="ana").short_id
        ws.set_judging_set(ds, JudgingSet("**Relevant**: the document answers the query.\n\n"
                                          "- *none*: off topic\n- *low*: on topic, no answer"),
                           author="ana")
        return ds


def _start(pg, url: str) -> None:
    pg.goto(url)
    settle(pg)
    pg.get_by_label("Your name (the rater)", exact=True).fill("ana")
    pg.get_by_label("Your name (the rater)", exact=True).press("Enter")
    pg.get_by_text("Batch 1:").filter(visible=True).first.wait_for()
    settle(pg)
    pg.locator("h1").first.click()  # the keys go to the page, not to the name field


def _key(pg, key: str, rows: int, ws: Workspace, ds: str, position: int) -> None:
    """Press ``key``; wait until the workspace holds ``rows`` labels and the judging area
    shows ``position`` documents of the batch done."""
    pg.keyboard.press(key)
    deadline = time.monotonic() + 10
    while len(judged_rows(ws, ds)) != rows and time.monotonic() < deadline:
        time.sleep(0.05)
    pg.get_by_text(f"Batch 1: {position} of").filter(visible=True).first.wait_for()
    settle(pg)  # the buttons drawn again hold the shortcuts of the next key


def _verdict(pg, url: str) -> str:
    pg.goto(url)
    settle(pg)
    body = shown(pg, "Judgment debt: does the verdict survive", re.compile("(holds|depends): "))
    return re.search(r"(holds|depends): [^\n]+", body).group(0)


def test_judge_by_keyboard_reload_and_compare(browser, dataset: str, server: str,
                                              server_workspace: Path) -> None:
    ws = Workspace.open(str(server_workspace))
    page = f"{server}/judging?ds={dataset}&measure=P%405&baseline=base&candidate=cand"
    with guarded_page(browser, height=800, width=1280, timeout=60_000) as pg:
        _start(pg, page)
        inputs = pg.locator('[data-testid="stFileUploader"] input[type="file"]')
        topics = "".join(f"q{i}\tthe question of query {i}\n" for i in range(8)).encode()
        docs = "".join(f"d{i}\tthe text of document {i}\n" for i in range(5)).encode()
        inputs.nth(0).set_input_files([{"name": "topics.tsv", "mimeType": "text/plain",
                                        "buffer": topics}])
        settle(pg)
        inputs.nth(1).set_input_files([{"name": "docs.tsv", "mimeType": "text/plain",
                                        "buffer": docs}])
        body = shown(pg, "the text of document", re.compile(r"Query q\d: the question of query"),
                     "0 none", "1 low", "the document answers the query")
        assert "Not applied" not in body  # the link's measure, baseline and candidate
        assert re.search(r"Query q\d: the question of query \d", body), body
        assert "base" not in body.split("Batch 1")[1]  # blind: no system name by the document
        assert "0 none" in body and "1 low" in body  # the grades named, the qrels' scale
        assert "the document answers the query" in body  # the guidelines beside it
        pg.locator("h1").first.click()
        for n, key in enumerate(("1", "0", "1"), start=1):
            _key(pg, key, n, ws, dataset, n)
        assert "Batch 1: 3 of" in shown(pg, "Batch 1: 3 of")
        _key(pg, "u", 2, ws, dataset, 2)  # undo, written at once
        _key(pg, "1", 3, ws, dataset, 3)
        _key(pg, "ArrowLeft", 2, ws, dataset, 2)  # the left arrow: the same undo
        undo = pg.get_by_role("button", name=re.compile("Undo")).locator("visible=true")
        assert undo.count() == 1 and undo.inner_text().startswith("Undo last label")
        assert "u or ← undo the last label" in shown(pg, "u or ← undo the last label")
        pg.screenshot(path=str(ARTIFACTS / "judging_1280x800.png"))
        no_exception(pg)
        pg.reload()  # mid-batch: a closed browser loses nothing
        _start(pg, page)
        assert len(judged_rows(ws, dataset)) == 2
        for n, key in enumerate(("0", "1"), start=3):
            _key(pg, key, n, ws, dataset, n - 2)
        rows = judged_rows(ws, dataset)
        assert [r.grade for r in rows] == [1.0, 0.0, 0.0, 1.0]
        assert len({(r.query, r.doc) for r in rows}) == 4
        newest = ws.get_dataset(dataset).version
        compare = (f"{server}/compare?ds={dataset}&measures=P%405&runs=base.txt&runs=cand.txt"
                   "&tests=t&resamples=100")
        old, new = _verdict(pg, compare + "&dsv=1"), _verdict(pg, compare + f"&dsv={newest}")
        assert "24 unjudged" in old and "20 unjudged" in new, (old, new)
    ws.close()


def _round_labels(ws: Workspace, round_name: str) -> int:
    """Labels in the round's file of the set named after it (0 before the first)."""
    sets = [i for i in ws.list_datasets() if i.name == f"labels {round_name}"]
    if not sets:
        return 0
    info = ws.get_dataset(sets[0].id)
    data = ws.read_file(info.id, info.files[0].position).decode().splitlines()
    header = data[0].split(",")
    label, query, doc = header.index("label"), header.index("query"), header.index("doc")
    rows = [line.split(",") for line in data[1:]]
    return len({(r[query], r[doc]) for r in rows if r[label]})


def test_month_task_by_keyboard_then_the_trend(browser, server: str,
                                               server_workspace: Path) -> None:
    """Build the month's task from the sample query log and the sample runs, judge three
    units by keyboard (each written at once), then open the Trend in the same session:
    it shows the new round of the new labeling set, not the sample."""
    ws = Workspace.open(str(server_workspace))
    with guarded_page(browser, height=800, width=1280, timeout=60_000) as pg:
        pg.goto(f"{server}/judging")
        settle(pg)
        pg.get_by_text("Label the month's task", exact=True).click()
        settle(pg)
        pg.get_by_label("Your name (the rater)", exact=True).fill("bo")
        pg.get_by_label("Your name (the rater)", exact=True).press("Enter")
        pg.get_by_label("Round", exact=True).wait_for()
        pg.get_by_label("Round", exact=True).fill("2026-07")
        pg.get_by_label("New set's name", exact=True).fill("labels 2026-07")
        pg.get_by_role("button", name="Build the task").click()
        pg.get_by_text("labeled", exact=False).filter(visible=True).first.wait_for()
        settle(pg)
        body = shown(pg, "round 2026-07: simple random sample of 10 of 60")
        assert "round 2026-07: simple random sample of 10 of 60" in body, body[-600:]
        pg.locator("h1").first.click()  # the keys go to the page, not to a field
        for n, key in enumerate(("3", "1", "0"), start=1):
            pg.keyboard.press(key)
            deadline = time.monotonic() + 10
            while _round_labels(ws, "2026-07") != n and time.monotonic() < deadline:
                time.sleep(0.05)
            pg.get_by_text(f"{n} of ").filter(visible=True).first.wait_for()
            settle(pg)
        assert _round_labels(ws, "2026-07") == 3
        pg.screenshot(path=str(ARTIFACTS / "judging_task_1280x800.png"))
        no_exception(pg)
        nav(pg, "Trend")
        body = shown(pg, "2026-07")
        assert "Sample labeling data" not in body and "2026-07" in body, body[:2000]
        pg.screenshot(path=str(ARTIFACTS / "judging_task_trend_1280x800.png"))
        no_exception(pg)
    ws.close()
