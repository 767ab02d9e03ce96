"""The app reads uploads with the comment rule of the trec_eval version in the sidebar.

trec_eval 10.0 skips TREC text lines starting with ``#``; 9.0.8 reads them as data. The
same uploaded bytes give other counts and other means under each version, a bad ``#``
line under 9.0.8 says which sidebar option skips it, and switching back reads them
again as 9.0.8 does.
"""

from __future__ import annotations

import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ireval_app import files_widgets, state
from ireval_app.keys import metrics as metrics_keys
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs

APP = str(Path(__file__).resolve().parents[1] / "app.py")

# '#x 0 d1 1' is a judgment of query '#x' for 9.0.8, a comment for 10.0
QRELS = b"#x 0 d1 1\nq1 0 d1 1\nq1 0 d2 0\nq2 0 d4 1\nq2 0 d5 1\n"
# '#x ...' ranks d1 (relevant for 9.0.8) and '  # by hand ...' is a 10.0 comment (6 fields)
RUN = (b"#x Q0 d1 1 3.0 alpha\nq1 Q0 d2 1 2.0 alpha\nq1 Q0 d1 2 1.0 alpha\n"
       b"  # by hand Q0 d9 1\nq2 Q0 d4 1 1.0 alpha\n")
BAD_QRELS = b"# judged by A\nq1 0 d1 1\n"


def _counts(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _version(at: AppTest, version: str) -> AppTest:
    at.sidebar.radio(key=state.OPTION_KEYS["trec_eval"]).set_value(version).run()
    assert not at.exception
    return at


def _upload(at: AppTest, qrels: bytes, run: bytes | None = None) -> AppTest:
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(("q.txt", qrels, "text/plain"))
    if run is not None:
        at.file_uploader(key=state.RUNS_UPLOADER).set_value([("r.txt", run, "text/plain")])
    at.run()
    assert not at.exception
    return at


def test_comment_lines_follow_the_sidebar_version_both_ways() -> None:
    at = _upload(AppTest.from_file(APP, default_timeout=60).run(), QRELS, RUN)
    # 9.0.8: '#x' is a judged query, and the run's indented '#' line is malformed data
    assert _counts(at)["Queries in qrels"] == "3"
    assert _counts(at)["Judgments"] == "5"
    [error, _] = at.error
    assert "r.txt:4`**: expected a numeric score in column 5, got 'd9'" in error.value
    assert files_widgets.COMMENTS_HOW in error.value
    _version(at, "10.0")
    assert not at.error
    assert _counts(at)["Queries in qrels"] == "2"
    assert _counts(at)["Judgments"] == "4"
    runs = at.dataframe[1].value.set_index("run")
    assert runs.loc["alpha", "queries"] == 2 and runs.loc["alpha", "documents"] == 3
    [box] = [w.value for w in at.warning if "data warning" in w.value]
    assert "1 comment line(s) starting with '\\#' were skipped" in box  # the qrels'
    assert "**r.txt**: 2 comment line(s)" in box  # and the run's two
    _version(at, "9.0.8")  # the same bytes, read as 9.0.8 again
    assert _counts(at)["Queries in qrels"] == "3"
    assert "r.txt:4" in at.error[0].value


def test_the_metrics_page_evaluates_what_the_version_reads() -> None:
    run = RUN.replace(b"  # by hand Q0 d9 1\n", b"")  # 9.0.8 reads this run too
    at = _upload(AppTest.from_file(APP, default_timeout=60).run(), QRELS, run)
    at.query_params["measures"] = ["AP", "P@5"]
    at.switch_page("pages/metrics.py").run()
    assert not at.exception
    assert at.multiselect(key=metrics_keys.MEASURES).value == ["AP", "P@5"]
    for version, comments, queries in (("9.0.8", False, 3), ("10.0", True, 2)):
        _version(at, version)
        expected = evaluate(read_qrels(QRELS, name="q.txt", comments=comments),
                            read_runs(run, name="r.txt", comments=comments), ["AP", "P@5"],
                            options=EvalOptions(trec_eval=version))  # type: ignore[arg-type]
        assert len(expected.per_query("alpha", "AP")) == queries
        table = at.table[0].value
        for measure in ("AP", "P@5"):
            shown = float(re.match(r"\s*(\d+\.\d+)", table.loc["alpha", measure])[1])  # type: ignore[index]
            assert shown == round(expected.mean("alpha", measure), 4)
    # the versions' means differ: '#x' (AP 1) is a query for 9.0.8 only (AP 2/3 there)
    assert round(expected.mean("alpha", "AP"), 4) == 0.5


def test_a_hash_line_under_9_0_8_names_the_sidebar_option() -> None:
    at = _upload(AppTest.from_file(APP, default_timeout=60).run(), BAD_QRELS)
    [error] = at.error
    assert "q.txt:1`**: expected a numeric grade in column 4, got 'A'" in error.value
    assert "is a comment for trec_eval 10.0 (which skips it" in error.value
    assert "**trec_eval semantics** in the sidebar's **Evaluation options**" in error.value
    _version(at, "10.0")
    assert not at.error
    assert _counts(at)["Queries in qrels"] == "1"


def test_a_saved_dataset_is_read_again_on_another_page(tmp_path, monkeypatch) -> None:
    """A saved dataset opened from the workspace, the version changed on the Metrics page:
    its files are read again from the workspace with 10.0's rule."""
    from ireval_core.workspace import Workspace

    url = str(tmp_path / "workspace.db")
    monkeypatch.setenv("IREVAL_WORKSPACE", url)
    run = RUN.replace(b"  # by hand Q0 d9 1\n", b"")
    Workspace.open(url).save_dataset([("qrels", "q.txt", QRELS), ("run", "r.txt", run)],
                                     name="with comments", saved_by="ana")
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.radio(key=state.SOURCE).set_value("saved").run()
    assert not at.exception and _counts(at)["Queries in qrels"] == "3"
    at.switch_page("pages/metrics.py").run()
    assert "3 queries" in " ".join(c.value for c in at.sidebar.caption)  # the glance
    _version(at, "10.0")
    assert "2 queries" in " ".join(c.value for c in at.sidebar.caption)  # '#x': a comment
    at.switch_page("app.py").run()
    assert not at.exception
    assert _counts(at)["Queries in qrels"] == "2"
    assert at.radio(key=state.SOURCE).value == "saved"
