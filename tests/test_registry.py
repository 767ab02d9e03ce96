"""The measure registry: parsing, text round trips, messages, and properties of every family.

The property tests iterate ``ireval_core.measures.FAMILIES`` at collection time, so a family
registered later (pairwise AUC, GAUC, PNR, ...) is covered without editing this file: values
within ``family.bounds``, a perfect ranking scoring 1 where ``family.perfect_is_one``, and
invariance to the order of queries and to strictly increasing transforms of the scores.
"""

from __future__ import annotations

import math
import random
import re
from functools import cache

import numpy as np
import pytest

from ireval_core import Qrels, Run, UnknownMeasureError, evaluate, parse_measure
from ireval_core.measures import FAMILIES, Family, Measure, families
from ireval_core.options import EvalOptions

Nested = dict[str, dict[str, float]]

# ----------------------------------------------------------------------------- parsing

CANONICAL = {
    "nDCG@10": "nDCG@10",
    "P(rel=2)@5": "P(rel=2)@5",
    "nDCG(gain=exp, ideal=run)@10": "nDCG(gain=exp,ideal=run)@10",
    "nDCG(ideal=run,gain=exp)@10": "nDCG(gain=exp,ideal=run)@10",
    "nDCG(gain=linear,discount=log2,ideal=qrels)@10": "nDCG@10",
    "DCG(discount=jk)@6": "DCG(discount=jk)@6",
    "nDCG(gain={3:10, 0:0,1:1,2:3})@10": "nDCG(gain={0:0,1:1,2:3,3:10})@10",
    "AP": "AP",
    "AP@100": "AP@100",
    "RR@10": "RR@10",
    "IPrec@0.3": "IPrec@0.3",
    "IPrec@0": "IPrec@0",
    "IPrec@1": "IPrec@1",
    "F(beta=2)@10": "F(beta=2)@10",
    "F(beta=0.5)": "F(beta=0.5)",
    "ERR(max_grade=4)@10": "ERR(max_grade=4)@10",
    "RBP(p=0.5)@10": "RBP(p=0.5)@10",
    "RBP(p=0.8)": "RBP",
    "bpref(form=original)": "bpref(form=original)",
    "P(rel=2.5)@5": "P(rel=2.5)@5",
    " ndcg @ 10 ": "nDCG@10",  # names are case-insensitive, spaces ignored
    "MAP": "AP",
    "MRR@10": "RR@10",
    # every trec_eval name ireval accepts
    "map": "AP",
    "map_cut_10": "AP@10",
    "P_5": "P@5",
    "P_10": "P@10",
    "recall_100": "R@100",
    "ndcg": "nDCG",
    "ndcg_cut_10": "nDCG@10",
    "recip_rank": "RR",
    "Rprec": "Rprec",
    "bpref": "bpref",
    "iprec_at_recall_0.00": "IPrec@0",
    "iprec_at_recall_0.30": "IPrec@0.3",
    "iprec_at_recall_1.00": "IPrec@1",
    "success_5": "Success@5",
    "set_F": "F",
    "set_P": "P",
    "set_recall": "R",
    "11pt_avg": "11pt",
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "num_nonrel_judged_ret": "NumNonRelRet",
}


@pytest.mark.parametrize(("text", "canonical"), CANONICAL.items(),
                         ids=[f"canonical-{t.strip()}" for t in CANONICAL])
def test_text_round_trip(text: str, canonical: str) -> None:
    m = parse_measure(text)
    assert str(m) == canonical
    assert parse_measure(str(m)) == m
    assert parse_measure(m) is m
    assert hash(parse_measure(canonical)) == hash(m)


ALIASES = [
    ("ndcg_cut_10", "nDCG@10"), ("map", "AP"), ("P_10", "P@10"), ("recip_rank", "RR"),
    ("iprec_at_recall_0.30", "IPrec@0.3"), ("map_cut_5", "AP@5"), ("recall_20", "R@20"),
    ("success_1", "Success@1"), ("set_F", "F(beta=1)"), ("NDCG@3", "nDCG@3"),
    ("MRR", "RR"), ("HitRate@5", "Success@5"), ("Precision@5", "P@5"), ("Recall@5", "R@5"),
]


@pytest.mark.parametrize(("alias", "name"), ALIASES, ids=[f"alias-{a}" for a, _ in ALIASES])
def test_aliases_are_the_same_measure(alias: str, name: str) -> None:
    assert parse_measure(alias) == parse_measure(name)


def test_parameters_change_identity() -> None:
    assert parse_measure("P(rel=2)@5") != parse_measure("P@5")
    assert parse_measure("nDCG(ideal=run)@10") != parse_measure("nDCG@10")
    assert parse_measure("nDCG@10") != parse_measure("nDCG@5") != parse_measure("nDCG")
    assert parse_measure("nDCG@10").k == 10
    assert parse_measure("nDCG(gain=exp)@10").get("gain") == "exp"
    assert parse_measure("nDCG@10").get("gain") == "linear"  # the default


SUGGESTIONS = [("nDGC@10", "nDCG"), ("ndgc_cut_10", "ndcg_cut_10"), ("bperf", "bpref"),
               ("MAPP", "MAP"), ("precison@5", "Precision"), ("recal@10", "Recall")]


@pytest.mark.parametrize(("text", "nearest"), SUGGESTIONS,
                         ids=[f"suggest-{t}" for t, _ in SUGGESTIONS])
def test_unknown_name_suggests_the_nearest(text: str, nearest: str) -> None:
    with pytest.raises(UnknownMeasureError) as info:
        parse_measure(text)
    hint = re.search(r"Did you mean '([^']+)'\?", str(info.value))
    assert hint is not None and hint[1] == nearest
    assert repr(text.split("@")[0]) in str(info.value)


BAD = [
    ("nDCG(gain=cubic)@10", r"'gain' parameter of nDCG .*'cubic'"),
    ("nDCG(discount=ln)@10", r"'discount' parameter of nDCG must be one of log2, jk\. Got 'ln'"),
    ("nDCG(ideal=best)@10", r"'ideal' parameter of nDCG must be one of qrels, run"),
    ("nDCG(foo=1)", r"nDCG has no parameter 'foo' \(valid: gain, discount, ideal\)"),
    ("P(rel)@5", r"name=value; got 'rel'"),
    ("P(rel=x)@5", r"^The 'rel' parameter of P must be a finite number\. Got 'x' instead\.$"),
    ("F(beta=abc)@5", r"'beta' parameter of F must be a finite number > 0\. Got 'abc'"),
    ("F(beta=-1)@5", r"'beta' parameter of F must be a finite number > 0\. Got -1 instead"),
    ("nDCG(gain={})@3", r"'gain' parameter of nDCG must be linear, exp or a non-empty map "
                        r"\{grade:gain,\.\.\.\}\. Got '\{\}' instead"),
    ("P@0", r"^The 'k' parameter of P must be an int >= 1\. Got 0 instead\.$"),
    ("P@2.5", r"'k' parameter of P must be an int >= 1\. Got 2\.5 instead"),
    ("IPrec@1.5", r"'k' parameter of IPrec must be a recall level in \[0, 1\]\. Got 1\.5"),
    ("IPrec", r"IPrec needs a cutoff, e\.g\. IPrec@0\.5"),
    ("Rprec@10", r"Rprec takes no cutoff"),
    ("bpref@10", r"bpref takes no cutoff"),
    ("", r"Unknown measure ''"),
    ("nDCG@10(gain=exp)", r"Unknown measure"),
]


@pytest.mark.parametrize(("text", "message"), BAD, ids=[f"bad-{t or 'empty'}" for t, _ in BAD])
def test_bad_parameters_and_cutoffs_raise_clearly(text: str, message: str) -> None:
    with pytest.raises(UnknownMeasureError, match=message):
        parse_measure(text)


OUT_OF_RANGE = [  # (spec, message it should raise with, what goes wrong today)
    ("RBP(p=1.5)", r"'p' parameter of RBP", "persistence outside [0, 1) gives a negative RBP"),
    ("ERR(max_grade=0)@10", r"'max_grade' parameter of ERR", "a top grade 0 makes ERR 0"),
    ("P(rel=nan)@5", r"'rel' parameter of P", "NaN is kept; parse(str(m)) != m as nan != nan"),
    ("nDCG(gain=exp,gain=linear)@10", r"'gain'.* (twice|repeated|more than once)",
     "a repeated parameter silently keeps the last value"),
    ("P@-1", r"'k' parameter of P must be an int >= 1",
     "says 'Unknown measure' and suggests P_10 instead of stating the cutoff rule"),
]


@pytest.mark.parametrize(("text", "message", "why"), OUT_OF_RANGE,
                         ids=[f"rejected-{t}" for t, _, _ in OUT_OF_RANGE])
def test_out_of_range_parameters_raise(text: str, message: str, why: str) -> None:
    with pytest.raises(UnknownMeasureError, match=message):
        parse_measure(text)


# ----------------------------------------------------------------------------- the registry


def default_specs(name: str) -> list[str]:
    """A default spec per family (with a cutoff where one is required), plus @5 if optional."""
    cutoff = FAMILIES[name].cutoff
    if cutoff == "required":
        return [f"{name}@10"]
    if cutoff == "recall":
        return [f"{name}@0.5"]
    if cutoff == "none":
        return [name]
    return [name, f"{name}@5"]


def whole_ranking_spec(name: str) -> str:
    return default_specs(name)[0]


# the property tests call kernels on a joined ranking: the families computed from qrels;
# those from preferences or judgment groups have their own (test_preferences,
# test_judgment_groups, test_judgment_families)
RANKING = families("qrels")
SPECS = [s for name in RANKING for s in default_specs(name)]
ALL_SPECS = [s for name in FAMILIES for s in default_specs(name)]
CHOICES = [f"{name}({p.name}={c})" + ("@0.5" if fam.cutoff == "recall" else
                                       "@10" if fam.cutoff == "required" else "")
           for name, fam in FAMILIES.items() for p in fam.params if p.choices
           for c in p.choices]


def test_registry_holds_the_reference_families() -> None:
    expected = {"P", "R", "F", "AP", "RR", "Rprec", "bpref", "IPrec", "11pt", "Success",
                "CG", "DCG", "nDCG", "ERR", "RBP", "Judged", "Fallout", "Accuracy",
                "NumRet", "NumRel", "NumRelRet", "NumNonRelRet"}
    assert expected <= set(FAMILIES)


@pytest.mark.parametrize("spec", ALL_SPECS + CHOICES, ids=lambda s: f"roundtrip-{s}")
def test_every_family_round_trips(spec: str) -> None:
    m = parse_measure(spec)
    assert parse_measure(str(m)) == m
    assert str(parse_measure(str(m))) == str(m)


@pytest.mark.parametrize("name", list(FAMILIES), ids=lambda n: f"definition-{n}")
def test_every_family_has_a_definition(name: str) -> None:
    fam = FAMILIES[name]
    assert fam.definition.strip()
    assert fam.aggregate_rule.strip()
    lo, hi = fam.bounds
    assert lo is None or hi is None or lo <= hi
    for spec in default_specs(name):
        m = parse_measure(spec)
        assert isinstance(m, Measure) and m.family is fam
        for options in (None, EvalOptions(rel_level=2.0)):
            text = m.definition(options)
            assert len(text) > 20
            assert fam.aggregate_rule in text
            assert not re.search(r"\{[a-z_]+\}", text), text  # every placeholder filled in
        if "rel" in [p.name for p in fam.params]:
            assert "grade >= 2" in m.definition(EvalOptions(rel_level=2.0))


# ----------------------------------------------------------------------------- properties


def make_dataset(seed: int) -> tuple[Nested, Nested]:
    rng = random.Random(7000 + seed)
    qrels: Nested = {}
    run: Nested = {}
    for i in range(rng.randint(6, 10)):
        qid = f"q{i}"
        docs = [f"d{n}" for n in rng.sample(range(200), 60)]
        n_judged = rng.randint(2, 30)
        pool = (-1, 0, 0) if i == 0 else (-1, 0, 0, 1, 1, 2, 3, 4)
        qrels[qid] = {d: float(rng.choice(pool)) for d in docs[:n_judged]}
        chosen = rng.sample(docs[: n_judged + 20], rng.randint(1, min(40, n_judged + 20)))
        tied = rng.random() < 0.5
        run[qid] = {d: (rng.randint(0, 8) / 4 if tied else rng.uniform(0.0, 10.0))
                    for d in chosen}
    run["not-judged"] = {"d1": 1.0}
    qrels["not-run"] = {"d1": 2.0}
    return qrels, run


def perfect_run(qrels: Nested) -> Nested:
    """Relevant documents by decreasing grade, then grade 0, then -1, then unjudged ones."""
    out: Nested = {}
    for qid, judged in qrels.items():
        docs = sorted(judged, key=lambda d: (-judged[d], d)) + [f"{qid}-unjudged-{i}"
                                                                 for i in range(3)]
        out[qid] = {d: float(len(docs) - i) for i, d in enumerate(docs)}
    return out


PROPERTY_SEEDS = range(4)


def _evaluate(qrels: Nested, run: Nested, specs: list[str]):
    return evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="sys"), specs)


@cache
def evaluated(seed: int, variant: str = "plain"):
    qrels, run = make_dataset(seed)
    rng = random.Random(seed)
    if variant == "shuffled":
        qrels = _shuffled(qrels, rng)
        run = _shuffled(run, rng)
    elif variant == "exp":
        run = {q: {d: math.exp(s) for d, s in docs.items()} for q, docs in run.items()}
    elif variant == "affine":
        run = {q: {d: 3 * s + 7 for d, s in docs.items()} for q, docs in run.items()}
    elif variant == "perfect":
        run = perfect_run(qrels)
    return _evaluate(qrels, run, SPECS)


def _shuffled(nested: Nested, rng: random.Random) -> Nested:
    queries = list(nested)
    rng.shuffle(queries)
    out = {}
    for q in queries:
        docs = list(nested[q].items())
        rng.shuffle(docs)
        out[q] = dict(docs)
    return out


def _values(res, spec: str) -> np.ndarray:
    return res.per_query("sys", spec).sort_index().to_numpy(dtype=np.float64)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"bounds-{s}")
def test_values_within_family_bounds(spec: str) -> None:
    lo, hi = parse_measure(spec).family.bounds
    seen = 0
    for seed in PROPERTY_SEEDS:
        for variant in ("plain", "perfect"):
            res = evaluated(seed, variant)
            values = _values(res, spec)
            values = np.append(values, res.mean("sys", spec))
            ok = values[~np.isnan(values)]
            seen += ok.size
            assert lo is None or (ok >= lo - 1e-12).all(), (seed, variant, ok.min())
            assert hi is None or (ok <= hi + 1e-12).all(), (seed, variant, ok.max())
    assert seen > 0  # not everything is NaN


PERFECT = [whole_ranking_spec(n) for n, f in RANKING.items() if f.perfect_is_one]


@pytest.mark.parametrize("spec", PERFECT, ids=lambda s: f"perfect-{s}")
def test_perfect_ranking_scores_one(spec: str) -> None:
    for seed in PROPERTY_SEEDS:
        qrels, _ = make_dataset(seed)
        series = evaluated(seed, "perfect").per_query("sys", spec)
        with_relevant = [q for q, docs in qrels.items() if max(docs.values()) >= 1]
        values = series[with_relevant].to_numpy(dtype=np.float64)
        defined = values[~np.isnan(values)]
        assert defined.size > 0
        np.testing.assert_allclose(defined, 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"query_order-{s}")
def test_invariant_to_query_and_document_order(spec: str) -> None:
    for seed in PROPERTY_SEEDS:
        plain, shuffled = evaluated(seed), evaluated(seed, "shuffled")
        assert list(plain.per_query("sys", spec).sort_index().index) == list(
            shuffled.per_query("sys", spec).sort_index().index)
        np.testing.assert_array_equal(_values(plain, spec), _values(shuffled, spec))
        np.testing.assert_array_equal(plain.mean("sys", spec), shuffled.mean("sys", spec))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"monotone_scores-{s}")
def test_invariant_to_increasing_score_transforms(spec: str) -> None:
    for seed in PROPERTY_SEEDS:
        plain = evaluated(seed)
        for variant in ("exp", "affine"):  # exp(s) and 3s + 7
            other = evaluated(seed, variant)
            np.testing.assert_array_equal(_values(plain, spec), _values(other, spec))
            np.testing.assert_array_equal(plain.mean("sys", spec), other.mean("sys", spec))


KS = list(range(1, 46))


@pytest.mark.parametrize("seed", PROPERTY_SEEDS, ids=lambda s: f"cutoff_monotone-seed{s}")
def test_recall_and_hits_grow_with_k(seed: int) -> None:
    qrels, run = make_dataset(seed)
    res = _evaluate(qrels, run, [f"R@{k}" for k in KS] + [f"P@{k}" for k in KS])
    recall = np.array([_values(res, f"R@{k}") for k in KS])
    hits = np.array([_values(res, f"P@{k}") * k for k in KS])
    assert (np.diff(recall, axis=0) >= 0).all()
    assert (np.diff(hits, axis=0) >= -1e-9).all()
    assert (np.diff(np.round(hits), axis=0) >= 0).all()
    np.testing.assert_allclose(hits, np.round(hits), atol=1e-9)  # P@k * k counts documents
    assert recall[-1].max() > 0 and hits[-1].max() >= 1  # the data has hits


# ----------------------------------------------------------------------------- declared facts


def test_a_family_must_declare_its_facts():
    """prefix, monotone and explained have no default: a family without them is refused,
    and an aggregate without its form over partitions (or the reverse) too."""
    ap = FAMILIES["AP"]
    with pytest.raises(TypeError, match="prefix"):
        Family("New", ap.kernel, "new", monotone=False, explained=False)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="aggregate and its form over partitions"):
        Family("New", ap.kernel, "new", aggregate=FAMILIES["NumRet"].aggregate, prefix=False,
               monotone=False, explained=False)
    with pytest.raises(ValueError, match="aggregate and its form over partitions"):
        Family("New", ap.kernel, "new", parts=FAMILIES["NumRet"].parts, prefix=False,
               monotone=False, explained=False)


def test_every_family_with_an_aggregate_has_its_form_over_partitions():
    for name, fam in FAMILIES.items():
        assert (fam.aggregate is None) == (fam.parts is None), name


def test_the_lab_explains_exactly_the_families_that_declare_it():
    from ireval_core.lab import EXPLAINED_FAMILIES
    from ireval_core.lab.steps import EXPLAINERS

    declared = {n for n, f in FAMILIES.items() if f.explained}
    assert set(EXPLAINERS) == declared == set(EXPLAINED_FAMILIES)


def test_holes_reads_the_declared_prefix_and_monotone_facts():
    from ireval_core.decisions.holes import MONOTONE_FAMILIES, PREFIX_FAMILIES
    from ireval_core.decisions.labelings import window_of

    assert PREFIX_FAMILIES == {n for n, f in FAMILIES.items() if f.prefix}
    assert MONOTONE_FAMILIES == {n for n, f in FAMILIES.items() if f.monotone}
    assert MONOTONE_FAMILIES <= PREFIX_FAMILIES
    for name, fam in FAMILIES.items():
        if fam.cutoff in ("optional", "required") and fam.judgments == "qrels":
            assert window_of(parse_measure(f"{name}@5")) == (5 if fam.prefix else None), name
