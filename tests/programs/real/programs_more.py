"""More numpy programs as new users write them (issue 11 follow-up), beyond :mod:`.programs`
and the PolyBench set: two PolyBench kernels not covered there (ludcmp, durbin), the
statistics pair (correlation, covariance), solvers (conjugate gradient with a tolerance
``while``, Thomas' tridiagonal algorithm, LU with partial pivoting), physics (particles
bouncing with ``np.where``, a three-level wave equation, heat with Neumann boundaries,
Lorenz by RK4), image and signal code (Sobel with ``np.hypot``, bilinear sampling with
fancy indexing, a moving average by ``np.convolve``, a drawdown by
``np.maximum.accumulate``), graphs (Bellman-Ford), a softmax cross-entropy with its
gradient (``logp[np.arange(n), y]`` read and written), k-nearest-neighbour voting
(``fill_diagonal``, ``argsort``, ``take_along_axis``) outliers by the interquartile
range (``np.percentile``) and ridge regression by ``np.linalg.solve``. Each also runs eagerly on numpy
arrays, which is what the tests compare with (:mod:`.cases_more`).
"""

from __future__ import annotations

import accy.numpy as anp
import numpy as np
from accy import lax


# 1. PolyBench ludcmp: LU without pivoting, then forward and back substitution
def ludcmp(A, b):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            w = A[i, j] - A[i, :j] @ A[:j, j]
            A[i, j] = w / A[j, j]
        for j in range(i, n):
            A[i, j] = A[i, j] - A[i, :i] @ A[:i, j]
    y = np.empty_like(b)
    for i in range(n):
        y[i] = b[i] - A[i, :i] @ y[:i]
    x = np.empty_like(b)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


# 2. PolyBench durbin: Levinson-Durbin recursion (reversed slices)
def durbin(r):
    n = r.shape[0]
    y = np.empty_like(r)
    y[0] = -r[0]
    beta = 1.0
    alpha = -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r[k] + np.sum(r[k - 1::-1] * y[:k])) / beta
        y[:k] = y[:k] + alpha * y[k - 1::-1]
        y[k] = alpha
    return y


# 3. PolyBench correlation: masked stddev, in-place normalisation, fill_diagonal
def correlation(data):
    n = data.shape[0]
    mean = np.mean(data, axis=0)
    stddev = np.std(data, axis=0)
    stddev[stddev <= 0.1] = 1.0
    data = data - mean
    data /= np.sqrt(n) * stddev
    corr = data.T @ data
    np.fill_diagonal(corr, 1.0)
    return corr


# 4. PolyBench covariance, centring the argument in place
def covariance(data):
    n = data.shape[0]
    data -= data.mean(axis=0)
    return (data.T @ data) / (n - 1.0), np.cov(data, rowvar=False)


# 5. conjugate gradient until the residual is below a tolerance
def cg_solve(A, b, tol):
    def cond(s):
        x, r, p, rs, it = s
        return (np.sqrt(rs) > tol) & (it < 50)

    def body(s):
        x, r, p, rs, it = s
        Ap = A @ p
        alpha = rs / (p @ Ap)
        x = x + alpha * p
        r = r - alpha * Ap
        rs_new = r @ r
        return x, r, r + (rs_new / rs) * p, rs_new, it + 1

    r = b.copy()
    x, r, p, rs, it = lax.while_loop(cond, body, (np.zeros_like(b), r, r, r @ r, 0))
    return x, it


# 6. Thomas' algorithm for a tridiagonal system
def thomas(a, b, c, d):
    n = len(d)
    cp = np.zeros_like(d)
    dp = np.zeros_like(d)
    cp[0] = c[0] / b[0]
    dp[0] = d[0] / b[0]
    for i in range(1, n):
        m = b[i] - a[i] * cp[i - 1]
        cp[i] = c[i] / m
        dp[i] = (d[i] - a[i] * dp[i - 1]) / m
    x = np.zeros_like(d)
    x[-1] = dp[-1]
    for i in range(n - 2, -1, -1):
        x[i] = dp[i] - cp[i] * x[i + 1]
    return x


# 7. LU with partial pivoting: a traced pivot row swapped by fancy indexing
def lu_pivot(A):
    n = A.shape[0]
    for k in range(n - 1):
        p = np.argmax(np.abs(A[k:, k])) + k
        A[[k, p]] = A[[p, k]]
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])
    return A


# 8. particles in a unit box under gravity, bouncing off the walls
def particles(pos, vel, dt, steps):
    for _ in range(steps):
        pos = pos + vel * dt
        vel = np.where((pos < 0.0) | (pos > 1.0), -vel, vel)
        pos = np.clip(pos, 0.0, 1.0)
        vel[:, 1] -= 9.8 * dt
    return pos, vel


# 9. 1-D wave equation with three time levels
def wave_1d(u0, c, steps):
    u_old = u0.copy()
    u = u0.copy()
    for _ in range(steps):
        u_new = np.empty_like(u)
        u_new[1:-1] = 2 * u[1:-1] - u_old[1:-1] + c * c * (u[2:] - 2 * u[1:-1] + u[:-2])
        u_new[0] = 0.0
        u_new[-1] = 0.0
        u_old, u = u, u_new
    return u


# 10. explicit heat with insulated (Neumann) boundaries, in place
def heat_neumann(u, steps, alpha):
    for _ in range(steps):
        u[1:-1, 1:-1] += alpha * (u[2:, 1:-1] + u[:-2, 1:-1] + u[1:-1, 2:] + u[1:-1, :-2]
                                  - 4 * u[1:-1, 1:-1])
        u[0, :] = u[1, :]
        u[-1, :] = u[-2, :]
        u[:, 0] = u[:, 1]
        u[:, -1] = u[:, -2]
    return u


# 11. Lorenz system by RK4: the state unpacked and rebuilt with anp.array
def lorenz_rk4(s0, dt, steps):
    sigma, rho, beta = 10.0, 28.0, 8.0 / 3.0

    def f(s):
        x, y, z = s
        return anp.array([sigma * (y - x), x * (rho - z) - y, x * y - beta * z])

    s = s0
    for _ in range(steps):
        k1 = f(s)
        k2 = f(s + 0.5 * dt * k1)
        k3 = f(s + 0.5 * dt * k2)
        k4 = f(s + dt * k3)
        s = s + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)
    return s


# 12. Sobel edges: np.hypot of the two gradients
def sobel(img):
    gx = (img[:-2, 2:] + 2 * img[1:-1, 2:] + img[2:, 2:]
          - img[:-2, :-2] - 2 * img[1:-1, :-2] - img[2:, :-2])
    gy = (img[2:, :-2] + 2 * img[2:, 1:-1] + img[2:, 2:]
          - img[:-2, :-2] - 2 * img[:-2, 1:-1] - img[:-2, 2:])
    mag = np.hypot(gx, gy)
    return mag, mag > mag.mean()


# 13. bilinear sampling: floor, int casts, four two-array gathers
def bilinear(img, ys, xs):
    y0 = np.floor(ys).astype(np.int32)
    x0 = np.floor(xs).astype(np.int32)
    y1 = np.minimum(y0 + 1, img.shape[0] - 1)
    x1 = np.minimum(x0 + 1, img.shape[1] - 1)
    wy = ys - y0
    wx = xs - x0
    return ((1 - wy) * (1 - wx) * img[y0, x0] + (1 - wy) * wx * img[y0, x1]
            + wy * (1 - wx) * img[y1, x0] + wy * wx * img[y1, x1])


# 14. moving average by convolution, with its median and percentiles
def moving_average(x, k):
    ma = np.convolve(x, np.ones(k, x.dtype) / k, mode="valid")
    return ma, np.median(ma), np.percentile(ma, [10, 90])


# 15. maximum drawdown of a price series
def drawdown(prices):
    peak = np.maximum.accumulate(prices)
    dd = (prices - peak) / peak
    return dd.min(), dd


# 16. Bellman-Ford shortest paths from one source (dense weights)
def bellman_ford(W, src):
    n = W.shape[0]
    dist = np.full(n, np.inf, dtype=W.dtype)
    dist[src] = 0.0
    for _ in range(n - 1):
        dist = np.minimum(dist, (dist[:, None] + W).min(axis=0))
    return dist


# 17. softmax cross-entropy and its gradient with respect to the logits
def cross_entropy(logits, y):
    n = logits.shape[0]
    m = logits.max(axis=1, keepdims=True)
    e = np.exp(logits - m)
    p = e / e.sum(axis=1, keepdims=True)
    loss = -np.log(p[np.arange(n), y]).mean()
    grad = p.copy()
    grad[np.arange(n), y] -= 1.0
    return loss, grad / n


# 18. k-nearest-neighbour vote (leave-one-out) from pairwise distances
def knn_vote(X, labels, k, classes):
    sq = (X ** 2).sum(axis=1)
    D = sq[:, None] + sq[None, :] - 2 * X @ X.T
    np.fill_diagonal(D, np.inf)
    order = np.argsort(D, axis=1)[:, :k]
    nearest = np.take_along_axis(D, order, axis=1)
    votes = (labels[order][..., None] == np.arange(classes)).sum(axis=1)
    return votes.argmax(axis=1), np.sqrt(np.maximum(nearest, 0.0))


# 19. outliers by the interquartile range, replaced by the median
def iqr_clean(x):
    q1, q3 = np.percentile(x, [25, 75])
    iqr = q3 - q1
    bad = (x < q1 - 1.5 * iqr) | (x > q3 + 1.5 * iqr)
    y = x.copy()
    y[bad] = np.median(x)
    return y, bad.sum()


# 20. ridge regression: normal equations solved with np.linalg.solve
def ridge(X, y, lam):
    d = X.shape[1]
    w = np.linalg.solve(X.T @ X + lam * np.eye(d, dtype=X.dtype), X.T @ y)
    resid = y - X @ w
    return w, (resid ** 2).mean()
