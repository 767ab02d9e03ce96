"""Generate seeded synthetic TREC qrels and run files for the benchmarks.

Sizes (run lines = queries x 1,000 retrieved documents):

========  =========  ===========
size      queries    run lines
========  =========  ===========
``10k``   10         10,000
``500k``  500        500,000
``7M``    7,000      7,000,000
========  =========  ===========

Files go to ``benchmarks/data/<size>/`` (gitignored):

``qrels.txt``
    ``qid 0 docid grade``; 100-300 judged documents per query, grades 0-3, about
    70% of them pooled from the run (biased to the top ranks), the rest drawn from
    the corpus and not retrieved (so some relevant documents are never retrieved).
    1% extra queries are judged but absent from the run. Sorted by qid, docid.
``run.txt``
    ``qid Q0 docid rank score tag`` sorted by query, then score descending, as
    search engines write them. Scores have 6 decimals, are distinct in float32
    within a query except for a few exact ties (about 0.2% of lines), whose order
    in the file is arbitrary.
``run.shuffled.txt`` (with ``--shuffled``)
    The same lines in random order.

With ``--shape ties`` the files go to ``benchmarks/data/<size>-ties/`` and the run is
tie-heavy, as quantised models or BM25 with rounded scores write them: scores in
(0, 1) with 3 decimals, about 0.6 apart from top to bottom of a 1,000-document list,
so about 60% of the lines tie with a neighbour (ties ordered by document id, as
trec_eval does). Qrels are the same.

Query ids look like ``q123456``; document ids like ``clueweb-01234567``, drawn
from a corpus of 2,000,000 ids. Everything is vectorised (numpy + pyarrow
compute); the 7M run is written in a few seconds.

Real distinct counts (``--corpus real``; files in ``benchmarks/data/<size>-<shape>-real/``):
2,000,000 documents make a 7M-line run retrieve about 1.9M distinct ones, far fewer than
real collections do. With ``--corpus real`` the documents are drawn from the corpus size of
the collection each shape imitates: MS MARCO passage's 8,841,823 for ``msmarco`` (about
4.8M distinct documents in 7M lines, ids ``0`` to ``8841822``), ClueWeb-style 50,000,000
for the others (about 6.5M distinct in 7M lines). Only the documents retrieved or judged
get an id. The default corpus (2M) keeps its files and seeds unchanged.

Id shapes (``--shape``; tie-heavy scores as ``ties``, the same documents retrieved and
judged, only the ids written differ; files in ``benchmarks/data/<size>-<shape>/``):

``msmarco``
    MS MARCO-like: query ids random integers up to 1,200,000 and document ids distinct
    random integers up to 8,841,822, written without padding (so string order differs
    from numeric order: ``"10" < "9"``).
``prefixed``
    Prefixed strings of varying length as the TREC collections write them: Robust04's
    ``FBIS3-10082``, ``FT921-4562``, ``LA010189-0001`` and ClueWeb12's
    ``clueweb12-0000tw-00-00000``; query ids random integers up to 700 and beyond.
``uuid``
    Query and document ids are random UUIDs (``8-4-4-4-12`` hex digits).
``mixed``
    A third of the documents of each of the three forms above, in one file; query ids
    a mix of numbers, ``q``-prefixed numbers and UUIDs.

Usage::

    python benchmarks/make_data.py                # all sizes, skip existing files
    python benchmarks/make_data.py --sizes 7M --shuffled --force
    python benchmarks/make_data.py --sizes 7M --shape ties
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DATA_DIR = Path(__file__).resolve().parent / "data"
SIZES = {"10k": 10, "500k": 500, "7M": 7_000}
DEPTH = 1_000
CORPUS = 2_000_000
SEED = 20240611
TAG = "bm25-synth"


CORPORA = {"default": None, "real": None}  # "real": REAL_CORPUS of the shape
REAL_CORPUS = {"msmarco": 8_841_823}  # MS MARCO passage; every other shape: ClueWeb-style
CLUEWEB_CORPUS = 50_000_000


def corpus_size(shape: str, corpus: str = "default") -> int:
    """How many documents the run and the qrels draw from."""
    if corpus == "default":
        return CORPUS
    return REAL_CORPUS.get(shape, CLUEWEB_CORPUS)


SHAPES = ("clean", "ties", "msmarco", "prefixed", "uuid", "mixed")
ID_SHAPES = ("msmarco", "prefixed", "uuid", "mixed")  # tie-heavy, ids of real collections


def paths(size: str, shape: str = "clean", corpus: str = "default") -> dict[str, Path]:
    d = DATA_DIR / (size if shape == "clean" else f"{size}-{shape}")
    if corpus != "default":
        d = d.with_name(f"{d.name}-{corpus}")
    return {"qrels": d / "qrels.txt", "run": d / "run.txt", "shuffled": d / "run.shuffled.txt"}


# ----------------------------------------------------------------------------- formatting


def _str(values: np.ndarray) -> pa.Array:
    return pc.cast(pa.array(values), pa.string())


def _prefixed(prefix: str, numbers: np.ndarray, width: int = 0) -> pa.Array:
    s = _str(numbers)
    if width:
        s = pc.utf8_lpad(s, width=width, padding="0")
    return pc.binary_join_element_wise(prefix, s, "")


def _fixed6(x: np.ndarray) -> pa.Array:
    """Non-negative floats as text with exactly 6 decimals ("12.340000")."""
    micro = np.rint(x * 1e6).astype(np.int64)
    whole, frac = np.divmod(micro, 1_000_000)
    return pc.binary_join_element_wise(
        _str(whole), pc.utf8_lpad(_str(frac), width=6, padding="0"), ".")


def _write_lines(path: Path, columns: list[pa.Array | str]) -> None:
    """Write space-separated columns, one line per row, straight from the arrow buffer."""
    lines = pc.binary_join_element_wise(*columns, " ")
    lines = pc.binary_join_element_wise(lines, "", "\n")  # append a newline to every row
    if isinstance(lines, pa.ChunkedArray):
        lines = lines.combine_chunks()
    lines = lines.cast(pa.large_string())
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset:]
    data = lines.buffers()[2]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        f.write(memoryview(data)[offsets[0]:offsets[len(lines)]])
    tmp.replace(path)


def _fixed_width(matrix: np.ndarray) -> pa.Array:
    """Rows of a uint8 matrix (ASCII, one id per row) as a string array."""
    n, width = matrix.shape
    offsets = np.arange(n + 1, dtype=np.int64) * width
    return pa.Array.from_buffers(pa.large_string(), n, [
        None, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(matrix))]
    ).cast(pa.string())


_HEX = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)


def _uuids(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` random version-4 UUIDs as text (distinct with overwhelming probability)."""
    nibbles = rng.integers(0, 16, size=(n, 32), dtype=np.uint8)
    nibbles[:, 12] = 4  # version 4
    nibbles[:, 16] = 8 + (nibbles[:, 16] & 3)  # variant 10xx
    out = np.full((n, 36), ord("-"), dtype=np.uint8)
    cols = [c for c in range(36) if c not in (8, 13, 18, 23)]
    out[:, cols] = _HEX[nibbles]
    return _fixed_width(out)


def _pick(rng: np.random.Generator, n: int, high: int) -> np.ndarray:
    """``n`` distinct integers in [0, high), in random order."""
    return rng.choice(high, n, replace=False, shuffle=True)


def _robust_clueweb(rng: np.random.Generator, n: int) -> pa.Array:
    """``n`` distinct ids in Robust04's and ClueWeb12's forms, in random order."""
    kinds = rng.choice(4, size=n, p=[0.1, 0.15, 0.05, 0.7])
    for kind, room in enumerate((2 * 199_999, 34 * 20_000, 12 * 31 * 2 * 400)):
        extra = int((kinds == kind).sum()) - room  # more than the form has ids: ClueWeb12's
        if extra > 0:
            kinds[rng.choice(np.flatnonzero(kinds == kind), extra, replace=False)] = 3
    out = np.empty(n, dtype=object)
    parts = []
    # FBIS3-10082 / FBIS4-1: source number, then an unpadded number
    m = int((kinds == 0).sum())
    k = _pick(rng, m, 2 * 199_999)
    parts.append((kinds == 0, pc.binary_join_element_wise(
        _prefixed("FBIS", 3 + k // 199_999), _str(1 + k % 199_999), "-")))
    # FT921-4562: issue 911..944, then an unpadded number
    m = int((kinds == 1).sum())
    k = _pick(rng, m, 34 * 20_000)
    parts.append((kinds == 1, pc.binary_join_element_wise(
        _prefixed("FT9", 11 + k // 20_000), _str(1 + k % 20_000), "-")))
    # LA010189-0001: the date MMDDYY, then a 4-digit number
    m = int((kinds == 2).sum())
    k = _pick(rng, m, 12 * 31 * 2 * 400)
    k, num = np.divmod(k, 400)
    k, year = np.divmod(k, 2)
    month, day = np.divmod(k, 31)
    date = (month + 1) * 10_000 + (day + 1) * 100 + 89 + year
    parts.append((kinds == 2, pc.binary_join_element_wise(
        _prefixed("LA", date, 6), pc.utf8_lpad(_str(num + 1), width=4, padding="0"), "-")))
    # clueweb12-0000tw-00-00000: segment, crawl (tw/wb), directory, document
    m = int((kinds == 3).sum())
    k = _pick(rng, m, 2000 * 2 * 100 * 100_000)
    k, doc = np.divmod(k, 100_000)
    k, folder = np.divmod(k, 100)
    seg, crawl = np.divmod(k, 2)
    crawl_s = pa.array(np.where(crawl == 0, "tw", "wb"))
    parts.append((kinds == 3, pc.binary_join_element_wise(
        _prefixed("clueweb12-", seg, 4), crawl_s, "-",
        pc.utf8_lpad(_str(folder), width=2, padding="0"), "-",
        pc.utf8_lpad(_str(doc), width=5, padding="0"), "")))
    for mask, ids in parts:
        out[mask] = ids.to_numpy(zero_copy_only=False)
    return pa.array(out, type=pa.string())


def _shaped_ids(rng: np.random.Generator, shape: str, n: int, high: int,
                role: str) -> pa.Array:
    """``n`` distinct ids of an id shape (``role`` "query" or "doc"), in random order."""
    if shape == "uuid":
        return _uuids(rng, n)
    if shape == "msmarco" or (shape == "prefixed" and role == "query"):
        return _str(1 + _pick(rng, n, high))
    if shape == "prefixed":
        return _robust_clueweb(rng, n)
    assert shape == "mixed"
    third = n // 3
    if role == "query":
        ids = [_str(1 + _pick(rng, third, high)),
               _prefixed("q", 1 + _pick(rng, third, high)), _uuids(rng, n - 2 * third)]
    else:
        ids = [_str(1 + _pick(rng, third, high)), _robust_clueweb(rng, third),
               _uuids(rng, n - 2 * third)]
    mixed = pa.concat_arrays([a.cast(pa.string()) for a in ids])
    return mixed.take(pa.array(rng.permutation(n)))


# ----------------------------------------------------------------------------- generation


def _distinct_rows(rng: np.random.Generator, n_rows: int, n_cols: int, high: int) -> np.ndarray:
    """``n_rows`` x ``n_cols`` ints in [0, high), distinct within each row (rows sorted)."""
    a = np.sort(rng.integers(0, high, size=(n_rows, n_cols)), axis=1)
    while True:
        dup = np.zeros(a.shape, dtype=bool)
        dup[:, 1:] = a[:, 1:] == a[:, :-1]
        n = int(dup.sum())
        if not n:
            return a
        a[dup] = rng.integers(0, high, size=n)
        a.sort(axis=1)


def generate(size: str, *, shuffled: bool = False, seed: int = SEED,
             shape: str = "clean", corpus: str = "default") -> dict[str, int]:
    n_q = SIZES[size]
    rng = np.random.default_rng([seed, n_q] + ([1 + list(CORPORA).index(corpus)]
                                               if corpus != "default" else []))
    n_corpus = corpus_size(shape, corpus)
    n_extra = max(1, n_q // 100)  # judged queries that the run does not cover

    # query ids: distinct 6-digit numbers, in file (= string) order
    qnum = np.sort(rng.choice(np.arange(100_000, 1_000_000), n_q + n_extra, replace=False))
    in_run = np.ones(n_q + n_extra, dtype=bool)
    in_run[rng.choice(n_q + n_extra, n_extra, replace=False)] = False
    run_q = np.flatnonzero(in_run)
    if corpus == "default":  # corpus: 2M distinct 8-digit document numbers
        numbers = np.sort(rng.choice(100_000_000, CORPUS, replace=False))

    # ----- run: 1,000 distinct documents per query, scores descending
    doc_idx = _distinct_rows(rng, n_q, DEPTH, n_corpus)
    rng.permuted(doc_idx, axis=1, out=doc_idx)  # retrieval order unrelated to doc id
    if shape != "clean":  # 3 decimals over ~0.6: most lines tie with a neighbour
        step = rng.exponential(0.0006, size=(n_q, DEPTH))
        step[:, 0] = 0.0
        top = rng.uniform(0.7, 0.99, size=(n_q, 1))
        score = np.round(np.maximum(top - np.cumsum(step, axis=1), 0.001), 3)
        step = np.diff(score, axis=1, prepend=score[:, :1])  # 0 where a line ties
    else:
        step = 2e-5 + rng.exponential(0.02, size=(n_q, DEPTH))  # >= 2e-5: distinct in f32
        step[:, 0] = 0.0
        step[rng.random((n_q, DEPTH)) < 0.002] = 0.0  # a few exact ties
        top = rng.uniform(25.0, 45.0, size=(n_q, 1))
        score = np.round(top - np.cumsum(step, axis=1), 6)
    assert score.min() > 0

    # ----- qrels: 100-300 judged documents per judged query
    n_all = n_q + n_extra
    n_judged = rng.integers(100, 301, size=n_all)
    n_pooled = np.where(in_run, np.rint(0.7 * n_judged).astype(np.int64), 0)
    n_outside = n_judged - n_pooled
    # pooled: weighted sampling without replacement of ranks, favouring the top
    ranks = np.arange(DEPTH)
    keys = np.log(rng.random((n_q, DEPTH))) * (ranks + 10.0)  # Efraimidis-Spirakis
    pick = np.argsort(-keys, axis=1, kind="stable")
    take = np.arange(DEPTH)[None, :] < n_pooled[run_q][:, None]
    p_rows = np.repeat(np.arange(n_q), take.sum(axis=1))
    p_rank = pick[take]
    p_doc = doc_idx[p_rows, p_rank]
    p_q = run_q[p_rows]
    p_rel = 0.6 * np.exp(-p_rank / 150.0) + 0.05
    # outside the run: random corpus documents not retrieved for that query
    o_q = np.repeat(np.arange(n_all), n_outside)
    o_doc = rng.integers(0, n_corpus, size=len(o_q))
    run_key = np.sort((run_q[:, None] * n_corpus + doc_idx).ravel())
    o_key = o_q * n_corpus + o_doc
    o_key, first = np.unique(o_key, return_index=True)
    keep = ~np.isin(o_key, run_key, assume_unique=True)
    o_q, o_doc = o_q[first][keep], o_doc[first][keep]
    o_rel = np.full(len(o_q), 0.15)

    j_q = np.concatenate([p_q, o_q])
    j_doc = np.concatenate([p_doc, o_doc])
    p = np.concatenate([p_rel, o_rel])
    relevant = rng.random(len(p)) < p
    grade = np.where(relevant, rng.choice([1, 2, 3], size=len(p), p=[0.6, 0.3, 0.1]), 0)
    order = np.lexsort((j_doc, j_q))  # qid, then docid (doc numbers are sorted like ids)
    j_q, j_doc, grade = j_q[order], j_doc[order], grade[order]

    # ----- write
    out = paths(size, shape, corpus)
    n_ids = n_corpus
    if corpus != "default":  # ids only for the documents used, numbered in corpus order
        used = np.unique(np.concatenate([doc_idx.ravel(), j_doc]))
        n_ids = len(used)
        doc_idx = np.searchsorted(used, doc_idx)
        j_doc = np.searchsorted(used, j_doc)
    if shape in ID_SHAPES:  # the same queries and documents, other ids (own seed)
        id_rng = np.random.default_rng([seed, n_q, 2])
        qid_str = _shaped_ids(id_rng, shape, n_all, 1_200_000 if shape != "prefixed"
                              else 700_000, "query")
        if shape == "msmarco" and corpus != "default":  # the passage numbers themselves
            doc_str = _str(used)
        else:
            doc_str = _shaped_ids(id_rng, shape, n_ids, 8_841_822, "doc")
        order = np.argsort(to_sort_key(qid_str)[j_q], kind="stable")  # qrels by query
        j_q, j_doc, grade = j_q[order], j_doc[order], grade[order]
    else:
        qid_str = _prefixed("q", qnum)
        if corpus != "default":  # distinct 8-digit numbers, sorted like the corpus order
            numbers = np.sort(rng.choice(100_000_000, n_ids, replace=False))
        doc_str = _prefixed("clueweb-", numbers, 8)
    _write_lines(out["qrels"], [qid_str.take(pa.array(j_q)), "0",
                                doc_str.take(pa.array(j_doc)), _str(grade)])
    r_q = np.repeat(run_q, DEPTH)
    run_cols = [qid_str.take(pa.array(r_q)), "Q0",
                doc_str.take(pa.array(doc_idx.ravel())),
                _str(np.tile(np.arange(1, DEPTH + 1), n_q)), _fixed6(score.ravel()), TAG]
    _write_lines(out["run"], run_cols)
    if shuffled:
        perm = pa.array(np.random.default_rng([seed, n_q, 1]).permutation(n_q * DEPTH))
        _write_lines(out["shuffled"], [c if isinstance(c, str) else c.take(perm)
                                       for c in run_cols])
    return {"queries": n_q, "run_lines": n_q * DEPTH, "qrels_lines": len(j_q),
            "distinct_run_docs": int(len(np.unique(doc_idx))),
            "relevant": int((grade > 0).sum()), "ties": int((step[:, 1:] == 0).sum())}


def to_sort_key(ids: pa.Array) -> np.ndarray:
    """The byte-order rank of every id of ``ids`` (to write files sorted by id)."""
    rank = np.empty(len(ids), dtype=np.int64)
    rank[pc.sort_indices(ids).to_numpy()] = np.arange(len(ids))
    return rank


def ensure(sizes: list[str], *, shuffled: bool = False, force: bool = False,
           quiet: bool = False, shape: str = "clean", corpus: str = "default") -> None:
    """Generate the files of ``sizes`` that are missing (all of them with ``force``)."""
    for size in sizes:
        p = paths(size, shape, corpus)
        wanted = [p["qrels"], p["run"]] + ([p["shuffled"]] if shuffled else [])
        if not force and all(f.exists() for f in wanted):
            continue
        t = time.perf_counter()
        info = generate(size, shuffled=shuffled, shape=shape, corpus=corpus)
        if not quiet:
            print(f"[make_data] {size}: {info} in {time.perf_counter() - t:.1f} s",
                  file=sys.stderr)


def app_folder(size: str, shape: str = "clean", n_runs: int = 3, *,
               seed: int = SEED, corpus: str = "default") -> Path:
    """A folder for ``benchmarks/bench_app.py``: the qrels and ``n_runs`` different runs.

    Run 1 is the generated run; the others rerank the same documents with seeded noise
    added to the scores (rounded like the original), each under its own tag. Written to
    ``benchmarks/data/<size>[-<shape>][-<corpus>]-app/`` once (``corpus`` as in
    :func:`generate`).
    """
    src = paths(size, shape, corpus)
    ensure([size], shape=shape, quiet=True, corpus=corpus)
    out = src["run"].parent.with_name(src["run"].parent.name + "-app")
    names = [out / "qrels.txt"] + [out / f"run_{i + 1}.txt" for i in range(n_runs)]
    if all(p.exists() for p in names):
        return out
    out.mkdir(parents=True, exist_ok=True)
    (out / "qrels.txt").write_bytes(src["qrels"].read_bytes())
    import pyarrow.csv as pacsv

    table = pacsv.read_csv(src["run"], read_options=pacsv.ReadOptions(
        column_names=["q", "z", "d", "r", "s", "t"]), parse_options=pacsv.ParseOptions(
        delimiter=" "), convert_options=pacsv.ConvertOptions(column_types={
            "q": pa.string(), "d": pa.string(), "s": pa.float64()}))
    score = table.column("s").to_numpy()
    decimals = 6 if shape == "clean" else 3
    for i in range(n_runs):
        rng = np.random.default_rng([seed, i])
        s = score if i == 0 else np.round(score + rng.normal(0, score.std() * 0.1 * i,
                                                             len(score)), decimals)
        s = np.maximum(s, 10.0**-decimals)
        _write_lines(out / f"run_{i + 1}.txt", [
            table.column("q"), "Q0", table.column("d"), "0",
            pc.cast(pa.array(s), pa.string()), f"system{i + 1}"])
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", nargs="+", default=list(SIZES), choices=list(SIZES))
    ap.add_argument("--shuffled", action="store_true", help="also write run.shuffled.txt")
    ap.add_argument("--force", action="store_true", help="regenerate existing files")
    ap.add_argument("--shape", choices=SHAPES, default="clean",
                    help="ties: 3-decimal scores, most lines tied; msmarco, prefixed, uuid, "
                         "mixed: tie-heavy with the ids of real collections (module docstring)")
    ap.add_argument("--corpus", choices=list(CORPORA), default="default",
                    help="real: documents drawn from the corpus size of the shape's "
                         "collection (MS MARCO 8.8M, ClueWeb-style 50M), not 2M")
    args = ap.parse_args(argv)
    ensure(args.sizes, shuffled=args.shuffled, force=args.force, shape=args.shape,
           corpus=args.corpus)


if __name__ == "__main__":
    main()
