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
from ireval_core.io import read_run
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
