"""The labeling settings every Monthly labeling page uses: widget keys (their widgets are on
the Labeling data page) and URL parameters (in the link of every labeling page).

:mod:`ireval_app.labels_widgets` reads them (``settings()``); the frame binds them before
a labeling page runs, so a link to the Trend page with ``k=5`` shows DCG@5.
"""

from __future__ import annotations

from numbers import Integral

from ireval_core.params import Interval, Options

from ..views import ViewParam

K = "ireval.labels.k"
"""Number: the depth K of DCG@K."""
GAIN = "ireval.labels.gain"
"""Radio: linear or exponential gain."""
COMBINE = "ireval.labels.combine"
"""Select: how several raters' labels are combined."""
MAP = "ireval.labels.map"
"""Text: the label map (empty: detected)."""
SOURCE = "ireval.labels.source"
"""Radio (Labeling data page): the bundled sample, uploaded files or a saved labeling set."""
SAVED_PICK = "ireval.labels.saved_pick"
"""Select (Labeling data page): the saved labeling set to open (its short id)."""
SAVED_VERSION = "ireval.labels.saved_version"
"""Select (Labeling data page): the version of the saved set (``0``: not chosen yet, the
newest is opened and written into the link, so that the link keeps showing it)."""
JUDGE = "ireval.labels.judge"
"""Select (Model judge page): the rater who is a model judge, left out of the people's
numbers on every labeling page (kept for the session, in every labeling page's link)."""
CONFLICTS = "ireval.labels.conflicts"
"""Radio: what one rater's different labels of a document in several systems' lists of a
round become (the core's ``conflicts=``; ``"refuse"``: the files are refused)."""
ROUND = "ireval.labels.tool_round"
"""Text: the round of labeling-tool exports that name none (Quepid, Label Studio tasks
without a round key)."""

K_MIN, K_MAX = 1, 1000
GAINS = ("linear", "exp")
COMBINES = ("mean", "median", "majority")
"""The keys of :data:`ireval_core.labels.COMBINE_RULES` (importing that package loads
scipy: the frame imports this module on every page; a test keeps them equal)."""
CONFLICT_CHOICES = ("refuse", "mean", "latest", "separate")
"""The keys of :data:`ireval_core.labels.judgments.CONFLICT_RULES` (a test keeps them
equal)."""
DEFAULTS: dict[str, object] = {COMBINE: "mean", K: 10, GAIN: "linear", MAP: "",
                               CONFLICTS: "refuse", ROUND: ""}
"""The labeling settings before the user changes them."""

SOURCES = ("sample", "upload", "saved")

SOURCE_PARAMS = (ViewParam(SOURCE, "source", Options(SOURCES)),
                 ViewParam(SAVED_PICK, "set"),
                 ViewParam(SAVED_VERSION, "version",
                           Interval(Integral, 1, None, closed="left")))
"""Which labels every labeling page shows: the source, and for a saved set its id and
version (a link made today opens the same version after newer months were added)."""

SETTINGS = (*SOURCE_PARAMS,
            ViewParam(K, "k", Interval(Integral, K_MIN, K_MAX, closed="both")),
            ViewParam(GAIN, "gain", Options(GAINS)),
            ViewParam(COMBINE, "combine", Options(COMBINES)),
            ViewParam(MAP, "map"),
            ViewParam(CONFLICTS, "conflicts", Options(CONFLICT_CHOICES)),
            ViewParam(ROUND, "export_round"),
            ViewParam(JUDGE, "judge", loaded="rater"))
"""The source's and the settings' URL parameters, part of every labeling page's
``PARAMS``: everything that changes the labeling numbers (the label map's text, checked
when the link is opened; the conflict rule; the round of tool exports; the model judge
the people's numbers leave out)."""
