"""trec_eval's printed output, line for line: its measure order, names and number formats.

``python -m ireval_core eval`` prints this layout (``--format trec``, the default), for the
trec_eval version of the options (``--trec-eval``):

* with ``-q``, for each evaluated query (query ids in byte order, as trec_eval sorts them),
  every measure's per-query line in trec_eval's order (its measure table's, whatever the
  order of ``-m``: :func:`columns` with ``trec_order``); ``gm_map`` and ``gm_bpref`` have none
  (trec_eval prints only their mean) and ``relstring`` prints a string;
* then ``runid``, ``num_q`` and every measure's ``all`` line;
* ``%-22s\\t%s\\t%6.4f`` for values, whole numbers for the counts (``num_ret``, ...).

``all_trec`` expands to trec_eval's own list for the version (:func:`all_trec`): 10.0 adds
``rbp``, ``rbp_resid`` and ``unj_5/10/20`` at the end. With ``-c -q``, 10.0 prints the judged
queries the run does not answer (with the values such a query gets); 9.0.8 averages them in
but prints no line for them.

``relstring`` (``relstring_N``: the first N, default 10) is no measure: it is the grades of
the first documents of each ranking as characters, ``0``-``9``, ``>`` above 9, ``-`` for a
document absent from the qrels and ``.`` for a negative grade (pooled, unjudged).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TextIO

import numpy as np

from .data import Qrels, Run, join
from .errors import UnknownMeasureError
from .evaluate import Evaluation, evaluate
from .measures import Measure
from .options import EvalOptions

__all__ = ["COUNTS", "HEADER", "NAN", "Column", "all_trec", "columns", "header_of", "official",
           "relstrings", "trec_mean", "trec_params", "trec_texts", "unanswered_10",
           "with_collection_size", "write_trec"]

_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_ALL_TREC_9 = (
    ["num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref", "recip_rank"]
    + [f"iprec_at_recall_{x / 10:.2f}" for x in range(11)]
    + [f"P_{k}" for k in _CUTOFFS]
    + ["relstring"]
    + [f"recall_{k}" for k in _CUTOFFS]
    + ["infAP", "gm_bpref"]
    + [f"Rprec_mult_{x / 10:.2f}" for x in range(2, 21, 2)]
    + ["utility", "11pt_avg", "binG", "G", "ndcg", "ndcg_rel", "Rndcg"]
    + [f"ndcg_cut_{k}" for k in _CUTOFFS]
    + [f"map_cut_{k}" for k in _CUTOFFS]
    + [f"relative_P_{k}" for k in _CUTOFFS]
    + [f"success_{k}" for k in (1, 5, 10)]
    + ["set_P", "set_relative_P", "set_recall", "set_map", "set_F", "num_nonrel_judged_ret"]
)
_ALL_TREC_10 = _ALL_TREC_9 + ["rbp", "rbp_resid", "unj_5", "unj_10", "unj_20"]

COUNTS = frozenset({"NumRet", "NumRel", "NumRelRet", "NumNonRelRet",
                    "NumPrefs", "NumPrefsFul", "NumPrefsFulRet"})
"""Families printed as whole numbers (trec_eval's ``%ld``)."""
_SUMMARY_ONLY = frozenset({"GMAP", "GMbpref"})  # trec_eval prints no per-query line
_DROPPED = frozenset({"nDCG"})  # NaN for IDCG = 0 under idcg_zero="drop" (ireval's option)
_RELSTRING = re.compile(r"^relstring(?:[._](\d+))?$")


_OFFICIAL = _ALL_TREC_9[: _ALL_TREC_9.index("P_1000") + 1]  # up to P: trec_eval's "official"

# trec_eval's measure table (te_trec_measures of measures.c), the order it prints in whatever
# the order of -m: 10.0's; 9.0.8's is the same without dcg, ideal_dcg, rbp, rbp_resid, unj
_TABLE = ("runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank "
          "iprec_at_recall P relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg "
          "binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut map_cut relative_P success "
          "set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret "
          "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp "
          "prefs_pair prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret "
          "prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp "
          "prefs_avgjg_imp map_avgjg P_avgjg Rprec_mult_avgjg yaap rbp rbp_resid unj").split()
_TABLE_INDEX = {name: i for i, name in enumerate(_TABLE)}


def all_trec(trec_eval: str) -> list[str]:
    """trec_eval's ``all_trec`` of ``trec_eval`` ("9.0.8" or "10.0"), in its print order."""
    return list(_ALL_TREC_10 if trec_eval == "10.0" else _ALL_TREC_9)


HEADER = ("runid", "num_q")
"""The summary lines trec_eval prints first when they are asked for (its first measures)."""


def header_of(names: Iterable[str]) -> tuple[list[str], tuple[str, ...]]:
    """``names`` without ``runid``/``num_q``, and those of them to print: both with
    ``all_trec``, ``official``, ``qrels_jg``, ``all_prefs`` or ``prefs`` (or no name: ireval's
    default, all_trec), else those named, as trec_eval marks them."""
    names = [n.strip() for n in names]
    if not names or any(n.partition(".")[0] in ("all_trec", "official", "qrels_jg",
                                                 "all_prefs", "prefs")
                        for n in names):
        shown: tuple[str, ...] = HEADER
    else:
        shown = tuple(h for h in HEADER if h in names)
    return [n for n in names if n not in HEADER], shown


def official() -> list[str]:
    """trec_eval's ``official`` measures (its default), in its print order."""
    return list(_OFFICIAL)


@dataclass(frozen=True)
class Column:
    """One printed measure: its label, and the measure (``None``: relstring, ``depth`` long)."""

    label: str
    measure: Measure | None = None
    depth: int = 10


def columns(names: Iterable[str], parse: object, *,
            grades: Iterable[float] | None = None, trec_order: bool = False) -> list[Column]:
    """The printed columns of measure ``names`` (``parse``: the measure parser), each name
    once (two names of one measure, as ``Rprec`` and ``Rprec_mult_1.00``, are both printed,
    as trec_eval does); ``relstring``/``relstring_N`` as strings.

    A name written as trec_eval's ``-m name.params`` (``P.5,7,3``, ``iprec_at_recall..1,.5``,
    ``ndcg.1=3,2=9``, ``relstring.20``: :func:`trec_params`) becomes the columns trec_eval
    prints for it, named as trec_eval names them; as in trec_eval, the first parameters
    given for a measure are its parameters wherever it is asked for, so
    ``-m all_trec -m P.5`` prints ``P_5`` in the place of ``all_trec``'s ``P_5 ... P_1000``.
    ``grades``: the grades of the qrels, which a gain map (``ndcg.1=3``) leaves at their
    own value, as trec_eval does. ``trec_order``: in trec_eval's print order, that of its
    measure table (``-m P.5 -m map`` prints ``map`` first), whatever the order of
    ``names``; a name trec_eval does not have (``nDCG@10``) comes after its names, in the
    order given. Otherwise in the order of ``names``.

    >>> from ireval_core.measures import parse_measure
    >>> [c.label for c in columns(["P.5,1", "recip_rank", "nDCG@3", "map"], parse_measure,
    ...                           trec_order=True)]
    ['map', 'recip_rank', 'P_1', 'P_5', 'nDCG@3']
    """
    names = [n.strip() for n in names]
    given: dict[str, str] = {}
    for text in names:
        hit = _RELSTRING.match(text)
        base, dot, params = text.partition(".")
        if dot and re.fullmatch(r"[A-Za-z0-9_]+", base):
            if not params:
                raise UnknownMeasureError(f"trec_eval: improper measure in parameter {base!r}: "
                                          "nothing after the '.'")
            given.setdefault(base, params)
        elif hit and hit[1]:
            given.setdefault("relstring", hit[1])
    grade_set = None if grades is None else sorted({float(g) for g in grades})
    groups: list[tuple[int, list[Column]]] = []
    seen: set[object] = set()
    for text in names:
        base = _base(text)
        key: object
        if base in given and base in _WITH_PARAMS:
            new, key = trec_params(base, given[base], parse, grades=grade_set), base
        elif text == "relstring" or _RELSTRING.match(text):
            new, key = [Column("relstring", None, 10)], "relstring"
        else:
            plain = text.partition(".")[0] if base in given else text  # params ignored
            new, key = [Column(plain, parse(plain))], plain  # type: ignore[operator]
        if key not in seen:
            seen.add(key)
            groups.append((_TABLE_INDEX.get(base, len(_TABLE)), new))
    if trec_order:
        groups.sort(key=lambda group: group[0])  # stable: names of one base keep their order
    return [c for _, new in groups for c in new]


# trec_eval's measures that take parameters, by how it reads them (meas_init.c)
_LONG_CUTOFFS = {"P": "P@{}", "recall": "R@{}", "ndcg_cut": "nDCG@{}", "map_cut": "AP@{}",
                 "relative_P": "RelativeP@{}", "success": "Success@{}", "unj": "Unjudged@{}"}
_DOUBLE_CUTOFFS = {"iprec_at_recall": "IPrec@{!r}", "Rprec_mult": "Rprec(mult={!r})"}
_DOUBLE_PARAMS = frozenset({"11pt_avg", "utility", "set_F", "relstring"})
_PAIRS = frozenset({"ndcg", "rbp", "rbp_resid", "G", "ndcg_rel", "Rndcg"})
_GAIN_MAPS = {"ndcg": "nDCG", "G": "G", "ndcg_rel": "nDCGRel", "Rndcg": "RnDCG"}
_WITH_PARAMS = frozenset({*_LONG_CUTOFFS, *_DOUBLE_CUTOFFS, *_DOUBLE_PARAMS, *_PAIRS})
_CUT_NAME = re.compile(r"^(" + "|".join(sorted({*_LONG_CUTOFFS, *_DOUBLE_CUTOFFS}, key=len,
                                               reverse=True)) + r")_[^_]+$")


def _base(text: str) -> str:
    """trec_eval's measure of a printed or asked name: ``P`` of ``P_5`` and ``P.5,10``."""
    hit = _CUT_NAME.match(text)
    if hit:
        return hit[1]
    if _RELSTRING.match(text):
        return "relstring"
    return text.partition(".")[0]


def _atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (0 when there is none)."""
    hit = re.match(r"\s*([+-]?\d+)", text)
    return int(hit[1]) if hit else 0


def _atof(text: str, base: str) -> float:
    """C's ``atof``, refusing text with no number at all (trec_eval reads it as 0)."""
    hit = re.match(r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)", text)
    if not hit:
        raise UnknownMeasureError(f"trec_eval: parameter {text!r} of {base} is not a number")
    return float(hit[1])


def trec_params(base: str, params: str, parse: object, *,
                grades: Sequence[float] | None = None) -> list[Column]:
    """The columns of trec_eval's ``-m base.params``, named and computed as trec_eval does.

    * cutoffs (``P``, ``recall``, ``ndcg_cut``, ``map_cut``, ``relative_P``, ``success``,
      ``unj``): read as C's ``atol`` (``23.4`` is 23), sorted, each > 0 and once;
      printed ``P_5``;
    * recall levels and multiples (``iprec_at_recall``, ``Rprec_mult``): numbers, sorted,
      each once; printed ``%3.2f`` (``iprec_at_recall_0.10``, ``Rprec_mult_5.00``);
    * ``11pt_avg`` (the levels averaged), ``utility`` (its four coefficients), ``set_F``
      (x, the weight of recall: ireval's ``beta2``, beta²), ``relstring`` (the depth):
      printed with the parameters as written
      (``utility_2,-1,0,0``, ``11pt_avg_.25,.5,.75``);
    * ``name=value`` pairs: ``ndcg``, ``G``, ``ndcg_rel``, ``Rndcg`` (a grade's gain; a
      grade not given keeps its own value, ``grades``), ``rbp``/``rbp_resid`` (``p``);
      printed as written (``ndcg_1=3,2=9,4=4.5``, ``G_1=3``).
    """
    values = params.split(",")
    measure = parse  # the measure parser, typed loosely as columns() takes it
    if base in _LONG_CUTOFFS:
        cuts = sorted(_atol(v) for v in values)
        _check_cutoffs(cuts, base, positive=True)
        return [Column(f"{base}_{k}", measure(_LONG_CUTOFFS[base].format(k)))  # type: ignore[operator]
                for k in cuts]
    if base in _DOUBLE_CUTOFFS:
        levels = sorted(_atof(v, base) for v in values)
        _check_cutoffs(levels, base, positive=False)
        return [Column(f"{base}_{x:3.2f}", measure(_DOUBLE_CUTOFFS[base].format(x)))  # type: ignore[operator]
                for x in levels]
    label = f"{base}_{params}"
    if base == "relstring":
        return [Column(label, None, int(_atof(values[0], base)))]
    if base == "11pt_avg":
        written = ",".join(repr(_atof(v, base)) for v in values)
        return [Column(label, measure(f"11pt(levels={{{written}}})"))]  # type: ignore[operator]
    if base == "utility":
        if len(values) != 4:
            raise UnknownMeasureError("trec_eval: utility takes 4 coefficients "
                                      f"(a,b,c,d); got {params!r}")
        a, b, c, d = (repr(_atof(v, base)) for v in values)
        return [Column(label, measure(f"Utility(a={a},b={b},c={c},d={d})"))]  # type: ignore[operator]
    if base == "set_F":
        return [Column(label, measure(f"F(beta2={_atof(values[0], base)!r})"))]  # type: ignore[operator]
    pairs = []
    for v in values:
        name, eq, value = v.partition("=")
        if not eq or not name:
            raise UnknownMeasureError(f"trec_eval: malformed pair parameters in {params!r}")
        pairs.append((name, _atof(value, base)))
    if base in _GAIN_MAPS:
        gains = {float(int(n)): g for n, g in pairs if re.fullmatch(r"[+-]?\d+", n)}
        for level in grades or ():  # trec_eval: a level not given gains its own value
            if level >= 0 and level.is_integer():
                gains.setdefault(level, level)
        text = ",".join(f"{_short(g)}:{_short(v)}" for g, v in sorted(gains.items()))
        return [Column(label, measure(f"{_GAIN_MAPS[base]}(gain={{{text}}})"))]  # type: ignore[operator]
    if base in ("rbp", "rbp_resid"):
        return [Column(label, measure(label))]  # type: ignore[operator]
    raise UnknownMeasureError(f"trec_eval's {base} takes no name=value parameters; "
                              f"got {params!r}")


def with_collection_size(cols: Sequence[Column], docs: int | None) -> list[Column]:
    """``cols`` with trec_eval's ``-N docs`` (the documents in the collection) given to every
    utility column that does not set its own ``docs``; ``None``: unchanged (0, as trec_eval).

    >>> from ireval_core.measures import parse_measure
    >>> [str(c.measure) for c in with_collection_size([Column("utility", parse_measure(
    ...     "utility"))], 500)]
    ['Utility(docs=500)']
    """
    if docs is None:
        return list(cols)
    out = []
    for c in cols:
        m = c.measure
        if m is not None and m.name == "Utility" and "docs" not in dict(m.params):
            params = {**dict(m.params), "docs": float(docs)}
            m = Measure(m.name, m.cutoff, tuple(sorted(params.items())))
        out.append(Column(c.label, m, c.depth))
    return out


def _short(x: float) -> str:
    return str(int(x)) if x.is_integer() else repr(x)


def _check_cutoffs(cuts: Sequence[float], base: str, *, positive: bool) -> None:
    if positive and cuts[0] <= 0:
        raise UnknownMeasureError(f"trec_eval: cutoffs of {base} must be > 0; got "
                                  f"{_short(float(cuts[0]))}")
    if len(set(cuts)) < len(cuts):
        raise UnknownMeasureError(f"trec_eval: duplicate cutoffs of {base}")


def relstrings(qrels: Qrels, run: Run, options: EvalOptions, depth: int
               ) -> dict[str, str]:
    """``{query: relstring}`` of ``run``'s first ``depth`` documents under ``options``."""
    r = join(qrels, run, options=options)
    keep = r.pos <= depth
    grade = r.grade[keep]
    chars = np.full(len(grade), "-", dtype="<U1")
    judged = grade >= 0
    level = np.floor(np.where(judged, grade, 0.0)).astype(np.int64)  # trec_eval reads longs
    digits = np.array(list("0123456789"))
    chars[judged] = np.where(level[judged] > 9, ">", digits[np.minimum(level[judged], 9)])
    chars[~np.isnan(grade) & ~judged] = "."
    q = r.qidx[keep]
    bounds = np.searchsorted(q, np.arange(r.n_queries + 1))
    return {str(qid): "".join(chars[bounds[i]:bounds[i + 1]].tolist())
            for i, qid in enumerate(r.query_ids)}


NAN = "  -nan"
"""How trec_eval prints an undefined value (``printf("%6.4f")`` of the NaN of 0 / 0, whose
sign bit is set on x86-64), per query and in the ``all`` line, in 9.0.8 and 10.0 alike."""


BOGUS_DOC = "ceci_nest_pas_un_docno"
"""The one document of the ranking trec_eval 10.0 gives a judged query a run misses (-c)."""
_CLEANED = re.compile(r"^(?:num_ret|utility|relstring|rbp_resid|unj.*)$")


def unanswered_10(qrels: Qrels, run: Run, cols: Sequence[Column], options: EvalOptions
                  ) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, str]]]:
    """What trec_eval 10.0 prints under ``-c`` for the judged queries ``run`` misses, in
    the columns where that is not the value ireval gives such a query: ``(values, strings)``,
    each ``{column label: {query: value}}``.

    10.0 evaluates a missing query as a ranking of one unjudged document
    (:data:`BOGUS_DOC`, score 1), then sets back to 0 the values named exactly ``num_ret``,
    ``utility``, ``rbp_resid``, ``unj*`` and clears ``relstring`` (``trec_eval.c``). A name
    given parameters (``utility_2,-1,0,0``, ``rbp_resid_p=0.8``, ``relstring_5``) is not
    cleaned: it keeps what that ranking gives (``utility_a,b,c,d`` = b + c·R + d·(N − 1 −
    R), ``'-'``), which these columns are computed from here, with the same kernels.
    Empty unless ``options`` are 10.0's with ``complete``.
    """
    values: dict[str, dict[str, float]] = {}
    strings: dict[str, dict[str, str]] = {}
    if options.trec_eval != "10.0" or not options.complete:
        return values, strings
    answered = {str(q) for q in run.query_ids}
    missing = [str(q) for q in qrels.query_ids if str(q) not in answered]
    kept = [c for c in cols if not _CLEANED.match(c.label) and (
        c.measure is None or c.measure.name in ("Utility", "RBPResid"))]
    if not missing or not kept:
        return values, strings
    bogus = Run.from_dict({q: {BOGUS_DOC: 1.0} for q in missing}, name=run.name)
    plain = replace(options, complete=False)
    measures = [c.measure for c in kept if c.measure is not None]
    res = evaluate(qrels, [bogus], measures, options=plain) if measures else None
    for c in kept:
        if c.measure is None:
            strings[c.label] = relstrings(qrels, bogus, plain, c.depth)
        elif res is not None:
            got = res.values[(bogus.name, str(c.measure))]
            values[c.label] = {str(q): float(v) for q, v in zip(res.query_ids[bogus.name],
                                                                 got, strict=True)}
    return values, strings


def trec_texts(qrels: Qrels, run: Run, cols: Sequence[Column], options: EvalOptions
               ) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, float]]]:
    """What :func:`write_trec` prints for ``run`` beside the evaluation's values:
    ``(strings, overrides)``, each ``{column label: {query: ...}}``.

    ``strings``: every relstring column's strings (:func:`relstrings`), with 10.0's under
    ``-c`` for the judged queries the run misses; ``overrides``: the values 10.0 prints
    for those queries where they are not the evaluation's (:func:`unanswered_10`). A
    query's texts depend on that query's qrels and ranking only, so the Dask engine
    computes them partition by partition with this same function.
    """
    strings = {c.label: relstrings(qrels, run, options, c.depth)
               for c in cols if c.measure is None}
    overrides, texts = unanswered_10(qrels, run, cols, options)
    for label, text in texts.items():
        strings[label] = {**strings.get(label, {}), **text}
    return strings, overrides


def _double(value: float) -> str:
    """trec_eval's ``%6.4f``, NaN as it prints it."""
    return NAN if math.isnan(value) else f"{value:6.4f}"


def _value(value: float, m: Measure) -> str:
    if math.isnan(value):
        return NAN
    if m.name in COUNTS:
        return str(int(round(value)))
    return f"{value:6.4f}"


MIN_GEO_MEAN = 0.00001
"""trec_eval's floor of a value before its log in gm_map and gm_bpref."""


def trec_mean(values: np.ndarray, name: str, n_queries: int) -> float:
    """The ``all`` value trec_eval prints for per-query ``values``, computed as it computes
    it, so that it has the same bits (and prints the same 4th decimal).

    ``values``: the per-query values of the queries trec_eval evaluates, in its order (query
    ids in byte order); ``name``: the measure's family; ``n_queries``: what trec_eval
    divides by (the evaluated queries, or with ``-c`` every qrels query: 9.0.8 evaluates
    only the queries the run answers and divides by all, the others adding nothing).
    The values are added one by one in double from 0 (``meas_acc.c``) and the sum divided
    by ``n_queries`` (``meas_avg.c``); gm_map and gm_bpref add ``log(max(v, 0.00001))``,
    add ``log(0.00001)`` once for each query not evaluated, and print ``exp`` of the mean
    (``te_calc_avg_meas_s_gm``); a NaN value makes the mean NaN. Counts are sums.

    >>> trec_mean(np.array([0.1, 0.2, 0.4]), "AP", 3) == (0.1 + 0.2 + 0.4) / 3
    True
    >>> f"{trec_mean(np.array([0.5, 0.0]), 'GMAP', 3):.3g}"  # (0.5 · 1e-5 · 1e-5) ** (1/3)
    '0.000368'
    """
    if name in COUNTS:
        return float(sum(values.tolist()))
    total = 0.0
    if name in _SUMMARY_ONLY:
        for v in values.tolist():
            total += math.log(max(v, MIN_GEO_MEAN)) if not math.isnan(v) else v
        if n_queries <= 0:
            return 0.0
        total += (n_queries - len(values)) * math.log(MIN_GEO_MEAN)
        return math.exp(total / n_queries)
    for v in values.tolist():
        total += v
    return total / n_queries if n_queries else total


MISSING_ZSCORE = -1_000_000.0
"""trec_eval's z-score of a value the z-score file has no mean and deviation for."""


def zscores(values: np.ndarray, query_ids: Sequence[object], name: str,
            table: Mapping[tuple[str, str], tuple[float, float]]) -> np.ndarray:
    """trec_eval's ``-Z``: each query's value of the measure printed ``name`` as a z-score,
    ``(value - mean) / stddev`` with the query's mean and deviation in ``table``
    (:func:`ireval_core.io.zscores.read_zscores`); a deviation of 0 gives 0 when the value
    is the mean; anything else (no line for the query and measure, or a deviation of 0 and
    another value) gives -1000000, as trec_eval's ``convert_zscores.c``.

    >>> zscores(np.array([0.5, 0.2, 0.3]), ["1", "2", "3"], "map",
    ...         {("1", "map"): (0.25, 0.5), ("2", "map"): (0.2, 0.0)}).tolist()
    [0.5, 0.0, -1000000.0]
    """
    pairs = [table.get((str(q), name)) for q in query_ids]
    mean = np.array([np.nan if p is None else p[0] for p in pairs])
    sd = np.array([np.nan if p is None else p[1] for p in pairs])
    values = np.asarray(values, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = (values - mean) / sd
    z = np.where(sd == 0, np.where(values == mean, 0.0, MISSING_ZSCORE), z)
    return np.where(np.isnan(mean), MISSING_ZSCORE, z)


def _zscore_column(res: Evaluation, s: str, col: Column, rows: np.ndarray,
                   table: Mapping[tuple[str, str], tuple[float, float]]
                   ) -> tuple[np.ndarray, float]:
    """A column's per-query z-scores and its ``all`` value under ``-Z``: the mean of the
    z-scores, their sum for the counts, exp of their mean for gm_map/gm_bpref (whose
    per-query value is log(max(AP, 1e-5)) in trec_eval). ``rows``: the queries trec_eval
    evaluates (9.0.8 with -c adds the others to the average as 0)."""
    if col.measure is None:
        raise TypeError(f"{col.label} is a string column, with no z-score")
    values = res.values[(s, str(col.measure))]
    qids = res.query_ids[s]
    name = col.measure.name
    if name in _SUMMARY_ONLY:
        values = np.log(np.maximum(values, 1e-5))
    z = np.zeros(len(qids))
    z[rows] = zscores(values[rows], [qids[i] for i in rows], col.label, table)
    if name in COUNTS:
        return z, float(z.sum())
    mean = float(z.mean()) if len(z) else 0.0
    return z, (math.exp(mean) if name in _SUMMARY_ONLY else mean)


def write_trec(res: Evaluation, cols: Sequence[Column], per_query: bool, out: TextIO, *,
               strings: Mapping[tuple[str, str], Mapping[str, str]] | None = None,
               header: Iterable[str] = HEADER,
               zscore_table: Mapping[tuple[str, str], tuple[float, float]] | None = None,
               overrides: Mapping[tuple[str, str], Mapping[str, float]] | None = None
               ) -> None:
    """Write ``res`` as trec_eval prints it (see the module docstring).

    ``header``: which of ``runid`` and ``num_q`` to print; trec_eval prints them when asked
    (``all_trec``, ``official``, ``-m runid``), not with ``-m map`` alone
    (:func:`header_of`). ``runid`` is always printed when ``res`` has several systems, to
    tell them apart (trec_eval evaluates one run). ``zscore_table``: trec_eval's ``-Z``,
    every value printed as a z-score (:func:`zscores`) under the name ``Z<name>``.

    Under 9.0.8 semantics with ``complete``, the queries a run does not answer
    (:attr:`Evaluation.answered`) get no per-query line, as trec_eval 9.0.8 skips them.
    ``strings``: the relstrings, by (system, column label). ``overrides``: per-query values
    printed (and averaged) in place of the evaluation's, by (system, column label) and query
    (:func:`unanswered_10`).
    """
    skip_missing = res.options.trec_eval == "9.0.8" and res.options.complete
    z_mark = "Z" if zscore_table is not None else ""
    for s in res.systems:
        qids = res.query_ids[s]
        kept = (set(map(str, res.answered[s])) if skip_missing and s in res.answered
                else None)
        rows = np.array([i for i, q in enumerate(qids) if kept is None or str(q) in kept],
                        dtype=np.int64)
        cells: list[tuple[Column, np.ndarray | None, float]] = []
        for c in cols:
            if c.measure is None:
                cells.append((c, None, math.nan))
            elif zscore_table is not None:
                cells.append((c, *_zscore_column(res, s, c, rows, zscore_table)))
            elif c.measure.name in COUNTS:  # sums, and num_rel's own rule under -c
                cells.append((c, res.values[(s, str(c.measure))], res.mean(s, c.measure)))
            else:
                column = res.values[(s, str(c.measure))]
                replaced = (overrides or {}).get((s, c.label))
                if replaced:
                    column = np.array([replaced.get(str(q), v) for q, v in
                                       zip(qids, column.tolist(), strict=True)])
                averaged, divisor = column[rows], len(qids)
                if res.options.idcg_zero == "drop" and c.measure.name in _DROPPED:
                    # no trec_eval option: the queries the option drops leave the mean
                    divisor -= int(np.count_nonzero(np.isnan(averaged)))
                    averaged = averaged[~np.isnan(averaged)]
                cells.append((c, column, trec_mean(averaged, c.measure.name, divisor)))
        lines: list[str] = []  # written at once: one call per system, not per line
        if per_query:
            for i in rows:
                q = qids[i]
                for col, values, _ in cells:
                    if col.measure is None or values is None:
                        text = (strings or {}).get((s, col.label), {}).get(str(q))
                        if text is not None:
                            lines.append(f"{col.label:<22}\t{q}\t'{text}'\n")
                    elif col.measure.name not in _SUMMARY_ONLY:
                        text = (_double(float(values[i])) if z_mark
                                else _value(float(values[i]), col.measure))
                        lines.append(f"{z_mark}{col.label:<22}\t{q}\t{text}\n")
        if "runid" in header or len(res.systems) > 1:
            lines.append(f"{'runid':<22}\tall\t{s}\n")
        if "num_q" in header:
            n = f"{len(qids):6.4f}" if z_mark else str(len(qids))
            lines.append(f"{z_mark}{'num_q':<22}\tall\t{n}\n")
        for col, _, mean in cells:
            if col.measure is not None:
                text = _double(mean) if z_mark else _value(mean, col.measure)
                lines.append(f"{z_mark}{col.label:<22}\tall\t{text}\n")
        out.write("".join(lines))
