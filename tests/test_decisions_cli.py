"""``compare --format json`` carries the decision evidence (issue 22, item 6), equal to
the library's numbers. The commands run in the test's process (:func:`_cli.run`; the
subprocess itself is tested in ``tests/test_cli.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import _cli
import numpy as np
import pytest

from ireval_core import read_qrels, read_runs
from ireval_core.compare import aligned_scores
from ireval_core.decisions import (
    judgment_debt,
    noninferiority_test,
    rank_confidence,
    risk_profile,
)
from ireval_core.evaluate import evaluate

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
RUNS = [SAMPLE / "run_bm25.txt", SAMPLE / "run_neural.txt", SAMPLE / "run_narrow.txt"]


cli = _cli.run


@pytest.fixture(scope="module")
def data():
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in RUNS for r in read_runs(p)]
    return qrels, runs


@pytest.fixture(scope="module")
def records():
    out = cli("compare", SAMPLE / "qrels.txt", *RUNS, "-m", "nDCG@10", "-m", "P@5",
              "--tests", "t,sign", "--margin", "1%", "--rank-confidence", "--resamples",
              "2000", "--seed", "3", "--risk-alpha", "2", "--loss-delta", "0.05")
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_every_record_carries_holes_risk_and_noninferiority(records):
    assert len(records) == 2 * 3 * 2  # measures x pairs x tests
    for r in records:
        assert {"holes", "risk", "noninferiority", "rank_confidence"} <= set(r)
        assert r["holes"]["verdict"] in ("holds", "depends")
        assert set(r["holes"]["holes"]) == {r["system_a"], r["system_b"], "shared", "total"}
        assert set(r["holes"]["bounds"]) == {r["system_a"], r["system_b"]}
        assert {"urisk", "trisk", "p"} <= set(r["risk"])
        assert {"p", "interval", "verdict"} <= set(r["noninferiority"])
    # the same block for both tests of a (pair, measure)
    by_key = {}
    for r in records:
        key = (r["system_a"], r["system_b"], r["measure"])
        by_key.setdefault(key, []).append(r)
    for rows in by_key.values():
        assert rows[0]["holes"] == rows[1]["holes"] and rows[0]["risk"] == rows[1]["risk"]


def test_the_numbers_are_the_library_s(records, data):
    qrels, runs = data
    res = evaluate(qrels, runs, ["nDCG@10", "P@5"])
    # compare pairs the runs on the queries all three share, and so does judgment_debt
    debt = {(h.system_a, h.system_b, h.measure): h for h in judgment_debt(
        qrels, runs, ["nDCG@10", "P@5"], n_resamples=2000, rng=3)}
    for r in records[::2]:
        a, b, m = r["system_a"], r["system_b"], r["measure"]
        lib = debt[(a, b, m)]
        assert r["holes"]["queries"] == lib.n_queries == r["n"]
        assert r["holes"] == json.loads(json.dumps(lib.as_dict()))
        common, values = aligned_scores(res, m, [x.name for x in runs])
        risk = risk_profile(values[a], values[b], query_ids=list(common), alpha=2.0,
                            delta=0.05)
        assert r["risk"]["urisk"] == pytest.approx(risk.urisk, abs=1e-15)
        assert r["risk"]["trisk"] == pytest.approx(risk.trisk, rel=1e-12)
        assert r["risk"]["p"] == pytest.approx(risk.pvalue, rel=1e-12)
        assert r["risk"]["losses"] == risk.n_losses
        assert [w[0] for w in r["risk"]["worst"]] == [w[0] for w in risk.worst]
        ni = noninferiority_test(values[a], values[b], margin="1%")
        assert r["noninferiority"]["p"] == pytest.approx(ni.pvalue, rel=1e-12, abs=1e-300)
        assert r["noninferiority"]["interval"] == pytest.approx([ni.ci_low, ni.ci_high],
                                                                rel=1e-12)
        boot = noninferiority_test(values[a], values[b], margin="1%", method="bootstrap",
                                   n_resamples=2000, rng=3)
        assert r["noninferiority"]["bootstrap"]["p"] == pytest.approx(boot.pvalue, abs=1e-12)
        rc = rank_confidence({s: values[s] for s in values}, n_resamples=2000, rng=3)
        got = r["rank_confidence"]["systems"]
        for s in values:
            np.testing.assert_allclose(got[s]["rank_probabilities"],
                                       rc.probabilities[rc.systems.index(s)], atol=1e-12)
        assert list(got) == list(rc.order)
        assert set(r["rank_confidence"]) >= {"anova", "mixed_model", "sentences"}


def test_plain_compare_has_holes_and_risk_only_and_csv_is_unchanged():
    out = cli("compare", SAMPLE / "qrels.txt", *RUNS[:2], "-m", "AP", "--tests", "t")
    assert out.returncode == 0, out.stderr
    rec = json.loads(out.stdout)[0]
    assert "holes" in rec and "risk" in rec
    assert "noninferiority" not in rec and "rank_confidence" not in rec
    csv = cli("compare", SAMPLE / "qrels.txt", *RUNS[:2], "-m", "AP", "--tests", "t",
              "--format", "csv")
    assert csv.stdout.splitlines()[0].split(",")[-1] == "n"


@pytest.mark.parametrize(("extra", "message"), [
    (["--margin", "-1"], "The 'margin' parameter of decision_evidence must be"),
    (["--margin", "abc%"], "The 'margin' parameter of decision_evidence must be"),
    (["--alpha", "0.7", "--margin", "0.01"], "The 'alpha' parameter"),
    (["--risk-alpha", "-1"], "The 'risk_alpha' parameter"),
    (["--format", "csv", "--margin", "0.01"], "go with --format json"),
])
def test_bad_decision_options_exit_2_with_one_line(extra, message):
    out = cli("compare", SAMPLE / "qrels.txt", *RUNS[:2], "-m", "AP", "--tests", "t", *extra)
    assert out.returncode == 2
    assert message in out.stderr and len(out.stderr.strip().splitlines()) == 1


MESSAGE = r"^The '{param}' parameter of decision_evidence must be .+\. Got .+ instead\.$"


@pytest.mark.parametrize(("kwargs", "param", "error"), [
    ({"margin": "5"}, "margin", ValueError), ({"alpha": 0}, "alpha", ValueError),
    ({"margin": 0.1, "alpha": 0.5}, "alpha", ValueError),
    ({"risk_alpha": -1}, "risk_alpha", ValueError),
    ({"loss_delta": float("nan")}, "loss_delta", ValueError),
    ({"n_worst": -1}, "n_worst", ValueError),
    ({"rank_confidence": "yes"}, "rank_confidence", TypeError),
    ({"baseline": "nope"}, "baseline", ValueError), ({"test": "z"}, "test", ValueError),
    ({"n_resamples": 0}, "n_resamples", ValueError), ({"rng": 1.5}, "rng", TypeError),
])
def test_decision_evidence_parameters(data, kwargs, param, error):
    import re

    from ireval_core.decisions import decision_evidence

    qrels, runs = data
    with pytest.raises(error) as info:
        decision_evidence(qrels, runs[:2], "P@5", **kwargs)
    assert re.fullmatch(MESSAGE.format(param=param), str(info.value)), str(info.value)


# ------------------------------------------------------ report and meeting-report


FLAGS = ["-m", "nDCG@10", "-m", "P@5", "--margin", "1%", "--rank-confidence", "--resamples",
         "2000", "--seed", "3", "--risk-alpha", "2", "--loss-delta", "0.05"]


def _section(data):
    from ireval_core.decisions import decision_evidence
    from ireval_core.report import EvidenceSection

    qrels, runs = data
    return EvidenceSection(decision_evidence(
        qrels, runs, ["nDCG@10", "P@5"], margin="1%", test="t", risk_alpha=2.0,
        loss_delta=0.05, rank_confidence=True, n_resamples=2000, rng=3), "1%", 2000, 3)


def _row_of(record: dict) -> list[str]:
    """The evidence table's row of a ``compare --format json`` record, from its JSON."""
    from ireval_core.formats import p_value

    a, b, h, r, ni = (record["system_a"], record["system_b"], record["holes"],
                      record["risk"], record["noninferiority"])
    return [f"{b} vs {a}", f"{h['holes'][a]:,}", f"{h['holes'][b]:,}",
            "–".join(f"{v:.4f}" for v in h["bounds"][a]),
            "–".join(f"{v:.4f}" for v in h["bounds"][b]), h["verdict"],
            f"{r['urisk']:+.4f}", f"{r['trisk']:+.2f}", p_value(r["p"]),
            p_value(ni["p"]), f"[{ni['interval'][0]:+.4f}, {ni['interval'][1]:+.4f}]",
            ni["verdict"]]


def test_report_carries_the_evidence_of_compare_json(records, data):
    from ireval_core.escape import markdown_text

    out = cli("report", SAMPLE / "qrels.txt", *RUNS, *FLAGS, "--test", "t")
    assert out.returncode == 0, out.stderr
    section = _section(data)
    table, _, evidence = out.stdout.partition("\n## Decision evidence")
    assert "## Decision evidence" + evidence == section.to_markdown()  # the core's text
    t_records = [r for r in records if r["test"] == "t"]
    assert len(t_records) == 6
    for r in t_records:  # every number of the JSON, in its row of the measure's table
        row = "| " + " | ".join([markdown_text(f"{r['system_b']} vs {r['system_a']}"),
                                  *_row_of(r)[1:]]) + " |"
        block = evidence.split(f"### {r['measure']}", 1)[1].split("###", 1)[0]
        assert row in block.splitlines(), row
        for sentence in (r["holes"]["text"], r["noninferiority"]["text"],
                         *r["rank_confidence"]["sentences"]):
            assert markdown_text(sentence) in block, sentence
    assert section.table("P@5") == [_row_of(r) for r in t_records if r["measure"] == "P@5"]


@pytest.mark.parametrize("fmt", ["latex", "html"])
def test_report_evidence_in_latex_and_html(fmt, data):
    out = cli("report", SAMPLE / "qrels.txt", *RUNS, *FLAGS, "--format", fmt)
    assert out.returncode == 0, out.stderr
    section = _section(data)
    if fmt == "latex":
        assert out.stdout.endswith(section.to_latex())
        assert r"\item \textbf{Judgment debt}" in out.stdout
    else:
        assert section.html() in out.stdout and out.stdout.endswith("</body></html>\n")


def test_no_evidence_refuses_the_evidence_options():
    out = cli("report", SAMPLE / "qrels.txt", *RUNS[:2], "-m", "AP", "--no-evidence",
              "--margin", "0.01")
    assert out.returncode == 2 and "go without --no-evidence" in out.stderr


def test_meeting_report_and_its_memo_carry_the_same_evidence(records, data, tmp_path):
    from ireval_core.escape import html_text
    from ireval_core.meeting import meeting_report

    html, memo = tmp_path / "r.html", tmp_path / "memo.md"
    notes = tmp_path / "notes.txt"
    notes.write_text("A note.\n\nDecision: *ship* neural_rerank\n", encoding="utf-8")
    out = cli("meeting-report", SAMPLE / "qrels.txt", *RUNS, *FLAGS, "--test", "t",
              "--notes", notes, "-o", html, "--memo", memo)
    assert out.returncode == 0, out.stderr
    assert f"wrote {memo}" in out.stdout
    qrels, runs = data
    report = meeting_report(qrels, runs, ["nDCG@10", "P@5"], test="t", margin="1%",
                            rank_confidence=True, risk_alpha=2.0, loss_delta=0.05,
                            n_resamples=2000, seed=3, charts=False)
    assert report.evidence is not None
    blocks = report.evidence.evidence.blocks()
    for r in records:  # the report's evidence is compare --format json's, block by block
        got = json.loads(json.dumps(blocks[(r["system_a"], r["system_b"], r["measure"])]))
        assert got == {k: r[k] for k in ("holes", "risk", "noninferiority",
                                         "rank_confidence")}
    page = html.read_text(encoding="utf-8")
    assert report.evidence.html("h2") in page
    assert page.index("<h3>Verdicts</h3>") < page.index("<h2>Decision evidence</h2>")
    for r in records:
        assert html_text(r["holes"]["text"]) in page
    text = memo.read_text(encoding="utf-8")
    assert text.endswith(report.evidence.to_markdown())
    assert "## Other decisions" in text and r"- \*ship\* neural_rerank (notes.txt)" in text


# ------------------------------------------------------------------ --baseline


BASELINE = "bm25"


@pytest.fixture(scope="module")
def baseline_records():
    out = cli("compare", SAMPLE / "qrels.txt", *RUNS, *FLAGS, "--tests", "t", "--baseline",
              BASELINE)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_report_baseline_is_compare_baseline_number_for_number(baseline_records):
    from ireval_core.escape import markdown_text

    records = baseline_records
    assert len(records) == 2 * 2  # measures x (each other run against the baseline)
    assert {r["system_a"] for r in records} == {BASELINE}
    out = cli("report", SAMPLE / "qrels.txt", *RUNS, *FLAGS, "--test", "t", "--baseline",
              BASELINE)
    assert out.returncode == 0, out.stderr
    table, _, evidence = out.stdout.partition("\n## Decision evidence")
    # the significance table: compare's means and its corrected p-values, cell by cell
    names = [r.name for p in RUNS for r in read_runs(p)]
    letter = dict(zip(names, "abc", strict=True))
    means: dict[tuple[str, str], float] = {}
    beats: dict[tuple[str, str], set[str]] = {(s, m): set() for s in names
                                              for m in ("nDCG@10", "P@5")}
    for r in records:
        means[(r["system_a"], r["measure"])] = r["mean_a"]
        means[(r["system_b"], r["measure"])] = r["mean_b"]
        if r["pvalue_corrected"] < 0.05 and r["mean_diff"] != 0:
            won, lost = ((r["system_b"], r["system_a"]) if r["mean_diff"] > 0
                         else (r["system_a"], r["system_b"]))
            beats[(won, r["measure"])].add(letter[lost])
    for s in names:
        cells = []
        for m in ("nDCG@10", "P@5"):
            text = f"{means[(s, m)]:.4f}"
            if means[(s, m)] == max(means[(x, m)] for x in names):
                text = f"**{text}**"
            marks = "".join(sorted(beats[(s, m)]))
            cells.append(text + (f"<sup>{marks}</sup>" if marks else ""))
        row = f"| ({letter[s]}) {s} | " + " | ".join(cells) + " |"
        assert row in table.splitlines(), (row, table)
    # neural_rerank beats narrow_recall, but that pair is not compared against a baseline
    assert beats[("neural_rerank", "nDCG@10")] == {"a"} and beats[("bm25", "nDCG@10")] == {"c"}
    assert f"with the baseline (a) {BASELINE}, the only ones made" in table
    # the decision evidence: every number of the JSON in its row, and no other pair
    assert f"Each run B against the baseline A = {BASELINE} only" in evidence
    for r in records:
        row = "| " + " | ".join([markdown_text(f"{r['system_b']} vs {r['system_a']}"),
                                  *_row_of(r)[1:]]) + " |"
        block = evidence.split(f"### {r['measure']}", 1)[1].split("###", 1)[0]
        assert row in block.splitlines(), row
        assert sum(line.startswith("| ") and " vs " in line and not line.startswith("| B vs")
                   for line in block.splitlines()) == 2
        for sentence in (r["holes"]["text"], r["noninferiority"]["text"],
                         *r["rank_confidence"]["sentences"]):
            assert markdown_text(sentence) in block, sentence


def test_meeting_report_baseline_is_compare_baseline(baseline_records, data, tmp_path):
    from ireval_core.escape import html_text
    from ireval_core.meeting import meeting_report

    html = tmp_path / "r.html"
    out = cli("meeting-report", SAMPLE / "qrels.txt", *RUNS, *FLAGS, "--test", "t",
              "--baseline", BASELINE, "-o", html)
    assert out.returncode == 0, out.stderr
    qrels, runs = data
    report = meeting_report(qrels, runs, ["nDCG@10", "P@5"], test="t", margin="1%",
                            rank_confidence=True, risk_alpha=2.0, loss_delta=0.05,
                            n_resamples=2000, seed=3, charts=False, baseline=BASELINE)
    assert report.evidence is not None
    blocks = report.evidence.evidence.blocks()
    assert len(blocks) == len(baseline_records)
    for r in baseline_records:
        got = json.loads(json.dumps(blocks[(r["system_a"], r["system_b"], r["measure"])]))
        assert got == {k: r[k] for k in ("holes", "risk", "noninferiority",
                                         "rank_confidence")}
    page = html.read_text(encoding="utf-8")
    assert report.evidence.html("h2") in page
    assert html_text("narrow_recall vs neural_rerank") not in page  # not a baseline pair


@pytest.mark.parametrize("command", ["report", "meeting-report"])
def test_an_unknown_baseline_lists_the_runs(command, tmp_path):
    out = cli(command, SAMPLE / "qrels.txt", *RUNS, "-m", "AP", "--baseline", "bm52",
              *(["-o", tmp_path / "r.html"] if command == "meeting-report" else []))
    assert out.returncode == 2
    function = {"report": "significance_table", "meeting-report": "meeting_report"}[command]
    assert out.stderr.strip().splitlines() == [
        f"The 'baseline' parameter of {function} must be one of the runs (bm25, "
        "neural_rerank, narrow_recall). Got 'bm52' instead."]
