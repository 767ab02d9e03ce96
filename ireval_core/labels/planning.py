"""The next round: how many queries to label, and the batch to send to the raters.

:func:`plan_next_round` answers "how many queries must next month's sample have to
detect a change of DCG@k of size ``delta``" at the chosen alpha and power, from
this round's per-query variance, for two designs:

* **new sample** (the usual monthly practice: new sessions are sampled, so two
  months are independent samples): a two-sample comparison of means. It is sized
  with :func:`ireval_core.stats.queries_needed` (the paired t-test's exact power)
  with the standard deviation of a difference of two independent queries,
  ``sd·√2``; the paired test has ``n − 1`` degrees of freedom instead of the
  two-sample ``2n − 2``, so the answer is at most a query or two above the exact
  two-sample size. Queries *per round*.
* **same queries** (the round's queries labeled again): a paired comparison,
  sized with the standard deviation of the per-query differences between this
  round and the previous one over the queries they share (when they share two or
  more).

:func:`next_batch` lists a round's shown results without labels, in the layout of a
labeling file (so the filled-in file reads back with
:func:`~ireval_core.labels.read_judgments`), and :func:`export_batch` writes it as
CSV or Excel with formula-like cells neutralised.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from ..errors import invalid_parameter
from ..escape import csv_frame_marked
from ..options import EvalOptions, options_or_default
from ..params import OPEN_UNIT, POSITIVE, POSITIVE_INT, InstanceOf, Options, check
from ..stats import queries_needed
from .judgments import Combine, Judgments, check_combine
from .trend import GAIN, Gain, per_query_dcg

__all__ = ["BATCH_COLUMNS", "PLAN_COLUMNS", "export_batch", "next_batch", "plan_next_round"]

PLAN_COLUMNS = ("round", "system", "queries", "mean", "sd", "design", "sd_used", "delta",
                "alpha", "power", "queries_needed", "note")
"""Columns of :func:`plan_next_round`."""

BATCH_COLUMNS = ("round", "system", "query", "doc", "position", "score", "segment", "weight",
                 "rater", "label")
"""Columns of :func:`next_batch` (``score``, ``segment``, ``weight`` only when the data
has them)."""


def plan_next_round(j: Judgments, round: str | None = None, *, delta: float, k: int = 10,
                    gain: Gain = "linear", combine: Combine = "mean", alpha: float = 0.05,
                    power: float = 0.8, options: EvalOptions | None = None) -> pd.DataFrame:
    """Queries needed next round to detect a change of mean DCG@k of ``delta``.

    Parameters
    ----------
    j:
        The labeled result lists.
    round:
        The round whose variance is used (default: the latest).
    delta:
        The change of mean DCG@k to detect (absolute, > 0), two-sided.
    k, gain, combine:
        As in :func:`~ireval_core.labels.trend.trend`.
    alpha, power:
        Test level and power (defaults 0.05 and 0.8).

    Returns
    -------
    pandas.DataFrame
        :data:`PLAN_COLUMNS`, one row per system and design (``"new sample"`` always,
        ``"same queries"`` when the previous round shares at least two queries).

    Examples
    --------
    >>> import pandas as pd
    >>> from ireval_core.labels import judgments_from_frame
    >>> df = pd.DataFrame({"round": "m1", "query": ["q1", "q2", "q3", "q4"], "doc": "d",
    ...                    "position": 1, "label": [0, 1, 2, 3]})
    >>> plan = plan_next_round(judgments_from_frame(df), delta=0.5)
    >>> plan[["design", "sd", "queries_needed"]].round(4).values.tolist()
    [['new sample', 1.291, 107]]
    """
    fn = "plan_next_round"
    k = check(k, "k", fn, POSITIVE_INT)
    check(gain, "gain", fn, GAIN)
    check_combine(combine, fn)
    delta = check(delta, "delta", fn, POSITIVE)
    alpha = check(alpha, "alpha", fn, OPEN_UNIT)
    power = check(power, "power", fn, OPEN_UNIT)
    if power <= alpha:
        raise invalid_parameter("power", fn, f"greater than alpha={alpha}", power)
    opts = options_or_default(options, fn)
    rounds = j.rounds
    if round is None:
        round = rounds[-1]
    j.round_code(round, fn)
    prev = rounds[rounds.index(round) - 1] if rounds.index(round) > 0 else None
    # per-query DCG of every list, kept with the judgments (the trend's own): a round's
    # lists are its rows, in the order of a view on the round
    pq = per_query_dcg(j, k=k, gain=gain, combine=combine, idcg_zero=opts.idcg_zero)
    in_round = j.group_round == j.round_code(round, fn)
    in_prev = j.group_round == j.round_code(prev, fn) if prev is not None else None
    rows = []
    for code in np.flatnonzero(np.bincount(j.group_system[in_round],
                                           minlength=len(j.system_names))):
        system = str(j.system_names[code])
        sel = in_round & (j.group_system == code)
        x = pq.dcg[sel]
        sd = float(np.std(x, ddof=1)) if len(x) >= 2 else math.nan
        base = {"round": round, "system": system, "queries": int(sel.sum()),
                "mean": float(np.mean(x)), "sd": sd, "delta": float(delta), "alpha": alpha,
                "power": power}
        rows.append(base | _needed("new sample", sd * math.sqrt(2.0), delta, alpha, power,
                                   "independent samples: sd of a difference = sd·√2; queries "
                                   "per round"))
        if in_prev is not None:
            selp = in_prev & (j.group_system == code)
            shared, ia, ib = np.intersect1d(j.group_query[selp], j.group_query[sel],
                                            return_indices=True)
            if len(shared) >= 2:
                d = x[ib] - pq.dcg[selp][ia]
                rows.append(base | _needed(
                    "same queries", float(np.std(d, ddof=1)), delta, alpha, power,
                    f"paired over the {len(shared)} queries {prev} and {round} share: sd of "
                    "their per-query differences"))
    return pd.DataFrame(rows, columns=list(PLAN_COLUMNS))


def _needed(design: str, sd_used: float, delta: float, alpha: float, power: float,
            note: str) -> dict[str, object]:
    if not (math.isfinite(sd_used) and sd_used > 0):
        return {"design": design, "sd_used": sd_used, "queries_needed": pd.NA,
                "note": "no spread between queries (or fewer than two): cannot size a test"}
    try:
        n: object = queries_needed(sd_used, delta, alpha=alpha, power=power)
    except ValueError:
        n, note = pd.NA, "the change is too small to detect with any realistic sample"
    return {"design": design, "sd_used": sd_used, "queries_needed": n, "note": note}


def next_batch(j: Judgments, round: str, *, k: int | None = None,
               systems: Sequence[str] | None = None, unlabeled_only: bool = False
               ) -> pd.DataFrame:
    """The shown results of a round, without labels, ready to send to raters.

    One row per shown result (position <= ``k`` when given), in the layout of a
    labeling file (:data:`BATCH_COLUMNS`) with empty ``rater`` and ``label``.
    ``unlabeled_only``: only the results nobody has labeled yet.

    >>> import pandas as pd
    >>> from ireval_core.labels import judgments_from_frame
    >>> df = pd.DataFrame({"round": "m1", "query": "q", "doc": ["a", "b"],
    ...                    "position": [1, 2], "label": [2, None]})
    >>> next_batch(judgments_from_frame(df), "m1", unlabeled_only=True).values.tolist()
    [['m1', 'default', 'q', 'b', 2, '', '']]
    """
    fn = "next_batch"
    j.round_code(round, fn)
    if k is not None:
        k = check(k, "k", fn, POSITIVE_INT)
    jr = j.round(round) if systems is None else j.select(rounds=[round], systems=systems)
    frame = jr.shown_table(combine="mean")
    keep = np.ones(len(frame), dtype=bool)
    if k is not None:
        keep &= frame["position"].to_numpy() <= k
    if unlabeled_only:
        keep &= frame["n_labels"].to_numpy() == 0
    frame = frame[keep].reset_index(drop=True)
    cols = ["round", "system", "query", "doc", "position"]
    cols += ["score"] if j.has_scores else []
    cols += ["segment"] if j.has_segment else []
    cols += ["weight"] if j.has_weight else []
    return frame[cols].assign(rater="", label="")


def export_batch(frame: pd.DataFrame, format: Literal["csv", "xlsx"] = "csv") -> bytes:
    """Bytes of a batch (or any table) as CSV (UTF-8) or an Excel workbook.

    Text cells a spreadsheet would read as a formula (``=``, ``+``, ``-``, ``@``, ...)
    are neutralised in both formats (Excel cells are also written as text, never as
    formulas), and a last column ``ireval_escaped`` names the escaped cells of each row
    (:func:`ireval_core.escape.csv_frame_marked`): the labeling reader
    (:func:`~ireval_core.labels.read_judgments`) takes exactly those quotes off again,
    so that an id ``=x`` comes back as ``=x`` and an id ``'x`` as ``'x``.
    """
    check(frame, "frame", "export_batch", InstanceOf(pd.DataFrame, "a pandas DataFrame"))
    check(format, "format", "export_batch", Options(("csv", "xlsx")))
    safe = csv_frame_marked(frame)
    if format == "csv":
        return safe.to_csv(index=False, lineterminator="\n").encode("utf-8")
    import openpyxl

    book = openpyxl.Workbook(write_only=False)
    sheet = book.create_sheet("batch", 0)
    book.remove(book.worksheets[1])  # the default empty sheet
    sheet.append([str(c) for c in safe.columns])
    for values in safe.itertuples(index=False, name=None):
        sheet.append([None if (isinstance(v, float) and math.isnan(v)) or v is pd.NA
                      else (v.item() if isinstance(v, np.generic) else v) for v in values])
    for row in sheet.iter_rows(min_row=2):
        for cell in row:
            if cell.data_type == "f":  # openpyxl took a leading '=' for a formula
                cell.data_type = "s"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()
