"""Adversarial inputs to the kernel families: every bad argument is an accy error before any
launch, never a raw Python error or a silently truncated value (second bug hunt)."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError

import accy_kernels as ak
from accy_kernels import random as rnd


@pytest.mark.parametrize("seed", [1.5, "x", None, 2.0, True])
def test_random_seed_must_be_an_integer(seed):
    with pytest.raises(InputError, match="seed"):
        rnd.uniform(4, seed=seed)


@pytest.mark.parametrize("shape", [1.5, "3", None, (2, 1.5), (None,)])
def test_random_shape_must_be_integers(shape):
    with pytest.raises(InputError, match="shape"):
        rnd.uniform(shape, seed=1)


def test_random_numpy_integer_seed_and_shape_still_accepted():
    a = rnd.uniform(np.int64(4), seed=np.uint64(2**64 - 1))
    b = rnd.uniform((4,), seed=2**64 - 1)
    assert np.array_equal(a, b)


@pytest.mark.parametrize("dtype", [5, None, "nope", "f16", object])
def test_random_bad_float_dtype_is_unsupported(dtype):
    with pytest.raises(UnsupportedError):
        rnd.uniform(3, seed=1, dtype=dtype)


def test_random_integers_accepts_numpy_dtype_objects():
    assert rnd.integers(5, 1, 0, 5, dtype=np.int32).dtype == np.int32
    assert rnd.integers(5, 1, 0, 5, dtype=np.dtype("uint32")).dtype == np.uint32


@pytest.mark.parametrize("low, high", [(0.5, 5.7), (0, "5"), (None, 3)])
def test_random_integers_bounds_must_be_integers(low, high):
    with pytest.raises(InputError):
        rnd.integers(3, 1, low, high)


@pytest.mark.parametrize("backend", ["cpu", "vulkan"])
def test_byteswapped_indices_and_values_give_numpy_results(backend, request):
    """A '>i8' index array used to pass the host range check (numpy reads it right) and then
    reach the kernel as raw big-endian words: a segfault on cpu."""
    if backend == "vulkan":
        pytest.importorskip("accy_backend_vulkan")
    x = np.arange(10, dtype=">f4")
    idx = np.array([1, 2, -1], dtype=">i8")
    for mode in ("raise", "clip", "wrap"):
        got = ak.gather(x, idx, mode=mode, backend=backend)
        assert got.dtype == np.float32
        assert np.array_equal(got, np.take(x, idx, mode=mode))
    out = ak.scatter(np.zeros(4, ">f8"), np.array([1, 3], ">i4"), [5.0, 6.0], backend=backend)
    assert np.array_equal(out, [0, 5, 0, 6])
    seg = ak.segment_sum(np.ones(3, ">f8"), np.array([0, 1, 1], ">i4"), 2, backend=backend)
    assert np.array_equal(seg, [1, 2])
    assert np.array_equal(ak.sort(np.array([3, 1, 2], ">i8"), backend=backend), [1, 2, 3])
    assert np.array_equal(ak.argsort(np.array([3, 1, 2], ">u4"), backend=backend), [1, 2, 0])
    x2 = np.arange(6, dtype=">i8")
    assert np.array_equal(ak.filter(x2, x2 > 2, backend=backend), [3, 4, 5])


@pytest.mark.parametrize("axis", [0.5, None, "0", True])
def test_non_integer_axis_is_input_error(axis):
    with pytest.raises(InputError, match="axis"):
        ak.gather(np.arange(3.0), [1], axis=axis)
    with pytest.raises(InputError, match="axis"):
        ak.scatter(np.zeros(3), [1], [1.0], axis=axis)


def test_numpy_integer_axis_accepted():
    x = np.arange(10.0).reshape(2, 5)
    assert np.array_equal(ak.gather(x, [1], axis=np.int64(1)), np.take(x, [1], axis=1))


@pytest.mark.parametrize("n", [2.5, "2", None, True])
def test_segment_sum_num_segments_must_be_integer(n):
    with pytest.raises(InputError, match="num_segments"):
        ak.segment_sum(np.arange(6.0), [0] * 6, n)


@pytest.mark.parametrize("values", [np.arange(6.0), np.zeros((0, 4))])
def test_segment_sum_huge_num_segments_is_refused_before_allocating(values):
    ids = np.zeros(values.shape[0], np.int64)
    with pytest.raises(UnsupportedError):
        ak.segment_sum(values, ids, 2**40)


def _sparse():
    sp = pytest.importorskip("scipy.sparse")
    return sp.random(50, 40, density=0.1, random_state=1, format="csr"), np.ones(40)


@pytest.mark.parametrize("fmt, opts", [("csr", {"foo": 1}), ("coo", {"width": 3}),
                                       ("ell", {"C": 4}), ("sell", {"width": 2})])
def test_spmv_unknown_option_is_refused(fmt, opts):
    """Options a format does not take were ignored silently (a typo gave a default run)."""
    A, x = _sparse()
    with pytest.raises(InputError, match="unknown option"):
        ak.spmv(A, x, format=fmt, **opts)


@pytest.mark.parametrize("fmt, opts", [("ell", {"width": 10**12}), ("sell", {"C": 10**12}),
                                       ("sell", {"C": 2**31, "sigma": 10**15})])
def test_spmv_huge_layout_options_do_not_allocate_padding(fmt, opts):
    """width/C beyond the matrix were MemoryError (TiB of host padding)."""
    A, x = _sparse()
    assert np.allclose(ak.spmv(A, x, format=fmt, **opts), A @ x)


@pytest.mark.parametrize("fmt, opts", [("ell", {"width": 2.5}), ("sell", {"C": 7.0}),
                                       ("sell", {"sigma": "8"})])
def test_spmv_non_integer_layout_options(fmt, opts):
    A, x = _sparse()
    with pytest.raises(InputError):
        ak.spmv(A, x, format=fmt, **opts)
