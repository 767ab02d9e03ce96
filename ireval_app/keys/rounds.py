"""Qrels rounds page: widget keys and URL parameters."""

from __future__ import annotations

from numbers import Integral

from ireval_core.params import Interval

from ..views import ViewParam

UPLOADER = "ireval.rounds.upload"
"""File uploader: the qrels of another round."""
SWAP = "ireval.rounds.swap"
"""Toggle: the uploaded round is the newer one."""
MEASURE = "ireval.rounds.measure"
"""Select: the measure of the ranking-stability table."""
K = "ireval.rounds.k"
"""Number: the depth k of coverage and of the to-label list."""

K_MAX = 1000

PARAMS = (ViewParam(MEASURE, "measure"),
          ViewParam(K, "k", Interval(Integral, 1, K_MAX, closed="both")))

LOCAL = {UPLOADER: "a file: a link cannot carry it",
         SWAP: "which of the uploaded file and the current round is newer: it says how to "
               "read that file, which a link cannot carry"}
"""Widgets the link leaves out, and why."""
