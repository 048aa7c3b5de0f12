"""Adversarial inputs to the kernel families: every bad argument is an accy error before any
launch, never a raw Python error or a silently truncated value (second bug hunt)."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import AccyError, InputError, UnsupportedError

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
