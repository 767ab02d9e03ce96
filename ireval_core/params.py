"""Parameter constraints declared once, as data, and checked by one function.

A constraint is a small immutable object that knows whether a value satisfies it
(:meth:`Constraint.is_satisfied_by`) and how to say what it asks for (``str()``, the
text that completes "must be ..." in the message of
:func:`ireval_core.errors.invalid_parameter`)::

    >>> str(Interval(Integral, 1, None, closed="left"))
    'an int >= 1'
    >>> str(Interval(Real, 0, 1, closed="neither"))
    'a number strictly between 0 and 1'
    >>> str(Options({"holm", "bh"}))
    "one of 'bh', 'holm'"
    >>> str(any_of(Interval(Integral, 1, None, closed="left"), None))
    'an int >= 1 or None'

Three ways to use them, all with the same messages:

* :func:`check` for one value inside a function body (returns the value, normalised:
  ``int`` for an int constraint, ``float`` for a number constraint);
* :func:`validate_params` as a decorator declaring the constraints of a function's
  parameters next to its signature;
* :func:`parse` for a value that arrives as text (a URL query parameter, a form field):
  it never raises and returns a readable problem instead.

Which exception
---------------
:func:`check` raises ``ValueError`` when the value is of a kind the parameter takes
but outside the constraint (``k=0`` for an int >= 1, ``"bigger"`` for one of a few
names), and ``TypeError`` when it is of a kind the parameter never takes (``None`` or
a list where a number is expected, a dict where an ``EvalOptions`` is). For numeric
constraints, any number (``2.5`` for an int, ``True``) and any text count as "of the
kind", as for ``int()`` and ``float()``: ``float("high")`` raises ``ValueError``,
``float(None)`` ``TypeError``. A caller whose API has always raised one class for
every bad value passes ``error=`` (``EvalOptions`` raises ``ValueError``).
"""

from __future__ import annotations

import functools
import inspect
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Literal, TypeVar, cast

import numpy as np

from .errors import invalid_parameter, shorten

__all__ = [
    "FINITE",
    "OPEN_UNIT",
    "POSITIVE",
    "POSITIVE_INT",
    "SEED",
    "Boolean",
    "Constraint",
    "InstanceOf",
    "Interval",
    "NoneOK",
    "Options",
    "any_of",
    "check",
    "parse",
    "validate_params",
]

_F = TypeVar("_F", bound=Callable[..., Any])

Closed = Literal["both", "left", "right", "neither"]

# text longer than this is not read as a value at all (a URL parameter can be huge)
_MAX_TEXT = 64
# an int read from text must fit in 64 bits: beyond, it is a typo or an attack
_MAX_INT = 2**63 - 1
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_REAL_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_SETS = (set, frozenset)  # Options given as a set are shown sorted
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


class Constraint:
    """What a parameter must be: a predicate with its words.

    Subclasses define :meth:`is_satisfied_by` and ``__str__``; :meth:`wrong_type`
    (``TypeError`` rather than ``ValueError``) and :meth:`convert` (the value the
    function works with) have defaults.
    """

    def is_satisfied_by(self, value: object) -> bool:
        """Whether ``value`` satisfies the constraint."""
        raise NotImplementedError

    def wrong_type(self, value: object) -> bool:
        """Whether an unsatisfying ``value`` is of a kind the parameter never takes
        (``TypeError``) rather than out of range (``ValueError``)."""
        return False

    def convert(self, value: Any) -> Any:
        """The value a function works with, for a ``value`` that satisfies the constraint."""
        return value

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        """``(value, None)`` for ``text`` read as a value, else ``(None, problem)``.

        The text is stripped and at most a few dozen characters long (see :func:`parse`).
        """
        return None, f"cannot be given as text: expected {self}"


def _is_number(value: object) -> bool:
    return isinstance(value, Real)


@dataclass(frozen=True)
class Interval(Constraint):
    """An int or a real number between two bounds (``None``: unbounded).

    Parameters
    ----------
    type:
        :class:`numbers.Integral` (an int, not a bool: converted with ``int``) or
        :class:`numbers.Real` (a number, not a bool or NaN: converted with ``float``).
    low, high:
        The bounds; ``None`` for no bound on that side.
    closed:
        Which bounds belong to the interval. An unbounded side of a real interval is
        infinite: infinity is allowed only when that side is closed, so
        ``Interval(Real, 0, None, closed="left")`` is a *finite* number >= 0.

    Examples
    --------
    >>> str(Interval(Real, 0, None, closed="left"))
    'a finite number >= 0'
    >>> str(Interval(Real, 0, None, closed="both"))
    'a number >= 0'
    >>> str(Interval(Real, None, None, closed="neither"))
    'a finite number'
    >>> str(Interval(Real, 0, 1, closed="right"))
    'a number in (0, 1]'
    >>> str(Interval(Integral, 0, 9, closed="both"))
    'an int from 0 to 9'
    >>> Interval(Integral, 1, None, closed="left").is_satisfied_by(2.0)
    False
    >>> Interval(Real, 0, None, closed="left").is_satisfied_by(float("inf"))
    False
    """

    type: type[Integral] | type[Real]
    low: float | None
    high: float | None
    closed: Closed = "both"

    def __post_init__(self) -> None:
        if self.type not in (Integral, Real):
            raise TypeError(f"Interval type must be numbers.Integral or numbers.Real, "
                            f"not {self.type!r}")
        if self.closed not in ("both", "left", "right", "neither"):
            raise ValueError(f"closed must be 'both', 'left', 'right' or 'neither', "
                             f"not {self.closed!r}")
        if self.low is not None and self.high is not None and self.low > self.high:
            raise ValueError(f"empty interval: low {self.low} > high {self.high}")

    @property
    def _low_closed(self) -> bool:
        return self.closed in ("both", "left")

    @property
    def _high_closed(self) -> bool:
        return self.closed in ("both", "right")

    def _of_type(self, value: object) -> bool:
        if isinstance(value, bool) or not isinstance(value, self.type):
            return False
        return True

    def _in_range(self, x: float) -> bool:
        if x != x:  # NaN
            return False
        if self.low is None:
            if x == -math.inf and not self._low_closed:
                return False
        elif x < self.low or (x == self.low and not self._low_closed):
            return False
        if self.high is None:
            if x == math.inf and not self._high_closed:
                return False
        elif x > self.high or (x == self.high and not self._high_closed):
            return False
        return True

    def is_satisfied_by(self, value: object) -> bool:
        if not self._of_type(value):
            return False
        try:
            return self._in_range(value)  # type: ignore[arg-type]
        except TypeError:  # a Real subclass that does not compare with floats
            return False

    def wrong_type(self, value: object) -> bool:
        return not (_is_number(value) or isinstance(value, str))

    def convert(self, value: Any) -> Any:
        return int(value) if self.type is Integral else float(value)

    def __str__(self) -> str:
        integral = self.type is Integral
        noun = "an int" if integral else "a number"
        low, high = self.low, self.high
        if low is not None and high is not None:
            if not integral and self.closed == "neither":
                return f"{noun} strictly between {_num(low)} and {_num(high)}"
            if self.closed == "both":
                return f"{noun} from {_num(low)} to {_num(high)}"
            left = "[" if self._low_closed else "("
            right = "]" if self._high_closed else ")"
            return f"{noun} in {left}{_num(low)}, {_num(high)}{right}"
        # an open infinite side excludes infinity: say "finite" (ints always are)
        finite = not integral and (
            (low is None and not self._low_closed) or (high is None and not self._high_closed))
        if finite:
            noun = "a finite number"
        if low is not None:
            return f"{noun} {'>=' if self._low_closed else '>'} {_num(low)}"
        if high is not None:
            return f"{noun} {'<=' if self._high_closed else '<'} {_num(high)}"
        return noun

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        integral = self.type is Integral
        if not (_INT_TEXT if integral else _REAL_TEXT).fullmatch(text):
            return None, f"{_shown(text)} is not {self}"
        value: float = int(text) if integral else float(text)
        if (abs(value) > _MAX_INT) if integral else not math.isfinite(value):
            return None, f"{_shown(text)} is too large: expected {self}"
        if not self._in_range(value):
            return None, f"{_shown(text)} is not {self}"
        return value, None


def _num(x: float) -> str:
    """A bound as people write it: ``1`` for 1.0."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(x)


def _shown(text: str) -> str:
    return repr(shorten(text, 40))


class Options(Constraint):
    """One of a few values, compared with ``==``.

    The values are shown in the order given, or sorted when given as a set.
    A value that is not one of them raises ``ValueError``, whatever its type.

    Examples
    --------
    >>> str(Options(("two-sided", "greater", "less")))
    "one of 'two-sided', 'greater', 'less'"
    >>> Options({"holm", "bh"}).is_satisfied_by("bh"), Options({"a"}).is_satisfied_by(["a"])
    (True, False)
    >>> str(any_of(None, Options(("segment",))))
    "None or 'segment'"
    """

    __slots__ = ("values",)

    def __init__(self, values: Iterable[Any]) -> None:
        items = sorted(values, key=repr) if isinstance(values, _SETS) else list(values)
        if not items:
            raise ValueError("Options needs at least one value")
        self.values: tuple[Any, ...] = tuple(items)

    def is_satisfied_by(self, value: object) -> bool:
        # == only between values of the option's type (a numpy array never reaches it);
        # a subclass counts, so numpy.str_ 'bh' is 'bh'
        return any(isinstance(value, type(v)) and v == value for v in self.values)

    def __str__(self) -> str:
        if len(self.values) == 1:
            return repr(self.values[0])
        return "one of " + ", ".join(map(repr, self.values))

    def __repr__(self) -> str:
        return f"Options({self.values!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Options) and other.values == self.values

    def __hash__(self) -> int:
        return hash(self.values)

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        for v in self.values:
            if str(v) == text:
                return v, None
        return None, f"{_shown(text)} is not {self}"


@dataclass(frozen=True)
class Boolean(Constraint):
    """``True`` or ``False`` (a Python or numpy bool; not ``1`` or ``"yes"``).

    >>> str(Boolean()), Boolean().is_satisfied_by(1)
    ('a bool', False)
    """

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, bool | np.bool_)

    def wrong_type(self, value: object) -> bool:
        return True

    def convert(self, value: Any) -> Any:
        return bool(value)

    def __str__(self) -> str:
        return "a bool"

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        low = text.lower()
        if low in _TRUE:
            return True, None
        if low in _FALSE:
            return False, None
        return None, f"{_shown(text)} is not a bool (true or false)"


@dataclass(frozen=True)
class NoneOK(Constraint):
    """``None`` itself; usually one member of :func:`any_of` (where ``None`` stands for it).

    >>> str(NoneOK()), NoneOK().is_satisfied_by(None)
    ('None', True)
    """

    def is_satisfied_by(self, value: object) -> bool:
        return value is None

    def wrong_type(self, value: object) -> bool:
        return True

    def __str__(self) -> str:
        return "None"

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        if text == "" or text.lower() == "none":
            return None, None
        return None, f"{_shown(text)} is not None"


@dataclass(frozen=True)
class InstanceOf(Constraint):
    """An instance of a class; ``what`` is how the message names it.

    >>> str(InstanceOf(dict, "a dict of options"))
    'a dict of options'
    >>> str(InstanceOf(dict))
    'a dict'
    """

    cls: type | tuple[type, ...]
    what: str | None = None

    def is_satisfied_by(self, value: object) -> bool:
        return isinstance(value, self.cls)

    def wrong_type(self, value: object) -> bool:
        return True

    def __str__(self) -> str:
        if self.what is not None:
            return self.what
        classes = self.cls if isinstance(self.cls, tuple) else (self.cls,)
        names = [c.__name__ for c in classes]
        return " or ".join(("an " if n[:1].lower() in "aeiou" else "a ") + n for n in names)


@dataclass(frozen=True)
class AnyOf(Constraint):
    """Satisfied when one of its members is; made by :func:`any_of`."""

    members: tuple[Constraint, ...]

    def is_satisfied_by(self, value: object) -> bool:
        return any(c.is_satisfied_by(value) for c in self.members)

    def wrong_type(self, value: object) -> bool:
        return all(c.wrong_type(value) for c in self.members)

    def convert(self, value: Any) -> Any:
        for c in self.members:
            if c.is_satisfied_by(value):
                return c.convert(value)
        return value

    def __str__(self) -> str:
        words = [str(c) for c in self.members]
        return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]

    def parse_text(self, text: str) -> tuple[Any, str | None]:
        for c in self.members:
            value, problem = c.parse_text(text)
            if problem is None:
                return value, None
            if "too large" in problem:
                return None, f"{_shown(text)} is too large: expected {self}"
        return None, f"{_shown(text)} is not {self}"


ConstraintLike = Constraint | None | tuple["ConstraintLike", ...] | list["ConstraintLike"]


def _as_constraint(spec: ConstraintLike) -> Constraint:
    if spec is None:
        return NoneOK()
    if isinstance(spec, Constraint):
        return spec
    if isinstance(spec, tuple | list):
        return any_of(*spec)
    raise TypeError(f"not a constraint: {spec!r}")


def any_of(*constraints: ConstraintLike) -> Constraint:
    """A constraint satisfied by a value that satisfies one of ``constraints``.

    ``None`` stands for :class:`NoneOK`; the words list the members in order.

    >>> str(any_of(None, InstanceOf(dict, "a dict")))
    'None or a dict'
    """
    members = tuple(_as_constraint(c) for c in constraints)
    return members[0] if len(members) == 1 else AnyOf(members)


def check(value: Any, name: str, function: str, constraint: ConstraintLike, *,
          error: type[Exception] | None = None) -> Any:
    """Return ``value`` (normalised) when it satisfies ``constraint``, else raise.

    Parameters
    ----------
    value:
        The argument received.
    name, function:
        The parameter and the public function (or ``Class.method``) the caller called,
        as the message names them.
    constraint:
        A :class:`Constraint`, ``None`` (the value must be ``None``), or a tuple/list
        of them (any of them, see :func:`any_of`).
    error:
        The exception class to raise; default ``TypeError`` for a value of a kind the
        parameter never takes, ``ValueError`` otherwise (see the module docstring).

    Returns
    -------
    The value as the function should use it: ``int(value)`` for an int constraint,
    ``float(value)`` for a number constraint, ``bool(value)`` for a bool, else ``value``.

    Examples
    --------
    >>> check(5, "k", "ndcg", Interval(Integral, 1, None, closed="left"))
    5
    >>> check(0, "k", "ndcg", Interval(Integral, 1, None, closed="left"))
    Traceback (most recent call last):
    ...
    ValueError: The 'k' parameter of ndcg must be an int >= 1. Got 0 instead.
    >>> check(None, "alpha", "f", Interval(Real, 0, 1, closed="both"))
    Traceback (most recent call last):
    ...
    TypeError: The 'alpha' parameter of f must be a number from 0 to 1. Got None instead.
    >>> check("fdr", "method", "f", Options({"holm", "bh"}))
    Traceback (most recent call last):
    ...
    ValueError: The 'method' parameter of f must be one of 'bh', 'holm'. Got 'fdr' instead.
    >>> check(None, "top", "ranking", (Interval(Integral, 1, None, closed="left"), None))
    """
    c = constraint if isinstance(constraint, Constraint) else _as_constraint(constraint)
    if c.is_satisfied_by(value):
        return c.convert(value)
    if error is None:
        error = TypeError if c.wrong_type(value) else ValueError
    raise invalid_parameter(name, function, str(c), value, error=error)


def validate_params(constraints: Mapping[str, ConstraintLike], *,
                    function: str | None = None) -> Callable[[_F], _F]:
    """Decorator: check the named parameters of every call with :func:`check`.

    Only the arguments the caller passed are checked (defaults are trusted), and the
    function receives them normalised (``int``, ``float``, ``bool``).

    Parameters
    ----------
    constraints:
        Parameter name -> constraint (as for :func:`check`). Every name must be a
        parameter of the decorated function.
    function:
        The name messages use; default: the function's ``__qualname__``.

    Examples
    --------
    >>> @validate_params({"k": Interval(Integral, 1, None, closed="left"),
    ...                   "gain": Options(("linear", "exp"))})
    ... def ndcg(grades, k=10, *, gain="exp"):
    ...     return k, gain
    >>> ndcg([1, 0], 3.0)
    Traceback (most recent call last):
    ...
    ValueError: The 'k' parameter of ndcg must be an int >= 1. Got 3.0 instead.
    >>> ndcg([1, 0], gain="cubic")
    Traceback (most recent call last):
    ...
    ValueError: The 'gain' parameter of ndcg must be one of 'linear', 'exp'. Got 'cubic' instead.
    >>> ndcg([1, 0], 3)
    (3, 'exp')
    """
    checks = {name: _as_constraint(spec) for name, spec in constraints.items()}

    def decorate(func: _F) -> _F:
        signature = inspect.signature(func)
        unknown = set(checks) - set(signature.parameters)
        if unknown:
            raise TypeError(f"validate_params: {func.__qualname__} has no parameter "
                            f"{', '.join(sorted(unknown))}")
        shown = function or func.__qualname__

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            bound = signature.bind(*args, **kwargs)
            arguments = bound.arguments
            for name, c in checks.items():
                if name in arguments:
                    arguments[name] = check(arguments[name], name, shown, c)
            return func(*bound.args, **bound.kwargs)

        wrapper.__signature__ = signature  # type: ignore[attr-defined]
        return cast(_F, wrapper)

    return decorate


def parse(text: str, constraint: ConstraintLike) -> tuple[Any, str | None]:
    """Read a value that arrives as text; never raises.

    Returns ``(value, None)`` when ``text`` is a value satisfying ``constraint``, else
    ``(None, problem)`` with a sentence to show the user. Numbers are written in
    decimal (``"12"``, ``"0.05"``, ``"1e-3"``); ``nan``, ``inf``, numbers that overflow
    a float (``"1e400"``) and ints beyond 64 bits are refused even where the
    constraint has no upper bound. Text longer than 64 characters is refused
    unread. ``None`` in the constraint accepts ``""`` and ``"none"``; a bool
    accepts ``true/false``, ``1/0``, ``yes/no``, ``on/off``.

    Examples
    --------
    >>> k = Interval(Integral, 1, None, closed="left")
    >>> parse(" 10 ", k)
    (10, None)
    >>> parse("0", k)
    (None, "'0' is not an int >= 1")
    >>> parse("99999999999999999999", k)
    (None, "'99999999999999999999' is too large: expected an int >= 1")
    >>> parse("nan", Interval(Real, 0, 1, closed="neither"))
    (None, "'nan' is not a number strictly between 0 and 1")
    >>> parse("1e400", Interval(Real, 0, None, closed="both"))
    (None, "'1e400' is too large: expected a number >= 0")
    >>> parse("bh", Options({"holm", "bh"}))
    ('bh', None)
    >>> parse("", (k, None))
    (None, None)
    """
    try:
        c = _as_constraint(constraint)
    except TypeError as exc:
        return None, str(exc)
    if not isinstance(text, str):
        return None, f"expected text, got {type(text).__name__}"
    stripped = text.strip()
    if len(stripped) > _MAX_TEXT:
        return None, f"{_shown(stripped)} is too long ({len(stripped)} characters): " \
                     f"expected {c}"
    try:
        value, problem = c.parse_text(stripped)
    except (ValueError, TypeError, OverflowError) as exc:  # never raise, whatever the text
        return None, f"{_shown(stripped)} could not be read ({exc}): expected {c}"
    if problem is not None:
        return None, problem
    return value, None


# ------------------------------------------------------------------ common constraints
# The ones many functions share, so that they read the same everywhere.

POSITIVE_INT = Interval(Integral, 1, None, closed="left")
"""An int >= 1: a cutoff ``k``, a depth, a number of resamples."""
SEED = Interval(Integral, 0, None, closed="left")
"""An int >= 0: a random seed."""
OPEN_UNIT = Interval(Real, 0, 1, closed="neither")
"""A number strictly between 0 and 1: a confidence level, ``alpha``, a power."""
POSITIVE = Interval(Real, 0, None, closed="neither")
"""A finite number > 0: a difference to detect, a standard deviation."""
FINITE = Interval(Real, None, None, closed="neither")
"""A finite number: a relevance level."""
