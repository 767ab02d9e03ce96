"""Judging page: widget keys and URL parameters."""

from __future__ import annotations

from ..views import ViewParam

MEASURE = "ireval.judging.measure"
"""Select: the measure whose verdicts the labels settle."""
BASELINE = "ireval.judging.baseline"
"""Select: the baseline run."""
CANDIDATES = "ireval.judging.candidates"
"""Multiselect: the runs compared with the baseline."""
RATER = "ireval.judging.rater"
"""Text: the rater's name, when nobody signs in."""
TOPICS = "ireval.judging.topics"
"""File uploader: the query texts."""
DOCUMENTS = "ireval.judging.documents"
"""File uploader: the document texts."""
GRADE = "ireval.judging.grade."
"""Prefix of the grade buttons (the grade follows)."""
SKIP = "ireval.judging.skip"
"""Button: leave the document unjudged (→)."""
CANT_TELL = "ireval.judging.cant_tell"
"""Button: the rater cannot tell (t)."""
UNDO = "ireval.judging.undo"
"""Button: take back the last label (u, ←)."""
BACK = "ireval.judging.back"
"""Button: the left arrow, as undo."""

PARAMS = (ViewParam(MEASURE, "measure"), ViewParam(BASELINE, "baseline"),
          ViewParam(CANDIDATES, "candidate", many=True))

LOCAL = {RATER: "who judges is this session's, not the link's",
         TOPICS: "a file: a link cannot carry it",
         DOCUMENTS: "a file: a link cannot carry it"}
"""Widgets the link leaves out, and why."""
