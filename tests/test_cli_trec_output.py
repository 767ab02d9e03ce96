"""``eval`` prints what trec_eval prints, line for line, for its own quicktest commands.

Every command of the tables in ``../shared/conformance/trec_eval-10.0/README.md`` and
``../shared/conformance/trec_eval-9.0.8/README.md`` is run through ``python -m ireval_core eval``
with the same flags (``-m all_trec``, ``-q``, ``-c``, ``-M100``, ``-l2``, ``-mrelstring.20``:
argparse reads them as trec_eval's getopt does) plus ``--trec-eval`` of the folder, and the
output compared byte for byte with the expected file: the per-query lines and their order,
``relstring``, ``runid``/``num_q``, the ``all`` lines, number formats. Commands ireval cannot
run yet are listed in ``NOT_YET`` with the reason; the test checks that list stays exact.
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path

import pytest
from trec_eval_oracle import QuicktestCommand, quicktest_commands

from ireval_core.cli import main
from ireval_core.trec_output import all_trec, official

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "conformance"
FOLDERS = {"10.0": SHARED / "trec_eval-10.0", "9.0.8": SHARED / "trec_eval-9.0.8"}
if not all((f / "README.md").is_file() for f in FOLDERS.values()):
    pytest.skip("trec_eval conformance files not found", allow_module_level=True)

# (version, expected file, judgments file) -> why ireval cannot print it yet (issue 19)
NOT_YET: dict[tuple[str, str, str], str] = {}

CASES = [(version, c) for version, folder in FOLDERS.items()
         for c in quicktest_commands(folder / "README.md")]


def _key(version: str, command: QuicktestCommand) -> tuple[str, str, str]:
    return (version, command.expected, command.args[-2])


def ireval_eval(version: str, command: QuicktestCommand) -> str:
    folder = FOLDERS[version]
    *flags, judgments, results = command.args  # no -m: official, trec_eval's default too
    flags = [str(folder / f) if i and flags[i - 1] == "-Z" else f  # -Z FILE: in the folder
             for i, f in enumerate(flags)]
    out = io.StringIO()
    status = main(["eval", *flags, "--trec-eval", version, str(folder / judgments),
                   str(folder / results)], out=out)
    assert status == 0
    return out.getvalue()


def test_the_not_yet_list_is_exact() -> None:
    keys = {_key(v, c) for v, c in CASES}
    assert set(NOT_YET) <= keys
    assert len(CASES) == 19 and len(keys - set(NOT_YET)) == 19


@pytest.mark.parametrize(("version", "command"),
                         [(v, c) for v, c in CASES if _key(v, c) not in NOT_YET],
                         ids=lambda x: x if isinstance(x, str) else
                         f"{x.expected}[{' '.join(x.args[:-2])}]")
def test_eval_prints_what_trec_eval_prints(version: str, command: QuicktestCommand) -> None:
    expected = (FOLDERS[version] / command.expected).read_text(encoding="utf-8")
    assert ireval_eval(version, command) == expected


def test_10_warns_about_judged_queries_without_a_ranking(capsys) -> None:
    """trec_eval 10.0 stops (exit 4) on results.trunc without -c; ireval evaluates 301 and
    303 and says on stderr what 10.0 would have done."""
    folder = FOLDERS["10.0"]
    out = io.StringIO()
    assert main(["eval", "-m", "num_q", "-m", "map", "--trec-eval", "10.0",
                 str(folder / "qrels.test"),
                 str(folder / "results.trunc")], out=out) == 0
    assert "num_q                 \tall\t2\n" in out.getvalue()
    err = capsys.readouterr().err
    assert "trec_eval 10.0 stops there" in err and "'302'" in err
    assert main(["eval", "-m", "map", str(folder / "qrels.test"),
                 str(folder / "results.trunc")], out=io.StringIO()) == 0
    assert "stops there" not in capsys.readouterr().err  # 9.0.8 semantics: as trec_eval 9


def test_9_with_c_averages_missing_queries_without_printing_them() -> None:
    folder = FOLDERS["9.0.8"]
    args = ["eval", "-m", "num_q", "-m", "map", "-q", "-c", str(folder / "qrels.test"),
            str(folder / "results.trunc")]
    nine, ten = io.StringIO(), io.StringIO()
    assert main(args, out=nine) == 0 and main([*args, "--trec-eval", "10.0"], out=ten) == 0
    assert "\t302\t" not in nine.getvalue()
    assert "map                   \t302\t0.0000\n" in ten.getvalue()
    assert "num_q                 \tall\t3\n" in nine.getvalue()


def _run(args: list[str]) -> str:
    out = io.StringIO()
    assert main(args, out=out) == 0
    return out.getvalue()


def test_trec_eval_parameters_replace_the_defaults_where_the_measure_is_asked() -> None:
    """As trec_eval: the first parameters given for a measure are its parameters, in the
    place the measure has (here all_trec's P_5 ... P_1000 become P_2, P_10)."""
    folder = FOLDERS["10.0"]
    files = [str(folder / "qrels.test"), str(folder / "results.test")]
    text = _run(["eval", "-m", "all_trec", "-m", "P.10,2", "-m", "P.3", *files])
    names = [line.split("\t")[0].strip() for line in text.splitlines()]
    assert [n for n in names if n.startswith("P_")] == ["P_2", "P_10"]
    assert names.index("P_2") == names.index("iprec_at_recall_1.00") + 1
    assert names[:2] == ["runid", "num_q"]
    alone = _run(["eval", "-m", "P.10,2", *files])  # runid, num_q: only when asked
    assert alone.splitlines()[0].startswith("P_2 ") and "runid" not in alone


@pytest.mark.parametrize(("flag", "message"), [
    ("P.0,5", "cutoffs of P must be > 0"),
    ("P.5,5", "duplicate cutoffs of P"),
    ("utility.1,2", "utility takes 4 coefficients"),
    ("ndcg.1=2,=3", "malformed pair parameters"),
    ("iprec_at_recall.x", "is not a number"),
    ("P.", "nothing after the '.'"),
])
def test_bad_trec_eval_parameters_are_one_line(flag: str, message: str, capsys) -> None:
    folder = FOLDERS["10.0"]
    status = main(["eval", "-m", flag, str(folder / "qrels.test"),
                   str(folder / "results.test")], out=io.StringIO())
    assert status == 2 and message in capsys.readouterr().err


def test_a_trec_eval_gain_map_leaves_other_grades_at_their_value(tmp_path) -> None:
    """ndcg.2=5 on grades 0..3: grade 1 gains 1 and grade 3 gains 3, as in trec_eval."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 2\n1 0 c 3\n1 0 d 0\n")
    (tmp_path / "r").write_text("1 Q0 d 1 4 x\n1 Q0 a 2 3 x\n1 Q0 b 3 2 x\n1 Q0 c 4 1 x\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    mapped = _run(["eval", "-m", "ndcg.2=5", *files])
    same = _run(["eval", "-m", "nDCG(gain={1:1,2:5,3:3})", *files])
    assert mapped.split("\t")[-1] == same.split("\t")[-1]
    assert mapped.startswith("ndcg_2=5 ")


def test_z_scores_without_a_line_are_trec_evals_missing_value(tmp_path) -> None:
    """A query or measure absent from the -Z file prints -1000000; a deviation of 0 gives 0
    at the mean; counts sum their z-scores, as trec_eval 10.0 prints them."""
    folder = FOLDERS["10.0"]
    (tmp_path / "z").write_text("301 map 0.1 0.5\n302 map 0.5 0\n301 num_ret 1000 0\n")
    text = _run(["eval", "-q", "-m", "map", "-m", "num_ret", "-Z", str(tmp_path / "z"),
                 "--trec-eval", "10.0", str(folder / "qrels.test"),
                 str(folder / "results.test")])
    lines = dict(((n.strip(), q), v) for n, q, v in (x.split("\t") for x in text.splitlines()))
    plain = _run(["eval", "-q", "-m", "map", str(folder / "qrels.test"),
                  str(folder / "results.test")])
    ap301 = float(plain.splitlines()[0].split("\t")[2])
    assert abs(float(lines[("Zmap", "301")]) - (ap301 - 0.1) / 0.5) < 2e-4
    assert lines[("Zmap", "303")] == "-1000000.0000"
    assert lines[("Znum_ret", "301")] == "-1000000.0000"  # 967 retrieved, not the mean


@pytest.mark.parametrize(("content", "message"), [
    ("301 map 0.1\n", "z:1: expected 4 columns (qid measure mean stddev), got 3"),
    ("301 map 0.1 0.2\n302 map x 0.2\n", "z:2: the mean must be a finite number, got 'x'"),
    ("301 map 0.1 0.2\n301 map 0.1 0.3\n", "z:2: query '301' and measure 'map' are given "
     "twice (first on line 1)"),
    ("", "z: file is empty"),
])
def test_a_bad_z_score_file_is_one_line_with_file_and_line(tmp_path, content, message,
                                                           capsys) -> None:
    folder = FOLDERS["10.0"]
    (tmp_path / "z").write_text(content)
    status = main(["eval", "-m", "map", "-Z", str(tmp_path / "z"), str(folder / "qrels.test"),
                   str(folder / "results.test")], out=io.StringIO())
    assert status == 2 and capsys.readouterr().err.startswith(message)


def test_without_m_each_format_has_its_default_set() -> None:
    """The trec layout prints trec_eval's default, official; csv and json all_trec."""
    folder = FOLDERS["9.0.8"]
    files = [str(folder / "qrels.test"), str(folder / "results.test")]
    trec = [line.split("\t")[0].strip() for line in _run(["eval", *files]).splitlines()]
    assert trec == ["runid", "num_q", *official()]
    # one column per measure: Rprec_mult_1.00 is Rprec; relstring is no number
    every = [n for n in all_trec("9.0.8") if n not in ("relstring", "Rprec_mult_1.00")]
    csv_names = [line.split(",")[1] for line in _run(["eval", "--format", "csv", *files]
                                                     ).splitlines()[1:]]
    assert list(dict.fromkeys(csv_names)) == every
    assert list(json.loads(_run(["eval", "--format", "json", *files]))["runs"]["STANDARD"]) == every


def _nan_case(tmp_path: Path) -> list[str]:
    """q1 ranks a relevant document; q2 ranks only documents the qrels do not have."""
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 0\n2 0 e 2\n")
    (tmp_path / "r").write_text("1 Q0 b 1 2 x\n1 Q0 a 2 1 x\n2 Q0 y 1 2 x\n2 Q0 z 2 1 x\n")
    return [str(tmp_path / "q"), str(tmp_path / "r")]


@pytest.mark.parametrize("version", ["9.0.8", "10.0"])
def test_an_empty_judged_ranking_prints_trec_evals_nan(version: str, tmp_path: Path) -> None:
    """-J leaves q2 nothing: trec_eval's 0 / 0 at the recall levels needing 0 relevant
    documents (R = 2: 0.00 under 9.0.8, (long)(0.1·2 + 0.9) = 1; 0.00 to 0.20 under 10.0,
    lround(0.2·2) = 0), and so in 11pt_avg;
    the mean of each is then -nan too."""
    files = _nan_case(tmp_path)
    text = _run(["eval", "-q", "-J", "--trec-eval", version, "-m", "iprec_at_recall..0,.1,.2,.3",
                 "-m", "11pt_avg", "-m", "P.1", *files])
    lines = dict(((n.strip(), q), v) for n, q, v in (line.split("\t")
                                                    for line in text.splitlines()))
    nan_levels = ["0.00"] + (["0.10", "0.20"] if version == "10.0" else [])
    for level in ["0.00", "0.10", "0.20", "0.30"]:
        want = "  -nan" if level in nan_levels else "0.0000"
        assert lines[(f"iprec_at_recall_{level}", "2")] == want
        assert (lines[(f"iprec_at_recall_{level}", "all")] == "  -nan") == (want == "  -nan")
    assert lines[("iprec_at_recall_0.00", "1")] == "0.5000"
    assert lines[("11pt_avg", "2")] == lines[("11pt_avg", "all")] == "  -nan"
    assert lines[("P_1", "all")] == "0.0000"  # P is defined: 0 / 1


def test_an_undefined_value_stays_undefined_in_ireval_s_tables(tmp_path: Path) -> None:
    """The same values in ireval's own outputs: NaN per query (csv nan, json null), means
    over the defined values, '–' in the app's table, no point at 0 in its chart."""
    from ireval_core import EvalOptions, Run, evaluate, read_qrels, read_runs
    from ireval_core.charts import per_query_distribution
    from ireval_core.tables import metrics_table

    files = _nan_case(tmp_path)
    doc = json.loads(_run(["eval", "-q", "-J", "--format", "json", "-m", "iprec_at_recall..0",
                           "-m", "11pt_avg", *files]))["runs"]["x"]
    assert doc["iprec_at_recall_0.00"]["per_query"] == {"1": 0.5, "2": None}
    assert doc["iprec_at_recall_0.00"]["all"] == 0.5  # over q1, the query it is defined for
    csv_text = _run(["eval", "-q", "-J", "--format", "csv", "-m", "11pt_avg", *files])
    assert "x,11pt_avg,2,nan" in csv_text.splitlines()
    res = evaluate(read_qrels(files[0]), read_runs(files[1]), ["IPrec@0.0", "11pt"],
                   options=EvalOptions(judged_only=True))
    table = metrics_table(res)
    assert table.n_queries.loc["x", "IPrec@0"] == 1
    only_q2 = evaluate(read_qrels(files[0]), Run.from_dict({"2": {"y": 2.0}}, name="x"),
                       ["11pt"], options=EvalOptions(judged_only=True))
    assert metrics_table(only_q2).cells.loc["x", "11pt"] == "–"
    figure = per_query_distribution(res.tidy().query("measure == '11pt'"), "11pt")
    assert [math.isnan(y) for y in figure.data[0].y] == [False, True]


def test_n_is_the_collection_size_of_utility(tmp_path: Path) -> None:
    """utility.1,-1,0,1 with -N 100 on q1 (a, b judged; R = 1; b, a ranked): 1·1 − 1·1 +
    0 + 1·(100 + 1 − 2 − 1) = 98; trec_eval's d term, 0 without -N."""
    files = _nan_case(tmp_path)
    text = _run(["eval", "-q", "-N", "100", "-m", "utility.1,-1,0,1", *files])
    assert text.splitlines()[0] == "utility_1,-1,0,1      \t1\t98.0000"
    without = _run(["eval", "-q", "-m", "utility.1,-1,0,1", *files])
    assert without.splitlines()[0] == "utility_1,-1,0,1      \t1\t-2.0000"


def test_set_f_takes_trec_evals_weight_of_recall(tmp_path: Path) -> None:
    """set_F.0.5 is (x + 1)·P·R / (x·P + R) with x = 0.5 (β² = 0.5): on q1, P = 1/2, R = 1,
    0.75 / 1.25 = 0.6; F(beta=0.5) weighs β² = 0.25 and gives 0.625 / 1.125."""
    files = _nan_case(tmp_path)
    text = _run(["eval", "-q", "-m", "set_F.0.5", "-m", "F(beta=0.5)", *files])
    lines = text.splitlines()
    assert lines[0] == "set_F_0.5             \t1\t0.6000"
    assert lines[1] == f"F(beta=0.5)           \t1\t{0.625 / 1.125:6.4f}"
