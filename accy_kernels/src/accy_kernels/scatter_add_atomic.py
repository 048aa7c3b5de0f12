"""``scatter_add.atomic``: ``out = dst.copy(); numpy.add.at(out, (..., indices, ...), values)``.

One work-item per value element adds it to its target with an atomic add, so duplicate
indices accumulate. Integer results are exact; float sums are accumulated in an order that
depends on scheduling (the result can differ in the last bits between runs, as any parallel
float reduction). Floats need the backend feature ``float_atomics``.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder

from accy_kernels._common import copy_kernel, fill_kernel, groups_for
from accy_kernels.gather_direct import axis_position, raise_flagged

__all__ = ["add_kernel", "run"]


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
    simple = outer == 1 and inner == 1
    fused = mode == "raise" and not range_checked and values.size > 0
    bad = [plan.output("i32", 1)] if fused else []
    plan.launch(add_kernel(dtype, index_dtype, mode, simple, wg, fused),
                groups_for(values.size, wg), [out, *bad, v, ix],
                [("i32", values.size), ("i32", m), ("i32", inner), ("i32", n)])
    result, *flag = plan.run(backend)
    raise_flagged(flag, indices, n, "scatter_add")
    return result.reshape(shape)
