"""Benchmark the kernel-library families against numpy/scipy (one run, ratios printed).

``python bench/kernels.py [--n 16777216] [--backend cpu] [--repeat 3] [--tuned]``

Each line: family, accy time, reference time, the ratio accy / reference (issue 14's
figure; lower is better), the speed-up (reference / accy; > 1 means accy is faster) and
the process CPU times and their ratio (accy's summed over its threads: on a loaded machine
the wall ratio mostly measures the load, the CPU ratio still the work).
numpy and scipy are pinned to the thread count accy uses (``ACCY_NUM_THREADS``, default all
cores) through threadpoolctl; numpy's ufunc reductions are single-threaded anyway. Times
are the best of ``--repeat`` calls after one warm-up call (compilation and artifact
loading excluded).

``--tuned``: default vs tuned in one run. Every case is timed with an empty tuning cache
(the default heuristics), then its family calls are swept (``accy.tuning.family_sweep``:
kernels only, each candidate checked against the case's reference) into a private tuning
cache, and every case is timed again with it; each line gives the default time, the tuned
time, their ratio (default / tuned) and what the tuned call ran.

Targets of issue 3: argsort >= 10x numpy's stable argsort, sort within 1.5x of numpy.sort,
scatter_add faster than bincount, spmv faster than scipy.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import numpy as np
import scipy.sparse

import accy_kernels as ak
from accy_kernels import spmv_bound, spmv_fast

# The large SuiteSparse matrices are not in the repository (tests/data/README.md says where to
# get them); set ACCY_TEST_DATA to the folder holding matrices/NAME.mtx, else they are skipped.
MATRICES = Path(os.environ.get("ACCY_TEST_DATA", "/nonexistent")) / "matrices"
SMALL = Path(__file__).resolve().parents[1] / "tests" / "data" / "matrices"


class Seconds(float):
    """A best wall time (the float) with ``cpu``: the best process CPU time of the same
    calls (all threads), in seconds; on a loaded machine the CPU time still tells the work."""

    cpu: float


def best(fn, repeat: int) -> Seconds:
    """Best wall time of ``repeat`` calls of ``fn`` after one warm-up call, in seconds (and,
    as ``.cpu``, the best process CPU time of those calls)."""
    fn()
    times, cpu = [], []
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = Seconds(min(times))
    out.cpu = min(cpu)
    return out


def best_small(fn, repeat: int, seconds: float = 0.02) -> float:
    """Per-call time of a fast ``fn`` (microseconds): the best of ``repeat`` batches, each
    of as many calls as take about ``seconds``."""
    fn()
    t = time.perf_counter()
    fn()
    batch = max(1, int(seconds / max(time.perf_counter() - t, 1e-7)))
    times = []
    for _ in range(max(repeat, 5)):
        t = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - t) / batch)
    return min(times)


def row(name: str, ours: float, ref: float, ref_name: str) -> None:
    """One line: wall times, their ratio and speed-up, then (timed by :func:`best`) the
    ratio of the process CPU times (accy's over its threads, the reference's)."""
    cpu = ""
    if isinstance(ours, Seconds) and isinstance(ref, Seconds) and ref.cpu > 0:
        cpu = f"   cpu {ours.cpu * 1e3:9.3f} / {ref.cpu * 1e3:9.3f} ms = {ours.cpu / ref.cpu:5.2f}"
    print(f"{name:<34} accy {ours * 1e3:9.3f} ms   {ref_name:<26} {ref * 1e3:9.3f} ms   "
          f"accy/ref {ours / ref:5.2f}   speed-up {ref / ours:6.2f}x{cpu}")


def reductions(rng: np.random.Generator, be: str, r: int, side: int = 4096) -> None:
    """Row/column/full sum and row max of a [side, side] f32 matrix (compiled programs:
    ``accy.numpy`` under ``accy.jit``) against numpy, and their bandwidth."""
    import accy
    import accy.numpy as anp

    m = rng.standard_normal((side, side)).astype(np.float32)
    cases = [("row-sum", lambda a: anp.sum(a, axis=1), lambda a: a.sum(axis=1)),
             ("row-max", lambda a: anp.max(a, axis=1), lambda a: a.max(axis=1)),
             ("column-sum", lambda a: anp.sum(a, axis=0), lambda a: a.sum(axis=0)),
             ("full sum", lambda a: anp.sum(a), lambda a: a.sum())]
    for name, ours, ref in cases:
        f = accy.jit(ours, backend=be)
        t = best(lambda f=f: f(m), r)
        row(f"{name} [{side},{side}] f32 ({m.nbytes / t / 1e9:4.1f} GB/s)", t,
            best(lambda ref=ref: ref(m), r), f"numpy {name}")


def power_law_matrix(n_rows: int, seed: int = 0) -> scipy.sparse.csr_matrix:
    """A CSR matrix with Zipf-distributed row lengths (mean ~8) and random columns."""
    rng = np.random.default_rng(seed)
    lengths = np.minimum(rng.zipf(2.0, n_rows), 4096).astype(np.int64) * 4
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    cols = rng.integers(0, n_rows, int(indptr[-1])).astype(np.int32)
    data = rng.standard_normal(cols.size)
    return scipy.sparse.csr_matrix((data, cols, indptr.astype(np.int32)), (n_rows, n_rows))


def cases(n: int, be: str, rows: int) -> list[tuple[str, object, object]]:
    """``(name, accy call, reference call)`` of the ``--tuned`` comparison."""
    rng = np.random.default_rng(0)
    src = rng.standard_normal(n).astype(np.float32)
    idx = rng.integers(0, n, n)
    bins = 1 << 16
    sidx = rng.integers(0, bins, n)
    w = rng.standard_normal(n)
    dst = np.zeros(bins)
    keys = rng.random(n).astype(np.float32)
    ikeys = rng.integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    a = power_law_matrix(rows)
    x = rng.standard_normal(a.shape[1])
    return [
        ("gather f32 (i64 indices)", lambda: ak.gather(src, idx, backend=be),
         lambda: np.take(src, idx)),
        ("scatter_add f64 (65536 bins)", lambda: ak.scatter_add(dst, sidx, w, backend=be),
         lambda: np.bincount(sidx, weights=w, minlength=bins)),
        ("scan f32", lambda: ak.scan(src, backend=be), lambda: np.cumsum(src)),
        ("sort f32", lambda: ak.sort(keys, backend=be), lambda: np.sort(keys)),
        ("sort i32", lambda: ak.sort(ikeys, backend=be), lambda: np.sort(ikeys)),
        ("argsort f32", lambda: ak.argsort(keys, backend=be),
         lambda: np.argsort(keys, kind="stable")),
        ("argsort i32", lambda: ak.argsort(ikeys, backend=be),
         lambda: np.argsort(ikeys, kind="stable")),
        ("random.uniform f32 (philox4x32-10)", lambda: ak.random.uniform(n, 1, backend=be),
         None),
        (f"spmv power-law {rows} rows", lambda: ak.spmv(a, x, backend=be), lambda: a @ x),
        (f"spmv sell power-law {rows} rows", lambda: ak.spmv(a, x, "sell", backend=be),
         lambda: a @ x),
    ]


def tuned_comparison(n: int, be: str, repeat: int, rows: int, samples: int) -> None:
    """The ``--tuned`` mode (see the module docstring)."""
    import tempfile

    from accy.families import backend_object, get_family
    from accy.tuning.cache import TuningCache
    from accy.tuning.families import store_family_entries
    from accy.tuning.family_sweep import format_table, sweep_problem
    from accy_kernels._dispatch import capture_calls, last_choice
    from accy_kernels.tuning_problems import problem_from_call, problems

    backend = backend_object(be)
    work = cases(n, be, rows)
    with tempfile.TemporaryDirectory() as d:
        os.environ["ACCY_TUNING_CACHE"] = f"{d}/empty.json"
        default = {}
        for name, fn, _ in work:
            default[name] = (best(fn, repeat), last_choice())
        sweep = []
        for name, fn, ref in work:
            if ref is None:  # random: the stream's own problem (numpy Random123 reference)
                sweep += [p for p in problems("random", backend, (n,), defaults=False)
                          if p.kwargs["algorithm"] == "philox4x32-10"]
                continue
            with capture_calls() as calls:
                fn()
            expected = ref()
            sweep += [problem_from_call(c, expected, name) for c in calls]
        results = [sweep_problem(get_family(p.family), p, backend, warmup=1, samples=samples)
                   for p in sweep]
        print(format_table(results))
        tuned_cache = TuningCache(f"{d}/tuned.json")
        store_family_entries([e for r in results for e in r.entries], tuned_cache)
        os.environ["ACCY_TUNING_CACHE"] = str(tuned_cache.path)
        print(f"\nn = {n} elements, backend {be}, best of {repeat}: default vs tuned")
        for name, fn, _ in work:
            t = best(fn, repeat)
            ran = last_choice()
            d_t, d_ran = default[name]
            print(f"{name:<36} default {d_t * 1e3:9.2f} ms ({d_ran[0]} {d_ran[1]})   tuned "
                  f"{t * 1e3:9.2f} ms ({ran[0]} {ran[1]}, {ran[2]}/{ran[3]})   "
                  f"ratio {d_t / t:5.2f}x")
        del os.environ["ACCY_TUNING_CACHE"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1 << 24, help="elements (default 16M)")
    p.add_argument("--backend", default="cpu")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--rows", type=int, default=2_000_000, help="power-law matrix rows")
    p.add_argument("--tuned", action="store_true",
                   help="compare the default and the tuned choices per family in one run")
    p.add_argument("--samples", type=int, default=5, help="--tuned: timed sweep launches")
    p.add_argument("--only", choices=("dense", "spmv"),
                   help="only the dense families' rows, or only the SpMV rows")
    a = p.parse_args()
    n, be, r = a.n, a.backend, a.repeat
    if a.tuned:
        tuned_comparison(n, be, r, a.rows, a.samples)
        return
    from accy.config import num_threads
    from threadpoolctl import threadpool_limits

    rng = np.random.default_rng(0)
    threads = num_threads()
    print(f"n = {n} elements, backend {be}, best of {r}, {threads} threads "
          f"(load average {os.getloadavg()[0]:.1f})")
    with threadpool_limits(threads):
        if a.only != "spmv":
            dense(n, be, r, rng)
        if a.only != "dense":
            spmv_rows(be, r, a.rows, rng)


def dense(n: int, be: str, r: int, rng: np.random.Generator) -> None:
    """The dense family rows of the issue 14 table."""
    reductions(rng, be, r)

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
    # the values and indices read once: the floor of the call at streaming speed
    row(f"scatter_add f64 (65536 bins, {(sidx.nbytes + w.nbytes) / ours / 1e9:4.1f} GB/s)",
        ours, best(lambda: np.bincount(sidx, weights=w, minlength=bins), r), "numpy.bincount")

    keys = rng.random(n).astype(np.float32)
    row("sort f32", best(lambda: ak.sort(keys, backend=be), r),
        best(lambda: np.sort(keys), r), "numpy.sort")
    row("argsort f32", best(lambda: ak.argsort(keys, backend=be), r),
        best(lambda: np.argsort(keys, kind="stable"), 1), "numpy.argsort(stable)")
    ikeys = rng.integers(-(2**31), 2**31 - 1, n).astype(np.int32)
    row("sort i32", best(lambda: ak.sort(ikeys, backend=be), r),
        best(lambda: np.sort(ikeys), r), "numpy.sort")
    row("argsort i32", best(lambda: ak.argsort(ikeys, backend=be), r),
        best(lambda: np.argsort(ikeys, kind="stable"), 1), "numpy.argsort(stable)")

    gen = np.random.Generator(np.random.Philox(0))
    row("random.uniform f32 (philox4x32-10)",
        best(lambda: ak.random.uniform(n, 1, backend=be), r),
        best(lambda: gen.random(n, dtype=np.float32), r), "Generator(Philox).random")


def spmv_rows(be: str, r: int, rows: int, rng: np.random.Generator) -> None:
    """The SpMV rows (CSR and SELL, by ``spmv`` and by a ``prepare_spmv`` handle) of the
    issue 14 table against scipy's CSR product."""
    mats = []
    # the small SuiteSparse matrices of the repository (issue 14: Python per call), then the
    # optional large ones, then the power-law one
    for name in ("494_bus.mtx", "cryg2500.mtx", "rajat01.mtx", "pushpull.mtx"):
        mats.append((name, ak.read_matrix(SMALL / name).astype(np.float64)))
    for name in ("Groebner_id2003_aug.mtx", "arrow.mtx", "bayer10.mtx"):
        if (MATRICES / name).exists():
            mats.append((name, ak.read_matrix(MATRICES / name).astype(np.float64)))
    mats.append((f"power-law {rows} rows", power_law_matrix(rows)))
    for name, A in mats:
        x = rng.standard_normal(A.shape[1])
        if A.nnz >= 1 << 20:
            ref = best(lambda A=A, x=x: A @ x, r)
            for fmt in ("csr", "sell"):
                row(f"spmv {fmt} {name[:22]} ({A.nnz} nz)",
                    best(lambda A=A, x=x, f=fmt: ak.spmv(A, x, f, backend=be), r), ref,
                    "scipy csr @")
                p = ak.prepare_spmv(A, fmt, backend=be)
                row(f"spmv prepared {fmt} {name[:13]}", best(lambda p=p, x=x: p @ x, r), ref,
                    "scipy csr @")
                del p
            continue
        small_rows(be, r, name, A, x)


def small_rows(be: str, r: int, name: str, A, x: np.ndarray, turns: int = 3) -> None:
    """The rows of a matrix under 1M entries: scipy, ``spmv`` (CSR, SELL), a
    ``prepare_spmv`` handle (no per-call matrix check), and the CSR call forced onto one
    thread and split over the pool whatever ``spmv_bound.SPLIT_ENTRIES`` chose (what the
    split buys on this machine). Each is timed in ``turns`` turns, one after the other, and
    its best turn is printed: a burst of load or a pause of the pool's worker then falls on
    every row alike, not on whichever came first (issue 14's rajat01 'default' row was
    once 0.72 scipy while its identical 'split' row was 0.50)."""
    handles = {fmt: ak.prepare_spmv(A, fmt, backend=be) for fmt in ("csr", "sell")}

    def forced(entries: int):
        def run() -> None:
            ak.spmv(A, x, "csr", backend=be)

        def timed(repeat: int) -> float:
            split = spmv_bound.SPLIT_ENTRIES
            spmv_bound.SPLIT_ENTRIES = entries
            spmv_fast.clear_prepared()
            try:
                return best_small(run, repeat)
            finally:
                spmv_bound.SPLIT_ENTRIES = split
                spmv_fast.clear_prepared()

        return timed

    cases = {
        "scipy": lambda n: best_small(lambda: A @ x, n),
        f"spmv csr {name[:22]} ({A.nnz} nz)":
            lambda n: best_small(lambda: ak.spmv(A, x, "csr", backend=be), n),
        f"spmv sell {name[:22]} ({A.nnz} nz)":
            lambda n: best_small(lambda: ak.spmv(A, x, "sell", backend=be), n),
        f"spmv prepared csr {name[:13]}": lambda n: best_small(lambda: handles["csr"] @ x, n),
        f"spmv prepared sell {name[:13]}": lambda n: best_small(lambda: handles["sell"] @ x, n),
        f"spmv csr 1 thread {name[:13]}": forced(1 << 62),
        f"spmv csr split {name[:13]}": forced(0),
    }
    times = dict.fromkeys(cases, float("inf"))
    for _ in range(turns):
        for label, timed in cases.items():
            times[label] = min(times[label], timed(r))
    ref = times.pop("scipy")
    for label, t in times.items():
        row(label, t, ref, "scipy csr @")


if __name__ == "__main__":
    main()
