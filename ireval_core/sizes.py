"""How many bytes an object keeps alive: its arrays, tables and strings, counted once.

:func:`memory_blocks` walks an object (a :class:`~ireval_core.data.Run`, a
:class:`~ireval_core.dataset.Dataset`, an :class:`~ireval_core.evaluate.Evaluation`, a
tuple of them, ...) and returns the blocks of memory it reaches, each under a key
naming the block (a buffer's address, or the identity of a Python object) with its
size in bytes. Two objects sharing an array give the same key for it, so a cache can
count the union of what its entries keep alive rather than the sum
(:func:`nbytes` is the size of one object's union).

What is counted
---------------
* numpy arrays: the data of the array that owns the memory (a view counts its base
  once); the strings of an object array (estimated from up to 256 of them);
* pyarrow arrays, chunked arrays, tables and buffers: every buffer, dictionaries
  included (a buffer shared by two arrays once);
* pandas frames, series and indexes: ``memory_usage(deep=True)``;
* ``str``, ``bytes``, ``bytearray``: ``sys.getsizeof``;
* containers, dataclasses and plain objects: their own size plus what they hold
  (``__dict__``, ``__slots__``, cached properties, a bound method's object).

Functions, classes and modules are not followed (they belong to the program, not to
the data). The result is an estimate of the memory an object keeps alive, exact for
the large arrays that matter and within a few hundred bytes per small object.

>>> import numpy as np
>>> a = np.zeros(1000)
>>> nbytes(a), nbytes(a[10:])  # a view keeps its whole base alive
(8000, 8000)
>>> nbytes([a, a[10:]]) - nbytes([None, None])  # an array two objects share: counted once
8000
"""

from __future__ import annotations

import sys
import types
from collections.abc import Hashable
from dataclasses import fields, is_dataclass

import numpy as np
import pyarrow as pa

__all__ = ["memory_blocks", "nbytes"]

_SAMPLE = 256  # strings of an object array measured to estimate the rest
_SKIP = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
         types.MethodDescriptorType, types.WrapperDescriptorType)


def nbytes(obj: object) -> int:
    """Bytes of memory ``obj`` keeps alive (each array or buffer counted once).

    >>> import pyarrow as pa
    >>> nbytes(pa.array(["a", "bc"]))  # validity (none), offsets (3 int32) and 3 bytes
    15
    """
    return sum(memory_blocks(obj).values())


def memory_blocks(obj: object) -> dict[Hashable, int]:
    """The blocks of memory ``obj`` reaches: block key -> size in bytes.

    Keys are ``("mem", address)`` for array and buffer memory and ``("obj", id)``
    for Python objects; keys are only meaningful while the objects are alive.
    """
    blocks: dict[Hashable, int] = {}
    seen: set[int] = set()
    todo: list[object] = [obj]
    while todo:
        item = todo.pop()
        if item is None or isinstance(item, bool | int | float | complex) or id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, _SKIP):
            continue
        if isinstance(item, np.ndarray):
            _numpy(item, blocks)
        elif isinstance(item, pa.ChunkedArray):
            todo.extend(item.chunks)
        elif isinstance(item, pa.Array):
            _arrow(item, blocks, todo)
        elif isinstance(item, pa.Table | pa.RecordBatch):
            todo.extend(item.columns)
        elif isinstance(item, pa.Buffer):
            blocks[("mem", item.address)] = item.size
        elif isinstance(item, str | bytes | bytearray):
            blocks[("obj", id(item))] = sys.getsizeof(item)
        elif isinstance(item, memoryview):
            todo.append(item.obj)
        elif _is_pandas(item):
            blocks[("obj", id(item))] = _pandas_size(item)
        elif isinstance(item, dict):
            blocks[("obj", id(item))] = sys.getsizeof(item)
            todo.extend(item.keys())
            todo.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            blocks[("obj", id(item))] = sys.getsizeof(item)
            todo.extend(item)
        elif isinstance(item, types.MethodType):
            todo.append(item.__self__)
        else:
            _plain(item, blocks, todo)
    return blocks


def _numpy(arr: np.ndarray, blocks: dict[Hashable, int]) -> None:
    base = arr
    while isinstance(base.base, np.ndarray):
        base = base.base
    if base.nbytes:
        blocks[("mem", base.__array_interface__["data"][0])] = int(base.nbytes)
    if base.dtype == object and base.size:
        flat = base.reshape(-1)
        step = max(1, flat.size // _SAMPLE)
        sample = flat[::step][:_SAMPLE]
        mean = sum(sys.getsizeof(x) for x in sample) / len(sample)
        blocks[("obj", id(base))] = int(mean * flat.size)


def _arrow(arr: pa.Array, blocks: dict[Hashable, int], todo: list[object]) -> None:
    for buf in arr.buffers():
        if buf is not None:
            blocks[("mem", buf.address)] = buf.size
    if isinstance(arr, pa.DictionaryArray):
        todo.append(arr.dictionary)


def _is_pandas(obj: object) -> bool:
    module = type(obj).__module__
    return module.startswith("pandas.") and hasattr(obj, "memory_usage")


def _pandas_size(obj: object) -> int:
    usage = obj.memory_usage(deep=True)  # type: ignore[attr-defined]
    total = usage.sum() if hasattr(usage, "sum") else usage
    return int(total)


def _plain(obj: object, blocks: dict[Hashable, int], todo: list[object]) -> None:
    blocks[("obj", id(obj))] = sys.getsizeof(obj)
    state = getattr(obj, "__dict__", None)
    if isinstance(state, dict):
        todo.extend(state.values())
    elif is_dataclass(obj):
        todo.extend(getattr(obj, f.name, None) for f in fields(obj))
    for cls in type(obj).__mro__:
        slots = getattr(cls, "__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot not in ("__dict__", "__weakref__"):
                todo.append(getattr(obj, slot, None))
