"""The evaluation options: one immutable object from the user to the kernels.

Every setting that changes which numbers come out of an evaluation lives in
:class:`EvalOptions`: which queries are averaged (trec_eval ``-c``), the relevance
level of binary measures (``-l``), the depth cut (``-M``), judged-only rankings
(``-J``), what nDCG does when a query has no relevant document, and which trec_eval
version's semantics the numbers follow (9.0.8 or 10.0). The same object
is taken by :func:`ireval_core.evaluate`, the compare, report, curves, queries and
rounds functions, every CLI sub-command (:func:`add_arguments` /
:func:`from_arguments`) and the app (:meth:`EvalOptions.to_query_params` /
:meth:`EvalOptions.from_query_params` keep it in the page URL). It is frozen and
hashable, so it is also the cache key of anything computed from it.

>>> opts = EvalOptions(rel_level=2)
>>> opts.summary()
'relevant: grade >= 2 · queries in both run and qrels · whole ranking · trec_eval 9.0.8'
>>> opts.to_query_params()
{'rel': '2'}
>>> EvalOptions.from_query_params({'rel': '2'})[0] == opts
True
>>> EvalOptions(depth=0)
Traceback (most recent call last):
...
ValueError: The 'depth' parameter of EvalOptions must be an int >= 1 or None. Got 0 instead.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal

from .errors import shorten
from .params import (
    FINITE,
    POSITIVE_INT,
    Boolean,
    Constraint,
    InstanceOf,
    Options,
    any_of,
    check,
    parse,
)

__all__ = ["IDCG_ZERO_POLICIES", "OPTION_CONSTRAINTS", "OPTION_HELP", "TREC_EVAL_VERSIONS",
           "EvalOptions", "IdcgZero", "TrecEvalVersion", "add_arguments", "from_arguments"]

IdcgZero = Literal["zero", "drop"]
IDCG_ZERO_POLICIES: tuple[IdcgZero, ...] = ("zero", "drop")
TrecEvalVersion = Literal["9.0.8", "10.0"]
TREC_EVAL_VERSIONS: tuple[TrecEvalVersion, ...] = ("9.0.8", "10.0")

OPTION_HELP: dict[str, str] = {
    "complete": "Average over every qrels query; a query missing from a run scores 0 "
                "(trec_eval -c). Off: average over the queries in both the run and the qrels.",
    "rel_level": "A document is relevant for binary measures (P, R, AP, RR, bpref, ...) when "
                 "its grade >= this level (trec_eval -l). Graded measures (DCG, nDCG, ERR) "
                 "use the grade itself.",
    "depth": "Keep only the top N documents of each ranking (trec_eval -M); "
             "none = the whole ranking.",
    "judged_only": "Remove unjudged documents from the rankings first, after the depth cut "
                   "(condensed lists, trec_eval -J). Off: unjudged documents count as "
                   "non-relevant.",
    "idcg_zero": "nDCG of a query without relevant documents (IDCG = 0): 'zero' scores 0 and "
                 "keeps the query in the mean (trec_eval); 'drop' leaves it out of the mean "
                 "(TF-Ranking).",
    "trec_eval": "Which trec_eval's numbers to reproduce: 9.0.8 (pytrec_eval, ir_measures: "
                 "scores read as float32, recall fractions of R rounded up from +0.9) or 10.0 "
                 "(a fresh trec_eval build: scores as doubles, fractions of R rounded to "
                 "nearest).",
}
"""What each option does, in words: the CLI help and the app's widget help."""

# query-parameter name of each field (short: they end up in links people send)
_PARAM = {"complete": "complete", "rel_level": "rel", "depth": "depth",
          "judged_only": "judged", "idcg_zero": "idcg", "trec_eval": "te"}


def options_or_default(options: object, function: str) -> EvalOptions:
    """``options``, or the default :class:`EvalOptions` for ``None``; anything else raises
    ``TypeError`` naming the parameter ``options`` of ``function``.

    >>> options_or_default(None, "trend") == EvalOptions()
    True
    >>> options_or_default({}, "f")
    Traceback (most recent call last):
    ...
    TypeError: The 'options' parameter of f must be None or an EvalOptions. Got {} instead.
    """
    if options is None:
        return EvalOptions()
    return check(options, "options", function, _OPTIONS)


def _level(x: float) -> str:
    """A level as written by people: ``2`` for 2.0, else the shortest exact form."""
    return str(int(x)) if x.is_integer() and abs(x) < 2**53 else repr(x)


OPTION_CONSTRAINTS: dict[str, Constraint] = {
    "complete": Boolean(),
    "rel_level": FINITE,
    "depth": any_of(POSITIVE_INT, None),
    "judged_only": Boolean(),
    "idcg_zero": Options(IDCG_ZERO_POLICIES),
    "trec_eval": Options(TREC_EVAL_VERSIONS),
}
"""What each field must be: checked by :class:`EvalOptions`, read from URLs with
:func:`ireval_core.params.parse`."""


@dataclass(frozen=True)
class EvalOptions:
    """Settings that change which numbers come out; shown next to every result.

    Parameters
    ----------
    complete:
        Average over every qrels query, a query missing from a run scoring 0
        (trec_eval ``-c``). Default: the queries in both the run and the qrels.
    rel_level:
        Relevance threshold of binary measures (trec_eval ``-l``): relevant when
        grade >= ``rel_level``. A measure's own ``rel=`` parameter overrides it.
    depth:
        Keep only the top ``depth`` documents of each ranking (trec_eval ``-M``);
        ``None``: the whole ranking.
    judged_only:
        Remove unjudged documents (not in the qrels, or graded negative) from the
        rankings after the depth cut (trec_eval ``-J``). Default: they count as
        non-relevant.
    idcg_zero:
        nDCG of a query without relevant documents: ``"zero"`` (kept, scores 0,
        trec_eval) or ``"drop"`` (left out of the mean, TF-Ranking).
    trec_eval:
        Whose numbers to reproduce where trec_eval's versions differ: ``"9.0.8"``
        (pytrec_eval, ir_measures; the default) or ``"10.0"`` (a fresh trec_eval
        build). See ``docs/semantics.md``, "trec_eval 9.0.8 and 10.0".
    """

    complete: bool = False
    rel_level: float = 1.0
    depth: int | None = None
    judged_only: bool = False
    idcg_zero: IdcgZero = "zero"
    trec_eval: TrecEvalVersion = "9.0.8"

    def __post_init__(self) -> None:
        # ValueError for every bad field, even of the wrong type: options come from
        # widgets, URLs and the command line, where a type is a value like another
        for name, constraint in OPTION_CONSTRAINTS.items():
            value = check(getattr(self, name), name, "EvalOptions", constraint,
                          error=ValueError)
            object.__setattr__(self, name, value)  # rel_level a float, depth an int

    # ------------------------------------------------------------------------- in words

    def summary(self) -> str:
        """One compact line for the top of every results page.

        Non-default judged-only and IDCG = 0 settings are added when they apply; the
        trec_eval version always ends it.

        >>> print(*EvalOptions(complete=True, depth=100, judged_only=True,
        ...                    trec_eval="10.0").summary().split(" · "), sep="\\n")
        relevant: grade >= 1
        every qrels query (missing = 0)
        top 100
        unjudged removed
        trec_eval 10.0
        """
        parts = [f"relevant: grade >= {_level(self.rel_level)}",
                 "every qrels query (missing = 0)" if self.complete
                 else "queries in both run and qrels",
                 "whole ranking" if self.depth is None else f"top {self.depth}"]
        if self.judged_only:
            parts.append("unjudged removed")
        if self.idcg_zero == "drop":
            parts.append("IDCG = 0: query dropped")
        parts.append(f"trec_eval {self.trec_eval}")
        return " · ".join(parts)

    def describe(self) -> str:
        """Every option in words (the caption of tables and the header of reports)."""
        parts = ["queries: every qrels query (missing from a run = 0)" if self.complete
                 else "queries: in both run and qrels",
                 "unjudged: removed" if self.judged_only else "unjudged: non-relevant",
                 f"relevant: grade >= {_level(self.rel_level)}",
                 "depth: whole ranking" if self.depth is None else f"depth: top {self.depth}",
                 "IDCG = 0: query dropped" if self.idcg_zero == "drop"
                 else "IDCG = 0: scores 0",
                 f"semantics: trec_eval {self.trec_eval}"]
        return "; ".join(parts)

    def trec_eval_flags(self) -> str:
        """The trec_eval command-line flags giving the same numbers (where it has them).

        The version is not a flag: it is the trec_eval binary the flags are given to.

        >>> EvalOptions(complete=True, rel_level=2, depth=100).trec_eval_flags()
        '-c -l 2 -M 100'
        """
        flags = ["-c"] if self.complete else []
        if self.rel_level != 1.0:
            flags.append(f"-l {_level(self.rel_level)}")
        if self.depth is not None:
            flags.append(f"-M {self.depth}")
        if self.judged_only:
            flags.append("-J")
        return " ".join(flags)

    # ------------------------------------------------------------------------- in a URL

    def to_query_params(self, *, every: bool = False) -> dict[str, str]:
        """The options that differ from the defaults, as URL query parameters; ``every``:
        every option, the defaults too (a link that means the same options after a
        default changed; the whole ranking is ``depth=0``).

        >>> EvalOptions(rel_level=2).to_query_params()
        {'rel': '2'}
        >>> EvalOptions().to_query_params(every=True)["depth"]
        '0'
        >>> every = EvalOptions().to_query_params(every=True)
        >>> EvalOptions.from_query_params(every)[0] == EvalOptions()
        True
        """
        out: dict[str, str] = {}
        default = EvalOptions()
        for f in fields(self):
            value = getattr(self, f.name)
            if value == getattr(default, f.name) and not every:
                continue
            if value is None:  # depth: the whole ranking
                out[_PARAM[f.name]] = "0"
            elif isinstance(value, bool):
                out[_PARAM[f.name]] = "1" if value else "0"
            elif isinstance(value, float):
                out[_PARAM[f.name]] = _level(value)
            else:
                out[_PARAM[f.name]] = str(value)
        return out

    @classmethod
    def from_query_params(cls, params: Mapping[str, str | list[str]],
                          ) -> tuple[EvalOptions, list[str]]:
        """Options from URL query parameters; unknown keys are ignored.

        Returns ``(options, problems)``: a parameter that cannot be read keeps its
        default and is named in ``problems``, so a broken link never changes a number
        silently.

        Each value is read with :func:`ireval_core.params.parse` against the field's
        constraint (:data:`OPTION_CONSTRAINTS`); ``depth=0`` also means the whole ranking.

        >>> options, problems = EvalOptions.from_query_params(
        ...     {"rel": "x", "depth": "50", "judged": "1e400"})
        >>> options.depth, options.rel_level, problems
        (50, 1.0, ["rel='x': expected a finite number", "judged='1e400': expected a bool"])
        """
        values: dict[str, Any] = {}
        problems: list[str] = []
        for f in fields(cls):
            raw = params.get(_PARAM[f.name])
            if raw is None:
                continue
            text = (raw[-1] if isinstance(raw, list) and raw else str(raw)).strip()
            if f.name == "trec_eval":  # te=10 and te=9 are what people type
                text = {"10": "10.0", "9": "9.0.8"}.get(text, text)
            constraint = OPTION_CONSTRAINTS[f.name]
            value, problem = parse("" if f.name == "depth" and text == "0" else text,
                                   constraint)
            if problem is None:
                values[f.name] = value
            else:
                problems.append(f"{_PARAM[f.name]}={shorten(text, 40)!r}: expected {constraint}")
        return cls(**values), problems


_OPTIONS = any_of(None, InstanceOf(EvalOptions, "an EvalOptions"))


# ----------------------------------------------------------------------------- command line


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the option flags (``-c``, ``-l``, ``-M``, ``-J``, ``--idcg-zero``, ``--trec-eval``)
    to ``parser``.

    Every sub-command that evaluates calls this, so the CLI and the app cannot
    disagree on what an option means.
    """
    group = parser.add_argument_group("evaluation options (as trec_eval)")
    group.add_argument("-c", "--complete", action="store_true", help=OPTION_HELP["complete"])
    group.add_argument("-l", "--rel-level", type=float, default=1.0, metavar="LEVEL",
                       help=OPTION_HELP["rel_level"] + " Default 1.")
    group.add_argument("-M", "--depth", type=int, default=None, metavar="DEPTH",
                       help=OPTION_HELP["depth"])
    group.add_argument("-J", "--judged-only", action="store_true",
                       help=OPTION_HELP["judged_only"])
    group.add_argument("--idcg-zero", choices=IDCG_ZERO_POLICIES, default="zero",
                       help=OPTION_HELP["idcg_zero"] + " Default: zero.")
    group.add_argument("--trec-eval", choices=TREC_EVAL_VERSIONS, default="9.0.8",
                       dest="trec_eval", metavar="{9.0.8,10.0}",
                       help=OPTION_HELP["trec_eval"] + " Default: 9.0.8.")


def from_arguments(args: argparse.Namespace) -> EvalOptions:
    """The :class:`EvalOptions` of parsed arguments (see :func:`add_arguments`): each field
    from the argument of the same name (a namespace without it keeps the default)."""
    return EvalOptions(**{f.name: getattr(args, f.name) for f in fields(EvalOptions)
                          if hasattr(args, f.name)})
