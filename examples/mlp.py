"""The main job: compile real tensor programs on the CPU backend and check them against numpy.

Builds a two-layer MLP, an attention block and a transformer block with the builder,
compiles each with ``accy.compile(..., backend="cpu")``, runs it, compares with numpy, and
prints the kernel count and timings. Exit status 1 if any result differs from numpy.
"""

from __future__ import annotations

import sys
import time

import accy
import numpy as np
from accy.profiling.workloads import build
from accy.testing import tolerance

CASES = [("mlp_two_layer", 64, 128), ("attention_softmax", 32, 64), ("transformer_block", 32, 64)]


def main(backend: str = "cpu") -> int:
    failures = 0
    for name, elements, chain in CASES:
        wl = build(name, elements, chain)
        t0 = time.perf_counter()
        exe = accy.compile(wl.module, backend=backend)
        t1 = time.perf_counter()
        outs = exe(*wl.inputs)
        t2 = time.perf_counter()
        ref = wl.reference(wl.inputs)
        rtol, atol = tolerance(np.float32)
        ok = all(
            np.allclose(o, r, rtol=rtol * 10, atol=atol * 10)
            for o, r in zip(outs, ref, strict=True)
        )
        err = max(float(np.max(np.abs(o - r))) for o, r in zip(outs, ref, strict=True))
        failures += not ok
        print(
            f"{name:>18} {elements}x{chain}: {exe.kernel_count:3d} kernels, compile "
            f"{(t1 - t0) * 1e3:7.1f} ms, run {(t2 - t1) * 1e3:6.2f} ms, max |err| {err:.2e} "
            f"{'OK' if ok else 'MISMATCH'}"
        )
    print("all results match numpy" if not failures else f"{failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
