"""ELL / SELL-C-σ padding never reads x (issue 10): inf/NaN in x reach only the rows that use
them, on every format and backend, as scipy computes."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

import accy_kernels as ak

FORMATS = [("csr", {}), ("coo", {}), ("ell", {}), ("ell", {"width": 2}), ("sell", {}),
           ("sell", {"C": 4, "sigma": 1})]
SPECIAL = [np.inf, -np.inf, np.nan]


def ragged(dtype) -> sp.csr_matrix:
    """Rows of lengths 0..5 (short rows get ELL/SELL padding); column 0 only in row 5."""
    rows, cols, vals = [], [], []
    for r in range(12):
        length = r % 6
        for k in range(length):
            rows.append(r)
            cols.append(0 if length == 5 and k == 0 else 1 + (r + 3 * k) % 9)
            vals.append(1.0 + k)
    return sp.csr_matrix((np.array(vals, dtype), (rows, cols)), shape=(12, 10))


@pytest.mark.parametrize("special", SPECIAL)
@pytest.mark.parametrize("fmt,options", FORMATS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_special_x0_only_in_rows_using_it(backend, fmt, options, special, dtype):
    from accy.plugins import open_backend

    if dtype == np.float64 and "f64" not in open_backend(backend).capabilities().dtypes:
        pytest.skip(f"{backend}: no f64")
    A = ragged(dtype)
    x = np.arange(1, 11, dtype=dtype)
    x[0] = special
    want = A @ x
    got = ak.spmv(A, x, fmt, backend=backend, **options)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    assert finite.sum() >= 9  # only row 5 (and none else) reads x[0]
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-6)
    np.testing.assert_array_equal(got[~finite], want[~finite])


@pytest.mark.parametrize("fmt,options", FORMATS)
def test_nan_everywhere_but_used_columns(backend, fmt, options):
    """x is NaN in every column no stored entry uses: the result stays finite."""
    A = ragged(np.float32)
    used = np.unique(A.indices)
    x = np.full(10, np.nan, np.float32)
    x[used] = 2.0
    got = ak.spmv(A, x, fmt, backend=backend, **options)
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, A @ x, rtol=1e-6)


def test_padding_is_sentinel():
    from accy_kernels.spmv_ell import PAD, ell_layout
    from accy_kernels.spmv_sell import sell_layout

    A = ragged(np.float64)
    ell_cols = ell_layout(A.indptr, A.indices, A.data, 12, 5)[0]
    sell_cols = sell_layout(A.indptr, A.indices, A.data, 12, 4, 1)[1]
    assert PAD == -1 and (ell_cols == PAD).sum() == 12 * 5 - A.nnz
    assert (sell_cols == PAD).any() and (sell_cols >= 0).sum() == A.nnz
