"""The Judging page's work: its queue, the labels written to the workspace, the texts.

A **judging session** (:class:`Session`) is one rater judging one saved dataset on one
measure and set of pairs, in one browser session. Its queue is a
:class:`~ireval_core.decisions.queue.JudgeQueue` on the dataset's qrels with every label
given so far (in this session and in the judging files of the dataset's newest version:
a reloaded page loses nothing). It shows a **batch** of documents at a time: the next
documents of the impact order, grouped by query and shuffled within each query (a
seeded order, so that the rank does not show through the order).

**Every label is written when it is given**: the session's labels are one judging file
(:mod:`ireval_core.decisions.judging`, its own round) that each label (and each undo)
writes again as the dataset's next version (:meth:`~ireval_core.workspace.Workspace.add_to_dataset`,
replacing the session's previous file). Each version is a complete, readable state;
an earlier version (and a link to it, ``?ds=...&dsv=N``) keeps its numbers. After a
write the session's data is that new version (its qrels with the judged documents), so
every page and link of the session shows the new numbers.

**Several raters** (the dataset's judging set, :meth:`Workspace.judging_set
<ireval_core.workspace.Workspace.judging_set>`: its guidelines, label map and overlap
share): each batch starts with the documents of the overlap another rater graded and
nobody else judged yet (:func:`~ireval_core.decisions.judging.second_rater_items`),
then takes the queue's next documents. A document's grade is the raters' lower median
(:data:`~ireval_core.decisions.judging.AGGREGATION`); a new batch reads the labels the
other raters wrote meanwhile, so two raters at once do not judge the same holes.

"Can't tell" is recorded (an empty label in the session's file: who and when) but is not
a grade: the document stays a hole for the other raters, and is not offered to this
rater again. "Skip" writes nothing: the document comes back once the other documents
of the queue are done (or in another session).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

import streamlit as st

from ireval_core.data import Run
from ireval_core.decisions import judging
from ireval_core.decisions.queue import JudgeQueue, PairVerdict, QueueItem
from ireval_core.errors import IrevalError
from ireval_core.io.texts import read_documents, read_topics
from ireval_core.labels.agreement import RaterReport
from ireval_core.options import EvalOptions
from ireval_core.workspace import (
    ANONYMOUS,
    Actor,
    FileRounds,
    JudgingSet,
    Workspace,
    WorkspaceError,
)

from . import cache, state, workspace_glue
from .keys import judging as keys

if TYPE_CHECKING:
    from streamlit.delta_generator import DeltaGenerator

__all__ = ["Acting", "DEFAULT_GRADES", "MEASURE_CHOICES", "MODES", "Session", "UNDO_KEYS", "act",
           "agreement", "cant_tell", "documents", "exports", "grade_buttons", "grade_scale",
           "judging_set", "rater_name", "record", "restore_rater", "run_pending",
           "save_judging_set", "session_for", "skip", "start", "topics", "undo",
           "button_widths", "undo_button", "verdict_line"]

MODES = ("Decide a comparison", "Label the month's task")
"""The Judging page's two modes."""

MEASURE_CHOICES = ("nDCG@10", "P@10", "AP", "RR", "nDCG@5", "P@5")
"""Measures offered on the page (any measure the holes analysis supports can be typed)."""

DEFAULT_GRADES = (0, 1, 2, 3)
"""The grades offered when the qrels do not say (more than 10 distinct grades, or none)."""

SECOND_RATER = "asked of a second rater, for agreement"
"""Why a document of the overlap is in a batch."""

BATCH = 10
"""Documents per batch."""

UNDO_KEYS = "u or ← undo the last label"
"""The keys of the undo control, as the keys' help line says them."""

_HIDE_SECOND_KEY = "<style>.st-key-ireval-judging-back { display: none !important; }</style>"
"""Streamlit binds one key to a button: the left arrow's button is drawn but not shown
(its class is ``st-key-`` and its key with ``.`` as ``-``)."""


@dataclass
class Session:
    """One rater judging one dataset in this browser session."""

    key: tuple[object, ...]
    dataset_id: str
    rater: str
    actor: Actor
    round: str
    queue: JudgeQueue
    runs: list[Run]
    settings: JudgingSet = field(default_factory=JudgingSet)
    dataset_map: str = ""
    """The label map of the dataset's own labeling files (``""``: none, or numbers)."""
    others: list[judging.Judgment] = field(default_factory=list)
    """The labels of the other sessions (every rater), as read at the last batch."""
    rows: list[judging.Judgment] = field(default_factory=list)
    batch: list[QueueItem] = field(default_factory=list)
    done: set[tuple[str, str]] = field(default_factory=set)
    skipped: set[tuple[str, str]] = field(default_factory=set)
    batch_number: int = 0
    version: int | None = None
    error: str | None = None
    pending: Callable[[], object] | None = None
    agreement_memo: tuple[object, RaterReport | None] | None = None

    @property
    def current(self) -> QueueItem | None:
        """The document to judge now (``None`` when the batch is done)."""
        return next((i for i in self.batch if (i.query, i.doc) not in self.done), None)

    @property
    def label_map(self) -> str:
        """The grade names' label map: the judging set's, else the dataset's labeling
        files', else ``""`` (the default scale)."""
        return self.settings.label_map or self.dataset_map

    @property
    def position(self) -> int:
        """Documents of the batch done (judged, skipped or can't tell)."""
        return sum((i.query, i.doc) in self.done for i in self.batch)


def signed_in() -> bool:
    """Whether a signed-in person judges (no name to type then)."""
    return workspace_glue.actor().signed_in


def restore_rater(key: str) -> None:
    """Before the rater's name box is drawn: the name this session gave, so that it is
    given once per session (a page left and opened again keeps it)."""
    if key not in st.session_state and state.get_rater():
        st.session_state[key] = state.get_rater()


def rater_name(typed: str) -> tuple[str, Actor]:
    """Who judges: the signed-in person, or the name typed (the anonymous local user)."""
    who = workspace_glue.actor()
    if who.signed_in:
        return who.name, who
    state.set_rater(typed.strip())
    return typed.strip(), who


def grade_scale(qrels_grades: list[float]) -> tuple[int, ...]:
    """The grades to offer: the qrels' grades from 0 to their largest (0–3 by default)."""
    top = max((g for g in qrels_grades if g >= 0), default=3)
    return tuple(range(int(top) + 1)) if 1 <= top <= 9 else DEFAULT_GRADES


def grade_buttons(grades: tuple[int, ...], label_map: str) -> list[tuple[int, str]]:
    """``(grade, button label)`` of each grade: ``"2 mid"`` with the judging set's label
    map's names (the default scale's when it has none), ``"2"`` for a grade it does not
    name."""
    try:
        names = judging.grade_names(grades, label_map)
    except ValueError:  # refused when saved; an older map that no longer parses
        names = judging.grade_names(grades)
    return [(g, f"{g} {names[g]}" if g in names else str(g)) for g in grades]


def _newest_judgments(ws: Workspace, dataset_id: str,
                      leave_out: str | None = None) -> list[judging.Judgment]:
    """The judgments of the dataset's newest version (``leave_out``: a judging file not
    to read)."""
    who = workspace_glue.actor()
    info = ws.get_dataset(dataset_id, actor=who)
    return [j for f in info.files if f.kind == "labels" and judging.is_judging_file(f.name)
            and f.name != leave_out
            for j in judging.read_judgments_file(ws.read_file(info.id, f.position, actor=who),
                                                 f.name)]


def _dataset_label_map(ws: Workspace, dataset_id: str) -> str:
    """:func:`~ireval_core.decisions.judging.label_map_of` the dataset's labeling files
    (its judging files aside)."""
    who = workspace_glue.actor()
    info = ws.get_dataset(dataset_id, actor=who)
    return judging.label_map_of([(f.name, ws.read_file(info.id, f.position, actor=who))
                                 for f in info.files if f.kind == "labels"
                                 and not judging.is_judging_file(f.name)])


def judging_set(ws: Workspace, dataset_id: str) -> JudgingSet:
    """The dataset's judging set (its defaults when nobody edited it)."""
    return ws.judging_set(dataset_id, actor=workspace_glue.actor())


def save_judging_set(ws: Workspace, dataset_id: str, guidelines: str, label_map: str,
                     overlap_percent: float, author: str) -> JudgingSet | str:
    """Record the judging set's next version; the refusal's words when the workspace
    refuses it (a role below editor, a label map that does not parse)."""
    settings = JudgingSet(guidelines, label_map.strip(), round(overlap_percent) / 100)
    if not author.strip() and not workspace_glue.actor().signed_in:
        return "Give your name (the rater) first: the judging set records who saved it."
    try:
        saved = ws.set_judging_set(dataset_id, settings, author=author or None,
                                   actor=workspace_glue.actor())
    except (IrevalError, WorkspaceError, ValueError) as exc:
        return str(exc)
    current = state.get_judging()
    if isinstance(current, Session) and current.dataset_id == dataset_id:
        current.settings = saved  # the next batch follows the new overlap
    return saved


def start(ws: Workspace, key: tuple[object, ...], dataset_id: str, runs: list[Run],
          measure: str, baseline: str | None, options: EvalOptions,
          rater: str, actor: Actor) -> Session:
    """A new judging session: the queue on the loaded qrels with the labels of the
    dataset's newest version added, and its first batch."""
    files = state.get_loaded_files()
    loaded = files.qrels.qrels if files is not None and files.qrels is not None else None
    if loaded is None:
        raise ValueError("the dataset has no qrels")
    others = _newest_judgments(ws, dataset_id)
    qrels = judging.with_judgments(loaded, others)
    queue = JudgeQueue(qrels, runs, measure, baseline=baseline, options=options)
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    session = Session(key, dataset_id, rater, actor, f"{now} {rater}", queue, runs,
                      settings=judging_set(ws, dataset_id), others=others,
                      dataset_map=_dataset_label_map(ws, dataset_id))
    _next_batch(session, ws)
    return session


def session_for(ws: Workspace, dataset_id: str, runs: list[Run], measure: str,
                baseline: str | None, options: EvalOptions, rater: str,
                actor: Actor) -> Session:
    """This browser session's judging session for these choices: the one under way, or
    a new one (:func:`start`) when a choice changed."""
    key = (dataset_id, measure, baseline, tuple(r.name for r in runs), options, rater)
    current = state.get_judging()
    if isinstance(current, Session) and current.key == key:
        return current
    session = start(ws, key, dataset_id, runs, measure, baseline, options, rater, actor)
    state.set_judging(session)
    return session


class Acting(Protocol):
    """A judging session whose buttons leave work for :func:`run_pending` (a
    :class:`Session`, or the month's task's)."""

    pending: Callable[[], object] | None
    error: str | None


def act(session: Acting, work: Callable[[], object]) -> None:
    """A button's ``on_click``: keep its work for :func:`run_pending` (the work reads and
    writes the workspace and may show a spinner, which a callback must not)."""
    session.pending = work


def button_widths(grades: int, others: Sequence[float]) -> list[float]:
    """Column widths of a row of ``grades`` grade buttons (1 each), the other buttons
    (``others``: can't tell, skip, as wide as their names need) and the undo control
    last, wider: its name is the longest."""
    return [1.0] * grades + list(others) + [1.55]


def undo_button(where: DeltaGenerator, session: Acting, work: Callable[[], object],
                can_undo: bool) -> None:
    """The one undo control, "Undo last label", in ``where``: bound to ``u``, and to the
    left arrow through a second button that is drawn but not shown (a Streamlit button
    takes one key); both leave ``work`` for :func:`run_pending`."""
    where.button("Undo last label", key=keys.UNDO, shortcut="u", disabled=not can_undo,
                 use_container_width=True, on_click=act, args=(session, work),
                 help="Take back your last label (also the key ←)")
    st.html(_HIDE_SECOND_KEY)
    st.button("Undo last label (←)", key=keys.BACK, shortcut="Left", disabled=not can_undo,
              on_click=act, args=(session, work))


def run_pending(session: Acting) -> None:
    """Run the work a button asked for, at the start of the judging area's run; a
    refusal or failure of the workspace is kept in :attr:`Session.error` for the page to
    show (nothing was written then)."""
    work, session.pending = session.pending, None
    if work is None:
        return
    session.error = None
    try:
        work()
    except (IrevalError, WorkspaceError, ValueError) as exc:
        session.error = str(exc)


def _refresh(session: Session, ws: Workspace) -> None:
    """Read the labels the other sessions wrote since the last batch; the queue takes
    the grades they change."""
    own = judging.round_file_name(session.round)
    before = judging.aggregate(session.others + session.rows)
    session.others = _newest_judgments(ws, session.dataset_id, leave_out=own)
    after = judging.aggregate(session.others + session.rows)
    changed = [(q, d, g) for (q, d), g in after.items() if before.get((q, d)) != g]
    if changed:
        session.queue.add(changed)


def _next_batch(session: Session, ws: Workspace | None = None) -> None:
    """The next documents: the overlap's documents asked of this rater, then the queue's
    next ones this rater has not judged nor skipped, grouped by query, shuffled within
    each."""
    if ws is not None and session.batch_number:
        _refresh(session, ws)
    everyone = session.others + session.rows
    mine = {(j.query, j.doc) for j in everyone if j.rater == session.rater}
    second = judging.second_rater_items(everyone, session.rater, session.settings.overlap)
    items = [QueueItem(q, d, (), (), SECOND_RATER, 0.0) for q, d in second[:BATCH]]
    if len(items) < BATCH and len(session.queue):
        for attempt in range(2):  # the second time, the skipped documents come back
            avoid = mine | (session.skipped if attempt == 0 else set())
            wanted = BATCH - len(items) + len(avoid)
            fresh = [i for i in session.queue.next(wanted) if (i.query, i.doc) not in avoid]
            if fresh or not session.skipped:
                items += fresh[:BATCH - len(items)]
                break
            session.skipped = set()
    by_query: dict[str, list[QueueItem]] = {}
    for item in items:
        by_query.setdefault(item.query, []).append(item)
    rng = random.Random(f"{session.round}|{session.batch_number}")
    session.batch = []
    for group in by_query.values():
        rng.shuffle(group)
        session.batch += group
    session.done = set()
    session.batch_number += 1


def _write(ws: Workspace, session: Session) -> None:
    """The session's judging file as the dataset's next version; the session's data
    becomes that version."""
    name = judging.round_file_name(session.round)
    info = ws.get_dataset(session.dataset_id, actor=session.actor)
    rounds = {f.name: FileRounds((), 0) for f in info.files if f.rounds is None}
    rounds[name] = FileRounds((judging.FILE_PREFIX + session.round,), len(session.rows))
    new = ws.add_to_dataset(
        session.dataset_id,
        [("labels", name, judging.judgments_file(judging.FILE_PREFIX + session.round,
                                                 session.rows))],
        rounds=rounds, replace=True, note=f"judged on the Judging page by {session.rater}",
        saved_by=session.rater if session.actor == ANONYMOUS else None,
        actor=session.actor)
    session.version = new.version
    comments = cache.reads_comments(state.get_options())
    _, loaded = workspace_glue.open_dataset(ws, session.dataset_id, comments=comments,
                                            version=new.version)
    state.set_loaded(loaded, cache.dataset_for(loaded), dataset_id=new.id,
                     dataset_version=new.version)


def _advance(session: Session, ws: Workspace | None) -> None:
    if session.current is None:
        _next_batch(session, ws)


def record(ws: Workspace, session: Session, grade: float) -> None:
    """Grade the current document (``grade`` NaN: "can't tell"): written to the
    workspace first; when the write fails (the workspace down, a role that may not add
    labels) nothing changes and it raises. The queue takes the document's grade by
    :data:`~ireval_core.decisions.judging.AGGREGATION`."""
    item = session.current
    if item is None:
        return
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    session.rows.append(judging.Judgment(item.query, item.doc, float(grade),
                                         session.rater, now))
    try:
        _write(ws, session)
    except BaseException:
        session.rows.pop()  # not written: the document is still the one to judge
        raise
    key = (item.query, item.doc)
    mine = [j for j in session.others + session.rows if (j.query, j.doc) == key]
    graded = judging.aggregate(mine).get(key)
    if graded is not None:
        session.queue.add([(item.query, item.doc, graded)])
    session.done.add(key)
    _advance(session, ws)


def cant_tell(ws: Workspace, session: Session) -> None:
    """Record that this rater cannot tell (not a grade: the document stays unjudged for
    the others and is not offered to this rater again)."""
    record(ws, session, judging.CANT_TELL)


def skip(session: Session, ws: Workspace | None = None) -> None:
    """Leave the current document unjudged, nothing written: it comes back once the
    queue's other documents are done."""
    item = session.current
    if item is not None:
        session.done.add((item.query, item.doc))
        session.skipped.add((item.query, item.doc))
        _advance(session, ws)


def undo(ws: Workspace, session: Session) -> str | None:
    """Take back this session's last label (the version written without it); the
    document is the next to judge again. Returns the document undone."""
    if not session.rows:
        return None
    last = session.rows.pop()
    try:
        _write(ws, session)
    except BaseException:
        session.rows.append(last)  # not written: the label stands
        raise
    files = state.get_loaded_files()  # the version just written
    qrels = files.qrels.qrels if files is not None and files.qrels is not None else None
    if qrels is not None:  # a queue cannot forget a label: made again without it
        q = session.queue
        session.queue = JudgeQueue(qrels, session.runs, q.measure, baseline=q.baseline,
                                   options=q.options)
    key = (last.query, last.doc)
    item = next((i for i in session.batch if (i.query, i.doc) == key),
                QueueItem(last.query, last.doc, (), (), "undone", 0.0))
    session.batch = [item] + [i for i in session.batch if i is not item]
    session.done.discard(key)
    return f"{last.query} / {last.doc}"


def verdict_line(number: int, v: PairVerdict) -> str:
    """A pair's state without its systems' names (the judging stays blind)."""
    if v.verdict == "depends":
        return (f"Pair {number}: depends on {v.remaining_holes:,} document"
                f"{'s' if v.remaining_holes != 1 else ''} (about {v.estimate:,} more labels)")
    return f"Pair {number}: settled: {v.verdict}"


def agreement(session: Session) -> RaterReport | None:
    """The raters' agreement on the documents two of them graded: every other session's
    labels as read at the last batch, with this session's up to its last label (or undo).
    Computed again only when those labels changed since the last call (the rater analysis
    takes tens of milliseconds for a few thousand labels); the page asks for it only
    while its panel is open, after the next document is drawn."""
    key = (session.batch_number, len(session.others), len(session.rows),
           session.rows[-1] if session.rows else None)
    if session.agreement_memo is None or session.agreement_memo[0] != key:
        session.agreement_memo = (key, judging.agreement(session.others + session.rows))
    return session.agreement_memo[1]


def exports(session: Session, runs: list[Run]) -> tuple[bytes, bytes, int]:
    """The judged labels (every session's) as TREC qrels and as the labeling table
    (CSV, formula cells escaped), and how many labels the table leaves out (documents
    none of ``runs`` ranks)."""
    everyone = session.others + session.rows
    table, left_out = judging.labeling_table(everyone, runs)
    return (judging.trec_qrels(judging.judged_qrels(everyone)),
            judging.labeling_csv(table), left_out)


@st.cache_data(max_entries=4, show_spinner="Reading the topics…")
def topics(name: str, data: bytes) -> dict[str, str]:
    """The query texts of a topics file."""
    return read_topics(data, name=name)


@st.cache_data(max_entries=4, show_spinner="Reading the documents the queue needs…")
def documents(name: str, data: bytes, wanted: tuple[str, ...]
              ) -> dict[str, tuple[str, str]]:
    """``(title, text)`` of the ``wanted`` documents found in a documents file."""
    return {k: (d.title, d.text) for k, d in read_documents(data, wanted, name=name).items()}
