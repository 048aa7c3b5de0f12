"""transformer_block: pre-norm single-head transformer block.

``h = x + attn(ln1(x))``, ``out = h + W2ᵀ·gelu(ln2(h)·W1 + c1) + c2`` where layer norm is
written from primitives and ``attn(y) = softmax(yWq (yWk)ᵀ / √chain) · yWv · Wo``.
Shapes: ``x`` f32[elements, chain] (sequence × model width); Wq, Wk, Wv, Wo f32[chain,
chain]; W1 f32[chain, 4·chain], W2 f32[4·chain, chain]; gammas/betas/biases 1-D.
``causal=True`` (the decoder block) masks scores above the diagonal with −1e9.
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import (
    Workload,
    layer_norm,
    new_function,
    np_gelu,
    np_layer_norm,
    rng_inputs,
)


def _shapes(s: int, d: int) -> list[tuple[int, ...]]:
    return [(s, d), (d,), (d,), (d, d), (d, d), (d, d), (d, d), (d,), (d,),
            (d, 4 * d), (4 * d,), (4 * d, d), (d,)]


def build(elements: int, chain: int, seed: int = 0, causal: bool = False,
          name: str = "transformer_block") -> Workload:
    s, d = elements, chain
    shapes = _shapes(s, d)
    b, fb = new_function(name, shapes)
    x, g1, be1, wq, wk, wv, wo, g2, be2, w1, c1, w2, c2 = (fb.param(i) for i in range(13))
    y = layer_norm(fb, x, g1, be1)
    q, k, v = fb.matmul(y, wq), fb.matmul(y, wk), fb.matmul(y, wv)
    scores = fb.mul(fb.einsum([q, k], None, "qd,kd->qk"), float(1.0 / np.sqrt(d)))
    if causal:
        t = b.tensor("i32", (s, s))
        allowed = fb.ge(fb.iota(t, 0), fb.iota(t, 1))
        scores = fb.select(allowed, scores, -1e9)
    h = fb.add(x, fb.matmul(fb.matmul(fb.softmax(scores, axis=-1), v), wo))
    z = layer_norm(fb, h, g2, be2)
    fb.return_(fb.add(h, fb.add(fb.matmul(fb.gelu(fb.add(fb.matmul(z, w1), c1)), w2), c2)))
    fb.finish()

    def reference(a: list[np.ndarray]) -> list[np.ndarray]:
        x, g1, be1, wq, wk, wv, wo, g2, be2, w1, c1, w2, c2 = a
        y = np_layer_norm(x, g1, be1)
        sc = (y @ wq) @ (y @ wk).T * np.float32(1.0 / np.sqrt(d))
        if causal:
            sc = np.where(np.tril(np.ones((s, s), dtype=bool)), sc, np.float32(-1e9))
        e = np.exp(sc - sc.max(axis=-1, keepdims=True))
        h = x + (e / e.sum(axis=-1, keepdims=True)) @ (y @ wv) @ wo
        z = np_layer_norm(h, g2, be2)
        return [h + np_gelu(z @ w1 + c1) @ w2 + c2]

    inputs = rng_inputs(seed, shapes, scale=0.3)
    inputs[1] = (1 + inputs[1]).astype(np.float32)
    inputs[7] = (1 + inputs[7]).astype(np.float32)
    return Workload(name, elements, chain, b.finish(), inputs, reference)
