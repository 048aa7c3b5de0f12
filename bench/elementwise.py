"""Benchmark: a fused 16-op elementwise chain on 16M f32, accy (CPU) vs numpy vs numexpr.

One run prints each implementation's best-of-N time and its ratio to numpy. numexpr runs
with 2 threads (as the issue asks); accy uses ACCY_NUM_THREADS (default: all cores).
Usage: ``python bench/elementwise.py [--elements N] [--repeat R] [--backend cpu]``.
"""

from __future__ import annotations

import argparse

import accy
import numpy as np
from timing import best_of as best

# numexpr has no max/min: ops 1-12 in one expression, clamp + square + sqrt in a second.
NUMEXPR_HEAD = "((((x * y + x) - y) * 0.5 + y * y) - x) / (abs(x) + 1.0) * 3.0 - 1.0"
NUMEXPR_TAIL = "sqrt(where(t < 0.25, 0.25, where(t > 4.0, 4.0, t)) ** 2)"


def chain_numpy(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    t = x * y  # 1
    t = t + x  # 2
    t = t - y  # 3
    t = t * 0.5  # 4
    u = y * y  # 5
    t = t + u  # 6
    t = t - x  # 7
    a = np.abs(x)  # 8
    a = a + 1.0  # 9
    t = t / a  # 10
    t = t * 3.0  # 11
    t = t - 1.0  # 12
    t = np.maximum(t, np.float32(0.25))  # 13
    t = np.minimum(t, np.float32(4.0))  # 14
    t = t * t  # 15
    return np.sqrt(t)  # 16


def chain_accy(n: int) -> accy.Module:
    b = accy.Builder()
    t = b.tensor("f32", (n,))
    fb = b.begin_function("chain16", params=[t, t])
    x, y = fb.param(0), fb.param(1)
    v = fb.mul(x, y)
    v = fb.add(v, x)
    v = fb.sub(v, y)
    v = fb.mul(v, 0.5)
    v = fb.add(v, fb.mul(y, y))
    v = fb.sub(v, x)
    v = fb.div(v, fb.add(fb.abs(x), 1.0))
    v = fb.sub(fb.mul(v, 3.0), 1.0)
    v = fb.min(fb.max(v, 0.25), 4.0)
    v = fb.sqrt(fb.mul(v, v))
    fb.return_(v)
    fb.finish()
    return b.finish()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--elements", type=int, default=16 * 1024 * 1024)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--backend", default="cpu")
    args = ap.parse_args()
    n = args.elements
    rng = np.random.default_rng(0)
    x = rng.standard_normal(n).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    exe = accy.compile(chain_accy(n), backend=args.backend)
    out = exe(x, y)[0]
    ref = chain_numpy(x, y)
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-5)
    rows = [("numpy", best(lambda: chain_numpy(x, y), args.repeat))]
    try:
        import numexpr

        numexpr.set_num_threads(2)

        def run_numexpr():
            t = numexpr.evaluate(NUMEXPR_HEAD, local_dict={"x": x, "y": y})
            return numexpr.evaluate(NUMEXPR_TAIL, local_dict={"t": t})

        np.testing.assert_allclose(run_numexpr(), ref, rtol=1e-4, atol=1e-5)
        rows.append(("numexpr (2 threads)", best(run_numexpr, args.repeat)))
    except ImportError:
        rows.append(("numexpr (not installed)", float("nan")))
    rows.append(
        (f"accy {args.backend} ({exe.kernel_count} kernel)", best(lambda: exe(x, y), args.repeat))
    )
    base = rows[0][1]
    print(f"16-op elementwise chain, {n} f32 elements, best of {args.repeat}")
    for name, t in rows:
        print(f"  {name:<28} {t * 1e3:9.2f} ms   {base / t:6.2f}x vs numpy")


if __name__ == "__main__":
    main()
