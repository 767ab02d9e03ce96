"""Data page: evaluate files on a Dask cluster (the expander "Evaluate on a Dask cluster").

The user gives the address of a running Dask scheduler (``tcp://HOST:PORT``), a qrels
path and run paths that the cluster's workers can read (Parquet, TREC or CSV/TSV; a
shared file system or URLs such as ``s3://``), and measures. The job is
:func:`ireval_core.distributed.evaluate_dask` on that cluster; its per-query
:class:`~ireval_core.evaluate.Evaluation` is shown as the Metrics page shows the
in-memory one: the mean of each run with its 95% interval, each measure's definition,
and the per-query values (also as CSV). Progress is shown while the job runs; an error
is a message, never a traceback.

This server reads the paths too (to list the files of a folder and tell their format),
so a user of the page can make this server and the cluster read any file they can
read, and a reading error quotes the offending line. The expander therefore only
submits jobs when the server is started with ``IREVAL_DASK_JOBS=1``; otherwise it says
how to turn them on. The Dask packages (``requirements-scale.txt``) are optional: they
are imported only when a job is submitted.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import streamlit as st

from ireval_core.errors import FormatError, IrevalError
from ireval_core.escape import csv_frame
from ireval_core.evaluate import Evaluation
from ireval_core.options import EvalOptions
from ireval_core.tables import metrics_table

from . import evaluation, state, widgets
from .keys import data as keys

__all__ = ["DEFAULT_MEASURES", "ENABLE_ENV", "DaskJob", "DaskResult", "dask_job_block",
           "jobs_enabled", "make_job", "run_job"]

ENABLE_ENV = "IREVAL_DASK_JOBS"
"""Environment variable that turns job submission on (``1``, ``true`` or ``yes``)."""
DEFAULT_MEASURES = ("nDCG@10", "AP", "P@10", "RR")
CHOICES = (*DEFAULT_MEASURES, "nDCG@20", "R@100", "bpref", "ERR@10", "AUC", "GAUC", "PNR")
_ADDRESS = re.compile(r"^(tcp|tls)://[^\s/:]+(:\d{1,5})?$")
_TIMEOUT = 10.0  # seconds to reach the scheduler

Progress = Callable[[float, str], None]
"""Called with the fraction done (0 to 1) and what is being done."""


@dataclass(frozen=True)
class DaskJob:
    """What to evaluate, where: checked by :func:`make_job`."""

    scheduler: str
    qrels: str
    runs: tuple[str, ...]
    measures: tuple[str, ...]
    options: EvalOptions


@dataclass(frozen=True)
class DaskResult:
    """A finished job: its evaluation, or the message of its error; and its wall time (s)."""

    job: DaskJob
    evaluation: Evaluation | None
    error: str | None
    seconds: float


def jobs_enabled(environ: dict[str, str] | None = None) -> bool:
    """True when the server allows jobs (``IREVAL_DASK_JOBS=1``)."""
    env = os.environ if environ is None else environ
    return env.get(ENABLE_ENV, "").strip().lower() in ("1", "true", "yes")


def _paths(text: str) -> tuple[str, ...]:
    """Paths or URLs, one per line (blank lines ignored)."""
    return tuple(line.strip() for line in text.splitlines() if line.strip())


def make_job(scheduler: str, qrels: str, runs: str, measures: Sequence[str],
             options: EvalOptions) -> tuple[DaskJob | None, list[str]]:
    """The job the form describes, or ``None`` and what is wrong (one message each).

    ``runs`` holds one path or URL per line; ``measures`` are spec texts.
    """
    problems: list[str] = []
    address = scheduler.strip()
    if not _ADDRESS.match(address):
        problems.append("The scheduler address must look like tcp://HOST:PORT (or "
                        f"tls://HOST:PORT); got {address!r}.")
    qrels_path = qrels.strip()
    if not qrels_path or "\n" in qrels_path:
        problems.append("Give one qrels path or URL.")
    run_paths = _paths(runs)
    if not run_paths:
        problems.append("Give at least one run path or URL (one per line).")
    specs, errors = evaluation.parse_specs(measures)
    problems.extend(errors)
    if not specs and not errors:
        problems.append("Choose at least one measure.")
    if problems:
        return None, problems
    return DaskJob(address, qrels_path, run_paths, specs, options), []


def run_job(job: DaskJob, progress: Progress | None = None) -> DaskResult:
    """Run ``job`` on its scheduler; never raises for a failed job (the error is returned).

    ``progress`` hears of the connection, then of every partition evaluated.
    """
    say: Progress = progress or (lambda fraction, text: None)
    start = time.perf_counter()

    def failed(message: str) -> DaskResult:
        return DaskResult(job, None, message, time.perf_counter() - start)

    try:
        from ireval_core.distributed import dask_client, evaluate_dask
    except ImportError as exc:
        return failed(f"Dask is not installed on this server ({exc.name or exc}): install "
                      "requirements-scale.txt to submit jobs.")
    say(0.0, f"Connecting to {job.scheduler}…")
    try:
        with dask_client(job.scheduler, timeout=_TIMEOUT) as client:
            say(0.05, "Reading the files and moving each query to one partition…")
            res = evaluate_dask(
                job.qrels, list(job.runs), list(job.measures), options=job.options,
                client=client, progress=lambda done, total: say(
                    0.1 + 0.9 * done / max(total, 1),
                    f"Evaluated {done:,} of {total:,} partitions"))
    except FormatError as exc:
        return failed(str(exc))
    except IrevalError as exc:  # DistributedError included: unreachable, lost workers, ...
        return failed(str(exc))
    except Exception as exc:  # noqa: BLE001 - anything else from the cluster: a message
        lines = str(exc).strip().splitlines()
        return failed(f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__)
    say(1.0, "Done")
    return DaskResult(job, res, None, time.perf_counter() - start)


def _show_result(result: DaskResult) -> None:
    job = result.job
    st.caption(widgets.md_escape(
        f"Job on {job.scheduler}: qrels {job.qrels}; runs {', '.join(job.runs)}; "
        f"{result.seconds:.1f} s."))
    if result.error is not None or result.evaluation is None:
        st.error(widgets.md_escape(result.error or "The job gave no result."),
                 icon=":material/error:")
        return
    res = result.evaluation
    table = metrics_table(res)
    st.markdown("**Mean per run** (evaluated on the cluster)")
    st.table(widgets.md_frame(table.cells))
    st.caption("Each cell: the mean over queries to 4 decimals, then its 95% confidence "
               "interval [low, high] (Student t over the per-query values). "
               + widgets.md_escape(table.queries_caption()))
    for note in (table.small_note, table.query_note):
        if note:
            st.warning(widgets.md_escape(note), icon=":material/rule:")
    st.markdown("\n".join(f"- **{widgets.md_escape(m)}**: {widgets.md_escape(res.definition(m))}"
                          for m in table.mean.columns))
    st.caption(f"Options: {widgets.md_escape(res.options.describe())}.")
    tidy = res.tidy()
    st.markdown("**Per-query values**")
    st.dataframe(tidy, hide_index=True)
    st.download_button("Per-query values of the cluster job (CSV)",
                       csv_frame(tidy).to_csv(index=False), file_name="ireval_dask_per_query.csv",
                       mime="text/csv", icon=":material/download:", key=keys.DASK_DOWNLOAD)


def dask_job_block() -> None:
    """The expander of the Data page: the form, the progress of a job, its last result."""
    with st.expander("Evaluate on a Dask cluster", icon=":material/hub:"):
        st.caption("For data too large for this server: the cluster's workers read the "
                   "files themselves, so give paths on a file system they share (or URLs "
                   "such as s3://) and the address of their scheduler. Parquet, TREC or "
                   "CSV/TSV; a folder is read as one input.")
        if not jobs_enabled():
            st.info(f"Dask jobs are off on this server. The paths given here are read by "
                    f"this server and by the cluster's workers, with their permissions: "
                    f"whoever runs the server turns jobs on with `{ENABLE_ENV}=1`.",
                    icon=":material/lock:")
            return
        with st.form("ireval.dask.form", border=False):
            scheduler = st.text_input("Scheduler address", key=keys.DASK_SCHEDULER,
                                      placeholder="tcp://scheduler.internal:8786")
            qrels = st.text_input("Qrels path or URL", key=keys.DASK_QRELS,
                                  placeholder="s3://bucket/qrels/ or /shared/qrels.parquet")
            runs = st.text_area("Run paths or URLs, one per line", key=keys.DASK_RUNS,
                                placeholder="/shared/runs/bm25.parquet\n/shared/runs/neural/")
            measures = st.multiselect("Measures", CHOICES, default=list(DEFAULT_MEASURES),
                                      key=keys.DASK_MEASURES, accept_new_options=True,
                                      help="Any measure spec can be typed, e.g. P(rel=2)@5.")
            submitted = st.form_submit_button("Evaluate on the cluster", icon=":material/hub:",
                                              type="primary")
        if submitted:
            job, problems = make_job(scheduler, qrels, runs, measures, state.get_options())
            for message in problems:
                st.error(widgets.md_escape(message), icon=":material/error:")
            if job is not None:
                bar = st.progress(0.0, text="Starting…")
                result = run_job(job, lambda f, text: bar.progress(min(max(f, 0.0), 1.0),
                                                                   text=text))
                bar.empty()
                st.session_state[keys.DASK_RESULT] = result
        last = st.session_state.get(keys.DASK_RESULT)
        if isinstance(last, DaskResult):
            _show_result(last)
