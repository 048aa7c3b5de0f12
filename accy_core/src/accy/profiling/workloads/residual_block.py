"""residual_block: ``x + relu(x @ W1 + b1) @ W2`` followed by ``relu``.

Shapes: ``x`` f32[elements, chain], ``W1``/``W2`` f32[chain, chain], ``b1`` f32[chain].
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    n, d = elements, chain
    shapes = [(n, d), (d, d), (d,), (d, d)]
    b, fb = new_function("residual_block", shapes)
    x, w1, b1, w2 = (fb.param(i) for i in range(4))
    h = fb.relu(fb.add(fb.matmul(x, w1), b1))
    fb.return_(fb.relu(fb.add(x, fb.matmul(h, w2))))
    fb.finish()

    def reference(a: list[np.ndarray]) -> list[np.ndarray]:
        x, w1, b1, w2 = a
        return [np.maximum(x + np.maximum(x @ w1 + b1, 0) @ w2, 0)]

    inputs = rng_inputs(seed, shapes, scale=0.3)
    return Workload("residual_block", elements, chain, b.finish(), inputs, reference)
