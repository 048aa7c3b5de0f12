"""The PolyBench-style kernels written the JAX way: ``accy.fori_loop`` / ``accy.lax.scan``
with ``.at[...].set`` and masks instead of in-place slice updates and triangular loops.

Each function has the signature of its numpy reference (:mod:`.reference`) and is meant to
run under ``accy.jit`` (the Python numbers are static). A kernel whose inner loop bounds
depend on the outer index (``for j in range(i)``) loops over the full range and masks with
``anp.where`` on ``anp.arange(n)`` compared to the traced index.
"""

from __future__ import annotations

import accy.numpy as anp
from accy import lax

from tests.programs.polybench.reference import adi_constants, deriche_constants, heat_step


def jacobi_1d(A, B, tsteps):
    def step(t, c):
        A, B = c
        B = B.at[1:-1].set(0.33333 * (A[:-2] + A[1:-1] + A[2:]))
        A = A.at[1:-1].set(0.33333 * (B[:-2] + B[1:-1] + B[2:]))
        return A, B
    return lax.fori_loop(0, tsteps, step, (A, B))


def _five(A):
    return 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])


def jacobi_2d(A, B, tsteps):
    def step(t, c):
        A, B = c
        B = B.at[1:-1, 1:-1].set(_five(A))
        A = A.at[1:-1, 1:-1].set(_five(B))
        return A, B
    return lax.fori_loop(0, tsteps, step, (A, B))


def heat_3d(A, B, tsteps):
    def step(t, c):
        A, B = c
        B = B.at[1:-1, 1:-1, 1:-1].set(heat_step(A))
        A = A.at[1:-1, 1:-1, 1:-1].set(heat_step(B))
        return A, B
    return lax.fori_loop(0, tsteps, step, (A, B))


def seidel_2d(A, tsteps):
    n = A.shape[0]

    def cell(j, A, i):
        w = lax.dynamic_slice(A, (i - 1, j - 1), (3, 3))
        return A.at[i, j].set(w.sum() / 9.0)

    def row(i, A):
        return lax.fori_loop(1, n - 1, lambda j, A: cell(j, A, i), A)

    return (lax.fori_loop(0, tsteps, lambda t, A: lax.fori_loop(1, n - 1, row, A), A),)


def fdtd_2d(ex, ey, hz, fict):
    def step(t, c):
        ex, ey, hz = c
        ey = ey.at[0, :].set(fict[t])
        ey = ey.at[1:, :].set(ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :]))
        ex = ex.at[:, 1:].set(ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1]))
        hz = hz.at[:-1, :-1].set(hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1]
                                                       + ey[1:, :-1] - ey[:-1, :-1]))
        return ex, ey, hz
    return lax.fori_loop(0, fict.shape[0], step, (ex, ey, hz))


def lu(A):
    n = A.shape[0]
    r = anp.arange(n)

    def step(k, A):
        below = r > k
        col = anp.where(below, A[:, k] / A[k, k], A[:, k])
        row = anp.where(r > k, A[k, :], 0.0)
        A = anp.where(below[:, None], A - col[:, None] * row[None, :], A)
        return A.at[:, k].set(col)
    return (lax.fori_loop(0, n, step, A),)


def cholesky(A):
    n = A.shape[0]
    r = anp.arange(n)

    def step(k, L):
        d = anp.sqrt(L[k, k])
        col = anp.where(r > k, L[:, k] / d, anp.where(r == k, d, L[:, k]))
        inner = (r[:, None] > k) & (r[None, :] > k)
        L = anp.where(inner, L - col[:, None] * col[None, :], L)
        return L.at[:, k].set(col)
    L = lax.fori_loop(0, n, step, A)
    return (anp.where(r[:, None] >= r[None, :], L, A),)


def gramschmidt(A):
    m, n = A.shape
    cols = anp.arange(n)

    def step(k, c):
        A, R, Q = c
        a = A[:, k]
        nrm = anp.sqrt((a * a).sum())
        q = a / nrm
        proj = (q[:, None] * A).sum(axis=0)
        later = cols > k
        R = R.at[k, :].set(anp.where(later, proj, anp.where(cols == k, nrm, R[k, :])))
        A = anp.where(later[None, :], A - q[:, None] * proj[None, :], A)
        return A, R, Q.at[:, k].set(q)
    return lax.fori_loop(0, n, step, (A, anp.zeros((n, n), anp.float32),
                                      anp.zeros((m, n), anp.float32)))


def floyd_warshall(path):
    def step(k, p):
        return anp.minimum(p, p[:, k][:, None] + p[k, :][None, :])
    return (lax.fori_loop(0, path.shape[0], step, path),)


def trisolv(L, b):
    def step(i, x):
        return x.at[i].set((b[i] - (L[i, :] * x).sum()) / L[i, i])
    return (lax.fori_loop(0, b.shape[0], step, anp.zeros_like(b)),)


def syrk(C, A, alpha, beta):
    n = C.shape[0]
    cols = anp.arange(n)

    def step(i, C):
        row = beta * C[i, :] + alpha * (A * A[i, :][None, :]).sum(axis=1)
        return C.at[i, :].set(anp.where(cols <= i, row, C[i, :]))
    return (lax.fori_loop(0, n, step, C),)


def doitgen(A, C4):
    return (lax.fori_loop(0, A.shape[0], lambda r, A: A.at[r].set(A[r] @ C4), A),)


def adi(u, tsteps):
    n = u.shape[0]
    a, b, c, d, e, f = adi_constants(n, tsteps)

    def sweep(src, lo, hi, mid, pre, post):
        """One half step: tridiagonal solves along axis 1 of the result for every interior
        row (p, q recurrences forward, back substitution backward). ``src`` gives the
        right-hand sides; rows of the result are ``dst[i, :]``."""
        def fwd(j, c):
            p, q = c
            den = pre * p[1:-1, j - 1] + mid
            rhs = -lo * src(j, 0) + (1.0 + 2.0 * lo) * src(j, 1) - hi * src(j, 2)
            p = p.at[1:-1, j].set(-post / den)
            q = q.at[1:-1, j].set((rhs - pre * q[1:-1, j - 1]) / den)
            return p, q
        p = anp.zeros((n, n), anp.float32)
        q = anp.zeros((n, n), anp.float32).at[1:-1, 0].set(1.0)
        p, q = lax.fori_loop(1, n - 1, fwd, (p, q))
        out = anp.zeros((n, n), anp.float32)
        out = out.at[1:-1, 0].set(1.0).at[1:-1, n - 1].set(1.0)

        def back(k, out):
            j = n - 2 - k
            return out.at[1:-1, j].set(p[1:-1, j] * out[1:-1, j + 1] + q[1:-1, j])
        return lax.fori_loop(0, n - 2, back, out)

    def step(t, u):
        # column sweep: v[j, i] solved along j for each interior i (v = vt.T)
        vt = sweep(lambda j, s: u[j, s:n - 2 + s], d, f, b, a, c)
        v = vt.T
        # row sweep: u[i, j] along j for each interior i
        u2 = sweep(lambda j, s: v[s:n - 2 + s, j], a, c, e, d, f)
        return u2.at[0, :].set(u[0, :]).at[n - 1, :].set(u[n - 1, :])
    return (lax.fori_loop(0, tsteps, step, u),)


def _causal(x, a_now, a_prev, b1, b2):
    """y[j] = a_now*x[j] + a_prev*x[j-1] + b1*y[j-1] + b2*y[j-2] along axis 0 of x."""
    z = anp.zeros_like(x[0])

    def f(c, xj):
        xm1, ym1, ym2 = c
        y = a_now * xj + a_prev * xm1 + b1 * ym1 + b2 * ym2
        return (xj, y, ym1), y
    return lax.scan(f, (z, z, z), x)[1]


def _anticausal(x, a1, a2, b1, b2):
    """y[j] = a1*x[j+1] + a2*x[j+2] + b1*y[j+1] + b2*y[j+2] along axis 0 of x."""
    z = anp.zeros_like(x[0])

    def f(c, xj):
        xp1, xp2, yp1, yp2 = c
        y = a1 * xp1 + a2 * xp2 + b1 * yp1 + b2 * yp2
        return (xj, xp1, y, yp1), y
    return lax.scan(f, (z, z, z, z), x, reverse=True)[1]


def deriche(img, alpha):
    a1, a2, a3, a4, a5, a6, a7, a8, b1, b2 = deriche_constants(alpha)
    cols = img.T  # rows recursions run along j: scan over the columns
    out = (_causal(cols, a1, a2, b1, b2) + _anticausal(cols, a3, a4, b1, b2)).T
    return (_causal(out, a5, a6, b1, b2) + _anticausal(out, a7, a8, b1, b2),)


def nussinov(seq, table):
    n = seq.shape[0]
    ks = anp.arange(n - 1)
    big = -(2 ** 30)

    def cell(j, t, i):
        cur = t[i, j]
        v = anp.maximum(cur, t[i, j - 1])
        v = anp.maximum(v, t[i + 1, j])
        match = anp.where(seq[i] + seq[j] == 3, 1, 0)
        v = anp.maximum(v, t[i + 1, j - 1] + anp.where(i < j - 1, match, 0))
        split = anp.where((ks > i) & (ks < j), t[i, :][:-1] + t[:, j][1:], big)
        v = anp.maximum(v, split.max())
        return t.at[i, j].set(anp.where((j > i) & (i + 1 < n), v, cur))

    def row(k, t):
        i = n - 1 - k
        return lax.fori_loop(1, n, lambda j, t: cell(j, t, i), t)
    return (lax.fori_loop(0, n, row, table),)
