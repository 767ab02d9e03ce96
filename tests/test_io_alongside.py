"""read_qrels_alongside: the qrels read on a second thread beside the runs, as the CLI reads."""

from __future__ import annotations

import threading

import pytest

from ireval_core.errors import FormatError
from ireval_core.io import read_qrels, read_qrels_alongside, read_runs
from ireval_core.progress import reporting, stage

QRELS = b"q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n"
RUN = b"q1 Q0 d2 1 2.0 bm25\nq1 Q0 d1 2 1.0 bm25\nq2 Q0 d3 1 5.0 bm25\n"


def test_same_objects_as_read_in_turn() -> None:
    qrels, runs = read_qrels_alongside(QRELS, lambda: read_runs(RUN, name="r"), name="qrels")
    assert qrels.to_dict() == read_qrels(QRELS, name="qrels").to_dict()
    assert [r.to_dict() for r in runs] == [r.to_dict() for r in read_runs(RUN, name="r")]


def test_reads_on_another_thread() -> None:
    main = threading.get_ident()
    seen: list[int] = []

    def work() -> int:
        seen.append(threading.get_ident())
        return 7

    qrels, got = read_qrels_alongside(QRELS, work, name="qrels")
    assert got == 7 and seen == [main] and qrels.n_queries == 2


def test_a_qrels_error_wins_as_when_read_first() -> None:
    def bad_runs() -> None:
        read_runs(b"q1 Q0 d1 1 high bm25\n", name="r")

    with pytest.raises(FormatError) as caught:
        read_qrels_alongside(b"q1 0 d1\n", bad_runs, name="qrels")
    assert caught.value.source == "qrels" and caught.value.line == 1
    with pytest.raises(FormatError) as caught:  # good qrels: the run's error
        read_qrels_alongside(QRELS, bad_runs, name="qrels")
    assert caught.value.source == "r" and "score" in str(caught.value)
    with pytest.raises(FormatError) as caught:  # good runs: the qrels' error
        read_qrels_alongside(b"q1 0 d1 x\n", lambda: read_runs(RUN, name="r"), name="qrels")
    assert caught.value.source == "qrels"


def test_progress_of_both_threads_reaches_the_reporter() -> None:
    messages: list[str] = []
    with reporting(messages.append):
        read_qrels_alongside(QRELS, lambda: stage("runs"), name="qrels")
    assert "runs" in messages
    assert any(m != "runs" for m in messages)  # the qrels reader's own stages


def test_a_run_codes_its_ids_once_the_qrels_are_read() -> None:
    """The runs' parse overlaps the qrels' read, but a run's coding of its ids (its peak)
    starts only when the qrels' thread is done, however the threads were scheduled."""
    seen: list[tuple[str, str]] = []
    big_qrels = b"".join(b"q%d 0 d%d %d\n" % (i % 50, i, i % 3) for i in range(20_000))
    with reporting(lambda m: seen.append((threading.current_thread().name, m))):
        qrels, runs = read_qrels_alongside(big_qrels, lambda: read_runs(RUN, name="r"),
                                           name="qrels")
    main = threading.current_thread().name
    coding = seen.index((main, "coding ids"))
    qrels_stages = [i for i, (who, _) in enumerate(seen) if who != main]
    assert qrels_stages and max(qrels_stages) < coding
    assert len(qrels) == 20_000 and runs[0].to_dict() == read_runs(RUN, name="r")[0].to_dict()
