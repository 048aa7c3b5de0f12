"""Inputs of the PolyBench-style kernels at a named size.

``inputs(name, size)`` returns the positional arguments of both the numpy reference
(:mod:`.reference`) and the accy versions: float32 arrays (int32 for floyd-warshall and
nussinov) initialised like PolyBench's ``init_array`` where that is well conditioned, with
diagonally dominant matrices for the factorisations, and Python numbers for the static
parameters (time steps, alpha, beta). ``size`` is ``"test"`` (small: seconds on lavapipe),
``"small"`` or ``"medium"`` (PolyBench's MEDIUM_DATASET extents).
"""

from __future__ import annotations

import numpy as np

NAMES = ("jacobi_1d", "jacobi_2d", "heat_3d", "seidel_2d", "fdtd_2d", "lu", "cholesky",
         "gramschmidt", "floyd_warshall", "trisolv", "syrk", "doitgen", "adi", "deriche",
         "nussinov")

#: extents per size: name -> dict of PolyBench parameters.
SIZES: dict[str, dict[str, dict[str, int]]] = {
    # The numpy-style kernels unroll every Python loop at trace time, so the scalar
    # recurrences (seidel_2d, lu, cholesky, nussinov, adi, syrk, gramschmidt) compile one
    # kernel or more per element update: their extents are the least that still have every
    # kind of element (first/last row and column, an interior with neighbours on all sides,
    # an empty dot product at j = 0, m > n for gramschmidt, two time steps).
    "test": {
        "jacobi_1d": {"n": 30, "t": 5}, "jacobi_2d": {"n": 12, "t": 4},
        "heat_3d": {"n": 8, "t": 3}, "seidel_2d": {"n": 5, "t": 2},
        "fdtd_2d": {"nx": 8, "ny": 10, "t": 4}, "lu": {"n": 6}, "cholesky": {"n": 6},
        "gramschmidt": {"m": 7, "n": 5}, "floyd_warshall": {"n": 9}, "trisolv": {"n": 10},
        "syrk": {"n": 6, "m": 4}, "doitgen": {"r": 4, "q": 3, "p": 5}, "adi": {"n": 5, "t": 2},
        "deriche": {"w": 8, "h": 6}, "nussinov": {"n": 7},
    },
    "small": {
        "jacobi_1d": {"n": 120, "t": 40}, "jacobi_2d": {"n": 90, "t": 40},
        "heat_3d": {"n": 20, "t": 40}, "seidel_2d": {"n": 40, "t": 5},
        "fdtd_2d": {"nx": 60, "ny": 80, "t": 40}, "lu": {"n": 60}, "cholesky": {"n": 60},
        "gramschmidt": {"m": 60, "n": 50}, "floyd_warshall": {"n": 60}, "trisolv": {"n": 120},
        "syrk": {"n": 80, "m": 60}, "doitgen": {"r": 25, "q": 20, "p": 30},
        "adi": {"n": 40, "t": 5}, "deriche": {"w": 64, "h": 64}, "nussinov": {"n": 60},
    },
    "medium": {
        "jacobi_1d": {"n": 400, "t": 100}, "jacobi_2d": {"n": 250, "t": 100},
        "heat_3d": {"n": 40, "t": 100}, "seidel_2d": {"n": 400, "t": 100},
        "fdtd_2d": {"nx": 200, "ny": 240, "t": 100}, "lu": {"n": 400},
        "cholesky": {"n": 400}, "gramschmidt": {"m": 200, "n": 240},
        "floyd_warshall": {"n": 500}, "trisolv": {"n": 400}, "syrk": {"n": 240, "m": 200},
        "doitgen": {"r": 50, "q": 40, "p": 60}, "adi": {"n": 200, "t": 100},
        "deriche": {"w": 720, "h": 480}, "nussinov": {"n": 500},
    },
}

F = np.float32


def _grid(*shape: int) -> np.ndarray:
    idx = np.indices(shape).sum(axis=0).astype(np.float64)
    return ((idx + 2.0) / max(shape)).astype(F)


def _spd(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    m = rng.random((n, n)) / n
    return (m @ m.T + np.eye(n)).astype(F)


def inputs(name: str, size: str = "test") -> tuple:
    """Arguments of kernel ``name`` at ``size`` (fresh arrays on every call)."""
    p = SIZES[size][name]
    rng = np.random.default_rng(len(name))
    out = _stencil_inputs(name, p, rng)
    return out if out is not None else _dense_inputs(name, p, rng)


def _stencil_inputs(name: str, p: dict[str, int], rng: np.random.Generator) -> tuple | None:
    if name == "jacobi_1d":
        x = np.arange(p["n"], dtype=np.float64)
        return ((x + 2) / p["n"]).astype(F), ((x + 3) / p["n"]).astype(F), p["t"]
    if name in ("jacobi_2d", "heat_3d"):
        shape = (p["n"],) * (2 if name == "jacobi_2d" else 3)
        return _grid(*shape), (_grid(*shape) * 0.5).astype(F), p["t"]
    if name == "seidel_2d":
        return _grid(p["n"], p["n"]), p["t"]
    if name == "fdtd_2d":
        nx, ny = p["nx"], p["ny"]
        return (rng.random((nx, ny), dtype=F), rng.random((nx, ny), dtype=F),
                rng.random((nx, ny), dtype=F), np.arange(p["t"], dtype=F))
    if name == "adi":
        return _grid(p["n"], p["n"]), p["t"]
    if name == "deriche":
        return rng.random((p["w"], p["h"]), dtype=F), 0.25
    return None


def _dense_inputs(name: str, p: dict[str, int], rng: np.random.Generator) -> tuple:
    if name in ("lu", "cholesky"):
        return (_spd(p["n"]),)
    if name == "gramschmidt":
        return ((rng.random((p["m"], p["n"])) + np.eye(p["m"], p["n"])).astype(F),)
    if name == "floyd_warshall":
        n = p["n"]
        path = rng.integers(1, 30, (n, n)).astype(np.int32)
        path[rng.random((n, n)) < 0.3] = 999
        np.fill_diagonal(path, 0)
        return (path,)
    if name == "trisolv":
        n = p["n"]
        low = np.tril(rng.random((n, n)) / n) + np.eye(n)
        return low.astype(F), rng.random(n).astype(F)
    if name == "syrk":
        return rng.random((p["n"], p["n"]), dtype=F), rng.random((p["n"], p["m"]), dtype=F), \
            1.5, 1.2
    if name == "doitgen":
        return (rng.random((p["r"], p["q"], p["p"]), dtype=F),
                (rng.random((p["p"], p["p"])) / p["p"]).astype(F))
    if name == "nussinov":
        n = p["n"]
        return rng.integers(0, 4, n).astype(np.int32), np.zeros((n, n), np.int32)
    raise KeyError(name)
