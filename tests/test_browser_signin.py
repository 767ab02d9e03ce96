"""Sign-in with OpenID Connect, in a real browser against a real provider.

One ``streamlit run app.py`` whose ``[auth]`` secrets point at the provider of
:mod:`oidc_provider` (Authlib's client on Streamlit's side, RS256 id_tokens, PKCE, a
login form on the provider's side), both on loopback ports, and Debian's chromium:

* a deep link opened signed out shows the sign-in screen and no data; through the
  provider it arrives at the linked view, with the link's options;
* signing out returns to the sign-in screen (and through the provider's logout), and the
  back button then shows no data;
* a forged identity cookie, one signed with another secret, and one signed with the
  right secret but too old show no data (and one made the same way with the right secret
  and a fresh time does sign in: the test forges what the server would accept);
* two people signed in at once in two browser contexts each see their own identity and
  their own view, and one signing out leaves the other signed in;
* no code, token or secret in any URL after the callback, on any page, or in the log.

The first test runs the round trips; the second the forged cookies. One server and one
provider for the module.

Screenshots: ``test-artifacts/signin_screen.png``, ``signin_sidebar.png``.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from browser_support import ARTIFACTS, app_server, free_port, guarded_page, require_chromium
from oidc_provider import Provider, oidc_provider

require_chromium()

COOKIE_SECRET = secrets.token_urlsafe(32)
DATA_MARKERS = ("bm25", "neural_rerank", "narrow_recall", "qrels.txt", "Mean per run")
"""Text that only a page showing the sample's data has."""
LINK = "/lab?preset=seed004-ndcg"
"""A link to a view (a page and its parameter) that costs the server little to draw."""


@dataclass
class Setup:
    url: str
    provider: Provider
    log: Path


@pytest.fixture(scope="module")
def signin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Setup]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    folder = tmp_path_factory.mktemp("signin")
    with oidc_provider(f"{url}/oauth2callback") as provider:
        secrets_file = folder / "secrets.toml"
        secrets_file.write_text(
            "[auth]\n"
            f'redirect_uri = "{url}/oauth2callback"\n'
            f'cookie_secret = "{COOKIE_SECRET}"\n'
            f'client_id = "{provider.client_id}"\n'
            f'client_secret = "{provider.client_secret}"\n'
            f'server_metadata_url = "{provider.issuer}/.well-known/openid-configuration"\n')
        log = folder / "server.log"
        with app_server(folder / "workspace.db", port=port, log=log,
                        args=["--secrets.files", str(secrets_file)],
                        IREVAL_DEFAULT_ROLE="viewer"):  # who signs in reads
            yield Setup(url, provider, log)


def _quiet(pg: Any) -> None:
    """No script running, then the page unchanged for a moment."""
    pg.wait_for_selector('[data-testid="stApp"]')
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    pg.wait_for_timeout(300)


def _at_sign_in_screen(pg: Any) -> None:
    """The sign-in screen and nothing of the data: no run, no qrels, no menu, no link."""
    pg.get_by_text("sign in to see its datasets").filter(visible=True).first.wait_for(
        timeout=60_000)
    _quiet(pg)
    body = pg.inner_text("body")
    for marker in DATA_MARKERS:
        assert marker not in body, marker
    assert pg.locator('[data-testid="stSidebar"]').count() == 0  # no menu, no link box
    assert pg.locator('[data-testid="stDataFrame"], [data-testid="stTable"]').count() == 0
    assert pg.locator('[data-testid="stException"]').count() == 0


def _sign_in(pg: Any, user_email: str) -> None:
    """From the sign-in screen, through the provider's login form, back to the app."""
    pg.get_by_role("button", name="Sign in").click()
    pg.get_by_text("Test identity provider").filter(visible=True).first.wait_for(timeout=30_000)
    pg.get_by_role("button", name=f"Sign in as {user_email}").click()
    pg.get_by_text(f"({user_email})").filter(visible=True).first.wait_for(timeout=60_000)


def _lab_shown(pg: Any, seed: str) -> None:
    """The Metric lab showing the worked example of ``seed`` (e.g. "Seed 4")."""
    pg.locator('[data-testid="stAlert"]').filter(has_text=f"{seed}:").wait_for(timeout=60_000)
    _quiet(pg)


def _no_secret_in(text: str, signin: Setup, *, skip_codes: bool = False) -> None:
    """None of the secrets and none of the provider's tokens (nor its codes, unless
    ``skip_codes``) in ``text``."""
    issued = signin.provider.tokens if skip_codes else signin.provider.issued
    for secret in (COOKIE_SECRET, signin.provider.client_secret, *issued):
        assert secret not in text, text[:200]


def test_two_people_deep_links_sign_out_and_back(browser: Any, signin: Setup) -> None:
    """Alice opens a deep link signed out and signs in (arriving at it); Bob signs in
    beside her with another link; each session keeps its own person and view, also run
    again; Alice signs out (and through the provider's logout), her back button shows no
    data, Bob is still signed in."""
    with (guarded_page(browser, height=900) as alice, guarded_page(browser, height=800) as bob):
        urls: list[str] = []
        alice.on("request",
                 lambda r: urls.append(r.url) if r.is_navigation_request() else None)
        alice.goto(signin.url + LINK)
        _at_sign_in_screen(alice)
        alice.screenshot(path=str(ARTIFACTS / "signin_screen.png"))
        _sign_in(alice, "alice@example.org")
        _lab_shown(alice, "Seed 4")  # the link's page and value, through the provider
        assert alice.url == signin.url + LINK
        sidebar = alice.locator('[data-testid="stSidebar"]')
        assert "Signed in as Alice Andersen (alice@example.org)" in sidebar.inner_text()
        sidebar.screenshot(path=str(ARTIFACTS / "signin_sidebar.png"))
        # the code went to the callback once (PKCE-bound) and nowhere after; no token or
        # secret in any address the browser was sent to
        callback = next(i for i, u in enumerate(urls) if "/oauth2callback?code=" in u)
        for u in urls[callback + 1:]:
            _no_secret_in(u, signin)
        for u in urls:
            _no_secret_in(u, signin, skip_codes=True)

        bob_link = "/lab?preset=seed002-map"
        bob.goto(signin.url + bob_link)
        _at_sign_in_screen(bob)
        _sign_in(bob, "bob@example.org")
        _lab_shown(bob, "Seed 2")
        alice.reload()  # a new run of alice's browser after bob signed in: still hers
        _lab_shown(alice, "Seed 4")
        for pg, me, other, mine, theirs in ((alice, "alice", "bob", "Seed 4", "Seed 2"),
                                            (bob, "bob", "alice", "Seed 2", "Seed 4")):
            side = pg.locator('[data-testid="stSidebar"]').inner_text()
            assert f"({me}@example.org)" in side and f"{other}@example.org" not in side
            main = pg.locator('[data-testid="stMain"]').inner_text()
            assert f"{mine}:" in main and f"{theirs}:" not in main
            _no_secret_in(pg.content(), signin)
        assert bob.url == signin.url + bob_link

        logouts = signin.provider.logouts
        sidebar.get_by_role("button", name="Sign out").click()
        _at_sign_in_screen(alice)
        assert signin.provider.logouts == logouts + 1  # the provider's session ended too
        alice.go_back()  # the signed-in view, from history: asked again, shown no more
        _at_sign_in_screen(alice)
        assert alice.url == signin.url + LINK
        bob.reload()  # bob's sign-in is his own: still signed in
        _lab_shown(bob, "Seed 2")
        assert "(bob@example.org)" in bob.locator('[data-testid="stSidebar"]').inner_text()
    assert len(signin.provider.tokens) == 4  # two sign-ins; no code, token or secret logged
    _no_secret_in(signin.log.read_text(), signin)


def _signed_cookie(secret: str, payload: dict[str, Any], *, age_days: float = 0) -> str:
    """The identity cookie as Streamlit signs it (itsdangerous, salted with the cookie's
    name), made ``age_days`` old."""
    from itsdangerous import TimestampSigner, URLSafeTimedSerializer

    class Aged(TimestampSigner):
        def get_timestamp(self) -> int:
            return int(time.time() - age_days * 86400)

    serializer = URLSafeTimedSerializer(secret, salt="_streamlit_user", signer=Aged)
    return str(serializer.dumps(json.dumps(payload)))


def test_forged_and_expired_cookies(browser: Any, signin: Setup) -> None:
    payload = {"email": "mallory@example.org", "name": "Mallory", "email_verified": True,
               "is_logged_in": True, "provider": "default", "origin": signin.url}
    forged = {
        "unsigned": json.dumps(payload),
        "other secret": _signed_cookie(secrets.token_urlsafe(32), payload),
        "expired": _signed_cookie(COOKIE_SECRET, payload, age_days=40),
        "right secret": _signed_cookie(COOKIE_SECRET, payload),
    }
    with guarded_page(browser, height=800) as pg:
        for kind, value in forged.items():
            pg.context.clear_cookies()
            pg.context.add_cookies([{"name": "_streamlit_user", "value": value,
                                     "url": signin.url, "httpOnly": True}])
            pg.goto(signin.url + LINK)
            if kind == "right secret":  # the control: only the cookie secret makes a person
                pg.get_by_text("(mallory@example.org)").filter(visible=True).first.wait_for(
                    timeout=60_000)
                _lab_shown(pg, "Seed 4")
            else:
                _at_sign_in_screen(pg)
