"""Errors and warnings raised while reading and validating evaluation data.

Hard problems (the file cannot be understood) raise :class:`FormatError`, which
always says *where* (file name and 1-based line number when there is one) and
*what* was expected, in one line::

    run.txt:12: expected 6 columns (qid Q0 docid rank score tag), got 5: 'q1 Q0 d7 3 0.5'

Soft problems (the data is usable but probably not what the user meant) are
collected as :class:`DataWarning` objects on the data set instead of being
raised, so that an app can show all of them at once.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DataWarning", "FormatError", "IrevalError", "UnknownMeasureError", "shorten"]

_MAX_LINE_SHOWN = 80


def shorten(text: str, limit: int = _MAX_LINE_SHOWN) -> str:
    """Return ``text`` cut to ``limit`` characters with an ellipsis when longer."""
    text = text.rstrip("\r\n")
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
