"""Families computed from other judgments than a run joined with qrels.

trec_eval's preference measures (``all_prefs``: ``-R prefs`` or ``-R qrels_prefs``) and its
judgment-group measures (``*_avgjg``: ``-R qrels_jg``) are measures like the others: a name,
a definition shown with every number, parameters and the trec_eval name as an alias. Their
input is not a :class:`~ireval_core.data.Ranked`, so their ``kernel`` refuses and the
values come from :func:`ireval_core.preferences.evaluate_preferences` and
:func:`ireval_core.judgment_groups.evaluate_judgment_groups`; ``Family.judgments`` says
which judgments each needs. ``docs/semantics.md`` defines each measure.
"""

from __future__ import annotations

import numpy as np

from ..data import Ranked
from ..errors import UnknownMeasureError
from ..options import EvalOptions
from .binary import SUM_PARTS, sum_aggregate
from .registry import FAMILIES, REL, Family, Measure, register

__all__ = ["not_from_a_ranking", "refusal"]


def refusal(m: Measure) -> UnknownMeasureError:
    """The error for a measure of ``m``'s family evaluated on a run joined with qrels: which
    judgments it needs and what computes it."""
    where = ("ireval_core.preferences.evaluate_preferences" if m.family.judgments == "prefs"
             else "ireval_core.judgment_groups.evaluate_judgment_groups")
    return UnknownMeasureError(f"{m} is not computed from a run joined with qrels: it needs "
                               f"{m.family.needs}; {where} computes it")


def not_from_a_ranking(r: Ranked, m: Measure, o: EvalOptions) -> np.ndarray:
    """The kernel of a family whose input is not a joined ranking: raises :func:`refusal`."""
    raise refusal(m)


# ----------------------------------------------------------------------------- preferences

_ALL = "counting implied preferences, and those with neither document retrieved as failed"
_RET = "counting only preferences with both documents retrieved"
_IMP = "counting implied preferences, ignoring those with neither document retrieved"
_PREFS: tuple[tuple[str, str, str, bool], ...] = (
    ("NumPrefs", "prefs_num_prefs_poss",
     "number of preferences of the query's judgment groups, retrieved or not", True),
    ("NumPrefsFul", "prefs_num_prefs_ful",
     "number of preferences fulfilled, implied ones included", True),
    ("NumPrefsFulRet", "prefs_num_prefs_ful_ret",
     "number of preferences fulfilled with both documents retrieved", True),
    ("PrefSimp", "prefs_simp", "preferences fulfilled / preferences possible, every "
     "preference of every group counted, " + _ALL, False),
    ("PrefPair", "prefs_pair", "mean over document pairs with a preference of the share of "
     "the pair's preferences (over all groups) fulfilled, " + _ALL, False),
    ("PrefAvgJG", "prefs_avgjg", "mean over judgment groups of fulfilled / possible in the "
     "group (a group with none possible adds 0), " + _ALL, False),
    ("PrefAvgJGRnonrel", "prefs_avgjg_Rnonrel", "prefs_avgjg with the non-relevant (level 0) "
     "documents of each group brought to R, its number of relevant ones (trec_eval's "
     "computation, quirks included), " + _ALL, False),
    ("PrefSimpRet", "prefs_simp_ret", "prefs_simp " + _RET, False),
    ("PrefPairRet", "prefs_pair_ret", "prefs_pair " + _RET, False),
    ("PrefAvgJGRet", "prefs_avgjg_ret", "prefs_avgjg " + _RET, False),
    ("PrefAvgJGRnonrelRet", "prefs_avgjg_Rnonrel_ret", "prefs_avgjg_Rnonrel with R and the "
     "non-relevant documents counted among the retrieved, " + _RET, False),
    ("PrefSimpImp", "prefs_simp_imp", "prefs_simp " + _IMP, False),
    ("PrefPairImp", "prefs_pair_imp", "prefs_pair " + _IMP, False),
    ("PrefAvgJGImp", "prefs_avgjg_imp", "prefs_avgjg " + _IMP, False),
)
_PREFS_DEPTH = "; ranking: score descending, ties by document id ascending, cut at -M"

for _name, _trec, _text, _count in _PREFS:  # in the order of trec_eval's all_prefs
    register(Family(
        _name, not_from_a_ranking, _text + _PREFS_DEPTH, cutoff="none", binary=False,
        bounds=(0.0, None) if _count else (0.0, 1.0),
        aggregate=sum_aggregate if _count else None, parts=SUM_PARTS if _count else None,
        aggregate_rule=("summed over queries" if _count else
                        "arithmetic mean over the judged queries evaluated"),
        trec=_trec, aliases=(_trec,), judgments="prefs",
                    prefix=False, monotone=False, explained=False))

# ----------------------------------------------------------------------------- judgment groups

_PER_GROUP = ("against each judgment group's judgments alone (R, the relevance level, -J and "
              "-M applied per group), averaged per query over the groups that judged it (a "
              "value a group leaves undefined counts 0)")
register(Family("APAvgJG", not_from_a_ranking, "AP (relevant: {rel}), " + _PER_GROUP,
                cutoff="none", params=(REL,), trec="map_avgjg", judgments="qrels_jg",
                base="AP",
                prefix=False, monotone=False, explained=False))
register(Family("PAvgJG", not_from_a_ranking, "P@{k} (relevant: {rel}), " + _PER_GROUP,
                cutoff="required", params=(REL,), trec="P_avgjg_k", judgments="qrels_jg",
                base="P",
                prefix=False, monotone=False, explained=False))
register(Family("RprecAvgJG", not_from_a_ranking, "Rprec(mult={mult}), the precision at rank "
                "(long)(mult·R + 0.9) (relevant: {rel}), " + _PER_GROUP, cutoff="none",
                params=FAMILIES["Rprec"].params, trec="Rprec_mult_avgjg_x",
                judgments="qrels_jg", base="Rprec",
                prefix=False, monotone=False, explained=False))
