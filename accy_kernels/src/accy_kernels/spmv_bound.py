"""A sparse layout (CSR or SELL-C-σ host arrays) bound once to its kernel on the CPU: ``y = f(x)``.

Used by :class:`accy_kernels.spmv_prepared.PreparedSpmv` (arrays the handle owns) and by
the SELL layout cache of :mod:`accy_kernels.spmv_sell` (arrays the cache owns, read-only):
what the ordinary call builds per call (launch plan, executable, argument packing) is done
once. The arrays must stay unchanged for as long as the bound product is used: the bound
product holds them (so they stay alive) and reads them in place without checking them.

A product is one native call (:func:`accy_backend_cpu.native_call.bind_native_call`,
reentrant, so any number of threads use one at once; the GIL is released from
``RELEASE_ENTRIES``); from ``SPLIT_ENTRIES`` rows + stored entries (padding included) it is
split over the pool's native workers (``works=``; while another launch holds the pool, a
call runs whole on its own thread).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from accy_kernels._common import MAX_ELEMS, groups_for

__all__ = ["RELEASE_ENTRIES", "SPLIT_ENTRIES", "WORK_PER_ENTRY", "bind_csr", "bind_sell",
           "native_cpu", "split_work"]

#: rows + stored entries from which a product is split over the pool's threads. A split
#: costs more than the native workers' ~2 us round trip: on the 2-core Zen 3 (idle, lead's
#: run of bench/kernels.py --only spmv) cryg2500 (14,849 rows + entries, ~9.5 us on one
#: thread) took 10.6 us split, rajat01 (50,083; 36.5 us) 26 us and pushpull (200,305; 168 us)
#: 91 us, so ~5-6 us a split (the round trip, and each core fetching its half of the matrix
#: and of y from the other's L2): it pays from ~12 us of one-thread work, and with a margin
#: from about twice that (~0.75 ns a row or entry in cache). Read when a matrix is prepared
#: (bench/kernels.py raises it to time one thread)
SPLIT_ENTRIES = 1 << 15
#: the pool's work (``bind_native_call(works=)``, ``bind_launch(work=)``; in cheap
#: elementwise work-items, ~0.25 ns each on the pool's cost model) of a row or stored entry
#: (~0.5 ns in cache: three loads and a multiply-add), so a product of SPLIT_ENTRIES is
#: split into two threads by the pool's ``min_items_per_thread`` (8192) rule
WORK_PER_ENTRY = 2
#: stored entries from which a native call releases the GIL around its kernels
RELEASE_ENTRIES = 1 << 14
_FLOATS = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}


def native_cpu(be: Any) -> bool:
    """Whether ``be`` is the CPU backend and this interpreter has its native calls."""
    try:
        from accy_backend_cpu.backend import CpuBackend
        from accy_backend_cpu.native_call import native_calls_available
    except ImportError:
        return False
    return isinstance(be, CpuBackend) and native_calls_available()


def split_work(n_rows: int, entries: int) -> int:
    """The pool's work of a product over ``n_rows`` rows and ``entries`` stored entries
    (``bind_native_call(works=)``, ``bind_launch(work=)``; see ``WORK_PER_ENTRY``)."""
    return (n_rows + entries) * WORK_PER_ENTRY


def _address(a: np.ndarray) -> int:
    """The address of ``a``'s data (0 for an empty array: never read)."""
    from accy.runtime.fast_call import array_address

    return array_address(a) if a.size else 0


def _bind(be: Any, loaded: Any, groups: int, wg: int, scalars: list, arrays: list,
          n_rows: int, dtype: np.dtype, entries: int) -> Callable[[np.ndarray], np.ndarray]:
    """``f(x) -> y`` for a kernel with buffers ``(y, *arrays, x)`` (see the module
    docstring); ``x`` must be a contiguous ndarray of ``dtype`` (the caller checks).
    ``wg``: unused (the native call's launch is in work-groups)."""
    from accy_backend_cpu.native_call import bind_native_call

    empty = np.empty
    work = split_work(n_rows, entries) if n_rows + entries >= SPLIT_ENTRIES else None
    call = bind_native_call(be, [(loaded, groups, scalars,
                                  [("arg", 0), *map(_address, arrays), ("arg", 1)])],
                            release_gil=entries >= RELEASE_ENTRIES, works=[work])

    def product(x: np.ndarray) -> np.ndarray:
        y = empty(n_rows, dtype)
        call(y, x, None)
        return y

    product.keep = arrays  # type: ignore[attr-defined]
    return product


def bind_csr(be: Any, indptr: np.ndarray, indices: np.ndarray, data: np.ndarray,
             workgroup_size: int = 64) -> Callable[[np.ndarray], np.ndarray]:
    """The CPU rows kernel (``spmv_csr_scalar``'s order, unchecked:
    :mod:`accy_kernels.spmv_csr_rows`) over well-formed CSR arrays (int32, int32,
    float32/float64, C-contiguous; checked by the caller). ``workgroup_size``: unused (the
    rows kernel's work-groups are of one work-item), kept for callers."""
    from accy.families.runner import _load

    from accy_kernels.spmv_csr_rows import block_starts, rows_kernel_for, rows_scalars

    n_rows, dtype = indptr.size - 1, data.dtype
    loaded = _load(be, rows_kernel_for(_FLOATS[dtype], indptr, checked=False))
    starts = block_starts(indptr)
    starts.flags.writeable = False
    return _bind(be, loaded, starts.size - 1, 1,
                 rows_scalars(n_rows, 0, min(indices.size, data.size)),  # n_cols: unread
                 [starts, indptr, indices, data], n_rows, dtype,
                 int(indptr[-1]) if n_rows else 0)


def bind_sell(be: Any, layout: tuple, n_rows: int, c: int,
              workgroup_size: int = 64) -> Callable[[np.ndarray], np.ndarray]:
    """``spmv_sell``'s kernel over a :func:`~accy_kernels.spmv_sell.sell_layout`
    ``(slice_ptr, cols, vals, perm)`` of ``n_rows`` rows and slices of ``c``, all slice
    columns in one launch (no loop budget on the CPU)."""
    from accy.families.runner import _load

    from accy_kernels.spmv_sell import sell_kernel

    slice_ptr, cols, vals, perm = layout
    loaded = _load(be, sell_kernel(_FLOATS[vals.dtype], c, workgroup_size))
    return _bind(be, loaded, groups_for(n_rows, workgroup_size), workgroup_size,
                 [("i32", n_rows), ("i32", 0), ("i32", MAX_ELEMS)], list(layout), n_rows,
                 vals.dtype, int(slice_ptr[-1]) if slice_ptr.size else 0)
