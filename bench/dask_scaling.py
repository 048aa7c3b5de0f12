"""Benchmark: accy.dask vs dask.array with numpy blocks, on 1 and 2 local worker processes.

Two workloads with the same chunks on both sides: the 16-op elementwise chain of
``bench/elementwise.py`` (written with ``accy.numpy`` / numpy) and SpMV of a banded random
CSR matrix partitioned by rows (scipy on the numpy side). Inputs are generated on the
workers (no data shipped from the client). Each worker is one process with one thread and
runs accy with ``ACCY_NUM_THREADS=1`` so both sides use one core per worker.

Prints, per workload and worker count: best-of-R wall time, throughput per worker
(elements or nonzeros per second per worker) and the ratio accy / dask-numpy; and the cost
of the first graph (which compiles on every worker) over the best later one.
Usage: ``python bench/dask_scaling.py [--elements N] [--chunks K] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("ACCY_NUM_THREADS", "1")


def chain(xp, x, y):
    t = ((x * y + x - y) * 0.5 + y * y - x) / (xp.abs(x) + 1.0) * 3.0 - 1.0
    t = xp.minimum(xp.maximum(t, 0.25), 4.0)
    return xp.sqrt(t * t)


def _banded(rows: int, seed: int):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    offs = np.array([-40, -7, -1, 0, 1, 7, 40])
    return sp.diags([rng.standard_normal(rows) for _ in offs], offs, shape=(rows, rows),
                    format="csr")


def _timed(fn, repeat: int) -> tuple[float, float]:
    t0 = time.perf_counter()
    fn()
    first = time.perf_counter() - t0
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return first, best


def run(workers: int, n: int, chunks: int, repeat: int) -> None:
    import accy.dask
    import accy.numpy as anp
    import dask.array as da
    import distributed

    cluster = distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None,
                                       silence_logs=40)
    client = distributed.Client(cluster)
    try:
        x = da.random.default_rng(1).random(n, chunks=n // chunks, dtype=np.float32).persist()
        y = da.random.default_rng(2).random(n, chunks=n // chunks, dtype=np.float32).persist()
        f = accy.dask.jit(lambda x, y: chain(anp, x, y))
        rows = n // 8
        A = accy.dask.from_scipy(_banded(rows, 3), rows // chunks).persist()
        v = np.ones(rows)
        cases = {
            "chain": (n, lambda: f(x, y).sum().compute(),
                      lambda: chain(np, x, y).sum().compute()),
            "spmv": (A.map_blocks(lambda b: np.array([b.nnz]), dtype=int, chunks=(1,),
                                  drop_axis=1).sum().compute(),
                     lambda: accy.dask.spmv(A, v).sum().compute(),
                     lambda: A.map_blocks(lambda b: b @ v, dtype=float, drop_axis=1,
                                          chunks=(A.chunks[0],)).sum().compute()),
        }
        for name, (work, fa, fn) in cases.items():
            a_first, a_best = _timed(fa, repeat)
            n_first, n_best = _timed(fn, repeat)
            print(f"{name:6s} workers={workers}  accy {a_best * 1e3:8.1f} ms "
                  f"({work / a_best / workers / 1e6:7.1f} M/s/worker, first graph "
                  f"+{(a_first - a_best) * 1e3:6.0f} ms)  dask-numpy {n_best * 1e3:8.1f} ms "
                  f"({work / n_best / workers / 1e6:7.1f} M/s/worker)  ratio "
                  f"{a_best / n_best:5.2f}")
    finally:
        client.close()
        cluster.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    for workers in (1, 2):
        run(workers, args.elements, args.chunks, args.repeat)


if __name__ == "__main__":
    main()
