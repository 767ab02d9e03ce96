"""A prototype, not used by ireval: what a per-query compiled kernel would cost.

The speed issue's last target (read + evaluate at <= 0.35 of pytrec_eval's time on every
id shape) was judged out of reach while a ``Run`` codes every document id globally when
it is read (hashing 7M long ids: 1.6-2.3 s in Arrow). This script measures the design
that would avoid it, so the decision to adopt it can rest on figures: each query's lines
are ordered (score descending, then document id descending by bytes, as trec_eval),
checked for a repeated document and joined with that query's judgments by comparing the
id bytes directly, in a numba kernel (compiled on first use, cached), on two threads.
No global document code is built.

It reads the ``make_data.py`` files with pyarrow (the settings of ireval's TREC reader),
runs the kernel, then checks its result against ireval's own (``read_runs`` + ``join``):
the same documents in the same ranking order with the same grades, for every query.
Printed: each stage's wall time, the kernel's first-call (compile or cache load) and
second-call times, and the whole against ireval and pytrec_eval (``_worker.py``, the
same 8 measures). The measures are ireval's kernels, timed from ireval's run with its
document map already built, so "+ measures" counts the rest of ireval's join (its grade
lookup, which the kernel has done, the ideal grades and positions) and the 8 kernels.

    python benchmarks/proto_per_query.py [--shapes ties msmarco ...] [--repeat 3]

Each stage's best of ``--repeat`` runs is kept (and pytrec_eval's best whole run), so a
busy machine inflates the figures less; "kernel load" is a cache load after the first
run ever (the first compiles, 6-7 s).

Needs numba (``requirements-bench.txt`` brings it through ranx).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
T0 = time.perf_counter()
import numba as nb  # noqa: E402
import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.compute as pc  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402

IMPORTS = time.perf_counter() - T0


@nb.njit(cache=True, nogil=True, inline="always")
def _compare(da: np.ndarray, oa: np.ndarray, a: int, db: np.ndarray, ob: np.ndarray, b: int,
             skip: int) -> int:
    """strcmp of string a (of da/oa) and string b (of db/ob), from byte ``skip`` on."""
    sa, la = oa[a] + skip, oa[a + 1] - oa[a] - skip
    sb, lb = ob[b] + skip, ob[b + 1] - ob[b] - skip
    for k in range(min(la, lb)):
        x, y = da[sa + k], db[sb + k]
        if x != y:
            return -1 if x < y else 1
    return -1 if la < lb else (1 if la > lb else 0)


@nb.njit(cache=True, nogil=True, inline="always")
def _key(data: np.ndarray, offs: np.ndarray, r: int, at: int) -> np.uint64:
    """Bytes ``at .. at + 8`` of string r as a big-endian integer (zero past its end)."""
    start, stop = offs[r] + at, offs[r + 1]
    key = np.uint64(0)
    for k in range(8):
        byte = data[start + k] if start + k < stop else 0
        key = (key << np.uint64(8)) | np.uint64(byte)
    return key


@nb.njit(cache=True, nogil=True)
def _by_bytes(rows: np.ndarray, data: np.ndarray, offs: np.ndarray) -> np.ndarray:
    """``rows`` sorted by their strings' bytes (most significant first: 8 bytes as one
    big-endian integer key, the next 8 only for rows whose keys tie, and so on; short
    ties by insertion)."""
    out = rows.copy()
    n = len(out)
    keys = np.empty(n, np.uint64)
    stack = [(0, n, 0)]  # (start, stop, byte offset) of ranges still to sort
    while len(stack):
        lo, hi, at = stack.pop()
        if hi - lo <= 16:  # insertion sort on the bytes from ``at`` on
            for a in range(lo + 1, hi):
                v = out[a]
                b = a - 1
                while b >= lo and _compare(data, offs, out[b], data, offs, v, at) > 0:
                    out[b + 1] = out[b]
                    b -= 1
                out[b + 1] = v
            continue
        longest = 0
        for i in range(lo, hi):
            keys[i] = _key(data, offs, out[i], at)
            longest = max(longest, offs[out[i] + 1] - offs[out[i]])
        order = np.argsort(keys[lo:hi])
        out[lo:hi] = out[lo:hi][order]
        keys[lo:hi] = keys[lo:hi][order]
        if at + 8 >= longest:
            continue  # every byte compared: equal keys are equal strings
        i = lo
        while i < hi:  # ranges of equal keys: their next 8 bytes
            j = i + 1
            while j < hi and keys[j] == keys[i]:
                j += 1
            if j - i > 1:
                stack.append((i, j, at + 8))
            i = j
    return out


@nb.njit(cache=True, nogil=True)
def _queries(lo: int, hi: int, starts: np.ndarray, rows: np.ndarray, score: np.ndarray,
             data: np.ndarray, offs: np.ndarray, q_starts: np.ndarray, q_rows: np.ndarray,
             q_data: np.ndarray, q_offs: np.ndarray, q_grade: np.ndarray,
             judged_at: np.ndarray, ranked: np.ndarray, grade: np.ndarray,
             repeated: np.ndarray) -> None:
    """Queries ``lo .. hi``: ranking order into ``ranked``, each row's grade into
    ``grade`` (left NaN: unjudged), a repeated document's row into ``repeated``."""
    for q in range(lo, hi):
        s, e = starts[q], starts[q + 1]
        by_doc = _by_bytes(rows[s:e], data, offs)
        n = e - s
        for i in range(1, n):
            if _compare(data, offs, by_doc[i - 1], data, offs, by_doc[i], 0) == 0:
                repeated[q] = by_doc[i]
        # ranking order: score descending, then document id descending
        desc = by_doc[::-1].copy()
        neg = np.empty(n)
        for i in range(n):
            neg[i] = -score[desc[i]]
        order = desc[np.argsort(neg, kind="mergesort")]
        ranked[s:e] = order
        j = judged_at[q]
        if j >= 0:  # merge the query's documents with its judgments, both by bytes
            judged = _by_bytes(q_rows[q_starts[j]:q_starts[j + 1]], q_data, q_offs)
            k = 0
            for i in range(n):
                while k < len(judged) and _compare(q_data, q_offs, judged[k], data, offs,
                                                   by_doc[i], 0) < 0:
                    k += 1
                if k < len(judged) and _compare(q_data, q_offs, judged[k], data, offs,
                                                by_doc[i], 0) == 0:
                    grade[by_doc[i]] = q_grade[judged[k]]


def _layout(col: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    offs = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset: arr.offset + len(arr) + 1]
    return offs.astype(np.int64), np.frombuffer(arr.buffers()[2], dtype=np.uint8)


def _read(path: Path, names: list[str], value: str) -> pa.Table:
    coded = pa.dictionary(pa.int32(), pa.string())
    keep = ["qid", "docid", value]
    return pacsv.read_csv(
        path, read_options=pacsv.ReadOptions(column_names=names, block_size=1 << 24),
        parse_options=pacsv.ParseOptions(delimiter=" ", quote_char=False, double_quote=False,
                                         escape_char=False, ignore_empty_lines=True),
        convert_options=pacsv.ConvertOptions(
            column_types={"qid": coded, "docid": pa.string(), value: pa.float64()},
            include_columns=keep, null_values=[], strings_can_be_null=False))


def _groups(codes: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows grouped by code (stable) and the CSR starts. A file whose lines come grouped
    by query, codes in order of first appearance (what the reader gives), needs no sort."""
    starts = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(codes, minlength=n), out=starts[1:])
    if len(codes) and codes[0] == 0 and bool((np.diff(codes) >= 0).all()):
        return np.arange(len(codes)), starts
    return np.argsort(codes, kind="stable"), starts


def prototype(qrels_path: Path, run_path: Path) -> dict:
    times: dict[str, float] = {"imports": IMPORTS}
    t = time.perf_counter()
    got: dict[str, pa.Table] = {}
    reader = threading.Thread(target=lambda: got.update(
        qrels=_read(qrels_path, ["qid", "iter", "docid", "rel"], "rel")))
    reader.start()  # the qrels beside the run, as ireval reads them
    run = _read(run_path, ["qid", "q0", "docid", "rank", "score", "tag"], "score")
    reader.join()
    qrels = got["qrels"]
    times["parse"] = time.perf_counter() - t

    t = time.perf_counter()
    offs, data = _layout(run.column("docid"))
    q_offs, q_data = _layout(qrels.column("docid"))
    times["id layout"] = time.perf_counter() - t
    t = time.perf_counter()
    qcol = run.column("qid").unify_dictionaries()
    qids = qcol.chunk(0).dictionary
    qcode = np.concatenate([c.indices.to_numpy() for c in qcol.chunks]).astype(np.int64)
    nq = len(qids)
    rows, starts = _groups(qcode, nq)
    qq = pc.index_in(qrels.column("qid").cast(pa.string()), value_set=qids)
    q_code = pc.fill_null(qq, nq).to_numpy().astype(np.int64)  # nq: not in the run
    q_rows, q_starts = _groups(q_code, nq + 1)
    judged_at = np.where(np.diff(q_starts)[:nq] > 0, np.arange(nq), -1)
    score = run.column("score").to_numpy()
    q_grade = qrels.column("rel").to_numpy()
    times["group queries"] = time.perf_counter() - t

    ranked = np.empty(len(score), np.int64)
    grade = np.full(len(score), np.nan)
    repeated = np.full(nq, -1, np.int64)
    args = (starts, rows, score, data, offs, q_starts, q_rows, q_data, q_offs, q_grade,
            judged_at, ranked, grade, repeated)
    t = time.perf_counter()
    _queries(0, 1, *args)  # compile (first run ever) or load from the cache
    times["kernel load"] = time.perf_counter() - t
    t = time.perf_counter()
    half = int(np.searchsorted(starts, starts[-1] // 2))
    second = threading.Thread(target=_queries, args=(half, nq, *args))
    second.start()
    _queries(0, half, *args)
    second.join()
    times["kernel"] = time.perf_counter() - t
    if (repeated >= 0).any():
        raise ValueError("a repeated document")
    t = time.perf_counter()
    grade = grade[ranked]  # in ranking order
    times["kernel"] += time.perf_counter() - t
    return {"times": times, "ranked": ranked, "grade": grade, "starts": starts,
            "qids": qids, "score": score, "qrels": qrels, "judged_at": judged_at,
            "q_starts": q_starts, "q_rows": q_rows, "q_grade": q_grade}


def ranked_of(result: dict, qrels: pa.Table) -> tuple[object, dict[str, float]]:
    """The prototype's result as ireval's ``Ranked`` (the evaluated queries: run ∩ qrels,
    in ireval's order), and the 8 measures' means from ireval's kernels on it."""
    sys.path.insert(0, str(HERE.parent))
    from _worker import MEASURES

    from ireval_core.data import Ranked, _positions, descending_within, pick_segments
    from ireval_core.measures import parse_measures
    from ireval_core.options import EvalOptions

    t = time.perf_counter()
    qids = result["qids"].to_numpy(zero_copy_only=False).astype(str)
    judged = np.flatnonzero(result["judged_at"] >= 0)  # run queries with judgments
    by_name = np.argsort(qids[judged], kind="stable")
    ks = judged[by_name]  # evaluated queries, in ireval's (code point) order
    rows, offsets = pick_segments(result["starts"], ks)
    ranked = result["ranked"][rows]
    grade = result["grade"][rows]
    score = result["score"][ranked]
    nq = len(ks)
    qidx = np.repeat(np.arange(nq, dtype=np.int32), np.diff(offsets))
    q_rows, ideal_offsets = pick_segments(result["q_starts"], result["judged_at"][ks])
    grades = result["q_grade"][result["q_rows"][q_rows]]
    ideal = descending_within(grades, np.repeat(np.arange(nq, dtype=np.int64),
                                                np.diff(ideal_offsets)))
    top = max(float(grades.max()) if len(grades) else 0.0, 0.0)
    r = Ranked(qids[ks].astype(object), offsets, qidx, _positions(offsets, len(qidx)), grade,
               score, ideal_offsets, ideal, np.ones(nq, dtype=bool), top)
    result["times"]["ranked"] = time.perf_counter() - t
    t = time.perf_counter()
    options = EvalOptions()
    means = {}
    for name, m in zip(MEASURES, parse_measures(MEASURES), strict=True):
        values = np.asarray(m.family.kernel(r, m, options), dtype=np.float64)
        means[name] = float(np.mean(values))
    result["times"]["measures"] = time.perf_counter() - t
    return r, means


def worker(qrels_path: Path, run_path: Path) -> None:
    """One whole process: read, kernel, measures; prints its times as JSON."""
    result = prototype(qrels_path, run_path)
    _, means = ranked_of(result, result["qrels"])
    times = result["times"]
    times["whole"] = time.perf_counter() - T0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    print(json.dumps({"times": times, "means": means, "peak": peak}))


def check(qrels_path: Path, run_path: Path) -> None:
    """The prototype's ``Ranked`` against ireval's ``join`` (default options), field by
    field, and its float32 question: these files' scores must not merge as float32."""
    result = prototype(qrels_path, run_path)
    mine, _ = ranked_of(result, result["qrels"])
    from ireval_core import read_qrels, read_runs
    from ireval_core.data import join, version_order

    qrels, (run,) = read_qrels(str(qrels_path)), read_runs(str(run_path))
    if version_order(run, "9.0.8") != (None, None):
        raise AssertionError("float32 merges scores here: the prototype ranks by doubles")
    theirs = join(qrels, run)
    for name in ("query_ids", "offsets", "qidx", "pos", "grade", "score", "ideal_offsets",
                 "ideal_grade", "in_run", "max_grade"):
        a, b = getattr(mine, name), getattr(theirs, name)
        same = (np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
                if name != "query_ids" else list(a) == list(b))
        if not same:
            raise AssertionError(f"{run_path}: Ranked.{name} differs from ireval's join")


def run_worker(argv: list[str]) -> dict:
    out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", nargs="+", default=["ties", "msmarco", "prefixed", "uuid",
                                                     "mixed"])
    ap.add_argument("--size", default="7M")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--worker", nargs=2, type=Path, metavar=("QRELS", "RUN"),
                    help=argparse.SUPPRESS)
    ap.add_argument("--check", nargs=2, type=Path, metavar=("QRELS", "RUN"),
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(*args.worker)
        return 0
    if args.check:
        check(*args.check)
        return 0
    sys.path.insert(0, str(HERE))
    from make_data import ensure, paths

    stages = ["imports", "parse", "id layout", "group queries", "kernel load", "kernel",
              "ranked", "measures"]
    print("| shape | round | " + " | ".join(stages) + " | prototype | ireval | pytrec_eval | "
          "prototype / pytrec_eval | ireval / pytrec_eval | peak MiB prototype / ireval |")
    print("|---|---:|" + "---:|" * (len(stages) + 6))
    for shape in args.shapes:
        ensure([args.size], shape=shape, quiet=True)
        files = paths(args.size, shape)
        q, r = str(files["qrels"]), str(files["run"])
        # exact first (and compiles on a first run), in its own process: a child's peak
        # RSS (ru_maxrss) starts at its parent's, so the parent stays small
        subprocess.run([sys.executable, str(Path(__file__)), "--check", q, r], check=True)
        who = {"prototype": [str(Path(__file__)), "--worker", q, r],
               "ireval": [str(HERE / "_worker.py"), "eval", "ireval", q, r],
               "pytrec_eval": [str(HERE / "_worker.py"), "eval", "pytrec_eval", q, r]}
        names = list(who)
        for k in range(args.rounds):
            got = {n: run_worker(who[n]) for n in names[k % 3:] + names[:k % 3]}
            ref = got["pytrec_eval"]["means"]
            for n, mean in got["prototype"]["means"].items():
                if abs(mean - ref[n]) > 1e-9:
                    raise AssertionError(f"{shape}: {n} {mean} against pytrec_eval's {ref[n]}")
            ts = got["prototype"]["times"]
            whole = {n: got[n]["times"]["whole" if n == "prototype" else "total"] for n in who}
            print(f"| {shape} | {k + 1} | " + " | ".join(f"{ts[s]:.2f}" for s in stages)
                  + f" | {whole['prototype']:.2f} | {whole['ireval']:.2f} | "
                  f"{whole['pytrec_eval']:.2f} | "
                  f"{whole['prototype'] / whole['pytrec_eval']:.2f} | "
                  f"{whole['ireval'] / whole['pytrec_eval']:.2f} | "
                  f"{got['prototype']['peak'] // 1024:,} / {got['ireval']['peak'] // 1024:,} |",
                  flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
