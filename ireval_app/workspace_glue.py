"""The app's workspace: which database, and moving files between it and the session.

The workspace (:class:`ireval_core.workspace.Workspace`) is opened once per process
(``st.cache_resource``) from, in order: the ``IREVAL_WORKSPACE`` environment variable,
``workspace`` in ``.streamlit/secrets.toml``, or the SQLite file
``data/workspace.db`` beside ``app.py`` (created on first use). A team server sets a
PostgreSQL URL there instead.

Nothing here reads widget values; functions take what they need.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from ireval_core.workspace import ENV_VAR, DatasetInfo, Workspace, dataset_id_from_sha256

from . import cache

__all__ = ["DEFAULT_PATH", "dataset_files", "dataset_id", "files_of_kind", "open_dataset",
           "workspace", "workspace_url"]

DEFAULT_PATH = Path(__file__).resolve().parents[1] / "data" / "workspace.db"
"""The default workspace: a SQLite file in the repository's ``data/`` folder."""


def workspace_url() -> str:
    """Where the workspace is (URL or file path), see the module docstring."""
    url = os.environ.get(ENV_VAR)
    if url:
        return url
    try:
        secret = st.secrets.get("workspace")
    except (FileNotFoundError, OSError):  # no secrets file: the default
        secret = None
    except Exception:  # a malformed secrets file must not stop the app  # noqa: BLE001
        secret = None
    return str(secret) if secret else str(DEFAULT_PATH)


@st.cache_resource(show_spinner=False)
def _open(url: str) -> Workspace:
    return Workspace.open(url)


def workspace() -> Workspace:
    """The workspace of this app (one per process, shared by sessions: it is thread-safe)."""
    return _open(workspace_url())


def open_dataset(ws: Workspace, dataset_id: str) -> tuple[DatasetInfo, cache.LoadedFiles]:
    """A saved dataset and its qrels and runs read through the app's cached readers.

    Files of other kinds (labeling files, metadata) are not part of
    :class:`~ireval_app.cache.LoadedFiles` and are left to the pages that use them.
    Raises :class:`~ireval_core.workspace.WorkspaceError` when the id is unknown.
    """
    info = ws.get_dataset(dataset_id)
    qrels = None
    runs: list[tuple[str, bytes]] = []
    for f in info.files:
        if f.kind == "qrels":
            qrels = cache.load_qrels(f.name, ws.read_file(info.id, f.position))
        elif f.kind == "run":
            runs.append((f.name, ws.read_file(info.id, f.position)))
    return info, cache.LoadedFiles(qrels, cache.load_run_files(runs))


def files_of_kind(ws: Workspace, info: DatasetInfo, kinds: Sequence[str]
                  ) -> list[tuple[str, str, bytes]]:
    """``(kind, name, bytes)`` of the dataset's files of ``kinds``, in dataset order."""
    return [(f.kind, f.name, ws.read_file(info.id, f.position)) for f in info.files
            if f.kind in kinds]


def dataset_files(qrels: tuple[str, bytes] | None, runs: Sequence[tuple[str, bytes]],
                  metadata: tuple[str, bytes] | None = None) -> list[tuple[str, str, bytes]]:
    """The ``(kind, name, bytes)`` list :meth:`Workspace.save_dataset` takes."""
    out = [("qrels", qrels[0], qrels[1])] if qrels is not None else []
    out += [("run", name, data) for name, data in runs]
    return out + ([("metadata", metadata[0], metadata[1])] if metadata is not None else [])


def dataset_id(files: Sequence[tuple[str, str, bytes]], read: cache.LoadedFiles) -> str:
    """:func:`ireval_core.workspace.dataset_id_of` of ``files`` (``(kind, name, bytes)``),
    taking the SHA-256 of each qrels or run file from the :class:`~ireval_app.cache.LoadedFile`
    that read it (same kind, name and size) instead of hashing its bytes again: the Data
    page asks on every run, and uploads can be a gigabyte. Other files are hashed."""
    known = {("qrels", f.name, f.size): f.sha256
             for f in ((read.qrels,) if read.qrels is not None else ()) if f.sha256}
    known.update({("run", f.name, f.size): f.sha256 for f in read.runs if f.sha256})
    return dataset_id_from_sha256([
        (kind, name, known.get((kind, name, len(data))) or hashlib.sha256(data).hexdigest())
        for kind, name, data in files])
