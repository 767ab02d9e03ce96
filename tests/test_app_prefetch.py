"""The app's background work after a page is drawn (``ireval_app.evaluation.prefetch``):
the runs are joined on two threads, each join made once, and the values are the ones a
fresh evaluation gives."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from ireval_app import evaluation
from ireval_core import EvalOptions, evaluate
from ireval_core.dataset import Dataset
from ireval_core.io import read_qrels, read_run

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"

pytestmark = pytest.mark.skipif(not (SAMPLE / "qrels.txt").exists(),
                                reason="sample data not generated")


def _settle() -> None:
    for t in threading.enumerate():
        if t.name in ("ireval-join-prefetch", "ireval-evaluate-prefetch"):
            t.join()


def _dataset() -> Dataset:
    runs = tuple(read_run(SAMPLE / f"run_{n}.txt") for n in ("bm25", "narrow", "neural"))
    return Dataset(read_qrels(SAMPLE / "qrels.txt"), runs)


def test_two_join_threads_join_each_run_once() -> None:
    ds = _dataset()
    before = {t.ident for t in threading.enumerate()}
    evaluation.prefetch(ds, EvalOptions())
    started = [t.name for t in threading.enumerate() if t.ident not in before]
    _settle()
    # the dataset's join thread and the backwards one (unless already finished)
    assert started.count("ireval-join-prefetch") <= 2
    assert ds.joins.misses == len(ds.runs) == len(ds.joins)  # each join made once
    # the evaluation made in the background is the fresh one, value for value
    kept = ds.evaluate(list(evaluation.METRICS_DEFAULT), EvalOptions())
    fresh = evaluate(ds.qrels, ds.runs, list(evaluation.METRICS_DEFAULT))
    assert ds.values.misses == len(ds.runs) * len(evaluation.METRICS_DEFAULT)
    for system in fresh.systems:
        for m in evaluation.METRICS_DEFAULT:
            assert kept.mean(system, m) == fresh.mean(system, m), (system, m)
    assert kept.mean("bm25", "P@10") == pytest.approx(0.4746, abs=5e-5)

    # the same join options again (another level): nothing joined again, and no second
    # join thread: the joins are looked up once per run, by the evaluation of the
    # measures that read the level
    hits = ds.joins.hits
    evaluation.prefetch(ds, EvalOptions(rel_level=2))
    _settle()
    assert (ds.joins.misses, ds.joins.hits) == (len(ds.runs), hits + len(ds.runs))
    # another depth: new joins, again once each
    evaluation.prefetch(ds, EvalOptions(depth=50))
    _settle()
    assert ds.joins.misses == 2 * len(ds.runs)
    fresh50 = evaluate(ds.qrels, ds.runs, ["AP"], options=EvalOptions(depth=50))
    kept50 = ds.evaluate(["AP"], EvalOptions(depth=50))
    assert [kept50.mean(s, "AP") for s in ds.run_names] == [
        fresh50.mean(s, "AP") for s in ds.run_names]


def test_one_run_one_join_thread() -> None:
    ds = Dataset(read_qrels(SAMPLE / "qrels.txt"), (read_run(SAMPLE / "run_bm25.txt"),))
    evaluation.prefetch(ds, EvalOptions())
    _settle()
    assert ds.joins.misses == 1 and ds.joins.hits >= 1  # the evaluation found the join


def test_prefetch_waits_for_the_pages_being_drawn(monkeypatch: pytest.MonkeyPatch) -> None:
    """The background work starts once no page run is in progress (many sessions opening
    one link draw first), then is the same work with the same numbers."""
    ds = _dataset()
    with evaluation.page_run():  # a session still drawing its page
        waiting = evaluation.prefetch_when_idle(ds, EvalOptions(), ("AP", "P@10"))
        assert waiting is not None and waiting.name == "ireval-join-prefetch"
        # the same work asked for again while it waits: one waiter
        assert evaluation.prefetch_when_idle(ds, EvalOptions(), ("AP", "P@10")) is None
        waiting.join(0.3)
        assert waiting.is_alive() and ds.joins.misses == 0 and ds.values.misses == 0
    waiting.join()  # the page run ended: the waiter started the work and waited for it
    assert ds.joins.misses == len(ds.runs) == len(ds.joins)
    assert ds.values.misses == 2 * len(ds.runs)
    fresh = evaluate(ds.qrels, ds.runs, ["AP", "P@10"])
    kept = ds.evaluate(["AP", "P@10"], EvalOptions())
    for system in fresh.systems:
        for m in ("AP", "P@10"):
            assert kept.mean(system, m) == fresh.mean(system, m), (system, m)
    assert ds.values.misses == 2 * len(ds.runs)  # all of it from the background work


def test_prefetch_starts_after_the_longest_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A page run that lasts (another session's long page) delays the work by at most
    IDLE_WAIT_MAX seconds."""
    monkeypatch.setattr(evaluation, "IDLE_WAIT_MAX", 0.2)
    ds = _dataset()
    with evaluation.page_run():
        waiting = evaluation.prefetch_when_idle(ds, EvalOptions(depth=50), ("AP",))
        assert waiting is not None
        waiting.join(10)
        assert not waiting.is_alive()  # done while the page run still lasts
    assert ds.joins.misses == len(ds.runs)
    assert ds.evaluate(["AP"], EvalOptions(depth=50)).mean("bm25", "AP") == evaluate(
        ds.qrels, ds.runs, ["AP"], options=EvalOptions(depth=50)).mean("bm25", "AP")
