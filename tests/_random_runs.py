"""Random qrels and runs as nested dicts (pytrec_eval's form) for the tests that check
curves and pairwise measures against sklearn, scipy and slow reference code.

Each test module plants its own special cases (queries with one class, relevant
documents nobody retrieves, ...) between the draws made here; the draws, and so the
data of a seed, are those the modules made before they shared them.

Not a test module: ``tests/test_curves.py`` and ``tests/test_pairwise.py`` import it.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

Nested = dict[str, dict[str, float]]


def random_queries(rng: np.random.Generator, n_queries: int
                   ) -> Iterator[tuple[int, str, list[str], np.ndarray]]:
    """For each of ``n_queries`` queries: its number ``i``, its id (``q00``, ``q01``, ...),
    its documents (1 to 29 of ``d000``-``d199``, in draw order) and their grades drawn
    from {-1, 0, 0, 1, 1, 2, 3}. What the caller draws from ``rng`` for a query comes
    before the next query's draws."""
    for i in range(n_queries):
        n_docs = int(rng.integers(1, 30))
        docs = [f"d{j:03d}" for j in rng.choice(200, size=n_docs, replace=False)]
        yield i, f"q{i:02d}", docs, rng.choice([-1, 0, 0, 1, 1, 2, 3], size=n_docs)


def random_scores(rng: np.random.Generator, docs: list[str], retrieved: np.ndarray
                  ) -> dict[str, float]:
    """Scores of the ``retrieved`` documents: multiples of 1/4 in [0, 1.75], many tied."""
    return {d: float(rng.integers(0, 8)) / 4 for d, k in zip(docs, retrieved, strict=True) if k}


def ranking(docs: dict[str, float]) -> list[str]:
    """Score descending, docid descending (trec_eval's order), the slow way."""
    return sorted(sorted(docs, reverse=True), key=lambda d: -docs[d])
