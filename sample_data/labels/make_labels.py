"""Generate the synthetic monthly-labeling sample: six rounds of labeled result lists.

Everything comes from ``numpy.random.default_rng`` seeded with ``SEED`` (one generator
per query, seeded with ``(SEED, query number)``, and one per round); the script reads no
other input, so running it twice writes byte-identical files. Usage::

    python sample_data/labels/make_labels.py             # writes next to this file
    python sample_data/labels/make_labels.py --out DIR   # writes into DIR

What it models (see ``sample_data/README.md``, section "Monthly labeling"):

* six monthly rounds ``2026-05`` ... ``2026-10``, 150 sampled queries each: 40 *head*
  queries sampled every month, 60 *torso* queries drawn from a pool of 240, and 50 fresh
  *tail* queries; sampling weights 3 (head), 1.5 (torso), 1 (tail);
* two systems (buckets) ``control`` and ``treatment`` serving the same sampled queries;
  each ranks the query's 30 candidate documents by a model score (a noisy function of the
  document's hidden true grade) and shows the top 10; ``treatment`` is a little sharper;
* three raters ``ann``, ``bo``, ``chen``; every shown (query, document) of a round is
  labeled by one to three of them (about 3% by nobody: unlabeled); a rater's label is the
  true grade, off by one grade about one time in six; labels are written
  ``none/low/mid/high``;
* planted event 1 (``2026-08``): recall breaks for ``treatment``: its candidates lose every
  document of true grade >= 2, so its lists hold only none/low results, still well ordered
  by its scores (DCG@10 and the share of mid/high fall, AUC/PNR stay high);
* planted event 2 (``2026-09``): rater ``chen`` drifts: half of the labels are a uniform
  guess among the four grades (agreement with the other raters drops; DCG hardly moves,
  since a guess is as often too high as too low);
* a model judge ``llm`` labels every shown document of every round (``judge_llm.csv``, the
  labeling layout), with a planted bias toward ``treatment``: it adds a grade, six times
  in ten, to the documents only ``treatment`` shows;
* anchor items (``anchors.csv``): 50 fixed (query, document) pairs labeled by the three
  raters every month, with a planted drift: in ``2026-07`` they label them stricter.

The judge and the anchors come from generators of their own and sit in files of their
own, so the people's files (and every number computed from them) are as they were.

Files: ``labels_<round>.csv`` (one per month), ``gsb.csv`` (side-by-side preference
judgments of ``treatment`` against ``control``), ``judge_llm.csv``, ``anchors.csv``.
"""

from __future__ import annotations

import argparse
import csv
from pathlib import Path

import numpy as np

SEED = 20260501
ROUNDS = ("2026-05", "2026-06", "2026-07", "2026-08", "2026-09", "2026-10")
SYSTEMS = ("control", "treatment")
RATERS = ("ann", "bo", "chen")
WORDS = ("none", "low", "mid", "high")
SHOWN = 10
CANDIDATES = 30
N_HEAD, N_TORSO, N_TORSO_POOL, N_TAIL = 40, 60, 240, 50
WEIGHTS = {"head": 3.0, "torso": 1.5, "tail": 1.0}
GRADE_PROBS = {"head": (0.30, 0.30, 0.25, 0.15), "torso": (0.40, 0.30, 0.20, 0.10),
               "tail": (0.50, 0.30, 0.14, 0.06)}
NOISE = {"control": 0.30, "treatment": 0.25}  # sd of the model-score noise
RECALL_BREAK = ("2026-08", "treatment")
DRIFT = ("2026-09", "chen")
JUDGE, JUDGE_FAVOURS, JUDGE_BIAS = "llm", "treatment", 0.6
ANCHOR_DRIFT = "2026-07"
N_ANCHOR_QUERIES = 25  # two anchor documents from each of q0001..q0025
COLUMNS = ("round", "system", "query", "doc", "position", "rater", "label", "score",
           "segment", "weight")


def query_number(qid: str) -> int:
    return int(qid[1:])


def candidates(qid: str, segment: str) -> tuple[list[str], np.ndarray]:
    """The query's candidate documents and their hidden true grades (fixed per query)."""
    rng = np.random.default_rng([SEED, query_number(qid)])
    grades = rng.choice(4, size=CANDIDATES, p=GRADE_PROBS[segment])
    docs = [f"d{query_number(qid):04d}{i:02d}" for i in range(CANDIDATES)]
    return docs, grades


def sample_queries(round_index: int, rng: np.random.Generator) -> list[tuple[str, str]]:
    """(query id, segment) of one round: every head query, some torso, fresh tail."""
    head = [(f"q{i:04d}", "head") for i in range(1, N_HEAD + 1)]
    pool = np.arange(101, 101 + N_TORSO_POOL)
    torso = [(f"q{i:04d}", "torso") for i in sorted(rng.choice(pool, N_TORSO, replace=False))]
    start = 1001 + round_index * N_TAIL
    tail = [(f"q{i:04d}", "tail") for i in range(start, start + N_TAIL)]
    return head + torso + tail


def rater_label(true: int, rater: str, round_name: str, rng: np.random.Generator) -> int:
    u = rng.random()
    if (round_name, rater) == DRIFT:  # careless: guesses unless the result is perfect
        return int(rng.integers(0, 4)) if true < 3 and u < 0.6 else true
    if u < 0.05:
        return int(np.clip(true + rng.choice((-1, 1)), 0, 3))
    return true


Shown = dict[str, list[tuple[int, int, float]]]  # system -> (candidate, position, score)
ListsOfQuery = tuple[str, str, list[str], np.ndarray, Shown]  # qid, segment, docs, grades


def make_round(round_index: int, round_name: str,
               lists: list[ListsOfQuery] | None = None) -> list[tuple[str, ...]]:
    """The people's rows of one round; ``lists`` (when given) collects every query's shown
    lists for the model judge (:func:`make_judge`), without drawing anything more."""
    rng = np.random.default_rng([SEED, 1_000_000 + round_index])
    rows: list[tuple[str, ...]] = []
    for qid, segment in sample_queries(round_index, rng):
        docs, grades = candidates(qid, segment)
        shown: dict[str, list[tuple[int, int, float]]] = {}
        for system in SYSTEMS:
            raw = grades + rng.normal(0.0, NOISE[system], CANDIDATES)
            allowed = np.ones(CANDIDATES, dtype=bool)
            if (round_name, system) == RECALL_BREAK:
                allowed = grades < 2  # the good documents are no longer retrieved
            idx = np.flatnonzero(allowed)
            top = idx[np.argsort(-raw[idx], kind="stable")][:SHOWN]
            score = 1.0 / (1.0 + np.exp(-(raw - 1.5)))
            shown[system] = [(int(d), pos, float(score[d])) for pos, d in enumerate(top, 1)]
        if lists is not None:
            lists.append((qid, segment, docs, grades, shown))
        # every distinct shown document is one unit, labeled by 0-3 raters
        units = sorted({d for system in SYSTEMS for d, _, _ in shown[system]})
        labels: dict[int, list[tuple[str, int]]] = {}
        for d in units:
            n = rng.choice(4, p=(0.03, 0.40, 0.33, 0.24))
            who = sorted(rng.choice(len(RATERS), size=n, replace=False))
            labels[d] = [(RATERS[r], rater_label(int(grades[d]), RATERS[r], round_name, rng))
                         for r in who]
        for system in SYSTEMS:
            for d, pos, score in shown[system]:
                common = (round_name, system, qid, docs[d], str(pos))
                tail = (f"{score:.4f}", segment, f"{WEIGHTS[segment]:g}")
                if not labels[d]:
                    rows.append((*common, "", "", *tail))
                for rater, grade in labels[d]:
                    rows.append((*common, rater, WORDS[grade], *tail))
    return rows


def make_judge(round_index: int, round_name: str, lists: list[ListsOfQuery]
               ) -> list[tuple[str, ...]]:
    """The model judge's rows of one round: it labels every shown document once.

    Its label is the true grade, one grade off one time in ten, a grade higher one time
    in ten when the result is not perfect (model judges overrate), and -- the planted
    bias -- a grade higher with probability 0.6 when the document is one only
    ``treatment`` showed (and not perfect): the judge favours what ``treatment``
    retrieves. Rows are listed under every system that showed the document, like the
    people's.
    """
    rng = np.random.default_rng([SEED, 3_000_000 + round_index])
    rows: list[tuple[str, ...]] = []
    for qid, segment, docs, grades, shown in lists:
        by_system = {system: {d for d, _, _ in shown[system]} for system in SYSTEMS}
        only_favoured = by_system[JUDGE_FAVOURS] - set().union(
            *(v for k, v in by_system.items() if k != JUDGE_FAVOURS))
        label: dict[int, int] = {}
        for d in sorted(set().union(*by_system.values())):
            true = int(grades[d])
            u = rng.random(3)
            grade = true
            if u[0] < 0.10:
                grade += 1 if u[0] < 0.05 else -1
            if true < 3 and u[1] < 0.10:
                grade += 1
            if d in only_favoured and true < 3 and u[2] < JUDGE_BIAS:
                grade += 1
            label[d] = int(np.clip(grade, 0, 3))
        for system in SYSTEMS:
            for d, pos, score in shown[system]:
                rows.append((round_name, system, qid, docs[d], str(pos), JUDGE,
                             WORDS[label[d]], f"{score:.4f}", segment,
                             f"{WEIGHTS[segment]:g}"))
    return rows


def make_anchors() -> list[tuple[str, ...]]:
    """Anchor items: the same 50 (query, document) pairs labeled by the three raters every
    month. Planted drift: in ``ANCHOR_DRIFT`` every rater labels them stricter (a label
    above none is one grade lower six times in ten). ``chen`` guesses in ``DRIFT`` as in
    the people's files."""
    rng = np.random.default_rng([SEED, 4_000_000])
    items = []
    for q in range(1, N_ANCHOR_QUERIES + 1):
        qid = f"q{q:04d}"
        docs, grades = candidates(qid, "head")
        for i in sorted(rng.choice(CANDIDATES, size=2, replace=False)):
            items.append((qid, docs[i], int(grades[i])))
    rows: list[tuple[str, ...]] = []
    for r, round_name in enumerate(ROUNDS):
        rng = np.random.default_rng([SEED, 4_000_001 + r])
        for qid, doc, true in items:
            for rater in RATERS:
                grade = rater_label(true, rater, round_name, rng)
                if round_name == ANCHOR_DRIFT and grade > 0 and rng.random() < 0.6:
                    grade -= 1
                rows.append((round_name, qid, doc, rater, WORDS[grade]))
    return rows


def make_gsb() -> list[tuple[str, ...]]:
    """Side by side: a rater sees treatment's and control's lists for one query and says
    which is better: G (treatment better), S (same), B (treatment worse)."""
    probs = {"normal": (0.36, 0.44, 0.20), "broken": (0.08, 0.27, 0.65)}
    rows: list[tuple[str, ...]] = []
    for i, round_name in enumerate(ROUNDS):
        rng = np.random.default_rng([SEED, 2_000_000 + i])
        p = probs["broken" if round_name == RECALL_BREAK[0] else "normal"]
        for q in range(1, 81):
            qid = f"q{q:04d}" if q <= N_HEAD else f"q{100 + q:04d}"
            for rater in sorted(rng.choice(RATERS, size=rng.choice((1, 2)), replace=False)):
                rows.append((round_name, qid, "GSB"[rng.choice(3, p=p)], str(rater)))
    return rows


def write_csv(path: Path, header: tuple[str, ...], rows: list[tuple[str, ...]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    judge: list[tuple[str, ...]] = []
    for i, round_name in enumerate(ROUNDS):
        lists: list[ListsOfQuery] = []
        write_csv(args.out / f"labels_{round_name}.csv", COLUMNS,
                  make_round(i, round_name, lists))
        judge += make_judge(i, round_name, lists)
    write_csv(args.out / "judge_llm.csv", COLUMNS, judge)
    write_csv(args.out / "anchors.csv", ("round", "query", "doc", "rater", "label"),
              make_anchors())
    write_csv(args.out / "gsb.csv", ("round", "query", "judgment", "rater"), make_gsb())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
