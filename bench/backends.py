"""Benchmark: the same programs and kernel families on every backend, ratios to the CPU backend.

``python bench/backends.py [--elements N] [--repeat R] [--backends cpu,vulkan,opencl]
[--only NAME,...]``

Programs (from ``bench/vulkan_vs_cpu.py``): elementwise chain, row sum, matmul and the
``transformer_block`` workload (many small kernels: launch overhead). Families (from
``accy_kernels``): gather, scatter_add, sort, argsort, Philox uniform, SpMV CSR and SELL on a
power-law matrix. Each case is run once to compile and warm up, then ``--repeat`` times; the
best time is reported, with its ratio to the CPU backend's (< 1: faster than the CPU
backend). In CI the Vulkan device is lavapipe and the OpenCL device is PoCL, both CPU
drivers, so the ratios measure those paths' overhead, not a GPU. Unavailable backends are
listed with their reason and skipped.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import accy
import numpy as np
from timing import best_of
from vulkan_vs_cpu import _transformer, elementwise, matmul, row_sum

import accy_kernels as ak


def program_cases(n: int, rng: np.random.Generator) -> dict[str, Callable[[str], Callable]]:
    """Return ``name -> (backend -> zero-argument callable)`` for the accy programs."""
    cases = {}
    for name, build in (("elementwise", elementwise), ("row_sum", row_sum), ("matmul", matmul)):
        module = build(n)
        inputs = [rng.standard_normal(p.type.shape).astype(np.float32)
                  for p in module.functions[0].params]
        cases[name] = _program(module, inputs)
    workload = _transformer()
    cases["transformer"] = _program(workload.module, list(workload.inputs))
    return cases


def _program(module: accy.Module, inputs: list) -> Callable[[str], Callable]:
    def make(backend: str) -> Callable:
        exe = accy.compile(module, backend=backend)
        return lambda: exe(*inputs)

    return make


def family_cases(n: int, rng: np.random.Generator) -> dict[str, Callable[[str], Callable]]:
    """Return ``name -> (backend -> zero-argument callable)`` for the kernel families."""
    from kernels import power_law_matrix

    src = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(0, n, n)
    bins = rng.integers(0, 1 << 12, n)
    weights = rng.standard_normal(n).astype(np.float32)
    dst = np.zeros(1 << 12, np.float32)
    keys = rng.random(n).astype(np.float32)
    A = power_law_matrix(max(1000, n // 8))
    x = rng.standard_normal(A.shape[1])
    return {
        "gather": lambda be: lambda: ak.gather(src, idx, backend=be),
        "scatter_add": lambda be: lambda: ak.scatter_add(dst, bins, weights, backend=be),
        "sort": lambda be: lambda: ak.sort(keys, backend=be),
        "argsort": lambda be: lambda: ak.argsort(keys, backend=be),
        "uniform": lambda be: lambda: ak.random.uniform(n, 1, backend=be),
        "spmv_csr": lambda be: lambda: ak.spmv(A, x, "csr", backend=be),
        "spmv_sell": lambda be: lambda: ak.spmv(A, x, "sell", backend=be),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--elements", type=int, default=1 << 18)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--backends", default="cpu,vulkan,opencl")
    parser.add_argument("--only", default="", help="comma-separated case names")
    args = parser.parse_args()
    from accy.plugins import probe_backend

    backends = []
    for name in args.backends.split(","):
        ok, reason = probe_backend(name)
        if ok:
            backends.append(name)
        else:
            print(f"# {name} unavailable: {reason}")
    if "cpu" not in backends:
        print("# the cpu backend is needed for the ratios")
        return
    rng = np.random.default_rng(0)
    only = {n for n in args.only.split(",") if n}
    cases = {**program_cases(args.elements, rng), **family_cases(args.elements, rng)}
    others = [b for b in backends if b != "cpu"]
    print(f"# {args.elements} elements, best of {args.repeat}; times in ms, ratio = backend/cpu")
    print(f"{'case':12s} {'cpu':>9s}" + "".join(f" {b:>9s} {'ratio':>6s}" for b in others))
    for name, make in cases.items():
        if only and name not in only:
            continue
        times = {b: best_of(make(b), args.repeat) for b in backends}
        line = f"{name:12s} {times['cpu'] * 1e3:9.2f}"
        for b in others:
            line += f" {times[b] * 1e3:9.2f} {times[b] / times['cpu']:6.2f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
