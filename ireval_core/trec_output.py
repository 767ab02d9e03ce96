"""trec_eval's printed output, line for line: its measure order, names and number formats.

``python -m ireval_core eval`` prints this layout (``--format trec``, the default), for the
trec_eval version of the options (``--trec-eval``):

* with ``-q``, for each evaluated query (query ids in byte order, as trec_eval sorts them),
  every measure's per-query line in the order asked; ``gm_map`` and ``gm_bpref`` have none
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
from dataclasses import dataclass
from typing import TextIO

import numpy as np

from .data import Qrels, Run, join
from .evaluate import Evaluation
from .measures import Measure
from .options import EvalOptions

__all__ = ["COUNTS", "Column", "all_trec", "columns", "official", "relstrings", "write_trec"]

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

COUNTS = frozenset({"NumRet", "NumRel", "NumRelRet", "NumNonRelRet"})
"""Families printed as whole numbers (trec_eval's ``%ld``)."""
_SUMMARY_ONLY = frozenset({"GMAP", "GMbpref"})  # trec_eval prints no per-query line
_RELSTRING = re.compile(r"^relstring(?:[._](\d+))?$")


_OFFICIAL = _ALL_TREC_9[: _ALL_TREC_9.index("P_1000") + 1]  # up to P: trec_eval's "official"


def all_trec(trec_eval: str) -> list[str]:
    """trec_eval's ``all_trec`` of ``trec_eval`` ("9.0.8" or "10.0"), in its print order."""
    return list(_ALL_TREC_10 if trec_eval == "10.0" else _ALL_TREC_9)


def official() -> list[str]:
    """trec_eval's ``official`` measures (its default), in its print order."""
    return list(_OFFICIAL)


@dataclass(frozen=True)
class Column:
    """One printed measure: its label, and the measure (``None``: relstring, ``depth`` long)."""

    label: str
    measure: Measure | None = None
    depth: int = 10


def columns(names: Iterable[str], parse: object) -> list[Column]:
    """The printed columns of measure ``names`` (``parse``: the measure parser), each name
    once (two names of one measure, as ``Rprec`` and ``Rprec_mult_1.00``, are both printed,
    as trec_eval does); ``relstring``/``relstring_N`` as strings.

    As trec_eval's ``-m all_trec -m relstring.20``, a ``relstring_N`` (or ``relstring.N``)
    sets the depth of the relstring that ``all_trec`` lists, printed in its place as
    ``relstring_N``.
    """
    names = [n.strip() for n in names]
    given = [int(h[1]) for h in map(_RELSTRING.match, names) if h and h[1]]
    out: list[Column] = []
    seen: set[object] = set()
    for text in names:
        hit = _RELSTRING.match(text)
        key: object
        if hit:
            depth = int(hit[1]) if hit[1] else (given[0] if given else 10)
            col = Column("relstring" if depth == 10 and not given else f"relstring_{depth}",
                         None, depth)
            key = "relstring"
        else:
            m = parse(text)  # type: ignore[operator]
            col, key = Column(text, m), text
        if key not in seen:
            seen.add(key)
            out.append(col)
    return out


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


def _value(value: float, m: Measure) -> str:
    if math.isnan(value):
        return "nan"
    if m.name in COUNTS:
        return str(int(round(value)))
    return f"{value:6.4f}"


def write_trec(res: Evaluation, cols: Sequence[Column], per_query: bool, out: TextIO, *,
               strings: Mapping[tuple[str, str], Mapping[str, str]] | None = None) -> None:
    """Write ``res`` as trec_eval prints it (see the module docstring).

    Under 9.0.8 semantics with ``complete``, the queries a run does not answer
    (:attr:`Evaluation.answered`) get no per-query line, as trec_eval 9.0.8 skips them.
    ``strings``: the relstrings, by (system, column label).
    """
    skip_missing = res.options.trec_eval == "9.0.8" and res.options.complete
    for s in res.systems:
        if per_query:
            kept = (set(map(str, res.answered[s])) if skip_missing and s in res.answered
                    else None)
            cells = [(c, None if c.measure is None else res.values[(s, str(c.measure))])
                     for c in cols]
            for i, q in enumerate(res.query_ids[s]):
                if kept is not None and str(q) not in kept:
                    continue
                for col, values in cells:
                    if col.measure is None or values is None:
                        text = (strings or {}).get((s, col.label), {}).get(str(q))
                        if text is not None:
                            out.write(f"{col.label:<22}\t{q}\t'{text}'\n")
                    elif col.measure.name not in _SUMMARY_ONLY:
                        text = _value(float(values[i]), col.measure)
                        out.write(f"{col.label:<22}\t{q}\t{text}\n")
        out.write(f"{'runid':<22}\tall\t{s}\n")
        out.write(f"{'num_q':<22}\tall\t{len(res.query_ids[s])}\n")
        for col in cols:
            if col.measure is not None:
                text = _value(res.mean(s, col.measure), col.measure)
                out.write(f"{col.label:<22}\tall\t{text}\n")
