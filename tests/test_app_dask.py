"""AppTest of the Data page's "Evaluate on a Dask cluster" against a real LocalCluster.

The cluster (one worker process) is started by the test; the page is given its
scheduler address and files on disk the worker reads. Oracle: the in-memory
:func:`ireval_core.evaluate` of the same files.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from distributed import LocalCluster
from streamlit.testing.v1 import AppTest

from ireval_app import dask_glue
from ireval_app.keys import data as data_keys
from ireval_core import EvalOptions, Evaluation, Run, evaluate
from ireval_core.io import read_qrels, read_runs

APP = str(Path(__file__).resolve().parents[1] / "app.py")
MEASURES = ["nDCG@10", "AP", "P@5"]


@pytest.fixture(scope="module")
def scheduler() -> Iterator[str]:
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        yield cluster.scheduler_address


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """TREC qrels (ids like 007), a Parquet run folder of 2 files and a TREC run."""
    tmp = tmp_path_factory.mktemp("dask_app")
    rng = np.random.default_rng(3)
    q_rows, r_rows = [], []
    for i in range(30):
        qid = f"{i:03d}"
        docs = [f"d{j}" for j in rng.choice(200, size=25, replace=False)]
        q_rows += [f"{qid} 0 {d} {int(rng.choice([0, 0, 1, 2]))}" for d in docs[:15]]
        for tag in ("bm25", "dense"):
            r_rows += [(qid, d, float(rng.random()), tag) for d in docs]
    (tmp / "qrels.txt").write_text("\n".join(q_rows) + "\n")
    runs = pd.DataFrame(r_rows, columns=["qid", "docid", "score", "tag"])
    (tmp / "bm25").mkdir()
    bm25 = runs[runs["tag"] == "bm25"]
    for k in range(2):  # every query split across the two files
        pq.write_table(pa.Table.from_pandas(bm25.iloc[k::2], preserve_index=False),
                       tmp / "bm25" / f"part-{k}.parquet")
    dense = runs[runs["tag"] == "dense"]
    (tmp / "dense.txt").write_text("".join(
        f"{q} Q0 {d} {r} {s} dense\n" for r, (q, d, s) in
        enumerate(zip(dense["qid"], dense["docid"], dense["score"], strict=True), start=1)))
    return {"qrels": tmp / "qrels.txt", "bm25": tmp / "bm25", "dense": tmp / "dense.txt"}


def _plain(markdown: str) -> str:
    """Text of the app's escaped Markdown (``tcp\\://`` shows as ``tcp://``)."""
    return markdown.replace("\\", "")


def _fill(at: AppTest, scheduler: str, qrels: str, runs: str,
          measures: list[str] | None = None) -> AppTest:
    at.text_input(key=data_keys.DASK_SCHEDULER).input(scheduler)
    at.text_input(key=data_keys.DASK_QRELS).input(qrels)
    at.text_area(key=data_keys.DASK_RUNS).input(runs)
    if measures is not None:
        at.multiselect(key=data_keys.DASK_MEASURES).set_value(measures)
    [button] = [b for b in at.button if b.label == "Evaluate on the cluster"]
    return button.click().run()


def _want(files: dict[str, Path]) -> Evaluation:
    qrels = read_qrels(files["qrels"])
    bm25 = pq.read_table(files["bm25"]).to_pandas()
    runs = [Run.from_arrays(bm25["qid"], bm25["docid"], bm25["score"], name="bm25"),
            *read_runs(files["dense"])]
    return evaluate(qrels, runs, MEASURES)


def test_a_job_on_the_cluster_shows_the_in_memory_numbers(scheduler, files, monkeypatch):
    monkeypatch.setenv(dask_glue.ENABLE_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=180).run()
    assert not at.exception
    at = _fill(at, scheduler, str(files["qrels"]),
               f"{files['bm25']}\n{files['dense']}\n", MEASURES)
    assert not at.exception
    assert not at.error, [e.value for e in at.error]
    want = _want(files)
    # the per-query values, as the in-memory evaluation has them (ids such as 007 kept)
    [per_query] = [d.value for d in at.dataframe if "measure" in d.value.columns]
    expected = want.tidy()
    got = per_query.sort_values(["system", "measure", "query"]).reset_index(drop=True)
    expected = expected.sort_values(["system", "measure", "query"]).reset_index(drop=True)
    assert got["query"].tolist() == expected["query"].tolist()
    assert "007" in set(got["query"])
    np.testing.assert_allclose(got["value"].to_numpy(float), expected["value"].to_numpy(float),
                               rtol=0, atol=0)
    # the mean table: one row per run, each cell starting with the in-memory mean
    [means] = [t.value for t in at.table]
    assert list(means.index) == ["bm25", "dense"]
    for system in ("bm25", "dense"):
        for m in MEASURES:
            assert str(means.loc[system, m]).startswith(f"{want.mean(system, m):.4f}")
    captions = _plain(" ".join(c.value for c in at.caption))
    assert f"Job on {scheduler}: qrels {files['qrels']}" in captions
    # the result stays on the page on the next rerun
    at = at.run()
    assert [t.value for t in at.table][0].equals(means)


def test_errors_are_messages_not_tracebacks(scheduler, files, tmp_path, monkeypatch):
    monkeypatch.setenv(dask_glue.ENABLE_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=180).run()
    at = _fill(at, "localhost:8786", "", "")
    assert not at.exception
    messages = [_plain(e.value) for e in at.error]
    assert any("tcp://HOST:PORT" in m for m in messages)
    assert any("qrels path" in m for m in messages) and any("run path" in m for m in messages)
    bad = tmp_path / "bad.txt"
    bad.write_text("000 Q0 d1 1 0.5 x\n000 Q0 d2 2\n")
    at = _fill(at, scheduler, str(files["qrels"]), str(bad))
    assert not at.exception
    [error] = [_plain(e.value) for e in at.error]
    assert "bad.txt:2" in error and "expected 6 columns" in error
    assert "Traceback" not in error
    # Dask retries a refused connection until the timeout: 1 s here (the app waits 10 s)
    monkeypatch.setattr(dask_glue, "_TIMEOUT", 1.0)
    at = _fill(at, "tcp://127.0.0.1:9", str(files["qrels"]), str(files["dense"]))
    assert not at.exception
    [error] = [_plain(e.value) for e in at.error]
    assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in error


def test_jobs_are_off_unless_the_server_allows_them(monkeypatch):
    monkeypatch.delenv(dask_glue.ENABLE_ENV, raising=False)
    at = AppTest.from_file(APP, default_timeout=60).run()
    assert not at.exception
    assert any(dask_glue.ENABLE_ENV in i.value for i in at.info)
    assert not [b for b in at.button if b.label == "Evaluate on the cluster"]


def test_run_job_reports_progress_to_the_end(scheduler, files):
    job, problems = dask_glue.make_job(scheduler, str(files["qrels"]), str(files["dense"]),
                                       ["AP"], EvalOptions(complete=True))
    assert job is not None and not problems
    heard: list[tuple[float, str]] = []
    result = dask_glue.run_job(job, lambda fraction, text: heard.append((fraction, text)))
    assert result.error is None and result.evaluation is not None
    fractions = [f for f, _ in heard]
    assert fractions == sorted(fractions) and fractions[0] == 0.0 and fractions[-1] == 1.0
    assert any(text.startswith("Evaluated ") and "partitions" in text for _, text in heard)
    assert result.evaluation.options == EvalOptions(complete=True)
    want = evaluate(read_qrels(files["qrels"]), read_runs(files["dense"]), ["AP"],
                    options=EvalOptions(complete=True))
    assert result.evaluation.mean("dense", "AP") == pytest.approx(want.mean("dense", "AP"),
                                                                  rel=1e-15)
