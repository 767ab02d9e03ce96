"""AppTest of issue 18's smaller findings (item 7) still open on the labeling pages:
readable table headers with column help instead of raw column names, "–" with its
meaning instead of "None", "1 round" (not "1 files"), the name asked once per session.
Each test has its own SQLite workspace where it saves (``IREVAL_WORKSPACE``)."""

from __future__ import annotations

import json

import pyarrow as pa
from _apps import APP, LABELS, open_page
from streamlit.testing.v1 import AppTest

from ireval_app import state
from ireval_app.keys import labels_data as keys
from ireval_core.labels import read_judgments
from ireval_core.labels.agreement import rater_report
from ireval_core.workspace import Workspace

MONTHS = sorted(LABELS.glob("labels_*.csv"))

RAW = ("pairable_units", "cohen_linear", "drift_flag", "kappa_vs_consensus", "dcg_old",
       "from_lists", "n_labels")


def _headers(frame) -> dict[str, dict[str, str]]:
    """Column -> its column config (header ``label``, ``help``) as the page sent it."""
    config = json.loads(frame.proto.columns)
    config.pop("_index", None)  # the hidden index
    return config


def _shown(frame):
    """The cells as the page shows them (the Styler's display values)."""
    return pa.ipc.open_stream(frame.proto.arrow_data.styler.display_values).read_all(
    ).to_pandas()


def test_raters_and_changes_tables_have_readable_headers_with_help() -> None:
    at = open_page("labels_raters")
    per_round, per_rater, disputed = at.dataframe[:3]
    j = read_judgments(MONTHS)
    report = rater_report(j.label_table())
    for frame in (per_round, per_rater, disputed):
        config = _headers(frame)
        assert set(config) == set(frame.value.columns)
        labels = [c["label"] for c in config.values()]
        assert not [raw for raw in RAW if raw in labels], labels
    config = _headers(per_round)
    assert config["pairable_units"] == {"label": "Results with 2+ labels",
                                        "help": report.definitions["pairable_units"]}
    assert _headers(per_rater)["drift_flag"]["help"] == report.definitions["drift_flag"]
    assert _shown(per_round)["alpha"].tolist() == [f"{a:.3f}" for a in report.per_round["alpha"]]
    at.switch_page("pages/labels_changes.py").run()
    assert not at.exception
    labels = [c["label"] for c in _headers(at.dataframe[0]).values()]
    assert "From the lists" in labels and "DCG@10 later lists, earlier labels" in labels
    assert not [raw for raw in RAW if raw in labels]


def test_undefined_cells_show_a_dash_with_their_meaning() -> None:
    """A rater who labeled in one round only has no mean label of other rounds."""
    rows = ["round,query,doc,position,rater,label"]
    for month, raters in (("2026-05", ("ann", "bo")), ("2026-06", ("ann", "bo", "cy"))):
        for q in range(8):
            for p in range(1, 4):
                rows += [f"{month},q{q},d{q}{p},{p},{r},{(q + p + i) % 4 if r != 'cy' else 1}"
                         for i, r in enumerate(raters)]
    at = AppTest.from_file(APP, default_timeout=90)
    at.switch_page("pages/labels_data.py").run()
    at.radio(key=keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=keys.UPLOADER).set_value(
        [("two.csv", "\n".join(rows).encode(), "text/csv")]).run()
    at.switch_page("pages/labels_raters.py").run()
    assert not at.exception
    per_rater = at.dataframe[1]
    values, shown = per_rater.value, _shown(per_rater)
    cy = (values["rater"] == "cy").to_numpy()
    assert values.loc[cy, "mean_label_other_rounds"].isna().all()
    assert shown.loc[cy, "mean_label_other_rounds"].tolist() == ["–"]
    assert "None" not in shown.to_numpy().astype(str).tolist()
    captions = " ".join(c.value for c in at.caption)
    assert "–: not defined: no other rater labeled the rater's results in that round, or " \
           "the rater labeled in no other round" in captions


def test_one_round_and_the_name_asked_once(app_ws: Workspace) -> None:
    at = AppTest.from_file(APP, default_timeout=120)
    at.switch_page("pages/labels_data.py").run()
    at.radio(key=keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=keys.UPLOADER).set_value(
        [(MONTHS[0].name, MONTHS[0].read_bytes(), "text/csv")]).run()
    at.text_input(key=keys.SAVE_NAME).input("may")
    at.text_input(key=state.NOTES_AUTHOR).input("ana")
    next(b for b in at.button if b.label == "Save").click().run()
    assert not at.exception and not at.error
    [saved] = app_ws.list_datasets()
    [option] = at.selectbox(key=keys.SAVED_PICK).options
    assert option.startswith("may  ·  1 round  ·  version 1")
    # another page and back: the add form has the name already
    at.switch_page("pages/labels_trend.py").run()
    at.switch_page("pages/labels_data.py").run()
    at.file_uploader(key=keys.add_uploader(0)).set_value(
        [(MONTHS[1].name, MONTHS[1].read_bytes(), "text/csv")]).run()
    assert at.text_input(key=state.NOTES_AUTHOR).value == "ana"
    next(b for b in at.button if b.label == "Add to set may").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert app_ws.get_dataset(saved.id).version == 2
    assert at.selectbox(key=keys.SAVED_PICK).options[0].startswith("may  ·  2 rounds  ·  ")
