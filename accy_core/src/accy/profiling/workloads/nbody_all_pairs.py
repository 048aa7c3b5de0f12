"""nbody_all_pairs: softened gravitational acceleration of every body from every other.

``pos`` f32[elements, chain] (bodies × spatial dimensions, chain = 3 in the suites),
``mass`` f32[elements] → ``acc`` f32[elements, chain]:
``acc_i = Σ_j m_j (p_j − p_i) / (|p_j − p_i|² + ε)^{3/2}`` with ``ε = 0.01`` (the softening
keeps ``i = j`` finite; its difference is zero). All pairs are formed by broadcasting to
``[elements, elements, chain]``; two reductions (over the dimension, then over bodies).
"""

from __future__ import annotations

import numpy as np

from accy.profiling.workloads.common import Workload, new_function, rng_inputs

SOFTENING = 0.01


def build(elements: int, chain: int, seed: int = 0) -> Workload:
    """Build the workload (see the module docstring for shapes)."""
    n, c = elements, chain
    shapes = [(n, c), (n,)]
    b, fb = new_function("nbody_all_pairs", shapes)
    pos, mass = fb.param(0), fb.param(1)
    pj = fb.broadcast_to(fb.reshape(pos, (1, n, c)), (n, n, c))
    pi = fb.broadcast_to(fb.reshape(pos, (n, 1, c)), (n, n, c))
    diff = fb.sub(pj, pi)
    r2 = fb.add(fb.reduce_sum(fb.mul(diff, diff), axes=[2]), SOFTENING)
    inv = fb.rsqrt(r2)
    weight = fb.mul(fb.mul(fb.mul(inv, inv), inv), fb.reshape(mass, (1, n)))
    acc = fb.reduce_sum(fb.mul(diff, fb.reshape(weight, (n, n, 1))), axes=[1])
    fb.return_(acc)
    fb.finish()

    def reference(args: list[np.ndarray]) -> list[np.ndarray]:
        p, m = args
        d = p[None, :, :] - p[:, None, :]
        r2 = (d * d).sum(axis=2) + np.float32(SOFTENING)
        w = r2 ** np.float32(-1.5) * m[None, :]
        return [(d * w[:, :, None]).sum(axis=1).astype(np.float32)]

    inputs = rng_inputs(seed, shapes)
    inputs[1] = (np.abs(inputs[1]) + 0.5).astype(np.float32)
    return Workload("nbody_all_pairs", elements, chain, b.finish(), inputs, reference)
