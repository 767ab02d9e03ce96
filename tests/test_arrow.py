"""The pandas-free Arrow <-> numpy conversions agree with pyarrow's own, slices and
chunks included (the buffers of a sliced array start before its first value)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from ireval_core._arrow import (
    bool_array,
    from_numpy,
    string_array,
    to_numpy,
    to_numpy_filled,
    valid_mask,
)

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.float32,
                                   np.float64, np.bool_])
def test_to_numpy_matches_pyarrow_on_slices_and_chunks(dtype) -> None:
    values = (RNG.random(1000) < 0.5) if dtype is np.bool_ else (
        RNG.integers(-100, 100, 1000).astype(dtype))
    arr = pa.array(values)
    for start, stop in [(0, 1000), (3, 17), (5, 5), (999, 1000), (13, 700)]:
        part = arr.slice(start, stop - start)
        assert np.array_equal(to_numpy(part), part.to_numpy(zero_copy_only=False))
    chunked = pa.chunked_array([arr.slice(1, 10), arr.slice(11, 100), arr.slice(111, 3)])
    assert np.array_equal(to_numpy(chunked), chunked.to_numpy())
    assert to_numpy(chunked, np.float64).dtype == np.float64


def test_nulls_masks_and_fills() -> None:
    arr = pa.array([1, None, 3, None, 5], pa.int64())
    for part in (arr, arr.slice(1, 3)):
        assert valid_mask(part).tolist() == part.is_valid().to_pylist()
        expected = [-1 if v is None else v for v in part.to_pylist()]
        assert to_numpy_filled(part, -1).tolist() == expected
    assert np.isnan(to_numpy(pa.array([1.0, None]))).tolist() == [False, True]  # fallback
    assert to_numpy(pa.chunked_array([], pa.int32())).shape == (0,)


def test_from_numpy_and_bool_array_round_trip() -> None:
    x = RNG.integers(0, 1 << 40, 37)
    assert from_numpy(x).to_pylist() == x.tolist()
    assert from_numpy(x[::3]).to_pylist() == x[::3].tolist()  # not contiguous: copied
    mask = RNG.random(77) < 0.3
    assert bool_array(mask).to_pylist() == mask.tolist()
    assert from_numpy(mask).type == pa.bool_()
    with pytest.raises(TypeError, match="no Arrow type"):
        from_numpy(np.array(["a"]))


def test_strings_round_trip() -> None:
    values = ["", "q1", "007", "é", "日本語", "a b", "x" * 300]
    arr = string_array(values)
    assert arr.type == pa.string() and arr.to_pylist() == values
    arr.validate(full=True)
    assert string_array([]).to_pylist() == []


def _strcmp_order(values: list[str]) -> list[int]:
    return sorted(range(len(values)), key=lambda i: values[i].encode())


@pytest.mark.parametrize("seed", range(30))
def test_byte_order_keys_sort_like_strcmp(seed: int) -> None:
    from ireval_core._arrow import byte_order_keys

    rng = np.random.default_rng(seed)
    alphabet = list("0189abAZ-_.é") + ["\x7f", "ÿ"]
    prefix = ["", "clueweb-", "D", "doc"][seed % 4]
    values = sorted({prefix + "".join(rng.choice(alphabet, rng.integers(0, 5)))
                     for _ in range(200)})
    rng.shuffle(values)
    keys = byte_order_keys(string_array(values))
    assert keys is not None  # 4 characters of at most 2 UTF-8 bytes after the prefix
    got = np.argsort(keys, kind="stable").tolist()
    assert [values[i] for i in got] == [values[i] for i in _strcmp_order(values)]


@pytest.mark.parametrize("prefix", ["", "clueweb-", "é-", "x" * 30])
def test_byte_order_keys_are_the_bytes_after_the_prefix(prefix: str) -> None:
    """Each key is the id's bytes after the shared prefix, big-endian, zero-padded to 8
    (ASCII ids of several lengths are padded in Arrow, others byte by byte), for whole
    arrays, slices and chunks."""
    from ireval_core._arrow import byte_order_keys_and_prefix

    rng = np.random.default_rng(len(prefix))
    alphabet = list("0123456789azAZ-_.~")
    rests = ["".join(rng.choice(alphabet, rng.integers(0, 9))) for _ in range(3000)]
    values = [prefix + "7" + r[:7] for r in rests]  # "7": the shared prefix ends here
    whole = string_array(values)
    cut = pa.chunked_array([whole.slice(0, 1000), whole.slice(1000, 1500), whole.slice(2500)])
    for arr in (whole, whole.slice(3, 2000), cut):
        keyed = byte_order_keys_and_prefix(arr)
        assert keyed is not None and keyed[1] == (prefix + "7").encode()
        want = [int.from_bytes(v.encode()[len(keyed[1]):].ljust(8, b"\0"), "big")
                for v in arr.to_pylist()]
        assert keyed[0].tolist() == want


def test_byte_order_keys_declines_what_it_cannot_order() -> None:
    from ireval_core._arrow import byte_order_keys

    assert byte_order_keys(string_array(["a" * 9, "b"])) is None  # 9 bytes differ
    assert byte_order_keys(string_array(["x" * 40 + "a" * 8, "x" * 40 + "b"])) is not None
    assert byte_order_keys(string_array(["a\x00", "a"])) is None  # zero byte
    assert byte_order_keys(pa.array(["a", None])) is None
    assert byte_order_keys(string_array([])).shape == (0,)
    sliced = string_array(["zz", "b", "a", "c"]).slice(1, 3)
    assert np.argsort(byte_order_keys(sliced)).tolist() == [1, 0, 2]


def test_byte_order_keys_of_chunks_equal_those_of_the_whole() -> None:
    from ireval_core._arrow import byte_order_keys

    values = ["doc-17", "doc-9", "doc-123", "doc-5", "doc-5x", "doc-", "doc-99"]
    whole = string_array(values)
    for cut in ([2, 5], [1], [3, 4, 6]):
        bounds = [0, *cut, len(values)]
        chunked = pa.chunked_array([whole.slice(a, b - a)
                                    for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
        np.testing.assert_array_equal(byte_order_keys(chunked), byte_order_keys(whole))
    # the prefix is shared by every chunk, not only by each chunk's own values
    chunked = pa.chunked_array([string_array(["ab1", "ab2"]), string_array(["ac1"])])
    keys = byte_order_keys(chunked)
    assert keys is not None and np.argsort(keys).tolist() == [0, 1, 2]
    assert keys[2] > keys[1]


@pytest.mark.parametrize("ids", [
    ["clueweb-00000001", "clueweb-99999999", "clueweb-12345678"],  # prefix + 8 bytes
    ["7", "12", "8841823", "0", "100"],  # MS MARCO numbers: no prefix, varying length
    ["doc", "doc1", "doc12", "doc9"],  # one id is the prefix itself (key 0)
    ["", "a", "ab"],  # an empty id
    ["é1", "é2", "éz"],  # multi-byte UTF-8 in the prefix
    ["xé", "xè", "x", "xa"],  # multi-byte UTF-8 in the keys
    ["q-1234567", "q-", "q-9"],  # ASCII: rebuilt in Arrow, prefix put back
])
def test_strings_from_keys_rebuilds_the_ids(ids: list[str]) -> None:
    from ireval_core._arrow import byte_order_keys_and_prefix, strings_from_keys

    arr = pa.chunked_array([pa.array(ids[:2]), pa.array(ids[2:])])
    found = byte_order_keys_and_prefix(arr)
    assert found is not None
    keys, prefix = found
    rebuilt = strings_from_keys(keys, prefix)
    assert rebuilt.type == pa.string()
    assert rebuilt.to_pylist() == ids
    order = np.argsort(keys, kind="stable")
    assert strings_from_keys(keys[order], prefix).to_pylist() == sorted(
        ids, key=lambda s: s.encode())


def test_doc_codes_rebuild_the_distinct_ids_in_byte_order() -> None:
    from ireval_core.idcodes import doc_codes

    rng = np.random.default_rng(5)
    ids = [f"d{n}" for n in rng.integers(0, 5000, 20_000)]
    codes, distinct, byte_ranked = doc_codes(pa.array(ids))
    assert byte_ranked
    assert distinct.to_pylist() == sorted(set(ids), key=lambda s: s.encode())
    assert [distinct[c].as_py() for c in codes[:50]] == ids[:50]
    np.testing.assert_array_equal(np.asarray(distinct.to_pylist(), dtype=object)[codes], ids)
