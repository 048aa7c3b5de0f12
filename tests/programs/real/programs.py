"""Numpy programs a new user brings, written as numpy users write them (``import numpy as
np``, in-place slice updates, host arrays made inside the function, Python time loops),
run unchanged under ``accy.jit``; where the numpy form needs a data-dependent loop
(``while err > tol``) the program uses ``accy.lax.while_loop``, and random numbers come
from ``accy.numpy.random`` with a static key. Each function also runs eagerly on numpy
arrays, which is what the tests compare with (:mod:`.cases`).
"""

from __future__ import annotations

import accy.numpy as anp
import numpy as np
from accy import lax


# 1. cavity flow (Barba step 11)
def cavity_flow(u, v, p, nt, nit, dx, dy, dt, rho, nu):
    b = np.zeros_like(p)
    for _ in range(nt):
        un = u.copy()
        vn = v.copy()
        b[1:-1, 1:-1] = (rho * (1 / dt *
                        ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx) + (v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy)) -
                        ((u[1:-1, 2:] - u[1:-1, 0:-2]) / (2 * dx))**2 -
                        2 * ((u[2:, 1:-1] - u[0:-2, 1:-1]) / (2 * dy) *
                             (v[1:-1, 2:] - v[1:-1, 0:-2]) / (2 * dx)) -
                        ((v[2:, 1:-1] - v[0:-2, 1:-1]) / (2 * dy))**2))
        for _ in range(nit):
            pn = p.copy()
            p[1:-1, 1:-1] = (((pn[1:-1, 2:] + pn[1:-1, 0:-2]) * dy**2 +
                              (pn[2:, 1:-1] + pn[0:-2, 1:-1]) * dx**2) /
                             (2 * (dx**2 + dy**2)) -
                             dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1, 1:-1])
            p[:, -1] = p[:, -2]
            p[0, :] = p[1, :]
            p[:, 0] = p[:, 1]
            p[-1, :] = 0
        u[1:-1, 1:-1] = (un[1:-1, 1:-1] -
                         un[1:-1, 1:-1] * dt / dx * (un[1:-1, 1:-1] - un[1:-1, 0:-2]) -
                         vn[1:-1, 1:-1] * dt / dy * (un[1:-1, 1:-1] - un[0:-2, 1:-1]) -
                         dt / (2 * rho * dx) * (p[1:-1, 2:] - p[1:-1, 0:-2]) +
                         nu * (dt / dx**2 * (un[1:-1, 2:] - 2 * un[1:-1, 1:-1] + un[1:-1, 0:-2]) +
                               dt / dy**2 * (un[2:, 1:-1] - 2 * un[1:-1, 1:-1] + un[0:-2, 1:-1])))
        v[1:-1, 1:-1] = (vn[1:-1, 1:-1] -
                         un[1:-1, 1:-1] * dt / dx * (vn[1:-1, 1:-1] - vn[1:-1, 0:-2]) -
                         vn[1:-1, 1:-1] * dt / dy * (vn[1:-1, 1:-1] - vn[0:-2, 1:-1]) -
                         dt / (2 * rho * dy) * (p[2:, 1:-1] - p[0:-2, 1:-1]) +
                         nu * (dt / dx**2 * (vn[1:-1, 2:] - 2 * vn[1:-1, 1:-1] + vn[1:-1, 0:-2]) +
                               dt / dy**2 * (vn[2:, 1:-1] - 2 * vn[1:-1, 1:-1] + vn[0:-2, 1:-1])))
        u[0, :] = 0
        u[:, 0] = 0
        u[:, -1] = 0
        u[-1, :] = 1
        v[0, :] = 0
        v[-1, :] = 0
        v[:, 0] = 0
        v[:, -1] = 0
    return u, v, p


# 2. channel flow with periodic x boundary via np.roll (Barba step 12 variant)
def channel_flow(u, v, p, nt, nit, dx, dy, dt, rho, nu, F):
    for _ in range(nt):
        un = u.copy()
        vn = v.copy()
        ue = np.roll(u, -1, axis=1)
        uw = np.roll(u, 1, axis=1)
        ve = np.roll(v, -1, axis=1)
        vw = np.roll(v, 1, axis=1)
        b = np.zeros_like(p)
        b[1:-1, :] = rho * (1 / dt * ((ue - uw)[1:-1] / (2 * dx) + (v[2:] - v[:-2]) / (2 * dy))
                            - ((ue - uw)[1:-1] / (2 * dx)) ** 2
                            - 2 * ((u[2:] - u[:-2]) / (2 * dy) * (ve - vw)[1:-1] / (2 * dx))
                            - ((v[2:] - v[:-2]) / (2 * dy)) ** 2)
        for _ in range(nit):
            pn = p.copy()
            pe = np.roll(pn, -1, axis=1)
            pw = np.roll(pn, 1, axis=1)
            p[1:-1, :] = (((pe + pw)[1:-1] * dy**2 + (pn[2:] + pn[:-2]) * dx**2)
                          / (2 * (dx**2 + dy**2))
                          - dx**2 * dy**2 / (2 * (dx**2 + dy**2)) * b[1:-1])
            p[-1, :] = p[-2, :]
            p[0, :] = p[1, :]
        pe = np.roll(p, -1, axis=1)
        pw = np.roll(p, 1, axis=1)
        u[1:-1] = (un[1:-1] - un[1:-1] * dt / dx * (un[1:-1] - uw[1:-1])
                   - vn[1:-1] * dt / dy * (un[1:-1] - un[:-2])
                   - dt / (2 * rho * dx) * (pe - pw)[1:-1]
                   + nu * (dt / dx**2 * (ue - 2 * un + uw)[1:-1]
                           + dt / dy**2 * (un[2:] - 2 * un[1:-1] + un[:-2])) + F * dt)
        v[1:-1] = (vn[1:-1] - un[1:-1] * dt / dx * (vn[1:-1] - vw[1:-1])
                   - vn[1:-1] * dt / dy * (vn[1:-1] - vn[:-2])
                   - dt / (2 * rho * dy) * (p[2:] - p[:-2])
                   + nu * (dt / dx**2 * (ve - 2 * vn + vw)[1:-1]
                           + dt / dy**2 * (vn[2:] - 2 * vn[1:-1] + vn[:-2])))
        u[0, :] = 0
        u[-1, :] = 0
        v[0, :] = 0
        v[-1, :] = 0
    return u, v, p


# 3. 2-D wave equation, leapfrog
def wave2d(u0, steps, c):
    u_prev = u0.copy()
    u = u0.copy()
    for _ in range(steps):
        lap = np.zeros_like(u)
        lap[1:-1, 1:-1] = u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2] - 4 * u[1:-1, 1:-1]
        u_next = 2 * u - u_prev + c * c * lap
        u_next[0, :] = u_next[-1, :] = 0.0
        u_next[:, 0] = u_next[:, -1] = 0.0
        u_prev, u = u, u_next
    return u


# 4. heat with np.roll (periodic)
def heat_roll(T, steps, alpha):
    for _ in range(steps):
        T = T + alpha * (np.roll(T, 1, 0) + np.roll(T, -1, 0) + np.roll(T, 1, 1)
                         + np.roll(T, -1, 1) - 4 * T)
    return T


# 5. game of life
def life(board, steps):
    for _ in range(steps):
        n = sum(np.roll(np.roll(board, i, 0), j, 1)
                for i in (-1, 0, 1) for j in (-1, 0, 1) if (i, j) != (0, 0))
        board = ((n == 3) | ((board == 1) & (n == 2))).astype(np.uint8)
    return board


# 6. n-body
def nbody(pos, vel, mass, steps, dt, soft):
    for _ in range(steps):
        d = pos[None, :, :] - pos[:, None, :]
        r2 = (d ** 2).sum(axis=-1) + soft ** 2
        inv3 = r2 ** -1.5
        acc = (d * (inv3 * mass[None, :])[:, :, None]).sum(axis=1)
        vel = vel + dt * acc
        pos = pos + dt * vel
    ke = 0.5 * np.sum(mass * np.sum(vel ** 2, axis=1))
    return pos, vel, ke


# 7. mandelbrot
def mandelbrot(c, maxiter):
    z = np.zeros_like(c)
    count = np.zeros(c.shape, dtype=np.int32)
    for _ in range(maxiter):
        mask = np.abs(z) <= 2.0
        z = np.where(mask, z * z + c, z)
        count += mask
    return count


# 8. DFT by matrix
def dft(x):
    N = x.shape[0]
    n = np.arange(N)
    k = n.reshape((N, 1))
    W = np.exp(-2j * np.pi * k * n / N).astype(np.complex64)
    return W @ x


# 8b. radix-2 FFT (recursive, Cooley-Tukey)
def fft(x):
    N = x.shape[0]
    if N <= 1:
        return x
    even = fft(x[0::2])
    odd = fft(x[1::2])
    T = np.exp(-2j * np.pi * np.arange(N // 2) / N).astype(x.dtype) * odd
    return np.concatenate([even + T, even - T])


# 9. conv2d by sliding windows + resnet block
def conv2d(x, w):
    # x: (C, H, W), w: (K, C, kh, kw) valid
    K, C, kh, kw = w.shape
    H, W = x.shape[1] - kh + 1, x.shape[2] - kw + 1
    out = np.zeros((K, H, W), dtype=x.dtype)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum('kc,chw->khw', w[:, :, i, j], x[:, i:i + H, j:j + W])
    return out


def resnet_block(x, w1, b1, w2, b2):
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1)))
    h = np.maximum(conv2d(xp, w1) + b1[:, None, None], 0)
    hp = np.pad(h, ((0, 0), (1, 1), (1, 1)))
    return np.maximum(conv2d(hp, w2) + b2[:, None, None] + x, 0)


# 10. attention + layernorm
def layernorm(x, g, b, eps=1e-5):
    mu = x.mean(axis=-1, keepdims=True)
    var = x.var(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * g + b


def attention(x, wq, wk, wv, g, b):
    h = layernorm(x, g, b)
    q, k, v = h @ wq, h @ wk, h @ wv
    s = q @ k.T / np.sqrt(q.shape[-1])
    s = s - s.max(axis=-1, keepdims=True)
    e = np.exp(s)
    a = e / e.sum(axis=-1, keepdims=True)
    return x + a @ v


# 11. k-means
def kmeans(x, c, iters):
    k = c.shape[0]
    for _ in range(iters):
        d = ((x[:, None, :] - c[None, :, :]) ** 2).sum(axis=2)
        lab = np.argmin(d, axis=1)
        sums = np.zeros_like(c)
        np.add.at(sums, lab, x)
        counts = np.bincount(lab, minlength=k)
        c = sums / np.maximum(counts, 1)[:, None]
    return c, lab


# 12. logistic regression
def logreg(X, y, lr, iters):
    w = np.zeros(X.shape[1], dtype=X.dtype)
    b = 0.0
    for _ in range(iters):
        z = X @ w + b
        p = 1.0 / (1.0 + np.exp(-z))
        g = p - y
        w = w - lr * (X.T @ g) / X.shape[0]
        b = b - lr * g.mean()
    loss = -np.mean(y * np.log(p + 1e-7) + (1 - y) * np.log(1 - p + 1e-7))
    return w, b, loss


# 13. Black-Scholes (Abramowitz-Stegun CND)
def cnd(d):
    A1, A2, A3, A4, A5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
    K = 1.0 / (1.0 + 0.2316419 * np.abs(d))
    ret = 1.0 - 1.0 / np.sqrt(2 * np.pi) * np.exp(-d * d / 2) * (
        K * (A1 + K * (A2 + K * (A3 + K * (A4 + K * A5)))))
    return np.where(d > 0, ret, 1.0 - ret)


def black_scholes(S, X, T, r, v):
    sqT = np.sqrt(T)
    d1 = (np.log(S / X) + (r + 0.5 * v * v) * T) / (v * sqT)
    d2 = d1 - v * sqT
    call = S * cnd(d1) - X * np.exp(-r * T) * cnd(d2)
    put = X * np.exp(-r * T) * cnd(-d2) - S * cnd(-d1)
    return call, put


# 14. histogram / cumsum / diff / meshgrid / linspace
def stats_program(data):
    hist, edges = np.histogram(data, bins=16, range=(0.0, 1.0))
    cdf = np.cumsum(hist) / data.size
    dens = np.diff(cdf)
    xs = np.linspace(0.0, 1.0, 8, dtype=data.dtype)
    X, Y = np.meshgrid(xs, xs)
    r = np.sqrt(X ** 2 + Y ** 2)
    return hist, cdf, dens, r


# 15. Monte Carlo pi (accy random)
def mc_pi(key, n):
    k1 = anp.random.fold_in(key, 0)
    k2 = anp.random.fold_in(key, 1)
    x = anp.random.uniform(k1, (n,))
    y = anp.random.uniform(k2, (n,))
    inside = (x * x + y * y) <= 1.0
    return 4.0 * inside.sum() / n


# 16. power iteration with while loop (lax)
def power_iteration(A, v0, tol, maxit):
    def cond(s):
        v, lam, err, it = s
        return (err > tol) & (it < maxit)

    def body(s):
        v, lam, err, it = s
        w = A @ v
        nrm = np.sqrt(w @ w)
        v2 = w / nrm
        lam2 = v2 @ (A @ v2)
        return v2, lam2, np.abs(lam2 - lam), it + 1

    v, lam, err, it = lax.while_loop(cond, body, (v0, v0[0] * 0, v0[0] * 0 + 1e9, 0))
    return v, lam, it


# 17. Jacobi solver with convergence while
def jacobi_solve(A, b, tol, maxit):
    D = np.diag(A)
    R = A - np.diag(D)

    def cond(s):
        x, r, it = s
        return (r > tol) & (it < maxit)

    def body(s):
        x, r, it = s
        xn = (b - R @ x) / D
        return xn, np.max(np.abs(xn - x)), it + 1

    x, r, it = lax.while_loop(cond, body, (np.zeros_like(b), b[0] * 0 + np.inf, 0))
    return x, it
