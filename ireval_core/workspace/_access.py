"""Who may do what: the acting person, projects, members and their roles.

A workspace's datasets (labeling sets included) belong to projects; the datasets of a
workspace made before projects are in :data:`DEFAULT_PROJECT`. A person is a member of a
project with one of :data:`ROLES`, each allowing what the one before it does and more:
``viewer`` reads, ``rater`` also judges and adds labeling rounds, ``editor`` also saves
datasets, notes and decisions, ``admin`` also deletes and manages members.

Every write names its :class:`Actor`. A workspace without members is in **local mode**:
the anonymous local person (:meth:`Actor.anonymous`, the single user of a workspace
without sign-in) may do everything, under the name they type. Once a project has a
member, the workspace is in **team mode**: a person not signed in may not write, and a
signed-in person may do what their role in the dataset's project allows.

A person listed in ``IREVAL_ADMINS`` becomes an admin of the default project when they
sign in (:meth:`Workspace.sign_in`) while that project has no admin: the first sign-in
on an empty workspace, or a workspace whose people all joined as viewers. Once the
default project has an admin the list grants nothing more (an admin adds people and sets
roles), so a name added to the list later, or a server started with another list, never
makes an admin behind the admins' backs. Anyone else starts without access until an
admin adds them, or as a viewer when ``IREVAL_DEFAULT_ROLE=viewer``.

The audit log is read by the admins (each reads the rows of the projects they
administer), by the anonymous local user in local mode, and by :data:`OPERATOR`, whoever
runs the command line with the database's URL (and so could read the table with SQL
anyway); the app never acts as the operator.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from datetime import datetime

import sqlalchemy as sa
from sqlalchemy.engine import Connection

from ..errors import NotAllowedError, invalid_parameter
from ..params import Options, check
from ._schema import DATASETS, MEMBERS, PROJECTS
from ._types import WorkspaceError, check_text

ROLES = ("viewer", "rater", "editor", "admin")
"""The roles, each allowing what the ones before it allow and more."""

DEFAULT_PROJECT = "default"
"""The project of the datasets saved without one (and of every dataset saved before
projects existed)."""

ADMINS_VAR = "IREVAL_ADMINS"
"""Environment variable: comma-separated e-mails that become admins of the default project
when they sign in while it has no admin."""

DEFAULT_ROLE_VAR = "IREVAL_DEFAULT_ROLE"
"""Environment variable: ``viewer`` to let anyone who signs in read the default project."""

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+")


@dataclass(frozen=True)
class Actor:
    """The person a write is done by: a signed-in identity (e-mail and display name, as
    the identity provider verified them), or the anonymous local user of a workspace
    without sign-in (:meth:`anonymous`).

    >>> Actor("Ana@Example.org", "Ana Lopez").label
    'Ana Lopez <ana@example.org>'
    >>> Actor.anonymous().signed_in
    False
    """

    email: str
    """The e-mail, lower case (``""`` for the anonymous local user)."""
    name: str = ""
    """The display name (the e-mail when none is given)."""
    signed_in: bool = True
    """``False`` only for :meth:`anonymous` and :data:`OPERATOR`."""
    operator: bool = False
    """``True`` only for :data:`OPERATOR`: whoever runs the command line with the
    database's URL. It acts as the anonymous local user does, and also reads the audit
    log of a workspace with members."""

    def __post_init__(self) -> None:
        fn = "Actor"
        check_text(self.email, "email", fn, allow_empty=not self.signed_in)
        check_text(self.name, "name", fn, allow_empty=True)
        for flag in ("signed_in", "operator"):
            if not isinstance(getattr(self, flag), bool):
                raise invalid_parameter(flag, fn, "a bool", getattr(self, flag),
                                        error=TypeError)
        if self.operator and self.signed_in:
            raise invalid_parameter("operator", fn, "False for a signed-in person",
                                    self.operator)
        if self.signed_in:
            email = self.email.strip().lower()
            if not _EMAIL.fullmatch(email):
                raise invalid_parameter("email", fn, "an e-mail address", self.email)
            object.__setattr__(self, "email", email)
            object.__setattr__(self, "name", self.name.strip() or email)
        elif self.email:
            raise invalid_parameter("email", fn, "'' for a person not signed in", self.email)

    @classmethod
    def anonymous(cls, name: str = "local user") -> Actor:
        """The single local user of a workspace without sign-in."""
        return cls("", name, signed_in=False)

    @property
    def label(self) -> str:
        """How records name this person: ``Name <e-mail>`` (just the e-mail when the name
        is the e-mail); the name for the anonymous local user."""
        if not self.signed_in:
            return self.name
        return self.email if self.name == self.email else f"{self.name} <{self.email}>"


ANONYMOUS = Actor.anonymous()
"""The anonymous local user: every write's actor when none is given."""

OPERATOR = Actor("", "database operator", signed_in=False, operator=True)
"""Whoever runs the command line (``python -m ireval_core workspace audit``) with the
workspace's URL: reads the audit log in any mode; otherwise as :data:`ANONYMOUS`."""


@dataclass(frozen=True)
class Project:
    """A project: a group of datasets (and labeling sets) with its own members."""

    id: int
    name: str
    created_at: datetime


@dataclass(frozen=True)
class Member:
    """A person's role in a project."""

    project: str
    email: str
    name: str
    role: str
    """One of :data:`ROLES`."""
    added_at: datetime
    added_by: str
    """Who added them or last changed their role (``IREVAL_ADMINS`` or
    ``IREVAL_DEFAULT_ROLE`` for a first sign-in)."""


def rank(role: str | None) -> int:
    """0 for no access, then 1 (viewer) to 4 (admin)."""
    return 0 if role is None else ROLES.index(role) + 1


def check_role(role: object, param: str, function: str) -> str:
    """``role`` checked to be one of :data:`ROLES`."""
    value: str = check(role, param, function, Options(ROLES))
    return value


def team_mode(conn: Connection) -> bool:
    """Whether any project has a member (else the workspace is in local mode)."""
    return conn.execute(sa.select(MEMBERS.c.email).limit(1)).first() is not None


def project_id(conn: Connection, name: str, function: str) -> int:
    """The id of the project named ``name``; ``ValueError`` naming the projects if none."""
    found = conn.execute(sa.select(PROJECTS.c.id).where(PROJECTS.c.name == name)).scalar()
    if found is None:
        names = sorted(conn.execute(sa.select(PROJECTS.c.name)).scalars())
        raise invalid_parameter("project", function,
                                f"the name of a project ({', '.join(names)})", name)
    return int(found)


def dataset_project(conn: Connection, full: str) -> tuple[int, str]:
    """The id and name of the project the dataset ``full`` (its whole id) is in."""
    row = conn.execute(sa.select(PROJECTS.c.id, PROJECTS.c.name)
                       .join(DATASETS, DATASETS.c.project_id == PROJECTS.c.id)
                       .where(DATASETS.c.id == full)).one()
    return int(row.id), str(row.name)


def project_name(conn: Connection, pid: int) -> str:
    """The name of project ``pid``."""
    return str(conn.execute(sa.select(PROJECTS.c.name).where(PROJECTS.c.id == pid))
               .scalar_one())


def role_of(conn: Connection, actor: Actor, pid: int) -> str | None:
    """``actor``'s role in project ``pid``: ``"admin"`` for the anonymous local user in
    local mode, ``None`` for no access."""
    if not actor.signed_in:
        return None if team_mode(conn) else "admin"
    found = conn.execute(sa.select(MEMBERS.c.role).where(
        MEMBERS.c.project_id == pid, MEMBERS.c.email == actor.email)).scalar()
    return None if found is None else str(found)


def require(conn: Connection, actor: Actor, pid: int, needed: str, action: str) -> None:
    """Refuse with :class:`~ireval_core.errors.NotAllowedError` unless ``actor``'s role
    in project ``pid`` is ``needed`` or above."""
    role = role_of(conn, actor, pid)
    if rank(role) >= rank(needed):
        return
    project = project_name(conn, pid)
    if not actor.signed_in:
        message = (f"{actor.name} may not {action}: this workspace has members, so only a "
                   "signed-in person may read or write it (sign in)")
    else:
        has = f"a {role}" if role else "not a member"
        message = (f"{actor.email} may not {action} in project {project!r}: that needs the "
                   f"role {needed} or above, and they are {has} there (an admin of the "
                   "project can change it)")
    raise NotAllowedError(message, who=actor.email or actor.name, action=action,
                          project=project, role=role, needed=needed)


def readable(conn: Connection, actor: Actor, full: str) -> None:
    """Refuse with :class:`~ireval_core.errors.NotAllowedError` unless ``actor`` may read
    the dataset ``full`` (its whole id): a role in its project, ``viewer`` or above. The
    message of a signed-in person's refusal does not name the project (someone without a
    role there learns nothing of it from a link); the error's ``project`` does."""
    pid, project = dataset_project(conn, full)
    if not actor.signed_in or role_of(conn, actor, pid) is not None:
        require(conn, actor, pid, "viewer", "read the datasets")
        return
    raise NotAllowedError(
        f"{actor.email} may not read the datasets of this link: they are in a project "
        "where they have no role (whoever shared the link can ask that project's admin "
        "to add them)", who=actor.email, action="read the datasets", project=project,
        role=None, needed="viewer")


def readable_projects(conn: Connection, actor: Actor) -> list[int]:
    """The ids of the projects where ``actor`` has a role (may read)."""
    return [int(p) for p in conn.execute(sa.select(PROJECTS.c.id)).scalars()
            if role_of(conn, actor, int(p)) is not None]


def projects_allowing(conn: Connection, actor: Actor, needed: str) -> list[str]:
    """The names of the projects where ``actor``'s role is ``needed`` or above, the
    default project first, then in the order they were made."""
    rows = conn.execute(sa.select(PROJECTS.c.id, PROJECTS.c.name).order_by(PROJECTS.c.id))
    return [str(r.name) for r in rows.all()
            if rank(role_of(conn, actor, int(r.id))) >= rank(needed)]


def audit_scope(conn: Connection, actor: Actor) -> set[str] | None:
    """The projects whose audit rows ``actor`` may read (``None``: every row, the
    operator's and the local user's in local mode); refused with
    :class:`~ireval_core.errors.NotAllowedError` unless they are an admin of one.
    An admin of the default project also reads the rows in no project."""
    if actor.operator:
        return None
    admin_of = projects_allowing(conn, actor, "admin")
    if not actor.signed_in and admin_of:  # the anonymous local user in local mode
        return None
    if not admin_of:
        who = actor.email or actor.name
        message = (f"{who} may not read the audit log: that needs the role admin in a "
                   "project" + (", and they are an admin of none" if actor.signed_in else
                                ": this workspace has members, so only a signed-in admin "
                                "may (sign in), or the command line (python -m ireval_core "
                                "workspace audit)"))
        raise NotAllowedError(message, who=who, action="read the audit log",
                              project=DEFAULT_PROJECT, role=None, needed="admin")
    return set(admin_of) | ({""} if DEFAULT_PROJECT in admin_of else set())


def listed_admin(email: str) -> bool:
    """Whether ``IREVAL_ADMINS`` lists ``email``."""
    admins = {a.strip().lower() for a in os.environ.get(ADMINS_VAR, "").split(",")}
    return email in admins - {""}


def has_admin(conn: Connection, pid: int) -> bool:
    """Whether project ``pid`` has an admin."""
    return conn.execute(sa.select(MEMBERS.c.email).where(
        MEMBERS.c.project_id == pid, MEMBERS.c.role == "admin").limit(1)).first() is not None


def first_role(url: str) -> tuple[str | None, str]:
    """The role a first sign-in gives in the default project to a person who does not
    become its admin (see :func:`listed_admin`), and why: ``IREVAL_DEFAULT_ROLE``
    (``viewer``, or unset for no access)."""
    default = os.environ.get(DEFAULT_ROLE_VAR, "").strip().lower()
    if default not in ("", "viewer"):
        raise WorkspaceError(f"{DEFAULT_ROLE_VAR} is {default!r}: set it to 'viewer' or "
                             "leave it unset (no access until an admin adds the person)",
                             url=url)
    return (default or None), DEFAULT_ROLE_VAR
