"""Who may see the app: the sign-in gate on every page, and the server that is refused.

AppTest sessions (no browser): an unusable configuration (no or a short
``cookie_secret``) shows what to fix and never the secret; without sign-in, a server
beyond the loopback is refused unless ``IREVAL_ALLOW_ANONYMOUS=1``, and the sidebar of a
local one says that nobody signs in. The check before a start (``python -m
ireval_app.signin``, which ``make run`` runs) gives the same answers. The round trip
through a real provider is ``test_browser_signin.py``; every page showing the sign-in
screen and nothing else to a person not signed in is ``test_app_roles.py``'s probe.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from _apps import APP
from streamlit import config
from streamlit.testing.v1 import AppTest

from ireval_app import signin

SECRET = "s3cret-" + "k" * 40
AUTH = {"redirect_uri": "https://ireval.example.org/oauth2callback", "cookie_secret": SECRET,
        "client_id": "ireval", "client_secret": "client-secret-value",
        "server_metadata_url": "https://id.example.org/.well-known/openid-configuration"}


def _session(page: str, auth: dict[str, Any] | None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    if auth is not None:
        at.secrets["auth"] = auth
    if page != "app.py":
        at.switch_page(page)
    return at.run()


def _shows_nothing(at: AppTest) -> None:
    assert not at.exception
    assert len(at.sidebar) == 0  # no menu, no dataset, no link, no options
    for kind in ("dataframe", "table", "metric", "selectbox", "radio", "text_input"):
        assert len(getattr(at, kind)) == 0, kind
    text = " ".join(str(e.value) for e in (*at.markdown, *at.caption, *at.error))
    for marker in ("bm25", "qrels.txt", "neural_rerank", SECRET, "client-secret-value"):
        assert marker not in text


@pytest.mark.parametrize(("secret", "expected"), [
    (None, "has no `cookie_secret`"), ("short", "`cookie_secret` has 5 characters")])
def test_an_unusable_cookie_secret_is_named_and_nothing_shown(secret: str | None,
                                                              expected: str) -> None:
    auth = {k: v for k, v in AUTH.items() if k != "cookie_secret"}
    if secret is not None:
        auth["cookie_secret"] = secret
    at = _session("pages/metrics.py", auth)
    _shows_nothing(at)
    assert expected in at.error[0].value and "secrets.toml" in at.error[0].value
    assert len(at.button) == 0  # no sign-in with an unusable secret


@pytest.fixture
def address() -> Iterator[None]:
    """The server's ``server.address`` set to every interface for the test."""
    before = config.get_option("server.address")
    config.set_option("server.address", "0.0.0.0")
    yield
    config.set_option("server.address", before)


def test_a_server_beyond_loopback_without_sign_in_is_refused(
        address: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(signin.ALLOW_ANONYMOUS, raising=False)
    at = _session("app.py", None)
    _shows_nothing(at)
    assert "Refused: the server listens on 0.0.0.0 without sign-in" in at.error[0].value
    monkeypatch.setenv(signin.ALLOW_ANONYMOUS, "1")  # the risk taken: today's tool
    at = _session("app.py", None)
    assert not at.exception and len(at.dataframe) > 0
    assert at.sidebar.caption[0].value == ("No sign-in: anyone who reaches this server uses "
                                           "it (IREVAL_ALLOW_ANONYMOUS=1).")
    assert signin.config_problem(AUTH) is None  # with sign-in the address is no question


def test_a_local_server_says_nobody_signs_in() -> None:
    at = _session("pages/lab.py", None)
    assert not at.exception
    lines = [c.value for c in at.sidebar.caption]
    assert lines[0] == "Local, single-person use: no sign-in (this machine only)."


@pytest.mark.parametrize(("address", "env", "loopback", "allowed"), [
    ("127.0.0.1", {}, True, True), ("localhost", {}, True, True), ("::1", {}, True, True),
    ("127.0.0.2", {}, True, True), ("0.0.0.0", {}, False, False), ("", {}, False, False),
    ("10.1.2.3", {}, False, False), ("0.0.0.0", {"IREVAL_ALLOW_ANONYMOUS": "1"}, False, True),
    ("0.0.0.0", {"IREVAL_ALLOW_ANONYMOUS": "yes"}, False, False)])
def test_the_address_rule(address: str, env: dict[str, str], loopback: bool,
                          allowed: bool) -> None:
    assert signin.is_loopback(address or None) is loopback
    assert (signin.address_problem(address or None, signin=False, environ=env) is None) is allowed
    assert signin.address_problem(address or None, signin=True, environ=env) is None


def test_the_check_before_a_start(monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv(signin.ALLOW_ANONYMOUS, raising=False)
    assert signin.main(["--address", "127.0.0.1"]) == 0
    assert signin.main(["--address", "0.0.0.0"]) == 1
    assert "IREVAL_ALLOW_ANONYMOUS=1" in capsys.readouterr().err
    monkeypatch.setenv(signin.ALLOW_ANONYMOUS, "1")
    assert signin.main(["--address", "0.0.0.0"]) == 0


@pytest.mark.parametrize(("change", "expected"), [
    ({"redirect_uri": "/oauth2callback"}, "`redirect_uri` must be the app's absolute"),
    ({"client_secret": ""}, "lacks `client_secret`"),
    ({"cookie_secret": "x" * 31}, "it needs at least 32"),
    ({"expose_tokens": "id"}, "remove `expose_tokens`"),
])
def test_config_problems_name_the_key_never_the_value(change: dict[str, str],
                                                      expected: str) -> None:
    problem = signin.config_problem({**AUTH, **change})
    assert problem is not None and expected in problem
    for key in ("cookie_secret", "client_secret"):
        value = str(change.get(key, AUTH[key]))
        assert not value or value not in problem
    named = {k: v for k, v in AUTH.items() if k in ("redirect_uri", "cookie_secret")}
    named["okta"] = {k: AUTH[k] for k in ("client_id", "client_secret", "server_metadata_url")}
    assert signin.providers(named) == ["okta"] and signin.config_problem(named) is None
