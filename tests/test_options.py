"""EvalOptions: the one carrier of the evaluation options, from URL or CLI to the kernels."""

from __future__ import annotations

import argparse
from dataclasses import fields
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ireval_core import EvalOptions, evaluate
from ireval_core.cli import _build_parser
from ireval_core.io import read_qrels, read_runs
from ireval_core.options import (
    IDCG_ZERO_POLICIES,
    TREC_EVAL_VERSIONS,
    add_arguments,
    from_arguments,
)

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"

options_strategy = st.builds(
    EvalOptions,
    complete=st.booleans(),
    rel_level=st.one_of(st.integers(-3, 5), st.floats(-3, 5, allow_nan=False)),
    depth=st.one_of(st.none(), st.integers(1, 10_000)),
    judged_only=st.booleans(),
    idcg_zero=st.sampled_from(IDCG_ZERO_POLICIES),
    trec_eval=st.sampled_from(TREC_EVAL_VERSIONS),
)


def test_defaults_are_trec_eval_and_hashable() -> None:
    o = EvalOptions()
    assert (o.complete, o.rel_level, o.depth, o.judged_only, o.idcg_zero, o.trec_eval) == (
        False, 1.0, None, False, "zero", "9.0.8")
    assert hash(o) == hash(EvalOptions()) and o == EvalOptions()
    assert {o: 1}[EvalOptions(rel_level=1)] == 1  # an int level is the same key as 1.0
    assert o.trec_eval_flags() == ""
    with pytest.raises(AttributeError):
        o.rel_level = 2.0  # type: ignore[misc]


@pytest.mark.parametrize(("kwargs", "param"), [
    ({"depth": 0}, "depth"), ({"depth": -3}, "depth"), ({"depth": 2.5}, "depth"),
    ({"depth": True}, "depth"), ({"rel_level": float("nan")}, "rel_level"),
    ({"rel_level": "1"}, "rel_level"), ({"rel_level": True}, "rel_level"),
    ({"idcg_zero": "one"}, "idcg_zero"), ({"complete": 1}, "complete"),
    ({"judged_only": "yes"}, "judged_only"), ({"trec_eval": "9"}, "trec_eval"),
    ({"trec_eval": 10.0}, "trec_eval"),
])
def test_invalid_values_name_the_parameter(kwargs: dict, param: str) -> None:
    with pytest.raises(ValueError, match=rf"^The '{param}' parameter of EvalOptions must be "
                                         r".+\. Got .+ instead\.$"):
        EvalOptions(**kwargs)


def test_summary_and_describe_say_every_setting() -> None:
    assert EvalOptions().summary() == (
        "relevant: grade >= 1 · queries in both run and qrels · whole ranking · trec_eval 9.0.8")
    o = EvalOptions(complete=True, rel_level=2, depth=100, judged_only=True, idcg_zero="drop",
                    trec_eval="10.0")
    assert o.summary() == ("relevant: grade >= 2 · every qrels query (missing = 0) · top 100 · "
                           "unjudged removed · IDCG = 0: query dropped · trec_eval 10.0")
    text = o.describe()
    for part in ("every qrels query", "unjudged: removed", "grade >= 2", "top 100",
                 "query dropped", "semantics: trec_eval 10.0"):
        assert part in text
    assert "semantics: trec_eval 9.0.8" in EvalOptions().describe()
    assert o.trec_eval_flags() == "-c -l 2 -M 100 -J"


@given(options_strategy)
def test_query_params_round_trip(o: EvalOptions) -> None:
    params = o.to_query_params()
    assert all(isinstance(v, str) for v in params.values())
    back, problems = EvalOptions.from_query_params(params)
    assert problems == []
    assert back == o


def test_default_options_make_a_clean_url() -> None:
    assert EvalOptions().to_query_params() == {}
    assert EvalOptions.from_query_params({}) == (EvalOptions(), [])


def test_bad_query_params_keep_defaults_and_say_why() -> None:
    o, problems = EvalOptions.from_query_params(
        {"rel": "abc", "depth": "-5", "complete": "maybe", "idcg": "x", "judged": "1",
         "unrelated": "7"})
    assert o == EvalOptions(judged_only=True)
    assert len(problems) == 4
    assert any(p.startswith("rel='abc'") and "finite number" in p for p in problems)
    assert any(p.startswith("depth='-5'") and "int >= 1" in p for p in problems)
    o, problems = EvalOptions.from_query_params({"te": "11"})
    assert o == EvalOptions() and problems == ["te='11': expected one of '9.0.8', '10.0'"]
    # lists (as st.query_params.to_dict() never gives, but get_all does) use the last value
    assert EvalOptions.from_query_params({"rel": ["1", "3"]})[0].rel_level == 3.0


FIELDS = tuple(f.name for f in fields(EvalOptions))

NOT_DEFAULT = {"complete": True, "rel_level": 2.0, "depth": 100, "judged_only": True,
               "idcg_zero": "drop", "trec_eval": "10.0"}
"""A value other than the default of every option (a new option is added here)."""


def _option_dests(parser: argparse.ArgumentParser) -> dict[str, tuple[str, ...]]:
    return {a.dest: tuple(a.option_strings) for a in parser._actions if a.dest in FIELDS}


def test_every_cli_subcommand_has_the_same_option_flags() -> None:
    parser = _build_parser()
    subs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    reference = argparse.ArgumentParser()
    add_arguments(reference)
    expected = _option_dests(reference)
    assert set(expected) == set(FIELDS)  # every option has its flag
    for name in ("eval", "compare", "report", "meeting-report", "judge-queue"):
        assert _option_dests(subs.choices[name]) == expected, name


def test_cli_flags_give_the_options_object() -> None:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["-c", "-l", "2", "-M", "50", "-J", "--idcg-zero", "drop",
                              "--trec-eval", "10.0"])
    assert from_arguments(args) == EvalOptions(True, 2.0, 50, True, "drop", "10.0")
    assert EvalOptions.from_query_params({"te": "10"})[0].trec_eval == "10.0"
    assert from_arguments(parser.parse_args([])) == EvalOptions()


@pytest.mark.parametrize("name", FIELDS)
def test_every_option_is_read_from_the_cli_and_said_in_words(name: str) -> None:
    """Each option, set alone: from_arguments reads it, and the options line (summary)
    and the caption of tables and exports (describe) say it."""
    assert set(NOT_DEFAULT) == set(FIELDS)
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = vars(parser.parse_args([])) | {name: NOT_DEFAULT[name]}
    o = from_arguments(argparse.Namespace(**args))
    assert o == EvalOptions(**{name: NOT_DEFAULT[name]})
    assert o.summary() != EvalOptions().summary()
    assert o.describe() != EvalOptions().describe()


@pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(), reason="sample data not generated")
def test_relevance_level_changes_binary_measures_only() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [r for p in sorted(SAMPLE.glob("run_*.txt")) for r in read_runs(p)]
    one = evaluate(qrels, runs, ["P@10", "nDCG@10"])
    zero = evaluate(qrels, runs, ["P@10", "nDCG@10"], options=EvalOptions(rel_level=0))
    # the numbers of issue 8: bm25 P@10 is 0.4746 at grade >= 1, 0.8593 at grade >= 0
    assert round(one.mean("bm25", "P@10"), 4) == 0.4746
    assert round(zero.mean("bm25", "P@10"), 4) == 0.8593
    assert one.mean("bm25", "nDCG@10") == zero.mean("bm25", "nDCG@10")
    assert one.options == EvalOptions() and zero.options.rel_level == 0.0


def test_evaluate_refuses_anything_but_the_options_object() -> None:
    from ireval_core import Qrels, Run
    qrels = Qrels.from_dict({"q": {"d": 1}})
    run = Run.from_dict({"q": {"d": 1.0}}, name="r")
    with pytest.raises(TypeError, match="'options' parameter of evaluate must be an "
                                        "EvalOptions"):
        evaluate(qrels, run, ["P@1"], options={"rel_level": 2})  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        evaluate(qrels, run, ["P@1"], rel_level=2)  # type: ignore[call-arg]
    res = evaluate(qrels, run, ["P@1"])
    with pytest.raises(ValueError, match="read-only"):
        res.values[("r", "P@1")][0] = 0.0
