"""Qrels rounds page: widget keys (no URL parameter of its own)."""

from __future__ import annotations

from ..views import ViewParam

UPLOADER = "ireval.rounds.upload"
"""File uploader: the qrels of another round."""
SWAP = "ireval.rounds.swap"
"""Toggle: the uploaded round is the newer one."""
MEASURE = "ireval.rounds.measure"
"""Select: the measure of the ranking-stability table."""
K = "ireval.rounds.k"
"""Number: the depth k of coverage and of the to-label list."""

PARAMS: tuple[ViewParam, ...] = ()
