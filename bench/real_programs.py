"""Benchmark: the numpy programs a new user brings (``tests/programs/real``) under
``accy.jit`` against the same functions run by numpy, at realistic sizes.

``python bench/real_programs.py [--backend cpu] [--only NAME,...] [--repeat R]
[--clock cpu|wall] [--warm-cache]``

For each program: **first** is a fresh ``accy.jit``'s first call (trace, compile, run;
compile caches disabled with ``ACCY_DISABLE_DISK_CACHE=1`` unless ``--warm-cache``),
**warm** the best of ``--repeat`` further calls, **numpy** the best of ``--repeat`` runs of
the function on numpy arrays (arguments copied outside the timed region, as the programs
write into them). ``--clock cpu`` (default) times with ``time.process_time``, which a
shared machine distorts less (the CPU backend's pool threads count too). Prints seconds,
milliseconds, the ratio warm / numpy (< 1: accy is faster) and the largest relative error
against numpy. Programs whose numpy run needs a trace (``mc_pi``) show ``n/a`` for numpy.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.programs.real import cases, programs  # noqa: E402


def _copy(args: tuple) -> tuple:
    return tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)


def _best(fn: Callable[[tuple], object], args: tuple, repeat: int,
          clock: Callable[[], float]) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        a = _copy(args)
        t0 = clock()
        out = fn(a)
        best = min(best, clock() - t0)
    return best, out


def _err(got: object, want: object) -> float:
    g = got if isinstance(got, tuple) else (got,)
    w = want if isinstance(want, tuple) else (want,)
    worst = 0.0
    for x, y in zip(g, w, strict=True):
        x, y = np.asarray(x, np.complex128), np.asarray(y, np.complex128)
        scale = max(float(np.max(np.abs(y))) if y.size else 0.0, 1e-30)
        worst = max(worst, float(np.max(np.abs(x - y))) / scale if y.size else 0.0)
    return worst


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--only", default="")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    ap.add_argument("--warm-cache", action="store_true")
    args = ap.parse_args()
    if not args.warm_cache:
        os.environ["ACCY_DISABLE_DISK_CACHE"] = "1"
    import accy

    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    names = [n for n in args.only.split(",") if n] or cases.NAMES
    print(f"backend {args.backend}, {args.clock} clock, load {os.getloadavg()[0]:.2f}")
    print(f"{'program':<16} {'first s':>8} {'warm ms':>9} {'numpy ms':>9} {'warm/np':>8} "
          f"{'rel err':>8}")
    for name in names:
        fn = getattr(programs, name)
        base = cases.inputs(name, "bench")
        jitted = accy.jit(fn, backend=args.backend, static_argnums=cases.STATIC.get(name, ()))
        a = _copy(base)
        t0 = clock()
        got = jitted(*a)
        first = clock() - t0
        warm, got = _best(lambda a, f=jitted: f(*a), base, args.repeat, clock)
        if name in cases.REFERENCE_ONLY:
            npt, ratio, err = "n/a", "n/a", "n/a"
        else:
            t, want = _best(lambda a, f=fn: f(*a), base, args.repeat, clock)
            npt, ratio, err = f"{t * 1e3:9.2f}", f"{warm / t:8.2f}", f"{_err(got, want):8.1e}"
        print(f"{name:<16} {first:8.2f} {warm * 1e3:9.2f} {npt:>9} {ratio:>8} {err:>8}",
              flush=True)


if __name__ == "__main__":
    main()
