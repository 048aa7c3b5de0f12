"""``spmv.coo``: COO sparse matrix–vector product as a segmented sum over nnz tiles.

Entries are sorted by row on the host (row-major COO). Work-item ``t`` walks entries
``[t * chunk, (t + 1) * chunk)`` accumulating ``data[j] * x[cols[j]]`` while the row stays
the same and flushes the running sum with one atomic add to ``y[row]`` at every row change
and at the tile end (the segmented-reduction COO kernel of Bell & Garland, SC'09, with
atomics at segment boundaries). ``y`` is zero-filled first; needs atomic add on the dtype
(``float_atomics`` for f32, ``float64_atomics`` for f64).

``spmv.coo_rows`` needs no atomics: one work-item per row finds the row's run of entries by
binary search on the sorted row array and sums ``data[j] * x[cols[j]]`` in entry order (the
CSR column order), so results are deterministic on every backend. The ELL variant reuses
:func:`add_coo` for its overflow tail, which picks the atomic kernel where the backend has
atomic add on the dtype and the row kernel elsewhere.

Under a loop budget (``max_loop_iterations``, lavapipe) COO tiles are clamped to it and
``coo_rows`` sums runs longer than it over several launches.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.families import Candidate, Plan, Slot, clamp_tile, tile_geometry
from accy.kernel import KernelBuilder, where

from accy_kernels._common import ceil_div, fill_kernel, groups_for, launch_windows, window
from accy_kernels._dispatch import has_atomic_add
from accy_kernels.sparse_api import csr_arrays

__all__ = ["add_coo", "coo_kernel", "rows_kernel", "run", "run_rows"]

WORKGROUP = 64


@functools.cache
def coo_kernel(dtype: str):
    """Buffers (y readwrite, rows: i32, cols: i32, data, x); scalars nnz, chunk, lane_stride,
    tiles (i32)."""
    kb = KernelBuilder(f"spmv_coo_{dtype}", WORKGROUP)
    y = kb.buffer("y", dtype, "readwrite")
    rows, cols = kb.buffer("rows", "i32", "read"), kb.buffer("cols", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    nnz, chunk = kb.scalar("nnz", "i32"), kb.scalar("chunk", "i32")
    stride, tiles = kb.scalar("lane_stride", "i32"), kb.scalar("tiles", "i32")
    lane = kb.global_id()
    t = kb.let("t", lane / stride)
    with kb.if_((lane % stride == 0) & (t < tiles)):
        begin = kb.let("begin", t * chunk)
        end = kb.let("end", where(chunk < nnz - begin, begin + chunk, nnz))  # no i32 wrap
        cur = kb.let("cur", rows[begin])
        acc = kb.let("acc", kb.const(0, dtype))
        with kb.for_("j", begin, end) as j:
            r = kb.let("r", rows[j])
            with kb.if_(r != cur):
                kb.atomic_add(y, cur, acc)
                kb.assign(acc, kb.const(0, dtype))
                kb.assign(cur, r)
            kb.assign(acc, acc + data[j] * x[cols[j]])
        kb.atomic_add(y, cur, acc)
    return kb.build()


@functools.cache
def rows_kernel(dtype: str, workgroup_size: int = 256):
    """Buffers (y readwrite, rows: i32 ascending, cols: i32, data, x); scalars n_rows, nnz,
    steps, skip, limit (i32). ``y[r] += sum(data[j] * x[cols[j]])`` over positions
    ``[skip, skip + limit)`` of the run of ``r``, in order."""
    from accy_kernels.scatter_add_sorted import lower_bound

    kb = KernelBuilder(f"spmv_coo_rows_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    rows, cols = kb.buffer("rows", "i32", "read"), kb.buffer("cols", "i32", "read")
    data, x = kb.buffer("data", dtype, "read"), kb.buffer("x", dtype, "read")
    n_rows, nnz, steps = kb.scalar("n_rows", "i32"), kb.scalar("nnz", "i32"), kb.scalar(
        "steps", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    r = kb.global_id()
    with kb.if_(r < n_rows):
        lo = lower_bound(kb, rows, nnz, steps, r, "lo")
        hi = lower_bound(kb, rows, nnz, steps, r + 1, "hi")
        first, last = window(kb, lo, hi, skip, limit, "run")
        with kb.if_(first < last):
            acc = kb.let("acc", kb.const(0, dtype))
            with kb.for_("j", first, last) as j:
                kb.assign(acc, acc + data[j] * x[cols[j]])
            kb.store(y, r, y[r] + acc)
    return kb.build()


def add_coo(plan: Plan, backend, y: Slot, rows: np.ndarray, cols: np.ndarray, data: np.ndarray,
            x: Slot, dtype: str, chunk: int, n_rows: int | None = None,
            atomics: bool | None = None) -> None:
    """Append the COO accumulation ``y[rows] += data * x[cols]`` (``y`` already written,
    ``rows`` ascending). ``atomics`` (default: whether the backend has atomic add on
    ``dtype``) selects the segmented atomic kernel or the per-row kernel (needs ``n_rows``).
    """
    nnz = rows.size
    if nnz == 0:
        return
    if atomics is None:
        atomics = has_atomic_add(backend, dtype)
    if not atomics:
        n_rows = int(rows[-1]) + 1 if n_rows is None else n_rows
        slots = [plan.param(rows, "i32"), plan.param(cols, "i32"), plan.param(data, dtype)]
        steps = nnz.bit_length() + 1
        change = np.flatnonzero(rows[1:] != rows[:-1]) + 1
        longest = int(np.diff(np.concatenate(([0], change, [nnz]))).max())
        launch_windows(plan, backend, rows_kernel(dtype), groups_for(n_rows, 256),
                       [y, *slots, x], [("i32", n_rows), ("i32", nnz), ("i32", steps)],
                       longest, 2 * steps, "spmv.coo_rows", loops=3)
        return
    chunk = clamp_tile(chunk, backend, 0, "spmv.coo tile")
    tiles = ceil_div(nnz, chunk)
    groups, stride = tile_geometry(backend, tiles, WORKGROUP)
    slots = [plan.param(rows, "i32"), plan.param(cols, "i32"), plan.param(data, dtype)]
    plan.launch(coo_kernel(dtype), groups, [y, *slots, x],
                [("i32", nnz), ("i32", chunk), ("i32", stride), ("i32", tiles)])


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None,
        atomics: bool = True) -> np.ndarray:
    """Return ``A @ x`` through row-sorted COO (segmented atomic kernel).

    Raises:
        CapabilityError: the backend has no atomic add on ``dtype`` (before launch).
    """
    if atomics:
        from accy_kernels._dispatch import require_atomic_add

        require_atomic_add("spmv", "coo", dtype, backend)
    indptr, cols, data = csr_arrays(A, x.dtype)
    n_rows = A.shape[0]
    rows = np.repeat(np.arange(n_rows, dtype=np.int32), np.diff(indptr))
    plan = Plan("spmv.coo")
    y = plan.output(dtype, n_rows)
    xs = plan.param(x, dtype)
    plan.launch(fill_kernel(dtype), groups_for(n_rows, 256), [y], [("i32", n_rows), (dtype, 0)])
    add_coo(plan, backend, y, rows, cols, data, xs, dtype, max(candidate.items_per_thread, 1),
            n_rows, atomics)
    (result,) = plan.run(backend)
    return result


def run_rows(backend, candidate: Candidate, A, x: np.ndarray, dtype: str,
             options=None) -> np.ndarray:
    """Return ``A @ x`` through row-sorted COO, one work-item per row (no atomics)."""
    return run(backend, candidate, A, x, dtype, options, atomics=False)
