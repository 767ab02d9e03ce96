"""Parameter constraints as data (:mod:`ireval_core.params`): words, checks, errors, text."""

from __future__ import annotations

import math
from numbers import Integral, Real

import numpy as np
import pytest

from ireval_core.params import (
    Boolean,
    InstanceOf,
    Interval,
    NoneOK,
    Options,
    any_of,
    check,
    parse,
    validate_params,
)

INT_GE_1 = Interval(Integral, 1, None, closed="left")
UNIT = Interval(Real, 0, 1, closed="neither")


@pytest.mark.parametrize(("constraint", "words"), [
    (INT_GE_1, "an int >= 1"),
    (Interval(Integral, 2, None, closed="both"), "an int >= 2"),
    (Interval(Integral, 0, None, closed="neither"), "an int > 0"),
    (Interval(Integral, None, 5, closed="both"), "an int <= 5"),
    (Interval(Integral, 0, 9, closed="both"), "an int from 0 to 9"),
    (Interval(Integral, 0, 9, closed="left"), "an int in [0, 9)"),
    (UNIT, "a number strictly between 0 and 1"),
    (Interval(Real, 0, 1, closed="right"), "a number in (0, 1]"),
    (Interval(Real, 0, 1, closed="left"), "a number in [0, 1)"),
    (Interval(Real, 0, 1, closed="both"), "a number from 0 to 1"),
    (Interval(Real, 0, None, closed="both"), "a number >= 0"),
    (Interval(Real, 0, None, closed="left"), "a finite number >= 0"),
    (Interval(Real, 0, None, closed="neither"), "a finite number > 0"),
    (Interval(Real, 0.5, None, closed="neither"), "a finite number > 0.5"),
    (Interval(Real, None, None, closed="neither"), "a finite number"),
    (Interval(Real, None, None, closed="both"), "a number"),
    (Options({"holm", "bh"}), "one of 'bh', 'holm'"),
    (Options(("two-sided", "greater", "less")), "one of 'two-sided', 'greater', 'less'"),
    (Boolean(), "a bool"),
    (NoneOK(), "None"),
    (InstanceOf(dict), "a dict"),
    (InstanceOf(int), "an int"),
    (InstanceOf(dict, "an EvalOptions"), "an EvalOptions"),
    (any_of(INT_GE_1, None), "an int >= 1 or None"),
    (any_of(None, Options(("a", "b")), Boolean()), "None, one of 'a', 'b' or a bool"),
    (any_of(None, Options(("segment",))), "None or 'segment'"),
])
def test_words(constraint: object, words: str) -> None:
    assert str(constraint) == words


@pytest.mark.parametrize(("constraint", "good", "bad"), [
    (INT_GE_1, [1, 7, np.int64(3), 2**70], [0, -1, 2.0, 1.5, True, "3", None, [1]]),
    (UNIT, [0.5, np.float32(0.25), 1e-300, np.int64(0) + 0.1],
     [0, 1, 0.0, 1.0, math.nan, math.inf, -math.inf, "0.5", True, None]),
    (Interval(Real, 0, None, closed="left"), [0, 0.0, 3, 1e308], [math.inf, -1e-9, math.nan]),
    (Interval(Real, 0, None, closed="both"), [0, math.inf], [math.nan, -math.inf]),
    (Interval(Real, None, None, closed="neither"), [-1e308, 0, 2],
     [math.nan, math.inf, -math.inf]),
    (Options({"holm", "bh"}), ["holm", "bh"], ["Holm", "", None, ["bh"], np.array(["bh"])]),
    (Boolean(), [True, False, np.bool_(True)], [1, 0, "yes", None]),
    (any_of(INT_GE_1, None), [None, 1], [0, "x"]),
])
def test_is_satisfied_by(constraint, good: list, bad: list) -> None:
    for value in good:
        assert constraint.is_satisfied_by(value), value
    for value in bad:
        assert not constraint.is_satisfied_by(value), value


@pytest.mark.parametrize(("value", "constraint", "error", "message"), [
    (0, INT_GE_1, ValueError, "The 'p' parameter of f must be an int >= 1. Got 0 instead."),
    (2.5, INT_GE_1, ValueError, "The 'p' parameter of f must be an int >= 1. Got 2.5 instead."),
    (True, INT_GE_1, ValueError, "The 'p' parameter of f must be an int >= 1. Got True instead."),
    (None, INT_GE_1, TypeError, "The 'p' parameter of f must be an int >= 1. Got None instead."),
    ("high", UNIT, ValueError,
     "The 'p' parameter of f must be a number strictly between 0 and 1. Got 'high' instead."),
    (None, UNIT, TypeError,
     "The 'p' parameter of f must be a number strictly between 0 and 1. Got None instead."),
    ([0.5], UNIT, TypeError,
     "The 'p' parameter of f must be a number strictly between 0 and 1. Got [0.5] instead."),
    (math.nan, UNIT, ValueError,
     "The 'p' parameter of f must be a number strictly between 0 and 1. Got nan instead."),
    ("fdr", Options({"holm", "bh"}), ValueError,
     "The 'p' parameter of f must be one of 'bh', 'holm'. Got 'fdr' instead."),
    (3, Options({"holm", "bh"}), ValueError,
     "The 'p' parameter of f must be one of 'bh', 'holm'. Got 3 instead."),
    (1, Boolean(), TypeError, "The 'p' parameter of f must be a bool. Got 1 instead."),
    ({}, InstanceOf(tuple, "an EvalOptions"), TypeError,
     "The 'p' parameter of f must be an EvalOptions. Got {} instead."),
    (0, (INT_GE_1, None), ValueError,
     "The 'p' parameter of f must be an int >= 1 or None. Got 0 instead."),
    ([], (INT_GE_1, None), TypeError,
     "The 'p' parameter of f must be an int >= 1 or None. Got [] instead."),
])
def test_check_raises_the_right_class_and_message(value, constraint, error, message) -> None:
    with pytest.raises(error) as info:
        check(value, "p", "f", constraint)
    assert type(info.value) is error
    assert str(info.value) == message


def test_check_error_override_and_normalised_values() -> None:
    with pytest.raises(ValueError) as info:
        check("yes", "complete", "EvalOptions", Boolean(), error=ValueError)
    assert type(info.value) is ValueError
    assert str(info.value) == ("The 'complete' parameter of EvalOptions must be a bool. "
                               "Got 'yes' instead.")
    assert type(check(np.int64(4), "k", "f", INT_GE_1)) is int
    assert type(check(np.float32(0.5), "a", "f", UNIT)) is float
    assert type(check(np.bool_(True), "b", "f", Boolean())) is bool
    assert check(None, "top", "f", (INT_GE_1, None)) is None
    assert check("bh", "m", "f", Options({"bh"})) == "bh"


def test_validate_params_binds_positional_keyword_and_defaults() -> None:
    calls = []

    @validate_params({"k": INT_GE_1, "alpha": UNIT, "method": Options(("a", "b"))})
    def f(data, k=10, *, alpha=0.05, method="a"):
        calls.append((data, k, alpha, method))
        return k

    assert f([1], np.int64(3)) == 3 and type(calls[-1][1]) is int
    assert f(data=[1], k=2, alpha=1 / 4, method="b") == 2
    assert f([1]) == 10  # defaults are not checked again
    with pytest.raises(ValueError, match=r"^The 'k' parameter of test_validate_params_binds_"
                                         r"positional_keyword_and_defaults\.<locals>\.f must "
                                         r"be an int >= 1\. Got 0 instead\.$"):
        f([1], 0)
    with pytest.raises(TypeError, match="'alpha' parameter of .*f must be a number strictly"):
        f([1], alpha=None)
    with pytest.raises(TypeError):  # the call's own argument errors are unchanged
        f()
    assert f.__name__ == "f" and "alpha" in str(__import__("inspect").signature(f))


def test_validate_params_names_the_function_and_refuses_unknown_parameters() -> None:
    @validate_params({"k": INT_GE_1}, function="ndcg")
    def g(k):
        return k

    with pytest.raises(ValueError, match=r"^The 'k' parameter of ndcg must be an int >= 1\."):
        g(-1)
    with pytest.raises(TypeError, match="has no parameter kk"):
        validate_params({"kk": INT_GE_1})(g)


def test_interval_refuses_an_empty_or_odd_definition() -> None:
    with pytest.raises(ValueError, match="empty interval"):
        Interval(Real, 1, 0)
    with pytest.raises(ValueError, match="closed must be"):
        Interval(Real, 0, 1, closed="open")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="numbers.Integral or numbers.Real"):
        Interval(float, 0, 1)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="at least one value"):
        Options(())


# ------------------------------------------------------------------- values as text


@pytest.mark.parametrize(("text", "constraint", "value"), [
    ("10", INT_GE_1, 10),
    (" 10\n", INT_GE_1, 10),
    ("+3", INT_GE_1, 3),
    ("9223372036854775807", INT_GE_1, 2**63 - 1),
    ("0.05", UNIT, 0.05),
    (".5", UNIT, 0.5),
    ("5e-2", UNIT, 0.05),
    ("1", Interval(Real, 0, 1, closed="right"), 1.0),
    ("1e300", Interval(Real, 0, None, closed="left"), 1e300),
    ("bh", Options({"holm", "bh"}), "bh"),
    ("true", Boolean(), True),
    ("OFF", Boolean(), False),
    ("0", Boolean(), False),
    ("", (INT_GE_1, None), None),
    ("none", (INT_GE_1, None), None),
    ("7", (INT_GE_1, None), 7),
])
def test_parse_reads_good_text(text: str, constraint, value) -> None:
    got, problem = parse(text, constraint)
    assert problem is None
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("text", "constraint", "problem"), [
    ("0", INT_GE_1, "'0' is not an int >= 1"),
    ("-5", INT_GE_1, "'-5' is not an int >= 1"),
    ("2.5", INT_GE_1, "'2.5' is not an int >= 1"),
    ("1e3", INT_GE_1, "'1e3' is not an int >= 1"),
    ("0x10", INT_GE_1, "'0x10' is not an int >= 1"),
    ("1_000", INT_GE_1, "'1_000' is not an int >= 1"),
    ("", INT_GE_1, "'' is not an int >= 1"),
    ("٣", INT_GE_1, "'٣' is not an int >= 1"),  # a non-ASCII digit int() would take
    ("99999999999999999999", INT_GE_1,
     "'99999999999999999999' is too large: expected an int >= 1"),
    ("9223372036854775808", INT_GE_1,
     "'9223372036854775808' is too large: expected an int >= 1"),
    ("-99999999999999999999", Interval(Integral, None, None), "'-99999999999999999999' is "
                                                              "too large: expected an int"),
    ("nan", UNIT, "'nan' is not a number strictly between 0 and 1"),
    ("NaN", Interval(Real, None, None, closed="both"), "'NaN' is not a number"),
    ("inf", Interval(Real, 0, None, closed="both"), "'inf' is not a number >= 0"),
    ("-Infinity", Interval(Real, None, None, closed="both"), "'-Infinity' is not a number"),
    ("1e400", Interval(Real, 0, None, closed="both"), "'1e400' is too large: expected a "
                                                      "number >= 0"),
    ("1e400", UNIT, "'1e400' is too large: expected a number strictly between 0 and 1"),
    ("1", UNIT, "'1' is not a number strictly between 0 and 1"),
    ("0.5.1", UNIT, "'0.5.1' is not a number strictly between 0 and 1"),
    ("1,5", UNIT, "'1,5' is not a number strictly between 0 and 1"),
    ("fdr", Options({"holm", "bh"}), "'fdr' is not one of 'bh', 'holm'"),
    ("maybe", Boolean(), "'maybe' is not a bool (true or false)"),
    ("x", (INT_GE_1, None), "'x' is not an int >= 1 or None"),
    ("99999999999999999999", (INT_GE_1, None),
     "'99999999999999999999' is too large: expected an int >= 1 or None"),
    ("d", InstanceOf(dict), "cannot be given as text: expected a dict"),
])
def test_parse_explains_bad_text(text: str, constraint, problem: str) -> None:
    assert parse(text, constraint) == (None, problem)


@pytest.mark.parametrize("text", [
    "1" * 5000,                 # longer than int() accepts by default
    "9" * 65,
    "1e" + "9" * 40,
    "\x00",
    "\ud800",                   # an unpaired surrogate
    "1\n2",
    " " * 1000 + "1",
    "'; DROP TABLE x; --",
    "<script>alert(1)</script>",
])
@pytest.mark.parametrize("constraint", [INT_GE_1, UNIT, Options({"a"}), Boolean(),
                                        (INT_GE_1, None), InstanceOf(dict)])
def test_parse_never_raises_on_hostile_text(text: str, constraint) -> None:
    value, problem = parse(text, constraint)
    if problem is None:  # only a plain "1" after stripping can be read
        assert text.strip() == "1"
    else:
        assert value is None and isinstance(problem, str) and len(problem) < 200


def test_parse_refuses_what_is_not_text() -> None:
    assert parse(5, INT_GE_1) == (None, "expected text, got int")  # type: ignore[arg-type]


def test_options_take_subclasses_of_their_values() -> None:
    assert Options({"holm", "bh"}).is_satisfied_by(np.str_("bh"))
