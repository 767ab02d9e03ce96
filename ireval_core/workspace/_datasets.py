"""Datasets and their versions: saving, reading, growing by rounds, deleting.

A dataset's id is the SHA-256 of its manifest (the sorted ``(kind, name, sha256)`` of its
files), so the same files saved again are the dataset already stored. A version lists
the files it holds (``version_files``); every earlier version stays readable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..errors import invalid_parameter
from ..params import Options
from ._access import (
    ANONYMOUS,
    DEFAULT_PROJECT,
    Actor,
    dataset_project,
    project_id,
    readable,
    readable_projects,
    require,
)
from ._blobs import lock_for_delete, lock_or_insert, present, read_blob, remove_unused, split_chunks
from ._db import Store, insert_or_skip
from ._members import check_actor, log, recorded_name
from ._schema import BLOBS, DATASETS, FILES, NOTES, PROJECTS, VERSION_FILES, VERSIONS
from ._types import (
    FILE_KINDS,
    SHORT_ID_LENGTH,
    DatasetInfo,
    DatasetNotFoundError,
    DatasetVersion,
    DeletedDataset,
    FileContent,
    FileInfo,
    FileNameTakenError,
    FileRounds,
    RoundsInSetError,
    WorkspaceUsage,
    check_text,
    utc,
    utc_now,
)

_MANIFEST_FORMAT = 1


def file_tuples(files: object, function: str) -> list[tuple[str, str, memoryview]]:
    """Validate ``(kind, name, bytes)`` triples; the bytes as zero-copy memoryviews."""
    if isinstance(files, (str, bytes)) or not isinstance(files, Sequence):
        raise invalid_parameter("files", function, "a sequence of (kind, name, bytes)",
                                files, error=TypeError)
    if not files:
        raise invalid_parameter("files", function, "a non-empty sequence of files", files)
    out: list[tuple[str, str, memoryview]] = []
    for item in files:
        if not (isinstance(item, tuple) and len(item) == 3):
            raise invalid_parameter("files", function, "a sequence of (kind, name, bytes)",
                                    item, error=TypeError)
        kind, name, data = item
        if kind not in FILE_KINDS:
            raise invalid_parameter("files", function,
                                    f"files whose kind is {Options(FILE_KINDS)}", kind)
        try:
            check_text(name, "files", function)
        except (TypeError, ValueError) as exc:
            raise invalid_parameter(
                "files", function, "files whose names are non-blank str without NUL "
                "characters or unpaired surrogates", name, error=type(exc)) from None
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise invalid_parameter("files", function, "files whose content is bytes",
                                    type(data).__name__, error=TypeError)
        view = memoryview(data).cast("B")
        out.append((kind, name, view))
    names = [name for _, name, _ in out]
    if len(set(names)) != len(names):
        raise invalid_parameter("files", function, "files with distinct names", names)
    if sum(kind == "qrels" for kind, _, _ in out) > 1:
        raise invalid_parameter("files", function, "files with at most one qrels",
                                [n for k, n, _ in out if k == "qrels"])
    return out


def manifest_id(entries: Sequence[tuple[str, str, str]]) -> str:
    """SHA-256 of the canonical manifest of ``(kind, name, sha256)`` entries."""
    manifest = json.dumps({"ireval-dataset": _MANIFEST_FORMAT, "files": sorted(entries)},
                          ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(manifest.encode("utf-8")).hexdigest()


def check_rounds(rounds: object, names: set[str] | None, function: str
                  ) -> dict[str, FileRounds]:
    """``rounds`` checked: ``None`` or a mapping from file names (of ``names``, when given)
    to :class:`FileRounds`."""
    if rounds is None:
        return {}
    if not isinstance(rounds, Mapping) or not all(
            isinstance(k, str) and isinstance(v, FileRounds) for k, v in rounds.items()):
        raise invalid_parameter("rounds", function,
                                "None or a mapping of file names to FileRounds", rounds,
                                error=TypeError)
    if names is not None and set(rounds) - names:
        raise invalid_parameter("rounds", function, "the rounds of files being saved",
                                sorted(set(rounds) - names))
    return dict(rounds)


def member_row(dataset_id: str, version: int, position: int, added: bool,
            stated: FileRounds | None) -> dict[str, object]:
    """A ``version_files`` row."""
    return {"dataset_id": dataset_id, "version": version, "position": position,
            "added": added,
            "rounds": None if stated is None else json.dumps(list(stated.rounds),
                                                             ensure_ascii=False),
            "n_rows": None if stated is None else stated.rows}


def file_info(row: Any) -> FileInfo:
    """A :class:`FileInfo` from a row of ``dataset_files`` joined with its size and its
    ``version_files`` row."""
    return FileInfo(position=row.position, kind=row.kind, name=row.name,
                    sha256=row.blob_sha256, size=int(row.size),
                    rounds=None if row.rounds is None else tuple(json.loads(row.rounds)),
                    rows=None if row.n_rows is None else int(row.n_rows))


def plan_version(current: DatasetInfo, stated: Mapping[str, FileRounds],
                  added: set[str], replace: bool, name: str, url: str) -> list[FileInfo]:
    """The files of ``current`` that stay in the next version (with their rounds filled in
    from ``stated`` when unknown), or the error why the added files cannot join."""
    fn = "Workspace.add_to_dataset"
    known: list[FileInfo] = []
    for f in current.files:
        if f.rounds is None and f.name in stated:
            f = FileInfo(f.position, f.kind, f.name, f.sha256, f.size,
                         stated[f.name].rounds, stated[f.name].rows)
        if f.rounds is None:
            raise invalid_parameter(
                "rounds", fn, f"the rounds of the set's file {f.name!r} too (it was saved "
                "without them)", sorted(stated))
        known.append(f)
    new_rounds = {r for n in added for r in stated[n].rounds}
    hit = [f for f in known if set(f.rounds or ()) & new_rounds]
    if hit and not replace:
        both = tuple(r for f in hit for r in (f.rounds or ()) if r in new_rounds)
        raise RoundsInSetError(
            f"round{'s' if len(both) > 1 else ''} {', '.join(both)} "
            f"{'are' if len(both) > 1 else 'is'} already in the set {name!r} (file"
            f"{'s' if len(hit) > 1 else ''} {', '.join(f.name for f in hit)}, version "
            f"{current.version}): choose to replace, or add a file of new rounds only",
            url=url, rounds=both, files=tuple(f.name for f in hit))
    for f in hit:
        lost = [r for r in (f.rounds or ()) if r not in new_rounds]
        if lost:
            raise RoundsInSetError(
                f"replacing file {f.name!r} of the set {name!r} would drop its round"
                f"{'s' if len(lost) > 1 else ''} {', '.join(lost)}, which the added files "
                "do not hold: add a file with all of its rounds", url=url,
                rounds=tuple(lost), files=(f.name,), replacing=True)
    stays = [f for f in known if f not in hit]
    taken = sorted(added & {f.name for f in stays})
    if taken:
        error = invalid_parameter("files", fn, "names not taken by files that stay in the set",
                                  taken, error=FileNameTakenError)
        error.names = tuple(taken)
        raise error
    return stays


def dataset_id_of(files: Sequence[tuple[str, str, FileContent]]) -> str:
    """The id :meth:`Workspace.save_dataset` gives these files, without saving them.

    The SHA-256 of the sorted ``(kind, name, sha256 of the bytes)`` of the files: the
    order of the files, the dataset's name and note do not change it.

    Examples
    --------
    >>> a = dataset_id_of([("qrels", "q.txt", b"q1 0 d1 1\\n"), ("run", "r.txt", b"x")])
    >>> b = dataset_id_of([("run", "r.txt", b"x"), ("qrels", "q.txt", b"q1 0 d1 1\\n")])
    >>> a == b, len(a)
    (True, 64)
    >>> a == dataset_id_of([("qrels", "q.txt", b"q1 0 d1 1\\n"), ("run", "r2.txt", b"x")])
    False
    """
    checked = file_tuples(files, "dataset_id_of")
    return manifest_id([(k, n, hashlib.sha256(v).hexdigest()) for k, n, v in checked])


def dataset_id_from_sha256(entries: Sequence[tuple[str, str, str]]) -> str:
    """:func:`dataset_id_of` from each file's ``(kind, name, SHA-256 hex digest)``, for a
    caller that already hashed the bytes (they are not hashed again).

    >>> import hashlib
    >>> files = [("qrels", "q.txt", b"q1 0 d1 1\\n"), ("run", "r.txt", b"x")]
    >>> dataset_id_from_sha256([(k, n, hashlib.sha256(v).hexdigest()) for k, n, v in files]
    ...                        ) == dataset_id_of(files)
    True
    """
    checked = file_tuples([(k, n, b"") for k, n, _ in entries], "dataset_id_from_sha256")
    shas = [sha for _, _, sha in entries]
    for sha in shas:
        if not (isinstance(sha, str) and len(sha) == 64
                and all(c in "0123456789abcdef" for c in sha)):
            raise invalid_parameter("entries", "dataset_id_from_sha256",
                                    "lower-case hex SHA-256 digests (64 characters)", sha)
    return manifest_id([(k, n, sha) for (k, n, _), sha in zip(checked, shas, strict=True)])


def save_dataset(store: Store, files: Sequence[tuple[str, str, FileContent]], *, name: str,
                 note: str = "", saved_by: str | None = None,
                 rounds: Mapping[str, FileRounds] | None = None, actor: Actor = ANONYMOUS,
                 project: str = DEFAULT_PROJECT) -> DatasetInfo:
    """Save ``files`` as a dataset (see :meth:`Workspace.save_dataset`)."""
    fn = "Workspace.save_dataset"
    checked = file_tuples(files, fn)
    check_text(name, "name", fn)
    check_text(note, "note", fn, allow_empty=True)
    check_actor(actor, fn)
    who = recorded_name(actor, saved_by, "saved_by", fn)
    check_text(project, "project", fn)
    with store.transaction("read the roles") as conn:
        pid = project_id(conn, project, fn)
        require(conn, actor, pid, "editor", "save a dataset")
    stated = check_rounds(rounds, {n for _, n, _ in checked}, fn)
    hashes = [hashlib.sha256(view).hexdigest() for _, _, view in checked]
    dataset_id = manifest_id([(k, n, h) for (k, n, _), h in zip(checked, hashes,
                                                                   strict=True)])
    existing = find_dataset(store, dataset_id, actor=actor)
    if existing is not None:
        return existing
    content = dict(zip(hashes, (view for _, _, view in checked), strict=True))
    with store.transaction("look up stored files") as conn:
        stored = present(conn, list(content))
    # compress outside the write transaction, so that writers queue briefly
    prepared = {sha: split_chunks(view) for sha, view in content.items()
                if sha not in stored}

    def work(conn: Connection) -> DatasetInfo:
        require(conn, actor, pid, "editor", "save a dataset")
        now = utc_now()
        # lock (or create) every content in one global order: no deadlock, and no
        # concurrent delete can remove a content this dataset is about to use
        for sha in sorted(content):
            lock_or_insert(conn, store.dialect, sha, content[sha], prepared, now)
        inserted = conn.execute(
            insert_or_skip(store.dialect, DATASETS)
            .values(id=dataset_id, name=name, note=note, saved_by=who, saved_at=now,
                    project_id=pid)
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(DATASETS.c.id)).first()
        if inserted is not None:  # else a concurrent save of the same files won
            conn.execute(FILES.insert(), [
                {"dataset_id": dataset_id, "position": i, "kind": kind, "name": fname,
                 "blob_sha256": sha}
                for i, ((kind, fname, _), sha) in enumerate(zip(checked, hashes,
                                                                strict=True))])
            conn.execute(VERSIONS.insert().values(dataset_id=dataset_id, version=1,
                                                  saved_at=now, saved_by=who, note=note))
            conn.execute(VERSION_FILES.insert(), [
                member_row(dataset_id, 1, i, True, stated.get(fname))
                for i, (_, fname, _) in enumerate(checked)])
            log(conn, store, actor, "dataset saved", project=project, target=dataset_id,
                who=who, detail={"name": name, "version": 1,
                                 "files": [fname for _, fname, _ in checked]})
        return infos(conn, DATASETS.c.id == dataset_id)[0]

    return store.write(f"save dataset {name!r}", work)


def find_dataset(store: Store, dataset_id: str, *,
                 actor: Actor = ANONYMOUS) -> DatasetInfo | None:
    """The dataset with this id (or unambiguous prefix), or ``None`` if none."""
    try:
        return get_dataset(store, dataset_id, actor=actor)
    except DatasetNotFoundError:
        return None


def get_dataset(store: Store, dataset_id: str, version: int | None = None, *,
                actor: Actor = ANONYMOUS) -> DatasetInfo:
    """The dataset ``dataset_id`` at ``version`` (see :meth:`Workspace.get_dataset`)."""
    fn = "Workspace.get_dataset"
    check_actor(actor, fn)
    if version is not None and (isinstance(version, bool) or not isinstance(version, int)):
        raise invalid_parameter("version", fn, "None or an int >= 1", version,
                                error=TypeError)
    with store.transaction("read a dataset") as conn:
        full = store.resolve(conn, dataset_id, fn)
        readable(conn, actor, full)
        if version is not None:
            latest = latest_version(conn, full)
            if not 1 <= version <= latest:
                raise invalid_parameter("version", fn,
                                        f"None or a version from 1 to {latest}", version)
        found = infos(conn, DATASETS.c.id == full, version=version)
    if not found:  # pragma: no cover - resolved inside the same snapshot
        raise store.not_found(dataset_id)
    return found[0]


def list_datasets(store: Store, *, actor: Actor = ANONYMOUS,
                  project: str | None = None) -> list[DatasetInfo]:
    """The datasets (see :meth:`Workspace.list_datasets`), the most recently saved first."""
    fn = "Workspace.list_datasets"
    check_actor(actor, fn)
    with store.transaction("list datasets") as conn:
        where: list[sa.ColumnElement[bool]] = [
            DATASETS.c.project_id.in_(readable_projects(conn, actor))]
        if project is not None:
            where.append(DATASETS.c.project_id == project_id(conn, project, fn))
        return infos(conn, sa.and_(*where))


def latest_version(conn: Connection, full: str) -> int:
    return int(conn.execute(sa.select(sa.func.max(VERSIONS.c.version)).where(
        VERSIONS.c.dataset_id == full)).scalar() or 1)


def infos(conn: Connection, where: sa.ColumnElement[bool], *,
           version: int | None = None) -> list[DatasetInfo]:
    """The datasets ``where`` selects, each at ``version`` (``None``: its newest)."""
    rows = conn.execute(sa.select(DATASETS, PROJECTS.c.name.label("project"))
                        .join(PROJECTS, PROJECTS.c.id == DATASETS.c.project_id)
                        .where(where).order_by(DATASETS.c.saved_at.desc(),
                                               DATASETS.c.id)).all()
    latest_of = {str(i): int(v) for i, v in conn.execute(
        sa.select(VERSIONS.c.dataset_id, sa.func.max(VERSIONS.c.version))
        .join(DATASETS, DATASETS.c.id == VERSIONS.c.dataset_id)
        .where(where).group_by(VERSIONS.c.dataset_id)).all()}
    shown = {r.id: version if version is not None else int(latest_of.get(r.id, 1))
             for r in rows}
    files: dict[str, list[FileInfo]] = {row.id: [] for row in rows}
    file_rows = conn.execute(
        sa.select(FILES, BLOBS.c.size, VERSION_FILES.c.version,
                  VERSION_FILES.c.rounds, VERSION_FILES.c.n_rows)
        .join(BLOBS, BLOBS.c.sha256 == FILES.c.blob_sha256)
        .join(DATASETS, DATASETS.c.id == FILES.c.dataset_id)
        .join(VERSION_FILES, sa.and_(VERSION_FILES.c.dataset_id == FILES.c.dataset_id,
                                      VERSION_FILES.c.position == FILES.c.position))
        .where(where, *(() if version is None else (VERSION_FILES.c.version == version,)))
        .order_by(FILES.c.dataset_id, FILES.c.position)).all()
    for f in file_rows:
        if f.version == shown[f.dataset_id]:
            files[f.dataset_id].append(file_info(f))
    return [DatasetInfo(id=r.id, name=r.name, note=r.note, saved_by=r.saved_by,
                        saved_at=utc(r.saved_at), files=tuple(files[r.id]),
                        version=shown[r.id], latest_version=int(latest_of.get(r.id, 1)),
                        project=r.project)
            for r in rows]


def versions(store: Store, dataset_id: str, *,
             actor: Actor = ANONYMOUS) -> list[DatasetVersion]:
    """Every version of a dataset, the first (as saved) first: when, by whom, the files
    it added with their rounds and rows, the files it replaced."""
    check_actor(actor, "Workspace.versions")
    with store.transaction("list versions") as conn:
        full = store.resolve(conn, dataset_id, "Workspace.versions")
        readable(conn, actor, full)
        heads = conn.execute(sa.select(VERSIONS).where(VERSIONS.c.dataset_id == full)
                             .order_by(VERSIONS.c.version)).all()
        rows = conn.execute(
            sa.select(FILES, BLOBS.c.size, VERSION_FILES.c.version,
                      VERSION_FILES.c.added, VERSION_FILES.c.rounds,
                      VERSION_FILES.c.n_rows)
            .join(BLOBS, BLOBS.c.sha256 == FILES.c.blob_sha256)
            .join(VERSION_FILES,
                  sa.and_(VERSION_FILES.c.dataset_id == FILES.c.dataset_id,
                          VERSION_FILES.c.position == FILES.c.position))
            .where(FILES.c.dataset_id == full)
            .order_by(VERSION_FILES.c.version, FILES.c.position)).all()
    members: dict[int, list[Any]] = {}
    for r in rows:
        members.setdefault(int(r.version), []).append(r)
    out: list[DatasetVersion] = []
    before: dict[int, FileInfo] = {}
    for h in heads:
        mine = members.get(int(h.version), [])
        now = {int(r.position): file_info(r) for r in mine}
        out.append(DatasetVersion(
            dataset_id=full, version=int(h.version), saved_at=utc(h.saved_at),
            saved_by=h.saved_by, note=h.note,
            added=tuple(file_info(r) for r in mine if r.added),
            replaced=tuple(f for p, f in before.items() if p not in now),
            n_files=len(mine)))
        before = now
    return out


def add_to_dataset(store: Store, dataset_id: str,
                   files: Sequence[tuple[str, str, FileContent]], *,
                   rounds: Mapping[str, FileRounds], saved_by: str | None = None,
                   replace: bool = False, note: str = "",
                   actor: Actor = ANONYMOUS) -> DatasetInfo:
    """Add ``files`` as the next version (see :meth:`Workspace.add_to_dataset`)."""
    fn = "Workspace.add_to_dataset"
    checked = file_tuples(files, fn)
    check_actor(actor, fn)
    who = recorded_name(actor, saved_by, "saved_by", fn)
    check_text(note, "note", fn, allow_empty=True)
    if not isinstance(replace, bool):
        raise invalid_parameter("replace", fn, "a bool", replace, error=TypeError)
    added_names = {n for _, n, _ in checked}
    stated = check_rounds(rounds, None, fn)
    missing = sorted(added_names - set(stated))
    if missing:
        raise invalid_parameter("rounds", fn, "the rounds of every added file (missing: "
                                + ", ".join(missing) + ")", sorted(stated))
    hashes = [hashlib.sha256(view).hexdigest() for _, _, view in checked]
    # labeling rounds are a rater's to add; other files an editor's
    needed = "rater" if all(kind in ("labels", "gsb") for kind, _, _ in checked) else "editor"
    action = "add labeling rounds" if needed == "rater" else "add files to a dataset"
    with store.transaction("read a dataset") as conn:
        full = store.resolve(conn, dataset_id, fn)
        pid, project = dataset_project(conn, full)
        require(conn, actor, pid, needed, action)
        stored = present(conn, hashes)
    content = dict(zip(hashes, (view for _, _, view in checked), strict=True))
    prepared = {sha: split_chunks(view) for sha, view in content.items()
                if sha not in stored}

    def work(conn: Connection) -> DatasetInfo:
        now = utc_now()
        for sha in sorted(content):
            lock_or_insert(conn, store.dialect, sha, content[sha], prepared, now)
        head = conn.execute(sa.select(DATASETS.c.name).where(DATASETS.c.id == full)
                            .with_for_update()).first()  # one adder at a time
        if head is None:
            raise store.not_found(dataset_id)
        require(conn, actor, pid, needed, action)
        current = infos(conn, DATASETS.c.id == full)[0]
        kept = {(f.name, f.sha256) for f in current.files}
        if all((n, h) in kept for (_, n, _), h in zip(checked, hashes, strict=True)):
            return current  # already added: nothing changes
        plan = plan_version(current, stated, added_names, replace, head.name, store.url)
        version = current.version + 1
        next_position = int(conn.execute(sa.select(sa.func.count()).where(
            FILES.c.dataset_id == full)).scalar_one())
        conn.execute(VERSIONS.insert().values(dataset_id=full, version=version,
                                              saved_at=now, saved_by=who, note=note))
        members: list[dict[str, object]] = [
            {"dataset_id": full, "version": version, "position": f.position,
             "added": False,
             "rounds": json.dumps(list(f.rounds or ()), ensure_ascii=False),
             "n_rows": f.rows} for f in plan]
        new_files = []
        for i, ((kind, fname, _), sha) in enumerate(zip(checked, hashes, strict=True)):
            new_files.append({"dataset_id": full, "position": next_position + i,
                              "kind": kind, "name": fname, "blob_sha256": sha})
            members.append(member_row(full, version, next_position + i, True, stated[fname]))
        conn.execute(FILES.insert(), new_files)
        conn.execute(VERSION_FILES.insert(), members)
        log(conn, store, actor, "version added", project=project, target=full, who=who,
            detail={"name": head.name, "version": version,
                    "files": [f["name"] for f in new_files], "replace": replace,
                    "rounds": sorted({r for n in added_names for r in stated[n].rounds})})
        return infos(conn, DATASETS.c.id == full)[0]

    return store.write(f"add files to dataset {full[:SHORT_ID_LENGTH]}", work)


def read_file(store: Store, dataset_id: str, position: int, *,
              actor: Actor = ANONYMOUS) -> bytes:
    """The checked bytes of one file (see :meth:`Workspace.read_file`)."""
    fn = "Workspace.read_file"
    check_actor(actor, fn)
    with store.transaction("read a file") as conn:
        full = store.resolve(conn, dataset_id, fn)
        readable(conn, actor, full)
        n_files = conn.execute(sa.select(sa.func.count()).where(
            FILES.c.dataset_id == full)).scalar_one()
        if isinstance(position, bool) or not isinstance(position, int):
            raise invalid_parameter("position", fn, "an int", position, error=TypeError)
        if not 0 <= position < n_files:
            raise invalid_parameter("position", fn,
                                    f"a file position from 0 to {n_files - 1}", position)
        sha = conn.execute(sa.select(FILES.c.blob_sha256).where(
            FILES.c.dataset_id == full, FILES.c.position == position)).scalar_one()
        return read_blob(conn, sha, url=store.url,
                          what=f"file {position} of dataset {full[:SHORT_ID_LENGTH]}")


def delete_dataset(store: Store, dataset_id: str, *, confirm: str,
                   actor: Actor = ANONYMOUS) -> DeletedDataset:
    """Delete a dataset (see :meth:`Workspace.delete_dataset`)."""
    fn = "Workspace.delete_dataset"
    check_actor(actor, fn)
    with store.transaction("read a dataset") as conn:
        full = store.resolve(conn, dataset_id, fn)
        pid, project = dataset_project(conn, full)
        require(conn, actor, pid, "admin", "delete a dataset")
    if not isinstance(confirm, str) or confirm.strip().lower() not in (
            full, full[:SHORT_ID_LENGTH]):
        raise invalid_parameter(
            "confirm", fn, f"the dataset's id or short id {full[:SHORT_ID_LENGTH]!r}",
            confirm)

    def work(conn: Connection) -> DeletedDataset:
        shas = sorted(set(conn.execute(sa.select(FILES.c.blob_sha256).where(
            FILES.c.dataset_id == full)).scalars()))
        # lock in the savers' order, contents (sorted) before the dataset row, so
        # that nothing deadlocks; a saver reusing one of these contents waits, then
        # finds it gone (and stores it again) or still used by another dataset
        lock_for_delete(conn, shas)
        row = conn.execute(sa.select(DATASETS.c.name).where(DATASETS.c.id == full)
                           .with_for_update()).first()  # waits for add_note
        if row is None:
            raise store.not_found(dataset_id)
        require(conn, actor, pid, "admin", "delete a dataset")
        # (counted with RETURNING: psycopg's rowcount is not reliable through SQLAlchemy)
        n_notes = len(conn.execute(sa.delete(NOTES).where(NOTES.c.dataset_id == full)
                                   .returning(NOTES.c.id)).all())
        conn.execute(sa.delete(VERSION_FILES).where(VERSION_FILES.c.dataset_id == full))
        conn.execute(sa.delete(VERSIONS).where(VERSIONS.c.dataset_id == full))
        n_files = len(conn.execute(sa.delete(FILES).where(FILES.c.dataset_id == full)
                                   .returning(FILES.c.position)).all())
        conn.execute(sa.delete(DATASETS).where(DATASETS.c.id == full))  # locked above
        removed, freed = remove_unused(conn, shas)
        log(conn, store, actor, "dataset deleted", project=project, target=full,
            detail={"name": row.name, "files": n_files, "notes": n_notes})
        return DeletedDataset(id=full, name=row.name, files=n_files, notes=n_notes,
                              blobs_removed=removed, bytes_freed=freed)

    return store.write(f"delete dataset {full[:SHORT_ID_LENGTH]}", work)


def usage(store: Store) -> WorkspaceUsage:
    """Counts and sizes of what the workspace holds."""
    with store.transaction("measure the workspace") as conn:
        def count(table: sa.Table) -> int:
            return int(conn.execute(sa.select(sa.func.count()).select_from(table))
                       .scalar_one())

        raw, stored = conn.execute(sa.select(
            sa.func.coalesce(sa.func.sum(BLOBS.c.size), 0),
            sa.func.coalesce(sa.func.sum(BLOBS.c.stored_size), 0))).one()
        return WorkspaceUsage(datasets=count(DATASETS), files=count(FILES),
                              blobs=count(BLOBS), raw_bytes=int(raw),
                              stored_bytes=int(stored), notes=count(NOTES))
