"""The numpy interpreter: reference semantics used as the test oracle."""

from __future__ import annotations

import numpy as np
import pytest
from accy.kernel import KernelBuilder, call, interpret
from accy.testing.kernels import loop_tree_sum


def test_guarded_saxpy():
    kb = KernelBuilder("saxpy", 32)
    y, x = kb.buffer("y", "f32", "readwrite"), kb.buffer("x", "f32", "read")
    n, a = kb.scalar("n", "i32"), kb.scalar("a", "f32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(y, i, a * x[i] + y[i])
    k = kb.build()
    xs = np.arange(70, dtype=np.float32)
    ys = np.ones(70, np.float32)
    interpret(k, 3, [ys, xs], [70, 3.0])
    np.testing.assert_array_equal(ys, 3 * xs + 1)


def test_shared_tree_reduction_with_barriers():
    ws = 16
    xs = np.arange(5 * ws, dtype=np.int32)
    res = np.zeros(5, np.int32)
    interpret(loop_tree_sum(ws, "i32"), 5, [res, xs], [])
    np.testing.assert_array_equal(res, xs.reshape(5, ws).sum(1))


@pytest.mark.parametrize(
    ("op", "dtype", "a", "b", "want"),
    [
        ("div", "i32", [7, -7, 5, -(2**31)], [2, 2, 0, -1], [3, -3, 5, -(2**31)]),
        ("rem", "i32", [7, -7, 5], [2, 2, 0], [1, -1, 0]),
        ("shr", "i32", [-8, 8], [1, 33], [-4, 4]),
        ("shr", "u32", [2**32 - 8, 8], [1, 1], [2**31 - 4, 4]),
        ("mulhi", "u32", [2**32 - 1, 3], [2**32 - 1, 5], [2**32 - 2, 0]),
        ("min", "f32", [1.0, np.nan], [np.nan, 2.0], [1.0, 2.0]),
    ],
)
def test_binary_semantics(op, dtype, a, b, want):
    kb = KernelBuilder("bin", 4)
    o = kb.buffer("o", dtype, "write")
    x, y = kb.buffer("x", dtype, "read"), kb.buffer("y", dtype, "read")
    i = kb.global_id()
    with kb.if_(i < len(a)):
        kb.store(o, i, call(op, x[i], y[i]))
    np_dtype = {"i32": np.int32, "u32": np.uint32, "f32": np.float32}[dtype]
    out = np.zeros(len(a), np_dtype)
    interpret(kb.build(), 1, [out, np.array(a, np_dtype), np.array(b, np_dtype)], [])
    np.testing.assert_array_equal(out, np.array(want, np_dtype))


def test_saturating_float_to_int_cast_and_atomic_histogram():
    kb = KernelBuilder("hist", 8)
    h, x = kb.buffer("h", "i32", "readwrite"), kb.buffer("x", "f32", "read")
    i = kb.global_id()
    kb.atomic_add(h, x[i].cast("i32"), 1)
    xs = np.array([0.5, 1.7, 2.2, 1.1, -0.9, 3.99, 1.0, 2.0], np.float32)
    hist = np.zeros(4, np.int32)
    interpret(kb.build(), 1, [hist, xs], [])
    np.testing.assert_array_equal(hist, [2, 3, 2, 1])


def test_out_of_bounds_raises():
    kb = KernelBuilder("oob", 4)
    o = kb.buffer("o", "f32", "write")
    kb.store(o, kb.global_id(), 1.0)
    with pytest.raises(IndexError, match="out of bounds"):
        interpret(kb.build(), 1, [np.zeros(3, np.float32)], [])
