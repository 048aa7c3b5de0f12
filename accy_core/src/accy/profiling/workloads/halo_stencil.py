"""halo_stencil: ``chain`` Jacobi sweeps of a 5-point stencil on a square grid.

``u`` f32[elements, elements] → f32[elements, elements]. One sweep:
``u ← 0.5·u + 0.125·(N + S + W + E)`` where each neighbour is the grid shifted by one
cell with a zero halo, written as ``tensor.slice`` then ``tensor.pad`` (the kernel clamps
the load index and selects 0 outside the grid, so the halo is never read from memory).
"""

from __future__ import annotations

import numpy as np

from accy.ir import FunctionBuilder, Value
from accy.profiling.workloads.common import Workload, new_function, rng_inputs

#: (low, high) padding per axis for the north, south, west and east neighbours.
_SHIFTS = (((1, 0), (0, 0)), ((0, 1), (0, 0)), ((0, 0), (1, 0)), ((0, 0), (0, 1)))


def _neighbour(fb: FunctionBuilder, u: Value, n: int, shift) -> Value:
    (lo0, hi0), (lo1, hi1) = shift
    inner = fb.slice(u, [hi0, hi1], [n - lo0, n - lo1])
    return fb.pad(inner, [lo0, lo1], [hi0, hi1], 0.0)


def _np_neighbour(u: np.ndarray, shift) -> np.ndarray:
    (lo0, hi0), (lo1, hi1) = shift
    n = u.shape[0]
    return np.pad(u[hi0:n - lo0, hi1:n - lo1], ((lo0, hi0), (lo1, hi1)))


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (see the module docstring for shapes)."""
    n = elements
    shapes = [(n, n)]
    b, fb = new_function("halo_stencil", shapes)
    u = fb.param(0)
    for _ in range(chain):
        total = _neighbour(fb, u, n, _SHIFTS[0])
        for shift in _SHIFTS[1:]:
            total = fb.add(total, _neighbour(fb, u, n, shift))
        u = fb.add(fb.mul(u, 0.5), fb.mul(total, 0.125))
    fb.return_(u)
    fb.finish()

    def reference(args: list[np.ndarray]) -> list[np.ndarray]:
        u = args[0]
        for _ in range(chain):
            total = sum(_np_neighbour(u, s) for s in _SHIFTS)
            u = (u * np.float32(0.5) + total * np.float32(0.125)).astype(np.float32)
        return [u]

    return Workload("halo_stencil", elements, chain, b.finish(), rng_inputs(seed, shapes),
                    reference)
