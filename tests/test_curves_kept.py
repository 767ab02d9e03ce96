"""Curves after a relevance-level change: the sorted judged rows kept with a shared join
give the same curves as computing everything afresh."""

from __future__ import annotations

import numpy as np
import pytest

from ireval_core import EvalOptions, Qrels, Run
from ireval_core.curves import pooled_auc, pooled_roc, run_curves
from ireval_core.data import JoinCache, join


def _data(seed: int) -> tuple[Qrels, Run]:
    rng = np.random.default_rng(seed)
    qrels = {f"q{q}": {f"d{d}": int(rng.integers(-1, 4))
                       for d in rng.choice(100, int(rng.integers(1, 40)), replace=False)}
             for q in range(30)}
    run = {f"q{q}": {f"d{d}": float(np.round(rng.random(), 1))  # many tied scores
                     for d in rng.choice(100, int(rng.integers(1, 80)), replace=False)}
           for q in range(35)}
    return Qrels.from_dict(qrels), Run.from_dict(run, name="r")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_level_changes_on_a_kept_join_give_fresh_curves(seed: int) -> None:
    qrels, run = _data(seed)
    joins = JoinCache()
    for level in (1.0, 2.0, 0.0, 3.0, 1.0, 4.0):
        options = EvalOptions(rel_level=level)
        kept = run_curves(qrels, run, options=options, joins=joins)
        fresh = run_curves(qrels, run, options=options)
        r = join(qrels, run, options=options)
        for got in (kept, fresh):
            assert got.auc == pooled_auc(r, rel_level=level) or (
                np.isnan(got.auc) and np.isnan(pooled_auc(r, rel_level=level)))
            roc = pooled_roc(r, rel_level=level)
            np.testing.assert_array_equal(got.roc_frame().to_numpy(), roc.to_numpy())
            np.testing.assert_array_equal(got.interpolated_precision,
                                          fresh.interpolated_precision)
            assert (got.n_judged, got.n_relevant, got.n_with_relevant) == (
                fresh.n_judged, fresh.n_relevant, fresh.n_with_relevant)
    assert joins.misses == 1  # one join for every level
