"""Generate the synthetic ireval sample data set: one qrels file and three TREC runs.

Everything comes from one ``numpy.random.Generator`` seeded with ``SEED``; the script reads no
other input, so running it twice writes byte-identical files. Usage::

    python sample_data/make_sample.py             # writes next to this file
    python sample_data/make_sample.py --out DIR   # writes into DIR

Each query gets a judged pool (grades 0-3, a few -1 = pooled but not judged) plus unjudged
corpus documents. The three systems score documents from a hidden true grade plus noise:

* ``bm25``          moderate quality, 100 docs, some unjudged docs near the top;
* ``neural_rerank`` stronger: retrieves more relevant docs and ranks them higher;
* ``narrow_recall`` a short list holding one or two low-grade relevant docs, well ordered, so
  nDCG with the ideal taken from its own list looks high while DCG, nDCG (qrels ideal) and
  recall collapse (the DCG vs nDCG argument of seed 003).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 20240917
N_JUDGED_QUERIES = 59  # q001..q059 have qrels
RUN_ONLY_QUERY = "q060"  # in every run, absent from the qrels
NO_RELEVANT = ("q017", "q042")  # judged pool, but every grade is 0
POOLED_NOT_JUDGED = ("q008", "q023", "q047")  # hold a few grade -1 docs
MISSING_FROM_NARROW = "q031"  # in the qrels, absent from run_narrow
TIES = {"bm25": ("q012", 3), "neural_rerank": ("q027", 1)}  # (query, rank) tied with rank + 1
GRADE_PROBS = (0.55, 0.30, 0.15)  # P(grade 1, 2, 3) for a relevant doc
N_UNJUDGED = 150  # unjudged corpus docs available to the runs, per query
DEPTH = 100  # length of the bm25 and neural runs

Topic = tuple[dict[str, int], list[str]]  # (judged pool docid -> grade, unjudged docids)


def make_topic(rng: np.random.Generator, qid: str, corpus: np.ndarray) -> Topic:
    """Draw the judged pool (with grades) and the unjudged candidates of one query."""
    n_judged = int(rng.integers(30, 81))
    docs = [str(d) for d in rng.choice(corpus, size=n_judged + N_UNJUDGED, replace=False)]
    judged, unjudged = docs[:n_judged], docs[n_judged:]
    grades = np.zeros(n_judged, dtype=int)
    if qid not in NO_RELEVANT:
        n_rel = int(rng.integers(3, 21))
        grades[:n_rel] = rng.choice([1, 2, 3], size=n_rel, p=GRADE_PROBS)
    if qid in POOLED_NOT_JUDGED:
        grades[-int(rng.integers(2, 5)) :] = -1
    return dict(zip(judged, (int(g) for g in grades), strict=True)), unjudged


def true_gain(rng: np.random.Generator, grade: int) -> int:
    """Hidden relevance used for scoring; a -1 doc is secretly a 0 or a 1."""
    return int(rng.integers(0, 2)) if grade < 0 else grade


def broad_run(
    rng: np.random.Generator, topic: Topic, p_rel: float, weight: float, unjudged_penalty: float
) -> dict[str, float]:
    """Score a 100-doc run of a system of given recall (p_rel) and sharpness (weight).

    Each relevant doc is retrieved with probability p_rel, each other judged doc with
    probability 0.8, the rest is filled with unjudged docs; score = weight * grade + N(0, 1)
    noise, minus a penalty for unjudged docs (they were not pooled for a reason).
    """
    grades, unjudged = topic
    scores: dict[str, float] = {}
    for doc, grade in grades.items():
        if rng.random() < (p_rel if grade > 0 else 0.8):
            scores[doc] = weight * true_gain(rng, grade) + rng.normal()
    for doc in unjudged[: DEPTH - len(scores)]:
        scores[doc] = rng.normal() - unjudged_penalty
    return scores


def narrow_run(rng: np.random.Generator, topic: Topic) -> dict[str, float]:
    """Score 10-20 docs: one or two of the lowest-graded relevant docs, then junk, well ordered."""
    grades, unjudged = topic
    relevant = [str(d) for d in rng.permutation(sorted(d for d, g in grades.items() if g > 0))]
    relevant.sort(key=lambda d: grades[d])  # stable: random order within a grade
    junk = [str(d) for d in rng.permutation(sorted(d for d, g in grades.items() if g == 0))]
    length = int(rng.integers(10, 21))
    picked = relevant[: int(rng.integers(1, 3))]
    picked += junk[: length - len(picked) - 3] + unjudged[:3]
    return {doc: max(grades.get(doc, 0), 0) + 0.25 * rng.normal() for doc in picked}


def ranked_lines(
    qid: str, scores: dict[str, float], decimals: int, tag: str, tie_rank: int | None = None
) -> list[str]:
    """Format TREC run lines, ranked by score descending then docid descending (trec_eval order).

    Scores are rounded to ``decimals`` and kept strictly decreasing, except that the score at
    1-based ``tie_rank`` is copied onto the next doc to create one deliberate tie.
    """
    order = sorted(scores, key=lambda d: (scores[d], d), reverse=True)
    step = 10.0**-decimals
    rounded: list[float] = []
    for doc in order:
        value = round(scores[doc], decimals)
        if rounded and value >= rounded[-1]:
            value = round(rounded[-1] - step, decimals)
        rounded.append(value)
    if tie_rank is not None:
        rounded[tie_rank] = rounded[tie_rank - 1]
    ranked = sorted(
        zip(order, rounded, strict=True), key=lambda pair: (pair[1], pair[0]), reverse=True
    )
    return [
        f"{qid} Q0 {doc} {rank} {score:.{decimals}f} {tag}"
        for rank, (doc, score) in enumerate(ranked, start=1)
    ]


def tie_for(tag: str, qid: str) -> int | None:
    """Return the rank of the deliberate tie of this system in this query, if any."""
    tie_qid, rank = TIES.get(tag, ("", 0))
    return rank if qid == tie_qid else None


def generate(out_dir: Path) -> None:
    """Write qrels.txt, run_bm25.txt, run_neural.txt and run_narrow.txt into out_dir."""
    rng = np.random.default_rng(SEED)
    corpus = np.array([f"d{n:07d}" for n in rng.choice(10_000_000, size=40_000, replace=False)])
    qids = [f"q{i:03d}" for i in range(1, N_JUDGED_QUERIES + 1)] + [RUN_ONLY_QUERY]
    qrels: list[str] = []
    runs: dict[str, list[str]] = {"bm25": [], "neural_rerank": [], "narrow_recall": []}
    for qid in qids:
        topic = make_topic(rng, qid, corpus)
        if qid != RUN_ONLY_QUERY:
            qrels += [f"{qid} 0 {doc} {grade}" for doc, grade in sorted(topic[0].items())]
        bm25 = broad_run(rng, topic, p_rel=0.7, weight=0.8, unjudged_penalty=1.0)
        neural = broad_run(rng, topic, p_rel=0.88, weight=1.3, unjudged_penalty=1.5)
        narrow = narrow_run(rng, topic)
        bm25 = {doc: 18.0 + 3.0 * s for doc, s in bm25.items()}  # BM25-like magnitudes
        neural = {doc: float(1.0 / (1.0 + np.exp(-s))) for doc, s in neural.items()}  # (0, 1)
        runs["bm25"] += ranked_lines(qid, bm25, 4, "bm25", tie_for("bm25", qid))
        runs["neural_rerank"] += ranked_lines(
            qid, neural, 6, "neural_rerank", tie_for("neural_rerank", qid)
        )
        if qid != MISSING_FROM_NARROW:
            runs["narrow_recall"] += ranked_lines(qid, narrow, 5, "narrow_recall")
    files = {
        "qrels.txt": qrels,
        "run_bm25.txt": runs["bm25"],
        "run_neural.txt": runs["neural_rerank"],
        "run_narrow.txt": runs["narrow_recall"],
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, lines in files.items():
        (out_dir / name).write_text("\n".join(lines) + "\n", encoding="ascii", newline="\n")


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="output directory (default: the directory of this script)",
    )
    generate(parser.parse_args(argv).out)


if __name__ == "__main__":
    main()
