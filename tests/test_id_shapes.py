"""Same bits on every id form (issue 21): the ids real collections use, not only fixed-width ones.

Document and query ids come in the forms of ``benchmarks/make_data.py``'s shapes: MS MARCO
numbers without padding (string order differs from numeric order: ``"10" < "9"``),
prefixed ids of varying length (``FBIS3-10082``, ``LA010189-0001``,
``clueweb12-0000tw-00-00000``: long common prefixes), UUIDs, and a mix of them in one file.
Scores are drawn from a few values, so most documents tie. For every shape:

* the ranking order is trec_eval's (score descending, then document id descending by bytes),
  checked against plain Python sorts;
* every registered measure gives the same per-query values, to the bit, as on the same data
  with the ids renamed to fixed-width ids in the same byte order (``d00000042``): the path
  that coded ids as integer keys before;
* the 8 benchmark measures equal pytrec_eval's (trec_eval 9.0.8) per query;
* the run-to-qrels document map equals a hash lookup, and :func:`byte_order` sorts like
  ``strcmp``.
"""

from __future__ import annotations

import random
import uuid

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest
from test_data import ranked, reference_order
from test_registry import SPECS

from ireval_core import Qrels, Run, evaluate
from ireval_core._arrow import (
    _lexicographic_order,
    byte_order,
    byte_order_words,
    padded_bytes,
    string_array,
)
from ireval_core.idcodes import doc_code_map

Nested = dict[str, dict[str, float]]


def _numbers(rng: random.Random, n: int, high: int) -> list[str]:
    """Unpadded numbers, with the short ones that sort after long ones as strings."""
    return [str(x) for x in ({9, 10, 100, 99, 1000, 8_841_822} | set(
        rng.sample(range(1, high), n)))]


def _prefixed(rng: random.Random, n: int) -> list[str]:
    fixed = ["FBIS3-10082", "FBIS3-9", "FBIS3-1008", "FBIS4-1", "FT921-4562", "FT92-1",
             "LA010189-0001", "LA010189-0010", "LA010189-001", "clueweb12-0000tw-00-00000",
             "clueweb12-0000tw-00-00001", "clueweb12-0000wb-00-00000",
             "clueweb12-1000tw-99-12345", "clueweb12-0000tw-00-0000"]
    made = {f"FBIS{rng.choice((3, 4))}-{rng.randint(1, 99_999)}" for _ in range(n // 3)}
    made |= {f"LA{rng.randint(1, 12):02d}{rng.randint(1, 31):02d}8{rng.randint(9, 9)}-"
             f"{rng.randint(1, 400):04d}" for _ in range(n // 3)}
    made |= {f"clueweb12-{rng.randint(0, 1999):04d}{rng.choice(('tw', 'wb'))}-"
             f"{rng.randint(0, 99):02d}-{rng.randint(0, 99_999):05d}" for _ in range(n // 3)}
    return sorted(set(fixed) | made)


def _uuids(rng: random.Random, n: int) -> list[str]:
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(n)]
    # two that share their first 16 characters: the first integer word ties
    return ids + ["0123abcd-ef01-4234-8567-89abcdef0123", "0123abcd-ef01-4234-8567-89abcdef0124"]


def doc_pool(shape: str, rng: random.Random, n: int = 40) -> list[str]:
    if shape == "msmarco":
        return _numbers(rng, n, 8_841_823)
    if shape == "prefixed":
        return _prefixed(rng, n)
    if shape == "uuid":
        return _uuids(rng, n)
    if shape == "mixed":
        return _numbers(rng, n // 3, 8_841_823) + _prefixed(rng, n // 3) + _uuids(rng, n // 3)
    assert shape == "fixed"
    return [f"clueweb-{x:08d}" for x in rng.sample(range(10**8), n)]


def query_pool(shape: str, rng: random.Random, n: int) -> list[str]:
    if shape == "uuid":
        return _uuids(rng, n)[:n]
    if shape == "mixed":
        return (_numbers(rng, n, 1_200_000)[:n // 2] + [f"q{x}" for x in range(n // 4)]
                + _uuids(rng, n)[: n - n // 2 - n // 4])
    return _numbers(rng, n, 1_200_000)[:n]


SHAPES = ["msmarco", "prefixed", "uuid", "mixed", "fixed"]


def make_data(shape: str, seed: int, n_docs: int = 40) -> tuple[Nested, Nested]:
    """Tie-heavy run and graded qrels over ids of ``shape``."""
    rng = random.Random(f"{shape}-{seed}")
    docs = doc_pool(shape, rng, n_docs)
    queries = query_pool(shape, rng, 6)
    run: Nested = {}
    qrels: Nested = {}
    for q in queries:
        ranked_docs = rng.sample(docs, rng.randint(1, min(30, len(docs))))
        run[q] = {d: rng.choice([0.5, 1.0, 1.0, 2.0, 2.0, 2.0, 3.0]) for d in ranked_docs}
        judged = rng.sample(ranked_docs, len(ranked_docs) // 2) + rng.sample(docs, 3)
        qrels[q] = {d: float(rng.choice([0, 0, 1, 2, 3])) for d in judged}
        if not any(g > 0 for g in qrels[q].values()):
            qrels[q][judged[0]] = 1.0
    return qrels, run


def renamed(nested: Nested, qmap: dict[str, str], dmap: dict[str, str]) -> Nested:
    return {qmap[q]: {dmap[d]: v for d, v in docs.items()} for q, docs in nested.items()}


def fixed_width_names(ids: set[str], letter: str) -> dict[str, str]:
    """Each id -> a fixed-width id of the same byte rank (what the old fast path saw)."""
    ordered = sorted(ids, key=lambda s: s.encode())
    return {s: f"{letter}{i:08d}" for i, s in enumerate(ordered)}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("layout", ["engine", "rows-shuffled"])
@pytest.mark.parametrize("seed", range(8))
def test_tie_order_is_trec_eval_on_every_id_shape(shape: str, layout: str, seed: int) -> None:
    _, run = make_data(shape, seed)
    rows = [(q, d, s) for q, docs in run.items() for d, s in docs.items()]
    rows.sort(key=lambda r: (r[0], -r[2]))
    if layout == "rows-shuffled":
        random.Random(seed).shuffle(rows)
    got = Run.from_arrays([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                          name="x")
    assert ranked(got) == reference_order(rows)
    ids = got.doc_ids.to_pylist()
    assert ids == sorted(ids, key=str.encode)  # codes are byte ranks
    assert sum(len(v) for v in run.values()) > len({d for v in run.values() for d in v})


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(4))
def test_every_measure_same_bits_as_fixed_width_ids(shape: str, seed: int) -> None:
    qrels, run = make_data(shape, seed)
    qmap = fixed_width_names(set(qrels) | set(run), "q")
    dmap = fixed_width_names({d for v in [*qrels.values(), *run.values()] for d in v}, "d")
    got = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"), SPECS)
    want = evaluate(Qrels.from_dict(renamed(qrels, qmap, dmap)),
                    Run.from_dict(renamed(run, qmap, dmap), name="s"), SPECS)
    for spec in SPECS:
        a = got.per_query("s", spec)
        b = want.per_query("s", spec)
        assert [qmap[q] for q in a.index] == list(b.index)
        assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True), spec


PYTREC = {"AP": "map", "nDCG": "ndcg", "nDCG@10": "ndcg_cut_10", "P@10": "P_10",
          "R@100": "recall_100", "RR": "recip_rank", "bpref": "bpref", "Rprec": "Rprec"}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("n_docs", [40, 5000])  # 5,000: the document map's merge path
def test_benchmark_measures_equal_pytrec_eval(shape: str, n_docs: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = make_data(shape, 0, n_docs)
    if n_docs > 40:  # every document retrieved somewhere, so the run holds > 4096 ids
        rng = random.Random(1)
        pool = sorted({d for v in qrels.values() for d in v} | set(doc_pool(shape, rng, n_docs)))
        run = {q: {d: rng.choice([0.5, 1.0, 2.0]) for d in pool[i::len(run)]}
               for i, q in enumerate(run)}
    expected = pytrec_eval.RelevanceEvaluator(
        {q: {d: int(g) for d, g in v.items()} for q, v in qrels.items()},
        set(PYTREC.values())).evaluate(run)
    res = evaluate(Qrels.from_dict(qrels), Run.from_dict(run, name="s"), list(PYTREC))
    for ours, theirs in PYTREC.items():
        got = res.per_query("s", ours)
        for q, values in expected.items():
            assert abs(got[q] - values[theirs]) <= 1e-12, (ours, q)


def _strcmp_sorted(values: list[str]) -> list[str]:
    return sorted(values, key=str.encode)


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", range(5))
def test_byte_order_sorts_like_strcmp(shape: str, seed: int) -> None:
    rng = random.Random(seed)
    values = doc_pool(shape, rng, 300)
    values += [v[:-1] for v in values[:20]] + ["é", "e", "ÿ", "z" * 40]  # prefixes, UTF-8
    values += values[:10]  # repeats keep their order
    rng.shuffle(values)
    arr = string_array(values)
    order = byte_order(arr)
    assert [values[i] for i in order] == _strcmp_sorted(values)
    assert order.tolist() == sorted(range(len(values)), key=lambda i: values[i].encode())
    words = byte_order_words(arr)  # the packed words alone order them too
    assert words is not None and len(words) <= 5
    assert _lexicographic_order(words).tolist() == order.tolist()
    chunked = pa.chunked_array([arr.slice(0, 7), arr.slice(7)])
    assert byte_order(chunked).tolist() == order.tolist()


def test_byte_order_falls_back_where_words_cannot_order() -> None:
    values = ["a\x00b", "a", "a\x00", "b" * 20, "b" * 19 + "a"]
    assert byte_order_words(string_array(values)) is None
    assert [values[i] for i in byte_order(string_array(values))] == _strcmp_sorted(values)
    assert byte_order(string_array([])).tolist() == []
    assert byte_order_words(string_array(["same", "same"])) is not None
    assert padded_bytes(pa.array(["a", None])) is None


@pytest.mark.parametrize("shape", ["prefixed", "uuid", "mixed"])
def test_document_map_merges_sorted_ids_like_a_hash_lookup(shape: str) -> None:
    rng = random.Random(shape)
    pool = _strcmp_sorted(list(set(doc_pool(shape, rng, 9000))))
    run_docs = string_array(_strcmp_sorted(rng.sample(pool, 6000)))
    qrels_docs = string_array(_strcmp_sorted(rng.sample(pool, 3000) + ["z" * 50]))
    want = pc.index_in(run_docs, value_set=qrels_docs).to_numpy(zero_copy_only=False)
    want = np.where(np.isnan(want.astype(float)), -1, want.astype(float)).astype(np.int64)
    assert doc_code_map(run_docs, qrels_docs).tolist() == want.tolist()
    assert (want >= 0).sum() > 1000
    shuffled = run_docs.take(pa.array(rng.sample(range(len(run_docs)), len(run_docs))))
    got = doc_code_map(shuffled, qrels_docs)  # not in byte order: hashed, same answer
    by_id = dict(zip(run_docs.to_pylist(), want.tolist(), strict=True))
    assert got.tolist() == [by_id[d] for d in shuffled.to_pylist()]


def _adversarial_ids(rng: random.Random, n: int) -> list[str]:
    """Ids that strain a byte sort: long shared prefixes, prefixes of one another, the
    empty id, non-ASCII (2-4 byte characters, ÿ after ASCII), very long ids, repeats."""
    forms = [lambda i: f"clueweb12-{i % 97:04d}tw-{i % 89:02d}-{i:05d}",
             lambda i: f"FBIS3-{i}", lambda i: f"FBIS3-{i}" + "-" * (i % 3),
             lambda i: "x" * (60 + i % 7) + str(i), lambda i: f"é{i}", lambda i: f"ÿ{i}",
             lambda i: f"日本{i}", lambda i: f"😀{i}", lambda i: str(uuid.UUID(int=i))]
    extra = ["", "", "a", "😀", "x" * 60, "x" * 300, "FBIS3-", "FBIS3-1", "FBIS3-1-"]
    return extra + [rng.choice(forms)(rng.randrange(100 * n)) for _ in range(n)]


@pytest.mark.parametrize("shape", ["prefixed", "uuid", "mixed", "adversarial"])
def test_byte_groups_group_rows_like_arrows_sort(shape: str) -> None:
    """Every row in its group of equal values, the groups in Arrow's (byte) order."""
    from ireval_core._arrow import byte_groups

    rng = random.Random(shape)
    if shape == "adversarial":
        values = _adversarial_ids(rng, 3000)
    else:
        pool = doc_pool(shape, rng, 2000)
        values = [rng.choice(pool) for _ in range(3000)]
    arr = string_array(values)
    found = byte_groups(arr)
    assert found is not None
    order, starts = found
    want = pc.take(arr, pc.sort_indices(arr)).to_pylist()
    assert [values[i] for i in order] == want
    changes = [True] + [a != b for a, b in zip(want[:-1], want[1:], strict=True)]
    assert starts.tolist() == changes
    assert byte_groups(string_array(["a\x00", "a"])) is None  # a zero byte


@pytest.mark.parametrize("shape", ["uuid", "adversarial"])
def test_long_ids_mostly_distinct_are_sorted_to_the_same_codes(shape: str) -> None:
    """A run's long ids, most of them distinct, are coded by sorting every row (no hash
    table): the same byte-rank codes and distinct ids as hashing them and ranking the
    distinct ones, chunked or not. UUIDs: more than the sample, through doc_codes_of
    (one length, one chunk: the matrix is the ids' own bytes); adversarial ids: the sort
    path itself."""
    from ireval_core.idcodes import (
        _byte_ranked,
        _codes_by_byte_sort,
        dictionary_codes,
        doc_codes_of,
        mostly_distinct,
    )

    rng = random.Random(shape)
    n = 70_000 if shape == "uuid" else 4_000
    values = (_adversarial_ids(rng, n) if shape == "adversarial"
              else [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(n)])
    values += values[: n // 20]  # repeats
    arr = string_array(values)
    want_codes, want_ids = _byte_ranked(*dictionary_codes(arr))
    chunked = pa.chunked_array([arr.slice(0, n // 2), arr.slice(n // 2)])
    for given in (arr, chunked):
        if shape == "uuid":
            assert mostly_distinct(given)
            codes, ids, ranked_ = doc_codes_of([given])
            assert ranked_
        else:
            got = _codes_by_byte_sort([given])
            assert got is not None
            codes, ids, no_map = got
            assert no_map is None  # no qrels given
        assert codes.dtype == np.int32 and codes.tolist() == want_codes.tolist()
        assert ids.to_pylist() == want_ids.to_pylist()
    assert ids.to_pylist() == sorted(set(values), key=lambda v: v.encode())
    if shape == "uuid":
        assert not mostly_distinct(string_array(values[:5000] * 15))  # few: hashed


def _run_and_qrels_ids(shape: str, rng: random.Random, n: int
                       ) -> tuple[list[str], list[str]]:
    """A run's ids (mostly distinct, with repeats) and qrels' distinct ids (any order):
    some of the run's, some absent from it, some longer and some shorter than its
    longest id, ids that are prefixes of run ids and run ids that are prefixes of them."""
    if shape == "adversarial":
        pool = _adversarial_ids(rng, 2 * n)
    else:
        pool = doc_pool(shape, rng, 2 * n)
    run = pool[:n] + pool[: n // 10]
    rng.shuffle(run)
    extra = [run[0] + "z", run[1][:-1], "y" * 400, "0", "ÿÿ", "", run[2] + "\u00e9"]
    qrels = list(dict.fromkeys(rng.sample(pool[:n], n // 4) + pool[n: n + n // 4] + extra))
    rng.shuffle(qrels)
    return run, qrels


@pytest.mark.parametrize("shape", ["prefixed", "uuid", "mixed", "adversarial"])
def test_doc_map_from_the_sorted_rows_is_the_hash_tables(shape: str) -> None:
    """A run coded with its qrels' ids at hand (``doc_codes_of(..., qrels_docs=)``) gets
    the same codes and ids as without them, and the document map computed from the sort's
    rows is :func:`doc_code_map`'s by a hash table: qrels ids absent from the run and run
    ids absent from the qrels, longer and shorter ids, prefixes of one another; chunked or
    not; a map asked for once (then computed again, equal); empty qrels give none."""
    from ireval_core import idcodes
    from ireval_core.idcodes import _codes_by_byte_sort, doc_code_map, doc_codes_of

    rng = random.Random(f"map-{shape}")
    run, qrels = _run_and_qrels_ids(shape, rng, 2000)
    qrels_docs = string_array(qrels)
    arr = string_array(run)
    want_codes, want_ids = _codes_by_byte_sort([arr])[:2]
    hashed = pc.index_in(want_ids, value_set=qrels_docs).to_numpy(zero_copy_only=False)
    want_map = [-1 if v is None or v != v else int(v) for v in hashed]
    for given in (arr, pa.chunked_array([arr.slice(0, 1000), arr.slice(1000)])):
        got = _codes_by_byte_sort([given], qrels_docs)
        assert got is not None
        codes, ids, doc_map = got
        assert codes.tolist() == want_codes.tolist() and ids.equals(want_ids)
        if shape == "uuid" and given is arr:
            assert doc_map is None  # read in place: the map is left to doc_code_map
        else:
            assert doc_map is not None and doc_map.tolist() == want_map
        assert _codes_by_byte_sort([given], string_array([]))[2] is None
    monkey_sample = idcodes.SAMPLE_KEYS
    try:
        idcodes.SAMPLE_KEYS = 256  # small enough for the sort to be taken here
        codes, ids, ranked_ = doc_codes_of([arr], qrels_docs=qrels_docs)
    finally:
        idcodes.SAMPLE_KEYS = monkey_sample
    assert ranked_ and codes.tolist() == want_codes.tolist() and ids.equals(want_ids)
    first = doc_code_map(ids, qrels_docs)
    assert first.tolist() == want_map
    assert doc_code_map(ids, qrels_docs).tolist() == want_map  # computed again: equal
    assert doc_code_map(ids, string_array(qrels[:10])).tolist() == [
        -1 if m < 0 or m >= 10 else m for m in want_map]  # another qrels: not the kept map


def test_runs_read_beside_their_qrels_evaluate_the_same() -> None:
    """Runs read beside their qrels (:func:`read_qrels_alongside`, where a run's document
    map comes from its ids' sort) have the same codes, ids, document map and every
    per-query value as the same files read one after the other; ties included."""
    from ireval_core import idcodes
    from ireval_core.data import run_doc_map
    from ireval_core.io import read_qrels, read_qrels_alongside, read_runs

    rng = random.Random("beside")
    run_ids, qrels_ids = _run_and_qrels_ids("mixed", rng, 2400)
    run_ids = list(dict.fromkeys(i for i in run_ids if i))
    lines = [f"q{i % 3} Q0 {d} 0 {rng.choice([1.0, 2.0, 2.5])} sys\n"
             for i, d in enumerate(run_ids)]
    judged = [f"q{i % 3} 0 {d} {rng.choice([0, 1, 2])}\n" for i, d in
              enumerate(qrels_ids) if d and " " not in d]
    run_bytes, qrels_bytes = "".join(lines).encode(), "".join(judged).encode()
    monkey_sample = idcodes.SAMPLE_KEYS
    try:
        idcodes.SAMPLE_KEYS = 256  # the sort (and the map from it) taken at this size
        qrels, runs = read_qrels_alongside(qrels_bytes, lambda: read_runs(run_bytes, name="r"))
        apart_qrels, apart_runs = read_qrels(qrels_bytes), read_runs(run_bytes, name="r")
    finally:
        idcodes.SAMPLE_KEYS = monkey_sample
    (run,), (apart,) = runs, apart_runs
    assert id(run.doc_ids) in idcodes._MAPS  # the map came out of the run's sort
    assert id(apart.doc_ids) not in idcodes._MAPS
    assert run.doc_ids.equals(apart.doc_ids) and run.dcode.tolist() == apart.dcode.tolist()
    assert run_doc_map(qrels, run).tolist() == run_doc_map(apart_qrels, apart).tolist()
    assert (run_doc_map(qrels, run) >= 0).sum() > 100
    got, want = evaluate(qrels, run, SPECS), evaluate(apart_qrels, apart, SPECS)
    for spec in SPECS:
        a, b = got.per_query(run.name, spec), want.per_query(apart.name, spec)
        assert list(a.index) == list(b.index) and len(a) == 3
        assert np.array_equal(a.to_numpy(), b.to_numpy(), equal_nan=True), spec


@pytest.mark.parametrize("shape", SHAPES)
def test_float32_ties_of_trec_eval_9_follow_byte_order(shape: str) -> None:
    """trec_eval 9.0.8 reads scores as float32: scores apart only beyond it tie, and are
    then ordered by document id descending (``version_order`` relies on the byte ranks)."""
    from ireval_core.data import version_order

    rng = random.Random(shape)
    docs = doc_pool(shape, rng, 60)
    run = {q: {d: 0.1 + rng.choice([0, 1, 2]) * 1e-12 + rng.choice([0, 0.5])
               for d in rng.sample(docs, 25)} for q in ("7", "10", "q1")}
    built = Run.from_dict(run, name="s")
    order, score32 = version_order(built, "9.0.8")
    assert order is not None and score32 is not None
    got = list(zip(built.query_ids[built.qcode[order]].tolist(),
                   built.doc_ids.take(pa.array(built.dcode[order])).to_pylist(), strict=True))
    rows = [(q, d, float(np.float32(s))) for q, v in run.items() for d, s in v.items()]
    assert got == reference_order(rows)


def test_byte_groups_sort_only_where_a_window_tells_rows_apart() -> None:
    """Rows read 8 bytes at a time: groups whose rows agree on a window (repeated ids, or
    ids sharing 8, 16 or 24 bytes) are carried to the next window unsorted and still come
    out grouped and in byte order, like Arrow's sort."""
    from ireval_core._arrow import _window_groups, byte_groups, padded_matrix

    rng = random.Random(11)
    heads = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3000)]
    values = heads + [h[:cut] + f"{rng.randrange(16**6):06x}"[: 36 - cut] + h[cut + 6:]
                      for h in heads[:60] for cut in (8, 16, 20, 24, 30)]
    values += heads[100:400]  # repeats: tied at every window
    rng.shuffle(values)
    arr = string_array(values)
    matrix = padded_matrix(arr)
    assert matrix is not None and _window_groups(matrix) is not None  # the window path
    found = byte_groups(arr)
    assert found is not None
    order, starts = found
    want = pc.take(arr, pc.sort_indices(arr)).to_pylist()
    assert [values[i] for i in order] == want
    assert starts.tolist() == [True] + [a != b for a, b in zip(want[:-1], want[1:],
                                                                strict=True)]


@pytest.mark.parametrize("shape", ["prefixed", "mixed", "adversarial"])
def test_packed_words_two_columns_at_a_time_equal_one_at_a_time(shape: str) -> None:
    """The words filled from pairs of columns (a C-contiguous matrix of many rows; any
    number here) equal those filled column by column (any other matrix), for even and odd
    widths."""
    from ireval_core._arrow import _packed_words, padded_matrix

    rng = random.Random(shape)
    values = (_adversarial_ids(rng, 2000) if shape == "adversarial"
              else doc_pool(shape, rng, 2000))
    matrix = padded_matrix(string_array(values))
    assert matrix is not None
    for width in (matrix.shape[1], matrix.shape[1] + 1):
        contiguous = np.zeros((len(matrix), width), dtype=np.uint8)
        contiguous[:, : matrix.shape[1]] = matrix
        wider = np.zeros((len(matrix), width + 1), dtype=np.uint8)
        wider[:, :width] = contiguous
        strided = wider[:, :width]  # the same bytes, not C-contiguous
        assert contiguous.flags.c_contiguous and not strided.flags.c_contiguous
        by_pairs = _packed_words(contiguous, pair_rows=0)  # as from 1M rows on
        by_columns = _packed_words(strided, pair_rows=0)
        assert len(by_pairs) == len(by_columns)
        assert all(np.array_equal(a, b) for a, b in zip(by_pairs, by_columns, strict=True))


@pytest.mark.parametrize("case", ["uuid", "shared-prefix", "long-ties", "other-width"])
def test_document_map_of_one_length_ids_by_window_like_a_hash_lookup(case: str) -> None:
    """Run ids in byte order, qrels ids in any order, all of one length: each qrels id's
    8-byte window is searched among the run's and the few run ids it points to compared
    byte for byte. Windows shared by several run ids, ids absent from either side, a
    window shared by too many run ids or qrels ids of another length (left to the hash
    table): the map equals a hash lookup."""
    from ireval_core.idcodes import MAX_WINDOW_RANGE, _merged_by_window

    rng = random.Random(case)
    pool = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(6000)]
    if case == "shared-prefix":  # the window starts after the prefix every run id shares
        pool = ["clueweb09-en" + p[:13] for p in pool]
    twins = [p[:12] + f"{i:04d}" + p[16:] for p in pool[:50] for i in range(3)]
    crowd = ([pool[0][:8] + f"{i:028d}" for i in range(MAX_WINDOW_RANGE + 1)]
             if case == "long-ties" else [])  # one window, more run ids than searched
    pool = sorted(set(pool + twins), key=str.encode)
    run_docs = string_array(sorted(set(rng.sample(pool, 5000) + crowd), key=str.encode))
    judged = rng.sample(pool, 2500) + crowd[:1] + ["z" * len(pool[0])]
    if case == "other-width":
        judged.append("short")
    qrels_docs = string_array(judged)
    want = pc.index_in(run_docs, value_set=qrels_docs).to_numpy(zero_copy_only=False)
    want = np.where(np.isnan(want.astype(float)), -1, want.astype(float)).astype(np.int64)
    assert doc_code_map(run_docs, qrels_docs).tolist() == want.tolist()
    by_window = _merged_by_window(run_docs, qrels_docs)
    if case in ("long-ties", "other-width"):
        assert by_window is None
    else:
        assert by_window is not None and by_window.tolist() == want.tolist()
        assert (want >= 0).sum() > 1000


def test_sampled_rows_and_strings_of_rows_without_copies_are_exact() -> None:
    """The sample of a chunked column is taken chunk by chunk (no joined copy of the
    column) and equals Arrow's take, across chunk edges and empty chunks; rows of one
    length become strings on the matrix's own bytes, equal to the trimmed path's."""
    from ireval_core._arrow import padded_matrix, strings_of_rows
    from ireval_core.idcodes import _taken

    rng = random.Random(5)
    values = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3000)]
    arr = string_array(values)
    chunked = pa.chunked_array([arr.slice(0, 0), arr.slice(0, 1000), arr.slice(1000, 0),
                                arr.slice(1000, 1999), arr.slice(2999)])
    for rows in (np.arange(0, 3000, 7), np.array([0, 999, 1000, 2998, 2999]),
                 np.zeros(0, dtype=np.int64)):
        got = _taken(chunked, rows)
        assert isinstance(got, pa.Array)
        assert got.to_pylist() == [values[i] for i in rows]
    matrix = padded_matrix(chunked)
    assert matrix is not None
    picked = np.array([5, 3, 2999, 0])
    assert strings_of_rows(matrix, picked).to_pylist() == [values[i] for i in picked]
    assert strings_of_rows(matrix).to_pylist() == values
    mixed = string_array(values[:10] + ["FBIS3-10082", "a"])  # several lengths: trimmed
    assert strings_of_rows(padded_matrix(mixed)).to_pylist() == values[:10] + [
        "FBIS3-10082", "a"]


def test_ids_of_one_length_in_chunks_are_sorted_in_place_to_the_same_codes() -> None:
    """A chunked column of UUIDs (repeats, ids sharing 8 to 30 leading bytes, a chunk
    of one row, empty chunks) is grouped piece by piece without a joined matrix: the same
    groups in byte order as the joined matrix's, and the sort path gives the same codes,
    distinct ids and document map as hashing and a hash-table lookup give."""
    from ireval_core._arrow import (
        matrix_groups,
        padded_matrix,
        pieced_groups,
        pieces_of_one_length,
    )
    from ireval_core.idcodes import _byte_ranked, _codes_by_byte_sort, dictionary_codes

    rng = random.Random(12)
    heads = [str(uuid.UUID(int=rng.getrandbits(128))) for _ in range(3000)]
    values = heads + [h[:cut] + f"{rng.randrange(16**6):06x}"[: 36 - cut] + h[cut + 6:]
                      for h in heads[:60] for cut in (8, 16, 20, 24, 30)]
    values += heads[100:400]
    rng.shuffle(values)
    arr = string_array(values)
    chunked = pa.chunked_array([arr.slice(0, 1), arr.slice(1, 0), arr.slice(1, 1500),
                                arr.slice(1501)])
    pieces = pieces_of_one_length(chunked)
    assert pieces is not None and len(pieces.pieces) == 3
    order, starts = pieced_groups(pieces)
    want_order, want_starts = matrix_groups(padded_matrix(arr))
    assert starts.tolist() == want_starts.tolist()
    assert [values[i] for i in order] == [values[i] for i in want_order]
    assert pieces_of_one_length(pa.chunked_array([arr.slice(0, 5), string_array(["a"])])) \
        is None  # several lengths
    qrels = string_array(heads[::3] + ["not-a-run-id"])
    want_codes, want_ids = _byte_ranked(*dictionary_codes(arr))
    found = _codes_by_byte_sort([chunked], qrels)  # the sort path (doc_codes_of: >65,536)
    assert found is not None
    codes, ids, got_map = found
    assert got_map is not None and codes.tolist() == want_codes.tolist()
    assert ids.to_pylist() == want_ids.to_pylist()
    want_map = pc.index_in(ids, value_set=qrels).to_numpy(zero_copy_only=False)
    assert got_map.tolist() == [-1 if v != v else int(v) for v in want_map]
