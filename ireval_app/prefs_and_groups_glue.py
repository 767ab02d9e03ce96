"""Preference and judgment-group measures of the loaded qrels, cached.

trec_eval computes its preference measures (``all_prefs``) from qrels read as preferences
(``-R qrels_prefs``) and its ``*_avgjg`` measures from qrels split by judgment group
(``-R qrels_jg``), the group being a qrels line's second column (``iter``), which
:class:`~ireval_core.data.Qrels` keeps when it is not constant. The Metrics page offers
those measures beside the others: :func:`split_specs` sorts a page's measure specs by the
judgments they need, :func:`evaluate_judgments_cached` evaluates one kind on every run of
the dataset as trec_eval does.
"""

from __future__ import annotations

from collections.abc import Iterable

from ireval_core.dataset import Dataset
from ireval_core.evaluate import Evaluation
from ireval_core.io.prefs import prefs_from_qrels
from ireval_core.io.qrels_jg import judgment_groups
from ireval_core.judgment_groups import evaluate_judgment_groups
from ireval_core.measures import JUDGMENTS, families, parse_measure
from ireval_core.options import EvalOptions
from ireval_core.preferences import evaluate_preferences

from .shared_cache import shared

__all__ = ["CHOICES", "KINDS", "TITLES", "evaluate_judgments_cached", "split_specs"]

KINDS = ("prefs", "qrels_jg")
"""The kinds of judgments (trec_eval's ``-R``) besides qrels the Metrics page evaluates."""

TITLES = {
    "prefs": ("Preference measures",
              "The qrels read as preference judgments, as trec_eval -R qrels_prefs does: "
              "within a query's judgment group (the qrels' second column, iter), a document "
              "of a higher grade is preferred to each of a lower grade; a run fulfils a "
              "preference by ranking the preferred document above the other."),
    "qrels_jg": ("Judgment-group measures",
                 "The qrels split by judgment group (the second column, iter), as trec_eval "
                 "-R qrels_jg does: each measure against each group's judgments alone, "
                 "averaged per query over the groups that judged it."),
}
"""Each kind's section title and what the section computes, in words."""

CHOICES = tuple(list(families("prefs")) + ["APAvgJG", "PAvgJG@10", "RprecAvgJG"])
"""What the Metrics page's picker offers of these measures (any other spec can be typed)."""


def split_specs(specs: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Canonical specs by the judgments they need (``"qrels"``, ``"prefs"``,
    ``"qrels_jg"``: :data:`ireval_core.measures.JUDGMENTS`), order kept; every kind present.

    >>> split_specs(["AP", "PrefSimp", "P_avgjg_5"])
    {'qrels': ('AP',), 'prefs': ('PrefSimp',), 'qrels_jg': ('PAvgJG@5',)}
    """
    out: dict[str, list[str]] = {kind: [] for kind in JUDGMENTS}
    for text in specs:
        m = parse_measure(text)
        out[m.family.judgments].append(str(m))
    return {kind: tuple(found) for kind, found in out.items()}


@shared(session_entries=8, show_spinner="Evaluating…")
def evaluate_judgments_cached(dataset_key: str, _dataset: Dataset, judgments: str,
                              measures: tuple[str, ...], options: EvalOptions) -> Evaluation:
    """The ``measures`` (all of kind ``judgments``: ``"prefs"`` or ``"qrels_jg"``) of every
    run of the dataset, from its qrels as trec_eval ``-R qrels_prefs`` / ``-R qrels_jg``
    computes them (:func:`~ireval_core.preferences.evaluate_preferences`,
    :func:`~ireval_core.judgment_groups.evaluate_judgment_groups`); cached by the dataset
    key, the kind, the measures and the options.

    Raises :class:`~ireval_core.preferences.PreferenceError` for preferences trec_eval
    cannot evaluate (a value of ``prefs_avgjg_Rnonrel`` it leaves undefined).
    """
    if judgments == "prefs":
        return evaluate_preferences(prefs_from_qrels(_dataset.qrels), _dataset.runs,
                                    measures, options=options)
    if judgments == "qrels_jg":
        return evaluate_judgment_groups(judgment_groups(_dataset.qrels), _dataset.runs,
                                        measures, options=options)
    raise ValueError(f"judgments must be one of {', '.join(KINDS)}, got {judgments!r}")
