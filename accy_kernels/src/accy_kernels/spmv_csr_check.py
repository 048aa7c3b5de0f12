"""The structure check of a CSR matrix that the SpMV kernels rely on, in a kernel and on the host.

scipy checks neither column indices nor row pointers when a matrix is built from arrays
(``csr_matrix((data, indices, indptr))``) or edited in place, and the kernels read
``x[indices[j]]`` for ``j`` in ``[indptr[r], indptr[r + 1])`` without bounds: an index out of
range would read (or fault) outside the arrays. Every product therefore checks first that

* ``0 <= indptr[0]``, ``indptr[r] <= indptr[r + 1]`` and ``indptr[n_rows] <= size`` (the
  stored entries, ``min(indices.size, data.size)``), and
* ``0 <= indices[j] < n_cols`` for every stored entry ``j < indptr[n_rows]``,

and raises :class:`accy.errors.InputError` naming the first bad position otherwise.

:func:`check_kernel` does it on the device in one pass: work-item ``t`` reduces tile ``t``
(``TILE`` row pointers and ``TILE`` entries) to a maximum and a minimum that LLVM
vectorizes, and stores ``t`` into ``err`` if the tile is bad (a device kernel; on the CPU
the prepared product of :mod:`accy_kernels.spmv_fast` runs the same reductions inside its
rows kernel, block by block: :mod:`accy_kernels.spmv_csr_rows`, so an in-place edit is
checked every call without a pass of its own). :func:`check_host` finds and names the
position (numpy; the ordinary path, and the prepared one once the kernel flagged a tile).
"""

from __future__ import annotations

import functools

import numpy as np
from accy.errors import InputError
from accy.kernel import KernelBuilder, call

__all__ = ["TILE", "check_host", "check_kernel", "check_items"]

#: row pointers and entries per work-item of the check kernel
TILE = 4096


@functools.cache
def check_kernel(workgroup_size: int = 64):
    """Buffers (err i32 readwrite, indptr i32, indices i32); scalars n_rows, n_cols, size
    (i32). Work-item ``t`` checks row pointers ``[t*TILE, (t+1)*TILE)`` (each against the
    next) and entries ``[t*TILE, (t+1)*TILE)`` below ``indptr[n_rows]`` (clamped to
    ``[0, size]``), and stores ``t`` into ``err[0]`` when one is out of range."""
    kb = KernelBuilder(f"spmv_csr_check_wg{workgroup_size}", workgroup_size)
    err = kb.buffer("err", "i32", "readwrite")
    indptr, indices = kb.buffer("indptr", "i32", "read"), kb.buffer("indices", "i32", "read")
    n_rows, n_cols = kb.scalar("n_rows", "i32"), kb.scalar("n_cols", "i32")
    size = kb.scalar("size", "i32")
    t = kb.global_id()
    first = kb.let("first", t * TILE)
    stored = kb.let("stored", call("min", call("max", indptr[n_rows], 0), size))
    with kb.if_((first < n_rows) | (first < stored)):
        # row pointers: every value in [0, size] (unsigned max), each <= the next (min step)
        top = kb.let("top", kb.const(0, "u32"))
        step = kb.let("step", kb.const(0, "i32"))
        with kb.for_("i", first, call("min", first + TILE, n_rows)) as i:
            kb.assign(top, call("max", top, call("max", indptr[i].cast("u32"),
                                                 indptr[i + 1].cast("u32"))))
            kb.assign(step, call("min", step, indptr[i + 1] - indptr[i]))
        # entries: every column in [0, n_cols) (unsigned max)
        col = kb.let("col", kb.const(0, "u32"))
        with kb.for_("j", first, call("min", first + TILE, stored)) as j:
            kb.assign(col, call("max", col, indices[j].cast("u32")))
        bad = (top > size.cast("u32")) | (step < 0) | \
            ((col >= n_cols.cast("u32")) & (first < stored))
        with kb.if_(bad):
            kb.store(err, 0, t)
    return kb.build()


def check_items(n_rows: int, stored: int) -> int:
    """The work-items :func:`check_kernel` needs for ``n_rows`` rows and ``stored``
    entries (at least 1: the last row pointer is always read)."""
    return max(1, -(-max(n_rows, stored) // TILE))


def check_host(indptr: np.ndarray, indices: np.ndarray, n_cols: int, size: int,
               family: str = "spmv") -> None:
    """Raise where CSR ``indptr``/``indices`` break the rules of the module docstring.

    Args:
        indptr: ``(n_rows + 1,)`` integer row pointers.
        indices: stored column indices (integers; only the first ``indptr[-1]`` are read).
        n_cols: the matrix's columns. size: the stored entries' count.

    Raises:
        InputError: names the first bad row pointer or entry (its position and value).
    """
    p = np.asarray(indptr).astype(np.int64, copy=False)
    if p.size == 0:
        raise InputError(f"{family}: A.indptr is empty (a CSR matrix has n_rows + 1 pointers)")
    if p[0] < 0:
        raise InputError(f"{family}: A.indptr[0] = {p[0]} is negative")
    steps = np.flatnonzero(p[1:] < p[:-1])
    if steps.size:
        r = int(steps[0])
        raise InputError(f"{family}: A.indptr decreases at row {r}: indptr[{r}] = {p[r]} > "
                         f"indptr[{r + 1}] = {p[r + 1]} (not a CSR matrix)")
    if p[-1] > size:
        raise InputError(f"{family}: A.indptr[-1] = {p[-1]} exceeds the {size} stored entries")
    cols = np.asarray(indices)[:int(p[-1])]
    if cols.size:
        lo, hi = cols.min(), cols.max()
        if lo < 0 or hi >= n_cols:
            j = int(np.flatnonzero((cols < 0) | (cols >= n_cols))[0])
            r = int(np.searchsorted(p, j, side="right") - 1)
            raise InputError(f"{family}: A.indices[{j}] = {cols[j]} (row {r}) is out of range "
                             f"for {n_cols} columns")
