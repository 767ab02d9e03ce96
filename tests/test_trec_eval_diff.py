"""``diff <(trec_eval FLAGS q r) <(ireval eval --trec-eval V FLAGS q r)`` is empty, for both
trec_eval builds, over the grid of trec_eval's options.

trec_eval 9.0.8 and 10.0 are built from source (``trec_eval_9`` / ``trec_eval_10``, see
``trec_eval_oracle.py``) and run on seeded random data; ``python -m ireval_core eval`` is
called in-process (:func:`ireval_core.cli.main`) with the same flags plus ``--trec-eval V``.
Their outputs must be equal byte for byte: every per-query line, ``runid``, ``num_q``,
every ``all`` line (trec_eval's own mean: the per-query doubles summed in its query order
and divided by its number of queries, gm_* through log/exp) and every ``-nan``.

The data (:func:`dataset`): qrels graded 0-4 with ``-1`` grades (pooled, unjudged), query
ids of 1-5 digits (byte order differs from numeric order), document ids of varying length,
tied scores (multiples of 1/8) beside distinct ones, queries with no relevant document,
queries judged but not ranked and ranked but not judged, rankings of unjudged documents
only (empty under ``-J``: trec_eval's ``-nan``), rankings of 1-3 documents and of up to
120, 16, 32 or 40 queries on both sides (so that means fall on half units of the 4th
decimal) and three runs, one file each, one missing two more judged queries (trec_eval
is run once per file, ireval once with all of them, the outputs concatenated: every
measure set prints ``runid``, which tells the runs apart in both).

The grid (:func:`grid`), for each version: ``-q`` or not, ``-c`` or not, ``-l1``/``-l2``,
no ``-M``/``-M1``/``-M20``, ``-J`` or not, ``-N`` (none or 500; trec_eval's utility uses
it) and the measures: no ``-m`` (trec_eval's default, ``official``), ``-m all_trec``,
``-m official``, and parameterised measures (``P.5,7``, ``ndcg_cut.3,10``,
``iprec_at_recall..1,.35``, ``utility.2,-1,-0.5,0.01``, ...; 10.0 adds ``rbp.p=0.8`` and
``unj.3``). trec_eval 10.0 without ``-c`` stops (exit 4) when a judged query has no
ranking: those cases give both programs the qrels of the queries every run answers.

The suite runs a seeded sample of the grid (``SAMPLE`` cases of each version over two data
sets, a few seconds a version). The whole grid over more data sets is behind an environment
variable, for a release (about 2 minutes of CPU a data set)::

    IREVAL_TREC_DIFF_FULL=4 python -m pytest tests/test_trec_eval_diff.py

(``IREVAL_TREC_DIFF_FULL=N``: every grid case on each of N data sets, seeds 0 to N − 1).
"""

from __future__ import annotations

import difflib
import io
import itertools
import os
import random
from collections.abc import Iterator
from contextlib import redirect_stderr
from dataclasses import dataclass
from pathlib import Path

import pytest
from trec_eval_oracle import run, write_qrels

from ireval_core.cli import main

Nested = dict[str, dict[str, float]]

SAMPLE = 40  # grid cases per version in the suite (the grid has 384)
SUITE_DATASETS = 2  # the sample's cases are spread over this many data sets
_FULL = os.environ.get("IREVAL_TREC_DIFF_FULL", "")
FULL_DATASETS = int(_FULL) if _FULL.isdigit() else (4 if _FULL else 0)

PARAMS = ["-m", "P.5,7", "-m", "ndcg_cut.3,10", "-m", "recall.2,20", "-m", "map_cut.5",
          "-m", "iprec_at_recall..1,.35,.5", "-m", "11pt_avg..25,.5,.75",
          "-m", "utility.2,-1,-0.5,0.01", "-m", "success.1,3", "-m", "Rprec_mult.0.5,1.5",
          "-m", "ndcg.1=2,2=5", "-m", "set_F.0.5", "-m", "relative_P.3", "-m", "relstring.5",
          "-m", "gm_map", "-m", "num_ret", "-m", "runid"]
PARAMS_10 = [*PARAMS, "-m", "rbp.p=0.8", "-m", "unj.3", "-m", "rbp_resid"]
MEASURE_SETS = ("default", "all_trec", "official", "params")


# ----------------------------------------------------------------------------- data


def _doc_id(rng: random.Random) -> str:
    n = rng.randint(1, 400)
    return rng.choice((f"d{n}", f"D{n}", f"doc-{n:05d}", f"x{n}", f"AP88{n}b", f"{n}"))


def _score(rng: random.Random) -> float:
    if rng.random() < 0.6:
        return rng.randint(0, 14) / 8  # ties
    return float(f"{rng.uniform(-3.0, 30.0):.4f}")  # distinct in float32 as in double


def dataset(seed: int) -> tuple[Nested, list[Nested]]:
    """Qrels and three runs (``{qid: {docid: value}}``) with the awkward cases of the
    module docstring.

    The queries both sides have number 16, 32 or 40 and the judged ones 4 or 8 more:
    means of such counts land on a half unit of the 4th decimal (P_20 over 40 queries is
    a multiple of 1/800), where the printed digit depends on the bits of the sum."""
    rng = random.Random(seed)
    n_both = rng.choice((16, 32, 40))
    kinds = (["no_relevant", "unjudged_only", "short", "short"]
             + [rng.choice(("normal",) * 5 + ("no_relevant", "unjudged_only", "short"))
                for _ in range(n_both - 4)]
             + ["qrels_only"] * rng.choice((4, 8)) + ["run_only"] * 3)
    rng.shuffle(kinds)
    qids: set[str] = set()
    while len(qids) < len(kinds):
        qids.add(str(rng.randint(1, 10 ** rng.randint(1, 5) - 1)))
    qrels: Nested = {}
    pools: dict[str, list[str]] = {}
    for qid, kind in zip(sorted(qids, key=lambda _: rng.random()), kinds, strict=True):
        pool: set[str] = set()
        while len(pool) < 150:
            pool.add(_doc_id(rng))
        docs = sorted(pool)
        rng.shuffle(docs)
        pools[qid] = docs
        if kind != "run_only":
            n_judged = rng.randint(1, 40)
            choices = (-1, 0, 0) if kind == "no_relevant" else (-1, 0, 0, 0, 1, 1, 2, 3, 4)
            qrels[qid] = {d: float(rng.choice(choices)) for d in docs[:n_judged]}
    kind_of = dict(zip(pools, kinds, strict=True))
    runs: list[Nested] = []
    for i in range(3):
        run_: Nested = {}
        for qid, kind in kind_of.items():
            # the last run misses two more judged queries (its -c mean differs)
            if kind == "qrels_only" or (i == 2 and kind == "normal" and rng.random() < 0.1):
                continue
            judged = list(qrels.get(qid, {}))
            if kind == "unjudged_only":
                chosen = rng.sample(pools[qid][len(judged):], rng.randint(1, 8))
            else:
                length = rng.randint(1, 3) if kind == "short" else rng.randint(1, 120)
                chosen = rng.sample(pools[qid], length)
            run_[qid] = {d: _score(rng) for d in chosen}
        runs.append(run_)
    return qrels, runs


def write_run(path: Path, run_: Nested, tag: str) -> Path:
    """A TREC run file, its lines in a shuffled order (trec_eval sorts them itself)."""
    lines = [f"{qid} Q0 {doc} {i} {score!r} {tag}\n" for qid, docs in run_.items()
             for i, (doc, score) in enumerate(docs.items())]
    random.Random(len(lines)).shuffle(lines)
    path.write_text("".join(lines), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- grid


@dataclass(frozen=True)
class Case:
    """One command: the version and trec_eval's flags."""

    version: str
    flags: tuple[str, ...]

    def __str__(self) -> str:
        return f"{self.version}[{' '.join(self.flags) or 'no flags'}]"


def grid(version: str) -> list[Case]:
    """Every combination of the options of the module docstring, for ``version``."""
    params = PARAMS_10 if version == "10.0" else PARAMS
    sets = {"default": [], "all_trec": ["-m", "all_trec"], "official": ["-m", "official"],
            "params": params}
    out = []
    for q, c, level, depth, judged, docs, measures in itertools.product(
            (False, True), (False, True), ("1", "2"), (None, "1", "20"), (False, True),
            (None, "500"), MEASURE_SETS):
        flags = [*(["-q"] if q else []), *(["-c"] if c else []), f"-l{level}",
                 *([f"-M{depth}"] if depth else []), *(["-J"] if judged else []),
                 *(["-N", docs] if docs else []), *sets[measures]]
        out.append(Case(version, tuple(flags)))
    return out


def sample(version: str, n: int, seed: int) -> list[Case]:
    """``n`` cases of the grid drawn with ``seed``, in grid order."""
    cases = grid(version)
    keep = sorted(random.Random(seed).sample(range(len(cases)), min(n, len(cases))))
    return [cases[i] for i in keep]


# ----------------------------------------------------------------------------- running


class Files:
    """A data set written once: the qrels (whole, and restricted to the queries every run
    answers) and one file per run."""

    def __init__(self, folder: Path, seed: int) -> None:
        qrels, runs = dataset(seed)
        folder.mkdir(parents=True, exist_ok=True)
        answered = set.intersection(*(set(r) for r in runs))
        self.qrels = write_qrels(folder / "qrels", qrels)
        self.qrels_answered = write_qrels(folder / "qrels.answered",
                                          {q: d for q, d in qrels.items() if q in answered})
        self.runs = [write_run(folder / f"run{i}", r, f"sys{i}") for i, r in enumerate(runs)]

    def qrels_for(self, case: Case) -> Path:
        """trec_eval 10.0 without -c stops on a judged query without a ranking."""
        if case.version == "10.0" and "-c" not in case.flags:
            return self.qrels_answered
        return self.qrels


def oracle_output(binary: Path, files: Files, case: Case) -> str:
    """What trec_eval prints for each run file, one after the other."""
    qrels = str(files.qrels_for(case))
    return "".join(run(binary, [*case.flags, qrels, str(r)]) for r in files.runs)


def ireval_output(files: Files, case: Case) -> str:
    """What ``eval --trec-eval V`` prints for all the run files (one in-process call)."""
    out = io.StringIO()
    with redirect_stderr(io.StringIO()):  # the warnings about the data go to stderr
        status = main(["eval", *case.flags, "--trec-eval", case.version,
                       str(files.qrels_for(case)), *map(str, files.runs)], out=out)
    if status != 0:
        raise AssertionError(f"ireval eval {case} exited {status}")
    return out.getvalue()


def differing(expected: str, got: str) -> list[str]:
    """The lines ``diff`` would print (``-`` trec_eval's, ``+`` ireval's)."""
    return [line for line in difflib.unified_diff(expected.splitlines(), got.splitlines(),
                                                  lineterm="", n=0)
            if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def check(binary: Path, files: Files, cases: list[Case]) -> tuple[int, list[str]]:
    """(lines compared, a report of every case whose outputs differ)."""
    compared, report = 0, []
    for case in cases:
        expected = oracle_output(binary, files, case)
        lines = differing(expected, ireval_output(files, case))
        compared += expected.count("\n")
        if lines:
            report.append(f"{case}: {len(lines)} lines differ, e.g.\n  " +
                          "\n  ".join(lines[:6]))
    return compared, report


def _batches(version: str, n_datasets: int, full: bool) -> Iterator[tuple[int, list[Case]]]:
    """(data set seed, its cases): the sample spread over the data sets, or the whole grid
    on each."""
    if full:
        for seed in range(n_datasets):
            yield seed, grid(version)
        return
    cases = sample(version, SAMPLE, seed=30 if version == "10.0" else 9)
    for seed in range(n_datasets):
        yield seed, cases[seed::n_datasets]


# ----------------------------------------------------------------------------- tests


def test_the_grid_holds_every_combination() -> None:
    """2 (-q) x 2 (-c) x 2 (-l) x 3 (-M) x 2 (-J) x 2 (-N) x 4 measure sets, distinct."""
    for version in ("9.0.8", "10.0"):
        cases = grid(version)
        assert len(cases) == len(set(cases)) == 2 * 2 * 2 * 3 * 2 * 2 * 4
        suite = [c for _, batch in _batches(version, SUITE_DATASETS, False) for c in batch]
        assert len(set(suite)) == SAMPLE
        # the sample has every value of every option, and each measure set with -J and -c
        flags = {f for c in suite for f in c.flags}
        assert {"-q", "-c", "-l1", "-l2", "-M1", "-M20", "-J", "-N", "all_trec",
                "official", "P.5,7"} <= flags
        assert any(not any(f.startswith("-M") for f in c.flags) for c in suite)
        for measures in (("all_trec",), ("official",), ("P.5,7",), ()):
            chosen = [c for c in suite if set(measures) <= set(c.flags)
                      and (measures or "-m" not in c.flags)]
            assert any("-J" in c.flags for c in chosen)
            assert any("-c" in c.flags for c in chosen)


@pytest.mark.parametrize("seed", range(SUITE_DATASETS))
def test_the_data_has_every_awkward_case(seed: int) -> None:
    qrels, runs = dataset(seed)
    ranked = set.union(*(set(r) for r in runs))
    assert set(qrels) - ranked and ranked - set(qrels)  # missing on either side
    assert any(all(qrels.get(q, {}).get(d, -1) < 0 for d in docs)
               for r in runs for q, docs in r.items() if q in qrels)  # empty under -J
    assert {len(q) for q in qrels} >= {1, 2, 3, 4}
    assert any(g == -1 for docs in qrels.values() for g in docs.values())
    assert any(len(set(docs.values())) < len(docs) for r in runs for docs in r.values())


@pytest.mark.parametrize("version", ["9.0.8", "10.0"])
def test_diff_is_empty(version: str, request: pytest.FixtureRequest,
                       tmp_path: Path) -> None:
    binary = request.getfixturevalue("trec_eval_10" if version == "10.0" else "trec_eval_9")
    full = FULL_DATASETS > 0
    compared, report = 0, []
    for seed, cases in _batches(version, FULL_DATASETS or SUITE_DATASETS, full):
        n, bad = check(binary, Files(tmp_path / str(seed), seed), cases)
        compared += n
        report.extend(f"data set {seed}, {line}" for line in bad)
    assert compared > 10_000
    assert not report, f"{len(report)} cases differ:\n" + "\n".join(report[:20])
