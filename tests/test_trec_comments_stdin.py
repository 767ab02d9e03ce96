"""trec_eval 10.0's ``#`` comment lines and a run read from standard input.

The rules are trec_eval 10.0's. Runs (``get_trec_results.c``): after leading spaces and
tabs, a line going on with ``#`` is skipped. Qrels (``get_qrels.c``): a line whose first
character is ``#`` is skipped, and the line after it is read as data whatever it is. A
``#`` anywhere else belongs to a field. 9.0.8 reads such a line as data, so ireval skips
them only under ``--trec-eval 10.0`` (``comments=True``) and otherwise says what the
line is.
"""

from __future__ import annotations

import io
import sys

import pytest

from ireval_core.cli import main
from ireval_core.errors import FormatError
from ireval_core.io import read_qrels, read_runs

QRELS = b"# judged by A\n1 0 d#1 1\n# two\n1 0 d2 0\n2 0 d3 2\n"
RUN = b"#run\n1 Q0 d#1 1 2.5 sys\n1 Q0 d2 2 1.5 sys\n  # end\n# more\n2 Q0 d3 1 9 sys\n"


def test_comment_lines_are_skipped_and_a_hash_inside_an_id_is_kept() -> None:
    qrels = read_qrels(QRELS, name="q", comments=True)
    assert qrels.to_dict() == {"1": {"d#1": 1.0, "d2": 0.0}, "2": {"d3": 2.0}}
    assert [(w.code, w.count) for w in qrels.warnings] == [("comment-lines", 2)]
    (run,) = read_runs(RUN, name="r", comments=True)
    assert run.to_dict() == {"1": {"d#1": 2.5, "d2": 1.5}, "2": {"d3": 9.0}}
    assert "3 comment line(s)" in str(run.warnings[-1])


@pytest.mark.parametrize(("text", "line"), [
    (b"# a\n# b\n1 0 d1 1\n", 2),  # a second comment line in a row is data for 10.0
    (b"1 0 d1 1\n  # indented\n", 2),  # in qrels only the first character counts
])
def test_qrels_comments_follow_trec_eval_10s_qrels_reader(text: bytes, line: int) -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels(text, name="q", comments=True)
    assert str(caught.value).startswith(f"q:{line}: expected 4 columns")
    assert "not right after another comment line" in str(caught.value)
    # data for 10.0 too when it has the columns: trec_eval judges query '#b'
    assert read_qrels(b"# a\n#b 0 d1 1\n", name="q", comments=True).to_dict() == {
        "#b": {"d1": 1.0}}
    assert read_qrels(b"# a\r\n1 0 d1 1\r\n# b\r\n", name="q", comments=True
                      ).to_dict() == {"1": {"d1": 1.0}}


def test_without_comments_a_hash_line_is_data_and_the_error_says_why() -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels(QRELS, name="q")
    message = str(caught.value)
    assert message.startswith("q:1: expected a numeric grade in column 4, got 'A'; a line "
                              "starting with '#' is a comment for trec_eval 10.0 "
                              "(which skips it;")
    assert message.endswith("data for 9.0.8: '# judged by A'; and 1 more problem (2 in all)")
    third = caught.value.problems[1]
    assert third.line == 3 and third.message.startswith(
        "expected 4 columns (qid iter docid rel), got 2; a line starting with '#'")
    # a 4-field '#' line is a judgment of query '#x' for 9.0.8, and for ireval's default
    assert read_qrels(b"#x 0 d1 1\n", name="q").to_dict() == {"#x": {"d1": 1.0}}
    assert read_qrels(b"#x 0 d1 1\n1 0 d1 1\n", name="q", comments=True).to_dict() == {
        "1": {"d1": 1.0}}


def test_line_numbers_stay_the_files_own() -> None:
    with pytest.raises(FormatError) as caught:
        read_qrels(b"# a\n1 0 d0 1\n# b\n1 0 d1 1\n1 0 d2\n", name="q", comments=True)
    assert str(caught.value) == "q:5: expected 4 columns (qid iter docid rel), got 3: '1 0 d2'"
    with pytest.raises(FormatError) as caught:
        read_runs(b"# a\r\n1 Q0 d1 1 x t\r\n", name="r", comments=True)
    assert str(caught.value).startswith("r:2: expected a numeric score in column 5, got 'x'")


def test_comments_only_touch_trec_text() -> None:
    csv = b"qid,docid,rel\n#1,d1,1\n"
    assert read_qrels(csv, name="q.csv", comments=True).to_dict() == {"#1": {"d1": 1.0}}


def _eval(args: list[str]) -> str:
    out = io.StringIO()
    assert main(["eval", *args], out=out) == 0
    return out.getvalue()


def test_eval_10_skips_comments_9_refuses_them(tmp_path, capsys) -> None:
    (tmp_path / "q").write_bytes(QRELS)
    (tmp_path / "r").write_bytes(RUN)
    files = [str(tmp_path / "q"), str(tmp_path / "r")]
    text = _eval(["-m", "num_ret", "-m", "num_rel", "--trec-eval", "10.0", *files])
    assert text == "num_ret               \tall\t3\nnum_rel               \tall\t2\n"
    err = capsys.readouterr().err
    assert "q: 2 comment line(s)" in err and "r: 3 comment line(s)" in err
    assert main(["eval", "-m", "map", *files], out=io.StringIO()) == 2
    err = capsys.readouterr().err
    assert "a comment for trec_eval 10.0 (which skips it" in err
    assert "--trec-eval 10.0 reads lines starting with '#' as comments" in err


def test_a_run_from_standard_input(tmp_path, monkeypatch) -> None:
    (tmp_path / "q").write_bytes(QRELS)
    (tmp_path / "r").write_bytes(RUN)
    from_file = _eval(["-q", "-m", "all_trec", "--trec-eval", "10.0", str(tmp_path / "q"),
                       str(tmp_path / "r")])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(RUN)))
    from_stdin = _eval(["-q", "-m", "all_trec", "--trec-eval", "10.0", str(tmp_path / "q"),
                        "-"])
    assert from_stdin == from_file and "runid                 \tall\tsys\n" in from_stdin


def test_standard_input_once(tmp_path, capsys) -> None:
    (tmp_path / "q").write_bytes(QRELS)
    assert main(["eval", str(tmp_path / "q"), "-", "-"], out=io.StringIO()) == 2
    assert "standard input ('-') can be read as one run only" in capsys.readouterr().err
