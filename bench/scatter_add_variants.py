"""Kernel time of every scatter_add variant on one backend, and what the default picks.

``python bench/scatter_add_variants.py [--backend vulkan] [--sizes 16384,65536,262144,1048576]
[--samples 5] [--repeat 3]``

For each dtype and size ``n`` (values; ``n / 16`` output bins, random indices, the tuning
sweep's problems, :func:`accy_kernels.tuning_problems.problems`) every variant's default
candidate and its best candidate are timed by the family sweep (kernels only: inputs bound
once, launches timed, device-synchronized, upper median of ``--samples``; each result checked
against numpy first). ``--repeat`` sweeps alternate and the best median of each is kept
(loaded machines). Each line gives the times in microseconds, the fastest variant, the
variant the untuned default heuristic runs (``accy_kernels._dispatch.pick_accumulate``) and
how much slower the default is than the fastest (``default/best``; 1.00 = the heuristic picks
the winner). Nothing is written to the tuning cache.
"""

from __future__ import annotations

import argparse
import os
import time

from accy.families import backend_object, get_family
from accy.tuning.family_sweep import sweep_problem
from accy_kernels._dispatch import pick_accumulate
from accy_kernels.tuning_problems import problems


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="vulkan")
    p.add_argument("--sizes", default="16384,65536,262144,1048576")
    p.add_argument("--samples", type=int, default=5)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--dtypes", default="f32,f64,i32,i64")
    a = p.parse_args()
    be = backend_object(a.backend)
    fam = get_family("scatter_add")
    sizes = [int(s) for s in a.sizes.split(",")]
    wanted = set(a.dtypes.split(","))
    caps = be.capabilities()
    print(f"backend {a.backend} ({caps.device_name}); features {sorted(caps.features)}; "
          f"load {os.getloadavg()[0]:.2f}")
    print(f"{'dtype':<5} {'n':>8} {'bins':>6}  " + "  ".join(
        f"{v.name + ' (best)':>20}" for v in fam.variants) + "  fastest     default  def/best")
    for prob in problems("scatter_add", be, sizes, defaults=False):
        if prob.dtypes.split("+")[0] not in wanted:
            continue
        best: dict[str, tuple[float, float]] = {}
        for _ in range(a.repeat):
            r = sweep_problem(fam, prob, be, warmup=1, samples=a.samples)
            for v in fam.variants:
                ok = [c for c in r.candidates if c.variant == v.name and c.measurement]
                if not ok:
                    continue
                first = next((c.median_ns for c in ok if c.index == 0), float("inf"))
                top = min(c.median_ns for c in ok)
                old = best.get(v.name, (float("inf"), float("inf")))
                best[v.name] = (min(old[0], first), min(old[1], top))
        kw = prob.kwargs
        dtype, n, bins = kw["dtype"], kw["values"].size, kw["dst"].size
        default = pick_accumulate(be, dtype, bins, n)
        cells = []
        for v in fam.variants:
            t = best.get(v.name)
            cells.append(f"{t[0] / 1e3:9.1f} ({t[1] / 1e3:8.1f})" if t else f"{'-':>20}")
        fastest = min(best, key=lambda k: best[k][0])
        ratio = best[default][0] / best[fastest][0] if default in best else float("nan")
        print(f"{dtype:<5} {n:>8} {bins:>6}  " + "  ".join(cells)
              + f"  {fastest:<11} {default:<11} {ratio:5.2f}", flush=True)


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"({time.perf_counter() - t0:.0f} s)")
