"""The Labeling data page's workspace reads and writes: the saved labeling sets, a set's
newest files, a new set saved and a month's files added to a set.

Each function acts as :func:`~ireval_app.workspace_glue.actor` (the signed-in person, or
the local user, whose typed name is ``author``) and answers what the page shows: the
result, a :class:`~ireval_app.workspace_glue.WorkspaceProblem` when the workspace cannot
be used, or a :class:`~ireval_app.workspace_glue.Refused` with the workspace's words when
it refuses a write (a role that does not allow it, a name it does not take). Nothing here
reads widget values or draws.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ireval_core.workspace import (
    DatasetInfo,
    FileNameTakenError,
    FileRounds,
    RoundsInSetError,
    Workspace,
)

from . import workspace_glue
from .workspace_glue import Refused, WorkspaceProblem

__all__ = ["add_to_set", "newest_files", "save_set", "saved_as", "saved_sets"]

FileList = Sequence[tuple[str, str, bytes]]
"""Files as the workspace takes them: ``(kind, name, bytes)``."""


def saved_sets() -> list[DatasetInfo] | WorkspaceProblem:
    """The datasets this session may read, the most recently saved first."""
    who = workspace_glue.actor()
    return workspace_glue.with_workspace(lambda ws: ws.list_datasets(actor=who))


def newest_files(set_id: str, version: int
                 ) -> tuple[DatasetInfo, list[tuple[str, str, bytes]]] | WorkspaceProblem:
    """Version ``version`` of the set, and the files of it saved before versions kept
    each file's rounds (their rounds unknown: read again by the caller)."""
    who = workspace_glue.actor()

    def work(ws: Workspace) -> tuple[DatasetInfo, list[tuple[str, str, bytes]]]:
        latest = ws.get_dataset(set_id, version, actor=who)
        return latest, [(f.kind, f.name, ws.read_file(set_id, f.position, actor=who))
                        for f in latest.files if f.rounds is None]

    return workspace_glue.with_workspace(work)


def add_to_set(set_id: str, files: FileList, rounds: Mapping[str, FileRounds], *,
               author: str, replace: bool, note: str
               ) -> (DatasetInfo | RoundsInSetError | FileNameTakenError | WorkspaceProblem
                     | Refused):
    """Add ``files`` to the set as its next version; a round already in the set or a file
    name it has is answered as its error (the page says it in its form's terms)."""
    who = workspace_glue.actor()

    def work(ws: Workspace) -> DatasetInfo | RoundsInSetError | FileNameTakenError:
        try:
            return ws.add_to_dataset(set_id, list(files), rounds=dict(rounds),
                                     saved_by=None if who.signed_in else author,
                                     replace=replace, note=note, actor=who)
        except (RoundsInSetError, FileNameTakenError) as exc:
            return exc

    return workspace_glue.write(work)


def saved_as(files_id: str) -> DatasetInfo | None | WorkspaceProblem:
    """The saved set holding exactly these files (``files_id``: their workspace id), or
    ``None``; raises :class:`~ireval_core.errors.IrevalError` when it is in a project this
    session may not read."""
    return workspace_glue.saved_as(files_id)


def save_set(files: FileList, rounds: Mapping[str, FileRounds], *, name: str, author: str,
             project: str | None) -> DatasetInfo | WorkspaceProblem | Refused:
    """Save ``files`` as a new labeling set named ``name`` in ``project``."""
    who = workspace_glue.actor()
    return workspace_glue.write(lambda ws: ws.save_dataset(
        list(files), name=name, saved_by=None if who.signed_in else author, actor=who,
        rounds=dict(rounds), project=project))
