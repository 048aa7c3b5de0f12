"""Kernels written with the DSL run on the CPU backend and match numpy / the interpreter."""

from __future__ import annotations

import numpy as np
import pytest
from accy.kernel import KernelBuilder, call, interpret, where
from accy.testing.kernels import loop_tree_sum
from accy_backend_cpu.backend import CpuBackend

DT = {
    "f32": np.float32,
    "f64": np.float64,
    "i32": np.int32,
    "i64": np.int64,
    "u32": np.uint32,
    "bool": np.bool_,
}


def check_against_interpreter(run_kernel, cpu, kernel, groups, arrays, scalars, exact=False):
    got = run_kernel(cpu, kernel, groups, [a.copy() for a in arrays], scalars)
    want = [a.copy() for a in arrays]
    interpret(kernel, groups, want, scalars)
    for g, w in zip(got, want, strict=True):
        if exact or g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w)
        else:
            np.testing.assert_allclose(g, w, rtol=2e-6 if g.dtype == np.float32 else 1e-13)


@pytest.mark.parametrize("dtype", ["f32", "f64", "i32", "i64", "u32"])
def test_elementwise_arithmetic(cpu, dtype, run_kernel):
    kb = KernelBuilder(f"arith_{dtype}", 64)
    o, x, y = (
        kb.buffer("o", dtype, "write"),
        kb.buffer("x", dtype, "read"),
        kb.buffer("y", dtype, "read"),
    )
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        a, b = x[i], y[i]
        v = kb.let("v", a * b + a - b)
        kb.assign(v, call("max", v, a) + call("min", v, b))
        if dtype in ("f32", "f64"):
            kb.assign(v, v / b + call("sqrt", call("abs", a)) + call("exp", b * 0.01))
        else:
            kb.assign(v, v + a // b + a % b + (a << 3) + (b >> 2) + (a & b) + (a | b) + (a ^ b))
        kb.store(o, i, v)
    n_elems = 300  # not a multiple of 64: the guard matters
    rng = np.random.default_rng(0)
    x = rng.integers(-50, 50, n_elems).astype(DT[dtype])
    y = rng.integers(1, 20, n_elems).astype(DT[dtype])
    check_against_interpreter(
        run_kernel, cpu, kb.build(), 5, [np.zeros(n_elems, DT[dtype]), x, y], [n_elems]
    )


def test_casts_bool_and_mulhi(cpu, run_kernel):
    kb = KernelBuilder("casts", 32)
    of, ob, ou, oi = (
        kb.buffer("of", "f64", "write"),
        kb.buffer("ob", "bool", "write"),
        kb.buffer("ou", "u32", "write"),
        kb.buffer("oi", "i64", "write"),
    )
    x, flags = kb.buffer("x", "f32", "read"), kb.buffer("flags", "bool", "read")
    i = kb.global_id()
    with kb.if_(i < 100):
        xi = kb.let("xi", x[i].cast("i32"))
        u = kb.let("u", xi.bitcast("u32"))
        kb.store(of, i, x[i].cast("f64") + u.cast("f64") + flags[i].cast("f64"))
        kb.store(ob, i, where(flags[i], x[i] > 0.0, ~(xi == 3)))
        kb.store(ou, i, call("mulhi", u, u * 2654435761) + x[i].cast("u32"))
        kb.store(oi, i, xi.cast("i64") * 3000000000 + call("mulhi", xi, xi * 7).cast("i64"))
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(128) * 1e3).astype(np.float32)
    x[:4] = [np.nan, 3e12, -3e12, 3.0]  # saturating, NaN → 0
    arrays = [
        np.zeros(128, np.float64),
        np.zeros(128, bool),
        np.zeros(128, np.uint32),
        np.zeros(128, np.int64),
        x,
        rng.random(128) < 0.5,
    ]
    check_against_interpreter(run_kernel, cpu, kb.build(), 4, arrays, [], exact=True)


def reduction_kernel(ws):
    """The f32 tree sum of ``ws`` items guarded by ``n``, its barriers in a loop."""
    return loop_tree_sum(ws, name=f"reduce{ws}", guarded=True)


def test_shared_memory_tree_reduction(cpu, run_kernel):
    x = np.arange(1000, dtype=np.float32) % 17
    groups = 8
    (out, _) = run_kernel(
        cpu, reduction_kernel(128), groups, [np.zeros(groups, np.float32), x], [1000]
    )
    padded = np.concatenate([x, np.zeros(24, np.float32)])
    np.testing.assert_array_equal(out, padded.reshape(groups, 128).sum(1))


def test_atomic_histogram(cpu, run_kernel):
    kb = KernelBuilder("hist", 64)
    h, x = kb.buffer("h", "i32", "readwrite"), kb.buffer("x", "i32", "read")
    hf = kb.buffer("hf", "f32", "readwrite")
    n = kb.scalar("n", "i32")
    i = kb.global_id()
    with kb.if_(i < n):
        kb.atomic_add(h, x[i], 1)
        kb.atomic_add(hf, x[i], 0.5)
    x = np.random.default_rng(2).integers(0, 10, 100_000).astype(np.int32)
    groups = (len(x) + 63) // 64
    h, _, hf = run_kernel(
        cpu, kb.build(), groups, [np.zeros(10, np.int32), x, np.zeros(10, np.float32)], [len(x)]
    )
    np.testing.assert_array_equal(h, np.bincount(x, minlength=10))
    np.testing.assert_array_equal(hf, np.bincount(x, minlength=10) * 0.5)


def test_multithreaded_launch_matches_single_threaded(run_kernel):
    kernel = reduction_kernel(64)
    x = np.random.default_rng(3).random(64 * 4096).astype(np.float32)
    args = ([np.zeros(4096, np.float32), x], [len(x)])
    single, multi = CpuBackend(num_threads=1), CpuBackend(num_threads=4)
    multi.pool.min_items_per_thread = 1
    try:
        (a, _) = run_kernel(single, kernel, 4096, *args)
        (b, _) = run_kernel(multi, kernel, 4096, *args)
    finally:
        single.close()
        multi.close()
    np.testing.assert_array_equal(a, b)
