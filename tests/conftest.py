"""Settings for the whole test session."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ireval_core.workspace import Workspace

# The app saves uploads to a workspace; tests never touch a real one (the default is
# data/workspace.db in the repository). Tests that need their own set IREVAL_WORKSPACE.
_WORKSPACE = Path(tempfile.mkdtemp(prefix="ireval-test-workspace-")) / "workspace.db"
os.environ["IREVAL_WORKSPACE"] = str(_WORKSPACE)
os.environ.pop("IREVAL_DATA_DIR", None)  # the app opens the bundled sample in tests
# the parsed-column cache of the session's reads: a fresh folder, never ~/.cache
os.environ["IREVAL_CACHE_DIR"] = _COLUMNS = tempfile.mkdtemp(prefix="ireval-test-columns-")
atexit.register(shutil.rmtree, _COLUMNS, ignore_errors=True)
os.environ.pop("IREVAL_CACHE", None)

# the shared helpers' asserts show their values, as a test module's do
pytest.register_assert_rewrite("_apps", "_param_cases", "browser_support")


def _scan_components_once() -> None:
    """Streamlit looks for installed custom components (the metadata of every installed
    distribution) once when a server starts, but an ``AppTest`` does it again for each new
    instance, which was most of a short page test's time (0.1-0.5 s of CPU each, hundreds
    of instances). The installed packages do not change during a session: the first scan's
    result (Streamlit's own, unchanged) is kept for the worker's later instances, as one
    server process keeps it."""
    try:
        from streamlit.components.v2 import manifest_scanner
    except ImportError:  # an older Streamlit without custom components v2: nothing to keep
        return
    scan = manifest_scanner.scan_component_manifests
    kept: list[Any] = []

    def scan_once(max_workers: int | None = None) -> list[Any]:
        if not kept:
            kept.append(scan(max_workers))
        return list(kept[0])

    manifest_scanner.scan_component_manifests = scan_once  # type: ignore[assignment]


_scan_components_once()

# trec_eval 10.0 and 9.0.8 built from source once per session (tests/trec_eval_oracle.py), the
# throwaway PostgreSQL server of tests/pg.py (started for the first test asking for it),
# and the app server and chromium of the real-browser tests (tests/browser_support.py)
from browser_support import app_server, chromium  # noqa: E402
from pg import postgres_server  # noqa: E402, F401
from trec_eval_oracle import trec_eval_9, trec_eval_10, trec_eval_10_precise  # noqa: E402, F401


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty workspace URL on each back end: a SQLite file in a folder not yet made,
    and a new database of the PostgreSQL test server (:mod:`pg`), dropped after."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'data' / 'workspace.db'}"
        return
    with request.getfixturevalue("postgres_server").database() as database:
        yield database


@pytest.fixture
def ws(url: str) -> Iterator[Workspace]:
    """The workspace at :func:`url`, open for the test and closed after it."""
    from ireval_core.workspace import Workspace

    with Workspace.open(url) as workspace:
        yield workspace


@pytest.fixture
def app_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Workspace]:
    """An empty SQLite workspace that the app under test saves to (``IREVAL_WORKSPACE``
    for the test), open for the test and closed after it."""
    from ireval_core.workspace import Workspace

    path = str(tmp_path / "workspace.db")
    monkeypatch.setenv("IREVAL_WORKSPACE", path)
    with Workspace.open(path) as workspace:
        yield workspace


@pytest.fixture(scope="module")
def month() -> tuple[str, list[tuple[int, int]]]:
    """A month of labels (CSV text) with 83 planted conflicts, and the (line, earlier
    line) of each (``test_labels_problems.month_with_conflicts``), made once per module."""
    from test_labels_problems import month_with_conflicts

    return month_with_conflicts(83)


@pytest.fixture(scope="module")
def server_workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The path of the SQLite workspace :func:`server` saves to (not made yet), for a test
    that saves datasets and notes there before it opens the pages."""
    return tmp_path_factory.mktemp("workspace") / "workspace.db"


@pytest.fixture(scope="module")
def server(server_workspace: Path) -> Iterator[str]:
    """The app (``streamlit run app.py``, :func:`browser_support.app_server`) on a free
    loopback port with a workspace of its own (:func:`server_workspace`), shared by the
    tests of one module; yields its URL."""
    with app_server(server_workspace) as url:
        yield url


class _SharedChromium:
    """The chromium (:func:`browser_support.chromium`) of the browser modules that run one
    after another on a worker: launched for the first test that asks for :func:`browser`,
    kept while the next test asks for it too (a new module's as well: a launch and the
    playwright driver cost a second or two of CPU), closed before a test that does not
    (:func:`pytest_runtest_teardown`), so that no other test runs beside a playwright
    event loop and a test that drives its own (``test_server_memory``) can. Each test's
    pages live in their own browser contexts, closed at their end."""

    def __init__(self) -> None:
        self._running: Any = None
        self.browser: Any = None

    def get(self) -> Any:
        if self.browser is None:
            self._running = chromium()
            self.browser = self._running.__enter__()
        return self.browser

    def close(self) -> None:
        running, self._running, self.browser = self._running, None, None
        if running is not None:
            running.__exit__(None, None, None)


_CHROMIUM = _SharedChromium()


@pytest.fixture(scope="module")
def browser() -> Any:
    """The worker's chromium (:class:`_SharedChromium`), shared by the browser modules
    that run one after another."""
    return _CHROMIUM.get()


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """After the test's fixtures are torn down (its pages' contexts closed), close the
    shared chromium unless the next test uses it or is of the same module (whose module
    fixtures, a shared page among them, are still alive)."""
    if nextitem is not None and (nextitem.path == item.path
                                 or "browser" in getattr(nextitem, "fixturenames", ())):
        return
    _CHROMIUM.close()


# The tests that drive a real server and browser run one module after another in two
# groups when pytest-xdist spreads the suite (make test: -n 2 --dist loadgroup), one group
# per worker: they start servers, measure memory and time clicks, and would otherwise
# compete for the two cores with each other. At most two run at once, each with its own
# server on its own free port and its own chromium; each module's server, chromium and
# shared page are made once. A new browser module joins the first group unless listed
# in the second.
_SERIAL_MODULES = ("test_browser", "test_server_memory")
_SECOND_GROUP = ("test_browser_labels", "test_browser_hostile", "test_browser_layout",
                 "test_browser_links", "test_server_memory", "test_browser_signin")
# Other tests go to the workers one by one, so both workers run part of every module and
# each makes the module's fixtures. A module whose module fixture is dear to make (a Dask
# LocalCluster: worker processes that import the package, about 5 s of CPU) runs whole on
# one worker, its fixture made once; so does test_architecture, whose tests share the
# parsed syntax trees and import graph of every project file (seconds to make).
_WHOLE_MODULES = ("test_distributed", "test_app_dask", "test_architecture")


def xdist_group(nodeid: str) -> str | None:
    """The group a test runs in under ``--dist loadgroup`` (all of a group on one worker,
    in order), from its id; ``None`` for a test handed out alone.

    >>> xdist_group("tests/test_browser_labels.py::test_x[a]"), xdist_group("tests/test_io.py::t")
    ('browser-2', None)
    """
    module = nodeid.split("::", 1)[0].rsplit("/", 1)[-1].removesuffix(".py")
    if module.startswith(_SERIAL_MODULES):
        return "browser-2" if module in _SECOND_GROUP else "browser"
    return module if module in _WHOLE_MODULES else None


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` grouping the tests by :func:`xdist_group`.

    pytest-xdist groups by the ``xdist_group`` mark, which its worker adds to each test's
    id; under pytest 9 the id no longer takes it (``nodeid`` is read from another
    attribute), so every test was handed out alone: a browser module's tests were spread
    over both workers, each starting the module's server and chromium. The scheduler
    groups by the test's module instead, from the id as collected, whatever pytest's
    version. xdist hands out the groups first (most tests first), then the single tests,
    which even out the two workers' time."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class ModuleGroups(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            group = xdist_group(nodeid)
            return group if group is not None else super()._split_scope(nodeid)

    return ModuleGroups(config, log)
