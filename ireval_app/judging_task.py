"""The Judging page's second mode: build the month's labeling task and label it.

The task (:func:`ireval_core.labels.task.month_task`) is built from a query log (uploaded,
or the sample's) and the current dataset's runs: the month's sampled queries, each run's
top K, their weights. Its distinct (query, document) units are judged blind, one at a
time, with the Judging page's buttons and keys: queries in a seeded random order, the
documents of a query shuffled, and neither the systems nor the positions shown.

**Every label is written when it is given**: the round file (the task filled with the
labels, their rater and time: :func:`ireval_core.labels.task.round_file`) is written again
into a labeling set of the workspace, the round's own file replacing the previous one as
the set's next version. The set is created with the first label when none is chosen.
The Monthly labeling pages then show that set (its newest version), weights included.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import streamlit as st

from ireval_core.data import Run
from ireval_core.errors import FormatError, IrevalError
from ireval_core.labels import task as core
from ireval_core.workspace import ANONYMOUS, ROLES, Actor, FileRounds, Workspace

from . import judging_glue as jg
from . import labels_glue, labels_widgets, state, views, widgets, workspace_glue, workspace_widgets
from .keys import judging as keys
from .keys import labeling

__all__ = ["NEEDS_ROLE", "SAMPLE_LOG", "TaskSession", "build", "labeling_sets", "page",
           "record", "undo"]

SAMPLE_LOG = Path(__file__).resolve().parent.parent / "sample_data" / "query_log.csv"
"""The sample query log (60 queries of the sample runs)."""

NEEDS_ROLE = ("Labeling the month's task writes into a labeling set: it needs the role rater "
              "or above in the set's project, or editor in a project to start a new set; "
              "ask an admin of the project.")
"""What the month's task says to a person who may label no set and start none."""

_SESSION = "ireval.judging.task.session"  # the TaskSession under way
_NEW = ""  # the labeling-set choice "a new set"
_CHOSEN = "ireval.judging.task.chosen"  # a set just created, to choose in the form


@dataclass
class TaskSession:
    """One rater labeling one month's task in this browser session."""

    task: core.MonthTask
    order: list[tuple[str, str]]
    rater: str
    actor: Actor
    set_id: str | None
    set_name: str
    project: str = workspace_glue.DEFAULT_PROJECT
    """The project a new set is saved into (an existing set stays where it is)."""
    labels: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)
    given: list[tuple[str, str]] = field(default_factory=list)
    skipped: set[tuple[str, str]] = field(default_factory=set)
    version: int | None = None
    error: str | None = None
    pending: Callable[[], object] | None = None

    @property
    def current(self) -> tuple[str, str] | None:
        """The (query, document) to judge now, ``None`` when all are judged or skipped."""
        return next((u for u in self.order if u not in self.labels and u not in self.skipped),
                    None)

    @property
    def file_name(self) -> str:
        return f"{self.task.round}.csv"


def _rank(role: str | None) -> int:
    """A role's place in :data:`~ireval_core.workspace.ROLES` (0: no role)."""
    return 0 if role is None else ROLES.index(role) + 1


def blind_order(units: pd.DataFrame, seed: int) -> list[tuple[str, str]]:
    """The units to judge: queries in a seeded random order, each query's documents
    shuffled (the run's order and the systems do not show through)."""
    rng = random.Random(f"month task|{seed}")
    queries = sorted(set(units["query"].astype(str)))
    rng.shuffle(queries)
    out: list[tuple[str, str]] = []
    for q in queries:
        docs = sorted(units.loc[units["query"].astype(str) == q, "doc"].astype(str))
        rng.shuffle(docs)
        out += [(q, d) for d in docs]
    return out


def build(log_name: str, log_data: bytes, runs: list[Run], round_name: str, design: str,
          n: int, k: int, seed: int) -> core.MonthTask:
    """The month's task of ``runs`` from a query log (raises ``ValueError`` or a
    :class:`~ireval_core.errors.FormatError` naming the file when it cannot be built)."""
    log = core.read_query_log((log_name, log_data))
    sample = core.sample_queries(log, n, design=design, seed=seed)  # type: ignore[arg-type]
    return core.month_task(sample, runs, round_name, k=k, seed=seed)


def labeling_sets(ws: Workspace) -> dict[str, str]:
    """The saved labeling sets this session may label (short id → name): datasets with
    labeling files and no qrels (a judged dataset keeps its labels beside its qrels), in
    a project where its role is rater or above."""
    who = workspace_glue.actor()
    roles: dict[str, str | None] = {}
    out = {}
    for i in ws.list_datasets(actor=who):
        if i.files_of_kind("labels") and not i.files_of_kind("qrels"):
            if i.project not in roles:
                roles[i.project] = ws.role(who, i.project)
            if _rank(roles[i.project]) >= _rank("rater"):
                out[i.short_id] = i.name
    return out


def _labels_frame(s: TaskSession) -> pd.DataFrame:
    rows = [(q, d, g, s.rater, t) for (q, d), (g, t) in s.labels.items()]
    return pd.DataFrame(rows, columns=["query", "doc", "label", "rater", "time"])


def _write(ws: Workspace, s: TaskSession, *, replace: bool) -> None:
    """The round file as the labeling set's next version (the set created first)."""
    data = core.round_file(s.task.items, _labels_frame(s))
    stated = labels_glue.file_rounds_cached("labels", s.file_name, data)
    if isinstance(stated, FormatError):
        raise stated
    saved_by = s.rater if s.actor == ANONYMOUS else None
    note = f"round {s.task.round} labeled on the Judging page by {s.rater}"
    files = [("labels", s.file_name, data)]
    created = s.set_id is None
    if created:
        info = ws.save_dataset(files, name=s.set_name, saved_by=saved_by, note=note,
                               rounds={s.file_name: stated}, actor=s.actor,
                               project=s.project)
        state.set_last_project(info.project)
    else:
        old = ws.get_dataset(s.set_id, actor=s.actor)
        rounds: dict[str, FileRounds] = {f.name: FileRounds((), 0) for f in old.files
                                         if f.rounds is None}
        rounds[s.file_name] = stated
        info = ws.add_to_dataset(s.set_id, files, rounds=rounds, replace=replace,
                                 note=note, saved_by=saved_by, actor=s.actor)
    s.set_id, s.version = info.id, info.version
    labels_widgets.choose_saved(info.short_id, 0)  # the Monthly labeling pages show it
    labels_widgets.set_source("saved")
    if created:  # the form offers that set from now on: drawn again with it chosen
        st.session_state[_CHOSEN] = info.short_id


def record(ws: Workspace, s: TaskSession, grade: int) -> None:
    """Label the current unit: written first; when the write fails nothing changes."""
    unit = s.current
    if unit is None:
        return
    first = not s.given
    s.labels[unit] = (grade, datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    s.given.append(unit)
    try:
        _write(ws, s, replace=not first)  # the first write refuses a round already there
    except BaseException:
        del s.labels[unit]
        s.given.pop()
        raise


def skip(s: TaskSession) -> None:
    """Leave the current unit unlabeled in this session."""
    if s.current is not None:
        s.skipped.add(s.current)


def undo(ws: Workspace, s: TaskSession) -> None:
    """Take back the last label (the round written again without it)."""
    if not s.given:
        return
    unit = s.given.pop()
    kept = s.labels.pop(unit)
    try:
        _write(ws, s, replace=True)
    except BaseException:
        s.labels[unit] = kept
        s.given.append(unit)
        raise
    s.order = [unit] + [u for u in s.order if u != unit]


def _build_form(runs: list[Run], rater: str, actor: Actor, sets: dict[str, str],
                projects: list[str]) -> None:
    """The task's inputs (``sets``: the labeling sets this session may label,
    ``projects``: those where it may save a new one); a built task becomes this
    session's :class:`TaskSession`."""
    choices = [_NEW, *sets]
    if st.session_state.get(_CHOSEN) in sets:  # before the form's widget is drawn
        st.session_state[keys.TASK_SET] = st.session_state.pop(_CHOSEN)
    shown = str(views.kept_value(labeling.SAVED_PICK, "")) if (
        labels_widgets.source() == "saved") else _NEW
    default = shown if shown in sets else _NEW  # the set the Monthly labeling pages show
    with st.form("ireval.judging.task.form", border=True):
        up = st.file_uploader("Query log (query, count, optional segment; CSV, TSV, "
                              "Parquet). None: the sample's", key=keys.TASK_LOG)
        c = st.columns([2, 2, 1, 1, 1])
        round_name = c[0].text_input("Round", value=datetime.now(UTC).strftime("%Y-%m"),
                                     key=keys.TASK_ROUND)
        design = c[1].selectbox("Design", core.DESIGNS, key=keys.TASK_DESIGN,
                                help="Simple random, stratified by frequency band, or "
                                     "proportional to the searches")
        n = c[2].number_input("Queries", 1, 100_000, 10, key=keys.TASK_N)
        k = c[3].number_input("K", 1, 1000, 5, key=keys.TASK_K)
        seed = c[4].number_input("Seed", 0, 2**31 - 1, 0, key=keys.TASK_SEED)
        c = st.columns(2)
        pick = c[0].selectbox("Labeling set", choices, index=choices.index(default),
                              key=keys.TASK_SET, format_func=lambda i: sets.get(
                                  i, "A new labeling set"))
        new_name = c[1].text_input("New set's name", value="Monthly labels",
                                   key=keys.TASK_SET_NAME)
        project = (workspace_widgets.project_choice(projects, keys.TASK_PROJECT)
                   if projects else None)
        if not projects:
            st.caption("A new labeling set needs the role editor in a project (labeling a "
                       "saved set's round, rater): ask an admin of the project.")
        if not st.form_submit_button("Build the task", type="primary",
                                     icon=":material/assignment:"):
            return
    name, data = (up.name, up.getvalue()) if up else (SAMPLE_LOG.name, SAMPLE_LOG.read_bytes())
    if not round_name.strip() or (pick == _NEW and not new_name.strip()):
        st.error("The task needs a round name, and a new set a name.", icon=":material/error:")
        return
    if pick == _NEW and project is None:
        st.error("A new labeling set needs the role editor in a project: choose a saved set, "
                 "or ask an admin of a project.", icon=":material/error:")
        return
    try:
        task = build(name, data, runs, round_name.strip(), design, int(n), int(k), int(seed))
    except (IrevalError, ValueError) as exc:
        st.error(str(exc), icon=":material/error:")
        return
    st.session_state[_SESSION] = TaskSession(
        task, blind_order(task.units, int(seed)), rater, actor, pick or None,
        sets.get(pick, new_name.strip()), project or workspace_glue.DEFAULT_PROJECT)


def page(ws: Workspace, runs: list[Run], grades: tuple[int, ...]) -> None:
    """The month's task mode of the Judging page, below the mode choice: the task under
    way (its summary and judging area) first, then the form that builds a task."""
    sets = workspace_glue.with_workspace(labeling_sets)
    projects = workspace_glue.projects_allowing("editor")
    for found in (sets, projects):
        if isinstance(found, workspace_glue.WorkspaceProblem):
            st.error(found.message, icon=":material/error:")
            return
    assert isinstance(sets, dict) and isinstance(projects, list)
    if not sets and not projects:  # the workspace refuses the writes anyway
        st.info(NEEDS_ROLE, icon=":material/lock:")
        return
    typed = "" if jg.signed_in() else st.text_input(
        "Your name (the rater)", key=keys.RATER, help="Kept with every label you give")
    rater, actor = jg.rater_name(typed or "")
    if not rater:
        st.info("Give your name to build and label the month's task.", icon=":material/info:")
        return
    area = st.container()
    with st.expander("Build the month's task", icon=":material/assignment:",
                     expanded=_SESSION not in st.session_state):
        _build_form(runs, rater, actor, sets, projects)
    s: TaskSession | None = st.session_state.get(_SESSION)
    if s is None:
        return
    s.rater, s.actor = rater, actor
    with area:
        st.caption(":material/assignment: " + widgets.md_escape(s.task.summary()))
        if s.set_id is not None and not workspace_glue.may("rater", s.set_id):
            st.info(f"Labeling the set {widgets.md_escape(s.set_name)} needs the role rater "
                    "or above in its project; ask an admin of the project.",
                    icon=":material/lock:")
            return
        _area(ws, s, grades)


@st.fragment
def _area(ws: Workspace, s: TaskSession, grades: tuple[int, ...]) -> None:
    """One unit at a time, with the Judging page's buttons and shortcuts."""
    jg.run_pending(s)
    if _CHOSEN in st.session_state:  # a set was created: the form (outside) shows it
        st.rerun(scope="app")
    side, main = st.columns([1, 3])
    with side:
        st.progress(len(s.labels) / max(len(s.order), 1),
                    text=f"{len(s.labels)} of {len(s.order)} labeled")
        where = f"version {s.version} of set **{widgets.md_escape(s.set_name)}**"
        st.caption(f"Round {widgets.md_escape(s.task.round)}: {len(s.labels)} labels, in "
                   + (where if s.version else "no saved version yet") + ".")
    unit = s.current
    with main:
        if s.error:
            st.error(s.error, icon=":material/error:")
        if unit is None:
            st.success("Every unit of the task is labeled or skipped.",
                       icon=":material/check_circle:")
            return
        st.markdown(f"**Query** `{widgets.md_escape(unit[0])}`")
        with st.container(border=True):
            st.markdown(f"**Document** `{widgets.md_escape(unit[1])}`")
    cols = st.columns(jg.button_widths(len(grades), (0.85,)))  # the whole width: names readable
    for col, (g, text) in zip(cols, jg.grade_buttons(grades, ""), strict=False):
        col.button(text, key=f"{keys.GRADE}{g}", shortcut=str(g), type="primary",
                   use_container_width=True, on_click=jg.act,
                   args=(s, lambda g=g: record(ws, s, g)))
    cols[-2].button("Skip", key=keys.SKIP, shortcut="Right",
                    on_click=jg.act, args=(s, lambda: skip(s)))
    jg.undo_button(cols[-1], s, lambda: undo(ws, s), bool(s.given))
    st.caption("Keys: " + ", ".join(map(str, grades)) + " grade · → skip · "
               + jg.UNDO_KEYS + ". The systems and positions are not shown; queries "
               "and documents come in a random order.")
