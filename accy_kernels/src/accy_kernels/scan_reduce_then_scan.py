"""``scan.reduce_then_scan``: inclusive/exclusive prefix sum in three parallel phases.

The reduce-then-scan strategy of Merrill & Grimshaw ("Parallel Scan for Stream
Architectures", UVA CS2009-14, and "High Performance and Scalable Radix Sorting", 2011):

1. *tile reduce*: ``P`` tiles of ``chunk`` consecutive elements; one work-item per tile sums
   its tile into ``partials[t]``;
2. *spine scan*: one work-group of ``W`` work-items scans the ``P`` partials: each work-item
   sums a run of ``ceil(P / W)`` partials, the ``W`` sums are scanned in shared memory
   (Hillis–Steele, ``log2 W`` barrier steps), then each work-item rewrites its run as
   exclusive tile offsets; the grand total goes to ``total[0]``;
3. *tile scan*: each tile is rescanned sequentially from its offset.

Every loop is bounded for devices that limit loop iterations per work-item (lavapipe):
tiles are at most ``max_loop_iterations`` long and the spine's runs at most half of it
(:func:`choose_chunk`). Tile ends are computed without 32-bit overflow (``n`` up to
2**31 - 1).

Used directly by ``scan`` and as a building block by ``filter`` and ``sort.radix``. Inputs
may have another dtype than the sums (``bool`` masks scanned as i32 counts).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan, Slot, clamp_tile, loop_budget, tile_geometry
from accy.kernel import KernelBuilder, call, where

from accy_kernels._common import ceil_div

__all__ = ["add_scan", "run", "spine_kernel", "tile_reduce_kernel", "tile_scan_kernel"]

SPINE_WORKGROUP = 256


def _tile_bounds(kb: KernelBuilder, chunk, n):
    lane = kb.global_id()
    stride = kb.scalar("lane_stride", "i32")
    tiles = kb.scalar("tiles", "i32")
    t = kb.let("t", lane / stride)
    active = (lane % stride == 0) & (t < tiles)
    begin = kb.let("begin", t * chunk)
    # ``begin + chunk`` would wrap past 2**31 - 1 for the last tile of a huge input
    end = kb.let("end", where(chunk < n - begin, begin + chunk, n))
    return t, active, begin, end


@functools.cache
def tile_reduce_kernel(in_dtype: str, acc_dtype: str, workgroup_size: int = 64):
    """Buffers (partials: acc, x: in); scalars n, chunk, lane_stride, tiles (i32)."""
    kb = KernelBuilder(f"scan_reduce_{in_dtype}_{acc_dtype}_wg{workgroup_size}", workgroup_size)
    partials = kb.buffer("partials", acc_dtype, "write")
    x = kb.buffer("x", in_dtype, "read")
    n, chunk = kb.scalar("n", "i32"), kb.scalar("chunk", "i32")
    t, active, begin, end = _tile_bounds(kb, chunk, n)
    with kb.if_(active):
        acc = kb.let("acc", kb.const(0, acc_dtype))
        with kb.for_("e", begin, end) as e:
            kb.assign(acc, acc + x[e].cast(acc_dtype))
        kb.store(partials, t, acc)
    return kb.build()


@functools.cache
def spine_kernel(acc_dtype: str, workgroup_size: int = SPINE_WORKGROUP):
    """Buffers (partials: acc readwrite → exclusive offsets, total: acc[1]); scalar P (i32)."""
    w = workgroup_size
    kb = KernelBuilder(f"scan_spine_{acc_dtype}_wg{w}", w)
    partials = kb.buffer("partials", acc_dtype, "readwrite")
    total = kb.buffer("total", acc_dtype, "write")
    p = kb.scalar("p", "i32")
    sums = kb.shared("sums", acc_dtype, w)
    lid = kb.local_id()
    run_len = kb.let("run_len", (p + (w - 1)) / w)
    begin = kb.let("begin", call("min", lid * run_len, p))
    end = kb.let("end", call("min", begin + run_len, p))
    acc = kb.let("acc", kb.const(0, acc_dtype))
    with kb.for_("e", begin, end) as e:
        kb.assign(acc, acc + partials[e])
    kb.shared_store(sums, lid, acc)
    kb.barrier()
    d = 1
    while d < w:
        other = kb.let(f"other{d}", kb.const(0, acc_dtype))
        with kb.if_(lid >= d):
            kb.assign(other, sums[lid - d])
        kb.barrier()
        kb.shared_store(sums, lid, sums[lid] + other)
        kb.barrier()
        d *= 2
    run = kb.let("run", sums[lid] - acc)  # exclusive prefix of this work-item's run
    with kb.for_("f", begin, end) as f:
        v = kb.let("v", partials[f])
        kb.store(partials, f, run)
        kb.assign(run, run + v)
    with kb.if_(lid == w - 1):
        kb.store(total, 0, sums[lid])
    return kb.build()


@functools.cache
def tile_scan_kernel(in_dtype: str, acc_dtype: str, inclusive: bool, workgroup_size: int = 64):
    """Buffers (out: acc, x: in, offsets: acc); scalars n, chunk, lane_stride, tiles (i32)."""
    kind = "incl" if inclusive else "excl"
    kb = KernelBuilder(f"scan_tile_{kind}_{in_dtype}_{acc_dtype}_wg{workgroup_size}",
                       workgroup_size)
    out = kb.buffer("out", acc_dtype, "write")
    x = kb.buffer("x", in_dtype, "read")
    offsets = kb.buffer("offsets", acc_dtype, "read")
    n, chunk = kb.scalar("n", "i32"), kb.scalar("chunk", "i32")
    t, active, begin, end = _tile_bounds(kb, chunk, n)
    with kb.if_(active):
        acc = kb.let("acc", offsets[t])
        with kb.for_("e", begin, end) as e:
            v = kb.let("v", x[e].cast(acc_dtype))
            if inclusive:
                kb.assign(acc, acc + v)
                kb.store(out, e, acc)
            else:
                kb.store(out, e, acc)
                kb.assign(acc, acc + v)
    return kb.build()


def choose_chunk(n: int, candidate: Candidate | None = None, backend=None) -> int:
    """Return the tile length in elements for ``n`` elements (at most ~1024 tiles).

    With a ``backend`` that limits loop iterations (``max_loop_iterations``), the tile is
    clamped to the budget, and kept long enough that the spine's two loops over
    ``ceil(tiles / SPINE_WORKGROUP)`` partials fit it too.
    """
    if candidate is not None and candidate.items_per_thread > 1:
        chunk = candidate.items_per_thread
    else:
        chunk = max(1024, ceil_div(n, 1024))
    if backend is None:
        return chunk
    budget = loop_budget(backend)
    if budget is not None:
        spine_min = ceil_div(n, SPINE_WORKGROUP * max(1, (budget - 2) // 2))  # 2 loops
        chunk = max(chunk, spine_min)
    return clamp_tile(chunk, backend, 0, "scan tile")


def add_scan(plan: Plan, backend, x: Slot, out: Slot, n: int, acc_dtype: str,
             inclusive: bool, total: Slot | None = None, chunk: int | None = None) -> None:
    """Append the three scan launches for ``out[:n] = scan(x[:n])`` to ``plan``.

    ``total`` (``acc_dtype``, 1 element) receives the sum of all elements when given.
    """
    chunk = choose_chunk(n, Candidate(64, chunk or 0), backend)
    tiles = max(1, ceil_div(n, chunk))
    wg = 64
    groups, stride = tile_geometry(backend, tiles, wg)
    partials = plan.temp(acc_dtype, tiles)
    total = total if total is not None else plan.temp(acc_dtype, 1)
    tile_scalars = [("i32", n), ("i32", chunk), ("i32", stride), ("i32", tiles)]
    plan.launch(tile_reduce_kernel(x.dtype, acc_dtype, wg), groups, [partials, x], tile_scalars)
    plan.launch(spine_kernel(acc_dtype), 1, [partials, total], [("i32", tiles)])
    plan.launch(tile_scan_kernel(x.dtype, acc_dtype, inclusive, wg), groups,
                [out, x, partials], tile_scalars)


def run(backend, candidate: Candidate, x: np.ndarray, inclusive: bool, dtype: str) -> np.ndarray:
    """Return the inclusive (``cumsum``) or exclusive prefix sum of 1-D ``x``."""
    n = x.size
    plan = Plan("scan.reduce_then_scan")
    out = plan.output(dtype, n)
    xs = plan.param(x, dtype)
    add_scan(plan, backend, xs, out, n, dtype, inclusive, chunk=choose_chunk(n, candidate))
    (result,) = plan.run(backend)
    return result
