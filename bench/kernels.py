"""Benchmark the kernel-library families against numpy/scipy (one run, ratios printed).

``python bench/kernels.py [--n 16777216] [--backend cpu] [--repeat 3]``

Each line: family, accy time, reference time, speed-up (reference / accy; > 1 means accy is
faster). Times are the best of ``--repeat`` calls after one warm-up call (compilation and
artifact loading excluded). Targets of issue 3: argsort >= 10x numpy's stable argsort, sort
within 1.5x of numpy.sort, scatter_add faster than bincount, spmv faster than scipy.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse

import accy_kernels as ak

# The large SuiteSparse matrices are not in the repository (tests/data/README.md says where to
# get them); set ACCY_TEST_DATA to the folder holding matrices/NAME.mtx, else they are skipped.
MATRICES = Path(os.environ.get("ACCY_TEST_DATA", "/nonexistent")) / "matrices"


def best(fn, repeat: int) -> float:
    """Best wall time of ``repeat`` calls of ``fn`` after one warm-up call, in seconds."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def row(name: str, ours: float, ref: float, ref_name: str) -> None:
    print(f"{name:<34} accy {ours * 1e3:9.1f} ms   {ref_name:<26} {ref * 1e3:9.1f} ms   "
          f"speed-up {ref / ours:6.2f}x")


def power_law_matrix(n_rows: int, seed: int = 0) -> scipy.sparse.csr_matrix:
    """A CSR matrix with Zipf-distributed row lengths (mean ~8) and random columns."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(2.0, n_rows), 4096).astype(np.int64) * 4
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    cols = rng.integers(0, n_rows, int(indptr[-1])).astype(np.int32)
    data = rng.standard_normal(cols.size)
    return scipy.sparse.csr_matrix((data, cols, indptr.astype(np.int32)), (n_rows, n_rows))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 24, help="elements (default 16M)")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rows", type=int, default=2_000_000, help="power-law matrix rows")
    a = p.parse_args()
    n, be, r = a.n, a.backend, a.repeat
    rng = np.random.default_rng(0)
    print(f"n = {n} elements, backend {be}, best of {r}")

    src = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(0, n, n)
    row("gather f32 (i64 indices)", best(lambda: ak.gather(src, idx, backend=be), r),
        best(lambda: np.take(src, idx), r), "numpy.take")

    bins = 1 << 16
    sidx = rng.integers(0, bins, n)
    w = rng.standard_normal(n)
    dst = np.zeros(bins)
    ours = best(lambda: ak.scatter_add(dst, sidx, w, backend=be), r)
    row("scatter_add f64 (65536 bins)", ours, best(lambda: np.add.at(dst.copy(), sidx, w), 1),
        "numpy.add.at")
    row("scatter_add f64 (65536 bins)", ours,
        best(lambda: np.bincount(sidx, weights=w, minlength=bins), r), "numpy.bincount")

    keys = rng.random(n).astype(np.float32)
    row("sort f32", best(lambda: ak.sort(keys, backend=be), r),
        best(lambda: np.sort(keys), r), "numpy.sort")
    row("argsort f32", best(lambda: ak.argsort(keys, backend=be), r),
        best(lambda: np.argsort(keys, kind="stable"), 1), "numpy.argsort(stable)")
    ikeys = rng.integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    row("argsort i32", best(lambda: ak.argsort(ikeys, backend=be), r),
        best(lambda: np.argsort(ikeys, kind="stable"), 1), "numpy.argsort(stable)")

    gen = np.random.Generator(np.random.Philox(0))
    row("random.uniform f32 (philox4x32-10)",
        best(lambda: ak.random.uniform(n, 1, backend=be), r),
        best(lambda: gen.random(n, dtype=np.float32), r), "Generator(Philox).random")

    mats = []
    for name in ("Groebner_id2003_aug.mtx", "arrow.mtx", "bayer10.mtx"):
        if (MATRICES / name).exists():
            mats.append((name, ak.read_matrix(MATRICES / name).astype(np.float64)))
    mats.append((f"power-law {a.rows} rows", power_law_matrix(a.rows)))
    for name, A in mats:
        x = rng.standard_normal(A.shape[1])
        ref = best(lambda A=A, x=x: A @ x, r)
        for fmt in ("csr", "sell"):
            row(f"spmv {fmt} {name[:22]}", best(lambda A=A, x=x, f=fmt: ak.spmv(A, x, f,
                                                                              backend=be), r),
                ref, "scipy csr @")


if __name__ == "__main__":
    main()
