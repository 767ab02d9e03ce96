"""The frame every page draws (``ireval_app.frame``): the menu in its sections, the
evaluation options on the results pages, the frame kept by a page that stops, and the
Data page's old address."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import frame, state
from ireval_app.keys import labels_data as labels_data_keys

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")

pytestmark = pytest.mark.skipif(not (ROOT / "sample_data" / "qrels.txt").exists(),
                                reason="sample data not generated")

SECTIONS = ["Evaluate", "Monthly labeling", "Meet and learn"]
"""The sections every session's menu shows (the Team section's Admin page is in the
menu of a signed-in admin only: ``test_app_roles.py``)."""


def _menu(at: AppTest) -> list[str]:
    """The section captions of the sidebar's menu, in order."""
    out = []
    for element in at.sidebar:
        if element.type == "caption" and element.value.strip("*") in SECTIONS:
            out.append(element.value.strip("*"))
    return out


def test_every_page_file_is_in_the_menu_and_the_other_way_round() -> None:
    files = {p.stem for p in (ROOT / "pages").glob("*.py")} - {"data"}  # data: the old /data
    assert {p.name for p in frame.PAGES.values() if p.name != "data"} == files
    assert frame.PAGES["data"].path == "app.py"
    for p in frame.PAGES.values():
        assert (ROOT / p.path).is_file(), p.path
    assert list(frame.SECTIONS) == [*SECTIONS, "Team"]


@pytest.mark.parametrize("name", [p for p in frame.PAGES])
def test_every_page_draws_the_frame(name: str) -> None:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["rel"] = "2"
    if name != "data":
        at.switch_page(frame.PAGES[name].path)
    at.run()
    assert not at.exception
    assert _menu(at) == SECTIONS
    options = [n for n in at.sidebar.number_input if n.key == state.OPTION_KEYS["rel_level"]]
    if frame.PAGES[name].labeling or frame.PAGES[name].admin:
        assert options == []  # the options do not apply to labeled lists, nor to members
    else:
        assert options[0].value == 2.0  # from the URL
        assert at.query_params["rel"] == "2"


def test_a_page_that_stops_keeps_its_frame() -> None:
    at = AppTest.from_file(APP, default_timeout=90)
    at.session_state["ireval.view." + labels_data_keys.SOURCE] = "upload"  # nothing uploaded
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    assert any("No labeling files loaded" in i.value for i in at.info)  # st.stop() ran
    assert _menu(at) == SECTIONS


def test_the_frame_loads_no_scipy_and_knows_the_combine_rules() -> None:
    """The frame runs on every page: the Data page and a first visit of Metrics must not
    wait for scipy (about 0.6 s); the labeling settings it checks are the core's."""
    import subprocess
    import sys

    code = "import sys, ireval_app.frame; print('scipy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == "False"
    from ireval_app.keys import labeling
    from ireval_core.labels import COMBINE_RULES
    from ireval_core.labels.judgments import CONFLICT_RULES

    assert labeling.COMBINES == tuple(COMBINE_RULES)
    assert labeling.CONFLICT_CHOICES == tuple(CONFLICT_RULES)


def test_the_old_data_address_opens_the_data_page_with_its_parameters() -> None:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["rel"] = "2"
    at.switch_page("pages/data.py").run()
    assert not at.exception
    assert at.title[0].value == "Data"
    assert at.query_params["rel"] == "2"
    assert at.session_state["ireval.options"].rel_level == 2.0
