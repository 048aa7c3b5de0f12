"""Problems the family sweeps time (``accy tune --families``), one function per family.

Each function returns the keyword arguments of the family's variant ``run(backend,
candidate, **kwargs)`` for a representative 1M-element problem; the family metadata
``tuning_problem`` names it and ``tuning_shape_family`` says which shapes the choice is for
(see :mod:`accy.tuning.sweep`). Inputs are deterministic (seeded) so sweeps are repeatable.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["argsort", "gather", "matmul", "scan", "scatter_add", "segment_sum", "sort", "spmv"]

N = 1 << 20
_RNG_SEED = 20261129


def _rng() -> np.random.Generator:
    return np.random.default_rng(_RNG_SEED)


def gather() -> dict[str, Any]:
    rng = _rng()
    src = rng.standard_normal(N).astype(np.float32)
    idx = rng.integers(0, N, N).astype(np.int32)
    return {"src": src, "indices": idx, "axis": 0, "mode": "clip", "dtype": "f32",
            "index_dtype": "i32"}


def scan() -> dict[str, Any]:
    return {"x": _rng().standard_normal(N).astype(np.float32), "inclusive": True, "dtype": "f32"}


def scatter_add() -> dict[str, Any]:
    rng = _rng()
    return {"dst": np.zeros(1 << 16, np.float32),
            "indices": rng.integers(0, 1 << 16, N).astype(np.int32),
            "values": rng.standard_normal(N).astype(np.float32), "axis": 0, "dtype": "f32",
            "index_dtype": "i32"}


def segment_sum() -> dict[str, Any]:
    rng = _rng()
    return {"values": rng.standard_normal(N).astype(np.float32),
            "segment_ids": rng.integers(0, 1 << 12, N).astype(np.int32),
            "num_segments": 1 << 12, "dtype": "f32", "index_dtype": "i32"}


def sort() -> dict[str, Any]:
    return {"keys": _rng().standard_normal(N).astype(np.float32), "values": None,
            "dtype": "f32", "descending": False, "mode": "sort"}


def argsort() -> dict[str, Any]:
    return {**sort(), "mode": "argsort"}


def spmv() -> dict[str, Any]:
    import scipy.sparse as sp

    rng = _rng()
    a = sp.random(1 << 16, 1 << 16, density=16 / (1 << 16), format="csr", random_state=rng,
                  dtype=np.float32)
    return {"A": a, "x": rng.standard_normal(1 << 16).astype(np.float32), "dtype": "f32"}


def matmul() -> dict[str, Any]:
    """512 x 512 @ 512 x 512 f32 (``matmul.gemv`` refuses it and is skipped)."""
    rng = _rng()
    return {"a": rng.standard_normal((512, 512)).astype(np.float32),
            "b": rng.standard_normal((512, 512)).astype(np.float32)}
