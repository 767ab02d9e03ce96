"""The columnar data model: ranking order, duplicate detection, the join with qrels."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from ireval_core import evaluate
from ireval_core.data import DuplicateEntryError, Qrels, Run, join
from ireval_core.idcodes import dictionary_codes
from ireval_core.options import EvalOptions

DOCS = [f"d{i}" for i in range(30)] + ["é", "B", "ab", "a"]


def reference_order(rows: list[tuple[str, str, float]]) -> list[tuple[str, str]]:
    """trec_eval's order with plain sorts: query, score descending, docid bytes descending."""
    out = sorted(rows, key=lambda r: r[1].encode(), reverse=True)
    out = sorted(out, key=lambda r: -r[2])
    out = sorted(out, key=lambda r: r[0])
    return [(q, d) for q, d, _ in out]


def ranked(run: Run) -> list[tuple[str, str]]:
    docs = run.doc_ids.take(pa.array(run.dcode)).to_pylist()
    return list(zip(run.query_ids[run.qcode].tolist(), docs, strict=True))


# ids whose tied bytes fit in 8 bytes after a shared prefix are ordered as integers;
# longer ones (URLs, ClueWeb ids) by sorting the strings: both must give trec_eval's order
LONG_DOCS = [f"clueweb09-en{i:04d}-{j:02d}-{k:05d}" for i, j, k in
             [(0, 0, 1), (0, 0, 10), (1, 0, 1), (0, 3, 7), (12, 9, 99), (0, 0, 2)]] + [
    "http://a.example/x", "http://a.example/", "http://b.example/é", "z" * 9, "z" * 10]
PREFIXED_DOCS = [f"clueweb-{n:08d}" for n in (7, 70, 123, 9, 77777777, 8, 10)]


@pytest.mark.parametrize("docs", [DOCS, LONG_DOCS, PREFIXED_DOCS],
                         ids=["short", "long", "prefixed"])
@pytest.mark.parametrize("layout", ["engine", "query-shuffled", "rows-shuffled"])
@pytest.mark.parametrize("seed", range(40))
def test_ranking_order_matches_reference(seed: int, layout: str, docs: list[str]) -> None:
    rng = random.Random(seed)
    rows = []
    for q in rng.sample(range(9), rng.randint(1, 5)):
        for doc in rng.sample(docs, rng.randint(1, min(14, len(docs)))):
            rows.append((f"q{q}", doc, float(rng.choice([0.5, 1, 2, 2, 3, 1e9, -1]))))
    # "engine": grouped by query, scores descending, ties in arbitrary docid order
    rows.sort(key=lambda r: (r[0], -r[2]))
    if layout == "query-shuffled":
        groups: dict[str, list] = {}
        for r in rows:
            groups.setdefault(r[0], []).append(r)
        keys = list(groups)
        rng.shuffle(keys)
        rows = [r for k in keys for r in groups[k]]
    elif layout == "rows-shuffled":
        rng.shuffle(rows)
    run = Run.from_arrays([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows],
                          name="x")
    assert ranked(run) == reference_order(rows)
    assert run.offsets[-1] == len(rows)
    assert np.all(np.diff(run.qcode) >= 0)


def test_already_ranked_input_is_kept_as_is() -> None:
    run = Run.from_arrays(["a", "a", "b"], ["x", "w", "z"], [2.0, 2.0, 1.0], name="r")
    assert ranked(run) == [("a", "x"), ("a", "w"), ("b", "z")]


def test_duplicates_name_rows() -> None:
    with pytest.raises(DuplicateEntryError) as info:
        Run.from_arrays(["q", "q", "p", "q"], ["a", "b", "a", "a"], [1, 2, 3, 4], name="r")
    assert info.value.rows == (0, 3)
    assert (info.value.query_id, info.value.doc_id) == ("q", "a")
    with pytest.raises(DuplicateEntryError):
        Qrels.from_arrays(["q", "q"], ["a", "a"], [1, 0])


def test_join_aligns_grades_and_ideal() -> None:
    qrels = Qrels.from_dict({"q1": {"a": 2, "b": 0, "c": -1, "z": 3}, "q2": {"a": 1}})
    run = Run.from_dict({"q1": {"a": 0.1, "b": 0.9, "c": 0.5, "u": 0.7}, "q3": {"a": 1.0}},
                        name="r")
    r = join(qrels, run)
    assert list(r.query_ids) == ["q1"]
    assert r.grade.tolist()[:1] == [0.0]  # b first (0.9)
    assert np.isnan(r.grade[1])  # u: unjudged
    assert r.grade.tolist()[2:] == [-1.0, 2.0]
    assert r.pos.tolist() == [1, 2, 3, 4]
    assert r.ideal_grade.tolist() == [3.0, 2.0, 0.0, -1.0]
    assert r.n_relevant(1).tolist() == [2] and r.n_nonrelevant(1).tolist() == [1]
    full = join(qrels, run, options=EvalOptions(complete=True))
    assert list(full.query_ids) == ["q1", "q2"]
    assert full.offsets.tolist() == [0, 4, 4]  # q2 absent from the run: empty ranking
    assert full.max_grade == 3.0


def test_join_depth_then_judged_only() -> None:
    qrels = Qrels.from_dict({"q": {"a": 1, "b": 1}})
    run = Run.from_dict({"q": {"x": 3.0, "a": 2.0, "b": 1.0}}, name="r")
    assert join(qrels, run, options=EvalOptions(depth=2)).grade.size == 2
    # trec_eval -M1 -J: x cut, then
    cut_first = join(qrels, run, options=EvalOptions(depth=1, judged_only=True))
    assert cut_first.grade.size == 0  # dropped as unjudged: nothing left
    condensed = join(qrels, run, options=EvalOptions(judged_only=True))
    assert condensed.grade.tolist() == [1.0, 1.0] and condensed.pos.tolist() == [1, 2]
    with pytest.raises(ValueError, match="'depth' parameter"):
        join(qrels, run, options=EvalOptions(depth=0))


def test_large_string_input_is_accepted() -> None:
    n = 50_000
    q = np.array([f"q{i % 7}" for i in range(n)])
    d = np.array([f"doc{i}" for i in range(n)])
    run = Run.from_arrays(q, d, np.arange(n, dtype=float), name="big")
    assert len(run) == n and run.n_queries == 7


def _decoded(codes: np.ndarray, dictionary: pa.Array) -> list[str]:
    return dictionary.take(pa.array(codes)).to_pylist()


@pytest.mark.parametrize("chunks", [1, 2, 7])
def test_dictionary_codes_of_chunked_columns(chunks: int) -> None:
    rng = random.Random(chunks)
    values = [rng.choice(DOCS) for _ in range(200)]
    cuts = sorted(rng.sample(range(1, 200), chunks - 1))
    parts = [values[a:b] for a, b in zip([0, *cuts], [*cuts, 200], strict=True)]
    plain = pa.chunked_array([pa.array(p, pa.string()) for p in parts])
    # chunks dictionary-coded separately (as pyarrow's CSV reader does), each its own dictionary
    coded = pa.chunked_array([pa.array(p, pa.string()).dictionary_encode() for p in parts])
    for column in (plain, coded, pa.array(values)):
        codes, dictionary = dictionary_codes(column)
        assert codes.dtype == np.int32
        assert _decoded(codes, dictionary) == values
        assert dictionary.to_pylist() == list(dict.fromkeys(values))  # first appearance


# ----------------------------------------------------------------------------- kept joins


def _random_pair(seed: int) -> tuple[Qrels, list[Run]]:
    rng = np.random.default_rng(seed)
    qrels = Qrels.from_arrays(
        [f"q{i % 7}" for i in range(60)], [f"d{i}" for i in range(60)],
        rng.integers(-1, 4, 60))
    runs = []
    for name in ("a", "b"):
        n = 80
        runs.append(Run.from_arrays([f"q{i % 8}" for i in range(n)],
                                    [f"d{rng.integers(0, 90)}x{i}" if i % 3 else f"d{i}"
                                     for i in range(n)],
                                    np.round(rng.random(n), 1), name=name))
    return qrels, runs


def test_join_cache_gives_the_same_numbers_and_reuses_joins() -> None:
    from ireval_core.data import JoinCache
    from ireval_core.evaluate import evaluate

    qrels, runs = _random_pair(3)
    cache = JoinCache()
    measures = ["AP", "nDCG@10", "P@5", "bpref", "recall@20"]
    for options in (EvalOptions(), EvalOptions(rel_level=2), EvalOptions(depth=5),
                    EvalOptions(complete=True, judged_only=True), EvalOptions(rel_level=3)):
        fresh = evaluate(qrels, runs, measures, options=options)
        kept = evaluate(qrels, runs, measures, options=options, joins=cache)
        for key, values in fresh.values.items():
            np.testing.assert_array_equal(kept.values[key], values)
    # rel_level 2 and 3 reuse the default join: 3 distinct joins x 2 runs were made
    assert (cache.misses, cache.hits) == (6, 4)
    ranked = cache.ranked(qrels, runs[0], EvalOptions(rel_level=2))
    assert not ranked.grade.flags.writeable  # shared between pages: read-only
    with pytest.raises(ValueError):
        ranked.grade[0] = 1.0


def test_join_cache_is_bounded_by_bytes_and_checks_identity() -> None:
    from ireval_core.data import JoinCache

    qrels, runs = _random_pair(4)
    one = join(qrels, runs[0]).nbytes
    cache = JoinCache(max_bytes=one + one // 2)  # room for one join, not two
    cache.ranked(qrels, runs[0], EvalOptions())
    cache.ranked(qrels, runs[1], EvalOptions())
    assert len(cache) == 1 and cache.nbytes <= cache.max_bytes
    # an equal but distinct qrels object is another dataset: joined afresh, not confused
    other = Qrels.from_dict({q: {d: 0 if g > 0 else 1 for d, g in docs.items()}
                             for q, docs in qrels.to_dict().items()})
    before = cache.misses
    got = cache.ranked(other, runs[1], EvalOptions())
    assert cache.misses == before + 1
    np.testing.assert_array_equal(got.grade, join(other, runs[1]).grade)
    cache.clear()
    assert len(cache) == 0 and cache.nbytes == 0


def test_dataset_evaluate_equals_evaluate() -> None:
    from ireval_core.dataset import Dataset
    from ireval_core.evaluate import evaluate

    qrels, runs = _random_pair(5)
    ds = Dataset(qrels, runs)
    for options in (EvalOptions(), EvalOptions(rel_level=2, depth=7)):
        a = ds.evaluate(["AP", "RR", "nDCG"], options)
        b = evaluate(qrels, runs, ["AP", "RR", "nDCG"], options=options)
        assert a.aggregates == b.aggregates
    np.testing.assert_array_equal(ds.ranked("b", EvalOptions()).grade,
                                  join(qrels, runs[1]).grade)


def test_join_cache_computes_a_join_once_for_threads_asking_together() -> None:
    import threading

    from ireval_core.data import JoinCache

    qrels, runs = _random_pair(6)
    cache = JoinCache()
    barrier = threading.Barrier(4)
    got: list[object] = []

    def ask() -> None:
        barrier.wait()
        got.append(cache.ranked(qrels, runs[0], EvalOptions()))

    threads = [threading.Thread(target=ask) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert cache.misses == 1 and cache.hits == 3
    assert all(r is got[0] for r in got)


def test_prefetch_joins_in_the_background_once_per_option_set() -> None:
    from ireval_core.dataset import Dataset

    qrels, runs = _random_pair(7)
    ds = Dataset(qrels, runs)
    thread = ds.prefetch(EvalOptions(rel_level=2))
    assert thread is not None
    thread.join(timeout=300)
    assert not thread.is_alive() and ds.joins.misses == 2  # one join per run
    assert ds.prefetch(EvalOptions(rel_level=3)) is None  # same joins: asked for already
    ds.evaluate(["AP"], EvalOptions())
    assert (ds.joins.misses, ds.joins.hits) == (2, 2)
    later = ds.prefetch(EvalOptions(depth=5))  # another depth: other joins
    assert later is not None
    later.join(timeout=300)
    assert not later.is_alive() and ds.joins.misses == 4


@pytest.mark.parametrize("grades", [
    [0, 1, 2, 3],  # the usual scale
    [-2, -1, 0, 1, 4],  # negative grades (pooled, not judged) and a gap
    [0.5, 1.0, 2.25],  # non-integer grades: ranked with np.unique
    [0, 1, np.nan],  # NaN (through the API only) sorts last
    [0, 70000],  # wider than the arithmetic path takes
])
def testdescending_within_are_sorted_descending_within_each_query(grades: list[float]) -> None:
    from ireval_core.data import descending_within

    rng = np.random.default_rng(7)
    qidx = np.sort(rng.integers(0, 50, 2000))
    grade = rng.choice(np.array(grades, dtype=np.float64), size=len(qidx))
    got = descending_within(grade, qidx)
    # the reference: sort each query's grades, descending, NaN last
    want = np.concatenate([
        np.concatenate([np.sort(g[~np.isnan(g)])[::-1], g[np.isnan(g)]])
        for g in (grade[qidx == q] for q in np.unique(qidx))])
    np.testing.assert_array_equal(got, want)
    assert len(descending_within(grade[:0], qidx[:0])) == 0


@pytest.mark.parametrize("ids", ["keyed", "long", "unsorted", "keyed_big_qrels",
                                 "long_big_qrels"])
def test_doc_code_map_matches_hash_lookup(ids: str) -> None:
    """The integer-key path (ids in byte order), the fixed-width bytes path and the hash
    path give the same map, whether the run or the qrels hold more documents."""
    from ireval_core.idcodes import doc_code_map

    rng = np.random.default_rng(3)
    n_run, n_qrels = (6_000, 30_000) if ids.endswith("big_qrels") else (20_000, 5_000)
    if not ids.startswith("long"):  # short ids after a shared prefix (byte order unless
        # "unsorted")
        run = [f"doc-{i:06d}" for i in rng.choice(10**6, n_run, replace=False)]
        qrels = [f"doc-{i:06d}" for i in rng.choice(10**6, n_qrels, replace=False)]
        qrels += run[:3000]  # some run documents are judged
    else:  # longer than 8 bytes after the prefix: merged as fixed-width bytes
        run = [f"x{i:012d}" for i in rng.choice(10**9, n_run, replace=False)]
        qrels = run[:3000] + [f"x{i:012d}" for i in range(n_qrels)]
    run_docs = pa.array(sorted(set(run)) if ids != "unsorted" else list(dict.fromkeys(run)))
    qrels_docs = pa.array(sorted(set(qrels)) if ids != "unsorted"
                          else list(dict.fromkeys(qrels)))
    where = {d: i for i, d in enumerate(qrels_docs.to_pylist())}
    want = np.array([where.get(d, -1) for d in run_docs.to_pylist()])
    np.testing.assert_array_equal(doc_code_map(run_docs, qrels_docs), want)


@pytest.mark.parametrize(("run_form", "qrels_form", "merged"), [
    ("doc-{:06d}", "doc-{:06d}", True),  # the same prefix (doc-0)
    ("doc-9{:05d}", "doc-{}", True),  # the run's prefix longer (doc-9): its keys moved
    ("doc-{}", "doc-9{:05d}", True),  # the qrels' prefix longer
    ("{}", "{}", True),  # unpadded numbers, no shared prefix, an empty qrels id
    ("ab{:08d}", "a{}", False),  # judged ab000 + 5 bytes: the qrels are not keys
    ("a{}", "b{}", False),  # prefixes that do not nest (nothing judged is retrieved)
])
def test_doc_code_map_of_coded_ids_merges_their_keys(run_form: str, qrels_form: str,
                                                     merged: bool) -> None:
    """Ids coded as integer keys (doc_codes) keep them: the map merges those keys, with
    prefixes equal or nested, and gives what a hash lookup of the strings gives."""
    from ireval_core.idcodes import _shared_keys, doc_code_map, doc_codes, remembered_keys

    rng = np.random.default_rng(5)
    run = [run_form.format(i) for i in rng.integers(0, 10**5, size=9_000)]
    qrels = [qrels_form.format(i) for i in rng.integers(0, 10**5, size=3_000)]
    judged = run_form[0] == qrels_form[0]
    qrels += run[:500] * judged + [""] * (qrels_form == "{}")  # judged run ids; empty id
    _, run_docs, _ = doc_codes(pa.array(run))
    _, qrels_docs, _ = doc_codes(pa.array(qrels), rank=False)
    assert remembered_keys(run_docs) is not None
    assert remembered_keys(pa.array(run_docs.to_pylist())) is None  # another array
    assert (_shared_keys(run_docs, qrels_docs) is not None) is merged
    where = {d: i for i, d in enumerate(qrels_docs.to_pylist())}
    want = np.array([where.get(d, -1) for d in run_docs.to_pylist()])
    assert (want >= 0).sum() >= 300 * judged
    np.testing.assert_array_equal(doc_code_map(run_docs, qrels_docs), want)
    swapped = {d: i for i, d in enumerate(run_docs.to_pylist())}  # the other way round
    np.testing.assert_array_equal(doc_code_map(qrels_docs, run_docs),
                                  [swapped.get(d, -1) for d in qrels_docs.to_pylist()])


@pytest.mark.parametrize("seed", range(6))
def test_ties_by_code_sorts_codes_as_order_ties_moves_rows(seed: int) -> None:
    """The code-only tie step of Run.from_columns equals the row permutation it replaced."""
    from ireval_core.data import _order_ties, _ties_by_code

    rng = np.random.default_rng(seed)
    n_docs, lengths = 5_000, rng.integers(1, 400, size=60)
    qcode = np.repeat(np.arange(len(lengths), dtype=np.int32), lengths)
    score = np.concatenate([-np.sort(-rng.choice([0.1, 0.5, 0.5, 0.9, 2.0], size=k))
                            for k in lengths])  # descending within each query, tie-heavy
    dcode = np.concatenate([rng.choice(n_docs, size=k, replace=False) for k in lengths]
                           ).astype(np.int32)
    ids = pa.array([f"d{i:06d}" for i in range(n_docs)])  # codes are byte ranks
    order = _order_ties(None, qcode, score, dcode, ids, byte_ranked=True)
    expected = dcode if order is None else dcode[order]
    got = _ties_by_code(qcode, score, dcode, ids, byte_ranked=True)
    assert got.dtype == dcode.dtype and np.array_equal(got, expected)
    assert not np.array_equal(got, dcode)  # the data has ties out of order
    untied = np.arange(len(dcode), dtype=np.int32)  # nothing ties: the same codes back
    assert _ties_by_code(untied, score, dcode, ids, byte_ranked=True) is dcode


@pytest.mark.parametrize(("form", "rows", "high", "hashed"), [
    *((form, 30_000, 9_000_000, True)  # fewer rows than the sample: hashed
      for form in ("padded", "numbers", "prefix")),  # prefix: too long for keys
    *((form, 70_000, high, high < 10_000)  # few distinct: hashed; nearly all: sorted
      for form in ("padded", "numbers") for high in (5_000, 9_000_000)),
])
def test_doc_codes_of_short_ids_are_byte_ranks(form: str, rows: int, high: int,
                                               hashed: bool) -> None:
    """Ids that become integer keys are coded by hashing the keys, then ranking the
    distinct ones, or by sorting them all, whichever the estimated share of distinct
    ones says: the codes must be the byte ranks of the ids, as np.unique gives them."""
    from ireval_core._arrow import byte_order_keys_and_prefix
    from ireval_core.idcodes import doc_codes_of, few_distinct

    rng = np.random.default_rng(7)
    numbers = rng.integers(0, high, size=rows)
    ids = {"padded": [f"clueweb-{x:08d}" for x in numbers],
           "numbers": [str(x) for x in numbers],
           "prefix": [f"FT{x % 977}-{x}" for x in numbers]}[form]
    if form != "prefix":
        keyed = byte_order_keys_and_prefix(pa.array(ids))
        assert keyed is not None and few_distinct(keyed[0]) is hashed
    codes, distinct, ranked_ = doc_codes_of([pa.array(ids)])
    as_bytes = np.array([s.encode() for s in ids], dtype=object)
    uniq, inverse = np.unique(as_bytes, return_inverse=True)
    assert ranked_ and codes.dtype == np.int32
    assert [s.encode() for s in distinct.to_pylist()] == uniq.tolist()
    assert np.array_equal(codes, inverse.reshape(-1))


@pytest.mark.parametrize("keys", ["many", "few", "edges"])
def test_key_coding_by_hash_and_by_sort_give_the_same_bits(keys: str) -> None:
    """Both ways of coding integer keys give the same codes and distinct keys, exactly."""
    from ireval_core.idcodes import key_codes_by_hash, key_codes_by_sort

    rng = np.random.default_rng(3)
    values = {"many": rng.integers(0, 2**63, size=200_000, dtype=np.int64).astype(np.uint64),
              "few": rng.integers(0, 50, size=200_000).astype(np.uint64) << np.uint64(40),
              "edges": np.array([2**64 - 1, 0, 1, 2**64 - 1, 2**63, 0], dtype=np.uint64)}[keys]
    by_hash = key_codes_by_hash(values.copy())
    by_sort = key_codes_by_sort(values.copy())
    uniq, inverse = np.unique(values, return_inverse=True)
    for codes, distinct in (by_hash, by_sort):
        assert codes.dtype == np.int32 and distinct.dtype == np.uint64
        assert np.array_equal(codes, inverse.reshape(-1)) and np.array_equal(distinct, uniq)


def test_run_of_mostly_distinct_ids_is_the_same_either_way(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose documents are nearly all distinct (as MS MARCO's are) gives the same
    columns bit for bit whether its keys are hashed or sorted, and the same measures."""
    from ireval_core import idcodes

    rng = np.random.default_rng(11)
    n_q, depth = 80, 1_000
    qids = np.repeat([f"q{i}" for i in range(n_q)], depth)
    docs = np.array([str(x) for x in rng.choice(8_841_823, n_q * depth, replace=False)])
    src, moved = docs.copy(), np.arange(0, len(docs), 7)
    docs[moved] = src[(moved + depth) % len(docs)]  # some retrieved for two queries
    scores = np.round(rng.random(n_q * depth), 2)  # many ties: ordered by code
    qrels = Qrels.from_arrays(qids[::9], docs[::9], rng.integers(0, 3, len(docs[::9])))

    def build() -> tuple[Run, object]:
        run = Run.from_arrays(qids, docs, scores, name="r")
        return run, evaluate(qrels, run, ["AP", "nDCG@10", "P@10", "bpref"])

    assert not idcodes.few_distinct(docs.astype(np.uint64))  # as many distinct: sorted by default
    base, base_res = build()
    monkeypatch.setattr(idcodes, "HASH_DISTINCT_RATIO", 1.0)  # every share: hashed
    other, other_res = build()
    for name in ("query_ids", "qcode", "dcode", "score", "offsets"):
        assert np.array_equal(getattr(base, name), getattr(other, name)), name
    assert base.doc_ids.equals(other.doc_ids)
    for m in ("AP", "nDCG@10", "P@10", "bpref"):
        a, b = base_res.per_query("r", m), other_res.per_query("r", m)
        assert np.array_equal(a.to_numpy(), b.to_numpy()), m


@pytest.mark.parametrize("duplicate", [False, True])
def test_large_run_checks_duplicates_beside_the_ranking(
        duplicate: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above CONCURRENT_ROWS the duplicate check runs on a thread: same run, same error."""
    import ireval_core.data as data_module

    rows = [("q1", "d2", 1.0), ("q1", "d1", 1.0), ("q2", "d9", 3.0), ("q2", "d8", 0.5),
            ("q1", "d3", 2.0)] + ([("q2", "d8", 0.25)] if duplicate else [])
    q, d, s = (list(c) for c in zip(*rows, strict=True))
    outcomes = []
    for threshold in (1 << 40, 0):  # in turn, then concurrent
        monkeypatch.setattr(data_module, "CONCURRENT_ROWS", threshold)
        try:
            outcomes.append(ranked(Run.from_arrays(q, d, s, name="r")))
        except DuplicateEntryError as exc:
            outcomes.append((exc.rows, str(exc)))
    assert outcomes[0] == outcomes[1]
    if duplicate:
        assert outcomes[1][0] == (3, 5)
    else:
        assert outcomes[1] == reference_order(rows)
