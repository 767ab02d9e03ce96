"""Which data the session's pages use, read once: the uploads, the saved dataset a link
names, the default data, the query metadata, and reading them again when the trec_eval
version reads files otherwise.

Every page's frame calls :func:`restore_dataset_from_url` (first run), then
:func:`follow_reading_rule` and :func:`default_dataset`. The files are read by
:mod:`ireval_app.cache` (once per process) and held by :mod:`ireval_app.state`; nothing
here draws but the note that a link's dataset was not applied.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from streamlit.runtime.uploaded_file_manager import UploadedFile

from ireval_core.dataset import Dataset

from . import cache, state, views

if TYPE_CHECKING:  # the metadata module brings scipy, which the Data page does not need
    from ireval_core.metadata import QueryMetadata

__all__ = ["default_dataset", "follow_reading_rule", "query_metadata", "query_metadata_and_key",
           "read_uploads", "restore_dataset_from_url"]

def read_uploads(qrels_file: UploadedFile | None,
                 run_files: list[UploadedFile]) -> cache.LoadedFiles:
    """Read the uploads that changed since the last run (together, on both cores:
    :func:`ireval_app.cache.load_uploads`); keep the rest as they are."""
    current = state.get_uploaded()
    qrels, runs = current.qrels, current.runs
    comments = cache.reads_comments(state.get_options())
    qrels_ids = (qrels_file.file_id,) if qrels_file is not None else ()
    new_qrels = state.pop_upload_changed("qrels") or (
        bool(qrels_ids) and qrels_ids != state.get_upload_ids("qrels"))
    run_ids = tuple(f.file_id for f in run_files)
    new_runs = state.pop_upload_changed("runs") or (
        bool(run_ids) and run_ids != state.get_upload_ids("runs"))
    qrels_bytes = ([(qrels_file.name, qrels_file.getvalue())]
                   if new_qrels and qrels_file is not None else [])
    run_bytes = [(f.name, f.getvalue()) for f in run_files] if new_runs else []
    read_qrels, read_runs = cache.load_uploads(qrels_bytes[0] if qrels_bytes else None,
                                               run_bytes if new_runs else None,
                                               comments=comments)
    if new_qrels:
        qrels = read_qrels
        state.set_upload_ids("qrels", qrels_ids)
        state.set_upload_bytes("qrels", qrels_bytes)
    if new_runs:
        assert read_runs is not None
        runs = read_runs
        state.set_upload_ids("runs", run_ids)
        state.set_upload_bytes("runs", run_bytes)
    files = cache.LoadedFiles(qrels, runs)
    state.set_uploaded(files)
    return files


def follow_reading_rule() -> None:
    """Read the data again when the trec_eval version chosen reads ``#`` lines otherwise.

    trec_eval 10.0 skips TREC text lines starting with ``#``, 9.0.8 reads them as data
    (:func:`ireval_app.cache.reads_comments`): after the version changed, the uploads
    (from their kept bytes), the default data or the saved dataset in use are read with
    the new rule (each read is cached per rule, so switching back costs nothing). A saved
    dataset the workspace cannot give again stays as it was read.
    """
    comments = cache.reads_comments(state.get_options())
    uploaded = state.get_uploaded()
    if not uploaded.is_empty and uploaded.comments != comments:
        qrels = state.get_upload_bytes("qrels")
        state.set_uploaded(cache.LoadedFiles(
            cache.load_qrels(*qrels[0], comments=comments) if qrels else None,
            cache.load_run_files(state.get_upload_bytes("runs"), comments=comments)))
    files = state.get_loaded_files()
    if files is None or files.is_empty or files.comments == comments:
        return
    dataset_id, source = state.get_dataset_id(), state.get_source()
    if dataset_id is not None:
        from ireval_core.errors import IrevalError

        from . import workspace_glue

        try:
            opened = workspace_glue.with_workspace(
                lambda ws: workspace_glue.open_dataset(ws, dataset_id, comments=comments,
                                                       version=state.get_dataset_version()))
        except (IrevalError, ValueError):  # the dataset was deleted meanwhile
            return
        if not isinstance(opened, workspace_glue.WorkspaceProblem):
            state.set_loaded(opened[1], cache.dataset_for(opened[1]), dataset_id=dataset_id,
                             dataset_version=state.get_dataset_version())
    elif source == "upload":
        files = state.get_uploaded()
        state.set_loaded(files, cache.dataset_for(files))
    else:
        files, sample = cache.load_default(comments=comments)
        state.set_loaded(files, cache.dataset_for(files), sample=sample)


def restore_dataset_from_url() -> None:
    """On a session's first run: open the saved dataset the URL names (``?ds=...``).

    A link to a view carries the dataset id; a new browser opening it gets the same
    data from the workspace. A value that is not a dataset id, or an id the workspace
    does not have, is not applied: the page shows the default data, and says so
    (:func:`ireval_app.views.not_applied`) on every page while it does.
    """
    if state.url_dataset_pending():
        text = state.dataset_param() or ""
        why = _dataset_id_problem(text)
        if why is None:
            from ireval_core.errors import IrevalError

            from . import workspace_glue

            try:
                opened = workspace_glue.with_workspace(
                    lambda ws: workspace_glue.open_dataset(
                        ws, text.strip(), comments=cache.reads_comments(state.get_options()),
                        version=state.dataset_version_param()))
            except (IrevalError, ValueError) as exc:  # an unknown id
                why = f"the saved dataset cannot be opened: {exc}"
            else:
                if isinstance(opened, workspace_glue.WorkspaceProblem):
                    why = opened.message
                else:
                    info, files = opened
                    state.set_source_value("saved")
                    state.set_loaded(files, cache.dataset_for(files), dataset_id=info.id,
                                     dataset_version=info.version)
                    return
        state.refuse_dataset_param(text, why)
    refused = state.refused_dataset_param()
    if refused is not None and (state.get_dataset_id() is None
                                and state.get_source() in (None, "sample")):
        views.not_applied(state.DATASET_PARAM, *refused)  # while the default data stands in




_DATASET_ID = re.compile(r"[0-9a-fA-F]{8,64}")


def _dataset_id_problem(text: str) -> str | None:
    """Why ``text`` cannot be a dataset id (8 to 64 hexadecimal characters), or ``None``."""
    if _DATASET_ID.fullmatch(text.strip()):
        return None
    return "not a dataset id: 8 to 64 hexadecimal characters"


def default_dataset() -> Dataset | None:
    """The loaded dataset; while there is none and the sample is the source, the default
    data (the bundled sample, or the folder of ``IREVAL_DATA_DIR``) is loaded first."""
    dataset = state.get_dataset()
    if dataset is None and state.get_source() in (None, "sample"):
        files, sample = cache.load_default()
        dataset = state.set_loaded(files, cache.dataset_for(files), sample=sample)
    return dataset


def query_metadata() -> QueryMetadata | None:
    """The query metadata of the current data: the sample's with the sample, else the
    uploaded file's (``None`` when there is none or it could not be read)."""
    return query_metadata_and_key()[0]


def query_metadata_and_key() -> tuple[QueryMetadata | None, str]:
    """:func:`query_metadata` and the digest of its file (the cache key of what is
    computed from it; ``""`` without metadata)."""
    if state.is_sample():
        from . import metadata_glue  # imports scipy (through ireval_core.metadata): when used

        loaded = metadata_glue.load_sample_metadata()
    else:
        loaded = state.get_metadata_upload()  # type: ignore[assignment]
    meta = getattr(loaded, "metadata", None)
    return meta, str(getattr(loaded, "digest", "")) if meta is not None else ""
