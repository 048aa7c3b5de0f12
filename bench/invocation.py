"""Benchmark: host overhead of a call vs a prepared invocation, and two invocations in flight.

``python bench/invocation.py [--backend cpu] [--n 4096] [--calls 2000]``

For a two-kernel program (``y = 2.5 * x + y``, ``sum(y)``) on ``n`` f32 elements, prints
the median time per:

- **call**: ``exe(x, y)`` (prepare + submit + wait + read + close);
- **resubmit**: ``inv.submit().wait()`` on one prepared invocation (no binding, no upload);
- **pair**: two prepared invocations, ``submit``, ``submit``, ``wait``, ``wait`` (per pair);
- on a backend listing ``streams`` (OpenCL, CUDA; the program's two kernels are independent,
  so its stream plan has two streams): **resubmit** again on the same program compiled
  apart with ``max_streams = 1``, alternating with the streamed one, best median of three
  rounds each (``streams`` vs ``1 stream``).

The machine load (``os.getloadavg``) is printed with the figures: they are noisy on a
shared machine. Runs on the code importable as ``accy`` (set ``PYTHONPATH`` to another
checkout's ``*/src`` folders to compare; ``resubmit`` and ``pair`` need ``exe.prepare``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np

PROGRAM = """
module {{
  func @two(%arg0: f32[{n}], %arg1: f32[{n}]) -> (f32[{n}], f32[]) {{
    %0 = tensor.constant {{value = dense<[2.5]>}} : () -> f32[]
    %1 = tensor.broadcast_to %0 {{shape = [{n}]}} : (f32[]) -> f32[{n}]
    %2 = arith.mul %1, %arg0 : (f32[{n}], f32[{n}]) -> f32[{n}]
    %3 = arith.add %2, %arg1 : (f32[{n}], f32[{n}]) -> f32[{n}]
    %4 = reduce.sum %arg1 {{axes = [0]}} : (f32[{n}]) -> f32[]
    func.return %3, %4 : (f32[{n}], f32[]) -> ()
  }}
}}
"""


def _median_us(fn, calls: int) -> float:
    for _ in range(min(50, calls)):
        fn()
    samples = []
    for _ in range(calls):
        t0 = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t0)
    return statistics.median(samples) / 1e3


def main() -> None:
    """Parse arguments, run the three measurements, print one table."""
    import accy

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--backend", default="cpu")
    ap.add_argument("--n", type=int, default=4096)
    ap.add_argument("--calls", type=int, default=2000)
    args = ap.parse_args()
    exe = accy.compile(accy.parse_module(PROGRAM.format(n=args.n)), backend=args.backend)
    x, y = np.arange(args.n, dtype=np.float32), np.ones(args.n, np.float32)
    rows = [("call", _median_us(lambda: exe(x, y), args.calls))]
    if hasattr(exe, "prepare"):
        inv = exe.prepare(x, y)
        rows.append(("resubmit", _median_us(lambda: inv.submit().wait(), args.calls)))
        a, b = exe.prepare(x, y), exe.prepare(y, x)

        def pair() -> None:
            ha, hb = a.submit(), b.submit()
            ha.wait()
            hb.wait()

        rows.append(("pair", _median_us(pair, args.calls)))
        plan = exe._stream_plan()
        if plan is not None and plan.count > 1:
            one = accy.compile(accy.parse_module(PROGRAM.format(n=args.n)),
                               backend=args.backend, use_cache=False)
            one.max_streams = 1
            inv1 = one.prepare(x, y)
            best = {"streams": float("inf"), "1 stream": float("inf")}
            for _ in range(3):  # alternate: a loaded machine drifts
                best["streams"] = min(best["streams"],
                                      _median_us(lambda: inv.submit().wait(), args.calls))
                best["1 stream"] = min(best["1 stream"],
                                       _median_us(lambda: inv1.submit().wait(), args.calls))
            rows.append((f"resubmit, {plan.count} streams", best["streams"]))
            rows.append(("resubmit, 1 stream", best["1 stream"]))
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"backend {args.backend}, n={args.n}, {args.calls} calls, load average {load}")
    for name, us in rows:
        print(f"{name:22s} {us:9.1f} us")


if __name__ == "__main__":
    main()
