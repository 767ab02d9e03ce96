"""ireval_core.labels.gsb: reading side-by-side judgments (real files, every format and every
error), GSB with its interval and sign test against hand-computed values and scipy, and
the interval's coverage in simulation."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from ireval_core.errors import FormatError
from ireval_core.labels.gsb import (
    GSB_COLUMNS,
    GSB_DEFINITION,
    GsbJudgments,
    gsb_by_rater,
    gsb_by_round,
    gsb_from_counts,
    read_gsb,
)

MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def frame(judgments: list[str], round_: str = "r1") -> GsbJudgments:
    return GsbJudgments.from_frame(pd.DataFrame({
        "round": round_, "query": [f"q{i}" for i in range(len(judgments))],
        "judgment": judgments}))


# ----------------------------------------------------------------------------- numbers


def test_gsb_hand_computed() -> None:
    # G = 30, S = 50, B = 20, n = 100: GSB = 0.1
    # Agresti-Min: n' = 102, p_G' = 30.5/102, p_B' = 20.5/102, g' = 10/102
    # var = (51/102 - (10/102)^2) / 102, interval g' -/+ 1.959964 sqrt(var)
    row = gsb_from_counts(30, 50, 20).iloc[0]
    g2 = 10 / 102
    half = stats.norm.ppf(0.975) * np.sqrt((51 / 102 - g2 ** 2) / 102)
    assert row["gsb"] == pytest.approx(0.1)
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((g2 - half, g2 + half))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((-0.03786, 0.23394), abs=1e-5)
    # sign test, ties dropped: 30 G against 20 B
    assert row["p"] == pytest.approx(stats.binomtest(30, 50, 0.5).pvalue)
    assert row["p"] == pytest.approx(0.2026, abs=1e-4)


@pytest.mark.parametrize("g, b", [(0, 0), (1, 0), (0, 3), (5, 5), (7, 2), (12, 30), (100, 61),
                                  (1, 40)])
def test_sign_test_matches_scipy_binomtest(g: int, b: int) -> None:
    p = gsb_from_counts(g, 4, b)["p"].iloc[0]
    expected = 1.0 if g + b == 0 else stats.binomtest(g, g + b, 0.5).pvalue
    assert p == pytest.approx(expected, rel=1e-10)


def test_interval_edges() -> None:
    t = gsb_from_counts([10, 0, 0, 3], [0, 10, 0, 0], [0, 0, 10, 3], confidence_level=0.9)
    # all G: GSB = 1, the interval stays inside [-1, 1] and does not collapse to a point
    assert t["gsb"].tolist() == [1.0, 0.0, -1.0, 0.0]
    assert t["ci_high"].iloc[0] == 1.0 and 0.5 < t["ci_low"].iloc[0] < 1.0
    assert t["ci_low"].iloc[2] == -1.0 and -1.0 < t["ci_high"].iloc[2] < -0.5
    # all S: centred on 0, narrow; p = 1 (no G and no B)
    assert t["ci_low"].iloc[1] == pytest.approx(-t["ci_high"].iloc[1])
    assert t["ci_high"].iloc[1] < 0.2 and t["p"].iloc[1] == 1.0
    # a lower level gives a narrower interval
    wide = gsb_from_counts(3, 0, 3, confidence_level=0.99).iloc[0]
    assert wide["ci_high"] - wide["ci_low"] > t["ci_high"].iloc[3] - t["ci_low"].iloc[3]
    empty = gsb_from_counts(0, 0, 0).iloc[0]
    assert np.isnan(empty["gsb"]) and np.isnan(empty["ci_low"]) and empty["p"] == 1.0


@pytest.mark.parametrize("n, probs", [(50, (0.40, 0.35, 0.25)), (20, (0.60, 0.30, 0.10))])
def test_interval_coverage_in_simulation(n: int, probs: tuple[float, float, float]) -> None:
    """2,000 simulated rounds: the 95% interval covers the true GSB 93-97% of the time."""
    rng = np.random.default_rng(2024)
    rounds = 2000
    codes = rng.choice(3, size=(rounds, n), p=probs)
    judgments = GsbJudgments.from_frame(pd.DataFrame({
        "round": np.repeat([f"sim{i:04d}" for i in range(rounds)], n),
        "query": np.tile([f"q{i}" for i in range(n)], rounds),
        "judgment": np.array(["G", "S", "B"])[codes.ravel()],
    }))
    table = gsb_by_round(judgments)
    assert len(table) == rounds and (table[["good", "same", "bad"]].sum(axis=1) == n).all()
    truth = probs[0] - probs[2]
    covered = ((table["ci_low"] <= truth) & (truth <= table["ci_high"])).mean()
    assert 0.93 <= covered <= 0.97, covered


@pytest.mark.parametrize("n", [20, 50, 150])
@pytest.mark.parametrize("probs", [(0.40, 0.35, 0.25), (0.60, 0.30, 0.10),
                                   (0.10, 0.85, 0.05), (0.33, 0.34, 0.33)])
@pytest.mark.parametrize("level", [0.9, 0.95])
def test_interval_exact_coverage(n: int, probs: tuple[float, float, float],
                                 level: float) -> None:
    """Coverage without simulation noise: every (G, S, B) of n judgments, weighted by its
    multinomial probability. Never more than 1.5 points below the level; above it by at
    most 1.5 points from 50 judgments on (at 20 judgments with rare G and B, about three
    per round, the interval is conservative: 98% for 95%)."""
    g, s = (a.ravel() for a in np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij"))
    g, s = g[g + s <= n], s[g + s <= n]
    b = n - g - s
    prob = stats.multinomial.pmf(np.stack([g, s, b], axis=1), n, probs)
    t = gsb_from_counts(g, s, b, confidence_level=level)
    truth = probs[0] - probs[2]
    covered = float(prob[((t["ci_low"] <= truth) & (truth <= t["ci_high"])).to_numpy()].sum())
    assert level - 0.015 <= covered <= level + (0.015 if n >= 50 else 0.04), covered


def test_by_round_in_time_order_with_definition() -> None:
    f = pd.DataFrame({"round": ["2026-10"] * 2 + ["2026-9"] * 3,
                      "query": ["a", "b", "a", "b", "c"],
                      "judgment": ["G", "G", "B", "S", "G"]})
    t = gsb_by_round(GsbJudgments.from_frame(f))
    assert tuple(t.columns) == GSB_COLUMNS
    assert t["round"].tolist() == ["2026-9", "2026-10"]
    assert t[["good", "same", "bad"]].values.tolist() == [[1, 1, 1], [2, 0, 0]]
    assert t["gsb"].tolist() == pytest.approx([0.0, 1.0])
    assert t.attrs["definition"] == GSB_DEFINITION
    assert "(G - B) / (G + S + B)" in GSB_DEFINITION and "Agresti-Min" in GSB_DEFINITION


def test_by_rater_splits_what_by_round_pools() -> None:
    f = pd.DataFrame({"round": ["r1"] * 5 + ["r2"] * 2,
                      "query": ["a", "a", "b", "b", "c", "a", "a"],
                      "rater": ["ann", "bob", "ann", "bob", "ann", "bob", "cid"],
                      "judgment": ["G", "S", "G", "B", "S", "B", "B"]})
    j = GsbJudgments.from_frame(f)
    by_rater = gsb_by_rater(j)
    assert tuple(by_rater.columns) == ("round", "rater") + GSB_COLUMNS[1:]
    assert by_rater[["round", "rater", "good", "same", "bad"]].values.tolist() == [
        ["r1", "ann", 2, 1, 0], ["r1", "bob", 0, 1, 1], ["r2", "bob", 0, 0, 1],
        ["r2", "cid", 0, 0, 1]]
    pooled = gsb_by_round(j).set_index("round")
    assert pooled.loc["r1", ["good", "same", "bad"]].tolist() == [2, 2, 1]
    assert pooled.loc["r1", "gsb"] == pytest.approx(1 / 5)
    assert by_rater["gsb"].tolist() == pytest.approx([2 / 3, -0.5, -1.0, -1.0])


# ----------------------------------------------------------------------------- reading


def test_every_judgment_spelling(tmp_path: Path) -> None:
    words = ["G", "g", " Good ", "BETTER", ">", "+1", "1", "1.0",
             "S", "same", "=", "0", "0.0",
             "B", "bad", "Worse", "<", "-1", "-1.0"]
    lines = "\n".join(f"2026-05,q{i},{w}" for i, w in enumerate(words))
    j = read_gsb([write(tmp_path / "all.csv", "round,query,judgment\n" + lines + "\n")])
    assert j.judgment.tolist() == ["G"] * 8 + ["S"] * 5 + ["B"] * 6
    assert j.has_rater is False and set(j.rater.tolist()) == {""}


def test_numeric_preference_column_in_parquet(tmp_path: Path) -> None:
    path = tmp_path / "pref.parquet"
    pd.DataFrame({"month": ["2026-05"] * 3, "qid": ["a", "b", "c"],
                  "preference": [1, 0, -1]}).to_parquet(path)
    j = read_gsb([path])
    assert j.judgment.tolist() == ["G", "S", "B"] and j.sources == ("pref.parquet",)


def test_tsv_xlsx_gzip_and_many_files_accumulate(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "June"
    sheet.append(["Round", "Query", "GSB", "Rater"])
    sheet.append(["2026-06", "q1", "good", "ann"])
    sheet.append([None, None, None, None])  # a blank row is skipped
    sheet.append(["2026-06", "q1", "same", "bob"])
    book.save(tmp_path / "june.xlsx")
    tsv = write(tmp_path / "may.tsv", "round\tquery\tjudgment\trater\n2026-05\tq1\tB\tann\n")
    gz = tmp_path / "april.csv.gz"
    gz.write_bytes(gzip.compress(b"round,query,judgment\n2026-04,q9,>\n"))
    upload = ("march.csv", b"round,query,judgment\n2026-03,q8,<\n")
    j = read_gsb([tmp_path / "june.xlsx", tsv, gz, upload])
    assert j.sources == ("june.xlsx", "may.tsv", "april.csv.gz", "march.csv")
    assert j.rounds == ("2026-03", "2026-04", "2026-05", "2026-06")
    assert j.table.values.tolist() == [
        ["2026-06", "q1", "G", "ann"], ["2026-06", "q1", "S", "bob"],
        ["2026-05", "q1", "B", "ann"], ["2026-04", "q9", "G", ""], ["2026-03", "q8", "B", ""]]
    assert j.has_rater and j.raters == ("", "ann", "bob")
    assert gsb_by_round(j)["gsb"].tolist() == [-1.0, 1.0, -1.0, 0.5]


def test_single_source_and_results_are_read_only(tmp_path: Path) -> None:
    j = read_gsb(write(tmp_path / "one.csv", "round,query,judgment\nr,q,G\n"))
    assert len(j) == 1
    with pytest.raises(ValueError):
        j.judgment[0] = "B"
    fresh = j.table
    fresh.loc[0, "judgment"] = "B"
    assert j.judgment[0] == "G"


def test_frame_with_mixed_types_and_missing_judgments() -> None:
    f = pd.DataFrame({"round": [202605, 202605, 202605], "query": [1, 2, 3],
                      "judgment": [1, "worse", None]}, dtype=object)
    j = GsbJudgments.from_frame(f, name="upload")
    assert j.table.values.tolist() == [["202605", "1", "G", ""], ["202605", "2", "B", ""]]
    assert j.warnings[0].code == "gsb-empty-judgment" and "upload, row 3" in j.warnings[0].message


def test_empty_judgment_is_left_out_with_a_warning(tmp_path: Path) -> None:
    path = write(tmp_path / "gaps.csv", "round,query,judgment\nr,q1,G\nr,q2,\nr,q3, \n")
    j = read_gsb([path])
    assert j.judgment.tolist() == ["G"] and j.query.tolist() == ["q1"]
    (w,) = j.warnings
    assert w.code == "gsb-empty-judgment" and w.count == 2
    assert "gaps.csv:3" in w.message


# ----------------------------------------------------------------------------- bad input


def read_error(*paths: Path) -> str:
    with pytest.raises(FormatError) as info:
        read_gsb(list(paths))
    return str(info.value)


def test_unknown_judgment_names_it_and_its_first_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "bad.csv", "round,query,judgment\nr,q1,G\nr,q2,maybe\nr,q3,S\n"
                                       "r,q4,Maybe\nr,q5,2\n")
    msg = read_error(path)
    assert msg.startswith("bad.csv:3: unknown judgment 'maybe' (at lines 3, 5); expected "
                          "G/S/B, good/same/bad, better/same/worse, >/=/< or +1/0/-1"), msg
    numeric = write(tmp_path / "two.csv", "round,query,judgment\nr,q1,2\n")
    assert read_error(numeric).startswith("two.csv:2: unknown judgment '2'")


def test_unknown_judgment_in_excel_names_sheet_and_row(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "GSB"
    for row in (["round", "query", "judgment"], ["r", "q1", "G"], ["r", "q2", "meh"]):
        sheet.append(row)
    book.save(tmp_path / "book.xlsx")
    msg = read_error(tmp_path / "book.xlsx")
    assert msg.startswith("book.xlsx: sheet 'GSB', row 3: unknown judgment 'meh'"), msg


def test_missing_column_names_the_header(tmp_path: Path) -> None:
    path = write(tmp_path / "nocol.csv", "round,query,score\nr,q1,0.5\n")
    msg = read_error(path)
    assert msg.startswith("nocol.csv:1: missing column(s) in the GSB header "
                          "['round', 'query', 'score']; expected judgment: one of judgment"), msg


def test_duplicate_judgment_names_both_lines(tmp_path: Path) -> None:
    path = write(tmp_path / "dup.csv", "round,query,judgment,rater\nr,q1,G,ann\nr,q1,S,bob\n"
                                       "r,q2,G,ann\nr,q1,B,ann\n")
    assert read_error(path) == ("dup.csv:5: duplicate judgment for rater 'ann', query 'q1' "
                                "of round 'r' (first at line 2)")
    norater = write(tmp_path / "norater.csv", "round,query,judgment\nr,q1,G\nr,q1,B\n")
    assert read_error(norater) == ("norater.csv:3: duplicate judgment for query 'q1' of round "
                                   "'r' (first at line 2); with several raters, add a rater "
                                   "column")


def test_duplicate_across_files_names_the_other_file(tmp_path: Path) -> None:
    a = write(tmp_path / "a.csv", "round,query,judgment\nr,q1,G\n")
    b = write(tmp_path / "b.csv", "round,query,judgment\nr,q0,S\nr,q1,G\n")
    assert read_error(a, b) == ("b.csv:3: duplicate judgment for query 'q1' of round 'r' "
                                "(first at a.csv:2); with several raters, add a rater column")


def test_empty_round_or_query(tmp_path: Path) -> None:
    path = write(tmp_path / "noround.csv", "round,query,judgment\nr,q1,G\n,q2,S\n")
    assert read_error(path) == ("noround.csv:3: empty round; every judgment needs a round "
                                "and a query")
    path = write(tmp_path / "noquery.tsv", "round\tquery\tjudgment\nr\t \tS\n")
    assert read_error(path).startswith("noquery.tsv:2: empty query")


def test_empty_file_and_ragged_line(tmp_path: Path) -> None:
    assert read_error(write(tmp_path / "empty.csv", "\n")).startswith("empty.csv: file is empty")
    ragged = write(tmp_path / "ragged.csv", "round,query,judgment\nr,q1,G\nr,q2,S,extra\n")
    assert read_error(ragged).startswith("ragged.csv:3: expected 3 fields")


@pytest.mark.parametrize("call, param, function, error", [
    (lambda: read_gsb([]), "sources", "read_gsb", ValueError),
    (lambda: gsb_by_round(frame(["G"]), confidence_level=1.0), "confidence_level",
     "gsb_by_round", ValueError),
    (lambda: gsb_by_round(frame(["G"]), confidence_level="high"), "confidence_level",
     "gsb_by_round", ValueError),
    (lambda: gsb_by_round(pd.DataFrame()), "judgments", "gsb_by_round", TypeError),
    (lambda: gsb_by_rater(frame(["G"]), confidence_level=0), "confidence_level",
     "gsb_by_rater", ValueError),
    (lambda: gsb_by_rater([]), "judgments", "gsb_by_rater", TypeError),
    (lambda: gsb_from_counts(1, 1, 1, confidence_level=None), "confidence_level",
     "gsb_from_counts", TypeError),
    (lambda: gsb_from_counts(-1, 1, 1), "good", "gsb_from_counts", ValueError),
    (lambda: gsb_from_counts(1, 0.5, 1), "same", "gsb_from_counts", ValueError),
    (lambda: gsb_from_counts([1, 2], [1, 2], [1, 2, 3]), "bad", "gsb_from_counts",
     ValueError),
    (lambda: GsbJudgments.from_frame({"round": ["r"]}), "frame", "GsbJudgments.from_frame",
     TypeError),
])
def test_invalid_parameters_use_the_common_message(call, param, function, error) -> None:
    with pytest.raises(error) as info:
        call()
    assert type(info.value) is error
    assert re.fullmatch(MESSAGE.format(param=param, function=re.escape(function)),
                        str(info.value)), str(info.value)
