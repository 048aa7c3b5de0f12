"""``spmv.csr_vector``: CSR sparse matrix–vector product, one work-group per row.

The ``W`` work-items of work-group ``r`` stride over row ``r``'s entries (lane ``l`` takes
``j = start + l, start + l + W, ...``), then reduce their ``W`` partial sums in shared memory
with a ``log2 W``-step tree (Bell & Garland, SC'09: "CSR vector", with a work-group in place
of a warp). Good for long rows; ``W`` must be a power of two.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.errors import InputError, UnsupportedError
from accy.families import Candidate, Plan, loop_passes
from accy.kernel import KernelBuilder, where

from accy_kernels._common import MAX_ELEMS, window
from accy_kernels.sparse_api import csr_arrays, longest_row

__all__ = ["csr_vector_kernel", "run"]


@functools.cache
def csr_vector_kernel(dtype: str, workgroup_size: int):
    """Buffers (y readwrite, indptr: i32, indices: i32, data, x); scalars n_rows, skip,
    limit (i32); one group per row, entries ``[skip, skip + limit)`` of the row, added to
    ``y`` unless ``skip == 0``."""
    w = workgroup_size
    kb = KernelBuilder(f"spmv_csr_vector_{dtype}_wg{w}", w)
    y = kb.buffer("y", dtype, "readwrite")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    red = kb.shared("red", dtype, w)
    r, lane = kb.group_id(), kb.local_id()
    acc = kb.let("acc", kb.const(0, dtype))
    with kb.if_(r < n_rows):
        first, last = window(kb, indptr[r], indptr[r + 1], skip, limit, "row")
        with kb.for_("j", first + lane, last, w) as j:
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
        kb.store(y, r, where(skip == 0, red[0], y[r] + red[0]))
    return kb.build()


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None) -> np.ndarray:
    """Return ``A @ x`` with one work-group of ``candidate.workgroup_size`` per row."""
    w = candidate.workgroup_size
    if w & (w - 1):
        raise InputError(f"spmv.csr_vector: workgroup_size must be a power of two, got {w}")
    indptr, indices, data = csr_arrays(A, x.dtype)
    if indices.size > MAX_ELEMS - w:  # a lane's ``j + w`` past the last entry must not wrap
        raise UnsupportedError(f"spmv.csr_vector: {indices.size} entries are within {w} of "
                               f"2**31 - 1 (32-bit indices); use csr_scalar", feature="size")
    n_rows = A.shape[0]
    plan = Plan("spmv.csr_vector")
    y = plan.output(dtype, n_rows)
    slots = [plan.param(indptr, "i32"), plan.param(indices, "i32"), plan.param(data, dtype),
             plan.param(x, dtype)]
    # each lane loops over every w-th entry: a window of w * budget entries per launch
    lane_trips = -(-longest_row(indptr) // w)
    passes, per_pass = loop_passes(lane_trips, backend, 0, "spmv.csr_vector")
    for p in range(passes):
        plan.launch(csr_vector_kernel(dtype, w), n_rows, [y, *slots],
                    [("i32", n_rows), ("i32", p * per_pass * w),
                     ("i32", min(per_pass * w, MAX_ELEMS))])
    (result,) = plan.run(backend)
    return result
