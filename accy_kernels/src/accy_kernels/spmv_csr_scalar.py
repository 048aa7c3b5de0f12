"""``spmv.csr_scalar``: CSR sparse matrix–vector product, one work-item per row.

Work-item ``r`` computes ``y[r] = sum(data[j] * x[indices[j]] for j in
range(indptr[r], indptr[r + 1]))`` sequentially (Bell & Garland, "Implementing Sparse
Matrix-Vector Multiplication on Throughput-Oriented Processors", SC'09: "CSR scalar").
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder

from accy_kernels._common import groups_for
from accy_kernels.sparse_api import csr_arrays

__all__ = ["csr_scalar_kernel", "run"]


@functools.cache
def csr_scalar_kernel(dtype: str, workgroup_size: int):
    """Buffers (y, indptr: i32, indices: i32, data, x); scalar n_rows (i32)."""
    kb = KernelBuilder(f"spmv_csr_scalar_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "write")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
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
    plan.launch(csr_scalar_kernel(dtype, wg), groups_for(n_rows, wg), [y, *slots],
                [("i32", n_rows)])
    (result,) = plan.run(backend)
    return result
