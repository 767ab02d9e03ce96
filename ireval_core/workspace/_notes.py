"""Notes and decisions on a dataset, a comparison or a query: append-only.

An edit is a new note that names the one it ``supersedes``; nothing is overwritten, and
the current notes are those no later note supersedes.
"""

from __future__ import annotations

import hashlib

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..errors import invalid_parameter
from ..params import InstanceOf, Options, any_of, check
from ._access import ANONYMOUS, Actor, dataset_project, readable, readable_projects, require
from ._db import Store
from ._members import check_actor, log, recorded_name
from ._schema import DATASETS, NOTES
from ._types import (
    JUDGING_SET_KIND,
    NOTE_KINDS,
    JudgingSet,
    Note,
    Target,
    check_text,
    stored_keys,
    utc,
    utc_now,
)

MAX_OVERLAP = 0.5
"""The largest overlap share a judging set may ask for."""


def add_note(store: Store, dataset_id: str, target: Target, text: str, *,
             author: str | None = None, kind: str = "note", supersedes: int | None = None,
             actor: Actor = ANONYMOUS) -> Note:
    """Append a note (see :meth:`Workspace.add_note`)."""
    fn = "Workspace.add_note"
    check(target, "target", fn, InstanceOf(Target))
    check_text(text, "text", fn)
    check_actor(actor, fn)
    who = recorded_name(actor, author, "author", fn)
    check(kind, "kind", fn, Options(NOTE_KINDS))
    if supersedes is not None and (isinstance(supersedes, bool)
                                   or not isinstance(supersedes, int)):
        raise invalid_parameter("supersedes", fn, "None or a note id", supersedes,
                                error=TypeError)
    action = "record a decision" if kind == "decision" else "add a note"
    with store.transaction("read a dataset") as conn:
        full = store.resolve(conn, dataset_id, fn)
        pid, project = dataset_project(conn, full)
        require(conn, actor, pid, "editor", action)
        if supersedes is not None:
            old = conn.execute(sa.select(NOTES).where(NOTES.c.id == supersedes)).first()
            if old is None or (old.dataset_id, old.target_kind, old.target_key) != (
                    full, target.kind, target.key):
                raise invalid_parameter(
                    "supersedes", fn, "None or the id of a note on the same dataset "
                    "and target", supersedes)

    def work(conn: Connection) -> int:
        if conn.execute(sa.select(DATASETS.c.id).where(DATASETS.c.id == full)
                        .with_for_update(key_share=True)).first() is None:
            raise store.not_found(dataset_id)
        require(conn, actor, pid, "editor", action)
        note_id = int(conn.execute(NOTES.insert().values(
            dataset_id=full, target_kind=target.kind, target_key=target.key, kind=kind,
            text=text, author=who, created_at=utc_now(), supersedes=supersedes)
            .returning(NOTES.c.id)).scalar_one())
        log(conn, store, actor, "decision recorded" if kind == "decision" else "note added",
            project=project, target=f"note {note_id}", who=who,
            detail={"dataset": full, "on": str(target), "supersedes": supersedes,
                    "text_sha256": hashlib.sha256(text.encode("utf-8")).hexdigest()})
        return note_id

    note_id = store.write("add a note", work)
    with store.transaction("read a note") as conn:
        return note_rows(conn, NOTES.c.id == note_id, include_superseded=True)[0]


def select_notes(store: Store, dataset_id: str | None = None,
                 target: Target | None = None, *, kind: str | None = None,
                 include_superseded: bool = False, actor: Actor = ANONYMOUS) -> list[Note]:
    """Notes in the order they were added (see :meth:`Workspace.notes`)."""
    fn = "Workspace.notes"
    check_actor(actor, fn)
    check(target, "target", fn, any_of(None, InstanceOf(Target)))
    check(kind, "kind", fn, any_of(None, Options(NOTE_KINDS)))
    with store.transaction("read notes") as conn:
        where: list[sa.ColumnElement[bool]] = []
        if dataset_id is not None:
            full = store.resolve(conn, dataset_id, fn)
            readable(conn, actor, full)
            where.append(NOTES.c.dataset_id == full)
        else:  # every dataset the actor may read
            where.append(NOTES.c.dataset_id.in_(
                sa.select(DATASETS.c.id).where(
                    DATASETS.c.project_id.in_(readable_projects(conn, actor)))))
        if target is not None:
            where += [NOTES.c.target_kind == target.kind,
                      NOTES.c.target_key.in_(stored_keys(target))]
        where.append(NOTES.c.kind.in_(NOTE_KINDS) if kind is None else NOTES.c.kind == kind)
        return note_rows(conn, sa.and_(sa.true(), *where),
                         include_superseded=include_superseded)


def note_rows(conn: Connection, where: sa.ColumnElement[bool], *,
              include_superseded: bool) -> list[Note]:
    """The notes ``where`` selects, each with the latest note that supersedes it."""
    newer = NOTES.alias("newer")
    superseded_by = (sa.select(sa.func.max(newer.c.id))
                     .where(newer.c.supersedes == NOTES.c.id)
                     .scalar_subquery().label("superseded_by"))
    query = sa.select(NOTES, superseded_by).where(where).order_by(NOTES.c.id)
    rows = conn.execute(query).all()
    return [Note(id=r.id, dataset_id=r.dataset_id,
                 target=Target(r.target_kind, r.target_key), kind=r.kind, text=r.text,
                 author=r.author, created_at=utc(r.created_at), supersedes=r.supersedes,
                 superseded_by=r.superseded_by)
            for r in rows if include_superseded or r.superseded_by is None]


def set_judging_set(store: Store, dataset_id: str, settings: JudgingSet, *,
                    author: str | None = None, actor: Actor = ANONYMOUS) -> JudgingSet:
    """Record a new version of a dataset's judging set (see
    :meth:`Workspace.set_judging_set`)."""
    fn = "Workspace.set_judging_set"
    check(settings, "settings", fn, InstanceOf(JudgingSet))
    check_text(settings.guidelines, "guidelines", fn, allow_empty=True)
    check_text(settings.label_map, "label_map", fn, allow_empty=True)
    if settings.label_map.strip():
        from ..labels.labelmap import LabelMap  # here: the labels package is heavy

        try:
            LabelMap.parse(settings.label_map)
        except ValueError:
            raise invalid_parameter(
                "label_map", fn, "a label map: word=grade pairs such as "
                "'none=0,low=1,mid=2,high=3', or a built-in map's name",
                settings.label_map) from None
    overlap = settings.overlap
    if isinstance(overlap, bool) or not isinstance(overlap, (int, float)) or not (
            0 <= overlap <= MAX_OVERLAP):
        raise invalid_parameter("overlap", fn, f"a share from 0 to {MAX_OVERLAP}", overlap)
    check_actor(actor, fn)
    who = recorded_name(actor, author, "author", fn)
    action = "edit the judging set"

    def work(conn: Connection) -> None:
        full = store.resolve(conn, dataset_id, fn)
        if conn.execute(sa.select(DATASETS.c.id).where(DATASETS.c.id == full)
                        .with_for_update(key_share=True)).first() is None:
            raise store.not_found(dataset_id)
        pid, project = dataset_project(conn, full)
        require(conn, actor, pid, "editor", action)
        text = settings.as_text()
        previous = _newest_setting(conn, full)
        note_id = int(conn.execute(NOTES.insert().values(
            dataset_id=full, target_kind="dataset", target_key="", kind=JUDGING_SET_KIND,
            text=text, author=who, created_at=utc_now(),
            supersedes=None if previous is None else previous.id)
            .returning(NOTES.c.id)).scalar_one())
        log(conn, store, actor, "judging set edited", project=project,
            target=f"note {note_id}", who=who,
            detail={"dataset": full, "supersedes": None if previous is None else previous.id,
                    "overlap": float(overlap), "label_map": settings.label_map,
                    "guidelines_sha256": hashlib.sha256(
                        settings.guidelines.encode("utf-8")).hexdigest()})

    store.write("edit the judging set", work)
    return judging_set_history(store, dataset_id, actor=actor)[-1]


def _newest_setting(conn: Connection, full: str) -> Note | None:
    rows = note_rows(conn, sa.and_(NOTES.c.dataset_id == full,
                                   NOTES.c.kind == JUDGING_SET_KIND), include_superseded=False)
    return rows[-1] if rows else None


def judging_set_history(store: Store, dataset_id: str, *,
                        actor: Actor = ANONYMOUS) -> list[JudgingSet]:
    """Every version of a dataset's judging set, oldest first (see
    :meth:`Workspace.judging_set_history`)."""
    fn = "Workspace.judging_set_history"
    check_actor(actor, fn)
    with store.transaction("read the judging set") as conn:
        full = store.resolve(conn, dataset_id, fn)
        readable(conn, actor, full)
        rows = note_rows(conn, sa.and_(NOTES.c.dataset_id == full,
                                       NOTES.c.kind == JUDGING_SET_KIND),
                         include_superseded=True)
    return [JudgingSet.from_text(n.text, version=i, edited_by=n.author,
                                 edited_at=n.created_at) for i, n in enumerate(rows, start=1)]
