"""``scatter_add.atomic``: ``out = dst.copy(); numpy.add.at(out, (..., indices, ...), values)``.

One work-item per value element adds it to its target with an atomic add, so duplicate
indices accumulate. Integer results are exact; float sums are accumulated in an order that
depends on scheduling (the result can differ in the last bits between runs, as any parallel
float reduction). Floats need the backend feature ``float_atomics``.

Along an axis on a host backend a work-item adds a block of one row instead
(:func:`rows_add_kernel`: no division per value): 65,536 rows of 64 f32 into [262144, 64],
the add launch 155-175 -> 66-72 ms (2 threads, load 5). Passes over memory: ``dst``
copied once (read and write), the values and indices read once, the output updated in
place: the minimum.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan, host_like
from accy.kernel import KernelBuilder, call

from accy_kernels._common import ceil_div, copy_kernel, fill_kernel, groups_for
from accy_kernels.gather_direct import axis_position, normalized_index, raise_flagged

__all__ = ["ROW_BLOCK", "add_kernel", "plan_add", "rows_add_kernel", "run"]

#: elements of one row per work-item of :func:`rows_add_kernel` at most
ROW_BLOCK = 64


@functools.cache
def add_kernel(dtype: str, index_dtype: str, mode: str, simple: bool, workgroup_size: int,
               flag: bool = False):
    """Buffers (out readwrite, values, indices); scalars total, m, inner (i32), n (i32).
    ``flag``: the ``raise``-mode range check in the kernel, a ``bad`` (i32, write) buffer
    after ``out`` (see :func:`accy_kernels.gather_direct.axis_position`)."""
    kb = KernelBuilder(
        f"scatter_add_{dtype}_{index_dtype}_{mode}_{int(simple)}_wg{workgroup_size}"
        + ("_flag" if flag else ""), workgroup_size)
    out = kb.buffer("out", dtype, "readwrite")
    bad = kb.buffer("bad", "i32", "write") if flag else None
    values = kb.buffer("values", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    total, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n = kb.scalar("n", "i32").cast("i64")
    g = kb.global_id()
    with kb.if_(g < total):
        kb.atomic_add(out, axis_position(kb, g, indices, m, inner, n, mode, simple, bad),
                      values[g])
    return kb.build()


@functools.cache
def rows_add_kernel(dtype: str, index_dtype: str, block: int, workgroup_size: int,
                    flag: bool = False):
    """The host add kernel along an axis: buffers as :func:`add_kernel`; scalars items,
    m, inner, n, kblocks (i32). The values are ``outer * m`` rows of ``inner`` elements;
    work-item ``g`` adds elements ``[q * block, q * block + block)`` (within ``inner``) of
    row ``g / kblocks`` (``q = g % kblocks``) to output row ``o * n + indices[j]``: the
    divisions and the range check once per work-item, not per value (:func:`add_kernel`
    divides four times per value). ``block`` is static, so the pool splits by work."""
    kb = KernelBuilder(f"scatter_add_rows_{dtype}_{index_dtype}_b{block}_wg{workgroup_size}"
                       + ("_flag" if flag else ""), workgroup_size)
    out = kb.buffer("out", dtype, "readwrite")
    bad = kb.buffer("bad", "i32", "write") if flag else None
    values = kb.buffer("values", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    items, m, inner = kb.scalar("items", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n = kb.let("n64", kb.scalar("n", "i32").cast("i64"))
    kblocks = kb.scalar("kblocks", "i32")
    g = kb.global_id()
    with kb.if_(g < items):
        row = kb.let("row", g / kblocks)
        k0 = kb.let("k0", (g % kblocks) * block)
        o = kb.let("o", (row / m).cast("i64"))
        idx = kb.let("idx", normalized_index(indices[row % m].cast("i64"), n, "raise"))
        if bad is not None:
            with kb.if_((idx < 0) | (idx >= n)):
                kb.store(bad, 0, 1)
            idx = kb.let("idx_in", call("min", call("max", idx, 0), n - 1))
        width = kb.let("width", inner.cast("i64"))
        tgt = kb.let("tgt", (o * n + idx) * width + k0.cast("i64"))
        src = kb.let("src", row.cast("i64") * width + k0.cast("i64"))
        with kb.for_("k", 0, block) as k:
            with kb.if_(k0 + k < inner):
                kb.atomic_add(out, tgt + k.cast("i64"), values[src + k.cast("i64")])
    return kb.build()


def plan_add(plan, host: bool, slots: list, dtype: str, index_dtype: str,
             dims: tuple[int, int, int, int], wg: int, flag: bool = False,
             mode: str = "raise") -> None:
    """Append the add launch to ``plan`` (a :class:`accy.families.Plan` or the IR
    lowering's plan): ``slots`` are (out, [bad,] values, indices); ``dims`` the
    ``(outer, m, inner, n)`` of the values ``(outer, m, inner)`` and the output
    ``(outer, n, inner)``. On a ``host`` backend an axis takes :func:`rows_add_kernel`,
    else one work-item per value (:func:`add_kernel`); nothing when there are no values."""
    outer, m, inner, n = dims
    total = outer * m * inner
    if total == 0:
        return
    if host and (outer > 1 or inner > 1) and mode == "raise":
        block = min(ROW_BLOCK, inner)
        kblocks = ceil_div(inner, block)
        items = outer * m * kblocks
        plan.launch(rows_add_kernel(dtype, index_dtype, block, wg, flag),
                    groups_for(items, wg), slots,
                    [("i32", items), ("i32", m), ("i32", inner), ("i32", n),
                     ("i32", kblocks)])
        return
    plan.launch(add_kernel(dtype, index_dtype, mode, outer == 1 and inner == 1, wg, flag),
                groups_for(total, wg), slots,
                [("i32", total), ("i32", m), ("i32", inner), ("i32", n)])


def run(backend, candidate: Candidate, dst: np.ndarray | None, indices: np.ndarray,
        values: np.ndarray, axis: int, dtype: str, index_dtype: str,
        shape: tuple[int, ...] | None = None, mode: str = "raise",
        range_checked: bool = False) -> np.ndarray:
    """Return ``dst`` (or zeros of ``shape`` when ``dst`` is None) plus the scattered sums.

    ``raise``-mode indices are range-checked inside the add kernel unless the caller did
    (``range_checked``); an out-of-range one raises ``IndexOutOfRangeError`` after the call.
    """
    shape = dst.shape if dst is not None else tuple(shape or ())
    size = int(np.prod(shape, dtype=np.int64))
    outer = int(np.prod(shape[:axis], dtype=np.int64))
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    n, m = shape[axis], indices.size
    wg = candidate.workgroup_size
    plan = Plan("scatter_add.atomic")
    out = plan.output(dtype, size)
    if dst is not None:
        d = plan.param(dst, dtype)
        plan.launch(copy_kernel(dtype, wg), groups_for(size, wg), [out, d], [("i32", size)])
    else:
        plan.launch(fill_kernel(dtype, wg), groups_for(size, wg), [out],
                    [("i32", size), (dtype, 0)])
    v = plan.param(values, dtype)
    ix = plan.param(indices, index_dtype)
    fused = mode == "raise" and not range_checked and values.size > 0
    bad = [plan.output("i32", 1)] if fused else []
    plan_add(plan, host_like(backend), [out, *bad, v, ix], dtype, index_dtype,
             (outer, m, inner, n), wg, fused, mode)
    result, *flag = plan.run(backend)
    raise_flagged(flag, indices, n, "scatter_add")
    return result.reshape(shape)
