"""The workspace's vocabulary: what a dataset, a file, a version, a note and a target
are, the errors it raises, and the checks every stored string passes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime

from ..errors import IrevalError, invalid_parameter
from ..measures import parse_measure
from ..params import InstanceOf, Options, check

FILE_KINDS = ("qrels", "run", "labels", "gsb", "metadata")
"""What a dataset file can be: judgments, a run, a labeling file (graded labels or
side-by-side good/same/bad preferences), or query metadata."""

TARGET_KINDS = ("dataset", "comparison", "query")
"""What a note can be attached to (see :class:`Target`)."""

NOTE_KINDS = ("note", "decision")
"""A note records an observation; a decision records what the team decided."""

SHORT_ID_LENGTH = 12
"""Length of :attr:`DatasetInfo.short_id`."""

FileContent = bytes | bytearray | memoryview
"""The content of a file to save: any bytes-like object (read, never copied whole)."""


# ------------------------------------------------------------------------- errors
class WorkspaceError(IrevalError):
    """The workspace cannot do what was asked; the message says what and where.

    ``url`` is the workspace's URL with any password hidden.
    """

    def __init__(self, message: str, *, url: str | None = None) -> None:
        self.url = url
        super().__init__(message)


class DatasetNotFoundError(WorkspaceError, LookupError):
    """No dataset with that id (or id prefix) is in the workspace."""


class RoundsInSetError(IrevalError, ValueError):
    """Files added to a dataset hold rounds it already has (and replacing was not chosen),
    or replacing them would drop rounds the new files do not bring. A refusal of the
    files, not a problem of the workspace (so not a :class:`WorkspaceError`).

    ``rounds`` are the rounds in question, ``files`` the names of the set's files that
    hold them, ``url`` the workspace's URL with any password hidden; ``replacing`` is
    ``True`` when replacing was chosen and would drop ``rounds`` (``False``: the rounds
    are already in the set). A caller words what to do from these fields in its own
    terms (the message says it in the API's).
    """

    def __init__(self, message: str, *, url: str | None = None,
                 rounds: tuple[str, ...] = (), files: tuple[str, ...] = (),
                 replacing: bool = False) -> None:
        self.url = url
        self.rounds = rounds
        self.files = files
        self.replacing = replacing
        super().__init__(message)


class FileNameTakenError(IrevalError, ValueError):
    """Files added to a dataset whose names are taken by files that stay in it (a file
    name is part of the dataset). ``names`` are those names, for a caller to word what
    to do in its own terms (rename the file, or replace the file of that name)."""

    names: tuple[str, ...] = ()


# ------------------------------------------------------------------- result types
@dataclass(frozen=True)
class FileInfo:
    """One file of a dataset: where it is in the dataset, what it is, its bytes' hash."""

    position: int
    """0-based place in the dataset, in the order the files were first saved."""
    kind: str
    """One of :data:`FILE_KINDS`."""
    name: str
    """The file name as uploaded, byte for byte."""
    sha256: str
    """SHA-256 of the file's bytes, 64 lowercase hexadecimal characters."""
    size: int
    """Size of the file in bytes (uncompressed)."""
    rounds: tuple[str, ...] | None = None
    """The rounds (e.g. months) the file holds, as the saver gave them (see
    :class:`FileRounds`); ``None`` when not given."""
    rows: int | None = None
    """The rows the file holds, as the saver gave them; ``None`` when not given."""


@dataclass(frozen=True)
class FileRounds:
    """What a saver states about one file of a set that grows by rounds: the rounds it
    holds and its rows (a labeling file's rounds and labeled rows, counted by the reader).

    The workspace does not read files: it records these, lists them with each version, and
    checks with them that a round is added to a set only once.
    """

    rounds: tuple[str, ...]
    rows: int

    def __post_init__(self) -> None:
        fn = "FileRounds"
        if isinstance(self.rounds, str) or not all(isinstance(r, str) for r in self.rounds):
            raise invalid_parameter("rounds", fn, "a tuple of round names (str)", self.rounds,
                                    error=TypeError)
        for r in self.rounds:
            check_text(r, "rounds", fn)
        if len(set(self.rounds)) != len(self.rounds):
            raise invalid_parameter("rounds", fn, "distinct round names", self.rounds)
        if isinstance(self.rows, bool) or not isinstance(self.rows, int) or self.rows < 0:
            raise invalid_parameter("rows", fn, "an int >= 0", self.rows, error=TypeError)
        object.__setattr__(self, "rounds", tuple(self.rounds))


@dataclass(frozen=True)
class DatasetVersion:
    """One version of a dataset: what it added (and replaced), when and by whom.

    Version 1 is the dataset as first saved; :meth:`Workspace.add_to_dataset` makes the
    next. Every version stays readable (:meth:`Workspace.get_dataset` with ``version=``).
    """

    dataset_id: str
    version: int
    saved_at: datetime
    """Timezone-aware UTC."""
    saved_by: str
    note: str
    added: tuple[FileInfo, ...]
    """The files this version added (version 1: all of its files)."""
    replaced: tuple[FileInfo, ...]
    """The files of the previous version this one left out (their rounds were replaced)."""
    n_files: int
    """Files in this version."""

    @property
    def rounds(self) -> tuple[str, ...]:
        """The rounds the added files hold, in the order given (unknown ones left out)."""
        return tuple(r for f in self.added for r in (f.rounds or ()))

    @property
    def rows(self) -> int | None:
        """The rows the added files hold; ``None`` when a file's rows were not given."""
        counts = [f.rows for f in self.added]
        return None if any(c is None for c in counts) else sum(c or 0 for c in counts)


@dataclass(frozen=True)
class DatasetInfo:
    """A saved dataset: its id, name, note, who saved it and when, and its files."""

    id: str
    """SHA-256 of the dataset's manifest (the sorted kinds, names and file hashes)."""
    name: str
    note: str
    saved_by: str
    saved_at: datetime
    """When it was first saved, timezone-aware UTC."""
    files: tuple[FileInfo, ...]
    """The files of :attr:`version`."""
    version: int = 1
    """The version these files are (1 = as first saved)."""
    latest_version: int = 1
    """The dataset's newest version: newer than :attr:`version` when this is an old one."""
    project: str = "default"
    """The project the dataset is in (see :meth:`Workspace.projects`)."""

    @property
    def rounds(self) -> tuple[str, ...]:
        """The rounds the files hold, as their savers stated them (unknown ones left out)."""
        return tuple(r for f in self.files for r in (f.rounds or ()))

    @property
    def short_id(self) -> str:
        """The first 12 characters of :attr:`id`, accepted wherever an id is."""
        return self.id[:SHORT_ID_LENGTH]

    @property
    def size(self) -> int:
        """Total size of the files in bytes."""
        return sum(f.size for f in self.files)

    def files_of_kind(self, kind: str) -> tuple[FileInfo, ...]:
        """The files of one kind (see :data:`FILE_KINDS`), in dataset order."""
        return tuple(f for f in self.files if f.kind == kind)


@dataclass(frozen=True)
class DeletedDataset:
    """What :meth:`Workspace.delete_dataset` removed."""

    id: str
    name: str
    files: int
    """Files the dataset had."""
    notes: int
    """Notes and decisions removed with it."""
    blobs_removed: int
    """Stored contents removed because no other dataset uses them."""
    bytes_freed: int
    """Uncompressed size of the removed contents."""


@dataclass(frozen=True)
class WorkspaceUsage:
    """How much the workspace holds."""

    datasets: int
    files: int
    """Files over all datasets (a content shared by two datasets counts twice)."""
    blobs: int
    """Distinct file contents stored."""
    raw_bytes: int
    """Uncompressed size of the distinct contents."""
    stored_bytes: int
    """Size of the distinct contents as stored (after compression)."""
    notes: int


@dataclass(frozen=True)
class Target:
    """What a note is about: the whole dataset, a comparison, or a query.

    Build one with :meth:`dataset`, :meth:`comparison` or :meth:`query`. ``key`` is
    the stored form: ``""`` for the dataset, the query id for a query, and for a
    comparison the JSON list ``["run A", "run B", "measure"]`` (JSON, so that run
    names containing any character stay unambiguous).

    Examples
    --------
    >>> t = Target.comparison("bm25", "neural", "ndcg_cut_10")
    >>> t.key, str(t)
    ('["bm25","neural","nDCG@10"]', 'bm25 vs neural on nDCG@10')
    >>> t.parts
    ('bm25', 'neural', 'nDCG@10')
    >>> str(Target.query("q7")), str(Target.dataset())
    ('query q7', 'dataset')
    """

    kind: str
    key: str = ""

    def __post_init__(self) -> None:
        check(self.kind, "kind", "Target", Options(TARGET_KINDS))
        check(self.key, "key", "Target", STR)
        check_text(self.key, "key", "Target", allow_empty=self.kind == "dataset")
        if self.kind == "dataset" and self.key:
            raise invalid_parameter("key", "Target", "'' for a dataset target", self.key)
        if self.kind == "comparison":
            try:
                parts = json.loads(self.key)
            except ValueError:
                parts = None
            if not (isinstance(parts, list) and len(parts) == 3
                    and all(isinstance(p, str) and p for p in parts)
                    and comparison_key(*parts) == self.key):
                raise invalid_parameter(
                    "key", "Target", "a comparison key made by Target.comparison", self.key)

    @classmethod
    def dataset(cls) -> Target:
        """The whole dataset."""
        return cls("dataset", "")

    @classmethod
    def comparison(cls, run_a: str, run_b: str, measure: str) -> Target:
        """Run B against run A on one measure.

        The measure is stored under its canonical name (``ndcg_cut_10`` and
        ``nDCG@10`` are one target; a name the registry does not know raises
        :class:`~ireval_core.errors.UnknownMeasureError`); :meth:`Workspace.notes`
        finds the notes of a comparison whichever run is A.
        """
        for param, value in (("run_a", run_a), ("run_b", run_b), ("measure", measure)):
            check_text(value, param, "Target.comparison")
        return cls("comparison", comparison_key(run_a, run_b, str(parse_measure(measure))))

    @classmethod
    def query(cls, query_id: str) -> Target:
        """One query, by its id."""
        check_text(query_id, "query_id", "Target.query")
        return cls("query", query_id)

    @property
    def parts(self) -> tuple[str, ...]:
        """``()``, ``(query_id,)`` or ``(run_a, run_b, measure)``."""
        if self.kind == "dataset":
            return ()
        if self.kind == "query":
            return (self.key,)
        return tuple(json.loads(self.key))

    def __str__(self) -> str:
        if self.kind == "dataset":
            return "dataset"
        if self.kind == "query":
            return f"query {self.key}"
        a, b, m = self.parts
        return f"{a} vs {b} on {m}"


@dataclass(frozen=True)
class Note:
    """A note or decision on a dataset, a comparison or a query (append-only)."""

    id: int
    """Increasing in the order notes were added."""
    dataset_id: str
    target: Target
    kind: str
    """``"note"`` or ``"decision"``."""
    text: str
    author: str
    created_at: datetime
    """Timezone-aware UTC."""
    supersedes: int | None = None
    """The id of the note this one replaces (an edit), if any."""
    superseded_by: int | None = None
    """The id of the latest note that replaces this one, if any."""



# ------------------------------------------------------------------------- helpers
STR = InstanceOf(str)


def check_text(given: object, param: str, function: str, *,
               allow_empty: bool = False) -> str:
    """A str PostgreSQL and SQLite both store exactly: no NUL, no lone surrogate."""
    value: str = check(given, param, function, STR)
    if not allow_empty and not value.strip():
        raise invalid_parameter(param, function, "a non-blank str", value)
    if "\x00" in value:
        raise invalid_parameter(param, function, "a str without NUL characters", value)
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise invalid_parameter(param, function, "valid Unicode (no unpaired surrogate)",
                                value) from None
    return value


def comparison_key(run_a: str, run_b: str, measure: str) -> str:
    """The stored key of a comparison target: JSON, so any run name stays unambiguous."""
    return json.dumps([run_a, run_b, measure], ensure_ascii=False, separators=(",", ":"))




def stored_keys(target: Target) -> tuple[str, ...]:
    """The stored keys that match ``target`` (a comparison matches both orders)."""
    if target.kind != "comparison":
        return (target.key,)
    a, b, m = target.parts
    return (target.key, comparison_key(b, a, m))


def utc(value: datetime) -> datetime:
    """A stored time as timezone-aware UTC (SQLite returns naive UTC)."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def utc_now() -> datetime:
    """The time now, timezone-aware UTC."""
    return datetime.now(UTC)


JUDGING_SET_KIND = "judging set"
"""The kind of the notes-table rows that hold a dataset's judging-set settings (never
listed by :meth:`Workspace.notes`)."""


@dataclass(frozen=True)
class JudgingSet:
    """How a dataset is judged on the Judging page: the team's guidelines, the label map
    that names the grades, and the overlap share served to a second rater.

    Stored with the dataset, **versioned**: every edit is a new record naming the one it
    replaces (nothing is overwritten); :meth:`Workspace.judging_set` gives the newest,
    :meth:`Workspace.judging_set_history` every edit. A dataset never edited has the
    defaults (``version`` 0).

    >>> JudgingSet().overlap, JudgingSet().version
    (0.0, 0)
    """

    guidelines: str = ""
    """Markdown shown beside each document."""
    label_map: str = ""
    """A label map's text (``none=0,low=1,mid=2,high=3`` or a built-in map's name); ``""``
    for the product's default names."""
    overlap: float = 0.0
    """Share of the judged documents (0 to 0.5) a second rater is asked to judge too."""
    version: int = 0
    """Edits so far (0: never edited)."""
    edited_by: str = ""
    edited_at: datetime | None = None

    def as_text(self) -> str:
        """The stored form: JSON of the three settings."""
        return json.dumps({"guidelines": self.guidelines, "label_map": self.label_map,
                           "overlap": self.overlap}, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_text(cls, text: str, *, version: int, edited_by: str,
                  edited_at: datetime) -> JudgingSet:
        """The settings stored as :meth:`as_text` (a key left out takes its default)."""
        data = json.loads(text)
        return cls(str(data.get("guidelines", "")), str(data.get("label_map", "")),
                   float(data.get("overlap", 0.0)), version, edited_by, edited_at)
