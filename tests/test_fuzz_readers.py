"""Fuzzing the readers: mutated bytes of valid files either read or fail with a FormatError.

Seeds are small valid files of every format (TREC qrels and run, CSV, TSV, Parquet,
JSON, and gzip of each). Mutations flip, insert and delete bytes, truncate,
duplicate and swap lines, change line endings to CR or CRLF, and inject NULs, huge
numbers, quotes, tabs and bytes that are not UTF-8. Every mutated input goes to
both :func:`read_qrels` and :func:`read_runs`; the only outcomes allowed are

* a data set whose ids are non-empty one-line strings and whose values are finite, or
* a :class:`FormatError` naming the file, holding no chained exception, and not the
  reader's "this is a bug" fallback.

The suite runs a bounded Hypothesis search (well under a minute). A larger one-off
run, outside the suite, prints the counts::

    PYTHONPATH=. .venv/bin/python tests/test_fuzz_readers.py 5000
"""

from __future__ import annotations

import gzip
import io
import json
import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ireval_core import FormatError, read_qrels, read_runs
from ireval_core.data import Qrels, Run
from ireval_core.io import ReadLimits

LIMITS = ReadLimits(max_inflated_bytes=8 * 1024**2, max_gzip_ratio=200)
EXAMPLES = 5000  # about 10 s on the shared 2-core machine (< 60 s under load)


def _seeds() -> dict[str, bytes]:
    qrels = [("q1", "d1", 1), ("q1", "d2", 0), ("q1", "007", 2), ("q2", "d1", 3),
             ("q2", "d9", -1), ("0042", "d3", 1)]
    run = [("q1", "d2", 1, 0.5, "bm25"), ("q1", "d1", 2, 0.5, "bm25"),
           ("q1", "d7", 3, 0.25, "bm25"), ("q2", "d9", 1, 3.0, "bm25"),
           ("q1", "d1", 1, 1.5, "neural"), ("0042", "d3", 1, 2.0, "neural")]
    out = {
        "qrels.txt": "".join(f"{q} 0 {d} {g}\n" for q, d, g in qrels).encode(),
        "run.txt": "".join(f"{q} Q0 {d} {r} {s} {t}\n" for q, d, r, s, t in run).encode(),
        "qrels.csv": ("qid,docid,rel\n" + "".join(f"{q},{d},{g}\n" for q, d, g in qrels)).encode(),
        "run.csv": ("qid,docid,score,tag\n"
                    + "".join(f"{q},{d},{s},{t}\n" for q, d, _, s, t in run)).encode(),
        "qrels.tsv": ("query_id\tdoc_id\tlabel\n"
                      + "".join(f"{q}\t{d}\t{g}\n" for q, d, g in qrels)).encode(),
        "run.tsv": ("qid\tdocno\trank\n" + "".join(f"{q}\t{d}\t{r}\n" for q, d, r, _, t in run
                                                   if t == "bm25")).encode(),
        "qrels.json": json.dumps({q: {d: g for qq, d, g in qrels if qq == q}
                                  for q, _, _ in qrels}).encode(),
        "run.json": json.dumps({q: {d: s for qq, d, _, s, t in run if qq == q and t == "bm25"}
                                for q, _, _, _, t in run if t == "bm25"}).encode(),
    }
    for name, rows, cols in (("qrels.parquet", qrels, ("qid", "docid", "rel")),
                             ("run.parquet", [(q, d, s, t) for q, d, _, s, t in run],
                              ("query", "doc_id", "score", "run"))):
        buf = io.BytesIO()
        pq.write_table(pa.table({c: [r[i] for r in rows] for i, c in enumerate(cols)}), buf)
        out[name] = buf.getvalue()
    return out


SEEDS = _seeds()

TOKENS = [b"\0", b"\r", b"\r\n", b"\n", b"\t", b" ", b"  ", b'"', b",", b"\xff", b"\xc3",
          b"\xe2\x80\xa8", b"\xc2\x85", b"\x0b", b"9" * 400, b"1e400", b"-inf", b"nan", b"1_0",
          b"true", b"NA", b"\x1f\x8b", b"PAR1", b"{", b"}", b"[" * 50, b"\xef\xbb\xbf", b"007",
          b"qid", b"Q0", b'"a\nb"', b"\\u0000", b"1" * 30]


def _flip(data: bytes, rnd: random.Random) -> bytes:
    if not data:
        return data
    i = rnd.randrange(len(data))
    return data[:i] + bytes([data[i] ^ (1 << rnd.randrange(8))]) + data[i + 1:]


def _insert_token(data: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + rnd.choice(TOKENS) + data[i:]


def _insert_bytes(data: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + rnd.randbytes(rnd.randint(1, 8)) + data[i:]


def _delete(data: bytes, rnd: random.Random) -> bytes:
    if not data:
        return data
    i = rnd.randrange(len(data))
    return data[:i] + data[i + rnd.randint(1, 16):]


def _truncate(data: bytes, rnd: random.Random) -> bytes:
    return data[: rnd.randrange(len(data) + 1)]


def _duplicate_line(data: bytes, rnd: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if not lines:
        return data
    i = rnd.randrange(len(lines))
    return b"".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])


def _swap_lines(data: bytes, rnd: random.Random) -> bytes:
    lines = data.splitlines(keepends=True)
    if len(lines) < 2:
        return data
    i, j = rnd.sample(range(len(lines)), 2)
    lines[i], lines[j] = lines[j], lines[i]
    return b"".join(lines)


def _line_endings(data: bytes, rnd: random.Random) -> bytes:
    return data.replace(b"\n", rnd.choice([b"\r", b"\r\n", b"\n\n", b"\r\r\n"]))


def _replace_field(data: bytes, rnd: random.Random) -> bytes:
    fields = list(re.finditer(rb"[^\s,\"{}:]+", data))
    if not fields:
        return data
    m = rnd.choice(fields)
    return data[: m.start()] + rnd.choice(TOKENS) + data[m.end():]


def _inject_nul(data: bytes, rnd: random.Random) -> bytes:
    i = rnd.randrange(len(data) + 1)
    return data[:i] + b"\0" * rnd.randint(1, 3) + data[i:]


MUTATIONS: list[Callable[[bytes, random.Random], bytes]] = [
    _flip, _insert_token, _insert_bytes, _delete, _truncate, _duplicate_line, _swap_lines,
    _line_endings, _replace_field, _inject_nul]

_BAD_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def mutated_input(seed: str, rnd: random.Random) -> tuple[bytes, str]:
    """One fuzz case: mutated bytes and the name they are read under."""
    data = SEEDS[seed]
    mode = rnd.choice(["plain", "plain", "gzip-after", "gzip-before"])
    if mode == "gzip-before":  # a valid gzip of a mutated file
        for _ in range(rnd.randint(1, 4)):
            data = rnd.choice(MUTATIONS)(data, rnd)
        data = gzip.compress(data, mtime=0)
    else:
        if mode == "gzip-after":  # a mutated gzip stream
            data = gzip.compress(data, mtime=0)
        for _ in range(rnd.randint(1, 4)):
            data = rnd.choice(MUTATIONS)(data, rnd)
    name = seed + (".gz" if mode != "plain" else "") if rnd.random() < 0.8 else "upload"
    return data, name


def outcome(reader: Callable[..., object], data: bytes, name: str) -> str:
    """``"accepted"`` or ``"format-error"``; any other outcome raises AssertionError."""
    try:
        result = reader(data, name=name, limits=LIMITS)
    except FormatError as err:
        assert type(err) is FormatError, repr(err)
        assert err.source == name, str(err)
        assert err.__context__ is None and err.__cause__ is None
        assert "bug in ireval" not in err.message, str(err)
        assert "\n" not in str(err), str(err)
        return "format-error"
    datasets = result if isinstance(result, list) else [result]
    assert datasets and all(isinstance(d, Qrels | Run) for d in datasets)
    for d in datasets:
        ids = list(d.query_ids) + d.doc_ids.to_pylist()
        assert all(isinstance(i, str) and i and not _BAD_CHAR.search(i) for i in ids), ids
        values = d.grade if isinstance(d, Qrels) else d.score
        assert np.isfinite(values).all()
        assert len(values) > 0
        if isinstance(d, Run):
            assert d.name and not _BAD_CHAR.search(d.name)
    return "accepted"


@settings(max_examples=EXAMPLES, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(seed=st.sampled_from(sorted(SEEDS)), rnd=st.randoms(use_true_random=False))
def test_mutated_inputs_read_or_fail_cleanly(seed, rnd):
    data, name = mutated_input(seed, rnd)
    outcome(read_qrels, data, name)
    outcome(read_runs, data, name)


def test_seeds_are_valid():
    """Every seed reads as what it is (so the fuzz starts from valid files)."""
    for name, data in SEEDS.items():
        reader = read_qrels if name.startswith("qrels") else read_runs
        packed = gzip.compress(data, mtime=0)
        for blob, shown in ((data, name), (packed, name + ".gz"), (data, "upload")):
            assert outcome(reader, blob, shown) == "accepted", shown


def main(n: int, seed: int = 13) -> dict[str, Counter]:
    """The one-off run: ``n`` inputs, both readers each; prints and returns the counts."""
    rnd = random.Random(seed)
    counts = {"read_qrels": Counter(), "read_runs": Counter()}
    failures: list[tuple[str, str, bytes, str]] = []
    start = time.perf_counter()
    for _ in range(n):
        data, name = mutated_input(rnd.choice(sorted(SEEDS)), rnd)
        for reader in (read_qrels, read_runs):
            try:
                counts[reader.__name__][outcome(reader, data, name)] += 1
            except BaseException as exc:  # noqa: BLE001 - counted and shown, not hidden
                counts[reader.__name__]["other"] += 1
                failures.append((reader.__name__, name, data, f"{type(exc).__name__}: {exc}"))
    elapsed = time.perf_counter() - start
    for reader, c in counts.items():
        print(f"{reader}: tried {sum(c.values())}, format errors {c['format-error']}, "
              f"accepted {c['accepted']}, anything else {c['other']}")
    print(f"{n} inputs in {elapsed:.1f} s")
    for reader, name, data, what in failures[:20]:
        print(f"  {reader} {name} {data[:80]!r}: {what[:200]}")
    return counts


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000,
         int(sys.argv[2]) if len(sys.argv) > 2 else 13)
