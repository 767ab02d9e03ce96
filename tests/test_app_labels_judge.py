"""AppTest of the Model judge page on the bundled sample: the sample's judge ``llm`` is
preselected, the numbers shown are :func:`ireval_core.labels.judge_report`'s, and the
planted bias toward ``treatment`` is found."""

from __future__ import annotations

import base64
import html
import json

import numpy as np
import pytest
from _apps import LABELS, open_page
from streamlit.testing.v1 import AppTest

from ireval_app.keys import labeling
from ireval_app.keys import labels_judge as keys
from ireval_core.labels import judge_report, read_judgments
from ireval_core.labels.gsb import read_gsb
from ireval_core.labels.ppi import ppi_report

pytestmark = pytest.mark.skipif(not (LABELS / "judge_llm.csv").exists(),
                                reason="labeling sample not generated")


@pytest.fixture(scope="module")
def judgments():
    return read_judgments([*sorted(LABELS.glob("labels_*.csv")), LABELS / "judge_llm.csv"])


@pytest.fixture(scope="module")
def report(judgments):
    j = judgments
    return judge_report(j, "llm", gsb=read_gsb(LABELS / "gsb.csv"),
                        gsb_systems=("control", "treatment"))


@pytest.fixture(scope="module")
def page() -> AppTest:
    return open_page("labels_judge")


def _frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_the_samples_judge_is_preselected(page: AppTest) -> None:
    assert not page.exception
    assert page.selectbox(key=labeling.JUDGE).value == "llm"
    assert page.query_params.get("judge") is None  # the default is not in the link


def test_agreement_and_bias_are_the_cores(page: AppTest, report) -> None:
    agreement = _frame(page, "kappa")
    assert list(agreement["kappa"]) == pytest.approx(list(report.agreement["kappa"]))
    assert list(agreement["alpha_ci_low"]) == pytest.approx(
        list(report.agreement["alpha_ci_low"]))
    bias = _frame(page, "people_mean").set_index(["round", "system"])
    pooled = bias.loc[("all", "treatment")]
    assert pooled["bias"] == pytest.approx(
        report.bias.set_index(["round", "system"]).loc[("all", "treatment"), "bias"])
    assert pooled["bias"] > 0 and pooled["ci_low"] > 0  # the planted bias
    favours = _frame(page, "favours").set_index(["round", "system"])
    assert bool(favours.loc[("all", "treatment"), "favours"])
    assert not bool(favours.loc[("all", "control"), "favours"])
    summary = " ".join(m.value for m in page.markdown).replace("\\", "")
    assert "it favours treatment" in summary
    assert len(_frame(page, "same_verdict")) == len(report.gsb)
    assert len(_frame(page, "same_order")) == len(report.order)


def test_confusion_matrix_axes_say_judge_and_people(page: AppTest, report) -> None:
    fig = json.loads(page.get("plotly_chart")[0].proto.spec)
    layout = fig["layout"]
    assert html.unescape(layout["yaxis"]["title"]["text"]) == "judge's (llm) label"
    assert html.unescape(layout["xaxis"]["title"]["text"]) == "people's consensus label"
    z = fig["data"][0]["z"]  # plotly's typed array: base64 of float64, "rows, columns"
    shown = np.frombuffer(base64.b64decode(z["bdata"]), dtype=z["dtype"]).reshape(4, 4)
    assert shown.tolist() == report.confusion("2026-10").to_numpy().tolist()


def test_model_plus_people_is_the_cores(page: AppTest, judgments) -> None:
    want = ppi_report(judgments, "llm")
    shown = _frame(page, "boot_low")
    assert list(shown["estimate"]) == pytest.approx(list(want.systems["estimate"]))
    assert list(shown["boot_high"]) == pytest.approx(list(want.systems["boot_high"]))
    pairs = _frame(page, "judge_agrees")
    assert list(pairs["verdict"]) == list(want.pairs["verdict"])
    text = " ".join(m.value for m in page.markdown).replace("\\", "")
    assert want.memo in text
    captions = " ".join(c.value for c in page.caption).replace("\\", "")
    assert "Model + people (PPI++)" in captions and "tau_AP" in captions


def test_disagreements_and_downloads(page: AppTest, report) -> None:
    n = len(report.disagreements)
    assert any(f"{n:,} results for people to label" in s.value for s in page.subheader)
    labels = [b.proto.label for b in page.get("download_button")]
    assert labels == ["Batch to label (CSV)", "Batch to label (Excel)"]


def test_another_judge_from_the_link_and_the_people_exclude_it() -> None:
    at = open_page("labels_judge", judge="chen", round="2026-08")
    assert at.selectbox(key=labeling.JUDGE).value == "chen"
    assert at.selectbox(key=keys.ROUND).value == "2026-08"
    # chen is now left out of the people's numbers on the other pages, llm counts as a rater
    at.switch_page("pages/labels_data.py").run()
    assert "model judge **chen** is left out" in " ".join(c.value for c in at.caption)


def test_a_report_over_the_servers_limit_is_refused(monkeypatch) -> None:
    """With ``IREVAL_JUDGE_MAX_WORK`` under the sample's 12 points x 2,000 resamples, the
    page says so, names the limit, and computes nothing."""
    monkeypatch.setenv("IREVAL_JUDGE_MAX_WORK", "20000")
    at = open_page("labels_judge")
    assert [e.value for e in at.error] == [
        "The model-judge report is too large: 12 (round, system) points x 2,000 resamples "
        "= 24,000, over the limit of 20,000 points x resamples (this server's "
        "IREVAL_JUDGE_MAX_WORK); load the files of fewer rounds on the Labeling data "
        "page, or ask whoever runs the server to raise the limit."]
    assert not at.dataframe and not at.subheader
    monkeypatch.setenv("IREVAL_JUDGE_MAX_WORK", "24000")  # at the limit: the report
    at.run()
    assert not at.exception and not at.error
    assert any(s.value == "Agreement with the people" for s in at.subheader)
