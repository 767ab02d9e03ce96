"""Roles in a real browser, signed in through a real provider (:mod:`oidc_provider`).

One ``streamlit run app.py`` with sign-in, on a SQLite workspace where Ada is the admin
(``IREVAL_ADMINS``), Vic a viewer, Ray a rater and Edd an editor, and the sample saved
by Edd:

* Vic opens a link to the Compare page of the saved sample: the data, and no control
  to record a decision or add a note;
* Ray judges a document on the Judging page by its key: the label is saved at once
  under his verified identity (he types no name);
* Edd records a decision there, with nothing to type but the decision, and the Meeting
  page's memo names him as its recorder (the note's author is his verified identity);
* Ada, the admin, sees the Admin page in her menu and makes Vic an editor there.

Screenshots (1280 x 800): ``test-artifacts/roles_viewer_compare.png``,
``roles_admin.png``.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from _apps import NEEDS_SAMPLE, sample_files
from browser_support import (
    ARTIFACTS,
    app_server,
    free_port,
    guarded_page,
    require_chromium,
    shown,
)
from oidc_provider import oidc_provider

from ireval_core.workspace import OPERATOR, Actor, Workspace

require_chromium()
pytestmark = NEEDS_SAMPLE

ADA = Actor("ada@example.org", "Ada Admin")
VIC = Actor("vic@example.org", "Vic Viewer")
EDD = Actor("edd@example.org", "Edd Editor")
RAY = Actor("ray@example.org", "Ray Rater")


@dataclass
class Setup:
    url: str
    workspace: Path
    dataset: str
    """The short id of the saved sample."""
    cookie_secret: str


@pytest.fixture(scope="module")
def team_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    folder = tmp_path_factory.mktemp("roles")
    path = folder / "workspace.db"
    admins, os.environ["IREVAL_ADMINS"] = os.environ.get("IREVAL_ADMINS"), ADA.email
    try:
        with Workspace.open(str(path)) as ws:
            ws.sign_in(ADA)
            ws.set_role(VIC.email, "viewer", actor=ADA, name=VIC.name)
            ws.set_role(EDD.email, "editor", actor=ADA, name=EDD.name)
            ws.set_role(RAY.email, "rater", actor=ADA, name=RAY.name)
            dataset = ws.save_dataset(sample_files("run_bm25.txt", "run_neural.txt"),
                                      name="sample", actor=EDD).short_id  # one pair
    finally:
        if admins is None:
            os.environ.pop("IREVAL_ADMINS", None)
        else:
            os.environ["IREVAL_ADMINS"] = admins
    cookie_secret = secrets.token_urlsafe(32)
    with oidc_provider(f"{url}/oauth2callback") as provider:
        secrets_file = folder / "secrets.toml"
        secrets_file.write_text(
            "[auth]\n"
            f'redirect_uri = "{url}/oauth2callback"\n'
            f'cookie_secret = "{cookie_secret}"\n'
            f'client_id = "{provider.client_id}"\n'
            f'client_secret = "{provider.client_secret}"\n'
            f'server_metadata_url = "{provider.issuer}/.well-known/openid-configuration"\n')
        with app_server(path, port=port, log=folder / "server.log",
                        args=["--secrets.files", str(secrets_file)],
                        IREVAL_ADMINS=ADA.email):
            yield Setup(url, path, dataset, cookie_secret)


def _quiet(pg: Any) -> None:
    pg.wait_for_selector('[data-testid="stApp"]')
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    pg.wait_for_timeout(400)


def _signed_in_at(pg: Any, url: str, person: Actor) -> None:
    """Open ``url`` signed out, sign in as ``person`` through the provider, back there."""
    pg.goto(url)
    pg.get_by_role("button", name="Sign in").click()
    pg.get_by_role("button", name=f"Sign in as {person.email}").click()
    pg.get_by_text(f"({person.email})").filter(visible=True).first.wait_for(timeout=60_000)
    _quiet(pg)


def _compare(pg: Any) -> None:
    """The Compare page with its results drawn (the decision box at its end)."""
    pg.get_by_text("Record a decision").filter(visible=True).first.wait_for(timeout=90_000)
    _quiet(pg)


def _choose(pg: Any, label: str, option: str) -> None:
    box = pg.locator('[data-testid="stSelectbox"]').filter(has_text=label).first
    box.scroll_into_view_if_needed()
    box.locator("input").click()
    pg.get_by_role("option", name=option).first.click()
    pg.wait_for_timeout(300)


def test_viewer_editor_and_admin(browser: Any, team_server: Setup) -> None:
    link = (f"{team_server.url}/compare?ds={team_server.dataset}&tests=t&resamples=100"
            "&measures=nDCG@10")  # one pair, one test: the least the page computes
    with guarded_page(browser, width=1280, height=800) as vic:
        _signed_in_at(vic, link, VIC)
        _compare(vic)
        main = vic.locator('[data-testid="stMain"]')
        assert "bm25" in main.inner_text()  # the data
        shown(vic, "Recording a decision needs the role editor")
        assert "Recording a decision needs the role editor" in main.inner_text()
        assert main.get_by_role("button", name="Record the decision").count() == 0
        assert main.get_by_role("button", name="Add").count() == 0  # no notes form
        assert main.get_by_label("Your name").count() == 0
        assert "Admin" not in vic.locator('[data-testid="stSidebar"]').inner_text()
        vic.get_by_text("Record a decision").scroll_into_view_if_needed()
        vic.screenshot(path=str(ARTIFACTS / "roles_viewer_compare.png"))

    with guarded_page(browser, width=1280, height=800) as ray:
        _signed_in_at(ray, f"{team_server.url}/judging?ds={team_server.dataset}"
                           "&measure=nDCG@10&baseline=bm25&candidate=neural_rerank", RAY)
        ray.get_by_text("Batch 1:").filter(visible=True).first.wait_for(timeout=90_000)
        _quiet(ray)
        assert ray.get_by_label("Your name (the rater)").count() == 0  # he is signed in
        ray.locator("h1").first.click()  # the keys go to the page
        ray.keyboard.press("1")
        ray.get_by_text("Batch 1: 1 of").filter(visible=True).first.wait_for(timeout=60_000)
    with Workspace.open(str(team_server.workspace)) as ws:
        deadline = time.monotonic() + 30  # the label is written as the next item is drawn
        while len(versions := ws.versions(team_server.dataset, actor=ADA)) == 1 and \
                time.monotonic() < deadline:
            time.sleep(0.1)
        assert versions[-1].saved_by == "Ray Rater <ray@example.org>"  # his label's version
        assert [(e.action, e.actor_email) for e in ws.audit(actor=OPERATOR)][-1][1] == \
            RAY.email

    with guarded_page(browser, width=1280, height=800) as edd:
        _signed_in_at(edd, link, EDD)
        _compare(edd)
        main = edd.locator('[data-testid="stMain"]')
        assert main.get_by_label("Your name").count() == 0  # nothing to type but this
        main.get_by_label("Decision on").fill("ship neural_rerank")
        main.get_by_role("button", name="Record the decision").click()
        edd.get_by_text("Recorded, with the evidence above").filter(visible=True).first.wait_for(
            timeout=60_000)
        edd.goto(f"{team_server.url}/meeting?ds={team_server.dataset}&measures=nDCG@10")
        edd.get_by_text("ship neural_rerank").filter(visible=True).first.wait_for(timeout=90_000)
        _quiet(edd)
        shown(edd, "Edd Editor <edd@example.org>")
        assert "Edd Editor <edd@example.org>" in edd.locator('[data-testid="stMain"]'
                                                             ).inner_text()

    with guarded_page(browser, width=1280, height=800) as ada:
        _signed_in_at(ada, f"{team_server.url}/admin", ADA)
        ada.get_by_text("Members of default").filter(visible=True).first.wait_for(timeout=60_000)
        _quiet(ada)
        assert "Admin" in ada.locator('[data-testid="stSidebar"]').inner_text()
        ada.screenshot(path=str(ARTIFACTS / "roles_admin.png"))
        _choose(ada, "Member", "vic@example.org")
        _choose(ada, "Role", "editor")
        ada.get_by_role("button", name="Set the role").click()
        ada.get_by_text("vic@example.org: now editor in default").filter(
            visible=True).first.wait_for(timeout=30_000)
        _quiet(ada)
    with Workspace.open(str(team_server.workspace)) as ws:
        assert ws.role(VIC) == "editor"
        log = [(e.action, e.actor_email) for e in ws.audit(actor=OPERATOR)]
        assert log[-2:] == [("decision recorded", EDD.email), ("role changed", ADA.email)]
        assert ws.verify_audit(actor=OPERATOR).intact


def test_forged_and_expired_cookies_show_no_page(browser: Any, team_server: Setup) -> None:
    """Pages opened by a link naming the saved sample, with an identity cookie claiming
    Ada, the admin: signed with another secret (forged), or with the server's secret but
    40 days old (expired): only the sign-in screen, nothing of the data, no menu, and
    nothing written. Each cookie on a fixed sample of 5 pages (every fourth page; a page
    load costs a second or more): the gate is the same for every page and
    ``test_app_roles.py`` opens every page without a session; ``IREVAL_ROLES_ALL_PAGES=1``:
    every page with both cookies. The same cookie made fresh with the server's
    secret lets Ada in (the control: the forgery is what the server would accept but for
    the secret or the age).
    A browser is needed for the cookie; what each role sees of every page is
    ``test_app_roles.py``'s (AppTest)."""
    from test_browser_signin import _signed_cookie

    from ireval_app.frame import PAGES

    payload = {"email": ADA.email, "name": ADA.name, "email_verified": True,
               "is_logged_in": True, "provider": "default", "origin": team_server.url}
    cookies = {"forged": _signed_cookie(secrets.token_urlsafe(32), payload),
               "expired": _signed_cookie(team_server.cookie_secret, payload, age_days=40)}
    with Workspace.open(str(team_server.workspace)) as ws:
        rows = len(ws.audit(actor=OPERATOR))
    markers = ("bm25", "neural_rerank", "qrels.txt", team_server.dataset, "Members of")
    names = list(PAGES)
    every = os.environ.get("IREVAL_ROLES_ALL_PAGES") == "1"
    with guarded_page(browser, width=1280, height=800) as pg:
        for turn, (kind, value) in enumerate(cookies.items()):
            pg.context.clear_cookies()
            pg.context.add_cookies([{"name": "_streamlit_user", "value": value,
                                     "url": team_server.url, "httpOnly": True}])
            for name in names if every else names[turn::4]:  # a fixed sample, 5 pages
                path = "" if name == "data" else name
                pg.goto(f"{team_server.url}/{path}?ds={team_server.dataset}"
                        f"&set={team_server.dataset}&project=default")
                pg.get_by_role("button", name="Sign in").wait_for(timeout=60_000)
                pg.wait_for_function(
                    "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')",
                    timeout=60_000)
                body = shown(pg, "sign in to see its datasets")
                assert "sign in to see its datasets" in body, (kind, name)
                assert not [m for m in markers if m in body], (kind, name)
                assert pg.locator('[data-testid="stSidebar"]').count() == 0, (kind, name)
                assert pg.locator('[data-testid="stButton"]').count() == 1, (kind, name)
        pg.context.clear_cookies()
        pg.context.add_cookies([{"name": "_streamlit_user", "url": team_server.url,
                                 "value": _signed_cookie(team_server.cookie_secret, payload),
                                 "httpOnly": True}])
        pg.goto(f"{team_server.url}/admin")
        pg.get_by_text("Members of default").filter(visible=True).first.wait_for(timeout=60_000)
    with Workspace.open(str(team_server.workspace)) as ws:
        assert len(ws.audit(actor=OPERATOR)) == rows  # the control: Ada, a member already
