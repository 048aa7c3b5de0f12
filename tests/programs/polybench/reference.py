"""PolyBench/C 4.2 kernels in plain numpy, loop for loop as the C reference writes them.

Each function takes the kernel's inputs (numpy arrays, sizes from the array shapes) and
returns its outputs, copying what it updates; these are the oracles the accy versions are
compared with. Inputs come from :mod:`tests.programs.polybench.inputs`.
"""

from __future__ import annotations

import math

import numpy as np


def jacobi_1d(A, B, tsteps):
    A, B = A.copy(), B.copy()
    for _ in range(tsteps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B


def jacobi_2d(A, B, tsteps):
    A, B = A.copy(), B.copy()
    for _ in range(tsteps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1]
                               + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1]
                               + B[:-2, 1:-1])
    return A, B


def heat_step(A):
    """The 7-point heat stencil of ``A``'s interior (the new ``A[1:-1, 1:-1, 1:-1]``)."""
    c = A[1:-1, 1:-1, 1:-1]
    return (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * c + A[:-2, 1:-1, 1:-1])
            + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * c + A[1:-1, :-2, 1:-1])
            + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * c + A[1:-1, 1:-1, :-2]) + c)


def heat_3d(A, B, tsteps):
    A, B = A.copy(), B.copy()
    for _ in range(tsteps):
        B[1:-1, 1:-1, 1:-1] = heat_step(A)
        A[1:-1, 1:-1, 1:-1] = heat_step(B)
    return A, B


def seidel_2d(A, tsteps):
    A = A.copy()
    n = A.shape[0]
    for _ in range(tsteps):
        for i in range(1, n - 1):
            for j in range(1, n - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1]
                           + A[i, j] + A[i, j + 1] + A[i + 1, j - 1] + A[i + 1, j]
                           + A[i + 1, j + 1]) / 9.0
    return (A,)


def fdtd_2d(ex, ey, hz, fict):
    ex, ey, hz = ex.copy(), ey.copy(), hz.copy()
    for t in range(fict.shape[0]):
        ey[0, :] = fict[t]
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1]
                                             - ey[:-1, :-1])
    return ex, ey, hz


def lu(A):
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]
    return (A,)


def cholesky(A):
    A = A.copy()
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = math.sqrt(A[i, i])
    return (A,)


def gramschmidt(A):
    A = A.copy()
    m, n = A.shape
    R = np.zeros((n, n), A.dtype)
    Q = np.zeros((m, n), A.dtype)
    for k in range(n):
        nrm = A.dtype.type(0)
        for i in range(m):
            nrm += A[i, k] * A[i, k]
        R[k, k] = math.sqrt(nrm)
        for i in range(m):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, n):
            R[k, j] = 0
            for i in range(m):
                R[k, j] += Q[i, k] * A[i, j]
            for i in range(m):
                A[i, j] = A[i, j] - Q[i, k] * R[k, j]
    return A, R, Q


def floyd_warshall(path):
    path = path.copy()
    n = path.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if path[i, j] > path[i, k] + path[k, j]:
                    path[i, j] = path[i, k] + path[k, j]
    return (path,)


def trisolv(L, b):
    n = L.shape[0]
    x = np.zeros_like(b)
    for i in range(n):
        x[i] = b[i]
        for j in range(i):
            x[i] -= L[i, j] * x[j]
        x[i] = x[i] / L[i, i]
    return (x,)


def syrk(C, A, alpha, beta):
    C = C.copy()
    n, m = A.shape
    for i in range(n):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(m):
            for j in range(i + 1):
                C[i, j] += alpha * A[i, k] * A[j, k]
    return (C,)


def doitgen(A, C4):
    A = A.copy()
    nr, nq, np_ = A.shape
    for r in range(nr):
        for q in range(nq):
            s = np.zeros(np_, A.dtype)
            for p in range(np_):
                for k in range(np_):
                    s[p] += A[r, q, k] * C4[k, p]
            A[r, q, :] = s
    return (A,)


def adi_constants(n, tsteps):
    dx, dy, dt = 1.0 / n, 1.0 / n, 1.0 / tsteps
    b1, b2 = 2.0, 1.0
    mul1, mul2 = b1 * dt / (dx * dx), b2 * dt / (dy * dy)
    a, b = -mul1 / 2.0, 1.0 + mul1
    d, e = -mul2 / 2.0, 1.0 + mul2
    return a, b, a, d, e, d


def adi(u, tsteps):
    u = u.copy()
    n = u.shape[0]
    v, p, q = np.zeros_like(u), np.zeros_like(u), np.zeros_like(u)
    a, b, c, d, e, f = adi_constants(n, tsteps)
    for _ in range(tsteps):
        for i in range(1, n - 1):
            v[0, i] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = v[0, i]
            for j in range(1, n - 1):
                p[i, j] = -c / (a * p[i, j - 1] + b)
                q[i, j] = (-d * u[j, i - 1] + (1.0 + 2.0 * d) * u[j, i] - f * u[j, i + 1]
                           - a * q[i, j - 1]) / (a * p[i, j - 1] + b)
            v[n - 1, i] = 1.0
            for j in range(n - 2, 0, -1):
                v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
        for i in range(1, n - 1):
            u[i, 0] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = u[i, 0]
            for j in range(1, n - 1):
                p[i, j] = -f / (d * p[i, j - 1] + e)
                q[i, j] = (-a * v[i - 1, j] + (1.0 + 2.0 * a) * v[i, j] - c * v[i + 1, j]
                           - d * q[i, j - 1]) / (d * p[i, j - 1] + e)
            u[i, n - 1] = 1.0
            for j in range(n - 2, 0, -1):
                u[i, j] = p[i, j] * u[i, j + 1] + q[i, j]
    return (u,)


def deriche_constants(alpha):
    ea, e2a = math.exp(-alpha), math.exp(-2.0 * alpha)
    k = (1.0 - ea) * (1.0 - ea) / (1.0 + 2.0 * alpha * ea - math.exp(2.0 * alpha))
    a1 = a5 = k
    a2 = a6 = k * ea * (alpha - 1.0)
    a3 = a7 = k * ea * (alpha + 1.0)
    a4 = a8 = -k * e2a
    b1, b2 = 2.0 ** (-alpha), -e2a
    return a1, a2, a3, a4, a5, a6, a7, a8, b1, b2


def deriche(img, alpha):
    w, h = img.shape
    a1, a2, a3, a4, a5, a6, a7, a8, b1, b2 = deriche_constants(alpha)
    y1, y2 = np.zeros_like(img), np.zeros_like(img)
    for i in range(w):
        ym1 = ym2 = xm1 = 0.0
        for j in range(h):
            y1[i, j] = a1 * img[i, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
            xm1, ym2, ym1 = img[i, j], ym1, y1[i, j]
    for i in range(w):
        yp1 = yp2 = xp1 = xp2 = 0.0
        for j in range(h - 1, -1, -1):
            y2[i, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
            xp2, xp1, yp2, yp1 = xp1, img[i, j], yp1, y2[i, j]
    out = y1 + y2
    for j in range(h):
        tm1 = ym1 = ym2 = 0.0
        for i in range(w):
            y1[i, j] = a5 * out[i, j] + a6 * tm1 + b1 * ym1 + b2 * ym2
            tm1, ym2, ym1 = out[i, j], ym1, y1[i, j]
    for j in range(h):
        tp1 = tp2 = yp1 = yp2 = 0.0
        for i in range(w - 1, -1, -1):
            y2[i, j] = a7 * tp1 + a8 * tp2 + b1 * yp1 + b2 * yp2
            tp2, tp1, yp2, yp1 = tp1, out[i, j], yp1, y2[i, j]
    return ((y1 + y2).astype(img.dtype),)


def nussinov(seq, table):
    table = table.copy()
    n = seq.shape[0]
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            if j - 1 >= 0:
                table[i, j] = max(table[i, j], table[i, j - 1])
            if i + 1 < n:
                table[i, j] = max(table[i, j], table[i + 1, j])
            if j - 1 >= 0 and i + 1 < n:
                if i < j - 1:
                    match = 1 if seq[i] + seq[j] == 3 else 0
                    table[i, j] = max(table[i, j], table[i + 1, j - 1] + match)
                else:
                    table[i, j] = max(table[i, j], table[i + 1, j - 1])
            for k in range(i + 1, j):
                table[i, j] = max(table[i, j], table[i, k] + table[k + 1, j])
    return (table,)
