"""What the CLI says on stderr about the inputs: what the app shows beside them (issue 19)."""

from __future__ import annotations

import io
import json

import pytest

from ireval_core.cli import main

QRELS = "1 0 a 1\n1 0 b 0\n2 0 a 1\n3 0 c 1\n"
MIXED = "1 Q0 a 1 2 bm25\n1 Q0 b 2 1 bm25x\n2 Q0 a 1 1 bm25\n"  # the tag changes per line


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "results.txt").write_text(MIXED)
    (tmp_path / "other.txt").write_text("1 Q0 a 1 2 bm25\n")
    return tmp_path


def _eval(*args: object) -> tuple[int, str]:
    out = io.StringIO()
    status = main(["eval", *map(str, args)], out=out)
    return status, out.getvalue()


def test_a_file_split_by_its_tags_is_said_and_one_run_reads_it_whole(files, capsys) -> None:
    status, text = _eval("-m", "map", files / "qrels.txt", files / "results.txt")
    err = capsys.readouterr().err
    assert status == 0 and text.count("runid") == 2
    assert ("results.txt: 2 tags in one file: read as 2 systems (bm25, bm25x); --one-run "
            "reads it as one run, as trec_eval does") in err
    status, text = _eval("-m", "runid", "-m", "map", "--one-run", files / "qrels.txt",
                         files / "results.txt")
    err = capsys.readouterr().err
    # one run, named by the tag of its last line as trec_eval names it; AP of 1 and 2: 1
    assert text == "runid                 \tall\tbm25\nmap                   \tall\t1.0000\n"
    assert "tags in one file" not in err


def test_compare_takes_one_run(files, capsys) -> None:
    (files / "b.txt").write_text("1 Q0 b 1 2 x\n1 Q0 a 2 1 y\n2 Q0 a 1 1 x\n")
    out = io.StringIO()
    assert main(["compare", "-m", "AP", "--tests", "t", "--one-run", str(files / "qrels.txt"),
                 str(files / "results.txt"), str(files / "b.txt")], out=out) == 0
    doc = json.loads(out.getvalue())
    assert "tags in one file" not in capsys.readouterr().err
    assert {"bm25", "x"} <= set(json.dumps(doc).replace('"', " ").split())


def test_a_renamed_run_and_the_dataset_warnings_are_on_stderr(files, capsys) -> None:
    status, _ = _eval("-m", "map", "--one-run", files / "qrels.txt", files / "results.txt",
                      files / "other.txt")
    err = capsys.readouterr().err
    assert status == 0
    assert ("other.txt: tag 'bm25' is the tag of runs in 2 files (results.txt, other.txt): "
            "each is named after its file and tag, this one 'other:bm25'") in err
    assert "this one 'results:bm25'" in err
    # the app's soft warnings: judged queries the run does not answer, short rankings
    assert "warning: other:bm25: 2 judged queries of 3 are missing from the run" in err
    assert "rank fewer than 10 documents" in err


@pytest.mark.parametrize(("flags", "fate"), [
    ([], "left out of the means; the complete option (trec_eval -c) would count them as 0"),
    (["-c"], "counted as 0 in the means, as the complete option (trec_eval -c) is on"),
])
def test_missing_queries_are_said_as_the_options_in_force_treat_them(files, capsys, flags,
                                                                      fate) -> None:
    status, text = _eval("-m", "map", *flags, files / "qrels.txt", files / "other.txt")
    lines = [line for line in capsys.readouterr().err.splitlines() if "missing" in line]
    assert status == 0
    assert lines == [f"warning: bm25: 2 judged queries of 3 are missing from the run; {fate} "
                     "(e.g. 2, 3)"]
    # what the warning says is what the mean did: AP 1 on query 1, over 1 or 3 queries
    assert text.endswith(f"\t{'1.0000' if not flags else '0.3333'}\n")


def test_a_run_answering_unjudged_queries_is_said(files, capsys) -> None:
    (files / "wide.txt").write_text("".join(f"{q} Q0 a 1 1 wide\n" for q in range(1, 9)))
    _eval("-m", "map", files / "qrels.txt", files / "wide.txt")
    assert "5 queries of 8 in the run have no qrels" in capsys.readouterr().err


def test_one_run_is_refused_with_the_dask_engine(files, capsys) -> None:
    status, _ = _eval("--one-run", "--engine", "dask", files / "qrels.txt",
                      files / "results.txt")
    assert status == 2 and "--one-run goes with --engine memory" in capsys.readouterr().err
