"""Benchmark: per-call cost of a small fused chain (256 f32), accy vs numpy vs numba.

``python bench/overhead.py [--elements N] [--calls C] [--clock cpu|wall]``

The 9-op chain of ``bench/compile.py`` runs ``--calls`` times per round (best of 5 rounds):
``accy.jit`` (its small-call fast path), the compiled executable called directly
(``exe(x, y)``), numpy's eager version, and ``numba.njit`` of the numpy version when numba is
installed (``pip install accy-core[bench]``). ``--clock cpu`` (the default) times with
``time.process_time``, which a loaded shared machine distorts less than the wall clock.
Prints microseconds per call and the ratios accy / numpy and accy / numba (targets at 256
elements: ≤ 0.5 numpy, ≤ 5 numba).
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import accy
import numpy as np


def chain(x, y):
    """The 9-op chain, written against numpy: numpy runs it eagerly, ``accy.jit`` traces the
    same function (numpy functions on traced arrays dispatch to ``accy.numpy``), numba
    compiles it."""
    t = x * y
    t = t + x
    t = t - y
    t = t * 0.5
    t = t / (np.abs(x) + 1.0)
    t = np.maximum(t, 0.25)
    t = np.minimum(t, 4.0)
    return np.sqrt(t * t)


def per_call(fn: Callable[[], object], calls: int, clock: Callable[[], float]) -> float:
    """Best of 5 rounds of ``calls`` calls; microseconds per call."""
    fn()
    best = float("inf")
    for _ in range(5):
        t0 = clock()
        for _ in range(calls):
            fn()
        best = min(best, (clock() - t0) / calls)
    return best * 1e6


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=256)
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    x = np.linspace(0, 1, args.elements, dtype=np.float32)
    y = x + 1
    f = accy.jit(chain)
    exe = f.compile(x, y)
    np.testing.assert_allclose(f(x, y), chain(x, y), rtol=1e-6)
    rows = {
        "accy.jit": per_call(lambda: f(x, y), args.calls, clock),
        "accy exe": per_call(lambda: exe(x, y), args.calls, clock),
        "numpy": per_call(lambda: chain(x, y), args.calls, clock),
    }
    try:
        import numba

        nb = numba.njit(chain)
        rows["numba"] = per_call(lambda: nb(x, y), args.calls, clock)
    except ImportError:
        print("numba not installed (pip install accy-core[bench]): no numba row")
    print(f"{args.elements} elements, {args.clock} clock, us per call")
    for name, us in rows.items():
        ratios = f"  / numpy {us / rows['numpy']:.2f}"
        if "numba" in rows:
            ratios += f"  / numba {us / rows['numba']:.2f}"
        print(f"{name:<10} {us:8.2f}{ratios}")


if __name__ == "__main__":
    main()
