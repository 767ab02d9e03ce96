"""nDCG vs DCG page: widget keys and URL parameters."""

from __future__ import annotations

from ireval_core.params import Options

from ..views import ViewParam

K = "ireval.ndcg.k"
"""Select: the cutoff of DCG and nDCG."""
RECALL_K = "ireval.ndcg.recall_k"
"""Select: the cutoff of recall."""
TABLE = "ireval.ndcg.table"
"""Dataframe (a key keeps its selection stable)."""

CUTOFFS = (5, 10, 20, 100)
RECALL_CUTOFFS = (10, 100, 1000)

PARAMS = (ViewParam(K, "k", Options(CUTOFFS)),
          ViewParam(RECALL_K, "recall_k", Options(RECALL_CUTOFFS)))

LOCAL: dict[str, str] = {}
"""Widgets the link leaves out, and why: none."""
