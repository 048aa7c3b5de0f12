"""``spmv.csr_scalar``: CSR sparse matrix–vector product, one work-item per row.

Work-item ``r`` computes ``y[r] = sum(data[j] * x[indices[j]] for j in
range(indptr[r], indptr[r + 1]))`` sequentially (Bell & Garland, "Implementing Sparse
Matrix-Vector Multiplication on Throughput-Oriented Processors", SC'09: "CSR scalar").
Under a loop budget (``max_loop_iterations``, lavapipe) rows longer than the budget are
summed over several launches, each continuing the stored partial sum (same order).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder, where

from accy_kernels._common import groups_for, launch_windows, window
from accy_kernels.sparse_api import csr_arrays, longest_row

__all__ = ["csr_scalar_kernel", "run"]


@functools.cache
def csr_scalar_kernel(dtype: str, workgroup_size: int, windowed: bool = True):
    """Buffers (y readwrite, indptr: i32, indices: i32, data, x); scalars n_rows, skip,
    limit (i32): entries ``[skip, skip + limit)`` of each row, continuing ``y`` unless
    ``skip == 0`` (a row longer than a loop budget takes several launches, in order).

    ``windowed=False`` (backends without a loop budget: the prepared launch of
    :mod:`accy_kernels.spmv_fast`): every row whole, from zero, ``skip`` and ``limit``
    ignored; the same sums in the same order without the window's per-row arithmetic (a
    small matrix has 3-6 entries a row, so that arithmetic was a third of the kernel)."""
    if not windowed:
        return _whole_rows_kernel(dtype, workgroup_size)
    kb = KernelBuilder(f"spmv_csr_scalar_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    r = kb.global_id()
    with kb.if_(r < n_rows):
        acc = kb.let("acc", where(skip == 0, kb.const(0, dtype), y[r]))
        first, last = window(kb, indptr[r], indptr[r + 1], skip, limit, "row")
        with kb.for_("j", first, last) as j:
            kb.assign(acc, acc + data[j] * x[indices[j]])
        kb.store(y, r, acc)
    return kb.build()


def _whole_rows_kernel(dtype: str, workgroup_size: int):
    kb = KernelBuilder(f"spmv_csr_rows_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
    kb.scalar("skip", "i32"), kb.scalar("limit", "i32")  # the windowed kernel's signature
    r = kb.global_id()
    with kb.if_(r < n_rows):
        acc = kb.let("acc", kb.const(0, dtype))
        with kb.for_("j", indptr[r], indptr[r + 1]) as j:
            kb.assign(acc, acc + data[j] * x[indices[j]])
        kb.store(y, r, acc)
    return kb.build()


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None) -> np.ndarray:
    """Return ``A @ x`` (``A`` any scipy sparse matrix, converted to CSR on the host)."""
    indptr, indices, data = csr_arrays(A, x.dtype)
    n_rows = A.shape[0]
    wg = candidate.workgroup_size
    plan = Plan("spmv.csr_scalar")
    y = plan.output(dtype, n_rows)
    slots = [plan.param(indptr, "i32"), plan.param(indices, "i32"), plan.param(data, dtype),
             plan.param(x, dtype)]
    launch_windows(plan, backend, csr_scalar_kernel(dtype, wg), groups_for(n_rows, wg),
                   [y, *slots], [("i32", n_rows)], longest_row(indptr), 0, "spmv.csr_scalar")
    (result,) = plan.run(backend)
    return result
