"""Write ``query_log.csv``: a synthetic month's query log for the sample runs.

One row per query ``q001``…``q060`` (the sample runs' queries): ``count``, its searches
this month, from a Zipf-like law (the query at popularity rank r gets about
20000 / r^1.1 searches, times a lognormal factor), the ranks shuffled over the ids; and
``segment``, ``app`` or ``web`` (about 40% app). Seeded (``SEED``); no other input, so
every run writes the same bytes.

    .venv/bin/python sample_data/make_query_log.py             # writes next to the script
    .venv/bin/python sample_data/make_query_log.py --out DIR   # writes into DIR
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

SEED = 20261101
N_QUERIES = 60


def query_log() -> str:
    """The log's CSV text."""
    rng = np.random.default_rng(SEED)
    rank = rng.permutation(N_QUERIES) + 1
    counts = np.maximum(1, np.round(20000 / rank**1.1 * rng.lognormal(0.0, 0.3, N_QUERIES)))
    segment = np.where(rng.random(N_QUERIES) < 0.4, "app", "web")
    lines = ["query,count,segment"]
    lines += [f"q{i + 1:03d},{int(c)},{s}"
              for i, (c, s) in enumerate(zip(counts, segment, strict=True))]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    (out / "query_log.csv").write_text(query_log(), encoding="utf-8")


if __name__ == "__main__":
    main()
