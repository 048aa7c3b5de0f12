"""Index arithmetic at the documented size limits (issue 10): sizes up to 2**31 - 1 elements
must index correctly, larger ones be refused before launch.

The index math is checked in the kernel interpreter on stride-0 views (a 2**31 - 1 element
"array" backed by one element), so no test allocates gigabytes.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from accy.errors import UnsupportedError
from accy.families import Plan
from accy.kernel import KernelBuilder, interpret
from numpy.lib.stride_tricks import as_strided

import accy_kernels as ak

BIG = 2**31 - 1


def huge(value, dtype, n: int = BIG) -> np.ndarray:
    return as_strided(np.array([value], dtype), shape=(n,), strides=(0,))


@pytest.mark.parametrize("value,want", [(0, 0), (1, BIG), (-1, 0)])
def test_lower_bound_near_2_31(value, want):
    from accy_kernels.scatter_add_sorted import lower_bound

    kb = KernelBuilder("lb_probe", 1)
    out = kb.buffer("out", "i32", "write")
    keys = kb.buffer("keys", "i32", "read")
    count, steps, v = kb.scalar("count", "i32"), kb.scalar("steps", "i32"), kb.scalar("v", "i32")
    kb.store(out, 0, lower_bound(kb, keys, count, steps, v, "lb"))
    got = np.zeros(1, np.int32)
    interpret(kb.build(), 1, [got, huge(0, np.int32)], [BIG, BIG.bit_length() + 1, value])
    assert int(got[0]) == want


def _scan_tile_probe():
    from accy_kernels.scan_reduce_then_scan import _tile_bounds

    kb = KernelBuilder("scan_tile_probe", 1)
    out = kb.buffer("out", "i32", "write")
    n, chunk = kb.scalar("n", "i32"), kb.scalar("chunk", "i32")
    t, active, _begin, end = _tile_bounds(kb, chunk, n)
    with kb.if_(active):
        kb.store(out, t, end)
    return kb.build(), lambda n, chunk, tiles: [n, chunk, 1, tiles]


def _sort_tile_probe():
    from accy_kernels.sort_radix import _tile

    kb = KernelBuilder("sort_tile_probe", 1)
    out = kb.buffer("out", "i32", "write")
    _n, _tiles, _shift, t, active, _begin, end = _tile(kb)
    with kb.if_(active):
        kb.store(out, t, end)
    return kb.build(), lambda n, chunk, tiles: [n, chunk, 1, tiles, 0]


@pytest.mark.parametrize("probe", [_scan_tile_probe, _sort_tile_probe])
@pytest.mark.parametrize("n,chunk", [(BIG, 2**30 + 1), (BIG, 2**31 - 2), (BIG - 5, 2**30),
                                     (BIG, 2**30)])
def test_last_tile_end_near_2_31(probe, n, chunk):
    """``begin + chunk`` of the last tile used to wrap negative (the tile was skipped)."""
    kernel, scalars = probe()
    tiles = -(-n // chunk)
    got = np.full(tiles, -1, np.int32)
    interpret(kernel, tiles, [got], scalars(n, chunk, tiles))  # one work-item per tile
    want = [min((t + 1) * chunk, n) for t in range(tiles)]
    assert got.tolist() == want


def test_window_near_2_31():
    from accy_kernels._common import window

    kb = KernelBuilder("window_probe", 1)
    out = kb.buffer("out", "i32", "write")
    lo, hi = kb.scalar("lo", "i32"), kb.scalar("hi", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    first, last = window(kb, lo, hi, skip, limit, "w")
    kb.store(out, 0, first)
    kb.store(out, 1, last)
    k = kb.build()
    got = np.zeros(2, np.int32)
    interpret(k, 1, [got], [BIG - 10, BIG, 4, 2**31 - 2])
    assert got.tolist() == [BIG - 6, BIG]
    interpret(k, 1, [got], [BIG - 10, BIG, 2**31 - 3, 5])
    assert got.tolist() == [BIG, BIG]


def test_launch_refused_past_32_bit_ids():
    kb = KernelBuilder("noop_wg100", 100)
    kb.buffer("out", "i32", "write")
    plan = Plan("big")
    out = plan.output("i32", 1)
    with pytest.raises(UnsupportedError, match="work-items"):
        plan.launch(kb.build(), 2**31 // 100 + 1, [out], [])
    with pytest.raises(UnsupportedError, match="does not fit i32"):
        plan.launch(kb.build(), 1, [out], [("i32", 2**31)])


def test_sparse_shapes_past_32_bits_refused():
    A = sp.csr_matrix((1, 2**31))
    with pytest.raises(UnsupportedError, match="rows or columns"):
        ak.spmv(A, huge(1.0, np.float64, 2**31))
    with pytest.raises(UnsupportedError, match="exceeds"):
        ak.spmm(sp.csr_matrix((2**16, 4)), huge(1.0, np.float64, 4 * 2**16).reshape(4, 2**16))


def test_family_sizes_past_32_bits_refused():
    with pytest.raises(UnsupportedError):
        ak.scan(huge(1, np.int32, 2**31))
    with pytest.raises(UnsupportedError):
        ak.random.uniform((2**31,), 1)


@pytest.mark.parametrize("probe", [_scan_tile_probe, _sort_tile_probe])
def test_compiled_last_tile_end_near_2_31(backend, probe):
    """The same tile ends through each backend's compiled index arithmetic (not only the
    interpreter): a small output buffer, a logical size of 2**31 - 1 elements."""
    kernel, scalars = probe()
    got = {}
    for n, chunk in [(BIG, 2**30 + 1), (BIG, 2**31 - 2)]:
        tiles = -(-n // chunk)
        plan = Plan("tile_probe")
        out = plan.output("i32", tiles)
        values = scalars(n, chunk, tiles)
        plan.launch(kernel, tiles, [out], [(s.dtype, v) for s, v in zip(kernel.scalars, values,
                                                                         strict=True)])
        (got[n, chunk],) = plan.run(backend)
        assert got[n, chunk].tolist() == [min((t + 1) * chunk, n) for t in range(tiles)]


_S, _I = np.ones(4, np.float32), np.zeros(4, np.int64)
_DIRECT_CALLS = {  # family direct calls on logical 2**31-element inputs (stride-0 views)
    "sort": lambda be: ak.sort(huge(1.0, np.float32, 2**31), backend=be),
    "argsort": lambda be: ak.argsort(huge(1.0, np.float32, 2**31), backend=be),
    "sort_pairs": lambda be: ak.sort_pairs(huge(1, np.int32, 2**31),
                                           huge(1.0, np.float32, 2**31), backend=be),
    "filter": lambda be: ak.filter(huge(1.0, np.float32, 2**31), huge(True, np.bool_, 2**31),
                                   backend=be),
    "gather-src": lambda be: ak.gather(huge(1.0, np.float32, 2**31), _I, backend=be),
    "gather-indices": lambda be: ak.gather(_S, huge(0, np.int64, 2**31), backend=be),
    "scatter": lambda be: ak.scatter(_S, huge(0, np.int64, 2**31), 1.0, backend=be),
    "scatter_add": lambda be: ak.scatter_add(_S, huge(0, np.int64, 2**31),
                                             huge(1.0, np.float32, 2**31), backend=be),
    "segment_sum": lambda be: ak.segment_sum(huge(1.0, np.float32, 2**31),
                                             huge(0, np.int64, 2**31), 4, backend=be),
    "matmul": lambda be: ak.matmul(huge(1.0, np.float32, 2**32).reshape(2**16, 2**16),
                                   np.ones((2**16, 2), np.float32), backend=be),
    "matmul-result": lambda be: ak.matmul(huge(1.0, np.float32, 2**16).reshape(2**16, 1),
                                          huge(1.0, np.float32, 2**16).reshape(1, 2**16),
                                          backend=be),
    "random.integers": lambda be: ak.random.integers((2**31,), 1, 0, 10, backend=be),
}


@pytest.mark.parametrize("call", list(_DIRECT_CALLS), ids=list(_DIRECT_CALLS))
def test_family_direct_calls_past_32_bits_refused_from_the_shapes(backend, call):
    """Refused with an accy error from the shapes alone: before reading the indices (a
    range check over 2**31 indices took 30 s) or copying (scatter, scatter_add and matmul
    tried to allocate 8-16 GiB and raised numpy's MemoryError)."""
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(UnsupportedError, match="2\\*\\*31|2147483647"):
            _DIRECT_CALLS[call](backend)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"{call} allocated {peak} bytes before refusing"


def _program(dtype: str, shape: tuple[int, ...], body):
    from accy.ir import Builder

    b = Builder()
    fb = b.begin_function("f", params=[b.tensor(dtype, shape)])
    fb.return_(body(fb, fb.param(0)))
    fb.finish()
    return b.finish()


@pytest.mark.parametrize("case", ["map", "reduce", "sort", "matmul", "reshape-of-big"])
def test_programs_past_32_bit_indexing_refused_at_compile(backend, case):
    """Abstract shapes in the IR: a program whose kernels would index more than 2**31 - 1
    elements is refused by compile (nothing allocated, nothing launched). The matmul case
    compiled on OpenCL and Vulkan (the tiled contraction launches few work-items)."""
    import accy

    n = 2**31
    module = {
        "map": lambda: _program("f32", (n,), lambda fb, x: fb.exp(x)),
        "reduce": lambda: _program("f32", (2, 2**30), lambda fb, x: fb.reduce_sum(x)),
        "sort": lambda: _program("i32", (n,), lambda fb, x: fb.sort(x)),
        "matmul": lambda: _program("f32", (2**16, 2**15 + 1),
                                   lambda fb, x: fb.matmul(x, fb.transpose(x, (1, 0)))),
        "reshape-of-big": lambda: _program("bool", (2**16, 2**15 + 3), lambda fb, x: fb.reshape(
            fb.select(x, False, True), ((2**15 + 3) * 2**16,))),
    }[case]()
    with pytest.raises(UnsupportedError, match="2\\*\\*31|32-bit"):
        accy.compile(module, backend)


def test_a_program_of_2_31_minus_1_elements_compiles(backend):
    """The accepted side of the boundary (compile only: running it needs 8 GiB)."""
    import accy

    accy.compile(_program("f32", (BIG,), lambda fb, x: fb.exp(x)), backend)
