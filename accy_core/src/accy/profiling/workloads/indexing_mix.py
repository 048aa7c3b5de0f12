"""indexing_mix: ``chain`` rounds of data-dependent-free index shuffles over a vector.

``x`` f32[elements] → f32[elements]. The vector is viewed as a ``[r, c]`` matrix (``r`` the
largest divisor of ``elements`` with ``r ≤ √elements``). One round:

- ``m = reshape(y, [r, c])``, ``t = reshape(transpose(m), [r, c])`` (a permutation),
- ``mean = mean(m, axis=1)`` broadcast back over the row,
- ``y = reshape(select(col ≥ c // 2, m − mean, 0.5·t + mean), [elements])`` with ``col``
  from ``tensor.iota``.

Written with reshape/transpose/broadcast/iota index arithmetic because the builder has no
``gather``/``scatter_add`` yet; once the kernel-families ops land, this workload should move
to them (same name and parameters, a new reference).
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs


def _rows(elements: int) -> int:
    r = max(1, int(elements**0.5))
    while elements % r:
        r -= 1
    return r


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (see the module docstring for shapes)."""
    r = _rows(elements)
    c = elements // r
    shapes = [(elements,)]
    b, fb = new_function("indexing_mix", shapes)
    y = fb.param(0)
    col = fb.iota(b.tensor("i32", (r, c)), 1)
    for _ in range(chain):
        m = fb.reshape(y, (r, c))
        t = fb.reshape(fb.transpose(m, (1, 0)), (r, c))
        mean = fb.broadcast_to(fb.reduce_mean(m, axes=[1], keepdims=True), (r, c))
        mixed = fb.select(fb.ge(col, c // 2), fb.sub(m, mean), fb.add(fb.mul(t, 0.5), mean))
        y = fb.reshape(mixed, (elements,))
    fb.return_(y)
    fb.finish()

    def reference(args: list[np.ndarray]) -> list[np.ndarray]:
        y = args[0]
        cols = np.arange(c)[None, :]
        for _ in range(chain):
            m = y.reshape(r, c)
            t = m.T.reshape(r, c)
            mean = m.mean(axis=1, keepdims=True)
            y = np.where(cols >= c // 2, m - mean, t * np.float32(0.5) + mean).reshape(-1)
        return [y.astype(np.float32)]

    return Workload("indexing_mix", elements, chain, b.finish(), rng_inputs(seed, shapes),
                    reference)
