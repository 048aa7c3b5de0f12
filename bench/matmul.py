"""Benchmark: accy contractions (the ``matmul`` family through the compiler) vs numpy/OpenBLAS.

One run prints, per case: best-of-R wall time of a compiled accy program and of numpy
(pinned to accy's thread count with threadpoolctl; the two run alternately, so that a
shared machine's load hits both alike), GFLOP/s, the ratio accy / numpy and
the fraction of the machine's peak. Cases: square f32 and f64 (256, 512, 1024; 2048 with
``--big``), tall-skinny 65536x64 @ 64x64, matrix-vector 4096x4096 @ 4096 (reported in GB/s
of A against the best streaming read of as many bytes on as many threads: accy's full sum
and a numpy/BLAS dot, both printed), 64x65536 @ 65536x64 (split-K
on machines with more threads than its 44 tiles need), batched 64 x 128x128, the MLP layer
``relu(x @ W + b)`` at 256, 64, 4 and 1 rows (one accy kernel pass vs numpy's three calls; 64
rows also as ``x @ W.T``, torch's ``Linear`` layout) and an
attention block ``softmax(q k^T / sqrt(d)) v``. ``--vulkan`` adds lavapipe: the family
against the generic one-work-item-per-output kernels (``fusion{contraction=loops}``) at small sizes.

Peak = cores x clock x (SIMD bits / element bits) x 2 FMA pipes x 2 flops; the clock is
``cpuinfo_max_freq`` (else ``/proc/cpuinfo``'s MHz) and the SIMD width the CPU backend's
``simd*`` feature; both are assumptions printed with the result. The machine may be shared:
ratios measured in the same run are the figures to compare.

Usage: ``python bench/matmul.py [--repeat R] [--big] [--vulkan] [--threads T] [--only TEXT]``
(``--only MLP``: the cases whose name contains ``MLP``). For
OpenBLAS's own kernel choice run it with ``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE`` unset.

OpenBLAS's worker threads spin for 2^28 cycles (about 0.1 s) after each call before they
sleep, so an accy run right after a numpy call shares the cores with them: on the idle 2-core
machine a 1024^2 f32 product took 13.5 ms alone and 25.4 ms 50 ms after a numpy call. The
bench sets ``OPENBLAS_THREAD_TIMEOUT=4`` (2^4 cycles, the minimum; before numpy is imported,
unless the variable is set) so the alternating runs measure each library, not the other's
spinning threads.
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")  # see the module docstring

import numpy as np  # noqa: E402  (after the OpenBLAS setting above)


def _timed(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def _timed_pair(f, g, repeat: int) -> tuple[float, float]:
    """Best-of-``repeat`` seconds of ``f`` and of ``g``, run alternately so that both see the
    same load on a shared machine (ratios stay comparable when absolute times do not). The
    best process CPU seconds of each call (all threads) go to :data:`CPU_TIMES`: on a
    loaded machine, where a woken worker thread waits for a core, their ratio is the
    steadier figure (it compares the work done, not the parallel speed-up)."""
    f()
    g()
    bf = bg = cf = cg = float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        f()
        c1, t1 = time.process_time(), time.perf_counter()
        g()
        c2, t2 = time.process_time(), time.perf_counter()
        bf, bg = min(bf, t1 - t0), min(bg, t2 - t1)
        cf, cg = min(cf, c1 - c0), min(cg, c2 - c1)
    CPU_TIMES[:] = [cf, cg]
    return bf, bg


#: best CPU seconds (accy, numpy) of the last :func:`_timed_pair`
CPU_TIMES: list[float] = [float("nan"), float("nan")]


def _peak_gflops(threads: int, dtype) -> tuple[float, str]:
    from accy.plugins import open_backend

    feats = open_backend("cpu").capabilities().features
    bits = 512 if "simd512" in feats else 256 if "simd256" in feats else 128
    ghz = 0.0
    try:
        with open("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq") as f:
            ghz = int(f.read()) / 1e6
    except OSError:
        with open("/proc/cpuinfo") as f:
            mhz = [float(line.split(":")[1]) for line in f if line.startswith("cpu MHz")]
        ghz = max(mhz) / 1e3 if mhz else 2.0
    lanes = bits // (8 * np.dtype(dtype).itemsize)
    peak = threads * ghz * lanes * 2 * 2
    return peak, f"{threads} cores x {ghz:.2f} GHz x {lanes} lanes x 2 FMA pipes x 2"


def _memory_bandwidth(repeat: int, threads: int, a: np.ndarray) -> tuple[float, str]:
    """GB/s of a ``threads``-thread streaming read of ``a.nbytes`` bytes (the matrix-vector
    operand's size, so that both see the same mix of L3 and DRAM): the best of accy's
    full-sum kernel over ``a`` and a BLAS dot of its two halves (reads only) on ``threads``
    threads. A numpy copy and a STREAM triad (one thread: numpy's elementwise loops do not
    thread; counted as STREAM does) are printed beside for reference, not as the ceiling:
    both matrix-vector products read faster than they do."""
    import accy.numpy as anp
    from threadpoolctl import threadpool_limits

    flat = a.reshape(-1)
    half = flat.size // 2
    x, y = flat[:half], flat[half:2 * half]
    exe = _compile(lambda v: anp.sum(v), (flat,))
    acc = flat.nbytes / _timed(lambda: exe(flat), repeat)
    with threadpool_limits(threads):
        dot = (x.nbytes + y.nbytes) / _timed(lambda: np.dot(x, y), repeat)
    b = np.empty_like(x)
    copy = 2 * x.nbytes / _timed(lambda: np.copyto(b, x), repeat)
    third = max(1, flat.size // 3)
    u, v, w = (np.ones(third, np.float32) for _ in range(3))

    def triad():
        np.multiply(w, np.float32(3.0), out=u)
        np.add(v, u, out=u)
    tri = 3 * u.nbytes / _timed(triad, repeat)
    best = max(acc, dot)
    return best / 1e9, (f"streaming read x{threads}: accy sum {acc / 1e9:.1f}, numpy dot "
                        f"{dot / 1e9:.1f} GB/s over {flat.nbytes >> 20} MiB (the ceiling: "
                        f"their best); for reference copy x1 {copy / 1e9:.1f}, triad x1 "
                        f"{tri / 1e9:.1f} GB/s")


def _load() -> str:
    """The machine's 1-minute load average against its cores: on the shared 2-core
    machine a load near 2 or above makes the 2-thread figures (wall) those of whichever
    thread got a core; the CPU-time ratio is the steadier one then."""
    try:
        one = os.getloadavg()[0]
    except OSError:
        return "load average unknown"
    return f"load average {one:.2f} on {os.cpu_count()} cores"


def _compile(fn, args, backend="cpu"):
    import accy

    return accy.compile(accy.jit(fn).lower(*args), backend=backend, use_cache=False)


def _row(name, flops, t_accy, t_np, peak, extra=""):
    gf = flops / t_accy / 1e9
    gn = flops / t_np / 1e9 if t_np else float("nan")
    ca, cn = CPU_TIMES
    print(f"{name:<28} accy {t_accy * 1e3:9.2f} ms {gf:7.1f} GF/s ({100 * gf / peak:4.1f}% peak)"
          f" | numpy {t_np * 1e3:9.2f} ms {gn:7.1f} GF/s | accy/numpy {gf / gn:5.2f}"
          f" | cpu ms {ca * 1e3:.2f} / {cn * 1e3:.2f} = {cn / ca:5.2f}{extra}")


def _softmax(s):
    p = np.exp(s - s.max(-1, keepdims=True))
    return p / p.sum(-1, keepdims=True)


def cases(big: bool):
    """``(name, accy program, numpy reference, args, flops, dtype)`` of every CPU case."""
    import accy.numpy as anp

    rng = np.random.default_rng(0)

    def arr(*shape, dtype=np.float32):
        return rng.standard_normal(shape).astype(dtype)

    def mm(a, b):
        return a @ b

    for dt in (np.float32, np.float64):
        for n in (256, 512, 1024) + ((2048,) if big else ()):
            yield (f"square {np.dtype(dt).name} {n}", mm, mm,
                   (arr(n, n, dtype=dt), arr(n, n, dtype=dt)), 2 * n**3, dt)
    yield ("tall-skinny 65536x64@64x64", mm, mm, (arr(65536, 64), arr(64, 64)),
           2 * 65536 * 64 * 64, np.float32)
    yield ("small-MN 64x65536@65536x64", mm, mm, (arr(64, 65536), arr(65536, 64)),
           2 * 64 * 65536 * 64, np.float32)
    yield ("batched 64x128x128", mm, mm, (arr(64, 128, 128), arr(64, 128, 128)),
           2 * 64 * 128**3, np.float32)
    for m in (256, 64, 4, 1):  # the bench shape, small batches, one row (matrix-vector)
        yield (f"MLP relu(x@W+b) {m}x1024", lambda x, w, b: anp.maximum(x @ w + b, 0.0),
               lambda x, w, b: np.maximum(x @ w + b, 0.0),
               (arr(m, 1024), arr(1024, 1024), arr(1024)), 2 * m * 1024**2, np.float32)
    # torch.nn.Linear's layout: W stored (out, in), B = W.T with unit k stride
    yield ("MLP relu(x@W.T+b) 64x1024", lambda x, w, b: anp.maximum(x @ w.T + b, 0.0),
           lambda x, w, b: np.maximum(x @ w.T + b, 0.0),
           (arr(64, 1024), arr(1024, 1024), arr(1024)), 2 * 64 * 1024**2, np.float32)
    d = 64
    yield ("attention 512x64",
           lambda q, k, v: anp.softmax(q @ k.T * (1 / np.sqrt(d)), axis=-1) @ v,
           lambda q, k, v: _softmax(q @ k.T * (1 / np.sqrt(d))) @ v,
           (arr(512, d), arr(512, d), arr(512, d)), 2 * 2 * 512 * 512 * d, np.float32)


def run_cpu(repeat: int, big: bool, threads: int, only: str = "") -> None:
    from threadpoolctl import threadpool_info, threadpool_limits

    info = [(i.get("internal_api"), i.get("architecture"), i.get("num_threads"))
            for i in threadpool_info()]
    print(f"numpy BLAS (threadpoolctl): {info}; pinned to {threads} threads; {_load()}")
    for name, fn, ref, args, flops, dt in cases(big):
        if only and only not in name:
            continue
        exe = _compile(fn, args)
        got = exe(*args)[0]
        with threadpool_limits(threads):
            t_accy, t_np = _timed_pair(lambda e=exe, a=args: e(*a),
                                       lambda a=args, r=ref: r(*a), repeat)
            want = ref(*args)
        err = float(np.abs(got - want).max() / max(1.0, np.abs(want).max()))
        peak, _ = _peak_gflops(threads, dt)
        _row(name, flops, t_accy, t_np, peak, f" | rel err {err:.1e}")
    if only and only not in "matvec 4096x4096@4096":
        print(f"at the end: {_load()}")
        return
    a, x = np.random.default_rng(1).standard_normal((2, 4096, 4096)).astype(np.float32)[0], \
        np.ones(4096, np.float32)
    exe = _compile(lambda a, x: a @ x, (a, x))
    with threadpool_limits(threads):
        t_accy, t_np = _timed_pair(lambda: exe(a, x), lambda: a @ x, repeat)
    bw, how = _memory_bandwidth(repeat, threads, a)
    ga, gn = a.nbytes / t_accy / 1e9, a.nbytes / t_np / 1e9
    print(f"{'matvec 4096x4096@4096':<28} accy {t_accy * 1e3:9.2f} ms {ga:6.1f} GB/s "
          f"({100 * ga / bw:4.0f}% of streaming read {bw:.1f} GB/s) | numpy "
          f"{t_np * 1e3:9.2f} ms "
          f"{gn:6.1f} GB/s | accy/numpy {t_np / t_accy:5.2f} | cpu ms {CPU_TIMES[0] * 1e3:.2f}"
          f" / {CPU_TIMES[1] * 1e3:.2f}")
    print(f"bandwidth: {how}")
    print("peak f32:", _peak_gflops(threads, np.float32)[1])
    print(f"at the end: {_load()}")
    _numba(repeat, threads)


def _numba(repeat: int, threads: int) -> None:
    try:
        import numba
    except ImportError:
        print("numba: not installed, skipped")
        return
    numba.set_num_threads(threads)
    a = np.random.rand(512, 512).astype(np.float32)

    @numba.njit(parallel=True, fastmath=True)
    def mm(a, b):
        return a @ b
    t = _timed(lambda: mm(a, a), repeat)
    print(f"numba njit a@b 512 f32: {t * 1e3:.2f} ms {2 * 512**3 / t / 1e9:.1f} GF/s")


def run_vulkan(repeat: int) -> None:
    from accy.passes import get_pipeline, register_pipeline

    old = get_pipeline("dispatch")
    rng = np.random.default_rng(2)
    for n in (128, 256):
        a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
        times = {}
        for mode in ("library", "loops"):
            register_pipeline("dispatch", f"fusion{{contraction={mode}}}", replace=True)
            try:
                exe = _compile(lambda a, b: a @ b, (a, b), "vulkan")
                times[mode] = _timed(lambda e=exe, x=a, y=b: e(x, y), max(1, repeat // 2))
            finally:
                register_pipeline("dispatch", old, replace=True, provider="accy-core")
        print(f"vulkan square f32 {n}: family {times['library'] * 1e3:8.2f} ms, naive loops "
              f"{times['loops'] * 1e3:8.2f} ms, speed-up {times['loops'] / times['library']:.1f}x")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--big", action="store_true", help="add the 2048 square cases")
    ap.add_argument("--vulkan", action="store_true", help="add lavapipe vs the naive kernels")
    ap.add_argument("--threads", type=int, default=None, help="ACCY_NUM_THREADS (all cores)")
    ap.add_argument("--only", default="", help="run the cases whose name contains this text "
                    "(e.g. MLP, 'square float32')")
    args = ap.parse_args()
    if args.threads:
        os.environ["ACCY_NUM_THREADS"] = str(args.threads)
    from accy import config

    run_cpu(args.repeat, args.big, config.num_threads(), args.only)
    if args.vulkan:
        run_vulkan(args.repeat)


if __name__ == "__main__":
    main()
