"""The Admin page's work: the members of a project and their roles, and the audit log.

Every call acts as this session's person (:func:`ireval_app.workspace_glue.actor`): the
workspace refuses a person who is not an admin of the project
(:class:`~ireval_core.errors.NotAllowedError`), whatever the page draws. A workspace
that cannot be used is a :class:`~ireval_app.workspace_glue.WorkspaceProblem`.
"""

from __future__ import annotations

from datetime import date

import pandas as pd

from ireval_core.workspace import ROLES, AuditCheck, AuditEntry, Member, Workspace

from .workspace_glue import WorkspaceProblem, actor, with_workspace

__all__ = ["ROLES", "admin_projects", "audit_table", "members", "members_table", "set_role",
           "verify"]


def admin_projects() -> list[str] | WorkspaceProblem:
    """The projects this session's person is an admin of (the default project first)."""
    who = actor()
    return with_workspace(lambda ws: [p.name for p in ws.projects()
                                      if ws.role(who, p.name) == "admin"])


def members(project: str) -> list[Member] | WorkspaceProblem:
    """The members of ``project``, by e-mail."""
    who = actor()
    return with_workspace(lambda ws: ws.members(project, actor=who))


def set_role(email: str, role: str | None, project: str,
             name: str = "") -> Member | None | WorkspaceProblem:
    """Add ``email`` to ``project``, change their role, or remove them (``role=None``);
    a refusal (not an admin, the last admin, not an e-mail) raises."""
    who = actor()
    return with_workspace(lambda ws: ws.set_role(email.strip(), role, actor=who,
                                                 project=project, name=name.strip()))


def members_table(found: list[Member]) -> pd.DataFrame:
    """The members as the page lists them."""
    return pd.DataFrame({"E-mail": [m.email for m in found], "Name": [m.name for m in found],
                         "Role": [m.role for m in found],
                         "Since": [f"{m.added_at:%Y-%m-%d %H:%M}" for m in found],
                         "By": [m.added_by for m in found]})


def audit_table(since: date | None, projects: list[str]) -> pd.DataFrame | WorkspaceProblem:
    """The audit log's rows at or after ``since`` (a day, UTC) on ``projects`` (those
    this person administers: the workspace gives them no other row), the newest first."""

    who = actor()

    def work(ws: Workspace) -> list[AuditEntry]:
        return ws.audit(since=None if since is None else since.isoformat(), actor=who)

    entries = with_workspace(work)
    if isinstance(entries, WorkspaceProblem):
        return entries
    kept = [e for e in reversed(entries) if e.project in projects]
    return pd.DataFrame({"Row": [e.id for e in kept], "At (UTC)": [e.at for e in kept],
                         "Who": [e.who for e in kept], "Action": [e.action for e in kept],
                         "Project": [e.project for e in kept],
                         "Target": [e.target for e in kept],
                         "Detail": [e.detail for e in kept]})


def verify() -> AuditCheck | WorkspaceProblem:
    """The audit log's hash chain checked (every row, whichever project; the workspace
    refuses anyone but an admin)."""
    who = actor()
    return with_workspace(lambda ws: ws.verify_audit(actor=who))
