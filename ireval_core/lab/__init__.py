r"""The metric lab: one ranked list of grades, evaluated step by step.

For teaching in meetings: a ranked list (a grade per rank, typed or taken from a
real query) is explained rank by rank for one measure, with a table of rank,
grade, gain, discount, contribution and running total, the formula in LaTeX and
one paragraph in words (:func:`explain`). The number itself always comes from
the real kernels: :func:`explain` builds in-memory :class:`~ireval_core.data.Qrels`
and :class:`~ireval_core.data.Run` from the list and calls
:func:`ireval_core.evaluate`; the steps are the explanation, and the tests check
that they add up to the kernel's number.

The seeds' worked examples are :data:`PRESETS`, each with the number the seed
publishes; :func:`run_preset` recomputes them (:class:`PresetResult`).

Conventions of a list: ``grades[i]`` is the grade of the document at rank
``i + 1``; NaN = not in the qrels (unjudged); a negative grade = pooled but not
judged. ``unretrieved`` are the grades of the query's judged documents that the
list does not contain: they count in R (recall, AP, bpref), in N (bpref) and in
the ideal ranking of nDCG.

>>> ex = explain([1, 0, 1, 0, 0, 1], "AP")
>>> round(ex.value, 4)
0.7222
>>> ex.steps["precision"].round(4).tolist()
[1.0, 0.5, 0.6667, 0.5, 0.4, 0.5]
>>> ex.steps["contribution"].round(4).tolist()
[0.3333, 0.0, 0.2222, 0.0, 0.0, 0.1667]
>>> ex.text.split(". ")[1]
'The relevant ones in the list are at ranks 1, 3, 6; precision at those ranks: 1, 0.6667, 0.5'

Where things are: :mod:`~.explainer` takes the list (:func:`explain`, :func:`query_list`,
:func:`parse_grades`) and computes its number with the real kernels; :mod:`~.steps` holds
each family's explainer (:data:`~.steps.EXPLAINERS`, one per family whose
:attr:`~ireval_core.measures.registry.Family.explained` is set); :mod:`~.presets` the
seeds' worked examples.
"""

from __future__ import annotations

from .explainer import MEASURE_CHOICES, Explanation, LabList, explain, parse_grades, query_list
from .presets import PRESETS, LabQuery, Preset, PresetResult, Published, preset, run_preset
from .steps import EXPLAINED_FAMILIES

__all__ = ["EXPLAINED_FAMILIES", "MEASURE_CHOICES", "PRESETS", "Explanation", "LabList",
           "LabQuery", "Preset", "PresetResult", "Published", "explain", "parse_grades",
           "preset", "query_list", "run_preset"]
