"""``scatter.last_write``: ``out = dst.copy(); out[..., indices, ...] = values`` along ``axis``.

Duplicate indices are resolved deterministically, independent of the backend and of the
launch geometry: **the write from the last position in ``indices`` (row-major order) wins**,
as with sequential numpy assignment ``out[indices] = values``. Three phases:

1. copy ``dst`` into the output;
2. ``winner[i] = max { j : idx(indices[j]) == i }`` with ``atomic max`` over a buffer filled
   with -1 (one work-item per index);
3. one work-item per value element writes ``values[o, j, k]`` only when
   ``winner[idx(indices[j])] == j`` — exactly one write per target, no racing stores.

Index handling as ``gather.direct`` (``raise`` checked on the host, ``wrap``, ``clip``).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder

from accy_kernels._common import copy_kernel, fill_kernel, groups_for
from accy_kernels.gather_direct import normalized_index

__all__ = ["run", "winner_kernel", "write_kernel"]


@functools.cache
def winner_kernel(index_dtype: str, mode: str, workgroup_size: int):
    """Buffers (winner: i32 readwrite, indices); scalars m (i32), n (i32)."""
    kb = KernelBuilder(f"scatter_winner_{index_dtype}_{mode}_wg{workgroup_size}",
                       workgroup_size)
    winner = kb.buffer("winner", "i32", "readwrite")
    indices = kb.buffer("indices", index_dtype, "read")
    m, n = kb.scalar("m", "i32"), kb.scalar("n", "i32").cast("i64")
    j = kb.global_id()
    with kb.if_(j < m):
        idx = kb.let("idx", normalized_index(indices[j].cast("i64"), n, mode))
        kb.atomic("max", winner, idx, j)
    return kb.build()


@functools.cache
def write_kernel(dtype: str, index_dtype: str, mode: str, workgroup_size: int):
    """Buffers (out readwrite, values, indices, winner); scalars total, m, inner, n (i32)."""
    kb = KernelBuilder(f"scatter_write_{dtype}_{index_dtype}_{mode}_wg{workgroup_size}",
                       workgroup_size)
    out = kb.buffer("out", dtype, "readwrite")
    values = kb.buffer("values", dtype, "read")
    indices = kb.buffer("indices", index_dtype, "read")
    winner = kb.buffer("winner", "i32", "read")
    total, m, inner = kb.scalar("total", "i32"), kb.scalar("m", "i32"), kb.scalar("inner", "i32")
    n = kb.scalar("n", "i32").cast("i64")
    g = kb.global_id()
    with kb.if_(g < total):
        mi = m * inner
        o = kb.let("o", (g / mi).cast("i64"))
        r = kb.let("r", g % mi)
        j = kb.let("j", r / inner)
        k = kb.let("k", (r % inner).cast("i64"))
        idx = kb.let("idx", normalized_index(indices[j].cast("i64"), n, mode))
        with kb.if_(winner[idx] == j):
            kb.store(out, (o * n + idx) * inner.cast("i64") + k, values[g])
    return kb.build()


def run(backend, candidate: Candidate, dst: np.ndarray, indices: np.ndarray,
        values: np.ndarray, axis: int, mode: str, dtype: str, index_dtype: str) -> np.ndarray:
    """Return a copy of ``dst`` with ``values`` scattered (``values`` already broadcast to
    ``dst.shape[:axis] + indices.shape + dst.shape[axis+1:]``)."""
    shape = dst.shape
    inner = int(np.prod(shape[axis + 1:], dtype=np.int64))
    n, m = shape[axis], indices.size
    wg = candidate.workgroup_size
    plan = Plan("scatter.last_write")
    out = plan.output(dtype, dst.size)
    d = plan.param(dst, dtype)
    v = plan.param(values, dtype)
    ix = plan.param(indices, index_dtype)
    winner = plan.temp("i32", n)
    plan.launch(copy_kernel(dtype, wg), groups_for(dst.size, wg), [out, d], [("i32", dst.size)])
    plan.launch(fill_kernel("i32", wg), groups_for(n, wg), [winner], [("i32", n), ("i32", -1)])
    plan.launch(winner_kernel(index_dtype, mode, wg), groups_for(m, wg), [winner, ix],
                [("i32", m), ("i32", n)])
    plan.launch(write_kernel(dtype, index_dtype, mode, wg), groups_for(values.size, wg),
                [out, v, ix, winner],
                [("i32", values.size), ("i32", m), ("i32", inner), ("i32", n)])
    (result,) = plan.run(backend)
    return result.reshape(shape)
