"""The ``labels`` and ``gsb`` commands: columns, formats, empty cells, exit status 2."""

from __future__ import annotations

import csv
import importlib.util
import io
import json
from pathlib import Path

import pytest

from ireval_core import cli
from ireval_core.cli_labels import GSB_COLUMNS, LABELS_COLUMNS

LABELS = Path(__file__).resolve().parents[1] / "sample_data" / "labels"
SAMPLE = [str(p) for p in sorted(LABELS.glob("labels_*.csv"))]
HAS_AGREEMENT = importlib.util.find_spec("ireval_core.labels.agreement") is not None
HAS_GSB = importlib.util.find_spec("ireval_core.labels.gsb") is not None


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return cli.main(argv, out=out), out.getvalue()


@pytest.fixture(scope="module")
def sample_json() -> dict:
    status, text = run(["labels", *SAMPLE, "--format", "json", "--resamples", "200"])
    assert status == 0
    return json.loads(text)


@pytest.mark.skipif(not HAS_AGREEMENT, reason="ireval_core.labels.agreement (Part B) missing")
def test_labels_json_rows_and_the_planted_events(sample_json):
    assert sample_json["columns"] == list(LABELS_COLUMNS)
    rows = {(r["round"], r["system"]): r for r in sample_json["rows"]}
    assert len(rows) == 12
    assert all(r["queries"] == 150 for r in rows.values())
    broken, before = rows[("2026-08", "treatment")], rows[("2026-07", "treatment")]
    assert broken["dcg"] < 0.5 * before["dcg"] and broken["auc"] > 0.8
    assert broken["dcg_ci_low"] < broken["dcg"] < broken["dcg_ci_high"]
    # the rater drift shows in Krippendorff's alpha (one value per round)
    alpha = {r: rows[(r, "control")]["alpha"] for r, _ in rows}
    assert alpha["2026-09"] < 0.8 < min(v for k, v in alpha.items() if k != "2026-09")
    assert any("suspect recall" in n for n in sample_json["notes"])


@pytest.mark.skipif(not HAS_AGREEMENT, reason="ireval_core.labels.agreement (Part B) missing")
def test_labels_table_and_csv_agree(sample_json):
    status, table = run(["labels", *SAMPLE[:2], "--resamples", "200"])
    assert status == 0
    lines = table.splitlines()
    assert lines[0].split() == list(LABELS_COLUMNS)
    assert len(lines[1].split()) == len(LABELS_COLUMNS)
    assert any(line.startswith("# labels: none/low/mid/high") for line in lines)
    status, text = run(["labels", *SAMPLE[:2], "--resamples", "200", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(text)))
    assert list(rows[0]) == list(LABELS_COLUMNS) and len(rows) == 4
    first = sample_json["rows"][0]
    assert float(rows[0]["dcg"]) == pytest.approx(first["dcg"])
    assert f"{first['dcg']:.4f}" in lines[1]


def test_empty_cells_without_scores_or_second_rater(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("round,query,doc,position,label\nr1,q1,d1,1,2\nr1,q1,d2,2,0\n"
                    "r1,q2,d3,1,1\n")
    status, text = run(["labels", str(path), "--format", "csv", "--k", "2"])
    assert status == 0
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["auc"] == row["gauc"] == row["pnr"] == row["alpha"] == ""
    assert float(row["dcg"]) == pytest.approx((2 + 0 + 1) / 2)
    assert row["queries"] == "2" and row["system"] == "default"


def test_options_reach_the_numbers(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text("round,query,doc,position,label\nr1,q1,d1,1,none\nr1,q1,d2,2,high\n")
    status, text = run(["labels", str(path), "--format", "json", "--gain", "exp", "--k", "1"])
    assert json.loads(text)["rows"][0]["dcg"] == 0.0
    status, text = run(["labels", str(path), "--format", "json", "--gain", "exp",
                        "--label-map", "none=3,high=0", "--k", "1"])
    assert json.loads(text)["rows"][0]["dcg"] == 7.0


def test_formula_cells_are_neutralised_in_csv(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("round,system,query,doc,position,label\n=cmd|x,=SUM(A1),q,d,1,1\n")
    status, text = run(["labels", str(path), "--format", "csv"])
    row = next(csv.reader(io.StringIO(text.splitlines()[1])))
    assert row[0] == "'=cmd|x" and row[1] == "'=SUM(A1)"


def test_bad_input_exits_2_with_one_line(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("round,query,doc,position,label\nr,q,d1,1,high\nr,q,d2,2,meh\n")
    status, _ = run(["labels", str(path)])
    err = capsys.readouterr().err
    assert status == 2
    assert err.count("\n") == 1 and err.startswith("bad.csv:3: unknown label 'meh'")
    assert err.endswith("; pass a label map with --label-map, e.g. --label-map "
                        "'none=0,low=1,mid=2,high=3'\n")  # the flag, not read_judgments
    assert "read_judgments" not in err
    status, _ = run(["labels", str(tmp_path / "missing.csv")])
    assert status == 2 and "missing.csv" in capsys.readouterr().err
    good = tmp_path / "good.csv"
    good.write_text("round,query,doc,position,label\nr,q,d1,1,high\n")
    status, _ = run(["labels", str(good), "--k", "0"])
    assert status == 2 and "The 'k' parameter of trend" in capsys.readouterr().err


@pytest.mark.skipif(not HAS_GSB, reason="ireval_core.labels.gsb (Part B) missing")
def test_gsb_rows(capsys, tmp_path):
    status, text = run(["gsb", str(LABELS / "gsb.csv"), "--format", "json"])
    assert status == 0
    doc = json.loads(text)
    assert doc["columns"] == list(GSB_COLUMNS)
    rows = {r["round"]: r for r in doc["rows"]}
    assert len(rows) == 6
    assert rows["2026-08"]["gsb"] < -0.5 and rows["2026-08"]["p"] < 0.001
    r = rows["2026-05"]
    assert r["gsb"] == pytest.approx((r["good"] - r["bad"]) / (r["good"] + r["same"] + r["bad"]))
    status, table = run(["gsb", str(LABELS / "gsb.csv")])
    assert table.splitlines()[0].split() == list(GSB_COLUMNS)
    bad = tmp_path / "g.csv"
    bad.write_text("round,query,judgment\nr,q,G\nr,q2,maybe\n")
    status, _ = run(["gsb", str(bad)])
    assert status == 2 and capsys.readouterr().err.startswith("g.csv:3:")


def test_rater_noise_columns(sample_json):
    rows = {(r["round"], r["system"]): r for r in sample_json["rows"]}
    for r in rows.values():
        assert r["dcg_ci_raters_low"] < r["dcg"] < r["dcg_ci_raters_high"]
        assert r["mdc"] > 0
    # chen's guessing in September widens the interval over raters beyond the band
    sep = rows[("2026-09", "control")]
    assert (sep["dcg_ci_raters_high"] - sep["dcg_ci_raters_low"]
            > 1.1 * (sep["dcg_ci_high"] - sep["dcg_ci_low"]))
    assert any(n.startswith("mdc: minimum detectable change") for n in sample_json["notes"])


JUDGE = [*SAMPLE, str(LABELS / "judge_llm.csv"), "--judge", "llm", "--resamples", "200"]


def test_judge_json_and_the_people_numbers_unchanged(sample_json):
    status, text = run(["labels", *JUDGE, "--format", "json", "--anchors",
                        str(LABELS / "anchors.csv"), "--gsb", str(LABELS / "gsb.csv"),
                        "--gsb-systems", "control,treatment"])
    assert status == 0
    doc = json.loads(text)
    assert [r["dcg"] for r in doc["rows"]] == [r["dcg"] for r in sample_json["rows"]]
    assert [r["alpha"] for r in doc["rows"]] == [r["alpha"] for r in sample_json["rows"]]
    judge = doc["judge"]
    assert judge["judge"] == "llm" and judge["people"] == ["ann", "bo", "chen"]
    favours = {(r["round"], r["system"]): r for r in judge["favours"]}
    assert favours[("all", "treatment")]["favours"] is True
    assert {r["round"] for r in judge["gsb"]} == {f"2026-{m:02d}" for m in range(5, 11)}
    assert judge["disagreements_total"] > len(judge["disagreements"]) == 100
    assert doc["anchors"]["drifted"] == [["2026-06", "2026-07"], ["2026-07", "2026-08"]]
    assert doc["notes"].index(next(n for n in doc["notes"] if n.startswith("Anchor items"))) \
        < doc["notes"].index(next(n for n in doc["notes"] if "a significant drop" in n))


def test_judge_text_section():
    status, text = run(["labels", *JUDGE])
    assert status == 0
    assert "## Model judge 'llm' against the people (ann, bo, chen)" in text
    assert "it favours treatment" in text
    assert "### Agreement per round" in text and "### Disagreements" in text
    assert "left out of every column" in text
    status, csv_text = run(["labels", *JUDGE, "--format", "csv"])
    assert "Model judge" not in csv_text and len(csv_text.splitlines()) == 13


def test_judge_errors_exit_2(capsys):
    status, _ = run(["labels", SAMPLE[0], "--judge", "gpt"])
    assert status == 2 and "--judge 'gpt' is not a rater" in capsys.readouterr().err
    status, _ = run([*(["labels"] + JUDGE), "--gsb", str(LABELS / "gsb.csv")])
    assert status == 2 and "--gsb-systems" in capsys.readouterr().err


def test_a_gbk_file_from_excel_gives_the_utf8_numbers_and_says_how_it_was_read(
        tmp_path, capsys) -> None:
    """A labeling CSV saved by Excel on Chinese Windows (GBK, CRLF): the same rows as the
    UTF-8 file, and stderr names the encoding read (UTF-8 says nothing)."""
    rows = ["round,query,doc,position,label,rater"]
    rows += [f"{m},{q},d{p},{p},{(p + i) % 4},{r}" for m in ("2026-05", "2026-06")
             for i, q in enumerate(("手机壳", "蓝牙耳机", "运动鞋")) for p in range(1, 6)
             for r in ("张伟", "李娜")]
    text = "\r\n".join(rows) + "\r\n"
    (tmp_path / "gbk.csv").write_bytes(text.encode("gbk"))
    (tmp_path / "utf8.csv").write_bytes(text.encode("utf-8"))
    capsys.readouterr()
    status, gbk = run(["labels", str(tmp_path / "gbk.csv"), "--format", "csv"])
    gbk_err = capsys.readouterr().err
    assert status == 0
    status, utf8 = run(["labels", str(tmp_path / "utf8.csv"), "--format", "csv"])
    assert status == 0 and capsys.readouterr().err == ""
    assert gbk == utf8
    assert gbk_err.startswith("warning: gbk.csv: read as GB18030")
