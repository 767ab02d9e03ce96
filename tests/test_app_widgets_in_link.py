"""Every selection is in the link, by construction: each page is drawn (on the bundled
sample, the labeling sample, a saved dataset and a saved labeling set, and in the states
that draw its conditional widgets), and every widget it draws that holds a value has a
key that is a URL parameter of the page (its ``keys`` module's ``PARAMS``, or an
evaluation option) or is listed as deliberately local with a reason (``LOCAL``, the
page's or :data:`ireval_app.state.LOCAL`). A new widget that is in neither fails here."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path

import pytest
from _apps import APP, LABELS, NEEDS_SAMPLE, SAMPLE, sample_files
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import Button, DownloadButton, NumberInput, Widget

from ireval_app import state, views
from ireval_app.frame import PAGES
from ireval_app.keys import labels_data as labels_keys
from ireval_app.keys import rounds as rounds_keys
from ireval_core.params import Interval
from ireval_core.workspace import Workspace

pytestmark = NEEDS_SAMPLE

ACTIONS = (Button, DownloadButton)
"""Widgets that run something and hold no value a view could show (buttons, downloads,
a form's submit button)."""


def _keys_module(page: str):
    return importlib.import_module(f"ireval_app.keys.{page}")


def undeclared(at: AppTest, page: str) -> list[str]:
    """The widgets ``page`` drew in ``at`` that hold a value and are neither a URL
    parameter nor listed as local (``type key`` or ``type 'label'`` without a key)."""
    module = _keys_module(page)
    in_link = {v.key for v in module.PARAMS} | set(state.OPTION_KEYS.values())
    local = {**state.LOCAL, **module.LOCAL}
    out = []
    for node in [*at.main, *at.sidebar]:
        if not isinstance(node, Widget) or isinstance(node, ACTIONS):
            continue
        if node.key is None:
            out.append(f"{type(node).__name__} {getattr(node, 'label', '')!r} without a key")
        elif node.key not in in_link and not views.covers(local, node.key):
            out.append(f"{type(node).__name__} {node.key}")
    return out


def out_of_range(at: AppTest, page: str) -> list[str]:
    """Number fields in the link whose range is not the range a link's value is read
    with: a value the field cannot show would be changed silently, not noted."""
    module = _keys_module(page)
    params = {v.key: v for v in module.PARAMS}
    out = []
    for node in [*at.main, *at.sidebar]:
        if isinstance(node, NumberInput) and node.key in params:
            c = params[node.key].constraint
            if not isinstance(c, Interval) or (c.low, c.high) != (node.min, node.max) or \
                    not all(c.is_satisfied_by(x) for x in (c.low, c.high) if x is not None):
                out.append(f"{node.key}: field {node.min}..{node.max}, link {c}")
    return out


def drawn(at: AppTest) -> set[str]:
    return {n.key for n in [*at.main, *at.sidebar] if isinstance(n, Widget) and n.key}


def _open(page: str, **params: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    if page != "data":
        at.switch_page(PAGES[page].path)
    at.run()
    assert not at.exception, at.exception
    return at


def _check(at: AppTest, page: str) -> set[str]:
    assert not at.exception, at.exception
    assert undeclared(at, page) == []
    assert out_of_range(at, page) == []
    return drawn(at)


@pytest.mark.parametrize("page", list(PAGES))
def test_every_widget_of_every_page_is_in_the_link_or_local(page: str) -> None:
    """Each page as a first visit draws it: on the evaluation sample, and the labeling
    pages on the labeling sample."""
    module = _keys_module(page)
    params = {v.key for v in module.PARAMS}
    assert not params & set(module.LOCAL), "a widget is both in the link and local"
    for key, why in {**state.LOCAL, **module.LOCAL}.items():
        assert why.strip() and "\n" not in why, key
    at = _open(page)
    _check(at, page)
    assert PAGES[page].title.lower() in at.title[0].value.lower()  # the page was drawn


def _source(at: AppTest, key: str, value: str) -> AppTest:
    at.radio(key=key).set_value(value).run()
    return at


VARIANTS: dict[str, tuple[str, Callable[[AppTest], AppTest] | None, dict[str, str]]] = {
    "compare against a baseline, split": ("compare", None, {"pairs": "against a baseline",
                                                            "split": "segment"}),
    "metrics split by segment": ("metrics", None, {"split": "segment"}),
    "queries of a segment": ("queries", None, {"segment_by": "segment"}),
    "lab typed list": ("lab", None, {"list": "typed"}),
    "lab query of a run": ("lab", None, {"list": "query"}),
    "trend by segment": ("labels_trend", None, {"segments": "1"}),
    "data upload": ("data", lambda at: _source(at, state.SOURCE, "upload"), {}),
    "labeling upload": ("labels_data",
                        lambda at: _source(at, labels_keys.SOURCE, "upload"), {}),
    "rounds with another round": ("rounds", lambda at: at.file_uploader(
        key=rounds_keys.UPLOADER).set_value([("qrels.txt", (SAMPLE / "qrels.txt").read_bytes(),
                                              "text/plain")]).run(), {}),
}


@pytest.mark.parametrize("name", list(VARIANTS))
def test_conditional_widgets_are_in_the_link_or_local(name: str) -> None:
    page, act, params = VARIANTS[name]
    at = _open(page, **params)
    before = drawn(at)
    if act is not None:
        act(at)
    assert drawn(at) - before or params, "the variant drew no other widget"
    _check(at, page)


@pytest.fixture
def saved(app_ws: Workspace) -> str:
    """The sample saved in the test's workspace; its short id."""
    return app_ws.save_dataset(sample_files(), name="sample", saved_by="ana").short_id


@pytest.mark.parametrize("page", ["compare", "queries", "meeting", "data"])
def test_widgets_beside_a_saved_dataset(page: str, saved: str) -> None:
    """A saved dataset draws the notes forms, the decision form and the saved-dataset
    choices."""
    at = _open(page, ds=saved)
    if page == "data":
        _source(at, state.SOURCE, "saved")
    keys = _check(at, page)
    assert any(k.startswith(state.NOTES_PREFIX) for k in keys) or page == "data"


def test_widgets_of_a_saved_labeling_set(app_ws: Workspace) -> None:
    """Uploaded labeling files draw the save form; the saved set its version and the add
    form."""
    months = sorted(Path(LABELS).glob("labels_*.csv"))[:2]
    at = _open("labels_data")
    _source(at, labels_keys.SOURCE, "upload")
    at.file_uploader(key=labels_keys.UPLOADER).set_value(
        [(p.name, p.read_bytes(), "text/csv") for p in months]).run()
    _check(at, "labels_data")  # the save form
    at.text_input(key=labels_keys.SAVE_NAME).input("labels 2026")
    at.text_input(key=state.NOTES_AUTHOR).input("ana")
    next(b for b in at.button if b.label == "Save").click().run()
    assert at.radio(key=labels_keys.SOURCE).value == "saved"
    keys = _check(at, "labels_data")  # the set, its version and the add form
    assert {labels_keys.SAVED_PICK, labels_keys.add_uploader(0)} <= keys
