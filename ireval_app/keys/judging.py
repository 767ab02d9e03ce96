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
"""Button: take back the last label (u)."""
BACK = "ireval.judging.back"
"""Button, drawn but not shown: the left arrow, the same undo as :data:`UNDO`."""

PARAMS = (ViewParam(MEASURE, "measure"), ViewParam(BASELINE, "baseline"),
          ViewParam(CANDIDATES, "candidate", many=True))

LOCAL = {RATER: "who judges is this session's, not the link's",
         TOPICS: "a file: a link cannot carry it",
         DOCUMENTS: "a file: a link cannot carry it"}
"""Widgets the link leaves out, and why."""

MODE = "ireval.judging.mode"
"""Radio: decide a comparison, or label the month's task."""
TASK_LOG = "ireval.judging.task.log"
"""File uploader: the month's query log."""
TASK_ROUND = "ireval.judging.task.round"
"""Text: the round (month) the task labels."""
TASK_DESIGN = "ireval.judging.task.design"
"""Select: the sample design (srs, stratified, pps)."""
TASK_N = "ireval.judging.task.n"
"""Number: queries to sample."""
TASK_K = "ireval.judging.task.k"
"""Number: each system's top K."""
TASK_SEED = "ireval.judging.task.seed"
"""Number: the seed of the draw."""
TASK_SET = "ireval.judging.task.set"
"""Select: the labeling set the round goes to (or a new one)."""
TASK_SET_NAME = "ireval.judging.task.set_name"
"""Text: the name of a new labeling set."""
TASK_PROJECT = "ireval.judging.task.project"
"""Select: the project a new labeling set is saved into (among those the role allows)."""

LOCAL.update({k: "the month's task is built in this session, not from a link" for k in (
    MODE, TASK_ROUND, TASK_DESIGN, TASK_N, TASK_K, TASK_SEED, TASK_SET, TASK_SET_NAME,
    TASK_PROJECT)})
LOCAL[TASK_LOG] = "a file: a link cannot carry it"

SET_GUIDELINES = "ireval.judging.set.guidelines"
"""Text area: the judging set's guidelines (markdown), for an editor."""
SET_LABEL_MAP = "ireval.judging.set.label_map"
"""Text: the judging set's label map, for an editor."""
SET_OVERLAP = "ireval.judging.set.overlap"
"""Number: the judging set's overlap share (percent), for an editor."""
SET_SAVE = "ireval.judging.set.save"
"""Form submit: save the judging set's next version."""
RATERS = "ireval.judging.raters"
"""Expander: the raters' agreement and the exports (open or not: computed only when open)."""
EXPORT_QRELS = "ireval.judging.export.qrels"
"""Download: the judged labels as TREC qrels."""
EXPORT_TABLE = "ireval.judging.export.table"
"""Download: the judged labels as the labeling table."""

LOCAL.update({k: "the judging set is kept in the workspace, not in a link" for k in (
    SET_GUIDELINES, SET_LABEL_MAP, SET_OVERLAP, SET_SAVE)})
LOCAL.update({k: "a download: nothing to restore" for k in (EXPORT_QRELS, EXPORT_TABLE)})
LOCAL[RATERS] = "whether a panel is open is this session's, not the link's"
