"""Benchmark: per-call cost of a small fused chain (256 f32), accy vs numpy vs numba.

``python bench/overhead.py [--elements N] [--calls C] [--rounds R] [--clock cpu|wall]``

The 9-op chain of ``bench/compile.py`` runs ``--calls`` times per round: ``accy.jit`` (its
small-call fast path), the compiled executable called directly (``exe(x, y)``), numpy's
eager version, and ``numba.njit`` of the numpy version when numba is installed (``pip
install accy-core[bench]``). The rows take turns, one round each, ``--rounds`` times, and
each keeps its best round: on a loaded shared machine every row then had its quietest
moment among the same ones. ``--clock cpu`` (the default) times with
``time.process_time``, which a loaded machine distorts less than the wall clock. Prints
microseconds per call, the ratios accy / numpy and accy / numba (targets at 256 elements:
≤ 0.5 numpy, ≤ 5 numba) and the load average.
"""

from __future__ import annotations

import argparse
import os
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


def per_call(fns: dict[str, Callable[[], object]], calls: int, rounds: int,
             clock: Callable[[], float]) -> dict[str, float]:
    """Microseconds per call of each of ``fns``: the best of ``rounds`` rounds of ``calls``
    calls, the functions taking turns round by round."""
    best = dict.fromkeys(fns, float("inf"))
    for fn in fns.values():
        fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = clock()
            for _ in range(calls):
                fn()
            best[name] = min(best[name], (clock() - t0) / calls)
    return {name: t * 1e6 for name, t in best.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=256)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    x = np.linspace(0, 1, args.elements, dtype=np.float32)
    y = x + 1
    f = accy.jit(chain)
    exe = f.compile(x, y)
    np.testing.assert_allclose(f(x, y), chain(x, y), rtol=1e-6)
    fns = {"accy.jit": lambda: f(x, y), "accy exe": lambda: exe(x, y),
           "numpy": lambda: chain(x, y)}
    try:
        import numba

        nb = numba.njit(chain)
        fns["numba"] = lambda: nb(x, y)
    except ImportError:
        print("numba not installed (pip install accy-core[bench]): no numba row")
    rows = per_call(fns, args.calls, args.rounds, clock)
    print(f"{args.elements} elements, {args.clock} clock, us per call (best of {args.rounds} "
          f"rounds of {args.calls}; load average {os.getloadavg()[0]:.1f})")
    for name, us in rows.items():
        ratios = f"  / numpy {us / rows['numpy']:.2f}"
        if "numba" in rows:
            ratios += f"  / numba {us / rows['numba']:.2f}"
        print(f"{name:<10} {us:8.2f}{ratios}")


if __name__ == "__main__":
    main()
