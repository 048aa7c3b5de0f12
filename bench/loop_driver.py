"""Benchmark: the CPU's native loop driver against the launch-by-launch path.

``python bench/loop_driver.py [--repeat R]``

Two loops under ``accy.jit`` (``accy.fori_loop``), each timed, alternating, in three modes:
**native** (the driver, big launches split over the thread team), **native 1 thread**
(the driver with the pool at one thread: no launch is split) and **per launch** (Python
launches every body launch: ``CpuBackend.native_loops = False``), best of ``--repeat``:

- *tiny*: 5,000 iterations of a body of three one-work-group launches (a scalar
  recurrence: what seidel-2d, nussinov or trisolv run); printed per launch (µs), so the
  host cost of one launch shows;
- *stencil*: 100 steps of a 5-point Jacobi on 512 x 512 f32 (each launch splits over the
  threads): the team's gain over one thread, against numpy's time.

The load average is printed first: on a loaded machine the team has no second core.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def _tiny(x):
    from accy import lax

    return lax.fori_loop(0, 5_000, lambda i, v: v.at[i % 64].set(v[(i + 1) % 64] * 0.5 + 1.0),
                         x)


def _stencil(a):
    from accy import lax

    def step(t, a):
        return a.at[1:-1, 1:-1].set(0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:]
                                           + a[2:, 1:-1] + a[:-2, 1:-1]))
    return lax.fori_loop(0, 100, step, a)


def _stencil_numpy(a):
    a = a.copy()
    for _ in range(100):
        a[1:-1, 1:-1] = 0.2 * (a[1:-1, 1:-1] + a[1:-1, :-2] + a[1:-1, 2:] + a[2:, 1:-1]
                               + a[:-2, 1:-1])
    return a


def _modes(f, x, repeat: int) -> dict[str, float]:
    from accy.plugins import open_backend

    be = open_backend("cpu")
    exe = f.compile(x)
    threads = be.pool.num_threads
    best = {"native": float("inf"), "native 1 thread": float("inf"), "per launch": float("inf")}
    try:
        for _ in range(max(1, repeat)):
            for mode in best:
                exe.unbind()  # drivers (and the small-call plan) bound again for the mode
                be.native_loops = mode != "per launch"
                be.pool.num_threads = 1 if mode == "native 1 thread" else threads
                f(x)
                t0 = time.perf_counter()
                f(x)
                best[mode] = min(best[mode], time.perf_counter() - t0)
    finally:
        be.native_loops, be.pool.num_threads = True, threads
        exe.unbind()
    return best


def main(argv: list[str] | None = None) -> None:
    import accy

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    print("load average " + " ".join(f"{v:.2f}" for v in os.getloadavg()))
    x = np.linspace(0, 1, 64, dtype=np.float32)
    f = accy.jit(_tiny)
    launches = f.compile(x).graph.loops[0].launch_count() * 5_000
    t = _modes(f, x, args.repeat)
    print(f"tiny: {launches} launches; " + ", ".join(
        f"{m} {s * 1e6 / launches:.2f} us/launch" for m, s in t.items()))
    a = np.random.default_rng(0).random((512, 512), dtype=np.float32)
    f = accy.jit(_stencil)
    t = _modes(f, a, args.repeat)
    t0 = time.perf_counter()
    _stencil_numpy(a)
    tn = time.perf_counter() - t0
    print("stencil 512x512 x100: " + ", ".join(f"{m} {s * 1e3:.1f} ms" for m, s in t.items())
          + f", numpy {tn * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
