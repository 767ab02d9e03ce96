"""Command line: ``python -m ireval_core eval|compare|measures ...``.

``eval`` prints trec_eval's layout by default (``measure<TAB>qid<TAB>value``,
``all`` for the mean); ``compare`` runs paired significance tests. Bad input
exits with status 2 and one line ``file:line: message`` on stderr; when the file has
several problems, that line ends with how many, and the first ones follow (up to 100
bad lines of a run or qrels file, 20 of a labeling file), then what to do about them
when there is a choice to make (``labels --conflicts``).
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import re
import sys
import textwrap
from collections.abc import Sequence
from dataclasses import replace
from typing import Any, TextIO, cast

import numpy as np

from . import cli_labels, cli_queue, cli_task, cli_workspace
from .data import JoinCache, Qrels, Run
from .errors import DataWarning, FormatError, IrevalError, Remedy
from .escape import csv_row
from .evaluate import Evaluation, evaluate
from .io import (
    has_comment_lines,
    has_judgment_groups,
    read_qrels_alongside,
    read_runs,
    shared_tag_names,
)
from .io.column_cache import CacheSettings, ColumnCache
from .measures import JUDGMENTS, Family, JudgmentKind, Measure, families, parse_measure
from .options import EvalOptions, add_arguments, from_arguments
from .progress import TerminalStatus, reporting, stage
from .trec_output import COUNTS as _COUNTS
from .trec_output import (
    Column,
    all_trec,
    columns,
    header_of,
    official,
    trec_texts,
    with_collection_size,
    write_trec,
)

# trec_eval 9.0.8's all_trec, in its print order (--trec-eval 10.0: trec_output.all_trec)
ALL_TREC = all_trec("9.0.8")


def _measure_help() -> str:
    lines = ["measures (ir_measures-style names; @k = cutoff, (name=value) = parameters):"]
    lines.extend(_family_lines(families("qrels")))
    lines.append("  all_trec   every trec_eval measure above, by its trec_eval name, and "
                 "relstring (relstring_N: the grades of the first N documents)")
    lines.append("  official   trec_eval's default set: num_ret ... map, gm_map, Rprec, bpref, "
                 "recip_rank, iprec_at_recall, P")
    sections: tuple[tuple[JudgmentKind, str, str], ...] = (
        ("prefs", "preference measures", "all_prefs   all of them, in trec_eval's order"),
        ("qrels_jg", "judgment-group measures", "qrels_jg    map_avgjg, P_avgjg (5 ... 1000), "
         "Rprec_mult_avgjg (0.20 ... 2.00)"))
    for kind, title, nick in sections:
        lines.append("")
        lines.extend(textwrap.wrap(f"{title}, computed from other judgments than qrels: they "
                                   f"need {JUDGMENTS[kind]}:", 78, subsequent_indent="  "))
        lines.extend(_family_lines(families(kind)))
        lines.append("  " + nick)
    return "\n".join(lines)


def _family_lines(found: dict[str, Family]) -> list[str]:
    """Each family's head (name, parameters, cutoff, trec_eval name) and definition."""
    lines = []
    for fam in found.values():
        params = ", ".join(f"{p.name}={p.default}" for p in fam.params)
        head = f"  {fam.name}" + (f"({params})" if params else "")
        head += {"required": "@k", "recall": "@r", "optional": "[@k]", "none": ""}[fam.cutoff]
        if fam.trec:
            head += f"   [trec_eval: {fam.trec}]"
        lines.append(head)
        body = fam.definition.replace("{", "").replace("}", "")
        lines.extend(textwrap.wrap(body, 76, initial_indent="      ",
                                   subsequent_indent="      "))
    return lines


_ONE_RUN = ("each run file is one run whatever its tag column says, named by the tag of "
            "its last line, as trec_eval reads a run (default: one run per tag)")


_EVAL_DESCRIPTION = """\
Evaluate runs against qrels. --format trec (the default) prints what trec_eval of
--trec-eval prints, line for line: without -m its default set, official (all_trec is
-m all_trec away); each 'all' line is trec_eval's own mean (the per-query values
added in its query order and divided by its number of queries; gm_map and gm_bpref
through log and exp); an undefined value prints '-nan' as trec_eval prints it (-J
leaving a ranking with no judged document: iprec_at_recall_* and 11pt_avg), and
makes that measure's 'all' '-nan'. --format csv and json compute all_trec without
-m; they write an undefined value as nan (csv) or null (json) and each mean over
the defined values. See docs/semantics.md."""


def _meeting_report_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``meeting-report`` command's arguments."""
    mr = sub.add_parser("meeting-report", help="one self-contained HTML file for a review "
                                               "meeting (opens offline)")
    mr.add_argument("qrels")
    mr.add_argument("runs", nargs="+", metavar="RUN")
    mr.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                    help="measure, repeatable (default: nDCG@10, AP, P@10, R@100, RR)")
    mr.add_argument("--notes", metavar="FILE",
                    help="a UTF-8 text file of notes, one per paragraph; a paragraph "
                         "starting with 'Decision:' is a decision")
    mr.add_argument("--labels", nargs="+", metavar="FILE",
                    help="labeling files (monthly labeled result lists): the report adds "
                         "the DCG@10 trend per round and system")
    mr.add_argument("--labels-judge", default=None, metavar="RATER",
                    help="with --labels: a rater who is a model judge: the trend leaves its "
                         "labels out (the people's), and the report and its decision memo "
                         "carry the judge's sentence from the model + people estimates "
                         "(labels --judge RATER --ppi)")
    mr.add_argument("--title", default="ireval meeting report")
    _one_test_arguments(mr, marks="of the verdicts", after="the verdicts",
                        baseline_sets="the significance table, the verdicts and the "
                                      "decision evidence")
    add_arguments(mr)
    mr.add_argument("-o", "--output", required=True, metavar="FILE",
                    help="where to write the HTML file")
    mr.add_argument("--memo", metavar="FILE.md",
                    help="also write the decision memo as Markdown: one section per "
                         "decision recorded on a comparison, then the decision evidence")
    return mr


def _build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m ireval_core",
        description="Exact, vectorised IR evaluation (trec_eval-compatible).")
    sub = parser.add_subparsers(dest="command", required=True)

    ev = sub.add_parser("eval", help="evaluate runs against qrels",
                        formatter_class=argparse.RawDescriptionHelpFormatter,
                        description=_EVAL_DESCRIPTION, epilog=_measure_help())
    ev.add_argument("qrels", help="qrels file (TREC, CSV/TSV, Parquet, JSON; .gz ok)")
    ev.add_argument("runs", nargs="+", metavar="RUN",
                    help="run file(s); several tags = systems; - reads standard input")
    ev.add_argument("-m", "--measure", action="append", dest="measures", metavar="MEASURE",
                    help="measure, repeatable; all_trec and official name trec_eval's sets "
                    "(default: official, trec_eval's own default, with --format trec; "
                    "all_trec with --format csv or json)")
    ev.add_argument("-q", action="store_true", dest="per_query", help="also per-query values")
    add_arguments(ev)
    ev.add_argument("-N", "--num-docs", type=int, default=None, metavar="N",
                    help="trec_eval's -N: the number of documents in the collection, used by "
                    "utility's d coefficient (documents neither relevant nor retrieved; "
                    "default 0, as trec_eval)")
    ev.add_argument("--one-run", action="store_true", help=_ONE_RUN)
    ev.add_argument("--cache", choices=("yes", "no", "hash"), default=None, help=_CACHE)
    ev.add_argument("-R", dest="rel_format", choices=("qrels", "qrels_jg", "prefs",
                                                      "qrels_prefs"), default="qrels",
                    help="trec_eval's -R: the judgments' format; qrels_jg: 'qid jg docid rel' "
                    "with judgment groups, for the *_avgjg measures (-m qrels_jg: all of them); "
                    "prefs: preference judgments 'qid jg jsg docid rel_level', qrels_prefs: "
                    "qrels read as preferences, for the prefs_* measures (-m all_prefs)")
    ev.add_argument("-Z", "--zscores", metavar="FILE",
                    help="trec_eval's -Z: print each value as a z-score against the mean and "
                    "standard deviation of its query and measure in FILE (lines 'qid "
                    "measure mean stddev'; trec layout only)")
    ev.add_argument("--format", choices=("trec", "csv", "json"), default="trec")
    scale = ev.add_argument_group("beyond one machine (pip install -r requirements-scale.txt)")
    scale.add_argument("--engine", choices=("memory", "dask"), default="memory",
                       help="memory (default) or dask: the same numbers on partitioned data "
                       "(Parquet datasets, TREC/CSV files larger than memory, fsspec URLs)")
    where = scale.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler, "
                       "tcp://HOST:PORT; its workers read the inputs (default: a local cluster)")
    where.add_argument("--workers", type=int, metavar="N",
                       help="worker processes of the local cluster (default: one per core)")

    cmp_ = sub.add_parser("compare", help="paired significance tests between runs")
    cmp_.add_argument("qrels")
    cmp_.add_argument("runs", nargs="+", metavar="RUN")
    cmp_.add_argument("-m", "--measure", action="append", dest="measures", required=True)
    cmp_.add_argument("--baseline", default=None, help="compare each run with this one only")
    cmp_.add_argument("--tests", type=_tests, default=list(_TESTS), metavar="TEST[,TEST...]",
                      help=f"comma-separated tests, of {', '.join(_TESTS)} (default: all); "
                           "the text format's verdict follows the least significant")
    cmp_.add_argument("--alternative", choices=("two-sided", "greater", "less"),
                      default="two-sided", help="about b - a; greater = b is better")
    cmp_.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"),
                      default="holm")
    cmp_.add_argument("--resamples", type=int, default=10_000)
    cmp_.add_argument("--seed", type=int, default=0)
    decide = cmp_.add_argument_group(
        "decision evidence (JSON only: holes and risk per pair and measure, always)")
    _decision_arguments(decide, alpha=True)
    add_arguments(cmp_)
    cmp_.add_argument("--one-run", action="store_true", help=_ONE_RUN)
    cmp_.add_argument("--format", choices=("text", "json", "csv"), default=None,
                      help="text: a verdict sentence per pair and measure, then each test's "
                           "numbers (the default on a terminal); json (the default into a "
                           "pipe or file; with the decision evidence); csv")

    rep = sub.add_parser("report", help="results table with significance markers "
                                        "(Markdown, LaTeX or HTML)")
    rep.add_argument("qrels")
    rep.add_argument("runs", nargs="+", metavar="RUN")
    rep.add_argument("-m", "--measure", action="append", dest="measures", required=True)
    _one_test_arguments(rep, marks="marking the table", after="the table",
                        baseline_sets="the markers, the correction and the decision evidence")
    rep.add_argument("--no-evidence", action="store_true",
                     help="the table only, without the decision evidence (as for a paper)")
    add_arguments(rep)
    rep.add_argument("--format", choices=("markdown", "latex", "html"), default="markdown")

    mr = _meeting_report_parser(sub)

    jq = cli_queue.add_parser(sub)
    add_arguments(jq)

    for command in (ev, cmp_, rep, mr, jq):
        command.add_argument(
            "--progress", choices=("auto", "always", "never"), default="auto",
            help="a status line on stderr (stage and seconds so far) for work longer "
                 "than a second; auto: only when stderr is a terminal (default)")

    sub.add_parser("measures", help="list every measure with its definition")
    cli_labels.add_parsers(sub)  # labels, gsb (monthly labeling)
    cli_task.add_parser(sub)  # labels-task (the month's labeling task)
    cli_workspace.add_parsers(sub)  # workspace audit
    return parser


_TESTS = ("t", "wilcoxon", "sign", "randomization", "bootstrap")
"""The paired tests ``compare --tests`` and ``--test`` choose from."""


def _tests(text: str) -> list[str]:
    """``compare --tests``: comma-separated names of :data:`_TESTS`, each checked."""
    tests = [t.strip() for t in text.split(",") if t.strip()]
    unknown = [t for t in tests if t not in _TESTS]
    if unknown or not tests:
        raise argparse.ArgumentTypeError(
            f"invalid choice: {', '.join(map(repr, unknown)) or repr(text)} (choose from "
            f"{', '.join(_TESTS)}, comma-separated)")
    return list(dict.fromkeys(tests))


def _one_test_arguments(parser: argparse.ArgumentParser, *, marks: str, after: str,
                        baseline_sets: str) -> None:
    """The options of ``report`` and ``meeting-report``, which show one paired test: the
    test (``marks``: what it marks), its correction, level, resamples and seed, the
    baseline (``baseline_sets``: what it restricts), then the decision-evidence options
    (a section ``after`` what)."""
    parser.add_argument("--test", choices=_TESTS, default="t",
                        help=f"two-sided paired test {marks} (default t)")
    parser.add_argument("--correction", choices=("none", "bonferroni", "holm", "bh"),
                        default="holm", help="over the pairs of each measure (default holm)")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", metavar="NAME", default=None,
                        help=f"compare each run with this one only, as compare --baseline: "
                        f"{baseline_sets} (default: every pair)")
    _decision_arguments(parser.add_argument_group(
        f"decision evidence (a section after {after}: holes and risk per pair and "
        "measure; the same numbers as compare --format json with --tests TEST)"))


def _decision_arguments(group: Any, *, alpha: bool = False) -> None:
    """The decision-evidence options of ``compare``, ``report`` and ``meeting-report``
    (``alpha``: add ``--alpha``; the other two have it for their tests already)."""
    group.add_argument("--margin", metavar="M|P%", help="non-inferiority of each b against "
                       "its a: a margin in the measure's units, or P%% of a's mean")
    if alpha:
        group.add_argument("--alpha", type=float, default=0.05,
                           help="level of the holes and non-inferiority verdicts "
                                "(default 0.05)")
    group.add_argument("--rank-confidence", action="store_true",
                       help="each run's probability of each rank (bootstrap over queries), "
                       "the ANOVA and the mixed model, per measure")
    group.add_argument("--risk-alpha", type=float, default=1.0,
                       help="URisk/TRisk weight of a loss: 1 + alpha (default 1)")
    group.add_argument("--loss-delta", type=float, default=0.0,
                       help="a query loses when b - a < -delta (default 0)")


DEFAULT_MEASURES = {"trec": "official", "csv": "all_trec", "json": "all_trec"}
"""The measures ``eval`` computes without ``-m``, by output format: trec_eval's default
(``official``) in its own layout, every trec_eval measure in CSV and JSON."""


def _expand(names: Sequence[str] | None, trec_eval: str = "9.0.8",
            fmt: str = "trec") -> list[str]:
    """Measure names as given, with ``all_trec`` and ``official`` replaced by that
    trec_eval's names; no names: the format's default (:data:`DEFAULT_MEASURES`)."""
    sets = {"all_trec": all_trec(trec_eval), "official": official()}
    given = [DEFAULT_MEASURES[fmt]] if names is None else names
    return [n for name in given for n in sets.get(name.strip(), [name])]


_CACHE = ("keep the parsed columns of every file read in a cache folder and map them "
          "when the same file is read again (the same numbers, not parsed again): yes "
          "knows a file again by its path, size, modification time and inode; hash by "
          "its content's SHA-256 every time; no: off (default: IREVAL_CACHE, else no). "
          "IREVAL_CACHE_DIR (default ~/.cache/ireval/columns) and IREVAL_CACHE_MAX "
          "(default 4G, least recently used out) place and bound it. With --engine dask the "
          "workers keep each text block's columns there, known by the block's SHA-256 "
          "(yes and hash alike); with --scheduler that folder must be writable by every "
          "worker at the same path (without --cache, each worker's own IREVAL_CACHE "
          "decides)")


def column_cache(choice: str | None) -> ColumnCache | None:
    """The cache ``--cache`` asks for (``None``: ``IREVAL_CACHE``, else off)."""
    choice = (choice or os.environ.get("IREVAL_CACHE", "no")).strip().lower()
    if choice in ("no", "off", "0", "false", ""):
        return None
    if choice not in ("yes", "on", "1", "true", "hash"):
        raise ValueError(f"--cache / IREVAL_CACHE: expected yes, no or hash, got {choice!r}")
    settings = CacheSettings.from_env()
    return ColumnCache(replace(settings, enabled=True), "hash" if choice == "hash" else "stat")


def _load(qrels_path: str, run_paths: Sequence[str], notes: list[DataWarning], *,
          one_run: bool = False, comments: bool = False,
          complete: bool | None = None,
          cache: ColumnCache | None = None) -> tuple[Qrels, list[Run]]:
    """Read the inputs (a run named ``-`` from standard input, as trec_eval 10.0 reads
    one; ``comments``: skip ``#`` comment lines, as trec_eval 10.0; ``complete``: whether
    ``-c`` is on, as the warning about judged queries a run misses says). ``notes`` gets
    what the app shows beside them: a file whose tag column splits it into several systems
    (unless ``one_run``), runs renamed because their tag was taken, and every soft
    warning of the reading and of the dataset
    (:meth:`Dataset.warnings`: queries without judgments, judged queries not answered,
    short rankings, unjudged documents at the top)."""
    from .dataset import Dataset

    _one_stdin(run_paths)
    stage(f"reading {qrels_path}")
    # the qrels on a second core while the runs are read (errors as if read first)
    qrels, runs = read_qrels_alongside(
        qrels_path, lambda: _load_runs(run_paths, notes, one_run=one_run, comments=comments,
                                       cache=cache),
        comments=comments, cache=cache)
    stage("checking")
    # the app's warnings about how runs and qrels fit (queries left out of the means, short
    # rankings); not the share of unjudged documents in the top 10, which nearly every real
    # run has (``report`` and the app's Data page show it)
    notes.extend(w for w in Dataset(qrels, tuple(runs)).warnings(complete=complete)
                 if w.code != "unjudged-in-top10")
    stage("evaluating")
    return qrels, runs


def _one_stdin(run_paths: Sequence[str]) -> None:
    """Refuse ``-`` given twice, before anything is read."""
    if list(run_paths).count("-") > 1:
        raise ValueError("standard input ('-') can be read as one run only")


def _load_runs(run_paths: Sequence[str], notes: list[DataWarning], *, one_run: bool,
               comments: bool, cache: ColumnCache | None = None) -> list[Run]:
    """The runs of :func:`_load`, and its notes about them."""
    _one_stdin(run_paths)
    runs: list[Run] = []
    for p in run_paths:
        stage(f"reading {p}")
        source = sys.stdin.buffer if p == "-" else p
        got = read_runs(source, name="stdin" if p == "-" else None, one_run=one_run,
                        taken_names={r.name: r.source for r in runs}, comments=comments,
                        cache=None if p == "-" else cache)
        if len(got) > 1:
            shown = ", ".join(r.name for r in got[:3]) + (", ..." if len(got) > 3 else "")
            notes.append(DataWarning(
                "tags-split", f"{len(got)} tags in one file: read as {len(got)} systems "
                f"({shown}); --one-run reads it as one run, as trec_eval does",
                source=p, count=len(got)))
        runs.extend(got)
    return shared_tag_names(runs)  # a tag of several files: each named after its file


def _fmt(value: float, measure: Measure) -> str:
    if math.isnan(value):
        return "nan"
    if measure.name in _COUNTS:
        return str(int(round(value)))
    return f"{value:.4f}"


def write_eval(res: Evaluation, labels: dict[Measure, str], per_query: bool, fmt: str,
               out: TextIO) -> None:
    """Write an evaluation in trec_eval layout, CSV or JSON."""
    if fmt == "json":
        doc: dict[str, Any] = {"options": res.options.describe(), "runs": {}}
        for s in res.systems:
            doc["runs"][s] = {
                labels[m]: {"definition": res.definition(m), "all": _num(res.mean(s, m)),
                            **({"per_query": _per_query(res, s, m)} if per_query else {})}
                for m in res.measures}
        json.dump(doc, out, indent=2)
        out.write("\n")
        return
    if fmt == "csv":
        w = csv.writer(out, lineterminator="\n")
        w.writerow(["run", "measure", "qid", "value"])
        for s in res.systems:
            for m in res.measures:
                # names and ids are neutralised against spreadsheet formulas; the values
                # are numbers written by repr (a leading '-' is a sign, not a formula)
                if per_query:
                    for q, v in _per_query(res, s, m).items():
                        w.writerow([*csv_row([s, labels[m], q]),
                                    repr(float("nan") if v is None else v)])
                w.writerow([*csv_row([s, labels[m], "all"]), repr(res.mean(s, m))])
        return
    for s in res.systems:
        out.write(f"{'runid':<22}\tall\t{s}\n")
        if per_query:  # one values array per measure, indexed by query position
            columns = [(labels[m], m, res.values[(s, str(m))]) for m in res.measures]
            for i, q in enumerate(res.query_ids[s]):
                for label, m, values in columns:
                    out.write(f"{label:<22}\t{q}\t{_fmt(float(values[i]), m)}\n")
        out.write(f"{'num_q':<22}\tall\t{len(res.query_ids[s])}\n")
        for m in res.measures:
            out.write(f"{labels[m]:<22}\tall\t{_fmt(res.mean(s, m), m)}\n")


def _per_query(res: Evaluation, system: str, measure: Measure) -> dict[str, float | None]:
    """``{query id: value}`` of one system and measure (NaN as None); no pandas needed."""
    values = res.values[(system, str(measure))].tolist()
    return {str(q): _num(v) for q, v in zip(res.query_ids[system].tolist(), values,
                                                strict=True)}


def _num(v: float) -> float | None:
    v = float(v)
    return None if math.isnan(v) else v


def _cmd_eval(args: argparse.Namespace, out: TextIO, notes: list[DataWarning]) -> int:
    options = from_arguments(args)
    names, header = header_of(args.measures or [])
    if args.rel_format == "qrels_jg":
        return _cmd_eval_jg(args, out, notes, names, header)
    if args.rel_format in ("prefs", "qrels_prefs"):
        return _cmd_eval_prefs(args, out, notes, names, header)
    if any(_AVGJG.match(n) for n in names):
        raise ValueError("the *_avgjg measures need judgment groups: add -R qrels_jg")
    names = _expand(names if args.measures else None, options.trec_eval, args.format)
    trec_order = args.format == "trec"  # trec_eval's print order
    if args.num_docs is not None and args.num_docs < 0:
        raise ValueError(f"-N: the number of documents must be >= 0; got {args.num_docs}")
    cols = with_collection_size(columns(names, parse_measure, trec_order=trec_order),
                                args.num_docs)  # checked before any reading
    strings: dict[tuple[str, str], dict[str, str]] = {}
    overrides: dict[tuple[str, str], dict[str, float]] = {}
    if args.one_run and args.engine == "dask":
        raise ValueError("--one-run goes with --engine memory")
    table = None
    if args.zscores is not None:
        if args.format != "trec":
            raise ValueError("-Z goes with --format trec")
        from .io.zscores import read_zscores

        table = read_zscores(args.zscores)
    if args.engine == "dask":
        if "-" in args.runs:
            raise ValueError("a run from standard input ('-') goes with --engine memory")
        res = _eval_dask(args, names, cols, options, notes, strings, overrides)
    elif args.scheduler is not None or args.workers is not None:
        raise ValueError("--scheduler and --workers go with --engine dask")
    else:
        qrels, runs = _load(args.qrels, args.runs, notes, one_run=args.one_run,
                            comments=options.trec_eval == "10.0", complete=options.complete,
                            cache=column_cache(args.cache))
        # a trec_eval gain map (ndcg.1=3) leaves the qrels' other grades at their value
        cols = with_collection_size(columns(names, parse_measure, grades=np.unique(qrels.grade),
                                            trec_order=trec_order), args.num_docs)
        res = evaluate(qrels, runs, _specs(cols), options=options)
        notes.extend(_unanswered(qrels.query_ids, {r.name: (r.query_ids, r.source)
                                                   for r in runs}, options))
        if args.format == "trec":  # relstrings; 10.0's -c values of the queries a run misses
            for r in runs:
                texts, values = trec_texts(qrels, r, cols, options)
                strings.update({(r.name, label): t for label, t in texts.items()})
                overrides.update({(r.name, label): v for label, v in values.items()})
    if args.format == "trec":
        write_trec(res, cols, args.per_query, out, strings=strings, header=header,
                   zscore_table=table, overrides=overrides)
    else:
        labels: dict[Measure, str] = {}  # each measure under the name first given
        for c in cols:
            if c.measure is not None:
                labels.setdefault(c.measure, c.label)
        write_eval(res, labels, args.per_query, args.format, out)
    return 0


_QRELS_JG = ["map_avgjg", *(f"P_avgjg_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)),
             *(f"Rprec_mult_avgjg_{x / 10:.2f}" for x in range(2, 21, 2))]
_AVGJG = re.compile(r"^(map|P|Rprec_mult)_avgjg(?=$|[_.])")


def _cmd_eval_jg(args: argparse.Namespace, out: TextIO, notes: list[DataWarning],
                 names: list[str], header: tuple[str, ...]) -> int:
    """``eval -R qrels_jg``: the ``*_avgjg`` measures, as trec_eval computes them."""
    from .io.qrels_jg import read_qrels_jg
    from .judgment_groups import evaluate_judgment_groups

    options = from_arguments(args)
    names = [n for name in names for n in (_QRELS_JG if name == "qrels_jg" else [name])]
    bases = []
    for name in names:
        hit = _AVGJG.match(name)
        if hit is None:
            raise ValueError(f"-R qrels_jg evaluates the *_avgjg measures (map_avgjg, "
                             f"P_avgjg, Rprec_mult_avgjg, or -m qrels_jg), not {name!r}")
        bases.append(hit[1] + name[hit.end():])
    cols = columns(bases, parse_measure, trec_order=True)
    relabel = []
    avgjg = {f.base: name for name, f in families("qrels_jg").items()}  # AP: APAvgJG, ...
    for c in cols:
        family = next(f for f in ("Rprec_mult", "map", "P") if c.label.startswith(f))
        m = None if c.measure is None else Measure(avgjg[c.measure.name], c.measure.cutoff,
                                                   c.measure.params)
        relabel.append(Column(family + "_avgjg" + c.label[len(family):], m, c.depth))
    if args.engine != "memory" or args.zscores is not None or args.format != "trec":
        raise ValueError("-R qrels_jg goes with --engine memory, --format trec, no -Z")
    comments = options.trec_eval == "10.0"
    _one_stdin(args.runs)
    stage(f"reading {args.qrels}")
    groups = read_qrels_jg(args.qrels, comments=comments)
    runs = _load_runs(args.runs, notes, one_run=args.one_run, comments=comments)
    res = evaluate_judgment_groups(groups, runs, _specs(relabel), options=options)
    write_trec(res, relabel, args.per_query, out, header=header)
    return 0


def _cmd_eval_prefs(args: argparse.Namespace, out: TextIO, notes: list[DataWarning],
                    names: list[str], header: tuple[str, ...]) -> int:
    """``eval -R prefs|qrels_prefs``: the preference measures, as trec_eval 10.0 computes
    and prints them (in its order of the measures, whatever the order asked)."""
    from .io.prefs import read_prefs
    from .preferences import ALL_PREFS, PREF_MEASURES, evaluate_preferences, pref_measure

    options = from_arguments(args)
    nick = {"all_prefs": ALL_PREFS, "prefs": ALL_PREFS[:6]}  # trec_eval's nicknames
    asked = {pref_measure(n).trec for name in (names or ["all_prefs"])
             for n in nick.get(name, (name,))}
    chosen = [m for m in PREF_MEASURES if m.trec in asked]
    if args.engine != "memory" or args.zscores is not None or args.format != "trec":
        raise ValueError(f"-R {args.rel_format} goes with --engine memory, --format trec, "
                         "no -Z")
    comments = options.trec_eval == "10.0"
    stage(f"reading {args.qrels}")
    prefs = read_prefs(args.qrels, kind=args.rel_format, comments=comments)
    notes.extend(prefs.warnings)
    runs = _load_runs(args.runs, notes, one_run=args.one_run, comments=comments)
    judged = set(prefs.query_ids)
    for r in runs:
        missing = sorted(judged - set(map(str, r.query_ids)))
        if missing and not options.complete:
            notes.append(DataWarning(
                "prefs-missing-query",
                f"{len(missing)} judged quer{'y has' if len(missing) == 1 else 'ies have'} no "
                f"ranking in {r.name!r} and {'is' if len(missing) == 1 else 'are'} left out "
                "(trec_eval 10.0 stops there, exit 4; -c evaluates them)",
                source=r.source, count=len(missing), examples=tuple(missing[:3])))
    res = evaluate_preferences(prefs, runs, chosen, options=options)
    write_trec(res, [Column(m.trec, m.measure) for m in chosen], args.per_query, out,
               header=header)
    return 0


def _eval_dask(args: argparse.Namespace, names: Sequence[str], cols: list[Column],
               options: EvalOptions, notes: list[DataWarning],
               strings: dict[tuple[str, str], dict[str, str]],
               overrides: dict[tuple[str, str], dict[str, float]]) -> Evaluation:
    """``eval --engine dask``: the evaluation on a cluster, and with ``--format trec`` what
    the in-memory engine prints beside it (relstrings, 10.0's ``-c`` values of the queries
    a run misses), computed per partition (``strings`` and ``overrides`` are filled)."""
    from .distributed import dask_client, evaluate_dask, evaluate_dask_trec, qrels_grades_dask
    from .io.dask_blocks import keeping_blocks

    keep = None if args.cache is None else args.cache != "no"
    with dask_client(args.scheduler, n_workers=args.workers) as client, keeping_blocks(keep):
        if any(c.measure is not None and "gain" in dict(c.measure.params) and "=" in c.label
               for c in cols):  # a trec_eval gain map leaves the qrels' other grades as they are
            grades = qrels_grades_dask(args.qrels, options=options, client=client)
            cols[:] = with_collection_size(columns(names, parse_measure, grades=grades,
                                                   trec_order=args.format == "trec"),
                                           args.num_docs)
        if args.format != "trec":
            return evaluate_dask(args.qrels, args.runs, _specs(cols), options=options,
                                 client=client, notes=notes)
        got = evaluate_dask_trec(args.qrels, args.runs, cols, options=options, client=client,
                                 notes=notes)
    res = got.evaluation
    strings.update(got.strings)
    overrides.update(got.overrides)
    notes.extend(_unanswered(got.judged, {s: (res.answered.get(s, np.zeros(0, object)), None)
                                          for s in res.systems}, options))
    return res


def _specs(cols: Sequence[Column]) -> list[Measure]:
    """The measures of printed columns, each once, in order."""
    return list(dict.fromkeys(c.measure for c in cols if c.measure is not None))


def _unanswered(judged: np.ndarray, answered: dict[str, tuple[np.ndarray, str | None]],
                options: EvalOptions) -> list[DataWarning]:
    """Under 10.0 semantics without -c: judged queries a run does not answer, which make
    trec_eval 10.0 stop (ireval evaluates the other queries, as 9.0.8 did). ``judged``: the
    qrels' query ids; ``answered``: each run's answered query ids and its source, by name."""
    if options.complete or options.trec_eval != "10.0":
        return []
    out = []
    for name, (ids, source) in answered.items():
        missing = sorted(set(map(str, judged)) - set(map(str, ids)))
        if missing:
            out.append(DataWarning(
                "trec-eval-10-missing-query",
                f"{len(missing)} judged quer{'y has' if len(missing) == 1 else 'ies have'} "
                f"no ranking in {name!r}: trec_eval 10.0 stops there (\"result qid "
                f"'{missing[0]}' not found in qrels\", exit 4); ireval evaluates the other "
                "queries, as trec_eval 9.0.8 does (-c averages them in as 0)",
                source=source, count=len(missing), examples=tuple(missing[:3])))
    return out


def _cmd_compare(args: argparse.Namespace, out: TextIO, notes: list[DataWarning]) -> int:
    from .compare import compare_evaluation, write_comparison

    qrels, runs = _load(args.qrels, args.runs, notes, one_run=args.one_run,
                        complete=from_arguments(args).complete)
    tests = list(args.tests)
    fmt = args.format or ("text" if sys.stdout.isatty() else "json")
    joins = JoinCache()  # the decision evidence joins the runs once more otherwise
    res = evaluate(qrels, runs, args.measures, options=from_arguments(args), joins=joins)
    records = compare_evaluation(
        res, baseline=args.baseline, tests=tests, alternative=args.alternative,
        correction=args.correction, n_resamples=args.resamples, seed=args.seed)
    extras = None
    if fmt == "json":
        from .decisions.evidence import decision_evidence

        stage("decision evidence")
        extras = decision_evidence(
            qrels, runs, args.measures, options=from_arguments(args), baseline=args.baseline,
            margin=_margin(args.margin), alpha=args.alpha, test=tests[0] if tests else "t",
            risk_alpha=args.risk_alpha, loss_delta=args.loss_delta,
            rank_confidence=args.rank_confidence, n_resamples=args.resamples, rng=args.seed,
            joins=joins).blocks()
    elif args.margin is not None or args.rank_confidence:
        raise ValueError("--margin and --rank-confidence go with --format json")
    write_comparison(records, fmt, out, extras=extras, alpha=args.alpha)
    return 0


def _cmd_judge_queue(args: argparse.Namespace, out: TextIO,
                     notes: list[DataWarning]) -> int:
    options = from_arguments(args)
    qrels, runs = _load(args.qrels, args.runs, notes, complete=options.complete)
    return cli_queue.run(args, out, qrels, runs, options)


def _margin(text: str | None) -> float | str | None:
    """``--margin``: a number, or the text as given (``"1%"``; checked by the library)."""
    if text is None or text.strip().endswith("%"):
        return text
    try:
        return float(text)
    except ValueError:
        return text


def _cmd_meeting_report(args: argparse.Namespace, out: TextIO,
                        notes: list[DataWarning]) -> int:
    from pathlib import Path

    from .meeting import ReportNote, input_of, meeting_report

    qrels, runs = _load(args.qrels, args.runs, notes, complete=from_arguments(args).complete)
    inputs = [input_of(Path(p).name, kind, Path(p).read_bytes())
              for p, kind in [(args.qrels, "qrels"), *[(r, "run") for r in args.runs]]]
    said: list[ReportNote] = []
    if args.notes:
        text = Path(args.notes).read_text(encoding="utf-8")
        for para in (p.strip() for p in text.replace("\r\n", "\n").split("\n\n")):
            if para:
                decision = para.lower().startswith("decision:")
                said.append(ReportNote(para.split(":", 1)[1].strip() if decision else para,
                                       target=Path(args.notes).name,
                                       kind="decision" if decision else "note"))
    labels_trend, labels_memo = None, ""
    if args.labels_judge is not None and not args.labels:
        raise ValueError("--labels-judge needs --labels FILE...: the labeling files the "
                         "model judge labeled")
    if args.labels:
        from .labels import read_judgments, trend

        judged = read_judgments(args.labels)
        judge = args.labels_judge
        if judge is not None:
            from .labels.ppi import ppi_report

            if judge not in judged.raters:
                raise ValueError(f"--labels-judge {judge!r} is not a rater of the labeling "
                                 "files (raters: "
                                 + ", ".join(repr(r) for r in judged.raters) + ")")
            labels_memo = ppi_report(judged, judge, k=10, confidence_level=1 - args.alpha,
                                     n_resamples=args.resamples, seed=args.seed).memo
            judged = judged.select(raters=[r for r in judged.raters if r != judge])
        labels_trend = trend(judged, k=10).table[
            ["round", "system", "queries", "dcg", "dcg_ci_low", "dcg_ci_high", "ndcg",
             "coverage"]]
        inputs += [input_of(Path(p).name, "labels", Path(p).read_bytes()) for p in args.labels]
    report = meeting_report(
        qrels, runs, args.measures or ["nDCG@10", "AP", "P@10", "R@100", "RR"],
        options=from_arguments(args), inputs=inputs, notes=said, test=args.test,
        labels_trend=labels_trend, labels_memo=labels_memo,
        correction=args.correction, alpha=args.alpha, n_resamples=args.resamples,
        seed=args.seed, title=args.title, margin=_margin(args.margin),
        rank_confidence=args.rank_confidence, risk_alpha=args.risk_alpha,
        loss_delta=args.loss_delta, baseline=args.baseline)
    Path(args.output).write_text(report.html, encoding="utf-8")
    out.write(f"wrote {args.output} ({len(report.html.encode()):,} bytes)\n")
    if args.memo:
        memo = report.memo_markdown()
        Path(args.memo).write_text(memo, encoding="utf-8")
        out.write(f"wrote {args.memo} ({len(memo.encode()):,} bytes)\n")
    return 0


def _cmd_report(args: argparse.Namespace, out: TextIO, notes: list[DataWarning]) -> int:
    from .report import significance_table

    qrels, runs = _load(args.qrels, args.runs, notes, complete=from_arguments(args).complete)
    joins = JoinCache()
    res = evaluate(qrels, runs, args.measures, options=from_arguments(args), joins=joins)
    table = significance_table(res, args.measures, test=args.test, correction=args.correction,
                               alpha=args.alpha, n_resamples=args.resamples, seed=args.seed,
                               baseline=args.baseline)
    section = None
    if not args.no_evidence and len(runs) > 1:
        from .decisions.evidence import decision_evidence
        from .report import EvidenceSection

        stage("decision evidence")
        margin = _margin(args.margin)
        section = EvidenceSection(decision_evidence(
            qrels, runs, args.measures, options=from_arguments(args), margin=margin,
            alpha=args.alpha, test=args.test, risk_alpha=args.risk_alpha,
            loss_delta=args.loss_delta, rank_confidence=args.rank_confidence,
            n_resamples=args.resamples, rng=args.seed, joins=joins, baseline=args.baseline),
            margin, args.resamples, args.seed, args.baseline)
    elif args.margin is not None or args.rank_confidence:
        raise ValueError("--margin and --rank-confidence go without --no-evidence")
    if args.format == "html":
        page = table.to_html()
        if section is not None:
            page = page.replace("</body>", section.html() + "</body>", 1)
        out.write(page)
    else:
        out.write(table.to_markdown() if args.format == "markdown" else table.to_latex())
        if section is not None:
            out.write("\n" + (section.to_markdown() if args.format == "markdown"
                               else section.to_latex()))
    return 0


STATUS_DELAY = 1.0
"""Seconds of work before ``--progress`` draws its status line."""


class _Quiet:
    """No status line: a callback that drops stages, and a no-op context manager."""

    def __call__(self, name: str) -> None:
        pass

    def stop(self) -> None:
        pass

    def __enter__(self) -> _Quiet:
        return self

    def __exit__(self, *exc: object) -> None:
        pass


class _StopsStatus:
    """``out``, clearing the status line before the first thing written to it."""

    def __init__(self, out: TextIO, line: TerminalStatus | _Quiet) -> None:
        self._out, self._line = out, line

    def write(self, text: str) -> int:
        self._line.stop()
        return self._out.write(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._out, name)


def _status_line(args: argparse.Namespace) -> TerminalStatus | _Quiet:
    """The status line of ``--progress`` on stderr (auto: when stderr is a terminal)."""
    wanted = getattr(args, "progress", "never")
    if wanted == "always" or (wanted == "auto" and sys.stderr.isatty()):
        return _LabeledStatus(sys.stderr, delay=STATUS_DELAY)
    return _Quiet()


class _LabeledStatus(TerminalStatus):
    """The CLI's status: ``reading FILE`` stages become the label of the stages after them
    (``run.txt: ordering ties (3.1 s)``); ``evaluating`` clears it."""

    def __call__(self, name: str) -> None:
        if name.startswith("reading "):
            self.label = name.removeprefix("reading ")
            name = "reading"
        elif name == "evaluating":
            self.label = ""
        super().__call__(name)


_EVAL_JG = "python -m ireval_core eval -R qrels_jg -m qrels_jg QRELS RUN"


def _groups_hint(command: str) -> str:
    """What to do with a qrels file judging a document in several judgment groups, under
    ``command``: only ``eval`` has ``-R qrels_jg``; the other commands need one judgment
    per (query, document)."""
    if command == "eval":
        return ("eval -R qrels_jg reads a qrels file with judgment groups, for the *_avgjg "
                f"measures: {_EVAL_JG}")
    return (f"{command} needs one judgment per (query, document): keep one line per "
            "document for it; a qrels file with judgment groups can only be evaluated with "
            f"eval -R qrels_jg, for the *_avgjg measures: {_EVAL_JG}")


_FLAGS = {"round": "--round", "label_map": "--label-map", "conflicts": "--conflicts"}
"""The command line's flag of each reader parameter a :class:`~.errors.Remedy` names."""


def _remedy_words(remedy: Remedy) -> str:
    """What to do about a refused input, in the command line's terms (its flags)."""
    flag = _FLAGS.get(remedy.parameter, "--" + remedy.parameter.replace("_", "-"))
    if remedy.parameter == "conflicts":
        return (f"{remedy.count:,} of these {'are' if remedy.count != 1 else 'is'} one "
                "rater's different labels of a document in several systems' lists: choose "
                f"what they become with {flag} {'|'.join(remedy.choices)}")
    if remedy.parameter == "round":
        return f"give the file's round with {flag}, e.g. {flag} {remedy.example}"
    if remedy.parameter == "label_map":
        return f"pass a label map with {flag}, e.g. {flag} '{remedy.example}'"
    return f"set {flag}" + (f", e.g. {flag} {remedy.example}" if remedy.example else "")


def main(argv: Sequence[str] | None = None, out: TextIO | None = None) -> int:
    """Entry point; returns the exit status (2 for bad input, one line on stderr)."""
    out = out or sys.stdout
    parser = _build_parser()
    args = parser.parse_args(argv)
    notes: list[DataWarning] = []
    try:
        if args.command == "measures":
            out.write(_measure_help() + "\n")
            return 0
        if args.command in ("labels", "gsb"):
            status = cli_labels.run(args, out, notes)
        elif args.command == "labels-task":
            status = cli_task.run(args, out)
        elif args.command == "workspace":
            status = cli_workspace.run(args, out)
        else:
            commands = {"eval": _cmd_eval, "report": _cmd_report, "compare": _cmd_compare,
                        "meeting-report": _cmd_meeting_report,
                        "judge-queue": _cmd_judge_queue}
            with _status_line(args) as line, reporting(line):  # cleared before what follows
                status = commands[args.command](args, cast(TextIO, _StopsStatus(out, line)),
                                                notes)
        for w in notes:  # after success only: a failure prints its one line
            sys.stderr.write(f"warning: {w}\n")
        return status
    except (IrevalError, ValueError, OSError) as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, OSError) and exc.filename:
            message = f"{exc.filename}: {exc.strerror}"
        if isinstance(exc, FormatError):  # every problem found, and what to do about them
            if exc.remedies:  # the reader's parameters, said as this command's flags
                words = "; ".join(_remedy_words(r) for r in exc.remedies)
                message += ("; " + words) if exc.count <= 1 else ""
            if exc.count > 1:
                message += "\n" + exc.report()
                if exc.remedies:
                    message += "\n" + words[0].upper() + words[1:]
            elif exc.hint and not exc.remedies:
                message += "\n" + exc.hint
            if has_comment_lines(exc) and getattr(args, "trec_eval", None) != "10.0":
                message += ("\n--trec-eval 10.0 reads lines starting with '#' as comments, "
                            "as trec_eval 10.0 does")
            if has_judgment_groups(exc):
                message += "\n" + _groups_hint(args.command)
        sys.stderr.write(f"{message}\n")
        return 2
