"""The meeting report: self-contained (no external URL), escaped, and the core's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from _cli import run as in_process

from ireval_core import EvalOptions, Qrels, Run, evaluate, read_qrels, read_runs
from ireval_core.compare import compare_evaluation, verdicts
from ireval_core.escape import html_text
from ireval_core.meeting import ReportNote, input_of, meeting_report
from ireval_core.report import significance_table

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
EXTERNAL = re.compile(r"https?://(?!www\.w3\.org/)")
HOSTILE = ['<script>alert(1)</script>', '"><img src=x onerror=alert(2)>',
           "![b](http://127.0.0.1:9/beacon.png)"]


def _hostile_data():
    queries = [f"q{i}" for i in range(6)] + ["</script><script>alert(3)</script>"]
    qrels = Qrels.from_dict({q: {"a": 1, "b": 0, "c": 2} for q in queries})
    runs = [Run.from_dict({q: {"a": 3.0 - i, "b": 2.0, "c": 1.0 + i * (j % 2)}
                           for j, q in enumerate(queries)}, name=name)
            for i, name in enumerate(HOSTILE)]
    return qrels, runs


def test_hostile_names_never_become_markup() -> None:
    qrels, runs = _hostile_data()
    note = ReportNote("<b>ship it</b> <img src=x onerror=alert(4)>", author="<i>ana</i>",
                      kind="decision")
    html = meeting_report(qrels, runs, ["P@1", "nDCG@10"], notes=[note], n_resamples=200,
                          inputs=[input_of("<evil>.txt", "qrels", b"x")]).html
    for raw in ("<script>alert", "<img src=x", "<b>ship", "<i>ana", "</script><script>",
                "<evil>"):
        assert raw not in html, raw
    # scripts: the inlined plotly.js and one per chart, nothing else
    assert html.count("<script") == 1 + html.count("Plotly.newPlot")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;b&gt;ship it&lt;/b&gt;" in html
    # a name that holds a URL stays text: nothing in the file makes a browser fetch it
    markup = re.sub(r"<script>.*?</script>", "", html, flags=re.DOTALL)
    assert markup.count("<script") == 0
    tags = re.findall(r"<[a-zA-Z][^>]*>", markup)
    assert not [t for t in tags if re.search(r"\b(src|href|action|on\w+)\s*=", t)]
    assert not re.search(r"url\(|@import", markup)


def test_no_external_url_and_offline_plotly() -> None:
    qrels, runs = _hostile_data()
    html = meeting_report(qrels, runs[:2], ["P@1"], n_resamples=200).html
    assert not EXTERNAL.search(html)
    assert "Plotly.newPlot" in html and "<script src" not in html and "<link" not in html


@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
def test_numbers_are_the_cores() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    options = EvalOptions(rel_level=2)
    report = meeting_report(qrels, runs, ["nDCG@10", "AP"], options=options,
                            n_resamples=500, charts=False)
    res = evaluate(qrels, runs, ["nDCG@10", "AP"], options=options)
    for s in res.systems:
        for m in ("nDCG@10", "AP"):
            assert report.table.mean.loc[s, m] == res.mean(s, m)
            assert f"{res.mean(s, m):.4f}" in report.html
    sig = significance_table(res, test="t", n_resamples=500)
    assert report.significance is not None
    for s in res.systems:
        for m in ("nDCG@10", "AP"):
            assert report.significance.cell(s, m) == sig.cell(s, m)
    said = verdicts(compare_evaluation(res, tests=("t",)), alpha=0.05)
    assert [v.text for v in report.verdicts] == [v.text for v in said]
    for v in said:
        assert html_text(v.text) in report.html
    assert "relevant: grade &gt;= 2" in report.html  # every option is written
    assert not report.recall_flags.empty
    assert "narrow_recall" in set(report.recall_flags["system"])


@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
def test_cli_writes_the_report_with_notes(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("Looked at q039 together.\n\nDecision: ship neural_rerank <now>.\n")
    out = tmp_path / "report.html"
    done = in_process("meeting-report", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
                      SAMPLE / "run_neural.txt", "-m", "AP", "--notes", notes, "-o", out,
                      "--resamples", "200")
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "Decision</b>: ship neural_rerank &lt;now&gt;." in html
    assert "Looked at q039 together." in html
    assert input_of("qrels.txt", "qrels", (SAMPLE / "qrels.txt").read_bytes()).sha256 in html
    assert not EXTERNAL.search(html)


@pytest.mark.skipif(not (SAMPLE / "labels" / "gsb.csv").exists(),
                    reason="labeling sample not generated")
def test_cli_adds_the_labeling_trend(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    done = in_process("meeting-report", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
                      "-m", "AP", "--resamples", "200", "-o", out, "--labels",
                      *sorted((SAMPLE / "labels").glob("labels_*.csv")))
    assert done.returncode == 0, done.stderr
    html = out.read_text()
    assert "<h2>Labeling trend</h2>" in html
    assert "3.9958" in html  # treatment's DCG@10 in the month recall broke
    assert "labels_2026-08.csv" in html  # the labeling files are listed with their SHA-256


@pytest.mark.skipif(not (SAMPLE / "labels" / "judge_llm.csv").exists(),
                    reason="labeling sample not generated")
def test_cli_labels_judge_puts_its_sentence_in_the_report_and_the_memo(tmp_path: Path) -> None:
    from ireval_core.cli import main
    from ireval_core.labels import read_judgments, trend
    from ireval_core.labels.ppi import ppi_report

    files = [*sorted((SAMPLE / "labels").glob("labels_*.csv")), SAMPLE / "labels" / "judge_llm.csv"]
    out, memo = tmp_path / "report.html", tmp_path / "memo.md"
    code = main(["meeting-report", str(SAMPLE / "qrels.txt"), str(SAMPLE / "run_bm25.txt"),
                 "-m", "AP", "--resamples", "200", "-o", str(out), "--memo",
                 str(memo), "--labels", *map(str, files), "--labels-judge", "llm"])
    assert code == 0
    judged = read_judgments(files)
    sentence = ppi_report(judged, "llm", k=10, n_resamples=200).memo
    html, md = out.read_text(), memo.read_text()
    assert f"<b>Model + people (PPI++)</b>: {html_text(sentence)}." in html
    assert "## Labeling: the model judge" in md and sentence in md.replace("\\", "")
    people = trend(judged.select(raters=["ann", "bo", "chen"]), k=10).table
    with_judge = trend(judged, k=10).table
    row = (people["dcg"] - with_judge["dcg"]).abs().idxmax()  # where leaving it out shows
    assert f"{people['dcg'][row]:.4f}" in html and f"{with_judge['dcg'][row]:.4f}" not in html
    assert main(["meeting-report", str(SAMPLE / "qrels.txt"), str(SAMPLE / "run_bm25.txt"),
                 "-o", str(out), "--labels", *map(str, files), "--labels-judge",
                 "gpt"]) == 2


@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
def test_decision_memo_numbers_are_the_cores() -> None:
    from ireval_core.compare import TEST_LABELS
    from ireval_core.decisions import decision_evidence, equivalence_test
    from ireval_core.meeting import DecisionSettings, decision_note

    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    names = tuple(r.name for r in runs)
    a, b, m = names[0], names[2], "nDCG@10"
    options = EvalOptions(rel_level=2)
    settings = DecisionSettings(names, "2%", 0.05, "t", 0.1, 5.0, 400, 3)
    text = decision_note("Ship it", ["old sentence"], settings, "http://host/compare?x=1")
    note = ReportNote(text, "ana", "2025-01-01 10:00 UTC", f"{a} vs {b} on {m}", "decision",
                      (a, b, m))
    plain = ReportNote("just a note", "bo")
    report = meeting_report(qrels, runs, ["AP"], options=options, notes=[plain, note],
                            n_resamples=400, charts=False)
    [memo] = report.decisions
    ev = decision_evidence(qrels, runs, [m], options=options, baseline=a, margin="2%",
                           alpha=0.05, test="t", risk_alpha=5.0, loss_delta=0.1,
                           rank_confidence=True, n_resamples=400, rng=3)
    pair, ranking = ev.pair(a, b, m), ev.measure(m)
    assert memo.evidence.as_dict() == pair.as_dict()
    assert memo.ranking is not None and memo.ranking.as_dict() == ranking.as_dict()
    res = evaluate(qrels, runs, [m], options=options)
    [record] = [r for r in compare_evaluation(res, [m], systems=list(names), baseline=a,
                                              tests=("t",), n_resamples=400, seed=3)
                if (r.system_a, r.system_b) == (a, b)]
    assert memo.comparison == record
    from ireval_core.compare import aligned_scores

    _, values = aligned_scores(res, m, list(names))
    eq = equivalence_test(values[a], values[b], margin="2%")
    assert memo.equivalence is not None and memo.equivalence.pvalue == eq.pvalue
    html = report.html
    for sentence in (pair.holes.text, pair.risk.sentence(a, b, m),
                     pair.noninferiority.sentence(a, b, m) if pair.noninferiority else "",
                     eq.sentence(a, b, m), *ranking.ranking.sentences(),  # type: ignore[union-attr]
                     f"{record.mean_diff:+.4f}", f"{record.ci_low:+.4f}",
                     TEST_LABELS["t"]):
        assert html_text(sentence) in html, sentence
    # the memo opens the report; the decision, who and the link are in it
    assert html.index("Decision: ") < html.index("<h2>Inputs</h2>")
    assert "Ship it" in html and "ana · 2025-01-01 10:00 UTC" in html
    assert "<code>http://host/compare?x=1</code>" in html
    assert "old sentence" not in memo.markdown()  # the evidence is recomputed


def test_decision_memo_escapes_html_and_markdown() -> None:
    from ireval_core.meeting import DecisionSettings, decision_note

    qrels, runs = _hostile_data()
    a, b = runs[0].name, runs[1].name
    text = decision_note("<b>ship</b> [x](http://e.vil) *now*", [],
                         DecisionSettings((a, b), 0.05, n_resamples=200), "")
    note = ReportNote(text, "<i>ana</i>", kind="decision", comparison=(a, b, "P@1"))
    report = meeting_report(qrels, runs, ["P@1"], notes=[note], n_resamples=200)
    [memo] = report.decisions
    markup = re.sub(r"<script>.*?</script>", "", report.html, flags=re.DOTALL)
    for raw in ("<b>ship", "<i>ana", "<script>alert"):
        assert raw not in markup
    tags = re.findall(r"<[a-zA-Z][^>]*>", markup)
    assert not [t for t in tags if re.search(r"\b(src|href|action|on\w+)\s*=", t)]
    md = memo.markdown()
    assert "<b>" not in md and "](http" not in md and r"\*now\*" in md
    assert "&lt;script>alert(1)&lt;/script>" in md  # run names hold markup: shown literally
    # the whole memo file: the memos and the decision evidence of every pair
    whole = report.memo_markdown()
    assert report.evidence is not None and whole.endswith(report.evidence.to_markdown())
    assert md in whole and "<script" not in whole and "<img" not in whole
    assert "](http" not in whole and "![b]" not in whole
    # inert in LaTeX, and typeset as written (OT1 would show < as an inverted !)
    assert r" vs \textless{}script\textgreater{}alert(1)\textless{}/script\textgreater{}" in (
        report.evidence.to_latex())
