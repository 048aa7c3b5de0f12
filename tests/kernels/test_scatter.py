"""scatter.last_write vs sequential assignment: duplicates (last wins), modes, axes."""

from __future__ import annotations

import numpy as np
import pytest
from accy.families import IndexOutOfRangeError
from accy.testing.reference import assert_close

import accy_kernels as ak
from accy_kernels import references as ref

from .conftest import BIG, NP, SIZES, random_values


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("n", SIZES)
def test_scatter_duplicates_last_wins(backend, dtype, n):
    dst = random_values(dtype, max(n, 1))
    idx = np.random.default_rng(1).integers(-dst.size, dst.size, n)  # many duplicates
    vals = random_values(dtype, n, seed=5)
    got = ak.scatter(dst, idx, vals, backend=backend)
    assert_close(got, ref.scatter(dst, idx, vals))


def test_scatter_documented_duplicate_rule(backend):
    got = ak.scatter(np.zeros(4, np.int32), np.array([1, 1, 1, -3]),
                     np.array([5, 6, 7, 8], np.int32), backend=backend)
    np.testing.assert_array_equal(got, [0, 8, 0, 0])  # -3 is 1: position 3 is last


@pytest.mark.parametrize("mode", ["raise", "clip", "wrap"])
@pytest.mark.parametrize("axis", [0, 1])
def test_scatter_axis_modes(backend, mode, axis):
    dst = random_values("f64", 4 * 6).reshape(4, 6)
    n = dst.shape[axis]
    lo, hi = (-n, n) if mode == "raise" else (-2 * n, 2 * n)
    idx = np.random.default_rng(2).integers(lo, hi, 5)
    vals = np.float64(3.5)  # broadcast scalar
    got = ak.scatter(dst, idx, vals, axis=axis, mode=mode, backend=backend)
    assert_close(got, ref.scatter(dst, idx, vals, axis=axis, mode=mode))


def test_scatter_big(backend):
    dst = np.zeros(BIG, np.float32)
    idx = np.random.default_rng(3).permutation(BIG)[: BIG // 2]
    vals = random_values("f32", idx.size)
    expected = dst.copy()
    expected[idx] = vals
    assert_close(ak.scatter(dst, idx, vals, backend=backend), expected)


def test_scatter_out_of_range_raises(backend):
    with pytest.raises(IndexOutOfRangeError, match="position 1"):
        ak.scatter(np.zeros(3), np.array([0, 3]), np.ones(2), backend=backend)
