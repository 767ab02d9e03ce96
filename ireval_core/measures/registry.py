"""Measures are data: immutable specs in one registry, parsed from text.

A :class:`Measure` is a family name, an optional cutoff and non-default
parameters; its text form round-trips through :func:`parse_measure`::

    >>> m = parse_measure("nDCG(gain=exp, ideal=run)@10")
    >>> str(m)
    'nDCG(gain=exp,ideal=run)@10'
    >>> parse_measure("ndcg_cut_10") == parse_measure("nDCG@10")
    True

Each :class:`Family` holds its kernel (a pure numpy function over a
:class:`~ireval_core.data.Ranked`), its parameters with their defaults, and a
one-line definition that the CLI help and the app show next to every number.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, TypedDict

import numpy as np

from ..data import Ranked
from ..errors import UnknownMeasureError, invalid_parameter
from ..options import EvalOptions

__all__ = ["Combine", "Family", "Measure", "Param", "PartAggregate", "Partials", "ParamValue",
           "FAMILIES", "JUDGMENTS", "JudgmentKind",
           "families", "parse_measure", "parse_measures", "register", "measure_names"]


Kernel = Callable[[Ranked, "Measure", EvalOptions], np.ndarray]
"""A per-query kernel: the joined data, the measure and the evaluation options."""
Aggregator = Callable[[Ranked, "Measure", EvalOptions, np.ndarray], float]
Partials = Callable[[Ranked, "Measure", EvalOptions], tuple[np.ndarray, ...]]
"""What a partition sends beside its per-query values for an aggregate: arrays aligned
with the queries of the joined data (the partition's)."""
Combine = Callable[["Measure", np.ndarray, tuple[np.ndarray, ...]], float]
"""The aggregate from every query's value and partials (concatenated in one order)."""


@dataclass(frozen=True)
class PartAggregate:
    """A family's aggregate made over partitions (the Dask engine), equal to its
    ``aggregate`` over the whole data: ``partials`` (None: nothing but the values) is what
    each partition sends beside its per-query values, ``combine`` makes the aggregate from
    all of them."""

    combine: Combine
    partials: Partials | None = None

JudgmentKind = Literal["qrels", "prefs", "qrels_jg"]
"""What a family is computed from, by trec_eval's ``-R`` name: ``qrels`` (a run joined with
graded judgments: the kernel's :class:`~ireval_core.data.Ranked`), ``prefs`` (preference
judgments) or ``qrels_jg`` (judgments in several judgment groups)."""

JUDGMENTS: dict[str, str] = {
    "qrels": "graded judgments (qrels 'qid iter docid rel', -R qrels)",
    "prefs": "preference judgments: -R prefs ('qid jg jsg docid rel_level') or -R qrels_prefs "
             "(qrels read as preferences, the iter column naming the judgment group)",
    "qrels_jg": "judgments in judgment groups: -R qrels_jg ('qid jg docid rel', the second "
                "column naming the group: one assessor or one round)",
}
"""Each kind of :data:`JudgmentKind` in words: which judgments a family needs."""

ParamValue = float | str | None
"""A parameter's value: a number (``kind=finite_float``), a word or a gain map (``str``), or
``None`` for a default that means "not set" (``rel``: the evaluation's level)."""


@dataclass(frozen=True)
class Param:
    """One parameter of a family: name, default, accepted values and meaning.

    ``kind`` turns the text after ``name=`` into the value (``ValueError`` when it
    cannot); ``check`` is an extra test of a numeric value; ``rule`` says what the
    value must be, completing "must be ..." in messages (default: one of ``choices``).
    """

    name: str
    default: ParamValue
    doc: str
    choices: tuple[str, ...] | None = None
    kind: Callable[[str], ParamValue] = str
    check: Callable[[float], bool] | None = None
    rule: str = ""

    @property
    def constraint(self) -> str:
        """What a value must be, in words."""
        if self.rule:
            return self.rule
        if self.choices is not None:
            return "one of " + ", ".join(self.choices)
        return "a valid value"

    def parse(self, text: str, family: str) -> ParamValue:
        """Parse the value written ``text`` in a spec of ``family`` (named in messages)."""
        text = text.strip()
        if self.choices is not None and self.kind is str and text not in self.choices:
            raise self._invalid(family, text)
        try:
            value = self.kind(text)
        except ValueError:
            raise self._invalid(family, text) from None
        if self.check is not None and not (isinstance(value, float) and self.check(value)):
            raise self._invalid(family, _shown(value))
        return value

    def _invalid(self, family: str, got: object) -> UnknownMeasureError:
        return invalid_parameter(self.name, family, self.constraint, got,
                                 error=UnknownMeasureError)


def finite_float(text: str) -> float:
    """The ``kind`` of a numeric :class:`Param`: ``float(text)``, refusing NaN and infinity."""
    value = float(text)
    if not np.isfinite(value):
        raise ValueError(f"expected a finite number, got {text!r}")
    return value


def parse_gain(text: str) -> str:
    """Gain: linear, exp, or a grade->gain map written {0:0,1:1,2:3,3:7}."""
    if text in ("linear", "exp"):
        return text
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"expected linear, exp or a map like {{0:0,1:1,2:3}}, got {text!r}")
    pairs = []
    for item in filter(None, (x.strip() for x in text[1:-1].split(","))):
        g, _, v = item.partition(":")
        pairs.append((float(g), float(v)))
    if not pairs:
        raise ValueError("empty gain map")
    return "{" + ",".join(f"{_num(g)}:{_num(v)}" for g, v in sorted(pairs)) + "}"


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def _shown(value: ParamValue) -> object:
    """A number as it is written in a spec (``2.0`` as ``2``), for messages."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return value


@dataclass(frozen=True)
class Family:
    """A measure family: everything that does not depend on the parameters' values.

    cutoff:
        ``"optional"`` (``@k`` or whole ranking), ``"required"``, ``"none"``, or
        ``"recall"`` (``@r`` is a recall level in [0, 1], as IPrec).
    definition:
        One-line definition; ``{k}``, ``{rel}`` and parameter names in braces
        are filled in by :meth:`Measure.definition`.
    binary:
        Uses the relevance threshold.
    bounds:
        Range of per-query values (``None`` = unbounded), checked by property tests.
    perfect_is_one:
        A ranking of all relevant documents by decreasing grade scores 1.
    aggregate:
        How per-query values become one number: ``None`` = mean over queries
        (NaN = not counted); otherwise a function.
    aggregate_rule:
        The averaging rule in words.
    judgments:
        What the values are computed from (:data:`JudgmentKind`): ``"qrels"`` for the kernel
        over a joined ranking; ``"prefs"`` and ``"qrels_jg"`` families are computed by
        :mod:`ireval_core.preferences` and :mod:`ireval_core.judgment_groups` instead
        (their kernel refuses), and ``evaluate`` refuses them.
    base:
        A ``"qrels_jg"`` family: the family it evaluates within each judgment group.
    parts:
        With an ``aggregate``: the same aggregate made over partitions
        (:class:`PartAggregate`), as :mod:`ireval_core.distributed` computes it. A family
        with an aggregate and no ``parts`` (or the reverse) is refused.

    Three facts every family declares (no default; a family without them is refused):

    prefix:
        Its value at cutoff k reads only the top k of the ranking (and counts from the
        qrels), so the holes of a labeling (:mod:`ireval_core.decisions.holes`) are the
        unjudged documents of the top k; otherwise every unjudged document of the ranking.
    monotone:
        Its value never decreases when one of the system's own documents gets a higher
        grade, and it reads no other judgment (with the linear or exp gain, without
        judged-only rankings): labeling every hole non-relevant, then relevant, gives the
        extremes over all labelings.
    explained:
        The lab (:func:`ireval_core.lab.explain`) explains it step by step (a test checks
        the lab has an explainer for exactly these families).
    """

    name: str
    kernel: Kernel
    definition: str
    cutoff: Literal["optional", "required", "none", "recall"] = "optional"
    params: tuple[Param, ...] = ()
    binary: bool = True
    bounds: tuple[float | None, float | None] = (0.0, 1.0)
    perfect_is_one: bool = False
    aggregate: Aggregator | None = None
    aggregate_rule: str = "arithmetic mean over queries"
    trec: str | None = None
    aliases: tuple[str, ...] = ()
    judgments: JudgmentKind = "qrels"
    base: str | None = None
    parts: PartAggregate | None = None
    prefix: bool = field(kw_only=True)
    monotone: bool = field(kw_only=True)
    explained: bool = field(kw_only=True)

    def __post_init__(self) -> None:
        if (self.aggregate is None) != (self.parts is None):
            raise ValueError(f"family {self.name}: an aggregate and its form over partitions "
                             "(parts) go together; give both or neither")

    @property
    def needs(self) -> str:
        """Which judgments the family needs, in words (:data:`JUDGMENTS`)."""
        return JUDGMENTS[self.judgments]

    def param(self, name: str) -> Param:
        for p in self.params:
            if p.name == name:
                return p
        raise KeyError(name)


FAMILIES: dict[str, Family] = {}
_BY_LOWER: dict[str, str] = {}


def families(judgments: JudgmentKind = "qrels") -> dict[str, Family]:
    """The registered families computed from ``judgments``, in registration order.

    >>> "AP" in families() and "PrefSimp" in families("prefs")
    True
    """
    return {n: f for n, f in FAMILIES.items() if f.judgments == judgments}


def register(family: Family) -> Family:
    """Add a family to the registry (names are case-insensitive when parsed)."""
    FAMILIES[family.name] = family
    for n in (family.name, *family.aliases):
        _BY_LOWER[n.lower()] = family.name
    return family


@dataclass(frozen=True)
class Measure:
    """An immutable measure spec: family, cutoff and non-default parameters."""

    name: str
    cutoff: float | None = None
    params: tuple[tuple[str, ParamValue], ...] = ()

    @property
    def family(self) -> Family:
        return FAMILIES[self.name]

    def get(self, key: str) -> ParamValue:
        """Value of a parameter (its default when not given)."""
        for k, v in self.params:
            if k == key:
                return v
        return self.family.param(key).default

    def number(self, key: str) -> float:
        """Value of a numeric parameter whose default is a number (F's beta, RBP's p)."""
        value = self.get(key)
        if value is None or isinstance(value, str):
            raise TypeError(f"the {key!r} parameter of {self.name} is not a number: {value!r}")
        return float(value)

    def threshold(self, options: EvalOptions) -> float:
        """Relevance threshold in force: the measure's ``rel=`` or the evaluation's."""
        rel = dict(self.params).get("rel")
        return float(options.rel_level if rel is None else rel)

    @property
    def k(self) -> int | None:
        return None if self.cutoff is None else int(self.cutoff)

    def __str__(self) -> str:
        text = self.name
        if self.params:
            text += "(" + ",".join(f"{k}={_fmt(v)}" for k, v in self.params) + ")"
        if self.cutoff is not None:
            text += "@" + (_num(self.cutoff) if self.family.cutoff != "recall"
                           else f"{self.cutoff:g}")
        return text

    def definition(self, options: EvalOptions | None = None) -> str:
        """One-line definition with this measure's parameters filled in."""
        options = options or EvalOptions()
        values = {p.name: _fmt(self.get(p.name)) for p in self.family.params}
        values["k"] = "the whole ranking" if self.cutoff is None else f"{self.cutoff:g}"
        values["rel"] = f"grade >= {_num(self.threshold(options))}"
        text = self.family.definition.format(**values)
        text = f"{text}; {self.family.aggregate_rule}"
        if self.family.judgments != "qrels":
            text += f"; needs {self.family.needs}"
        return text


def _fmt(v: object) -> str:
    if isinstance(v, float):
        return _num(v)
    return str(v)


_SYNTAX = re.compile(r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9_]*)\s*(?:\((?P<params>.*)\))?\s*"
                     r"(?:@\s*(?P<cutoff>-?[0-9]*\.?[0-9]+))?\s*$")

# trec_eval per-query names (as pytrec_eval prints them) -> ireval text
_TREC_PATTERNS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    (re.compile(r"^P_(\d+)$"), lambda m: f"P@{m[1]}"),
    (re.compile(r"^recall_(\d+)$"), lambda m: f"R@{m[1]}"),
    (re.compile(r"^map_cut_(\d+)$"), lambda m: f"AP@{m[1]}"),
    (re.compile(r"^ndcg_cut_(\d+)$"), lambda m: f"nDCG@{m[1]}"),
    (re.compile(r"^success_(\d+)$"), lambda m: f"Success@{m[1]}"),
    (re.compile(r"^iprec_at_recall_(\d*\.?\d+)$"), lambda m: f"IPrec@{m[1]}"),
    (re.compile(r"^map$"), lambda m: "AP"),
    (re.compile(r"^ndcg$"), lambda m: "nDCG"),
    (re.compile(r"^recip_rank$"), lambda m: "RR"),
    (re.compile(r"^set_F$"), lambda m: "F"),
    (re.compile(r"^set_P$"), lambda m: "P"),
    (re.compile(r"^set_recall$"), lambda m: "R"),
    (re.compile(r"^11pt_avg$"), lambda m: "11pt"),
    (re.compile(r"^num_nonrel_judged_ret$"), lambda m: "NumNonRelRet"),
    (re.compile(r"^num_ret$"), lambda m: "NumRet"),
    (re.compile(r"^num_rel$"), lambda m: "NumRel"),
    (re.compile(r"^num_rel_ret$"), lambda m: "NumRelRet"),
    (re.compile(r"^Rprec_mult_(\d*\.?\d+)$"), lambda m: f"Rprec(mult={m[1]})"),
    (re.compile(r"^relative_P_(\d+)$"), lambda m: f"RelativeP@{m[1]}"),
    (re.compile(r"^set_relative_P$"), lambda m: "RelativeP"),
    (re.compile(r"^unj_(\d+)$"), lambda m: f"Unjudged@{m[1]}"),
    (re.compile(r"^map_avgjg$"), lambda m: "APAvgJG"),
    (re.compile(r"^P_avgjg_(\d+)$"), lambda m: f"PAvgJG@{m[1]}"),
    (re.compile(r"^Rprec_mult_avgjg_(\d*\.?\d+)$"), lambda m: f"RprecAvgJG(mult={m[1]})"),
    (re.compile(r"^rbp$"), lambda m: "RBP(p=0.9,gain=graded)"),  # trec_eval's, not ir_measures'
    # as trec_eval prints measures given parameters (-m rbp.p=0.5, -m utility.2,-1,0,0)
    (re.compile(r"^rbp_p=([^,]+)$"), lambda m: f"RBP(p={m[1]},gain=graded)"),
    (re.compile(r"^rbp_resid_p=([^,]+)$"), lambda m: f"RBPResid(p={m[1]})"),
    (re.compile(r"^utility_([^,]+),([^,]+),([^,]+),([^,]+)$"),
     lambda m: f"Utility(a={m[1]},b={m[2]},c={m[3]},d={m[4]})"),
]


def _split_params(text: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p for p in (x.strip() for x in parts) if p]


def measure_names() -> list[str]:
    """Every family name and alias, for messages and completion."""
    return sorted({*FAMILIES, *(a for f in FAMILIES.values() for a in f.aliases)})


def _unknown(name: str) -> UnknownMeasureError:
    known = measure_names() + ["map", "ndcg", "P_10", "recall_100", "map_cut_10",
                               "ndcg_cut_10", "recip_rank", "success_5", "set_F",
                               "iprec_at_recall_0.30"]
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.4)
    if not near:
        near = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=1)
        near = [k for k in known if near and k.lower() == near[0]][:1]
    hint = f" Did you mean {near[0]!r}?" if near else ""
    return UnknownMeasureError(
        f"Unknown measure {name!r}.{hint} Valid names: {', '.join(measure_names())} "
        "(with @k cutoffs and parameters, e.g. nDCG(gain=exp)@10), or trec_eval names "
        "such as map, ndcg_cut_10, P_10, recall_100, recip_rank, iprec_at_recall_0.30.")


def parse_measure(text: str | Measure) -> Measure:
    """Parse ``nDCG@10``, ``P(rel=2)@5``, ``DCG(discount=jk)@6`` or a trec_eval name.

    Raises :class:`~ireval_core.errors.UnknownMeasureError` naming the nearest
    valid measure when the name is unknown, or the parameter at fault.
    """
    if isinstance(text, Measure):
        return text
    raw = text.strip()
    for pattern, to_text in _TREC_PATTERNS:
        hit = pattern.match(raw)
        if hit:
            raw = to_text(hit)
            break
    m = _SYNTAX.match(raw)
    if not m:
        raise _unknown(text)
    fam_name = _BY_LOWER.get(m["name"].lower())
    if fam_name is None:
        raise _unknown(m["name"])
    fam = FAMILIES[fam_name]
    params: dict[str, ParamValue] = {}
    for item in _split_params(m["params"] or ""):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq:
            raise UnknownMeasureError(f"Parameters are written name=value; got {item!r} in "
                                      f"{text!r}.")
        try:
            p = fam.param(key)
        except KeyError:
            valid = ", ".join(p.name for p in fam.params) or "none"
            raise UnknownMeasureError(f"{fam.name} has no parameter {key!r} (valid: {valid})."
                                      ) from None
        if key in params:
            raise UnknownMeasureError(f"Parameter {key!r} is given twice in {text!r}.")
        params[key] = p.parse(value, fam.name)
    # drop defaults so that equal measures have equal specs
    clean = tuple(sorted((k, v) for k, v in params.items() if v != fam.param(k).default))
    cutoff = _parse_cutoff(fam, m["cutoff"], text)
    return Measure(fam.name, cutoff, clean)


def _parse_cutoff(fam: Family, text: str | None, whole: str) -> float | None:
    if text is None:
        if fam.cutoff in ("required", "recall"):
            raise UnknownMeasureError(f"{fam.name} needs a cutoff, e.g. {fam.name}@"
                                      f"{'0.5' if fam.cutoff == 'recall' else '10'}.")
        return None
    if fam.cutoff == "none":
        raise UnknownMeasureError(f"{fam.name} takes no cutoff; got {whole!r}.")
    value = float(text)
    if fam.cutoff == "recall":
        if not 0.0 <= value <= 1.0:
            raise invalid_parameter("k", fam.name, "a recall level in [0, 1]", _shown(value),
                                    error=UnknownMeasureError)
        return value
    if not value.is_integer() or value < 1:
        raise invalid_parameter("k", fam.name, "an int >= 1", _shown(value),
                                error=UnknownMeasureError)
    return float(int(value))


def parse_measures(texts: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse one or several measures (a single spec, or any iterable of specs)."""
    if isinstance(texts, str | Measure):
        texts = [texts]
    out: list[Measure] = []
    for t in texts:
        m = parse_measure(t)
        if m not in out:
            out.append(m)
    return out


# ----------------------------------------------------------------------------- shared parameters
# Parameters several measure modules declare (catalogue, longtail).

class NumericRule(TypedDict):
    """The keyword arguments of :class:`Param` for a checked number."""

    kind: Callable[[str], float]
    check: Callable[[float], bool]
    rule: str


REL = Param("rel", None, "relevance threshold: relevant when grade >= rel "
            "(default: the evaluation's level, 1)", kind=finite_float, rule="a finite number")
PROBABILITY: NumericRule = {"kind": finite_float, "check": lambda v: 0.0 < v < 1.0,
                            "rule": "a number in (0, 1)"}
POSITIVE: NumericRule = {"kind": finite_float, "check": lambda v: v > 0,
                         "rule": "a finite number > 0"}
