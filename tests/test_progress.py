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


def test_terminal_status_draws_the_stage_then_clears_the_line() -> None:
    import io
    import time

    err = io.StringIO()

    def drawn(what: str) -> None:  # the drawing thread's next line shows it
        deadline = time.monotonic() + 60
        while what not in err.getvalue() and time.monotonic() < deadline:
            time.sleep(0.005)

    with progress.TerminalStatus(err, delay=0, interval=0.01) as status, \
            progress.reporting(status):
        status.label = "run.txt"
        progress.stage("parsing")
        drawn("run.txt: parsing (")
        progress.stage("ordering ties")
        drawn("run.txt: ordering ties (")
    text = err.getvalue()
    assert "\r\x1b[Krun.txt: parsing (" in text and "run.txt: ordering ties (" in text
    assert text.endswith(" s)\r\x1b[K")  # the last thing written clears the line
    drawn = len(text)
    time.sleep(0.05)
    assert len(err.getvalue()) == drawn  # nothing drawn after the end


def test_cli_status_line_only_when_asked_and_cleared_before_output(monkeypatch, capsys) -> None:
    from ireval_core import cli

    args = ["eval", str(SAMPLE / "qrels.txt"), str(SAMPLE / "run_bm25.txt"), "-m", "map"]
    assert cli.main(args) == 0
    plain = capsys.readouterr()
    # auto: stderr is not a terminal here, so no status line; only the data's warnings
    # (the sample's run answers one query without qrels: eval says so on stderr)
    assert "\x1b" not in plain.err
    assert all(line.startswith("warning: ") for line in plain.err.splitlines())
    monkeypatch.setattr(cli, "STATUS_DELAY", 0.0)
    assert cli.main([*args, "--progress", "always"]) == 0
    shown = capsys.readouterr()
    assert shown.out == plain.out  # the numbers are untouched
    status = shown.err.replace(plain.err, "")  # the status line without the warnings
    assert status.startswith("\r\x1b[K") and " s)" in status  # drawn at once ...
    assert status.endswith("\r\x1b[K")  # ... and cleared before the output
    assert cli.main([*args, "--progress", "never"]) == 0
    assert capsys.readouterr().err == plain.err


def test_cli_status_names_the_file_being_read() -> None:
    import io

    from ireval_core.cli import _LabeledStatus

    status = _LabeledStatus(io.StringIO())
    status("reading run.txt")
    status("ordering ties")
    assert status.line().startswith("run.txt: ordering ties (")
    status("evaluating")
    status("evaluating bm25")
    assert status.line().startswith("evaluating bm25 (")
