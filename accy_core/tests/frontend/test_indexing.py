"""Indexing of traced arrays: ``x[...]``, ``anp.take`` and ``x.at[idx].add(v)``.

The frontend's index handling (normalising ``...``/``None``/slices/ints/arrays and
splitting them into per-axis gathers) is checked here with stand-in ``testing.take`` /
``testing.scatter_add`` ops whose reference is numpy's; the real ``tensor.gather`` /
``tensor.scatter_add`` ops (kernel families) are checked by ``test_kernel_ops`` when they
exist.
"""

from __future__ import annotations

import accy
import accy.numpy as anp
import numpy as np
import pytest
from accy.ir import FunctionBuilder, OpDef, TensorType, op_names

HAS_GATHER = hasattr(FunctionBuilder, "gather")
HAS_SCATTER = hasattr(FunctionBuilder, "scatter_add")


def _take_infer(types, attrs):
    x, idx = types
    a = attrs["axis"]
    return [TensorType(x.dtype, x.shape[:a] + idx.shape + x.shape[a + 1:])]


def _scatter_ref(xs, attrs):
    out = xs[0].copy()
    np.add.at(out, xs[1], xs[2])
    return [out]


_STAND_INS = (
    OpDef("testing.take", 2, _take_infer, lambda xs, a: [np.take(xs[0], xs[1], axis=a["axis"])],
          attrs={"axis": "int"}, summary="stand-in for tensor.gather in tests"),
    OpDef("testing.scatter_add", 3, lambda types, attrs: [types[0]], _scatter_ref,
          summary="stand-in for tensor.scatter_add in tests"),
)


@pytest.fixture
def stand_in_ops(monkeypatch):
    from accy.ir.ops import registry

    op_names()  # load the built-in ops first
    for op in _STAND_INS:  # registered for this test only: goldens cover every real op
        monkeypatch.setitem(registry._REGISTRY, op.name, op)
    if not HAS_GATHER:
        monkeypatch.setattr(FunctionBuilder, "gather", lambda self, x, idx, axis=0: self.emit(
            "testing.take", [x, idx], {"axis": axis})[0], raising=False)
    if not HAS_SCATTER:
        monkeypatch.setattr(FunctionBuilder, "scatter_add", lambda self, x, idx, v: self.emit(
            "testing.scatter_add", [x, idx, v])[0], raising=False)


X = np.arange(24, dtype=np.float32).reshape(4, 6)
IDX = np.array([3, 0, 3, 1], dtype=np.int32)

CASES = {
    "int": lambda x, i: x[2],
    "negative-int": lambda x, i: x[-1, 2],
    "slice": lambda x, i: x[1:3],
    "stepped-slice": lambda x, i: x[::2, ::-3],
    "ellipsis-none": lambda x, i: x[..., None, 1:],
    "array": lambda x, i: x[i],
    "array-second-axis": lambda x, i: x[:, i],
    "mixed": lambda x, i: x[1:, i][0],
    "take": lambda x, i: (anp if not isinstance(x, np.ndarray) else np).take(x, i, axis=1),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_getitem_matches_numpy(stand_in_ops, name: str) -> None:
    fn = CASES[name]
    got = accy.jit(fn, backend="reference")(X, IDX)
    np.testing.assert_array_equal(got, fn(X, IDX))


def test_constant_index_arrays_and_lists(stand_in_ops) -> None:
    got = accy.jit(lambda x: x[[0, -1]] + x[np.array([1, 1])], backend="reference")(X)
    np.testing.assert_array_equal(got, X[[0, -1]] + X[[1, 1]])


def test_at_add_accumulates_repeated_indices(stand_in_ops) -> None:
    got = accy.jit(lambda x, i: x.at[i].add(1.0), backend="reference")(X, IDX)
    want = X.copy()
    np.add.at(want, IDX, 1.0)
    np.testing.assert_array_equal(got, want)


def test_index_errors(stand_in_ops) -> None:
    with pytest.raises(accy.errors.VerifyError, match=r"index 9 at test_indexing.py:\d+ is "
                                                       r"out of range for an axis of extent 4"):
        accy.jit(lambda x: x[9], backend="reference")(X)
    with pytest.raises(accy.errors.VerifyError, match="too many indices"):
        accy.jit(lambda x: x[0, 0, 0], backend="reference")(X)
    with pytest.raises(accy.errors.UnsupportedError, match="f32 array.*int32 or int64"):
        accy.jit(lambda x: x[x[:, 0]], backend="reference")(X)
    with pytest.raises(accy.errors.UnsupportedError, match=r"\.at\[\.\.\.\]\.apply"):
        accy.jit(lambda x, i: x.at[i].apply(abs), backend="reference")(X, IDX)


def test_missing_gather_op_is_explained() -> None:
    if HAS_GATHER:
        pytest.skip("tensor.gather exists; the missing-op message cannot occur")
    with pytest.raises(accy.errors.UnsupportedError, match="needs the tensor.gather op"):
        accy.jit(lambda x, i: x[i], backend="reference")(X, IDX)
