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
  their own view;
* no code, token or secret in any URL after the callback, on any page, or in the log.

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
                        args=["--secrets.files", str(secrets_file)]):
            yield Setup(url, provider, log)


def _quiet(pg: Any) -> None:
    """No script running, then the page unchanged for a moment."""
    pg.wait_for_selector('[data-testid="stApp"]')
    pg.wait_for_function(
        "() => !document.querySelector('[data-testid=\"stStatusWidget\"]')", timeout=60_000)
    pg.wait_for_timeout(300)


def _at_sign_in_screen(pg: Any) -> None:
    """The sign-in screen and nothing of the data: no run, no qrels, no menu, no link."""
    pg.get_by_text("sign in to see its datasets").wait_for(timeout=60_000)
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
    pg.get_by_text("Test identity provider").wait_for(timeout=30_000)
    pg.get_by_role("button", name=f"Sign in as {user_email}").click()
    pg.get_by_text(f"({user_email})").wait_for(timeout=60_000)


def _lab_shown(pg: Any, seed: str) -> None:
    """The Metric lab showing the worked example of ``seed`` (e.g. "Seed 4")."""
    pg.locator('[data-testid="stAlert"]').filter(has_text=f"{seed}:").wait_for(timeout=60_000)
    _quiet(pg)


def test_deep_link_through_the_provider_then_sign_out_and_back(browser: Any,
                                                                signin: Setup) -> None:
    with guarded_page(browser, height=900) as pg:
        urls: list[str] = []
        pg.on("request", lambda r: urls.append(r.url) if r.is_navigation_request() else None)
        pg.goto(signin.url + LINK)
        _at_sign_in_screen(pg)
        pg.screenshot(path=str(ARTIFACTS / "signin_screen.png"))
        _sign_in(pg, "alice@example.org")
        _lab_shown(pg, "Seed 4")  # the link's page and value
        assert pg.url == signin.url + LINK
        sidebar = pg.locator('[data-testid="stSidebar"]')
        assert "Signed in as Alice Andersen (alice@example.org)" in sidebar.inner_text()
        sidebar.screenshot(path=str(ARTIFACTS / "signin_sidebar.png"))
        # the code and state went through the callback and left no trace after it
        assert "code=" not in pg.url and "state=" not in pg.url
        callback = next(i for i, u in enumerate(urls) if "/oauth2callback?code=" in u)
        for u in urls[callback + 1:]:  # the code was used once, at the callback
            assert not any(secret in u for secret in signin.provider.issued), u
        for u in urls:
            for secret in (COOKIE_SECRET, signin.provider.client_secret,
                           *signin.provider.issued[1:]):
                assert secret not in u, u

        logouts = signin.provider.logouts
        sidebar.get_by_role("button", name="Sign out").click()
        _at_sign_in_screen(pg)
        assert signin.provider.logouts == logouts + 1  # the provider's session ended too
        pg.go_back()  # the signed-in view, from history: asked again, shown no more
        _at_sign_in_screen(pg)
        assert pg.url == signin.url + LINK


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
                pg.get_by_text("(mallory@example.org)").wait_for(timeout=60_000)
                _lab_shown(pg, "Seed 4")
            else:
                _at_sign_in_screen(pg)


def test_two_people_at_once_and_nothing_secret_in_the_log(browser: Any, signin: Setup) -> None:
    with (guarded_page(browser, height=800) as alice, guarded_page(browser, height=800) as bob):
        views = {alice: ("alice", "bob", "seed002-map", "Seed 2"),
                 bob: ("bob", "alice", "seed004-ndcg", "Seed 4")}
        for pg, (me, _, preset, _) in views.items():
            pg.goto(f"{signin.url}/lab?preset={preset}")
            _at_sign_in_screen(pg)
            _sign_in(pg, f"{me}@example.org")
        alice.reload()  # alice's session, run again after bob signed in: still hers
        for pg, (me, other, preset, title) in views.items():
            _lab_shown(pg, title)
            sidebar = pg.locator('[data-testid="stSidebar"]').inner_text()
            assert f"({me}@example.org)" in sidebar and f"{other}@example.org" not in sidebar
            assert pg.url.startswith(f"{signin.url}/lab?") and f"preset={preset}" in pg.url, pg.url
            other_title = views[alice if pg is bob else bob][3]
            assert f"{other_title}:" not in pg.locator('[data-testid="stMain"]').inner_text()
            html = pg.content()
            for secret in (COOKIE_SECRET, signin.provider.client_secret,
                           *signin.provider.issued):
                assert secret not in html
    log = signin.log.read_text()
    assert signin.provider.issued  # codes and tokens were issued, and none was logged
    for secret in (COOKIE_SECRET, signin.provider.client_secret, *signin.provider.issued):
        assert secret not in log
