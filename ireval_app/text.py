"""Text for Streamlit's Markdown: uploaded strings shown literally.

A leaf module (it imports nothing of the app), so that every other module of the app,
the spinner of :mod:`ireval_app.working` included, escapes text the same way.
:mod:`ireval_app.widgets` re-exports :func:`md_escape` and :func:`md_frame` for the pages.
"""

from __future__ import annotations

import re

import pandas as pd

from ireval_core.escape import markdown_text

__all__ = ["code_block", "inline_code", "md_escape", "md_frame"]

_ADDRESS = re.compile(r"(?i)(?<=http)(?=s?\\:)|(?<=www)(?=\\\.)|(?<=[-.\w+])(?=@[-\w\\]*\.)")
"""Where a bare address is split in escaped text: after ``http`` (of ``http\\:`` or
``https\\:``), after ``www`` (of ``www\\.``), before the ``@`` of an e-mail address
(``a@b.org``; not ``nDCG@10``)."""
_SPLIT = ":small[]"
"""An empty Streamlit span: no text, but a node boundary inside the address."""


def md_escape(text: str) -> str:
    """``text`` shown literally by Streamlit's Markdown (no HTML, image, link, LaTeX, icon).

    The one escaping helper of the app: every uploaded string (ids, tags, file names)
    that reaches a Markdown-rendering element goes through it
    (:func:`ireval_core.escape.markdown_text`). Streamlit's Markdown also makes a bare
    address (``http://…``, ``www.…``, ``a@b.org``) a link after it has resolved the
    escapes, so an empty ``:small[]`` span goes inside each one: the address shows
    (and copies) as the same text, but no link is made of it.
    """
    return _ADDRESS.sub(_SPLIT, markdown_text(text))


def md_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """A copy of ``frame`` for ``st.table``, which renders index, header and cells as Markdown:
    every label and text cell escaped with :func:`md_escape`."""
    out = frame.copy()
    out.index = pd.Index([md_escape(str(i)) for i in frame.index], name=frame.index.name)
    out.columns = pd.Index([md_escape(str(c)) for c in frame.columns])
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(lambda v: md_escape(v) if isinstance(v, str) else v)
    return out


def inline_code(text: str) -> str:
    """``text`` as one Markdown code span (shown literally, on one line)."""
    text = " ".join(text.splitlines())  # a line break would end the code span
    fence = "`"
    while fence in text:
        fence += "`"
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str) -> str:
    """``text`` as a fenced Markdown code block (shown literally)."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}"
