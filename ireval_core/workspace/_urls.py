"""Which database a workspace is: a URL, a SQLite file path, or the default."""

from __future__ import annotations

import os
from pathlib import Path

import sqlalchemy as sa

from ..errors import invalid_parameter
from ._types import WorkspaceError

ENV_VAR = "IREVAL_WORKSPACE"
"""Environment variable naming the workspace (a database URL or a SQLite file path)."""


def default_url() -> str:
    """The workspace used when none is given.

    ``$IREVAL_WORKSPACE`` when set (a database URL or a SQLite file path), else the
    SQLite file ``$XDG_DATA_HOME/ireval/workspace.db``, where ``XDG_DATA_HOME``
    defaults to ``~/.local/share``.
    """
    configured = os.environ.get(ENV_VAR, "").strip()
    if configured:
        return configured
    base = os.environ.get("XDG_DATA_HOME", "").strip() or str(Path.home() / ".local/share")
    return str(Path(base) / "ireval" / "workspace.db")


def resolve_url(url: str | None = None) -> sa.URL:
    """The SQLAlchemy URL of a workspace given as a URL, a file path or ``None``.

    A string without ``://`` is a SQLite file path (``~`` expanded, made absolute).
    PostgreSQL URLs get the psycopg 3 driver. Other databases are refused.

    Examples
    --------
    >>> resolve_url("/srv/ireval/ws.db").render_as_string()
    'sqlite:////srv/ireval/ws.db'
    >>> resolve_url("postgres://ana:secret@db:5432/ireval").render_as_string()
    'postgresql+psycopg://ana:***@db:5432/ireval'
    """
    text = default_url() if url is None else url
    if not isinstance(text, str) or not text.strip():
        raise invalid_parameter("url", "Workspace.open", "None, a database URL or a path",
                                url)
    if "://" not in text:
        return sa.URL.create("sqlite", database=str(Path(text).expanduser().absolute()))
    try:
        parsed = sa.make_url(text)
    except sa.exc.ArgumentError:
        raise invalid_parameter("url", "Workspace.open", "None, a database URL or a path",
                                url) from None
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg")
    if backend == "sqlite" and parsed.get_driver_name() in ("pysqlite", ""):
        return parsed.set(drivername="sqlite")
    raise WorkspaceError(
        f"unsupported workspace database {parsed.drivername!r} in "
        f"{parsed.render_as_string(hide_password=True)}: use a SQLite file or PostgreSQL",
        url=parsed.render_as_string(hide_password=True))
