"""``gather.direct``: ``numpy.take(src, indices, axis, mode)``, one work-item per output.

The source is viewed as ``(outer, n, inner)`` around ``axis`` and the output as
``(outer, m, inner)`` with ``m = indices.size``; work-item ``g`` writes output element ``g``
(row-major) from ``src[o, idx(indices[j]), k]``. Index handling as numpy: ``raise`` mode
indices were range-checked on the host before launch (negative ones count from the end),
``wrap`` takes them modulo ``n``, ``clip`` clamps to ``[0, n - 1]`` (negative → 0).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import E, KernelBuilder, call, where

from accy_kernels._common import groups_for

__all__ = ["axis_position", "gather_kernel", "normalized_index", "run"]


def normalized_index(idx: E, n: E, mode: str) -> E:
    """Return the in-range i64 index for ``idx`` (i64) on an axis of length ``n`` (i64)."""
    if mode == "wrap":
        return (idx % n + n) % n
    if mode == "clip":
        return call("min", call("max", idx, 0), n - 1)
    return where(idx < 0, idx + n, idx)


@functools.cache
def gather_kernel(dtype: str, index_dtype: str, mode: str, simple: bool, workgroup_size: int):
    """Build the gather kernel: buffers (out, src, indices); scalars total, m, inner (i32),
    n (i32). ``simple`` drops the outer/inner arithmetic (1-D source)."""
    kb = KernelBuilder(f"gather_{dtype}_{index_dtype}_{mode}_{int(simple)}_wg{workgroup_size}",
                       workgroup_size)
    out, src = kb.buffer("out", dtype, "write"), kb.buffer("src", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    total, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n = kb.scalar("n", "i32").cast("i64")
    g = kb.global_id()
    with kb.if_(g < total):
        kb.store(out, g, src[axis_position(kb, g, indices, m, inner, n, mode, simple)])
    return kb.build()


def axis_position(kb: KernelBuilder, g: E, indices, m: E, inner: E, n: E, mode: str,
                  simple: bool) -> E:
    """Element of the ``(outer, n, inner)`` tensor that element ``g`` of the
    ``(outer, m, inner)`` view addresses through ``indices`` (shared by gather and the
    scatter-add kernels). ``n`` is i64; the result is i64."""
    if simple:
        return kb.let("idx", normalized_index(indices[g].cast("i64"), n, mode))
    mi = m * inner
    o = kb.let("o", (g / mi).cast("i64"))
    r = kb.let("r", g % mi)
    j = kb.let("j", r / inner)
    k = kb.let("k", (r % inner).cast("i64"))
    idx = kb.let("idx", normalized_index(indices[j].cast("i64"), n, mode))
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
    kernel = gather_kernel(dtype, index_dtype, mode, outer == 1 and inner == 1, wg)
    plan.launch(kernel, groups_for(total, wg), [out, s, ix],
                [("i32", total), ("i32", m), ("i32", inner), ("i32", n)])
    (result,) = plan.run(backend)
    return result.reshape(out_shape)
