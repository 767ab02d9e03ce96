"""Long work reports its stages (the app shows them under its spinner), per thread."""

from __future__ import annotations

import threading
from pathlib import Path

from ireval_core import evaluate, progress, read_qrels, read_runs
from ireval_core.curves import run_curves

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def test_reading_and_evaluating_report_their_stages() -> None:
    seen: list[str] = []
    with progress.reporting(seen.append):
        qrels = read_qrels(SAMPLE / "qrels.txt")
        runs = read_runs(SAMPLE / "run_bm25.txt")
        evaluate(qrels, runs, ["AP"])
        run_curves(qrels, runs[0])
    assert seen == ["parsing", "coding ids",  # qrels
                    "parsing", "coding ids", "checking for duplicates", "ordering ties",
                    "joining bm25 with the qrels", "evaluating bm25",
                    "joining bm25 with the qrels", "curves of bm25"]
    progress.stage("after the block")  # nobody listens any more
    assert seen[-1] == "curves of bm25"


def test_each_thread_hears_only_its_own_stages() -> None:
    heard: dict[str, list[str]] = {"a": [], "b": []}
    barrier = threading.Barrier(2)

    def work(name: str) -> None:
        with progress.reporting(heard[name].append):
            barrier.wait()
            for i in range(50):
                progress.stage(f"{name}{i}")

    threads = [threading.Thread(target=work, args=(n,)) for n in heard]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert heard == {n: [f"{n}{i}" for i in range(50)] for n in heard}
