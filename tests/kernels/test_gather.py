"""gather.direct vs numpy.take: dtypes, modes, axes, sizes, out-of-range before launch."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError
from accy.families import IndexOutOfRangeError
from accy.testing.reference import assert_close

import accy_kernels as ak

from .conftest import BIG, NP, SIZES, random_values


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("n", SIZES)
def test_gather_1d(backend, dtype, n):
    src = random_values(dtype, max(n, 1))
    idx = np.random.default_rng(1).integers(-src.size, src.size, n)
    assert_close(ak.gather(src, idx, backend=backend), np.take(src, idx))


@pytest.mark.parametrize("mode", ["raise", "clip", "wrap"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_gather_axis_modes(backend, mode, axis):
    src = random_values("f32", 3 * 5 * 4).reshape(3, 5, 4)
    n = src.shape[axis]
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    idx = np.random.default_rng(2).integers(lo, hi, (2, 3)).astype(np.int32)
    got = ak.gather(src, idx, axis=axis, mode=mode, backend=backend)
    assert_close(got, np.take(src, idx, axis=axis, mode=mode))


def test_gather_big(backend):
    src = random_values("i64", BIG)
    idx = np.random.default_rng(3).integers(0, BIG, BIG)
    assert_close(ak.gather(src, idx, backend=backend), np.take(src, idx))


def test_gather_out_of_range_raises(backend):
    """The range check runs inside the gather kernel (a flag read after the launch, issue
    14); the error names the first bad position as the host check did."""
    src = np.arange(10.0)
    with pytest.raises(IndexError) as info:
        ak.gather(src, np.array([1, 2, 10, 11]), backend=backend)
    assert isinstance(info.value, IndexOutOfRangeError)
    assert info.value.position == 2 and "position 2" in str(info.value)
    with pytest.raises(IndexOutOfRangeError):
        ak.gather(src, np.array([-11]), backend=backend)
    big = np.zeros(70001, np.int64)  # past one work-group and one thread's range
    big[-1] = -10
    np.testing.assert_array_equal(ak.gather(src, big, backend=backend), np.take(src, big))
    big[69999] = 10
    with pytest.raises(IndexOutOfRangeError, match="position 69999"):
        ak.gather(src, big, backend=backend)
    with pytest.raises(IndexOutOfRangeError, match="position 1"):  # an axis of a 3-D source
        ak.gather(np.ones((2, 3, 4)), np.array([0, -4, 1]), axis=1, backend=backend)


def test_gather_bad_input():
    with pytest.raises(UnsupportedError, match="complex"):
        ak.gather(np.ones(3, np.complex64), np.array([0]))
    with pytest.raises(UnsupportedError, match="index dtype"):
        ak.gather(np.ones(3), np.array([0.0]))
    with pytest.raises(InputError, match="mode"):
        ak.gather(np.ones(3), np.array([0]), mode="nearest")
    with pytest.raises(InputError, match="axis"):
        ak.gather(np.ones(3), np.array([0]), axis=1)


@pytest.mark.parametrize("mode", ["raise", "clip", "wrap"])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_host_tiles(mode, index_dtype):
    """The CPU's tile gather (several tiles past INLINE_TOTAL, an odd last tile) against
    numpy in every mode; in ``raise`` mode a bad index in the first or the last tile."""
    from accy_kernels.gather_direct import INLINE_TOTAL

    n, m = 1001, INLINE_TOTAL + 4097
    src = random_values("f64", n)
    lo, hi = (-n, n) if mode == "raise" else (-3 * n, 3 * n)
    idx = np.random.default_rng(4).integers(lo, hi, m).astype(index_dtype)
    np.testing.assert_array_equal(ak.gather(src, idx, mode=mode), np.take(src, idx, mode=mode))
    if mode == "raise":
        for pos in (3, m - 1):
            bad = idx.copy()
            bad[pos] = n
            with pytest.raises(IndexOutOfRangeError, match=f"position {pos}"):
                ak.gather(src, bad)
