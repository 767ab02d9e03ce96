"""Errors and warnings raised while reading and validating evaluation data.

Hard problems (the file cannot be understood) raise :class:`FormatError`, which
always says *where* (file name and 1-based line number when there is one) and
*what* was expected, in one line::

    run.txt:12: expected 6 columns (qid Q0 docid rank score tag), got 5: 'q1 Q0 d7 3 0.5'

A reader that finds several problems in one pass reports them at once: the error
describes the first (and says how many there are), and holds all of them as
:class:`Problem` records (:attr:`FormatError.problems`; :meth:`FormatError.report`
lists the first ones, :meth:`FormatError.problems_csv` is a download).

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
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar, overload

__all__ = ["PROBLEM_COLUMNS", "DataWarning", "FormatError", "IrevalError", "NotAllowedError",
           "Problem", "Remedy", "TooLargeError", "UnknownMeasureError", "invalid_parameter",
           "parameter_message", "shorten"]

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


@dataclass(frozen=True)
class Problem:
    """One thing wrong in an input, where it is: a line of :attr:`FormatError.problems`.

    ``source`` is the file name, ``line`` the 1-based line (text files), ``where`` the
    place when there is no line (``"sheet 'May', row 7"``, ``"task 3"``, ``"row 12"``),
    ``message`` what is wrong and what was expected, ``text`` the offending line
    (shortened), when there is one.

    >>> str(Problem("l.csv", 4, "", "empty query id", "r,,d1,1,2"))
    "l.csv:4: empty query id: 'r,,d1,1,2'"
    >>> str(Problem("l.xlsx", None, "sheet 'May', row 7", "unknown label 'meh'"))
    "l.xlsx: sheet 'May', row 7: unknown label 'meh'"
    """

    source: str | None
    line: int | None
    where: str
    message: str
    text: str | None = None

    @property
    def location(self) -> str:
        """``file:line``, ``file: sheet 'S', row N`` or just ``file``, as a
        :class:`FormatError` starts."""
        name = self.source or "<input>"
        if self.line is not None:
            return f"{name}:{self.line}"
        return f"{name}: {self.where}" if self.where else name

    def __str__(self) -> str:
        suffix = f": {self.text!r}" if self.text is not None else ""
        return f"{self.location}: {self.message}{suffix}"


@dataclass(frozen=True)
class Remedy:
    """A choice of the caller that reads an input the reader refused: which parameter of
    the reading function to set, and to what. The error carries it; each place words it
    in its own terms (the app names its field, the command line its flag, Python the
    parameter: :meth:`python`), so that no message names another place's terms.

    ``parameter`` is the reader's keyword (``"round"``, ``"label_map"``,
    ``"conflicts"``), ``example`` a value that would do (``"2026-05"``), ``choices`` the
    values that resolve the problems when there is a fixed set, ``count`` how many of
    the problems it resolves (``0``: the whole input), ``function`` the reader.

    >>> Remedy("round", example="2026-05").python()
    "set the round of the file: read_judgments(..., round='2026-05')"
    >>> Remedy("conflicts", choices=("mean", "latest"), count=3).python()
    "3 of these are resolved by a choice: read_judgments(..., conflicts='mean' or 'latest')"
    """

    parameter: str
    example: str = ""
    choices: tuple[str, ...] = ()
    count: int = 0
    function: str = "read_judgments"

    def python(self) -> str:
        """The remedy in the terms of the Python API (the default hint of an error)."""
        what = {"round": "set the round of the file", "label_map": "give a label map"}.get(
            self.parameter, f"set {self.parameter}")
        if self.choices:
            values = " or ".join(repr(c) for c in self.choices)
            lead = (f"{self.count:,} of these are resolved by a choice" if self.count
                    else what)
            return f"{lead}: {self.function}(..., {self.parameter}={values})"
        return f"{what}: {self.function}(..., {self.parameter}={self.example!r})"


PROBLEM_COLUMNS = ("file", "line", "where", "problem", "text")
"""The columns of :meth:`FormatError.problems_csv`."""


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
    problems:
        Every problem found, when a reader collected several in one pass (the first
        is the one the other parameters describe); by default the one problem.
    count:
        How many problems there are in all, when more were found than kept in
        ``problems`` (run and qrels files keep the first 100); ``len(problems)`` by
        default.
    shown:
        How many problems :meth:`report` lists (the rest are counted: "and 63 more").
    hint:
        What the user can do about it (a choice to make, a way to save the file),
        added as an exception note: shown in tracebacks and by the CLI, not part of
        ``str()``.
    conflicts:
        How many of the problems a choice of the reader resolves instead of an edit of
        the file (labeling files: one rater's different labels of a document in several
        systems' lists, ``read_judgments(conflicts=...)``); an app offers the choice
        when it is not 0.
    remedies:
        The choices of the caller that resolve problems (:class:`Remedy`: which
        parameter, an example, the choices), for the caller to word in its own terms.
        Without a ``hint``, the hint is theirs in the Python API's terms.

    ``str(error)`` is one line, ``file:line: message: 'text'``, the first problem; with
    several, it ends with how many (``; and 82 more problems (83 in all)``).
    :meth:`report` lists the first ``shown`` of them, one a line, and all of them are
    in :attr:`problems` and :meth:`problems_csv` (a download).
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        line: int | None = None,
        text: str | None = None,
        problems: Sequence[Problem] = (),
        count: int | None = None,
        shown: int = 20,
        hint: str | None = None,
        conflicts: int = 0,
        remedies: Sequence[Remedy] = (),
    ) -> None:
        self.message = message
        self.source = source
        self.line = line
        self.text = None if text is None else shorten(text)
        self.problems: tuple[Problem, ...] = tuple(problems) or (
            Problem(source, line, "", message, self.text),)
        self.count = max(int(count or 0), len(self.problems))
        self.shown = shown
        self.remedies: tuple[Remedy, ...] = tuple(remedies)
        if hint is None and self.remedies:
            hint = "; ".join(r.python() for r in self.remedies)
        self.hint = hint
        self.conflicts = int(conflicts)
        super().__init__(str(self))
        if hint:
            self.add_note(hint)

    @classmethod
    def of(cls, problems: Sequence[Problem], *, count: int | None = None, shown: int = 20,
           hint: str | None = None, conflicts: int = 0,
           remedies: Sequence[Remedy] = ()) -> FormatError:
        """The error for several problems (at least one), described by the first.

        >>> err = FormatError.of([Problem("r.txt", 3, "", "expected 6 columns, got 5"),
        ...                       Problem("r.txt", 9, "", "empty query id")], count=5)
        >>> print(err)
        r.txt:3: expected 6 columns, got 5; and 4 more problems (5 in all)
        >>> print(err.report())
        5 problems in r.txt; the first 2:
          r.txt:3: expected 6 columns, got 5
          r.txt:9: empty query id
          and 3 more
        """
        first = problems[0]
        message = f"{first.where}: {first.message}" if first.where and first.line is None \
            else first.message
        return cls(message, source=first.source, line=first.line, text=first.text,
                   problems=problems, count=count, shown=shown, hint=hint,
                   conflicts=conflicts, remedies=remedies)

    def fresh(self) -> FormatError:
        """A new error with the same fields (no traceback, context or cause)."""
        return FormatError(self.message, source=self.source, line=self.line, text=self.text,
                           problems=self.problems, count=self.count, shown=self.shown,
                           hint=self.hint, conflicts=self.conflicts,
                           remedies=self.remedies)

    @property
    def location(self) -> str:
        """``file:line`` (or just ``file``) where the problem was found."""
        where = self.source or "<input>"
        return f"{where}:{self.line}" if self.line is not None else where

    def __str__(self) -> str:
        suffix = f": {self.text!r}" if self.text is not None else ""
        more = self.count - 1
        tail = f"; and {more} more problem{'s' if more > 1 else ''} ({self.count} in all)" \
            if more else ""
        return f"{self.location}: {self.message}{suffix}{tail}"

    def report(self, shown: int | None = None) -> str:
        """How many problems, and the first ``shown`` (default :attr:`shown`), one a line.

        With one problem, ``str(self)``.
        """
        if self.count <= 1:
            return str(self)
        listed = self.problems[: self.shown if shown is None else shown]
        files = sorted({p.source or "<input>" for p in self.problems})
        where = files[0] if len(files) == 1 else f"{len(files)} files"
        lines = [f"{self.count} problems in {where}; the first {len(listed)}:"]
        lines += [f"  {p}" for p in listed]
        if self.count > len(listed):
            lines.append(f"  and {self.count - len(listed)} more")
        return "\n".join(lines)

    def problems_csv(self) -> str:
        """Every problem kept, as CSV text: ``file, line, where, problem, text``.

        Cells that a spreadsheet would run as a formula are neutralised
        (:func:`~ireval_core.escape.csv_row`). When more problems were found than kept
        (:attr:`count` > ``len(problems)``), a last row says how many more.

        >>> print(FormatError("empty query id", source="l.csv", line=4).problems_csv(), end="")
        file,line,where,problem,text
        l.csv,4,,empty query id,
        """
        import csv
        import io

        from .escape import csv_row

        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow(PROBLEM_COLUMNS)
        for p in self.problems:
            w.writerow(csv_row([p.source or "", "" if p.line is None else p.line, p.where,
                                p.message, p.text or ""]))
        if self.count > len(self.problems):
            w.writerow(["", "", "", f"and {self.count - len(self.problems)} more (not kept)",
                        ""])
        return out.getvalue()


class UnknownMeasureError(IrevalError, ValueError):
    """A measure name that the registry does not know; names the nearest valid one."""


class TooLargeError(IrevalError, ValueError):
    """Work refused before it starts because it is over a limit: the message says what
    was asked, which limit it exceeds and by how much; ``limit`` names the limit (its
    constant, option or environment variable), ``size`` and ``maximum`` are the numbers
    compared."""

    def __init__(self, message: str, *, limit: str, size: int, maximum: int) -> None:
        super().__init__(message)
        self.limit = limit
        self.size = size
        self.maximum = maximum


class NotAllowedError(IrevalError, PermissionError):
    """A write refused because the acting person's role does not allow it.

    The message names the person, what they tried, the project, the role they have and
    the role it needs. ``who`` is the person (an e-mail, or the local user's name),
    ``action`` what was refused (``"save a dataset"``), ``project`` the project's name,
    ``role`` the person's role there (``None``: no access) and ``needed`` the least role
    that allows it.
    """

    def __init__(self, message: str, *, who: str, action: str, project: str,
                 role: str | None, needed: str) -> None:
        super().__init__(message)
        self.who = who
        self.action = action
        self.project = project
        self.role = role
        self.needed = needed


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
