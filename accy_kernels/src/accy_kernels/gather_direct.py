"""``gather.direct``: ``numpy.take(src, indices, axis, mode)``, one work-item per output.

The source is viewed as ``(outer, n, inner)`` around ``axis`` and the output as
``(outer, m, inner)`` with ``m = indices.size``; work-item ``g`` writes output element ``g``
(row-major) from ``src[o, idx(indices[j]), k]``. Index handling as numpy: ``raise`` mode
indices are range-checked inside the kernel (negative ones count from the end; an
out-of-range one sets a flag the host reads after the launch, then names the first bad
position as the host check did), ``wrap`` takes them modulo ``n``, ``clip`` clamps to
``[0, n - 1]`` (negative → 0).

Passes over memory: 1 (minimum 1) — one read of the indices and of the gathered source
elements, one write of the output (``raise`` mode: the range check rides in the same pass;
it was a second host pass over the indices). The output is written in place (a fresh
zeroed array: on the host, untouched pages that the kernel's stores fault in, no fill pass).

On host-memory backends a 1-D gather runs :func:`gather_tile_kernel` instead: a few long
work-items (four tiles per CPU thread) whose loop LLVM vectorizes; the one-work-item-per-
output kernel's guard and per-item flag store kept it scalar.
"""

from __future__ import annotations

import functools
import os

import numpy as np
from accy.errors import InternalError
from accy.families import Candidate, Plan, check_indices, host_like, split_lanes
from accy.kernel import E, KernelBuilder, call, where

from accy_kernels._common import ceil_div, groups_for

__all__ = ["axis_position", "gather_kernel", "gather_tile_kernel", "normalized_index",
           "raise_flagged", "run"]

TILE_WORKGROUP = 64


def normalized_index(idx: E, n: E, mode: str) -> E:
    """Return the in-range i64 index for ``idx`` (i64) on an axis of length ``n`` (i64)."""
    if mode == "wrap":
        return (idx % n + n) % n
    if mode == "clip":
        return call("min", call("max", idx, 0), n - 1)
    return where(idx < 0, idx + n, idx)


@functools.cache
def gather_kernel(dtype: str, index_dtype: str, mode: str, simple: bool, workgroup_size: int,
                  flag: bool = False):
    """Build the gather kernel: buffers (out, src, indices); scalars total, m, inner (i32),
    n (i32). ``simple`` drops the outer/inner arithmetic (1-D source). ``flag`` (``raise``
    mode): the range check in the kernel — buffers (out, bad, src, indices), a work-item
    whose index is out of range stores 1 into ``bad[0]`` and loads a clamped element."""
    kb = KernelBuilder(f"gather_{dtype}_{index_dtype}_{mode}_{int(simple)}_wg{workgroup_size}"
                       + ("_flag" if flag else ""), workgroup_size)
    out = kb.buffer("out", dtype, "write")
    bad = kb.buffer("bad", "i32", "write") if flag else None
    src = kb.buffer("src", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    total, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n = kb.scalar("n", "i32").cast("i64")
    g = kb.global_id()
    with kb.if_(g < total):
        kb.store(out, g, src[axis_position(kb, g, indices, m, inner, n, mode, simple, bad)])
    return kb.build()


@functools.cache
def gather_tile_kernel(dtype: str, index_dtype: str, mode: str, flag: bool):
    """The host-memory form of the 1-D gather: one work-item per tile of ``chunk``
    consecutive outputs, walked by one loop (LLVM vectorizes it: index loads, the
    normalization, the range check as an OR reduction into a register, AVX2 gathers, vector
    stores). Work-item ``t * lane_stride`` takes tile ``t``, the others idle (as the radix
    sort's tiles). Buffers (out, bad if ``flag``, src, indices); scalars total, n, chunk,
    lane_stride, tiles (i32). ``flag``: an out-of-range index sets ``bad[0] = 1`` once per
    tile (after its loop) and loads a clamped element."""
    kb = KernelBuilder(f"gather_tile_{dtype}_{index_dtype}_{mode}" + ("_flag" if flag else ""),
                       TILE_WORKGROUP)
    out = kb.buffer("out", dtype, "write")
    bad = kb.buffer("bad", "i32", "write") if flag else None
    src = kb.buffer("src", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    total, n32 = kb.scalar("total", "i32"), kb.scalar("n", "i32")
    chunk, stride = kb.scalar("chunk", "i32"), kb.scalar("lane_stride", "i32")
    tiles = kb.scalar("tiles", "i32")
    n = kb.let("n64", n32.cast("i64"))
    lane = kb.global_id()
    t = kb.let("t", lane / stride)
    with kb.if_((lane % stride == 0) & (t < tiles)):
        begin = kb.let("begin", t * chunk)
        end = kb.let("end", where(chunk < total - begin, begin + chunk, total))
        miss = kb.let("miss", kb.const(0, "i32")) if flag else None
        with kb.for_("j", begin, end) as j:
            idx = kb.let("idx", normalized_index(indices[j].cast("i64"), n, mode))
            if flag:
                kb.assign(miss, miss | where((idx < 0) | (idx >= n), 1, 0))
                idx = call("min", call("max", idx, 0), n - 1)
            kb.store(out, j, src[idx])
        if flag:
            with kb.if_(miss != 0):
                kb.store(bad, 0, 1)
    return kb.build()


def axis_position(kb: KernelBuilder, g: E, indices, m: E, inner: E, n: E, mode: str,
                  simple: bool, bad=None) -> E:
    """Element of the ``(outer, n, inner)`` tensor that element ``g`` of the
    ``(outer, m, inner)`` view addresses through ``indices`` (shared by gather and the
    scatter-add kernels). ``n`` is i64; the result is i64. With a ``bad`` buffer (``raise``
    mode), an index outside ``[-n, n)`` stores 1 into ``bad[0]`` and is clamped."""
    def index(raw: E) -> E:
        idx = kb.let("idx", normalized_index(raw.cast("i64"), n, mode))
        if bad is None:
            return idx
        with kb.if_((idx < 0) | (idx >= n)):
            kb.store(bad, 0, 1)
        return kb.let("idx_in", call("min", call("max", idx, 0), n - 1))

    if simple:
        return index(indices[g])
    mi = m * inner
    o = kb.let("o", (g / mi).cast("i64"))
    r = kb.let("r", g % mi)
    j = kb.let("j", r / inner)
    k = kb.let("k", (r % inner).cast("i64"))
    idx = index(indices[j])
    return (o * n + idx) * inner.cast("i64") + k


def run(backend, candidate: Candidate, src: np.ndarray, indices: np.ndarray, axis: int,
        mode: str, dtype: str, index_dtype: str) -> np.ndarray:
    """Return ``numpy.take(src, indices, axis, mode)`` computed on ``backend``.

    ``src`` has kernel dtype ``dtype``, ``indices`` ``index_dtype`` (already checked).
    """
    shape = src.shape
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    n, m = shape[axis], indices.size
    out_shape = shape[:axis] + indices.shape + shape[axis + 1:]
    total = outer * m * inner
    wg = candidate.workgroup_size
    plan = Plan("gather.direct")
    out = plan.output(dtype, total)
    s = plan.param(src, dtype)
    ix = plan.param(indices, index_dtype)
    fused = mode == "raise" and indices.size > 0
    bad = [plan.output("i32", 1)] if fused else []
    if outer == 1 and inner == 1 and total > 0 and host_like(backend):
        tiles, chunk, stride = _host_tiles(total, split_lanes(backend))
        plan.launch(gather_tile_kernel(dtype, index_dtype, mode, fused),
                    ceil_div(tiles * stride, TILE_WORKGROUP), [out, *bad, s, ix],
                    [("i32", total), ("i32", n), ("i32", chunk), ("i32", stride),
                     ("i32", tiles)])
    else:
        kernel = gather_kernel(dtype, index_dtype, mode, outer == 1 and inner == 1, wg, fused)
        plan.launch(kernel, groups_for(total, wg), [out, *bad, s, ix],
                    [("i32", total), ("i32", m), ("i32", inner), ("i32", n)])
    result, *flag = plan.run(backend)
    raise_flagged(flag, indices, n, "gather")
    return result.reshape(out_shape)


#: outputs below which the host gather runs as one tile on the calling thread
INLINE_TOTAL = 1 << 16


def _host_tiles(total: int, lanes: int) -> tuple[int, int, int]:
    """``(tiles, chunk, lane_stride)`` of the host tile gather: one tile for a small
    output, else four per CPU thread, spaced over ``lanes`` work-items so that the pool
    gives every thread its share (:func:`accy.families.split_lanes`)."""
    if total < INLINE_TOTAL:
        return 1, total, 1
    threads = os.cpu_count() or 1
    chunk = ceil_div(total, 4 * threads)
    tiles = ceil_div(total, chunk)
    return tiles, chunk, ceil_div(lanes, tiles)


def raise_flagged(flag: list[np.ndarray], indices: np.ndarray, n: int, family: str) -> None:
    """After a launch with an in-kernel range check: when its ``bad`` flag is set, raise the
    host check's ``IndexOutOfRangeError`` (it names the first bad position).

    Raises:
        IndexOutOfRangeError: an index is outside ``[-n, n)``.
        InternalError: the kernel flagged an index the host check finds in range.
    """
    if flag and flag[0][0]:
        check_indices(indices, n, family, "raise")
        raise InternalError(f"{family}: the kernel flagged an index out of range that the "
                            "host check finds in range")
