"""accy_kernels.prepare_spmv: a matrix converted once (a private, read-only copy), the same
bits as spmv on the same backend, later edits of A not seen; and the SELL layout cache's
bound product."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.sparse
from accy.errors import InputError

import accy_kernels as ak
from accy_kernels import _layout_cache

MATRICES = Path(__file__).resolve().parents[1] / "data" / "matrices"


@pytest.mark.parametrize("fmt, options", [("csr", {}), ("sell", {}),
                                          ("sell", {"C": 4, "sigma": 1}), ("ell", {}),
                                          ("coo", {})])
def test_handle_matches_spmv_and_ignores_later_edits(fmt, options):
    a = ak.read_matrix(MATRICES / "west0067.mtx")
    x = np.random.default_rng(1).standard_normal(a.shape[1])
    p = ak.prepare_spmv(a, fmt, **options)
    want = ak.spmv(a, x, fmt, **options)
    np.testing.assert_array_equal(p @ x, want)
    np.testing.assert_array_equal(p(x), want)
    a.data *= 2.0  # the handle owns its copy: prepare again to see this
    np.testing.assert_array_equal(p @ x, want)
    assert p.shape == a.shape and p.dtype == np.float64 and p.format == fmt


def test_handle_converts_x_and_refuses_bad_input():
    a = scipy.sparse.random(40, 30, 0.2, format="csr", random_state=2, dtype=np.float32)
    p = ak.prepare_spmv(a, "sell")
    x64 = np.random.default_rng(2).standard_normal(30)
    np.testing.assert_array_equal(p @ x64, ak.spmv(a, x64, "sell"))  # float64 result
    xi = np.arange(30, dtype=np.int16)  # narrower: converted to the handle's float32
    np.testing.assert_array_equal(p @ xi, ak.spmv(a, xi.astype(np.float32), "sell"))
    np.testing.assert_array_equal(p @ x64[::-1], ak.spmv(a, x64[::-1], "sell"))
    with pytest.raises(InputError, match="x must have shape"):
        p @ np.ones(31)
    with pytest.raises(InputError, match="unknown format"):
        ak.prepare_spmv(a, "bsr")
    with pytest.raises(InputError, match="unknown option"):
        ak.prepare_spmv(a, "csr", C=4)
    bad = a.copy()
    bad.indices[3] = 30
    with pytest.raises(InputError, match=r"A.indices\[3\] = 30"):
        ak.prepare_spmv(bad, "sell")


def test_sell_layout_cache_binds_once_and_never_goes_stale():
    _layout_cache.clear_layout_cache()
    a = ak.read_matrix(MATRICES / "494_bus.mtx")
    x = np.random.default_rng(3).standard_normal(a.shape[1])
    first = ak.spmv(a, x, "sell")
    np.testing.assert_allclose(first, a @ x, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(ak.spmv(a, x, "sell"), first)
    assert _layout_cache.cache_info()["hits"] >= 1
    a.data[7] += 1.0  # in place: the checksum differs, the layout is rebuilt (and rebound)
    np.testing.assert_allclose(ak.spmv(a, x, "sell"), a @ x, rtol=1e-12, atol=1e-12)


def test_sell_memo_sees_every_edit_and_replaced_array():
    from accy_kernels.layout_hash import array_hash

    from accy_kernels import spmv_sell

    a = ak.read_matrix(MATRICES / "west0067.mtx")
    x = np.random.default_rng(4).standard_normal(a.shape[1])
    ak.spmv(a, x, "sell")  # binds the layout and leaves the product for a
    assert any(m.ref() is a for m in spmv_sell._MEMO.values())
    for edit in (lambda: a.data.__imul__(-1.5),  # values in place
                 lambda: a.indices.__setitem__(slice(0, 2), a.indices[1::-1]),  # a swap
                 lambda: setattr(a, "data", a.data * 2.0)):  # a replaced array
        edit()
        np.testing.assert_allclose(ak.spmv(a, x, "sell"), a @ x, rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(ak.spmv(a, x, "sell"), ak.spmv(a, x, "sell", C=8))
    h = array_hash(a.indices)
    if h is not None:  # the memory-speed hash of the layout cache: swaps and moves change it
        b = a.indices.copy()
        b[[3, 9]] = b[[9, 3]]
        assert b[3] == b[9] or array_hash(b) != h
        assert array_hash(np.roll(a.indices, 1)) != h
