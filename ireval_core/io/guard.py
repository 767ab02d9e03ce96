"""What a failed read leaves behind: one fresh :class:`~ireval_core.errors.FormatError`.

A reader wrapped here (:func:`guarded` for the qrels and run readers, the
:func:`clean_errors` decorator for the table readers) turns whatever a bad input makes
it raise into a :class:`~ireval_core.errors.FormatError` without ``__context__`` or
``__cause__``, and clears the frames of the failed read, so that nothing of the input
(bytes, Arrow tables) stays reachable from a kept error.
"""

from __future__ import annotations

import functools
import os
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, ParamSpec, TypeVar

import pyarrow as pa

from ..errors import FormatError
from .source import Source, one_line

__all__ = ["clean_errors", "guarded", "release_frames"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


def guarded(read: Callable[..., _T], source: object, name: str | None,
            *args: Any) -> _T | FormatError:
    """Call ``read``; whatever a bad input makes it raise comes back as a fresh FormatError.

    The error is built after the ``except`` blocks, so it has no ``__context__``,
    and it is returned rather than raised here, so that no frame of the failed
    read (holding the bytes, tables, pyarrow errors) is reachable from it.
    OSError from opening or reading a file is not about the format: it propagates.
    """
    failure: tuple[str, str | None, int | None, str | None] | FormatError
    where = _name_hint(source, name)
    try:
        return read(source, name, *args)
    except FormatError as exc:
        failure = exc.fresh()  # every problem, the count and the hint; no frame
        release_frames(exc)
    except MemoryError as exc:
        failure = ("not enough memory to read this file", where, None, None)
        release_frames(exc)
    except RecursionError as exc:
        failure = ("structure nested too deeply to read", where, None, None)
        release_frames(exc)
    except OSError as exc:
        if not isinstance(exc, pa.ArrowException):
            raise
        failure = (f"could not read this file ({type(exc).__name__}: {one_line(str(exc))})",
                   where, None, None)
        release_frames(exc)
    except Exception as exc:  # a reader bug: still one line naming the file, never a traceback
        failure = (f"could not read this file ({type(exc).__name__}: {one_line(str(exc))}); "
                   "this is a bug in ireval's reader, please report it", where, None, None)
        release_frames(exc)
    if isinstance(failure, FormatError):
        return failure
    message, src_name, line, text = failure
    return FormatError(message, source=src_name, line=line, text=text)


def release_frames(exc: BaseException) -> None:
    """Clear the locals of every finished frame of ``exc`` and of the exceptions it chains.

    A failed read leaves reference cycles (an error kept in a local of the frame it
    was raised from); clearing the frames frees the input at once instead of at the
    next garbage collection.
    """
    todo: list[BaseException | None] = [exc]
    seen: set[int] = set()
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        traceback.clear_frames(e.__traceback__)  # skips the frames still running
        todo += [e.__context__, e.__cause__]


def _name_hint(source: object, name: str | None) -> str:
    if name:
        return str(name)
    if isinstance(source, Source):
        return source.name
    if isinstance(source, str | os.PathLike):
        return Path(source).name
    hint = getattr(source, "name", None)
    return str(hint) if hint else "<input>"


def clean_errors(read: Callable[_P, _T]) -> Callable[_P, _T]:
    """Make ``read`` raise every :class:`FormatError` afresh, holding nothing of the input.

    A ``FormatError`` raised while another exception was handled keeps it as its
    ``__context__`` (with the frames, the bytes, the Arrow tables); the one raised here
    has no ``__context__`` or ``__cause__``, and the frames of the failed read are
    cleared. Running out of memory or nesting too deep is reported as a ``FormatError``
    too. Other exceptions (invalid arguments) pass unchanged.
    """

    @functools.wraps(read)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _T:
        failure: tuple[str, str | None, int | None, str | None] | FormatError
        try:
            return read(*args, **kwargs)
        except FormatError as exc:
            failure = exc.fresh()  # every problem, the count and the hint; no frame
            release_frames(exc)
        except MemoryError as exc:
            failure = ("not enough memory to read this file", _names(args), None, None)
            release_frames(exc)
        except RecursionError as exc:
            failure = ("structure nested too deeply to read", _names(args), None, None)
            release_frames(exc)
        del args, kwargs
        if isinstance(failure, FormatError):
            raise failure
        message, source, line, text = failure
        raise FormatError(message, source=source, line=line, text=text)

    return wrapper


def _names(args: tuple[object, ...]) -> str | None:
    """The file name(s) of a reader's first argument (one source or a list of them)."""
    if not args:
        return None
    first = args[0]
    items = first if isinstance(first, list) else [first]
    names = [str(i[0]) if isinstance(i, tuple) and i else Path(i).name if isinstance(
        i, str | Path) else str(getattr(i, "name", "<input>")) for i in items]
    return ", ".join(names)[:120] or None
