"""AppTest: qrels without runs on every page that evaluates runs says to add run files on
the Data page (Metrics also links to it) and shows nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import lab as lab_keys

APP = str(Path(__file__).resolve().parents[1] / "app.py")
QRELS = b"q1 0 d1 2\nq1 0 d2 0\nq2 0 d4 1\n"
NO_RUNS = "No runs loaded yet: add run files on the Data page."


def _qrels_only() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30).run()
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(("only.qrels", QRELS, "text/plain"))
    at.run()
    assert not at.exception
    assert "No runs loaded yet." in [i.value for i in at.info]
    return at


@pytest.mark.parametrize("page", ["metrics", "curves", "queries", "ndcg_vs_dcg", "lab"])
def test_a_page_without_runs_says_to_add_them(page: str) -> None:
    at = _qrels_only()
    if page == "lab":
        at.switch_page("pages/lab.py").run()
        at.radio(key=lab_keys.SOURCE).set_value("query").run()  # a query of a loaded run
    else:
        at.switch_page(f"pages/{page}.py").run()
    assert not at.exception
    assert [i.value for i in at.info] == [NO_RUNS]
    assert not at.dataframe
    links = [e for e in at.main if getattr(e, "type", "") == "page_link"]
    assert len(links) == (1 if page == "metrics" else 0), links
