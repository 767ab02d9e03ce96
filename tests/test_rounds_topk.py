"""rounds' top-k table on integer codes gives what the string join gave.

``_reference_top_k`` is the earlier implementation (every run document id cast and
joined with the qrels on (query, docid) strings by Arrow); the coverage and the
to-label list built on the faster table must hold the same rows and numbers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ireval_core import Qrels, Run
from ireval_core.io import read_qrels, read_run
from ireval_core.rounds import _top_k_table, _unjudged, coverage, to_label

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def _reference_top_k(runs: list[Run], qrels: Qrels, k: int) -> pa.Table:
    parts = []
    qrels_q = qrels.query_ids.astype(str)
    for i, run in enumerate(runs):
        rank = np.arange(len(run.qcode), dtype=np.int64) - run.offsets[run.qcode] + 1
        in_qrels = np.isin(run.query_ids.astype(str), qrels_q)
        rows = np.flatnonzero((rank <= k) & in_qrels[run.qcode])
        parts.append(pa.table({
            "run": pa.array(np.full(len(rows), i, dtype=np.int32)),
            "query": pa.array(run.query_ids.astype(str), pa.string()).take(
                pa.array(run.qcode[rows])),
            "docid": run.doc_ids.cast(pa.string()).take(pa.array(run.dcode[rows])),
            "rank": pa.array(rank[rows]),
        }))
    schema = pa.schema([("run", pa.int32()), ("query", pa.string()), ("docid", pa.string()),
                        ("rank", pa.int64())])
    top = pa.concat_tables([p.cast(schema) for p in parts]) if parts else schema.empty_table()
    judgments = pa.table({
        "query": pa.array(qrels.query_ids.astype(str), pa.string()).take(pa.array(qrels.qcode)),
        "docid": qrels.doc_ids.cast(pa.string()).take(pa.array(qrels.dcode)),
        "grade": pa.array(qrels.grade),
    })
    return top.join(judgments, keys=["query", "docid"], join_type="left outer")


def _rows(table: pa.Table) -> pd.DataFrame:
    frame = table.select(["run", "query", "docid", "rank", "grade"]).to_pandas()
    return frame.sort_values(["run", "query", "rank", "docid"], ignore_index=True)


def _random_case(seed: int, n_docs: int, depth: int = 60) -> tuple[Qrels, list[Run]]:
    rng = np.random.default_rng(seed)
    docs = [f"d{j:05d}" for j in range(n_docs)]
    judged: dict[str, dict[str, float]] = {}
    for q in range(25):  # q20..q24 judged only; runs add q25..q29, never judged
        picks = rng.choice(n_docs, size=int(rng.integers(0, 40)), replace=False)
        judged[f"q{q}"] = {docs[j]: float(rng.integers(-1, 4)) for j in picks}
    judged = {q: d for q, d in judged.items() if d}
    runs = []
    for r in range(3):
        ranking: dict[str, dict[str, float]] = {}
        for q in [*range(20), *range(25, 30)]:
            picks = rng.choice(n_docs, size=int(rng.integers(1, depth)), replace=False)
            # scores with many ties, as rounded model scores
            ranking[f"q{q}"] = {docs[j]: float(rng.integers(0, 5)) for j in picks}
            for doc in judged.get(f"q{q}", {}):  # most judged documents ranked high
                if rng.random() < 0.7:
                    ranking[f"q{q}"][doc] = float(rng.integers(3, 7))
        runs.append(Run.from_dict(ranking, name=f"run{r}"))
    return Qrels.from_dict(judged), runs


# 8000 documents, 500 per query: run dictionaries over 4096 ids, matched to the
# qrels' by integer keys instead of a hash table (ireval_core.idcodes.doc_code_map)
@pytest.mark.parametrize(("seed", "n_docs", "depth"), [(0, 200, 60), (1, 200, 60),
                                                       (2, 8000, 500)])
@pytest.mark.parametrize("k", [1, 3, 10, 100])
def test_top_k_table_equals_string_join(seed: int, n_docs: int, depth: int, k: int) -> None:
    qrels, runs = _random_case(seed, n_docs, depth)
    if n_docs > 4096:
        assert min(len(r.doc_ids) for r in runs) >= 4096
    fast, reference = _rows(_top_k_table(runs, qrels, k)), _rows(_reference_top_k(runs, qrels, k))
    assert len(fast) > 0 and fast["grade"].isna().any() and (fast["grade"] < 0).any()
    pd.testing.assert_frame_equal(fast, reference)
    # the pending rows (unjudged or negative grade) are the same ones too
    pd.testing.assert_frame_equal(_rows(_unjudged(_top_k_table(runs, qrels, k))),
                                  _rows(_unjudged(_reference_top_k(runs, qrels, k))))


def test_sample_data_coverage_and_to_label() -> None:
    qrels = read_qrels(SAMPLE / "qrels.txt")
    runs = [read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "narrow", "neural")]
    for k in (5, 10, 100):
        pd.testing.assert_frame_equal(_rows(_top_k_table(runs, qrels, k)),
                                      _rows(_reference_top_k(runs, qrels, k)))
        reference = _reference_top_k(runs, qrels, k)
        unjudged = _unjudged(reference)
        cov = coverage(qrels, runs, k)
        assert cov[f"top-{k} documents"].tolist() == np.bincount(
            reference["run"].to_numpy(), minlength=3).tolist()
        assert cov[f"unjudged in top {k}"].tolist() == np.bincount(
            unjudged["run"].to_numpy(), minlength=3).tolist()
        todo = to_label(qrels, runs, k)
        pairs = unjudged.group_by(["query", "docid"]).aggregate(
            [("run", "count_distinct"), ("rank", "min")]).to_pandas()
        assert len(todo) == len(pairs) > 0
        merged = todo.merge(pairs, on=["query", "docid"], validate="one_to_one")
        assert (merged["runs"] == merged["run_count_distinct"]).all()
        assert (merged["best_rank"] == merged["rank_min"]).all()


def test_no_runs_and_no_judgments() -> None:
    qrels, runs = _random_case(3, 100)
    assert _top_k_table([], qrels, 10).num_rows == 0
    empty = Qrels.from_dict({"q0": {"zz": 1}})  # no run document judged
    table = _rows(_top_k_table(runs, empty, 5))
    pd.testing.assert_frame_equal(table, _rows(_reference_top_k(runs, empty, 5)))
    assert table["grade"].isna().all() and set(table["query"]) == {"q0"}
