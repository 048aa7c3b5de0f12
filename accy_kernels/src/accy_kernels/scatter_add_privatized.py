"""``scatter_add.privatized``: ``numpy.add.at`` through per-tile private histograms.

The value elements are split into ``tiles`` contiguous chunks. One work-item per tile zeroes
its own slice (``size`` elements, the whole output) of a scratch buffer and adds every value
of its chunk into that slice with plain loads and stores (no atomics, no shared cache lines
between tiles). A second kernel, one work-item per output element, sums the slices:
``out[e] = ((dst[e] + slice_0[e]) + slice_1[e]) + ...``.

Summation order: within a tile, values are added in increasing position order; the tile
partial sums are then added to ``dst`` in tile order. For floats this differs from
``numpy.add.at``'s purely sequential order (rounding in the last bits), but it is
deterministic for a given tile count (independent of thread scheduling). Integer sums are
exact (wrapping like numpy's). Needs no atomics, so it runs on every backend.

On a host-memory backend the 1-D histogram loop takes the values in blocks of
:data:`HOST_BLOCK`: one vectorized range test per block (the sign of an OR), then the
block's updates with no per-value normalization or clamp, several of them in flight
(:func:`histogram_kernel`); 16M f64 values with i64 indices into 65,536 bins on 2 threads
took 35 ms per-value checked, 20 ms blocked (``numpy.bincount``: 44 ms; 2-core EPYC, load
~0.9); the merge of the slices takes :data:`HOST_LANES` outputs per work-item in SIMD
registers (0.45 -> 0.23 ms for 65,536 f64 outputs of 2 slices). Along an axis the host
adds whole rows of the trailing elements (:func:`rows_kernel`: one range check per row, a
contiguous SIMD loop per row, no division per value): an embedding-style update, 262,144
rows of 64 f32 into [4096, 64], took 199 ms of CPU time (four integer divisions per
value), now 6.6 ms. Passes over memory: one
read of the values and indices, the private slices written and read once (tiles x output
elements, in cache when they fit), the output written once: the minimum but for the slices.

Worth it where the private copies are cheap: a host-memory (CPU) backend (even with one
thread: plain adds beat atomic ones), one tile per pool thread, and an output much smaller
than the number of values (the default picks it then, see
:func:`accy_kernels._dispatch.pick_accumulate`). On a *lane device* (no host memory,
subgroups narrower than 32: work-items are SIMD lanes of a few CPU threads, as on lavapipe
and PoCL) it is the default where the backend has no atomic add on the dtype: measured on
lavapipe (2 cores, loaded), f64 65,536 values into 4,096 bins 7.9 ms privatized (4-8 tiles)
vs 18.4 ms sorted, 262,144 into 16,384: 19.8 ms vs 292 ms; with 256 tiles (the GPU default)
privatized was slower than sorted (95 ms, 342 ms), so lane devices get one tile per CPU
thread like the host (``bench/scatter_add_variants.py``). On PoCL (atomics, no loop budget)
privatized beat the atomic variant 1.2-1.7x at 65,536-262,144 values (f32 262,144: 0.76 vs
1.24 ms), so it is the default there too; on lavapipe the atomics stay faster (f32 65,536:
2.3 vs 3.2 ms: its loop budget costs the privatized variant a separate zero-fill launch).
The tile count comes from the candidate option ``tiles`` (else the backend's thread count),
and the launch is spread with idle lanes so that the CPU thread pool gives every thread a
tile (as ``sort_radix``).

Under a loop budget (``max_loop_iterations``, lavapipe: 65535 per work-item) the slices are
zero-filled by a separate launch, each tile walks at most the budget of values and there
are at most the budget of tiles; a problem that needs more raises ``CapabilityError``.
"""

from __future__ import annotations

import functools
import math
import os

import numpy as np
from accy.errors import CapabilityError
from accy.families import (
    Candidate,
    Plan,
    backend_object,
    host_like,
    loop_budget,
    tile_geometry,
)
from accy.kernel import KernelBuilder, call, where

from accy_kernels._common import ceil_div, fill_kernel, groups_for
from accy_kernels.gather_direct import normalized_index, raise_flagged

__all__ = ["HOST_BLOCK", "HOST_LANES", "MAX_SCRATCH_ELEMS", "backend_threads", "choose_tiles",
           "histogram_kernel", "lane_device", "plan_privatized", "reduce_kernel",
           "rows_kernel", "run", "worthwhile", "worthwhile_without_atomics"]

#: the largest scratch (tiles x output elements) the variant allocates by default
MAX_SCRATCH_ELEMS = 1 << 24
TILE_WG = 64


def backend_threads(backend) -> int:
    """The number of threads a host-memory backend runs a launch on (else the CPU count)."""
    pool = getattr(backend_object(backend), "pool", None)
    n = getattr(pool, "num_threads", None)
    return int(n) if n else (os.cpu_count() or 1)


def choose_tiles(backend, candidate: Candidate, size: int, total: int) -> int:
    """Tile count: the candidate's ``tiles`` option, else one per backend thread (CPU) or
    256 (elsewhere); never more tiles than values, nor a scratch above ``MAX_SCRATCH_ELEMS``
    (at least one tile). Under a loop budget (``max_loop_iterations``) there are enough
    tiles that each walks at most the budget, and at most the budget (the reduce loop).

    Raises:
        CapabilityError: the budget needs more tiles than the scratch limit allows.
    """
    be = backend_object(backend)
    want = candidate.option("tiles", None)
    if want is None:
        want = backend_threads(be) if host_like(be) or lane_device(be) else 256
    cap = max(1, MAX_SCRATCH_ELEMS // max(1, size))
    tiles = max(1, min(int(want), max(1, total), cap))
    budget = loop_budget(be)
    if budget is not None:
        budget -= 1  # a loop's exit test counts too
        tiles = min(tiles, budget)  # the reduce kernel loops over the tiles
    if budget is not None and total > tiles * budget:
        tiles = ceil_div(total, budget)
        if tiles > min(cap, budget):
            raise CapabilityError(
                f"scatter_add.privatized: {total} values into {size} outputs need {tiles} "
                f"private histograms of at most {budget} values each (backend {be.name!r} "
                f"ends work-items after {budget} loop iterations), more than the "
                f"{min(cap, budget)} that fit; use variant 'atomic' or 'sorted'",
                feature="max_loop_iterations", backend=be.name,
                alternative="variant 'atomic' or 'sorted'")
    return tiles


def lane_device(backend) -> bool:
    """Whether ``backend`` is a device whose work-items are SIMD lanes of a few CPU threads:
    no host memory and subgroups narrower than 32 (lavapipe: 8; PoCL reports 1; an unknown
    width counts as none), by
    capability, never by name (as the matmul heuristic, :mod:`accy_kernels.matmul_plan`)."""
    caps = backend_object(backend).capabilities()
    lanes = int(getattr(caps, "subgroup_size", 0) or 0)  # 0: not known
    return "host_memory" not in caps.features and 0 < lanes < 32


def worthwhile_without_atomics(backend, size: int, total: int) -> bool:
    """Whether privatizing beats ``sorted`` where there are no atomics for the dtype: a
    lane device (:func:`lane_device`) whose private copies (tiles x output, tiles as
    :func:`choose_tiles` picks them) are no larger than the values."""
    be = backend_object(backend)
    if total == 0 or not lane_device(be):
        return False
    try:
        tiles = choose_tiles(be, Candidate(256), size, total)
    except CapabilityError:
        return False
    return tiles * size <= min(total, MAX_SCRATCH_ELEMS)


def worthwhile(backend, size: int, total: int) -> bool:
    """Whether the default should privatize: a host-memory backend and private copies
    (tiles x output) no larger than the values themselves. One thread too: its single
    histogram takes plain loads and stores, where the atomic variant pays a locked
    read-modify-write per value (16M values into 65,536 f64 bins: 2.4x the CPU time)."""
    be = backend_object(backend)
    if not host_like(be) or total == 0:
        return False
    tiles = backend_threads(be)
    return tiles * size <= min(total, MAX_SCRATCH_ELEMS)


#: values per block of the host histogram loop (:func:`histogram_kernel` ``block``)
HOST_BLOCK = 8


@functools.cache
def histogram_kernel(dtype: str, index_dtype: str, simple: bool, zero: bool = True,
                     flag: bool = False, block: int = 1):
    """Buffers (scratch readwrite, values, indices); scalars total, m, inner, n, size, chunk,
    stride, tiles (i32). Work-item ``t * stride`` (``t < tiles``) owns tile ``t``; it zeroes
    its slice first when ``zero`` (else the slices were zero-filled by a launch before).
    ``flag``: the range check in the kernel, a ``bad`` (i32, write) buffer after
    ``scratch``; an index outside ``[-n, n)`` stores 1 there and is clamped.

    ``block > 1`` (``simple`` only; the host default :data:`HOST_BLOCK`): the values go in
    blocks of ``block``. A block loads its indices, and one sign test of the OR of
    ``j | (n - 1 - j)`` over them tells whether all are in ``[0, n)``; then it adds them
    with no per-value normalization, clamp or flag (independent loads and adds, several
    updates in flight: only equal bins serialize, through store-to-load forwarding), else
    (a negative or bad index among them) it takes the per-value path. Same order of
    additions as ``block == 1``, so the same sums bit for bit.
    """
    blocked = simple and block > 1
    kb = KernelBuilder(f"scatter_add_priv_hist_{dtype}_{index_dtype}_{int(simple)}"
                       + ("" if zero else "_nz") + ("_flag" if flag else "")
                       + (f"_b{block}" if blocked else ""), TILE_WG)
    scratch = kb.buffer("scratch", dtype, "readwrite")
    bad = kb.buffer("bad", "i32", "write") if flag else None
    values = kb.buffer("values", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    total, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n32, size = kb.scalar("n", "i32"), kb.scalar("size", "i32")
    chunk, stride, tiles = kb.scalar("chunk", "i32"), kb.scalar("stride", "i32"), \
        kb.scalar("tiles", "i32")
    n = kb.let("n64", n32.cast("i64"))
    g = kb.global_id()
    with kb.if_((g % stride) == 0):
        t = kb.let("t", g / stride)
        with kb.if_(t < tiles):
            base = kb.let("base", t.cast("i64") * size.cast("i64"))
            if zero:
                with kb.for_("b", 0, size) as b:
                    kb.store(scratch, base + b.cast("i64"), kb.const(0, dtype))
            start = kb.let("start", t * chunk)
            stop = kb.let("stop", where(chunk < total - start, start + chunk, total))
            # the range check: an OR of every value's miss in a register, stored once after
            # the loop (a store in the loop was a branch per value)
            miss = kb.let("miss", kb.const(0, "i32")) if bad is not None else None

            def index(raw):
                idx = kb.let(kb.fresh("idx"), normalized_index(raw.cast("i64"), n, "raise"))
                if bad is None:
                    return idx
                kb.assign(miss, miss | where((idx < 0) | (idx >= n), 1, 0))
                return kb.let(kb.fresh("idx_in"), call("min", call("max", idx, 0), n - 1))

            def add_checked(i, raw):
                tgt = kb.let(kb.fresh("tgt"), base + index(raw))
                kb.store(scratch, tgt, scratch[tgt] + values[i])

            tail = start
            if blocked:
                blocks = kb.let("blocks", (stop - start) / block)
                with kb.for_("q", 0, blocks) as q:
                    # i64 positions: constant offsets from one base (i32 ones were
                    # sign-extended one by one)
                    i0 = kb.let("i0", (start + q * block).cast("i64"))
                    raws = [kb.let(f"j{u}", indices[i0 + u].cast("i64")) for u in range(block)]
                    # j in [0, n) <=> j >= 0 and n - 1 - j >= 0: the sign of their OR
                    span = raws[0] | (n - 1 - raws[0])
                    for j in raws[1:]:
                        span = span | j | (n - 1 - j)
                    with kb.if_(kb.let("span", span) >= 0):
                        for u, j in enumerate(raws):
                            tgt = kb.let(f"tgt{u}", base + j)
                            kb.store(scratch, tgt, scratch[tgt] + values[i0 + u])
                    with kb.else_():  # rare: a loop keeps the kernel (and its text) small
                        with kb.for_("u", 0, block) as u:
                            i = kb.let("iu", i0 + u.cast("i64"))
                            add_checked(i, indices[i])
                tail = kb.let("tail", start + blocks * block)
            with kb.for_("i", tail, stop) as i:
                if simple:
                    add_checked(i, indices[i])
                else:
                    mi = m * inner
                    o = kb.let("o", (i / mi).cast("i64"))
                    r = kb.let("r", i % mi)
                    j = kb.let("j", r / inner)
                    k = kb.let("k", (r % inner).cast("i64"))
                    idx = index(indices[j])
                    tgt = kb.let("tgt", base + (o * n + idx) * inner.cast("i64") + k)
                    kb.store(scratch, tgt, scratch[tgt] + values[i])
            if bad is not None:
                with kb.if_(miss != 0):
                    kb.store(bad, 0, 1)
    return kb.build()


@functools.cache
def rows_kernel(dtype: str, index_dtype: str, flag: bool = False):
    """The host histogram kernel along an axis: the values as ``rows = outer * m`` rows of
    ``inner`` contiguous elements, row ``(o, j)`` added to output row ``o * n + indices[j]``.
    Buffers and scalars as :func:`histogram_kernel` (``zero``), but ``total`` counts rows
    and ``chunk`` is rows per tile. One range check and no division per row (``o`` and
    ``j`` are counters carried along the tile); the row's ``inner`` adds are one contiguous
    loop (SIMD loads, adds and stores). Per output element the values are added in the
    same order as :func:`histogram_kernel` (increasing position within a tile)."""
    kb = KernelBuilder(f"scatter_add_priv_rows_{dtype}_{index_dtype}" + ("_flag" if flag else ""),
                       TILE_WG)
    scratch = kb.buffer("scratch", dtype, "readwrite")
    bad = kb.buffer("bad", "i32", "write") if flag else None
    values = kb.buffer("values", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    rows, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n32, size = kb.scalar("n", "i32"), kb.scalar("size", "i32")
    chunk, stride, tiles = kb.scalar("chunk", "i32"), kb.scalar("stride", "i32"), \
        kb.scalar("tiles", "i32")
    n = kb.let("n64", n32.cast("i64"))
    width = kb.let("width", inner.cast("i64"))
    g = kb.global_id()
    with kb.if_((g % stride) == 0):
        t = kb.let("t", g / stride)
        with kb.if_(t < tiles):
            base = kb.let("base", t.cast("i64") * size.cast("i64"))
            with kb.for_("b", 0, size) as b:
                kb.store(scratch, base + b.cast("i64"), kb.const(0, dtype))
            start = kb.let("start", t * chunk)
            stop = kb.let("stop", where(chunk < rows - start, start + chunk, rows))
            o = kb.let("o", (start / m).cast("i64"))
            j = kb.let("j", start % m)
            miss = kb.let("miss", kb.const(0, "i32")) if bad is not None else None
            with kb.for_("row", start, stop) as row:
                idx = kb.let("idx", normalized_index(indices[j].cast("i64"), n, "raise"))
                if bad is not None:
                    kb.assign(miss, miss | where((idx < 0) | (idx >= n), 1, 0))
                    idx = kb.let("idx_in", call("min", call("max", idx, 0), n - 1))
                tgt = kb.let("tgt", base + (o * n + idx) * width)
                src = kb.let("src", row.cast("i64") * width)
                with kb.for_("k", 0, inner) as k:
                    k64 = k.cast("i64")
                    kb.store(scratch, tgt + k64, scratch[tgt + k64] + values[src + k64])
                kb.assign(j, j + 1)
                kb.assign(o, where(j == m, o + 1, o))
                kb.assign(j, where(j == m, 0, j))
            if bad is not None:
                with kb.if_(miss != 0):
                    kb.store(bad, 0, 1)
    return kb.build()


#: consecutive outputs per work-item of the host reduce kernel (one 256-bit vector of f64)
HOST_LANES = 4


@functools.cache
def reduce_kernel(dtype: str, has_dst: bool, workgroup_size: int, lanes: int = 1):
    """Buffers (out write, [dst read,] scratch read); scalars size, tiles (i32):
    ``out[e] = dst[e] (or 0) + scratch[0 * size + e] + scratch[1 * size + e] + ...``.

    ``lanes > 1`` (host: :data:`HOST_LANES`): work-item ``g`` sums outputs
    ``[g * lanes, g * lanes + lanes)`` in independent accumulators (SIMD loads and adds;
    the last work-item of a size that is no multiple takes them one by one); same order of
    additions per output."""
    kb = KernelBuilder(f"scatter_add_priv_reduce_{dtype}_{int(has_dst)}_wg{workgroup_size}"
                       + (f"_l{lanes}" if lanes > 1 else ""), workgroup_size)
    out = kb.buffer("out", dtype, "write")
    dst = kb.buffer("dst", dtype, "read") if has_dst else None
    scratch = kb.buffer("scratch", dtype, "read")
    size, tiles = kb.scalar("size", "i32"), kb.scalar("tiles", "i32")
    g = kb.global_id()
    size64 = kb.let("size64", size.cast("i64"))

    def outputs(e0, count: int) -> None:
        """Sum outputs ``e0 .. e0 + count - 1`` (i64), one accumulator each."""
        accs = [kb.let(kb.fresh("acc"), dst[e0 + v] if dst is not None
                       else kb.const(0, dtype)) for v in range(count)]
        with kb.for_("t", 0, tiles) as t:
            row = kb.let("row", t.cast("i64") * size64 + e0)
            for v, acc in enumerate(accs):
                kb.assign(acc, acc + scratch[row + v])
        for v, acc in enumerate(accs):
            kb.store(out, e0 + v, acc)

    if lanes <= 1:
        with kb.if_(g < size):
            outputs(g.cast("i64"), 1)
        return kb.build()
    e0 = kb.let("e0", g.cast("i64") * lanes)
    with kb.if_(e0 + lanes <= size64):
        outputs(e0, lanes)
    with kb.else_():
        with kb.for_("v", 0, lanes) as v:
            e = kb.let("e", e0 + v.cast("i64"))
            with kb.if_(e < size64):
                outputs(e, 1)
    return kb.build()


def tile_launch(backend, tiles: int) -> tuple[int, int]:
    """``(groups, stride)`` of the histogram launch: on a host backend, enough idle lanes that
    the pool gives every thread its tiles (:func:`accy.families.tile_geometry` spaces the
    tiles over :func:`accy.families.split_lanes` lanes)."""
    return tile_geometry(backend, tiles, TILE_WG)


def run(backend, candidate: Candidate, dst: np.ndarray | None, indices: np.ndarray,
        values: np.ndarray, axis: int, dtype: str, index_dtype: str,
        shape: tuple[int, ...] | None = None, mode: str = "raise",
        range_checked: bool = False) -> np.ndarray:
    """Return ``dst`` (or zeros of ``shape`` when ``dst`` is None) plus the scattered sums.

    Indices are range-checked inside the histogram kernel unless the caller did
    (``range_checked``); an out-of-range one raises ``IndexOutOfRangeError`` after the call.
    """
    shape = dst.shape if dst is not None else tuple(shape or ())
    size = int(np.prod(shape, dtype=np.int64))
    n, m, total = shape[axis], indices.size, values.size
    if size == 0:
        return np.zeros(shape, values.dtype) if dst is None else dst.copy()
    be = backend_object(backend)
    plan = Plan("scatter_add.privatized")
    out = plan.output(dtype, size)
    fused = not range_checked and total > 0
    bad = plan.output("i32", 1) if fused else None
    d = plan.param(dst, dtype) if dst is not None else None
    v = plan.param(values, dtype) if total else None
    ix = plan.param(indices, index_dtype) if total else None
    plan_privatized(plan, be, candidate, out, d, v, ix, bad, shape, axis, dtype, index_dtype,
                    total, m)
    result, *flag = plan.run(be)
    raise_flagged(flag, indices, n, "scatter_add")
    return result.reshape(shape)


def plan_privatized(plan, backend, candidate: Candidate, out, dst, values, indices, bad,
                    shape: tuple[int, ...], axis: int, dtype: str, index_dtype: str,
                    total: int, m: int) -> None:
    """Append the privatized launches to ``plan`` (a :class:`accy.families.Plan` or the IR
    lowering's plan): ``out`` = ``dst`` (a slot, or None: zeros) plus the sums of ``values``
    (``total`` elements, shaped ``(*pre, *idx, *post)``) at ``indices`` (``m``) along
    ``axis`` of ``shape``; ``bad`` (an i32 slot, or None: range checked before) gets the
    range-check flag. ``shape`` must not be empty.

    Raises:
        CapabilityError: the private histograms cannot be sized under the loop budget.
    """
    size = math.prod(shape)
    outer, inner, n = math.prod(shape[:axis]), math.prod(shape[axis + 1:]), shape[axis]
    wg = candidate.workgroup_size
    tiles = choose_tiles(backend, candidate, size, total)
    chunk = max(1, ceil_div(total, tiles))
    scratch = plan.temp(dtype, tiles * size)
    slots = [out] + ([dst] if dst is not None else [])
    if total:
        groups, stride = tile_launch(backend, tiles)
        zero = loop_budget(backend) is None  # else the slices' zeroing loop would count too
        if not zero:
            plan.launch(fill_kernel(dtype, wg), groups_for(tiles * size, wg), [scratch],
                        [("i32", tiles * size), (dtype, 0)])
        host, simple = host_like(backend), outer == 1 and inner == 1
        bufs = [scratch, *([bad] if bad is not None else []), values, indices]
        if host and not simple:  # whole rows of inner elements, no division per value
            rows = outer * m
            plan.launch(rows_kernel(dtype, index_dtype, bad is not None), groups, bufs,
                        [("i32", rows), ("i32", m), ("i32", inner), ("i32", n), ("i32", size),
                         ("i32", max(1, ceil_div(rows, tiles))), ("i32", stride),
                         ("i32", tiles)])
        else:
            plan.launch(histogram_kernel(dtype, index_dtype, simple, zero, bad is not None,
                                         HOST_BLOCK if host else 1),
                        groups, bufs,
                        [("i32", total), ("i32", m), ("i32", inner), ("i32", n),
                         ("i32", size), ("i32", chunk), ("i32", stride), ("i32", tiles)])
    else:
        tiles = 0
    lanes = HOST_LANES if host_like(backend) else 1
    plan.launch(reduce_kernel(dtype, dst is not None, wg, lanes),
                groups_for(ceil_div(size, lanes), wg),
                slots + [scratch], [("i32", size), ("i32", tiles)])
