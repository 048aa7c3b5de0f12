"""mlp_two_layer: ``relu(x @ W1 + b1) @ W2 + b2``.

Shapes: ``x`` f32[elements, chain], ``W1`` f32[chain, 2·chain], ``b1`` f32[2·chain],
``W2`` f32[2·chain, chain], ``b2`` f32[chain] → f32[elements, chain].
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    n, d, h = elements, chain, 2 * chain
    shapes = [(n, d), (d, h), (h,), (h, d), (d,)]
    b, fb = new_function("mlp_two_layer", shapes)
    x, w1, b1, w2, b2 = (fb.param(i) for i in range(5))
    hidden = fb.relu(fb.add(fb.matmul(x, w1), b1))
    fb.return_(fb.add(fb.matmul(hidden, w2), b2))
    fb.finish()

    def reference(a: list[np.ndarray]) -> list[np.ndarray]:
        x, w1, b1, w2, b2 = a
        return [np.maximum(x @ w1 + b1, 0) @ w2 + b2]

    inputs = rng_inputs(seed, shapes, scale=0.5)
    return Workload("mlp_two_layer", elements, chain, b.finish(), inputs, reference)
