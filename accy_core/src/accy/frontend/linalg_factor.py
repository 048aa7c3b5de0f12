"""``np.linalg.cholesky`` and ``np.linalg.qr`` of traced matrices.

Both are one ``accy.fori_loop`` over the column ``k`` whose body has static shapes (masks
select the rows and columns at or past ``k``), so the IR has the same size for any ``n``:
``n`` device iterations of a few fused kernels, ``O(n^3)`` work in all.

- **Cholesky** (outer-product form, Golub & Van Loan, *Matrix Computations*, 4th ed.,
  algorithm 4.2.2): step ``k`` takes ``L[k:, k] = M[k:, k] / sqrt(M[k, k])`` and subtracts
  the rank-1 ``L[:, k] L[:, k]^T`` from the trailing matrix. It reads the lower triangle
  only, as LAPACK's ``potrf`` with ``UPLO='L'`` (numpy's) does. A matrix that is not
  positive definite gives NaN rows instead of numpy's ``LinAlgError`` (the check would need
  the data on the host).
- **QR** (Householder, Golub & Van Loan algorithm 5.2.1, with LAPACK ``dlarfg``'s sign:
  ``R[k, k] = -sign(x_k) ||x||``, and no reflection where the column is already zero below
  the diagonal), so ``Q`` and ``R`` agree with numpy's (LAPACK ``geqrf``/``orgqr``) to
  rounding, signs included. ``R`` below the diagonal is exactly zero.

Shapes: ``cholesky`` takes ``a`` (n, n); ``qr`` takes ``a`` (m, n) and returns ``Q`` (m, k),
``R`` (k, n) with ``k = min(m, n)`` (``mode="reduced"``), ``Q`` (m, m), ``R`` (m, n)
(``"complete"``) or ``R`` alone (``"r"``). float32/float64 (integers are computed in f32, as
in :mod:`accy.frontend.linalg_solve`). Stacks of matrices are refused with a clear error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.control_flow import fori_loop
from accy.frontend.linalg_solve import square_matrix
from accy.frontend.numpy_api import (
    astype,
    equal,
    greater,
    greater_equal,
    less_equal,
    sqrt,
    trace_of,
    where,
)
from accy.frontend.shape_api import asarray, reshape
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["cholesky", "qr"]


def cholesky(a: Any) -> Any:
    """The lower-triangular ``L`` with ``L @ L.T == a`` for a symmetric positive definite
    ``a`` of shape (n, n); the strict upper triangle of ``L`` is zero.

    Raises:
        VerifyError: ``a`` is not square.
        UnsupportedError: a stack of matrices.
    """
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.cholesky(a)
    a = square_matrix(asarray(a), "cholesky")
    n = a.shape[0]
    rows = np.arange(n, dtype=np.int32)
    cols = reshape(rows, (1, n))

    def step(k: Any, carry: tuple) -> tuple:
        m, low = carry
        col = where(greater_equal(rows, k), m[:, k] / sqrt(m[k, k]), 0.0)
        low = where(equal(cols, k), reshape(col, (n, 1)), low)
        return m - reshape(col, (n, 1)) * reshape(col, (1, n)), low

    _, low = fori_loop(0, n, step, (a, np.zeros((n, n), a.dtype)))
    return low


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR factorisation of ``a`` (m, n): ``Q`` with orthonormal columns and the upper
    triangular ``R``, ``a == Q @ R`` (shapes in the module docstring).

    Raises:
        VerifyError: ``a`` is not a matrix, or ``mode`` is not ``"reduced"``,
            ``"complete"`` or ``"r"``.
        UnsupportedError: a stack of matrices.
    """
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.qr(a, mode=mode)
    if mode not in ("reduced", "complete", "r"):
        raise VerifyError(f"numpy.linalg.qr at {user_location()}: mode must be 'reduced', "
                          f"'complete' or 'r', got {mode!r}")
    a = asarray(a)
    if a.ndim != 2:
        if a.ndim > 2:
            raise UnsupportedError(
                f"numpy.linalg.qr at {user_location()} of a stack of matrices "
                f"{list(a.shape)}: accy factors one matrix per call; loop over the stack in "
                "Python", feature="linalg.qr stacked", alternative="a Python loop")
        raise VerifyError(f"numpy.linalg.qr at {user_location()} needs a matrix, got shape "
                          f"{list(a.shape)}")
    a = a if a.accy_dtype.is_float else astype(a, np.float32)
    m, n = a.shape
    k = min(m, n)
    rows = np.arange(m, dtype=np.int32)

    def step(j: Any, carry: tuple) -> tuple:
        r, q = carry
        x = where(greater_equal(rows, j), r[:, j], 0.0)
        below = where(greater(rows, j), x, 0.0)
        xj = r[j, j]
        alpha = where(greater_equal(xj, 0), -sqrt((x * x).sum()), sqrt((x * x).sum()))
        v = where(equal(rows, j), x - alpha, x)
        vv = (v * v).sum()
        tau = where(greater((below * below).sum(), 0), 2.0 / where(greater(vv, 0), vv, 1.0), 0.0)
        vc = reshape(v, (m, 1))
        r = r - tau * vc * reshape((vc * r).sum(axis=0), (1, n))
        q = q - tau * reshape((q * reshape(v, (1, m))).sum(axis=1), (m, 1)) * \
            reshape(v, (1, m))
        return r, q

    r, q = fori_loop(0, k, step, (a, np.eye(m, dtype=a.dtype)))
    upper = less_equal(rows.reshape(m, 1), np.arange(n, dtype=np.int32).reshape(1, n))
    r = where(upper, r, 0.0)
    if mode == "r":
        return r[:k]
    if mode == "complete":
        return q, r
    return q[:, :k], r[:k]
