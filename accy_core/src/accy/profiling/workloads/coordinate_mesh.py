"""coordinate_mesh: a field evaluated on a 2-D grid from coordinates built with ``iota``.

``w`` f32[elements, chain] → f32[elements, chain] with ``u = i / elements``, ``v = j /
chain`` (row ``i``, column ``j``, from ``tensor.iota`` cast to f32) and
``out = w · sin(2πu) · cos(2πv) + sqrt(u² + v²)``: index arithmetic and casts fused with
transcendental math, no memory traffic besides ``w`` and the result.
"""

from __future__ import annotations

import math

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (see the module docstring for shapes)."""
    shapes = [(elements, chain)]
    b, fb = new_function("coordinate_mesh", shapes)
    w = fb.param(0)
    grid = b.tensor("i32", (elements, chain))
    u = fb.mul(fb.cast(fb.iota(grid, 0), "f32"), 1.0 / elements)
    v = fb.mul(fb.cast(fb.iota(grid, 1), "f32"), 1.0 / chain)
    wave = fb.mul(fb.sin(fb.mul(u, 2 * math.pi)), fb.cos(fb.mul(v, 2 * math.pi)))
    radius = fb.sqrt(fb.add(fb.mul(u, u), fb.mul(v, v)))
    fb.return_(fb.add(fb.mul(w, wave), radius))
    fb.finish()

    def reference(args: list[np.ndarray]) -> list[np.ndarray]:
        u = (np.arange(elements, dtype=np.float32) * np.float32(1.0 / elements))[:, None]
        v = (np.arange(chain, dtype=np.float32) * np.float32(1.0 / chain))[None, :]
        two_pi = np.float32(2 * math.pi)
        wave = np.sin(u * two_pi) * np.cos(v * two_pi)
        return [(args[0] * wave + np.sqrt(u * u + v * v)).astype(np.float32)]

    return Workload("coordinate_mesh", elements, chain, b.finish(), rng_inputs(seed, shapes),
                    reference)
