"""Preference measures: trec_eval's ``all_prefs`` (``-R prefs``, ``-R qrels_prefs``).

A run fulfils a preference "A over B" of a judgment group when it ranks A above B. As
trec_eval 10.0 (``form_prefs_counts.c`` and the ``m_prefs_*.c`` measures), per query:

* the judged documents are those of any line of the query; the retrieved ones (in the
  first ``-M`` of the ranking, ordered by score descending and, for ties, document id
  *ascending*: this ranking differs from trec_eval's usual one) are numbered in rank
  order, the others after them;
* a group with one sub-group prefers each document to every document with a lower level
  in it; a group with several sub-groups unites their preferences and adds the
  transitive ones (A over B in one sub-group and B over C in another give A over C); a
  cycle, or a document at level 0 in one sub-group and above 0 in another, is an error;
* each preference is *fulfilled* or not, among the *retrieved* (both documents
  retrieved), *implied* (one retrieved: fulfilled when it is the preferred one) or
  *not occurring* (neither: never fulfilled) ones.

The measures (:data:`PREF_MEASURES`, trec_eval names as aliases) are ratios of
fulfilled to possible preferences over these counts; ``docs/semantics.md`` defines
each, with trec_eval's own quirks that they reproduce.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from .data import Run
from .errors import UnknownMeasureError
from .evaluate import Evaluation
from .io.prefs import Preferences
from .measures import Measure, families
from .options import EvalOptions

__all__ = ["ALL_PREFS", "PREF_MEASURES", "PrefMeasure", "PreferenceError",
           "evaluate_preferences", "pref_measure"]


@dataclass(frozen=True)
class PrefMeasure:
    """One preference measure: ireval's name, trec_eval's name, its definition, and
    whether it is a count (summed over queries, printed whole) or a ratio (averaged).

    A view of a registered family (``judgments="prefs"``, :mod:`ireval_core.measures`),
    where the definitions live."""

    name: str
    trec: str
    definition: str
    count: bool = False

    @property
    def measure(self) -> Measure:
        """The measure spec results are keyed by (``str`` of it is :attr:`name`)."""
        return Measure(self.name)


PREF_MEASURES: tuple[PrefMeasure, ...] = tuple(
    PrefMeasure(f.name, f.trec or f.name, f.definition, count=f.aggregate is not None)
    for f in families("prefs").values())
"""Every preference measure, in the order of trec_eval's ``all_prefs``."""

ALL_PREFS = tuple(m.trec for m in PREF_MEASURES)
"""trec_eval's ``all_prefs`` (after ``runid`` and ``num_q``), in its print order."""

_BY_NAME = {n.lower(): m for m in PREF_MEASURES for n in (m.name, m.trec)}


def pref_measure(name: str) -> PrefMeasure:
    """The preference measure named ``name`` (ireval's name or trec_eval's, any case).

    >>> pref_measure("prefs_simp").name
    'PrefSimp'
    """
    found = _BY_NAME.get(name.strip().lower())
    if found is None:
        known = ", ".join(m.trec for m in PREF_MEASURES)
        raise UnknownMeasureError(f"unknown preference measure {name!r}; valid: {known} "
                                  "(or all_prefs), or their ireval names (PrefSimp, ...)")
    return found


class PreferenceError(ValueError):
    """Preferences trec_eval cannot evaluate: a contradiction within a judgment group, or
    a case where its ``prefs_avgjg_Rnonrel`` reads past its own data."""


_BOGUS_DOC = "ceci_nest_pas_un_docno"  # trec_eval's ranking of a missing query under -c


def evaluate_preferences(prefs: Preferences, runs: Run | Iterable[Run],
                         measures: Sequence[PrefMeasure | Measure | str] = PREF_MEASURES, *,
                         options: EvalOptions | None = None) -> Evaluation:
    """The preference ``measures`` of each run, per judged query, as trec_eval 10.0.

    Parameters
    ----------
    prefs:
        The judgments (:func:`~ireval_core.io.prefs.read_prefs`).
    runs:
        One run or several.
    measures:
        Which measures (default: all, in ``all_prefs`` order): :data:`PREF_MEASURES`, or
        their specs or names (``PrefSimp``, ``prefs_simp``).
    options:
        ``depth`` (``-M``) cuts each ranking; ``complete`` (``-c``) evaluates a judged
        query the run does not answer as trec_eval does (its stand-in ranking of one
        unjudged document); without it such a query is left out. Under 9.0.8 semantics
        scores are read as float32. The relevance level and ``-J`` do not apply.

    Returns
    -------
    Evaluation
        Per query the values; the counts' aggregate is their sum, the others' the mean
        over the evaluated queries.

    Examples
    --------
    >>> from ireval_core.io.prefs import read_prefs
    >>> p = read_prefs(b"1 u s a 2\\n1 u s b 1\\n1 u s c 0\\n", name="p")
    >>> run = Run.from_dict({"1": {"b": 3.0, "a": 2.0, "c": 1.0}}, name="r")
    >>> simp = pref_measure("prefs_simp")
    >>> res = evaluate_preferences(p, run, [simp])
    >>> round(float(res.mean("r", simp.measure)), 4)  # a>c and b>c of a>b, a>c, b>c
    0.6667
    """
    options = options or EvalOptions()
    run_list = [runs] if isinstance(runs, Run) else list(runs)
    chosen = [m if isinstance(m, PrefMeasure) else pref_measure(str(m)) for m in measures]
    rnonrel = any(m.trec.startswith("prefs_avgjg_Rnonrel") for m in chosen)
    docs, doc_code = np.unique(prefs.docid.astype(str), return_inverse=True)
    by_query = _lines_by_query(prefs, doc_code)
    query_ids: dict[str, np.ndarray] = {}
    values: dict[tuple[str, str], np.ndarray] = {}
    aggregates: dict[tuple[str, str], float] = {}
    n_averaged: dict[tuple[str, str], int] = {}
    answered: dict[str, np.ndarray] = {}
    for run in run_list:
        ranked = _rankings(run, docs, options)
        evaluated: list[str] = []
        rows: list[dict[str, float]] = []
        for qid, lines in by_query.items():
            ranking = ranked.get(qid)
            if ranking is None:
                if not options.complete:
                    continue
                ranking = _bogus_ranking(docs)
            evaluated.append(qid)
            rows.append(_query_values(qid, lines, ranking, docs, rnonrel=rnonrel))
        s = run.name
        query_ids[s] = np.array(evaluated, dtype=object)
        answered[s] = np.asarray(run.query_ids).astype(str).astype(object)
        for m in chosen:
            v = np.array([r[m.trec] for r in rows], dtype=np.float64)
            key = (s, m.name)
            values[key] = v
            aggregates[key] = (float(v.sum()) if m.count else
                               float(v.mean()) if len(v) else float("nan"))
            n_averaged[key] = len(v)
    return Evaluation(tuple(r.name for r in run_list), tuple(m.measure for m in chosen),
                      options, query_ids, values, aggregates, n_averaged, answered)


@dataclass(frozen=True)
class _Lines:
    """One query's lines: group and sub-group ids, document codes, levels."""

    jg: np.ndarray
    jsg: np.ndarray
    doc: np.ndarray
    rel: np.ndarray


def _lines_by_query(prefs: Preferences, doc_code: np.ndarray) -> dict[str, _Lines]:
    """The lines of each judged query, queries in byte order."""
    qids = prefs.qid.astype(str)
    order = np.argsort(qids, kind="stable")
    sorted_q = qids[order]
    starts = np.flatnonzero(np.r_[True, sorted_q[1:] != sorted_q[:-1]])
    bounds = np.r_[starts, len(order)]
    out: dict[str, _Lines] = {}
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        idx = order[a:b]
        out[str(sorted_q[a])] = _Lines(prefs.jg[idx].astype(str), prefs.jsg[idx].astype(str),
                                       doc_code[idx], prefs.rel[idx])
    return out


def _rankings(run: Run, docs: np.ndarray, options: EvalOptions) -> dict[str, np.ndarray]:
    """Per query of ``run``: the codes (in ``docs``) of its judged documents within the
    first ``depth``, in trec_eval's preference ranking order (score descending, document
    id ascending); -1 for a document no preference names."""
    names = np.asarray(run.doc_ids.to_pylist(), dtype=object).astype(str)
    all_docs = np.asarray(names)[run.dcode]
    score = np.asarray(run.score, dtype=np.float64)
    if options.trec_eval == "9.0.8":
        with np.errstate(over="ignore"):
            score = score.astype(np.float32).astype(np.float64)
    byte_rank = np.unique(all_docs, return_inverse=True)[1]
    pos = np.searchsorted(docs, all_docs)
    found = pos < len(docs)
    found[found] = docs[pos[found]] == all_docs[found]
    code = np.where(found, pos, -1)
    out: dict[str, np.ndarray] = {}
    offsets = run.offsets
    for i, qid in enumerate(run.query_ids):
        a, b = int(offsets[i]), int(offsets[i + 1])
        order = np.lexsort((byte_rank[a:b], -score[a:b]))
        if options.depth is not None:
            order = order[: options.depth]
        out[str(qid)] = code[a:b][order]
    return out


def _bogus_ranking(docs: np.ndarray) -> np.ndarray:
    """trec_eval's ranking of a query the run does not answer, under ``-c``."""
    at = int(np.searchsorted(docs, _BOGUS_DOC))
    return np.array([at if at < len(docs) and docs[at] == _BOGUS_DOC else -1])


@dataclass
class _Group:
    """One judgment group's preference matrix over its documents and its counts."""

    rank: np.ndarray  # the documents' internal ranks (retrieved first, in rank order)
    prefs: np.ndarray  # prefs[i, j]: document i preferred to document j
    rel_state: np.ndarray  # per document: 1 relevant, 0 non-relevant, -1 neither
    ec_rank: list[np.ndarray] | None  # one sub-group: the ranks per level, levels desc
    ec_level: np.ndarray | None


def _query_values(qid: str, lines: _Lines, ranking: np.ndarray, docs: np.ndarray, *,
                  rnonrel: bool = True) -> dict[str, float]:
    """Every preference measure of one query, by trec_eval name (``docs``: the ids of
    the document codes); without ``rnonrel`` the two ``prefs_avgjg_Rnonrel`` are NaN,
    not computed (trec_eval computes each measure asked for only: asked for another, it
    does not stop where those two are undefined)."""
    judged = np.unique(lines.doc)
    retrieved = ranking[ranking >= 0]
    retrieved = retrieved[np.isin(retrieved, judged)]
    njr = len(retrieved)
    unretrieved = np.setdiff1d(judged, retrieved)  # document id order
    internal = np.empty(int(judged.max()) + 1, dtype=np.int64)
    internal[np.r_[retrieved, unretrieved].astype(np.int64)] = np.arange(len(judged))
    nj = len(judged)
    rank = internal[lines.doc]
    by_rank = docs[np.r_[retrieved, unretrieved].astype(np.int64)]  # id of each rank
    counts = np.zeros((nj, nj), dtype=np.int64)
    totals = np.zeros(5, dtype=np.int64)  # ful_ret, poss_ret, ful_imp, poss_imp, notoccur
    ratios: dict[str, list[float]] = {k: [] for k in ("avgjg", "ret", "imp", "rn", "rn_ret")}
    for jg in sorted(set(lines.jg.tolist())):
        sel = lines.jg == jg
        group = _group(qid, jg, lines.jsg[sel], rank[sel], lines.rel[sel], by_rank)
        counts[np.ix_(group.rank, group.rank)] += group.prefs
        c = _area_counts(group.prefs, group.rank, njr)
        totals += c
        ful_ret, poss_ret, ful_imp, poss_imp, notoccur = (int(x) for x in c)
        poss_all = poss_ret + poss_imp + notoccur
        ful_all = ful_ret + ful_imp
        if poss_all:
            ratios["avgjg"].append(ful_all / poss_all)
        if poss_ret:
            ratios["ret"].append(ful_ret / poss_ret)
        if poss_ret + poss_imp:
            ratios["imp"].append(ful_all / (poss_ret + poss_imp))
        if rnonrel:
            ratios["rn"].append(_rnonrel(qid, jg, group, njr, nj, c, retrieved_only=False))
            ratios["rn_ret"].append(_rnonrel(qid, jg, group, njr, nj, c,
                                             retrieved_only=True))
    n_jgs = len(set(lines.jg.tolist()))
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur = (int(x) for x in totals)
    poss = poss_ret + poss_imp + notoccur
    nan = float("nan")
    pair, pair_imp, pair_ret = _pairs(counts, njr)
    return {
        "prefs_num_prefs_poss": float(poss),
        "prefs_num_prefs_ful": float(ful_ret + ful_imp),
        "prefs_num_prefs_ful_ret": float(ful_ret),
        "prefs_simp": (ful_ret + ful_imp) / poss if poss else 0.0,
        "prefs_pair": pair,
        "prefs_avgjg": _mean_over_groups(ratios["avgjg"], n_jgs),
        "prefs_avgjg_Rnonrel": _mean_over_groups(ratios["rn"], n_jgs) if rnonrel else nan,
        "prefs_simp_ret": ful_ret / poss_ret if poss_ret else 0.0,
        "prefs_pair_ret": pair_ret,
        "prefs_avgjg_ret": _mean_over_groups(ratios["ret"], n_jgs),
        "prefs_avgjg_Rnonrel_ret": (_mean_over_groups(ratios["rn_ret"], n_jgs) if rnonrel
                                    else nan),
        "prefs_simp_imp": ((ful_ret + ful_imp) / (poss_ret + poss_imp)
                           if poss_ret + poss_imp else 0.0),
        "prefs_pair_imp": pair_imp,
        "prefs_avgjg_imp": _mean_over_groups(ratios["imp"], n_jgs),
    }


def _mean_over_groups(ratios: list[float], n_jgs: int) -> float:
    """trec_eval's mean over groups: the sum (in group order) over all groups when it is
    > 0, else 0 (a NaN ratio, 0/0, makes the sum NaN and so the value 0)."""
    total = 0.0
    for r in ratios:
        total += r
    return total / n_jgs if total > 0.0 else 0.0


def _group(qid: str, jg: str, jsg: np.ndarray, rank: np.ndarray, rel: np.ndarray,
           by_rank: np.ndarray) -> _Group:
    """A judgment group's preferences, from its lines (sub-group, internal rank, level);
    ``by_rank``: the document id of each internal rank, for messages."""
    # trec_eval's order of a group's lines: sub-group, level descending, rank
    order = np.lexsort((rank, -rel, jsg))
    jsg, rank, rel = jsg[order], rank[order], rel[order]
    docs, local = np.unique(rank, return_inverse=True)
    n = len(docs)
    sub = np.unique(jsg, return_inverse=True)[1]
    same_sub = sub[:, None] == sub[None, :]
    above = same_sub & (rel[:, None] > rel[None, :])
    prefs = np.zeros((n, n), dtype=bool)
    a, b = np.nonzero(above)
    prefs[local[a], local[b]] = True
    if len(np.unique(jsg)) == 1:
        levels, starts = np.unique(-rel, return_index=True)
        bounds = np.r_[starts, len(rel)]
        ec_rank = [rank[s:e] for s, e in zip(bounds[:-1], bounds[1:], strict=True)]
        state = np.where(rel > 0, 1, 0)  # a level below 0 counts as non-relevant here
        rel_state = np.empty(n, dtype=np.int64)
        rel_state[local] = state
        return _Group(docs, prefs, rel_state, ec_rank, -levels)
    _check_levels(qid, jg, local, rel, docs)
    last_line = np.zeros(n, dtype=np.int64)
    np.maximum.at(last_line, local, np.arange(len(local)))
    last = rel[last_line]  # each document's level on its last line, as trec_eval keeps it
    rel_state = np.where(last > 0, 1, np.where(last == 0, 0, -1))
    prefs = _closure(prefs)
    np.fill_diagonal(prefs, False)
    conflict = np.argwhere(prefs & prefs.T)
    if len(conflict):
        i, j = conflict[0]
        raise PreferenceError(f"query {qid!r}, judgment group {jg!r}: its sub-groups "
                              f"contradict each other (documents {str(by_rank[docs[i]])!r} "
                              f"and {str(by_rank[docs[j]])!r} are each preferred to the other, "
                              "directly or through others); trec_eval 10.0 aborts")
    return _Group(docs, prefs, rel_state, None, None)


def _check_levels(qid: str, jg: str, local: np.ndarray, rel: np.ndarray,
                  docs: np.ndarray) -> None:
    """trec_eval's check, line by line in group order: a document's level may not go
    from 0 to above 0 or back between two of its lines."""
    order = np.lexsort((np.arange(len(local)), local))
    same = local[order][1:] == local[order][:-1]
    prev, cur = rel[order][:-1], rel[order][1:]
    bad = same & (((prev > 0) & (cur == 0)) | ((prev == 0) & (cur > 0)))
    if bad.any():
        raise PreferenceError(f"query {qid!r}, judgment group {jg!r}: a document has level 0 "
                              "in one sub-group and a level above 0 in another; trec_eval "
                              "10.0 refuses that")


def _closure(prefs: np.ndarray) -> np.ndarray:
    """The transitive closure of a preference relation (boolean matrix squaring)."""
    reach = prefs | np.eye(len(prefs), dtype=bool)
    while True:
        m = reach.astype(np.float64)
        nxt = (m @ m) > 0
        if np.array_equal(nxt, reach):
            return reach
        reach = nxt


def _area_counts(prefs: np.ndarray, rank: np.ndarray, njr: int,
                 keep: np.ndarray | None = None) -> np.ndarray:
    """(fulfilled retrieved, possible retrieved, fulfilled implied, possible implied, not
    occurring) of a group's preferences; ``keep``: the documents taken into account."""
    if keep is not None:
        prefs, rank = prefs[np.ix_(keep, keep)], rank[keep]
    ri, rj = rank[:, None], rank[None, :]
    i_ret, j_ret = ri < njr, rj < njr
    ful_ret = int((prefs & (ri < rj) & j_ret).sum())
    unful_ret = int((prefs & (ri > rj) & i_ret).sum())
    ful_imp = int((prefs & i_ret & ~j_ret).sum())
    unful_imp = int((prefs & ~i_ret & j_ret).sum())
    notoccur = int((prefs & ~i_ret & ~j_ret).sum())
    return np.array([ful_ret, ful_ret + unful_ret, ful_imp, ful_imp + unful_imp, notoccur],
                    dtype=np.int64)


def _rnonrel(qid: str, jg: str, g: _Group, njr: int, nj: int, c: np.ndarray, *,
             retrieved_only: bool) -> float:
    """One group's ratio of ``prefs_avgjg_Rnonrel`` (``retrieved_only``: ``_ret``), as
    trec_eval computes it: NaN for 0/0, which the mean over groups turns into 0."""
    ret = g.rank < njr
    rel, nonrel = g.rel_state == 1, g.rel_state == 0
    num_rel, num_rel_ret = int(rel.sum()), int((rel & ret).sum())
    if retrieved_only:
        big_r, big_n = num_rel_ret, int((nonrel & ret).sum())
    else:
        big_r, big_n = num_rel, int(nonrel.sum())
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur = (int(x) for x in c)
    if big_r >= big_n:
        if retrieved_only:
            ful, poss = ful_ret, poss_ret
        else:
            ful, poss = ful_ret + ful_imp, poss_ret + poss_imp + notoccur
        ful += num_rel_ret * (big_r - big_n)
        poss += num_rel * (big_r - big_n)
    elif g.ec_rank is not None:
        ful, poss = _rnonrel_ec(qid, jg, g, njr, big_r, retrieved_only)
    else:
        ful, poss = _rnonrel_pa(g, njr, nj, num_rel, retrieved_only)
    return ful / poss if poss else float("nan")


def _rnonrel_ec(qid: str, jg: str, g: _Group, njr: int, size: int,
                retrieved_only: bool) -> tuple[int, int]:
    """trec_eval's recount for a one-sub-group group with more non-relevant documents than
    R: pairs between the levels but the lowest, then every document against the first
    ``size`` documents (in rank order) of the lowest level, itself included."""
    if g.ec_rank is None:
        raise TypeError("a group of several sub-groups has no levels to recount by")
    ecs = [np.sort(e) for e in g.ec_rank]
    if retrieved_only:
        ecs = [e[e < njr] for e in ecs]
    lowest = ecs[-1]
    if len(lowest) < size and (not retrieved_only or len(lowest) == len(np.sort(
            g.ec_rank[-1]))):
        raise PreferenceError(f"query {qid!r}, judgment group {jg!r}: trec_eval 10.0's "
                              "prefs_avgjg_Rnonrel reads past its data here (the lowest "
                              "level has fewer documents than R, as with levels below 0): "
                              "its value is undefined; leave out the levels below 0 or "
                              "this measure")
    new = lowest[:size]
    ful = poss = 0

    def tally(first: np.ndarray, second: np.ndarray) -> None:
        nonlocal ful, poss
        a, b = first[:, None], second[None, :]
        good = a < b if retrieved_only else (a < b) & (a < njr)
        n_good = int(good.sum())
        ful += n_good
        poss += good.size - n_good

    for i in range(len(ecs)):
        for j in range(i + 1, len(ecs) - 1):
            tally(ecs[i], ecs[j])
    for e in ecs:
        tally(e, new)
    return ful, poss + ful


def _rnonrel_pa(g: _Group, njr: int, nj: int, num_rel: int,
                retrieved_only: bool) -> tuple[int, int]:
    """trec_eval's recount for a group of several sub-groups: the non-relevant documents
    after its (R+1)-th one in internal rank order (among the retrieved for ``_ret``;
    R counts all relevant documents in both) are left out."""
    nonrel_ranks = np.sort(g.rank[g.rel_state == 0])
    if retrieved_only:
        nonrel_ranks = nonrel_ranks[nonrel_ranks < njr]
    first_discarded = (int(nonrel_ranks[num_rel]) if len(nonrel_ranks) > num_rel
                       else (njr if retrieved_only else nj))
    keep = ~((g.rank >= first_discarded) & (g.rel_state == 0))
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur = (
        int(x) for x in _area_counts(g.prefs, g.rank, njr, keep))
    if retrieved_only:
        return ful_ret, poss_ret
    return ful_ret + ful_imp, poss_ret + poss_imp + notoccur


def _pairs(counts: np.ndarray, njr: int) -> tuple[float, float, float]:
    """prefs_pair, prefs_pair_imp, prefs_pair_ret from the summed preference counts."""
    i, j = np.triu_indices(len(counts), k=1)
    up, down = counts[i, j], counts[j, i]
    has = (up + down) > 0
    i, j, up, down = i[has], j[has], up[has], down[has]
    share = up / (up + down)
    both = j < njr
    one = (i < njr) & ~both
    s_ret = float(share[both].sum())
    s_imp = s_ret + float(share[one].sum())
    n_ret, n_imp, n_all = int(both.sum()), int((both | one).sum()), len(share)
    return (s_imp / n_all if n_all else 0.0, s_imp / n_imp if n_imp else 0.0,
            s_ret / n_ret if n_ret else 0.0)
