"""segment_sum (atomic and sorted) vs numpy.add.at into zeros."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError
from accy.families import IndexOutOfRangeError
from accy.testing.reference import assert_close

import accy_kernels as ak
from accy_kernels import references as ref

from .conftest import SIZES, random_values


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64"])
@pytest.mark.parametrize("n", SIZES)
def test_segment_sum(backend, dtype, n):
    vals = random_values(dtype, n)
    ids = np.random.default_rng(2).integers(0, 17, n).astype(np.int32)
    assert_close(ak.segment_sum(vals, ids, 17, backend=backend), ref.segment_sum(vals, ids, 17),
                 scale=10)


def test_segment_sum_rows(backend):
    vals = random_values("f64", 30).reshape(10, 3)
    ids = np.array([0, 0, 4, 4, 4, 1, 0, 2, 2, 4])
    assert_close(ak.segment_sum(vals, ids, 6, backend=backend), ref.segment_sum(vals, ids, 6))


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64"])
def test_segment_sum_sorted_is_sequential_order(backend, dtype):
    vals = random_values(dtype, 3000).reshape(1000, 3)
    ids = np.random.default_rng(7).integers(0, 17, 1000)
    got = ak.segment_sum(vals, ids, 19, backend=backend, variant="sorted")
    np.testing.assert_array_equal(got, ref.segment_sum(vals, ids, 19))


def test_segment_sum_errors():
    with pytest.raises(IndexOutOfRangeError):
        ak.segment_sum(np.ones(3), np.array([0, 1, 3]), 3)
    with pytest.raises(IndexOutOfRangeError, match="negative"):
        ak.segment_sum(np.ones(3), np.array([0, -1, 2]), 3)
    with pytest.raises(InputError):
        ak.segment_sum(np.ones(3), np.array([0, 1]), 3)


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64"])
def test_segment_sum_privatized(backend, dtype):
    vals = random_values(dtype, 400 * 3).reshape(400, 3)
    ids = np.random.default_rng(5).integers(0, 9, 400)
    assert_close(ak.segment_sum(vals, ids, 11, backend=backend, variant="privatized"),
                 ref.segment_sum(vals, ids, 11), scale=10)
