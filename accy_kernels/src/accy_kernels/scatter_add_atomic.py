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
from accy_kernels.gather_direct import axis_position

__all__ = ["add_kernel", "run"]


@functools.cache
def add_kernel(dtype: str, index_dtype: str, mode: str, simple: bool, workgroup_size: int):
    """Buffers (out readwrite, values, indices); scalars total, m, inner (i32), n (i32)."""
    kb = KernelBuilder(
        f"scatter_add_{dtype}_{index_dtype}_{mode}_{int(simple)}_wg{workgroup_size}",
        workgroup_size)
    out = kb.buffer("out", dtype, "readwrite")
    values = kb.buffer("values", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    total, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n = kb.scalar("n", "i32").cast("i64")
    g = kb.global_id()
    with kb.if_(g < total):
        kb.atomic_add(out, axis_position(kb, g, indices, m, inner, n, mode, simple), values[g])
    return kb.build()


def run(backend, candidate: Candidate, dst: np.ndarray | None, indices: np.ndarray,
        values: np.ndarray, axis: int, dtype: str, index_dtype: str,
        shape: tuple[int, ...] | None = None, mode: str = "raise") -> np.ndarray:
    """Return ``dst`` (or zeros of ``shape`` when ``dst`` is None) plus the scattered sums."""
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
    plan.launch(add_kernel(dtype, index_dtype, mode, simple, wg), groups_for(values.size, wg),
                [out, v, ix], [("i32", values.size), ("i32", m), ("i32", inner), ("i32", n)])
    (result,) = plan.run(backend)
    return result.reshape(shape)
