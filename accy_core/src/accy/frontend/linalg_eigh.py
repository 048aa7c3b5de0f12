"""``np.linalg.eigh`` and ``eigvalsh`` of a traced symmetric matrix.

Cyclic parallel Jacobi (Golub & Van Loan, *Matrix Computations*, 4th ed., sections 8.5.2 and
8.5.5; round-robin "tournament" ordering of Brent and Luk, 1985): a sweep is ``m - 1``
steps, and each step rotates ``m / 2`` disjoint index pairs ``(p, q)`` at once with the
symmetric Schur rotation that zeroes ``a[p, q]`` (algorithm 8.5.1). The ``m / 2`` rotations
form one orthogonal ``J`` with two nonzeros per column, so a step ``A <- J^T A J``,
``V <- V J`` is a few fused elementwise passes with a row or column gather (``O(m^2)``),
shapes static, the pairing of step ``r`` read from a constant table. Sweeps repeat
(``accy.while_loop``) until the off-diagonal Frobenius norm is below ``m * eps`` times the
matrix's, or 30 sweeps (Jacobi converges quadratically: 6-10 sweeps in practice). An odd
``n`` is padded with one decoupled row and column (``m = n + 1``).

Results: eigenvalues ascending as numpy's (LAPACK ``syevd``), to a few ulps of the matrix
norm (Jacobi is at least as accurate as the QR algorithm, Demmel and Veselic 1992);
eigenvectors are the columns of ``V``, orthonormal, equal to numpy's up to the sign of each
column (and within a repeated eigenvalue's subspace: any orthonormal basis of it is an
answer; numpy's choice is LAPACK's). Only the lower triangle of ``a`` is read
(``UPLO='L'``, numpy's default; ``'U'`` reads the upper one). Shapes: ``a`` (n, n),
float32/float64 (integers in f32); cost ``O(n^2)`` per step, ``O(n^3)`` per sweep (a few
times LAPACK's flops, and ``n`` dependent steps per sweep), so this is meant for the small
and medium matrices of a program, not for replacing LAPACK on large ones.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from accy.errors import VerifyError
from accy.frontend.control_flow import fori_loop, while_loop
from accy.frontend.indexing import take
from accy.frontend.linalg_solve import square_matrix
from accy.frontend.numpy_api import (
    abs,
    equal,
    greater,
    greater_equal,
    less,
    logical_and,
    sqrt,
    trace_of,
    where,
)
from accy.frontend.ordering import argsort
from accy.frontend.pad_api import pad
from accy.frontend.shape_api import asarray, reshape
from accy.frontend.trace import user_location
from accy.frontend.tracer import Tracer

__all__ = ["eigh", "eigvalsh"]

_MAX_SWEEPS = 30


def _round_robin(m: int) -> np.ndarray:
    """``partner[r, k]``: the index paired with ``k`` in step ``r`` of a sweep (``m`` even;
    every pair meets once in ``m - 1`` steps: player 0 stays, the others rotate)."""
    partner = np.zeros((m - 1, m), dtype=np.int32)
    others = list(range(1, m))
    for r in range(m - 1):
        order = [0] + others
        for i in range(m // 2):
            a, b = order[i], order[m - 1 - i]
            partner[r, a], partner[r, b] = b, a
        others = others[-1:] + others[:-1]
    return partner


def _rotation(a: Any, partner: Any, m: int) -> tuple[Any, Any]:
    """One step's rotations as two vectors (m,): ``J = diag(c) + G`` where, for each pair
    ``p < q``, the Schur rotation has ``J[p, p] = J[q, q] = c``, ``J[p, q] = s`` and
    ``J[q, p] = -s``; ``g[k] = J[partner[k], k]`` (``-s`` at ``p``, ``s`` at ``q``), so
    ``(A J)[:, k] = c[k] A[:, k] + g[k] A[:, partner[k]]``: ``O(m^2)`` per step."""
    k = np.arange(m, dtype=np.int32)
    is_p = less(k, partner)
    p = where(is_p, k, partner)
    q = where(is_p, partner, k)
    flat = reshape(a, (m * m,))  # indices are in range by construction: unchecked gathers
    app, aqq = take(flat, p * (m + 1), mode="clip"), take(flat, q * (m + 1), mode="clip")
    apq = take(flat, p * m + q, mode="clip")
    zero = equal(apq, 0)
    tau = (aqq - app) / (2.0 * where(zero, 1.0, apq))
    t = where(greater_equal(tau, 0), 1.0, -1.0) / (abs(tau) + sqrt(1.0 + tau * tau))
    c = 1.0 / sqrt(1.0 + t * t)
    s = t * c
    c, s = where(zero, 1.0, c), where(zero, 0.0, s)
    return c, where(is_p, -s, s)


def _off(a: Any, m: int) -> Any:
    """The squared off-diagonal Frobenius norm of ``a``."""
    off_mask = np.ones((m, m), dtype=bool) & ~np.eye(m, dtype=bool)
    return (where(off_mask, a, 0.0) ** 2).sum()


def _jacobi(a: Tracer, uplo: str, what: str) -> tuple[Tracer, Tracer]:
    if uplo not in ("L", "U"):
        raise VerifyError(f"numpy.linalg.{what} at {user_location()}: UPLO must be 'L' or "
                          f"'U', got {uplo!r}")
    a = square_matrix(asarray(a), what)
    n = a.shape[0]
    lower = np.tril(np.ones((n, n), dtype=bool))
    tri = a if uplo == "L" else a.T
    a = where(lower, tri, 0.0) + where(lower & ~np.eye(n, dtype=bool), tri, 0.0).T
    m = n + n % 2
    if m != n:  # one decoupled row and column: its pairs have a[p, q] == 0 (no rotation)
        a = pad(a, ((0, 1), (0, 1)))
    table = asarray(_round_robin(m))
    eps = float(np.finfo(np.dtype(a.dtype)).eps)
    tol = (m * eps) ** 2 * (a * a).sum()

    def sweep(carry: tuple) -> tuple:
        a, v, count = carry

        def step(r: Any, av: tuple) -> tuple:
            a, v = av
            partner = table[r]
            c, g = _rotation(a, partner, m)
            row_c, row_g = reshape(c, (1, m)), reshape(g, (1, m))
            a = a * row_c + take(a, partner, axis=1, mode="clip") * row_g  # A J
            a = a * reshape(c, (m, 1)) + take(a, partner, axis=0, mode="clip") * \
                reshape(g, (m, 1))  # J^T (A J)
            return a, v * row_c + take(v, partner, axis=1, mode="clip") * row_g

        a, v = fori_loop(0, m - 1, step, (a, v))
        return a, v, count + 1

    def unconverged(carry: tuple) -> Any:
        a, _, count = carry
        return logical_and(greater(_off(a, m), tol), less(count, _MAX_SWEEPS))

    a, v, _ = while_loop(unconverged, sweep,
                         (a, np.eye(m, dtype=a.dtype), np.asarray(0, dtype=np.int32)))
    k = np.arange(m, dtype=np.int32)
    w = a[k, k][:n]
    v = v[:n, :n]
    order = argsort(w)
    return w[order], v[:, order]


def eigh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803 (numpy's keyword)
    """Eigenvalues ``w`` (n,) ascending and orthonormal eigenvectors ``v`` (n, n) of the
    symmetric ``a`` (n, n), ``a @ v[:, i] == w[i] * v[:, i]`` (method and guarantees in the
    module docstring).

    Raises:
        VerifyError: ``a`` is not square, or ``UPLO`` is not ``'L'`` or ``'U'``.
        UnsupportedError: a stack of matrices.
    """
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.eigh(a, UPLO=UPLO)
    return _jacobi(a, UPLO, "eigh")


def eigvalsh(a: Any, UPLO: str = "L") -> Any:  # noqa: N803 (numpy's keyword)
    """The eigenvalues (n,) of the symmetric ``a`` (n, n), ascending (see :func:`eigh`)."""
    if trace_of(a) is None or not isinstance(a, Tracer):
        return np.linalg.eigvalsh(a, UPLO=UPLO)
    return _jacobi(a, UPLO, "eigvalsh")[0]
