"""``np.linalg.solve``, ``inv``, ``det``, ``slogdet`` and ``matrix_power`` of traced square
matrices.

Gauss-Jordan elimination with partial pivoting (Golub & Van Loan, *Matrix Computations*,
4th ed., section 3.4: the pivot is the largest magnitude in the column, at or below the
diagonal) as one ``accy.fori_loop`` over the pivot column ``k``: each step swaps rows ``k``
and the pivot row with a select, then removes column ``k`` from every other row of the
augmented matrix ``[A | B]`` with a rank-1 update, so the loop body has static shapes and
the IR stays the same size for any ``n`` (``n`` device iterations of a few fused kernels,
``O(n^3)`` work). ``det`` eliminates below the diagonal only and multiplies the pivots,
with the sign of the row swaps. Results agree with LAPACK's (``getrf``/``getrs``, partial
pivoting too) to rounding. A zero pivot (the column is zero at and below the diagonal)
eliminates nothing, so ``det`` of a singular matrix is 0 and ``slogdet`` gives
``(0, -inf)`` as numpy's do, while ``solve`` and ``inv`` give inf/NaN instead of numpy's
``LinAlgError`` (the check would need the data on the host).

Shapes: ``a`` (n, n), ``b`` (n,) or (n, k); float32/float64 (integers are computed in f32).
Stacks of matrices (``a`` of rank 3+) are refused with a clear error.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import UnsupportedError, VerifyError
from accy.frontend.control_flow import fori_loop
from accy.frontend.join_api import concatenate
from accy.frontend.numpy_api import (
    abs,
    astype,
    divide,
    equal,
    greater,
    greater_equal,
    log,
    multiply,
    not_equal,
    subtract,
    trace_of,
    where,
)
from accy.frontend.numpy_api import (
    sign as sign_of,
)
from accy.frontend.scan_api import argmax
from accy.frontend.shape_api import asarray, reshape
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["det", "inv", "matrix_power", "slogdet", "solve"]


def square_matrix(a: Any, what: str) -> Tracer:
    """``a`` checked to be one square matrix (``VerifyError`` otherwise, ``UnsupportedError``
    for a stack), integers cast to float32."""
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        if a.ndim > 2:
            raise UnsupportedError(
                f"numpy.linalg.{what} at {user_location()} of a stack of matrices "
                f"{list(a.shape)}: accy solves one matrix per call; loop over the stack in "
                "Python", feature=f"linalg.{what} stacked", alternative="a Python loop")
        raise VerifyError(f"numpy.linalg.{what} at {user_location()} needs a square matrix, "
                          f"got shape {list(a.shape)}")
    return a if a.accy_dtype.is_float else astype(a, np.float32)


def _pivot_step(m: Tracer, k: Any, n: int, below_only: bool) -> tuple[Tracer, Any]:
    """Row ``k`` swapped with the pivot row, then column ``k`` eliminated (from every
    other row, or from the rows below with ``below_only``); also whether rows moved."""
    rows = reshape(np.arange(n, dtype=np.int32), (n, 1))
    col = m[:, k]
    cand = where(greater_equal(np.arange(n, dtype=np.int32), k), abs(col), -1.0)
    p = astype(argmax(cand), np.int32)
    row_k, row_p = m[k], m[p]
    m = where(equal(rows, k), row_p, where(equal(rows, p), row_k, m))
    piv_row = m[k]
    col = m[:, k]
    factor = where(equal(piv_row[k], 0), 0.0, divide(col, piv_row[k]))  # singular: skip
    keep = greater(rows[:, 0], k) if below_only else not_equal(rows[:, 0], k)
    factor = where(keep, factor, 0.0)
    m = subtract(m, multiply(reshape(factor, (n, 1)), reshape(piv_row, (1, -1))))
    return m, not_equal(p, k)


def solve(a: Any, b: Any) -> Any:
    """``x`` with ``a @ x == b`` (``b`` of shape (n,) or (n, k)).

    Raises:
        VerifyError: a non-square ``a`` or a ``b`` whose first extent is not ``n``.
        UnsupportedError: a stack of matrices.
    """
    if trace_of(a, b) is None or not any(isinstance(x, Tracer) for x in (a, b)):
        return np.linalg.solve(a, b)
    a = square_matrix(asarray(a), "solve")
    b = asarray(b)
    n = a.shape[0]
    vec = b.ndim == 1
    if b.shape[0] != n or b.ndim > 2:
        raise VerifyError(f"numpy.linalg.solve at {user_location()}: b of shape "
                          f"{list(b.shape)} for a {n} x {n} matrix")
    bb = reshape(b, (n, 1)) if vec else b
    dt = np.result_type(a.dtype, bb.dtype)
    m = concatenate([astype(a, dt), astype(bb, dt)], axis=1)
    m = fori_loop(0, n, lambda k, m: _pivot_step(m, k, n, False)[0], m)
    diag = reshape(np.eye(n, dtype=bool), (n, n))
    d = (m[:, :n] * astype(diag, dt)).sum(axis=1)
    x = divide(m[:, n:], reshape(d, (n, 1)))
    return reshape(x, (n,)) if vec else x


def inv(a: Any) -> Any:
    """The inverse of the square ``a`` (``solve(a, eye(n))``)."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.inv(a)
    a = square_matrix(a, "inv")
    return solve(a, np.eye(a.shape[0], dtype=a.dtype))


def _pivots(a: Tracer) -> tuple[Tracer, Any]:
    """The pivots of Gaussian elimination with partial pivoting of the square ``a`` (n,)
    and the sign of its row permutation (+1 or -1)."""
    n = a.shape[0]

    def step(k: Any, carry: tuple) -> tuple:
        m, sign = carry
        m, swapped = _pivot_step(m, k, n, True)
        return m, where(swapped, multiply(sign, -1.0), sign)

    m, sign = fori_loop(0, n, step, (a, np.asarray(1.0, dtype=a.dtype)))
    return (m * astype(np.eye(n, dtype=bool), a.dtype)).sum(axis=1), sign


def det(a: Any) -> Any:
    """The determinant of the square ``a``: the product of the pivots of Gaussian
    elimination with partial pivoting, negated once per row swap."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.det(a)
    d, sign = _pivots(square_matrix(a, "det"))
    return multiply(d.prod(), sign)


def slogdet(a: Any) -> tuple[Any, Any]:
    """``(sign, logabsdet)`` of the square ``a``, as ``numpy.linalg.slogdet``: the sign of
    the determinant (0 for a singular matrix, whose ``logabsdet`` is ``-inf``) and the sum
    of ``log|pivot|``, which does not overflow where ``det`` would."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.slogdet(a)
    d, sign = _pivots(square_matrix(a, "slogdet"))
    s = multiply(sign, sign_of(d).prod()) + 0.0  # a zero sign is +0.0, as numpy's
    return s, log(abs(d)).sum()


def matrix_power(a: Any, n: int) -> Any:
    """``a`` (m, m) raised to the integer power ``n`` by repeated squaring
    (``O(log n)`` products); ``n == 0`` gives the identity and ``n < 0`` powers the inverse.

    Raises:
        VerifyError: ``a`` is not square or ``n`` is not a Python/numpy integer.
    """
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.matrix_power(a, n)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise VerifyError(f"numpy.linalg.matrix_power at {user_location()}: the exponent "
                          f"must be an integer known when tracing, got {type(n).__name__}")
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise VerifyError(f"numpy.linalg.matrix_power at {user_location()} needs a square "
                          f"matrix, got shape {list(a.shape)}")
    n = int(n)
    if n == 0:
        return asarray(np.eye(a.shape[0], dtype=a.dtype))
    base = inv(a) if n < 0 else a
    n = -n if n < 0 else n
    out = None
    while n:
        if n & 1:
            out = base if out is None else out @ base
        n >>= 1
        if n:
            base = base @ base
    return out
