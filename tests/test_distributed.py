"""Evaluation on a real Dask cluster equals the in-memory path, query by query.

One ``distributed.LocalCluster`` (2 worker processes) for the module; generated data
written as Parquet datasets, TREC and CSV files cut into several partitions, with
queries split across files. Oracles: :func:`ireval_core.evaluate` on the same data,
``sklearn.metrics.roc_auc_score`` and :func:`ireval_core.curves.pooled_auc`.
"""

from __future__ import annotations

import gzip
import io
import json
import logging
import os
import re
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dask
import dask.dataframe as dd
import fsspec
import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest
from _slow_reads import slow_url
from distributed import Client, Event, LocalCluster, get_worker
from sklearn.metrics import roc_auc_score

from ireval_core import EvalOptions, Evaluation, FormatError, IrevalError, Qrels, Run, evaluate
from ireval_core.cli import main
from ireval_core.curves import pooled_auc
from ireval_core.data import join
from ireval_core.distributed import (
    DistributedError,
    dask_client,
    evaluate_dask,
    evaluate_dask_trec,
    evaluate_labeled,
    pooled_auc_dask,
    read_qrels_dask,
    read_runs_dask,
)
from ireval_core.io import ReadLimits, has_judgment_groups, read_qrels, read_runs
from ireval_core.measures import FAMILIES, families, parse_measure
from ireval_core.trec_output import columns

# one spec per family (every cutoff kind), and the parameters that change aggregation
MEASURES = [
    {"required": f"{name}@5", "recall": f"{name}@0.3", "none": name,
     "optional": f"{name}@10"}[fam.cutoff] for name, fam in families("qrels").items()
] + ["GAUC(weight=impressions)", "GAUC(weight=clicks)", "ERR", "nDCG(ideal=run,gain=exp)",
     "AP", "NumRet", "PNR@5", "P(rel=2)@5", "bpref(form=original)", "RBP(p=0.5)"]
OPTIONS = [
    EvalOptions(),
    EvalOptions(complete=True, rel_level=2, depth=15),
    EvalOptions(judged_only=True, idcg_zero="drop"),
]
MESSAGE = r"^The '{param}' parameter of {function} must be .+\. Got .+ instead\.$"


# ----------------------------------------------------------------------------- data


def make_data(seed: int, n_queries: int = 50) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Qrels (qid, docid, rel) and runs (qid, Q0, docid, rank, score, tag) of 3 systems.

    Grades -1..3 (negative = pooled, not judged) on a 0-3 scale whose top grade only a
    few queries have (ERR's default scale is the qrels' top grade); unjudged retrieved
    documents; score ties; queries in the qrels only, in a run only, one system
    missing a few queries.
    """
    rng = np.random.default_rng(seed)
    q_rows, r_rows = [], []
    for i in range(n_queries):
        qid = f"q{i:03d}"
        docs = [f"d{j}" for j in rng.choice(400, size=int(rng.integers(2, 40)), replace=False)]
        grades = rng.choice([-1, 0, 0, 0, 1, 1, 2], size=len(docs))
        if i % 17 == 3:
            grades[0] = 3
        if i % 9 == 0:
            grades[:] = 0  # one class only
        for d, g in zip(docs, grades, strict=True):
            if rng.random() < 0.8:
                q_rows.append((qid, d, float(g)))
        if i % 13 == 5:
            continue  # judged, never retrieved
        for tag in ("bm25", "neural", "mixed"):
            if tag == "mixed" and i % 11 == 2:
                continue
            for d in docs:
                if rng.random() < 0.85:
                    r_rows.append((qid, d, float(rng.integers(0, 12)) / 4, tag))
            r_rows.append((qid, f"x{i}", 0.5, tag))  # never judged
    r_rows += [("zz-run-only", "d1", 1.0, "bm25")]
    qrels = pd.DataFrame(q_rows, columns=["qid", "docid", "rel"])
    runs = pd.DataFrame(r_rows, columns=["qid", "docid", "score", "tag"])
    runs.insert(1, "Q0", "Q0")
    runs.insert(3, "rank", 1)
    return qrels, runs


def write_trec(df: pd.DataFrame, path: Path) -> Path:
    df.to_csv(path, sep=" ", header=False, index=False)
    return path


def write_parquet_parts(df: pd.DataFrame, folder: Path, n: int) -> Path:
    """``n`` files of interleaved rows: every query spread over several files."""
    folder.mkdir()
    for k in range(n):
        pq.write_table(pa.Table.from_pandas(df.iloc[k::n], preserve_index=False),
                       folder / f"part-{k}.parquet")
    return folder


def in_memory(qrels: pd.DataFrame, runs: pd.DataFrame) -> tuple[Qrels, list[Run]]:
    q = Qrels.from_arrays(qrels["qid"], qrels["docid"], qrels["rel"])
    rs = [Run.from_arrays(g["qid"], g["docid"], g["score"], name=str(tag))
          for tag, g in runs.groupby("tag", sort=True)]
    return q, rs


def assert_same(got: Evaluation, want: Evaluation) -> None:
    """Same systems, queries, per-query values, aggregates and counts, bit for bit.

    Except ERR, whose kernel takes one running sum of logarithms over all the queries
    of its input: its last bits depend on which queries come before (in memory too).
    """
    assert got.systems == want.systems
    assert [str(m) for m in got.measures] == [str(m) for m in want.measures]
    assert got.options == want.options
    for s in want.systems:
        assert len(got.query_ids[s]) == len(want.query_ids[s])  # the count, explicitly
        np.testing.assert_array_equal(got.query_ids[s], want.query_ids[s])
        for m in want.measures:
            key = (s, str(m))
            tol = 1e-12 if m.name == "ERR" else 0
            np.testing.assert_allclose(got.values[key], want.values[key], rtol=tol, atol=0,
                                       err_msg=str(key))
            assert got.aggregates[key] == pytest.approx(want.aggregates[key], rel=tol, abs=0,
                                                        nan_ok=True), key
            assert got.n_averaged[key] == want.n_averaged[key], key
            assert not got.values[key].flags.writeable
            assert got.definition(m) == want.definition(m)


# ----------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as c:
        yield c


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Qrels as a 3-file Parquet dataset, runs as TREC text (read in small blocks) and CSV."""
    tmp = tmp_path_factory.mktemp("dist")
    qrels, runs = make_data(7)
    runs[runs["tag"] == "mixed"][["qid", "docid", "score", "tag"]].to_csv(tmp / "mixed.csv",
                                                                          index=False)
    return {"qrels": write_parquet_parts(qrels, tmp / "qrels", 3),
            "trec": write_trec(runs[runs["tag"] != "mixed"], tmp / "run.txt"),
            "csv": tmp / "mixed.csv", "qrels_df": qrels, "runs_df": runs}


# ----------------------------------------------------------------------------- qrels + runs


@pytest.mark.parametrize("options", OPTIONS, ids=["default", "c-l2-M15", "J-drop"])
def test_every_measure_family_equals_in_memory(client, files, options):
    got = evaluate_dask(files["qrels"], [files["trec"], files["csv"]], MEASURES,
                        options=options, client=client, npartitions=3)
    qrels, (bm25, mixed, neural) = in_memory(files["qrels_df"], files["runs_df"])
    assert got.systems == ("bm25", "neural", "mixed")  # by input, then first appearance
    # ERR's default scale is the top grade of the whole qrels (3, in a few queries only)
    assert_same(got, evaluate(qrels, [bm25, neural, mixed], MEASURES, options=options))


def test_every_family_is_in_the_test():
    """Every family computed from qrels (preference and judgment-group families are not
    evaluated on a joined ranking: test_judgment_families)."""
    assert {m.split("(")[0].split("@")[0] for m in MEASURES} == set(families("qrels"))
    assert set(FAMILIES) - set(families("qrels")) == set(families("prefs")) | set(
        families("qrels_jg"))


def test_same_files_as_the_in_memory_readers(client, files):
    """The TREC file cut into 2 KB blocks reads as the whole file does in memory."""
    runs = read_runs_dask(files["trec"], blocksize=2048)
    assert runs.npartitions > 10
    got = evaluate_dask(files["qrels"], runs, ["AP", "nDCG@10"], client=client)
    pooled = pa.concat_tables([pq.read_table(p) for p in sorted(files["qrels"].iterdir())])
    want = evaluate(Qrels.from_arrays(pooled["qid"], pooled["docid"], pooled["rel"]),
                    read_runs(files["trec"]), ["AP", "nDCG@10"])
    assert_same(got, want)


def test_a_query_split_across_files_evaluates_as_one(client, tmp_path):
    qrels = pd.DataFrame({"qid": ["q1"] * 4 + ["q2"] * 2, "docid": ["a", "b", "c", "d", "a", "b"],
                          "rel": [1, 0, 2, 0, 1, 0]})
    run = pd.DataFrame({"qid": ["q1"] * 4 + ["q2"] * 2, "Q0": "Q0",
                        "docid": ["a", "b", "c", "d", "b", "a"], "rank": 1,
                        "score": [4.0, 3.0, 2.0, 1.0, 2.0, 1.0], "tag": "sys"})
    (tmp_path / "runs").mkdir()
    write_trec(run.iloc[[0, 2, 4]], tmp_path / "runs" / "a.txt")  # q1 in both files
    write_trec(run.iloc[[1, 3, 5]], tmp_path / "runs" / "b.txt")
    qdir = write_parquet_parts(qrels, tmp_path / "qrels", 2)
    got = evaluate_dask(qdir, tmp_path / "runs", ["AP", "P@2", "NumRet"], client=client,
                        npartitions=4)
    assert list(got.query_ids["sys"]) == ["q1", "q2"]
    np.testing.assert_array_equal(got.values[("sys", "NumRet")], [4.0, 2.0])
    # q1: relevant at ranks 1 and 3 -> AP = (1 + 2/3) / 2; q2: relevant at rank 2 -> 1/2
    np.testing.assert_allclose(got.values[("sys", "AP")], [(1 + 2 / 3) / 2, 0.5])
    assert got.mean("sys", "NumRet") == 6.0


def test_complete_counts_a_system_in_partitions_it_has_no_row_in(client):
    """With -c, every qrels query counts for every system, also where a partition holds no
    row of that system (system b answers one query of eight)."""
    qrels, runs = make_data(5, n_queries=8)
    runs = runs[(runs["tag"] == "bm25") | ((runs["tag"] == "neural") & (runs["qid"] == "q001"))]
    measures = ["P@5", "NumRel", "nDCG", "GAUC(weight=impressions)", "PNR", "ERR"]
    options = EvalOptions(complete=True)
    got = evaluate_dask(dd.from_pandas(qrels, npartitions=2),
                        dd.from_pandas(runs[["qid", "docid", "score", "tag"]], npartitions=2),
                        measures, options=options, client=client, npartitions=6)
    q, rs = in_memory(qrels, runs)
    assert_same(got, evaluate(q, rs, measures, options=options))
    assert len(got.query_ids["neural"]) == qrels["qid"].nunique() == 8
    assert got.mean("neural", "NumRel") == got.mean("bm25", "NumRel") > 0


def test_same_tag_in_two_inputs_is_renamed_with_a_warning(client, files, tmp_path):
    notes: list = []
    other = write_trec(files["runs_df"][files["runs_df"]["tag"] == "bm25"], tmp_path / "b.txt")
    got = evaluate_dask(files["qrels"], [files["trec"], other], ["P@5"], client=client,
                        notes=notes)
    stem = Path(files["trec"]).name.removesuffix(".txt")
    assert got.systems == (f"{stem}:bm25", "neural", "b:bm25")  # both named after the file
    np.testing.assert_array_equal(got.values[("b:bm25", "P@5")],
                                  got.values[(f"{stem}:bm25", "P@5")])
    assert [w.code for w in notes] == ["run-renamed", "run-renamed"]
    assert f"'{stem}:bm25'" in notes[0].message and "'b:bm25'" in notes[1].message


@pytest.mark.filterwarnings("ignore:The inplace keyword in DataFrame.reset_index")  # dask
def test_fsspec_urls_are_read_like_local_files(files):
    """A URL input (fsspec's in-memory file system here, as s3:// on a cluster)."""
    fs = fsspec.filesystem("memory")
    qrels = files["qrels_df"]
    for k in range(2):
        with fs.open(f"/bucket/qrels/part-{k}.parquet", "wb") as fh:
            pq.write_table(pa.Table.from_pandas(qrels.iloc[k::2], preserve_index=False), fh)
    fs.pipe("/bucket/run.txt", files["trec"].read_bytes())
    # the memory file system is this process's: no cluster here
    with dask.config.set({"scheduler": "sync", "dataframe.shuffle.method": "tasks"}):
        got = evaluate_dask("memory://bucket/qrels/", "memory://bucket/run.txt", ["AP"],
                            npartitions=2)
    want = evaluate(in_memory(qrels, files["runs_df"])[0], read_runs(files["trec"]), ["AP"])
    assert_same(got, want)
    fs.rm("/bucket", recursive=True)


# ----------------------------------------------------------------------------- labeled rows


def make_clicks(seed: int, n_sessions: int = 300) -> pd.DataFrame:
    """(session, item, label, score, score_b): 2-20 items per session, ties, all-0 sessions."""
    rng = np.random.default_rng(seed)
    sizes = rng.integers(2, 21, size=n_sessions)
    session = np.repeat(np.arange(n_sessions) * 7919 % 100_003, sizes)
    item = np.concatenate([rng.choice(1000, size=n, replace=False) for n in sizes])
    label = (rng.random(len(item)) < 0.2).astype(np.int64)
    label[rng.random(len(item)) < 0.05] = 2
    score = np.round(rng.random(len(item)) + 0.3 * label, 2)  # ties
    return pd.DataFrame({"session": session, "item": item, "label": label, "score": score,
                         "score_b": np.round(rng.random(len(item)), 1)})


CLICK_MEASURES = ["AUC", "GAUC", "GAUC(weight=impressions)", "GAUC(weight=clicks)", "PNR",
                  "nDCG@5", "ERR@3", "RR", "AUC@3"]


def test_labeled_rows_equal_in_memory(client, tmp_path):
    rows = make_clicks(3)
    data = write_parquet_parts(rows.sample(frac=1.0, random_state=1), tmp_path / "clicks", 4)
    got = evaluate_labeled(data, CLICK_MEASURES, score=["score", "score_b"], client=client)
    qrels = Qrels.from_arrays(rows["session"], rows["item"], rows["label"])
    runs = [Run.from_arrays(rows["session"], rows["item"], rows[s], name=s)
            for s in ("score", "score_b")]
    want = evaluate(qrels, runs, CLICK_MEASURES)
    assert_same(got, want)
    assert len(got.query_ids["score"]) == rows["session"].nunique()


def test_gauc_and_pnr_by_hand(client):
    """Two sessions worked out on paper."""
    rows = pd.DataFrame({"session": ["s1"] * 4 + ["s2"] * 3,
                         "item": ["a", "b", "c", "d", "a", "b", "c"],
                         "label": [1, 0, 0, 1, 0, 1, 0],
                         "score": [0.9, 0.8, 0.95, 0.1, 0.5, 0.5, 0.4]})
    got = evaluate_labeled(dd.from_pandas(rows, npartitions=3),
                           ["GAUC", "GAUC(weight=impressions)", "PNR"], client=client)
    # s1: positives 0.9, 0.1 vs negatives 0.8, 0.95 -> 1 of 4 pairs won: AUC 0.25
    # s2: positive 0.5 vs 0.5 (tie, 1/2) and 0.4 (won) -> 0.75
    np.testing.assert_allclose(got.values[("score", "GAUC")], [0.25, 0.75])
    assert got.mean("score", "GAUC") == pytest.approx(0.5)
    assert got.mean("score", "GAUC(weight=impressions)") == pytest.approx(
        (4 * 0.25 + 3 * 0.75) / 7)
    # PNR: s1 concordant 1, discordant 3; s2: concordant 1, the tie counts in neither
    assert got.mean("score", "PNR") == pytest.approx(2 / 3)


def test_pooled_auc_is_exact(client, tmp_path):
    rows = make_clicks(11, n_sessions=400)
    rows.loc[rows.index[::37], "label"] = -1  # pooled but not judged: left out
    data = write_parquet_parts(rows, tmp_path / "clicks", 5)
    judged = rows[rows["label"] >= 0]
    sk = roc_auc_score(judged["label"] >= 1, judged["score"])
    for n_buckets in (None, 1, 7, 60):
        got = pooled_auc_dask(data, client=client, n_buckets=n_buckets)
        assert got.auc == pytest.approx(sk, rel=1e-15)
        assert (got.n_positive, got.n_negative) == (int((judged["label"] >= 1).sum()),
                                                    int((judged["label"] == 0).sum()))
    assert got.n_buckets > 10  # many score ranges, ties kept within one
    r = join(Qrels.from_arrays(rows["session"], rows["item"], rows["label"]),
             Run.from_arrays(rows["session"], rows["item"], rows["score"], name="s"))
    assert got.auc == pytest.approx(pooled_auc(r), rel=1e-15)
    level2 = pooled_auc_dask(data, client=client, rel_level=2)
    assert level2.auc == pytest.approx(roc_auc_score(judged["label"] >= 2, judged["score"]))
    assert "grade" not in level2.definition and "label >= 2" in level2.definition


@pytest.mark.parametrize("n_buckets", [None, 300])
def test_pooled_auc_buckets_hold_about_rows_over_buckets(client, n_buckets):
    """Alike partitions (the usual case), heavy-tailed scores, and more score ranges than
    a 64-point sketch has points: every range holds about judged rows / n_buckets, so a
    worker's share stays a partition's worth however many rows there are."""
    rng = np.random.default_rng(4)
    n = 12 * 20_000
    rows = pd.DataFrame({"label": (rng.random(n) < 0.3).astype(np.int64),
                         "score": rng.lognormal(0.0, 2.0, size=n)})
    got = pooled_auc_dask(dd.from_pandas(rows, npartitions=12), client=client,
                          n_buckets=n_buckets)
    assert got.n_buckets == (n_buckets or 12)
    assert got.largest_partition <= 1.1 * n / got.n_buckets
    assert got.auc == pytest.approx(roc_auc_score(rows["label"] >= 1, rows["score"]),
                                    rel=1e-15)


def test_pooled_auc_without_a_class_is_nan(client):
    rows = pd.DataFrame({"label": [0, 0, 0], "score": [0.1, 0.2, 0.3]})
    got = pooled_auc_dask(dd.from_pandas(rows, npartitions=2), client=client)
    assert np.isnan(got.auc) and (got.n_positive, got.n_negative) == (0, 3)


# ----------------------------------------------------------------------------- ids and gzip


def test_parquet_ids_are_the_text_the_in_memory_reader_gives(client, tmp_path):
    """String ids as written (007 is not 7), integer ids as their decimal text: two ids a
    float64 would merge (2**53 + 1 and 2**53) stay two, as in memory."""
    big = 2**53
    qrels = pa.table({"qid": ["007", "007", "7", "7"],
                      "docid": pa.array([big + 1, big, big + 1, 5], pa.int64()),
                      "rel": [1, 0, 0, 1]})
    run = pa.table({"qid": ["007", "007", "7", "7"],
                    "docid": pa.array([big, big + 1, big + 1, 5], pa.int64()),
                    "score": [2.0, 1.0, 2.0, 1.0], "tag": ["s"] * 4})
    (tmp_path / "q").mkdir()
    (tmp_path / "r").mkdir()
    pq.write_table(qrels.slice(0, 2), tmp_path / "q" / "a.parquet")
    pq.write_table(qrels.slice(2), tmp_path / "q" / "b.parquet")
    pq.write_table(run, tmp_path / "r" / "run.parquet")
    got = evaluate_dask(tmp_path / "q", tmp_path / "r", ["AP", "NumRel", "NumRet"],
                        client=client)
    read = read_qrels_dask(tmp_path / "q").compute()
    assert sorted(read["docid"]) == sorted([str(big + 1), str(big), str(big + 1), "5"])
    want = evaluate(Qrels.from_arrays(qrels["qid"], qrels["docid"].cast(pa.string()),
                                      qrels["rel"]),
                    read_runs(tmp_path / "r" / "run.parquet"), ["AP", "NumRel", "NumRet"])
    assert_same(got, want)
    assert list(got.query_ids["s"]) == ["007", "7"]
    # 007: its one relevant document, 2**53 + 1, is ranked second -> AP 1/2; 7: its
    # relevant 5 is ranked second, under the non-relevant 2**53 + 1 -> AP 1/2
    np.testing.assert_array_equal(got.values[("s", "AP")], [0.5, 0.5])


def test_a_float_id_column_is_an_error_naming_it_as_in_memory(client, tmp_path):
    path = tmp_path / "qrels.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q2"], "docid": [7.0, 1.5], "rel": [1, 0]}), path)
    with pytest.raises(FormatError) as memory:
        read_qrels(path)
    with pytest.raises(FormatError) as dask_error:
        read_qrels_dask(path)  # from the schema, before any partition is read
    assert "column 'docid' holds double values; document ids must be strings" in str(
        memory.value)
    assert dask_error.value.message == memory.value.message  # the file: its path here
    assert str(dask_error.value) == f"{path}: {memory.value.message}"
    frame = dd.from_pandas(pd.DataFrame({"qid": [1.0, 2.0], "docid": ["a", "b"],
                                         "score": [1.0, 2.0]}), npartitions=1)
    with pytest.raises(FormatError, match="column 'qid' holds double values; query ids"):
        read_runs_dask(frame)


def test_an_integer_column_with_a_null_stays_integers(client, tmp_path):
    """pandas would make it float64 (2**53 + 1 -> 9007199254740992): read with Arrow types,
    a null tag is the file's system and 2**53 + 1 its own, as in memory; a null id is a
    missing id."""
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q1", "q2"], "docid": ["a", "b", "a"],
                             "score": [2.0, 1.0, 1.0],
                             "tag": pa.array([2**53 + 1, None, 2**53 + 1], pa.int64())}), path)
    qrels = dd.from_pandas(pd.DataFrame({"qid": ["q1", "q2"], "docid": ["a", "a"],
                                         "rel": [1, 1]}), npartitions=1)
    got = evaluate_dask(qrels, path, ["NumRet"], client=client)
    assert got.systems == (str(2**53 + 1), "run")
    assert got.systems == tuple(r.name for r in read_runs(path))
    np.testing.assert_array_equal(got.values[(str(2**53 + 1), "NumRet")], [1, 1])
    bad = tmp_path / "qrels.parquet"
    pq.write_table(pa.table({"qid": ["q1", "q1"], "docid": pa.array([2**53 + 1, None]),
                             "rel": [1, 0]}), bad)
    with pytest.raises(FormatError):
        read_qrels(bad)
    with pytest.raises(FormatError, match="1 row\\(s\\) without a document id"):
        evaluate_dask(bad, path, ["P@5"], client=client)


def test_labeled_ids_are_text_in_csv_and_parquet(client, tmp_path):
    rows = pd.DataFrame({"session": ["007", "007", "7", "7", "NA", "NA"],
                         "item": ["01", "1", "01", "1", "a", "b"],
                         "label": ["1", "0", "", "1", "0", "1"],
                         "score": [0.9, 0.1, 0.5, 0.4, 0.3, 0.8]})
    rows.to_csv(tmp_path / "clicks.csv", index=False)
    got = evaluate_labeled(tmp_path / "clicks.csv", ["GAUC", "NumRet", "NumRel"],
                           client=client)
    assert list(got.query_ids["score"]) == ["007", "7", "NA"]  # none read as 7 or missing
    np.testing.assert_array_equal(got.values[("score", "NumRet")], [2, 2, 2])
    np.testing.assert_array_equal(got.values[("score", "NumRel")], [1, 1, 1])  # "" unjudged
    np.testing.assert_array_equal(got.values[("score", "GAUC")], [1.0, np.nan, 1.0])
    ints = pa.table({"session": pa.array([2**53 + 1, 2**53 + 1, 2**53], pa.int64()),
                     "item": pa.array([1, 2, 1], pa.int64()), "label": [1, 0, 1],
                     "score": [0.2, 0.1, 0.3]})
    pq.write_table(ints, tmp_path / "ints.parquet")
    got = evaluate_labeled(tmp_path / "ints.parquet", ["NumRet"], client=client)
    assert list(got.query_ids["score"]) == [str(2**53), str(2**53 + 1)]
    floats = pc.cast(ints["session"], pa.float64(), safe=False)
    pq.write_table(ints.set_column(0, "session", floats), tmp_path / "floats.parquet")
    with pytest.raises(FormatError, match="column 'session' holds double values; session "
                                          "ids must be strings"):
        evaluate_labeled(tmp_path / "floats.parquet", ["GAUC"], client=client)


def test_labeled_gzip_csv_is_inflated_within_the_read_limits(client, tmp_path, monkeypatch):
    """A labeled .csv.gz gives the numbers of the plain file; a gzip bomb is stopped at the
    client's limits (pandas alone would inflate it whole on a worker)."""
    rows = pd.DataFrame({"session": ["007", "007", "7", "7"], "item": ["a", "b", "a", "b"],
                         "label": [1, 0, 0, 1], "score": [0.9, 0.1, 0.5, 0.4]})
    rows.to_csv(tmp_path / "clicks.csv", index=False)
    with gzip.open(tmp_path / "clicks.csv.gz", "wt") as fh:
        rows.to_csv(fh, index=False)
    plain = evaluate_labeled(tmp_path / "clicks.csv", ["GAUC", "NumRel"], client=client)
    packed = evaluate_labeled(tmp_path / "clicks.csv.gz", ["GAUC", "NumRel"], client=client)
    assert list(packed.query_ids["score"]) == ["007", "7"]
    assert_same(packed, plain)
    bomb = tmp_path / "bomb.csv.gz"
    with gzip.open(bomb, "wt", compresslevel=9) as fh:
        fh.write("session,item,label,score\n")
        fh.writelines("s,d,1,0.5\n" for _ in range(2_000_000))
    assert bomb.stat().st_size < 200_000
    with pytest.raises(FormatError, match=rf"^{re.escape(str(bomb))}: gzip data expands more "
                                          "than 200 times"):
        evaluate_labeled(bomb, ["GAUC"], client=client)
    monkeypatch.setenv("IREVAL_MAX_INFLATED_BYTES", "50")  # the client's limits bind workers
    with pytest.raises(FormatError, match="IREVAL_MAX_INFLATED_BYTES"):
        evaluate_labeled(tmp_path / "clicks.csv.gz", ["GAUC"], client=client)


def _gzip_run(path: Path, n_lines: int, *, distinct: bool) -> Path:
    """A gzip TREC run: ``distinct`` lines compress ~4 times, repeated ones ~1000 times."""
    lines = (f"q{i % 50} Q0 d{i} 1 {i % 97 / 7:.6f} s\n" if distinct else "q1 Q0 d1 1 1 s\n"
             for i in range(n_lines))
    with gzip.open(path, "wt", compresslevel=9) as fh:
        fh.writelines(lines)
    return path


def test_gzip_text_is_inflated_within_the_read_limits(client, files, tmp_path, monkeypatch):
    ok = _gzip_run(tmp_path / "ok.txt.gz", 20_000, distinct=True)
    got = evaluate_dask(files["qrels"], ok, ["P@5"], client=client)
    assert_same(got, evaluate(in_memory(files["qrels_df"], files["runs_df"])[0],
                              read_runs(ok), ["P@5"]))
    # a bomb: ~45 MB of one repeated line in a few dozen KB, stopped at 200 times its size
    bomb = _gzip_run(tmp_path / "bomb.txt.gz", 3_000_000, distinct=False)
    assert bomb.stat().st_size < 200_000
    with pytest.raises(FormatError) as memory:
        read_runs(bomb)
    with pytest.raises(FormatError) as dask_error:
        evaluate_dask(files["qrels"], bomb, ["P@5"], client=client)
    assert dask_error.value.message == memory.value.message
    assert str(dask_error.value).startswith(f"{bomb}: gzip data expands more than 200 times")
    assert "ReadLimits.max_gzip_ratio" in str(dask_error.value)
    # the client's limits (here its environment) bind the workers
    monkeypatch.setenv("IREVAL_MAX_INFLATED_BYTES", "500000")
    with pytest.raises(FormatError, match=rf"^{re.escape(str(ok))}: gzip data expands to more "
                                          r"than 488 KiB, .*IREVAL_MAX_INFLATED_BYTES"):
        evaluate_dask(files["qrels"], ok, ["P@5"], client=client)
    monkeypatch.delenv("IREVAL_MAX_INFLATED_BYTES")
    with pytest.raises(FormatError, match="expands to more than 488 KiB"):
        read_runs_dask(ok, limits=ReadLimits(max_inflated_bytes=500_000)).compute()
    with pytest.raises(TypeError, match=MESSAGE.format(param="limits",
                                                       function="read_runs_dask")):
        read_runs_dask(ok, limits=500_000)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- failures


_READS_HERE = [0]  # partitions this worker process started to read


def _held(victim: str, busy: str, part: pd.DataFrame) -> pd.DataFrame:
    """A partition read in an order the test sets, however fast or loaded the machine: the
    worker at ``victim`` reads one partition, then starts a second and holds it until the
    worker is killed; the other workers read only once the victim holds that one (the
    distributed Event ``busy``). So the victim surely holds a partition and runs a task
    when it is killed, and the job cannot end before."""
    if get_worker().address == victim:
        _READS_HERE[0] += 1
        if _READS_HERE[0] > 1:
            Event(busy).set()
            time.sleep(600)  # held: the process is killed meanwhile
    else:
        Event(busy).wait(timeout=300)
    return part


def _no_retry(dask_scheduler: Any) -> None:
    dask_scheduler.allowed_failures = 0


def _crash(part: pd.DataFrame) -> pd.DataFrame:
    os._exit(1)  # the worker process dies, every time this partition is read


def test_a_worker_killed_mid_job_gives_the_full_result_or_an_error():
    """Worker 0 is killed while it holds partitions and runs tasks: Dask recomputes them
    and the result is complete and equal to the in-memory one (or a clear error). A
    partition that kills every worker reading it ends in a clear error."""
    rows = make_clicks(5, n_sessions=600)
    pieces = [rows.iloc[k::12] for k in range(12)]
    qrels = Qrels.from_arrays(rows["session"], rows["item"], rows["label"])
    want = evaluate(qrels, Run.from_arrays(rows["session"], rows["item"], rows["score"],
                                           name="score"), ["GAUC", "PNR", "nDCG@10"])
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.CRITICAL) as cluster, \
            Client(cluster) as c:
        victim = cluster.workers[0]
        addr = victim.worker_address
        busy = f"victim-busy-{uuid.uuid4().hex}"
        data = dd.from_delayed([dask.delayed(_held)(addr, busy, p) for p in pieces],
                               meta=rows.iloc[:0], verify_meta=False)
        out: dict[str, Any] = {}

        def job() -> None:
            try:
                out["res"] = evaluate_labeled(data, ["GAUC", "PNR", "nDCG@10"], client=c)
            except Exception as exc:  # inspected below
                out["error"] = exc

        thread = threading.Thread(target=job)
        thread.start()
        # wait until worker 0 holds a result and runs a task: a state the job reaches and
        # stays in (see _held), however slowly it gets there. Running, not only assigned:
        # the Event is set by the task itself (the scheduler's `processing` also lists
        # tasks queued on the worker; killed before its second read, the victim never set
        # the Event and every other read waited 300 s for it, past the join below)
        assert Event(busy, client=c).wait(timeout=300), "worker 0 never held a partition"
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not c.has_what().get(addr):
            time.sleep(0.02)
        assert c.has_what().get(addr), "worker 0 holds no result"
        # the worker process is killed mid-job, at once (SIGKILL: a polite stop of the
        # nanny could leave the held task sleeping, and the job waiting for it)
        pid = c.run(os.getpid, workers=[addr])[addr]
        os.kill(pid, signal.SIGKILL)
        thread.join(120)
        assert not thread.is_alive()
        c.run_on_scheduler(_no_retry)  # one lost worker is enough to fail a task
        poisoned = dd.from_delayed([dask.delayed(_crash)(pieces[0])], meta=rows.iloc[:0],
                                   verify_meta=False)
        with pytest.raises(DistributedError, match=r"^the Dask job stopped before every "
                           r"partition was evaluated \(KilledWorker: .*no partial result"):
            evaluate_labeled(poisoned, ["GAUC"], client=c)
    if "error" in out:  # a clear error, never a partial table
        assert isinstance(out["error"], IrevalError), repr(out["error"])
        assert "no partial result" in str(out["error"])
    else:
        res = out["res"]
        assert len(res.query_ids["score"]) == rows["session"].nunique()
        assert_same(res, want)


def test_bad_line_in_a_late_block_is_named_with_its_file_line(client, files, tmp_path):
    lines = files["trec"].read_text().splitlines()
    bad = 301
    lines[bad - 1] = "q001 Q0 d7 3 0.5"  # 5 columns
    path = tmp_path / "bad.txt"
    path.write_text("\n".join(lines) + "\n")
    runs = read_runs_dask(path, blocksize=1000)
    with pytest.raises(FormatError) as info:
        evaluate_dask(files["qrels"], runs, ["P@5"], client=client)
    assert str(info.value) == (f"{path}:{bad}: expected 6 columns (qid Q0 docid rank score "
                               "tag), got 5: 'q001 Q0 d7 3 0.5'")


def test_bad_csv_value_is_named_with_its_line(client, files, tmp_path):
    text = files["csv"].read_text().splitlines()
    text[200] = text[200].rsplit(",", 2)[0] + ",high,mixed"
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(text) + "\n")
    with pytest.raises(FormatError, match=rf"^{re.escape(str(path))}:201: expected a numeric "
                                          r"score in column 'score', got 'high'"):
        evaluate_dask(files["qrels"], read_runs_dask(path, blocksize=700), ["P@5"],
                      client=client)


def test_duplicates_and_unreadable_inputs_are_format_errors(client, files, tmp_path):
    dup = write_trec(pd.concat([files["runs_df"].iloc[:5], files["runs_df"].iloc[:1]]),
                     tmp_path / "dup.txt")
    with pytest.raises(FormatError, match=r"duplicate run entry for query 'q000', document"):
        evaluate_dask(files["qrels"], dup, ["P@5"], client=client)
    (tmp_path / "run.json").write_text('{"q1": {"d1": 1.0}}')
    with pytest.raises(FormatError, match="JSON input is read in memory only"):
        evaluate_dask(files["qrels"], tmp_path / "run.json", ["P@5"], client=client)
    openpyxl = pytest.importorskip("openpyxl")
    book = openpyxl.Workbook()
    book.active.append(["qid", "docid", "score"])
    book.active.append(["q1", "d1", 1.0])
    book.save(tmp_path / "run.xlsx")
    with pytest.raises(FormatError, match="Excel workbooks are read in memory only"):
        evaluate_dask(files["qrels"], tmp_path / "run.xlsx", ["P@5"], client=client)
    with pytest.raises(FormatError, match="this looks like a TREC run file"):
        evaluate_dask(files["trec"], files["trec"], ["P@5"], client=client)
    rows = make_clicks(1, n_sessions=5)
    with pytest.raises(FormatError, match=r"missing column\(s\) \['query'\]"):
        evaluate_labeled(dd.from_pandas(rows, npartitions=1), ["AUC"], group="query")
    rows.loc[3, "score"] = np.nan
    with pytest.raises(FormatError, match="expected finite scores in column 'score', got nan"):
        evaluate_labeled(dd.from_pandas(rows, npartitions=2), ["AUC"], client=client)


def test_every_format_declares_how_the_dask_engine_reads_it():
    """A format of the readers without a Dask reading in io/detect.py would fall into no
    reader: each one has an entry, and only the four ways the engine knows."""
    from ireval_core.io.detect import DASK_READING, FORMATS, RUN_FORMATS, SIGNATURES

    assert set(DASK_READING) == set(FORMATS) - {"auto"}
    assert set(RUN_FORMATS) | {fmt for fmt, _ in SIGNATURES} <= set(DASK_READING)
    assert set(DASK_READING.values()) <= {"lines", "dataset", "file", "memory"}


def test_the_dask_reading_of_a_format_is_the_one_io_detect_declares(client, files, tmp_path,
                                                                    monkeypatch):
    """The Dask engine reads a format as io/detect.py's DASK_READING says, with no chain of
    its own: JSON declared "file" is read whole by the in-memory reader, one partition per
    file, and gives the in-memory numbers; TREC text declared "memory" is refused."""
    from ireval_core.io import detect

    runs = files["runs_df"]
    paths = []
    for tag in ("bm25", "neural"):
        rows = runs[runs["tag"] == tag]
        doc = {q: dict(zip(g["docid"], g["score"], strict=True))
               for q, g in rows.groupby("qid", sort=False)}
        paths.append(tmp_path / f"{tag}.json")
        paths[-1].write_text(json.dumps(doc))
    monkeypatch.setitem(detect.DASK_READING, "json", "file")
    assert read_runs_dask(paths[0]).npartitions == 1
    got = evaluate_dask(files["qrels"], paths, ["AP", "nDCG@10", "NumRet"], client=client)
    pooled = pa.concat_tables([pq.read_table(p) for p in sorted(files["qrels"].iterdir())])
    want = evaluate(Qrels.from_arrays(pooled["qid"], pooled["docid"], pooled["rel"]),
                    [read_runs(p)[0] for p in paths], ["AP", "nDCG@10", "NumRet"])
    assert_same(got, want)
    monkeypatch.setitem(detect.DASK_READING, "trec", "memory")
    with pytest.raises(FormatError, match="trec input is read in memory only"):
        read_runs_dask(files["trec"])


def _grouped_qrels(qrels: pd.DataFrame, again: list[tuple[int, str]], end: str = "\r\n"
                   ) -> str:
    """TREC qrels text of ``qrels`` in group 0, then the rows ``again`` once more, each in
    the group given (grade 1), with ``end`` line ends and a blank line on the way."""
    rows = qrels.assign(iter="0")[["qid", "iter", "docid", "rel"]].astype({"rel": int})
    lines = [" ".join(map(str, r)) for r in rows.itertuples(index=False)]
    lines.insert(10, "")
    lines += [f"{qrels.qid[i]} {group} {qrels.docid[i]} 1" for i, group in again]
    return end.join(lines) + end


@pytest.mark.parametrize(("again", "groups", "end", "gz", "blocksize"), [
    ([(40, "1")], True, "\r\n", False, None),
    ([(40, "0")], False, "\n", True, None),
    ([(40, "1")], True, "\r", False, None),
    ([(40, "B")], True, "\r\n", False, 1000),  # in blocks: the line numbers add up
])
def test_a_duplicate_judgment_is_named_as_in_memory(client, files, tmp_path, again, groups,
                                                   end, gz, blocksize):
    """The Dask engine finds a duplicate after the shuffle, where lines are lost: it
    numbers the lines of every block and says what the in-memory reader says, with the
    judgment-group explanation when their second columns differ (LF, CRLF, CR line ends,
    gzip, the file read in small blocks)."""
    text = _grouped_qrels(files["qrels_df"], again, end).encode()
    path = tmp_path / ("qrels.txt.gz" if gz else "qrels.txt")
    path.write_bytes(gzip.compress(text) if gz else text)
    with pytest.raises(FormatError) as memory:
        read_qrels(path, name=str(path))
    qrels = path if blocksize is None else read_qrels_dask(path, blocksize=blocksize)
    with pytest.raises(FormatError) as dask_error:
        evaluate_dask(qrels, files["trec"], ["P@5"], client=client)
    assert str(dask_error.value) == str(memory.value)
    assert dask_error.value.line == len(files["qrels_df"]) + 2  # the blank line counts
    qid, docid = files["qrels_df"].qid[40], files["qrels_df"].docid[40]
    note = (f"; the two lines differ in their second column ('0' at line 42, {again[0][1]!r} "
            "here): the file looks like judgment groups (trec_eval -R qrels_jg), each of "
            "which judges a document once") if groups else ""
    assert dask_error.value.message == (
        f"duplicate qrels entry for query {qid!r}, document {docid!r} (first at line 42); "
        f"each (query, document) may appear once{note}")
    assert has_judgment_groups(dask_error.value) is groups


def test_a_judgment_group_per_file_is_named_with_both_files(client, files, tmp_path, capsys):
    """A folder of qrels with one file per judgment group: the second line names the file
    of the first; the CLI adds how to read such a file."""
    qrels = files["qrels_df"]
    folder = tmp_path / "groups"
    folder.mkdir()
    (folder / "a.txt").write_text(_grouped_qrels(qrels, []), newline="")
    (folder / "b.txt").write_text(f"{qrels.qid[5]} B {qrels.docid[5]} 2\n")
    with pytest.raises(FormatError) as caught:
        evaluate_dask(folder, files["trec"], ["P@5"], client=client)
    first = folder / "a.txt"
    assert str(caught.value) == (
        f"{folder / 'b.txt'}:1: duplicate qrels entry for query {qrels.qid[5]!r}, document "
        f"{qrels.docid[5]!r} (first at line 6 of {first}); each (query, document) may "
        f"appear once; the two lines differ in their second column ('0' at line 6 of "
        f"{first}, 'B' here): the file looks like judgment groups (trec_eval -R qrels_jg), "
        f"each of which judges a document once: '{qrels.qid[5]} B {qrels.docid[5]} 2'")
    path = tmp_path / "qrels.txt"
    path.write_text(_grouped_qrels(qrels, [(3, "1")]), newline="")
    assert main(["eval", str(path), str(files["trec"]), "-m", "P@5", "--engine", "dask",
                 "--scheduler", client.scheduler.address]) == 2
    assert capsys.readouterr().err.splitlines()[1:] == [
        "eval -R qrels_jg reads a qrels file with judgment groups, for the *_avgjg measures: "
        "python -m ireval_core eval -R qrels_jg -m qrels_jg QRELS RUN"]


@pytest.mark.parametrize(("func", "kwargs", "param"), [
    (evaluate_dask, {"qrels": "q", "runs": "r", "measures": ["P@5"], "options": {}}, "options"),
    (evaluate_dask, {"qrels": "q", "runs": "r", "measures": ["P@5"], "npartitions": 0},
     "npartitions"),
    (evaluate_labeled, {"data": "d", "measures": ["AUC"], "score": ["s", "s"]}, "score"),
    (evaluate_labeled, {"data": "d", "measures": ["AUC"], "npartitions": 1.5}, "npartitions"),
    (pooled_auc_dask, {"data": "d", "rel_level": float("inf")}, "rel_level"),
    (pooled_auc_dask, {"data": "d", "n_buckets": 0}, "n_buckets"),
    (pooled_auc_dask, {"data": "d", "score": "label"}, "score"),
    (read_qrels_dask, {"source": "q", "blocksize": 0}, "blocksize"),
    (read_runs_dask, {"source": "r", "blocksize": -1}, "blocksize"),
])
def test_invalid_parameters_use_the_common_message(func, kwargs, param):
    error = TypeError if param == "options" else ValueError
    with pytest.raises(error) as info:
        func(**kwargs)
    assert re.fullmatch(MESSAGE.format(param=param, function=func.__name__), str(info.value))


def test_dask_client_checks_its_parameters_and_names_an_unreachable_scheduler():
    with pytest.raises(ValueError, match=MESSAGE.format(param="n_workers",
                                                        function="dask_client")):
        with dask_client(n_workers=0):
            pass
    with pytest.raises(DistributedError, match="cannot reach the Dask scheduler at "
                                               "tcp://127.0.0.1:9"):
        with dask_client("tcp://127.0.0.1:9", timeout=1):
            pass


# ----------------------------------------------------------------------------- CLI


def test_cli_engine_dask_prints_what_the_in_memory_engine_prints(client, tmp_path):
    qrels, runs = make_data(2, n_queries=20)
    qpath = write_trec(qrels.assign(iter=0)[["qid", "iter", "docid", "rel"]].astype(
        {"rel": int}), tmp_path / "qrels.txt")
    rpath = write_trec(runs, tmp_path / "run.txt")
    args = ["eval", str(qpath), str(rpath), "-m", "map", "-m", "GAUC", "-m", "PNR",
            "-m", "ndcg_cut_10", "-q", "-c", "-l", "2"]
    memory, dask_out = io.StringIO(), io.StringIO()
    assert main(args, out=memory) == 0
    address = client.scheduler.address
    assert main([*args, "--engine", "dask", "--scheduler", address], out=dask_out) == 0
    assert dask_out.getvalue() == memory.getvalue()
    json_out = io.StringIO()
    assert main([*args, "--engine", "dask", "--scheduler", address, "--format", "json"],
                out=json_out) == 0
    assert '"definition"' in json_out.getvalue()


def test_cli_cache_yes_keeps_the_workers_blocks(client, tmp_path, monkeypatch):
    """``eval --engine dask --cache yes`` makes the cluster's workers (whose environment
    has no ``IREVAL_CACHE``) keep every text block in the client's ``IREVAL_CACHE_DIR``:
    the second run maps them all (each entry used again, none written) and prints the
    same bytes (JSON: every value's repr) as the first and as the in-memory engine."""
    qrels, runs = make_data(5, n_queries=12)
    qpath = write_trec(qrels.assign(iter=0)[["qid", "iter", "docid", "rel"]].astype(
        {"rel": int}), tmp_path / "qrels.txt")
    rpath = write_trec(runs, tmp_path / "run.txt")
    folder = tmp_path / "columns"
    monkeypatch.setenv("IREVAL_CACHE_DIR", str(folder))
    monkeypatch.delenv("IREVAL_CACHE", raising=False)
    args = ["eval", str(qpath), str(rpath), "-m", "map", "-m", "ndcg_cut_10", "-q",
            "--format", "json"]
    memory = io.StringIO()
    assert main(args, out=memory) == 0
    args += ["--engine", "dask", "--scheduler", client.scheduler.address]
    first = io.StringIO()
    assert main([*args, "--cache", "yes"], out=first) == 0
    entries = sorted(folder.glob("*.arrow"))
    assert len(entries) >= 2  # the qrels' and the run's blocks
    for e in entries:
        os.utime(e, ns=(1, 1))
    again = io.StringIO()
    assert main([*args, "--cache", "yes"], out=again) == 0
    assert sorted(folder.glob("*.arrow")) == entries  # nothing new written
    assert all(e.stat().st_mtime_ns > 1 for e in entries)  # every entry mapped (a hit)
    assert again.getvalue() == first.getvalue() == memory.getvalue()


def test_cli_starts_a_local_cluster_without_a_scheduler(tmp_path):
    qrels, runs = make_data(4, n_queries=8)
    qpath = write_parquet_parts(qrels, tmp_path / "qrels", 2)
    rpath = write_trec(runs, tmp_path / "run.txt")
    out = io.StringIO()
    assert main(["eval", str(qpath), str(rpath), "-m", "P@5", "--engine", "dask",
                 "--workers", "1", "--format", "csv"], out=out) == 0
    table = pd.read_csv(io.StringIO(out.getvalue()))
    q, rs = in_memory(qrels, runs)
    want = evaluate(q, rs, ["P@5"])
    means = table[table["qid"] == "all"].set_index("run")["value"]
    assert means.to_dict() == pytest.approx({s: want.mean(s, "P@5") for s in want.systems})


def test_cli_rejects_cluster_flags_without_the_dask_engine(tmp_path, capsys):
    qpath = write_trec(pd.DataFrame([("q1", 0, "d1", 1)]), tmp_path / "q.txt")
    rpath = write_trec(pd.DataFrame([("q1", "Q0", "d1", 1, 1.0, "s")]), tmp_path / "r.txt")
    assert main(["eval", str(qpath), str(rpath), "-m", "P@5", "--workers", "2"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--engine dask" in err[0]
    assert read_qrels(qpath).n_queries == 1
    assert read_qrels_dask(qpath).compute()["qid"].tolist() == ["q1"]


@pytest.mark.parametrize("column, bad, message", [
    ("docid", "", "empty document id"),
    ("docid", " d2", "document id ' d2' starts or ends with a space"),
    ("qid", "q\t1", "query id 'q\\\\t1' contains a tab"),
    ("score", float("inf"), "expected a finite (numeric )?score.*got inf"),
])
def test_parquet_ids_are_checked_as_in_memory(client, tmp_path, column, bad, message):
    """Empty ids, control characters, edge spaces and infinite scores in a Parquet run:
    the same error as the in-memory reader (which also names the row)."""
    cols = {"qid": ["q1", "q1"], "docid": ["d1", "d2"], "score": [2.0, 1.0], "tag": ["s", "s"]}
    cols[column] = [cols[column][0], bad]
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table(cols), path)
    qrels = dd.from_pandas(pd.DataFrame({"qid": ["q1"], "docid": ["d1"], "rel": [1]}),
                           npartitions=1)
    with pytest.raises(FormatError, match=message):
        read_runs(path)
    with pytest.raises(FormatError, match=message) as info:
        evaluate_dask(qrels, path, ["P@5"], client=client)
    assert str(path) in str(info.value)


# ----------------------------------------------------------------------------- 10.0's comments


def _with_comments(text: str, every: int, comment: str) -> str:
    """``text`` with ``comment`` before every ``every``-th line and as the first line."""
    lines = text.splitlines()
    out = [comment]
    for i, line in enumerate(lines):
        if i and i % every == 0:
            out.append(comment)
        out.append(line)
    return "\n".join(out) + "\n"


def test_trec_eval_10_comment_lines_are_skipped_as_in_memory(client, tmp_path):
    """``--trec-eval 10.0`` reads '#' lines as comments with the Dask engine too (the
    evaluation, and the CLI's output), in blocks; 9.0.8 refuses them as the in-memory
    reader does."""
    qrels, runs = make_data(4, n_queries=15)
    qtext = qrels.assign(iter=0)[["qid", "iter", "docid", "rel"]].astype({"rel": int})
    qpath = tmp_path / "qrels.txt"
    qpath.write_text(_with_comments(qtext.to_csv(sep=" ", header=False, index=False), 40,
                                    "# judged by rater A"))
    rpath = tmp_path / "run.txt"
    rpath.write_text(_with_comments(runs.to_csv(sep=" ", header=False, index=False), 70,
                                    "  # run notes"))
    ten = EvalOptions(trec_eval="10.0")
    want = evaluate(read_qrels(qpath, comments=True), read_runs(rpath, comments=True),
                    MEASURES[:6], options=ten)
    got = evaluate_dask(read_qrels_dask(qpath, blocksize=700, comments=True),
                        read_runs_dask(rpath, blocksize=900, comments=True), MEASURES[:6],
                        options=ten, client=client)
    assert_same(got, want)
    assert_same(evaluate_dask(qpath, rpath, MEASURES[:6], options=ten, client=client), want)
    with pytest.raises(FormatError, match=r"qrels\.txt:1: .*'# judged by rater A'"):
        evaluate_dask(qpath, rpath, ["P@5"], client=client)  # 9.0.8: data, malformed
    args = ["eval", str(qpath), str(rpath), "-m", "map", "-m", "ndcg_cut_10", "-q", "-c",
            "--trec-eval", "10.0"]
    memory, dask_out = io.StringIO(), io.StringIO()
    assert main(args, out=memory) == 0
    assert main([*args, "--engine", "dask", "--scheduler", client.scheduler.address],
                out=dask_out) == 0
    assert dask_out.getvalue() == memory.getvalue()


def test_a_qrels_line_after_a_comment_line_is_data_in_every_block_layout(tmp_path):
    """trec_eval 10.0's qrels rule reads the line right after a comment line as data, even
    when it starts with '#' and a block of the file starts there."""
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 d1 1\n# note\n#q2 0 d2 1\n# a\n#q6 0 d6 1\n# c\nq3 0 d3 2\n"
                    "#q4 0 d4 0\nq5 0 d5 1\n")
    want = read_qrels(path, comments=True)
    assert sorted(want.query_ids) == ["#q2", "#q6", "q1", "q3", "q5"]  # '#q4' is a comment
    for blocksize in range(1, 60):
        got = read_qrels_dask(path, blocksize=blocksize, comments=True).compute(
            scheduler="sync")
        assert sorted(got["qid"]) == sorted(want.query_ids), blocksize


@pytest.mark.parametrize("kind", ["run", "qrels"])
def test_a_file_without_data_lines_is_empty_in_every_block_layout(client, tmp_path, kind):
    """A TREC file of comment lines only (trec_eval 10.0's rules; a qrels comment line
    is followed by a blank one, which is not a comment) or of blank lines only is
    refused as the in-memory reader refuses it, with the file's name, whatever the
    block size: before, cut into several blocks, it read as an empty table."""
    read_dask = read_runs_dask if kind == "run" else read_qrels_dask
    read_memory = read_runs if kind == "run" else read_qrels
    good = {"run": tmp_path / "run.txt", "qrels": tmp_path / "qrels.txt"}
    good["run"].write_text("q1 Q0 d1 1 2.0 sys\n")
    good["qrels"].write_text("q1 0 d1 1\n")
    if kind == "run":
        texts = {"comments": "".join(f"  # run note {i}\n" for i in range(30)),
                 "blanks": " \n\t\n" * 60}
    else:
        texts = {"comments": "".join(f"# judged by rater {i}\n\n" for i in range(30)),
                 "blanks": " \n\t\n" * 60}
    for what, text in texts.items():
        path = tmp_path / f"{kind}-{what}.txt"
        path.write_text(text)
        with pytest.raises(FormatError) as want:
            read_memory(path, comments=True)
        assert want.value.message.startswith("file is empty; expected")
        for blocksize in (None, len(text), 100, 17, 1):
            with pytest.raises(FormatError) as got:
                frame = read_dask(path, blocksize=blocksize, comments=True)
                client.compute(frame).result()
            assert (got.value.source, got.value.message) == (str(path), want.value.message), \
                (what, blocksize)
        files = {**good, kind: path}
        with pytest.raises(FormatError, match=re.escape(f"{path}: file is empty; expected")):
            evaluate_dask(read_qrels_dask(files["qrels"], blocksize=16, comments=True),
                          read_runs_dask(files["run"], blocksize=16, comments=True), ["P@5"],
                          options=EvalOptions(trec_eval="10.0"), client=client)
    # a comment-only beginning longer than a read chunk, then one data line: not empty
    path = tmp_path / f"{kind}-late.txt"
    path.write_text(texts["comments"] * 300 + good[kind].read_text())
    assert len(client.compute(read_dask(path, blocksize=4096, comments=True)).result()) == 1
    if kind == "qrels":  # the first 64 KB end with a comment line: the next line is data
        path.write_text("#c\n\n" * 16383 + "#cc\n" + "#q 0 d 1\n")
        assert read_qrels(path, comments=True).query_ids == ("#q",)
        got = client.compute(read_dask(path, blocksize=4096, comments=True)).result()
        assert list(got["qid"]) == ["#q"]


@pytest.mark.parametrize("blank_lines", [0, 100])
@pytest.mark.parametrize("blocksize", [None, 30, 7])
def test_csv_blocks_of_blank_lines_read_as_in_memory(client, tmp_path, blank_lines,
                                                      blocksize):
    """A CSV whose first block holds the header and blank lines only reads as in memory
    (one run), whatever the block size; a header with no row is refused as in memory."""
    path = tmp_path / "run.csv"
    path.write_text("qid,docid,score,tag\n" + "\n" * blank_lines + "q1,d1,2.5,bm25\n")
    expected = read_runs(path)[0].to_dict()
    got = client.compute(read_runs_dask(path, blocksize=blocksize)).result()
    assert {q: dict(zip(g["docid"], g["value"], strict=True))
            for q, g in got.groupby("qid")} == expected
    empty = tmp_path / "empty.csv"
    empty.write_text("qid,docid,score,tag\n" + "\n" * blank_lines)
    with pytest.raises(FormatError, match="no run rows after the header") as in_memory:
        read_runs(empty)
    with pytest.raises(FormatError, match="no run rows after the header") as dask_error:
        client.compute(read_runs_dask(empty, blocksize=blocksize)).result()
    assert (dask_error.value.message, dask_error.value.line) == (
        in_memory.value.message, in_memory.value.line)
    assert dask_error.value.source == str(empty)  # Dask names files by their path


# ----------------------------------------------------------------------------- error order


def _line_start(path: Path, line: int) -> int:
    """Byte offset where ``line`` (1-based) of ``path`` starts."""
    return sum(len(x) for x in path.read_bytes().splitlines(keepends=True)[: line - 1])


@pytest.mark.parametrize("slow", ["qrels", "run"])
def test_the_qrels_error_comes_first_whichever_task_fails_first(client, tmp_path, slow):
    """Both files malformed (comment lines read as data under trec_eval 9.0.8): the qrels'
    error, as the in-memory reader gives it, whichever file's task fails first (the other
    file's read is held until the other tasks are done)."""
    qrels, runs = make_data(4, n_queries=15)
    qtext = qrels.assign(iter=0)[["qid", "iter", "docid", "rel"]].astype({"rel": int})
    qpath = tmp_path / "qrels.txt"
    qpath.write_text(_with_comments(qtext.to_csv(sep=" ", header=False, index=False), 40,
                                    "# judged by rater A"))
    rpath = tmp_path / "run.txt"
    rpath.write_text(_with_comments(runs.to_csv(sep=" ", header=False, index=False), 70,
                                    "  # run notes"))
    with pytest.raises(FormatError) as memory:
        read_qrels(qpath, name=str(qpath))
    assert memory.value.count > 1  # several comment lines: "and N more problems"
    options = {"slow": ((f"{slow}.txt", 0),)} if slow else {}
    with pytest.raises(FormatError) as got:
        evaluate_dask(slow_url(qpath), slow_url(rpath), ["P@5"], client=client,
                      storage_options=options)
    assert str(got.value) == str(memory.value)
    assert got.value.problems == memory.value.problems
    assert got.value.report() == memory.value.report()


def _bad_run(tmp_path: Path, files: dict[str, Any], name: str = "run.txt") -> Path:
    """The test run with 130 bad lines from line 300 on (past the 100 an error keeps), a
    line given twice across blocks and a bad number at line 1,200."""
    lines = files["trec"].read_text().splitlines()
    for i in range(299, 299 + 2 * 130, 2):
        lines[i] = lines[i].rsplit(" ", 1)[0]  # 5 columns
    lines[1199] = lines[1199].replace(" Q0 ", " Q0 ", 1).rsplit(" ", 2)[0] + " high bm25"
    lines.insert(1500, lines[10])  # a duplicate, far from the first
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("slow_line", [300, 1200])
def test_a_files_first_bad_line_comes_first_across_blocks(client, files, tmp_path, slow_line):
    """Bad lines in several blocks of one run: the error of the in-memory reader (first
    bad line, the first 100 problems, how many in all, the duplicate across blocks),
    whichever block's task fails first (the block holding ``slow_line`` is held until the
    other tasks are done)."""
    path = _bad_run(tmp_path, files)
    with pytest.raises(FormatError) as memory:
        read_runs(path, name=str(path))
    assert memory.value.count == 132 and memory.value.line == 300
    blocksize = 4000
    # the block holding slow_line starts at the first line start at or after a multiple
    # of the block size: slow that place
    at = _line_start(path, slow_line)
    slow = ((path.name, path.read_bytes().index(b"\n", (at // blocksize) * blocksize - 1) + 1),)
    runs = read_runs_dask(slow_url(path), blocksize=blocksize, storage_options={"slow": slow})
    assert runs.npartitions > 5
    with pytest.raises(FormatError) as got:
        evaluate_dask(files["qrels"], runs, ["P@5"], client=client)
    assert str(got.value) == str(memory.value)
    assert got.value.problems == memory.value.problems


@pytest.mark.parametrize("fmt", ["trec", "csv"])
def test_duplicates_across_blocks_are_counted_as_in_memory(client, files, tmp_path, fmt,
                                                          monkeypatch):
    """Several (query, document) pairs given again, in other blocks than their first
    line, and in other judgment groups: the in-memory reader's error, every duplicate
    line in order and how many, whatever partition finds them after the shuffle (the
    good lines are shuffled by query, as for an input too large for one search task)."""
    from ireval_core.io import dask as io_dask

    monkeypatch.setattr(io_dask, "_ONE_SEARCH", 0)
    qrels = files["qrels_df"]
    again = [(i, "1" if i % 2 else "0") for i in range(3, 300, 7)]
    if fmt == "trec":
        text = _grouped_qrels(qrels, again, "\n")
    else:
        rows = [f"{q},{d},{int(r)}" for q, d, r in qrels.itertuples(index=False)]
        rows += [f"{qrels.qid[i]},{qrels.docid[i]},1" for i, _ in again]
        text = "qid,docid,rel\n" + "\n".join(rows) + "\n"
    path = tmp_path / f"qrels.{'txt' if fmt == 'trec' else 'csv'}"
    path.write_text(text)
    with pytest.raises(FormatError) as memory:
        read_qrels(path, name=str(path))
    assert memory.value.count == len(again)
    for blocksize in (1500,) if fmt == "trec" else (None, 1500):
        frame = read_qrels_dask(path, blocksize=blocksize)
        with pytest.raises(FormatError) as got:
            evaluate_dask(frame, files["trec"], ["P@5"], client=client, npartitions=4)
        assert str(got.value) == str(memory.value), blocksize
        assert got.value.problems == memory.value.problems, blocksize
    assert has_judgment_groups(got.value) is (fmt == "trec")


def _malformed(case: str, tmp_path: Path) -> tuple[Path, bool]:
    """A malformed qrels file of ``case``, and whether it is read with 10.0's comments."""
    lines = [f"q{i // 20} 0 d{i % 20} {i % 3}" for i in range(600)]
    if case == "comments":  # comment lines, and bad lines in several blocks
        lines = [("# rater A\n" if i % 37 == 0 else "") + (line if i % 101 else line[:-2])
                 for i, line in enumerate(lines)]
    elif case == "csv":  # a bad grade late, a line given again across blocks
        lines = ["qid,docid,rel"] + [line.replace(" 0 ", ",").replace(" ", ",")
                                     for line in lines]
        lines[450] = "q22,d10,high"
        lines.append(lines[3])
    elif case == "not-utf8":  # a Latin-1 byte in a late block: not UTF-8, not GB18030
        lines[500] = "q25 0 d\xe9 1"
    elif case == "a-run":  # a run given as qrels: said by the first line's shape
        lines = [f"q{i // 20} Q0 d{i % 20} {i} {1 / (i + 1):.4f} s" for i in range(600)]
    path = tmp_path / f"{case}.{'csv' if case == 'csv' else 'txt'}"
    path.write_bytes(("\n".join(lines) + "\n").encode("latin-1"))
    return path, case == "comments"


@pytest.mark.parametrize("case", ["comments", "csv", "not-utf8", "a-run"])
def test_malformed_text_in_blocks_gives_the_in_memory_error(client, files, tmp_path, case):
    """Bad lines, duplicates, comment lines (10.0), a line not UTF-8, a run given as qrels,
    read in blocks: the error is the in-memory reader's, its line numbers the file's
    (also inside its message)."""
    path, comments = _malformed(case, tmp_path)
    with pytest.raises(FormatError) as memory:
        read_qrels(path, name=str(path), comments=comments)
    frame = read_qrels_dask(path, blocksize=1200, comments=comments)
    assert frame.npartitions >= 4
    with pytest.raises(FormatError) as got:
        evaluate_dask(frame, files["trec"], ["P@5"], client=client,
                      options=EvalOptions(trec_eval="10.0" if comments else "9.0.8"))
    assert str(got.value) == str(memory.value)
    assert got.value.problems == memory.value.problems


def _bad_clicks(tmp_path: Path) -> tuple[list[Path], int]:
    """Two CSV files of labeled rows: ``a.csv`` with an infinite score at row 5 and an
    empty session at row 9, ``b.csv`` with a NaN score at its row 2 and a judged (session,
    item) pair of ``a.csv``'s row 3 given again at its row 4; and how many rows a.csv has."""
    rows = make_clicks(5, n_sessions=20).astype({"session": str, "item": str})
    a, b = rows.iloc[:60].copy(), rows.iloc[60:].copy()
    a.loc[a.index[4], "score"] = np.inf
    a.loc[a.index[8], "session"] = ""
    a.loc[a.index[2], "label"] = 1
    b.loc[b.index[1], "score"] = np.nan
    b.loc[b.index[1], "label"] = 0
    b.loc[b.index[3], ["session", "item", "label"]] = [a["session"].iloc[2], a["item"].iloc[2],
                                                       1]
    paths = [tmp_path / "a.csv", tmp_path / "b.csv"]
    a.to_csv(paths[0], index=False)
    b.to_csv(paths[1], index=False)
    return paths, len(a)


@pytest.mark.parametrize("slow", ["a.csv", "b.csv"])
def test_labeled_rows_errors_come_in_row_order_whichever_task_fails_first(client, tmp_path,
                                                                         slow):
    """Bad rows in both files of labeled rows: the first bad row's error and how many,
    numbered as rows of the whole input, whichever file's task fails first (the other's
    read is held until the other tasks are done); for evaluate_labeled (every row and the
    duplicate pair) and pooled_auc_dask (the judged rows' scores)."""
    paths, n_a = _bad_clicks(tmp_path)
    first = pd.read_csv(paths[0], dtype=str).iloc[2]
    urls = [slow_url(p) for p in paths]
    options = {"slow": ((slow, 0),)}
    with pytest.raises(FormatError) as got:
        evaluate_labeled(urls, ["AUC"], client=client, storage_options=options)
    assert got.value.count == 4
    assert [(p.where, p.message) for p in got.value.problems] == [
        ("row 5", "expected finite scores in column 'score', got inf"),
        ("row 9", "no 'session' value"),
        (f"row {n_a + 2}", "expected finite scores in column 'score', got nan"),
        (f"row {n_a + 4}", f"duplicate qrels entry for session {first['session']!r}, item "
         f"{first['item']!r} (rows 3 and {n_a + 4}); each (session, item) may appear once")]
    assert str(got.value).endswith(
        "row 5: expected finite scores in column 'score', got inf; and 3 more problems "
        "(4 in all)")
    with pytest.raises(FormatError) as pooled:
        pooled_auc_dask(urls, client=client, storage_options=options)
    assert pooled.value.count == 2
    assert [p.where for p in pooled.value.problems] == ["row 5", f"row {n_a + 2}"]


@pytest.mark.parametrize("npartitions", [1, 3, 8])
def test_a_parquet_duplicate_is_named_by_its_rows_as_in_memory(client, files, tmp_path,
                                                               npartitions):
    """Duplicates in both files of a Parquet qrels dataset: the first file's, named by
    its rows as the in-memory reader names it, whatever partition of the shuffle meets a
    duplicate first (several layouts of the shuffle); a run's too."""
    qrels = files["qrels_df"]
    folder = tmp_path / "qrels"
    folder.mkdir()
    first, second = qrels.iloc[:200], qrels.iloc[200:400]
    first = pd.concat([first.iloc[:150], first.iloc[[140]], first.iloc[150:]])  # row 151
    second = pd.concat([second.iloc[:5], second.iloc[[2]], second.iloc[5:]])  # row 6
    paths = [folder / "part-0.parquet", folder / "part-1.parquet"]
    for df, path in zip((first, second), paths, strict=True):
        pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    with pytest.raises(FormatError) as memory:
        read_qrels(paths[0], name=str(paths[0]))
    assert "(rows 141 and 151)" in str(memory.value)
    with pytest.raises(FormatError) as got:
        evaluate_dask(folder, files["trec"], ["P@5"], client=client, npartitions=npartitions)
    assert str(got.value) == str(memory.value)
    runs = files["runs_df"][["qid", "docid", "score", "tag"]]
    runs = pd.concat([runs.iloc[:30], runs.iloc[[12]], runs.iloc[30:]])
    run_path = tmp_path / "run.parquet"
    pq.write_table(pa.Table.from_pandas(runs, preserve_index=False), run_path)
    with pytest.raises(FormatError) as memory:
        read_runs(run_path, name=str(run_path))
    with pytest.raises(FormatError) as got:
        evaluate_dask(files["qrels"], run_path, ["P@5"], client=client,
                      npartitions=npartitions)
    assert str(got.value) == str(memory.value) and "(rows 13 and 31)" in str(got.value)


# ----------------------------------------------------------------------------- trec_eval text


def trec_files(tmp_path: Path) -> tuple[Path, list[Path]]:
    """Qrels with grades -1 .. 12 (negative: pooled, not judged; above 9: '>'), and three run
    files of one system each: unjudged documents, score ties, scores that tie only as
    float32 (9.0.8), a run missing judged queries, a query no qrels has."""
    rng = np.random.default_rng(11)
    q_rows, runs = [], {tag: [] for tag in ("bm25", "dense", "sparse")}
    for i in range(24):
        qid = f"q{i:02d}"
        docs = [f"d{j}" for j in rng.choice(60, size=int(rng.integers(3, 25)), replace=False)]
        for d in docs[: len(docs) * 3 // 4]:
            q_rows.append((qid, 0, d, int(rng.choice([-1, 0, 0, 1, 2, 3, 12]))))
        for tag, rows in runs.items():
            if tag == "sparse" and i % 5 == 1:
                continue  # judged, not answered
            for k, d in enumerate(docs):
                score = float(rng.integers(0, 6)) / 2  # ties
                if k % 7 == 3:
                    score = 0.03426470588235295 if k % 2 else 0.03426470588235294
                rows.append((qid, "Q0", d, k + 1, score, tag))
    runs["bm25"].append(("q99", "Q0", "d1", 1, 1.0, "bm25"))  # no qrels
    qpath = write_trec(pd.DataFrame(q_rows), tmp_path / "qrels.txt")
    rpaths = [write_trec(pd.DataFrame(rows), tmp_path / f"{tag}.txt")
              for tag, rows in runs.items()]
    return qpath, rpaths


TREC_CASES = {
    "9.0.8-all_trec": ["-q", "-m", "all_trec"],
    "9.0.8-c-relstring-utility": ["-q", "-c", "-m", "relstring.20", "-m", "relstring",
                                  "-m", "utility.1,-2,0,0", "-m", "ndcg.1=3", "-m", "P.5"],
    "10.0-c-all_trec": ["-q", "-c", "--trec-eval", "10.0", "-m", "all_trec"],
    "10.0-c-params": ["-q", "-c", "--trec-eval", "10.0", "-m", "utility.2,-1,0,0",
                      "-m", "rbp_resid.p=0.9", "-m", "relstring.15", "-m", "P.5,10",
                      "-m", "relstring"],
    "10.0-c-N-unparameterised": ["-q", "-c", "--trec-eval", "10.0", "-N", "500",
                                 "-m", "utility", "-m", "rbp_resid", "-m", "relstring",
                                 "-m", "unj.5"],
    "10.0-relstring-J-M": ["-q", "--trec-eval", "10.0", "-J", "-M", "8", "-m", "relstring.5",
                           "-m", "map"],
    "9.0.8-c-Z": ["-q", "-c", "-Z", "ZFILE", "-m", "map", "-m", "gm_map", "-m", "num_ret",
                  "-m", "relstring.3"],
}


@pytest.mark.parametrize("flags", list(TREC_CASES.values()), ids=list(TREC_CASES))
def test_cli_engine_dask_prints_the_trec_eval_text_of_the_in_memory_engine(client, tmp_path,
                                                                           flags):
    """relstrings (grades 0-9, '>', '-', '.', float32 ties under 9.0.8) and 10.0's -c values
    of the queries a run misses (parameterised utility and rbp_resid not cleaned), line for
    line, the queries split over the partitions of three run files."""
    qpath, rpaths = trec_files(tmp_path)
    zfile = tmp_path / "z.txt"  # -Z: a mean and deviation for some queries, none for others
    zfile.write_text("".join(f"q{i:02d} map 0.{i % 7} 0.{i % 3}\nq{i:02d} num_ret 9 2\n"
                             for i in range(0, 24, 2)))
    args = ["eval", str(qpath), *map(str, rpaths),
            *(str(zfile) if f == "ZFILE" else f for f in flags)]
    memory, dask_out = io.StringIO(), io.StringIO()
    assert main(args, out=memory) == 0
    assert main([*args, "--engine", "dask", "--scheduler", client.scheduler.address],
                out=dask_out) == 0
    text = memory.getvalue()
    assert dask_out.getvalue() == text
    if "relstring" in " ".join(flags):
        assert re.search(r"^relstring\S*\s+q\d+\t'[0-9>.-]*'$", text, re.M)


def test_relstrings_under_dask_mark_each_grade_and_float32_ties(client, tmp_path):
    """The characters of every kind appear, and 9.0.8's float32 ties reorder a ranking."""
    qpath = write_trec(pd.DataFrame([("q1", 0, "a", 12), ("q1", 0, "b", -1), ("q1", 0, "c", 3),
                                     ("q1", 0, "d", 0)]), tmp_path / "q.txt")
    rpath = write_trec(pd.DataFrame([
        ("q1", "Q0", "c", 1, 0.9, "s"), ("q1", "Q0", "a", 2, 0.03426470588235295, "s"),
        ("q1", "Q0", "b", 3, 0.03426470588235294, "s"), ("q1", "Q0", "x", 4, 0.01, "s"),
        ("q1", "Q0", "d", 5, 0.001, "s")]), tmp_path / "r.txt")
    lines = {}
    for version in ("9.0.8", "10.0"):
        out = io.StringIO()
        assert main(["eval", str(qpath), str(rpath), "-q", "-m", "relstring", "--trec-eval",
                     version, "--engine", "dask", "--scheduler", client.scheduler.address],
                    out=out) == 0
        lines[version] = out.getvalue()
    assert "relstring             \tq1\t'3>.-0'\n" in lines["10.0"]
    assert "relstring             \tq1\t'3.>-0'\n" in lines["9.0.8"]  # b > a by id at a tie


def test_evaluate_dask_trec_carries_the_judged_queries_and_missing_values(client, tmp_path):
    """10.0 -c: a judged query a run misses gets the values of a one-document unjudged
    ranking (utility_2,-1,0,0 = -1) and relstring_5 '-'; the qrels' query ids come back."""
    qpath = write_trec(pd.DataFrame([("q1", 0, "a", 1), ("q2", 0, "b", 2)]), tmp_path / "q.txt")
    rpath = write_trec(pd.DataFrame([("q1", "Q0", "a", 1, 1.0, "s")]), tmp_path / "r.txt")
    cols = columns(["utility.2,-1,0,0", "relstring.5", "utility"], parse_measure)
    got = evaluate_dask_trec(qpath, rpath, cols, options=EvalOptions(complete=True,
                                                                     trec_eval="10.0"),
                             client=client, npartitions=2)
    assert got.judged.tolist() == ["q1", "q2"]
    assert got.overrides == {("s", "utility_2,-1,0,0"): {"q2": -1.0}}
    assert got.strings == {("s", "relstring_5"): {"q1": "1", "q2": "-"}}
    assert got.evaluation.answered["s"].tolist() == ["q1"]
