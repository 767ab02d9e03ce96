"""The one message template for invalid parameters (scikit-learn's convention), as the
tests of ``tests/test_common_errors.py`` and ``tests/test_labels_errors.py`` check it:
a row (:class:`Case`) per validated parameter, one check of what the call raises.

Not a test module: those tests import it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, NamedTuple

import pytest

MESSAGE = r"^The '{param}' parameter of (?P<function>\w[\w.]*) must be .+\. Got .+ instead\.$"
"""The template as a pattern; ``{param}`` is filled in with the escaped parameter name."""


class Case(NamedTuple):
    """``func(**kwargs)`` raises ``error`` about ``param``; the message names ``function``
    (default: the callable's name, as the calling module's test takes it)."""

    func: Callable[..., Any]
    kwargs: dict[str, Any]
    param: str
    error: type[Exception] = ValueError
    function: str | None = None


def assert_invalid_parameter(case: Case, function: str) -> None:
    """Call ``case``: it raises exactly ``case.error``, whose message is the template
    naming ``case.param`` and ``function``."""
    with pytest.raises(case.error) as info:
        case.func(**case.kwargs)
    assert type(info.value) is case.error
    message = str(info.value)
    hit = re.fullmatch(MESSAGE.format(param=re.escape(case.param)), message)
    assert hit, message
    assert hit["function"] == function, message
