"""spmm.csr vs scipy A @ X."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse
from accy.errors import InputError

import accy_kernels as ak


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("shape,k", [((0, 0), 3), ((1, 1), 1), ((300, 170), 5), ((64, 64), 33)])
def test_spmm(backend, dtype, shape, k):
    A = scipy.sparse.random(*shape, density=0.1, format="csr", random_state=3).astype(dtype)
    X = np.random.default_rng(4).standard_normal((shape[1], k)).astype(dtype)
    Y = ak.spmm(A, X, backend=backend)
    assert Y.dtype == dtype and Y.shape == (shape[0], k)
    np.testing.assert_allclose(Y, A @ X, rtol=1e-5 if dtype == np.float32 else 1e-12,
                               atol=1e-6 if dtype == np.float32 else 1e-14)


def test_spmm_shape_mismatch():
    with pytest.raises(InputError, match="shape"):
        ak.spmm(scipy.sparse.eye(3), np.ones((4, 2)))
