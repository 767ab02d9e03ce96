"""A small, real OpenID Connect provider on a loopback port, for the sign-in tests.

It speaks the authorization-code flow as Google, Entra or Keycloak do, so that the app's
``st.login`` (Streamlit, Authlib) runs its real round trip against it:

* ``/.well-known/openid-configuration``: the discovery document (PKCE S256, an
  ``end_session_endpoint``);
* ``/authorize``: checks the client and the registered redirect URI, then shows a login
  form with one button per user (:data:`USERS`); the chosen user's code goes back to the
  redirect URI with the ``state``;
* ``/token``: the client's secret (HTTP Basic or form), the code (once), the redirect
  URI and the PKCE verifier are checked; answers an access token and an RS256-signed
  ``id_token`` (issuer, audience, ``nonce``, expiry) whose key is at ``/jwks``;
* ``/userinfo``: the user's claims for the bearer access token;
* ``/logout``: ends the provider's session and returns to ``post_logout_redirect_uri``.

``issued`` keeps every code and token handed out (``tokens`` the tokens alone), so a
test can check that none of them ever shows up in a URL, a page or the app's log. Not a
test module.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from joserfc import jwt
from joserfc.jwk import RSAKey

USERS = {
    "alice": {"email": "alice@example.org", "name": "Alice Andersen", "email_verified": True},
    "bob": {"email": "bob@example.org", "name": "Bob Brennan", "email_verified": True},
    "ada": {"email": "ada@example.org", "name": "Ada Admin", "email_verified": True},
    "vic": {"email": "vic@example.org", "name": "Vic Viewer", "email_verified": True},
    "edd": {"email": "edd@example.org", "name": "Edd Editor", "email_verified": True},
    "ray": {"email": "ray@example.org", "name": "Ray Rater", "email_verified": True},
}
"""The provider's accounts: login name -> identity claims."""


@dataclass
class Provider:
    """The running provider: its issuer URL, the one client it knows, what it issued."""

    issuer: str
    client_id: str
    client_secret: str
    redirect_uri: str
    key: RSAKey
    codes: dict[str, dict[str, Any]] = field(default_factory=dict)
    access: dict[str, str] = field(default_factory=dict)  # access token -> user
    issued: list[str] = field(default_factory=list)  # every code and token handed out
    tokens: list[str] = field(default_factory=list)  # the access tokens and id_tokens
    logouts: int = 0

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": f"{self.issuer}/authorize",
            "token_endpoint": f"{self.issuer}/token",
            "userinfo_endpoint": f"{self.issuer}/userinfo",
            "jwks_uri": f"{self.issuer}/jwks",
            "end_session_endpoint": f"{self.issuer}/logout",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "scopes_supported": ["openid", "email", "profile"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic",
                                                      "client_secret_post"],
            "code_challenge_methods_supported": ["S256"],
            "claims_supported": ["sub", "email", "email_verified", "name"],
        }

    def id_token(self, user: str, nonce: str | None) -> str:
        now = int(time.time())
        claims = {"iss": self.issuer, "sub": f"sub-{user}", "aud": self.client_id,
                  "iat": now, "exp": now + 600, **USERS[user]}
        if nonce:
            claims["nonce"] = nonce
        return jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key)


class _Handler(BaseHTTPRequestHandler):
    provider: Provider  # set on the subclass made per server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    # -------------------------------------------------------------------------- helpers
    def _send(self, status: int, body: bytes, content_type: str,
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, data: dict[str, Any]) -> None:
        self._send(status, json.dumps(data).encode(), "application/json")

    def _redirect(self, location: str) -> None:
        self._send(302, b"", "text/plain", {"Location": location})

    # -------------------------------------------------------------------------- routes
    def do_GET(self) -> None:
        p = self.provider
        parts = urlsplit(self.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        if parts.path == "/.well-known/openid-configuration":
            self._json(200, p.discovery())
        elif parts.path == "/jwks":
            self._json(200, {"keys": [p.key.as_dict(private=False)]})
        elif parts.path == "/authorize":
            self._authorize_form(query)
        elif parts.path == "/userinfo":
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            user = p.access.get(token)
            if user is None:
                self._json(401, {"error": "invalid_token"})
            else:
                self._json(200, {"sub": f"sub-{user}", **USERS[user]})
        elif parts.path == "/logout":
            p.logouts += 1
            target = query.get("post_logout_redirect_uri", "")
            if target and target == p.redirect_uri:
                self._redirect(target)
            else:
                self._send(200, b"signed out", "text/plain")
        else:
            self._send(404, b"not found", "text/plain")

    def _authorize_form(self, query: dict[str, str]) -> None:
        p = self.provider
        if query.get("client_id") != p.client_id or query.get("redirect_uri") != p.redirect_uri:
            self._send(400, b"unknown client or redirect_uri", "text/plain")
            return
        if query.get("response_type") != "code" or "openid" not in query.get("scope", ""):
            self._send(400, b"unsupported request", "text/plain")
            return
        hidden = "".join(f'<input type="hidden" name="{html.escape(k)}" value="{html.escape(v)}">'
                         for k, v in query.items())
        buttons = "".join(f'<button type="submit" name="user" value="{u}">Sign in as '
                          f'{html.escape(c["email"])}</button>' for u, c in USERS.items())
        page = (f"<!doctype html><title>Test provider</title><h1>Test identity provider</h1>"
                f'<form method="post" action="/authorize">{hidden}{buttons}</form>')
        self._send(200, page.encode(), "text/html; charset=utf-8")

    def do_POST(self) -> None:
        p = self.provider
        length = int(self.headers.get("Content-Length", "0"))
        form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
        path = urlsplit(self.path).path
        if path == "/authorize":
            user = form.get("user", "")
            if user not in USERS or form.get("redirect_uri") != p.redirect_uri:
                self._send(400, b"bad login", "text/plain")
                return
            code = secrets.token_urlsafe(24)
            p.codes[code] = {"user": user, "nonce": form.get("nonce"),
                             "challenge": form.get("code_challenge"),
                             "redirect_uri": form["redirect_uri"]}
            p.issued.append(code)
            self._redirect(f"{p.redirect_uri}?{urlencode({'code': code, 'state': form['state']})}")
        elif path == "/token":
            self._token(form)
        else:
            self._send(404, b"not found", "text/plain")

    def _token(self, form: dict[str, str]) -> None:
        p = self.provider
        client_id, client_secret = form.get("client_id"), form.get("client_secret")
        basic = self.headers.get("Authorization", "")
        if basic.startswith("Basic "):
            client_id, _, client_secret = base64.b64decode(basic[6:]).decode().partition(":")
        if client_id != p.client_id or client_secret != p.client_secret:
            self._json(401, {"error": "invalid_client"})
            return
        grant = p.codes.pop(form.get("code", ""), None)  # a code is used once
        if (form.get("grant_type") != "authorization_code" or grant is None
                or form.get("redirect_uri") != grant["redirect_uri"]):
            self._json(400, {"error": "invalid_grant"})
            return
        if grant["challenge"]:
            verifier = form.get("code_verifier", "")
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
            if digest.rstrip(b"=").decode() != grant["challenge"]:
                self._json(400, {"error": "invalid_grant", "error_description": "PKCE"})
                return
        access = secrets.token_urlsafe(32)
        p.access[access] = grant["user"]
        id_token = p.id_token(grant["user"], grant["nonce"])
        p.issued += [access, id_token]
        p.tokens += [access, id_token]
        self._json(200, {"access_token": access, "token_type": "Bearer", "expires_in": 600,
                         "id_token": id_token, "scope": "openid email profile"})


@contextmanager
def oidc_provider(redirect_uri: str, *, client_id: str = "ireval-test",
                  client_secret: str | None = None) -> Iterator[Provider]:
    """The provider on a free loopback port, in a thread, for the block."""
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    key = RSAKey.generate_key(2048, parameters={"kid": "test-key", "use": "sig", "alg": "RS256"})
    provider = Provider(issuer=f"http://127.0.0.1:{httpd.server_address[1]}",
                        client_id=client_id,
                        client_secret=client_secret or secrets.token_urlsafe(24),
                        redirect_uri=redirect_uri, key=key)
    httpd.RequestHandlerClass = type("Handler", (_Handler,), {"provider": provider})
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield provider
    finally:
        httpd.shutdown()
        httpd.server_close()
