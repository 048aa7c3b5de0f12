"""``spmv.ell``: ELLPACK sparse matrix–vector product with a COO overflow tail.

ELLPACK (Kincaid, Oppe & Young, ITPACKV 2D, 1989; on GPUs Bell & Garland, SC'09) stores
``width`` entries per row, column-major (``cols[k * n_rows + r]``) so that consecutive
work-items read consecutive addresses; short rows are padded with column :data:`PAD` (-1),
which the kernel skips without reading ``x`` (so ``x`` holding inf/NaN only reaches the rows
that use it, as in scipy).
Rows longer than ``width`` keep their first ``width`` entries in ELL and spill the rest into a
row-sorted COO tail handled by ``spmv.coo``'s kernel (the HYB idea of Bell & Garland), so an
arrowhead matrix does not explode the padding. Default ``width``: the longest row when the
padded size stays within ``3 * nnz + n_rows``, else the 95th percentile of row lengths.
Under a loop budget (``max_loop_iterations``, lavapipe) a width above it takes several
launches, each continuing the stored partial sums.
"""

from __future__ import annotations

import functools

import numpy as np
from accy.errors import InputError
from accy.families import Candidate, Plan
from accy.kernel import KernelBuilder, where

from accy_kernels._common import groups_for, launch_windows, window
from accy_kernels._layout_cache import cached_layout
from accy_kernels.sparse_api import csr_arrays
from accy_kernels.spmv_coo import add_coo
from accy_kernels.spmv_csr_check import check_host

__all__ = ["PAD", "ell_kernel", "ell_layout", "run"]

#: column index of a padding slot: skipped by the kernel, which never reads ``x`` for it (a
#: padded ``0 * x[0]`` made short rows NaN when ``x[0]`` was inf or NaN)
PAD = -1


@functools.cache
def ell_kernel(dtype: str, workgroup_size: int):
    """Buffers (y readwrite, cols: i32, vals, x); scalars n_rows, width, skip, limit (i32):
    ELL columns ``[skip, skip + limit)``, continuing ``y`` unless ``skip == 0``. Padding
    (column -1) is skipped without reading ``x``."""
    kb = KernelBuilder(f"spmv_ell_{dtype}_wg{workgroup_size}", workgroup_size)
    y = kb.buffer("y", dtype, "readwrite")
    cols, vals = kb.buffer("cols", "i32", "read"), kb.buffer("vals", dtype, "read")
    x = kb.buffer("x", dtype, "read")
    n_rows, width = kb.scalar("n_rows", "i32"), kb.scalar("width", "i32")
    skip, limit = kb.scalar("skip", "i32"), kb.scalar("limit", "i32")
    r = kb.global_id()
    with kb.if_(r < n_rows):
        acc = kb.let("acc", where(skip == 0, kb.const(0, dtype), y[r]))
        first, last = window(kb, kb.const(0, "i32"), width, skip, limit, "col")
        with kb.for_("k", first, last) as k:
            e = kb.let("e", k.cast("i64") * n_rows.cast("i64") + r.cast("i64"))
            c = kb.let("c", cols[e])
            with kb.if_(c >= 0):
                kb.assign(acc, acc + vals[e] * x[c])
        kb.store(y, r, acc)
    return kb.build()


def default_width(lengths: np.ndarray, nnz: int) -> int:
    """The ELL width for row ``lengths`` (see the module docstring)."""
    if lengths.size == 0:
        return 0
    longest = int(lengths.max())
    if longest * lengths.size <= 3 * nnz + lengths.size:
        return longest
    return int(np.ceil(np.percentile(lengths, 95)))


def ell_layout(indptr, cols, data, n_rows: int, width: int):
    """Return ``(ell_cols, ell_vals, tail_rows, tail_cols, tail_vals)`` (host arrays)."""
    lengths = np.diff(indptr)
    rows = np.repeat(np.arange(n_rows, dtype=np.int64), lengths)
    pos = np.arange(cols.size, dtype=np.int64) - np.repeat(indptr[:-1].astype(np.int64), lengths)
    keep = pos < width
    ell_cols = np.full(n_rows * width, PAD, np.int32)
    ell_vals = np.zeros(n_rows * width, data.dtype)
    dest = pos[keep] * n_rows + rows[keep]
    ell_cols[dest] = cols[keep]
    ell_vals[dest] = data[keep]
    spill = ~keep
    return ell_cols, ell_vals, rows[spill].astype(np.int32), cols[spill], data[spill]


def run(backend, candidate: Candidate, A, x: np.ndarray, dtype: str, options=None) -> np.ndarray:
    """Return ``A @ x`` through ELL (+ COO tail); option ``width`` (entries per row).

    The structure check (:mod:`accy_kernels.spmv_csr_check`) runs when the layout is built,
    once per matrix content (the layout cache's checksum covers the arrays it checks, and the
    shape), not on every call.

    Raises:
        InputError: unknown option, bad width, or row pointers / column indices out of range
            (the position named).
    """
    indptr, cols, data = csr_arrays(A, x.dtype, check=False)
    n_rows = A.shape[0]
    opts = dict(options or {})
    width = opts.pop("width", None)
    if opts:
        raise InputError(f"spmv ell: unknown option(s) {', '.join(opts)}; known: width")
    lengths = np.diff(indptr)
    if width is None:
        width = default_width(lengths, cols.size)
    else:
        if isinstance(width, (bool, np.bool_)) or not isinstance(width, (int, np.integer)):
            raise InputError(f"spmv ell: width must be an integer, got {width!r}")
        width = int(width)
        if width < 0:
            raise InputError(f"spmv ell: width must be >= 0 entries per row, got {width}")
        # columns past the longest row would be padding only (and a width beyond 2**31 - 1
        # overflowed the kernel's i32 scalar, and allocated n_rows * width on the host)
        width = min(width, int(lengths.max()) if lengths.size else 0)
    def build():
        check_host(indptr, cols, A.shape[1], min(cols.size, data.size))  # once per content
        return ell_layout(indptr, cols, data, n_rows, width)

    # cached per matrix object + content checksum (see _layout_cache): solvers call repeatedly
    ell_cols, ell_vals, t_rows, t_cols, t_vals = cached_layout(
        A, ("ell", width, data.dtype.str), (indptr, cols, data), build)
    wg = candidate.workgroup_size
    plan = Plan("spmv.ell")
    y = plan.output(dtype, n_rows)
    xs = plan.param(x, dtype)
    c, v = plan.param(ell_cols, "i32"), plan.param(ell_vals, dtype)
    launch_windows(plan, backend, ell_kernel(dtype, wg), groups_for(n_rows, wg), [y, c, v, xs],
                   [("i32", n_rows), ("i32", width)], width, 0, "spmv.ell")
    add_coo(plan, backend, y, t_rows, t_cols, t_vals, xs, dtype, 256, n_rows)
    (result,) = plan.run(backend)
    return result
