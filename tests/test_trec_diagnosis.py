"""The diagnosis of a malformed TREC file (:func:`ireval_core.io.trec.diagnose_trec`) gives
exactly what checking every line in Python gives, on seeded random malformed files.

The reference is the plain per-line pass (``_diagnose_lines`` over every line); the
diagnosis under test runs it only on the lines its vectorised first pass picks. Both
must give the same problems (line, message, text, in order), the same count past
:data:`~ireval_core.io.checks.MAX_PROBLEMS`, the same count of run lines with extra
columns, and the same :class:`~ireval_core.io.encoding.NotUtf8` stop.
"""

from __future__ import annotations

import os
import random

import pytest

from ireval_core.errors import FormatError
from ireval_core.io.checks import MAX_PROBLEMS, iter_lines
from ireval_core.io.source import Source
from ireval_core.io.trec import _diagnose_lines, diagnose_trec

CASES = int(os.environ.get("IREVAL_DIAGNOSIS_CASES", "150"))
"""Random files per kind in the suite; set higher for a longer search."""

_IDS = ["q1", "q2", "10", "天气", "é", "#c", "d1", "d2", "CR93E-3103#37", "NA"]
_VALUES = ["1", "0", "-1", "2.5", "1.", ".5", "+.5", "-0", "1e3", "1E-05", "007", "1e999",
           "-1e400", "nan", "NaN", "inf", "-Infinity", "x", "1_0", "1.2.3", "e5", "0x10",
           "9" * 400, "1." + "0" * 300, "1.7976931348623157e308", "1.7976931348623159e308"]
_TAGS = ["t", "bm25", "", "NA", "N/A", "null", "None", "nan", "run 2"]
_ODD = ["\x01", "\x7f", "\x85", "\u2028", "\u2029", "\x0b", "\x0c", "\x1f", "\ufeff", "\u00a0"]
_ENDS = ["\n", "\n", "\n", "\r\n", "\r"]
_SEPS = [" ", " ", " ", "\t", "  ", " \t ", "\t\t"]


def _field(rng: random.Random, pool: list[str], odd: float) -> str:
    value = rng.choice(pool)
    if rng.random() < odd:
        at = rng.randint(0, len(value))
        value = value[:at] + rng.choice(_ODD) + value[at:]
    if rng.random() < 0.01:
        value = value * 500  # a long line
    return value


def _line(rng: random.Random, kind: str, odd: float) -> str:
    if rng.random() < 0.05:
        return rng.choice(["", " ", "\t", " \t "])  # blank
    qid = _field(rng, _IDS[:4], odd)
    doc = _field(rng, _IDS[3:], odd)
    value = rng.choice(_VALUES) if rng.random() < 0.3 else str(rng.randint(0, 3))
    if kind == "qrels":
        fields = [qid, rng.choice(["0", "0", "A", "B"]), doc, value]
    else:
        fields = [qid, "Q0", doc, str(rng.randint(1, 5)), value, _field(rng, _TAGS, odd)]
        fields = [f for f in fields if f != ""] if rng.random() < 0.5 else fields
    roll = rng.random()
    if roll < 0.05:
        fields = fields[: rng.randint(1, len(fields) - 1)]
    elif roll < 0.12:
        fields += rng.choice([["x"], ["a", "b"], ["#"]])
    if rng.random() < 0.03:
        fields[0] = "#" + fields[0]
    text = "".join(f + rng.choice(_SEPS) for f in fields[:-1]) + fields[-1]
    if rng.random() < 0.1:
        text = rng.choice(_SEPS) + text
    if rng.random() < 0.1:
        text += rng.choice(_SEPS)
    return text


def _file(rng: random.Random, kind: str) -> bytes:
    odd = rng.choice([0.0, 0.01, 0.05])
    n = rng.choice([0, 1, 5, 40, 200, MAX_PROBLEMS + 1])
    lines = [_line(rng, kind, odd) for _ in range(n)]
    ends = [rng.choice(_ENDS) for _ in lines]
    if lines and rng.random() < 0.5:
        ends[-1] = ""  # no line end at the end of the file
    data = "".join(a + b for a, b in zip(lines, ends, strict=True)).encode()
    if data and rng.random() < 0.05:  # a byte that is not UTF-8
        at = rng.randint(0, len(data))
        data = data[:at] + rng.choice([b"\xff", b"\xc3", b"\xe2\x80"]) + data[at:]
    return data


def _outcome(run) -> tuple:
    """What a diagnosis gives: each problem, the count, the extra lines; or the error."""
    try:
        error, extra = run()
    except FormatError as exc:
        return (type(exc).__name__, str(exc), exc.line, exc.text)
    if error is None:
        return (None, extra)
    return ([(p.line, p.message, p.text) for p in error.problems], error.report(), extra)


@pytest.mark.parametrize("kind", ["qrels", "run"])
def test_the_diagnosis_is_that_of_checking_every_line(kind: str) -> None:
    rng = random.Random(f"diagnosis-{kind}")
    found = 0
    for case in range(CASES):
        data = _file(rng, kind)
        src = Source("f.txt", data)
        expected = _outcome(lambda: _diagnose_lines(src, kind, iter_lines(src.data)))  # noqa: B023
        assert _outcome(lambda: diagnose_trec(src, kind)) == expected, (case, data)  # noqa: B023
        found += expected[0] is not None
    assert found > CASES // 2  # the files were malformed, mostly


@pytest.mark.parametrize("bad", [MAX_PROBLEMS - 1, MAX_PROBLEMS, MAX_PROBLEMS + 1, 250])
def test_the_count_past_the_problems_shown_is_that_of_every_line(bad: int) -> None:
    """Bad lines and duplicates around the edge of the problems shown, among good lines."""
    rng = random.Random(bad)
    lines = [f"q{i % 7} Q0 d{i} 1 {i} t" for i in range(2000)]
    for at in rng.sample(range(2, 2000, 2), bad):  # each after a good line
        lines[at] = rng.choice([f"q{(at - 1) % 7} Q0 d{at - 1} 1 1 t", "q1 Q0 d 1",
                                "q1 Q0 dx 1 x t"])
    for at in rng.sample(range(1, 2000, 2), 50):  # extra columns: counted, no problem
        lines[at] += "\textra column"
    src = Source("r.txt", "\r\n".join(lines).encode())
    expected = _outcome(lambda: _diagnose_lines(src, "run", iter_lines(src.data)))
    assert _outcome(lambda: diagnose_trec(src, "run")) == expected
    assert expected[0] is not None and len(expected[0]) == min(bad, MAX_PROBLEMS)
