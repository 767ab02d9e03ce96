"""AppTest of issue 18 item 4 (every problem at once) and of the labeling links (the
label map, the conflict rule and the model judge change the numbers, so they are in
every labeling page's link).

A file with 83 conflicts (one rater labels one document differently in two systems'
lists) is refused with the count, the first 20 problems with their lines and a CSV
download of all 83 whose bytes are the core's :meth:`FormatError.problems_csv`; the
explicit choice reads it, is stated next to the numbers and travels in the link. Run
files with many bad lines are reported the same way on the Data page.
"""

from __future__ import annotations

import html
from pathlib import Path

import pytest
import streamlit.testing.v1.app_test as app_test_module
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import labeling
from ireval_app.keys import labels_data as keys
from ireval_core import FormatError
from ireval_core.io import read_runs
from ireval_core.labels import anchor_drift, noise_trend, read_anchors, read_judgments, trend

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data" / "labels"


class _Recording(MemoryMediaFileStorage):
    """The in-memory media storage AppTest uses, keeping the bytes of each download."""

    files: dict[str, bytes] = {}

    def load_and_get_id(self, path_or_data, mimetype, kind, filename=None):  # type: ignore[no-untyped-def]
        if isinstance(path_or_data, bytes) and filename:
            type(self).files[filename] = path_or_data
        return super().load_and_get_id(path_or_data, mimetype, kind, filename)


@pytest.fixture
def downloads(monkeypatch: pytest.MonkeyPatch) -> dict[str, bytes]:
    """File name -> bytes of every download button drawn (the real storage, recorded)."""
    _Recording.files = {}
    monkeypatch.setattr(app_test_module, "MemoryMediaFileStorage", _Recording)
    return _Recording.files


def _text(elements) -> str:
    """The text shown (Markdown escapes undone)."""
    return html.unescape(" ".join(e.value for e in elements).replace("\\", ""))


def _upload(at: AppTest, name: str, data: bytes) -> None:
    at.switch_page("pages/labels_data.py").run()
    at.radio(key=keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=keys.UPLOADER).set_value([(name, data, "text/csv")]).run()


def test_83_conflicts_refused_with_the_count_the_first_20_and_all_as_csv(month, downloads
                                                                         ) -> None:
    text, expected = month
    with pytest.raises(FormatError) as info:
        read_judgments(("may.csv", text.encode()))
    core = info.value
    at = AppTest.from_file(APP, default_timeout=90)
    _upload(at, "may.csv", text.encode())
    assert not at.exception
    assert at.radio(key=labeling.CONFLICTS).value == "refuse"
    [box] = at.error
    shown = box.value.replace("\\", "")
    assert "Could not read `may.csv`: 83 problems." in shown and "The first 20:" in shown
    listed = shown.split("```text\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert listed == [str(p) for p in core.problems[:20]]
    assert [line.split(":")[1] for line in listed] == [str(b) for b, _ in expected[:20]]
    assert "And 63 more: every problem is in the CSV below." in shown
    assert "83 of these are one rater's different labels of a document" in shown
    assert "One rater, one document, several lists" in shown
    # all 83 as CSV: the core's bytes (formula cells escaped by the core)
    [button] = [b for b in at.get("download_button") if "problems" in b.proto.label]
    assert button.proto.label == "All 83 problems (CSV)"
    assert downloads["problems_may.csv.csv"] == core.problems_csv().encode()
    assert downloads["problems_may.csv.csv"].decode().count("\n") == 84
    # no Save form while the file cannot be read, and no numbers
    assert not [b for b in at.button if b.label == "Save"]
    assert "Saving is offered once every file can be read" in _text(at.caption)
    assert not at.metric and not at.info  # refused: not "no files loaded"


@pytest.mark.parametrize("choice", ["mean", "latest", "separate"])
def test_each_choice_reads_the_file_states_it_and_keeps_it_in_the_link(month, choice) -> None:
    text, _ = month
    j = read_judgments(("may.csv", text.encode()), conflicts=choice)
    at = AppTest.from_file(APP, default_timeout=90)
    _upload(at, "may.csv", text.encode())
    at.radio(key=labeling.CONFLICTS).set_value(choice).run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["conflicts"] == choice
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Labels"] == f"{len(j.label_table()):,}"
    assert metrics["File rows"] == f"{j.n_rows:,}" == "1,200"
    warnings = _text(at.warning)
    assert j.conflict_note in warnings  # the reader's note, with the count
    # every labeling page states the rule in its settings line; the trend's definition
    # holds the conflict note, and the numbers are the core's with that rule
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    assert at.query_params["conflicts"] == choice
    captions = _text(at.caption)
    assert f"(conflicts={choice})" in captions
    t = trend(j, k=10)
    assert j.conflict_note in t.definition and j.conflict_note in captions
    assert t.ndcg_definition in captions  # under the chart: the band and test drawn
    table = next(d.value for d in at.dataframe if "mdc" in d.value.columns)
    assert table["dcg"].tolist() == pytest.approx(t.table["dcg"].tolist(), rel=1e-12)


def _sample_people_and_judge() -> list[Path]:
    return [*sorted(SAMPLE.glob("labels_*.csv")), *sorted(SAMPLE.glob("judge_*.csv"))]


def test_a_link_with_map_judge_and_conflicts_reproduces_the_numbers() -> None:
    label_map = "none=0,low=1,mid=2,high=5"
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/labels_data.py").run()
    at.text_input(key=labeling.MAP).input(label_map).run()
    at.radio(key=labeling.CONFLICTS).set_value("latest").run()
    at.switch_page("pages/labels_judge.py").run()
    at.selectbox(key=labeling.JUDGE).set_value("chen").run()
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    params = {k: at.query_params[k] for k in ("map", "conflicts", "judge")}
    assert params == {"map": label_map, "conflicts": "latest", "judge": "chen"}
    made = next(d.value for d in at.dataframe if "mdc" in d.value.columns)
    # the core with the same settings: chen left out of the people's numbers
    j = read_judgments(_sample_people_and_judge(), label_map=label_map, conflicts="latest")
    people = j.select(raters=[r for r in j.raters if r != "chen"])
    drift = anchor_drift(read_anchors([SAMPLE / "anchors.csv"], label_map=label_map))
    core = noise_trend(people, k=10, anchors=drift).table
    assert made["dcg"].tolist() == pytest.approx(core["dcg"].tolist(), rel=1e-12)
    plain = read_judgments(_sample_people_and_judge())
    default = noise_trend(plain.select(raters=[r for r in plain.raters if r != "llm"]),
                          k=10).table
    assert made["dcg"].tolist() != pytest.approx(default["dcg"].tolist(), rel=1e-6)
    # the link, opened in a fresh session, shows the same numbers
    link = AppTest.from_file(APP, default_timeout=120)
    link.query_params.update(params)
    link.switch_page("pages/labels_trend.py").run()
    assert not link.exception and "Not applied" not in _text(link.info) + _text(link.warning)
    opened = next(d.value for d in link.dataframe if "mdc" in d.value.columns)
    assert opened["dcg"].tolist() == made["dcg"].tolist()
    assert opened["ci_low"].tolist() == made["ci_low"].tolist()
    assert "model judge **chen** is left out" in _text(link.caption)
    assert "(conflicts=latest)" in _text(link.caption)
    link.switch_page("pages/labels_data.py").run()
    assert link.text_input(key=labeling.MAP).value == label_map
    assert link.radio(key=labeling.CONFLICTS).value == "latest"


def test_bad_link_values_are_not_applied() -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update({"map": "high=x", "conflicts": "max", "judge": "nobody"})
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    notes = " ".join(e.value for e in [*at.info, *at.warning, *at.caption, *at.markdown])
    notes = notes.replace("\\", "")
    assert "Not applied: map=high=x (not a label map" in notes
    assert "Not applied: conflicts=max (not one of 'refuse', 'mean', 'latest', " in notes
    assert "Not applied: judge=nobody (no such rater here)" in notes
    assert all(k not in at.query_params for k in ("map", "conflicts"))
    # the defaults are shown: the sample's numbers, the sample's judge left out
    j = read_judgments(_sample_people_and_judge())
    shown = next(d.value for d in at.dataframe if "mdc" in d.value.columns)
    drift = anchor_drift(read_anchors([SAMPLE / "anchors.csv"]))
    core = noise_trend(j.select(raters=[r for r in j.raters if r != "llm"]), k=10,
                       anchors=drift).table
    assert shown["dcg"].tolist() == pytest.approx(core["dcg"].tolist(), rel=1e-12)


def test_a_run_file_with_many_bad_lines_is_reported_at_once(downloads) -> None:
    lines = [f"q{i} Q0 d{i} 1 {'x' if i % 3 == 0 else '0.5'} bm25" for i in range(1, 91)]
    data = ("\n".join(lines) + "\n").encode()
    with pytest.raises(FormatError) as info:
        read_runs(data, name="=bad run.txt")
    core = info.value
    assert core.count == 30
    qrels = (ROOT / "sample_data" / "qrels.txt").read_bytes()
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.radio(key=state.SOURCE).set_value("upload").run()
    at.file_uploader(key=state.QRELS_UPLOADER).set_value(("qrels.txt", qrels, "text/plain"))
    at.file_uploader(key=state.RUNS_UPLOADER).set_value(
        [("=bad run.txt", data, "text/plain")]).run()
    assert not at.exception
    box = next(e.value for e in at.error if "30 problems" in e.value).replace("\\", "")
    listed = box.split("```text\n", 1)[1].split("\n```", 1)[0].splitlines()
    assert listed == [str(p) for p in core.problems[:20]]
    assert listed[0].startswith("=bad run.txt:3: ")
    assert "And 10 more" in box
    csv_bytes = downloads["problems__bad_run.txt.csv"]
    assert csv_bytes == core.problems_csv().encode()
    assert csv_bytes.decode().splitlines()[1].startswith("'=bad run.txt,3,")


def test_messages_name_the_app_fields_and_list_every_problem_at_once(month) -> None:
    """A month with an unknown label and 83 conflicts: one box lists both kinds (84
    problems), and says what to do with the page's fields ("Label map", "One rater, one
    document, several lists"), not read_judgments' parameters or the CLI's flags. A
    Quepid export (no round) asks for the "Round of tool exports"."""
    text, _ = month
    lines = text.splitlines()
    lines[1] = lines[1].rsplit(",", 1)[0] + ",meh"
    at = AppTest.from_file(APP, default_timeout=90)
    _upload(at, "may.csv", ("\n".join(lines) + "\n").encode())
    assert not at.exception
    [box] = at.error
    shown = box.value.replace("\\", "")
    assert "Could not read `may.csv`: 84 problems." in shown
    assert "may.csv:2: unknown label 'meh'" in shown and "one label per (round" in shown
    assert ('Fill the "Label map" under Settings on the Labeling data page with every '
            "label's grade, e.g. none=0,low=1,mid=2,high=3.") in shown
    assert "83 of these are one rater's different labels" in shown
    assert '"One rater, one document, several lists"' in shown
    for foreign in ("--label-map", "--conflicts", "read_judgments", "label_map=", "CLI"):
        assert foreign not in shown, foreign
    quepid = b"query,docid,rating\nq1,d1,3\nq1,d2,1\n"
    at = AppTest.from_file(APP, default_timeout=90)
    _upload(at, "quepid.csv", quepid)
    [box] = at.error
    shown = box.value.replace("\\", "")
    assert "a Quepid export has no rounds" in shown
    assert ('Set the "Round of tool exports" under Settings on the Labeling data page '
            "(e.g. 2026-05): this export names no round of its own.") in shown
    assert "--round" not in shown and "round=" not in shown
    at.text_input(key=labeling.ROUND).input("2026-05").run()
    assert not at.error and {m.label: m.value for m in at.metric}["Rounds"] == "1"
