"""sort.radix vs numpy.sort / numpy.argsort(kind="stable"): specials, duplicates, sizes."""

from __future__ import annotations

import numpy as np
import pytest
from accy.errors import InputError, UnsupportedError

import accy_kernels as ak
from accy_kernels import references as ref

from .conftest import BIG, NP, SIZES, random_values

SPECIAL = np.array([3.0, np.nan, -0.0, 0.0, 1.0, -np.inf, np.inf, -np.nan, -2.0, 0.0, -0.0,
                    np.nan, 1.0, -2.0])


def _inputs(dtype: str, n: int):
    x = random_values(dtype, n, low=-50, high=50)  # many duplicates
    return x


@pytest.mark.parametrize("dtype", list(NP))
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("descending", [False, True])
def test_argsort_and_sort(backend, dtype, n, descending):
    x = _inputs(dtype, n)
    order = ak.argsort(x, descending, backend=backend)
    assert order.dtype == np.int64
    np.testing.assert_array_equal(order, ref.argsort(x, descending))
    np.testing.assert_array_equal(ak.sort(x, descending, backend=backend),
                                  ref.sort(x, descending))


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("descending", [False, True])
def test_float_specials(backend, dtype, descending):
    x = SPECIAL.astype(NP[dtype])
    np.testing.assert_array_equal(ak.argsort(x, descending, backend=backend),
                                  ref.argsort(x, descending))
    got = ak.sort(x, descending, backend=backend)
    want = x[ref.argsort(x, descending)]
    np.testing.assert_array_equal(got.view(f"u{x.itemsize}"), want.view(f"u{x.itemsize}"))
    if not descending:
        np.testing.assert_array_equal(got, np.sort(x))


@pytest.mark.parametrize("dtype", ["i32", "i64", "u32"])
def test_integer_extremes(backend, dtype):
    info = np.iinfo(NP[dtype])
    x = np.array([info.max, info.min, 0, 1, info.max, info.min + 1, 7], NP[dtype])
    np.testing.assert_array_equal(ak.sort(x, backend=backend), np.sort(x))
    np.testing.assert_array_equal(ak.argsort(x, backend=backend), np.argsort(x, kind="stable"))


@pytest.mark.parametrize("kdt,vdt", [("f32", "i64"), ("i64", "f32"), ("u32", "f64")])
def test_sort_pairs(backend, kdt, vdt):
    keys = _inputs(kdt, 3001)
    vals = random_values(vdt, 3001, seed=9)
    k, v = ak.sort_pairs(keys, vals, backend=backend)
    rk, rv = ref.sort_pairs(keys, vals)
    np.testing.assert_array_equal(k, rk)
    np.testing.assert_array_equal(v, rv)


@pytest.mark.parametrize("dtype", ["f32", "i64"])
def test_sort_big(backend, dtype):
    x = _inputs(dtype, BIG)
    np.testing.assert_array_equal(ak.argsort(x, backend=backend), np.argsort(x, kind="stable"))


def test_sort_errors():
    with pytest.raises(UnsupportedError, match="complex"):
        ak.sort(np.ones(3, np.complex128))
    with pytest.raises(UnsupportedError, match="float16"):
        ak.sort(np.ones(3, np.float16))
    with pytest.raises(InputError, match="1-D"):
        ak.sort(np.ones((2, 2)))
    with pytest.raises(InputError, match="shape"):
        ak.sort_pairs(np.ones(3), np.ones(4))
