"""Labeling data page: widget keys and URL parameters (with the labeling settings of
:mod:`ireval_app.keys.labeling`)."""

from __future__ import annotations

from .labeling import SAVED_PICK, SAVED_VERSION, SETTINGS, SOURCE, SOURCES

__all__ = ["ADD_UPLOADER", "ADD_NOTE", "ANCHOR_UPLOADER", "GSB_UPLOADER", "LOCAL", "PARAMS",
           "REPLACE", "SAVED_PICK", "SAVED_VERSION", "SAVE_NAME", "SAVE_PROJECT", "SOURCE",
           "SOURCES", "UPLOADER", "add_uploader"]

ADD_UPLOADER = "ireval.labels.add_upload"
"""File uploader: files added to an opened saved set (its key: :func:`add_uploader`)."""


def add_uploader(adds: int) -> str:
    """The key of the add uploader after ``adds`` adds in the session: a new, empty
    uploader after each add (a widget's files cannot be cleared from the script)."""
    return f"{ADD_UPLOADER}.{adds}"

SAVE_NAME = "ireval.labels.save_name"
"""Text: the name of the labeling set to save."""
SAVE_PROJECT = "ireval.labels.save_project"
"""Select: the project the labeling set is saved into."""
UPLOADER = "ireval.labels.upload"
"""File uploader: labeled result lists (one or more files)."""
GSB_UPLOADER = "ireval.labels.gsb_upload"
"""File uploader: side-by-side (GSB) judgments."""
ANCHOR_UPLOADER = "ireval.labels.anchor_upload"
"""File uploader: anchor items re-labeled every month."""

REPLACE = "ireval.labels.replace"
"""Checkbox: replace the rounds the added files hold that the set already has."""
ADD_NOTE = "ireval.labels.add_note"
"""Text: a note kept with the added version."""

PARAMS = SETTINGS

_FILES = "files: a link cannot carry them (a saved set is the link's set and version)"
LOCAL = {UPLOADER: _FILES, GSB_UPLOADER: _FILES, ANCHOR_UPLOADER: _FILES,
         ADD_UPLOADER: "files added to the saved set: the new version is in the link",
         SAVE_NAME: "the name of a set being saved: an action's input",
         SAVE_PROJECT: "the project a set is saved into: an action's input",
         REPLACE: "how the next files are added: an action's input",
         ADD_NOTE: "the note of a version being added: an action's input"}
"""Widgets the link leaves out, and why."""
