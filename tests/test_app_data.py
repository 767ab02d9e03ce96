"""AppTest of app.py and the Data page: sample data on first visit, uploads and their errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import files_widgets, state

APP = str(Path(__file__).resolve().parents[1] / "app.py")
SAMPLE_QRELS = Path(__file__).resolve().parents[1] / "sample_data" / "qrels.txt"

QRELS = b"q1 0 d1 2\nq1 0 d2 0\nq1 0 d3 -1\nq2 0 d4 1\n"
RUN_A = b"q1 Q0 d1 1 3.0 alpha\nq1 Q0 d9 2 2.0 alpha\nq2 Q0 d4 1 1.0 alpha\n"
RUN_B = b"q1 Q0 d2 1 1.5 beta\nq3 Q0 d4 1 1.0 beta\n"
BROKEN_RUN = b"q1 Q0 d1 1 0.5 gamma\nq1 Q0 d2 2\n"


def _metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def _runs_table(at: AppTest) -> list[str]:
    """Run names in the run overview (the table after the grade table)."""
    return at.dataframe[1].value["run"].tolist()


def _upload(at: AppTest, qrels: tuple[str, bytes] | None = None,
            runs: list[tuple[str, bytes]] | None = None) -> AppTest:
    if at.radio(key=state.SOURCE).value != "upload":
        at.radio(key=state.SOURCE).set_value("upload").run()
    if qrels is not None:
        at.file_uploader(key=state.QRELS_UPLOADER).set_value((*qrels, "text/plain"))
    if runs is not None:
        at.file_uploader(key=state.RUNS_UPLOADER).set_value(
            [(name, data, "text/plain") for name, data in runs])
    return at.run()


@pytest.mark.skipif(not SAMPLE_QRELS.exists(), reason="sample data not generated")
def test_first_visit_shows_sample_data() -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    assert not at.exception
    assert at.title[0].value == "Data"
    assert at.radio(key=state.SOURCE).value == "sample"
    metrics = _metrics(at)
    assert metrics["Queries in qrels"] == "59"
    assert metrics["Judgments"] == "3,009"
    assert metrics["Pooled, unjudged"] == "9"
    assert metrics["Runs"] == "3"
    runs = at.dataframe[1].value.set_index("run")
    assert runs["queries"].to_dict() == {"bm25": 60, "narrow_recall": 59, "neural_rerank": 60}
    checks = at.dataframe[2].value.set_index("run")  # the soft problems, highlighted
    assert checks["qrels queries missing"].to_dict() == {
        "bm25": 0, "narrow_recall": 1, "neural_rerank": 0}
    assert checks["queries < 100 docs"].to_dict() == {
        "bm25": 0, "narrow_recall": 59, "neural_rerank": 0}
    grades = at.dataframe[0].value
    assert grades["judgments"].tolist() == [9, 2286, 391, 222, 110]
    # shares as every share of the app: x100, one decimal (ireval_core.formats)
    from _apps import read_sample

    from ireval_core import formats
    from ireval_core.dataset import Dataset

    summary = Dataset(*read_sample()).summary()
    assert grades["share"].tolist() == (summary.grades["share"] * 100).tolist()
    assert runs["judged in top 10"].to_dict() == (
        summary.runs.set_index("run")["judged in top 10"] * 100).to_dict()
    assert formats.PERCENT_GRID in at.dataframe[0].proto.columns
    assert formats.PERCENT_GRID in at.dataframe[1].proto.columns
    [box] = at.warning
    assert "q060" in box.value and "q031" in box.value
    assert not at.error
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "59 queries" in sidebar and "3 runs" in sidebar


def test_broken_run_file_is_reported_and_others_stay_loaded() -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    _upload(at, ("my.qrels", QRELS),
            [("a.run", RUN_A), ("broken.run", BROKEN_RUN), ("b.run", RUN_B)])
    assert not at.exception
    error, summary = at.error  # the file's error, then what it means for the checks
    assert "1 file(s) could not be read" in summary.value
    assert "broken.run:2" in error.value
    assert "expected 6 columns" in error.value
    assert "```text\nq1 Q0 d2 2\n```" in error.value  # the offending line as code
    # the qrels and the two good run files are still there
    assert _metrics(at)["Queries in qrels"] == "2"
    assert _metrics(at)["Runs"] == "2"
    assert _runs_table(at) == ["alpha", "beta"]
    loaded = at.main.markdown[-1].value
    assert "`a.run`" in loaded and "`b.run`" in loaded and "`my.qrels`" in loaded
    # dataset-level checks on the uploaded data
    [box] = [w for w in at.warning if "data warning" in w.value]
    assert "q3" in box.value and "unjudged" in box.value
    # unsaved uploads say that a reload loses them (and offer to save them)
    assert any("a reload of the page loses these files" in w.value for w in at.warning)
    assert "2 runs" in " ".join(c.value for c in at.sidebar.caption)


def test_broken_qrels_keeps_runs_until_fixed() -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    _upload(at, ("judgments.txt", RUN_A), [("a.run", RUN_A)])  # a run given as qrels
    assert not at.exception
    [error] = at.error
    assert "judgments.txt:1" in error.value and "looks like a TREC run file" in error.value
    assert "`a.run`" in at.main.markdown[-1].value  # the run was read
    assert not at.metric
    assert "qrels file that can be read" in at.info[0].value
    _upload(at, ("my.qrels", QRELS))  # only the qrels is replaced
    assert not at.exception and not at.error
    assert _metrics(at)["Runs"] == "1"
    assert _runs_table(at) == ["alpha"]


def test_uploads_survive_while_uploaders_are_hidden() -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    _upload(at, ("my.qrels", QRELS), [("a.run", RUN_A), ("b.run", RUN_B)])
    at.radio(key=state.SOURCE).set_value("sample").run()  # the uploaders are not rendered
    at.radio(key=state.SOURCE).set_value("upload").run()
    assert not at.exception
    assert _metrics(at)["Runs"] == "2"
    assert any("Still loaded from an earlier upload" in c.value for c in at.caption)
    at.button[0].click().run()  # "Forget them"
    assert not at.metric and not at.dataframe
    assert [c.value for c in at.sidebar.caption if "Dataset" in c.value] == [
        "**Dataset**  \nNo data loaded yet."]


def test_the_sidebar_glance_says_one_thing_after_choosing_upload_without_a_file() -> None:
    """The sample is loaded (the glance says its 3 runs); choosing Upload with no file
    leaves nothing loaded: the glance says only that, not also the sample's runs."""
    at = AppTest.from_file(APP, default_timeout=30).run()
    [before] = [c.value for c in at.sidebar.caption if "Dataset" in c.value]
    assert "3 runs: `bm25`, `narrow_recall`, `neural_rerank`" in before
    at.radio(key=state.SOURCE).set_value("upload").run()
    assert not at.exception
    glance = [c.value for c in at.sidebar.caption if "Dataset" in c.value or "run" in c.value]
    assert glance == ["**Dataset**  \nNo data loaded yet."]


def test_removing_run_files() -> None:
    at = AppTest.from_file(APP, default_timeout=30).run()
    _upload(at, ("my.qrels", QRELS), [("a.run", RUN_A), ("b.run", RUN_B)])
    at.file_uploader(key=state.RUNS_UPLOADER).set_value([("b.run", RUN_B, "text/plain")]).run()
    assert _runs_table(at) == ["beta"]
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(None).run()
    assert not at.exception
    assert _metrics(at)["Runs"] == "0"
    assert "No runs loaded yet." in [i.value for i in at.info]


def test_a_data_folder_replaces_the_sample(tmp_path, monkeypatch) -> None:
    """make run DATA=folder: the folder's qrels* file and its other files as runs."""
    import shutil

    sample = Path(__file__).resolve().parents[1] / "sample_data"
    shutil.copy(sample / "qrels.txt", tmp_path / "qrels.dl19.txt")
    shutil.copy(sample / "run_neural.txt", tmp_path / "input.runA")
    (tmp_path / "README.md").write_text("not a run")
    monkeypatch.setenv("IREVAL_DATA_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("pages/metrics.py").run()
    assert not at.exception
    assert list(at.table[0].value.index) == ["neural_rerank"]
    assert not any("Sample data" in i.value for i in at.info)
    assert any("IREVAL_DATA_DIR" in i.value for i in at.info)


@pytest.mark.parametrize(("complete", "said"), [
    (False, "left out of the means; the complete option (trec_eval -c) would count them as 0"),
    (True, "counted as 0 in the means, as the complete option (trec_eval -c) is on"),
])
def test_the_missing_query_warning_follows_the_complete_option(complete: bool, said: str
                                                                ) -> None:
    """narrow_recall does not answer judged query q031: the Data page says what the means
    do with it under the option in force (the CLI says the same, tests/test_cli_warnings)."""
    at = AppTest.from_file(APP, default_timeout=30)
    if complete:
        at.query_params["complete"] = "1"
    at.run()
    assert not at.exception
    [box] = at.warning
    line = next(t for t in box.value.split("\n") if "q031" in t)
    assert said in line.replace("\\", ""), line


def test_a_document_judged_in_two_judgment_groups_says_what_the_app_does() -> None:
    """A qrels file judging a document in two groups (the second column, as trec_eval's
    qrels.123) is refused with both lines, and the box says the app cannot read it and
    which command does; a plain duplicate does not."""
    at = AppTest.from_file(APP, default_timeout=30).run()
    grouped = b"q1 A d1 2\nq1 A d2 0\nq2 A d4 1\nq1 B d1 0\n"
    _upload(at, ("jg.txt", grouped), [("a.run", RUN_A)])
    assert not at.exception
    [error] = at.error
    assert ("jg.txt:4`**: duplicate qrels entry for query 'q1', document 'd1' (first at "
            "line 1)") in error.value
    assert "second column ('A' at line 1, 'B' here)" in error.value
    assert error.value.endswith(files_widgets.GROUPS_HOW)
    assert "python -m ireval_core eval -R qrels_jg" in files_widgets.GROUPS_HOW
    _upload(at, ("jg2.txt", grouped + b"q2 B d4 0\n"))  # two lines in another group
    [error] = at.error
    assert error.value.startswith("**Could not read `jg2.txt`: 2 problems.** All of them:")
    assert error.value.count("the file looks like judgment groups") == 1  # said once
    assert "second column ('A' at line 3, 'B' here)" in error.value
    assert error.value.endswith(files_widgets.GROUPS_HOW)
    _upload(at, ("dup.txt", grouped.replace(b"q1 B d1 0", b"q1 A d1 0")))
    [error] = at.error
    assert "dup.txt:4`**: duplicate qrels entry" in error.value
    assert files_widgets.GROUPS_HOW not in error.value and "second column" not in error.value
