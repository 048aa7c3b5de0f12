"""Inputs of :mod:`.programs` (``"test"``: small, ``"bench"``: realistic sizes) and the
dtypes accy documents where they differ from numpy's.

accy's dtype rules (docs/frontend.md, *Constants and dtypes*): numpy scalars such as
``np.sqrt(d)`` or ``1 / np.sqrt(2 * np.pi)`` are weak like Python scalars (numpy 2 turns
an f32 array times an ``np.float64`` into f64), counts (``argmin``, ``histogram``,
``bincount``) are i32 and Python int carries are i32 (numpy: int64), and an i32 array with
f32 gives f32 (numpy: f64). :data:`ACCY_DTYPES` lists the result dtypes accy gives, per
program, where numpy's differ; values are compared after casting numpy's result.
"""

from __future__ import annotations

from typing import Any

import accy.numpy as anp
import numpy as np

f32 = np.float32

NAMES = ["cavity_flow", "channel_flow", "wave2d", "heat_roll", "life", "nbody", "mandelbrot",
         "dft", "fft", "resnet_block", "attention", "kmeans", "logreg", "black_scholes",
         "stats_program", "mc_pi", "power_iteration", "jacobi_solve"]

#: result dtypes of accy where numpy's differ (see the module docstring)
ACCY_DTYPES: dict[str, tuple[str, ...]] = {
    "attention": ("float32",),
    "kmeans": ("float32", "int32"),
    "black_scholes": ("float32", "float32"),
    "stats_program": ("int32", "float32", "float32", "float32"),
    "power_iteration": ("float32", "float32", "int32"),
    "jacobi_solve": ("float32", "int32"),
}

#: programs whose numpy run is accy's reference evaluator (anp.random needs a trace)
REFERENCE_ONLY = {"mc_pi"}
#: positions of static arguments (a random key)
STATIC = {"mc_pi": (0,)}
#: relative/absolute tolerance (float32 programs summing in another order than numpy)
TOL = {"default": 2e-3, "power_iteration": 1e-2}
#: results that are iteration counts, equal up to one step (a tolerance test in f32)
COUNTS = {"power_iteration": 2, "jacobi_solve": 1}


def _flow(n: int, nt: int, nit: int, channel: bool) -> tuple:
    z = np.zeros((n, n), f32)
    dx = 2 / (n - 1)
    args = (z.copy(), z.copy(), z.copy(), nt, nit, dx, dx, 0.01 if channel else 0.001, 1.0,
            0.1)
    return (*args, 1.0) if channel else args


def _point(n: int) -> np.ndarray:
    u = np.zeros((n, n), f32)
    u[n // 2, n // 2] = 1.0
    return u


def _mandel(n: int) -> np.ndarray:
    x, y = np.linspace(-2, 1, n), np.linspace(-1.5, 1.5, n)
    return (x[None, :] + 1j * y[:, None]).astype(np.complex128)


def _cplx(rng: Any, shape: tuple) -> np.ndarray:
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(np.complex64)


def _resnet(rng: Any, c: int, h: int) -> tuple:
    w = [(rng.standard_normal((c, c, 3, 3)) * 0.2).astype(f32) for _ in range(2)]
    b = [rng.standard_normal(c).astype(f32) for _ in range(2)]
    return (rng.standard_normal((c, h, h)).astype(f32), w[0], b[0], w[1], b[1])


def _logreg(rng: Any, n: int, d: int, iters: int) -> tuple:
    x = rng.standard_normal((n, d)).astype(f32)
    return (x, (x @ rng.standard_normal(d) > 0).astype(f32), 0.5, iters)


def _spd(rng: Any, n: int) -> np.ndarray:
    a = rng.standard_normal((n, n)).astype(f32)
    return a @ a.T / f32(n)


#: name -> (rng, big) -> arguments
_BUILD: dict[str, Any] = {
    "cavity_flow": lambda r, b: _flow(41 if b else 10, 20 if b else 2, 50 if b else 3, False),
    "channel_flow": lambda r, b: _flow(41 if b else 10, 20 if b else 2, 50 if b else 3, True),
    "wave2d": lambda r, b: (_point(256 if b else 12), 100 if b else 4, 0.5),
    "heat_roll": lambda r, b: (r.random((256, 256) if b else (12, 12), dtype=f32),
                               100 if b else 4, 0.1),
    "life": lambda r, b: ((r.random((256, 256) if b else (12, 12)) < 0.3).astype(np.uint8),
                          50 if b else 3),
    "nbody": lambda r, b: (r.standard_normal((512 if b else 8, 3)).astype(f32),
                           np.zeros((512 if b else 8, 3), f32),
                           r.random(512 if b else 8, dtype=f32) + 0.5, 10 if b else 2, 0.01,
                           0.1),
    "mandelbrot": lambda r, b: (_mandel(200 if b else 10), 50 if b else 5),
    "dft": lambda r, b: (_cplx(r, (256 if b else 8, 4)),),
    "fft": lambda r, b: (_cplx(r, (1024 if b else 8,)),),
    "resnet_block": lambda r, b: _resnet(r, *((16, 32) if b else (2, 5))),
    "attention": lambda r, b: tuple(
        r.standard_normal(s).astype(f32) * 0.3 for s in
        [(256 if b else 6, 64 if b else 4)] + [(64, 64) if b else (4, 4)] * 3
        + [(64 if b else 4,)] * 2),
    "kmeans": lambda r, b: (r.random((10000 if b else 30, 2), dtype=f32),
                            r.random((4, 2), dtype=f32), 10 if b else 2),
    "logreg": lambda r, b: _logreg(r, *((10000, 32, 100) if b else (32, 4, 3))),
    "black_scholes": lambda r, b: (r.uniform(5, 30, 10**6 if b else 32).astype(f32),
                                   r.uniform(1, 100, 10**6 if b else 32).astype(f32),
                                   r.uniform(0.25, 10, 10**6 if b else 32).astype(f32), 0.02,
                                   0.3),
    "stats_program": lambda r, b: (r.random(100_000 if b else 100, dtype=f32),),
    "mc_pi": lambda r, b: (anp.random.key(7), 1_000_000 if b else 2000),
    "power_iteration": lambda r, b: (_spd(r, 512 if b else 6),
                                     np.full(512 if b else 6, 1 / np.sqrt(512 if b else 6), f32),
                                     1e-6, 1000),
    "jacobi_solve": lambda r, b: (r.random((512, 512) if b else (6, 6), dtype=f32)
                                  + f32(512 if b else 6) * np.eye(512 if b else 6, dtype=f32),
                                  r.random(512 if b else 6, dtype=f32), 1e-6, 500),
}


def inputs(name: str, size: str = "test") -> tuple[Any, ...]:
    """Fresh arguments of program ``name``; ``size`` is ``"test"`` or ``"bench"``."""
    return _BUILD[name](np.random.default_rng(0), size == "bench")
