"""The Judging page's month's task in a real session on a real SQLite workspace: build the
task from the sample query log and the sample runs, label three units, and find them in
the labeling set's round (weights included), also from a new session."""

from __future__ import annotations

import io

import pandas as pd
import pytest
from _apps import APP
from streamlit.testing.v1 import AppTest

from ireval_app import judging_glue
from ireval_app.keys import judging as keys
from ireval_core.labels import read_judgments
from ireval_core.labels.trend import trend
from ireval_core.workspace import Workspace


def task_session() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    at.switch_page("pages/judging.py").run()
    at.radio(key=keys.MODE).set_value(judging_glue.MODES[1]).run()
    at.text_input(key=keys.RATER).input("ana").run()
    assert not at.exception
    return at


def build(at: AppTest, round_name: str = "2026-07") -> None:
    at.text_input(key=keys.TASK_ROUND).input(round_name)
    at.selectbox(key=keys.TASK_DESIGN).set_value("stratified")
    at.number_input(key=keys.TASK_N).set_value(6)
    at.number_input(key=keys.TASK_K).set_value(3)
    at.number_input(key=keys.TASK_SEED).set_value(4)
    at.text_input(key=keys.TASK_SET_NAME).input("July labels")
    next(b for b in at.button if b.label == "Build the task").click().run()
    assert not at.exception


def shown_unit(at: AppTest) -> tuple[str, str]:
    md = [m.value for m in at.markdown]
    query = next(v for v in md if v.startswith("**Query**")).split("`")[1]
    doc = next(v for v in md if v.startswith("**Document**")).split("`")[1]
    return query, doc


def the_round(ws: Workspace) -> pd.DataFrame:
    (info,) = [i for i in ws.list_datasets() if i.name == "July labels"]
    (f,) = info.files
    assert f.name == "2026-07.csv" and f.rounds == ("2026-07",)
    return pd.read_csv(io.BytesIO(ws.read_file(info.id, f.position)), dtype=str,
                       keep_default_na=False)


def test_build_label_three_and_a_new_session(app_ws: Workspace) -> None:
    at = task_session()
    build(at)
    summary = next(c.value for c in at.caption if "round 2026-07" in c.value)
    assert "6 of 60 queries stratified" in summary
    given = {}
    for grade in (3, 0, 2):
        unit = shown_unit(at)
        at.button(key=f"{keys.GRADE}{grade}").click().run()
        assert not at.exception and not at.error
        given[unit] = grade
        assert shown_unit(at) != unit
    frame = the_round(app_ws)
    labeled = frame[frame["label"] != ""]
    got = {(r.query, r.doc): int(float(r.label)) for r in labeled.itertuples()}
    assert got == given
    assert set(labeled["rater"]) == {"ana"} and all(labeled["time"].str.endswith("Z"))
    assert frame["weight"].astype(float).gt(0).all() and set(frame["round"]) == {"2026-07"}
    # every row showing a labeled document carries its label (one per system showing it)
    shown = frame.set_index(["query", "doc"]).index.isin(list(given))
    assert (frame["label"][shown] != "").all()
    # the Monthly labeling readers take the round as it is
    j = read_judgments(("2026-07.csv", frame.to_csv(index=False).encode()))
    assert j.rounds == ("2026-07",)

    # undo takes the last label back out of the saved round
    at.button(key=keys.UNDO).click().run()
    assert not at.exception
    assert len(the_round(app_ws).query("label != ''").drop_duplicates(["query", "doc"])) == 2
    # the Trend of this session shows the set's round (its weighted DCG), not the sample
    data = the_round(app_ws).to_csv(index=False).encode()
    expected = trend(read_judgments(("2026-07.csv", data)), k=10).table
    (info,) = [i for i in app_ws.list_datasets() if i.name == "July labels"]
    fresh = AppTest.from_file(APP, default_timeout=60)  # and a new session, by the link
    fresh.query_params.update({"source": "saved", "set": info.short_id})
    for session in (at, fresh):
        session.switch_page("pages/labels_trend.py").run()
        assert not session.exception
        assert not any("Sample labeling data" in i.value for i in session.info)
        shown = next(d.value for d in session.dataframe if "mdc" in d.value.columns)
        merged = shown.merge(expected, on=["round", "system"], suffixes=("", "_core"))
        assert len(merged) == len(expected) == 3 and set(merged["round"]) == {"2026-07"}
        assert merged["dcg"].tolist() == pytest.approx(merged["dcg_core"].tolist(), rel=1e-12)


def test_next_month_goes_to_the_chosen_set_and_a_round_it_has_is_refused(
        app_ws: Workspace) -> None:
    at = task_session()
    build(at)  # 2026-07 in a new set "July labels"
    at.button(key=f"{keys.GRADE}1").click().run()
    (info,) = [i for i in app_ws.list_datasets() if i.name == "July labels"]
    # the set is now the chosen one: the same round again is refused, nothing written
    assert at.selectbox(key=keys.TASK_SET).value == info.short_id
    build(at)
    at.button(key=f"{keys.GRADE}2").click().run()
    assert not at.exception
    assert any("2026-07" in e.value and "already" in e.value for e in at.error), [
        e.value for e in at.error]
    assert app_ws.get_dataset(info.id).version == 1
    # next month is added to it as its next version, the first month kept
    build(at, "2026-08")
    at.button(key=f"{keys.GRADE}2").click().run()
    at.button(key=f"{keys.GRADE}0").click().run()
    assert not at.exception and not at.error
    grown = app_ws.get_dataset(info.id)
    assert grown.version == 3 and grown.rounds == ("2026-07", "2026-08")
    assert sorted(f.name for f in grown.files) == ["2026-07.csv", "2026-08.csv"]
