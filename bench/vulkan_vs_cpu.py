"""Benchmark: the Vulkan backend against the CPU backend on the same accy programs.

lavapipe is a CPU driver, so on CI this measures a functional path (the ratio to the CPU
backend is what is reported); on a real GPU it is a performance path. Each program is
compiled once per backend, run ``--repeat`` times, and the best time is reported. The
``transformer`` row is the profiling workload ``transformer_block`` (16 rows, width 32): many
small kernels per call, so it measures launch overhead (batching, command-buffer reuse).
Usage: ``python bench/vulkan_vs_cpu.py [--elements N] [--repeat R] [--only NAME,...]``.
"""

from __future__ import annotations

import argparse
import time

import accy
import numpy as np


def elementwise(n: int) -> accy.Module:
    b = accy.Builder()
    t = b.tensor("f32", (n,))
    fb = b.begin_function("ew", params=[t, t])
    x, y = fb.param(0), fb.param(1)
    v = fb.sqrt(fb.add(fb.mul(fb.exp(fb.mul(x, 0.1)), y), fb.mul(y, y)))
    fb.return_(v)
    fb.finish()
    return b.finish()


def row_sum(n: int) -> accy.Module:
    b = accy.Builder()
    rows = max(1, n // 4096)
    fb = b.begin_function("rsum", params=[b.tensor("f32", (rows, 4096))])
    fb.return_(fb.reduce_sum(fb.param(0), axes=[1]))
    fb.finish()
    return b.finish()


def matmul(n: int) -> accy.Module:
    side = max(16, int(round(n ** (1 / 3))) * 4)
    b = accy.Builder()
    t = b.tensor("f32", (side, side))
    fb = b.begin_function("mm", params=[t, t])
    fb.return_(fb.dot_general(fb.param(0), fb.param(1), [1], [0]))
    fb.finish()
    return b.finish()


def transformer(_: int) -> accy.Module:
    return _transformer().module


def _transformer():
    from accy.profiling import workloads

    return workloads.build("transformer_block", 16, 32)


def best_of(fn, args, repeat: int) -> float:
    fn(*args)  # warm-up (compile, first-touch)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1 << 20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--only", default="", help="comma-separated program names")
    args = parser.parse_args()
    from accy.plugins import probe_backend

    ok, reason = probe_backend("vulkan")
    if not ok:
        print(f"vulkan unavailable: {reason}")
        return
    rng = np.random.default_rng(0)
    print(f"{'program':12s} {'kernels':>7s} {'cpu ms':>10s} {'vulkan ms':>10s} {'vulkan/cpu':>10s}")
    programs = {
        "elementwise": elementwise,
        "row_sum": row_sum,
        "matmul": matmul,
        "transformer": transformer,
    }
    only = [n for n in args.only.split(",") if n]
    for name, build in programs.items():
        if only and name not in only:
            continue
        module = build(args.elements)
        fn = module.functions[0]
        if name == "transformer":
            inputs = list(_transformer().inputs)
        else:
            inputs = [rng.standard_normal(p.type.shape).astype(np.float32) for p in fn.params]
        times = {}
        for backend in ("cpu", "vulkan"):
            exe = accy.compile(module, backend=backend)
            times[backend] = best_of(exe, inputs, args.repeat)
        kernels = exe.kernel_count
        ratio = times["vulkan"] / times["cpu"]
        cpu_ms, vulkan_ms = times["cpu"] * 1e3, times["vulkan"] * 1e3
        print(f"{name:12s} {kernels:7d} {cpu_ms:10.2f} {vulkan_ms:10.2f} {ratio:10.2f}")


if __name__ == "__main__":
    main()
