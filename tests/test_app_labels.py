"""AppTest of the Monthly labeling pages on the bundled sample: both planted events (the
month recall breaks for one system, the month one rater drifts) are visible in the values
the pages show, and those values are the core's."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from _apps import APP, LABELS, open_page
from streamlit.testing.v1 import AppTest

from ireval_app.keys import labeling as labeling_keys
from ireval_app.keys import labels_raters as labels_raters_keys
from ireval_app.keys import labels_trend as labels_trend_keys
from ireval_core.labels import anchor_drift, noise_trend, read_anchors, read_judgments, trend
from ireval_core.labels.agreement import rater_report
from ireval_core.labels.gsb import gsb_by_round, read_gsb

pytestmark = pytest.mark.skipif(not (LABELS / "gsb.csv").exists(),
                                reason="labeling sample not generated")


def _text(elements) -> str:
    return " ".join(e.value for e in elements).replace("\\", "")


def _findings(at: AppTest, tone: str = "") -> list[str]:
    """The findings drawn (:func:`ireval_app.findings.finding`: a badge, then the text),
    their text without the badge; ``tone`` ("orange", "violet"): only those."""
    badge = f":{tone}-badge[" if tone else "-badge["
    return [m.value.split("] ", 1)[1].replace("\\", "") for m in at.markdown
            if badge in m.value and " Finding] " in m.value]


def _frame(at: AppTest, column: str):
    """The first table shown with ``column``."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def _people() -> list[Path]:
    """The people's files of the sample (the model judge's are judge_*.csv)."""
    return sorted(LABELS.glob("labels_*.csv"))


@pytest.fixture(scope="module")
def core():
    j = read_judgments(sorted(LABELS.glob("labels_*.csv")))
    return j, trend(j, k=10)


def test_data_page_summarises_the_sample() -> None:
    at = open_page("labels_data")
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Rounds"] == "6" and metrics["Systems"] == "2" and metrics["Raters"] == "3"
    assert any("Sample labeling data" in i.value for i in at.info)


def test_trend_shows_the_recall_break(core) -> None:
    j, t = core
    at = open_page("labels_trend")
    drops = [f for f in _findings(at, "orange") if not f.startswith("Anchor items")]
    assert not at.error  # a finding is not drawn as an application error
    assert len(drops) == 1  # the only significant drop
    assert "treatment, 2026-07 → 2026-08: DCG@10 fell from 10.369 to 3.996" in drops[0]
    # the table on the page is the core's trend
    shown = _frame(at, "mdc")
    row = shown[(shown["round"] == "2026-08") & (shown["system"] == "treatment")].iloc[0]
    expected = t.table[(t.table["round"] == "2026-08") & (t.table["system"] == "treatment")]
    assert row["dcg"] == pytest.approx(expected["dcg"].iloc[0], rel=1e-12)
    # offline vs online: the model scores still order what was shown
    [online] = _findings(at, "violet")
    assert "suspect recall" in online


def test_raters_flags_the_drifting_rater() -> None:
    at = open_page("labels_raters")
    [flag] = _findings(at, "orange")
    assert not at.error
    assert flag.startswith("chen, 2026-09: agreement with the consensus dropped")
    j = read_judgments(sorted(LABELS.glob("labels_*.csv")))
    report = rater_report(j.label_table())
    per_round = at.dataframe[0].value.set_index("round")
    assert per_round.loc["2026-09", "alpha"] == pytest.approx(
        report.per_round.set_index("round").loc["2026-09", "alpha"], rel=1e-12)
    assert per_round.loc["2026-09", "alpha"] < per_round.drop(index="2026-09")["alpha"].min()
    # the confusion matrix opens on the flagged rater and round
    assert at.selectbox(key=labels_raters_keys.ROUND).value == "2026-09"
    assert at.selectbox(key=labels_raters_keys.RATER).value == "chen"


def test_changes_split_the_dcg_change() -> None:
    at = open_page("labels_changes", old="2026-07", new="2026-08")
    parts = at.dataframe[0].value.set_index("system")
    for system in ("control", "treatment"):
        row = parts.loc[system]
        assert row["total"] == pytest.approx(row["from_lists"] + row["from_labels"], abs=1e-12)
    # treatment's fall comes from its new result lists, not from relabeling
    assert parts.loc["treatment", "from_lists"] < -5


def test_changes_count_and_transitions_are_one_definition() -> None:
    """The "Changed" metric, the transitions' off-diagonal cells, the pairs table and the
    decomposition's "Relabeled" all count a change of the combined (mean) label: 1.667 ->
    2 is a change, in the count and off the diagonal alike."""
    from ireval_core.labels import label_changes

    at = open_page("labels_changes")
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    ch = label_changes(read_judgments(_people()), "2026-09", "2026-10")
    heat = next(json.loads(c.proto.spec)["data"][0] for c in at.get("plotly_chart")
                if "Label transitions" in c.proto.spec)
    import base64

    import numpy as np

    z = np.frombuffer(base64.b64decode(heat["z"]["bdata"]), dtype=heat["z"]["dtype"]
                      ).reshape(len(heat["y"]), len(heat["x"]))
    off = z.sum() - np.trace(z)
    assert heat["x"] == heat["y"] and "1.67" in heat["x"]  # combined labels, not grades
    assert metrics["Changed"] == f"{ch.n_changed:,}" == f"{int(off):,}"
    assert metrics["Labeled in both rounds"] == f"{ch.n_both:,}" == f"{int(z.sum()):,}"
    pairs = next(d.value for d in at.dataframe if "change" in d.value.columns)
    assert int((pairs["change"] != 0).sum()) == min(ch.n_changed, len(pairs))
    assert "a pair changed when that label differs between the rounds" in _text(at.caption)
    parts = next(d.value for d in at.dataframe if "relabeled" in d.value.columns)
    assert (parts["relabeled"] <= parts["old_labels_used"]).all()


def test_gsb_page() -> None:
    at = open_page("labels_gsb")
    expected = gsb_by_round(read_gsb([LABELS / "gsb.csv"])).set_index("round")
    shown = at.dataframe[0].value.set_index("round")
    assert shown.loc["2026-08", "gsb"] == pytest.approx(expected.loc["2026-08", "gsb"])
    assert "2026-08: the new system is judged worse" in " ".join(_findings(at, "orange"))
    assert not at.error


def test_settings_change_every_labeling_page() -> None:
    at = open_page("labels_data")
    at.number_input(key=labeling_keys.K).set_value(5).run()
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    assert "DCG@5" in _text(at.caption)
    j = read_judgments(sorted(LABELS.glob("labels_*.csv")))
    t5 = trend(j, k=5).table
    shown = _frame(at, "mdc")
    assert list(shown["dcg"]) == pytest.approx(list(t5["dcg"]), rel=1e-12)


def test_trend_band_is_the_rater_noise_interval_with_the_mdc() -> None:
    """The band and table are noise_trend's (people only: the sample's model judge left
    out), anchors drift is warned before the chart, and columns have readable names."""
    at = open_page("labels_trend")
    j = read_judgments([*_people(), LABELS / "judge_llm.csv"])
    drift = anchor_drift(read_anchors(LABELS / "anchors.csv"))
    nt = noise_trend(j, k=10, exclude=["llm"], anchors=drift)
    shown = _frame(at, "mdc")
    for col in ("dcg", "ci_low", "ci_high", "ci_low_queries", "ci_high_queries", "mdc"):
        assert list(shown[col]) == pytest.approx(list(nt.table[col]), rel=1e-12), col
    # the people's numbers are the same as without the judge's file
    assert list(shown["dcg"]) == pytest.approx(list(trend(read_judgments(_people())).table["dcg"]))
    # the band as drawn: the chart's first fill is the rater-noise interval of control
    band = json.loads(at.get("plotly_chart")[0].proto.spec)["data"][0]
    control = nt.table[nt.table["system"] == "control"]
    assert band["y"] == pytest.approx(list(control["ci_high"]) + list(control["ci_low"])[::-1])
    caption = _text(at.caption)
    assert "covering query sampling and rater noise (3 raters resampled as a whole)" in caption
    assert "model judge **llm** is left out" in caption
    # anchors drift: warned, and the drop flags are the new interval's
    found = _findings(at)
    assert found[0].startswith("Anchor items 2026-06 → 2026-07")
    assert sum(nt.changes["drop"]) == len(_findings(at, "orange")) - sum(
        f.startswith("Anchor items") for f in found) == 1
    # readable column names: the labels are in the column config, no raw names shown
    config = at.dataframe[[d.value.columns.tolist() for d in at.dataframe].index(
        shown.columns.tolist())].proto.columns
    assert "Min. detectable change" in config and "Low (queries + raters)" in config
    assert "dcg_ci_low" not in shown.columns


def test_trend_alpha_and_power_from_the_link() -> None:
    at = open_page("labels_trend", alpha="0.01", power="0.9")
    j = read_judgments(_people())
    nt = noise_trend(j, k=10, alpha=0.01, power=0.9)
    assert list(_frame(at, "mdc")["mdc"]) == pytest.approx(list(nt.table["mdc"]), rel=1e-12)
    bad = open_page("labels_trend", alpha="2")
    assert "alpha" in _text(bad.warning) and "Not applied" in _text(bad.warning)
    assert bad.number_input(key=labels_trend_keys.ALPHA).value == 0.05


def test_raters_confusion_title_axes_and_caption_agree() -> None:
    at = open_page("labels_raters")
    fig = json.loads(at.get("plotly_chart")[1].proto.spec)["layout"]
    title = html.unescape(fig["title"]["text"])
    assert title == "chen against the other raters, 2026-09"
    assert "transitions" not in title
    assert html.unescape(fig["yaxis"]["title"]["text"]) == "chen's label"
    assert html.unescape(fig["xaxis"]["title"]["text"]) == "other raters' consensus label"
    assert "Rows: chen's label; columns: the consensus of the other raters" in _text(at.caption)


def test_labeling_small_findings() -> None:
    """Issue 18 item 7 on the labeling pages: no cut-off label, what the row count counts,
    no link to the page itself, no DCG settings on Side by side, coverage as a share,
    label colours ordered by grade."""
    at = open_page("labels_data")
    assert at.selectbox(key=labeling_keys.COMBINE).label == "Combine raters by"
    metrics = {m.label: m for m in at.metric}
    every = read_judgments([*_people(), *sorted(LABELS.glob("judge_*.csv"))])
    assert metrics["Labels"].value == f"{len(every.label_table()):,}"
    rows = sum(sum(1 for _ in p.open(encoding="utf-8")) - 1
               for p in [*_people(), *sorted(LABELS.glob("judge_*.csv"))])
    assert metrics["File rows"].value == f"{rows:,}" == f"{every.n_rows:,}"
    assert "several systems' lists" in metrics["Labels"].proto.help
    assert f"{rows:,} rows read: {every.n_rows_labeled:,} with a label" in _text(at.caption)
    assert not [p for p in at.get("page_link") if p.proto.label == "Go to the Labeling data page"]
    gsb = open_page("labels_gsb")
    assert not any("DCG@" in c.value for c in gsb.caption)
    trend_page = open_page("labels_trend")
    charts_ = [json.loads(c.proto.spec) for c in trend_page.get("plotly_chart")]
    coverage = next(c for c in charts_ if "Coverage" in c["layout"]["title"]["text"])
    assert coverage["layout"]["yaxis"]["range"] == [0, 1.02]
    assert coverage["layout"]["yaxis"]["tickformat"] == ".0%"
    grades = next(c for c in charts_ if "Labels of the shown" in c["layout"]["title"]["text"])
    colours = [t["marker"]["color"] for t in grades["data"]]
    darkness = [sum(int(x) for x in c[c.index("(") + 1:-1].split(",")) for c in colours]
    assert darkness == sorted(darkness, reverse=True)  # lowest grade lightest


def test_an_uploaded_gbk_file_says_how_it_was_read(tmp_path) -> None:
    """A labeling CSV from Excel on Chinese Windows (GBK): read, with the same labeled rows
    as its UTF-8 twin, and the page names the encoding read."""
    from ireval_app.keys import labels_data as keys

    rows = ["round,query,doc,position,label,rater"]
    rows += [f"2026-05,{q},d{p},{p},{(p + i) % 4},{r}"
             for i, q in enumerate(("手机壳", "蓝牙耳机")) for p in range(1, 6)
             for r in ("张伟", "李娜")]
    text = "\r\n".join(rows) + "\r\n"
    shown = {}
    for name, data in (("gbk.csv", text.encode("gbk")), ("utf8.csv", text.encode("utf-8"))):
        at = AppTest.from_file(APP, default_timeout=90)
        at.switch_page("pages/labels_data.py").run()
        at.radio(key=keys.SOURCE).set_value("upload").run()
        at.file_uploader(key=keys.UPLOADER).set_value([(name, data, "text/csv")]).run()
        assert not at.exception and not at.error
        shown[name] = ({m.label: m.value for m in at.metric},
                       [w.value for w in at.warning if "GB18030" in w.value])
    assert shown["gbk.csv"][0] == shown["utf8.csv"][0]
    assert shown["gbk.csv"][0]["Labels"] == shown["gbk.csv"][0]["File rows"] == "20"
    assert len(shown["gbk.csv"][1]) == 1 and shown["utf8.csv"][1] == []


def test_planning_speaks_of_query_weights_only_when_the_files_have_them() -> None:
    """The sample has a weight column: the Planning caption says the trend's means are
    weighted. The same months without it: no word of query weights."""
    from ireval_app.keys import labels_data as data_keys

    at = open_page("labels_trend")
    caption = _text(at.caption)
    assert "From the spread of per-query DCG@10" in caption
    assert "the trend's means are weighted by the query weight" in caption
    months = []
    for path in _people()[:2]:
        lines = path.read_text(encoding="utf-8").splitlines()
        months.append((path.name, ("\n".join(line.rsplit(",", 1)[0] for line in lines)
                                   + "\n").encode(), "text/csv"))
    assert months[0][1].startswith(b"round,system,query,doc,position,rater,label,score,segment\n")
    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"),
                           default_timeout=90)
    at.switch_page("pages/labels_data.py").run()
    at.radio(key=data_keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=data_keys.UPLOADER).set_value(months).run()
    at.switch_page("pages/labels_trend.py").run()
    assert not at.exception
    caption = _text(at.caption)
    assert ("From the spread of per-query DCG@10 in 2026-06, every query counted once: 'new "
            "sample'") in caption
    assert "query weight" not in caption and "weights" not in caption
    plan = next(d for d in at.dataframe if "queries_needed" in d.value.columns)
    assert plan.value["queries_needed"].notna().all()


def test_trend_caption_describes_the_band_and_test_the_page_draws() -> None:
    """At α = 0.01 the drops are the rater-noise trend's at 0.01, and the caption under
    the chart says so (it said "p < 0.05" and a query-only band, the other trend's)."""
    at = open_page("labels_trend", alpha="0.01")
    caption = next(c.value for c in at.caption if "Month over month:" in c.value)
    caption = caption.replace("\\", "")
    assert "a drop is a negative delta with p < 0.01" in caption
    assert "two-stage bootstrap percentile interval" in caption
    assert "p < 0.05" not in caption and "interval over queries (" not in caption
    assert "nDCG@10 = DCG@10 / the DCG@10 of the round's labeled documents" in caption


def test_an_upload_past_the_servers_read_limit_is_refused_naming_the_limit(monkeypatch
                                                                           ) -> None:
    """A gzip labeling file that expands past the server's read limit
    (``IREVAL_MAX_INFLATED_BYTES``) is refused on the Labeling data page with a message
    naming that limit: read no further, no traceback, no report built from part of it."""
    import gzip

    from ireval_app.keys import labels_data as keys

    monkeypatch.setenv("IREVAL_MAX_INFLATED_BYTES", str(100_000))
    rows = ["round,query,doc,position,label,rater"]
    rows += [f"2026-06,q{i // 10},d{i},{i % 10 + 1},{i % 4},ann" for i in range(6_000)]
    data = gzip.compress(("\n".join(rows) + "\n").encode())  # 190 kB inflated
    at = AppTest.from_file(APP, default_timeout=90)
    at.switch_page("pages/labels_data.py").run()
    at.radio(key=keys.SOURCE).set_value("upload").run()
    at.file_uploader(key=keys.UPLOADER).set_value([("big.csv.gz", data, "application/gzip")]
                                                   ).run()
    assert not at.exception
    shown = " ".join(e.value for e in at.error)
    assert "big.csv.gz" in shown and "IREVAL_MAX_INFLATED_BYTES" in shown, shown
    assert "Traceback" not in shown and not at.metric, shown
