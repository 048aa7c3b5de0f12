"""attention_softmax: single-head scaled dot-product attention.

``softmax(q @ kᵀ / √chain) @ v`` with ``q``, ``k``, ``v`` f32[elements, chain] (elements =
sequence length, chain = head dimension) → f32[elements, chain]. The scores use
``einsum("qd,kd->qk")``.
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    s, d = elements, chain
    shapes = [(s, d)] * 3
    b, fb = new_function("attention_softmax", shapes)
    q, k, v = (fb.param(i) for i in range(3))
    scores = fb.mul(fb.einsum([q, k], None, "qd,kd->qk"), float(1.0 / np.sqrt(d)))
    fb.return_(fb.matmul(fb.softmax(scores, axis=-1), v))
    fb.finish()

    def reference(a: list[np.ndarray]) -> list[np.ndarray]:
        q, k, v = a
        sc = (q @ k.T) * np.float32(1.0 / np.sqrt(d))
        e = np.exp(sc - sc.max(axis=-1, keepdims=True))
        return [(e / e.sum(axis=-1, keepdims=True)) @ v]

    return Workload(
        "attention_softmax", elements, chain, b.finish(), rng_inputs(seed, shapes), reference
    )
