"""elementwise_chain: ``chain`` fused elementwise steps over a vector.

``x`` f32[elements] → f32[elements]. Step ``i`` (0-based) computes
``y = tanh(y · a_i + b_i)`` with ``a_i = 1 + 0.01·(i mod 7)``, ``b_i = 0.05·(i mod 3)``, and
every third step also ``y = y · sigmoid(y)`` (SiLU); the whole chain fuses into one kernel, so
this measures per-element arithmetic and the cost of long fused expressions.
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def _coefficients(i: int) -> tuple[float, float]:
    return 1.0 + 0.01 * (i % 7), 0.05 * (i % 3)


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (see the module docstring for shapes)."""
    shapes = [(elements,)]
    b, fb = new_function("elementwise_chain", shapes)
    y = fb.param(0)
    for i in range(chain):
        a, c = _coefficients(i)
        y = fb.tanh(fb.add(fb.mul(y, a), c))
        if i % 3 == 2:
            y = fb.mul(y, fb.sigmoid(y))
    fb.return_(y)
    fb.finish()

    def reference(args: list[np.ndarray]) -> list[np.ndarray]:
        y = args[0].astype(np.float32)
        for i in range(chain):
            a, c = _coefficients(i)
            y = np.tanh(y * np.float32(a) + np.float32(c))
            if i % 3 == 2:
                y = y * (np.float32(1) / (np.float32(1) + np.exp(-y)))
        return [y.astype(np.float32)]

    return Workload("elementwise_chain", elements, chain, b.finish(), rng_inputs(seed, shapes),
                    reference)
