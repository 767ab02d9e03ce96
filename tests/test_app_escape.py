"""The app's escaping helper (:func:`ireval_app.widgets.md_escape`) on its own.

What Streamlit makes of its output in a real browser is asserted by
``tests/test_browser_hostile.py``; here, what the helper writes: the Markdown of
:func:`ireval_core.escape.markdown_text`, plus an empty ``:small[]`` span inside every
bare address, which Streamlit would otherwise make a link of.
"""

from __future__ import annotations

import pytest

from ireval_app.widgets import md_escape
from ireval_core.escape import markdown_text

SPLIT = ":small[]"


@pytest.mark.parametrize(("text", "expected"), [
    ("http://evil.example/a", r"http:small[]\://evil.example/a"),
    ("HTTPS://evil.example", r"HTTP:small[]S\://evil.example"),
    ("www.evil.example/w", r"www:small[]\.evil.example/w"),
    ("zq@evil.example", r"zq:small[]@evil.example"),
    ("![b](http://127.0.0.1:9/b.png)", r"\!\[b\]\(http:small[]\://127.0.0.1:9/b.png)"),
])
def test_a_bare_address_is_split(text: str, expected: str) -> None:
    assert md_escape(text) == expected


@pytest.mark.parametrize("text", [
    "bm25", "nDCG@10", "P(rel=2)@5", "run_1 > run_2", "$\\input{/etc/passwd}$", ":red[x]",
    "a|b|c", "<script>alert(1)</script>", "**b**", "http", "www", "a@b", ":@x",
    "ftp://a.org",  # GFM links only http(s)://, www. and e-mail addresses
])
def test_no_address_no_change(text: str) -> None:
    assert md_escape(text) == markdown_text(text)


@pytest.mark.parametrize(("text", "addresses"), [
    ("see http://a.org and www.b.org or mail c@d.org", 3), ("HTTP://X.ORG/path?q=1#f", 1),
    ("x@y.z@w.v", 2), ("https://a.org/@b.org", 1),
])
def test_only_empty_spans_are_added(text: str, addresses: int) -> None:
    escaped = md_escape(text)
    assert escaped.count(SPLIT) == addresses
    assert escaped.replace(SPLIT, "") == markdown_text(text)
