"""``spmm.csr``: CSR sparse matrix times dense row-major matrix, one work-item per output.

Work-item ``g = r * k + c`` computes ``Y[r, c] = sum(data[j] * X[indices[j], c])`` over row
``r``'s entries; neighbouring work-items read neighbouring columns of ``X`` (coalesced rows of
``X``), the row's indices are shared through the cache.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder, where

from accy_kernels._common import groups_for, launch_windows, window
from accy_kernels.sparse_api import csr_arrays, longest_row

__all__ = ["run", "spmm_kernel"]


@functools.cache
def spmm_kernel(dtype: str, workgroup_size: int):
    """Buffers (Y readwrite, indptr: i32, indices: i32, data, X); scalars total, k, skip,
    limit (i32): row entries ``[skip, skip + limit)``, continuing ``Y`` unless ``skip == 0``
    (rows longer than a loop budget take several launches, in order)."""
    kb = KernelBuilder(f"spmm_csr_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    total, k = kb.scalar("total", "i32"), kb.scalar("k", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    g = kb.global_id()
    with kb.if_(g < total):
        r = kb.let("r", g / k)
        c = kb.let("c", (g % k).cast("i64"))
        acc = kb.let("acc", where(skip == 0, kb.const(0, dtype), y[g]))
        first, last = window(kb, indptr[r], indptr[r + 1], skip, limit, "row")
        with kb.for_("j", first, last) as j:
            kb.assign(acc, acc + data[j] * x[indices[j].cast("i64") * k.cast("i64") + c])
        kb.store(y, g, acc)
    return kb.build()


def run(backend, candidate: Candidate, A, X: np.ndarray, dtype: str) -> np.ndarray:
    """Return ``A @ X`` as a dense ``(n_rows, k)`` array."""
    indptr, indices, data = csr_arrays(A, X.dtype)
    n_rows, k = A.shape[0], X.shape[1]
    total = n_rows * k
    wg = candidate.workgroup_size
    plan = Plan("spmm.csr")
    y = plan.output(dtype, total)
    slots = [plan.param(indptr, "i32"), plan.param(indices, "i32"), plan.param(data, dtype),
             plan.param(X, dtype)]
    launch_windows(plan, backend, spmm_kernel(dtype, wg), groups_for(total, wg), [y, *slots],
                   [("i32", total), ("i32", max(k, 1))], longest_row(indptr), 0, "spmm.csr")
    (result,) = plan.run(backend)
    return result.reshape(n_rows, k)
