"""The Data page says when a run file's tag column splits it into several systems.

trec_eval reads a results file as one run whatever its tags; ireval reads one system per
tag (the CLI says so on stderr and offers ``--one-run``). The page says it too, next to
the files it read.
"""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ireval_app import state

APP = str(Path(__file__).resolve().parents[1] / "app.py")
QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d4 1\n"
# one file, the tag changing per line: bm25 on q1, rerank on q1 and q2
MIXED = (b"q1 Q0 d1 1 3.0 bm25\nq1 Q0 d2 2 2.0 bm25\nq1 Q0 d2 1 3.0 rerank\n"
         b"q1 Q0 d1 2 2.0 rerank\nq2 Q0 d4 1 1.0 rerank\n")
ONE_TAG = b"q1 Q0 d1 1 3.0 solo\nq2 Q0 d4 1 1.0 solo\n"


def _upload(runs: list[tuple[str, bytes]]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60).run()
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(("q.txt", QRELS, "text/plain"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(
        [(name, data, "text/plain") for name, data in runs])
    at.run()
    assert not at.exception
    return at


def test_a_file_with_several_tags_is_said_to_be_split() -> None:
    at = _upload([("mixed.run", MIXED), ("one.run", ONE_TAG)])
    runs = at.dataframe[1].value.set_index("run")
    assert runs["queries"].to_dict() == {"bm25": 1, "rerank": 2, "solo": 2}
    [note] = [i.value for i in at.info if "tags" in i.value]
    assert "**mixed.run holds 2 tags**, read as 2 systems (`bm25`, `rerank`)" in note
    assert "`eval --one-run`" in note and "trec_eval reads a file as one run" in note
    assert {m.label: m.value for m in at.metric}["Runs"] == "3"


def test_no_note_for_files_with_one_tag() -> None:
    at = _upload([("one.run", ONE_TAG)])
    assert not [i.value for i in at.info if "tags" in i.value]


def test_a_tag_of_several_files_names_every_run_after_its_file() -> None:
    """Two files with rank_llm's one tag ``rank``: the runs are ``bm25:rank`` and
    ``splade:rank`` (neither is a bare ``rank``) in the runs table and the sidebar, with
    each file's own numbers, and the renaming is said."""
    bm25 = b"q1 Q0 d1 1 3.0 rank\nq1 Q0 d2 2 2.0 rank\nq2 Q0 d4 1 1.0 rank\n"
    splade = b"q1 Q0 d2 1 3.0 rank\nq1 Q0 d1 2 2.0 rank\n"
    at = _upload([("bm25.txt", bm25), ("splade.txt", splade)])
    runs = at.dataframe[1].value.set_index("run")
    assert runs["queries"].to_dict() == {"bm25:rank": 2, "splade:rank": 1}
    sidebar = " ".join(c.value for c in at.sidebar.caption)
    assert "2 runs: `bm25:rank`, `splade:rank`" in sidebar
    shown = " ".join(w.value for w in at.warning) + " ".join(c.value for c in at.caption)
    assert "'bm25:rank'" in shown.replace("\\", "") and "'splade:rank'" in shown.replace(
        "\\", "")
