"""The workspace on a page: why it cannot be used, the Save and Add buttons' writes, and
the notes and decisions beside what a page shows.

The workspace itself (opening it, reading and writing datasets and notes) is
:mod:`ireval_app.workspace_glue`'s; here is what the pages draw of it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TypeVar

import streamlit as st

from ireval_core.errors import IrevalError
from ireval_core.workspace import Target, Workspace

from . import state, views, workspace_glue
from .text import md_escape

__all__ = ["author", "author_field", "live_view", "notes_key", "notes_panel", "written",
           "project_choice", "workspace_problem", "write_to_workspace"]


def author_field(where: object = st) -> None:
    """Who writes, beside a Save, Add or Record button: the signed-in person (a caption:
    the workspace records them, nothing to type), else the "Your name" field (asked once
    per session, then prefilled). ``where``: ``st`` or a container or column."""
    person = workspace_glue.actor()
    if person.signed_in:
        where.caption(f":material/person: As **{md_escape(person.label)}**")  # type: ignore[attr-defined]
        return
    state.restore_author()
    where.text_input("Your name", key=state.NOTES_AUTHOR)  # type: ignore[attr-defined]


def author() -> str:
    """Who writes, as :func:`author_field` asked: the signed-in person's label, else the
    typed name (stripped; empty when none was typed)."""
    person = workspace_glue.actor()
    return person.label if person.signed_in else state.get_author().strip()

def project_choice(choices: list[str], key: str) -> str:
    """The project to save into, among ``choices`` (those where the role allows saving,
    :func:`ireval_app.workspace_glue.projects_allowing`): a select chosen first on the
    project this session saved into last, else the default project; with one choice, a
    caption for a signed-in person (nothing for the single local user). A project chosen
    in this form stays chosen when the role there was taken away meanwhile: the save goes
    where the person chose, and the workspace refuses it there (never a silent save into
    another project)."""
    last = state.get_last_project()
    first = (last if last in choices
             else workspace_glue.DEFAULT_PROJECT if workspace_glue.DEFAULT_PROJECT in choices
             else choices[0])
    chosen = st.session_state.get(key)
    offered = [*choices, *([chosen] if isinstance(chosen, str) and chosen not in choices
                           else [])]
    if len(offered) == 1:
        if workspace_glue.actor().signed_in:
            st.caption(f":material/folder: Saved in the project **{md_escape(first)}**")
        return first
    state.keep_choice(key, offered, first)
    return str(st.selectbox("Project", offered, key=key,
                            help="The projects where your role lets you save; its members "
                                 "see what is saved there"))


def workspace_problem(problem: workspace_glue.WorkspaceProblem, *, lead: str = "") -> None:
    """The one message saying why the workspace cannot be used, where it is and what to
    do (:attr:`ireval_app.workspace_glue.WorkspaceProblem.message`), after ``lead``
    (plain text)."""
    st.warning(md_escape(lead + problem.message), icon=":material/cloud_off:")


_T = TypeVar("_T")


def written(result: _T | workspace_glue.WorkspaceProblem | workspace_glue.Refused, *,
            lead: str = "") -> _T | None:
    """The result of a write (:func:`~ireval_app.workspace_glue.write`, or a glue
    function built on it), or ``None`` once it is shown why it did not happen: a refusal
    in the workspace's words (as an error), or a workspace that cannot be used
    (:func:`workspace_problem`, after ``lead``)."""
    if isinstance(result, workspace_glue.Refused):
        st.error(md_escape(result.message), icon=":material/error:")
        return None
    if isinstance(result, workspace_glue.WorkspaceProblem):
        workspace_problem(result, lead=lead)
        return None
    return result


def write_to_workspace(work: Callable[[Workspace], _T], *, lead: str = "") -> _T | None:
    """``work(workspace)`` for a Save or Add button, or ``None`` once it is shown why it did
    not happen (:func:`written`)."""
    return written(workspace_glue.write(work), lead=lead)


def notes_key(target: Target) -> str:
    """The key prefix of the notes form of ``target`` (stable across runs and processes)."""
    return state.NOTES_PREFIX + hashlib.sha1(str(target).encode()).hexdigest()[:12]


def notes_panel(target: Target, *, title: str) -> None:
    """Notes and decisions on ``target`` of the current saved dataset, and a form to add
    one. Notes need a saved dataset. ``title`` is plain text (it names runs and queries):
    it is shown literally. A note keeps the link to the whole view it was written on
    (:func:`ireval_app.views.full_link`), opened by its "Live view" link."""
    dataset_id = state.get_dataset_id()
    notes = [] if dataset_id is None else workspace_glue.notes(dataset_id, target)
    count = 0 if isinstance(notes, workspace_glue.WorkspaceProblem) else len(notes)
    label = md_escape(title) + (f" ({count})" if count else "")  # seen while collapsed
    with st.expander(label, icon=":material/sticky_note_2:"):
        if dataset_id is None:
            st.caption("Notes are kept with a saved dataset: save these files to the "
                       "workspace on the Data page (**Save to the workspace**).")
            return
        if isinstance(notes, workspace_glue.WorkspaceProblem):
            workspace_problem(notes)
            return
        for n in notes:
            kind = ":green[**Decision**]" if n.kind == "decision" else "**Note**"
            st.markdown(f"{kind}: {md_escape(n.text)}")
            st.caption(f"{md_escape(n.author)} · {n.created_at:%Y-%m-%d %H:%M} UTC")
            live_view(n.text)
        if workspace_glue.may("editor", dataset_id):
            _add_note_form(dataset_id, target)


def _add_note_form(dataset_id: str, target: Target) -> None:
    """The form adding a note or a decision on ``target`` (an editor of the project)."""
    key = notes_key(target)
    with st.form(key + ".form", clear_on_submit=True, border=False):
        text = st.text_area("Add a note", key=key + ".text", height=80)
        left, right = st.columns(2)
        kind = left.radio("Kind", ("note", "decision"), horizontal=True, key=key + ".kind")
        state.restore_author()
        known = state.get_author().strip()
        if workspace_glue.actor().signed_in:
            author_field(right)
        elif known:  # asked once per session: then folded away, prefilled
            with right.expander(f"As {md_escape(known)}", icon=":material/person:"):
                st.text_input("Your name", key=state.NOTES_AUTHOR)
        else:
            right.text_input("Your name", key=state.NOTES_AUTHOR)
        if st.form_submit_button("Add", icon=":material/add:"):
            author_name = author()
            if not text.strip() or not author_name:
                st.error("A note needs a text and your name.", icon=":material/error:")
            else:
                try:
                    added = workspace_glue.add_note(  # with the view it was written on
                        dataset_id, target, text, author=author_name, kind=kind,
                        link=views.full_link())
                except (IrevalError, ValueError) as exc:  # e.g. a NUL character
                    st.error(md_escape(str(exc)), icon=":material/error:")
                else:
                    if isinstance(added, workspace_glue.WorkspaceProblem):
                        workspace_problem(added, lead="The note is not saved. ")
                    else:
                        st.rerun()


def live_view(text: str) -> None:
    """A "Live view" link to the view a note or decision was written on (the link it
    keeps, :func:`ireval_core.meeting.view_link`), when it has one."""
    from ireval_core.meeting import view_link  # imports scipy: when a note is shown

    if link := view_link(text):
        st.link_button("Live view", link, icon=":material/open_in_new:", type="tertiary",
                       help="The page with every selection as when this was written")
