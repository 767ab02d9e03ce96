"""Labeling data page: widget keys and URL parameters (with the labeling settings of
:mod:`ireval_app.keys.labeling`)."""

from __future__ import annotations

from ireval_core.params import Options

from ..views import ViewParam
from .labeling import SETTINGS

SOURCE = "ireval.labels.source"
"""Radio: the bundled sample, uploaded files or a saved labeling set."""
SAVED_PICK = "ireval.labels.saved_pick"
"""Select: the saved labeling set to open."""
ADD_UPLOADER = "ireval.labels.add_upload"
"""File uploader: files added to an opened saved set."""
SAVE_NAME = "ireval.labels.save_name"
"""Text: the name of the labeling set to save."""
UPLOADER = "ireval.labels.upload"
"""File uploader: labeled result lists (one or more files)."""
GSB_UPLOADER = "ireval.labels.gsb_upload"
"""File uploader: side-by-side (GSB) judgments."""
ANCHOR_UPLOADER = "ireval.labels.anchor_upload"
"""File uploader: anchor items re-labeled every month."""

SOURCES = ("sample", "upload", "saved")

PARAMS = (ViewParam(SOURCE, "source", Options(SOURCES)),
          ViewParam(SAVED_PICK, "set", loaded="saved labeling set"),
          *SETTINGS)
