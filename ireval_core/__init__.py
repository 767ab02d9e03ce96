"""ireval_core: exact, vectorised information-retrieval evaluation.

Read TREC qrels and runs (:mod:`ireval_core.io`), join them in a columnar layout
(:mod:`ireval_core.data`), compute measures (:mod:`ireval_core.measures`,
:func:`ireval_core.evaluate`) and compare systems (:mod:`ireval_core.stats`).
This package never imports Streamlit.
"""

from .data import Qrels, Ranked, Run, join
from .errors import DataWarning, FormatError, IrevalError, UnknownMeasureError
from .evaluate import EvalOptions, Evaluation, evaluate
from .io import read_qrels, read_run, read_runs
from .measures import Measure, parse_measure

__all__ = [
    "DataWarning",
    "EvalOptions",
    "Evaluation",
    "Measure",
    "evaluate",
    "parse_measure",
    "FormatError",
    "IrevalError",
    "Qrels",
    "Ranked",
    "Run",
    "UnknownMeasureError",
    "join",
    "read_qrels",
    "read_run",
    "read_runs",
]
__version__ = "0.1.0"
