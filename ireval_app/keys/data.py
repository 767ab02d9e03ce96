"""Data page (``app.py``): widget keys. Its source, uploaders and the dataset's ``ds`` URL
parameter are every page's (:mod:`ireval_app.state`); no parameter of its own."""

from __future__ import annotations

from ..views import ViewParam

SAVE_NAME = "ireval.save.name"
"""Text: the name of the dataset to save."""
SAVE_NOTE = "ireval.save.note"
"""Text: a note saved with the dataset."""
SAVE_PROJECT = "ireval.save.project"
"""Select: the project the dataset is saved into."""
SAVED_PICK = "ireval.saved.pick"
"""Select: the saved dataset to open."""
DELETE_CONFIRM = "ireval.saved.delete_confirm"
"""Text: the id typed again to confirm a deletion."""
DASK_SCHEDULER = "ireval.dask.scheduler"
"""Text: the address of the Dask scheduler (``tcp://HOST:PORT``)."""
DASK_QRELS = "ireval.dask.qrels"
"""Text: the qrels path or URL the cluster's workers read."""
DASK_RUNS = "ireval.dask.runs"
"""Text area: run paths or URLs, one per line."""
DASK_MEASURES = "ireval.dask.measures"
"""Multiselect: the measures of the cluster job."""
DASK_DOWNLOAD = "ireval.dask.download"
"""Download button of the cluster job's per-query values."""
DASK_RESULT = "ireval.dask.result"
"""Not a widget: the last Dask job of the session (:class:`ireval_app.dask_glue.DaskResult`)."""

PARAMS: tuple[ViewParam, ...] = ()

_JOB = "an input of a cluster job, run by its button: a job, not a view"
LOCAL = {SAVE_NAME: "the name of a dataset being saved: an action's input",
         SAVE_NOTE: "the note of a dataset being saved: an action's input",
         SAVE_PROJECT: "the project a dataset is saved into: an action's input",
         SAVED_PICK: "opens a saved dataset: the link carries the opened one (ds)",
         DELETE_CONFIRM: "the id typed to confirm a deletion: an action's input",
         DASK_SCHEDULER: _JOB, DASK_QRELS: _JOB, DASK_RUNS: _JOB, DASK_MEASURES: _JOB}
"""Widgets the link leaves out, and why."""
