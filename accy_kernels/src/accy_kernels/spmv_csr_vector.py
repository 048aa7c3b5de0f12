"""``spmv.csr_vector``: CSR sparse matrix–vector product, one work-group per row.

The ``W`` work-items of work-group ``r`` stride over row ``r``'s entries (lane ``l`` takes
``j = start + l, start + l + W, ...``), then reduce their ``W`` partial sums in shared memory
with a ``log2 W``-step tree (Bell & Garland, SC'09: "CSR vector", with a work-group in place
of a warp). Good for long rows; ``W`` must be a power of two.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.errors import InputError
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder

from accy_kernels.sparse_api import csr_arrays

__all__ = ["csr_vector_kernel", "run"]


@functools.cache
def csr_vector_kernel(dtype: str, workgroup_size: int):
    """Buffers (y, indptr: i32, indices: i32, data, x); scalar n_rows (i32); one group/row."""
    w = workgroup_size
    kb = KernelBuilder(f"spmv_csr_vector_{dtype}_wg{w}", w)
    y = kb.buffer("y", dtype, "write")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
    red = kb.shared("red", dtype, w)
    r, lane = kb.group_id(), kb.local_id()
    acc = kb.let("acc", kb.const(0, dtype))
    with kb.if_(r < n_rows):
        with kb.for_("j", indptr[r] + lane, indptr[r + 1], w) as j:
            kb.assign(acc, acc + data[j] * x[indices[j]])
    kb.shared_store(red, lane, acc)
    kb.barrier()
    half = w // 2
    while half >= 1:
        with kb.if_(lane < half):
            kb.shared_store(red, lane, red[lane] + red[lane + half])
        kb.barrier()
        half //= 2
    with kb.if_((lane == 0) & (r < n_rows)):
        kb.store(y, r, red[0])
    return kb.build()


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None) -> np.ndarray:
    """Return ``A @ x`` with one work-group of ``candidate.workgroup_size`` per row."""
    w = candidate.workgroup_size
    if w & (w - 1):
        raise InputError(f"spmv.csr_vector: workgroup_size must be a power of two, got {w}")
    indptr, indices, data = csr_arrays(A, x.dtype)
    n_rows = A.shape[0]
    plan = Plan("spmv.csr_vector")
    y = plan.output(dtype, n_rows)
    slots = [plan.param(indptr, "i32"), plan.param(indices, "i32"), plan.param(data, dtype),
             plan.param(x, dtype)]
    plan.launch(csr_vector_kernel(dtype, w), n_rows, [y, *slots], [("i32", n_rows)])
    (result,) = plan.run(backend)
    return result
