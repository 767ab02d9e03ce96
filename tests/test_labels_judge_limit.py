"""A model-judge report too large for the limit is refused before any computing, with a
message that gives the points, the resamples and the limit's name: in the core
(``judge_report(max_work=...)``, ``TooLargeError``) and in ``labels --judge``
(``--judge-limit``, exit 2, one line on stderr)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from ireval_core import cli
from ireval_core.errors import TooLargeError
from ireval_core.labels import read_judgments
from ireval_core.labels.judge import JUDGE_MAX_WORK, judge_report, judge_work

LABELS = Path(__file__).resolve().parents[1] / "sample_data" / "labels"
FILES = [*sorted(LABELS.glob("labels_*.csv")), LABELS / "judge_llm.csv"]

pytestmark = pytest.mark.skipif(not (LABELS / "judge_llm.csv").exists(),
                                reason="labeling sample not generated")


@pytest.fixture(scope="module")
def j():
    return read_judgments(FILES)


def test_work_is_points_times_resamples(j):
    assert len(j.rounds) * len(j.systems) == 12  # six rounds x two systems
    assert judge_work(j, 2000) == 24_000


def test_core_refuses_before_computing(j):
    with pytest.raises(TooLargeError) as info:
        judge_report(j, "llm", n_resamples=2000, max_work=23_999)
    err = info.value
    assert (err.limit, err.size, err.maximum) == ("JUDGE_MAX_WORK", 24_000, 23_999)
    assert str(err) == ("The model-judge report is too large: 12 (round, system) points x "
                        "2,000 resamples = 24,000, over the limit of 23,999 points x "
                        "resamples (JUDGE_MAX_WORK); use fewer resamples, or the files of "
                        "fewer rounds.")
    # at the limit, and without one, the report is made
    assert len(judge_report(j, "llm", n_resamples=50, max_work=600).order) == 7
    assert len(judge_report(j, "llm", n_resamples=50, max_work=None).order) == 7
    with pytest.raises(ValueError, match="max_work"):
        judge_report(j, "llm", n_resamples=50, max_work=0)


def run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    return cli.main(argv, out=out), out.getvalue()


def test_cli_says_which_limit(capsys):
    files = [str(p) for p in FILES]
    status, out = run(["labels", *files, "--judge", "llm", "--resamples", "400",
                       "--judge-limit", "4000"])
    err = capsys.readouterr().err
    assert status == 2 and out == ""
    assert err == ("The model-judge report is too large: 12 (round, system) points x 400 "
                   "resamples = 4,800, over the limit of 4,000 points x resamples "
                   "(--judge-limit); use fewer --resamples or the files of fewer rounds, "
                   "or raise --judge-limit (0: no limit) where the memory allows.\n")
    # the default limit: JUDGE_MAX_WORK
    too_many = JUDGE_MAX_WORK // 12 + 1
    status, _ = run(["labels", *files, "--judge", "llm", "--resamples", str(too_many)])
    err = capsys.readouterr().err
    assert status == 2 and f"over the limit of {JUDGE_MAX_WORK:,} points" in err
    status, _ = run(["labels", *files, "--judge", "llm", "--judge-limit", "-1"])
    assert status == 2 and "--judge-limit must be >= 0" in capsys.readouterr().err


def test_cli_help_gives_the_default():
    parser = cli._build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    text = sub.choices["labels"].format_help().replace("\n", " ")
    assert f"default {JUDGE_MAX_WORK:,}" in " ".join(text.split())
