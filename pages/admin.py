"""Admin page: the members of a project and their roles, and the audit log.

For the admins of a project (the menu shows it to them only; the workspace refuses
anyone else whatever is drawn): the members with their roles, a role changed, a member
added by e-mail or removed; the tamper-evident log of every write, from a day on, and
its hash chain verified.
"""

from __future__ import annotations

from datetime import date

import streamlit as st

from ireval_app import admin_glue, frame, signin, views, widgets, workspace_glue
from ireval_app import workspace_widgets as ww
from ireval_app.keys import admin as keys
from ireval_core.errors import IrevalError
from ireval_core.workspace import Member


def _members(project: str) -> None:
    """The members of ``project``, and the forms that change them."""
    st.subheader(f"Members of {project}")
    found = admin_glue.members(project)
    if isinstance(found, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(found)
        return
    st.dataframe(admin_glue.members_table(found), hide_index=True)
    st.caption("Admins are made here. `IREVAL_ADMINS` (the server's setting) makes an "
               "admin of the default project only when a person it lists signs in while "
               "that project has no admin; once it has one, the list grants nothing. "
               "The last admin of a project cannot be removed or demoted.")
    change, add = st.columns(2)
    with change.form("ireval.admin.change", border=True):
        st.markdown("**Change a role, or remove**")
        by_email = {m.email: m for m in found}
        email = st.selectbox("Member", list(by_email), key=keys.MEMBER,
                             format_func=lambda e: f"{by_email[e].name} <{e}> · {by_email[e].role}")
        role = st.selectbox("Role", admin_glue.ROLES, key=keys.ROLE, index=0)
        left, right = st.columns(2)
        if left.form_submit_button("Set the role", icon=":material/manage_accounts:"):
            _apply(email, role, project, by_email)
        if right.form_submit_button("Remove", icon=":material/person_remove:"):
            _apply(email, None, project, by_email)
    with add.form("ireval.admin.add", border=True, clear_on_submit=True):
        st.markdown("**Add a member**")
        new = st.text_input("E-mail", key=keys.NEW_EMAIL, placeholder="ana@example.org")
        name = st.text_input("Name (optional)", key=keys.NEW_NAME)
        new_role = st.selectbox("Role", admin_glue.ROLES, key=keys.NEW_ROLE)
        if st.form_submit_button("Add", icon=":material/person_add:", type="primary"):
            _apply(new, new_role, project, {}, name=name)


def _apply(email: str | None, role: str | None, project: str, known: dict[str, Member],
           name: str = "") -> None:
    """Set ``email``'s role (``None``: remove them) and say how it went."""
    if not email or not email.strip():
        st.error("Name the person by their e-mail.", icon=":material/error:")
        return
    try:
        done = admin_glue.set_role(email, role, project, name)
    except (IrevalError, ValueError, TypeError) as exc:  # the last admin, not an e-mail
        st.error(widgets.md_escape(str(exc)), icon=":material/error:")
        return
    if isinstance(done, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(done)
        return
    what = "removed" if done is None else f"now {done.role}"
    st.toast(f"{email.strip()}: {what} in {project}")
    st.rerun()


def _audit(projects: list[str]) -> None:
    """The audit log from a day on, and the chain verified on request."""
    st.subheader("Audit log")
    st.caption("Every write (dataset saved, version added, note, decision, role change, "
               "deletion): who, when, what, the target; each row's SHA-256 chains it to "
               "the row before, so a row changed or removed with plain SQL is found.")
    since = st.date_input("From", value=None, key=keys.SINCE, max_value=date.today(),
                          help="Only the rows of this day (UTC) and later; empty: all")
    if st.button("Verify the chain", icon=":material/verified:"):
        check = admin_glue.verify()
        if isinstance(check, workspace_glue.WorkspaceProblem):
            ww.workspace_problem(check)
        elif check.intact:
            st.success(f"The chain is intact: {check.rows:,} rows.", icon=":material/check:")
        else:
            st.error(widgets.md_escape(f"The chain is broken at row {check.broken_row}: "
                                       f"{check.reason}"), icon=":material/error:")
    table = admin_glue.audit_table(since, projects)
    if isinstance(table, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(table)
    elif table.empty:
        st.info("No row in the log for these days.", icon=":material/info:")
    else:
        st.dataframe(table, hide_index=True, column_config={
            "Row": st.column_config.NumberColumn(width="small"),
            "Detail": st.column_config.TextColumn(width="large")})


with frame.page("admin"):
    widgets.page_header("Admin", "Who may do what in each project, and the record of "
                        "every write.", results=False, data_note=False)
    projects = admin_glue.admin_projects()
    if isinstance(projects, workspace_glue.WorkspaceProblem):
        ww.workspace_problem(projects)
        st.stop()
    if not projects:
        st.info("This page is for the admins of a project: you are not an admin of any.",
                icon=":material/lock:")
        st.stop()
    if signin.signed_in_person() is None:
        st.caption("Members and roles need sign-in (an `[auth]` section in "
                   "`.streamlit/secrets.toml`): without it this is a single-person tool, "
                   "and its one user may do everything.")
    else:
        views.bind_view(keys.PROJECT, projects[0], choices=projects)
        project = st.selectbox("Project", projects, key=keys.PROJECT)
        _members(project)
    _audit(projects)
