"""The command line with real files. A few tests run it as a user does, a subprocess
(``cli``: the exit status, one line on stderr, a warning, text on a terminal and JSON
into a pipe); the others check what a command computes and prints and call its entry
point in the test's process (``call``: :func:`_cli.run`, the same status, stdout and
stderr without an interpreter's start for each command)."""

from __future__ import annotations

import csv
import html
import io
import json
import subprocess
import sys
from pathlib import Path

import _cli
import pytest

from ireval_core import EvalOptions, evaluate, read_qrels, read_runs
from ireval_core.compare import compare_runs

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"
CONFORMANCE = ROOT.parent / "shared" / "conformance" / "trec_eval-9.0.8"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "ireval_core", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)


call = _cli.run


@pytest.fixture
def seed_files(tmp_path: Path) -> tuple[Path, Path]:
    """Seed 002's MAP example: q1 has 4 relevant at ranks 1, 2, 4, 7; q2 has 5, at 1, 3, 5."""
    qrels, run = [], []
    for q, n_rel, ranks in (("q1", 4, (1, 2, 4, 7)), ("q2", 5, (1, 3, 5))):
        rel_docs = [f"{q}r{i}" for i in range(n_rel)]
        qrels += [f"{q} 0 {d} 1" for d in rel_docs]
        it = iter(rel_docs)
        for rank in range(1, 11):
            doc = next(it) if rank in ranks else f"{q}n{rank}"
            run.append(f"{q} Q0 {doc} {rank} {100 - rank} seed")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels) + "\n")
    (tmp_path / "run.txt").write_text("\n".join(run) + "\n")
    return tmp_path / "qrels.txt", tmp_path / "run.txt"


def test_trec_layout_and_golden_map(seed_files):
    qrels, run = seed_files
    out = cli("eval", qrels, run, "-m", "runid", "-m", "num_q", "-m", "map", "-q")
    assert out.returncode == 0, out.stderr
    rows = [line.split("\t") for line in out.stdout.splitlines()]
    values = {(m.strip(), q): v for m, q, v in rows}
    assert values[("runid", "all")] == "seed"
    assert values[("num_q", "all")] == "2"
    assert round(float(values[("map", "q1")]), 2) == 0.83
    assert round(float(values[("map", "q2")]), 2) == 0.45
    assert round(float(values[("map", "all")]), 2) == 0.64


def test_conformance_file_through_cli():
    if not CONFORMANCE.is_dir():
        pytest.skip("shared conformance data not present")
    out = call("eval", CONFORMANCE / "qrels.test", CONFORMANCE / "results.test", "-q", "-m",
              "all_trec")
    assert out.returncode == 0, out.stderr
    ours = {tuple(x.strip() for x in line.split("\t")[:2]): line.split("\t")[2]
            for line in out.stdout.splitlines()}
    expected = {}
    for line in (CONFORMANCE / "out.test.aq").read_text().splitlines():
        m, q, v = (x.strip() for x in line.split("\t"))
        expected[(m, q)] = v
    shared = set(ours) & set(expected)
    assert len(shared) > 250
    assert {k: ours[k] for k in shared} == {k: expected[k] for k in shared}


def test_csv_format_matches_library():
    out = call("eval", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt", SAMPLE / "run_narrow.txt",
              "-m", "nDCG@10", "-m", "P_10", "--format", "csv", "-q")
    assert out.returncode == 0, out.stderr
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert list(rows[0]) == ["run", "measure", "qid", "value"]
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = read_runs(SAMPLE / "run_bm25.txt") + read_runs(SAMPLE / "run_narrow.txt")
    res = evaluate(qrels, runs, ["nDCG@10", "P@10"])
    means = {(r["run"], r["measure"]): float(r["value"]) for r in rows if r["qid"] == "all"}
    assert means[("bm25", "nDCG@10")] == res.mean("bm25", "nDCG@10")
    assert means[("narrow_recall", "P_10")] == res.mean("narrow_recall", "P@10")
    per_query = [r for r in rows if r["run"] == "bm25" and r["measure"] == "nDCG@10"
                 and r["qid"] != "all"]
    assert len(per_query) == len(res.query_ids["bm25"])


def test_json_format_carries_definitions():
    out = call("eval", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt", "-m", "nDCG(ideal=run)@10",
              "--format", "json", "-c")
    doc = json.loads(out.stdout)
    entry = doc["runs"]["bm25"]["nDCG(ideal=run)@10"]
    assert "ideal from run" in entry["definition"]
    assert "every qrels query" in doc["options"]
    assert 0 < entry["all"] <= 1


def test_options_change_numbers_like_trec_eval(seed_files):
    qrels, run = seed_files
    depth = call("eval", qrels, run, "-m", "num_ret", "-M", "3")
    assert "num_ret               \tall\t6" in depth.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["eval", "missing_qrels.txt", "x.run"], "missing_qrels.txt: No such file"),
        (["eval", "QRELS", "QRELS"], "qrels.txt:1: this looks like a TREC qrels file"),
        (["eval", "QRELS", "RUN", "-m", "nDGC@10"], "Did you mean"),
        (["compare", "QRELS", "RUN", "RUN", "-m", "AP", "--baseline", "nope"], "baseline"),
    ],
    ids=["missing-file", "qrels-as-run", "unknown-measure", "bad-baseline"],
)
def test_bad_input_exits_2_with_one_line(seed_files, args, needle):
    qrels, run = seed_files
    args = [str(qrels) if a == "QRELS" else str(run) if a == "RUN" else a for a in args]
    out = cli(*args)
    assert out.returncode == 2
    assert needle in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_help_lists_every_measure_with_definition():
    out = cli("eval", "--help")
    assert out.returncode == 0
    for name in ("nDCG", "ERR", "RBP", "bpref", "AUC", "PNR", "Judged", "IPrec", "11pt"):
        assert f"  {name}" in out.stdout
    assert "ideal from" in out.stdout


def test_compare_json_records_match_library():
    out = call("compare", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
              SAMPLE / "run_neural.txt", "-m", "nDCG@10", "--tests", "t,randomization",
              "--alternative", "greater", "--resamples", "2000", "--seed", "7")
    assert out.returncode == 0, out.stderr
    records = json.loads(out.stdout)
    assert [r["test"] for r in records] == ["t", "randomization"]
    assert {r["system_a"] for r in records} == {"bm25"}
    assert set(records[0]) == {"system_a", "system_b", "measure", "test", "statistic",
                               "pvalue", "pvalue_corrected", "mean_a", "mean_b", "mean_diff",
                               "ci_low", "ci_high", "effect_size", "wins", "ties", "losses",
                               "n", "holes", "risk"}  # decision evidence: test_decisions_cli
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = read_runs(SAMPLE / "run_bm25.txt") + read_runs(SAMPLE / "run_neural.txt")
    lib = compare_runs(qrels, runs, ["nDCG@10"], tests=["t", "randomization"],
                       alternative="greater", n_resamples=2000, seed=7)
    for rec, c in zip(records, lib, strict=True):
        assert rec["pvalue"] == pytest.approx(c.pvalue, rel=1e-12)
        assert rec["mean_diff"] == pytest.approx(c.mean_b - c.mean_a, rel=1e-12)
    assert records[0]["mean_diff"] > 0 and records[0]["pvalue"] < 0.001
    again = call("compare", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
                SAMPLE / "run_neural.txt", "-m", "nDCG@10", "--tests", "t,randomization",
                "--alternative", "greater", "--resamples", "2000", "--seed", "7")
    assert again.stdout == out.stdout  # same seed, same p-values


def test_compare_csv_and_corrections():
    out = call("compare", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
              SAMPLE / "run_neural.txt", SAMPLE / "run_narrow.txt", "-m", "AP", "--tests",
              "sign", "--correction", "bonferroni", "--format", "csv")
    rows = list(csv.DictReader(io.StringIO(out.stdout)))
    assert len(rows) == 3  # three unordered pairs
    for r in rows:
        assert float(r["pvalue_corrected"]) == pytest.approx(min(1.0, 3 * float(r["pvalue"])))


def test_judged_only_and_idcg_policy_flags(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 a 1\nq1 0 b 0\nq2 0 c 0\n")
    (tmp_path / "r.txt").write_text("q1 Q0 x 1 3 s\nq1 Q0 a 2 2 s\nq2 Q0 c 1 1 s\n")
    plain = call("eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "P_1", "-m", "ndcg")
    judged = call("eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "P_1", "-J")
    drop = call("eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "ndcg",
               "--idcg-zero", "drop")
    assert "P_1                   \tall\t0.0000" in plain.stdout  # x (unjudged) is first
    assert "P_1                   \tall\t0.5000" in judged.stdout  # x removed: a is first
    # q2 has no relevant document: 0 and averaged (default) or left out of the mean
    assert "ndcg                  \tall\t0.3155" in plain.stdout
    assert "ndcg                  \tall\t0.6309" in drop.stdout


def test_measures_subcommand_lists_definitions():
    out = call("measures")
    assert out.returncode == 0
    assert "bpref" in out.stdout and "min(N, R)" in out.stdout


@pytest.mark.parametrize("fmt", ["markdown", "latex", "html"])
def test_report_renders_the_significance_table(fmt: str) -> None:
    from ireval_core.report import significance_table

    runs_files = [SAMPLE / "run_bm25.txt", SAMPLE / "run_narrow.txt", SAMPLE / "run_neural.txt"]
    out = call("report", SAMPLE / "qrels.txt", *runs_files, "-m", "nDCG@10", "-m", "AP",
              "--test", "wilcoxon", "--correction", "bonferroni", "--alpha", "0.01",
              "--format", fmt, "--no-evidence")  # the evidence: test_decisions_cli
    assert out.returncode == 0, out.stderr
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in runs_files for r in read_runs(p)]
    table = significance_table(evaluate(qrels, runs, ["nDCG@10", "AP"]), test="wilcoxon",
                               correction="bonferroni", alpha=0.01)
    expected = {"markdown": table.to_markdown, "latex": table.to_latex,
                "html": table.to_html}[fmt]()
    assert out.stdout == expected
    text = html.unescape(out.stdout)
    assert "Bonferroni correction" in text
    assert (r"p \textless{} 0.01" if fmt == "latex" else "p < 0.01") in text


def test_report_bad_measure_exits_2() -> None:
    out = call("report", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt", SAMPLE / "run_neural.txt",
              "-m", "nDCG@x")
    assert out.returncode == 2 and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr


def test_same_tag_twice_is_renamed_with_a_warning(seed_files):
    qrels, run = seed_files
    done = cli("eval", qrels, run, run, "-m", "P@5", "--format", "csv")
    assert done.returncode == 0
    systems = {row.split(",")[0] for row in done.stdout.splitlines()[1:]}
    assert systems == {"run:seed", "run:seed-2"}  # every one named after its file
    warnings = [w for w in done.stderr.splitlines() if "is the tag of runs" in w]
    assert warnings == [
        f"warning: run.txt: tag 'seed' is the tag of runs in 2 files (run.txt, run.txt): each "
        f"is named after its file and tag, this one {name!r}" for name in ("run:seed",
                                                                            "run:seed-2")]


def test_a_tag_of_several_files_names_every_run_after_its_file(tmp_path, seed_files):
    """rank_llm writes the tag ``rank`` for every run: bm25.txt and splade.txt are
    ``bm25:rank`` and ``splade:rank`` (not a bare ``rank`` for the first), a third file
    with its own tag keeps it; the values are each file's."""
    qrels, run = seed_files
    lines = run.read_text().splitlines()
    (tmp_path / "bm25.txt").write_text("".join(
        " ".join(line.split()[:5] + ["rank"]) + "\n" for line in lines))
    (tmp_path / "splade.txt").write_text("".join(
        " ".join(line.split()[:4] + [str(-float(line.split()[4])), "rank"]) + "\n"
        for line in lines))
    done = call("eval", qrels, tmp_path / "bm25.txt", tmp_path / "splade.txt", run,
               "-m", "P@5", "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = [r.split(",") for r in done.stdout.splitlines()[1:]]
    means = {system: float(value) for system, _, query, value in rows if query == "all"}
    assert list(means) == ["bm25:rank", "splade:rank", "seed"]
    expected = {name: evaluate(read_qrels(qrels), read_runs(tmp_path / f"{name}.txt"),
                               ["P@5"]).mean("rank", "P@5") for name in ("bm25", "splade")}
    assert means["bm25:rank"] == pytest.approx(expected["bm25"])
    assert means["splade:rank"] == pytest.approx(expected["splade"])
    assert "'bm25:rank'" in done.stderr and "'splade:rank'" in done.stderr


def test_compare_and_report_take_the_eval_options(seed_files):
    qrels, run = seed_files
    flags = ["-J", "--idcg-zero", "drop", "-l", "2", "-M", "3", "-c"]
    report = call("report", qrels, run, run, "-m", "P@5", *flags)
    assert report.returncode == 0, report.stderr
    assert "relevant: grade >= 2" in report.stdout and "depth: top 3" in report.stdout
    base = ["compare", qrels, run, run, "-m", "P@5", "--tests", "t", "--format", "json"]
    plain = json.loads(call(*base).stdout)
    strict = json.loads(call(*base, *flags).stdout)
    lib = evaluate(read_qrels(qrels), read_runs(run), ["P@5"],
                   options=EvalOptions(complete=True, rel_level=2, depth=3, judged_only=True,
                                       idcg_zero="drop"))
    assert strict[0]["mean_a"] == pytest.approx(lib.mean("seed", "P@5"))
    assert strict[0]["mean_a"] != plain[0]["mean_a"]


def test_csv_output_neutralises_formula_names(tmp_path):
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n=cmd 0 d1 1\n")
    (tmp_path / "r.txt").write_text("q1 Q0 d1 1 2.0 @SUM(A1)\n=cmd Q0 d1 1 1.0 @SUM(A1)\n")
    done = call("eval", tmp_path / "q.txt", tmp_path / "r.txt", "-m", "P@1", "-q",
               "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.reader(io.StringIO(done.stdout)))[1:]
    assert rows == [["'@SUM(A1)", "P@1", "'=cmd", "1.0"], ["'@SUM(A1)", "P@1", "q1", "1.0"],
                    ["'@SUM(A1)", "P@1", "all", "1.0"]]


def _compare_records(tests: list[str]):
    from ireval_core.compare import compare_evaluation

    res = evaluate(read_qrels(SAMPLE / "qrels.txt"),
                   [*read_runs(SAMPLE / "run_bm25.txt"), *read_runs(SAMPLE / "run_neural.txt")],
                   ["nDCG@10"])
    return compare_evaluation(res, tests=tests, correction="holm")


def test_compare_text_has_a_verdict_sentence_per_pair_and_each_test() -> None:
    from ireval_core.compare import verdicts

    done = call("compare", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
               SAMPLE / "run_neural.txt", "-m", "nDCG@10", "--tests", "t,sign",
               "--format", "text")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    records = _compare_records(["t", "sign"])
    [verdict] = verdicts(records, alpha=0.05)
    assert lines[0] == verdict.text and verdict.text.startswith("neural_rerank beats bm25")
    t, sign = records
    assert lines[1].startswith(f"  paired t-test: bm25 {t.mean_a:.4f}, neural_rerank "
                               f"{t.mean_b:.4f}, difference {t.mean_diff:+.4f}")
    assert lines[2].startswith("  sign test: ") and f"W/T/L {sign.wins}/{sign.ties}/" in lines[2]
    assert len(lines) == 3


def test_compare_is_text_on_a_terminal_and_json_into_a_pipe() -> None:
    import os
    import pty

    args = [sys.executable, "-m", "ireval_core", "compare", str(SAMPLE / "qrels.txt"),
            str(SAMPLE / "run_bm25.txt"), str(SAMPLE / "run_neural.txt"), "-m", "P@10",
            "--tests", "t", "--resamples", "200"]
    main, follower = pty.openpty()
    proc = subprocess.run(args, cwd=ROOT, stdout=follower, stderr=subprocess.PIPE,
                          timeout=120)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.close(main)
    assert proc.returncode == 0
    text = shown.decode().replace("\r\n", "\n")
    assert text.startswith("neural_rerank beats bm25 on P@10 by +0.20")
    piped = cli(*args[3:])
    assert json.loads(piped.stdout)[0]["test"] == "t"


def test_compare_tests_are_a_choice() -> None:
    done = call("compare", SAMPLE / "qrels.txt", SAMPLE / "run_bm25.txt",
               SAMPLE / "run_neural.txt", "-m", "P@10", "--tests", "t,ttest")
    assert done.returncode == 2
    assert ("argument --tests: invalid choice: 'ttest' (choose from t, wilcoxon, sign, "
            "randomization, bootstrap, comma-separated)") in done.stderr
