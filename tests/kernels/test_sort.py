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


_MSD = (("msd", 1),)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
@pytest.mark.parametrize("n", [0, 1, 2, 7, 4099, 70001])
@pytest.mark.parametrize("descending", [False, True])
def test_msd_split_matches_lsd(dtype, n, descending):
    """The CPU's MSD split (sort_msd, forced by the candidate option) gives the LSD sort's
    result bit for bit: NaN last in input order, -0.0/+0.0 in input order, descending."""
    from accy.families import Candidate

    rng = np.random.default_rng(n)
    if dtype is np.float32:
        k = rng.standard_normal(n).astype(np.float32)
        k[::5], k[1::7], k[2::9], k[3::11] = np.nan, -0.0, 0.0, -np.inf
    else:
        info = np.iinfo(dtype)
        k = rng.integers(info.min, info.max, n, endpoint=True, dtype=dtype)
    msd = ak.sort(k, descending, candidate=Candidate(64, 0, _MSD))
    lsd = ak.sort(k, descending, candidate=Candidate(64, 0, (("msd", 0),)))
    assert msd.dtype == k.dtype and msd.shape == k.shape
    np.testing.assert_array_equal(msd.view(np.uint32), lsd.view(np.uint32))
    if not descending:
        np.testing.assert_array_equal(msd, np.sort(k))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint32])
@pytest.mark.parametrize("n", [1, 7, 70001])
@pytest.mark.parametrize("descending", [False, True])
def test_msd_argsort_matches_lsd(dtype, n, descending):
    """argsort through the MSD split (positions carried through the buckets): the LSD
    argsort's permutation (numpy's stable one ascending), with NaN, signed zeros, few
    distinct keys."""
    from accy.families import Candidate

    rng = np.random.default_rng(n + 1)
    if dtype is np.float32:
        k = rng.standard_normal(n).astype(np.float32)
        k[::5], k[1::7], k[2::9], k[3::11] = np.nan, -0.0, 0.0, -np.inf
    else:
        k = rng.integers(0, 5, n).astype(dtype) << 25  # few keys: long equal runs
    msd = ak.argsort(k, descending, candidate=Candidate(64, 0, _MSD))
    lsd = ak.argsort(k, descending, candidate=Candidate(64, 0, (("msd", 0),)))
    assert msd.dtype == np.int64 and msd.shape == k.shape
    np.testing.assert_array_equal(msd, lsd)
    if not descending:
        np.testing.assert_array_equal(msd, np.argsort(k, kind="stable"))


def test_msd_split_chosen_for_spread_keys_only():
    """The default takes the MSD split for 32-bit keys from MIN_KEYS on (spread integers,
    floats of a few binades), and keeps the LSD sort for keys crowded into one top-digit
    bucket (a narrow range)."""
    from accy.families import Candidate, backend_object
    from accy_kernels.sort_msd import MIN_KEYS, use_msd

    be, c = backend_object("cpu"), Candidate(64)
    rng = np.random.default_rng(7)
    spread = rng.integers(-(2**31), 2**31 - 1, MIN_KEYS + 3).astype(np.int32)
    assert use_msd(be, c, spread, "i32", False, "sort")
    assert not use_msd(be, c, spread[:MIN_KEYS - 1], "i32", False, "sort")
    assert use_msd(be, c, spread, "i32", False, "argsort")
    assert not use_msd(be, c, spread, "i32", False, "pairs")
    unit = rng.random(MIN_KEYS).astype(np.float32)
    assert use_msd(be, c, unit, "f32", False, "sort")
    narrow = rng.integers(0, 1000, MIN_KEYS).astype(np.int32)
    assert not use_msd(be, c, narrow, "i32", False, "sort")
    np.testing.assert_array_equal(ak.sort(spread), np.sort(spread))
    np.testing.assert_array_equal(ak.sort(unit), np.sort(unit))
