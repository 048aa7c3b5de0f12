"""reduction_row_norm: L2-normalize every row of a matrix, then scale by the row maximum.

``x`` f32[elements, chain] (rows × row length) → f32[elements, chain]:
``y = x / sqrt(sum(x², axis=1) + 1e-6)``, ``out = y · max(|y|, axis=1)``. Two row
reductions (sum and max) with elementwise prologues and epilogues.
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (see the module docstring for shapes)."""
    shapes = [(elements, chain)]
    b, fb = new_function("reduction_row_norm", shapes)
    x = fb.param(0)
    ss = fb.reduce_sum(fb.mul(x, x), axes=[1], keepdims=True)
    y = fb.mul(x, fb.rsqrt(fb.add(ss, 1e-6)))
    fb.return_(fb.mul(y, fb.reduce_max(fb.abs(y), axes=[1], keepdims=True)))
    fb.finish()

    def reference(args: list[np.ndarray]) -> list[np.ndarray]:
        x = args[0]
        y = x / np.sqrt((x * x).sum(axis=1, keepdims=True) + np.float32(1e-6))
        return [(y * np.abs(y).max(axis=1, keepdims=True)).astype(np.float32)]

    return Workload("reduction_row_norm", elements, chain, b.finish(), rng_inputs(seed, shapes),
                    reference)
