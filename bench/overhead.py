"""Benchmark: per-call cost of small programs (256 f32), accy vs numpy vs numba.

``python bench/overhead.py [--elements N] [--calls C] [--rounds R] [--clock cpu|wall]
[--only chain,jacobi,inplace,fori]``

Four programs, each a block of rows: **chain**, the 9-op chain of ``bench/compile.py``;
**jacobi**, a jacobi-1d of 10 time steps (polybench's, ``accy.fori_loop`` over a pair of
arrays: one native loop of the CPU's loop driver per call); **inplace**, the same
jacobi-1d written as numpy code that updates its two arguments in place (one function for
numpy, numba and ``accy.jit``, whose call copies the written values back into the
arguments); **fori**, ten steps of ``y * 0.5 + 1`` in an ``accy.fori_loop``. Each runs
``--calls`` times per round:
``accy.jit`` (its small-call fast path), the compiled executable called directly
(``exe(...)``, chain only), numpy's eager version, and ``numba.njit`` of the numpy version
when numba is installed (``pip install accy-core[bench]``). The rows take turns, one round
each, ``--rounds`` times, and
each keeps its best round: on a loaded shared machine every row then had its quietest
moment among the same ones. ``--clock cpu`` (the default) times with
``time.process_time``, which a loaded machine distorts less than the wall clock. Prints
microseconds per call, the ratios accy / numpy and accy / numba (targets at 256 elements:
≤ 0.5 numpy, ≤ 5 numba; a loop program's call within a few us of the chain's) and the
load average.
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


def jacobi_numpy(a, b):
    """jacobi-1d (polybench) of 10 steps on copies of ``a``, ``b``, numpy (and numba)."""
    a, b = a.copy(), b.copy()
    for _ in range(10):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])
    return a, b


def jacobi_accy(a, b):
    """:func:`jacobi_numpy` as ``accy.fori_loop`` (the jax-style polybench kernel)."""
    def step(t, c):
        a, b = c
        b = b.at[1:-1].set(0.33333 * (a[:-2] + a[1:-1] + a[2:]))
        a = a.at[1:-1].set(0.33333 * (b[:-2] + b[1:-1] + b[2:]))
        return a, b
    return accy.fori_loop(0, 10, step, (a, b))


def jacobi_inplace(a, b):
    """jacobi-1d of 10 steps written into ``a`` and ``b`` (numpy, numba and accy.jit)."""
    for _ in range(10):
        b[1:-1] = 0.33333 * (a[:-2] + a[1:-1] + a[2:])
        a[1:-1] = 0.33333 * (b[:-2] + b[1:-1] + b[2:])


def fori_numpy(x):
    """Ten steps of ``y * 0.5 + 1``, numpy (and numba)."""
    y = x.copy()
    for _ in range(10):
        y = y * np.float32(0.5) + np.float32(1.0)  # stays f32 under numba too
    return y


def fori_accy(x):
    """:func:`fori_numpy` as ``accy.fori_loop``."""
    return accy.fori_loop(0, 10, lambda i, y: y * 0.5 + 1.0, x)


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


def _rows(name: str, accy_fn: Callable, numpy_fn: Callable, args: tuple,
          direct: bool) -> dict[str, Callable[[], object]]:
    """The timed functions of one program: accy.jit (and the executable called directly
    when ``direct``), numpy, numba when installed; accy is checked against numpy first."""
    f = accy.jit(accy_fn)
    mine, theirs = [a.copy() for a in args], [a.copy() for a in args]
    got, want = f(*mine), numpy_fn(*theirs)
    if got is None and want is None:  # an in-place program: compare what it wrote
        got, want = tuple(mine), tuple(theirs)
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
    fns = {"accy.jit": lambda: f(*args)}
    if direct:
        exe = f.compile(*args)
        fns["accy exe"] = lambda: exe(*args)
    fns["numpy"] = lambda: numpy_fn(*args)
    try:
        import numba

        nb = numba.njit(numpy_fn)
        fns["numba"] = lambda: nb(*args)
    except ImportError:
        pass
    return fns


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=256)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--only", default="chain,jacobi,inplace,fori",
                    help="comma-separated programs: chain, jacobi, inplace, fori")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    x = np.linspace(0, 1, args.elements, dtype=np.float32)
    y = x + 1
    programs = {"chain": (chain, chain, (x, y), True),
                "jacobi": (jacobi_accy, jacobi_numpy, (x, y), False),
                "inplace": (jacobi_inplace, jacobi_inplace, (x.copy(), y.copy()), False),
                "fori": (fori_accy, fori_numpy, (x,), False)}
    try:
        import numba  # noqa: F401
    except ImportError:
        print("numba not installed (pip install accy-core[bench]): no numba rows")
    for name in args.only.split(","):
        fns = _rows(name, *programs[name])
        rows = per_call(fns, args.calls, args.rounds, clock)
        print(f"{name}: {args.elements} elements, {args.clock} clock, us per call (best of "
              f"{args.rounds} rounds of {args.calls}; load average "
              f"{os.getloadavg()[0]:.1f})")
        for row, us in rows.items():
            ratios = f"  / numpy {us / rows['numpy']:.2f}"
            if "numba" in rows:
                ratios += f"  / numba {us / rows['numba']:.2f}"
            print(f"  {row:<10} {us:8.2f}{ratios}")


if __name__ == "__main__":
    main()
