"""Judgment groups (``-R qrels_jg``, the ``*_avgjg`` measures) against trec_eval 10.0.

trec_eval 10.0 (the precise build of ``trec_eval_oracle.py``) is run with ``-q -R qrels_jg
-m qrels_jg`` on seeded random judgment groups: the qrels of the pytrec_eval comparison's
data sets, two seeds (ties, unjudged ``-1`` grades, queries without relevant documents, short runs)
as group ``A``, a regraded copy as ``B``, and a group ``C`` judging some queries only, so
that queries are averaged over one, two or three groups. Every per-query and ``all`` value
is compared within 1e-9, under no option, ``-c``, ``-l2``, ``-J`` and ``-M5``. Without
``-c`` trec_eval 10.0 stops at a judged query the run does not answer, so the binary gets
the groups cut to the answered queries, ireval all of them: the numbers must agree.
The reader's errors and the quicktest files are checked here too.
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from test_oracle_trec_eval import make_dataset
from trec_eval_oracle import parse_q, run, write_run

from ireval_core import EvalOptions, parse_measure
from ireval_core.cli import main
from ireval_core.errors import FormatError
from ireval_core.io import has_judgment_groups, read_qrels, read_run
from ireval_core.io.qrels_jg import read_qrels_jg
from ireval_core.judgment_groups import evaluate_judgment_groups

Groups = dict[str, dict[str, dict[str, float]]]


def _groups(seed: int) -> tuple[Groups, dict[str, dict[str, float]]]:
    qrels, ranking = make_dataset(seed)
    rng = random.Random(seed + 1000)
    b = {q: {d: float(rng.choice((-1, 0, 0, 1, 2, 3))) for d in docs}
         for q, docs in qrels.items()}
    c = {q: {d: float(rng.choice((0, 1, 2))) for d in docs}
         for q, docs in qrels.items() if rng.random() < 0.5}
    return {"A": qrels, "B": b, "C": c}, ranking


def _write(path: Path, groups: Groups, keep: set[str] | None = None) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for g, qrels in groups.items():
            for q, docs in qrels.items():
                if keep is None or q in keep:
                    for d, grade in docs.items():
                        f.write(f"{q} {g} {d} {int(grade)}\n")
    return path


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize("flags", [[], ["-c"], ["-l2"], ["-J"], ["-M5"]])
def test_avgjg_measures_match_trec_eval_10(trec_eval_10_precise, tmp_path, seed,
                                           flags) -> None:
    groups, ranking = _groups(seed)
    run_file = write_run(tmp_path / "run", ranking)
    every = _write(tmp_path / "jg", groups)
    answered = every if "-c" in flags else _write(tmp_path / "jg_answered", groups,
                                                  set(ranking))
    args = ["-q", "-R", "qrels_jg", "-m", "qrels_jg", *flags]
    want = parse_q(run(trec_eval_10_precise, [*args, str(answered), str(run_file)]))
    out = io.StringIO()
    assert main(["eval", *args, "--trec-eval", "10.0", str(every), str(run_file)],
                out=out) == 0
    assert set(parse_q(out.getvalue())) == set(want)  # the same lines, then exact values:
    options = EvalOptions(trec_eval="10.0", complete="-c" in flags, judged_only="-J" in flags,
                          rel_level=2 if "-l2" in flags else 1,
                          depth=5 if "-M5" in flags else None)
    names = sorted({m for m, _ in want if m not in ("runid", "num_q")})
    measures = [parse_measure(n.replace("_avgjg", "")) for n in names]
    res = evaluate_judgment_groups(read_qrels_jg(every), read_run(run_file), measures,
                                   options=options)
    for name, m in zip(names, measures, strict=True):
        per_query = dict(zip(res.query_ids["sys"], res.values[("sys", str(m))], strict=True))
        for (measure, qid), value in want.items():
            if measure == name:
                got = res.mean("sys", m) if qid == "all" else per_query[qid]
                assert abs(got - float(value)) < 1e-9, (name, qid)


def test_one_group_is_the_plain_measure(tmp_path) -> None:
    groups, ranking = _groups(4)
    run_file = write_run(tmp_path / "run", ranking)
    jg = _write(tmp_path / "jg", {"A": groups["A"]})
    plain = tmp_path / "q"
    plain.write_text(jg.read_text().replace(" A ", " 0 "))
    out_jg, out = io.StringIO(), io.StringIO()
    assert main(["eval", "-q", "-R", "qrels_jg", "-m", "map_avgjg", "-m", "P_avgjg.5",
                 str(jg), str(run_file)], out=out_jg) == 0
    assert main(["eval", "-q", "-m", "map", "-m", "P.5", str(plain), str(run_file)],
                out=out) == 0
    averaged = {(m.replace("_avgjg", ""), q): v for (m, q), v in parse_q(out_jg.getvalue()).items()}
    assert averaged == parse_q(out.getvalue()) and len(averaged) > 10


@pytest.mark.parametrize(("content", "message"), [
    (b"1 A d1 1\n1 A d1 2\n", "jg:2: query '1', group 'A', document 'd1' is judged again "
     "(first on line 1): '1 A d1 2'"),
    (b"1 A d1 1\n\n1 A d2\n", "jg:3: expected 4 columns (qid jg docid rel), got 3: '1 A d2'"),
    (b"1 A d1 x\n", "jg:1: expected a numeric grade in column 4, got 'x': '1 A d1 x'"),
    (b" \n", "jg: file is empty; expected judgment-group qrels lines 'qid jg docid rel'"),
])
def test_a_bad_judgment_group_file_is_one_line(content: bytes, message: str) -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels_jg(content, name="jg")
    assert str(caught.value) == message


def test_the_same_document_in_two_groups_is_fine_and_comments_follow_10() -> None:
    text = b"# a\n1 A d1 1\n1 B d1 0\n# b\n1 B d2 2\n"
    groups = read_qrels_jg(text, name="jg", comments=True)
    assert {g: q.to_dict() for g, q in groups.items()} == {
        "A": {"1": {"d1": 1.0}}, "B": {"1": {"d1": 0.0, "d2": 2.0}}}
    with pytest.raises(FormatError, match=r"jg:1: expected 4 columns .*comment for trec_eval"):
        read_qrels_jg(text, name="jg")


def test_avgjg_needs_judgment_groups_and_the_reverse(tmp_path, capsys) -> None:
    (tmp_path / "q").write_text("1 0 d1 1\n")
    (tmp_path / "r").write_text("1 Q0 d1 1 1 s\n")
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    assert main(["eval", "-m", "map_avgjg", *files], out=io.StringIO()) == 2
    assert "need judgment groups: add -R qrels_jg" in capsys.readouterr().err
    assert main(["eval", "-R", "qrels_jg", "-m", "map", *files], out=io.StringIO()) == 2
    assert "not 'map'" in capsys.readouterr().err


# the same (query, document) in groups A and B, and d2 twice in group A (a plain duplicate)
GROUPED = b"1 A d1 1\n1 A d2 0\n1 B d1 0\n"
SAME_GROUP = b"1 A d1 1\n1 A d2 0\n1 A d2 1\n"
QRELS_123 = Path(__file__).resolve().parents[2] / "shared" / "conformance" / "trec_eval-10.0" / (
    "qrels.123")
GROUPS_SAID = ("the two lines differ in their second column ('A' at line 1, 'B' here): the "
               "file looks like judgment groups (trec_eval -R qrels_jg), each of which judges "
               "a document once")
CLI_SAYS = ("eval -R qrels_jg reads a qrels file with judgment groups, for the *_avgjg "
            "measures: python -m ireval_core eval -R qrels_jg -m qrels_jg QRELS RUN")
OTHERS_SAY = ("{} needs one judgment per (query, document): keep one line per document for "
              "it; a qrels file with judgment groups can only be evaluated with eval -R "
              "qrels_jg, for the *_avgjg measures: python -m ireval_core eval -R qrels_jg -m "
              "qrels_jg QRELS RUN")


def test_a_document_judged_in_two_groups_says_judgment_groups() -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels(GROUPED, name="q")
    assert str(caught.value) == (
        "q:3: duplicate qrels entry for query '1', document 'd1' (first at line 1); each "
        f"(query, document) may appear once; {GROUPS_SAID}: '1 B d1 0'")
    assert has_judgment_groups(caught.value)
    with pytest.raises(FormatError) as caught:  # the same group: a plain duplicate
        read_qrels(SAME_GROUP, name="q")
    assert str(caught.value) == (
        "q:3: duplicate qrels entry for query '1', document 'd2' (first at line 2); each "
        "(query, document) may appear once: '1 A d2 1'")
    assert not has_judgment_groups(caught.value)


@pytest.mark.skipif(not QRELS_123.exists(), reason="trec_eval's test files not available")
def test_trec_eval_qrels_123_says_judgment_groups_and_reads_with_qrels_jg(tmp_path,
                                                                         capsys) -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels(QRELS_123)
    first = caught.value.problems[0]
    assert (first.source, first.line) == ("qrels.123", 3682)
    assert first.message.startswith("duplicate qrels entry for query '301', document "
                                    "'CR93E-10279' (first at line 1); each")
    assert "second column ('0' at line 1, '1' here): the file looks like judgment groups" in (
        first.message)
    run_file = tmp_path / "run"
    run_file.write_text("301 Q0 CR93E-1282 1 2.0 s\n301 Q0 CR93E-10279 2 1.0 s\n")
    assert main(["eval", "-m", "map", str(QRELS_123), str(run_file)], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert err.startswith("qrels.123:3682: duplicate qrels entry for query '301', document "
                          "'CR93E-10279' (first at line 1)")
    assert CLI_SAYS in err.splitlines()
    out = io.StringIO()  # and -R qrels_jg reads it
    assert main(["eval", "-R", "qrels_jg", "-m", "map_avgjg", str(QRELS_123), str(run_file)],
                out=out) == 0
    assert out.getvalue().startswith("map_avgjg")


def test_the_judgment_group_explanation_is_said_once_per_error() -> None:
    """Every line judged again in another group names the two groups; only the first says
    what such a file is, in str(), report() and the CSV alike."""
    data = GROUPED + b"1 B d2 1\n1 A d2 1\n1 C d1 2\n"  # d2 twice in A; d1 in A, B, C
    with pytest.raises(FormatError) as caught:
        read_qrels(data, name="q")
    err = caught.value
    dup = ("duplicate qrels entry for query '1', document {!r} (first at line {}); each "
           "(query, document) may appear once")
    assert [(p.line, p.message) for p in err.problems] == [
        (3, dup.format("d1", 1) + "; " + GROUPS_SAID),
        (4, dup.format("d2", 2) + "; the two lines differ in their second column ('A' at "
                                  "line 2, 'B' here)"),
        (5, dup.format("d2", 2)),  # the same group as the first d2: a plain duplicate
        (6, dup.format("d1", 1) + "; the two lines differ in their second column ('A' at "
                                  "line 1, 'C' here)"),
    ]
    assert has_judgment_groups(err)
    assert err.report().count("the file looks like judgment groups") == 1
    assert err.problems_csv().count("the file looks like judgment groups") == 1
    assert err.report().splitlines()[0] == "4 problems in q; the first 4:"


@pytest.mark.skipif(not QRELS_123.exists(), reason="trec_eval's test files not available")
def test_qrels_123_explains_judgment_groups_on_its_first_problem_only() -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels(QRELS_123)
    err = caught.value
    assert len(err.problems) == 100 and err.count > 100
    explained = [p.line for p in err.problems if "looks like judgment groups" in p.message]
    assert explained == [3682]
    assert all("; the two lines differ in their second column ('0' at line " in p.message
               for p in err.problems)
    assert has_judgment_groups(err)


def test_the_cli_says_how_to_read_judgment_groups_only_when_they_differ(tmp_path,
                                                                        capsys) -> None:
    run_file = tmp_path / "run"
    run_file.write_text("1 Q0 d1 1 2.0 s\n")
    for data, said in ((GROUPED, True), (SAME_GROUP, False)):
        (tmp_path / "q").write_bytes(data)
        for command in (["eval", "-m", "map"], ["compare", "-m", "AP"]):
            assert main([*command, str(tmp_path / "q"), str(run_file)],
                        out=io.StringIO()) == 2
            err = capsys.readouterr().err.splitlines()
            assert err[0].startswith("q:3: duplicate qrels entry"), err
            hint = CLI_SAYS if command[0] == "eval" else OTHERS_SAY.format(command[0])
            assert (hint in err) is said, (data, command)


@pytest.mark.parametrize("command", [["report", "-m", "AP"], ["compare", "-m", "AP"],
                                     ["meeting-report", "-o", "out.html"]])
def test_commands_without_r_say_they_need_one_judgment_per_document(command, tmp_path,
                                                                    capsys) -> None:
    """Only eval has -R qrels_jg: the other commands say what they need and which command
    evaluates such a file, not a flag they do not have."""
    (tmp_path / "q").write_bytes(GROUPED)
    (tmp_path / "run").write_text("1 Q0 d1 1 2.0 s\n")
    command = [c if c != "out.html" else str(tmp_path / c) for c in command]
    assert main([*command, str(tmp_path / "q"), str(tmp_path / "run")],
                out=io.StringIO()) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "q:3: duplicate qrels entry for query '1', document 'd1' (first at line 1); each "
        f"(query, document) may appear once; {GROUPS_SAID}: '1 B d1 0'",
        OTHERS_SAY.format(command[0])]
    assert not (tmp_path / "out.html").exists()
