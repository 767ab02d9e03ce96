"""What the app's AppTests (``tests/test_app_*.py``) share: where the app and the bundled
sample are, the skip when the sample was not generated, the sample read by the core, a
page opened by its link, and what a page shows (Markdown as displayed, its metric values).

Not a test module: the tests import it. The workspace a test saves to is the
``app_ws`` fixture of ``tests/conftest.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_core import Qrels, Run, read_qrels, read_runs

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"
LABELS = SAMPLE / "labels"

NEEDS_SAMPLE = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                  reason="sample data not generated")
"""Mark (``pytestmark``) of a module that needs the bundled evaluation sample."""


def read_sample() -> tuple[Qrels, list[Run]]:
    """The sample's qrels and every run of its ``run_*.txt`` files (in name order)."""
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return qrels, runs


def sample_files(*runs: str) -> list[tuple[str, str, bytes]]:
    """The sample's qrels and the run files named (every ``run_*.txt`` if none) as
    ``Workspace.save_dataset`` takes them: (kind, file name, bytes)."""
    paths = [SAMPLE / name for name in runs] or sorted(SAMPLE.glob("run_*.txt"))
    return [("qrels", "qrels.txt", (SAMPLE / "qrels.txt").read_bytes()),
            *(("run", p.name, p.read_bytes()) for p in paths)]


def open_page(page: str, *, timeout: float = 90, **params: str | list[str]) -> AppTest:
    """``pages/<page>.py`` opened in a new session as by a link carrying ``params`` (its
    URL parameters), run once; asserts the run raised nothing."""
    at = AppTest.from_file(APP, default_timeout=timeout)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    return at


def after_data(page: str, title: str, *, timeout: float = 30) -> AppTest:
    """A new session that opens the Data page (``app.py``), as a person arriving does,
    then switches to ``pages/<page>.py``; asserts that run raised nothing and that the
    page's title is ``title``."""
    at = AppTest.from_file(APP, default_timeout=timeout).run()
    at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    assert at.title[0].value == title
    return at


def displayed(text: str) -> str:
    """Markdown source as displayed: backslash escapes removed."""
    return re.sub(r"\\(.)", r"\1", text)


def metric_values(at: AppTest) -> dict[str, str]:
    """The page's ``st.metric`` values by label."""
    return {m.label: m.value for m in at.metric}


def pair_of(label: str) -> tuple[str, str, str]:
    """``(run A, run B, measure)`` of a label of Compare's "Pair and measure"
    (``"B − A on measure"``, :func:`ireval_app.compare_glue.pair_labels`), for names
    without " − " and " on "."""
    b, _, rest = label.partition(" − ")
    a, _, m = rest.partition(" on ")
    return a, b, m
