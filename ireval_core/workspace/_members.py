"""Projects and members: sign-in, listing members, setting roles; each write in the log."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..errors import NotAllowedError, invalid_parameter
from ..params import InstanceOf, check
from ._access import (
    ADMINS_VAR,
    DEFAULT_PROJECT,
    Actor,
    Member,
    Project,
    audit_scope,
    check_role,
    first_role,
    has_admin,
    listed_admin,
    project_id,
    projects_allowing,
    require,
    role_of,
    team_mode,
)
from ._audit import AuditCheck, AuditEntry, append, entries, iso, verify
from ._db import Store
from ._schema import MEMBERS, PROJECTS
from ._types import check_text, utc, utc_now


def log(conn: Connection, store: Store, actor: Actor, action: str, *, project: str,
        target: str, detail: Mapping[str, Any], who: str | None = None) -> None:
    """Append a row for a write by ``actor`` (``who``: the typed name of a person not
    signed in) to the audit log."""
    append(conn, store.dialect, at=utc_now(), actor_email=actor.email,
           actor_name=actor.name if actor.signed_in or who is None else who,
           action=action, project=project, target=target, detail=detail)


def check_actor(actor: object, function: str) -> Actor:
    """``actor`` checked to be an :class:`Actor`."""
    value: Actor = check(actor, "actor", function, InstanceOf(Actor))
    return value


def recorded_name(actor: Actor, typed: object, param: str, function: str) -> str:
    """The name a record keeps: a signed-in person's :attr:`Actor.label` (a typed name is
    not used), else the typed name, checked."""
    if actor.signed_in:
        return actor.label
    return check_text(typed, param, function)


def projects(store: Store) -> list[Project]:
    """Every project, the default first."""
    with store.transaction("list projects") as conn:
        rows = conn.execute(sa.select(PROJECTS).order_by(PROJECTS.c.id)).all()
    return [Project(id=int(r.id), name=r.name, created_at=utc(r.created_at)) for r in rows]


def create_project(store: Store, name: str, *, actor: Actor) -> Project:
    """A new project (see :meth:`Workspace.create_project`)."""
    fn = "Workspace.create_project"
    check_text(name, "name", fn)
    check_actor(actor, fn)

    def work(conn: Connection) -> Project:
        require(conn, actor, project_id(conn, DEFAULT_PROJECT, fn), "admin",
                "create a project")
        if conn.execute(sa.select(PROJECTS.c.id).where(PROJECTS.c.name == name)).first():
            raise invalid_parameter("name", fn, "the name of no other project", name)
        now = utc_now()
        pid = int(conn.execute(PROJECTS.insert().values(name=name, created_at=now)
                               .returning(PROJECTS.c.id)).scalar_one())
        if actor.signed_in:
            conn.execute(MEMBERS.insert().values(
                project_id=pid, email=actor.email, name=actor.name, role="admin",
                added_at=now, added_by=actor.email))
        log(conn, store, actor, "project created", project=name, target=name, detail={})
        return Project(id=pid, name=name, created_at=now)

    return store.write(f"create project {name!r}", work)


def sign_in(store: Store, actor: Actor) -> str | None:
    """Record a sign-in (see :meth:`Workspace.sign_in`)."""
    fn = "Workspace.sign_in"
    check_actor(actor, fn)
    if not actor.signed_in:
        raise invalid_parameter("actor", fn, "a signed-in person", actor)

    def work(conn: Connection) -> str | None:
        pid = project_id(conn, DEFAULT_PROJECT, fn)
        where = (MEMBERS.c.project_id == pid, MEMBERS.c.email == actor.email)
        found = conn.execute(sa.select(MEMBERS.c.role).where(*where)).scalar()
        if found != "admin" and listed_admin(actor.email) and not has_admin(conn, pid):
            now = utc_now()
            if found is not None:
                conn.execute(sa.delete(MEMBERS).where(*where))
            conn.execute(MEMBERS.insert().values(project_id=pid, email=actor.email,
                                                 name=actor.name, role="admin",
                                                 added_at=now, added_by=ADMINS_VAR))
            if found is None:
                log(conn, store, actor, "member added", project=DEFAULT_PROJECT,
                    target=actor.email, detail={"role": "admin", "by": ADMINS_VAR})
            else:
                log(conn, store, actor, "role changed", project=DEFAULT_PROJECT,
                    target=actor.email,
                    detail={"from": str(found), "to": "admin", "by": ADMINS_VAR})
            return "admin"
        if found is not None:
            return str(found)
        role, why = first_role(store.url)
        if role is None:
            return None
        conn.execute(MEMBERS.insert().values(project_id=pid, email=actor.email,
                                             name=actor.name, role=role,
                                             added_at=utc_now(), added_by=why))
        log(conn, store, actor, "member added", project=DEFAULT_PROJECT,
            target=actor.email, detail={"role": role, "by": why})
        return role

    return store.write("record a sign-in", work)


def role(store: Store, actor: Actor, project: str) -> str | None:
    """``actor``'s role in ``project`` (see :meth:`Workspace.role`)."""
    fn = "Workspace.role"
    check_actor(actor, fn)
    with store.transaction("read a role") as conn:
        return role_of(conn, actor, project_id(conn, project, fn))


def has_members(store: Store) -> bool:
    """Whether the workspace is in team mode (see :meth:`Workspace.has_members`)."""
    with store.transaction("read the members") as conn:
        return team_mode(conn)


def members(store: Store, project: str, *, actor: Actor) -> list[Member]:
    """The members of ``project`` (see :meth:`Workspace.members`)."""
    fn = "Workspace.members"
    check_actor(actor, fn)
    with store.transaction("list members") as conn:
        pid = project_id(conn, project, fn)
        require(conn, actor, pid, "admin", "list the members")
        rows = conn.execute(sa.select(MEMBERS).where(MEMBERS.c.project_id == pid)
                            .order_by(MEMBERS.c.email)).all()
    return [Member(project=project, email=r.email, name=r.name, role=r.role,
                   added_at=utc(r.added_at), added_by=r.added_by) for r in rows]


def set_role(store: Store, email: str, new_role: str | None, *, actor: Actor,
             project: str, name: str = "") -> Member | None:
    """Add a member, change their role or remove them (see :meth:`Workspace.set_role`)."""
    fn = "Workspace.set_role"
    check_actor(actor, fn)
    person = Actor(email, name)  # checks and normalises the e-mail
    if new_role is not None:
        check_role(new_role, "role", fn)

    def work(conn: Connection) -> Member | None:
        pid = project_id(conn, project, fn)
        require(conn, actor, pid, "admin", "set roles")
        where = (MEMBERS.c.project_id == pid, MEMBERS.c.email == person.email)
        old = conn.execute(sa.select(MEMBERS).where(*where)).first()
        before = None if old is None else str(old.role)
        if before == "admin" and new_role != "admin":
            admins = conn.execute(sa.select(sa.func.count()).where(
                MEMBERS.c.project_id == pid, MEMBERS.c.role == "admin")).scalar_one()
            if admins == 1:
                raise NotAllowedError(
                    f"{person.email} is the last admin of project {project!r}: make "
                    "another person admin first", who=actor.email or actor.name,
                    action="remove the last admin", project=project, role="admin",
                    needed="admin")
        now = utc_now()
        by = actor.email or actor.name
        if old is not None:
            conn.execute(sa.delete(MEMBERS).where(*where))
        if new_role is not None:
            conn.execute(MEMBERS.insert().values(
                project_id=pid, email=person.email,
                name=name.strip() or (old.name if old is not None else person.name),
                role=new_role, added_at=now, added_by=by))
        log(conn, store, actor, "role changed", project=project, target=person.email,
            detail={"from": before, "to": new_role})
        if new_role is None:
            return None
        row = conn.execute(sa.select(MEMBERS).where(*where)).one()
        return Member(project=project, email=row.email, name=row.name, role=row.role,
                      added_at=utc(row.added_at), added_by=row.added_by)

    return store.write(f"set the role of {person.email}", work)


def projects_for(store: Store, actor: Actor, needed: str) -> list[str]:
    """The projects where ``actor`` may act as ``needed`` (see
    :meth:`Workspace.projects_allowing`)."""
    fn = "Workspace.projects_allowing"
    check_actor(actor, fn)
    check_role(needed, "needed", fn)
    with store.transaction("read the roles") as conn:
        return projects_allowing(conn, actor, needed)


def audit(store: Store, since: str | datetime | None = None, *,
          actor: Actor) -> list[AuditEntry]:
    """The audit log (see :meth:`Workspace.audit`)."""
    check_actor(actor, "Workspace.audit")
    start = None
    if since is not None:
        when = since
        if isinstance(since, str):
            try:
                when = datetime.fromisoformat(since.strip())
            except ValueError:
                raise invalid_parameter("since", "Workspace.audit", "None, a datetime or "
                                        "an ISO 8601 date or time (2026-11-01, "
                                        "2026-11-01T09:30)", since) from None
        if not isinstance(when, datetime):
            raise invalid_parameter("since", "Workspace.audit", "None, a datetime or an "
                                    "ISO 8601 date or time", since, error=TypeError)
        start = iso(utc(when))
    with store.transaction("read the audit log") as conn:
        scope = audit_scope(conn, actor)
        found = entries(conn, start)
    return found if scope is None else [e for e in found if e.project in scope]


def verify_audit(store: Store, *, actor: Actor) -> AuditCheck:
    """Check the audit log's chain (see :meth:`Workspace.verify_audit`)."""
    check_actor(actor, "Workspace.verify_audit")
    with store.transaction("verify the audit log") as conn:
        audit_scope(conn, actor)
        return verify(conn)
