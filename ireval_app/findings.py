"""Findings of an analysis, drawn in one style of their own.

A finding is what the numbers say that a reader should act on: a significant drop from
one round to the next, a rater who drifts, a month where the new system is judged
worse, anchor items labeled otherwise, DCG and the model scores disagreeing. It is not
a failure of the application, so it is not drawn as ``st.error`` (the red box the app
keeps for a file it cannot read or an action it refused): every finding is drawn by
:func:`finding`, a bordered box led by a "Finding" badge in the finding's colour.
"""

from __future__ import annotations

from typing import Literal

import streamlit as st

__all__ = ["BADGE", "finding"]

Tone = Literal["orange", "blue", "violet"]

BADGE = "Finding"
"""The word on every finding's badge (tests and readers find findings by it)."""


def finding(text: str, *, icon: str = ":material/insights:", tone: Tone = "orange") -> None:
    """Draw one finding: ``text`` (Markdown, already escaped by the caller) after a
    badge with ``icon`` and the word :data:`BADGE`, in a bordered box. ``tone``:
    ``"orange"`` for something that got worse (a drop, a drift), ``"blue"`` or
    ``"violet"`` for a disagreement to look into."""
    with st.container(border=True):
        st.markdown(f":{tone}-badge[{icon} {BADGE}] {text}")
