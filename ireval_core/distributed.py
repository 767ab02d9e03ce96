"""Evaluation over partitioned data with Dask: the same measures and numbers past one machine.

Nothing here computes a measure. Rows are moved so that every query (or every
session of a click log) is whole inside one partition, each partition is turned
into :class:`~ireval_core.data.Qrels` and :class:`~ireval_core.data.Run` objects and
evaluated by :func:`ireval_core.evaluate` itself, and the per-query values come
back as the same :class:`~ireval_core.evaluate.Evaluation` the in-memory path
gives: tables, tests, reports and pages work on them unchanged.

* :func:`evaluate_dask`: qrels and runs (Parquet datasets, TREC or CSV/TSV files
  larger than memory, local or any fsspec URL such as ``s3://``, or Dask
  DataFrames), every measure of the catalogue.
* :func:`evaluate_dask_trec`: :func:`evaluate_dask` of trec_eval's printed columns,
  with what ``eval --format trec`` prints beside the values (relstrings, trec_eval 10.0's
  ``-c`` values of the judged queries a run misses), made per partition;
  :func:`qrels_grades_dask`: the qrels' grades, for a trec_eval gain map.
* :func:`evaluate_labeled`: labeled rows ``(session, item, label, score)`` such as
  click logs or model scores over labeled data; a group (session or query) plays
  the query: AUC, GAUC, PNR and every other per-query measure.
* :func:`pooled_auc_dask`: AUC over all rows pooled, exact.
* :func:`dask_client`: a client on a running scheduler (``tcp://HOST:PORT``) or on
  a local cluster started for the job.

How the numbers stay the in-memory ones
---------------------------------------
* Rows are shuffled on a hash of the query id (qrels and run rows in one shuffle),
  so a query split across input files or partitions is evaluated as one.
* The aggregates are recomputed over all queries, as :func:`~ireval_core.evaluate`
  does: a mean over the concatenated per-query values, sums for counts, and for
  the two measures whose aggregate is not a mean of the values, per-query partial
  counts carried beside them (PNR: Σ concordant / Σ discordant; GAUC weighted by
  impressions: the judged retrieved documents of each query).
* Ids are text exactly as :mod:`ireval_core.io` reads them: TREC and CSV/TSV by
  ireval's own parser, a Parquet id column as strings, or integers as their decimal
  text (read with Arrow types, so an integer column with a null never becomes
  float64); a float or other id column is a :class:`FormatError` naming it. Labeled
  rows: CSV id cells as written (``007``, ``NA``), Parquet as above.
* ERR's default top grade is the highest grade of the whole qrels: it is found
  first and given to every partition.
* Errors are the in-memory engine's, in its order: the qrels' before the runs', a
  file's first bad line before its later ones, and for TREC and CSV/TSV text the same
  message and "and N more problems" count, whichever task failed first
  (:func:`~ireval_core.io.dask.first_error` reads the input again on failure, block by
  block; a Parquet duplicate is named by its rows). Labeled rows: the first bad rows in
  row order, numbered as rows of the whole input
  (:func:`~ireval_core.io.dask_rows.labeled_error`).
* Reading is :mod:`ireval_core.io.dask` and :mod:`ireval_core.io.dask_rows`; how each
  format is read, :data:`ireval_core.io.detect.DASK_READING`. An aggregate that is not
  a mean is made over partitions as its family declares
  (:attr:`~ireval_core.measures.registry.Family.parts`).
* Before an :class:`~ireval_core.evaluate.Evaluation` is returned, the rows that
  reached the evaluation are counted against the rows read and every query must
  come from one partition only; a failed job (a worker lost beyond Dask's retries)
  raises :class:`DistributedError`. A partial table is never returned.

Memory and cost: a worker holds one partition as read (64 MB of text, a gzip file
inflated within :class:`~ireval_core.io.ReadLimits` as in memory, or a Parquet
file's row groups) or one partition after the shuffle (about the same number of rows),
plus Dask's shuffle buffers; each partition's per-query values are fetched as soon as
it is done. The client holds the per-query values (the :class:`Evaluation`). PNR and
``GAUC(weight=impressions)`` cost a second join per partition, for the partial counts.

Systems are ordered by input, then by first appearance of their tag; a tag already
used by an earlier input is renamed ``stem:tag`` with a ``run-renamed`` warning, as
:func:`ireval_core.io.read_runs` does. Reading warnings of the in-memory readers
(fractional grades, extra columns) are not collected here.

>>> import dask.dataframe as dd
>>> import pandas as pd
>>> rows = pd.DataFrame({"session": ["s1", "s1", "s1", "s2", "s2"],
...                      "item": ["a", "b", "c", "a", "d"],
...                      "label": [1, 0, 0, 0, 1],
...                      "score": [0.9, 0.8, 0.95, 0.7, 0.6]})
>>> res = evaluate_labeled(dd.from_pandas(rows, npartitions=2), ["GAUC", "PNR"])
>>> res.per_query("score", "GAUC").round(3).to_dict()
{'s1': 0.5, 's2': 0.0}
>>> res.mean("score", "GAUC"), res.mean("score", "PNR")
(0.25, 0.5)
>>> auc = pooled_auc_dask(dd.from_pandas(rows, npartitions=2))
>>> auc.auc, auc.n_positive, auc.n_negative  # 2 of the 6 pairs are won
(0.3333333333333333, 2, 3)
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import dask
import dask.dataframe as dd
import numpy as np
import pandas as pd
import pyarrow as pa

from .data import DuplicateEntryError, Qrels, Run, join, read_only
from .errors import DataWarning, DistributedError, FormatError, invalid_parameter
from .evaluate import Evaluation, evaluate
from .io.columns import Kind
from .io.dask import (
    DEFAULT_BLOCKSIZE,
    TEXT,
    PathLike,
    Sources,
    chunked,
    compute,
    first_error,
    first_line,
    frame_meta,
    name_of,
    read_qrels_dask,
    read_runs_dask,
    stem,
)
from .io.dask_rows import labeled_error, labeled_frame, labeled_ids
from .io.qrels_runs import unique_name
from .measures import Measure, parse_measures
from .measures.pairwise import auc_counts
from .options import EvalOptions
from .trec_output import Column, trec_texts

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["DEFAULT_BLOCKSIZE", "POOLED_AUC_DEFINITION", "DistributedError", "PooledAUC",
           "TrecEvaluation", "dask_client", "evaluate_dask", "evaluate_dask_trec",
           "evaluate_labeled", "pooled_auc_dask", "qrels_grades_dask", "read_qrels_dask",
           "read_runs_dask"]

_ABSENT = "\x00absent"  # query id of the one-row run standing for a system a partition lacks


# ----------------------------------------------------------------------------- clients


@contextmanager
def dask_client(scheduler: str | None = None, *, n_workers: int | None = None,
                timeout: float = 10.0) -> Iterator[Client]:
    """A Dask client on a running scheduler, or on a local cluster started for the job.

    Parameters
    ----------
    scheduler:
        Address of a running scheduler (``tcp://HOST:PORT``). Its workers read the
        input themselves: paths must exist on every worker (a shared file system)
        or be URLs they can reach (``s3://``, ``gs://``, ...), and ``ireval_core``
        must be importable there.
    n_workers:
        Without ``scheduler``: worker processes of the local cluster (one thread
        each; default one per core).
    timeout:
        Seconds to wait for the scheduler.

    Raises
    ------
    DistributedError
        When the scheduler cannot be reached.
    """
    from distributed import Client, LocalCluster

    if scheduler is not None and n_workers is not None:
        raise invalid_parameter("n_workers", "dask_client", "None when a scheduler address "
                                "is given", n_workers)
    if n_workers is not None and (isinstance(n_workers, bool) or not isinstance(n_workers, int)
                                  or n_workers < 1):
        raise invalid_parameter("n_workers", "dask_client", "an int >= 1 or None", n_workers)
    if scheduler is not None:
        try:
            client = Client(scheduler, timeout=timeout)
        except (OSError, TimeoutError) as exc:
            raise DistributedError(f"cannot reach the Dask scheduler at {scheduler}: "
                                   f"{first_line(exc)}") from exc
        try:
            yield client
        finally:
            client.close()
        return
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


# ----------------------------------------------------------------------------- evaluation


@dataclass(frozen=True)
class _SystemPart:
    """One system's per-query values in one partition, and the partials of aggregates."""

    query_ids: np.ndarray
    values: dict[str, np.ndarray]
    partials: dict[str, tuple[np.ndarray, ...]]
    answered: np.ndarray | None = None  # the queries the run answers in this partition
    strings: dict[str, dict[str, str]] = field(default_factory=dict)  # trec_output.trec_texts
    overrides: dict[str, dict[str, float]] = field(default_factory=dict)


@dataclass(frozen=True)
class _Part:
    """What one partition sends back: its systems (by input key) and its row count."""

    rows: int
    systems: dict[tuple[int, str], _SystemPart]
    absent: _SystemPart | None = None  # values of a system with no row here (complete=True)
    judged: np.ndarray | None = None  # the query ids of the qrels in this partition


def _with_global_grade(specs: Sequence[Measure], top: float | None) -> list[Measure]:
    """ERR without ``max_grade`` takes the highest grade of the whole qrels, not the part's."""
    out = []
    for m in specs:
        if top is not None and m.name == "ERR" and m.get("max_grade") is None:
            params = tuple(sorted((*m.params, ("max_grade", float(top)))))
            m = Measure(m.name, m.cutoff, params)
        out.append(m)
    return out


def _needs_top_grade(specs: Sequence[Measure]) -> bool:
    return any(m.name == "ERR" and m.get("max_grade") is None for m in specs)


def _system_part(qrels: Qrels, run: Run, res: Evaluation, specs: Sequence[Measure],
                 eval_specs: Sequence[Measure], o: EvalOptions,
                 cols: Sequence[Column] = ()) -> _SystemPart:
    values = {str(m): res.values[(run.name, str(em))] for m, em in zip(specs, eval_specs,
                                                                          strict=True)}
    partials: dict[str, tuple[np.ndarray, ...]] = {}
    need = [(m, em, fn) for m, em in zip(specs, eval_specs, strict=True)
            if m.family.parts is not None and (fn := m.family.parts.partials) is not None]
    if need:
        ranked = join(qrels, run, options=o)
        for m, em, fn in need:
            partials[str(m)] = fn(ranked, em, o)
    strings, overrides = trec_texts(qrels, run, cols, o) if cols else ({}, {})
    return _SystemPart(res.query_ids[run.name], values, partials, run.query_ids, strings,
                       overrides)


def _evaluate_part(qrels: Qrels, runs: Mapping[tuple[int, str], Run], rows: int,
                   specs: Sequence[Measure], eval_specs: Sequence[Measure],
                   o: EvalOptions, cols: Sequence[Column] = ()) -> _Part:
    """Evaluate one partition with :func:`ireval_core.evaluate`; with ``cols`` (trec_eval's
    printed columns), each system's relstrings and 10.0's values for the queries it misses
    too (:func:`~ireval_core.trec_output.trec_texts`)."""
    named = [run.renamed(str(i)) for i, run in enumerate(runs.values())]
    if o.complete:  # every qrels query counts, also for systems without a row here
        named.append(Run.from_arrays([_ABSENT], [_ABSENT], [0.0], name=str(len(named))))
    judged = np.asarray(qrels.query_ids, dtype=object)
    if not named:
        return _Part(rows, {}, judged=judged)
    res = evaluate(qrels, named, eval_specs, options=o)
    parts = [_system_part(qrels, run, res, specs, eval_specs, o, cols) for run in named]
    absent = parts.pop() if o.complete else None
    return _Part(rows, dict(zip(runs, parts, strict=True)), absent, judged)


def _build(kind: Kind, q: pd.Series | pa.ChunkedArray, d: pd.Series | pa.ChunkedArray,
           v: pd.Series, *, name: str, source: str) -> Any:
    """Qrels or Run from a partition's columns; a duplicate pair is a format error."""
    ids = [x if isinstance(x, pa.ChunkedArray) else chunked(pa.Array.from_pandas(x)).cast(
        pa.string()) for x in (q, d)]
    values = v.to_numpy(dtype=np.float64, na_value=np.nan)
    try:
        if kind == "qrels":
            return Qrels.from_arrays(ids[0], ids[1], values, source=source)
        return Run.from_arrays(ids[0], ids[1], values, name=name, source=source)
    except DuplicateEntryError as exc:
        message = (f"duplicate {kind} entry for query {exc.query_id!r}, document "
                   f"{exc.doc_id!r}; each (query, document) may appear once")
        if kind == "run":
            message = f"{message} per run (run {name!r})"
        raise FormatError(message, source=source) from None


def _union_partition(df: pd.DataFrame, specs: Sequence[Measure], eval_specs: Sequence[Measure],
                     o: EvalOptions, sources: Sequence[str],
                     cols: Sequence[Column] = ()) -> _Part:
    run = df["run"].to_numpy()
    is_qrels = run < 0
    qrels = _build("qrels", df["qid"][is_qrels], df["docid"][is_qrels], df["value"][is_qrels],
                   name="", source=sources[0])
    rdf = df[~is_qrels]
    runs: dict[tuple[int, str], Run] = {}
    groups = rdf.groupby(["run", "tag"], sort=True, observed=True, dropna=False).indices
    for (i, tag), rows in sorted(groups.items()):
        part = rdf.iloc[rows]
        runs[(int(i), str(tag))] = _build("run", part["qid"], part["docid"], part["value"],
                                         name=str(tag), source=sources[int(i) + 1])
    return _evaluate_part(qrels, runs, len(df), specs, eval_specs, o, cols)


def _prepare(measures: str | Sequence[str | Measure], options: EvalOptions | None,
             npartitions: int | None, function: str) -> tuple[list[Measure], EvalOptions]:
    options = EvalOptions() if options is None else options
    if not isinstance(options, EvalOptions):
        raise invalid_parameter("options", function, "an EvalOptions", options, error=TypeError)
    if npartitions is not None and (isinstance(npartitions, bool)
                                    or not isinstance(npartitions, int) or npartitions < 1):
        raise invalid_parameter("npartitions", function, "an int >= 1 or None", npartitions)
    return parse_measures(list(measures) if not isinstance(measures, str) else measures), options


def evaluate_dask(qrels: Sources | dd.DataFrame,
                  runs: PathLike | dd.DataFrame | Sequence[PathLike | dd.DataFrame],
                  measures: str | Sequence[str | Measure], *,
                  options: EvalOptions | None = None, client: Client | None = None,
                  npartitions: int | None = None,
                  storage_options: Mapping[str, Any] | None = None,
                  notes: list[DataWarning] | None = None,
                  progress: Callable[[int, int], None] | None = None) -> Evaluation:
    """:func:`ireval_core.evaluate` on partitioned data: same measures, same numbers.

    Parameters
    ----------
    qrels:
        Judgments: a path, folder, glob or URL (Parquet, TREC, CSV/TSV), a list of
        them, or a Dask DataFrame (see :func:`read_qrels_dask`).
    runs:
        One run input or a list of them (paths as ``qrels``, or Dask DataFrames);
        each may hold several systems (a tag column). A list of paths is several
        runs; to give one run split over several files, use a folder or a glob.
    measures:
        Measure specs or their text, as :func:`ireval_core.evaluate`.
    options:
        The evaluation options (:class:`~ireval_core.options.EvalOptions`); with
        ``trec_eval="10.0"`` TREC text files are read with its ``#`` comment rule (as
        ``eval --trec-eval 10.0`` reads them in memory), else with 9.0.8's (no comments).
    client:
        A ``distributed.Client`` (see :func:`dask_client`); ``None``: Dask's current
        scheduler (the active client, else local threads).
    npartitions:
        Partitions after the shuffle by query (default: as many as read).
    storage_options:
        Passed to fsspec for URL inputs.
    notes:
        A list receiving ``run-renamed`` warnings.
    progress:
        Called as ``progress(done, total)`` each time a partition's evaluation is
        fetched (``total``: the partitions after the shuffle, plus 2 small tasks).

    Returns
    -------
    Evaluation
        Exactly what :func:`ireval_core.evaluate` returns on the same data.

    Raises
    ------
    FormatError
        Input that cannot be read (file and line when there is one), or a duplicate
        (query, document) pair: the error of the first input that has one (the qrels,
        then the runs in order), and of its first file that has one, whichever task
        failed first. For TREC and CSV/TSV text read by this module, it is the error the
        in-memory reader gives for that file: its bad lines and duplicates in line order
        (the first 100, and how many in all), a duplicate named by both its lines (and as
        judgment groups when their second columns differ). On such a failure the input
        is read once more, every block line by line, and its good lines shuffled by query
        to pair the duplicates (:func:`~ireval_core.io.dask.first_error`). Parquet and
        Dask DataFrames: the error of their first partition that has one; a Parquet
        input's duplicate as the in-memory reader names it (both rows).
    DistributedError
        The job stopped (e.g. workers lost beyond Dask's retries) or its result is
        incomplete.
    """
    specs, options = _prepare(measures, options, npartitions, "evaluate_dask")
    parts, total, keys, system_names = _evaluate_union(
        qrels, runs, specs, options, client=client, npartitions=npartitions,
        storage_options=storage_options, notes=notes, progress=progress)
    return _assemble(parts, total, keys, system_names, specs, options)


@dataclass(frozen=True)
class TrecEvaluation:
    """The Dask engine's evaluation with what trec_eval prints beside the values, as
    :func:`ireval_core.trec_output.write_trec` takes them: ``strings`` (relstrings) and
    ``overrides`` (trec_eval 10.0's values for the judged queries a run misses, ``-c``),
    each by (system, column label) and query; ``judged``: the query ids of the qrels."""

    evaluation: Evaluation
    strings: dict[tuple[str, str], dict[str, str]]
    overrides: dict[tuple[str, str], dict[str, float]]
    judged: np.ndarray


def evaluate_dask_trec(qrels: Sources | dd.DataFrame,
                       runs: PathLike | dd.DataFrame | Sequence[PathLike | dd.DataFrame],
                       cols: Sequence[Column], *, options: EvalOptions | None = None,
                       client: Client | None = None, npartitions: int | None = None,
                       storage_options: Mapping[str, Any] | None = None,
                       notes: list[DataWarning] | None = None,
                       progress: Callable[[int, int], None] | None = None) -> TrecEvaluation:
    """:func:`evaluate_dask` of trec_eval's printed columns ``cols``
    (:func:`ireval_core.trec_output.columns`), with their texts: each query's relstrings
    and, under 10.0's ``-c``, the values it prints for the judged queries a run misses.

    Every partition computes them for its queries with
    :func:`~ireval_core.trec_output.trec_texts`, the function the in-memory engine uses
    (a query's ranking and qrels are whole in one partition), so they are the in-memory
    ones, 9.0.8's float32 score ties included. Parameters as :func:`evaluate_dask`.
    """
    specs, options = _prepare([c.measure for c in cols if c.measure is not None], options,
                              npartitions, "evaluate_dask_trec")
    parts, total, keys, names = _evaluate_union(
        qrels, runs, list(dict.fromkeys(specs)), options, client=client,
        npartitions=npartitions, storage_options=storage_options, notes=notes,
        progress=progress, cols=tuple(cols))
    res = _assemble(parts, total, keys, names, list(dict.fromkeys(specs)), options)
    strings: dict[tuple[str, str], dict[str, str]] = {}
    overrides: dict[tuple[str, str], dict[str, float]] = {}
    for key, name in zip(keys, names, strict=True):
        for p in parts:
            piece = p.systems.get(key, p.absent)
            if piece is None:
                continue
            for label, texts in piece.strings.items():
                strings.setdefault((name, label), {}).update(texts)
            for label, values in piece.overrides.items():
                overrides.setdefault((name, label), {}).update(values)
    judged = np.concatenate([np.zeros(0, object)] + [p.judged for p in parts
                                                     if p.judged is not None])
    return TrecEvaluation(res, strings, overrides, read_only(np.sort(judged.astype(str))
                                                            .astype(object)))


def qrels_grades_dask(qrels: Sources | dd.DataFrame, *, options: EvalOptions | None = None,
                      client: Client | None = None,
                      storage_options: Mapping[str, Any] | None = None) -> np.ndarray:
    """The distinct grades of the qrels, sorted (what a trec_eval gain map such as
    ``ndcg.1=3`` leaves at their own value: :func:`ireval_core.trec_output.columns`),
    read as :func:`evaluate_dask` reads them; a bad line is the in-memory engine's error."""
    options = EvalOptions() if options is None else options
    frame = read_qrels_dask(qrels, storage_options=storage_options,
                            comments=options.trec_eval == "10.0")
    try:
        (grades,) = compute(client, frame["value"].drop_duplicates())
    except FormatError as exc:
        raise (first_error([frame], client) or exc.fresh()) from None
    return np.unique(np.asarray(grades, dtype=np.float64))


def _evaluate_union(qrels: Sources | dd.DataFrame,
                    runs: PathLike | dd.DataFrame | Sequence[PathLike | dd.DataFrame],
                    specs: Sequence[Measure], options: EvalOptions, *, client: Client | None,
                    npartitions: int | None, storage_options: Mapping[str, Any] | None,
                    notes: list[DataWarning] | None,
                    progress: Callable[[int, int], None] | None,
                    cols: Sequence[Column] = ()
                    ) -> tuple[list[_Part], int, list[tuple[int, str]], list[str]]:
    """The partitions' results of qrels and runs shuffled by query, the rows read, the
    systems (input, tag) in order and their names."""
    comments = options.trec_eval == "10.0"  # its '#' comment lines, as the CLI reads them
    q_frame = read_qrels_dask(qrels, storage_options=storage_options, comments=comments)
    run_inputs: list[PathLike | dd.DataFrame] = (
        list(runs) if isinstance(runs, Sequence) and not isinstance(runs, str) else [runs])
    names = [name_of(r, "run") for r in run_inputs]
    r_frames = [read_runs_dask(r, storage_options=storage_options, comments=comments)
                for r in run_inputs]
    inputs = [q_frame, *r_frames]
    try:
        top = None
        if _needs_top_grade(specs):
            (top,) = compute(client, q_frame["value"].max())
            top = max(float(top), 0.0) if top == top else 0.0  # empty qrels: 0, as join does
        eval_specs = _with_global_grade(specs, top)
        union = dd.concat(
            [q_frame.assign(tag="", run=np.int16(-1))[list(frame_meta("union").columns)]]
            + [f.assign(run=np.int16(i))[list(frame_meta("union").columns)]
               for i, f in enumerate(r_frames)])
        union = union.astype({"tag": TEXT, "run": np.int16})
        shuffled, counts, firsts = _shuffled(union, "qid", npartitions, frame_meta("union"),
                                             _systems_in)
        sources = [name_of(qrels, "qrels"), *names]
        tasks = [dask.delayed(_union_partition)(p, specs, eval_specs, options, sources, cols)
                 for p in shuffled]
        *parts, total, firsts = compute(client, *tasks, counts, firsts, progress=progress)
    except FormatError as exc:  # the first input's first error, whichever task failed first
        raise (first_error(inputs, client) or exc.fresh()) from None
    keys = list(dict.fromkeys(k for found in firsts for k in found))  # first appearance
    if set(keys) != {k for p in parts for k in p.systems}:
        raise DistributedError("incomplete result: the systems read and the systems "
                               "evaluated differ; no partial result is returned")
    system_names = _system_names(keys, [stem(n) for n in names], names, notes)
    return list(parts), int(total), keys, system_names


def _shuffled(frame: dd.DataFrame, on: str, npartitions: int | None, meta: pd.DataFrame,
              probe: Callable[[pd.DataFrame], Any] | None = None) -> tuple[list[Any], Any, Any]:
    """Partitions of ``frame`` shuffled on ``on``, the rows read, and ``probe`` of each
    partition read (a list, in input order); all delayed.

    They come from the same read tasks, so the data is read once and the count is of
    exactly the rows that went into the shuffle.
    """
    read = frame.to_delayed()
    total = dask.delayed(sum)([dask.delayed(len)(p) for p in read])
    probes = dask.delayed(list)([dask.delayed(probe)(p) for p in read] if probe else [])
    moved = dd.from_delayed(read, meta=meta, verify_meta=False).shuffle(
        on=on, npartitions=npartitions or max(len(read), 1))
    return list(moved.to_delayed()), total, probes


def _systems_in(df: pd.DataFrame) -> list[tuple[int, str]]:
    """(run input, tag) of the run rows of a partition, in order of first appearance."""
    rows = df.loc[df["run"].to_numpy() >= 0, ["run", "tag"]].drop_duplicates()
    return [(int(i), str(t)) for i, t in zip(rows["run"], rows["tag"], strict=True)]


def _system_names(keys: Sequence[tuple[int, str]], stems: Sequence[str], sources: Sequence[str],
                  notes: list[DataWarning] | None) -> list[str]:
    """Names of the systems, in order; a tag of several inputs names each of them after
    its input (``bm25:rank``, as :func:`ireval_core.io.shared_tag_names`), a tag taken by
    an earlier input's name is renamed."""
    inputs: dict[str, list[int]] = {}
    for i, tag in keys:
        inputs.setdefault(tag, []).append(i)
    taken: dict[str, str] = {}
    out = []
    for i, tag in keys:
        if tag and len(inputs[tag]) > 1:
            name = unique_name(None, f"{stems[i]}:{tag}", set(taken))
            if notes is not None:
                files = ", ".join(sources[k] for k in inputs[tag])
                notes.append(DataWarning(
                    "run-renamed", f"tag {tag!r} is the tag of runs in {len(inputs[tag])} "
                    f"files ({files}): each is named after its file and tag, this one "
                    f"{name!r}", source=sources[i], count=1))
            taken[name] = sources[i]
            out.append(name)
            continue
        name = unique_name(tag, stems[i], set(taken))
        if name != tag and notes is not None:
            other = taken.get(tag, "")
            where = f"the run {tag!r} of {other}" if other else f"the run name {tag!r}"
            notes.append(DataWarning("run-renamed", f"tag {tag!r} is already {where}: this "
                                     f"run is named {name!r}", source=sources[i], count=1))
        taken[name] = sources[i]
        out.append(name)
    return out


def _assemble(parts: Sequence[_Part], total: int, keys: Sequence[tuple[int, str]],
              names: Sequence[str], specs: Sequence[Measure], o: EvalOptions) -> Evaluation:
    """One :class:`Evaluation` from the partitions, after checking nothing is missing."""
    seen = sum(p.rows for p in parts)
    if seen != total:
        raise DistributedError(f"incomplete result: {seen} of {total} rows reached the "
                               "evaluation; no partial result is returned")
    query_ids: dict[str, np.ndarray] = {}
    values: dict[tuple[str, str], np.ndarray] = {}
    aggregates: dict[tuple[str, str], float] = {}
    counts: dict[tuple[str, str], int] = {}
    answered: dict[str, np.ndarray] = {}
    for key, name in zip(keys, names, strict=True):
        answered[name] = read_only(np.concatenate([np.zeros(0, object)] + [
            np.asarray(p.systems[key].answered, dtype=object) for p in parts
            if key in p.systems and p.systems[key].answered is not None]))
        pieces = [p.systems.get(key, p.absent) for p in parts]
        got = [s for s in pieces if s is not None]
        qids = np.concatenate([s.query_ids for s in got]) if got else np.array([], object)
        order = np.argsort(qids.astype(str), kind="stable")
        qids = qids[order]
        if len(qids) > 1 and (qids[1:] == qids[:-1]).any():
            dup = qids[1:][qids[1:] == qids[:-1]][0]
            raise DistributedError(f"query {dup!r} of {name!r} came from two partitions; "
                                   "no partial result is returned")
        query_ids[name] = read_only(qids.astype(object))
        for m in specs:
            k = str(m)
            v = (np.concatenate([s.values[k] for s in got]) if got else np.array([]))[order]
            values[(name, k)] = read_only(v)
            parts_of = m.family.parts
            n = int(np.count_nonzero(~np.isnan(v)))
            counts[(name, k)] = n
            if parts_of is None:  # as evaluate: the mean over the counted queries
                aggregates[(name, k)] = float(np.nanmean(v)) if n else float("nan")
                continue
            width = len(got[0].partials.get(k, ())) if got else 0
            partials = tuple(np.concatenate([s.partials[k][j] for s in got])[order]
                             for j in range(width))
            aggregates[(name, k)] = parts_of.combine(m, v, partials)
    return Evaluation(tuple(names), tuple(specs), o, query_ids, values, aggregates, counts,
                      answered)


def _labeled_partition(df: pd.DataFrame, group: str, item: str, label: str,
                       scores: Sequence[str], specs: Sequence[Measure],
                       eval_specs: Sequence[Measure], o: EvalOptions, source: str) -> _Part:
    gid, iid = (labeled_ids(df, col, source) for col in (group, item))
    grades = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    if np.isinf(grades).any():
        raise FormatError(f"expected finite labels in column {label!r}, got an infinite one",
                          source=source)
    judged = ~np.isnan(grades)  # a missing label: an unjudged row, kept in the rankings
    keep = pa.array(judged)
    qrels = _build("qrels", gid.filter(keep), iid.filter(keep), df[label][judged],
                   name="", source=source)
    runs: dict[tuple[int, str], Run] = {}
    for s in scores:
        v = df[s].to_numpy(dtype=np.float64, na_value=np.nan)
        if not np.isfinite(v).all():
            bad = int(np.flatnonzero(~np.isfinite(v))[0])
            raise FormatError(f"expected finite scores in column {s!r}, got {float(v[bad])} "
                              f"({group} {str(df[group].iloc[bad])!r}, {item} "
                              f"{str(df[item].iloc[bad])!r})", source=source)
        runs[(0, s)] = _build("run", gid, iid, df[s], name=s, source=source)
    return _evaluate_part(qrels, runs, len(df), specs, eval_specs, o)


def evaluate_labeled(data: Sources | dd.DataFrame, measures: str | Sequence[str | Measure], *,
                     group: str = "session", item: str = "item", label: str = "label",
                     score: str | Sequence[str] = "score", options: EvalOptions | None = None,
                     client: Client | None = None, npartitions: int | None = None,
                     storage_options: Mapping[str, Any] | None = None) -> Evaluation:
    """Evaluate labeled rows (a click log, model scores over labeled data) group by group.

    Every ``group`` (a search session for GAUC, or a query) plays the query, its
    rows are the ranked items, ``label`` their grade (clicks: 1 / 0; a missing label
    is an unjudged row) and each ``score`` column one system. The result is the
    :class:`~ireval_core.evaluate.Evaluation` that :func:`ireval_core.evaluate` gives
    for ``Qrels(group, item, label)`` and ``Run(group, item, score)``: GAUC is the
    per-group AUC averaged over the groups having both classes (plain, or weighted
    by group size with ``GAUC(weight=impressions)``), PNR is Σ concordant / Σ
    discordant pairs over all groups.

    Parameters
    ----------
    data:
        Parquet file or dataset folder (local or URL), CSV/TSV files with a header,
        or a Dask DataFrame.
    measures:
        Any measure of the catalogue (``"GAUC"``, ``"PNR"``, ``"nDCG@10"``, ...).
    group, item, label, score:
        Column names; ``score`` may list several columns (several systems, named by
        their column).
    options, client, npartitions, storage_options:
        As :func:`evaluate_dask`.
    """
    specs, options = _prepare(measures, options, npartitions, "evaluate_labeled")
    scores = [score] if isinstance(score, str) else list(score)
    if not scores or len(set(scores)) != len(scores) or {group, item, label} & set(scores):
        raise invalid_parameter("score", "evaluate_labeled", "one or more distinct columns, "
                                "none of them the group, item or label", score)
    frame, name = labeled_frame(data, [group, item, label, *scores], storage_options,
                                 ids=[group, item])
    try:
        top = None
        if _needs_top_grade(specs):
            (top,) = compute(client, frame[label].max())
            top = max(float(top), 0.0) if top == top else 0.0
        eval_specs = _with_global_grade(specs, top)
        shuffled, counts, _ = _shuffled(frame, group, npartitions, frame._meta)
        tasks = [dask.delayed(_labeled_partition)(p, group, item, label, scores, specs,
                                                  eval_specs, options, name)
                 for p in shuffled]
        *parts, total = compute(client, *tasks, counts)
    except FormatError as exc:  # the first rows' error, whichever task failed first
        raise (labeled_error(frame, client, source=name, ids=(group, item), label=label,
                             scores=scores) or exc.fresh()) from None
    keys = [(0, s) for s in scores]
    return _assemble(parts, int(total), keys, scores, specs, options)


# ----------------------------------------------------------------------------- pooled AUC


POOLED_AUC_DEFINITION = (
    "pooled AUC over all rows: P(score of a relevant row (label >= {rel}) > score of a "
    "non-relevant one (0 <= label < {rel})), score ties count ½; rows with a missing or "
    "negative label are left out; exact (Mann–Whitney U from per-bucket counts over one "
    "global score order, equal to sklearn's roc_auc_score on the same rows)")
"""Definition of :func:`pooled_auc_dask`; format with ``rel``."""


@dataclass(frozen=True)
class PooledAUC:
    """AUC over all rows pooled, with the counts it is made of and its definition.

    ``twice_u`` is 2·U of Mann–Whitney (pairs won count 2, ties 1), so
    ``auc = twice_u / (2 · n_positive · n_negative)``. ``n_buckets`` is the number of
    score ranges the rows were cut into, one partition each, and ``largest_partition``
    the judged rows of the largest: what one worker held at once for the count
    (about judged rows / ``n_buckets``).
    """

    auc: float
    n_positive: int
    n_negative: int
    twice_u: int
    definition: str
    n_buckets: int = field(default=1, compare=False)
    largest_partition: int = field(default=0, compare=False)

    def __float__(self) -> float:
        return self.auc


def _sketch(df: pd.DataFrame, label: str, score: str, k: int,
            source: str) -> tuple[np.ndarray, int]:
    """``k + 1`` quantiles of the judged rows' scores of one partition, and their number."""
    grade = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    s = df[score].to_numpy(dtype=np.float64, na_value=np.nan)[grade >= 0]
    if not np.isfinite(s).all():
        raise FormatError(f"expected finite scores in column {score!r}, got "
                          f"{float(s[~np.isfinite(s)][0])}", source=source)
    if not s.size:
        return np.zeros(0), 0
    return np.quantile(s, np.linspace(0.0, 1.0, k + 1)), int(s.size)


SKETCH_POINTS = 1 << 24
"""Most quantile points all partitions' sketches hold together (on the client)."""


def _sketch_size(n_partitions: int, n_buckets: int) -> int:
    """Quantile intervals per partition's sketch: 8 per bucket (at least 64), within
    :data:`SKETCH_POINTS` in all."""
    return int(max(64, min(8 * n_buckets, SKETCH_POINTS // max(n_partitions, 1))))


def _bucket_bounds(sketches: Sequence[tuple[np.ndarray, int]], n_buckets: int) -> np.ndarray:
    """Interior bucket boundaries that cut the judged rows into ``n_buckets`` equal parts.

    Each partition's ``k + 1`` quantiles say that ``n / k`` of its rows lie between two
    consecutive ones; spread evenly there (all at one value when both are equal), the
    partitions add up to a piecewise linear estimate of the pooled distribution, which
    is cut at ``i / n_buckets``. Partitions alike (the usual case) give the same
    quantiles over and over: weighing the points themselves would leave no boundary
    between them, and buckets as large as a quantile step, however many were asked.

    Any boundaries give the exact AUC (a score value falls in exactly one bucket);
    these balance the buckets, so a bucket holds about rows / ``n_buckets``.
    """
    pts = [(np.asarray(q, dtype=np.float64), n) for q, n in sketches if n]
    if not pts or n_buckets < 2:
        return np.zeros(0)
    lo = np.concatenate([q[:-1] if len(q) > 1 else q for q, _ in pts])
    hi = np.concatenate([q[1:] if len(q) > 1 else q for q, _ in pts])
    mass = np.concatenate([np.full(max(len(q) - 1, 1), n / max(len(q) - 1, 1))
                           for q, n in pts])
    grid = np.unique(np.concatenate([lo, hi]))
    point = lo == hi
    at_point = np.bincount(np.searchsorted(grid, lo[point]), weights=mass[point],
                           minlength=len(grid))
    # mass of each gap between consecutive grid values: every interval spreads its mass
    # over the gaps it covers, in proportion to their widths
    width = np.diff(grid)
    first = np.searchsorted(grid, lo[~point])
    last = np.searchsorted(grid, hi[~point])  # the interval covers gaps first .. last - 1
    density = mass[~point] / (hi[~point] - lo[~point])
    slope = np.cumsum(np.bincount(first, weights=density, minlength=len(grid))
                      - np.bincount(last, weights=density, minlength=len(grid)))[:-1]
    in_gap = np.maximum(slope, 0.0) * width
    # the estimated count of rows below each grid value, and up to it (its point mass)
    after = np.cumsum(at_point + np.concatenate([[0.0], in_gap]))
    before = after - at_point
    cdf = np.column_stack([before, after]).ravel()
    xs = np.repeat(grid, 2)
    targets = np.linspace(0.0, cdf[-1], n_buckets + 1)[1:-1]
    return np.unique(np.interp(targets, cdf, xs))


def _bucketed(df: pd.DataFrame, label: str, score: str, rel_level: float,
              bounds: np.ndarray) -> pd.DataFrame:
    grade = df[label].to_numpy(dtype=np.float64, na_value=np.nan)
    judged = grade >= 0
    s = df[score].to_numpy(dtype=np.float64, na_value=np.nan)[judged]
    return pd.DataFrame({"bucket": np.searchsorted(bounds, s, side="right").astype(np.int32),
                         "score": s, "positive": grade[judged] >= rel_level})


def _bucket_counts(df: pd.DataFrame) -> np.ndarray:
    """Mann–Whitney counts of the buckets in this partition (indexed by bucket).

    Rows: bucket, 2U, positives, negatives; a column per bucket present (one, after
    the shuffle by bucket). Within a bucket the kernel's sums are exact integers
    below 2**53, i.e. for buckets of fewer than about 10**8 rows.
    """
    b = df.index.to_numpy(dtype=np.int64)
    s = df["score"].to_numpy(dtype=np.float64)
    present, code = np.unique(b, return_inverse=True)
    order = np.lexsort((-s, code))
    twice_u, n_pos, n_neg = auc_counts(code[order], s[order],
                                       df["positive"].to_numpy(dtype=bool)[order],
                                       len(present))
    return np.stack([present, twice_u, n_pos, n_neg]).astype(np.int64)


def pooled_auc_dask(data: Sources | dd.DataFrame, *, label: str = "label", score: str = "score",
                    rel_level: float = 1.0, client: Client | None = None,
                    n_buckets: int | None = None,
                    storage_options: Mapping[str, Any] | None = None) -> PooledAUC:
    """AUC over all rows pooled (no grouping), exact, on data past one machine's memory.

    A row is relevant when its label >= ``rel_level``, judged non-relevant when
    0 <= label < ``rel_level``; other rows (missing or negative label) are left
    out, as the pooled ROC of :mod:`ireval_core.curves` does. Equal to
    ``sklearn.metrics.roc_auc_score`` on the same rows; NaN when a class is missing.

    How: the scores are cut into ``n_buckets`` ranges of about equal row counts
    (boundaries from an estimate of the pooled distribution made of per-partition
    quantile sketches, :func:`_bucket_bounds`), rows are shuffled so that range *i*
    is partition *i*, and each range gets its Mann–Whitney counts from the
    in-memory kernel (:func:`~ireval_core.measures.pairwise.auc_counts`, ties ½).
    Every pair across two ranges is won by the higher range, so one pass over the
    ranges in score order adds them up, in exact integer arithmetic. Memory: a
    worker holds one partition of input or one range of rows (about rows /
    ``n_buckets``, i.e. a partition's rows by default, whatever the total; more
    when one score value repeats very often: equal scores share a range;
    :attr:`PooledAUC.largest_partition` says how many); the client holds a sketch of
    each partition (at most :data:`SKETCH_POINTS` numbers in all) and 3 integers
    per range.

    Parameters
    ----------
    data:
        Parquet file or dataset folder (local or URL), CSV/TSV files with a header,
        or a Dask DataFrame.
    label, score:
        Column names.
    rel_level:
        Relevance threshold on the label.
    client:
        A ``distributed.Client``; ``None``: Dask's current scheduler.
    n_buckets:
        Score ranges (default: the number of input partitions).
    storage_options:
        Passed to fsspec for URL inputs.
    """
    if isinstance(rel_level, bool) or not isinstance(rel_level, int | float) or not np.isfinite(
            rel_level):
        raise invalid_parameter("rel_level", "pooled_auc_dask", "a finite number", rel_level)
    if n_buckets is not None and (isinstance(n_buckets, bool) or not isinstance(n_buckets, int)
                                  or n_buckets < 1):
        raise invalid_parameter("n_buckets", "pooled_auc_dask", "an int >= 1 or None",
                                n_buckets)
    if label == score:
        raise invalid_parameter("score", "pooled_auc_dask", "a column other than the label",
                                score)
    frame, name = labeled_frame(data, [label, score], storage_options)
    nb = n_buckets or frame.npartitions
    parts = frame.to_delayed()
    k = _sketch_size(len(parts), nb)
    try:
        sketches = compute(client, *[dask.delayed(_sketch)(p, label, score, k, name)
                                     for p in parts])
    except FormatError as exc:  # the first rows' error, whichever task failed first
        raise (labeled_error(frame, client, source=name, ids=(), label=label, scores=[score],
                             judged_scores_only=True) or exc.fresh()) from None
    judged = sum(n for _, n in sketches)
    bounds = _bucket_bounds(sketches, nb)
    nb = len(bounds) + 1
    rows = frame.map_partitions(_bucketed, label, score, float(rel_level), bounds,
                                meta=pd.DataFrame({"bucket": pd.Series([], dtype=np.int32),
                                                   "score": pd.Series([], dtype=np.float64),
                                                   "positive": pd.Series([], dtype=bool)}))
    # bucket i to partition i (a hash of the bucket would put several in one partition
    # and leave others empty: the largest grows with the number of buckets)
    shuffled = rows.set_index("bucket", divisions=tuple(range(nb + 1)))
    counts = compute(client, *[dask.delayed(_bucket_counts)(p)
                                for p in shuffled.to_delayed()])
    total = np.zeros((3, nb), dtype=np.int64)
    for c in counts:
        for row in range(3):
            np.add.at(total[row], c[0], c[row + 1])
    twice_u_b, pos_b, neg_b = ([int(x) for x in row] for row in total)
    n_pos, n_neg = sum(pos_b), sum(neg_b)
    if n_pos + n_neg != judged:
        raise DistributedError(f"incomplete result: {n_pos + n_neg} of {judged} judged rows "
                               "reached the count; no partial result is returned")
    twice_u, below = 0, 0
    for tu, p, n in zip(twice_u_b, pos_b, neg_b, strict=True):  # ranges, lowest scores first
        twice_u += tu + 2 * p * below
        below += n
    auc = twice_u / (2 * n_pos * n_neg) if n_pos and n_neg else float("nan")
    rel = f"{float(rel_level):g}"
    largest = max((int(c[2:].sum()) for c in counts), default=0)  # rows of a partition
    return PooledAUC(float(auc), n_pos, n_neg, twice_u,
                     POOLED_AUC_DEFINITION.format(rel=rel), nb, largest)
