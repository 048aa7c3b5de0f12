"""``spmv.csr_scalar``: CSR sparse matrix–vector product, one work-item per row.

Work-item ``r`` computes ``y[r] = sum(data[j] * x[indices[j]] for j in
range(indptr[r], indptr[r + 1]))`` (Bell & Garland, "Implementing Sparse Matrix-Vector
Multiplication on Throughput-Oriented Processors", SC'09: "CSR scalar").

Summation order. Backends without a loop budget (CPU, OpenCL, CUDA; on the CPU the ordinary
call, while the prepared one of :mod:`accy_kernels.spmv_fast` and ``prepare_spmv`` run the
rows kernel of :mod:`accy_kernels.spmv_csr_rows`) run the whole-rows kernel, in this order
(so all give the same bits): a row of
fewer than ``SHORT_ROW`` entries is summed left to right from +0.0 (scipy's order, bit for
bit); a longer row of ``L`` entries in ``CHAINS`` = 4 independent partial sums, ``s_k`` over
entries ``k, k + 4, ...`` of its first ``4 * (L // 4)`` (each left to right from +0.0),
combined as ``(s_0 + s_1) + (s_2 + s_3)``, then its last ``L % 4`` entries added left to
right — one serial chain of additions was the bound of long rows (a 3-4 cycle add per
entry); four chains let the loads set the pace. Under a loop budget (``max_loop_iterations``,
lavapipe) the windowed kernel sums every row left to right, rows longer than the budget over
several launches, each continuing the stored partial sum (same order).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan, loop_budget
from accy.kernel import KernelBuilder, where

from accy_kernels._common import MAX_ELEMS, groups_for, launch_windows, window
from accy_kernels.sparse_api import csr_arrays, longest_row

__all__ = ["CHAINS", "SHORT_ROW", "csr_scalar_kernel", "run", "sum_row"]


@functools.cache
def csr_scalar_kernel(dtype: str, workgroup_size: int, windowed: bool = True):
    """Buffers (y readwrite, indptr: i32, indices: i32, data, x); scalars n_rows, skip,
    limit (i32): entries ``[skip, skip + limit)`` of each row, continuing ``y`` unless
    ``skip == 0`` (a row longer than a loop budget takes several launches, in order).

    ``windowed=False`` (backends without a loop budget): every row whole, from zero,
    ``skip`` and ``limit`` ignored, in the order of the module docstring (short rows as the
    windowed kernel, long rows in four chains); no window arithmetic per row (a small
    matrix has 3-6 entries a row, so that arithmetic was a third of the kernel)."""
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


#: rows of fewer entries are summed left to right (one chain); longer ones in CHAINS chains
SHORT_ROW = 8
CHAINS = 4


def _whole_rows_kernel(dtype: str, workgroup_size: int):
    kb = KernelBuilder(f"spmv_csr_rows_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows = kb.scalar("n_rows", "i32")
    kb.scalar("skip", "i32"), kb.scalar("limit", "i32")  # the windowed kernel's signature
    r = kb.global_id()
    with kb.if_(r < n_rows):
        first, last = kb.let("first", indptr[r]), kb.let("last", indptr[r + 1])
        acc = kb.let("acc", kb.const(0, dtype))
        sum_row(kb, dtype, indices, data, x, first, last, acc)
        kb.store(y, r, acc)
    return kb.build()


def sum_row(kb: KernelBuilder, dtype: str, indices, data, x, first, last, acc) -> None:
    """Emit ``acc`` (+0.0) += the row ``[first, last)`` in the order of the module
    docstring (short rows one chain; longer ones ``CHAINS`` chains, then the tail); also
    the rows kernel's (:mod:`accy_kernels.spmv_csr_rows`) looped rows."""
    with kb.if_(last - first < SHORT_ROW):  # short rows: one chain, in order
        with kb.for_("j", first, last) as j:
            kb.assign(acc, acc + data[j] * x[indices[j]])
    with kb.else_():
        # i64 positions: j + k folds into the addressing (i32 ones were re-extended)
        lo, hi = kb.let("lo", first.cast("i64")), kb.let("hi", last.cast("i64"))
        mid = kb.let("mid", lo + ((hi - lo) & -CHAINS))
        sums = [kb.let(f"s{k}", kb.const(0, dtype)) for k in range(CHAINS)]
        with kb.for_("q", lo, mid, CHAINS) as q:
            for k, part in enumerate(sums):
                jk = q + k if k else q
                kb.assign(part, part + data[jk] * x[indices[jk]])
        kb.assign(acc, (sums[0] + sums[1]) + (sums[2] + sums[3]))
        with kb.for_("t", mid, hi) as t:
            kb.assign(acc, acc + data[t] * x[indices[t]])


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None) -> np.ndarray:
    """Return ``A @ x`` (``A`` any scipy sparse matrix, converted to CSR on the host)."""
    indptr, indices, data = csr_arrays(A, x.dtype)
    n_rows = A.shape[0]
    wg = candidate.workgroup_size
    plan = Plan("spmv.csr_scalar")
    y = plan.output(dtype, n_rows)
    slots = [plan.param(indptr, "i32"), plan.param(indices, "i32"), plan.param(data, dtype),
             plan.param(x, dtype)]
    if loop_budget(backend) is None:  # the whole-rows kernel, as the prepared launch runs
        plan.launch(csr_scalar_kernel(dtype, wg, windowed=False), groups_for(n_rows, wg),
                    [y, *slots], [("i32", n_rows), ("i32", 0), ("i32", MAX_ELEMS)])
    else:
        launch_windows(plan, backend, csr_scalar_kernel(dtype, wg), groups_for(n_rows, wg),
                       [y, *slots], [("i32", n_rows)], longest_row(indptr), 0,
                       "spmv.csr_scalar")
    (result,) = plan.run(backend)
    return result
