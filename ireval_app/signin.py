"""Sign-in with OpenID Connect (Streamlit's own ``st.login``), and who may reach a server.

Sign-in is configured by an ``[auth]`` section in ``.streamlit/secrets.toml`` (the files
of Streamlit's ``secrets.files`` option): ``redirect_uri``, ``cookie_secret``, and either
the provider's ``client_id`` / ``client_secret`` / ``server_metadata_url`` in ``[auth]``
itself or one ``[auth.NAME]`` section per provider. Streamlit runs the OpenID Connect
round trip (Authlib) and keeps the identity in a signed, HTTP-only cookie; this module
decides what a session may see:

* :func:`gate` runs first on every page (``frame.page``), before any page code reads
  data: with sign-in configured, a session that is not signed in sees the sign-in screen
  and nothing else; a broken configuration, or a server listening beyond the loopback
  without sign-in, shows only why and what to do.
* :func:`signed_in_person` is the identity of the session (e-mail and display name), or
  ``None`` when sign-in is off.
* ``python -m ireval_app.signin --address ADDRESS`` is the same check before the server
  starts (``make run``): exit 1, with the reason, when the server would serve other
  machines without sign-in.

A deep link survives the round trip through the provider: the sign-in screen keeps the
link's path and query in the tab's ``sessionStorage`` (and a cookie ``ireval_next=1``
saying one is kept), and the first page after the provider sends the tab back there (a
path on this server only), drawing nothing of its own meanwhile. No token or secret is
ever shown, logged or put in a URL by this module: only the e-mail and the name.
"""

from __future__ import annotations

import argparse
import ipaddress
import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

ALLOW_ANONYMOUS = "IREVAL_ALLOW_ANONYMOUS"
"""Environment variable: ``1`` lets a server without sign-in listen beyond the loopback."""

MIN_SECRET_LENGTH = 32
"""The fewest characters of ``cookie_secret`` (the key that signs the identity cookie)."""

SECRETS_FILE = ".streamlit/secrets.toml"
_PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
_NEXT_KEY = "ireval.signin.next"  # sessionStorage: the link to open after the provider
_NEXT_COOKIE = "ireval_next"  # "1" while a link is kept: the landing page draws nothing
_SESSION_SEEN = "ireval.signin.seen"  # session_state: this session's first run is done

_KEEP_LINK_JS = """<script>
(() => {
  const link = window.location.pathname + window.location.search;
  if (link !== "/" && !link.startsWith("/auth/") && !link.startsWith("/oauth2callback")) {
    window.sessionStorage.setItem(%(key)s, link);
    document.cookie = %(cookie)s + "=1; path=/; max-age=900; samesite=lax";
  } else if (link === "/") {
    window.sessionStorage.removeItem(%(key)s);
    document.cookie = %(cookie)s + "=; path=/; max-age=0; samesite=lax";
  }
})();
</script>"""

# After the provider: back to the kept link (a path of this server, never another host);
# and a page restored from the browser's back-forward cache is loaded again, so that
# "back" after signing out asks the server (which shows the sign-in screen), never
# shows the page as it was.
_SIGNED_IN_JS = """<script>
(() => {
  const link = window.sessionStorage.getItem(%(key)s);
  window.sessionStorage.removeItem(%(key)s);
  document.cookie = %(cookie)s + "=; path=/; max-age=0; samesite=lax";
  const here = window.location.pathname + window.location.search;
  if (link && link.startsWith("/") && !link.startsWith("//") && !link.includes("\\\\")
      && link !== here) {
    window.location.replace(link);
  } else if (%(stopped)s) {
    window.location.reload();
  }
  if (!window.irevalReloadOnRestore) {
    window.irevalReloadOnRestore = true;
    window.addEventListener("pageshow", (event) => {
      if (event.persisted) { window.location.reload(); }
    });
  }
})();
</script>"""

@dataclass(frozen=True)
class Person:
    """A signed-in person as the identity provider vouches for them."""

    email: str
    name: str  # the display name; the e-mail when the provider gives no name


# ----------------------------------------------------------------------------- settings


def auth_section() -> Mapping[str, Any] | None:
    """The ``[auth]`` section of the secrets files (``st.secrets``, the object Streamlit's
    own sign-in reads), or ``None`` when there is none."""
    import streamlit as st

    try:
        section = st.secrets.get("auth") if st.secrets.load_if_toml_exists() else None
    except Exception as exc:  # a secrets file that is not TOML: say so, without its text
        raise SignInConfigError(f"{SECRETS_FILE} cannot be read as TOML "
                                f"({type(exc).__name__}).") from None
    return section if isinstance(section, Mapping) and section else None


class SignInConfigError(Exception):
    """The sign-in settings cannot be used; the message names the key, never a value."""


def providers(section: Mapping[str, Any]) -> list[str]:
    """The provider names ``st.login`` takes: ``[auth.NAME]`` sections with provider
    settings, or ``"default"`` when ``[auth]`` holds them itself."""
    named = [k for k, v in section.items()
             if isinstance(v, Mapping) and any(key in v for key in _PROVIDER_KEYS)]
    if named:
        return sorted(named)
    return ["default"] if any(key in section for key in _PROVIDER_KEYS) else []


def config_problem(section: Mapping[str, Any]) -> str | None:
    """What makes ``section`` (the ``[auth]`` settings) unusable, or ``None``.

    The message names the file and the key and says what was expected; it never quotes a
    value (they are secrets).
    """
    where = f"`[auth]` in `{SECRETS_FILE}`"
    secret = section.get("cookie_secret")
    if not isinstance(secret, str) or not secret:
        return (f"{where} has no `cookie_secret`: sign-in needs a random secret of at "
                f"least {MIN_SECRET_LENGTH} characters to sign the identity cookie (e.g. "
                "the output of `python -c \"import secrets; print(secrets.token_urlsafe(32))\"`).")
    if len(secret) < MIN_SECRET_LENGTH:
        return (f"{where}: `cookie_secret` has {len(secret)} characters; it needs at least "
                f"{MIN_SECRET_LENGTH} (a random one, e.g. `python -c \"import secrets; "
                "print(secrets.token_urlsafe(32))\"`).")
    redirect = section.get("redirect_uri")
    if (not isinstance(redirect, str) or not redirect.startswith(("http://", "https://"))
            or not redirect.rstrip("/").endswith("/oauth2callback")):
        return (f"{where}: `redirect_uri` must be the app's absolute address ending in "
                "`/oauth2callback` (e.g. `https://ireval.example.org/oauth2callback`), "
                "registered with the provider.")
    if "expose_tokens" in section:
        return (f"{where}: remove `expose_tokens`: ireval reads only the e-mail and name, and "
                "the provider's tokens are never handed to the pages.")
    names = providers(section)
    if not names:
        return (f"{where} names no provider: give `client_id`, `client_secret` and "
                "`server_metadata_url` (the provider's `/.well-known/openid-configuration`).")
    for name in names:
        settings = section if name == "default" else section[name]
        label = "`[auth]`" if name == "default" else f"`[auth.{name}]`"
        missing = [k for k in _PROVIDER_KEYS if not settings.get(k)]
        if missing:
            return f"{label} in `{SECRETS_FILE}` lacks {', '.join(f'`{k}`' for k in missing)}."
        if "_" in name:
            return f"{label}: a provider's name may not contain `_` (Streamlit's rule)."
    try:
        import authlib  # noqa: F401
    except ImportError:
        return ("Sign-in is configured but Authlib is not installed: `pip install -r "
                "requirements.txt` (it installs `streamlit[auth]`).")
    return None


def is_loopback(address: str | None) -> bool:
    """Whether a server listening on ``address`` is reachable from this machine only
    (Streamlit listens on every interface when no address is set)."""
    if not address:
        return False
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address.strip("[]")).is_loopback
    except ValueError:
        return False


def address_problem(address: str | None, *, signin: bool,
                    environ: Mapping[str, str] = os.environ) -> str | None:
    """Why a server on ``address`` may not run, or ``None``: without sign-in it serves
    anyone who reaches it, so beyond the loopback only when ``IREVAL_ALLOW_ANONYMOUS=1``."""
    if signin or is_loopback(address) or environ.get(ALLOW_ANONYMOUS) == "1":
        return None
    shown = address or "every interface (no --server.address)"
    return (f"Refused: the server listens on {shown} without sign-in, so anyone who reaches "
            f"it could read and change every dataset. Configure sign-in (`[auth]` in "
            f"`{SECRETS_FILE}`, see the README's \"Sign-in\"), listen on 127.0.0.1, or set "
            f"{ALLOW_ANONYMOUS}=1 to take that risk.")


# ----------------------------------------------------------------------------- the session


def signed_in_person() -> Person | None:
    """The person signed in to this session (e-mail, display name), or ``None`` when
    sign-in is not configured or the session is not signed in.

    Only the identity claims are read: tokens are never exposed (``expose_tokens`` is not
    set) and never returned. A provider that marks the e-mail unverified
    (``email_verified = false``) gives no person.
    """
    import streamlit as st

    try:
        section = auth_section()
    except SignInConfigError:
        return None
    if section is None or st.user.get("is_logged_in") is not True:
        return None
    claims = st.user.to_dict()
    email = claims.get("email") or claims.get("preferred_username")
    if not isinstance(email, str) or not email or claims.get("email_verified") is False:
        return None
    name = claims.get("name")
    return Person(email=email, name=name if isinstance(name, str) and name else email)


def gate() -> Person | None:
    """Let the session through, or draw why not and stop the script (``st.stop``).

    Returns the signed-in person, or ``None`` when sign-in is not configured and the
    server is on the loopback (or ``IREVAL_ALLOW_ANONYMOUS=1``). Call it before anything
    of a page is drawn or read.
    """
    import streamlit as st

    try:
        section = auth_section()
        problem = None if section is None else config_problem(section)
    except SignInConfigError as exc:
        section, problem = {}, str(exc)
    if problem is not None:
        _refuse("Sign-in is configured but cannot be used", problem)
    if section is None:
        refused = address_problem(st.get_option("server.address"), signin=False)
        if refused is not None:
            _refuse("This server does not serve anyone yet", refused)
        return None
    if st.user.get("is_logged_in") is not True:
        _sign_in_screen(providers(section))
    person = signed_in_person()
    if person is None:
        st.error("The identity provider did not vouch for an e-mail address (no verified "
                 "`email` claim): ireval needs one to know who you are.",
                 icon=":material/error:")
        if st.button("Sign out", icon=":material/logout:"):
            st.logout()
        st.stop()
    if not st.session_state.get(_SESSION_SEEN):
        # The first run of a signed-in session: back to a link kept by the sign-in screen.
        # When one is kept (its cookie), this page is only the way there: nothing of it is
        # drawn (the browser reloads it if the link is not in this tab after all).
        st.session_state[_SESSION_SEEN] = True
        pending = st.context.cookies.get(_NEXT_COOKIE) == "1"
        st.html(_SIGNED_IN_JS % {"key": json.dumps(_NEXT_KEY), "cookie": json.dumps(_NEXT_COOKIE),
                                 "stopped": json.dumps(pending)},
                unsafe_allow_javascript=True)
        if pending:
            st.session_state[_SESSION_SEEN] = False  # a reload here is a first run again
            st.stop()
    return person


def account_line(person: Person | None) -> None:
    """The sidebar's line on who is signed in, with the sign-out button; without sign-in,
    the one line saying this is a single-person local tool."""
    import streamlit as st

    from .text import md_escape

    if person is None:
        if is_loopback(st.get_option("server.address")):
            st.caption("Local, single-person use: no sign-in (this machine only).")
        else:  # IREVAL_ALLOW_ANONYMOUS=1
            st.caption(f"No sign-in: anyone who reaches this server uses it "
                       f"({ALLOW_ANONYMOUS}=1).")
        return
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        st.caption(f"Signed in as **{md_escape(person.name)}** "
                   f"({md_escape(person.email)})")
        if st.button("Sign out", key="ireval.signin.out", icon=":material/logout:",
                     type="tertiary"):
            st.session_state.clear()
            st.logout()


def _sign_in_screen(names: list[str]) -> None:
    import streamlit as st

    st.html(_KEEP_LINK_JS % {"key": json.dumps(_NEXT_KEY), "cookie": json.dumps(_NEXT_COOKIE)},
            unsafe_allow_javascript=True)
    st.title("ireval")
    st.subheader("Sign in")
    st.caption("This workbench is shared by a team: sign in to see its datasets. A link you "
               "opened is kept: after signing in you arrive at that view.")
    for name in names:
        label = "Sign in" if name == "default" else f"Sign in with {name}"
        if st.button(label, key=f"ireval.signin.{name}", type="primary",
                     icon=":material/login:"):
            st.login(None if name == "default" else name)
    st.stop()


def _refuse(title: str, reason: str) -> None:
    import streamlit as st

    _log_once(reason)
    st.title("ireval")
    st.error(f"**{title}.** {reason}", icon=":material/block:")
    st.stop()


_LOGGED: set[str] = set()


def _log_once(reason: str) -> None:
    if reason not in _LOGGED:
        _LOGGED.add(reason)
        print(f"ireval: {reason}", file=sys.stderr, flush=True)


# ----------------------------------------------------------------------------- before start


def main(argv: list[str] | None = None) -> int:
    """``python -m ireval_app.signin --address A``: 0 when a server on ``A`` may start
    with the secrets files as they are; 1, with the reason on stderr, when not."""
    parser = argparse.ArgumentParser(prog="python -m ireval_app.signin",
                                     description=main.__doc__)
    parser.add_argument("--address", default="", help="the server's --server.address")
    args = parser.parse_args(argv)
    try:
        section = auth_section()
        problem = None if section is None else config_problem(section)
    except SignInConfigError as exc:
        section, problem = {}, str(exc)
    if problem is None:
        problem = address_problem(args.address or None, signin=section is not None)
    if problem is not None:
        print(f"ireval: {problem}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
