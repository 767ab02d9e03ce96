"""Errors and warnings raised while reading and validating evaluation data.

Hard problems (the file cannot be understood) raise :class:`FormatError`, which
always says *where* (file name and 1-based line number when there is one) and
*what* was expected, in one line::

    run.txt:12: expected 6 columns (qid Q0 docid rank score tag), got 5: 'q1 Q0 d7 3 0.5'

Soft problems (the data is usable but probably not what the user meant) are
collected as :class:`DataWarning` objects on the data set instead of being
raised, so that an app can show all of them at once.

Invalid *parameters* of a function (as opposed to invalid data) raise ``ValueError``
(``TypeError`` for a value of the wrong type) with one message template, the one
scikit-learn uses, built by :func:`invalid_parameter`::

    The 'k' parameter of ndcg must be an int >= 1. Got 0 instead.
"""

from __future__ import annotations

import re
import reprlib
from dataclasses import dataclass
from typing import TypeVar, overload

__all__ = ["DataWarning", "FormatError", "IrevalError", "UnknownMeasureError",
           "invalid_parameter", "parameter_message", "shorten"]

_MAX_LINE_SHOWN = 80

_E = TypeVar("_E", bound=Exception)

# the value shown after "Got": its repr, cut so that a long list or string cannot
# make the message unreadable
_GOT = reprlib.Repr()
_GOT.maxstring = _GOT.maxother = _MAX_LINE_SHOWN
_GOT.maxlist = _GOT.maxtuple = _GOT.maxset = _GOT.maxfrozenset = 8
_GOT.maxdict = 4


def shorten(text: str, limit: int = _MAX_LINE_SHOWN) -> str:
    """Return ``text`` cut to ``limit`` characters with an ellipsis when longer."""
    text = text.rstrip("\r\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parameter_message(param: str, function: str, constraint: str, got: object) -> str:
    """The one-line message of an invalid parameter (see :func:`invalid_parameter`).

    >>> parameter_message("tol", "win_tie_loss", ">= 0", -1.0)
    "The 'tol' parameter of win_tie_loss must be >= 0. Got -1.0 instead."
    >>> parameter_message("a", "f", "distinct", [1, 2, 1] * 5)  # long values are cut
    "The 'a' parameter of f must be distinct. Got [1, 2, 1, 1, 2, 1, 1, 2, ...] instead."
    """
    shown = re.sub(r"\s*\n\s*", " ", _GOT.repr(got))  # one line, even for array reprs
    return f"The '{param}' parameter of {function} must be {constraint}. Got {shown} instead."


@overload
def invalid_parameter(param: str, function: str, constraint: str, got: object) -> ValueError:
    ...


@overload
def invalid_parameter(param: str, function: str, constraint: str, got: object, *,
                      error: type[_E]) -> _E:
    ...


def invalid_parameter(param: str, function: str, constraint: str, got: object, *,
                      error: type[Exception] = ValueError) -> Exception:
    """The exception to raise for an invalid parameter, with the scikit-learn message.

    Parameters
    ----------
    param:
        The parameter's name, as the caller wrote it.
    function:
        The public function (or ``Class.method``) the caller called.
    constraint:
        What the parameter must be, completing "must be ...": ``"an int >= 1"``,
        ``"one of 'holm', 'bh'"``, ``"strictly between 0 and 1"``.
    got:
        The value received; the message shows its ``repr`` (cut when long).
    error:
        The exception class: ``ValueError`` (default) for a value out of range,
        ``TypeError`` for a value of the wrong type, or a subclass such as
        :class:`UnknownMeasureError`.

    Returns
    -------
    Exception
        An instance of ``error``, to be raised by the caller (``raise
        invalid_parameter(...)``), so that the traceback ends at the check.

    Examples
    --------
    >>> raise invalid_parameter("k", "ndcg", "an int >= 1", 0)
    Traceback (most recent call last):
    ...
    ValueError: The 'k' parameter of ndcg must be an int >= 1. Got 0 instead.
    >>> raise invalid_parameter("rng", "f", "None or an int", "x", error=TypeError)
    Traceback (most recent call last):
    ...
    TypeError: The 'rng' parameter of f must be None or an int. Got 'x' instead.
    """
    return error(parameter_message(param, function, constraint, got))


class IrevalError(Exception):
    """Base class of every error ireval raises on purpose."""


class FormatError(IrevalError, ValueError):
    """Input that cannot be read: says file, line, offending text and what was expected.

    Parameters
    ----------
    message:
        What is wrong and what was expected, without the location prefix.
    source:
        File name (or upload name) the problem was found in.
    line:
        1-based line number, or ``None`` when the problem concerns the whole file.
    text:
        The offending line, shortened for display.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        text: str | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.text = None if text is None else shorten(text)
        super().__init__(str(self))

    @property
    def location(self) -> str:
        """``file:line`` (or just ``file``) where the problem was found."""
        where = self.source or "<input>"
        return f"{where}:{self.line}" if self.line is not None else where

    def __str__(self) -> str:
        suffix = f": {self.text!r}" if self.text is not None else ""
        return f"{self.location}: {self.message}{suffix}"


class UnknownMeasureError(IrevalError, ValueError):
    """A measure name that the registry does not know; names the nearest valid one."""


@dataclass(frozen=True)
class DataWarning:
    """A soft problem found in the data, shown next to the results.

    ``code`` is a stable identifier (e.g. ``"run-query-without-qrels"``) that tests
    and the app can match on; ``message`` is the human sentence; ``count`` is how
    many items are affected; ``examples`` lists a few of them.
    """

    code: str
    message: str
    source: str | None = None
    count: int = 0
    examples: tuple[str, ...] = ()

    def __str__(self) -> str:
        where = f"{self.source}: " if self.source else ""
        more = f" (e.g. {', '.join(self.examples)})" if self.examples else ""
        return f"{where}{self.message}{more}"
