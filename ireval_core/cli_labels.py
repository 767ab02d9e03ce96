"""Command line for monthly labeling: ``python -m ireval_core labels|gsb FILE...``.

``labels`` prints one row per (round, system): ``round, system, queries, dcg,
dcg_ci_low, dcg_ci_high, dcg_ci_raters_low, dcg_ci_raters_high, mdc, ndcg, coverage,
auc, gauc, pnr, alpha`` (the score-based columns are empty without model scores,
``alpha`` -- Krippendorff's ordinal alpha of the round's raters -- is empty with fewer
than two raters; ``dcg_ci_raters_*`` is the interval over queries and raters and ``mdc``
the minimum detectable change, :func:`~ireval_core.labels.noise.noise_trend`).
``--judge RATER`` leaves that rater out of every number above and adds the model-judge
report (:func:`~ireval_core.labels.judge.judge_report`: key ``judge`` of the JSON, a
section below the table otherwise); ``--anchors FILE`` adds the anchor check (key
``anchors``), read before the month-over-month notes. ``gsb`` prints one row per
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
from numbers import Integral
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from .errors import DataWarning
    from .labels import Judgments, NoiseTrend, OfflineOnline, Trend

__all__ = ["LABELS_COLUMNS", "GSB_COLUMNS", "add_parsers", "run"]

LABELS_COLUMNS = ("round", "system", "queries", "dcg", "dcg_ci_low", "dcg_ci_high",
                  "dcg_ci_raters_low", "dcg_ci_raters_high", "mdc", "ndcg", "coverage", "auc",
                  "gauc", "pnr", "alpha")
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
    lab.add_argument("--alpha", type=float, default=0.05,
                     help="test level of the month-over-month drop flag and of the minimum "
                          "detectable change (default 0.05)")
    lab.add_argument("--power", type=float, default=0.8,
                     help="power of the minimum detectable change (default 0.8)")
    lab.add_argument("--judge", default=None, metavar="RATER",
                     help="a rater who is a model judge: left out of the people's numbers, "
                          "and checked against them (agreement, decisions, bias, "
                          "disagreements)")
    lab.add_argument("--judge-limit", type=int, default=None, metavar="N",
                     help="with --judge: the largest (round, system) points x resamples the "
                          "judge report takes, checked before computing (default 10,000,000, "
                          "about 0.5 GB; 0: no limit)")
    lab.add_argument("--ppi", action="store_true",
                     help="with --judge: model + people estimates (prediction-powered "
                          "inference, PPI++): mean DCG@k per round and system and the "
                          "difference of each pair from the judge's labels corrected by the "
                          "people's, with intervals, verdicts, the judge's ranking against "
                          "the people's, and how many people's labels a target width needs")
    lab.add_argument("--ppi-width", type=float, default=None, metavar="W",
                     help="with --ppi: the planner's target width of a difference's "
                          "interval (default: the PPI interval's width now)")
    lab.add_argument("--ppi-design", choices=("random", "nonrandom"), default="random",
                     help="with --ppi: how the people's results were chosen: a simple "
                          "random subset (default) or not at random (then stated with every "
                          "number: the interval covers only what it can)")
    lab.add_argument("--ppi-inclusion", default=None, metavar="FILE",
                     help="with --ppi: the stated design of the people's labels, a CSV/TSV/"
                          "Excel/Parquet file with columns round, query, doc and inclusion "
                          "(the probability that people label that shown result; the "
                          "people_sample table as saved); rounds it does not name use the "
                          "default (the share labeled)")
    lab.add_argument("--anchors", action="append", default=None, metavar="FILE",
                     help="anchor items (round, query, doc, label[, rater][, anchor flag]) "
                          "labeled every month: their drift between months is checked first "
                          "(repeatable)")
    lab.add_argument("--gsb", action="append", default=None, metavar="FILE",
                     help="with --judge: side-by-side judgments, to compare the judge's GSB "
                          "verdict with the people's (repeatable)")
    lab.add_argument("--gsb-systems", default=None, metavar="OLD,NEW",
                     help="with --gsb: the two systems the side-by-side judgments compare")
    lab.add_argument("--format", choices=("table", "csv", "json"), default="table",
                     help="table (default; with the judge and anchor sections below), csv "
                          "(the rows only) or json (rows, notes, and the keys judge and "
                          "anchors)")

    gsb = sub.add_parser(
        "gsb", help="side-by-side preference judgments (good/same/bad) per round",
        description="One row per round of GSB files (columns round, query, judgment in "
                    "G/S/B or good/same/bad, optionally rater): GSB = (G - B) / (G + S + B) "
                    "with a confidence interval and a two-sided sign test of G against B.")
    gsb.add_argument("files", nargs="+", metavar="FILE", help="GSB file(s)")
    gsb.add_argument("--confidence-level", type=float, default=0.95)
    gsb.add_argument("--format", choices=("table", "csv", "json"), default="table")


def run(args: argparse.Namespace, out: TextIO,
        warnings: list[DataWarning] | None = None) -> int:
    """Run ``labels`` or ``gsb``; errors propagate (the CLI turns them into exit 2).
    What reading the files noticed (the encoding read, hidden sheets, resolved conflicts,
    ...) is added to ``warnings``, which the CLI prints on stderr as for ``eval``."""
    if args.command == "labels":
        extra: dict[str, Any] = {}
        rows, notes = labels_rows(args.files, k=args.k, gain=args.gain,
                                  label_map=args.label_map, combine=args.combine,
                                  conflicts=args.conflicts, round=args.round,
                                  rel_level=args.rel_level, idcg_zero=args.idcg_zero,
                                  n_resamples=args.resamples, seed=args.seed,
                                  alpha=args.alpha, power=args.power, judge=args.judge,
                                  judge_limit=args.judge_limit, anchors=args.anchors, gsb=args.gsb,
                                  gsb_systems=args.gsb_systems, extra=extra,
                                  warnings=warnings, ppi=args.ppi, ppi_width=args.ppi_width,
                                  ppi_design=args.ppi_design,
                                  ppi_inclusion=args.ppi_inclusion)
        write_rows(rows, LABELS_COLUMNS, args.format, out, notes, extra=extra)
        return 0
    if args.command == "gsb":
        rows, notes = gsb_rows(args.files, confidence_level=args.confidence_level,
                               warnings=warnings)
        write_rows(rows, GSB_COLUMNS, args.format, out, notes)
        return 0
    raise ValueError(f"unknown command {args.command!r}")  # pragma: no cover


def labels_rows(files: Sequence[str], *, k: int = 10, gain: str = "linear",
                label_map: str | None = None, combine: str = "mean", rel_level: float = 1.0,
                idcg_zero: str = "zero", n_resamples: int = 2000, seed: int = 0,
                alpha: float = 0.05, power: float = 0.8, judge: str | None = None,
                judge_limit: int | None = None, anchors: Sequence[str] | None = None,
                gsb: Sequence[str] | None = None,
                gsb_systems: str | None = None, extra: dict[str, Any] | None = None,
                conflicts: str = "refuse", round: str | None = None,
                warnings: list[DataWarning] | None = None, ppi: bool = False,
                ppi_width: float | None = None, ppi_design: str = "random",
                ppi_inclusion: str | None = None
                ) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``labels`` (NaN = empty cell) and the definition lines.

    ``extra`` (when given) receives the JSON-ready ``judge`` report and ``anchors``
    check, and their text sections under ``"sections"``. ``judge_limit``: the judge
    report's largest points x resamples (None: ``JUDGE_MAX_WORK``, 0: no limit), checked
    right after reading, before any bootstrap. ``ppi_inclusion``: a design file
    (:func:`~ireval_core.labels.ppi.read_inclusion`), read and matched to the files'
    results before any bootstrap too.
    """
    alpha_of: Callable[..., float] | None
    try:
        from .labels.agreement import krippendorff_alpha as alpha_of
    except ImportError:  # pragma: no cover - the agreement module ships with the package
        alpha_of = None
    from .labels import offline_online, read_judgments, trend
    from .labels.anchors import anchor_drift, read_anchors
    from .labels.noise import noise_trend
    from .options import EvalOptions

    options = EvalOptions(rel_level=rel_level, idcg_zero=idcg_zero)  # type: ignore[arg-type]
    j_all = read_judgments(list(files), label_map=label_map,
                           conflicts=conflicts, round=round)  # type: ignore[arg-type]
    if warnings is not None:
        warnings.extend(j_all.warnings)
    if ppi and judge is None:
        raise ValueError("--ppi needs --judge RATER: the model judge whose labels the "
                         "people's labels correct")
    max_work = _judge_work(j_all, judge, judge_limit, n_resamples)
    pi = _stated_design(j_all, ppi_inclusion, ppi, ppi_design)
    j = j_all if judge is None else j_all.select(
        raters=[r for r in j_all.raters if r != judge])
    drift = None
    if anchors:
        drift = anchor_drift(read_anchors(list(anchors), label_map=label_map),
                             combine=combine,  # type: ignore[arg-type]
                             n_resamples=n_resamples, seed=seed)
    tr = trend(j, k=k, gain=gain, combine=combine, options=options,  # type: ignore[arg-type]
               n_resamples=n_resamples, seed=seed, alpha=alpha)
    nt = noise_trend(j, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                     n_resamples=n_resamples, seed=seed, alpha=alpha, power=power,
                     anchors=drift, options=options)
    both = offline_online(j, k=k, gain=gain, combine=combine,  # type: ignore[arg-type]
                          options=options, trend_result=tr)
    rows = _rows(j, tr, nt, both, alpha_of)
    notes = _notes(j, tr, nt, both, k=k, combine=combine, rel_level=rel_level, judge=judge)
    if extra is not None:
        sections: list[str] = []
        if drift is not None:
            extra["anchors"] = drift.to_dict()
            sections += _anchor_section(drift)
        if judge is not None:
            from .labels.judge import judge_report

            gsb_data, pair = None, None
            if gsb:
                from .labels.gsb import read_gsb

                gsb_data = read_gsb(list(gsb))
                if not gsb_systems or gsb_systems.count(",") != 1:
                    raise ValueError("--gsb needs --gsb-systems OLD,NEW: the two systems the "
                                     "side-by-side judgments compare")
                pair = tuple(x.strip() for x in gsb_systems.split(","))
            report = judge_report(j_all, judge, k=k, gain=gain,  # type: ignore[arg-type]
                                  combine=combine,  # type: ignore[arg-type]
                                  gsb=gsb_data, gsb_systems=pair,  # type: ignore[arg-type]
                                  n_resamples=n_resamples, seed=seed, alpha=alpha,
                                  power=power, people_trend=nt, options=options,
                                  max_work=max_work)
            extra["judge"] = report.to_dict()
            sections += _judge_section(report)
            if ppi:
                model_people = _model_people(j_all, judge, k, gain, combine, alpha, n_resamples,
                                             seed, ppi_design, ppi_width, pi, ppi_inclusion)
                extra["ppi"] = model_people.to_dict()
                sections += _ppi_section(model_people)
        extra["sections"] = sections
    return rows, notes


def _rows(j: Judgments, tr: Trend, nt: NoiseTrend, both: OfflineOnline,
          alpha_of: Callable[..., float] | None) -> list[dict[str, Any]]:
    """One row per round and system: the offline/online table with the trend's coverage,
    the rater-noise interval and MDC, and the round's Krippendorff's alpha."""
    kripp: dict[str, float] = {}
    for r in j.rounds:
        table = j.label_table(r)
        kripp[r] = (alpha_of(table, level="ordinal")
                    if alpha_of is not None and table["rater"].nunique() >= 2 else math.nan)
    scores = j.has_scores
    coverage = tr.table.set_index(["round", "system"])["coverage"]
    noise = nt.table.set_index(["round", "system"])
    rows = []
    for rec in both.table.to_dict("records"):
        row = {c: rec.get(c, math.nan) for c in LABELS_COLUMNS}
        row["coverage"] = float(coverage.loc[(rec["round"], rec["system"])])
        key = (rec["round"], rec["system"])
        row.update(dcg_ci_raters_low=float(noise.loc[key, "ci_low"]),
                   dcg_ci_raters_high=float(noise.loc[key, "ci_high"]),
                   mdc=float(noise.loc[key, "mdc"]))
        if not scores:
            row.update(auc=math.nan, gauc=math.nan, pnr=math.nan)
        row["alpha"] = kripp[rec["round"]]
        rows.append(row)
    return rows


def _model_people(j_all: Judgments, judge: str, k: int, gain: str, combine: str, alpha: float,
                  n_resamples: int, seed: int, design: str, width: float | None, pi: Any,
                  inclusion_file: str | None) -> Any:
    """The model + people estimates (``--ppi``); a stated design that does not cover a
    round is refused naming the design file."""
    from .labels.ppi import ppi_report

    try:
        model_people = ppi_report(
            j_all, judge, k=k, gain=gain,  # type: ignore[arg-type]
            combine=combine,  # type: ignore[arg-type]
            confidence_level=1 - alpha, n_resamples=n_resamples, seed=seed,
            design=design,  # type: ignore[arg-type]
            target_width=width, inclusion=pi)
    except ValueError as exc:
        if inclusion_file is None or "design" not in str(exc):
            raise
        raise ValueError(f"--ppi-inclusion {inclusion_file}: {exc} (expected "
                         "every shown result of a round the design names, at "
                         f"positions <= {k})") from None
    return model_people


def _stated_design(j: Any, path: str | None, ppi: bool, design: str) -> Any:
    """Per unit of ``j``: the inclusion probabilities of the design file ``path`` (None
    without one); a file that names none of the results is refused with its name (one
    that covers a round's shown results only in part is refused by ``ppi_report``)."""
    if path is None:
        return None
    if not ppi:
        raise ValueError("--ppi-inclusion needs --ppi: it states the design of the "
                         "people's labels for the model + people estimates")
    if design != "random":
        raise ValueError("--ppi-inclusion states how the people's results were drawn; it "
                         f"cannot be combined with --ppi-design {design}")
    import numpy as np

    from .labels.ppi import inclusion_of, read_inclusion

    table = read_inclusion(path)
    pi = inclusion_of(j, table)
    if np.isnan(pi).all():
        raise ValueError(f"--ppi-inclusion {path}: the design names none of the labeling "
                         "files' results (expected rows whose round, query and doc are "
                         "those of the files' shown results)")
    return pi


def _judge_work(j_all: Judgments, judge: str | None, judge_limit: int | None, n_resamples: int
                ) -> int | None:
    """The judge report's largest points x resamples (None: no judge, or no limit),
    checked against the files right after reading (``--judge``, ``--judge-limit``)."""
    if judge is not None and judge not in j_all.raters:
        raise ValueError(f"--judge {judge!r} is not a rater of the files (raters: "
                         + ", ".join(repr(r) for r in j_all.raters) + ")")
    max_work = None
    if judge is not None:
        from .labels.judge import JUDGE_MAX_WORK, check_judge_work

        if judge_limit is not None and judge_limit < 0:
            raise ValueError(f"--judge-limit must be >= 0 (0: no limit), got {judge_limit}")
        max_work = JUDGE_MAX_WORK if judge_limit is None else judge_limit or None
        check_judge_work(j_all, n_resamples, max_work, limit="--judge-limit",
                         hint="use fewer --resamples or the files of fewer rounds, or raise "
                              "--judge-limit (0: no limit) where the memory allows")
    return max_work


def _notes(j: Judgments, tr: Trend, nt: NoiseTrend, both: OfflineOnline, *, k: int,
           combine: str, rel_level: float, judge: str | None) -> list[str]:
    """The definition lines of ``labels``' columns."""
    from .labels.judgments import COMBINE_RULES

    scores = j.has_scores
    return [
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
        f"dcg_ci_raters_low/high: {nt.definitions['ci_low']}",
        f"mdc: {nt.definitions['mdc']}",
        "alpha: Krippendorff's alpha (ordinal) of the round's raters; empty with one rater"
        + (f"; the model judge {judge!r} is left out of every column" if judge else ""),
        *both.notes, *nt.notes()]


def _table_lines(frame: Any, columns: Sequence[str]) -> list[str]:
    """An aligned text table of some columns of a DataFrame (numbers to 3 decimals)."""
    cells = [[_text_cell(v) for v in rec] for rec in frame[list(columns)].itertuples(
        index=False, name=None)]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    return ["  ".join(v.rjust(widths[i]) for i, v in enumerate(values)).rstrip()
            for values in [list(columns), *cells]]


def _text_cell(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return "yes" if value else "no"
    if isinstance(value, Integral):
        return str(int(value))
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return ""
    return f"{number:.3f}"


def _anchor_section(drift: Any) -> list[str]:
    lines = ["", "## Anchor items, month over month (read before the trend)", ""]
    lines += _table_lines(drift.pairs, ("round_from", "round_to", "items", "shift", "ci_low",
                                        "ci_high", "kappa", "agreement", "drift"))
    lines += [""] + [f"# {n}" for n in drift.notes()] + [
        f"# {k}: {v}" for k, v in drift.definitions.items()]
    return lines


def _judge_section(report: Any) -> list[str]:
    lines = ["", f"## Model judge {report.judge!r} against the people "
                 f"({', '.join(report.people)})", ""]
    lines += [f"- {s}" for s in report.summary]
    lines += ["", "### Agreement per round", ""]
    lines += _table_lines(report.agreement, ("round", "units", "kappa", "kappa_ci_low",
                                             "kappa_ci_high", "alpha", "alpha_ci_low",
                                             "alpha_ci_high", "exact_agreement",
                                             "difference"))
    lines += ["", "### Bias (judge − people) per system", ""]
    lines += _table_lines(report.bias, ("round", "system", "results", "bias", "ci_low",
                                        "ci_high"))
    lines += ["", "### Does it favour a system?", ""]
    lines += _table_lines(report.favours, ("round", "system", "difference", "ci_low",
                                           "ci_high", "favours"))
    lines += ["", "### Decisions: month over month", ""]
    lines += _table_lines(report.decisions, ("system", "round_from", "round_to",
                                             "people_delta", "judge_delta", "same_direction",
                                             "people_drop", "judge_drop"))
    lines += ["", "### System order (Kendall's tau-b)", ""]
    lines += _table_lines(report.order, ("scope", "points", "tau", "ci_low", "ci_high"))
    if report.gsb is not None:
        lines += ["", "### GSB verdict", ""]
        lines += _table_lines(report.gsb, ("round", "queries", "people_gsb",
                                           "people_verdict", "judge_gsb", "judge_verdict",
                                           "same_verdict"))
    lines += ["", f"### Disagreements ({len(report.disagreements)}; the first 20)", ""]
    lines += _table_lines(report.disagreements.head(20), (
        "round", "query", "doc", "systems", "position", "judge_label", "people_label",
        "difference"))
    lines += [""] + [f"# {k}: {v}" for k, v in report.definitions.items()]
    return lines


def _ppi_section(report: Any) -> list[str]:
    lines = ["", f"## Model + people (PPI++): the judge {report.judge!r} corrected by the "
                 f"people's labels", "", f"- {report.memo}", ""]
    lines += _table_lines(report.systems, ("round", "system", "queries", "n_people", "n_model",
                                           "estimate", "low", "high", "people_only",
                                           "people_low", "people_high", "model_only"))
    lines += ["", "### Pairs (b − a)", ""]
    lines += _table_lines(report.pairs, ("round", "system_a", "system_b", "estimate", "low",
                                         "high", "people_only", "model_only", "verdict",
                                         "people_verdict", "judge_verdict"))
    rank = report.ranking
    if rank.get("kendall_tau", {}).get("value") is not None:
        lines += ["", "### The judge's ranking against the people's", ""]
        lines += [f"{name}: {rank[key]['value']:.3f} [{_text_cell(rank[key]['low'])}, "
                  f"{_text_cell(rank[key]['high'])}] over {rank['points']} (round, system) "
                  "points" for key, name in (("kendall_tau", "Kendall's tau-b"),
                                             ("tau_ap", "tau_AP"))]
    lines += ["", "### How many people's labels", ""]
    lines += [f"- {rec['round']} {rec['system_a']} vs {rec['system_b']}: {rec['advice']}"
              for rec in report.plan.to_dict("records")]
    lines += [""] + [f"# {k}: {v}" for k, v in report.definitions.items()]
    return lines


def gsb_rows(files: Sequence[str], *, confidence_level: float = 0.95,
             warnings: list[DataWarning] | None = None
             ) -> tuple[list[dict[str, Any]], list[str]]:
    """The rows of ``gsb`` and its definition line (reading warnings into ``warnings``)."""
    from .labels.gsb import gsb_by_round, read_gsb

    judged = read_gsb(list(files))
    if warnings is not None:
        warnings.extend(judged.warnings)
    table = gsb_by_round(judged, confidence_level=confidence_level)
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
               notes: Sequence[str] = (), *, extra: dict[str, Any] | None = None) -> None:
    """Write rows as an aligned table (with the notes and ``extra["sections"]`` below),
    CSV (the rows only) or JSON (with ``extra``'s other keys)."""
    extra = extra or {}
    if fmt == "json":
        doc = {"columns": list(columns),
               "rows": [{c: _json_value(r[c]) for c in columns} for r in rows],
               "notes": list(notes)}
        doc.update({key: value for key, value in extra.items() if key != "sections"})
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
    for text in extra.get("sections", ()):
        out.write(text + "\n")
