"""Generate ``query_metadata.csv``: synthetic query metadata for the bundled sample data set.

Everything comes from one ``numpy.random.Generator`` seeded with ``SEED``; the script reads no
other input, so running it twice writes byte-identical files. Usage::

    python sample_data/make_metadata.py             # writes next to this file
    python sample_data/make_metadata.py --out DIR   # writes into DIR

One row per query (the wide layout of :func:`ireval_core.metadata.read_metadata`), sorted by
traffic, most frequent first, as a query-log export is:

* ``segment``: ``head`` (the 10 most frequent queries), ``torso`` (the next 20), ``tail``;
* ``intent`` (navigational / informational / transactional) and ``language`` (en / de / ja);
* ``traffic``: how many times the query was issued (a Zipf-like count), the traffic weight;
* ``latency_ms_<run>``: milliseconds each run of the sample took to answer the query:

  - ``bm25`` fast and steady (log-normal around 12 ms);
  - ``neural_rerank`` bm25's retrieval plus a reranking pass (around 60 ms more);
  - ``narrow_recall`` very fast on most queries (around 5 ms) with a few stalls of
    90-160 ms: its mean, hence its single-threaded queries per second, is close to bm25's,
    but its p95 and p99 are far worse. Throughput does not capture latency (seed 001).

Deliberate quirks: ``q058`` has no row (an evaluated query without metadata, shown as the
segment "(no metadata)"), and ``q031``, which ``narrow_recall`` does not answer, has no
``narrow_recall`` latency (an empty cell). ``q060`` (in the runs, not in the qrels) has a row.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 20240918
QUERIES = [f"q{i:03d}" for i in range(1, 61)]
NO_METADATA = "q058"  # evaluated, but the metadata file has no row for it
NOT_ANSWERED = {"narrow_recall": "q031"}  # the run does not answer this query: no latency
HEAD, TORSO = 10, 20  # the 10 most frequent queries are head, the next 20 torso, the rest tail
STALLS = 4  # narrow_recall queries that stall
SYSTEMS = ("bm25", "neural_rerank", "narrow_recall")
FILE = "query_metadata.csv"


def generate(out_dir: Path) -> Path:
    """Write ``query_metadata.csv`` into ``out_dir``; returns its path."""
    rng = np.random.default_rng(SEED)
    queries = [q for q in QUERIES if q != NO_METADATA]
    n = len(queries)
    rank = rng.permutation(n)  # 0 = the most frequent query
    traffic = np.floor(20_000 / (rank + 1) ** 1.2 + rng.integers(1, 20, size=n)).astype(int)
    segment = np.where(rank < HEAD, "head", np.where(rank < HEAD + TORSO, "torso", "tail"))
    intent = rng.choice(["informational", "navigational", "transactional"], size=n,
                        p=[0.6, 0.25, 0.15])
    language = rng.choice(["en", "de", "ja"], size=n, p=[0.7, 0.2, 0.1])
    bm25 = rng.lognormal(np.log(12.0), 0.35, size=n)
    neural = bm25 + rng.lognormal(np.log(60.0), 0.4, size=n)
    narrow = rng.lognormal(np.log(5.0), 0.3, size=n)
    stalls = rng.choice(n, size=STALLS, replace=False)
    narrow[stalls] += rng.uniform(90.0, 160.0, size=STALLS)
    latency = {"bm25": bm25, "neural_rerank": neural, "narrow_recall": narrow}
    header = ["query", "segment", "intent", "language", "traffic"] + [
        f"latency_ms_{s}" for s in SYSTEMS]
    lines = [",".join(header)]
    for i in np.argsort(rank, kind="stable"):  # most frequent first
        cells = [queries[i], str(segment[i]), str(intent[i]), str(language[i]), str(traffic[i])]
        cells += ["" if NOT_ANSWERED.get(s) == queries[i] else f"{latency[s][i]:.1f}"
                  for s in SYSTEMS]
        lines.append(",".join(cells))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / FILE
    path.write_text("\n".join(lines) + "\n", encoding="ascii", newline="\n")
    return path


def main(argv: list[str] | None = None) -> None:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="output directory (default: the directory of this script)")
    generate(parser.parse_args(argv).out)


if __name__ == "__main__":
    main()
