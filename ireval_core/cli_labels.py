"""Command line for monthly labeling: ``python -m ireval_core labels|gsb FILE...``.

``labels`` prints one row per (round, system): ``round, system, queries, dcg,
dcg_ci_low, dcg_ci_high, ndcg, coverage, auc, gauc, pnr, alpha`` (the score-based
columns are empty without model scores, ``alpha`` -- Krippendorff's ordinal alpha of
the round's raters -- is empty with fewer than two raters). ``gsb`` prints one row per
round: ``round, good, same, bad, gsb, ci_low, ci_high, p``. ``--format table`` (the
default) is an aligned table followed by the definitions, ``csv`` is for spreadsheets
(text cells neutralised against formulas), ``json`` for programs.

This module only builds the parsers at import time: the computing modules (pandas,
scipy) are imported when a command runs, so ``eval`` stays fast to start.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, TextIO

__all__ = ["LABELS_COLUMNS", "GSB_COLUMNS", "add_parsers", "run"]

LABELS_COLUMNS = ("round", "system", "queries", "dcg", "dcg_ci_low", "dcg_ci_high", "ndcg",
                  "coverage", "auc", "gauc", "pnr", "alpha")
GSB_COLUMNS = ("round", "good", "same", "bad", "gsb", "ci_low", "ci_high", "p")
_INTEGERS = {"queries", "good", "same", "bad"}


def add_parsers(sub: Any) -> None:
    """Add the ``labels`` and ``gsb`` sub-commands to ``sub`` (``add_subparsers()``)."""
    from .options import OPTION_HELP  # light: no pandas, no scipy

    lab = sub.add_parser(
        "labels", help="month-by-month DCG@k, coverage, AUC/GAUC/PNR and rater agreement "
                       "of labeled result lists",
        description="One row per (round, system) of labeling files (CSV, TSV, Excel "
                    ".xlsx, Parquet; columns round, query, doc, position, label, and "
                    "optionally rater, system, score, segment, weight; text in UTF-8, "
                    "GB18030 or UTF-16), or of Label Studio's JSON export and Quepid's "
                    "ratings CSV.")
    lab.add_argument("files", nargs="+", metavar="FILE", help="labeling file(s); rounds "
                     "accumulate")
    lab.add_argument("--k", type=int, default=10, help="cutoff: shown positions 1..k "
                     "(default 10)")
    lab.add_argument("--gain", choices=("linear", "exp"), default="linear",
                     help="gain of a label: linear = the label (default), exp = 2^label - 1")
    lab.add_argument("--label-map", default=None, metavar="MAP",
                     help="how label text becomes a grade, e.g. 'none=0,low=1,mid=2,high=3', "
                          "or a built-in map (0-3, none/low/mid/high, 无/低/中/高, "
                          "bad/fair/good/excellent/perfect); default: detected")
    lab.add_argument("--combine", choices=("mean", "median", "majority"), default="mean",
                     help="how several raters' labels become one (default mean)")
    lab.add_argument("--round", default=None, metavar="ROUND",
                     help="the round of a labeling tool's export that names none (Quepid's "
                          "ratings CSV, Label Studio tasks without a round), e.g. 2026-05")
    lab.add_argument("--conflicts", choices=("refuse", "mean", "latest", "separate"),
                     default="refuse",
                     help="one rater's different labels of a document shown in several "
                          "systems' lists: refuse the files (default; the error counts and "
                          "lists them), one label by their mean or the latest row's label, "
                          "or count each system's list as a separate rater")
    lab.add_argument("-l", "--rel-level", type=float, default=1.0, metavar="LEVEL",
                     help="AUC and GAUC: a result is relevant when its combined label "
                          ">= LEVEL (default 1; the relevance level of the other commands)")
    lab.add_argument("--idcg-zero", choices=("zero", "drop"), default="zero",
                     help=OPTION_HELP["idcg_zero"] + " Default: zero.")
    lab.add_argument("--resamples", type=int, default=2000,
                     help="bootstrap resamples of the DCG interval (default 2000)")
    lab.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    lab.add_argument("--format", choices=("table", "csv", "json"), default="table")

    gsb = sub.add_parser(
        "gsb", help="side-by-side preference judgments (good/same/bad) per round",
        description="One row per round of GSB files (columns round, query, judgment in "
                    "G/S/B or good/same/bad, optionally rater): GSB = (G - B) / (G + S + B) "
                    "with a confidence interval and a two-sided sign test of G against B.")
    gsb.add_argument("files", nargs="+", metavar="FILE", help="GSB file(s)")
    gsb.add_argument("--confidence-level", type=float, default=0.95)
    gsb.add_argument("--format", choices=("table", "csv", "json"), default="table")


def run(args: argparse.Namespace, out: TextIO) -> int:
    """Run ``labels`` or ``gsb``; errors propagate (the CLI turns them into exit 2)."""
    if args.command == "labels":
        rows, notes = labels_rows(args.files, k=args.k, gain=args.gain,
                                  label_map=args.label_map, combine=args.combine,
                                  conflicts=args.conflicts, round=args.round,
                                  rel_level=args.rel_level, idcg_zero=args.idcg_zero,
                                  n_resamples=args.resamples, seed=args.seed)
        write_rows(rows, LABELS_COLUMNS, args.format, out, notes)
        return 0
    if args.command == "gsb":
        rows, notes = gsb_rows(args.files, confidence_level=args.confidence_level)
        write_rows(rows, GSB_COLUMNS, args.format, out, notes)
        return 0
    raise ValueError(f"unknown command {args.command!r}")  # pragma: no cover


def labels_rows(files: Sequence[str], *, k: int = 10, gain: str = "linear",
                label_map: str | None = None, combine: str = "mean", rel_level: float = 1.0,
                idcg_zero: str = "zero", n_resamples: int = 2000, seed: int = 0,
                conflicts: str = "refuse", round: str | None = None
                ) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``labels`` (NaN = empty cell) and the definition lines."""
    alpha_of: Callable[..., float] | None
    try:
        from .labels.agreement import krippendorff_alpha as alpha_of
    except ImportError:  # pragma: no cover - the agreement module ships with the package
        alpha_of = None
    from .labels import offline_online, read_judgments, trend
    from .labels.judgments import COMBINE_RULES
    from .options import EvalOptions

    options = EvalOptions(rel_level=rel_level, idcg_zero=idcg_zero)  # type: ignore[arg-type]
    j = read_judgments(list(files), label_map=label_map,
                       conflicts=conflicts, round=round)  # type: ignore[arg-type]
    tr = trend(j, k=k, gain=gain, combine=combine, options=options,  # type: ignore[arg-type]
               n_resamples=n_resamples, seed=seed)
    both = offline_online(j, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                          options=options, trend_result=tr)
    alpha: dict[str, float] = {}
    for r in j.rounds:
        table = j.label_table(r)
        alpha[r] = (alpha_of(table, level="ordinal")
                    if alpha_of is not None and table["rater"].nunique() >= 2 else math.nan)
    scores = j.has_scores
    coverage = tr.table.set_index(["round", "system"])["coverage"]
    rows = []
    for rec in both.table.to_dict("records"):
        row = {c: rec.get(c, math.nan) for c in LABELS_COLUMNS}
        row["coverage"] = float(coverage.loc[(rec["round"], rec["system"])])
        if not scores:
            row.update(auc=math.nan, gauc=math.nan, pnr=math.nan)
        row["alpha"] = alpha[rec["round"]]
        rows.append(row)
    notes = [
        f"dcg: {tr.definition.split('. nDCG')[0]}; {tr.table['averaging'].iloc[0]}"
        if len(tr.table) else "dcg: no rows",
        f"labels: {j.label_map.name} ({j.label_map.describe()}); combine: "
        f"{COMBINE_RULES[combine]}" + (f"; {j.conflict_note}" if j.conflict_note else ""),
        f"dcg_ci_low/high: {tr.definition.split('the band is a ')[1].split('. ')[0]}",
        f"ndcg: DCG@{k} / DCG@{k} of the round's labeled documents of the query sorted by "
        "label; coverage: labeled / shown positions <= k",
        ("auc, gauc, pnr: from the model scores of the labeled shown results; relevant: "
         f"label >= {rel_level:g}; auc pooled, gauc per query weighted by scored results, "
         "pnr = concordant / discordant pairs" if scores else
         "auc, gauc, pnr: empty (no score column)"),
        "alpha: Krippendorff's alpha (ordinal) of the round's raters; empty with one rater",
        *both.notes, *tr.notes()]
    return rows, notes


def gsb_rows(files: Sequence[str], *, confidence_level: float = 0.95
             ) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``gsb`` and its definition line."""
    from .labels.gsb import gsb_by_round, read_gsb

    table = gsb_by_round(read_gsb(list(files)), confidence_level=confidence_level)
    notes = [str(table.attrs.get("definition", ""))] if table.attrs.get("definition") else []
    return [{c: rec[c] for c in GSB_COLUMNS} for rec in table.to_dict("records")], notes


def _cell(column: str, value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    number = float(value)
    if math.isnan(number):
        return ""
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    if column in _INTEGERS:
        return str(int(number))
    return f"{number:.4f}"


def _csv_number(column: str, value: Any) -> str:
    if value is None:
        return ""
    number = float(value)
    if math.isnan(number):
        return ""
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    return str(int(number)) if column in _INTEGERS else repr(number)


def _json_value(value: Any) -> Any:
    if isinstance(value, str) or value is None:
        return value
    number = float(value)
    if math.isnan(number):
        return None
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    if float(number).is_integer() and abs(number) < 2**53 and isinstance(value, int | bool):
        return int(number)
    return number


def write_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str, out: TextIO,
               notes: Sequence[str] = ()) -> None:
    """Write rows as an aligned table (with the notes below), CSV or JSON."""
    if fmt == "json":
        doc = {"columns": list(columns),
               "rows": [{c: _json_value(r[c]) for c in columns} for r in rows],
               "notes": list(notes)}
        json.dump(doc, out, indent=2, ensure_ascii=False)
        out.write("\n")
        return
    if fmt == "csv":
        import csv

        from .escape import csv_row

        w = csv.writer(out, lineterminator="\n")
        w.writerow(columns)
        for r in rows:  # text from the files is neutralised; numbers stay numbers
            w.writerow([csv_row([r[c]])[0] if isinstance(r[c], str) else _csv_number(c, r[c])
                        for c in columns])
        return
    cells = [[_cell(c, r[c]) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    text_cols = {i for i, c in enumerate(columns) if c in ("round", "system")}

    def line(values: Sequence[str]) -> str:
        return "  ".join(v.ljust(widths[i]) if i in text_cols else v.rjust(widths[i])
                         for i, v in enumerate(values)).rstrip()

    out.write(line(list(columns)) + "\n")
    for row in cells:
        out.write(line(row) + "\n")
    if notes:
        out.write("\n")
        for n in notes:
            out.write(f"# {n}\n")
