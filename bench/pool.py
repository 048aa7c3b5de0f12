"""Benchmark the CPU backend's work-group pool: the round trip of a split launch and where
splitting starts to pay (one run, figures printed).

``python bench/pool.py [--threads 2] [--repeat 7]``

1. A no-op kernel's launch (64 work-groups of 64, a bound launch's ``run()``): inline (one
   group), split over the native workers (:mod:`accy_backend_cpu.native_pool`) and split
   over the Python workers (the fallback), in microseconds per launch.
2. ``o = 1.5 x + y`` (f32) at sizes from 4,096 to 262,144 elements: inline vs split in
   two-thread halves, with the ratio, and the split threshold that the pool's
   ``min_items_per_thread`` gives (a launch splits from twice that many work-items).
3. The same at 1,048,576 elements, each launch 2 ms after the last (the workers asleep):
   how much of the split's gain a worker's wake-up leaves.

Times are the best of ``--repeat`` batches of about 20 ms each; the machine's load average
is printed (a shared machine's other core makes every split look slow).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from accy.backend import Geometry
from accy.kernel import KernelBuilder
from accy_backend_cpu.backend import CpuBackend


def _per_call(run, repeat: int, seconds: float = 0.02) -> float:
    """Best per-call time of ``run`` in microseconds."""
    run()
    best = float("inf")
    for _ in range(repeat):
        n, t = 0, time.perf_counter()
        while True:
            run()
            n += 1
            elapsed = time.perf_counter() - t
            if elapsed > seconds:
                break
        best = min(best, elapsed / n)
    return best * 1e6


def _noop():
    kb = KernelBuilder("bench_pool_noop", 64)
    o = kb.buffer("o", "f32", "write")
    n = kb.scalar("n", "i32")
    with kb.if_(kb.global_id() < n):
        kb.store(o, kb.global_id(), o[kb.global_id()])
    return kb.build()


def _axpy():
    kb = KernelBuilder("bench_pool_axpy", 64)
    o = kb.buffer("o", "f32", "write")
    x, y = kb.buffer("x", "f32", "read"), kb.buffer("y", "f32", "read")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.store(o, i, x[i] * 1.5 + y[i])
    return kb.build()


def round_trips(be: CpuBackend, repeat: int) -> None:
    loaded = be.load(be.compile(_noop()))
    buf = be.allocate(4 * 64 * 64)
    keep = be.pool.min_items_per_thread
    be.pool.min_items_per_thread = 1
    try:
        for label, groups, native in (("inline (1 group)", 1, None),
                                      ("split, native workers", 64, None),
                                      ("split, Python workers", 64, False)):
            saved = be.pool._native
            if native is False:
                be.pool._native = False
            try:
                pointers, run = be.bind_launch(loaded, Geometry(groups, 64), [("i32", 0)])
                pointers[0] = buf.ctypes.data
                print(f"no-op launch {label:24s} {_per_call(run, repeat):7.2f} us")
            finally:
                be.pool._native = saved
    finally:
        be.pool.min_items_per_thread = keep


def crossover(be: CpuBackend, repeat: int) -> None:
    loaded = be.load(be.compile(_axpy()))
    keep = be.pool.min_items_per_thread
    print(f"split from {2 * keep} work-items (min_items_per_thread {keep})")
    try:
        for n in (4096, 8192, 16384, 32768, 65536, 131072, 262144):
            x, y, o = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
            got = []
            for threshold in (1 << 40, 1):
                be.pool.min_items_per_thread = threshold
                pointers, run = be.bind_launch(loaded, Geometry(-(-n // 64), 64), [("i32", n)])
                pointers[0], pointers[1], pointers[2] = o.ctypes.data, x.ctypes.data, \
                    y.ctypes.data
                got.append(_per_call(run, repeat))
            print(f"axpy f32 {n:7d}: inline {got[0]:8.2f} us  split {got[1]:8.2f} us  "
                  f"split/inline {got[1] / got[0]:5.2f}")
    finally:
        be.pool.min_items_per_thread = keep


def after_idle(be: CpuBackend, repeat: int, n: int = 1 << 20) -> None:
    loaded = be.load(be.compile(_axpy()))
    x, y, o = np.ones(n, np.float32), np.ones(n, np.float32), np.zeros(n, np.float32)
    keep = be.pool.min_items_per_thread
    got = []
    try:
        for threshold in (1 << 40, 1):
            be.pool.min_items_per_thread = threshold
            pointers, run = be.bind_launch(loaded, Geometry(n // 64, 64), [("i32", n)])
            pointers[0], pointers[1], pointers[2] = o.ctypes.data, x.ctypes.data, y.ctypes.data
            run()
            best = float("inf")
            for _ in range(3 * repeat):
                time.sleep(0.002)
                t = time.perf_counter()
                run()
                best = min(best, time.perf_counter() - t)
            got.append(best * 1e6)
    finally:
        be.pool.min_items_per_thread = keep
    print(f"axpy f32 {n} 2 ms after the last launch: inline {got[0]:8.2f} us  split "
          f"{got[1]:8.2f} us  split/inline {got[1] / got[0]:5.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=7)
    a = p.parse_args()
    print(f"{a.threads} threads, load average {os.getloadavg()[0]:.1f} on "
          f"{os.cpu_count()} cores")
    be = CpuBackend(num_threads=a.threads)
    try:
        round_trips(be, a.repeat)
        crossover(be, a.repeat)
        after_idle(be, a.repeat)
    finally:
        be.close()
    print(f"at the end: load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
