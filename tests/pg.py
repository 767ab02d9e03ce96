"""A throwaway PostgreSQL server for the tests: a real server, not a mock.

The session fixture :func:`postgres_server` runs ``initdb`` in a temporary directory,
starts ``postgres`` on a free loopback port (``127.0.0.1`` only, trust authentication,
``fsync`` off: the data is thrown away), and stops and removes it after the session.
:meth:`PostgresServer.new_database` creates an empty database per test and returns
its SQLAlchemy URL (``postgresql+psycopg://ireval@127.0.0.1:PORT/name``).

The server binaries come from ``PATH`` or Debian's ``/usr/lib/postgresql/<version>/bin``
(package ``postgresql``, which ``make test`` installs when run as root: see
``.ci/postgres.sh``). PostgreSQL refuses to run as root, so as root the server runs as
the ``postgres`` system user (``runuser -u postgres --``).

When the server cannot start, the tests that use it are skipped with the reason, or
fail under ``CI=true`` (like the browser test when chromium is missing).

``conftest.py`` registers ``postgres_server`` for every test module, with the
backend-parametrised ``url`` and ``ws`` fixtures of the workspace tests built on it
(SQLite, and ``request.getfixturevalue("postgres_server")``); a test requests
``postgres_server`` and uses ``with postgres_server.database() as url:`` for an empty
database dropped after.
A test that stops the server (and starts it again) requests ``own_postgres_server``
instead: a server of its own, started for it and removed after it.
"""

from __future__ import annotations

import contextlib
import glob
import itertools
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

__all__ = ["PostgresServer", "own_postgres_server", "postgres_server", "find_binary"]

_USER = "ireval"  # the database superuser initdb creates
_OS_USER = "postgres"  # the system user the server runs as when the tests run as root
_START_TIMEOUT = 60  # seconds


def find_binary(name: str) -> str | None:
    """``name`` (``initdb``, ``pg_ctl``) on PATH, else in Debian's newest server bin/."""
    found = shutil.which(name)
    if found:
        return found

    def version(path: str) -> tuple[int, ...]:
        match = re.search(r"/postgresql/([\d.]+)/bin/", path)
        return tuple(int(p) for p in match.group(1).split(".")) if match else (0,)

    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), key=version)
    return candidates[-1] if candidates else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PostgresServer:
    """A running throwaway cluster; :meth:`new_database` gives each test its own."""

    def __init__(self, root: Path, port: int, run_as: list[str], pg_ctl: str,
                 options: str = "") -> None:
        self.root = root
        self.port = port
        self._run_as = run_as
        self._pg_ctl = pg_ctl
        self._options = options
        self._names = itertools.count(1)

    def url(self, database: str) -> str:
        """The SQLAlchemy URL of ``database`` on this server."""
        return f"postgresql+psycopg://{_USER}@127.0.0.1:{self.port}/{database}"

    def _admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(host="127.0.0.1", port=self.port, user=_USER,
                             dbname="postgres", autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def new_database(self) -> str:
        """Create an empty database and return its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._admin(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def drop_database(self, url: str) -> None:
        """Drop a database made by :meth:`new_database`, closing its connections."""
        name = url.rsplit("/", 1)[1]
        self._admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    @contextlib.contextmanager
    def database(self) -> Iterator[str]:
        """An empty database for the duration of the ``with`` block."""
        url = self.new_database()
        try:
            yield url
        finally:
            self.drop_database(url)

    def checkpoint(self) -> None:
        """Write everything committed so far to the data files. The server runs with
        ``synchronous_commit=off`` (fast tests), so without this an immediate
        :meth:`stop` can lose the last commits."""
        self._admin("CHECKPOINT")

    def stop(self) -> None:
        """Stop the server now (``-m immediate``: no clean shutdown, as a crash)."""
        subprocess.run([*self._run_as, self._pg_ctl, "-D", str(self.root / "data"), "-m",
                        "immediate", "-w", "stop"], capture_output=True, timeout=60,
                       check=False)

    def start(self) -> None:
        """Start the server again after :meth:`stop`: the same data on the same port."""
        done = subprocess.run(
            [*self._run_as, self._pg_ctl, "-D", str(self.root / "data"), "-l",
             str(self.root / "server.log"), "-w", "-t", str(_START_TIMEOUT), "-o",
             f"{self._options} -p {self.port}", "start"],
            capture_output=True, text=True, timeout=_START_TIMEOUT + 30, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"the PostgreSQL server did not start again: "
                               f"{(done.stderr or done.stdout).strip()[-500:]}")


def _start() -> tuple[PostgresServer | None, str]:
    """Start a server, or return ``None`` and why not."""
    initdb, pg_ctl = find_binary("initdb"), find_binary("pg_ctl")
    if initdb is None or pg_ctl is None:
        return None, ("the PostgreSQL server (initdb, pg_ctl) is not installed: `make test` "
                      "installs Debian's postgresql package when run as root, else run "
                      "`sudo apt-get install postgresql`")
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return None, "psycopg is not installed: pip install -r requirements.txt"
    run_as: list[str] = []
    root = Path(tempfile.mkdtemp(prefix="ireval-pg-"))
    if os.geteuid() == 0:  # PostgreSQL refuses to run as root
        runuser = shutil.which("runuser")
        try:
            owner = pwd.getpwnam(_OS_USER)
        except KeyError:
            owner = None
        if runuser is None or owner is None:
            shutil.rmtree(root, ignore_errors=True)
            return None, (f"running as root, but there is no {_OS_USER!r} system user (or "
                          "no runuser) to run the PostgreSQL server as")
        run_as = [runuser, "-u", _OS_USER, "--"]
        os.chown(root, owner.pw_uid, owner.pw_gid)
    log = root / "server.log"
    init = subprocess.run(
        [*run_as, initdb, "-D", str(root / "data"), "-U", _USER, "-A", "trust", "-E", "UTF8",
         "--locale=C", "--no-sync"], capture_output=True, text=True, timeout=120, check=False)
    if init.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        return None, f"initdb failed: {(init.stderr or init.stdout).strip()[-500:]}"
    options = ("-c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off "
               f"-c full_page_writes=off -c max_connections=60 -k {root}")
    reason = ""
    for _ in range(3):  # the free port can be taken between choosing and binding it
        port = _free_port()
        start = subprocess.run(
            [*run_as, pg_ctl, "-D", str(root / "data"), "-l", str(log), "-w", "-t",
             str(_START_TIMEOUT), "-o", f"{options} -p {port}", "start"],
            capture_output=True, text=True, timeout=_START_TIMEOUT + 30, check=False)
        if start.returncode == 0:
            return PostgresServer(root, port, run_as, pg_ctl, options), ""
        tail = log.read_text(errors="replace")[-500:] if log.exists() else start.stderr
        reason = f"the PostgreSQL server did not start: {tail.strip()}"
    shutil.rmtree(root, ignore_errors=True)
    return None, reason


def _serve() -> Iterator[PostgresServer]:
    """A started server until the caller is done; skipped (failed under CI) without one."""
    server, reason = _start()
    if server is None:
        message = f"PostgreSQL tests cannot run: {reason}"
        if os.environ.get("CI"):
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    try:
        yield server
    finally:
        server.stop()
        with contextlib.suppress(OSError):
            shutil.rmtree(server.root)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server on a free loopback port for the whole session."""
    yield from _serve()


@pytest.fixture
def own_postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server for one test alone, which it may :meth:`~PostgresServer.stop`
    and :meth:`~PostgresServer.start` again (the session's server is shared)."""
    yield from _serve()
