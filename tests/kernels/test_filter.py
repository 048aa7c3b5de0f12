"""filter.compact vs x[mask]: order kept, all-false and all-true masks."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError

import accy_kernels as ak

from .conftest import BIG, NP, SIZES, random_values


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("n", SIZES)
def test_filter(backend, dtype, n):
    x = random_values(dtype, n)
    mask = np.random.default_rng(3).random(n) < 0.4
    np.testing.assert_array_equal(ak.filter(x, mask, backend=backend), x[mask])


@pytest.mark.parametrize("fill", [False, True])
def test_filter_uniform_mask(backend, fill):
    x = np.arange(5000, dtype=np.int32)
    mask = np.full(5000, fill)
    np.testing.assert_array_equal(ak.filter(x, mask, backend=backend), x[mask])


def test_filter_big(backend):
    x = random_values("f32", BIG)
    mask = x > 0
    np.testing.assert_array_equal(ak.filter(x, mask, backend=backend), x[mask])


def test_filter_mask_must_be_bool():
    with pytest.raises(InputError, match="bool"):
        ak.filter(np.ones(3), np.ones(3, np.int32))
