"""Inputs of :mod:`.programs_more` (small: the tests compile each program once per
backend) and the result dtypes accy documents where numpy's differ (see :mod:`.cases`)."""

from __future__ import annotations

from typing import Any

import numpy as np

f32 = np.float32

NAMES = ["ludcmp", "durbin", "correlation", "covariance", "cg_solve", "thomas", "lu_pivot",
         "particles", "wave_1d", "heat_neumann", "lorenz_rk4", "sobel", "bilinear",
         "moving_average", "drawdown", "bellman_ford", "cross_entropy", "knn_vote", "iqr_clean",
         "ridge"]

#: programs also run on the device backends (the others exercise only the frontend, which
#: every backend shares: the cpu run covers them, and the suite's time budget is tight)
DEVICE = {"bilinear", "cross_entropy", "drawdown"}

#: result dtypes of accy where numpy's differ (docs/frontend.md): a Python int loop carry
#: is i32 (numpy: int64); ``np.cov`` and ``np.percentile`` of f32 stay f32 (numpy computes
#: them in f64); f32 with an i32 array gives f32 (numpy: f64)
ACCY_DTYPES: dict[str, tuple[str, ...]] = {
    "cg_solve": ("float32", "int32"),
    "covariance": ("float32", "float32"),
    "bilinear": ("float32",),
    "moving_average": ("float32", "float32", "float32"),
    "knn_vote": ("int32", "float32"),  # argmax positions are i32
    "iqr_clean": ("float32", "int32"),  # a count of bools is i32
}
#: tolerances: f32 programs that sum in another order than numpy
TOL = {"default": 2e-4, "cg_solve": 2e-3, "lorenz_rk4": 1e-3, "correlation": 1e-3}


def _spd(r: Any, n: int) -> np.ndarray:
    a = r.standard_normal((n, n))
    return (a @ a.T / n + np.eye(n)).astype(f32)


_BUILD: dict[str, Any] = {
    "ludcmp": lambda r: (_spd(r, 4), r.random(4, dtype=f32)),
    "durbin": lambda r: ((r.random(6) * 0.2).astype(f32),),
    "correlation": lambda r: (r.random((10, 5), dtype=f32),),
    "covariance": lambda r: (r.random((10, 4), dtype=f32),),
    "cg_solve": lambda r: (_spd(r, 6), r.random(6, dtype=f32), 1e-5),
    "thomas": lambda r: (r.random(6, dtype=f32), r.random(6, dtype=f32) + 3,
                         r.random(6, dtype=f32), r.random(6, dtype=f32)),
    "lu_pivot": lambda r: (r.standard_normal((4, 4)).astype(f32),),
    "particles": lambda r: (r.random((10, 2), dtype=f32),
                            (r.random((10, 2), dtype=f32) - 0.5), 0.05, 4),
    "wave_1d": lambda r: (r.random(12, dtype=f32), 0.5, 4),
    "heat_neumann": lambda r: (r.random((7, 7), dtype=f32), 3, 0.1),
    "lorenz_rk4": lambda r: (np.array([1.0, 1.0, 1.0], f32), 0.01, 4),
    "sobel": lambda r: (r.random((8, 9), dtype=f32),),
    "bilinear": lambda r: (r.random((5, 6), dtype=f32), r.random(7, dtype=f32) * 4,
                           r.random(7, dtype=f32) * 5),
    "moving_average": lambda r: (r.random(16, dtype=f32), 3),
    "drawdown": lambda r: (r.random(12, dtype=f32) + 1,),
    "bellman_ford": lambda r: (r.random((5, 5), dtype=f32) * 10, 0),
    "cross_entropy": lambda r: (r.standard_normal((6, 4)).astype(f32),
                                np.array([0, 3, 1, 1, 2, 3], np.int32)),
    "knn_vote": lambda r: (r.random((10, 2), dtype=f32), r.integers(0, 3, 10).astype(np.int32),
                           3, 3),
    "ridge": lambda r: (r.standard_normal((20, 4)).astype(f32), r.standard_normal(20).astype(f32),
                        0.1),
    "iqr_clean": lambda r: (np.concatenate([r.random(15, dtype=f32), np.array([9.0, -7.0], f32)]),),
}


def inputs(name: str) -> tuple[Any, ...]:
    """Fresh arguments of program ``name``."""
    return _BUILD[name](np.random.default_rng(0))
