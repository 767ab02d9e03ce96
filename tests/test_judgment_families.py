"""Preference and judgment-group measures as registered families (issue 19).

The registry holds trec_eval's 14 ``all_prefs`` measures and its 3 ``*_avgjg`` families with
``Family.judgments`` saying what they are computed from; the property tests of
``test_registry`` leave them out (they call kernels on a joined ranking), these cover them:
names and trec_eval aliases, definitions, the ``measures`` listing, that ``evaluate`` refuses
them, and that their evaluators key results by the registered specs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from _cli import run as in_process

from ireval_core import EvalOptions, Qrels, Run, UnknownMeasureError, evaluate
from ireval_core.io.prefs import read_prefs
from ireval_core.io.qrels_jg import read_qrels_jg
from ireval_core.judgment_groups import evaluate_judgment_groups, per_group
from ireval_core.measures import FAMILIES, JUDGMENTS, families, parse_measure
from ireval_core.preferences import ALL_PREFS, PREF_MEASURES, evaluate_preferences

ROOT = Path(__file__).resolve().parents[1]
TREC10 = ROOT.parent.parent / "shared" / "conformance" / "trec_eval-10.0"
if not TREC10.is_dir():
    TREC10 = Path("/work/shared/conformance/trec_eval-10.0")

# trec_eval's all_prefs in its print order, and the ireval names
PREFS = ["NumPrefs", "NumPrefsFul", "NumPrefsFulRet", "PrefSimp", "PrefPair", "PrefAvgJG",
         "PrefAvgJGRnonrel", "PrefSimpRet", "PrefPairRet", "PrefAvgJGRet",
         "PrefAvgJGRnonrelRet", "PrefSimpImp", "PrefPairImp", "PrefAvgJGImp"]


def test_registry_holds_the_14_preference_and_3_judgment_group_families() -> None:
    assert list(families("prefs")) == PREFS
    assert [f.trec for f in families("prefs").values()] == list(ALL_PREFS)
    assert list(families("qrels_jg")) == ["APAvgJG", "PAvgJG", "RprecAvgJG"]
    assert {f.base for f in families("qrels_jg").values()} == {"AP", "P", "Rprec"}
    assert set(FAMILIES) == {*families("qrels"), *families("prefs"), *families("qrels_jg")}
    assert [m.name for m in PREF_MEASURES] == PREFS  # the preferences module's view


@pytest.mark.parametrize(("trec", "spec"), [
    *((t, n) for t, n in zip(ALL_PREFS, PREFS, strict=True)),
    ("map_avgjg", "APAvgJG"),
    ("P_avgjg_5", "PAvgJG@5"),
    ("P_avgjg_1000", "PAvgJG@1000"),
    ("Rprec_mult_avgjg_0.20", "RprecAvgJG(mult=0.2)"),
    ("Rprec_mult_avgjg_1.00", "RprecAvgJG"),
    ("Rprec_mult_avgjg_2.00", "RprecAvgJG(mult=2)"),
    ("PAvgJG(rel=2)@10", "PAvgJG(rel=2)@10"),
    ("prefavgjgimp", "PrefAvgJGImp"),
])
def test_trec_eval_names_are_aliases(trec: str, spec: str) -> None:
    m = parse_measure(trec)
    assert str(m) == spec
    assert parse_measure(str(m)) == m


@pytest.mark.parametrize("bad", ["PAvgJG", "PrefSimp@10", "APAvgJG@5", "PrefSimp(rel=2)"])
def test_wrong_cutoffs_and_parameters_are_refused(bad: str) -> None:
    with pytest.raises(UnknownMeasureError):
        parse_measure(bad)


@pytest.mark.parametrize("name", [*families("prefs"), *families("qrels_jg")])
def test_every_definition_says_what_it_needs(name: str) -> None:
    fam = FAMILIES[name]
    spec = f"{name}@10" if fam.cutoff == "required" else name
    text = parse_measure(spec).definition(EvalOptions(rel_level=2.0))
    assert not re.search(r"\{[a-z_]+\}", text), text
    assert text.endswith("; needs " + JUDGMENTS[fam.judgments])
    assert fam.aggregate_rule in text
    assert ("-R prefs" in text and "-R qrels_prefs" in text) if fam.judgments == "prefs" \
        else "-R qrels_jg" in text
    if fam.judgments == "qrels_jg":
        assert "grade >= 2" in text
    # a definition from the registry, not only the name
    assert len(text) > 150


def test_counts_are_summed_and_ratios_averaged() -> None:
    for name, fam in families("prefs").items():
        summed = name.startswith("Num")
        assert fam.aggregate_rule == ("summed over queries" if summed else
                                      "arithmetic mean over the judged queries evaluated")
        assert fam.bounds == ((0.0, None) if summed else (0.0, 1.0))


@pytest.mark.parametrize("spec", ["PrefSimp", "prefs_avgjg", "map_avgjg", "PAvgJG@5"])
def test_evaluate_refuses_them_saying_which_judgments(spec: str) -> None:
    qrels = Qrels.from_dict({"1": {"a": 1.0}})
    run = Run.from_dict({"1": {"a": 1.0}}, name="r")
    with pytest.raises(UnknownMeasureError, match=r"is not computed from a run joined with "
                       r"qrels: it needs .*-R (prefs|qrels_jg)"):
        evaluate(qrels, run, ["AP", spec])


PREFS_TEXT = b"1 u s a 2\n1 u s b 1\n1 u s c 0\n2 u s a 1\n2 u s d 0\n"
RUN = Run.from_dict({"1": {"b": 3.0, "a": 2.0, "c": 1.0}, "2": {"d": 2.0, "a": 1.0}},
                    name="r")


def test_evaluation_definition_works_for_preferences() -> None:
    res = evaluate_preferences(read_prefs(PREFS_TEXT, name="p"), RUN)
    assert [str(m) for m in res.measures] == PREFS
    for m in res.measures:
        assert res.definition(m) == parse_measure(str(m)).definition(res.options)
    # query 1: a>b (failed), a>c, b>c; query 2: a>d (failed): 2 of 4 fulfilled
    assert res.mean("r", "NumPrefs") == 4.0 and res.mean("r", "NumPrefsFul") == 2.0
    np.testing.assert_allclose(res.values[("r", "PrefSimp")], [2 / 3, 0.0])
    # a spec or a trec_eval name selects the same measure, and the same values
    by_name = evaluate_preferences(read_prefs(PREFS_TEXT, name="p"), RUN,
                                   ["prefs_simp", parse_measure("PrefPair")])
    assert [str(m) for m in by_name.measures] == ["PrefSimp", "PrefPair"]
    for m in ("PrefSimp", "PrefPair"):
        np.testing.assert_array_equal(by_name.values[("r", m)], res.values[("r", m)])


def test_judgment_group_measures_equal_the_per_group_means() -> None:
    groups = read_qrels_jg(b"1 A a 1\n1 A b 0\n1 B a 0\n1 B b 1\n1 B c 1\n2 A d 1\n",
                           name="jg")
    specs = ["APAvgJG", "PAvgJG@2", "RprecAvgJG(mult=2)"]
    res = evaluate_judgment_groups(groups, RUN, specs)
    assert [str(m) for m in res.measures] == specs
    for spec in specs:
        m = parse_measure(spec)
        assert re.match(re.escape(str(per_group(m))) + "[ ,]", res.definition(m))  # averaged
        assert "against each judgment group's judgments alone" in res.definition(m)
        by_group = [evaluate(q, RUN, [per_group(m)]).per_query("r", per_group(m))
                    for q in groups.values()]
        # query 1 is judged by A and B, query 2 by A only
        want = [(by_group[0]["1"] + by_group[1]["1"]) / 2, by_group[0]["2"]]
        np.testing.assert_allclose(res.values[("r", spec)], want, rtol=0, atol=1e-15)
    # the measure itself (AP, P@k) gives the same values, keyed by its own name
    base = evaluate_judgment_groups(groups, RUN, ["AP"])
    np.testing.assert_array_equal(base.values[("r", "AP")], res.values[("r", "APAvgJG")])


def _cli(*args: object) -> subprocess.CompletedProcess[str]:
    """The command line, in this process (:func:`_cli.run`)."""
    return in_process(*args)


def test_measures_listing_has_a_section_per_kind_of_judgments() -> None:
    out = _cli("measures")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    prefs_at = text.index("preference measures, computed from other judgments than qrels")
    jg_at = text.index("judgment-group measures, computed from other judgments than qrels")
    assert text.index("  AP(rel=None)") < text.index("  all_trec") < prefs_at < jg_at
    head = " ".join(text[prefs_at:text.index("  NumPrefs ")].split())
    assert "-R prefs ('qid jg jsg docid rel_level') or -R qrels_prefs" in head
    for name, fam in families("prefs").items():
        assert text.index(f"  {name}   [trec_eval: {fam.trec}]\n") > prefs_at
    assert "  APAvgJG(rel=None)   [trec_eval: map_avgjg]" in text[jg_at:]
    assert "  PAvgJG(rel=None)@k   [trec_eval: P_avgjg_k]" in text[jg_at:]
    assert "  RprecAvgJG(rel=None, mult=1.0)   [trec_eval: Rprec_mult_avgjg_x]" in text[jg_at:]
    assert "-R qrels_jg ('qid jg docid rel'" in " ".join(text[jg_at:].split())


def test_eval_without_the_judgments_says_which_r_to_add() -> None:
    out = _cli("eval", TREC10 / "qrels.test", TREC10 / "results.test", "-m", "prefs_simp")
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "needs preference judgments: -R prefs" in out.stderr


# ----------------------------------------------------------------------------- from plain qrels


def test_qrels_keep_the_iter_column_only_when_it_varies() -> None:
    from ireval_core.io import read_qrels

    assert read_qrels(TREC10 / "qrels.test").groups is None  # iter 0 on every line
    q = read_qrels(b"2 B c 1\n1 A b 0\n1 B a 1\n", name="q")
    assert q.groups is not None
    # in the entries' order (query, then document), not the file's
    assert q.groups.to_pylist() == ["B", "A", "B"] and q.to_dict()["1"] == {"a": 1.0, "b": 0.0}
    assert read_qrels(b"qid,docid,rel\n1,a,1\n", name="q.csv").groups is None


def _grouped(tmp_path: Path) -> Path:
    """trec_eval's qrels.test with iter set to one of three groups per line (seeded)."""
    import random

    rng = random.Random(5)
    lines = [f"{q} {rng.choice('xyz')} {d} {r}\n" for q, _, d, r in
             (line.split() for line in (TREC10 / "qrels.test").read_text().splitlines())]
    path = tmp_path / "qrels.grouped"
    path.write_text("".join(lines))
    return path


def test_prefs_and_groups_from_qrels_equal_the_readers(tmp_path: Path) -> None:
    """prefs_from_qrels / judgment_groups of read_qrels give the values of read_prefs
    (kind=qrels_prefs) / read_qrels_jg, the CLI's path tested against trec_eval 10.0."""
    from ireval_core.io import read_qrels, read_runs
    from ireval_core.io.prefs import prefs_from_qrels
    from ireval_core.io.qrels_jg import judgment_groups

    runs = read_runs(TREC10 / "results.test")
    jg_specs = ["APAvgJG", "PAvgJG@5", "PAvgJG@100", "RprecAvgJG(mult=0.6)"]
    for path in (TREC10 / "qrels.test", _grouped(tmp_path)):
        for options in (EvalOptions(), EvalOptions(complete=True, depth=20)):
            got = evaluate_preferences(prefs_from_qrels(read_qrels(path)), runs,
                                       options=options)
            want = evaluate_preferences(read_prefs(path, kind="qrels_prefs"), runs,
                                        options=options)
            assert got.values.keys() == want.values.keys()
            for key, v in want.values.items():
                np.testing.assert_array_equal(got.values[key], v, err_msg=str(key))
            got = evaluate_judgment_groups(judgment_groups(read_qrels(path)), runs, jg_specs,
                                           options=options)
            want = evaluate_judgment_groups(read_qrels_jg(path), runs, jg_specs,
                                            options=options)
            for key, v in want.values.items():
                np.testing.assert_array_equal(got.values[key], v, err_msg=str(key))
    assert list(judgment_groups(read_qrels(_grouped(tmp_path)))) == ["x", "y", "z"]


def test_rnonrel_is_computed_only_when_asked() -> None:
    """trec_eval computes each measure asked for: PrefSimp of preferences where
    prefs_avgjg_Rnonrel is undefined (a level below 0) is a number, the latter an error."""
    from ireval_core.preferences import PreferenceError

    levels = {"a": 3, "b": 2, "c": 1, "d": 0, "e": 0, "f": 0, "g": -1}
    prefs = read_prefs("".join(f"1 g s {d} {v}\n" for d, v in levels.items()).encode(),
                       name="p")
    run = Run.from_dict({"1": {"a": 3.0, "c": 2.0, "b": 1.0}}, name="r")
    res = evaluate_preferences(prefs, run, ["PrefSimp"])
    # 18 preferences; fulfilled: a>c, a>b (b>c is not), and a, b, c over d, e, f, g (12);
    # d, e, f > g: neither retrieved, failed. R = 3 relevant, 4 below: the lowest level
    # (g) has fewer than R documents, where trec_eval's Rnonrel reads past its data
    assert res.values[("r", "PrefSimp")].tolist() == [14 / 18]
    with pytest.raises(PreferenceError, match="reads past its data"):
        evaluate_preferences(prefs, run, ["PrefAvgJGRnonrel"])
