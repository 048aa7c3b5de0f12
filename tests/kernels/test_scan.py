"""scan.reduce_then_scan vs numpy.cumsum (inclusive and exclusive)."""

from __future__ import annotations

import numpy as np
import pytest
from accy.testing.reference import assert_close

import accy_kernels as ak
from accy_kernels import references as ref

from .conftest import BIG, SIZES, random_values


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64"])
@pytest.mark.parametrize("n", [*SIZES, 70001])
@pytest.mark.parametrize("inclusive", [True, False])
def test_scan(backend, dtype, n, inclusive):
    x = random_values(dtype, n, low=0, high=10)
    if dtype.startswith("f"):
        x = np.abs(x)  # positive terms: relative error of the sums stays small
    got = ak.scan(x, inclusive, backend=backend)
    assert_close(got, ref.scan(x, inclusive), scale=100)


def test_scan_big(backend):
    x = random_values("i64", BIG, low=-5, high=5)
    np.testing.assert_array_equal(ak.scan(x, backend=backend), np.cumsum(x))
