"""Shared helpers of the kernel-family tests (sizes, random inputs per dtype)."""

from __future__ import annotations

import numpy as np

SIZES = [0, 1, 7, 1000, 4097]
BIG = (1 << 20) + 3
NP = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64, "u32": np.uint32}


def random_values(dtype: str, n: int, seed: int = 0, low: int = -1000, high: int = 1000):
    """``n`` random values of kernel dtype ``dtype`` (integers in [low, high))."""
    rng = np.random.default_rng(seed)
    dt = NP[dtype]
    if dtype.startswith("f"):
        return (rng.standard_normal(n) * 100).astype(dt)
    if dtype == "u32":
        low = max(low, 0)
    return rng.integers(low, high, n).astype(dt)
