"""Preference judgments (``-R prefs``, ``-R qrels_prefs``): ``all_prefs`` against the built
trec_eval 10.0 on random data, per query, exact to 1e-9 (the precise build prints
``%.17g``); the reader's errors; trec_eval's own examples of how preferences are formed.

Random data: several judgment groups per query, groups of one sub-group (levels 0-3,
ties) and of several (partial orders whose transitive closure matters), documents judged
in several groups, tied scores, queries the run does not answer, ``-c``, ``-M5``, ``-J``
and ``-l2`` (which preferences ignore).
"""

from __future__ import annotations

import io
import random
from pathlib import Path

import pytest
from trec_eval_oracle import parse_q, run, write_run

from ireval_core import EvalOptions
from ireval_core.cli import main
from ireval_core.errors import FormatError
from ireval_core.io import read_run
from ireval_core.io.prefs import read_prefs
from ireval_core.preferences import (
    PREF_MEASURES,
    PreferenceError,
    evaluate_preferences,
    pref_measure,
)

Line = tuple[str, str, str, str, float]


def _dataset(seed: int) -> tuple[list[Line], dict[str, dict[str, float]]]:
    """Random consistent preference lines and a run with ties (queries on both sides
    missing from the other)."""
    rng = random.Random(seed)
    lines: list[Line] = []
    ranking: dict[str, dict[str, float]] = {}
    for q in range(rng.randint(6, 10)):
        qid = f"q{q}"
        pool = [f"d{rng.randint(0, 60):02d}" for _ in range(40)]
        pool = sorted(set(pool))
        for g in range(rng.randint(1, 4)):
            # a latent order per group keeps its sub-groups consistent (no cycle); its
            # non-relevant documents are the last ones and get level 0 in every sub-group
            docs = rng.sample(pool, rng.randint(2, min(14, len(pool))))
            n_nonrel = rng.randint(0, len(docs) - 1)
            for s in range(rng.choice((1, 1, 2, 3))):
                sub = sorted(rng.sample(range(len(docs)), rng.randint(2, len(docs))))
                levels = sorted(rng.choices((1.0, 2.0, 3.0, 4.5), k=len(sub)), reverse=True)
                for i, level in zip(sub, levels, strict=True):
                    lines.append((qid, f"u{g}", f"s{s}", docs[i],
                                  0.0 if i >= len(docs) - n_nonrel else level))
        if rng.random() < 0.8:
            shown = rng.sample(pool, rng.randint(1, len(pool)))
            ranking[qid] = {d: float(rng.choice((1, 2, 2, 3, 5, 8))) for d in shown}
    ranking["unjudged"] = {"d01": 1.0}
    return lines, ranking


def _write(path: Path, lines: list[Line], keep: set[str] | None = None, *,
           qrels: bool = False) -> Path:
    with path.open("w", encoding="utf-8") as f:
        for qid, jg, jsg, doc, level in lines:
            if keep is None or qid in keep:
                f.write(f"{qid} {jg} {doc} {level:g}\n" if qrels
                        else f"{qid} {jg} {jsg} {doc} {level:g}\n")
    return path


def _compare(binary: Path, tmp_path: Path, kind: str, lines: list[Line],
             ranking: dict[str, dict[str, float]], flags: list[str]) -> int:
    """Run both, assert every line trec_eval prints equal; the number of values compared."""
    run_file = write_run(tmp_path / "run", ranking)
    every = _write(tmp_path / "p", lines, qrels=kind == "qrels_prefs")
    answered = every if "-c" in flags else _write(tmp_path / "p_answered", lines,
                                                  set(ranking), qrels=kind == "qrels_prefs")
    args = ["-q", "-R", kind, "-m", "all_prefs", *flags]
    want = parse_q(run(binary, [*args, str(answered), str(run_file)]))
    out = io.StringIO()
    assert main(["eval", *args, "--trec-eval", "10.0", str(every), str(run_file)],
                out=out) == 0
    assert set(parse_q(out.getvalue())) == set(want)  # the same lines, then exact values:
    options = EvalOptions(trec_eval="10.0", complete="-c" in flags,
                          depth=5 if "-M5" in flags else None, judged_only="-J" in flags)
    res = evaluate_preferences(read_prefs(every, kind=kind), read_run(run_file),
                               options=options)
    for m in PREF_MEASURES:
        per_query = dict(zip(res.query_ids["sys"], res.values[("sys", m.name)], strict=True))
        for (name, qid), value in want.items():
            if name == m.trec:
                got = res.mean("sys", m.measure) if qid == "all" else per_query[qid]
                assert abs(got - float(value)) < 1e-9, (m.trec, qid, got, value)
    return len(want)


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("flags", [[], ["-c"], ["-M5"], ["-J", "-l2"]])
def test_all_prefs_match_trec_eval_10(trec_eval_10_precise, tmp_path, seed, flags) -> None:
    lines, ranking = _dataset(seed)
    assert _compare(trec_eval_10_precise, tmp_path, "prefs", lines, ranking, flags) > 40


@pytest.mark.parametrize("flags", [[], ["-c", "-M5"]])
def test_qrels_prefs_match_trec_eval_10(trec_eval_10_precise, tmp_path, flags) -> None:
    """Qrels read as preferences: the iter column is the group (here 0-3 levels, ties)."""
    lines, ranking = _dataset(7)
    one_sub = [(q, jg, "s0", d, lvl) for q, jg, _, d, lvl in lines]
    seen: set[tuple[str, str, str]] = set()
    unique = [x for x in one_sub if (x[0], x[1], x[3]) not in seen
              and not seen.add((x[0], x[1], x[3]))]  # type: ignore[func-returns-value]
    assert _compare(trec_eval_10_precise, tmp_path, "qrels_prefs", unique, ranking,
                    flags) > 50


def _values(text: bytes, ranking: dict[str, float]) -> dict[str, float]:
    from ireval_core.data import Run

    res = evaluate_preferences(read_prefs(text, name="p"),
                               Run.from_dict({"1": ranking}, name="r"))
    return {m.trec: float(res.values[("r", m.name)][0]) for m in PREF_MEASURES}


def test_trec_evals_examples_of_how_preferences_are_formed() -> None:
    """get_prefs.c's examples: 6 documents ranked in one sub-group give 13 preferences;
    two sub-groups 1>2>3 and 4>1>2 give 1>2 once and, transitively, 4>3: 6 (the comment
    in get_prefs.c says 5, forgetting 4>3; the built trec_eval 10.0 prints 6); 1>2>3 and
    2>4 give 1>4 but nothing between 3 and 4."""
    one = b"".join(b"1 u s d%d %s\n" % (i, v) for i, v in
                   enumerate((b"3", b"2", b"0", b"6", b"0", b"2"), start=1))
    assert _values(one, {"zz": 1.0})["prefs_num_prefs_poss"] == 13
    two = b"1 u s1 d1 3\n1 u s1 d2 2\n1 u s1 d3 1\n1 u s2 d1 2\n1 u s2 d2 1\n1 u s2 d4 3\n"
    assert _values(two, {"zz": 1.0})["prefs_num_prefs_poss"] == 6
    transitive = b"1 u s1 d1 3\n1 u s1 d2 2\n1 u s1 d3 1\n1 u s2 d2 5\n1 u s2 d4 4\n"
    got = _values(transitive, {"d4": 2.0, "d1": 1.0})  # d4 above d1: 1>4 fails
    assert got["prefs_num_prefs_poss"] == 5 and got["prefs_num_prefs_ful"] == 2  # 1>2, 1>3
    assert got["prefs_num_prefs_ful_ret"] == 0 and got["prefs_simp_ret"] == 0.0


def test_ties_are_broken_by_document_id_ascending_for_preferences() -> None:
    """form_prefs_counts.c ranks tied scores by docno ascending (trec_eval's other
    measures: descending): with a and b tied, a is ranked first and a>b is fulfilled."""
    got = _values(b"1 u s a 2\n1 u s b 1\n", {"a": 1.0, "b": 1.0})
    assert got["prefs_simp_ret"] == 1.0
    got = _values(b"1 u s a 1\n1 u s b 2\n", {"a": 1.0, "b": 1.0})
    assert got["prefs_simp_ret"] == 0.0


def test_contradicting_sub_groups_are_an_error() -> None:
    with pytest.raises(PreferenceError, match="contradict each other \\(documents 'a' and 'b'"):
        _values(b"1 u s1 a 2\n1 u s1 b 1\n1 u s2 b 2\n1 u s2 a 1\n", {"a": 1.0})
    with pytest.raises(PreferenceError, match="level 0 in one sub-group"):
        _values(b"1 u s1 a 0\n1 u s1 b 1\n1 u s2 a 2\n1 u s2 c 1\n", {"a": 1.0})


@pytest.mark.parametrize(("kind", "content", "message"), [
    ("prefs", b"1 u s d1 1\n1 u s d1 2\n", "p:2: query '1', group 'u', sub-group 's', "
     "document 'd1' is judged again (first on line 1): '1 u s d1 2'"),
    ("prefs", b"1 u s d1 1\n\n1 u d2 1\n", "p:3: expected 5 columns (qid jg jsg docid "
     "rel_level), got 4: '1 u d2 1'"),
    ("prefs", b"1 u s d1 x\n", "p:1: expected a numeric relevance level in column 5, got "
     "'x': '1 u s d1 x'"),
    ("qrels_prefs", b"1 0 d1 1 9\n", "p:1: expected 4 columns (qid iter docid rel), got 5: "
     "'1 0 d1 1 9'"),
    ("qrels_prefs", b" \n", "p: file is empty; expected preference lines 'qid iter docid "
     "rel'"),
])
def test_a_bad_preference_file_is_one_line(kind: str, content: bytes, message: str) -> None:
    with pytest.raises(FormatError) as caught:
        read_prefs(content, kind=kind, name="p")
    assert str(caught.value) == message


def test_comments_follow_10_and_measures_have_both_names(tmp_path, capsys) -> None:
    text = b"# a\n1 u s d#1 1\n1 u s d2 0\n"
    assert read_prefs(text, name="p", comments=True).docid.tolist() == ["d#1", "d2"]
    with pytest.raises(FormatError, match=r"p:1: expected 5 columns .*comment for trec_eval"):
        read_prefs(text, name="p")
    assert pref_measure("PrefAvgJGRnonrelRet") is pref_measure("prefs_avgjg_Rnonrel_ret")
    (tmp_path / "p").write_bytes(text)
    (tmp_path / "r").write_text("1 Q0 d2 1 2 s\n1 Q0 d#1 2 1 s\n")
    out = io.StringIO()
    assert main(["eval", "-R", "prefs", "-m", "prefs_simp", "-m", "prefs_num_prefs_poss",
                 "--trec-eval", "10.0", str(tmp_path / "p"), str(tmp_path / "r")],
                out=out) == 0
    assert out.getvalue() == ("prefs_num_prefs_poss  \tall\t1\n"  # trec_eval's order
                              "prefs_simp            \tall\t0.0000\n")
