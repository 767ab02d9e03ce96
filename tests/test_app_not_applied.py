"""Issue 23: a link's value that cannot be applied is refused at one place
(``ireval_app.views``): the page shows the default and says so, ``Not applied:
<param>=<value> (<why>)``, never an exception and never a silent change.

Each case opens the page as a new session opening the link (``at.query_params`` set
before the first run), then asserts the note, that the number shown is the default's,
and that nothing raised.
"""

from __future__ import annotations

from numbers import Integral
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ireval_app import views
from ireval_app.keys import curves as curves_keys
from ireval_app.keys import lab as lab_keys
from ireval_app.keys import labels_changes as changes_keys
from ireval_app.keys import labels_raters as raters_keys
from ireval_app.keys import labels_trend as trend_keys
from ireval_app.keys import metrics as metrics_keys
from ireval_app.keys import ndcg_vs_dcg as ndcg_keys
from ireval_app.keys import queries as queries_keys
from ireval_core import EvalOptions, evaluate
from ireval_core.io import read_qrels, read_runs
from ireval_core.labels import dcg_decomposition, plan_next_round, read_judgments, trend
from ireval_core.params import Boolean, Interval, Options
from ireval_core.queries import query_differences
from ireval_core.tables import metrics_table

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
SAMPLE = ROOT / "sample_data"
LABELS = SAMPLE / "labels"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists()
                                or not (LABELS / "gsb.csv").exists(),
                                reason="sample data not generated")


def _open(page: str, params: dict[str, str | list[str]]) -> AppTest:
    """A new session opening ``/<page>?<params>`` (``data``: the Data page, ``/``)."""
    at = AppTest.from_file(APP, default_timeout=90)
    for key, value in params.items():
        at.query_params[key] = value
    if page != "data":
        at.switch_page(f"pages/{page}.py")
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _notes(at: AppTest) -> list[str]:
    return [w.value.replace("\\", "") for w in at.warning if "applied" in w.value]


def _text(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


@pytest.fixture(scope="module")
def sample():
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    return qrels, runs


@pytest.fixture(scope="module")
def judgments():
    return read_judgments(sorted(LABELS.glob("labels_*.csv")))


# ----------------------------------------------------------------------------- read_param


def test_read_param_checks_type_range_and_choices() -> None:
    k = views.ViewParam("x.k", "k", Interval(Integral, 1, 1000, closed="both"))
    assert views.read_param(k, ["10"]) == (10, [])
    assert views.read_param(k, ["0"]) == (None, [("0", "not an int from 1 to 1000")])
    value, refused = views.read_param(k, ["99999999999999999999"])
    assert value is None and refused[0][1].startswith("too large")
    runs = views.ViewParam("x.runs", "runs", many=True, loaded="run")
    assert views.read_param(runs, ["a", "zz", "b"], choices=["a", "b"]) == (
        ["a", "b"], [("zz", "no such run here")])
    pick = views.ViewParam("x.pick", "pick", Options(("x", "y")))
    assert views.read_param(pick, ["z"])[1] == [("z", "not one of 'x', 'y'")]
    flag = views.ViewParam("x.flag", "flag", Boolean())
    assert views.read_param(flag, ["yes"]) == (True, [])
    text = views.ViewParam("x.text", "text")
    assert views.read_param(text, ["x" * (views.MAX_TEXT + 1)])[0] is None


# ----------------------------------------------------------------------------- labeling K


def _trend_table(at: AppTest):
    """The Trend page's table of rounds (the page also shows the anchor items' table)."""
    return next(d.value for d in at.dataframe if "dcg" in d.value.columns)


@pytest.mark.parametrize(("page", "k"), [("labels_trend", "0"), ("labels_trend", "-5"),
                                         ("labels_trend", "100000"), ("labels_changes", "0")])
def test_k_out_of_range_on_a_labeling_page(page: str, k: str, judgments) -> None:
    at = _open(page, {"k": k})
    assert _notes(at) == [f"Not applied: k={k} (not an int from 1 to 1000)"]
    assert "DCG@10, linear gain" in _text(at.caption)  # the settings line: not DCG@1
    assert "k" not in at.query_params
    if page == "labels_trend":
        shown = _trend_table(at)
        expected = trend(judgments, k=10).table
        assert list(shown["dcg"]) == pytest.approx(list(expected["dcg"]), rel=1e-12)
    else:
        parts = at.dataframe[0].value.set_index("system")
        expected = dcg_decomposition(judgments, "2026-09", "2026-10", k=10).set_index("system")
        assert parts["total"].tolist() == pytest.approx(expected["total"].tolist(), rel=1e-12)


def test_a_valid_k_in_a_labeling_link_is_applied(judgments) -> None:
    at = _open("labels_trend", {"k": "5"})
    assert _notes(at) == []
    assert "DCG@5, linear gain" in _text(at.caption)
    assert list(_trend_table(at)["dcg"]) == pytest.approx(
        list(trend(judgments, k=5).table["dcg"]), rel=1e-12)


def test_a_note_stays_on_reruns_until_the_value_is_changed() -> None:
    at = _open("queries", {"a": "nope"})
    assert _notes(at) == ["Not applied: a=nope (no such run here)"]
    at.selectbox(key=queries_keys.SHOWN).set_value(50).run()  # another widget: still noted
    assert _notes(at) == ["Not applied: a=nope (no such run here)"]
    at.selectbox(key=queries_keys.RUN_A).set_value("neural_rerank").run()
    assert _notes(at) == [] and not at.exception


# ----------------------------------------------------------------------------- ?ds=


@pytest.mark.parametrize("value", ["../../etc/passwd", "abc", "x" * 10_000, "0" * 65])
@pytest.mark.parametrize("page", ["metrics", "data", "labels_gsb"])
def test_a_dataset_param_that_is_not_an_id(page: str, value: str, sample) -> None:
    at = _open(page, {"ds": value})
    [note] = _notes(at)
    assert note.startswith(f"Not applied: ds={value[:39]}")
    assert note.endswith("(not a dataset id: 8 to 64 hexadecimal characters)")
    assert len(note) < 200  # a 10 kB value is shortened
    assert "ds" not in at.query_params
    assert at.title  # the page is drawn
    if page == "metrics":  # the bundled sample, with the default options
        shown = at.table[0].value
        expected = metrics_table(evaluate(*sample, list(shown.columns))).cells
        assert shown.loc["bm25", "nDCG@10"] == expected.loc["bm25", "nDCG@10"]


def test_a_dataset_note_stays_while_the_sample_stands_in() -> None:
    at = _open("metrics", {"ds": "abc"})
    assert len(_notes(at)) == 1
    at.switch_page("pages/curves.py").run()  # another page: still the sample
    assert len(_notes(at)) == 1 and not at.exception


# ----------------------------------------------------------------------------- options


@pytest.mark.parametrize("page", ["metrics", "compare"])
def test_an_oversized_depth_is_not_applied(page: str, sample) -> None:
    at = _open(page, {"depth": "99999999999999999999"})
    warnings = _text(at.sidebar.warning)
    assert "Option not applied: depth='99999999999999999999'" in warnings
    assert at.session_state["ireval.options"] == EvalOptions()
    if page == "metrics":
        expected = metrics_table(evaluate(*sample, list(at.table[0].value.columns))).cells
        assert at.table[0].value.loc["bm25", "nDCG@10"] == expected.loc["bm25", "nDCG@10"]
    else:
        table = at.dataframe[0].value
        res = evaluate(*sample, ["nDCG@10"])
        row = table[(table["system_a"] == "bm25") & (table["system_b"] == "narrow_recall")]
        assert row["mean_a"].iloc[0] == pytest.approx(
            res.per_query("bm25", "nDCG@10").loc[_shared(res)].mean(), abs=1e-12)


def _shared(res) -> list[str]:
    common = None
    for s in res.systems:
        q = set(res.per_query(s, "nDCG@10").dropna().index)
        common = q if common is None else common & q
    return sorted(common or ())


# ----------------------------------------------------------------------------- Trend's delta


@pytest.mark.parametrize(("delta", "why"), [
    ("nan", "not a finite number >= 0.01"),
    ("1e400", "too large: expected a finite number >= 0.01"),
    ("-1", "not a finite number >= 0.01"),
])
def test_trend_delta_out_of_range(delta: str, why: str, judgments) -> None:
    at = _open("labels_trend", {"delta": delta})
    assert _notes(at) == [f"Not applied: delta={delta} ({why})"]
    assert at.number_input(key=trend_keys.PLAN_DELTA).value == 0.5
    expected = plan_next_round(judgments, judgments.rounds[-1], delta=0.5, k=10)
    plan = next(d.value for d in at.dataframe if list(d.value.columns) == list(expected.columns))
    assert plan.equals(expected)


def test_trend_alpha_and_power_outside_their_fields(judgments) -> None:
    """A value the field cannot show is refused and noted, not clamped by the field."""
    at = _open("labels_trend", {"alpha": "0.7", "power": "0.3"})
    assert _notes(at) == ["Not applied: alpha=0.7 (not a number from 0.001 to 0.5)",
                          "Not applied: power=0.3 (not a number from 0.5 to 0.99)"]
    assert at.number_input(key=trend_keys.ALPHA).value == trend_keys.ALPHA_DEFAULT
    assert at.number_input(key=trend_keys.POWER).value == trend_keys.POWER_DEFAULT
    assert "alpha" not in at.query_params and "power" not in at.query_params


# ----------------------------------------------------------------------------- names


def test_queries_names_that_are_not_loaded(sample) -> None:
    at = _open("queries", {"measure": "zz", "a": "nope", "b": "nope", "query": "nope"})
    notes = _notes(at)
    assert notes[0].startswith("Not applied: measure=zz (not one of 'nDCG@10', 'AP'")
    assert notes[1:] == ["Not applied: a=nope (no such run here)",
                         "Not applied: b=nope (no such run here)",
                         "Not applied: query=nope (no such query here)"]
    assert at.selectbox(key=queries_keys.MEASURE).value == "nDCG@10"
    assert at.selectbox(key=queries_keys.RUN_A).value == "bm25"
    assert at.selectbox(key=queries_keys.RUN_B).value == "narrow_recall"
    expected = query_differences(evaluate(*sample, ["nDCG@10"]), "nDCG@10", "bm25",
                                 "narrow_recall")
    assert at.selectbox(key=queries_keys.QUERY).value == expected["query"].iloc[0]
    assert at.dataframe[0].value["diff"].tolist() == pytest.approx(expected["diff"].tolist(),
                                                                   abs=1e-12)
    assert dict(at.query_params) == {}


def test_metrics_names_that_are_not_offered(sample) -> None:
    at = _open("metrics", {"measures": ["zz", "AP"], "split": "nope", "weighted": "maybe"})
    notes = _notes(at)
    assert "Not applied: weighted=maybe (not a bool (true or false))" in notes
    assert "Not applied: split=nope (no such metadata column here)" in notes
    assert any(n.startswith("Not applied: measures=zz (not one of 'nDCG@10'") for n in notes)
    assert at.multiselect(key=metrics_keys.MEASURES).value == ["AP"]  # the one that exists
    assert at.selectbox(key=metrics_keys.SPLIT).value == "(none)"
    expected = metrics_table(evaluate(*sample, ["AP"])).cells
    assert at.table[0].value.loc["bm25", "AP"] == expected.loc["bm25", "AP"]
    assert dict(at.query_params) == {"measures": "AP"}


def test_curves_query_that_is_not_loaded() -> None:
    at = _open("curves", {"query": "nope"})
    assert _notes(at) == ["Not applied: query=nope (no such query here)"]
    assert at.selectbox(key=curves_keys.QUERY).value == at.selectbox(
        key=curves_keys.QUERY).options[0]


def test_ndcg_cutoffs_that_are_not_offered() -> None:
    at = _open("ndcg_vs_dcg", {"k": "7", "recall_k": "abc"})
    assert _notes(at) == ["Not applied: k=7 (not one of 5, 10, 20, 100)",
                          "Not applied: recall_k=abc (not one of 10, 100, 1000)"]
    assert at.selectbox(key=ndcg_keys.K).value == 10
    assert "DCG@10" in at.dataframe[0].value.columns


def test_lab_run_and_query_that_are_not_loaded(sample) -> None:
    at = _open("lab", {"list": "query", "run": "nope", "query": "nope", "measure": "zz"})
    notes = _notes(at)
    assert notes[:2] == ["Not applied: run=nope (no such run here)",
                         "Not applied: query=nope (no such query here)"]
    assert notes[2].startswith("Not applied: measure=zz (not one of ")
    assert at.selectbox(key=lab_keys.RUN).value == "bm25"
    assert at.selectbox(key=lab_keys.MEASURE).value == "nDCG@10"


def test_lab_list_and_preset_that_do_not_exist() -> None:
    at = _open("lab", {"list": "nope", "preset": "nope"})
    notes = _notes(at)
    assert notes[0] == "Not applied: list=nope (not one of 'preset', 'typed', 'query')"
    assert notes[1].startswith("Not applied: preset=nope (not one of 'seed000-ap'")
    assert at.radio(key=lab_keys.SOURCE).value == "preset"


def test_raters_round_and_rater_that_are_not_loaded() -> None:
    at = _open("labels_raters", {"round": "nope", "rater": "nope"})
    assert _notes(at) == ["Not applied: round=nope (no such round here)",
                          "Not applied: rater=nope (no such rater here)"]
    # the defaults: the flagged rater and round
    assert at.selectbox(key=raters_keys.ROUND).value == "2026-09"
    assert at.selectbox(key=raters_keys.RATER).value == "chen"


def test_label_changes_rounds_that_are_not_loaded(judgments) -> None:
    at = _open("labels_changes", {"old": "nope", "new": "2026-13"})
    assert _notes(at) == ["Not applied: old=nope (no such round here)",
                          "Not applied: new=2026-13 (no such round here)"]
    assert at.selectbox(key=changes_keys.OLD).value == "2026-09"
    assert at.selectbox(key=changes_keys.NEW).value == "2026-10"
    parts = at.dataframe[0].value.set_index("system")
    expected = dcg_decomposition(judgments, "2026-09", "2026-10", k=10).set_index("system")
    assert parts["total"].tolist() == pytest.approx(expected["total"].tolist(), rel=1e-12)
