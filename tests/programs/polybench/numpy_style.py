"""PolyBench-style kernels written the way numpy users write them, run under ``accy.jit``.

Time loops and the loops over ``k`` of the factorisations are Python loops (unrolled at
trace time), rows and windows are updated in place with slice assignments (``A[1:-1] =``,
``A[i, j] -= ...``, ``x[i] /= ...``), and each function copies what it updates, like the
numpy references in :mod:`.reference`, so the same function runs unchanged on numpy
arrays (with ``accy.numpy`` computing eagerly). Inputs: :mod:`.inputs`.

``jacobi_1d`` and ``jacobi_2d`` are the references' own functions: the C loops over ``i``
are already whole-slice updates there, which is how a numpy user writes them.
"""

from __future__ import annotations

import accy.numpy as anp

from tests.programs.polybench import reference
from tests.programs.polybench.reference import adi_constants, deriche_constants

jacobi_1d = reference.jacobi_1d  # the reference's own (module doc)
jacobi_2d = reference.jacobi_2d


def heat_3d(A, B, tsteps):
    A, B = A.copy(), B.copy()
    for _ in range(tsteps):
        for src, dst in ((A, B), (B, A)):
            c = src[1:-1, 1:-1, 1:-1]
            dst[1:-1, 1:-1, 1:-1] = (
                0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2]) + c)
    return A, B


def seidel_2d(A, tsteps):
    A = A.copy()
    n = A.shape[0]
    for _ in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):  # A[i, j - 1] is already this sweep's value
                A[i, j] = (A[i - 1, j - 1:j + 2].sum() + A[i, j - 1:j + 2].sum()
                           + A[i + 1, j - 1:j + 2].sum()) / 9.0
    return (A,)


def fdtd_2d(ex, ey, hz, fict):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])
    return ex, ey, hz


def lu(A):
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        A[i, i:] -= A[i, :i] @ A[:i, i:]
    return (A,)


def cholesky(A):
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[j, :j]
            A[i, j] /= A[j, j]
        A[i, i] -= A[i, :i] @ A[i, :i]
        A[i, i] = anp.sqrt(A[i, i])
    return (A,)


def gramschmidt(A):
    A = A.copy()
    m, n = A.shape
    R = anp.zeros((n, n), dtype=A.dtype)
    Q = anp.zeros((m, n), dtype=A.dtype)
    for k in range(n):
        R[k, k] = anp.sqrt(A[:, k] @ A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= anp.outer(Q[:, k], R[k, k + 1:])
    return A, R, Q


def floyd_warshall(path):
    path = path.copy()
    for k in range(path.shape[0]):
        path[:] = anp.minimum(path, anp.add.outer(path[:, k], path[k, :]))
    return (path,)


def trisolv(L, b):
    x = anp.zeros_like(b)
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return (x,)


def syrk(C, A, alpha, beta):
    C = C.copy()
    n = C.shape[0]
    for i in range(n):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]
    return (C,)


def doitgen(A, C4):
    A = A.copy()
    for r in range(A.shape[0]):
        A[r, :, :] = A[r] @ C4
    return (A,)


def adi(u, tsteps):
    u = u.copy()
    n = u.shape[0]
    v, p, q = anp.zeros_like(u), anp.zeros_like(u), anp.zeros_like(u)
    a, b, c, d, e, f = adi_constants(n, tsteps)
    for _ in range(tsteps):  # rows i are independent: each sweep runs over j for all i
        v[0, 1:-1] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = v[0, 1:-1]
        for j in range(1, n - 1):
            den = a * p[1:-1, j - 1] + b
            p[1:-1, j] = -c / den
            q[1:-1, j] = (-d * u[j, :-2] + (1.0 + 2.0 * d) * u[j, 1:-1] - f * u[j, 2:]
                          - a * q[1:-1, j - 1]) / den
        v[n - 1, 1:-1] = 1.0
        for j in range(n - 2, 0, -1):
            v[j, 1:-1] = p[1:-1, j] * v[j + 1, 1:-1] + q[1:-1, j]
        u[1:-1, 0] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = u[1:-1, 0]
        for j in range(1, n - 1):
            den = d * p[1:-1, j - 1] + e
            p[1:-1, j] = -f / den
            q[1:-1, j] = (-a * v[:-2, j] + (1.0 + 2.0 * a) * v[1:-1, j] - c * v[2:, j]
                          - d * q[1:-1, j - 1]) / den
        u[1:-1, n - 1] = 1.0
        for j in range(n - 2, 0, -1):
            u[1:-1, j] = p[1:-1, j] * u[1:-1, j + 1] + q[1:-1, j]
    return (u,)


def deriche(img, alpha):
    w, h = img.shape
    a1, a2, a3, a4, a5, a6, a7, a8, b1, b2 = deriche_constants(alpha)
    y1, y2 = anp.zeros_like(img), anp.zeros_like(img)
    ym1 = ym2 = xm1 = anp.zeros(w, dtype=img.dtype)  # one recurrence per row, vectorised
    for j in range(h):
        y1[:, j] = a1 * img[:, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
        xm1, ym2, ym1 = img[:, j], ym1, y1[:, j]
    yp1 = yp2 = xp1 = xp2 = anp.zeros(w, dtype=img.dtype)
    for j in range(h - 1, -1, -1):
        y2[:, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
        xp2, xp1, yp2, yp1 = xp1, img[:, j], yp1, y2[:, j]
    out = y1 + y2
    tm1 = ym1 = ym2 = anp.zeros(h, dtype=img.dtype)
    for i in range(w):
        y1[i, :] = a5 * out[i, :] + a6 * tm1 + b1 * ym1 + b2 * ym2
        tm1, ym2, ym1 = out[i, :], ym1, y1[i, :]
    tp1 = tp2 = yp1 = yp2 = anp.zeros(h, dtype=img.dtype)
    for i in range(w - 1, -1, -1):
        y2[i, :] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2
        tp2, tp1, yp2, yp1 = tp1, out[i, :], yp1, y2[i, :]
    return ((y1 + y2).astype(img.dtype),)


def nussinov(seq, table):
    table = table.copy()
    n = seq.shape[0]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = anp.maximum(table[i, j], table[i, j - 1])
            if i + 1 < n:
                best = anp.maximum(best, table[i + 1, j])
                pair = table[i + 1, j - 1]
                if i < j - 1:
                    pair = pair + anp.where(seq[i] + seq[j] == 3, 1, 0)
                best = anp.maximum(best, pair)
            if j > i + 1:
                best = anp.maximum(best, (table[i, i + 1:j] + table[i + 2:j + 1, j]).max())
            table[i, j] = best
    return (table,)
