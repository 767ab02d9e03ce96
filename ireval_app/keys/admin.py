"""Admin page: widget keys and URL parameters."""

from __future__ import annotations

from ..views import ViewParam

PROJECT = "ireval.admin.project"
"""Selectbox: the project whose members are shown."""
MEMBER = "ireval.admin.member"
"""Selectbox: the member whose role is changed or who is removed."""
ROLE = "ireval.admin.role"
"""Selectbox: the member's new role."""
NEW_EMAIL = "ireval.admin.new_email"
"""Text: the e-mail of a person to add."""
NEW_NAME = "ireval.admin.new_name"
"""Text: the display name of a person to add (optional)."""
NEW_ROLE = "ireval.admin.new_role"
"""Selectbox: the role of a person to add."""
SINCE = "ireval.admin.since"
"""Date: the audit log from this day on."""

PARAMS = (ViewParam(PROJECT, "project"),)

LOCAL = {MEMBER: "a person: an action, not a view", ROLE: "an action, not a view",
         NEW_EMAIL: "a person being added: an action, not a view",
         NEW_NAME: "a person being added: an action, not a view",
         NEW_ROLE: "an action, not a view", SINCE: "a date of the log being read"}
"""Widgets the link leaves out, and why."""
